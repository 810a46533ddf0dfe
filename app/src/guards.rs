//! Which sessions' write guards count: the evidence the core cannot read itself.
//!
//! Owns: certifying a hooked session's declared write guard from the passing write-guard
//! captures in the contracts folders ([`acc_delivery::contracts::Evidence::write_guard`]). Must not:
//! certify a client version that no passing capture backs, or read evidence when nothing asks.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use acc_clients::Client;
use acc_core::error::AccResult;
use acc_core::{Core, Guards};
use acc_delivery::contracts::Evidence;
use acc_store::SessionRow;

/// The file, in a data directory, that marks it as a capture run's own: `acc contract capture
/// --write-guard` must see its client's hooks deny before any evidence of them exists, so in
/// that throwaway data home hooked sessions are taken at their word (and say so). It is never
/// written outside a capture's scratch folder.
pub const CAPTURE_MARKER: &str = "capture-write-guard";

/// Certifies from the contracts folders of the search path, read once per process, on the
/// first session that needs it (a long-lived `acc-mcp` keeps what it read at that time).
#[derive(Debug)]
pub struct EvidenceGuards {
    dirs: Vec<PathBuf>,
    evidence: OnceLock<Evidence>,
    marker: PathBuf,
    platform: String,
}

impl EvidenceGuards {
    /// Certify from `dirs`, for sessions of the store in `data_dir`.
    pub fn new(dirs: Vec<PathBuf>, data_dir: &Path) -> Self {
        Self {
            dirs,
            evidence: OnceLock::new(),
            marker: data_dir.join(CAPTURE_MARKER),
            platform: acc_clients::platform(),
        }
    }
}

impl Guards for EvidenceGuards {
    fn certify(&self, session: &SessionRow) -> Result<String, String> {
        let Some(client) = Client::parse(&session.harness) else {
            return Err(format!(
                "ACC has no write guard for {} sessions",
                session.harness
            ));
        };
        // An unknown version is uncertified whatever the folders hold: they are not read for it.
        if session.client_version.is_none() {
            return Evidence::default().write_guard(client.as_str(), None, &self.platform);
        }
        if std::fs::symlink_metadata(&self.marker).is_ok_and(|m| m.is_file()) {
            return Ok(format!(
                "taken at its hooks' word: this data home belongs to a capture run ({})",
                self.marker.display()
            ));
        }
        self.evidence
            .get_or_init(|| Evidence::load(&self.dirs))
            .write_guard(
                client.as_str(),
                session.client_version.as_deref(),
                &self.platform,
            )
    }
}

/// A core over `ws` whose sessions' write guards are certified by the evidence on the search
/// path, with the system's process liveness.
pub fn core(
    ws: acc_core::workspace::Workspace,
    data_dir: PathBuf,
    clock: Arc<dyn acc_core::clock::Clock>,
) -> AccResult<Core> {
    let guards = Arc::new(EvidenceGuards::new(
        acc_delivery::contracts::search_path(),
        &data_dir,
    ));
    let mut core = Core::new(ws, data_dir, clock, crate::process::liveness())?;
    core.set_guards(guards);
    Ok(core)
}

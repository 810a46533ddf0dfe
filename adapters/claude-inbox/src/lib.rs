//! The `claude-inbox` adapter: wakes a live Claude Code session through its messaging socket.
//!
//! A wake is one fixed line of ACC text carrying only the message id: no subject, body, sender
//! name or other peer byte crosses. Claude Code runs a turn for it after its current one; the
//! body reaches the model through next-turn (or an exact inbox read) afterwards, so the host
//! records nothing for an accepted wake and the receipt stays queued.
//!
//! Claude Code can hold or turn away a cross-session message it took, by its user's
//! `crossSessionInbound` setting (2.1.328: `accept`, `hold` for the user's review, `refuse`), and
//! says nothing on the socket either way. So before each wake the adapter reads that setting as
//! Claude Code does ([`inbound`]): `refuse` is not woken (the offer is refused,
//! `transport_rejected`, and nothing is written), `hold` is woken pending the user's approval
//! (`pendingApproval`), `accept` (the default) is woken.
//!
//! The endpoint is verified at every handshake and every wake: the session registry file
//! `<config dir>/sessions/<pid>.json` must name the same pid, the same session id and (by real
//! path) the same socket; the socket must be a socket, not a symlink, owned by this user, with
//! no group or other permission bits; the pid must be alive.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use acc_adapter_api::wire::{
    Describe, HandshakeAnswer, HandshakeRequest, OfferAnswer, OfferRequest, ProbeAnswer,
    ProbeRequest,
};
use acc_adapter_api::{AdapterError, AdapterImpl, export_adapter};
use acc_clients::pid_alive;
use acc_clients::wake::{
    self, RegistryProblem, WakeEndpoint, private_socket, same_file, session_registry, wake_id,
    wake_text,
};
use serde::{Deserialize, Serialize};

/// The contract this adapter declares.
pub const CONTRACT_ID: &str = "claude-code-inbox-socket-v1";
/// How long a binding lives without a refresh.
pub const LEASE_SECONDS: u64 = 120;

/// The endpoint facts a Claude Code hook reports, kept opaque by the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Endpoint {
    /// `CLAUDE_CODE_MESSAGING_SOCKET` as the hook saw it.
    pub socket: String,
    /// `CLAUDE_PID`.
    pub pid: i64,
    /// The hook's `session_id`.
    pub session_id: String,
    /// `CLAUDE_CONFIG_DIR`, or `~/.claude`.
    pub config_dir: String,
}

/// The adapter (stateless).
#[derive(Debug, Default)]
pub struct ClaudeInbox;

/// Build the adapter; it takes no configuration.
pub fn new(_config: &str) -> Result<ClaudeInbox, AdapterError> {
    Ok(ClaudeInbox)
}

fn refuse(code: &str, message: impl Into<String>) -> AdapterError {
    AdapterError::new(code, message)
}

/// Verify the endpoint; returns the client version the registry names.
pub fn verify(endpoint: &Endpoint) -> Result<String, AdapterError> {
    let registry =
        session_registry(Path::new(&endpoint.config_dir), endpoint.pid).map_err(|problem| {
            refuse(
                "native_session_unavailable",
                match problem {
                    RegistryProblem::Missing => "no Claude Code session registry file for that pid",
                    RegistryProblem::NotJson => "the session registry file is not json",
                    RegistryProblem::OtherPid => "the session registry names another pid",
                },
            )
        })?;
    if registry.get("sessionId").and_then(|s| s.as_str()) != Some(endpoint.session_id.as_str()) {
        return Err(refuse(
            "native_session_unavailable",
            "the session registry names another session",
        ));
    }
    if !pid_alive(endpoint.pid) {
        return Err(refuse(
            "native_session_unavailable",
            "the Claude Code process is not running",
        ));
    }
    let socket = Path::new(&endpoint.socket);
    private_socket(socket).map_err(|why| refuse("native_endpoint_unavailable", why))?;
    let named = registry
        .get("messagingSocketPath")
        .and_then(|s| s.as_str())
        .unwrap_or("");
    if !same_file(Path::new(named), socket) {
        return Err(refuse(
            "native_session_unavailable",
            "the session registry names another socket",
        ));
    }
    registry
        .get("version")
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .ok_or_else(|| {
            refuse(
                "version_unavailable",
                "the session registry names no client version",
            )
        })
}

/// What a Claude Code session does with a cross-session message: its `crossSessionInbound`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Inbound {
    /// Delivered: a turn starts with it (the default).
    Accept,
    /// Parked for the user's review; the model does not act on it until the user approves.
    Hold,
    /// Turned away.
    Refuse,
}

impl Inbound {
    /// A setting's value; one Claude Code does not know holds every cross-session message
    /// while it is there (2.1.328 says so when it reads one).
    fn parse(value: &serde_json::Value) -> Self {
        match value.as_str() {
            Some("accept") => Self::Accept,
            Some("refuse") => Self::Refuse,
            _ => Self::Hold,
        }
    }
}

/// Where Claude Code keeps its managed policy on this platform.
const MANAGED_SETTINGS: &str = if cfg!(target_os = "macos") {
    "/Library/Application Support/ClaudeCode/managed-settings.json"
} else {
    "/etc/claude-code/managed-settings.json"
};

/// The `crossSessionInbound` of a session whose configuration folder is `config_dir` and whose
/// project is `project`, read as Claude Code 2.1.328 reads it: the managed policy's, else the
/// user's settings, whichever sets it first; then the project's shared and local settings
/// (`.claude/settings.json`, `.claude/settings.local.json`) only where they are stricter. A file
/// that is missing or not JSON sets nothing. (A `--settings` file given on the command line is
/// not visible from here.)
pub fn inbound(config_dir: &Path, project: Option<&Path>) -> Inbound {
    let setting = |file: PathBuf| -> Option<Inbound> {
        let text = std::fs::read_to_string(file).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        value.get("crossSessionInbound").map(Inbound::parse)
    };
    let mut effective = setting(PathBuf::from(MANAGED_SETTINGS))
        .or_else(|| setting(config_dir.join("settings.json")))
        .unwrap_or(Inbound::Accept);
    if let Some(project) = project {
        for file in ["settings.json", "settings.local.json"] {
            if let Some(stricter) = setting(project.join(".claude").join(file)) {
                effective = effective.max(stricter);
            }
        }
    }
    effective
}

/// The one fixed line of a wake: ACC text and the message id, nothing from the peer.
pub fn wake_line(message_id: &str) -> String {
    let id = wake_id(message_id);
    let text = wake_text(message_id);
    let mut line = serde_json::json!({ "type": "user", "message": { "role": "user", "content": text }, "msg_id": format!("acc-wake-{id}") }).to_string();
    line.push('\n');
    line
}

/// Read-only probe: `claude --version` and the executable's fingerprint.
pub fn probe(timeout: Duration) -> ProbeAnswer {
    acc_clients::probe_cli("claude", CONTRACT_ID, timeout)
}

impl AdapterImpl for ClaudeInbox {
    fn describe(&self) -> Result<Describe, AdapterError> {
        // Captured on darwin-arm64 (documented elsewhere) and applied on every platform.
        Ok(wake::describe(
            "claude-inbox",
            "claude-code",
            CONTRACT_ID,
            "2.1.282",
        ))
    }

    fn probe(&self, request: ProbeRequest) -> Result<ProbeAnswer, AdapterError> {
        Ok(probe(wake::probe_timeout(&request)))
    }

    fn handshake(&self, request: HandshakeRequest) -> Result<HandshakeAnswer, AdapterError> {
        wake::handshake::<Endpoint>(request, LEASE_SECONDS)
    }

    fn offer(&self, request: OfferRequest) -> Result<OfferAnswer, AdapterError> {
        wake::offer::<Endpoint>(&request)
    }
}

impl WakeEndpoint for Endpoint {
    const SHAPE: &'static str = "a claude-inbox endpoint is {socket, pid, sessionId, configDir}";

    fn verify(&self) -> Result<String, AdapterError> {
        verify(self)
    }

    /// One line, written within 2 s; Claude Code answers nothing on the socket, so what it
    /// does with the line is read from its user's `crossSessionInbound` first ([`inbound`]).
    fn wake(&self, message_id: &str, _budget: Duration) -> Result<wake::Taken, &'static str> {
        let project = session_registry(Path::new(&self.config_dir), self.pid)
            .ok()
            .and_then(|registry| registry.get("cwd")?.as_str().map(PathBuf::from));
        let taken = match inbound(Path::new(&self.config_dir), project.as_deref()) {
            Inbound::Refuse => return Err("transport_rejected"),
            Inbound::Hold => wake::Taken::PendingApproval,
            Inbound::Accept => wake::Taken::Delivered,
        };
        let mut stream = wake::connect(&self.socket)?;
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        stream
            .write_all(wake_line(message_id).as_bytes())
            .and_then(|()| stream.flush())
            .map_err(|e| wake::io_code(&e))?;
        Ok(taken)
    }
}

export_adapter!(new);

#[cfg(test)]
mod tests;

//! `acc doctor`: what is installed and whether it works, each problem with its fix.
//!
//! Owns: read-only checks of the clients on PATH, ACC's installations in them, the `acc-mcp`
//! registrations in them (`doctor::mcp`), the adapter plugins and their contracts, and the
//! store. Must not: stop at the first problem (a store of
//! another version or a damaged one is reported like anything else), or change anything
//! unless asked with `--repair` (which reinstalls hooks that went missing).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::Target;
use acc_app::workspace;
use acc_clients::Client;

mod adapters;
mod mcp;
mod wire;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Works.
    Ok,
    /// Works partly or is absent by choice.
    Warn,
    /// Broken.
    Error,
}

impl Level {
    /// Stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// The outcome.
    pub level: Level,
    /// What was found.
    pub detail: String,
    /// The command that fixes it, when there is one.
    pub fix: Option<String>,
}

fn check(
    name: impl Into<String>,
    level: Level,
    detail: impl Into<String>,
    fix: Option<String>,
) -> Check {
    Check {
        name: name.into(),
        level,
        detail: detail.into(),
        fix,
    }
}

/// How long to wait for a client to print its version (`ACC_PROBE_TIMEOUT_MS`, default 3000).
pub fn probe_timeout() -> Duration {
    let ms = std::env::var("ACC_PROBE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(3000);
    Duration::from_millis(ms.clamp(100, 60_000))
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Run `<exe> --version` within the probe timeout, in a throwaway home
/// ([`acc_clients::run_version`]); the first line of its output.
pub fn client_version(exe: &Path) -> Result<String, String> {
    let output = acc_clients::run_version(exe, probe_timeout()).map_err(|e| match e {
        acc_clients::VersionRun::NoHome(e) => format!("cannot make a throwaway home for it: {e}"),
        acc_clients::VersionRun::Bounded(acc_clients::Bounded::NotStarted) => {
            "it could not be run".to_string()
        }
        acc_clients::VersionRun::Bounded(acc_clients::Bounded::TimedOut) => format!(
            "it did not print its version within {:?} (ACC_PROBE_TIMEOUT_MS)",
            probe_timeout()
        ),
    })?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .ok_or_else(|| "it printed no version".into())
}

/// Whether the client will load its configuration files: each parsed the way the client parses
/// it (strict JSON; JSON with comments for Gemini CLI's settings; TOML for Kimi Code's
/// `config.toml`; for Codex, `codex mcp list` itself reads `config.toml`).
fn loadable(target: &Target, codex: Option<&Path>) -> Vec<Check> {
    let mut checks = Vec::new();
    // OpenCode's hooks file is ACC's plugin (JavaScript); its JSON is `opencode.json`. Kimi
    // Code's hooks file is TOML.
    let mut json_files = vec![target.hooks_file.clone()];
    match target.client {
        Client::ClaudeCode => json_files.push(target.mcp_file()),
        Client::OpenCode => json_files = vec![target.mcp_file()],
        Client::Kimi => json_files.push(target.mcp_file()),
        _ => {}
    }
    for path in json_files {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(e) = crate::load_problem(target, &path, &String::from_utf8_lossy(&bytes)) {
            checks.push(check(
                format!("config {}", path.display()),
                Level::Error,
                format!(
                    "{} will not load it: {e}; every hook and server in it is ignored",
                    target.client.as_str()
                ),
                Some(format!(
                    "fix {} by hand (acc edits only files it can parse)",
                    path.display()
                )),
            ));
        }
    }
    if let (Some(codex), Some(config)) = (codex, &target.trust_file)
        && config.exists()
    {
        let mut command = Command::new(codex);
        command
            .args(["mcp", "list"])
            .env("CODEX_HOME", config.parent().unwrap_or(Path::new(".")));
        // Codex reads its whole configuration before listing; a refused file fails here the
        // way it fails `codex exec`.
        let budget = probe_timeout().max(Duration::from_secs(10));
        match acc_clients::run_bounded(command, budget) {
            Ok(output) if output.status.success() => {}
            Ok(output) => {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let why = stderr
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("no message");
                checks.push(check(
                    format!("config {}", config.display()),
                    Level::Error,
                    format!("Codex refuses it: {why}"),
                    Some(format!("fix {} by hand (acc edits only files it can parse)", config.display())),
                ));
            }
            Err(_) => checks.push(check(
                format!("config {}", config.display()),
                Level::Warn,
                format!("`codex mcp list` did not finish within {budget:?}, so whether Codex loads it is unknown"),
                None,
            )),
        }
    }
    checks
}

/// The installation of ACC in one client: recorded, complete, interrupted, or hooks that run
/// acc without a record. With `repair`, roll back an interrupted installation and reinstall
/// what went missing, with the recorded consent and MCP registration.
fn installation(target: &Target, codex_or_claude: Option<&Path>, repair: bool) -> Vec<Check> {
    let client = target.client;
    let codex = codex_or_claude.filter(|_| client == Client::Codex);
    let mut checks = loadable(target, codex);
    let name = format!("hooks {}", client.as_str());
    let install_fix = Some(format!("acc install --client {}", client.as_str()));
    if crate::interrupted(target) {
        if !repair {
            checks.push(check(
                name,
                Level::Error,
                "an installation was interrupted part way; its files may be half written",
                Some("acc doctor --repair".into()),
            ));
            return checks;
        }
        match crate::roll_back(target) {
            Ok(note) => checks.push(check(
                name.clone(),
                Level::Ok,
                note.unwrap_or_else(|| "nothing to roll back".into()),
                None,
            )),
            Err(e) => {
                checks.push(check(
                    name,
                    Level::Error,
                    format!("roll back failed: {e}"),
                    install_fix,
                ));
                return checks;
            }
        }
    }
    let Some((delivery, mcp)) = crate::recorded_options(target) else {
        checks.push(unrecorded(target, name, install_fix));
        return checks;
    };
    let acc = std::env::current_exe().unwrap_or_default();
    let missing = missing_groups(target, &acc);
    if missing.is_empty() {
        checks.push(check(
            name,
            Level::Ok,
            format!(
                "installed in {}; live delivery consent: {}",
                target.hooks_file.display(),
                delivery.as_str()
            ),
            None,
        ));
    } else if repair {
        checks.push(reinstall(
            target,
            &acc,
            (delivery.as_str(), mcp.as_ref()),
            &missing,
            name,
        ));
    } else {
        checks.push(check(
            name,
            Level::Error,
            lost_message(target, &missing),
            Some("acc doctor --repair".into()),
        ));
    }
    checks
}

/// What a client's hooks file lost: ACC's hook groups, or for OpenCode its plugin, which a
/// file still there holds in another form (an earlier acc's plugin, the user's edit, or the
/// plugin of an acc elsewhere).
fn lost_message(target: &Target, missing: &[&str]) -> String {
    let file = target.hooks_file.display();
    let acc_plugin_there = target.client == Client::OpenCode
        && std::fs::read_to_string(&target.hooks_file)
            .is_ok_and(|text| text.starts_with(crate::opencode::FIRST_LINE));
    if acc_plugin_there {
        format!(
            "{file} is not the plugin this acc writes: an earlier acc's (an upgrade replaces it), your edit (kept), or the plugin of an acc elsewhere"
        )
    } else {
        format!("{file} lost {} (or this acc moved)", missing.join(", "))
    }
}

/// `acc doctor --repair` for hooks a client lost: reinstall with the recorded options, and say
/// "repaired" only when the file read back holds them now.
fn reinstall(
    target: &Target,
    acc: &Path,
    (delivery, mcp): (&str, Option<&crate::RecordedMcp>),
    missing: &[&str],
    name: String,
) -> Check {
    let install_fix = Some(format!("acc install --client {}", target.client.as_str()));
    let options = crate::Options {
        delivery,
        mcp: mcp.map(|(_, participant, _)| match participant {
            Some(p) => crate::McpIdentity::Participant(p),
            None => crate::McpIdentity::Adopt,
        }),
        mcp_name: mcp.map_or(crate::DEFAULT_MCP_NAME, |(name, _, _)| name.as_str()),
        mcp_trust: mcp.is_some_and(|(_, _, trusted)| *trusted),
    };
    match crate::install(target, acc, options, false) {
        Ok(plan) if plan.changes && missing_groups(target, acc).is_empty() => check(
            name,
            Level::Ok,
            format!(
                "repaired: reinstalled {} in {}",
                missing.join(", "),
                target.hooks_file.display()
            ),
            None,
        ),
        Ok(_) => check(
            name,
            Level::Error,
            format!(
                "{} still lacks {} after a reinstall that changed nothing; nothing was repaired",
                target.hooks_file.display(),
                missing.join(", ")
            ),
            install_fix,
        ),
        Err(e) => check(
            name,
            Level::Error,
            format!("repair failed: {e}"),
            install_fix,
        ),
    }
}

/// The events whose ACC hook group (for this acc) is not in the client's hooks file.
fn missing_groups(target: &Target, acc: &Path) -> Vec<&'static str> {
    if target.client == Client::OpenCode {
        return crate::opencode::plugin_missing(&target.hooks_file, acc)
            .then_some("ACC's plugin")
            .into_iter()
            .collect();
    }
    let installed = crate::hook_groups::installed(target);
    crate::groups(target.client, acc)
        .into_iter()
        .filter(|(event, group)| !installed.iter().any(|(e, g)| e == event && g == group))
        .map(|(event, _)| event)
        .collect()
}

/// No installation record: not installed, or hooks that run acc which no record names.
fn unrecorded(target: &Target, name: String, install_fix: Option<String>) -> Check {
    let strays = crate::stray_hooks(target);
    if strays.is_empty() {
        return check(
            name,
            Level::Warn,
            format!("not installed in {}", target.hooks_file.display()),
            install_fix,
        );
    }
    check(
        name,
        Level::Warn,
        format!(
            "{} has hooks that run acc ({}) but no installation record names them: acc will neither update nor remove them",
            target.hooks_file.display(),
            strays.join(", ")
        ),
        Some(format!(
            "remove them from {} by hand, then acc install --client {}",
            target.hooks_file.display(),
            target.client.as_str()
        )),
    )
}

/// Run every check from `start` (the workspace directory). With `repair`, reinstall hooks
/// whose entries went missing, keeping the recorded consent.
pub fn run(start: &Path, home: Option<&Path>, repair: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    for client in Client::ALL {
        let exe = client.executable();
        let found = on_path(exe);
        checks.push(client_check(client, exe, found.as_deref()));
        let Ok(target) = Target::new(client, home) else {
            continue;
        };
        checks.extend(installation(&target, found.as_deref(), repair));
    }
    let needed: Vec<(&str, String)> = Client::ALL
        .into_iter()
        .filter_map(|client| {
            let adapter = client.live_adapter()?;
            let target = Target::new(client, home).ok()?;
            let consent = crate::recorded_delivery(&target);
            (consent != acc_store::LivePolicy::Off).then(|| {
                (
                    adapter,
                    format!(
                        "the {} installation's live delivery ({}) needs it",
                        client.as_str(),
                        consent.as_str()
                    ),
                )
            })
        })
        .collect();
    checks.extend(adapters::adapter_checks(&needed));
    let root = workspace::discover(start)
        .map(|ws| ws.root)
        .unwrap_or_else(|_| start.to_path_buf());
    checks.extend(mcp::checks(home, &root, start));
    checks.extend(workspace_checks(start));
    checks
}

/// The client executable on PATH and its version.
fn client_check(client: Client, exe: &str, found: Option<&Path>) -> Check {
    let name = format!("client {}", client.as_str());
    match found {
        Some(path) => match client_version(path) {
            Ok(version) => check(
                name,
                Level::Ok,
                format!("{version} at {}", path.display()),
                None,
            ),
            Err(why) => check(
                name,
                Level::Warn,
                format!("{} found, but {why}", path.display()),
                None,
            ),
        },
        None => check(name, Level::Warn, format!("`{exe}` is not on PATH"), None),
    }
}

/// The workspace found from `start`, its data home, and its store.
fn workspace_checks(start: &Path) -> Vec<Check> {
    let ws = match workspace::discover(start) {
        Err(e) => {
            return vec![check(
                "workspace",
                Level::Error,
                e.message,
                Some("acc config validate".into()),
            )];
        }
        Ok(ws) => ws,
    };
    let found = check(
        "workspace",
        Level::Ok,
        format!(
            "{} ({}) at {}",
            ws.id,
            ws.source.as_str(),
            ws.root.display()
        ),
        None,
    );
    let data = match workspace::data_dir_for(&ws) {
        Err(e) => check(
            "data home",
            Level::Error,
            e.message,
            Some("set ACC_DATA_HOME outside the workspace".into()),
        ),
        Ok(data_dir) => store_check(&data_dir, &ws.id),
    };
    let mut checks = vec![found, data];
    if let Ok(data_dir) = workspace::data_dir_for(&ws) {
        if let Ok(Some(store)) = acc_store::Store::open_existing(&data_dir, &ws.id) {
            checks.push(layout_check(&store));
            if store.path().is_none() {
                checks.push(wake_check(&store));
            }
        }
        if matches!(acc_store::room_url(&data_dir, &ws.id), Ok(Some(_)))
            && let Some(warning) =
                acc_store::password_file().and_then(|f| acc_store::password_file_warning(&f))
        {
            checks.push(check(
                "password file",
                Level::Warn,
                warning,
                Some("chmod 600 the file: libpq and acc read a password file only when no one else can".into()),
            ));
        }
    }
    checks
}

/// The store's layout revision against this build's, and the backups beside it.
fn layout_check(store: &acc_store::Store) -> Check {
    let layout = acc_app::views::store_layout(store);
    let backups = if layout.backups.is_empty() {
        String::new()
    } else {
        format!(
            "; backups kept beside it: {}",
            layout
                .backups
                .iter()
                .map(|b| format!("{} ({} bytes)", b.path, b.bytes))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if layout.pending_upgrade {
        return check(
            "store layout",
            Level::Warn,
            format!(
                "layout revision {}, this build writes {}: an upgrade is pending{backups}",
                layout.revision, layout.build_revision
            ),
            Some("run `acc store upgrade` (a backup is made first), or let the next write do it when no other process has the store open".into()),
        );
    }
    check(
        "store layout",
        Level::Ok,
        format!(
            "layout revision {} (this build writes {}){backups}",
            layout.revision, layout.build_revision
        ),
        None,
    )
}

/// How a room wakes its followers: its notifications heard (`LISTEN`), or not delivered (a
/// transaction-pooling proxy), so followers read on a timer.
fn wake_check(store: &acc_store::Store) -> Check {
    use acc_store::wake::{How, PROBE_WAIT};
    let how = match store.waker() {
        Ok(waker) => waker.settled(PROBE_WAIT + acc_store::DEAD_LINK),
        Err(e) => How::Lost(e.message),
    };
    let direct = Some("connect the room directly, or through a session-pooling proxy (PgBouncer's pool_mode=session), which delivers notifications".into());
    match how {
        How::Listening => check(
            "room wake",
            Level::Ok,
            "followers (acc sync --follow, acc watch, inbox waits) are woken by the room's notifications".to_string(),
            None,
        ),
        How::Polling(why) => check(
            "room wake",
            Level::Warn,
            format!(
                "{why}: followers read the room every {} s instead of being woken",
                acc_store::wake::POLL_FALLBACK.as_secs()
            ),
            direct,
        ),
        How::Lost(why) => check(
            "room wake",
            Level::Warn,
            format!("the room's notifications cannot be heard: {why}"),
            direct,
        ),
        How::Starting => check(
            "room wake",
            Level::Warn,
            "the room did not answer the listener in time".to_string(),
            direct,
        ),
    }
}

/// The workspace's store: none yet, sound, or refused with what to do.
fn store_check(data_dir: &Path, workspace_id: &str) -> Check {
    let path = acc_store::workspace_dir(data_dir, workspace_id).join(acc_store::STORE_FILE);
    let start_afresh = Some(format!("move {} aside and start afresh", path.display()));
    match acc_store::Store::open_existing(data_dir, workspace_id) {
        Ok(None) => check(
            "store",
            Level::Ok,
            format!(
                "none yet (created on the first change) at {}",
                path.display()
            ),
            None,
        ),
        Ok(Some(mut store)) if store.path().is_none() => match store.room_probe() {
            Ok(Some(probe)) => {
                let line = format!(
                    "protocol {} schema {} in the room at {} (PostgreSQL {}, one round trip {:.2} ms, {})",
                    acc_store::PROTOCOL_VERSION,
                    acc_store::SCHEMA_VERSION,
                    store.location(),
                    probe.server_version,
                    probe.round_trip.as_secs_f64() * 1000.0,
                    probe.transport
                );
                match probe.plain_text_warning() {
                    Some(warning) => check(
                        "store",
                        Level::Warn,
                        format!("{line}; {warning}"),
                        Some("reconnect with TLS: `acc room connect 'postgres://HOST/DB?sslmode=verify-full&sslrootcert=CA.crt'`".into()),
                    ),
                    None => check("store", Level::Ok, line, None),
                }
            }
            Ok(None) => check("store", Level::Ok, "a room".to_string(), None),
            Err(e) => check(
                "store",
                Level::Error,
                e.message,
                Some("start the room's PostgreSQL server or check its URL (`acc room show`); `acc room disconnect` goes back to this machine's SQLite store".into()),
            ),
        },
        Ok(Some(mut store)) => match store.integrity_check() {
            Ok(result) if result == "ok" => check(
                "store",
                Level::Ok,
                format!(
                    "protocol {} schema {} at {}",
                    acc_store::PROTOCOL_VERSION,
                    acc_store::SCHEMA_VERSION,
                    path.display()
                ),
                None,
            ),
            Ok(result) => check(
                "store",
                Level::Error,
                format!("integrity check: {result}"),
                start_afresh,
            ),
            Err(e) => check("store", Level::Error, e.message, start_afresh),
        },
        Err(e) if matches!(acc_store::room_url(data_dir, workspace_id), Ok(Some(_))) => check(
            "store",
            Level::Error,
            acc_core::AccError::from(e).to_string(),
            Some("start the room's PostgreSQL server or check its URL (`acc room show`); `acc room disconnect` goes back to this machine's SQLite store".into()),
        ),
        Err(e) => check(
            "store",
            Level::Error,
            acc_core::AccError::from(e).to_string(),
            Some(format!(
                "move {} aside (acc never converts or deletes a store)",
                path.parent().unwrap_or(&path).display()
            )),
        ),
    }
}

/// `acc doctor`: whether every check passed, and each check.
pub fn view(ok: bool, checks: &[Check]) -> serde_json::Value {
    acc_core::wire::json(&wire::Doctor {
        ok,
        checks: checks
            .iter()
            .map(|c| wire::DoctorCheck {
                name: &c.name,
                status: c.level.as_str(),
                detail: &c.detail,
                fix: c.fix.as_deref(),
            })
            .collect(),
    })
}

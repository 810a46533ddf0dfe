//! `acc install` / `acc uninstall` and `acc doctor`: ACC's entries in a client's own
//! configuration (so the user's clients run ACC's hooks and MCP server), and the read-only
//! checks that say whether each piece works.
//!
//! Owns: ACC's hook entries in each client's own files (every client of
//! `acc_clients::Client::ALL`; docs/hooks-and-install.md names each file), the trust records
//! a client keeps for exactly those hooks, the `acc-mcp` registration, the installation
//! record (the entries ACC wrote, by content, and what each file was without them; the user's
//! live-delivery consent), and undoing it.
//!
//! The rules (README's "Connect your clients"; docs/hooks-and-install.md): edits are lossless (`json_doc`,
//! `toml_doc`); an entry of the same name that ACC did not write is never replaced or removed
//! (install refuses, naming it); install checks everything, then records what it is about to
//! write (`pending`), writes each file atomically, and completes the record, so a failure or a
//! crash part way is rolled back by the next install, uninstall or `doctor --repair`; uninstall
//! removes exactly ACC's entries, found by their content, and keeps every later edit. Must not:
//! edit a file it cannot parse the way the client does, or store consent in the workspace
//! config.

mod codex_trust;
pub mod doctor;
mod files;
mod hook_groups;
mod json_doc;
mod opencode;
mod plan;
mod record;
mod toml_doc;
mod uninstall;

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
mod wire;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
pub use wire::Entry;
use wire::{FileRecord, McpRecord, Record, RecordState};

use acc_clients::Client;
use acc_core::error::{AccError, AccResult, ErrorCode};

use json_doc::{Dialect, JsonDoc};
use toml_doc::TomlDoc;

use files::*;
use hook_groups::looks_like_accs_hook;
pub use hook_groups::{events, groups};
use plan::*;
use record::*;
pub use record::{InstalledConsent, RecordedMcp, interrupted, recorded_delivery, recorded_options};
pub use uninstall::{stray_hooks, uninstall};

/// Live-delivery consents.
pub const DELIVERY: &[&str] = &["off", "actionable", "all"];
/// The MCP server name `acc install --mcp` registers unless `--mcp-name` says otherwise.
pub const DEFAULT_MCP_NAME: &str = "acc";
/// The installation record's format.
const RECORD_VERSION: u32 = 2;

fn sha256(bytes: &[u8]) -> String {
    acc_core::ids::hex(&Sha256::digest(bytes))
}

fn data_error(message: impl Into<String>) -> AccError {
    AccError::new(ErrorCode::InvalidData, message)
}

/// Where one client's configuration lives for a home.
#[derive(Debug, Clone)]
pub struct Target {
    /// The client.
    pub client: Client,
    /// The home directory.
    pub home: PathBuf,
    /// The hooks file (Claude Code settings, or Codex hooks.json).
    pub hooks_file: PathBuf,
    /// Codex's config.toml (trust records), for Codex.
    pub trust_file: Option<PathBuf>,
}

impl Target {
    /// The target for `client`: `--home DIR`, else `$HOME` (Claude Code honours
    /// `CLAUDE_CONFIG_DIR`, Codex `CODEX_HOME`, when no `--home` is given).
    pub fn new(client: Client, home: Option<&Path>) -> AccResult<Self> {
        let explicit = home.is_some();
        let home = match home {
            Some(home) => home.to_path_buf(),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .ok_or_else(|| AccError::usage("no --home and no HOME"))?,
        };
        if !home.is_absolute() {
            return Err(AccError::usage(format!(
                "--home must be absolute, got `{}`",
                home.display()
            )));
        }
        Ok(match client {
            Client::ClaudeCode => {
                let dir = match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|_| !explicit) {
                    Some(dir) => PathBuf::from(dir),
                    None => home.join(".claude"),
                };
                Self {
                    client,
                    hooks_file: dir.join("settings.json"),
                    trust_file: None,
                    home,
                }
            }
            Client::Codex => {
                let dir = match std::env::var_os("CODEX_HOME").filter(|_| !explicit) {
                    Some(dir) => PathBuf::from(dir),
                    None => home.join(".codex"),
                };
                Self {
                    client,
                    hooks_file: dir.join("hooks.json"),
                    trust_file: Some(dir.join("config.toml")),
                    home,
                }
            }
            // Gemini CLI reads `$GEMINI_CLI_HOME/.gemini/settings.json` when that is set, else
            // `~/.gemini/settings.json`: hooks and MCP servers in one file.
            Client::Gemini => {
                let base = match std::env::var_os("GEMINI_CLI_HOME").filter(|_| !explicit) {
                    Some(dir) => PathBuf::from(dir),
                    None => home.clone(),
                };
                Self {
                    client,
                    hooks_file: base.join(".gemini").join("settings.json"),
                    trust_file: None,
                    home,
                }
            }
            // OpenCode loads every plugin in `$XDG_CONFIG_HOME/opencode/plugins/` (else
            // `~/.config/opencode/plugins/`); ACC's is one file there, and `acc-mcp` goes in the
            // `opencode.json` (or `.jsonc`) beside it.
            Client::OpenCode => Self {
                client,
                hooks_file: opencode::config_dir(&home, explicit)
                    .join("plugins")
                    .join("acc.js"),
                trust_file: None,
                home,
            },
            // Kimi Code reads `$KIMI_CODE_HOME/config.toml` (hooks) and `mcp.json` (MCP
            // servers) when that is set, else the same files in `~/.kimi-code`.
            Client::Kimi => {
                let dir = match std::env::var_os("KIMI_CODE_HOME").filter(|_| !explicit) {
                    Some(dir) => PathBuf::from(dir),
                    None => home.join(".kimi-code"),
                };
                Self {
                    client,
                    hooks_file: dir.join("config.toml"),
                    trust_file: None,
                    home,
                }
            }
            // Qwen Code reads `$QWEN_HOME/settings.json` when that is set, else
            // `~/.qwen/settings.json`: hooks and MCP servers in one file, as Gemini CLI's.
            Client::Qwen => {
                let dir = match std::env::var_os("QWEN_HOME").filter(|_| !explicit) {
                    Some(dir) => PathBuf::from(dir),
                    None => home.join(".qwen"),
                };
                Self {
                    client,
                    hooks_file: dir.join("settings.json"),
                    trust_file: None,
                    home,
                }
            }
        })
    }

    /// Where the client keeps its MCP server registrations: Claude Code's `.claude.json`
    /// (in `CLAUDE_CONFIG_DIR` when set and no `--home`), Codex's `config.toml`.
    pub fn mcp_file(&self) -> PathBuf {
        match (&self.trust_file, self.client) {
            (Some(config), _) => config.clone(),
            (None, Client::Gemini | Client::Qwen) => self.hooks_file.clone(),
            (None, Client::OpenCode) => opencode::config_file(&self.hooks_file),
            (None, Client::Kimi) => self.hooks_file.with_file_name("mcp.json"),
            (None, _) => match std::env::var_os("CLAUDE_CONFIG_DIR") {
                Some(dir) if self.hooks_file.starts_with(&dir) => {
                    PathBuf::from(dir).join(".claude.json")
                }
                _ => self.home.join(".claude.json"),
            },
        }
    }

    /// The installation whose configuration directory is `dir` (Claude Code's config
    /// directory, Codex's `CODEX_HOME`), as a live endpoint names it.
    pub fn in_config_dir(client: Client, dir: &Path) -> Self {
        let home = dir.parent().map(Path::to_path_buf).unwrap_or_default();
        match client {
            Client::ClaudeCode => Self {
                client,
                hooks_file: dir.join("settings.json"),
                trust_file: None,
                home,
            },
            Client::Codex => Self {
                client,
                hooks_file: dir.join("hooks.json"),
                trust_file: Some(dir.join("config.toml")),
                home,
            },
            Client::Gemini | Client::Qwen => Self {
                client,
                hooks_file: dir.join("settings.json"),
                trust_file: None,
                home,
            },
            Client::OpenCode => Self {
                client,
                hooks_file: dir.join("plugins").join("acc.js"),
                trust_file: None,
                home,
            },
            Client::Kimi => Self {
                client,
                hooks_file: dir.join("config.toml"),
                trust_file: None,
                home,
            },
        }
    }

    /// The installation record, in the data home (never in a workspace).
    pub fn record_path(&self) -> AccResult<PathBuf> {
        let key = sha256(self.hooks_file.to_string_lossy().as_bytes());
        Ok(acc_app::workspace::data_base()?
            .join("acc")
            .join("installations")
            .join(format!("{}-{}.json", self.client.as_str(), &key[..12])))
    }
}

impl Entry {
    /// What the entry does, for a plan.
    fn plan_line(&self) -> String {
        match self {
            Self::Hook { event, group } => format!(
                "hooks.{event}{} runs {}",
                group
                    .get("matcher")
                    .and_then(Value::as_str)
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default(),
                // A group's first command, or a Kimi Code hook's own.
                group
                    .pointer("/hooks/0/command")
                    .or_else(|| group.get("command"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
            Self::McpServer { name, server } => format!(
                "register acc-mcp as MCP server `{name}` ({})",
                // OpenCode's `command` is the program and its arguments in one list.
                server
                    .get("command")
                    .and_then(|c| c.as_str().or_else(|| c.get(0)?.as_str()))
                    .unwrap_or("")
            ),
            Self::Trust { key, hash } => format!("trust {key} ({hash})"),
            Self::File { .. } => "ACC's plugin, which runs acc's hooks".into(),
        }
    }

    /// How the entry is named to a person.
    fn describe(&self) -> String {
        match self {
            Self::Hook { event, .. } => format!("hooks.{event}: acc's hook"),
            Self::McpServer { name, .. } => format!("MCP server `{name}`"),
            Self::Trust { key, .. } => format!("trust for {key}"),
            Self::File { .. } => "the file".into(),
        }
    }
}

/// A configuration file parsed the way its client parses it.
enum Doc {
    Json(JsonDoc),
    Toml(TomlDoc),
    /// A whole file that is ACC's by its content.
    Whole(String),
}

impl Doc {
    fn parse(path: &Path, format: &str, text: &str) -> AccResult<Self> {
        match format {
            "toml" => TomlDoc::parse(path, text).map(Self::Toml),
            "file" => Ok(Self::Whole(text.to_string())),
            "jsonc" => JsonDoc::parse(path, text, Dialect::Comments, "mcpServers").map(Self::Json),
            "opencode" => {
                JsonDoc::parse(path, text, Dialect::Lenient, opencode::SERVERS_KEY).map(Self::Json)
            }
            _ => JsonDoc::parse(path, text, Dialect::Strict, "mcpServers").map(Self::Json),
        }
    }

    fn text(&self) -> String {
        match self {
            Self::Json(doc) => doc.text(),
            Self::Toml(doc) => doc.text(),
            Self::Whole(text) => text.clone(),
        }
    }

    /// Remove `entry` by its content; `before` is the file without ACC's entries when ACC
    /// first wrote (containers absent from it are removed when left empty). An unreadable
    /// `before` (a damaged record) counts as empty: every container ACC emptied then goes.
    fn remove(&mut self, entry: &Entry, before: &Doc) -> bool {
        match (self, before) {
            (Self::Json(doc), Self::Json(before)) => doc.remove(entry, &before.value),
            (Self::Toml(doc), Self::Toml(before)) => doc.remove(entry, before),
            (Self::Whole(text), _) => match entry {
                Entry::File { content } if text == content => {
                    text.clear();
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// What the file was without ACC's entries, from its record, parsed like the file.
    fn before(path: &Path, format: &str, record: &FileRecord) -> AccResult<Self> {
        let text = String::from_utf8_lossy(&decode(&record.before)).into_owned();
        Self::parse(path, format, &text).or_else(|_| Self::parse(path, format, ""))
    }

    fn check_addable(&self, path: &Path, entry: &Entry) -> AccResult<()> {
        match self {
            Self::Json(doc) => doc.check_addable(path, entry),
            Self::Toml(doc) => doc.check_addable(path, entry),
            Self::Whole(_) => Ok(()),
        }
    }

    fn add(&mut self, entry: &Entry) {
        match self {
            Self::Json(doc) => doc.add(entry),
            Self::Toml(doc) => doc.add(entry),
            Self::Whole(text) => {
                if let Entry::File { content } = entry {
                    text.clone_from(content);
                }
            }
        }
    }

    /// Whether the file holds `entry` by its meaning: the same values, whatever order the client
    /// rewrote their keys in (Claude Code reorders its settings, acc's hook objects included).
    fn holds(&self, entry: &Entry) -> bool {
        match (self, entry) {
            (Self::Json(doc), Entry::Hook { event, group }) => doc
                .value
                .pointer(&format!("/hooks/{event}"))
                .and_then(Value::as_array)
                .is_some_and(|list| list.contains(group)),
            (Self::Json(doc), Entry::McpServer { name, server }) => {
                doc.value.get(doc.servers).and_then(|s| s.get(name)) == Some(server)
            }
            (Self::Whole(text), Entry::File { content }) => text == content,
            (Self::Toml(doc), Entry::McpServer { server, .. }) => {
                doc.existing(entry).as_ref() == Some(server)
            }
            (Self::Toml(doc), Entry::Hook { .. }) => doc.existing(entry).is_some(),
            (Self::Toml(doc), Entry::Trust { hash, .. }) => doc
                .existing(entry)
                .is_some_and(|t| t.get("trusted_hash").and_then(Value::as_str) == Some(hash)),
            _ => false,
        }
    }

    /// What stands where `entry` would go, when something does (the user's entry of the same
    /// name, or something that looks like ACC's hook that no record names).
    fn occupant(&self, entry: &Entry, client: Client) -> Option<String> {
        match (self, entry) {
            (Self::Json(doc), Entry::Hook { event, .. }) => doc
                .value
                .pointer(&format!("/hooks/{event}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|group| looks_like_accs_hook(group, client))
                .map(|group| format!("hooks.{event} already runs acc's hook ({group})")),
            (Self::Json(doc), Entry::McpServer { name, .. }) => doc
                .value
                .get(doc.servers)
                .and_then(|servers| servers.get(name))
                .map(|server| format!("{}.{name} exists ({server})", doc.servers)),
            (Self::Whole(text), Entry::File { content }) if text == content => {
                Some("it is acc's plugin, but no installation record names it".to_string())
            }
            (Self::Whole(text), Entry::File { .. }) => (!text.trim().is_empty())
                .then(|| "the file exists and holds something else".to_string()),
            (Self::Toml(doc), Entry::McpServer { name, .. }) => doc
                .existing(entry)
                .map(|server| format!("[mcp_servers.{name}] exists ({server})")),
            (Self::Toml(doc), Entry::Trust { key, .. }) => doc
                .existing(entry)
                .map(|_| format!("[hooks.state.\"{key}\"] exists")),
            (Self::Toml(doc), Entry::Hook { event, .. }) => doc
                .hook_tables()
                .into_iter()
                .find(|hook| {
                    hook.get("event").and_then(Value::as_str) == Some(event.as_str())
                        && looks_like_accs_hook(hook, client)
                })
                .map(|hook| format!("[[hooks]] already runs acc's hook for {event} ({hook})")),
            _ => None,
        }
    }
}

/// Whom a registered `acc-mcp` speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpIdentity<'a> {
    /// No `ACC_MCP_PARTICIPANT`: the hooked session of the client process that starts it.
    Adopt,
    /// `ACC_MCP_PARTICIPANT` set to this participant.
    Participant(&'a str),
}

impl McpIdentity<'_> {
    fn describe(self) -> String {
        match self {
            Self::Adopt => "speaking for the hooked session of the client that starts it".into(),
            Self::Participant(p) => format!("for participant {p}"),
        }
    }
}

/// What to install.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Live-delivery consent: off, actionable or all.
    pub delivery: &'a str,
    /// Register `acc-mcp`, speaking for whom.
    pub mcp: Option<McpIdentity<'a>>,
    /// The MCP server's name (default `acc`).
    pub mcp_name: &'a str,
    /// Gemini CLI: register the server with `"trust": true` (the user's choice).
    pub mcp_trust: bool,
}

/// The plan (and, unless `dry_run`, the result) of an installation.
#[derive(Debug, Clone)]
pub struct Plan {
    /// One line per step.
    pub steps: Vec<String>,
    /// Whether anything was or would be changed.
    pub changes: bool,
}

/// Sleep between the steps of an installation when `ACC_TEST_INSTALL_PAUSE_MS` says so, so a
/// test can interrupt it (kill -9) between two writes. Test-only; unset, it does nothing.
fn test_pause() {
    if let Some(ms) = std::env::var("ACC_TEST_INSTALL_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms.min(60_000)));
    }
}

/// Install ACC's hooks (and, with `options.mcp`, `acc-mcp`) for `target`, recording the
/// delivery consent. With `dry_run`, check and plan only.
pub fn install(
    target: &Target,
    acc: &Path,
    options: Options<'_>,
    dry_run: bool,
) -> AccResult<Plan> {
    let acc_mcp = acc.with_file_name("acc-mcp");
    check_options(target, &options, &acc_mcp)?;
    let codex = match target.client {
        Client::Codex => Some(codex_trust::codex_executable()?),
        Client::ClaudeCode | Client::Gemini | Client::Qwen | Client::OpenCode | Client::Kimi => {
            None
        }
    };
    let mut steps = Vec::new();
    if !dry_run && let Some(note) = roll_back(target)? {
        steps.push(note);
    }
    let old = read_record(target)?;
    if dry_run
        && old
            .as_ref()
            .is_some_and(|r| r.state == RecordState::Pending)
    {
        steps.push("roll back an interrupted installation first".into());
    }
    let old = match old {
        Some(record) if record.state == RecordState::Pending => record.replaces.map(|b| *b),
        other => other,
    };
    let planned = plan_files(
        target,
        acc,
        &options,
        old.as_ref(),
        codex.as_deref(),
        dry_run,
    )?;
    steps.extend(plan_lines(&planned, &acc_mcp, &options));
    let record_path = target.record_path()?;
    steps.push(format!(
        "record live-delivery consent `{}` and acc's entries in {}",
        options.delivery,
        record_path.display()
    ));
    let changes = planned.iter().any(Planned::changes)
        || old.as_ref().is_none_or(|r| r.delivery != options.delivery);
    if dry_run {
        return Ok(Plan { steps, changes });
    }

    let mut record = Record {
        version: RECORD_VERSION,
        client: target.client.as_str().into(),
        home: target.home.to_string_lossy().into_owned(),
        acc: acc.to_string_lossy().into_owned(),
        delivery: options.delivery.into(),
        mcp: options.mcp.map(|identity| McpRecord {
            name: options.mcp_name.into(),
            participant: match identity {
                McpIdentity::Adopt => None,
                McpIdentity::Participant(p) => Some(p.into()),
            },
            trusted: options.mcp_trust,
        }),
        state: RecordState::Pending,
        files: planned.iter().map(|p| record_file(p, true)).collect(),
        installed_at: acc_core::clock::format_timestamp(acc_core::clock::Clock::now_ms(
            &acc_core::clock::SystemClock::default(),
        )),
        replaces: old.map(Box::new),
    };
    write_record(&record_path, &record)?;
    test_pause();
    for plan in planned.iter().filter(|p| p.changes()) {
        if let Err(error) = write_file(&plan.path, plan.desired.as_bytes()) {
            // Undo what was written, from the pending record, before answering.
            let _ = roll_back(target);
            return Err(error);
        }
        test_pause();
    }
    record.state = RecordState::Complete;
    record.replaces = None;
    record.files = planned.iter().map(|p| record_file(p, false)).collect();
    write_record(&record_path, &record)?;
    Ok(Plan {
        steps,
        changes: true,
    })
}

/// Roll back an installation that was interrupted (its record still `pending`): every file it
/// wrote goes back to its bytes from before it began, and the record it replaced comes back.
/// A note saying so when there was one.
pub fn roll_back(target: &Target) -> AccResult<Option<String>> {
    sweep_temporaries(target);
    let Some(record) = read_record(target)? else {
        return Ok(None);
    };
    if record.state != RecordState::Pending {
        return Ok(None);
    }
    for file in &record.files {
        let current = read_text(&file.path)?;
        if current.as_deref().map(sha256).as_deref() != Some(file.written_sha256.as_str()) {
            // Not written yet, or changed since: it keeps what it has.
            continue;
        }
        match &file.previous {
            Some(previous) => write_file(&file.path, &decode(previous))?,
            None if !file.previous_existed => remove_client_file(&file.path)?,
            None => {}
        }
    }
    let record_path = target.record_path()?;
    match record.replaces {
        Some(old) => write_record(&record_path, &old)?,
        None => std::fs::remove_file(&record_path)?,
    }
    Ok(Some(format!(
        "rolled back an interrupted installation of {}",
        record.installed_at
    )))
}

fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `acc install` and `acc uninstall`.
pub fn plan_view(
    plan: &Plan,
    client: &'static str,
    dry_run: bool,
    verb: &'static str,
) -> serde_json::Value {
    acc_core::wire::json(&wire::InstallPlan {
        dry_run,
        client,
        steps: &plan.steps,
        changes: plan.changes,
        verb,
    })
}

/// A recorded file's format as the editor knows it: `toml`, `jsonc` (JSON with comments:
/// Gemini CLI's settings), `opencode` (OpenCode's lenient `opencode.json`), `file` (a whole
/// file that is ACC's), else strict `json`.
fn known_format(recorded: &str) -> &'static str {
    match recorded {
        "toml" => "toml",
        "jsonc" => "jsonc",
        "opencode" => "opencode",
        "file" => "file",
        _ => "json",
    }
}

/// The format of `client`'s hooks file.
fn hooks_format(client: Client) -> &'static str {
    match client {
        Client::Gemini | Client::Qwen => "jsonc",
        Client::OpenCode => "file",
        Client::Kimi => "toml",
        Client::ClaudeCode | Client::Codex => "json",
    }
}

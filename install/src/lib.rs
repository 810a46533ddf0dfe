//! `acc install` / `acc uninstall` and `acc doctor`: ACC's entries in a client's own
//! configuration (so the user's clients run ACC's hooks and MCP server), and the read-only
//! checks that say whether each piece works.
//!
//! Owns: ACC's hook groups in Claude Code's `~/.claude/settings.json` or Codex's
//! `$CODEX_HOME/hooks.json`, Codex's trust records for exactly those hooks, the `acc-mcp`
//! registration (`.claude.json` `mcpServers`, `config.toml` `[mcp_servers]`), the installation
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
mod json_doc;
mod toml_doc;

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

use json_doc::JsonDoc;
use toml_doc::TomlDoc;

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
        })
    }

    /// Where the client keeps its MCP server registrations: Claude Code's `.claude.json`
    /// (in `CLAUDE_CONFIG_DIR` when set and no `--home`), Codex's `config.toml`.
    pub fn mcp_file(&self) -> PathBuf {
        match (&self.trust_file, self.client) {
            (Some(config), _) => config.clone(),
            (None, Client::Gemini) => self.hooks_file.clone(),
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
            Client::Gemini => Self {
                client,
                hooks_file: dir.join("settings.json"),
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

/// The hook events installed per client, with their tool matchers. The write guard's matcher
/// names every tool that can write (the hook itself then reads which files,
/// `hooks::writes`): Codex 0.169 reports its shell tool as `Bash`, and runs `apply_patch` through
/// it; MCP tools are matched so that one whose name says it writes is guarded too.
pub fn events(client: Client) -> &'static [(&'static str, Option<&'static str>)] {
    match client {
        Client::ClaudeCode => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            (
                "PreToolUse",
                Some("Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*"),
            ),
            ("Stop", None),
            ("SessionEnd", None),
        ],
        Client::Codex => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            (
                "PreToolUse",
                Some("Bash|apply_patch|shell|exec_command|mcp__.*"),
            ),
            ("Stop", None),
        ],
        Client::Gemini => &[
            ("SessionStart", Some("*")),
            ("BeforeAgent", Some("*")),
            (
                "BeforeTool",
                Some("write_file|replace|run_shell_command|mcp_.*"),
            ),
            ("AfterAgent", Some("*")),
            ("SessionEnd", Some("*")),
        ],
    }
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The hook groups ACC adds, by event.
pub fn groups(client: Client, acc: &Path) -> Vec<(&'static str, Value)> {
    events(client)
        .iter()
        .map(|(event, matcher)| {
            let group = acc_app::wire::HookGroup {
                matcher: *matcher,
                hooks: [acc_app::wire::HookCommand {
                    // Gemini CLI names hooks (its trust records key them by name and command)
                    // and counts the timeout in milliseconds.
                    name: (client == Client::Gemini).then_some("acc"),
                    kind: "command",
                    command: format!(
                        "{} hook {} {event}",
                        quote(&acc.to_string_lossy()),
                        client.as_str()
                    ),
                    timeout: if client == Client::Gemini { 5000 } else { 5 },
                }],
            };
            (*event, acc_core::wire::json(&group))
        })
        .collect()
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
                group
                    .pointer("/hooks/0/command")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ),
            Self::McpServer { name, server } => format!(
                "register acc-mcp as MCP server `{name}` ({})",
                server.get("command").and_then(Value::as_str).unwrap_or("")
            ),
            Self::Trust { key, hash } => format!("trust {key} ({hash})"),
        }
    }

    /// How the entry is named to a person.
    fn describe(&self) -> String {
        match self {
            Self::Hook { event, .. } => format!("hooks.{event}: acc's hook"),
            Self::McpServer { name, .. } => format!("MCP server `{name}`"),
            Self::Trust { key, .. } => format!("trust for {key}"),
        }
    }
}

impl Record {
    fn file(&self, path: &Path) -> Option<&FileRecord> {
        self.files.iter().find(|f| f.path == path)
    }
}

fn decode(text: &str) -> Vec<u8> {
    STANDARD.decode(text).unwrap_or_default()
}

/// Read a record; records of the first format (version 1) are read into this one.
fn read_record(target: &Target) -> AccResult<Option<Record>> {
    let path = target.record_path()?;
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        data_error(format!(
            "the installation record {} is damaged ({e}); move it aside and remove acc's entries by hand",
            path.display()
        ))
    })?;
    if value.get("version").is_none() {
        return Ok(Some(from_first_format(target, &value)));
    }
    serde_json::from_value(value).map(Some).map_err(|e| {
        data_error(format!(
            "the installation record {} is not one this acc reads ({e})",
            path.display()
        ))
    })
}

/// A version 1 record: files by position (the hooks file, then Codex's config.toml with an
/// appended block, or Claude Code's state file with `mcpEntry`), entries derived from the acc
/// path it recorded.
fn from_first_format(target: &Target, value: &Value) -> Record {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let acc = PathBuf::from(text(value, "acc"));
    let mut files = Vec::new();
    for (index, file) in value
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = PathBuf::from(text(file, "path"));
        let original = file.get("original").and_then(Value::as_str);
        let mut entries = Vec::new();
        let mut format = "json";
        if index == 0 {
            entries = groups(target.client, &acc)
                .into_iter()
                .map(|(event, group)| Entry::Hook {
                    event: event.to_string(),
                    group,
                })
                .collect();
        } else if let Some(entry) = file.get("mcpEntry") {
            entries.push(Entry::McpServer {
                name: DEFAULT_MCP_NAME.into(),
                server: entry.clone(),
            });
        } else if let Some(block) = file.get("added").and_then(Value::as_str) {
            format = "toml";
            if let Ok(doc) = block.parse::<toml::Table>() {
                let states = doc
                    .get("hooks")
                    .and_then(|h| h.get("state"))
                    .and_then(toml::Value::as_table);
                for (key, state) in states.into_iter().flatten() {
                    if let Some(hash) = state.get("trusted_hash").and_then(toml::Value::as_str) {
                        entries.push(Entry::Trust {
                            key: key.clone(),
                            hash: hash.to_string(),
                        });
                    }
                }
                if let Some(server) = doc.get("mcp_servers").and_then(|s| s.get("acc")) {
                    entries.push(Entry::McpServer {
                        name: DEFAULT_MCP_NAME.into(),
                        server: serde_json::to_value(server).unwrap_or(Value::Null),
                    });
                }
            }
        }
        files.push(FileRecord {
            path,
            format: format.into(),
            existed: original.is_some(),
            before: original.unwrap_or("").to_string(),
            written_sha256: text(file, "writtenSha256"),
            entries,
            previous: None,
            previous_existed: false,
        });
    }
    Record {
        version: 1,
        client: text(value, "client"),
        home: text(value, "home"),
        acc: acc.to_string_lossy().into_owned(),
        delivery: text(value, "delivery"),
        mcp: None,
        state: RecordState::Complete,
        files,
        installed_at: text(value, "installedAt"),
        replaces: None,
    }
}

/// A configuration file parsed the way its client parses it.
enum Doc {
    Json(JsonDoc),
    Toml(TomlDoc),
}

impl Doc {
    fn parse(path: &Path, format: &str, text: &str) -> AccResult<Self> {
        match format {
            "toml" => TomlDoc::parse(path, text).map(Self::Toml),
            "jsonc" => JsonDoc::parse_commented(path, text).map(Self::Json),
            _ => JsonDoc::parse(path, text).map(Self::Json),
        }
    }

    fn text(&self) -> String {
        match self {
            Self::Json(doc) => doc.text(),
            Self::Toml(doc) => doc.text(),
        }
    }

    /// Remove `entry` by its content; `before` is the file without ACC's entries when ACC
    /// first wrote (containers absent from it are removed when left empty). An unreadable
    /// `before` (a damaged record) counts as empty: every container ACC emptied then goes.
    fn remove(&mut self, entry: &Entry, before: &Doc) -> bool {
        match (self, before) {
            (Self::Json(doc), Self::Json(before)) => doc.remove(entry, &before.value),
            (Self::Toml(doc), Self::Toml(before)) => doc.remove(entry, before),
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
        }
    }

    fn add(&mut self, entry: &Entry) {
        match self {
            Self::Json(doc) => doc.add(entry),
            Self::Toml(doc) => doc.add(entry),
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
                doc.value.get("mcpServers").and_then(|s| s.get(name)) == Some(server)
            }
            (Self::Toml(doc), Entry::McpServer { server, .. }) => {
                doc.existing(entry).as_ref() == Some(server)
            }
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
                .pointer(&format!("/mcpServers/{name}"))
                .map(|server| format!("mcpServers.{name} exists ({server})")),
            (Self::Toml(doc), Entry::McpServer { name, .. }) => doc
                .existing(entry)
                .map(|server| format!("[mcp_servers.{name}] exists ({server})")),
            (Self::Toml(doc), Entry::Trust { key, .. }) => doc
                .existing(entry)
                .map(|_| format!("[hooks.state.\"{key}\"] exists")),
            _ => None,
        }
    }
}

/// Whether a hook group runs `acc hook <client> …` from any acc.
fn looks_like_accs_hook(group: &Value, client: Client) -> bool {
    let marker = format!(" hook {} ", client.as_str());
    group
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|hook| hook.get("command").and_then(Value::as_str))
        .any(|command| {
            command.contains(&marker)
                && command
                    .split(&marker)
                    .next()
                    .is_some_and(|program| program.trim_matches('\'').ends_with("acc"))
        })
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

/// One file's part of an installation: what it is now and what it will be.
struct Planned {
    path: PathBuf,
    format: &'static str,
    current: Option<Vec<u8>>,
    existed: bool,
    before: String,
    desired: String,
    entries: Vec<Entry>,
}

impl Planned {
    fn changes(&self) -> bool {
        self.current.as_deref() != Some(self.desired.as_bytes())
    }
}

fn read_text(path: &Path) -> AccResult<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(data_error(format!(
            "cannot read {} ({e}); nothing was changed",
            path.display()
        ))),
    }
}

fn utf8(path: &Path, bytes: &[u8]) -> AccResult<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        data_error(format!(
            "{} is not UTF-8 text; acc will not edit it. Nothing was changed",
            path.display()
        ))
    })
}

/// Plan one file: remove the entries an earlier installation recorded in it, refuse to take
/// anything that is the user's, and add `entries`.
fn plan_file(
    client: Client,
    path: &Path,
    format: &'static str,
    old: Option<&FileRecord>,
    entries: Vec<Entry>,
) -> AccResult<Planned> {
    let current = read_text(path)?;
    let text = match &current {
        Some(bytes) => utf8(path, bytes)?,
        None => String::new(),
    };
    let mut doc = Doc::parse(path, format, &text)?;
    // Installed before with these very entries, and the file still holds each of them by
    // meaning: nothing to do, whatever order the client rewrote them in.
    let already = !entries.is_empty()
        && old.is_some_and(|o| o.entries == entries)
        && entries.iter().all(|e| doc.holds(e));
    if let Some(old) = old {
        let recorded_before = Doc::before(path, format, old)?;
        for entry in &old.entries {
            doc.remove(entry, &recorded_before);
        }
    }
    let before = match old {
        // The file is still exactly what acc wrote: nothing else changed it, so what it was
        // without acc's entries is what the record says, byte for byte.
        Some(old) if current.as_deref().map(sha256).as_deref() == Some(&old.written_sha256) => {
            String::from_utf8_lossy(&decode(&old.before)).into_owned()
        }
        Some(old) if !old.entries.is_empty() => doc.text(),
        _ => text.clone(),
    };
    for entry in &entries {
        if let Some(occupant) = doc.occupant(entry, client) {
            let way_out = match entry {
                Entry::McpServer { .. } => {
                    "use another name with --mcp-name NAME, or remove it yourself"
                }
                _ => "remove it yourself, then install again",
            };
            return Err(data_error(format!(
                "{} in {}: {occupant}, and acc did not write it (no installation record names it). acc never replaces what is yours: {way_out}. Nothing was changed",
                entry.describe(),
                path.display()
            )));
        }
        doc.check_addable(path, entry)?;
    }
    // The file without ACC's entries is parsed again so additions start from exactly it.
    let mut desired = Doc::parse(path, format, &before)?;
    for entry in &entries {
        desired.add(entry);
    }
    let mut desired = desired.text();
    if already || (entries.is_empty() && old.is_none_or(|o| o.entries.is_empty())) {
        desired = text.clone();
    }
    Ok(Planned {
        path: path.to_path_buf(),
        format,
        existed: old.map_or(current.is_some(), |o| o.existed),
        current,
        before,
        desired,
        entries,
    })
}

/// The hook entries for a client, in event order.
fn hook_entries(client: Client, acc: &Path) -> Vec<Entry> {
    groups(client, acc)
        .into_iter()
        .map(|(event, group)| Entry::Hook {
            event: event.to_string(),
            group,
        })
        .collect()
}

fn mcp_server(client: Client, acc_mcp: &Path, identity: McpIdentity<'_>, trust: bool) -> Value {
    let mut env = std::collections::BTreeMap::new();
    if let McpIdentity::Participant(participant) = identity {
        env.insert("ACC_MCP_PARTICIPANT", participant.to_string());
    }
    // A data home chosen by the environment is written down: Codex starts MCP servers with a
    // short list of variables (no ACC_DATA_HOME, no XDG_DATA_HOME), so the server would open
    // another store than the hooks, which inherit the client's whole environment.
    if ["ACC_DATA_HOME", "XDG_DATA_HOME"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
        && let Ok(base) = acc_clients::data_base()
    {
        env.insert("ACC_DATA_HOME", base.to_string_lossy().into_owned());
    }
    let command = acc_mcp.to_string_lossy().into_owned();
    acc_core::wire::json(&match client {
        // The shape `claude mcp add` writes.
        Client::ClaudeCode => acc_app::wire::McpServer {
            kind: Some("stdio"),
            command,
            args: Some([]),
            env: Some(env),
            trust: None,
        },
        // The shape `gemini mcp add` writes; `trust` only when the user asked for it.
        Client::Codex | Client::Gemini => acc_app::wire::McpServer {
            kind: None,
            command,
            args: (client == Client::Gemini).then_some([]),
            env: Some(env).filter(|e| !e.is_empty()),
            trust: trust.then_some(true),
        },
    })
}

/// The position of each of ACC's groups in its event's list of the planned hooks file, as the
/// trust key's tail (`user_prompt_submit:1:0`).
fn trust_suffixes(hooks_text: &str, entries: &[Entry]) -> Vec<String> {
    let value: Value = serde_json::from_str(hooks_text).unwrap_or(Value::Null);
    entries
        .iter()
        .filter_map(|entry| {
            let Entry::Hook { event, group } = entry else {
                return None;
            };
            let index = value
                .pointer(&format!("/hooks/{event}"))
                .and_then(Value::as_array)?
                .iter()
                .position(|g| g == group)?;
            Some(format!("{}:{index}:0", snake(event)))
        })
        .collect()
}

fn record_file(planned: &Planned, pending: bool) -> FileRecord {
    FileRecord {
        path: planned.path.clone(),
        format: planned.format.into(),
        existed: planned.existed,
        before: STANDARD.encode(planned.before.as_bytes()),
        written_sha256: sha256(planned.desired.as_bytes()),
        entries: planned.entries.clone(),
        previous: pending
            .then(|| planned.current.as_deref().map(|b| STANDARD.encode(b)))
            .flatten(),
        previous_existed: pending && planned.current.is_some(),
    }
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

/// Whether a file's directory can be written (its nearest existing ancestor, when it does not
/// exist yet).
fn check_writable(path: &Path) -> AccResult<()> {
    let mut dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    while !dir.exists() {
        match dir.parent() {
            Some(parent) => dir = parent.to_path_buf(),
            None => break,
        }
    }
    let writable = |p: &Path| rustix::fs::access(p, rustix::fs::Access::WRITE_OK).is_ok();
    if !writable(&dir) || (path.exists() && !writable(path)) {
        return Err(data_error(format!(
            "{} cannot be written (permissions); nothing was changed",
            path.display()
        )));
    }
    Ok(())
}

/// Codex's trust records for ACC's planned hook groups: the hashes Codex itself computes for
/// the planned `hooks.json` (a dry run does not start codex: the keys are known, the hashes
/// are not).
fn trust_entries(
    target: &Target,
    codex: Option<&Path>,
    planned_hooks: &str,
    hooks: &[Entry],
    dry_run: bool,
) -> AccResult<Vec<Entry>> {
    let suffixes = trust_suffixes(planned_hooks, hooks);
    let key = |suffix: &str| format!("{}:{suffix}", target.hooks_file.display());
    let Some(codex) = codex.filter(|_| !dry_run) else {
        return Ok(suffixes
            .iter()
            .map(|suffix| Entry::Trust {
                key: key(suffix),
                hash: "(asked of codex when installing)".into(),
            })
            .collect());
    };
    let listed = codex_trust::hashes(codex, planned_hooks)?;
    suffixes
        .iter()
        .map(|suffix| {
            let Some((_, hash)) = listed.hashes.iter().find(|(s, _)| s == suffix) else {
                return Err(data_error(format!(
                    "codex does not list acc's hook {suffix} in {}{}; nothing was changed",
                    target.hooks_file.display(),
                    if listed.problems.is_empty() {
                        String::new()
                    } else {
                        format!(" (codex says: {})", listed.problems.join("; "))
                    }
                )));
            };
            Ok(Entry::Trust {
                key: key(suffix),
                hash: hash.clone(),
            })
        })
        .collect()
}

/// One line per planned change, for the plan `install` prints.
fn plan_lines(planned: &[Planned], acc_mcp: &Path, options: &Options<'_>) -> Vec<String> {
    let mut steps = Vec::new();
    for plan in planned {
        let verb = if plan.changes() {
            "add to"
        } else {
            "already in"
        };
        if plan.entries.is_empty() {
            steps.push(format!("remove acc's entries from {}", plan.path.display()));
        }
        for entry in &plan.entries {
            steps.push(format!(
                "{verb} {}: {}",
                plan.path.display(),
                entry.plan_line()
            ));
        }
    }
    if let Some(identity) = options.mcp {
        steps.push(format!(
            "acc-mcp ({}) is MCP server `{}`, {}",
            acc_mcp.display(),
            options.mcp_name,
            identity.describe()
        ));
    }
    steps
}

/// Every file the installation touches, planned: the hooks file, Codex's `config.toml` (trust
/// records and the MCP server) or Claude Code's state file (the MCP server), and any file an
/// earlier installation wrote that this one no longer touches (it loses ACC's entries).
/// Refuses before anything is written when a file that changes is not writable.
fn plan_files(
    target: &Target,
    acc: &Path,
    options: &Options<'_>,
    old: Option<&Record>,
    codex: Option<&Path>,
    dry_run: bool,
) -> AccResult<Vec<Planned>> {
    let acc_mcp = acc.with_file_name("acc-mcp");
    let old_file = |path: &Path| old.and_then(|r| r.file(path));

    let hooks = hook_entries(target.client, acc);
    let mcp_entry = options.mcp.map(|identity| Entry::McpServer {
        name: options.mcp_name.to_string(),
        server: mcp_server(target.client, &acc_mcp, identity, options.mcp_trust),
    });
    // Gemini CLI keeps hooks and MCP servers in one settings file: one plan for both.
    let one_file = target.mcp_file() == target.hooks_file;
    let mut hooks_file_entries = hooks.clone();
    if one_file {
        hooks_file_entries.extend(mcp_entry.clone());
    }
    let hooks_plan = plan_file(
        target.client,
        &target.hooks_file,
        hooks_format(target.client),
        old_file(&target.hooks_file),
        hooks_file_entries,
    )?;
    let mut planned = vec![hooks_plan];
    match (target.client, &target.trust_file) {
        _ if one_file => {}
        (Client::Codex, Some(config)) => {
            let mut entries = trust_entries(target, codex, &planned[0].desired, &hooks, dry_run)?;
            entries.extend(mcp_entry.clone());
            planned.push(plan_file(
                target.client,
                config,
                "toml",
                old_file(config),
                entries,
            )?);
        }
        _ => {
            let state_file = target.mcp_file();
            if mcp_entry.is_some() || old_file(&state_file).is_some() {
                planned.push(plan_file(
                    target.client,
                    &state_file,
                    "json",
                    old_file(&state_file),
                    mcp_entry.clone().into_iter().collect(),
                )?);
            }
        }
    }
    // Files an earlier installation wrote that this one no longer touches lose ACC's entries.
    for file in old.iter().flat_map(|r| r.files.iter()) {
        if !planned.iter().any(|p| p.path == file.path) {
            let format = known_format(&file.format);
            planned.push(plan_file(
                target.client,
                &file.path,
                format,
                Some(file),
                Vec::new(),
            )?);
        }
    }
    for plan in planned.iter().filter(|p| p.changes()) {
        check_writable(&plan.path)?;
    }

    Ok(planned)
}

/// The options of an install, checked before anything else: the consent's spelling,
/// `--mcp-trust` only for Gemini CLI with `--mcp`, the names, and `acc-mcp` beside `acc`.
fn check_options(target: &Target, options: &Options<'_>, acc_mcp: &Path) -> AccResult<()> {
    if !DELIVERY.contains(&options.delivery) {
        return Err(AccError::usage(format!(
            "--delivery must be off, actionable or all, got `{}`",
            options.delivery
        )));
    }
    // No adapter reaches a running Gemini CLI session: a live consent would enable nothing.
    if target.client == Client::Gemini && options.delivery != "off" {
        return Err(AccError::usage(format!(
            "--delivery {} consents to live delivery, which Gemini CLI does not have: its messages arrive through next-turn. Leave --delivery out",
            options.delivery
        )));
    }
    if options.mcp_trust && (target.client != Client::Gemini || options.mcp.is_none()) {
        return Err(AccError::usage(
            "--mcp-trust marks Gemini CLI's acc-mcp entry trusted: it needs --client gemini and --mcp",
        ));
    }
    if let Some(identity) = options.mcp {
        acc_core::ids::validate_portable_id("--mcp-name", options.mcp_name)?;
        if let McpIdentity::Participant(participant) = identity {
            acc_core::ids::validate_portable_id("--mcp participant", participant)?;
        }
        if !acc_mcp.is_file() {
            return Err(data_error(format!(
                "{} is missing; it must sit beside acc to be registered. Nothing was changed",
                acc_mcp.display()
            )));
        }
    }
    Ok(())
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
        Client::ClaudeCode | Client::Gemini => None,
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

fn write_record(path: &Path, record: &Record) -> AccResult<()> {
    let mut text = serde_json::to_string_pretty(record)
        .map_err(|e| AccError::internal(format!("the installation record: {e}")))?;
    text.push('\n');
    write_private(path, text.as_bytes())
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

/// Why `client` would not load the JSON `text` of its file `path` (its hooks file: JSON with
/// comments for Gemini CLI; any other JSON file strict), or `None` when it would.
pub fn json_problem(target: &Target, path: &Path, text: &str) -> Option<String> {
    json_doc::client_value(text, reads_comments(target, path)).err()
}

/// Whether the client reads `path` as JSON with comments (Gemini CLI's settings, which hold
/// its hooks and its MCP servers), rather than strict JSON.
fn reads_comments(target: &Target, path: &Path) -> bool {
    path == target.hooks_file && hooks_format(target.client) == "jsonc"
}

/// A client's JSON file as that client reads it (comments where it allows them): the one
/// reader the installer's checks and `acc doctor` share. `None` when it is missing or does not
/// parse.
pub fn read_client_json(target: &Target, path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).ok()?;
    json_doc::client_value(
        &String::from_utf8_lossy(&bytes),
        reads_comments(target, path),
    )
    .ok()
}

/// How the temporary files ACC writes beside a file begin (then the writer's pid and a dash).
const TEMP_PREFIX: &str = ".acc-install-";

/// Remove the temporary files a killed writer left beside the files ACC edits and its record:
/// those whose writer's pid no longer runs. A live writer's are left alone.
fn sweep_temporaries(target: &Target) {
    let mut dirs: Vec<PathBuf> = [
        Some(target.hooks_file.clone()),
        Some(target.mcp_file()),
        target.trust_file.clone(),
        target.record_path().ok(),
    ]
    .into_iter()
    .flatten()
    // Beside the file and beside the file its links name, where the writes land.
    .flat_map(|f| [through_links(&f).ok(), Some(f)])
    .flatten()
    .filter_map(|f| f.parent().map(Path::to_path_buf))
    .collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let writer = name
                .strip_prefix(TEMP_PREFIX)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<i64>().ok());
            if writer.is_some_and(|pid| !acc_clients::pid_alive(pid)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The file a change of `path` lands in: `path` itself, or, when it is a symbolic link (or a
/// chain of them, each relative to its own directory), the file the last link names. A user's
/// dotfiles manager keeps its link and the file it points to gets the bytes; a link that points
/// nowhere yet gets its file created. A loop of links is refused by name.
pub(crate) fn through_links(path: &Path) -> AccResult<PathBuf> {
    /// The kernel's own limit on links followed in one lookup.
    const MAX_LINKS: usize = 40;
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(data_error(format!(
        "{} is a loop of symbolic links (more than {MAX_LINKS}); nothing was changed",
        path.display()
    )))
}

/// Remove a client file acc created (it did not exist before the install), through its links:
/// a link the user made to it stays.
fn remove_client_file(path: &Path) -> AccResult<()> {
    Ok(std::fs::remove_file(through_links(path)?)?)
}

/// Write a file atomically, through its symbolic links ([`through_links`]): a temporary file in
/// the real file's directory, fsynced, renamed over it, and the directory fsynced. The file's
/// permissions are kept.
fn write_file(path: &Path, bytes: &[u8]) -> AccResult<()> {
    use std::io::Write;
    let path = &through_links(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // The writer's pid is in the name: a temporary file left by a writer that was killed is
    // recognised and removed by the next install, uninstall or repair (`sweep_temporaries`).
    let mut temp = tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
        .tempfile_in(dir)
        .map_err(|e| data_error(format!("cannot write beside {} ({e})", path.display())))?;
    temp.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    temp.as_file().sync_all()?;
    temp.persist(path)
        .map_err(|e| data_error(format!("cannot replace {} ({})", path.display(), e.error)))?;
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn write_private(path: &Path, bytes: &[u8]) -> AccResult<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    write_file(path, bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// Undo an installation: remove exactly ACC's entries, found by their content, keeping every
/// later edit. A file still byte for byte what ACC wrote gets back what it was without them
/// (or goes, if ACC created it).
pub fn uninstall(target: &Target, dry_run: bool) -> AccResult<Plan> {
    let mut steps = Vec::new();
    if !dry_run && let Some(note) = roll_back(target)? {
        steps.push(note);
    }
    let record = match read_record(target)? {
        Some(record) if record.state == RecordState::Pending => record.replaces.map(|b| *b),
        other => other,
    };
    let Some(record) = record else {
        steps.push(format!(
            "nothing to undo: no installation recorded for {}",
            target.hooks_file.display()
        ));
        let strays = stray_hooks(target);
        if !strays.is_empty() {
            steps.push(format!(
                "{} has hooks that run acc ({}) that no installation record names; remove them by hand",
                target.hooks_file.display(),
                strays.join(", ")
            ));
        }
        return Ok(Plan {
            steps,
            changes: false,
        });
    };
    let mut actions: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    for file in &record.files {
        let Some(current) = read_text(&file.path)? else {
            steps.push(format!("{} is gone already", file.path.display()));
            continue;
        };
        if sha256(&current) == file.written_sha256 {
            let before = decode(&file.before);
            if file.existed || !holds_nothing(&file.format, &before) {
                steps.push(format!(
                    "restore {} to what it was without acc's entries",
                    file.path.display()
                ));
                actions.push((file.path.clone(), Some(before)));
            } else {
                steps.push(format!("remove {} (acc created it)", file.path.display()));
                actions.push((file.path.clone(), None));
            }
            continue;
        }
        let format = known_format(&file.format);
        let mut doc = Doc::parse(&file.path, format, &utf8(&file.path, &current)?)?;
        let before = Doc::before(&file.path, format, file)?;
        let mut kept = Vec::new();
        let mut removed = 0;
        for entry in &file.entries {
            if doc.remove(entry, &before) {
                removed += 1;
            } else if !matches!(entry, Entry::Hook { .. })
                || doc.occupant(entry, target.client).is_some()
            {
                kept.push(entry.describe());
            }
        }
        if removed > 0 {
            steps.push(format!(
                "remove acc's {removed} entries from {} (it changed since; your changes stay)",
                file.path.display()
            ));
            actions.push((file.path.clone(), Some(doc.text().into_bytes())));
        } else {
            steps.push(format!("{}: no acc entries left", file.path.display()));
        }
        for entry in kept {
            steps.push(format!(
                "keep {entry} in {}: it is not as acc wrote it, so it is yours now",
                file.path.display()
            ));
        }
    }
    let record_path = target.record_path()?;
    steps.push(format!(
        "forget the installation record {}",
        record_path.display()
    ));
    if !dry_run {
        for (path, bytes) in actions {
            match bytes {
                Some(bytes) => write_file(&path, &bytes)?,
                None => remove_client_file(&path)?,
            }
        }
        std::fs::remove_file(&record_path)?;
    }
    Ok(Plan {
        steps,
        changes: true,
    })
}

/// A recorded file's format as the editor knows it: `toml`, `jsonc` (JSON with comments:
/// Gemini CLI's settings), else strict `json`.
fn known_format(recorded: &str) -> &'static str {
    match recorded {
        "toml" => "toml",
        "jsonc" => "jsonc",
        _ => "json",
    }
}

/// The format of `client`'s hooks file.
fn hooks_format(client: Client) -> &'static str {
    if client == Client::Gemini {
        "jsonc"
    } else {
        "json"
    }
}

/// Whether a file's text without ACC's entries holds nothing of anyone's (blank, or an empty
/// JSON object): a file ACC created and that still holds nothing else is removed, not kept.
fn holds_nothing(format: &str, bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return true;
    }
    // A file with comments holds the user's comments: it is kept.
    matches!(format, "json" | "jsonc")
        && serde_json::from_str::<Value>(&text)
            .is_ok_and(|v| v.as_object().is_some_and(Map::is_empty))
}

/// Hook groups in the target's hooks file that run acc but that no installation record names.
pub fn stray_hooks(target: &Target) -> Vec<String> {
    let recorded: Vec<Entry> = read_record(target)
        .ok()
        .flatten()
        .and_then(|r| r.file(&target.hooks_file).map(|f| f.entries.clone()))
        .unwrap_or_default();
    let value: Value = read_client_json(target, &target.hooks_file).unwrap_or(Value::Null);
    let mut strays = Vec::new();
    for (event, list) in value
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for group in list.as_array().into_iter().flatten() {
            let ours = recorded.iter().any(
                |e| matches!(e, Entry::Hook { event: ev, group: g } if ev == event && g == group),
            );
            if !ours && looks_like_accs_hook(group, target.client) {
                strays.push(format!("hooks.{event}"));
            }
        }
    }
    strays
}

/// The consent `acc install --delivery` recorded in each installation's record, as delivery
/// reads it.
#[derive(Debug, Default, Clone, Copy)]
pub struct InstalledConsent;

impl acc_delivery::ConsentRecords for InstalledConsent {
    fn recorded(&self, client: Client, dir: &Path) -> acc_store::LivePolicy {
        recorded_delivery(&Target::in_config_dir(client, dir))
    }

    fn recorded_here(&self, client: Client) -> acc_store::LivePolicy {
        Target::new(client, None).map_or(acc_store::LivePolicy::Off, |t| recorded_delivery(&t))
    }
}

/// The live-delivery consent recorded for a client's installation, read once here: `off` when
/// nothing is recorded, and a record that names no policy this build knows grants nothing.
pub fn recorded_delivery(target: &Target) -> acc_store::LivePolicy {
    read_record(target)
        .ok()
        .flatten()
        .map_or(acc_store::LivePolicy::Off, |r| policy_of(&r.delivery))
}

/// A recorded consent as this build reads it (an unknown or empty value grants nothing).
fn policy_of(recorded: &str) -> acc_store::LivePolicy {
    acc_store::LivePolicy::parse(recorded).unwrap_or(acc_store::LivePolicy::Off)
}

/// The MCP registration an installation made: its name, pinned participant if any, and
/// whether the user chose to trust it (Gemini CLI).
pub type RecordedMcp = (String, Option<String>, bool);

/// What `doctor --repair` reinstalls: the recorded consent and MCP registration. `None` when
/// nothing is recorded.
pub fn recorded_options(target: &Target) -> Option<(acc_store::LivePolicy, Option<RecordedMcp>)> {
    let record = read_record(target).ok().flatten()?;
    let record = if record.state == RecordState::Pending {
        *record.replaces?
    } else {
        record
    };
    Some((
        policy_of(&record.delivery),
        record.mcp.map(|m| (m.name, m.participant, m.trusted)),
    ))
}

/// Whether an interrupted installation is recorded (doctor reports it; its repair rolls back).
pub fn interrupted(target: &Target) -> bool {
    read_record(target)
        .ok()
        .flatten()
        .is_some_and(|r| r.state == RecordState::Pending)
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

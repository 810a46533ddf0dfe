//! `acc install` / `acc uninstall`: ACC's hooks in a client's own configuration.
//!
//! Owns: writing hook entries with absolute command paths into Claude Code's
//! `~/.claude/settings.json` or Codex's `$CODEX_HOME/hooks.json` (with Codex's trust records
//! for exactly those hooks), the installation record (original bytes, a hash of every byte
//! written, the user's live-delivery consent), and undoing it. Must not: edit a file it cannot
//! parse, overwrite what the user changed since, or store consent in the workspace config.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::error::{AccError, AccResult, ErrorCode};
use crate::hooks::Client;

/// Live-delivery consents.
pub const DELIVERY: &[&str] = &["off", "actionable", "all"];
const MCP_MARKER: &str =
    "# acc-mcp, registered by `acc install --mcp`; `acc uninstall` removes it.";
const TRUST_MARKER: &str =
    "# Trust for the hooks `acc install --client codex` wrote; `acc uninstall` removes it.";

fn sha256(bytes: &[u8]) -> String {
    crate::ids::hex(&Sha256::digest(bytes))
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
        })
    }

    /// Where the client keeps its MCP server registrations: Claude Code's `.claude.json`
    /// (in `CLAUDE_CONFIG_DIR` when set and no `--home`), Codex's `config.toml`.
    pub fn mcp_file(&self) -> PathBuf {
        match (&self.trust_file, self.client) {
            (Some(config), _) => config.clone(),
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
        }
    }

    /// The installation record, in the data home (never in a workspace).
    pub fn record_path(&self) -> AccResult<PathBuf> {
        let key = sha256(self.hooks_file.to_string_lossy().as_bytes());
        Ok(crate::workspace::data_base()?
            .join("acc")
            .join("installations")
            .join(format!("{}-{}.json", self.client.as_str(), &key[..12])))
    }
}

/// The hook events installed per client, with their tool matchers.
pub fn events(client: Client) -> &'static [(&'static str, Option<&'static str>)] {
    match client {
        Client::ClaudeCode => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            ("PreToolUse", Some("Write|Edit|MultiEdit|Bash")),
            ("Stop", None),
            ("SessionEnd", None),
        ],
        Client::Codex => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            ("PreToolUse", Some("apply_patch|shell")),
            ("Stop", None),
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
            let mut group = Map::new();
            if let Some(matcher) = matcher {
                group.insert("matcher".into(), Value::from(*matcher));
            }
            group.insert(
                "hooks".into(),
                json!([{ "type": "command", "command": format!("{} hook {} {event}", quote(&acc.to_string_lossy()), client.as_str()), "timeout": 5 }]),
            );
            (*event, Value::Object(group))
        })
        .collect()
}

fn parse_settings(path: &Path, bytes: Option<&[u8]>) -> AccResult<Map<String, Value>> {
    match bytes {
        None => Ok(Map::new()),
        Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(Map::new()),
        Some(bytes) => match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(data_error(format!(
                "{} is not a json object; acc will not edit it (fix it, then install again)",
                path.display()
            ))),
        },
    }
}

/// Add the groups to a settings object; returns whether anything changed.
fn add_groups(settings: &mut Map<String, Value>, groups: &[(&str, Value)]) -> AccResult<bool> {
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(data_error("`hooks` in the settings is not an object"));
    };
    let mut changed = false;
    for (event, group) in groups {
        let list = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            return Err(data_error(format!(
                "`hooks.{event}` in the settings is not an array"
            )));
        };
        if !list.contains(group) {
            list.push(group.clone());
            changed = true;
        }
    }
    Ok(changed)
}

/// Remove exactly the groups ACC added (and containers left empty by that).
fn remove_groups(settings: &mut Map<String, Value>, groups: &[(&str, Value)]) {
    let Some(Value::Object(hooks)) = settings.get_mut("hooks") else {
        return;
    };
    for (event, group) in groups {
        if let Some(Value::Array(list)) = hooks.get_mut(*event) {
            list.retain(|g| g != group);
            if list.is_empty() {
                hooks.remove(*event);
            }
        }
    }
    if hooks.is_empty() {
        settings.remove("hooks");
    }
}

fn render(settings: &Map<String, Value>) -> Vec<u8> {
    let mut text =
        serde_json::to_string_pretty(&Value::Object(settings.clone())).unwrap_or_default();
    text.push('\n');
    text.into_bytes()
}

fn write_file(path: &Path, bytes: &[u8]) -> AccResult<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temp = path.with_extension(format!("acc-{}.tmp", std::process::id()));
    {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path)?;
    Ok(())
}

/// One file the installation changed: its original bytes and the hash of what was written.
fn file_record(path: &Path, original: Option<&[u8]>, written: &[u8], added: Option<&str>) -> Value {
    json!({
        "path": path.to_string_lossy(),
        "original": original.map(|b| STANDARD.encode(b)),
        "writtenSha256": sha256(written),
        "added": added,
    })
}

/// The plan (and, unless `dry_run`, the result) of an installation.
#[derive(Debug, Clone)]
pub struct Plan {
    /// One line per step.
    pub steps: Vec<String>,
    /// Whether anything was or would be changed.
    pub changes: bool,
}

/// Find the `codex` executable on PATH.
fn codex_executable() -> AccResult<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("codex"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| data_error("codex is not on PATH; Codex runs only hooks it trusts, and acc asks codex for each hook's hash (install codex, then run acc install again)"))
}

/// Ask Codex for the current hash of each hook in `hooks_file`, by its app-server's
/// `hooks/list`: the client's own statement of what it will trust.
fn codex_hook_hashes(
    codex_home: &Path,
    hooks_file: &Path,
    cwd: &Path,
) -> AccResult<Vec<(String, String)>> {
    let mut child = Command::new(codex_executable()?)
        .arg("app-server")
        .env("CODEX_HOME", codex_home)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| data_error(format!("cannot start codex app-server: {e}")))?;
    let result = (|| {
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| data_error("codex app-server has no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| data_error("codex app-server has no stdout"))?;
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut send = |value: Value| -> AccResult<()> {
            writeln!(stdin, "{value}").map_err(|e| data_error(format!("codex app-server: {e}")))
        };
        send(
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "clientInfo": { "name": "acc-install", "version": env!("CARGO_PKG_VERSION") }, "capabilities": { "experimentalApi": true } } }),
        )?;
        send(json!({ "jsonrpc": "2.0", "method": "initialized" }))?;
        send(
            json!({ "jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": { "cwds": [cwd] } }),
        )?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline
                .checked_duration_since(Instant::now())
                .ok_or_else(|| data_error("codex app-server did not list its hooks within 30 s"))?;
            let line = lines
                .recv_timeout(left)
                .map_err(|_| data_error("codex app-server did not list its hooks"))?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") != Some(&Value::from(2)) {
                continue;
            }
            let mut hashes = Vec::new();
            for entry in message
                .pointer("/result/data")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                for hook in entry
                    .get("hooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let source = hook.get("sourcePath").and_then(Value::as_str).unwrap_or("");
                    if Path::new(source) == hooks_file
                        && let (Some(key), Some(hash)) = (
                            hook.get("key").and_then(Value::as_str),
                            hook.get("currentHash").and_then(Value::as_str),
                        )
                    {
                        hashes.push((key.to_string(), hash.to_string()));
                    }
                }
            }
            return Ok(hashes);
        }
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
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

/// Whom a registered `acc-mcp` speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpIdentity<'a> {
    /// No `ACC_MCP_PARTICIPANT`: the hooked session of the client process that starts it.
    Adopt,
    /// `ACC_MCP_PARTICIPANT` set to this participant.
    Participant(&'a str),
}

impl McpIdentity<'_> {
    /// The registration's environment.
    fn env(self) -> Vec<(&'static str, String)> {
        match self {
            Self::Adopt => Vec::new(),
            Self::Participant(p) => vec![("ACC_MCP_PARTICIPANT", p.to_string())],
        }
    }

    fn describe(self) -> String {
        match self {
            Self::Adopt => "speaking for the hooked session of the client that starts it".into(),
            Self::Participant(p) => format!("for participant {p}"),
        }
    }
}

/// Install ACC's hooks for `target`, recording `delivery` consent. With `dry_run`, only plan.
pub fn install(
    target: &Target,
    acc: &Path,
    delivery: &str,
    mcp: Option<McpIdentity<'_>>,
    dry_run: bool,
) -> AccResult<Plan> {
    if !DELIVERY.contains(&delivery) {
        return Err(AccError::usage(format!(
            "--delivery must be off, actionable or all, got `{delivery}`"
        )));
    }
    let acc_mcp = acc.with_file_name("acc-mcp");
    if let Some(identity) = mcp {
        if let McpIdentity::Participant(participant) = identity {
            crate::ids::validate_portable_id("--mcp participant", participant)?;
        }
        if !acc_mcp.is_file() {
            return Err(data_error(format!(
                "{} is missing; it must sit beside acc to be registered",
                acc_mcp.display()
            )));
        }
    }
    let record_path = target.record_path()?;
    let previous: Option<Value> = std::fs::read(&record_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let current = std::fs::read(&target.hooks_file).ok();
    let mut settings = parse_settings(&target.hooks_file, current.as_deref())?;
    let groups = groups(target.client, acc);
    let changed = add_groups(&mut settings, &groups)?;
    let written = render(&settings);
    let mut steps = Vec::new();
    for (event, group) in &groups {
        let command = group
            .pointer("/hooks/0/command")
            .and_then(Value::as_str)
            .unwrap_or("");
        steps.push(format!(
            "{} {}: {event}{} runs {command}",
            if changed { "add to" } else { "already in" },
            target.hooks_file.display(),
            group
                .get("matcher")
                .and_then(Value::as_str)
                .map(|m| format!(" ({m})"))
                .unwrap_or_default()
        ));
    }
    if let Some(trust) = &target.trust_file {
        steps.push(format!(
            "trust exactly these {} hooks in {} (hashes read from `codex app-server` hooks/list after writing)",
            groups.len(),
            trust.display()
        ));
    }
    if let Some(identity) = mcp {
        steps.push(format!(
            "register acc-mcp ({}) as MCP server `acc` {} in {}",
            acc_mcp.display(),
            identity.describe(),
            target.mcp_file().display()
        ));
    }
    steps.push(format!(
        "record live-delivery consent `{delivery}` and the bytes written in {}",
        record_path.display()
    ));
    if dry_run {
        return Ok(Plan {
            steps,
            changes: changed || previous.is_none(),
        });
    }
    // The original bytes are those from before the first installation.
    let original: Option<Vec<u8>> = match &previous {
        Some(record) => record
            .pointer("/files/0/original")
            .and_then(Value::as_str)
            .and_then(|b| STANDARD.decode(b).ok()),
        None => current.clone(),
    };
    if changed {
        write_file(&target.hooks_file, &written)?;
    }
    let mut files = vec![file_record(
        &target.hooks_file,
        original.as_deref(),
        &written,
        None,
    )];
    if let Some(trust) = &target.trust_file {
        let dir = target
            .hooks_file
            .parent()
            .unwrap_or(&target.home)
            .to_path_buf();
        let hashes = codex_hook_hashes(&dir, &target.hooks_file, &target.home)?;
        let mut block = format!("\n{TRUST_MARKER}\n");
        for (index, (event, _)) in groups.iter().enumerate() {
            let position = settings
                .get("hooks")
                .and_then(|h| h.get(*event))
                .and_then(Value::as_array)
                .and_then(|list| list.iter().position(|g| g == &groups[index].1))
                .unwrap_or(0);
            let key = format!(
                "{}:{}:{position}:0",
                target.hooks_file.display(),
                snake(event)
            );
            let Some((_, hash)) = hashes.iter().find(|(k, _)| *k == key) else {
                return Err(data_error(format!(
                    "codex does not list the hook {key}; nothing was trusted"
                )));
            };
            block.push_str(&format!(
                "[hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n"
            ));
        }
        let trust_original = match &previous {
            Some(record) => record
                .pointer("/files/1/original")
                .and_then(Value::as_str)
                .and_then(|b| STANDARD.decode(b).ok()),
            None => std::fs::read(trust).ok(),
        };
        let mut trust_bytes = std::fs::read(trust).unwrap_or_default();
        // Replace an earlier trust block of ours, then append the current one.
        if let Some(prior) = previous
            .as_ref()
            .and_then(|r| r.pointer("/files/1/added"))
            .and_then(Value::as_str)
        {
            let text = String::from_utf8_lossy(&trust_bytes).replacen(prior, "", 1);
            trust_bytes = text.into_bytes();
        }
        if let Some(identity) = mcp {
            block.push_str(&format!(
                "{MCP_MARKER}\n[mcp_servers.acc]\ncommand = {}\n",
                toml_string(&acc_mcp.to_string_lossy())
            ));
            if let McpIdentity::Participant(participant) = identity {
                block.push_str(&format!(
                    "env = {{ ACC_MCP_PARTICIPANT = {} }}\n",
                    toml_string(participant)
                ));
            }
        }
        trust_bytes.extend_from_slice(block.as_bytes());
        write_file(trust, &trust_bytes)?;
        files.push(file_record(
            trust,
            trust_original.as_deref(),
            &trust_bytes,
            Some(&block),
        ));
    }
    if let (Some(identity), Client::ClaudeCode) = (mcp, target.client) {
        let path = target.mcp_file();
        let previous_original = previous
            .as_ref()
            .and_then(|r| r.get("files").and_then(Value::as_array))
            .and_then(|files| files.iter().find(|f| f.get("mcpEntry").is_some()))
            .map(|f| {
                f.get("original")
                    .and_then(Value::as_str)
                    .and_then(|b| STANDARD.decode(b).ok())
            });
        let current = std::fs::read(&path).ok();
        let original = match previous_original {
            Some(original) => original,
            None => current.clone(),
        };
        let mut config = parse_settings(&path, current.as_deref())?;
        let env: Map<String, Value> = identity
            .env()
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect();
        let entry = json!({ "type": "stdio", "command": acc_mcp.to_string_lossy(), "args": [], "env": env });
        let servers = config
            .entry("mcpServers")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(servers) = servers else {
            return Err(data_error(format!(
                "`mcpServers` in {} is not an object",
                path.display()
            )));
        };
        servers.insert("acc".into(), entry.clone());
        let written = render(&config);
        write_file(&path, &written)?;
        let mut record = file_record(&path, original.as_deref(), &written, None);
        if let Value::Object(map) = &mut record {
            map.insert("mcpEntry".into(), entry);
        }
        files.push(record);
    }
    let record = json!({
        "client": target.client.as_str(),
        "home": target.home.to_string_lossy(),
        "acc": acc.to_string_lossy(),
        "delivery": delivery,
        "events": events(target.client).iter().map(|(e, _)| *e).collect::<Vec<_>>(),
        "files": files,
        "installedAt": crate::clock::format_timestamp(crate::clock::Clock::now_ms(&crate::clock::SystemClock::default())),
    });
    write_private(
        &record_path,
        &render(record.as_object().unwrap_or(&Map::new())),
    )?;
    Ok(Plan {
        steps,
        changes: true,
    })
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

/// Undo an installation: a file still exactly as written is restored to its original bytes
/// (or removed if it did not exist); a file the user changed since keeps those changes and
/// loses only ACC's entries.
pub fn uninstall(target: &Target, dry_run: bool) -> AccResult<Plan> {
    let record_path = target.record_path()?;
    let Ok(bytes) = std::fs::read(&record_path) else {
        return Ok(Plan {
            steps: vec![format!(
                "nothing to undo: no installation recorded for {}",
                target.hooks_file.display()
            )],
            changes: false,
        });
    };
    let record: Value = serde_json::from_slice(&bytes)
        .map_err(|e| data_error(format!("{}: {e}", record_path.display())))?;
    let acc = PathBuf::from(record.get("acc").and_then(Value::as_str).unwrap_or(""));
    let groups = groups(target.client, &acc);
    let mut steps = Vec::new();
    let mut actions: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    for file in record
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let path = PathBuf::from(file.get("path").and_then(Value::as_str).unwrap_or(""));
        let original = file
            .get("original")
            .and_then(Value::as_str)
            .and_then(|b| STANDARD.decode(b).ok());
        let written = file
            .get("writtenSha256")
            .and_then(Value::as_str)
            .unwrap_or("");
        let current = std::fs::read(&path).ok();
        match current {
            Some(current) if sha256(&current) == written => {
                steps.push(match &original {
                    Some(_) => format!(
                        "restore {} to its bytes from before acc install",
                        path.display()
                    ),
                    None => format!("remove {} (acc created it)", path.display()),
                });
                actions.push((path, original));
            }
            Some(current) => {
                let kept = if let Some(added) = file.get("added").and_then(Value::as_str) {
                    String::from_utf8_lossy(&current)
                        .replacen(added, "", 1)
                        .into_bytes()
                } else if let Some(entry) = file.get("mcpEntry") {
                    let mut config = parse_settings(&path, Some(&current))?;
                    if let Some(Value::Object(servers)) = config.get_mut("mcpServers") {
                        if servers.get("acc") == Some(entry) {
                            servers.remove("acc");
                        }
                        if servers.is_empty() {
                            config.remove("mcpServers");
                        }
                    }
                    render(&config)
                } else {
                    let mut settings = parse_settings(&path, Some(&current))?;
                    remove_groups(&mut settings, &groups);
                    render(&settings)
                };
                steps.push(format!(
                    "remove only acc's entries from {} (it changed since; your changes stay)",
                    path.display()
                ));
                actions.push((path, Some(kept)));
            }
            None => steps.push(format!("{} is gone already", path.display())),
        }
    }
    steps.push(format!(
        "forget the installation record {}",
        record_path.display()
    ));
    if !dry_run {
        for (path, bytes) in actions {
            match bytes {
                Some(bytes) => write_file(&path, &bytes)?,
                None => std::fs::remove_file(&path)?,
            }
        }
        std::fs::remove_file(&record_path)?;
    }
    Ok(Plan {
        steps,
        changes: true,
    })
}

/// The live-delivery consent recorded for a client's installation, if any (for hooks and
/// doctor); `off` when nothing is recorded.
pub fn recorded_delivery(target: &Target) -> String {
    target
        .record_path()
        .ok()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|r| {
            r.get("delivery")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| "off".into())
}

fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

//! `acc doctor`'s MCP checks: every `acc-mcp` registered in Claude Code (user `~/.claude.json`,
//! its per-project entries for this workspace, and the project's `.mcp.json`) and in Codex
//! (`config.toml` `[mcp_servers]`): does its command exist, is it this build's, does it start
//! and list its tools within the probe timeout, and is every input schema one the clients pass
//! to their models. Read-only: the probe is a handshake and `tools/list`, which create nothing.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Check, Level, check, probe_timeout};
use crate::Target;
use acc_clients::Client;

/// One registration of an MCP server that is ACC's (named `acc`, or whose command is an
/// `acc-mcp`).
#[derive(Debug)]
struct Registration {
    /// Where it is written, for the report: `~/.claude.json (user)` and the like.
    place: String,
    name: String,
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

fn is_accs(name: &str, command: &str) -> bool {
    name == "acc"
        || Path::new(command)
            .file_name()
            .is_some_and(|f| f == "acc-mcp")
}

/// The ACC servers in a JSON `mcpServers` object, or in OpenCode's `mcp` (where `command` is
/// the program and its arguments in one list, and `environment` the variables).
fn from_json_servers(servers: Option<&Value>, place: &str, out: &mut Vec<Registration>) {
    let Some(servers) = servers.and_then(Value::as_object) else {
        return;
    };
    for (name, entry) in servers {
        let mut entry = entry.clone();
        if let Some(Value::Array(words)) = entry.get("command").cloned() {
            entry["command"] = words.first().cloned().unwrap_or(Value::Null);
            entry["args"] = Value::Array(words.iter().skip(1).cloned().collect());
            entry["env"] = entry.get("environment").cloned().unwrap_or(Value::Null);
        }
        let command = entry
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !is_accs(name, command) {
            continue;
        }
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect()
        };
        let env = entry
            .get("env")
            .and_then(Value::as_object)
            .map(|env| {
                env.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        out.push(Registration {
            place: place.to_string(),
            name: name.clone(),
            command: command.to_string(),
            args: strings(entry.get("args")),
            env,
        });
    }
}

/// A client's JSON file as the client reads it (`install::read_client_json`).
fn read_json(target: &Target, path: &Path) -> Option<Map<String, Value>> {
    match crate::read_client_json(target, path)? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn claude_registrations(target: &Target, workspace_root: &Path) -> Vec<Registration> {
    let mut found = Vec::new();
    let state_file = target.mcp_file();
    if let Some(state) = read_json(target, &state_file) {
        let place = format!("{} (user)", state_file.display());
        from_json_servers(state.get("mcpServers"), &place, &mut found);
        // `claude mcp add` without a scope writes a local entry under the project's path.
        let project = workspace_root.to_string_lossy();
        let local = state
            .get("projects")
            .and_then(|p| p.get(project.as_ref()))
            .and_then(|p| p.get("mcpServers"));
        let place = format!("{} (local, {project})", state_file.display());
        from_json_servers(local, &place, &mut found);
    }
    let project_file = workspace_root.join(".mcp.json");
    if let Some(project) = read_json(target, &project_file) {
        let place = format!("{} (project)", project_file.display());
        from_json_servers(project.get("mcpServers"), &place, &mut found);
    }
    found
}

/// Gemini CLI's or Qwen Code's `mcpServers` in its `settings.json`, Kimi Code's in its
/// `mcp.json`, or OpenCode's `mcp` in its `opencode.json` (user scope).
fn settings_registrations(target: &Target) -> Vec<Registration> {
    let mut found = Vec::new();
    let settings = target.mcp_file();
    let key = if target.client == Client::OpenCode {
        crate::opencode::SERVERS_KEY
    } else {
        "mcpServers"
    };
    if let Some(state) = read_json(target, &settings) {
        let place = format!("{} (user)", settings.display());
        from_json_servers(state.get(key), &place, &mut found);
    }
    found
}

fn codex_registrations(target: &Target) -> Vec<Registration> {
    let mut found = Vec::new();
    let config = target.mcp_file();
    // The same entry shape as JSON's `mcpServers` (command, args, env), read the same way.
    let servers = std::fs::read_to_string(&config)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|table| table.get("mcp_servers").cloned())
        .and_then(|servers| serde_json::to_value(servers).ok());
    from_json_servers(servers.as_ref(), &config.display().to_string(), &mut found);
    found
}

/// The executable a registration's command names (a bare name is looked up on `PATH`).
fn resolve(command: &str) -> Option<PathBuf> {
    let path = Path::new(command);
    if path.is_absolute() {
        return path.is_file().then(|| path.to_path_buf());
    }
    acc_clients::find_on_path(command)
}

/// Whether `exe` is this build's `acc-mcp` (the one beside this `acc`, or a byte-identical copy).
fn same_build(exe: &Path) -> Result<(), String> {
    let ours = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name("acc-mcp");
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    if canonical(exe).is_some() && canonical(exe) == canonical(&ours) {
        return Ok(());
    }
    match (
        acc_clients::file_sha256(exe),
        acc_clients::file_sha256(&ours),
    ) {
        (Some(a), Some(b)) if a == b => Ok(()),
        _ => Err(format!(
            "{} is not this build's acc-mcp ({})",
            exe.display(),
            ours.display()
        )),
    }
}

/// Start the server as the client would, initialise it and list its tools; the tool count on
/// success, else what went wrong.
fn probe(exe: &Path, registration: &Registration, cwd: &Path) -> Result<usize, String> {
    let mut command = std::process::Command::new(exe);
    command.args(&registration.args).current_dir(cwd);
    for (key, value) in &registration.env {
        command.env(key, value);
    }
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"acc-doctor","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n"
    );
    let timeout = probe_timeout();
    let output =
        acc_clients::run_bounded_with_input(command, input.as_bytes(), timeout).map_err(|why| {
            match why {
                acc_clients::Bounded::NotStarted => "it does not start".to_string(),
                acc_clients::Bounded::TimedOut => {
                    format!("it did not list its tools within {timeout:?} (ACC_PROBE_TIMEOUT_MS)")
                }
            }
        })?;
    let listed = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|answer| answer["id"] == 2)
        .ok_or_else(|| {
            let stderr = String::from_utf8_lossy(&output.stderr);
            format!(
                "it answered no tools/list (exit {:?}): {}",
                output.status.code(),
                stderr.lines().next().unwrap_or("no message")
            )
        })?;
    let tools = listed["result"]["tools"]
        .as_array()
        .ok_or_else(|| format!("tools/list failed: {}", listed["error"]))?;
    for tool in tools {
        let name = tool["name"].as_str().unwrap_or("?");
        acc_mcp::schema::check_publishable(&tool["inputSchema"]).map_err(|problem| {
            format!("the input schema of {name} has {problem}: Claude Code would drop the tool")
        })?;
    }
    // Exactly this build's tools, by name and in order.
    let listed: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("?"))
        .collect();
    let expected = acc_mcp::tools::names();
    if listed != expected {
        return Err(format!(
            "it lists the tools {}, not this build's {}",
            listed.join(", "),
            expected.join(", ")
        ));
    }
    Ok(tools.len())
}

fn judge(client: Client, registration: &Registration, cwd: &Path) -> Check {
    let name = format!("mcp {} `{}`", client.as_str(), registration.name);
    let reinstall = Some(format!("acc install --client {} --mcp", client.as_str()));
    let Some(exe) = resolve(&registration.command) else {
        return check(
            name,
            Level::Error,
            format!(
                "in {}: the command `{}` does not exist",
                registration.place, registration.command
            ),
            reinstall,
        );
    };
    // Another build is worth a warning; a server the client cannot use is an error. Both are
    // said when both hold.
    let build = same_build(&exe).err();
    let (level, detail) = match (probe(&exe, registration, cwd), build) {
        (Ok(count), None) => (
            Level::Ok,
            format!(
                "{} starts and offers {count} tools, every schema usable by the models",
                exe.display()
            ),
        ),
        (Ok(count), Some(build)) => (
            Level::Warn,
            format!("{build}; it starts and offers {count} usable tools"),
        ),
        (Err(why), None) => (Level::Error, why),
        (Err(why), Some(build)) => (Level::Error, format!("{why}; {build}")),
    };
    let fix = (level != Level::Ok).then_some(reinstall).flatten();
    // An acc-mcp runs adapter code in `acc adapter-host` helpers: the `acc` beside it.
    let named_acc_mcp = exe.file_name().is_some_and(|n| n == "acc-mcp");
    let (level, detail, fix) = match acc_beside(&exe) {
        Err(missing) if named_acc_mcp => (
            level.max(Level::Warn),
            format!("{detail}; {missing}"),
            fix.or_else(|| {
                Some("scripts/install.sh (it installs acc and acc-mcp side by side)".to_string())
            }),
        ),
        _ => (level, detail, fix),
    };
    check(
        name,
        level,
        format!("in {}: {detail}", registration.place),
        fix,
    )
}

/// Whether an executable `acc` sits beside `acc-mcp` (which runs every adapter call in an
/// `acc adapter-host` helper, the `acc` beside it); else what is missing and what it costs.
fn acc_beside(acc_mcp: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let real = std::fs::canonicalize(acc_mcp).unwrap_or_else(|_| acc_mcp.to_path_buf());
    let acc = real.with_file_name("acc");
    match std::fs::metadata(&acc) {
        Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => Ok(()),
        _ => Err(format!(
            "{} is missing beside acc-mcp: acc-mcp runs adapters through it, so this server refuses every live delivery and its messages wait for next-turn",
            acc.display()
        )),
    }
}

/// The MCP checks for both clients.
pub fn checks(home: Option<&Path>, workspace_root: &Path, cwd: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    for client in Client::ALL {
        let Ok(target) = Target::new(client, home) else {
            continue;
        };
        let found = match client {
            Client::ClaudeCode => claude_registrations(&target, workspace_root),
            Client::Codex => codex_registrations(&target),
            Client::Gemini | Client::Qwen | Client::OpenCode | Client::Kimi => {
                settings_registrations(&target)
            }
        };
        if found.is_empty() {
            checks.push(check(
                format!("mcp {}", client.as_str()),
                Level::Warn,
                "no acc-mcp registered",
                Some(format!("acc install --client {} --mcp", client.as_str())),
            ));
        }
        checks.extend(found.iter().map(|r| judge(client, r, cwd)));
    }
    checks
}

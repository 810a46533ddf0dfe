//! Codex runs only the hooks it trusts, and it trusts a hook whose `config.toml` record holds
//! the hash Codex itself computes. ACC asks Codex for those hashes before it writes anything:
//! the planned `hooks.json` is staged in a throwaway `CODEX_HOME`, and that home's
//! `codex app-server` answers `hooks/list`. A hook's hash does not depend on where its file
//! lives (observed with Codex 0.169.0), so the staged answer holds for the user's file, and the
//! user's own `CODEX_HOME` is not touched (no state files, no runtime directory).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use acc_core::error::AccResult;

use super::data_error;

/// How long `codex app-server` may take to list its hooks.
const LIST_BUDGET: Duration = Duration::from_secs(30);

/// The `codex` executable on PATH, or the refusal that names the way out.
pub fn codex_executable() -> AccResult<PathBuf> {
    acc_clients::find_on_path("codex").ok_or_else(|| data_error("codex is not on PATH; Codex runs only hooks it trusts, and acc asks codex for each hook's hash. Install codex (or put it on PATH), then run acc install again: nothing was changed"))
}

/// What Codex said of the staged hooks: the trust hash of every hook, by the part of its trust
/// key after the file's path (`user_prompt_submit:1:0`), and the errors and warnings it
/// reported (a hooks file Codex refuses lists no hooks, only why).
#[derive(Debug, Default)]
pub struct Listed {
    /// (key suffix, hash).
    pub hashes: Vec<(String, String)>,
    /// Codex's own words about problems in the file.
    pub problems: Vec<String>,
}

/// Ask Codex for the trust hashes of the hooks in `hooks_text` (a `hooks.json`).
pub fn hashes(codex: &Path, hooks_text: &str) -> AccResult<Listed> {
    let staged = tempfile::tempdir()
        .map_err(|e| data_error(format!("cannot stage the hooks for codex: {e}")))?;
    let staged_home = staged.path().to_path_buf();
    let hooks_file = staged_home.join("hooks.json");
    std::fs::write(&hooks_file, hooks_text)
        .map_err(|e| data_error(format!("cannot stage the hooks for codex: {e}")))?;
    let mut child = Command::new(codex)
        .arg("app-server")
        .env("CODEX_HOME", &staged_home)
        .current_dir(&staged_home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| data_error(format!("cannot start codex app-server: {e}")))?;
    let result = list(&mut child, &staged_home, &hooks_file);
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn list(child: &mut std::process::Child, cwd: &Path, hooks_file: &Path) -> AccResult<Listed> {
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
    let deadline = Instant::now() + LIST_BUDGET;
    let prefix = format!("{}:", hooks_file.display());
    loop {
        let left = deadline
            .checked_duration_since(Instant::now())
            .ok_or_else(|| {
                data_error(
                    "codex app-server did not list its hooks within 30 s; nothing was changed",
                )
            })?;
        let line = lines.recv_timeout(left).map_err(|_| {
            data_error("codex app-server did not list its hooks; nothing was changed")
        })?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message.get("id") != Some(&Value::from(2)) {
            continue;
        }
        if let Some(error) = message.get("error") {
            return Err(data_error(format!(
                "codex app-server refused hooks/list ({error}); nothing was changed"
            )));
        }
        let mut listed = Listed::default();
        for entry in message
            .pointer("/result/data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for key in ["errors", "warnings"] {
                for problem in entry
                    .get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    listed.problems.push(match problem.as_str() {
                        Some(text) => text.to_string(),
                        None => problem.to_string(),
                    });
                }
            }
        }
        for hook in message
            .pointer("/result/data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|entry| {
                entry
                    .get("hooks")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
        {
            let key = hook.get("key").and_then(Value::as_str).unwrap_or("");
            if let (Some(suffix), Some(hash)) = (
                key.strip_prefix(&prefix),
                hook.get("currentHash").and_then(Value::as_str),
            ) {
                listed.hashes.push((suffix.to_string(), hash.to_string()));
            }
        }
        return Ok(listed);
    }
}

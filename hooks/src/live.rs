//! Live-delivery binding from a hook: the session's endpoint as its client's hook environment
//! names it, bound to the client's first-party live adapter when the user consented at install
//! time.

use std::path::PathBuf;

use serde_json::Value;

use acc_clients::Client;

use crate::{Context, one_line, text};

/// Whether this hook's environment could name a live endpoint at all (Claude Code's or Qwen
/// Code's messaging socket, ACC's OpenCode plugin's wake socket, a Codex daemon's control folder), checked from the environment and one `stat`
/// before anything heavier: most hooks of most sessions have none.
fn live_endpoint_named(client: Client) -> bool {
    match client {
        Client::ClaudeCode => std::env::var_os("CLAUDE_CODE_MESSAGING_SOCKET").is_some(),
        Client::Qwen => std::env::var_os("QWEN_CODE_MESSAGING_SOCKET").is_some(),
        Client::OpenCode => {
            std::env::var_os("ACC_OPENCODE_WAKE_SOCKET").is_some()
                || std::env::var_os("ACC_OPENCODE_WAKE_UNAVAILABLE").is_some()
        }
        Client::Codex => std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))
            .is_some_and(|home| home.join("app-server-control").exists()),
        Client::Gemini | Client::Kimi => false,
    }
}

/// ACC's OpenCode plugin listens for wakes only after its SessionStart answer carries the
/// user's consent to live delivery: `Some(consent)` when this is an OpenCode session whose user
/// consented and whose plugin does not listen yet (no socket and no reason it cannot named).
/// Without consent no socket is ever opened.
pub(crate) fn consent_to_listen(context: &Context) -> Option<&'static str> {
    if context.client != Client::OpenCode
        || std::env::var_os("ACC_OPENCODE_WAKE_SOCKET").is_some()
        || std::env::var_os("ACC_OPENCODE_WAKE_UNAVAILABLE").is_some()
    {
        return None;
    }
    let consent = context.app.delivery.consent().recorded_here(context.client);
    (consent != acc_store::LivePolicy::Off).then(|| consent.as_str())
}

/// A session left unbound at its start (Claude Code had not written its session registry yet,
/// a Codex daemon was not up) is bound at a later turn: while a live endpoint is named and the
/// session has no binding, binding is tried again (a read when it is bound; the consent and the
/// endpoint are checked only when it is not). `Some(why)` when it is still unbound.
pub(crate) fn bind_later(context: &mut Context, payload: &Value) -> Option<String> {
    if !live_endpoint_named(context.client) {
        return None;
    }
    match context.app.core.is_bound(&context.caller) {
        Ok(false) => bind_live(context, payload).err(),
        _ => None,
    }
}

/// Bind the session for live delivery when the user consented at install time: a Claude Code
/// session to `claude-inbox` when the hook environment names its messaging socket and pid, a
/// Qwen Code session to `qwen-inbox` when it names its cross-session socket and token, an
/// OpenCode session to `opencode-plugin` when ACC's plugin names its wake socket, a
/// Codex session to `codex-app-server` when a Codex daemon serves its `CODEX_HOME` (its thread
/// is the hook's session id). Any refusal leaves the session without a binding (durable
/// delivery still works); no daemon at all is not worth a note.
pub(crate) fn bind_live(context: &mut Context, payload: &Value) -> Result<(), String> {
    let consent = context.app.delivery.consent().recorded_here(context.client);
    if consent == acc_store::LivePolicy::Off {
        return Ok(());
    }
    let session_id = text(payload, "session_id").unwrap_or("");
    // No adapter reaches a running Gemini CLI or Kimi Code session: next-turn carries their
    // messages.
    let Some(adapter) = context.client.live_adapter() else {
        return Ok(());
    };
    let endpoint = match context.client {
        Client::Gemini | Client::Kimi => return Ok(()),
        // ACC's OpenCode plugin names the socket it listens on for wakes; the hook runs as a
        // child of the OpenCode process, whose plugin answers on that socket.
        Client::OpenCode => {
            let (Ok(socket), Some(pid)) = (
                std::env::var("ACC_OPENCODE_WAKE_SOCKET"),
                acc_clients::process::client_pid(),
            ) else {
                // The plugin says why its terminal interface could not listen; the user sees
                // this note as OpenCode's warning, so it is one bounded line of plain text.
                if let Some(why) = std::env::var_os("ACC_OPENCODE_WAKE_UNAVAILABLE") {
                    return Err(format!(
                        "ACC's OpenCode plugin could not listen for wakes, so messages wait for your next turn: {}",
                        one_line(&why.to_string_lossy(), 400)
                    ));
                }
                return Err("the hook environment names no wake socket (ACC's OpenCode plugin opens one only in OpenCode's terminal interface)".into());
            };
            acc_core::wire::json(&acc_app::wire::OpenCodePluginEndpoint {
                socket: &socket,
                pid,
                session_id,
            })
        }
        // Qwen Code's terminal interface gives every hook its cross-session socket and the
        // token of the processes it starts; its headless modes open no socket (nothing named).
        Client::Qwen => {
            let (Ok(socket), Ok(token), Some(pid)) = (
                std::env::var("QWEN_CODE_MESSAGING_SOCKET"),
                std::env::var("QWEN_CODE_MESSAGING_TOKEN"),
                acc_clients::process::client_pid(),
            ) else {
                return Err("the hook environment names no messaging socket (Qwen Code opens one only in its terminal interface)".into());
            };
            let qwen_home = std::env::var_os("QWEN_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".qwen")))
                .ok_or("no QWEN_HOME and no HOME")?;
            acc_core::wire::json(&acc_app::wire::QwenInboxEndpoint {
                socket: &socket,
                token: &token,
                pid,
                session_id,
                qwen_home: &qwen_home,
            })
        }
        Client::ClaudeCode => {
            let (Ok(socket), Some(pid)) = (
                std::env::var("CLAUDE_CODE_MESSAGING_SOCKET"),
                std::env::var("CLAUDE_PID")
                    .ok()
                    .and_then(|p| p.parse::<i64>().ok()),
            ) else {
                return Err("the hook environment names no messaging socket".into());
            };
            let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")))
                .ok_or("no CLAUDE_CONFIG_DIR and no HOME")?;
            acc_core::wire::json(&acc_app::wire::ClaudeInboxEndpoint {
                socket: &socket,
                pid,
                session_id,
                config_dir: &config_dir,
            })
        }
        Client::Codex => {
            let codex_home = std::env::var_os("CODEX_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))
                .ok_or("no CODEX_HOME and no HOME")?;
            if !codex_home.join("app-server-control").exists() {
                return Ok(());
            }
            acc_core::wire::json(&acc_app::wire::CodexEndpoint {
                codex_home: &codex_home,
                thread_id: session_id,
                cwd: &context.cwd,
            })
        }
    };
    context
        .app
        .bind(&context.caller, adapter, consent.as_str(), &endpoint)
        .map(|_| ())
        .map_err(|e| e.message)
}

//! One agent, one participant: an `acc-mcp` with no configured participant speaks for the
//! hooked session of the client process that started it.
//!
//! Claude Code's hooks record `CLAUDE_PID` as their session's pid, Codex's and Gemini CLI's
//! hooks the client process above them (every client of `acc_clients::Client::ALL`), and a
//! resumed conversation's hooks record its new process; an MCP server is a child of the same
//! client process. When exactly one
//! open hooked session of the workspace has this server's client pid, the server presents that
//! session's credentials, derived from the data directory's hook secret exactly as the hooks
//! derive them, so a message to the hooked participant is the MCP server's message too.
//! Anything else (no client pid, no such session, several) is answered with the reason, and
//! the server speaks for its default participant.

use std::path::Path;

use acc_core::error::AccResult;
use acc_core::{Caller, Core};

/// What adoption found.
#[derive(Debug)]
pub enum Found {
    /// The hooked session to speak for.
    Session {
        /// Its credentials.
        caller: Caller,
        /// Its participant.
        participant: String,
        /// Why it was chosen.
        reason: String,
    },
    /// None to adopt, and why.
    None(String),
}

/// Whether `harness` is a client whose hooks open sessions an `acc-mcp` can adopt: every client
/// ACC hooks ([`acc_clients::Client::ALL`]).
fn hooked(harness: &str) -> bool {
    acc_clients::Client::parse(harness).is_some()
}

/// Find the hooked session of `client_pid` in the workspace. Reads only.
pub fn find(core: &mut Core, data_dir: &Path, client_pid: Option<i64>) -> AccResult<Found> {
    let Some(pid) = client_pid else {
        return Ok(Found::None(
            "ACC_MCP_PARTICIPANT is not set and the client process that started this server is unknown".into(),
        ));
    };
    let Some(sessions) = core.read(|r| Ok(r.sessions(false)?))? else {
        return Ok(Found::None(format!(
            "ACC_MCP_PARTICIPANT is not set and no hooked session of client pid {pid} is open (the workspace has no store yet)"
        )));
    };
    let mine: Vec<_> = sessions
        .into_iter()
        .filter(|s| {
            s.closed_at.is_none()
                && s.pid == Some(pid)
                && hooked(&s.harness)
                && s.session_key.is_some()
        })
        .collect();
    let session = match mine.as_slice() {
        [one] => one,
        [] => {
            return Ok(Found::None(format!(
                "ACC_MCP_PARTICIPANT is not set and no hooked session of client pid {pid} is open"
            )));
        }
        several => {
            let names: Vec<&str> = several.iter().map(|s| s.participant_id.as_str()).collect();
            return Ok(Found::None(format!(
                "ACC_MCP_PARTICIPANT is not set and client pid {pid} has {} open hooked sessions ({}); set ACC_MCP_PARTICIPANT to choose",
                several.len(),
                names.join(", ")
            )));
        }
    };
    let Some(secret) = acc_app::hook_secret::read(data_dir) else {
        return Ok(Found::None(
            "ACC_MCP_PARTICIPANT is not set and the hook secret is missing".into(),
        ));
    };
    let Some(caller) = core.hooked_credentials(session, &secret) else {
        return Ok(Found::None(format!(
            "ACC_MCP_PARTICIPANT is not set and the hooked session of client pid {pid} was not opened by this data directory's hooks"
        )));
    };
    Ok(Found::Session {
        caller,
        participant: session.participant_id.clone(),
        reason: format!(
            "ACC_MCP_PARTICIPANT is not set; adopted the {} session of client pid {pid}, the process that started this server",
            session.harness
        ),
    })
}

//! The `claude-inbox` adapter: wakes a live Claude Code session through its messaging socket.
//!
//! A wake is one fixed line of ACC text carrying only the message id: no subject, body, sender
//! name or other peer byte crosses. Claude Code runs a turn for it after its current one; the
//! body reaches the model through next-turn (or an exact inbox read) afterwards, so the host
//! records nothing for an accepted wake and the receipt stays queued.
//!
//! The endpoint is verified at every handshake and every wake: the session registry file
//! `<config dir>/sessions/<pid>.json` must name the same pid, the same session id and (by real
//! path) the same socket; the socket must be a socket, not a symlink, owned by this user, with
//! no group or other permission bits; the pid must be alive.

use std::io::Write;
use std::path::Path;
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

    /// One line, written within 2 s; Claude Code answers nothing on the socket.
    fn wake(&self, message_id: &str, _budget: Duration) -> Result<(), &'static str> {
        let mut stream = wake::connect(&self.socket)?;
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        stream
            .write_all(wake_line(message_id).as_bytes())
            .and_then(|()| stream.flush())
            .map_err(|e| wake::io_code(&e))
    }
}

export_adapter!(new);

#[cfg(test)]
mod tests;

//! The `qwen-inbox` adapter: wakes a live Qwen Code session through its cross-session
//! messaging socket.
//!
//! Qwen Code's terminal interface listens on a per-process Unix socket and takes one message
//! per connection: an auth line, then a `user` frame. ACC's SessionStart hook runs as a process
//! of the session, so its environment holds the session's socket (`QWEN_CODE_MESSAGING_SOCKET`)
//! and its own-process token (`QWEN_CODE_MESSAGING_TOKEN`); a frame authenticated with that
//! token is delivered without the review a peer session's message gets, and in an idle session
//! it starts a turn at once (queued after the running turn in a busy one). The frame is one
//! fixed line of ACC text carrying only the message id: no subject, body, sender name or other
//! peer byte crosses; the body reaches the model through next-turn (or an exact inbox read)
//! afterwards, so the host records nothing for an accepted wake and the receipt stays queued.
//! The frame's `msgId` is derived from the message id, so Qwen Code drops a repeated wake.
//!
//! The endpoint is verified at every handshake and every wake: the session registry file
//! `<QWEN_HOME>/sessions/<pid>.json` must name the same pid and session id, a terminal
//! interface (`kind` `tui`: the sessions a daemon hosts refuse inbound messages) and (by real
//! path) the same socket; the socket must be a socket, not a symlink, owned by this user, with
//! no group or other permission bits; the pid must be alive.

use std::io::{Read, Write};
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
pub const CONTRACT_ID: &str = "qwen-code-cross-session-socket-v1";
/// How long a binding lives without a refresh.
pub const LEASE_SECONDS: u64 = 120;
/// The version of Qwen Code's peer frames this adapter writes.
pub const FRAME_VERSION: u64 = 1;
/// How long a wake waits for Qwen Code to take the frame and close the connection.
const EXCHANGE: Duration = Duration::from_secs(2);
/// The longest token taken from a hook's environment (Qwen Code's are 64 hex digits).
const MAX_TOKEN: usize = 256;

/// The endpoint facts a Qwen Code hook reports, kept opaque by the host (the token is a
/// secret: the host never shows an endpoint).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Endpoint {
    /// `QWEN_CODE_MESSAGING_SOCKET` as the hook saw it.
    pub socket: String,
    /// `QWEN_CODE_MESSAGING_TOKEN`: the session's token for the processes it starts.
    pub token: String,
    /// The Qwen Code process (the hook's client process).
    pub pid: i64,
    /// The hook's `session_id`.
    pub session_id: String,
    /// `QWEN_HOME`, or `~/.qwen`.
    pub qwen_home: String,
}

/// The adapter (stateless).
#[derive(Debug, Default)]
pub struct QwenInbox;

/// Build the adapter; it takes no configuration.
pub fn new(_config: &str) -> Result<QwenInbox, AdapterError> {
    Ok(QwenInbox)
}

fn refuse(code: &str, message: impl Into<String>) -> AdapterError {
    AdapterError::new(code, message)
}

fn unavailable(message: &str) -> AdapterError {
    refuse("native_session_unavailable", message)
}

/// Verify the endpoint; returns the client version the registry names.
pub fn verify(endpoint: &Endpoint) -> Result<String, AdapterError> {
    if endpoint.token.is_empty()
        || endpoint.token.len() > MAX_TOKEN
        || !endpoint.token.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(refuse(
            "handshake_failed",
            "the messaging token is empty, too long or not printable ASCII",
        ));
    }
    let registry =
        session_registry(Path::new(&endpoint.qwen_home), endpoint.pid).map_err(|problem| {
            unavailable(match problem {
                RegistryProblem::Missing => "no Qwen Code session registry file for that pid",
                RegistryProblem::NotJson => "the session registry file is not json",
                RegistryProblem::OtherPid => "the session registry names another pid",
            })
        })?;
    let field = |name: &str| registry.get(name).and_then(|v| v.as_str());
    if field("sessionId") != Some(endpoint.session_id.as_str()) {
        return Err(unavailable("the session registry names another session"));
    }
    if field("kind") != Some("tui") {
        return Err(unavailable(
            "the session is not Qwen Code's terminal interface (only it takes messages)",
        ));
    }
    if !pid_alive(endpoint.pid) {
        return Err(unavailable("the Qwen Code process is not running"));
    }
    let socket = Path::new(&endpoint.socket);
    private_socket(socket).map_err(|why| refuse("native_endpoint_unavailable", why))?;
    if !same_file(Path::new(field("ipcPath").unwrap_or("")), socket) {
        return Err(unavailable("the session registry names another socket"));
    }
    field("qwenVersion").map(str::to_string).ok_or_else(|| {
        refuse(
            "version_unavailable",
            "the session registry names no client version",
        )
    })
}

/// The `msgId` of the wake for `message_id`: the same for every wake of one message, within
/// Qwen Code's 64 characters of `[A-Za-z0-9_-]` starting with a letter or digit.
pub fn frame_id(message_id: &str) -> String {
    let mut id = format!("acc-{}", wake_id(message_id));
    id.truncate(64);
    id
}

/// What one wake connection carries: the auth line and the one `user` frame, each a JSON line.
pub fn wake_lines(endpoint: &Endpoint, message_id: &str) -> String {
    let auth =
        serde_json::json!({ "msgV": FRAME_VERSION, "type": "auth", "token": endpoint.token });
    let frame = serde_json::json!({
        "msgV": FRAME_VERSION,
        "msgId": frame_id(message_id),
        "type": "user",
        "fromName": "acc",
        "toSessionId": endpoint.session_id,
        "priority": "next",
        "message": { "role": "user", "content": wake_text(message_id) },
    });
    format!("{auth}\n{frame}\n")
}

/// Read-only probe: `qwen --version` and the executable's fingerprint.
pub fn probe(timeout: Duration) -> ProbeAnswer {
    acc_clients::probe_cli("qwen", CONTRACT_ID, timeout)
}

impl AdapterImpl for QwenInbox {
    fn describe(&self) -> Result<Describe, AdapterError> {
        // Captured on linux-x64 (contracts/qwen) and applied on every platform.
        Ok(wake::describe("qwen-inbox", "qwen", CONTRACT_ID, "0.24.4"))
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
    const SHAPE: &'static str =
        "a qwen-inbox endpoint is {socket, token, pid, sessionId, qwenHome}";

    fn verify(&self) -> Result<String, AdapterError> {
        verify(self)
    }

    /// Write one wake and wait (bounded) for Qwen Code to close the connection, which it does
    /// once it has read the frame.
    fn wake(&self, message_id: &str) -> Result<(), &'static str> {
        let mut stream = wake::connect(&self.socket)?;
        stream
            .set_write_timeout(Some(EXCHANGE))
            .and_then(|()| stream.set_read_timeout(Some(EXCHANGE)))
            .and_then(|()| stream.write_all(wake_lines(self, message_id).as_bytes()))
            .and_then(|()| stream.flush())
            .and_then(|()| stream.shutdown(std::net::Shutdown::Write))
            .map_err(|e| wake::io_code(&e))?;
        // Qwen Code answers nothing on this connection (receipts go to a sender's own socket,
        // which ACC does not open); a bounded read sees it close.
        let mut rest = Vec::new();
        stream
            .take(4096)
            .read_to_end(&mut rest)
            .map(drop)
            .map_err(|e| wake::io_code(&e))
    }
}

export_adapter!(new);

#[cfg(test)]
mod tests;

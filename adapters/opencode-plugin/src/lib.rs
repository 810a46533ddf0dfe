//! The `opencode-plugin` adapter: wakes a live OpenCode session through ACC's own OpenCode
//! plugin.
//!
//! OpenCode serves its plugins' client inside its own process, so no other process can start a
//! turn in one of its sessions; ACC's plugin (`install/src/opencode_plugin.js`) listens on a
//! socket of its own instead, `acc-opencode-<uid>/<pid>.sock` in the temp folder (in `/tmp` when
//! the temp folder's path is too long for a socket's), a socket only
//! this user can reach in a folder only this user can enter, and names it to ACC's hooks
//! (`ACC_OPENCODE_WAKE_SOCKET`). A wake is one JSON request per connection: the session, the
//! message id and ACC's fixed wake line, which the plugin sends into the session as a user
//! message (`promptAsync`) once per message id. That message runs the plugin's `chat.message`
//! hook like a typed one, so the body reaches the model through next-turn in the woken turn's
//! own request; the host records nothing for the wake itself.
//!
//! The endpoint is verified at every handshake and every wake: the socket must be a private
//! socket of this user named after the pid, in a private folder; the pid alive; and the plugin
//! must answer, on that socket, with the same pid, a session it met and the OpenCode version
//! that session records.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use acc_adapter_api::wire::{
    Describe, HandshakeAnswer, HandshakeRequest, OfferAnswer, OfferRequest, ProbeAnswer,
    ProbeRequest,
};
use acc_adapter_api::{AdapterError, AdapterImpl, export_adapter};
use acc_clients::pid_alive;
use acc_clients::wake::{self, WakeEndpoint, private_folder, private_socket, wake_id, wake_text};
use serde::{Deserialize, Serialize};

/// The contract this adapter declares.
pub const CONTRACT_ID: &str = "opencode-plugin-wake-v1";
/// How long a binding lives without a refresh.
pub const LEASE_SECONDS: u64 = 120;
/// How long one exchange with the plugin may take.
const EXCHANGE: Duration = Duration::from_secs(3);
/// The longest answer read from the plugin.
const MAX_ANSWER: u64 = 4096;

/// The endpoint facts ACC's OpenCode plugin reports through its hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Endpoint {
    /// `ACC_OPENCODE_WAKE_SOCKET` as the hook saw it.
    pub socket: String,
    /// The OpenCode process (the hook's client process).
    pub pid: i64,
    /// The OpenCode session (the hook's `session_id`).
    pub session_id: String,
}

/// One request to the plugin.
#[derive(Debug, Clone, Serialize)]
#[serde(
    rename_all = "camelCase",
    tag = "type",
    rename_all_fields = "camelCase"
)]
pub enum Request<'a> {
    /// Who is there: the plugin's pid and the session's version.
    Hello { session_id: &'a str },
    /// Send `text` into the session once for `message_id`.
    Wake {
        session_id: &'a str,
        message_id: &'a str,
        text: &'a str,
    },
}

/// The plugin's answer to a [`Request`] (what else it says, such as `duplicate`, is not read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Whether the request was taken.
    pub ok: bool,
    /// Why not (`unknown_session`, `bad_request`, `recipient_unavailable`).
    #[serde(default)]
    pub code: Option<String>,
    /// The plugin's process (a hello's answer).
    #[serde(default)]
    pub pid: Option<i64>,
    /// The OpenCode version the session records (a hello's answer).
    #[serde(default)]
    pub version: Option<String>,
}

/// The adapter (stateless).
#[derive(Debug, Default)]
pub struct OpenCodePlugin;

/// Build the adapter; it takes no configuration.
pub fn new(_config: &str) -> Result<OpenCodePlugin, AdapterError> {
    Ok(OpenCodePlugin)
}

fn refuse(code: &str, message: impl Into<String>) -> AdapterError {
    AdapterError::new(code, message)
}

/// The socket's own checks, before anything is written to it: a private socket of this user,
/// named `<pid>.sock`, in a folder of this user's that no one else may enter.
pub fn check_socket(endpoint: &Endpoint) -> Result<(), AdapterError> {
    let socket = Path::new(&endpoint.socket);
    private_socket(socket).map_err(|why| refuse("native_endpoint_unavailable", why))?;
    if socket.file_name().and_then(|n| n.to_str()) != Some(&format!("{}.sock", endpoint.pid)) {
        return Err(refuse(
            "native_endpoint_unavailable",
            "the wake socket is not named after the OpenCode process",
        ));
    }
    let private = socket.parent().is_some_and(private_folder);
    if !private {
        return Err(refuse(
            "native_endpoint_unavailable",
            "the wake socket's folder is not a private folder of this user",
        ));
    }
    Ok(())
}

/// One request and its answer over the socket, bounded; `Err` is an offer's refusal code.
pub fn exchange(socket: &str, request: &Request<'_>) -> Result<Answer, &'static str> {
    let line = serde_json::to_string(request).map_err(|_| "transport_error")?;
    let mut stream = wake::connect(socket)?;
    stream
        .set_write_timeout(Some(EXCHANGE))
        .and_then(|()| stream.set_read_timeout(Some(EXCHANGE)))
        .and_then(|()| stream.write_all(format!("{line}\n").as_bytes()))
        .map_err(|e| wake::io_code(&e))?;
    let mut text = String::new();
    stream
        .take(MAX_ANSWER)
        .read_to_string(&mut text)
        .map_err(|e| wake::io_code(&e))?;
    serde_json::from_str(text.trim()).map_err(|_| "transport_error")
}

/// Verify the endpoint; returns the OpenCode version the session records.
pub fn verify(endpoint: &Endpoint) -> Result<String, AdapterError> {
    if !pid_alive(endpoint.pid) {
        return Err(refuse(
            "native_session_unavailable",
            "the OpenCode process is not running",
        ));
    }
    check_socket(endpoint)?;
    let hello = exchange(
        &endpoint.socket,
        &Request::Hello {
            session_id: &endpoint.session_id,
        },
    )
    .map_err(|code| {
        refuse(
            "native_session_unavailable",
            format!("ACC's OpenCode plugin did not answer on the wake socket ({code})"),
        )
    })?;
    if !hello.ok {
        return Err(refuse(
            "native_session_unavailable",
            format!(
                "ACC's OpenCode plugin refused the session ({})",
                hello.code.as_deref().unwrap_or("no reason given")
            ),
        ));
    }
    if hello.pid != Some(endpoint.pid) {
        return Err(refuse(
            "native_session_unavailable",
            "the wake socket is another OpenCode process's",
        ));
    }
    hello.version.ok_or_else(|| {
        refuse(
            "version_unavailable",
            "the OpenCode session records no version",
        )
    })
}

/// Read-only probe: `opencode --version` and the executable's fingerprint.
pub fn probe(timeout: Duration) -> ProbeAnswer {
    acc_clients::probe_cli("opencode", CONTRACT_ID, timeout)
}

impl AdapterImpl for OpenCodePlugin {
    fn describe(&self) -> Result<Describe, AdapterError> {
        // Captured on linux-x64 (contracts/opencode) and applied on every platform.
        Ok(wake::describe(
            "opencode-plugin",
            "opencode",
            CONTRACT_ID,
            "1.18.33",
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
    const SHAPE: &'static str = "an opencode-plugin endpoint is {socket, pid, sessionId}";

    fn verify(&self) -> Result<String, AdapterError> {
        verify(self)
    }

    /// Ask the plugin to send the wake line into the session once for this message id.
    fn wake(&self, message_id: &str, _budget: Duration) -> Result<wake::Taken, &'static str> {
        let id = wake_id(message_id);
        let request = Request::Wake {
            session_id: &self.session_id,
            message_id: &id,
            text: &wake_text(&id),
        };
        match exchange(&self.socket, &request)? {
            answer if answer.ok => Ok(wake::Taken::Delivered),
            _ => Err("recipient_unavailable"),
        }
    }
}

export_adapter!(new);

#[cfg(test)]
mod tests;

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
//! A wake is accepted only when Qwen Code says it delivered the frame. Closing the connection
//! says only that it read it: its admission limits (about 30 wakes a minute) or a user's
//! `crossSessionInbound` setting may still drop or hold it. So the frame names a reply socket
//! (`from`, in a private folder made for this one wake) and a token only this wake knows
//! (`replyToken`); Qwen Code connects there with a `delivery_status` frame, and anything but
//! `delivered` (or no answer in time) refuses the offer with a safe code: the receipt stays
//! queued and the body waits for the session's next turn.
//!
//! The endpoint is verified at every handshake and every wake: the session registry file
//! `<QWEN_HOME>/sessions/<pid>.json` must name the same pid and session id, a terminal
//! interface (`kind` `tui`: the sessions a daemon hosts refuse inbound messages) and (by real
//! path) the same socket; the socket must be a socket, not a symlink, owned by this user, with
//! no group or other permission bits; the pid must be alive.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
/// How long a wake's write may block (Qwen Code reads frames as they come).
const EXCHANGE: Duration = Duration::from_secs(2);
/// How long a wake waits, from its start, for Qwen Code's delivery receipt (sent as soon as it
/// admits or drops the frame, which a session in a turn on a loaded machine was seen to do up
/// to about two seconds after the write).
const RECEIPT: Duration = Duration::from_secs(5);
/// The longest reply-socket path: Qwen Code keeps its own under 103 bytes, within every
/// platform's `sun_path`.
const MAX_REPLY_PATH: usize = 103;
/// How a wake's reply folder's name begins.
const PREFIX: &str = "acc-wake-";
/// The reply socket's name in its folder.
const RECEIPT_SOCKET: &str = "receipt";
/// How old a reply folder is before a later wake removes it as left behind.
const STALE: Duration = Duration::from_secs(60);
/// The most a delivery receipt connection is read (Qwen Code's frames are far smaller).
const MAX_RECEIPT: u64 = 64 * 1024;
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

/// Where Qwen Code sends a wake's delivery receipt: `from` and `replyToken` of the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyTo {
    /// The reply socket's path.
    pub socket: String,
    /// The token Qwen Code authenticates its receipt with.
    pub token: String,
}

/// What one wake connection carries: the auth line and the one `user` frame, each a JSON line.
pub fn wake_lines(endpoint: &Endpoint, message_id: &str, reply: &ReplyTo) -> String {
    let auth =
        serde_json::json!({ "msgV": FRAME_VERSION, "type": "auth", "token": endpoint.token });
    let frame = serde_json::json!({
        "msgV": FRAME_VERSION,
        "msgId": frame_id(message_id),
        "type": "user",
        "from": reply.socket,
        "replyToken": reply.token,
        "fromName": "acc",
        "toSessionId": endpoint.session_id,
        "priority": "next",
        "message": { "role": "user", "content": wake_text(message_id) },
    });
    format!("{auth}\n{frame}\n")
}

/// The refusal code of a delivery receipt's `status`: `None` for `delivered`. A drop (sent
/// faster than the session admits, or its queue full) is a busy recipient; a message held for
/// the user's review, refused, denied or expired was turned away; one the session found
/// addressed to another session (swapped in its process) found no recipient.
pub fn receipt_code(status: &str) -> Option<&'static str> {
    match status {
        "delivered" => None,
        "dropped" => Some("recipient_busy"),
        "held" | "refused" | "denied" | "expired" => Some("transport_rejected"),
        "misaddressed" => Some("recipient_unavailable"),
        _ => Some("transport_error"),
    }
}

/// The reply socket of one wake: bound in a folder only this user may enter, made for this wake
/// and removed with it.
struct ReplyBox {
    reply: ReplyTo,
    listener: UnixListener,
    _folder: tempfile::TempDir,
}

impl ReplyBox {
    /// Bound under `$XDG_RUNTIME_DIR`, else the temporary folder, else `/tmp`: the first whose
    /// socket path fits.
    fn open() -> Result<Self, &'static str> {
        let mut bases: Vec<PathBuf> = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .into_iter()
            .collect();
        bases.push(std::env::temp_dir());
        bases.push(PathBuf::from("/tmp"));
        let mut token = [0_u8; 32];
        getrandom::fill(&mut token).map_err(|_| "transport_error")?;
        let token = data_encoding::HEXLOWER.encode(&token);
        for base in bases {
            sweep(&base, STALE);
            let Ok(folder) = tempfile::Builder::new().prefix(PREFIX).tempdir_in(&base) else {
                continue;
            };
            if std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700))
                .is_err()
            {
                continue;
            }
            let socket = folder.path().join(RECEIPT_SOCKET);
            let Some(path) = socket.to_str().filter(|p| p.len() <= MAX_REPLY_PATH) else {
                continue;
            };
            let Ok(listener) = UnixListener::bind(&socket) else {
                continue;
            };
            if listener.set_nonblocking(true).is_err() {
                continue;
            }
            return Ok(Self {
                reply: ReplyTo {
                    socket: path.to_string(),
                    token: token.clone(),
                },
                listener,
                _folder: folder,
            });
        }
        Err("transport_error")
    }

    /// Wait until `deadline` for Qwen Code's receipt of `msg_id`; connections that do not
    /// authenticate with this wake's token, or report another frame, are ignored.
    fn receipt(&self, msg_id: &str, deadline: Instant) -> Result<wake::Taken, &'static str> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if let Some(status) = read_receipt(stream, &self.reply.token, msg_id, deadline)
                    {
                        return receipt_code(&status).map_or(Ok(wake::Taken::Delivered), Err);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err("transport_error");
                    }
                    // A short sleep rather than an event loop: one socket, a few seconds at
                    // most, and the receipt usually arrives within milliseconds.
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(wake::io_code(&e)),
            }
        }
    }
}

/// Remove the reply folders under `base` that a wake left behind (its process killed before it
/// could: a host gives up on an offer past its deadline) once they are older than `stale`: this
/// user's `acc-wake-*` folders that hold nothing but the receipt socket. No wake lasts longer
/// than its offer's deadline, seconds, so an older folder's wake is over. Anything else in such a
/// folder keeps it.
pub fn sweep(base: &Path, stale: Duration) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let folder = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&folder) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > stale);
        if meta.is_dir() && meta.uid() == wake::current_uid() && old {
            let _ = std::fs::remove_file(folder.join(RECEIPT_SOCKET));
            let _ = std::fs::remove_dir(&folder);
        }
    }
}

/// The `status` of a receipt connection: an auth line with `token`, then a `delivery_status`
/// control frame about `msg_id`.
fn read_receipt(
    stream: UnixStream,
    token: &str,
    msg_id: &str,
    deadline: Instant,
) -> Option<String> {
    let left = deadline.checked_duration_since(Instant::now())?;
    stream.set_nonblocking(false).ok()?;
    stream
        .set_read_timeout(Some(left.max(Duration::from_millis(1))))
        .ok()?;
    let mut text = String::new();
    stream.take(MAX_RECEIPT).read_to_string(&mut text).ok()?;
    let mut lines = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    let auth = lines.next()?;
    if auth["type"] != "auth" || auth["token"] != token {
        return None;
    }
    let frame = lines.next()?;
    (frame["type"] == "control"
        && frame["action"] == "delivery_status"
        && frame["origMsgId"] == msg_id)
        .then(|| frame["status"].as_str().map(str::to_string))
        .flatten()
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

    /// Write one wake, then wait (bounded) for Qwen Code's delivery receipt on this wake's reply
    /// socket. Qwen Code answers nothing on the wake's own connection, and when it closes that
    /// says nothing the receipt does not: a session busy in a turn may read the frame a second
    /// or more after it was written, so the whole wait is the receipt's.
    fn wake(&self, message_id: &str, budget: Duration) -> Result<wake::Taken, &'static str> {
        let started = Instant::now();
        let reply = ReplyBox::open()?;
        let mut stream = wake::connect(&self.socket)?;
        stream
            .set_write_timeout(Some(EXCHANGE))
            .and_then(|()| stream.write_all(wake_lines(self, message_id, &reply.reply).as_bytes()))
            .and_then(|()| stream.flush())
            .and_then(|()| stream.shutdown(std::net::Shutdown::Write))
            .map_err(|e| wake::io_code(&e))?;
        let outcome = reply.receipt(&frame_id(message_id), started + budget.min(RECEIPT));
        drop(stream);
        outcome
    }
}

export_adapter!(new);

#[cfg(test)]
mod tests;

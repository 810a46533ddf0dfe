//! A JSON-RPC conversation with the Codex LocalDaemon: WebSocket frames (tungstenite) over the
//! daemon's Unix control socket, every read and write bounded by a deadline.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// Why a conversation with the daemon failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DaemonError {
    /// Nothing listens on the control socket (the daemon is stopped).
    Unavailable(String),
    /// The socket refused us by permission.
    PermissionDenied,
    /// The daemon answered, but not in the protocol we speak.
    Protocol(String),
    /// The daemon answered a request with a JSON-RPC error.
    Rejected(String),
    /// The deadline passed.
    Timeout,
}

impl std::fmt::Display for DaemonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unavailable(why) => write!(f, "the Codex daemon is not reachable: {why}"),
            Self::PermissionDenied => write!(f, "the Codex daemon's control socket refused us"),
            Self::Protocol(why) => write!(f, "the Codex daemon spoke another protocol: {why}"),
            Self::Rejected(why) => write!(f, "the Codex daemon refused the request: {why}"),
            Self::Timeout => write!(f, "the Codex daemon did not answer in time"),
        }
    }
}

/// The daemon's control socket under a `CODEX_HOME`.
pub fn control_socket(codex_home: &Path) -> PathBuf {
    codex_home
        .join("app-server-control")
        .join("app-server-control.sock")
}

/// The pids the daemon recorded under a `CODEX_HOME`: the daemon's own first, then its
/// updater's (whichever files exist and parse).
pub fn recorded_pids(codex_home: &Path) -> Vec<i64> {
    ["daemon.pid", "daemon-updater.pid"]
        .iter()
        .filter_map(|f| std::fs::read(codex_home.join("app-server-daemon").join(f)).ok())
        .filter_map(|b| serde_json::from_slice::<Value>(&b).ok())
        .filter_map(|v| v.get("pid").and_then(Value::as_i64))
        .collect()
}

/// The `clientUserMessageId` ACC gives a message's submission: derived from the message id, so
/// a retry is recognised.
pub fn client_message_id(message_id: &str) -> String {
    format!("acc-{message_id}")
}

/// One submission found in a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// Still waiting in the thread's queue (else already taken into a turn).
    pub queued: bool,
    /// Its first text input.
    pub text: String,
}

/// One open, initialized connection.
pub struct Daemon {
    socket: WebSocket<UnixStream>,
    deadline: Instant,
    next_id: u64,
    /// What `initialize` answered.
    pub initialized: Value,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon").finish_non_exhaustive()
    }
}

fn io_error(e: tungstenite::Error) -> DaemonError {
    match e {
        tungstenite::Error::Io(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            DaemonError::Timeout
        }
        // A daemon going away mid-conversation is unavailable, not speaking another protocol.
        tungstenite::Error::Io(io) => DaemonError::Unavailable(io.to_string()),
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            DaemonError::Unavailable("the daemon closed the connection".into())
        }
        other => DaemonError::Protocol(other.to_string()),
    }
}

impl Daemon {
    /// Connect, upgrade to WebSocket and `initialize` with the experimental API, all within
    /// `budget`.
    pub fn connect(control_socket: &Path, budget: Duration) -> Result<Self, DaemonError> {
        let deadline = Instant::now() + budget;
        let stream = UnixStream::connect(control_socket).map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => DaemonError::PermissionDenied,
            _ => DaemonError::Unavailable(e.to_string()),
        })?;
        stream
            .set_read_timeout(Some(budget))
            .and_then(|_| stream.set_write_timeout(Some(budget)))
            .map_err(|e| DaemonError::Unavailable(e.to_string()))?;
        let (socket, _response) =
            tungstenite::client::client("ws://localhost/", stream).map_err(|e| match e {
                tungstenite::HandshakeError::Failure(error) => match io_error(error) {
                    DaemonError::Protocol(why) => {
                        DaemonError::Protocol(format!("websocket upgrade: {why}"))
                    }
                    other => other,
                },
                tungstenite::HandshakeError::Interrupted(_) => DaemonError::Timeout,
            })?;
        let mut daemon = Self {
            socket,
            deadline,
            next_id: 1,
            initialized: Value::Null,
        };
        daemon.initialized = daemon.call(
            "initialize",
            json!({
                "clientInfo": { "name": "acc", "version": env!("CARGO_PKG_VERSION") },
                "capabilities": { "experimentalApi": true },
            }),
        )?;
        daemon.notify("initialized", json!({}))?;
        Ok(daemon)
    }

    fn send(&mut self, value: &Value) -> Result<(), DaemonError> {
        self.socket
            .send(Message::text(value.to_string()))
            .map_err(io_error)
    }

    /// Send a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), DaemonError> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// One request and its result; notifications in between are skipped.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, DaemonError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(DaemonError::Timeout);
            }
            self.socket
                .get_ref()
                .set_read_timeout(Some(left))
                .map_err(|e| DaemonError::Unavailable(e.to_string()))?;
            let text = match self.socket.read().map_err(io_error)? {
                Message::Text(text) => text.to_string(),
                Message::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Message::Close(_) => {
                    return Err(DaemonError::Unavailable(
                        "the daemon closed the connection".into(),
                    ));
                }
                _ => continue,
            };
            let Ok(reply) = serde_json::from_str::<Value>(&text) else {
                return Err(DaemonError::Protocol("a frame that is not json".into()));
            };
            if reply.get("id").and_then(Value::as_u64) != Some(id) || reply.get("method").is_some()
            {
                continue;
            }
            if let Some(error) = reply.get("error") {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(DaemonError::Rejected(format!("{method}: {message}")));
            }
            return Ok(reply.get("result").cloned().unwrap_or(Value::Null));
        }
    }
}

impl Daemon {
    /// Every submission carrying `client_id` in a thread: those in its queue and those in its
    /// `turns` newest turns. Codex 0.169.0 answers a thread that never had a user message with
    /// "not materialized yet" (no history), and for a moment after a submission starts a turn
    /// with "not supported yet": asked again every 50 ms for up to `wait`.
    pub fn submissions(
        &mut self,
        thread_id: &str,
        client_id: &str,
        turns: u64,
        wait: Duration,
    ) -> Result<Vec<Submission>, DaemonError> {
        let text = |content: &Value| {
            content
                .pointer("/0/text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let queue = self.call("thread/queue/list", json!({ "threadId": thread_id }))?;
        let mut found: Vec<Submission> = queue
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|i| i.get("clientUserMessageId").and_then(Value::as_str) == Some(client_id))
            .map(|i| Submission {
                queued: true,
                text: text(&i["input"]),
            })
            .collect();
        let started = Instant::now();
        let listed = loop {
            match self.call(
                "thread/turns/list",
                json!({ "threadId": thread_id, "itemsView": "full", "limit": turns }),
            ) {
                Ok(listed) => break listed,
                Err(DaemonError::Rejected(why)) if why.contains("not materialized") => {
                    return Ok(found);
                }
                Err(DaemonError::Rejected(why))
                    if why.contains("not supported yet") && started.elapsed() < wait =>
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(other) => return Err(other),
            }
        };
        for turn in listed
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for item in turn
                .get("items")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if item.get("clientId").and_then(Value::as_str) == Some(client_id) {
                    found.push(Submission {
                        queued: false,
                        text: text(&item["content"]),
                    });
                }
            }
        }
        Ok(found)
    }

    /// Ask until exactly one submission carrying `client_id` shows in the thread, for up to
    /// `deadline`; `None` when it never did (none, several, or the daemon kept refusing).
    pub fn one_submission(
        &mut self,
        thread_id: &str,
        client_id: &str,
        deadline: Duration,
    ) -> Option<Submission> {
        let started = Instant::now();
        loop {
            if let Ok(mut found) = self.submissions(thread_id, client_id, 50, deadline)
                && found.len() == 1
            {
                return found.pop();
            }
            if started.elapsed() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
    }
}

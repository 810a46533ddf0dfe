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

/// The native program Codex's npm launcher (`@openai/codex/bin/codex.js`, a script) really
/// runs, found where the launcher looks for it: the platform package's
/// `vendor/<target triple>/bin/codex`, nested in the launcher's package, beside it in the
/// `@openai` scope, or in the package's own `vendor/`. `None` when `launcher` is no script (it
/// is then the program itself) or the program is not there.
pub fn native_executable(launcher: &Path) -> Option<PathBuf> {
    let mut head = [0u8; 2];
    let script = std::fs::File::open(launcher)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"#!");
    if !script {
        return None;
    }
    let (triple, package) = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => ("x86_64-unknown-linux-musl", "codex-linux-x64"),
        ("linux", "aarch64") => ("aarch64-unknown-linux-musl", "codex-linux-arm64"),
        ("macos", "x86_64") => ("x86_64-apple-darwin", "codex-darwin-x64"),
        ("macos", "aarch64") => ("aarch64-apple-darwin", "codex-darwin-arm64"),
        _ => return None,
    };
    let root = launcher.parent()?.parent()?;
    let program = Path::new(triple).join("bin").join("codex");
    [
        root.join("node_modules/@openai")
            .join(package)
            .join("vendor"),
        root.parent()?.join(package).join("vendor"),
        root.join("vendor"),
    ]
    .into_iter()
    .map(|vendor| vendor.join(&program))
    .find(|candidate| candidate.is_file())
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
    /// Whether `client_id` is in the thread (its whole queue and history), asking again for up
    /// to `wait` while Codex is between states: found, absent, or still unknown ([`lookup`]).
    pub fn lookup(
        &mut self,
        thread_id: &str,
        client_id: &str,
        wait: Duration,
    ) -> Result<Lookup, DaemonError> {
        lookup(self, thread_id, client_id, Instant::now() + wait)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
    }
}

/// What a thread says of a submission id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Submissions carrying the id, in the queue or in turns.
    Found(Vec<Submission>),
    /// None, in the whole queue and the whole history.
    Absent,
    /// Codex is between states and cannot say yet (why): never to be taken for absent.
    Unknown(String),
}

impl Lookup {
    /// The submissions when the thread said (none when absent); `None` while it is unknown.
    pub fn known(self) -> Option<Vec<Submission>> {
        match self {
            Self::Found(found) => Some(found),
            Self::Absent => Some(Vec::new()),
            Self::Unknown(_) => None,
        }
    }
}

/// The JSON-RPC calls a lookup makes: the daemon, or a scripted fake in tests.
pub trait Rpc {
    /// One request and its result.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, DaemonError>;
}

impl Rpc for Daemon {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, DaemonError> {
        Daemon::call(self, method, params)
    }
}

/// Turns per page of `thread/turns/list`.
const TURN_PAGE: u64 = 50;
/// The most pages read of one listing (a runaway cursor ends the read as unknown).
const MAX_PAGES: usize = 1000;
/// How long to wait before asking again while Codex is between states.
const SETTLE_STEP: Duration = Duration::from_millis(40);

/// Whether `client_id` is in the thread, asking again while Codex is between states, until
/// `deadline`: the answer then is found, absent, or unknown (never a guess).
pub fn lookup(
    rpc: &mut impl Rpc,
    thread_id: &str,
    client_id: &str,
    deadline: Instant,
) -> Result<Lookup, DaemonError> {
    loop {
        let read = read_once(rpc, thread_id, client_id)?;
        match read {
            Lookup::Unknown(_) if Instant::now() + SETTLE_STEP < deadline => {
                std::thread::sleep(SETTLE_STEP);
            }
            settled => return Ok(settled),
        }
    }
}

fn first_text(content: &Value) -> String {
    content
        .pointer("/0/text")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The pages of one listing, following `nextCursor`; `Err(None)` when the history does not
/// exist yet ("not materialized"), `Err(Some(why))` when Codex cannot list it right now.
fn pages(
    rpc: &mut impl Rpc,
    method: &str,
    params: &Value,
) -> Result<Result<Vec<Value>, Option<String>>, DaemonError> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut params = params.clone();
        if let (Some(cursor), Value::Object(map)) = (&cursor, &mut params) {
            map.insert("cursor".into(), Value::from(cursor.clone()));
        }
        let page = match rpc.call(method, params) {
            Ok(page) => page,
            Err(DaemonError::Rejected(why)) if why.contains("not materialized") => {
                return Ok(Err(None));
            }
            Err(DaemonError::Rejected(why)) if why.contains("not supported yet") => {
                return Ok(Err(Some(format!(
                    "codex cannot list this thread yet ({why})"
                ))));
            }
            Err(other) => return Err(other),
        };
        cursor = page
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_string);
        pages.push(page);
        if cursor.is_none() {
            return Ok(Ok(pages));
        }
    }
    Ok(Err(Some(format!(
        "{method} did not end after {MAX_PAGES} pages"
    ))))
}

/// The queued submissions carrying `client_id`; `Err` when the queue cannot be listed now.
fn queued(
    rpc: &mut impl Rpc,
    thread_id: &str,
    client_id: &str,
) -> Result<Result<Vec<Submission>, String>, DaemonError> {
    let queue = match pages(rpc, "thread/queue/list", &json!({ "threadId": thread_id }))? {
        Ok(pages) => pages,
        Err(None) => Vec::new(),
        Err(Some(why)) => return Ok(Err(why)),
    };
    Ok(Ok(queue
        .iter()
        .flat_map(data)
        .filter(|item| item.get("clientUserMessageId").and_then(Value::as_str) == Some(client_id))
        .map(|item| Submission {
            queued: true,
            text: first_text(&item["input"]),
        })
        .collect()))
}

/// One reading of the whole queue and the whole history, newest turn first. The two listings
/// are separate calls, so the queue is read before and after the history: a submission that
/// left the queue for a turn in between would otherwise be counted in both (or, the other way
/// round, in neither), and a reading across such a move is unknown, never a count.
fn read_once(rpc: &mut impl Rpc, thread_id: &str, client_id: &str) -> Result<Lookup, DaemonError> {
    let before = match queued(rpc, thread_id, client_id)? {
        Ok(found) => found,
        Err(why) => return Ok(Lookup::Unknown(why)),
    };
    let mut found = Vec::new();
    let turns = match pages(
        rpc,
        "thread/turns/list",
        &json!({ "threadId": thread_id, "itemsView": "full", "limit": TURN_PAGE }),
    )? {
        Ok(pages) => pages,
        Err(None) => Vec::new(),
        Err(Some(why)) => return Ok(Lookup::Unknown(why)),
    };
    for (index, turn) in turns.iter().flat_map(data).enumerate() {
        let items: Vec<&Value> = turn
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        // Right after a submission leaves the queue, its turn is listed in progress before
        // its user message is (Codex 0.169.0: tens of milliseconds): the submission is in
        // neither place, and reading that as "absent" would add it twice.
        if index == 0
            && turn.get("status").and_then(Value::as_str) == Some("inProgress")
            && !items
                .iter()
                .any(|i| i.get("type").and_then(Value::as_str) == Some("userMessage"))
        {
            return Ok(Lookup::Unknown(
                "the newest turn is starting and does not list its message yet".into(),
            ));
        }
        for item in items {
            if item.get("clientId").and_then(Value::as_str) == Some(client_id) {
                found.push(Submission {
                    queued: false,
                    text: first_text(&item["content"]),
                });
            }
        }
    }
    let after = match queued(rpc, thread_id, client_id)? {
        Ok(found) => found,
        Err(why) => return Ok(Lookup::Unknown(why)),
    };
    if after != before {
        return Ok(Lookup::Unknown(
            "the queue changed while the history was read".into(),
        ));
    }
    found.extend(after);
    Ok(if found.is_empty() {
        Lookup::Absent
    } else {
        Lookup::Found(found)
    })
}

fn data(page: &Value) -> impl Iterator<Item = &Value> {
    page.get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A daemon that answers each method from a script, one answer per call (the last one
    /// repeats), and counts the calls.
    struct Scripted {
        answers: Vec<(&'static str, Vec<Result<Value, DaemonError>>)>,
        calls: Vec<(String, Value)>,
    }

    impl Rpc for Scripted {
        fn call(&mut self, method: &str, params: Value) -> Result<Value, DaemonError> {
            self.calls.push((method.to_string(), params));
            let (_, answers) = self
                .answers
                .iter_mut()
                .find(|(m, _)| *m == method)
                .expect("a scripted method");
            if answers.len() > 1 {
                answers.remove(0)
            } else {
                answers[0].clone()
            }
        }
    }

    fn empty_queue() -> Result<Value, DaemonError> {
        Ok(json!({ "data": [], "nextCursor": null }))
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_millis(600)
    }

    #[test]
    fn a_starting_turn_is_unknown_until_it_lists_its_message() {
        let starting =
            json!({ "data": [{ "status": "inProgress", "items": [] }], "nextCursor": null });
        let listed = json!({ "data": [{ "status": "inProgress", "items": [{ "type": "userMessage", "clientId": "acc-m1", "content": [{ "text": "hi" }] }] }], "nextCursor": null });
        let mut rpc = Scripted {
            answers: vec![
                ("thread/queue/list", vec![empty_queue()]),
                (
                    "thread/turns/list",
                    vec![Ok(starting.clone()), Ok(starting), Ok(listed)],
                ),
            ],
            calls: Vec::new(),
        };
        let found = lookup(&mut rpc, "t", "acc-m1", soon()).expect("lookup");
        assert_eq!(
            found,
            Lookup::Found(vec![Submission {
                queued: false,
                text: "hi".into()
            }])
        );
    }

    #[test]
    fn a_state_that_never_settles_is_unknown_not_absent() {
        let starting =
            json!({ "data": [{ "status": "inProgress", "items": [] }], "nextCursor": null });
        let mut rpc = Scripted {
            answers: vec![
                ("thread/queue/list", vec![empty_queue()]),
                ("thread/turns/list", vec![Ok(starting)]),
            ],
            calls: Vec::new(),
        };
        assert!(matches!(
            lookup(&mut rpc, "t", "acc-m1", soon()).expect("lookup"),
            Lookup::Unknown(_)
        ));
        let mut rpc = Scripted {
            answers: vec![
                ("thread/queue/list", vec![empty_queue()]),
                (
                    "thread/turns/list",
                    vec![Err(DaemonError::Rejected(
                        "list_turns is not supported yet".into(),
                    ))],
                ),
            ],
            calls: Vec::new(),
        };
        assert!(matches!(
            lookup(&mut rpc, "t", "acc-m1", soon()).expect("lookup"),
            Lookup::Unknown(_)
        ));
    }

    #[test]
    fn every_page_of_the_queue_and_the_history_is_read() {
        let mut rpc = Scripted {
            answers: vec![
                (
                    "thread/queue/list",
                    vec![
                        Ok(
                            json!({ "data": [{ "clientUserMessageId": "acc-other" }], "nextCursor": "q2" }),
                        ),
                        Ok(json!({ "data": [], "nextCursor": null })),
                    ],
                ),
                (
                    "thread/turns/list",
                    vec![
                        Ok(
                            json!({ "data": [{ "status": "completed", "items": [] }], "nextCursor": "t2" }),
                        ),
                        Ok(
                            json!({ "data": [{ "status": "completed", "items": [{ "type": "userMessage", "clientId": "acc-m1", "content": [] }] }], "nextCursor": null }),
                        ),
                    ],
                ),
            ],
            calls: Vec::new(),
        };
        let found = lookup(&mut rpc, "t", "acc-m1", soon()).expect("lookup");
        assert!(
            matches!(found, Lookup::Found(ref f) if f.len() == 1),
            "{found:?}"
        );
        let cursors: Vec<Option<&str>> = rpc
            .calls
            .iter()
            .map(|(_, p)| p.get("cursor").and_then(Value::as_str))
            .collect();
        // The queue's two pages, the history's two, then the queue again (the script answers
        // its last page from then on).
        assert_eq!(cursors, vec![None, Some("q2"), None, Some("t2"), None]);
    }

    #[test]
    fn a_submission_moving_from_the_queue_to_a_turn_during_a_read_is_not_counted_twice() {
        let queued = json!({ "data": [{ "clientUserMessageId": "acc-m1", "input": [{ "text": "hi" }] }], "nextCursor": null });
        let turn = json!({ "data": [{ "status": "inProgress", "items": [{ "type": "userMessage", "clientId": "acc-m1", "content": [{ "text": "hi" }] }] }], "nextCursor": null });
        // First reading: queued before, in the turn during, gone after: unknown, read again.
        // Second reading: settled in the turn.
        let mut rpc = Scripted {
            answers: vec![
                ("thread/queue/list", vec![Ok(queued), empty_queue()]),
                ("thread/turns/list", vec![Ok(turn)]),
            ],
            calls: Vec::new(),
        };
        assert_eq!(
            lookup(&mut rpc, "t", "acc-m1", soon()).expect("lookup"),
            Lookup::Found(vec![Submission {
                queued: false,
                text: "hi".into()
            }])
        );
        assert!(
            rpc.calls.len() >= 6,
            "the first reading was not trusted: {:?}",
            rpc.calls
        );
    }

    #[test]
    fn a_thread_without_history_and_an_empty_queue_is_absent() {
        let mut rpc = Scripted {
            answers: vec![
                ("thread/queue/list", vec![empty_queue()]),
                (
                    "thread/turns/list",
                    vec![Err(DaemonError::Rejected(
                        "thread is not materialized yet".into(),
                    ))],
                ),
            ],
            calls: Vec::new(),
        };
        assert_eq!(
            lookup(&mut rpc, "t", "acc-m1", soon()).expect("lookup"),
            Lookup::Absent
        );
    }
}

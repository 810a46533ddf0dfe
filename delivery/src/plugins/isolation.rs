//! Adapter code out of process: each load and each call in a short-lived helper.
//!
//! Owns: the helper's side (`acc adapter-host`, [`serve`]) and the caller's ([`describe`],
//! [`start`]). A thread deadline stops an adapter that returns late, not one that calls
//! `exit()`, aborts, segfaults or never returns: in the long-lived `acc-mcp` any of those would
//! end the server and take every ACC tool from the agent. So `acc-mcp` never loads adapter code
//! itself. It runs `acc adapter-host`, which loads the library (every check [`crate::plugins`]
//! applies), runs one operation and exits. A helper that ends without an answer costs one failed
//! call with a closed code; one still running when its call is dropped is killed.
//!
//! The protocol is one JSON line each way. The caller writes a [`Request`] on the helper's
//! stdin and keeps the pipe open; the helper writes one [`Reply`] on its stdout and exits. The
//! helper's own stdout is moved aside before any adapter code runs (fd 1 then points at stderr),
//! so an adapter that prints cannot forge or garble the reply. The helper exits when its stdin
//! closes, so a caller that dies takes its helpers with it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acc_adapter_api::abi_stable::std_types::RString;
use acc_adapter_api::{Answer, OfferKind, OfferStatus};

use super::{CallFailure, LoadedAdapter, Operation, PendingCall, Runner};
use wire::{Reply, Request};

mod wire;

/// The hidden subcommand of `acc` that serves one request.
pub const SUBCOMMAND: &str = "adapter-host";
/// The longest a helper runs one operation before it answers `timeout` itself: past any
/// deadline a caller waits (a late offer is watched for [`crate::router::LATE_ANSWER_WAIT`]).
pub const HELPER_LIMIT: Duration = Duration::from_secs(70);
/// How long a describe in a helper may take: construction and `describe` keep their own
/// deadlines inside it; this bounds the process around them.
const DESCRIBE_LIMIT: Duration = Duration::from_secs(8);

/// An adapter whose code runs in helpers: the program to run and what it loads.
#[derive(Debug)]
pub(crate) struct Helper {
    pub program: PathBuf,
    pub file: PathBuf,
    pub config: String,
}

fn status_text(status: OfferStatus) -> &'static str {
    match status {
        OfferStatus::Accepted => "accepted",
        OfferStatus::AcceptedPendingApproval => "pending_approval",
        OfferStatus::Refused => "refused",
    }
}

fn status_from(text: &str) -> Option<OfferStatus> {
    [
        OfferStatus::Accepted,
        OfferStatus::AcceptedPendingApproval,
        OfferStatus::Refused,
    ]
    .into_iter()
    .find(|s| status_text(*s) == text)
}

fn kind_from(text: &str) -> Option<OfferKind> {
    [OfferKind::Message, OfferKind::Wake, OfferKind::Body]
        .into_iter()
        .find(|k| k.as_str() == text)
}

/// The helper's side: read one request from stdin, answer it on stdout, return the exit code.
/// Run by `acc adapter-host`; nothing else in the process runs meanwhile.
pub fn serve() -> i32 {
    if !tie_to_caller() {
        return 3;
    }
    // Keep the reply channel to ourselves before any adapter code runs.
    let reply_fd = match rustix::io::dup(std::io::stdout()) {
        Ok(fd) => fd,
        Err(error) => {
            eprintln_safe(&format!(
                "acc adapter-host: cannot set up its reply: {error}"
            ));
            return 2;
        }
    };
    if let Err(error) = rustix::stdio::dup2_stdout(std::io::stderr()) {
        eprintln_safe(&format!(
            "acc adapter-host: cannot set up its reply: {error}"
        ));
        return 2;
    }
    let mut out = std::fs::File::from(reply_fd);
    let mut line = String::new();
    let reply = match std::io::stdin().read_line(&mut line) {
        Ok(0) => return 0,
        Ok(_) => match serde_json::from_str::<Request>(&line) {
            Ok(request) => {
                exit_when_caller_goes();
                answer(&request)
            }
            Err(error) => Reply::Failed {
                code: "invalid_request".into(),
                message: format!("acc adapter-host: the request is not valid: {error}"),
            },
        },
        Err(error) => Reply::Failed {
            code: "invalid_request".into(),
            message: format!("acc adapter-host: cannot read the request: {error}"),
        },
    };
    let mut text = serde_json::to_string(&reply).unwrap_or_else(|_| {
        r#"{"failed":{"code":"transport_error","message":"unencodable reply"}}"#.into()
    });
    text.push('\n');
    if out.write_all(text.as_bytes()).is_err() {
        return 2;
    }
    0
}

/// The helper ends as soon as its caller closes the request pipe (the caller gave up, or died):
/// a hung adapter never outlives the process that asked.
fn exit_when_caller_goes() {
    let _ = std::thread::Builder::new()
        .name("acc-adapter-host-stdin".into())
        .spawn(|| {
            let mut rest = Vec::new();
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut rest);
            std::process::exit(3);
        });
}

/// On Linux, ask to be killed when the caller's thread that started this helper ends; then
/// check that the caller is still the parent (it may have gone before the request took hold).
/// Elsewhere the closing stdin pipe alone ends the helper.
fn tie_to_caller() -> bool {
    #[cfg(target_os = "linux")]
    {
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        let expected = std::env::var(PARENT_VAR).ok();
        let parent = rustix::process::getppid().map(|p| p.as_raw_nonzero().get().to_string());
        if let (Some(expected), Some(parent)) = (expected, parent) {
            return expected == parent;
        }
    }
    true
}

fn eprintln_safe(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Load the requested adapter here and run the operation.
fn answer(request: &Request) -> Reply {
    let adapter = match super::load_file(&request.file, &request.config) {
        Ok(adapter) => adapter,
        Err(reason) => return Reply::Refused { reason },
    };
    if request.operation == "describe" {
        return Reply::Described {
            adapter_id: adapter.adapter_id,
            transport: adapter.transport,
            offer_kind: adapter.offer_kind.as_str().into(),
            features: adapter.features,
            api_version: adapter.api_version,
            contract: adapter.contract,
        };
    }
    let Some(operation) = Operation::parse(&request.operation) else {
        return Reply::Failed {
            code: "invalid_request".into(),
            message: format!("unknown adapter operation `{}`", request.operation),
        };
    };
    let answered = adapter
        .start(operation, request.request.clone())
        .and_then(|call| {
            call.wait_until(Instant::now() + HELPER_LIMIT)
                .unwrap_or_else(|| Err(super::timed_out(HELPER_LIMIT)))
        });
    match answered {
        Ok(answer) => Reply::Answered {
            status: status_text(answer.status).into(),
            code: answer.code.to_string(),
            client_version: answer.client_version.to_string(),
            payload: answer.payload.to_string(),
        },
        Err(failure) => Reply::Failed {
            code: failure.code,
            message: failure.message,
        },
    }
}

/// The helper process of one call, once it is started; `cancelled` once the call was dropped
/// (a helper is then never started).
#[derive(Debug, Default)]
struct Slot {
    child: Option<Child>,
    cancelled: bool,
}

/// A helper process a pending call talks to: killed, if still running, when the call is
/// dropped (the call's own thread reaps it).
#[derive(Debug)]
pub struct Running {
    slot: Arc<Mutex<Slot>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.slot.lock() {
            slot.cancelled = true;
            if let Some(child) = slot.child.as_mut() {
                // Child::kill signals only a process not yet reaped (the call's thread reaps it
                // under this lock), so the pid is still its own. The kill ends the exchange of a
                // helper that never answered; its thread then reaps it.
                let _ = child.kill();
            }
        }
    }
}

/// Reap the call's helper once it has answered or its output closed, off the caller's path
/// (the answer was already sent). One that lingers past a bound is killed, then reaped.
fn reap(slot: &Mutex<Slot>) {
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        let Ok(mut guard) = slot.lock() else { return };
        let Some(child) = guard.child.as_mut() else {
            return;
        };
        match child.try_wait() {
            Ok(None) if Instant::now() < end => {}
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            _ => return,
        }
        drop(guard);
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn failure(code: &str, message: String) -> CallFailure {
    CallFailure {
        code: code.into(),
        message,
    }
}

/// The environment variable naming the helper's caller: a helper whose caller is already gone
/// when it starts exits at once.
const PARENT_VAR: &str = "ACC_ADAPTER_HOST_PARENT";

/// Start a helper.
fn spawn(program: &Path) -> Result<Child, CallFailure> {
    Command::new(program)
        .arg(SUBCOMMAND)
        .env(PARENT_VAR, std::process::id().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            failure(
                "transport_error",
                format!(
                    "cannot start the adapter helper `{} {SUBCOMMAND}`: {e}",
                    program.display()
                ),
            )
        })
}

/// Write the request, read the one reply line; the stdin pipe stays open until then.
fn exchange(
    mut child_stdin: std::process::ChildStdin,
    stdout: ChildStdout,
    slot: &Mutex<Slot>,
    line: &str,
) -> Result<Reply, CallFailure> {
    // A helper that never reads makes this fail once it is killed (the pipe closes).
    let _ = child_stdin.write_all(line.as_bytes());
    let mut reply = String::new();
    let read = BufReader::new(stdout).read_line(&mut reply);
    drop(child_stdin);
    match read {
        Ok(n) if n > 0 => serde_json::from_str(&reply).map_err(|e| {
            failure(
                "transport_error",
                format!("the adapter helper answered something that is not a reply: {e}"),
            )
        }),
        _ => Err(failure("transport_error", ended_how(slot))),
    }
}

/// How a helper that closed its output without a reply ended, once it has (bounded: one that
/// lingers is described as such and killed when its call is dropped).
fn ended_how(slot: &Mutex<Slot>) -> String {
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        let status = slot
            .lock()
            .ok()
            .and_then(|mut s| s.child.as_mut().and_then(|c| c.try_wait().ok().flatten()));
        if let Some(status) = status {
            use std::os::unix::process::ExitStatusExt;
            let how = match (status.code(), status.signal()) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(signal)) => format!("was killed by signal {signal}"),
                (None, None) => "ended".into(),
            };
            return format!("the adapter's helper process {how} without an answer");
        }
        if Instant::now() >= end {
            return "the adapter's helper process closed its output without an answer".into();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Run one exchange with a new helper on its own thread; `map` turns the reply into the call's
/// result there. The helper is started from that thread, which lives exactly as long as the
/// exchange: on Linux the helper asks to be killed when the thread that started it ends, so a
/// caller that exits (or is killed) mid-call leaves no helper behind, even a stopped one.
fn call<T: Send + 'static>(
    program: &Path,
    request: &Request,
    map: impl FnOnce(Reply) -> Result<T, CallFailure> + Send + 'static,
) -> Result<PendingCall<T>, CallFailure> {
    let mut line = serde_json::to_string(request)
        .map_err(|e| failure("transport_error", format!("cannot encode the request: {e}")))?;
    line.push('\n');
    let slot = Arc::new(Mutex::new(Slot::default()));
    let running = Running { slot: slot.clone() };
    let reaped = slot.clone();
    let program = program.to_path_buf();
    PendingCall::on_thread(
        move || {
            let (stdin, stdout) = {
                let mut guard = slot
                    .lock()
                    .map_err(|_| failure("transport_error", "the call was abandoned".into()))?;
                if guard.cancelled {
                    return Err(failure("transport_error", "the call was abandoned".into()));
                }
                let mut child = spawn(&program)?;
                let pipes = (child.stdin.take(), child.stdout.take());
                guard.child = Some(child);
                pipes
            };
            let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
                return Err(failure(
                    "transport_error",
                    "the adapter helper has no pipes".into(),
                ));
            };
            exchange(stdin, stdout, &slot, &line).and_then(map)
        },
        move || reap(&reaped),
        Some(running),
    )
}

/// Load `file` in a helper: the adapter as `describe` reported it there, whose calls each run
/// in a helper of their own; or why it was refused.
pub(crate) fn describe(program: &Path, file: &Path, config: &str) -> Result<LoadedAdapter, String> {
    let request = Request {
        file: file.to_path_buf(),
        config: config.to_string(),
        operation: "describe".into(),
        request: String::new(),
    };
    let pending = call(program, &request, Ok).map_err(|f| f.message)?;
    let reply = pending
        .wait_until(Instant::now() + DESCRIBE_LIMIT)
        .unwrap_or_else(|| Err(super::timed_out(DESCRIBE_LIMIT)))
        .map_err(|f| format!("init failed ({}): {}", f.code, f.message))?;
    match reply {
        Reply::Described {
            adapter_id,
            transport,
            offer_kind,
            features,
            api_version,
            contract,
        } => Ok(LoadedAdapter {
            file: file.to_path_buf(),
            adapter_id,
            transport,
            offer_kind: kind_from(&offer_kind)
                .ok_or_else(|| format!("unknown offer kind `{offer_kind}`"))?,
            features,
            api_version,
            contract,
            runner: Runner::Helper(Arc::new(Helper {
                program: program.to_path_buf(),
                file: file.to_path_buf(),
                config: config.to_string(),
            })),
        }),
        Reply::Refused { reason } => Err(reason),
        Reply::Failed { code, message } => Err(format!("init failed ({code}): {message}")),
        Reply::Answered { .. } => {
            Err("the adapter helper answered a describe with an answer".into())
        }
    }
}

/// Start `operation` in a new helper for `helper`'s adapter.
pub(crate) fn start(
    helper: &Helper,
    operation: Operation,
    request: String,
) -> Result<PendingCall<Answer>, CallFailure> {
    let request = Request {
        file: helper.file.clone(),
        config: helper.config.clone(),
        operation: operation.as_str().into(),
        request,
    };
    call(&helper.program, &request, |reply| match reply {
        Reply::Answered {
            status,
            code,
            client_version,
            payload,
        } => Ok(Answer {
            status: status_from(&status).ok_or_else(|| {
                failure(
                    "transport_error",
                    format!("the adapter helper reported an unknown status `{status}`"),
                )
            })?,
            code: RString::from(code),
            client_version: RString::from(client_version),
            payload: RString::from(payload),
        }),
        Reply::Failed { code, message } => Err(failure(&code, message)),
        Reply::Refused { reason } => Err(failure(
            "transport_error",
            format!("the adapter did not load in its helper: {reason}"),
        )),
        Reply::Described { .. } => Err(failure(
            "transport_error",
            "the adapter helper answered a call with a description".into(),
        )),
    })
}

//! The `example` adapter's capture driver: the reference for an adapter author's own.
//!
//! `acc contract capture --client example` starts this program (named by `driver` in
//! `contracts/example/contract-example-file-v1.toml`) and sends it one request a line on stdin
//! ([`DriverRequest`]); it answers each with one line on stdout ([`DriverAnswer`]). It plays the
//! example client: each participant's session is a folder holding an inbox file, which the
//! `example` adapter appends to; a running turn is a `<inbox>.busy` marker the adapter honours.
//! It reports only what it finds in those files.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acc_adapter_api::wire::{DriverAnswer, DriverRequest};

/// The example client's "a turn is running" marker beside its inbox, which the adapter honours
/// (`busy_marker` in the adapter's library; the two programs share this file convention, not
/// code, so a copy of the template builds under any library name).
fn busy_marker(inbox: &Path) -> PathBuf {
    let mut name = inbox.as_os_str().to_owned();
    name.push(".busy");
    PathBuf::from(name)
}

/// The example client's state: where its sessions live.
#[derive(Default)]
struct Client {
    scratch: PathBuf,
    sessions: BTreeMap<String, PathBuf>,
}

fn done() -> DriverAnswer {
    DriverAnswer {
        ok: true,
        ..DriverAnswer::default()
    }
}

fn refused(why: impl Into<String>) -> DriverAnswer {
    DriverAnswer {
        ok: false,
        error: Some(why.into()),
        ..DriverAnswer::default()
    }
}

/// The inbox lines that carry `message_id`.
fn lines_for(inbox: &Path, message_id: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(inbox)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("messageId").and_then(|m| m.as_str()) == Some(message_id))
        .collect()
}

impl Client {
    fn inbox(&self, participant: &str) -> Result<PathBuf, String> {
        self.sessions
            .get(participant)
            .map(|dir| dir.join("inbox.jsonl"))
            .ok_or_else(|| format!("no session for {participant}"))
    }

    fn answer(&mut self, request: DriverRequest) -> DriverAnswer {
        let result = match request {
            DriverRequest::Start { scratch } => {
                self.scratch = PathBuf::from(scratch);
                // The example client is this program: it owns the inboxes it reads.
                let executable = std::env::current_exe().ok();
                return DriverAnswer {
                    ok: executable.is_some(),
                    error: executable.is_none().then(|| "no executable path".into()),
                    executable: executable.map(|e| e.to_string_lossy().into_owned()),
                    launch_mode: Some(
                        "acc-example-driver: one inbox file per participant session".into(),
                    ),
                    ..DriverAnswer::default()
                };
            }
            DriverRequest::Session { participant } => self.session(&participant),
            DriverRequest::Busy { participant } => self
                .inbox(&participant)
                .and_then(|inbox| write(&busy_marker(&inbox), "")),
            DriverRequest::EndTurn { participant } => self.inbox(&participant).and_then(|inbox| {
                std::fs::remove_file(busy_marker(&inbox))
                    .map(|()| done())
                    .map_err(|e| format!("no turn was running: {e}"))
            }),
            DriverRequest::Look {
                participant,
                message_id,
                expect,
                wait_ms,
            } => self.inbox(&participant).map(|inbox| {
                let deadline = Instant::now() + Duration::from_millis(wait_ms);
                let mut found = lines_for(&inbox, &message_id);
                while found.len() < expect as usize && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                    found = lines_for(&inbox, &message_id);
                }
                DriverAnswer {
                    ok: true,
                    seen: Some(u32::try_from(found.len()).unwrap_or(u32::MAX)),
                    frames: found,
                    ..DriverAnswer::default()
                }
            }),
            DriverRequest::Stop { participant } => match self.sessions.remove(&participant) {
                Some(dir) => std::fs::remove_dir_all(&dir)
                    .map(|()| done())
                    .map_err(|e| format!("cannot end the session: {e}")),
                None => Err(format!("no session for {participant}")),
            },
            DriverRequest::Finish => Ok(done()),
        };
        result.unwrap_or_else(refused)
    }

    fn session(&mut self, participant: &str) -> Result<DriverAnswer, String> {
        if participant.is_empty() || !participant.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!("participant `{participant}` is not a plain name"));
        }
        let dir = self.scratch.join(participant);
        std::fs::create_dir_all(&dir).map_err(|e| format!("session folder: {e}"))?;
        let inbox = dir.join("inbox.jsonl");
        self.sessions.insert(participant.into(), dir);
        Ok(DriverAnswer {
            ok: true,
            endpoint: Some(serde_json::json!({ "file": inbox })),
            ..DriverAnswer::default()
        })
    }
}

fn write(path: &Path, text: &str) -> Result<DriverAnswer, String> {
    std::fs::write(path, text)
        .map(|()| done())
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn main() {
    let mut client = Client::default();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let (answer, finish) = match serde_json::from_str::<DriverRequest>(&line) {
            Ok(request) => {
                let finish = request == DriverRequest::Finish;
                (client.answer(request), finish)
            }
            Err(e) => (refused(format!("not a driver request: {e}")), false),
        };
        let text = serde_json::to_string(&answer).unwrap_or_default();
        if writeln!(stdout, "{text}")
            .and_then(|()| stdout.flush())
            .is_err()
            || finish
        {
            break;
        }
    }
}

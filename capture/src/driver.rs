//! Capture drivers: an adapter author's program that runs the author's client for the capture
//! script, spoken to with [`DriverRequest`]s on its stdin and [`DriverAnswer`]s on its stdout,
//! one JSON object a line (`docs/contracts.md`, "Capture drivers").
//!
//! The driver is named by `driver` in the adapter's contract; a bare name is looked for beside
//! the adapter's library, then on `PATH`. Every answer is awaited under a deadline; a driver
//! that does not answer in time, answers with something else, or exits fails the capture with
//! what it did. It is killed by its pid when the capture ends.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use acc_adapter_api::wire::{DriverAnswer, DriverRequest};

use crate::failed;
use crate::script::{Client, Look, Scratch, Session, Started};
use acc_core::error::AccResult;

/// How long a driver may take for any request but a look (which gets its wait on top).
const ANSWER: Duration = Duration::from_secs(60);

/// Where the driver `name` of an adapter loaded from `library` is: an absolute path as it is,
/// else beside the library, else on `PATH`.
pub fn resolve(name: &str, library: &Path) -> Option<PathBuf> {
    let path = Path::new(name);
    if path.is_absolute() {
        return path.is_file().then(|| path.to_path_buf());
    }
    if path.components().count() != 1 {
        return None;
    }
    library
        .parent()
        .map(|dir| dir.join(name))
        .filter(|p| p.is_file())
        .or_else(|| acc_clients::find_on_path(name))
}

/// A running driver.
pub struct Driver {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Driver {
    /// Start the driver at `path` (its stderr passes through to the capture's).
    pub fn spawn(path: &Path) -> AccResult<Self> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| failed("driver", format!("cannot start {}: {e}", path.display())))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let (send, lines) = channel();
        if let Some(stdout) = stdout {
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if send.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(Self {
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            child,
            stdin,
            lines,
        })
    }

    /// One request and its answer, within `budget`; an answer that is not `ok` is an error
    /// naming the request and the driver's reason.
    fn ask(&mut self, request: &DriverRequest, budget: Duration) -> AccResult<DriverAnswer> {
        let what = serde_json::to_string(request).unwrap_or_default();
        let written = self.stdin.as_mut().is_some_and(|stdin| {
            writeln!(stdin, "{what}")
                .and_then(|()| stdin.flush())
                .is_ok()
        });
        if !written {
            return Err(self.broken(&what, "its stdin is closed (it exited)"));
        }
        let line = match self.lines.recv_timeout(budget) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                return Err(self.broken(&what, &format!("no answer within {} s", budget.as_secs())));
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(self.broken(&what, "it exited without answering"));
            }
        };
        let answer: DriverAnswer = serde_json::from_str(&line).map_err(|e| {
            self.broken(
                &what,
                &format!("its answer is not a driver answer ({e}): {line:.200}"),
            )
        })?;
        if !answer.ok {
            let why = answer
                .error
                .clone()
                .unwrap_or_else(|| "no reason given".into());
            return Err(self.broken(&what, &format!("it refused: {why}")));
        }
        Ok(answer)
    }

    fn broken(&self, request: &str, why: &str) -> acc_core::error::AccError {
        failed(
            &format!("driver {}", self.name),
            format!("{request}: {why}"),
        )
    }
}

impl Client for Driver {
    fn driver(&self) -> String {
        self.name.clone()
    }

    fn start(&mut self, scratch: &Scratch) -> AccResult<Started> {
        let answer = self.ask(
            &DriverRequest::Start {
                scratch: scratch.client.to_string_lossy().into_owned(),
            },
            ANSWER,
        )?;
        let executable = answer
            .executable
            .ok_or_else(|| failed("driver", "`start` named no executable"))?;
        Ok(Started {
            executable: PathBuf::from(executable),
            launch_mode: answer
                .launch_mode
                .unwrap_or_else(|| format!("driven by {}", self.name)),
            notes: Vec::new(),
        })
    }

    fn session(&mut self, participant: &str) -> AccResult<Session> {
        let answer = self.ask(
            &DriverRequest::Session {
                participant: participant.into(),
            },
            ANSWER,
        )?;
        answer
            .endpoint
            .map(Session::Bind)
            .ok_or_else(|| failed("driver", "`session` gave no endpoint"))
    }

    fn busy(&mut self, participant: &str) -> AccResult<()> {
        self.ask(
            &DriverRequest::Busy {
                participant: participant.into(),
            },
            ANSWER,
        )
        .map(drop)
    }

    fn end_turn(&mut self, participant: &str) -> AccResult<()> {
        self.ask(
            &DriverRequest::EndTurn {
                participant: participant.into(),
            },
            ANSWER,
        )
        .map(drop)
    }

    fn look(
        &mut self,
        participant: &str,
        message_id: &str,
        expect: u32,
        wait: Duration,
    ) -> AccResult<Look> {
        let answer = self.ask(
            &DriverRequest::Look {
                participant: participant.into(),
                message_id: message_id.into(),
                expect,
                wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            },
            ANSWER + wait,
        )?;
        Ok(Look {
            seen: answer
                .seen
                .ok_or_else(|| failed("driver", "`look` gave no count"))?,
            after_turn_end: answer.after_turn_end,
            frames: answer.frames,
        })
    }

    fn stop(&mut self, participant: &str) -> AccResult<()> {
        self.ask(
            &DriverRequest::Stop {
                participant: participant.into(),
            },
            ANSWER,
        )
        .map(drop)
    }

    fn finish(&mut self) {
        let _ = self.ask(&DriverRequest::Finish, Duration::from_secs(10));
        self.stdin = None;
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! Capture the installed Codex: its protocol surface from its own generated schema, and the
//! `codex-app-server` delivery branches through a LocalDaemon the capture starts in a throwaway
//! `CODEX_HOME` (and stops again), whose model is the capture's loopback model API: turns
//! really run and end, so "after the turn" is observed, not assumed. No account is needed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use acc_clients::codex_daemon::{self, Daemon, client_message_id};
use acc_clients::run_bounded;
use serde_json::{Value, json};

use crate::failed;
use crate::model::ModelServer;
use crate::record::Finished;
use crate::script::{self, Client, Look, Scratch, Session, Started};
use acc_core::error::AccResult;

/// The methods the adapter calls, each of which the client's own schema must list.
pub const METHODS: &[&str] = &[
    "initialize",
    "thread/loaded/list",
    "thread/read",
    "thread/turns/list",
    "thread/queue/add",
    "thread/queue/list",
];
/// How long the capture waits to see a submission in a thread.
const WAIT: Duration = Duration::from_secs(10);
/// The `thread/queue/add` parameters the adapter sends.
pub const QUEUE_ADD_FIELDS: &[&str] = &["threadId", "input", "clientUserMessageId"];

/// Check the client's generated schema (experimental API included) for every method the
/// adapter uses and the shape of `thread/queue/add`; returns what is missing.
pub fn check_surface(codex: &Path, codex_home: &Path, out: &Path) -> Vec<String> {
    let mut command = Command::new(codex);
    command
        .args([
            "app-server",
            "generate-json-schema",
            "--experimental",
            "--out",
        ])
        .arg(out)
        .env("CODEX_HOME", codex_home);
    if !run_bounded(command, Duration::from_secs(120))
        .ok()
        .is_some_and(|o| o.status.success())
    {
        return vec!["`codex app-server generate-json-schema --experimental` failed".into()];
    }
    let requests = std::fs::read_to_string(out.join("ClientRequest.json")).unwrap_or_default();
    let Ok(schema) = serde_json::from_str::<Value>(&requests) else {
        return vec!["the generated ClientRequest.json is not json".into()];
    };
    let text = schema.to_string();
    let mut missing: Vec<String> = METHODS
        .iter()
        .filter(|m| !text.contains(&format!("\"{m}\"")))
        .map(|m| format!("the client's schema lists no `{m}` request"))
        .collect();
    let params = schema
        .pointer("/definitions/ThreadQueueAddParams/properties")
        .and_then(Value::as_object);
    for field in QUEUE_ADD_FIELDS {
        if !params.is_some_and(|p| p.contains_key(*field)) {
            missing.push(format!(
                "thread/queue/add takes no `{field}` in the client's schema"
            ));
        }
    }
    missing
}

/// A Codex daemon started in a `CODEX_HOME` of one's own (the capture's, a test's, a
/// benchmark's); stopped (bounded) and killed by pid when dropped.
#[derive(Debug)]
pub struct StartedDaemon {
    codex: PathBuf,
    home: PathBuf,
}

impl StartedDaemon {
    /// `codex app-server daemon start` with `CODEX_HOME=home` and `env` added to the daemon's
    /// environment (which its threads' hooks inherit), within 90 s.
    pub fn start(codex: &Path, home: &Path, env: &[(&str, &str)]) -> AccResult<Self> {
        let mut command = Command::new(codex);
        command
            .args(["app-server", "daemon", "start"])
            .env("CODEX_HOME", home)
            .envs(env.iter().copied());
        let outcome = run_bounded(command, Duration::from_secs(90));
        let daemon = Self {
            codex: codex.to_path_buf(),
            home: home.to_path_buf(),
        };
        let why = match &outcome {
            Ok(o) if String::from_utf8_lossy(&o.stdout).contains("\"socketPath\"") => {
                return Ok(daemon);
            }
            Ok(o) => format!(
                "{} without a socket path; it printed: {}",
                o.status,
                said(&o.stderr, &o.stdout)
            ),
            Err(acc_clients::Bounded::NotStarted) => {
                format!("`{}` could not be started", codex.display())
            }
            Err(acc_clients::Bounded::TimedOut) => "it did not finish within 90 s".to_string(),
        };
        Err(failed(
            "codex daemon",
            format!("`codex app-server daemon start` failed: {why}"),
        ))
    }

    /// The control socket.
    pub fn socket(&self) -> PathBuf {
        codex_daemon::control_socket(&self.home)
    }

    /// `codex app-server daemon stop` (bounded: a daemon with a running turn may not stop
    /// promptly), then SIGKILL to the daemon's and its updater's recorded pids.
    pub fn stop(&self) {
        let pids = codex_daemon::recorded_pids(&self.home);
        let mut command = Command::new(&self.codex);
        command
            .args(["app-server", "daemon", "stop"])
            .env("CODEX_HOME", &self.home);
        let _ = run_bounded(command, Duration::from_secs(15));
        for pid in pids {
            if let Some(pid) = i32::try_from(pid)
                .ok()
                .filter(|p| *p > 0)
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// What a command that failed printed, for its error: the end of its stderr (without the
/// stack backtrace Codex prints after its error, all `<unknown>` frames), else of its stdout,
/// on one line of at most 600 characters.
fn said(stderr: &[u8], stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(if stderr.trim_ascii().is_empty() {
        stdout
    } else {
        stderr
    });
    let before_backtrace = text.split("Stack backtrace:").next().unwrap_or_default();
    let line = before_backtrace
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let chars: Vec<char> = line.chars().collect();
    match chars.len() {
        0 => "nothing".to_string(),
        n if n > 600 => format!("…{}", chars[n - 600..].iter().collect::<String>()),
        _ => line,
    }
}

impl Drop for StartedDaemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The text of the turn that keeps the thread busy during the busy branch.
const BUSY_TURN: &str = "acc capture: a turn that keeps this thread busy";

/// Capture the installed `codex`.
pub fn capture_codex() -> AccResult<Finished> {
    let codex =
        acc_clients::find_on_path("codex").ok_or_else(|| failed("codex", "no `codex` on PATH"))?;
    let scratch = Scratch::new("codex")?;
    let mut client = CodexClient {
        codex,
        model: ModelServer::start(),
        home: scratch.client.join("codex-home"),
        project: scratch.project.clone(),
        daemon: None,
        rpc: None,
        thread: None,
        busy: None,
    };
    script::run(&mut client, "codex-app-server", &scratch)
}

/// The installed Codex, run as a LocalDaemon in the capture's own `CODEX_HOME` whose model is
/// the capture's loopback model API, so turns really run and end.
struct CodexClient {
    codex: PathBuf,
    model: ModelServer,
    home: PathBuf,
    project: PathBuf,
    daemon: Option<StartedDaemon>,
    rpc: Option<Daemon>,
    thread: Option<String>,
    /// The model request of the turn that keeps the thread busy.
    busy: Option<u64>,
}

impl CodexClient {
    fn rpc(&mut self) -> AccResult<&mut Daemon> {
        self.rpc
            .as_mut()
            .ok_or_else(|| failed("codex daemon", "not connected"))
    }

    fn thread(&self) -> AccResult<String> {
        self.thread
            .clone()
            .ok_or_else(|| failed("codex", "no thread was started"))
    }
}

/// The executable a running daemon really is (`/proc/<pid>/exe`), not the launcher that
/// started it.
fn daemon_executable(home: &Path) -> Option<PathBuf> {
    codex_daemon::recorded_pids(home)
        .into_iter()
        .find_map(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).ok())
}

impl Client for CodexClient {
    fn driver(&self) -> String {
        "acc-capture".into()
    }

    fn start(&mut self, scratch: &Scratch) -> AccResult<Started> {
        std::fs::create_dir_all(&self.home).map_err(|e| failed("codex home", e))?;
        std::fs::write(self.home.join("config.toml"), self.model.codex_config())
            .map_err(|e| failed("codex config", e))?;
        let notes = check_surface(&self.codex, &self.home, &scratch.client.join("schema"));
        let daemon = StartedDaemon::start(
            &self.codex,
            &self.home,
            &[("ACC_TEST_MODEL_KEY", "acc-capture")],
        )?;
        let executable = daemon_executable(&self.home)
            .ok_or_else(|| failed("codex daemon", "its process is not to be found"))?;
        self.rpc = Some(
            Daemon::connect(&daemon.socket(), Duration::from_secs(20))
                .map_err(|e| failed("codex daemon", e))?,
        );
        self.daemon = Some(daemon);
        Ok(Started {
            executable,
            launch_mode: "app-server daemon in a throwaway CODEX_HOME, model API on loopback"
                .into(),
            notes,
        })
    }

    fn session(&mut self, _participant: &str) -> AccResult<Session> {
        let cwd = self.project.clone();
        let thread = self
            .rpc()?
            .call("thread/start", json!({ "cwd": cwd }))
            .ok()
            .and_then(|t| {
                t.pointer("/thread/id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .ok_or_else(|| failed("codex daemon", "thread/start failed"))?;
        self.thread = Some(thread.clone());
        Ok(Session::Bind(acc_core::wire::json(
            &acc_app::wire::CodexEndpoint {
                codex_home: &self.home,
                thread_id: &thread,
                cwd: &self.project,
            },
        )))
    }

    fn busy(&mut self, _participant: &str) -> AccResult<()> {
        let thread = self.thread()?;
        let rpc = self
            .rpc
            .as_mut()
            .ok_or_else(|| failed("codex daemon", "not connected"))?;
        let seq = script::start_held_turn(&self.model, BUSY_TURN, "codex", || {
            rpc.call(
                "turn/start",
                json!({ "threadId": thread, "input": [{ "type": "text", "text": BUSY_TURN }] }),
            )
            .map(drop)
            .map_err(|e| failed("codex turn/start", e))
        })?;
        self.busy = Some(seq);
        Ok(())
    }

    fn end_turn(&mut self, _participant: &str) -> AccResult<()> {
        let seq = self
            .busy
            .ok_or_else(|| failed("codex", "no turn is running"))?;
        script::held_turn_answered(&self.model, seq, "codex")
    }

    fn look(
        &mut self,
        _participant: &str,
        message_id: &str,
        expect: u32,
        wait: Duration,
    ) -> AccResult<Look> {
        let thread = self.thread()?;
        let client_id = client_message_id(message_id);
        let deadline = Instant::now() + wait;
        // The last answer Codex gave; a read while it is between states (a submission handed
        // from the queue to a turn) tells nothing and is asked again, never taken for none.
        let mut known: Option<Vec<codex_daemon::Submission>> = None;
        loop {
            if let Some(found) = self
                .rpc()?
                .lookup(&thread, &client_id, Duration::from_secs(2))
                .map_err(|e| failed("codex lookup", e))?
                .known()
            {
                known = Some(found);
            }
            let enough = known.as_ref().is_some_and(|f| f.len() >= expect as usize);
            if enough || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let found = known.ok_or_else(|| {
            failed(
                "codex lookup",
                format!("the thread never said whether it holds {client_id}"),
            )
        })?;
        let needle = format!("({message_id})");
        // A message taken into a turn reaches the model; when a busy turn ran, its order
        // against that turn's end is what the busy branch claims.
        let after_turn_end = match self.busy {
            Some(seq) if !found.is_empty() => {
                let left = deadline.saturating_duration_since(Instant::now());
                self.model.wait_for_request(&needle, left);
                self.model.arrived_after(&needle, seq)
            }
            _ => None,
        };
        Ok(Look {
            seen: u32::try_from(found.len()).unwrap_or(u32::MAX),
            after_turn_end,
            frames: found
                .iter()
                .map(|f| json!({ "clientUserMessageId": client_id, "queued": f.queued, "text": f.text }))
                .collect(),
        })
    }

    fn stop(&mut self, _participant: &str) -> AccResult<()> {
        self.rpc = None;
        let Some(daemon) = self.daemon.take() else {
            return Ok(());
        };
        daemon.stop();
        let gone = Instant::now();
        while Daemon::connect(&daemon.socket(), Duration::from_secs(1)).is_ok() {
            if gone.elapsed() > WAIT {
                return Err(failed("codex daemon", "it did not stop"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    fn finish(&mut self) {
        self.rpc = None;
        self.daemon = None;
    }
}

#[cfg(test)]
mod tests {
    use super::said;

    #[test]
    fn a_failed_commands_words_are_its_error_on_one_bounded_line() {
        let disk_full = b"WARNING: proceeding\nInstalling daemon from CLI version 0.169.0...\nError: No space left on device (os error 28)\n\nStack backtrace:\n   0: <unknown>\n   1: <unknown>\n";
        let long = "x".repeat(700);
        let rows: [(&str, &[u8], &[u8], &str); 4] = [
            (
                "codex's error, its backtrace left out",
                disk_full,
                b"",
                "WARNING: proceeding Installing daemon from CLI version 0.169.0... Error: No space left on device (os error 28)",
            ),
            (
                "stdout when stderr is empty",
                b" \n",
                b"{\"status\":\"odd\"}\n",
                "{\"status\":\"odd\"}",
            ),
            ("nothing printed", b"", b"", "nothing"),
            ("the end of a long text", long.as_bytes(), b"", ""),
        ];
        for (what, stderr, stdout, want) in rows {
            let got = said(stderr, stdout);
            if want.is_empty() {
                assert_eq!(got, format!("…{}", "x".repeat(600)), "{what}");
            } else {
                assert_eq!(got, want, "{what}");
            }
        }
    }
}

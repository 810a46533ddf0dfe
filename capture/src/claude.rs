//! Capture the installed Claude Code: the session registry fields, socket mode and hook
//! environment the `claude-inbox` adapter relies on, and the wake branches, by running the real
//! `claude` in a throwaway `HOME` (ACC's hooks installed there with live delivery `all`)
//! against a model API this process serves on loopback.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::failed;
use crate::model::ModelServer;
use crate::record::Finished;
use crate::script::{self, Client, Look, Scratch, ScratchPaths, Session, Started};
use acc_app::workspace;
use acc_core::clock::SystemClock;
use acc_core::error::AccResult;
use acc_core::{Caller, Core};

/// The registry fields the adapter reads.
pub const REGISTRY_FIELDS: &[&str] = &["pid", "sessionId", "messagingSocketPath", "version"];

/// What every wake for `message_id` says (the fixed text of `acc_clients::wake::wake_text`).
pub fn wake_needle(message_id: &str) -> String {
    format!("a message for you is waiting ({message_id})")
}

/// What a client's session registry for `pid` under `dir` lacks of `fields`, and what is wrong
/// with the socket its `socket_field` names: the surface a wake adapter relies on.
pub(crate) fn registry_notes(
    dir: &std::path::Path,
    pid: i64,
    fields: &[&str],
    socket_field: &str,
) -> Vec<String> {
    let Ok(registry) = acc_clients::wake::session_registry(dir, pid) else {
        return vec![format!("no session registry file for pid {pid}")];
    };
    let mut notes: Vec<String> = fields
        .iter()
        .filter(|field| registry.get(**field).is_none())
        .map(|field| format!("the session registry has no `{field}`"))
        .collect();
    let socket = registry
        .get(socket_field)
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Err(why) = acc_clients::wake::private_socket(std::path::Path::new(socket)) {
        notes.push(why.into());
    }
    notes
}

/// A `claude` process; killed by pid when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn wait_for(deadline: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

pub(crate) fn quoted_after<'a>(text: &'a str, flag: &str) -> Option<&'a str> {
    let start = text.find(flag)? + flag.len();
    let rest = &text[start..];
    let end = rest.find('\'')?;
    Some(&rest[..end])
}

/// The text of the turn that keeps the session busy during the busy branch.
const BUSY_TURN: &str = "acc capture: a turn that keeps this session busy";
/// How long a step waits for Claude Code.
const WAIT: Duration = Duration::from_secs(60);

/// Capture the installed `claude`.
pub fn capture_claude() -> AccResult<Finished> {
    let claude = acc_clients::find_on_path("claude")
        .ok_or_else(|| failed("claude", "no `claude` on PATH"))?;
    let scratch = Scratch::new("claude")?;
    let mut client = ClaudeClient {
        claude,
        model: ModelServer::start(),
        scratch: scratch.clone_paths(),
        running: None,
        stdin: None,
        busy: None,
        ended: Arc::new(AtomicUsize::new(0)),
        ended_before_busy: 0,
    };
    script::run(&mut client, "claude-inbox", &scratch)
}

/// The installed Claude Code in print mode with stream-json input held open, in a throwaway
/// `HOME` with ACC's hooks installed (live delivery `all`), its model the capture's loopback
/// model API.
struct ClaudeClient {
    claude: PathBuf,
    model: ModelServer,
    scratch: ScratchPaths,
    running: Option<Running>,
    stdin: Option<ChildStdin>,
    /// The model request of the turn that keeps the session busy.
    busy: Option<u64>,
    /// How many turns Claude Code has ended (`result` lines on its stream-json output).
    ended: Arc<AtomicUsize>,
    /// That count when the busy turn started.
    ended_before_busy: usize,
}

impl ClaudeClient {
    fn home(&self) -> PathBuf {
        self.scratch.client.join("home")
    }

    fn say(&mut self, text: &str) -> AccResult<()> {
        say_to(&mut self.stdin, text)
    }
}

/// Whether `participant`'s session in the scratch workspace is bound to `adapter` (the
/// SessionStart hook's work, or a later prompt hook's when that one could not bind).
pub(crate) fn bound(scratch: &ScratchPaths, participant: &str, adapter: &str) -> bool {
    in_room(scratch, participant, Some(adapter))
}

/// Whether `participant` has a session in the scratch workspace (bound to `adapter`, if named).
pub(crate) fn in_room(scratch: &ScratchPaths, participant: &str, adapter: Option<&str>) -> bool {
    let Ok(ws) = workspace::discover(&scratch.project) else {
        return false;
    };
    Core::new(
        ws,
        scratch.data.join("acc"),
        Arc::new(SystemClock::default()),
        acc_app::process::liveness(),
    )
    .and_then(|mut core| core.status(false))
    .is_ok_and(|report| {
        report.sessions.iter().any(|s| {
            s.session.participant_id == participant
                && adapter.is_none_or(|adapter| s.bindings.iter().any(|b| b.adapter_id == adapter))
        })
    })
}

/// One user turn on Claude Code's stream-json input.
fn say_to(stdin: &mut Option<ChildStdin>, text: &str) -> AccResult<()> {
    let line = acc_core::wire::json(&crate::wire::UserLine::new(text));
    let stdin = stdin
        .as_mut()
        .ok_or_else(|| failed("claude", "not running"))?;
    writeln!(stdin, "{line}")
        .and_then(|()| stdin.flush())
        .map_err(|e| failed("claude stdin", e))
}

/// The new input of each main-loop model request (what came after the model's last answer:
/// the user's or the wake's line and the hooks' context) that holds any of `needles`.
pub(crate) fn inputs_with(model: &ModelServer, needles: &[&str]) -> Vec<Value> {
    model
        .model_requests()
        .iter()
        .filter(|r| r.is_main_loop())
        .filter_map(|r| {
            let body: Value = serde_json::from_str(&r.body).ok()?;
            let messages = body.get("messages")?.as_array()?;
            let mut input: Vec<Value> = messages
                .iter()
                .rev()
                .take_while(|m| m.get("role").and_then(Value::as_str) != Some("assistant"))
                .cloned()
                .collect();
            input.reverse();
            let input = Value::Array(input);
            let text = input.to_string();
            needles.iter().any(|n| text.contains(n)).then_some(input)
        })
        .collect()
}

impl Client for ClaudeClient {
    fn driver(&self) -> String {
        "acc-capture".into()
    }

    fn start(&mut self, _scratch: &Scratch) -> AccResult<Started> {
        let home = self.home();
        std::fs::create_dir_all(home.join(".claude")).map_err(|e| failed("home", e))?;
        crate::install_hooks(
            "claude-code",
            &home,
            &self.scratch.data,
            &["--delivery", "all"],
        )?;
        let executable = std::fs::canonicalize(&self.claude).map_err(|e| failed("claude", e))?;
        Ok(Started {
            executable,
            launch_mode: "print mode with stream-json input held open, model API on loopback"
                .into(),
            notes: Vec::new(),
        })
    }

    fn session(&mut self, participant: &str) -> AccResult<Session> {
        let home = self.home();
        let mut child = Command::new(&self.claude)
            .args([
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
            ])
            .current_dir(&self.scratch.project)
            .env("HOME", &home)
            // Claude Code's messaging socket goes with the scratch.
            .env("TMPDIR", self.scratch.tmp())
            .env("ACC_DATA_HOME", &self.scratch.data)
            .env("ACC_PARTICIPANT", participant)
            .env("ANTHROPIC_API_KEY", "acc-capture-key")
            .env("ANTHROPIC_BASE_URL", &self.model.base_url)
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| failed("claude", e))?;
        self.stdin = child.stdin.take();
        if let Some(stdout) = child.stdout.take() {
            let ended = self.ended.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let kind = serde_json::from_str::<Value>(&line)
                        .ok()
                        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string));
                    if kind.as_deref() == Some("result") {
                        ended.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
        self.running = Some(Running(child));
        self.say("hello")?;
        if !wait_for(WAIT, || {
            bound(&self.scratch, "bob", "claude-inbox") && self.ended.load(Ordering::SeqCst) >= 1
        }) {
            return Err(failed(
                "claude",
                "the SessionStart hook did not bind the session to claude-inbox, or the first turn did not end, within 60 s",
            ));
        }
        // The credentials the hook gave the model, once the first turn has ended.
        let credentials = self
            .model
            .wait_for_request("--generation '", WAIT)
            .and_then(|first| {
                self.model.wait_answered(first.seq, WAIT)?;
                let session = quoted_after(&first.body, "--session '")?;
                let generation = quoted_after(&first.body, "--generation '")?;
                Some(Caller {
                    session_id: session.to_string(),
                    generation: generation.to_string(),
                })
            })
            .ok_or_else(|| failed("claude", "the model never saw the session's credentials"))?;
        Ok(Session::Hooked(credentials))
    }

    fn surface(&mut self) -> Vec<String> {
        let pid = self.running.as_ref().map_or(0, |r| r.0.id());
        registry_notes(
            &self.home().join(".claude"),
            i64::from(pid),
            REGISTRY_FIELDS,
            "messagingSocketPath",
        )
    }

    fn busy(&mut self, _participant: &str) -> AccResult<()> {
        self.ended_before_busy = self.ended.load(Ordering::SeqCst);
        let stdin = &mut self.stdin;
        let seq = script::start_held_turn(&self.model, BUSY_TURN, "claude", || {
            say_to(stdin, BUSY_TURN)
        })?;
        self.busy = Some(seq);
        Ok(())
    }

    fn end_turn(&mut self, _participant: &str) -> AccResult<()> {
        let seq = self
            .busy
            .ok_or_else(|| failed("claude", "no turn is running"))?;
        let before = self.ended_before_busy;
        script::held_turn_answered(&self.model, seq, "claude")?;
        if !wait_for(WAIT, || self.ended.load(Ordering::SeqCst) > before) {
            return Err(failed("claude", "the busy turn never ended"));
        }
        Ok(())
    }

    fn look(
        &mut self,
        _participant: &str,
        message_id: &str,
        expect: u32,
        wait: Duration,
    ) -> AccResult<Look> {
        // A wake carries only the message id; the message itself reaches the model once, in
        // the `acc-peer-message` block a prompt hook adds (which records it). What counts is the
        // message: a repeated wake that runs a turn carrying nothing is in the frames, not a copy.
        let wake = wake_needle(message_id);
        let block = format!("message={message_id} kind=");
        let deadline = Instant::now() + wait;
        let (inputs, seen) = loop {
            let inputs = inputs_with(&self.model, &[&wake, &block]);
            let seen = inputs
                .iter()
                .filter(|i| i.to_string().contains(&block))
                .count();
            if seen >= expect as usize || Instant::now() >= deadline {
                break (inputs, seen);
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let after_turn_end = match self.busy {
            Some(seq) if seen > 0 => self.model.arrived_after(&wake, seq),
            _ => None,
        };
        Ok(Look {
            seen: u32::try_from(seen).unwrap_or(u32::MAX),
            after_turn_end,
            frames: inputs,
        })
    }

    fn stop(&mut self, _participant: &str) -> AccResult<()> {
        self.stdin = None;
        self.running = None;
        Ok(())
    }

    fn finish(&mut self) {
        self.stdin = None;
        self.running = None;
    }
}

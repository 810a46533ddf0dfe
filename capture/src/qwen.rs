//! Capture the installed Qwen Code: the session registry fields and socket mode the
//! `qwen-inbox` adapter relies on, and the wake branches, by running the real `qwen` terminal
//! interface on a pseudo-terminal ([`crate::tui`]) in a throwaway `HOME` (ACC's hooks installed
//! there with live delivery `all`) against a Chat Completions model this process serves on
//! loopback. Only the terminal interface opens the cross-session socket.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::claude::{
    bound, in_room, inputs_with, quoted_after, registry_notes, wait_for, wake_needle,
};
use crate::failed;
use crate::guard::Writer;
use crate::model::ModelServer;
use crate::record::Finished;
use crate::script::{self, Client, Look, Scratch, ScratchPaths, Session, Started};
use crate::tui::Tui;
use acc_core::Caller;
use acc_core::error::AccResult;

/// The registry fields the adapter reads.
pub const REGISTRY_FIELDS: &[&str] = &["pid", "sessionId", "kind", "ipcPath", "qwenVersion"];
/// The text of the turn that keeps the session busy during the busy branch.
const BUSY_TURN: &str = "acc capture: a turn that keeps this session busy";
/// How long a step waits for Qwen Code.
const WAIT: Duration = Duration::from_secs(60);

/// Capture the installed `qwen`.
pub fn capture_qwen() -> AccResult<Finished> {
    let qwen =
        acc_clients::find_on_path("qwen").ok_or_else(|| failed("qwen", "no `qwen` on PATH"))?;
    let scratch = Scratch::new("qwen")?;
    let mut client = QwenClient {
        qwen,
        model: ModelServer::start(),
        scratch: scratch.clone_paths(),
        tui: None,
        pid: 0,
        busy: None,
    };
    script::run(&mut client, "qwen-inbox", &scratch)
}

/// The `qwen` terminal interface of `participant` in `writer`'s home and project, once its first
/// turn (`hello`) has shown the model the session's credentials (returned) and ACC has bound
/// the session to `qwen-inbox`: at its SessionStart hook, or at the prompt hook of that turn
/// when SessionStart could not (as on a loaded machine, where a hook may run out of its budget).
pub fn start_bound(
    writer: &Writer,
    model: &ModelServer,
    participant: &str,
) -> AccResult<(Tui, Caller)> {
    let mut command = writer.interactive()?;
    command.env("ACC_PARTICIPANT", participant);
    let mut tui = Tui::start(&command)?;
    let scratch = ScratchPaths {
        project: writer.project.clone(),
        data: writer.data.clone(),
        client: writer.home.clone(),
    };
    let unbound = |what: &str, tui: &Tui| {
        failed(
            "qwen",
            format!("{what} within 60 s; the screen: {}", tui.screen()),
        )
    };
    // The session is in the room once SessionStart ran (the prompt may not take input yet).
    if !wait_for(WAIT, || in_room(&scratch, participant, None)) {
        return Err(unbound("the SessionStart hook did not run", &tui));
    }
    let credentials = first_turn(&mut tui, model, "qwen", INPUT_PLACEHOLDER)?;
    if !wait_for(WAIT, || bound(&scratch, participant, "qwen-inbox")) {
        return Err(unbound("no hook bound the session to qwen-inbox", &tui));
    }
    Ok((tui, credentials))
}

/// What Qwen Code's prompt shows while it is empty and takes input.
const INPUT_PLACEHOLDER: &str = "Type your message or @path/to/file";

/// Type the session's first prompt (`hello`) once `prompt` shows it takes input, and return the credentials ACC's SessionStart
/// context gave the model with it, once the model has answered.
pub(crate) fn first_turn(
    tui: &mut Tui,
    model: &ModelServer,
    what: &str,
    prompt: &str,
) -> AccResult<Caller> {
    // Both clients drop keys typed before they take input (Qwen Code until its configuration
    // is initialized, its MCP servers connected): `prompt` is drawn only once they do.
    if !wait_for(WAIT, || tui.screen().contains(prompt)) {
        return Err(failed(
            what,
            format!(
                "the prompt never took input within 60 s; the screen: {}",
                tui.screen()
            ),
        ));
    }
    tui.type_line("hello")?;
    model
        .wait_for_request("--generation '", WAIT)
        .and_then(|first| {
            model.wait_answered(first.seq, WAIT)?;
            let session = quoted_after(&first.body, "--session '")?;
            let generation = quoted_after(&first.body, "--generation '")?;
            Some(Caller {
                session_id: session.to_string(),
                generation: generation.to_string(),
            })
        })
        .ok_or_else(|| {
            failed(
                what,
                format!(
                    "the model never saw the session's credentials; the screen: {}",
                    tui.screen()
                ),
            )
        })
}

/// The main-loop model requests whose new input is the wake for `message_id`.
pub fn wakes(model: &ModelServer, message_id: &str) -> Vec<Value> {
    inputs_with(model, &[&wake_needle(message_id)])
}

/// What a terminal woken by wake lines shows of `message_id`: the model requests whose new input
/// is its wake, waiting up to `wait` for `expect` of them, and whether the first came after the
/// busy turn (`busy`, its model request) ended. Shared by the Qwen Code and OpenCode captures.
pub(crate) fn look_for_wakes(
    model: &ModelServer,
    busy: Option<u64>,
    message_id: &str,
    expect: u32,
    wait: Duration,
) -> Look {
    let deadline = Instant::now() + wait;
    let inputs = loop {
        let inputs = wakes(model, message_id);
        if inputs.len() >= expect as usize || Instant::now() >= deadline {
            break inputs;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let after_turn_end = match busy {
        Some(seq) if !inputs.is_empty() => model.arrived_after(&wake_needle(message_id), seq),
        _ => None,
    };
    Look {
        seen: u32::try_from(inputs.len()).unwrap_or(u32::MAX),
        after_turn_end,
        frames: inputs,
    }
}

/// The installed Qwen Code's terminal interface, its model the capture's loopback model API.
struct QwenClient {
    qwen: PathBuf,
    model: ModelServer,
    scratch: ScratchPaths,
    tui: Option<Tui>,
    /// The process that runs the session, as its SessionStart hook saw it (Qwen Code starts
    /// itself again under its launcher, so it is not the terminal's first process).
    pid: i64,
    /// The model request of the turn that keeps the session busy.
    busy: Option<u64>,
}

impl QwenClient {
    /// Where the capture's own SessionStart hook writes the session's endpoint.
    fn endpoint_file(&self) -> PathBuf {
        self.scratch.client.join("endpoint")
    }

    /// Qwen Code in the scratch, its temporary folder there too (its cross-session socket goes
    /// there and goes with the scratch).
    fn writer(&self) -> Writer {
        let tmp = self.scratch.tmp();
        Writer {
            client: acc_clients::Client::Qwen,
            exe: self.qwen.clone(),
            home: self.scratch.client.join("home"),
            project: self.scratch.project.clone(),
            data: self.scratch.data.clone(),
            base_url: self.model.base_url.clone(),
            env: vec![("TMPDIR".into(), tmp.to_string_lossy().into_owned())],
        }
    }
}

impl Client for QwenClient {
    fn driver(&self) -> String {
        "acc-capture".into()
    }

    fn start(&mut self, _scratch: &Scratch) -> AccResult<Started> {
        let writer = self.writer();
        writer.prepare_home(&self.model)?;
        // The capture's own SessionStart hook, before ACC's: what Qwen Code gives the
        // processes it starts. The capture binds with it under its declared admission, since
        // ACC's hooks admit only a version a capture already backs.
        let settings = writer.home.join(".qwen/settings.json");
        let command = format!(
            "umask 077; printf '%s\\n' \"$QWEN_CODE_MESSAGING_SOCKET\" \"$QWEN_CODE_MESSAGING_TOKEN\" \"$PPID\" \"$QWEN_CODE_SESSION_ID\" > {}",
            acc_clients::render::shell_quote(&self.endpoint_file().to_string_lossy())
        );
        let hooks = serde_json::to_string(&crate::wire::QwenHooks {
            session_start: [crate::wire::QwenHookGroup {
                hooks: [crate::wire::QwenHookCommand {
                    kind: "command",
                    command: &command,
                }],
            }],
        })
        .map_err(|e| failed("qwen settings", e))?;
        let text = std::fs::read_to_string(&settings).map_err(|e| failed("qwen settings", e))?;
        let text = text
            .trim_end()
            .strip_suffix('}')
            .map(|head| format!("{},\n  \"hooks\": {hooks}\n}}\n", head.trim_end()))
            .ok_or_else(|| failed("qwen settings", "not a JSON object"))?;
        std::fs::write(&settings, text).map_err(|e| failed("qwen settings", e))?;
        crate::install_hooks(
            "qwen",
            &writer.home,
            &self.scratch.data,
            &["--delivery", "all"],
        )?;
        let executable = std::fs::canonicalize(&self.qwen).map_err(|e| failed("qwen", e))?;
        Ok(Started {
            executable,
            launch_mode:
                "terminal interface on a pseudo-terminal, Chat Completions model API on loopback"
                    .into(),
            notes: Vec::new(),
        })
    }

    fn session(&mut self, participant: &str) -> AccResult<Session> {
        let mut command = self.writer().interactive()?;
        command.env("ACC_PARTICIPANT", participant);
        let mut tui = Tui::start(&command)?;
        let file = self.endpoint_file();
        let lines = || {
            std::fs::read_to_string(&file)
                .ok()
                .filter(|t| t.lines().count() == 4)
        };
        if !wait_for(WAIT, || lines().is_some()) {
            return Err(failed(
                "qwen",
                format!(
                    "its SessionStart hook did not run within 60 s; the screen: {}",
                    tui.screen()
                ),
            ));
        }
        let text = lines().unwrap_or_default();
        let fields: Vec<&str> = text.lines().collect();
        self.pid = fields[2]
            .parse::<i64>()
            .map_err(|e| failed("qwen hook pid", e))?;
        let credentials = first_turn(&mut tui, &self.model, "qwen", INPUT_PLACEHOLDER)?;
        self.tui = Some(tui);
        let qwen_home = self.writer().home.join(".qwen");
        let endpoint = serde_json::to_value(acc_app::wire::QwenInboxEndpoint {
            socket: fields[0],
            token: fields[1],
            pid: self.pid,
            session_id: fields[3],
            qwen_home: &qwen_home,
        })
        .map_err(|e| failed("qwen endpoint", e))?;
        Ok(Session::HookedAt(credentials, endpoint))
    }

    fn surface(&mut self) -> Vec<String> {
        registry_notes(
            &self.writer().home.join(".qwen"),
            self.pid,
            REGISTRY_FIELDS,
            "ipcPath",
        )
    }

    fn busy(&mut self, _participant: &str) -> AccResult<()> {
        let tui = self
            .tui
            .as_mut()
            .ok_or_else(|| failed("qwen", "not running"))?;
        let seq =
            script::start_held_turn(&self.model, BUSY_TURN, "qwen", || tui.type_line(BUSY_TURN))?;
        self.busy = Some(seq);
        Ok(())
    }

    fn end_turn(&mut self, _participant: &str) -> AccResult<()> {
        let seq = self
            .busy
            .ok_or_else(|| failed("qwen", "no turn is running"))?;
        script::held_turn_answered(&self.model, seq, "qwen")
    }

    fn look(
        &mut self,
        _participant: &str,
        message_id: &str,
        expect: u32,
        wait: Duration,
    ) -> AccResult<Look> {
        // The woken turn runs no prompt hook (Qwen Code 0.24.4 runs UserPromptSubmit for what
        // the user submits, not for a cross-session message), so what reaches the model is the
        // wake itself: the copies counted are the turns that carried it.
        Ok(look_for_wakes(
            &self.model,
            self.busy,
            message_id,
            expect,
            wait,
        ))
    }

    fn stop(&mut self, _participant: &str) -> AccResult<()> {
        self.tui = None;
        Ok(())
    }

    fn finish(&mut self) {
        self.tui = None;
    }
}

//! Capture the installed OpenCode with ACC's plugin: the wake socket the `opencode-plugin`
//! adapter relies on, and the wake branches, by running the real `opencode` terminal interface
//! on a pseudo-terminal ([`crate::tui`]) in a throwaway `HOME` (ACC's plugin installed there
//! with live delivery `all`) against a Chat Completions model this process serves on loopback.
//! Headless `opencode run` ends with its turn, so only the terminal interface has an idle
//! session to wake.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::claude::wait_for;
use crate::failed;
use crate::guard::{OPENCODE_SEED, Writer};
use crate::model::ModelServer;
use crate::qwen::{first_turn, look_for_wakes};
use crate::record::Finished;
use crate::script::{self, Client, Look, Scratch, ScratchPaths, Session, Started};
use crate::tui::Tui;
use acc_core::error::AccResult;

/// The text of the turn that keeps the session busy during the busy branch.
const BUSY_TURN: &str = "acc capture: a turn that keeps this session busy";
/// What OpenCode's prompt shows while it is empty and takes input.
pub const PROMPT: &str = "Ask anything";
/// How long a step waits for OpenCode.
const WAIT: Duration = Duration::from_secs(60);

/// Capture the installed `opencode`.
pub fn capture_opencode() -> AccResult<Finished> {
    let opencode = acc_clients::find_on_path("opencode")
        .ok_or_else(|| failed("opencode", "no `opencode` on PATH"))?;
    let scratch = Scratch::new("opencode")?;
    let mut client = OpenCodeClient {
        opencode,
        model: ModelServer::start(),
        scratch: scratch.clone_paths(),
        tui: None,
        endpoint: None,
        busy: None,
    };
    script::run(&mut client, "opencode-plugin", &scratch)
}

/// The wake socket ACC's plugin in the OpenCode process `pid` listens on, under `tmp` (the
/// temp folder OpenCode runs with).
pub fn wake_socket(tmp: &Path, pid: i64) -> PathBuf {
    tmp.join(format!("acc-opencode-{}", acc_clients::wake::current_uid()))
        .join(format!("{pid}.sock"))
}

/// Ask ACC's plugin on `socket` who it is: its answer (`pid`, the sessions it met).
pub fn hello(socket: &Path) -> AccResult<Value> {
    let what = |e: std::io::Error| failed("opencode wake socket", e);
    let mut stream = std::os::unix::net::UnixStream::connect(socket).map_err(what)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .map_err(what)?;
    let request = serde_json::to_string(&crate::wire::PluginHello { kind: "hello" })
        .map_err(|e| failed("opencode wake socket", e))?;
    stream
        .write_all(format!("{request}\n").as_bytes())
        .map_err(what)?;
    let mut text = String::new();
    stream
        .take(65_536)
        .read_to_string(&mut text)
        .map_err(what)?;
    serde_json::from_str(text.trim()).map_err(|e| failed("opencode wake socket", e))
}

/// OpenCode's terminal interface started by `command`, once it shows its prompt (what is typed
/// before then is lost).
pub fn ready(command: &std::process::Command) -> AccResult<Tui> {
    ready_showing(command, &[PROMPT])
}

/// OpenCode's terminal interface started by `command`, once its screen shows each of `cues`: a
/// resumed conversation shows its turns and no empty prompt's placeholder.
pub fn ready_showing(command: &std::process::Command, cues: &[&str]) -> AccResult<Tui> {
    let tui = Tui::start(command)?;
    if !wait_for(WAIT, || {
        let screen = tui.screen();
        cues.iter().all(|cue| screen.contains(cue))
    }) {
        return Err(failed(
            "opencode",
            format!("its prompt never showed; the screen: {}", tui.screen()),
        ));
    }
    Ok(tui)
}

/// The installed OpenCode's terminal interface, its model the capture's loopback model API.
struct OpenCodeClient {
    opencode: PathBuf,
    model: ModelServer,
    scratch: ScratchPaths,
    tui: Option<Tui>,
    /// The socket, pid and session the plugin answered for.
    endpoint: Option<(PathBuf, i64, String)>,
    /// The model request of the turn that keeps the session busy.
    busy: Option<u64>,
}

impl OpenCodeClient {
    fn writer(&self) -> Writer {
        let mut env = vec![(
            "TMPDIR".to_string(),
            self.scratch.tmp().to_string_lossy().into_owned(),
        )];
        if let Some(seed) = std::env::var_os(OPENCODE_SEED) {
            env.push((OPENCODE_SEED.into(), seed.to_string_lossy().into_owned()));
        }
        Writer {
            client: acc_clients::Client::OpenCode,
            exe: self.opencode.clone(),
            home: self.scratch.client.join("home"),
            project: self.scratch.project.clone(),
            data: self.scratch.data.clone(),
            base_url: self.model.base_url.clone(),
            env,
        }
    }

    /// The one wake socket in the temp folder, once the plugin listens.
    fn find_socket(&self) -> Option<(PathBuf, i64)> {
        let folder = wake_socket(&self.scratch.tmp(), 0);
        let folder = folder.parent()?;
        std::fs::read_dir(folder).ok()?.flatten().find_map(|entry| {
            let path = entry.path();
            let pid = path
                .file_name()?
                .to_str()?
                .strip_suffix(".sock")?
                .parse()
                .ok()?;
            Some((path, pid))
        })
    }
}

impl Client for OpenCodeClient {
    fn driver(&self) -> String {
        "acc-capture".into()
    }

    fn start(&mut self, _scratch: &Scratch) -> AccResult<Started> {
        let writer = self.writer();
        writer.prepare_home(&self.model)?;
        crate::install_hooks(
            "opencode",
            &writer.home,
            &self.scratch.data,
            &["--delivery", "all"],
        )?;
        let executable =
            std::fs::canonicalize(&self.opencode).map_err(|e| failed("opencode", e))?;
        Ok(Started {
            executable,
            launch_mode:
                "terminal interface on a pseudo-terminal with ACC's plugin, Chat Completions model API on loopback"
                    .into(),
            notes: Vec::new(),
        })
    }

    fn session(&mut self, participant: &str) -> AccResult<Session> {
        let mut command = self.writer().interactive()?;
        command.env("ACC_PARTICIPANT", participant);
        let mut tui = ready(&command)?;
        // The plugin meets the session (and runs ACC's SessionStart) at its first turn.
        let credentials = first_turn(&mut tui, &self.model, "opencode", PROMPT)?;
        let mut found = None;
        let mut session = None;
        let met = wait_for(WAIT, || {
            found = self.find_socket();
            session = found
                .as_ref()
                .and_then(|(socket, _)| hello(socket).ok())
                .and_then(|answer| answer["sessions"][0].as_str().map(str::to_string));
            session.is_some()
        });
        let (Some((socket, pid)), Some(session), true) = (found, session, met) else {
            return Err(failed(
                "opencode",
                format!(
                    "ACC's plugin never answered for a session on its wake socket; the screen: {}",
                    tui.screen()
                ),
            ));
        };
        let endpoint = serde_json::to_value(acc_app::wire::OpenCodePluginEndpoint {
            socket: &socket.to_string_lossy(),
            pid,
            session_id: &session,
        })
        .map_err(|e| failed("opencode endpoint", e))?;
        self.endpoint = Some((socket, pid, session));
        self.tui = Some(tui);
        Ok(Session::HookedAt(credentials, endpoint))
    }

    fn surface(&mut self) -> Vec<String> {
        let Some((socket, pid, session)) = self.endpoint.clone() else {
            return vec!["no wake socket".into()];
        };
        let mut notes = Vec::new();
        if let Err(why) = acc_clients::wake::private_socket(&socket) {
            notes.push(why.into());
        }
        if !socket
            .parent()
            .is_some_and(acc_clients::wake::private_folder)
        {
            notes.push("the wake socket's folder is not private".into());
        }
        match hello(&socket) {
            Ok(answer) if answer["pid"].as_i64() == Some(pid) => {
                let sessions = answer["sessions"].as_array().cloned().unwrap_or_default();
                if !sessions
                    .iter()
                    .any(|s| s.as_str() == Some(session.as_str()))
                {
                    notes.push("the plugin does not list the session".into());
                }
            }
            Ok(answer) => notes.push(format!("the plugin answered for another pid: {answer}")),
            Err(why) => notes.push(why.message),
        }
        notes
    }

    fn busy(&mut self, _participant: &str) -> AccResult<()> {
        let tui = self
            .tui
            .as_mut()
            .ok_or_else(|| failed("opencode", "not running"))?;
        let seq = script::start_held_turn(&self.model, BUSY_TURN, "opencode", || {
            tui.type_line(BUSY_TURN)
        })?;
        self.busy = Some(seq);
        Ok(())
    }

    fn end_turn(&mut self, _participant: &str) -> AccResult<()> {
        let seq = self
            .busy
            .ok_or_else(|| failed("opencode", "no turn is running"))?;
        script::held_turn_answered(&self.model, seq, "opencode")
    }

    fn look(
        &mut self,
        _participant: &str,
        message_id: &str,
        expect: u32,
        wait: Duration,
    ) -> AccResult<Look> {
        // Each wake the plugin sends in is a user message of its own, so the copies counted are
        // the model requests whose new input carries it.
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

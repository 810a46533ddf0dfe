//! Capture the installed Gemini CLI's next-turn context: with ACC's hooks installed in a
//! throwaway `HOME` and the capture's loopback model API, a peer's message must stand in the very
//! model request of the recipient's next turn (BeforeAgent), and a resumed conversation
//! (`--resume`) must not show it again.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::failed;
use crate::model::{GEMINI_SETTINGS, ModelServer};
use crate::record::{Finished, Recorder, Run, question};
use crate::script::{self, Scratch};
use acc_core::error::AccResult;
use acc_delivery::plugins::{Plugins, search_path};

/// How long one headless turn may take.
const TURN: Duration = Duration::from_secs(120);

/// The installed Gemini CLI in the capture's throwaway home, its model the loopback server.
struct Gemini<'a> {
    gemini: &'a Path,
    home: PathBuf,
    scratch: &'a Scratch,
    model: &'a ModelServer,
}

impl Gemini<'_> {
    /// One headless turn (`-p`), with `extra` arguments (`--session-id`, `--resume`).
    fn turn(&self, prompt: &str, extra: &[&str]) -> AccResult<()> {
        let mut command = Command::new(self.gemini);
        command
            .args(["-p", prompt, "-m", "gemini-2.5-flash"])
            .args(extra)
            .current_dir(&self.scratch.project)
            .env("HOME", &self.home)
            .env("ACC_DATA_HOME", &self.scratch.data)
            .env("GEMINI_API_KEY", "acc-capture-key")
            .env("GOOGLE_GEMINI_BASE_URL", &self.model.base_url)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("ACC_PARTICIPANT")
            .stdin(Stdio::null());
        match acc_clients::run_bounded(command, TURN) {
            Ok(output) if output.status.success() => Ok(()),
            Ok(output) => Err(failed(
                "gemini",
                format!(
                    "the turn failed: {}",
                    String::from_utf8_lossy(&output.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                ),
            )),
            Err(_) => Err(failed("gemini", "the turn did not end in time")),
        }
    }
}

/// The new input of each model request (the contents after the model's last answer) that
/// holds `needle`, and how many requests hold it anywhere.
fn carried(model: &ModelServer, needle: &str) -> (Vec<Value>, u32) {
    let mut inputs = Vec::new();
    let mut anywhere = 0;
    for request in model.model_requests() {
        if request.body.contains(needle) {
            anywhere += 1;
        }
        let Ok(body) = serde_json::from_str::<Value>(&request.body) else {
            continue;
        };
        let contents = body
            .get("contents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut input: Vec<Value> = contents
            .into_iter()
            .rev()
            .take_while(|c| c.get("role").and_then(Value::as_str) != Some("model"))
            .collect();
        input.reverse();
        let input = Value::Array(input);
        if input.to_string().contains(needle) {
            inputs.push(input);
        }
    }
    (inputs, anywhere)
}

/// A session id of the form Gemini CLI takes (a UUID), unique to this capture.
fn session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        std::process::id(),
        (nanos >> 48) & 0xffff,
        (nanos >> 36) & 0xfff,
        (nanos >> 24) & 0xfff,
        nanos & 0xffff_ffff_ffff
    )
}

/// Capture the installed `gemini`'s next-turn context.
pub fn capture_gemini() -> AccResult<Finished> {
    let gemini = acc_clients::find_on_path("gemini")
        .ok_or_else(|| failed("gemini", "no `gemini` on PATH"))?;
    let scratch = Scratch::new("gemini")?;
    let home = scratch.client.join("home");
    std::fs::create_dir_all(home.join(".gemini")).map_err(|e| failed("home", e))?;
    std::fs::write(home.join(".gemini/settings.json"), GEMINI_SETTINGS)
        .map_err(|e| failed("settings", e))?;
    crate::install_hooks("gemini", &home, &scratch.data, &[])?;
    let (version, executable_sha256) =
        crate::guard::identify(acc_clients::Client::Gemini, &gemini, &home)?;
    let model = ModelServer::start();
    let client = Gemini {
        gemini: &gemini,
        home,
        scratch: &scratch,
        model: &model,
    };
    let mut record = Recorder::default();
    let session = session_id();
    let participant = format!("gemini-{session}");
    client.turn("hello", &["--session-id", &session])?;

    let plugins = Arc::new(Plugins::load_from(search_path(), &Default::default()));
    let mut app = script::open(&scratch, &plugins)?;
    let alice = crate::attach(&mut app.core, "alice")?;
    let sent = app.send_message(&alice, &question(&participant))?;
    record.router("carried", &sent);
    let id = sent.message.message.message_id.clone();
    let block = format!("message={id} kind=");

    // carried: the next turn's very first model request holds the message.
    model.clear();
    client.turn("next", &["--resume", &session])?;
    let (inputs, anywhere) = carried(&model, &block);
    let first_holds = model
        .model_requests()
        .first()
        .is_some_and(|r| r.body.contains(&block));
    let seen = if first_holds {
        u32::try_from(inputs.len()).unwrap_or(u32::MAX)
    } else {
        0
    };
    if !first_holds && anywhere > 0 {
        record.note(
            "carried",
            "the message reached the model only after the turn's first request",
        );
    }
    record.client("carried", &id, &participant, seen, None, inputs);

    // resumed: the conversation resumed again does not deliver the message again (its history
    // may hold the turn that carried it; no new input does).
    model.clear();
    client.turn("and now?", &["--resume", &session])?;
    let (mut inputs, anywhere) = carried(&model, &block);
    let again = u32::try_from(inputs.len()).unwrap_or(u32::MAX);
    inputs.push(Value::String(format!(
        "model requests of this turn holding the message in their history: {anywhere}"
    )));
    record.client("resumed", &id, &participant, again, None, inputs);
    record.finish(Run {
        client: "gemini".into(),
        version,
        launch_mode: "headless turns (-p, --resume) in a throwaway HOME with acc's hooks, model API on loopback".into(),
        protocol_contract: "gemini-next-turn-v1".into(),
        executable_sha256,
        driver: "acc-capture".into(),
        capability: "nextTurn".into(),
    })
}

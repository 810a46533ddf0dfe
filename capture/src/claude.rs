//! Capture the installed Claude Code: the session registry fields, socket mode and hook
//! environment the `claude-inbox` adapter relies on, and the wake branches, by running the real
//! `claude` in a throwaway `HOME` (ACC's hooks installed there with live delivery `all`)
//! against a model API this process serves on loopback.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acc_adapter_api::wire::OfferRequest;
use serde_json::Value;

use super::{Observed, attach, captured_here, failed, probed, question};
use crate::model::ModelServer;
use acc_host::clock::SystemClock;
use acc_host::contracts::Capture;
use acc_host::core::messages::{ReplyRequest, SendRequest};
use acc_host::core::{Caller, Core};
use acc_host::delivery::App;
use acc_host::error::AccResult;
use acc_host::plugins::{DEFAULT_DEADLINE, Operation, Plugins, search_path};
use acc_host::workspace;

/// The registry fields the adapter reads.
pub const REGISTRY_FIELDS: &[&str] = &["pid", "sessionId", "messagingSocketPath", "version"];

/// A `claude` process; killed by pid when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(deadline: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn quoted_after<'a>(text: &'a str, flag: &str) -> Option<&'a str> {
    let start = text.find(flag)? + flag.len();
    let rest = &text[start..];
    let end = rest.find('\'')?;
    Some(&rest[..end])
}

/// Capture the installed `claude`. Returns the capture (also checked by the validator).
pub fn capture_claude() -> AccResult<Capture> {
    let claude = acc_clients::find_on_path("claude")
        .ok_or_else(|| failed("claude", "no `claude` on PATH"))?;
    let temp = std::env::temp_dir().join(format!(
        "acc-capture-claude-{}-{}",
        std::process::id(),
        acc_host::clock::Clock::now_ms(&SystemClock::default())
    ));
    let result = drive(&claude, &temp);
    let _ = std::fs::remove_dir_all(&temp);
    result
}

fn wake_seen(model: &ModelServer, id: &str) -> usize {
    let needle = format!("a message for you is waiting ({id})");
    model
        .model_requests()
        .iter()
        .filter(|r| r.body.contains(&needle))
        .count()
}

// One capture is one script: each branch is driven and observed in order against the same
// running client, and the order is part of the evidence. The driver interface of issue 14
// splits these along their branches.
#[allow(clippy::too_many_lines)]
fn drive(claude: &Path, temp: &Path) -> AccResult<Capture> {
    let project = temp.join("project");
    let home = temp.join("home");
    let data = temp.join("data");
    for dir in [&project, &home.join(".claude"), &data] {
        std::fs::create_dir_all(dir).map_err(|e| failed("temporary folders", e))?;
    }
    let plugins = Arc::new(Plugins::load_from(search_path(), &Default::default()));
    let (adapter, probe, version) = probed(
        &plugins,
        "claude-inbox",
        Duration::from_secs(10),
        Duration::from_secs(15),
    )?;
    let mut limitations = Vec::new();
    // The hooks run `acc`, which sits beside this tool.
    let acc = std::env::current_exe()
        .map_err(|e| failed("acc", e))?
        .with_file_name("acc");
    let installed = Command::new(&acc)
        .args(["--json", "install", "--client", "claude-code", "--home"])
        .arg(&home)
        .args(["--delivery", "all"])
        .env("HOME", &home)
        .env("ACC_DATA_HOME", &data)
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| failed("acc install", e))?;
    if !installed.success() {
        return Err(failed("acc install", "installing the hooks failed"));
    }

    let model = ModelServer::start();
    *model.delay.lock().map_err(|_| failed("model", "lock"))? = Duration::from_secs(4);
    let mut child = Command::new(claude)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .current_dir(&project)
        .env("HOME", &home)
        .env("ACC_DATA_HOME", &data)
        .env("ACC_PARTICIPANT", "bob")
        .env("ANTHROPIC_API_KEY", "acc-capture-key")
        .env("ANTHROPIC_BASE_URL", &model.base_url)
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed("claude", e))?;
    let mut stdin = child.stdin.take();
    let running = Running(child);
    let first = acc_host::wire::json(&crate::wire::UserLine::new("hello"));
    if let Some(stdin) = stdin.as_mut() {
        let _ = writeln!(stdin, "{first}");
    }

    // The store appears with the hook's first write, so each look opens it afresh.
    let open = |plugins: &Arc<Plugins>| -> AccResult<App> {
        let ws = workspace::discover(&project)?;
        let mut app = App::new(Core::new(
            ws,
            data.join("acc"),
            Arc::new(SystemClock::default()),
            acc_host::process::liveness(),
        )?);
        app.delivery.set_plugins(plugins.clone());
        // The consent the capture recorded lives in its own data home, not this process's.
        app.delivery.consent_override = Some(acc_host::store::LivePolicy::All);
        // The capture produces the evidence: it cannot wait for it.
        app.delivery.admission = acc_host::delivery::Admission::Declared;
        Ok(app)
    };
    let is_bound = |core: &mut Core| {
        core.status(false).is_ok_and(|report| {
            report.sessions.iter().any(|s| {
                s.session.participant_id == "bob"
                    && s.bindings.iter().any(|b| b.adapter_id == "claude-inbox")
            })
        })
    };
    let bound = wait_for(Duration::from_secs(60), || {
        open(&plugins).is_ok_and(|mut app| is_bound(&mut app.core))
    });
    if !bound {
        return Err(failed(
            "claude",
            "the SessionStart hook did not bind the session to claude-inbox within 60 s",
        ));
    }
    let mut app = open(&plugins)?;
    // The surface the adapter relies on, as this client wrote it.
    let pid = running.0.id();
    let registry = std::fs::read(
        home.join(".claude")
            .join("sessions")
            .join(format!("{pid}.json")),
    )
    .ok()
    .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    match &registry {
        Some(registry) => {
            for field in REGISTRY_FIELDS {
                if registry.get(*field).is_none() {
                    limitations.push(format!("surface: the session registry has no `{field}`"));
                }
            }
            let socket = registry
                .get("messagingSocketPath")
                .and_then(Value::as_str)
                .unwrap_or("");
            use std::os::unix::fs::MetadataExt;
            match std::fs::symlink_metadata(socket) {
                Ok(meta) if meta.mode() & 0o077 == 0 => {}
                Ok(_) => limitations
                    .push("surface: the messaging socket is open to group or others".into()),
                Err(_) => limitations.push("surface: the messaging socket does not exist".into()),
            }
        }
        None => limitations.push("surface: no session registry file for the claude pid".into()),
    }
    let alice = attach(&mut app.core, "alice")?;

    // busy: a wake while the first turn still waits for the model runs after it.
    let sent = app.send_message(&alice, &question("bob"))?;
    let busy_id = sent.message.message.message_id.clone();
    let woken = sent.delivery.first().is_some_and(|d| d.outcome == "woken");
    let busy = if woken && wait_for(Duration::from_secs(60), || wake_seen(&model, &busy_id) > 0) {
        "queued-after-turn"
    } else {
        limitations.push(format!(
            "busy: the wake ended as {:?} and no later model request carried it",
            sent.delivery.first().map(|d| &d.outcome)
        ));
        "unobserved"
    };
    // Let the woken turn finish: the session is then idle, waiting for input.
    *model.delay.lock().map_err(|_| failed("model", "lock"))? = Duration::from_millis(200);
    std::thread::sleep(Duration::from_secs(6));

    // idle: a wake to the idle session starts a turn at once.
    let sent = app.send_message(&alice, &question("bob"))?;
    let idle_id = sent.message.message.message_id.clone();
    let woken = sent.delivery.first().is_some_and(|d| d.outcome == "woken");
    let idle = if woken && wait_for(Duration::from_secs(30), || wake_seen(&model, &idle_id) > 0) {
        "offered"
    } else {
        limitations.push("idle: the idle session did not run the wake".into());
        "unobserved"
    };
    std::thread::sleep(Duration::from_secs(3));

    // duplicate: the same wake line again (same message id) runs no second turn.
    let bob_binding = app
        .core
        .status(false)?
        .sessions
        .into_iter()
        .find(|s| s.session.participant_id == "bob");
    let endpoint_ref = bob_binding
        .as_ref()
        .and_then(|s| s.bindings.iter().find(|b| b.adapter_id == "claude-inbox"))
        .map(|b| b.endpoint_ref.clone())
        .unwrap_or_default();
    let request = OfferRequest {
        message: acc_host::delivery::envelope(&sent.message, &app.core.workspace.id),
        recipient_participant_id: "bob".into(),
        target_session_id: bob_binding
            .as_ref()
            .map(|s| s.session.session_id.clone())
            .unwrap_or_default(),
        target_generation: 1,
        endpoint_ref,
        client_version: version.clone(),
        timeout_ms: None,
    };
    let before = wake_seen(&model, &idle_id);
    let again = adapter.call(
        Operation::Offer,
        serde_json::to_string(&request).unwrap_or_default(),
        DEFAULT_DEADLINE,
    );
    std::thread::sleep(Duration::from_secs(8));
    let after = wake_seen(&model, &idle_id);
    let duplicate = if again.is_ok() && after == before {
        "same-message-id"
    } else {
        limitations.push(format!(
            "duplicate: a second wake with the same message id was run again ({before} then {after} requests carried it)"
        ));
        "unobserved"
    };

    // reply: bob's question (with the credentials the hook gave the model) is answered by
    // alice, and the answer wakes bob.
    let credentials = model.model_requests().iter().rev().find_map(|r| {
        let session = quoted_after(&r.body, "--session '")?;
        let generation = quoted_after(&r.body, "--generation '")?;
        Some(Caller {
            session_id: session.to_string(),
            generation: generation.to_string(),
        })
    });
    let routed = match credentials {
        Some(bob) => {
            let asked = app.send_message(
                &bob,
                &SendRequest {
                    to: vec!["alice".into()],
                    kind: Some("question".into()),
                    subject: "capture".into(),
                    body: "a capture question".into(),
                    ..SendRequest::default()
                },
            )?;
            let answer = app.reply(
                &alice,
                &ReplyRequest {
                    message_id: asked.message.message.message_id.clone(),
                    body: "answer".into(),
                    ..ReplyRequest::default()
                },
            )?;
            let answer_id = answer.message.message.message_id.clone();
            if answer
                .delivery
                .first()
                .is_some_and(|d| d.outcome == "woken")
                && wait_for(Duration::from_secs(30), || {
                    wake_seen(&model, &answer_id) > 0
                })
            {
                "routed"
            } else {
                limitations.push("reply: the answer did not wake its author".into());
                "unobserved"
            }
        }
        None => {
            limitations.push("reply: the model never saw the session's credentials".into());
            "unobserved"
        }
    };

    // fallback: with the session gone the message waits durably.
    drop(stdin);
    drop(running);
    let fallback_sent = app.send_message(&alice, &question("bob"))?;
    let fallback = if fallback_sent
        .delivery
        .first()
        .is_some_and(|d| d.outcome == "queued" && d.error_code.is_some())
    {
        "queued"
    } else {
        limitations.push(format!(
            "fallback: with the session gone the send ended as {:?}",
            fallback_sent.delivery.first()
        ));
        "unobserved"
    };

    captured_here(
        "claude-code",
        version,
        "print mode with stream-json input held open, model API on loopback",
        probe,
        Observed {
            idle,
            busy,
            reply: routed,
            duplicate,
            fallback,
        },
        limitations,
    )
}

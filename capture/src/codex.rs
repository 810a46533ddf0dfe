//! Capture the installed Codex: its protocol surface from its own generated schema, and the
//! `codex-app-server` delivery branches through a LocalDaemon the capture starts in a throwaway
//! `CODEX_HOME` (and stops again). No account is needed: a queued submission is accepted even
//! though the turn it starts cannot reach a model.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acc_adapter_api::wire::OfferRequest;
use acc_clients::codex_daemon::{self, Daemon, client_message_id};
use acc_clients::run_bounded;
use serde_json::{Value, json};

use super::{Observed, attach, captured_here, failed, probed, question};
use acc_host::clock::SystemClock;
use acc_host::contracts::Capture;
use acc_host::core::Core;
use acc_host::core::messages::ReplyRequest;
use acc_host::delivery::App;
use acc_host::error::AccResult;
use acc_host::plugins::{DEFAULT_DEADLINE, Operation, Plugins, search_path};
use acc_host::workspace;

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
        return vec![
            "surface: `codex app-server generate-json-schema --experimental` failed".into(),
        ];
    }
    let requests = std::fs::read_to_string(out.join("ClientRequest.json")).unwrap_or_default();
    let Ok(schema) = serde_json::from_str::<Value>(&requests) else {
        return vec!["surface: the generated ClientRequest.json is not json".into()];
    };
    let text = schema.to_string();
    let mut missing: Vec<String> = METHODS
        .iter()
        .filter(|m| !text.contains(&format!("\"{m}\"")))
        .map(|m| format!("surface: the client's schema lists no `{m}` request"))
        .collect();
    let params = schema
        .pointer("/definitions/ThreadQueueAddParams/properties")
        .and_then(Value::as_object);
    for field in QUEUE_ADD_FIELDS {
        if !params.is_some_and(|p| p.contains_key(*field)) {
            missing.push(format!(
                "surface: thread/queue/add takes no `{field}` in the client's schema"
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
        let started = run_bounded(command, Duration::from_secs(90))
            .ok()
            .is_some_and(|o| String::from_utf8_lossy(&o.stdout).contains("\"socketPath\""));
        let daemon = Self {
            codex: codex.to_path_buf(),
            home: home.to_path_buf(),
        };
        if !started {
            return Err(failed(
                "codex daemon",
                "`codex app-server daemon start` failed",
            ));
        }
        Ok(daemon)
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

impl Drop for StartedDaemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Capture the installed `codex`. Returns the capture (also checked by the validator).
pub fn capture_codex() -> AccResult<Capture> {
    let codex =
        acc_clients::find_on_path("codex").ok_or_else(|| failed("codex", "no `codex` on PATH"))?;
    let temp = std::env::temp_dir().join(format!(
        "acc-capture-codex-{}-{}",
        std::process::id(),
        acc_host::clock::Clock::now_ms(&SystemClock::default())
    ));
    let result = drive(&codex, &temp);
    let _ = std::fs::remove_dir_all(&temp);
    result
}

// One capture is one script: each branch is driven and observed in order against the same
// running client, and the order is part of the evidence. The driver interface of issue 14
// splits these along their branches.
#[allow(clippy::too_many_lines)]
fn drive(codex: &Path, temp: &Path) -> AccResult<Capture> {
    let project = temp.join("project");
    let home = temp.join("codex-home");
    for dir in [&project, &home] {
        std::fs::create_dir_all(dir).map_err(|e| failed("temporary folders", e))?;
    }
    let plugins = Arc::new(Plugins::load_from(search_path(), &Default::default()));
    let (adapter, probe, version) = probed(
        &plugins,
        "codex-app-server",
        Duration::from_secs(10),
        Duration::from_secs(15),
    )?;
    let mut limitations = check_surface(codex, &home, &temp.join("schema"));

    let daemon = StartedDaemon::start(codex, &home, &[])?;
    let mut client = Daemon::connect(&daemon.socket(), Duration::from_secs(20))
        .map_err(|e| failed("codex daemon", e))?;
    let mut thread_in = |cwd: &Path| -> AccResult<String> {
        client
            .call("thread/start", json!({ "cwd": cwd }))
            .ok()
            .and_then(|t| {
                t.pointer("/thread/id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .ok_or_else(|| failed("codex daemon", "thread/start failed"))
    };
    let bob_thread = thread_in(&project)?;
    let alice_thread = thread_in(&project)?;

    let ws = workspace::discover(&project)?;
    let mut app = App::new(Core::new(
        ws,
        temp.join("data").join("acc"),
        Arc::new(SystemClock::default()),
        acc_host::process::liveness(),
    )?);
    app.delivery.set_plugins(plugins);
    app.delivery.consent_override = Some(acc_host::store::LivePolicy::All);
    // The capture produces the evidence: it cannot wait for it.
    app.delivery.admission = acc_host::delivery::Admission::Declared;
    let alice = attach(&mut app.core, "alice")?;
    let bob = attach(&mut app.core, "bob")?;
    let endpoint = |thread: &str| {
        acc_host::wire::json(&acc_host::wire::CodexEndpoint {
            codex_home: &home,
            thread_id: thread,
            cwd: &project,
        })
    };
    app.bind(&bob, "codex-app-server", "all", &endpoint(&bob_thread))?;
    app.bind(&alice, "codex-app-server", "all", &endpoint(&alice_thread))?;

    // idle: the idle thread takes the submission.
    let sent = app.send_message(&alice, &question("bob"))?;
    let id = sent.message.message.message_id.clone();
    let offered = sent
        .delivery
        .first()
        .is_some_and(|d| d.outcome == "offered");
    let idle = if offered
        && client
            .one_submission(&bob_thread, &client_message_id(&id), WAIT)
            .is_some()
    {
        "offered"
    } else {
        limitations.push(format!(
            "idle: the offer ended as {:?} and the thread did not show it once",
            sent.delivery.first().map(|d| &d.outcome)
        ));
        "unobserved"
    };
    // busy: the thread is still in the turn the first submission started (no model answers
    // here), so the next one waits in its queue for the turn to end.
    let busy_sent = app.send_message(&alice, &question("bob"))?;
    let busy_id = format!("acc-{}", busy_sent.message.message.message_id);
    let busy = match client.one_submission(&bob_thread, &busy_id, WAIT) {
        Some(found)
            if found.queued
                && busy_sent
                    .delivery
                    .first()
                    .is_some_and(|d| d.outcome == "offered") =>
        {
            "queued-after-turn"
        }
        other => {
            limitations.push(format!(
                "busy: the second submission was not seen waiting in the queue ({other:?})"
            ));
            "unobserved"
        }
    };
    // duplicate: offering the first message again adds nothing.
    let request = OfferRequest {
        message: acc_host::delivery::envelope(&sent.message, &app.core.workspace.id),
        recipient_participant_id: "bob".into(),
        target_session_id: bob.session_id.clone(),
        target_generation: 1,
        endpoint_ref: endpoint(&bob_thread).to_string(),
        client_version: version.clone(),
        timeout_ms: None,
    };
    let again = adapter.call(
        Operation::Offer,
        serde_json::to_string(&request).unwrap_or_default(),
        DEFAULT_DEADLINE,
    );
    let count = client
        .submissions(&bob_thread, &client_message_id(&id), WAIT)
        .map(|f| f.len())
        .ok();
    let duplicate = if again.is_ok() && count == Some(1) {
        "same-message-id"
    } else {
        limitations.push(format!(
            "duplicate: after a second offer the thread shows {count:?} submissions"
        ));
        "unobserved"
    };
    // reply: the answer reaches the author's own thread.
    let reply = app.reply(
        &bob,
        &ReplyRequest {
            message_id: id.clone(),
            body: "answer".into(),
            ..ReplyRequest::default()
        },
    )?;
    let reply_id = client_message_id(&reply.message.message.message_id);
    let routed = if reply
        .delivery
        .first()
        .is_some_and(|d| d.outcome == "offered")
        && client
            .one_submission(&alice_thread, &reply_id, WAIT)
            .is_some()
    {
        "routed"
    } else {
        limitations.push("reply: the answer did not reach the author's thread".into());
        "unobserved"
    };
    // fallback: with the daemon stopped the message waits durably.
    drop(client);
    daemon.stop();
    let gone = Instant::now();
    while Daemon::connect(&daemon.socket(), Duration::from_secs(1)).is_ok()
        && gone.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let fallback_sent = app.send_message(&alice, &question("bob"))?;
    let fallback = if fallback_sent.delivery.first().is_some_and(|d| {
        d.outcome == "queued" && d.error_code.as_deref() == Some("recipient_unavailable")
    }) {
        "queued"
    } else {
        limitations.push(format!(
            "fallback: with the daemon stopped the send ended as {:?}",
            fallback_sent.delivery.first()
        ));
        "unobserved"
    };
    drop(daemon);

    captured_here(
        "codex",
        version,
        "app-server daemon in a throwaway CODEX_HOME, no model",
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

//! Native live delivery into real Qwen Code 0.24.4: the `qwen-inbox` wake of its terminal
//! interface (run on a pseudo-terminal) through the session's cross-session socket, and the
//! refusals of endpoints that do not name one live, private, terminal session.

use std::time::Duration;

use acc_capture::claude::wake_needle;
use acc_capture::model::ModelServer;
use acc_capture::qwen::{start_bound, wakes};
use acc_clients::Client;
use acc_tests::{Guarded, World, wait_until};
use serde_json::json;

use crate::journey;

const WAIT: Duration = Duration::from_secs(90);

/// The offer events that name `transport`.
fn offer_events(world: &World, transport: &str) -> Vec<serde_json::Value> {
    world.acc(&["sync", "--limit", "500"]).ok_json()["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .unwrap_or("")
                .starts_with("message.offer_")
                && e.to_string().contains(transport)
        })
        .cloned()
        .collect()
}

/// A Qwen Code terminal of `bob`, installed with live delivery `actionable`, bound by ACC's own
/// SessionStart hook and idle once its first turn is done; `agents.crossSessionInbound` set to
/// `inbound` in the user's settings file (beside its comment and other keys) when given.
fn bound_bob(world: &World, model: &ModelServer, inbound: Option<&str>) -> acc_capture::tui::Tui {
    let writer = acc_tests::prepared_writer(world, Client::Qwen, model);
    let home = writer.home.to_str().expect("utf8").to_string();
    journey::install(world, Client::Qwen, &home, &["--delivery", "actionable"]).ok_json();
    if let Some(setting) = inbound {
        let settings = writer.home.join(".qwen/settings.json");
        let text = std::fs::read_to_string(&settings).expect("settings");
        assert!(text.contains("\"general\""), "{text}");
        let text = text.replacen(
            "\"general\"",
            &format!("\"agents\": {{ \"crossSessionInbound\": \"{setting}\" }},\n  \"general\""),
            1,
        );
        std::fs::write(&settings, text).expect("settings");
    }
    start_bound(&writer, model, "bob")
        .expect("a bound session")
        .0
}

#[test]
fn a_question_wakes_an_idle_qwen_code_terminal_and_the_body_follows_through_next_turn() {
    let world = World::new();
    let model = ModelServer::start();
    let mut tui = bound_bob(&world, &model, None);

    let alice = world.attach("alice");
    let sent = world.ask(&alice, "bob", "parser", "SECRET-BODY: is the parser done?");
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(
        sent["delivery"],
        json!([{ "recipientParticipantId": "bob", "outcome": "woken", "transport": "qwen-inbox" }])
    );
    // The idle session starts a turn of its own with the wake: no person types anything.
    wait_until(WAIT, "the woken turn's model request", || {
        !wakes(&model, &id).is_empty()
    });
    let woken = model
        .wait_for_request(&wake_needle(&id), WAIT)
        .expect("the wake's request");
    model.wait_answered(woken.seq, WAIT).expect("answered");
    assert!(
        woken.body.contains("cross_session_message"),
        "Qwen Code frames the wake as its own-process message: {:.2000}",
        woken.body
    );
    assert!(
        model
            .model_requests()
            .iter()
            .all(|r| !r.body.contains("SECRET-BODY")),
        "no peer byte crossed the wake"
    );
    // A wake records nothing, and the woken turn runs no prompt hook: the receipt waits.
    assert_eq!(world.receipt(&id)["state"], "queued");
    assert!(
        offer_events(&world, "qwen-inbox").is_empty(),
        "no offer event for a wake"
    );

    // The session's next turn carries the body through next-turn, fenced, recorded offered.
    tui.type_line("next").expect("typed");
    wait_until(WAIT, "the body in a model request", || {
        model
            .model_requests()
            .iter()
            .any(|r| r.body.contains("SECRET-BODY") && r.body.contains("acc-peer-message"))
    });
    wait_until(WAIT, "the receipt offered", || {
        world.receipt(&id)["state"] == "offered"
    });
    assert_eq!(world.receipt(&id)["offer"]["transport"], "next-turn");
    assert_eq!(
        wakes(&model, &id).len(),
        1,
        "one wake, one woken turn: {}",
        tui.screen()
    );
    tui.stop();
}

/// A user's `agents.crossSessionInbound` setting may hold or refuse even the messages of the
/// processes a session starts (ACC's wake among them). Qwen Code still reads the frame and
/// closes the connection; its delivery receipt says what became of it. Table-driven: for each
/// setting the send reports no wake (a safe code, one `message.offer_failed`), the model sees
/// no wake, and the body reaches the session's next turn, fenced.
#[test]
fn a_qwen_code_terminal_that_holds_or_refuses_wakes_is_not_reported_woken() {
    for setting in ["hold", "refuse"] {
        let world = World::new();
        let model = ModelServer::start();
        let mut tui = bound_bob(&world, &model, Some(setting));

        let alice = world.attach("alice");
        let sent = world.ask(&alice, "bob", "parser", "HELD-BODY: is the parser done?");
        let id = sent["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string();
        assert_eq!(
            sent["delivery"][0]["outcome"], "queued",
            "{setting}: {sent}"
        );
        assert_eq!(
            sent["delivery"][0]["errorCode"], "transport_rejected",
            "{setting}: {sent}"
        );
        assert_eq!(world.receipt(&id)["state"], "queued", "{setting}");
        let failed = offer_events(&world, "qwen-inbox");
        assert_eq!(failed.len(), 1, "{setting}: {failed:?}");
        assert_eq!(failed[0]["type"], "message.offer_failed", "{setting}");

        tui.type_line("next").expect("typed");
        wait_until(WAIT, "the body in a model request", || {
            model
                .model_requests()
                .iter()
                .any(|r| r.body.contains("HELD-BODY") && r.body.contains("acc-peer-message"))
        });
        assert!(
            wakes(&model, &id).is_empty(),
            "{setting}: the model never saw the wake"
        );
        tui.stop();
    }
}

/// Qwen Code admits about 32 messages at once from the processes it starts, then one a second.
/// Questions sent by eight senders at once, faster than that, until one is dropped: every send
/// reported `woken` reaches the model as its wake; a send reported `recipient_busy` (Qwen Code
/// said it dropped the wake) keeps its receipt queued and its wake is never seen. On a loaded
/// machine a wake may also go unanswered within its bound (`transport_error`, or
/// `offer_outcome_unknown` at the host's deadline): not known to be woken, so not reported
/// woken. Every unwoken question waits, durable, its receipt queued, for the next turn.
#[test]
fn a_burst_of_wakes_past_qwen_codes_admission_limit_reports_the_dropped_ones_busy() {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let world = World::new();
    let model = ModelServer::start();
    let mut tui = bound_bob(&world, &model, None);
    let alice = world.attach("alice");
    // (body, message id, outcome, error code) of each send.
    let sends: Mutex<Vec<(String, String, serde_json::Value, serde_json::Value)>> =
        Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                // Bounded: 400 sends in all, far past 32 and one a second on a loaded machine.
                while !stop.load(Ordering::SeqCst) {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    if n >= 400 {
                        break;
                    }
                    let body = format!("BURST-{n}-END");
                    let sent = world.ask(&alice, "bob", "burst", &body);
                    let delivery = &sent["delivery"][0];
                    if delivery["errorCode"] == "recipient_busy" {
                        stop.store(true, Ordering::SeqCst);
                    }
                    let id = sent["message"]["messageId"]
                        .as_str()
                        .expect("id")
                        .to_string();
                    sends.lock().expect("sends").push((
                        body,
                        id,
                        delivery["outcome"].clone(),
                        delivery["errorCode"].clone(),
                    ));
                }
            });
        }
    });
    let sends = sends.into_inner().expect("sends");
    let (woken, others): (Vec<_>, Vec<_>) = sends.iter().partition(|s| s.2 == "woken");
    for (_, id, outcome, code) in &others {
        assert_eq!(outcome, "queued", "{sends:?}");
        assert!(
            ["recipient_busy", "transport_error", "offer_outcome_unknown"]
                .contains(&code.as_str().unwrap_or_default()),
            "{code}: {sends:?}"
        );
        assert_eq!(world.receipt(id)["state"], "queued");
    }
    let dropped: Vec<_> = others.iter().filter(|s| s.3 == "recipient_busy").collect();
    eprintln!(
        "{} sends: {} woken, {} dropped, {} not known",
        sends.len(),
        woken.len(),
        dropped.len(),
        others.len() - dropped.len()
    );
    assert!(
        !dropped.is_empty(),
        "a send past the admission limit: {sends:?}"
    );
    // Every wake reported reaches the model (Qwen Code runs them one after another).
    wait_until(Duration::from_secs(300), "every reported wake seen", || {
        woken
            .iter()
            .all(|(_, id, ..)| !wakes(&model, id).is_empty())
    });
    for (_, id, ..) in &dropped {
        assert!(
            wakes(&model, id).is_empty(),
            "the dropped wake {id} never reached the model"
        );
    }
    tui.stop();
}

/// The sessions ACC never binds to `qwen-inbox`, table-driven: a terminal installed without
/// live consent, and a headless run (`qwen -p`) with it, where Qwen Code opens no socket. Each
/// session still joins the room and its messages wait, durable, for next-turn.
#[test]
fn qwen_sessions_without_consent_or_without_a_socket_are_never_bound_or_woken() {
    for (consent, headless) in [(None, false), (Some("actionable"), true)] {
        let world = World::new();
        let model = ModelServer::start();
        let mut writer = acc_tests::prepared_writer(&world, Client::Qwen, &model);
        writer.env.push(("ACC_PARTICIPANT".into(), "bob".into()));
        let home = writer.home.to_str().expect("utf8").to_string();
        let extra: Vec<&str> = consent.map(|c| vec!["--delivery", c]).unwrap_or_default();
        journey::install(&world, Client::Qwen, &home, &extra).ok_json();
        let row = format!("consent {consent:?}, headless {headless}");
        let mut tui = None;
        if headless {
            writer.turn("working").expect("a headless turn");
        } else {
            let command = writer.interactive().expect("qwen");
            tui = Some(acc_capture::tui::Tui::start(&command).expect("the terminal"));
        }
        wait_until(WAIT, "bob's session", || {
            journey::bindings_of(&world, "bob").is_some()
        });
        let alice = world.attach("alice");
        journey::asked_while_unbound(&world, &alice, "bob", "UNBOUND-BODY", &row);
        if let Some(mut tui) = tui {
            tui.stop();
        }
        assert!(
            model
                .model_requests()
                .iter()
                .all(|r| !r.body.contains("a message for you is waiting")),
            "{row}"
        );
    }
}

/// A stand-in Qwen Code terminal session: a live process, its registry file and a private
/// socket whose listener takes each connection to its end and reports each frame `delivered`
/// to the frame's `from` with its `replyToken`, as Qwen Code 0.24.4 does.
struct FakeSession {
    process: Guarded,
    qwen_home: std::path::PathBuf,
    socket: std::path::PathBuf,
}

impl FakeSession {
    fn new(world: &World) -> Self {
        use std::io::Read;
        use std::os::unix::fs::PermissionsExt;
        let process = Guarded(
            std::process::Command::new("sleep")
                .arg("300")
                .spawn()
                .expect("sleep"),
        );
        let qwen_home = world.temp.path().join("bob-home").join(".qwen");
        std::fs::create_dir_all(qwen_home.join("sessions")).expect("sessions");
        let socks = world.temp.path().join("bob-socks");
        std::fs::create_dir_all(&socks).expect("socks");
        std::fs::set_permissions(&socks, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        let socket = socks.join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        // Detached: the listener lives until the test process ends, like the socket file.
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut text = String::new();
                let _ = stream.read_to_string(&mut text);
                drop(stream);
                let Some(frame) = text
                    .lines()
                    .nth(1)
                    .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                else {
                    continue;
                };
                let auth = json!({ "msgV": 1, "type": "auth", "token": frame["replyToken"] });
                let receipt = json!({
                    "msgV": 1, "msgId": "fake-receipt", "type": "control",
                    "action": "delivery_status", "status": "delivered",
                    "origMsgId": frame["msgId"],
                });
                if let Some(from) = frame["from"].as_str()
                    && let Ok(mut to) = std::os::unix::net::UnixStream::connect(from)
                {
                    use std::io::Write;
                    let _ = write!(to, "{auth}\n{receipt}\n");
                }
            }
        });
        let session = Self {
            process,
            qwen_home,
            socket,
        };
        session.registry(session.pid(), "conv-1", "tui", &session.socket);
        session
    }

    fn pid(&self) -> i64 {
        i64::from(self.process.0.id())
    }

    fn registry(&self, pid: i64, session: &str, kind: &str, socket: &std::path::Path) {
        let value = json!({
            "schemaVersion": 1, "pid": pid, "sessionId": session, "kind": kind,
            "ipcPath": socket, "ipcToken": "peer", "qwenVersion": "0.24.4",
        });
        std::fs::write(
            self.qwen_home
                .join("sessions")
                .join(format!("{}.json", self.pid())),
            value.to_string(),
        )
        .expect("registry");
    }

    fn endpoint(&self, socket: &std::path::Path, token: &str) -> String {
        json!({ "socket": socket, "token": token, "pid": self.pid(), "sessionId": "conv-1", "qwenHome": self.qwen_home }).to_string()
    }
}

#[test]
fn qwen_endpoints_that_name_no_live_private_terminal_session_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let bob = world.attach("bob");
    let alice = world.attach("alice");
    let fake = FakeSession::new(&world);
    let home = world.temp.path().join("bob-home");
    journey::install(
        &world,
        Client::Qwen,
        home.to_str().expect("utf8"),
        &["--delivery", "all"],
    )
    .ok_json();
    let home_env = [("HOME", home.to_str().expect("utf8"))];
    let bind = |endpoint: &str| {
        world.acc_as_with(
            &bob,
            &[
                "bind",
                "--adapter",
                "qwen-inbox",
                "--policy",
                "all",
                "--endpoint",
                endpoint,
            ],
            &home_env,
        )
    };
    let refused = |endpoint: &str, why: &str| {
        let error = bind(endpoint).err(4, "invalid_data");
        let message = error["message"].as_str().unwrap_or_default().to_string();
        assert!(message.contains(why), "{why} in {message}");
    };
    let link = world.temp.path().join("link.sock");
    std::os::unix::fs::symlink(&fake.socket, &link).expect("symlink");
    let good = fake.endpoint(&fake.socket, "own-token");

    // Each row: the registry as the fake session writes it, the endpoint, what the refusal names.
    let rows: [(i64, &str, &str, String, &str); 6] = [
        (fake.pid() + 1, "conv-1", "tui", good.clone(), "another pid"),
        (fake.pid(), "conv-2", "tui", good.clone(), "another session"),
        (
            fake.pid(),
            "conv-1",
            "acp",
            good.clone(),
            "terminal interface",
        ),
        (
            fake.pid(),
            "conv-1",
            "tui",
            fake.endpoint(&link, "own-token"),
            "symlink",
        ),
        (
            fake.pid(),
            "conv-1",
            "tui",
            fake.endpoint(&fake.socket, ""),
            "token",
        ),
        (
            fake.pid(),
            "conv-1",
            "tui",
            fake.endpoint(&fake.socket, "a token\nwith a newline"),
            "token",
        ),
    ];
    for (pid, session, kind, endpoint, why) in &rows {
        fake.registry(*pid, session, kind, &fake.socket);
        refused(endpoint, why);
    }
    fake.registry(fake.pid(), "conv-1", "tui", &fake.socket);
    std::fs::set_permissions(&fake.socket, std::fs::Permissions::from_mode(0o660)).expect("chmod");
    refused(&good, "native_endpoint_unavailable");
    std::fs::set_permissions(&fake.socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    assert_eq!(
        world.status()["sessions"][0]["bindings"],
        json!([]),
        "nothing was bound"
    );

    // A good binding wakes; then the session dies: the wake is refused, recorded, and waits.
    bind(&good).ok_json();
    let sent = world.ask(&alice, "bob", "parser", "b");
    assert_eq!(sent["delivery"][0]["outcome"], "woken", "{sent}");
    assert_eq!(sent["delivery"][0]["transport"], "qwen-inbox");
    let mut process = fake.process;
    acc_tests::kill_pid(process.0.id());
    let _ = process.0.wait();
    let sent = world.ask(&alice, "bob", "parser", "b");
    assert_eq!(sent["delivery"][0]["outcome"], "queued");
    assert_eq!(sent["delivery"][0]["errorCode"], "recipient_unavailable");
    let id = sent["message"]["messageId"].as_str().expect("id");
    assert_eq!(world.receipt(id)["state"], "queued");
    let failed = world.acc(&["sync", "--limit", "500"]).ok_json()["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["type"] == "message.offer_failed")
        .count();
    assert_eq!(failed, 1);
}

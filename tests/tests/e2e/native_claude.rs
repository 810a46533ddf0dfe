//! Native live delivery into real Claude Code: the `claude-inbox` wake.

use std::time::Duration;

use acc_capture::model::ModelServer;
use acc_tests::{Guarded, World, wait_until};
use serde_json::json;

use crate::journey;

fn install(world: &World, home: &std::path::Path, delivery: &str) {
    std::fs::create_dir_all(home.join(".claude")).expect("home");
    world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home.to_str().expect("utf8"),
            "--delivery",
            delivery,
        ])
        .ok_json();
}

fn start_turn(world: &World, home: &std::path::Path, model: &ModelServer, prompt: &str) -> Guarded {
    let mut command = acc_tests::claude_print(world, home, model, prompt);
    command
        .env("ACC_PARTICIPANT", "bob")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    Guarded(command.spawn().expect("spawn claude"))
}

fn finish(mut turn: Guarded) {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = turn.0.try_wait().expect("wait") {
            assert!(status.success(), "claude exited with {status}");
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "claude did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Alice asks bob a question; the send's JSON.
fn ask_bob(world: &World, alice: &acc_tests::Creds) -> serde_json::Value {
    world
        .acc_as(
            alice,
            &[
                "message",
                "--to",
                "bob",
                "--kind",
                "question",
                "--subject",
                "s",
                "--body",
                "b",
            ],
        )
        .ok_json()
}

#[test]
fn a_question_wakes_a_busy_claude_code_session_and_the_body_follows_through_next_turn() {
    let world = World::new();
    let home = world.temp.path().join("home");
    install(&world, &home, "actionable");
    let model = ModelServer::start();
    *model.delay.lock().expect("lock") = Duration::from_secs(4);
    let turn = start_turn(&world, &home, &model, "working on the parser");
    wait_until(
        Duration::from_secs(60),
        "bob's session to bind claude-inbox",
        || journey::bound_to(&world, "bob", "claude-inbox"),
    );
    // The turn is busy once its model call is under way: its UserPromptSubmit hook has run,
    // so the question cannot ride in on this turn's next-turn context instead of the wake.
    wait_until(
        Duration::from_secs(60),
        "bob's first turn to reach the model",
        || !model.model_requests().is_empty(),
    );

    let alice = world.attach("alice");
    let sent = world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--kind",
                "question",
                "--subject",
                "parser",
                "--body",
                "SECRET-BODY: is the parser done?",
            ],
        )
        .ok_json();
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(
        sent["delivery"],
        json!([{ "recipientParticipantId": "bob", "outcome": "woken", "transport": "claude-inbox" }])
    );
    // A wake records nothing: the receipt is still queued, unless the woken turn already ran
    // (under load it can, between the send and this read) and next-turn carried the body.
    let receipt = world.receipt(&id);
    assert!(
        receipt["state"] == "queued"
            || (receipt["state"] == "offered" && receipt["offer"]["transport"] == "next-turn"),
        "a wake records nothing: {receipt}"
    );
    // The woken turn's next-turn offer is recorded; the wake itself never is.
    let events = world.acc(&["sync", "--limit", "500"]).ok_json();
    let wake_events: Vec<_> = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .unwrap_or("")
                .starts_with("message.offer_")
                && e.to_string().contains("claude-inbox")
        })
        .collect();
    assert!(
        wake_events.is_empty(),
        "no offer event for a wake: {wake_events:?}"
    );

    finish(turn);
    let requests = model.model_requests();
    let woken = requests
        .iter()
        .find(|r| r.body.contains("a message for you is waiting"))
        .unwrap_or_else(|| panic!("no request carried the wake"));
    assert!(woken.body.contains(&id), "the wake names the message id");
    assert!(
        requests
            .iter()
            .all(|r| !r.body.contains("SECRET-BODY") || r.body.contains("acc-peer-message")),
        "no body crossed the wake"
    );
    // The body then reaches the model through next-turn: on the woken turn if its prompt hook
    // ran, else on the session's next turn.
    let state = world.receipt(&id);
    let observed = if state["state"] == "offered" {
        "next-turn on the woken turn"
    } else {
        assert_eq!(state["state"], "queued");
        let next = start_turn(&world, &home, &model, "next");
        finish(next);
        "next-turn on the following turn"
    };
    let state = world.receipt(&id);
    assert_eq!(state["state"], "offered", "{observed}");
    assert_eq!(state["offer"]["transport"], "next-turn");
    assert!(
        model
            .model_requests()
            .iter()
            .any(|r| r.body.contains("SECRET-BODY") && r.body.contains("acc-peer-message"))
    );
    eprintln!("observed: the body reached the model through {observed}");
}

#[test]
fn with_delivery_off_nothing_is_pushed() {
    let world = World::new();
    let home = world.temp.path().join("home");
    install(&world, &home, "off");
    let model = ModelServer::start();
    *model.delay.lock().expect("lock") = Duration::from_secs(3);
    let turn = start_turn(&world, &home, &model, "working");
    wait_until(Duration::from_secs(60), "bob's session", || {
        world.status()["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s["participantId"] == "bob")
    });
    assert!(
        !journey::bound_to(&world, "bob", "claude-inbox"),
        "no consent, no binding"
    );
    let alice = world.attach("alice");
    let sent = ask_bob(&world, &alice);
    assert_eq!(sent["delivery"][0]["outcome"], "queued");
    assert_eq!(sent["delivery"][0]["transport"], "durable");
    finish(turn);
    assert!(
        model
            .model_requests()
            .iter()
            .all(|r| !r.body.contains("a message for you is waiting"))
    );
}

/// A stand-in Claude Code session: a live process, its registry file and a private socket.
struct FakeSession {
    process: Guarded,
    config: std::path::PathBuf,
    socket: std::path::PathBuf,
    _listener: std::os::unix::net::UnixListener,
}

impl FakeSession {
    fn new(world: &World, name: &str) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let process = Guarded(
            std::process::Command::new("sleep")
                .arg("300")
                .spawn()
                .expect("sleep"),
        );
        // The configuration directory of `<name>-home`, where the test installs ACC.
        let config = world
            .temp
            .path()
            .join(format!("{name}-home"))
            .join(".claude");
        std::fs::create_dir_all(config.join("sessions")).expect("sessions");
        let socks = world.temp.path().join(format!("{name}-socks"));
        std::fs::create_dir_all(&socks).expect("socks");
        std::fs::set_permissions(&socks, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        let socket = socks.join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let session = Self {
            process,
            config,
            socket,
            _listener: listener,
        };
        session.registry(session.pid(), "conv-1", &session.socket.to_string_lossy());
        session
    }

    fn pid(&self) -> i64 {
        i64::from(self.process.0.id())
    }

    fn registry(&self, pid: i64, session: &str, socket: &str) {
        let value = json!({ "pid": pid, "sessionId": session, "messagingSocketPath": socket, "version": "2.1.328" });
        std::fs::write(
            self.config
                .join("sessions")
                .join(format!("{}.json", self.pid())),
            value.to_string(),
        )
        .expect("registry");
    }

    fn endpoint(&self, socket: &std::path::Path) -> String {
        json!({ "socket": socket, "pid": self.pid(), "sessionId": "conv-1", "configDir": self.config }).to_string()
    }
}

#[test]
fn mismatched_registries_unsafe_sockets_and_dead_sessions_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let bob = world.attach("bob");
    let alice = world.attach("alice");
    let fake = FakeSession::new(&world, "bob");
    // Live delivery needs the consent recorded at install time, read from the binder's HOME.
    let home = world.temp.path().join("bob-home");
    install(&world, &home, "all");
    let home_env = [("HOME", home.to_str().expect("utf8"))];
    let bind = |endpoint: &str| {
        world.acc_as_with(
            &bob,
            &[
                "bind",
                "--adapter",
                "claude-inbox",
                "--policy",
                "all",
                "--endpoint",
                endpoint,
            ],
            &home_env,
        )
    };
    let socket = fake.socket.to_string_lossy().to_string();

    fake.registry(fake.pid() + 1, "conv-1", &socket);
    assert!(
        bind(&fake.endpoint(&fake.socket)).err(4, "invalid_data")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("native_session_unavailable")
    );
    fake.registry(fake.pid(), "conv-2", &socket);
    assert!(
        bind(&fake.endpoint(&fake.socket)).err(4, "invalid_data")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("another session")
    );
    fake.registry(fake.pid(), "conv-1", &socket);
    std::fs::set_permissions(&fake.socket, std::fs::Permissions::from_mode(0o660)).expect("chmod");
    assert!(
        bind(&fake.endpoint(&fake.socket)).err(4, "invalid_data")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("native_endpoint_unavailable")
    );
    std::fs::set_permissions(&fake.socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let link = world.temp.path().join("link.sock");
    std::os::unix::fs::symlink(&fake.socket, &link).expect("symlink");
    assert!(
        bind(&fake.endpoint(&link)).err(4, "invalid_data")["message"]
            .as_str()
            .unwrap_or_default()
            .contains("symlink")
    );
    assert_eq!(
        world.status()["sessions"][0]["bindings"],
        json!([]),
        "nothing was bound"
    );

    // A good binding, then the session dies: the wake is refused, recorded, and the receipt waits.
    bind(&fake.endpoint(&fake.socket)).ok_json();
    let sent = ask_bob(&world, &alice);
    assert_eq!(
        sent["delivery"][0]["outcome"], "woken",
        "the live fake session accepts the wake"
    );
    // Consent withdrawn at the installation reaches the live binding at the next message (the
    // sender's own HOME plays no part: the record is the endpoint's installation's).
    install(&world, &home, "off");
    let withdrawn = ask_bob(&world, &alice);
    assert_eq!(withdrawn["delivery"][0]["outcome"], "queued", "{withdrawn}");
    assert_eq!(withdrawn["delivery"][0]["errorCode"], "delivery_disabled");
    install(&world, &home, "actionable");
    assert_eq!(ask_bob(&world, &alice)["delivery"][0]["outcome"], "woken");
    let mut process = fake.process;
    acc_tests::kill_pid(process.0.id());
    let _ = process.0.wait();
    let sent = ask_bob(&world, &alice);
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

/// The socket `participant`'s open session is bound to (`claude-inbox`), as the store records it.
fn bound_socket(world: &World, participant: &str) -> std::path::PathBuf {
    let endpoint = journey::bound_endpoint(world, participant, "claude-inbox");
    std::path::PathBuf::from(endpoint["socket"].as_str().expect("the socket"))
}

/// Claude Code holds or turns away a message from another session when its user set
/// `crossSessionInbound` (2.1.328), and its socket says nothing either way: the send reports
/// only what that setting lets the wake do, table-driven over the user's settings and the
/// project's. `hold`: `woken` with `pendingApproval`, and the real Claude Code starts no turn for
/// it; `refuse`: not woken (`transport_rejected`), and the same line written by hand starts no
/// turn either; `accept`: woken, and the woken turn reaches the model. In every row the body
/// reaches the session's next turn through next-turn.
#[test]
fn a_claude_code_that_holds_or_refuses_cross_session_messages_is_not_reported_woken() {
    // (row, the file the setting is in, the setting)
    for (row, in_project, setting) in [
        ("user hold", false, "hold"),
        ("project refuse", true, "refuse"),
        ("accept", false, "accept"),
    ] {
        let world = World::new();
        let home = world.temp.path().join("home");
        install(&world, &home, "actionable");
        let file = if in_project {
            std::fs::create_dir_all(world.dir.join(".claude")).expect("project");
            world.dir.join(".claude/settings.local.json")
        } else {
            home.join(".claude/settings.json")
        };
        let mut settings: serde_json::Value = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_else(|| json!({}));
        settings["crossSessionInbound"] = json!(setting);
        std::fs::write(&file, settings.to_string()).expect("settings");
        let model = ModelServer::start();
        *model.delay.lock().expect("lock") = Duration::from_secs(4);
        let turn = start_turn(&world, &home, &model, "working on the parser");
        wait_until(Duration::from_secs(60), "bob's session bound", || {
            journey::bound_to(&world, "bob", "claude-inbox")
        });
        wait_until(Duration::from_secs(60), "bob's turn at the model", || {
            !model.model_requests().is_empty()
        });
        let alice = world.attach("alice");
        let sent = ask_bob(&world, &alice);
        let id = sent["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string();
        let expected = match setting {
            "hold" => {
                json!([{ "recipientParticipantId": "bob", "outcome": "woken", "pendingApproval": true, "transport": "claude-inbox" }])
            }
            "refuse" => {
                json!([{ "recipientParticipantId": "bob", "outcome": "queued", "errorCode": "transport_rejected", "transport": "claude-inbox" }])
            }
            _ => {
                json!([{ "recipientParticipantId": "bob", "outcome": "woken", "transport": "claude-inbox" }])
            }
        };
        assert_eq!(sent["delivery"], expected, "{row}");
        if setting == "refuse" {
            // What the adapter no longer writes, written by hand: Claude Code turns it away.
            use std::io::Write;
            let mut socket = std::os::unix::net::UnixStream::connect(bound_socket(&world, "bob"))
                .expect("the session's socket");
            socket
                .write_all(acc_adapter_claude_inbox_line(&id).as_bytes())
                .expect("written");
        }
        // Once Claude Code has exited no request can come: whether a woken turn ran is read
        // from everything it sent.
        finish(turn);
        let woke = model
            .model_requests()
            .iter()
            .any(|r| r.body.contains("a message for you is waiting"));
        assert_eq!(woke, setting == "accept", "{row}: a woken turn ran");
        if world.receipt(&id)["state"] == "queued" {
            finish(start_turn(&world, &home, &model, "next"));
        }
        assert_eq!(world.receipt(&id)["state"], "offered", "{row}");
        assert!(
            model
                .model_requests()
                .iter()
                .any(|r| r.body.contains(&id) && r.body.contains("acc-peer-message")),
            "{row}: the body reached a turn through next-turn"
        );
    }
}

/// The wake line `claude-inbox` writes for `message_id` (its fixed ACC text and the id).
fn acc_adapter_claude_inbox_line(message_id: &str) -> String {
    let id = acc_clients::wake::wake_id(message_id);
    let mut line = json!({ "type": "user", "message": { "role": "user", "content": acc_clients::wake::wake_text(message_id) }, "msg_id": format!("acc-wake-{id}") }).to_string();
    line.push('\n');
    line
}

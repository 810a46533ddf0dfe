//! Adapter faults end to end: real `acc` processes whose adapter refuses, panics or hangs in an
//! offer, a handshake, a render or a probe, and keep serving. The router's rules themselves are
//! in the scenario tests (`tests/scenarios/router*.scn`, `next_turn.scn`).

use std::path::PathBuf;

use acc_tests::{Creds, World};
use serde_json::{Value, json};

/// A world with an adapter directory holding the example adapter and the faulty fixture.
struct Room {
    world: World,
    adapters: PathBuf,
    endpoint: PathBuf,
}

/// The contracts folders the router admits from here: the repository's, and the fixture
/// evidence for the faulty adapter.
fn evidence_dirs() -> String {
    let root = acc_tests::repo_root();
    std::env::join_paths([
        root.join("contracts"),
        root.join("tests/fixtures/contracts"),
    ])
    .expect("paths")
    .to_string_lossy()
    .into_owned()
}

impl Room {
    fn new() -> Self {
        let world = World::new();
        let adapters = world.temp.path().join("adapters");
        std::fs::create_dir_all(&adapters).expect("adapters dir");
        let suffix = std::env::consts::DLL_SUFFIX;
        for (from, to) in [
            ("libacc_adapter_example", "libacc_adapter_example"),
            ("libfaulty_adapter", "libacc_adapter_faulty"),
        ] {
            std::fs::copy(
                acc_tests::bin_dir().join(format!("{from}{suffix}")),
                adapters.join(format!("{to}{suffix}")),
            )
            .expect("copy adapter");
        }
        let endpoint = world.temp.path().join("endpoint").join("offers.jsonl");
        std::fs::create_dir_all(endpoint.parent().expect("parent")).expect("endpoint dir");
        Self {
            world,
            adapters,
            endpoint,
        }
    }

    fn env(&self, config: &Value, extra: &[(&str, String)]) -> Vec<(String, String)> {
        let mut env = vec![
            (
                "ACC_ADAPTER_PATH".to_string(),
                self.adapters.to_string_lossy().into_owned(),
            ),
            ("ACC_ADAPTER_CONFIG".to_string(), config.to_string()),
            ("ACC_CONTRACTS_DIR".to_string(), evidence_dirs()),
        ];
        env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        env
    }

    fn run(
        &self,
        who: &Creds,
        args: &[&str],
        config: &Value,
        extra: &[(&str, String)],
    ) -> acc_tests::Run {
        let env = self.env(config, extra);
        let refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        self.world.acc_as_with(who, args, &refs)
    }

    fn bind(&self, who: &Creds, adapter: &str, policy: &str, config: &Value) -> Value {
        let endpoint = json!({ "file": self.endpoint }).to_string();
        self.run(
            who,
            &[
                "bind",
                "--adapter",
                adapter,
                "--policy",
                policy,
                "--endpoint",
                &endpoint,
            ],
            config,
            &[],
        )
        .ok_json()
    }

    fn send(&self, from: &Creds, kind: &str, config: &Value) -> Value {
        self.send_with(from, kind, config, &[])
    }

    fn send_with(
        &self,
        from: &Creds,
        kind: &str,
        config: &Value,
        extra: &[(&str, String)],
    ) -> Value {
        let args = [
            "message",
            "--to",
            "bob",
            "--kind",
            kind,
            "--subject",
            "route me",
            "--body",
            "the body",
        ];
        self.run(from, &args, config, extra).ok_json()
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        let page = self.world.acc(&["sync", "--limit", "500"]).ok_json();
        page["events"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|e| e["type"] == kind)
            .cloned()
            .collect()
    }

    fn receipt(&self, message_id: &str) -> Value {
        let history = self
            .world
            .acc(&["sync", "--scope", "history", "--message", message_id])
            .ok_json();
        history["items"][0]["receipts"][0].clone()
    }
}

fn id(sent: &Value) -> String {
    sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string()
}

fn none() -> Value {
    json!({})
}

#[test]
fn refused_panicking_and_hanging_offers_leave_the_receipt_queued() {
    let room = Room::new();
    let alice = room.world.attach("alice");
    let bob = room.world.attach("bob");
    room.bind(&bob, "example", "all", &none());
    let refuse = json!({ "example": { "offers": "refuse", "refuseCode": "recipient_busy" } });
    let sent = room.send(&alice, "question", &refuse);
    assert_eq!(
        sent["delivery"],
        json!([{ "recipientParticipantId": "bob", "outcome": "queued", "transport": "example", "errorCode": "recipient_busy" }])
    );
    assert_eq!(room.receipt(&id(&sent))["state"], "queued");
    let failed = room.events("message.offer_failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["data"]["errorCode"], "recipient_busy");

    room.run(&bob, &["unbind"], &none(), &[]).ok_json();
    room.bind(&bob, "faulty", "all", &none());
    // A panic is a known failure; a hang past the deadline is an unknown outcome, not a
    // refusal (the transport may still deliver).
    for (mode, code) in [
        ("offer-panic", "transport_error"),
        ("offer-hang", "offer_outcome_unknown"),
    ] {
        let config = json!({ "faulty": { "mode": mode } });
        let sent = room.send(&alice, "question", &config);
        assert_eq!(sent["delivery"][0]["outcome"], "queued", "{mode}");
        assert_eq!(sent["delivery"][0]["errorCode"], code, "{mode}");
        assert_eq!(room.receipt(&id(&sent))["state"], "queued");
    }
    let failed = room.events("message.offer_failed");
    assert_eq!(failed.len(), 3);
    assert_eq!(failed[1]["data"]["errorCode"], "transport_error");
    assert_eq!(failed[2]["data"]["errorCode"], "offer_outcome_unknown");
    assert!(failed[1..].iter().all(|e| e["data"]["adapter"] == "faulty"));
    // The host keeps serving.
    room.world.status();
}

#[test]
fn panics_in_handshake_render_and_probe_are_contained() {
    let room = Room::new();
    let bob = room.world.attach("bob");
    let config = json!({ "faulty": { "mode": "handshake-panic" } });
    let error = room
        .run(
            &bob,
            &["bind", "--adapter", "faulty", "--policy", "all"],
            &config,
            &[],
        )
        .err(4, "invalid_data");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("(panic)"),
        "{error}"
    );
    assert_eq!(
        room.world.status()["sessions"][0]["bindings"],
        json!([]),
        "nothing was bound"
    );
    // Rendering happens only when something is pending.
    let alice = room.world.attach("alice");
    room.send(&alice, "note", &none());
    let config = json!({ "faulty": { "mode": "render-panic" } });
    let error = room
        .run(&bob, &["next-turn", "--adapter", "faulty"], &config, &[])
        .err(4, "invalid_data");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("could not render (panic)"),
        "{error}"
    );
    // A probe that panics leaves the client's version unknown; verify says so and carries on.
    let config = json!({ "faulty": { "mode": "probe-panic" } }).to_string();
    let adapters = room.adapters.to_str().expect("utf8").to_string();
    let contracts = acc_tests::repo_root().join("contracts");
    let verify = room.world.acc_with(
        &[
            "contract",
            "verify",
            "--dir",
            contracts.to_str().expect("utf8"),
        ],
        &[
            ("ACC_ADAPTER_PATH", &adapters),
            ("ACC_ADAPTER_CONFIG", &config),
        ],
    );
    let error = verify.err(4, "invalid_data");
    assert!(
        error["details"]["problems"]
            .to_string()
            .contains("faulty-v1"),
        "the fixture has no contract: {error}"
    );
    let example = error["details"]["adapters"]
        .as_array()
        .expect("adapters")
        .iter()
        .find(|a| a["adapterId"] == "example")
        .cloned();
    assert_eq!(example.expect("example checked")["eligible"], true);
    room.world.status();
}

/// One deadline for a whole send: four recipients bound to a hanging adapter cost one
/// deadline (5 s), not four, and each is recorded with an unknown outcome.
#[test]
fn a_send_to_four_hung_recipients_costs_one_deadline() {
    let room = Room::new();
    let alice = room.world.attach("alice");
    let hang = json!({ "faulty": { "mode": "offer-hang" } });
    let mut names = Vec::new();
    for name in ["bob", "carol", "dave", "erin"] {
        let who = room.world.attach(name);
        let endpoint = json!({ "file": room.endpoint }).to_string();
        room.run(
            &who,
            &[
                "bind",
                "--adapter",
                "faulty",
                "--policy",
                "all",
                "--endpoint",
                &endpoint,
            ],
            &hang,
            &[],
        )
        .ok_json();
        names.push(name);
    }
    let mut args = vec![
        "message",
        "--kind",
        "question",
        "--subject",
        "q",
        "--body",
        "b",
    ];
    for name in &names {
        args.extend(["--to", name]);
    }
    let start = std::time::Instant::now();
    let sent = room.run(&alice, &args, &hang, &[]).ok_json();
    let took = start.elapsed();
    // One 5-second deadline plus process start, store work and a loaded machine's slack;
    // offers one after another would take 20 s.
    assert!(
        took < std::time::Duration::from_secs(9),
        "a send to four hung recipients took {took:?}"
    );
    let delivery = sent["delivery"].as_array().expect("delivery");
    assert_eq!(delivery.len(), 4);
    for outcome in delivery {
        assert_eq!(outcome["outcome"], "queued", "{outcome}");
        assert_eq!(outcome["errorCode"], "offer_outcome_unknown", "{outcome}");
    }
}

/// An offer still running at its deadline that accepts afterwards, while the process lives,
/// is recorded then: the receipt becomes `offered` and the success is an event.
#[test]
fn a_late_acceptance_is_recorded_when_it_comes() {
    use acc_app::services::App;
    use acc_core::{Core, SessionSpec};
    use acc_store::{Enforcement, Lifecycle};
    let room = Room::new();
    let workspace = acc_app::workspace::discover(&room.world.dir).expect("workspace");
    let core = Core::new(
        workspace,
        room.world.data_home.join("inprocess"),
        std::sync::Arc::new(acc_core::clock::SystemClock::default()),
        acc_app::process::liveness(),
    )
    .expect("core");
    let mut app = App::new(core, std::sync::Arc::new(acc_install::InstalledConsent));
    let configs = [(
        "faulty".to_string(),
        json!({ "mode": "offer-slow", "delayMs": 700 }).to_string(),
    )]
    .into_iter()
    .collect();
    app.delivery.set_plugins(std::sync::Arc::new(
        acc_delivery::plugins::Plugins::load_from(vec![room.adapters.clone()], &configs),
    ));
    app.delivery.offer_deadline = std::time::Duration::from_millis(150);
    app.delivery.evidence_dirs = Some(std::env::split_paths(&evidence_dirs()).collect());
    let mut attach = |name: &str| {
        let spec = SessionSpec {
            participant_id: name.into(),
            session_key: None,
            harness: acc_core::identity::Harness::Cli,
            client_version: None,
            checkout: None,
            branch: None,
            pid: Some(i64::from(std::process::id())),
            enforcement: Enforcement::Advisory,
            lifecycle: Lifecycle::Manual,
        };
        let opened = app.core.open_session(&spec, None).expect("attach");
        acc_core::Caller {
            session_id: opened.session.session_id,
            generation: opened.generation_token,
        }
    };
    let alice = attach("alice");
    let bob = attach("bob");
    app.bind(&bob, "faulty", "all", &json!({ "file": room.endpoint }))
        .expect("bind");
    let sent = app
        .send_message(
            &alice,
            &acc_core::messages::SendRequest {
                to: vec!["bob".into()],
                kind: Some("question".into()),
                subject: "late".into(),
                body: "b".into(),
                ..Default::default()
            },
        )
        .expect("send");
    assert_eq!(
        sent.delivery[0].error_code,
        Some(acc_delivery::codes::DeliveryCode::OfferOutcomeUnknown)
    );
    let id = sent.message.message.message_id.clone();
    let state = |app: &mut App| {
        app.core
            .history_message(&id)
            .map(|(_, receipts)| receipts[0].state)
            .expect("history")
    };
    assert_eq!(state(&mut app), acc_store::ReceiptState::Queued);
    app.delivery
        .settle_late_offers(std::time::Duration::from_secs(10));
    assert_eq!(
        state(&mut app),
        acc_store::ReceiptState::Offered,
        "the late acceptance was recorded"
    );
}

/// The `acc adapter-host` helpers (`ACC_ADAPTER_HOST_PARENT`) whose caller was `parent`.
fn helpers_of(parent: u32) -> Vec<u32> {
    let wanted = format!("ACC_ADAPTER_HOST_PARENT={parent}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_bytes()))
        })
        .collect()
}

/// `acc-mcp` ends at end of input, and no helper outlives it.
fn finish_without_helpers(mcp: acc_tests::JsonRpcChild, server_pid: u32) {
    assert_eq!(
        mcp.finish(std::time::Duration::from_secs(20)).code(),
        Some(0)
    );
    acc_tests::wait_until(
        std::time::Duration::from_secs(20),
        "no helper outlives acc-mcp",
        || helpers_of(server_pid).is_empty(),
    );
}

impl Room {
    /// Bob bound to the faulty adapter whose mode is read from a file at every call (`ok` at
    /// first): the file, and the adapter configuration naming it.
    fn faulty_by_file(&self) -> (PathBuf, Value) {
        let mode_file = self.world.temp.path().join("mode");
        std::fs::write(&mode_file, "ok").expect("mode");
        let config = json!({ "faulty": { "modeFile": mode_file } });
        let bob = self.world.attach("bob");
        self.bind(&bob, "faulty", "all", &config);
        (mode_file, config)
    }

    /// A real `acc-mcp` speaking for alice with these adapters, initialized; and its pid.
    fn acc_mcp_as_alice(&self, config: &Value) -> (acc_tests::JsonRpcChild, u32) {
        let mut command = self.world.command("acc-mcp");
        command
            .env("ACC_MCP_PARTICIPANT", "alice")
            .env("ACC_MCP_WORKSPACE", &self.world.dir);
        for (key, value) in self.env(config, &[]) {
            command.env(key, value);
        }
        let mut mcp = acc_tests::JsonRpcChild::spawn(command);
        let pid = mcp.child.0.id();
        let init = mcp.request(1, "initialize", json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }));
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        mcp.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        (mcp, pid)
    }
}

/// An adapter that exits, aborts, segfaults or stops its whole process cannot reach `acc-mcp`:
/// its code runs in a helper, each fault costs one `message.offer_failed` with a closed code,
/// the server answers the next call, and no helper outlives it. Table-driven over the faults,
/// under one long-lived server (the fixture reads its mode from a file at every call).
#[test]
fn an_adapter_that_exits_aborts_segfaults_or_stops_costs_acc_mcp_one_failed_offer() {
    let room = Room::new();
    let (mode_file, config) = room.faulty_by_file();
    let (mut mcp, server_pid) = room.acc_mcp_as_alice(&config);
    // (fault, outcome, error code): a helper that ends without an answer is a known failure;
    // one that is stopped never answers, so its outcome is unknown at the deadline.
    let faults = [
        ("ok", "offered", Value::Null),
        ("offer-exit", "queued", json!("transport_error")),
        ("offer-abort", "queued", json!("transport_error")),
        ("offer-segfault", "queued", json!("transport_error")),
        ("offer-panic", "queued", json!("transport_error")),
        // An adapter that prints on stdout cannot forge the helper's reply.
        ("offer-print", "offered", Value::Null),
        ("offer-stop", "queued", json!("offer_outcome_unknown")),
        ("ok", "offered", Value::Null),
    ];
    let mut id = 10;
    for (index, (fault, outcome, code)) in faults.iter().enumerate() {
        std::fs::write(&mode_file, fault).expect("mode");
        id += 1;
        let sent = mcp.request(id, "tools/call", json!({ "name": "acc_message", "arguments": { "to": ["bob"], "kind": "question", "subject": fault, "body": "route me" } }));
        let delivery = &sent["result"]["structuredContent"]["delivery"][0];
        assert_eq!(delivery["outcome"], *outcome, "{fault}: {sent}");
        assert_eq!(delivery["errorCode"], *code, "{fault}: {sent}");
        // The server keeps serving, and the room shows exactly one failed offer per fault.
        id += 1;
        let status = mcp.request(
            id,
            "tools/call",
            json!({ "name": "acc_status", "arguments": {} }),
        );
        assert!(
            status["result"]["structuredContent"]["sessions"].is_array(),
            "{fault}: {status}"
        );
        let failed = room.events("message.offer_failed").len();
        let expected = faults[..=index].iter().filter(|f| f.1 == "queued").count();
        assert_eq!(failed, expected, "{fault}");
    }
    // The stopped helper was still watched for a late answer; it goes with its server.
    finish_without_helpers(mcp, server_pid);
}

/// An adapter that crashes while it loads in `acc-mcp`'s helper is refused there; the server
/// carries on and the message waits durably.
#[test]
fn an_adapter_that_crashes_while_loading_leaves_acc_mcp_serving() {
    let room = Room::new();
    let (mode_file, config) = room.faulty_by_file();
    for fault in ["init-segfault", "init-abort", "describe-exit", "init-stop"] {
        std::fs::write(&mode_file, fault).expect("mode");
        let (mut mcp, server_pid) = room.acc_mcp_as_alice(&config);
        let sent = mcp.request(2, "tools/call", json!({ "name": "acc_message", "arguments": { "to": ["bob"], "kind": "question", "subject": fault, "body": "route me" } }));
        let delivery = &sent["result"]["structuredContent"]["delivery"][0];
        assert_eq!(delivery["outcome"], "queued", "{fault}: {sent}");
        let status = mcp.request(
            3,
            "tools/call",
            json!({ "name": "acc_status", "arguments": {} }),
        );
        assert!(
            status["result"]["structuredContent"]["sessions"].is_array(),
            "{fault}: {status}"
        );
        finish_without_helpers(mcp, server_pid);
    }
}

/// `acc adapter-host` answers every bad request with one reply line naming what was wrong, and
/// an adapter that prints on stdout cannot reach that line.
#[test]
fn the_adapter_host_names_each_bad_request_in_its_one_reply() {
    use std::io::{BufRead, Write};
    let room = Room::new();
    let faulty = room.adapters.join(format!(
        "libacc_adapter_faulty{}",
        std::env::consts::DLL_SUFFIX
    ));
    let not_adapter = room.world.temp.path().join("libacc_adapter_text.so");
    std::fs::write(&not_adapter, "not a library").expect("write");
    let request = |file: &std::path::Path, operation: &str| {
        json!({ "file": file, "config": "{}", "operation": operation, "request": "{}" }).to_string()
    };
    let cases = [
        ("not json".to_string(), "invalidRequest"),
        (
            json!({ "file": faulty, "extra": 1 }).to_string(),
            "invalidRequest",
        ),
        (
            request(&faulty, "launch"),
            "unknown adapter operation `launch`",
        ),
        (request(&not_adapter, "describe"), "refused"),
        (request(&faulty, "offer"), "offer request is not valid"),
        (request(&faulty, "describe"), "\"adapterId\":\"faulty\""),
    ];
    for (line, expected) in &cases {
        let mut command = room.world.command("acc");
        command
            .arg("adapter-host")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = acc_tests::Guarded(command.spawn().expect("spawn"));
        let mut stdin = child.0.stdin.take().expect("stdin");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .expect("write");
        let mut reply = String::new();
        std::io::BufReader::new(child.0.stdout.take().expect("stdout"))
            .read_line(&mut reply)
            .expect("read");
        drop(stdin);
        let value: Value = serde_json::from_str(&reply).expect("one json reply line");
        let text = value.to_string();
        let expected = expected.replace("invalidRequest", "invalid_request");
        assert!(text.contains(&expected), "{line}: {text}");
    }
}

//! The delivery router end to end: real `acc` processes, the `example` adapter as a live
//! transport (it appends accepted offers to a file), and the faulty fixture.

use std::path::PathBuf;

use acc_tests::{Creds, World};
use serde_json::{Value, json};

/// A world with an adapter directory holding the example adapter and the faulty fixture.
struct Room {
    world: World,
    adapters: PathBuf,
    endpoint: PathBuf,
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

    fn offers_written(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.endpoint)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
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
fn an_offer_through_a_bound_adapter_marks_the_receipt_offered() {
    let room = Room::new();
    let alice = room.world.attach("alice");
    let bob = room.world.attach("bob");
    let bound = room.bind(&bob, "example", "actionable", &none());
    assert_eq!(bound["binding"]["endpoint"], "redacted");
    assert_eq!(bound["binding"]["clientVersion"], "1.2.0");
    let sent = room.send(&alice, "question", &none());
    assert_eq!(
        sent["delivery"],
        json!([{ "recipientParticipantId": "bob", "outcome": "offered", "transport": "example" }])
    );
    let receipt = room.receipt(&id(&sent));
    assert_eq!(receipt["state"], "offered");
    assert_eq!(receipt["offer"]["transport"], "example");
    assert_eq!(receipt["offer"]["repeatedAt"], Value::Null);
    let written = room.offers_written();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["messageId"], id(&sent).as_str());
    let events = room.events("message.offer_succeeded");
    assert_eq!(events.len(), 1);
    let data = &events[0]["data"];
    assert_eq!(data["transport"], "example");
    assert_eq!(data["adapter"], "example");
    assert_eq!(data["clientVersion"], "1.2.0");
    assert_eq!(data["targetSessionId"], bob.session.as_str());
    assert_eq!(data["targetGeneration"], 1);
    assert!(
        !events[0].to_string().contains("the body"),
        "no body in events"
    );
    // Room records are never routed.
    let room_note = room
        .run(
            &alice,
            &["message", "--subject", "all", "--body", "hi"],
            &none(),
            &[],
        )
        .ok_json();
    assert_eq!(room_note["delivery"][0]["transport"], "durable");
    assert_eq!(room.offers_written().len(), 1);
}

#[test]
fn policy_sessions_and_versions_decide_before_any_transport() {
    let room = Room::new();
    let alice = room.world.attach("alice");
    let bob = room.world.attach("bob");
    // A note is not actionable; policy off refuses everything.
    room.bind(&bob, "example", "actionable", &none());
    assert_eq!(
        room.send(&alice, "note", &none())["delivery"][0]["errorCode"],
        "delivery_disabled"
    );
    room.bind(&bob, "example", "off", &none());
    assert_eq!(
        room.send(&alice, "question", &none())["delivery"][0]["errorCode"],
        "delivery_disabled"
    );
    room.bind(&bob, "example", "all", &none());
    assert_eq!(
        room.send(&alice, "note", &none())["delivery"][0]["outcome"],
        "offered"
    );

    // Versions the contract does not admit (the binding records what the handshake saw).
    for (version, code) in [
        ("1.1.0", "below_minimum_version"),
        ("1.3.1", "known_bad_version"),
        ("nightly", "unsupported_client_version"),
    ] {
        let config = json!({ "example": { "clientVersion": version } });
        room.bind(&bob, "example", "all", &config);
        let sent = room.send(&alice, "question", &config);
        assert_eq!(sent["delivery"][0]["errorCode"], code, "{version}");
        assert_eq!(room.receipt(&id(&sent))["state"], "queued");
    }
    // Two live sessions of bob: ambiguous. None: unavailable.
    room.bind(&bob, "example", "all", &none());
    let bob_again = room.world.attach("bob");
    assert_eq!(
        room.send(&alice, "question", &none())["delivery"][0]["errorCode"],
        "ambiguous_recipient_sessions"
    );
    for who in [&bob, &bob_again] {
        room.run(who, &["finish", "--goal", "leaving"], &none(), &[])
            .ok_json();
    }
    assert_eq!(
        room.send(&alice, "question", &none())["delivery"][0]["errorCode"],
        "recipient_unavailable"
    );
    assert_eq!(
        room.offers_written().len(),
        1,
        "only the admitted note crossed"
    );
    assert!(
        room.events("message.offer_failed").is_empty(),
        "no attempt, no failure record"
    );
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
    for mode in ["offer-panic", "offer-hang"] {
        let config = json!({ "faulty": { "mode": mode } });
        let sent = room.send(&alice, "question", &config);
        assert_eq!(sent["delivery"][0]["outcome"], "queued", "{mode}");
        assert_eq!(
            sent["delivery"][0]["errorCode"], "transport_error",
            "{mode}"
        );
        assert_eq!(room.receipt(&id(&sent))["state"], "queued");
    }
    let failed = room.events("message.offer_failed");
    assert_eq!(failed.len(), 3);
    assert!(
        failed[1..].iter().all(
            |e| e["data"]["adapter"] == "faulty" && e["data"]["errorCode"] == "transport_error"
        )
    );
    // The host keeps serving.
    room.world.status();
}

#[test]
fn a_wake_records_nothing_and_pending_approval_is_reported() {
    let room = Room::new();
    let alice = room.world.attach("alice");
    let bob = room.world.attach("bob");
    let wake = json!({ "example": { "offerKind": "wake" } });
    room.bind(&bob, "example", "actionable", &wake);
    let events_before = room.world.acc(&["sync", "--limit", "500"]).ok_json()["events"]
        .as_array()
        .map(Vec::len);
    let sent = room.send(&alice, "request", &wake);
    assert_eq!(
        sent["delivery"],
        json!([{ "recipientParticipantId": "bob", "outcome": "woken", "transport": "example" }])
    );
    assert_eq!(
        room.receipt(&id(&sent))["state"],
        "queued",
        "a wake leaves the receipt queued"
    );
    let events_after = room.world.acc(&["sync", "--limit", "500"]).ok_json()["events"]
        .as_array()
        .map(Vec::len);
    assert_eq!(
        events_after.map(|n| n - 1),
        events_before,
        "only message.recorded was appended"
    );
    assert!(
        room.offers_written()[0]["body"].is_null(),
        "a wake carries no peer byte"
    );
    let pending = json!({ "example": { "offerKind": "wake", "offers": "pending" } });
    let sent = room.send(&alice, "request", &pending);
    assert_eq!(sent["delivery"][0]["pendingApproval"], true);
    assert_eq!(sent["delivery"][0]["outcome"], "woken");
}

#[test]
fn an_expired_lease_is_refreshed_and_a_new_generation_retires_the_binding() {
    let room = Room::new();
    let alice = room.world.attach("alice");
    let bob = room.world.attach("bob");
    room.bind(&bob, "example", "all", &none());
    let later = [("ACC_TEST_CLOCK_OFFSET_SECONDS", "100".to_string())];
    // Keep bob present at the later time, then send after the 120 s lease lapsed.
    room.run(
        &bob,
        &["work", "--summary", "still here", "--mode", "edit"],
        &none(),
        &later,
    )
    .ok_json();
    let sent = room.send_with(
        &alice,
        "question",
        &none(),
        &[("ACC_TEST_CLOCK_OFFSET_SECONDS", "200".into())],
    );
    assert_eq!(sent["delivery"][0]["outcome"], "offered");
    let status = room
        .world
        .acc_with(&["status"], &[("ACC_TEST_CLOCK_OFFSET_SECONDS", "200")])
        .ok_json();
    let bob_session = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "bob")
        .cloned()
        .expect("bob");
    let lease: String = bob_session["bindings"][0]["leaseUntil"]
        .as_str()
        .expect("lease")
        .into();
    let bound_at = room.events("message.offer_succeeded")[0]["at"]
        .as_str()
        .expect("at")
        .to_string();
    assert!(
        lease > bound_at,
        "the lease was refreshed past the offer ({lease} vs {bound_at})"
    );

    let reopened = room
        .world
        .acc(&["attach", "--participant", "bob", "--resume", &bob.session])
        .ok_json();
    assert_eq!(reopened["generationNumber"], 2);
    let status = room.world.status();
    let bob_session = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "bob")
        .cloned()
        .expect("bob");
    assert_eq!(
        bob_session["bindings"],
        json!([]),
        "the binding died with its generation"
    );
}

#[test]
fn a_live_offer_is_repeated_once_by_next_turn_after_fifteen_minutes() {
    let room = Room::new();
    let alice = room.world.attach("alice");
    let bob = room.world.attach("bob");
    room.bind(&bob, "example", "all", &none());
    let live = room.send(&alice, "question", &none());
    let live_id = id(&live);
    let receipt_before = room.receipt(&live_id);
    // A fresh message too, which next-turn carries first.
    room.run(&bob, &["unbind"], &none(), &[]).ok_json();
    let fresh = room.send(&alice, "note", &none());
    let fresh_id = id(&fresh);

    // Too early: the live offer is not repeated yet; the fresh one is carried.
    let early = room
        .run(&bob, &["next-turn", "--adapter", "example"], &none(), &[])
        .ok_json();
    assert_eq!(early["carried"], json!([fresh_id]));
    assert_eq!(room.receipt(&fresh_id)["offer"]["transport"], "next-turn");

    let later = [("ACC_TEST_CLOCK_OFFSET_SECONDS", (16 * 60).to_string())];
    let repeat = room
        .run(
            &bob,
            &["next-turn", "--adapter", "example"],
            &none(),
            &later,
        )
        .ok_json();
    assert_eq!(repeat["carried"], json!([live_id]));
    let text = repeat["text"].as_str().expect("text");
    assert!(text.contains("repeat: offered via example at"), "{text}");
    assert!(text.contains("no retrieval recorded"));
    let receipt_after = room.receipt(&live_id);
    assert_eq!(receipt_after["state"], "offered");
    assert_eq!(
        receipt_after["updatedAt"], receipt_before["updatedAt"],
        "a repeat is not a transition"
    );
    assert!(receipt_after["offer"]["repeatedAt"].is_string());
    let repeats: Vec<Value> = room
        .events("message.offer_succeeded")
        .into_iter()
        .filter(|e| e["data"]["repeat"] == true)
        .collect();
    assert_eq!(repeats.len(), 1);
    assert_eq!(repeats[0]["data"]["transport"], "next-turn");

    // At most once per receipt.
    let again = room
        .run(
            &bob,
            &["next-turn", "--adapter", "example"],
            &none(),
            &later,
        )
        .ok_json();
    assert_eq!(again["carried"], json!([]));
    let repeats = room
        .events("message.offer_succeeded")
        .into_iter()
        .filter(|e| e["data"]["repeat"] == true)
        .count();
    assert_eq!(repeats, 1);
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

#[test]
fn binding_needs_a_loaded_adapter_and_a_verified_endpoint() {
    let room = Room::new();
    let bob = room.world.attach("bob");
    let error = room
        .run(&bob, &["bind", "--adapter", "nope"], &none(), &[])
        .err(4, "invalid_data");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("example"),
        "lists what is loaded: {error}"
    );
    room.run(
        &bob,
        &["bind", "--adapter", "example", "--endpoint", "{}"],
        &none(),
        &[],
    )
    .err(4, "invalid_data");
    room.run(
        &bob,
        &["bind", "--adapter", "example", "--policy", "sometimes"],
        &none(),
        &[],
    )
    .err(2, "invalid_arguments");
    room.run(
        &bob,
        &["bind", "--adapter", "example", "--endpoint", "{not json"],
        &none(),
        &[],
    )
    .err(2, "invalid_arguments");
    let status = room.world.status();
    assert_eq!(status["sessions"][0]["bindings"], json!([]));
}

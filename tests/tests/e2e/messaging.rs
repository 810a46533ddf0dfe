//! Messages, receipts, threads, inbox, reply and ack through the real `acc` binary.

use acc_tests::{Creds, World};
use serde_json::{Value, json};

fn str_of(value: &Value, key: &str) -> String {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing in {value}"))
        .to_string()
}

fn event_count(world: &World) -> usize {
    let mut cursor = "0000000000000000".to_string();
    let mut count = 0;
    loop {
        let page = world
            .acc(&["sync", "--cursor", &cursor, "--limit", "500"])
            .ok_json();
        count += page["events"].as_array().map(Vec::len).unwrap_or(0);
        cursor = str_of(&page, "nextCursor");
        if page["hasMore"] != true {
            return count;
        }
    }
}

fn inbox(world: &World, who: &Creds, extra: &[&str]) -> Value {
    let mut args = vec!["inbox"];
    args.extend_from_slice(extra);
    world.acc_as(who, &args).ok_json()
}

fn ids_of(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| str_of(i, "messageId"))
        .collect()
}

pub fn note(world: &World, from: &Creds, to: &str, subject: &str) -> Value {
    world
        .acc_as(
            from,
            &[
                "message",
                "--to",
                to,
                "--subject",
                subject,
                "--body",
                "body text",
            ],
        )
        .ok_json()
}

#[test]
fn request_summary_read_reply_flow_between_two_participants() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let sent = world
        .acc_as(
            &alice,
            &[
                "request",
                "--to",
                "bob",
                "--title",
                "review the store split",
                "--detail",
                "see src/store",
            ],
        )
        .ok_json();
    let message = &sent["message"];
    let id = str_of(message, "messageId");
    assert_eq!(message["kind"], "request");
    assert_eq!(message["obligation"], "reply");
    assert_eq!(message["threadId"], id.as_str(), "a root is its own thread");
    assert_eq!(message["inReplyTo"], Value::Null);
    assert_eq!(message["toParticipantIds"], json!(["bob"]));
    assert_eq!(
        sent["delivery"],
        json!([{"recipientParticipantId": "bob", "outcome": "queued", "transport": "durable"}])
    );

    // The summary carries no body and leaves the receipt queued.
    let page = inbox(&world, &bob, &[]);
    let item = &page["items"][0];
    assert_eq!(str_of(item, "messageId"), id);
    assert_eq!(item["receipt"]["state"], "queued");
    assert_eq!(item["bodyBytes"], "see src/store".len());
    for forbidden in ["body", "handoff", "toParticipantIds", "clientMessageId"] {
        assert!(
            item.get(forbidden).is_none(),
            "summary leaks {forbidden}: {item}"
        );
    }
    assert_eq!(
        inbox(&world, &bob, &[])["items"][0]["receipt"]["state"],
        "queued",
        "listing changes nothing"
    );

    // The exact read returns the whole message and marks it retrieved.
    let read = world.acc_as(&bob, &["inbox", "--message", &id]).ok_json();
    let read = read.as_array().expect("one-item array");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0]["body"], "see src/store");
    assert_eq!(read[0]["receipt"]["state"], "retrieved");
    assert_eq!(read[0]["receipt"]["offer"], Value::Null);
    for field in [
        "messageId",
        "threadId",
        "clientMessageId",
        "workspaceId",
        "fromParticipantId",
        "fromSessionId",
        "toParticipantIds",
        "kind",
        "obligation",
        "subject",
        "body",
        "inReplyTo",
        "artifacts",
        "handoff",
        "sentAt",
    ] {
        assert!(read[0].get(field).is_some(), "envelope lacks {field}");
    }

    // The reply acknowledges the original and lands in its thread.
    let reply = world
        .acc_as(&bob, &["reply", "--message", &id, "--body", "looks good"])
        .ok_json();
    assert_eq!(reply["receipt"]["state"], "acknowledged");
    assert_eq!(reply["message"]["kind"], "answer");
    assert_eq!(reply["message"]["threadId"], id.as_str());
    assert_eq!(reply["message"]["inReplyTo"], id.as_str());
    assert_eq!(reply["message"]["toParticipantIds"], json!(["alice"]));
    assert_eq!(reply["message"]["subject"], "Re: review the store split");
    assert_eq!(reply["delivery"][0]["recipientParticipantId"], "alice");
    assert!(
        ids_of(&inbox(&world, &bob, &[])).is_empty(),
        "resolved mail leaves the inbox"
    );
    let answer_id = str_of(&reply["message"], "messageId");
    assert_eq!(ids_of(&inbox(&world, &alice, &[])), vec![answer_id.clone()]);

    // History shows every recipient's receipt beside the message.
    let history = world
        .acc(&["sync", "--scope", "history", "--message", &id])
        .ok_json();
    assert_eq!(history["view"], "message");
    assert_eq!(history["items"][0]["receipts"][0]["participantId"], "bob");
    assert_eq!(history["items"][0]["receipts"][0]["state"], "acknowledged");
    assert_eq!(history["items"][0]["receipts"][0]["offer"], Value::Null);
}

#[test]
fn kinds_obligations_and_addressing_are_checked_before_anything_is_recorded() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let before = event_count(&world);
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["--to", "bob", "--kind", "answer"],
            2,
            "invalid_arguments",
        ),
        (
            vec!["--to", "bob", "--kind", "handoff"],
            2,
            "invalid_arguments",
        ),
        (
            vec!["--to", "bob", "--kind", "gossip"],
            2,
            "invalid_arguments",
        ),
        (
            vec!["--to", "bob", "--obligation", "reply"],
            2,
            "invalid_arguments",
        ),
        (
            vec!["--to", "bob", "--kind", "question", "--obligation", "none"],
            2,
            "invalid_arguments",
        ),
        (vec!["--kind", "question"], 2, "invalid_arguments"),
        (vec!["--kind", "request"], 2, "invalid_arguments"),
        (
            vec!["--kind", "decision", "--obligation", "acknowledge"],
            2,
            "invalid_arguments",
        ),
        (vec!["--to", "alice"], 2, "invalid_arguments"),
        (vec!["--to", "nobody-here"], 4, "unknown_participant"),
        (
            vec![
                "--to",
                "bob",
                "--supersedes",
                "message_AAAAAAAAAAAAAAAAAAAAAA",
            ],
            2,
            "invalid_arguments",
        ),
        (
            vec!["--to", "bob", "--client-message-id", "bad key!"],
            2,
            "invalid_arguments",
        ),
        (
            vec!["--to", "bob", "--artifact", "file:src/"],
            2,
            "unmatchable_resource",
        ),
    ];
    for (extra, exit, code) in cases {
        let mut args = vec!["message", "--subject", "s", "--body", "b"];
        args.extend_from_slice(&extra);
        world.acc_as(&alice, &args).err(exit, code);
    }
    let long_subject = "s".repeat(501);
    world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                &long_subject,
                "--body",
                "b",
            ],
        )
        .err(2, "invalid_arguments");
    world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                "two\nlines",
                "--body",
                "b",
            ],
        )
        .err(2, "invalid_arguments");
    let long_body = "b".repeat(4001);
    world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                "s",
                "--body",
                &long_body,
            ],
        )
        .err(2, "invalid_arguments");
    assert_eq!(event_count(&world), before, "refusals record nothing");

    // The limits themselves are accepted; artifacts are normalised.
    let max = world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                &"s".repeat(500),
                "--body",
                &"b".repeat(4000),
                "--artifact",
                "file:./src//a.rs=the parser",
            ],
        )
        .ok_json();
    assert_eq!(
        max["message"]["artifacts"],
        json!([{"uri": "file:src/a.rs", "description": "the parser"}])
    );
}

#[test]
fn unknown_recipients_are_refused_listing_who_is_present_and_client_names_resolve() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let error = world
        .acc_as(
            &alice,
            &["message", "--to", "carol", "--subject", "s", "--body", "b"],
        )
        .err(4, "unknown_participant");
    let message = str_of(&error, "message");
    assert!(
        message.contains("alice") && message.contains("bob"),
        "{message}"
    );
    let present: Vec<String> = error["details"]["present"]
        .as_array()
        .expect("present")
        .iter()
        .map(|p| str_of(p, "participantId"))
        .collect();
    assert!(present.contains(&"bob".to_string()));

    // `cli` is the client name of shell sessions: exactly one other is present.
    let sent = world
        .acc_as(
            &alice,
            &["message", "--to", "cli", "--subject", "s", "--body", "b"],
        )
        .ok_json();
    assert_eq!(sent["message"]["toParticipantIds"], json!(["bob"]));
    world.attach("carol");
    let error = world
        .acc_as(
            &alice,
            &["message", "--to", "cli", "--subject", "s", "--body", "b"],
        )
        .err(4, "unknown_participant");
    assert!(str_of(&error, "message").contains("several"), "{error}");
}

#[test]
fn idempotent_retries_return_the_original_and_conflicting_reuse_is_refused() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let args = [
        "message",
        "--to",
        "bob",
        "--subject",
        "s",
        "--body",
        "b",
        "--client-message-id",
        "alice-1",
    ];
    let first = world.acc_as(&alice, &args).ok_json();
    let events = event_count(&world);
    let again = world.acc_as(&alice, &args).ok_json();
    assert_eq!(
        again["message"], first["message"],
        "a retry returns the original message"
    );
    assert_eq!(event_count(&world), events, "and records nothing");
    let other = world.acc_as(
        &alice,
        &[
            "message",
            "--to",
            "bob",
            "--subject",
            "s",
            "--body",
            "other",
            "--client-message-id",
            "alice-1",
        ],
    );
    let error = other.err(4, "idempotency_conflict");
    assert_eq!(error["details"]["messageId"], first["message"]["messageId"]);
    // The key is scoped to the sender: bob may use the same key.
    let bob = world.attach("bob2");
    world
        .acc_as(
            &bob,
            &[
                "message",
                "--to",
                "alice",
                "--subject",
                "s",
                "--body",
                "b",
                "--client-message-id",
                "alice-1",
            ],
        )
        .ok_json();
    // An omitted key is generated and returned.
    let generated = world
        .acc_as(
            &alice,
            &["message", "--to", "bob", "--subject", "s", "--body", "b"],
        )
        .ok_json();
    let key = str_of(&generated["message"], "clientMessageId");
    assert!(key.starts_with("cm_"), "{key}");
    let retried = world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                "s",
                "--body",
                "b",
                "--client-message-id",
                &key,
            ],
        )
        .ok_json();
    assert_eq!(
        retried["message"]["messageId"],
        generated["message"]["messageId"]
    );
}

#[test]
fn room_records_reach_present_peers_only() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let carol = world.attach("carol");
    let sent = world
        .acc_as(
            &alice,
            &[
                "message",
                "--subject",
                "standup at 10",
                "--body",
                "in the usual room",
            ],
        )
        .ok_json();
    let id = str_of(&sent["message"], "messageId");
    assert_eq!(sent["message"]["toParticipantIds"], json!([]));
    let recipients: Vec<String> = sent["delivery"]
        .as_array()
        .expect("delivery")
        .iter()
        .map(|d| str_of(d, "recipientParticipantId"))
        .collect();
    assert_eq!(
        recipients,
        vec!["bob", "carol"],
        "every open peer, never the sender"
    );
    assert_eq!(ids_of(&inbox(&world, &bob, &[])), vec![id.clone()]);
    assert_eq!(ids_of(&inbox(&world, &carol, &[])), vec![id.clone()]);
    assert!(ids_of(&inbox(&world, &alice, &[])).is_empty());

    let dave = world.attach("dave");
    assert!(
        ids_of(&inbox(&world, &dave, &[])).is_empty(),
        "no retroactive receipt"
    );
    world
        .acc_as(&dave, &["inbox", "--message", &id])
        .err(5, "not_a_recipient");
    let history = world.acc(&["sync", "--scope", "history"]).ok_json();
    assert_eq!(
        ids_of(&history),
        vec![id],
        "later arrivals find it in history"
    );
}

#[test]
fn receipts_only_move_forward() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let id = str_of(&note(&world, &alice, "bob", "fyi")["message"], "messageId");
    // A forward skip: queued straight to acknowledged.
    let acked = world.acc_as(&bob, &["ack", "--message", &id]).ok_json();
    assert_eq!(acked["receipt"]["state"], "acknowledged");
    let events = event_count(&world);
    // Repeating the ack and reading again change nothing.
    let again = world.acc_as(&bob, &["ack", "--message", &id]).ok_json();
    assert_eq!(again["receipt"], acked["receipt"]);
    let read = world.acc_as(&bob, &["inbox", "--message", &id]).ok_json();
    assert_eq!(
        read[0]["receipt"], acked["receipt"],
        "an exact read preserves an acknowledged receipt"
    );
    assert_eq!(event_count(&world), events);
    assert!(
        ids_of(&inbox(&world, &bob, &[])).is_empty(),
        "and does not put it back in the inbox"
    );
    // Someone else cannot touch bob's receipt.
    world
        .acc_as(&alice, &["ack", "--message", &id])
        .err(5, "not_a_recipient");
    world
        .acc_as(
            &bob,
            &["ack", "--message", "message_AAAAAAAAAAAAAAAAAAAAAA"],
        )
        .err(4, "message_not_found");
}

#[test]
fn ack_refuses_an_unanswered_question_and_reply_may_follow_ack() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let q = world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--kind",
                "question",
                "--subject",
                "which db?",
                "--body",
                "?",
            ],
        )
        .ok_json();
    let q = str_of(&q["message"], "messageId");
    let before = world.status();
    let events = event_count(&world);
    let error = world
        .acc_as(&bob, &["ack", "--message", &q])
        .err(5, "reply_required");
    assert!(str_of(&error, "message").contains("reply"));
    assert_eq!(event_count(&world), events, "nothing changed");
    assert_eq!(world.status()["attention"], before["attention"]);
    assert_eq!(
        inbox(&world, &bob, &[])["items"][0]["receipt"]["state"],
        "queued"
    );

    let first = world
        .acc_as(
            &bob,
            &[
                "reply",
                "--message",
                &q,
                "--body",
                "sqlite",
                "--client-message-id",
                "bob-r1",
            ],
        )
        .ok_json();
    // A distinct follow-up reply needs a distinct key; the same key with other text is refused.
    world
        .acc_as(
            &bob,
            &[
                "reply",
                "--message",
                &q,
                "--body",
                "sqlite, WAL",
                "--client-message-id",
                "bob-r1",
            ],
        )
        .err(4, "idempotency_conflict");
    let retry = world
        .acc_as(
            &bob,
            &[
                "reply",
                "--message",
                &q,
                "--body",
                "sqlite",
                "--client-message-id",
                "bob-r1",
            ],
        )
        .ok_json();
    assert_eq!(retry["message"]["messageId"], first["message"]["messageId"]);
    let second = world
        .acc_as(
            &bob,
            &[
                "reply",
                "--message",
                &q,
                "--body",
                "sqlite, WAL",
                "--client-message-id",
                "bob-r2",
            ],
        )
        .ok_json();
    assert_ne!(
        second["message"]["messageId"],
        first["message"]["messageId"]
    );
    assert_eq!(
        second["receipt"], first["receipt"],
        "the original receipt keeps its state and time"
    );

    // A first reply after an ack is allowed.
    let n = str_of(&note(&world, &alice, "bob", "fyi")["message"], "messageId");
    world.acc_as(&bob, &["ack", "--message", &n]).ok_json();
    let late = world
        .acc_as(&bob, &["reply", "--message", &n, "--body", "thanks"])
        .ok_json();
    assert_eq!(late["receipt"]["state"], "acknowledged");
    world
        .acc_as(&alice, &["reply", "--message", &n, "--body", "x"])
        .err(5, "not_a_recipient");
}

#[test]
fn inbox_pages_20_then_5_with_stable_continuation_and_the_byte_cap() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let mut sent = Vec::new();
    for i in 0..25 {
        sent.push(str_of(
            &note(&world, &alice, "bob", &format!("note {i:02}"))["message"],
            "messageId",
        ));
    }
    let first = world.acc_as(&bob, &["inbox"]);
    assert!(first.stdout.trim().len() <= 12_000);
    let first = first.ok_json();
    let first_ids = ids_of(&first);
    assert_eq!(first_ids.len(), 20);
    let newest_first: Vec<String> = sent.iter().rev().cloned().collect();
    assert_eq!(first_ids, newest_first[..20]);
    let cursor = str_of(&first, "nextCursor");
    assert_eq!(cursor, first_ids[19]);

    // Acknowledging the anchor between pages does not shift continuation.
    world.acc_as(&bob, &["ack", "--message", &cursor]).ok_json();
    let second = inbox(&world, &bob, &["--cursor", &cursor]);
    assert_eq!(ids_of(&second), newest_first[20..]);
    assert_eq!(second["nextCursor"], Value::Null);

    // Unknown and foreign cursors are errors.
    world
        .acc_as(
            &bob,
            &["inbox", "--cursor", "message_AAAAAAAAAAAAAAAAAAAAAA"],
        )
        .err(2, "invalid_cursor");
    let carol = world.attach("carol");
    world
        .acc_as(&carol, &["inbox", "--cursor", &cursor])
        .err(2, "invalid_cursor");
    world
        .acc_as(&bob, &["inbox", "--cursor", "not-a-message"])
        .err(2, "invalid_cursor");
    world
        .acc_as(&bob, &["inbox", "--limit", "0"])
        .err(2, "invalid_arguments");
    world
        .acc_as(&bob, &["inbox", "--limit", "501"])
        .err(2, "invalid_arguments");
    world
        .acc_as(&bob, &["inbox", "--message", &cursor, "--limit", "3"])
        .err(2, "invalid_arguments");

    // Long subjects: the 12,000-byte cap wins over a large limit; subjects are cut to 160 bytes.
    let long = "é".repeat(250);
    for _ in 0..60 {
        world
            .acc_as(
                &alice,
                &["message", "--to", "bob", "--subject", &long, "--body", "b"],
            )
            .ok_json();
    }
    let capped = world.acc_as(&bob, &["inbox", "--limit", "500"]);
    assert!(
        capped.stdout.trim().len() <= 12_000,
        "{} bytes",
        capped.stdout.trim().len()
    );
    let capped = capped.ok_json();
    let count = capped["items"].as_array().map(Vec::len).unwrap_or(0);
    assert!(count > 1 && count < 60, "{count} items");
    assert!(capped["nextCursor"].is_string());
    let subject = str_of(&capped["items"][0], "subject");
    assert!(
        subject.len() <= 160 && subject.len() >= 158,
        "{}",
        subject.len()
    );
}

#[test]
fn finish_records_a_handoff_releases_claims_and_closes_presence() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    world
        .acc_as(
            &alice,
            &[
                "claim",
                "--resource",
                "file:a.rs",
                "--resource",
                "file:b.rs",
            ],
        )
        .ok_json();
    world
        .acc_as(&alice, &["finish", "--goal", "x", "--to", "nobody-known"])
        .err(4, "unknown_participant");
    world
        .acc_as(&alice, &["finish", "--goal", "x", "--status", "done"])
        .err(2, "invalid_arguments");
    let args = [
        "finish",
        "--goal",
        "split the store",
        "--to",
        "bob",
        "--completed",
        "moved queries",
        "--remaining",
        "tests",
        "--verification",
        "cargo test",
        "--client-message-id",
        "alice-finish",
    ];
    let done = world.acc_as(&alice, &args).ok_json();
    let message = &done["message"];
    assert_eq!(message["kind"], "handoff");
    assert_eq!(message["obligation"], "acknowledge");
    assert_eq!(
        message["handoff"],
        json!({"goal": "split the store", "status": "partial", "completed": ["moved queries"], "remaining": ["tests"], "blockers": [], "verification": ["cargo test"]})
    );
    let status = world.status();
    assert!(
        status["claims"].as_array().expect("claims").is_empty(),
        "claims released"
    );
    assert!(
        status["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .all(|s| s["participantId"] != "alice"),
        "presence closed"
    );
    let all = world.acc(&["status", "--all"]).ok_json();
    let closed = all["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "alice")
        .cloned()
        .expect("alice");
    assert_eq!(closed["presence"], "offline");
    assert!(closed["closedAt"].is_string());

    // A retry with the same key returns the same message, even though the session is closed.
    let retry = world.acc_as(&alice, &args).ok_json();
    assert_eq!(retry["message"], done["message"]);
    world
        .acc_as(&alice, &["claim", "--resource", "file:c.rs"])
        .err(5, "generation_stale");

    // The addressed handoff needs acknowledgement: attention until bob acks.
    let id = str_of(message, "messageId");
    let rules: Vec<Value> = world.status()["attention"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        rules.iter().any(|a| a["rule"] == "acknowledgement_required"
            && a["participantId"] == "bob"
            && a["messageId"] == id.as_str()),
        "{rules:?}"
    );
    world.acc_as(&bob, &["ack", "--message", &id]).ok_json();

    // A room handoff needs none.
    let room = world
        .acc_as(
            &bob,
            &[
                "finish",
                "--goal",
                "reviewing",
                "--blocker",
                "waiting for ci",
            ],
        )
        .ok_json();
    assert_eq!(room["message"]["obligation"], "none");
    assert_eq!(room["message"]["handoff"]["status"], "blocked");
    assert_eq!(room["message"]["toParticipantIds"], json!([]));
}

#[test]
fn prune_never_removes_unacknowledged_messages() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let done = str_of(&note(&world, &alice, "bob", "done")["message"], "messageId");
    let pending = str_of(
        &note(&world, &alice, "bob", "pending")["message"],
        "messageId",
    );
    world.acc_as(&bob, &["ack", "--message", &done]).ok_json();
    let report = world.acc(&["prune"]).ok_json();
    assert_eq!(report["applied"], false);
    assert_eq!(report["messageIds"], json!([done]));
    world
        .acc(&["prune", "--apply"])
        .err(2, "caller_identity_unresolved");
    let applied = world.acc_as(&alice, &["prune", "--apply"]).ok_json();
    assert_eq!(applied["messageIds"], json!([done]));
    world
        .acc(&["sync", "--scope", "history", "--message", &done])
        .err(4, "message_not_found");
    world
        .acc(&["sync", "--scope", "history", "--message", &pending])
        .ok_json();
    assert_eq!(ids_of(&inbox(&world, &bob, &[])), vec![pending]);
    world
        .acc(&["prune", "--before", "12"])
        .err(2, "invalid_arguments");
}

#[test]
fn delivery_reports_unavailable_recipients_and_attention_names_all_six_rules() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    // Carol leaves (finish closes her presence); a message to her waits durably.
    let carol = world.attach("carol");
    world
        .acc_as(&carol, &["finish", "--goal", "triage"])
        .ok_json();
    let sent = world
        .acc_as(
            &alice,
            &["message", "--to", "carol", "--subject", "s", "--body", "b"],
        )
        .ok_json();
    assert_eq!(
        sent["delivery"],
        json!([{"recipientParticipantId": "carol", "outcome": "queued", "transport": "durable", "errorCode": "recipient_unavailable"}])
    );
    // Two hours later bob's session (no pid) is offline too.
    let later = [("ACC_TEST_CLOCK_OFFSET_SECONDS", "7200")];
    let late = world
        .acc_as_with(
            &alice,
            &["message", "--to", "bob", "--subject", "s", "--body", "b"],
            &later,
        )
        .ok_json();
    assert_eq!(late["delivery"][0]["errorCode"], "recipient_unavailable");
    let now = world.status();
    let unavailable: Vec<&Value> = now["attention"]
        .as_array()
        .expect("attention")
        .iter()
        .filter(|a| a["rule"] == "recipient_unavailable")
        .collect();
    assert_eq!(
        unavailable.len(),
        1,
        "bob is present now, carol is not: {now}"
    );
    assert_eq!(unavailable[0]["participantId"], "alice");
    assert_eq!(unavailable[0]["otherParticipantId"], "carol");

    world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--kind",
                "question",
                "--subject",
                "q",
                "--body",
                "?",
            ],
        )
        .ok_json();
    world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--kind",
                "decision",
                "--obligation",
                "acknowledge",
                "--subject",
                "d",
                "--body",
                ".",
            ],
        )
        .ok_json();
    world
        .acc_as(
            &alice,
            &["claim", "--resource", "file:src/**", "--lease", "60"],
        )
        .ok_json();
    world
        .acc_as(
            &bob,
            &[
                "work",
                "--summary",
                "edit",
                "--mode",
                "edit",
                "--hint",
                "file:src/a.rs",
            ],
        )
        .ok_json();
    world
        .acc_as(
            &alice,
            &["claim", "--resource", "file:old.rs", "--lease", "1"],
        )
        .ok_json();
    let soon = [("ACC_TEST_CLOCK_OFFSET_SECONDS", "5")];
    let status = world.acc_with(&["status"], &soon).ok_json();
    let mut rules: Vec<String> = status["attention"]
        .as_array()
        .expect("attention")
        .iter()
        .map(|a| str_of(a, "rule"))
        .collect();
    rules.sort();
    rules.dedup();
    assert_eq!(
        rules,
        vec![
            "acknowledgement_required",
            "claim_conflict",
            "claim_contended",
            "claim_expired",
            "recipient_unavailable",
            "reply_required"
        ]
    );
    let sync = world.acc_with(&["sync"], &soon).ok_json();
    assert_eq!(
        sync["attention"], status["attention"],
        "sync carries the same attention"
    );
}

//! Decision lifecycle and history sync through the real binary.

use acc_tests::{Creds, World};
use serde_json::{Value, json};

fn id_of(sent: &Value) -> String {
    sent["message"]["messageId"]
        .as_str()
        .expect("messageId")
        .to_string()
}

fn decide(world: &World, who: &Creds, extra: &[&str]) -> Value {
    let mut args = vec![
        "message",
        "--kind",
        "decision",
        "--subject",
        "storage",
        "--body",
        "position",
    ];
    args.extend_from_slice(extra);
    world.acc_as(who, &args).ok_json()
}

fn history(world: &World, extra: &[&str]) -> Value {
    let mut args = vec!["sync", "--scope", "history"];
    args.extend_from_slice(extra);
    world.acc(&args).ok_json()
}

fn item_ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["messageId"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn supersession_inherits_recipients_and_competing_branches_conflict() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let carol = world.attach("carol");
    let root = decide(&world, &alice, &["--to", "bob"]);
    let root_id = id_of(&root);
    assert_eq!(root["message"]["decisionStatus"]["state"], "current");
    assert_eq!(
        root["message"]["decisionStatus"]["currentMessageId"],
        root_id.as_str()
    );

    // Carol supersedes with `to` empty: recipients are inherited (author alice and recipient bob).
    let by_carol = decide(&world, &carol, &["--supersedes", &root_id]);
    assert_eq!(
        by_carol["message"]["toParticipantIds"],
        json!(["alice", "bob"])
    );
    assert_eq!(
        by_carol["message"]["decisionChange"],
        json!({"action": "replace", "messageIds": [root_id]})
    );
    // Bob supersedes the same root too: two heads, a conflict.
    let by_bob = decide(&world, &bob, &["--supersedes", &root_id, "--to", "carol"]);
    assert_eq!(
        by_bob["message"]["toParticipantIds"],
        json!(["alice", "carol"]),
        "explicit merged with inherited, sender excluded"
    );
    let status = &by_bob["message"]["decisionStatus"];
    assert_eq!(status["conflicted"], true);
    assert_eq!(status["headCount"], 2);
    assert_eq!(status["currentMessageId"], Value::Null);
    assert_eq!(status["groupId"], root_id.as_str());

    // The replaced root leaves bob's ordinary inbox but stays readable by id, unacknowledged.
    let inbox = world.acc_as(&bob, &["inbox"]).ok_json();
    assert!(!item_ids(&inbox).contains(&root_id), "{inbox}");
    let exact = world
        .acc_as(&bob, &["inbox", "--message", &root_id])
        .ok_json();
    assert_eq!(exact[0]["decisionStatus"]["state"], "superseded");
    assert_eq!(exact[0]["decisionStatus"]["isHead"], false);
    assert_eq!(exact[0]["receipt"]["state"], "retrieved");

    // History + kind decision + current lists the heads only.
    let heads = history(&world, &["--kind", "decision", "--current"]);
    let mut head_ids = item_ids(&heads);
    head_ids.sort();
    let mut expected = vec![id_of(&by_carol), id_of(&by_bob)];
    expected.sort();
    assert_eq!(head_ids, expected);
    assert!(
        heads["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| i["decisionStatus"]["conflicted"] == true)
    );

    // Resolving: a new change linking both heads leaves one current head.
    let resolved = decide(
        &world,
        &alice,
        &[
            "--supersedes",
            &id_of(&by_carol),
            "--supersedes",
            &id_of(&by_bob),
        ],
    );
    let status = &resolved["message"]["decisionStatus"];
    assert_eq!(status["conflicted"], false);
    assert_eq!(status["currentMessageId"], id_of(&resolved).as_str());
    assert_eq!(
        item_ids(&history(&world, &["--kind", "decision", "--current"])),
        vec![id_of(&resolved)]
    );
    let old = world
        .acc(&["sync", "--scope", "history", "--message", &root_id])
        .ok_json();
    assert_eq!(old["items"][0]["decisionStatus"]["state"], "superseded");
    assert_eq!(
        old["items"][0]["decisionStatus"]["currentMessageId"],
        id_of(&resolved).as_str()
    );
}

#[test]
fn withdrawal_is_terminal_and_targets_are_validated() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let root = id_of(&decide(
        &world,
        &alice,
        &["--to", "bob", "--obligation", "acknowledge"],
    ));
    let note = world
        .acc_as(
            &alice,
            &["message", "--to", "bob", "--subject", "n", "--body", "b"],
        )
        .ok_json();
    let note_id = id_of(&note);
    let missing = "message_AAAAAAAAAAAAAAAAAAAAAA";
    world
        .acc_as(
            &bob,
            &[
                "message",
                "--kind",
                "decision",
                "--subject",
                "s",
                "--body",
                "b",
                "--supersedes",
                missing,
            ],
        )
        .err(4, "message_not_found");
    world
        .acc_as(
            &bob,
            &[
                "message",
                "--kind",
                "decision",
                "--subject",
                "s",
                "--body",
                "b",
                "--supersedes",
                &note_id,
            ],
        )
        .err(4, "invalid_data");
    world
        .acc_as(
            &bob,
            &[
                "message",
                "--kind",
                "decision",
                "--subject",
                "s",
                "--body",
                "b",
                "--supersedes",
                &root,
                "--withdraws",
                &root,
            ],
        )
        .err(2, "invalid_arguments");
    world
        .acc_as(
            &bob,
            &[
                "message",
                "--kind",
                "decision",
                "--subject",
                "s",
                "--body",
                "b",
                "--supersedes",
                &root,
                "--supersedes",
                &root,
            ],
        )
        .err(2, "invalid_arguments");
    let mut too_many = vec![
        "message",
        "--kind",
        "decision",
        "--subject",
        "s",
        "--body",
        "b",
    ];
    for _ in 0..17 {
        too_many.extend_from_slice(&["--supersedes", missing]);
    }
    world.acc_as(&bob, &too_many).err(2, "invalid_arguments");

    // Before the withdrawal, bob owes an acknowledgement; afterwards the old decision leaves attention.
    let owes = |world: &World| {
        world.status()["attention"]
            .as_array()
            .expect("attention")
            .iter()
            .any(|a| a["rule"] == "acknowledgement_required" && a["messageId"] == root.as_str())
    };
    assert!(owes(&world));
    let withdrawn = decide(&world, &alice, &["--withdraws", &root]);
    assert_eq!(withdrawn["message"]["decisionStatus"]["state"], "withdrawn");
    assert_eq!(
        withdrawn["message"]["decisionStatus"]["currentMessageId"],
        Value::Null
    );
    assert!(!owes(&world), "a replaced decision leaves attention");
    let old = world
        .acc(&["sync", "--scope", "history", "--message", &root])
        .ok_json();
    assert_eq!(old["items"][0]["decisionStatus"]["state"], "withdrawn");
    assert_eq!(
        old["items"][0]["receipts"][0]["state"], "queued",
        "no old receipt is advanced"
    );
    let heads = history(&world, &["--kind", "decision", "--current"]);
    assert_eq!(
        item_ids(&heads),
        vec![id_of(&withdrawn)],
        "withdrawals are listed as heads"
    );
}

#[test]
fn history_pages_filter_before_paging_and_refuse_bad_combinations() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let mut notes = Vec::new();
    for i in 0..7 {
        notes.push(id_of(
            &world
                .acc_as(
                    &alice,
                    &[
                        "message",
                        "--to",
                        "bob",
                        "--subject",
                        &format!("n{i}"),
                        "--body",
                        "b",
                    ],
                )
                .ok_json(),
        ));
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
                    "b",
                ],
            )
            .ok_json();
    }
    let first = history(&world, &["--kind", "note", "--limit", "3"]);
    assert_eq!(first["scope"], "history");
    assert_eq!(first["view"], "summary");
    let newest: Vec<String> = notes.iter().rev().cloned().collect();
    assert_eq!(item_ids(&first), newest[..3]);
    let cursor = first["nextCursor"].as_str().expect("cursor").to_string();
    let second = history(
        &world,
        &["--kind", "note", "--limit", "3", "--cursor", &cursor],
    );
    assert_eq!(item_ids(&second), newest[3..6]);
    let all = history(&world, &[]);
    assert_eq!(item_ids(&all).len(), 14);
    assert!(
        all["items"][0].get("body").is_none(),
        "history lists summaries"
    );
    // History reads change no receipt.
    let exact = world
        .acc(&["sync", "--scope", "history", "--message", &notes[0]])
        .ok_json();
    assert_eq!(exact["items"][0]["receipts"][0]["state"], "queued");
    assert_eq!(exact["items"][0]["body"], "b");

    for bad in [
        vec![
            "sync",
            "--scope",
            "history",
            "--message",
            &notes[0],
            "--kind",
            "note",
        ],
        vec![
            "sync",
            "--scope",
            "history",
            "--message",
            &notes[0],
            "--limit",
            "2",
        ],
        vec![
            "sync",
            "--scope",
            "history",
            "--message",
            &notes[0],
            "--cursor",
            &cursor,
        ],
        vec!["sync", "--scope", "history", "--current"],
        vec!["sync", "--scope", "history", "--kind", "note", "--current"],
        vec!["sync", "--scope", "history", "--kind", "gossip"],
        vec!["sync", "--scope", "delta", "--message", &notes[0]],
        vec!["sync", "--scope", "full", "--kind", "note"],
        vec!["sync", "--scope", "history", "--limit", "501"],
    ] {
        world.acc(&bad).err(2, "invalid_arguments");
    }
    world
        .acc(&["sync", "--scope", "history", "--cursor", "0000000000000001"])
        .err(2, "invalid_cursor");
    world
        .acc(&[
            "sync",
            "--scope",
            "history",
            "--message",
            "message_AAAAAAAAAAAAAAAAAAAAAA",
        ])
        .err(4, "message_not_found");
    // Delta and full keep their event cursors; full carries every message with its receipts.
    let full = world.acc(&["sync", "--scope", "full"]).ok_json();
    assert_eq!(
        full["snapshot"]["messages"].as_array().map(Vec::len),
        Some(14)
    );
    assert_eq!(
        full["snapshot"]["messages"][0]["receipts"][0]["participantId"],
        "bob"
    );
}

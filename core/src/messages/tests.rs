use serde_json::json;

use super::*;

/// The idempotency hash must stay what every earlier build computed for the same message, or a
/// retry across an upgrade is refused as a conflict: the typed form hashes the same bytes as
/// the object literal it replaced.
#[test]
fn the_content_hash_is_the_one_earlier_builds_computed() {
    let request = SendRequest {
        to: vec!["bob".into()],
        kind: Some("decision".into()),
        obligation: Some("acknowledge".into()),
        subject: "use sqlite".into(),
        body: "because".into(),
        artifacts: vec![Artifact {
            uri: "file:src/a.rs".into(),
            description: Some("the store".into()),
        }],
        supersedes: vec!["message_0123456789abcdefghijkl".into()],
        withdraws: Vec::new(),
        client_message_id: Some("k".into()),
    };
    let draft = Core::prepare_message(&request).expect("draft");
    let to = vec!["bob".to_string()];
    let earlier = json!({
        "kind": "decision",
        "obligation": "acknowledge",
        "to": to,
        "subject": "use sqlite",
        "body": "because",
        "inReplyTo": null,
        "artifacts": [{ "uri": "file:src/a.rs", "description": "the store" }],
        "handoff": null,
        "decisionChange": { "action": "replace", "messageIds": ["message_0123456789abcdefghijkl"] },
    });
    let expected = ids::hex(&Sha256::digest(earlier.to_string().as_bytes()));
    assert_eq!(
        content_hash(&draft, Obligation::Acknowledge, &to).expect("hash"),
        expected
    );
}

/// The hash is serialised straight into the hasher; across the shapes a message takes (a
/// reply, a handoff, a withdrawal, text that JSON escapes, artifacts whose objects were built
/// in another key order) it hashes the bytes of the sorted object earlier builds printed.
#[test]
fn the_content_hash_hashes_the_sorted_object_for_every_shape_of_message() {
    let plain = || Draft {
        kind: MessageKind::Note,
        obligation: None,
        to: vec!["bob".into()],
        subject: "s".into(),
        body: "b".into(),
        artifacts: json!([]),
        handoff: None,
        change: None,
        reply_to: None,
        client_message_id: None,
        finish: false,
    };
    let mut shapes = vec![("a note", plain())];
    let mut reply = plain();
    reply.reply_to = Some("message_0123456789abcdefghijkl".into());
    reply.kind = MessageKind::Answer;
    shapes.push(("a reply", reply));
    let mut handoff = plain();
    handoff.kind = MessageKind::Handoff;
    handoff.handoff = Some(json!({"status": "partial", "goal": "ship", "remaining": ["docs"]}));
    shapes.push(("a handoff", handoff));
    let mut withdrawal = plain();
    withdrawal.kind = MessageKind::Decision;
    withdrawal.change = Some((
        DecisionAction::Withdraw,
        vec!["message_0123456789abcdefghijkl".into()],
    ));
    shapes.push(("a withdrawal", withdrawal));
    let mut escaped = plain();
    escaped.subject = "quote \" back\\slash\ttab ünïcødé 🚀".into();
    escaped.body = "line\nbreak \u{1} control </script>".into();
    shapes.push(("escaped text", escaped));
    let mut artifacts = plain();
    let mut object = serde_json::Map::new();
    object.insert("uri".into(), json!("file:a b/ü.rs"));
    object.insert(
        "description".into(),
        json!({"z": 1, "a": [true, null, 1.5]}),
    );
    artifacts.artifacts = json!([object]);
    shapes.push(("artifacts built unsorted", artifacts));
    for (shape, draft) in shapes {
        let to = draft.to.clone();
        for obligation in [Obligation::None, Obligation::Reply] {
            let earlier = json!({
                "kind": draft.kind,
                "obligation": obligation,
                "to": to,
                "subject": draft.subject,
                "body": draft.body,
                "inReplyTo": draft.reply_to,
                "artifacts": draft.artifacts,
                "handoff": draft.handoff,
                "decisionChange": decision_change(&draft),
            });
            let expected = ids::hex(&Sha256::digest(earlier.to_string().as_bytes()));
            assert_eq!(
                content_hash(&draft, obligation, &to).expect("hash"),
                expected,
                "{shape}, obligation {obligation:?}"
            );
        }
    }
}

#[test]
fn a_handoff_payload_is_stored_with_every_list_even_when_empty() {
    let draft = Core::prepare_finish(&FinishRequest {
        goal: "ship".into(),
        remaining: vec!["docs".into()],
        ..FinishRequest::default()
    })
    .expect("draft");
    assert_eq!(
        draft.handoff,
        Some(json!({
            "goal": "ship",
            "status": "partial",
            "completed": [],
            "remaining": ["docs"],
            "blockers": [],
            "verification": [],
        }))
    );
}

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
    assert_eq!(content_hash(&draft, Obligation::Acknowledge, &to), expected);
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

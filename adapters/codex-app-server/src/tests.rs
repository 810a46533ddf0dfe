use super::*;

#[test]
fn the_minimum_can_be_raised_but_never_lowered() {
    assert_eq!(new("").expect("default").minimum, MINIMUM_VERSION);
    assert_eq!(
        new(r#"{"raiseMinimum":"0.170.0"}"#)
            .expect("raised")
            .minimum,
        "0.170.0"
    );
    let lowered = new(r#"{"raiseMinimum":"0.100.0"}"#).expect_err("lowered");
    assert!(
        lowered
            .message
            .as_str()
            .contains("below the evidenced minimum")
    );
    let junk = new(r#"{"raiseMinimum":"soon"}"#).expect_err("junk");
    assert!(junk.message.as_str().contains("`soon`"));
    assert!(new(r#"{"other":1}"#).is_err(), "unknown fields are refused");
}

#[test]
fn a_pre_release_of_the_minimum_is_below_it_and_cannot_lower_it() {
    for lower in ["0.152.1-alpha", "0.152.1-rc.1", "0.152.0", "0.100.0"] {
        let refused = new(&format!(r#"{{"raiseMinimum":"{lower}"}}"#)).expect_err(lower);
        assert!(
            refused
                .message
                .as_str()
                .contains("below the evidenced minimum"),
            "{lower}: {}",
            refused.message
        );
    }
    assert!(
        new(r#"{"raiseMinimum":"0.152.10"}"#).is_ok(),
        "numeric, not text, order"
    );
    assert!(
        new(r#"{"raiseMinimum":"0.170"}"#).is_err(),
        "a full version only"
    );
}

#[test]
fn the_submission_fences_peer_text_and_the_client_id_follows_the_message_id() {
    // Read as an adapter reads it: fields it is not given take their defaults.
    let message: acc_adapter_api::wire::Envelope = serde_json::from_value(json!({
        "messageId": "msg_abc", "fromParticipantId": "alice", "kind": "question",
        "obligation": "reply", "subject": "s", "body": "~~~~\nescape\u{1b}[2J",
    }))
    .expect("envelope");
    let text = submission_text(&message);
    assert!(text.starts_with("ACC: a message from another participant (msg_abc)"));
    assert_eq!(text.matches("~~~~").count(), 2, "{text}");
    assert!(!text.contains('\u{1b}'));
    assert_eq!(client_message_id("msg_abc"), "acc-msg_abc");
    assert!(
        text.contains("acc reply --message msg_abc --body"),
        "{text}"
    );
}

#[test]
fn endpoints_that_are_relative_or_missing_are_refused_before_any_connection() {
    let dir = tempfile::tempdir().expect("tmp");
    let relative = Endpoint {
        codex_home: "codex".into(),
        thread_id: "t".into(),
        cwd: "/".into(),
    };
    assert_eq!(
        verify(&relative).expect_err("relative").code,
        "handshake_failed"
    );
    let no_daemon = Endpoint {
        codex_home: dir.path().to_string_lossy().into(),
        thread_id: "t".into(),
        cwd: "/".into(),
    };
    let refused = verify(&no_daemon).expect_err("no daemon");
    assert_eq!(refused.code, "recipient_unavailable");
    assert!(
        refused.message.contains("control directory"),
        "{}",
        refused.message
    );
}

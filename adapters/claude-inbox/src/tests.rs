use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;

use super::*;

struct Fixture {
    _temp: tempfile::TempDir,
    endpoint: Endpoint,
    listener: UnixListener,
}

fn fixture() -> Fixture {
    let temp = tempfile::tempdir().expect("tempdir");
    let config = temp.path().join("claude");
    std::fs::create_dir_all(config.join("sessions")).expect("sessions");
    let socks = temp.path().join("socks");
    std::fs::create_dir_all(&socks).expect("socks");
    let socket = socks.join("1.sock");
    let listener = UnixListener::bind(&socket).expect("bind");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let pid = i64::from(std::process::id());
    let endpoint = Endpoint {
        socket: socket.to_string_lossy().into(),
        pid,
        session_id: "s-1".into(),
        config_dir: config.to_string_lossy().into(),
    };
    write_registry(&endpoint, pid, "s-1", &socket.to_string_lossy());
    Fixture {
        _temp: temp,
        endpoint,
        listener,
    }
}

fn write_registry(endpoint: &Endpoint, pid: i64, session: &str, socket: &str) {
    let registry = serde_json::json!({ "pid": pid, "sessionId": session, "messagingSocketPath": socket, "version": "2.1.328", "status": "idle" });
    std::fs::write(
        Path::new(&endpoint.config_dir)
            .join("sessions")
            .join(format!("{}.json", endpoint.pid)),
        registry.to_string(),
    )
    .expect("registry");
}

#[test]
fn a_matching_registry_and_a_private_socket_verify() {
    let f = fixture();
    assert_eq!(verify(&f.endpoint).expect("verified"), "2.1.328");
}

#[test]
fn each_mismatch_is_refused_with_its_reason() {
    let f = fixture();
    write_registry(&f.endpoint, f.endpoint.pid + 1, "s-1", &f.endpoint.socket);
    assert_eq!(
        verify(&f.endpoint).expect_err("pid").code.as_str(),
        "native_session_unavailable"
    );
    write_registry(&f.endpoint, f.endpoint.pid, "s-2", &f.endpoint.socket);
    assert_eq!(
        verify(&f.endpoint).expect_err("session").message.as_str(),
        "the session registry names another session"
    );
    write_registry(&f.endpoint, f.endpoint.pid, "s-1", "/tmp/elsewhere.sock");
    assert_eq!(
        verify(&f.endpoint).expect_err("socket").message.as_str(),
        "the session registry names another socket"
    );
    write_registry(&f.endpoint, f.endpoint.pid, "s-1", &f.endpoint.socket);
    std::fs::set_permissions(&f.endpoint.socket, std::fs::Permissions::from_mode(0o640))
        .expect("chmod");
    assert_eq!(
        verify(&f.endpoint).expect_err("mode").code.as_str(),
        "native_endpoint_unavailable"
    );
    std::fs::set_permissions(&f.endpoint.socket, std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    let link = Path::new(&f.endpoint.config_dir).join("link.sock");
    std::os::unix::fs::symlink(&f.endpoint.socket, &link).expect("symlink");
    let linked = Endpoint {
        socket: link.to_string_lossy().into(),
        ..f.endpoint.clone()
    };
    write_registry(&linked, linked.pid, "s-1", &f.endpoint.socket);
    assert_eq!(
        verify(&linked).expect_err("symlink").message.as_str(),
        "the messaging socket is a symlink"
    );
}

#[test]
fn the_wake_carries_only_the_message_id() {
    let line = wake_line("message_abc\"; rm -rf /");
    let value: serde_json::Value = serde_json::from_str(line.trim()).expect("one json line");
    assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
    assert_eq!(value["type"], "user");
    assert_eq!(value["msg_id"], "acc-wake-message_abcrm-rf");
    assert!(
        value["message"]["content"]
            .as_str()
            .expect("text")
            .contains("message_abcrm-rf")
    );
}

#[test]
fn a_client_that_changed_version_under_the_binding_is_not_woken() {
    let f = fixture();
    f.listener.set_nonblocking(true).expect("nonblocking");
    let offer = |client_version: &str| {
        ClaudeInbox
            .offer(OfferRequest {
                message: serde_json::from_value(serde_json::json!({ "messageId": "message_1" }))
                    .expect("envelope"),
                recipient_participant_id: "bob".into(),
                target_session_id: "session_1".into(),
                target_generation: 1,
                endpoint_ref: serde_json::to_string(&f.endpoint).expect("ref"),
                client_version: client_version.into(),
                timeout_ms: None,
            })
            .expect("answer")
    };
    let refused = offer("2.1.300");
    assert!(!refused.accepted);
    assert_eq!(refused.code.as_deref(), Some("unsupported_client_version"));
    assert!(
        f.listener.accept().is_err(),
        "nothing connected to the socket"
    );
    let accepted = offer("2.1.328");
    assert!(accepted.accepted, "{accepted:?}");
    assert!(f.listener.accept().is_ok(), "the wake connected");
}

/// `crossSessionInbound` read as Claude Code reads it, table-driven: the user's setting, the
/// project's stricter one winning, a looser project setting ignored, an unknown value holding,
/// a file that is not JSON setting nothing.
#[test]
fn the_inbound_setting_is_read_as_claude_code_reads_it() {
    // (row, the user's settings, the project's, the project's local ones, what is read)
    type Row<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        Inbound,
    );
    let rows: [Row<'_>; 8] = [
        ("nothing set", None, None, None, Inbound::Accept),
        (
            "user hold",
            Some(r#"{"crossSessionInbound":"hold"}"#),
            None,
            None,
            Inbound::Hold,
        ),
        (
            "user refuse",
            Some(r#"{"crossSessionInbound":"refuse"}"#),
            None,
            None,
            Inbound::Refuse,
        ),
        (
            "project stricter",
            Some(r#"{"crossSessionInbound":"accept"}"#),
            Some(r#"{"crossSessionInbound":"hold"}"#),
            None,
            Inbound::Hold,
        ),
        (
            "local stricter",
            Some(r#"{"crossSessionInbound":"hold"}"#),
            None,
            Some(r#"{"crossSessionInbound":"refuse"}"#),
            Inbound::Refuse,
        ),
        (
            "project looser",
            Some(r#"{"crossSessionInbound":"refuse"}"#),
            Some(r#"{"crossSessionInbound":"accept"}"#),
            None,
            Inbound::Refuse,
        ),
        (
            "unknown value",
            Some(r#"{"crossSessionInbound":"sometimes"}"#),
            None,
            None,
            Inbound::Hold,
        ),
        ("not json", Some("{ not json"), None, None, Inbound::Accept),
    ];
    for (row, user, project, local, expected) in rows {
        let temp = tempfile::tempdir().expect("tempdir");
        let config = temp.path().join("claude");
        let repo = temp.path().join("repo");
        std::fs::create_dir_all(&config).expect("config");
        std::fs::create_dir_all(repo.join(".claude")).expect("project");
        for (text, file) in [
            (user, config.join("settings.json")),
            (project, repo.join(".claude/settings.json")),
            (local, repo.join(".claude/settings.local.json")),
        ] {
            if let Some(text) = text {
                std::fs::write(file, text).expect("settings");
            }
        }
        assert_eq!(inbound(&config, Some(&repo)), expected, "{row}");
    }
}

/// A session whose user refuses cross-session messages is not woken (nothing is written to
/// its socket); one that holds them is woken pending approval.
#[test]
fn a_refusing_session_gets_no_wake_and_a_holding_one_is_pending_approval() {
    let fixture = fixture();
    let settings = std::path::Path::new(&fixture.endpoint.config_dir).join("settings.json");
    fixture.listener.set_nonblocking(true).expect("nonblocking");
    std::fs::write(&settings, r#"{"crossSessionInbound":"refuse"}"#).expect("settings");
    assert_eq!(
        WakeEndpoint::wake(&fixture.endpoint, "message_1", Duration::from_secs(1)),
        Err("transport_rejected")
    );
    assert!(fixture.listener.accept().is_err(), "nothing connected");
    std::fs::write(&settings, r#"{"crossSessionInbound":"hold"}"#).expect("settings");
    assert_eq!(
        WakeEndpoint::wake(&fixture.endpoint, "message_1", Duration::from_secs(1)),
        Ok(wake::Taken::PendingApproval)
    );
    std::fs::write(&settings, r#"{"crossSessionInbound":"accept"}"#).expect("settings");
    assert_eq!(
        WakeEndpoint::wake(&fixture.endpoint, "message_1", Duration::from_secs(1)),
        Ok(wake::Taken::Delivered)
    );
}

use std::sync::Arc;

use super::*;
use acc_core::Core;
use acc_core::claims::AcquireRequest;
use acc_core::clock::FixedClock;
use acc_store::{ClaimMode, Enforcement};

fn session(core: &mut Core, participant: &str, enforcement: &str) -> Caller {
    let opened = core
        .open_session(
            &SessionSpec {
                participant_id: participant.into(),
                session_key: None,
                harness: acc_core::identity::Harness::ClaudeCode,
                client_version: None,
                checkout: None,
                branch: None,
                pid: None,
                enforcement: Enforcement::parse(enforcement).expect("enforcement"),
                lifecycle: acc_store::Lifecycle::Managed,
            },
            None,
        )
        .expect("session");
    Caller {
        session_id: opened.session.session_id,
        generation: opened.generation_token,
    }
}

/// Certifies every declared guard (the evidence itself is tested in the contracts module).
struct Certified;

impl acc_core::Guards for Certified {
    fn certify(&self, _: &acc_store::SessionRow) -> Result<String, String> {
        Ok("certified for this test".into())
    }
}

#[test]
fn a_really_guarded_room_denies_writes_into_another_sessions_guarded_claim() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = temp.path().join("project");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("acc.workspace.json"),
        r#"{"schemaVersion":1,"workspaceId":"guarded","policy":{"claimMode":"guarded"}}"#,
    )
    .expect("config");
    let ws = workspace::discover(&dir).expect("workspace");
    let mut core = Core::new(
        ws,
        temp.path().join("data"),
        Arc::new(FixedClock::new(1_795_000_000_000)),
        acc_app::process::liveness(),
    )
    .expect("core");
    let alice = session(&mut core, "alice", "guarded");
    let bob = session(&mut core, "bob", "guarded");
    let claim = AcquireRequest {
        resources: vec!["file:src/**".into()],
        mode: ClaimMode::Exclusive,
        enforcement: Some(Enforcement::Guarded),
        reason: None,
        lease_seconds: None,
    };
    core.acquire_claims(&alice, &claim).expect("claim");
    let denied = |core: &mut Core, who: &Caller, path: &str| {
        core.write_conflicts(who, &[path.to_string()])
            .expect("check")
            .iter()
            .map(|c| c.participant_id.clone())
            .collect::<Vec<_>>()
    };
    // Without evidence the hooks still deny: the report says the room cannot promise it.
    assert_eq!(denied(&mut core, &bob, "file:src/a.rs"), ["alice"]);
    let report = core.status(false).expect("status");
    assert_eq!(report.protection, "advisory");
    assert!(
        report.sessions[0]
            .guard
            .reason
            .contains("no write-guard evidence")
    );
    core.set_guards(Arc::new(Certified));
    assert_eq!(denied(&mut core, &bob, "file:src/a.rs"), ["alice"]);
    assert!(denied(&mut core, &bob, "file:docs/a.md").is_empty());
    assert!(
        denied(&mut core, &alice, "file:src/a.rs").is_empty(),
        "the holder may write"
    );
    assert_eq!(core.status(false).expect("status").protection, "guarded");
    // One advisory participant lowers what the room promises, never what the hooks deny.
    session(&mut core, "carol", "advisory");
    assert_eq!(denied(&mut core, &bob, "file:src/a.rs"), ["alice"]);
    let report = core.status(false).expect("status");
    assert_eq!(report.protection, "advisory");
    assert_eq!(report.claims[0].effective_enforcement, "guarded");
    assert!(
        report
            .protection_note
            .contains("guarded claims are enforced for alice (claude-code), bob (claude-code)")
            && report
                .protection_note
                .contains("not stopped by them: carol"),
        "{}",
        report.protection_note
    );
}

#[test]
fn deny_shapes_per_client() {
    let claude = deny(Client::ClaudeCode, "held");
    assert_eq!(claude.exit, 0);
    let value: serde_json::Value = serde_json::from_str(&claude.stdout).expect("json");
    assert_eq!(value["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        value["hookSpecificOutput"]["permissionDecisionReason"],
        "held"
    );
    let codex = deny(Client::Codex, "held");
    assert_eq!(
        (codex.exit, codex.stdout.as_str(), codex.stderr.as_str()),
        (2, "", "held\n")
    );
    let gemini = deny(Client::Gemini, "held");
    assert_eq!(gemini.exit, 0);
    let value: serde_json::Value = serde_json::from_str(&gemini.stdout).expect("json");
    assert_eq!(
        value,
        serde_json::json!({ "decision": "deny", "reason": "held" })
    );
    // Qwen Code, ACC's OpenCode plugin and Kimi Code read Claude Code's shape.
    assert_eq!(deny(Client::Qwen, "held"), claude);
    assert_eq!(deny(Client::OpenCode, "held"), claude);
    assert_eq!(deny(Client::Kimi, "held"), claude);
}

/// Kimi Code takes a JSON answer's `message` as the context (and plain text as itself, unless
/// it parses as JSON): ACC always answers `{"message": …}`, whatever the text begins with.
#[test]
fn kimi_codes_context_is_a_message_object_whatever_it_begins_with() {
    for text in ["ACC: hello\n", "{\"not\": \"json of ours\"}", "[1]"] {
        let reply = inject(Client::Kimi, "UserPromptSubmit", text.to_string());
        let value: serde_json::Value = serde_json::from_str(&reply.stdout).expect("json");
        assert_eq!(value, serde_json::json!({ "message": text }));
        assert_eq!((reply.exit, reply.stderr.as_str()), (0, ""));
    }
    // Its SessionStart answer reaches nothing, so ACC gives none there.
    assert!(!shows_session_context(Client::Kimi));
    assert!(shows_session_context(Client::ClaudeCode));
}

#[test]
fn qwen_kimi_codes_and_acc_opencode_plugins_events_are_claude_codes() {
    for client in [Client::Qwen, Client::OpenCode, Client::Kimi] {
        for (event, part) in [
            ("SessionStart", Role::SessionStart),
            ("UserPromptSubmit", Role::UserPromptSubmit),
            ("PreToolUse", Role::PreToolUse),
            ("Stop", Role::Stop),
            ("SessionEnd", Role::SessionEnd),
        ] {
            assert_eq!(role(client, event), Some(part), "{event}");
        }
        assert_eq!(role(client, "BeforeAgent"), None);
        assert_eq!(role(client, "PostToolUse"), None);
    }
}

/// OpenCode's MCP tools carry no prefix: one that is not OpenCode's own is read as an MCP
/// tool (guarded when its name says it writes), OpenCode's own reading tools never are.
#[test]
fn opencodes_other_tools_are_read_as_mcp_tools() {
    let call = |client, tool: &str, input: serde_json::Value| {
        writes::written_paths(&writes::as_guarded(
            client,
            serde_json::json!({ "tool_name": tool, "tool_input": input }),
        ))
    };
    let path = serde_json::json!({ "path": "src/a.rs" });
    assert_eq!(
        call(Client::OpenCode, "files_write_file", path.clone()),
        ["src/a.rs"]
    );
    assert!(call(Client::OpenCode, "files_read_file", path.clone()).is_empty());
    assert!(
        call(
            Client::OpenCode,
            "read",
            serde_json::json!({ "filePath": "src/a.rs" })
        )
        .is_empty()
    );
    assert_eq!(
        call(
            Client::OpenCode,
            "write",
            serde_json::json!({ "filePath": "src/a.rs" })
        ),
        ["src/a.rs"]
    );
    // Another client's tool of that name is not renamed (Claude Code's MCP tools say `mcp__`).
    assert!(call(Client::ClaudeCode, "files_write_file", path).is_empty());
}

#[test]
fn gemini_events_play_the_parts_of_the_other_clients_events() {
    assert_eq!(
        role(Client::Gemini, "BeforeAgent"),
        Some(Role::UserPromptSubmit)
    );
    assert_eq!(role(Client::Gemini, "BeforeTool"), Some(Role::PreToolUse));
    assert_eq!(role(Client::Gemini, "AfterAgent"), Some(Role::Stop));
    assert_eq!(
        role(Client::Gemini, "SessionStart"),
        Some(Role::SessionStart)
    );
    assert_eq!(role(Client::Gemini, "SessionEnd"), Some(Role::SessionEnd));
    // Claude Code's names mean nothing to Gemini CLI, and the reverse.
    assert_eq!(role(Client::Gemini, "UserPromptSubmit"), None);
    assert_eq!(role(Client::Gemini, "BeforeModel"), None);
    assert_eq!(
        role(Client::ClaudeCode, "UserPromptSubmit"),
        Some(Role::UserPromptSubmit)
    );
    assert_eq!(role(Client::Codex, "Stop"), Some(Role::Stop));
    assert_eq!(role(Client::ClaudeCode, "BeforeAgent"), None);
}

/// Says the processes from `.0` on are running, the older ones gone.
struct From(i64);

impl acc_core::Liveness for From {
    fn alive(&self, pid: i64) -> bool {
        pid >= self.0
    }
}

#[test]
fn a_resumed_conversation_records_its_new_process_and_is_online() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = temp.path().join("project");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let ws = workspace::discover(&dir).expect("workspace");
    let clock = Arc::new(FixedClock::new(1_795_000_000_000));
    let mut core = Core::new(
        ws,
        temp.path().join("data"),
        clock.clone(),
        Arc::new(From(2000)),
    )
    .expect("core");
    let derive = |generation: i64| format!("gen_test_{generation}");
    let spec = |pid: i64, client_version: Option<&str>| SessionSpec {
        participant_id: "alice".into(),
        session_key: Some("claude-code:conversation".into()),
        harness: acc_core::identity::Harness::ClaudeCode,
        client_version: client_version.map(str::to_string),
        checkout: Some(format!("/checkout/{pid}")),
        branch: Some("main".into()),
        pid: Some(pid),
        enforcement: Enforcement::Guarded,
        lifecycle: acc_store::Lifecycle::Managed,
    };
    let first = core
        .open_keyed_session(&spec(1001, Some("1.0.0")), true, true, &derive)
        .expect("start");
    // Three minutes later the first process is gone and the conversation is resumed in a new
    // one; its first event may be a write check (no version, no heartbeat asked) or its start.
    for (pid, event_spec, refresh) in [
        (2002, spec(2002, None), false),
        (3003, spec(3003, Some("1.0.0")), true),
    ] {
        clock.advance(3 * 60_000);
        let resumed = core
            .open_keyed_session(&event_spec, false, refresh, &derive)
            .expect("resume");
        assert_eq!(resumed.session.session_id, first.session.session_id);
        assert_eq!(resumed.session.pid, Some(pid));
        let checkout = format!("/checkout/{pid}");
        assert_eq!(resumed.session.checkout.as_deref(), Some(checkout.as_str()));
        let report = core.status(false).expect("status");
        assert_eq!(report.sessions.len(), 1);
        assert_eq!(report.sessions[0].session.pid, Some(pid));
        assert_eq!(
            report.sessions[0].presence,
            acc_core::Presence::Online,
            "the resumed session is online at once"
        );
    }
}

#[test]
fn the_cores_harnesses_are_every_hooked_client_then_mcp_and_cli() {
    let mut expected: Vec<acc_core::identity::Harness> =
        Client::ALL.into_iter().map(crate::harness).collect();
    expected.extend([
        acc_core::identity::Harness::Mcp,
        acc_core::identity::Harness::Cli,
    ]);
    assert_eq!(
        acc_core::identity::Harness::ALL.as_slice(),
        expected.as_slice()
    );
    for client in Client::ALL {
        assert_eq!(crate::harness(client).as_str(), client.as_str());
    }
}

/// What reaches a note (and the user's screen through a client's warning) is one line however
/// it came: line ends and escapes become spaces, and a long text is cut on a character.
#[test]
fn a_note_is_one_bounded_line_whatever_its_text() {
    let cases = [
        (
            "plain",
            "folder /tmp/x is not private",
            400,
            "folder /tmp/x is not private",
        ),
        ("line ends", "one\ntwo\r\nthree", 400, "one two  three"),
        (
            "an escape sequence",
            "red\u{1b}[31mtext",
            400,
            "red [31mtext",
        ),
        ("cut at the bound", "abcdef", 3, "abc…"),
        ("exactly the bound", "abc", 3, "abc"),
        (
            "cut between letters, never inside one",
            "ünïcødé",
            4,
            "ünïc…",
        ),
        ("empty", "", 5, ""),
    ];
    for (what, text, max, want) in cases {
        assert_eq!(one_line(text, max), want, "{what}");
    }
}

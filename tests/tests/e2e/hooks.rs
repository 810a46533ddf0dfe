//! `acc hook` never blocks its client: every failure fails open within the budget.

use std::time::{Duration, Instant};

use acc_tests::World;

fn prompt(world: &World, session: &str) -> String {
    serde_json::json!({
        "session_id": session,
        "cwd": world.dir,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "hello",
    })
    .to_string()
}

/// Run a hook with `input` on stdin; returns (exit code, stdout, stderr, elapsed).
fn hook(
    world: &World,
    client: &str,
    event: &str,
    input: &str,
    env: &[(&str, &str)],
) -> (i32, String, String, Duration) {
    let start = Instant::now();
    let run = world.hook_with(client, event, input, env);
    (run.code, run.stdout, run.stderr, start.elapsed())
}

fn assert_fails_open(result: &(i32, String, String, Duration), what: &str) {
    assert_eq!(result.0, 0, "{what}: exit {} stderr {}", result.0, result.2);
    assert!(
        result.1.is_empty(),
        "{what}: nothing on stdout, got {}",
        result.1
    );
    assert!(
        result.3 < Duration::from_secs(6),
        "{what}: took {:?}",
        result.3
    );
}

#[test]
fn malformed_input_and_unknown_events_fail_open() {
    let world = World::new();
    for input in [
        "not json",
        "",
        "[1,2]",
        "{\"cwd\":\"/\"}",
        "{\"session_id\":7}",
    ] {
        assert_fails_open(
            &hook(&world, "claude-code", "UserPromptSubmit", input, &[]),
            input,
        );
        assert_fails_open(
            &hook(&world, "codex", "UserPromptSubmit", input, &[]),
            input,
        );
    }
    assert_fails_open(
        &hook(
            &world,
            "claude-code",
            "Notification",
            &prompt(&world, "s1"),
            &[],
        ),
        "unknown event",
    );
    assert_fails_open(
        &hook(
            &world,
            "vim",
            "UserPromptSubmit",
            &prompt(&world, "s1"),
            &[],
        ),
        "unknown client",
    );
}

#[test]
fn an_unusable_data_home_fails_open() {
    let world = World::new();
    let not_a_dir = world.temp.path().join("data-is-a-file");
    std::fs::write(&not_a_dir, "x").expect("file");
    let env = [("ACC_DATA_HOME", not_a_dir.to_str().expect("utf8"))];
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "Stop",
        "SessionEnd",
    ] {
        let result = hook(&world, "claude-code", event, &prompt(&world, "s1"), &env);
        assert_fails_open(&result, event);
        assert!(
            result.2.contains("acc hook:"),
            "a one-line diagnostic on stderr: {}",
            result.2
        );
    }
    let result = hook(
        &world,
        "codex",
        "UserPromptSubmit",
        &prompt(&world, "s1"),
        &[("ACC_DATA_HOME", "relative/path")],
    );
    assert_fails_open(&result, "relative data home");
}

#[test]
fn a_locked_or_interrupted_store_fails_open_within_the_budget_and_stays_intact() {
    let world = World::new();
    // A first hook creates the store and the session.
    let first = hook(
        &world,
        "claude-code",
        "SessionStart",
        &prompt(&world, "s1"),
        &[],
    );
    assert_eq!(first.0, 0, "{}", first.2);
    assert!(first.1.contains("additionalContext"));
    let store = world.store_path();

    // Another process holds the write lock for longer than the budget. A prompt with nothing
    // to carry only reads, which a held write lock does not block (WAL): it answers at once.
    let conn = rusqlite::Connection::open(&store).expect("open");
    conn.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let reads = hook(
        &world,
        "claude-code",
        "UserPromptSubmit",
        &prompt(&world, "s1"),
        &[],
    );
    assert_fails_open(&reads, "a read beside a held write lock");
    assert!(reads.2.is_empty(), "no failure to report: {}", reads.2);
    assert!(reads.3 < Duration::from_secs(3), "{:?}", reads.3);
    // A new conversation must write (its session's new generation): it fails open at the
    // budget.
    let locked = hook(
        &world,
        "claude-code",
        "SessionStart",
        &prompt(&world, "s1"),
        &[],
    );
    assert_fails_open(&locked, "write lock held elsewhere");
    assert!(locked.2.contains("budget"), "{}", locked.2);
    conn.execute_batch("ROLLBACK").expect("unlock");
    drop(conn);

    // The hook's own write transaction is cut off (its process exits at the budget).
    let held = hook(
        &world,
        "claude-code",
        "SessionStart",
        &prompt(&world, "s1"),
        &[("ACC_TEST_HOLD_WRITE_MS", "20000")],
    );
    assert_fails_open(&held, "interrupted write");
    let conn = rusqlite::Connection::open(&store).expect("open");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(check, "ok");
    drop(conn);
    let after = hook(
        &world,
        "claude-code",
        "SessionStart",
        &prompt(&world, "s1"),
        &[],
    );
    assert_eq!(after.0, 0);
    assert!(
        after.1.contains("additionalContext"),
        "the next hook works: {}",
        after.2
    );
}

#[test]
fn writes_are_not_blocked_in_an_advisory_room() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(
            &alice,
            &[
                "claim",
                "--resource",
                "file:src/a.rs",
                "--enforcement",
                "guarded",
            ],
        )
        .ok_json();
    let write = serde_json::json!({
        "session_id": "s2", "cwd": world.dir, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": { "file_path": world.dir.join("src/a.rs"), "content": "x" },
    })
    .to_string();
    let result = hook(&world, "claude-code", "PreToolUse", &write, &[]);
    assert_fails_open(&result, "advisory room");
    let patch = serde_json::json!({
        "session_id": "s3", "cwd": world.dir, "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch", "tool_input": { "command": "*** Begin Patch\n*** Update File: src/a.rs\n*** End Patch" },
    })
    .to_string();
    assert_fails_open(
        &hook(&world, "codex", "PreToolUse", &patch, &[]),
        "advisory room (codex)",
    );
    let status = world.status();
    assert_eq!(status["workspace"]["protection"], "advisory");
}

#[test]
fn a_resume_or_compaction_keeps_the_generation_and_a_new_start_rotates_it() {
    let world = World::new();
    let start = |source: &str| {
        let input = serde_json::json!({ "session_id": "conv-1", "cwd": world.dir, "hook_event_name": "SessionStart", "source": source }).to_string();
        let result = hook(&world, "claude-code", "SessionStart", &input, &[]);
        assert_eq!(result.0, 0, "{}", result.2);
        let value: serde_json::Value = serde_json::from_str(&result.1).expect("json");
        let context = value["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("context")
            .to_string();
        let generation = context
            .split("--generation '")
            .nth(1)
            .and_then(|s| s.split('\'').next())
            .expect("generation")
            .to_string();
        (
            generation,
            world.acc(&["status", "--all"]).ok_json()["sessions"][0]["generation"].clone(),
        )
    };
    let (first, number) = start("startup");
    assert_eq!(number, 1);
    assert_eq!(
        start("resume"),
        (first.clone(), serde_json::json!(1)),
        "a resume keeps the generation"
    );
    assert_eq!(
        start("compact"),
        (first.clone(), serde_json::json!(1)),
        "a compaction keeps it too"
    );
    let (rotated, number) = start("startup");
    assert_ne!(rotated, first);
    assert_eq!(number, 2);
    // The credentials printed by the hook work from a shell; the old ones are stale.
    let session = world.acc(&["status"]).ok_json()["sessions"][0]["sessionId"]
        .as_str()
        .expect("id")
        .to_string();
    let fresh = acc_tests::Creds {
        participant: "x".into(),
        session: session.clone(),
        generation: rotated,
    };
    world
        .acc_as(
            &fresh,
            &[
                "work",
                "--summary",
                "from the agent's shell",
                "--mode",
                "edit",
            ],
        )
        .ok_json();
    let stale = acc_tests::Creds {
        participant: "x".into(),
        session,
        generation: first,
    };
    world
        .acc_as(&stale, &["work", "--clear"])
        .err(5, "generation_stale");
    assert_eq!(
        world.acc(&["status"]).ok_json()["sessions"][0]["participantId"],
        "claude-code-conv-1"
    );
}

#[test]
fn doctor_reports_a_store_of_another_version_and_keeps_going() {
    let world = World::new();
    let id = world.workspace_id();
    let store = acc_tests::store_path(&world.data_home, &id);
    std::fs::create_dir_all(store.parent().expect("dir")).expect("mkdir");
    let conn = rusqlite::Connection::open(&store).expect("create");
    conn.execute_batch("CREATE TABLE acc_meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO acc_meta VALUES ('protocol_version','0.1'),('schema_version','2');")
        .expect("old store");
    drop(conn);
    let before = std::fs::read(&store).expect("bytes");
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let report = world
        .acc(&["doctor", "--home", home.to_str().expect("utf8")])
        .ok_json();
    assert_eq!(report["ok"], false);
    let checks = report["checks"].as_array().expect("checks");
    let store_check = checks
        .iter()
        .find(|c| c["name"] == "store")
        .expect("store check");
    assert_eq!(store_check["status"], "error");
    assert!(
        store_check["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("store_version_unsupported"),
        "{store_check}"
    );
    assert!(
        store_check["fix"]
            .as_str()
            .unwrap_or_default()
            .contains("move"),
        "{store_check}"
    );
    assert!(checks.iter().any(
        |c| c["name"] == "hooks claude-code" && c["fix"] == "acc install --client claude-code"
    ));
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "adapter next-turn" && c["status"] == "ok")
    );
    assert_eq!(
        std::fs::read(&store).expect("bytes"),
        before,
        "doctor changed nothing"
    );
}

/// A burst of more messages than next-turn looks at in one turn (100) while the recipient is
/// busy: every turn carries what fits, newest first, and the older ones follow on later turns
/// instead of staying queued behind the offered ones (which stay unresolved until acknowledged).
#[test]
fn a_burst_larger_than_a_page_reaches_next_turn_in_full() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let sent: Vec<String> = (0..130)
        .map(|i| {
            world.tell(&alice, "bob", &format!("burst {i}"), "b")["message"]["messageId"]
                .as_str()
                .expect("id")
                .to_string()
        })
        .collect();
    let mut carried = std::collections::BTreeSet::new();
    for turn in 0..40 {
        let rendered = world
            .acc_as(&bob, &["next-turn", "--adapter", "next-turn"])
            .ok_json();
        let this_turn: Vec<String> = rendered["carried"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|id| id.as_str().map(str::to_string))
            .collect();
        if this_turn.is_empty() {
            break;
        }
        for id in this_turn {
            assert!(carried.insert(id), "turn {turn} carried a message again");
        }
    }
    let missing: Vec<&String> = sent.iter().filter(|id| !carried.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "never carried: {} of 130",
        missing.len()
    );
    let inbox = world.acc_as(&bob, &["inbox", "--limit", "100"]).ok_json();
    assert!(
        inbox["items"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|item| item["receipt"]["state"] != "queued"),
        "nothing is left queued"
    );
}

/// Claude Code writes its session registry a moment after it starts, and under load after the
/// SessionStart hook has run: the binding is tried again at the next turn while the session is
/// unbound (and never written again once it is bound).
#[test]
fn a_claude_code_session_whose_registry_appears_after_its_start_is_bound_at_its_next_turn() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(home.join(".claude/sessions")).expect("home");
    let home_arg = home.to_str().expect("utf8").to_string();
    let installed = world.acc_with(
        &[
            "install",
            "--client",
            "claude-code",
            "--home",
            &home_arg,
            "--delivery",
            "actionable",
        ],
        &[("HOME", &home_arg), ("PATH", &acc_tests::clients().path())],
    );
    assert_eq!(installed.code, 0, "{installed:?}");
    // The session's messaging socket, as Claude Code makes it: 0600 in a 0700 folder.
    let sockets = world.temp.path().join("cc-socks");
    std::fs::create_dir_all(&sockets).expect("sockets");
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).expect("mode");
    let socket = sockets.join("session.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("socket");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("mode");
    let pid = std::process::id().to_string();
    let socket_arg = socket.to_str().expect("utf8").to_string();
    let env = [
        ("HOME", home_arg.as_str()),
        ("PATH", &acc_tests::clients().path()),
        ("CLAUDE_PID", pid.as_str()),
        ("CLAUDE_CODE_MESSAGING_SOCKET", socket_arg.as_str()),
        ("ACC_PARTICIPANT", "bob"),
    ];
    let payload = |event: &str| {
        serde_json::json!({
            "session_id": "conversation-1", "cwd": world.dir, "hook_event_name": event,
            "source": "startup", "prompt": "hello",
        })
        .to_string()
    };
    let bindings = || {
        let status = world.acc(&["status"]).ok_json();
        status["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .find(|s| s["participantId"] == "bob")
            .map(|s| s["bindings"].as_array().map_or(0, Vec::len))
            .unwrap_or_else(|| panic!("bob's session: {status}"))
    };
    let hook = |event: &str| world.hook_with("claude-code", event, &payload(event), &env);
    let started = hook("SessionStart");
    assert_eq!(started.code, 0, "{started:?}");
    assert!(
        started.stderr.contains("no live delivery"),
        "no registry yet: {started:?}"
    );
    assert_eq!(bindings(), 0);
    // Claude Code writes its registry; the next turn binds the session.
    std::fs::write(
        home.join(format!(".claude/sessions/{pid}.json")),
        serde_json::json!({
            "pid": std::process::id(), "sessionId": "conversation-1",
            "messagingSocketPath": socket, "version": "2.1.328", "cwd": world.dir,
        })
        .to_string(),
    )
    .expect("registry");
    let turn = hook("UserPromptSubmit");
    assert_eq!(turn.code, 0, "{turn:?}");
    assert_eq!(bindings(), 1, "bound at the next turn: {turn:?}");
    // Bound: a later turn writes nothing.
    let head = world.acc(&["status"]).ok_json()["cursor"].clone();
    let again = hook("UserPromptSubmit");
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stderr.is_empty(), "{again:?}");
    assert_eq!(
        world.acc(&["status"]).ok_json()["cursor"],
        head,
        "no event written"
    );
}

/// One way a client session can end, and how its end is recorded.
struct Ending {
    name: &'static str,
    client: &'static str,
    /// Events before the end, by role name in the client's own spelling.
    before: &'static [&'static str],
    /// The transcript the end reports: `None` names no path; `Some(None)` a missing file;
    /// `Some(Some(bytes))` a file with those bytes.
    transcript: Option<Option<&'static str>>,
    /// A peer messages the room while the session is open.
    messaged: bool,
    /// The reason its `session.closed` event gives; `None`: no session was ever opened, so
    /// nothing is recorded at all.
    closed: Option<&'static str>,
}

#[test]
fn a_session_that_ends_without_a_turn_is_closed_saying_so_and_nothing_is_deleted() {
    let endings = [
        // `claude mcp list` (Claude Code 2.1.328): SessionEnd alone, no transcript.
        Ending {
            name: "end alone",
            client: "claude-code",
            before: &[],
            transcript: Some(None),
            messaged: false,
            closed: None,
        },
        Ending {
            name: "start then end",
            client: "claude-code",
            before: &["SessionStart"],
            transcript: Some(None),
            messaged: false,
            closed: Some("client_session_end_without_turn"),
        },
        Ending {
            name: "empty transcript",
            client: "claude-code",
            before: &["SessionStart"],
            transcript: Some(Some("")),
            messaged: false,
            closed: Some("client_session_end_without_turn"),
        },
        Ending {
            name: "gemini start then end",
            client: "gemini",
            before: &["SessionStart"],
            transcript: Some(None),
            messaged: false,
            closed: Some("client_session_end_without_turn"),
        },
        Ending {
            name: "a turn",
            client: "claude-code",
            before: &["SessionStart", "UserPromptSubmit", "Stop"],
            transcript: Some(Some("{\"type\":\"user\"}\n")),
            messaged: false,
            closed: Some("client_session_end"),
        },
        Ending {
            name: "gemini turn",
            client: "gemini",
            before: &["SessionStart", "BeforeAgent", "AfterAgent"],
            transcript: Some(Some("{\"messages\":[]}")),
            messaged: false,
            closed: Some("client_session_end"),
        },
        Ending {
            name: "messaged while open",
            client: "claude-code",
            before: &["SessionStart"],
            transcript: Some(None),
            messaged: true,
            closed: Some("client_session_end_without_turn"),
        },
        Ending {
            name: "no transcript path",
            client: "claude-code",
            before: &["SessionStart"],
            transcript: None,
            messaged: false,
            closed: Some("client_session_end"),
        },
        Ending {
            name: "second generation",
            client: "claude-code",
            before: &["SessionStart", "SessionStart"],
            transcript: Some(None),
            messaged: false,
            closed: Some("client_session_end_without_turn"),
        },
    ];
    for ending in &endings {
        let world = World::new();
        let alice = world.attach("alice");
        let payload = |event: &str| {
            let mut value = serde_json::json!({
                "session_id": "conv-1",
                "cwd": world.dir,
                "hook_event_name": event,
                "source": "startup",
                "prompt": "hello",
                "reason": "other",
            });
            match ending.transcript {
                None => {}
                Some(bytes) => {
                    let path = world.temp.path().join("transcript.jsonl");
                    if let Some(bytes) = bytes {
                        std::fs::write(&path, bytes).expect("transcript");
                    }
                    value["transcript_path"] = serde_json::json!(path);
                }
            }
            value.to_string()
        };
        for event in ending.before {
            let run = world.hook(ending.client, event, &payload(event));
            assert_eq!(run.code, 0, "{}: {event}: {}", ending.name, run.stderr);
        }
        if ending.messaged {
            world
                .acc_as(
                    &alice,
                    &["message", "--subject", "hello", "--body", "anyone there?"],
                )
                .ok_json();
        }
        let run = world.hook(ending.client, "SessionEnd", &payload("SessionEnd"));
        assert_eq!(run.code, 0, "{}: {}", ending.name, run.stderr);
        assert!(run.stdout.is_empty(), "{}: {}", ending.name, run.stdout);
        let snapshot = world.acc(&["sync", "--scope", "full"]).ok_json();
        let events = world.acc(&["sync"]).ok_json()["events"].clone();
        let named = |id: &str| snapshot.to_string().contains(id) || events.to_string().contains(id);
        let participant = format!("{}-conv-1", ending.client);
        assert_eq!(
            named(&participant),
            ending.closed.is_some(),
            "{}: {snapshot} {events}",
            ending.name
        );
        if let Some(reason) = ending.closed {
            let events = events.as_array().expect("events");
            assert!(
                events.iter().any(|e| e["type"] == "session.closed"
                    && e["participantId"] == participant.as_str()
                    && e["data"]["reason"] == reason),
                "{}: the end is recorded with {reason}: {events:?}",
                ending.name
            );
            assert!(
                events
                    .iter()
                    .any(|e| e["type"] == "session.opened"
                        && e["participantId"] == participant.as_str()),
                "{}: the opening is still there: {events:?}",
                ending.name
            );
        }
        // The peer's own record is untouched either way, and the room goes on.
        assert!(named(&alice.participant), "{}: {snapshot}", ending.name);
        world
            .acc_as(
                &alice,
                &[
                    "message",
                    "--subject",
                    "still here",
                    "--body",
                    "the room goes on",
                ],
            )
            .ok_json();
    }
}

/// The event log only grows: a follower that saw a hooked session open sees it close, whether
/// the session had a turn or ended without one (a client started only to list its MCP servers,
/// as `claude mcp list` does), for every client; its cursors stay gap-free, and nothing it read
/// goes away.
#[test]
fn a_follower_sees_every_session_it_saw_open_also_close() {
    for client in acc_clients::Client::ALL {
        for had_turn in [false, true] {
            let row = format!("{} with a turn: {had_turn}", client.as_str());
            let world = World::new();
            let transcript = world.temp.path().join("transcript.jsonl");
            if had_turn {
                std::fs::write(&transcript, "{\"type\":\"user\"}\n").expect("transcript");
            }
            let payload = |event: &str| {
                serde_json::json!({ "session_id": "conv-1", "cwd": world.dir, "hook_event_name": event, "source": "startup", "reason": "other", "transcript_path": transcript }).to_string()
            };
            let run = world.hook(client.as_str(), "SessionStart", &payload("SessionStart"));
            assert_eq!(run.code, 0, "{row}: {}", run.stderr);
            let seen = world.acc(&["sync", "--limit", "500"]).ok_json();
            let opened: Vec<String> = seen["events"]
                .as_array()
                .expect("events")
                .iter()
                .filter(|e| e["type"] == "session.opened")
                .map(|e| e["sessionId"].as_str().expect("session").to_string())
                .collect();
            assert_eq!(opened.len(), 1, "{row}: {seen}");
            let cursor = seen["nextCursor"].as_str().expect("cursor").to_string();
            let run = world.hook(client.as_str(), "SessionEnd", &payload("SessionEnd"));
            assert_eq!(run.code, 0, "{row}: {}", run.stderr);
            let after = world
                .acc(&["sync", "--cursor", &cursor, "--limit", "500"])
                .ok_json();
            let closed: Vec<&serde_json::Value> = after["events"]
                .as_array()
                .expect("events")
                .iter()
                .filter(|e| e["type"] == "session.closed")
                .collect();
            assert_eq!(closed.len(), 1, "{row}: {after}");
            assert_eq!(closed[0]["sessionId"], opened[0].as_str(), "{row}: {after}");
            let reason = if had_turn {
                "client_session_end"
            } else {
                "client_session_end_without_turn"
            };
            assert_eq!(closed[0]["data"]["reason"], reason, "{row}: {after}");
            // Everything read before is still there, and the cursors have no gap.
            let all = world.acc(&["sync", "--limit", "500"]).ok_json();
            acc_tests::assert_gap_free(&all);
            for event in seen["events"].as_array().expect("events") {
                assert!(
                    all["events"].as_array().expect("events").contains(event),
                    "{row}: {event} is gone"
                );
            }
            // The closed session is no longer among the open ones.
            let status = world.status();
            assert!(
                status["sessions"]
                    .as_array()
                    .expect("sessions")
                    .iter()
                    .all(|s| s["sessionId"] != opened[0].as_str()),
                "{row}: {status}"
            );
        }
    }
}

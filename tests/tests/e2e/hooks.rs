//! `acc hook` never blocks its client: every failure fails open within the budget.

use std::io::Write;
use std::process::Stdio;
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
    let mut command = world.command("acc");
    command
        .args(["hook", client, event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let start = Instant::now();
    let mut child = command.spawn().expect("spawn hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let output = acc_tests::wait_with_deadline(child, Duration::from_secs(20), "acc hook");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        start.elapsed(),
    )
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

    // Another process holds the write lock for longer than the budget.
    let conn = rusqlite::Connection::open(&store).expect("open");
    conn.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let locked = hook(
        &world,
        "claude-code",
        "UserPromptSubmit",
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
        "UserPromptSubmit",
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

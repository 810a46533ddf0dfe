//! A room on PostgreSQL when its server fails: stopped, killed in the middle of a send loop,
//! or too slow for a statement. Every command answers `storage_unavailable` (exit 4) naming the
//! room, nothing is half-written, hooks fail open within their budget and tell the model in one
//! line, and `acc-mcp` keeps serving and comes back by itself.

use std::time::{Duration, Instant};

use acc_tests::pg::{Cluster, Database};
use acc_tests::{JsonRpcChild, World};
use serde_json::{Value, json};

const CONFIG: &str = r#"{"schemaVersion":1,"workspaceId":"faulty-room"}"#;

fn machine(db: &Database) -> World {
    let world = World::new();
    std::fs::write(world.dir.join("acc.workspace.json"), CONFIG).expect("config");
    world.acc(&["room", "connect", &db.socket_url()]).ok_json();
    world
}

fn room_name(db: &Database) -> String {
    format!("{}:{}/{}", db.socket_dir.display(), db.port, db.name)
}

fn status_call(child: &mut JsonRpcChild, id: u64) -> Value {
    child.request(
        id,
        "tools/call",
        json!({ "name": "acc_status", "arguments": {} }),
    )["result"]
        .clone()
}

#[test]
fn with_the_server_stopped_commands_exit_4_hooks_fail_open_with_one_line_and_acc_mcp_recovers() {
    let mut cluster = Cluster::start();
    let db = cluster.database("room stopped");
    let world = machine(&db);
    let alice = world.attach("alice");
    world.attach("bob");
    let input = json!({"session_id": "s1", "cwd": world.dir, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}).to_string();
    assert_eq!(
        world.hook("claude-code", "UserPromptSubmit", &input).code,
        0
    );
    let mut server = world.mcp("carol");
    assert_ne!(status_call(&mut server, 2)["isError"], true);

    cluster.stop();
    let name = room_name(&db);
    // Every command: exit 4, the room named, nothing else.
    for (args, who) in [
        (vec!["status"], false),
        (vec!["inbox"], true),
        (vec!["claim", "--resource", "file:a.rs"], true),
        (
            vec!["message", "--to", "bob", "--subject", "s", "--body", "b"],
            true,
        ),
        (vec!["room", "show"], false),
    ] {
        let run = if who {
            world.acc_as(&alice, &args)
        } else {
            world.acc(&args)
        };
        let error = run.err(4, "storage_unavailable");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains(&name), "{args:?}: {message}");
    }
    // The hook: within its budget, exit 0, the model told in one ACC line.
    let started = Instant::now();
    let hook = world.hook("claude-code", "UserPromptSubmit", &input);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(hook.code, 0, "{}", hook.stderr);
    let answer: Value = serde_json::from_str(&hook.stdout).expect("hook json");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(context.lines().count(), 1, "{context}");
    assert!(
        context.starts_with("ACC: coordination is unavailable") && context.contains(&name),
        "{context}"
    );
    // The write guard fails open too (nothing that blocks).
    let guard = json!({"session_id": "s1", "cwd": world.dir, "hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": world.dir.join("a.rs"), "content": "x"}}).to_string();
    let guarded = world.hook("claude-code", "PreToolUse", &guard);
    assert_eq!(guarded.code, 0);
    assert!(!guarded.stdout.contains("deny"), "{}", guarded.stdout);
    // acc-mcp answers with the code and keeps serving.
    let down = status_call(&mut server, 3);
    assert_eq!(down["isError"], true, "{down}");
    assert_eq!(
        down["structuredContent"]["error"]["code"], "storage_unavailable",
        "{down}"
    );

    cluster.restart();
    // Back without a restart of acc-mcp (bounded: its next call reconnects).
    let mut id = 4;
    acc_tests::wait_until(
        Duration::from_secs(20),
        "acc-mcp serves the room again",
        || {
            id += 1;
            status_call(&mut server, id)["isError"] != true
        },
    );
    world.acc(&["status"]).ok_json();
    assert!(server.finish(Duration::from_secs(20)).success());
}

#[test]
fn a_send_loop_through_a_killed_server_loses_nothing_and_records_each_message_once() {
    let mut cluster = Cluster::start();
    let db = cluster.database("room killed");
    let world = machine(&db);
    let alice = world.attach("alice");
    world.attach("bob");
    let total = 40;
    let sender = {
        let alice = alice.clone();
        let dir = world.dir.clone();
        let data_home = world.data_home.clone();
        std::thread::spawn(move || {
            let mut retries = 0;
            for n in 0..total {
                let key = format!("loop-{n}");
                let deadline = Instant::now() + Duration::from_secs(60);
                loop {
                    let output = std::process::Command::new(acc_tests::bin("acc"))
                        .current_dir(&dir)
                        .env("ACC_DATA_HOME", &data_home)
                        .args([
                            "--json",
                            "--session",
                            &alice.session,
                            "--generation",
                            &alice.generation,
                        ])
                        .args([
                            "message",
                            "--to",
                            "bob",
                            "--subject",
                            &key,
                            "--body",
                            "b",
                            "--client-message-id",
                            &key,
                        ])
                        .output()
                        .expect("acc");
                    if output.status.success() {
                        break;
                    }
                    let text = String::from_utf8_lossy(&output.stdout);
                    assert!(
                        text.contains("storage_unavailable"),
                        "only the outage: {text}"
                    );
                    assert!(Instant::now() < deadline, "the room came back in time");
                    retries += 1;
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            retries
        })
    };
    // Kill the server in the middle of the loop, then bring it back.
    acc_tests::wait_until(Duration::from_secs(60), "a few sends", || {
        assert!(!sender.is_finished(), "the sender stopped before the kill");
        world.acc(&["sync", "--scope", "history"]).json()["items"]
            .as_array()
            .is_some_and(|i| i.len() >= 5)
    });
    cluster.kill_hard();
    std::thread::sleep(Duration::from_millis(300));
    cluster.restart();
    let retries = sender.join().expect("sender");
    assert!(retries > 0, "the loop met the outage");
    let mut subjects: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["sync", "--scope", "history", "--limit", "100"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c]);
        }
        let page = world.acc(&args).ok_json();
        for item in page["items"].as_array().into_iter().flatten() {
            subjects.push(item["subject"].as_str().unwrap_or_default().to_string());
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    subjects.sort();
    let mut expected: Vec<String> = (0..total).map(|n| format!("loop-{n}")).collect();
    expected.sort();
    assert_eq!(subjects, expected, "every message once, none lost");
}

#[test]
fn a_statement_timeout_is_storage_unavailable_and_writes_nothing() {
    let cluster = Cluster::start();
    let db = cluster.database("room timeout");
    let world = machine(&db);
    let alice = world.attach("alice");
    world.attach("bob");
    let before = world.acc(&["sync", "--scope", "full"]).ok_json();
    // The role's statements may take 200 ms; another session holds the events table.
    let mut admin = cluster.admin().expect("admin");
    admin
        .batch_execute(&format!(
            "ALTER ROLE {} SET statement_timeout = '200ms'",
            db.role
        ))
        .expect("timeout");
    let mut holder = postgres::Config::new()
        .host_path(&db.socket_dir)
        .port(db.port)
        .user(acc_tests::pg::ADMIN)
        .dbname(&db.name)
        .connect(postgres::NoTls)
        .expect("holder");
    let schema: String = holder
        .query_one(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'acc_%'",
            &[],
        )
        .expect("schema")
        .get(0);
    holder
        .batch_execute(&format!(
            "BEGIN; LOCK TABLE {schema}.events IN ACCESS EXCLUSIVE MODE"
        ))
        .expect("lock");
    let error = world
        .acc_as(
            &alice,
            &["message", "--to", "bob", "--subject", "s", "--body", "b"],
        )
        .err(4, "storage_unavailable");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("57014") && message.contains(&room_name(&db)),
        "{message}"
    );
    holder.batch_execute("ROLLBACK").expect("unlock");
    admin
        .batch_execute(&format!("ALTER ROLE {} RESET statement_timeout", db.role))
        .expect("reset");
    assert_eq!(
        world.acc(&["sync", "--scope", "full"]).ok_json(),
        before,
        "nothing was written"
    );
}

/// A room whose URL asks for TLS (`sslmode=require`) of a server that offers none, over
/// loopback: refused with `storage_unavailable` (exit 4) naming the host and the cause, and
/// nothing recorded: connecting writes no room file, and a workspace already in the room
/// answers every command the same, its hook failing open with its one line.
#[test]
fn a_refused_tls_handshake_is_storage_unavailable_naming_the_host_and_changes_nothing() {
    let cluster = Cluster::start();
    let db = cluster.database("no tls");
    let world = World::new();
    std::fs::write(world.dir.join("acc.workspace.json"), CONFIG).expect("config");
    world.set_env("PGPASSWORD", &db.password);
    let url = format!("{}?sslmode=require", db.url());
    let refused = world
        .acc(&["room", "connect", &url])
        .err(4, "storage_unavailable");
    let message = refused["message"].as_str().unwrap_or("");
    assert!(message.contains("127.0.0.1"), "{refused}");
    assert!(message.to_lowercase().contains("tls"), "{refused}");
    assert!(!message.contains(&db.password), "{refused}");
    let room_file = world.data_home.join("acc/workspaces/faulty-room/room");
    assert!(!room_file.exists(), "nothing recorded");

    // A room file that asks for TLS (written by hand, or by a build that had it).
    world.acc(&["room", "connect", &db.url()]).ok_json();
    std::fs::write(&room_file, format!("{url}\n")).expect("the room file");
    let status = world.acc(&["status"]).err(4, "storage_unavailable");
    assert!(
        status["message"]
            .as_str()
            .unwrap_or("")
            .contains("127.0.0.1"),
        "{status}"
    );
    let input = json!({"session_id": "tls", "cwd": world.dir, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}).to_string();
    let hook = world.hook("claude-code", "UserPromptSubmit", &input);
    assert_eq!(hook.code, 0, "{hook:?}");
    assert!(
        hook.stdout
            .contains("coordination is unavailable this turn"),
        "{hook:?}"
    );
}

/// A reader's `COMMIT` is sent without waiting for its answer, but it is sent: `acc-mcp`, which
/// stays connected between calls, leaves no transaction open (a snapshot held would hold back
/// the server's cleanup of old rows for as long as it runs).
#[test]
fn acc_mcp_between_calls_holds_no_transaction_open_on_the_server() {
    let cluster = Cluster::start();
    let db = cluster.database("idle reader");
    let world = machine(&db);
    world.attach("alice");
    let mut child = world.mcp("alice");
    // The status's last words to the server are its probe; the inbox ends on its read.
    let status = status_call(&mut child, 2);
    assert_ne!(status["isError"], json!(true), "{status}");
    for id in 3..6 {
        let inbox = child.request(
            id,
            "tools/call",
            json!({ "name": "acc_inbox", "arguments": {} }),
        )["result"]
            .clone();
        assert_ne!(inbox["isError"], json!(true), "{inbox}");
    }
    let mut admin = db.config().connect(postgres::NoTls).expect("admin");
    let states = |admin: &mut postgres::Client| -> Vec<String> {
        admin
            .query(
                "SELECT coalesce(state, '') FROM pg_stat_activity WHERE application_name = 'acc' AND datname = current_database()",
                &[],
            )
            .expect("activity")
            .iter()
            .map(|row| row.get(0))
            .collect()
    };
    acc_tests::wait_until(Duration::from_secs(10), "acc-mcp's connection idle", || {
        let now = states(&mut admin);
        !now.is_empty() && now.iter().all(|s| s == "idle")
    });
    drop(child);
}

/// A send's inserts go to the server ahead of their answers (three round trips in all): when
/// one of them fails, or comes back numbered other than its writer worked out under the room's
/// lock, the send fails naming what happened and nothing of it stays. A trigger the test puts
/// in the room's schema makes each fault on the real server.
#[test]
fn a_write_sent_ahead_of_its_answer_that_fails_fails_the_send_and_leaves_nothing() {
    let cluster = Cluster::start();
    let db = cluster.database("room ahead");
    let world = machine(&db);
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let send = |body: &str| {
        world.acc_as(
            &alice,
            &["message", "--to", "bob", "--subject", "s", "--body", body],
        )
    };
    send("before").ok_json();
    let before = world.acc(&["sync", "--scope", "full"]).ok_json();
    let mut admin = db.config().connect(postgres::NoTls).expect("admin");
    let schema: String = acc_tests::pg::room_schema(&mut admin);
    let faults = [
        (
            "receipts",
            "RAISE EXCEPTION 'receipt refused by the test'",
            "receipt refused by the test",
        ),
        (
            "events",
            "UPDATE acc_counters SET value = value + 7 WHERE name = 'messages'",
            "expected",
        ),
    ];
    for (table, body, named) in faults {
        admin
            .batch_execute(&format!(
                "CREATE FUNCTION {schema}.fault() RETURNS trigger LANGUAGE plpgsql SET search_path = {schema} AS $f$ BEGIN {body}; RETURN NEW; END $f$;
                 CREATE TRIGGER fault AFTER INSERT ON {schema}.{table} FOR EACH ROW EXECUTE FUNCTION {schema}.fault();"
            ))
            .expect("the fault");
        let refused = send("during").err(1, "internal");
        let message = refused["message"].as_str().unwrap_or_default();
        assert!(message.contains(named), "{table}: {refused}");
        assert!(message.contains(&room_name(&db)), "{table}: {refused}");
        admin
            .batch_execute(&format!(
                "DROP TRIGGER fault ON {schema}.{table}; DROP FUNCTION {schema}.fault()"
            ))
            .expect("no fault");
        assert_eq!(
            world.acc(&["sync", "--scope", "full"]).ok_json(),
            before,
            "{table}: nothing of the failed send stays"
        );
    }
    let after = send("after").ok_json();
    assert_eq!(after["delivery"][0]["outcome"], "queued", "{after}");
    let inbox = world.acc_as(&bob, &["inbox"]).ok_json();
    let bodies: Vec<&str> = inbox["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["subject"].as_str())
        .collect();
    assert_eq!(bodies.len(), 2, "before and after, once each: {inbox}");
}

/// One keyed send of `key` from `who` in `world`'s project, as a process of its own (held
/// inside its write transaction for `hold_ms` when given), not waited for.
fn send_process(
    world: &World,
    who: &acc_tests::Creds,
    key: &str,
    hold_ms: Option<u64>,
) -> std::process::Child {
    let mut command = world.command("acc");
    command
        .args([
            "--json",
            "--session",
            &who.session,
            "--generation",
            &who.generation,
        ])
        .args([
            "message",
            "--to",
            "bob",
            "--subject",
            key,
            "--body",
            key,
            "--client-message-id",
            key,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    if let Some(ms) = hold_ms {
        command.env("ACC_TEST_HOLD_WRITE_MS", ms.to_string());
    }
    command.spawn().expect("spawn acc")
}

/// Whether a writer of the room holds its writers' lock now (a transaction-scoped advisory
/// lock taken with its `BEGIN`), as the server's own lock table says.
fn a_writer_holds_the_room(db: &Database) -> bool {
    let Ok(mut client) = db.config().connect(postgres::NoTls) else {
        return false;
    };
    client
        .query_one(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted",
            &[],
        )
        .map(|row| row.get::<_, i64>(0) > 0)
        .unwrap_or(false)
}

/// Senders killed with SIGKILL over and over on a room, inside their write transactions and at
/// any other moment, each retried with its key until it answers: every message is recorded
/// exactly once, none is lost, the event cursors have no gap, and the room answers as before.
/// (The SQLite store's test of the same is `store_safety::sigkill_inside_a_write_transaction…`.)
#[test]
fn senders_killed_in_a_loop_lose_nothing_duplicate_nothing_and_leave_no_gap() {
    let cluster = Cluster::start();
    let db = cluster.database("senders killed");
    let world = machine(&db);
    let alice = world.attach("alice");
    world.attach("bob");
    let total = 24;
    let mut killed_inside = 0;
    for n in 0..total {
        let key = format!("kill-{n}");
        // Even rounds: killed while holding the room's writers' lock, its statements sent and
        // its COMMIT not yet. Odd rounds: killed after a short time, wherever it is.
        if n % 2 == 0 {
            let mut child = send_process(&world, &alice, &key, Some(20_000));
            acc_tests::wait_until(
                Duration::from_secs(20),
                "the sender to hold the room's writers' lock",
                || a_writer_holds_the_room(&db),
            );
            acc_tests::kill_pid(child.id());
            assert!(!child.wait().expect("reap").success());
            killed_inside += 1;
            acc_tests::wait_until(
                Duration::from_secs(20),
                "the server to roll the killed transaction back",
                || !a_writer_holds_the_room(&db),
            );
        } else {
            let mut child = send_process(&world, &alice, &key, None);
            std::thread::sleep(Duration::from_millis(5 * (n % 7) as u64));
            acc_tests::kill_pid(child.id());
            let _ = child.wait();
        }
        // The retry with the same key answers, once.
        let retried = send_process(&world, &alice, &key, None)
            .wait_with_output()
            .expect("retry");
        let answer: Value = serde_json::from_slice(&retried.stdout).unwrap_or(Value::Null);
        assert!(retried.status.success(), "{key}: {answer}");
        assert_eq!(answer["message"]["subject"], key.as_str(), "{answer}");
    }
    assert_eq!(killed_inside, total / 2);
    // Every key once, none lost.
    let history = world
        .acc(&["sync", "--scope", "history", "--limit", "100"])
        .ok_json();
    let mut subjects: Vec<String> = history["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["subject"].as_str().unwrap_or_default().to_string())
        .collect();
    subjects.sort();
    let mut expected: Vec<String> = (0..total).map(|n| format!("kill-{n}")).collect();
    expected.sort();
    assert_eq!(subjects, expected, "every message once, none lost");
    // The cursors run 1, 2, 3, ... with no gap (a killed transaction took none).
    let events = world.acc(&["sync", "--limit", "500"]).ok_json();
    acc_tests::assert_gap_free(&events);
    let sent = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["type"] == "message.recorded")
        .count();
    assert_eq!(sent, total, "{events}");
}

/// Two machines whose clocks disagree by minutes (one ten minutes fast, one ten minutes slow)
/// agree on a room's leases: both reckon with the database server's clock. A claim's lease
/// ends when the server says, not when either machine thinks; the other machine sees it held
/// until then and free after.
#[test]
fn machines_whose_clocks_differ_by_minutes_agree_on_leases() {
    let cluster = Cluster::start();
    let db = cluster.database("clocks apart");
    let fast = machine(&db);
    fast.set_env("ACC_TEST_CLOCK_OFFSET_SECONDS", "600");
    let slow = World::new();
    std::fs::write(slow.dir.join("acc.workspace.json"), CONFIG).expect("config");
    slow.acc(&["room", "connect", &db.socket_url()]).ok_json();
    slow.set_env("ACC_TEST_CLOCK_OFFSET_SECONDS", "-600");
    // The machines' own clocks do disagree: on its own SQLite store each reckons its own time.
    let server_now = || -> i64 {
        let mut client = db.config().connect(postgres::NoTls).expect("connect");
        let row = client
            .query_one(
                "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint",
                &[],
            )
            .expect("now");
        row.get(0)
    };
    let alice = fast.attach("alice");
    let bob = slow.attach("bob");
    let before = server_now();
    let claimed = fast
        .acc_as(
            &alice,
            &["claim", "--resource", "file:shared.rs", "--lease", "3"],
        )
        .ok_json();
    let after = server_now();
    let expires = claimed["claims"][0]["expiresAt"]
        .as_str()
        .expect("expiresAt")
        .to_string();
    let expires_ms = acc_core::clock::parse_timestamp(&expires).expect("a timestamp");
    assert!(
        expires_ms >= before + 3_000 - 1_000 && expires_ms <= after + 3_000 + 1_000,
        "the lease ends 3 s after the server's now ({before}..{after}), not the fast machine's: {expires}"
    );
    // The slow machine sees the claim held (its own clock would call it ten minutes away).
    let refused = slow
        .acc_as(&bob, &["claim", "--resource", "file:shared.rs"])
        .err(5, "claim_conflict");
    assert!(refused.to_string().contains("alice"), "{refused}");
    // Once the server's clock passes the end, the slow machine takes it; the fast one never
    // saw it expire early (it would have, ten minutes early, on its own clock).
    acc_tests::wait_until(
        Duration::from_secs(20),
        "the lease to end on the server",
        || server_now() > expires_ms + 200,
    );
    let taken = slow
        .acc_as(&bob, &["claim", "--resource", "file:shared.rs"])
        .ok_json();
    assert_eq!(taken["claims"][0]["resource"], "file:shared.rs", "{taken}");
    let seen_by_fast = fast.status();
    let holders: Vec<&str> = seen_by_fast["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .filter(|c| c["state"] == "live")
        .map(|c| c["ownerParticipantId"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(holders, vec!["bob"], "{seen_by_fast}");
}

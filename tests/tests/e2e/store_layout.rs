//! Layout revisions (issue 28): a store written by an earlier build opens with this one,
//! upgraded when alone after a backup, with every record and cursor unchanged.

use std::path::PathBuf;

use acc_tests::World;
use serde_json::{Value, json};

/// The fixture: a layout-0 store written by commit 99cb396 (`tests/fixtures/stores/README.md`).
const FIXTURE: &str = "tests/fixtures/stores/layout-0-99cb396.sqlite3";

/// The layout revision this build writes.
const BUILD: i64 = acc_store::layout::LAYOUT_REVISION;

fn build() -> String {
    BUILD.to_string()
}

/// The name of the backup written before an upgrade to this build's revision.
fn backup_name() -> String {
    format!("store.sqlite3.before-layout-{BUILD}")
}

/// A world whose workspace is the fixture's, with the fixture store in place.
fn fixture_world() -> (World, PathBuf) {
    let world = World::new();
    std::fs::write(
        world.dir.join("acc.workspace.json"),
        json!({ "schemaVersion": 1, "workspaceId": "layout-fixture", "policy": { "claimMode": "guarded" } }).to_string(),
    )
    .expect("config");
    let store = acc_tests::store_path(&world.data_home, "layout-fixture");
    std::fs::create_dir_all(store.parent().expect("dir")).expect("store dir");
    std::fs::copy(acc_tests::repo_root().join(FIXTURE), &store).expect("copy fixture");
    (world, store)
}

fn layout(world: &World) -> Value {
    world.status()["store"].clone()
}

fn meta(store: &std::path::Path, key: &str) -> Option<String> {
    let conn = rusqlite::Connection::open(store).expect("open");
    conn.query_row("SELECT value FROM acc_meta WHERE key = ?1", [key], |r| {
        r.get(0)
    })
    .ok()
}

fn integrity(conn: &rusqlite::Connection) -> String {
    conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity")
}

fn indexes(store: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(store).expect("open");
    let mut statement = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .expect("prepare");
    statement
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// What a user and the store's layout show: the full snapshot, the layout revision, the indexes.
fn fingerprint(world: &World, store: &std::path::Path) -> (Value, Option<String>, Vec<String>) {
    (
        world.acc(&["sync", "--scope", "full"]).ok_json(),
        meta(store, "layout_revision"),
        indexes(store),
    )
}

#[test]
fn a_store_of_the_earlier_layout_is_upgraded_at_its_first_write_with_everything_kept() {
    let (world, store) = fixture_world();
    let before = world.acc(&["sync", "--scope", "full"]).ok_json();
    // Reads never upgrade: the status says an upgrade is pending.
    let pending = layout(&world);
    assert_eq!(pending["revision"], 0, "{pending}");
    assert_eq!(pending["pendingUpgrade"], true, "{pending}");
    let doctor = world.acc(&["doctor"]).json();
    assert!(
        doctor.to_string().contains("an upgrade is pending"),
        "{doctor}"
    );
    // A hook writes without upgrading (it must answer within its budget).
    let start = json!({ "session_id": "conv-1", "cwd": world.dir, "hook_event_name": "SessionStart", "source": "startup" }).to_string();
    assert_eq!(world.hook("claude-code", "SessionStart", &start).code, 0);
    assert_eq!(
        meta(&store, "layout_revision"),
        None,
        "a hook never upgrades"
    );
    // The first write of a command, alone with the store, upgrades it after a backup.
    let dave = world.attach("dave");
    assert_eq!(
        meta(&store, "layout_revision").as_deref(),
        Some(build().as_str())
    );
    assert!(indexes(&store).contains(&"receipts_queued".to_string()));
    let backup = store.with_file_name(backup_name());
    let copy = rusqlite::Connection::open(&backup).expect("backup opens");
    assert_eq!(integrity(&copy), "ok");
    let messages: i64 = copy
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .expect("count");
    assert_eq!(messages, 67, "the backup is the store before the upgrade");
    drop(copy);
    let upgraded = layout(&world);
    assert_eq!(upgraded["revision"], BUILD, "{upgraded}");
    assert_eq!(upgraded["pendingUpgrade"], false);
    assert_eq!(
        upgraded["backups"][0]["path"],
        json!(backup.to_string_lossy()),
        "{upgraded}"
    );
    // Every record and cursor is unchanged, apart from what the hook and dave added.
    let after = world.acc(&["sync", "--scope", "full"]).ok_json();
    for key in ["messages", "claims", "decisions"] {
        assert_eq!(before["snapshot"][key], after["snapshot"][key], "{key}");
    }
    let events_before = world.acc(&["sync", "--limit", "500"]).ok_json()["events"].clone();
    let old: Vec<&Value> = events_before
        .as_array()
        .expect("events")
        .iter()
        .take(98)
        .collect();
    assert_eq!(old.len(), 98);
    assert_eq!(old[97]["cursor"], before["nextCursor"], "cursors unchanged");
    let conn = rusqlite::Connection::open(&store).expect("open");
    assert_eq!(integrity(&conn), "ok");
    // Next-turn still finds bob's queued notes through the new index.
    let bob_waiting: i64 = conn
        .query_row("SELECT count(*) FROM receipts INDEXED BY receipts_queued WHERE participant_id = 'bob' AND state = 'queued'", [], |r| r.get(0))
        .expect("indexed");
    let bob_queued: i64 = conn
        .query_row("SELECT count(*) FROM receipts NOT INDEXED WHERE participant_id = 'bob' AND state = 'queued'", [], |r| r.get(0))
        .expect("scanned");
    assert_eq!(bob_waiting, bob_queued);
    assert!(bob_queued >= 40, "{bob_queued}");
    world
        .acc_as(
            &dave,
            &["message", "--subject", "after", "--body", "the upgrade"],
        )
        .ok_json();
    // Doctor lists the backup with its size.
    let doctor = world.acc(&["doctor"]).json();
    assert!(doctor.to_string().contains(&backup_name()), "{doctor}");
}

#[test]
fn store_upgrade_says_what_it_will_do_does_it_once_and_downgrade_takes_it_back() {
    let (world, store) = fixture_world();
    let original = fingerprint(&world, &store);
    let plan = world.acc(&["store", "upgrade", "--dry-run"]).ok_json();
    assert_eq!(plan["fromRevision"], 0, "{plan}");
    assert_eq!(plan["toRevision"], BUILD, "{plan}");
    assert_eq!(plan["dryRun"], true);
    assert_eq!(plan["changed"], false);
    assert_eq!(plan["receiptRows"], 71, "{plan}");
    assert!(
        plan["steps"][0]
            .as_str()
            .expect("step")
            .contains("queued receipts"),
        "{plan}"
    );
    assert!(
        plan["backup"]
            .as_str()
            .expect("backup")
            .ends_with(&backup_name())
    );
    assert!(plan["estimateMs"].is_i64());
    assert!(
        fingerprint(&world, &store) == original,
        "a dry run changes nothing"
    );
    let human = world.acc_text(&["store", "upgrade", "--dry-run"]);
    assert!(
        human.stdout.contains("would change") && human.stdout.contains("backup first"),
        "{}",
        human.stdout
    );

    let done = world.acc(&["store", "upgrade"]).ok_json();
    assert_eq!(done["changed"], true, "{done}");
    assert_eq!(
        meta(&store, "layout_revision").as_deref(),
        Some(build().as_str())
    );
    let again = world.acc(&["store", "upgrade"]).ok_json();
    assert_eq!(again["changed"], false, "idempotent: {again}");

    let back = world.acc(&["store", "downgrade", "--to", "0"]).ok_json();
    assert_eq!(back["changed"], true, "{back}");
    assert_eq!(meta(&store, "layout_revision").as_deref(), Some("0"));
    assert!(!indexes(&store).contains(&"receipts_queued".to_string()));
    // Everything still reads, on the older layout.
    assert_eq!(world.status()["store"]["pendingUpgrade"], true);
    // Written to after the downgrade (by the build it was taken back for, which never
    // upgrades), the store is backed up afresh by the next upgrade: the backup left by the
    // first one would miss the new message.
    let earlier = earlier_acc();
    let run = |args: &[&str]| {
        let mut command = world.command_path(&earlier);
        command.arg("--json").args(args);
        world.run(command, "the earlier acc")
    };
    let frank = acc_tests::Creds::from_attach(
        "frank",
        &run(&["attach", "--participant", "frank"]).ok_json(),
    );
    run(&[
        "--session",
        &frank.session,
        "--generation",
        &frank.generation,
        "message",
        "--subject",
        "after",
        "--body",
        "the downgrade",
    ])
    .ok_json();
    assert_eq!(meta(&store, "layout_revision").as_deref(), Some("0"));
    world.acc(&["store", "upgrade"]).ok_json();
    let copy = rusqlite::Connection::open(store.with_file_name(backup_name())).expect("backup");
    let messages: i64 = copy
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .expect("count");
    assert_eq!(
        messages, 68,
        "the backup holds the message written after the downgrade"
    );
    world
        .acc(&["store", "downgrade", "--to", &(BUILD + 1).to_string()])
        .err(2, "invalid_arguments");
}

#[test]
fn an_upgrade_whose_backup_cannot_be_written_starts_nothing() {
    let (world, store) = fixture_world();
    // Something that is not a file stands where the backup would go.
    let blocker = store.with_file_name(backup_name());
    std::fs::create_dir_all(blocker.join("in the way")).expect("blocker");
    let original = fingerprint(&world, &store);
    let refused = world.acc(&["store", "upgrade"]);
    assert_eq!(refused.code, 4, "{refused:?}");
    assert!(
        refused.stdout.contains(&backup_name()),
        "{}",
        refused.stdout
    );
    assert!(fingerprint(&world, &store) == original, "nothing changed");
    assert!(
        !blocker
            .join("in the way")
            .read_dir()
            .expect("dir")
            .any(|_| true),
        "no partial backup left behind"
    );
    // A command's write still works, on the older layout.
    let erin = world.attach("erin");
    world
        .acc_as(&erin, &["message", "--subject", "still", "--body", "works"])
        .ok_json();
    assert_eq!(meta(&store, "layout_revision"), None);
}

/// The fixture grown to 100,000 more messages to bob (every third acknowledged), at layout 0.
fn big_old_store(path: &std::path::Path) {
    std::fs::copy(acc_tests::repo_root().join(FIXTURE), path).expect("copy fixture");
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.execute_batch(
        "BEGIN;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
         INSERT INTO messages(message_id, thread_id, client_message_id, from_participant_id,
             from_session_id, to_participant_ids, kind, obligation, subject, body, in_reply_to,
             artifacts, handoff, decision_change, content_hash, sent_at, event_seq)
         SELECT printf('message_bulk%017d', i), printf('message_bulk%017d', i), 'bulk' || i,
             m.from_participant_id, m.from_session_id, m.to_participant_ids, m.kind,
             m.obligation, m.subject, m.body, NULL, m.artifacts, NULL, NULL, m.content_hash,
             m.sent_at, m.event_seq
         FROM n, (SELECT * FROM messages WHERE kind = 'note' AND to_participant_ids = '[\"bob\"]' LIMIT 1) m;
         INSERT INTO receipts(message_seq, participant_id, state, updated_at, extensions, obligation, addressed)
         SELECT seq, 'bob', CASE WHEN seq % 3 = 0 THEN 'acknowledged' ELSE 'queued' END,
             sent_at, '{}', obligation, 1
         FROM messages WHERE message_id LIKE 'message_bulk%';
         COMMIT;",
    )
    .expect("grow the fixture");
}

/// What a killed upgrade left: the store is whole and at one layout or the other (its recorded
/// revision and its index agree); the backup, if there, is whole.
/// `thorough`: SQLite's full `integrity_check` (indexes against their tables) rather than
/// `quick_check` (every page and record, not the index cross-check).
fn assert_one_layout(store: &std::path::Path, round: usize, thorough: bool) -> bool {
    let conn = rusqlite::Connection::open(store).expect("open");
    let check = if thorough {
        integrity(&conn)
    } else {
        conn.query_row("PRAGMA quick_check", [], |r| r.get(0))
            .expect("quick_check")
    };
    assert_eq!(check, "ok", "round {round}");
    drop(conn);
    let revision = meta(store, "layout_revision");
    let indexed = indexes(store).contains(&"receipts_queued".to_string());
    assert_eq!(
        revision.as_deref() == Some(build().as_str()),
        indexed,
        "round {round}: revision {revision:?} and the index agree"
    );
    let backup = store.with_file_name(backup_name());
    if backup.exists() {
        let copy = rusqlite::Connection::open(&backup).expect("backup");
        let check: String = copy
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .expect("quick_check");
        assert_eq!(check, "ok", "round {round}: a whole backup");
        let count: i64 = copy
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .expect("count");
        assert_eq!(count, 100_067, "round {round}: the backup holds everything");
    }
    indexed
}

/// Kill -9 at moments spread over the whole upgrade of a store of 100,000 messages, 20 times:
/// every time either layout and never a damaged store, the backup whole or absent, and the next
/// write completes the upgrade.
#[test]
fn a_kill_at_any_moment_of_an_upgrade_leaves_one_layout_and_the_next_write_finishes_it() {
    let world = World::new();
    std::fs::write(
        world.dir.join("acc.workspace.json"),
        json!({ "schemaVersion": 1, "workspaceId": "layout-fixture" }).to_string(),
    )
    .expect("config");
    let template = world.temp.path().join("big.sqlite3");
    big_old_store(&template);
    let store = acc_tests::store_path(&world.data_home, "layout-fixture");
    let dir = store.parent().expect("dir").to_path_buf();
    let fresh = || {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::copy(&template, &store).expect("copy");
    };
    // One whole upgrade first: how long it takes here bounds the moments to kill at.
    fresh();
    let started = std::time::Instant::now();
    world.acc(&["store", "upgrade"]).ok_json();
    let whole = started.elapsed();
    eprintln!("a whole upgrade of the grown store: {whole:?}");
    let (mut finished, mut killed_before) = (0, 0);
    // A fixed pseudo-random sequence (a linear congruential generator): reproducible moments.
    let mut seed: u64 = 0x2026_1201;
    // The moments are fractions of `scale`, the whole upgrade's length measured above. A loaded
    // machine makes a killed run slower than that measure, so after the 20 rounds, if one side
    // of the commit is still uncovered, further rounds (at most 20) double the scale (nothing
    // finished yet) or halve it (nothing was killed before the commit) until both are covered.
    let mut scale = whole;
    for round in 0..40 {
        if round >= 20 && finished > 0 && killed_before > 0 {
            break;
        }
        if round >= 20 {
            scale = if finished == 0 { scale * 2 } else { scale / 2 };
        }
        fresh();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        // The top 31 bits, as a fraction in [0, 1).
        let fraction = (seed >> 33) as f64 / f64::from(1u32 << 31);
        let delay = scale.mul_f64(fraction * 1.2);
        let mut command = world.command("acc");
        command
            .args(["--json", "store", "upgrade"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = acc_tests::Guarded(command.spawn().expect("spawn"));
        std::thread::sleep(delay);
        let _ = child.0.kill();
        let _ = child.0.wait();
        if assert_one_layout(&store, round, true) {
            finished += 1;
        } else {
            killed_before += 1;
        }
        // The next write (alone) completes the upgrade and leaves no partial backup.
        world.attach(&format!("after{round}"));
        assert!(
            assert_one_layout(&store, round, false),
            "round {round}: upgraded by the next write"
        );
        let partial = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".partial"));
        assert!(!partial, "round {round}: no partial backup left");
    }
    eprintln!("{finished} finished, {killed_before} killed before the commit");
    // The moments covered both sides of the commit.
    assert!(
        finished > 0 && killed_before > 0,
        "{finished} finished, {killed_before} killed before"
    );
}

/// Two commands that write to an old store at once: exactly one upgrades it (and says so on
/// stderr), the other finds it done; both succeed.
#[test]
fn two_writers_opening_an_old_store_at_once_upgrade_it_exactly_once() {
    for round in 0..3 {
        let (world, store) = fixture_world();
        let commands: Vec<std::process::Command> = ["p1", "p2"]
            .iter()
            .map(|name| {
                let mut command = world.command("acc");
                command.args(["--json", "attach", "--participant", name]);
                command
            })
            .collect();
        let runs = acc_tests::race(&world, commands);
        for run in &runs {
            assert_eq!(run.code, 0, "round {round}: {run:?}");
        }
        let notes = runs
            .iter()
            .filter(|r| r.stderr.contains("upgraded the store"))
            .count();
        assert_eq!(notes, 1, "round {round}: exactly one upgraded: {runs:?}");
        assert_eq!(
            meta(&store, "layout_revision").as_deref(),
            Some(build().as_str())
        );
    }
}

/// The `acc` of commit 99cb396, which wrote the fixture (`scripts/build-earlier-acc.sh`, run by
/// `test.sh`); missing, the test fails and says how to build it.
fn earlier_acc() -> PathBuf {
    let acc = acc_tests::clients().cache.join("acc-at-99cb396/acc");
    assert!(
        acc.is_file(),
        "{} is missing: run scripts/build-earlier-acc.sh 99cb396 (./test.sh does)",
        acc.display()
    );
    acc
}

/// A store upgraded by this build, then used by the build that wrote the fixture: revision 1
/// only adds an index, so that build reads and writes it as before (rule 4), SQLite keeps the
/// index in step with its writes, and this build goes on with it afterwards.
#[test]
fn the_build_that_wrote_the_fixture_keeps_working_with_the_upgraded_store() {
    let (world, store) = fixture_world();
    let dave = world.attach("dave");
    assert_eq!(
        meta(&store, "layout_revision").as_deref(),
        Some(build().as_str())
    );
    let earlier = earlier_acc();
    let run = |args: &[&str]| {
        let mut command = world.command_path(&earlier);
        command.arg("--json").args(args);
        world.run(command, "the earlier acc")
    };
    let status = run(&["status"]).ok_json();
    assert!(
        status["sessions"].as_array().is_some_and(|s| !s.is_empty()),
        "{status}"
    );
    let erin =
        acc_tests::Creds::from_attach("erin", &run(&["attach", "--participant", "erin"]).ok_json());
    let sent = run(&[
        "--session",
        &erin.session,
        "--generation",
        &erin.generation,
        "message",
        "--to",
        "dave",
        "--subject",
        "from the earlier build",
        "--body",
        "hello",
    ])
    .ok_json();
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    // This build reads what the earlier one wrote, through the index the earlier one kept.
    let inbox = world.acc_as(&dave, &["inbox"]).ok_json();
    assert!(inbox.to_string().contains(&id), "{inbox}");
    let conn = rusqlite::Connection::open(&store).expect("open");
    assert_eq!(
        integrity(&conn),
        "ok",
        "the index matches the earlier build's writes"
    );
    assert_eq!(
        meta(&store, "layout_revision").as_deref(),
        Some(build().as_str())
    );
}

/// A store of a later layout that this build cannot use is refused, naming the revision and the
/// version that changed it; nothing is changed.
#[test]
fn a_store_of_a_later_layout_this_build_cannot_use_is_refused_unchanged() {
    let (world, store) = fixture_world();
    {
        let conn = rusqlite::Connection::open(&store).expect("open");
        // Two revisions past this build's, usable only from the revision after it.
        conn.execute_batch(&format!(
            "INSERT INTO acc_meta(key, value) VALUES ('layout_revision', '{}'), ('layout_readable_by', '{}'), ('layout_changed_by', 'acc 9.9.9');",
            BUILD + 2,
            BUILD + 1
        ))
        .expect("later layout");
    }
    let before = std::fs::read(&store).expect("read");
    for args in [
        &["status"][..],
        &["attach", "--participant", "x"][..],
        &["store", "upgrade"][..],
    ] {
        let refused = world.acc(args).err(4, "store_version_unsupported");
        let message = refused.to_string();
        assert!(
            message.contains(&format!("layout revision {}", BUILD + 2))
                && message.contains("acc 9.9.9"),
            "{args:?}: {message}"
        );
    }
    assert!(
        std::fs::read(&store).expect("read") == before,
        "nothing changed"
    );
}

/// An upgrade expected to take longer than 2 s says on stderr what it does (the store, the
/// backup, then the steps), and stdout stays the command's answer alone; a short one says
/// nothing. The threshold is lowered for the test (`ACC_TEST_PROGRESS_AFTER_MS`): a store that
/// takes 2 s holds about 700,000 receipts.
#[test]
fn a_long_upgrade_reports_its_progress_on_stderr_and_a_short_one_is_quiet() {
    for (threshold, reported) in [(None, false), (Some("-1"), true)] {
        // The command, and the automatic upgrade at a command's first write (a read never
        // upgrades).
        for command in [
            vec!["store", "upgrade"],
            vec!["attach", "--participant", "upgrader"],
        ] {
            let (world, store) = fixture_world();
            let env: Vec<(&str, &str)> = threshold
                .map(|t| ("ACC_TEST_PROGRESS_AFTER_MS", t))
                .into_iter()
                .collect();
            let run = world.acc_with(&command, &env);
            let answer = run.ok_json();
            assert!(
                answer.is_object(),
                "{command:?}: stdout is the answer alone"
            );
            let lines: Vec<&str> = run
                .stderr
                .lines()
                .filter(|l| l.contains("upgrading the store") || l.contains("backup written"))
                .collect();
            if reported {
                assert_eq!(lines.len(), 2, "{command:?}: {}", run.stderr);
                assert!(
                    lines[0].contains(&store.display().to_string())
                        && lines[0].contains(&format!("layout revision {BUILD}"))
                        && lines[0].contains("71 receipts")
                        && lines[0].contains(&backup_name()),
                    "{}",
                    lines[0]
                );
                assert!(lines[1].contains("one transaction"), "{}", lines[1]);
            } else {
                assert!(lines.is_empty(), "{command:?}: {}", run.stderr);
            }
            assert_eq!(
                meta(&store, "layout_revision").as_deref(),
                Some(build().as_str()),
                "{command:?}"
            );
        }
    }
}

//! Reads never write: a hook with nothing to do, `acc inbox`, `status`, `sync`, history and
//! `next-turn` with nothing to carry leave the store and its WAL byte for byte as they were, and
//! the hook makes no `fsync` at all (seen by `strace`). A write is seen by the same check.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use acc_tests::{World, run_checked};
use serde_json::json;

/// The store's files (database and WAL), as bytes.
fn files(world: &World) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let store = world.store_path();
    let wal = PathBuf::from(format!("{}-wal", store.display()));
    [store, wal]
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).ok();
            (p, bytes)
        })
        .collect()
}

fn unchanged(world: &World, before: &[(PathBuf, Option<Vec<u8>>)], what: &str) {
    let after = files(world);
    for ((path, was), (_, now)) in before.iter().zip(&after) {
        assert!(
            was == now,
            "{what} changed {} ({} bytes before, {} after)",
            path.display(),
            was.as_ref().map_or(0, Vec::len),
            now.as_ref().map_or(0, Vec::len)
        );
    }
}

fn payload(world: &World, event: &str) -> String {
    json!({
        "session_id": "conversation-1", "cwd": world.dir,
        "hook_event_name": event, "prompt": "hello", "source": "startup",
    })
    .to_string()
}

/// The fsync-family calls (`strace` lines) of `acc <args>` given `stdin`, its children
/// included, and its stdout; the command must succeed.
fn syncs_of(
    world: &World,
    trace: &Path,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> (Vec<String>, String) {
    use std::io::Write;
    let mut command = world.command_path("strace");
    command
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=fsync,fdatasync,sync_file_range,syncfs",
            "-o",
        ])
        .arg(trace)
        .arg(acc_tests::bin("acc"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("strace (installed by the machine setup) must run: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("stdin");
    let output = acc_tests::wait_with_deadline(child, acc_tests::COMMAND_TIMEOUT, "strace acc");
    assert!(output.status.success(), "{args:?}: {output:?}");
    let syncs = std::fs::read_to_string(trace)
        .expect("trace")
        .lines()
        .filter(|l| l.contains("sync"))
        .map(str::to_string)
        .collect();
    (syncs, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The fsync-family calls of `acc hook claude-code UserPromptSubmit` with nothing to deliver.
fn hook_syncs(world: &World, trace: &Path) -> usize {
    let (syncs, stdout) = syncs_of(
        world,
        trace,
        &["hook", "claude-code", "UserPromptSubmit"],
        &payload(world, "UserPromptSubmit"),
        &[],
    );
    assert!(stdout.is_empty(), "nothing to deliver: {stdout}");
    syncs.len()
}

/// A send's commit is made durable with `fdatasync`, never `fsync` (SQLite built with
/// `HAVE_FDATASYNC`, `.cargo/config.toml`): the same durability without forcing the WAL's
/// modification time through the filesystem's journal at every commit.
#[test]
fn a_send_is_made_durable_with_fdatasync() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let (syncs, _) = syncs_of(
        &world,
        &world.temp.path().join("trace"),
        &[
            "--json",
            "message",
            "--to",
            "bob",
            "--subject",
            "s",
            "--body",
            "b",
        ],
        "",
        &[
            ("ACC_SESSION", alice.session.as_str()),
            ("ACC_GENERATION", alice.generation.as_str()),
        ],
    );
    assert!(
        syncs.iter().any(|l| l.contains("fdatasync(")),
        "the commit syncs its WAL: {syncs:?}"
    );
    assert!(
        !syncs
            .iter()
            .any(|l| l.contains(" fsync(") || l.starts_with("fsync(")),
        "no fsync: {syncs:?}"
    );
    let inbox = world.acc_as(&bob, &["inbox"]).ok_json();
    assert_eq!(inbox["items"].as_array().map(Vec::len), Some(1), "{inbox}");
}

#[test]
fn reads_leave_the_store_as_it_was_and_a_hook_with_nothing_to_do_makes_no_fsync() {
    let world = World::new();
    let started = world.hook(
        "claude-code",
        "SessionStart",
        &payload(&world, "SessionStart"),
    );
    assert_eq!(started.code, 0, "{started:?}");
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    world.ask(&alice, "bob", "which store?", "sqlite?");

    let before = files(&world);
    assert!(
        before[1].1.is_some(),
        "the WAL file stays between processes"
    );
    let syncs = hook_syncs(&world, &world.temp.path().join("trace"));
    assert_eq!(syncs, 0, "a hook with nothing to deliver makes no fsync");
    unchanged(&world, &before, "a prompt hook with nothing to deliver");
    for args in [
        vec!["status"],
        vec!["status", "--all"],
        vec!["sync"],
        vec!["sync", "--scope", "history"],
        vec!["inbox"],
        vec!["next-turn"],
    ] {
        let run = world.acc_as(&alice, &args);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        unchanged(&world, &before, &format!("acc {}", args.join(" ")));
    }
    // Bob's inbox lists the question without changing its receipt.
    world.acc_as(&bob, &["inbox"]).ok_json();
    unchanged(&world, &before, "bob's inbox");
    let mut status = world.command("acc");
    status.arg("status");
    run_checked(status, acc_tests::COMMAND_TIMEOUT, "acc status (human)");
    unchanged(&world, &before, "acc status (human)");

    // The same check sees a write.
    world.ask(&bob, "alice", "yes", "sqlite");
    assert!(
        files(&world) != before,
        "a send is a write, and the check sees it"
    );
}

/// The WAL stays between processes, and a process that opens the store alone rebuilds its
/// index by reading every frame that counts; so a writer that closes alone starts an overgrown
/// WAL over. Many short `acc` processes in a row (no other process holding the store) leave few
/// frames to read and a small file, and every message is there.
#[test]
fn the_wal_stays_small_across_many_short_writers() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let (mut largest, mut most_frames) = (0, 0);
    for i in 0..150 {
        let wal = send_and_measure(&world, &alice, i);
        largest = largest.max(wal.size);
        most_frames = most_frames.max(wal.counted);
    }
    // 150 sends write about 1,650 frames (6.7 MB); started over past 128 frames (about
    // 512 KiB), the WAL never holds much more than that and one send.
    assert!(
        largest < 1024 * 1024,
        "the WAL reached {largest} bytes across 150 short writers"
    );
    assert!(
        most_frames < 160,
        "a process opening the store would have read {most_frames} frames"
    );
    let connection = rusqlite::Connection::open(world.store_path()).expect("open");
    let messages: i64 = connection
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .expect("count");
    assert_eq!(messages, 150);
    let check: String = connection
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    assert_eq!(check, "ok");
}

/// While another process has the store open (here `acc sync --follow`, as an `acc-mcp` or an
/// `acc watch` would), its WAL index stays alive and SQLite restarts the WAL by itself: a
/// closing writer leaves the WAL alone. Once it is alone, it starts the WAL over: one frame
/// counts, and the file keeps its blocks for the writers after it to write over.
#[test]
fn a_writer_leaves_the_wal_alone_while_another_process_has_the_store_open() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let holder = world.follower(&alice);
    let mut held = Vec::new();
    for i in 0..30 {
        held.push(send_and_measure(&world, &alice, i));
    }
    assert!(
        held.windows(2).all(|w| w[1].counted > w[0].counted),
        "never started over while held: {held:?}"
    );
    let last = held.last().copied().expect("30 sends");
    assert!(last.counted > 128, "{held:?}");
    acc_tests::kill_pid(holder.child.0.id());
    let _ = holder.finish(Duration::from_secs(10));
    let alone = send_and_measure(&world, &alice, 30);
    assert_eq!(
        alone.counted, 1,
        "alone, the closing writer starts the WAL over: {alone:?}"
    );
    assert!(
        alone.size >= last.size,
        "the WAL keeps its blocks: {alone:?} after {last:?}"
    );
    // The next writer writes over them: the file does not grow.
    let next = send_and_measure(&world, &alice, 31);
    assert!(
        next.counted > 1 && next.size == alone.size,
        "{next:?} after {alone:?}"
    );
}

/// The WAL after a command: its file's size, and the frames that count (those a process
/// opening the store alone reads back).
#[derive(Debug, Clone, Copy)]
struct Wal {
    size: u64,
    counted: usize,
}

/// The WAL's frames that count: from the first on, those whose salts are its header's. SQLite
/// starts a WAL over by writing a new header with new salts, so the older frames after the new
/// ones stop counting (SQLite also checks each frame's checksum; a frame torn by a crash would
/// count here and not there, which no test here makes).
fn counted_frames(bytes: &[u8]) -> usize {
    let (Some(header), Some(page)) = (bytes.get(..32), bytes.get(8..12)) else {
        return 0;
    };
    let page = u32::from_be_bytes(page.try_into().expect("4 bytes")) as usize;
    let salts = &header[16..24];
    let mut counted = 0;
    let mut at = 32;
    while bytes.len() >= at + 24 + page && bytes[at + 8..at + 16] == *salts {
        counted += 1;
        at += 24 + page;
    }
    counted
}

/// `alice` sends bob message number `i` (a whole `acc` process); the WAL after it.
fn send_and_measure(world: &World, alice: &acc_tests::Creds, i: usize) -> Wal {
    world.tell(alice, "bob", &format!("m{i}"), "b");
    let mut wal = world.store_path().into_os_string();
    wal.push("-wal");
    let bytes = std::fs::read(PathBuf::from(wal)).unwrap_or_default();
    Wal {
        size: bytes.len() as u64,
        counted: counted_frames(&bytes),
    }
}

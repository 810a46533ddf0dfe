//! `acc-bench`: ACC's benchmarks. Each prints figures and ratios to a floor measured in the
//! same run; none asserts a time. Run `cargo run --release -p acc-tests --bin acc-bench -- all`.
//!
//! Suites:
//! - `foundation`: `acc status` on a store of 10,000 claims and events; claim acquire/release
//!   commits per second from 1 and 4 processes; floors: `acc --version` start, bare SQLite commit.
//! - `messaging`: durable sends per second from 1 and 4 processes beside a bare SQLite commit
//!   (and from 1 once neither worker's WAL still grows, and short processes of four commits);
//!   inbox, history and sync page times for a recipient with 10^3, 10^5 and 10^6 stored
//!   messages (the large stores are written in bulk through the store layer).
//! - `mcp`: `acc-mcp` tool-call round trips over real pipes (p50, p99) for `acc_status` and
//!   `acc_message`, resident memory after 10,000 calls, and cold start to the first answer,
//!   beside empty-process floors (`true`, `acc --version`).
//! - `router`: the router's added cost per addressed recipient: in-process sends with the
//!   recipient bound to the `example` adapter (a live offer and its record) versus the same
//!   sends durable-only, beside a bare SQLite commit, in one run.
//! - `hook`: the UserPromptSubmit hook's whole-process time with 0, 10 and 1,000 pending
//!   messages in a store of 100,000 messages, beside empty-process floors.
//! - `native`: send committed to transport accepted for the `claude-inbox` wake (to a listening
//!   socket laid out like Claude Code's: ACC's verify, connect and write, no Claude process)
//!   and the `codex-app-server` queue add (a real Codex daemon in a throwaway `CODEX_HOME`),
//!   beside the durable send alone, in one run.
//! - `swarm [N ...]`: N agents at once (8, 32, 64 by default), each its own `acc-mcp` over real
//!   pipes, 6,400 calls in all of a mixed load (40% sends, 30% inbox reads, 25% claims and
//!   releases, 5% status): throughput, p50/p99/max per tool and for reads and writes, timeouts,
//!   then, from the store file, messages lost or duplicated and `integrity_check`; beside a bare
//!   SQLite commit.

// A benchmark reports on stdout; that is its whole purpose.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acc_app::services::App;
use acc_core::claims::{AcquireRequest, ReleaseSelector};
use acc_core::clock::SystemClock;
use acc_core::messages::SendRequest;
use acc_core::{Caller, Core};
use acc_delivery::router::Outcome;
use acc_store::{ClaimMode, Enforcement};
use acc_store::{MessageKind, MessageRow, Obligation, ReceiptRow, ReceiptState};
use acc_tests::JsonRpcChild;

#[path = "acc-bench/follow.rs"]
mod follow;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("foundation") => {
            foundation();
            0
        }
        Some("messaging") => {
            messaging();
            0
        }
        Some("mcp") => {
            mcp();
            0
        }
        Some("router") => {
            router();
            0
        }
        Some("hook") => {
            hook();
            0
        }
        Some("native") => {
            native();
            0
        }
        Some("upgrade") => {
            upgrade();
            0
        }
        Some("sends") => {
            sends();
            0
        }
        Some("room") => {
            room();
            0
        }
        Some("follow-rtt") => {
            let rtts: Vec<u64> = args[1..].iter().filter_map(|a| a.parse().ok()).collect();
            follow::follow_rtt(if rtts.is_empty() { &[1, 10] } else { &rtts });
            0
        }
        Some("room-rtt") => {
            let rtts: Vec<u64> = args[1..].iter().filter_map(|a| a.parse().ok()).collect();
            room_rtt(if rtts.is_empty() { &[1, 10, 50] } else { &rtts });
            0
        }
        Some("pages") => {
            let temp = tempfile::tempdir().expect("tempdir");
            let (pages, bare) = pages_per_send(temp.path());
            println!(
                "pages written per durable send: {pages:.1} (a bare commit of one row: {bare:.1})"
            );
            0
        }
        Some("swarm") => {
            let sizes: Vec<usize> = args[1..].iter().filter_map(|a| a.parse().ok()).collect();
            swarm(if sizes.is_empty() {
                &[8, 32, 64]
            } else {
                &sizes
            });
            0
        }
        Some("all") | None => {
            foundation();
            messaging();
            mcp();
            router();
            hook();
            native();
            upgrade();
            swarm(&[8, 32, 64]);
            0
        }
        Some("claim-worker") => claim_worker(&args[1..]),
        Some("bare-worker") => bare_worker(&args[1..]),
        Some("send-worker") => send_worker(&args[1..]),
        Some(other) => {
            eprintln!(
                "acc-bench: unknown suite `{other}` (suites: foundation, messaging, sends, mcp, router, hook, native, upgrade, pages, room, room-rtt [MS ...], swarm [N ...], all)"
            );
            2
        }
    };
    std::process::exit(code);
}

/// Environment every `acc` and `acc-mcp` the benchmark starts gets beside its own (a room's
/// password file, for `room-rtt`); set once, before the first.
static BENCH_ENV: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();

/// A command for the built binary `name`, with [`BENCH_ENV`].
fn bench_command(name: &str) -> Command {
    let mut command = Command::new(bin(name));
    for (key, value) in BENCH_ENV.get().into_iter().flatten() {
        command.env(key, value);
    }
    command
}

fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().expect("exe dir").to_path_buf();
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build the workspace binaries in the same profile",
        path.display()
    );
    path
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time_process(command: &mut Command, runs: usize) -> Duration {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        command.stdout(Stdio::null()).stderr(Stdio::null());
        let start = Instant::now();
        let status = command.status().expect("run");
        samples.push(start.elapsed());
        assert!(status.success(), "benchmark command failed: {command:?}");
    }
    median(samples)
}

fn world() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let temp = tempfile::tempdir().expect("tempdir");
    let data = temp.path().join("data");
    let dir = temp.path().join("project");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let dir = std::fs::canonicalize(&dir).expect("canon");
    (temp, data, dir)
}

fn core_for(data: &Path, dir: &Path) -> Core {
    let workspace = acc_app::workspace::discover(dir).expect("workspace");
    Core::new(
        workspace,
        data.join("acc"),
        Arc::new(SystemClock::default()),
        acc_app::process::liveness(),
    )
    .expect("core")
}

fn attach(core: &mut Core, participant: &str) -> Caller {
    acc_capture::attach(core, participant).expect("attach")
}

fn request(resources: Vec<String>) -> AcquireRequest {
    AcquireRequest {
        resources,
        mode: ClaimMode::Exclusive,
        enforcement: Some(Enforcement::Advisory),
        reason: None,
        lease_seconds: Some(3600),
    }
}

/// Commits per second of a bare SQLite insert with ACC's settings.
fn bare_sqlite_commits(dir: &Path, count: usize) -> f64 {
    let path = dir.join("bare.sqlite3");
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.busy_timeout(Duration::from_secs(10)).expect("busy");
    conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
        .expect("wal");
    conn.execute_batch("PRAGMA synchronous=FULL; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        .expect("setup");
    let start = Instant::now();
    for i in 0..count {
        conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
        conn.execute("INSERT INTO t(v) VALUES (?1)", [i.to_string()])
            .expect("insert");
        conn.execute_batch("COMMIT").expect("commit");
    }
    count as f64 / start.elapsed().as_secs_f64()
}

/// Syncs per send, `fdatasync` and `fsync` apart: one send worker of 200 sends under
/// `strace -f -c`, when strace is there (else said so).
fn syncs_per_send(data: &Path, dir: &Path) -> String {
    let trace = data.join("syncs.txt");
    let ran = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&trace)
        .arg(bin("acc-bench"))
        .args([
            "send-worker",
            data.to_str().expect("utf8"),
            dir.to_str().expect("utf8"),
            "traced",
            "200",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !ran.is_ok_and(|s| s.success()) {
        return "syncs per send: strace unavailable".into();
    }
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    // `strace -c` rows: % time, seconds, usecs/call, calls, [errors,] syscall.
    let calls = |name: &str| -> u64 {
        text.lines()
            .filter(|l| l.split_whitespace().last() == Some(name))
            .filter_map(|l| l.split_whitespace().nth(3)?.parse::<u64>().ok())
            .sum()
    };
    format!(
        "{:.2} fdatasyncs and {:.2} fsyncs per send",
        calls("fdatasync") as f64 / 200.0,
        calls("fsync") as f64 / 200.0
    )
}

/// One process doing `count` bare SQLite commits into `DATA/bare.sqlite3` (made by the caller):
/// the floor of `count` sends from a process, started the same way.
fn bare_worker(args: &[String]) -> i32 {
    let (data, count, steady) = match args {
        [data, _dir, _label, count] => (data, count, false),
        [data, _dir, _label, count, steady] if steady == "steady" => (data, count, true),
        _ => {
            eprintln!("usage: acc-bench bare-worker DATA DIR LABEL COUNT [steady]");
            return 2;
        }
    };
    let count: usize = count.parse().expect("count");
    let path = Path::new(data).join("bare.sqlite3");
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.busy_timeout(Duration::from_secs(10)).expect("busy");
    conn.execute_batch("PRAGMA synchronous=FULL").expect("sync");
    let commit = |i: usize| {
        conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
        conn.execute("INSERT INTO t(v) VALUES (?1)", [i.to_string()])
            .expect("insert");
        conn.execute_batch("COMMIT").expect("commit");
    };
    run_worker(steady.then(|| wal_of(&path)).as_deref(), count, commit);
    0
}

/// The WAL file beside a SQLite database.
fn wal_of(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// A worker's `count` operations. With `steady` (the WAL to watch), it first runs them until
/// that WAL is warm ([`warm_up`]), then prints the seconds the `count` took.
fn run_worker(steady: Option<&Path>, count: usize, mut op: impl FnMut(usize)) {
    if let Some(wal) = steady {
        let mut i = 0;
        warm_up(wal, || {
            op(i);
            i += 1;
        });
    }
    let start = Instant::now();
    for i in 0..count {
        op(i);
    }
    if steady.is_some() {
        println!("{}", start.elapsed().as_secs_f64());
    }
}

/// Run `op` until the WAL `wal` has gone through a whole cycle, from one restart to the next,
/// without growing: commits then write over blocks the file already has. While a commit extends
/// the file, its fdatasync must write the new size as well: on this machine that doubles a
/// one-page commit's time (docs/benchmarks.md, "Ninth pass"). A restart is seen as new salts in
/// the WAL's header. Bounded: 20,000 runs.
fn warm_up(wal: &Path, mut op: impl FnMut()) {
    // The file's size and its header's salts (bytes 16..24).
    let state = || {
        let bytes = std::fs::read(wal).unwrap_or_default();
        (bytes.len(), bytes.get(16..24).map(<[u8]>::to_vec))
    };
    let mut grew_this_cycle = true;
    for _ in 0..20_000 {
        let (size, salts) = state();
        op();
        let (size_after, salts_after) = state();
        grew_this_cycle |= size_after != size;
        if salts_after != salts && salts.is_some() {
            if !grew_this_cycle {
                return;
            }
            grew_this_cycle = false;
        }
    }
    panic!(
        "{} never went through a cycle without growing",
        wal.display()
    );
}

/// Seconds one `worker` process takes for `count` operations once its WAL is warm
/// ([`warm_up`]), as the worker times them itself.
fn steady_seconds(data: &Path, dir: &Path, worker: &str, count: usize) -> f64 {
    let output = Command::new(bin("acc-bench"))
        .args([
            worker,
            data.to_str().expect("utf8"),
            dir.to_str().expect("utf8"),
            "steady",
            &count.to_string(),
            "steady",
        ])
        .env_remove("ACC_TEST_HOLD_WRITE_MS")
        .output()
        .expect("run worker");
    assert!(output.status.success(), "worker failed");
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("worker seconds")
}

/// One process doing `pairs` acquire+release pairs; prints its elapsed seconds.
fn claim_worker(args: &[String]) -> i32 {
    let [data, dir, label, pairs] = args else {
        eprintln!("usage: acc-bench claim-worker DATA DIR LABEL PAIRS");
        return 2;
    };
    let pairs: usize = pairs.parse().expect("pairs");
    let mut core = core_for(Path::new(data), Path::new(dir));
    let me = attach(&mut core, label);
    let start = Instant::now();
    for i in 0..pairs {
        core.acquire_claims(&me, &request(vec![format!("file:{label}/{i}.rs")]))
            .expect("acquire");
        core.release_claims(&me, &ReleaseSelector::All)
            .expect("release");
    }
    println!("{}", start.elapsed().as_secs_f64());
    0
}

fn claim_commits_per_second(data: &Path, dir: &Path, processes: usize, pairs: usize) -> f64 {
    workers_per_second(data, dir, "claim-worker", processes, pairs, 2)
}

/// Run `processes` copies of a worker subcommand doing `count` operations of `commits` commits
/// each; returns commits per second over the whole wall time.
fn workers_per_second(
    data: &Path,
    dir: &Path,
    worker: &str,
    processes: usize,
    count: usize,
    commits: usize,
) -> f64 {
    let bench = bin("acc-bench");
    let start = Instant::now();
    let children: Vec<_> = (0..processes)
        .map(|p| {
            Command::new(&bench)
                .args([
                    worker,
                    data.to_str().expect("utf8"),
                    dir.to_str().expect("utf8"),
                    &format!("w{p}"),
                    &count.to_string(),
                ])
                .env_remove("ACC_TEST_HOLD_WRITE_MS")
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn worker")
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().expect("worker");
        assert!(output.status.success(), "worker failed");
    }
    (processes * count * commits) as f64 / start.elapsed().as_secs_f64()
}

/// `acc status` (the default view, human) at 10 and at 100,000 claims, and `--all` at
/// 100,000, beside `acc --version`.
fn status_scale(version: Duration) {
    let mut times = Vec::new();
    for total in [10usize, 100_000] {
        let (temp, data, dir) = world();
        let mut core = core_for(&data, &dir);
        let holders: Vec<Caller> = (0..5)
            .map(|i| attach(&mut core, &format!("holder{i}")))
            .collect();
        let per_batch = total.min(100);
        for batch in 0..total / per_batch {
            let holder = &holders[batch % holders.len()];
            let resources = (0..per_batch)
                .map(|i| format!("file:b{batch}/{i}.rs"))
                .collect();
            core.acquire_claims(holder, &request(resources))
                .expect("seed claims");
        }
        let status = |all: bool| {
            let mut command = Command::new(bin("acc"));
            command
                .arg("status")
                .current_dir(&dir)
                .env("ACC_DATA_HOME", &data);
            if all {
                command.arg("--all");
            }
            time_process(&mut command, 15)
        };
        let default = status(false);
        println!(
            "acc status, {total:>7} claims (default):  {:>9.2} ms  ({:.1}x `acc --version`)",
            ms(default),
            ratio(default, version)
        );
        times.push(default);
        if total > 10 {
            let all = status(true);
            println!(
                "acc status --all, {total:>7} claims:      {:>9.2} ms",
                ms(all)
            );
            println!(
                "  default view at {total} claims: {:.1}x its time at 10 claims (goal <= 3x)",
                ratio(default, times[0])
            );
            if std::env::var_os("ACC_BENCH_KEEP").is_some() {
                // For profiling by hand: this world is left in place.
                println!(
                    "kept: ACC_DATA_HOME={}, run in {}",
                    data.display(),
                    dir.display()
                );
                let _ = temp.keep();
            }
        }
    }
}

fn foundation() {
    println!("== foundation ==");
    let (_temp, data, dir) = world();
    let acc = bin("acc");

    let version = time_process(Command::new(&acc).arg("--version"), 30);
    let bare = bare_sqlite_commits(_temp.path(), 2000);

    let mut core = core_for(&data, &dir);
    let mut holders = Vec::new();
    for i in 0..10 {
        holders.push(attach(&mut core, &format!("holder{i}")));
    }
    for (h, holder) in holders.iter().enumerate() {
        for batch in 0..10 {
            let resources = (0..100)
                .map(|i| format!("file:h{h}/b{batch}/{i}.rs"))
                .collect();
            core.acquire_claims(holder, &request(resources))
                .expect("seed claims");
        }
    }
    let status = time_process(
        Command::new(&acc)
            .args(["status", "--json"])
            .current_dir(&dir)
            .env("ACC_DATA_HOME", &data),
        15,
    );
    let sync_page = time_process(
        Command::new(&acc)
            .args(["sync", "--json", "--cursor", "0000000000005000"])
            .current_dir(&dir)
            .env("ACC_DATA_HOME", &data),
        15,
    );
    println!(
        "acc --version (process floor):            {:>9.2} ms",
        ms(version)
    );
    println!(
        "acc status, 10,000 claims + events:       {:>9.2} ms  ({:.1}x floor)",
        ms(status),
        ratio(status, version)
    );
    status_scale(version);
    println!(
        "acc sync, one 100-event page of 10,000:   {:>9.2} ms  ({:.1}x floor)",
        ms(sync_page),
        ratio(sync_page, version)
    );

    let (_t2, data2, dir2) = world();
    core_for(&data2, &dir2);
    let one = claim_commits_per_second(&data2, &dir2, 1, 500);
    let four = claim_commits_per_second(&data2, &dir2, 4, 250);
    println!("bare sqlite commit (wal, sync=full):      {bare:>9.0} commits/s");
    println!(
        "claim acquire/release, 1 process:         {one:>9.0} commits/s  ({:.2}x bare)",
        one / bare
    );
    println!(
        "claim acquire/release, 4 processes:       {four:>9.0} commits/s  ({:.2}x bare)",
        four / bare
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// One process sending `count` durable messages to the participant `sink`.
fn app_for(data: &Path, dir: &Path) -> App {
    App::new(core_for(data, dir), Arc::new(acc_install::InstalledConsent))
}

fn send_worker(args: &[String]) -> i32 {
    let (data, dir, label, count, steady) = match args {
        [data, dir, label, count] => (data, dir, label, count, false),
        [data, dir, label, count, steady] if steady == "steady" => (data, dir, label, count, true),
        _ => {
            eprintln!("usage: acc-bench send-worker DATA DIR LABEL COUNT [steady]");
            return 2;
        }
    };
    let count: usize = count.parse().expect("count");
    let mut app = app_for(Path::new(data), Path::new(dir));
    let me = attach(&mut app.core, label);
    let send = |i: usize| {
        let request = SendRequest {
            to: vec!["sink".into()],
            subject: format!("message {i}"),
            body: "benchmark body".into(),
            ..SendRequest::default()
        };
        app.send_message(&me, &request).expect("send");
    };
    let wal = steady.then(|| wal_of(&store_path(Path::new(data), Path::new(dir))));
    run_worker(wal.as_deref(), count, send);
    0
}

/// The store file of the workspace `dir` under the data folder `data`.
fn store_path(data: &Path, dir: &Path) -> PathBuf {
    let id = acc_app::workspace::discover(dir).expect("workspace").id;
    data.join("acc/workspaces").join(id).join("store.sqlite3")
}

/// What a store spends per message: its file (and WAL) over its messages, and each table and
/// index (SQLite's `dbstat`) per message, largest first.
fn storage_report(data: &Path, dir: &Path, what: &str) {
    let store = store_path(data, dir);
    let conn = rusqlite::Connection::open(&store).expect("open the store");
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .expect("checkpoint");
    let messages: i64 = conn
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .expect("count");
    let file = std::fs::metadata(&store).map(|m| m.len()).unwrap_or(0);
    println!(
        "storage, {what}: {messages} messages in {:.1} MiB, {:.0} bytes a message; by table and index:",
        file as f64 / 1_048_576.0,
        file as f64 / messages.max(1) as f64
    );
    let mut stmt = conn
        .prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
        .expect("dbstat");
    let rows: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("dbstat")
        .collect::<Result<_, _>>()
        .expect("dbstat rows");
    for (name, bytes) in rows
        .iter()
        .filter(|(_, b)| *b as f64 / messages.max(1) as f64 >= 1.0)
    {
        println!(
            "  {name:<28} {:>8.0} bytes a message",
            *bytes as f64 / messages.max(1) as f64
        );
    }
}

/// A second connection to the core's store, for history fabricated below the protocol (the
/// core keeps its own connection's writes to itself). The store must exist.
fn raw_store(core: &Core) -> acc_store::Store {
    acc_store::Store::open_existing(core.data_dir(), &core.workspace.id)
        .expect("store")
        .expect("the store exists")
}

/// Bulk-write messages from `sender` to `recipient` through the store layer, in transactions of
/// 20,000: every 20th is an unresolved question, the rest acknowledged notes.
fn bulk_messages(core: &mut Core, sender: &Caller, recipient: &str, from: usize, to: usize) {
    let now = core.now();
    let mut store = raw_store(core);
    let mut next = from;
    while next < to {
        let end = (next + 20_000).min(to);
        store
            .write(|w| {
                for i in next..end {
                    let question = i % 20 == 0;
                    let id = format!("message_bulk{i:016}");
                    let event_seq = w.append_event(
                        "message.recorded",
                        now,
                        Some(&sender.session_id),
                        Some("sender"),
                        &serde_json::json!({ "messageId": id }),
                    )?;
                    let message = MessageRow {
                        seq: 0,
                        message_id: id.clone(),
                        thread_id: id,
                        client_message_id: format!("bulk-{i}"),
                        from_participant_id: "sender".into(),
                        from_session_id: sender.session_id.clone(),
                        to_participant_ids: vec![recipient.to_string()],
                        kind: if question {
                            MessageKind::Question
                        } else {
                            MessageKind::Note
                        },
                        obligation: if question {
                            Obligation::Reply
                        } else {
                            Obligation::None
                        },
                        subject: format!("bulk message number {i} about the store"),
                        body: "b".repeat(200),
                        in_reply_to: None,
                        artifacts: serde_json::json!([]),
                        handoff: None,
                        decision_change: None,
                        content_hash: String::new(),
                        sent_at: now,
                        event_seq,
                    };
                    let seq = w.insert_message(&message)?;
                    w.insert_receipt(&ReceiptRow {
                        message_seq: seq,
                        participant_id: recipient.to_string(),
                        state: if question {
                            ReceiptState::Queued
                        } else {
                            ReceiptState::Acknowledged
                        },
                        updated_at: now,
                        extensions: serde_json::json!({}),
                        obligation: message.obligation,
                        addressed: true,
                    })?;
                }
                Ok::<_, acc_core::AccError>(())
            })
            .expect("bulk write");
        next = end;
    }
}

fn time_in_process<T>(runs: usize, mut op: impl FnMut() -> T) -> Duration {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        std::hint::black_box(op());
        samples.push(start.elapsed());
    }
    median(samples)
}

/// Pages (WAL frames) one durable send to one recipient adds, averaged over 200 in-process
/// sends in a store of their own, beside a bare one-row commit's counted the same way.
fn pages_per_send(temp: &Path) -> (f64, f64) {
    let dir = temp.join("pages-project");
    std::fs::create_dir_all(&dir).expect("dir");
    let data = temp.join("pages-data");
    let mut app = app_for(&data, &dir);
    let sender = attach(&mut app.core, "sender");
    attach(&mut app.core, "sink");
    let mut counted = Vec::new();
    for i in 0..200 {
        let before = acc_store::wal_frames();
        let request = SendRequest {
            to: vec!["sink".into()],
            subject: format!("pages {i}"),
            body: "how many pages".into(),
            ..SendRequest::default()
        };
        app.send_message(&sender, &request).expect("send");
        let after = acc_store::wal_frames();
        // A checkpoint restarted the WAL in between: not counted.
        if after > before {
            counted.push(f64::from(after - before));
        }
    }
    let pages = counted.iter().sum::<f64>() / counted.len().max(1) as f64;
    static FRAMES: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
    fn on_commit(_: &rusqlite::hooks::Wal, n: std::ffi::c_int) -> rusqlite::Result<()> {
        FRAMES.store(n, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
    let frames = &FRAMES;
    let conn = rusqlite::Connection::open(temp.join("pages-bare.sqlite3")).expect("bare");
    conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
        .expect("wal");
    conn.execute_batch("PRAGMA synchronous=FULL; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        .expect("table");
    conn.wal_hook(Some(on_commit));
    let mut bare = Vec::new();
    for i in 0..200 {
        let before = frames.load(std::sync::atomic::Ordering::Relaxed);
        conn.execute("INSERT INTO t(v) VALUES (?1)", [format!("row {i}")])
            .expect("insert");
        let after = frames.load(std::sync::atomic::Ordering::Relaxed);
        if after > before {
            bare.push(f64::from(after - before));
        }
    }
    let bare = bare.iter().sum::<f64>() / bare.len().max(1) as f64;
    (pages, bare)
}

/// Durable sends per second from 1 and 4 processes beside their bare floors, syncs and pages
/// per send, and what a real send stores.
fn sends() {
    const ROUNDS: usize = 15;
    let (temp, data, dir) = world();
    let bare = bare_sqlite_commits(temp.path(), 2000);
    let mut core = core_for(&data, &dir);
    attach(&mut core, "sink");
    drop(core);
    // The same floor as processes, started and counted as the send workers are, from 1 and 4
    // processes sharing one database.
    let conn = rusqlite::Connection::open(data.join("bare.sqlite3")).expect("bare");
    conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
        .expect("wal");
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        .expect("table");
    drop(conn);
    // Fifteen rounds, each measuring the floor right beside the figure, so that the machine's
    // drift (this disk's sync time moves by a third within a minute) falls on both alike; the
    // ratio is the median of the rounds' ratios. Every other round measures the figure first, so
    // that whatever the previous measurement leaves the disk doing (writing back a checkpoint)
    // falls on the floor and the figure equally often.
    let mut rounds: [Vec<f64>; 6] = Default::default();
    for round in 0..ROUNDS {
        let pair = |processes: usize, count: usize| {
            let floor = || workers_per_second(&data, &dir, "bare-worker", processes, count, 1);
            let figure = || workers_per_second(&data, &dir, "send-worker", processes, count, 1);
            if round % 2 == 0 {
                let floor = floor();
                (floor, figure())
            } else {
                let figure = figure();
                (floor(), figure)
            }
        };
        let (bare_one, one) = pair(1, 1000);
        let (bare_four, four) = pair(4, 500);
        for (list, value) in rounds.iter_mut().zip([
            bare_one,
            one,
            bare_four,
            four,
            one / bare_one,
            four / bare_four,
        ]) {
            list.push(value);
        }
    }
    let [bare_one, one, bare_four, four, ratio_one, ratio_four] = rounds.map(|mut values| {
        values.sort_by(f64::total_cmp);
        (values[ROUNDS / 2], values[0], values[ROUNDS - 1])
    });
    let (steady_bare, steady_send, steady_ratio) = steady_pair(&data, &dir);
    let (short, short_bare) = short_processes(&data, &dir);
    let syncs = syncs_per_send(&data, &dir);
    let (pages, bare_pages) = pages_per_send(temp.path());
    storage_report(&data, &dir, "real sends (one recipient each)");
    println!("bare sqlite commit (wal, sync=full):      {bare:>9.0} commits/s");
    println!(
        "bare commits as processes (median of 15): {:>9.0}/s from 1, {:>9.0}/s from 4",
        bare_one.0, bare_four.0
    );
    println!(
        "durable sends, 1 process:                 {:>9.0} sends/s  ({:.2}x bare, {:.2}x bare process, rounds {:.2}-{:.2}; {syncs})",
        one.0,
        one.0 / bare,
        ratio_one.0,
        ratio_one.1,
        ratio_one.2
    );
    println!(
        "durable sends, 4 processes:               {:>9.0} sends/s  ({:.2}x bare, {:.2}x bare from 4 processes, rounds {:.2}-{:.2})",
        four.0,
        four.0 / bare,
        ratio_four.0,
        ratio_four.1,
        ratio_four.2
    );
    println!(
        "1 process, neither WAL growing:           {:>9.0} us a send, {:.0} us a bare commit  ({:.2}x bare process, rounds {:.2}-{:.2})",
        steady_send.0, steady_bare.0, steady_ratio.0, steady_ratio.1, steady_ratio.2
    );
    println!(
        "short processes, attach and 3 sends:       {:>8.2} ms each, a bare process of 4 commits {:.2} ms  ({:.2}x)",
        ms(short),
        ms(short_bare),
        short_bare.as_secs_f64() / short.as_secs_f64()
    );
    println!(
        "pages written per durable send: {pages:.1} (a bare commit of one row: {bare_pages:.1})"
    );
}

/// Median, lowest and highest of a figure's rounds.
type Spread = (f64, f64, f64);

/// The 1-process pair once neither worker's WAL grows: microseconds a bare commit, a send, and
/// their ratio, each over its rounds.
fn steady_pair(data: &Path, dir: &Path) -> (Spread, Spread, Spread) {
    // The same 1-process pair once each worker's WAL has stopped growing (see `warm_up`). In the
    // process rounds of `sends` the floor's SQLite deleted its WAL when the previous worker
    // closed, so its one-page commits spend the whole run extending the file, while ACC's store
    // keeps its WAL's blocks between processes (`trim_wal`); here both write over blocks their
    // file has.
    const STEADY_ROUNDS: usize = 9;
    let mut steady: [Vec<f64>; 3] = Default::default();
    for round in 0..STEADY_ROUNDS {
        let floor = || steady_seconds(data, dir, "bare-worker", 1000) * 1e3;
        let figure = || steady_seconds(data, dir, "send-worker", 1000) * 1e3;
        let (floor_us, send_us) = if round % 2 == 0 {
            let floor = floor();
            (floor, figure())
        } else {
            let figure = figure();
            (floor(), figure)
        };
        for (list, value) in steady
            .iter_mut()
            .zip([floor_us, send_us, floor_us / send_us])
        {
            list.push(value);
        }
    }
    let [bare, send, ratio] = steady.map(|mut values| {
        values.sort_by(f64::total_cmp);
        (
            values[STEADY_ROUNDS / 2],
            values[0],
            values[STEADY_ROUNDS - 1],
        )
    });
    (bare, send, ratio)
}

/// Short processes: the median time of one that attaches and sends three messages, and of a
/// bare one making four commits.
fn short_processes(data: &Path, dir: &Path) -> (Duration, Duration) {
    // Short processes, as hooks and `acc send` are: each attaches and sends three messages
    // (four commits), beside a bare worker making four commits, alternately, each started
    // afresh; the median of each.
    let mut short = Vec::new();
    let mut short_bare = Vec::new();
    for round in 0..60 {
        let run = |worker: &str, count: &str| {
            time_process(
                Command::new(bin("acc-bench"))
                    .args([worker, data.to_str().expect("utf8")])
                    .args([dir.to_str().expect("utf8"), "short", count]),
                1,
            )
        };
        if round % 2 == 0 {
            short.push(run("send-worker", "3"));
            short_bare.push(run("bare-worker", "4"));
        } else {
            short_bare.push(run("bare-worker", "4"));
            short.push(run("send-worker", "3"));
        }
    }
    (median(short), median(short_bare))
}

fn messaging() {
    println!("== messaging ==");
    sends();
    let (_temp, data, dir) = world();
    let mut core = core_for(&data, &dir);
    let sender = attach(&mut core, "sender");
    let recipient = attach(&mut core, "recipient");
    let acc = bin("acc");
    let mut stored = 0;
    println!("page times, median (in-process; the last column is the whole `acc inbox` process):");
    println!(
        "{:>10} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12}",
        "messages", "inbox", "inbox mid", "history", "hist. kind", "sync page", "acc inbox"
    );
    for target in [1_000usize, 100_000, 1_000_000] {
        bulk_messages(&mut core, &sender, "recipient", stored, target);
        stored = target;
        let mid = format!("message_bulk{:016}", (target / 2) / 20 * 20);
        let mid_cursor = (target / 2) as i64;
        let inbox = time_in_process(30, || core.inbox(&recipient, None, None).expect("inbox"));
        let inbox_mid = time_in_process(30, || {
            core.inbox(&recipient, Some(&mid), None).expect("inbox")
        });
        let history = time_in_process(30, || {
            core.history(None, false, None, None).expect("history")
        });
        let history_kind = time_in_process(30, || {
            core.history(Some("question"), false, Some(&mid), None)
                .expect("history")
        });
        let sync = time_in_process(30, || core.sync_delta(mid_cursor, 100).expect("sync"));
        let process = time_process(
            Command::new(&acc)
                .args(["inbox", "--json"])
                .current_dir(&dir)
                .env("ACC_DATA_HOME", &data)
                .env("ACC_SESSION", &recipient.session_id)
                .env("ACC_GENERATION", &recipient.generation),
            10,
        );
        println!(
            "{target:>10} {:>9.3}ms {:>9.3}ms {:>9.3}ms {:>9.3}ms {:>9.3}ms {:>10.2}ms",
            ms(inbox),
            ms(inbox_mid),
            ms(history),
            ms(history_kind),
            ms(sync),
            ms(process)
        );
    }
    storage_report(
        &data,
        &dir,
        "10^6 messages written in bulk (minimal event rows)",
    );
}

/// An `acc-mcp` process over real pipes, speaking for `participant`.
fn start_mcp(data: &Path, dir: &Path, participant: &str) -> JsonRpcChild {
    let mut command = bench_command("acc-mcp");
    command
        .env("ACC_DATA_HOME", data)
        .env("ACC_MCP_WORKSPACE", dir)
        .env("ACC_MCP_PARTICIPANT", participant);
    JsonRpcChild::spawn(command)
}

/// One tool call; a failed call ends the benchmark.
fn call(server: &mut JsonRpcChild, id: &mut u64, tool: &str, arguments: serde_json::Value) {
    *id += 1;
    let answer = server.request(
        *id,
        "tools/call",
        serde_json::json!({ "name": tool, "arguments": arguments }),
    );
    assert!(
        answer["result"]["isError"] != true,
        "{tool} failed: {answer}"
    );
}

fn initialize(server: &mut JsonRpcChild) {
    server.request(
        0,
        "initialize",
        serde_json::json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } }),
    );
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

/// The machine's floor for a line's round trip over pipes: `cat` echoing it (p50).
fn pipe_floor() -> Duration {
    let mut echo = JsonRpcChild::spawn(Command::new("cat"));
    let mut samples = Vec::with_capacity(2000);
    for i in 0..2000u64 {
        let start = Instant::now();
        echo.send_line(&format!("{{\"id\":{i},\"result\":{{}}}}"));
        echo.wait_for(|v| v["id"] == i, Duration::from_secs(10));
        samples.push(start.elapsed());
    }
    echo.finish(Duration::from_secs(5));
    percentile(&mut samples, 0.5)
}

fn mcp() {
    println!("== mcp ==");
    let (_temp, data, dir) = world();
    let floor_true = time_process(&mut Command::new("true"), 30);
    let floor_acc = time_process(Command::new(bin("acc")).arg("--version"), 30);
    let mut cold = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        let mut server = start_mcp(&data, &dir, "cold");
        initialize(&mut server);
        cold.push(start.elapsed());
        server.finish(Duration::from_secs(10));
    }
    let cold = median(cold);
    println!(
        "empty process `true`:                     {:>9.2} ms",
        ms(floor_true)
    );
    println!(
        "empty process `acc --version`:            {:>9.2} ms",
        ms(floor_acc)
    );
    println!(
        "acc-mcp cold start to first answer:       {:>9.2} ms  ({:.1}x `true`)",
        ms(cold),
        ratio(cold, floor_true)
    );

    // What every turn of every agent pays for the surface: the tools/list result as the client
    // receives it. 15,933 bytes before the schemas were flattened and the descriptions cut
    // (issue 10); the goal is at most 8 KiB.
    let mut lister = start_mcp(&data, &dir, "lister");
    initialize(&mut lister);
    let listed = lister.request(1, "tools/list", serde_json::json!({}));
    let tools_bytes = listed["result"].to_string().len();
    println!(
        "tools/list result:                        {tools_bytes:>6} bytes  (was 15,933; goal <= 8,192; ~{} tokens at 4 bytes a token)",
        tools_bytes / 4
    );
    lister.finish(Duration::from_secs(10));

    let mut id = 0;
    let mut peer = start_mcp(&data, &dir, "peer");
    call(&mut peer, &mut id, "acc_status", serde_json::json!({}));
    let mut server = start_mcp(&data, &dir, "bench");
    initialize(&mut server);
    for (tool, args, count) in [
        ("acc_status", serde_json::json!({}), 2000usize),
        (
            "acc_message",
            serde_json::json!({ "to": ["peer"], "subject": "benchmark", "body": "a message body" }),
            2000usize,
        ),
    ] {
        let mut samples = Vec::with_capacity(count);
        for _ in 0..count {
            let start = Instant::now();
            call(&mut server, &mut id, tool, args.clone());
            samples.push(start.elapsed());
        }
        let p50 = percentile(&mut samples, 0.50);
        let p99 = percentile(&mut samples, 0.99);
        println!(
            "{tool:<12} round trip over pipes:       p50 {:>7.3} ms  p99 {:>7.3} ms",
            ms(p50),
            ms(p99)
        );
    }
    // Flat as history grows: acc_status p50 over calls 1-1,000 and 9,001-10,000.
    let mut early = Vec::new();
    let mut late = Vec::new();
    let mut before = None;
    for i in 0..6000 {
        let start = Instant::now();
        call(&mut server, &mut id, "acc_status", serde_json::json!({}));
        let took = start.elapsed();
        if i == 0 {
            before = server.rss_kib();
        }
        if i < 1000 {
            early.push(took);
        } else if i >= 5000 {
            late.push(took);
        }
    }
    println!(
        "acc_status p50, calls 4,001-5,000 / 9,001-10,000: {:.3} / {:.3} ms (no growth expected)",
        ms(percentile(&mut early, 0.5)),
        ms(percentile(&mut late, 0.5))
    );
    println!(
        "floor: a line's round trip through `cat` over pipes: p50 {:.3} ms",
        ms(pipe_floor())
    );
    let after = server.rss_kib();
    println!(
        "acc-mcp resident memory after 10,000 calls: {} KiB (after 4,000: {} KiB)",
        after
            .map(|v| v.to_string())
            .unwrap_or_else(|| "unavailable".into()),
        before
            .map(|v| v.to_string())
            .unwrap_or_else(|| "unavailable".into())
    );
    server.finish(Duration::from_secs(10));
    peer.finish(Duration::from_secs(10));
}

fn router() {
    println!("== router ==");
    let (temp, data, dir) = world();
    let bare = bare_sqlite_commits(temp.path(), 1000);
    let mut app = app_for(&data, &dir);
    let configs = std::collections::BTreeMap::new();
    let plugins = std::sync::Arc::new(acc_delivery::plugins::Plugins::load_from(
        vec![bin("acc").parent().expect("dir").to_path_buf()],
        &configs,
    ));
    assert!(
        plugins.get("example").is_some(),
        "the example adapter must be built beside acc"
    );
    app.delivery.set_plugins(plugins);
    let sender = attach(&mut app.core, "sender");
    // The durable recipient only needs to be a known participant with a live session.
    let _durable_recipient = attach(&mut app.core, "durable");
    let live = attach(&mut app.core, "live");
    let endpoint = serde_json::json!({ "file": temp.path().join("offers.jsonl") });
    app.bind(&live, "example", "all", &endpoint).expect("bind");
    let send = |app: &mut App, to: &str| {
        let request = SendRequest {
            to: vec![to.into()],
            subject: "bench".into(),
            body: "router benchmark".into(),
            ..SendRequest::default()
        };
        app.send_message(&sender, &request).expect("send")
    };
    let count = 500;
    let start = Instant::now();
    for _ in 0..count {
        send(&mut app, "durable");
    }
    let durable_each = start.elapsed() / count;
    let start = Instant::now();
    for _ in 0..count {
        let sent = send(&mut app, "live");
        assert_eq!(sent.delivery[0].outcome, Outcome::Offered);
    }
    let live_each = start.elapsed() / count;
    let bare_each = Duration::from_secs_f64(1.0 / bare);
    println!(
        "bare sqlite commit (wal, sync=full):      {:>9.3} ms",
        ms(bare_each)
    );
    println!(
        "durable-only send (no binding):           {:>9.3} ms  ({:.1}x bare)",
        ms(durable_each),
        ratio(durable_each, bare_each)
    );
    println!(
        "send offered through the example adapter: {:>9.3} ms  ({:.1}x bare)",
        ms(live_each),
        ratio(live_each, bare_each)
    );
    println!(
        "router's added cost per addressed recipient: {:>6.3} ms (route checks, the adapter call on its own thread, the example's file append and duplicate scan, the offer record)",
        ms(live_each.saturating_sub(durable_each))
    );
    isolated_offers(&mut app, &sender, &endpoint, live_each);
    hung_recipients();
}

/// `acc-mcp`'s path: the adapter's code in an `acc adapter-host` helper per call. Its added
/// cost per live offer against the in-process offer (goal: at most 3 ms), beside the floor of
/// starting and reaping a process that does nothing (`/bin/true`) in the same run. Measured as
/// installed (`acc` and the adapter stripped, as `scripts/install.sh` installs them) and with
/// this build's unstripped files.
fn isolated_offers(
    app: &mut App,
    sender: &acc_core::Caller,
    endpoint: &serde_json::Value,
    in_process: Duration,
) {
    let built = bin("acc").parent().expect("dir").to_path_buf();
    let layout = tempfile::tempdir().expect("tempdir");
    let adapter = format!("libacc_adapter_example{}", std::env::consts::DLL_SUFFIX);
    for name in ["acc", adapter.as_str()] {
        std::fs::copy(built.join(name), layout.path().join(name)).expect("copy");
        let status = std::process::Command::new("strip")
            .arg("--strip-all")
            .arg(layout.path().join(name))
            .status()
            .expect("strip (binutils) is needed for the installed-layout figure");
        assert!(status.success(), "strip {name}");
    }
    let start = Instant::now();
    for _ in 0..200 {
        let status = std::process::Command::new("true").status().expect("true");
        assert!(status.success());
    }
    let floor = start.elapsed() / 200;
    for (label, dir) in [
        ("installed, stripped", layout.path()),
        ("this build, unstripped", built.as_path()),
    ] {
        let helper = acc_delivery::plugins::Loading::Helper(dir.join("acc"));
        app.delivery.set_plugins(std::sync::Arc::new(
            acc_delivery::plugins::Plugins::load_via(
                vec![dir.to_path_buf()],
                &std::collections::BTreeMap::new(),
                &helper,
            ),
        ));
        let name = format!("isolated-{}", label.len());
        let isolated = attach(&mut app.core, &name);
        app.bind(&isolated, "example", "all", endpoint)
            .expect("bind through a helper");
        let count = 200;
        let start = Instant::now();
        for _ in 0..count {
            let request = SendRequest {
                to: vec![name.clone()],
                subject: "bench".into(),
                body: "router benchmark".into(),
                ..SendRequest::default()
            };
            let sent = app.send_message(sender, &request).expect("send");
            assert_eq!(
                sent.delivery[0].outcome,
                Outcome::Offered,
                "{:?}",
                sent.delivery
            );
        }
        let each = start.elapsed() / count;
        println!(
            "send offered through a helper ({label}): {:>7.3} ms  (added per live offer {:.3} ms, goal <= 3 ms; floor: start and reap /bin/true {:.3} ms)",
            ms(each),
            ms(each.saturating_sub(in_process)),
            ms(floor)
        );
    }
}

/// A send to N recipients bound to an adapter whose offers hang: one deadline for the whole
/// send, whatever N (the floor is the deadline itself).
fn hung_recipients() {
    let (_temp, data, dir) = world();
    let mut app = app_for(&data, &dir);
    let configs = [(
        "faulty".to_string(),
        serde_json::json!({ "mode": "offer-hang" }).to_string(),
    )]
    .into_iter()
    .collect();
    let adapters = _temp.path().join("adapters");
    std::fs::create_dir_all(&adapters).expect("adapters dir");
    std::fs::copy(
        bin("acc").with_file_name(format!("libfaulty_adapter{}", std::env::consts::DLL_SUFFIX)),
        adapters.join(format!(
            "libacc_adapter_faulty{}",
            std::env::consts::DLL_SUFFIX
        )),
    )
    .expect("the faulty fixture is built beside acc");
    app.delivery.set_plugins(std::sync::Arc::new(
        acc_delivery::plugins::Plugins::load_from(vec![adapters], &configs),
    ));
    let deadline = Duration::from_millis(200);
    app.delivery.offer_deadline = deadline;
    app.delivery.evidence_dirs = Some(vec![
        acc_tests::repo_root().join("contracts"),
        acc_tests::repo_root().join("tests/fixtures/contracts"),
    ]);
    let sender = attach(&mut app.core, "sender");
    let endpoint = serde_json::json!({ "file": _temp.path().join("offers.jsonl") });
    let mut bound = Vec::new();
    for n in [1usize, 2, 4, 8, 16] {
        while bound.len() < n {
            let name = format!("hung{}", bound.len());
            let who = attach(&mut app.core, &name);
            app.bind(&who, "faulty", "all", &endpoint).expect("bind");
            bound.push(name);
        }
        let request = SendRequest {
            to: bound.clone(),
            kind: Some("question".into()),
            subject: "bench".into(),
            body: "hung".into(),
            ..SendRequest::default()
        };
        let start = Instant::now();
        let sent = app.send_message(&sender, &request).expect("send");
        let took = start.elapsed();
        assert!(
            sent.delivery
                .iter()
                .all(|d| d.error_code
                    == Some(acc_delivery::codes::DeliveryCode::OfferOutcomeUnknown))
        );
        println!(
            "send to {n:>2} hung recipients:            {:>9.1} ms  (deadline {} ms: {:.2}x)",
            ms(took),
            deadline.as_millis(),
            ratio(took, deadline)
        );
    }
}

/// Time `acc hook claude-code UserPromptSubmit` as a whole process.
fn time_hook(
    data: &Path,
    dir: &Path,
    session: &str,
    runs: usize,
    before_each: &mut dyn FnMut(),
) -> Duration {
    let payload = prompt_payload(dir, session);
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        before_each();
        let start = Instant::now();
        run_hook(data, dir, Some("reader"), "UserPromptSubmit", &payload);
        samples.push(start.elapsed());
    }
    median(samples)
}

/// A Claude Code `UserPromptSubmit` payload for `session` in `dir`.
fn prompt_payload(dir: &Path, session: &str) -> String {
    serde_json::json!({ "session_id": session, "cwd": dir, "hook_event_name": "UserPromptSubmit", "prompt": "go" }).to_string()
}

/// A client start that ends without a turn (as `claude mcp list` does): SessionStart then
/// SessionEnd with a transcript never written, a new conversation each run; the pair's time.
fn time_untraced_sessions(data: &Path, dir: &Path, runs: usize) -> Duration {
    let missing = dir.join("never-written.jsonl");
    let mut samples = Vec::with_capacity(runs);
    for run in 0..runs {
        let start = Instant::now();
        for event in ["SessionStart", "SessionEnd"] {
            let payload = serde_json::json!({ "session_id": format!("untraced-{run}"), "cwd": dir, "hook_event_name": event, "source": "startup", "reason": "other", "transcript_path": missing }).to_string();
            run_hook(data, dir, None, event, &payload);
        }
        samples.push(start.elapsed());
    }
    median(samples)
}

/// One `acc hook claude-code EVENT` process with `payload` on stdin, speaking for
/// `participant` (else the one the hook derives from the conversation); it must succeed.
fn run_hook(data: &Path, dir: &Path, participant: Option<&str>, event: &str, payload: &str) {
    let mut command = hook_command(data, dir, participant, event);
    command.stdout(Stdio::null());
    hook_ran(command, event, payload);
}

/// What the hook `run_hook` runs prints on stdout (it must succeed).
fn hook_says(
    data: &Path,
    dir: &Path,
    participant: Option<&str>,
    event: &str,
    payload: &str,
) -> String {
    let mut command = hook_command(data, dir, participant, event);
    command.stdout(Stdio::piped());
    hook_ran(command, event, payload)
}

fn hook_command(data: &Path, dir: &Path, participant: Option<&str>, event: &str) -> Command {
    let mut command = Command::new(bin("acc"));
    command
        .args(["hook", "claude-code", event])
        .env("ACC_DATA_HOME", data)
        .env_remove("ACC_PARTICIPANT")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(participant) = participant {
        command.env("ACC_PARTICIPANT", participant);
    }
    command
}

/// Run a hook command with `payload` on stdin; its stdout (when piped).
fn hook_ran(mut command: Command, event: &str, payload: &str) -> String {
    use std::io::Write;
    let mut child = command.spawn().expect("spawn hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success(), "hook {event} failed");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn hook() {
    println!("== hook ==");
    let (temp, data, dir) = world();
    let mut keep = false;
    let floor_true = time_process(&mut Command::new("true"), 30);
    let floor_acc = time_process(Command::new(bin("acc")).arg("--version"), 30);
    let mut app = app_for(&data, &dir);
    let sender = attach(&mut app.core, "sender");
    // The reader's session comes from its first hook; then 100,000 resolved messages to it.
    time_hook(&data, &dir, "bench-session", 1, &mut || {});
    bulk_acknowledged(&mut app.core, &sender, "reader", 100_000);
    println!(
        "empty process `true`:                     {:>9.2} ms",
        ms(floor_true)
    );
    println!(
        "empty process `acc --version`:            {:>9.2} ms",
        ms(floor_acc)
    );
    // The floor the hook is held to: one process start plus one read of the store
    // (`acc-read-floor`, which links SQLite and nothing else).
    let store = data
        .join("acc/workspaces")
        .join(acc_app::workspace::discover(&dir).expect("workspace").id)
        .join("store.sqlite3");
    let floor_read = time_process(
        Command::new(bin("acc-read-floor"))
            .arg(&store)
            .arg("claude-code:bench-session"),
        30,
    );
    println!(
        "one process start + one store read:      {:>9.2} ms",
        ms(floor_read)
    );
    for pending in [0usize, 10, 1000] {
        let mut queued = 0usize;
        let mut refill = || {
            // Keep `pending` messages waiting: each run carries what fits its budget.
            let missing = pending.saturating_sub(count_queued(&mut app.core, &sender));
            for i in 0..missing {
                let request = SendRequest {
                    to: vec!["reader".into()],
                    subject: format!("pending {queued} {i}"),
                    body: "a pending body".into(),
                    ..SendRequest::default()
                };
                app.send_message(&sender, &request).expect("send");
            }
            queued += missing;
        };
        if pending > 0 {
            // The figure is a hook that delivers: without the next-turn adapter beside `acc`
            // the hook only names what is waiting, and would be timed doing less.
            refill();
            let said = hook_says(
                &data,
                &dir,
                Some("reader"),
                "UserPromptSubmit",
                &prompt_payload(&dir, "bench-session"),
            );
            assert!(
                said.contains("a pending body"),
                "the hook delivered no message (build the whole workspace in this profile, so that the next-turn adapter sits beside `acc`): {said}"
            );
        }
        // `acc --version` is timed between the hook runs, so the ratio compares runs made side
        // by side (this machine's speed drifts by 10-30% within minutes): once before each
        // refill and once after it, just before the hook (whose conditions it then shares).
        let mut beside = Vec::new();
        let mut version = Command::new(bin("acc"));
        version.arg("--version");
        let time = time_hook(&data, &dir, "bench-session", 21, &mut || {
            beside.push(time_process(&mut version, 1));
            refill();
            beside.push(time_process(&mut version, 1));
        });
        let beside = median(beside);
        if pending == 1000 && std::env::var_os("ACC_BENCH_KEEP").is_some() {
            // For profiling by hand: the world with 1,000 pending is left in place.
            refill();
            println!(
                "kept: ACC_DATA_HOME={} ACC_PARTICIPANT=reader, run in {}",
                data.display(),
                dir.display()
            );
            keep = true;
        }
        println!(
            "UserPromptSubmit hook, {pending:>4} pending of 100,000: {:>8.2} ms  ({:.1}x `acc --version` timed beside it, {:.2} ms; {:.1}x `true`, {:.1}x one read)",
            ms(time),
            ratio(time, beside),
            ms(beside),
            ratio(time, floor_true),
            ratio(time, floor_read)
        );
    }
    let untraced = time_untraced_sessions(&data, &dir, 11);
    let version = time_process(Command::new(bin("acc")).arg("--version"), 30);
    println!(
        "a start that ends without a turn, SessionStart + SessionEnd, in that store: {:>8.2} ms  ({:.1}x two `acc --version`, {:.2} ms each)",
        ms(untraced),
        ratio(untraced, version * 2),
        ms(version)
    );
    if keep {
        let _ = temp.keep();
    }
    hook_offered();
}

/// The layout upgrade of a store of 10^6 messages (goal at most 30 s), as `acc store upgrade`
/// runs it, beside its floor: SQLite's online backup of the same store alone, in the same run.
fn upgrade() {
    println!("== upgrade ==");
    let (temp, data, dir) = world();
    let mut app = app_for(&data, &dir);
    let sender = attach(&mut app.core, "sender");
    bulk_messages(&mut app.core, &sender, "reader", 0, 1_000_000);
    let mut store = raw_store(&app.core);
    drop(app);
    let store_path = store.path().expect("a SQLite store").to_path_buf();
    store.downgrade(0).expect("back to layout 0");
    drop(store);
    let size = std::fs::metadata(&store_path).map(|m| m.len()).unwrap_or(0);
    let floor = {
        let source = rusqlite::Connection::open(&store_path).expect("open");
        let mut target =
            rusqlite::Connection::open(temp.path().join("floor.sqlite3")).expect("target");
        let start = Instant::now();
        rusqlite::backup::Backup::new(&source, &mut target)
            .expect("backup")
            .run_to_completion(1024, Duration::ZERO, None)
            .expect("copy");
        drop(target);
        std::fs::File::open(temp.path().join("floor.sqlite3"))
            .and_then(|f| f.sync_all())
            .expect("sync");
        start.elapsed()
    };
    let start = Instant::now();
    let output = Command::new(bin("acc"))
        .args(["--json", "store", "upgrade"])
        .env("ACC_DATA_HOME", &data)
        .current_dir(&dir)
        .output()
        .expect("acc store upgrade");
    let took = start.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!(
        "acc store upgrade, 10^6 messages ({} MiB): {:>8.2} s (goal <= 30 s; floor: the online backup alone {:.2} s)",
        size / (1024 * 1024),
        took.as_secs_f64(),
        floor.as_secs_f64()
    );
}

/// A prompt hook with nothing to deliver, with 0 and with 10,000 offered, unacknowledged
/// messages (models that never acknowledge their notes): the queued read is a range of the
/// queued receipts (layout revision 1), so the two should cost the same within 10%.
///
/// Two rooms, one without messages and one with the 10,000, timed in interleaved rounds (the
/// order alternating), so the machine's drift between them moves both: a round's ratio is its
/// two medians of 11 hook runs, and the figure is the median of the rounds' ratios, with their
/// range. `acc --version`, the floor, is timed in the same rounds.
fn hook_offered() {
    const ROUNDS: usize = 9;
    let rooms = [0, 10_000].map(|offered| {
        let (temp, data, dir) = world();
        let mut app = app_for(&data, &dir);
        let sender = attach(&mut app.core, "sender");
        time_hook(&data, &dir, "offered-session", 1, &mut || {});
        if offered > 0 {
            bulk_in_state(
                &mut app.core,
                &sender,
                "reader",
                offered,
                ReceiptState::Offered,
            );
        }
        (temp, data, dir)
    });
    let mut version = Command::new(bin("acc"));
    version.arg("--version");
    let mut rounds: [Vec<f64>; 4] = Default::default();
    for round in 0..ROUNDS {
        let mut times = [Duration::ZERO; 2];
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for room in order {
            let (_, data, dir) = &rooms[room];
            times[room] = time_hook(data, dir, "offered-session", 11, &mut || {});
        }
        let floor = time_process(&mut version, 11);
        for (list, value) in rounds.iter_mut().zip([
            ms(times[0]),
            ms(times[1]),
            ms(floor),
            ratio(times[1], times[0]),
        ]) {
            list.push(value);
        }
    }
    let [none, many, floor, ratios] = rounds.map(|mut values| {
        values.sort_by(f64::total_cmp);
        (values[ROUNDS / 2], values[0], values[ROUNDS - 1])
    });
    println!(
        "UserPromptSubmit hook, nothing to deliver, 0 / 10,000 offered unacknowledged: {:.2} / {:.2} ms ({:.2}x, rounds {:.2}-{:.2}, median of {ROUNDS}; goal within 10%; `acc --version` {:.2} ms)",
        none.0, many.0, ratios.0, ratios.1, ratios.2, floor.0
    );
}

/// Messages to the reader still queued (not yet carried by a hook).
fn count_queued(core: &mut Core, _sender: &Caller) -> usize {
    raw_store(core)
        .read(|r| {
            let mut count = 0;
            let mut before = None;
            loop {
                let page = r.inbox_page("reader", before, 500)?;
                if page.is_empty() {
                    break;
                }
                count += page
                    .iter()
                    .filter(|(_, receipt)| receipt.state == ReceiptState::Queued)
                    .count();
                before = page.last().map(|(m, _)| m.seq);
                if count > 2000 {
                    break;
                }
            }
            Ok::<_, acc_core::AccError>(count)
        })
        .expect("count")
}

/// Bulk-write `count` acknowledged messages to `recipient` through the store layer.
fn bulk_acknowledged(core: &mut Core, sender: &Caller, recipient: &str, count: usize) {
    bulk_in_state(core, sender, recipient, count, ReceiptState::Acknowledged);
}

/// `count` messages to `recipient` whose receipts are all in `state`.
fn bulk_in_state(
    core: &mut Core,
    sender: &Caller,
    recipient: &str,
    count: usize,
    state: ReceiptState,
) {
    bulk_messages(core, sender, recipient, 0, count);
    let mut store = raw_store(core);
    store
        .write(|w| {
            let reader = w.reader();
            let mut pending = Vec::new();
            let mut before = None;
            loop {
                let page = reader.inbox_page(recipient, before, 500)?;
                if page.is_empty() {
                    break;
                }
                before = page.last().map(|(m, _)| m.seq);
                pending.extend(page.into_iter().map(|(_, r)| r));
            }
            for mut receipt in pending {
                receipt.state = state;
                w.update_receipt(&receipt)?;
            }
            Ok::<_, acc_core::AccError>(())
        })
        .expect("resolve");
}

/// Median and 90th percentile of per-send times.
fn spread(mut samples: Vec<Duration>) -> (Duration, Duration) {
    let p90 = percentile(&mut samples, 0.90);
    (median(samples), p90)
}

// One benchmark: set up a room with the real adapters, then time each path in turn.
#[allow(clippy::too_many_lines)]
fn native() {
    use std::os::unix::fs::PermissionsExt;
    println!("== native ==");
    let (temp, data, dir) = world();
    let mut app = app_for(&data, &dir);
    let plugins = Arc::new(acc_delivery::plugins::Plugins::load_from(
        vec![bin("acc").parent().expect("dir").to_path_buf()],
        &std::collections::BTreeMap::new(),
    ));
    for id in ["claude-inbox", "codex-app-server"] {
        assert!(
            plugins.get(id).is_some(),
            "the {id} adapter must be built beside acc"
        );
    }
    app.delivery.set_plugins(plugins);
    // The benchmark stands in for the user's consent recorded at install time.
    app.delivery.consent_override = Some(acc_store::LivePolicy::All);
    let sender = attach(&mut app.core, "sender");
    let _durable = attach(&mut app.core, "durable");
    let send = |app: &mut App, to: &str| {
        let request = SendRequest {
            to: vec![to.into()],
            kind: Some("question".into()),
            subject: "bench".into(),
            body: "native benchmark".into(),
            ..SendRequest::default()
        };
        let start = Instant::now();
        let sent = app.send_message(&sender, &request).expect("send");
        (start.elapsed(), sent.delivery[0].outcome)
    };

    // claude-inbox: a private socket and a registry naming this process.
    let config = temp.path().join("claude");
    let socks = temp.path().join("socks");
    std::fs::create_dir_all(config.join("sessions")).expect("dirs");
    std::fs::create_dir_all(&socks).expect("dirs");
    std::fs::set_permissions(&socks, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let socket = socks.join("m.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("listen");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = std::io::copy(&mut &stream, &mut std::io::sink());
        }
    });
    let pid = std::process::id();
    std::fs::write(
        config.join("sessions").join(format!("{pid}.json")),
        serde_json::json!({ "pid": pid, "sessionId": "bench", "messagingSocketPath": socket, "version": "2.1.328" }).to_string(),
    )
    .expect("registry");
    let woken = attach(&mut app.core, "woken");
    app.bind(
        &woken,
        "claude-inbox",
        "all",
        &serde_json::json!({ "socket": socket, "pid": pid, "sessionId": "bench", "configDir": config }),
    )
    .expect("bind claude-inbox");

    let runs = 200;
    let durable: Vec<Duration> = (0..runs).map(|_| send(&mut app, "durable").0).collect();
    let wake: Vec<Duration> = (0..runs)
        .map(|_| {
            let (took, outcome) = send(&mut app, "woken");
            assert_eq!(outcome, Outcome::Woken);
            took
        })
        .collect();
    let (durable_p50, durable_p90) = spread(durable);
    let (wake_p50, wake_p90) = spread(wake);
    println!(
        "durable-only send:                          p50 {:>8.3} ms  p90 {:>8.3} ms",
        ms(durable_p50),
        ms(durable_p90)
    );
    println!(
        "send woken through claude-inbox:            p50 {:>8.3} ms  p90 {:>8.3} ms  (+{:.3} ms: registry and socket checks, connect, the wake line)",
        ms(wake_p50),
        ms(wake_p90),
        ms(wake_p50.saturating_sub(durable_p50))
    );

    // codex-app-server: a real daemon, when codex is installed.
    let Some(codex) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("codex"))
            .find(|c| c.is_file())
    }) else {
        println!("send offered through codex-app-server:      not measured: no `codex` on PATH");
        return;
    };
    let codex_home = temp.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).expect("codex home");
    let daemon = acc_capture::codex::StartedDaemon::start(&codex, &codex_home, &[])
        .expect("the codex daemon started");
    let control = daemon.socket();
    let mut client = acc_clients::codex_daemon::Daemon::connect(&control, Duration::from_secs(20))
        .expect("connect");
    let thread = client
        .call("thread/start", serde_json::json!({ "cwd": dir }))
        .expect("thread")["thread"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let queued = attach(&mut app.core, "queued");
    app.bind(
        &queued,
        "codex-app-server",
        "all",
        &serde_json::json!({ "codexHome": codex_home, "threadId": thread, "cwd": dir }),
    )
    .expect("bind codex-app-server");
    let queue: Vec<Duration> = (0..40)
        .map(|_| {
            let (took, outcome) = send(&mut app, "queued");
            assert_eq!(outcome, Outcome::Offered);
            took
        })
        .collect();
    let (queue_p50, queue_p90) = spread(queue);
    println!(
        "send offered through codex-app-server:      p50 {:>8.3} ms  p90 {:>8.3} ms  (+{:.3} ms: connect, upgrade, initialize, thread checks, duplicate scan, queue add)",
        ms(queue_p50),
        ms(queue_p90),
        ms(queue_p50.saturating_sub(durable_p50))
    );
    drop(client);
    drop(daemon);
}

/// What one agent of the swarm saw: per tool, each call's time and whether it failed.
#[derive(Default)]
struct AgentLog {
    calls: Vec<(&'static str, Duration, CallEnd)>,
    /// Subjects of the messages this agent sent and was told were recorded.
    sent: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CallEnd {
    Ok,
    /// A conflict the protocol reports (a claim someone else holds): an answer, not a failure.
    Refused,
    /// `timeout` (the store stayed locked past the budget): a failure.
    Timeout,
    /// Any other error: a failure.
    Failed,
}

/// A small deterministic generator (each agent its own sequence).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// One agent: its own `acc-mcp`, `calls` tool calls of the mixed load (40% sends to another
/// agent, 30% inbox reads, 25% claims and releases of one of 64 files, 5% status).
fn swarm_agent(
    data: &Path,
    dir: &Path,
    (index, agents, calls): (usize, usize, usize),
    ready: &std::sync::Barrier,
) -> AgentLog {
    let me = format!("agent-{index}");
    let mut server = start_mcp(data, dir, &me);
    initialize(&mut server);
    // Every agent is in the room (its session opened) before anyone addresses it.
    let mut id = 1_000_000;
    call(&mut server, &mut id, "acc_status", serde_json::json!({}));
    ready.wait();
    let mut rng = Lcg(index as u64 + 1);
    let mut log = AgentLog::default();
    let mut held: Option<String> = None;
    for call in 0..calls {
        let roll = rng.below(100);
        let (tool, arguments): (&'static str, serde_json::Value) = if roll < 40 {
            let to = (index + 1 + rng.below(agents as u64 - 1) as usize) % agents;
            let subject = format!("swarm {me} {call}");
            log.sent.push(subject.clone());
            (
                "acc_message",
                serde_json::json!({ "to": [format!("agent-{to}")], "subject": subject, "body": "swarm body" }),
            )
        } else if roll < 70 {
            ("acc_inbox", serde_json::json!({ "limit": 20 }))
        } else if roll < 95 {
            match held.take() {
                Some(resource) => ("acc_release", serde_json::json!({ "resource": resource })),
                None => {
                    let resource = format!("file:src/f{}.rs", rng.below(64));
                    held = Some(resource.clone());
                    (
                        "acc_claim",
                        serde_json::json!({ "action": "acquire", "resource": resource, "leaseSeconds": 600 }),
                    )
                }
            }
        } else {
            ("acc_status", serde_json::json!({}))
        };
        let id = call as u64 + 1;
        let start = Instant::now();
        let answer = server.request(
            id,
            "tools/call",
            serde_json::json!({ "name": tool, "arguments": arguments }),
        );
        let took = start.elapsed();
        let error = answer["result"]["structuredContent"]["error"]["code"]
            .as_str()
            .map(str::to_string);
        let end = match (answer["result"]["isError"] == true, error.as_deref()) {
            (false, _) => CallEnd::Ok,
            (true, Some("claim_conflict")) => {
                held = None;
                CallEnd::Refused
            }
            (true, Some("timeout" | "busy")) => CallEnd::Timeout,
            (true, _) => {
                if std::env::var_os("ACC_BENCH_VERBOSE").is_some() {
                    eprintln!("{tool}: {answer}");
                }
                CallEnd::Failed
            }
        };
        if tool == "acc_message" && end != CallEnd::Ok {
            log.sent.pop();
        }
        log.calls.push((tool, took, end));
    }
    server.finish(Duration::from_secs(30));
    log
}

/// Every message sent, once, with one receipt each, and the store's integrity, read from the
/// store file itself after the swarm: (lost, duplicated, integrity).
fn swarm_check(data: &Path, dir: &Path, sent: &[String]) -> (usize, usize, String) {
    let workspace = acc_app::workspace::discover(dir).expect("workspace");
    let store = data
        .join("acc/workspaces")
        .join(&workspace.id)
        .join("store.sqlite3");
    let conn = rusqlite::Connection::open(&store).expect("open the store");
    let mut lost = 0;
    let mut duplicated = 0;
    for subject in sent {
        let (messages, receipts): (i64, i64) = conn
            .query_row(
                "SELECT count(DISTINCT m.message_id), count(r.message_seq) FROM messages m LEFT JOIN receipts r ON r.message_seq = m.seq WHERE m.subject = ?1",
                [subject],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("count");
        match (messages, receipts) {
            (1, 1) => {}
            (0, _) => lost += 1,
            _ => duplicated += 1,
        }
    }
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    (lost, duplicated, integrity)
}

fn swarm(sizes: &[usize]) {
    println!("== swarm ==");
    const TOTAL: usize = 6400;
    let (_temp, data, _) = world();
    std::fs::create_dir_all(&data).expect("data");
    let floor = bare_sqlite_commits(&data, 500);
    println!(
        "floor: bare SQLite commit (WAL, synchronous=FULL) from 1 process: {floor:>8.0}/s ({:.2} ms a commit)",
        1000.0 / floor
    );
    for &agents in sizes {
        let (_temp, data, dir) = world();
        swarm_run(agents, TOTAL / agents, &data, &dir, |sent| {
            swarm_check(&data, &dir, sent)
        });
    }
}

/// `agents` agents making `calls` calls each in the workspace `dir` with the data home `data`;
/// prints the rate and each tool's percentiles, and what `check` finds of the messages sent.
fn swarm_run(
    agents: usize,
    calls: usize,
    data: &Path,
    dir: &Path,
    check: impl FnOnce(&[String]) -> (usize, usize, String),
) {
    {
        let ready = std::sync::Barrier::new(agents + 1);
        let mut start = Instant::now();
        let logs: Vec<AgentLog> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..agents)
                .map(|i| {
                    let ready = &ready;
                    scope.spawn(move || swarm_agent(data, dir, (i, agents, calls), ready))
                })
                .collect();
            ready.wait();
            start = Instant::now();
            handles
                .into_iter()
                .map(|h| h.join().expect("agent"))
                .collect()
        });
        let elapsed = start.elapsed();
        let all: Vec<&(&str, Duration, CallEnd)> = logs.iter().flat_map(|l| &l.calls).collect();
        let sent: Vec<String> = logs.iter().flat_map(|l| l.sent.clone()).collect();
        let (lost, duplicated, integrity) = check(&sent);
        let count = |end: CallEnd| all.iter().filter(|c| c.2 == end).count();
        let writes = all
            .iter()
            .filter(|c| ["acc_message", "acc_claim", "acc_release"].contains(&c.0))
            .count();
        println!(
            "{agents:>3} agents, {} calls in {:.2} s: {:>6.0} calls/s, {:>6.0} writes/s; timeouts {}, other failures {}, claim conflicts {}; lost {lost}, duplicated {duplicated}, integrity {integrity}",
            all.len(),
            elapsed.as_secs_f64(),
            all.len() as f64 / elapsed.as_secs_f64(),
            writes as f64 / elapsed.as_secs_f64(),
            count(CallEnd::Timeout),
            count(CallEnd::Failed),
            count(CallEnd::Refused),
        );
        for (label, tools) in [
            ("reads ", &["acc_inbox", "acc_status"][..]),
            ("writes", &["acc_message", "acc_claim", "acc_release"][..]),
            ("acc_message", &["acc_message"][..]),
            ("acc_inbox", &["acc_inbox"][..]),
            ("acc_claim", &["acc_claim"][..]),
            ("acc_release", &["acc_release"][..]),
            ("acc_status", &["acc_status"][..]),
        ] {
            let mut samples: Vec<Duration> = all
                .iter()
                .filter(|c| tools.contains(&c.0))
                .map(|c| c.1)
                .collect();
            if samples.is_empty() {
                continue;
            }
            let p50 = percentile(&mut samples, 0.50);
            let p99 = percentile(&mut samples, 0.99);
            let max = samples.iter().max().copied().unwrap_or_default();
            println!(
                "      {label:<12} n {:>5}  p50 {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms",
                samples.len(),
                ms(p50),
                ms(p99),
                ms(max)
            );
        }
    }
}

/// `acc-bench room-rtt`: a room on a PostgreSQL server with TLS (a CA and a server certificate
/// the benchmark makes; logins by SCRAM), reached through a delaying proxy at each round-trip
/// time `rtts` (milliseconds). For each: `psql` connecting with the same TLS settings and
/// running `SELECT 1` (the floor), then the prompt hook with nothing to deliver, the write
/// guard's check, a send and an inbox page, each a whole process, with the round trips the
/// proxy saw (the connection's own included) and the store's own; then 8 agents' `acc-mcp`s
/// at 10 and 50 ms.
fn room_rtt(rtts: &[u64]) {
    use acc_tests::certs::{Ca, Validity};
    let pki = tempfile::tempdir().expect("pki");
    let ca = Ca::new(pki.path(), "bench-ca");
    let server = ca.issue(
        pki.path(),
        "server",
        "localhost",
        &["localhost", "127.0.0.1"],
        Validity::Current,
    );
    let cluster = acc_tests::pg::Cluster::start_with(acc_tests::pg::Options {
        tls: Some(acc_tests::pg::ServerTls {
            cert: server,
            client_ca: None,
        }),
        hba: vec!["hostssl all all 127.0.0.1/32 scram-sha-256".into()],
        ..Default::default()
    });
    let db = cluster.database("rtt");
    let pgpass = pki.path().join("pgpass");
    std::fs::write(
        &pgpass,
        format!("*:*:{}:{}:{}\n", db.name, db.role, db.password),
    )
    .expect("pgpass");
    std::fs::set_permissions(&pgpass, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("mode");
    BENCH_ENV
        .set(vec![(
            "PGPASSFILE".to_string(),
            pgpass.display().to_string(),
        )])
        .expect("set once");
    let target: std::net::SocketAddr = ([127, 0, 0, 1], cluster.port()).into();
    println!(
        "acc-bench room-rtt: PostgreSQL {} with TLS (verify-full, SCRAM), through a delaying proxy",
        cluster.major()
    );
    println!(
        "  | RTT | psql connect + SELECT 1 | hook, nothing to deliver | write guard check | send | inbox page |"
    );
    const RUNS: usize = 11;
    for &rtt in rtts {
        let proxy = acc_tests::delay::DelayProxy::start(target, Duration::from_millis(rtt));
        let url = format!(
            "postgres://{}@127.0.0.1:{}/{}?sslmode=verify-full&sslrootcert={}",
            db.role,
            proxy.port,
            db.name,
            ca.cert.display()
        );
        let mut psql = Command::new("psql");
        psql.arg(&url)
            .args(["-X", "-q", "-c", "SELECT 1"])
            .env("PGPASSFILE", &pgpass);
        let floor = time_process(&mut psql, RUNS);
        let (floor_trips, _) = proxy.take_counts();
        let (_temp, data, dir) = world();
        acc_store::connect_default_room(&data.join("acc"), &url).expect("the room");
        let figures = rtt_figures(&data, &dir, &proxy, RUNS);
        let cell = |(figure, trips): &(RoomFigure, u64)| {
            format!(
                "{:.1} ms ({:.2}x; {trips} trips, {} of them the store's)",
                ms(figure.time),
                figure.time.as_secs_f64() / floor.as_secs_f64(),
                figure
                    .trips
                    .map_or_else(|| "?".to_string(), |t| t.to_string())
            )
        };
        println!(
            "  | {rtt} ms | {:.1} ms ({} trips) | {} | {} | {} | {} |",
            ms(floor),
            floor_trips / RUNS as u64,
            cell(&figures[0]),
            cell(&figures[1]),
            cell(&figures[2]),
            cell(&figures[3]),
        );
    }
    for rtt in [10, 50] {
        room_rtt_swarm(&cluster, &db, &ca.cert, target, rtt);
    }
}

/// 8 agents' `acc-mcp`s on a room through a delaying proxy at `rtt` milliseconds.
fn room_rtt_swarm(
    cluster: &acc_tests::pg::Cluster,
    db: &acc_tests::pg::Database,
    ca: &Path,
    target: std::net::SocketAddr,
    rtt: u64,
) {
    let proxy = acc_tests::delay::DelayProxy::start(target, Duration::from_millis(rtt));
    let url = format!(
        "postgres://{}@127.0.0.1:{}/{}?sslmode=verify-full&sslrootcert={}",
        db.role,
        proxy.port,
        db.name,
        ca.display()
    );
    let (_temp, data, dir) = world();
    std::fs::write(
        dir.join("acc.workspace.json"),
        format!(r#"{{"schemaVersion":1,"workspaceId":"swarm-rtt-{rtt}"}}"#),
    )
    .expect("config");
    acc_store::connect_default_room(&data.join("acc"), &url).expect("the room");
    print!("  swarm at {rtt} ms RTT: ");
    let workspace = format!("swarm-rtt-{rtt}");
    swarm_run(8, 60, &data, &dir, |sent| {
        room_swarm_check(cluster, db, &workspace, sent)
    });
}

/// The prompt hook, the write guard's check, a send and an inbox page through `proxy`: each
/// one's figure and the round trips the proxy saw per run.
fn rtt_figures(
    data: &Path,
    dir: &Path,
    proxy: &acc_tests::delay::DelayProxy,
    runs: usize,
) -> [(RoomFigure, u64); 4] {
    let figures = room_ops(
        data,
        dir,
        runs,
        true,
        || {
            proxy.take_counts();
        },
        |figure| (figure, proxy.take_counts().0 / runs as u64),
    );
    figures
        .try_into()
        .unwrap_or_else(|_| unreachable!("four operations"))
}

/// [`swarm_check`] on a room: every message sent, once, with one receipt each, read from the
/// room's database.
fn room_swarm_check(
    cluster: &acc_tests::pg::Cluster,
    db: &acc_tests::pg::Database,
    workspace: &str,
    sent: &[String],
) -> (usize, usize, String) {
    let mut conn = postgres::Config::new()
        .host_path(cluster.socket_dir())
        .port(cluster.port())
        .user(acc_tests::pg::ADMIN)
        .dbname(&db.name)
        .connect(postgres::NoTls)
        .expect("the room's database");
    // The swarm's own workspace (the database holds the other runs' rooms too).
    let every: Vec<String> = conn
        .query(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'acc\\_%'",
            &[],
        )
        .expect("schemas")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let schemas: Vec<String> = every
        .into_iter()
        .filter(|schema| {
            conn.query_one(
                &format!("SELECT value FROM {schema}.acc_meta WHERE key = 'workspace_id'"),
                &[],
            )
            .is_ok_and(|r| r.get::<_, String>(0) == workspace)
        })
        .collect();
    let mut lost = 0;
    let mut duplicated = 0;
    for subject in sent {
        let mut messages = 0i64;
        let mut receipts = 0i64;
        for schema in &schemas {
            let row = conn
                .query_one(
                    &format!("SELECT count(DISTINCT m.message_id), count(r.message_seq) FROM {schema}.messages m LEFT JOIN {schema}.receipts r ON r.message_seq = m.seq WHERE m.subject = $1"),
                    &[subject],
                )
                .expect("count");
            messages += row.get::<_, i64>(0);
            receipts += row.get::<_, i64>(1);
        }
        match (messages, receipts) {
            (1, 1) => {}
            (0, _) => lost += 1,
            _ => duplicated += 1,
        }
    }
    (lost, duplicated, "(PostgreSQL)".to_string())
}

/// One operation of `acc-bench room`: its median whole-process time and, on a room, its round
/// trips to the server (the median of the runs').
struct RoomFigure {
    time: Duration,
    trips: Option<u64>,
}

/// Run `acc ARGS` (or `acc hook claude-code UserPromptSubmit` when `hook` holds its payload)
/// `runs` times in `dir` with the data home `data`; the median time and round trips.
fn time_room_op(
    data: &Path,
    dir: &Path,
    args: &[&str],
    hook: Option<&str>,
    runs: usize,
) -> RoomFigure {
    use std::io::Write;
    let trips_file = data.with_extension(format!("trips-{}", args.join("-")));
    let _ = std::fs::remove_file(&trips_file);
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut command = bench_command("acc");
        command
            .args(args)
            .env("ACC_DATA_HOME", data)
            .env("ACC_TEST_ROUND_TRIPS", &trips_file)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if hook.is_some() {
            command.env("ACC_PARTICIPANT", "reader");
        }
        let start = Instant::now();
        let mut child = command.spawn().expect("spawn acc");
        let mut stdin = child.stdin.take().expect("stdin");
        if let Some(payload) = hook {
            stdin.write_all(payload.as_bytes()).expect("payload");
        }
        drop(stdin);
        let status = child.wait().expect("wait");
        samples.push(start.elapsed());
        assert!(status.success(), "acc {args:?} failed");
    }
    let mut trips: Vec<u64> = std::fs::read_to_string(&trips_file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    trips.sort_unstable();
    RoomFigure {
        time: median(samples),
        trips: trips.get(trips.len() / 2).copied(),
    }
}

/// `acc-bench room`: the hook with nothing to deliver, a send and an inbox page on SQLite and on
/// a room on a PostgreSQL server the benchmark starts (over its Unix socket), each a whole
/// process; for the room, its round trips, beside `SELECT 1` timed in the same run.
fn room() {
    let cluster = acc_tests::pg::Cluster::start();
    let db = cluster.database("bench");
    let url = db.socket_url();
    let mut client: postgres::Client = url
        .parse::<postgres::Config>()
        .expect("url")
        .connect(postgres::NoTls)
        .expect("connect");
    let select_one = time_in_process(201, || client.simple_query("SELECT 1").expect("select"));
    let version = time_process(Command::new(bin("acc")).arg("--version"), 21);
    println!(
        "acc-bench room: PostgreSQL {} over its Unix socket",
        cluster.major()
    );
    println!(
        "  floors: SELECT 1 round trip {:.3} ms; acc --version {:.2} ms",
        ms(select_one),
        ms(version)
    );
    println!("  | operation | SQLite | room | round trips (goal) |");
    let mut rows: Vec<(&str, u64, Vec<RoomFigure>)> = vec![
        ("hook, nothing to deliver", 2, Vec::new()),
        ("send (--json)", 2, Vec::new()),
        ("inbox page (--json)", 2, Vec::new()),
    ];
    for room in [None, Some(url.as_str())] {
        let [hook, send, inbox] = room_figures(room);
        rows[0].2.push(hook);
        rows[1].2.push(send);
        rows[2].2.push(inbox);
    }
    for (name, goal, figures) in &rows {
        println!(
            "  | {name} | {:.2} ms | {:.2} ms | {} (at most {goal}) |",
            ms(figures[0].time),
            ms(figures[1].time),
            figures[1]
                .trips
                .map_or_else(|| "unknown".to_string(), |t| t.to_string())
        );
    }
}

/// The hook with nothing to deliver, a send and an inbox page, in a fresh world on SQLite or,
/// given its URL, on a room.
fn room_figures(room: Option<&str>) -> [RoomFigure; 3] {
    let (_temp, data, dir) = world();
    if let Some(url) = room {
        acc_store::connect_default_room(&data.join("acc"), url).expect("room");
    }
    let figures = room_ops(&data, &dir, 21, false, || {}, |figure| figure);
    figures
        .try_into()
        .unwrap_or_else(|_| unreachable!("three operations"))
}

/// In a workspace with a hooked session and two attached participants: the prompt hook with
/// nothing to deliver, with `guard` the write guard's check of a file nobody claims, a send
/// and an inbox page, each timed over `runs` ([`time_room_op`]) and handed to `take`;
/// `start` runs just before the first.
fn room_ops<T>(
    data: &Path,
    dir: &Path,
    runs: usize,
    guard: bool,
    start: impl FnOnce(),
    mut take: impl FnMut(RoomFigure) -> T,
) -> Vec<T> {
    let opened = serde_json::json!({ "session_id": "bench", "cwd": dir, "hook_event_name": "SessionStart", "source": "startup" }).to_string();
    time_room_op(
        data,
        dir,
        &["hook", "claude-code", "SessionStart"],
        Some(&opened),
        1,
    );
    let attach = |participant: &str| {
        let attached = bench_command("acc")
            .args(["--json", "attach", "--participant", participant])
            .env("ACC_DATA_HOME", data)
            .current_dir(dir)
            .output()
            .expect("attach");
        let creds: serde_json::Value = serde_json::from_slice(&attached.stdout).expect("creds");
        (
            creds["sessionId"].as_str().expect("session").to_string(),
            creds["generation"]
                .as_str()
                .expect("generation")
                .to_string(),
        )
    };
    let (session, generation) = attach("sender");
    let (carol, carol_generation) = attach("carol");
    start();
    let mut out = Vec::new();
    let payload = prompt_payload(dir, "bench");
    out.push(take(time_room_op(
        data,
        dir,
        &["hook", "claude-code", "UserPromptSubmit"],
        Some(&payload),
        runs,
    )));
    if guard {
        let write = serde_json::json!({ "session_id": "bench", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": { "file_path": dir.join("free.rs"), "content": "x" } }).to_string();
        out.push(take(time_room_op(
            data,
            dir,
            &["hook", "claude-code", "PreToolUse"],
            Some(&write),
            runs,
        )));
    }
    let sender = ["--json", "--session", &session, "--generation", &generation];
    let send = [
        &sender[..],
        &["message", "--to", "carol", "--subject", "s", "--body", "b"],
    ]
    .concat();
    out.push(take(time_room_op(data, dir, &send, None, runs)));
    let reader = [
        "--json",
        "--session",
        &carol,
        "--generation",
        &carol_generation,
    ];
    let inbox = [&reader[..], &["inbox", "--limit", "20"]].concat();
    out.push(take(time_room_op(data, dir, &inbox, None, runs)));
    out
}

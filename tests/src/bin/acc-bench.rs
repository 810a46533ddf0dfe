//! `acc-bench`: ACC's benchmarks. Each prints figures and ratios to a floor measured in the
//! same run; none asserts a time. Run `cargo run --release -p acc-tests --bin acc-bench -- all`.
//!
//! Suites:
//! - `foundation`: `acc status` on a store of 10,000 claims and events; claim acquire/release
//!   commits per second from 1 and 4 processes; floors: `acc --version` start, bare SQLite commit.

// A benchmark reports on stdout; that is its whole purpose.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acc_host::clock::SystemClock;
use acc_host::core::claims::{AcquireRequest, ClaimMode, Enforcement, ReleaseSelector};
use acc_host::core::{Caller, Core, SessionSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("foundation") | Some("all") | None => {
            foundation();
            0
        }
        Some("claim-worker") => claim_worker(&args[1..]),
        Some(other) => {
            eprintln!("acc-bench: unknown suite `{other}` (suites: foundation, all)");
            2
        }
    };
    std::process::exit(code);
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
    let workspace = acc_host::workspace::discover(dir).expect("workspace");
    Core::new(
        workspace,
        data.join("acc"),
        Arc::new(SystemClock::default()),
    )
    .expect("core")
}

fn attach(core: &mut Core, participant: &str) -> Caller {
    let opened = core
        .open_session(
            &SessionSpec {
                participant_id: participant.into(),
                session_key: None,
                harness: "cli".into(),
                client_version: None,
                checkout: None,
                branch: None,
                pid: None,
                enforcement: "advisory".into(),
                lifecycle: "manual".into(),
            },
            None,
        )
        .expect("attach");
    Caller {
        session_id: opened.session.session_id,
        generation: opened.generation_token,
    }
}

fn request(resources: Vec<String>) -> AcquireRequest {
    AcquireRequest {
        resources,
        mode: ClaimMode::Exclusive,
        enforcement: Enforcement::Advisory,
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
    let bench = bin("acc-bench");
    let start = Instant::now();
    let children: Vec<_> = (0..processes)
        .map(|p| {
            Command::new(&bench)
                .args([
                    "claim-worker",
                    data.to_str().expect("utf8"),
                    dir.to_str().expect("utf8"),
                    &format!("w{p}"),
                    &pairs.to_string(),
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
    (processes * pairs * 2) as f64 / start.elapsed().as_secs_f64()
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

//! `acc-bench follow-rtt`: how soon a follower on one host sees a commit made on another, and
//! what an idle follower asks the room (issue 57). A room on PostgreSQL is reached through the
//! tests' delaying proxy at each round-trip time; the sender (host A) runs in this process, the
//! follower (`acc --json sync --follow`, host B) is the real binary. Each figure is printed
//! beside its floor, the RTT itself.

use std::io::BufRead;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use super::{bench_command, percentile, world};

/// Sends timed per RTT.
const SENDS: usize = 40;
/// How long an idle follower is watched.
const IDLE: Duration = Duration::from_secs(60);

/// Run it at each of `rtts` (milliseconds).
pub(super) fn follow_rtt(rtts: &[u64]) {
    // Each commit's time, on the server's clock (this machine's): where a latency starts.
    let mut cluster = acc_tests::pg::Cluster::start();
    cluster
        .admin()
        .expect("admin")
        .batch_execute("ALTER SYSTEM SET track_commit_timestamp = on")
        .expect("track commit times");
    cluster.stop();
    cluster.restart();
    let target: std::net::SocketAddr = ([127, 0, 0, 1], cluster.port()).into();
    let databases: Vec<_> = rtts
        .iter()
        .map(|rtt| cluster.database(&format!("follow {rtt}")))
        .collect();
    let pgpass = tempfile::NamedTempFile::new().expect("pgpass");
    let lines: String = databases
        .iter()
        .map(|db| format!("*:*:{}:{}:{}\n", db.name, db.role, db.password))
        .collect();
    std::fs::write(pgpass.path(), lines).expect("pgpass");
    std::fs::set_permissions(
        pgpass.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("mode");
    let _ = super::BENCH_ENV.set(vec![(
        "PGPASSFILE".to_string(),
        pgpass.path().display().to_string(),
    )]);
    println!(
        "acc-bench follow-rtt: PostgreSQL {}, sender and follower through a delaying proxy each",
        cluster.major()
    );
    println!(
        "  | RTT | commit on A to the follower's line on B, p50 / p99 | the send itself (a process), p50 | floor: 1 RTT | round trips of an idle follower in {} s |",
        IDLE.as_secs()
    );
    for (&rtt, db) in rtts.iter().zip(&databases) {
        let proxy = acc_tests::delay::DelayProxy::start(target, Duration::from_millis(rtt));
        let url = format!(
            "postgres://{}@127.0.0.1:{}/{}",
            db.role, proxy.port, db.name
        );
        let (_temp, data, dir) = world();
        std::fs::write(
            dir.join("acc.workspace.json"),
            format!(r#"{{"schemaVersion":1,"workspaceId":"follow-rtt-{rtt}"}}"#),
        )
        .expect("config");
        acc_store::connect_default_room(&data.join("acc"), &url).expect("the room");
        let (p50, p99, sends, idle) = run(&data, &dir, &proxy, db);
        println!(
            "  | {rtt} ms | {:.1} / {:.1} ms | {:.1} ms | {rtt} ms | {idle} |",
            super::ms(p50),
            super::ms(p99),
            super::ms(sends)
        );
    }
}

/// `acc --json ARGS` in `dir` on the data home `data`, with the session `creds`: its JSON.
fn acc(
    data: &Path,
    dir: &Path,
    creds: Option<&(String, String)>,
    args: &[&str],
) -> serde_json::Value {
    let mut command = bench_command("acc");
    command
        .arg("--json")
        .args(args)
        .env("ACC_DATA_HOME", data)
        .current_dir(dir);
    if let Some((session, generation)) = creds {
        command
            .env("ACC_SESSION", session)
            .env("ACC_GENERATION", generation);
    }
    let out = command.output().expect("acc");
    assert!(out.status.success(), "acc {args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).expect("json")
}

/// The follower's latencies (p50, p99), the sends' own (p50) and its idle round trips.
fn run(
    data: &Path,
    dir: &Path,
    proxy: &acc_tests::delay::DelayProxy,
    db: &acc_tests::pg::Database,
) -> (Duration, Duration, Duration, u64) {
    let attached = acc(data, dir, None, &["attach", "--participant", "alice"]);
    let alice = (
        attached["sessionId"].as_str().expect("session").to_string(),
        attached["generation"]
            .as_str()
            .expect("generation")
            .to_string(),
    );
    acc(data, dir, None, &["attach", "--participant", "bob"]);
    let mut follower = bench_command("acc");
    follower
        .args(["--json", "sync", "--follow"])
        .env("ACC_DATA_HOME", data)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = acc_tests::Guarded(follower.spawn().expect("the follower"));
    let stdout = child.0.stdout.take().expect("its stdout");
    let (lines, seen) = mpsc::channel::<(SystemTime, String)>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send((SystemTime::now(), line)).is_err() {
                break;
            }
        }
    });
    let send = |subject: String| {
        let started = Instant::now();
        let sent = acc(
            data,
            dir,
            Some(&alice),
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                &subject,
                "--body",
                "follow benchmark",
            ],
        );
        let id = sent["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string();
        (started.elapsed(), id)
    };
    let arrival = |id: &str| -> SystemTime {
        loop {
            let (at, line) = seen
                .recv_timeout(Duration::from_secs(30))
                .expect("the follower printed the send within 30 s");
            if line.contains(id) {
                return at;
            }
        }
    };
    // Warm: the follower reads and listens before the first timed send.
    loop {
        let (_, id) = send("warm-up".into());
        if seen
            .recv_timeout(Duration::from_secs(2))
            .is_ok_and(|(_, line)| line.contains(&id))
        {
            break;
        }
    }
    let mut admin = db
        .config()
        .connect(postgres::NoTls)
        .expect("the room's database");
    let schema = acc_tests::pg::room_schema(&mut admin);
    let mut samples = Vec::with_capacity(SENDS);
    let mut sends = Vec::with_capacity(SENDS);
    for i in 0..SENDS {
        let (took, id) = send(format!("timed {i}"));
        let arrived = arrival(&id);
        let committed = commit_time(&mut admin, &schema, &id);
        samples.push(arrived.duration_since(committed).unwrap_or_default());
        sends.push(took);
        std::thread::sleep(Duration::from_millis(20));
    }
    // Idle: what the follower asks in a minute (its own connections through the proxy only:
    // the sender is idle too).
    std::thread::sleep(Duration::from_millis(500));
    proxy.take_counts();
    std::thread::sleep(IDLE);
    let (idle, _) = proxy.take_counts();
    (
        percentile(&mut samples, 0.50),
        percentile(&mut samples, 0.99),
        percentile(&mut sends, 0.50),
        idle,
    )
}

/// When the transaction that recorded the message `id` committed (the server's clock, which is
/// this machine's).
fn commit_time(admin: &mut postgres::Client, schema: &str, id: &str) -> SystemTime {
    let micros: i64 = admin
        .query_one(
            &format!(
                "SELECT (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000000)::bigint FROM {schema}.messages WHERE message_id = $1"
            ),
            &[&id],
        )
        .expect("the message's commit time")
        .get(0);
    SystemTime::UNIX_EPOCH + Duration::from_micros(micros.unsigned_abs())
}

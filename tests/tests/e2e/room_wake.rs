//! Followers woken by their store (issue 57): `acc sync --follow` on a room sleeps until the
//! room's notification and asks the server nothing while the room is idle; on the SQLite file it
//! sleeps until the file is written. Counted where the traffic is: the round trips through a
//! proxy of the test's own in front of a real PostgreSQL server, and the read calls the follower
//! process makes (`/proc/PID/io`).

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use acc_tests::delay::DelayProxy;
use acc_tests::pg::{Cluster, Database};
use acc_tests::{Creds, JsonRpcChild, World};

/// The committed identity both checkouts share.
const CONFIG: &str = r#"{"schemaVersion":1,"workspaceId":"woken-room"}"#;

/// A checkout whose data home reaches `db` through `port` (a proxy), its password file in
/// force, connected to the room.
fn machine_through(db: &Database, port: u16) -> World {
    let world = World::new();
    std::fs::write(world.dir.join("acc.workspace.json"), CONFIG).expect("config");
    let file = world.temp.path().join("pgpass");
    std::fs::write(
        &file,
        format!("*:*:{}:{}:{}\n", db.name, db.role, db.password),
    )
    .expect("pgpass");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("mode");
    world.set_env("PGPASSFILE", file);
    let url = format!("postgres://{}@127.0.0.1:{port}/{}", db.role, db.name);
    world.acc(&["room", "connect", &url]).ok_json();
    world
}

/// Wait (bounded) until `counts` reads nothing new for a whole `quiet` window.
fn until_quiet(what: &str, quiet: Duration, counts: impl Fn() -> u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let before = counts();
        std::thread::sleep(quiet);
        if counts() == before {
            return;
        }
        assert!(Instant::now() < deadline, "{what} never went quiet");
    }
}

/// How many read calls the process `pid` made so far (`/proc/PID/io`'s `syscr`).
fn read_calls(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).expect("the follower's io");
    io.lines()
        .find_map(|line| line.strip_prefix("syscr: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("syscr")
}

/// Five sends from `alice` to Bob, each waited for (bounded) on `follower`'s stream before the
/// next: each wakes it.
fn each_send_wakes(world: &World, alice: &Creds, follower: &mut JsonRpcChild) {
    for i in 0..5 {
        let told = world.tell(alice, "bob", &format!("wake-{i}"), "are you there?");
        let id = told["message"]["messageId"]
            .as_str()
            .expect("an id")
            .to_string();
        follower.wait_for(
            |event| {
                event["type"] == "message.recorded" && event["data"]["messageId"] == id.as_str()
            },
            Duration::from_secs(10),
        );
    }
}

#[test]
fn an_idle_follower_of_a_room_asks_the_server_nothing_and_is_woken_by_each_write() {
    let cluster = Cluster::start();
    let db = cluster.database("woken");
    let proxy = DelayProxy::start(
        format!("127.0.0.1:{}", db.port).parse().expect("address"),
        Duration::ZERO,
    );
    let world = machine_through(&db, proxy.port);
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let mut follower = world.follower(&bob);
    // The follower has read, and its wake listens (its one round trip: LISTEN and the probe).
    until_quiet("the follower", Duration::from_millis(700), || {
        proxy.take_counts().0
    });
    // Idle: the old follower read the room four times a second; this one asks nothing.
    std::thread::sleep(Duration::from_secs(3));
    let (trips, connections) = proxy.take_counts();
    assert_eq!(
        (trips, connections),
        (0, 0),
        "an idle follower asked the room"
    );
    // Each write wakes it.
    each_send_wakes(&world, &alice, &mut follower);
    // The doctor says how the room wakes its followers.
    let doctor = world.acc(&["doctor"]).ok_json();
    let wake = doctor["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "room wake")
        .unwrap_or_else(|| panic!("no room wake check: {doctor}"));
    assert_eq!(wake["status"], "ok", "{wake}");
}

#[test]
fn an_idle_follower_of_the_sqlite_store_reads_nothing_and_is_woken_by_each_write() {
    let world = checkout(None);
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let mut follower = world.follower(&bob);
    let pid = follower.child.0.id();
    until_quiet("the follower", Duration::from_millis(700), || {
        read_calls(pid)
    });
    let before = read_calls(pid);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        read_calls(pid),
        before,
        "an idle follower of the SQLite store read"
    );
    each_send_wakes(&world, &alice, &mut follower);
}

/// A checkout on the SQLite store, or on a room of `cluster`.
fn checkout(cluster: Option<&Cluster>) -> World {
    match cluster {
        None => {
            let world = World::new();
            world.acc(&["config", "init", "--yes"]).ok_json();
            world
        }
        Some(cluster) => {
            let db = cluster.database("waits");
            machine_through(&db, db.port)
        }
    }
}

/// The subjects of an inbox page.
fn page_subjects(page: &serde_json::Value) -> Vec<String> {
    page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["subject"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn an_inbox_wait_answers_when_a_message_comes_and_empty_at_its_deadline_on_each_store_and_surface()
{
    let cluster = Cluster::start();
    for (store, on) in [("SQLite", None), ("a room", Some(&cluster))] {
        let world = checkout(on);
        let alice = world.attach("alice");
        let bob = world.attach("bob");

        // Bad waits are refused, naming what was wrong, before anything is read.
        for (args, names) in [
            (vec!["inbox", "--wait", "0"], "--wait"),
            (vec!["inbox", "--wait", "3601"], "--wait"),
            (
                vec![
                    "inbox",
                    "--wait",
                    "5",
                    "--message",
                    "message_AAAAAAAAAAAAAAAAAAAAAA",
                ],
                "--wait",
            ),
        ] {
            let refused = world.acc_as(&bob, &args).err(2, "invalid_arguments");
            assert!(refused.to_string().contains(names), "{store}: {refused}");
        }

        // CLI: nothing comes, so the wait ends empty at its deadline.
        let started = Instant::now();
        let empty = world.acc_as(&bob, &["inbox", "--wait", "1"]).ok_json();
        assert!(page_subjects(&empty).is_empty(), "{store}: {empty}");
        assert!(started.elapsed() >= Duration::from_secs(1), "{store}");
        // A message sent while it waits ends it with that message.
        let mut waiting = world.command("acc");
        waiting
            .args(["--json", "inbox", "--wait", "60"])
            .env("ACC_SESSION", &bob.session)
            .env("ACC_GENERATION", &bob.generation)
            .stdout(std::process::Stdio::piped());
        let mut waiting = acc_tests::Guarded(waiting.spawn().expect("acc inbox --wait"));
        world.tell(&alice, "bob", "cli-wait", "for the waiting CLI");
        let mut stdout = Vec::new();
        std::io::Read::read_to_end(waiting.0.stdout.as_mut().expect("its stdout"), &mut stdout)
            .expect("the wait's answer");
        assert!(waiting.0.wait().expect("its exit").success(), "{store}");
        let page: serde_json::Value = serde_json::from_slice(&stdout).expect("json");
        assert_eq!(page_subjects(&page), ["cli-wait"], "{store}");
        world
            .acc_as(
                &bob,
                &[
                    "ack",
                    "--message",
                    page["items"][0]["messageId"].as_str().expect("id"),
                ],
            )
            .ok_json();

        // MCP: waitMs out of bounds is refused naming it; an empty wait ends at its deadline;
        // a message ends a wait.
        let mut server = world.mcp("bob");
        for (id, arguments) in [
            (2, serde_json::json!({"waitMs": 0})),
            (3, serde_json::json!({"waitMs": 50_001})),
            (
                6,
                serde_json::json!({"waitMs": 1000, "messageId": "message_AAAAAAAAAAAAAAAAAAAAAA"}),
            ),
        ] {
            let refused = server.request(
                id,
                "tools/call",
                serde_json::json!({"name": "acc_inbox", "arguments": arguments}),
            );
            assert_eq!(refused["result"]["isError"], true, "{store}: {refused}");
            assert!(refused.to_string().contains("waitMs"), "{store}: {refused}");
        }
        let started = Instant::now();
        let empty = server.request(
            4,
            "tools/call",
            serde_json::json!({"name": "acc_inbox", "arguments": {"waitMs": 800}}),
        );
        assert_ne!(empty["result"]["isError"], true, "{store}: {empty}");
        assert!(
            page_subjects(&empty["result"]["structuredContent"]).is_empty(),
            "{store}: {empty}"
        );
        assert!(started.elapsed() >= Duration::from_millis(800), "{store}");
        server.send_line(
            &serde_json::json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "acc_inbox", "arguments": {"waitMs": 50_000}}})
            .to_string(),
        );
        world.tell(&alice, "bob", "mcp-wait", "for the waiting model");
        let answer = server.wait_for(|v| v["id"] == 5, Duration::from_secs(40));
        assert_eq!(
            page_subjects(&answer["result"]["structuredContent"]),
            ["mcp-wait"],
            "{store}: {answer}"
        );
        assert!(server.finish(Duration::from_secs(20)).success(), "{store}");
    }
}

//! Real OS processes racing each other through the real binary.

use std::collections::BTreeSet;

use acc_tests::World;

#[test]
fn four_processes_race_for_one_exclusive_resource() {
    let world = World::new();
    let racers: Vec<_> = (0..4).map(|i| world.attach(&format!("agent{i}"))).collect();
    let commands = racers
        .iter()
        .map(|who| {
            let mut command = world.command("acc");
            command
                .args(["--json", "claim", "--resource", "file:src/contended.rs"])
                .env("ACC_SESSION", &who.session)
                .env("ACC_GENERATION", &who.generation);
            command
        })
        .collect();
    let runs = acc_tests::race(&world, commands);
    let winners: Vec<_> = runs.iter().filter(|r| r.code == 0).collect();
    let losers: Vec<_> = runs.iter().filter(|r| r.code == 5).collect();
    assert_eq!(winners.len(), 1, "{runs:#?}");
    assert_eq!(losers.len(), 3, "{runs:#?}");
    for loser in losers {
        loser.err(5, "claim_conflict");
    }
    let status = world.status();
    let claims = status["claims"].as_array().expect("claims");
    assert_eq!(claims.len(), 1, "{status}");
    assert_eq!(
        claims[0]["claimId"],
        winners[0].json()["claims"][0]["claimId"]
    );
}

#[test]
fn event_cursors_stay_gap_free_under_concurrent_writers() {
    let world = World::new();
    let writers: Vec<_> = (0..4)
        .map(|i| world.attach(&format!("writer{i}")))
        .collect();
    let commands = writers
        .iter()
        .enumerate()
        .map(|(i, who)| {
            let mut command = world.command_path("sh");
            let acc = acc_tests::bin("acc");
            command.arg("-c").arg(format!(
                "for n in 1 2 3 4 5 6 7 8 9 10; do \"$0\" claim --resource file:w{i}/$n || exit 1; \"$0\" release --all || exit 1; done"
            ));
            command.arg(acc).env("ACC_SESSION", &who.session).env("ACC_GENERATION", &who.generation);
            command
        })
        .collect();
    let runs = acc_tests::race(&world, commands);
    for run in &runs {
        assert_eq!(run.code, 0, "{run:#?}");
    }
    let mut cursor = "0000000000000000".to_string();
    let mut seqs = Vec::new();
    loop {
        let page = world
            .acc(&["sync", "--cursor", &cursor, "--limit", "500"])
            .ok_json();
        for event in page["events"].as_array().expect("events") {
            seqs.push(
                event["cursor"]
                    .as_str()
                    .expect("cursor")
                    .parse::<u64>()
                    .expect("digits"),
            );
        }
        cursor = page["nextCursor"].as_str().expect("next").to_string();
        if page["hasMore"] != true {
            break;
        }
    }
    // 4 participants + 4 sessions + 4 writers x 10 x (claim + release).
    assert_eq!(seqs.len(), 8 + 80);
    let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
    assert_eq!(seqs, expected, "strictly increasing without gaps");
    let unique: BTreeSet<_> = seqs.iter().collect();
    assert_eq!(unique.len(), seqs.len());
}

#[test]
fn two_processes_sending_with_one_key_record_one_message() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let commands = (0..2)
        .map(|_| {
            let mut command = world.command("acc");
            command
                .args([
                    "--json",
                    "message",
                    "--to",
                    "bob",
                    "--subject",
                    "s",
                    "--body",
                    "b",
                    "--client-message-id",
                    "same-key",
                ])
                .env("ACC_SESSION", &alice.session)
                .env("ACC_GENERATION", &alice.generation);
            command
        })
        .collect();
    let runs = acc_tests::race(&world, commands);
    let ids: BTreeSet<String> = runs
        .iter()
        .map(|r| {
            r.ok_json()["message"]["messageId"]
                .as_str()
                .expect("id")
                .to_string()
        })
        .collect();
    assert_eq!(ids.len(), 1, "{runs:#?}");
    let history = world.acc(&["sync", "--scope", "history"]).ok_json();
    assert_eq!(history["items"].as_array().map(Vec::len), Some(1));
}

#[test]
fn many_processes_sending_at_once_lose_nothing() {
    let world = World::new();
    let senders: Vec<_> = (0..4)
        .map(|i| world.attach(&format!("sender{i}")))
        .collect();
    world.attach("sink");
    let acc = acc_tests::bin("acc");
    let commands = senders
        .iter()
        .map(|who| {
            let mut command = world.command_path("sh");
            command
                .arg("-c")
                .arg("for n in 1 2 3 4 5 6 7 8 9 10; do \"$0\" message --to sink --subject s$n --body b || exit 1; done")
                .arg(&acc)
                .env("ACC_SESSION", &who.session)
                .env("ACC_GENERATION", &who.generation);
            command
        })
        .collect();
    for run in acc_tests::race(&world, commands) {
        assert_eq!(run.code, 0, "{run:#?}");
    }
    let mut seen = BTreeSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["sync", "--scope", "history", "--limit", "500"];
        if let Some(c) = &cursor {
            args.extend_from_slice(&["--cursor", c]);
        }
        let page = world.acc(&args).ok_json();
        for item in page["items"].as_array().expect("items") {
            seen.insert(item["messageId"].as_str().expect("id").to_string());
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 40);
    let events = world.acc(&["sync", "--limit", "500"]).ok_json();
    let cursors: Vec<u64> = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["cursor"].as_str().expect("c").parse().expect("n"))
        .collect();
    let expected: Vec<u64> = (1..=cursors.len() as u64).collect();
    assert_eq!(cursors, expected);
    assert_eq!(
        cursors.len(),
        10 + 40,
        "5 participants and sessions, 40 messages"
    );
}

/// Writers queue on a lock file beside the store before SQLite's own lock. A holder that never
/// lets go (here, this test holding the queue) makes a writer answer `timeout` within the
/// bound, having written nothing, while reads go on; once the holder lets go, writes go through.
#[test]
fn a_writer_that_never_lets_go_of_the_queue_bounds_the_others_and_blocks_no_reader() {
    let world = World::new();
    let alice = world.attach("alice");
    let before = world.status();
    let queue = std::fs::OpenOptions::new()
        .append(true)
        .open(format!("{}-writers", world.store_path().display()))
        .expect("the writers' queue beside the store");
    queue.lock().expect("hold the queue");

    let started = std::time::Instant::now();
    let refused = world.acc_as(&alice, &["claim", "--resource", "file:src/a.rs"]);
    let waited = started.elapsed();
    let error = refused.err(3, "timeout");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("locked for more than 10 s")),
        "{error}"
    );
    assert!(
        waited < std::time::Duration::from_secs(20),
        "bounded: {waited:?}"
    );
    // Reads never wait for writers.
    let read = world.acc_as(&alice, &["inbox"]);
    assert_eq!(read.code, 0, "{read:?}");
    assert_eq!(
        world.status()["claims"],
        before["claims"],
        "the refused claim wrote nothing"
    );

    queue.unlock().expect("let go");
    world
        .acc_as(&alice, &["claim", "--resource", "file:src/a.rs"])
        .ok_json();
}

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

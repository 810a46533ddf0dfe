//! `acc status` scales with what a person can read: above 20 claims it lists the claims that
//! matter (contended, expiring within 10 minutes, yours, expired) beside counts per holder, and
//! `--all` lists every one.

use acc_tests::World;

#[test]
fn a_busy_room_lists_the_claims_that_matter_and_all_lists_every_one() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    // Alice holds 24 claims for half an hour; one of them bob wants.
    let resources: Vec<String> = (0..24).map(|i| format!("file:src/m{i:02}.rs")).collect();
    let mut args = vec!["claim"];
    for r in &resources {
        args.extend(["--resource", r.as_str()]);
    }
    world.acc_as(&alice, &args).ok_json();
    world
        .acc_as(
            &bob,
            &[
                "work",
                "--summary",
                "parser",
                "--mode",
                "edit",
                "--hint",
                "file:src/m07.rs",
            ],
        )
        .ok_json();
    // Bob holds one claim that ends in a minute.
    world
        .acc_as(
            &bob,
            &["claim", "--resource", "file:docs/a.md", "--lease", "60"],
        )
        .ok_json();

    let summary = world.acc_as(&bob, &["status"]).ok_json();
    let counts = &summary["claimSummary"];
    assert_eq!(counts["total"], 25, "{counts}");
    assert_eq!(counts["live"], 25);
    assert_eq!(counts["complete"], false);
    assert_eq!(
        counts["holders"],
        serde_json::json!([{ "participantId": "alice", "claims": 24 }, { "participantId": "bob", "claims": 1 }])
    );
    let listed: Vec<&str> = summary["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .filter_map(|c| c["resource"].as_str())
        .collect();
    assert_eq!(
        listed,
        ["file:docs/a.md", "file:src/m07.rs"],
        "the contended claim and bob's own (expiring) one"
    );

    let human = world.acc_text(&["status"]);
    assert!(
        human
            .stdout
            .contains("claims: 25 (25 live) held by alice 24, bob 1; listed: the 2 that matter"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("acc status --all lists every one"));

    let all = world.acc(&["status", "--all"]).ok_json();
    assert_eq!(all["claims"].as_array().map(Vec::len), Some(25));
    assert_eq!(all["claimSummary"]["complete"], true);
}

#[test]
fn a_small_room_lists_every_claim() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(&alice, &["claim", "--resource", "file:a.rs"])
        .ok_json();
    let status = world.status();
    assert_eq!(status["claims"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        status["claimSummary"],
        serde_json::json!({ "total": 1, "live": 1, "complete": true, "holders": [{ "participantId": "alice", "claims": 1 }] })
    );
}

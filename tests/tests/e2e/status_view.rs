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

/// Every id `acc status --all` prints is short and names its claim: with many claims the ids
/// are shortened from one read of the whole index, and each comes back whole.
#[test]
fn every_listed_claim_id_is_short_and_taken_back() {
    let world = World::new();
    let alice = world.attach("alice");
    let resources: Vec<String> = (0..80).map(|i| format!("file:src/f{i:02}.rs")).collect();
    let mut args = vec!["claim"];
    for r in &resources {
        args.extend(["--resource", r.as_str()]);
    }
    world.acc_as(&alice, &args).ok_json();
    let listing = world.acc_text(&["status", "--all"]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    let shown: Vec<&str> = listing
        .stdout
        .split_whitespace()
        .filter(|w| w.starts_with("claim_"))
        .collect();
    assert_eq!(shown.len(), 80, "{}", listing.stdout);
    let whole = world.acc(&["status", "--all"]).ok_json();
    let ids: Vec<&str> = whole["claims"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["claimId"].as_str())
        .collect();
    for short in &shown {
        assert!(short.len() < "claim_".len() + 22, "{short} is shortened");
        let named: Vec<&&str> = ids.iter().filter(|id| id.starts_with(short)).collect();
        assert_eq!(named.len(), 1, "{short} names exactly one claim");
    }
    // One of them, given back, releases exactly that claim.
    let released = world
        .acc_as(&alice, &["release", "--claim", shown[0]])
        .ok_json();
    assert!(released.to_string().contains(shown[0]), "{released}");
}

/// A hooked session's presence, as `acc status --all --json` run by `viewer` shows it.
fn presence_seen(world: &World, viewer: &[&str], participant: &str) -> String {
    let mut command = world.command_path(viewer[0]);
    command
        .args(&viewer[1..])
        .arg(acc_tests::bin("acc"))
        .args(["--json", "status", "--all"]);
    let status = world.run(command, "acc status").ok_json();
    let session = status["sessions"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["participantId"] == participant))
        .cloned()
        .unwrap_or_else(|| panic!("{participant}'s session is listed: {status}"));
    session["presence"].as_str().unwrap_or("?").to_string()
}

/// What a message to `participant` sent by `viewer` says of its delivery: its outcome and
/// error code.
fn delivery_seen(world: &World, viewer: &[&str], participant: &str) -> (String, String) {
    let sender = world.attach("sender");
    let mut command = world.command_path(viewer[0]);
    command
        .args(&viewer[1..])
        .arg(acc_tests::bin("acc"))
        .args(["--json", "message", "--kind", "note", "--to", participant])
        .args(["--subject", "hello", "--body", "hello"])
        .env("ACC_SESSION", &sender.session)
        .env("ACC_GENERATION", &sender.generation);
    let sent = world.run(command, "acc message").ok_json();
    let delivery = &sent["delivery"][0];
    (
        delivery["outcome"].as_str().unwrap_or("?").to_string(),
        delivery["errorCode"].as_str().unwrap_or("").to_string(),
    )
}

/// One row of the table below: the client process, the viewer, the presence it sees, and the
/// delivery outcome and code of a message it sends.
type Row<'a> = (&'a str, &'a [&'a str], &'a str, (&'a str, &'a str));

/// A session's pid is tested only where it means what it meant to the process that recorded
/// it (same boot, same pid namespace): seen from another pid namespace (a container, or
/// another machine sharing a room) it cannot be confirmed dead, and the session is judged by
/// its silence, as one without a pid. Without that, every session of another machine looked
/// offline (its pid absent here), or online as long as some unrelated process here had its
/// number. Each viewer is a real process: `unshare --pid --fork` gives it a pid namespace of
/// its own, where the test's pids do not exist.
#[test]
fn a_session_is_judged_by_its_pid_only_where_its_pid_means_something() {
    let here: &[&str] = &["env"];
    let elsewhere: &[&str] = &["unshare", "--pid", "--fork"];
    // (client process, viewer, presence, delivery outcome and code).
    let table: &[Row] = &[
        ("running", here, "online", ("queued", "")),
        (
            "ended",
            here,
            "offline",
            ("queued", "recipient_unavailable"),
        ),
        ("running", elsewhere, "online", ("queued", "")),
        ("ended", elsewhere, "online", ("queued", "")),
    ];
    for (client, viewer, presence, (outcome, code)) in table {
        let world = World::new();
        // Claude Code gives its hooks its pid (`CLAUDE_PID`): the test's own, running
        // throughout, or that of a process that has ended.
        let pid = if *client == "running" {
            std::process::id()
        } else {
            let mut ended = std::process::Command::new("true").spawn().expect("true");
            ended.wait().expect("reaped");
            ended.id()
        };
        let started = world.claude_session_start("conversation-1", pid);
        assert_eq!(started.code, 0, "{}", started.stderr);
        let status = world.status();
        let hooked = status["sessions"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["harness"] == "claude-code"))
            .cloned()
            .unwrap_or_else(|| panic!("the hook opened a session: {status}"));
        let participant = hooked["participantId"].as_str().expect("participant");
        assert!(
            hooked["pid"].is_number(),
            "the hook recorded its client's pid: {hooked}"
        );
        assert_eq!(
            presence_seen(&world, viewer, participant),
            *presence,
            "a {client} client's session seen by {viewer:?}"
        );
        assert_eq!(
            delivery_seen(&world, viewer, participant),
            (outcome.to_string(), code.to_string()),
            "a message to a {client} client's session sent by {viewer:?}"
        );
    }
}

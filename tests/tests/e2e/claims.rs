//! Claims through the real `acc` binary: normalisation, batches, leases, release rules.

use acc_tests::World;
use serde_json::Value;

fn claims_of(status: &Value) -> Vec<Value> {
    status["claims"].as_array().cloned().unwrap_or_default()
}

fn resources(status: &Value) -> Vec<String> {
    claims_of(status)
        .iter()
        .map(|c| c["resource"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn event_count(world: &World) -> usize {
    world.acc(&["sync", "--limit", "500"]).ok_json()["events"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0)
}

#[test]
fn file_resources_are_normalised_and_unmatchable_shapes_refused() {
    let world = World::new();
    let alice = world.attach("alice");
    let claimed = world
        .acc_as(&alice, &["claim", "--resource", "file:./src//x/../a.rs"])
        .ok_json();
    assert_eq!(claimed["claims"][0]["resource"], "file:src/a.rs");
    assert_eq!(resources(&world.status()), vec!["file:src/a.rs"]);

    for shape in ["file:src/", "file:src/*.rs"] {
        let run = world.acc_as(&alice, &["claim", "--resource", shape]);
        let error = run.err(2, "unmatchable_resource");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("file:src/**"),
            "{error}"
        );
    }
    let dup = world.acc_as(
        &alice,
        &[
            "claim",
            "--resource",
            "file:b.rs",
            "--resource",
            "file:./b.rs",
        ],
    );
    let error = dup.err(2, "invalid_arguments");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("more than once"),
        "{error}"
    );
    assert_eq!(
        resources(&world.status()),
        vec!["file:src/a.rs"],
        "refusals changed nothing"
    );
}

#[test]
fn batch_is_all_or_nothing_and_keeps_existing_leases() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    world
        .acc_as(&bob, &["claim", "--resource", "file:b.rs"])
        .ok_json();
    let held = world
        .acc_as(
            &alice,
            &["claim", "--resource", "file:a.rs", "--lease", "100"],
        )
        .ok_json();
    let expires_before = held["claims"][0]["expiresAt"].clone();
    let events_before = event_count(&world);

    let run = world.acc_as(
        &alice,
        &[
            "claim",
            "--resource",
            "file:a.rs",
            "--resource",
            "file:b.rs",
            "--resource",
            "file:c.rs",
            "--lease",
            "5000",
        ],
    );
    let error = run.err(5, "claim_conflict");
    let conflicts = error["details"]["conflicts"].as_array().expect("conflicts");
    assert_eq!(conflicts.len(), 1, "{error}");
    assert_eq!(conflicts[0]["resource"], "file:b.rs");
    let holder = &conflicts[0]["claims"][0];
    assert_eq!(holder["ownerSessionId"], bob.session.as_str());
    assert_eq!(holder["ownerPresence"], "online");
    assert!(
        holder["claimId"]
            .as_str()
            .unwrap_or_default()
            .starts_with("claim_")
    );
    assert!(holder["expiresAt"].is_string());

    let status = world.status();
    let mut names = resources(&status);
    names.sort();
    assert_eq!(names, vec!["file:a.rs", "file:b.rs"], "no claim created");
    let alice_claim = claims_of(&status)
        .into_iter()
        .find(|c| c["resource"] == "file:a.rs")
        .expect("a.rs");
    assert_eq!(
        alice_claim["expiresAt"], expires_before,
        "lease not renewed by a refused batch"
    );
    assert_eq!(
        event_count(&world),
        events_before,
        "a refused batch appends nothing"
    );

    // Shared with shared coexists; shared against exclusive does not.
    world
        .acc_as(
            &alice,
            &["claim", "--resource", "doc:plan", "--mode", "shared"],
        )
        .ok_json();
    world
        .acc_as(
            &bob,
            &["claim", "--resource", "doc:plan", "--mode", "shared"],
        )
        .ok_json();
    world
        .acc_as(&bob, &["claim", "--resource", "doc:plan/**"])
        .err(5, "claim_conflict");
    // Trees overlap by segment: a/** does not cover ab/c.
    world
        .acc_as(&alice, &["claim", "--resource", "file:lib/**"])
        .ok_json();
    world
        .acc_as(&bob, &["claim", "--resource", "file:library/x.rs"])
        .ok_json();
    world
        .acc_as(&bob, &["claim", "--resource", "file:lib/x.rs"])
        .err(5, "claim_conflict");
}

#[test]
fn repeated_acquire_and_renew_by_id_extend_the_lease() {
    let world = World::new();
    let alice = world.attach("alice");
    let first = world
        .acc_as(
            &alice,
            &["claim", "--resource", "file:a.rs", "--lease", "60"],
        )
        .ok_json();
    let id = first["claims"][0]["claimId"]
        .as_str()
        .expect("id")
        .to_string();
    let again = world
        .acc_as(
            &alice,
            &["claim", "--resource", "file:a.rs", "--lease", "600"],
        )
        .ok_json();
    assert_eq!(
        again["claims"][0]["claimId"],
        id.as_str(),
        "re-acquire renews the same claim"
    );
    assert_eq!(again["claims"][0]["leaseSeconds"], 600);
    let renewed = world.acc_as(&alice, &["claim", "--renew", &id]).ok_json();
    assert_eq!(
        renewed["claims"][0]["leaseSeconds"], 600,
        "renew keeps the lease length"
    );
    let longer = world
        .acc_as(&alice, &["claim", "--renew", &id, "--lease", "900"])
        .ok_json();
    assert_eq!(longer["claims"][0]["leaseSeconds"], 900);
    world
        .acc_as(&alice, &["claim", "--renew", "claim_doesnotexist"])
        .err(4, "claim_not_found");
    world
        .acc_as(&alice, &["claim", "--resource", "file:x", "--lease", "0"])
        .err(2, "invalid_arguments");
    let bob = world.attach("bob");
    world
        .acc_as(&bob, &["claim", "--renew", &id])
        .err(5, "claim_not_owned");
    let types: Vec<String> = world.acc(&["sync"]).ok_json()["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        types.iter().filter(|t| *t == "claim.renewed").count(),
        3,
        "{types:?}"
    );
}

#[test]
fn expired_lease_frees_the_resource_and_tells_the_owner() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(
            &alice,
            &["claim", "--resource", "file:a.rs", "--lease", "60"],
        )
        .ok_json();
    let later = [("ACC_TEST_CLOCK_OFFSET_SECONDS", "120")];
    let bob = world.attach("bob");
    world
        .acc_as(&bob, &["claim", "--resource", "file:a.rs"])
        .err(5, "claim_conflict");
    let taken = world
        .acc_as_with(&bob, &["claim", "--resource", "file:a.rs"], &later)
        .ok_json();
    assert_eq!(taken["claims"][0]["ownerParticipantId"], "bob");

    let status = world.acc_with(&["status"], &later).ok_json();
    let attention = status["attention"].as_array().expect("attention");
    let expired: Vec<&Value> = attention
        .iter()
        .filter(|a| a["rule"] == "claim_expired")
        .collect();
    assert_eq!(expired.len(), 1, "{status}");
    assert_eq!(expired[0]["participantId"], "alice");
    assert_eq!(expired[0]["sessionId"], alice.session.as_str());
    let alice_claim = claims_of(&status)
        .into_iter()
        .find(|c| c["ownerParticipantId"] == "alice")
        .expect("kept");
    assert_eq!(alice_claim["state"], "expired");
    // The owner cannot renew over the new holder; releasing the expired claim clears attention.
    let alice_id = alice_claim["claimId"].as_str().expect("id").to_string();
    world
        .acc_as_with(&alice, &["claim", "--renew", &alice_id], &later)
        .err(5, "claim_conflict");
    world
        .acc_as_with(&alice, &["release", "--claim", &alice_id], &later)
        .ok_json();
    let status = world.acc_with(&["status"], &later).ok_json();
    assert!(
        status["attention"]
            .as_array()
            .expect("attention")
            .iter()
            .all(|a| a["rule"] != "claim_expired")
    );
}

#[test]
fn stale_presence_never_releases_a_claim() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(
            &alice,
            &["claim", "--resource", "file:a.rs", "--lease", "86400"],
        )
        .ok_json();
    let ten_minutes_later = [("ACC_TEST_CLOCK_OFFSET_SECONDS", "600")];
    let status = world.acc_with(&["status"], &ten_minutes_later).ok_json();
    assert_eq!(status["sessions"][0]["presence"], "stale");
    let two_hours_later = [("ACC_TEST_CLOCK_OFFSET_SECONDS", "7200")];
    let status = world.acc_with(&["status"], &two_hours_later).ok_json();
    assert_eq!(status["sessions"][0]["presence"], "offline");
    assert_eq!(claims_of(&status).len(), 1, "claim survives presence");
    assert_eq!(claims_of(&status)[0]["state"], "live");
    let bob = world.attach("bob");
    let error = world
        .acc_as_with(
            &bob,
            &["claim", "--resource", "file:a.rs"],
            &two_hours_later,
        )
        .err(5, "claim_conflict");
    assert_eq!(
        error["details"]["conflicts"][0]["claims"][0]["ownerPresence"],
        "offline"
    );
}

#[test]
fn release_rules() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let a = world
        .acc_as(
            &alice,
            &[
                "claim",
                "--resource",
                "file:a",
                "--resource",
                "file:b",
                "--resource",
                "file:c",
            ],
        )
        .ok_json();
    let ids: Vec<String> = a["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .map(|c| c["claimId"].as_str().expect("id").to_string())
        .collect();
    let bob_claim = world
        .acc_as(&bob, &["claim", "--resource", "file:z"])
        .ok_json()["claims"][0]["claimId"]
        .as_str()
        .expect("id")
        .to_string();

    // A missing or foreign target removes nothing.
    world
        .acc_as(
            &alice,
            &["release", "--claim", &ids[0], "--claim", "claim_missing"],
        )
        .err(4, "claim_not_found");
    world
        .acc_as(
            &alice,
            &["release", "--claim", &ids[0], "--claim", &bob_claim],
        )
        .err(5, "claim_not_owned");
    world
        .acc_as(
            &alice,
            &["release", "--resource", "file:a", "--resource", "file:z"],
        )
        .err(4, "claim_not_found");
    assert_eq!(claims_of(&world.status()).len(), 4);
    // Selector families are exclusive; duplicates are refused.
    world
        .acc_as(&alice, &["release", "--claim", &ids[0], "--all"])
        .err(2, "invalid_arguments");
    world
        .acc_as(&alice, &["release", "--claim", &ids[0], "--claim", &ids[0]])
        .err(2, "invalid_arguments");
    world
        .acc_as(
            &alice,
            &["release", "--resource", "file:a", "--resource", "file:./a"],
        )
        .err(2, "invalid_arguments");

    let released = world
        .acc_as(&alice, &["release", "--claim", &ids[0]])
        .ok_json();
    assert_eq!(released["released"], serde_json::json!([ids[0]]));
    world
        .acc_as(&alice, &["release", "--claim", &ids[0]])
        .err(4, "claim_not_found");
    let by_resource = world
        .acc_as(&alice, &["release", "--resource", "file:./b"])
        .ok_json();
    assert_eq!(by_resource["released"], serde_json::json!([ids[1]]));
    let all = world.acc_as(&alice, &["release", "--all"]).ok_json();
    assert_eq!(all["released"], serde_json::json!([ids[2]]));
    let empty = world.acc_as(&alice, &["release", "--all"]).ok_json();
    assert_eq!(empty["released"], serde_json::json!([]));
    assert_eq!(
        resources(&world.status()),
        vec!["file:z"],
        "bob's claim untouched"
    );

    // Force release by a human, with a reason; the event names actor, reason, replaced generation.
    world
        .acc(&["release", "--claim", &bob_claim, "--authority", "human"])
        .err(2, "invalid_arguments");
    world
        .acc(&[
            "release",
            "--claim",
            &bob_claim,
            "--authority",
            "root",
            "--reason",
            "x",
        ])
        .err(2, "invalid_arguments");
    let forced = world
        .acc_as(
            &alice,
            &[
                "release",
                "--claim",
                &bob_claim,
                "--authority",
                "human",
                "--reason",
                "bob left for the day",
            ],
        )
        .ok_json();
    assert_eq!(forced["released"], serde_json::json!([bob_claim]));
    let events = world.acc(&["sync", "--limit", "500"]).ok_json();
    let event = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["type"] == "claim.force_released")
        .cloned()
        .expect("event");
    assert_eq!(event["data"]["authority"], "human");
    assert_eq!(event["data"]["reason"], "bob left for the day");
    assert_eq!(event["data"]["replacedGeneration"], 1);
    assert_eq!(event["data"]["ownerSessionId"], bob.session.as_str());
    assert_eq!(event["data"]["actorSessionId"], alice.session.as_str());
    assert!(claims_of(&world.status()).is_empty());
}

#[test]
fn intent_hints_raise_conflict_and_contention_attention() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    world
        .acc_as(&alice, &["claim", "--resource", "file:src/**"])
        .ok_json();
    let intent = world
        .acc_as(
            &bob,
            &[
                "work",
                "--summary",
                "fix the parser",
                "--mode",
                "edit",
                "--hint",
                "file:./src/parse.rs",
            ],
        )
        .ok_json();
    assert_eq!(
        intent["intent"]["resourceHints"],
        serde_json::json!(["file:src/parse.rs"])
    );
    assert_eq!(intent["intent"]["state"], "active");
    let status = world.status();
    let rules: Vec<(String, String)> = status["attention"]
        .as_array()
        .expect("attention")
        .iter()
        .map(|a| {
            (
                a["rule"].as_str().unwrap_or_default().into(),
                a["participantId"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    assert!(
        rules.contains(&("claim_conflict".into(), "bob".into())),
        "{rules:?}"
    );
    assert!(
        rules.contains(&("claim_contended".into(), "alice".into())),
        "{rules:?}"
    );
    let bob_session = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "bob")
        .cloned()
        .expect("bob");
    assert_eq!(bob_session["intent"]["summary"], "fix the parser");

    world
        .acc_as(&bob, &["work", "--summary", "x", "--mode", "sprint"])
        .err(2, "invalid_arguments");
    world
        .acc_as(
            &bob,
            &["work", "--summary", &"y".repeat(281), "--mode", "edit"],
        )
        .err(2, "invalid_arguments");
    world
        .acc_as(
            &bob,
            &[
                "work",
                "--summary",
                "x",
                "--mode",
                "edit",
                "--state",
                "finished",
            ],
        )
        .err(2, "invalid_arguments");
    world
        .acc_as(
            &bob,
            &[
                "work",
                "--summary",
                "x",
                "--mode",
                "edit",
                "--hint",
                "file:src/",
            ],
        )
        .err(2, "unmatchable_resource");
    let cleared = world.acc_as(&bob, &["work", "--clear"]).ok_json();
    assert_eq!(cleared["cleared"], true);
    assert!(
        world.status()["attention"]
            .as_array()
            .expect("attention")
            .is_empty()
    );
    world
        .acc_as(&bob, &["work", "--clear", "--summary", "x"])
        .err(2, "invalid_arguments");
}

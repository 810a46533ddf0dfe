use super::*;

fn branches<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Branches {
    Branches(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn capture(version: &str, platform: &str, result: &str) -> Capture {
    let observed = if result == "pass" {
        "offered"
    } else {
        "unobserved"
    };
    Capture {
        schema: CAPTURE_SCHEMA.into(),
        client: "example".into(),
        version: version.into(),
        platform: platform.into(),
        observed_at: "2026-11-29T19:00:00Z".into(),
        launch_mode: "library".into(),
        protocol_contract: "example-file-v1".into(),
        executable_sha256: "a".repeat(64),
        capability: "livePush".into(),
        result: result.into(),
        provenance: Provenance::CapturedHere,
        transcript: None,
        transcript_sha256: None,
        branches: branches([
            ("idle", observed),
            (
                "busy",
                if result == "pass" {
                    "rejected-busy"
                } else {
                    "unobserved"
                },
            ),
            (
                "reply",
                if result == "pass" {
                    "routed"
                } else {
                    "unobserved"
                },
            ),
            (
                "duplicate",
                if result == "pass" {
                    "same-message-id"
                } else {
                    "unobserved"
                },
            ),
            (
                "fallback",
                if result == "pass" {
                    "queued"
                } else {
                    "unobserved"
                },
            ),
        ]),
        limitations: if result == "pass" {
            vec![]
        } else {
            vec!["the client could not be driven here".into()]
        },
    }
}

fn contract(minimum: &str, known_bad: &[&str]) -> Contract {
    Contract {
        schema: CONTRACT_SCHEMA.into(),
        contract_id: "example-file-v1".into(),
        client: "example".into(),
        offer_kind: "message".into(),
        live_push: true,
        capability: "livePush".into(),
        activation_kinds: vec!["question".into()],
        policy_source: "binding".into(),
        minimums: vec![MinimumEntry {
            platform: "*".into(),
            version: minimum.into(),
        }],
        anchors: vec![Anchor {
            platform: "linux-x64".into(),
            version: minimum.into(),
            protocol_contract: "example-file-v1".into(),
            capture: format!("{minimum}-linux-x64.toml"),
        }],
        known_bad: known_bad.iter().map(|s| s.to_string()).collect(),
        driver: None,
    }
}

#[test]
fn capture_rules() {
    assert!(check_capture(&capture("1.0.0", "linux-x64", "pass")).is_empty());
    assert!(check_capture(&capture("1.0.0", "linux-x64", "fail")).is_empty());
    let mut claims_pass = capture("1.0.0", "linux-x64", "fail");
    claims_pass.result = "pass".into();
    assert!(
        check_capture(&claims_pass)
            .iter()
            .any(|p| p.contains("needs every branch observed"))
    );
    let mut bare_fail = capture("1.0.0", "linux-x64", "fail");
    bare_fail.limitations.clear();
    assert!(
        check_capture(&bare_fail)
            .iter()
            .any(|p| p.contains("at least one limitation"))
    );
    let mut bad = capture("one", "linux-x64", "pass");
    bad.executable_sha256 = "xyz".into();
    bad.observed_at = "yesterday".into();
    bad.branches.0.insert("idle".into(), "delivered".into());
    let problems = check_capture(&bad);
    assert_eq!(problems.len(), 4, "{problems:?}");
    // The branches are those of the capture's capability: no other, none missing.
    let mut extra = capture("1.0.0", "linux-x64", "pass");
    extra.branches.0.insert("surprise".into(), "offered".into());
    assert!(
        check_capture(&extra)
            .iter()
            .any(|p| p.contains("branch `surprise` is not a branch of livePush captures"))
    );
    let mut missing = capture("1.0.0", "linux-x64", "pass");
    missing.branches.0.remove("reply");
    assert!(
        check_capture(&missing)
            .iter()
            .any(|p| p.contains("unobserved: reply"))
    );
    let mut unknown = capture("1.0.0", "linux-x64", "pass");
    unknown.capability = "telepathy".into();
    assert!(check_capture(&unknown)[0].contains("capability `telepathy` is not one of livePush"));
    let mut elsewhere = capture("1.0.0", "darwin-arm64", "pass");
    elsewhere.executable_sha256 = "unavailable".into();
    assert!(
        !check_capture(&elsewhere).is_empty(),
        "unavailable needs provenance elsewhere"
    );
    elsewhere.provenance = Provenance::CapturedElsewhere;
    assert!(check_capture(&elsewhere).is_empty());
    let text = toml::to_string(&capture("1.0.0", "linux-x64", "pass")).expect("toml");
    let with_extra = format!("surprise = 1\n{text}");
    assert!(
        toml::from_str::<Capture>(&with_extra).is_err(),
        "unknown fields are refused"
    );
    assert_eq!(
        toml::from_str::<Capture>(&text).expect("round trip"),
        capture("1.0.0", "linux-x64", "pass")
    );
}

#[test]
fn contract_minimums_need_a_passing_anchor() {
    let temp = tempfile::tempdir().expect("tempdir");
    let write = |c: &Capture| {
        std::fs::write(
            temp.path()
                .join(format!("{}-{}.toml", c.version, c.platform)),
            toml::to_string(c).expect("toml"),
        )
        .expect("write")
    };
    let problems = check_contract(temp.path(), &contract("1.0.0", &[]));
    assert!(
        problems.iter().any(|p| p.contains("not backed")),
        "{problems:?}"
    );
    // Evidence from elsewhere comes without a transcript; that is all this test is about.
    let elsewhere = |result: &str| Capture {
        provenance: Provenance::CapturedElsewhere,
        ..capture("1.0.0", "linux-x64", result)
    };
    write(&elsewhere("fail"));
    assert!(
        check_contract(temp.path(), &contract("1.0.0", &[]))
            .iter()
            .any(|p| p.contains("not backed"))
    );
    write(&elsewhere("pass"));
    assert!(
        check_contract(
            temp.path(),
            &contract("1.0.0", &[">=1.1.0, <1.2.0", "1.3.0"])
        )
        .is_empty()
    );
    assert!(
        check_contract(temp.path(), &contract("1.0.0", &["soon"]))
            .iter()
            .any(|p| p.contains("neither a version nor a range"))
    );
}

#[test]
fn evidence_applies_forward() {
    let c = contract("1.0.0", &[">=1.4.0, <1.5.0"]);
    let pass = |v: &str, p: &str| capture(v, p, "pass");
    let fail = |v: &str, p: &str| capture(v, p, "fail");
    assert_eq!(
        eligibility(
            &c,
            &[pass("1.0.0", "linux-x64")],
            Some("1.2.0"),
            "linux-x64"
        ),
        Ok(())
    );
    assert_eq!(
        eligibility(&c, &[pass("1.0.0", "linux-x64")], None, "linux-x64"),
        Err("version_unavailable")
    );
    assert_eq!(
        eligibility(&c, &[], Some("1.2.0"), "linux-x64"),
        Err("native_delivery_unsupported")
    );
    assert_eq!(
        eligibility(
            &c,
            &[pass("1.3.0", "linux-x64")],
            Some("1.2.0"),
            "linux-x64"
        ),
        Err("native_delivery_unsupported")
    );
    // The highest capture at or below the version decides: a later failure turns it off.
    let later_fail = [pass("1.0.0", "linux-x64"), fail("1.1.0", "linux-x64")];
    assert_eq!(
        eligibility(&c, &later_fail, Some("1.2.0"), "linux-x64"),
        Err("native_delivery_unsupported")
    );
    // This platform's evidence is preferred; another platform's serves when there is none here.
    assert_eq!(
        eligibility(
            &c,
            &[pass("1.0.0", "darwin-arm64")],
            Some("1.2.0"),
            "linux-x64"
        ),
        Ok(())
    );
    let mixed = [pass("1.1.0", "darwin-arm64"), fail("1.0.0", "linux-x64")];
    assert_eq!(
        eligibility(&c, &mixed, Some("1.2.0"), "linux-x64"),
        Err("native_delivery_unsupported")
    );
    assert_eq!(
        eligibility(
            &c,
            &[pass("0.9.0", "linux-x64")],
            Some("0.9.5"),
            "linux-x64"
        ),
        Err("below_minimum_version")
    );
    assert_eq!(
        eligibility(
            &c,
            &[pass("1.0.0", "linux-x64")],
            Some("1.4.2"),
            "linux-x64"
        ),
        Err("known_bad_version")
    );
}

/// The repository's own evidence, as the router reads it.
fn repository_evidence() -> Evidence {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../contracts");
    Evidence::load(&[root])
}

fn example_declaration() -> ContractDeclaration {
    repository_evidence().contracts["example-file-v1"].declaration()
}

#[test]
fn evidence_admits_a_declaration_as_the_folder_states_it_and_only_narrower() {
    let evidence = repository_evidence();
    let declared = example_declaration();
    assert_eq!(evidence.admits(&declared, "1.2.0", "linux-x64"), Ok(()));
    assert_eq!(
        evidence.admits(&declared, "1.1.0", "linux-x64"),
        Err(crate::codes::DeliveryCode::NoEvidence),
        "no passing capture at or below 1.1.0"
    );
    assert_eq!(
        evidence.admits(&declared, "1.3.1", "linux-x64"),
        Err(crate::codes::DeliveryCode::KnownBadVersion)
    );
    // A raised minimum narrows; a lowered one, another offer kind or a dropped known-bad
    // entry contradicts the folder.
    let mut raised = declared.clone();
    raised.minimums[0].version = "1.2.5".into();
    assert_eq!(
        evidence.admits(&raised, "1.2.0", "linux-x64"),
        Err(crate::codes::DeliveryCode::BelowMinimumVersion)
    );
    assert_eq!(evidence.admits(&raised, "1.2.6", "linux-x64"), Ok(()));
    let mut lowered = declared.clone();
    lowered.minimums[0].version = "1.0.0".into();
    assert_eq!(
        evidence.admits(&lowered, "1.2.0", "linux-x64"),
        Err(crate::codes::DeliveryCode::ContractMismatch)
    );
    let mut wake = declared.clone();
    wake.offer_kind = "wake".into();
    assert_eq!(
        evidence.admits(&wake, "1.2.0", "linux-x64"),
        Err(crate::codes::DeliveryCode::ContractMismatch)
    );
    let mut forgiving = declared.clone();
    forgiving.known_bad.clear();
    assert_eq!(
        evidence.admits(&forgiving, "1.3.1", "linux-x64"),
        Err(crate::codes::DeliveryCode::ContractMismatch)
    );
    let mut unknown = declared;
    unknown.contract_id = "nobody-v1".into();
    assert_eq!(
        evidence.admits(&unknown, "1.2.0", "linux-x64"),
        Err(crate::codes::DeliveryCode::NoEvidence)
    );
    assert_eq!(
        Evidence::load(&[]).admits(&example_declaration(), "1.2.0", "linux-x64"),
        Err(crate::codes::DeliveryCode::NoEvidence),
        "no folder, no evidence"
    );
}

#[test]
fn a_capture_is_evidence_only_for_the_executable_it_drove() {
    let contract = contract("1.2.0", &[]);
    let captured = capture("1.2.0", "linux-x64", "pass");
    let same = "a".repeat(64);
    let other = "b".repeat(64);
    let check = |version: &str, installed: Option<&str>| {
        fingerprint(
            std::slice::from_ref(&captured),
            &contract,
            version,
            "linux-x64",
            installed,
        )
    };
    assert_eq!(check("1.2.0", Some(&same)), Ok(()));
    let differs = check("1.2.0", Some(&other)).expect_err("another executable");
    assert!(
        differs.contains("not captured with this client"),
        "{differs}"
    );
    assert!(
        differs.contains(&other),
        "names the installed fingerprint: {differs}"
    );
    // Unknown installed fingerprint, or another version: nothing to compare.
    assert_eq!(check("1.2.0", None), Ok(()));
    assert_eq!(check("1.2.1", Some(&other)), Ok(()));
    // A zeroed hash is a placeholder, not a fingerprint.
    let mut zeroed = captured.clone();
    zeroed.executable_sha256 = "0".repeat(64);
    assert!(
        check_capture(&zeroed)
            .iter()
            .any(|p| p.contains("executable_sha256")),
        "{:?}",
        check_capture(&zeroed)
    );
}

/// A capture made here, written with the transcript that backs it: every branch observed.
fn write_captured(dir: &Path) -> (PathBuf, Capture) {
    use wire::Entry;
    let mut capture = capture("1.2.0", "linux-x64", "pass");
    let router = |branch: &str, id: &str, outcome: &str, code: Option<&str>| Entry::Router {
        branch: branch.into(),
        message_id: id.into(),
        recipient: "bob".into(),
        outcome: outcome.into(),
        transport: "example".into(),
        error_code: code.map(str::to_string),
    };
    let client = |branch: &str, id: &str, seen: u32| Entry::Client {
        branch: branch.into(),
        message_id: id.into(),
        participant: "bob".into(),
        seen,
        after_turn_end: None,
        frames: vec![],
    };
    let entries = vec![
        Entry::Run {
            client: capture.client.clone(),
            version: capture.version.clone(),
            platform: capture.platform.clone(),
            launch_mode: capture.launch_mode.clone(),
            protocol_contract: capture.protocol_contract.clone(),
            executable_sha256: capture.executable_sha256.clone(),
            driver: "acc-example-driver".into(),
            capability: "livePush".into(),
        },
        router("idle", "m1", "offered", None),
        client("idle", "m1", 1),
        router("busy", "m2", "queued", Some("recipient_busy")),
        client("busy", "m2", 0),
        Entry::Offer {
            branch: "duplicate".into(),
            message_id: "m1".into(),
            accepted: true,
            code: None,
        },
        client("duplicate", "m1", 1),
        router("reply", "m3", "offered", None),
        client("reply", "m3", 1),
        router("fallback", "m4", "queued", Some("recipient_unavailable")),
    ];
    let text = transcript::encode(&entries);
    let name = "1.2.0-linux-x64.transcript.jsonl";
    std::fs::write(dir.join(name), &text).expect("transcript");
    capture.transcript = Some(name.into());
    capture.transcript_sha256 = Some(transcript::digest(text.as_bytes()));
    let path = dir.join("1.2.0-linux-x64.toml");
    std::fs::write(&path, toml::to_string(&capture).expect("toml")).expect("capture");
    (path, capture)
}

#[test]
fn a_capture_made_here_is_what_its_transcript_shows() {
    let temp = tempfile::tempdir().expect("tempdir");
    let (path, capture) = write_captured(temp.path());
    assert_eq!(load_capture(&path), Ok(capture.clone()));
    let refused = |edited: &Capture| {
        std::fs::write(&path, toml::to_string(edited).expect("toml")).expect("write");
        load_capture(&path).expect_err("refused").join("; ")
    };
    // A changed branch.
    let mut edited = capture.clone();
    edited
        .branches
        .0
        .insert("busy".into(), "queued-after-turn".into());
    let why = refused(&edited);
    assert!(
        why.contains("branch busy = `queued-after-turn`, but its transcript shows `rejected-busy`"),
        "{why}"
    );
    // Another executable.
    let mut edited = capture.clone();
    edited.executable_sha256 = "b".repeat(64);
    assert!(refused(&edited).contains("but its transcript records"));
    // A changed digest, and a transcript changed after the capture.
    let mut edited = capture.clone();
    edited.transcript_sha256 = Some("c".repeat(64));
    assert!(refused(&edited).contains("was changed after it was made"));
    let transcript = temp.path().join("1.2.0-linux-x64.transcript.jsonl");
    let text = std::fs::read_to_string(&transcript).expect("read");
    std::fs::write(&transcript, text.replace("\"seen\":0", "\"seen\":1")).expect("write");
    assert!(refused(&capture).contains("was changed after it was made"));
    // No transcript at all.
    let mut edited = capture.clone();
    edited.transcript = None;
    edited.transcript_sha256 = None;
    assert!(refused(&edited).contains("provenance captured-here does not hold"));
    // A transcript outside the folder.
    edited.transcript = Some("../elsewhere.jsonl".into());
    edited.transcript_sha256 = Some("c".repeat(64));
    assert!(refused(&edited).contains("must be a file name beside the capture"));
}

#[test]
fn a_fingerprint_recorded_for_two_clients_is_refused_for_both() {
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = temp.path().join("example");
    std::fs::create_dir_all(&dir).expect("dir");
    let (_, capture) = write_captured(&dir);
    let other = temp.path().join("other");
    std::fs::create_dir_all(&other).expect("dir");
    let borrowed = Capture {
        client: "other".into(),
        provenance: Provenance::CapturedElsewhere,
        transcript: None,
        transcript_sha256: None,
        ..capture
    };
    std::fs::write(
        other.join("1.2.0-linux-x64.toml"),
        toml::to_string(&borrowed).expect("toml"),
    )
    .expect("write");
    let folder = read_folder(temp.path()).expect("folder");
    assert!(folder.captures.is_empty(), "{:?}", folder.captures);
    assert_eq!(
        folder
            .problems
            .iter()
            .filter(|p| p.contains("provenance does not hold: executable"))
            .count(),
        2,
        "{:?}",
        folder.problems
    );
}

/// A write-guard capture of `client` at `version` on `platform` with `result`.
fn guard_capture(client: &str, version: &str, platform: &str, result: &str) -> Capture {
    let value = |v: &'static str| if result == "pass" { v } else { "unobserved" };
    Capture {
        client: client.into(),
        capability: WRITE_GUARD.into(),
        protocol_contract: format!("{client}-write-guard-v1"),
        branches: branches([
            ("claimed", value("denied")),
            ("unclaimed", value("written")),
            ("released", value("written")),
        ]),
        limitations: if result == "pass" {
            Vec::new()
        } else {
            vec!["claimed: the file was written".into()]
        },
        ..capture(version, platform, result)
    }
}

#[test]
fn a_write_guard_is_certified_forward_from_passing_captures_only() {
    let evidence = Evidence {
        captures: vec![
            guard_capture("codex", "0.169.0", "linux-x64", "pass"),
            guard_capture("codex", "0.180.0", "linux-x64", "fail"),
            // Delivery evidence of a client certifies nothing about its writes.
            capture("2.1.328", "linux-x64", "pass"),
        ],
        ..Evidence::default()
    };
    for capture in &evidence.captures {
        assert!(
            check_capture(capture).is_empty(),
            "{:?}",
            check_capture(capture)
        );
    }
    let ok = evidence
        .write_guard("codex", Some("0.170.2"), "linux-x64")
        .expect("0.169.0 applies forward");
    assert!(ok.contains("codex 0.169.0 on linux-x64"), "{ok}");
    // Another platform with no capture of its own takes this one's.
    assert!(
        evidence
            .write_guard("codex", Some("0.169.0"), "darwin-arm64")
            .is_ok()
    );
    let below = evidence
        .write_guard("codex", Some("0.168.9"), "linux-x64")
        .expect_err("nothing at or below");
    assert!(below.contains("no beforeWrite capture of codex"), "{below}");
    let failed = evidence
        .write_guard("codex", Some("0.181.0"), "linux-x64")
        .expect_err("the highest capture failed");
    assert!(failed.contains("failed"), "{failed}");
    assert!(
        evidence
            .write_guard("codex", None, "linux-x64")
            .is_err_and(|e| e.contains("unknown"))
    );
    assert!(
        evidence
            .write_guard("codex", Some("latest"), "linux-x64")
            .is_err_and(|e| e.contains("not a version"))
    );
    assert!(
        evidence
            .write_guard("example", Some("2.1.328"), "linux-x64")
            .is_err()
    );
}

#[test]
fn a_write_guard_capture_has_its_own_name_and_branches() {
    let capture = guard_capture("gemini", "0.61.0", "linux-x64", "pass");
    assert_eq!(
        capture_stem(&capture.version, &capture.platform, &capture.capability),
        "0.61.0-linux-x64-write-guard"
    );
    assert_eq!(
        capture_stem("0.61.0", "linux-x64", "nextTurn"),
        "0.61.0-linux-x64"
    );
    let mut wrong = capture.clone();
    wrong.branches = branches([("claimed", "written")]);
    let problems = check_capture(&wrong);
    assert!(
        problems.iter().any(|p| p.contains("claimed = `written`")),
        "{problems:?}"
    );
    // A capture under the delivery capture's name is refused for its misleading name.
    let dir = std::env::temp_dir().join(format!("acc-guard-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let mut elsewhere = capture;
    elsewhere.provenance = Provenance::CapturedElsewhere;
    let path = dir.join("0.61.0-linux-x64.toml");
    std::fs::write(&path, toml::to_string(&elsewhere).expect("toml")).expect("write");
    let refused = load_capture(&path).expect_err("misnamed");
    assert!(
        refused[0].contains("is named 0.61.0-linux-x64-write-guard.toml"),
        "{refused:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! The checks of a contracts folder's files: a capture's own fields and verdicts, a contract
//! against the captures it names, and a capture against the transcript it was derived from.

use super::*;

/// Validate one capture; returns the problems.
pub fn check_capture(capture: &Capture) -> Vec<String> {
    let mut problems = Vec::new();
    if capture.schema != CAPTURE_SCHEMA {
        problems.push(format!("schema must be `{CAPTURE_SCHEMA}`"));
    }
    if version(&capture.version).is_none() {
        problems.push(format!(
            "version `{}` is not a semantic version",
            capture.version
        ));
    }
    if chrono::DateTime::parse_from_rfc3339(&capture.observed_at)
        .map(|t| t.offset().local_minus_utc() != 0)
        .unwrap_or(true)
    {
        problems.push(format!(
            "observed_at `{}` must be an RFC 3339 UTC time",
            capture.observed_at
        ));
    }
    // Sixty-four zeros is a placeholder, not a fingerprint.
    let sha_ok = capture.executable_sha256.len() == 64
        && capture
            .executable_sha256
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
        && capture.executable_sha256.bytes().any(|b| b != b'0');
    let elsewhere_unknown = capture.executable_sha256 == "unavailable"
        && capture.provenance == Provenance::CapturedElsewhere;
    if !(sha_ok || elsewhere_unknown) {
        problems.push("executable_sha256 must be 64 hex digits (or `unavailable` for evidence captured elsewhere)".into());
    }
    let mut unobserved = Vec::new();
    let Some(expected) = branches_of(&capture.capability) else {
        problems.push(format!(
            "capability `{}` is not one of {}",
            capture.capability,
            CAPABILITIES
                .iter()
                .map(|(c, _)| *c)
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return problems;
    };
    for name in capture.branches.0.keys() {
        if !expected.iter().any(|(known, _)| known == name) {
            problems.push(format!(
                "branch `{name}` is not a branch of {} captures",
                capture.capability
            ));
        }
    }
    for (name, allowed) in expected {
        let value = capture.branches.get(name);
        if value == "unobserved" {
            unobserved.push(*name);
        } else if !allowed.contains(&value) {
            problems.push(format!(
                "branch {name} = `{value}` is not one of {} or unobserved",
                allowed.join(", ")
            ));
        }
    }
    match capture.result.as_str() {
        "pass" if !unobserved.is_empty() => {
            problems.push(format!(
                "result pass needs every branch observed; unobserved: {}",
                unobserved.join(", ")
            ));
        }
        "pass" => {}
        "fail" if capture.limitations.is_empty() => {
            problems.push("result fail needs at least one limitation".into())
        }
        "fail" => {}
        other => problems.push(format!("result must be pass or fail, got `{other}`")),
    }
    if !unobserved.is_empty() && capture.limitations.is_empty() {
        problems.push("unobserved branches need a limitation saying why".into());
    }
    problems
}

/// Validate one contract against the folder's captures; returns the problems.
pub fn check_contract(dir: &Path, contract: &Contract) -> Vec<String> {
    let mut problems = Vec::new();
    if contract.schema != CONTRACT_SCHEMA {
        problems.push(format!("schema must be `{CONTRACT_SCHEMA}`"));
    }
    if !["message", "wake", "body"].contains(&contract.offer_kind.as_str()) {
        problems.push(format!(
            "offer_kind `{}` must be message, wake or body",
            contract.offer_kind
        ));
    }
    for bad in &contract.known_bad {
        if version(bad).is_none() && semver::VersionReq::parse(bad).is_err() {
            problems.push(format!(
                "known_bad `{bad}` is neither a version nor a range"
            ));
        }
    }
    for minimum in &contract.minimums {
        if version(&minimum.version).is_none() {
            problems.push(format!(
                "minimum `{}` is not a semantic version",
                minimum.version
            ));
            continue;
        }
        let backed = contract.anchors.iter().any(|anchor| {
            anchor.version == minimum.version
                && (minimum.platform == "*" || anchor.platform == minimum.platform)
                && load_capture(&dir.join(&anchor.capture)).is_ok_and(|capture| {
                    capture.result == "pass"
                        && capture.client == contract.client
                        && capture.version == anchor.version
                        && capture.platform == anchor.platform
                        && capture.protocol_contract == anchor.protocol_contract
                })
        });
        if !backed {
            problems.push(format!(
                "minimum {} on {} {UNBACKED} with a passing capture of that version",
                minimum.version, minimum.platform
            ));
        }
    }
    problems
}

/// Check a capture against its transcript: the file it names beside it, the digest, the
/// transcript's own account of the run, and the verdicts its lines support
/// ([`transcript::derive`]). A capture made here without a transcript is refused: nothing
/// backs what it says. Evidence from elsewhere may come without one.
pub fn check_transcript(dir: &Path, capture: &Capture) -> Vec<String> {
    let (Some(name), Some(recorded)) = (&capture.transcript, &capture.transcript_sha256) else {
        return if capture.provenance == Provenance::CapturedHere {
            vec!["provenance captured-here does not hold: the capture names no transcript (transcript, transcript_sha256), so nothing backs what it says; re-capture it with acc contract capture".into()]
        } else {
            Vec::new()
        };
    };
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return vec![format!(
            "transcript `{name}` must be a file name beside the capture"
        )];
    }
    let bytes = match std::fs::read(dir.join(name)) {
        Ok(bytes) => bytes,
        Err(e) => return vec![format!("transcript {name} cannot be read: {e}")],
    };
    let actual = transcript::digest(&bytes);
    if !actual.eq_ignore_ascii_case(recorded) {
        return vec![format!(
            "transcript {name} has digest {actual}, but the capture records {recorded}: the capture or its transcript was changed after it was made"
        )];
    }
    let entries = match std::str::from_utf8(&bytes)
        .map_err(|e| e.to_string())
        .and_then(transcript::parse)
    {
        Ok(entries) => entries,
        Err(e) => return vec![format!("transcript {name}: {e}")],
    };
    let mut problems = Vec::new();
    match entries.first() {
        Some(wire::Entry::Run {
            client,
            version,
            platform,
            launch_mode,
            protocol_contract,
            executable_sha256,
            ..
        }) => {
            for (field, stated, observed) in [
                ("client", &capture.client, client),
                ("version", &capture.version, version),
                ("platform", &capture.platform, platform),
                ("launch_mode", &capture.launch_mode, launch_mode),
                (
                    "protocol_contract",
                    &capture.protocol_contract,
                    protocol_contract,
                ),
                (
                    "executable_sha256",
                    &capture.executable_sha256,
                    executable_sha256,
                ),
            ] {
                if stated != observed {
                    problems.push(format!(
                        "{field} = `{stated}`, but its transcript records `{observed}`"
                    ));
                }
            }
        }
        _ => problems.push(format!(
            "transcript {name} does not begin with the run it records"
        )),
    }
    let derived = transcript::derive(&entries);
    for (branch, _) in branches_of(&capture.capability).unwrap_or_default() {
        let (stated, shown) = (capture.branches.get(branch), derived.branches.get(branch));
        if stated != shown {
            problems.push(format!(
                "branch {branch} = `{stated}`, but its transcript shows `{shown}`"
            ));
        }
    }
    if derived.result != capture.result {
        problems.push(format!(
            "result = `{}`, but its transcript supports `{}`",
            capture.result, derived.result
        ));
    }
    if derived.limitations != capture.limitations {
        problems.push(format!(
            "limitations differ from what its transcript shows: {}",
            if derived.limitations.is_empty() {
                "none".to_string()
            } else {
                derived.limitations.join("; ")
            }
        ));
    }
    problems
}

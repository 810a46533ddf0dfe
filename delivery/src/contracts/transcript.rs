//! A capture's transcript: parsing it, its digest, and deriving the capture's verdicts from it.
//!
//! Owns: the one rule that turns what was observed into branch values. The capture tool writes
//! the verdicts this module derives; `acc contract verify` derives them again from the stored
//! transcript and refuses a capture that says anything else.

use sha2::{Digest, Sha256};

use super::wire::Entry;
use super::{Branches, branches_of};

/// What a transcript supports: the branch values, the limitations (every `note`, then every
/// branch that was not observed, with why) and the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    /// The branches.
    pub branches: Branches,
    /// The limitations.
    pub limitations: Vec<String>,
    /// `pass` when every branch was observed and nothing was noted, else `fail`.
    pub result: String,
}

/// SHA-256 of a transcript's bytes, lowercase hex.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The transcript's text: one entry a line.
pub fn encode(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| format!("{}\n", serde_json::to_string(e).unwrap_or_default()))
        .collect()
}

/// Parse a transcript strictly: every line one entry; the line number of the first that is
/// not.
pub fn parse(text: &str) -> Result<Vec<Entry>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str::<Entry>(line).map_err(|e| format!("line {}: {e}", n + 1))
        })
        .collect()
}

/// The router's report in `name`: the message, the outcome and the code.
fn router<'a>(entries: &'a [Entry], name: &str) -> Option<(&'a str, &'a str, Option<&'a str>)> {
    entries.iter().find_map(|e| match e {
        Entry::Router {
            branch,
            message_id,
            outcome,
            error_code,
            ..
        } if branch == name => Some((message_id.as_str(), outcome.as_str(), error_code.as_deref())),
        _ => None,
    })
}

/// The last look at `message` in `name`: how often it was seen, and whether after the turn.
fn client(entries: &[Entry], name: &str, message: &str) -> Option<(u32, Option<bool>)> {
    entries.iter().rev().find_map(|e| match e {
        Entry::Client {
            branch,
            message_id,
            seen,
            after_turn_end,
            ..
        } if branch == name && message_id == message => Some((*seen, *after_turn_end)),
        _ => None,
    })
}

fn live(outcome: &str) -> bool {
    matches!(outcome, "offered" | "woken")
}

/// How many times the last look in branch `name` saw its message.
fn seen_in(entries: &[Entry], name: &str) -> Option<u32> {
    entries.iter().rev().find_map(|e| match e {
        Entry::Client { branch, seen, .. } if branch == name => Some(*seen),
        _ => None,
    })
}

/// The last write looked at in branch `name`: whether it was written, whether the model saw
/// the refusal.
fn write_in(entries: &[Entry], name: &str) -> Option<(bool, bool)> {
    entries.iter().rev().find_map(|e| match e {
        Entry::Write {
            branch,
            written,
            refusal_seen,
            ..
        } if branch == name => Some((*written, *refusal_seen)),
        _ => None,
    })
}

/// The value of a next-turn or write-guard branch (`None`: a live-delivery branch).
fn observed_branch(entries: &[Entry], name: &str) -> Option<Result<String, String>> {
    match name {
        // The write guard: a write into another session's guarded claim does not happen and the
        // model is told why; writes outside it, and after the release, go through.
        "claimed" => Some(match write_in(entries, name) {
            Some((false, true)) => Ok("denied".into()),
            Some((written, seen)) => Err(format!(
                "claimed: the file was {}written and the model {} the refusal",
                if written { "" } else { "not " },
                if seen { "received" } else { "did not receive" }
            )),
            None => Err("claimed: not driven".into()),
        }),
        "unclaimed" | "released" => Some(match write_in(entries, name) {
            Some((true, _)) => Ok("written".into()),
            Some((false, _)) => Err(format!("{name}: the write did not happen")),
            None => Err(format!("{name}: not driven")),
        }),
        // Next-turn context: once in the first request of the next turn, then never again.
        "carried" => Some(match seen_in(entries, name) {
            Some(1) => Ok("in-next-request".into()),
            other => Err(format!(
                "carried: the next turn's model requests carried the message {} time(s)",
                other.map_or_else(|| "an unknown number of".into(), |n| n.to_string())
            )),
        }),
        "resumed" => Some(
            match (seen_in(entries, "carried"), seen_in(entries, name)) {
                (Some(1), Some(0)) => Ok("not-repeated".into()),
                (_, other) => Err(format!(
                    "resumed: after the message was carried, the resumed turn delivered it {} time(s) more",
                    other.map_or_else(|| "an unknown number of".into(), |n| n.to_string())
                )),
            },
        ),
        _ => None,
    }
}

/// The value of one branch, or why it was not observed.
fn branch(entries: &[Entry], name: &str) -> Result<String, String> {
    if let Some(value) = observed_branch(entries, name) {
        return value;
    }
    if name == "duplicate" {
        let offer = entries.iter().find_map(|e| match e {
            Entry::Offer {
                branch,
                message_id,
                accepted,
                code,
            } if branch == name => Some((message_id.as_str(), *accepted, code.clone())),
            _ => None,
        });
        let Some((message, accepted, code)) = offer else {
            return Err("duplicate: no second offer was made".into());
        };
        return match client(entries, name, message) {
            Some((1, _)) if accepted => Ok("same-message-id".into()),
            seen => Err(format!(
                "duplicate: the second offer was {} ({}) and the client then showed the message {} time(s)",
                if accepted { "accepted" } else { "refused" },
                code.unwrap_or_else(|| "no code".into()),
                seen.map_or_else(|| "an unknown number of".into(), |(n, _)| n.to_string())
            )),
        };
    }
    let Some((message, outcome, code)) = router(entries, name) else {
        return Err(format!("{name}: not driven"));
    };
    let seen = client(entries, name, message);
    let shown = |seen: Option<(u32, Option<bool>)>| {
        seen.map_or_else(
            || "was not looked at".to_string(),
            |(n, after)| {
                format!(
                    "showed it {n} time(s){}",
                    match after {
                        Some(true) => ", after the running turn ended",
                        Some(false) => ", before the running turn ended",
                        None => "",
                    }
                )
            },
        )
    };
    let refused = || {
        Err(format!(
            "{name}: the router reported `{outcome}` ({}) and the client {}",
            code.unwrap_or("no code"),
            shown(seen)
        ))
    };
    match name {
        "idle" if live(outcome) && seen.is_some_and(|(n, _)| n == 1) => Ok(outcome.into()),
        "busy"
            if outcome == "queued"
                && code == Some("recipient_busy")
                && seen.is_some_and(|(n, _)| n == 0) =>
        {
            Ok("rejected-busy".into())
        }
        "busy" if live(outcome) && seen == Some((1, Some(true))) => Ok("queued-after-turn".into()),
        "reply" if live(outcome) && seen.is_some_and(|(n, _)| n == 1) => Ok("routed".into()),
        // The route is gone: whatever the transport said, the receipt waits durably.
        "fallback" if outcome == "queued" && code != Some("recipient_busy") => Ok("queued".into()),
        _ => refused(),
    }
}

/// Derive the verdicts a transcript supports.
pub fn derive(entries: &[Entry]) -> Derived {
    let mut limitations: Vec<String> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Note { branch, text } => Some(format!("{branch}: {text}")),
            _ => None,
        })
        .collect();
    let capability = entries
        .iter()
        .find_map(|e| match e {
            Entry::Run { capability, .. } => Some(capability.as_str()),
            _ => None,
        })
        .unwrap_or("livePush");
    let set = branches_of(capability).unwrap_or_else(|| {
        limitations.push(format!(
            "capability `{capability}` is not one this build knows"
        ));
        &[]
    });
    let mut branches = Branches::default();
    for (name, _) in set {
        let value = branch(entries, name).unwrap_or_else(|why| {
            limitations.push(why);
            "unobserved".into()
        });
        branches.0.insert((*name).to_string(), value);
    }
    Derived {
        branches,
        result: if limitations.is_empty() {
            "pass"
        } else {
            "fail"
        }
        .into(),
        limitations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router(branch: &str, id: &str, outcome: &str, code: Option<&str>) -> Entry {
        Entry::Router {
            branch: branch.into(),
            message_id: id.into(),
            recipient: "bob".into(),
            outcome: outcome.into(),
            transport: if outcome == "queued" {
                "durable"
            } else {
                "example"
            }
            .into(),
            error_code: code.map(str::to_string),
        }
    }

    fn client(branch: &str, id: &str, seen: u32, after: Option<bool>) -> Entry {
        Entry::Client {
            branch: branch.into(),
            message_id: id.into(),
            participant: "bob".into(),
            seen,
            after_turn_end: after,
            frames: vec![],
        }
    }

    fn observed() -> Vec<Entry> {
        vec![
            router("idle", "m1", "woken", None),
            client("idle", "m1", 1, None),
            router("busy", "m2", "offered", None),
            client("busy", "m2", 1, Some(true)),
            router("reply", "m3", "offered", None),
            client("reply", "m3", 1, None),
            Entry::Offer {
                branch: "duplicate".into(),
                message_id: "m1".into(),
                accepted: true,
                code: None,
            },
            client("duplicate", "m1", 1, None),
            router("fallback", "m4", "queued", Some("recipient_unavailable")),
        ]
    }

    #[test]
    fn every_branch_is_what_was_observed() {
        let derived = derive(&observed());
        assert_eq!(derived.result, "pass", "{:?}", derived.limitations);
        assert_eq!(derived.branches.get("idle"), "woken");
        assert_eq!(derived.branches.get("busy"), "queued-after-turn");
        assert_eq!(derived.branches.get("duplicate"), "same-message-id");
        let text = encode(&observed());
        assert_eq!(parse(&text), Ok(observed()));
        assert!(parse("{\"entry\":\"run\"}\n").is_err_and(|e| e.starts_with("line 1:")));
    }

    #[test]
    fn a_busy_message_taken_before_the_turn_ended_is_not_after_turn() {
        let mut entries = observed();
        entries[3] = client("busy", "m2", 1, Some(false));
        let derived = derive(&entries);
        assert_eq!(derived.branches.get("busy"), "unobserved");
        assert_eq!(derived.result, "fail");
        assert!(
            derived.limitations[0].contains("before the running turn ended"),
            "{:?}",
            derived.limitations
        );
        // A refusal the client confirms is the other busy branch.
        entries[2] = router("busy", "m2", "queued", Some("recipient_busy"));
        entries[3] = client("busy", "m2", 0, None);
        assert_eq!(derive(&entries).branches.get("busy"), "rejected-busy");
    }

    #[test]
    fn a_second_copy_or_a_missing_look_is_unobserved_and_notes_fail_the_capture() {
        let mut entries = observed();
        entries[7] = client("duplicate", "m1", 2, None);
        entries.remove(1);
        entries.push(Entry::Note {
            branch: "surface".into(),
            text: "no registry".into(),
        });
        let derived = derive(&entries);
        assert_eq!(derived.branches.get("idle"), "unobserved");
        assert_eq!(derived.branches.get("duplicate"), "unobserved");
        assert_eq!(derived.limitations[0], "surface: no registry");
        assert!(derived.limitations[1].contains("was not looked at"));
        assert!(derived.limitations[2].contains("2 time(s)"));
    }

    fn write(branch: &str, written: bool, refusal_seen: bool) -> Entry {
        Entry::Write {
            branch: branch.into(),
            path: "src/parser.rs".into(),
            tool: "Write".into(),
            written,
            refusal_seen,
            frames: vec![],
        }
    }

    fn guard_run() -> Entry {
        Entry::Run {
            client: "claude-code".into(),
            version: "2.1.328".into(),
            platform: "linux-x64".into(),
            launch_mode: "headless".into(),
            protocol_contract: "claude-code-write-guard-v1".into(),
            executable_sha256: "a".repeat(64),
            driver: "acc-capture".into(),
            capability: "beforeWrite".into(),
        }
    }

    #[test]
    fn a_write_guard_passes_only_when_the_write_was_stopped_and_the_model_told() {
        let stopped = vec![
            guard_run(),
            write("claimed", false, true),
            write("unclaimed", true, false),
            write("released", true, false),
        ];
        let derived = derive(&stopped);
        assert_eq!(derived.result, "pass", "{:?}", derived.limitations);
        assert_eq!(derived.branches.get("claimed"), "denied");
        // Written anyway, or stopped without the model learning why: not a guard.
        for (written, seen, why) in [
            (true, true, "was written"),
            (false, false, "did not receive"),
        ] {
            let mut entries = stopped.clone();
            entries[1] = write("claimed", written, seen);
            let derived = derive(&entries);
            assert_eq!(derived.branches.get("claimed"), "unobserved");
            assert!(
                derived.limitations[0].contains(why),
                "{:?}",
                derived.limitations
            );
        }
        let mut entries = stopped;
        entries.pop();
        let derived = derive(&entries);
        assert_eq!(derived.result, "fail");
        assert!(
            derived
                .limitations
                .iter()
                .any(|l| l == "released: not driven")
        );
    }
}

//! Contracts and captures: the TOML files in `contracts/`, their closed schemas, validation,
//! and eligibility ("evidence applies forward").
//!
//! Owns: what counts as evidence that a client version can take native delivery. Must not:
//! invent evidence, or admit a version that no passing capture backs.
//!
//! Layout: `contracts/<client>/contract-<contract id>.toml` holds a contract;
//! `contracts/<client>/<version>-<platform>.toml` holds one capture (`…-write-guard.toml` one of
//! the client's write guard, which needs no contract: see [`Evidence::write_guard`]), and
//! `<same name>.transcript.jsonl` what was observed while making it (required of a capture made
//! here; see [`transcript`]).

mod check;
mod folder;
pub mod transcript;
mod verify;
pub mod wire;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use acc_adapter_api::wire::{ContractDeclaration, Minimum};
use serde::{Deserialize, Serialize};

use crate::codes::DeliveryCode;
use acc_core::error::{AccError, AccResult, ErrorCode};
use folder::load_capture;
pub use folder::{Folder, is_known_bad, read_folder};

pub use check::{check_capture, check_contract, check_transcript};
pub use verify::{AdapterCheck, VerifyReport, verify};

/// The schema tag of a capture file.
pub const CAPTURE_SCHEMA: &str = "acc-capture-1";
/// The schema tag of a contract file.
pub const CONTRACT_SCHEMA: &str = "acc-contract-1";
/// A capability's branches: each name with the values it may be observed as.
pub type BranchSet = &'static [(&'static str, &'static [&'static str])];

/// The delivery branches a capture observes, with their observed values.
pub const BRANCHES: BranchSet = &[
    ("idle", &["offered", "woken"]),
    ("busy", &["queued-after-turn", "rejected-busy"]),
    ("reply", &["routed"]),
    ("duplicate", &["same-message-id"]),
    ("fallback", &["queued"]),
];
/// How a contract's problem says a minimum has no passing capture behind it yet.
pub const UNBACKED: &str = "is not backed by an anchor";
/// Eligibility reason codes.
pub const REASONS: &[&str] = &[
    "native_delivery_unsupported",
    "version_unavailable",
    "below_minimum_version",
    "known_bad_version",
    "feature_probe_failed",
    "probe_timeout",
    "protocol_mismatch",
    "native_endpoint_unavailable",
    "native_session_unavailable",
    "handshake_failed",
    "handshake_timeout",
    "session_generation_stale",
];

/// Where a capture was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// By `acc contract capture` on a machine of this project.
    CapturedHere,
    /// Elsewhere (a documented minimum that cannot be re-captured here).
    CapturedElsewhere,
}

/// The branches a capture of `capability` observes, with the values each may have
/// (`unobserved` aside): live delivery's five, or none for a capability this build does not
/// know.
pub fn branches_of(capability: &str) -> Option<BranchSet> {
    CAPABILITIES
        .iter()
        .find(|(c, _)| *c == capability)
        .map(|(_, branches)| *branches)
}

/// Every capability captures observe, with its branches.
pub const CAPABILITIES: &[(&str, BranchSet)] = &[
    ("livePush", BRANCHES),
    // Next-turn context: a peer's message is in the very model request of the recipient's next
    // turn, and a resumed conversation does not show it again.
    (
        "nextTurn",
        &[
            ("carried", &["in-next-request"]),
            ("resumed", &["not-repeated"]),
        ],
    ),
    // The write guard: a write into another session's exclusive guarded claim is stopped before
    // it happens and the model receives the refusal; a write outside any claim, and the same
    // write after the release, go through.
    (
        "beforeWrite",
        &[
            ("claimed", &["denied"]),
            ("unclaimed", &["written"]),
            ("released", &["written"]),
        ],
    ),
];

/// The capability whose captures certify a hooked session's write guard.
pub const WRITE_GUARD: &str = "beforeWrite";

/// A capture's file name without extension: `<version>-<platform>`, with `-write-guard` for a
/// write-guard capture (a client version may have one of each).
pub fn capture_stem(version: &str, platform: &str, capability: &str) -> String {
    if capability == WRITE_GUARD {
        format!("{version}-{platform}-write-guard")
    } else {
        format!("{version}-{platform}")
    }
}

/// The branches observed, by name (or `unobserved`); which names a capture must have depends on
/// its capability ([`branches_of`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Branches(pub BTreeMap<String, String>);

impl Branches {
    /// The value of branch `name` (`unobserved` when it is not there).
    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("unobserved", String::as_str)
    }
}

/// Evidence recorded from a real installed client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// Always `acc-capture-1`.
    pub schema: String,
    /// The client (`claude-code`, `codex`, `example`).
    pub client: String,
    /// Its version.
    pub version: String,
    /// `linux-x64`, `darwin-arm64`, ...
    pub platform: String,
    /// When, UTC (`2026-11-29T19:00:00Z`).
    pub observed_at: String,
    /// How the client was launched for the capture.
    pub launch_mode: String,
    /// The protocol contract the client stated.
    pub protocol_contract: String,
    /// SHA-256 of the executable (64 hex digits), or `unavailable` for evidence from elsewhere.
    pub executable_sha256: String,
    /// The capability observed (`livePush`, `nextTurn`, ...).
    pub capability: String,
    /// `pass` or `fail`.
    pub result: String,
    /// Where it was made.
    pub provenance: Provenance,
    /// The transcript file, beside this one (required of a capture made here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// SHA-256 of the transcript file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_sha256: Option<String>,
    /// The branches.
    pub branches: Branches,
    /// What could not be observed, and why.
    pub limitations: Vec<String>,
}

/// A known minimum anchored to a passing capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// Platform of the capture.
    pub platform: String,
    /// Version of the capture.
    pub version: String,
    /// Protocol contract of the capture.
    pub protocol_contract: String,
    /// The capture file, relative to the contract's folder.
    pub capture: String,
}

/// A minimum version on one platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinimumEntry {
    /// Platform, or `*`.
    pub platform: String,
    /// Version.
    pub version: String,
}

/// The contract data an adapter's declaration refers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// Always `acc-contract-1`.
    pub schema: String,
    /// Contract id.
    pub contract_id: String,
    /// The client.
    pub client: String,
    /// `message`, `wake` or `body`.
    pub offer_kind: String,
    /// Whether it pushes live.
    pub live_push: bool,
    /// The capability its captures observe.
    pub capability: String,
    /// The message kinds that may activate it (policy `actionable`).
    pub activation_kinds: Vec<String>,
    /// Where the recipient's consent comes from (`installation-record`, `binding`).
    pub policy_source: String,
    /// Minimum versions.
    pub minimums: Vec<MinimumEntry>,
    /// Anchors: captures that back the minimums.
    pub anchors: Vec<Anchor>,
    /// Known-bad versions or ranges.
    #[serde(default)]
    pub known_bad: Vec<String>,
    /// The capture driver that runs this client for `acc contract capture` (a program name
    /// looked for beside the adapter's library, then on `PATH`, or an absolute path); none for
    /// the clients the capture tool drives itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

impl Contract {
    /// The declaration an adapter must make for this contract.
    pub fn declaration(&self) -> ContractDeclaration {
        ContractDeclaration {
            contract_id: self.contract_id.clone(),
            client: self.client.clone(),
            offer_kind: self.offer_kind.clone(),
            live_push: self.live_push,
            minimums: self
                .minimums
                .iter()
                .map(|m| Minimum {
                    platform: m.platform.clone(),
                    version: m.version.clone(),
                })
                .collect(),
            known_bad: self.known_bad.clone(),
        }
    }
}

fn version(text: &str) -> Option<semver::Version> {
    semver::Version::parse(text).ok()
}

/// "Evidence applies forward" for `capability` of `client` at `wanted` on `platform`: prefer
/// this platform's valid captures, else all; keep those at or below the version; none means
/// off; at the highest remaining version every capture must pass. `Ok` names the deciding
/// capture (`<client> <version> on <platform>`); `Err` says why not.
fn forward(
    captures: &[Capture],
    client: &str,
    capability: &str,
    wanted: &semver::Version,
    platform: &str,
) -> Result<String, String> {
    let relevant: Vec<&Capture> = captures
        .iter()
        .filter(|c| c.client == client && c.capability == capability && check_capture(c).is_empty())
        .collect();
    let here: Vec<&Capture> = relevant
        .iter()
        .copied()
        .filter(|c| c.platform == platform)
        .collect();
    let pool = if here.is_empty() { relevant } else { here };
    let at_or_below: Vec<(semver::Version, &Capture)> = pool
        .into_iter()
        .filter_map(|c| version(&c.version).map(|v| (v, c)))
        .filter(|(v, _)| v <= wanted)
        .collect();
    let Some(highest) = at_or_below.iter().map(|(v, _)| v.clone()).max() else {
        return Err(format!(
            "no {capability} capture of {client} at or below {wanted}"
        ));
    };
    let top: Vec<&Capture> = at_or_below
        .iter()
        .filter(|(v, _)| *v == highest)
        .map(|(_, c)| *c)
        .collect();
    match top.iter().find(|c| c.result != "pass") {
        Some(failed) => Err(format!(
            "the {capability} capture of {client} {} on {} failed",
            failed.version, failed.platform
        )),
        None => Ok(format!(
            "{client} {} on {}",
            top[0].version, top[0].platform
        )),
    }
}

/// Whether evidence admits `client_version` of `contract` on `platform`, by "evidence applies
/// forward": prefer this platform's captures of the contract's capability, else all; keep those
/// at or below the version; none means off; at the highest remaining version every capture
/// must pass. Then the minimum and the known-bad list apply. Returns the reason code when not.
pub fn eligibility(
    contract: &Contract,
    captures: &[Capture],
    client_version: Option<&str>,
    platform: &str,
) -> Result<(), &'static str> {
    let Some(wanted) = client_version.and_then(version) else {
        return Err("version_unavailable");
    };
    forward(
        captures,
        &contract.client,
        &contract.capability,
        &wanted,
        platform,
    )
    .map_err(|_| "native_delivery_unsupported")?;
    let minimum = contract
        .minimums
        .iter()
        .find(|m| m.platform == platform)
        .or_else(|| contract.minimums.iter().find(|m| m.platform == "*"))
        .and_then(|m| version(&m.version));
    match minimum {
        None => return Err("native_delivery_unsupported"),
        Some(minimum) if wanted < minimum => return Err("below_minimum_version"),
        Some(_) => {}
    }
    if is_known_bad(&contract.known_bad, &wanted) {
        return Err("known_bad_version");
    }
    Ok(())
}

/// Whether the captures made here of `version` on `platform` were made with the installed
/// executable (`installed_sha`): each records the SHA-256 of the client it drove. `Ok` when
/// the installed fingerprint is unknown (nothing to compare) or every such capture matches; else
/// why, clearly.
pub fn fingerprint(
    captures: &[Capture],
    contract: &Contract,
    version: &str,
    platform: &str,
    installed_sha: Option<&str>,
) -> Result<(), String> {
    let Some(installed) = installed_sha else {
        return Ok(());
    };
    for capture in captures.iter().filter(|c| {
        c.client == contract.client
            && c.capability == contract.capability
            && c.version == version
            && c.platform == platform
            && c.provenance == Provenance::CapturedHere
    }) {
        if !capture.executable_sha256.eq_ignore_ascii_case(installed) {
            return Err(format!(
                "the capture of {} {version} on {platform} records executable {}, but the installed client's is {installed}: it was not captured with this client (or the client changed since); re-capture it with acc contract capture",
                capture.client, capture.executable_sha256
            ));
        }
    }
    Ok(())
}

/// The folders `acc contract verify` checks without `--dir`: every existing folder of
/// [`search_path`], which is what the router reads.
pub fn default_dirs() -> Vec<PathBuf> {
    search_path().into_iter().filter(|d| d.is_dir()).collect()
}

/// Every folder the router reads evidence from, in order (a contract id found again later is
/// ignored): the source tree's `contracts/` in a development build, the install layout's
/// `<exe dir>/../share/acc/contracts`, the per-user `<data base>/acc/contracts`
/// (`~/.local/share/acc/contracts`, for third-party adapters' contracts), then each folder of
/// `ACC_CONTRACTS_DIR` (`:`-separated), which adds to the path. Folders that do not exist are
/// skipped.
pub fn search_path() -> Vec<PathBuf> {
    acc_clients::search_path(acc_clients::Places {
        dev: "../../contracts",
        installed: "../share/acc/contracts",
        user: "contracts",
        env: "ACC_CONTRACTS_DIR",
    })
}

/// The evidence the router admits live delivery from: every contract and capture of the
/// folders searched (a later folder never replaces a contract of an earlier one).
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    /// The folders read.
    pub dirs: Vec<PathBuf>,
    /// Contracts by id.
    pub contracts: BTreeMap<String, Contract>,
    /// Captures.
    pub captures: Vec<Capture>,
}

impl Evidence {
    /// Read every existing folder of `dirs` (an unreadable or invalid file is skipped: it is
    /// no evidence; `acc contract verify` names it).
    pub fn load(dirs: &[PathBuf]) -> Self {
        let mut evidence = Self {
            dirs: dirs.to_vec(),
            ..Self::default()
        };
        for dir in dirs.iter().filter(|d| d.is_dir()) {
            let Ok(folder) = read_folder(dir) else {
                continue;
            };
            for (id, (_, contract)) in folder.contracts {
                evidence.contracts.entry(id).or_insert(contract);
            }
            evidence
                .captures
                .extend(folder.captures.into_iter().map(|(_, c)| c));
        }
        evidence
    }

    /// Whether live delivery under `declared` to `client_version` on `platform` is admitted:
    /// the folder holds the contract, the adapter declares it as the folder states it, and a
    /// passing capture at or below the version anchors it here (`eligibility`). The code when
    /// not: `no_evidence` (no contract, or no passing capture for this version and platform),
    /// `contract_mismatch`, `below_minimum_version`, `known_bad_version`,
    /// `unsupported_client_version` (not a version).
    pub fn admits(
        &self,
        declared: &ContractDeclaration,
        client_version: &str,
        platform: &str,
    ) -> Result<(), DeliveryCode> {
        if !declared.live_push {
            return Err(DeliveryCode::UnsupportedClientVersion);
        }
        let Some(contract) = self.contracts.get(&declared.contract_id) else {
            return Err(DeliveryCode::NoEvidence);
        };
        if !agrees(&contract.declaration(), declared) {
            return Err(DeliveryCode::ContractMismatch);
        }
        match eligibility(contract, &self.captures, Some(client_version), platform) {
            Ok(()) => {}
            Err("native_delivery_unsupported") => return Err(DeliveryCode::NoEvidence),
            Err("version_unavailable") => return Err(DeliveryCode::UnsupportedClientVersion),
            Err("below_minimum_version") => return Err(DeliveryCode::BelowMinimumVersion),
            Err("known_bad_version") => return Err(DeliveryCode::KnownBadVersion),
            Err(_) => return Err(DeliveryCode::UnsupportedClientVersion),
        }
        // What the adapter declares beyond the folder (a raised minimum, more known-bad
        // versions: configuration may narrow, never widen) applies too.
        let wanted = version(client_version).ok_or(DeliveryCode::UnsupportedClientVersion)?;
        let raised = declared
            .minimums
            .iter()
            .find(|m| m.platform == platform)
            .or_else(|| declared.minimums.iter().find(|m| m.platform == "*"))
            .and_then(|m| version(&m.version));
        if raised.is_some_and(|minimum| wanted < minimum) {
            return Err(DeliveryCode::BelowMinimumVersion);
        }
        if is_known_bad(&declared.known_bad, &wanted) {
            return Err(DeliveryCode::KnownBadVersion);
        }
        Ok(())
    }
}

impl Evidence {
    /// Whether `client` at `client_version` on `platform` really stops a write its hooks deny:
    /// "evidence applies forward" over the passing write-guard captures ([`WRITE_GUARD`]). A
    /// write guard is ACC's own hook, not an adapter, so no contract is involved. `Ok` and `Err`
    /// are one line for a person.
    pub fn write_guard(
        &self,
        client: &str,
        client_version: Option<&str>,
        platform: &str,
    ) -> Result<String, String> {
        let Some(text) = client_version else {
            return Err(format!(
                "its {client} version is unknown: ACC learns it when the client starts a session with ACC's hooks"
            ));
        };
        let Some(wanted) = version(text) else {
            return Err(format!("its {client} reports `{text}`, not a version"));
        };
        forward(&self.captures, client, WRITE_GUARD, &wanted, platform)
            .map(|capture| {
                format!("{client} {text}: its write guard is backed by the capture of {capture}")
            })
            .map_err(|why| format!("{client} {text}: {why}, so its write guard is not certified"))
    }

    /// Whether the folders can ever admit live delivery under `declared`, as a line for a
    /// person: `Ok` naming the evidence, or why live delivery is refused whatever the version.
    pub fn declaration_check(&self, declared: &ContractDeclaration) -> Result<String, String> {
        if !declared.live_push {
            return Ok("pushes nothing live (no evidence needed)".into());
        }
        let Some(contract) = self.contracts.get(&declared.contract_id) else {
            return Err(format!(
                "no_evidence: no contracts folder defines {} (searched: {})",
                declared.contract_id,
                acc_clients::list_folders(&self.dirs)
            ));
        };
        if !agrees(&contract.declaration(), declared) {
            return Err(format!(
                "contract_mismatch: it declares {} otherwise than the contracts folder states it",
                declared.contract_id
            ));
        }
        let captures = self
            .captures
            .iter()
            .filter(|c| c.protocol_contract == declared.contract_id && c.result == "pass")
            .count();
        Ok(format!(
            "{} as the contracts folder states it, {captures} passing capture(s)",
            declared.contract_id
        ))
    }
}

/// Whether an adapter's declaration agrees with its contract as the folder states it: the
/// same contract, client, offer kind and live push, minimums at or above the folder's on
/// every platform (an adapter's configuration may raise a minimum, never lower it), and every
/// known-bad entry of the folder kept.
fn agrees(folder: &ContractDeclaration, declared: &ContractDeclaration) -> bool {
    let minimum_for = |minimums: &[Minimum], platform: &str| {
        minimums
            .iter()
            .find(|m| m.platform == platform)
            .or_else(|| minimums.iter().find(|m| m.platform == "*"))
            .and_then(|m| version(&m.version))
    };
    let minimums_kept = folder.minimums.iter().all(|m| {
        match (
            version(&m.version),
            minimum_for(&declared.minimums, &m.platform),
        ) {
            (Some(floor), Some(declared)) => declared >= floor,
            _ => false,
        }
    });
    folder.contract_id == declared.contract_id
        && folder.client == declared.client
        && folder.offer_kind == declared.offer_kind
        && folder.live_push == declared.live_push
        && minimums_kept
        && folder
            .known_bad
            .iter()
            .all(|bad| declared.known_bad.contains(bad))
}

#[cfg(test)]
mod tests;

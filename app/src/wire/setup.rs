//! The setup shapes: adapters and their evidence, `acc verify`, bindings, next-turn, the
//! store's layout and the workspace configuration.

use super::*;

/// A loaded adapter.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Adapter<'a> {
    pub adapter_id: &'a str,
    pub file: String,
    pub transport: &'a str,
    pub offer_kind: &'static str,
    pub api_version: &'a str,
    pub features: &'a [String],
    pub contract: &'a acc_adapter_api::wire::ContractDeclaration,
    /// What the contracts folders say of live delivery through it.
    pub evidence: Evidence,
}

/// The evidence for an adapter's live delivery: admissible (for the versions its captures
/// back), or refused whatever the version, with the reason.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub admissible: bool,
    pub detail: String,
}

/// A refused adapter file.
#[derive(Debug, Clone, Serialize)]
pub struct Refused<'a> {
    pub file: String,
    pub reason: &'a str,
}

/// `acc adapters`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Adapters<'a> {
    pub search_path: Vec<String>,
    pub adapters: Vec<Adapter<'a>>,
    pub refused: Vec<Refused<'a>>,
}

/// `acc adapters install`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterInstalled {
    pub adapter_id: String,
    pub file: String,
    pub contracts: Vec<String>,
}

/// `acc adapters remove`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterRemoved<'a> {
    pub adapter_id: &'a str,
    pub file: String,
}

/// One adapter in `acc contract verify`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterEligibility<'a> {
    pub adapter_id: &'a str,
    pub contract_id: &'a str,
    pub client_version: Option<&'a str>,
    pub live: bool,
    pub eligible: bool,
    pub reason: Option<&'a str>,
}

/// `acc contract verify`.
#[derive(Debug, Clone, Serialize)]
pub struct Verify<'a> {
    pub dir: String,
    pub dirs: Vec<String>,
    pub valid: bool,
    pub contracts: &'a [String],
    pub captures: Vec<String>,
    pub adapters: Vec<AdapterEligibility<'a>>,
    pub problems: &'a [String],
}

/// `acc bind`.
#[derive(Debug, Clone, Serialize)]
pub struct Bound<'a> {
    pub binding: Binding<'a>,
}

/// `acc unbind`.
#[derive(Debug, Clone, Serialize)]
pub struct Unbound {
    pub removed: usize,
}

/// `acc next-turn`: the rendered context and which messages it carried or withheld.
#[derive(Debug, Clone, Serialize)]
pub struct NextTurn<'a> {
    pub text: &'a str,
    pub carried: &'a [String],
    pub withheld: &'a [String],
}

/// The policy part of a workspace configuration.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    pub claim_mode: &'static str,
    pub context_budget_bytes: u64,
}

/// `acc store upgrade|downgrade`: what was (or, with `--dry-run`, would be) done to the store's
/// layout.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutChange {
    pub store: String,
    pub from_revision: i64,
    pub to_revision: i64,
    pub steps: Vec<String>,
    pub backup: Option<String>,
    pub receipt_rows: i64,
    pub estimate_ms: i64,
    pub dry_run: bool,
    pub changed: bool,
}

/// A store's layout, in `acc status --json` and `acc doctor`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreLayout {
    pub revision: i64,
    pub build_revision: i64,
    pub pending_upgrade: bool,
    pub backups: Vec<LayoutBackup>,
}

/// A layout backup beside the store.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutBackup {
    pub path: String,
    pub bytes: u64,
}

/// `acc config check`: a valid configuration file.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigValid<'a> {
    pub path: String,
    pub valid: bool,
    pub workspace_id: &'a str,
    pub display_name: &'a str,
    pub roots: &'a [String],
    pub policy: Policy,
    pub required_adapters: &'a [String],
}

/// `acc config init`: what was (or, refused for consent, would be) written.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigWrite {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// Where a workspace's room lives: `acc room show|connect|disconnect`, and `room` in
/// `acc status --json` when it is on PostgreSQL.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Room {
    pub workspace_id: String,
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// The SQLite file's path, or `postgres://host/db` (never a password).
    pub location: String,
    /// The per-user file naming the room, when one does.
    pub room_file: Option<String>,
    /// Whether `ACC_ROOM` chose the room (no room file).
    pub from_environment: bool,
    /// The PostgreSQL server's version, when the room is on one.
    pub server_version: Option<String>,
    /// One round trip to the server (median of three), in milliseconds.
    pub round_trip_ms: Option<f64>,
    /// Whether the connection is TLS, when the room is on PostgreSQL and was reached.
    pub encrypted: Option<bool>,
    /// How the connection travels, in words (TLS and what the certificate is checked against,
    /// or plain text and where).
    pub transport: Option<String>,
    /// Set when the room's traffic crosses a network in plain text: the warning, in words.
    pub not_encrypted: Option<String>,
}

/// `acc room push`: the rows copied, by table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomPushed {
    pub room: String,
    pub from: String,
    pub copied: std::collections::BTreeMap<String, u64>,
}

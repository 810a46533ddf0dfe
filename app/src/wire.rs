//! The wire layer: every JSON shape the CLI (`--json`) and the MCP server publish, as serde
//! types, each defined once and used by both.
//!
//! `views` fills these from core and store values; the CLI and the MCP tools return what
//! `views` builds, so a shape cannot drift between the two surfaces. Objects are turned into
//! `serde_json::Value` with sorted keys (`acc_core::wire::json`), which is also the byte order
//! the golden files under `tests/golden` hold. A change here changes a published shape: the
//! golden tests must change with it (`ACC_UPDATE_GOLDEN=1`).
//!
//! Conventions: camelCase keys; a field that is always published is a plain field (an
//! `Option` publishes `null`); a field published only when it applies carries
//! `skip_serializing_if`.

use serde::Serialize;
use serde_json::Value;

use acc_store::{ClaimMode, Enforcement, IntentMode, IntentState, Lifecycle, LivePolicy};

/// A claim, with its liveness at the time of the view.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim<'a> {
    pub claim_id: &'a str,
    pub resource: &'a str,
    pub mode: ClaimMode,
    pub enforcement: Enforcement,
    pub reason: Option<&'a str>,
    pub owner_session_id: &'a str,
    pub owner_participant_id: &'a str,
    pub owner_generation: i64,
    pub acquired_at: String,
    pub renewed_at: String,
    pub expires_at: String,
    pub lease_seconds: i64,
    /// `live` or `expired`.
    pub state: &'static str,
    /// In `status`: what the room can actually enforce for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_enforcement: Option<&'static str>,
}

/// An intent.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent<'a> {
    pub summary: &'a str,
    pub mode: IntentMode,
    pub state: IntentState,
    pub resource_hints: &'a [String],
    pub updated_at: String,
}

/// A delivery binding, redacted: the endpoint never leaves the store.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding<'a> {
    pub adapter_id: &'a str,
    pub generation: i64,
    pub client_version: &'a str,
    pub modes: &'a [String],
    pub live_policy: LivePolicy,
    pub lease_until: String,
    /// Always `redacted`.
    pub endpoint: &'static str,
}

/// A session with presence; never its generation token or hash.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session<'a> {
    pub session_id: &'a str,
    pub participant_id: &'a str,
    pub harness: &'a str,
    pub client_version: Option<&'a str>,
    pub presence: &'static str,
    pub lifecycle: Lifecycle,
    /// What the session really enforces: `guarded` only when its hooks guard writes and a
    /// passing write-guard capture backs its client version.
    pub enforcement: Enforcement,
    /// Why, one line.
    pub enforcement_reason: &'a str,
    pub generation: i64,
    pub checkout: Option<&'a str>,
    pub branch: Option<&'a str>,
    pub pid: Option<i64>,
    pub opened_at: String,
    pub last_seen_at: String,
    pub closed_at: Option<String>,
    pub intent: Option<Intent<'a>>,
    pub bindings: Vec<Binding<'a>>,
}

/// A newly opened session, with its generation token (the one place it is ever shown).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenedSession<'a> {
    pub workspace_id: &'a str,
    pub participant_id: &'a str,
    pub session_id: &'a str,
    /// The generation token.
    pub generation: &'a str,
    pub generation_number: i64,
    pub resumed: bool,
}

/// An attention item; only the fields its rule concerns are present.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attention<'a> {
    pub rule: &'static str,
    pub participant_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_participant_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// `claim_holder_offline`: when the claim stops counting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// An event as stored.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event<'a> {
    pub cursor: String,
    #[serde(rename = "type")]
    pub event_type: &'a str,
    pub at: String,
    pub session_id: Option<&'a str>,
    pub participant_id: Option<&'a str>,
    pub data: &'a Value,
}

/// The workspace as `status` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Workspace<'a> {
    pub workspace_id: &'a str,
    pub display_name: &'a str,
    pub root: &'a str,
    pub identity_source: &'static str,
    pub claim_policy: &'static str,
    pub protection: &'static str,
    /// Whose writes the guarded claims stop, and whose they do not.
    pub protection_note: &'a str,
}

/// A participant.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Participant<'a> {
    pub participant_id: &'a str,
    pub created_at: String,
}

/// The status report (and, with `messages`, the forensic snapshot).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status<'a> {
    pub workspace: Workspace<'a>,
    pub participants: Vec<Participant<'a>>,
    pub sessions: Vec<Session<'a>>,
    pub claims: Vec<Claim<'a>>,
    /// How many claims, by whom; `complete` says whether `claims` lists every one.
    pub claim_summary: ClaimSummary<'a>,
    pub attention: Vec<Attention<'a>>,
    pub cursor: String,
    /// In the snapshot only: every message with its receipts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Value>>,
    /// `acc_status` only, when the room does not fit its page: what was left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
}

/// What a capped `acc_status` left out, and where the whole room is read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Omitted {
    pub claims: usize,
    pub attention: usize,
    pub sessions: usize,
    pub participants: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_all: Option<&'static str>,
}

/// `acc detach`: the session closed, and what became of its claims.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detached<'a> {
    pub session_id: &'a str,
    pub closed: bool,
    pub released_claims: &'a [String],
    pub kept_claims: usize,
}

/// Files a command wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Written<'a> {
    pub files: &'a [String],
}

/// The claims of a status, counted.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimSummary<'a> {
    pub total: i64,
    pub live: i64,
    pub holders: Vec<Holder<'a>>,
    pub complete: bool,
}

/// A participant and how many claims it holds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Holder<'a> {
    pub participant_id: &'a str,
    pub claims: i64,
}

/// The roster resource: who is in the room.
#[derive(Debug, Clone, Serialize)]
pub struct Roster<'a> {
    pub workspace: Workspace<'a>,
    pub participants: Vec<Participant<'a>>,
    pub sessions: Vec<Session<'a>>,
}

/// A sync page: `delta`, or `full` with the snapshot.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sync<'a> {
    pub scope: &'static str,
    pub events: Vec<Event<'a>>,
    pub next_cursor: String,
    pub has_more: bool,
    pub attention: Vec<Attention<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Value>,
}

/// The body of an error.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    pub code: &'static str,
    pub message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<&'a Value>,
}

/// An error object: `{error: {code, message, details?}}`.
#[derive(Debug, Clone, Serialize)]
pub struct Error<'a> {
    pub error: ErrorBody<'a>,
}

/// A decision's derived status, as every surface shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionStatus<'a> {
    pub state: &'static str,
    pub is_head: bool,
    pub conflicted: bool,
    pub head_count: usize,
    pub current_message_id: Option<&'a str>,
    pub group_id: &'a str,
}

/// A receipt; `offer` is null when no transport recorded one.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt<'a> {
    pub participant_id: &'a str,
    pub state: &'static str,
    pub updated_at: String,
    pub offer: &'a Value,
}

/// The complete message, optionally with the caller's receipt or every recipient's.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message<'a> {
    pub message_id: &'a str,
    pub thread_id: &'a str,
    pub client_message_id: &'a str,
    pub workspace_id: &'a str,
    pub from_participant_id: &'a str,
    pub from_session_id: &'a str,
    pub to_participant_ids: &'a [String],
    pub kind: &'static str,
    pub obligation: &'static str,
    pub subject: &'a str,
    pub body: &'a str,
    pub in_reply_to: Option<&'a str>,
    pub artifacts: &'a Value,
    pub handoff: Option<&'a Value>,
    pub sent_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_change: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_status: Option<DecisionStatus<'a>>,
    /// An exact inbox read: the caller's receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt<'a>>,
    /// An exact history read: every recipient's receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipts: Option<Vec<Receipt<'a>>>,
}

/// The summary allowlist: never a body, handoff payload or recipient list.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSummary<'a> {
    pub message_id: &'a str,
    pub thread_id: &'a str,
    pub from_participant_id: &'a str,
    pub from_session_id: &'a str,
    pub kind: &'static str,
    pub obligation: &'static str,
    pub sent_at: String,
    pub in_reply_to: Option<&'a str>,
    pub subject: &'a str,
    pub body_bytes: usize,
    pub artifact_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_status: Option<DecisionStatus<'a>>,
    /// An inbox item: the caller's receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt<'a>>,
}

/// One recipient's delivery outcome.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery<'a> {
    pub recipient_participant_id: &'a str,
    pub outcome: &'a str,
    pub transport: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending_approval: bool,
}

/// A send-like result: `{message, delivery}`, plus `receipt` for a reply.
#[derive(Debug, Clone, Serialize)]
pub struct Sent<'a> {
    pub message: Message<'a>,
    pub delivery: Vec<Delivery<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt<'a>>,
}

/// A prune report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Prune<'a> {
    pub applied: bool,
    pub before_cursor: String,
    pub message_ids: &'a [String],
    pub count: usize,
}

/// A page of summaries within the byte cap; `scope` and `view` for history.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<&'static str>,
    pub items: Vec<Value>,
    pub next_cursor: Option<String>,
}

/// An exact history read: `{scope: "history", view: "message", items: [message]}`.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryExact<'a> {
    pub scope: &'static str,
    pub view: &'static str,
    pub items: [Message<'a>; 1],
}

/// `{claims: [...]}` (claim and renew).
#[derive(Debug, Clone, Serialize)]
pub struct Claims<'a> {
    pub claims: Vec<Claim<'a>>,
}

/// `{released: ...}`: the released claim ids, and for a force release the authority.
#[derive(Debug, Clone, Serialize)]
pub struct Released<'a> {
    pub released: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authority: Option<&'static str>,
}

/// `{intent, cleared?}`: the intent set, or null and whether one was cleared.
#[derive(Debug, Clone, Serialize)]
pub struct IntentResult<'a> {
    pub intent: Option<Intent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleared: Option<bool>,
}

/// An acknowledgement: the message and the caller's receipt.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Acked<'a> {
    pub message_id: &'a str,
    pub receipt: Receipt<'a>,
}

/// An MCP `acc_release` of one claim given as a scalar: `{released: id}`.
#[derive(Debug, Clone, Serialize)]
pub struct ReleasedOne<'a> {
    pub released: &'a str,
}

mod clients;
mod setup;
pub use clients::*;
pub use setup::*;

//! Typed rows of the store. These are storage types, not wire types: they do not derive serde.

use serde_json::Value;

use crate::closed::{
    ClaimMode, DecisionAction, Enforcement, IntentMode, IntentState, Lifecycle, LivePolicy,
    MessageKind, Obligation, ReceiptState,
};

use crate::Millis;

/// A session row.
#[derive(Debug, Clone)]
pub struct SessionRow {
    /// Session id.
    pub session_id: String,
    /// Owning participant.
    pub participant_id: String,
    /// Stable resumption key (`mcp:<participant>:<workspace>`, a client session id), if any.
    pub session_key: Option<String>,
    /// Generation counter (1 for the first opening).
    pub generation: i64,
    /// SHA-256 of the generation token.
    pub generation_hash: String,
    /// `cli`, `mcp`, `claude-code`, `codex`.
    pub harness: String,
    /// Client version as reported by the client's executable.
    pub client_version: Option<String>,
    /// Checkout path.
    pub checkout: Option<String>,
    /// Branch name.
    pub branch: Option<String>,
    /// Process id of the client, when known.
    pub pid: Option<i64>,
    /// `advisory` or `guarded`.
    pub enforcement: Enforcement,
    /// `manual` or `managed`.
    pub lifecycle: Lifecycle,
    /// Opened.
    pub opened_at: Millis,
    /// Last heartbeat.
    pub last_seen_at: Millis,
    /// Closed, when closed.
    pub closed_at: Option<Millis>,
    /// Where `pid` means something (`<boot id>/<pid namespace>` of the host that recorded
    /// it), so that another machine sharing the room never tests it; `None` when unknown, or
    /// in a store below layout revision 4 (layout bookkeeping: not part of the record).
    pub pid_scope: Option<String>,
}

/// An intent row.
#[derive(Debug, Clone)]
pub struct IntentRow {
    /// Session that holds the intent.
    pub session_id: String,
    /// Summary.
    pub summary: String,
    /// `observe|explore|edit|review|coordinate|wait`.
    pub mode: IntentMode,
    /// `active|blocked|waiting|done`.
    pub state: IntentState,
    /// Canonical resource hints.
    pub resource_hints: Vec<String>,
    /// Last update.
    pub updated_at: Millis,
}

/// A claim row. A claim whose `expires_at` has passed stays until released or renewed, so
/// its owner can be told it expired.
#[derive(Debug, Clone)]
pub struct ClaimRow {
    /// Claim id.
    pub claim_id: String,
    /// Owner session.
    pub session_id: String,
    /// Owner session generation counter at the last acquire or renew.
    pub generation: i64,
    /// Owner participant.
    pub participant_id: String,
    /// Canonical resource URI.
    pub resource: String,
    /// `shared` or `exclusive`.
    pub mode: ClaimMode,
    /// `advisory` or `guarded`.
    pub enforcement: Enforcement,
    /// Reason given.
    pub reason: Option<String>,
    /// First acquired.
    pub acquired_at: Millis,
    /// Last acquired or renewed.
    pub renewed_at: Millis,
    /// Lease end.
    pub expires_at: Millis,
    /// Lease length.
    pub lease_seconds: i64,
}

/// An event row.
#[derive(Debug, Clone)]
pub struct EventRow {
    /// Sequence number (the cursor).
    pub seq: i64,
    /// Event type (`claim.acquired`, ...).
    pub event_type: String,
    /// When.
    pub at: Millis,
    /// Acting session.
    pub session_id: Option<String>,
    /// Acting participant.
    pub participant_id: Option<String>,
    /// Payload.
    pub data: Value,
}

/// A participant row.
#[derive(Debug, Clone)]
pub struct ParticipantRow {
    /// Participant id.
    pub participant_id: String,
    /// First seen.
    pub created_at: Millis,
}

/// A message row.
#[derive(Debug, Clone)]
pub struct MessageRow {
    /// Store sequence (insertion order; pages and cursors use it through the message id).
    pub seq: i64,
    /// Message id.
    pub message_id: String,
    /// Thread id (the root's message id).
    pub thread_id: String,
    /// Idempotency key, scoped to the sender participant.
    pub client_message_id: String,
    /// Sender participant.
    pub from_participant_id: String,
    /// Sender session.
    pub from_session_id: String,
    /// Addressed recipients, sorted; empty for a room record.
    pub to_participant_ids: Vec<String>,
    /// Kind.
    pub kind: MessageKind,
    /// Obligation.
    pub obligation: Obligation,
    /// Subject.
    pub subject: String,
    /// Body.
    pub body: String,
    /// Answered message, for answers.
    pub in_reply_to: Option<String>,
    /// Artifacts (JSON array).
    pub artifacts: Value,
    /// Handoff payload (JSON object), for handoffs.
    pub handoff: Option<Value>,
    /// Decision change (`{action, messageIds}`), for decision changes.
    pub decision_change: Option<Value>,
    /// Hash of the logical content, for idempotent retries.
    pub content_hash: String,
    /// When recorded.
    pub sent_at: Millis,
    /// Sequence of its `message.recorded` event.
    pub event_seq: i64,
}

/// A receipt row: one recipient's delivery state for one message.
#[derive(Debug, Clone)]
pub struct ReceiptRow {
    /// The message's store sequence.
    pub message_seq: i64,
    /// Recipient participant.
    pub participant_id: String,
    /// How far the message got for this recipient.
    pub state: ReceiptState,
    /// Last transition.
    pub updated_at: Millis,
    /// Extensions (JSON object; `offer` lives here).
    pub extensions: Value,
    /// The message's obligation (copied, immutable).
    pub obligation: Obligation,
    /// Whether the message was addressed (not a room record; copied, immutable).
    pub addressed: bool,
}

/// A decision link: `from` replaces or withdraws `to`.
#[derive(Debug, Clone)]
pub struct DecisionLink {
    /// The changing decision.
    pub from_seq: i64,
    /// The changed decision.
    pub to_seq: i64,
    /// `replace` or `withdraw`.
    pub action: DecisionAction,
}

/// An ephemeral delivery binding (never part of the durable snapshot).
#[derive(Debug, Clone)]
pub struct BindingRow {
    /// Bound session.
    pub session_id: String,
    /// The generation it is tied to.
    pub generation: i64,
    /// Adapter id.
    pub adapter_id: String,
    /// The client version the handshake admitted.
    pub client_version: String,
    /// Modes the endpoint offers.
    pub modes: Vec<String>,
    /// `off`, `actionable` or `all`.
    pub live_policy: LivePolicy,
    /// Opaque endpoint reference (never shown).
    pub endpoint_ref: String,
    /// The endpoint facts given at binding time (for lease refresh; never shown).
    pub endpoint: Value,
    /// Lease end.
    pub lease_until: Millis,
    /// Created.
    pub created_at: Millis,
}

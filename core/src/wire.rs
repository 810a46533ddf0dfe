//! The JSON shapes the core stores or hands out, as types: a message's artifacts, handoff and
//! decision change (stored as JSON columns and published as they are), the logical content an
//! idempotency hash covers, and the details of errors. Events are in [`crate::events`].
//!
//! This is a wire module: its structs derive `Serialize`, and a change here changes stored or
//! published bytes. The content hash in particular must not change for the same message (a
//! retry across an upgrade would be refused): it hashes the sorted-key JSON of
//! [`LogicalContent`], and a unit test pins one hash.

use serde::Serialize;
use serde_json::Value;

use acc_store::{ClaimMode, DecisionAction, MessageKind, Obligation};

/// A wire value as JSON (objects with sorted keys). These types hold only strings, numbers,
/// booleans, lists and JSON values, for which serialisation cannot fail; were it to, the value
/// is `null` rather than a panic.
pub fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The length in bytes of `value` as compact JSON text, counted as it is written: no text and
/// no `Value` is built (a page's size is measured on every `acc_status`).
pub fn json_len<T: Serialize>(value: &T) -> usize {
    /// A writer that only counts.
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => json(value).to_string().len(),
    }
}

/// An artifact as stored: a canonical resource and an optional description (peer text).
#[derive(Debug, Clone, Serialize)]
pub struct StoredArtifact {
    /// Canonical resource URI.
    pub uri: String,
    /// Optional description.
    pub description: Option<String>,
}

/// A handoff's structured payload.
#[derive(Debug, Clone, Serialize)]
pub struct Handoff {
    /// What the work was for.
    pub goal: String,
    /// `complete`, `partial` or `blocked`.
    pub status: String,
    /// Done.
    pub completed: Vec<String>,
    /// Left to do.
    pub remaining: Vec<String>,
    /// In the way.
    pub blockers: Vec<String>,
    /// How to check.
    pub verification: Vec<String>,
}

/// What a decision does to earlier ones.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionChange {
    /// Replace or withdraw.
    pub action: DecisionAction,
    /// The decisions it changes.
    pub message_ids: Vec<String>,
}

/// What the idempotency hash of a message covers.
///
/// The fields are declared in the order of their JSON names, and the JSON values inside hold
/// their objects' keys sorted, so serialising it straight into the hasher gives the bytes that
/// every earlier build hashed (it went through a sorted `serde_json::Value` first).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogicalContent<'a> {
    /// Artifacts as stored.
    pub artifacts: &'a Value,
    /// Body.
    pub body: &'a str,
    /// Decision change.
    pub decision_change: Option<DecisionChange>,
    /// Handoff as stored.
    pub handoff: Option<&'a Value>,
    /// The answered message.
    pub in_reply_to: Option<&'a str>,
    /// Kind.
    pub kind: MessageKind,
    /// Obligation.
    pub obligation: Obligation,
    /// Subject.
    pub subject: &'a str,
    /// Recipients as given (sorted).
    pub to: &'a [String],
}

/// A claim that blocks a requested resource (`claim_conflict` details).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockingClaim {
    /// The claim.
    pub claim_id: String,
    /// Its resource.
    pub resource: String,
    /// Its mode.
    pub mode: ClaimMode,
    /// Its holder's session.
    pub owner_session_id: String,
    /// Its holder.
    pub owner_participant_id: String,
    /// The holder's presence.
    pub owner_presence: &'static str,
    /// When it lapses.
    pub expires_at: String,
}

/// One requested resource and the claims that block it.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimConflict {
    /// The requested resource.
    pub resource: String,
    /// What blocks it.
    pub claims: Vec<BlockingClaim>,
}

/// `claim_conflict` details.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictDetails<'a> {
    /// Each blocked resource.
    pub conflicts: &'a [ClaimConflict],
}

/// A present session, as `unknown_participant` details list it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PresentSession {
    /// Participant.
    pub participant_id: String,
    /// Client.
    pub harness: String,
    /// Presence.
    pub presence: &'static str,
}

/// `unknown_participant` details.
#[derive(Debug, Clone, Serialize)]
pub struct PresentDetails<'a> {
    /// Who is present.
    pub present: &'a [PresentSession],
}

/// Details naming one message (`idempotency_conflict`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageDetails<'a> {
    /// The message.
    pub message_id: &'a str,
}

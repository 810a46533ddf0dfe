//! The events the core and the router append to the workspace's event log, as types.
//!
//! Owns: each event's type string and the exact shape of its `data` (what `acc sync` and the
//! MCP `acc_sync` tool publish as stored). This is a wire module: its structs derive
//! `Serialize`, and a change here changes a published shape (the golden events under `tests/`
//! hold them). Must not: carry a message body or any other peer text beyond what is listed.

use serde::Serialize;

use crate::clock::{Millis, format_timestamp};
use crate::error::{AccError, AccResult};
use acc_store::{
    ClaimMode, ClaimRow, Enforcement, IntentMode, IntentState, Lifecycle, MessageKind, Obligation,
    Writer,
};

/// One event's data; [`Event::event_type`] names it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
pub enum Event {
    /// `participant.created`
    ParticipantCreated {
        /// The new participant.
        participant_id: String,
    },
    /// `session.opened`
    SessionOpened {
        /// The session.
        session_id: String,
        /// Its participant.
        participant_id: String,
        /// Its client.
        harness: String,
        /// Who ends it.
        lifecycle: Lifecycle,
        /// What its client enforces.
        enforcement: Enforcement,
        /// Always 1.
        generation: i64,
    },
    /// `session.reopened`
    SessionReopened {
        /// The session.
        session_id: String,
        /// Its new generation.
        generation: i64,
    },
    /// `session.closed`
    SessionClosed {
        /// The session.
        session_id: String,
        /// `client_session_end` or `finish`.
        reason: &'static str,
        /// For a finish: the handoff.
        #[serde(skip_serializing_if = "Option::is_none")]
        handoff_message_id: Option<String>,
    },
    /// `intent.updated`
    IntentUpdated {
        /// One line.
        summary: String,
        /// What kind of work.
        mode: IntentMode,
        /// Where it stands.
        state: IntentState,
        /// Canonical resources.
        resource_hints: Vec<String>,
    },
    /// `intent.cleared`
    IntentCleared {},
    /// `claim.acquired` and `claim.renewed`
    Claim(ClaimEvent),
    /// `claim.released`
    ClaimReleased {
        /// The claim.
        claim_id: String,
        /// Its resource.
        resource: String,
        /// `finish` when a finish released it.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<&'static str>,
    },
    /// `claim.force_released`
    ClaimForceReleased {
        /// The claim.
        claim_id: String,
        /// Its resource.
        resource: String,
        /// The holder's session.
        owner_session_id: String,
        /// The holder.
        owner_participant_id: String,
        /// The holder's generation the claim was tied to.
        replaced_generation: i64,
        /// Which rule allowed it.
        authority: &'static str,
        /// Why (the actor's words).
        reason: String,
        /// The actor's session, when a session acted.
        actor_session_id: Option<String>,
    },
    /// `message.recorded`
    MessageRecorded {
        /// The message.
        message_id: String,
        /// Its thread.
        thread_id: String,
        /// Its kind.
        kind: MessageKind,
        /// What it asks.
        obligation: Obligation,
        /// The sender.
        from_participant_id: String,
        /// The addressed participants (empty for a room record).
        to_participant_ids: Vec<String>,
        /// How many receipts it has.
        recipient_count: usize,
        /// The message it answers.
        in_reply_to: Option<String>,
    },
    /// `receipt.updated`
    ReceiptUpdated {
        /// The message.
        message_id: String,
        /// The recipient.
        participant_id: String,
        /// The state before.
        from: &'static str,
        /// The state after.
        to: &'static str,
    },
    /// `messages.pruned`
    MessagesPruned {
        /// The removed messages.
        message_ids: Vec<String>,
        /// Only messages before this cursor were considered.
        before_cursor: String,
    },
    /// `message.offer_succeeded` (`repeat` for the one repeat) and `message.offer_failed`
    /// (with `errorCode`).
    Offer(OfferEvent),
}

/// A claim as `claim.acquired` and `claim.renewed` record it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimEvent {
    #[serde(skip)]
    renewed: bool,
    claim_id: String,
    resource: String,
    mode: ClaimMode,
    enforcement: Enforcement,
    generation: i64,
    expires_at: String,
}

impl ClaimEvent {
    /// The event for a claim just acquired (or renewed, when `renewed`).
    pub fn new(claim: &ClaimRow, renewed: bool) -> Self {
        Self {
            renewed,
            claim_id: claim.claim_id.clone(),
            resource: claim.resource.clone(),
            mode: claim.mode,
            enforcement: claim.enforcement,
            generation: claim.generation,
            expires_at: format_timestamp(claim.expires_at),
        }
    }
}

/// One delivery attempt's event; never a body.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferEvent {
    /// The message.
    pub message_id: String,
    /// The recipient.
    pub recipient_participant_id: String,
    /// The session offered to.
    pub target_session_id: String,
    /// Its generation.
    pub target_generation: i64,
    /// The transport (`next-turn` or an adapter's).
    pub transport: String,
    /// The adapter id.
    pub adapter: String,
    /// The client version of the binding (empty for next-turn).
    pub client_version: String,
    /// Why it failed (a failed offer only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The one repeat of a live offer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub repeat: bool,
}

/// What a receipt's `extensions.offer` records of the transport that carried it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferRecord {
    /// The transport.
    pub transport: String,
    /// When.
    pub at: String,
    /// When the one repeat was shown (null until then).
    pub repeated_at: Option<String>,
}

impl OfferRecord {
    /// The record of an offer by `transport` at `at`.
    pub fn new(transport: &str, at: Millis) -> Self {
        Self {
            transport: transport.to_string(),
            at: format_timestamp(at),
            repeated_at: None,
        }
    }
}

impl Event {
    /// The event's type, as stored and published.
    pub fn event_type(&self) -> &'static str {
        match self {
            Self::ParticipantCreated { .. } => "participant.created",
            Self::SessionOpened { .. } => "session.opened",
            Self::SessionReopened { .. } => "session.reopened",
            Self::SessionClosed { .. } => "session.closed",
            Self::IntentUpdated { .. } => "intent.updated",
            Self::IntentCleared {} => "intent.cleared",
            Self::Claim(claim) if claim.renewed => "claim.renewed",
            Self::Claim(_) => "claim.acquired",
            Self::ClaimReleased { .. } => "claim.released",
            Self::ClaimForceReleased { .. } => "claim.force_released",
            Self::MessageRecorded { .. } => "message.recorded",
            Self::ReceiptUpdated { .. } => "receipt.updated",
            Self::MessagesPruned { .. } => "messages.pruned",
            Self::Offer(offer) if offer.error_code.is_some() => "message.offer_failed",
            Self::Offer(_) => "message.offer_succeeded",
        }
    }

    /// Append the event to the log in the writer's transaction; returns its sequence number.
    pub fn append(
        &self,
        w: &mut Writer<'_>,
        at: Millis,
        session_id: Option<&str>,
        participant_id: Option<&str>,
    ) -> AccResult<i64> {
        let data = to_json(self)?;
        Ok(w.append_event(self.event_type(), at, session_id, participant_id, &data)?)
    }
}

/// A wire value as JSON. These types hold only strings, numbers, booleans and lists, so this
/// cannot fail; should it, it is an internal error, never a panic.
pub fn to_json<T: Serialize>(value: &T) -> AccResult<serde_json::Value> {
    serde_json::to_value(value).map_err(|e| AccError::internal(format!("serialising: {e}")))
}

/// Parse a 16-digit event cursor.
pub fn parse_cursor(text: &str) -> AccResult<i64> {
    if text.len() == 16 && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse()
            .map_err(|_| AccError::usage(format!("cursor `{text}` is out of range")))
    } else {
        Err(AccError::usage(format!(
            "cursor `{text}` is not a 16-digit event cursor"
        )))
    }
}

/// Render an event cursor.
pub fn format_cursor(seq: i64) -> String {
    format!("{seq:016}")
}

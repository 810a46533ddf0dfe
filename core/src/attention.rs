//! The attention rules and what an attention item names: what status derives and a
//! participant's messages contribute.

use crate::clock::Millis;

/// An attention rule: PROTOCOL.md's six ("Attention and sync") and `claim_holder_offline`
/// (docs/decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionRule {
    /// A question or request waits for this participant's reply.
    ReplyRequired,
    /// A message waits for this participant's acknowledgement.
    AcknowledgementRequired,
    /// This participant's addressed message has a recipient with no live session.
    RecipientUnavailable,
    /// This session's declared intent overlaps another session's exclusive claim.
    ClaimConflict,
    /// Another live session's intent wants a resource this session holds.
    ClaimContended,
    /// A claim this session holds has passed its lease.
    ClaimExpired,
    /// A live claim is held by a session that is gone (closed or offline): it still stops
    /// others until it expires or someone releases it.
    ClaimHolderOffline,
}

impl AttentionRule {
    /// Stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReplyRequired => "reply_required",
            Self::AcknowledgementRequired => "acknowledgement_required",
            Self::RecipientUnavailable => "recipient_unavailable",
            Self::ClaimConflict => "claim_conflict",
            Self::ClaimContended => "claim_contended",
            Self::ClaimExpired => "claim_expired",
            Self::ClaimHolderOffline => "claim_holder_offline",
        }
    }
}

/// One attention item, addressed to a session and its participant.
#[derive(Debug, Clone)]
pub struct Attention {
    /// Which rule.
    pub rule: AttentionRule,
    /// The participant that should act.
    pub participant_id: String,
    /// The session that should act, when the rule is about a session.
    pub session_id: Option<String>,
    /// The claim concerned.
    pub claim_id: Option<String>,
    /// The resource concerned.
    pub resource: Option<String>,
    /// The message concerned.
    pub message_id: Option<String>,
    /// The other party (session) involved.
    pub other_session_id: Option<String>,
    /// The other party (participant) involved.
    pub other_participant_id: Option<String>,
    /// When the condition arose, where known.
    pub since: Option<Millis>,
    /// When the claim concerned stops counting (`claim_holder_offline`).
    pub expires_at: Option<Millis>,
}

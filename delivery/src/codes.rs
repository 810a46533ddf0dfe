//! The closed set of codes a recipient's delivery may end with, beside its outcome.
//!
//! SUPPLEMENT.md section 7 lists thirteen safe error codes. Four more name what the list has no
//! word for, and are recorded in `docs/decisions.md`: `adapter_unavailable` (the sender cannot
//! load the recipient's adapter), `no_evidence` and `contract_mismatch` (evidence does not admit
//! the binding's client version: no passing capture, or a contract declared otherwise than the
//! contracts folder states it), and `offer_outcome_unknown` (an offer still running at its
//! deadline). An adapter's own refusal code is taken only when it is one of the thirteen.

use std::fmt;

/// Why a recipient's delivery stopped short of a live offer (its receipt stays queued).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeliveryCode {
    /// The recipient has more than one live session.
    AmbiguousRecipientSessions,
    /// The binding's policy does not push this kind.
    DeliveryDisabled,
    /// The client was busy and refused the offer.
    RecipientBusy,
    /// The recipient has no live session.
    RecipientUnavailable,
    /// The transport failed (the adapter crashed, hung up or answered garbage).
    TransportError,
    /// The transport refused the offer.
    TransportRejected,
    /// The client refused the offer for want of permission.
    TransportPermissionDenied,
    /// The client version is not one the contract can admit.
    UnsupportedClientVersion,
    /// The client version is below the contract's evidenced minimum.
    BelowMinimumVersion,
    /// The contract lists the client version as known bad.
    KnownBadVersion,
    /// The adapter answered for another client version than the binding's.
    ProtocolMismatch,
    /// The handshake that refreshes a lapsed lease failed.
    HandshakeFailed,
    /// The target session moved to another generation.
    SessionGenerationStale,
    /// The sender cannot load the recipient's adapter.
    AdapterUnavailable,
    /// No passing capture backs the client version here.
    NoEvidence,
    /// The adapter declares its contract otherwise than the contracts folder states it.
    ContractMismatch,
    /// The offer was still running at its deadline: what the transport did is not known.
    OfferOutcomeUnknown,
}

impl DeliveryCode {
    /// Every code, the specification's thirteen first.
    pub const ALL: [Self; 17] = [
        Self::AmbiguousRecipientSessions,
        Self::DeliveryDisabled,
        Self::RecipientBusy,
        Self::RecipientUnavailable,
        Self::TransportError,
        Self::TransportRejected,
        Self::TransportPermissionDenied,
        Self::UnsupportedClientVersion,
        Self::BelowMinimumVersion,
        Self::KnownBadVersion,
        Self::ProtocolMismatch,
        Self::HandshakeFailed,
        Self::SessionGenerationStale,
        Self::AdapterUnavailable,
        Self::NoEvidence,
        Self::ContractMismatch,
        Self::OfferOutcomeUnknown,
    ];

    /// How many of [`Self::ALL`] are the specification's safe error codes.
    pub const SAFE: usize = 13;

    /// The published spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AmbiguousRecipientSessions => "ambiguous_recipient_sessions",
            Self::DeliveryDisabled => "delivery_disabled",
            Self::RecipientBusy => "recipient_busy",
            Self::RecipientUnavailable => "recipient_unavailable",
            Self::TransportError => "transport_error",
            Self::TransportRejected => "transport_rejected",
            Self::TransportPermissionDenied => "transport_permission_denied",
            Self::UnsupportedClientVersion => "unsupported_client_version",
            Self::BelowMinimumVersion => "below_minimum_version",
            Self::KnownBadVersion => "known_bad_version",
            Self::ProtocolMismatch => "protocol_mismatch",
            Self::HandshakeFailed => "handshake_failed",
            Self::SessionGenerationStale => "session_generation_stale",
            Self::AdapterUnavailable => "adapter_unavailable",
            Self::NoEvidence => "no_evidence",
            Self::ContractMismatch => "contract_mismatch",
            Self::OfferOutcomeUnknown => "offer_outcome_unknown",
        }
    }

    /// A code an adapter refused an offer with: the safe code it spells, and
    /// `transport_rejected` for anything else (peer text never becomes a code of its own).
    pub fn from_adapter(code: &str) -> Self {
        Self::ALL[..Self::SAFE]
            .iter()
            .copied()
            .find(|c| c.as_str() == code)
            .unwrap_or(Self::TransportRejected)
    }

    /// What the code means, for a person.
    pub fn hint(self) -> &'static str {
        match self {
            Self::NoEvidence => {
                "no passing capture in the contracts folders backs this version here (see acc contract verify; acc contract capture records one)"
            }
            Self::ContractMismatch => {
                "the adapter declares its contract otherwise than the contracts folder states it"
            }
            Self::BelowMinimumVersion => "the version is below the contract's evidenced minimum",
            Self::KnownBadVersion => "the contract lists this version as known bad",
            _ => "the client's version is not one the contract can admit",
        }
    }
}

impl fmt::Display for DeliveryCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::DeliveryCode;

    #[test]
    fn each_code_has_one_spelling_and_peer_text_is_never_a_code() {
        let mut spellings: Vec<&str> = DeliveryCode::ALL.iter().map(|c| c.as_str()).collect();
        spellings.sort_unstable();
        spellings.dedup();
        assert_eq!(spellings.len(), DeliveryCode::ALL.len());
        for code in &DeliveryCode::ALL[..DeliveryCode::SAFE] {
            assert_eq!(DeliveryCode::from_adapter(code.as_str()), *code);
        }
        // ACC's own codes are not an adapter's to claim, nor is anything else.
        for text in [
            "no_evidence",
            "offer_outcome_unknown",
            "",
            "recipient_busy\n",
            "RECIPIENT_BUSY",
        ] {
            assert_eq!(
                DeliveryCode::from_adapter(text),
                DeliveryCode::TransportRejected
            );
        }
    }
}

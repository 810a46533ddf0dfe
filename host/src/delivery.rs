//! Delivery after commit: what became of each recipient of a recorded message.
//!
//! Owns: the `delivery` list of every send-like result. Today every route is durable: each
//! recipient's receipt is `queued` and the outcome says so, with `recipient_unavailable` where
//! the recipient has no live session. The plugin router replaces [`route`] and only it.
//! Must not: run inside a store transaction, or change a receipt except through `core`.

use std::collections::BTreeSet;

use crate::store::{MessageRow, ReceiptRow};

/// The transport of a durable-only route.
pub const DURABLE: &str = "durable";

/// One recipient's delivery outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryOutcome {
    /// Recipient participant.
    pub recipient_participant_id: String,
    /// `queued`, `offered`, `woken`, `retrieved`, `acknowledged`.
    pub outcome: String,
    /// `durable`, `next-turn`, `claude-inbox`, `codex-app-server`.
    pub transport: String,
    /// A safe closed error code, when a route failed or was unavailable.
    pub error_code: Option<String>,
    /// The client holds a wake for its user's approval.
    pub pending_approval: bool,
}

/// Route a freshly committed message. `live` holds the participants that have a live session.
pub fn route(
    message: &MessageRow,
    receipts: &[ReceiptRow],
    live: &BTreeSet<String>,
) -> Vec<DeliveryOutcome> {
    let addressed = !message.to_participant_ids.is_empty();
    receipts
        .iter()
        .map(|receipt| DeliveryOutcome {
            recipient_participant_id: receipt.participant_id.clone(),
            outcome: receipt.state.clone(),
            transport: DURABLE.into(),
            error_code: (addressed
                && receipt.state == "queued"
                && !live.contains(&receipt.participant_id))
            .then(|| "recipient_unavailable".to_string()),
            pending_approval: false,
        })
        .collect()
}

//! The application services: record in the protocol core, then route through delivery.
//!
//! Owns: the one place where sending is "record in one transaction, then route after the
//! commit". The consent to live delivery comes in through `acc_delivery::ConsentRecords`
//! (the installer's records implement it). The router itself, the plugins and the envelope
//! live in `acc-delivery`.
//! Must not: route inside a store transaction, or offer a replayed message again.

use std::sync::Arc;

use acc_delivery::router::{ConsentRecords, Delivery, DeliveryOutcome, current_outcomes};

use acc_core::Core;
use acc_core::error::{AccError, AccResult};
use acc_core::identity::Caller;
use acc_core::messages::{Draft, FinishRequest, MessageView, ReplyRequest, SendRequest};
use acc_store::LivePolicy;
use acc_store::ReceiptRow;

/// The application services: the protocol core (which records) and delivery (which routes),
/// so that sending is "record in one transaction, then route after the commit". The CLI, the
/// MCP server, the hooks and the capture tool all act through it.
#[derive(Debug)]
pub struct App {
    /// The protocol core.
    pub core: Core,
    /// Plugins and routing state.
    pub delivery: Delivery,
}

impl App {
    /// The application over a core, reading the recipients' consent to live delivery from
    /// `consent` (the installer's records, `acc_install::InstalledConsent`), with
    /// plugins loaded on first need.
    pub fn new(core: Core, consent: Arc<dyn ConsentRecords>) -> Self {
        Self {
            core,
            delivery: Delivery::new(consent),
        }
    }
}

impl App {
    /// Publish (or replace) the caller session's binding to an adapter.
    pub fn bind(
        &mut self,
        caller: &Caller,
        adapter_id: &str,
        live_policy: &str,
        endpoint: &serde_json::Value,
    ) -> AccResult<acc_store::BindingRow> {
        let live_policy = AccError::parse::<LivePolicy>(live_policy)?;
        self.delivery
            .bind(&mut self.core, caller, adapter_id, live_policy, endpoint)
    }

    /// Remove the caller session's binding to an adapter (or all of them).
    pub fn unbind(&mut self, caller: &Caller, adapter_id: Option<&str>) -> AccResult<usize> {
        self.delivery.unbind(&mut self.core, caller, adapter_id)
    }

    /// Render the caller's next-turn context through a body adapter.
    pub fn next_turn(
        &mut self,
        caller: &Caller,
        adapter_id: &str,
    ) -> AccResult<acc_adapter_api::wire::RenderAnswer> {
        self.delivery.next_turn(&mut self.core, caller, adapter_id)
    }

    /// How many messages next-turn context would carry for `caller` now.
    pub fn waiting(&mut self, caller: &Caller) -> AccResult<usize> {
        self.delivery.waiting(&mut self.core, caller)
    }
}

/// A recorded (or replayed) message and what became of each recipient.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The message.
    pub message: MessageView,
    /// Receipts as committed (before any offer).
    pub receipts: Vec<ReceiptRow>,
    /// Delivery outcomes, one per recipient.
    pub delivery: Vec<DeliveryOutcome>,
    /// Whether this was an idempotent retry returning the original.
    pub replayed: bool,
    /// For a reply: the caller's receipt of the original message.
    pub original_receipt: Option<ReceiptRow>,
    /// For a finish: the claims released.
    pub released_claims: Vec<String>,
}

/// The application services that send: record in one transaction, then route after the
/// commit. A replayed (idempotent) send reports the current outcomes and offers nothing again.
impl App {
    /// Record a prepared message, then route it.
    pub fn send(&mut self, caller: &Caller, draft: Draft) -> AccResult<Sent> {
        // The route's check of each recipient reads the send's own transaction: a send to
        // recipients that are not live is one transaction, not two.
        let liveness = self.core.liveness();
        let (recorded, checked) =
            self.core
                .record_then(caller, draft, |r, message, receipts, now| {
                    Delivery::check_routes(r, now, &*liveness, message, receipts)
                })?;
        let delivery = match checked {
            Some(checked) if !recorded.replayed => self.delivery.route(
                &mut self.core,
                &recorded.message,
                &recorded.receipts,
                checked,
            )?,
            _ => current_outcomes(&recorded.receipts),
        };
        Ok(Sent {
            message: recorded.message,
            receipts: recorded.receipts,
            delivery,
            replayed: recorded.replayed,
            original_receipt: recorded.original_receipt,
            released_claims: recorded.released_claims,
        })
    }

    /// Send a generic message (`note`, `question`, `request`, `decision`).
    pub fn send_message(&mut self, caller: &Caller, request: &SendRequest) -> AccResult<Sent> {
        let draft = Core::prepare_message(request)?;
        self.send(caller, draft)
    }

    /// Answer a message: record an `answer` in its thread and acknowledge it, atomically; then
    /// route the answer.
    pub fn reply(&mut self, caller: &Caller, request: &ReplyRequest) -> AccResult<Sent> {
        let draft = Core::prepare_reply(request)?;
        self.send(caller, draft)
    }

    /// Finish: record a handoff, release the session's claims and close its presence; then
    /// route the handoff.
    pub fn finish(&mut self, caller: &Caller, request: &FinishRequest) -> AccResult<Sent> {
        let draft = Core::prepare_finish(request)?;
        self.send(caller, draft)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acc_adapter_api::wire::Envelope;
    use acc_store::MessageRow;
    use serde_json::Value;

    fn message() -> MessageView {
        MessageView {
            message: MessageRow {
                seq: 7,
                message_id: "message_0123456789abcdefghijkl".into(),
                thread_id: "message_0123456789abcdefghijkl".into(),
                client_message_id: "retry-key-1".into(),
                from_participant_id: "alice".into(),
                from_session_id: "session_0123456789abcdefghijkl".into(),
                to_participant_ids: vec!["bob".into()],
                kind: acc_store::MessageKind::Question,
                obligation: acc_store::Obligation::Reply,
                subject: "which branch is release?".into(),
                body: "line one\n~~~~ not a fence".into(),
                in_reply_to: None,
                artifacts: serde_json::json!([{ "kind": "file", "ref": "src/a.rs" }]),
                handoff: None,
                decision_change: None,
                content_hash: "0".repeat(64),
                sent_at: 1_795_000_000_123,
                event_seq: 9,
            },
            decision: None,
        }
    }

    /// The envelope adapters receive is the published shape in the golden file, and (today)
    /// exactly the CLI's `--json` message view, though the two are built apart.
    #[test]
    fn the_envelope_is_the_golden_shape_and_equals_the_message_view() {
        let view = message();
        let envelope =
            serde_json::to_value(acc_delivery::envelope(&view, "project-1")).expect("json");
        assert_eq!(envelope, crate::views::message(&view, "project-1"));
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/golden/adapter/envelope.json");
        if std::env::var_os("ACC_UPDATE_GOLDEN").is_some() {
            let mut text = serde_json::to_string_pretty(&envelope).expect("json");
            text.push('\n');
            std::fs::write(&path, text).expect("write golden");
            return;
        }
        let golden: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{}: {e}; run with ACC_UPDATE_GOLDEN=1", path.display())
            }))
            .expect("golden json");
        assert_eq!(
            envelope, golden,
            "the adapter envelope changed: if deliberate, rerun with ACC_UPDATE_GOLDEN=1 and review"
        );
        // A reader ignores what it does not know and defaults what an older host leaves out.
        let mut newer = golden.clone();
        newer["fieldFromTheFuture"] = Value::from(1);
        let read: Envelope = serde_json::from_value(newer).expect("newer envelope");
        assert_eq!(read.message_id, "message_0123456789abcdefghijkl");
        let older: Envelope =
            serde_json::from_value(serde_json::json!({ "messageId": "m" })).expect("older");
        assert_eq!(older.body, "");
    }
}

//! What delivery records: the attempt events of offers, a receipt moving to `offered`, the one
//! repeat, and the sessions' delivery bindings.
//!
//! Owns: every store write the router makes. The router decides what to attempt and calls
//! adapters between transactions; these methods check, inside one write transaction each, that
//! the target is still the recipient's session at the recorded generation before anything moves.
//! Must not: copy a body into an event, or move a receipt backward.

use acc_store::{BindingRow, MessageRow, ReceiptState, SessionRow, Writer};
use serde_json::Value;

use crate::Core;
use crate::clock::{Millis, format_timestamp};
use crate::error::{AccError, AccResult, ErrorCode};
use crate::events::{Event, OfferEvent, OfferRecord};
use crate::identity::{Caller, check_caller, verify_caller};
use crate::messages::advance;
use crate::wire;

/// One delivery attempt: which message, to whom, through what. Its events never carry a body.
#[derive(Debug, Clone, Copy)]
pub struct OfferAttempt<'a> {
    /// The message offered.
    pub message: &'a MessageRow,
    /// The recipient participant.
    pub recipient: &'a str,
    /// The session the offer targets.
    pub session_id: &'a str,
    /// The target session's generation when the offer was admitted.
    pub generation: i64,
    /// The adapter that carried it.
    pub adapter: &'a str,
    /// The transport it went through.
    pub transport: &'a str,
    /// The client version the binding recorded (empty for next-turn).
    pub client_version: &'a str,
}

impl OfferAttempt<'_> {
    /// The attempt's event: succeeded, failed with `error_code`, or the one `repeat`.
    fn event(&self, error_code: Option<&str>, repeat: bool) -> Event {
        Event::Offer(OfferEvent {
            message_id: self.message.message_id.clone(),
            recipient_participant_id: self.recipient.to_string(),
            target_session_id: self.session_id.to_string(),
            target_generation: self.generation,
            transport: self.transport.to_string(),
            adapter: self.adapter.to_string(),
            client_version: self.client_version.to_string(),
            error_code: error_code.map(str::to_string),
            repeat,
        })
    }

    /// Append one of the attempt's events.
    fn append(&self, w: &mut Writer<'_>, event: Event, now: Millis) -> AccResult<()> {
        event.append(w, now, Some(self.session_id), Some(self.recipient))?;
        Ok(())
    }

    /// Whether the target session is still the recipient's, at the recorded generation.
    fn target_is_current(&self, w: &Writer<'_>) -> AccResult<bool> {
        let Some(session) = w.reader().session(self.session_id)? else {
            return Ok(false);
        };
        Ok(session.participant_id == self.recipient && session.generation == self.generation)
    }

    /// A successful offer, if the target is current: the event, and the receipt `offered` when
    /// it is still queued. A receipt that moved on meanwhile was carried another way while the
    /// adapter worked (a Codex queued submission starts a turn at once, whose next-turn hook may
    /// carry the same message before the offer returns): the live offer still happened, so it is
    /// recorded and reported as offered, and the receipt keeps its state.
    fn record_offered(&self, w: &mut Writer<'_>, now: Millis) -> AccResult<bool> {
        if !self.target_is_current(w)? {
            return Ok(false);
        }
        if self.record_offered_to_current(w, now)? {
            return Ok(true);
        }
        let moved_on = w
            .reader()
            .receipt(self.message.seq, self.recipient)?
            .is_some_and(|r| r.state != ReceiptState::Queued);
        if moved_on {
            self.append(w, self.event(None, false), now)?;
        }
        Ok(moved_on)
    }

    /// [`Self::record_offered`] once [`Self::target_is_current`] was checked in the same
    /// transaction.
    fn record_offered_to_current(&self, w: &mut Writer<'_>, now: Millis) -> AccResult<bool> {
        let Some(mut receipt) = w.reader().receipt(self.message.seq, self.recipient)? else {
            return Ok(false);
        };
        if receipt.state != ReceiptState::Queued {
            return Ok(false);
        }
        advance(&mut receipt, ReceiptState::Offered, now)?;
        if let Value::Object(map) = &mut receipt.extensions {
            map.insert(
                "offer".into(),
                wire::json(&OfferRecord::new(self.transport, now)),
            );
        }
        w.update_receipt(&receipt)?;
        self.append(w, self.event(None, false), now)?;
        Ok(true)
    }

    /// One repeat: another `offer_succeeded` with `repeat: true` and `repeatedAt`, never
    /// changing the receipt's state or time; at most once, and not after retrieval.
    fn record_repeat(&self, w: &mut Writer<'_>, now: Millis) -> AccResult<()> {
        let Some(mut receipt) = w.reader().receipt(self.message.seq, self.recipient)? else {
            return Ok(());
        };
        let already = receipt
            .extensions
            .pointer("/offer/repeatedAt")
            .is_some_and(|r| !r.is_null());
        if receipt.state != ReceiptState::Offered || already {
            return Ok(());
        }
        if let Some(Value::Object(offer)) = receipt.extensions.get_mut("offer") {
            offer.insert("repeatedAt".into(), Value::from(format_timestamp(now)));
        }
        w.update_receipt(&receipt)?;
        self.append(w, self.event(None, true), now)
    }
}

impl Core {
    /// Record an offer the adapter accepted. `true` when it counts as offered: the target was
    /// still the recipient's session at the attempt's generation (the receipt then moves to
    /// `offered` if it was queued). `false`: the target went stale, and nothing was recorded.
    pub fn record_offer_succeeded(&mut self, attempt: &OfferAttempt<'_>) -> AccResult<bool> {
        let now = self.now();
        self.store_for_write()?
            .write(|w| attempt.record_offered(w, now))
    }

    /// Record an offer that failed or was refused with `code`; the receipt stays queued.
    pub fn record_offer_failed(&mut self, attempt: &OfferAttempt<'_>, code: &str) -> AccResult<()> {
        let now = self.now();
        self.store_for_write()?
            .write(|w| attempt.append(w, attempt.event(Some(code), false), now))
    }

    /// Record what one next turn carried to one session: the new messages in `fresh` become
    /// `offered` when the session is still at the attempts' generation (checked once, in the same
    /// transaction, for all of them), and each of `repeats` records its one repeat.
    pub fn record_carried(
        &mut self,
        fresh: &[OfferAttempt<'_>],
        repeats: &[OfferAttempt<'_>],
    ) -> AccResult<()> {
        let now = self.now();
        self.store_for_write()?.write(|w| {
            if let Some(first) = fresh.first()
                && first.target_is_current(w)?
            {
                for attempt in fresh {
                    attempt.record_offered_to_current(w, now)?;
                }
            }
            for attempt in repeats {
                attempt.record_repeat(w, now)?;
            }
            Ok::<_, AccError>(())
        })
    }

    /// The caller's open session at its current generation, or the error that says why not.
    /// Creates the store if there is none yet (a binding is the first write to come).
    pub fn caller_session(&mut self, caller: &Caller) -> AccResult<SessionRow> {
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?
            .read(|r| check_caller(r, &workspace_id, caller))
    }

    /// Publish (or replace) the caller session's `binding`, refused when the session's
    /// generation is no longer the binding's (it changed while the adapter verified the
    /// endpoint).
    pub fn put_binding(&mut self, caller: &Caller, binding: &BindingRow) -> AccResult<()> {
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let again = verify_caller(w, &workspace_id, caller, now)?;
            if again.generation != binding.generation {
                return Err(AccError::new(
                    ErrorCode::GenerationStale,
                    "the session's generation changed during the handshake",
                ));
            }
            Ok(w.put_binding(binding)?)
        })
    }

    /// Store a binding refreshed after its lease lapsed, if its session still has a binding
    /// to that adapter at the same generation (otherwise it was replaced or dropped meanwhile,
    /// and is left so).
    pub fn refresh_binding(&mut self, binding: &BindingRow) -> AccResult<()> {
        self.store_for_write()?.write(|w| {
            if w.reader()
                .binding(&binding.session_id, &binding.adapter_id)?
                .is_some_and(|b| b.generation == binding.generation)
            {
                w.put_binding(binding)?;
            }
            Ok::<_, AccError>(())
        })
    }

    /// Remove the caller session's binding to `adapter_id` (or all of them); how many went.
    pub fn drop_bindings(&mut self, caller: &Caller, adapter_id: Option<&str>) -> AccResult<usize> {
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let session = verify_caller(w, &workspace_id, caller, now)?;
            Ok(w.drop_bindings(&session.session_id, adapter_id)?)
        })
    }
}

#[cfg(test)]
mod tests;

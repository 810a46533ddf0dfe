//! Routing a committed send: each live recipient's offer prepared (admission, consent, lease,
//! handshake, the re-check just before the transport), run under one deadline, and its answer
//! recorded; a late answer is watched for and recorded when it comes.

use super::*;

impl Delivery {
    /// Route a committed message to each addressed recipient (room records are never routed),
    /// after [`Delivery::check_routes`] ran in the send's own transaction: steps 4 to 6 for each
    /// receipt it found live.
    pub fn route(
        &mut self,
        core: &mut Core,
        message: &MessageView,
        receipts: &[ReceiptRow],
        checked: Checked,
    ) -> AccResult<Vec<DeliveryOutcome>> {
        let message = &message.message;
        let mut outcomes: Vec<Option<DeliveryOutcome>> = vec![None; receipts.len()];
        let mut ready = Vec::new();
        for (index, (receipt, route)) in receipts.iter().zip(checked.0).enumerate() {
            let recipient = receipt.participant_id.as_str();
            let prepared = match route {
                Route::Done(done) => Err(done),
                Route::Offer {
                    session_id,
                    generation,
                    binding,
                } => self.prepare(core, message, recipient, &session_id, generation, binding)?,
            };
            match prepared {
                Ok(offer) => ready.push((index, offer)),
                Err(done) => outcomes[index] = Some(done),
            }
        }
        // Every live offer of this send runs at once, under one deadline.
        let deadline = Instant::now() + self.offer_deadline;
        let started: Vec<_> = ready
            .into_iter()
            .map(|(index, offer)| {
                let call = offer.adapter.start(Operation::Offer, offer.request.clone());
                (index, offer, call)
            })
            .collect();
        for (index, offer, call) in started {
            let answer = match call {
                Err(failed) => Err(failed),
                Ok(call) => match call.wait_until(deadline) {
                    Some(answer) => answer,
                    None => {
                        outcomes[index] = Some(self.late(core, offer, call)?);
                        continue;
                    }
                },
            };
            outcomes[index] = Some(record_answer(
                core,
                &offer.attempt(),
                answer,
                &offer.adapter,
            )?);
        }
        Ok(outcomes.into_iter().flatten().collect())
    }

    /// An offer still running at the deadline: its outcome is unknown, and recorded so (not as
    /// a refusal). A watcher keeps waiting for it while this process lives and records what
    /// it finally answers: an acceptance makes the receipt `offered` then.
    fn late(
        &mut self,
        core: &mut Core,
        offer: ReadyOffer,
        call: PendingCall<acc_adapter_api::Answer>,
    ) -> AccResult<DeliveryOutcome> {
        core.record_offer_failed(&offer.attempt(), DeliveryCode::OfferOutcomeUnknown.as_str())?;
        let done = outcome(
            &offer.recipient,
            Outcome::Queued,
            &offer.adapter.transport,
            Some(DeliveryCode::OfferOutcomeUnknown),
        );
        if let Ok(mut watcher_core) = core.another() {
            let spawned = std::thread::Builder::new()
                .name("acc-late-offer".into())
                .spawn(move || {
                    let Some(answer) = call.wait_until(Instant::now() + LATE_ANSWER_WAIT) else {
                        return;
                    };
                    let _ =
                        record_answer(&mut watcher_core, &offer.attempt(), answer, &offer.adapter);
                });
            if let Ok(handle) = spawned {
                self.late_offers.push(handle);
            }
        }
        Ok(done)
    }

    /// Wait, at most `limit`, for the late offers this process is still watching to answer
    /// and be recorded (tests, and embedders that want them settled before they go on).
    pub fn settle_late_offers(&mut self, limit: Duration) {
        let end = Instant::now() + limit;
        while Instant::now() < end && self.late_offers.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.late_offers.retain(|h| !h.is_finished());
    }

    /// Steps 1 to 3 of the router for every receipt of `message`, read in `r`: receipt still
    /// queued, sole live session, binding, policy. A send runs it inside its own write
    /// transaction ([`Core::record_then`]), so a send whose recipients are not live costs no
    /// second transaction.
    pub fn check_routes(
        r: &Reader<'_>,
        now: Millis,
        liveness: &dyn Liveness,
        message: &MessageRow,
        receipts: &[ReceiptRow],
    ) -> AccResult<Checked> {
        let mut routes = Vec::with_capacity(receipts.len());
        if !message.to_participant_ids.is_empty() {
            let recipients: Vec<&str> =
                receipts.iter().map(|r| r.participant_id.as_str()).collect();
            r.prefetch_routes(&recipients)?;
        }
        for receipt in receipts {
            let recipient = receipt.participant_id.as_str();
            routes.push(if message.to_participant_ids.is_empty() {
                Route::Done(outcome(recipient, receipt.state, DURABLE, None))
            } else {
                // The receipt as the send is about to commit it: no need to read it back.
                check_route(r, now, liveness, receipt, message)?
            });
        }
        Ok(Checked(routes))
    }
}

/// Record what the adapter answered an offer and say what became of the recipient.
fn record_answer(
    core: &mut Core,
    attempt: &OfferAttempt<'_>,
    answer: Result<acc_adapter_api::Answer, crate::plugins::CallFailure>,
    adapter: &LoadedAdapter,
) -> AccResult<DeliveryOutcome> {
    let recipient = attempt.recipient;
    let transport = attempt.transport;
    match answer {
        Ok(answer) if answer.status != OfferStatus::Refused => {
            let pending = answer.status == OfferStatus::AcceptedPendingApproval;
            // Confirm the adapter answered for the binding's client version.
            if answer.client_version.as_str() != attempt.client_version {
                core.record_offer_failed(attempt, DeliveryCode::ProtocolMismatch.as_str())?;
                return Ok(outcome(
                    recipient,
                    Outcome::Queued,
                    transport,
                    Some(DeliveryCode::ProtocolMismatch),
                ));
            }
            let mut done = if adapter.offer_kind == OfferKind::Wake {
                // A wake is the one accepted offer that records nothing.
                outcome(recipient, Outcome::Woken, transport, None)
            } else if core.record_offer_succeeded(attempt)? {
                outcome(recipient, Outcome::Offered, transport, None)
            } else {
                outcome(
                    recipient,
                    Outcome::Queued,
                    transport,
                    Some(DeliveryCode::SessionGenerationStale),
                )
            };
            done.pending_approval = pending;
            Ok(done)
        }
        refused_or_failed => {
            let code = match &refused_or_failed {
                Ok(refused) => DeliveryCode::from_adapter(refused.code.as_str()),
                Err(_) => DeliveryCode::TransportError,
            };
            core.record_offer_failed(attempt, code.as_str())?;
            Ok(outcome(recipient, Outcome::Queued, transport, Some(code)))
        }
    }
}

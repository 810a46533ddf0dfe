//! Admission of one live offer (steps 4 and 5 of the router): the adapter's contract admitted
//! for the binding's client version, the recipient's consent, the binding's lease refreshed
//! when it has run out, and the re-check of policy, sole live session and the exact binding
//! just before the transport.

use super::*;

impl Delivery {
    /// Steps 4 and 5: contract admission, consent, lease refresh and the re-check just before
    /// the transport; the offer ready to start, or what became of the recipient instead.
    pub(super) fn prepare(
        &mut self,
        core: &mut Core,
        message: &MessageRow,
        recipient: &str,
        session_id: &str,
        generation: i64,
        binding: BindingRow,
    ) -> AccResult<Result<ReadyOffer, DeliveryOutcome>> {
        let adapter = match self.plugins()?.get(&binding.adapter_id) {
            Some(adapter) => adapter.clone(),
            // The recipient bound an adapter this sender's process cannot load.
            None => {
                return Ok(Err(outcome(
                    recipient,
                    Outcome::Queued,
                    DURABLE,
                    Some(DeliveryCode::AdapterUnavailable),
                )));
            }
        };
        let transport = adapter.transport.clone();
        if let Err(code) = self.admit(&adapter, &binding.client_version) {
            return Ok(Err(outcome(
                recipient,
                Outcome::Queued,
                DURABLE,
                Some(code),
            )));
        }
        // The recipient's recorded consent may have been narrowed since the binding was made.
        if let Some((client, dir)) =
            consent_source(&adapter, &binding.endpoint).filter(|_| self.consent_override.is_none())
        {
            let consent = recorded_consent(&*self.records, client, &dir);
            if !policy_allows(binding.live_policy.min(consent), message) {
                return Ok(Err(outcome(
                    recipient,
                    Outcome::Queued,
                    DURABLE,
                    Some(DeliveryCode::DeliveryDisabled),
                )));
            }
        }
        let mut binding = binding;
        if binding.lease_until <= core.now() {
            let refreshed = self.refresh_lease(
                core,
                &adapter,
                session_id,
                generation,
                recipient,
                &mut binding,
            )?;
            if let Err(code) = refreshed {
                return Ok(Err(outcome(
                    recipient,
                    Outcome::Queued,
                    DURABLE,
                    Some(code),
                )));
            }
        }
        // Re-check policy, sole live session and the exact binding immediately before the transport.
        match recheck_route(core, message, recipient)? {
            Route::Offer {
                session_id: again,
                generation: gen_again,
                binding: current,
            } if again == session_id
                && gen_again == generation
                && current.adapter_id == binding.adapter_id => {}
            Route::Done(done) => return Ok(Err(done)),
            Route::Offer { .. } => {
                return Ok(Err(outcome(
                    recipient,
                    Outcome::Queued,
                    DURABLE,
                    Some(DeliveryCode::SessionGenerationStale),
                )));
            }
        }
        let request = OfferRequest {
            message: envelope(
                &MessageView {
                    message: message.clone(),
                    decision: None,
                },
                &core.workspace.id,
            ),
            recipient_participant_id: recipient.to_string(),
            target_session_id: session_id.to_string(),
            target_generation: generation,
            endpoint_ref: binding.endpoint_ref.clone(),
            client_version: binding.client_version.clone(),
            timeout_ms: Some(self.offer_deadline.as_millis() as u64),
        };
        let request =
            serde_json::to_string(&request).map_err(|e| AccError::internal(e.to_string()))?;
        Ok(Ok(ReadyOffer {
            message: message.clone(),
            recipient: recipient.to_string(),
            session_id: session_id.to_string(),
            generation,
            client_version: binding.client_version,
            transport,
            adapter,
            request,
        }))
    }

    /// A lapsed lease: handshake again, store the refreshed binding (if the session is still
    /// at that generation), and check the version the handshake saw. `Err` holds the code the
    /// offer ends with.
    fn refresh_lease(
        &mut self,
        core: &mut Core,
        adapter: &LoadedAdapter,
        session_id: &str,
        generation: i64,
        recipient: &str,
        binding: &mut BindingRow,
    ) -> AccResult<Result<(), DeliveryCode>> {
        let Ok(answer) = self.handshake(
            adapter,
            session_id,
            generation,
            recipient,
            &binding.endpoint,
        ) else {
            return Ok(Err(DeliveryCode::HandshakeFailed));
        };
        binding.endpoint_ref = answer.endpoint_ref;
        binding.client_version = answer.client_version;
        binding.lease_until = core.now() + (answer.lease_seconds as i64) * 1000;
        core.refresh_binding(binding)?;
        Ok(self.admit(adapter, &binding.client_version))
    }
}

//! Next-turn context: the caller's waiting messages rendered by a body adapter within its
//! budget, fresh ones first, a live offer repeated once after fifteen minutes, and the
//! receipts of what was carried recorded `offered`.

use super::*;

impl Delivery {
    /// How many messages next-turn context would carry for `caller` now (new ones and the
    /// one repeat of a live offer), without rendering or recording anything.
    pub fn waiting(&self, core: &mut Core, caller: &Caller) -> AccResult<usize> {
        let now = core.now();
        let workspace_id = core.workspace.id.clone();
        let known = core
            .opened_participant(&caller.session_id)
            .map(str::to_string);
        let pending =
            core.read(|r| pending_for(r, &workspace_id, caller, known.as_deref(), now))?;
        Ok(pending.map_or(0, |p| p.fresh.len() + p.repeats.len()))
    }

    /// Render the caller's next-turn context through a body adapter: new queued messages
    /// first, then at most one repeat of each live offer older than 15 minutes. Records exactly
    /// the messages the renderer says it carried.
    pub fn next_turn(
        &mut self,
        core: &mut Core,
        caller: &Caller,
        adapter_id: &str,
    ) -> AccResult<RenderAnswer> {
        let now = core.now();
        let workspace_id = core.workspace.id.clone();
        let budget = core.workspace.config.context_budget_bytes as usize;
        // A read: the caller's presence was refreshed when its session was resolved.
        let known = core
            .opened_participant(&caller.session_id)
            .map(str::to_string);
        let Some(pending) =
            core.read(|r| pending_for(r, &workspace_id, caller, known.as_deref(), now))?
        else {
            return Ok(RenderAnswer::default());
        };
        if pending.fresh.is_empty() && pending.repeats.is_empty() {
            // Nothing to show: no adapter is loaded, nothing is written.
            return Ok(RenderAnswer::default());
        }
        let Some(adapter) = self.adapter(adapter_id)? else {
            return Err(AccError::new(
                ErrorCode::InvalidData,
                format!("no adapter `{adapter_id}` is loaded; see acc adapters"),
            ));
        };
        let rendered = render(&adapter, &pending, budget, &workspace_id)?;
        let carried: BTreeSet<&str> = rendered.carried.iter().map(String::as_str).collect();
        if !carried.is_empty() {
            let session = &pending.session;
            let attempt = |message| OfferAttempt {
                message,
                recipient: &session.participant_id,
                session_id: &session.session_id,
                generation: session.generation,
                adapter: &adapter.adapter_id,
                transport: NEXT_TURN,
                client_version: "",
            };
            let fresh: Vec<OfferAttempt<'_>> = pending
                .fresh
                .iter()
                .filter(|m| carried.contains(m.message_id.as_str()))
                .map(attempt)
                .collect();
            let repeats: Vec<OfferAttempt<'_>> = pending
                .repeats
                .iter()
                .filter(|(m, _)| carried.contains(m.message_id.as_str()))
                .map(|(m, _)| attempt(m))
                .collect();
            core.record_carried(&fresh, &repeats)?;
        }
        Ok(rendered)
    }
}

/// What next-turn may show a session: its new queued messages, and the live offers due for
/// their one repeat.
struct Pending {
    session: SessionRow,
    fresh: Vec<MessageRow>,
    repeats: Vec<(MessageRow, Repeat)>,
}

/// The caller's pending messages within the next-turn window (newest first). With the
/// caller's participant known (a hook that opened the session), a room reads it all in one
/// round trip.
fn pending_for(
    r: &Reader<'_>,
    workspace_id: &str,
    caller: &Caller,
    participant: Option<&str>,
    now: Millis,
) -> AccResult<Pending> {
    if let Some(participant) = participant {
        r.prefetch_pending(
            &caller.session_id,
            participant,
            NEXT_TURN_WINDOW,
            now - REPEAT_AFTER_MS,
        )?;
    }
    let session = check_caller(r, workspace_id, caller)?;
    // The newest queued messages, however many offered ones (which stay unresolved until
    // acknowledged) came after them: from the newest unresolved page alone, a burst of more
    // than a page between two turns left its older messages queued and never shown.
    let fresh = r.queued_for(&session.participant_id, NEXT_TURN_WINDOW)?;
    // Offers due a repeat among the newest unresolved, receipts alone (few ever are: only one
    // due needs its message).
    let mut repeats = Vec::new();
    for receipt in r.repeat_candidates(
        &session.participant_id,
        NEXT_TURN_WINDOW,
        now - REPEAT_AFTER_MS,
    )? {
        let Some(repeat) = due_repeat(&receipt, now) else {
            continue;
        };
        if let Some(message) = r.message_by_seq(receipt.message_seq)?
            && !message.to_participant_ids.is_empty()
        {
            repeats.push((message, repeat));
        }
    }
    Ok(Pending {
        session,
        fresh,
        repeats,
    })
}

/// The repeat a live offer is due: carried by a live transport (not next-turn), never
/// repeated, and offered at least 15 minutes ago.
fn due_repeat(receipt: &ReceiptRow, now: Millis) -> Option<Repeat> {
    let offer = receipt.extensions.get("offer")?;
    let transport = offer.get("transport").and_then(Value::as_str).unwrap_or("");
    let repeated = offer.get("repeatedAt").is_some_and(|r| !r.is_null());
    let due = transport != NEXT_TURN
        && !transport.is_empty()
        && !repeated
        && receipt.updated_at + REPEAT_AFTER_MS <= now;
    due.then(|| Repeat {
        transport: transport.to_string(),
        offered_at: offer
            .get("at")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    })
}

/// Ask the adapter to render the pending messages within the budget.
fn render(
    adapter: &LoadedAdapter,
    pending: &Pending,
    budget: usize,
    workspace_id: &str,
) -> AccResult<RenderAnswer> {
    let adapter_id = &adapter.adapter_id;
    let view = |m: &MessageRow| {
        envelope(
            &MessageView {
                message: m.clone(),
                decision: None,
            },
            workspace_id,
        )
    };
    let mut messages: Vec<RenderMessage> = pending
        .fresh
        .iter()
        .map(|m| RenderMessage {
            message: view(m),
            repeat: None,
        })
        .collect();
    messages.extend(pending.repeats.iter().map(|(m, r)| RenderMessage {
        message: view(m),
        repeat: Some(r.clone()),
    }));
    let request = RenderRequest {
        recipient_participant_id: pending.session.participant_id.clone(),
        budget_bytes: budget,
        messages,
    };
    let request = serde_json::to_string(&request).map_err(|e| AccError::internal(e.to_string()))?;
    let answer = adapter
        .call(Operation::Render, request, DEFAULT_DEADLINE)
        .map_err(|f| {
            AccError::new(
                ErrorCode::InvalidData,
                format!(
                    "the {adapter_id} adapter could not render ({}): {}",
                    f.code, f.message
                ),
            )
        })?;
    serde_json::from_str(answer.payload.as_str()).map_err(|e| {
        AccError::new(
            ErrorCode::InvalidData,
            format!("the {adapter_id} adapter answered badly: {e}"),
        )
    })
}

//! Recording: a prepared message addressed, deduplicated (idempotency by content hash), written
//! with its receipts and its event in one transaction, then settled (a reply acknowledges what
//! it answers, a finish releases claims); acknowledgement and pruning.

use super::*;
use crate::identity::Harness;

/// Resolve explicit recipients: known participant ids; a client's name, which is the one
/// participant of that client with a present session (several: refused, naming them), else the
/// client's most recent participant here; or the start of one participant's id. Sorted,
/// deduplicated.
fn resolve_recipients(
    reader: &Reader<'_>,
    sender: &str,
    to: &[String],
    now: Millis,
    liveness: &dyn Liveness,
) -> AccResult<Vec<String>> {
    let mut out = BTreeSet::new();
    let mut sessions = None;
    for name in to {
        if reader.participant_exists(name)? {
            if name == sender {
                return Err(AccError::usage(format!(
                    "`{name}` is the sender; address another participant"
                )));
            }
            out.insert(name.clone());
            continue;
        }
        let live = match &sessions {
            Some(live) => live,
            None => sessions.insert(
                reader
                    .sessions(false)?
                    .into_iter()
                    .filter(|s| presence(s, now, &*liveness) != Presence::Offline)
                    .collect::<Vec<_>>(),
            ),
        };
        out.insert(resolve_name(reader, sender, name, live, now, liveness)?);
    }
    Ok(out.into_iter().collect())
}

/// A recipient named by something other than a participant's id: a client's name (its one
/// participant with a session present, several refused naming them; none present, its most
/// recent participant here, whose resumed conversation reads it), or the start of one
/// participant's id (at least `ids::MIN_PREFIX` characters: hooked participants' ids are long).
/// A client's name is never taken as the start of an id.
fn resolve_name(
    reader: &Reader<'_>,
    sender: &str,
    name: &str,
    live: &[acc_store::SessionRow],
    now: Millis,
    liveness: &dyn Liveness,
) -> AccResult<String> {
    let present: Vec<PresentSession> = live
        .iter()
        .map(|s| PresentSession {
            participant_id: s.participant_id.clone(),
            harness: s.harness.clone(),
            presence: presence(s, now, liveness).as_str(),
        })
        .collect();
    let listed = if live.is_empty() {
        "nobody".to_string()
    } else {
        live.iter()
            .map(|s| format!("{} ({})", s.participant_id, s.harness))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let unknown = |message: String| {
        AccError::new(ErrorCode::UnknownParticipant, message)
            .with_details(&PresentDetails { present: &present })
    };
    if Harness::parse(name).is_some() {
        let matching: BTreeSet<&str> = live
            .iter()
            .filter(|s| s.harness == name && s.participant_id != sender)
            .map(|s| s.participant_id.as_str())
            .collect();
        return match matching.into_iter().collect::<Vec<_>>().as_slice() {
            [one] => Ok((*one).to_string()),
            [] => most_recent_of_client(reader, name, sender)?.ok_or_else(|| {
                unknown(format!(
                    "no participant of the client `{name}` is in this workspace; present: {listed}"
                ))
            }),
            _ => Err(unknown(format!(
                "several sessions of {name} are present; address one participant: {listed}"
            ))),
        };
    }
    if name.chars().count() >= crate::ids::MIN_PREFIX {
        let found = reader.ids_with_prefix("participant", name, 11)?;
        match found.as_slice() {
            [one] if one == sender => {
                return Err(AccError::usage(format!(
                    "`{name}` names the sender ({one}); address another participant"
                )));
            }
            [one] => return Ok(one.clone()),
            [] => {}
            many => {
                return Err(unknown(format!(
                    "`{name}` is the start of more than one participant: {}{}; give more of the id",
                    many.iter().take(10).cloned().collect::<Vec<_>>().join(", "),
                    if many.len() > 10 { ", …" } else { "" }
                )));
            }
        }
    }
    Err(unknown(format!(
        "no participant or present client is called `{name}`; present: {listed}"
    )))
}

/// The participant (not `sender`) of the client `harness` whose session was seen last, open or
/// closed; `None` when the client never had a session here. Read only when none of that
/// client's sessions is present.
fn most_recent_of_client(
    reader: &Reader<'_>,
    harness: &str,
    sender: &str,
) -> AccResult<Option<String>> {
    Ok(reader
        .sessions(true)?
        .into_iter()
        .filter(|s| s.harness == harness && s.participant_id != sender)
        .max_by(|a, b| {
            (a.last_seen_at, a.opened_at, &a.session_id).cmp(&(
                b.last_seen_at,
                b.opened_at,
                &b.session_id,
            ))
        })
        .map(|s| s.participant_id))
}

/// Who a message goes to and what it is, decided before anything is written.
#[derive(Debug, Clone)]
struct Addressed {
    thread_id: String,
    /// For a reply: the answered message and the sender's receipt of it.
    original: Option<(MessageRow, ReceiptRow)>,
    /// For a decision change: the decisions it supersedes or withdraws.
    targets: Vec<MessageRow>,
    /// The addressed participants (empty for a room record).
    to: Vec<String>,
    subject: String,
    obligation: Obligation,
    /// The content hash idempotency compares.
    hash: String,
}

/// Thread, recipients (explicit, the answered sender, or inherited from changed decisions),
/// subject and obligation of a draft.
fn address(
    reader: &Reader<'_>,
    sender: &str,
    session_id: &str,
    draft: &Draft,
    message_id: &str,
    now: Millis,
    liveness: &dyn Liveness,
) -> AccResult<Addressed> {
    let mut thread_id = message_id.to_string();
    let mut original: Option<(MessageRow, ReceiptRow)> = None;
    let mut explicit = if let Some(reply_to) = &draft.reply_to {
        let Some(answered) = reader.message(reply_to)? else {
            return Err(AccError::new(
                ErrorCode::MessageNotFound,
                format!("message `{reply_to}` does not exist"),
            ));
        };
        // By what the sender knew before reading either (a room read it ahead).
        let Some(receipt) = reader.receipt_for_session(reply_to, session_id)? else {
            return Err(AccError::new(
                ErrorCode::NotARecipient,
                format!("`{sender}` did not receive message `{reply_to}`, so cannot reply to it"),
            ));
        };
        thread_id = answered.thread_id.clone();
        let to = vec![answered.from_participant_id.clone()];
        original = Some((answered, receipt));
        to
    } else {
        resolve_recipients(reader, sender, &draft.to, now, liveness)?
    };
    let mut targets = Vec::new();
    if let Some((_, target_ids)) = &draft.change {
        for id in target_ids {
            let Some(target) = reader.message(id)? else {
                return Err(AccError::new(
                    ErrorCode::MessageNotFound,
                    format!("decision `{id}` does not exist"),
                ));
            };
            if target.kind != MessageKind::Decision {
                return Err(AccError::new(
                    ErrorCode::InvalidData,
                    format!(
                        "`{id}` is a {}, not a decision; only decisions can be superseded or withdrawn",
                        target.kind
                    ),
                ));
            }
            targets.push(target);
        }
    }
    let hash_to = explicit.clone();
    let subject = match (&original, draft.subject.is_empty()) {
        (Some((answered, _)), true) => {
            let base = answered
                .subject
                .strip_prefix("Re: ")
                .unwrap_or(&answered.subject);
            format!("Re: {base}")
                .chars()
                .take(MAX_SUBJECT_CHARS)
                .collect()
        }
        _ => draft.subject.clone(),
    };
    let mut inherited = BTreeSet::new();
    for target in &targets {
        inherited.insert(target.from_participant_id.clone());
        for receipt in reader.receipts_of(target.seq)? {
            inherited.insert(receipt.participant_id);
        }
    }
    inherited.remove(sender);
    let mut all: BTreeSet<String> = explicit.drain(..).collect();
    all.extend(inherited);
    let to: Vec<String> = all.into_iter().collect();
    let obligation = kind_obligation(draft.kind, draft.obligation.as_deref(), !to.is_empty())?;
    let hash = content_hash(draft, obligation, &hash_to)?;
    Ok(Addressed {
        thread_id,
        original,
        targets,
        to,
        subject,
        obligation,
        hash,
    })
}

/// Idempotency: a retry (same key, same content) gets the original back; the same key with
/// other content is refused.
fn replay(
    reader: &Reader<'_>,
    session: &acc_store::SessionRow,
    draft: &Draft,
    hash: &str,
) -> AccResult<Option<Recorded>> {
    let Some(key) = &draft.client_message_id else {
        return Ok(None);
    };
    let sender = session.participant_id.as_str();
    let Some(existing) = reader.message_by_client_id_of(session, key)? else {
        return Ok(None);
    };
    if existing.content_hash != hash {
        return Err(AccError::new(
            ErrorCode::IdempotencyConflict,
            format!("clientMessageId `{key}` was already used by `{sender}` for a different message ({})", existing.message_id),
        )
        .with_details(&MessageDetails {
            message_id: &existing.message_id,
        }));
    }
    let receipts = reader.receipts_of(existing.seq)?;
    let original_receipt = match &existing.in_reply_to {
        Some(id) => match reader.message(id)? {
            Some(answered) => reader.receipt(answered.seq, sender)?,
            None => None,
        },
        None => None,
    };
    let decision = decision_status(reader, &existing)?;
    Ok(Some(Recorded {
        message: MessageView {
            message: existing,
            decision,
        },
        receipts,
        replayed: true,
        original_receipt,
        released_claims: Vec::new(),
    }))
}

/// Write the message, its `message.recorded` event, one queued receipt per recipient (a room
/// record reaches the peers with a live session now) and its decision links.
// The transaction, the sender's session, the draft, the two new ids, the addressing and the
// clock and liveness the record was taken under: each is an input of the row itself.
#[allow(clippy::too_many_arguments)]
fn write_message(
    w: &mut Writer<'_>,
    session: &acc_store::SessionRow,
    draft: &Draft,
    message_id: String,
    client_message_id: String,
    addressed: Addressed,
    now: Millis,
    liveness: &dyn Liveness,
) -> AccResult<(MessageRow, Vec<ReceiptRow>)> {
    let sender = session.participant_id.clone();
    let recipients: Vec<String> = if addressed.to.is_empty() {
        live_participants(&w.reader(), now, liveness)?
            .into_iter()
            .filter(|p| *p != sender)
            .collect()
    } else {
        addressed.to.clone()
    };
    let mut message = MessageRow {
        seq: 0,
        message_id,
        thread_id: addressed.thread_id,
        client_message_id,
        from_participant_id: sender.clone(),
        from_session_id: session.session_id.clone(),
        to_participant_ids: addressed.to,
        kind: draft.kind,
        obligation: addressed.obligation,
        subject: addressed.subject,
        body: draft.body.clone(),
        in_reply_to: draft.reply_to.clone(),
        artifacts: draft.artifacts.clone(),
        handoff: draft.handoff.clone(),
        decision_change: decision_change(draft).map(|change| wire::json(&change)),
        content_hash: addressed.hash,
        sent_at: now,
        // The `message.recorded` event's, appended first (below).
        event_seq: 0,
    };
    let recorded = Event::MessageRecorded {
        message_id: message.message_id.clone(),
        thread_id: message.thread_id.clone(),
        kind: message.kind,
        obligation: message.obligation,
        from_participant_id: sender.clone(),
        to_participant_ids: message.to_participant_ids.clone(),
        recipient_count: recipients.len(),
        in_reply_to: message.in_reply_to.clone(),
    }
    .append(w, now, Some(&session.session_id), Some(&sender))?;
    message.event_seq = recorded;
    message.seq = w.insert_message(&message)?;
    let mut receipts = Vec::with_capacity(recipients.len());
    for participant in recipients {
        let receipt = ReceiptRow {
            message_seq: message.seq,
            participant_id: participant,
            state: ReceiptState::Queued,
            updated_at: now,
            extensions: Value::Object(serde_json::Map::new()),
            obligation: message.obligation,
            addressed: !message.to_participant_ids.is_empty(),
        };
        w.insert_receipt(&receipt)?;
        receipts.push(receipt);
    }
    if let Some((action, _)) = &draft.change {
        for target in &addressed.targets {
            w.insert_link(&DecisionLink {
                from_seq: message.seq,
                to_seq: target.seq,
                action: *action,
            })?;
        }
    }
    Ok((message, receipts))
}

/// What a message settles once written: a reply acknowledges the original; a finish releases
/// the session's claims and closes it. The acknowledged receipt and the released claim ids.
fn settle(
    w: &mut Writer<'_>,
    session: &acc_store::SessionRow,
    draft: &Draft,
    message: &MessageRow,
    addressed: Addressed,
    now: Millis,
) -> AccResult<(Option<ReceiptRow>, Vec<String>)> {
    let mut original_receipt = None;
    if let Some((answered, mut receipt)) = addressed.original {
        let from = receipt.state;
        if advance(&mut receipt, ReceiptState::Acknowledged, now)? {
            w.update_receipt(&receipt)?;
            receipt_event(w, &answered, &receipt, from, now)?;
        }
        original_receipt = Some(receipt);
    }
    let mut released_claims = Vec::new();
    if draft.finish {
        let sender = &session.participant_id;
        for claim in w.reader().claims_of_session(&session.session_id)? {
            w.delete_claim(&claim.claim_id)?;
            Event::ClaimReleased {
                claim_id: claim.claim_id.clone(),
                resource: claim.resource.clone(),
                reason: Some("finish"),
            }
            .append(w, now, Some(&session.session_id), Some(sender))?;
            released_claims.push(claim.claim_id);
        }
        w.close_session(&session.session_id, now)?;
        Event::SessionClosed {
            session_id: session.session_id.clone(),
            reason: "finish",
            handoff_message_id: Some(message.message_id.clone()),
        }
        .append(w, now, Some(&session.session_id), Some(sender))?;
    }
    Ok((original_receipt, released_claims))
}

impl Core {
    /// Record a prepared message, its receipts and events in one transaction. It never routes:
    /// delivery happens after the commit, in the application layer (`App::send`), so a
    /// transport failure cannot undo the record. The steps, each its own function: address the
    /// message ([`address`]), return the original for an idempotent retry ([`replay`]), write the
    /// message, its event and its receipts ([`write_message`]), then the reply's
    /// acknowledgement and a finish's release and close ([`settle`]).
    pub fn record(&mut self, caller: &Caller, draft: Draft) -> AccResult<Recorded> {
        self.record_then(caller, draft, |_, _, _, _| Ok(()))
            .map(|(recorded, _)| recorded)
    }

    /// [`Core::record`], then `then` in the same write transaction, on the message and its
    /// receipts as they are about to commit and the time of the send: what a later step needs
    /// to read of the same moment (the router's check of each recipient), without a
    /// transaction of its own. On a replay `then` is not run and its result is `None`.
    pub fn record_then<T>(
        &mut self,
        caller: &Caller,
        draft: Draft,
        then: impl FnOnce(&Reader<'_>, &MessageRow, &[ReceiptRow], Millis) -> AccResult<T>,
    ) -> AccResult<(Recorded, Option<T>)> {
        let message_id = ids::new_id("message")?;
        let generated_key = ids::new_id("cm")?;
        let now = self.now();
        let liveness = self.liveness();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            // A room reads the session and the recipients' names in one round trip.
            w.reader().prefetch_send(
                &caller.session_id,
                &draft.to,
                draft.client_message_id.as_deref(),
                draft.reply_to.as_deref(),
                draft.finish,
            )?;
            let session = check_caller_allow_closed(&w.reader(), &workspace_id, caller)?;
            let addressed = address(
                &w.reader(),
                &session.participant_id,
                &session.session_id,
                &draft,
                &message_id,
                now,
                &*liveness,
            )?;
            if let Some(original) = replay(&w.reader(), &session, &draft, &addressed.hash)? {
                return Ok((original, None));
            }
            if session.closed_at.is_some() {
                return Err(crate::identity::closed_session(&session));
            }
            if crate::identity::needs_refresh(&session, now) {
                w.touch_session(&session.session_id, now)?;
            }
            let key = draft.client_message_id.clone().unwrap_or(generated_key);
            let (message, receipts) = write_message(
                w,
                &session,
                &draft,
                message_id,
                key,
                addressed.clone(),
                now,
                &*liveness,
            )?;
            let (original_receipt, released_claims) =
                settle(w, &session, &draft, &message, addressed, now)?;
            let decision = decision_status(&w.reader(), &message)?;
            let then = then(&w.reader(), &message, &receipts, now)?;
            Ok((
                Recorded {
                    message: MessageView { message, decision },
                    receipts,
                    replayed: false,
                    original_receipt,
                    released_claims,
                },
                Some(then),
            ))
        })
    }

    /// Acknowledge a message without replying (obligations `none` and `acknowledge`).
    pub fn ack(&mut self, caller: &Caller, message_id: &str) -> AccResult<Received> {
        ids::validate_record_id("message", message_id)?;
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            w.reader().prefetch_received(&caller.session_id, message_id)?;
            let session = crate::identity::verify_caller(w, &workspace_id, caller, now)?;
            let (message, mut receipt) = owned_receipt(&w.reader(), &session, message_id)?;
            if receipt.state == ReceiptState::Acknowledged {
                let decision = decision_status(&w.reader(), &message)?;
                return Ok(Received { message: MessageView { message, decision }, receipt });
            }
            if message.obligation == Obligation::Reply {
                return Err(AccError::new(
                    ErrorCode::ReplyRequired,
                    format!(
                        "message `{message_id}` is a {} that needs a reply; answer, clarify or decline it with reply (acc reply --message {message_id} --body ...)",
                        message.kind
                    ),
                ));
            }
            let from = receipt.state;
            advance(&mut receipt, ReceiptState::Acknowledged, now)?;
            w.update_receipt(&receipt)?;
            receipt_event(w, &message, &receipt, from, now)?;
            let decision = decision_status(&w.reader(), &message)?;
            Ok(Received { message: MessageView { message, decision }, receipt })
        })
    }

    /// Report (and with `apply`, remove) messages whose every receipt is acknowledged.
    pub fn prune(
        &mut self,
        caller: Option<&Caller>,
        before: Option<i64>,
        apply: bool,
    ) -> AccResult<PruneReport> {
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        if !apply {
            let Some(store) = self.store_for_read() else {
                return Ok(PruneReport {
                    message_ids: Vec::new(),
                    applied: false,
                    before_seq: before.unwrap_or(0),
                });
            };
            return store.read(|r| {
                let before_seq = before.unwrap_or(r.head_seq()? + 1);
                let candidates = r.prunable_messages(before_seq, PRUNE_BATCH)?;
                Ok(PruneReport {
                    message_ids: candidates.into_iter().map(|m| m.message_id).collect(),
                    applied: false,
                    before_seq,
                })
            });
        }
        let caller = caller.ok_or_else(|| {
            AccError::new(
                ErrorCode::CallerIdentityUnresolved,
                "prune --apply removes records, so it needs owner credentials (--session/--generation or ACC_SESSION/ACC_GENERATION)",
            )
        })?;
        self.store_for_write()?.write(|w| {
            let session = crate::identity::verify_caller(w, &workspace_id, caller, now)?;
            let before_seq = before.unwrap_or(w.reader().head_seq()? + 1);
            let candidates = w.reader().prunable_messages(before_seq, PRUNE_BATCH)?;
            for message in &candidates {
                w.delete_message(message.seq)?;
            }
            let message_ids: Vec<String> = candidates.into_iter().map(|m| m.message_id).collect();
            if !message_ids.is_empty() {
                Event::MessagesPruned {
                    message_ids: message_ids.clone(),
                    before_cursor: crate::events::format_cursor(before_seq),
                }
                .append(
                    w,
                    now,
                    Some(&session.session_id),
                    Some(&session.participant_id),
                )?;
            }
            Ok(PruneReport {
                message_ids,
                applied: true,
                before_seq,
            })
        })
    }
}

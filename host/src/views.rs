//! The JSON boundary: stable output shapes for CLI `--json` (and later MCP results).
//!
//! Core and store types are not serializable; this module converts them. A change here changes
//! a published shape, so the golden tests under `tests/` must change with it.

use serde_json::{Value, json};

use crate::clock::format_timestamp;
use crate::core::OpenedSession;
use crate::core::messages::{
    DecisionStatus, MessageView, PAGE_BYTE_CAP, Page, PruneReport, Received, SUMMARY_SUBJECT_BYTES,
};
use crate::core::status::{
    Attention, ClaimState, EventPage, SessionState, StatusReport, format_cursor,
};
use crate::delivery::{DeliveryOutcome, Sent};
use crate::error::AccError;
use crate::store::ReceiptRow;
use crate::store::{ClaimRow, EventRow, IntentRow};

fn opt_ts(ms: Option<i64>) -> Value {
    ms.map(|m| Value::from(format_timestamp(m)))
        .unwrap_or(Value::Null)
}

/// A claim, with its liveness at `now`.
pub fn claim(claim: &ClaimRow, now: i64) -> Value {
    json!({
        "claimId": claim.claim_id,
        "resource": claim.resource,
        "mode": claim.mode,
        "enforcement": claim.enforcement,
        "reason": claim.reason,
        "ownerSessionId": claim.session_id,
        "ownerParticipantId": claim.participant_id,
        "ownerGeneration": claim.generation,
        "acquiredAt": format_timestamp(claim.acquired_at),
        "renewedAt": format_timestamp(claim.renewed_at),
        "expiresAt": format_timestamp(claim.expires_at),
        "leaseSeconds": claim.lease_seconds,
        "state": if claim.expires_at > now { "live" } else { "expired" },
    })
}

fn claim_state(state: &ClaimState, now: i64) -> Value {
    let mut value = claim(&state.claim, now);
    if let Value::Object(map) = &mut value {
        map.insert(
            "effectiveEnforcement".into(),
            Value::from(state.effective_enforcement),
        );
    }
    value
}

/// An intent.
pub fn intent(intent: &IntentRow) -> Value {
    json!({
        "summary": intent.summary,
        "mode": intent.mode,
        "state": intent.state,
        "resourceHints": intent.resource_hints,
        "updatedAt": format_timestamp(intent.updated_at),
    })
}

/// A session with presence; never its generation token or hash.
pub fn session(state: &SessionState) -> Value {
    let s = &state.session;
    json!({
        "sessionId": s.session_id,
        "participantId": s.participant_id,
        "harness": s.harness,
        "clientVersion": s.client_version,
        "presence": state.presence.as_str(),
        "lifecycle": s.lifecycle,
        "enforcement": s.enforcement,
        "generation": s.generation,
        "checkout": s.checkout,
        "branch": s.branch,
        "pid": s.pid,
        "openedAt": format_timestamp(s.opened_at),
        "lastSeenAt": format_timestamp(s.last_seen_at),
        "closedAt": opt_ts(s.closed_at),
        "intent": state.intent.as_ref().map(intent),
        "bindings": state.bindings.iter().map(binding).collect::<Vec<_>>(),
    })
}

/// A newly opened session, with its generation token (the one place it is ever shown).
pub fn opened_session(opened: &OpenedSession, workspace_id: &str) -> Value {
    json!({
        "workspaceId": workspace_id,
        "participantId": opened.session.participant_id,
        "sessionId": opened.session.session_id,
        "generation": opened.generation_token,
        "generationNumber": opened.session.generation,
        "resumed": opened.resumed,
    })
}

/// An attention item.
pub fn attention(item: &Attention) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("rule".into(), Value::from(item.rule.as_str()));
    map.insert(
        "participantId".into(),
        Value::from(item.participant_id.clone()),
    );
    let optional = [
        ("sessionId", &item.session_id),
        ("claimId", &item.claim_id),
        ("resource", &item.resource),
        ("messageId", &item.message_id),
        ("otherSessionId", &item.other_session_id),
        ("otherParticipantId", &item.other_participant_id),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            map.insert(key.into(), Value::from(value.clone()));
        }
    }
    if let Some(since) = item.since {
        map.insert("since".into(), Value::from(format_timestamp(since)));
    }
    Value::Object(map)
}

/// An event.
pub fn event(event: &EventRow) -> Value {
    json!({
        "cursor": format_cursor(event.seq),
        "type": event.event_type,
        "at": format_timestamp(event.at),
        "sessionId": event.session_id,
        "participantId": event.participant_id,
        "data": event.data,
    })
}

/// The status report.
pub fn status(report: &StatusReport, now: i64) -> Value {
    json!({
        "workspace": {
            "workspaceId": report.workspace_id,
            "displayName": report.display_name,
            "root": report.root,
            "identitySource": report.identity_source,
            "claimPolicy": report.claim_policy,
            "protection": report.protection,
        },
        "participants": report.participants.iter().map(|p| json!({
            "participantId": p.participant_id,
            "createdAt": format_timestamp(p.created_at),
        })).collect::<Vec<_>>(),
        "sessions": report.sessions.iter().map(session).collect::<Vec<_>>(),
        "claims": report.claims.iter().map(|c| claim_state(c, now)).collect::<Vec<_>>(),
        "attention": report.attention.iter().map(attention).collect::<Vec<_>>(),
        "cursor": format_cursor(report.head_seq),
    })
}

/// A delta sync page.
pub fn sync_delta(page: &EventPage, attention_items: &[Attention]) -> Value {
    json!({
        "scope": "delta",
        "events": page.events.iter().map(event).collect::<Vec<_>>(),
        "nextCursor": format_cursor(page.next_cursor),
        "hasMore": page.has_more,
        "attention": attention_items.iter().map(attention).collect::<Vec<_>>(),
    })
}

/// An error object.
pub fn error(error: &AccError) -> Value {
    let mut inner = serde_json::Map::new();
    inner.insert("code".into(), Value::from(error.code.as_str()));
    inner.insert("message".into(), Value::from(error.message.clone()));
    if let Some(details) = &error.details {
        inner.insert("details".into(), details.clone());
    }
    json!({ "error": Value::Object(inner) })
}

/// A decision's derived status, as every surface shows it.
pub fn decision_status(status: &DecisionStatus) -> Value {
    json!({
        "state": status.state,
        "isHead": status.is_head,
        "conflicted": status.conflicted,
        "headCount": status.head_count,
        "currentMessageId": status.current_message_id,
        "groupId": status.group_id,
    })
}

/// Cut text to at most `max` UTF-8 bytes on a character boundary.
pub fn cut_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The complete message envelope.
pub fn message(view: &MessageView, workspace_id: &str) -> Value {
    let m = &view.message;
    let mut value = json!({
        "messageId": m.message_id,
        "threadId": m.thread_id,
        "clientMessageId": m.client_message_id,
        "workspaceId": workspace_id,
        "fromParticipantId": m.from_participant_id,
        "fromSessionId": m.from_session_id,
        "toParticipantIds": m.to_participant_ids,
        "kind": m.kind,
        "obligation": m.obligation,
        "subject": m.subject,
        "body": m.body,
        "inReplyTo": m.in_reply_to,
        "artifacts": m.artifacts,
        "handoff": m.handoff,
        "sentAt": format_timestamp(m.sent_at),
    });
    if let Value::Object(map) = &mut value {
        if let Some(change) = &m.decision_change {
            map.insert("decisionChange".into(), change.clone());
        }
        if let Some(status) = &view.decision {
            map.insert("decisionStatus".into(), decision_status(status));
        }
    }
    value
}

/// The summary allowlist: ids, thread and sender, kind, obligation, time, reply link, subject
/// cut to 160 bytes, body byte count, artifact count (and decision status). Never a body,
/// handoff payload or recipient list.
pub fn message_summary(view: &MessageView) -> Value {
    let m = &view.message;
    let mut value = json!({
        "messageId": m.message_id,
        "threadId": m.thread_id,
        "fromParticipantId": m.from_participant_id,
        "fromSessionId": m.from_session_id,
        "kind": m.kind,
        "obligation": m.obligation,
        "sentAt": format_timestamp(m.sent_at),
        "inReplyTo": m.in_reply_to,
        "subject": cut_utf8(&m.subject, SUMMARY_SUBJECT_BYTES),
        "bodyBytes": m.body.len(),
        "artifactCount": m.artifacts.as_array().map(Vec::len).unwrap_or(0),
    });
    if let (Value::Object(map), Some(status)) = (&mut value, &view.decision) {
        map.insert("decisionStatus".into(), decision_status(status));
    }
    value
}

/// A receipt; `offer` is null when no transport recorded one.
pub fn receipt(receipt: &ReceiptRow) -> Value {
    json!({
        "participantId": receipt.participant_id,
        "state": receipt.state.as_str(),
        "updatedAt": format_timestamp(receipt.updated_at),
        "offer": receipt.extensions.get("offer").cloned().unwrap_or(Value::Null),
    })
}

fn with_field(mut value: Value, key: &str, field: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.insert(key.into(), field);
    }
    value
}

/// An inbox summary item: the summary with the caller's receipt.
pub fn inbox_item(item: &Received) -> Value {
    with_field(
        message_summary(&item.message),
        "receipt",
        receipt(&item.receipt),
    )
}

/// An exact inbox read: the complete message with the caller's receipt.
pub fn inbox_message(item: &Received, workspace_id: &str) -> Value {
    with_field(
        message(&item.message, workspace_id),
        "receipt",
        receipt(&item.receipt),
    )
}

/// An exact history read: the complete message with every recipient's receipt.
pub fn history_message(view: &MessageView, receipts: &[ReceiptRow], workspace_id: &str) -> Value {
    with_field(
        message(view, workspace_id),
        "receipts",
        Value::Array(receipts.iter().map(receipt).collect()),
    )
}

/// Delivery outcomes.
pub fn delivery(outcomes: &[DeliveryOutcome]) -> Value {
    Value::Array(
        outcomes
            .iter()
            .map(|o| {
                let mut map = serde_json::Map::new();
                map.insert(
                    "recipientParticipantId".into(),
                    Value::from(o.recipient_participant_id.clone()),
                );
                map.insert("outcome".into(), Value::from(o.outcome.clone()));
                map.insert("transport".into(), Value::from(o.transport.clone()));
                if let Some(code) = &o.error_code {
                    map.insert("errorCode".into(), Value::from(code.clone()));
                }
                if o.pending_approval {
                    map.insert("pendingApproval".into(), Value::from(true));
                }
                Value::Object(map)
            })
            .collect(),
    )
}

/// A send-like result: `{message, delivery}`, plus `receipt` for a reply.
pub fn sent(sent: &Sent, workspace_id: &str) -> Value {
    let mut value = json!({
        "message": message(&sent.message, workspace_id),
        "delivery": delivery(&sent.delivery),
    });
    if let Some(original) = &sent.original_receipt {
        value = with_field(value, "receipt", receipt(original));
    }
    value
}

/// A summary page cut to the byte cap: items in order until the next would make the page's
/// compact JSON exceed 12,000 bytes. `nextCursor` is the last item's message id when more
/// follow, else null. `head` holds fields that precede `items` (history's `scope`, `view`).
pub fn capped_page(
    head: serde_json::Map<String, Value>,
    items: Vec<(Value, String)>,
    has_more: bool,
) -> Value {
    let mut probe = head.clone();
    probe.insert("items".into(), Value::Array(Vec::new()));
    // Budget for the longest possible cursor value.
    probe.insert("nextCursor".into(), Value::from("m".repeat(80)));
    let mut used = Value::Object(probe).to_string().len();
    let total = items.len();
    let mut kept = Vec::new();
    let mut last_id = None;
    for (item, id) in items {
        let size = item.to_string().len() + usize::from(!kept.is_empty());
        if !kept.is_empty() && used + size > PAGE_BYTE_CAP {
            break;
        }
        used += size;
        kept.push(item);
        last_id = Some(id);
    }
    let more = has_more || kept.len() < total;
    let mut page = head;
    page.insert("items".into(), Value::Array(kept));
    page.insert(
        "nextCursor".into(),
        if more {
            last_id.map(Value::from).unwrap_or(Value::Null)
        } else {
            Value::Null
        },
    );
    Value::Object(page)
}

/// A prune report.
pub fn prune(report: &PruneReport) -> Value {
    json!({
        "applied": report.applied,
        "beforeCursor": format_cursor(report.before_seq),
        "messageIds": report.message_ids,
        "count": report.message_ids.len(),
    })
}

/// An inbox summary page: `{items, nextCursor}` within the byte cap.
pub fn inbox_page(page: &Page<Received>) -> Value {
    let items = page
        .items
        .iter()
        .map(|i| (inbox_item(i), i.message.message.message_id.clone()))
        .collect();
    capped_page(serde_json::Map::new(), items, page.has_more)
}

/// A history summary page: `{scope: "history", view: "summary", items, nextCursor}`.
pub fn history_page(page: &Page<MessageView>) -> Value {
    let items = page
        .items
        .iter()
        .map(|m| (message_summary(m), m.message.message_id.clone()))
        .collect();
    let mut head = serde_json::Map::new();
    head.insert("scope".into(), Value::from("history"));
    head.insert("view".into(), Value::from("summary"));
    capped_page(head, items, page.has_more)
}

/// An exact history read: `{scope: "history", view: "message", items: [message]}`.
pub fn history_exact(view: &MessageView, receipts: &[ReceiptRow], workspace_id: &str) -> Value {
    json!({ "scope": "history", "view": "message", "items": [history_message(view, receipts, workspace_id)] })
}

/// The unbounded forensic snapshot: the status of every session (closed too) and every
/// message with its receipts.
pub fn snapshot(
    report: &StatusReport,
    messages: &[(MessageView, Vec<ReceiptRow>)],
    now: i64,
    workspace_id: &str,
) -> Value {
    with_field(
        status(report, now),
        "messages",
        Value::Array(
            messages
                .iter()
                .map(|(m, r)| history_message(m, r, workspace_id))
                .collect(),
        ),
    )
}

/// A full sync: the delta page, then the snapshot.
pub fn sync_full(page: &EventPage, attention_items: &[Attention], snapshot: Value) -> Value {
    let mut value = sync_delta(page, attention_items);
    if let Value::Object(map) = &mut value {
        map.insert("scope".into(), Value::from("full"));
        map.insert("snapshot".into(), snapshot);
    }
    value
}

/// The loaded and refused adapters.
pub fn adapters(plugins: &crate::plugins::Plugins) -> Value {
    json!({
        "searchPath": plugins.search_path.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "adapters": plugins.adapters.iter().map(|a| json!({
            "adapterId": a.adapter_id,
            "file": a.file.to_string_lossy(),
            "transport": a.transport,
            "offerKind": a.offer_kind.as_str(),
            "apiVersion": a.api_version,
            "features": a.features,
            "contract": serde_json::to_value(&a.contract).unwrap_or(Value::Null),
        })).collect::<Vec<_>>(),
        "refused": plugins.refused.iter().map(|r| json!({
            "file": r.file.to_string_lossy(),
            "reason": r.reason,
        })).collect::<Vec<_>>(),
    })
}

/// A delivery binding, redacted: the endpoint never leaves the store.
pub fn binding(binding: &crate::store::BindingRow) -> Value {
    json!({
        "adapterId": binding.adapter_id,
        "generation": binding.generation,
        "clientVersion": binding.client_version,
        "modes": binding.modes,
        "livePolicy": binding.live_policy,
        "leaseUntil": format_timestamp(binding.lease_until),
        "endpoint": "redacted",
    })
}

/// An `acc contract verify` report.
pub fn verify(report: &crate::contracts::VerifyReport) -> Value {
    json!({
        "dir": report.dir.to_string_lossy(),
        "valid": report.problems.is_empty(),
        "contracts": report.contracts,
        "captures": report.captures.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "adapters": report.adapters.iter().map(|a| json!({
            "adapterId": a.adapter_id,
            "contractId": a.contract_id,
            "clientVersion": a.client_version,
            "live": a.eligibility.as_ref().err().is_none_or(|r| r != "not_live"),
            "eligible": a.eligibility.is_ok(),
            "reason": a.eligibility.as_ref().err(),
        })).collect::<Vec<_>>(),
        "problems": report.problems,
    })
}

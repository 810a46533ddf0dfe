//! The message views: messages, their summaries and receipts, the delivery of a send, decision
//! status, and the inbox and history pages.

use super::*;

fn decision_status_wire(status: &DecisionStatus) -> wire::DecisionStatus<'_> {
    wire::DecisionStatus {
        state: status.state,
        is_head: status.is_head,
        conflicted: status.conflicted,
        head_count: status.head_count,
        current_message_id: status.current_message_id.as_deref(),
        group_id: &status.group_id,
    }
}

/// A decision's derived status, as every surface shows it.
pub fn decision_status(status: &DecisionStatus) -> Value {
    acc_core::wire::json(&decision_status_wire(status))
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

fn message_wire<'a>(view: &'a MessageView, workspace_id: &'a str) -> wire::Message<'a> {
    let m = &view.message;
    wire::Message {
        message_id: &m.message_id,
        thread_id: &m.thread_id,
        client_message_id: &m.client_message_id,
        workspace_id,
        from_participant_id: &m.from_participant_id,
        from_session_id: &m.from_session_id,
        to_participant_ids: &m.to_participant_ids,
        kind: m.kind.as_str(),
        obligation: m.obligation.as_str(),
        subject: &m.subject,
        body: &m.body,
        in_reply_to: m.in_reply_to.as_deref(),
        artifacts: &m.artifacts,
        handoff: m.handoff.as_ref(),
        sent_at: format_timestamp(m.sent_at),
        decision_change: m.decision_change.as_ref(),
        decision_status: view.decision.as_ref().map(decision_status_wire),
        receipt: None,
        receipts: None,
    }
}

/// The complete message envelope.
pub fn message(view: &MessageView, workspace_id: &str) -> Value {
    acc_core::wire::json(&message_wire(view, workspace_id))
}

fn summary_wire(view: &MessageView) -> wire::MessageSummary<'_> {
    let m = &view.message;
    wire::MessageSummary {
        message_id: &m.message_id,
        thread_id: &m.thread_id,
        from_participant_id: &m.from_participant_id,
        from_session_id: &m.from_session_id,
        kind: m.kind.as_str(),
        obligation: m.obligation.as_str(),
        sent_at: format_timestamp(m.sent_at),
        in_reply_to: m.in_reply_to.as_deref(),
        subject: cut_utf8(&m.subject, SUMMARY_SUBJECT_BYTES),
        body_bytes: m.body.len(),
        artifact_count: m.artifacts.as_array().map(Vec::len).unwrap_or(0),
        decision_status: view.decision.as_ref().map(decision_status_wire),
        receipt: None,
    }
}

/// The summary allowlist: ids, thread and sender, kind, obligation, time, reply link, subject
/// cut to 160 bytes, body byte count, artifact count (and decision status). Never a body,
/// handoff payload or recipient list.
pub fn message_summary(view: &MessageView) -> Value {
    acc_core::wire::json(&summary_wire(view))
}

static NO_OFFER: Value = Value::Null;

fn receipt_wire(receipt: &ReceiptRow) -> wire::Receipt<'_> {
    wire::Receipt {
        participant_id: &receipt.participant_id,
        state: receipt.state.as_str(),
        updated_at: format_timestamp(receipt.updated_at),
        offer: receipt.extensions.get("offer").unwrap_or(&NO_OFFER),
    }
}

/// A receipt; `offer` is null when no transport recorded one.
pub fn receipt(receipt: &ReceiptRow) -> Value {
    acc_core::wire::json(&receipt_wire(receipt))
}

/// An acknowledgement: `{messageId, receipt}`.
pub fn acked(message_id: &str, receipt: &ReceiptRow) -> Value {
    acc_core::wire::json(&wire::Acked {
        message_id,
        receipt: receipt_wire(receipt),
    })
}

/// An inbox summary item: the summary with the caller's receipt.
pub fn inbox_item(item: &Received) -> Value {
    acc_core::wire::json(&wire::MessageSummary {
        receipt: Some(receipt_wire(&item.receipt)),
        ..summary_wire(&item.message)
    })
}

/// An exact inbox read: the complete message with the caller's receipt.
pub fn inbox_message(item: &Received, workspace_id: &str) -> Value {
    acc_core::wire::json(&wire::Message {
        receipt: Some(receipt_wire(&item.receipt)),
        ..message_wire(&item.message, workspace_id)
    })
}

fn history_wire<'a>(
    view: &'a MessageView,
    receipts: &'a [ReceiptRow],
    workspace_id: &'a str,
) -> wire::Message<'a> {
    wire::Message {
        receipts: Some(receipts.iter().map(receipt_wire).collect()),
        ..message_wire(view, workspace_id)
    }
}

/// An exact history read: the complete message with every recipient's receipt.
pub fn history_message(view: &MessageView, receipts: &[ReceiptRow], workspace_id: &str) -> Value {
    acc_core::wire::json(&history_wire(view, receipts, workspace_id))
}

fn delivery_wire(outcomes: &[DeliveryOutcome]) -> Vec<wire::Delivery<'_>> {
    outcomes
        .iter()
        .map(|o| wire::Delivery {
            recipient_participant_id: &o.recipient_participant_id,
            outcome: o.outcome.as_str(),
            transport: &o.transport,
            error_code: o.error_code.map(DeliveryCode::as_str),
            pending_approval: o.pending_approval,
        })
        .collect()
}

/// Delivery outcomes.
pub fn delivery(outcomes: &[DeliveryOutcome]) -> Value {
    acc_core::wire::json(&delivery_wire(outcomes))
}

/// A send-like result: `{message, delivery}`, plus `receipt` for a reply.
pub fn sent(sent: &Sent, workspace_id: &str) -> Value {
    acc_core::wire::json(&wire::Sent {
        message: message_wire(&sent.message, workspace_id),
        delivery: delivery_wire(&sent.delivery),
        receipt: sent.original_receipt.as_ref().map(receipt_wire),
    })
}

/// A summary page cut to the byte cap: items in order until the next would make the page's
/// compact JSON exceed 12,000 bytes. `nextCursor` is the last item's message id when more
/// follow, else null. `head` is history's `(scope, view)`.
pub fn capped_page(
    head: Option<(&'static str, &'static str)>,
    items: Vec<(Value, String)>,
    has_more: bool,
) -> Value {
    let page = |items: Vec<Value>, next_cursor: Option<String>| wire::Page {
        scope: head.map(|(scope, _)| scope),
        view: head.map(|(_, view)| view),
        items,
        next_cursor,
    };
    // Budget for the longest possible cursor value.
    let mut used = acc_core::wire::json(&page(Vec::new(), Some("m".repeat(80))))
        .to_string()
        .len();
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
    acc_core::wire::json(&page(kept, if more { last_id } else { None }))
}

/// A prune report.
pub fn prune(report: &PruneReport) -> Value {
    acc_core::wire::json(&wire::Prune {
        applied: report.applied,
        before_cursor: format_cursor(report.before_seq),
        message_ids: &report.message_ids,
        count: report.message_ids.len(),
    })
}

/// An inbox summary page: `{items, nextCursor}` within the byte cap.
pub fn inbox_page(page: &Page<Received>) -> Value {
    let items = page
        .items
        .iter()
        .map(|i| (inbox_item(i), i.message.message.message_id.clone()))
        .collect();
    capped_page(None, items, page.has_more)
}

/// A history summary page: `{scope: "history", view: "summary", items, nextCursor}`.
pub fn history_page(page: &Page<MessageView>) -> Value {
    let items = page
        .items
        .iter()
        .map(|m| (message_summary(m), m.message.message_id.clone()))
        .collect();
    capped_page(Some(("history", "summary")), items, page.has_more)
}

/// An exact history read: `{scope: "history", view: "message", items: [message]}`.
pub fn history_exact(view: &MessageView, receipts: &[ReceiptRow], workspace_id: &str) -> Value {
    acc_core::wire::json(&wire::HistoryExact {
        scope: "history",
        view: "message",
        items: [history_wire(view, receipts, workspace_id)],
    })
}

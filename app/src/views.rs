//! From core and store values to the published shapes of [`crate::wire`], for both the CLI's
//! `--json` and the MCP tools and resources.
//!
//! Core and store rows are not wire types; this module fills the wire types from them, and
//! gives each as a `serde_json::Value` (sorted keys). A change in `wire` changes a published
//! shape, so the golden tests under `tests/` must change with it.

use serde_json::Value;

use crate::services::Sent;
use crate::wire;
use acc_core::OpenedSession;
use acc_core::attention::Attention;
use acc_core::claims::effective_enforcement;
use acc_core::clock::format_timestamp;
use acc_core::error::AccError;
use acc_core::events::format_cursor;
use acc_core::messages::{
    DecisionStatus, MessageView, PAGE_BYTE_CAP, Page, PruneReport, Received, SUMMARY_SUBJECT_BYTES,
};
use acc_core::status::{EventPage, SessionState, StatusReport};
use acc_core::workspace::ClaimPolicy;
use acc_delivery::DeliveryOutcome;
use acc_store::{BindingRow, ClaimRow, EventRow, IntentRow, ReceiptRow};

/// A claim, with its liveness at `now` and what it enforces under the room's `policy`.
pub fn claim(claim: &ClaimRow, now: i64, policy: ClaimPolicy) -> Value {
    acc_core::wire::json(&claim_wire(
        claim,
        now,
        Some(effective_enforcement(policy, claim)),
    ))
}

fn claim_wire<'a>(
    claim: &'a ClaimRow,
    now: i64,
    effective: Option<&'static str>,
) -> wire::Claim<'a> {
    wire::Claim {
        claim_id: &claim.claim_id,
        resource: &claim.resource,
        mode: claim.mode,
        enforcement: claim.enforcement,
        reason: claim.reason.as_deref(),
        owner_session_id: &claim.session_id,
        owner_participant_id: &claim.participant_id,
        owner_generation: claim.generation,
        acquired_at: format_timestamp(claim.acquired_at),
        renewed_at: format_timestamp(claim.renewed_at),
        expires_at: format_timestamp(claim.expires_at),
        lease_seconds: claim.lease_seconds,
        state: if claim.expires_at > now {
            "live"
        } else {
            "expired"
        },
        effective_enforcement: effective,
    }
}

/// Claims: `{claims: [...]}`, each with what it enforces under the room's `policy`.
pub fn claims(claims: &[ClaimRow], now: i64, policy: ClaimPolicy) -> Value {
    acc_core::wire::json(&wire::Claims {
        claims: claims
            .iter()
            .map(|c| claim_wire(c, now, Some(effective_enforcement(policy, c))))
            .collect(),
    })
}

/// Released claims: `{released: [...]}`, with the authority of a force release.
pub fn released(released: &[String], authority: Option<&'static str>) -> Value {
    acc_core::wire::json(&wire::Released {
        released,
        authority,
    })
}

fn intent_wire(intent: &IntentRow) -> wire::Intent<'_> {
    wire::Intent {
        summary: &intent.summary,
        mode: intent.mode,
        state: intent.state,
        resource_hints: &intent.resource_hints,
        updated_at: format_timestamp(intent.updated_at),
    }
}

/// An intent.
pub fn intent(intent: &IntentRow) -> Value {
    acc_core::wire::json(&intent_wire(intent))
}

/// `{intent}` after setting one, or `{intent: null, cleared}` after clearing.
pub fn intent_result(intent: Option<&IntentRow>, cleared: Option<bool>) -> Value {
    acc_core::wire::json(&wire::IntentResult {
        intent: intent.map(intent_wire),
        cleared,
    })
}

fn binding_wire(binding: &BindingRow) -> wire::Binding<'_> {
    wire::Binding {
        adapter_id: &binding.adapter_id,
        generation: binding.generation,
        client_version: &binding.client_version,
        modes: &binding.modes,
        live_policy: binding.live_policy,
        lease_until: format_timestamp(binding.lease_until),
        endpoint: "redacted",
    }
}

fn session_wire(state: &SessionState) -> wire::Session<'_> {
    let s = &state.session;
    wire::Session {
        session_id: &s.session_id,
        participant_id: &s.participant_id,
        harness: &s.harness,
        client_version: s.client_version.as_deref(),
        presence: state.presence.as_str(),
        lifecycle: s.lifecycle,
        enforcement: state.guard.enforcement,
        enforcement_reason: &state.guard.reason,
        generation: s.generation,
        checkout: s.checkout.as_deref(),
        branch: s.branch.as_deref(),
        pid: s.pid,
        opened_at: format_timestamp(s.opened_at),
        last_seen_at: format_timestamp(s.last_seen_at),
        closed_at: s.closed_at.map(format_timestamp),
        intent: state.intent.as_ref().map(intent_wire),
        bindings: state.bindings.iter().map(binding_wire).collect(),
    }
}

/// A session with presence; never its generation token or hash.
pub fn session(state: &SessionState) -> Value {
    acc_core::wire::json(&session_wire(state))
}

/// A newly opened session, with its generation token (the one place it is ever shown).
pub fn opened_session(opened: &OpenedSession, workspace_id: &str) -> Value {
    acc_core::wire::json(&wire::OpenedSession {
        workspace_id,
        participant_id: &opened.session.participant_id,
        session_id: &opened.session.session_id,
        generation: &opened.generation_token,
        generation_number: opened.session.generation,
        resumed: opened.resumed,
    })
}

fn attention_wire(item: &Attention) -> wire::Attention<'_> {
    wire::Attention {
        rule: item.rule.as_str(),
        participant_id: &item.participant_id,
        session_id: item.session_id.as_deref(),
        claim_id: item.claim_id.as_deref(),
        resource: item.resource.as_deref(),
        message_id: item.message_id.as_deref(),
        other_session_id: item.other_session_id.as_deref(),
        other_participant_id: item.other_participant_id.as_deref(),
        since: item.since.map(format_timestamp),
        expires_at: item.expires_at.map(format_timestamp),
    }
}

/// An attention item.
pub fn attention(item: &Attention) -> Value {
    acc_core::wire::json(&attention_wire(item))
}

fn event_wire(event: &EventRow) -> wire::Event<'_> {
    wire::Event {
        cursor: format_cursor(event.seq),
        event_type: &event.event_type,
        at: format_timestamp(event.at),
        session_id: event.session_id.as_deref(),
        participant_id: event.participant_id.as_deref(),
        data: &event.data,
    }
}

/// An event.
pub fn event(event: &EventRow) -> Value {
    acc_core::wire::json(&event_wire(event))
}

fn status_wire(report: &StatusReport, now: i64) -> wire::Status<'_> {
    wire::Status {
        workspace: wire::Workspace {
            workspace_id: &report.workspace_id,
            display_name: &report.display_name,
            root: &report.root,
            identity_source: report.identity_source,
            claim_policy: report.claim_policy,
            protection: report.protection,
            protection_note: &report.protection_note,
        },
        participants: report
            .participants
            .iter()
            .map(|p| wire::Participant {
                participant_id: &p.participant_id,
                created_at: format_timestamp(p.created_at),
            })
            .collect(),
        sessions: report.sessions.iter().map(session_wire).collect(),
        claims: report
            .claims
            .iter()
            .map(|c| claim_wire(&c.claim, now, Some(c.effective_enforcement)))
            .collect(),
        claim_summary: wire::ClaimSummary {
            total: report.claim_summary.total,
            live: report.claim_summary.live,
            holders: report
                .claim_summary
                .holders
                .iter()
                .map(|(participant_id, claims)| wire::Holder {
                    participant_id,
                    claims: *claims,
                })
                .collect(),
            complete: report.claim_summary.complete,
        },
        attention: report.attention.iter().map(attention_wire).collect(),
        cursor: format_cursor(report.head_seq),
        messages: None,
        omitted: None,
    }
}

/// The status report.
pub fn status(report: &StatusReport, now: i64) -> Value {
    acc_core::wire::json(&status_wire(report, now))
}

/// The status a model reads (`acc_status`): [`status`] of a summary report, held within the
/// page cap (12,000 bytes) at any room size. The caller session `mine`'s claims and sessions
/// come first; what does not fit is left out from the end (listed claims, then attention, then
/// other sessions, then participants), the counts stay whole (`claimSummary`), and `omitted`
/// says how much was left out (with the claims the summary does not list) and where the whole
/// room is read (`acc_sync` with scope `full`, the `acc://snapshot` resource).
pub fn status_capped(report: &StatusReport, now: i64, mine: &str) -> Value {
    let mut status = status_wire(report, now);
    status.claims.sort_by_key(|c| c.owner_session_id != mine);
    status.sessions.sort_by_key(|s| s.session_id != mine);
    let mut omitted = wire::Omitted::default();
    // The report is serialized once; each item left out takes its own bytes and a comma off
    // (compact JSON), so a room of any size costs one pass, not one serialization an item.
    let mut size = acc_core::wire::json(&status).to_string().len();
    let cost = |item: Value| item.to_string().len() + 1;
    // Room for the `omitted` note and the server's `speaksFor` beside the report.
    let budget = PAGE_BYTE_CAP.saturating_sub(1_000);
    while size > budget {
        if let Some(claim) = status.claims.pop() {
            size = size.saturating_sub(cost(acc_core::wire::json(&claim)));
            status.claim_summary.complete = false;
        } else if let Some(item) = status.attention.pop() {
            size = size.saturating_sub(cost(acc_core::wire::json(&item)));
            omitted.attention += 1;
        } else if status.sessions.len() > 1
            && let Some(session) = status.sessions.pop()
        {
            size = size.saturating_sub(cost(acc_core::wire::json(&session)));
            omitted.sessions += 1;
        } else if let Some(participant) = status.participants.pop() {
            size = size.saturating_sub(cost(acc_core::wire::json(&participant)));
            omitted.participants += 1;
        } else {
            break;
        }
    }
    // The claims not listed: those the summary leaves out (it lists the ones that matter in a
    // large room) and those the page could not hold.
    omitted.claims = usize::try_from(status.claim_summary.total)
        .unwrap_or(0)
        .saturating_sub(status.claims.len());
    if omitted != wire::Omitted::default() {
        omitted.read_all =
            Some("the whole room: acc_sync {\"scope\": \"full\"}, or the acc://snapshot resource");
        status.omitted = Some(omitted);
    }
    acc_core::wire::json(&status)
}

/// The roster resource: the status report's workspace, participants and sessions.
pub fn roster(report: &StatusReport) -> Value {
    let status = status_wire(report, 0);
    acc_core::wire::json(&wire::Roster {
        workspace: status.workspace,
        participants: status.participants,
        sessions: status.sessions,
    })
}

fn sync_wire<'a>(
    page: &'a EventPage,
    attention_items: &'a [Attention],
    snapshot: Option<Value>,
) -> wire::Sync<'a> {
    wire::Sync {
        scope: if snapshot.is_some() { "full" } else { "delta" },
        events: page.events.iter().map(event_wire).collect(),
        next_cursor: format_cursor(page.next_cursor),
        has_more: page.has_more,
        attention: attention_items.iter().map(attention_wire).collect(),
        snapshot,
    }
}

/// A delta sync page.
pub fn sync_delta(page: &EventPage, attention_items: &[Attention]) -> Value {
    acc_core::wire::json(&sync_wire(page, attention_items, None))
}

/// An error object.
pub fn error(error: &AccError) -> Value {
    acc_core::wire::json(&wire::Error {
        error: wire::ErrorBody {
            code: error.code.as_str(),
            message: &error.message,
            details: error.details.as_ref(),
        },
    })
}

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
            error_code: o.error_code.as_deref(),
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

/// The unbounded forensic snapshot: the status of every session (closed too) and every
/// message with its receipts.
pub fn snapshot(
    report: &StatusReport,
    messages: &[(MessageView, Vec<ReceiptRow>)],
    now: i64,
    workspace_id: &str,
) -> Value {
    acc_core::wire::json(&wire::Status {
        messages: Some(
            messages
                .iter()
                .map(|(m, r)| history_message(m, r, workspace_id))
                .collect(),
        ),
        ..status_wire(report, now)
    })
}

/// A full sync: the delta page, then the snapshot.
pub fn sync_full(page: &EventPage, attention_items: &[Attention], snapshot: Value) -> Value {
    acc_core::wire::json(&sync_wire(page, attention_items, Some(snapshot)))
}

/// The loaded and refused adapters.
/// `acc adapters install`.
pub fn adapter_installed(installed: &acc_delivery::user_adapters::Installed) -> Value {
    acc_core::wire::json(&wire::AdapterInstalled {
        adapter_id: installed.adapter_id.clone(),
        file: lossy(&installed.file),
        contracts: installed.contracts.iter().map(|p| lossy(p)).collect(),
    })
}

/// `acc adapters remove`.
pub fn adapter_removed(id: &str, file: &std::path::Path) -> Value {
    acc_core::wire::json(&wire::AdapterRemoved {
        adapter_id: id,
        file: lossy(file),
    })
}

pub fn adapters(
    plugins: &acc_delivery::plugins::Plugins,
    evidence: &acc_delivery::contracts::Evidence,
) -> Value {
    acc_core::wire::json(&wire::Adapters {
        search_path: plugins.search_path.iter().map(|p| lossy(p)).collect(),
        adapters: plugins
            .adapters
            .iter()
            .map(|a| wire::Adapter {
                adapter_id: &a.adapter_id,
                file: lossy(&a.file),
                transport: &a.transport,
                offer_kind: a.offer_kind.as_str(),
                api_version: &a.api_version,
                features: &a.features,
                contract: &a.contract,
                evidence: match evidence.declaration_check(&a.contract) {
                    Ok(detail) => wire::Evidence {
                        admissible: true,
                        detail,
                    },
                    Err(detail) => wire::Evidence {
                        admissible: false,
                        detail,
                    },
                },
            })
            .collect(),
        refused: plugins
            .refused
            .iter()
            .map(|r| wire::Refused {
                file: lossy(&r.file),
                reason: &r.reason,
            })
            .collect(),
    })
}

fn lossy(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A delivery binding, redacted: the endpoint never leaves the store.
pub fn binding(binding: &BindingRow) -> Value {
    acc_core::wire::json(&binding_wire(binding))
}

/// An `acc contract verify` report.
pub fn verify(report: &acc_delivery::contracts::VerifyReport) -> Value {
    acc_core::wire::json(&wire::Verify {
        dir: lossy(&report.dir),
        dirs: report.dirs.iter().map(|d| lossy(d)).collect(),
        valid: report.problems.is_empty(),
        contracts: &report.contracts,
        captures: report.captures.iter().map(|p| lossy(p)).collect(),
        adapters: report
            .adapters
            .iter()
            .map(|a| wire::AdapterEligibility {
                adapter_id: &a.adapter_id,
                contract_id: &a.contract_id,
                client_version: a.client_version.as_deref(),
                live: a.eligibility.as_ref().err().is_none_or(|r| r != "not_live"),
                eligible: a.eligibility.is_ok(),
                reason: a.eligibility.as_ref().err().map(String::as_str),
            })
            .collect(),
        problems: &report.problems,
    })
}

/// `acc bind`: `{binding}`.
pub fn bound(binding: &BindingRow) -> Value {
    acc_core::wire::json(&wire::Bound {
        binding: binding_wire(binding),
    })
}

/// `acc unbind`: `{removed}`.
pub fn unbound(removed: usize) -> Value {
    acc_core::wire::json(&wire::Unbound { removed })
}

/// `acc next-turn`.
pub fn next_turn(rendered: &acc_adapter_api::wire::RenderAnswer) -> Value {
    acc_core::wire::json(&wire::NextTurn {
        text: &rendered.text,
        carried: &rendered.carried,
        withheld: &rendered.withheld,
    })
}

/// `acc config check` on a valid file.
/// `acc store upgrade|downgrade`.
pub fn layout_change(plan: &acc_store::layout::Plan, dry_run: bool, changed: bool) -> Value {
    acc_core::wire::json(&wire::LayoutChange {
        store: lossy(&plan.store),
        from_revision: plan.from,
        to_revision: plan.to,
        steps: plan.steps.clone(),
        backup: plan.backup.as_deref().map(lossy),
        receipt_rows: plan.rows,
        estimate_ms: plan.estimate_ms,
        dry_run,
        changed,
    })
}

/// A store's layout: its revision, this build's, and the backups beside it.
pub fn store_layout(store: &acc_store::Store) -> wire::StoreLayout {
    let revision = store.layout().revision;
    wire::StoreLayout {
        revision,
        build_revision: acc_store::layout::LAYOUT_REVISION,
        pending_upgrade: revision < acc_store::layout::LAYOUT_REVISION,
        backups: acc_store::layout::backups(store.path())
            .into_iter()
            .map(|(path, bytes)| wire::LayoutBackup {
                path: lossy(&path),
                bytes,
            })
            .collect(),
    }
}

pub fn config_valid(
    path: &std::path::Path,
    workspace_id: &str,
    config: &acc_core::workspace::Config,
) -> Value {
    acc_core::wire::json(&wire::ConfigValid {
        path: lossy(path),
        valid: true,
        workspace_id,
        display_name: &config.display_name,
        roots: &config.roots,
        policy: wire::Policy {
            claim_mode: config.claim_mode.as_str(),
            context_budget_bytes: u64::from(config.context_budget_bytes),
        },
        required_adapters: &config.required_adapters,
    })
}

/// `acc config init`: the file, whether it was written, and its content (as JSON).
pub fn config_write(path: &std::path::Path, written: Option<bool>, text: Option<&str>) -> Value {
    acc_core::wire::json(&wire::ConfigWrite {
        path: lossy(path),
        written,
        content: text.map(|t| serde_json::from_str(t).unwrap_or(Value::Null)),
    })
}

/// An MCP `acc_release` of one claim given as a scalar: `{released: id}`.
pub fn released_one(id: &str) -> Value {
    acc_core::wire::json(&wire::ReleasedOne { released: id })
}

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
use acc_delivery::codes::DeliveryCode;
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
    let mut size = acc_core::wire::json_len(&status);
    fn cost<T: serde::Serialize>(item: &T) -> usize {
        acc_core::wire::json_len(item) + 1
    }
    // Room for the `omitted` note and the server's `speaksFor` beside the report.
    let budget = PAGE_BYTE_CAP.saturating_sub(1_000);
    while size > budget {
        if let Some(claim) = status.claims.pop() {
            size = size.saturating_sub(cost(&claim));
            status.claim_summary.complete = false;
        } else if let Some(item) = status.attention.pop() {
            size = size.saturating_sub(cost(&item));
            omitted.attention += 1;
        } else if status.sessions.len() > 1
            && let Some(session) = status.sessions.pop()
        {
            size = size.saturating_sub(cost(&session));
            omitted.sessions += 1;
        } else if let Some(participant) = status.participants.pop() {
            size = size.saturating_sub(cost(&participant));
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

mod messages;
mod setup;
pub use messages::*;
pub use setup::*;

//! The JSON boundary: stable output shapes for CLI `--json` (and later MCP results).
//!
//! Core and store types are not serializable; this module converts them. A change here changes
//! a published shape, so the golden tests under `tests/` must change with it.

use serde_json::{Value, json};

use crate::clock::format_timestamp;
use crate::core::OpenedSession;
use crate::core::status::{
    Attention, ClaimState, EventPage, SessionState, StatusReport, format_cursor,
};
use crate::error::AccError;
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

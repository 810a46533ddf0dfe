//! Intent: what a session says it is doing. Awareness only; it grants and blocks nothing.

use serde_json::json;

use crate::error::{AccError, AccResult};
use crate::identity::{Caller, verify_caller};
use crate::{Core, claims};
use acc_store::IntentRow;

/// Longest intent summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 280;
/// Intent modes.
pub const MODES: &[&str] = &["observe", "explore", "edit", "review", "coordinate", "wait"];
/// Intent states.
pub const STATES: &[&str] = &["active", "blocked", "waiting", "done"];
/// Most resource hints one intent may carry.
pub const MAX_HINTS: usize = 64;

/// A requested intent.
#[derive(Debug, Clone)]
pub struct IntentRequest {
    /// Summary (one line, at most 280 characters).
    pub summary: String,
    /// Mode.
    pub mode: String,
    /// State (default `active`).
    pub state: Option<String>,
    /// Resource hints (normalised like claims).
    pub resource_hints: Vec<String>,
}

fn one_of(what: &str, value: &str, allowed: &[&str]) -> AccResult<()> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(AccError::usage(format!(
            "{what} must be one of {}, got `{value}`",
            allowed.join(", ")
        )))
    }
}

impl Core {
    /// Set the caller session's intent.
    pub fn set_intent(&mut self, caller: &Caller, request: &IntentRequest) -> AccResult<IntentRow> {
        let (summary, state, hints) = validate(request)?;
        let summary = summary.as_str();
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let session = verify_caller(w, &workspace_id, caller, now)?;
            let intent = IntentRow {
                session_id: session.session_id.clone(),
                summary: summary.to_string(),
                mode: request.mode.clone(),
                state: state.clone(),
                resource_hints: hints.clone(),
                updated_at: now,
            };
            w.upsert_intent(&intent)?;
            w.append_event(
                "intent.updated",
                now,
                Some(&session.session_id),
                Some(&session.participant_id),
                &json!({ "summary": intent.summary, "mode": intent.mode, "state": intent.state, "resourceHints": intent.resource_hints }),
            )?;
            Ok(intent)
        })
    }
}

/// Validate an intent without touching the store: the trimmed summary, the state, and the
/// canonical hints.
pub fn validate(request: &IntentRequest) -> AccResult<(String, String, Vec<String>)> {
    {
        let summary = request.summary.trim();
        if summary.is_empty() {
            return Err(AccError::usage("intent summary must not be empty"));
        }
        if summary.chars().count() > MAX_SUMMARY_CHARS {
            return Err(AccError::usage(format!(
                "intent summary is {} characters; the limit is {MAX_SUMMARY_CHARS}",
                summary.chars().count()
            )));
        }
        if summary.contains(['\n', '\r']) {
            return Err(AccError::usage("intent summary must be one line"));
        }
        one_of("mode", &request.mode, MODES)?;
        let state = request.state.clone().unwrap_or_else(|| "active".into());
        one_of("state", &state, STATES)?;
        if request.resource_hints.len() > MAX_HINTS {
            return Err(AccError::usage(format!(
                "at most {MAX_HINTS} resource hints"
            )));
        }
        let hints = if request.resource_hints.is_empty() {
            Vec::new()
        } else {
            claims::normalize_unique(&request.resource_hints, "intent hints")?
        };
        Ok((summary.to_string(), state, hints))
    }
}

impl Core {
    /// Clear the caller session's intent; returns whether there was one.
    pub fn clear_intent(&mut self, caller: &Caller) -> AccResult<bool> {
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let session = verify_caller(w, &workspace_id, caller, now)?;
            let had = w.delete_intent(&session.session_id)?;
            if had {
                w.append_event(
                    "intent.cleared",
                    now,
                    Some(&session.session_id),
                    Some(&session.participant_id),
                    &json!({}),
                )?;
            }
            Ok(had)
        })
    }
}

//! Intent: what a session says it is doing. Awareness only; it grants and blocks nothing.

use crate::error::{AccError, AccResult};
use crate::events::Event;
use crate::identity::{Caller, verify_caller};
use crate::{Core, claims};
use acc_store::IntentRow;
use acc_store::{IntentMode, IntentState};

/// Longest intent summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 280;
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

impl Core {
    /// Set the caller session's intent.
    pub fn set_intent(&mut self, caller: &Caller, request: &IntentRequest) -> AccResult<IntentRow> {
        let (summary, mode, state, hints) = validate(request)?;
        let summary = summary.as_str();
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let session = verify_caller(w, &workspace_id, caller, now)?;
            let intent = IntentRow {
                session_id: session.session_id.clone(),
                summary: summary.to_string(),
                mode,
                state,
                resource_hints: hints.clone(),
                updated_at: now,
            };
            w.upsert_intent(&intent)?;
            Event::IntentUpdated {
                summary: intent.summary.clone(),
                mode: intent.mode,
                state: intent.state,
                resource_hints: intent.resource_hints.clone(),
            }
            .append(
                w,
                now,
                Some(&session.session_id),
                Some(&session.participant_id),
            )?;
            Ok(intent)
        })
    }
}

/// Validate an intent without touching the store: the trimmed summary, the state, and the
/// canonical hints.
pub fn validate(
    request: &IntentRequest,
) -> AccResult<(String, IntentMode, IntentState, Vec<String>)> {
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
        let mode = AccError::parse::<IntentMode>(&request.mode)?;
        let state = match &request.state {
            Some(state) => AccError::parse::<IntentState>(state)?,
            None => IntentState::Active,
        };
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
        Ok((summary.to_string(), mode, state, hints))
    }
}

impl Core {
    /// Clear the caller session's intent; returns whether there was one.
    pub fn clear_intent(&mut self, caller: &Caller) -> AccResult<bool> {
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            w.reader().prefetch_intent(&caller.session_id)?;
            let session = verify_caller(w, &workspace_id, caller, now)?;
            let had = w.delete_intent(&session.session_id)?;
            if had {
                Event::IntentCleared {}.append(
                    w,
                    now,
                    Some(&session.session_id),
                    Some(&session.participant_id),
                )?;
            }
            Ok(had)
        })
    }
}

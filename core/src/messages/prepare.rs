//! Preparing a message: every field checked and normalised into a [`Draft`] before any
//! session or store is touched (`acc message`, `acc reply`, `acc finish`, and their MCP tools).

use super::*;
use crate::identity::Harness;

/// U+0000 is never text a person means, and PostgreSQL cannot hold it in a text column: a
/// message carrying one is refused on both backends alike (docs/decisions.md).
fn check_no_nul(what: &str, text: &str) -> AccResult<()> {
    if text.contains('\0') {
        return Err(AccError::usage(format!(
            "{what} contains U+0000 (NUL), which acc does not store"
        )));
    }
    Ok(())
}

fn check_line(what: &str, text: &str, max: usize, allow_empty: bool) -> AccResult<()> {
    check_no_nul(what, text)?;
    if !allow_empty && text.trim().is_empty() {
        return Err(AccError::usage(format!("{what} must not be empty")));
    }
    let count = text.chars().count();
    if count > max {
        return Err(AccError::usage(format!(
            "{what} is {count} characters; the limit is {max}"
        )));
    }
    if text.contains(['\n', '\r']) {
        return Err(AccError::usage(format!("{what} must be one line")));
    }
    Ok(())
}

fn check_body(text: &str, allow_empty: bool) -> AccResult<()> {
    check_no_nul("body", text)?;
    if !allow_empty && text.trim().is_empty() {
        return Err(AccError::usage("body must not be empty"));
    }
    let count = text.chars().count();
    if count > MAX_BODY_CHARS {
        return Err(AccError::usage(format!(
            "body is {count} characters; the limit is {MAX_BODY_CHARS}"
        )));
    }
    Ok(())
}

fn artifacts_value(artifacts: &[Artifact]) -> AccResult<Value> {
    if artifacts.len() > MAX_ARTIFACTS {
        return Err(AccError::usage(format!(
            "at most {MAX_ARTIFACTS} artifacts"
        )));
    }
    let mut out = Vec::with_capacity(artifacts.len());
    for artifact in artifacts {
        let uri = resource::normalize(&artifact.uri)?;
        if let Some(description) = &artifact.description {
            check_line(
                "artifact description",
                description,
                MAX_ARTIFACT_DESCRIPTION_CHARS,
                false,
            )?;
        }
        out.push(StoredArtifact {
            uri,
            description: artifact.description.clone(),
        });
    }
    Ok(wire::json(&out))
}

fn check_client_message_id(id: &Option<String>) -> AccResult<()> {
    if let Some(id) = id {
        ids::validate_portable_id("clientMessageId", id)?;
    }
    Ok(())
}

fn unique_message_ids(what: &str, list: &[String]) -> AccResult<Vec<String>> {
    if list.len() > MAX_DECISION_TARGETS {
        return Err(AccError::usage(format!(
            "{what} takes 1 to {MAX_DECISION_TARGETS} decision ids"
        )));
    }
    let mut seen = BTreeSet::new();
    for id in list {
        ids::validate_record_id("message", id)?;
        if !seen.insert(id.clone()) {
            return Err(AccError::usage(format!(
                "{what} names `{id}` more than once"
            )));
        }
    }
    Ok(seen.into_iter().collect())
}

impl Core {
    /// Validate a generic message without touching the store.
    pub fn prepare_message(request: &SendRequest) -> AccResult<Draft> {
        let kind_text = request.kind.as_deref().unwrap_or("note");
        let kind = MessageKind::parse(kind_text).filter(|k| GENERIC_KINDS.contains(&k.as_str()));
        let Some(kind) = kind else {
            let kind = kind_text;
            let hint = match kind {
                "answer" => "; answer through reply, which links the thread",
                "handoff" => "; hand off through finish, which records the structured payload",
                _ => "",
            };
            return Err(AccError::usage(format!(
                "message kind must be one of {}, got `{kind}`{hint}",
                GENERIC_KINDS.join(", ")
            )));
        };
        check_line("subject", &request.subject, MAX_SUBJECT_CHARS, false)?;
        check_body(&request.body, kind == MessageKind::Request)?;
        check_client_message_id(&request.client_message_id)?;
        if request.to.len() > MAX_RECIPIENTS {
            return Err(AccError::usage(format!(
                "at most {MAX_RECIPIENTS} recipients"
            )));
        }
        let change = match (request.supersedes.is_empty(), request.withdraws.is_empty()) {
            (true, true) => None,
            (false, false) => {
                return Err(AccError::usage("give supersedes or withdraws, not both"));
            }
            (false, true) => Some((
                DecisionAction::Replace,
                unique_message_ids("supersedes", &request.supersedes)?,
            )),
            (true, false) => Some((
                DecisionAction::Withdraw,
                unique_message_ids("withdraws", &request.withdraws)?,
            )),
        };
        if change.is_some() && kind != MessageKind::Decision {
            return Err(AccError::usage(
                "supersedes and withdraws apply only to kind decision",
            ));
        }
        // Obligation and addressing are checked now where they can be; a decision change's
        // inherited recipients are known only inside the transaction.
        if change.is_none() {
            kind_obligation(kind, request.obligation.as_deref(), !request.to.is_empty())?;
        } else {
            kind_obligation(kind, request.obligation.as_deref(), true)?;
        }
        let draft = Draft {
            kind,
            obligation: request.obligation.clone(),
            to: request.to.clone(),
            subject: request.subject.clone(),
            body: request.body.clone(),
            artifacts: artifacts_value(&request.artifacts)?,
            handoff: None,
            change,
            reply_to: None,
            client_message_id: request.client_message_id.clone(),
            finish: false,
        };
        Ok(draft)
    }

    /// Validate a reply without touching the store.
    pub fn prepare_reply(request: &ReplyRequest) -> AccResult<Draft> {
        ids::validate_record_id("message", &request.message_id)?;
        if let Some(subject) = &request.subject {
            check_line("subject", subject, MAX_SUBJECT_CHARS, false)?;
        }
        check_body(&request.body, false)?;
        check_client_message_id(&request.client_message_id)?;
        let draft = Draft {
            kind: MessageKind::Answer,
            obligation: None,
            to: Vec::new(),
            subject: request.subject.clone().unwrap_or_default(),
            body: request.body.clone(),
            artifacts: artifacts_value(&request.artifacts)?,
            handoff: None,
            change: None,
            reply_to: Some(request.message_id.clone()),
            client_message_id: request.client_message_id.clone(),
            finish: false,
        };
        Ok(draft)
    }

    /// Validate a handoff without touching the store.
    pub fn prepare_finish(request: &FinishRequest) -> AccResult<Draft> {
        check_line("goal", &request.goal, MAX_HANDOFF_ITEM_CHARS, false)?;
        for (what, list) in [
            ("completed", &request.completed),
            ("remaining", &request.remaining),
            ("blockers", &request.blockers),
            ("verification", &request.verification),
        ] {
            if list.len() > MAX_HANDOFF_ITEMS {
                return Err(AccError::usage(format!(
                    "at most {MAX_HANDOFF_ITEMS} {what} items"
                )));
            }
            for item in list {
                check_line(
                    &format!("a {what} item"),
                    item,
                    MAX_HANDOFF_ITEM_CHARS,
                    false,
                )?;
            }
        }
        let status = match &request.status {
            Some(status) if ["complete", "partial", "blocked"].contains(&status.as_str()) => {
                status.clone()
            }
            Some(other) => {
                return Err(AccError::usage(format!(
                    "status must be complete, partial or blocked, got `{other}`"
                )));
            }
            None if !request.blockers.is_empty() => "blocked".into(),
            None if !request.remaining.is_empty() => "partial".into(),
            None => "complete".into(),
        };
        check_client_message_id(&request.client_message_id)?;
        if let Some(to) = &request.to {
            ids::validate_portable_id("recipient", to).or_else(|_| {
                if Harness::parse(to).is_some() {
                    Ok(())
                } else {
                    Err(AccError::usage(format!("`{to}` is not a participant id")))
                }
            })?;
        }
        let handoff = wire::json(&Handoff {
            goal: request.goal.clone(),
            status: status.clone(),
            completed: request.completed.clone(),
            remaining: request.remaining.clone(),
            blockers: request.blockers.clone(),
            verification: request.verification.clone(),
        });
        let mut body = format!("goal: {}\nstatus: {status}\n", request.goal);
        for (what, list) in [
            ("completed", &request.completed),
            ("remaining", &request.remaining),
            ("blockers", &request.blockers),
            ("verification", &request.verification),
        ] {
            if !list.is_empty() {
                body.push_str(&format!("{what}:\n"));
                for item in list {
                    body.push_str(&format!("- {item}\n"));
                }
            }
        }
        check_body(&body, false)?;
        let subject: String = format!("handoff ({status}): {}", request.goal)
            .chars()
            .take(MAX_SUBJECT_CHARS)
            .collect();
        let to: Vec<String> = request.to.iter().cloned().collect();
        let draft = Draft {
            kind: MessageKind::Handoff,
            obligation: None,
            to,
            subject,
            body,
            artifacts: Value::Array(Vec::new()),
            handoff: Some(handoff),
            change: None,
            reply_to: None,
            client_message_id: request.client_message_id.clone(),
            finish: true,
        };
        Ok(draft)
    }
}

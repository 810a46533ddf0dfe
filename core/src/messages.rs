//! Messages, receipts, threads, inbox, reply and ack, handoffs, decisions, history and prune.
//!
//! Every send-like operation records the message, one receipt per resolved recipient and its
//! events in one transaction; delivery happens after the commit, outside the core. Receipts
//! only move forward: `queued -> offered -> retrieved -> acknowledged`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::Value;

use crate::wire::{
    self, DecisionChange, Handoff, LogicalContent, MessageDetails, PresentDetails, PresentSession,
    StoredArtifact,
};
use sha2::{Digest, Sha256};

use crate::clock::Millis;
use crate::error::{AccError, AccResult, ErrorCode};
use crate::events::Event;
use crate::identity::{Caller, Liveness, Presence, check_caller_allow_closed, presence};
use crate::ids;
use crate::{Core, resource};
use acc_store::{
    DecisionAction, DecisionLink, HistoryFilter, MessageRow, Reader, ReceiptRow, Writer,
};
use acc_store::{MessageKind, Obligation, ReceiptState};

/// Longest subject, in characters (one line).
pub const MAX_SUBJECT_CHARS: usize = 500;
/// Longest body, in characters.
pub const MAX_BODY_CHARS: usize = 4000;
/// Subjects in summaries are cut to this many UTF-8 bytes.
pub const SUMMARY_SUBJECT_BYTES: usize = 160;
/// Default summary page size.
pub const DEFAULT_PAGE_ITEMS: i64 = 20;
/// Largest summary page size (the byte cap usually wins first).
pub const MAX_PAGE_ITEMS: i64 = 500;
/// Byte cap of a formatted summary page.
pub const PAGE_BYTE_CAP: usize = 12_000;
/// Most artifacts on one message.
pub const MAX_ARTIFACTS: usize = 16;
/// Longest artifact description, in characters.
pub const MAX_ARTIFACT_DESCRIPTION_CHARS: usize = 280;
/// Decision changes target 1..16 decisions.
pub const MAX_DECISION_TARGETS: usize = 16;
/// Most explicit recipients of one message.
pub const MAX_RECIPIENTS: usize = 64;
/// Most items in each handoff list, and the longest item.
pub const MAX_HANDOFF_ITEMS: usize = 32;
/// Longest handoff list item or goal, in characters.
pub const MAX_HANDOFF_ITEM_CHARS: usize = 500;
/// Attention items computed per rule, newest first.
pub const ATTENTION_PER_RULE: i64 = 100;
/// Messages removed by one `prune --apply`.
pub const PRUNE_BATCH: i64 = 10_000;

/// Message kinds.
pub const KINDS: &[&str] = &[
    "note", "question", "request", "answer", "decision", "handoff",
];
/// Kinds the generic `message` boundary accepts.
pub const GENERIC_KINDS: &[&str] = &["note", "question", "request", "decision"];
/// Receipt states in order.
/// Client names `--to` accepts when exactly one session of that client is present: every hooked
/// client (the core sees no client list; a host test holds this to `acc_clients::Client::ALL`),
/// then `mcp` and `cli`.
pub const CLIENT_NAMES: &[&str] = &["claude-code", "codex", "gemini", "mcp", "cli"];

/// An artifact attached to a message: a resource and an optional description (peer text).
#[derive(Debug, Clone)]
pub struct Artifact {
    /// A resource URI (`file:src/a.rs`, `doc:plan#x`).
    pub uri: String,
    /// What it is.
    pub description: Option<String>,
}

/// A generic message (`acc message`, `acc request`, `acc_message`, `acc_request`).
#[derive(Debug, Clone, Default)]
pub struct SendRequest {
    /// Participant ids or client names; empty for a room record.
    pub to: Vec<String>,
    /// `note`, `question`, `request` or `decision` (default `note`).
    pub kind: Option<String>,
    /// Obligation; default from the kind.
    pub obligation: Option<String>,
    /// Subject.
    pub subject: String,
    /// Body.
    pub body: String,
    /// Artifacts.
    pub artifacts: Vec<Artifact>,
    /// Decisions this one replaces.
    pub supersedes: Vec<String>,
    /// Decisions this one withdraws.
    pub withdraws: Vec<String>,
    /// Idempotency key.
    pub client_message_id: Option<String>,
}

/// A reply to a message.
#[derive(Debug, Clone, Default)]
pub struct ReplyRequest {
    /// The message answered.
    pub message_id: String,
    /// Body.
    pub body: String,
    /// Subject (default `Re: <original subject>`).
    pub subject: Option<String>,
    /// Artifacts.
    pub artifacts: Vec<Artifact>,
    /// Idempotency key.
    pub client_message_id: Option<String>,
}

/// A handoff (`finish`).
#[derive(Debug, Clone, Default)]
pub struct FinishRequest {
    /// The goal this session worked on.
    pub goal: String,
    /// `complete`, `partial` or `blocked`; default from the lists.
    pub status: Option<String>,
    /// Addressee; none leaves a room handoff.
    pub to: Option<String>,
    /// Done.
    pub completed: Vec<String>,
    /// Left to do.
    pub remaining: Vec<String>,
    /// What blocks.
    pub blockers: Vec<String>,
    /// How the work was checked.
    pub verification: Vec<String>,
    /// Idempotency key.
    pub client_message_id: Option<String>,
}

/// Derived decision lifecycle metadata (never persisted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionStatus {
    /// `current`, `withdrawn` or `superseded`.
    pub state: &'static str,
    /// No recorded successor links to this record.
    pub is_head: bool,
    /// The group has several terminal positions.
    pub conflicted: bool,
    /// Number of heads in the group.
    pub head_count: usize,
    /// The sole current head, if any.
    pub current_message_id: Option<String>,
    /// Representative root (the oldest record of the group).
    pub group_id: String,
}

/// A message with its derived decision status.
#[derive(Debug, Clone)]
pub struct MessageView {
    /// The message.
    pub message: MessageRow,
    /// Decision status, for decisions.
    pub decision: Option<DecisionStatus>,
}

/// A recorded (or replayed) message: what the store now holds. Delivery is not the core's:
/// the application layer routes a recorded message (`App::send`).
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The message.
    pub message: MessageView,
    /// Receipts as committed.
    pub receipts: Vec<ReceiptRow>,
    /// Whether this was an idempotent retry returning the original.
    pub replayed: bool,
    /// For a reply: the caller's receipt of the original message.
    pub original_receipt: Option<ReceiptRow>,
    /// For a finish: the claims released.
    pub released_claims: Vec<String>,
}

/// A message with one receipt (inbox items).
#[derive(Debug, Clone)]
pub struct Received {
    /// The message.
    pub message: MessageView,
    /// The caller's receipt.
    pub receipt: ReceiptRow,
}

/// A page of rows before byte capping.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// Items, newest first (at most the requested limit).
    pub items: Vec<T>,
    /// More items follow the last one.
    pub has_more: bool,
}

/// A prune report.
#[derive(Debug, Clone)]
pub struct PruneReport {
    /// Messages that may be (or were) removed.
    pub message_ids: Vec<String>,
    /// Whether they were removed.
    pub applied: bool,
    /// Only messages recorded before this event sequence were considered.
    pub before_seq: i64,
}

fn kind_obligation(
    kind: MessageKind,
    obligation: Option<&str>,
    addressed: bool,
) -> AccResult<Obligation> {
    let kind = kind.as_str();
    let default = match kind {
        "question" | "request" => "reply",
        "handoff" if addressed => "acknowledge",
        _ => "none",
    };
    let obligation = obligation.unwrap_or(default);
    if !["none", "reply", "acknowledge"].contains(&obligation) {
        return Err(AccError::usage(format!(
            "obligation must be none, reply or acknowledge, got `{obligation}`"
        )));
    }
    let allowed: &[&str] = match kind {
        "note" | "answer" => &["none"],
        "question" | "request" => &["reply"],
        "decision" => &["none", "acknowledge"],
        "handoff" => &["acknowledge", "none"],
        other => return Err(AccError::usage(format!("unknown message kind `{other}`"))),
    };
    if !allowed.contains(&obligation) {
        return Err(AccError::usage(format!(
            "a {kind} takes obligation {}, not `{obligation}`",
            allowed.join(" or ")
        )));
    }
    if !addressed {
        match (kind, obligation) {
            ("question" | "request", _) => {
                return Err(AccError::usage(format!(
                    "a {kind} must be addressed: give at least one recipient"
                )));
            }
            ("decision" | "handoff", "acknowledge") => {
                return Err(AccError::usage(format!(
                    "a room {kind} (no recipients) must use obligation none; address it to ask for acknowledgement"
                )));
            }
            _ => {}
        }
    }
    if addressed && kind == "handoff" && obligation != "acknowledge" {
        return Err(AccError::usage(
            "an addressed handoff requires acknowledgement",
        ));
    }
    AccError::parse::<Obligation>(obligation)
}

fn check_line(what: &str, text: &str, max: usize, allow_empty: bool) -> AccResult<()> {
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

/// Move a receipt forward. Returns whether it changed; a repeat is a no-op and a backward
/// move is refused.
pub fn advance(receipt: &mut ReceiptRow, target: ReceiptState, now: Millis) -> AccResult<bool> {
    let (from, to) = (receipt.state, target);
    if to < from {
        return Err(AccError::new(
            ErrorCode::ReceiptBackward,
            format!(
                "a receipt in state {} cannot move back to {target}",
                receipt.state
            ),
        ));
    }
    if to == from {
        return Ok(false);
    }
    receipt.state = target;
    receipt.updated_at = now;
    Ok(true)
}

fn receipt_event(
    w: &mut Writer<'_>,
    message: &MessageRow,
    receipt: &ReceiptRow,
    from: ReceiptState,
    now: Millis,
) -> AccResult<()> {
    Event::ReceiptUpdated {
        message_id: message.message_id.clone(),
        participant_id: receipt.participant_id.clone(),
        from: from.as_str(),
        to: receipt.state.as_str(),
    }
    .append(w, now, None, Some(&receipt.participant_id))?;
    Ok(())
}

/// The participants with a live (not offline) session.
fn live_participants(
    reader: &Reader<'_>,
    now: Millis,
    liveness: &dyn Liveness,
) -> AccResult<BTreeSet<String>> {
    Ok(reader
        .sessions(false)?
        .into_iter()
        .filter(|s| presence(s, now, &*liveness) != Presence::Offline)
        .map(|s| s.participant_id)
        .collect())
}

/// Resolve explicit recipients: known participant ids, or a client name with exactly one
/// live session. Sorted, deduplicated.
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
        let present: Vec<PresentSession> = live
            .iter()
            .map(|s| PresentSession {
                participant_id: s.participant_id.clone(),
                harness: s.harness.clone(),
                presence: presence(s, now, &*liveness).as_str(),
            })
            .collect();
        let listing = live
            .iter()
            .map(|s| format!("{} ({})", s.participant_id, s.harness))
            .collect::<Vec<_>>()
            .join(", ");
        let matching: BTreeSet<&str> = live
            .iter()
            .filter(|s| {
                CLIENT_NAMES.contains(&name.as_str())
                    && s.harness == *name
                    && s.participant_id != sender
            })
            .map(|s| s.participant_id.as_str())
            .collect();
        // Not a participant, not a present client: the start of one participant's id (at least
        // `ids::MIN_PREFIX` characters; hooked participants' ids are long).
        if matching.is_empty() && name.chars().count() >= crate::ids::MIN_PREFIX {
            let found = reader.ids_with_prefix("participant", name, 11)?;
            match found.as_slice() {
                [one] if one == sender => {
                    return Err(AccError::usage(format!(
                        "`{name}` names the sender ({one}); address another participant"
                    )));
                }
                [one] => {
                    out.insert(one.clone());
                    continue;
                }
                [] => {}
                many => {
                    return Err(AccError::new(
                        ErrorCode::UnknownParticipant,
                        format!(
                            "`{name}` is the start of more than one participant: {}{}; give more of the id",
                            many.iter().take(10).cloned().collect::<Vec<_>>().join(", "),
                            if many.len() > 10 { ", …" } else { "" }
                        ),
                    )
                    .with_details(&PresentDetails { present: &present }));
                }
            }
        }
        match matching.len() {
            1 => {
                out.extend(matching.into_iter().map(str::to_string));
            }
            0 => {
                return Err(AccError::new(
                    ErrorCode::UnknownParticipant,
                    format!(
                        "no participant or present client is called `{name}`; present: {}",
                        if listing.is_empty() {
                            "nobody".into()
                        } else {
                            listing
                        }
                    ),
                )
                .with_details(&PresentDetails { present: &present }));
            }
            _ => {
                return Err(AccError::new(
                    ErrorCode::UnknownParticipant,
                    format!(
                        "several sessions of {name} are present; address one participant: {listing}"
                    ),
                )
                .with_details(&PresentDetails { present: &present }));
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// A validated message, ready to record: everything decided before the transaction.
#[derive(Debug, Clone)]
pub struct Draft {
    kind: MessageKind,
    obligation: Option<String>,
    to: Vec<String>,
    subject: String,
    body: String,
    artifacts: Value,
    handoff: Option<Value>,
    change: Option<(DecisionAction, Vec<String>)>,
    reply_to: Option<String>,
    client_message_id: Option<String>,
    finish: bool,
}

fn content_hash(draft: &Draft, obligation: Obligation, to: &[String]) -> String {
    let logical = wire::json(&LogicalContent {
        kind: draft.kind,
        obligation,
        to,
        subject: &draft.subject,
        body: &draft.body,
        in_reply_to: draft.reply_to.as_deref(),
        artifacts: &draft.artifacts,
        handoff: draft.handoff.as_ref(),
        decision_change: decision_change(draft),
    });
    // `wire::json` gives objects with sorted keys: the same bytes as every earlier build hashed.
    ids::hex(&Sha256::digest(logical.to_string().as_bytes()))
}

/// A draft's decision change, as stored.
fn decision_change(draft: &Draft) -> Option<DecisionChange> {
    draft
        .change
        .as_ref()
        .map(|(action, message_ids)| DecisionChange {
            action: *action,
            message_ids: message_ids.clone(),
        })
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
                if CLIENT_NAMES.contains(&to.as_str()) {
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
            let session = check_caller_allow_closed(&w.reader(), &workspace_id, caller)?;
            let addressed = address(
                &w.reader(),
                &session.participant_id,
                &draft,
                &message_id,
                now,
                &*liveness,
            )?;
            if let Some(original) = replay(
                &w.reader(),
                &session.participant_id,
                &draft,
                &addressed.hash,
            )? {
                return Ok((original, None));
            }
            if session.closed_at.is_some() {
                return Err(AccError::new(
                    ErrorCode::GenerationStale,
                    format!(
                        "session `{}` was closed; open a new one with `acc attach`",
                        session.session_id
                    ),
                ));
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
            let session = crate::identity::verify_caller(w, &workspace_id, caller, now)?;
            let (message, mut receipt) = owned_receipt(&w.reader(), &session.participant_id, message_id)?;
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

    /// One page of the caller's unresolved messages, newest first, without changing receipts.
    pub fn inbox(
        &mut self,
        caller: &Caller,
        cursor: Option<&str>,
        limit: Option<i64>,
    ) -> AccResult<Page<Received>> {
        let limit = page_limit(limit)?;
        validate_cursor(cursor)?;
        let workspace_id = self.workspace.id.clone();
        // A read: listing the inbox changes no receipt and writes no heartbeat.
        let Some(store) = self.store_for_read() else {
            return Err(AccError::new(
                ErrorCode::CallerWorkspaceMismatch,
                format!(
                    "session `{}` is not part of workspace `{workspace_id}`",
                    caller.session_id
                ),
            ));
        };
        store.read(|reader| {
            let session = crate::identity::check_caller(reader, &workspace_id, caller)?;
            let before = match cursor {
                None => None,
                Some(cursor) => {
                    let anchor = reader
                        .message(cursor)?
                        .ok_or_else(|| invalid_cursor(cursor))?;
                    reader
                        .receipt(anchor.seq, &session.participant_id)?
                        .ok_or_else(|| invalid_cursor(cursor))?;
                    Some(anchor.seq)
                }
            };
            let mut rows = reader.inbox_page(&session.participant_id, before, limit + 1)?;
            let has_more = rows.len() as i64 > limit;
            rows.truncate(limit as usize);
            let mut items = Vec::with_capacity(rows.len());
            for (message, receipt) in rows {
                let decision = decision_status(reader, &message)?;
                items.push(Received {
                    message: MessageView { message, decision },
                    receipt,
                });
            }
            Ok(Page { items, has_more })
        })
    }

    /// Read one message exactly; advances the caller's receipt to `retrieved` when needed.
    pub fn read_message(&mut self, caller: &Caller, message_id: &str) -> AccResult<Received> {
        ids::validate_record_id("message", message_id)?;
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let session = crate::identity::verify_caller(w, &workspace_id, caller, now)?;
            let (message, mut receipt) =
                owned_receipt(&w.reader(), &session.participant_id, message_id)?;
            if receipt.state < ReceiptState::Retrieved {
                let from = receipt.state;
                advance(&mut receipt, ReceiptState::Retrieved, now)?;
                w.update_receipt(&receipt)?;
                receipt_event(w, &message, &receipt, from, now)?;
            }
            let decision = decision_status(&w.reader(), &message)?;
            Ok(Received {
                message: MessageView { message, decision },
                receipt,
            })
        })
    }

    /// A page of workspace history (summaries), newest first. Read-only.
    pub fn history(
        &mut self,
        kind: Option<&str>,
        current: bool,
        cursor: Option<&str>,
        limit: Option<i64>,
    ) -> AccResult<Page<MessageView>> {
        let limit = validate_history(kind, current, cursor, limit)?;
        let Some(store) = self.store_for_read() else {
            return match cursor {
                Some(cursor) => Err(invalid_cursor(cursor)),
                None => Ok(Page {
                    items: Vec::new(),
                    has_more: false,
                }),
            };
        };
        store.read(|r| {
            let before = match cursor {
                None => None,
                Some(cursor) => Some(
                    r.message(cursor)?
                        .ok_or_else(|| invalid_cursor(cursor))?
                        .seq,
                ),
            };
            let filter = HistoryFilter {
                kind: kind.map(str::to_string),
                heads_only: current,
            };
            let mut rows = r.history_page(&filter, before, limit + 1)?;
            let has_more = rows.len() as i64 > limit;
            rows.truncate(limit as usize);
            let mut items = Vec::with_capacity(rows.len());
            for message in rows {
                let decision = decision_status(r, &message)?;
                items.push(MessageView { message, decision });
            }
            Ok(Page { items, has_more })
        })
    }

    /// One historical message with every recipient's receipt. Read-only.
    pub fn history_message(
        &mut self,
        message_id: &str,
    ) -> AccResult<(MessageView, Vec<ReceiptRow>)> {
        ids::validate_record_id("message", message_id)?;
        let not_found = || {
            AccError::new(
                ErrorCode::MessageNotFound,
                format!("message `{message_id}` does not exist"),
            )
        };
        let Some(store) = self.store_for_read() else {
            return Err(not_found());
        };
        store.read(|r| {
            let message = r.message(message_id)?.ok_or_else(not_found)?;
            let receipts = r.receipts_of(message.seq)?;
            let decision = decision_status(r, &message)?;
            Ok((MessageView { message, decision }, receipts))
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

impl Core {
    /// Every message with all its receipts, oldest first (the unbounded forensic snapshot).
    pub fn all_messages(&mut self) -> AccResult<Vec<(MessageView, Vec<ReceiptRow>)>> {
        let Some(store) = self.store_for_read() else {
            return Ok(Vec::new());
        };
        store.read(|r| {
            let mut receipts: BTreeMap<i64, Vec<ReceiptRow>> = BTreeMap::new();
            for receipt in r.all_receipts()? {
                receipts
                    .entry(receipt.message_seq)
                    .or_default()
                    .push(receipt);
            }
            let mut out = Vec::new();
            for message in r.all_messages()? {
                let decision = decision_status(r, &message)?;
                let own = receipts.remove(&message.seq).unwrap_or_default();
                out.push((MessageView { message, decision }, own));
            }
            Ok(out)
        })
    }
}

fn invalid_cursor(cursor: &str) -> AccError {
    AccError::new(
        ErrorCode::InvalidCursor,
        format!(
            "cursor `{cursor}` names no message of this listing; use the nextCursor of the previous page, or omit it"
        ),
    )
}

/// Validate history page arguments; returns the limit.
pub fn validate_history(
    kind: Option<&str>,
    current: bool,
    cursor: Option<&str>,
    limit: Option<i64>,
) -> AccResult<i64> {
    let limit = page_limit(limit)?;
    if let Some(kind) = kind
        && !KINDS.contains(&kind)
    {
        return Err(AccError::usage(format!(
            "kind must be one of {}, got `{kind}`",
            KINDS.join(", ")
        )));
    }
    if current && kind != Some("decision") {
        return Err(AccError::usage(
            "current lists decision heads: it needs kind decision",
        ));
    }
    validate_cursor(cursor)?;
    Ok(limit)
}

/// Validate the shape of a message-id page cursor.
pub fn validate_cursor(cursor: Option<&str>) -> AccResult<()> {
    if let Some(cursor) = cursor {
        ids::validate_record_id("message", cursor).map_err(|_| invalid_cursor(cursor))?;
    }
    Ok(())
}

/// Validate a summary page limit (1..500, default 20).
pub fn page_limit(limit: Option<i64>) -> AccResult<i64> {
    let limit = limit.unwrap_or(DEFAULT_PAGE_ITEMS);
    if (1..=MAX_PAGE_ITEMS).contains(&limit) {
        Ok(limit)
    } else {
        Err(AccError::usage(format!(
            "limit must be from 1 to {MAX_PAGE_ITEMS}, got {limit}"
        )))
    }
}

fn owned_receipt(
    reader: &Reader<'_>,
    participant: &str,
    message_id: &str,
) -> AccResult<(MessageRow, ReceiptRow)> {
    let Some(message) = reader.message(message_id)? else {
        return Err(AccError::new(
            ErrorCode::MessageNotFound,
            format!("message `{message_id}` does not exist"),
        ));
    };
    let Some(receipt) = reader.receipt(message.seq, participant)? else {
        return Err(AccError::new(
            ErrorCode::NotARecipient,
            format!("`{participant}` is not a recipient of message `{message_id}`"),
        ));
    };
    Ok((message, receipt))
}

/// Largest decision group walked when deriving a status.
const MAX_GROUP: usize = 10_000;

/// Derive the lifecycle status of a decision from the link graph (never persisted).
pub fn decision_status(
    reader: &Reader<'_>,
    message: &MessageRow,
) -> AccResult<Option<DecisionStatus>> {
    if message.kind != MessageKind::Decision {
        return Ok(None);
    }
    let mut seen = BTreeSet::from([message.seq]);
    let mut queue = VecDeque::from([message.seq]);
    let mut replaced = BTreeSet::new();
    while let Some(seq) = queue.pop_front() {
        for link in reader.links_of(seq)? {
            replaced.insert(link.to_seq);
            for next in [link.from_seq, link.to_seq] {
                if seen.len() < MAX_GROUP && seen.insert(next) {
                    queue.push_back(next);
                }
            }
        }
    }
    let mut heads: BTreeMap<i64, (String, bool)> = BTreeMap::new();
    for seq in seen.iter().filter(|s| !replaced.contains(s)) {
        let row = if *seq == message.seq {
            Some(message.clone())
        } else {
            reader.message_by_seq(*seq)?
        };
        if let Some(row) = row {
            let withdrawal = row
                .decision_change
                .as_ref()
                .and_then(|c| c.get("action"))
                .and_then(Value::as_str)
                == Some("withdraw");
            heads.insert(*seq, (row.message_id, withdrawal));
        }
    }
    let group_root = *seen.iter().next().unwrap_or(&message.seq);
    let group_id = if group_root == message.seq {
        message.message_id.clone()
    } else {
        reader
            .message_by_seq(group_root)?
            .map(|m| m.message_id)
            .unwrap_or_else(|| message.message_id.clone())
    };
    let is_head = !replaced.contains(&message.seq);
    let own_withdrawal = heads.get(&message.seq).is_some_and(|(_, w)| *w);
    let all_withdrawn = !heads.is_empty() && heads.values().all(|(_, w)| *w);
    let state = match (is_head, own_withdrawal, all_withdrawn) {
        (true, true, _) => "withdrawn",
        (true, false, _) => "current",
        (false, _, true) => "withdrawn",
        (false, _, false) => "superseded",
    };
    let current_message_id = match heads.values().collect::<Vec<_>>().as_slice() {
        [(id, false)] => Some(id.clone()),
        _ => None,
    };
    Ok(Some(DecisionStatus {
        state,
        is_head,
        conflicted: heads.len() > 1,
        head_count: heads.len(),
        current_message_id,
        group_id,
    }))
}

/// Messaging attention: replies and acknowledgements owed, and recipients without a live
/// session for queued addressed messages. Newest first, bounded per rule.
pub fn message_attention(
    reader: &Reader<'_>,
    now: Millis,
    liveness: &dyn Liveness,
) -> AccResult<Vec<crate::attention::Attention>> {
    use crate::attention::{Attention, AttentionRule};
    let mut out = Vec::new();
    for (obligation, rule) in [
        ("reply", AttentionRule::ReplyRequired),
        ("acknowledge", AttentionRule::AcknowledgementRequired),
    ] {
        for (message, receipt) in
            reader.unresolved_with_obligation(obligation, ATTENTION_PER_RULE)?
        {
            out.push(Attention {
                rule,
                participant_id: receipt.participant_id,
                session_id: None,
                claim_id: None,
                resource: None,
                message_id: Some(message.message_id),
                other_session_id: Some(message.from_session_id),
                other_participant_id: Some(message.from_participant_id),
                since: Some(message.sent_at),
                expires_at: None,
            });
        }
    }
    let live = live_participants(reader, now, liveness)?;
    let mut budget = ATTENTION_PER_RULE;
    for participant in reader.participants()? {
        if live.contains(&participant.participant_id) || budget <= 0 {
            continue;
        }
        for (message, receipt) in
            reader.queued_addressed_for(&participant.participant_id, budget)?
        {
            budget -= 1;
            out.push(Attention {
                rule: AttentionRule::RecipientUnavailable,
                participant_id: message.from_participant_id,
                session_id: Some(message.from_session_id),
                claim_id: None,
                resource: None,
                message_id: Some(message.message_id),
                other_session_id: None,
                other_participant_id: Some(receipt.participant_id),
                since: Some(message.sent_at),
                expires_at: None,
            });
        }
    }
    Ok(out)
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
        let Some(receipt) = reader.receipt(answered.seq, sender)? else {
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
    let hash = content_hash(draft, obligation, &hash_to);
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
    sender: &str,
    draft: &Draft,
    hash: &str,
) -> AccResult<Option<Recorded>> {
    let Some(key) = &draft.client_message_id else {
        return Ok(None);
    };
    let Some(existing) = reader.message_by_client_id(sender, key)? else {
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
    let event_seq = w.next_event_seq()?;
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
        event_seq,
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
    debug_assert_eq!(recorded, event_seq);
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

#[cfg(test)]
mod tests;

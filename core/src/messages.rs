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

/// A wait for the inbox of `amount` times `unit` (called `unit_name`), from 1 to `max`, named
/// `name` in the error.
pub fn inbox_wait(
    name: &str,
    amount: i64,
    max: i64,
    (unit, unit_name): (std::time::Duration, &str),
) -> AccResult<std::time::Duration> {
    match u32::try_from(amount) {
        Ok(n) if (1..=max).contains(&amount) => Ok(unit * n),
        _ => Err(AccError::usage(format!(
            "{name} must be from 1 to {max} ({unit_name}), got {amount}"
        ))),
    }
}

/// `acc_inbox`'s `waitMs`: none, or a wait of 1 to [`INBOX_WAIT_MCP_MAX_MS`] milliseconds.
pub fn inbox_wait_ms(ms: Option<i64>) -> AccResult<Option<std::time::Duration>> {
    let unit = (std::time::Duration::from_millis(1), "ms");
    ms.map(|ms| inbox_wait("waitMs", ms, INBOX_WAIT_MCP_MAX_MS, unit))
        .transpose()
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

/// Every message with its decision status and its receipts, read in `r` (the forensic
/// snapshot).
pub(crate) fn all_messages_in(r: &Reader<'_>) -> AccResult<Vec<(MessageView, Vec<ReceiptRow>)>> {
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
}

fn owned_receipt(
    reader: &Reader<'_>,
    session: &acc_store::SessionRow,
    message_id: &str,
) -> AccResult<(MessageRow, ReceiptRow)> {
    let participant = &session.participant_id;
    let Some(message) = reader.message(message_id)? else {
        return Err(AccError::new(
            ErrorCode::MessageNotFound,
            format!("message `{message_id}` does not exist"),
        ));
    };
    // By what the caller knew before reading either (a room read it ahead).
    let Some(receipt) = reader.receipt_for_session(message_id, &session.session_id)? else {
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
        // The message's own links by its id (what a write on it read ahead), the rest by seq.
        let links = if seq == message.seq {
            reader.links_of_message(&message.message_id)?
        } else {
            reader.links_of(seq)?
        };
        for link in links {
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
    live: &BTreeSet<String>,
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
    let mut budget = ATTENTION_PER_RULE;
    for participant in reader.participants()? {
        if live.contains(&participant.participant_id) || budget <= 0 {
            continue;
        }
        // Read with the rule's whole limit and cut to what is left of it: the same statement
        // for every participant, which a room reads ahead (`status::read_second_ahead`).
        let waiting =
            reader.queued_addressed_for(&participant.participant_id, ATTENTION_PER_RULE)?;
        for (message, receipt) in waiting
            .into_iter()
            .take(usize::try_from(budget).unwrap_or(0))
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

fn content_hash(draft: &Draft, obligation: Obligation, to: &[String]) -> AccResult<String> {
    let logical = LogicalContent {
        artifacts: &draft.artifacts,
        body: &draft.body,
        decision_change: decision_change(draft),
        handoff: draft.handoff.as_ref(),
        in_reply_to: draft.reply_to.as_deref(),
        kind: draft.kind,
        obligation,
        subject: &draft.subject,
        to,
    };
    // Straight into the hasher: the same bytes as every earlier build hashed (see
    // `LogicalContent`), without building a `Value` and printing it first (a tenth of a send's
    // user time went there).
    let mut hasher = Sha256::new();
    serde_json::to_writer(&mut hasher, &logical)
        .map_err(|e| AccError::internal(format!("hashing a message: {e}")))?;
    Ok(ids::hex(&hasher.finalize()))
}

mod prepare;
mod read;
pub use read::{INBOX_WAIT_CLI_MAX_S, INBOX_WAIT_MCP_MAX_MS};
mod record;

#[cfg(test)]
mod tests;

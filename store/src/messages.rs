//! Typed statements for messages, receipts and decision links.

use crate::db::{Row, args};
use serde_json::Value;

mod ahead;

use super::{DecisionLink, MessageRow, Reader, ReceiptRow, Writer, json_text, parse_json};
use crate::{SessionRow, StoreResult};

const MESSAGE_COLUMNS: &str = "m.seq, m.message_id, m.thread_id, m.client_message_id, m.from_participant_id, m.from_session_id, m.to_participant_ids, m.kind, m.obligation, m.subject, m.body, m.in_reply_to, m.artifacts, m.handoff, m.decision_change, m.content_hash, m.sent_at, m.event_seq";
const RECEIPT_COLUMNS: &str = "r.message_seq, r.participant_id, r.state, r.updated_at, r.extensions, r.obligation, r.addressed";
const NOT_REPLACED: &str = "NOT EXISTS (SELECT 1 FROM decision_links l WHERE l.to_seq = m.seq)";

fn message_from(row: &Row<'_>) -> StoreResult<MessageRow> {
    let to: String = row.get(6)?;
    let artifacts: String = row.get(12)?;
    let handoff: Option<String> = row.get(13)?;
    let change: Option<String> = row.get(14)?;
    Ok(MessageRow {
        seq: row.get(0)?,
        message_id: row.get(1)?,
        thread_id: row.get(2)?,
        client_message_id: row.get(3)?,
        from_participant_id: row.get(4)?,
        from_session_id: row.get(5)?,
        to_participant_ids: parse_json(&to)?,
        kind: row.get(7)?,
        obligation: row.get(8)?,
        subject: row.get(9)?,
        body: row.get(10)?,
        in_reply_to: row.get(11)?,
        artifacts: parse_json(&artifacts)?,
        handoff: handoff.as_deref().map(parse_json).transpose()?,
        decision_change: change.as_deref().map(parse_json).transpose()?,
        content_hash: row.get(15)?,
        sent_at: row.get(16)?,
        event_seq: row.get(17)?,
    })
}

fn receipt_at(row: &Row<'_>, offset: usize) -> StoreResult<ReceiptRow> {
    let extensions: String = row.get(offset + 4)?;
    Ok(ReceiptRow {
        message_seq: row.get(offset)?,
        participant_id: row.get(offset + 1)?,
        state: row.get(offset + 2)?,
        updated_at: row.get(offset + 3)?,
        extensions: parse_json(&extensions)?,
        obligation: row.get(offset + 5)?,
        addressed: row.get(offset + 6)?,
    })
}

fn message_and_receipt(row: &Row<'_>) -> StoreResult<(MessageRow, ReceiptRow)> {
    Ok((message_from(row)?, receipt_at(row, 18)?))
}

/// The statements that serve pages and attention; each must be an index range scan (a unit
/// test checks their query plans).
pub(crate) mod sql {
    use super::{MESSAGE_COLUMNS, NOT_REPLACED, RECEIPT_COLUMNS};

    /// A participant's unresolved messages before a sequence, newest first.
    pub fn inbox() -> String {
        inbox_of("?1")
    }

    /// The same of the participant of the session `?1` (a room reads it ahead with the
    /// session, before the participant is known).
    pub fn inbox_of_session() -> String {
        inbox_of("(SELECT participant_id FROM sessions WHERE session_id = ?1)")
    }

    fn inbox_of(participant: &str) -> String {
        format!(
            "SELECT {MESSAGE_COLUMNS}, {RECEIPT_COLUMNS} FROM receipts r JOIN messages m ON m.seq = r.message_seq
             WHERE r.participant_id = {participant} AND r.state != 'acknowledged' AND r.message_seq < ?2
               AND (m.kind != 'decision' OR {NOT_REPLACED})
             ORDER BY r.message_seq DESC LIMIT ?3"
        )
    }

    /// Workspace messages before a sequence, newest first, optionally of one kind or heads only.
    pub fn history(by_kind: bool, heads_only: bool) -> String {
        let heads = if heads_only {
            format!("AND {NOT_REPLACED}")
        } else {
            String::new()
        };
        if by_kind {
            format!(
                "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.kind = ?1 AND m.seq < ?2 {heads} ORDER BY m.seq DESC LIMIT ?3"
            )
        } else {
            format!(
                "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.seq < ?1 {heads} ORDER BY m.seq DESC LIMIT ?2"
            )
        }
    }

    /// Unresolved receipts carrying an obligation, newest first.
    pub fn owed() -> String {
        format!(
            "SELECT {MESSAGE_COLUMNS}, {RECEIPT_COLUMNS} FROM receipts r JOIN messages m ON m.seq = r.message_seq
             WHERE r.state != 'acknowledged' AND r.obligation != 'none' AND r.obligation = ?1
               AND (m.kind != 'decision' OR {NOT_REPLACED})
             ORDER BY r.message_seq DESC LIMIT ?2"
        )
    }

    /// The messages of a participant's queued receipts (addressed or room records), newest
    /// first, replaced decisions left out: what next-turn context has not yet carried. It names the
    /// `receipts_unresolved` condition so that index serves it.
    ///
    /// From layout revision 1 the queued receipts have an index of their own
    /// (`receipts_queued`), a range read whatever waits offered; on revision 0 the unresolved
    /// ones are walked (`receipts_unresolved`, which the redundant `!= 'acknowledged'` selects).
    pub fn queued(layout: i64) -> String {
        let unresolved = if layout >= 1 {
            ""
        } else {
            "AND r.state != 'acknowledged'"
        };
        format!(
            "SELECT {MESSAGE_COLUMNS} FROM receipts r JOIN messages m ON m.seq = r.message_seq
             WHERE r.participant_id = ?1 {unresolved} AND r.state = 'queued'
               AND (m.kind != 'decision' OR {NOT_REPLACED})
             ORDER BY r.message_seq DESC LIMIT ?2"
        )
    }

    /// Among a participant's newest `?2` unresolved receipts, the offers that may be due their
    /// one repeat (the receipts alone): offered through a live transport (not next-turn), at or
    /// before `?3`, never repeated; replaced decisions left out. The window bounds the work
    /// whatever the history of unacknowledged offers.
    ///
    /// `transport` and `repeated` read the receipt's `offer.transport` and `offer.repeatedAt`
    /// (NULL when absent or null): [`OFFER_TRANSPORT`] and [`OFFER_REPEATED`] on SQLite.
    pub fn repeat_candidates(transport: &str, repeated: &str) -> String {
        format!(
            "SELECT {RECEIPT_COLUMNS} FROM
               (SELECT * FROM receipts WHERE participant_id = ?1 AND state != 'acknowledged'
                ORDER BY message_seq DESC LIMIT ?2) r
             JOIN messages m ON m.seq = r.message_seq
             WHERE r.state = 'offered' AND r.updated_at <= ?3
               AND coalesce({transport}, '') NOT IN ('', 'next-turn')
               AND {repeated} IS NULL
               AND (m.kind != 'decision' OR {NOT_REPLACED})
             ORDER BY r.message_seq DESC"
        )
    }

    /// SQLite's reading of a receipt's offer transport.
    pub const OFFER_TRANSPORT: &str = "json_extract(r.extensions, '$.offer.transport')";
    /// SQLite's reading of when a receipt's offer was repeated.
    pub const OFFER_REPEATED: &str = "json_extract(r.extensions, '$.offer.repeatedAt')";

    /// A participant's queued receipts of addressed messages, newest first.
    pub fn waiting() -> String {
        format!(
            "SELECT {MESSAGE_COLUMNS}, {RECEIPT_COLUMNS} FROM receipts r JOIN messages m ON m.seq = r.message_seq
             WHERE r.participant_id = ?1 AND r.state = 'queued' AND r.addressed = 1
             ORDER BY r.message_seq DESC LIMIT ?2"
        )
    }
}

/// Which messages a history page lists.
#[derive(Debug, Clone, Default)]
pub struct HistoryFilter {
    /// Only this kind.
    pub kind: Option<String>,
    /// Only decisions without a successor (heads).
    pub heads_only: bool,
}

impl Reader<'_> {
    /// A message by id.
    pub fn message(&self, message_id: &str) -> StoreResult<Option<MessageRow>> {
        self.conn
            .row(message_sql(), args![message_id], message_from)
    }

    /// The receipt of the participant of `session_id` for the message `message_id`: what
    /// [`Self::receipt`] gives for that message's seq and that participant, asked by what the
    /// caller knows before reading either (so a room reads it ahead).
    pub fn receipt_for_session(
        &self,
        message_id: &str,
        session_id: &str,
    ) -> StoreResult<Option<ReceiptRow>> {
        self.conn.row(
            receipt_for_session_sql(),
            args![message_id, session_id],
            |row| receipt_at(row, 0),
        )
    }

    /// The decision links touching the message `message_id` ([`Self::links_of`] by id).
    pub fn links_of_message(&self, message_id: &str) -> StoreResult<Vec<DecisionLink>> {
        self.conn.rows(LINKS_OF_MESSAGE, args![message_id], |r| {
            Ok(DecisionLink {
                from_seq: r.get(0)?,
                to_seq: r.get(1)?,
                action: r.get(2)?,
            })
        })
    }

    /// A message by store sequence.
    pub fn message_by_seq(&self, seq: i64) -> StoreResult<Option<MessageRow>> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.seq = ?1");
        self.conn.row(&sql, args![seq], message_from)
    }

    /// A sender's message with an idempotency key.
    pub fn message_by_client_id(
        &self,
        from_participant: &str,
        client_message_id: &str,
    ) -> StoreResult<Option<MessageRow>> {
        self.conn.row(
            &message_by_key_sql("?1"),
            args![from_participant, client_message_id],
            message_from,
        )
    }

    /// [`Self::message_by_client_id`] of `session`'s participant. On a room, after
    /// [`Self::prefetch_send`] with the same key, it costs no round trip of its own.
    pub fn message_by_client_id_of(
        &self,
        session: &SessionRow,
        client_message_id: &str,
    ) -> StoreResult<Option<MessageRow>> {
        if !self.conn.is_pg() {
            return self.message_by_client_id(&session.participant_id, client_message_id);
        }
        self.conn.row(
            &message_by_key_of_session_sql(),
            args![session.session_id, client_message_id],
            message_from,
        )
    }

    /// One recipient's receipt.
    pub fn receipt(
        &self,
        message_seq: i64,
        participant_id: &str,
    ) -> StoreResult<Option<ReceiptRow>> {
        self.conn
            .row(&receipt_sql(), args![message_seq, participant_id], |row| {
                receipt_at(row, 0)
            })
    }
}

/// What a send and an inbox read ahead on a room, the inbox pages, prune candidates and the
/// snapshot.
impl Reader<'_> {
    /// Every receipt of a message, by participant.
    pub fn receipts_of(&self, message_seq: i64) -> StoreResult<Vec<ReceiptRow>> {
        let sql = format!(
            "SELECT {RECEIPT_COLUMNS} FROM receipts r WHERE r.message_seq = ?1 ORDER BY r.participant_id"
        );
        self.conn
            .rows(&sql, args![message_seq], |row| receipt_at(row, 0))
    }

    /// Unresolved messages of a participant, newest first, before `before_seq`, excluding
    /// replaced decisions. Served by the partial index of unresolved receipts.
    pub fn inbox_page(
        &self,
        participant_id: &str,
        before_seq: Option<i64>,
        limit: i64,
    ) -> StoreResult<Vec<(MessageRow, ReceiptRow)>> {
        self.conn.rows(
            &sql::inbox(),
            args![participant_id, before_seq.unwrap_or(i64::MAX), limit],
            message_and_receipt,
        )
    }

    /// [`Self::inbox_page`] of `session`'s participant. On a room, after
    /// [`Self::prefetch_inbox`] with the same arguments, it costs no round trip of its own.
    pub fn inbox_page_of(
        &self,
        session: &SessionRow,
        before_seq: Option<i64>,
        limit: i64,
    ) -> StoreResult<Vec<(MessageRow, ReceiptRow)>> {
        if !self.conn.is_pg() {
            return self.inbox_page(&session.participant_id, before_seq, limit);
        }
        self.conn.rows(
            &sql::inbox_of_session(),
            args![session.session_id, before_seq.unwrap_or(i64::MAX), limit],
            message_and_receipt,
        )
    }

    /// Read ahead, on a room, the session `session_id` ([`Self::session`]) and its
    /// participant's inbox page ([`Self::inbox_page_of`] with these arguments) in one round
    /// trip.
    pub fn prefetch_inbox(
        &self,
        session_id: &str,
        before_seq: Option<i64>,
        limit: i64,
    ) -> StoreResult<()> {
        self.conn.prefetch(&[
            (crate::ops::session_sql(self.layout), args![session_id]),
            (
                &sql::inbox_of_session(),
                args![session_id, before_seq.unwrap_or(i64::MAX), limit],
            ),
        ])
    }

    /// Messages of the workspace, newest first, before `before_seq`.
    pub fn history_page(
        &self,
        filter: &HistoryFilter,
        before_seq: Option<i64>,
        limit: i64,
    ) -> StoreResult<Vec<MessageRow>> {
        let before = before_seq.unwrap_or(i64::MAX);
        match &filter.kind {
            Some(kind) => self.conn.rows(
                &sql::history(true, filter.heads_only),
                args![kind, before, limit],
                message_from,
            ),
            None => self.conn.rows(
                &sql::history(false, filter.heads_only),
                args![before, limit],
                message_from,
            ),
        }
    }

    /// Unresolved receipts whose message carries `obligation`, newest first (for attention).
    pub fn unresolved_with_obligation(
        &self,
        obligation: &str,
        limit: i64,
    ) -> StoreResult<Vec<(MessageRow, ReceiptRow)>> {
        self.conn
            .rows(&sql::owed(), args![obligation, limit], message_and_receipt)
    }

    /// The messages a participant's receipts hold queued (addressed or to the room), newest
    /// first, at most `limit`: unlike an inbox page, not pushed out by the offered ones above
    /// them.
    pub fn queued_for(&self, participant_id: &str, limit: i64) -> StoreResult<Vec<MessageRow>> {
        self.conn.rows(
            &sql::queued(self.layout),
            args![participant_id, limit],
            message_from,
        )
    }

    /// The offers among a participant's newest `window` unresolved receipts that may be due
    /// their one repeat at `due_by` (see `sql::repeat_candidates`; the caller applies the whole
    /// rule), newest first, without their messages.
    pub fn repeat_candidates(
        &self,
        participant_id: &str,
        window: i64,
        due_by: crate::Millis,
    ) -> StoreResult<Vec<ReceiptRow>> {
        self.conn.rows(
            &self.repeat_candidates_sql(),
            args![participant_id, window, due_by],
            |row| receipt_at(row, 0),
        )
    }

    fn repeat_candidates_sql(&self) -> String {
        if self.conn.is_pg() {
            sql::repeat_candidates(crate::pg::OFFER_TRANSPORT, crate::pg::OFFER_REPEATED)
        } else {
            sql::repeat_candidates(sql::OFFER_TRANSPORT, sql::OFFER_REPEATED)
        }
    }

    /// Read ahead what next-turn reads of the session `session_id`, when its participant is
    /// `participant_id` (as a hook that has just opened it knows): the session, its queued
    /// messages and its repeat candidates ([`Self::session`], [`Self::queued_for`],
    /// [`Self::repeat_candidates`] with these arguments), in one round trip on a room. A
    /// session of another participant only leaves the last two unasked.
    pub fn prefetch_pending(
        &self,
        session_id: &str,
        participant_id: &str,
        window: i64,
        due_by: crate::Millis,
    ) -> StoreResult<()> {
        self.conn.prefetch(&[
            (crate::ops::session_sql(self.layout), args![session_id]),
            (&sql::queued(self.layout), args![participant_id, window]),
            (
                &self.repeat_candidates_sql(),
                args![participant_id, window, due_by],
            ),
        ])
    }

    /// A participant's queued receipts of addressed messages, newest first
    /// (for `recipient_unavailable`).
    pub fn queued_addressed_for(
        &self,
        participant_id: &str,
        limit: i64,
    ) -> StoreResult<Vec<(MessageRow, ReceiptRow)>> {
        self.conn.rows(
            &sql::waiting(),
            args![participant_id, limit],
            message_and_receipt,
        )
    }

    /// Links touching a decision, in either direction.
    pub fn links_of(&self, seq: i64) -> StoreResult<Vec<DecisionLink>> {
        self.conn.rows("SELECT from_seq, to_seq, action FROM decision_links WHERE from_seq = ?1 OR to_seq = ?1 ORDER BY from_seq, to_seq", args![seq], |r| {
            Ok(DecisionLink {
                from_seq: r.get(0)?,
                to_seq: r.get(1)?,
                action: r.get(2)?,
            })
        })
    }

    /// Messages recorded before the event `before_event_seq` whose receipts are all
    /// acknowledged and which no decision link touches (prune candidates), oldest first.
    pub fn prunable_messages(
        &self,
        before_event_seq: i64,
        limit: i64,
    ) -> StoreResult<Vec<MessageRow>> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.event_seq < ?1
               AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.message_seq = m.seq AND r.state != 'acknowledged')
               AND NOT EXISTS (SELECT 1 FROM decision_links l WHERE l.from_seq = m.seq OR l.to_seq = m.seq)
             ORDER BY m.seq LIMIT ?2"
        );
        self.conn
            .rows(&sql, args![before_event_seq, limit], message_from)
    }

    /// Every message, oldest first (the forensic snapshot).
    pub fn all_messages(&self) -> StoreResult<Vec<MessageRow>> {
        self.conn.rows(every_message_sql().0, args![], message_from)
    }

    /// Every receipt (the forensic snapshot).
    pub fn all_receipts(&self) -> StoreResult<Vec<ReceiptRow>> {
        self.conn
            .rows(every_message_sql().1, args![], |row| receipt_at(row, 0))
    }
}

impl Writer<'_> {
    /// Insert a message; returns its store sequence.
    pub fn insert_message(&mut self, m: &MessageRow) -> StoreResult<i64> {
        self.conn.insert_sequenced("messages", "INSERT INTO messages(message_id, thread_id, client_message_id, from_participant_id, from_session_id,
                 to_participant_ids, kind, obligation, subject, body, in_reply_to, artifacts, handoff, decision_change,
                 content_hash, sent_at, event_seq) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)", args![
                m.message_id,
                m.thread_id,
                m.client_message_id,
                m.from_participant_id,
                m.from_session_id,
                json_text(&Value::from(m.to_participant_ids.clone())),
                m.kind,
                m.obligation,
                m.subject,
                m.body,
                m.in_reply_to,
                json_text(&m.artifacts),
                m.handoff.as_ref().map(json_text),
                m.decision_change.as_ref().map(json_text),
                m.content_hash,
                m.sent_at,
                m.event_seq
            ])
    }

    /// Insert a receipt.
    pub fn insert_receipt(&mut self, r: &ReceiptRow) -> StoreResult<()> {
        self.conn.write("INSERT INTO receipts(message_seq, participant_id, state, updated_at, extensions, obligation, addressed)
                 VALUES (?1,?2,?3,?4,?5,?6,?7)", args![
                r.message_seq,
                r.participant_id,
                r.state,
                r.updated_at,
                json_text(&r.extensions),
                r.obligation,
                r.addressed
            ])?;
        Ok(())
    }

    /// Replace a receipt's state, time and extensions.
    pub fn update_receipt(&mut self, r: &ReceiptRow) -> StoreResult<()> {
        // On a room, sent ahead of its answer: nothing waits on it.
        self.conn.write("UPDATE receipts SET state = ?3, updated_at = ?4, extensions = ?5 WHERE message_seq = ?1 AND participant_id = ?2", args![r.message_seq, r.participant_id, r.state, r.updated_at, json_text(&r.extensions)])
    }

    /// Insert a decision link.
    pub fn insert_link(&mut self, link: &DecisionLink) -> StoreResult<()> {
        self.conn.write(
            "INSERT INTO decision_links(from_seq, to_seq, action) VALUES (?1,?2,?3)",
            args![link.from_seq, link.to_seq, link.action],
        )?;
        Ok(())
    }

    /// Delete a message with its receipts.
    pub fn delete_message(&mut self, seq: i64) -> StoreResult<()> {
        self.conn
            .execute("DELETE FROM receipts WHERE message_seq = ?1", args![seq])?;
        self.conn
            .execute("DELETE FROM messages WHERE seq = ?1", args![seq])?;
        Ok(())
    }
}

/// A sender's message by its idempotency key `?2`, the sender named by `participant`.
fn message_by_key_sql(participant: &str) -> String {
    format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.from_participant_id = {participant} AND m.client_message_id = ?2"
    )
}

/// The same of the participant of the session `?1` (a room reads it ahead with the session,
/// before the participant is known).
pub(crate) fn message_by_key_of_session_sql() -> String {
    message_by_key_sql("(SELECT participant_id FROM sessions WHERE session_id = ?1)")
}

/// One receipt, by message and participant.
/// The receipt of the session `?2`'s participant for the message `?1` (by id).
fn receipt_for_session_sql() -> &'static str {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "SELECT {RECEIPT_COLUMNS} FROM messages m JOIN sessions s ON s.session_id = ?2 JOIN receipts r ON r.message_seq = m.seq AND r.participant_id = s.participant_id WHERE m.message_id = ?1"
        )
    });
    &SQL
}

/// A message by id.
fn message_sql() -> &'static str {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.message_id = ?1")
    });
    &SQL
}

/// Every message, and every receipt (the forensic snapshot).
pub(crate) fn every_message_sql() -> (&'static str, &'static str) {
    static SQL: std::sync::LazyLock<(String, String)> = std::sync::LazyLock::new(|| {
        (
            format!("SELECT {MESSAGE_COLUMNS} FROM messages m ORDER BY m.seq"),
            format!(
                "SELECT {RECEIPT_COLUMNS} FROM receipts r ORDER BY r.message_seq, r.participant_id"
            ),
        )
    });
    (&SQL.0, &SQL.1)
}

/// The decision links of the message `?1` (by id), in either direction.
pub(crate) const LINKS_OF_MESSAGE: &str = "SELECT l.from_seq, l.to_seq, l.action FROM messages m JOIN decision_links l ON l.from_seq = m.seq OR l.to_seq = m.seq WHERE m.message_id = ?1 ORDER BY l.from_seq, l.to_seq";

fn receipt_sql() -> String {
    format!(
        "SELECT {RECEIPT_COLUMNS} FROM receipts r WHERE r.message_seq = ?1 AND r.participant_id = ?2"
    )
}

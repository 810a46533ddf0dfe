//! Typed statements over a transaction: participants, sessions, intents, short ids and events
//! (claims, messages and bindings have modules of their own). All of ACC's SQL lives in this
//! crate.

use crate::db::{Row, args};
use serde_json::Value;

use super::{
    EventRow, IntentRow, ParticipantRow, Reader, SessionRow, Writer, json_text, parse_json,
};
use crate::Enforcement;
use crate::Millis;
use crate::StoreResult;

/// The session columns every layout keeps.
macro_rules! session_columns {
    () => {
        "session_id, participant_id, session_key, generation, generation_hash, harness, client_version, checkout, branch, pid, enforcement, lifecycle, opened_at, last_seen_at, closed_at"
    };
}

/// `before`, the session columns of a store at `layout`, then `after`, as text built at compile
/// time (statements a send runs are not formatted again on every call). `pid_scope` is read as
/// NULL below [`crate::layout::PID_SCOPE_LAYOUT`], which added it.
macro_rules! by_layout {
    ($layout:expr, $before:literal, $after:literal) => {
        if $layout >= crate::layout::PID_SCOPE_LAYOUT {
            concat!($before, session_columns!(), ", pid_scope", $after)
        } else {
            concat!($before, session_columns!(), ", NULL", $after)
        }
    };
}

/// The session columns read from a store at `layout`.
fn session_columns(layout: i64) -> &'static str {
    by_layout!(layout, "", "")
}

fn session_from(row: &Row<'_>) -> StoreResult<SessionRow> {
    Ok(SessionRow {
        session_id: row.get(0)?,
        participant_id: row.get(1)?,
        session_key: row.get(2)?,
        generation: row.get(3)?,
        generation_hash: row.get(4)?,
        harness: row.get(5)?,
        client_version: row.get(6)?,
        checkout: row.get(7)?,
        branch: row.get(8)?,
        pid: row.get(9)?,
        enforcement: row.get(10)?,
        lifecycle: row.get(11)?,
        opened_at: row.get(12)?,
        last_seen_at: row.get(13)?,
        closed_at: row.get(14)?,
        pid_scope: row.get(15)?,
    })
}

fn intent_from(row: &Row<'_>) -> StoreResult<IntentRow> {
    let hints: String = row.get(4)?;
    Ok(IntentRow {
        session_id: row.get(0)?,
        summary: row.get(1)?,
        mode: row.get(2)?,
        state: row.get(3)?,
        resource_hints: parse_json(&hints)?,
        updated_at: row.get(5)?,
    })
}

fn event_from(row: &Row<'_>) -> StoreResult<EventRow> {
    let data: String = row.get(5)?;
    Ok(EventRow {
        seq: row.get(0)?,
        event_type: row.get(1)?,
        at: row.get(2)?,
        session_id: row.get(3)?,
        participant_id: row.get(4)?,
        data: parse_json(&data)?,
    })
}

impl Reader<'_> {
    /// Whether a participant is known.
    pub fn participant_exists(&self, participant_id: &str) -> StoreResult<bool> {
        Ok(self
            .conn
            .row(PARTICIPANT_EXISTS, args![participant_id], |_| Ok(()))?
            .is_some())
    }

    /// Every participant, by id.
    pub fn participants(&self) -> StoreResult<Vec<ParticipantRow>> {
        self.conn.rows(PARTICIPANTS, args![], |r| {
            Ok(ParticipantRow {
                participant_id: r.get(0)?,
                created_at: r.get(1)?,
            })
        })
    }

    /// Read ahead, on a room, the session `session_id` of a write's caller, with the sequence
    /// counters its inserts take their numbers from, in one round trip (none when an earlier
    /// read ahead of the transaction brought them).
    pub fn prefetch_caller(&self, session_id: &str) -> StoreResult<()> {
        let id: [&dyn crate::db::Arg; 1] = [&session_id];
        self.conn
            .prefetch_for_write(&[(session_sql(self.layout), &id)])
    }

    /// Read ahead, on a room, what clearing an intent asks first, with the sequence counters,
    /// in one round trip: the caller's session and whether it has an intent.
    pub fn prefetch_intent(&self, session_id: &str) -> StoreResult<()> {
        let id: [&dyn crate::db::Arg; 1] = [&session_id];
        self.conn.prefetch_for_write(&[
            (session_sql(self.layout), &id),
            (crate::pg::INTENT_EXISTS, &id),
        ])
    }

    /// One session.
    pub fn session(&self, session_id: &str) -> StoreResult<Option<SessionRow>> {
        self.conn
            .row(session_sql(self.layout), args![session_id], session_from)
    }

    /// The session with a resumption key.
    pub fn session_by_key(&self, key: &str) -> StoreResult<Option<SessionRow>> {
        self.conn
            .row(by_key_sql(self.layout), args![key], session_from)
    }

    /// Read ahead, on a room, the session with a resumption key with the sequence counters, in
    /// one round trip (a write that starts from it); with `participant`, whether it exists too.
    pub fn prefetch_by_key(&self, key: &str, participant: Option<&str>) -> StoreResult<()> {
        let key: [&dyn crate::db::Arg; 1] = [&key];
        let participant: Option<[&dyn crate::db::Arg; 1]> = participant.as_ref().map(|p| [p as _]);
        let mut statements: Vec<(&str, &[&dyn crate::db::Arg])> =
            vec![(by_key_sql(self.layout), &key)];
        if let Some(participant) = &participant {
            statements.push((PARTICIPANT_EXISTS, participant.as_slice()));
        }
        self.conn.prefetch_for_write(&statements)
    }

    /// Sessions; open ones only unless `include_closed`.
    pub fn sessions(&self, include_closed: bool) -> StoreResult<Vec<SessionRow>> {
        self.conn.rows(
            &sessions_sql(self.layout, include_closed),
            args![],
            session_from,
        )
    }

    /// The open sessions of one participant, oldest first.
    pub fn open_sessions_of(&self, participant_id: &str) -> StoreResult<Vec<SessionRow>> {
        self.conn.rows(
            open_sessions_sql(self.layout),
            args![participant_id],
            session_from,
        )
    }

    /// Every intent.
    pub fn intents(&self) -> StoreResult<Vec<IntentRow>> {
        self.conn.rows(INTENTS, args![], intent_from)
    }

    /// The ids of `kind` (`message`, `claim`, `session`, `participant`) that begin with
    /// `prefix`, in order, at most `limit`: a range of the id's unique index (record ids are
    /// `<kind>_` and base64url, participant ids portable ids: every character sorts below `~`).
    pub fn ids_with_prefix(
        &self,
        kind: &str,
        prefix: &str,
        limit: i64,
    ) -> StoreResult<Vec<String>> {
        let Some((table, column)) = id_index(kind) else {
            return Ok(Vec::new());
        };
        let sql = format!(
            "SELECT {column} FROM {table} WHERE {column} >= ?1 AND {column} < ?2 ORDER BY {column} LIMIT ?3"
        );
        self.conn
            .rows(&sql, args![prefix, format!("{prefix}~"), limit], |r| {
                r.get(0)
            })
    }

    /// Every id of `kind`, in order: one scan of its unique index, for shortening many ids at
    /// once.
    pub fn all_ids(&self, kind: &str) -> StoreResult<Vec<String>> {
        let Some((table, column)) = id_index(kind) else {
            return Ok(Vec::new());
        };
        let sql = format!("SELECT {column} FROM {table} ORDER BY {column}");
        self.conn.rows(&sql, args![], |r| r.get(0))
    }

    /// The ids of `kind` just before and just after `id` in the id order (either may be absent):
    /// how much of `id` it takes to tell it from every other id of its kind. Two probes of the
    /// id's unique index.
    pub fn id_neighbours(
        &self,
        kind: &str,
        id: &str,
    ) -> StoreResult<(Option<String>, Option<String>)> {
        let Some((table, column)) = id_index(kind) else {
            return Ok((None, None));
        };
        let probe = |op: &str, order: &str| -> StoreResult<Option<String>> {
            let sql = format!(
                "SELECT {column} FROM {table} WHERE {column} {op} ?1 ORDER BY {column} {order} LIMIT 1"
            );
            self.conn.row(&sql, args![id], |row| row.get(0))
        };
        Ok((probe("<", "DESC")?, probe(">", "ASC")?))
    }

    /// Events after `after_seq`, oldest first, at most `limit`.
    pub fn events_after(&self, after_seq: i64, limit: i64) -> StoreResult<Vec<EventRow>> {
        self.conn
            .rows(EVENTS_AFTER, args![after_seq, limit], event_from)
    }

    /// The newest event sequence number (0 when there is none).
    pub fn head_seq(&self) -> StoreResult<i64> {
        self.conn.value(HEAD_SEQ, args![])
    }
}

impl Writer<'_> {
    /// Record a participant if new; returns whether it was created.
    pub fn ensure_participant(&mut self, participant_id: &str, now: Millis) -> StoreResult<bool> {
        if self.conn.is_pg() {
            // Under the room's lock whether it exists is known before (read ahead with the
            // write's first round trip): the insert goes ahead of its answer.
            let exists = self
                .conn
                .row(PARTICIPANT_EXISTS, args![participant_id], |_| Ok(()))?
                .is_some();
            if !exists {
                self.conn.write(
                    "INSERT INTO participants(participant_id, created_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                    args![participant_id, now],
                )?;
            }
            return Ok(!exists);
        }
        let changed = self.conn.execute("INSERT INTO participants(participant_id, created_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING", args![participant_id, now])?;
        Ok(changed == 1)
    }

    /// Insert a new session (its `pid_scope` where the store keeps it).
    pub fn insert_session(&mut self, s: &SessionRow) -> StoreResult<()> {
        let scoped = self.layout >= crate::layout::PID_SCOPE_LAYOUT;
        let sql = if scoped {
            concat!(
                "INSERT INTO sessions(",
                session_columns!(),
                ", pid_scope) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)"
            )
        } else {
            concat!(
                "INSERT INTO sessions(",
                session_columns!(),
                ") VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)"
            )
        };
        let columns = args![
            s.session_id,
            s.participant_id,
            s.session_key,
            s.generation,
            s.generation_hash,
            s.harness,
            s.client_version,
            s.checkout,
            s.branch,
            s.pid,
            s.enforcement,
            s.lifecycle,
            s.opened_at,
            s.last_seen_at,
            s.closed_at,
            s.pid_scope
        ];
        let used = if scoped { &columns[..] } else { &columns[..15] };
        self.conn.execute(sql, used)?;
        Ok(())
    }

    /// Start a new generation of a session and reopen it.
    pub fn reopen_session(
        &mut self,
        session_id: &str,
        generation: i64,
        generation_hash: &str,
        now: Millis,
    ) -> StoreResult<()> {
        // Sent ahead of their answers on a room: nothing waits on them.
        self.conn.write("UPDATE sessions SET generation = ?2, generation_hash = ?3, closed_at = NULL, last_seen_at = ?4 WHERE session_id = ?1", args![session_id, generation, generation_hash, now])?;
        // A new generation retires every binding of the old one.
        self.drop_every_binding(session_id)
    }

    /// Record the process a session now runs in (its pid, and where the store keeps it, the
    /// pid's scope), its checkout and branch, seen at `now` at the latest.
    pub fn set_session_process(&mut self, s: &SessionRow, now: Millis) -> StoreResult<()> {
        let scoped = self.layout >= crate::layout::PID_SCOPE_LAYOUT;
        let sql = format!(
            "UPDATE sessions SET pid = ?2, checkout = ?3, branch = ?4, last_seen_at = CASE WHEN last_seen_at > ?5 THEN last_seen_at ELSE ?5 END{} WHERE session_id = ?1",
            if scoped { ", pid_scope = ?6" } else { "" }
        );
        let columns = args![s.session_id, s.pid, s.checkout, s.branch, now, s.pid_scope];
        let used = if scoped { &columns[..] } else { &columns[..5] };
        self.conn.execute(&sql, used)?;
        Ok(())
    }

    /// Record a heartbeat.
    /// Refresh the presence of `session_id` at its `generation`, while it is open; whether it
    /// was (one row changed).
    pub fn touch_open_generation(
        &mut self,
        session_id: &str,
        generation: i64,
        now: Millis,
    ) -> StoreResult<bool> {
        let rows: Vec<i64> = self.conn.rows(
            TOUCH_OPEN_GENERATION,
            args![session_id, now, generation],
            |r| r.get(0),
        )?;
        Ok(rows.len() == 1)
    }

    pub fn touch_session(&mut self, session_id: &str, now: Millis) -> StoreResult<()> {
        self.conn.write("UPDATE sessions SET last_seen_at = CASE WHEN last_seen_at > ?2 THEN last_seen_at ELSE ?2 END WHERE session_id = ?1", args![session_id, now])?;
        Ok(())
    }

    /// Record what a session's client reported at its start: its version and what it enforces.
    pub fn set_session_client(
        &mut self,
        session_id: &str,
        client_version: Option<&str>,
        enforcement: Enforcement,
    ) -> StoreResult<()> {
        self.conn.execute(
            "UPDATE sessions SET client_version = ?2, enforcement = ?3 WHERE session_id = ?1",
            args![session_id, client_version, enforcement],
        )?;
        Ok(())
    }

    /// Close a session's presence.
    pub fn close_session(&mut self, session_id: &str, now: Millis) -> StoreResult<()> {
        // Sent ahead of their answers on a room: nothing waits on them.
        self.conn.write("UPDATE sessions SET closed_at = ?2, last_seen_at = CASE WHEN last_seen_at > ?2 THEN last_seen_at ELSE ?2 END WHERE session_id = ?1", args![session_id, now])?;
        self.drop_every_binding(session_id)
    }

    /// Insert or replace a session's intent.
    pub fn upsert_intent(&mut self, intent: &IntentRow) -> StoreResult<()> {
        // On a room, sent ahead of its answer: nothing waits on it.
        self.conn.write("INSERT INTO intents(session_id, summary, mode, state, resource_hints, updated_at) VALUES (?1,?2,?3,?4,?5,?6)
             ON CONFLICT(session_id) DO UPDATE SET summary=excluded.summary, mode=excluded.mode, state=excluded.state,
             resource_hints=excluded.resource_hints, updated_at=excluded.updated_at", args![
                intent.session_id,
                intent.summary,
                intent.mode,
                intent.state,
                json_text(&Value::from(intent.resource_hints.clone())),
                intent.updated_at
            ])
    }

    /// Remove a session's intent; returns whether there was one.
    pub fn delete_intent(&mut self, session_id: &str) -> StoreResult<bool> {
        if self.conn.is_pg() {
            // Under the room's lock, whether there is one is known before: the delete goes
            // ahead of its answer (what `Reader::prefetch_intent` read costs no round trip).
            let had: bool = self
                .conn
                .value(crate::pg::INTENT_EXISTS, args![session_id])?;
            if had {
                self.conn.write(
                    "DELETE FROM intents WHERE session_id = ?1",
                    args![session_id],
                )?;
            }
            return Ok(had);
        }
        Ok(self.conn.execute(
            "DELETE FROM intents WHERE session_id = ?1",
            args![session_id],
        )? == 1)
    }

    /// Append an event in this transaction; returns its sequence number.
    pub fn append_event(
        &mut self,
        event_type: &str,
        at: Millis,
        session_id: Option<&str>,
        participant_id: Option<&str>,
        data: &Value,
    ) -> StoreResult<i64> {
        self.conn.insert_sequenced(
            "events",
            "INSERT INTO events(type, at, session_id, participant_id, data) VALUES (?1,?2,?3,?4,?5)",
            args![event_type, at, session_id, participant_id, json_text(data)],
        )
    }
}

/// The table and id column of a kind a person may name by id or its prefix (`message`,
/// `claim`, `session`, `participant`); `None` for any other.
fn id_index(kind: &str) -> Option<(&'static str, &'static str)> {
    match kind {
        "message" => Some(("messages", "message_id")),
        "claim" => Some(("claims", "claim_id")),
        "session" => Some(("sessions", "session_id")),
        "participant" => Some(("participants", "participant_id")),
        _ => None,
    }
}

/// One session, by its id, as a store at `layout` keeps it.
pub(crate) fn session_sql(layout: i64) -> &'static str {
    by_layout!(layout, "SELECT ", " FROM sessions WHERE session_id = ?1")
}

/// A presence refresh of an open session's current generation (`?1` session, `?2` now, `?3`
/// generation), returning 1 when it found it. A row's time moving forward only: a room sends it
/// on its own, without the writers' lock ([`crate::Store::refresh_presence`]).
pub(crate) const TOUCH_OPEN_GENERATION: &str = "UPDATE sessions SET last_seen_at = CASE WHEN last_seen_at > ?2 THEN last_seen_at ELSE ?2 END WHERE session_id = ?1 AND generation = ?3 AND closed_at IS NULL RETURNING 1";

/// The session with a resumption key, as a store at `layout` keeps it.
fn by_key_sql(layout: i64) -> &'static str {
    by_layout!(layout, "SELECT ", " FROM sessions WHERE session_key = ?1")
}

/// Every participant.
pub(crate) const PARTICIPANTS: &str =
    "SELECT participant_id, created_at FROM participants ORDER BY participant_id";
/// Every intent.
pub(crate) const INTENTS: &str = "SELECT session_id, summary, mode, state, resource_hints, updated_at FROM intents ORDER BY session_id";
/// Events after `?1`, at most `?2`.
pub(crate) const EVENTS_AFTER: &str = "SELECT seq, type, at, session_id, participant_id, data FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2";
/// The newest event's number.
pub(crate) const HEAD_SEQ: &str = "SELECT coalesce(max(seq), 0) FROM events";

/// Sessions, open ones only unless `include_closed`, as a store at `layout` keeps them.
pub(crate) fn sessions_sql(layout: i64, include_closed: bool) -> String {
    let filter = if include_closed {
        ""
    } else {
        "WHERE closed_at IS NULL"
    };
    format!(
        "SELECT {} FROM sessions {filter} ORDER BY participant_id, opened_at, session_id",
        session_columns(layout)
    )
}

/// Whether a participant exists.
pub(crate) const PARTICIPANT_EXISTS: &str = "SELECT 1 FROM participants WHERE participant_id = ?1";

/// A participant's open sessions, oldest first, as a store at `layout` keeps them.
pub(crate) fn open_sessions_sql(layout: i64) -> &'static str {
    by_layout!(
        layout,
        "SELECT ",
        " FROM sessions WHERE participant_id = ?1 AND closed_at IS NULL ORDER BY opened_at, session_id"
    )
}

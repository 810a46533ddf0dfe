//! The PostgreSQL room: what only PostgreSQL says (its statement texts where SQLite's words do
//! not carry over, its schema) and how its failures read.
//!
//! A room's statements are the SQLite ones ([`crate::db`] rewrites their parameters); the few
//! here are the ones whose meaning needs PostgreSQL's own words. The SQLite plan audit
//! (`tests/tests/scenarios/plans.rs`) does not read this file.

use crate::{StoreError, StoreErrorKind};

/// The server's clock, in milliseconds since the Unix epoch.
pub(crate) const SERVER_CLOCK: &str =
    "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// How many records a room holds (a push goes only into a room with none).
pub(crate) const RECORDS_HELD: &str = "SELECT (SELECT count(*) FROM participants) + (SELECT count(*) FROM sessions) + (SELECT count(*) FROM messages) + (SELECT count(*) FROM events)";

/// Set a table's counter (a push carries SQLite's `sqlite_sequence` over).
pub(crate) const SET_COUNTER: &str = "UPDATE acc_counters SET value = ?2 WHERE name = ?1";

/// A room's claim holders ([`Reader::claim_holders`]), in one statement.
pub(crate) const CLAIM_HOLDERS: &str = "SELECT DISTINCT session_id FROM claims ORDER BY session_id";

/// A room's claim counts by session, and how many of each expired at `?1`
/// ([`Reader::claim_counts`]), in one statement.
pub(crate) const CLAIM_COUNTS: &str = "SELECT session_id, count(*), count(*) FILTER (WHERE expires_at <= ?1) FROM claims GROUP BY session_id ORDER BY session_id";

/// Whether the session `?1` has an intent (a room's intent cleared knows it before its delete,
/// which then goes ahead of its answer).
pub(crate) const INTENT_EXISTS: &str =
    "SELECT EXISTS (SELECT 1 FROM intents WHERE session_id = ?1)";

/// The bindings of every session's current generation, in one statement (a room's status and
/// sync read them so: one round trip rather than one a session). Its columns are
/// `bindings::COLUMNS`' (a test there holds them the same).
pub(crate) const ALL_BINDINGS: &str = "SELECT b.session_id, b.generation, b.adapter_id, b.client_version, b.modes, b.live_policy, b.endpoint_ref, b.endpoint, b.lease_until, b.created_at FROM delivery_bindings b JOIN sessions s ON s.session_id = b.session_id AND s.generation = b.generation ORDER BY b.session_id, b.adapter_id";

/// The workspace's meta records (`acc_meta`, found through the session's `search_path`), each
/// beside the server's clock (milliseconds since the Unix epoch): what a room's connection
/// reads first, in one round trip.
pub(crate) const META: &str =
    "SELECT key, value, (extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM acc_meta";

/// The sequence counters (`acc_counters`): table and last number given.
pub(crate) const COUNTERS: &str = "SELECT name, value FROM acc_counters";

/// Whether the table `?1` (schema-qualified) exists.
pub(crate) const TABLE_EXISTS: &str = "SELECT to_regclass(?1) IS NOT NULL";

/// The PostgreSQL text of an insert whose `seq` the table's counter assigns: `pg_insert` is
/// The room's recorded layout revision, read under its writers' lock.
pub(crate) const LAYOUT_REVISION_NOW: &str =
    "SELECT COALESCE((SELECT value FROM acc_meta WHERE key = 'layout_revision'), '0')";

/// One `acc_meta` row set.
pub(crate) const SET_META: &str = "INSERT INTO acc_meta(key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// An upgrade's steps wait at most this long for a table another connection uses (PostgreSQL's
/// `ALTER TABLE` takes its strongest lock, and queues every later reader behind it): they give
/// up and the room stays on its layout rather than stall the room's other agents.
pub(crate) const UPGRADE_LOCK_TIMEOUT: &str = "SET LOCAL lock_timeout = '1s'";

/// `INSERT INTO table(columns) VALUES (values)` in PostgreSQL's spelling.
pub(crate) fn sequenced(table: &str, pg_insert: &str) -> String {
    let head = format!("INSERT INTO {table}(");
    let values = pg_insert
        .find(" VALUES (")
        .map_or(pg_insert.len(), |at| at + " VALUES (".len());
    let columns = pg_insert
        .get(head.len()..values)
        .unwrap_or_default()
        .trim_end_matches(" VALUES (");
    format!(
        "WITH n AS (UPDATE acc_counters SET value = value + 1 WHERE name = '{table}' RETURNING value) \
         INSERT INTO {table}(seq, {columns} VALUES ((SELECT value FROM n), {} RETURNING seq",
        &pg_insert[values..]
    )
}

/// A receipt's offer transport in PostgreSQL's words (`messages::sql::repeat_candidates`):
/// `#>>` answers NULL for an absent key and for a JSON null alike, as SQLite's `json_extract`.
pub(crate) const OFFER_TRANSPORT: &str = "(r.extensions::jsonb #>> '{offer,transport}')";
/// When a receipt's offer was repeated, in PostgreSQL's words.
pub(crate) const OFFER_REPEATED: &str = "(r.extensions::jsonb #>> '{offer,repeatedAt}')";

/// A driver failure, named after the room (`host/db`; never a password): the server's refusals
/// by their SQLSTATE, a connection that is gone as the room being unavailable.
pub(crate) fn error(room: &str, error: &tokio_postgres::Error) -> StoreError {
    if let Some(db) = error.as_db_error() {
        let code = db.code().code();
        let kind = match code {
            // Serialization failure, deadlock, lock not available.
            "40001" | "40P01" | "55P03" => StoreErrorKind::Busy,
            // A statement timeout or cancel, the server shutting down, too many connections,
            // a refused login.
            "57014" | "57P01" | "57P02" | "57P03" | "53300" | "28P01" | "28000" => {
                StoreErrorKind::Unavailable
            }
            // Text PostgreSQL cannot hold (U+0000): the input is refused, nothing is written.
            "22021" | "22P05" => StoreErrorKind::Refused,
            _ if code.starts_with("08") => StoreErrorKind::Unavailable,
            _ => StoreErrorKind::Internal,
        };
        return StoreError::new(
            kind,
            format!("the room at {room} answered {code}: {}", db.message()),
        );
    }
    if error.is_closed() {
        return StoreError::new(
            StoreErrorKind::Unavailable,
            format!("the room at {room} is unreachable: its connection closed"),
        );
    }
    // The driver's words name only the kind of failure; its cause says what happened.
    let mut cause = String::new();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        cause.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    if cause.contains("password missing") {
        return StoreError::new(
            StoreErrorKind::Unavailable,
            format!(
                "the room at {room} asks for a password and none was found: put it in ~/.pgpass (mode 0600) or the file PGPASSFILE names, or in PGPASSWORD"
            ),
        );
    }
    StoreError::new(
        StoreErrorKind::Unavailable,
        format!("the room at {room} is unreachable: {error}{cause}"),
    )
}

/// The PostgreSQL schema of a room: `schema.sql` with PostgreSQL's types. Integers are
/// `BIGINT` (SQLite's are 64-bit), text sorts by its bytes (`COLLATE "C"`, SQLite's `BINARY`,
/// so pages and id prefixes order alike), a sequenced table's `seq` is a plain key that
/// `acc_counters` assigns (see [`sequenced`]). Derived from the one schema text so the two
/// cannot drift.
pub(crate) fn schema() -> String {
    let mut out = String::new();
    for line in crate::SCHEMA_SQL.lines() {
        if line.trim_start().starts_with("--") {
            continue;
        }
        let line = line
            .replace(" INTEGER PRIMARY KEY AUTOINCREMENT", " BIGINT PRIMARY KEY")
            .replace(" INTEGER", " BIGINT")
            .replace(" TEXT", " TEXT COLLATE \"C\"")
            .replace(") STRICT, WITHOUT ROWID;", ");")
            .replace(") STRICT;", ");");
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(
        "CREATE TABLE acc_counters (name TEXT COLLATE \"C\" PRIMARY KEY, value BIGINT NOT NULL);\n\
         INSERT INTO acc_counters(name, value) VALUES ('messages', 0), ('events', 0);\n",
    );
    out
}

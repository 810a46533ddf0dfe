//! Typed statements for ephemeral delivery bindings.

use crate::db::{Row, args};
use serde_json::Value;

use super::{BindingRow, Reader, SessionRow, Writer, json_text, parse_json};
use crate::StoreResult;

const COLUMNS: &str = "session_id, generation, adapter_id, client_version, modes, live_policy, endpoint_ref, endpoint, lease_until, created_at";

fn binding_from(row: &Row<'_>) -> StoreResult<BindingRow> {
    let modes: String = row.get(4)?;
    let endpoint: String = row.get(7)?;
    Ok(BindingRow {
        session_id: row.get(0)?,
        generation: row.get(1)?,
        adapter_id: row.get(2)?,
        client_version: row.get(3)?,
        modes: parse_json(&modes)?,
        live_policy: row.get(5)?,
        endpoint_ref: row.get(6)?,
        endpoint: parse_json(&endpoint)?,
        lease_until: row.get(8)?,
        created_at: row.get(9)?,
    })
}

/// The bindings of one participant's open sessions' current generations. Made once: every
/// send routes through it.
pub(crate) fn open_bindings_sql() -> &'static str {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let columns: Vec<String> = COLUMNS.split(", ").map(|c| format!("b.{c}")).collect();
        format!(
            "SELECT {} FROM sessions s JOIN delivery_bindings b ON b.session_id = s.session_id AND b.generation = s.generation WHERE s.participant_id = ?1 AND s.closed_at IS NULL ORDER BY b.session_id, b.adapter_id",
            columns.join(", ")
        )
    });
    &SQL
}

impl Reader<'_> {
    /// The bindings of each of `sessions`' current generations ([`Self::bindings_of`]), in
    /// their order: on SQLite one index seek each, on a room one statement for all (read ahead
    /// with the rest of a status).
    pub fn bindings_of_each(&self, sessions: &[SessionRow]) -> StoreResult<Vec<Vec<BindingRow>>> {
        if !self.conn.is_pg() {
            return sessions
                .iter()
                .map(|s| self.bindings_of(&s.session_id, s.generation))
                .collect();
        }
        let all = self
            .conn
            .rows(crate::pg::ALL_BINDINGS, args![], binding_from)?;
        Ok(sessions
            .iter()
            .map(|s| {
                all.iter()
                    .filter(|b| b.session_id == s.session_id && b.generation == s.generation)
                    .cloned()
                    .collect()
            })
            .collect())
    }

    /// The bindings of a session's current generation.
    pub fn bindings_of(&self, session_id: &str, generation: i64) -> StoreResult<Vec<BindingRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM delivery_bindings WHERE session_id = ?1 AND generation = ?2 ORDER BY adapter_id"
        );
        self.conn
            .rows(&sql, args![session_id, generation], binding_from)
    }

    /// The bindings of the current generations of `participant_id`'s open sessions, by
    /// session and adapter: what routing a message to the participant reads, in one statement
    /// that a send reads ahead with the sessions ([`Self::prefetch_routes`]).
    pub fn open_bindings_of(&self, participant_id: &str) -> StoreResult<Vec<BindingRow>> {
        self.conn
            .rows(open_bindings_sql(), args![participant_id], binding_from)
    }

    /// One binding.
    pub fn binding(&self, session_id: &str, adapter_id: &str) -> StoreResult<Option<BindingRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM delivery_bindings WHERE session_id = ?1 AND adapter_id = ?2"
        );
        self.conn
            .row(&sql, args![session_id, adapter_id], binding_from)
    }
}

impl Writer<'_> {
    /// Insert or replace a session's binding for one adapter.
    pub fn put_binding(&mut self, b: &BindingRow) -> StoreResult<()> {
        let sql = format!(
            "INSERT INTO delivery_bindings({COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)
             ON CONFLICT(session_id, adapter_id) DO UPDATE SET generation = excluded.generation,
             client_version = excluded.client_version, modes = excluded.modes,
             live_policy = excluded.live_policy, endpoint_ref = excluded.endpoint_ref,
             endpoint = excluded.endpoint, lease_until = excluded.lease_until,
             created_at = excluded.created_at"
        );
        self.conn.execute(
            &sql,
            args![
                b.session_id,
                b.generation,
                b.adapter_id,
                b.client_version,
                json_text(&Value::from(b.modes.clone())),
                b.live_policy,
                b.endpoint_ref,
                json_text(&b.endpoint),
                b.lease_until,
                b.created_at
            ],
        )?;
        Ok(())
    }

    /// Remove a session's bindings (all adapters, or one).
    /// Drop every binding of a session, its answer not waited for on a room.
    pub(crate) fn drop_every_binding(&mut self, session_id: &str) -> StoreResult<()> {
        self.conn.write(
            "DELETE FROM delivery_bindings WHERE session_id = ?1",
            args![session_id],
        )
    }

    pub fn drop_bindings(
        &mut self,
        session_id: &str,
        adapter_id: Option<&str>,
    ) -> StoreResult<usize> {
        Ok(match adapter_id {
            Some(adapter) => self.conn.execute(
                "DELETE FROM delivery_bindings WHERE session_id = ?1 AND adapter_id = ?2",
                args![session_id, adapter],
            )?,
            None => self.conn.execute(
                "DELETE FROM delivery_bindings WHERE session_id = ?1",
                args![session_id],
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_rooms_every_binding_statement_reads_the_binding_columns() {
        let columns: Vec<String> = super::COLUMNS
            .split(", ")
            .map(|c| format!("b.{c}"))
            .collect();
        assert!(
            crate::pg::ALL_BINDINGS.starts_with(&format!("SELECT {} FROM", columns.join(", "))),
            "{}",
            crate::pg::ALL_BINDINGS
        );
    }
}

//! What a send and a write on a received message read ahead on a room, with their opening:
//! everything they decide on, in one round trip.

use super::*;

/// The open sessions of the author of the message `?1` and their bindings: what
/// `ops::open_sessions_sql` and `bindings::open_bindings_sql` ask for that participant, asked
/// by the message's id (a reply reads them ahead before it knows the author).
fn author_routes_sql(layout: i64) -> (&'static str, &'static str) {
    const AUTHOR: &str = "(SELECT from_participant_id FROM messages WHERE message_id = ?1)";
    static SQL: std::sync::LazyLock<[String; 3]> = std::sync::LazyLock::new(|| {
        let swap =
            |sql: &str| sql.replace("participant_id = ?1", &format!("participant_id = {AUTHOR}"));
        [
            swap(crate::ops::open_sessions_sql(
                crate::layout::PID_SCOPE_LAYOUT,
            )),
            swap(crate::ops::open_sessions_sql(0)),
            swap(crate::bindings::open_bindings_sql()),
        ]
    });
    let sessions = if layout >= crate::layout::PID_SCOPE_LAYOUT {
        &SQL[0]
    } else {
        &SQL[1]
    };
    (sessions, &SQL[2])
}

impl Reader<'_> {
    /// Read ahead, on a room, what a send from the session `session_id` to `to` asks first:
    /// the session ([`Self::session`]) and whether each name is a participant
    /// ([`Self::participant_exists`](Reader::participant_exists)), the message already sent with its idempotency key
    /// ([`Self::message_by_client_id_of`]), the sequence counters its inserts take their
    /// numbers from, its recipients' routes, a reply's answered message, and a finish's
    /// claims, in one round trip.
    pub fn prefetch_send(
        &self,
        session_id: &str,
        to: &[String],
        client_message_id: Option<&str>,
        reply_to: Option<&str>,
        finish: bool,
    ) -> StoreResult<()> {
        if !self.conn.is_pg() {
            return Ok(());
        }
        let session = crate::ops::session_sql(self.layout);
        let id: [&dyn crate::db::Arg; 1] = [&session_id];
        let mut statements: Vec<(&str, &[&dyn crate::db::Arg])> = vec![(session, &id)];
        let keyed = message_by_key_of_session_sql();
        let key: Option<[&dyn crate::db::Arg; 2]> = client_message_id
            .as_ref()
            .map(|k| [&session_id as _, k as _]);
        if let Some(key) = &key {
            statements.push((keyed.as_str(), key.as_slice()));
        }
        let names: Vec<[&dyn crate::db::Arg; 1]> = to.iter().map(|n| [n as _]).collect();
        statements.extend(
            names
                .iter()
                .map(|n| (crate::ops::PARTICIPANT_EXISTS, n.as_slice())),
        );
        // Routing each recipient asks for its open sessions and their bindings
        // ([`Self::prefetch_routes`]), after the send's inserts, which change neither.
        let sessions = crate::ops::open_sessions_sql(self.layout);
        let bindings = crate::bindings::open_bindings_sql();
        let mut routes: Vec<(&str, &[&dyn crate::db::Arg])> = Vec::new();
        for name in &names {
            routes.push((sessions, name.as_slice()));
            routes.push((bindings, name.as_slice()));
        }
        // A reply: the answered message, the sender's receipt of it, and the routes to its
        // author, asked by its id (the author is known only from the answer).
        let answered: Option<[&dyn crate::db::Arg; 1]> = reply_to.as_ref().map(|id| [id as _]);
        let receipt: Option<[&dyn crate::db::Arg; 2]> =
            reply_to.as_ref().map(|id| [id as _, &session_id as _]);
        let (author_sessions, author_bindings) = author_routes_sql(self.layout);
        // A finish releases the session's claims after the message's inserts, which do not
        // change them.
        if finish {
            routes.push((crate::claims::of_session_sql(), &id));
        }
        if let (Some(answered), Some(receipt)) = (&answered, &receipt) {
            statements.push((message_sql(), answered.as_slice()));
            statements.push((receipt_for_session_sql(), receipt.as_slice()));
            routes.push((author_sessions, answered.as_slice()));
            routes.push((author_bindings, answered.as_slice()));
        }
        self.conn.prefetch_for_write_past(&statements, &routes)?;
        if let (Some(answered), Some(id)) = (&answered, reply_to)
            && let Some(message) = self.message(id)?
        {
            let author: [&dyn crate::db::Arg; 1] = [&message.from_participant_id];
            self.conn
                .alias_ahead((author_sessions, answered), (sessions, &author));
            self.conn
                .alias_ahead((author_bindings, answered), (bindings, &author));
        }
        Ok(())
    }

    /// Read ahead, on a room, what routing a message to each of `recipients` asks: their open
    /// sessions ([`Self::open_sessions_of`]) and those sessions' bindings
    /// ([`Self::open_bindings_of`]), in one round trip.
    pub fn prefetch_routes(&self, recipients: &[&str]) -> StoreResult<()> {
        if !self.conn.is_pg() {
            return Ok(());
        }
        let sessions = crate::ops::open_sessions_sql(self.layout);
        let bindings = crate::bindings::open_bindings_sql();
        let keys: Vec<[&dyn crate::db::Arg; 1]> = recipients.iter().map(|r| [r as _]).collect();
        let mut statements: Vec<(&str, &[&dyn crate::db::Arg])> = Vec::new();
        for key in &keys {
            statements.push((sessions, key.as_slice()));
            statements.push((bindings, key.as_slice()));
        }
        self.conn.prefetch(&statements)
    }

    /// Read ahead, on a room, what a write on one received message asks first, with the
    /// sequence counters, in one round trip: the caller's session, the message, the caller's
    /// receipt of it, and its decision links.
    pub fn prefetch_received(&self, session_id: &str, message_id: &str) -> StoreResult<()> {
        let id: [&dyn crate::db::Arg; 1] = [&session_id];
        let message: [&dyn crate::db::Arg; 1] = [&message_id];
        let receipt: [&dyn crate::db::Arg; 2] = [&message_id, &session_id];
        // The links are read again after the receipt's update, which does not change them.
        self.conn.prefetch_for_write_past(
            &[
                (crate::ops::session_sql(self.layout), &id),
                (message_sql(), &message),
                (receipt_for_session_sql(), &receipt),
            ],
            &[(LINKS_OF_MESSAGE, &message)],
        )
    }
}

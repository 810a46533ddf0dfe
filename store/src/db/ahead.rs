//! Reading ahead and writing ahead on a room (issue 30): the statements a transaction knows it
//! will run are sent together ([`Conn::prefetch`]), and the writes whose answers nothing waits
//! for are sent at once, their answers taken with the next round trip ([`Conn::write`],
//! [`Conn::insert_sequenced`], [`super::pipeline`]). SQLite makes no round trips, so on it
//! these are its plain statements.

use super::pipeline::{Deferred, Encoded};
use super::{Ahead, Arg, Conn, PgSession, Row, pg_text};
use crate::{StoreError, StoreResult};

impl PgSession {
    /// Send the write `sql` (PostgreSQL's text made by `text`) with `args` now, its answer
    /// taken with the next round trip ([`super::pipeline`]); with `seq`, it returns that
    /// `seq`, checked then. `false` when it cannot go ahead: the transaction's opening or the
    /// meta read is still to be sent (they go first, with an answer waited for), or an
    /// argument has no type of its own.
    pub(super) fn defer(
        &self,
        sql: &str,
        text: impl FnOnce() -> String,
        args: &[&dyn Arg],
        seq: Option<i64>,
    ) -> bool {
        if self.opening.borrow().is_some() || self.meta_ahead.get() {
            return false;
        }
        let (Some(encoded), Some(client)) = (Encoded::all(args), self.client.clone()) else {
            return false;
        };
        let text = self.text(sql, text);
        let write = Deferred::send(client, self.name.clone(), text, encoded, seq);
        self.deferred.borrow_mut().push(write);
        true
    }

    /// The key of a statement's answer read ahead: its text and its arguments as the server
    /// receives them; `None` when an argument has no type of its own (never read ahead).
    pub(super) fn ahead_key(sql: &str, args: &[&dyn Arg]) -> Option<Vec<u8>> {
        Encoded::all(args).map(|encoded| Encoded::key(sql, &encoded))
    }

    /// Run `statements` in one round trip (sent together, answered in order) and keep their
    /// answers for the statements of this transaction that ask the same; those already read
    /// ahead are not sent again, and nothing left to ask makes no round trip. With `counters`
    /// (a write transaction, which holds the room's lock), the sequence counters are read in
    /// the same round trip, for the inserts that follow ([`Conn::insert_sequenced`]). The
    /// answers of `past_writes` outlive the transaction's writes.
    pub(super) fn prefetch(
        &self,
        statements: &[(&str, &[&dyn Arg])],
        counters: bool,
        past_writes: &[(&str, &[&dyn Arg])],
    ) -> StoreResult<()> {
        let mut keyed = Vec::new();
        let mut lasting = Vec::new();
        let marked = statements
            .iter()
            .map(|s| (s, false))
            .chain(past_writes.iter().map(|s| (s, true)));
        for ((sql, args), past) in marked {
            let Some(encoded) = Encoded::all(args) else {
                continue;
            };
            let key = Encoded::key(sql, &encoded);
            if self.ahead.borrow().contains_key(&key) || keyed.iter().any(|(k, _, _)| *k == key) {
                continue;
            }
            keyed.push((key, self.text(sql, || pg_text(sql)), encoded));
            lasting.push(past);
        }
        let counters = counters && self.counters.borrow().is_empty();
        if keyed.is_empty() && !counters {
            return Ok(());
        }
        let (counted, answers) = self.ask(async |c| {
            let mut context = std::task::Context::from_waker(std::task::Waker::noop());
            let mut counted = counters.then(|| Box::pin(c.query_typed(crate::pg::COUNTERS, &[])));
            let counted_early = counted.as_mut().map(|q| q.as_mut().poll(&mut context));
            let mut sent = Vec::new();
            for (_, text, encoded) in &keyed {
                let typed = Encoded::typed(encoded);
                let mut answer = Box::pin(async move { c.query_typed(text, &typed).await });
                // Polled once, each request is queued behind the one before; the answers
                // are then awaited in order, all in the one round trip.
                let early = answer.as_mut().poll(&mut context);
                sent.push((answer, early));
            }
            let counted = match (counted, counted_early) {
                (Some(_), Some(std::task::Poll::Ready(done))) => Some(done?),
                (Some(counted), _) => Some(counted.await?),
                (None, _) => None,
            };
            let mut answers = Vec::new();
            for (answer, early) in sent {
                answers.push(match early {
                    std::task::Poll::Ready(done) => done?,
                    std::task::Poll::Pending => answer.await?,
                });
            }
            Ok((counted, answers))
        })?;
        for row in counted.iter().flatten() {
            let row = Row::Pg(row);
            self.counters.borrow_mut().insert(row.get(0)?, row.get(1)?);
        }
        let mut ahead = self.ahead.borrow_mut();
        for (((key, _, _), rows), past_writes) in keyed.into_iter().zip(answers).zip(lasting) {
            ahead.insert(
                key,
                Ahead {
                    rows: std::sync::Arc::new(rows),
                    past_writes,
                },
            );
        }
        Ok(())
    }

    /// Keep the answer read ahead for `from` (text and arguments) as the answer of `to` too:
    /// for a statement whose arguments only an answer of the same round trip told (a reply's
    /// recipient, read ahead by the answered message's id). The two must ask the same rows.
    pub(super) fn alias_ahead(&self, from: (&str, &[&dyn Arg]), to: (&str, &[&dyn Arg])) {
        let (Some(from), Some(to)) = (Self::ahead_key(from.0, from.1), Self::ahead_key(to.0, to.1))
        else {
            return;
        };
        let mut ahead = self.ahead.borrow_mut();
        if let Some(found) = ahead.get(&from) {
            let copy = Ahead {
                rows: found.rows.clone(),
                past_writes: found.past_writes,
            };
            ahead.insert(to, copy);
        }
    }

    /// Forget what was read ahead, but for the answers read to outlive the writes.
    pub(super) fn forget_ahead(&self) {
        self.ahead.borrow_mut().retain(|_, ahead| ahead.past_writes);
    }

    /// The answer read ahead for `sql` with `args`. It stays for the statements after that ask
    /// the same until a write forgets it: in a reader's snapshot, and under a writer's lock
    /// before its own writes, asking again would answer the same.
    pub(super) fn take_ahead(
        &self,
        sql: &str,
        args: &[&dyn Arg],
    ) -> Option<std::sync::Arc<Vec<tokio_postgres::Row>>> {
        if self.ahead.borrow().is_empty() {
            return None;
        }
        self.ahead
            .borrow()
            .get(&Self::ahead_key(sql, args)?)
            .map(|ahead| ahead.rows.clone())
    }
}

/// The followers' wake (issue 57): a write transaction that appended events tells the room's
/// listeners, with its commit.
impl PgSession {
    /// Note the row `seq` inserted into `table`: the newest event, for the wake.
    fn appended(&self, table: &str, seq: i64) {
        if table == "events" {
            self.appended.set(Some(seq));
        }
    }

    /// Before a write transaction's `COMMIT`: when it appended events, a notification on
    /// `channel` carrying `workspace` and the newest event's number, sent ahead of its answer
    /// (PostgreSQL delivers it when, and only if, the transaction commits). It costs no round
    /// trip.
    pub(crate) fn wake_ahead(&self, channel: &str, workspace: &str) -> StoreResult<()> {
        let Some(cursor) = self.appended.take() else {
            return Ok(());
        };
        let payload = crate::wake::payload(workspace, cursor);
        let sql = "SELECT pg_notify(?1, ?2)";
        let args: &[&dyn Arg] = &[&channel, &payload.as_str()];
        if !self.defer(sql, || pg_text(sql), args, None) {
            self.execute(sql, args)?;
        }
        Ok(())
    }
}

/// Statements of their own sent ahead of the next round trip (a presence refresh).
impl PgSession {
    /// Send `sql` with `args` now as a statement of its own, outside any transaction (so
    /// between transactions), and take its answer with the next round trip: it must return one
    /// row whose first column is 1 ([`Self::autocommitted`] says whether it did). `false` when
    /// it cannot be sent so (a transaction is open, an argument has no type of its own).
    pub(crate) fn autocommit_ahead(&self, sql: &str, args: &[&dyn Arg]) -> bool {
        if self.opening.borrow().is_some() {
            return false;
        }
        let (Some(encoded), Some(client)) = (Encoded::all(args), self.client.clone()) else {
            return false;
        };
        let text = self.text(sql, || pg_text(sql));
        let sent = Deferred::send(client, self.name.clone(), text, encoded, Some(1));
        self.autocommit.borrow_mut().push(sent);
        true
    }

    /// Whether the last statement sent by [`Self::autocommit_ahead`] that was answered
    /// returned its one row; `None` when none was answered since the last ask. Taken.
    pub(crate) fn autocommitted(&self) -> Option<bool> {
        self.autocommitted.take()
    }
}

impl Conn<'_> {
    /// Read the answers of `statements` ahead, in one round trip on PostgreSQL, for the
    /// statements of this transaction that ask the same with the same arguments (as often as
    /// they ask, until a write forgets them all). Nothing on SQLite, whose reads make no
    /// round trips. A statement read ahead must be one the transaction may run: its answer is
    /// of the transaction's own snapshot, so taking it changes nothing but the round trips.
    pub(crate) fn prefetch(&self, statements: &[(&str, &[&dyn Arg])]) -> StoreResult<()> {
        match self {
            Self::Lite(_) => Ok(()),
            Self::Pg(session) => session.prefetch(statements, false, &[]),
        }
    }

    /// See [`PgSession::alias_ahead`]; nothing on SQLite.
    pub(crate) fn alias_ahead(&self, from: (&str, &[&dyn Arg]), to: (&str, &[&dyn Arg])) {
        if let Self::Pg(session) = self {
            session.alias_ahead(from, to);
        }
    }

    /// Run a write whose answer nothing waits for (an insert, a refreshed time): on
    /// PostgreSQL it is sent at once and answered with the next round trip
    /// ([`super::pipeline`]); a failure fails the transaction there.
    pub(crate) fn write(&self, sql: &str, args: &[&dyn Arg]) -> StoreResult<()> {
        match self {
            Self::Lite(_) => self.execute(sql, args).map(drop),
            Self::Pg(session) => {
                session.forget_ahead();
                if !session.defer(sql, || pg_text(sql), args, None) {
                    session.execute(sql, args)?;
                }
                Ok(())
            }
        }
    }

    /// [`Self::prefetch`] in a write transaction, with the room's sequence counters read in
    /// the same round trip, so that its inserts go ahead of their answers.
    pub(crate) fn prefetch_for_write(&self, statements: &[(&str, &[&dyn Arg])]) -> StoreResult<()> {
        match self {
            Self::Lite(_) => Ok(()),
            Self::Pg(session) => session.prefetch(statements, true, &[]),
        }
    }

    /// [`Self::prefetch_for_write`] of `statements`, and of `past_writes`, whose answers the
    /// transaction's writes cannot change, in the same round trip.
    pub(crate) fn prefetch_for_write_past(
        &self,
        statements: &[(&str, &[&dyn Arg])],
        past_writes: &[(&str, &[&dyn Arg])],
    ) -> StoreResult<()> {
        match self {
            Self::Lite(_) => Ok(()),
            Self::Pg(session) => session.prefetch(statements, true, past_writes),
        }
    }

    /// Insert one row into `table`, whose `seq` the store assigns, by the SQLite statement
    /// `sql` (`INSERT INTO table(columns) VALUES (...)`, without `seq`); the row's `seq`.
    /// SQLite's `AUTOINCREMENT` assigns it; on PostgreSQL the table's counter row in
    /// `acc_counters` does, in the same statement, so a rolled-back insert leaves no gap and a
    /// deleted newest row's number is never given again (as on SQLite).
    pub(crate) fn insert_sequenced(
        &self,
        table: &str,
        sql: &str,
        args: &[&dyn Arg],
    ) -> StoreResult<i64> {
        match self {
            Self::Lite(conn) => {
                self.execute(sql, args)?;
                Ok(conn.last_insert_rowid())
            }
            Self::Pg(session) => {
                session.forget_ahead();
                let text = || crate::pg::sequenced(table, &pg_text(sql));
                // Under the room's lock the next number is the counter's next: the insert goes
                // ahead of its answer, which checks it.
                let known = session.counters.borrow().get(table).copied();
                if let Some(next) = known.map(|last| last + 1)
                    && session.defer(sql, text, args, Some(next))
                {
                    session
                        .counters
                        .borrow_mut()
                        .insert(table.to_string(), next);
                    session.appended(table, next);
                    return Ok(next);
                }
                let rows = session.query_as(sql, text, args)?;
                let row = rows
                    .first()
                    .ok_or_else(|| StoreError::internal(format!("`{sql}` returned no seq")))?;
                let seq = Row::Pg(row).get(0)?;
                session.counters.borrow_mut().insert(table.to_string(), seq);
                session.appended(table, seq);
                Ok(seq)
            }
        }
    }
}

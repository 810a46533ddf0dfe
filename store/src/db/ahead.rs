//! Reading ahead and writing ahead on a room (issue 30): the statements a transaction knows it
//! will run are sent together ([`Conn::prefetch`]), and the writes whose answers nothing waits
//! for are sent at once, their answers taken with the next round trip ([`Conn::write`],
//! [`Conn::insert_sequenced`], [`super::pipeline`]). SQLite makes no round trips, so on it
//! these are its plain statements.

use super::pipeline::{Deferred, Encoded};
use super::{Arg, Conn, PgSession, Row, pg_text};
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
    /// answers for the statements of this transaction that ask the same. With `counters` (a
    /// write transaction, which holds the room's lock), the sequence counters are read in the
    /// same round trip, for the inserts that follow ([`Conn::insert_sequenced`]).
    pub(super) fn prefetch(
        &self,
        statements: &[(&str, &[&dyn Arg])],
        counters: bool,
    ) -> StoreResult<()> {
        let mut keyed = Vec::new();
        for (sql, args) in statements {
            let Some(encoded) = Encoded::all(args) else {
                continue;
            };
            keyed.push((
                Encoded::key(sql, &encoded),
                self.text(sql, || pg_text(sql)),
                encoded,
            ));
        }
        let counters = counters && self.counters.borrow().is_empty();
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
        for ((key, _, _), rows) in keyed.into_iter().zip(answers) {
            ahead.insert(key, rows);
        }
        Ok(())
    }

    /// The answer read ahead for `sql` with `args`, taken.
    pub(super) fn take_ahead(
        &self,
        sql: &str,
        args: &[&dyn Arg],
    ) -> Option<Vec<tokio_postgres::Row>> {
        if self.ahead.borrow().is_empty() {
            return None;
        }
        self.ahead.borrow_mut().remove(&Self::ahead_key(sql, args)?)
    }
}

impl Conn<'_> {
    /// Read the answers of `statements` ahead, in one round trip on PostgreSQL, for the
    /// statements of this transaction that ask the same with the same arguments (each answer is
    /// taken once; a write in between forgets them all). Nothing on SQLite, whose reads make no
    /// round trips. A statement read ahead must be one the transaction may run: its answer is
    /// of the transaction's own snapshot, so taking it changes nothing but the round trips.
    pub(crate) fn prefetch(&self, statements: &[(&str, &[&dyn Arg])]) -> StoreResult<()> {
        match self {
            Self::Lite(_) => Ok(()),
            Self::Pg(session) => session.prefetch(statements, false),
        }
    }

    /// Run a write whose answer nothing waits for (an insert, a refreshed time): on
    /// PostgreSQL it is sent at once and answered with the next round trip
    /// ([`super::pipeline`]); a failure fails the transaction there.
    pub(crate) fn write(&self, sql: &str, args: &[&dyn Arg]) -> StoreResult<()> {
        match self {
            Self::Lite(_) => self.execute(sql, args).map(drop),
            Self::Pg(session) => {
                session.ahead.borrow_mut().clear();
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
            Self::Pg(session) => session.prefetch(statements, true),
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
                session.ahead.borrow_mut().clear();
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
                    return Ok(next);
                }
                let rows = session.query_as(sql, text, args)?;
                let row = rows
                    .first()
                    .ok_or_else(|| StoreError::internal(format!("`{sql}` returned no seq")))?;
                let seq = Row::Pg(row).get(0)?;
                session.counters.borrow_mut().insert(table.to_string(), seq);
                Ok(seq)
            }
        }
    }
}

//! The seam between the store's statements and its two backends: a statement runs through
//! [`Conn`], which is a SQLite connection (inside a transaction) or a PostgreSQL room's
//! session. Statements are written once, in SQLite's spelling with numbered parameters
//! (`?1`); for PostgreSQL they are rewritten once per text ([`pg_text`]) and prepared once per
//! session. The few statements whose meaning needs each backend's own words (JSON paths, the
//! sequence counters) ask [`Conn::is_pg`].
//!
//! Arguments and columns go through two small traits of this crate rather than either
//! driver's own: the store's booleans are integers on both backends (0 and 1, as SQLite keeps
//! them), and an integer column reads back as `i64` whatever width PostgreSQL gives an
//! expression (`length()` is `int4`).

use std::cell::RefCell;
use std::collections::HashMap;

use tokio_postgres::types::{ToSql as PgToSql, Type};

use crate::{StoreError, StoreErrorKind, StoreResult};
use pipeline::Deferred;

mod ahead;
mod dial;
pub(crate) use dial::dial;
mod pipeline;

/// A statement's argument, bindable on both backends.
pub(crate) trait Arg {
    /// The value for SQLite.
    fn lite(&self) -> &dyn rusqlite::ToSql;
    /// The value for PostgreSQL.
    fn pg(&self) -> &(dyn PgToSql + Sync);
    /// Its PostgreSQL type, when it has one whatever its value: a statement whose arguments all
    /// do runs in one round trip without being prepared first (`query_typed`).
    fn pg_type(&self) -> Option<Type>;
}

macro_rules! plain_arg {
    ($ty:expr; $($t:ty),*) => {$(
        impl $crate::db::Arg for $t {
            fn lite(&self) -> &dyn rusqlite::ToSql {
                self
            }
            fn pg(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
                self
            }
            fn pg_type(&self) -> Option<tokio_postgres::types::Type> {
                Some($ty)
            }
        }
    )*};
}
plain_arg!(Type::INT8; i64, Option<i64>);
plain_arg!(Type::TEXT; String, &str, Option<String>, Option<&str>);
pub(crate) use plain_arg;

impl<T: Arg> Arg for &T {
    fn lite(&self) -> &dyn rusqlite::ToSql {
        (**self).lite()
    }
    fn pg(&self) -> &(dyn PgToSql + Sync) {
        (**self).pg()
    }
    fn pg_type(&self) -> Option<Type> {
        (**self).pg_type()
    }
}

static ONE: i64 = 1;
static ZERO: i64 = 0;

impl Arg for bool {
    fn lite(&self) -> &dyn rusqlite::ToSql {
        self
    }
    fn pg(&self) -> &(dyn PgToSql + Sync) {
        if *self { &ONE } else { &ZERO }
    }
    fn pg_type(&self) -> Option<Type> {
        Some(Type::INT8)
    }
}

/// Arguments of a statement, in parameter order.
macro_rules! args {
    ($($arg:expr),* $(,)?) => {
        &[$(&$arg as &dyn $crate::db::Arg),*]
    };
}
pub(crate) use args;

/// A column's value, readable from both backends.
pub(crate) trait Column: Sized {
    /// From a SQLite row.
    fn lite(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Self>;
    /// From a PostgreSQL row.
    fn pg(row: &tokio_postgres::Row, index: usize) -> StoreResult<Self>;
}

/// A PostgreSQL column the store's types refuse: damage, as on SQLite.
pub(crate) fn refused(index: usize, error: &dyn std::fmt::Display) -> StoreError {
    StoreError::new(
        StoreErrorKind::Corrupt,
        format!("the room holds a value acc cannot read in column {index}: {error}"),
    )
}

macro_rules! plain_column {
    ($($t:ty),*) => {$(
        impl $crate::db::Column for $t {
            fn lite(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Self> {
                row.get(index)
            }
            fn pg(row: &tokio_postgres::Row, index: usize) -> $crate::StoreResult<Self> {
                row.try_get(index).map_err(|e| $crate::db::refused(index, &e))
            }
        }
    )*};
}
plain_column!(String, Option<String>);

/// An integer of any width PostgreSQL gives it.
fn pg_int(row: &tokio_postgres::Row, index: usize) -> StoreResult<Option<i64>> {
    let ty = row.columns().get(index).map(|c| c.type_().clone());
    let value = match ty {
        Some(Type::INT4) => row
            .try_get::<_, Option<i32>>(index)
            .map(|v| v.map(i64::from)),
        Some(Type::INT2) => row
            .try_get::<_, Option<i16>>(index)
            .map(|v| v.map(i64::from)),
        Some(Type::BOOL) => row
            .try_get::<_, Option<bool>>(index)
            .map(|v| v.map(i64::from)),
        _ => row.try_get(index),
    };
    value.map_err(|e| refused(index, &e))
}

impl Column for Option<i64> {
    fn lite(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Self> {
        row.get(index)
    }
    fn pg(row: &tokio_postgres::Row, index: usize) -> StoreResult<Self> {
        pg_int(row, index)
    }
}

impl Column for i64 {
    fn lite(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Self> {
        row.get(index)
    }
    fn pg(row: &tokio_postgres::Row, index: usize) -> StoreResult<Self> {
        pg_int(row, index)?.ok_or_else(|| refused(index, &"a NULL where a number must be"))
    }
}

impl Column for bool {
    fn lite(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Self> {
        row.get(index)
    }
    fn pg(row: &tokio_postgres::Row, index: usize) -> StoreResult<Self> {
        Ok(<i64 as Column>::pg(row, index)? != 0)
    }
}

/// One row of a result, from either backend.
pub(crate) enum Row<'r> {
    /// A SQLite row.
    Lite(&'r rusqlite::Row<'r>),
    /// A PostgreSQL row.
    Pg(&'r tokio_postgres::Row),
}

impl Row<'_> {
    /// Column `index`, converted; a value the type refuses is damage ([`StoreErrorKind::Corrupt`]).
    pub(crate) fn get<T: Column>(&self, index: usize) -> StoreResult<T> {
        match self {
            Self::Lite(row) => Ok(T::lite(row, index)?),
            Self::Pg(row) => T::pg(row, index),
        }
    }
}

/// A PostgreSQL room's session: the connection, driven on a single-thread runtime of its own,
/// and its prepared statements, by their SQLite text.
pub(crate) struct PgSession {
    /// The client; `None` only while the session is dropped. Shared with the writes sent
    /// ahead of their answers ([`pipeline`]).
    client: Option<std::sync::Arc<tokio_postgres::Client>>,
    runtime: tokio::runtime::Runtime,
    /// The task reading and writing the connection.
    connection: Option<tokio::task::JoinHandle<Answer<()>>>,
    /// Round trips to the server so far (each wait for an answer is one; the connection's own
    /// start-up is not counted).
    round_trips: std::cell::Cell<u64>,
    /// The opening of a transaction (`BEGIN`, a writer's lock), sent ahead of its first
    /// statement in the same round trip; `None` once sent, or outside a transaction.
    opening: RefCell<Option<String>>,
    statements: RefCell<HashMap<String, tokio_postgres::Statement>>,
    /// Whether the next round trip carries the room's meta read first ([`Self::meta_ahead`]).
    meta_ahead: std::cell::Cell<bool>,
    /// The answer of the meta read that went with a round trip, and this machine's clock
    /// before and after it (milliseconds since the Unix epoch).
    meta_answer: RefCell<Option<MetaAnswer>>,
    /// Answers read ahead in this transaction ([`Conn::prefetch`]), by statement and
    /// arguments, for every statement that asks the same; forgotten by any write (but for those
    /// read past the writes) and at the end of the transaction.
    ahead: RefCell<HashMap<Vec<u8>, Ahead>>,
    /// PostgreSQL's text of each SQLite statement run so far.
    texts: RefCell<HashMap<String, std::sync::Arc<str>>>,
    /// Writes of this transaction sent ahead of their answers ([`Self::defer`]), in order.
    deferred: RefCell<Vec<Deferred>>,
    /// The first failure among the deferred writes that the last round trip answered.
    failed: RefCell<Option<StoreError>>,
    /// The sequence counters of a write transaction (`acc_counters`, read ahead by
    /// [`Conn::prefetch_for_write`] or learnt from an insert), by table: under the room's lock
    /// nothing else moves them, so the next number is known without asking.
    counters: RefCell<HashMap<String, i64>>,
    /// Statements of their own (no transaction) sent ahead of the next round trip and
    /// answered with it ([`Self::autocommit_ahead`]).
    autocommit: RefCell<Vec<Deferred>>,
    /// Whether the last of them that was answered did what it expected.
    autocommitted: std::cell::Cell<Option<bool>>,
    /// The newest event this write transaction appended (the followers' wake carries it).
    appended: std::cell::Cell<Option<i64>>,
    /// Whether the connection is TLS.
    encrypted: bool,
    /// What the room is called in errors (`host/db`, never the password).
    pub(crate) name: String,
}

impl Drop for PgSession {
    /// Leave the server cleanly: without its client the connection says goodbye (`Terminate`,
    /// after reading any answer still due) and ends; waited for at most a moment.
    fn drop(&mut self) {
        self.deferred.borrow_mut().clear();
        drop(self.client.take());
        if let Some(connection) = self.connection.take() {
            let _ = self.runtime.block_on(async {
                tokio::time::timeout(std::time::Duration::from_millis(200), connection).await
            });
        }
    }
}

/// The answer of one round trip.
type Answer<T> = Result<T, tokio_postgres::Error>;

/// An answer read ahead ([`Conn::prefetch`]): its rows, and whether it outlives the
/// transaction's writes (read ahead by [`Conn::prefetch_past_writes`], of tables they do not
/// change).
pub(crate) struct Ahead {
    rows: std::sync::Arc<Vec<tokio_postgres::Row>>,
    past_writes: bool,
}

/// The room's meta read that went with a round trip, and this machine's clock before and after
/// it (milliseconds since the Unix epoch).
pub(crate) type MetaAnswer = (Answer<Vec<tokio_postgres::Row>>, i64, i64);

impl PgSession {
    /// Connect with `config` and the TLS of `tls`, its runtime made for the connection.
    pub(crate) fn connect(
        config: &tokio_postgres::Config,
        tls: &crate::tls::Plan,
        name: String,
    ) -> StoreResult<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                StoreError::internal(format!("no runtime for the room's connection: {e}"))
            })?;
        let (client, connection, encrypted) = runtime.block_on(dial(config, tls, &name))?;
        // The connection's reading and writing run as a task of the runtime, so they progress
        // whenever the session waits for an answer (and a request sent unanswered is written).
        let connection = runtime.spawn(connection);
        Ok(Self {
            client: Some(std::sync::Arc::new(client)),
            runtime,
            connection: Some(connection),
            round_trips: std::cell::Cell::new(0),
            opening: RefCell::new(None),
            meta_ahead: std::cell::Cell::new(false),
            meta_answer: RefCell::new(None),
            statements: RefCell::new(HashMap::new()),
            ahead: RefCell::new(HashMap::new()),
            texts: RefCell::new(HashMap::new()),
            deferred: RefCell::new(Vec::new()),
            failed: RefCell::new(None),
            counters: RefCell::new(HashMap::new()),
            autocommit: RefCell::new(Vec::new()),
            autocommitted: std::cell::Cell::new(None),
            appended: std::cell::Cell::new(None),
            encrypted,
            name,
        })
    }

    /// Whether this connection is TLS.
    pub(crate) fn encrypted(&self) -> bool {
        self.encrypted
    }

    /// Make one round trip to the server with the client. What is due ahead of it goes first,
    /// in the same round trip: the room's meta read ([`Self::meta_ahead`], its answer kept for
    /// [`Self::meta_answer`]) and a transaction's opening, whose failure (a lock not had in time)
    /// is then the answer.
    pub(crate) fn with<T>(
        &self,
        f: impl AsyncFnOnce(&tokio_postgres::Client) -> Answer<T>,
    ) -> Answer<T> {
        use std::task::Poll;
        self.round_trips.set(self.round_trips.get() + 1);
        let opening = self.opening.borrow_mut().take();
        let meta_ahead = self.meta_ahead.replace(false);
        let deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        let autocommit = std::mem::take(&mut *self.autocommit.borrow_mut());
        let before = system_ms();
        let (autocommitted, meta, failed, answer) = self.runtime.block_on(async {
            let client = self.client();
            let mut context = std::task::Context::from_waker(std::task::Waker::noop());
            // Polled once, each request is queued behind the one before it: they travel
            // together, are answered in that order, and are awaited in that order (the driver
            // hands an answer over only as fast as it is taken).
            let mut meta = meta_ahead.then(|| Box::pin(client.query_typed(crate::pg::META, &[])));
            let meta_early = meta.as_mut().map(|m| m.as_mut().poll(&mut context));
            let mut opened = opening
                .as_deref()
                .map(|o| Box::pin(client.batch_execute(o)));
            let opened_early = opened.as_mut().map(|o| o.as_mut().poll(&mut context));
            let mut answer = Box::pin(f(client));
            let answer_early = answer.as_mut().poll(&mut context);
            // The statements of their own were sent before anything else, then the writes
            // sent ahead: answered first, in that order.
            let mut autocommitted = None;
            for statement in autocommit {
                autocommitted = Some(statement.answer().await.is_ok());
            }
            let mut failed = None;
            for write in deferred {
                if let Err(e) = write.answer().await {
                    failed.get_or_insert(e);
                }
            }
            let meta = match (meta, meta_early) {
                (Some(_), Some(Poll::Ready(done))) => Some(done),
                (Some(meta), _) => Some(meta.await),
                (None, _) => None,
            };
            let opened = match (opened, opened_early) {
                (Some(_), Some(Poll::Ready(done))) => done,
                (Some(opened), _) => opened.await,
                (None, _) => Ok(()),
            };
            let answer = match answer_early {
                Poll::Ready(done) => done,
                Poll::Pending => answer.await,
            };
            (autocommitted, meta, failed, opened.and(answer))
        });
        if autocommitted.is_some() {
            self.autocommitted.set(autocommitted);
        }
        if let Some(meta) = meta {
            *self.meta_answer.borrow_mut() = Some((meta, before, system_ms()));
        }
        *self.failed.borrow_mut() = failed;
        answer
    }

    /// [`Self::with`], its failure named after the room; a failure of a write sent ahead of
    /// this round trip comes first (the transaction was aborted by it).
    pub(crate) fn ask<T>(
        &self,
        f: impl AsyncFnOnce(&tokio_postgres::Client) -> Answer<T>,
    ) -> StoreResult<T> {
        let answer = self.with(f);
        if let Some(failed) = self.failed.borrow_mut().take() {
            return Err(failed);
        }
        answer.map_err(|e| self.error(&e))
    }

    /// Read the room's meta ahead of the next round trip, in it.
    pub(crate) fn meta_ahead(&self) {
        self.meta_ahead.set(true);
    }

    /// The meta read that went with a round trip, with the clock before and after it; taken.
    pub(crate) fn meta_answer(&self) -> Option<MetaAnswer> {
        self.meta_answer.borrow_mut().take()
    }

    fn client(&self) -> &tokio_postgres::Client {
        self.client
            .as_deref()
            .expect("a session's client lives as long as the session")
    }

    /// Open a transaction by `opening`, sent with its first statement.
    pub(crate) fn open(&self, opening: String) {
        self.ahead.borrow_mut().clear();
        self.deferred.borrow_mut().clear();
        self.counters.borrow_mut().clear();
        self.appended.set(None);
        *self.failed.borrow_mut() = None;
        *self.opening.borrow_mut() = Some(opening);
    }

    /// Whether the opening of the transaction is still unsent (no statement ran in it): then
    /// there is nothing on the server to end. Clears it.
    pub(crate) fn unopened(&self) -> bool {
        self.opening.borrow_mut().take().is_some()
    }

    /// Send `text` without waiting for its answer (a reader's `COMMIT`: the snapshot is let go,
    /// and nothing depends on the answer). The request is written before this returns; its
    /// answer is read and dropped with the next round trip's.
    pub(crate) fn send_unanswered(&self, text: &str) {
        // Writes still unanswered are let go with the transaction (a rollback follows them).
        self.deferred.borrow_mut().clear();
        let mut sent = std::pin::pin!(self.client().batch_execute(text));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let _ = sent.as_mut().poll(&mut context);
        // The connection's task writes what is queued when it next runs.
        self.runtime.block_on(tokio::task::yield_now());
    }

    /// Whether the connection is gone (a restarted server, a network cut).
    pub(crate) fn is_closed(&self) -> bool {
        self.client().is_closed()
    }

    /// Round trips made so far.
    pub(crate) fn round_trips(&self) -> u64 {
        self.round_trips.get()
    }

    /// A driver failure, named after the room.
    pub(crate) fn error(&self, error: &tokio_postgres::Error) -> StoreError {
        crate::pg::error(&self.name, error)
    }

    /// The prepared statement for the SQLite text `sql`, whose PostgreSQL text `text` makes
    /// (once per session).
    fn statement(
        &self,
        sql: &str,
        text: impl FnOnce() -> String,
    ) -> StoreResult<tokio_postgres::Statement> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.ask(async |c| c.prepare(&text()).await)?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// The rows of a query: read ahead, or asked now.
    fn query(
        &self,
        sql: &str,
        args: &[&dyn Arg],
    ) -> StoreResult<std::sync::Arc<Vec<tokio_postgres::Row>>> {
        if let Some(rows) = self.take_ahead(sql, args) {
            return Ok(rows);
        }
        self.query_as(sql, || pg_text(sql), args)
            .map(std::sync::Arc::new)
    }

    /// PostgreSQL's text for the SQLite text `sql`, which `text` makes (once per session).
    fn text(&self, sql: &str, text: impl FnOnce() -> String) -> std::sync::Arc<str> {
        if let Some(known) = self.texts.borrow().get(sql) {
            return known.clone();
        }
        let made: std::sync::Arc<str> = text().into();
        self.texts
            .borrow_mut()
            .insert(sql.to_string(), made.clone());
        made
    }

    /// The arguments with their types, when every one has a type of its own.
    fn typed<'a>(args: &'a [&'a dyn Arg]) -> Option<Vec<(&'a (dyn PgToSql + Sync), Type)>> {
        args.iter()
            .map(|a| a.pg_type().map(|ty| (a.pg(), ty)))
            .collect()
    }

    fn query_as(
        &self,
        sql: &str,
        text: impl FnOnce() -> String,
        args: &[&dyn Arg],
    ) -> StoreResult<Vec<tokio_postgres::Row>> {
        if let Some(typed) = Self::typed(args) {
            let text = self.text(sql, text);
            return self.ask(async |c| c.query_typed(&text, &typed).await);
        }
        let statement = self.statement(sql, text)?;
        let params: Vec<&(dyn PgToSql + Sync)> = args.iter().map(|a| a.pg()).collect();
        self.ask(async |c| c.query(&statement, &params).await)
    }

    fn execute(&self, sql: &str, args: &[&dyn Arg]) -> StoreResult<u64> {
        // What was read ahead may no longer be so.
        self.forget_ahead();
        if let Some(typed) = Self::typed(args) {
            let text = self.text(sql, || pg_text(sql));
            return self.ask(async |c| c.execute_typed(&text, &typed).await);
        }
        let statement = self.statement(sql, || pg_text(sql))?;
        let params: Vec<&(dyn PgToSql + Sync)> = args.iter().map(|a| a.pg()).collect();
        self.ask(async |c| c.execute(&statement, &params).await)
    }
}

/// Where statements run: a SQLite connection inside a transaction, or a PostgreSQL session
/// inside one.
#[derive(Clone, Copy)]
pub(crate) enum Conn<'a> {
    /// SQLite.
    Lite(&'a rusqlite::Connection),
    /// PostgreSQL.
    Pg(&'a PgSession),
}

impl Conn<'_> {
    /// Whether statements run on PostgreSQL.
    pub(crate) fn is_pg(&self) -> bool {
        matches!(self, Self::Pg(_))
    }

    /// Run a statement; the number of rows it changed.
    pub(crate) fn execute(&self, sql: &str, args: &[&dyn Arg]) -> StoreResult<usize> {
        match self {
            Self::Lite(conn) => Ok(conn
                .prepare_cached(sql)?
                .execute(rusqlite::params_from_iter(args.iter().map(|a| a.lite())))?),
            Self::Pg(session) => {
                Ok(usize::try_from(session.execute(sql, args)?).unwrap_or(usize::MAX))
            }
        }
    }

    /// Every row of a query, mapped.
    pub(crate) fn rows<T>(
        &self,
        sql: &str,
        args: &[&dyn Arg],
        mut map: impl FnMut(&Row<'_>) -> StoreResult<T>,
    ) -> StoreResult<Vec<T>> {
        match self {
            Self::Lite(conn) => {
                let mut statement = conn.prepare_cached(sql)?;
                let mut rows =
                    statement.query(rusqlite::params_from_iter(args.iter().map(|a| a.lite())))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    out.push(map(&Row::Lite(row))?);
                }
                Ok(out)
            }
            Self::Pg(session) => session
                .query(sql, args)?
                .iter()
                .map(|row| map(&Row::Pg(row)))
                .collect(),
        }
    }

    /// The first row of a query, mapped; `None` when there is none.
    pub(crate) fn row<T>(
        &self,
        sql: &str,
        args: &[&dyn Arg],
        map: impl FnOnce(&Row<'_>) -> StoreResult<T>,
    ) -> StoreResult<Option<T>> {
        match self {
            Self::Lite(conn) => {
                let mut statement = conn.prepare_cached(sql)?;
                let mut rows =
                    statement.query(rusqlite::params_from_iter(args.iter().map(|a| a.lite())))?;
                match rows.next()? {
                    Some(row) => Ok(Some(map(&Row::Lite(row))?)),
                    None => Ok(None),
                }
            }
            Self::Pg(session) => match session.query(sql, args)?.first() {
                Some(row) => Ok(Some(map(&Row::Pg(row))?)),
                None => Ok(None),
            },
        }
    }

    /// The single value of a query that always answers one row (an aggregate, `EXISTS`).
    pub(crate) fn value<T: Column>(&self, sql: &str, args: &[&dyn Arg]) -> StoreResult<T> {
        self.row(sql, args, |row| row.get(0))?
            .ok_or_else(|| StoreError::internal(format!("`{sql}` answered no row")))
    }
}

/// A statement's text for PostgreSQL: numbered parameters `?N` become `$N`, and SQLite's
/// index hints (`INDEXED BY name`) go (PostgreSQL's planner takes none). Quoted text is left
/// as it is. By hand: no library translates between the two dialects for this small subset.
pub(crate) fn pg_text(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted && chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            _ => out.push(c),
        }
    }
    strip_index_hints(&out)
}

fn strip_index_hints(sql: &str) -> String {
    const HINT: &str = "INDEXED BY ";
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find(HINT) {
        out.push_str(&rest[..at]);
        let after = &rest[at + HINT.len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        rest = after[end..].trim_start();
        out.push(' ');
    }
    out.push_str(rest);
    out
}

/// This machine's clock, in milliseconds since the Unix epoch.
pub(crate) fn system_ms() -> crate::Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

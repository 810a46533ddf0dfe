//! A room on PostgreSQL: its connection, kept and re-made when lost, the workspace's schema
//! in the room's database, created whole, and its transactions (readers on one snapshot,
//! writers one after another on the room's advisory lock).

use std::path::PathBuf;
use std::time::Duration;

use crate::db::PgSession;
use crate::db::system_ms;
use crate::layout::Layout;
use crate::pg::{error, schema};
use crate::seen::{Meta, read_seen, seen_file, write_seen};
use crate::{Millis, StoreError, StoreErrorKind, StoreResult, WorkspaceRecord};

mod probe;

/// The name of a workspace's schema in a room's database: each workspace is a schema of its
/// own, so one database can hold the rooms of several repositories. Workspace ids are portable
/// ids; the schema name is a digest of it (a PostgreSQL identifier is at most 63 bytes).
pub(crate) fn schema_name(workspace_id: &str) -> String {
    format!("acc_{}", &digest(workspace_id)[..24])
}

/// The key of the room's transaction-scoped advisory lock that serialises its writers.
fn lock_key(workspace_id: &str) -> i64 {
    let hex = &digest(workspace_id)[..15];
    i64::from_str_radix(hex, 16).unwrap_or(0)
}

fn digest(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How long a connection attempt may take before the room is called unreachable (hooks run
/// within a budget; `connect_timeout` in the URL wins).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a connection may go without the server acknowledging what was sent to it before
/// it is called dead (`TCP_USER_TIMEOUT`): a link gone dark (a sleeping laptop, a dropped VPN)
/// makes a round trip fail within this, rather than wait for ever.
pub const DEAD_LINK: Duration = Duration::from_secs(6);

/// Dead-link detection on every connection to a room (the kernel's, so a round trip waiting
/// on a live server, such as a writer queued for the room's lock, is never cut short): an
/// unacknowledged send fails after [`DEAD_LINK`], and an idle connection is probed every
/// second after two seconds of silence, failing when the probes go unanswered for as long.
/// Linux; elsewhere only the keepalives apply.
fn dead_link_detection(config: &mut tokio_postgres::Config) {
    config
        .tcp_user_timeout(DEAD_LINK)
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(2))
        .keepalives_interval(Duration::from_secs(1))
        .keepalives_retries(4);
}

/// The most a clock measurement may be off (half its round trip) for it to replace the one a
/// data home recorded.
const CLOCK_UNCERTAINTY_MS: i64 = 250;

/// A room on PostgreSQL, open.
pub(crate) struct Room {
    config: tokio_postgres::Config,
    /// How its connections use TLS.
    tls: crate::tls::Plan,
    session: Option<PgSession>,
    /// `host/db`, for messages.
    name: String,
    workspace_id: String,
    schema: String,
    lock: i64,
    layout: Layout,
    /// The server's clock less this machine's, measured at connection (half the round trip
    /// either way).
    clock_offset_ms: i64,
    /// Round trips of sessions already replaced, and connections made.
    earlier_trips: u64,
    connections: u64,
    /// This data home's record of the room (`seen.rs`), with what it held when the room was
    /// opened; `None` for a room opened without a data home (`acc room connect`'s proof).
    seen: Option<(PathBuf, Option<(Meta, i64)>)>,
    /// The URL the room was opened by (what the record names).
    url: String,
    /// Whether a presence refresh made at once found its session (see `refresh_presence`).
    refreshed: Option<bool>,
    /// The meta this process trusts from the record until its first read's answer brings the
    /// room's own (checked then, before that answer is used); `None` once checked.
    unverified: Option<Meta>,
}

impl Drop for Room {
    /// With `ACC_TEST_ROUND_TRIPS` naming a file, the process's round trips to the server and
    /// its connections are appended to it as `trips connections` (for `acc-bench room`).
    fn drop(&mut self) {
        let Some(file) = std::env::var_os("ACC_TEST_ROUND_TRIPS") else {
            return;
        };
        let line = format!("{} {}\n", self.round_trips(), self.connections);
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    }
}

impl Room {
    /// Round trips so far, over every connection this room made.
    pub(crate) fn round_trips(&self) -> u64 {
        self.earlier_trips + self.session.as_ref().map_or(0, PgSession::round_trips)
    }

    /// What the room is called in messages: its hosts and database, never its password.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Open the room of `workspace` at `url`, creating its schema when the database has none;
    /// `data_dir` keeps this data home's record of it.
    pub(crate) fn open_or_create(
        url: &str,
        workspace: &WorkspaceRecord,
        now: Millis,
        data_dir: Option<&std::path::Path>,
    ) -> StoreResult<Self> {
        let mut room = Self::connect(url, &workspace.workspace_id)?;
        room.seen = data_dir.map(|dir| {
            let file = seen_file(dir, &workspace.workspace_id);
            let held = read_seen(&file, url);
            (file, held)
        });
        let meta = match room.meta()? {
            Some(meta) => meta,
            None => {
                room.create(workspace, now)?;
                room.meta()?.ok_or_else(|| {
                    StoreError::internal(format!("the room at {} was not created", room.name))
                })?
            }
        };
        room.check(&meta)?;
        room.remember(&meta);
        Ok(room)
    }

    /// Open the room of `workspace_id` at `url`; `None` when the database holds none yet.
    /// When this data home (`data_dir`) saw the room before, its record stands in for the
    /// room's meta until the first read brings it, in that read's round trip.
    pub(crate) fn open_existing(
        url: &str,
        workspace_id: &str,
        data_dir: &std::path::Path,
    ) -> StoreResult<Option<Self>> {
        let mut room = Self::connect(url, workspace_id)?;
        let file = seen_file(data_dir, workspace_id);
        let held = read_seen(&file, url);
        room.seen = Some((file, held.clone()));
        if let Some((meta, offset)) = held
            && room.check(&meta).is_ok()
        {
            room.clock_offset_ms = offset;
            room.unverified = Some(meta);
            return Ok(Some(room));
        }
        let Some(meta) = room.meta()? else {
            return Ok(None);
        };
        room.check(&meta)?;
        room.remember(&meta);
        Ok(Some(room))
    }

    fn connect(url: &str, workspace_id: &str) -> StoreResult<Self> {
        let crate::address::Target { mut config, tls } =
            crate::address::target(url, &crate::conninfo::Sources::real())?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("acc");
        dead_link_detection(&mut config);
        // Statements name the workspace's tables unqualified, so its schema comes first; the
        // settings travel in the connection's start-up, costing no round trip.
        let schema = schema_name(workspace_id);
        // The server's side of a dead link: a client that vanishes mid-transaction (a laptop
        // that sleeps while it holds the room's writers' lock) is let go within `DEAD_LINK`
        // rather than when the server's kernel gives up (hours), so the room's other writers,
        // waiting up to `lock_timeout` for that lock, get it. Each is a setting any role may
        // make for its own session (PostgreSQL 12 and later).
        let dead = DEAD_LINK.as_secs();
        let settings = format!(
            "-c search_path={schema} -c lock_timeout={}s -c idle_in_transaction_session_timeout={dead}s -c tcp_user_timeout={} -c tcp_keepalives_idle=2 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=4",
            crate::locks::BUSY_TIMEOUT.as_secs(),
            DEAD_LINK.as_millis()
        );
        let options = match config.get_options() {
            Some(theirs) if !theirs.is_empty() => format!("{theirs} {settings}"),
            _ => settings,
        };
        config.options(options);
        crate::rooms::complete(&mut config);
        let name = room_name(&config);
        let mut room = Self {
            config,
            tls,
            session: None,
            name,
            workspace_id: workspace_id.to_string(),
            schema,
            lock: lock_key(workspace_id),
            clock_offset_ms: 0,
            earlier_trips: 0,
            connections: 0,
            seen: None,
            url: url.to_string(),
            refreshed: None,
            unverified: None,
            layout: Layout {
                revision: 0,
                readable_by: 0,
                changed_by: None,
            },
        };
        room.session()?;
        Ok(room)
    }

    /// A waker listening for this room's notifications on a connection of its own.
    pub(crate) fn waker(&self) -> StoreResult<crate::wake::Waker> {
        crate::wake::Waker::room(
            self.config.clone(),
            self.tls.clone(),
            self.name.clone(),
            self.schema.clone(),
            self.workspace_id.clone(),
        )
    }

    /// The live session, connecting again when the last one was lost (a restarted server).
    fn session(&mut self) -> StoreResult<&PgSession> {
        if self.session.as_ref().is_some_and(PgSession::is_closed) {
            self.earlier_trips += self.session.take().map_or(0, |s| s.round_trips());
        }
        if self.session.is_none() {
            let session = PgSession::connect(&self.config, &self.tls, self.name.clone())?;
            self.connections += 1;
            self.session = Some(session);
        }
        Ok(self.session.as_ref().expect("connected above"))
    }
}

/// The room's records and the server: its meta read and checked, its schema created, its
/// clock and version, and its transactions.
impl Room {
    /// The workspace's `acc_meta`, in one round trip (one statement needs no transaction of
    /// its own), which also measures the server's clock against this machine's (half the round
    /// trip either way; see `clock_offset_ms`); `None` when the database has no room for the
    /// workspace yet.
    fn meta(&mut self) -> StoreResult<Option<std::collections::BTreeMap<String, String>>> {
        let name = self.name.clone();
        let before = system_ms();
        let session = self.session()?;
        let rows = match session.with(async |c| c.query_typed(crate::pg::META, &[]).await) {
            Ok(rows) => rows,
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                self.measure_clock()?;
                return Ok(None);
            }
            Err(e) => return Err(error(&name, &e)),
        };
        let after = system_ms();
        let (meta, server) = meta_of(&rows)?;
        match server {
            Some(server) => self.clock_offset_ms = server - (before + after) / 2,
            None => self.measure_clock()?,
        }
        Ok(Some(meta))
    }

    /// Measure the server's clock against this machine's, in a round trip of its own.
    fn measure_clock(&mut self) -> StoreResult<()> {
        let name = self.name.clone();
        let before = system_ms();
        let session = self.session()?;
        let answers = session
            .with(async |c| c.simple_query(crate::pg::SERVER_CLOCK).await)
            .map_err(|e| error(&name, &e))?;
        let after = system_ms();
        let server = answers.iter().find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0)?.parse::<i64>().ok(),
            _ => None,
        });
        let server = server.ok_or_else(|| {
            StoreError::internal(format!("the room at {name} did not tell its time"))
        })?;
        self.clock_offset_ms = server - (before + after) / 2;
        Ok(())
    }

    /// Create the workspace's schema, its tables and its records in one transaction; writers
    /// that race here take turns on the room's lock, and the later ones find it made.
    fn create(&mut self, workspace: &WorkspaceRecord, now: Millis) -> StoreResult<()> {
        let namespace = self.schema.clone();
        self.transaction(false, |conn| {
            let crate::db::Conn::Pg(session) = conn else {
                return Err(StoreError::internal("a room's transaction on SQLite"));
            };
            let made: bool = conn.value(
                crate::pg::TABLE_EXISTS,
                crate::db::args![format!("{namespace}.acc_meta")],
            )?;
            if made {
                return Ok(());
            }
            let ddl = format!("CREATE SCHEMA IF NOT EXISTS {namespace}; {}", schema());
            session
                .with(async |c| c.batch_execute(&ddl).await)
                .map_err(|e| session.error(&e))?;
            for (key, value) in [
                ("protocol_version", crate::PROTOCOL_VERSION.to_string()),
                ("schema_version", crate::SCHEMA_VERSION.to_string()),
                ("workspace_id", workspace.workspace_id.clone()),
            ]
            .into_iter()
            .chain(crate::layout::recorded_now())
            {
                conn.execute(
                    "INSERT INTO acc_meta(key, value) VALUES (?1, ?2)",
                    crate::db::args![key, value],
                )?;
            }
            conn.execute(
                "INSERT INTO workspace(workspace_id, display_name, root, created_at) VALUES (?1, ?2, ?3, ?4)",
                crate::db::args![workspace.workspace_id, workspace.display_name, workspace.root, now],
            )?;
            Ok(())
        })
    }

    /// Refuse a room of another protocol, schema, layout this build cannot use, or workspace.
    fn check(&mut self, meta: &std::collections::BTreeMap<String, String>) -> StoreResult<()> {
        let place = PathBuf::from(format!("room at {}", self.name));
        let protocol = meta.get("protocol_version").map(String::as_str);
        let schema = meta.get("schema_version").map(String::as_str);
        if protocol != Some(crate::PROTOCOL_VERSION)
            || schema != Some(&crate::SCHEMA_VERSION.to_string())
        {
            return Err(StoreError::new(
                StoreErrorKind::VersionUnsupported,
                format!(
                    "the room at {} is protocol {} schema {}, but this build reads only protocol {} schema {}; nothing was changed",
                    self.name,
                    protocol.unwrap_or("unknown"),
                    schema.unwrap_or("unknown"),
                    crate::PROTOCOL_VERSION,
                    crate::SCHEMA_VERSION
                ),
            ));
        }
        let layout = Layout::from_meta(meta, &place)?;
        layout.check_usable(&place)?;
        self.layout = layout;
        if meta.get("workspace_id") != Some(&self.workspace_id) {
            return Err(StoreError::new(
                StoreErrorKind::Corrupt,
                format!(
                    "the room at {} keeps workspace `{}` in the place of `{}`",
                    self.name,
                    meta.get("workspace_id").map_or("unknown", String::as_str),
                    self.workspace_id
                ),
            ));
        }
        Ok(())
    }

    /// How far the server's clock is ahead of this machine's (behind when negative): leases,
    /// presence and expiry in a room are reckoned on the server's clock, so that machines whose
    /// clocks disagree agree on who holds what.
    pub(crate) fn clock_offset_ms(&self) -> i64 {
        self.clock_offset_ms
    }

    /// The room's layout.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Where the room is, as a layout plan names it.
    fn place(&self) -> PathBuf {
        PathBuf::from(format!("room at {}", self.name))
    }

    /// What upgrading the room would do; `None` when it is at this build's layout or above.
    pub(crate) fn upgrade_plan(&self) -> StoreResult<Option<crate::layout::Plan>> {
        crate::layout::room_plan(&self.place(), self.layout.revision)
    }

    /// Bring the room to this build's layout: every step in one transaction under the room's
    /// writers' lock (another writer that upgraded it first leaves nothing to do), each waiting
    /// at most a second for its table ([`crate::pg::UPGRADE_LOCK_TIMEOUT`]). Every step keeps
    /// older builds working, so it needs no room to itself. `Ok(None)` when there was nothing
    /// to do.
    pub(crate) fn upgrade(&mut self) -> StoreResult<Option<crate::layout::Plan>> {
        let Some(plan) = self.upgrade_plan()? else {
            return Ok(None);
        };
        let done = self.transaction(false, |conn| {
            let recorded: String = conn.value(crate::pg::LAYOUT_REVISION_NOW, &[])?;
            let from = recorded.parse::<i64>().unwrap_or(0);
            if from >= crate::layout::LAYOUT_REVISION {
                return Ok(false);
            }
            let crate::db::Conn::Pg(session) = conn else {
                return Err(StoreError::internal("a room's transaction on SQLite"));
            };
            let mut ddl = vec![crate::pg::UPGRADE_LOCK_TIMEOUT.to_string()];
            ddl.extend(
                crate::layout::room_steps(from)?
                    .iter()
                    .map(|(_, sql)| (*sql).to_string()),
            );
            let ddl = ddl.join("; ");
            session.ask(async |c| c.batch_execute(&ddl).await)?;
            for (key, value) in crate::layout::recorded_now() {
                conn.execute(crate::pg::SET_META, crate::db::args![key, value])?;
            }
            Ok(true)
        });
        let done = done.map_err(|e| {
            StoreError::new(
                e.kind,
                format!(
                    "the upgrade of the room to layout revision {} did not run ({}); nothing was changed, and the room works on its layout revision {} meanwhile",
                    crate::layout::LAYOUT_REVISION,
                    e.message,
                    self.layout.revision
                ),
            )
        })?;
        // The room's meta as it now stands, checked and recorded for the next process.
        if let Some(meta) = self.meta()? {
            self.check(&meta)?;
            self.remember(&meta);
        }
        Ok(done.then_some(plan))
    }

    /// Why a room on PostgreSQL is not taken back to an older layout.
    pub(crate) fn no_downgrade(&self) -> StoreError {
        StoreError::new(
            StoreErrorKind::VersionUnsupported,
            format!(
                "the room at {} is at layout revision {}, which every build from layout revision {} on reads and writes, so a room on PostgreSQL is not taken back to an older layout; nothing was changed",
                self.name, self.layout.revision, self.layout.readable_by
            ),
        )
    }

    /// Run `f` in one transaction: a reader's is `REPEATABLE READ READ ONLY` (one snapshot), a
    /// writer's takes the room's advisory lock in its opening, so the writers of one workspace
    /// follow each other and events get their numbers in commit order. Rolled back when `f`
    /// fails.
    ///
    /// Round trips: the opening travels with the first statement; a reader's `COMMIT` is sent
    /// without waiting for its answer (a read-only transaction has nothing to make durable); a
    /// transaction that ran no statement costs none.
    pub(crate) fn transaction<T, E: From<StoreError>>(
        &mut self,
        read_only: bool,
        f: impl FnOnce(crate::db::Conn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let opening = if read_only {
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY".to_string()
        } else {
            format!("BEGIN; SELECT pg_advisory_xact_lock({})", self.lock)
        };
        // The clock offset the transaction's times were reckoned with (the record's, until
        // the meta read that goes with its first round trip measures it again).
        let reckoned = self.clock_offset_ms;
        let ahead = self.unverified.is_some();
        let session = self.session()?;
        if ahead {
            session.meta_ahead();
        }
        session.open(opening);
        let done = f(crate::db::Conn::Pg(session));
        let unopened = session.unopened();
        let meta = session.meta_answer();
        // The room's own meta came with the first statement: checked before its answer counts.
        if let Some(meta) = meta
            && let Err(e) = self
                .verify(meta)
                .and_then(|()| self.reckoned_well(read_only, reckoned))
        {
            if !unopened && let Some(session) = self.session.as_ref() {
                session.send_unanswered("ROLLBACK");
            }
            return Err(e.into());
        }
        if unopened {
            return done;
        }
        let Some(session) = self.session.as_ref() else {
            return Err(
                StoreError::internal("the room's session went during its transaction").into(),
            );
        };
        match done {
            Ok(value) if read_only => {
                session.send_unanswered("COMMIT");
                Ok(value)
            }
            Ok(value) => {
                session.wake_ahead(&self.schema, &self.workspace_id)?;
                crate::test_hold_write();
                // The writes sent ahead are answered first: a failure among them is the
                // transaction's, and its COMMIT then only ends it.
                session.ask(async |c| c.batch_execute("COMMIT").await)?;
                Ok(value)
            }
            Err(e) => {
                // A lost connection rolls back by itself; a live one is told to (a failed
                // opening, a lock not had in time, leaves the transaction aborted).
                let _ = session.with(async |c| c.batch_execute("ROLLBACK").await);
                Err(e)
            }
        }
    }
}

/// `host[,host...]/dbname` of a configuration, for messages (no user, no password).
fn room_name(config: &tokio_postgres::Config) -> String {
    let hosts = crate::address::host_names(config);
    let port = config
        .get_ports()
        .first()
        .map_or(String::new(), |p| format!(":{p}"));
    format!(
        "{}{port}/{}",
        hosts.join(","),
        config.get_dbname().unwrap_or("")
    )
}

/// The meta records among `rows` of [`crate::pg::META`], and the server's clock they carry
/// (`None` when there were none).
fn meta_of(rows: &[tokio_postgres::Row]) -> StoreResult<(Meta, Option<i64>)> {
    let mut meta = Meta::new();
    let mut server = None;
    for row in rows {
        let row = crate::db::Row::Pg(row);
        meta.insert(row.get(0)?, row.get(1)?);
        server = Some(row.get::<i64>(2)?);
    }
    Ok((meta, server))
}

/// What this data home remembers of the room: its record, kept in step with what was checked.
impl Room {
    /// Whether a write transaction's times, reckoned with the record's clock offset
    /// (`reckoned`) before its first round trip measured it again, stand: refused, to run
    /// again with the new offset, when this machine's clock moved more than half a second
    /// against the server's since the record was written (its leases and times would be off
    /// by that much).
    fn reckoned_well(&self, read_only: bool, reckoned: i64) -> StoreResult<()> {
        let moved = self.clock_offset_ms - reckoned;
        if read_only || moved.abs() <= 500 {
            return Ok(());
        }
        Err(StoreError::new(
            StoreErrorKind::Busy,
            format!(
                "this machine's clock moved {moved} ms against the room's server at {} since this data home last saw it, and this command's times were reckoned before that was known; nothing was changed: run it again",
                self.name
            ),
        ))
    }

    /// Check the meta that came with a round trip (`answer`, with this machine's clock before
    /// and after it).
    fn verify(&mut self, (answer, before, after): crate::db::MetaAnswer) -> StoreResult<()> {
        let rows = match answer {
            Ok(rows) => rows,
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                return self.settle(None);
            }
            Err(e) => return Err(error(&self.name, &e)),
        };
        let (meta, server) = meta_of(&rows)?;
        // The meta went first in a round trip that may have waited for the room's lock behind
        // it (the server read its clock before the wait): the middle of a long round trip says
        // little of when that was, so only a short one measures again; a long one keeps the
        // record's offset (issue 56: a writer queued for seconds behind a cut-off holder was
        // refused for a clock that had not moved).
        if let Some(server) = server
            && after - before <= 2 * CLOCK_UNCERTAINTY_MS
        {
            self.clock_offset_ms = server - (before + after) / 2;
        }
        self.settle(Some(meta))
    }

    /// The room's own meta (`None`: the room holds no records of the workspace) against the
    /// record that stood in for it.
    fn settle(&mut self, meta: Option<Meta>) -> StoreResult<()> {
        let Some(meta) = meta else {
            if let Some((file, _)) = &self.seen {
                let _ = std::fs::remove_file(file);
            }
            return Err(StoreError::new(
                StoreErrorKind::Unavailable,
                format!(
                    "the room at {} holds no records of workspace `{}`, though this data home saw them there before (was the database or its schema dropped?); nothing was changed",
                    self.name, self.workspace_id
                ),
            ));
        };
        if self.unverified.as_ref() != Some(&meta) {
            let used = self.layout.effective();
            self.check(&meta)?;
            // Queries of a lower layout stay right on a room upgraded meanwhile when its
            // steps keep that layout's builds working; otherwise (or on a room whose layout
            // went lower) the command runs again.
            let now = self.layout.effective();
            if now < used || (now > used && crate::layout::readable_by_at(now) > used) {
                self.remember(&meta);
                return Err(StoreError::new(
                    StoreErrorKind::Busy,
                    format!(
                        "the room at {} changed its layout while this command read it; nothing was changed: run it again",
                        self.name
                    ),
                ));
            }
        }
        self.unverified = None;
        self.remember(&meta);
        Ok(())
    }

    /// Record what was checked, when the record says otherwise (its meta, or a clock offset
    /// more than 20 ms away).
    fn remember(&mut self, meta: &Meta) {
        let Some((file, held)) = &mut self.seen else {
            return;
        };
        let same = held
            .as_ref()
            .is_some_and(|(m, offset)| m == meta && (offset - self.clock_offset_ms).abs() <= 20);
        if !same {
            write_seen(file, &self.url, meta, self.clock_offset_ms);
            *held = Some((meta.clone(), self.clock_offset_ms));
        }
    }
}

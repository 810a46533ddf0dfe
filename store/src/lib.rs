//! The durable ACC store: one SQLite file per workspace, outside every repository (the
//! embedded default), or a room on PostgreSQL shared by the workspace's agents on several
//! machines (`room`).
//!
//! Owns: the schema, version checks, pragmas, transactions, and every SQL statement of ACC.
//! Depends on no other ACC crate (a test checks it), so a second backend could implement the
//! same narrow API.
//! Callers (the protocol core) get typed rows and typed operations through [`Reader`] and
//! [`Writer`]; they never see SQL. Must not: decide protocol rules (that is `core`), or hold a
//! write transaction across anything slow (a transport call, a sleep, a prompt).
//!
//! Every mutation runs in `BEGIN IMMEDIATE`, so a conflict check and its write are one atomic
//! step across processes, and appends its events in the same transaction.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};
use serde_json::Value;

mod closed;
mod error;
mod rows;
pub use closed::*;
pub use error::{StoreError, StoreErrorKind, StoreResult};
pub use rows::*;

use locks::*;
pub use locks::{UPGRADE_TURN_WAIT, wal_frames};

/// Milliseconds since the Unix epoch, UTC (the same unit as the core's clock).
pub type Millis = i64;

/// Protocol version of the stores this build writes and accepts.
pub const PROTOCOL_VERSION: &str = "0.2";
/// Store schema version written and accepted by this build.
pub const SCHEMA_VERSION: i64 = 3;

pub(crate) const SCHEMA_SQL: &str = include_str!("schema.sql");
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The store file name inside a workspace's data directory.
pub const STORE_FILE: &str = "store.sqlite3";
/// The record of the workspace a store belongs to.
#[derive(Debug, Clone)]
pub struct WorkspaceRecord {
    /// Portable workspace id.
    pub workspace_id: String,
    /// Display name.
    pub display_name: String,
    /// Canonical root path.
    pub root: String,
}

/// An open SQLite store (the embedded default).
pub(crate) struct Lite {
    conn: Connection,
    path: PathBuf,
    /// The writers' queue beside the store, opened on the first write (see
    /// `Store::queue_for_write`).
    queue: Option<std::fs::File>,
    /// Whether this connection committed a write (see `TRIM_FRAMES`).
    wrote: bool,
    /// `<store>-open`, held shared (`flock`) while this connection is open: how a closing
    /// writer knows it is alone (see `trim_wal`).
    presence: Option<std::fs::File>,
    /// The store's layout ([`layout`]).
    layout: layout::Layout,
    /// Whether the last presence refresh found its session (`Store::presence_refreshed`).
    presence_refreshed: Option<bool>,
    /// Set by a downgrade: this connection never upgrades the store again as it closes.
    keep_layout: bool,
}

impl Drop for Lite {
    /// A connection that wrote starts an overgrown WAL over as it closes (see `trim_wal`);
    /// one that only read never does. A writer that found the store shared at its first write
    /// looks again for the pending layout upgrade as it closes: of writers that overlapped, the
    /// last to close is alone (the others let go of the store for good), so one of them upgrades.
    fn drop(&mut self) {
        if self.wrote {
            if self.layout.revision < layout::LAYOUT_REVISION && !self.keep_layout {
                let _ = self.upgrade_if_alone();
            }
            trim_wal(&self.conn, self.presence.as_ref());
        }
    }
}

/// The directory holding one workspace's store.
pub fn workspace_dir(data_dir: &Path, workspace_id: &str) -> PathBuf {
    data_dir.join("workspaces").join(workspace_id)
}

fn refuse_foreign_files(dir: &Path) -> StoreResult<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".json") {
            return Err(StoreError::new(
                StoreErrorKind::VersionUnsupported,
                format!(
                    "`{}` holds `{name}`, a json store of an earlier acc (protocol 0.1); this build reads only protocol 0.2 stores and never converts or deletes old state",
                    dir.display()
                ),
            ));
        }
    }
    Ok(())
}

fn check_header(path: &Path) -> StoreResult<()> {
    let mut file =
        std::fs::File::open(path).map_err(|e| StoreError::io("open the store", path, &e))?;
    let mut header = [0u8; 16];
    let mut read = 0;
    while read < header.len() {
        let n = file
            .read(&mut header[read..])
            .map_err(|e| StoreError::io("read the store", path, &e))?;
        if n == 0 {
            break;
        }
        read += n;
    }
    if read == 0 {
        return Err(StoreError::new(
            StoreErrorKind::Corrupt,
            format!(
                "`{}` is empty: not an acc store (a truncated store?); acc will not touch it. Move it aside to start afresh, or restore it from a backup",
                path.display()
            ),
        ));
    }
    if read < 16 || &header != SQLITE_MAGIC {
        return Err(StoreError::new(
            StoreErrorKind::Corrupt,
            format!(
                "`{}` is not an acc store (not a sqlite database); acc will not touch it",
                path.display()
            ),
        ));
    }
    Ok(())
}

impl Lite {
    /// Open the store of `workspace` under `data_dir`, creating it when absent.
    ///
    /// A store appears only whole: it is created and initialised in a temporary file beside
    /// its final name, then linked into place (which fails if another process got there
    /// first, whose store is then opened). So an existing file is always either a complete
    /// ACC store or something ACC refuses and leaves untouched: an empty file, a database
    /// without ACC's tables, anything else.
    pub fn open_or_create(
        data_dir: &Path,
        workspace: &WorkspaceRecord,
        now: Millis,
    ) -> StoreResult<Self> {
        let dir = workspace_dir(data_dir, &workspace.workspace_id);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| StoreError::io("create the store directory", &dir, &e))?;
        let path = dir.join(STORE_FILE);
        if !path.exists() {
            refuse_foreign_files(&dir)?;
            create_whole(&dir, &path, workspace, now)?;
        }
        let mut store = Self::open_path(&path)?;
        let Some(meta) = store.meta()? else {
            return Err(store.not_acc_error());
        };
        store.check_version(&meta, &workspace.workspace_id)?;
        store.configure()?;
        Ok(store)
    }

    /// Open an existing store without creating anything; `None` when there is none yet.
    pub fn open_existing(data_dir: &Path, workspace_id: &str) -> StoreResult<Option<Self>> {
        let dir = workspace_dir(data_dir, workspace_id);
        let path = dir.join(STORE_FILE);
        if !path.exists() {
            refuse_foreign_files(&dir)?;
            return Ok(None);
        }
        let mut store = Self::open_path(&path)?;
        let Some(meta) = store.meta()? else {
            return Err(store.not_acc_error());
        };
        store.check_version(&meta, workspace_id)?;
        store.configure()?;
        Ok(Some(store))
    }

    fn open_path(path: &Path) -> StoreResult<Self> {
        check_header(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| {
            let error = StoreError::from(e);
            StoreError::new(
                error.kind,
                format!(
                    "cannot open the store `{}`: {}",
                    path.display(),
                    error.message
                ),
            )
        })?;
        conn.busy_handler(Some(wait_for_lock))?;
        // Every statement is prepared once per connection: room for all the store runs (those on
        // record in tests/golden/store/plans.json, under a hundred, some in a form per layout),
        // so a long-lived connection (`acc-mcp`) never prepares one twice; rusqlite keeps 16,
        // least recently used first out.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // The query planner's stability guarantee: a statement's plan never depends on the
        // values bound to it. Without it, SQLite (3.50, bundled) reads a `LIMIT ?N` bound at
        // prepare time as a constant and marks the statement to be prepared again whenever that
        // parameter is bound again, so every cached statement with a `LIMIT ?` was parsed and
        // planned anew on each run: two thirds of `acc_status`'s instructions (issue 55;
        // docs/benchmarks.md). The store keeps no `sqlite_stat4` samples, so no plan is lost.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        sql_log::attach(&conn);
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            queue: None,
            wrote: false,
            presence: None,
            layout: layout::Layout {
                revision: 0,
                readable_by: 0,
                changed_by: None,
            },
            presence_refreshed: None,
            keep_layout: false,
        })
    }

    fn configure(&mut self) -> StoreResult<()> {
        let mode = self.switch_to_wal()?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::internal(format!(
                "the store refused wal journaling (mode {mode})"
            )));
        }
        self.conn
            .execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")?;
        // The WAL file stays between processes: every `acc` is one short process, and the last
        // one to close would otherwise checkpoint the WAL into the database (fsyncs) and delete
        // it, for the next process to create again. Commits stay durable (each one is fsynced in
        // the WAL); SQLite's automatic checkpoint at commit (1,000 pages) moves the WAL into the
        // database as it grows, and `journal_size_limit` trims the file after one.
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        self.conn
            .pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        self.conn.wal_hook(Some(on_wal_commit));
        self.presence = hold_presence(&self.path);
        Ok(())
    }

    /// Switch the store to WAL journaling (a no-op once it is): a store still in rollback mode
    /// (just created, or copied as one file) that another process is switching at the same
    /// moment answers `SQLITE_BUSY` at once, without the busy handler (the change needs an
    /// exclusive lock, and waiting could deadlock), so the switch is retried, bounded by
    /// [`BUSY_TIMEOUT`]. The journal mode it reports.
    fn switch_to_wal(&self) -> StoreResult<String> {
        let end = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            {
                Err(rusqlite::Error::SqliteFailure(failure, _))
                    if failure.code == rusqlite::ErrorCode::DatabaseBusy
                        && std::time::Instant::now() < end =>
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                other => return Ok(other?),
            }
        }
    }

    /// The `acc_meta` table, read in one statement; `None` when there is none (a sqlite
    /// database that is not ACC's).
    fn meta(&self) -> StoreResult<Option<std::collections::BTreeMap<String, String>>> {
        match read_meta(&self.conn) {
            Err(error) if error.message.contains("no such table") => Ok(None),
            other => other.map(Some),
        }
    }

    fn not_acc_error(&self) -> StoreError {
        StoreError::new(
            StoreErrorKind::Corrupt,
            format!(
                "`{}` is a sqlite database but not an acc store; acc will not touch it",
                self.path.display()
            ),
        )
    }

    fn check_version(
        &mut self,
        meta_map: &std::collections::BTreeMap<String, String>,
        workspace_id: &str,
    ) -> StoreResult<()> {
        let meta = |key: &str| -> StoreResult<Option<String>> { Ok(meta_map.get(key).cloned()) };
        let protocol = meta("protocol_version")?;
        let schema = meta("schema_version")?;
        if protocol.as_deref() != Some(PROTOCOL_VERSION)
            || schema.as_deref() != Some(&SCHEMA_VERSION.to_string())
        {
            return Err(StoreError::new(
                StoreErrorKind::VersionUnsupported,
                format!(
                    "the store `{}` is protocol {} schema {}, but this build reads only protocol {} schema {}; acc never converts or deletes a store (move it aside to start afresh)",
                    self.path.display(),
                    protocol.as_deref().unwrap_or("unknown"),
                    schema.as_deref().unwrap_or("unknown"),
                    PROTOCOL_VERSION,
                    SCHEMA_VERSION
                ),
            ));
        }
        let layout = layout::Layout::from_meta(meta_map, &self.path)?;
        layout.check_usable(&self.path)?;
        self.layout = layout;
        let recorded = meta("workspace_id")?;
        if recorded.as_deref() != Some(workspace_id) {
            return Err(StoreError::new(
                StoreErrorKind::Corrupt,
                format!(
                    "the store `{}` belongs to workspace `{}`, not `{workspace_id}`",
                    self.path.display(),
                    recorded.as_deref().unwrap_or("unknown")
                ),
            ));
        }
        Ok(())
    }

    /// The first write-open's automatic upgrade: when this build's layout revision is newer,
    /// upgrades run automatically here, and no other connection (in any process) has the store
    /// open, run [`Store::upgrade`]. The plan it carried out, if it did. A failure (a backup that
    /// cannot be written) leaves the store as it was, on its older layout.
    ///
    /// Processes that reach their first write at once take turns (an `flock` on
    /// `<store>-upgrade`, waited for at most [`UPGRADE_TURN_WAIT`]) and let go of their own hold
    /// on `<store>-open` while they wait: so of several writers that open an old store at once,
    /// the first to its turn is alone and upgrades, and the others find it done. A reader that
    /// holds the store open meanwhile keeps it from being alone: nobody upgrades then.
    pub fn upgrade_if_alone(&mut self) -> Option<layout::Plan> {
        if self.layout.revision >= layout::LAYOUT_REVISION || !layout::automatic_upgrades() {
            return None;
        }
        // Our own shared hold would keep us from being alone: let it go for the look.
        let held = self.presence.take().is_some();
        let upgraded = wait_for_upgrade_turn(&self.path).and_then(|turn| {
            // Another writer may have upgraded it while we waited.
            if let Ok(meta) = read_meta(&self.conn)
                && let Ok(layout) = layout::Layout::from_meta(&meta, &self.path)
            {
                self.layout = layout;
            }
            let done = hold_alone(&self.path).and_then(|alone| {
                let done = self.upgrade().ok().flatten();
                drop(alone);
                done
            });
            drop(turn);
            done
        });
        if held {
            self.presence = hold_presence(&self.path);
        }
        if let Some(plan) = &upgraded {
            layout::record_automatic(plan.clone());
        }
        upgraded
    }

    /// Run `f` in a `BEGIN IMMEDIATE` transaction; commit when it returns `Ok`.
    pub(crate) fn write<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let turn = queue_for_write(&self.path, &mut self.queue)?;
        let value = {
            let tx = CachedTx::begin(&self.conn, "BEGIN IMMEDIATE").map_err(StoreError::from)?;
            let mut writer = Writer {
                conn: db::Conn::Lite(&self.conn),
                layout: self.layout.effective(),
            };
            let value = f(&mut writer)?;
            test_hold_write();
            tx.commit().map_err(StoreError::from)?;
            value
        };
        drop(turn);
        // The followers' wake (`wake`): the writers' queue's time moves once the commit is
        // visible. A follower that misses it reads at its safety re-read anyway.
        if let Some(queue) = &self.queue {
            let _ = queue.set_modified(std::time::SystemTime::now());
        }
        self.wrote = true;
        Ok(value)
    }

    /// Run `f` in a read transaction (one consistent snapshot).
    pub(crate) fn read<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&Reader<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let tx = CachedTx::begin(&self.conn, "BEGIN DEFERRED").map_err(StoreError::from)?;
        let value = f(&Reader {
            conn: db::Conn::Lite(&self.conn),
            layout: self.layout.effective(),
        })?;
        tx.commit().map_err(StoreError::from)?;
        Ok(value)
    }

    /// `PRAGMA integrity_check`, for doctor and tests.
    pub(crate) fn integrity_check(&self) -> StoreResult<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}

/// Fault injection for crash tests: with `ACC_TEST_HOLD_WRITE_MS` set, a write transaction
/// sleeps after its statements and before its commit, so a test can kill the process there.
pub(crate) fn test_hold_write() {
    if let Some(ms) = std::env::var("ACC_TEST_HOLD_WRITE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// Read access inside a transaction.
pub struct Reader<'a> {
    conn: db::Conn<'a>,
    /// The layout revision whose queries run here ([`layout::Layout::effective`]).
    layout: i64,
}

/// How many prepared statements a connection keeps (see `open_path`).
const STATEMENT_CACHE: usize = 128;

/// A transaction opened and committed through the connection's cached statements, rolled back
/// when dropped still open (a closure's error, a failed `COMMIT`), as rusqlite's `Transaction`
/// is. Written here because rusqlite's parses `BEGIN` and `COMMIT` afresh every time (about 4% of
/// a send's time in user space under `perf`, and a hook's reads pay it too).
struct CachedTx<'c> {
    conn: &'c Connection,
}

impl<'c> CachedTx<'c> {
    fn begin(conn: &'c Connection, begin: &str) -> rusqlite::Result<Self> {
        conn.prepare_cached(begin)?.execute([])?;
        Ok(Self { conn })
    }

    /// Commit; a `COMMIT` that fails leaves the transaction open, and the drop rolls it back.
    fn commit(self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([]).map(drop)
    }
}

impl Drop for CachedTx<'_> {
    fn drop(&mut self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Write access inside a `BEGIN IMMEDIATE` transaction.
pub struct Writer<'a> {
    conn: db::Conn<'a>,
    layout: i64,
}

impl Reader<'_> {
    /// Whether the store keeps each session's pid scope ([`SessionRow::pid_scope`]): a store
    /// below layout revision 4 does not, and reads it as `None`.
    pub fn records_pid_scope(&self) -> bool {
        self.layout >= layout::PID_SCOPE_LAYOUT
    }
}

impl Writer<'_> {
    /// Read access within this same transaction.
    pub fn reader(&self) -> Reader<'_> {
        Reader {
            conn: self.conn,
            layout: self.layout,
        }
    }
}

/// `acc_meta`, read in one statement.
fn read_meta(conn: &Connection) -> StoreResult<std::collections::BTreeMap<String, String>> {
    let mut statement = conn.prepare_cached("SELECT key, value FROM acc_meta")?;
    let rows = statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn json_text(value: &Value) -> String {
    // Not `value.to_string()`: `Display` writes through the formatter a token at a time, several
    // times slower for the same compact text. A `Value` always serialises (its keys are strings).
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// A JSON column read back: text that does not parse as what the store wrote is damage
/// (`StoreErrorKind::Corrupt` through the conversion failure), never a silent default.
fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::new(
            StoreErrorKind::Corrupt,
            format!("the store holds a value acc cannot read: {e}"),
        )
    })
}

mod address;
mod backend;
mod bindings;
mod claims;
pub mod conninfo;
mod db;
pub mod layout;
mod locks;
mod messages;
mod ops;
mod pg;
mod push;
mod room;
mod rooms;
mod seen;
mod sql_log;
mod tls;
mod view_reads;
pub mod wake;
pub use backend::Store;
pub use view_reads::{FirstReads, SecondReads};

/// The claims that may overlap a resource, as [`Reader::claims_matching`] asks for them: exact
/// resources, and `[low, high)` ranges of resources.
pub type OverlapCandidates = (Vec<String>, Vec<(String, String)>);

/// What `acc room show`, `acc status` and `acc doctor` say of a room's server and connection.
#[derive(Debug, Clone)]
pub struct RoomProbe {
    /// The server's version.
    pub server_version: String,
    /// One round trip (the median of three `SELECT 1`).
    pub round_trip: std::time::Duration,
    /// Whether the connection is TLS.
    pub encrypted: bool,
    /// Whether every host is a Unix socket or loopback (plain text never crosses a network).
    pub local: bool,
    /// The TLS mode, in libpq's spelling.
    pub ssl_mode: &'static str,
    /// How the connection travels, in words.
    pub transport: String,
}

impl RoomProbe {
    /// The warning every surface gives when the room's traffic crosses a network in plain
    /// text (the user asked for it with `sslmode=disable`, or `allow`/`prefer` found a server
    /// without TLS); `None` otherwise.
    pub fn plain_text_warning(&self) -> Option<String> {
        (!self.encrypted && !self.local).then(|| {
            format!(
                "the room is not encrypted: its messages, claims and logins cross the network in plain text, readable by anyone on the path (sslmode={}); use sslmode=verify-full with the server's CA (sslrootcert=FILE) or the system's roots",
                self.ssl_mode
            )
        })
    }
}
pub use messages::HistoryFilter;
pub use push::{PUSHED_TABLES, Pushed};
pub use room::DEAD_LINK;
pub use rooms::{
    ROOM_ENV, ROOM_FILE, RoomSource, check_url, connect_default_room, connect_room,
    disconnect_room, password_file, password_file_warning, room_choice, room_url,
};

#[cfg(test)]
mod tests;

/// Create the store at `path` whole: a temporary file in `dir` gets the schema, the version
/// marks and the workspace row in one transaction, is closed, and is then linked to `path`.
/// Linking fails when `path` exists (another process created it meanwhile: its store is the
/// one opened); the temporary file is removed either way.
fn create_whole(
    dir: &Path,
    path: &Path,
    workspace: &WorkspaceRecord,
    now: Millis,
) -> StoreResult<()> {
    let temp = dir.join(format!(".{STORE_FILE}.{}.creating", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let created =
        initialise(&temp, workspace, now).and_then(|()| match std::fs::hard_link(&temp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(StoreError::io("create the store", path, &e)),
        });
    let _ = std::fs::remove_file(&temp);
    created
}

/// A new store in the (new) file `path`, in rollback-journal mode so that the closed file is
/// complete by itself; WAL is switched on when the store is opened under its final name.
fn initialise(path: &Path, workspace: &WorkspaceRecord, now: Millis) -> StoreResult<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| StoreError::io("create the store", path, &e))?;
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    sql_log::attach(&conn);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(SCHEMA_SQL)?;
    tx.execute(
        "INSERT INTO acc_meta(key, value) VALUES ('protocol_version', ?1), ('schema_version', ?2), ('workspace_id', ?3)",
        params![PROTOCOL_VERSION, SCHEMA_VERSION.to_string(), workspace.workspace_id],
    )?;
    // `schema.sql` is the layout of this build's revision.
    layout::record_created(&tx)?;
    tx.execute(
        "INSERT INTO workspace(workspace_id, display_name, root, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![workspace.workspace_id, workspace.display_name, workspace.root, now],
    )?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    conn.close().map_err(|(_, e)| StoreError::from(e))?;
    // The file's bytes reach the disk before its name does.
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| StoreError::io("sync the new store", path, &e))
}

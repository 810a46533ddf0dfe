//! The durable ACC store: one SQLite file per workspace, outside every repository.
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

/// Milliseconds since the Unix epoch, UTC (the same unit as the core's clock).
pub type Millis = i64;

/// Protocol version of the stores this build writes and accepts.
pub const PROTOCOL_VERSION: &str = "0.2";
/// Store schema version written and accepted by this build.
pub const SCHEMA_VERSION: i64 = 3;

const SCHEMA_SQL: &str = include_str!("schema.sql");
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The store file name inside a workspace's data directory.
pub const STORE_FILE: &str = "store.sqlite3";
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
thread_local! {
    /// When this thread's connection began waiting for SQLite's lock.
    static WAITING_SINCE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// SQLite's busy handler (by hand: rusqlite offers only SQLite's own, whose sleeps grow to
/// 100 ms each). Writers of this build rarely get here (they queue first, see
/// `Store::queue_for_write`); a checkpoint, another build's writer or a reader of a recovering
/// WAL can still hold SQLite's lock. It retries after a short sleep (0.1 ms, doubling to 2 ms)
/// and gives up after [`BUSY_TIMEOUT`] (`busy`).
fn wait_for_lock(attempt: i32) -> bool {
    let now = std::time::Instant::now();
    let since = WAITING_SINCE.with(|since| {
        if attempt == 0 || since.get().is_none() {
            since.set(Some(now));
        }
        since.get().unwrap_or(now)
    });
    if now.duration_since(since) >= BUSY_TIMEOUT {
        WAITING_SINCE.with(|since| since.set(None));
        return false;
    }
    let step = 100u64 << attempt.clamp(0, 4);
    std::thread::sleep(Duration::from_micros(step.min(2000)));
    true
}

/// Wait for this process's turn to write: an exclusive `flock` on the queue file beside the
/// store, held until the transaction ends (the returned [`Turn`] releases it when dropped,
/// as does the process's exit).
///
/// Why a queue in front of SQLite's own lock: SQLite's waiters poll, so while many processes
/// wait the lock sits idle between their sleeps and the unlucky ones wait again and again
/// (32 agents: write p99 150 ms, maximum 330 ms in `acc-bench swarm`). Blocked on `flock`,
/// a waiter is woken by the kernel the moment the lock is released (p99 43 ms, maximum
/// 61 ms, and half again the throughput, since nobody burns CPU polling). SQLite's lock
/// stays the guard of correctness; the queue only orders the writers that use it.
///
/// The wait is bounded by [`BUSY_TIMEOUT`]: uncontended, one `try_lock` on the store's queue
/// file; contended, the store's waiter thread (started on the first contention and kept while
/// the store is open) blocks on the lock while this one waits for it with a deadline. Past the
/// deadline the write is refused as `busy`, and a lock the waiter obtains later is released at
/// once.
fn queue_for_write<'a>(
    store: &Path,
    queue: &'a mut Option<std::fs::File>,
    waiter: &mut Option<std::sync::mpsc::Sender<LockJob>>,
) -> StoreResult<Turn<'a>> {
    let path = PathBuf::from(format!("{}-writers", store.display()));
    if queue.is_none() {
        let opened = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| StoreError::io("open the writers' queue", &path, &e))?;
        *queue = Some(opened);
    }
    let Some(queue) = queue.as_ref() else {
        return Err(StoreError::internal("the writers' queue is not open"));
    };
    match queue.try_lock() {
        Ok(()) => return Ok(Turn::Held(queue)),
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(StoreError::io("lock the writers' queue", &path, &e));
        }
    }
    // Contended: the store's waiter thread blocks on a file of its own (a lock belongs to an
    // open file) and hands it back locked. Past the deadline nobody takes it: the file is
    // dropped, unlocked, wherever it is then (in the thread or in the channel).
    let file = OpenOptions::new()
        .append(true)
        .open(&path)
        .map_err(|e| StoreError::io("open the writers' queue", &path, &e))?;
    let (reply, turn) = std::sync::mpsc::channel();
    let job = LockJob { file, reply };
    let job = match waiter {
        Some(running) => match running.send(job) {
            Ok(()) => return wait_for_turn(store, &path, &turn),
            // The thread is gone (it cannot fail, but then): start another.
            Err(std::sync::mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (jobs, queued) = std::sync::mpsc::channel::<LockJob>();
    std::thread::Builder::new()
        .name("acc-store-queue".into())
        .spawn(move || {
            for LockJob { file, reply } in queued {
                let _ = reply.send(file.lock().map(|()| file));
            }
        })
        .map_err(|e| StoreError::io("start the writers' queue", &path, &e))?;
    let _ = jobs.send(job);
    *waiter = Some(jobs);
    wait_for_turn(store, &path, &turn)
}

/// A file to lock on the store's waiter thread, and where to hand it back locked.
struct LockJob {
    file: std::fs::File,
    reply: std::sync::mpsc::Sender<std::io::Result<std::fs::File>>,
}

/// The locked file from the waiter thread, within [`BUSY_TIMEOUT`].
fn wait_for_turn<'a>(
    store: &Path,
    path: &Path,
    turn: &std::sync::mpsc::Receiver<std::io::Result<std::fs::File>>,
) -> StoreResult<Turn<'a>> {
    match turn.recv_timeout(BUSY_TIMEOUT) {
        Ok(Ok(file)) => Ok(Turn::Waited(file)),
        Ok(Err(e)) => Err(StoreError::io("lock the writers' queue", path, &e)),
        Err(_) => Err(StoreError::new(
            StoreErrorKind::Busy,
            format!(
                "another process kept the store `{}` locked for more than {} s",
                store.display(),
                BUSY_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// A writer's turn: the queue's lock, released when dropped.
enum Turn<'a> {
    /// Taken at once on the store's own queue file.
    Held(&'a std::fs::File),
    /// Waited for on a file of its own (closing it releases the lock).
    Waited(#[allow(dead_code)] std::fs::File),
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Self::Held(file) = self {
            // An unlock that fails leaves the lock to the file's close (the store's drop) or
            // the process's exit: nothing waits on it for longer.
            let _ = file.unlock();
        }
    }
}

/// The size the WAL file is trimmed to after a checkpoint (bytes).
const WAL_SIZE_LIMIT: i64 = 4 * 1024 * 1024;

/// Frames in the WAL after this process's latest commit, as SQLite's WAL hook reports them.
static WAL_FRAMES: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// Frames (pages) in the WAL after this process's latest commit (benchmarks count the pages a
/// write adds with it).
pub fn wal_frames() -> i32 {
    WAL_FRAMES.load(std::sync::atomic::Ordering::Relaxed)
}

/// SQLite's automatic checkpoint threshold (its default), kept by the WAL hook that replaces it.
const AUTOCHECKPOINT_FRAMES: i32 = 1000;
/// WAL frames (about 512 KiB) above which a connection that wrote empties the WAL as it closes.
///
/// Why: the WAL stays between processes (see `Store::configure`), and a process that opens the
/// store when no other has it open rebuilds the WAL index by reading and checksumming every
/// valid frame. That rebuild also forgets what was already checkpointed, so SQLite never
/// restarts the WAL from its beginning across short processes: left alone, the WAL grows
/// without bound (22 MB after 500 `acc` commands) and every `acc` start reads all of it (a hook
/// that took 2 ms took 9). Emptying it (a `TRUNCATE` checkpoint: the frames into the database,
/// fsynced, then the WAL cut to nothing) when a writer closes bounds that read to about
/// 512 KiB. While another process has the store open (an `acc-mcp`, say) the index stays
/// alive, SQLite's own checkpoints restart the WAL as usual, and nobody trims.
const TRIM_FRAMES: i32 = 128;

/// SQLite's WAL hook: records the frame count, and checkpoints at SQLite's usual threshold (a
/// failed checkpoint is harmless: the commit is already durable in the WAL).
fn on_wal_commit(wal: &rusqlite::hooks::Wal, frames: std::ffi::c_int) -> rusqlite::Result<()> {
    WAL_FRAMES.store(frames, std::sync::atomic::Ordering::Relaxed);
    if frames >= AUTOCHECKPOINT_FRAMES {
        let _ = wal.checkpoint();
    }
    Ok(())
}

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

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The writers' queue beside the store, opened on the first write (see
    /// `Store::queue_for_write`).
    queue: Option<std::fs::File>,
    /// The thread that waits for the queue when it is contended (see `queue_for_write`).
    waiter: Option<std::sync::mpsc::Sender<LockJob>>,
    /// Whether this connection committed a write (see `TRIM_FRAMES`).
    wrote: bool,
    /// `<store>-open`, held shared (`flock`) while this connection is open: how a closing
    /// writer knows it is alone (see `trim_wal`).
    presence: Option<std::fs::File>,
    /// The store's layout ([`layout`]).
    layout: layout::Layout,
    /// Set by a downgrade: this connection never upgrades the store again as it closes.
    keep_layout: bool,
}

impl Drop for Store {
    /// A connection that wrote empties an overgrown WAL as it closes (see `TRIM_FRAMES`);
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

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
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

impl Store {
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
        sql_log::attach(&conn);
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            queue: None,
            waiter: None,
            wrote: false,
            presence: None,
            layout: layout::Layout {
                revision: 0,
                readable_by: 0,
                changed_by: None,
            },
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

    /// Path of the store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run `f` in a `BEGIN IMMEDIATE` transaction; commit when it returns `Ok`.
    /// The closure's error type is the caller's (a protocol rule it checks is not a store
    /// error); store failures convert into it.
    pub fn write<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let _turn = queue_for_write(&self.path, &mut self.queue, &mut self.waiter)?;
        let value = {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(StoreError::from)?;
            let mut writer = Writer {
                tx,
                layout: self.layout.effective(),
            };
            let value = f(&mut writer)?;
            test_hold_write();
            writer.tx.commit().map_err(StoreError::from)?;
            value
        };
        self.wrote = true;
        Ok(value)
    }

    /// Run `f` in a read transaction (one consistent snapshot).
    pub fn read<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&Reader<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(StoreError::from)?;
        let value = f(&Reader {
            conn: &tx,
            layout: self.layout.effective(),
        })?;
        tx.commit().map_err(StoreError::from)?;
        Ok(value)
    }

    /// `PRAGMA integrity_check`, for doctor and tests.
    pub fn integrity_check(&self) -> StoreResult<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}

/// When the WAL has grown past `TRIM_FRAMES` and no other connection has the store open,
/// checkpoint it into the database and cut it to nothing. Never waits: a reader inside the WAL
/// or a writer makes it give up at once (the next writer to close tries again).
fn trim_wal(conn: &Connection, presence: Option<&std::fs::File>) {
    if WAL_FRAMES.load(std::sync::atomic::Ordering::Relaxed) < TRIM_FRAMES {
        return;
    }
    // Alone only if this connection's shared hold on the presence file becomes exclusive.
    // Another connection's hold keeps the WAL index alive, so SQLite's own checkpoints restart
    // the WAL as usual. Without the file (it could not be opened) the trim runs: always safe.
    if let Some(presence) = presence
        && presence.try_lock().is_err()
    {
        return;
    }
    if conn.busy_handler(None).is_err() {
        return;
    }
    let busy: rusqlite::Result<i64> =
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0));
    if busy == Ok(0) {
        WAL_FRAMES.store(0, std::sync::atomic::Ordering::Relaxed);
    }
    let _ = conn.busy_handler(Some(wait_for_lock));
}

/// Opens `<store>-open` (created 0600 beside the store if missing) and holds it shared for as
/// long as the connection lives. `flock` holds belong to one opening of the file, so any other
/// connection, in this process or another, keeps a closing writer from holding it alone.
/// `None` when it cannot be opened or held (a closing writer then trims regardless).
fn hold_presence(store: &Path) -> Option<std::fs::File> {
    let file = open_presence(store)?;
    file.try_lock_shared().ok()?;
    Some(file)
}

/// `<store>-open`, opened (created 0600 if missing), not yet held.
fn open_presence(store: &Path) -> Option<std::fs::File> {
    open_beside(store, "-open")
}

/// The lock file `<store><suffix>`, opened (created 0600 if missing).
fn open_beside(store: &Path, suffix: &str) -> Option<std::fs::File> {
    let mut path = store.as_os_str().to_owned();
    path.push(suffix);
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(PathBuf::from(path))
        .ok()
}

/// Fault injection for crash tests: with `ACC_TEST_HOLD_WRITE_MS` set, a write transaction
/// sleeps after its statements and before its commit, so a test can kill the process there.
fn test_hold_write() {
    if let Some(ms) = std::env::var("ACC_TEST_HOLD_WRITE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// Read access inside a transaction.
pub struct Reader<'a> {
    conn: &'a Connection,
    /// The layout revision whose queries run here ([`layout::Layout::effective`]).
    layout: i64,
}

/// Write access inside a `BEGIN IMMEDIATE` transaction.
pub struct Writer<'a> {
    tx: rusqlite::Transaction<'a>,
    layout: i64,
}

impl Writer<'_> {
    /// Read access within this same transaction.
    pub fn reader(&self) -> Reader<'_> {
        Reader {
            conn: &self.tx,
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

/// How long a writer waits for its turn to look for a layout upgrade.
pub const UPGRADE_TURN_WAIT: Duration = Duration::from_secs(3);

/// `<store>-upgrade` held exclusively, waited for (polling) at most [`UPGRADE_TURN_WAIT`].
fn wait_for_upgrade_turn(store: &Path) -> Option<std::fs::File> {
    let file = open_beside(store, "-upgrade")?;
    let end = std::time::Instant::now() + UPGRADE_TURN_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => return None,
        }
    }
}

/// `<store>-open` held exclusively: only when no other connection, in any process, has the
/// store open (each holds it shared). Released when dropped.
fn hold_alone(store: &Path) -> Option<std::fs::File> {
    let file = open_presence(store)?;
    file.try_lock().ok()?;
    Some(file)
}

fn json_text(value: &Value) -> String {
    value.to_string()
}

/// A JSON column read back: text that does not parse as what the store wrote is damage
/// (`StoreErrorKind::Corrupt` through the conversion failure), never a silent default.
fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> rusqlite::Result<T> {
    serde_json::from_str(text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

mod bindings;
pub mod layout;
mod messages;
mod ops;
mod sql_log;
pub use messages::HistoryFilter;

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

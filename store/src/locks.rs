//! The locks and the WAL around the store file: the writers' queue (`<store>-write`), the
//! presence hold (`<store>-open`, shared by every connection, so a writer can tell it is
//! alone), the turn to look for a layout upgrade (`<store>-upgrade`), SQLite's busy handler, and
//! the WAL's size.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::error::{StoreError, StoreErrorKind, StoreResult};

pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
thread_local! {
    /// When this thread's connection began waiting for SQLite's lock.
    static WAITING_SINCE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// SQLite's busy handler (by hand: rusqlite offers only SQLite's own, whose sleeps grow to
/// 100 ms each). Writers of this build rarely get here (they queue first, see
/// `Store::queue_for_write`); a checkpoint, another build's writer or a reader of a recovering
/// WAL can still hold SQLite's lock. It retries after a short sleep (0.1 ms, doubling to 2 ms)
/// and gives up after [`BUSY_TIMEOUT`] (`busy`).
pub(crate) fn wait_for_lock(attempt: i32) -> bool {
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
pub(crate) fn queue_for_write<'a>(
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
pub(crate) struct LockJob {
    file: std::fs::File,
    reply: std::sync::mpsc::Sender<std::io::Result<std::fs::File>>,
}

/// The locked file from the waiter thread, within [`BUSY_TIMEOUT`].
pub(crate) fn wait_for_turn<'a>(
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
pub(crate) enum Turn<'a> {
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
pub(crate) const WAL_SIZE_LIMIT: i64 = 4 * 1024 * 1024;

/// Frames in the WAL after this process's latest commit, as SQLite's WAL hook reports them.
pub(crate) static WAL_FRAMES: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// Frames (pages) in the WAL after this process's latest commit (benchmarks count the pages a
/// write adds with it).
pub fn wal_frames() -> i32 {
    WAL_FRAMES.load(std::sync::atomic::Ordering::Relaxed)
}

/// SQLite's automatic checkpoint threshold (its default), kept by the WAL hook that replaces it.
pub(crate) const AUTOCHECKPOINT_FRAMES: i32 = 1000;
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
pub(crate) const TRIM_FRAMES: i32 = 128;

/// SQLite's WAL hook: records the frame count, and checkpoints at SQLite's usual threshold (a
/// failed checkpoint is harmless: the commit is already durable in the WAL).
pub(crate) fn on_wal_commit(
    wal: &rusqlite::hooks::Wal,
    frames: std::ffi::c_int,
) -> rusqlite::Result<()> {
    WAL_FRAMES.store(frames, std::sync::atomic::Ordering::Relaxed);
    if frames >= AUTOCHECKPOINT_FRAMES {
        let _ = wal.checkpoint();
    }
    Ok(())
}

/// When the WAL has grown past `TRIM_FRAMES` and no other connection has the store open,
/// checkpoint it into the database and cut it to nothing. Never waits: a reader inside the WAL
/// or a writer makes it give up at once (the next writer to close tries again).
pub(crate) fn trim_wal(conn: &Connection, presence: Option<&std::fs::File>) {
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
pub(crate) fn hold_presence(store: &Path) -> Option<std::fs::File> {
    let file = open_presence(store)?;
    file.try_lock_shared().ok()?;
    Some(file)
}

/// `<store>-open`, opened (created 0600 if missing), not yet held.
pub(crate) fn open_presence(store: &Path) -> Option<std::fs::File> {
    open_beside(store, "-open")
}

/// The lock file `<store><suffix>`, opened (created 0600 if missing).
pub(crate) fn open_beside(store: &Path, suffix: &str) -> Option<std::fs::File> {
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

/// How long a writer waits for its turn to look for a layout upgrade.
pub const UPGRADE_TURN_WAIT: Duration = Duration::from_secs(3);

/// `<store>-upgrade` held exclusively, waited for (polling) at most [`UPGRADE_TURN_WAIT`].
pub(crate) fn wait_for_upgrade_turn(store: &Path) -> Option<std::fs::File> {
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
pub(crate) fn hold_alone(store: &Path) -> Option<std::fs::File> {
    let file = open_presence(store)?;
    file.try_lock().ok()?;
    Some(file)
}

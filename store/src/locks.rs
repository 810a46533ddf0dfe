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
/// file; contended, a blocking `flock` on this thread that a timer interrupts at the deadline
/// ([`lock_within`]). Past the deadline the write is refused as `busy`.
pub(crate) fn queue_for_write<'a>(
    store: &Path,
    queue: &'a mut Option<std::fs::File>,
) -> StoreResult<Turn<'a>> {
    let path = writers_queue(store);
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
    match lock_within(queue, BUSY_TIMEOUT) {
        Ok(Some(held)) => Ok(Turn::Waited(held)),
        Ok(None) => Err(StoreError::new(
            StoreErrorKind::Busy,
            format!(
                "another process kept the store `{}` locked for more than {} s",
                store.display(),
                BUSY_TIMEOUT.as_secs()
            ),
        )),
        Err(e) => Err(StoreError::io("lock the writers' queue", &path, &e)),
    }
}

/// The writers' queue beside the store file `store`.
pub(crate) fn writers_queue(store: &Path) -> PathBuf {
    PathBuf::from(format!("{}-writers", store.display()))
}

/// An exclusive `flock` on `file` (through a duplicate of its descriptor, which shares the
/// lock), waited for on this thread for at most `timeout`; `None` past it.
///
/// Why by hand: `flock` has no timed form, and neither std nor nix waits for one with a
/// deadline. The queue's waits used to block on a thread of their own that handed the lock
/// back over a channel: each hand-off of the queue between processes then woke two threads,
/// one after the other, while the whole queue waited (on this 2-core machine, durable sends
/// from 4 processes ran about a tenth faster without that second wake-up;
/// `docs/benchmarks.md`). Here the waiting thread blocks itself, and a POSIX timer aimed at
/// it (`timer_create` with `SIGEV_THREAD_ID`) sends it `SIGURG` at the deadline, and again
/// every 50 ms after (in case the first came just before the wait began). The handler does
/// nothing and is installed without `SA_RESTART`, so the signal ends the blocked `flock` with
/// `EINTR`. Where that cannot be arranged (another handler already owns `SIGURG`, the thread
/// blocks it, or no timer can be made), the wait polls `try_lock` instead, as SQLite's own
/// waiters do.
pub(crate) fn lock_within(
    file: &std::fs::File,
    timeout: Duration,
) -> std::io::Result<Option<nix::fcntl::Flock<std::fs::File>>> {
    use nix::errno::Errno;
    use nix::fcntl::{Flock, FlockArg};
    let deadline = std::time::Instant::now() + timeout;
    let timer = interrupt_at(timeout);
    // Blocking when the timer can end the wait; else `try_lock` after short sleeps (0.1 ms,
    // doubling to 2 ms).
    let how = match timer {
        Some(_) => FlockArg::LockExclusive,
        None => FlockArg::LockExclusiveNonblock,
    };
    let mut step = Duration::from_micros(100);
    let mut copy = file.try_clone()?;
    loop {
        match Flock::lock(copy, how) {
            Ok(held) => return Ok(Some(held)),
            Err((back, Errno::EINTR | Errno::EWOULDBLOCK)) => {
                if std::time::Instant::now() >= deadline {
                    return Ok(None);
                }
                if timer.is_none() {
                    std::thread::sleep(step);
                    step = (step * 2).min(Duration::from_millis(2));
                }
                copy = back;
            }
            Err((_, errno)) => return Err(errno.into()),
        }
    }
}

/// The timer that interrupts this thread's wait at `after` (and every 50 ms past it), deleted
/// when dropped; `None` when the wait cannot be interrupted that way.
fn interrupt_at(after: Duration) -> Option<nix::sys::timer::Timer> {
    use nix::sys::signal::{SigEvent, SigSet, SigevNotify, Signal};
    use nix::sys::timer::{Expiration, Timer, TimerSetTimeFlags};
    if !interrupt_handler_installed() {
        return None;
    }
    if SigSet::thread_get_mask().map_or(true, |mask| mask.contains(Signal::SIGURG)) {
        return None;
    }
    let notify = SigevNotify::SigevThreadId {
        signal: Signal::SIGURG,
        thread_id: nix::unistd::gettid().as_raw(),
        si_value: 0,
    };
    let mut timer = Timer::new(nix::time::ClockId::CLOCK_MONOTONIC, SigEvent::new(notify)).ok()?;
    let again = Duration::from_millis(50);
    // A zero expiry would disarm the timer and leave the wait unbounded.
    let after = after.max(Duration::from_millis(1));
    timer
        .set(
            Expiration::IntervalDelayed(after.into(), again.into()),
            TimerSetTimeFlags::empty(),
        )
        .ok()?;
    Some(timer)
}

/// Whether this process's `SIGURG` handler is ACC's do-nothing one (installed on first use,
/// unless the process already handles `SIGURG` itself: then its handler is put back).
fn interrupt_handler_installed() -> bool {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    extern "C" fn interrupt(_: std::ffi::c_int) {}
    *INSTALLED.get_or_init(|| {
        let ours = SigAction::new(
            SigHandler::Handler(interrupt),
            SaFlags::empty(),
            SigSet::empty(),
        );
        // SAFETY: the handler does nothing (so it is async-signal-safe), and a handler the
        // process had already installed is put back at once, untouched.
        #[allow(unsafe_code)]
        let Ok(before) = (unsafe { sigaction(Signal::SIGURG, &ours) }) else {
            return false;
        };
        match before.handler() {
            SigHandler::SigDfl | SigHandler::SigIgn => true,
            _ => {
                // SAFETY: as above; this restores what the process had.
                #[allow(unsafe_code)]
                let _ = unsafe { sigaction(Signal::SIGURG, &before) };
                false
            }
        }
    })
}

/// A writer's turn: the queue's lock, released when dropped.
pub(crate) enum Turn<'a> {
    /// Taken at once on the store's own queue file.
    Held(&'a std::fs::File),
    /// Waited for on a duplicate of its descriptor (dropping it unlocks).
    Waited(#[allow(dead_code)] nix::fcntl::Flock<std::fs::File>),
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
/// WAL frames (about 512 KiB) above which a connection that wrote starts the WAL over as it
/// closes.
///
/// Why: the WAL stays between processes (see `Store::configure`), and a process that opens the
/// store when no other has it open rebuilds the WAL index by reading and checksumming every
/// valid frame. That rebuild also forgets what was already checkpointed, so SQLite never
/// restarts the WAL from its beginning across short processes: left alone, the WAL grows
/// without bound (22 MB after 500 `acc` commands) and every `acc` start reads all of it (a hook
/// that took 2 ms took 9). Starting it over when a writer closes (see [`trim_wal`]) bounds that
/// read to about 512 KiB. While another process has the store open (an `acc-mcp`, say) the
/// index stays alive, SQLite's own checkpoints restart the WAL as usual, and nobody trims.
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

/// When the WAL has grown past `TRIM_FRAMES` and no other connection has the store open, start
/// it over: a `RESTART` checkpoint copies every frame into the database (fsynced) and leaves
/// no reader in the WAL, then one small write (`schema_version` changed and put back: one page) makes
/// SQLite begin the WAL again at its first frame under a new salt, so the frames before it no
/// longer count, for the rebuild at the next open either.
///
/// Not a `TRUNCATE` checkpoint, which cut the file to nothing: every writer after it then
/// extended the WAL again, and a commit that extends a file must also sync its new size, which
/// doubles a one-page commit on ext4 (docs/benchmarks.md, "Ninth pass"). Started over, the WAL
/// keeps its blocks (at most `WAL_SIZE_LIMIT`, which SQLite trims it to at a restart) and the
/// commits after it write over them.
///
/// Never waits: a reader inside the WAL or a writer makes it give up at once (the next writer
/// to close tries again). Should the small write fail after the checkpoint, every frame is
/// already in the database; the next open reads them again, as before any trim.
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
        conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get(0));
    if busy == Ok(0) {
        // SQLite leaves a page alone when a row is written back unchanged, so the value is
        // changed and put back: one page written, the same bytes in it.
        let started_over = conn.execute_batch(
            "BEGIN IMMEDIATE;
             UPDATE acc_meta SET value = value || ' ' WHERE key = 'schema_version';
             UPDATE acc_meta SET value = substr(value, 1, length(value) - 1) WHERE key = 'schema_version';
             COMMIT",
        );
        if started_over.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
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

/// `<store>-upgrade` held exclusively (released when dropped), waited for at most
/// [`UPGRADE_TURN_WAIT`].
pub(crate) fn wait_for_upgrade_turn(store: &Path) -> Option<nix::fcntl::Flock<std::fs::File>> {
    let file = open_beside(store, "-upgrade")?;
    lock_within(&file, UPGRADE_TURN_WAIT).ok().flatten()
}

/// `<store>-open` held exclusively: only when no other connection, in any process, has the
/// store open (each holds it shared). Released when dropped.
pub(crate) fn hold_alone(store: &Path) -> Option<std::fs::File> {
    let file = open_presence(store)?;
    file.try_lock().ok()?;
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A queue file, and another opening of it (a lock belongs to an opening, so the two
    /// stand for two processes).
    fn two_openings() -> (tempfile::TempDir, std::fs::File, std::fs::File) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.sqlite3-writers");
        let open = || {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .expect("open")
        };
        let (a, b) = (open(), open());
        (dir, a, b)
    }

    /// Held by another opening that never lets go, the wait gives up at its bound, whether it
    /// blocks (the timer interrupts it) or polls (this thread blocks the timer's signal).
    #[test]
    fn a_wait_for_a_lock_nobody_releases_ends_at_its_bound() {
        assert!(
            interrupt_handler_installed(),
            "the test process has no SIGURG handler of its own"
        );
        for signal_blocked in [false, true] {
            let (_dir, holder, waiter) = two_openings();
            holder.lock().expect("hold");
            let waited = std::thread::spawn(move || {
                if signal_blocked {
                    let mut urg = nix::sys::signal::SigSet::empty();
                    urg.add(nix::sys::signal::Signal::SIGURG);
                    urg.thread_block().expect("block SIGURG");
                }
                let started = Instant::now();
                let got = lock_within(&waiter, Duration::from_millis(300)).expect("wait");
                let waited = started.elapsed();
                let at_once = lock_within(&waiter, Duration::ZERO).expect("wait");
                assert!(at_once.is_none(), "a zero bound gives up");
                (got.is_some(), waited)
            })
            .join()
            .expect("waiter");
            assert!(
                !waited.0,
                "signal blocked {signal_blocked}: got a held lock"
            );
            assert!(
                waited.1 >= Duration::from_millis(300) && waited.1 < Duration::from_secs(5),
                "signal blocked {signal_blocked}: waited {:?}",
                waited.1
            );
        }
    }

    /// A process that handles `SIGURG` itself keeps its handler, and its writers still wait
    /// within the bound (by polling). Run in a child process of this test binary, since the
    /// handler is the whole process's.
    #[test]
    fn a_process_that_handles_sigurg_itself_keeps_it_and_still_waits_within_the_bound() {
        const NAME: &str = "locks::tests::a_process_that_handles_sigurg_itself_keeps_it_and_still_waits_within_the_bound";
        static THEIRS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        extern "C" fn theirs(_: std::ffi::c_int) {
            THEIRS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        if std::env::var_os("ACC_TEST_FOREIGN_SIGURG").is_none() {
            let child = std::process::Command::new(std::env::current_exe().expect("test binary"))
                .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
                .env("ACC_TEST_FOREIGN_SIGURG", "1")
                .output()
                .expect("run the child");
            let out = String::from_utf8_lossy(&child.stdout);
            assert!(
                child.status.success() && out.contains("1 passed"),
                "{out}\n{}",
                String::from_utf8_lossy(&child.stderr)
            );
            return;
        }
        use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, raise, sigaction};
        let action = SigAction::new(
            SigHandler::Handler(theirs),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        // SAFETY: the handler only increments an atomic.
        #[allow(unsafe_code)]
        unsafe { sigaction(Signal::SIGURG, &action) }.expect("install the process's handler");
        assert!(!interrupt_handler_installed(), "ACC's handler stays out");
        let (_dir, holder, waiter) = two_openings();
        holder.lock().expect("hold");
        let started = Instant::now();
        let got = lock_within(&waiter, Duration::from_millis(300)).expect("wait");
        let waited = started.elapsed();
        assert!(got.is_none(), "got a held lock");
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_secs(5),
            "waited {waited:?}"
        );
        raise(Signal::SIGURG).expect("raise");
        assert_eq!(
            THEIRS.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the process's own handler still runs"
        );
    }

    /// A lock let go while another waits is taken by the waiter, long before its bound; and
    /// dropping the turn lets go of it again.
    #[test]
    fn a_released_lock_goes_to_the_waiter_at_once() {
        let (_dir, holder, waiter) = two_openings();
        holder.lock().expect("hold");
        let (ready, waiting) = std::sync::mpsc::channel();
        let taken = std::thread::spawn(move || {
            ready.send(()).expect("ready");
            let started = Instant::now();
            let got = lock_within(&waiter, Duration::from_secs(30)).expect("wait");
            (got, started.elapsed())
        });
        waiting.recv().expect("the waiter started");
        std::thread::sleep(Duration::from_millis(100));
        holder.unlock().expect("let go");
        let (got, waited) = taken.join().expect("waiter");
        assert!(got.is_some(), "the waiter got the lock");
        assert!(waited < Duration::from_secs(10), "waited {waited:?}");
        assert!(holder.try_lock().is_err(), "the waiter holds it");
        drop(got);
        holder
            .try_lock()
            .expect("free again once the turn is dropped");
    }

    /// Eight threads, each on its own opening, take turns 50 times each: every turn is
    /// exclusive, and none is refused.
    #[test]
    fn racing_waiters_each_get_exclusive_turns() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = dir.path().join("store.sqlite3");
        let inside = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let store = store.clone();
                let inside = inside.clone();
                std::thread::spawn(move || {
                    let mut queue = None;
                    for _ in 0..50 {
                        let turn =
                            queue_for_write(&store, &mut queue).expect("a turn within the bound");
                        let others = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        assert_eq!(others, 0, "two writers at once");
                        std::thread::yield_now();
                        inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                        drop(turn);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("worker");
        }
    }
}

//! Waking a store's followers (issue 57): `acc sync --follow`, `acc watch`, `acc inbox --wait`
//! and `acc_inbox`'s `waitMs` sleep until the store moves, rather than asking it over and over.
//!
//! A [`Waker`] counts the moves it has seen; a follower takes the count ([`Waker::mark`]), reads
//! from its cursor, then waits for the count to pass the mark ([`Waker::wait_past`]), so a move
//! between its read and its wait is never missed. A wake carries nothing a follower trusts: it
//! only says "read again from your cursor".
//!
//! - **A room** (PostgreSQL): each write transaction that appends events sends a notification
//!   on the workspace's channel (its schema's name) with its commit, carrying the workspace and
//!   the newest event's number ([`payload`]). The waker listens on a connection of its own, on a
//!   thread of its own. A notification is never replayed to a listener that was away, so every
//!   (re)connection counts as a move: the follower reads from its cursor before waiting again.
//!   A connection that is lost (a dead link is found within `room::DEAD_LINK` by the same
//!   keepalives as every room connection) is made again, a second after the first failure and
//!   up to [`RECONNECT_AT_MOST`] apart.
//! - **Behind a transaction-pooling proxy** (PgBouncer's `pool_mode = transaction`), `LISTEN`
//!   is accepted but nothing is delivered. The listener sends itself a probe notification right
//!   after `LISTEN`; when it does not come back within [`PROBE_WAIT`], the waker falls back to a
//!   move every [`POLL_FALLBACK`], and says so ([`Waker::how`]).
//! - **The SQLite file** on this machine: each writer moves the time of the writers' queue
//!   beside the file (`<store>-writers`) once its commit is visible, which the kernel reports
//!   through inotify (the `notify` crate), so a follower sleeps until a write. (Not the
//!   write-ahead log's own writes: a commit's frames are written before readers can see it, and
//!   a follower woken by them could read too early and then sleep past the commit.)

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::{StoreError, StoreResult};

/// How long the listener waits for its own probe notification before it concludes that a
/// transaction-pooling proxy stands between it and the server.
pub const PROBE_WAIT: Duration = Duration::from_secs(2);
/// How often followers read behind a proxy that never delivers notifications.
pub const POLL_FALLBACK: Duration = Duration::from_secs(2);
/// The longest pause between attempts to connect the listener again.
pub const RECONNECT_AT_MOST: Duration = Duration::from_secs(5);

/// The notification's payload: the workspace and the newest event's number.
pub(crate) fn payload(workspace: &str, cursor: i64) -> String {
    format!("{workspace} {cursor}")
}

/// How a waker learns of moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// Still connecting, or probing the connection.
    Starting,
    /// Woken by the room's notifications, or the file's changes.
    Listening,
    /// Behind a proxy that delivers no notifications: a move every [`POLL_FALLBACK`]. Why.
    Polling(String),
    /// The listener's connection is lost and being made again. Why.
    Lost(String),
}

impl How {
    /// The line a follower says once about it: only the fallback to reading on a timer (a lost
    /// connection is said by the follower's own failing read, and mended by itself); `None`
    /// otherwise.
    pub fn note(&self) -> Option<String> {
        match self {
            Self::Polling(why) => Some(format!(
                "{why}; followers read the room every {} s instead",
                POLL_FALLBACK.as_secs()
            )),
            Self::Starting | Self::Listening | Self::Lost(_) => None,
        }
    }
}

#[derive(Debug)]
struct State {
    moves: u64,
    how: How,
    stop: bool,
}

/// What a waker and its listener share.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    moved: Condvar,
    /// Wakes the room's listener when the waker is dropped.
    stop: tokio::sync::Notify,
}

impl Shared {
    fn new(how: How) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                moves: 0,
                how,
                stop: false,
            }),
            moved: Condvar::new(),
            stop: tokio::sync::Notify::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves counts that are still counts.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Count a move (and, with `how`, say how moves are now learnt).
    fn bump(&self, how: Option<How>) {
        let mut state = self.state();
        state.moves += 1;
        if let Some(how) = how {
            state.how = how;
        }
        drop(state);
        self.moved.notify_all();
    }

    fn stopped(&self) -> bool {
        self.state().stop
    }
}

/// A follower's wake: see the module's documentation.
pub struct Waker {
    shared: Arc<Shared>,
    /// The SQLite file's watch, kept as long as the waker.
    _watch: Option<notify::RecommendedWatcher>,
}

impl std::fmt::Debug for Waker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waker").field("how", &self.how()).finish()
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        self.shared.state().stop = true;
        self.shared.moved.notify_all();
        self.shared.stop.notify_one();
    }
}

impl Waker {
    /// The moves seen so far: take it before reading, then [`Self::wait_past`] it.
    pub fn mark(&self) -> u64 {
        self.shared.state().moves
    }

    /// Wait until a move after `mark`, or `timeout`: whether the store moved.
    pub fn wait_past(&self, mark: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state();
        while state.moves <= mark {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self
                .shared
                .moved
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// How moves are learnt now.
    pub fn how(&self) -> How {
        self.shared.state().how.clone()
    }

    /// Wait until the waker has settled how it learns of moves (its listener connected and
    /// probed, or given up), at most `timeout`; then how.
    pub fn settled(&self, timeout: Duration) -> How {
        let deadline = Instant::now() + timeout;
        loop {
            let mark = self.mark();
            let how = self.how();
            if how != How::Starting {
                return how;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !self.wait_past(mark, left) {
                return self.how();
            }
        }
    }

    /// A waker on the SQLite file at `path`: its directory is watched, and a change of its
    /// writers' queue is a move.
    pub(crate) fn file(path: &std::path::Path) -> StoreResult<Self> {
        use notify::Watcher;
        let shared = Shared::new(How::Listening);
        let queue = crate::locks::writers_queue(path);
        let dir = path
            .parent()
            .ok_or_else(|| StoreError::internal("the store file has no directory"))?
            .to_path_buf();
        let woken = Arc::downgrade(&shared);
        let mut watch = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            let written = matches!(event.kind, notify::EventKind::Modify(_));
            if written
                && event.paths.contains(&queue)
                && let Some(shared) = woken.upgrade()
            {
                shared.bump(None);
            }
        })
        .map_err(|e| StoreError::internal(format!("no watch on the store's folder: {e}")))?;
        watch
            .watch(&dir, notify::RecursiveMode::NonRecursive)
            .map_err(|e| StoreError::internal(format!("no watch on {}: {e}", dir.display())))?;
        Ok(Self {
            shared,
            _watch: Some(watch),
        })
    }

    /// A waker on the room at `config`/`tls` (called `name` in messages), listening on
    /// `channel` for the notifications of `workspace`.
    pub(crate) fn room(
        config: tokio_postgres::Config,
        tls: crate::tls::Plan,
        name: String,
        channel: String,
        workspace: String,
    ) -> StoreResult<Self> {
        let shared = Shared::new(How::Starting);
        let listener = Listener {
            shared: shared.clone(),
            config,
            tls,
            name,
            channel,
            workspace,
        };
        std::thread::Builder::new()
            .name("acc-wake".into())
            .spawn(move || listener.run())
            .map_err(|e| StoreError::internal(format!("no thread for the room's wake: {e}")))?;
        Ok(Self {
            shared,
            _watch: None,
        })
    }
}

/// The room's listener, on a thread of its own.
struct Listener {
    shared: Arc<Shared>,
    config: tokio_postgres::Config,
    tls: crate::tls::Plan,
    name: String,
    channel: String,
    workspace: String,
}

/// Why a listening connection ended.
enum Ended {
    /// The waker was dropped.
    Stopped,
    /// The connection failed or could not be made: why.
    Lost(String),
    /// Notifications do not come back: why.
    Pooled(String),
}

impl Listener {
    fn run(self) {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            self.shared
                .bump(Some(How::Lost("no runtime for the room's wake".into())));
            return;
        };
        runtime.block_on(async {
            let mut pause = Duration::from_secs(1);
            loop {
                match self.listen().await {
                    Ended::Stopped => return,
                    Ended::Pooled(why) => {
                        self.shared.bump(Some(How::Polling(why)));
                        loop {
                            if self.pause(POLL_FALLBACK).await {
                                return;
                            }
                            self.shared.bump(None);
                        }
                    }
                    Ended::Lost(why) => {
                        let was_listening = self.shared.state().how == How::Listening;
                        self.shared.bump(Some(How::Lost(why)));
                        if was_listening {
                            pause = Duration::from_secs(1);
                        }
                    }
                }
                if self.pause(pause).await {
                    return;
                }
                pause = (pause * 2).min(RECONNECT_AT_MOST);
            }
        });
    }

    /// Sleep `pause`, or less when the waker is dropped: whether it was.
    async fn pause(&self, pause: Duration) -> bool {
        if self.shared.stopped() {
            return true;
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => self.shared.stopped(),
            () = self.shared.stop.notified() => true,
        }
    }

    /// One connection: `LISTEN`, the probe, then a move for each notification of the
    /// workspace, until the connection ends or the waker is dropped.
    async fn listen(&self) -> Ended {
        let (client, mut connection, _) =
            match crate::db::dial(&self.config, &self.tls, &self.name).await {
                Ok(dialled) => dialled,
                Err(e) => return Ended::Lost(e.message),
            };
        let (heard, mut hearing) = tokio::sync::mpsc::unbounded_channel();
        let name = self.name.clone();
        // The connection is driven here: its notifications are passed on, and its end is
        // the task's answer.
        let mut driven = tokio::spawn(async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                        let _ = heard.send(n.payload().to_string());
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return crate::pg::error(&name, &e).message,
                    None => return "the server closed the connection".to_string(),
                }
            }
        });
        let probe = format!("probe {}", std::process::id());
        let listening = format!(
            "LISTEN \"{}\"; SELECT pg_notify('{}', '{probe}')",
            self.channel, self.channel
        );
        let asked = tokio::select! {
            asked = client.batch_execute(&listening) => asked,
            why = &mut driven => return Ended::Lost(why.unwrap_or_default()),
            () = self.shared.stop.notified() => return Ended::Stopped,
        };
        if let Err(e) = asked {
            return Ended::Lost(crate::pg::error(&self.name, &e).message);
        }
        let deadline = tokio::time::sleep(PROBE_WAIT);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                payload = hearing.recv() => match payload {
                    Some(p) if p == probe => break,
                    Some(_) => {}
                    None => return Ended::Lost((&mut driven).await.unwrap_or_default()),
                },
                () = &mut deadline => return Ended::Pooled(format!(
                    "the room at {} delivers no notifications (a transaction-pooling proxy such as PgBouncer's pool_mode=transaction?)",
                    self.name
                )),
                () = self.shared.stop.notified() => return Ended::Stopped,
            }
        }
        // Listening: whatever was missed while not listening is read from the cursor.
        self.shared.bump(Some(How::Listening));
        let ours = format!("{} ", self.workspace);
        loop {
            tokio::select! {
                payload = hearing.recv() => match payload {
                    Some(p) if p.starts_with(&ours) => self.shared.bump(None),
                    Some(_) => {}
                    None => return Ended::Lost((&mut driven).await.unwrap_or_default()),
                },
                why = &mut driven => return Ended::Lost(why.unwrap_or_default()),
                () = self.shared.stop.notified() => return Ended::Stopped,
            }
        }
    }
}

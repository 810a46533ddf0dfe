//! Layout revisions: a store's indexes, derived tables and bookkeeping, below the record schema.
//!
//! The record schema stays 3 (protocol 0.2). A store whose `acc_meta` names no
//! `layout_revision` has revision 0, the layout ACC wrote up to commit 99cb396 (the fixture
//! under `tests/fixtures/stores/`). Each later revision is one [`Step`] from the one before, in
//! one transaction, after a backup made through SQLite's online backup API. A step declares the
//! oldest revision whose builds can still use a store upgraded by it (`readable_by`): an added
//! index keeps every earlier build working, a changed derived table would not. A build opening a
//! store of a higher revision than its own uses it when the store's `layout_readable_by` allows,
//! and refuses it otherwise, naming the revision and the version that upgraded it.

use std::path::{Path, PathBuf};

use rusqlite::params;

use crate::{StoreError, StoreErrorKind, StoreResult};

/// The layout revision this build writes.
pub const LAYOUT_REVISION: i64 = 5;

/// The first layout revision whose sessions record their pid's scope (`pid_scope`).
pub const PID_SCOPE_LAYOUT: i64 = 4;

/// One step from the revision before `to` to `to`.
#[derive(Debug)]
pub struct Step {
    /// The revision it reaches.
    pub to: i64,
    /// What it changes, for people.
    pub summary: &'static str,
    /// The SQL run in the upgrade's transaction.
    up: &'static str,
    /// The SQL that takes the store back to the revision before, when the step only added
    /// what can be dropped without losing anything (an index); `None` otherwise.
    down: Option<&'static str>,
    /// The step on a room on PostgreSQL (one transaction there too). `None` for the steps
    /// below revision 3: a room is created at revision 3 or later, so none ever runs them.
    pg_up: Option<&'static str>,
    /// The oldest layout revision whose builds still read and write a store at `to`.
    pub readable_by: i64,
}

/// SQL that rebuilds `receipts` with the same columns and rows, keyed as `$options` says
/// (`", WITHOUT ROWID"` or nothing), with its partial indexes and `$extra` (more index DDL).
/// One text for both directions of a rebuild, so the two can never drift apart.
macro_rules! rebuild_receipts {
    ($options:literal, $extra:literal) => {
        concat!(
            "CREATE TABLE receipts_rebuilt (
                message_seq INTEGER NOT NULL REFERENCES messages(seq),
                participant_id TEXT NOT NULL,
                state TEXT NOT NULL,
                updated_at INTEGER NOT NULL,
                extensions TEXT NOT NULL DEFAULT '{}',
                obligation TEXT NOT NULL,
                addressed INTEGER NOT NULL,
                PRIMARY KEY (message_seq, participant_id)
            ) STRICT",
            $options,
            ";
            INSERT INTO receipts_rebuilt(message_seq, participant_id, state, updated_at, extensions, obligation, addressed)
                SELECT message_seq, participant_id, state, updated_at, extensions, obligation, addressed FROM receipts;
            DROP TABLE receipts;
            ALTER TABLE receipts_rebuilt RENAME TO receipts;
            CREATE INDEX receipts_unresolved ON receipts(participant_id, message_seq) WHERE state != 'acknowledged';
            CREATE INDEX receipts_owed ON receipts(obligation, message_seq) WHERE state != 'acknowledged' AND obligation != 'none';
            CREATE INDEX receipts_queued ON receipts(participant_id, message_seq) WHERE state = 'queued';",
            $extra
        )
    };
}

/// The receipts table of revision 2: keyed by its primary key alone (`WITHOUT ROWID`), so a
/// receipt is written into one B-tree rather than a table and its key index.
const RECEIPTS_KEYED: &str = rebuild_receipts!(", WITHOUT ROWID", "");

/// Revision 2 taken back: the receipts table of revision 1, with its rowid and
/// `receipts_waiting` (nothing is lost either way).
const RECEIPTS_ROWID: &str = rebuild_receipts!(
    "",
    "CREATE INDEX receipts_waiting ON receipts(participant_id, message_seq) WHERE state = 'queued' AND addressed = 1;"
);

/// Every step, in order.
pub const STEPS: &[Step] = &[
    Step {
        to: 1,
        summary: "index the queued receipts, so the prompt hook's \"newest queued for me\" is a range read however many offers wait unacknowledged",
        up: "CREATE INDEX IF NOT EXISTS receipts_queued ON receipts(participant_id, message_seq) WHERE state = 'queued';",
        down: Some("DROP INDEX IF EXISTS receipts_queued;"),
        pg_up: None,
        readable_by: 0,
    },
    Step {
        to: 2,
        summary: "keep receipts in their primary key alone (WITHOUT ROWID) and drop receipts_waiting, which receipts_queued serves: two B-tree pages fewer per receipt written",
        up: RECEIPTS_KEYED,
        down: Some(RECEIPTS_ROWID),
        pg_up: None,
        readable_by: 0,
    },
    Step {
        to: 3,
        summary: "index the open sessions, so every send, route and status lists them as a range read however many closed sessions the room has kept",
        up: "CREATE INDEX IF NOT EXISTS sessions_open ON sessions(participant_id, opened_at, session_id) WHERE closed_at IS NULL;",
        down: Some("DROP INDEX IF EXISTS sessions_open;"),
        pg_up: None,
        readable_by: 0,
    },
    Step {
        to: 4,
        summary: "record where each session's pid means something (pid_scope: the boot and pid namespace), so a room shared across machines never tests another machine's pid here",
        up: "ALTER TABLE sessions ADD COLUMN pid_scope TEXT;",
        down: Some("ALTER TABLE sessions DROP COLUMN pid_scope;"),
        pg_up: Some("ALTER TABLE sessions ADD COLUMN IF NOT EXISTS pid_scope TEXT COLLATE \"C\""),
        readable_by: 0,
    },
    Step {
        to: 5,
        summary: "drop messages_by_thread, which no query reads (no build lists a thread): one or two B-tree pages fewer per message written, since a new thread's id is random",
        up: "DROP INDEX IF EXISTS messages_by_thread;",
        down: Some(MESSAGES_BY_THREAD),
        pg_up: Some("DROP INDEX IF EXISTS messages_by_thread"),
        readable_by: 0,
    },
];

/// The index revision 5 drops, as revisions 0 to 4 have it.
const MESSAGES_BY_THREAD: &str =
    "CREATE INDEX IF NOT EXISTS messages_by_thread ON messages(thread_id, seq);";

/// A room on PostgreSQL's steps from `from` to this build's revision, each with its SQL there.
/// A room below revision 3 cannot be (no build ever created one).
pub(crate) fn room_steps(from: i64) -> StoreResult<Vec<(&'static Step, &'static str)>> {
    STEPS
        .iter()
        .filter(|s| s.to > from)
        .map(|s| {
            s.pg_up.map(|sql| (s, sql)).ok_or_else(|| {
                StoreError::new(
                    StoreErrorKind::VersionUnsupported,
                    format!(
                        "a room on PostgreSQL at layout revision {from} has no step to revision {} ({}); nothing was changed",
                        s.to, s.summary
                    ),
                )
            })
        })
        .collect()
}

/// What upgrading the room `place` from `from` would do (`None` when it is at this build's
/// revision or above). A room's steps lose nothing (no backup: the server's own backups keep
/// the records, and every step keeps older builds working).
pub(crate) fn room_plan(place: &Path, from: i64) -> StoreResult<Option<Plan>> {
    if from >= LAYOUT_REVISION {
        return Ok(None);
    }
    Ok(Some(Plan {
        store: place.to_path_buf(),
        from,
        to: LAYOUT_REVISION,
        steps: room_steps(from)?
            .iter()
            .map(|(s, _)| format!("{} → {}: {}", s.to - 1, s.to, s.summary))
            .collect(),
        backup: None,
        rows: 0,
        estimate_ms: 0,
    }))
}

/// The `acc_meta` rows recording this build's layout, as `(key, value)`.
pub(crate) fn recorded_now() -> [(&'static str, String); 3] {
    [
        ("layout_revision", LAYOUT_REVISION.to_string()),
        (
            "layout_readable_by",
            readable_by_at(LAYOUT_REVISION).to_string(),
        ),
        (
            "layout_changed_by",
            format!("acc {}", env!("CARGO_PKG_VERSION")),
        ),
    ]
}

/// A store's layout, as its `acc_meta` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Its revision (0 when none is recorded).
    pub revision: i64,
    /// The oldest revision whose builds can use it.
    pub readable_by: i64,
    /// The ACC version that last changed it, when one did.
    pub changed_by: Option<String>,
}

impl Layout {
    /// The layout recorded in `meta`.
    pub(crate) fn from_meta(
        meta: &std::collections::BTreeMap<String, String>,
        path: &Path,
    ) -> StoreResult<Self> {
        let number = |key: &str| -> StoreResult<Option<i64>> {
            meta.get(key)
                .map(|v| {
                    v.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
                        StoreError::new(
                            StoreErrorKind::Corrupt,
                            format!(
                                "the store `{}` records {key} `{v}`, which is not a revision",
                                path.display()
                            ),
                        )
                    })
                })
                .transpose()
        };
        let revision = number("layout_revision")?.unwrap_or(0);
        Ok(Self {
            revision,
            readable_by: number("layout_readable_by")?.unwrap_or(revision),
            changed_by: meta.get("layout_changed_by").cloned(),
        })
    }

    /// Refuse a store this build cannot use (a higher revision that does not admit it).
    pub(crate) fn check_usable(&self, path: &Path) -> StoreResult<()> {
        if self.revision <= LAYOUT_REVISION || self.readable_by <= LAYOUT_REVISION {
            return Ok(());
        }
        Err(StoreError::new(
            StoreErrorKind::VersionUnsupported,
            format!(
                "the store `{}` has layout revision {} (changed by {}), which builds below layout revision {} cannot use; this build writes layout revision {LAYOUT_REVISION}. Use that version or later, or take the store back with its `acc store downgrade --to {LAYOUT_REVISION}`; nothing was changed",
                path.display(),
                self.revision,
                self.changed_by.as_deref().unwrap_or("an unknown acc"),
                self.readable_by,
            ),
        ))
    }

    /// The revision whose queries this build runs on it: its own, or the store's when lower.
    pub fn effective(&self) -> i64 {
        self.revision.min(LAYOUT_REVISION)
    }
}

/// What an upgrade or downgrade would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The store.
    pub store: PathBuf,
    /// From this revision.
    pub from: i64,
    /// To this one.
    pub to: i64,
    /// The steps' summaries, in the order they run.
    pub steps: Vec<String>,
    /// The backup made first (none for a downgrade: its steps lose nothing).
    pub backup: Option<PathBuf>,
    /// Rows the steps read (receipts), for the time estimate.
    pub rows: i64,
    /// The estimated time, in milliseconds.
    pub estimate_ms: i64,
}

/// The backup written before the upgrade to `to`, beside `store`.
pub fn backup_path(store: &Path, to: i64) -> PathBuf {
    let mut name = store.as_os_str().to_owned();
    name.push(format!(".before-layout-{to}"));
    PathBuf::from(name)
}

/// The layout backups beside `store`, with their sizes in bytes, oldest revision first.
pub fn backups(store: &Path) -> Vec<(PathBuf, u64)> {
    let Some(dir) = store.parent() else {
        return Vec::new();
    };
    let Some(prefix) = store
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| format!("{n}.before-layout-"))
    else {
        return Vec::new();
    };
    let mut found: Vec<(i64, PathBuf, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let revision = name.to_str()?.strip_prefix(&prefix)?.parse::<i64>().ok()?;
            let size = entry.metadata().ok()?.len();
            Some((revision, entry.path(), size))
        })
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|(_, path, size)| (path, size))
        .collect()
}

/// Whether upgrades may run automatically in this process (hooks forbid them).
static AUTOMATIC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Never upgrade a store automatically in this process (a hook: it must answer its client within
/// its budget, and never changes the layout).
pub fn forbid_automatic_upgrades() {
    AUTOMATIC.store(false, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn automatic_upgrades() -> bool {
    AUTOMATIC.load(std::sync::atomic::Ordering::Relaxed)
}

/// The upgrades this process ran on its own (at a first write), for the note a command prints.
static AUTOMATIC_DONE: std::sync::Mutex<Vec<Plan>> = std::sync::Mutex::new(Vec::new());

pub(crate) fn record_automatic(plan: Plan) {
    if let Ok(mut done) = AUTOMATIC_DONE.lock() {
        done.push(plan);
    }
}

/// The upgrades this process ran automatically since the last call (a command tells its user
/// about each on stderr).
pub fn take_automatic_upgrades() -> Vec<Plan> {
    AUTOMATIC_DONE
        .lock()
        .map(|mut done| std::mem::take(&mut *done))
        .unwrap_or_default()
}

/// Where an upgrade expected to take longer than [`PROGRESS_AFTER_MS`] says what it is doing
/// (a command sets it to its stderr); nowhere by default.
static PROGRESS: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

/// Estimated upgrades longer than this report their steps through [`report_progress_to`].
pub const PROGRESS_AFTER_MS: i64 = 2_000;

/// Send the progress lines of long upgrades to `sink`.
pub fn report_progress_to(sink: fn(&str)) {
    let _ = PROGRESS.set(sink);
}

/// [`PROGRESS_AFTER_MS`], or for tests `ACC_TEST_PROGRESS_AFTER_MS` (a store big enough to
/// take 2 s would take a test minutes to write).
fn progress_after_ms() -> i64 {
    std::env::var("ACC_TEST_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(PROGRESS_AFTER_MS)
}

fn progress(plan: &Plan, line: &str) {
    if plan.estimate_ms > progress_after_ms()
        && let Some(sink) = PROGRESS.get()
    {
        sink(line);
    }
}

/// Remove the partial backups beside `backup` whose writer is no longer running (a killed
/// upgrade's); a running writer's is left alone.
fn sweep_partials(backup: &Path) {
    let (Some(dir), Some(name)) = (backup.parent(), backup.file_name().and_then(|n| n.to_str()))
    else {
        return;
    };
    let prefix = format!("{name}.");
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = entry.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(".partial"))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let running = pid != std::process::id() && Path::new(&format!("/proc/{pid}")).exists();
        if !running {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Estimated cost per receipt row of the steps (the receipts rebuilt, their indexes built), and
/// the backup's pace, from `acc-bench upgrade` on a 2-core machine (docs/benchmarks.md).
const NANOS_PER_ROW: i64 = 3_000;
const BACKUP_BYTES_PER_MS: u64 = 400_000;

impl crate::Lite {
    fn receipt_rows(&self) -> StoreResult<i64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM receipts", [], |r| r.get(0))?)
    }

    /// What `upgrade` would do; `None` when the store is at this build's revision or above.
    pub fn upgrade_plan(&self) -> StoreResult<Option<Plan>> {
        if self.layout.revision >= LAYOUT_REVISION {
            return Ok(None);
        }
        let rows = self.receipt_rows()?;
        let bytes = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        Ok(Some(Plan {
            store: self.path.clone(),
            from: self.layout.revision,
            to: LAYOUT_REVISION,
            steps: STEPS
                .iter()
                .filter(|s| s.to > self.layout.revision)
                .map(|s| format!("{} → {}: {}", s.to - 1, s.to, s.summary))
                .collect(),
            backup: Some(backup_path(&self.path, LAYOUT_REVISION)),
            rows,
            estimate_ms: rows * NANOS_PER_ROW / 1_000_000
                + i64::try_from(bytes / BACKUP_BYTES_PER_MS).unwrap_or(i64::MAX),
        }))
    }

    /// Bring the store to this build's layout revision: a backup first (kept whole, or not at
    /// all), then every step in one transaction. Idempotent: a store already there is left as
    /// it is; one a killed upgrade left behind is at its old revision and upgrades again.
    /// `Ok(None)` when there was nothing to do. A backup that cannot be written starts nothing
    /// and is an `Unavailable` error naming the cause.
    pub fn upgrade(&mut self) -> StoreResult<Option<Plan>> {
        let Some(plan) = self.upgrade_plan()? else {
            return Ok(None);
        };
        if let Some(backup) = &plan.backup {
            progress(
                &plan,
                &format!(
                    "acc: upgrading the store {} to layout revision {} ({} receipts, about {} s): backing it up to {}",
                    plan.store.display(),
                    plan.to,
                    plan.rows,
                    plan.estimate_ms / 1000,
                    backup.display()
                ),
            );
            self.write_backup(backup)?;
            progress(
                &plan,
                "acc: backup written; running the upgrade's steps in one transaction",
            );
        }
        let version = format!("acc {}", env!("CARGO_PKG_VERSION"));
        let done = self.change_layout(|tx, recorded| {
            if recorded.revision >= LAYOUT_REVISION {
                return Ok(false);
            }
            for step in STEPS.iter().filter(|s| s.to > recorded.revision) {
                tx.execute_batch(step.up)?;
            }
            record(
                tx,
                LAYOUT_REVISION,
                readable_by_at(LAYOUT_REVISION),
                &version,
            )?;
            Ok(true)
        })?;
        Ok(done.then_some(plan))
    }

    /// What `downgrade(to)` would do, or why it cannot.
    pub fn downgrade_plan(&self, to: i64) -> StoreResult<Plan> {
        let from = self.layout.revision;
        if from > LAYOUT_REVISION {
            return Err(StoreError::new(
                StoreErrorKind::VersionUnsupported,
                format!(
                    "the store is at layout revision {from}, above this build's {LAYOUT_REVISION}: downgrade it with the build that upgraded it"
                ),
            ));
        }
        if to < 0 || to > from {
            return Err(StoreError::new(
                StoreErrorKind::Internal,
                format!(
                    "the store is at layout revision {from}; a downgrade goes to a revision from 0 to {from}, not {to}"
                ),
            ));
        }
        let mut steps = Vec::new();
        for step in STEPS.iter().rev().filter(|s| s.to > to && s.to <= from) {
            if step.down.is_none() {
                return Err(StoreError::new(
                    StoreErrorKind::VersionUnsupported,
                    format!(
                        "layout step {} → {} ({}) cannot be reversed without losing data; restore its backup `{}` instead",
                        step.to - 1,
                        step.to,
                        step.summary,
                        backup_path(&self.path, step.to).display()
                    ),
                ));
            }
            steps.push(format!(
                "{} → {}: undo: {}",
                step.to,
                step.to - 1,
                step.summary
            ));
        }
        Ok(Plan {
            store: self.path.clone(),
            from,
            to,
            steps,
            backup: None,
            rows: 0,
            estimate_ms: 0,
        })
    }

    /// Take the store back to revision `to` by reversing steps that lose nothing (an added index
    /// dropped, a table rebuilt as it was), in one transaction, so no backup is made.
    pub fn downgrade(&mut self, to: i64) -> StoreResult<Plan> {
        let plan = self.downgrade_plan(to)?;
        // The user asked for this layout: this connection does not upgrade it again as it
        // closes (the next write-open of this build will, when alone).
        self.keep_layout = true;
        let version = format!("acc {}", env!("CARGO_PKG_VERSION"));
        self.change_layout(|tx, recorded| {
            for step in STEPS
                .iter()
                .rev()
                .filter(|s| s.to > to && s.to <= recorded.revision)
            {
                if let Some(down) = step.down {
                    tx.execute_batch(down)?;
                }
            }
            record(tx, to, readable_by_at(to), &version)?;
            Ok(true)
        })?;
        Ok(plan)
    }

    /// Run `f` in one immediate transaction with the layout recorded in it, then read the
    /// layout back.
    fn change_layout(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection, &Layout) -> StoreResult<bool>,
    ) -> StoreResult<bool> {
        let path = self.path.clone();
        let changed = self.write(|w| {
            let crate::db::Conn::Lite(tx) = w.conn else {
                return Err(crate::StoreError::internal(
                    "a SQLite layout step ran on another backend",
                ));
            };
            let meta = crate::read_meta(tx)?;
            let recorded = Layout::from_meta(&meta, &path)?;
            f(tx, &recorded)
        })?;
        let meta = crate::read_meta(&self.conn)?;
        self.layout = Layout::from_meta(&meta, &path)?;
        Ok(changed)
    }

    /// A consistent copy of the store at `backup`, through SQLite's online backup API, fsynced,
    /// appearing under its name only whole. It is always made now: one already there (a killed
    /// upgrade's, or an earlier upgrade's before a downgrade and later writes) may be older than
    /// the store, so the new copy replaces it, in one rename, once it is whole.
    fn write_backup(&self, backup: &Path) -> StoreResult<()> {
        sweep_partials(backup);
        let unavailable = |what: &str, e: &dyn std::fmt::Display| {
            StoreError::new(
                StoreErrorKind::Unavailable,
                format!(
                    "cannot {what} `{}` before the layout upgrade, so nothing was changed: {e}",
                    backup.display()
                ),
            )
        };
        let mut partial = backup.as_os_str().to_owned();
        partial.push(format!(".{}.partial", std::process::id()));
        let partial = PathBuf::from(partial);
        let _ = std::fs::remove_file(&partial);
        let copied = (|| -> StoreResult<()> {
            let mut dest = rusqlite::Connection::open(&partial)
                .map_err(|e| unavailable("create the backup", &e))?;
            {
                let copy = rusqlite::backup::Backup::new(&self.conn, &mut dest)
                    .map_err(|e| unavailable("start the backup", &e))?;
                copy.run_to_completion(1024, std::time::Duration::ZERO, None)
                    .map_err(|e| unavailable("write the backup", &e))?;
            }
            dest.close()
                .map_err(|(_, e)| unavailable("close the backup", &e))?;
            std::fs::File::open(&partial)
                .and_then(|f| f.sync_all())
                .map_err(|e| unavailable("sync the backup", &e))?;
            std::fs::rename(&partial, backup).map_err(|e| unavailable("name the backup", &e))?;
            if let Some(dir) = backup.parent() {
                std::fs::File::open(dir)
                    .and_then(|d| d.sync_all())
                    .map_err(|e| unavailable("sync the directory of", &e))?;
            }
            Ok(())
        })();
        if copied.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        copied
    }
}

/// Record, in a store being created from `schema.sql`, that it is at this build's revision.
pub(crate) fn record_created(tx: &rusqlite::Connection) -> StoreResult<()> {
    record(
        tx,
        LAYOUT_REVISION,
        readable_by_at(LAYOUT_REVISION),
        &format!("acc {}", env!("CARGO_PKG_VERSION")),
    )
}

/// The oldest revision whose builds can use a store at `revision`: the strictest of the steps
/// that brought it there.
pub(crate) fn readable_by_at(revision: i64) -> i64 {
    STEPS
        .iter()
        .filter(|s| s.to <= revision)
        .map(|s| s.readable_by)
        .max()
        .unwrap_or(0)
}

/// Record a layout in `acc_meta`.
fn record(
    tx: &rusqlite::Connection,
    revision: i64,
    readable_by: i64,
    version: &str,
) -> StoreResult<()> {
    for (key, value) in [
        ("layout_revision", revision.to_string()),
        ("layout_readable_by", readable_by.to_string()),
        ("layout_changed_by", version.to_string()),
    ] {
        tx.execute(
            "INSERT INTO acc_meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
    }
    Ok(())
}

//! A test aid: with `ACC_STORE_SQL_LOG=<file>` set when a store opens, every distinct SQL text
//! its connection runs is appended to that file, each followed by a NUL byte. The query-plan
//! audit (`tests/tests/scenarios`) runs a workload with it, then explains each statement.
//! Without the variable nothing is traced.

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

use rusqlite::trace::{TraceEvent, TraceEventCodes};

/// The log file and what this process already wrote to it.
type Log = Mutex<(std::fs::File, HashSet<String>)>;

static LOG: OnceLock<Option<Log>> = OnceLock::new();

fn log() -> Option<&'static Log> {
    LOG.get_or_init(|| {
        let path = std::env::var_os("ACC_STORE_SQL_LOG")?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()?;
        Some(Mutex::new((file, HashSet::new())))
    })
    .as_ref()
}

/// Trace `conn` when the log is asked for.
pub(crate) fn attach(conn: &rusqlite::Connection) {
    if log().is_some() {
        conn.trace_v2(TraceEventCodes::SQLITE_TRACE_STMT, Some(record));
    }
}

fn record(event: TraceEvent<'_>) {
    let TraceEvent::Stmt(statement, _) = event else {
        return;
    };
    let sql = statement.sql().into_owned();
    if let Some(log) = log()
        && let Ok(mut log) = log.lock()
        && log.1.insert(sql.clone())
    {
        let _ = log.0.write_all(format!("{sql}\0").as_bytes());
    }
}

//! The query-plan audit (issue 28): every statement the store runs while every scenario and a
//! hooked session's events run, each with its plan, in `tests/golden/store/plans.json`. A plan
//! that changes (an index dropped, a query rewritten) fails here until the reviewed golden file
//! is written again (`ACC_UPDATE_GOLDEN=1`); a table scan fails unless the statement reads the
//! whole table on purpose (`WHOLE_TABLE_READS`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// Statements that read a whole table on purpose: a full snapshot, a small table, or a scan
/// bounded by its own `LIMIT` over an index order. Matched by a fragment of their text.
const WHOLE_TABLE_READS: &[(&str, &str)] = &[
    ("FROM acc_meta", "a handful of rows"),
    ("FROM workspace", "one row"),
    ("FROM sqlite_sequence", "one row per AUTOINCREMENT table"),
    (
        "FROM messages m ORDER BY m.seq",
        "the full forensic snapshot reads every message",
    ),
    (
        "FROM receipts r ORDER BY r.message_seq, r.participant_id",
        "the full snapshot reads every receipt",
    ),
    (
        "WHERE m.event_seq < ?1 AND NOT EXISTS",
        "prune: one batch in sequence order, bounded by its LIMIT",
    ),
];

/// The statements the store ran, from the log `ACC_STORE_SQL_LOG` wrote.
fn logged(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut all: Vec<String> = text
        .split('\0')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    all.sort();
    all.dedup();
    all
}

/// Whether EXPLAIN QUERY PLAN applies (a data statement, not a transaction, pragma or schema
/// change).
fn explainable(sql: &str) -> bool {
    let head = sql.trim_start().to_ascii_uppercase();
    ["SELECT", "WITH", "INSERT", "UPDATE", "DELETE"]
        .iter()
        .any(|k| head.starts_with(k))
}

/// One line of SQL, whatever its layout in the source.
fn one_line(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every scenario, and a hooked session's events, with the statement log at `log`.
fn run_workload(log: &std::path::Path) {
    // Every scenario, in a child run of this test binary with the log asked for (this
    // process's environment is not changed).
    let exe = std::env::current_exe().expect("test binary");
    let status = std::process::Command::new(exe)
        .args([
            "--skip",
            "every_statement_the_store_runs",
            "--test-threads",
            "2",
            "-q",
        ])
        .env("ACC_STORE_SQL_LOG", log)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run the scenarios");
    assert!(status.success(), "the scenarios pass with the log on");
    // A hooked session's events, as processes.
    let world = acc_tests::World::new();
    let env = [("ACC_STORE_SQL_LOG", log.to_str().expect("utf8"))];
    let alice = world.attach("alice");
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "Stop",
        "SessionEnd",
    ] {
        if event == "UserPromptSubmit" {
            world
                .acc_as(
                    &alice,
                    &[
                        "message",
                        "--to",
                        "claude-code-plans",
                        "--subject",
                        "s",
                        "--body",
                        "b",
                    ],
                )
                .ok_json();
        }
        let input = json!({ "session_id": "plans", "cwd": world.dir, "hook_event_name": event, "source": "startup", "prompt": "p", "tool_name": "Write", "tool_input": { "file_path": "a.rs", "content": "x" } }).to_string();
        let run = world.hook_with("claude-code", event, &input, &env);
        assert_eq!(run.code, 0, "{event}: {}", run.stderr);
    }
}

#[test]
fn every_statement_the_store_runs_uses_the_plan_on_record() {
    let temp = tempfile::tempdir().expect("tempdir");
    let log = temp.path().join("sql.log");
    run_workload(&log);
    let statements = logged(&log);
    assert!(
        statements.len() > 40,
        "the workload ran the store: {} statements",
        statements.len()
    );
    // Explain each against a store of this build's layout.
    let store_dir = temp.path().join("plans-data");
    let record = acc_host::store::WorkspaceRecord {
        workspace_id: "plans".into(),
        display_name: "plans".into(),
        root: "/plans".into(),
    };
    drop(acc_host::store::Store::open_or_create(&store_dir, &record, 0).expect("store"));
    let conn = rusqlite::Connection::open(
        acc_host::store::workspace_dir(&store_dir, "plans").join(acc_host::store::STORE_FILE),
    )
    .expect("open");
    let mut plans = BTreeMap::new();
    let mut scans = Vec::new();
    for sql in statements.iter().filter(|s| explainable(s)) {
        let mut statement = match conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")) {
            Ok(statement) => statement,
            // A statement of a table this layout does not have (a layout step's own SQL).
            Err(_) => continue,
        };
        let nulls = vec![rusqlite::types::Null; statement.parameter_count()];
        let plan: Vec<String> = statement
            .query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3))
            .expect("plan")
            .map(|r| r.expect("row"))
            .collect();
        let whole = WHOLE_TABLE_READS
            .iter()
            .any(|(fragment, _)| one_line(sql).contains(fragment));
        for line in &plan {
            let scan = line.starts_with("SCAN ")
                && !line.contains(" USING ")
                && !line.contains("CO-ROUTINE");
            if scan
                && !whole
                && !plan.iter().any(|l| {
                    l.starts_with("CO-ROUTINE")
                        && line.ends_with(l.trim_start_matches("CO-ROUTINE ").trim())
                })
            {
                scans.push(format!("{}\n  {line}", one_line(sql)));
            }
        }
        plans.insert(one_line(sql), Value::from(plan));
    }
    acc_tests::golden(
        "store/plans.json",
        &Value::Object(plans.into_iter().collect()),
    );
    assert!(
        scans.is_empty(),
        "statements that scan a whole table:\n{}",
        scans.join("\n")
    );
}

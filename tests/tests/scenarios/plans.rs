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
    (
        "SELECT count(*) FROM receipts",
        "a pending upgrade's time estimate counts the receipts its rebuild will copy",
    ),
];

/// Statements in the store's source that the workload does not run, each with why; every other
/// one must run (so that its plan is on record).
const NOT_RUN: &[(&str, &str)] = &[
    (
        "store/src/push.rs:",
        "`acc room push` reads every table to copy it into a room on PostgreSQL; its tests start a server (tests/tests/e2e/pg_room.rs, room_cli.rs)",
    ),
    (
        "SELECT pg_notify(",
        "a room's wake, sent only on PostgreSQL (no SQLite plan); its tests start a server (tests/tests/e2e/room_wake.rs, multi_host.rs)",
    ),
];

/// The string literals of Rust source (macro arguments included, attributes and doc comments
/// not), each with its line.
fn string_literals(text: &str) -> Vec<(usize, String)> {
    fn walk(tokens: proc_macro2::TokenStream, out: &mut Vec<(usize, String)>) {
        let mut tokens = tokens.into_iter().peekable();
        while let Some(token) = tokens.next() {
            match token {
                // An attribute (a doc comment is one): no SQL there.
                proc_macro2::TokenTree::Punct(punct) if punct.as_char() == '#' => {
                    if let Some(proc_macro2::TokenTree::Punct(bang)) = tokens.peek()
                        && bang.as_char() == '!'
                    {
                        tokens.next();
                    }
                    if let Some(proc_macro2::TokenTree::Group(group)) = tokens.peek()
                        && group.delimiter() == proc_macro2::Delimiter::Bracket
                    {
                        tokens.next();
                    }
                }
                proc_macro2::TokenTree::Group(group) => walk(group.stream(), out),
                proc_macro2::TokenTree::Literal(literal) => {
                    if let Ok(string) = syn::parse_str::<syn::LitStr>(&literal.to_string()) {
                        out.push((literal.span().start().line, string.value()));
                    }
                }
                _ => {}
            }
        }
    }
    let tokens: proc_macro2::TokenStream = text.parse().expect("the store's source tokenizes");
    let mut out = Vec::new();
    walk(tokens, &mut out);
    out
}

/// The SQL text literals in the store's source (every `.rs` file below `store/src`, not its
/// unit tests), each as its fragments between `format!` placeholders, with where it is.
fn source_statements() -> Vec<(String, Vec<String>)> {
    let dir = acc_tests::repo_root().join("store/src");
    let mut found = Vec::new();
    // The store's modules and their child modules (`db/…`): every `.rs` file below `src`.
    let mut files = Vec::new();
    let mut pending = vec![dir];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).expect("store/src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|x| x == "rs")
                // `pg.rs` holds PostgreSQL's own texts, which SQLite never runs.
                && !path.ends_with("tests.rs")
                && !path.ends_with("sql_log.rs")
                && !path.ends_with("pg.rs")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source");
        for (line, literal) in string_literals(&text) {
            let sql = one_line(&literal);
            if !explainable(&sql) || !sql.contains(' ') {
                continue;
            }
            let fragments = sql
                .split(['{', '}'])
                .enumerate()
                .filter(|(n, part)| n % 2 == 0 && !part.trim().is_empty())
                .map(|(_, part)| part.trim().to_string())
                .collect();
            found.push((format!("{}:{line}: {sql}", file.display()), fragments));
        }
    }
    found
}

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
    // A session that opens and ends without a turn (its transcript never written): closed, and
    // hidden from the status of open sessions.
    let missing = world.temp.path().join("never-written.jsonl");
    for event in ["SessionStart", "SessionEnd"] {
        let input = json!({ "session_id": "untraced", "cwd": world.dir, "hook_event_name": event, "source": "startup", "reason": "other", "transcript_path": missing }).to_string();
        let run = world.hook_with("claude-code", event, &input, &env);
        assert_eq!(run.code, 0, "untraced {event}: {}", run.stderr);
    }
    assert!(
        !world.status()["sessions"]
            .to_string()
            .contains("claude-code-untraced"),
        "the session that ended without a turn is closed"
    );
    // A conversation resumed in a new client process of a newer version.
    for (pid, agent, source) in [
        ("4000001", "claude-code_2-1-300_harness", "startup"),
        ("4000002", "claude-code_2-1-301_harness", "resume"),
    ] {
        let input = json!({ "session_id": "resumed", "cwd": world.dir, "hook_event_name": "SessionStart", "source": source }).to_string();
        let mut env = env.to_vec();
        env.extend([("CLAUDE_PID", pid), ("AI_AGENT", agent)]);
        let run = world.hook_with("claude-code", "SessionStart", &input, &env);
        assert_eq!(run.code, 0, "resumed {source}: {}", run.stderr);
    }
    // A busy room's status (above 20 claims it lists the ones that matter).
    let carol = world.attach("carol");
    let resources: Vec<String> = (0..25).map(|i| format!("file:busy/{i}.rs")).collect();
    let mut claim = vec!["claim", "--lease", "120"];
    for resource in &resources {
        claim.extend(["--resource", resource.as_str()]);
    }
    world.acc_as_with(&carol, &claim, &env).ok_json();
    world.acc_with(&["status"], &env).ok_json();
    // A store of the earlier layout, upgraded by the command.
    let earlier = acc_tests::World::new();
    std::fs::write(
        earlier.dir.join("acc.workspace.json"),
        json!({ "schemaVersion": 1, "workspaceId": "layout-fixture" }).to_string(),
    )
    .expect("config");
    let store = acc_tests::store_path(&earlier.data_home, "layout-fixture");
    std::fs::create_dir_all(store.parent().expect("dir")).expect("store dir");
    std::fs::copy(
        acc_tests::repo_root().join("tests/fixtures/stores/layout-0-99cb396.sqlite3"),
        &store,
    )
    .expect("fixture");
    earlier
        .acc_with(&["store", "upgrade", "--dry-run"], &env)
        .ok_json();
    earlier.acc_with(&["store", "upgrade"], &env).ok_json();
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
    // Every statement in the store's source ran, or is named with why it did not.
    let ran: Vec<String> = statements.iter().map(|s| one_line(s)).collect();
    let unrun: Vec<String> = source_statements()
        .into_iter()
        .filter(|(_, fragments)| {
            !ran.iter()
                .any(|sql| fragments.iter().all(|f| sql.contains(f.as_str())))
        })
        .filter(|(place, _)| !NOT_RUN.iter().any(|(fragment, _)| place.contains(fragment)))
        .map(|(place, _)| place)
        .collect();
    assert!(
        unrun.is_empty(),
        "statements of the store that the workload never ran (run them, or name them in NOT_RUN with why):\n{}",
        unrun.join("\n")
    );
    // Explain each against a store of this build's layout.
    let store_dir = temp.path().join("plans-data");
    let record = acc_store::WorkspaceRecord {
        workspace_id: "plans".into(),
        display_name: "plans".into(),
        root: "/plans".into(),
    };
    drop(acc_store::Store::open_or_create(&store_dir, &record, 0).expect("store"));
    let conn = rusqlite::Connection::open(
        acc_store::workspace_dir(&store_dir, "plans").join(acc_store::STORE_FILE),
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
            // A table's scan; not a constant row's or a VALUES list's.
            let scan = line.starts_with("SCAN ")
                && !line.contains(" USING ")
                && !line.contains("CO-ROUTINE")
                && line != "SCAN CONSTANT ROW"
                && !line.ends_with("-ROW VALUES CLAUSE");
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

/// A presence refresh ([`acc_store::Store::refresh_presence`], what `acc-mcp` sends for a
/// read-only tool when presence needs one) moves the open session's `last_seen_at` forward
/// at its current generation, and says it did not find one at another generation or once
/// closed. (Run on SQLite here, with the plan audit's statement log; the room sends the same
/// statement ahead of its next round trip, `room_cli`.)
#[test]
fn a_presence_refresh_moves_the_open_generation_forward_only() {
    let world = acc_tests::World::new();
    let alice = world.attach("alice");
    let workspace = world.workspace_id();
    let workspace = workspace.as_str();
    let data = world.data_home.join("acc");
    let mut store = acc_store::Store::open_existing(&data, workspace)
        .expect("open")
        .expect("the store");
    let seen = |store: &mut acc_store::Store| {
        store
            .read(|r| r.session(&alice.session))
            .expect("read")
            .expect("the session")
    };
    let before = seen(&mut store);
    let later = before.last_seen_at + 60_000;
    store
        .refresh_presence(&alice.session, before.generation, later)
        .expect("refresh");
    assert_eq!(store.presence_refreshed(), Some(true));
    assert_eq!(seen(&mut store).last_seen_at, later);
    // Never backward, and not at another generation.
    store
        .refresh_presence(&alice.session, before.generation, before.last_seen_at)
        .expect("refresh");
    assert_eq!(seen(&mut store).last_seen_at, later);
    store
        .refresh_presence(&alice.session, before.generation + 1, later + 1)
        .expect("refresh");
    assert_eq!(store.presence_refreshed(), Some(false));
    assert_eq!(seen(&mut store).last_seen_at, later);
    drop(store);
    world.acc_as(&alice, &["detach"]).ok_json();
    let mut store = acc_store::Store::open_existing(&data, workspace)
        .expect("open")
        .expect("the store");
    store
        .refresh_presence(&alice.session, before.generation, later + 2)
        .expect("refresh");
    assert_eq!(store.presence_refreshed(), Some(false), "closed");
}

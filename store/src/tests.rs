use super::*;

fn store() -> (tempfile::TempDir, Store) {
    let temp = tempfile::tempdir().expect("tempdir");
    let record = WorkspaceRecord {
        workspace_id: "w".into(),
        display_name: "w".into(),
        root: "/w".into(),
    };
    let store = Store::open_or_create(temp.path(), &record, 0).expect("store");
    (temp, store)
}

fn plan(store: &Store, sql: &str) -> String {
    let mut stmt = store
        .sqlite()
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .expect("explain");
    let count = stmt.parameter_count();
    let nulls: Vec<rusqlite::types::Null> = vec![rusqlite::types::Null; count];
    let rows = stmt
        .query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3))
        .expect("rows");
    rows.map(|r| r.expect("row")).collect::<Vec<_>>().join("\n")
}

fn assert_indexed(store: &Store, sql: &str, index: &str) {
    let plan = plan(store, sql);
    // `a|b`: either index serves the query (the planner picks between them).
    assert!(
        index.split('|').any(|i| plan.contains(i)),
        "expected {index} in plan:\n{plan}\nfor {sql}"
    );
    assert!(
        !plan.contains("TEMP B-TREE"),
        "a page must not sort the table:\n{plan}"
    );
    // A scan of a bounded subquery's rows (a co-routine) is not a table scan.
    let coroutines: Vec<&str> = plan
        .lines()
        .filter_map(|l| l.trim().strip_prefix("CO-ROUTINE "))
        .collect();
    for line in plan.lines() {
        let of_coroutine = line
            .strip_prefix("SCAN ")
            .is_some_and(|name| coroutines.contains(&name.trim()));
        let scans_table = line.starts_with("SCAN") && !line.contains("USING") && !of_coroutine;
        assert!(!scans_table, "a full table scan:\n{plan}\nfor {sql}");
    }
}

#[test]
fn the_queued_read_is_a_range_read_on_either_layout() {
    let (_temp, mut store) = store();
    assert_eq!(store.layout().revision, crate::layout::LAYOUT_REVISION);
    assert_indexed(&store, &messages::sql::queued(1), "receipts_queued");
    store.downgrade(0).expect("downgrade");
    assert_eq!(store.layout().revision, 0);
    assert_indexed(&store, &messages::sql::queued(0), "receipts_unresolved");
    store.upgrade().expect("upgrade");
    assert_eq!(store.layout().revision, crate::layout::LAYOUT_REVISION);
    assert_indexed(&store, &messages::sql::queued(1), "receipts_queued");
}

#[test]
fn page_and_attention_queries_are_index_range_scans() {
    let (_temp, store) = store();
    assert_indexed(&store, &messages::sql::inbox(), "receipts_unresolved");
    assert_indexed(&store, &messages::sql::owed(), "receipts_owed");
    assert_indexed(
        &store,
        &messages::sql::waiting(),
        "receipts_waiting|receipts_queued",
    );
    assert_indexed(&store, &messages::sql::queued(1), "receipts_queued");
    assert_indexed(
        &store,
        &messages::sql::repeat_candidates(
            messages::sql::OFFER_TRANSPORT,
            messages::sql::OFFER_REPEATED,
        ),
        "receipts_unresolved",
    );
    assert_indexed(
        &store,
        &messages::sql::history(true, false),
        "messages_by_kind",
    );
    assert_indexed(
        &store,
        &messages::sql::history(true, true),
        "messages_by_kind",
    );
    assert_indexed(
        &store,
        &messages::sql::history(false, false),
        "INTEGER PRIMARY KEY",
    );
    assert_indexed(
        &store,
        "SELECT seq FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        "INTEGER PRIMARY KEY",
    );
}

#[test]
fn a_new_store_records_its_versions_and_refuses_another_workspace() {
    let (temp, store) = store();
    drop(store);
    assert!(
        Store::open_existing(temp.path(), "w")
            .expect("open")
            .is_some()
    );
    let other = WorkspaceRecord {
        workspace_id: "w".into(),
        display_name: "w".into(),
        root: "/w".into(),
    };
    Store::open_or_create(temp.path(), &other, 0).expect("reopen");
    // Copy the store under another workspace's directory: it names its own workspace.
    let dir = workspace_dir(temp.path(), "v");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(
        workspace_dir(temp.path(), "w").join(STORE_FILE),
        dir.join(STORE_FILE),
    )
    .expect("copy");
    let error = Store::open_existing(temp.path(), "v").expect_err("refused");
    assert_eq!(error.kind, StoreErrorKind::Corrupt);
}

/// A store with one message to bob and bob's receipt; returns the message's seq.
/// A note `message_id` from `from` (session `session_<from>`) to `to`, sent at `at`.
fn note(message_id: &str, from: &str, to: Vec<String>, at: Millis) -> MessageRow {
    MessageRow {
        seq: 0,
        message_id: message_id.into(),
        thread_id: message_id.into(),
        client_message_id: "k".into(),
        from_participant_id: from.into(),
        from_session_id: format!("session_{from}"),
        to_participant_ids: to,
        kind: crate::MessageKind::Note,
        obligation: crate::Obligation::None,
        subject: "s".into(),
        body: "b".into(),
        in_reply_to: None,
        artifacts: serde_json::json!([]),
        handoff: None,
        decision_change: None,
        content_hash: "h".into(),
        sent_at: at,
        event_seq: 1,
    }
}

fn one_message() -> (tempfile::TempDir, Store, i64) {
    let (temp, mut store) = store();
    let seq = store
        .write(|w| {
            let message = note("message_a", "alice", vec!["bob".into()], 1);
            let seq = w.insert_message(&message)?;
            w.insert_receipt(&ReceiptRow {
                message_seq: seq,
                participant_id: "bob".into(),
                state: ReceiptState::Offered,
                updated_at: 1,
                extensions: serde_json::json!({}),
                obligation: crate::Obligation::None,
                addressed: true,
            })?;
            Ok::<_, StoreError>(seq)
        })
        .expect("write");
    (temp, store, seq)
}

#[test]
fn a_closed_value_or_json_column_the_store_cannot_read_is_damage_not_a_default() {
    let damages = [
        (
            "UPDATE receipts SET state = 'lost'",
            "unknown receipt state `lost`",
        ),
        (
            "UPDATE receipts SET obligation = 'maybe'",
            "unknown obligation `maybe`",
        ),
        (
            "UPDATE messages SET kind = 'memo'",
            "unknown message kind `memo`",
        ),
        (
            "UPDATE messages SET to_participant_ids = 'bob'",
            "cannot read",
        ),
        ("UPDATE receipts SET extensions = '{'", "cannot read"),
    ];
    for (damage, expected) in damages {
        let (_temp, mut store, _seq) = one_message();
        let read = store.read(|r| r.inbox_page("bob", None, 10)).expect("read");
        assert_eq!(read[0].1.state, ReceiptState::Offered);
        store.sqlite().execute(damage, []).expect("damage");
        let error = store
            .read(|r| r.inbox_page("bob", None, 10))
            .expect_err(damage);
        assert_eq!(error.kind, StoreErrorKind::Corrupt, "{damage}: {error}");
        assert!(error.message.contains(expected), "{damage}: {error}");
    }
}

#[test]
fn environment_failures_are_unavailable_and_say_their_cause() {
    use std::io::{Error, ErrorKind};
    let path = std::path::Path::new("/data/acc");
    for (kind, cause) in [
        (ErrorKind::ReadOnlyFilesystem, "read-only"),
        (ErrorKind::StorageFull, "disk is full"),
        (ErrorKind::PermissionDenied, "permission denied"),
        (ErrorKind::NotADirectory, "not a directory"),
    ] {
        let error = StoreError::io("create the store", path, &Error::from(kind));
        assert_eq!(error.kind, StoreErrorKind::Unavailable, "{kind:?}");
        assert!(error.message.contains(cause), "{}", error.message);
        assert!(error.message.contains("/data/acc"), "{}", error.message);
    }
    let other = StoreError::io(
        "create the store",
        path,
        &Error::from(ErrorKind::Interrupted),
    );
    assert_eq!(other.kind, StoreErrorKind::Internal);
    let read_only = StoreError::from(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
        None,
    ));
    assert_eq!(read_only.kind, StoreErrorKind::Unavailable);
    assert!(
        read_only.message.contains("read-only"),
        "{}",
        read_only.message
    );
}

/// The counts per session (seeks, range counts and one whole-table count) equal a `GROUP BY`,
/// for no claims, one session, and several with expired claims among them.
#[test]
fn claim_counts_per_session_equal_a_group_by() {
    let (_temp, mut store) = store();
    let expected = |store: &Store| -> Vec<(String, i64)> {
        let mut stmt = store
            .sqlite()
            .prepare(
                "SELECT session_id, count(*) FROM claims GROUP BY session_id ORDER BY session_id",
            )
            .expect("group by");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect()
    };
    let counts = |store: &mut Store| store.read(|r| r.claim_counts(1_000)).expect("claim counts");
    assert_eq!(counts(&mut store), (Vec::new(), 0));
    store
        .sqlite()
        .execute_batch("PRAGMA foreign_keys=OFF")
        .expect("no foreign keys for bare rows");
    let insert = |store: &Store, session: &str, n: usize, expires_at: i64| {
        for i in 0..n {
            store
                .sqlite()
                .execute(
                    "INSERT INTO claims(claim_id, session_id, generation, participant_id, resource, mode, enforcement, acquired_at, renewed_at, expires_at, lease_seconds) VALUES (?1, ?2, 1, 'p', ?3, 'exclusive', 'advisory', 0, 0, ?4, 60)",
                    rusqlite::params![format!("claim-{session}-{expires_at}-{i}"), session, format!("file:{session}/{i}"), expires_at],
                )
                .expect("claim");
        }
    };
    insert(&store, "session-b", 3, 5_000);
    assert_eq!(counts(&mut store), (expected(&store), 0));
    assert_eq!(counts(&mut store).0, vec![("session-b".to_string(), 3)]);
    insert(&store, "session-a", 1, 500);
    insert(&store, "session-c", 5, 5_000);
    insert(&store, "session-c", 2, 900);
    let (per_session, expired) = counts(&mut store);
    assert_eq!(per_session, expected(&store));
    assert_eq!(expired, 3);
}

#[test]
fn parameters_become_dollars_and_index_hints_go_but_quoted_text_stays() {
    let cases = [
        (
            "SELECT a FROM t WHERE a = ?1 AND b < ?12",
            "SELECT a FROM t WHERE a = $1 AND b < $12",
        ),
        ("SELECT '?1' || ?2", "SELECT '?1' || $2"),
        (
            "SELECT x FROM claims INDEXED BY claims_by_session WHERE s = ?1",
            "SELECT x FROM claims  WHERE s = $1",
        ),
        ("SELECT 'it''s ?3', ?3", "SELECT 'it''s ?3', $3"),
        ("SELECT ? FROM t", "SELECT ? FROM t"),
    ];
    for (sqlite, pg) in cases {
        assert_eq!(crate::db::pg_text(sqlite), pg, "{sqlite}");
    }
}

#[test]
fn a_write_whose_closure_fails_leaves_nothing_and_the_next_write_and_read_go_through() {
    let (_temp, mut store) = store();
    let failed = store.write(|w| {
        w.insert_message(&note("message_lost", "alice", vec!["bob".into()], 1))?;
        Err::<(), _>(StoreError::internal("the caller's own check failed"))
    });
    assert!(failed.is_err());
    // Rolled back, and no transaction left open: the next write commits, and reads see it.
    store
        .write(|w| w.insert_message(&note("message_kept", "alice", vec!["bob".into()], 2)))
        .expect("the next write");
    let (lost, kept) = store
        .read(|r| Ok::<_, StoreError>((r.message("message_lost")?, r.message("message_kept")?)))
        .expect("read");
    assert!(lost.is_none(), "the failed write left its message");
    assert!(kept.is_some());
}

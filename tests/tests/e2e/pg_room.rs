//! The store on a PostgreSQL room (`acc_store` with a room connected): the same records and
//! the same guarantees as the SQLite file, against a real server the test starts.

use std::path::Path;

use acc_store::{
    MessageKind, MessageRow, Obligation, ReceiptRow, ReceiptState, Store, StoreErrorKind,
    WorkspaceRecord,
};
use acc_tests::pg::Cluster;
use serde_json::json;

fn workspace(id: &str) -> WorkspaceRecord {
    WorkspaceRecord {
        workspace_id: id.to_string(),
        display_name: format!("{id} display"),
        root: format!("/checkouts/{id}"),
    }
}

fn message(client_id: &str, from: &str, to: &str) -> MessageRow {
    MessageRow {
        seq: 0,
        message_id: format!("message_{client_id}"),
        thread_id: format!("thread_{client_id}"),
        client_message_id: client_id.to_string(),
        from_participant_id: from.to_string(),
        from_session_id: format!("session_{from}"),
        to_participant_ids: vec![to.to_string()],
        kind: MessageKind::Note,
        obligation: Obligation::None,
        subject: "subject with 'quotes' and ?1 and $1".to_string(),
        body: "body: ünïcode, \"json\" {\"a\": 1}".to_string(),
        in_reply_to: None,
        artifacts: json!([]),
        handoff: None,
        decision_change: None,
        content_hash: "hash".to_string(),
        sent_at: 1_000,
        event_seq: 0,
    }
}

fn open(data: &Path, id: &str) -> Store {
    Store::open_or_create(data, &workspace(id), 1).expect("the room opens")
}

/// A queued, addressed receipt of message `seq` for `participant`.
fn queued(seq: i64, participant: &str) -> ReceiptRow {
    ReceiptRow {
        message_seq: seq,
        participant_id: participant.into(),
        state: ReceiptState::Queued,
        updated_at: 12,
        extensions: json!({}),
        obligation: Obligation::None,
        addressed: true,
    }
}

#[test]
fn a_room_on_postgres_keeps_what_was_written_and_each_workspace_is_its_own() {
    let cluster = Cluster::start();
    let db = cluster.database("room records");
    let data = tempfile::tempdir().expect("data");
    acc_store::connect_room(data.path(), "ws_one", &db.socket_url()).expect("connect");

    let mut store = open(data.path(), "ws_one");
    assert!(store.path().is_none(), "a room has no file");
    assert!(
        store.location().starts_with("postgres://"),
        "{}",
        store.location()
    );
    let seq = store
        .write(|w| -> acc_store::StoreResult<i64> {
            assert!(w.ensure_participant("alice", 10)?);
            assert!(
                !w.ensure_participant("alice", 11)?,
                "a second ensure creates nothing"
            );
            w.ensure_participant("bob", 10)?;
            let event =
                w.append_event("message.sent", 12, None, Some("alice"), &json!({"n": 1}))?;
            assert_eq!(w.reader().head_seq()?, event);
            let mut m = message("c1", "alice", "bob");
            m.event_seq = event;
            let seq = w.insert_message(&m)?;
            w.insert_receipt(&queued(seq, "bob"))?;
            Ok(seq)
        })
        .expect("write");
    assert_eq!(seq, 1, "the first message is seq 1, as on SQLite");
    drop(store);

    // Reopened (a new process would do the same): everything reads back exactly.
    let mut store = Store::open_existing(data.path(), "ws_one")
        .expect("open")
        .expect("the room exists");
    store
        .read(|r| -> acc_store::StoreResult<()> {
            assert!(r.participant_exists("alice")?);
            let m = r.message_by_client_id("alice", "c1")?.expect("the message");
            let mut want = message("c1", "alice", "bob");
            want.seq = 1;
            want.event_seq = 1;
            assert_eq!(format!("{m:?}"), format!("{want:?}"));
            let queued = r.queued_for("bob", 10)?;
            assert_eq!(queued.len(), 1);
            let page = r.inbox_page("bob", None, 10)?;
            assert_eq!(page.len(), 1);
            assert!(page[0].1.addressed);
            assert_eq!(page[0].1.state, ReceiptState::Queued);
            let events = r.events_after(0, 10)?;
            assert_eq!(events.len(), 1);
            assert_eq!(events[0].data, json!({"n": 1}));
            assert_eq!(
                r.ids_with_prefix("message", "message_c", 5)?,
                vec!["message_c1".to_string()]
            );
            Ok(())
        })
        .expect("read");
    assert_eq!(store.integrity_check().expect("check"), "ok");

    // Another workspace in the same database is a room of its own.
    acc_store::connect_room(data.path(), "ws_two", &db.socket_url()).expect("connect");
    assert!(
        Store::open_existing(data.path(), "ws_two")
            .expect("open")
            .is_none()
    );
    let mut two = open(data.path(), "ws_two");
    let seen = two.read(|r| r.participant_exists("alice")).expect("read");
    assert!(!seen, "workspaces share no records");
    // Disconnected, the workspace is back on its (empty) SQLite store.
    assert!(acc_store::disconnect_room(data.path(), "ws_one").expect("disconnect"));
    assert!(
        Store::open_existing(data.path(), "ws_one")
            .expect("open")
            .is_none()
    );
}

#[test]
fn writers_of_one_room_take_turns_and_a_rolled_back_write_leaves_no_gap() {
    let cluster = Cluster::start();
    let db = cluster.database("room writers");
    let data = tempfile::tempdir().expect("data");
    acc_store::connect_room(data.path(), "ws_race", &db.socket_url()).expect("connect");
    drop(open(data.path(), "ws_race"));
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let data = data.path().to_path_buf();
            std::thread::spawn(move || {
                let mut store = open(&data, "ws_race");
                for n in 0..25 {
                    // Every other write fails after appending: it must leave nothing.
                    let failed: Result<(), acc_store::StoreError> = store.write(|w| {
                        w.append_event("doomed", 1, None, None, &json!({}))?;
                        Err(acc_store::StoreError::internal(
                            "the caller's rule refused it",
                        ))
                    });
                    assert!(failed.is_err());
                    store
                        .write(|w| {
                            let next = w.reader().head_seq()? + 1;
                            let seq = w.append_event(
                                "kept",
                                1,
                                None,
                                None,
                                &json!({"writer": writer, "n": n}),
                            )?;
                            assert_eq!(
                                seq, next,
                                "the number given follows the last committed: no gap"
                            );
                            Ok::<_, acc_store::StoreError>(())
                        })
                        .expect("write");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    let mut store = open(data.path(), "ws_race");
    let events = store.read(|r| r.events_after(0, 1_000)).expect("read");
    let seqs: Vec<i64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=100).collect::<Vec<_>>(), "gap-free, in order");
    assert!(events.iter().all(|e| e.event_type == "kept"));
}

#[test]
fn a_stopped_server_is_unavailable_at_once_naming_the_room() {
    let mut cluster = Cluster::start();
    let db = cluster.database("room stopped");
    let data = tempfile::tempdir().expect("data");
    acc_store::connect_room(data.path(), "ws_gone", &db.url()).expect("connect");
    cluster.stop();
    let started = std::time::Instant::now();
    let error =
        Store::open_or_create(data.path(), &workspace("ws_gone"), 1).expect_err("no server");
    assert_eq!(error.kind, StoreErrorKind::Unavailable, "{error}");
    assert!(
        error
            .message
            .contains(&format!("127.0.0.1:{}/{}", db.port, db.name)),
        "{error}"
    );
    assert!(!error.message.contains(&db.password), "{error}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "bounded: {:?}",
        started.elapsed()
    );
    // A URL with a password is refused before anything is written.
    let with_password = db.url().replace('@', &format!(":{}@", db.password));
    let refused =
        acc_store::connect_room(data.path(), "ws_other", &with_password).expect_err("refused");
    assert!(refused.message.contains("password"), "{refused}");
    assert!(!refused.message.contains(&db.password), "{refused}");
    assert!(
        acc_store::room_url(data.path(), "ws_other")
            .expect("read")
            .is_none()
            || std::env::var(acc_store::ROOM_ENV).is_ok()
    );
}

#[test]
fn text_a_room_cannot_hold_is_refused_and_nothing_of_the_write_stays() {
    let cluster = Cluster::start();
    let db = cluster.database("room nul");
    let data = tempfile::tempdir().expect("data");
    acc_store::connect_room(data.path(), "ws_nul", &db.socket_url()).expect("connect");
    let mut store = open(data.path(), "ws_nul");
    let refused = store
        .write(|w| -> acc_store::StoreResult<()> {
            w.ensure_participant("alice", 1)?;
            w.ensure_participant("with\u{0}nul", 1)?;
            Ok(())
        })
        .expect_err("refused");
    assert_eq!(refused.kind, StoreErrorKind::Refused, "{refused}");
    assert!(refused.message.contains("22021"), "{refused}");
    let kept = store.read(|r| r.participant_exists("alice")).expect("read");
    assert!(!kept, "the whole write was rolled back");
}

/// What a room reads ahead is the transaction's own answer: taken, it equals the statement run
/// then; a write in between forgets it, so a read after the write sees the write.
#[test]
fn answers_read_ahead_are_the_transactions_own_and_a_write_forgets_them() {
    let cluster = Cluster::start();
    let db = cluster.database("read ahead");
    let data = tempfile::tempdir().expect("data");
    acc_store::connect_room(data.path(), "ws_ahead", &db.socket_url()).expect("connect");
    let mut store = open(data.path(), "ws_ahead");
    store
        .write(|w| -> acc_store::StoreResult<()> {
            w.ensure_participant("alice", 10)?;
            w.ensure_participant("bob", 10)?;
            let seq = w.insert_message(&message("first", "alice", "bob"))?;
            w.insert_receipt(&queued(seq, "bob"))
        })
        .expect("write");

    let (ahead, plain) = store
        .read(|r| -> acc_store::StoreResult<_> {
            r.prefetch_pending("session_none", "bob", 10, 0)?;
            let ahead = (r.session("session_none")?, r.queued_for("bob", 10)?);
            let plain = (r.session("session_none")?, r.queued_for("bob", 10)?);
            Ok((format!("{ahead:?}"), format!("{plain:?}")))
        })
        .expect("read");
    assert_eq!(ahead, plain, "taken ahead or asked then, the same answer");
    assert!(ahead.contains("first"), "{ahead}");

    let after_write = store
        .write(|w| -> acc_store::StoreResult<Vec<String>> {
            w.reader().prefetch_pending("session_none", "bob", 10, 0)?;
            let seq = w.insert_message(&message("second", "alice", "bob"))?;
            w.insert_receipt(&queued(seq, "bob"))?;
            Ok(w.reader()
                .queued_for("bob", 10)?
                .into_iter()
                .map(|m| m.client_message_id)
                .collect())
        })
        .expect("write");
    assert_eq!(after_write, vec!["second".to_string(), "first".to_string()]);
}

//! Layout revisions (issue 28): a store written by an earlier build opens with this one,
//! upgraded when alone after a backup, with every record and cursor unchanged.

use std::path::PathBuf;

use acc_tests::World;
use serde_json::{Value, json};

/// The fixture: a layout-0 store written by commit 99cb396 (`tests/fixtures/stores/README.md`).
const FIXTURE: &str = "tests/fixtures/stores/layout-0-99cb396.sqlite3";

/// A world whose workspace is the fixture's, with the fixture store in place.
fn fixture_world() -> (World, PathBuf) {
    let world = World::new();
    std::fs::write(
        world.dir.join("acc.workspace.json"),
        json!({ "schemaVersion": 1, "workspaceId": "layout-fixture", "policy": { "claimMode": "guarded" } }).to_string(),
    )
    .expect("config");
    let store = acc_tests::store_path(&world.data_home, "layout-fixture");
    std::fs::create_dir_all(store.parent().expect("dir")).expect("store dir");
    std::fs::copy(acc_tests::repo_root().join(FIXTURE), &store).expect("copy fixture");
    (world, store)
}

fn layout(world: &World) -> Value {
    world.status()["store"].clone()
}

fn meta(store: &std::path::Path, key: &str) -> Option<String> {
    let conn = rusqlite::Connection::open(store).expect("open");
    conn.query_row("SELECT value FROM acc_meta WHERE key = ?1", [key], |r| {
        r.get(0)
    })
    .ok()
}

fn indexes(store: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(store).expect("open");
    let mut statement = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .expect("prepare");
    statement
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// What a user and the store's layout show: the full snapshot, the layout revision, the indexes.
fn fingerprint(world: &World, store: &std::path::Path) -> (Value, Option<String>, Vec<String>) {
    (
        world.acc(&["sync", "--scope", "full"]).ok_json(),
        meta(store, "layout_revision"),
        indexes(store),
    )
}

#[test]
fn a_store_of_the_earlier_layout_is_upgraded_at_its_first_write_with_everything_kept() {
    let (world, store) = fixture_world();
    let before = world.acc(&["sync", "--scope", "full"]).ok_json();
    // Reads never upgrade: the status says an upgrade is pending.
    let pending = layout(&world);
    assert_eq!(pending["revision"], 0, "{pending}");
    assert_eq!(pending["pendingUpgrade"], true, "{pending}");
    let doctor = world.acc(&["doctor"]).json();
    assert!(
        doctor.to_string().contains("an upgrade is pending"),
        "{doctor}"
    );
    // A hook writes without upgrading (it must answer within its budget).
    let start = json!({ "session_id": "conv-1", "cwd": world.dir, "hook_event_name": "SessionStart", "source": "startup" }).to_string();
    assert_eq!(world.hook("claude-code", "SessionStart", &start).code, 0);
    assert_eq!(
        meta(&store, "layout_revision"),
        None,
        "a hook never upgrades"
    );
    // The first write of a command, alone with the store, upgrades it after a backup.
    let dave = world.attach("dave");
    assert_eq!(meta(&store, "layout_revision").as_deref(), Some("1"));
    assert!(indexes(&store).contains(&"receipts_queued".to_string()));
    let backup = store.with_file_name("store.sqlite3.before-layout-1");
    let copy = rusqlite::Connection::open(&backup).expect("backup opens");
    let integrity: String = copy
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    assert_eq!(integrity, "ok");
    let messages: i64 = copy
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .expect("count");
    assert_eq!(messages, 67, "the backup is the store before the upgrade");
    drop(copy);
    let upgraded = layout(&world);
    assert_eq!(upgraded["revision"], 1, "{upgraded}");
    assert_eq!(upgraded["pendingUpgrade"], false);
    assert_eq!(
        upgraded["backups"][0]["path"],
        json!(backup.to_string_lossy()),
        "{upgraded}"
    );
    // Every record and cursor is unchanged, apart from what the hook and dave added.
    let after = world.acc(&["sync", "--scope", "full"]).ok_json();
    for key in ["messages", "claims", "decisions"] {
        assert_eq!(before["snapshot"][key], after["snapshot"][key], "{key}");
    }
    let events_before = world.acc(&["sync", "--limit", "500"]).ok_json()["events"].clone();
    let old: Vec<&Value> = events_before
        .as_array()
        .expect("events")
        .iter()
        .take(98)
        .collect();
    assert_eq!(old.len(), 98);
    assert_eq!(old[97]["cursor"], before["nextCursor"], "cursors unchanged");
    let conn = rusqlite::Connection::open(&store).expect("open");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    assert_eq!(integrity, "ok");
    // Next-turn still finds bob's queued notes through the new index.
    let bob_waiting: i64 = conn
        .query_row("SELECT count(*) FROM receipts INDEXED BY receipts_queued WHERE participant_id = 'bob' AND state = 'queued'", [], |r| r.get(0))
        .expect("indexed");
    let bob_queued: i64 = conn
        .query_row("SELECT count(*) FROM receipts NOT INDEXED WHERE participant_id = 'bob' AND state = 'queued'", [], |r| r.get(0))
        .expect("scanned");
    assert_eq!(bob_waiting, bob_queued);
    assert!(bob_queued >= 40, "{bob_queued}");
    world
        .acc_as(
            &dave,
            &["message", "--subject", "after", "--body", "the upgrade"],
        )
        .ok_json();
    // Doctor lists the backup with its size.
    let doctor = world.acc(&["doctor"]).json();
    assert!(doctor.to_string().contains("before-layout-1"), "{doctor}");
}

#[test]
fn store_upgrade_says_what_it_will_do_does_it_once_and_downgrade_takes_it_back() {
    let (world, store) = fixture_world();
    let original = fingerprint(&world, &store);
    let plan = world.acc(&["store", "upgrade", "--dry-run"]).ok_json();
    assert_eq!(plan["fromRevision"], 0, "{plan}");
    assert_eq!(plan["toRevision"], 1, "{plan}");
    assert_eq!(plan["dryRun"], true);
    assert_eq!(plan["changed"], false);
    assert_eq!(plan["receiptRows"], 71, "{plan}");
    assert!(
        plan["steps"][0]
            .as_str()
            .expect("step")
            .contains("queued receipts"),
        "{plan}"
    );
    assert!(
        plan["backup"]
            .as_str()
            .expect("backup")
            .ends_with("store.sqlite3.before-layout-1")
    );
    assert!(plan["estimateMs"].is_i64());
    assert!(
        fingerprint(&world, &store) == original,
        "a dry run changes nothing"
    );
    let human = world.acc_text(&["store", "upgrade", "--dry-run"]);
    assert!(
        human.stdout.contains("would change") && human.stdout.contains("backup first"),
        "{}",
        human.stdout
    );

    let done = world.acc(&["store", "upgrade"]).ok_json();
    assert_eq!(done["changed"], true, "{done}");
    assert_eq!(meta(&store, "layout_revision").as_deref(), Some("1"));
    let again = world.acc(&["store", "upgrade"]).ok_json();
    assert_eq!(again["changed"], false, "idempotent: {again}");

    let back = world.acc(&["store", "downgrade", "--to", "0"]).ok_json();
    assert_eq!(back["changed"], true, "{back}");
    assert_eq!(meta(&store, "layout_revision").as_deref(), Some("0"));
    assert!(!indexes(&store).contains(&"receipts_queued".to_string()));
    // Everything still reads, on the older layout.
    assert_eq!(world.status()["store"]["pendingUpgrade"], true);
    world
        .acc(&["store", "downgrade", "--to", "5"])
        .err(2, "invalid_arguments");
}

#[test]
fn an_upgrade_whose_backup_cannot_be_written_starts_nothing() {
    let (world, store) = fixture_world();
    // Something that is not a file stands where the backup would go.
    let blocker = store.with_file_name("store.sqlite3.before-layout-1");
    std::fs::create_dir_all(blocker.join("in the way")).expect("blocker");
    let original = fingerprint(&world, &store);
    let refused = world.acc(&["store", "upgrade"]);
    assert_eq!(refused.code, 4, "{refused:?}");
    assert!(
        refused.stdout.contains("before-layout-1"),
        "{}",
        refused.stdout
    );
    assert!(fingerprint(&world, &store) == original, "nothing changed");
    assert!(
        !blocker
            .join("in the way")
            .read_dir()
            .expect("dir")
            .any(|_| true),
        "no partial backup left behind"
    );
    // A command's write still works, on the older layout.
    let erin = world.attach("erin");
    world
        .acc_as(&erin, &["message", "--subject", "still", "--body", "works"])
        .ok_json();
    assert_eq!(meta(&store, "layout_revision"), None);
}

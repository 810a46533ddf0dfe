//! The store under abuse: crashes mid-transaction, other versions, foreign files, permissions.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use acc_tests::{World, kill_pid, wait_until};
use sha2_free::file_digest;

mod sha2_free {
    //! A byte-for-byte fingerprint without another dependency: the file's full contents.
    pub fn file_digest(path: &std::path::Path) -> Vec<u8> {
        std::fs::read(path).expect("read file")
    }
}

fn writer_holds_lock(store: &Path) -> bool {
    let Ok(conn) = rusqlite::Connection::open(store) else {
        return false;
    };
    let _ = conn.busy_timeout(Duration::from_millis(0));
    match conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;") {
        Ok(()) => false,
        Err(_) => true,
    }
}

#[test]
fn sigkill_inside_a_write_transaction_leaves_all_or_nothing() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(&alice, &["claim", "--resource", "file:before.rs"])
        .ok_json();
    let store = world.store_path();

    let mut command = world.command("acc");
    command.args(["--json", "claim"]);
    for i in 0..50 {
        command.arg("--resource").arg(format!("file:batch/{i}.rs"));
    }
    command
        .env("ACC_SESSION", &alice.session)
        .env("ACC_GENERATION", &alice.generation)
        .env("ACC_TEST_HOLD_WRITE_MS", "20000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().expect("spawn");
    wait_until(
        Duration::from_secs(20),
        "the writer to hold its transaction",
        || writer_holds_lock(&store),
    );
    kill_pid(child.id());
    let status = child.wait().expect("reap");
    assert!(!status.success());

    let conn = rusqlite::Connection::open(&store).expect("store opens");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(check, "ok");
    drop(conn);
    let status = world.status();
    let resources: Vec<&str> = status["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .map(|c| c["resource"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        resources,
        vec!["file:before.rs"],
        "none of the killed batch is visible"
    );
    // The store keeps working, with the same credentials, and events stay gap-free.
    world
        .acc_as(&alice, &["claim", "--resource", "file:batch/0.rs"])
        .ok_json();
    let events = world.acc(&["sync"]).ok_json();
    let cursors: Vec<String> = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["cursor"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(cursors.last().map(String::as_str), Some("0000000000000004"));
}

fn foreign_store(world: &World, build: impl FnOnce(&Path)) -> (String, std::path::PathBuf) {
    let id = world.workspace_id();
    let path = acc_tests::store_path(&world.data_home, &id);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    build(&path);
    (id, path)
}

fn assert_refused_untouched(world: &World, path: &Path, code: &str) {
    let before = file_digest(path);
    let dir_before: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("ls")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    world.acc(&["status"]).err(4, code);
    world
        .acc(&["attach", "--participant", "alice"])
        .err(4, code);
    world.acc(&["sync", "--scope", "full"]).err(4, code);
    assert_eq!(
        file_digest(path),
        before,
        "the store file is byte for byte unchanged"
    );
    let dir_after: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("ls")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        dir_before, dir_after,
        "no journal or other file was created"
    );
}

#[test]
fn a_store_of_another_schema_version_is_refused_unmodified() {
    let world = World::new();
    let (id, path) = foreign_store(&world, |path| {
        let conn = rusqlite::Connection::open(path).expect("create");
        conn.execute_batch("CREATE TABLE acc_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE sessions(x);").expect("schema");
        conn.execute(
            "INSERT INTO acc_meta VALUES ('protocol_version','0.1'),('schema_version','2'),('workspace_id',?1)",
            [""],
        )
        .expect("meta");
    });
    let _ = id;
    assert_refused_untouched(&world, &path, "store_version_unsupported");
    let error = world.acc(&["status"]).err(4, "store_version_unsupported");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("schema 2"),
        "{error}"
    );
}

#[test]
fn a_sqlite_file_that_is_not_an_acc_store_is_refused() {
    let world = World::new();
    let (_, path) = foreign_store(&world, |path| {
        let conn = rusqlite::Connection::open(path).expect("create");
        conn.execute_batch("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('mine');")
            .expect("schema");
    });
    assert_refused_untouched(&world, &path, "store_corrupt");
}

#[test]
fn a_garbage_file_is_refused() {
    let world = World::new();
    let (_, path) = foreign_store(&world, |path| {
        std::fs::write(path, b"this is not sqlite at all").expect("write")
    });
    assert_refused_untouched(&world, &path, "store_corrupt");
}

#[test]
fn a_json_era_store_is_refused() {
    let world = World::new();
    let id = world.workspace_id();
    let dir = world.data_home.join("acc").join("workspaces").join(&id);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("state.json"), b"{\"sessions\":{}}").expect("write");
    let error = world
        .acc(&["attach", "--participant", "alice"])
        .err(4, "store_version_unsupported");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("json"),
        "{error}"
    );
    assert!(
        !dir.join("store.sqlite3").exists(),
        "nothing was created beside it"
    );
}

#[test]
fn store_directories_are_private_and_files_user_only() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(&alice, &["claim", "--resource", "file:a"])
        .ok_json();
    let store = world.store_path();
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&store), 0o600);
    assert_eq!(mode(store.parent().expect("ws dir")), 0o700);
    assert_eq!(mode(&world.data_home.join("acc")), 0o700);
    for suffix in ["-wal", "-shm"] {
        let side = store.with_file_name(format!("store.sqlite3{suffix}"));
        if side.exists() {
            assert_eq!(mode(&side) & 0o077, 0, "{} is user-only", side.display());
        }
    }
    let conn = rusqlite::Connection::open(&store).expect("open");
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("mode");
    assert_eq!(journal, "wal");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version");
    assert_eq!(version, 3);
    let protocol: String = conn
        .query_row(
            "SELECT value FROM acc_meta WHERE key='protocol_version'",
            [],
            |r| r.get(0),
        )
        .expect("meta");
    assert_eq!(protocol, "0.2");
    let hashes: Vec<String> = conn
        .prepare("SELECT generation_hash FROM sessions")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert!(
        hashes
            .iter()
            .all(|h| h != &alice.generation && h.len() == 64),
        "generations stored hashed"
    );
}

#[test]
fn reads_of_a_new_workspace_create_nothing() {
    let world = World::new();
    world.acc(&["status"]).ok_json();
    world.acc(&["sync", "--scope", "full"]).ok_json();
    assert!(
        !world.data_home.join("acc").join("workspaces").exists(),
        "status and sync only read"
    );
}

#[test]
fn a_data_home_inside_the_workspace_is_refused() {
    let world = World::new();
    let inside = world.dir.join(".acc-data");
    let run = world.acc_with(
        &["attach", "--participant", "alice"],
        &[("ACC_DATA_HOME", inside.to_str().expect("utf8"))],
    );
    let error = run.err(2, "data_home_inside_workspace");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("inside the workspace")
    );
    assert!(!inside.exists(), "nothing was written");
    world
        .acc_with(&["status"], &[("ACC_DATA_HOME", "relative/dir")])
        .err(2, "invalid_arguments");
}

#[test]
fn a_store_truncated_to_zero_bytes_is_refused_by_every_command_and_left_alone() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(&alice, &["claim", "--resource", "file:a.rs"])
        .ok_json();
    let path = world.store_path();
    std::fs::File::create(&path).expect("truncate");
    assert_eq!(std::fs::metadata(&path).expect("meta").len(), 0);
    assert_refused_untouched(&world, &path, "store_corrupt");
    for args in [
        vec!["inbox"],
        vec!["claim", "--resource", "file:b.rs"],
        vec!["message", "--subject", "s", "--body", "b"],
        vec!["work", "--summary", "x", "--mode", "edit"],
        vec!["prune", "--apply"],
    ] {
        let error = world.acc_as(&alice, &args).err(4, "store_corrupt");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("is empty"),
            "{args:?}: {error}"
        );
    }
    assert_eq!(
        std::fs::metadata(&path).expect("meta").len(),
        0,
        "nothing was written over it"
    );
    let doctor = world.acc(&["doctor"]);
    let checks = doctor.json()["checks"].clone();
    let store = checks
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "store")
        .cloned()
        .expect("a store check");
    assert_eq!(store["status"], "error", "{store}");
}

#[test]
fn a_sqlite_file_with_no_tables_is_not_taken_for_a_new_store() {
    let world = World::new();
    let (_, path) = foreign_store(&world, |path| {
        let conn = rusqlite::Connection::open(path).expect("create");
        conn.pragma_update(None, "user_version", 7)
            .expect("write a header");
    });
    assert!(std::fs::metadata(&path).expect("meta").len() > 0);
    assert_refused_untouched(&world, &path, "store_corrupt");
}

#[test]
fn a_data_home_that_cannot_hold_a_store_is_named_with_its_cause() {
    let world = World::new();
    // The data home is a file.
    std::fs::create_dir_all(world.data_home.parent().expect("parent")).expect("mkdir");
    std::fs::write(&world.data_home, b"not a directory").expect("file");
    let error = world
        .acc(&["attach", "--participant", "alice"])
        .err(4, "storage_unavailable");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("not a directory") || message.contains("Not a directory"),
        "{message}"
    );
    assert!(
        message.contains(&*world.data_home.to_string_lossy()),
        "names the path: {message}"
    );
    assert_eq!(
        std::fs::read(&world.data_home).expect("read"),
        b"not a directory",
        "left as it was"
    );
}

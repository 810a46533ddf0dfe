//! Rooms across machines on the user's path: `acc room connect|show|push|disconnect` with the
//! real `acc` against a real PostgreSQL server, passwords from a password file as for `psql`,
//! and two data homes with two checkouts at different paths ("two machines") sharing a room.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use acc_tests::pg::{Cluster, Database};
use acc_tests::{Creds, World, race};

/// The committed identity both checkouts share.
const CONFIG: &str = r#"{"schemaVersion":1,"workspaceId":"shared-room"}"#;
/// The layout revision this build writes.
const BUILD: i64 = acc_store::layout::LAYOUT_REVISION;

/// A password file for the database's role with `password`, mode 0600.
fn pgpass(world: &World, db: &Database, password: &str, name: &str) -> PathBuf {
    let file = world.temp.path().join(name);
    std::fs::write(
        &file,
        format!(
            "# the user's own\n127.0.0.1:{}:{}:{}:{password}\n",
            db.port, db.name, db.role
        ),
    )
    .expect("pgpass");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("mode");
    file
}

/// A checkout with the committed identity, its own data home, its password file in force.
fn machine(db: &Database) -> World {
    let world = World::new();
    std::fs::write(world.dir.join("acc.workspace.json"), CONFIG).expect("config");
    let file = pgpass(&world, db, &db.password, "pgpass");
    world.set_env("PGPASSFILE", file);
    world
}

#[test]
fn connect_push_show_and_disconnect_on_the_users_path() {
    let cluster = Cluster::start();
    let db = cluster.database("room cli");
    let world = World::new();

    // A derived identity names another room on every checkout: refused, with the fix.
    let refused = world
        .acc(&["room", "connect", &db.url()])
        .err(2, "invalid_arguments");
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or("")
            .contains("acc config init"),
        "{refused}"
    );
    world.acc(&["config", "init", "--yes"]).ok_json();

    // Work done before there was a room.
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    world.tell(&alice, "bob", "before", "sent before the room");
    let before = world.acc(&["sync", "--scope", "full"]).ok_json();

    // A URL with a password is refused; a wrong password in the password file is the
    // server's refusal, naming the room and never a password; nothing is recorded.
    let with_password = db.url().replace('@', &format!(":{}@", db.password));
    let error = world
        .acc(&["room", "connect", &with_password])
        .err(2, "invalid_arguments");
    assert!(!error.to_string().contains(&db.password), "{error}");
    let wrong = pgpass(&world, &db, "not-the-password", "wrong-pgpass");
    let error = world
        .acc_with(
            &["room", "connect", &db.url()],
            &[("PGPASSFILE", wrong.to_str().expect("a UTF-8 path"))],
        )
        .err(4, "storage_unavailable");
    let message = error["message"].as_str().unwrap_or("").to_string();
    assert!(
        message.contains(&format!("127.0.0.1:{}/{}", db.port, db.name)),
        "{message}"
    );
    assert!(message.contains("28P01"), "{message}");
    assert!(
        !message.contains(&db.password) && !message.contains("not-the-password"),
        "{message}"
    );
    assert_eq!(world.acc(&["room", "show"]).ok_json()["backend"], "sqlite");

    // Connected with the right password file.
    let file = pgpass(&world, &db, &db.password, "pgpass");
    world.set_env("PGPASSFILE", &file);
    let connected = world.acc(&["room", "connect", &db.url()]).ok_json();
    assert_eq!(connected["backend"], "postgres", "{connected}");
    assert_eq!(
        connected["location"],
        format!("postgres://127.0.0.1:{}/{}", db.port, db.name)
    );
    assert!(
        connected["serverVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with(&cluster.major().to_string())),
        "{connected}"
    );
    assert!(
        connected["roundTripMs"].as_f64().is_some_and(|t| t > 0.0),
        "{connected}"
    );
    let human = world.acc_text(&["room", "connect", &db.url()]);
    assert!(human.stdout.contains("acc room push"), "{}", human.stdout);
    let room_file = std::fs::read_to_string(connected["roomFile"].as_str().expect("roomFile"))
        .expect("room file");
    assert!(
        !room_file.contains(&db.password),
        "no password is kept: {room_file}"
    );

    // The SQLite store copied into the empty room; a second push is refused.
    let pushed = world.acc(&["room", "push"]).ok_json();
    assert_eq!(pushed["copied"]["messages"], 1, "{pushed}");
    assert_eq!(pushed["copied"]["participants"], 2, "{pushed}");
    let again = world.acc(&["room", "push"]).err(4, "invalid_data");
    assert!(
        again["message"]
            .as_str()
            .unwrap_or("")
            .contains("already holds records"),
        "{again}"
    );
    // The room holds exactly what the SQLite store held.
    let in_room = world.acc(&["sync", "--scope", "full"]).ok_json();
    assert_eq!(
        in_room, before,
        "the room's full sync equals the SQLite store's"
    );

    // The room works on: the session credentials carried over, a new message is in the room.
    world.tell(&alice, "bob", "after", "sent into the room");
    let inbox = world.acc_as(&bob, &["inbox"]).ok_json();
    assert_eq!(inbox["items"].as_array().map(Vec::len), Some(2), "{inbox}");
    let status = world.acc(&["status"]).ok_json();
    assert_eq!(status["room"]["backend"], "postgres", "{status}");
    assert!(status["room"]["serverVersion"].is_string(), "{status}");
    let doctor = world.acc_text(&["doctor"]);
    assert!(
        doctor.stdout.contains(&format!(
            "in the room at postgres://127.0.0.1:{}/{}",
            db.port, db.name
        )),
        "{}",
        doctor.stdout
    );

    // Disconnected: back on the SQLite store, which the push left as it was.
    let back = world.acc(&["room", "disconnect"]).ok_json();
    assert_eq!(back["backend"], "sqlite");
    let local = world.acc(&["sync", "--scope", "full"]).ok_json();
    assert_eq!(
        local, before,
        "the SQLite store is unchanged by the push and the room's work"
    );
}

#[test]
fn two_machines_share_a_room_one_grant_in_every_claim_race_and_messages_cross() {
    let cluster = Cluster::start();
    let db = cluster.database("two machines");
    let one = machine(&db);
    let two = machine(&db);
    assert_ne!(one.dir, two.dir, "two checkouts at different paths");
    for world in [&one, &two] {
        world.acc(&["room", "connect", &db.url()]).ok_json();
    }
    let alice: Creds = one.attach("alice");
    let bob: Creds = two.attach("bob");
    // Each machine sees the other's session.
    let seen = one.acc(&["status", "--all"]).ok_json().to_string();
    assert!(seen.contains("bob"), "{seen}");

    for round in 0..50 {
        let resource = format!("file:src/race_{round}.rs");
        let mut a = one.command("acc");
        a.args([
            "--json",
            "--session",
            &alice.session,
            "--generation",
            &alice.generation,
        ])
        .args(["claim", "--resource", &resource]);
        let mut b = two.command("acc");
        b.args([
            "--json",
            "--session",
            &bob.session,
            "--generation",
            &bob.generation,
        ])
        .args(["claim", "--resource", &resource]);
        let runs = race(&one, vec![a, b]);
        let granted = runs.iter().filter(|r| r.code == 0).count();
        assert_eq!(granted, 1, "round {round}: exactly one grant: {runs:?}");
        let refused = runs.iter().find(|r| r.code != 0).expect("the other");
        assert_eq!(
            refused.json()["error"]["code"],
            "claim_conflict",
            "round {round}: {refused:?}"
        );
    }
    // A message crosses from one machine to the other.
    let sent = one.tell(&alice, "bob", "across", "from the first machine");
    let id = sent["message"]["messageId"].as_str().expect("messageId");
    let inbox = two.acc_as(&bob, &["inbox"]).ok_json();
    assert_eq!(inbox["items"][0]["messageId"], id, "{inbox}");
    let read = two.acc_as(&bob, &["inbox", "--message", id]).ok_json();
    assert!(
        read.to_string().contains("from the first machine"),
        "{read}"
    );
    // Its receipt moved on the other machine, as the sender sees from the first.
    let receipt = one.receipt(id);
    assert_eq!(receipt["state"], "retrieved", "{receipt}");
}

#[test]
fn next_turn_on_the_second_machine_shows_the_first_machines_message_to_a_real_claude_code() {
    let cluster = Cluster::start();
    let db = cluster.database("next turn across");
    let one = machine(&db);
    let two = machine(&db);
    for world in [&one, &two] {
        world.acc(&["room", "connect", &db.url()]).ok_json();
    }
    // Claude Code on the second machine, with ACC's hooks installed in its own home.
    let home = two.temp.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).expect("home");
    let home_arg = home.to_str().expect("utf8");
    two.acc(&["install", "--client", "claude-code", "--home", home_arg])
        .ok_json();
    let model = acc_capture::model::ModelServer::start();
    let turn = |prompt: &str| {
        let mut command = acc_tests::claude_print(&two, &home, &model, prompt);
        command.env("ACC_PARTICIPANT", "bob");
        let run = two.run(command, "claude -p");
        assert_eq!(
            run.code, 0,
            "claude failed\nstdout: {}\nstderr: {}",
            run.stdout, run.stderr
        );
    };
    turn("hello");
    // The first machine sees the second's Claude Code session, and writes to it.
    let status = one.acc(&["status", "--all"]).ok_json().to_string();
    assert!(status.contains("\"harness\":\"claude-code\""), "{status}");
    let alice = one.attach("alice");
    let sent = one
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                "from afar",
                "--body",
                "written on the first machine",
            ],
        )
        .ok_json();
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    model.clear();
    turn("any news?");
    let seen = acc_tests::model_text(&model);
    assert!(seen.contains("acc-peer-message sender=alice"), "{seen}");
    assert!(seen.contains("written on the first machine"), "{seen}");
    // The first machine reads the receipt the second recorded.
    let history = one
        .acc(&["sync", "--scope", "history", "--message", &id])
        .ok_json();
    let receipt = &history["items"][0]["receipts"][0];
    assert_eq!(receipt["state"], "offered", "{history}");
    assert_eq!(receipt["offer"]["transport"], "next-turn", "{history}");
}

/// A command's extra environment.
type Env<'a> = [(&'a str, &'a str)];

/// The round trips each process makes to the room, as the store counts them
/// (`ACC_TEST_ROUND_TRIPS`: each wait for an answer after the connection's start-up). A count,
/// not a time: the figures `acc-bench room` prints beside its goals, kept from growing back.
/// The data home saw the room before (`room-seen`), so the room's meta travels with the first
/// read. The hook with nothing to deliver reads its session by its key, then next-turn's
/// session, queued messages and repeats read ahead together; the inbox reads the session and
/// its page together; a send reads its session, its recipients' names, the sequence counters
/// and its recipients' sessions and bindings (which its writes do not change) with the meta,
/// then sends its inserts (and a refresh of its presence) with its `COMMIT`. A retry with the
/// same key reads the original's receipts by its number: one more.
#[test]
fn each_operation_on_a_room_makes_the_round_trips_on_record() {
    let world = World::new().on_postgres();
    let hook_input = |event: &str| {
        serde_json::json!({"session_id": "trips", "cwd": world.dir, "hook_event_name": event, "source": "startup", "prompt": "go"})
            .to_string()
    };
    let started = world.hook("claude-code", "SessionStart", &hook_input("SessionStart"));
    assert_eq!(started.code, 0, "{started:?}");
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let trips = |run: &dyn Fn(&Env)| -> u64 {
        let file = world.temp.path().join("trips");
        let _ = std::fs::remove_file(&file);
        let path = file.display().to_string();
        run(&[("ACC_TEST_ROUND_TRIPS", path.as_str())]);
        let counted = std::fs::read_to_string(&file).expect("the store counted its round trips");
        let (trips, connections) = counted.trim().split_once(' ').expect("trips connections");
        assert_eq!(connections, "1", "one connection per process: {counted}");
        trips.parse().expect("a count")
    };
    let hook = trips(&|env| {
        let run = world.hook_with(
            "claude-code",
            "UserPromptSubmit",
            &hook_input("UserPromptSubmit"),
            env,
        );
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.trim().is_empty(), "nothing to deliver: {run:?}");
    });
    let send = trips(&|env| {
        world
            .acc_as_with(
                &alice,
                &["message", "--to", "bob", "--subject", "s", "--body", "b"],
                env,
            )
            .ok_json();
    });
    // With an idempotency key, first and again (the retry answers the original).
    let keyed = |env: &Env| {
        world
            .acc_as_with(
                &alice,
                &[
                    "message",
                    "--to",
                    "bob",
                    "--subject",
                    "k",
                    "--body",
                    "b",
                    "--client-message-id",
                    "key-1",
                ],
                env,
            )
            .ok_json()
    };
    let first = std::cell::RefCell::new(serde_json::Value::Null);
    let keyed_send = trips(&|env| *first.borrow_mut() = keyed(env));
    let retried = trips(&|env| {
        let again = keyed(env);
        assert_eq!(again["message"], first.borrow()["message"], "the original");
    });
    let inbox = trips(&|env| {
        world
            .acc_as_with(&bob, &["inbox", "--limit", "20"], env)
            .ok_json();
    });
    assert_eq!(
        (keyed_send, retried),
        (2, 3),
        "round trips of a send with an idempotency key, and of its retry"
    );
    assert_eq!(
        (hook, send, inbox),
        (2, 2, 1),
        "round trips of (the hook with nothing to deliver, a send, an inbox page)"
    );
}

/// What a data home saw of its room (`room-seen`) spares the next process the meta's own round
/// trip, but never a check: the room's meta comes with the first read and is checked before
/// that read's answer is used. A room that moved to a layout this build cannot use is refused
/// though the record said otherwise; a dropped room is named, and its record goes; a record
/// that does not parse, or names another room, is as good as none.
#[test]
fn what_a_data_home_saw_of_its_room_is_checked_by_the_next_read() {
    let cluster = Cluster::start();
    let db = cluster.database("seen");
    let world = World::new();
    acc_store::connect_default_room(&world.data_home.join("acc"), &db.socket_url())
        .expect("the room");
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    world.tell(&bob, "alice", "note", "for alice");
    let record = world
        .data_home
        .join("acc/workspaces")
        .join(world.workspace_id())
        .join("room-seen");
    let seen = std::fs::read_to_string(&record).expect("the data home's record of the room");
    assert!(seen.starts_with("postgres://"), "{seen}");
    assert!(seen.contains("layout_revision\t"), "{seen}");
    let inbox = || world.acc_as(&alice, &["inbox"]);
    assert_eq!(inbox().ok_json()["items"].as_array().map(Vec::len), Some(1));

    let mut admin = db.config().connect(postgres::NoTls).expect("admin");
    let schema: String = acc_tests::pg::room_schema(&mut admin);
    let original: Vec<(String, String)> = admin
        .query(
            &format!("SELECT key, value FROM {schema}.acc_meta WHERE key LIKE 'layout\\_%'"),
            &[],
        )
        .expect("the layout")
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    let set = |key: &str, value: &str, admin: &mut postgres::Client| {
        admin
            .execute(
                &format!("UPDATE {schema}.acc_meta SET value = $2 WHERE key = $1"),
                &[&key, &value],
            )
            .expect("set the layout");
    };
    set("layout_revision", "999", &mut admin);
    set("layout_readable_by", "999", &mut admin);
    let refused = inbox().err(4, "store_version_unsupported");
    assert!(
        refused["message"].as_str().unwrap_or("").contains("999"),
        "{refused}"
    );
    for (key, value) in &original {
        set(key, value, &mut admin);
    }
    assert_eq!(inbox().ok_json()["items"].as_array().map(Vec::len), Some(1));

    // The record less its clock offset (its second line), which each reading measures afresh.
    let records = |text: &str| {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.remove(1);
        lines.join("\n")
    };
    for junk in [
        "not a record\n".to_string(),
        seen.replacen("postgres://", "postgres://elsewhere", 1),
    ] {
        std::fs::write(&record, junk).expect("junk");
        assert_eq!(inbox().ok_json()["items"].as_array().map(Vec::len), Some(1));
        let rewritten = std::fs::read_to_string(&record).expect("record");
        assert_eq!(
            records(&rewritten),
            records(&seen),
            "the meta read on its own writes the record again"
        );
    }

    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .expect("drop the room");
    let gone = inbox().err(4, "storage_unavailable");
    let message = gone["message"].as_str().unwrap_or("");
    assert!(message.contains("holds no records"), "{gone}");
    assert!(message.contains(&db.name), "{gone}");
    assert!(!record.exists(), "the record of a room that is gone goes");
    // Without the record the room is simply absent, as before it was made.
    world
        .acc_as(&alice, &["inbox"])
        .err(5, "caller_workspace_mismatch");
}

/// A room made at layout revision 3 (before sessions recorded their pid's scope): the room as
/// such a build left it, made here from this build's by taking back what revisions 4 and 5
/// changed, through the server.
fn room_at_layout_3(admin: &mut postgres::Client) -> String {
    let schema: String = acc_tests::pg::room_schema(admin);
    admin
        .batch_execute(&format!(
            "ALTER TABLE {schema}.sessions DROP COLUMN pid_scope; \
             CREATE INDEX messages_by_thread ON {schema}.messages(thread_id, seq); \
             UPDATE {schema}.acc_meta SET value = '3' WHERE key = 'layout_revision'; \
             UPDATE {schema}.acc_meta SET value = '0' WHERE key = 'layout_readable_by';"
        ))
        .expect("take the room back to layout 3");
    schema
}

/// The room's layout revision and whether its sessions keep `pid_scope`, as the server says.
fn room_layout(admin: &mut postgres::Client, schema: &str) -> (String, bool) {
    let revision: String = admin
        .query_one(
            &format!("SELECT value FROM {schema}.acc_meta WHERE key = 'layout_revision'"),
            &[],
        )
        .expect("revision")
        .get(0);
    let scoped: bool = admin
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'sessions' AND column_name = 'pid_scope')",
            &[&schema],
        )
        .expect("columns")
        .get(0);
    (revision, scoped)
}

/// A room follows the store-upgrade rules: one of an older layout keeps working for reads and
/// hooks (which never upgrade) and says its upgrade is pending; `acc store upgrade --dry-run`
/// names its steps and changes nothing; the first write-open upgrades it in one transaction,
/// and says so on stderr; a table another connection holds makes the upgrade give up after a
/// second, leaving the room as it was and the command working.
#[test]
fn a_room_of_an_older_layout_is_used_as_it_is_and_upgraded_at_the_first_write() {
    let cluster = Cluster::start();
    let db = cluster.database("layout");
    let world = World::new();
    acc_store::connect_default_room(&world.data_home.join("acc"), &db.socket_url())
        .expect("the room");
    let alice = world.attach("alice");
    let record = world
        .data_home
        .join("acc/workspaces")
        .join(world.workspace_id())
        .join("room-seen");
    let mut admin = db.config().connect(postgres::NoTls).expect("admin");
    let schema = room_at_layout_3(&mut admin);
    // This data home first meets the room at layout 3 (it did not see it at 4 before).
    std::fs::remove_file(&record).expect("the data home's record of the room");

    // Reads and hooks use it as it is.
    let status = world.status();
    assert_eq!(status["store"]["revision"], 3, "{status}");
    assert_eq!(status["store"]["pendingUpgrade"], true, "{status}");
    let hooked = world.claude_session_start("conversation-1", std::process::id());
    assert_eq!(hooked.code, 0, "{}", hooked.stderr);
    assert_eq!(room_layout(&mut admin, &schema), ("3".into(), false));
    let plan = world.acc(&["store", "upgrade", "--dry-run"]).ok_json();
    assert_eq!(
        (plan["fromRevision"].as_i64(), plan["toRevision"].as_i64()),
        (Some(3), Some(BUILD)),
        "{plan}"
    );
    assert!(
        plan["steps"][0]
            .as_str()
            .unwrap_or("")
            .contains("pid_scope"),
        "{plan}"
    );
    assert_eq!(
        room_layout(&mut admin, &schema),
        ("3".into(), false),
        "a dry run changes nothing"
    );

    // A table held by another connection: the upgrade waits a second, gives up, and the
    // command does its work on the old layout.
    let mut holder = db.config().connect(postgres::NoTls).expect("holder");
    let mut held = holder.transaction().expect("begin");
    held.batch_execute(&format!(
        "LOCK TABLE {schema}.sessions IN ACCESS SHARE MODE"
    ))
    .expect("hold the sessions table");
    let bob = world.attach("bob");
    world.tell(&bob, "alice", "while held", "the room is busy");
    assert_eq!(room_layout(&mut admin, &schema), ("3".into(), false));
    let refused = world.acc(&["store", "upgrade"]).err(3, "timeout");
    let message = refused["message"].as_str().unwrap_or("");
    assert!(
        message.contains("lock timeout") && message.contains("nothing was changed"),
        "{refused}"
    );
    assert_eq!(room_layout(&mut admin, &schema), ("3".into(), false));
    held.rollback().expect("let go");

    // The first write-open after upgrades it, and says so.
    let carol = world.command("acc");
    let mut carol = carol;
    carol.args(["--json", "attach", "--participant", "carol"]);
    let attached = world.run(carol, "acc attach");
    assert_eq!(attached.code, 0, "{}", attached.stderr);
    assert!(
        attached
            .stderr
            .contains(&format!("from layout revision 3 to {BUILD}")),
        "{}",
        attached.stderr
    );
    assert_eq!(room_layout(&mut admin, &schema), (BUILD.to_string(), true));
    let status = world.status();
    assert_eq!(status["store"]["revision"], BUILD, "{status}");
    assert_eq!(status["store"]["pendingUpgrade"], false, "{status}");
    // Nothing was lost: the note sent on the old layout is in alice's inbox, and the session
    // opened on it is there, its pid tested here as before (it recorded no scope).
    let inbox = world.acc_as(&alice, &["inbox"]).ok_json();
    assert_eq!(inbox["items"].as_array().map(Vec::len), Some(1), "{inbox}");
    let hooked = world.status()["sessions"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["harness"] == "claude-code").cloned())
        .expect("the hooked session");
    assert_eq!(hooked["presence"], "online", "{hooked}");
    let again = world.acc(&["store", "upgrade"]).ok_json();
    assert_eq!(again["changed"], false, "idempotent: {again}");
}

/// A push into an empty room that an older build created (layout 3) upgrades it first, in the
/// same way the first write does, then copies every row (pid scopes included); it never fails
/// on a column the older layout lacks.
#[test]
fn a_push_into_an_empty_room_of_an_older_layout_upgrades_it_then_copies() {
    let cluster = Cluster::start();
    let db = cluster.database("push layout");
    let world = World::new();
    world.acc(&["config", "init", "--yes"]).ok_json();
    let alice = world.attach("alice");
    world.attach("bob");
    world.tell(&alice, "bob", "before", "sent before the room");
    // A hooked session records its client's pid, and where that pid means something.
    let hooked = world.claude_session_start("conversation-1", std::process::id());
    assert_eq!(hooked.code, 0, "{}", hooked.stderr);
    let file = pgpass(&world, &db, &db.password, "pgpass");
    world.set_env("PGPASSFILE", &file);
    world.acc(&["room", "connect", &db.url()]).ok_json();
    let mut admin = db.config().connect(postgres::NoTls).expect("admin");
    let schema = room_at_layout_3(&mut admin);

    let pushed = world.acc(&["room", "push"]).ok_json();
    assert_eq!(pushed["copied"]["messages"], 1, "{pushed}");
    assert_eq!(pushed["copied"]["sessions"], 3, "{pushed}");
    assert_eq!(room_layout(&mut admin, &schema), (BUILD.to_string(), true));
    let scopes: i64 = admin
        .query_one(
            &format!("SELECT count(*) FROM {schema}.sessions WHERE pid_scope IS NOT NULL"),
            &[],
        )
        .expect("scopes")
        .get(0);
    let local_scopes = {
        let store = acc_tests::store_path(&world.data_home, &world.workspace_id());
        let conn = rusqlite::Connection::open(store).expect("the local store");
        conn.query_row(
            "SELECT count(*) FROM sessions WHERE pid_scope IS NOT NULL",
            [],
            |r| r.get::<_, i64>(0),
        )
        .expect("local scopes")
    };
    assert!(
        local_scopes > 0,
        "the local sessions recorded their pid scopes"
    );
    assert_eq!(scopes, local_scopes, "every pid scope was copied");
    assert_eq!(world.status()["store"]["revision"], BUILD);
}

/// The round trips each MCP tool makes on a connected `acc-mcp` (`ACC_TEST_TOOL_TRIPS`: each
/// call's count, the store's own, as for the CLI above): at most two for every tool, once its
/// session is resolved (the first call resolves it: the meta, the session, its writes). Reads
/// go in two waves (what needs nothing known, then what it names); writes read what they
/// need with the opening and the counters, and send their writes with `COMMIT`; a read-only
/// tool's presence refresh travels with its first round trip.
#[test]
fn each_mcp_tool_on_a_connected_acc_mcp_makes_at_most_two_round_trips() {
    let world = World::new().on_postgres();
    let bob = world.attach("bob");
    let carol_file = world.temp.path().join("tool-trips");
    let mut command = world.command("acc-mcp");
    command
        .env("ACC_MCP_PARTICIPANT", "carol")
        .env("ACC_MCP_WORKSPACE", &world.dir)
        .env("ACC_TEST_TOOL_TRIPS", &carol_file);
    let mut mcp = acc_tests::JsonRpcChild::spawn(command);
    mcp.request(
        1,
        "initialize",
        serde_json::json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    let mut id = 1;
    let mut call = |tool: &str, arguments: serde_json::Value| -> serde_json::Value {
        id += 1;
        let answer = mcp.request(
            id,
            "tools/call",
            serde_json::json!({ "name": tool, "arguments": arguments }),
        );
        let result = answer["result"].clone();
        assert_ne!(result["isError"], true, "{tool}: {result}");
        result["structuredContent"].clone()
    };
    // The first call resolves carol's session.
    call("acc_status", serde_json::json!({}));
    // Bob asks carol something and sends her a note to acknowledge; she holds an intent with a
    // hint, so status and sync have attention to read.
    let asked = world.ask(&bob, "carol", "a question", "which way?");
    let asked = asked["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    let noted = world
        .acc_as(
            &bob,
            &[
                "message",
                "--to",
                "carol",
                "--kind",
                "decision",
                "--subject",
                "note",
                "--body",
                "b",
                "--obligation",
                "acknowledge",
            ],
        )
        .ok_json();
    let noted = noted["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    world
        .acc_as(&bob, &["claim", "--resource", "file:src/bob.rs"])
        .ok_json();
    let _ = std::fs::remove_file(&carol_file);
    let calls: Vec<(&str, serde_json::Value)> = vec![
        ("acc_status", serde_json::json!({})),
        ("acc_status", serde_json::json!({})),
        (
            "acc_work",
            serde_json::json!({"summary": "parser", "mode": "edit", "resourceHints": ["file:src/bob.rs"]}),
        ),
        ("acc_status", serde_json::json!({})),
        ("acc_sync", serde_json::json!({})),
        ("acc_sync", serde_json::json!({"scope": "history"})),
        (
            "acc_sync",
            serde_json::json!({"scope": "history", "messageId": asked}),
        ),
        ("acc_inbox", serde_json::json!({})),
        ("acc_inbox", serde_json::json!({"messageId": asked})),
        (
            "acc_reply",
            serde_json::json!({"messageId": asked, "body": "this way"}),
        ),
        ("acc_ack", serde_json::json!({"messageId": noted})),
        (
            "acc_message",
            serde_json::json!({"to": ["bob"], "subject": "s", "body": "b"}),
        ),
        (
            "acc_request",
            serde_json::json!({"toParticipantId": "bob", "title": "review?"}),
        ),
        (
            "acc_claim",
            serde_json::json!({"action": "acquire", "resources": ["file:src/a.rs", "dir:docs/"]}),
        ),
        (
            "acc_claim",
            serde_json::json!({"action": "acquire", "resource": "file:src/c.rs"}),
        ),
        (
            "acc_release",
            serde_json::json!({"resources": ["file:src/a.rs"]}),
        ),
        ("acc_release", serde_json::json!({"all": true})),
        ("acc_work", serde_json::json!({"clear": true})),
    ];
    for (tool, arguments) in &calls {
        let value = call(tool, arguments.clone());
        // A claim taken alone is renewed at once.
        if let Some(claim) = value["claimId"].as_str().filter(|_| *tool == "acc_claim") {
            call(
                "acc_claim",
                serde_json::json!({"action": "renew", "claimId": claim}),
            );
            call(
                "acc_claim",
                serde_json::json!({"action": "renew", "claimId": claim}),
            );
        }
    }
    call("acc_sync", serde_json::json!({"scope": "full"}));
    // A handoff ends the session: last.
    call(
        "acc_finish",
        serde_json::json!({"goal": "the parser", "toParticipantId": "bob"}),
    );
    let counted = std::fs::read_to_string(&carol_file).expect("the tool trips");
    let table: Vec<(String, u64)> = counted
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(tool, n)| (tool.to_string(), n.parse().expect("a count")))
        .collect();
    eprintln!("round trips per MCP tool call: {table:?}");
    // Every tool the server offers was counted.
    for tool in acc_mcp::tools::names() {
        assert!(
            table.iter().any(|(t, _)| t == tool),
            "{tool} was not counted: {table:?}"
        );
    }
    let over: Vec<&(String, u64)> = table.iter().filter(|(_, n)| *n > 2).collect();
    assert!(
        over.is_empty(),
        "tools over two round trips: {over:?} in {table:?}"
    );
    assert!(mcp.finish(std::time::Duration::from_secs(20)).success());
}

/// The round trips of each hook event of a hooked client on a room (a whole process each,
/// its connection's start-up not counted). At most two for every event but a SessionStart that
/// opens (or reopens) its session, a write of two, before it tells the model who is here, a
/// read of one: the known exception, with issue 56's item 5 still open for it. A resumed
/// session's start reads its session and who is here: two.
#[test]
fn each_hook_event_makes_the_round_trips_on_record() {
    let world = World::new().on_postgres();
    let trips = |event: &str, source: &str| -> u64 {
        let file = world.temp.path().join("hook-trips");
        let _ = std::fs::remove_file(&file);
        let input = serde_json::json!({
            "session_id": "hooked", "cwd": world.dir, "hook_event_name": event, "source": source,
            "prompt": "go", "tool_name": "Write",
            "tool_input": { "file_path": world.dir.join("free.rs"), "content": "x" },
        })
        .to_string();
        let path = file.display().to_string();
        let run = world.hook_with(
            "claude-code",
            event,
            &input,
            &[("ACC_TEST_ROUND_TRIPS", path.as_str())],
        );
        assert_eq!(run.code, 0, "{event}: {run:?}");
        let counted = std::fs::read_to_string(&file).expect("the store counted its round trips");
        counted
            .split_whitespace()
            .next()
            .and_then(|t| t.parse().ok())
            .expect("a count")
    };
    // A first session makes the room's records; the counts are of the ones after it.
    trips("SessionStart", "startup");
    trips("SessionEnd", "");
    let table = [
        ("SessionStart (new)", trips("SessionStart", "startup"), 3),
        ("UserPromptSubmit", trips("UserPromptSubmit", ""), 2),
        ("PreToolUse", trips("PreToolUse", ""), 1),
        ("Stop", trips("Stop", ""), 1),
        ("SessionStart (resume)", trips("SessionStart", "resume"), 2),
        ("SessionEnd", trips("SessionEnd", ""), 2),
        // A resume of a session that ended reopens it: a write, as a new one.
        (
            "SessionStart (resume after its end)",
            trips("SessionStart", "resume"),
            5,
        ),
    ];
    eprintln!("round trips per hook event: {table:?}");
    for (event, counted, on_record) in table {
        assert!(
            counted <= on_record,
            "{event}: {counted} round trips, on record {on_record}: {table:?}"
        );
    }
}

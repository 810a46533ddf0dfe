//! A room across separate hosts: a database host and host A as network namespaces the test
//! makes, this machine's namespace as host B (where the real clients and the scripted model
//! run), each agent host on a veth link of its own to the database host, with its own HOME,
//! data home and checkout path. The server offers TLS from a CA the test makes; host A reaches
//! it by name (`db.acc.test`), host B by address. A link is cut by setting the database host's
//! end of its veth down (a black hole: packets vanish, nothing answers).
//!
//! The promises: TLS as psql users write it (and never plain text to another host unless they
//! asked), one grant per claim race from both hosts, messages across both ways and into a
//! real client's model request, a guarded claim that stops a real client's write on the other
//! host (and fails open, saying so, while that host is cut off), commands and hooks within
//! their budgets during a black hole, a connected `acc-mcp` that answers within its bound and
//! serves again after the heal, nothing lost or doubled through a flapping link or a killed
//! server.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acc_tests::certs::{Ca, Validity};
use acc_tests::netns::{DB_NAME, Hosts, OTHER_NAME};
use acc_tests::pg::{Cluster, Database, Options, ServerTls};
use acc_tests::{Creds, JsonRpcChild, World};
use serde_json::{Value, json};

/// The committed identity every checkout shares.
const CONFIG: &str =
    r#"{"schemaVersion":1,"workspaceId":"hosts-room","policy":{"claimMode":"guarded"}}"#;

/// The bound within which a connected `acc-mcp` answers during a black hole (docs/rooms.md).
const MCP_BOUND: Duration = Duration::from_secs(10);

/// A database host with a TLS-only server, and the two agent hosts.
struct Site {
    /// The server (dropped first: stopped by its pid before its namespace goes).
    cluster: Cluster,
    db: Database,
    /// The CA that signed the server's certificate, and one that did not.
    ca: PathBuf,
    other_ca: PathBuf,
    pki: tempfile::TempDir,
    hosts: Hosts,
}

/// The server's certificate names the host and both of its addresses.
fn site() -> Site {
    let hosts = Hosts::new();
    let pki = tempfile::tempdir().expect("pki dir");
    let ca = Ca::new(pki.path(), "room-ca");
    let other = Ca::new(pki.path(), "other-ca");
    let server = ca.issue(
        pki.path(),
        "server",
        DB_NAME,
        &[DB_NAME, &hosts.a.db_addr, &hosts.b.db_addr],
        Validity::Current,
    );
    let cluster = Cluster::start_with(Options {
        netns: Some(hosts.db_ns.clone()),
        listen: vec![hosts.a.db_addr.clone(), hosts.b.db_addr.clone()],
        tls: Some(ServerTls {
            cert: server,
            client_ca: Some(ca.cert.clone()),
        }),
        hba: vec![
            "hostssl all +acc_cert 10.0.0.0/8 cert".into(),
            "hostssl all all 10.0.0.0/8 scram-sha-256".into(),
        ],
        port: None,
    });
    let db = cluster.database("hosts");
    // A client certificate for the role `certified` (certificate login), signed by the CA the
    // server trusts for them.
    ca.issue(
        pki.path(),
        "certified",
        "certified",
        &["certified"],
        Validity::Current,
    );
    Site {
        cluster,
        db,
        ca: ca.cert.clone(),
        other_ca: other.cert.clone(),
        pki,
        hosts,
    }
}

impl Site {
    /// Host A's URL: by name, no `sslmode` (ACC's default across a network: verify-full).
    fn url_a(&self) -> String {
        format!(
            "postgres://{}@{DB_NAME}:{}/{}?sslrootcert={}",
            self.db.role,
            self.db.port,
            self.db.name,
            self.ca.display()
        )
    }

    /// Host B's URL: by address, verify-full written out.
    fn url_b(&self) -> String {
        format!(
            "postgres://{}@{}:{}/{}?sslmode=verify-full&sslrootcert={}",
            self.db.role,
            self.hosts.b.db_addr,
            self.db.port,
            self.db.name,
            self.ca.display()
        )
    }

    /// A checkout on host A (`a`) or B, with its own HOME and a password file for the room.
    fn machine(&self, on_a: bool) -> World {
        self.machine_for(on_a, &[&self.db])
    }

    /// [`Site::machine`] with the passwords of `databases` in its password file.
    fn machine_for(&self, on_a: bool, databases: &[&Database]) -> World {
        let world = if on_a {
            World::new().on_host(&self.hosts.a_ns)
        } else {
            World::new()
        };
        std::fs::write(world.dir.join("acc.workspace.json"), CONFIG).expect("config");
        let home = world.temp.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let pgpass = home.join(".pgpass");
        let lines: String = databases
            .iter()
            .map(|db| format!("*:{}:{}:{}:{}\n", db.port, db.name, db.role, db.password))
            .collect();
        std::fs::write(&pgpass, lines).expect("pgpass");
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).expect("mode");
        world.set_env("HOME", &home);
        world
    }

    /// Both hosts' checkouts, connected to the room.
    fn machines(&self) -> (World, World) {
        let a = self.machine(true);
        let b = self.machine(false);
        a.acc(&["room", "connect", &self.url_a()]).ok_json();
        b.acc(&["room", "connect", &self.url_b()]).ok_json();
        (a, b)
    }
}

fn room_file(world: &World) -> Option<PathBuf> {
    walk(&world.data_home)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "room"))
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `acc claim --resource RESOURCE` as `who` on `world`'s host, not run yet (for a race).
fn claim(world: &World, who: &Creds, resource: &str) -> std::process::Command {
    let mut command = world.command("acc");
    command
        .args(["--json", "--session", &who.session])
        .args(["--generation", &who.generation])
        .args(["claim", "--resource", resource]);
    command
}

/// One case of `acc room connect` on a host.
struct Case {
    what: &'static str,
    on_a: bool,
    url: String,
    env: Vec<(&'static str, String)>,
    /// `Ok(transport words)` or `Err(words of the refusal)`.
    expect: Result<&'static str, Vec<String>>,
    /// Whether the view warns that the room is not encrypted.
    warns: bool,
}

#[test]
fn tls_as_psql_users_write_it_and_never_plain_text_to_another_host_unasked() {
    let site = site();
    let hosts = &site.hosts;
    let db = &site.db;
    // A server without TLS on the same host, and one whose certificate has expired.
    let plain = Cluster::start_with(Options {
        netns: Some(hosts.db_ns.clone()),
        listen: vec![hosts.a.db_addr.clone(), hosts.b.db_addr.clone()],
        tls: None,
        hba: vec!["host all all 10.0.0.0/8 scram-sha-256".into()],
        port: None,
    });
    let plain_db = plain.database("hosts");
    let ca = Ca::new(site.pki.path(), "expiring-ca");
    let expired = Cluster::start_with(Options {
        netns: Some(hosts.db_ns.clone()),
        listen: vec![hosts.a.db_addr.clone()],
        tls: Some(ServerTls {
            cert: ca.issue(
                site.pki.path(),
                "expired",
                DB_NAME,
                &[DB_NAME],
                Validity::Expired,
            ),
            client_ca: None,
        }),
        hba: vec!["hostssl all all 10.0.0.0/8 scram-sha-256".into()],
        port: None,
    });
    let expired_db = expired.database("hosts");
    let url = |host: &str, target: &Database, query: &str| {
        format!(
            "postgres://{}@{host}:{}/{}{query}",
            target.role, target.port, target.name
        )
    };
    let ca_file = site.ca.display().to_string();
    let other_ca = site.other_ca.display().to_string();
    let b_addr = hosts.b.db_addr.clone();
    // A client certificate for a role of the `acc_cert` group (certificate login: no password).
    let mut admin = site.cluster.admin().expect("admin");
    admin
        .batch_execute(&format!(
            "CREATE ROLE acc_cert NOLOGIN; CREATE ROLE certified LOGIN IN ROLE acc_cert, {}",
            db.role
        ))
        .expect("a certificate role");
    let verified = "checked against sslrootcert";
    let cases = vec![
        Case {
            what: "by name, no sslmode: verify-full against the CA named",
            on_a: true,
            url: url(DB_NAME, db, &format!("?sslrootcert={ca_file}")),
            env: vec![],
            expect: Ok("and for the host's name"),
            warns: false,
        },
        Case {
            what: "by address, verify-full",
            on_a: false,
            url: url(
                &b_addr,
                db,
                &format!("?sslmode=verify-full&sslrootcert={ca_file}"),
            ),
            env: vec![],
            expect: Ok("and for the host's name"),
            warns: false,
        },
        Case {
            what: "sslrootcert=system, the system's roots holding the CA (a managed server)",
            on_a: true,
            url: url(DB_NAME, db, "?sslrootcert=system"),
            env: vec![("SSL_CERT_FILE", ca_file.clone())],
            expect: Ok("the system's trusted roots and for the host's name"),
            warns: false,
        },
        Case {
            what: "SCRAM with channel binding required (SCRAM-SHA-256-PLUS over the TLS)",
            on_a: false,
            url: url(
                &b_addr,
                db,
                &format!("?sslmode=verify-full&sslrootcert={ca_file}&channel_binding=require"),
            ),
            env: vec![],
            expect: Ok("and for the host's name"),
            warns: false,
        },
        Case {
            what: "PGSSLMODE and PGSSLROOTCERT from the environment",
            on_a: true,
            url: url(DB_NAME, db, ""),
            env: vec![
                ("PGSSLMODE", "verify-ca".into()),
                ("PGSSLROOTCERT", ca_file.clone()),
            ],
            expect: Ok(verified),
            warns: false,
        },
        Case {
            what: "no sslmode and no root named: the system's roots, which do not hold the CA",
            on_a: true,
            url: url(DB_NAME, db, ""),
            env: vec![("SSL_CERT_FILE", other_ca.clone())],
            expect: Err(vec![
                "not signed by a root in the system's trusted roots".into(),
                DB_NAME.into(),
            ]),
            warns: false,
        },
        Case {
            what: "another CA",
            on_a: false,
            url: url(
                &b_addr,
                db,
                &format!("?sslmode=verify-full&sslrootcert={other_ca}"),
            ),
            env: vec![],
            expect: Err(vec![
                format!("not signed by a root in sslrootcert `{other_ca}`"),
                b_addr.clone(),
            ]),
            warns: false,
        },
        Case {
            what: "a name the certificate does not hold",
            on_a: true,
            url: url(
                OTHER_NAME,
                db,
                &format!("?sslmode=verify-full&sslrootcert={ca_file}"),
            ),
            env: vec![],
            expect: Err(vec![format!(
                "its certificate does not name the host `{OTHER_NAME}`"
            )]),
            warns: false,
        },
        Case {
            what: "the same name with verify-ca (the chain only)",
            on_a: true,
            url: url(
                OTHER_NAME,
                db,
                &format!("?sslmode=verify-ca&sslrootcert={ca_file}"),
            ),
            env: vec![],
            expect: Ok(verified),
            warns: false,
        },
        Case {
            what: "an expired certificate",
            on_a: true,
            url: url(
                DB_NAME,
                &expired_db,
                &format!("?sslrootcert={}", ca.cert.display()),
            ),
            env: vec![],
            expect: Err(vec!["its certificate has expired".into()]),
            warns: false,
        },
        Case {
            what: "require without a root: TLS, unchecked",
            on_a: false,
            url: url(&b_addr, db, "?sslmode=require"),
            env: vec![],
            expect: Ok("not checked"),
            warns: false,
        },
        Case {
            what: "allow against a TLS-only server: plain text refused, then TLS",
            on_a: false,
            url: url(&b_addr, db, "?sslmode=allow"),
            env: vec![],
            expect: Ok("not checked"),
            warns: false,
        },
        Case {
            what: "disable against a TLS-only server: the server refuses plain text",
            on_a: false,
            url: url(&b_addr, db, "?sslmode=disable"),
            env: vec![],
            expect: Err(vec!["no encryption".into()]),
            warns: false,
        },
        Case {
            what: "no sslmode against a server without TLS: refused, nothing in plain text",
            on_a: true,
            url: url(DB_NAME, &plain_db, &format!("?sslrootcert={ca_file}")),
            env: vec![],
            expect: Err(vec![format!("the server at {DB_NAME} offers no TLS")]),
            warns: false,
        },
        Case {
            what: "verify-full against a server without TLS",
            on_a: false,
            url: url(
                &b_addr,
                &plain_db,
                &format!("?sslmode=verify-full&sslrootcert={ca_file}"),
            ),
            env: vec![],
            expect: Err(vec!["offers no TLS".into()]),
            warns: false,
        },
        Case {
            what: "disable, asked for: plain text, and said so",
            on_a: true,
            url: url(DB_NAME, &plain_db, "?sslmode=disable"),
            env: vec![],
            expect: Ok("NOT ENCRYPTED"),
            warns: true,
        },
        Case {
            what: "prefer against a server without TLS: plain text, and said so",
            on_a: false,
            url: url(&b_addr, &plain_db, "?sslmode=prefer"),
            env: vec![],
            expect: Ok("NOT ENCRYPTED"),
            warns: true,
        },
        Case {
            what: "a client certificate (certificate login)",
            on_a: true,
            url: format!(
                "postgres://certified@{DB_NAME}:{}/{}?sslrootcert={ca_file}&sslcert={}&sslkey={}",
                db.port,
                db.name,
                site.pki.path().join("certified.crt").display(),
                site.pki.path().join("certified.key").display()
            ),
            env: vec![],
            expect: Ok("and for the host's name"),
            warns: false,
        },
    ];
    let mut failures = Vec::new();
    for case in &cases {
        let world = site.machine_for(case.on_a, &[db, &plain_db, &expired_db]);
        let env: Vec<(&str, &str)> = case.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let started = Instant::now();
        let run = world.acc_with(&["room", "connect", &case.url], &env);
        let took = started.elapsed();
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !said.contains(&db.password) && !said.contains(&plain_db.password),
            "{}: a password in the output: {said}",
            case.what
        );
        match &case.expect {
            Ok(words) => {
                if run.code != 0 {
                    failures.push(format!("{}: refused: {said}", case.what));
                    continue;
                }
                let view = run.json();
                let transport = view["transport"].as_str().unwrap_or_default();
                if !transport.contains(words) || view["notEncrypted"].is_string() != case.warns {
                    failures.push(format!("{}: {view}", case.what));
                }
                // Every surface says so when the room is not encrypted.
                if case.warns {
                    let shown = world.acc_text(&["room", "show"]);
                    let status = world.acc_text(&["status"]);
                    let doctor = world.acc_text(&["doctor"]);
                    for (surface, text) in [
                        ("room show", &shown),
                        ("status", &status),
                        ("doctor", &doctor),
                    ] {
                        if !text.stdout.contains("not encrypted") {
                            failures.push(format!(
                                "{}: {surface} does not warn: {}",
                                case.what, text.stdout
                            ));
                        }
                    }
                }
            }
            Err(words) => {
                let refused = run.code == 4
                    && words.iter().all(|w| said.contains(w.as_str()))
                    && room_file(&world).is_none();
                if !refused {
                    failures.push(format!(
                        "{}: expected exit 4 naming {words:?}, nothing recorded; got {} ({took:?}): {said}",
                        case.what, run.code
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_room_named_by_a_service_follows_the_service_file_and_a_readable_password_file_is_refused() {
    let site = site();
    let world = site.machine(true);
    let home = world.temp.path().join("home");
    let services = home.join(".pg_service.conf");
    let section = |root: &Path| {
        format!(
            "# the team's rooms\n[team]\nhost={DB_NAME}\nport={}\ndbname={}\nuser={}\nsslmode=verify-full\nsslrootcert={}\n",
            site.db.port,
            site.db.name,
            site.db.role,
            root.display()
        )
    };
    std::fs::write(&services, section(&site.ca)).expect("service file");
    let connected = world.acc(&["room", "connect", "service=team"]).ok_json();
    assert!(
        connected["transport"]
            .as_str()
            .is_some_and(|t| t.contains("for the host's name")),
        "{connected}"
    );
    assert_eq!(
        std::fs::read_to_string(room_file(&world).expect("room file"))
            .expect("read")
            .trim(),
        "service=team",
        "the room is recorded by its service's name"
    );
    let alice = world.attach("alice");
    // The service file edited later (another CA): the next command follows it, and is refused.
    std::fs::write(&services, section(&site.other_ca)).expect("edit");
    let refused = world
        .acc_as(&alice, &["inbox"])
        .err(4, "storage_unavailable");
    assert!(
        refused.to_string().contains("not signed by a root"),
        "{refused}"
    );
    std::fs::write(&services, section(&site.ca)).expect("edit back");
    world.acc_as(&alice, &["inbox"]).ok_json();
    // The URL form of the same service.
    let other = site.machine(true);
    std::fs::write(
        other.temp.path().join("home/.pg_service.conf"),
        section(&site.ca),
    )
    .expect("service file");
    other
        .acc(&["room", "connect", "postgres:///?service=team"])
        .ok_json();
    // A password file others can read is not used, and a warning names it.
    let pgpass = other.temp.path().join("home/.pgpass");
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).expect("mode");
    let run = other.acc(&["status"]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        run.stderr.contains(&pgpass.display().to_string()) && run.stderr.contains("0644"),
        "{}",
        run.stderr
    );
    let doctor = other.acc_text(&["doctor"]);
    assert!(
        doctor.stdout.contains("password file") && doctor.stdout.contains("chmod 600"),
        "{}",
        doctor.stdout
    );
}

#[test]
fn claims_raced_from_two_hosts_grant_once_and_messages_cross_both_ways() {
    let site = site();
    let (one, two) = site.machines();
    let alice: Creds = one.attach("alice");
    let bob: Creds = two.attach("bob");
    for round in 0..50 {
        let resource = format!("file:src/race_{round}.rs");
        let runs = acc_tests::race(
            &one,
            vec![claim(&one, &alice, &resource), claim(&two, &bob, &resource)],
        );
        let granted = runs.iter().filter(|r| r.code == 0).count();
        assert_eq!(granted, 1, "round {round}: exactly one grant: {runs:?}");
        let refused = runs.iter().find(|r| r.code != 0).expect("the other");
        assert_eq!(
            refused.json()["error"]["code"],
            "claim_conflict",
            "{refused:?}"
        );
    }
    for (from, from_world, to, to_name, to_world) in [
        (&alice, &one, &bob, "bob", &two),
        (&bob, &two, &alice, "alice", &one),
    ] {
        let sent = from_world.tell(from, to_name, "across", "from the other host");
        let id = sent["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string();
        let read = to_world.acc_as(to, &["inbox", "--message", &id]).ok_json();
        assert!(read.to_string().contains("from the other host"), "{read}");
        assert_eq!(from_world.receipt(&id)["state"], "retrieved");
    }
}

/// One tool call's result, and how long it took.
fn call(child: &mut JsonRpcChild, id: u64, tool: &str, arguments: Value) -> (Value, Duration) {
    let started = Instant::now();
    let answer = child.request(
        id,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    );
    (answer["result"].clone(), started.elapsed())
}

/// The subjects of `who`'s inbox whose subject starts with `prefix`, as many times as each is
/// there (every page).
fn subjects(world: &World, who: &Creds, prefix: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = vec!["inbox", "--limit", "100"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c.as_str()]);
        }
        let page = world.acc_as(who, &args).ok_json();
        for item in page["items"].as_array().into_iter().flatten() {
            if let Some(subject) = item["subject"].as_str().filter(|s| s.starts_with(prefix)) {
                seen.push(subject.to_string());
            }
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    seen.sort();
    seen
}

/// `n` keyed sends from `from` on `world` to `to`, each retried until it succeeds (bounded);
/// the exit codes of the failed attempts.
fn keyed_sends(world: &World, from: &Creds, to: &str, prefix: &str, n: usize) -> Vec<i32> {
    let mut failed = Vec::new();
    for i in 0..n {
        let key = format!("{prefix}-{i:02}");
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let run = world.acc_as(
                from,
                &[
                    "message",
                    "--to",
                    to,
                    "--subject",
                    &key,
                    "--body",
                    "b",
                    "--client-message-id",
                    &key,
                ],
            );
            if run.code == 0 {
                break;
            }
            failed.push(run.code);
            assert!(Instant::now() < deadline, "{key} never went: {run:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    failed
}

#[test]
fn a_black_hole_partition_of_one_host_answers_within_bounds_and_heals_without_a_restart() {
    let site = site();
    let (one, two) = site.machines();
    let alice = one.attach("alice");
    let bob = two.attach("bob");
    let input = json!({"session_id": "s1", "cwd": two.dir, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}).to_string();
    assert_eq!(two.hook("claude-code", "UserPromptSubmit", &input).code, 0);
    let mut server = two.mcp("carol");
    let (up, _) = call(&mut server, 2, "acc_status", json!({}));
    assert_ne!(up["isError"], true, "{up}");
    // A follower on B, streaming the room's events through the cut.
    let mut follower = two.follower(&bob);

    site.hosts.cut_b();
    // The connected acc-mcp's next call, sent into the dark: answered within the bound.
    let mut id = 2;
    for attempt in ["on its connection", "on a new connection"] {
        id += 1;
        let (down, took) = call(&mut server, id, "acc_status", json!({}));
        assert_eq!(down["isError"], true, "{attempt}: {down}");
        assert_eq!(
            down["structuredContent"]["error"]["code"], "storage_unavailable",
            "{attempt}: {down}"
        );
        assert!(took < MCP_BOUND, "{attempt}: answered after {took:?}");
        eprintln!("acc-mcp during the black hole, {attempt}: answered in {took:?}");
    }
    // Commands exit 4 within their budget; nothing else.
    for args in [
        vec!["status"],
        vec!["inbox"],
        vec!["claim", "--resource", "file:cut.rs"],
        vec!["message", "--to", "alice", "--subject", "s", "--body", "b"],
    ] {
        let started = Instant::now();
        let run = two.acc_as(&bob, &args);
        let took = started.elapsed();
        run.err(4, "storage_unavailable");
        assert!(took < Duration::from_secs(5), "{args:?} took {took:?}");
        eprintln!("{args:?} during the black hole: exit 4 in {took:?}");
    }
    // The prompt hook fails open within its budget, telling the model in one line.
    let started = Instant::now();
    let hook = two.hook("claude-code", "UserPromptSubmit", &input);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(hook.code, 0, "{}", hook.stderr);
    let answer: Value = serde_json::from_str(&hook.stdout).expect("hook json");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(context.lines().count(), 1, "{context}");
    assert!(
        context.starts_with("ACC: coordination is unavailable"),
        "{context}"
    );
    // Host A keeps working: ten messages for Bob while his host is cut off.
    let mut sent = Vec::new();
    for i in 0..10 {
        let told = one.tell(
            &alice,
            "bob",
            &format!("during-{i:02}"),
            "sent while B was dark",
        );
        sent.push(
            told["message"]["messageId"]
                .as_str()
                .expect("id")
                .to_string(),
        );
    }

    site.hosts.heal_b();
    acc_tests::wait_until(Duration::from_secs(30), "acc-mcp serves again", || {
        id += 1;
        call(&mut server, id, "acc_status", json!({})).0["isError"] != true
    });
    let expected: Vec<String> = (0..10).map(|i| format!("during-{i:02}")).collect();
    assert_eq!(
        subjects(&two, &bob, "during-"),
        expected,
        "every message once"
    );
    // The follower went on after the heal, from where it was: every message sent in the cut.
    for id in &sent {
        follower.wait_for(
            |event| {
                event["type"] == "message.recorded" && event["data"]["messageId"] == id.as_str()
            },
            Duration::from_secs(30),
        );
    }
    assert!(server.finish(Duration::from_secs(20)).success());
}

#[test]
fn a_flapping_link_loses_nothing_doubles_nothing_and_never_grants_a_claim_twice() {
    let site = site();
    let (one, two) = site.machines();
    let alice = one.attach("alice");
    let bob = two.attach("bob");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let hosts = &site.hosts;
    let (failures, claim_rounds) = std::thread::scope(|scope| {
        let flapper = scope.spawn(|| {
            let mut flaps = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                hosts.cut_b();
                std::thread::sleep(Duration::from_millis(1000 + 250 * (flaps % 3)));
                hosts.heal_b();
                std::thread::sleep(Duration::from_millis(1000 + 250 * (flaps % 2)));
                flaps += 1;
            }
            hosts.heal_b();
            flaps
        });
        let sender = scope.spawn(|| keyed_sends(&two, &bob, "alice", "flap", 20));
        let mut rounds = Vec::new();
        for round in 0..12 {
            let resource = format!("file:src/flap_{round}.rs");
            let runs = acc_tests::race(
                &one,
                vec![claim(&one, &alice, &resource), claim(&two, &bob, &resource)],
            );
            rounds.push((resource, runs));
        }
        let failures = sender.join().expect("sender");
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let flaps = flapper.join().expect("flapper");
        assert!(flaps >= 2, "the link flapped {flaps} times");
        (failures, rounds)
    });
    // A send whose round trip met a cut either failed (exit 4, retried) or went through once
    // the link was back (TCP retransmits): either way the sends ran while it flapped.
    eprintln!("failed attempts through the flapping link: {failures:?}");
    assert!(
        failures.iter().all(|code| *code == 4),
        "every failure exits 4: {failures:?}"
    );
    let expected: Vec<String> = (0..20).map(|i| format!("flap-{i:02}")).collect();
    assert_eq!(subjects(&one, &alice, "flap-"), expected, "every send once");
    // Never two exclusive holders: at most one grant per round, and the room agrees.
    let status = one.acc(&["status", "--all"]).ok_json();
    for (resource, runs) in &claim_rounds {
        let granted = runs.iter().filter(|r| r.code == 0).count();
        assert!(granted <= 1, "{resource}: {runs:?}");
        for run in runs.iter().filter(|r| r.code != 0) {
            assert!(
                run.code == 4 || run.json()["error"]["code"] == "claim_conflict",
                "{resource}: {run:?}"
            );
        }
        let holders = status["claims"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["resource"] == resource.as_str())
            .count();
        assert!(holders <= 1, "{resource}: {holders} holders: {status}");
        // A grant answered is held; a claim held without a grant answered is one whose answer
        // the cut lost (its process exited 4, and it was committed).
        if granted == 1 {
            assert_eq!(holders, 1, "{resource}: the room holds what was granted");
        } else if holders == 1 {
            assert!(
                runs.iter().any(|r| r.code == 4),
                "{resource}: held, though no attempt was granted or lost its answer: {runs:?}"
            );
        }
    }
}

#[test]
fn the_server_killed_and_restarted_under_senders_on_both_hosts_loses_nothing() {
    let mut site = site();
    let (one, two) = site.machines();
    let alice = one.attach("alice");
    let bob = two.attach("bob");
    let (from_a, from_b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| keyed_sends(&one, &alice, "bob", "killed-a", 20));
        let b = scope.spawn(|| keyed_sends(&two, &bob, "alice", "killed-b", 20));
        // Kill it once both hosts have sent some.
        acc_tests::wait_until(
            Duration::from_secs(60),
            "a few sends from each host",
            || {
                one.acc_as(&alice, &["inbox"]).code == 0
                    && subjects(&one, &alice, "killed-b").len() >= 3
                    && subjects(&two, &bob, "killed-a").len() >= 3
            },
        );
        site.cluster.kill_hard();
        std::thread::sleep(Duration::from_millis(1500));
        site.cluster.restart();
        (a.join().expect("a"), b.join().expect("b"))
    });
    assert!(
        from_a.len() + from_b.len() > 0,
        "some sends met the killed server (else this test proved nothing)"
    );
    assert!(
        from_a.iter().chain(&from_b).all(|c| *c == 4),
        "{from_a:?} {from_b:?}"
    );
    let a_sent: Vec<String> = (0..20).map(|i| format!("killed-a-{i:02}")).collect();
    let b_sent: Vec<String> = (0..20).map(|i| format!("killed-b-{i:02}")).collect();
    assert_eq!(subjects(&two, &bob, "killed-a"), a_sent);
    assert_eq!(subjects(&one, &alice, "killed-b"), b_sent);
}

#[test]
fn a_real_claude_code_on_one_host_gets_the_other_hosts_message_and_meets_its_guarded_claim() {
    use acc_capture::guard::{CHANGED, CLAIMED, ORIGINAL};
    use acc_capture::model::{ModelServer, Scripted};
    let site = site();
    let (one, two) = site.machines();
    let alice = one.attach("alice");
    std::fs::create_dir_all(two.dir.join("src")).expect("src");
    std::fs::write(two.dir.join(CLAIMED), ORIGINAL).expect("parser");
    let model = ModelServer::start();
    let client = acc_clients::Client::ClaudeCode;
    let writer = acc_tests::writer(&two, client, &model, &[("ACC_PARTICIPANT", "bob")]);
    writer.prepare_home(&model).expect("client settings");
    let home = writer.home.to_string_lossy().into_owned();
    let path = acc_tests::clients().path_for(client);
    two.acc_with(
        &["install", "--client", "claude-code", "--home", &home],
        &[("PATH", &path)],
    )
    .ok_json();
    model.script([Scripted::Text("hello".into())]);
    writer.turn("hello").expect("first turn");

    // Host A writes to Bob and claims the parser (the room's policy makes it guarded).
    one.tell(&alice, "bob", "from host A", "written on the first host");
    one.acc_as(&alice, &["claim", "--resource", &format!("file:{CLAIMED}")])
        .ok_json();
    model.clear();
    let mut steps = writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED);
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer
        .turn("any news? then write the parser")
        .expect("turn");
    let seen = acc_tests::model_text(&model);
    assert!(
        seen.contains("acc-peer-message sender=alice")
            && seen.contains("written on the first host"),
        "next-turn carried host A's message into the model request: {seen}"
    );
    assert_eq!(
        acc_capture::guard::read(&two.dir, CLAIMED).as_deref(),
        Some(ORIGINAL),
        "the write into Alice's claim did not happen"
    );
    let refusal = acc_capture::guard::results_of_turn(&model)
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    assert!(
        refusal.contains("claimed exclusively (guarded) by alice"),
        "{refusal}"
    );

    // Host B cut off: the guard fails open, and the turn's one line says it is not checking.
    site.hosts.cut_b();
    model.clear();
    let mut steps = writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED);
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer.turn("write the parser").expect("turn while cut off");
    site.hosts.heal_b();
    assert_eq!(
        acc_capture::guard::read(&two.dir, CLAIMED).as_deref(),
        Some(CHANGED),
        "fail open: the write went through while the room was out of reach"
    );
    let seen = acc_tests::model_text(&model);
    assert!(
        seen.contains("ACC: coordination is unavailable this turn")
            && seen.contains("write guard is not checking"),
        "{seen}"
    );
}

/// A writer cut off while it holds the room's writers' lock (its statements sent, its `COMMIT`
/// not yet: a laptop that sleeps at the wrong moment) is let go by the server within the dead
/// link's bound (`idle_in_transaction_session_timeout` and the server's keepalives, set by
/// each connection for itself), so the other host's writes wait seconds, not hours; nothing
/// of the cut writer's send is recorded, and its retry with the same key is recorded once.
#[test]
fn a_writer_cut_off_holding_the_rooms_lock_holds_the_other_host_up_for_seconds_only() {
    let site = site();
    let (one, two) = site.machines();
    let alice = one.attach("alice");
    let bob = two.attach("bob");
    let send = |key: &str| {
        let mut command = two.command("acc");
        command
            .args(["--json", "--session", &bob.session])
            .args(["--generation", &bob.generation])
            .args(["message", "--to", "alice", "--subject", key, "--body", "b"])
            .args(["--client-message-id", key]);
        command
    };
    let mut held = send("held");
    held.env("ACC_TEST_HOLD_WRITE_MS", "60000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = held.spawn().expect("the held send");
    site.hosts.own(child.id());
    let mut admin = site.cluster.admin().expect("admin");
    let mut locked = || {
        admin
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted",
                &[],
            )
            .map(|r| r.get::<_, i64>(0) > 0)
            .unwrap_or(false)
    };
    acc_tests::wait_until(
        Duration::from_secs(30),
        "host B to hold the room's lock",
        &mut locked,
    );
    site.hosts.cut_b();
    let started = Instant::now();
    one.tell(&alice, "bob", "meanwhile", "from host A");
    let took = started.elapsed();
    eprintln!("host A's send behind a cut-off holder of the lock: {took:?}");
    assert!(
        took < Duration::from_secs(10),
        "host A waited {took:?} behind the cut-off writer"
    );
    site.hosts.heal_b();
    acc_tests::kill_pid(child.id());
    let _ = child.wait();
    assert!(
        subjects(&one, &alice, "held").is_empty(),
        "nothing of the cut send"
    );
    let retried = two.run(send("held"), "the retry");
    assert_eq!(retried.code, 0, "{retried:?}");
    assert_eq!(subjects(&one, &alice, "held"), vec!["held".to_string()]);
}

/// The ids of every `message.recorded` event in the room's log, in its order, as `who` on
/// `world` pages through it.
fn recorded_in_log(world: &World, who: &Creds) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = "0000000000000000".to_string();
    loop {
        let page = world
            .acc_as(who, &["sync", "--cursor", &cursor, "--limit", "500"])
            .ok_json();
        for event in page["events"].as_array().into_iter().flatten() {
            if event["type"] == "message.recorded" {
                ids.push(event["data"]["messageId"].as_str().expect("id").to_string());
            }
        }
        cursor = page["nextCursor"].as_str().expect("cursor").to_string();
        if page["hasMore"] != true {
            return ids;
        }
    }
}

#[test]
fn a_follower_on_one_host_sees_each_message_from_the_other_once_in_order_across_a_restart_and_a_cut()
 {
    let mut site = site();
    let (one, two) = site.machines();
    let alice = one.attach("alice");
    let bob = two.attach("bob");
    let mut follower = two.follower(&bob);
    let started_at = recorded_in_log(&one, &alice).len();
    keyed_sends(&one, &alice, "bob", "followed-a", 40);
    // The server restarts: the follower's wake reconnects and it reads from its cursor.
    site.cluster.kill_hard();
    std::thread::sleep(Duration::from_millis(500));
    site.cluster.restart();
    keyed_sends(&one, &alice, "bob", "followed-b", 30);
    // B's link goes dark while A sends, long enough for the server to drop B's connections
    // (the follower's wake among them); the follower catches up after the heal.
    site.hosts.cut_b();
    keyed_sends(&one, &alice, "bob", "followed-c", 30);
    let mut admin = site.cluster.admin().expect("the server's admin");
    let b_addr = site.hosts.b.agent_addr.clone();
    acc_tests::wait_until(
        Duration::from_secs(60),
        "the server dropped B's connections",
        || {
            admin
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE host(client_addr) = $1",
                    &[&b_addr],
                )
                .map(|row| row.get::<_, i64>(0) == 0)
                .unwrap_or(false)
        },
    );
    site.hosts.heal_b();
    let log = recorded_in_log(&one, &alice);
    assert_eq!(log.len(), started_at + 100, "every send recorded once");
    let expected = &log[started_at..];
    let deadline = Instant::now() + Duration::from_secs(90);
    let followed = |follower: &JsonRpcChild| -> Vec<String> {
        follower
            .seen
            .iter()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["type"] == "message.recorded")
            .filter_map(|event| event["data"]["messageId"].as_str().map(str::to_string))
            .collect()
    };
    while followed(&follower).len() < expected.len() {
        assert!(
            Instant::now() < deadline,
            "the follower saw {} of {}",
            followed(&follower).len(),
            expected.len()
        );
        follower.try_wait_for(
            |event| event["type"] == "message.recorded",
            Duration::from_secs(5),
        );
    }
    assert_eq!(
        followed(&follower),
        expected,
        "each message once, in the log's order"
    );
}

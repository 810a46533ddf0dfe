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
const CONFIG: &str = r#"{"schemaVersion":1,"workspaceId":"hosts-room","policy":{"claimMode":"guarded"}}"#;

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
    let found = walk(&world.data_home)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "room"));
    found
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
            url: url(&b_addr, db, &format!("?sslmode=verify-full&sslrootcert={ca_file}")),
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
            url: url(&b_addr, db, &format!("?sslmode=verify-full&sslrootcert={other_ca}")),
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
            url: url(OTHER_NAME, db, &format!("?sslmode=verify-full&sslrootcert={ca_file}")),
            env: vec![],
            expect: Err(vec![format!(
                "its certificate does not name the host `{OTHER_NAME}`"
            )]),
            warns: false,
        },
        Case {
            what: "the same name with verify-ca (the chain only)",
            on_a: true,
            url: url(OTHER_NAME, db, &format!("?sslmode=verify-ca&sslrootcert={ca_file}")),
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
            url: url(&b_addr, &plain_db, &format!("?sslmode=verify-full&sslrootcert={ca_file}")),
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
                    for (surface, text) in [("room show", &shown), ("status", &status), ("doctor", &doctor)] {
                        if !text.stdout.contains("not encrypted") {
                            failures.push(format!("{}: {surface} does not warn: {}", case.what, text.stdout));
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
    let refused = world.acc_as(&alice, &["inbox"]).err(4, "storage_unavailable");
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
        let claim = |world: &World, who: &Creds| {
            let mut command = world.command("acc");
            command
                .args(["--json", "--session", &who.session])
                .args(["--generation", &who.generation])
                .args(["claim", "--resource", &resource]);
            command
        };
        let runs = acc_tests::race(&one, vec![claim(&one, &alice), claim(&two, &bob)]);
        let granted = runs.iter().filter(|r| r.code == 0).count();
        assert_eq!(granted, 1, "round {round}: exactly one grant: {runs:?}");
        let refused = runs.iter().find(|r| r.code != 0).expect("the other");
        assert_eq!(refused.json()["error"]["code"], "claim_conflict", "{refused:?}");
    }
    for (from, from_world, to, to_name, to_world) in [
        (&alice, &one, &bob, "bob", &two),
        (&bob, &two, &alice, "alice", &one),
    ] {
        let sent = from_world.tell(from, to_name, "across", "from the other host");
        let id = sent["message"]["messageId"].as_str().expect("id").to_string();
        let read = to_world.acc_as(to, &["inbox", "--message", &id]).ok_json();
        assert!(read.to_string().contains("from the other host"), "{read}");
        assert_eq!(from_world.receipt(&id)["state"], "retrieved");
    }
}

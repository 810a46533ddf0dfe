//! The PostgreSQL server the tests start (`acc_tests::pg`): it serves its own Unix socket and
//! loopback, asks loopback clients for their password, and leaves nothing behind.

use acc_tests::pg::Cluster;

#[test]
fn a_cluster_started_by_a_test_serves_its_socket_and_loopback_and_leaves_nothing_behind() {
    let mut cluster = Cluster::start();
    assert!(
        cluster.major() >= 13,
        "PostgreSQL {} is older than 13",
        cluster.major()
    );
    let pid = cluster.pid();
    let port = cluster.port();
    let dir = cluster.dir().to_path_buf();

    // The administrator over the socket.
    let mut admin = cluster.admin().expect("admin over the socket");
    let version: String = admin
        .query_one("SHOW server_version", &[])
        .expect("version")
        .get(0);
    assert!(
        version.starts_with(&cluster.major().to_string()),
        "server_version {version}"
    );

    // A database of its own, reached over loopback with its role's password.
    let db = cluster.database("harness check");
    let mut client = db.config().connect(postgres::NoTls).expect("over loopback");
    let row = client
        .query_one("SELECT current_user, current_database()", &[])
        .expect("who");
    assert_eq!(row.get::<_, String>(0), db.role);
    assert_eq!(row.get::<_, String>(1), db.name);
    assert!(db.url().starts_with("postgres://") && !db.url().contains(&db.password));

    // A wrong password is refused by the server, as on a real one.
    let Err(refused) = db
        .config()
        .password("not the password")
        .connect(postgres::NoTls)
    else {
        panic!("a wrong password was accepted");
    };
    let code = refused.as_db_error().map(|e| e.code().code().to_string());
    assert_eq!(
        code.as_deref(),
        Some("28P01"),
        "invalid_password expected: {refused}"
    );
    // The administrator is trusted on the socket only: loopback asks it for a password too.
    let mut admin_loopback = postgres::Config::new();
    admin_loopback
        .host("127.0.0.1")
        .port(port)
        .user(acc_tests::pg::ADMIN)
        .dbname("postgres");
    assert!(admin_loopback.connect(postgres::NoTls).is_err());

    drop(client);
    drop(admin);
    cluster.stop();
    // Stopped by its pid and reaped: the process, its port and its directory are gone.
    assert!(
        acc_tests::pg::exited(pid) && !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the server process {pid} is still there"
    );
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    drop(cluster);
    assert!(!dir.exists(), "{} is left behind", dir.display());
}

/// A cluster whose test process was killed (its `Drop` never ran) is stopped and removed by the
/// next test's cluster.
#[test]
fn a_cluster_left_by_a_killed_test_is_swept_by_the_next() {
    let left = Cluster::start();
    let (pid, dir) = (left.pid(), left.dir().to_path_buf());
    let mut gone = std::process::Command::new("true").spawn().expect("true");
    let gone_pid = gone.id();
    gone.wait().expect("reaped");
    left.abandon_to(gone_pid);
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());

    let next = Cluster::start();
    // The abandoned server was a child of this process: once stopped it is a zombie (exited,
    // never reaped, since its `Child` was forgotten) or gone.
    acc_tests::wait_until(
        acc_tests::pg::STOP_DEADLINE,
        "the abandoned server to stop",
        || acc_tests::pg::exited(pid),
    );
    assert!(!dir.exists(), "{} is left behind", dir.display());
    assert!(next.admin().is_ok(), "the new cluster serves");
}

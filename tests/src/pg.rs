//! A real PostgreSQL server for the tests, started and stopped by the test that needs it.
//!
//! [`Cluster::start`] creates a cluster with `initdb` in a temporary directory and runs
//! `postgres` on it as a child of the test, on a Unix socket in that directory and on a free
//! loopback port. The socket trusts the cluster's administrator (`acc_admin`); loopback asks
//! every role for its password (SCRAM), so a wrong password is refused as it would be on a real
//! server. [`Cluster::database`] creates a role and a database of its own for a test.
//! Dropping the cluster stops the server by its pid (a fast shutdown, then SIGKILL after a
//! bounded wait) and removes the directory; a cluster whose test process was killed before
//! that is stopped and removed by the next [`Cluster::start`].
//!
//! PostgreSQL refuses to run as root. Run as root (a CI container), the cluster's directory is
//! given to the `postgres` account the distribution's package creates, and `initdb` and
//! `postgres` run as that account through `setpriv`, which executes the program in place: the
//! pid the test holds is the server's own.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The cluster's administrator role (trusted on the cluster's own Unix socket only).
pub const ADMIN: &str = "acc_admin";
/// How long a server may take to accept connections after it starts.
pub const START_DEADLINE: Duration = Duration::from_secs(60);
/// How long a stopping server is given before it is killed.
pub const STOP_DEADLINE: Duration = Duration::from_secs(20);

/// A running PostgreSQL server owned by the test.
#[derive(Debug)]
pub struct Cluster {
    dir: tempfile::TempDir,
    server: Option<Child>,
    port: u16,
    major: u32,
    options: Options,
}

/// Where and how a [`Cluster`]'s server runs, beyond the default (loopback, no TLS).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The network namespace it runs in (a database host of [`crate::netns::Hosts`]).
    pub netns: Option<String>,
    /// The addresses it listens on (default `127.0.0.1`).
    pub listen: Vec<String>,
    /// TLS: its certificate and key, and the CA whose client certificates it trusts.
    pub tls: Option<ServerTls>,
    /// `pg_hba.conf` lines put before initdb's (first match wins), such as `hostssl all all
    /// 10.0.0.0/8 scram-sha-256`.
    pub hba: Vec<String>,
    /// The port (default: a free loopback port).
    pub port: Option<u16>,
}

/// A server's TLS files.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// Its certificate and key.
    pub cert: crate::certs::Issued,
    /// The CA of client certificates (`ssl_ca_file`).
    pub client_ca: Option<PathBuf>,
}

/// A role and a database of its own on a [`Cluster`].
#[derive(Debug, Clone)]
pub struct Database {
    /// The database's name.
    pub name: String,
    /// The role that owns it.
    pub role: String,
    /// The role's password.
    pub password: String,
    /// The server's loopback port.
    pub port: u16,
    /// The directory of the server's Unix socket.
    pub socket_dir: PathBuf,
}

impl Database {
    /// A `postgres://` URL for the database over loopback, without the password (ACC never
    /// stores one: it comes from `PGPASSWORD` or a password file, as for `psql`).
    pub fn url(&self) -> String {
        format!(
            "postgres://{}@127.0.0.1:{}/{}",
            self.role, self.port, self.name
        )
    }

    /// A `postgres://` URL for the database over the cluster's Unix socket, where every role is
    /// trusted (no password at all).
    pub fn socket_url(&self) -> String {
        let dir: String = percent_encoding::utf8_percent_encode(
            &self.socket_dir.display().to_string(),
            percent_encoding::NON_ALPHANUMERIC,
        )
        .to_string();
        format!(
            "postgres://{}@/{}?host={dir}&port={}",
            self.role, self.name, self.port
        )
    }

    /// Connection settings for the database over loopback with the role's password.
    pub fn config(&self) -> postgres::Config {
        let mut config = postgres::Config::new();
        config
            .host("127.0.0.1")
            .port(self.port)
            .user(&self.role)
            .password(&self.password)
            .dbname(&self.name)
            .connect_timeout(Duration::from_secs(5));
        config
    }
}

/// The directory holding the PostgreSQL server programs (`initdb`, `postgres`): `pg_config
/// --bindir` when it answers, else the newest `/usr/lib/postgresql/<major>/bin` (Debian's
/// layout). Fails naming the script that installs them.
pub fn bin_dir() -> PathBuf {
    let from_pg_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|dir| dir.join("initdb").is_file());
    if let Some(dir) = from_pg_config {
        return dir;
    }
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((major, bin))
        })
        .collect();
    debian.sort();
    match debian.pop() {
        Some((_, dir)) => dir,
        None => panic!(
            "no PostgreSQL server programs (initdb, postgres) were found: run scripts/install-postgres.sh (./test.sh does)"
        ),
    }
}

/// The `postgres` account's uid and gid, when this process runs as root (the server must not).
fn server_account() -> Option<(u32, u32)> {
    if effective_uid() != 0 {
        return None;
    }
    let id = |flag: &str| -> u32 {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .expect("id postgres");
        assert!(
            out.status.success(),
            "running as root, PostgreSQL needs the `postgres` account its package creates: run scripts/install-postgres.sh"
        );
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("a numeric id")
    };
    Some((id("-u"), id("-g")))
}

/// This process's effective uid, read from `/proc/self/status` (no `unsafe` in the tests).
fn effective_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .and_then(|euid| euid.parse().ok())
        .expect("an effective uid")
}

/// A command that runs `program` from the server's directory, as the `postgres` account when
/// this process is root, in the network namespace `netns` when one is named.
fn server_command(program: &Path, account: Option<(u32, u32)>, netns: Option<&str>) -> Command {
    let mut command = match netns {
        Some(ns) => crate::netns::Hosts::in_ns(ns, "setpriv"),
        None => Command::new("setpriv"),
    };
    match account {
        Some((uid, gid)) => {
            command
                .arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg("--")
                .arg(program);
        }
        None => {
            // Nothing to change: setpriv executes the program as it is.
            command.arg("--").arg(program);
        }
    }
    command
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// Whether process `pid` has exited: no longer there, or a zombie awaiting its reaping.
pub fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The file in a cluster's directory naming the test process that owns it.
const OWNER_FILE: &str = "owner.pid";

/// Stop and remove the clusters of test processes that are gone (a test killed by its runner's
/// timeout never runs its cluster's `Drop`): each cluster directory names its owner's pid, and
/// its server's pid is the first line of `data/postmaster.pid`.
fn sweep_orphans() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let dir = entry.path();
        let is_cluster = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("acc-pg-"));
        let owner = std::fs::read_to_string(dir.join(OWNER_FILE))
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok());
        let Some(owner) = owner.filter(|_| is_cluster) else {
            continue;
        };
        if Path::new(&format!("/proc/{owner}")).exists() {
            continue;
        }
        let server = std::fs::read_to_string(dir.join("data/postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u32>().ok()));
        if let Some(server) = server {
            crate::kill_pid(server);
            let start = Instant::now();
            while !exited(server) && start.elapsed() < STOP_DEADLINE {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

impl Cluster {
    /// Create a cluster in a temporary directory and start its server; wait, bounded, until it
    /// accepts connections. Clusters that killed tests left behind are swept first.
    pub fn start() -> Self {
        Self::start_with(Options::default())
    }

    /// [`Cluster::start`] with `options`: in a namespace, on other addresses, with TLS.
    pub fn start_with(options: Options) -> Self {
        sweep_orphans();
        let bin = bin_dir();
        let account = server_account();
        let dir = tempfile::Builder::new()
            .prefix("acc-pg-")
            .tempdir()
            .expect("cluster dir");
        std::fs::write(dir.path().join(OWNER_FILE), std::process::id().to_string())
            .expect("owner file");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).expect("data dir");
        if let Some((uid, gid)) = account {
            for path in [dir.path(), data.as_path()] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid)).expect("chown to postgres");
            }
        }
        let init = server_command(&bin.join("initdb"), account, None)
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                ADMIN,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ])
            .args(["--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"])
            .stdin(Stdio::null())
            .output()
            .expect("initdb");
        assert!(
            init.status.success(),
            "initdb failed: {}{}",
            String::from_utf8_lossy(&init.stdout),
            String::from_utf8_lossy(&init.stderr)
        );
        let version = std::fs::read_to_string(data.join("PG_VERSION")).expect("PG_VERSION");
        let major = version.trim().parse().expect("a major version");
        if !options.hba.is_empty() {
            let hba = data.join("pg_hba.conf");
            let theirs = std::fs::read_to_string(&hba).expect("pg_hba.conf");
            std::fs::write(&hba, format!("{}\n{theirs}", options.hba.join("\n")))
                .expect("write pg_hba.conf");
        }
        if let Some(tls) = &options.tls {
            // The server reads its key only when it alone can: copied into its directory, owned
            // by the account it runs as.
            for (from, name) in [
                (&tls.cert.cert, "server.crt"),
                (&tls.cert.key, "server.key"),
            ] {
                let to = data.join(name);
                std::fs::copy(from, &to).expect("copy the server's TLS file");
                if let Some((uid, gid)) = account {
                    std::os::unix::fs::chown(&to, Some(uid), Some(gid)).expect("chown");
                }
                std::fs::set_permissions(&to, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                    .expect("chmod");
            }
        }
        let port = options.port.unwrap_or_else(free_port);
        let mut cluster = Self {
            dir,
            server: None,
            port,
            major,
            options,
        };
        cluster.server = Some(cluster.spawn_server());
        cluster.wait_until_ready();
        cluster
    }

    /// Start the server on the cluster's data, port and socket, its log appended to
    /// `server.log`.
    fn spawn_server(&self) -> Child {
        let account = server_account();
        let data = self.dir.path().join("data");
        let log_path = self.dir.path().join("server.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("server log");
        if let Some((uid, gid)) = account {
            std::os::unix::fs::chown(&log_path, Some(uid), Some(gid)).expect("chown the log");
        }
        let mut command = server_command(
            &bin_dir().join("postgres"),
            account,
            self.options.netns.as_deref(),
        );
        let listen = if self.options.listen.is_empty() {
            "127.0.0.1".to_string()
        } else {
            self.options.listen.join(",")
        };
        if let Some(tls) = &self.options.tls {
            command.args(["-c", "ssl=on", "-c", "ssl_cert_file=server.crt"]);
            command.args(["-c", "ssl_key_file=server.key"]);
            if let Some(ca) = &tls.client_ca {
                command
                    .arg("-c")
                    .arg(format!("ssl_ca_file={}", ca.display()));
            }
        }
        // A debugging aid: with `ACC_TEST_PG_LOG_STATEMENTS` set, the server logs every
        // statement to `server.log` in the cluster's directory (where round trips go).
        if std::env::var_os("ACC_TEST_PG_LOG_STATEMENTS").is_some() {
            command.args(["-c", "log_statement=all", "-c", "log_line_prefix=%p: "]);
        }
        command
            .arg("-D")
            .arg(&data)
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-c")
            .arg(format!("listen_addresses={listen}"))
            .arg("-c")
            .arg(format!(
                "unix_socket_directories={}",
                self.dir.path().display()
            ))
            .args(["-c", "max_connections=60", "-c", "shared_buffers=16MB"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start postgres")
    }

    /// Kill the server at once (SIGKILL, as a crash or an OOM kill would), reaped; its
    /// backends end as they see it gone.
    pub fn kill_hard(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
    }

    /// Start the server again after [`Cluster::stop`] or [`Cluster::kill_hard`], on the same
    /// port and data, and wait until it is ready (after a kill it first recovers from its WAL;
    /// a start refused while the killed server's backends still hold its memory is retried,
    /// bounded by [`START_DEADLINE`]).
    pub fn restart(&mut self) {
        assert!(self.server.is_none(), "the server is still running");
        let start = Instant::now();
        loop {
            let mut server = self.spawn_server();
            let ready = loop {
                if self.admin().is_ok() {
                    break true;
                }
                if matches!(server.try_wait(), Ok(Some(_))) || start.elapsed() > START_DEADLINE {
                    break false;
                }
                std::thread::sleep(Duration::from_millis(50));
            };
            if ready {
                self.server = Some(server);
                return;
            }
            let _ = server.kill();
            let _ = server.wait();
            assert!(
                start.elapsed() < START_DEADLINE,
                "the PostgreSQL server did not come back: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Wait until the server accepts the administrator on its socket, failing with its log if
    /// it exits or takes longer than [`START_DEADLINE`].
    fn wait_until_ready(&mut self) {
        let start = Instant::now();
        loop {
            if self.admin().is_ok() {
                return;
            }
            let exited = self
                .server
                .as_mut()
                .and_then(|s| s.try_wait().ok().flatten());
            assert!(
                exited.is_none() && start.elapsed() < START_DEADLINE,
                "the PostgreSQL server did not come up ({}): {}",
                exited.map_or_else(
                    || format!("still not ready after {START_DEADLINE:?}"),
                    |s| format!("it exited with {s}")
                ),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.server.as_ref().map_or(0, Child::id)
    }

    /// The server's loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's major version (`15` for PostgreSQL 15).
    pub fn major(&self) -> u32 {
        self.major
    }

    /// The directory holding the server's Unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The cluster's directory (its data, socket and log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Hand this cluster to a test process that is gone (`owner`, a pid no longer alive) and let
    /// go of it without stopping it: what a test killed by its runner leaves. For the test of
    /// the sweep.
    pub fn abandon_to(self, owner: u32) {
        std::fs::write(self.dir.path().join(OWNER_FILE), owner.to_string()).expect("owner file");
        std::mem::forget(self);
    }

    /// The administrator's connection over the server's own Unix socket.
    pub fn admin(&self) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host_path(self.dir.path())
            .port(self.port)
            .user(ADMIN)
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(5))
            .connect(postgres::NoTls)
    }

    /// A new role with a random password and a database it owns, named after `label`.
    pub fn database(&self, label: &str) -> Database {
        let suffix: String = format!("{:x}", std::process::id())
            + &format!(
                "{:x}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default()
            );
        let clean: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("{clean}_{suffix}");
        let password = format!("pw-{suffix}");
        let mut admin = self.admin().expect("the administrator's connection");
        // Identifiers are this function's own characters; the password is quoted as a literal.
        // Two statements: CREATE DATABASE cannot run inside the transaction a batch would be.
        admin
            .batch_execute(&format!("CREATE ROLE {name} LOGIN PASSWORD '{password}'"))
            .expect("create the role");
        admin
            .batch_execute(&format!("CREATE DATABASE {name} OWNER {name}"))
            .expect("create its database");
        Database {
            role: name.clone(),
            name,
            password,
            port: self.port,
            socket_dir: self.socket_dir().to_path_buf(),
        }
    }

    /// Stop the server: a fast shutdown (SIGINT), then SIGKILL after [`STOP_DEADLINE`]; reaped.
    pub fn stop(&mut self) {
        let Some(mut server) = self.server.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-INT", &server.id().to_string()])
            .status();
        let start = Instant::now();
        while start.elapsed() < STOP_DEADLINE {
            if matches!(server.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = server.kill();
        let _ = server.wait();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The schema of the (one) ACC room in the database `admin` is connected to.
pub fn room_schema(admin: &mut postgres::Client) -> String {
    admin
        .query_one(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'acc\\_%'",
            &[],
        )
        .expect("the room's schema")
        .get(0)
}

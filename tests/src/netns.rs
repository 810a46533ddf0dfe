//! Separate hosts for the tests, made of network namespaces the test creates itself: a
//! database host and an agent host (A) as namespaces, and this machine's own namespace as the
//! second agent host (B, where the real clients and the scripted model run). Each agent host
//! reaches the database host over a veth pair of its own, on addresses of the test's choosing
//! (`10.X.Y.0/24`, one `/24` per link, none already on this machine); nothing else joins them
//! (the database host's server listens only on its ends of those links, and A has no other
//! interface than its loopback).
//!
//! A link is cut by setting the database host's end of its veth down: packets vanish and
//! nothing answers (a black hole: a sleeping laptop, a dropped VPN), which is what this kernel
//! can do without `netem`. Host A resolves the database host's name through
//! `/etc/netns/<namespace>/hosts` (which `ip netns exec` puts over `/etc/hosts` for what runs
//! there); host B connects by the database host's address.
//!
//! Dropping [`Hosts`] kills every process started through it (by pid), deletes its
//! namespaces (which deletes their veth pairs) and their `/etc/netns` folders. Namespaces a
//! killed test left behind (their names carry the owner's pid) are removed by the next
//! [`Hosts::new`].

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The database host's name, as the server's certificate names it.
pub const DB_NAME: &str = "db.acc.test";
/// Another name of the database host on host A, which its certificate does not hold.
pub const OTHER_NAME: &str = "elsewhere.acc.test";

/// A link from an agent host to the database host.
#[derive(Debug, Clone)]
pub struct Link {
    /// The database host's end (the interface cut to make a black hole), in its namespace.
    db_end: String,
    /// The database host's address on this link.
    pub db_addr: String,
    /// The agent host's address on this link.
    pub agent_addr: String,
}

/// The hosts of one test.
#[derive(Debug)]
pub struct Hosts {
    /// The database host's namespace.
    pub db_ns: String,
    /// Host A's namespace.
    pub a_ns: String,
    /// Host A's link.
    pub a: Link,
    /// Host B's (this machine's namespace) link.
    pub b: Link,
    /// B's end of its link, in this machine's namespace.
    b_end: String,
    pids: std::sync::Mutex<Vec<u32>>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Run `ip ARGS`, failing the test loudly: the suite never skips when namespaces cannot be made.
fn must(args: &[&str]) {
    if let Err(e) = ip(args) {
        panic!(
            "{e}\nthe multi-host tests need to create network namespaces and veth pairs (root, iproute2): they do not skip"
        );
    }
}

/// Namespaces of test processes that are gone, and their `/etc/netns` folders.
fn sweep_orphans() {
    let listed = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for name in listed.lines().filter_map(|l| l.split_whitespace().next()) {
        let Some(owner) = name
            .strip_prefix("acct")
            .and_then(|rest| rest.split('x').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{owner}")).exists() {
            let _ = ip(&["netns", "del", name]);
            let _ = std::fs::remove_dir_all(format!("/etc/netns/{name}"));
        }
    }
}

/// The `/24`s already on this machine (`10.X.Y`).
fn used_subnets() -> Vec<String> {
    let out = Command::new("ip")
        .args(["-4", "-o", "addr"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.split_whitespace()
        .filter_map(|word| word.strip_prefix("10."))
        .filter_map(|rest| {
            let mut parts = rest.split('.');
            Some(format!("10.{}.{}", parts.next()?, parts.next()?))
        })
        .collect()
}

static MADE: AtomicU32 = AtomicU32::new(0);

impl Hosts {
    /// Make the database host, host A and B's link; fails loudly when they cannot be made.
    pub fn new() -> Self {
        sweep_orphans();
        let pid = std::process::id();
        let n = MADE.fetch_add(1, Ordering::SeqCst);
        let tag = format!("acct{pid}x{n}");
        let used = used_subnets();
        let second = (100 + pid % 100 + n * 7) % 250;
        let mut third = 2 * ((pid / 100 + n) % 120);
        while used.contains(&format!("10.{second}.{third}"))
            || used.contains(&format!("10.{second}.{}", third + 1))
        {
            third = (third + 2) % 240;
        }
        let subnet = |k: u32| format!("10.{second}.{}", third + k);
        let hosts = Self {
            db_ns: format!("{tag}d"),
            a_ns: format!("{tag}a"),
            a: Link {
                db_end: "toa".into(),
                db_addr: format!("{}.1", subnet(0)),
                agent_addr: format!("{}.2", subnet(0)),
            },
            b: Link {
                db_end: "tob".into(),
                db_addr: format!("{}.1", subnet(1)),
                agent_addr: format!("{}.2", subnet(1)),
            },
            b_end: format!("ac{pid}x{n}"),
            pids: std::sync::Mutex::new(Vec::new()),
        };
        let (db, a) = (hosts.db_ns.as_str(), hosts.a_ns.as_str());
        must(&["netns", "add", db]);
        must(&["netns", "add", a]);
        for ns in [db, a] {
            must(&["-n", ns, "link", "set", "lo", "up"]);
        }
        // A's link: `toa` in the database host, `todb` in A.
        must(&[
            "link", "add", "toa", "netns", db, "type", "veth", "peer", "name", "todb", "netns", a,
        ]);
        must(&[
            "-n",
            db,
            "addr",
            "add",
            &format!("{}/24", hosts.a.db_addr),
            "dev",
            "toa",
        ]);
        must(&[
            "-n",
            a,
            "addr",
            "add",
            &format!("{}/24", hosts.a.agent_addr),
            "dev",
            "todb",
        ]);
        must(&["-n", db, "link", "set", "toa", "up"]);
        must(&["-n", a, "link", "set", "todb", "up"]);
        // B's link: `tob` in the database host, B's end in this machine's namespace.
        must(&[
            "link",
            "add",
            &hosts.b_end,
            "type",
            "veth",
            "peer",
            "name",
            "tob",
            "netns",
            db,
        ]);
        must(&[
            "-n",
            db,
            "addr",
            "add",
            &format!("{}/24", hosts.b.db_addr),
            "dev",
            "tob",
        ]);
        must(&[
            "addr",
            "add",
            &format!("{}/24", hosts.b.agent_addr),
            "dev",
            &hosts.b_end,
        ]);
        must(&["-n", db, "link", "set", "tob", "up"]);
        must(&["link", "set", &hosts.b_end, "up"]);
        // A finds the database host by name.
        let etc = PathBuf::from(format!("/etc/netns/{a}"));
        std::fs::create_dir_all(&etc).expect("/etc/netns folder");
        std::fs::write(
            etc.join("hosts"),
            format!(
                "127.0.0.1 localhost\n{} {DB_NAME} {OTHER_NAME}\n",
                hosts.a.db_addr
            ),
        )
        .expect("host A's hosts file");
        hosts
    }

    /// A command that runs `program` in namespace `ns` (`ip netns exec` executes it in place:
    /// the pid is the program's own).
    pub fn in_ns(ns: &str, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", ns]).arg(program);
        command
    }

    /// Remember a process to kill when the hosts go.
    pub fn own(&self, pid: u32) {
        if let Ok(mut pids) = self.pids.lock() {
            pids.push(pid);
        }
    }

    /// Cut host B's link.
    pub fn cut_b(&self) {
        must(&["-n", &self.db_ns, "link", "set", &self.b.db_end, "down"]);
    }

    /// Bring host B's link back.
    pub fn heal_b(&self) {
        must(&["-n", &self.db_ns, "link", "set", &self.b.db_end, "up"]);
    }
}

impl Default for Hosts {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        if let Ok(pids) = self.pids.lock() {
            for pid in pids.iter() {
                crate::kill_pid(*pid);
            }
        }
        for ns in [&self.a_ns, &self.db_ns] {
            let _ = ip(&["netns", "del", ns]);
            let _ = std::fs::remove_dir_all(format!("/etc/netns/{ns}"));
        }
        let _ = ip(&["link", "del", &self.b_end]);
    }
}

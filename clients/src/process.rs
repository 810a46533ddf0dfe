//! Process ancestry, read from `/proc`: which client process a hook or an MCP server runs
//! under. Used to make one agent one participant: the hooks record their client's pid, and an
//! `acc-mcp` started by the same client process finds the hooked session with that pid.
//!
//! Linux only (`/proc/<pid>/stat`); elsewhere every function answers "unknown" (`None`, empty),
//! and the callers fall back to their documented defaults.

/// The shells a client may put between itself and a hook command (`sh -c "<command>"`).
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "fish", "busybox"];

/// The command name, state letter and parent pid of a process, from `/proc/<pid>/stat`.
fn fields(pid: i64) -> Option<(String, char, i64)> {
    group_fields(pid).map(|(comm, state, parent, _)| (comm, state, parent))
}

/// `/proc/<pid>/stat` whole. Read into room for the whole line at once: the file says its size
/// is 0, so `fs::read_to_string` would read it in six growing pieces, and a long-lived server
/// reads it on every status (issue 55).
fn proc_stat(pid: i64) -> Option<String> {
    use std::io::Read;
    let mut text = String::with_capacity(1024);
    std::fs::File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// [`fields`] and the process group.
fn group_fields(pid: i64) -> Option<(String, char, i64, i64)> {
    let text = proc_stat(pid)?;
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so the fields after it
    // are found from the last closing parenthesis.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let mut rest = text.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let parent = rest.next()?.parse().ok()?;
    let group = rest.next()?.parse().ok()?;
    Some((comm, state, parent, group))
}

/// When the process `pid` started, from `/proc/<pid>/stat` (clock ticks after boot) and the
/// boot time in `/proc/stat`: to the second, or `None` when `/proc` cannot say.
pub fn started_at(pid: i64) -> Option<std::time::SystemTime> {
    let text = proc_stat(pid)?;
    // Field 22 (`starttime`) is the 20th after the closing parenthesis of `comm`.
    let ticks: u64 = text
        .get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    let boot: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let per_second = rustix::param::clock_ticks_per_second().max(1);
    let after_boot = std::time::Duration::from_millis(ticks.saturating_mul(1000) / per_second);
    Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(boot) + after_boot)
}

/// The processes of group `group` that still run (not zombies), from `/proc`.
fn running_in_group(group: i64) -> Vec<i64> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i64>().ok())
        .filter(|pid| {
            group_fields(*pid)
                .is_some_and(|(_, state, _, g)| g == group && !matches!(state, 'Z' | 'X'))
        })
        .collect()
}

/// The running children of `pid`, from `/proc`.
pub fn children(pid: i64) -> Vec<i64> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i64>().ok())
        .filter(|child| {
            fields(*child)
                .is_some_and(|(_, state, parent)| parent == pid && !matches!(state, 'Z' | 'X'))
        })
        .collect()
}

/// End what is left of process group `group` (a command started as its leader, already
/// reaped): every member is killed, and this waits (at most `within`) until none runs, so
/// nothing the command started writes after the caller goes on.
pub fn end_group(group: u32, within: std::time::Duration) {
    let Some(pid) = i32::try_from(group)
        .ok()
        .filter(|g| *g > 1)
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let started = std::time::Instant::now();
    loop {
        // ESRCH: the group is empty.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        if running_in_group(i64::from(group)).is_empty() || started.elapsed() >= within {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The parent pid and command name of a process, from `/proc/<pid>/stat`.
fn stat(pid: i64) -> Option<(i64, String)> {
    fields(pid).map(|(comm, _, parent)| (parent, comm))
}

/// Whether `/proc` says the process has ended and only waits to be reaped (a zombie, `Z`, or
/// dead, `X`): it still answers signal 0 but runs no more. `false` when `/proc` cannot say.
pub fn ended(pid: i64) -> bool {
    fields(pid).is_some_and(|(_, state, _)| matches!(state, 'Z' | 'X'))
}

/// Where pids mean what they mean to this process: the running kernel (its boot id) and this
/// process's pid namespace, as `<boot id>/<namespace>`. Two processes with the same scope can
/// test each other's pids; a pid recorded under another scope (another machine, a container
/// with its own pid namespace, the same machine after a reboot) cannot be tested from here.
/// `None` when `/proc` cannot say.
pub fn pid_scope() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let boot = boot.trim();
    let namespace = namespace.to_str()?;
    (!boot.is_empty() && !namespace.is_empty()).then(|| format!("{boot}/{namespace}"))
}

/// The client process this one runs under (a hook or an MCP server started by Claude Code or
/// Codex): the nearest ancestor that is not a shell, since clients may start commands through
/// `sh -c`. `None` when `/proc` cannot say.
pub fn client_pid() -> Option<i64> {
    client_above(i64::from(std::process::id()))
}

/// The nearest ancestor of `pid` that is not a shell.
fn client_above(pid: i64) -> Option<i64> {
    let mut current = pid;
    for _ in 0..8 {
        let (parent, _) = stat(current)?;
        if parent <= 1 {
            return None;
        }
        let (_, name) = stat(parent)?;
        if !SHELLS.contains(&name.as_str()) {
            return Some(parent);
        }
        current = parent;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pids above `pid`, nearest first, up to `depth` of them (stopping at pid 1).
    fn ancestors_of(pid: i64, depth: usize) -> Vec<i64> {
        let mut found = Vec::new();
        let mut current = pid;
        while found.len() < depth {
            match stat(current) {
                Some((parent, _)) if parent > 1 => {
                    found.push(parent);
                    current = parent;
                }
                _ => break,
            }
        }
        found
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_parent_comes_first_and_a_shell_is_skipped() {
        let me = i64::from(std::process::id());
        let parent = ancestors_of(me, 1);
        assert_eq!(parent.len(), 1);
        assert_eq!(
            std::fs::read_to_string(format!("/proc/{me}/status"))
                .expect("status")
                .lines()
                .find_map(|l| l.strip_prefix("PPid:"))
                .map(|p| p.trim().parse::<i64>().expect("ppid")),
            Some(parent[0])
        );
        // A command under `sh -c` (two commands, so the shell stays in between) finds this
        // test process, not the shell, as its client.
        let mut shell = std::process::Command::new("sh")
            .arg("-c")
            .arg("sleep 30; true")
            .spawn()
            .expect("sh");
        let shell_pid = i64::from(shell.id());
        let children = format!("/proc/{shell_pid}/task/{shell_pid}/children");
        let mut sleeper = None;
        for _ in 0..500 {
            sleeper = std::fs::read_to_string(&children).ok().and_then(|t| {
                t.split_whitespace()
                    .next()
                    .and_then(|p| p.parse::<i64>().ok())
            });
            if sleeper.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let sleeper = sleeper.expect("the shell started sleep");
        assert_eq!(ancestors_of(sleeper, 2), vec![shell_pid, me]);
        assert_eq!(client_above(sleeper), Some(me));
        let _ = shell.kill();
        let _ = shell.wait();
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(i32::try_from(sleeper).expect("pid")).expect("pid"),
            rustix::process::Signal::KILL,
        );
    }

    #[test]
    fn a_process_that_does_not_exist_has_no_ancestors() {
        assert!(ancestors_of(i64::from(i32::MAX), 4).is_empty());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_pid_scope_names_this_boot_and_this_pid_namespace() {
        let scope = pid_scope().expect("/proc says");
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("boot id");
        assert!(scope.starts_with(boot.trim()), "{scope}");
        assert!(scope.ends_with(']') && scope.contains("/pid:["), "{scope}");
        assert_eq!(
            pid_scope().as_deref(),
            Some(scope.as_str()),
            "and it is stable"
        );
    }
}

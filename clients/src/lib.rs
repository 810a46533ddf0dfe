//! ACC's own toolkit for the clients it knows (Claude Code, Codex, Gemini CLI, Qwen Code,
//! OpenCode, Kimi Code), shared by the host and its first-party adapters (`next-turn`,
//! `claude-inbox`, `qwen-inbox`, `codex-app-server`): the client kinds, the platform name
//! captures use, the read-only probe of an installed client, bounded child processes, process
//! liveness and ancestry, the fenced peer-message block, what the wake adapters share (the wake
//! text, session registries, private sockets), and a JSON-RPC client for the Codex LocalDaemon. Adapter authors need none of it: `acc-adapter-api` is
//! their whole interface.

pub mod codex_daemon;
pub mod process;
pub mod render;
pub mod running;
pub mod wake;

use std::path::PathBuf;
use std::time::Duration;

use acc_adapter_api::wire::ProbeAnswer;
use sha2::{Digest, Sha256};

/// The clients ACC has hooks and an installer for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code: JSON `hookSpecificOutput` answers.
    ClaudeCode,
    /// Codex: plain stdout context, exit 2 to deny.
    Codex,
    /// Gemini CLI: JSON `hookSpecificOutput` answers, `{"decision":"deny"}` to deny.
    Gemini,
    /// Qwen Code: Claude Code's hook shapes (`hookSpecificOutput`, `permissionDecision`).
    Qwen,
    /// OpenCode: ACC's plugin calls `acc hook opencode <event>` in Claude Code's shapes.
    OpenCode,
    /// Kimi Code: `[[hooks]]` in its `config.toml`; Claude Code's payloads and deny shape, its
    /// context as `{"message": …}`.
    Kimi,
}

impl Client {
    /// Every client ACC hooks, installs into and guards: the one list the installer, the hooks,
    /// `acc-mcp`'s adoption and `acc doctor` derive theirs from, so a new client cannot be
    /// forgotten in one of them.
    pub const ALL: [Client; 6] = [
        Self::ClaudeCode,
        Self::Codex,
        Self::Gemini,
        Self::Qwen,
        Self::OpenCode,
        Self::Kimi,
    ];

    /// The spellings of [`Client::ALL`] for a message: `claude-code, codex, gemini, qwen,
    /// opencode or kimi`.
    pub fn spellings() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|c| c.as_str()).collect();
        or_list(&names)
    }

    /// Whether the client's MCP server entries have a trust setting (`"trust": true`: its
    /// tools offered and run without asking), which `acc install --mcp-trust` writes.
    pub fn has_mcp_trust(self) -> bool {
        matches!(self, Self::Gemini | Self::Qwen)
    }

    /// The display names of the clients of [`Client::ALL`] that `keep` keeps, for a message:
    /// `Gemini CLI or Qwen Code`.
    pub fn display_names(keep: impl Fn(Client) -> bool) -> String {
        let names: Vec<&str> = Self::ALL
            .into_iter()
            .filter(|c| keep(*c))
            .map(Client::display_name)
            .collect();
        or_list(&names)
    }

    /// Parse the CLI spelling (the [`Client::as_str`] of one of [`Client::ALL`]).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// Stable string form (also the session harness).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Qwen => "qwen",
            Self::OpenCode => "opencode",
            Self::Kimi => "kimi",
        }
    }

    /// The name of the client's executable on `PATH`: `claude`, `codex`, `gemini`, `qwen`,
    /// `opencode`, `kimi`.
    pub fn executable(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Qwen => "qwen",
            Self::OpenCode => "opencode",
            Self::Kimi => "kimi",
        }
    }

    /// The first-party adapter that reaches a running session of this client live
    /// (`claude-inbox`, `codex-app-server`, `qwen-inbox`, `opencode-plugin`); `None`: its messages go through next-turn only, and
    /// a live-delivery consent for it would enable nothing.
    pub fn live_adapter(self) -> Option<&'static str> {
        match self {
            Self::ClaudeCode => Some("claude-inbox"),
            Self::Codex => Some("codex-app-server"),
            Self::Qwen => Some("qwen-inbox"),
            Self::OpenCode => Some("opencode-plugin"),
            Self::Gemini | Self::Kimi => None,
        }
    }

    /// The client's own name, for a message: `Claude Code`, `Codex`, `Gemini CLI`, `Qwen Code`,
    /// `OpenCode`, `Kimi Code`.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::Codex => "Codex",
            Self::Gemini => "Gemini CLI",
            Self::Qwen => "Qwen Code",
            Self::OpenCode => "OpenCode",
            Self::Kimi => "Kimi Code",
        }
    }
}

/// `a, b or c`.
fn or_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The platform name captures use: `linux-x64`, `darwin-arm64`, ...
pub fn platform() -> String {
    let os = if std::env::consts::OS == "macos" {
        "darwin"
    } else {
        std::env::consts::OS
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{arch}")
}

/// The first file named `name` in a `PATH` directory.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The sha256 of a file's bytes, lowercase hex; streamed (a client executable can be hundreds
/// of megabytes).
pub fn file_sha256(path: &std::path::Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).ok()?;
    Some(
        hasher
            .finalize()
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect(),
    )
}

/// Whether a process with this pid exists and runs (signal 0, a process of another user counts;
/// a zombie, ended but not yet reaped, does not).
pub fn pid_alive(pid: i64) -> bool {
    // This very process runs (`acc-mcp` tests its own session's pid on every status).
    if pid == i64::from(std::process::id()) {
        return true;
    }
    // `Pid::from_raw` asserts a non-negative pid, and a negative one would name a group.
    let Some(pid) = i32::try_from(pid)
        .ok()
        .filter(|p| *p > 0)
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    ) && !process::ended(i64::from(pid.as_raw_nonzero().get()))
}

/// The first whitespace-separated word that starts with a digit (`codex-cli 0.169.0` gives
/// `0.169.0`, `2.1.328 (Claude Code)` gives `2.1.328`).
pub fn version_word(output: &str) -> Option<&str> {
    output
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// Why [`run_bounded`] has no output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounded {
    /// The program could not be started.
    NotStarted,
    /// It ran past its deadline and was killed.
    TimedOut,
}

/// Run a command with stdin closed and its output captured, killing it past `deadline`.
pub fn run_bounded(
    command: std::process::Command,
    deadline: Duration,
) -> Result<std::process::Output, Bounded> {
    run_bounded_with_input(command, &[], deadline)
}

/// Run a command with `input` on its stdin (then closed) and its output captured, killing it
/// by its pid past `deadline`. Output is read while the command runs, so a command that
/// prints more than a pipe holds cannot stall until the deadline.
pub fn run_bounded_with_input(
    command: std::process::Command,
    input: &[u8],
    deadline: Duration,
) -> Result<std::process::Output, Bounded> {
    run(command, input, deadline, false)
}

/// [`run_bounded`], the command the leader of a process group of its own, its stderr
/// discarded: whatever it started and left running (Gemini CLI's `--version` leaves a process
/// behind that goes on writing into its home) is killed with it when it ends, and waited for,
/// at most a second.
pub fn run_bounded_in_group(
    mut command: std::process::Command,
    deadline: Duration,
) -> Result<std::process::Output, Bounded> {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    run(command, &[], deadline, true)
}

fn run(
    mut command: std::process::Command,
    input: &[u8],
    deadline: Duration,
    group: bool,
) -> Result<std::process::Output, Bounded> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // A group's command may leave a process holding its stderr: unread, so the answer does
        // not wait for that process to close it.
        .stderr(if group { Stdio::null() } else { Stdio::piped() })
        .spawn()
        .map_err(|_| Bounded::NotStarted)?;
    let pid = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        // A command that never reads its stdin must not block the caller: the write runs on
        // its own thread and ends when the pipe closes.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    let ended = match receiver.recv_timeout(deadline) {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(_)) => Err(Bounded::NotStarted),
        Err(_) => {
            // The waiting thread still owns the unreaped child, so the pid is still its own.
            if let Some(pid) = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            let _ = receiver.recv_timeout(Duration::from_secs(5));
            Err(Bounded::TimedOut)
        }
    };
    if group {
        process::end_group(pid, Duration::from_secs(1));
    }
    ended
}

/// The base directory under which ACC keeps `acc/` (the stores, and the per-user `adapters` and
/// `contracts` folders): `ACC_DATA_HOME` (absolute), else on macOS
/// `~/Library/Application Support`, else `$XDG_DATA_HOME` (absolute), else `~/.local/share`.
/// `Err` says why there is none.
pub fn data_base() -> Result<PathBuf, String> {
    if let Some(value) = std::env::var_os("ACC_DATA_HOME") {
        let path = PathBuf::from(&value);
        if !path.is_absolute() {
            return Err(format!(
                "ACC_DATA_HOME must be an absolute path, got `{}`",
                path.display()
            ));
        }
        return Ok(path);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if cfg!(target_os = "macos") {
        if let Some(home) = home {
            return Ok(home.join("Library").join("Application Support"));
        }
    } else {
        if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from)
            && xdg.is_absolute()
        {
            return Ok(xdg);
        }
        if let Some(home) = home {
            return Ok(home.join(".local").join("share"));
        }
    }
    Err("cannot find a data home: set ACC_DATA_HOME or HOME".into())
}

/// ACC's per-user folder `name` (`adapters`, `contracts`) under [`data_base`].
pub fn user_dir(name: &str) -> Option<PathBuf> {
    data_base().ok().map(|base| base.join("acc").join(name))
}

/// Where ACC looks for a kind of installed file, relative to the running executable.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// In a development build (an executable in cargo's `target/<profile>/`), relative to its
    /// folder (`.` for the adapters built beside it, `../../contracts` for the source tree's).
    pub dev: &'a str,
    /// In the install layout, relative to the executable's folder (`../lib/acc/adapters`).
    pub installed: &'a str,
    /// The per-user folder's name under `<data base>/acc/` ([`user_dir`]).
    pub user: &'a str,
    /// The `:`-separated variable whose folders are added last.
    pub env: &'a str,
}

/// `relative` (which may climb with `..`) resolved against `base` lexically, so the folders
/// ACC names read as a person would write them (`<prefix>/lib/acc/adapters`).
fn beside(base: &std::path::Path, relative: &str) -> PathBuf {
    let mut path = base.to_path_buf();
    for part in std::path::Path::new(relative).components() {
        match part {
            std::path::Component::ParentDir => {
                path.pop();
            }
            std::path::Component::Normal(name) => path.push(name),
            _ => {}
        }
    }
    path
}

/// The folders ACC searches, in order of precedence: the development build's place (only when
/// the executable runs from cargo's `target/`), the install layout's place relative to the
/// executable, the per-user folder, then each folder of the variable, which adds to the path.
pub fn search_path(places: Places<'_>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(std::path::Path::to_path_buf))
    {
        let in_target = exe_dir
            .parent()
            .and_then(std::path::Path::file_name)
            .is_some_and(|n| n == "target");
        if in_target {
            dirs.push(beside(&exe_dir, places.dev));
        }
        dirs.push(beside(&exe_dir, places.installed));
    }
    dirs.extend(user_dir(places.user));
    if let Some(list) = std::env::var_os(places.env) {
        dirs.extend(std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()));
    }
    dirs
}

/// Folders as a person reads them in a message: their paths, comma-separated.
pub fn list_folders(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The variables that name a client's folders apart from `HOME`: a version probe runs with
/// none of them, so it cannot write into the user's folders.
const CLIENT_HOMES: [&str; 9] = [
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "KIMI_CODE_HOME",
];

/// Why a version probe gave no output.
#[derive(Debug)]
pub enum VersionRun {
    /// No throwaway home could be made for it.
    NoHome(std::io::Error),
    /// It could not be started, or did not finish in time.
    Bounded(Bounded),
}

/// Run `<exe> --version` under `timeout` in a throwaway home that is also its temporary
/// directory, with no XDG or client-home variable naming the user's folders, in a process group
/// of its own that is ended before the home is removed: a client may write into its home even to
/// print its version (Gemini CLI 0.61.0 leaves `projects.json.<uuid>.tmp` files and a process
/// that goes on writing; OpenCode 1.18.33 makes its XDG folders and `$TMPDIR/opencode`), so a
/// read-only check leaves nothing behind. `acc doctor`'s client checks and the adapters' probes
/// both run their clients this way.
pub fn run_version(
    exe: &std::path::Path,
    timeout: Duration,
) -> Result<std::process::Output, VersionRun> {
    let home = tempfile::Builder::new()
        .prefix("acc-version-probe-")
        .tempdir()
        .map_err(VersionRun::NoHome)?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--version")
        .env("HOME", home.path())
        .env("TMPDIR", home.path());
    for name in CLIENT_HOMES {
        command.env_remove(name);
    }
    run_bounded_in_group(command, timeout).map_err(VersionRun::Bounded)
}

/// Read-only probe of the client `executable` on `PATH`: `<executable> --version` under
/// `timeout` (killed past it, in a throwaway home: [`run_version`]) and the real executable's fingerprint. `contract` is stated as
/// the protocol contract when a version was found.
pub fn probe_cli(executable: &str, contract: &str, timeout: Duration) -> ProbeAnswer {
    probe_cli_running(executable, contract, timeout, |_| None)
}

/// [`probe_cli`] for a client whose command is a launcher: `runs` names the program the
/// launcher really starts (`None`: the command is that program), and that program is what is
/// fingerprinted.
pub fn probe_cli_running(
    executable: &str,
    contract: &str,
    timeout: Duration,
    runs: impl Fn(&std::path::Path) -> Option<PathBuf>,
) -> ProbeAnswer {
    let mut answer = ProbeAnswer {
        platform: platform(),
        ..ProbeAnswer::default()
    };
    let Some(exe) = find_on_path(executable) else {
        answer.reason = "version_unavailable".into();
        return answer;
    };
    let real = std::fs::canonicalize(&exe).unwrap_or(exe.clone());
    let real = runs(&real).unwrap_or(real);
    answer.executable_sha256 = file_sha256(&real);
    let output = match run_version(&exe, timeout) {
        Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
        Err(VersionRun::Bounded(Bounded::TimedOut)) => {
            answer.reason = "probe_timeout".into();
            return answer;
        }
        Err(VersionRun::Bounded(Bounded::NotStarted) | VersionRun::NoHome(_)) => {
            answer.reason = "version_unavailable".into();
            return answer;
        }
    };
    match version_word(&output) {
        Some(version) => {
            answer.client_version = Some(version.to_string());
            answer.protocol_contract = Some(contract.into());
        }
        None => answer.reason = "version_unavailable".into(),
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_first_word_that_starts_with_a_digit() {
        assert_eq!(version_word("codex-cli 0.169.0\n"), Some("0.169.0"));
        assert_eq!(version_word("2.1.328 (Claude Code)"), Some("2.1.328"));
        assert_eq!(version_word("codex-cli\n"), None);
    }

    #[test]
    fn this_process_is_alive_and_pid_zero_and_negatives_are_not() {
        assert!(pid_alive(i64::from(std::process::id())));
        assert!(!pid_alive(0));
        assert!(!pid_alive(-5));
        assert!(!pid_alive(i64::from(i32::MAX) + 1));
    }

    #[test]
    fn a_zombie_is_not_alive() {
        // `true` exits at once; until it is reaped it is a zombie that still answers signal 0.
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = i64::from(child.id());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !process::ended(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "the child did not end within 10 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            !matches!(
                rustix::process::test_kill_process(
                    rustix::process::Pid::from_raw(i32::try_from(pid).expect("pid")).expect("pid")
                ),
                Err(rustix::io::Errno::SRCH)
            ),
            "a zombie still answers signal 0"
        );
        assert!(!pid_alive(pid), "but it is not alive");
        child.wait().expect("reap");
    }

    #[test]
    fn what_a_group_leader_leaves_running_ends_with_it() {
        // The command starts a process in the background, detached from its pipes, and exits
        // at once, printing that process's pid.
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!"]);
        let output = run_bounded_in_group(command, Duration::from_secs(30)).expect("ran");
        let left: i64 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("the background pid");
        assert!(
            !pid_alive(left),
            "the background process ended with its group's leader"
        );
        // Without a group of its own, the same process outlives the command (and is ended here).
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!"]);
        let output = run_bounded(command, Duration::from_secs(30)).expect("ran");
        let left: i64 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("the background pid");
        assert!(pid_alive(left), "outside a group it runs on");
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(i32::try_from(left).expect("pid")).expect("pid"),
            rustix::process::Signal::KILL,
        );
    }
}

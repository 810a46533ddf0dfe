//! The version of the client a hook runs under, read from what that client wrote or ships
//! (a hook has a few seconds, so nothing here starts a Node.js client again):
//!
//! - Claude Code: the session registry it writes, `<config dir>/sessions/<CLAUDE_PID>.json`,
//!   field `version`; at SessionStart that file may not be written yet, so else the
//!   `AI_AGENT` it sets for its hooks (`claude-code_2-1-328_harness`);
//! - Codex: the `package.json` of the npm package its launcher names in
//!   `CODEX_MANAGED_PACKAGE_ROOT`, else the running native binary's own `--version`;
//! - Gemini CLI: the `package.json` of `@google/gemini-cli` above the script its Node.js process
//!   runs;
//! - Qwen Code: likewise, the `package.json` of `@qwen-code/qwen-code`;
//! - OpenCode: a compiled executable (no script): the `package.json` of the npm package that
//!   ships it (`opencode-ai`, or its platform package `opencode-<os>-<arch>…`), else the
//!   executable's own `--version`;
//! - Kimi Code: it sets its process title (`kimi-code`), which overwrites the command line, so
//!   the script it runs cannot be read from `/proc`: the `package.json` of
//!   `@moonshot-ai/kimi-code` behind the `kimi` on the `PATH` the client gave its hook, when the
//!   client is a Node.js process titled `kimi-code` and that package's files were not written
//!   (their change time) after the process started (a package replaced after the client started may not be what runs).
//!
//! `None` whenever the answer is not certain: a session whose version is unknown is never
//! taken as guarded.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::Client;

/// How long the native Codex binary may take to print its version.
const VERSION_BUDGET: Duration = Duration::from_secs(2);

/// The version of `client`, running as `client_pid` (the hook's client process, where known).
pub fn version(client: Client, client_pid: Option<i64>) -> Option<String> {
    let found = match client {
        Client::ClaudeCode => claude_code(),
        Client::Codex => codex(client_pid),
        Client::Gemini => npm_package(client_pid?, "@google/gemini-cli"),
        Client::Qwen => npm_package(client_pid?, "@qwen-code/qwen-code"),
        Client::OpenCode => opencode(client_pid?),
        Client::Kimi => kimi(client_pid?, std::env::var_os("PATH")?),
    }?;
    is_version(&found).then_some(found)
}

/// `1.2.3` with optional pre-release or build parts: digits and dots first.
fn is_version(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && text.len() <= 64
}

fn field(path: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.get(key)?.as_str().map(str::to_string)
}

fn claude_code() -> Option<String> {
    registered_claude_code().or_else(|| {
        let agent = std::env::var("AI_AGENT").ok()?;
        agent_version(&agent)
    })
}

/// `claude-code_2-1-328_harness` gives `2.1.328`.
fn agent_version(agent: &str) -> Option<String> {
    let rest = agent.strip_prefix("claude-code_")?;
    let version = rest.split('_').next()?;
    Some(version.replace('-', "."))
}

fn registered_claude_code() -> Option<String> {
    let pid: i64 = std::env::var("CLAUDE_PID").ok()?.parse().ok()?;
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")))?;
    let registry = config.join("sessions").join(format!("{pid}.json"));
    // The registry describes the process that named itself in the hook's environment.
    let listed = std::fs::read_to_string(&registry)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())?;
    if listed.get("pid").and_then(Value::as_i64) != Some(pid) {
        return None;
    }
    listed.get("version")?.as_str().map(str::to_string)
}

fn codex(client_pid: Option<i64>) -> Option<String> {
    if let Some(root) = std::env::var_os("CODEX_MANAGED_PACKAGE_ROOT") {
        let package = PathBuf::from(root).join("package.json");
        if field(&package, "name").as_deref() == Some("@openai/codex") {
            return field(&package, "version");
        }
    }
    let exe = std::fs::read_link(format!("/proc/{}/exe", client_pid?)).ok()?;
    let output = crate::run_version(&exe, VERSION_BUDGET).ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // Only Codex's own answer counts (`codex-cli 0.169.0`), not some other program's.
    text.starts_with("codex")
        .then(|| crate::version_word(&text).map(str::to_string))
        .flatten()
}

/// OpenCode's version: the package that ships its executable, within three folders above it,
/// else its `--version` (bounded).
fn opencode(pid: i64) -> Option<String> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let shipped = exe
        .ancestors()
        .skip(1)
        .take(3)
        .map(|dir| dir.join("package.json"))
        .find(|p| {
            field(p, "name").is_some_and(|n| n == "opencode-ai" || n.starts_with("opencode-"))
        })
        .and_then(|p| field(&p, "version"));
    if shipped.is_some() {
        return shipped;
    }
    let output = crate::run_version(&exe, VERSION_BUDGET).ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // OpenCode answers with the bare version on one line.
    let line = text.trim();
    (!line.contains(char::is_whitespace)).then(|| line.to_string())
}

/// Kimi Code's version (see the module's notes): the client `pid` must be Node.js titled
/// `kimi-code`, and the package behind `kimi` on `path` no newer than the process.
fn kimi(pid: i64, path: std::ffi::OsString) -> Option<String> {
    let title = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let title = String::from_utf8_lossy(&title);
    if title.split(['\0', ' ']).next() != Some("kimi-code") {
        return None;
    }
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    if !exe
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("node"))
    {
        return None;
    }
    let script = std::env::split_paths(&path)
        .map(|dir| dir.join("kimi"))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())?;
    let package = script
        .ancestors()
        .skip(1)
        .take(3)
        .map(|dir| dir.join("package.json"))
        .find(|p| field(p, "name").as_deref() == Some("@moonshot-ai/kimi-code"))?;
    let started = crate::process::started_at(pid)?;
    // The change time (npm writes a fixed modification time into the files it unpacks; the
    // kernel sets the change time when they are written).
    let newest = [&script, &package]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| {
            use std::os::unix::fs::MetadataExt;
            std::time::UNIX_EPOCH + Duration::from_secs(u64::try_from(m.ctime()).unwrap_or(0))
        })
        .max()?;
    // `started_at` is to the second.
    if newest > started + Duration::from_secs(1) {
        return None;
    }
    field(&package, "version")
}

/// The version of the npm package `name` whose script the Node.js process `pid` runs.
fn npm_package(pid: i64, name: &str) -> Option<String> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let script = cmdline
        .split(|b| *b == 0)
        .skip(1)
        .map(|arg| PathBuf::from(String::from_utf8_lossy(arg).into_owned()))
        .find(|p| p.is_absolute() && p.is_file())?;
    let script = std::fs::canonicalize(script).ok()?;
    script
        .ancestors()
        .skip(1)
        .take(6)
        .map(|dir| dir.join("package.json"))
        .find(|p| field(p, "name").as_deref() == Some(name))
        .and_then(|p| field(&p, "version"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_versions_count() {
        assert!(is_version("2.1.328"));
        assert!(is_version("0.61.0-nightly.1+abc"));
        assert!(!is_version("2.1"));
        assert!(!is_version("v2.1.3"));
        assert!(!is_version("2.1.x"));
        assert!(!is_version(""));
    }

    #[test]
    fn claude_codes_agent_variable_names_its_version() {
        assert_eq!(
            agent_version("claude-code_2-1-328_harness").as_deref(),
            Some("2.1.328")
        );
        assert_eq!(agent_version("codex_0-169-0"), None);
        // Not a version: refused by `version` after it.
        assert!(!is_version(
            &agent_version("claude-code_latest_harness").unwrap_or_default()
        ));
    }

    #[test]
    fn a_package_json_is_read_for_its_name_and_version_only() {
        let dir = std::env::temp_dir().join(format!("acc-running-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let package = dir.join("package.json");
        std::fs::write(
            &package,
            r#"{"name":"@google/gemini-cli","version":"0.61.0"}"#,
        )
        .expect("write");
        assert_eq!(field(&package, "version").as_deref(), Some("0.61.0"));
        std::fs::write(&package, "not json").expect("write");
        assert_eq!(field(&package, "version"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A Node.js process titled as Kimi Code's is, and a package laid out as npm lays it out
    /// (`bin/kimi` a link to the package's script): its version while the package is no newer
    /// than the process; nothing for a process of another title, a `PATH` without `kimi`, or a
    /// package written after the process started (an upgrade it may not run).
    #[test]
    fn kimi_codes_version_is_its_packages_unless_written_after_it_started() {
        use std::os::unix::fs::symlink;
        let dir = std::env::temp_dir().join(format!("acc-running-kimi-{}", std::process::id()));
        let package = dir.join("lib/node_modules/@moonshot-ai/kimi-code");
        std::fs::create_dir_all(package.join("dist")).expect("dir");
        std::fs::create_dir_all(dir.join("bin")).expect("bin");
        let manifest = package.join("package.json");
        std::fs::write(
            &manifest,
            r#"{"name":"@moonshot-ai/kimi-code","version":"2.1.0"}"#,
        )
        .expect("package.json");
        std::fs::write(package.join("dist/main.mjs"), "").expect("script");
        symlink(package.join("dist/main.mjs"), dir.join("bin/kimi")).expect("link");
        let spawn = |title: &str| {
            std::process::Command::new("node")
                .args([
                    "-e",
                    &format!("process.title = '{title}'; setTimeout(() => {{}}, 60000)"),
                ])
                .spawn()
                .expect("node")
        };
        let titled = |pid: u32, title: &str| {
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while std::time::Instant::now() < deadline {
                let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                if line.starts_with(title.as_bytes()) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            panic!("node did not take the title {title}");
        };
        /// The node processes, ended by their pids however the test ends.
        struct Reaped(Vec<std::process::Child>);
        impl Drop for Reaped {
            fn drop(&mut self) {
                for child in &mut self.0 {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        let path = std::ffi::OsString::from(format!("/nowhere:{}", dir.join("bin").display()));
        let children = Reaped(vec![spawn("kimi-code"), spawn("not-kimi")]);
        let (pid, other_pid) = (children.0[0].id(), children.0[1].id());
        titled(pid, "kimi-code");
        titled(other_pid, "not-kimi");
        let found = kimi(i64::from(pid), path.clone());
        let elsewhere = kimi(i64::from(pid), "/nowhere".into());
        let untitled = kimi(i64::from(other_pid), path.clone());
        // Rewritten once the clock is surely past the process's start by more than the 1 s
        // that `started_at`'s whole seconds allow.
        let started = crate::process::started_at(i64::from(pid)).expect("start");
        while std::time::SystemTime::now() < started + Duration::from_millis(2500) {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::fs::write(
            &manifest,
            r#"{"name":"@moonshot-ai/kimi-code","version":"2.2.0"}"#,
        )
        .expect("package.json");
        let upgraded = kimi(i64::from(pid), path);
        drop(children);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(found.as_deref(), Some("2.1.0"));
        assert_eq!(elsewhere, None, "no kimi on PATH");
        assert_eq!(untitled, None, "a Node.js process of another title");
        assert_eq!(upgraded, None, "a package written after the client started");
    }
}

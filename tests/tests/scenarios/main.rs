//! Scenario tests: the protocol's rules, driven in this process through the real `acc`
//! command surface (clap parsing, the command functions, the views) against a temporary store
//! and a fixed clock, from small text files in `tests/scenarios/`.
//!
//! A scenario is a list of steps, one per line (`#` starts a comment):
//!
//! - `attach NAME [as ALIAS] [ARGS...]`: `acc attach --participant NAME ARGS`; the session's
//!   credentials are kept under ALIAS (default NAME) for the steps that act as it.
//! - `WHO: ARGS...`: `acc --json --session .. --generation .. ARGS` as WHO.
//! - `acc ARGS...`: `acc --json ARGS` with no credentials.
//! - `advance DURATION`: move the clock (`90s`, `30m`, `2h`).
//! - `repeat N STEP`: the step N times; `{i}` in it is the round (`00`, `01`, ...).
//! - `adapters none`: the steps that follow load no adapter at all.
//! - `adapters CONFIG`: load the `example` adapter and the faulty fixture (as `faulty`) with
//!   CONFIG (what `ACC_ADAPTER_CONFIG` would hold) for the steps that follow.
//! - `admission declared`: admit live delivery from the adapters' own declarations, as the
//!   capture tool does, for the steps that follow (router rules apart from evidence).
//! - `contracts without FILE` and `contracts with FILE`: admit from a copy of the repository's
//!   contracts folder without FILE (a capture, say), or with it again, for the steps that follow.
//! - A step that fails must be followed by an expectation of its error.
//! - `lines FILE`: the JSON lines of FILE become the last output (what the `example` adapter
//!   wrote). `$temp` is the scenario's temporary directory.
//! - `=> JSON`: the last step succeeded and its `--json` output contains JSON (objects by the
//!   keys given, arrays element by element and of the same length; `"*"` is any value,
//!   `"<absent>"` a key that must not be there, `"$name"` a bound value).
//! - `=> error CODE ["TEXT"]`: the last step failed with CODE (and a message containing TEXT).
//! - `=> length /pointer N`: the array there has N items.
//! - `=> bytes N`: the output, as `acc --json` prints it, is at most N bytes.
//! - `=> some /pointer JSON` and `=> none /pointer JSON`: some item (no item) of the array
//!   there contains JSON.
//! - `=> golden NAME`: the output, with every generated id, token, hash, workspace id and
//!   temporary path replaced by a placeholder, equals `tests/golden/cli/NAME.json`
//!   (`ACC_UPDATE_GOLDEN=1` writes it).
//! - `$name = /json/pointer`: bind a value of the last output (`#/pointer`: the length of the
//!   array there); `$name` in later steps and expectations stands for it.
//!
//! Arguments are split like a shell's (`shlex`); `{TEXT*N}` in an argument is TEXT N times,
//! and `{LF}` a line feed. Process-level behaviour (concurrency,
//! crashes, hooks, real clients, plugin loading, MCP over pipes) stays in the `e2e` suite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use acc_cli::args::{Cli, Opener};
use acc_core::Core;
use acc_core::clock::FixedClock;
use acc_core::error::{AccError, AccResult};
use acc_delivery::plugins::Plugins;
use clap::Parser;
use serde_json::Value;
use std::sync::Mutex;

/// 2026-01-01T00:00:00Z: every scenario starts here.
const START_MS: i64 = 1_767_225_600_000;

/// The store, the workspace, the clock and the plugins a scenario runs against.
#[derive(Debug)]
struct Room {
    workspace: acc_core::workspace::Workspace,
    data_dir: PathBuf,
    clock: FixedClock,
    plugins: Mutex<Option<Arc<Plugins>>>,
    /// The contracts folder live delivery is admitted from: the repository's, or a copy a
    /// scenario changed (`contracts without FILE`).
    contracts: Mutex<PathBuf>,
    /// `admission declared`.
    declared: std::sync::atomic::AtomicBool,
}

impl Opener for Room {
    fn open(&self) -> AccResult<Core> {
        Core::new(
            self.workspace.clone(),
            self.data_dir.clone(),
            Arc::new(self.clock.clone()),
            acc_app::process::liveness(),
        )
    }

    fn plugins(&self) -> Option<Arc<Plugins>> {
        self.plugins.lock().ok()?.clone()
    }

    fn contracts(&self) -> Option<Vec<PathBuf>> {
        Some(vec![self.contracts.lock().ok()?.clone()])
    }

    fn declared_admission(&self) -> bool {
        self.declared.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Which store a scenario runs on: every scenario runs on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    /// The embedded SQLite file.
    Sqlite,
    /// A room on a PostgreSQL server the scenario starts.
    Postgres,
}

/// A running scenario.
struct Scenario {
    /// The PostgreSQL server of a scenario on [`Backend::Postgres`] (stopped when it ends),
    /// and its room's URL.
    server: Option<(acc_tests::pg::Cluster, String)>,
    temp: tempfile::TempDir,
    room: Arc<Room>,
    creds: BTreeMap<String, (String, String)>,
    vars: BTreeMap<String, String>,
    last: Option<Result<Value, Value>>,
    last_step: String,
    /// Whether the step being run ran a command.
    ran: bool,
}

impl Scenario {
    fn new(backend: Backend) -> Self {
        let temp = tempfile::tempdir().expect("tempdir");
        let project = temp.path().join("project");
        std::fs::create_dir_all(&project).expect("project");
        let workspace = acc_app::workspace::discover(&project).expect("workspace");
        // The one switch: a scenario on PostgreSQL connects its workspace to a room, as
        // `acc room connect` does, and runs the same steps against the same expectations.
        let server = (backend == Backend::Postgres).then(|| {
            let cluster = acc_tests::pg::Cluster::start();
            let url = cluster.database("scenario").socket_url();
            acc_store::connect_room(&temp.path().join("data"), &workspace.id, &url)
                .expect("connect the scenario's room");
            (cluster, url)
        });
        let room = Arc::new(Room {
            workspace,
            data_dir: temp.path().join("data"),
            clock: FixedClock::new(START_MS),
            plugins: Mutex::new(None),
            contracts: Mutex::new(acc_tests::repo_root().join("contracts")),
            declared: std::sync::atomic::AtomicBool::new(false),
        });
        let vars = BTreeMap::from([(
            "temp".to_string(),
            temp.path().to_string_lossy().into_owned(),
        )]);
        Self {
            server,
            temp,
            room,
            creds: BTreeMap::new(),
            vars,
            last: None,
            last_step: String::new(),
            ran: false,
        }
    }

    /// Replace every `$name` in `text` by its bound value.
    fn substitute(&self, text: &str) -> String {
        let mut out = text.to_string();
        // Longest names first, so `$q1` is not read as `$q` followed by `1`.
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for name in names {
            out = out.replace(&format!("${name}"), &self.vars[name]);
        }
        out
    }

    fn run(&mut self, who: Option<&str>, args: &[String]) -> Result<(), String> {
        // In the scenario's project, never the test process's own directory (whose checkout and
        // branch `attach` would record).
        let project = self.room.workspace.root.to_string_lossy().into_owned();
        let mut argv = vec![
            "acc".to_string(),
            "--json".to_string(),
            "--cwd".to_string(),
            project,
        ];
        if let Some(who) = who {
            let (session, generation) = self
                .creds
                .get(who)
                .ok_or_else(|| format!("nobody called `{who}` is attached"))?;
            argv.extend([
                "--session".into(),
                session.clone(),
                "--generation".into(),
                generation.clone(),
            ]);
        }
        argv.extend(args.iter().map(|a| repeated(&self.substitute(a))));
        let mut cli = match Cli::try_parse_from(&argv) {
            Ok(cli) => cli,
            Err(error) => {
                // What `acc --json` answers to arguments clap refuses.
                let rendered = error.render().to_string();
                let first = rendered.lines().next().unwrap_or_default();
                let usage = AccError::usage(first.trim_start_matches("error: "));
                self.last = Some(Err(acc_app::views::error(&usage)));
                self.ran = true;
                return Ok(());
            }
        };
        cli.opener = Some(self.room.clone());
        self.ran = true;
        self.last = Some(match acc_cli::run(cli) {
            Ok(output) => Ok(output.value),
            Err(error) => Err(acc_app::views::error(&error)),
        });
        Ok(())
    }

    fn step(&mut self, line: &str) -> Result<(), String> {
        if let Some(expected) = line.strip_prefix("=>") {
            return self.expect(expected.trim());
        }
        if let Some(binding) = line.strip_prefix('$') {
            let (name, pointer) = binding
                .split_once('=')
                .ok_or("a binding is `$name = /pointer`")?;
            let pointer = pointer.trim();
            let value = match pointer.strip_prefix('#') {
                Some(array) => self
                    .output()?
                    .pointer(array)
                    .and_then(Value::as_array)
                    .map(|items| Value::from(items.len())),
                None => self.output()?.pointer(pointer).cloned(),
            };
            let value = match value {
                Some(Value::String(text)) => text,
                Some(other) => other.to_string(),
                None => return Err(format!("the last output has nothing at {pointer}")),
            };
            self.vars.insert(name.trim().to_string(), value);
            return Ok(());
        }
        self.last_step = line.to_string();
        let words = shlex::split(line).ok_or("unbalanced quotes")?;
        match words.first().map(String::as_str) {
            Some("repeat") => {
                let (_, rest) = line.split_once(' ').ok_or("repeat N STEP")?;
                let (count, step) = rest.trim().split_once(' ').ok_or("repeat N STEP")?;
                let count: usize = count.parse().map_err(|_| "repeat N STEP")?;
                for round in 0..count {
                    self.step(&step.replace("{i}", &format!("{round:02}")))?;
                    if let Some(Err(error)) = &self.last {
                        return Err(format!("round {round} failed: {error}"));
                    }
                }
                Ok(())
            }
            Some("admission") => {
                let declared = words.get(1).map(String::as_str) == Some("declared");
                self.room
                    .declared
                    .store(declared, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            }
            Some("contracts") => self.change_contracts(&words),
            Some("adapters") if words.get(1).map(String::as_str) == Some("none") => {
                *self.room.plugins.lock().map_err(|e| e.to_string())? =
                    Some(Arc::new(Plugins::default()));
                Ok(())
            }
            Some("adapters") => {
                let (_, config) = line.split_once(' ').ok_or("adapters CONFIG")?;
                self.load_adapters(&self.substitute(config))
            }
            Some("lines") => {
                let file = self.substitute(words.get(1).ok_or("lines FILE")?);
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                let lines: Result<Vec<Value>, _> = text.lines().map(serde_json::from_str).collect();
                self.last = Some(Ok(Value::Array(lines.map_err(|e| format!("{file}: {e}"))?)));
                Ok(())
            }
            Some("policy") => {
                let policy = words.get(1).ok_or("policy advisory|guarded")?;
                self.set_policy(policy)
            }
            Some("advance") => {
                let ms = duration_ms(words.get(1).ok_or("advance needs a duration")?)?;
                self.room.clock.advance(ms);
                Ok(())
            }
            Some("attach") => {
                let name = words.get(1).ok_or("attach needs a participant")?.clone();
                let (alias, rest) = match words.get(2).map(String::as_str) {
                    Some("as") => (
                        words.get(3).ok_or("attach NAME as ALIAS")?.clone(),
                        &words[4..],
                    ),
                    _ => (name.clone(), &words[2..]),
                };
                let mut args = vec!["attach".to_string(), "--participant".into(), name];
                args.extend(rest.iter().cloned());
                self.run(None, &args)?;
                let value = self.output()?;
                let session = value["sessionId"].as_str().unwrap_or_default().to_string();
                let generation = value["generation"].as_str().unwrap_or_default().to_string();
                self.vars.insert(format!("{alias}.session"), session.clone());
                self.creds.insert(alias, (session, generation));
                Ok(())
            }
            Some("acc") => self.run(None, &words[1..]),
            Some(first) if first.ends_with(':') => {
                let who = first.trim_end_matches(':').to_string();
                self.run(Some(&who), &words[1..])
            }
            _ => Err("a step is `policy`, `attach`, `advance`, `acc ...`, `WHO: ...`, `=> ...` or `$name = /pointer`".into()),
        }
    }

    /// `policy guarded`: the workspace's claim policy, written into its configuration before
    /// the first command (the store is bound to the workspace it was created for).
    fn set_policy(&mut self, policy: &str) -> Result<(), String> {
        if self.ran || !self.creds.is_empty() {
            return Err("`policy` comes before every other step".into());
        }
        let project = self.room.workspace.root.clone();
        std::fs::write(
            project.join("acc.workspace.json"),
            format!(
                r#"{{"schemaVersion":1,"workspaceId":"scenario","policy":{{"claimMode":"{policy}"}}}}"#
            ),
        )
        .map_err(|e| e.to_string())?;
        let workspace = acc_app::workspace::discover(&project).map_err(|e| e.message)?;
        if let Some((_, url)) = &self.server {
            // The committed id names another workspace: its room is connected too.
            acc_store::connect_room(&self.room.data_dir, &workspace.id, url)
                .map_err(|e| e.message)?;
        }
        self.room = Arc::new(Room {
            workspace,
            data_dir: self.room.data_dir.clone(),
            clock: self.room.clock.clone(),
            plugins: Mutex::new(None),
            contracts: Mutex::new(acc_tests::repo_root().join("contracts")),
            declared: std::sync::atomic::AtomicBool::new(false),
        });
        Ok(())
    }

    /// `contracts without FILE` / `contracts with FILE`.
    fn change_contracts(&mut self, words: &[String]) -> Result<(), String> {
        let (with, file) = match (words.get(1).map(String::as_str), words.get(2)) {
            (Some("without"), Some(file)) => (false, file),
            (Some("with"), Some(file)) => (true, file),
            _ => return Err("contracts without FILE, or contracts with FILE".into()),
        };
        let original = acc_tests::repo_root().join("contracts");
        let copy = self.temp.path().join("contracts");
        if !copy.exists() {
            acc_tests::copy_dir(&original, &copy);
        }
        let changed = if with {
            std::fs::copy(original.join(file), copy.join(file)).map(|_| ())
        } else {
            std::fs::remove_file(copy.join(file))
        };
        changed.map_err(|e| format!("{file}: {e}"))?;
        *self.room.contracts.lock().map_err(|e| e.to_string())? = copy;
        Ok(())
    }

    /// Copy the adapters into the scenario's adapter directory and load them with `config`.
    fn load_adapters(&mut self, config: &str) -> Result<(), String> {
        let dir = self.temp.path().join("adapters");
        let suffix = std::env::consts::DLL_SUFFIX;
        if !dir.exists() {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            for (from, to) in [
                ("libacc_adapter_example", "libacc_adapter_example"),
                ("libfaulty_adapter", "libacc_adapter_faulty"),
            ] {
                std::fs::copy(
                    acc_tests::bin_dir().join(format!("{from}{suffix}")),
                    dir.join(format!("{to}{suffix}")),
                )
                .map_err(|e| format!("{from}: {e} (cargo build --workspace builds it)"))?;
            }
        }
        let config: Value = serde_json::from_str(config).map_err(|e| format!("adapters: {e}"))?;
        let configs = config
            .as_object()
            .ok_or("adapters takes a JSON object from adapter name to configuration")?
            .iter()
            .map(|(name, value)| (name.clone(), value.to_string()))
            .collect();
        let plugins = Plugins::load_from(vec![dir], &configs);
        if !plugins.refused.is_empty() {
            return Err(format!("adapters refused: {:?}", plugins.refused));
        }
        *self.room.plugins.lock().map_err(|e| e.to_string())? = Some(Arc::new(plugins));
        Ok(())
    }

    /// Replace what differs between runs (generated ids and tokens, hashes, the workspace id
    /// and paths under the temporary directory) by stable placeholders. The clock is fixed, so
    /// times stay as they are.
    fn normalise(&self, value: &mut Value) {
        let temp = self.temp.path().to_string_lossy().into_owned();
        let workspace = self.room.workspace.id.clone();
        match value {
            Value::String(text) => {
                if text.contains(&temp) {
                    *text = text.replace(&temp, "<temp>");
                }
                if *text == workspace {
                    *text = "<workspace>".into();
                }
                *text = without_ids(text);
                if text.len() == 64 && text.chars().all(|c| c.is_ascii_hexdigit()) {
                    *text = "<sha256>".into();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.normalise(v)),
            Value::Object(map) => {
                // A room on PostgreSQL describes itself in `acc status` (its location, server
                // version and round trip: tests/tests/e2e/room_cli.rs holds them); the rest of
                // the output is the same on both backends.
                if self.server.is_some()
                    && map.get("room").is_some_and(|r| r["backend"] == "postgres")
                {
                    map.remove("room");
                }
                map.values_mut().for_each(|v| self.normalise(v));
            }
            _ => {}
        }
    }

    fn output(&self) -> Result<&Value, String> {
        match &self.last {
            Some(Ok(value)) => Ok(value),
            Some(Err(error)) => Err(format!("`{}` failed: {error}", self.last_step)),
            None => Err("no step has run".into()),
        }
    }

    fn expect(&self, expected: &str) -> Result<(), String> {
        let failed = match &self.last {
            Some(Err(error)) => Some(error),
            _ => None,
        };
        if let Some(error) = expected.strip_prefix("error") {
            let words = shlex::split(error).ok_or("unbalanced quotes")?;
            let Some(Err(actual)) = &self.last else {
                return Err(format!(
                    "`{}` succeeded, expected error {}: {}",
                    self.last_step,
                    error.trim(),
                    pretty(self.last.as_ref().and_then(|l| l.as_ref().ok()))
                ));
            };
            let code = words.first().ok_or("=> error CODE")?;
            if actual["error"]["code"] != code.as_str() {
                return Err(format!("expected error {code}, got {actual}"));
            }
            if let Some(text) = words.get(1) {
                let text = self.substitute(text);
                let message = actual["error"]["message"].as_str().unwrap_or_default();
                if !message.contains(&text) {
                    return Err(format!("the message does not contain `{text}`: {message}"));
                }
            }
            return Ok(());
        }
        // An expectation about `error` reads the failed step's error object.
        let actual = match failed {
            Some(error) if expected.contains("\"error\"") || expected.starts_with("golden") => {
                error
            }
            _ => self.output()?,
        };
        let (verb, rest) = expected.split_once(' ').unwrap_or((expected, ""));
        if verb == "golden" {
            let mut value = actual.clone();
            self.normalise(&mut value);
            acc_tests::golden(&format!("cli/{}.json", rest.trim()), &value);
            return Ok(());
        }
        if verb == "bytes" {
            let limit: usize = rest.trim().parse().map_err(|_| "=> bytes N")?;
            let size = actual.to_string().len();
            return if size <= limit {
                Ok(())
            } else {
                Err(format!("the output is {size} bytes, more than {limit}"))
            };
        }
        if let "length" | "some" | "none" = verb {
            let (pointer, argument) = rest
                .trim()
                .split_once(' ')
                .ok_or("=> VERB /pointer ARGUMENT")?;
            // `/` is the whole output.
            let items = actual
                .pointer(if pointer == "/" { "" } else { pointer })
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    format!("no array at {pointer}\nactual: {}", pretty(Some(actual)))
                })?;
            let argument = self.substitute(argument.trim());
            let holds = match verb {
                "length" => {
                    argument
                        .parse::<usize>()
                        .map_err(|_| "=> length /pointer N")?
                        == items.len()
                }
                _ => {
                    let want: Value = serde_json::from_str(&repeated(&argument))
                        .map_err(|e| format!("the expectation is not JSON ({e})"))?;
                    let found = items.iter().any(|item| contains(&want, item, "").is_ok());
                    found == (verb == "some")
                }
            };
            return if holds {
                Ok(())
            } else {
                Err(format!(
                    "{verb} {pointer} {argument} does not hold\nactual: {}",
                    pretty(Some(actual))
                ))
            };
        }
        let expected: Value = serde_json::from_str(&repeated(&self.substitute(expected)))
            .map_err(|e| format!("the expectation is not JSON ({e})"))?;
        contains(&expected, actual, "")
            .map_err(|why| format!("{why}\nactual: {}", pretty(Some(actual))))
    }
}

/// `text` with every generated id (`session_…`, `claim_…`, `message_…`, `gen_…`, `cm_…`: the
/// prefix and at least 20 base64url characters), anywhere in it, replaced by `<session>` etc.
fn without_ids(text: &str) -> String {
    let id_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::new();
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for prefix in ["session_", "claim_", "message_", "gen_", "cm_"] {
            if let Some(tail) = rest.strip_prefix(prefix) {
                let run = tail.find(|c| !id_char(c)).unwrap_or(tail.len());
                let starts_word = out.chars().last().is_none_or(|c| !id_char(c));
                if run >= 20 && starts_word {
                    out.push_str(&format!("<{}>", prefix.trim_end_matches('_')));
                    rest = &tail[run..];
                    continue 'scan;
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// Expand every `{TEXT*N}` in `text` to TEXT repeated N times (TEXT without braces or
/// quotes, so JSON objects around it are left alone).
fn repeated(text: &str) -> String {
    let text = text.replace("{LF}", "\n");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(close) = rest.find('}') {
        let open = rest[..close].rfind('{');
        let expansion = open.and_then(|open| {
            let (unit, n) = rest[open + 1..close].rsplit_once('*')?;
            let n = n.parse::<usize>().ok()?;
            (!unit.is_empty() && !unit.contains(['"', '{'])).then(|| (open, unit.repeat(n)))
        });
        match expansion {
            Some((open, expanded)) => {
                out.push_str(&rest[..open]);
                out.push_str(&expanded);
            }
            None => out.push_str(&rest[..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn pretty(value: Option<&Value>) -> String {
    value
        .map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
        .unwrap_or_else(|| "(nothing)".into())
}

fn duration_ms(text: &str) -> Result<i64, String> {
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 90s, 30m or 2h"))?;
    Ok(match unit {
        "s" => n * 1000,
        "m" => n * 60_000,
        "h" => n * 3_600_000,
        _ => return Err(format!("`{text}` is not a duration like 90s, 30m or 2h")),
    })
}

/// Whether `actual` contains `expected` (see the module documentation).
fn contains(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::String(any), _) if any == "*" => Ok(()),
        (Value::Object(want), Value::Object(have)) => {
            for (key, value) in want {
                let here = format!("{at}/{key}");
                match (value, have.get(key)) {
                    (Value::String(absent), None) if absent == "<absent>" => {}
                    (Value::String(absent), Some(found)) if absent == "<absent>" => {
                        return Err(format!("{here} should be absent, found {found}"));
                    }
                    (_, None) => return Err(format!("{here} is missing")),
                    (value, Some(found)) => contains(value, found, &here)?,
                }
            }
            Ok(())
        }
        (Value::Array(want), Value::Array(have)) => {
            if want.len() != have.len() {
                return Err(format!(
                    "{at} has {} items, expected {}",
                    have.len(),
                    want.len()
                ));
            }
            for (index, (w, h)) in want.iter().zip(have).enumerate() {
                contains(w, h, &format!("{at}/{index}"))?;
            }
            Ok(())
        }
        (want, have) if want == have => Ok(()),
        (want, have) => Err(format!("{at}: expected {want}, found {have}")),
    }
}

/// Run one scenario file, failing with the line that did not hold.
fn run_file(path: &Path, backend: Backend) {
    let text = std::fs::read_to_string(path).expect("scenario file");
    let mut scenario = Scenario::new(backend);
    // A failed step no expectation looked at.
    let mut unchecked: Option<(usize, String)> = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("=>") {
            unchecked = None;
        } else if let Some((at, step)) = unchecked.take() {
            panic!(
                "{}:{at}: {step}\nfailed, and no expectation followed: {}",
                path.display(),
                pretty(scenario.last.as_ref().and_then(|l| l.as_ref().err()))
            );
        }
        scenario.ran = false;
        if let Err(why) = scenario.step(line) {
            panic!("{}:{}: {line}\n{why}", path.display(), number + 1);
        }
        if scenario.ran && matches!(scenario.last, Some(Err(_))) {
            unchecked = Some((number + 1, line.to_string()));
        }
    }
    if let Some((at, step)) = unchecked {
        panic!(
            "{}:{at}: {step}\nfailed, and no expectation followed",
            path.display()
        );
    }
    // The scenario ran where it was meant to: on PostgreSQL no SQLite store was made, and the
    // room holds what the scenario wrote.
    if backend == Backend::Postgres {
        let sqlite = acc_store::workspace_dir(&scenario.room.data_dir, &scenario.room.workspace.id)
            .join(acc_store::STORE_FILE);
        assert!(
            !sqlite.exists(),
            "{}: a SQLite store was made",
            path.display()
        );
        if let Some(mut store) =
            acc_store::Store::open_existing(&scenario.room.data_dir, &scenario.room.workspace.id)
                .expect("the room opens")
        {
            assert!(
                store.location().starts_with("postgres://"),
                "{}",
                store.location()
            );
            store.read(|r| r.head_seq()).expect("the room reads");
        }
    }
}

fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_file(&scenario_dir().join(concat!(stringify!($name), ".scn")), Backend::Sqlite);
            }
        )*

        /// The same scenarios on a room on PostgreSQL.
        mod on_postgres {
            use super::*;
            $(
                #[test]
                fn $name() {
                    run_file(&scenario_dir().join(concat!(stringify!($name), ".scn")), Backend::Postgres);
                }
            )*
        }

        /// Every file in `tests/scenarios` is listed above, so none is silently skipped.
        #[test]
        fn every_scenario_file_is_run() {
            let listed = [$(concat!(stringify!($name), ".scn")),*];
            for entry in std::fs::read_dir(scenario_dir()).expect("scenarios dir") {
                let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
                assert!(listed.contains(&name.as_str()), "{name} is not listed in scenarios!");
            }
        }
    };
}

scenarios!(
    runner_self_check,
    claims,
    claims_guarded_room,
    claims_holder_offline,
    claim_leases,
    claim_release,
    intent,
    messaging_flow,
    messaging_validation,
    messaging_recipients,
    messaging_idempotency,
    receipts,
    inbox_pages,
    finish,
    prune,
    attention,
    decisions,
    decision_withdrawal,
    history,
    router,
    router_policy,
    router_wake,
    router_lease,
    next_turn,
    golden,
    golden_events,
    router_evidence,
    bindings,
);
mod plans;

//! Helpers for the end-to-end tests and benchmarks: locate the built binaries, give each test
//! its own data home and workspace, run commands with a bounded wait, and parse their output.
//!
//! Every process a helper starts is waited for with a deadline and killed by pid on timeout.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod certs;
pub mod delay;
pub mod netns;
pub mod pg;

/// Default deadline for one command.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The directory holding the workspace's built binaries (`target/debug`).
pub fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ACC_TEST_BIN_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("current test executable");
    let mut dir = exe.parent().expect("executable directory").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir
}

/// The path of a built binary; fails loudly when it was not built.
pub fn bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.exists(),
        "{} is missing: build the workspace binaries first (`cargo build --workspace --bins`, which ./test.sh does)",
        path.display()
    );
    path
}

/// Wait for a child with a deadline; on timeout kill it by pid and fail. Its output is read
/// while it runs (a child that writes more than a pipe holds must not block on it).
pub fn wait_with_deadline(mut child: Child, deadline: Duration, what: &str) -> Output {
    fn drain(
        pipe: Option<impl std::io::Read + Send + 'static>,
    ) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return Output {
                    status,
                    stdout: stdout.join().unwrap_or_default(),
                    stderr: stderr.join().unwrap_or_default(),
                };
            }
            Ok(None) if start.elapsed() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let pid = child.id();
                kill_pid(pid);
                let _ = child.wait();
                // What it said before it was killed (its progress, when it reports any).
                let said = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
                let tail: Vec<&str> = said.lines().rev().take(20).collect();
                panic!(
                    "{what} did not finish within {deadline:?}; killed pid {pid}; the end of its stderr:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
            Err(e) => panic!("waiting for {what}: {e}"),
        }
    }
}

/// SIGKILL a process by pid.
pub fn kill_pid(pid: u32) {
    let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
}

/// The result of one `acc` run.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    fn from_output(output: Output) -> Self {
        Self {
            code: exit_code(output.status),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Parse stdout as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not json ({e}): {}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    /// Assert success and parse stdout as JSON.
    pub fn ok_json(&self) -> Value {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self.json()
    }

    /// Assert a failure with this exit code and error code; returns the error object.
    pub fn err(&self, exit: i32, code: &str) -> Value {
        assert_eq!(
            self.code, exit,
            "expected exit {exit}\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        let value = self.json();
        let error = value
            .get("error")
            .cloned()
            .unwrap_or_else(|| panic!("no error object: {value}"));
        assert_eq!(error["code"], code, "{value}");
        error
    }
}

/// Exit code of a status, -1 for a signal.
pub fn exit_code(status: ExitStatus) -> i32 {
    status.code().unwrap_or(-1)
}

/// Owner credentials of an attached session.
#[derive(Debug, Clone)]
pub struct Creds {
    /// Participant.
    pub participant: String,
    /// Session id.
    pub session: String,
    /// Generation token.
    pub generation: String,
}

impl Creds {
    /// The credentials `acc attach --json` printed for `participant`.
    pub fn from_attach(participant: &str, value: &Value) -> Self {
        Self {
            participant: participant.to_string(),
            session: value["sessionId"].as_str().expect("sessionId").to_string(),
            generation: value["generation"]
                .as_str()
                .expect("generation")
                .to_string(),
        }
    }
}

/// One test's world: a temporary data home and a workspace directory.
#[derive(Debug)]
pub struct World {
    /// Keeps the temporary directory alive.
    pub temp: tempfile::TempDir,
    /// `ACC_DATA_HOME`.
    pub data_home: PathBuf,
    /// The workspace directory (also the working directory of commands).
    pub dir: PathBuf,
    /// Environment every command of the world gets ([`World::set_env`]).
    env: std::sync::Mutex<Vec<(String, std::ffi::OsString)>>,
    /// The PostgreSQL server of a world on a room ([`BACKEND_SWITCH`]), stopped with it.
    pub room: Option<pg::Cluster>,
    /// The network namespace the world's commands run in (a host of [`netns::Hosts`]).
    netns: Option<String>,
}

/// The test harness's one switch of backend: with `ACC_TEST_BACKEND=postgres`, every
/// [`World`] starts a PostgreSQL server and its commands reach a room there (through
/// its data home's room file, as a container or CI runner would name one), so the same end-to-end tests run
/// on the other backend. `./test.sh` runs the tests whose behaviour depends on the store a
/// second time with it.
pub const BACKEND_SWITCH: &str = "ACC_TEST_BACKEND";

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl World {
    /// A fresh world with an empty workspace directory.
    pub fn new() -> Self {
        let temp = tempfile::tempdir().expect("tempdir");
        let data_home = temp.path().join("data");
        let dir = temp.path().join("project");
        std::fs::create_dir_all(&dir).expect("mkdir project");
        let dir = std::fs::canonicalize(&dir).expect("canonical project");
        std::fs::create_dir_all(temp.path().join("tmp")).expect("mkdir tmp");
        let world = Self {
            temp,
            data_home,
            dir,
            env: std::sync::Mutex::new(Vec::new()),
            room: None,
            netns: None,
        };
        match std::env::var(BACKEND_SWITCH).as_deref() {
            Ok("postgres") => world.on_postgres(),
            Ok("sqlite") | Err(_) => world,
            Ok(other) => panic!("{BACKEND_SWITCH}={other}: sqlite or postgres"),
        }
    }

    /// This world's commands on a room on a PostgreSQL server of its own: its data home's room
    /// (`acc room connect --every-workspace`), which every process with the world's data home
    /// finds, the clients' MCP servers and hooks included.
    pub fn on_postgres(mut self) -> Self {
        let cluster = pg::Cluster::start();
        let url = cluster.database("world").socket_url();
        acc_store::connect_default_room(&self.data_home.join("acc"), &url)
            .expect("the world's room");
        self.room = Some(cluster);
        self
    }

    /// This world on another host: its commands run in the network namespace `ns`.
    pub fn on_host(mut self, ns: &str) -> Self {
        self.netns = Some(ns.to_string());
        self
    }

    /// Give every later command of this world `key=value` (a room's `PGPASSFILE`).
    pub fn set_env(&self, key: &str, value: impl Into<std::ffi::OsString>) {
        if let Ok(mut env) = self.env.lock() {
            env.push((key.to_string(), value.into()));
        }
    }

    /// A command for a binary, in the workspace, with the world's data home and a clean
    /// ACC environment.
    pub fn command(&self, binary: &str) -> Command {
        self.command_path(bin(binary))
    }

    /// The world's temporary folder, the `TMPDIR` of the clients the tests start ([`writer`],
    /// [`claude_print`]): what a client leaves there (Claude Code's and Qwen Code's messaging
    /// sockets of a killed session, OpenCode's wake socket) goes with the world, never into the
    /// machine's `/tmp`. (ACC's own commands keep the machine's: the capture tool would move
    /// its scratch folders, whose sockets need short paths, out of this deeper one to `/tmp`
    /// anyway, and gives each client a temporary folder inside them.)
    pub fn tmp(&self) -> PathBuf {
        self.temp.path().join("tmp")
    }

    /// Like [`World::command`], for any program (a shell, a client).
    pub fn command_path(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = match &self.netns {
            Some(ns) => netns::Hosts::in_ns(ns, program),
            None => Command::new(program),
        };
        // `PWD` as a shell sets it: a child that reads its directory from `PWD` (OpenCode
        // takes it for the project, and walked this repository from the test's own `PWD`)
        // must see the directory it runs in.
        command
            .current_dir(&self.dir)
            .env("PWD", &self.dir)
            .env("ACC_DATA_HOME", &self.data_home);
        for var in [
            "ACC_SESSION",
            "ACC_GENERATION",
            "ACC_WORKSPACE_ROOT",
            "ACC_PARTICIPANT",
            "ACC_TEST_CLOCK_OFFSET_SECONDS",
            "ACC_TEST_HOLD_WRITE_MS",
            "ACC_MCP_PARTICIPANT",
            "ACC_MCP_WORKSPACE",
            "ACC_ROOM",
            "PGPASSWORD",
            "PGPASSFILE",
            "PGUSER",
            "PGHOST",
            "PGPORT",
            "PGDATABASE",
            "PGSERVICE",
            "PGSERVICEFILE",
            "PGSYSCONFDIR",
            "PGSSLMODE",
            "PGSSLROOTCERT",
            "PGSSLCERT",
            "PGSSLKEY",
            "PGCONNECT_TIMEOUT",
        ] {
            command.env_remove(var);
        }
        if let Ok(env) = self.env.lock() {
            for (key, value) in env.iter() {
                command.env(key, value);
            }
        }
        command.stdin(Stdio::null());
        command
    }

    /// Run `acc --json ARGS`.
    pub fn acc(&self, args: &[&str]) -> Run {
        self.acc_with(args, &[])
    }

    /// Run `acc --json ARGS` with extra environment variables.
    pub fn acc_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.command("acc");
        command.arg("--json").args(args);
        for (key, value) in env {
            command.env(key, value);
        }
        self.run(command, "acc")
    }

    /// `from` asks `to` a question; the send's JSON.
    pub fn ask(&self, from: &Creds, to: &str, subject: &str, body: &str) -> Value {
        self.acc_as(
            from,
            &[
                "message",
                "--to",
                to,
                "--kind",
                "question",
                "--subject",
                subject,
                "--body",
                body,
            ],
        )
        .ok_json()
    }

    /// `from` sends `to` a note; the send's JSON.
    pub fn tell(&self, from: &Creds, to: &str, subject: &str, body: &str) -> Value {
        self.acc_as(
            from,
            &["message", "--to", to, "--subject", subject, "--body", body],
        )
        .ok_json()
    }

    /// `acc-mcp` speaking for `participant` in the world's workspace, initialized.
    pub fn mcp(&self, participant: &str) -> JsonRpcChild {
        let mut command = self.command("acc-mcp");
        command
            .env("ACC_MCP_PARTICIPANT", participant)
            .env("ACC_MCP_WORKSPACE", &self.dir);
        let mut child = JsonRpcChild::spawn(command);
        let init = child.request(
            1,
            "initialize",
            serde_json::json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
        );
        assert!(init["result"].is_object(), "{init}");
        child.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        child
    }

    /// An `acc --json sync --follow` that is following: it follows from the moment it starts,
    /// which cannot be seen from outside, so `who` declares intents until one shows on its
    /// stream (bounded). The lines read meanwhile are in its `seen`.
    pub fn follower(&self, who: &Creds) -> JsonRpcChild {
        let mut command = self.command("acc");
        command.args(["--json", "sync", "--follow"]);
        let mut follower = JsonRpcChild::spawn(command);
        let started = Instant::now();
        while follower
            .try_wait_for(
                |v| v["type"] == "intent.updated",
                Duration::from_millis(300),
            )
            .is_none()
        {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the follower never showed an event: {:?}",
                follower.seen
            );
            self.acc_as(who, &["work", "--summary", "warming up", "--mode", "edit"])
                .ok_json();
        }
        follower
    }

    /// Run `acc ARGS` without `--json`.
    pub fn acc_text(&self, args: &[&str]) -> Run {
        let mut command = self.command("acc");
        command.args(args);
        self.run(command, "acc")
    }

    /// Run a prepared command with the default deadline.
    pub fn run(&self, mut command: Command, what: &str) -> Run {
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {what}: {e}"));
        Run::from_output(wait_with_deadline(child, COMMAND_TIMEOUT, what))
    }

    /// The first receipt of a message, from its history.
    pub fn receipt(&self, message_id: &str) -> serde_json::Value {
        self.acc(&["sync", "--scope", "history", "--message", message_id])
            .ok_json()["items"][0]["receipts"][0]
            .clone()
    }

    /// Run `acc --json` as a session.
    pub fn acc_as(&self, who: &Creds, args: &[&str]) -> Run {
        self.acc_as_with(who, args, &[])
    }

    /// Run `acc --json` as a session, with extra environment variables.
    pub fn acc_as_with(&self, who: &Creds, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec![
            ("ACC_SESSION", who.session.as_str()),
            ("ACC_GENERATION", who.generation.as_str()),
        ];
        all.extend_from_slice(env);
        self.acc_with(args, &all)
    }

    /// Attach a participant and return its credentials.
    pub fn attach(&self, participant: &str) -> Creds {
        let value = self
            .acc(&["attach", "--participant", participant])
            .ok_json();
        Creds::from_attach(participant, &value)
    }

    /// Attach a participant in another directory (`--cwd`).
    pub fn attach_in(&self, dir: &Path, participant: &str) -> Creds {
        let dir = dir.to_string_lossy().into_owned();
        let value = self
            .acc(&["--cwd", &dir, "attach", "--participant", participant])
            .ok_json();
        Creds::from_attach(participant, &value)
    }

    /// Run `acc --json` as a session in another directory (`--cwd`).
    pub fn acc_in_as(&self, dir: &Path, who: &Creds, args: &[&str]) -> Run {
        let dir = dir.to_string_lossy().into_owned();
        let mut all = vec!["--cwd", dir.as_str()];
        all.extend_from_slice(args);
        self.acc_as(who, &all)
    }

    /// Run `acc hook CLIENT EVENT` with `input` on stdin, under the default deadline.
    pub fn hook(&self, client: &str, event: &str, input: &str) -> Run {
        self.hook_with(client, event, input, &[])
    }

    /// `hook`, with extra environment variables.
    pub fn hook_with(&self, client: &str, event: &str, input: &str, env: &[(&str, &str)]) -> Run {
        use std::io::Write;
        let mut command = self.command("acc");
        command
            .args(["hook", client, event])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn acc hook");
        if let Some(mut stdin) = child.stdin.take() {
            // A hook that stops reading early must not fail the test here.
            let _ = stdin.write_all(input.as_bytes());
        }
        Run::from_output(wait_with_deadline(child, COMMAND_TIMEOUT, "acc hook"))
    }

    /// Claude Code's SessionStart hook (`source: startup`) for `conversation` in the world's
    /// project, run by a client whose pid is `claude_pid` (Claude Code names it to its hooks in
    /// `CLAUDE_PID`).
    pub fn claude_session_start(&self, conversation: &str, claude_pid: u32) -> Run {
        let input = serde_json::json!({
            "session_id": conversation,
            "cwd": self.dir,
            "hook_event_name": "SessionStart",
            "source": "startup",
        })
        .to_string();
        let pid = claude_pid.to_string();
        self.hook_with(
            "claude-code",
            "SessionStart",
            &input,
            &[("CLAUDE_PID", pid.as_str())],
        )
    }

    /// `acc status --json`.
    pub fn status(&self) -> Value {
        self.acc(&["status"]).ok_json()
    }

    /// The workspace id of the world's directory.
    pub fn workspace_id(&self) -> String {
        self.status()["workspace"]["workspaceId"]
            .as_str()
            .expect("workspace id")
            .to_string()
    }

    /// The store file of the world's workspace.
    pub fn store_path(&self) -> PathBuf {
        store_path(&self.data_home, &self.workspace_id())
    }
}

/// The store file for a workspace under a data home.
pub fn store_path(data_home: &Path, workspace_id: &str) -> PathBuf {
    data_home
        .join("acc")
        .join("workspaces")
        .join(workspace_id)
        .join("store.sqlite3")
}

/// Wait until `condition` holds, polling; fail after `deadline`.
pub fn wait_until(deadline: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // A long wait is worth knowing when a slower machine one day runs past the bound: the
    // test's output says which step took the time.
    if start.elapsed() > Duration::from_secs(5) {
        eprintln!("waited {:.1?} for {what}", start.elapsed());
    }
}

/// The cursors of a sync page's `events`, asserting they run 1, 2, 3, ... with no gap: the event
/// log only grows, and a transaction that did not commit took no number.
pub fn assert_gap_free(page: &Value) -> Vec<u64> {
    let cursors: Vec<u64> = page["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            e["cursor"]
                .as_str()
                .expect("cursor")
                .parse()
                .expect("number")
        })
        .collect();
    assert_eq!(
        cursors,
        (1..=cursors.len() as u64).collect::<Vec<_>>(),
        "the cursors have a gap: {page}"
    );
    cursors
}

/// Start several prepared commands held at a barrier (a file that appears), then release them
/// together and collect their results.
pub fn race(world: &World, commands: Vec<Command>) -> Vec<Run> {
    let go = world.temp.path().join(format!("go-{}", std::process::id()));
    let _ = std::fs::remove_file(&go);
    let mut children = Vec::new();
    for command in commands {
        let program = command.get_program().to_owned();
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(
            "i=0; while [ ! -e \"$ACC_RACE_GO\" ]; do i=$((i+1)); if [ $i -gt 2000000 ]; then exit 99; fi; done; exec \"$@\"",
        );
        shell.arg("race").arg(program).args(command.get_args());
        if let Some(dir) = command.get_current_dir() {
            shell.current_dir(dir);
        }
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => shell.env(key, value),
                None => shell.env_remove(key),
            };
        }
        shell
            .env("ACC_RACE_GO", &go)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        children.push(shell.spawn().expect("spawn racer"));
    }
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(&go, b"go").expect("release barrier");
    children
        .into_iter()
        .map(|child| Run::from_output(wait_with_deadline(child, COMMAND_TIMEOUT, "racing process")))
        .collect()
}

/// The real clients installed by `scripts/install-test-clients.sh` (which `./test.sh` runs).
#[derive(Debug, Clone)]
pub struct Clients {
    /// The cache directory.
    pub cache: PathBuf,
    /// The TypeScript SDK package directory.
    pub ts_sdk: PathBuf,
    /// The Python interpreter with `mcp` installed.
    pub python: PathBuf,
    /// The `codex` executable.
    pub codex: PathBuf,
    /// The `claude` executable.
    pub claude: PathBuf,
    /// The `gemini` executable.
    pub gemini: PathBuf,
    /// The `qwen` executable (it runs on the Node.js 22 beside it: [`Clients::path_for`]).
    pub qwen: PathBuf,
    /// The `opencode` executable.
    pub opencode: PathBuf,
    /// The `kimi` executable (it runs on the Node.js 22 beside it, as `qwen` does).
    pub kimi: PathBuf,
    /// OpenCode's plugin package as OpenCode installs it into a configuration folder
    /// (`acc_capture::guard::OPENCODE_SEED`): a test's OpenCode never reaches for the registry.
    pub opencode_seed: PathBuf,
}
impl Clients {
    /// `PATH` with the pinned clients' bin directory first (for `acc install --client codex`,
    /// the capture tool, and anything else that looks the clients up by name).
    pub fn path(&self) -> String {
        format!(
            "{}:{}",
            self.codex.parent().expect("bin dir").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// The executable of a hooked client.
    pub fn exe(&self, client: acc_clients::Client) -> PathBuf {
        match client {
            acc_clients::Client::ClaudeCode => self.claude.clone(),
            acc_clients::Client::Codex => self.codex.clone(),
            acc_clients::Client::Gemini => self.gemini.clone(),
            acc_clients::Client::Qwen => self.qwen.clone(),
            acc_clients::Client::OpenCode => self.opencode.clone(),
            acc_clients::Client::Kimi => self.kimi.clone(),
        }
    }

    /// The `PATH` to run `client` with: [`Clients::path`], and for Qwen Code and Kimi Code
    /// their own bin directory (Node.js 22, `qwen` and `kimi`) first, as a user who installed
    /// them would have.
    pub fn path_for(&self, client: acc_clients::Client) -> String {
        match client {
            acc_clients::Client::Qwen | acc_clients::Client::Kimi => format!(
                "{}:{}",
                self.qwen.parent().expect("bin dir").display(),
                self.path()
            ),
            _ => self.path(),
        }
    }
}

/// A hooked `client` run headless in the world's project against `model`, its home a fresh
/// `home` folder of the world's temporary directory, with the client's `PATH`
/// ([`Clients::path_for`]) and `env` beside it.
pub fn writer(
    world: &World,
    client: acc_clients::Client,
    model: &acc_capture::model::ModelServer,
    env: &[(&str, &str)],
) -> acc_capture::guard::Writer {
    let mut all = vec![
        ("PATH".to_string(), clients().path_for(client)),
        (
            "TMPDIR".to_string(),
            world.tmp().to_string_lossy().into_owned(),
        ),
    ];
    if client == acc_clients::Client::OpenCode {
        all.push((
            acc_capture::guard::OPENCODE_SEED.to_string(),
            clients().opencode_seed.to_string_lossy().into_owned(),
        ));
    }
    all.extend(
        env.iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string())),
    );
    acc_capture::guard::Writer {
        client,
        exe: clients().exe(client),
        home: world.temp.path().join("home"),
        project: world.dir.clone(),
        data: world.data_home.clone(),
        base_url: model.base_url.clone(),
        env: all,
    }
}

/// [`writer`] with the client's own settings for `model` already in its home
/// ([`acc_capture::guard::Writer::prepare_home`]), as a user's files are there before ACC's.
pub fn prepared_writer(
    world: &World,
    client: acc_clients::Client,
    model: &acc_capture::model::ModelServer,
) -> acc_capture::guard::Writer {
    let writer = writer(world, client, model, &[]);
    writer
        .prepare_home(model)
        .expect("the user's client settings");
    writer
}

/// The sessions of `harness` in the world's room (`acc status --all`).
pub fn sessions_of(world: &World, harness: &str) -> Vec<serde_json::Value> {
    let status = world.acc(&["status", "--all"]).ok_json();
    status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter(|s| s["harness"] == harness)
        .cloned()
        .collect()
}

/// Every model request the loopback `model` received, its bodies joined by newlines: what
/// reached the model.
pub fn model_text(model: &acc_capture::model::ModelServer) -> String {
    model
        .model_requests()
        .into_iter()
        .map(|r| r.body)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One whole Claude Code turn in print mode (`claude -p PROMPT --output-format stream-json
/// --verbose`) in the world's project, with `home` as its HOME and the loopback `model` as its
/// model API.
pub fn claude_print(
    world: &World,
    home: &Path,
    model: &acc_capture::model::ModelServer,
    prompt: &str,
) -> Command {
    let mut command = world.command_path(&clients().claude);
    command
        .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
        .env("HOME", home)
        .env("TMPDIR", world.tmp())
        .env("ANTHROPIC_API_KEY", "acc-test-key")
        .env("ANTHROPIC_BASE_URL", &model.base_url)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("ANTHROPIC_AUTH_TOKEN");
    command
}

/// Run `command` to its end within `deadline`, its output captured, and assert that it
/// succeeded (naming `what` and its stderr when not); its output.
pub fn run_checked(mut command: Command, deadline: Duration, what: &str) -> Output {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
    let output = wait_with_deadline(child, deadline, what);
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A home for Gemini CLI in the world, its `.gemini/settings.json` holding `settings` (the
/// user's own); the home and the settings file.
pub fn gemini_home(world: &World, settings: &str) -> (PathBuf, PathBuf) {
    let home = world.temp.path().join("home");
    let file = home.join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("the .gemini folder");
    std::fs::write(&file, settings).expect("the user's settings");
    (home, file)
}

/// `gemini -p PROMPT` in the world's project with `HOME=home`, its model the loopback `model`,
/// the workspace trusted; `extra` arguments follow (`--session-id`, `--resume`, ...).
pub fn gemini_print(
    world: &World,
    home: &Path,
    model: &acc_capture::model::ModelServer,
    prompt: &str,
    extra: &[&str],
) -> Command {
    let mut command = world.command_path(&clients().gemini);
    command
        .args(["-p", prompt, "-m", "gemini-2.5-flash"])
        .args(extra)
        .env("HOME", home)
        .env("GEMINI_API_KEY", "acc-test-key")
        .env("GOOGLE_GEMINI_BASE_URL", &model.base_url)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GOOGLE_CLOUD_PROJECT");
    command
}

/// The names in `cargo tree -p PACKAGE -e normal` (offline), one a line, the package first;
/// `depth` limits it (`None`: the whole tree).
pub fn cargo_tree(package: &str, depth: Option<u32>) -> Vec<String> {
    cargo_tree_pruned(package, depth, &[])
}

/// [`cargo_tree`] with the subtrees of `prune` left out (`cargo tree --prune`).
pub fn cargo_tree_pruned(package: &str, depth: Option<u32>, prune: &[&str]) -> Vec<String> {
    let mut command = Command::new(env!("CARGO"));
    command.args([
        "tree",
        "-p",
        package,
        "-e",
        "normal",
        "--prefix",
        "none",
        "--offline",
    ]);
    if let Some(depth) = depth {
        command.args(["--depth", &depth.to_string()]);
    }
    for name in prune {
        command.args(["--prune", name]);
    }
    let output = command
        .current_dir(repo_root())
        .output()
        .expect("cargo tree");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Locate the installed clients; fails loudly when they are missing, never skips.
pub fn clients() -> Clients {
    let cache = match std::env::var_os("ACC_TEST_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME"))
            .join(".cache")
            .join("acc-test-clients"),
    };
    let clients = Clients {
        ts_sdk: cache.join("node_modules/@modelcontextprotocol/sdk"),
        python: cache.join("py/bin/python"),
        codex: cache.join("node_modules/.bin/codex"),
        claude: cache.join("node_modules/.bin/claude"),
        gemini: cache.join("node_modules/.bin/gemini"),
        qwen: cache.join("node22/node_modules/.bin/qwen"),
        opencode: cache.join("node_modules/.bin/opencode"),
        kimi: cache.join("node22/node_modules/.bin/kimi"),
        opencode_seed: cache.join("opencode-seed"),
        cache,
    };
    for path in [
        &clients.ts_sdk,
        &clients.python,
        &clients.codex,
        &clients.claude,
        &clients.gemini,
        &clients.qwen,
        &clients.opencode,
        &clients.kimi,
        &clients
            .opencode_seed
            .join("node_modules/@opencode-ai/plugin"),
    ] {
        assert!(
            path.exists(),
            "{} is missing: run scripts/install-test-clients.sh (./test.sh does) to install the pinned clients",
            path.display()
        );
    }
    clients
}

/// The repository root (for the client scripts under `tests/clients`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// A running child with piped stdio that is killed by pid when dropped.
#[derive(Debug)]
pub struct Guarded(pub Child);

impl Drop for Guarded {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            kill_pid(self.0.id());
            let _ = self.0.wait();
        }
    }
}

/// A newline-delimited JSON-RPC peer over a child's stdio, with bounded waits.
#[derive(Debug)]
pub struct JsonRpcChild {
    /// The child (killed on drop).
    pub child: Guarded,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    /// Every line read, in order (for assertions on stdout purity).
    pub seen: Vec<String>,
}

impl JsonRpcChild {
    /// Spawn `command` with piped stdin and stdout.
    pub fn spawn(mut command: Command) -> Self {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("spawn json-rpc child");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child: Guarded(child),
            stdin: Some(stdin),
            lines,
            seen: Vec::new(),
        }
    }

    /// Write one line.
    pub fn send_line(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// Send a request and wait (bounded) for the response with its id, skipping other lines.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send_line(
            &serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
                .to_string(),
        );
        self.wait_for(
            |v| v.get("id") == Some(&Value::from(id)) && v.get("method").is_none(),
            Duration::from_secs(60),
        )
    }

    /// A line matching `want` if one comes within `deadline` (lines before it are kept in
    /// `seen`), else `None`.
    pub fn try_wait_for(
        &mut self,
        want: impl Fn(&Value) -> bool,
        deadline: Duration,
    ) -> Option<Value> {
        let start = Instant::now();
        loop {
            let left = deadline.checked_sub(start.elapsed())?;
            let line = self.lines.recv_timeout(left).ok()?;
            self.seen.push(line.clone());
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not json ({e}): {line}"));
            if want(&value) {
                return Some(value);
            }
        }
    }

    /// Wait (bounded) for a line matching `want`.
    pub fn wait_for(&mut self, want: impl Fn(&Value) -> bool, deadline: Duration) -> Value {
        let start = Instant::now();
        loop {
            let left = deadline.checked_sub(start.elapsed()).unwrap_or_else(|| {
                panic!(
                    "no matching line within {deadline:?}; seen: {:#?}",
                    self.seen
                )
            });
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no matching line within {deadline:?}; seen: {:#?}",
                    self.seen
                )
            });
            self.seen.push(line.clone());
            let value: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not json ({e}): {line}"));
            if want(&value) {
                return value;
            }
        }
    }

    /// The child's resident memory in KiB (Linux `/proc`), when readable.
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.0.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Close stdin and wait (bounded) for the exit status.
    pub fn finish(mut self, deadline: Duration) -> ExitStatus {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.0.try_wait().expect("wait") {
                return status;
            }
            assert!(
                start.elapsed() < deadline,
                "the child did not exit within {deadline:?} after end of input"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Compare `actual` with the golden file `tests/golden/<name>`; with `ACC_UPDATE_GOLDEN=1`,
/// write it instead (review the diff before committing). Every golden file of the suite goes
/// through here, so one variable updates them all.
pub fn golden(name: &str, actual: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name);
    if std::env::var_os("ACC_UPDATE_GOLDEN").is_some() {
        let mut text = serde_json::to_string_pretty(actual).expect("json");
        text.push('\n');
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("golden dir");
        }
        std::fs::write(&path, text).expect("write golden");
        return;
    }
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run with ACC_UPDATE_GOLDEN=1 to create it, and review the diff",
                path.display()
            )
        }))
        .expect("golden json");
    assert!(
        expected == *actual,
        "{} differs; if the change is deliberate, rerun with ACC_UPDATE_GOLDEN=1 and commit the reviewed diff\nactual: {}",
        path.display(),
        serde_json::to_string_pretty(actual).unwrap_or_default()
    );
}

/// Compare `actual` text with the golden file `tests/golden/<name>` (a snapshot of human
/// output); with `ACC_UPDATE_GOLDEN=1`, write it instead (review the diff before committing).
pub fn golden_text(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name);
    if std::env::var_os("ACC_UPDATE_GOLDEN").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("golden dir");
        }
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with ACC_UPDATE_GOLDEN=1 to create it, and review the diff",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs; if the change is deliberate, rerun with ACC_UPDATE_GOLDEN=1 and commit the reviewed diff\nexpected:\n{expected}\nactual:\n{actual}",
        path.display()
    );
}

/// The hostile strings every peer-text surface is tested with (frame lines, fences, ANSI and
/// OSC sequences, bidirectional and zero-width characters, line and paragraph separators, a
/// carriage return, NUL), plus one very long line (within the 4,000-character body limit).
pub fn hostile_strings() -> Vec<String> {
    let path = repo_root().join("tests/fixtures/hostile-strings.json");
    let text = std::fs::read_to_string(&path).expect("hostile strings");
    let mut strings: Vec<String> = serde_json::from_str(&text).expect("hostile strings json");
    strings.push(format!("{}\nACC: after a long line", "x".repeat(3_900)));
    strings
}

/// Assert that `output` (a surface's text) shows peer text only inside `acc-peer-message`
/// blocks it cannot close: no hidden character (controls but line feeds and tabs, format
/// characters, line and paragraph separators) anywhere, every block closed by a line of
/// exactly the fence, no line inside a block that starts a fence, and none of `markers` (text
/// only the peer wrote) outside a block.
pub fn assert_peer_text_contained(output: &str, markers: &[&str], what: &str) {
    if let Some(c) = output
        .chars()
        .find(|c| acc_clients::render::hidden(*c) && *c != '\n' && *c != '\t')
    {
        panic!(
            "{what}: a raw U+{:04X} reached the surface:\n{output}",
            c as u32
        );
    }
    let fence = acc_clients::render::FENCE;
    let mut inside = false;
    let mut blocks = 0;
    for line in output.lines() {
        if !inside {
            if line.starts_with(&format!("{fence}acc-peer-message ")) {
                inside = true;
                blocks += 1;
                continue;
            }
            for marker in markers {
                assert!(
                    !line.contains(marker),
                    "{what}: peer text `{marker}` outside a block, in line `{line}`:\n{output}"
                );
            }
        } else if line == fence {
            inside = false;
        } else {
            assert!(
                !line.starts_with("~~~") && !line.starts_with("```"),
                "{what}: a fence inside a block: `{line}`"
            );
        }
    }
    assert!(!inside, "{what}: a block left open:\n{output}");
    assert!(blocks > 0, "{what}: no peer block at all:\n{output}");
}

/// The entry of `adapters` (in an `acc adapters` or `acc contract verify` listing) with this
/// adapter id.
pub fn listed_adapter(listing: &Value, adapter_id: &str) -> Value {
    listing["adapters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["adapterId"] == adapter_id)
        .cloned()
        .unwrap_or_else(|| panic!("{adapter_id} is not listed: {listing}"))
}

/// Copy a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// A program running in a real terminal: a private tmux server (its own socket, no user
/// configuration) with one window of a fixed size. Keys go in with `send-keys`, the screen comes
/// out with `capture-pane`; the server is killed, by its pid, when this is dropped.
#[derive(Debug)]
pub struct Terminal {
    socket: PathBuf,
    server: Option<u32>,
    dir: tempfile::TempDir,
}

impl Terminal {
    /// Runs `program` with `args` in a `width` by `height` terminal, from `command`'s directory
    /// and environment (`command` is only a template: its program is not run). The pane stays
    /// after the program exits, so its exit status can be read.
    pub fn start(
        command: &Command,
        width: u16,
        height: u16,
        program: &Path,
        args: &[&str],
    ) -> Self {
        let dir = tempfile::tempdir().expect("tmux dir");
        let socket = dir.path().join("tmux.sock");
        let mut tmux = Command::new("tmux");
        if let Some(cwd) = command.get_current_dir() {
            tmux.current_dir(cwd);
        }
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => tmux.env(key, value),
                None => tmux.env_remove(key),
            };
        }
        let quote = |word: &str| shlex::try_quote(word).expect("quotable").into_owned();
        let status = dir.path().join("status");
        // The shell writes the exit status to a file: tmux marks a pane dead when its terminal
        // closes, and may not have the status yet (or ever, under load) when asked.
        let line = format!(
            "{}; echo $? > {}",
            std::iter::once(program.to_string_lossy().into_owned())
                .chain(args.iter().map(|a| (*a).to_string()))
                .map(|word| quote(&word))
                .collect::<Vec<_>>()
                .join(" "),
            quote(&status.to_string_lossy())
        );
        // The pane stays after the program exits (set before it starts, so no exit is missed).
        let config = dir.path().join("tmux.conf");
        std::fs::write(&config, "set-option -g remain-on-exit on\n").expect("tmux.conf");
        tmux.arg("-S")
            .arg(&socket)
            .arg("-f")
            .arg(&config)
            .args(["new-session", "-d", "-s", "acc"])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .arg(&line)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null());
        let output = run_checked(tmux, Duration::from_secs(20), "tmux new-session");
        assert!(output.status.success(), "tmux: {output:?}");
        let mut terminal = Self {
            socket,
            server: None,
            dir,
        };
        terminal.server = terminal.query("#{pid}").trim().parse().ok();
        terminal
    }

    fn tmux(&self, args: &[&str]) -> Output {
        let mut command = Command::new("tmux");
        command
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .stdin(Stdio::null());
        run_checked(command, Duration::from_secs(20), "tmux")
    }

    /// A tmux format (`#{pane_dead}`, …) for the window's pane.
    pub fn query(&self, format: &str) -> String {
        let output = self.tmux(&["display-message", "-p", "-t", "acc", format]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// What the screen shows now, a line a row.
    pub fn screen(&self) -> String {
        let output = self.tmux(&["capture-pane", "-p", "-t", "acc"]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Press keys (tmux key names: `Enter`, `Escape`, `Tab`, `q`, …), one at a time.
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.tmux(&["send-keys", "-t", "acc", key]);
            // Two keys in one read can parse as one (Escape then `f` is Alt-f).
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    /// Resize the terminal (the program gets SIGWINCH, as from a real terminal).
    pub fn resize(&self, width: u16, height: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            "acc",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// Type `text` as it is (no key names).
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "acc", "-l", text]);
    }

    /// Waits (bounded) until the screen satisfies `condition`; the screen.
    pub fn wait_for(&self, what: &str, condition: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if condition(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the screen never showed {what}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The program's exit status once it has exited (bounded wait).
    pub fn exit_status(&self) -> i32 {
        let file = self.dir.path().join("status");
        let start = Instant::now();
        loop {
            if let Some(status) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|text| text.trim().parse().ok())
            {
                return status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the program did not exit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(pid) = self.server {
            kill_pid(pid);
        }
    }
}

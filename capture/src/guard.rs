//! Capture a client's write guard: with ACC's hooks installed in a throwaway home, a workspace
//! whose policy is `guarded` and another session's exclusive guarded claim on `src/parser.rs`, a
//! scripted model asks to write that file and then another; the file under the claim must stay
//! as it was and the model must receive ACC's refusal naming the holder, the other file must be
//! written, and after the holder releases its claim the same write must go through.
//!
//! [`Writer`] drives Claude Code (`Write`), Codex (`apply_patch` run through its shell tool, as
//! Codex 0.169 does), Gemini CLI and Qwen Code (`write_file`), OpenCode (`write`) and Kimi
//! Code (`Write`) in headless turns against the loopback model;
//! the end-to-end tests drive the same clients with it, installed the user's way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::failed;
use crate::model::{GEMINI_SETTINGS, ModelServer, QWEN_SETTINGS, Scripted};
use crate::record::{Finished, Recorder, Run};
use crate::script::{self, Scratch};
use acc_clients::Client;
use acc_core::claims::{AcquireRequest, ReleaseSelector};
use acc_core::error::AccResult;
use acc_core::{Caller, Core};
use acc_delivery::plugins::{Plugins, search_path};
use acc_store::ClaimMode;
use acc_store::Enforcement;

/// How long one headless turn may take.
const TURN: Duration = Duration::from_secs(180);
/// The file under the claim, and what it holds before anyone writes it.
pub const CLAIMED: &str = "src/parser.rs";
/// Its content before the writes.
pub const ORIGINAL: &str = "pub fn parse() {}\n";
/// What the model asks to write into it.
pub const CHANGED: &str = "pub fn parse() { todo!() }\n";
/// The file outside any claim.
pub const UNCLAIMED: &str = "src/notes.rs";
/// What the model writes there.
pub const NOTES: &str = "// notes\n";

/// How a turn's conversation began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A new conversation.
    Fresh,
    /// The project's last conversation, resumed (`claude --continue`, `codex exec resume
    /// --last`, `gemini --resume latest`, `qwen --continue`): a new client process for an
    /// existing session.
    Resumed,
    /// The last conversation, compacted ([`Writer::compact`]) and then resumed.
    Compacted,
}

/// One installed client, run headless in `home` on `project` against `model`.
#[derive(Debug, Clone)]
pub struct Writer {
    /// Which client.
    pub client: Client,
    /// Its command.
    pub exe: PathBuf,
    /// Its throwaway home (`HOME`; Codex's `CODEX_HOME` is `<home>/.codex`).
    pub home: PathBuf,
    /// The workspace.
    pub project: PathBuf,
    /// ACC's data home (`ACC_DATA_HOME`).
    pub data: PathBuf,
    /// The model API, `http://127.0.0.1:<port>`.
    pub base_url: String,
    /// Other environment for the client (`ACC_PARTICIPANT`, `PATH`).
    pub env: Vec<(String, String)>,
}

impl Writer {
    /// The client's own settings for running against the loopback model, written into its
    /// home before ACC's installer edits them (as a user's settings would be there first).
    pub fn prepare_home(&self, model: &ModelServer) -> AccResult<()> {
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|e| failed("client settings", e))
        };
        match self.client {
            Client::ClaudeCode => std::fs::create_dir_all(self.home.join(".claude"))
                .map_err(|e| failed("client settings", e)),
            Client::Codex => write(self.home.join(".codex/config.toml"), &model.codex_config()),
            Client::Gemini => write(self.home.join(".gemini/settings.json"), GEMINI_SETTINGS),
            Client::Qwen => write(self.home.join(".qwen/settings.json"), QWEN_SETTINGS),
            Client::Kimi => write(
                self.home.join(".kimi-code/config.toml"),
                &model.kimi_config(),
            ),
            Client::OpenCode => {
                let config = self.home.join(".config/opencode");
                write(config.join("opencode.json"), &model.opencode_config())?;
                let seed = self
                    .env
                    .iter()
                    .find(|(k, _)| k == OPENCODE_SEED)
                    .map(|(_, v)| PathBuf::from(v))
                    .or_else(|| std::env::var_os(OPENCODE_SEED).map(PathBuf::from));
                match seed {
                    Some(seed) => seed_opencode_plugin_package(&seed, &config),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The scripted model's calls, in each client's own tool names and shapes.
impl Writer {
    /// The model's calls that write `content` into `relative` (which holds `before`, if
    /// anything), in the client's own tool: Qwen Code refuses to overwrite a file the session
    /// has not read, so there the model reads it first ([`Writer::reads_before`] of them).
    pub fn write_calls(
        &self,
        relative: &str,
        before: Option<&str>,
        content: &str,
    ) -> Vec<Scripted> {
        let mut calls = Vec::new();
        if self.reads_before(before) > 0 {
            calls.push(match self.client {
                Client::OpenCode => Scripted::Tool {
                    name: "read".into(),
                    input: json!({ "filePath": self.project.join(relative) }),
                },
                _ => Scripted::Tool {
                    name: "read_file".into(),
                    input: json!({ "file_path": self.project.join(relative) }),
                },
            });
        }
        calls.push(self.write_call(relative, before, content));
        calls
    }

    /// How many reads [`Writer::write_calls`] puts before the write into a file that holds
    /// `before` (Qwen Code and OpenCode refuse to overwrite a file the session has not read).
    pub fn reads_before(&self, before: Option<&str>) -> usize {
        usize::from(matches!(self.client, Client::Qwen | Client::OpenCode) && before.is_some())
    }

    fn write_call(&self, relative: &str, before: Option<&str>, content: &str) -> Scripted {
        let absolute = self.project.join(relative).to_string_lossy().into_owned();
        match self.client {
            Client::ClaudeCode => Scripted::Tool {
                name: "Write".into(),
                input: json!({ "file_path": absolute, "content": content }),
            },
            Client::Gemini | Client::Qwen => Scripted::Tool {
                name: "write_file".into(),
                input: json!({ "file_path": absolute, "content": content }),
            },
            Client::OpenCode => Scripted::Tool {
                name: "write".into(),
                input: json!({ "filePath": absolute, "content": content }),
            },
            Client::Kimi => Scripted::Tool {
                name: "Write".into(),
                input: json!({ "path": absolute, "content": content }),
            },
            Client::Codex => {
                let plus = |text: &str| text.lines().map(|l| format!("+{l}\n")).collect::<String>();
                let body = match before {
                    Some(old) => format!(
                        "*** Update File: {relative}\n@@\n{}{}",
                        old.lines().map(|l| format!("-{l}\n")).collect::<String>(),
                        plus(content)
                    ),
                    None => format!("*** Add File: {relative}\n{}", plus(content)),
                };
                Scripted::Tool {
                    name: "exec_command".into(),
                    input: json!({
                        "cmd": format!("apply_patch <<'PATCH'\n*** Begin Patch\n{body}*** End Patch\nPATCH")
                    }),
                }
            }
        }
    }

    /// The tool the model calls to write.
    pub fn tool(&self) -> &'static str {
        match self.client {
            Client::ClaudeCode | Client::Kimi => "Write",
            Client::Codex => "exec_command (apply_patch)",
            Client::Gemini | Client::Qwen => "write_file",
            Client::OpenCode => "write",
        }
    }

    /// The name the client offers ACC's MCP tool `tool` under (server `acc`).
    pub fn mcp_tool(&self, tool: &str) -> String {
        match self.client {
            Client::ClaudeCode | Client::Codex | Client::Qwen | Client::Kimi => {
                format!("mcp__acc__{tool}")
            }
            Client::Gemini => format!("mcp_acc_{tool}"),
            Client::OpenCode => format!("acc_{tool}"),
        }
    }
}

/// Running the client: its turns, compaction, and the identity it ran as.
impl Writer {
    /// One headless turn with `prompt`, to its end: a new conversation, with the client's file
    /// tools allowed.
    pub fn turn(&self, prompt: &str) -> AccResult<()> {
        self.turn_with(prompt, Origin::Fresh, false)
    }

    /// One headless turn with `prompt`, to its end, in a new conversation or the last one
    /// resumed (`origin`); with `mcp`, ACC's MCP tools are allowed too (Claude Code's
    /// `--allowedTools`, Gemini CLI's `yolo` mode, which offers MCP tools).
    pub fn turn_with(&self, prompt: &str, origin: Origin, mcp: bool) -> AccResult<()> {
        self.run(self.command(prompt, origin != Origin::Fresh, mcp))
    }

    /// Compact the last conversation in a process of its own (`claude --continue -p /compact`,
    /// `qwen --continue /compress`; the model is asked for a summary). Codex and Gemini CLI
    /// compact only in their interactive interface.
    pub fn compact(&self) -> AccResult<()> {
        let command = match self.client {
            Client::ClaudeCode => "/compact",
            Client::Qwen => "/compress",
            Client::Codex | Client::Gemini | Client::OpenCode | Client::Kimi => {
                return Err(failed(
                    self.client.as_str(),
                    "compacts only in its interactive interface",
                ));
            }
        };
        self.run(self.command(command, true, false))
    }

    /// Text of the model request in which [`Writer::compact`] asks for the summary.
    pub fn compaction_request(&self) -> &'static str {
        match self.client {
            Client::Qwen => {
                "summarizes a conversation when its context window is about to overflow"
            }
            _ => "CRITICAL: Respond with TEXT ONLY",
        }
    }

    /// A headless run of `prompt`, in the last conversation when `resumed`.
    fn command(&self, prompt: &str, resumed: bool, mcp: bool) -> Command {
        let mut command = Command::new(&self.exe);
        match self.client {
            Client::ClaudeCode => {
                if resumed {
                    command.arg("--continue");
                }
                if mcp {
                    command.args(["--allowedTools", "mcp__acc__*"]);
                }
                command
                    .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
                    .args(["--permission-mode", "acceptEdits"])
                    .env("ANTHROPIC_API_KEY", "acc-capture-key")
                    .env("ANTHROPIC_BASE_URL", &self.base_url)
                    .env_remove("CLAUDE_CONFIG_DIR")
                    .env_remove("ANTHROPIC_AUTH_TOKEN");
            }
            Client::Codex => {
                command.arg("exec");
                if resumed {
                    command.args(["resume", "--last"]);
                }
                command
                    .args([
                        "--skip-git-repo-check",
                        "--dangerously-bypass-approvals-and-sandbox",
                        prompt,
                    ])
                    .env("CODEX_HOME", self.home.join(".codex"))
                    .env("ACC_TEST_MODEL_KEY", "acc-capture-key")
                    .env_remove("OPENAI_API_KEY");
            }
            Client::Gemini => {
                if resumed {
                    command.args(["--resume", "latest"]);
                }
                command
                    .args(["-p", prompt, "-m", "gemini-2.5-flash"])
                    .args(["--approval-mode", if mcp { "yolo" } else { "auto_edit" }])
                    .env("GEMINI_API_KEY", "acc-capture-key")
                    .env("GOOGLE_GEMINI_BASE_URL", &self.base_url)
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
                    .env_remove("GEMINI_CLI_HOME")
                    .env_remove("GOOGLE_API_KEY");
            }
            // Qwen Code's OpenAI-compatible provider, Chat Completions on loopback.
            Client::Qwen => {
                if resumed {
                    command.arg("--continue");
                }
                command
                    .args(["--auth-type", "openai", "-m", "acc-test"])
                    .args(["--output-format", "stream-json"])
                    .args(["--approval-mode", if mcp { "yolo" } else { "auto-edit" }])
                    .arg(prompt)
                    .env("OPENAI_API_KEY", "acc-capture-key")
                    .env("OPENAI_BASE_URL", format!("{}/v1", self.base_url))
                    .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
                    .env_remove("QWEN_HOME")
                    .env_remove("OPENAI_MODEL");
            }
            // Kimi Code's prompt mode, which allows every tool, MCP tools too (it refuses
            // `--auto` beside `-p`); its configuration and sessions under HOME, no update
            // check, no telemetry.
            Client::Kimi => {
                if resumed {
                    command.arg("--continue");
                }
                command
                    .args(["-p", prompt, "--output-format", "stream-json"])
                    .env("KIMI_CODE_NO_AUTO_UPDATE", "1")
                    .env("KIMI_DISABLE_TELEMETRY", "1")
                    .env_remove("KIMI_CODE_HOME")
                    .env_remove("KIMI_API_KEY")
                    .env_remove("KIMI_CODE_BASE_URL");
            }
            // OpenCode's headless run; its configuration and data under HOME, no fetch of the
            // public model catalogue (the model is the user's own provider on loopback).
            Client::OpenCode => {
                command.args(["run", "--format", "json"]);
                if resumed {
                    command.arg("--continue");
                }
                command
                    .arg(prompt)
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1");
                for name in OPENCODE_HOMES {
                    command.env_remove(name);
                }
            }
        }
        command
    }

    /// Qwen Code's or OpenCode's terminal interface in the project, as a command for
    /// [`crate::tui::Tui`]: Qwen Code's cross-session socket opens only there, and only there
    /// does an OpenCode session stay idle between turns. Every other client is driven headless
    /// here.
    pub fn interactive(&self) -> AccResult<Command> {
        let mut command = Command::new(&self.exe);
        match self.client {
            Client::Qwen => {
                command
                    .args(["--auth-type", "openai", "-m", "acc-test"])
                    .args(["--approval-mode", "auto-edit"])
                    .env("OPENAI_API_KEY", "acc-capture-key")
                    .env("OPENAI_BASE_URL", format!("{}/v1", self.base_url))
                    .env_remove("QWEN_HOME")
                    .env_remove("OPENAI_MODEL");
            }
            Client::OpenCode => {
                command
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1");
                for name in OPENCODE_HOMES {
                    command.env_remove(name);
                }
            }
            _ => return Err(failed(self.client.as_str(), "is driven here only headless")),
        }
        self.in_project(&mut command);
        Ok(command)
    }

    /// The project, the throwaway home, ACC's data home and the extra environment.
    fn in_project(&self, command: &mut Command) {
        // `PWD` as a shell sets it: a client may take its project from it.
        command
            .current_dir(&self.project)
            .env("PWD", &self.project)
            .env("HOME", &self.home)
            .env("ACC_DATA_HOME", &self.data)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    }

    /// Run one prepared client command in the project, to its end.
    fn run(&self, mut command: Command) -> AccResult<()> {
        self.in_project(&mut command);
        command.stdin(Stdio::null());
        let what = self.client.as_str();
        match acc_clients::run_bounded(command, TURN) {
            Ok(output) if output.status.success() => Ok(()),
            Ok(output) => Err(failed(
                what,
                format!(
                    "the turn failed ({}): {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr)
                        .lines()
                        .rev()
                        .take(3)
                        .collect::<Vec<_>>()
                        .join(" | ")
                ),
            )),
            Err(_) => Err(failed(what, "the turn did not end in time")),
        }
    }

    /// The client's version and the fingerprint of the program that really runs ([`identify`]).
    pub fn identify(&self) -> AccResult<(String, String)> {
        identify(self.client, &self.exe, &self.home)
    }
}

/// The variables that would move OpenCode's configuration and data away from `HOME`.
const OPENCODE_HOMES: [&str; 6] = [
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
];

/// The variable naming a folder that holds OpenCode's own plugin package installed the way
/// OpenCode installs it (`package.json`, `package-lock.json`, `node_modules/`), copied into the
/// throwaway configuration folder: OpenCode installs `@opencode-ai/plugin` from the npm registry
/// into every configuration folder that has a plugin, and without a registry it waits at start
/// for that install to give up. Unset, OpenCode installs it itself.
pub const OPENCODE_SEED: &str = "ACC_OPENCODE_PLUGIN_SEED";

fn seed_opencode_plugin_package(seed: &Path, config: &Path) -> AccResult<()> {
    let mut copy = Command::new("cp");
    copy.arg("-a")
        .arg(seed.join("package.json"))
        .arg(seed.join("package-lock.json"))
        .arg(seed.join("node_modules"))
        .arg(config);
    match acc_clients::run_bounded(copy, Duration::from_secs(60)) {
        Ok(output) if output.status.success() => Ok(()),
        _ => Err(failed(
            "opencode",
            format!(
                "cannot copy {OPENCODE_SEED} ({}) into {}",
                seed.display(),
                config.display()
            ),
        )),
    }
}

/// A client's version (`<command> --version`, run with `home` as its HOME and its temporary
/// folder: OpenCode's runtime unpacks native libraries into `$TMPDIR` at every start and leaves
/// them) and the fingerprint of the program that really runs: Codex's native binary behind its
/// npm launcher, Gemini CLI's bundle (node interprets it), Claude Code's executable.
pub fn identify(client: Client, exe: &Path, home: &Path) -> AccResult<(String, String)> {
    let what = client.as_str();
    let mut command = Command::new(exe);
    command
        .arg("--version")
        .env("HOME", home)
        .env("TMPDIR", home);
    let output = acc_clients::run_bounded(command, Duration::from_secs(60))
        .map_err(|_| failed(what, "`--version` did not answer"))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let version = acc_clients::version_word(&text)
        .map(str::to_string)
        .ok_or_else(|| failed(what, format!("no version in `{}`", text.trim())))?;
    let real = std::fs::canonicalize(exe).map_err(|e| failed(what, e))?;
    let real = match client {
        Client::Codex => acc_clients::codex_daemon::native_executable(&real).unwrap_or(real),
        _ => real,
    };
    let sha =
        acc_clients::file_sha256(&real).ok_or_else(|| failed("fingerprint", real.display()))?;
    Ok((version, sha))
}

/// Every tool result in a model request, in the shape of its API: Anthropic `tool_result`
/// blocks, OpenAI `function_call_output` items and Chat Completions `tool` messages, Gemini
/// `functionResponse` parts.
pub fn tool_results(body: &str) -> Vec<Value> {
    let Ok(body) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        if message["role"] == "tool" {
            found.push(message.clone());
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                found.push(block.clone());
            }
        }
    }
    for item in body["input"].as_array().into_iter().flatten() {
        if item["type"] == "function_call_output" {
            found.push(item.clone());
        }
    }
    for content in body["contents"].as_array().into_iter().flatten() {
        for part in content["parts"].as_array().into_iter().flatten() {
            if let Some(response) = part.get("functionResponse") {
                found.push(response.clone());
            }
        }
    }
    found
}

/// The results the model received in this turn: the tool results of the turn's last model
/// request (which carries every earlier one).
pub fn results_of_turn(model: &ModelServer) -> Vec<Value> {
    model
        .model_requests()
        .into_iter()
        .rfind(|r| r.is_main_loop())
        .map(|r| tool_results(&r.body))
        .unwrap_or_default()
}

/// The project file `relative` as it is now (`None`: absent).
pub fn read(project: &Path, relative: &str) -> Option<String> {
    std::fs::read_to_string(project.join(relative)).ok()
}

/// The capture's folders: a project whose policy is `guarded` holding `src/parser.rs`, and a
/// data home marked as a capture's ([`acc_app::guards::CAPTURE_MARKER`]): the client's hooks
/// must deny before any evidence of them exists.
fn guarded_scratch(name: &str) -> AccResult<Scratch> {
    let scratch = Scratch::new(&format!("{name}-write-guard"))?;
    let project = |e: std::io::Error| failed("project", e);
    std::fs::create_dir_all(scratch.project.join("src")).map_err(project)?;
    std::fs::write(
        scratch.project.join("acc.workspace.json"),
        r#"{"schemaVersion":1,"workspaceId":"capture-write-guard","policy":{"claimMode":"guarded"}}"#,
    )
    .map_err(project)?;
    std::fs::write(scratch.project.join(CLAIMED), ORIGINAL).map_err(project)?;
    let data = |e: std::io::Error| failed("data home", e);
    std::fs::create_dir_all(scratch.data.join("acc")).map_err(data)?;
    std::fs::write(
        scratch
            .data
            .join("acc")
            .join(acc_app::guards::CAPTURE_MARKER),
        "a write-guard capture's throwaway data home\n",
    )
    .map_err(data)?;
    Ok(scratch)
}

/// The holder (a shell session) claims the file, guarded, and leaves: its claim outlives its
/// presence, and the room's only live session is the client's.
fn holder_claims_and_leaves(core: &mut Core) -> AccResult<Caller> {
    let holder = crate::attach(core, "holder")?;
    core.acquire_claims(
        &holder,
        &AcquireRequest {
            resources: vec![format!("file:{CLAIMED}")],
            mode: ClaimMode::Exclusive,
            enforcement: Some(Enforcement::Guarded),
            reason: Some("write-guard capture".into()),
            lease_seconds: None,
        },
    )?;
    core.end_presence(
        &holder,
        acc_core::identity::SessionEndReason::ClientSessionEnd,
    )?;
    Ok(holder)
}

/// The holder comes back to its session, releases every claim, and leaves again.
fn holder_releases(core: &mut Core, holder: &Caller) -> AccResult<()> {
    let holder = crate::reattach(core, "holder", Some(&holder.session_id))?;
    core.release_claims(&holder, &ReleaseSelector::All)?;
    core.end_presence(
        &holder,
        acc_core::identity::SessionEndReason::ClientSessionEnd,
    )
}

/// Capture `client`'s write guard.
pub fn capture_write_guard(client: Client) -> AccResult<Finished> {
    let name = client.executable();
    let exe = acc_clients::find_on_path(name)
        .ok_or_else(|| failed(name, format!("no `{name}` on PATH")))?;
    let scratch = guarded_scratch(name)?;
    let model = ModelServer::start();
    let writer = Writer {
        client,
        exe,
        home: scratch.client.join("home"),
        project: scratch.project.clone(),
        data: scratch.data.clone(),
        base_url: model.base_url.clone(),
        // The client's temporary folder goes with the scratch (OpenCode's runtime unpacks its
        // native libraries there at every start and never removes them).
        env: vec![
            ("ACC_PARTICIPANT".into(), "writer".into()),
            (
                "TMPDIR".into(),
                scratch.clone_paths().tmp().to_string_lossy().into_owned(),
            ),
        ],
    };
    writer.prepare_home(&model)?;
    crate::install_hooks(client.as_str(), &writer.home, &scratch.data, &[])?;
    let (version, executable_sha256) = writer.identify()?;

    let plugins = Arc::new(Plugins::load_from(search_path(), &Default::default()));
    let mut app = script::open(&scratch, &plugins)?;
    let holder = holder_claims_and_leaves(&mut app.core)?;
    let mut record = Recorder::default();
    let mut steps = writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED);
    steps.extend(writer.write_calls(UNCLAIMED, None, NOTES));
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer.turn("write the parser and the notes")?;
    if model.scripted_left() != 0 {
        record.note(
            "surface",
            "the client did not play the model's whole script",
        );
    }
    // Past the reads the model made first, the claimed write's result, then the other's.
    let results = results_of_turn(&model);
    let reads = writer.reads_before(Some(ORIGINAL));
    let refusal = results.get(reads).cloned().unwrap_or(Value::Null);
    let refusal_text = refusal.to_string();
    let refusal_seen =
        refusal_text.contains("claimed exclusively") && refusal_text.contains("holder");
    record.write(
        "claimed",
        CLAIMED,
        writer.tool(),
        read(&scratch.project, CLAIMED).as_deref() != Some(ORIGINAL),
        refusal_seen,
        vec![refusal],
    );
    record.write(
        "unclaimed",
        UNCLAIMED,
        writer.tool(),
        read(&scratch.project, UNCLAIMED).as_deref() == Some(NOTES),
        false,
        results.get(reads + 1).cloned().into_iter().collect(),
    );

    // The holder comes back and releases; the same write then goes through.
    holder_releases(&mut app.core, &holder)?;
    model.clear();
    let mut steps = writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED);
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer.turn("write the parser again")?;
    record.write(
        "released",
        CLAIMED,
        writer.tool(),
        read(&scratch.project, CLAIMED).as_deref() == Some(CHANGED),
        false,
        results_of_turn(&model),
    );
    record.finish(Run {
        client: client.as_str().into(),
        version,
        launch_mode: format!(
            "headless turns in a throwaway HOME with acc's hooks, a guarded workspace, model API on loopback ({})",
            match client {
                Client::ClaudeCode => "claude -p --permission-mode acceptEdits",
                Client::Codex => "codex exec --dangerously-bypass-approvals-and-sandbox",
                Client::Gemini => "gemini -p --approval-mode auto_edit",
                Client::Qwen => "qwen --approval-mode auto-edit (OpenAI Chat Completions)",
                Client::OpenCode => "opencode run (OpenAI-compatible Chat Completions)",
                Client::Kimi => "kimi -p (OpenAI-compatible Chat Completions)",
            }
        ),
        protocol_contract: format!("{}-write-guard-v1", client.as_str()),
        executable_sha256,
        driver: "acc-capture".into(),
        capability: acc_delivery::contracts::WRITE_GUARD.into(),
    })
}

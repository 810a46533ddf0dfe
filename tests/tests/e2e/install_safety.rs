//! `acc install` never harms a user's files: every combination of a starting file (missing,
//! empty, commented, with the user's own hooks or `acc` MCP entry, one written by
//! `codex mcp add`, unusual formatting) and a sequence (install; install twice; install, user
//! edit, uninstall; install, user edit, doctor --repair, uninstall; a failed install; an install
//! killed between two files) for Claude Code and Codex, and the same starts and sequences for
//! Gemini CLI and Qwen Code, whose hooks and MCP server share one file (so no install can be killed between
//! two of its files: `gemini::a_gemini_install_killed_at_any_point…` kills it at every point of
//! its one write instead). After every step: the user's bytes are there, ACC's entries are
//! exactly present or absent, and the real client still loads the files (`codex mcp list` and
//! `gemini mcp list` and `qwen mcp list` exit 0; Claude Code 2.1.328 runs a turn; `kimi doctor`
//! accepts Kimi Code's `config.toml`, and where ACC is installed a Kimi Code turn offers the
//! model ACC's MCP tools from its `mcp.json`).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use acc_capture::model::ModelServer;
use acc_tests::{Run, World, clients};
use serde_json::Value;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Client {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Kimi,
}

impl Client {
    fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude-code",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Qwen => "qwen",
            Self::Kimi => "kimi",
        }
    }

    /// The hooks file and the other file ACC edits, relative to the home (Gemini CLI: one file
    /// holds both).
    fn files(self) -> [&'static str; 2] {
        match self {
            Self::Claude => [".claude/settings.json", ".claude.json"],
            Self::Codex => [".codex/hooks.json", ".codex/config.toml"],
            Self::Gemini => [".gemini/settings.json", ".gemini/settings.json"],
            Self::Qwen => [".qwen/settings.json", ".qwen/settings.json"],
            Self::Kimi => [".kimi-code/config.toml", ".kimi-code/mcp.json"],
        }
    }

    /// The event a user's later hook is added to, and the one `doctor --repair` puts back.
    fn edited_events(self) -> (&'static str, &'static str) {
        match self {
            Self::Gemini => ("BeforeAgent", "AfterAgent"),
            Self::Claude | Self::Codex | Self::Qwen | Self::Kimi => ("UserPromptSubmit", "Stop"),
        }
    }

    fn events(self) -> &'static [&'static str] {
        match self {
            Self::Claude | Self::Qwen | Self::Kimi => &[
                "SessionStart",
                "UserPromptSubmit",
                "PreToolUse",
                "Stop",
                "SessionEnd",
            ],
            Self::Codex => &["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"],
            Self::Gemini => &[
                "SessionStart",
                "BeforeAgent",
                "BeforeTool",
                "AfterAgent",
                "SessionEnd",
            ],
        }
    }

    /// The client keeps its hooks and MCP servers in one file.
    fn one_file(self) -> bool {
        let [hooks, other] = self.files();
        hooks == other
    }

    /// The real client's executable.
    fn exe(self) -> PathBuf {
        let client = match self {
            Self::Claude => acc_clients::Client::ClaudeCode,
            Self::Codex => acc_clients::Client::Codex,
            Self::Gemini => acc_clients::Client::Gemini,
            Self::Qwen => acc_clients::Client::Qwen,
            Self::Kimi => acc_clients::Client::Kimi,
        };
        clients().exe(client)
    }

    /// `PATH` for running the client and `acc` beside it.
    fn path(self) -> String {
        match self {
            Self::Qwen => clients().path_for(acc_clients::Client::Qwen),
            Self::Kimi => clients().path_for(acc_clients::Client::Kimi),
            _ => clients().path(),
        }
    }
}

/// A settings file as Gemini CLI reads it: JSON with comments (which a serializer drops).
fn json_with_comments(bytes: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(bytes);
    let mut plain = String::with_capacity(text.len());
    let (mut in_string, mut escaped, mut chars) = (false, false, text.chars().peekable());
    while let Some(c) = chars.next() {
        if in_string {
            plain.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '/' && chars.peek() == Some(&'/') {
            for rest in chars.by_ref() {
                if rest == '\n' {
                    plain.push('\n');
                    break;
                }
            }
        } else {
            in_string = c == '"';
            plain.push(c);
        }
    }
    serde_json::from_str(&plain).ok()
}

/// A starting state of the user's files.
struct Start {
    name: &'static str,
    /// (file index, content); files not named are missing.
    files: Vec<(usize, String)>,
    /// Text the user wrote that must be in the file after every step: (file index, snippet).
    snippets: Vec<(usize, &'static str)>,
    /// A plain `acc install --mcp` is refused with this in its message (the user's own entry);
    /// the sequences then use `--mcp-name acc-coordination`.
    mcp_refused: Option<&'static str>,
    /// Install is refused altogether with this in its message (a file the client refuses).
    refused: Option<&'static str>,
    /// The client itself refuses the starting file (Gemini CLI an empty settings.json): ACC's
    /// install may still go ahead, and uninstall gives that file back, which the client then
    /// refuses as it did before.
    client_refuses: bool,
}

impl Start {
    /// No file at all.
    fn missing() -> Self {
        Self {
            name: "missing",
            files: vec![],
            snippets: vec![],
            mcp_refused: None,
            refused: None,
            client_refuses: false,
        }
    }
}

struct Home {
    world: World,
    home: PathBuf,
    client: Client,
    path_env: String,
}

impl Home {
    fn new(client: Client) -> Self {
        let world = World::new();
        let home = world.temp.path().join("home");
        std::fs::create_dir_all(home.join(".claude")).expect("home");
        std::fs::create_dir_all(home.join(".codex")).expect("home");
        std::fs::create_dir_all(home.join(".gemini")).expect("home");
        std::fs::create_dir_all(home.join(".qwen")).expect("home");
        std::fs::create_dir_all(home.join(".kimi-code")).expect("home");
        Self {
            path_env: client.path(),
            world,
            home,
            client,
        }
    }

    fn file(&self, index: usize) -> PathBuf {
        self.home.join(self.client.files()[index])
    }

    fn read(&self, index: usize) -> Option<Vec<u8>> {
        std::fs::read(self.file(index)).ok()
    }

    fn snapshot(&self) -> [Option<Vec<u8>>; 2] {
        [self.read(0), self.read(1)]
    }

    fn acc(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.world.command("acc");
        command
            .arg("--json")
            .args(args)
            .args(["--home", self.home.to_str().expect("utf8")])
            .env("PATH", &self.path_env);
        without_client_homes(&mut command);
        for (key, value) in env {
            command.env(key, value);
        }
        self.world.run(command, "acc")
    }

    fn install(&self, mcp_name: &str) -> Run {
        self.acc(
            &[
                "install",
                "--client",
                self.client.name(),
                "--mcp",
                "--mcp-name",
                mcp_name,
            ],
            &[],
        )
    }

    fn uninstall(&self) -> Run {
        self.acc(&["uninstall", "--client", self.client.name()], &[])
    }

    fn record_exists(&self) -> bool {
        std::fs::read_dir(self.world.data_home.join("acc").join("installations"))
            .map(|d| d.count() > 0)
            .unwrap_or(false)
    }

    /// How many of ACC's hook groups each event holds, and whether ACC's MCP server is there.
    fn acc_entries(&self, mcp_name: &str) -> (Vec<usize>, bool) {
        let hooks: Value = self.hooks_value();
        let counts = self
            .client
            .events()
            .iter()
            .map(|event| {
                hooks
                    .pointer(&format!("/hooks/{event}"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|g| {
                        g.to_string()
                            .contains(&format!(" hook {} {event}", self.client.name()))
                    })
                    .count()
            })
            .collect();
        let other = String::from_utf8_lossy(&self.read(1).unwrap_or_default()).into_owned();
        let acc_mcp = acc_tests::bin("acc-mcp").display().to_string();
        let mcp = match self.client {
            Client::Claude | Client::Gemini | Client::Qwen | Client::Kimi => {
                json_with_comments(other.as_bytes())
                    .and_then(|v| v.pointer(&format!("/mcpServers/{mcp_name}")).cloned())
                    .is_some_and(|s| s["command"] == acc_mcp.as_str())
            }
            Client::Codex => other
                .parse::<toml::Table>()
                .ok()
                .and_then(|t| t.get("mcp_servers")?.get(mcp_name).cloned())
                .is_some_and(|s| s.get("command").and_then(toml::Value::as_str) == Some(&acc_mcp)),
        };
        (counts, mcp)
    }

    /// The hooks file's bytes as a JSON value, read as its client reads it: Kimi Code's
    /// `config.toml` as TOML, the others' as JSON with comments.
    fn parsed(&self, bytes: &[u8]) -> Option<Value> {
        if self.client == Client::Kimi {
            let table: toml::Table = String::from_utf8_lossy(bytes).parse().ok()?;
            serde_json::to_value(table).ok()
        } else {
            json_with_comments(bytes)
        }
    }

    /// The hooks file as JSON: `{"hooks": {"<event>": [groups]}}`; Kimi Code's `[[hooks]]`
    /// tables grouped by their event into the same shape.
    fn hooks_value(&self) -> Value {
        let parsed = self
            .parsed(&self.read(0).unwrap_or_default())
            .unwrap_or(Value::Null);
        if self.client != Client::Kimi {
            return parsed;
        }
        let mut events = serde_json::Map::new();
        for hook in parsed["hooks"].as_array().into_iter().flatten() {
            let hook = hook.clone();
            let event = hook["event"].as_str().unwrap_or("").to_string();
            events
                .entry(event)
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .expect("array")
                .push(hook);
        }
        serde_json::json!({ "hooks": events })
    }

    /// A real Kimi Code turn on a copy of the home (its model from the environment, so the
    /// user's own model settings play no part): the tools its first model request offers.
    fn kimi_offered_tools(&self) -> Vec<String> {
        let home = self.client_copy();
        let model = ModelServer::start();
        let mut command = self.world.command_path(self.client.exe());
        command
            .args(["-p", "hello", "--output-format", "stream-json"])
            .current_dir(&self.world.dir)
            .env("HOME", &home)
            .env("PATH", &self.path_env)
            .env("KIMI_MODEL_NAME", "acc-test")
            .env("KIMI_MODEL_API_KEY", "acc-test-key")
            .env("KIMI_MODEL_PROVIDER_TYPE", "openai")
            .env("KIMI_MODEL_BASE_URL", format!("{}/v1", model.base_url))
            .env("KIMI_CODE_NO_AUTO_UPDATE", "1")
            .env("KIMI_DISABLE_TELEMETRY", "1")
            .env_remove("KIMI_CODE_HOME");
        let run = self.world.run(command, "kimi -p");
        assert_eq!(run.code, 0, "kimi did not run a turn: {run:?}");
        let request = model
            .model_requests()
            .into_iter()
            .find(|r| r.is_main_loop())
            .expect("a model request");
        let body: Value = serde_json::from_str(&request.body).expect("json");
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .collect()
    }

    fn assert_installed(&self, mcp_name: &str, step: &str) {
        let (counts, mcp) = self.acc_entries(mcp_name);
        assert!(counts.iter().all(|c| *c == 1), "{step}: hooks {counts:?}");
        assert!(mcp, "{step}: acc's MCP server `{mcp_name}`");
        assert!(self.record_exists(), "{step}: a record");
    }

    fn assert_absent(&self, mcp_name: &str, step: &str) {
        let (counts, mcp) = self.acc_entries(mcp_name);
        assert!(counts.iter().all(|c| *c == 0), "{step}: hooks {counts:?}");
        assert!(!mcp, "{step}: no MCP server of acc's");
        assert!(!self.record_exists(), "{step}: no record");
    }

    /// After the user's own edit rewrote the hooks file with a serializer, its layout is the
    /// serializer's: what must remain is every value the user wrote.
    fn assert_user_values(&self, start: &Start, step: &str) {
        let Some((_, original)) = start.files.iter().find(|(i, _)| *i == 0) else {
            return;
        };
        let Some(Value::Object(original)) = self.parsed(original.as_bytes()) else {
            return;
        };
        let current = self
            .parsed(&self.read(0).unwrap_or_default())
            .unwrap_or(Value::Null);
        for (key, value) in &original {
            if key == "hooks" && self.client == Client::Kimi {
                // Kimi Code's `[[hooks]]`: each of the user's tables is still there.
                for hook in value.as_array().into_iter().flatten() {
                    let kept = current["hooks"]
                        .as_array()
                        .is_some_and(|list| list.contains(hook));
                    assert!(kept, "{step}: the user's [[hooks]] table {hook}");
                }
            } else if key == "hooks" {
                for (event, groups) in value.as_object().into_iter().flatten() {
                    for group in groups.as_array().into_iter().flatten() {
                        let kept = current
                            .pointer(&format!("/hooks/{event}"))
                            .and_then(Value::as_array)
                            .is_some_and(|list| list.contains(group));
                        assert!(kept, "{step}: the user's hooks.{event} group {group}");
                    }
                }
            } else if let (Value::Object(mine), Value::Object(now)) = (value, &current[key]) {
                // Gemini CLI and Qwen Code keep acc's MCP server beside the user's: each of
                // theirs stays.
                for (name, entry) in mine {
                    assert_eq!(
                        now.get(name),
                        Some(entry),
                        "{step}: the user's `{key}.{name}`"
                    );
                }
            } else {
                assert_eq!(&current[key], value, "{step}: the user's `{key}`");
            }
        }
        self.assert_snippets_of(start, step, 1);
    }

    fn assert_snippets(&self, start: &Start, step: &str) {
        self.assert_snippets_of(start, step, 0);
        self.assert_snippets_of(start, step, 1);
    }

    fn assert_snippets_of(&self, start: &Start, step: &str, only: usize) {
        for (index, snippet) in start.snippets.iter().filter(|(i, _)| *i == only) {
            let text = String::from_utf8_lossy(&self.read(*index).unwrap_or_default()).into_owned();
            assert!(
                text.contains(snippet),
                "{} / {step}: `{snippet}` lost from {}:\n{text}",
                start.name,
                self.client.files()[*index]
            );
        }
    }

    /// A copy of the home for the real client to run on (clients rewrite their own state
    /// files as they run, Claude Code its `.claude.json`, Qwen Code a `settings.json.corrupted`
    /// beside a file it refuses, which would blur what these tests check: what acc does to the
    /// user's bytes). Links are followed (`-L`): the client reads the copy's bytes, and cannot
    /// write through a link into the user's real dotfiles.
    fn client_copy(&self) -> PathBuf {
        let copy = self.world.temp.path().join("client-home");
        let _ = std::fs::remove_dir_all(&copy);
        let copied = std::process::Command::new("cp")
            .arg("-aL")
            .arg(&self.home)
            .arg(&copy)
            .status()
            .expect("cp");
        assert!(copied.success(), "copy the home");
        copy
    }

    /// `<client> mcp list` on a copy of the home: how Codex, Gemini CLI and Qwen Code load
    /// their files; `kimi doctor`, which validates Kimi Code's `config.toml` as Kimi Code
    /// loads it.
    fn mcp_list(&self) -> Run {
        let home = self.client_copy();
        let mut command = self.world.command_path(self.client.exe());
        if self.client == Client::Kimi {
            command.arg("doctor");
        } else {
            command.args(["mcp", "list"]);
        }
        command
            .env("HOME", &home)
            .env("TMPDIR", self.world.tmp())
            .env("PATH", &self.path_env)
            .env("CODEX_HOME", home.join(".codex"))
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("QWEN_HOME")
            .env_remove("KIMI_CODE_HOME")
            .env("KIMI_CODE_NO_AUTO_UPDATE", "1");
        self.world.run(command, "mcp list")
    }

    /// Whether the real client loads the starting files (Gemini CLI and Qwen Code refuse an
    /// empty settings.json).
    fn client_accepts(&self) -> bool {
        assert!(
            self.client.one_file(),
            "only Gemini CLI and Qwen Code refuse a start here"
        );
        self.mcp_list().code == 0
    }

    /// The real client loads the files: `mcp list` for Codex, Gemini CLI and Qwen Code; a whole
    /// Claude Code turn for Claude Code, on a copy of the home.
    fn assert_client_loads(&self, step: &str) {
        if self.client != Client::Claude {
            let run = self.mcp_list();
            assert_eq!(
                run.code, 0,
                "{step}: {:?} refuses its files: {run:?}",
                self.client
            );
            return;
        }
        let home = self.client_copy();
        let model = ModelServer::start();
        let command = acc_tests::claude_print(&self.world, &home, &model, "hello");
        let run = self.world.run(command, "claude -p");
        assert_eq!(run.code, 0, "{step}: claude did not run a turn: {run:?}");
        assert!(
            run.stdout.contains("\"subtype\":\"success\""),
            "{step}: {}",
            run.stdout
        );
    }

    /// A later edit by the user (or the client rewriting its own file): the hooks file is
    /// rewritten by a serializer with a hook of the user's own appended, and Codex's
    /// config.toml gets a line at the top. With `drop_stop`, ACC's Stop hook goes too (what
    /// `doctor --repair` puts back).
    fn user_edit(&self, drop_stop: bool) {
        if self.client == Client::Kimi {
            self.kimi_user_edit(drop_stop);
            return;
        }
        let path = self.file(0);
        let mut value: Value =
            json_with_comments(&std::fs::read(&path).expect("hooks file")).expect("json");
        let (prompt, stop) = self.client.edited_events();
        if let Some(list) = value
            .pointer_mut(&format!("/hooks/{prompt}"))
            .and_then(Value::as_array_mut)
        {
            list.push(serde_json::json!({ "hooks": [{ "type": "command", "command": "/usr/local/bin/my-later-hook" }] }));
        }
        if drop_stop && let Some(hooks) = value["hooks"].as_object_mut() {
            hooks.remove(stop);
        }
        let mut text = serde_json::to_string_pretty(&value).expect("json");
        text.push('\n');
        std::fs::write(&path, text).expect("edit");
        if self.client == Client::Codex {
            let config = self.file(1);
            let old = std::fs::read_to_string(&config).unwrap_or_default();
            std::fs::write(
                &config,
                format!("# the user's later note\nmodel_reasoning_effort = \"high\"\n{old}"),
            )
            .expect("edit");
        }
    }

    /// Kimi Code's `config.toml` rewritten by a TOML serializer with a `[[hooks]]` table of the
    /// user's own appended (and, with `drop_stop`, ACC's Stop table gone).
    fn kimi_user_edit(&self, drop_stop: bool) {
        let path = self.file(0);
        let mut table: toml::Table = std::fs::read_to_string(&path)
            .expect("config.toml")
            .parse()
            .expect("toml");
        let hooks = table
            .entry("hooks")
            .or_insert_with(|| toml::Value::Array(Vec::new()))
            .as_array_mut()
            .expect("[[hooks]]");
        if drop_stop {
            hooks.retain(|hook| {
                !(hook.get("event").and_then(toml::Value::as_str) == Some("Stop")
                    && hook
                        .get("command")
                        .and_then(toml::Value::as_str)
                        .is_some_and(|c| c.contains(" hook kimi ")))
            });
        }
        let mut mine = toml::Table::new();
        mine.insert("event".into(), "UserPromptSubmit".into());
        mine.insert("command".into(), "/usr/local/bin/my-later-hook".into());
        hooks.push(toml::Value::Table(mine));
        std::fs::write(&path, toml::to_string(&table).expect("toml")).expect("edit");
    }

    fn assert_user_edit_kept(&self, step: &str) {
        let hooks = String::from_utf8_lossy(&self.read(0).unwrap_or_default()).into_owned();
        assert!(
            hooks.contains("/usr/local/bin/my-later-hook"),
            "{step}: {hooks}"
        );
        if self.client == Client::Codex {
            let config = String::from_utf8_lossy(&self.read(1).unwrap_or_default()).into_owned();
            assert!(
                config.starts_with("# the user's later note\nmodel_reasoning_effort = \"high\"\n"),
                "{step}: {config}"
            );
        }
    }

    fn lay_out(&self, start: &Start) {
        for index in 0..2 {
            let _ = std::fs::remove_file(self.file(index));
        }
        for (index, content) in &start.files {
            std::fs::write(self.file(*index), content).expect("start file");
        }
    }
}

fn starts(client: Client) -> Vec<Start> {
    let own_hook = r#""PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{ "type": "command", "command": "/usr/local/bin/my-guard" }]
      }
    ]"#;
    match client {
        Client::Claude => vec![
            Start::missing(),
            Start {
                name: "empty",
                files: vec![(0, String::new()), (1, "  \n".into())],
                snippets: vec![],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "comments",
                files: vec![(0, "{\n  // my theme\n  \"theme\": \"dark\"\n}\n".into())],
                snippets: vec![(0, "// my theme")],
                mcp_refused: None,
                refused: Some("is not valid JSON"),
                client_refuses: false,
            },
            Start {
                name: "own hooks",
                files: vec![(
                    0,
                    format!("{{\n  \"model\": \"opus\",\n  \"hooks\": {{\n    {own_hook}\n  }}\n}}\n"),
                )],
                snippets: vec![(0, "/usr/local/bin/my-guard"), (0, "\"model\": \"opus\"")],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "own acc mcp entry",
                files: vec![(
                    1,
                    "{\n  \"numStartups\": 4,\n  \"mcpServers\": {\n    \"acc\": {\n      \"type\": \"stdio\",\n      \"command\": \"/opt/mine/acc-mcp\",\n      \"args\": [],\n      \"env\": { \"ACC_MCP_PARTICIPANT\": \"me\" }\n    }\n  }\n}\n".into(),
                )],
                snippets: vec![(1, "/opt/mine/acc-mcp"), (1, "\"numStartups\": 4")],
                mcp_refused: Some("--mcp-name NAME"),
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "unusual formatting",
                files: vec![
                    (0, "{\"zeta\":1,\t\"alpha\":   [1,2,\n3],\"includeCoAuthoredBy\":false}".into()),
                    (1, "{\n\t\"userID\": \"abc\",\n\t\"projects\": {}\n}".into()),
                ],
                snippets: vec![
                    (0, "\"zeta\":1"),
                    (0, "\"alpha\":   [1,2,\n3]"),
                    (1, "\t\"userID\": \"abc\",\n\t\"projects\": {}"),
                ],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
        ],
        Client::Codex => vec![
            Start::missing(),
            Start {
                name: "empty",
                files: vec![(0, String::new()), (1, String::new())],
                snippets: vec![],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "comments",
                files: vec![(
                    1,
                    "# my Codex settings\nmodel = \"gpt-5\"  # the default model\n\n[profiles.fast] # quick work\nmodel = \"gpt-5-mini\"\n".into(),
                )],
                snippets: vec![
                    (1, "# my Codex settings\nmodel = \"gpt-5\"  # the default model\n\n[profiles.fast] # quick work\nmodel = \"gpt-5-mini\"\n"),
                ],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "own hooks",
                files: vec![
                    (0, format!("{{\n  \"hooks\": {{\n    {own_hook}\n  }}\n}}\n")),
                    (1, "[hooks.state.\"HOOKS:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:0000\"\n".into()),
                ],
                snippets: vec![
                    (0, "/usr/local/bin/my-guard"),
                    (1, "trusted_hash = \"sha256:0000\""),
                ],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "own acc mcp entry",
                files: vec![(
                    1,
                    "[mcp_servers.acc]\ncommand = \"/opt/mine/acc-mcp\"\nenv = { ACC_MCP_PARTICIPANT = \"me\" }\n".into(),
                )],
                snippets: vec![(1, "command = \"/opt/mine/acc-mcp\"")],
                mcp_refused: Some("--mcp-name NAME"),
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "codex mcp add",
                // Written by Codex's own command, below.
                files: vec![],
                snippets: vec![(1, "[mcp_servers.acc]")],
                mcp_refused: Some("--mcp-name NAME"),
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "unusual formatting",
                files: vec![
                    (0, "{\"hooks\":{}}".into()),
                    (
                        1,
                        "approval_policy='on-request'\n[ mcp_servers . other ]\ncommand   =   \"x\"\nargs=[ \"a\" ,\"b\" ]\n[tui]\nnotifications=true".into(),
                    ),
                ],
                snippets: vec![
                    (0, "{\"hooks\":{"),
                    (1, "approval_policy='on-request'\n[ mcp_servers . other ]\ncommand   =   \"x\"\nargs=[ \"a\" ,\"b\" ]\n[tui]\nnotifications=true"),
                ],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
        ],
        Client::Kimi => kimi_starts(),
        Client::Gemini | Client::Qwen => vec![
            Start::missing(),
            Start {
                name: "empty",
                files: vec![(0, String::new())],
                snippets: vec![],
                mcp_refused: None,
                refused: None,
                client_refuses: true,
            },
            Start {
                name: "comments",
                files: vec![(
                    0,
                    "{\n  // my theme\n  \"ui\": { \"theme\": \"Dracula\" } // dark, always\n}\n".into(),
                )],
                snippets: vec![(0, "// my theme"), (0, "// dark, always")],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "own hooks",
                files: vec![(
                    0,
                    format!("{{\n  \"general\": {{ \"vimMode\": true }},\n  \"hooks\": {{\n    \"{}\": [\n      {{\n        \"matcher\": \"run_shell_command\",\n        \"hooks\": [{{ \"name\": \"mine\", \"type\": \"command\", \"command\": \"/usr/local/bin/my-guard\" }}]\n      }}\n    ]\n  }}\n}}\n", if client == Client::Qwen { "PreToolUse" } else { "BeforeTool" }),
                )],
                snippets: vec![(0, "/usr/local/bin/my-guard"), (0, "\"vimMode\": true")],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "own acc mcp entry",
                files: vec![(
                    0,
                    "{\n  \"mcpServers\": {\n    \"acc\": { \"command\": \"/opt/mine/acc-mcp\", \"env\": { \"ACC_MCP_PARTICIPANT\": \"me\" } }\n  }\n}\n".into(),
                )],
                snippets: vec![(0, "/opt/mine/acc-mcp")],
                mcp_refused: Some("--mcp-name NAME"),
                refused: None,
                client_refuses: false,
            },
            Start {
                name: "unusual formatting",
                files: vec![(
                    0,
                    "{\"zeta\":1,\t\"alpha\":   [1,2,\n3],\"ui\":{\"theme\":\"Dracula\"}}".into(),
                )],
                snippets: vec![(0, "\"zeta\":1"), (0, "\"alpha\":   [1,2,\n3]")],
                mcp_refused: None,
                refused: None,
                client_refuses: false,
            },
        ],
    }
}

/// Kimi Code's starts: its `config.toml` (TOML with comments, the user's own `[[hooks]]`,
/// unusual layout) and its `mcp.json` (strict JSON).
fn kimi_starts() -> Vec<Start> {
    let model = "[models.fast] # quick work\nprovider = \"mine\"\nmodel = \"kimi-k2\"\nmax_context_size = 131072\n\n[providers.mine]\ntype = \"kimi\"\nbase_url = \"https://example.invalid/v1\"\napi_key = \"sk-mine\"\n";
    let start = |name, files, snippets, mcp_refused| Start {
        name,
        files,
        snippets,
        mcp_refused,
        refused: None,
        client_refuses: false,
    };
    vec![
        Start::missing(),
        start("empty", vec![(0, String::new()), (1, "  \n".into())], vec![], None),
        start(
            "comments",
            vec![(0, format!("# my Kimi Code settings\ndefault_model = \"fast\"  # the one I use\n\n{model}"))],
            vec![(0, "# my Kimi Code settings\ndefault_model = \"fast\"  # the one I use\n\n[models.fast] # quick work\n")],
            None,
        ),
        start(
            "own hooks",
            vec![(0, "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"/usr/local/bin/my-guard\"\n".into())],
            vec![(0, "command = \"/usr/local/bin/my-guard\"")],
            None,
        ),
        start(
            "own acc mcp entry",
            vec![(1, "{\n  \"mcpServers\": {\n    \"acc\": { \"command\": \"/opt/mine/acc-mcp\", \"env\": { \"ACC_MCP_PARTICIPANT\": \"me\" } }\n  }\n}\n".into())],
            vec![(1, "/opt/mine/acc-mcp")],
            Some("--mcp-name NAME"),
        ),
        start(
            "unusual formatting",
            vec![
                (0, "default_model=\"fast\"\n[ models . fast ]\nprovider   =   \"mine\"\nmodel=\"kimi-k2\"\nmax_context_size=131072\n[providers.mine]\ntype=\"kimi\"\nbase_url=\"https://example.invalid/v1\"\napi_key=\"k\"".into()),
                (1, "{\"mcpServers\":{\"other\":{\"command\":\"x\",\"args\":[\"a\" ,\"b\"]}}}".into()),
            ],
            vec![
                (0, "default_model=\"fast\"\n[ models . fast ]\nprovider   =   \"mine\"\n"),
                (1, "\"other\":{\"command\":\"x\",\"args\":[\"a\" ,\"b\"]}"),
            ],
            None,
        ),
    ]
}

/// Check the state after a step that leaves ACC installed: for Kimi Code also a real turn,
/// which must offer ACC's MCP tools (Kimi Code ignores an `mcp.json` it cannot read without a
/// word, so only the tools offered show that it loaded).
fn check_installed(home: &Home, start: &Start, mcp_name: &str, step: &str) {
    home.assert_installed(mcp_name, step);
    home.assert_snippets(start, step);
    home.assert_client_loads(step);
    if home.client == Client::Kimi {
        let tools = home.kimi_offered_tools();
        let status = format!("mcp__{mcp_name}__acc_status");
        assert!(
            tools.contains(&status),
            "{step}: {status} not offered: {tools:?}"
        );
    }
}

/// Check the state after a step that leaves ACC uninstalled: originals back byte for byte
/// when the user changed nothing.
fn check_restored(home: &Home, start: &Start, original: &[Option<Vec<u8>>; 2], step: &str) {
    home.assert_absent("acc", step);
    home.assert_snippets(start, step);
    assert_eq!(
        &home.snapshot(),
        original,
        "{} / {step}: the files as they were",
        start.name
    );
    if start.client_refuses {
        assert!(
            !home.client_accepts(),
            "{step}: the client refuses the file it refused before"
        );
    } else {
        home.assert_client_loads(step);
    }
}

fn run_sequences(client: Client, start_name: &str) {
    let starts = starts(client);
    let start = starts
        .iter()
        .find(|s| s.name == start_name)
        .expect("a start");
    for sequence in [
        "install",
        "install twice",
        "install, edit, uninstall",
        "install, edit, repair, uninstall",
        "failed install",
        "interrupted install",
    ] {
        let home = Home::new(client);
        home.lay_out(start);
        if start.name == "codex mcp add" {
            let mut add = home.world.command_path(&clients().codex);
            add.args(["mcp", "add", "acc", "--", "/opt/mine/acc-mcp"])
                .env("CODEX_HOME", home.home.join(".codex"))
                .env("HOME", &home.home);
            let added = home.world.run(add, "codex mcp add");
            assert_eq!(added.code, 0, "{added:?}");
        }
        let original = home.snapshot();
        let step = |what: &str| format!("{} / {sequence} / {what}", start.name);

        if let Some(needle) = start.refused {
            for dry in [true, false] {
                let mut args = vec!["install", "--client", client.name()];
                if dry {
                    args.push("--dry-run");
                }
                let run = home.acc(&args, &[]);
                let error = run.err(4, "invalid_data");
                assert!(
                    error["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(needle)),
                    "{error}"
                );
                assert_eq!(home.snapshot(), original, "{}", step("refused"));
            }
            return;
        }
        let mut mcp_name = "acc";
        if let Some(needle) = start.mcp_refused {
            for dry in [true, false] {
                let mut args = vec!["install", "--client", client.name(), "--mcp"];
                if dry {
                    args.push("--dry-run");
                }
                let error = home.acc(&args, &[]).err(4, "invalid_data");
                let message = error["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains(needle) && message.contains("remove it yourself"),
                    "{error}"
                );
                assert_eq!(home.snapshot(), original, "{}", step("refused"));
                assert!(!home.record_exists());
            }
            mcp_name = "acc-coordination";
        }

        match sequence {
            "install" => {
                home.install(mcp_name).ok_json();
                check_installed(&home, start, mcp_name, &step("install"));
                home.uninstall().ok_json();
                check_restored(&home, start, &original, &step("uninstall"));
            }
            "install twice" => {
                home.install(mcp_name).ok_json();
                let once = home.snapshot();
                home.install(mcp_name).ok_json();
                assert_eq!(
                    home.snapshot(),
                    once,
                    "{}",
                    step("the second install adds nothing")
                );
                check_installed(&home, start, mcp_name, &step("install twice"));
                home.uninstall().ok_json();
                check_restored(&home, start, &original, &step("uninstall"));
            }
            "install, edit, uninstall" | "install, edit, repair, uninstall" => {
                let repair = sequence.contains("repair");
                home.install(mcp_name).ok_json();
                home.user_edit(repair);
                home.assert_user_values(start, &step("edit"));
                home.assert_client_loads(&step("edit"));
                if repair {
                    let report = home.acc(&["doctor", "--repair"], &[]).ok_json();
                    let reinstalled = format!("repaired: reinstalled {}", client.edited_events().1);
                    assert!(report.to_string().contains(&reinstalled), "{report}");
                    home.assert_installed(mcp_name, &step("repair"));
                    home.assert_user_values(start, &step("repair"));
                    home.assert_client_loads(&step("repair"));
                    home.assert_user_edit_kept(&step("repair"));
                }
                home.uninstall().ok_json();
                home.assert_absent(mcp_name, &step("uninstall"));
                home.assert_user_values(start, &step("uninstall"));
                home.assert_user_edit_kept(&step("uninstall"));
                home.assert_client_loads(&step("uninstall"));
            }
            "failed install" => {
                // A file acc plans to write second is one the client would refuse: nothing is
                // written, not even the first file.
                let second = home.file(1);
                let saved = home.read(1);
                let broken = match client {
                    Client::Claude => "{ \"numStartups\": ",
                    Client::Codex => "[mcp_servers.acc\ncommand = ",
                    Client::Gemini | Client::Qwen | Client::Kimi => "{ \"mcpServers\": ",
                };
                std::fs::write(&second, broken).expect("break");
                let error = home
                    .acc(
                        &[
                            "install",
                            "--client",
                            client.name(),
                            "--mcp",
                            "--mcp-name",
                            mcp_name,
                        ],
                        &[],
                    )
                    .err(4, "invalid_data");
                assert!(
                    error["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("nothing was changed")),
                    "{error}"
                );
                // Gemini CLI's and Qwen Code's one file is the broken one: it stays as it is.
                let untouched = if client.one_file() {
                    Some(broken.as_bytes().to_vec())
                } else {
                    original[0].clone()
                };
                assert_eq!(
                    home.read(0),
                    untouched,
                    "{}",
                    step("the first file untouched")
                );
                assert!(!home.record_exists());
                match saved {
                    Some(bytes) => std::fs::write(&second, bytes).expect("restore"),
                    None => std::fs::remove_file(&second).expect("restore"),
                }
                if client == Client::Codex {
                    // And without codex on PATH (its trust hashes cannot be had).
                    let error = home
                        .acc(
                            &["install", "--client", "codex"],
                            &[("PATH", "/usr/bin:/bin")],
                        )
                        .err(4, "invalid_data");
                    assert!(
                        error["message"]
                            .as_str()
                            .is_some_and(|m| m.contains("codex is not on PATH")),
                        "{error}"
                    );
                }
                check_restored(&home, start, &original, &step("after the failures"));
            }
            // One file: no install can stop between two (the Gemini tests kill its one write
            // at every point instead).
            "interrupted install" if client.one_file() => {}
            "interrupted install" => {
                interrupt_after_first_file(&home, mcp_name, &original);
                for index in 0..2 {
                    assert_parseable(&home, index, &step("interrupted"));
                }
                home.assert_client_loads(&step("interrupted"));
                // The next install rolls the interrupted one back and completes; uninstall then
                // gives the originals back.
                let report = home.install(mcp_name).ok_json();
                assert!(
                    report
                        .to_string()
                        .contains("rolled back an interrupted installation"),
                    "{report}"
                );
                check_installed(
                    &home,
                    start,
                    mcp_name,
                    &step("install after the interruption"),
                );
                home.uninstall().ok_json();
                check_restored(&home, start, &original, &step("uninstall"));
                // Interrupted again: doctor says so, and its repair rolls it back.
                interrupt_after_first_file(&home, mcp_name, &original);
                let name = format!("hooks {}", client.name());
                let report = home.acc(&["doctor"], &[]).ok_json();
                let check = report["checks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|c| c["name"] == name.as_str())
                    .cloned()
                    .unwrap_or_default();
                assert_eq!(check["status"], "error", "{report}");
                assert_eq!(check["fix"], "acc doctor --repair", "{check}");
                let repaired = home.acc(&["doctor", "--repair"], &[]).ok_json();
                assert!(
                    repaired
                        .to_string()
                        .contains("rolled back an interrupted installation"),
                    "{repaired}"
                );
                check_restored(&home, start, &original, &step("doctor --repair"));
            }
            _ => unreachable!(),
        }
    }
}

/// Every file the client reads parses the way the client parses it.
fn assert_parseable(home: &Home, index: usize, step: &str) {
    let Some(bytes) = home.read(index) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if text.trim().is_empty() {
        return;
    }
    let ok = if home.client.files()[index].ends_with(".toml") {
        text.parse::<toml::Table>().is_ok()
    } else {
        serde_json::from_str::<Value>(&text).is_ok()
    };
    assert!(
        ok,
        "{step}: {} does not parse:\n{text}",
        home.client.files()[index]
    );
}

/// Start an install that pauses between its writes, wait until its first file is written, and
/// kill -9 it there.
fn interrupt_after_first_file(home: &Home, mcp_name: &str, original: &[Option<Vec<u8>>; 2]) {
    let mut command = home.world.command("acc");
    command
        .args([
            "--json",
            "install",
            "--client",
            home.client.name(),
            "--mcp",
            "--mcp-name",
            mcp_name,
        ])
        .args(["--home", home.home.to_str().expect("utf8")])
        .env("PATH", &home.path_env)
        // What the killed install staged stays in the world's folder, not /tmp.
        .env("TMPDIR", home.world.tmp())
        .env("ACC_TEST_INSTALL_PAUSE_MS", "3000")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    without_client_homes(&mut command);
    let mut child = command.spawn().expect("spawn acc install");
    let started = Instant::now();
    while home.read(0) == original[0] {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the install never wrote its first file"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    acc_tests::kill_pid(child.id());
    let _ = child.wait();
    assert_eq!(home.read(1), original[1], "killed before the second file");
}

/// No variable that names a client's home: every client reads the test's `HOME`.
fn without_client_homes(command: &mut std::process::Command) {
    for var in [
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
        "KIMI_CODE_HOME",
    ] {
        command.env_remove(var);
    }
}

macro_rules! matrix {
    ($($test:ident: $client:expr, $start:expr;)*) => {
        $(
            #[test]
            fn $test() {
                run_sequences($client, $start);
            }
        )*
    };
}

matrix! {
    claude_code_from_missing_files: Client::Claude, "missing";
    claude_code_from_empty_files: Client::Claude, "empty";
    claude_code_refuses_settings_with_comments: Client::Claude, "comments";
    claude_code_with_the_users_own_hooks: Client::Claude, "own hooks";
    claude_code_with_the_users_own_acc_server: Client::Claude, "own acc mcp entry";
    claude_code_with_unusual_formatting: Client::Claude, "unusual formatting";
    codex_from_missing_files: Client::Codex, "missing";
    codex_from_empty_files: Client::Codex, "empty";
    codex_with_comments: Client::Codex, "comments";
    codex_with_the_users_own_hooks: Client::Codex, "own hooks";
    codex_with_the_users_own_acc_server: Client::Codex, "own acc mcp entry";
    codex_with_an_acc_server_from_codex_mcp_add: Client::Codex, "codex mcp add";
    codex_with_unusual_formatting: Client::Codex, "unusual formatting";
    gemini_from_missing_files: Client::Gemini, "missing";
    gemini_from_an_empty_file: Client::Gemini, "empty";
    gemini_with_comments: Client::Gemini, "comments";
    gemini_with_the_users_own_hooks: Client::Gemini, "own hooks";
    gemini_with_the_users_own_acc_server: Client::Gemini, "own acc mcp entry";
    gemini_with_unusual_formatting: Client::Gemini, "unusual formatting";
    qwen_from_missing_files: Client::Qwen, "missing";
    qwen_from_an_empty_file: Client::Qwen, "empty";
    qwen_with_comments: Client::Qwen, "comments";
    qwen_with_the_users_own_hooks: Client::Qwen, "own hooks";
    qwen_with_the_users_own_acc_server: Client::Qwen, "own acc mcp entry";
    qwen_with_unusual_formatting: Client::Qwen, "unusual formatting";
    kimi_from_missing_files: Client::Kimi, "missing";
    kimi_from_empty_files: Client::Kimi, "empty";
    kimi_with_comments: Client::Kimi, "comments";
    kimi_with_the_users_own_hooks: Client::Kimi, "own hooks";
    kimi_with_the_users_own_acc_server: Client::Kimi, "own acc mcp entry";
    kimi_with_unusual_formatting: Client::Kimi, "unusual formatting";
}

/// Kill -9 at random moments of an install that pauses between its steps: every file stays one
/// the client loads (the real client runs over them), and uninstall (after the next install or
/// directly) gives the originals back.
#[test]
fn a_kill_at_any_point_of_an_install_leaves_files_the_clients_load_and_undoable() {
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7);
    eprintln!("seed {seed}");
    let mut next = move |bound: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % bound
    };
    for round in 0..6 {
        let client = if round % 2 == 0 {
            Client::Claude
        } else {
            Client::Codex
        };
        let start = &starts(client)[3];
        let home = Home::new(client);
        home.lay_out(start);
        let original = home.snapshot();
        let mut command = home.world.command("acc");
        command
            .args(["--json", "install", "--client", client.name(), "--mcp"])
            .args(["--home", home.home.to_str().expect("utf8")])
            .env("PATH", &home.path_env)
            // A killed install leaves its staging folder (Codex's hooks, listed by a `codex
            // app-server` it started there) where it was: in the world's folder, not /tmp.
            .env("TMPDIR", home.world.tmp())
            .env("ACC_TEST_INSTALL_PAUSE_MS", "150")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        without_client_homes(&mut command);
        let mut child = command.spawn().expect("spawn");
        // Codex's install first asks codex for hashes (about a second); then three pauses.
        let window = if client == Client::Codex { 2500 } else { 600 };
        std::thread::sleep(Duration::from_millis(next(window)));
        acc_tests::kill_pid(child.id());
        let _ = child.wait();
        let step = format!("round {round} ({})", client.name());
        for index in 0..2 {
            assert_parseable(&home, index, &step);
        }
        home.assert_client_loads(&step);
        if next(2) == 0 {
            home.install("acc").ok_json();
            home.assert_installed("acc", &step);
        }
        home.uninstall().ok_json();
        home.assert_absent("acc", &step);
        assert_eq!(home.snapshot(), original, "{step}: the originals");
        // A writer killed between its temporary file and the rename leaves nothing behind.
        for dir in [".claude", ".codex"] {
            let litter: Vec<String> = std::fs::read_dir(home.home.join(dir))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".acc-install-"))
                .collect();
            assert!(litter.is_empty(), "{step}: {dir} holds {litter:?}");
        }
    }
}

/// `acc doctor` parses each client's files the way the client does and says which one the
/// client will refuse, and names hooks that run acc without an installation record.
#[test]
fn doctor_reports_files_the_clients_refuse_and_hooks_without_a_record() {
    let home = Home::new(Client::Codex);
    // What the first installer did to a config with a user's `[mcp_servers.acc]`: a duplicate.
    std::fs::write(
        home.file(1),
        "[mcp_servers.acc]\ncommand = \"/opt/mine/acc-mcp\"\n\n[mcp_servers.acc]\ncommand = \"/other/acc-mcp\"\n",
    )
    .expect("config");
    std::fs::write(
        home.home.join(".claude/settings.json"),
        "{\n  // commented\n  \"theme\": \"dark\"\n}\n",
    )
    .expect("settings");
    let acc = acc_tests::bin("acc").display().to_string();
    std::fs::write(
        home.file(0),
        format!("{{\"hooks\":{{\"Stop\":[{{\"hooks\":[{{\"type\":\"command\",\"command\":\"'{acc}' hook codex Stop\"}}]}}]}}}}\n"),
    )
    .expect("hooks");
    let report = home.acc(&["doctor"], &[]).ok_json();
    let checks = report["checks"].as_array().expect("checks");
    let find = |needle: &str| {
        checks
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.contains(needle)))
            .unwrap_or_else(|| panic!("no check {needle}: {report}"))
    };
    let expect = |needle: &str, status: &str, says: &[&str]| {
        let check = find(needle);
        assert_eq!(check["status"], status, "{check}");
        let detail = check["detail"].as_str().unwrap_or_default();
        assert!(says.iter().all(|s| detail.contains(s)), "{check}");
        check
    };
    expect("config.toml", "error", &["Codex refuses it"]);
    expect("settings.json", "error", &["will not load it"]);
    let stray = expect(
        "hooks codex",
        "warn",
        &["hooks.Stop", "no installation record"],
    );
    assert!(
        stray["fix"].as_str().is_some_and(|f| f.contains("by hand")),
        "{stray}"
    );
    assert_eq!(report["ok"], false);
    // The installer takes neither the unrecorded hooks nor the refused config.
    let error = home.install("acc").err(4, "invalid_data");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("acc did not write it")),
        "{error}"
    );
    std::fs::remove_file(home.file(0)).expect("hooks");
    let error = home.install("acc").err(4, "invalid_data");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("not valid TOML")),
        "{error}"
    );
    assert!(!home.file(0).exists(), "nothing was written");
}

/// Kimi Code's files as doctor reads them: a `[[hooks]]` table running acc that no
/// installation record names is a stray (warned, with the fix by hand, never taken by the
/// installer); a `config.toml` that is not TOML and an `mcp.json` that is not JSON are errors
/// naming the file (Kimi Code refuses the first and silently ignores the second), and install
/// writes nothing over either.
#[test]
fn doctor_reports_kimi_codes_stray_hooks_and_unreadable_files() {
    let home = Home::new(Client::Kimi);
    let acc = acc_tests::bin("acc").display().to_string();
    let config = format!(
        "# mine\n[[hooks]]\nevent = \"Stop\"\ncommand = \"'{acc}' hook kimi Stop\"\ntimeout = 5\n"
    );
    std::fs::write(home.file(0), &config).expect("config");
    let report = home.acc(&["doctor"], &[]).ok_json();
    let checks = report["checks"].as_array().expect("checks").clone();
    let check = |needle: &str| {
        checks
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.contains(needle)))
            .cloned()
            .unwrap_or_else(|| panic!("no check {needle}: {report}"))
    };
    let stray = check("hooks kimi");
    assert_eq!(stray["status"], "warn", "{stray}");
    assert!(
        stray["detail"]
            .as_str()
            .is_some_and(|d| d.contains("Stop") && d.contains("no installation record")),
        "{stray}"
    );
    assert!(
        stray["fix"].as_str().is_some_and(|f| f.contains("by hand")),
        "{stray}"
    );
    let error = home.install("acc").err(4, "invalid_data");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("acc did not write it")),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(home.file(0)).expect("config"),
        config
    );

    for (index, text, says) in [
        (0, "default_model = \"m1\nbroken", "not valid TOML"),
        (1, "{ \"mcpServers\": { ", "not valid JSON"),
    ] {
        let _ = std::fs::remove_file(home.file(0));
        let _ = std::fs::remove_file(home.file(1));
        std::fs::write(home.file(index), text).expect("file");
        let report = home.acc(&["doctor"], &[]).ok_json();
        let name = if index == 0 {
            "config.toml"
        } else {
            "mcp.json"
        };
        let found = report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.contains(name)))
            .cloned()
            .unwrap_or_else(|| panic!("no check of {name}: {report}"));
        assert_eq!(found["status"], "error", "{found}");
        assert!(
            found["detail"].as_str().is_some_and(|d| d.contains(says)),
            "{found}"
        );
        let error = home.install("acc").err(4, "invalid_data");
        assert!(
            error["message"].as_str().is_some_and(|m| m.contains(says)),
            "{error}"
        );
        assert_eq!(
            std::fs::read_to_string(home.file(index)).expect("file"),
            text,
            "nothing written over it"
        );
        assert!(!home.file(1 - index).exists(), "nor beside it");
    }
}

/// Claude Code rewrites its own `.claude.json` as it runs. Uninstall afterwards removes acc's
/// server and nothing else: the user's own server and keys stay, and so does what Claude Code
/// wrote.
#[test]
fn uninstall_after_claude_code_rewrote_its_state_file_removes_only_accs_server() {
    let home = Home::new(Client::Claude);
    std::fs::write(
        home.file(1),
        "{\n  \"numStartups\": 4,\n  \"mcpServers\": {\n    \"notes\": { \"type\": \"stdio\", \"command\": \"/opt/notes-mcp\", \"args\": [] }\n  }\n}\n",
    )
    .expect("state");
    home.install("acc").ok_json();
    home.assert_installed("acc", "install");
    // A real turn on the real home: Claude Code rewrites .claude.json in its own format.
    let model = ModelServer::start();
    let command = acc_tests::claude_print(&home.world, &home.home, &model, "hello");
    let run = home.world.run(command, "claude -p");
    assert_eq!(run.code, 0, "{run:?}");
    let rewritten: Value = serde_json::from_slice(&home.read(1).expect("state")).expect("json");
    assert!(
        rewritten.get("firstStartTime").is_some(),
        "Claude Code wrote its own keys: {rewritten}"
    );
    let report = home.uninstall().ok_json();
    assert!(report.to_string().contains("your changes stay"), "{report}");
    let after: Value = serde_json::from_slice(&home.read(1).expect("state")).expect("json");
    assert!(after.pointer("/mcpServers/acc").is_none(), "{after}");
    assert_eq!(
        after.pointer("/mcpServers/notes/command"),
        Some(&Value::from("/opt/notes-mcp"))
    );
    assert_eq!(after["numStartups"], rewritten["numStartups"]);
    assert_eq!(after["firstStartTime"], rewritten["firstStartTime"]);
    home.assert_absent("acc", "uninstall");
}

/// A temporary file a killed writer left beside the client's files or the record is removed by
/// the next uninstall (or install, or repair); one of a writer still running is left alone.
#[test]
fn temporary_files_of_a_killed_writer_are_swept_and_a_live_writers_kept() {
    let home = Home::new(Client::Claude);
    home.install("acc").ok_json();
    let records = home.world.data_home.join("acc").join("installations");
    // A pid that ran and is gone: a child that has exited and been reaped.
    let mut gone = std::process::Command::new("true").spawn().expect("spawn");
    let dead = gone.id();
    gone.wait().expect("wait");
    let live = std::process::id();
    let stale = [
        home.home
            .join(format!(".claude/.acc-install-{dead}-aB3dE9")),
        records.join(format!(".acc-install-{dead}-Zz81xQ")),
    ];
    let kept = home
        .home
        .join(format!(".claude/.acc-install-{live}-kEpT00"));
    for file in stale.iter().chain([&kept]) {
        std::fs::write(file, "half written").expect("litter");
    }
    home.uninstall().ok_json();
    for file in &stale {
        assert!(!file.exists(), "{} was swept", file.display());
    }
    assert!(kept.exists(), "a running writer's file is not touched");
    let _ = std::fs::remove_file(kept);
}

/// How a user's dotfiles manager put a client's config file in place.
#[derive(Clone, Copy, Debug)]
enum Linked {
    /// The file is a link (absolute) into the dotfiles folder.
    File,
    /// A link to a link (each relative) to the file in the dotfiles folder.
    Chain,
    /// The client's whole config folder is a link into the dotfiles folder (Claude Code's
    /// `~/.claude.json`, which sits in the home itself, is a file link then).
    Folder,
}

/// The user's own content of each file a client's install edits.
fn dotfile(client: Client, index: usize) -> &'static str {
    match (client, index) {
        (Client::Claude, 0) => "{\n  \"theme\": \"dark\"\n}\n",
        (Client::Claude, _) => "{\"numStartups\": 3}\n",
        (Client::Codex, 0) => "{\"hooks\": {}}\n",
        (Client::Codex, _) => "# mine\nmodel = \"o3\"\n",
        (Client::Gemini | Client::Qwen, _) => {
            "{\n  // mine\n  \"general\": {\"vimMode\": true}\n}\n"
        }
        (Client::Kimi, 0) => "# mine\n[loop_control] # my limits\nmax_steps_per_turn = 50\n",
        (Client::Kimi, _) => "{\"mcpServers\": {}}\n",
    }
}

impl Home {
    /// Lay the client's files out the way `linked` says, in `<home>/dotfiles`; the links that
    /// must stay links, with what each points to.
    fn lay_out_linked(&self, linked: Linked) -> Vec<(PathBuf, PathBuf)> {
        use std::os::unix::fs::symlink;
        let dotfiles = self.home.join("dotfiles");
        let files = self.client.files();
        let folder = std::path::Path::new(files[0])
            .parent()
            .expect("a config folder")
            .to_path_buf();
        let mut links = Vec::new();
        let mut link = |path: PathBuf, to: PathBuf| {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            let _ = std::fs::remove_file(&path);
            symlink(&to, &path).expect("link");
            links.push((path, to));
        };
        match linked {
            Linked::Folder => {
                std::fs::remove_dir_all(self.home.join(&folder)).expect("the config folder");
                std::fs::create_dir_all(dotfiles.join("folder")).expect("dotfiles");
                link(self.home.join(&folder), dotfiles.join("folder"));
            }
            Linked::File | Linked::Chain => std::fs::create_dir_all(&dotfiles).expect("dotfiles"),
        }
        for index in 0..2 {
            if index == 1 && files[1] == files[0] {
                break;
            }
            let content = dotfile(self.client, index);
            let in_folder = std::path::Path::new(files[index]).starts_with(&folder);
            let real = dotfiles.join(format!("file-{index}"));
            std::fs::write(&real, content).expect("the user's file");
            match (linked, in_folder) {
                (Linked::Folder, true) => {
                    let inside = dotfiles.join("folder").join(
                        std::path::Path::new(files[index])
                            .file_name()
                            .expect("name"),
                    );
                    std::fs::rename(&real, inside).expect("into the folder");
                }
                (Linked::File | Linked::Folder, _) => link(self.home.join(files[index]), real),
                (Linked::Chain, _) => {
                    let middle = dotfiles.join(format!("middle-{index}"));
                    link(middle.clone(), PathBuf::from(format!("file-{index}")));
                    let path = self.home.join(files[index]);
                    let up = path
                        .strip_prefix(&self.home)
                        .expect("in home")
                        .components()
                        .skip(1)
                        .map(|_| "..")
                        .collect::<PathBuf>();
                    link(path, up.join("dotfiles").join(format!("middle-{index}")));
                }
            }
        }
        links
    }

    /// Every link is still the same link.
    fn assert_links(&self, links: &[(PathBuf, PathBuf)], step: &str) {
        for (path, to) in links {
            let meta = std::fs::symlink_metadata(path).expect("the link");
            assert!(
                meta.file_type().is_symlink(),
                "{step}: {} is still a link",
                path.display()
            );
            assert_eq!(&std::fs::read_link(path).expect("read link"), to, "{step}");
        }
    }
}

#[test]
fn dotfile_links_survive_install_reinstall_repair_and_uninstall() {
    for client in [
        Client::Claude,
        Client::Codex,
        Client::Gemini,
        Client::Qwen,
        Client::Kimi,
    ] {
        for linked in [Linked::File, Linked::Chain, Linked::Folder] {
            let home = Home::new(client);
            let links = home.lay_out_linked(linked);
            let original = home.snapshot();
            let step = |what: &str| format!("{client:?} / {linked:?} / {what}");
            for what in ["install", "install again"] {
                let run = home.install("acc");
                assert_eq!(run.code, 0, "{}: {run:?}", step(what));
                home.assert_links(&links, &step(what));
                home.assert_installed("acc", &step(what));
                home.assert_client_loads(&step(what));
            }
            let repaired = home.acc(&["doctor", "--repair"], &[]);
            assert!(
                repaired.code == 0 || repaired.code == 1,
                "{}: {repaired:?}",
                step("repair")
            );
            home.assert_links(&links, &step("repair"));
            home.assert_installed("acc", &step("repair"));
            let run = home.uninstall();
            assert_eq!(run.code, 0, "{}: {run:?}", step("uninstall"));
            home.assert_links(&links, &step("uninstall"));
            home.assert_absent("acc", &step("uninstall"));
            assert_eq!(
                home.snapshot(),
                original,
                "{}: the user's files have their bytes back",
                step("uninstall")
            );
        }
    }
}

/// Gemini CLI reads its settings with comments, and so do the installer and `acc doctor`: right
/// after a good install into a commented file, doctor finds the hooks and the MCP server, and a
/// repair that has nothing to repair says it repaired nothing and changes no byte.
#[test]
fn doctor_reads_gemini_settings_with_comments_as_gemini_does() {
    let home = Home::new(Client::Gemini);
    std::fs::write(home.file(0), dotfile(Client::Gemini, 0)).expect("settings");
    let run = home.install("acc");
    assert_eq!(run.code, 0, "{run:?}");
    let installed = home.snapshot();
    for args in [&["doctor"][..], &["doctor", "--repair"]] {
        let report = home.acc(args, &[]).json();
        let checks = report["checks"].as_array().expect("checks");
        let text = report.to_string();
        assert!(
            !text.contains("lost")
                && !text.contains("not registered")
                && !text.contains("repaired:"),
            "{args:?}: {report}"
        );
        let hooks = checks
            .iter()
            .find(|c| {
                c["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("hooks gemini"))
            })
            .unwrap_or_else(|| panic!("the hooks check: {report}"));
        assert_eq!(hooks["status"], "ok", "{args:?}: {hooks}");
        assert_eq!(home.snapshot(), installed, "{args:?} changed nothing");
    }
}

/// Reverse the key order of every object in a JSON value (as a client that rewrites its own
/// settings may order them).
fn reordered(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            let mut keys: Vec<&String> = map.keys().collect();
            keys.reverse();
            for key in keys {
                out.insert(key.clone(), reordered(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(reordered).collect()),
        other => other.clone(),
    }
}

/// After Claude Code rewrote its settings (keys reordered, acc's hook objects included, and
/// reindented), installing again finds acc's hooks by their meaning: "already in", no byte
/// rewritten; uninstall still takes them out.
#[test]
fn a_second_install_after_the_client_reordered_its_settings_changes_nothing() {
    let home = Home::new(Client::Claude);
    std::fs::write(home.file(0), "{\"theme\": \"dark\"}\n").expect("settings");
    let run = home.install("acc");
    assert_eq!(run.code, 0, "{run:?}");
    let written: Value = serde_json::from_slice(&home.read(0).expect("settings")).expect("json");
    let rewritten = format!(
        "{}\n",
        serde_json::to_string_pretty(&reordered(&written)).expect("json")
    );
    assert_ne!(
        rewritten.as_bytes(),
        home.read(0).expect("settings").as_slice()
    );
    std::fs::write(home.file(0), &rewritten).expect("the client's rewrite");
    let again = home.install("acc").ok_json();
    let steps: Vec<&str> = again["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(Value::as_str)
        .filter(|s| s.contains("settings.json"))
        .collect();
    assert!(
        !steps.is_empty() && steps.iter().all(|s| s.starts_with("already in")),
        "{steps:?}"
    );
    assert_eq!(
        home.read(0).expect("settings"),
        rewritten.as_bytes(),
        "the client's own layout stays, byte for byte"
    );
    home.assert_installed("acc", "after the second install");
    assert_eq!(home.uninstall().code, 0);
    home.assert_absent("acc", "after uninstall");
    let left: Value = serde_json::from_slice(&home.read(0).expect("settings")).expect("json");
    assert_eq!(left["theme"], "dark", "{left}");
}

/// Every file below `dir`, with its bytes.
fn tree(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// `acc doctor` only reads: the clients' `--version` probes run in a throwaway home, so the
/// user's home (Gemini CLI's above all, which writes even to print its version) is left as it
/// was, byte for byte and file for file.
#[test]
fn doctor_leaves_the_users_client_homes_as_they_were() {
    for client in [Client::Claude, Client::Codex, Client::Gemini, Client::Qwen] {
        let home = Home::new(client);
        let home_dir = home.home.to_str().expect("utf8").to_string();
        let run = home.install("acc");
        assert_eq!(run.code, 0, "{run:?}");
        let before = tree(&home.home);
        // The probe's own deadline is not what this test is about: Gemini CLI takes seconds
        // to print its version on a loaded machine (more than the 3 s default, seen in CI).
        let report = home
            .acc(
                &["doctor"],
                &[("HOME", &home_dir), ("ACC_PROBE_TIMEOUT_MS", "60000")],
            )
            .json();
        let probed = report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .any(|c| {
                c["name"] == format!("client {}", client.name()).as_str() && c["status"] == "ok"
            });
        assert!(probed, "{client:?}: the client was probed: {report}");
        assert_eq!(
            tree(&home.home),
            before,
            "{client:?}: doctor wrote into the home"
        );
    }
}

/// `acc doctor` probes each client's `--version` in a throwaway home under the temporary
/// directory, and leaves nothing there: Gemini CLI's `--version` leaves a process behind that
/// goes on writing into its home (it made the removed home again, one folder per doctor run),
/// so the probe runs in a process group of its own, ended before the home goes. After doctor
/// exits, the temporary directory and the user's homes are empty and no process that was given
/// the temporary directory still runs; the adapters' version probes keep to the same rule.
#[test]
fn doctor_leaves_no_probe_home_and_no_probe_process_behind() {
    let home = Home::new(Client::Gemini);
    let tmp = home.world.temp.path().join("tmpdir");
    std::fs::create_dir_all(&tmp).expect("tmpdir");
    let tmp_text = tmp.to_str().expect("utf8").to_string();
    // Every client on PATH, Qwen Code's Node.js 22 too.
    let path = Client::Qwen.path();
    // The user's own client homes, named by each client's variable: the probe is given none.
    // (`CODEX_HOME` is left out: doctor's own check runs `codex mcp list` there, the loading
    // check of Codex's `config.toml`, and Codex makes its `tmp/` in its home whenever it runs.)
    let homes = home.world.temp.path().join("client homes");
    // `HOME` too: the adapters' probes (`opencode-plugin`'s runs `opencode --version`, which
    // makes OpenCode's XDG folders) run their clients as doctor's own checks do.
    let named: Vec<(&str, String)> = [
        "HOME",
        "CLAUDE_CONFIG_DIR",
        "GEMINI_CLI_HOME",
        "QWEN_HOME",
        "KIMI_CODE_HOME",
    ]
    .into_iter()
    .map(|var| {
        let dir = homes.join(var);
        std::fs::create_dir_all(&dir).expect("client home");
        (var, dir.to_str().expect("utf8").to_string())
    })
    .collect();
    for round in 0..3 {
        let mut env = vec![
            ("TMPDIR", tmp_text.as_str()),
            ("ACC_PROBE_TIMEOUT_MS", "60000"),
            ("PATH", path.as_str()),
        ];
        env.extend(named.iter().map(|(var, dir)| (*var, dir.as_str())));
        let report = home.acc(&["doctor"], &env).json();
        for (var, dir) in &named {
            let written: Vec<_> = std::fs::read_dir(dir).expect("home").flatten().collect();
            assert!(
                written.is_empty(),
                "round {round}: a probe wrote into {var}: {written:?}"
            );
        }
        let probed = report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .filter(|c| c["name"].as_str().is_some_and(|n| n.starts_with("client ")))
            .filter(|c| c["status"] == "ok")
            .count();
        assert_eq!(
            probed,
            acc_clients::Client::ALL.len(),
            "round {round}: every client probed: {report}"
        );
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .expect("tmpdir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(
            left.is_empty(),
            "round {round}: left in the temporary directory: {left:?}"
        );
        let survivors: Vec<String> = std::fs::read_dir("/proc")
            .expect("/proc")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
            .filter(|e| {
                std::fs::read(e.path().join("environ"))
                    .is_ok_and(|env| String::from_utf8_lossy(&env).contains(&tmp_text))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            survivors.is_empty(),
            "round {round}: probe processes still running: {survivors:?}"
        );
    }
}

//! The MCP surface as the real clients' models get it: Claude Code, Codex, Gemini CLI, Qwen
//! Code, OpenCode and Kimi Code run whole turns against a loopback model that plays a script of
//! tool calls, so these tests see exactly which ACC tools each client offers its model, call
//! every one of them through the client, and check the effect with the `acc` CLI.

use std::path::Path;

use acc_capture::model::{ModelServer, Scripted};
use acc_tests::{Creds, World, clients};
use serde_json::{Value, json};

/// The eleven tools MCP.md names (the server's own list; its length is checked where it is
/// used, so a lost tool fails here too).
/// The tools `acc-mcp` publishes, in order.
fn tool_names() -> Vec<&'static str> {
    acc_mcp::tools::names()
}

/// What the room holds before the agent's turn: the agent is a known participant (so it can be
/// addressed), and carol has asked it a question and left it a note.
struct Room {
    carol: Creds,
    question: String,
    note: String,
}

fn room(world: &World, agent: &str) -> Room {
    world.attach(agent);
    let carol = world.attach("carol");
    let send = |kind: &str, subject: &str| {
        world
            .acc_as(
                &carol,
                &[
                    "message",
                    "--to",
                    agent,
                    "--kind",
                    kind,
                    "--subject",
                    subject,
                    "--body",
                    "from carol",
                ],
            )
            .ok_json()["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string()
    };
    let question = send("question", "which parser?");
    let note = send("note", "fyi");
    Room {
        carol,
        question,
        note,
    }
}

/// Ten of the eleven tools, each with valid arguments and an effect the CLI can see; the
/// eleventh, `acc_finish`, ends the session and runs in a second turn.
fn first_turn(prefix: &str, room: &Room) -> Vec<Scripted> {
    let call = |tool: &str, input: Value| Scripted::Tool {
        name: format!("{prefix}{tool}"),
        input,
    };
    vec![
        call("acc_status", json!({})),
        call(
            "acc_work",
            json!({ "summary": "rewriting the parser", "mode": "edit", "resourceHints": ["file:src/parser.rs"] }),
        ),
        call(
            "acc_claim",
            json!({ "action": "acquire", "resources": ["file:src/parser.rs", "file:src/lexer.rs"] }),
        ),
        call("acc_release", json!({ "resource": "file:src/lexer.rs" })),
        call("acc_sync", json!({})),
        call(
            "acc_message",
            json!({ "to": ["carol"], "subject": "parser", "body": "I am on the parser" }),
        ),
        call(
            "acc_request",
            json!({ "toParticipantId": "carol", "title": "review the lexer" }),
        ),
        call("acc_inbox", json!({ "messageId": room.question })),
        call(
            "acc_reply",
            json!({ "messageId": room.question, "body": "the new one" }),
        ),
        call("acc_ack", json!({ "messageId": room.note })),
        Scripted::Text("done".into()),
    ]
}

fn second_turn(prefix: &str) -> Vec<Scripted> {
    vec![
        Scripted::Tool {
            name: format!("{prefix}acc_finish"),
            input: json!({ "goal": "the parser", "remaining": ["tests"], "toParticipantId": "carol" }),
        },
        Scripted::Text("done".into()),
    ]
}

/// What the CLI sees after the first turn: the agent's intent and claim, carol's inbox, the
/// agent's receipts.
fn check_first_turn(world: &World, agent: &str, room: &Room) {
    let status = world.status();
    let claims: Vec<(&str, &str)> = status["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .map(|c| {
            (
                c["resource"].as_str().unwrap_or_default(),
                c["ownerParticipantId"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(claims, vec![("file:src/parser.rs", agent)], "{status}");
    let intent = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == agent && !s["intent"].is_null())
        .unwrap_or_else(|| panic!("an intent of {agent}: {status}"));
    assert_eq!(intent["intent"]["summary"], "rewriting the parser");
    let inbox = world.acc_as(&room.carol, &["inbox"]).ok_json();
    let subjects: Vec<&str> = inbox["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["fromParticipantId"] == agent)
        .filter_map(|i| i["subject"].as_str())
        .collect();
    for subject in ["parser", "review the lexer", "Re: which parser?"] {
        assert!(subjects.contains(&subject), "{subject}: {inbox}");
    }
    assert_eq!(world.receipt(&room.question)["state"], "acknowledged");
    assert_eq!(world.receipt(&room.note)["state"], "acknowledged");
}

fn check_second_turn(world: &World, agent: &str, room: &Room) {
    let status = world.status();
    assert_eq!(status["claims"], json!([]), "finish released the claim");
    let inbox = world.acc_as(&room.carol, &["inbox"]).ok_json();
    assert!(
        inbox["items"]
            .as_array()
            .expect("items")
            .iter()
            .any(|i| { i["fromParticipantId"] == agent && i["kind"] == "handoff" }),
        "{inbox}"
    );
}

/// One `claude -p` turn against the model, with the given extra arguments.
fn claude_turn(world: &World, home: &Path, model: &ModelServer, extra: &[&str]) -> Vec<Value> {
    let mut command = acc_tests::claude_print(world, home, model, "coordinate");
    command.args(["--allowedTools", "mcp__acc__*"]).args(extra);
    let run = world.run(command, "claude -p");
    assert_eq!(
        run.code, 0,
        "claude failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    run.stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The ACC tools Claude Code offered its model, from the `system/init` event.
fn offered_by_claude(events: &[Value]) -> Vec<String> {
    let init = events
        .iter()
        .find(|e| e["type"] == "system" && e["subtype"] == "init")
        .expect("a system/init event");
    let acc = init["mcp_servers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == "acc")
        .unwrap_or_else(|| panic!("acc among the servers: {init}"));
    assert_eq!(acc["status"], "connected", "{init}");
    let mut offered: Vec<String> = init["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t.as_str()?.strip_prefix("mcp__acc__").map(str::to_string))
        .collect();
    offered.sort();
    offered
}

/// Every `tool_result` block Claude Code sent back to the model, in order.
fn claude_tool_result_blocks(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "user")
        .flat_map(|e| {
            e["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|c| c["type"] == "tool_result")
        .collect()
}

/// Every tool result Claude Code sent back to the model, as (is_error, text).
fn claude_tool_results(events: &[Value]) -> Vec<(bool, String)> {
    claude_tool_result_blocks(events)
        .into_iter()
        .map(|c| (c["is_error"] == true, c["content"].to_string()))
        .collect()
}

fn sorted_tools() -> Vec<String> {
    assert_eq!(tool_names().len(), 11, "MCP.md's eleven tools");
    let mut all: Vec<String> = tool_names().iter().map(|t| t.to_string()).collect();
    all.sort();
    all
}

fn assert_all_succeeded(results: &[(bool, String)], expected: usize) {
    assert_eq!(results.len(), expected, "{results:#?}");
    for (failed, text) in results {
        assert!(!failed, "a tool call failed: {text}");
        assert!(
            !text.contains("\\\"error\\\":{") && !text.contains("No such tool"),
            "a tool call failed: {text}"
        );
    }
}

/// Drive both turns through Claude Code with `acc-mcp` registered as `register` sets up.
fn drive_claude(register: impl Fn(&World, &Path) -> Vec<String>) {
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let extra = register(&world, &home);
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let agent = "claude-agent";
    let room = room(&world, agent);
    let model = ModelServer::start();

    // Claude Code 2.1.328 offers MCP tools as deferred tools: the model request names them and
    // the model loads their schemas with ToolSearch before calling them, as a real model does.
    model.script([load_schemas()]);
    model.script(first_turn("mcp__acc__", &room));
    let events = claude_turn(&world, &home, &model, &extra);
    assert_eq!(offered_by_claude(&events), sorted_tools());
    assert_eq!(
        model.scripted_left(),
        0,
        "the model played its whole script"
    );
    assert_all_succeeded(&claude_tool_results(&events), 11);
    assert_schemas_reached_the_model(&model);
    check_first_turn(&world, agent, &room);

    model.script([load_schemas()]);
    model.script(second_turn("mcp__acc__"));
    let events = claude_turn(&world, &home, &model, &extra);
    assert_all_succeeded(&claude_tool_results(&events), 2);
    check_second_turn(&world, agent, &room);
}

/// The model's ToolSearch call that loads the schemas of all eleven ACC tools.
fn load_schemas() -> Scripted {
    let names: Vec<String> = tool_names()
        .iter()
        .map(|t| format!("mcp__acc__{t}"))
        .collect();
    Scripted::Tool {
        name: "ToolSearch".into(),
        input: json!({ "query": format!("select:{}", names.join(",")), "max_results": 11 }),
    }
}

/// The first main-loop request names all eleven tools as available, and after ToolSearch a
/// request carries every ACC tool with its input schema, none with a root the Anthropic API
/// refuses.
fn assert_schemas_reached_the_model(model: &ModelServer) {
    let bodies: Vec<Value> = model
        .model_requests()
        .into_iter()
        .filter_map(|r| serde_json::from_str::<Value>(&r.body).ok())
        .filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    let first = bodies.first().expect("a main-loop request").to_string();
    for tool in tool_names() {
        assert!(
            first.contains(&format!("mcp__acc__{tool}")),
            "{tool} is named to the model"
        );
    }
    let loaded = bodies
        .iter()
        .map(|b| {
            b["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| {
                    t["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("mcp__acc__"))
                })
                .cloned()
                .collect::<Vec<Value>>()
        })
        .max_by_key(Vec::len)
        .unwrap_or_default();
    let mut names: Vec<String> = loaded
        .iter()
        .filter_map(|t| {
            t["name"]
                .as_str()?
                .strip_prefix("mcp__acc__")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    assert_eq!(names, sorted_tools(), "every schema reached the model");
    for tool in &loaded {
        let schema = &tool["input_schema"];
        assert_eq!(schema["type"], "object", "{tool}");
        for forbidden in ["oneOf", "anyOf", "allOf", "not", "enum", "if"] {
            assert!(schema.get(forbidden).is_none(), "{tool}");
        }
    }
}

fn server_env(world: &World, participant: &str) -> Vec<(String, String)> {
    vec![
        ("ACC_MCP_PARTICIPANT".into(), participant.into()),
        ("ACC_MCP_WORKSPACE".into(), world.dir.display().to_string()),
        (
            "ACC_DATA_HOME".into(),
            world.data_home.display().to_string(),
        ),
    ]
}

#[test]
fn claude_code_offers_and_calls_all_eleven_tools_registered_with_claude_mcp_add() {
    drive_claude(|world, home| {
        let mut command = world.command_path(&clients().claude);
        command.args(["mcp", "add", "acc"]);
        for (key, value) in server_env(world, "claude-agent") {
            command.arg("-e").arg(format!("{key}={value}"));
        }
        command
            .arg("--")
            .arg(acc_tests::bin("acc-mcp"))
            .env("HOME", home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("ANTHROPIC_API_KEY");
        let added = world.run(command, "claude mcp add");
        assert_eq!(added.code, 0, "{added:?}");
        Vec::new()
    });
}

#[test]
fn claude_code_offers_and_calls_all_eleven_tools_registered_with_mcp_config() {
    drive_claude(|world, _home| {
        let env: serde_json::Map<String, Value> = server_env(world, "claude-agent")
            .into_iter()
            .map(|(k, v)| (k, Value::from(v)))
            .collect();
        let config = json!({ "mcpServers": { "acc": { "command": acc_tests::bin("acc-mcp"), "env": env } } });
        let path = world.temp.path().join("mcp.json");
        std::fs::write(&path, config.to_string()).expect("mcp config");
        vec!["--mcp-config".into(), path.display().to_string()]
    });
}

/// One `codex exec` turn against the model.
fn codex_turn(world: &World, codex_home: &Path) {
    let mut command = world.command_path(&clients().codex);
    command
        .args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "coordinate",
        ])
        .env("CODEX_HOME", codex_home)
        .env("HOME", world.temp.path())
        .env("ACC_TEST_MODEL_KEY", "acc-test-key")
        .env_remove("OPENAI_API_KEY");
    let run = world.run(command, "codex exec");
    assert_eq!(
        run.code, 0,
        "codex failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
}

/// The ACC tools in Codex's first model request: one namespace tool `mcp__acc`.
fn offered_by_codex(model: &ModelServer) -> Vec<String> {
    let first = model
        .model_requests()
        .into_iter()
        .next()
        .expect("a request");
    let body: Value = serde_json::from_str(&first.body).expect("json body");
    let namespace = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == "mcp__acc")
        .unwrap_or_else(|| panic!("an mcp__acc namespace: {}", body["tools"]));
    let mut offered: Vec<String> = namespace["tools"]
        .as_array()
        .expect("namespace tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    offered.sort();
    offered
}

/// Every `function_call_output` Codex sent back (the last request carries them all).
fn codex_tool_results(model: &ModelServer) -> Vec<(bool, String)> {
    let last = model
        .model_requests()
        .into_iter()
        .last()
        .expect("a request");
    let body: Value = serde_json::from_str(&last.body).expect("json body");
    body["input"]
        .as_array()
        .expect("input")
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        // Codex passes a failed tool's text on as the output (no error flag of its own), so a
        // failure shows as ACC's error object, which `assert_all_succeeded` looks for.
        .map(|i| (false, i["output"].to_string()))
        .collect()
}

#[test]
fn codex_offers_and_calls_all_eleven_tools() {
    let world = World::new();
    let codex_home = world.temp.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).expect("codex home");
    let model = ModelServer::start();
    std::fs::write(codex_home.join("config.toml"), model.codex_config()).expect("config");
    // Registered the way a user does it, by Codex's own command.
    let mut add = world.command_path(&clients().codex);
    add.args(["mcp", "add", "acc"]);
    for (key, value) in server_env(&world, "codex-agent") {
        add.arg("--env").arg(format!("{key}={value}"));
    }
    add.arg("--")
        .arg(acc_tests::bin("acc-mcp"))
        .env("CODEX_HOME", &codex_home)
        .env("HOME", world.temp.path());
    let added = world.run(add, "codex mcp add");
    assert_eq!(added.code, 0, "{added:?}");

    let agent = "codex-agent";
    let room = room(&world, agent);
    model.script(first_turn("mcp__acc__", &room));
    codex_turn(&world, &codex_home);
    assert_eq!(offered_by_codex(&model), sorted_tools());
    assert_eq!(
        model.scripted_left(),
        0,
        "the model played its whole script"
    );
    assert_all_succeeded(&codex_tool_results(&model), 10);
    check_first_turn(&world, agent, &room);

    model.clear();
    model.script(second_turn("mcp__acc__"));
    codex_turn(&world, &codex_home);
    assert_all_succeeded(&codex_tool_results(&model), 1);
    check_second_turn(&world, agent, &room);
}

/// The text of each tool result Claude Code sent back, parsed as ACC's JSON where it is.
fn claude_tool_values(events: &[Value]) -> Vec<Value> {
    claude_tool_result_blocks(events)
        .into_iter()
        .filter_map(|c| {
            let text = match &c["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => return None,
            };
            serde_json::from_str(text.split("\n\n").next().unwrap_or_default()).ok()
        })
        .collect()
}

#[test]
fn hooks_and_acc_mcp_in_one_claude_code_session_are_one_participant() {
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let home_arg = home.to_str().expect("utf8");
    // The hooks and acc-mcp, registered in the adopting form (no participant named).
    let installed = world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home_arg,
            "--mcp",
        ])
        .ok_json();
    assert!(
        installed.to_string().contains("hooked session"),
        "{installed}"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(home.join(".claude.json")).expect("state"))
            .expect("json");
    assert!(
        state
            .pointer("/mcpServers/acc/env/ACC_MCP_PARTICIPANT")
            .is_none(),
        "the adopting form names no participant: {state}"
    );

    // bob is the hooked participant (pinned through the hooks' ACC_PARTICIPANT, which acc-mcp
    // never reads); carol writes to bob before his turn.
    world.attach("bob");
    let carol = world.attach("carol");
    let sent = world
        .acc_as(
            &carol,
            &[
                "message",
                "--to",
                "bob",
                "--subject",
                "hello",
                "--body",
                "from carol",
            ],
        )
        .ok_json();
    let message_id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();

    let model = ModelServer::start();
    model.script([
        load_schemas(),
        Scripted::Tool {
            name: "mcp__acc__acc_status".into(),
            input: json!({}),
        },
        Scripted::Tool {
            name: "mcp__acc__acc_inbox".into(),
            input: json!({}),
        },
        Scripted::Tool {
            name: "mcp__acc__acc_claim".into(),
            input: json!({ "action": "acquire", "resource": "file:src/parser.rs" }),
        },
        Scripted::Text("done".into()),
    ]);
    let mut command = acc_tests::claude_print(&world, &home, &model, "coordinate");
    command
        .args(["--allowedTools", "mcp__acc__*"])
        .env("ACC_PARTICIPANT", "bob");
    let run = world.run(command, "claude -p");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let events: Vec<Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(offered_by_claude(&events), sorted_tools());
    assert_eq!(model.scripted_left(), 0);
    assert_all_succeeded(&claude_tool_results(&events), 4);
    let values = claude_tool_values(&events);

    // The print-mode run has ended, and with it (SessionEnd) the hook's session: look at every
    // session.
    let status = world.acc(&["status", "--all"]).ok_json();
    let hooked = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["harness"] == "claude-code")
        .unwrap_or_else(|| panic!("the hook's session: {status}"));
    assert_eq!(hooked["participantId"], "bob");
    // acc_status says whom the server speaks for, and why.
    let speaks = values
        .iter()
        .find(|v| v.get("speaksFor").is_some())
        .unwrap_or_else(|| panic!("an acc_status result: {values:?}"));
    assert_eq!(speaks["speaksFor"]["participantId"], "bob");
    assert_eq!(speaks["speaksFor"]["source"], "adopted");
    assert_eq!(speaks["speaksFor"]["sessionId"], hooked["sessionId"]);
    // The message to the hooked participant is in the MCP inbox of the same session.
    assert!(
        values.iter().any(|v| v["items"]
            .as_array()
            .is_some_and(|items| items.iter().any(|i| i["messageId"] == message_id.as_str()))),
        "acc_inbox shows carol's message: {values:?}"
    );
    // The claim taken through MCP is held by the hook's session.
    let claim = &status["claims"][0];
    assert_eq!(claim["resource"], "file:src/parser.rs", "{status}");
    assert_eq!(claim["ownerParticipantId"], "bob");
    assert_eq!(claim["ownerSessionId"], hooked["sessionId"]);
    assert!(
        !status.to_string().contains("\"participantId\":\"mcp\""),
        "no separate mcp participant: {status}"
    );
}

/// One headless Gemini CLI turn in `--approval-mode yolo` (which offers every tool, MCP ones
/// included, and runs them without asking).
fn gemini_turn(world: &World, home: &Path, model: &ModelServer) {
    let mut command = acc_tests::gemini_print(
        world,
        home,
        model,
        "coordinate",
        &["--approval-mode", "yolo"],
    );
    command.env_remove("ACC_PARTICIPANT");
    let run = world.run(command, "gemini -p");
    assert_eq!(
        run.code, 0,
        "gemini failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
}

/// The ACC tools in the first main-loop request, without the client's `prefix`, sorted: the
/// tool names of Gemini's `tools[].functionDeclarations[]` and of Chat Completions'
/// `tools[].function` alike.
fn offered_with_prefix(model: &ModelServer, prefix: &str) -> Vec<String> {
    let first = model
        .model_requests()
        .into_iter()
        .find(acc_capture::model::Recorded::is_main_loop)
        .expect("a main-loop request");
    let body: Value = serde_json::from_str(&first.body).expect("json body");
    let mut offered: Vec<String> = body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .flat_map(|t| {
            let mut functions = t["functionDeclarations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            functions.extend(t.get("function").cloned());
            functions
        })
        .filter_map(|f| {
            f["name"]
                .as_str()
                .and_then(|n| n.strip_prefix(prefix))
                .map(str::to_string)
        })
        .collect();
    offered.sort();
    offered
}

/// Every `functionResponse` Gemini CLI sent back (the last main-loop request carries them
/// all): a refused or failed call has `response.error`.
fn gemini_tool_results(model: &ModelServer) -> Vec<(bool, String)> {
    let last = model
        .model_requests()
        .into_iter()
        .rfind(acc_capture::model::Recorded::is_main_loop)
        .expect("a request");
    let body: Value = serde_json::from_str(&last.body).expect("json body");
    body["contents"]
        .as_array()
        .expect("contents")
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("functionResponse").cloned())
        .map(|r| {
            (
                r["response"].get("error").is_some(),
                r["response"].to_string(),
            )
        })
        .collect()
}

#[test]
fn gemini_offers_and_calls_all_eleven_tools_registered_by_acc_install() {
    let world = World::new();
    let (home, _) = acc_tests::gemini_home(&world, acc_capture::model::GEMINI_SETTINGS);
    let agent = "gemini-agent";
    // Registered by ACC's own installer, pinned to the agent's participant.
    world
        .acc(&[
            "install",
            "--client",
            "gemini",
            "--home",
            home.to_str().expect("utf8"),
            "--mcp",
            agent,
        ])
        .ok_json();
    let model = ModelServer::start();
    let room = room(&world, agent);
    model.script(first_turn("mcp_acc_", &room));
    gemini_turn(&world, &home, &model);
    assert_eq!(offered_with_prefix(&model, "mcp_acc_"), sorted_tools());
    assert_eq!(
        model.scripted_left(),
        0,
        "the model played its whole script"
    );
    assert_all_succeeded(&gemini_tool_results(&model), 10);
    check_first_turn(&world, agent, &room);

    model.clear();
    model.script(second_turn("mcp_acc_"));
    gemini_turn(&world, &home, &model);
    assert_all_succeeded(&gemini_tool_results(&model), 1);
    check_second_turn(&world, agent, &room);
}

/// A hooked client installed with ACC's MCP server pinned to `agent`, as a user's `acc install
/// --client CLIENT --mcp AGENT` leaves it; its MCP turns run MCP tools without asking (Qwen
/// Code's `--approval-mode yolo`; OpenCode allows them by default).
fn installed_writer(
    world: &World,
    model: &ModelServer,
    client: acc_clients::Client,
    agent: &str,
) -> acc_capture::guard::Writer {
    let writer = acc_tests::writer(world, client, model, &[]);
    writer.prepare_home(model).expect("the user's settings");
    world
        .acc(&[
            "install",
            "--client",
            client.as_str(),
            "--home",
            writer.home.to_str().expect("utf8"),
            "--mcp",
            agent,
        ])
        .ok_json();
    writer
}

/// Every `tool` message the client sent back in the turn's last Chat Completions request: a
/// refused or failed call reads as the client's error text or ACC's `{code, message}` error.
fn chat_tool_results(model: &ModelServer) -> Vec<(bool, String)> {
    acc_capture::guard::results_of_turn(model)
        .iter()
        .map(|message| {
            let text = message["content"].to_string();
            let failed = text.contains("\\\"code\\\":\\\"")
                || text.contains("Error")
                || text.contains("not found");
            (failed, text)
        })
        .collect()
}

/// All eleven tools offered (named `<prefix><tool>`) and called through a Chat Completions
/// client ACC installed.
fn offers_and_calls_all_eleven(client: acc_clients::Client, prefix: &str) {
    let world = World::new();
    let model = ModelServer::start();
    let agent = format!("{}-agent", client.as_str());
    let writer = installed_writer(&world, &model, client, &agent);
    let room = room(&world, &agent);
    model.script(first_turn(prefix, &room));
    writer
        .turn_with("coordinate", acc_capture::guard::Origin::Fresh, true)
        .expect("the turn");
    assert_eq!(offered_with_prefix(&model, prefix), sorted_tools());
    assert_eq!(
        model.scripted_left(),
        0,
        "the model played its whole script"
    );
    assert_all_succeeded(&chat_tool_results(&model), 10);
    check_first_turn(&world, &agent, &room);

    model.clear();
    model.script(second_turn(prefix));
    writer
        .turn_with("finish", acc_capture::guard::Origin::Fresh, true)
        .expect("the turn");
    assert_all_succeeded(&chat_tool_results(&model), 1);
    check_second_turn(&world, &agent, &room);
}

#[test]
fn qwen_code_offers_and_calls_all_eleven_tools_registered_by_acc_install() {
    offers_and_calls_all_eleven(acc_clients::Client::Qwen, "mcp__acc__");
}

/// OpenCode names an MCP tool `<server>_<tool>`: ACC's are `acc_acc_status` and so on.
#[test]
fn opencode_offers_and_calls_all_eleven_tools_registered_by_acc_install() {
    offers_and_calls_all_eleven(acc_clients::Client::OpenCode, "acc_");
}

/// Kimi Code names an MCP tool `mcp__<server>__<tool>`, as Claude Code does; its prompt mode
/// runs them without asking.
#[test]
fn kimi_code_offers_and_calls_all_eleven_tools_registered_by_acc_install() {
    offers_and_calls_all_eleven(acc_clients::Client::Kimi, "mcp__acc__");
}

//! `acc-mcp` driven by real clients: the official TypeScript and Python SDKs, Claude Code and
//! Codex. They are installed (pinned) by `scripts/install-test-clients.sh`; a missing client is
//! a failure, never a skip.

use std::process::Command;

use acc_tests::{JsonRpcChild, World, clients, repo_root};
use serde_json::{Value, json};

fn report(run: &acc_tests::Run) -> Value {
    assert_eq!(
        run.code, 0,
        "client script failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    let last = run.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("no json report ({e}): {}", run.stdout))
}

#[test]
fn typescript_sdk_at_both_2025_revisions() {
    let clients = clients();
    for version in ["2025-06-18", "2025-11-25"] {
        let world = World::new();
        let mut command = world.command_path("node");
        command
            .arg(repo_root().join("tests/clients/ts_roundtrip.mjs"))
            .arg(acc_tests::bin("acc-mcp"))
            .arg(&world.dir)
            .arg(version)
            .env("ACC_TS_SDK", &clients.ts_sdk);
        let value = report(&world.run(command, "typescript sdk client"));
        assert_eq!(value["negotiated"], json!([version, version]));
        assert_eq!(value["tools"], 11);
        // The conversation is in the store, seen by the CLI too.
        let history = world
            .acc(&[
                "sync",
                "--scope",
                "history",
                "--message",
                value["requestId"].as_str().expect("id"),
            ])
            .ok_json();
        assert_eq!(history["items"][0]["receipts"][0]["state"], "acknowledged");
    }
}

#[test]
fn python_sdk_including_a_stateless_2026_exchange() {
    let clients = clients();
    let world = World::new();
    let mut command = world.command_path(&clients.python);
    command
        .arg(repo_root().join("tests/clients/py_roundtrip.py"))
        .arg(acc_tests::bin("acc-mcp"))
        .arg(&world.dir);
    let value = report(&world.run(command, "python sdk client"));
    assert_eq!(value["modern"], "2026-07-28");
    assert_eq!(value["legacy"], "2025-11-25");
}

#[test]
fn claude_code_reports_acc_mcp_connected() {
    let clients = clients();
    let world = World::new();
    let home = world.temp.path().join("claude-home");
    std::fs::create_dir_all(&home).expect("home");
    let claude = |args: &[&str]| {
        let mut command = world.command_path(&clients.claude);
        command
            .args(args)
            .env("HOME", &home)
            .env("TMPDIR", world.tmp())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("ANTHROPIC_API_KEY");
        world.run(command, "claude")
    };
    let acc_mcp = acc_tests::bin("acc-mcp");
    let participant = "ACC_MCP_PARTICIPANT=claude-agent".to_string();
    let workspace = format!("ACC_MCP_WORKSPACE={}", world.dir.display());
    let data = format!("ACC_DATA_HOME={}", world.data_home.display());
    let added = claude(&[
        "mcp",
        "add",
        "acc",
        "-e",
        &participant,
        "-e",
        &workspace,
        "-e",
        &data,
        "--",
        acc_mcp.to_str().expect("utf8"),
    ]);
    assert_eq!(added.code, 0, "{added:?}");
    let listed = claude(&["mcp", "list"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    let line = listed
        .stdout
        .lines()
        .find(|l| l.starts_with("acc:"))
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert!(line.contains("Connected"), "{line}");
    assert!(
        !world.data_home.join("acc").join("workspaces").exists(),
        "the handshake created nothing"
    );
}

#[test]
fn codex_app_server_lists_the_tools_and_calls_acc_status() {
    let clients = clients();
    let world = World::new();
    let codex_home = world.temp.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).expect("codex home");
    let config = format!(
        "[mcp_servers.acc]\ncommand = {}\nenv = {{ ACC_MCP_PARTICIPANT = \"codex-agent\", ACC_MCP_WORKSPACE = {}, ACC_DATA_HOME = {} }}\n",
        toml_string(&acc_tests::bin("acc-mcp").to_string_lossy()),
        toml_string(&world.dir.to_string_lossy()),
        toml_string(&world.data_home.to_string_lossy()),
    );
    std::fs::write(codex_home.join("config.toml"), config).expect("config");
    let mut command = Command::new(&clients.codex);
    command
        .arg("app-server")
        .current_dir(&world.dir)
        .env("CODEX_HOME", &codex_home)
        .env("HOME", world.temp.path())
        .env_remove("OPENAI_API_KEY");
    let mut codex = JsonRpcChild::spawn(command);
    let init = codex.request(1, "initialize", json!({ "clientInfo": { "name": "acc-tests", "version": "1" }, "capabilities": { "experimentalApi": true } }));
    assert!(init.get("result").is_some(), "{init}");
    codex.send_line(r#"{"jsonrpc":"2.0","method":"initialized"}"#);

    let listed = codex.request(2, "mcpServerStatus/list", json!({}));
    let servers = listed["result"]["data"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"));
    let acc = servers
        .iter()
        .find(|s| s["name"] == "acc")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(acc["serverInfo"]["name"], "acc-mcp");
    let mut names: Vec<&str> = acc["tools"]
        .as_object()
        .expect("tools")
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    let mut expected = acc_mcp::tools::names();
    expected.sort_unstable();
    assert_eq!(names, expected);

    let thread = codex.request(3, "thread/start", json!({ "cwd": world.dir }));
    let thread_id = thread["result"]["thread"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{thread}"))
        .to_string();
    let call = codex.request(
        4,
        "mcpServer/tool/call",
        json!({ "threadId": thread_id, "server": "acc", "tool": "acc_status", "arguments": {} }),
    );
    let structured = &call["result"]["structuredContent"];
    assert_eq!(
        structured["sessions"][0]["participantId"], "codex-agent",
        "{call}"
    );
    let text: Value =
        serde_json::from_str(call["result"]["content"][0]["text"].as_str().expect("text"))
            .expect("json text");
    assert_eq!(&text, structured);
    drop(codex);
    let status = world.status();
    assert_eq!(status["participants"][0]["participantId"], "codex-agent");
}

fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn acc_install_registers_acc_mcp_where_the_user_asks() {
    let clients = clients();
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join(".claude.json"), "{\"numStartups\": 1}\n").expect("claude state");
    let home_arg = home.to_str().expect("utf8");
    let plan = world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home_arg,
            "--mcp",
            "claude-main",
            "--dry-run",
        ])
        .ok_json();
    assert!(
        plan["steps"].to_string().contains("register acc-mcp"),
        "{plan}"
    );
    world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home_arg,
            "--mcp",
            "not valid!",
        ])
        .err(2, "invalid_arguments");
    world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home_arg,
            "--mcp",
            "claude-main",
        ])
        .ok_json();
    let mut command = world.command_path(&clients.claude);
    command
        .args(["mcp", "list"])
        .env("HOME", &home)
        .env("TMPDIR", world.tmp())
        .env_remove("CLAUDE_CONFIG_DIR");
    let listed = world.run(command, "claude mcp list");
    let line = listed
        .stdout
        .lines()
        .find(|l| l.starts_with("acc:"))
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert!(
        line.contains("acc-mcp") && line.contains("Connected"),
        "{line}"
    );
    // Listing fires Claude Code's SessionEnd hook (acc's, installed above) for a session that
    // never had a turn: the log only grows, so its session is closed, saying so, and no open
    // session is left in the room.
    let events = world.acc(&["sync", "--limit", "500"]).ok_json();
    let events = events["events"].as_array().expect("events").clone();
    let opened: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "session.opened")
        .collect();
    for open in &opened {
        assert!(
            events.iter().any(|e| e["type"] == "session.closed"
                && e["sessionId"] == open["sessionId"]
                && e["data"]["reason"] == "client_session_end_without_turn"),
            "the listing's session closed: {events:?}"
        );
    }
    let status = world.status();
    assert!(
        !status["sessions"].to_string().contains("claude-code-"),
        "no open session is left: {status}"
    );
    world
        .acc(&["uninstall", "--client", "claude-code", "--home", home_arg])
        .ok_json();
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join(".claude.json")).expect("read"))
            .expect("json");
    assert!(
        state.pointer("/mcpServers/acc").is_none(),
        "the registration is gone: {state}"
    );
    assert_eq!(state["numStartups"], 1, "the client's own state stays");
}

/// The doctor check named `name`, from a report.
fn doctor_check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report}"))
}

#[test]
fn doctor_checks_every_acc_mcp_registration_the_clients_will_load() {
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(home.join(".codex")).expect("home");
    let home_arg = home.to_str().expect("utf8");
    let doctor = || {
        let mut command = world.command("acc");
        command
            .args(["--json", "doctor", "--home", home_arg])
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME");
        world.run(command, "acc doctor").ok_json()
    };
    // Nothing registered: said, with the command that registers it.
    let report = doctor();
    let none = doctor_check(&report, "mcp claude-code");
    assert_eq!(none["status"], "warn");
    assert_eq!(none["fix"], "acc install --client claude-code --mcp");

    // This build's acc-mcp in the user scope, a missing command in the project's .mcp.json,
    // and, in Codex, a server whose schemas Claude Code would drop.
    let impostor = world.temp.path().join("old-acc-mcp.py");
    std::fs::write(
        &impostor,
        r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("id") == 1:
        print(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "acc-mcp", "version": "0.1.0"}}}), flush=True)
    elif msg.get("id") == 2:
        schema = {"type": "object", "additionalProperties": False, "properties": {}, "oneOf": [{"required": ["a"]}]}
        print(json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "acc_claim", "inputSchema": schema}]}}), flush=True)
"#,
    )
    .expect("impostor");
    let acc_mcp = acc_tests::bin("acc-mcp");
    // This build's acc-mcp copied alone into a folder: no acc beside it for its adapters.
    let lonely = world.temp.path().join("lonely");
    std::fs::create_dir_all(&lonely).expect("folder");
    std::fs::copy(&acc_mcp, lonely.join("acc-mcp")).expect("copy");
    std::fs::write(
        home.join(".claude.json"),
        json!({ "numStartups": 3, "mcpServers": {
            "acc": { "type": "stdio", "command": acc_mcp, "args": [], "env": {} },
            "lonely": { "type": "stdio", "command": lonely.join("acc-mcp"), "args": [], "env": {} },
        } })
        .to_string(),
    )
    .expect("claude state");
    std::fs::write(
        world.dir.join(".mcp.json"),
        json!({ "mcpServers": { "coordination": { "command": "/nowhere/acc-mcp" } } }).to_string(),
    )
    .expect("project mcp");
    std::fs::write(
        home.join(".codex/config.toml"),
        format!(
            "[mcp_servers.acc]\ncommand = \"python3\"\nargs = [{}]\n",
            toml_string(&impostor.to_string_lossy())
        ),
    )
    .expect("codex config");
    let report = doctor();
    let ours = doctor_check(&report, "mcp claude-code `acc`");
    assert_eq!(ours["status"], "ok", "{ours}");
    assert!(
        ours["detail"]
            .as_str()
            .is_some_and(|d| d.contains("offers 11 tools")),
        "{ours}"
    );
    let alone = doctor_check(&report, "mcp claude-code `lonely`");
    assert_eq!(alone["status"], "warn", "{alone}");
    assert!(
        alone["detail"]
            .as_str()
            .is_some_and(|d| d.contains("offers 11 tools")
                && d.contains(&format!(
                    "{} is missing beside acc-mcp",
                    lonely.join("acc").display()
                ))),
        "{alone}"
    );
    assert!(
        alone["fix"]
            .as_str()
            .is_some_and(|f| f.contains("scripts/install.sh")),
        "{alone}"
    );
    let missing = doctor_check(&report, "mcp claude-code `coordination`");
    assert_eq!(missing["status"], "error", "{missing}");
    assert!(
        missing["detail"]
            .as_str()
            .is_some_and(|d| d.contains("does not exist") && d.contains(".mcp.json (project)")),
        "{missing}"
    );
    let codex = doctor_check(&report, "mcp codex `acc`");
    assert_eq!(codex["status"], "error", "{codex}");
    let detail = codex["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("the input schema of acc_claim has `oneOf` at the root")
            && detail.contains("not this build's acc-mcp"),
        "{codex}"
    );
    assert_eq!(codex["fix"], "acc install --client codex --mcp");
    assert_eq!(report["ok"], false, "an error makes the report fail");
}

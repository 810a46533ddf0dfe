//! `acc-mcp` as a process: its command-line contract, stdio purity, end of input, golden files.

use std::process::Stdio;
use std::time::Duration;

use acc_tests::{JsonRpcChild, World};
use serde_json::{Value, json};

fn server(world: &World, participant: &str) -> JsonRpcChild {
    let mut command = world.command("acc-mcp");
    command
        .env("ACC_MCP_PARTICIPANT", participant)
        .env("ACC_MCP_WORKSPACE", &world.dir);
    JsonRpcChild::spawn(command)
}

fn modern_meta() -> Value {
    json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} })
}

#[test]
fn any_argument_is_refused_with_the_configuration_variables_named() {
    let world = World::new();
    // (`--version` and `--help` alone answer: see cli_contract.rs.)
    for args in [
        vec!["serve"],
        vec!["--participant", "x"],
        vec!["--help", "--version"],
    ] {
        let mut command = world.command("acc-mcp");
        command
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = acc_tests::wait_with_deadline(
            command.spawn().expect("spawn"),
            Duration::from_secs(20),
            "acc-mcp",
        );
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "stdout stays empty");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("ACC_MCP_PARTICIPANT") && stderr.contains("ACC_MCP_WORKSPACE"),
            "{stderr}"
        );
    }
    let mut command = world.command("acc-mcp");
    command
        .env("ACC_MCP_PARTICIPANT", "not valid!")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = acc_tests::wait_with_deadline(
        command.spawn().expect("spawn"),
        Duration::from_secs(20),
        "acc-mcp",
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("ACC_MCP_PARTICIPANT"));
}

#[test]
fn a_session_over_real_pipes_exits_zero_at_end_of_input() {
    let world = World::new();
    let mut mcp = server(&world, "alice");
    let init = mcp.request(1, "initialize", json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    mcp.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    mcp.send_line("this is not json");
    let parse = mcp.wait_for(|v| v["error"]["code"] == -32700, Duration::from_secs(20));
    assert_eq!(parse["id"], Value::Null);
    let claim = mcp.request(2, "tools/call", json!({ "name": "acc_claim", "arguments": { "action": "acquire", "resource": "file:a.rs" } }));
    assert_eq!(
        claim["result"]["structuredContent"]["resource"],
        "file:a.rs"
    );
    let status = world.status();
    assert_eq!(status["sessions"][0]["participantId"], "alice");
    assert_eq!(status["sessions"][0]["harness"], "mcp");
    assert!(
        status["sessions"][0]["pid"].is_i64(),
        "the server records its own pid for presence"
    );
    let seen = mcp.seen.clone();
    let exit = mcp.finish(Duration::from_secs(10));
    assert_eq!(exit.code(), Some(0));
    for line in seen {
        let value: Value = serde_json::from_str(&line).expect("stdout carries json-rpc only");
        assert_eq!(value["jsonrpc"], "2.0");
    }
    // The server is gone, so its session (pid dead) is offline, but its claim stays.
    let status = world.status();
    assert_eq!(status["sessions"][0]["presence"], "offline");
    assert_eq!(status["claims"].as_array().map(Vec::len), Some(1));
}

fn golden(name: &str, actual: &Value) {
    acc_tests::golden(&format!("mcp/{name}"), actual);
}

#[test]
fn published_surface_matches_the_golden_files() {
    let world = World::new();
    let mut mcp = server(&world, "alice");
    let init = mcp.request(1, "initialize", json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }));
    golden("initialize.json", &init["result"]);
    let tools = mcp.request(2, "tools/list", json!({}));
    golden("tools.json", &tools["result"]);
    let discover = mcp.request(3, "server/discover", json!({ "_meta": modern_meta() }));
    golden("discover.json", &discover["result"]);
    let resources = mcp.request(4, "resources/list", json!({}));
    golden("resources.json", &resources["result"]);
    // Every input schema is closed.
    for tool in tools["result"]["tools"].as_array().expect("tools") {
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
        assert_eq!(
            tool["inputSchema"]["additionalProperties"], false,
            "{}",
            tool["name"]
        );
        assert!(
            tool.get("outputSchema").is_none(),
            "no output schemas: array results exist"
        );
    }
    assert_eq!(mcp.finish(Duration::from_secs(10)).code(), Some(0));
}

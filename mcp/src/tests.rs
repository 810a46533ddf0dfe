//! In-process tests of the MCP server: every request goes through `Server::handle_line`, the
//! framing through `serve` over in-memory pipes.

use std::path::PathBuf;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use acc_core::clock::FixedClock;

const NOW: i64 = 1_795_000_000_000;

struct World {
    _temp: tempfile::TempDir,
    dir: PathBuf,
    data: PathBuf,
    clock: FixedClock,
}

impl World {
    fn new() -> Self {
        let temp = tempfile::tempdir().expect("tempdir");
        let dir = temp.path().join("project");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let data = temp.path().join("data").join("acc");
        Self {
            dir,
            data,
            clock: FixedClock::new(NOW),
            _temp: temp,
        }
    }

    fn server(&self, participant: &str) -> Server {
        Server::new(Config {
            identity: Identity::Configured(participant.into()),
            workspace_dir: self.dir.clone(),
            data_dir: Some(self.data.clone()),
            clock: Arc::new(self.clock.clone()),
            adapters: acc_delivery::plugins::Loading::InProcess,
            consent: Arc::new(acc_delivery::NoRecords),
        })
    }

    fn has_store(&self) -> bool {
        self.data.join("workspaces").exists()
    }
}

fn request(server: &mut Server, method: &str, params: Value) -> Value {
    let line = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
    server.handle_line(&line).expect("a response")
}

fn result(server: &mut Server, method: &str, params: Value) -> Value {
    let response = request(server, method, params);
    assert!(response.get("error").is_none(), "{response}");
    response["result"].clone()
}

fn error_code(server: &mut Server, method: &str, params: Value) -> i64 {
    let response = request(server, method, params);
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"))
}

fn call(server: &mut Server, tool: &str, args: Value) -> Value {
    result(
        server,
        "tools/call",
        json!({ "name": tool, "arguments": args }),
    )
}

fn ok(server: &mut Server, tool: &str, args: Value) -> Value {
    let result = call(server, tool, args);
    assert_ne!(result["isError"], true, "{tool}: {result}");
    result["structuredContent"].clone()
}

fn refused(server: &mut Server, tool: &str, args: Value) -> String {
    let result = call(server, tool, args);
    assert_eq!(result["isError"], true, "{tool} should fail: {result}");
    let text: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().expect("text")).expect("json");
    assert_eq!(
        text, result["structuredContent"],
        "text and structured content agree"
    );
    result["structuredContent"]["error"]["code"]
        .as_str()
        .expect("code")
        .to_string()
}

fn modern(extra: Value) -> Value {
    let mut params = json!({ "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    params
}

#[test]
fn initialize_negotiates_and_creates_nothing() {
    let world = World::new();
    let mut server = world.server("alice");
    for (offered, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
        ("", "2025-11-25"),
    ] {
        let init = result(
            &mut server,
            "initialize",
            json!({ "protocolVersion": offered, "capabilities": {}, "clientInfo": { "name": "x", "version": "1" } }),
        );
        assert_eq!(init["protocolVersion"], answered);
        assert_eq!(
            init["capabilities"],
            json!({ "tools": {}, "resources": {} })
        );
        assert_eq!(init["serverInfo"]["name"], "acc-mcp");
    }
    assert_eq!(
        server.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        None
    );
    assert_eq!(result(&mut server, "ping", json!({})), json!({}));
    assert_eq!(
        result(&mut server, "tools/list", json!({}))["tools"]
            .as_array()
            .map(Vec::len),
        Some(11)
    );
    result(&mut server, "resources/list", json!({}));
    assert!(
        !world.has_store(),
        "initialisation and listing create nothing"
    );
}

#[test]
fn json_rpc_errors_and_the_server_keeps_serving() {
    let world = World::new();
    let mut server = world.server("alice");
    let answer = |server: &mut Server, line: &str| server.handle_line(line).expect("answered");
    assert_eq!(answer(&mut server, "{not json")["error"]["code"], -32700);
    assert_eq!(answer(&mut server, "{not json")["id"], Value::Null);
    assert_eq!(
        answer(&mut server, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)["error"]["code"],
        -32600
    );
    let invalid = answer(&mut server, r#"{"jsonrpc":"2.0","id":"k","method":3}"#);
    assert_eq!(
        (invalid["id"].clone(), invalid["error"]["code"].clone()),
        (json!("k"), json!(-32600))
    );
    let invalid = answer(&mut server, r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#);
    assert_eq!(
        (invalid["id"].clone(), invalid["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    assert_eq!(error_code(&mut server, "no/such/method", json!({})), -32601);
    assert_eq!(
        error_code(&mut server, "tools/call", json!({ "name": "acc_teleport" })),
        -32602
    );
    assert_eq!(error_code(&mut server, "tools/call", json!({})), -32602);
    assert_eq!(
        error_code(
            &mut server,
            "tools/call",
            json!({ "name": "acc_status", "arguments": [1] })
        ),
        -32602
    );
    assert_eq!(
        error_code(
            &mut server,
            "resources/read",
            json!({ "uri": "acc://nothing" })
        ),
        -32002
    );
    assert_eq!(
        server.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#),
        None
    );
    assert_eq!(server.handle_line(""), None);
    assert_eq!(result(&mut server, "ping", json!({})), json!({}));
}

#[test]
fn the_stateless_era_is_decided_per_request() {
    let world = World::new();
    let mut server = world.server("alice");
    let discover = result(&mut server, "server/discover", modern(json!({})));
    assert_eq!(
        discover["supportedVersions"],
        json!(["2025-06-18", "2025-11-25", "2026-07-28"])
    );
    assert_eq!(discover["resultType"], "complete");
    assert_eq!(discover["cacheScope"], "public");
    assert!(discover["ttlMs"].is_u64());
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "acc-mcp"
    );
    assert_eq!(
        discover["capabilities"],
        json!({ "tools": {}, "resources": {} })
    );

    let tools = result(&mut server, "tools/list", modern(json!({})));
    assert_eq!(tools["resultType"], "complete");
    assert!(tools["ttlMs"].is_u64() && tools["cacheScope"] == "public");
    let legacy_tools = result(&mut server, "tools/list", json!({}));
    assert!(
        legacy_tools.get("resultType").is_none(),
        "the same process answers 2025 requests as 2025"
    );
    assert_eq!(legacy_tools["tools"], tools["tools"]);

    // Envelope errors.
    let without_version = json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": {} } });
    assert_eq!(
        error_code(&mut server, "server/discover", without_version),
        -32602
    );
    assert_eq!(
        error_code(&mut server, "server/discover", json!({})),
        -32602
    );
    let no_caps = request(
        &mut server,
        "tools/list",
        json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }),
    );
    assert_eq!(no_caps["error"]["code"], -32602);
    assert!(
        no_caps["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("clientCapabilities")
    );
    let unsupported = request(
        &mut server,
        "tools/list",
        json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2030-01-01", "io.modelcontextprotocol/clientCapabilities": {} } }),
    );
    assert_eq!(unsupported["error"]["code"], -32022);
    assert_eq!(
        unsupported["error"]["data"],
        json!({ "supported": ["2025-06-18", "2025-11-25", "2026-07-28"], "requested": "2030-01-01" })
    );

    // Results of calls: resultType and identity, no cache hints; raw arrays in structuredContent.
    let status = result(
        &mut server,
        "tools/call",
        modern(json!({ "name": "acc_status", "arguments": {} })),
    );
    assert_eq!(status["resultType"], "complete");
    assert!(status.get("ttlMs").is_none());
    assert_eq!(
        status["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "acc-mcp"
    );
    let read = result(
        &mut server,
        "resources/read",
        modern(json!({ "uri": "acc://roster" })),
    );
    assert_eq!(
        (read["ttlMs"].clone(), read["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
    assert_eq!(
        error_code(
            &mut server,
            "resources/read",
            modern(json!({ "uri": "acc://nothing" }))
        ),
        -32602
    );
}

#[test]
fn arguments_are_validated_before_any_session_exists() {
    let world = World::new();
    let mut server = world.server("alice");
    for (tool, args) in [
        (
            "acc_claim",
            json!({ "action": "acquire", "resource": "file:src/" }),
        ),
        (
            "acc_claim",
            json!({ "action": "acquire", "resource": "file:a", "resources": ["file:b"] }),
        ),
        (
            "acc_claim",
            json!({ "action": "renew", "claimId": "claim_x", "mode": "shared" }),
        ),
        (
            "acc_claim",
            json!({ "action": "acquire", "resource": "file:a", "leaseSeconds": 0 }),
        ),
        ("acc_release", json!({})),
        ("acc_release", json!({ "all": true, "claimId": "claim_x" })),
        ("acc_release", json!({ "all": false })),
        (
            "acc_release",
            json!({ "resources": ["file:a", "file:./a"] }),
        ),
        ("acc_work", json!({ "summary": "x" })),
        ("acc_work", json!({ "clear": true, "summary": "x" })),
        ("acc_work", json!({ "summary": "x", "mode": "sprint" })),
        ("acc_inbox", json!({ "messageId": "message_x", "limit": 3 })),
        ("acc_inbox", json!({ "limit": 0 })),
        ("acc_sync", json!({ "kind": "note" })),
        (
            "acc_sync",
            json!({ "scope": "history", "messageId": "message_x", "cursor": "c" }),
        ),
        ("acc_sync", json!({ "scope": "history", "current": true })),
        ("acc_sync", json!({ "cursor": "12" })),
        ("acc_message", json!({ "to": [], "subject": "s" })),
        // U+0000 is refused on both backends (PostgreSQL's text holds none).
        (
            "acc_message",
            json!({ "to": [], "subject": "s", "body": "a\u{0}b" }),
        ),
        (
            "acc_message",
            json!({ "to": [], "subject": "s\u{0}", "body": "b" }),
        ),
        (
            "acc_message",
            json!({ "to": [], "subject": "s", "body": "b", "kind": "answer" }),
        ),
        (
            "acc_message",
            json!({ "to": [], "subject": "s", "body": "b", "kind": "question" }),
        ),
        (
            "acc_message",
            json!({ "to": ["b"], "subject": "s", "body": "b", "supersedes": ["message_a"] }),
        ),
        (
            "acc_message",
            json!({ "to": ["b"], "subject": "s", "body": "b", "kind": "decision", "supersedes": ["message_a"], "withdraws": ["message_b"] }),
        ),
        ("acc_request", json!({ "toParticipantId": "b" })),
        (
            "acc_reply",
            json!({ "messageId": "not-an-id", "body": "x" }),
        ),
        ("acc_ack", json!({ "messageId": "message_x", "extra": 1 })),
        ("acc_finish", json!({ "goal": "x", "status": "done" })),
        ("acc_status", json!({ "verbose": true })),
    ] {
        let code = refused(&mut server, tool, args.clone());
        assert!(
            code == "invalid_arguments" || code == "unmatchable_resource",
            "{tool} {args}: {code}"
        );
    }
    assert!(!world.has_store(), "no refused call resolved a session");
}

#[test]
fn the_first_call_resolves_a_stable_session_that_a_restart_resumes() {
    let world = World::new();
    let mut first = world.server("alice");
    let status = ok(&mut first, "acc_status", json!({}));
    let session = status["sessions"][0].clone();
    assert_eq!(session["participantId"], "alice");
    assert_eq!(session["harness"], "mcp");
    assert_eq!(session["lifecycle"], "manual");
    assert_eq!(session["enforcement"], "advisory");
    assert_eq!(session["generation"], 1);
    let claim = ok(
        &mut first,
        "acc_claim",
        json!({ "action": "acquire", "resource": "file:a.rs" }),
    );
    assert_eq!(claim["ownerSessionId"], session["sessionId"]);

    let mut restarted = world.server("alice");
    let status = ok(&mut restarted, "acc_status", json!({}));
    assert_eq!(status["sessions"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        status["sessions"][0]["sessionId"], session["sessionId"],
        "same session id"
    );
    assert_eq!(status["sessions"][0]["generation"], 2, "a new generation");
    // The first server's generation is now stale; it reopens transparently and carries on.
    let released = ok(
        &mut first,
        "acc_release",
        json!({ "claimId": claim["claimId"] }),
    );
    assert_eq!(released, json!({ "released": claim["claimId"] }));
}

#[test]
fn result_shapes_follow_the_input_shapes() {
    let world = World::new();
    let mut server = world.server("alice");
    let scalar = ok(
        &mut server,
        "acc_claim",
        json!({ "action": "acquire", "resource": "file:a" }),
    );
    assert_eq!(scalar["resource"], "file:a");
    let batch = ok(
        &mut server,
        "acc_claim",
        json!({ "action": "acquire", "resources": ["file:b"] }),
    );
    assert_eq!(batch["claims"][0]["resource"], "file:b");
    let renewed = ok(
        &mut server,
        "acc_claim",
        json!({ "action": "renew", "claimId": scalar["claimId"], "leaseSeconds": 60 }),
    );
    assert_eq!(renewed["leaseSeconds"], 60);
    assert_eq!(
        ok(&mut server, "acc_release", json!({ "resource": "file:a" })),
        json!({ "released": scalar["claimId"] })
    );
    assert_eq!(
        ok(
            &mut server,
            "acc_release",
            json!({ "claimIds": [batch["claims"][0]["claimId"]] })
        ),
        json!({ "released": [batch["claims"][0]["claimId"]] })
    );
    assert_eq!(
        ok(&mut server, "acc_release", json!({ "all": true })),
        json!({ "released": [] })
    );
    assert_eq!(
        refused(
            &mut server,
            "acc_release",
            json!({ "claimId": scalar["claimId"] })
        ),
        "claim_not_found"
    );
    let intent = ok(
        &mut server,
        "acc_work",
        json!({ "summary": "x", "mode": "edit", "resourceHints": ["file:./a"] }),
    );
    assert_eq!(intent["intent"]["resourceHints"], json!(["file:a"]));
    assert_eq!(
        ok(&mut server, "acc_work", json!({ "clear": true })),
        json!({ "intent": null, "cleared": true })
    );
    let delta = ok(&mut server, "acc_sync", json!({}));
    assert_eq!(delta["scope"], "delta");
    let history = ok(&mut server, "acc_sync", json!({ "scope": "history" }));
    assert_eq!(
        (history["scope"].clone(), history["view"].clone()),
        (json!("history"), json!("summary"))
    );
}

#[test]
fn messages_between_two_servers_and_array_results_per_era() {
    let world = World::new();
    let mut alice = world.server("alice");
    let mut bob = world.server("bob");
    ok(&mut bob, "acc_status", json!({}));
    let sent = ok(
        &mut alice,
        "acc_message",
        json!({ "to": ["bob"], "kind": "question", "subject": "q", "body": "why?" }),
    );
    let id = sent["message"]["messageId"].clone();
    assert_eq!(
        sent["delivery"],
        json!([{ "recipientParticipantId": "bob", "outcome": "queued", "transport": "durable" }])
    );
    // acc://inbox is the same page as acc_inbox {}; reading it changes no receipt.
    let resource = result(&mut bob, "resources/read", json!({ "uri": "acc://inbox" }));
    let page: Value = serde_json::from_str(resource["contents"][0]["text"].as_str().expect("text"))
        .expect("json");
    assert_eq!(page, ok(&mut bob, "acc_inbox", json!({})));
    assert_eq!(page["items"][0]["receipt"]["state"], "queued");
    let legacy = call(&mut bob, "acc_inbox", json!({ "messageId": id }));
    let text: Value =
        serde_json::from_str(legacy["content"][0]["text"].as_str().expect("text")).expect("json");
    assert!(text.is_array(), "2025: the array result is JSON text");
    assert_eq!(
        legacy["structuredContent"],
        json!({ "items": text }),
        "2025: structuredContent must be an object, so it holds the array as items"
    );
    let modern_read = result(
        &mut bob,
        "tools/call",
        modern(json!({ "name": "acc_inbox", "arguments": { "messageId": id } })),
    );
    assert!(
        modern_read["structuredContent"].is_array(),
        "2026: raw arrays in structuredContent"
    );
    assert_eq!(
        modern_read["structuredContent"][0]["receipt"]["state"],
        "retrieved"
    );
    assert_eq!(
        refused(&mut bob, "acc_ack", json!({ "messageId": id })),
        "reply_required"
    );
    let reply = ok(
        &mut bob,
        "acc_reply",
        json!({ "messageId": id, "body": "because" }),
    );
    assert_eq!(reply["receipt"]["state"], "acknowledged");
    assert_eq!(reply["message"]["threadId"], id);
    let handoff = ok(
        &mut alice,
        "acc_finish",
        json!({ "goal": "ask", "toParticipantId": "bob", "completed": ["asked"] }),
    );
    assert_eq!(handoff["message"]["handoff"]["status"], "complete");
    let conflict = call(
        &mut alice,
        "acc_message",
        json!({ "to": ["nobody"], "subject": "s", "body": "b" }),
    );
    assert_eq!(
        conflict["structuredContent"]["error"]["code"],
        "unknown_participant"
    );
    assert!(conflict["structuredContent"]["error"]["details"]["present"].is_array());
}

#[test]
fn one_mcp_session_makes_guarded_claims_advisory() {
    let world = World::new();
    std::fs::write(
        world.dir.join("acc.workspace.json"),
        r#"{"schemaVersion":1,"workspaceId":"guarded-room","policy":{"claimMode":"guarded"}}"#,
    )
    .expect("config");
    let mut server = world.server("alice");
    let status = ok(&mut server, "acc_status", json!({}));
    assert_eq!(status["workspace"]["claimPolicy"], "guarded");
    assert_eq!(status["workspace"]["protection"], "advisory");
}

#[test]
fn snapshot_and_roster_do_not_resolve_a_session() {
    let world = World::new();
    let mut alice = world.server("alice");
    ok(&mut alice, "acc_status", json!({}));
    let mut watcher = world.server("watcher");
    for uri in ["acc://snapshot", "acc://roster"] {
        let read = result(&mut watcher, "resources/read", json!({ "uri": uri }));
        let body: Value = serde_json::from_str(read["contents"][0]["text"].as_str().expect("text"))
            .expect("json");
        let participants: Vec<&str> = body["participants"]
            .as_array()
            .expect("participants")
            .iter()
            .filter_map(|p| p["participantId"].as_str())
            .collect();
        assert_eq!(
            participants,
            vec!["alice"],
            "{uri}: the watcher did not join"
        );
    }
}

#[test]
fn serve_frames_lines_and_exits_at_end_of_input() {
    let world = World::new();
    let config = Config {
        identity: Identity::Configured("alice".into()),
        workspace_dir: world.dir.clone(),
        data_dir: Some(world.data.clone()),
        clock: Arc::new(world.clock.clone()),
        adapters: acc_delivery::plugins::Loading::InProcess,
        consent: Arc::new(acc_delivery::NoRecords),
    };
    let mut input = String::new();
    input.push_str("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    input.push_str(&"x".repeat(MAX_LINE_BYTES + 10));
    input.push('\n');
    input.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    input.push_str("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    let mut output = Vec::new();
    serve_blocking(
        std::io::Cursor::new(input.into_bytes()),
        &mut output,
        config,
    )
    .expect("serve ends cleanly");
    let lines: Vec<Value> = String::from_utf8(output)
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[1]["error"]["code"], -32700);
    assert_eq!(lines[2]["id"], 2);
}

fn well_formed(response: &Value, expected_id: &Value) {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    let has_result = response.get("result").is_some();
    let has_error = response.get("error").is_some();
    assert!(
        has_result != has_error,
        "exactly one of result and error: {response}"
    );
    if has_error {
        assert!(
            response["error"]["code"].is_i64() && response["error"]["message"].is_string(),
            "{response}"
        );
    }
    assert!(
        response["id"] == *expected_id || response["id"].is_null(),
        "id {expected_id} vs {response}"
    );
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[ -~\\PC]{0,20}".prop_map(Value::from),
        prop::sample::select(vec![
            "file:a.rs",
            "file:src/**",
            "message_AAAAAAAAAAAAAAAAAAAAAA",
            "acquire",
            "history",
            "bob",
            ""
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "action",
                    "resource",
                    "resources",
                    "claimId",
                    "all",
                    "to",
                    "subject",
                    "body",
                    "kind",
                    "messageId",
                    "cursor",
                    "limit",
                    "scope",
                    "summary",
                    "mode",
                    "clear",
                    "goal",
                    "x",
                ]),
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn arbitrary_line() -> impl Strategy<Value = (String, Option<Value>)> {
    let tool_call = (
        prop::sample::select(tools::names()),
        arbitrary_json(),
        any::<bool>(),
        any::<u32>(),
    )
        .prop_map(|(tool, args, modern_era, id)| {
            let mut params = json!({ "name": tool, "arguments": args });
            if modern_era {
                params = modern(params);
            }
            let line =
                json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
                    .to_string();
            (line, Some(json!(id)))
        });
    let method = (
        prop::sample::select(vec![
            "initialize",
            "ping",
            "tools/list",
            "resources/list",
            "resources/read",
            "server/discover",
            "x/y",
        ]),
        arbitrary_json(),
        any::<u16>(),
    )
        .prop_map(|(method, params, id)| {
            let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
                .to_string();
            (line, Some(json!(id)))
        });
    let garbage = "[ -~]{0,60}".prop_map(|line| (line, None));
    let value = arbitrary_json().prop_map(|v| (v.to_string(), None));
    prop_oneof![4 => tool_call, 2 => method, 1 => garbage, 1 => value]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Hostile input never crashes the server or corrupts the store, and every request gets
    /// exactly one well-formed answer.
    #[test]
    fn every_request_gets_exactly_one_well_formed_answer(lines in prop::collection::vec(arbitrary_line(), 1..25)) {
        let world = World::new();
        let mut server = world.server("fuzz");
        for (line, id) in &lines {
            let answer = server.handle_line(line);
            match (id, &answer) {
                (Some(id), Some(response)) => well_formed(response, id),
                (Some(id), None) => panic!("request {id} got no answer: {line}"),
                (None, Some(response)) => well_formed(response, &response["id"].clone()),
                (None, None) => {}
            }
        }
        if world.has_store() {
            let mut store = acc_store::Store::open_existing(&world.data, &server.core().expect("core").workspace.id)
                .expect("the store opens")
                .expect("exists");
            prop_assert_eq!(store.integrity_check().expect("check"), "ok");
        }
        let _ = server.handle_line(r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#).expect("still serving");
    }
}

#[test]
fn every_input_schema_is_a_closed_object_without_combinators() {
    let listed = crate::tools::list();
    assert_eq!(listed.len(), 11);
    for tool in &listed {
        let name = tool["name"].as_str().expect("name");
        let schema = &tool["inputSchema"];
        if let Err(problem) = crate::schema::check_publishable(schema) {
            panic!("{name}: {problem}");
        }
    }
}

#[test]
fn the_tool_list_fits_in_eight_kilobytes() {
    let size = json!({ "tools": crate::tools::list() }).to_string().len();
    assert!(size <= 8 * 1024, "tools/list is {size} bytes");
}

#[test]
fn each_rule_between_fields_is_refused_by_name_and_writes_nothing() {
    let world = World::new();
    let mut server = world.server("alice");
    for (tool, args, rule) in [
        (
            "acc_sync",
            json!({ "messageId": "message_x" }),
            "need scope history",
        ),
        (
            "acc_sync",
            json!({ "scope": "delta", "current": false }),
            "need scope history",
        ),
        (
            "acc_sync",
            json!({ "scope": "history", "messageId": "message_x", "limit": 2 }),
            "an exact read (messageId) takes no cursor, limit, kind or current",
        ),
        (
            "acc_sync",
            json!({ "scope": "history", "kind": "note", "current": true }),
            "current needs kind decision",
        ),
        (
            "acc_work",
            json!({ "mode": "edit" }),
            "give summary and mode, or clear: true alone",
        ),
        (
            "acc_work",
            json!({}),
            "give summary and mode, or clear: true alone",
        ),
        (
            "acc_work",
            json!({ "clear": true, "mode": "edit" }),
            "clear takes no other field",
        ),
        ("acc_work", json!({ "clear": false }), "clear must be true"),
        (
            "acc_claim",
            json!({ "action": "acquire" }),
            "acquire takes exactly one of resource or resources",
        ),
        (
            "acc_claim",
            json!({ "action": "acquire", "resource": "file:a", "resources": ["file:b"] }),
            "acquire takes exactly one of resource or resources",
        ),
        (
            "acc_claim",
            json!({ "action": "acquire", "resource": "file:a", "claimId": "claim_x" }),
            "and no claimId",
        ),
        (
            "acc_claim",
            json!({ "action": "renew", "claimId": "claim_x", "reason": "r" }),
            "renew takes claimId and optionally leaseSeconds only",
        ),
        (
            "acc_claim",
            json!({ "action": "renew" }),
            "renew takes claimId and optionally leaseSeconds only",
        ),
        (
            "acc_release",
            json!({}),
            "give exactly one of claimId, claimIds, resource, resources or all",
        ),
        (
            "acc_release",
            json!({ "claimId": "claim_x", "resource": "file:a" }),
            "give exactly one of claimId, claimIds, resource, resources or all",
        ),
        ("acc_release", json!({ "all": false }), "all must be true"),
        (
            "acc_message",
            json!({ "to": ["b"], "subject": "s", "body": "b", "kind": "decision", "supersedes": ["message_a"], "withdraws": ["message_b"] }),
            "give supersedes or withdraws, not both",
        ),
        (
            "acc_message",
            json!({ "to": ["b"], "subject": "s", "body": "b", "kind": "note", "withdraws": ["message_a"] }),
            "supersedes and withdraws need kind decision",
        ),
        (
            "acc_inbox",
            json!({ "messageId": "message_x", "cursor": "message_y" }),
            "an exact read (messageId) takes no cursor, limit or waitMs",
        ),
    ] {
        let result = call(&mut server, tool, args.clone());
        assert_eq!(result["isError"], true, "{tool} {args}: {result}");
        let error = &result["structuredContent"]["error"];
        assert_eq!(error["code"], "invalid_arguments", "{tool} {args}");
        let message = error["message"].as_str().expect("message");
        assert!(message.contains(rule), "{tool} {args}: {message}");
        assert!(message.starts_with(tool), "{message} names the tool");
    }
    assert!(!world.has_store(), "no refused call wrote anything");
}

#[test]
fn the_instructions_name_every_tool_and_no_other() {
    let named: std::collections::BTreeSet<&str> = INSTRUCTIONS
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("acc_"))
        .collect();
    let tools: std::collections::BTreeSet<&str> = crate::tools::names().into_iter().collect();
    assert_eq!(named, tools);
}

impl World {
    fn adopting_server(&self, client_pid: Option<i64>) -> Server {
        Server::new(Config {
            identity: Identity::Adopt { client_pid },
            workspace_dir: self.dir.clone(),
            data_dir: Some(self.data.clone()),
            clock: Arc::new(self.clock.clone()),
            adapters: acc_delivery::plugins::Loading::InProcess,
            consent: Arc::new(acc_delivery::NoRecords),
        })
    }

    /// A session opened the way the hooks open one: keyed, derived from the hook secret.
    fn hooked_session(&self, participant: &str, harness: &str, pid: i64) -> Caller {
        std::fs::create_dir_all(&self.data).expect("data");
        let secret_path = self.data.join("hook-secret");
        if !secret_path.exists() {
            std::fs::write(&secret_path, [7u8; 32]).expect("secret");
        }
        let secret = std::fs::read(&secret_path).expect("secret");
        let ws = workspace::discover(&self.dir).expect("workspace");
        let workspace_id = ws.id.clone();
        let mut core = Core::new(
            ws,
            self.data.clone(),
            Arc::new(self.clock.clone()),
            acc_app::process::liveness(),
        )
        .expect("core");
        let key = format!("{harness}:{participant}");
        let spec = SessionSpec {
            participant_id: participant.into(),
            session_key: Some(key.clone()),
            harness: acc_core::identity::Harness::parse(harness).expect("a harness"),
            client_version: None,
            checkout: None,
            branch: None,
            pid: Some(pid),
            enforcement: acc_store::Enforcement::Advisory,
            lifecycle: acc_store::Lifecycle::Managed,
        };
        let derive = |generation: i64| {
            acc_core::identity::derived_token(&secret, &workspace_id, &key, generation)
        };
        let opened = core
            .open_keyed_session(&spec, true, true, &derive)
            .expect("hooked session");
        Caller {
            session_id: opened.session.session_id,
            generation: opened.generation_token,
        }
    }
}

#[test]
fn without_a_configured_participant_the_hooked_session_of_the_client_is_adopted() {
    let world = World::new();
    let client = 4_000_001;
    let hooked = world.hooked_session("claude-code-abc", "claude-code", client);
    world.hooked_session("codex-other", "codex", client + 1);
    let mut server = world.adopting_server(Some(client));
    let status = ok(&mut server, "acc_status", json!({}));
    assert_eq!(status["speaksFor"]["participantId"], "claude-code-abc");
    assert_eq!(status["speaksFor"]["sessionId"], hooked.session_id.as_str());
    assert_eq!(status["speaksFor"]["source"], "adopted");
    assert!(
        status["speaksFor"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("4000001")),
        "{status}"
    );
    // A claim through MCP is the hooked session's claim: no `mcp` participant appears.
    let claim = ok(
        &mut server,
        "acc_claim",
        json!({ "action": "acquire", "resource": "file:src/a.rs" }),
    );
    assert_eq!(
        claim["ownerSessionId"],
        hooked.session_id.as_str(),
        "{claim}"
    );
    let status = ok(&mut server, "acc_status", json!({}));
    let participants: Vec<&str> = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter_map(|s| s["participantId"].as_str())
        .collect();
    assert!(!participants.contains(&"mcp"), "{participants:?}");
}

#[test]
fn every_hooked_client_is_adopted_and_can_answer_its_own_messages() {
    for (n, client) in acc_clients::Client::ALL.into_iter().enumerate() {
        let world = World::new();
        let pid = 4_100_000 + i64::try_from(n).expect("small");
        let name = format!("{}-agent", client.as_str());
        let hooked = world.hooked_session(&name, client.as_str(), pid);
        world.hooked_session("carol", "claude-code", pid + 50);
        let mut carol_server = world.adopting_server(Some(pid + 50));
        let asked = ok(
            &mut carol_server,
            "acc_request",
            json!({ "toParticipantId": name, "title": "which parser?" }),
        );
        let message = asked["message"]["messageId"].clone();
        let mut server = world.adopting_server(Some(pid));
        let status = ok(&mut server, "acc_status", json!({}));
        assert_eq!(
            status["speaksFor"]["source"], "adopted",
            "{client:?}: {status}"
        );
        assert_eq!(
            status["speaksFor"]["sessionId"],
            hooked.session_id.as_str(),
            "{client:?}"
        );
        // As its own participant, the adopted server can answer what was asked of it.
        let replied = ok(
            &mut server,
            "acc_reply",
            json!({ "messageId": message, "body": "the new one" }),
        );
        assert!(replied.get("message").is_some(), "{client:?}: {replied}");
    }
}

#[test]
fn adoption_falls_back_to_the_default_participant_with_the_reason() {
    let world = World::new();
    let client = 4_000_002;
    world.hooked_session("codex-one", "codex", client);
    world.hooked_session("codex-two", "codex", client);
    for (pid, reason) in [
        (
            Some(client),
            "2 open hooked sessions (codex-one, codex-two)",
        ),
        (Some(client + 9), "no hooked session of client pid 4000011"),
        (None, "client process that started this server is unknown"),
    ] {
        let mut server = world.adopting_server(pid);
        let status = ok(&mut server, "acc_status", json!({}));
        assert_eq!(
            status["speaksFor"]["participantId"],
            default_participant(pid).as_str()
        );
        assert_eq!(status["speaksFor"]["source"], "default");
        let why = status["speaksFor"]["reason"].as_str().expect("reason");
        assert!(why.contains(reason), "{why}");
    }
    let mut configured = world.server("research");
    let status = ok(&mut configured, "acc_status", json!({}));
    assert_eq!(status["speaksFor"]["participantId"], "research");
    assert_eq!(status["speaksFor"]["source"], "configured");
}

#[test]
fn peer_text_reaches_the_model_with_hidden_characters_escaped() {
    let world = World::new();
    let mut alice = world.server("alice");
    let mut bob = world.server("bob");
    ok(&mut bob, "acc_status", json!({}));
    // A bidi override, a zero-width space, a line separator, a C1 control and a BOM.
    let body = "pay \u{202e}lapyap\u{202c} now\u{200b}\u{2028}end\u{85}\u{feff}";
    let sent = ok(
        &mut alice,
        "acc_message",
        json!({ "to": ["bob"], "kind": "note", "subject": "s\u{2066}x", "body": body }),
    );
    let id = sent["message"]["messageId"].clone();
    let result = call(&mut bob, "acc_inbox", json!({ "messageId": id }));
    let text = result["content"][0]["text"].as_str().expect("text");
    for hidden in [
        '\u{202e}', '\u{202c}', '\u{200b}', '\u{2028}', '\u{85}', '\u{feff}', '\u{2066}',
    ] {
        assert!(
            !text.contains(hidden),
            "{hidden:?} reaches the model raw: {text}"
        );
    }
    for escape in [
        "\\u202e", "\\u200b", "\\u2028", "\\u0085", "\\ufeff", "\\u2066",
    ] {
        assert!(text.contains(escape), "{escape} in {text}");
    }
    // The same value for a parser: the text and the structured content (an array result's
    // `items` in this revision) agree.
    let parsed: Value = serde_json::from_str(text).expect("json");
    let structured = &result["structuredContent"];
    assert_eq!(&parsed, structured.get("items").unwrap_or(structured));
    assert!(parsed.to_string().contains(body), "{parsed}");
}

#[test]
fn acc_status_stays_within_the_page_at_any_room_size() {
    let world = World::new();
    let mut alice = world.server("alice");
    let mut bob = world.server("bob");
    ok(&mut bob, "acc_status", json!({}));
    let resources: Vec<String> = (0..300)
        .map(|i| format!("file:src/module{i:03}.rs"))
        .collect();
    for chunk in resources.chunks(50) {
        ok(
            &mut alice,
            "acc_claim",
            json!({ "action": "acquire", "resources": chunk }),
        );
    }
    ok(
        &mut bob,
        "acc_claim",
        json!({ "action": "acquire", "resource": "file:docs/mine.md" }),
    );
    let result = call(&mut bob, "acc_status", json!({}));
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.len() <= 12_000, "{} bytes", text.len());
    let status = &result["structuredContent"];
    assert_eq!(status["claimSummary"]["total"], 301, "{status}");
    assert_eq!(status["claimSummary"]["complete"], false);
    assert_eq!(
        status["claims"][0]["resource"], "file:docs/mine.md",
        "the caller's own claims come first"
    );
    assert!(
        status["omitted"]["claims"].as_u64().unwrap_or(0) > 0,
        "{status}"
    );
    assert!(
        status["omitted"]["readAll"]
            .as_str()
            .is_some_and(|r| r.contains("acc://snapshot")),
        "{status}"
    );
    assert!(status["speaksFor"].is_object());
    // Many sessions with long intents: the other sessions give way, the caller's stays first.
    let crowded = World::new();
    let mut me = crowded.server("me");
    ok(&mut me, "acc_status", json!({}));
    for i in 0..40 {
        let mut other = crowded.server(&format!("agent{i:02}"));
        ok(
            &mut other,
            "acc_work",
            json!({ "summary": "x".repeat(280), "mode": "edit" }),
        );
    }
    let result = call(&mut me, "acc_status", json!({}));
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.len() <= 12_000, "{} bytes", text.len());
    let status = &result["structuredContent"];
    assert_eq!(status["sessions"][0]["participantId"], "me", "{status}");
    assert!(
        status["omitted"]["sessions"].as_u64().unwrap_or(0) > 0,
        "{status}"
    );
    // A small room is whole, with no note.
    let small = World::new();
    let mut carol = small.server("carol");
    let status = ok(&mut carol, "acc_status", json!({}));
    assert!(status.get("omitted").is_none(), "{status}");
    assert_eq!(status["claimSummary"]["complete"], true);
}

/// Each tool's published input schema says exactly what its argument struct reads: the same
/// property names (serde's renames applied), the same types, every required property a field
/// that is not an `Option`, and every optional one an `Option` or a (defaulted) list. A schema
/// and its struct cannot disagree without this failing, naming the tool and the field.
#[test]
fn each_tools_schema_is_its_argument_struct() {
    use serde_reflection::{ContainerFormat, Format, Tracer, TracerConfig};
    assert_eq!(crate::tools::TOOLS.len(), 11, "MCP.md's eleven tools");
    for tool in &crate::tools::TOOLS {
        let mut tracer = Tracer::new(TracerConfig::default());
        let traced = (tool.trace)(&mut tracer).expect("trace the argument struct");
        let registry = tracer.registry().expect("registry");
        let Format::TypeName(type_name) = traced else {
            panic!("{}: its arguments are not a struct: {traced:?}", tool.name);
        };
        let fields = match registry.get(&type_name) {
            Some(ContainerFormat::Struct(fields)) => fields.clone(),
            other => panic!("{}: {type_name} is not a struct: {other:?}", tool.name),
        };
        let schema = crate::tools::input_schema(tool.name);
        let properties = schema["properties"].as_object().expect("properties");
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        let mut published: Vec<&str> = properties.keys().map(String::as_str).collect();
        names.sort_unstable();
        published.sort_unstable();
        assert_eq!(
            published, names,
            "{}: the schema's properties and {type_name}'s fields",
            tool.name
        );
        for field in &fields {
            let (optional, inner) = match &field.value {
                Format::Option(inner) => (true, inner.as_ref()),
                other => (false, other),
            };
            let is_required = required.contains(&field.name.as_str());
            assert!(
                !(is_required && optional),
                "{}: `{}` is required by the schema but an Option in {type_name}",
                tool.name,
                field.name
            );
            assert!(
                is_required || optional || matches!(inner, Format::Seq(_)),
                "{}: `{}` is optional in the schema but neither an Option nor a list in {type_name}",
                tool.name,
                field.name
            );
            let expected = match inner {
                Format::Str => "string",
                Format::I64 => "integer",
                Format::Bool => "boolean",
                Format::Seq(_) => "array",
                other => panic!("{}: `{}` has format {other:?}", tool.name, field.name),
            };
            assert_eq!(
                properties[&field.name]["type"], expected,
                "{}: the type of `{}`",
                tool.name, field.name
            );
        }
    }
}

//! Guarded claims in the real clients: `acc install` the user's way into a temporary home, a
//! workspace whose policy is `guarded`, another agent's exclusive guarded claim on
//! `src/parser.rs`, and a scripted model that writes. The write into the claim must not happen
//! and the model must be told who holds it; a write elsewhere goes through; after the release
//! the same write goes through. The evidence is the committed write-guard capture of each
//! client version (`contracts/<client>/<version>-<platform>-write-guard.toml`).

use std::path::{Path, PathBuf};

use acc_capture::guard::{self, CHANGED, CLAIMED, NOTES, ORIGINAL, Origin, UNCLAIMED, Writer};
use acc_capture::model::{ModelServer, Scripted};
use acc_clients::Client;
use acc_tests::{Creds, World, clients};
use serde_json::{Value, json};

/// Bob: another agent's Claude Code conversation, opened and ended by ACC's own hooks (run
/// here by hand, as its client would). Its claim outlives its presence, as claims do.
struct Bob {
    creds: Creds,
}

impl Bob {
    fn payload(world: &World, event: &str, source: &str) -> String {
        json!({
            "session_id": "bob-conversation", "cwd": world.dir,
            "hook_event_name": event, "source": source,
        })
        .to_string()
    }

    /// Bob's session starts (its credentials come from the context the hook gives its model).
    fn start(world: &World, source: &str) -> Self {
        let started = world.hook_with(
            "claude-code",
            "SessionStart",
            &Self::payload(world, "SessionStart", source),
            &[("ACC_PARTICIPANT", "bob")],
        );
        assert_eq!(started.code, 0, "{started:?}");
        let quoted = |flag: &str| {
            let at = started
                .stdout
                .find(&format!("{flag} '"))
                .unwrap_or_else(|| panic!("{flag} in {}", started.stdout));
            let rest = &started.stdout[at + flag.len() + 2..];
            rest[..rest.find('\'').expect("closing quote")].to_string()
        };
        Self {
            creds: Creds {
                participant: "bob".into(),
                session: quoted("--session"),
                generation: quoted("--generation"),
            },
        }
    }

    /// Bob's conversation starts (`source`), takes an exclusive guarded claim on the parser,
    /// and ends.
    fn claims_the_parser(world: &World, source: &str) {
        let bob = Self::start(world, source);
        world
            .acc_as(
                &bob.creds,
                &[
                    "claim",
                    "--resource",
                    &format!("file:{CLAIMED}"),
                    "--enforcement",
                    "guarded",
                    "--reason",
                    "rewriting the parser",
                ],
            )
            .ok_json();
        bob.end(world);
    }

    fn end(&self, world: &World) {
        let ended = world.hook_with(
            "claude-code",
            "SessionEnd",
            &Self::payload(world, "SessionEnd", "other"),
            &[("ACC_PARTICIPANT", "bob")],
        );
        assert_eq!(ended.code, 0, "{ended:?}");
    }
}

/// A guarded workspace with `src/parser.rs`, the client installed the user's way in `home`,
/// and Bob's exclusive guarded claim on the parser.
fn room(world: &World, client: Client, model: &ModelServer) -> Writer {
    room_with(world, client, model, false)
}

/// [`room`], with ACC's MCP server registered in its adopting form too (`--mcp`, no participant
/// named), as `acc install --mcp` offers it to a user.
fn room_with(world: &World, client: Client, model: &ModelServer, mcp: bool) -> Writer {
    std::fs::write(
        world.dir.join("acc.workspace.json"),
        r#"{"schemaVersion":1,"workspaceId":"guarded-room","policy":{"claimMode":"guarded"}}"#,
    )
    .expect("config");
    std::fs::create_dir_all(world.dir.join("src")).expect("src");
    std::fs::write(world.dir.join(CLAIMED), ORIGINAL).expect("parser");
    let writer = acc_tests::writer(world, client, model, &[("ACC_PARTICIPANT", "alice")]);
    writer.prepare_home(model).expect("client settings");
    let home = writer.home.to_string_lossy().into_owned();
    let mut install = vec!["install", "--client", client.as_str(), "--home", &home];
    if mcp {
        install.push("--mcp");
    }
    let installed = world.acc_with(
        &install,
        &[("HOME", &home), ("PATH", &clients().path_for(client))],
    );
    assert_eq!(installed.code, 0, "{installed:?}");

    Bob::claims_the_parser(world, "startup");
    writer
}

/// Bob comes back to his conversation and releases his claims.
fn bob_releases(world: &World) {
    let bob = Bob::start(world, "resume");
    world.acc_as(&bob.creds, &["release", "--all"]).ok_json();
    bob.end(world);
}

fn file(world: &World, relative: &str) -> Option<String> {
    guard::read(&world.dir, relative)
}

/// Alice's session in `acc status --all`.
fn alice(status: &Value) -> Value {
    status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "alice")
        .cloned()
        .unwrap_or_else(|| panic!("alice's session: {status}"))
}

/// The whole journey in one real client.
fn a_write_into_a_guarded_claim_is_stopped(client: Client) -> (World, Writer, ModelServer) {
    let world = World::new();
    let model = ModelServer::start();
    let writer = room(&world, client, &model);

    let mut steps = writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED);
    steps.extend(writer.write_calls(UNCLAIMED, None, NOTES));
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer.turn("write the parser and the notes").expect("turn");
    assert_eq!(
        model.scripted_left(),
        0,
        "the model played its whole script"
    );
    assert_eq!(
        file(&world, CLAIMED).as_deref(),
        Some(ORIGINAL),
        "{client:?}: the write into Bob's claim did not happen"
    );
    let results = guard::results_of_turn(&model);
    let refusal = results
        .get(writer.reads_before(Some(ORIGINAL)))
        .map(Value::to_string)
        .unwrap_or_default();
    assert!(
        refusal.contains("claimed exclusively (guarded) by bob") && refusal.contains(CLAIMED),
        "{client:?}: the model was told who holds the file: {results:?}"
    );
    assert_eq!(
        file(&world, UNCLAIMED).as_deref(),
        Some(NOTES),
        "{client:?}: a write outside any claim goes through: {results:?}"
    );
    // The session learnt its client's version at its start, and the capture certifies it.
    let status = world.acc(&["status", "--all"]).ok_json();
    let session = alice(&status);
    assert_eq!(session["harness"], client.as_str());
    assert!(session["clientVersion"].is_string(), "{session}");
    assert_eq!(session["enforcement"], "guarded", "{session}");
    assert!(
        session["enforcementReason"]
            .as_str()
            .is_some_and(|r| r.contains("write guard is backed by the capture")),
        "{session}"
    );

    bob_releases(&world);
    model.clear();
    let mut steps = writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED);
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer.turn("write the parser again").expect("turn");
    assert_eq!(
        file(&world, CLAIMED).as_deref(),
        Some(CHANGED),
        "{client:?}: after the release the same write goes through: {:?}",
        guard::results_of_turn(&model)
    );
    (world, writer, model)
}

/// The `acc` binary copied into `<root>/bin` beside `<root>/share/acc/contracts`, a copy of the
/// source tree's contracts without `skip`: an installed layout whose evidence lacks one capture.
fn acc_without(root: &Path, skip: &str) -> PathBuf {
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::copy(acc_tests::bin("acc"), bin.join("acc")).expect("copy acc");
    let contracts = root.join("share/acc/contracts");
    acc_tests::copy_dir(&acc_tests::repo_root().join("contracts"), &contracts);
    for entry in std::fs::read_dir(contracts.join("claude-code")).expect("read") {
        let path = entry.expect("entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(skip))
        {
            std::fs::remove_file(path).expect("remove");
        }
    }
    bin.join("acc")
}

#[test]
fn claude_code_stops_a_write_into_a_guarded_claim() {
    let (world, writer, model) = a_write_into_a_guarded_claim_is_stopped(Client::ClaudeCode);

    // One live session nothing guards (a person at a shell) lowers what the room promises,
    // never what Claude Code's hook denies: Bob's new claim still stops the write, and status
    // says the room is advisory, whose writes are stopped and whose are not.
    Bob::claims_the_parser(&world, "resume");
    world.attach("carol");
    std::fs::write(world.dir.join(CLAIMED), ORIGINAL).expect("parser");
    model.clear();
    let mut steps = writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED);
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer.turn("write the parser").expect("turn");
    assert_eq!(
        file(&world, CLAIMED).as_deref(),
        Some(ORIGINAL),
        "a weaker participant does not switch the guard off: {:?}",
        guard::results_of_turn(&model)
    );
    let text = world.acc_text(&["status"]);
    assert!(
        text.stdout
            .contains("protection: advisory (configured claim policy: guarded)")
            && text.stdout.contains("guarded claims")
            && text
                .stdout
                .contains("not stopped by them: carol (cli): a shell session"),
        "{}",
        text.stdout
    );

    // Without Claude Code's write-guard capture its sessions are advisory again, and say why.
    let copied = acc_without(
        &world.temp.path().join("installed"),
        "2.1.328-linux-x64-write-guard",
    );
    let mut status = world.command_path(&copied);
    status.args(["--json", "status", "--all"]);
    let status = world.run(status, "acc status").ok_json();
    let session = alice(&status);
    assert_eq!(session["enforcement"], "advisory", "{session}");
    assert!(
        session["enforcementReason"]
            .as_str()
            .is_some_and(|r| r.contains("no beforeWrite capture of claude-code")),
        "{session}"
    );
}

#[test]
fn codex_stops_a_write_into_a_guarded_claim() {
    a_write_into_a_guarded_claim_is_stopped(Client::Codex);
}

#[test]
fn gemini_cli_stops_a_write_into_a_guarded_claim() {
    a_write_into_a_guarded_claim_is_stopped(Client::Gemini);
}

#[test]
fn qwen_code_stops_a_write_into_a_guarded_claim() {
    a_write_into_a_guarded_claim_is_stopped(Client::Qwen);
}

#[test]
fn opencode_stops_a_write_into_a_guarded_claim() {
    a_write_into_a_guarded_claim_is_stopped(Client::OpenCode);
}

/// Every JSON value inside `value`: itself, and the JSON object inside each string in it (tool
/// results carry the tool's JSON as text), so a test finds ACC's result whatever each client's
/// API wraps it in.
fn payloads(value: &Value) -> Vec<Value> {
    let mut out = vec![value.clone()];
    match value {
        // The first JSON object in the text, whatever the client put around it (Codex's
        // "Output:" header, Gemini CLI's `<untrusted_context>`, Claude Code's notices after it).
        Value::String(text) => {
            if let Some(at) = text.find('{')
                && let Some(Ok(inner)) = serde_json::Deserializer::from_str(&text[at..])
                    .into_iter::<Value>()
                    .next()
            {
                out.extend(payloads(&inner));
            }
        }
        Value::Array(items) => items.iter().for_each(|i| out.extend(payloads(i))),
        Value::Object(map) => map.values().for_each(|v| out.extend(payloads(v))),
        _ => {}
    }
    out
}

/// The ACC result that `wanted` picks among the tool results the model received this turn.
fn acc_result(model: &ModelServer, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    let results = guard::results_of_turn(model);
    results
        .iter()
        .flat_map(payloads)
        .find(|v| wanted(v))
        .unwrap_or_else(|| panic!("{what} among {results:?}"))
}

/// A resumed conversation is the running agent's session: `online` (its new pid recorded),
/// adopted by its client's `acc-mcp`, its writes into another's guarded claim denied; a claim
/// it takes through MCP, the way acc-mcp's instructions say, is guarded and stops another
/// client's write. The rows: fresh, then resumed, in each real client.
fn a_resumed_session_is_live_adopted_and_guarded(client: Client, origins: &[Origin]) {
    let world = World::new();
    let model = ModelServer::start();
    let writer = room_with(&world, client, &model, true);
    let mut first_session = None;
    for &origin in origins {
        std::fs::write(world.dir.join(CLAIMED), ORIGINAL).expect("parser");
        if origin == Origin::Compacted {
            model.clear();
            model.script([Scripted::Text("a summary of the conversation".into())]);
            writer.compact().expect("compaction");
            assert!(
                model
                    .model_requests()
                    .iter()
                    .any(|r| r.body.contains(writer.compaction_request())),
                "the conversation was compacted: the model was asked for its summary"
            );
        }
        model.clear();
        let mut steps = vec![
            Scripted::Tool {
                name: writer.mcp_tool("acc_status"),
                input: json!({}),
            },
            Scripted::Tool {
                name: writer.mcp_tool("acc_claim"),
                input: json!({ "action": "acquire", "resource": format!("file:{UNCLAIMED}") }),
            },
        ];
        steps.extend(writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED));
        steps.push(Scripted::Text("done".into()));
        model.script(steps);
        writer
            .turn_with("status, claim the notes, write the parser", origin, true)
            .expect("turn");
        let row = format!("{client:?} {origin:?}");
        assert_eq!(model.scripted_left(), 0, "{row}: the whole script ran");
        assert_eq!(
            file(&world, CLAIMED).as_deref(),
            Some(ORIGINAL),
            "{row}: the write into Bob's guarded claim did not happen: {:?}",
            guard::results_of_turn(&model)
        );
        let status = acc_result(&model, "acc_status's result", |v| {
            v.get("speaksFor").is_some()
        });
        let speaks = &status["speaksFor"];
        assert_eq!(speaks["source"], "adopted", "{row}: {speaks}");
        assert_eq!(speaks["participantId"], "alice", "{row}: {speaks}");
        let session = speaks["sessionId"].as_str().expect("session").to_string();
        let me = status["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .find(|s| s["sessionId"] == session.as_str())
            .unwrap_or_else(|| panic!("{row}: its own session in {status}"))
            .clone();
        assert_eq!(me["presence"], "online", "{row}: {me}");
        assert_eq!(me["harness"], client.as_str(), "{row}: {me}");
        match &first_session {
            None => first_session = Some(session),
            Some(first) => assert_eq!(
                first, &session,
                "{row}: the resumed conversation is one session"
            ),
        }
        let claim = acc_result(&model, "acc_claim's result", |v| {
            v["resource"] == format!("file:{UNCLAIMED}").as_str() && v.get("claimId").is_some()
        });
        assert_eq!(
            claim["resource"],
            format!("file:{UNCLAIMED}"),
            "{row}: {claim}"
        );
        assert_eq!(claim["effectiveEnforcement"], "guarded", "{row}: {claim}");

        // Bob's Claude Code hook is denied a write into the claim alice took through MCP.
        let write = json!({
            "session_id": "bob-conversation", "cwd": world.dir, "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": { "file_path": world.dir.join(UNCLAIMED), "content": "bob" },
        });
        let denied = world.hook_with(
            "claude-code",
            "PreToolUse",
            &write.to_string(),
            &[("ACC_PARTICIPANT", "bob")],
        );
        assert!(
            denied.stdout.contains("\"permissionDecision\":\"deny\"")
                && denied.stdout.contains("by alice"),
            "{row}: {denied:?}"
        );
    }
}

#[test]
fn claude_code_resumed_and_compacted_is_live_adopted_and_guarded() {
    a_resumed_session_is_live_adopted_and_guarded(
        Client::ClaudeCode,
        &[Origin::Fresh, Origin::Resumed, Origin::Compacted],
    );
}

#[test]
fn codex_resumed_is_live_adopted_and_guarded() {
    // Codex and Gemini CLI compact only in their interactive interface.
    a_resumed_session_is_live_adopted_and_guarded(Client::Codex, &[Origin::Fresh, Origin::Resumed]);
}

#[test]
fn gemini_cli_resumed_is_live_adopted_and_guarded() {
    a_resumed_session_is_live_adopted_and_guarded(
        Client::Gemini,
        &[Origin::Fresh, Origin::Resumed],
    );
}

/// A subagent's writes are its agent's (OpenCode's `task` tool runs one in a session of its
/// own, whose parent is the agent's): stopped at Bob's claim like the agent's own, the model
/// told who holds the file, and no second session appears for it.
#[test]
fn an_opencode_subagent_is_its_agent_and_is_guarded() {
    a_subagent_is_its_agent_and_is_guarded(
        Client::OpenCode,
        "task",
        json!({
            "description": "edit the parser",
            "prompt": "write the parser",
            "subagent_type": "general"
        }),
    );
}

/// The model delegates to a subagent with `tool`, whose turn writes into Bob's claim: the
/// write does not happen, the subagent is told who holds the file, and the room holds one
/// session of `client`.
fn a_subagent_is_its_agent_and_is_guarded(client: Client, tool: &str, input: Value) {
    let world = World::new();
    let model = ModelServer::start();
    let writer = room(&world, client, &model);
    let mut steps = vec![Scripted::Tool {
        name: tool.into(),
        input,
    }];
    // The subagent's turn, then the agent's last answer.
    steps.extend(writer.write_calls(CLAIMED, Some(ORIGINAL), CHANGED));
    steps.push(Scripted::Text("the parser is claimed".into()));
    steps.push(Scripted::Text("done".into()));
    model.script(steps);
    writer.turn("delegate the parser").expect("turn");
    assert_eq!(model.scripted_left(), 0, "the whole script ran");
    assert_eq!(
        file(&world, CLAIMED).as_deref(),
        Some(ORIGINAL),
        "the subagent's write into Bob's claim did not happen"
    );
    assert!(
        acc_tests::model_text(&model).contains("claimed exclusively (guarded) by bob"),
        "the subagent was told who holds the file"
    );
    let sessions = acc_tests::sessions_of(&world, client.as_str());
    assert_eq!(sessions.len(), 1, "the subagent is its agent: {sessions:?}");
}

/// OpenCode compacts only in its interactive interface (`/compact`): fresh and resumed.
#[test]
fn opencode_resumed_is_live_adopted_and_guarded() {
    a_resumed_session_is_live_adopted_and_guarded(
        Client::OpenCode,
        &[Origin::Fresh, Origin::Resumed],
    );
}

#[test]
fn qwen_code_resumed_and_compacted_is_live_adopted_and_guarded() {
    a_resumed_session_is_live_adopted_and_guarded(
        Client::Qwen,
        &[Origin::Fresh, Origin::Resumed, Origin::Compacted],
    );
}

#[test]
fn kimi_code_stops_a_write_into_a_guarded_claim() {
    a_write_into_a_guarded_claim_is_stopped(Client::Kimi);
}

/// Kimi Code compacts only in its interactive interface (`/compact`): fresh and resumed.
#[test]
fn kimi_code_resumed_is_live_adopted_and_guarded() {
    a_resumed_session_is_live_adopted_and_guarded(Client::Kimi, &[Origin::Fresh, Origin::Resumed]);
}

/// A Kimi Code subagent's writes are its agent's (the `Agent` tool runs one inside the same
/// session): stopped at Bob's claim like the agent's own, the model told who holds the file,
/// and no second session appears for it.
#[test]
fn a_kimi_code_subagent_is_its_agent_and_is_guarded() {
    a_subagent_is_its_agent_and_is_guarded(
        Client::Kimi,
        "Agent",
        json!({
            "description": "edit the parser",
            "prompt": "write the parser",
            "subagent_type": "coder"
        }),
    );
}

//! Qwen Code 0.24.4, real, on Node.js 22, against a Chat Completions model on loopback:
//! `acc install --client qwen` into the user's own commented settings, a peer's message in the
//! very model request of the next turn, also when it arrives between two model requests of one
//! turn (Qwen Code runs UserPromptSubmit before each of them), a resumed conversation that stays
//! one participant and never sees the message twice, and an uninstall that gives the settings
//! back byte for byte.

use acc_capture::guard::{Origin, Writer};
use acc_capture::model::{ModelServer, QWEN_SETTINGS, Scripted};
use acc_clients::Client;
use acc_tests::{World, clients};
use serde_json::json;

use crate::journey::{self, Journey, Kept, bodies};

fn settings(writer: &Writer) -> std::path::PathBuf {
    writer.home.join(".qwen/settings.json")
}

#[test]
fn qwen_code_receives_a_peer_message_in_the_next_model_request_once_across_a_resume() {
    let world = World::new();
    let model = ModelServer::start();
    let writer = journey::installed(&world, Client::Qwen, &model, &[]);
    let installed = std::fs::read_to_string(settings(&writer)).expect("settings");
    assert!(
        installed.starts_with("// the user's own Qwen Code settings\n"),
        "the user's comment stays: {installed}"
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            installed.contains(&format!("hook qwen {event}")),
            "hooks.{event}: {installed}"
        );
    }

    let journey = Journey {
        world: &world,
        writer: &writer,
        model: &model,
        harness: "qwen",
        bodies,
    };
    let opened = journey.first_turn("0.24.4");
    let participant = opened.participant.clone();
    let first_turn = bodies(&model).join("\n");
    assert!(
        first_turn.contains("ACC: You are participant") && first_turn.contains(&participant),
        "the session's credentials reach the model: {first_turn:.3000}"
    );
    // The next turn, resumed: the message is in that turn's very first model request, fenced.
    let alice = world.attach("alice");
    let id = journey.in_the_next_request(&alice, &opened, "QWEN-BODY");

    // A message that arrives while a turn runs reaches its next model request: the model's
    // shell command waits (bounded) for a flag the test makes only after the message is sent.
    model.clear();
    let flag = world.temp.path().join("message-sent");
    let later = std::thread::scope(|scope| {
        model.script([
            Scripted::Tool {
                name: "run_shell_command".into(),
                input: json!({
                    "command": format!(
                        "timeout 120 sh -c 'until [ -e \"$0\" ]; do sleep 0.1; done' '{}'",
                        flag.display()
                    )
                }),
            },
            Scripted::Text("done".into()),
        ]);
        let turn = scope.spawn(|| writer.turn_with("run it", Origin::Resumed, true));
        model
            .wait_for_request("run it", std::time::Duration::from_secs(120))
            .expect("the turn's first model request");
        let sent = world.ask(&alice, &participant, "lexer", "QWEN-LATER: and the lexer?");
        std::fs::write(&flag, "").expect("the flag");
        turn.join().expect("the turn").expect("the turn ran");
        sent["message"]["messageId"]
            .as_str()
            .expect("id")
            .to_string()
    });
    let requests = bodies(&model);
    assert_eq!(model.scripted_left(), 0, "the whole script ran");
    assert!(
        requests.len() >= 2,
        "the tool call and its answer are two model requests: {}",
        requests.len()
    );
    let arrived = requests.iter().position(|b| b.contains("QWEN-LATER"));
    assert!(
        arrived.is_some_and(|at| at >= 1),
        "the message sent during the turn rides in a later request of it: {arrived:?}"
    );
    assert_eq!(world.receipt(&later)["state"], "offered");

    // Resumed again: the same participant and session, and neither message is shown twice.
    journey.resumed_again(&opened, &[&id, &later], Kept::AtMostOnce);

    world
        .acc(&[
            "uninstall",
            "--client",
            "qwen",
            "--home",
            writer.home.to_str().expect("utf8"),
        ])
        .ok_json();
    // Qwen Code 0.24.4 records its settings migration (`"$version"`) in the file at its first
    // run, a later edit of the client's own that uninstall keeps; the rest is the user's bytes.
    let left = std::fs::read_to_string(settings(&writer)).expect("settings");
    let version = left
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"$version\": "))
        .unwrap_or_else(|| panic!("Qwen Code's own migration mark in {left}"));
    let expected = QWEN_SETTINGS.replacen(
        "\"enabled\": false }\n}",
        &format!("\"enabled\": false }},\n  \"$version\": {version}\n}}"),
        1,
    );
    assert_eq!(
        left, expected,
        "uninstall gives the user's settings back byte for byte, with the client's own edit"
    );
}

/// The options a Qwen Code install takes: a dry run (live consent and MCP with it) changes
/// nothing; `--delivery actionable` records the consent `qwen-inbox` needs; `--mcp-trust`
/// marks ACC's server trusted, every registration declares its tools up front
/// (`alwaysLoadTools`), and the real `qwen mcp list` loads the result.
#[test]
fn a_qwen_code_install_takes_live_consent_and_registers_a_loadable_server() {
    let world = World::new();
    let model = ModelServer::start();
    let writer = acc_tests::prepared_writer(&world, Client::Qwen, &model);
    let home = writer.home.to_str().expect("utf8").to_string();
    let install = |extra: &[&str]| journey::install(&world, Client::Qwen, &home, extra);
    install(&[
        "--mcp",
        "--mcp-trust",
        "--delivery",
        "actionable",
        "--dry-run",
    ])
    .ok_json();
    assert_eq!(
        std::fs::read_to_string(settings(&writer)).expect("settings"),
        QWEN_SETTINGS,
        "a dry run changes nothing"
    );
    let done = install(&["--mcp", "--mcp-trust", "--delivery", "actionable"]).ok_json();
    assert!(
        done["steps"].as_array().expect("steps").iter().any(|s| s
            .as_str()
            .is_some_and(|s| s.contains("live-delivery consent `actionable`"))),
        "{done}"
    );
    let text = std::fs::read_to_string(settings(&writer)).expect("settings");
    let server_at = text.find("\"mcpServers\"").expect("mcpServers");
    let server = &text[server_at..];
    for wanted in [
        "\"alwaysLoadTools\": true",
        "\"trust\": true",
        acc_tests::bin("acc-mcp").to_str().expect("utf8"),
    ] {
        assert!(server.contains(wanted), "{wanted} in {server}");
    }
    let mut list = world.command_path(clients().qwen);
    list.args(["mcp", "list"])
        .env("HOME", &writer.home)
        .env("PATH", clients().path_for(Client::Qwen))
        .env_remove("QWEN_HOME");
    let listed = world.run(list, "qwen mcp list");
    assert_eq!(listed.code, 0, "{listed:?}");
    assert!(listed.stdout.contains("acc:"), "{}", listed.stdout);
}

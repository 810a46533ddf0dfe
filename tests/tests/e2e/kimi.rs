//! Kimi Code 2.1.0, real, on Node.js 22, against a Chat Completions model on loopback:
//! `acc install --client kimi` into the user's own commented `config.toml`, a peer's message in
//! the very model request of the next turn (Kimi Code keeps UserPromptSubmit's answer in the
//! conversation as a user message), a resumed conversation that stays one participant and never
//! sees the message twice, the version read from the running client, the install options it
//! refuses, and an uninstall that gives the user's files back byte for byte.

use acc_capture::guard::{Origin, Writer};
use acc_capture::model::ModelServer;
use acc_clients::Client;
use acc_tests::{World, clients};

use crate::journey::{self, Journey, Kept, bodies};

fn config(writer: &Writer) -> std::path::PathBuf {
    writer.home.join(".kimi-code/config.toml")
}

#[test]
fn kimi_code_receives_a_peer_message_in_the_next_model_request_once_across_a_resume() {
    let world = World::new();
    let model = ModelServer::start();
    let writer = journey::installed(&world, Client::Kimi, &model, &[]);
    let installed = std::fs::read_to_string(config(&writer)).expect("config");
    assert!(
        installed.starts_with(&model.kimi_config()),
        "the user's configuration stays as it was, ACC's hooks after it: {installed}"
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            installed.contains(&format!("event = \"{event}\"")),
            "[[hooks]] for {event}: {installed}"
        );
    }

    let journey = Journey {
        world: &world,
        writer: &writer,
        model: &model,
        harness: "kimi",
        bodies,
    };
    let opened = journey.first_turn("2.1.0");
    let alice = world.attach("alice");
    let id = journey.in_the_next_request(&alice, &opened, "KIMI-BODY");
    let first = bodies(&model).into_iter().next().unwrap_or_default();
    assert!(
        first.contains(&opened.participant),
        "with its first message the model learns its credentials: {first:.3000}"
    );
    // Resumed again: the message stays in the stored conversation once and is not offered
    // again.
    journey.resumed_again(&opened, &[&id], Kept::AtMostOnce);

    world
        .acc(&[
            "uninstall",
            "--client",
            "kimi",
            "--home",
            writer.home.to_str().expect("utf8"),
        ])
        .ok_json();
    assert_eq!(
        std::fs::read_to_string(config(&writer)).expect("config"),
        model.kimi_config(),
        "uninstall gives the user's configuration back byte for byte"
    );
    assert!(
        !writer.home.join(".kimi-code/mcp.json").exists(),
        "no mcp.json was there, none is left"
    );
}

/// The options a Kimi Code install takes and refuses: a live-delivery consent and
/// `--mcp-trust` are refused (no adapter reaches Kimi Code; it has no trust flag) and change
/// nothing; a dry run changes nothing; `--mcp` registers `acc-mcp` in `mcp.json`, which a real
/// turn then offers; `kimi doctor` accepts the configuration ACC wrote.
#[test]
fn a_kimi_code_install_refuses_what_it_cannot_do_and_registers_a_loadable_server() {
    let world = World::new();
    let model = ModelServer::start();
    let writer = acc_tests::prepared_writer(&world, Client::Kimi, &model);
    let home = writer.home.to_str().expect("utf8").to_string();
    let install = |extra: &[&str]| journey::install(&world, Client::Kimi, &home, extra);
    journey::live_consent_refused(&world, Client::Kimi, &home);
    let refused = install(&["--mcp", "--mcp-trust"]).err(2, "invalid_arguments");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("--mcp-trust")),
        "{refused}"
    );
    install(&["--mcp", "--dry-run"]).ok_json();
    let unchanged = || {
        assert_eq!(
            std::fs::read_to_string(config(&writer)).expect("config"),
            model.kimi_config(),
            "a refused install and a dry run change nothing"
        );
        assert!(!writer.home.join(".kimi-code/mcp.json").exists());
    };
    unchanged();
    install(&["--mcp"]).ok_json();
    let servers: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(writer.home.join(".kimi-code/mcp.json")).expect("mcp.json"),
    )
    .expect("strict JSON");
    assert_eq!(
        servers["mcpServers"]["acc"]["command"],
        acc_tests::bin("acc-mcp").to_str().expect("utf8"),
        "{servers}"
    );
    let mut doctor = world.command_path(clients().kimi);
    doctor
        .arg("doctor")
        .env("HOME", &writer.home)
        .env("PATH", clients().path_for(Client::Kimi))
        .env("KIMI_CODE_NO_AUTO_UPDATE", "1")
        .env_remove("KIMI_CODE_HOME");
    let checked = world.run(doctor, "kimi doctor");
    assert_eq!(checked.code, 0, "{checked:?}");

    // A real turn with MCP allowed calls acc_status through Kimi Code: its mcp.json loaded.
    model.script([
        acc_capture::model::Scripted::Tool {
            name: "mcp__acc__acc_status".into(),
            input: serde_json::json!({}),
        },
        acc_capture::model::Scripted::Text("done".into()),
    ]);
    writer
        .turn_with("status, please", Origin::Fresh, true)
        .expect("the turn");
    assert_eq!(model.scripted_left(), 0, "the whole script ran");
    let last: serde_json::Value =
        serde_json::from_str(bodies(&model).last().expect("a request")).expect("json");
    let result = last["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        result.contains("workspaceId") && result.contains("sessions"),
        "acc_status answered the model: {result:.3000}"
    );

    world
        .acc(&["uninstall", "--client", "kimi", "--home", &home])
        .ok_json();
    unchanged();
}

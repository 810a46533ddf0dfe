//! Hooks in the real clients: `acc install` into a temporary home, whole turns against a model
//! API served on loopback, and what reached the model.

use std::path::Path;

use acc_capture::model::ModelServer;
use acc_tests::{World, clients};
use serde_json::Value;

fn claude_turn(world: &World, home: &Path, model: &ModelServer, prompt: &str) -> acc_tests::Run {
    let mut command = acc_tests::claude_print(world, home, model, prompt);
    command.env("ACC_PARTICIPANT", "bob");
    let run = world.run(command, "claude -p");
    assert_eq!(
        run.code, 0,
        "claude failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    run
}

use acc_tests::model_text;

#[test]
fn claude_code_receives_a_peer_message_in_the_next_model_request() {
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).expect("home");
    // The user's own settings, with their own formatting, to be restored byte for byte.
    let settings = home.join(".claude/settings.json");
    let original = b"{\n    \"includeCoAuthoredBy\":   false\n}\n";
    std::fs::write(&settings, original).expect("settings");

    let plan = world.acc_text(&[
        "install",
        "--client",
        "claude-code",
        "--home",
        home.to_str().expect("utf8"),
        "--dry-run",
    ]);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout.contains("UserPromptSubmit runs"),
        "{}",
        plan.stdout
    );
    assert_eq!(
        std::fs::read(&settings).expect("read"),
        original,
        "a dry run changes nothing"
    );
    world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home.to_str().expect("utf8"),
        ])
        .ok_json();
    world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home.to_str().expect("utf8"),
        ])
        .ok_json();
    let installed: Value =
        serde_json::from_slice(&std::fs::read(&settings).expect("read")).expect("json");
    assert_eq!(
        installed["includeCoAuthoredBy"], false,
        "the user's settings stay"
    );
    assert_eq!(
        installed["hooks"]["UserPromptSubmit"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "installing twice adds nothing"
    );

    let model = ModelServer::start();
    claude_turn(&world, &home, &model, "hello");
    // SessionStart opened bob's session, and SessionEnd closed its presence when claude -p ended.
    let status = world.acc(&["status", "--all"]).ok_json();
    let bob = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "bob")
        .cloned();
    let bob = bob.unwrap_or_else(|| panic!("SessionStart opened bob's session: {status}"));
    assert_eq!(bob["harness"], "claude-code");
    assert_eq!(bob["lifecycle"], "managed");
    assert_eq!(bob["presence"], "offline");
    assert!(bob["closedAt"].is_string(), "SessionEnd closed it: {bob}");
    assert!(
        model_text(&model).contains("This repository is coordinated with ACC"),
        "SessionStart context reached the model"
    );

    let alice = world.attach("alice");
    let sent = world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "bob",
                "--kind",
                "question",
                "--subject",
                "which store?",
                "--body",
                "Is the parser using sqlite? ~~~~ end",
            ],
        )
        .ok_json();
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();

    model.clear();
    claude_turn(&world, &home, &model, "any news?");
    let seen = model_text(&model);
    assert!(
        seen.contains("acc-peer-message sender=alice"),
        "the block reached the model: {seen}"
    );
    assert!(seen.contains(&format!("message={id}")));
    assert!(
        seen.contains("Is the parser using sqlite?"),
        "the body reached the model"
    );
    assert!(
        seen.contains("\\\\~\\\\~\\\\~\\\\~ end"),
        "the peer's fence was escaped: {seen}"
    );
    assert!(
        seen.contains("--generation"),
        "the credentials line reached the model"
    );
    let history = world
        .acc(&["sync", "--scope", "history", "--message", &id])
        .ok_json();
    let receipt = &history["items"][0]["receipts"][0];
    assert_eq!(receipt["state"], "offered");
    assert_eq!(receipt["offer"]["transport"], "next-turn");

    model.clear();
    claude_turn(&world, &home, &model, "and now?");
    assert!(
        !model_text(&model).contains(&id),
        "a second turn does not show it again"
    );

    world
        .acc(&[
            "uninstall",
            "--client",
            "claude-code",
            "--home",
            home.to_str().expect("utf8"),
        ])
        .ok_json();
    assert_eq!(
        std::fs::read(&settings).expect("read"),
        original,
        "restored byte for byte"
    );
}

fn codex_turn(
    world: &World,
    codex_home: &Path,
    model: &ModelServer,
    prompt: &str,
) -> acc_tests::Run {
    let clients = clients();
    let mut command = world.command_path(&clients.codex);
    command
        .args(["exec", "--skip-git-repo-check", prompt])
        .env("CODEX_HOME", codex_home)
        .env("HOME", world.temp.path())
        .env("ACC_TEST_MODEL_KEY", "acc-test-key")
        .env("ACC_PARTICIPANT", "carol")
        .env_remove("OPENAI_API_KEY");
    let _ = model;
    let run = world.run(command, "codex exec");
    assert_eq!(
        run.code, 0,
        "codex exec failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    run
}

#[test]
fn codex_receives_a_peer_message_in_the_next_model_request() {
    let world = World::new();
    let home = world.temp.path().join("home");
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).expect("codex home");
    let model = ModelServer::start();
    let config = codex_home.join("config.toml");
    let original = model.codex_config();
    std::fs::write(&config, &original).expect("config");
    let clients = clients();
    let path = clients.path();
    let home_arg = home.to_str().expect("utf8");
    world
        .acc_with(
            &["install", "--client", "codex", "--home", home_arg],
            &[("PATH", &path)],
        )
        .ok_json();

    codex_turn(&world, &codex_home, &model, "hello");
    let status = world.acc(&["status", "--all"]).ok_json();
    let carol = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "carol")
        .cloned();
    assert_eq!(
        carol.unwrap_or_else(|| panic!("the trusted SessionStart hook ran: {status}"))["harness"],
        "codex"
    );
    assert!(
        model_text(&model).contains("This repository is coordinated with ACC"),
        "SessionStart context reached the model"
    );

    let alice = world.attach("alice");
    let sent = world
        .acc_as(
            &alice,
            &[
                "message",
                "--to",
                "carol",
                "--subject",
                "heads up",
                "--body",
                "the store moved to src/store",
            ],
        )
        .ok_json();
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    model.clear();
    codex_turn(&world, &codex_home, &model, "any news?");
    let seen = model_text(&model);
    assert!(
        seen.contains("acc-peer-message sender=alice"),
        "the block reached the model"
    );
    assert!(seen.contains(&format!("message={id}")));
    assert!(seen.contains("the store moved to src/store"));
    let history = world
        .acc(&["sync", "--scope", "history", "--message", &id])
        .ok_json();
    assert_eq!(
        history["items"][0]["receipts"][0]["offer"]["transport"],
        "next-turn"
    );
    model.clear();
    codex_turn(&world, &codex_home, &model, "and now?");
    assert!(
        !model_text(&model).contains(&id),
        "a second turn does not show it again"
    );

    world
        .acc_with(
            &["uninstall", "--client", "codex", "--home", home_arg],
            &[("PATH", &path)],
        )
        .ok_json();
    assert_eq!(
        std::fs::read_to_string(&config).expect("config"),
        original,
        "config.toml restored byte for byte"
    );
    assert!(
        !codex_home.join("hooks.json").exists(),
        "the hooks file acc created is gone"
    );
}

#[test]
fn claude_code_proceeds_when_acc_cannot_work() {
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).expect("home");
    world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home.to_str().expect("utf8"),
        ])
        .ok_json();
    let broken = world.temp.path().join("not-a-directory");
    std::fs::write(&broken, "x").expect("file");
    let model = ModelServer::start();
    let mut command = acc_tests::claude_print(&world, &home, &model, "still works?");
    command.env("ACC_DATA_HOME", &broken);
    let started = std::time::Instant::now();
    let run = world.run(command, "claude -p");
    assert_eq!(
        run.code, 0,
        "the client proceeds\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert!(
        model_text(&model).contains("still works?"),
        "the prompt reached the model"
    );
    assert!(
        !model_text(&model).contains("coordinated with ACC"),
        "nothing was injected"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

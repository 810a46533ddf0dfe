//! Gemini CLI 0.61.0, real, against a model API on loopback: `acc install --client gemini` into
//! the user's own settings, a peer's message in the very model request of the next turn, a
//! resumed conversation that stays one participant and does not see the message twice, and an
//! uninstall that gives the settings back byte for byte.

use acc_capture::model::GEMINI_SETTINGS;
use acc_capture::model::ModelServer;
use acc_tests::{World, gemini_print};
use serde_json::Value;

fn turn(world: &World, home: &std::path::Path, model: &ModelServer, prompt: &str, extra: &[&str]) {
    let run = world.run(gemini_print(world, home, model, prompt, extra), "gemini -p");
    assert_eq!(
        run.code, 0,
        "gemini failed\nstdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
}

/// Every session of `participant`, closed ones included.
fn sessions_of(world: &World, participant: &str) -> Vec<Value> {
    let status = world.acc(&["status", "--all"]).ok_json();
    status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter(|s| s["participantId"] == participant)
        .cloned()
        .collect()
}

/// `acc uninstall --client gemini`, then the settings file must be `expected` byte for byte.
fn uninstall_restores(world: &World, home: &str, settings: &std::path::Path, expected: &str) {
    world
        .acc(&["uninstall", "--client", "gemini", "--home", home])
        .ok_json();
    assert_eq!(
        std::fs::read_to_string(settings).expect("read"),
        expected,
        "uninstall gives the user's settings back byte for byte"
    );
}

/// Whether a Gemini session was opened (ACC's hooks ran in Gemini).
fn gemini_hooks_ran(world: &World) -> bool {
    let status = world.acc(&["status", "--all"]).ok_json();
    status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .any(|s| s["harness"] == "gemini")
}

/// The text of the model requests, each whole.
fn bodies(model: &ModelServer) -> Vec<String> {
    model.model_requests().into_iter().map(|r| r.body).collect()
}

#[test]
fn gemini_receives_a_peer_message_in_the_next_model_request_once_across_a_resume() {
    let world = World::new();
    let (home, settings) = acc_tests::gemini_home(&world, GEMINI_SETTINGS);
    let home_arg = home.to_str().expect("utf8");

    world
        .acc(&["install", "--client", "gemini", "--home", home_arg])
        .ok_json();
    let installed: Value =
        serde_json::from_slice(&std::fs::read(&settings).expect("read")).expect("json");
    assert_eq!(
        installed["security"]["auth"]["selectedType"], "gemini-api-key",
        "the user's settings stay"
    );
    for event in [
        "SessionStart",
        "BeforeAgent",
        "BeforeTool",
        "AfterAgent",
        "SessionEnd",
    ] {
        let command = installed["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("hooks.{event}: {installed}"));
        assert!(
            command.ends_with(&format!("hook gemini {event}")),
            "{command}"
        );
    }

    let session = "3f1c9a52-7d4e-4b8a-9c61-2e5f0a7b8d13";
    let participant = format!("gemini-{session}");
    let model = ModelServer::start();
    turn(&world, &home, &model, "hello", &["--session-id", session]);
    let sessions = sessions_of(&world, &participant);
    assert_eq!(sessions.len(), 1, "SessionStart opened {participant}");
    assert_eq!(sessions[0]["harness"], "gemini");
    let session_id = sessions[0]["sessionId"].clone();

    let alice = world.attach("alice");
    let sent = world.ask(
        &alice,
        &participant,
        "parser",
        "GEMINI-BODY: is the parser done?",
    );
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(sent["delivery"][0]["transport"], "durable", "{sent}");

    // The next turn, resumed: the message is in that turn's very model request, fenced.
    model.clear();
    turn(&world, &home, &model, "next", &["--resume", session]);
    let requests = bodies(&model);
    let targets: Vec<String> = model.requests().into_iter().map(|r| r.target).collect();
    let first = requests
        .first()
        .unwrap_or_else(|| panic!("a model request: {targets:?}"));
    assert!(
        first.contains("GEMINI-BODY") && first.contains("acc-peer-message"),
        "the message rides in the first request of the turn: {first:.2000}"
    );
    let receipt = world.receipt(&id);
    assert_eq!(receipt["state"], "offered", "{receipt}");
    assert_eq!(receipt["offer"]["transport"], "next-turn", "{receipt}");
    // Gemini CLI HTML-escapes hook context: ACC's own lines use no angle brackets, so the
    // commands the model reads are the commands it can type.
    let credentials: String = first
        .find("ACC: You are participant")
        .map(|at| first[at..].chars().take(700).collect())
        .unwrap_or_else(|| panic!("the credentials line in {first:.4000}"));
    assert!(
        credentials.contains("inbox --message MESSAGE_ID") && !credentials.contains("&lt;"),
        "the credentials line reaches the model as written: {credentials}"
    );

    // Resumed again: the same participant and session, and the message is not shown twice.
    model.clear();
    turn(&world, &home, &model, "and now?", &["--resume", session]);
    let same = sessions_of(&world, &participant);
    assert_eq!(same.len(), 1, "{same:?}");
    assert_eq!(
        same[0]["sessionId"], session_id,
        "the resumed session is the same"
    );
    for body in bodies(&model) {
        assert!(
            body.matches(&format!("message={id} ")).count() <= 1,
            "the message is shown at most once: {body:.2000}"
        );
    }
    assert!(
        bodies(&model)
            .iter()
            .all(|b| b.matches("GEMINI-BODY").count() <= 1),
        "never twice in one request"
    );

    uninstall_restores(&world, home_arg, &settings, GEMINI_SETTINGS);
}

/// The user's own settings: their hooks, their own `acc` MCP server, tabs for indentation.
const USERS_OWN: &str = "{\n\t\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n\t\"privacy\": {\"usageStatisticsEnabled\": false},\n\t\"general\": {\"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false},\n\t\"telemetry\": {\"enabled\": false},\n\t\"hooks\": {\"BeforeTool\": [{\"matcher\": \"write_file\", \"hooks\": [{\"name\": \"mine\", \"type\": \"command\", \"command\": \"/usr/bin/true\", \"timeout\": 1000}]}]},\n\t\"mcpServers\": {\"acc\": {\"command\": \"/opt/mine/acc-mcp\"}}\n}\n";

#[test]
fn gemini_install_keeps_the_users_entries_and_their_later_edits() {
    let world = World::new();
    let (home, settings) = acc_tests::gemini_home(&world, USERS_OWN);
    let home_arg = home.to_str().expect("utf8");
    let install = |extra: &[&str]| {
        let mut args = vec!["install", "--client", "gemini", "--home", home_arg];
        args.extend_from_slice(extra);
        world.acc(&args)
    };

    // The user's own `acc` server is never taken: refused, naming it, nothing changed.
    for dry in [&["--mcp", "--dry-run"][..], &["--mcp"][..]] {
        let error = install(dry).err(4, "invalid_data");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("mcpServers.acc exists")),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&settings).expect("read"), USERS_OWN);
    }
    world
        .acc(&[
            "install",
            "--client",
            "claude-code",
            "--home",
            home_arg,
            "--mcp-trust",
            "--mcp",
        ])
        .err(2, "invalid_arguments");
    // A live consent would enable nothing for Gemini: refused, not recorded.
    let refused = install(&["--delivery", "all"]).err(2, "invalid_arguments");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("through next-turn")),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), USERS_OWN);

    install(&["--mcp", "--mcp-name", "acc-coordination", "--mcp-trust"]).ok_json();
    let text = std::fs::read_to_string(&settings).expect("read");
    assert!(
        text.starts_with("{\n\t\"security\": {\"auth\""),
        "the user's layout stays: {text}"
    );
    let installed: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        installed["mcpServers"]["acc"]["command"],
        "/opt/mine/acc-mcp"
    );
    assert_eq!(installed["mcpServers"]["acc-coordination"]["trust"], true);
    let before_tool = installed["hooks"]["BeforeTool"].as_array().expect("groups");
    assert_eq!(
        before_tool.len(),
        2,
        "the user's hook and acc's: {before_tool:?}"
    );
    assert_eq!(before_tool[0]["hooks"][0]["name"], "mine");

    // Gemini loads the file ACC wrote, and ACC's hooks run in it.
    let model = ModelServer::start();
    turn(&world, &home, &model, "hello", &[]);
    assert!(gemini_hooks_ran(&world), "Gemini ran ACC's hooks");

    // The user edits the file afterwards; uninstall keeps the edit and their own entries.
    let mut edited = installed.clone();
    edited["ui"] = serde_json::json!({ "theme": "Dracula" });
    std::fs::write(
        &settings,
        serde_json::to_string_pretty(&edited).expect("json"),
    )
    .expect("edit");
    world
        .acc(&["uninstall", "--client", "gemini", "--home", home_arg])
        .ok_json();
    let after: Value =
        serde_json::from_slice(&std::fs::read(&settings).expect("read")).expect("json");
    let mut expected: Value = serde_json::from_str(USERS_OWN).expect("json");
    expected["ui"] = serde_json::json!({ "theme": "Dracula" });
    assert_eq!(after, expected, "only acc's entries went");
}

/// Gemini CLI reads its settings with `//` and `/* */` comments (the turn below runs only when
/// the commented `security.auth` is read), so ACC edits them as they are, comments kept.
#[test]
fn gemini_settings_with_comments_are_edited_in_place_and_given_back() {
    let world = World::new();
    let home = world.temp.path().join("home");
    let settings = home.join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("dir");
    let commented = GEMINI_SETTINGS.replacen(
        "{\n",
        "{\n  // my settings, by hand\n  /* keep this block */\n",
        1,
    );
    std::fs::write(&settings, &commented).expect("settings");
    let home_arg = home.to_str().expect("utf8");
    world
        .acc(&["install", "--client", "gemini", "--home", home_arg, "--mcp"])
        .ok_json();
    let text = std::fs::read_to_string(&settings).expect("read");
    assert!(
        text.contains("// my settings, by hand") && text.contains("/* keep this block */"),
        "{text}"
    );
    let doctor = world.acc(&["doctor", "--home", home_arg]).json();
    assert!(
        doctor["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .all(
                |c| !(c["name"].as_str().unwrap_or("").contains("settings.json")
                    && c["status"] == "error")
            ),
        "doctor reads the commented file as Gemini does: {doctor}"
    );
    let model = ModelServer::start();
    turn(&world, &home, &model, "hello", &[]);
    assert!(
        gemini_hooks_ran(&world),
        "Gemini ran ACC's hooks from the commented file"
    );
    uninstall_restores(&world, home_arg, &settings, &commented);
}

/// An install killed at any moment (it pauses between its steps) leaves a settings file Gemini
/// loads, and the next uninstall gives the user's bytes back with nothing left behind.
#[test]
fn a_gemini_install_killed_at_any_point_leaves_a_file_gemini_loads_and_undoable() {
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7);
    eprintln!("seed {seed}");
    for round in 0..4 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let world = World::new();
        let (home, settings) = acc_tests::gemini_home(&world, USERS_OWN);
        let home_arg = home.to_str().expect("utf8");
        let mut command = world.command("acc");
        command
            .args([
                "--json", "install", "--client", "gemini", "--home", home_arg,
            ])
            .args(["--mcp", "--mcp-name", "acc-coordination"])
            .env("ACC_TEST_INSTALL_PAUSE_MS", "150")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = command.spawn().expect("spawn");
        std::thread::sleep(std::time::Duration::from_millis((seed >> 33) % 600));
        acc_tests::kill_pid(child.id());
        let _ = child.wait();
        let step = format!("round {round}");
        // Gemini loads whatever is there now.
        let model = ModelServer::start();
        turn(&world, &home, &model, "hello", &[]);
        uninstall_restores(&world, home_arg, &settings, USERS_OWN);
        let litter: Vec<String> = std::fs::read_dir(settings.parent().expect("dir"))
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".acc-install-"))
            .collect();
        assert!(litter.is_empty(), "{step}: left behind {litter:?}");
    }
}

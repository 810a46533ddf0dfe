//! Workspace discovery and `acc config` through the real binary.

use std::process::Command;

use acc_tests::World;

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn all_worktrees_of_a_repository_are_one_room() {
    let world = World::new();
    git(&world.dir, &["init", "-q", "-b", "main"]);
    git(&world.dir, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let linked = world.temp.path().join("linked");
    git(
        &world.dir,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            linked.to_str().expect("utf8"),
        ],
    );
    std::fs::create_dir_all(linked.join("src")).expect("mkdir");

    let alice = world.attach("alice");
    world
        .acc_as(&alice, &["claim", "--resource", "file:src/a.rs"])
        .ok_json();
    let from_linked = world
        .acc(&[
            "--cwd",
            linked.join("src").to_str().expect("utf8"),
            "status",
        ])
        .ok_json();
    assert_eq!(from_linked["workspace"]["identitySource"], "git");
    assert_eq!(
        from_linked["workspace"]["workspaceId"],
        world.workspace_id()
    );
    assert_eq!(
        from_linked["claims"].as_array().map(Vec::len),
        Some(1),
        "the same room"
    );

    let bob = world
        .acc(&[
            "--cwd",
            linked.to_str().expect("utf8"),
            "attach",
            "--participant",
            "bob",
        ])
        .ok_json();
    let status = world.acc(&["status"]).ok_json();
    let bob_session = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["sessionId"] == bob["sessionId"])
        .cloned()
        .expect("bob");
    assert_eq!(bob_session["branch"], "feature");
    let alice_session = status["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["participantId"] == "alice")
        .cloned()
        .expect("alice");
    assert_eq!(alice_session["branch"], "main");
}

#[test]
fn config_init_previews_asks_and_never_overwrites() {
    let world = World::new();
    let path = world.dir.join("acc.workspace.json");
    let preview = world.acc(&["config", "init"]).err(2, "consent_required");
    assert!(
        preview["details"]["content"]["workspaceId"].is_string(),
        "{preview}"
    );
    assert!(!path.exists(), "nothing written without consent");
    let text = world.acc_text(&["config", "init"]);
    assert_eq!(text.code, 2);
    assert!(
        text.stderr.contains("schemaVersion") && text.stderr.contains("--yes"),
        "{}",
        text.stderr
    );

    let derived = world.workspace_id();
    let written = world.acc(&["config", "init", "--yes"]).ok_json();
    assert_eq!(written["written"], true);
    let bytes = std::fs::read(&path).expect("written");
    let config: serde_json::Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(config["schemaVersion"], 1);
    assert_eq!(
        config["workspaceId"],
        derived.as_str(),
        "the room keeps its id"
    );
    assert_eq!(world.status()["workspace"]["identitySource"], "config");

    world
        .acc(&["config", "init", "--yes"])
        .err(4, "config_exists");
    assert_eq!(
        std::fs::read(&path).expect("kept"),
        bytes,
        "never overwritten"
    );
    let valid = world.acc(&["config", "validate"]).ok_json();
    assert_eq!(valid["valid"], true);
    assert_eq!(valid["policy"]["contextBudgetBytes"], 6000);
}

/// What the README tells a user to run for a guarded room: `acc config init --claim-policy
/// guarded` writes the policy, `acc config validate` reads it back, status says the room is
/// guarded, and an exclusive claim then stops another hooked session's write. A policy it does
/// not know is refused by name and writes nothing.
#[test]
fn config_init_with_the_guarded_claim_policy_makes_claims_stop_writes() {
    let world = World::new();
    let path = world.dir.join("acc.workspace.json");
    let refused = world.acc_text(&["config", "init", "--yes", "--claim-policy", "strict"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("strict") && refused.stderr.contains("guarded"),
        "{}",
        refused.stderr
    );
    assert!(!path.exists(), "a refused policy writes nothing");

    let written = world
        .acc(&["config", "init", "--yes", "--claim-policy", "guarded"])
        .ok_json();
    assert_eq!(written["written"], true, "{written}");
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("written")).expect("json");
    assert_eq!(config["policy"]["claimMode"], "guarded", "{config}");
    let valid = world.acc(&["config", "validate"]).ok_json();
    assert_eq!(valid["valid"], true, "{valid}");
    assert_eq!(valid["policy"]["claimMode"], "guarded", "{valid}");

    std::fs::write(world.dir.join("notes.md"), "mine").expect("file");
    let bob = world.attach("bob");
    let claimed = world
        .acc_as(&bob, &["claim", "--resource", "file:notes.md"])
        .ok_json();
    assert_eq!(claimed["claims"][0]["enforcement"], "guarded", "{claimed}");
    let payload = serde_json::json!({
        "session_id": "alice-conversation",
        "cwd": world.dir,
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": { "file_path": world.dir.join("notes.md"), "content": "theirs" },
    });
    let run = world.hook("claude-code", "PreToolUse", &payload.to_string());
    assert!(
        run.stdout.contains("\"permissionDecision\":\"deny\"") && run.stdout.contains("by bob"),
        "{run:?}"
    );
    // Bob is a person at a shell, whom no hook stops: the room says so rather than "guarded".
    let status = world.status();
    assert_eq!(status["workspace"]["protection"], "advisory", "{status}");
    assert!(
        status["workspace"]["protectionNote"].is_string(),
        "{status}"
    );
}

#[test]
fn config_init_refuses_while_sessions_are_attached() {
    let world = World::new();
    world.attach("alice");
    world
        .acc(&["config", "init", "--yes"])
        .err(5, "sessions_attached");
    assert!(!world.dir.join("acc.workspace.json").exists());
    world.acc(&["config", "init", "--yes", "--force"]).ok_json();
    assert!(world.dir.join("acc.workspace.json").exists());
}

#[test]
fn config_validate_names_what_is_wrong_and_only_reads() {
    let world = World::new();
    world.acc(&["config", "validate"]).err(2, "invalid_config");
    let path = world.dir.join("acc.workspace.json");
    for (text, needle) in [
        (
            r#"{"schemaVersion":1,"workspaceId":"w","theme":"dark"}"#,
            "unknown key `theme`",
        ),
        (
            r#"{"schemaVersion":1,"workspaceId":"w","claims":[]}"#,
            "`claims` is runtime state",
        ),
        (r#"{"schemaVersion":3,"workspaceId":"w"}"#, "must be 1"),
        (
            r#"{"schemaVersion":1,"workspaceId":"w","roots":["a/../../b"]}"#,
            "escapes",
        ),
    ] {
        std::fs::write(&path, text).expect("write");
        let error = world.acc(&["config", "validate"]).err(2, "invalid_config");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains(needle),
            "{needle}: {error}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            text,
            "validate only reads"
        );
        world.acc(&["status"]).err(2, "invalid_config");
    }
    std::fs::remove_file(&path).expect("rm");
    let elsewhere = world.temp.path().join("real.json");
    std::fs::write(&elsewhere, r#"{"schemaVersion":1,"workspaceId":"w"}"#).expect("write");
    std::os::unix::fs::symlink(&elsewhere, &path).expect("symlink");
    let error = world.acc(&["config", "validate"]).err(2, "invalid_config");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("symlink")
    );
    world
        .acc(&["attach", "--participant", "alice"])
        .err(2, "invalid_config");
}

#[test]
fn workspace_root_variable_must_be_absolute_and_is_used() {
    let world = World::new();
    let other = world.temp.path().join("elsewhere");
    std::fs::create_dir_all(&other).expect("mkdir");
    let here = world.workspace_id();
    let there = world
        .acc_with(
            &["status"],
            &[("ACC_WORKSPACE_ROOT", other.to_str().expect("utf8"))],
        )
        .ok_json();
    assert_ne!(there["workspace"]["workspaceId"], here.as_str());
    world
        .acc_with(&["status"], &[("ACC_WORKSPACE_ROOT", "rel")])
        .err(2, "invalid_arguments");
    let flag = world
        .acc(&["--workspace", other.to_str().expect("utf8"), "status"])
        .ok_json();
    assert_eq!(
        flag["workspace"]["workspaceId"],
        there["workspace"]["workspaceId"]
    );
}

/// A program the harness runs sees its own directory in `PWD`, as a shell would set it: OpenCode
/// takes its project from `PWD`, and with the test process's own it walked this repository
/// instead of the project and never reached its model.
#[test]
fn a_program_the_harness_runs_sees_its_directory_in_pwd() {
    let world = World::new();
    let mut command = world.command_path("env");
    let run = world.run(
        {
            command.env_remove("OLDPWD");
            command
        },
        "env",
    );
    let pwd = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("PWD="))
        .unwrap_or_else(|| panic!("PWD in {}", run.stdout));
    assert_eq!(std::path::Path::new(pwd), world.dir.as_path());
}

//! The CLI contract: credentials, exit codes, error objects, help without a workspace, sync pages.

use acc_tests::World;

#[test]
fn mutations_need_owner_credentials() {
    let world = World::new();
    for args in [
        vec!["claim", "--resource", "file:a"],
        vec!["release", "--all"],
        vec!["work", "--clear"],
    ] {
        let error = world.acc(&args).err(2, "caller_identity_unresolved");
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("ACC_SESSION"),
            "{error}"
        );
    }
    let alice = world.attach("alice");
    let half = world.acc_with(
        &["claim", "--resource", "file:a"],
        &[("ACC_SESSION", &alice.session)],
    );
    half.err(2, "caller_identity_unresolved");
    // Flags work as well as the environment.
    world
        .acc(&[
            "claim",
            "--resource",
            "file:a",
            "--session",
            &alice.session,
            "--generation",
            &alice.generation,
        ])
        .ok_json();
    // status and sync are public.
    world.acc(&["status"]).ok_json();
    world.acc(&["sync"]).ok_json();
}

#[test]
fn a_stale_generation_is_refused_and_changes_nothing() {
    let world = World::new();
    let alice = world.attach("alice");
    world
        .acc_as(&alice, &["claim", "--resource", "file:a"])
        .ok_json();
    let reopened = world
        .acc(&[
            "attach",
            "--participant",
            "alice",
            "--resume",
            &alice.session,
        ])
        .ok_json();
    assert_eq!(reopened["sessionId"], alice.session.as_str());
    assert_eq!(reopened["resumed"], true);
    assert_eq!(reopened["generationNumber"], 2);
    assert_ne!(reopened["generation"], alice.generation.as_str());
    let before = world.acc(&["sync", "--limit", "500"]).ok_json()["events"]
        .as_array()
        .map(Vec::len);

    world
        .acc_as(&alice, &["claim", "--resource", "file:b"])
        .err(5, "generation_stale");
    world
        .acc_as(&alice, &["release", "--all"])
        .err(5, "generation_stale");
    world
        .acc_as(&alice, &["work", "--summary", "x", "--mode", "edit"])
        .err(5, "generation_stale");
    let after = world.acc(&["sync", "--limit", "500"]).ok_json()["events"]
        .as_array()
        .map(Vec::len);
    assert_eq!(before, after, "refusals append nothing");
    let status = world.status();
    assert_eq!(status["claims"].as_array().map(Vec::len), Some(1));

    let fresh = acc_tests::Creds {
        participant: "alice".into(),
        session: alice.session.clone(),
        generation: reopened["generation"].as_str().expect("token").into(),
    };
    world
        .acc_as(&fresh, &["claim", "--resource", "file:b"])
        .ok_json();

    let stranger = acc_tests::Creds {
        participant: "x".into(),
        session: "session_AAAAAAAAAAAAAAAAAAAAAA".into(),
        generation: "gen_x".into(),
    };
    world
        .acc_as(&stranger, &["claim", "--resource", "file:c"])
        .err(5, "caller_workspace_mismatch");
    world
        .acc(&["attach", "--participant", "bob", "--resume", &alice.session])
        .err(5, "caller_workspace_mismatch");
}

#[test]
fn status_never_prints_generations() {
    let world = World::new();
    let alice = world.attach("alice");
    let status = world.acc(&["status", "--all"]);
    assert!(!status.stdout.contains(&alice.generation));
    let text = world.acc_text(&["status"]);
    assert!(!text.stdout.contains(&alice.generation));
    let full = world.acc(&["sync", "--scope", "full"]);
    assert!(!full.stdout.contains(&alice.generation));
    assert!(
        !full.stdout.contains(&token_hash(&alice.generation)),
        "not even the hash"
    );
}

fn token_hash(token: &str) -> String {
    // The store keeps SHA-256 of the token; it must not leak through sync either.
    use std::process::Command;
    let out = Command::new("sh")
        .arg("-c")
        .arg("printf %s \"$1\" | sha256sum | cut -d' ' -f1")
        .arg("sh")
        .arg(token)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn help_needs_no_workspace() {
    let world = World::new();
    std::fs::write(world.dir.join("acc.workspace.json"), "{ broken").expect("write");
    for args in [
        vec!["help", "claim"],
        vec!["claim", "--help"],
        vec!["--help"],
        vec!["help"],
    ] {
        let run = world.acc_text(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(run.stdout.contains("Usage"), "{args:?}: {}", run.stdout);
    }
    let version = world.acc_text(&["--version"]);
    assert_eq!(version.code, 0);
    assert!(version.stdout.starts_with("acc "));
    // A command that needs the workspace reports the broken config by name.
    let error = world.acc(&["status"]).err(2, "invalid_config");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not valid json")
    );
}

#[test]
fn usage_errors_are_exit_2_with_a_json_error() {
    let world = World::new();
    world.acc(&["no-such-command"]).err(2, "invalid_arguments");
    world.acc(&["claim"]).err(2, "invalid_arguments");
    let text = world.acc_text(&["claim", "--bogus"]);
    assert_eq!(text.code, 2);
    assert!(text.stderr.contains("--bogus"));
    assert!(text.stdout.is_empty());
}

/// The rules themselves are in the scenario tests (in process); here the `acc` process maps
/// each family of refusal to its exit code with the error object on stdout.
#[test]
fn refusals_exit_with_their_codes() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    world
        .acc_as(&alice, &["claim", "--resource", "file:a.rs"])
        .ok_json();
    world
        .acc_as(&bob, &["claim", "--resource", "file:a.rs"])
        .err(5, "claim_conflict");
    world
        .acc_as(&bob, &["claim", "--renew", "claim_doesnotexist"])
        .err(4, "claim_not_found");
    world
        .acc_as(&bob, &["inbox", "--cursor", "not-a-message"])
        .err(2, "invalid_cursor");
    world
        .acc_as(
            &bob,
            &["message", "--to", "nobody", "--subject", "s", "--body", "b"],
        )
        .err(4, "unknown_participant");
}

#[test]
fn sync_pages_events_after_a_cursor() {
    let world = World::new();
    let alice = world.attach("alice");
    for i in 0..5 {
        world
            .acc_as(&alice, &["claim", "--resource", &format!("file:f{i}")])
            .ok_json();
    }
    let all = world.acc(&["sync"]).ok_json();
    let events = all["events"].as_array().expect("events");
    assert_eq!(events.len(), 7, "participant, session, five claims: {all}");
    assert_eq!(all["hasMore"], false);
    let page = world.acc(&["sync", "--limit", "3"]).ok_json();
    assert_eq!(page["events"].as_array().map(Vec::len), Some(3));
    assert_eq!(page["hasMore"], true);
    assert_eq!(page["nextCursor"], "0000000000000003");
    let rest = world
        .acc(&["sync", "--cursor", "0000000000000003"])
        .ok_json();
    let cursors: Vec<&str> = rest["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["cursor"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        cursors,
        vec![
            "0000000000000004",
            "0000000000000005",
            "0000000000000006",
            "0000000000000007"
        ]
    );
    let empty = world
        .acc(&["sync", "--cursor", "0000000000000007"])
        .ok_json();
    assert_eq!(empty["nextCursor"], "0000000000000007");
    assert_eq!(empty["events"].as_array().map(Vec::len), Some(0));

    world
        .acc(&["sync", "--cursor", "12"])
        .err(2, "invalid_arguments");
    world
        .acc(&["sync", "--limit", "0"])
        .err(2, "invalid_arguments");
    world
        .acc(&["sync", "--limit", "501"])
        .err(2, "invalid_arguments");
    world
        .acc(&["sync", "--scope", "sideways"])
        .err(2, "invalid_arguments");
    world
        .acc(&["sync", "--kind", "note"])
        .err(2, "invalid_arguments");
    world
        .acc(&["sync", "--current"])
        .err(2, "invalid_arguments");

    let full = world.acc(&["sync", "--scope", "full"]).ok_json();
    assert_eq!(full["scope"], "full");
    assert_eq!(full["snapshot"]["claims"].as_array().map(Vec::len), Some(5));
    assert_eq!(
        full["snapshot"]["sessions"].as_array().map(Vec::len),
        Some(1)
    );
}

/// Shell completions come from the parser's own definitions, and load in the real shells: in
/// bash and fish (asked for the completions of a line) and in an interactive zsh at a terminal
/// (Tab pressed), `acc sta` completes to `status` and `acc claim --mo` to `--mode`; the hidden
/// `hook` command is never offered. PowerShell's and Elvish's scripts name the same commands (no
/// pwsh or elvish here to load them).
#[test]
fn completions_come_from_the_command_definitions() {
    let world = World::new();
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let script = |shell: &str| {
        let path = world.temp.path().join(format!("acc.{shell}"));
        let run = world.acc_text(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run:?}");
        assert!(
            !run.stdout
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == "hook"),
            "{shell} offers the hidden hook command"
        );
        std::fs::write(&path, &run.stdout).expect("script");
        path
    };

    // bash: the completion function, called as bash calls it.
    let bash_script = script("bash");
    let bash = |line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        let program = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; _acc acc '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            bash_script.display(),
            words.join(" "),
            words.len() - 1,
            line.len(),
            words[words.len() - 1],
            words[words.len().saturating_sub(2)]
        );
        let mut command = world.command_path("bash");
        command.args(["--norc", "-c", &program]).env("HOME", &home);
        world.run(command, "bash completion").stdout
    };
    assert!(bash("acc sta").lines().any(|l| l == "status"));
    assert!(bash("acc claim --mo").lines().any(|l| l == "--mode"));
    assert!(!bash("acc ho").lines().any(|l| l == "hook"));
    // Options that take one of a few values complete those values, not file names.
    let clients: Vec<String> = bash("acc install --client ")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        clients,
        ["claude-code", "codex", "gemini", "qwen", "opencode", "kimi"],
        "{clients:?}"
    );
    let consents: Vec<String> = bash("acc install --client codex --delivery ")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(consents, ["off", "actionable", "all"], "{consents:?}");
    assert_eq!(
        bash("acc uninstall --client ").lines().count(),
        acc_clients::Client::ALL.len(),
        "uninstall completes the clients too"
    );

    // fish: `complete -C` answers what Tab would offer.
    let fish_script = script("fish");
    let fish = |line: &str| {
        let mut command = world.command_path("fish");
        command
            .args([
                "--no-config",
                "-c",
                &format!("source {}; complete -C '{line}'", fish_script.display()),
            ])
            .env("HOME", &home);
        let run = world.run(command, "fish completion");
        assert_eq!(run.code, 0, "{run:?}");
        run.stdout
    };
    let commands = fish("acc sta");
    assert!(
        commands.lines().any(|l| l.starts_with("status\t")),
        "{commands}"
    );
    let options = fish("acc claim --mo");
    assert!(
        options.lines().any(|l| l.starts_with("--mode")),
        "{options}"
    );
    assert!(!fish("acc ho").lines().any(|l| l.starts_with("hook")));

    // zsh: an interactive shell with compinit, at a terminal; Tab completes the line in place.
    let zsh_script = script("zsh");
    let mut template = world.command("acc");
    template.env("HOME", &home).env("ZDOTDIR", &home);
    let terminal =
        acc_tests::Terminal::start(&template, 100, 20, std::path::Path::new("zsh"), &["-f"]);
    terminal.type_text(&format!(
        "autoload -Uz compinit && compinit -u && source {} && echo ready",
        zsh_script.display()
    ));
    terminal.keys(&["Enter"]);
    terminal.wait_for("zsh with the completions", |s| {
        s.lines().any(|l| l.trim() == "ready")
    });
    terminal.type_text("acc sta");
    terminal.keys(&["Tab"]);
    terminal.wait_for("acc sta completed", |s| s.contains("acc status"));
    terminal.keys(&["C-u"]);
    terminal.type_text("acc claim --mo");
    terminal.keys(&["Tab"]);
    terminal.wait_for("--mo completed", |s| s.contains("acc claim --mode"));
    terminal.keys(&["C-u"]);

    for shell in ["powershell", "elvish"] {
        let run = world.acc_text(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run:?}");
        for word in ["status", "claim", "inbox", "install", "watch"] {
            assert!(run.stdout.contains(word), "{shell} names {word}");
        }
    }
    let help = world.acc_text(&["--help"]);
    assert!(
        !help
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with("hook ")),
        "the internal hook command is not listed: {}",
        help.stdout
    );
    let refused = world.acc_text(&["completions", "tcsh"]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("possible values"),
        "{}",
        refused.stderr
    );
}

/// A reader that stops early (`acc completions bash | head -1`) is no error: no panic, no
/// backtrace, exit 0, as for every other command. `acc man` alone prints the page of `acc`, and
/// `acc --help` opens with what ACC does for its user.
#[test]
fn completions_into_a_closed_pipe_and_man_without_a_folder() {
    let world = World::new();
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["man"],
        &["--help"],
    ] {
        // The reading end is closed before acc starts: its first write fails (EPIPE).
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let mut command = world.command("acc");
        command
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped());
        let child = command.spawn().expect("spawn acc");
        let output =
            acc_tests::wait_with_deadline(child, std::time::Duration::from_secs(30), "acc");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(0),
            "acc {args:?} into a closed pipe: {stderr}"
        );
        assert!(
            !stderr.contains("panicked") && !stderr.contains("backtrace"),
            "acc {args:?}: {stderr}"
        );
    }
    let page = world.acc_text(&["man"]);
    assert_eq!(page.code, 0, "{page:?}");
    assert!(
        page.stdout.starts_with(".ie") || page.stdout.contains(".TH acc 1"),
        "{}",
        page.stdout
    );
    assert!(
        page.stdout.contains(".SH NAME"),
        "a manual page: {}",
        page.stdout
    );
    let help = world.acc_text(&["--help"]);
    let first = help.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Coordinate AI coding agents and people in one repository"),
        "{first}"
    );
}

#[test]
fn acc_mcp_answers_version_and_help_and_refuses_anything_else() {
    let world = World::new();
    let version = world.run(
        {
            let mut c = world.command("acc-mcp");
            c.arg("--version");
            c
        },
        "acc-mcp --version",
    );
    assert_eq!(version.code, 0, "{version:?}");
    assert_eq!(
        version.stdout.trim(),
        format!("acc-mcp {}", env!("CARGO_PKG_VERSION"))
    );
    let help = world.run(
        {
            let mut c = world.command("acc-mcp");
            c.arg("--help");
            c
        },
        "acc-mcp --help",
    );
    assert_eq!(help.code, 0);
    assert!(
        help.stdout.contains("ACC_MCP_PARTICIPANT"),
        "{}",
        help.stdout
    );
    let other = world.run(
        {
            let mut c = world.command("acc-mcp");
            c.arg("--verbose");
            c
        },
        "acc-mcp --verbose",
    );
    assert_eq!(other.code, 2);
    assert!(other.stderr.contains("takes no command-line arguments"));
}

/// `acc attach` in a shell that already speaks for the participant keeps that session (no
/// second live session of one participant); `acc detach` closes it without a handoff, keeping
/// its claims unless asked to release them, and says which.
#[test]
fn attach_keeps_this_shells_session_and_detach_closes_it() {
    let world = World::new();
    let alice = world.attach("alice");
    let again = world
        .acc_as(&alice, &["attach", "--participant", "alice"])
        .ok_json();
    assert_eq!(again["sessionId"], alice.session.as_str());
    assert_eq!(again["generation"], alice.generation.as_str());
    // Another participant, or no credentials, opens a new session as before.
    let bob = world
        .acc_as(&alice, &["attach", "--participant", "bob"])
        .ok_json();
    assert_ne!(bob["sessionId"], alice.session.as_str());
    let open = |who: &str| {
        world.status()["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .filter(|s| s["participantId"] == who)
            .count()
    };
    assert_eq!(open("alice"), 1, "one live session of alice");

    world
        .acc_as(&alice, &["claim", "--resource", "file:a.rs"])
        .ok_json();
    let detached = world.acc_as(&alice, &["detach"]).ok_json();
    assert_eq!(detached["closed"], true);
    assert_eq!(detached["keptClaims"], 1);
    assert_eq!(open("alice"), 0);
    assert_eq!(
        world.status()["claims"].as_array().map(Vec::len),
        Some(1),
        "the claim stays"
    );
    // The closed session's credentials act no more.
    world.acc_as(&alice, &["detach"]).err(5, "generation_stale");

    let carol = world.attach("carol");
    world
        .acc_as(&carol, &["claim", "--resource", "file:c.rs"])
        .ok_json();
    let text = world.acc_as(&carol, &["detach", "--release-claims"]);
    let value = text.ok_json();
    assert_eq!(value["releasedClaims"].as_array().map(Vec::len), Some(1));
    assert_eq!(value["keptClaims"], 0);
}

/// `acc sync --follow --json` streams each new event as one line while other processes work,
/// reading the event cursor (nothing written); the human event lines say what happened.
#[test]
fn sync_follow_streams_events_as_they_happen_and_lines_say_what_happened() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("bob");
    let mut follower = world.follower(&alice);
    // Events from now on: the message and the claim, each a line.
    world.ask(&alice, "bob", "which store?", "sqlite?");
    world
        .acc_as(&alice, &["claim", "--resource", "file:src/parser.rs"])
        .ok_json();
    let message = follower.wait_for(
        |v| v["type"] == "message.recorded",
        std::time::Duration::from_secs(20),
    );
    assert_eq!(message["data"]["toParticipantIds"][0], "bob", "{message}");
    let claim = follower.wait_for(
        |v| v["type"] == "claim.acquired",
        std::time::Duration::from_secs(20),
    );
    assert_eq!(claim["data"]["resource"], "file:src/parser.rs", "{claim}");
    assert!(
        !follower.seen.iter().any(|l| l.contains("session.opened")),
        "it starts from now: {:?}",
        follower.seen
    );
    acc_tests::kill_pid(follower.child.0.id());

    let lines = world.acc_text(&["sync", "--cursor", "0000000000000000"]);
    assert!(
        lines
            .stdout
            .lines()
            .any(|l| l.contains("message.recorded alice to bob question message_")),
        "{}",
        lines.stdout
    );
    assert!(
        lines
            .stdout
            .lines()
            .any(|l| l.contains("claim.acquired alice file:src/parser.rs")),
        "{}",
        lines.stdout
    );
    let refused = world.acc_text(&["sync", "--follow", "--scope", "full"]);
    assert_eq!(refused.code, 2, "{refused:?}");
}

/// Each command's help shows its own options, and the global ones under their own heading.
#[test]
fn help_shows_a_commands_own_options_and_the_global_ones_apart() {
    let world = World::new();
    let uninstall = world.acc_text(&["uninstall", "--help"]);
    assert_eq!(uninstall.code, 0);
    for install_only in ["--delivery", "--mcp", "--mcp-name", "--mcp-trust"] {
        assert!(
            !uninstall.stdout.contains(install_only),
            "uninstall offers {install_only}: {}",
            uninstall.stdout
        );
    }
    let status = world.acc_text(&["status", "--help"]);
    let (own, global) = status
        .stdout
        .split_once("Global options:")
        .unwrap_or_else(|| panic!("a global heading: {}", status.stdout));
    assert!(own.contains("--all") && !own.contains("--json"), "{own}");
    assert!(
        global.contains("--json") && global.contains("--session"),
        "{global}"
    );
}

/// Ids may be given as a unique prefix: at least 6 characters after `message_`, `claim_` or
/// `session_` (which may be left out). Too short, or matching several, is refused by name.
#[test]
fn ids_are_taken_by_a_unique_prefix_and_ambiguity_is_refused_with_the_candidates() {
    let world = World::new();
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let sent = world.ask(&alice, "bob", "which store?", "sqlite?");
    let id = sent["message"]["messageId"]
        .as_str()
        .expect("id")
        .to_string();
    let random = id.trim_start_matches("message_");
    for given in [format!("message_{}", &random[..6]), random[..8].to_string()] {
        let read = world
            .acc_as(&bob, &["inbox", "--message", &given])
            .ok_json();
        assert_eq!(read[0]["messageId"], id.as_str(), "{given}");
    }
    let short = world
        .acc_as(&bob, &["ack", "--message", &random[..5]])
        .err(2, "invalid_arguments");
    assert!(
        short["message"]
            .as_str()
            .is_some_and(|m| m.contains("too short") && m.contains("at least 6")),
        "{short}"
    );
    // Another kind's id is refused by name, as before.
    world
        .acc_as(&bob, &["release", "--claim", &id])
        .err(2, "invalid_arguments");

    // Two claims whose ids share a prefix (made in the store file, as ids are random).
    world
        .acc_as(&alice, &["claim", "--resource", "file:base.rs"])
        .ok_json();
    let conn = rusqlite::Connection::open(world.store_path()).expect("store");
    conn.execute_batch(
        "CREATE TEMP TABLE t AS SELECT * FROM claims;
         UPDATE t SET claim_id = 'claim_AAAAAAAAAAAAAAAAAAAAA1', resource = 'file:x1.rs';
         INSERT INTO claims SELECT * FROM t;
         UPDATE t SET claim_id = 'claim_AAAAAAAAAAAAAAAAAAAAA2', resource = 'file:x2.rs';
         INSERT INTO claims SELECT * FROM t;",
    )
    .expect("crafted claims");
    drop(conn);
    let ambiguous = world
        .acc_as(&alice, &["release", "--claim", "AAAAAAAA"])
        .err(2, "invalid_arguments");
    let message = ambiguous["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("claim_AAAAAAAAAAAAAAAAAAAAA1")
            && message.contains("claim_AAAAAAAAAAAAAAAAAAAAA2"),
        "{message}"
    );
    assert_eq!(
        world.status()["claims"].as_array().map(Vec::len),
        Some(3),
        "nothing was released"
    );
    world
        .acc_as(&alice, &["release", "--claim", "AAAAAAAAAAAAAAAAAAAAA2"])
        .ok_json();
}

/// Colour follows the conventions: `--color always|never`, and with `auto` (the default) a
/// terminal only, `CLICOLOR_FORCE` forcing it and `NO_COLOR` turning it off; JSON never.
#[test]
fn colour_follows_color_no_color_and_clicolor_force() {
    let world = World::new();
    world.attach("alice");
    let coloured = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = world.command("acc");
        command
            .args(args)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .envs(env.iter().copied());
        let run = world.run(command, "acc status");
        assert_eq!(run.code, 0, "{run:?}");
        run.stdout.contains('\u{1b}')
    };
    assert!(coloured(&["status", "--color", "always"], &[]));
    assert!(!coloured(&["status"], &[]), "auto: not a terminal here");
    assert!(!coloured(
        &["status", "--color", "never"],
        &[("CLICOLOR_FORCE", "1")]
    ));
    assert!(coloured(&["status"], &[("CLICOLOR_FORCE", "1")]));
    assert!(!coloured(
        &["status"],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
    ));
    assert!(!coloured(&["--json", "status", "--color", "always"], &[]));
}

/// `--json` is indented at a terminal (for a person reading it) and one compact line when piped
/// (for a program); both are the same value. The terminal is a real pseudo-terminal (`script`).
#[test]
fn json_is_pretty_at_a_terminal_and_compact_when_piped() {
    let world = World::new();
    world.attach("alice");
    let piped = world.acc(&["status"]);
    assert_eq!(
        piped.stdout.trim_end().lines().count(),
        1,
        "{}",
        piped.stdout
    );
    let acc = acc_tests::bin("acc");
    let mut command = world.command_path("script");
    command.args([
        "-qec",
        &format!("{} --json status", acc.display()),
        "/dev/null",
    ]);
    let terminal = world.run(command, "acc --json status at a terminal");
    assert_eq!(terminal.code, 0, "{terminal:?}");
    let text = terminal.stdout.replace("\r\n", "\n");
    assert!(text.lines().count() > 10, "indented: {text}");
    assert!(text.contains("\n  \"workspace\": {"), "{text}");
    let pretty: serde_json::Value = serde_json::from_str(&text).expect("the same JSON");
    let compact = piped.json();
    assert_eq!(pretty["workspace"], compact["workspace"]);
    assert_eq!(pretty["sessions"], compact["sessions"]);
}

/// Every `acc` command in the README's examples (its code blocks; a `$ ` prompt and a trailing
/// `# comment` aside) parses with the real argument definitions, so the README cannot drift
/// from the command line unseen.
#[test]
fn the_readmes_command_examples_parse() {
    use clap::Parser;
    let readme = std::fs::read_to_string(acc_tests::repo_root().join("README.md")).expect("README");
    let mut in_block = false;
    let mut checked = 0;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let command = line.trim_start().trim_start_matches("$ ");
        // A screen shown in a block (`acc watch · …`) is output, not a command.
        if !in_block || !command.starts_with("acc ") || command.contains('·') {
            continue;
        }
        let command = command.split("  #").next().unwrap_or(command).trim();
        let words = shlex::split(command).unwrap_or_else(|| panic!("quotes in {command}"));
        if let Err(error) = acc_cli::args::Cli::try_parse_from(&words) {
            panic!("README: `{command}` does not parse: {}", error.render());
        }
        checked += 1;
    }
    assert!(
        checked >= 10,
        "the README's examples were found ({checked})"
    );
}

/// `--to CLIENT` (a client's name, not a participant id): the one participant of that client
/// with a present session; with none present, the client's most recent participant here, whose
/// resumed conversation reads it; several present are refused with the candidates; a client
/// that never had a session is refused; and a client's name is never taken as the start of a
/// participant's id (`opencode-fan` is a person, not OpenCode).
#[test]
fn a_client_name_resolves_to_that_clients_most_recent_participant_and_never_to_an_id_prefix() {
    let world = World::new();
    let alice = world.attach("alice");
    world.attach("opencode-fan");
    let send = |to: &str| {
        world.acc_as(
            &alice,
            &["message", "--to", to, "--subject", "s", "--body", "b"],
        )
    };
    let refused = send("opencode").err(4, "unknown_participant");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("no participant of the client `opencode`")),
        "{refused}"
    );
    // Two Qwen Code conversations, one after the other, each ended: the later one is meant.
    let hook = |session: &str, event: &str| {
        let payload = serde_json::json!({ "session_id": session, "cwd": world.dir, "hook_event_name": event, "source": "startup", "reason": "other" });
        let run = world.hook("qwen", event, &payload.to_string());
        assert_eq!(run.code, 0, "{event}: {}", run.stderr);
    };
    hook("first", "SessionStart");
    hook("first", "SessionEnd");
    std::thread::sleep(std::time::Duration::from_millis(20));
    hook("second", "SessionStart");
    hook("second", "SessionEnd");
    let sent = send("qwen").ok_json();
    assert_eq!(
        sent["message"]["toParticipantIds"],
        serde_json::json!(["qwen-second"]),
        "{sent}"
    );
    // Present sessions come first: with the first conversation resumed, it is the one meant.
    let resume = serde_json::json!({ "session_id": "first", "cwd": world.dir, "hook_event_name": "SessionStart", "source": "resume" });
    assert_eq!(
        world.hook("qwen", "SessionStart", &resume.to_string()).code,
        0
    );
    let sent = send("qwen").ok_json();
    assert_eq!(
        sent["message"]["toParticipantIds"],
        serde_json::json!(["qwen-first"]),
        "{sent}"
    );
    // Both present: refused, naming both.
    let resume = serde_json::json!({ "session_id": "second", "cwd": world.dir, "hook_event_name": "SessionStart", "source": "resume" });
    assert_eq!(
        world.hook("qwen", "SessionStart", &resume.to_string()).code,
        0
    );
    let refused = send("qwen").err(4, "unknown_participant");
    let said = refused["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("qwen-first") && said.contains("qwen-second"),
        "{refused}"
    );
}

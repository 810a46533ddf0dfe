//! `acc watch` in a real terminal (tmux): what the screen shows of a room with several
//! participants, claims and messages; that it follows a message another process sends; that
//! its keys switch panes, filter by participant and open a message's summary without touching
//! its receipt; and that `q` quits cleanly (exit 0, the terminal's own screen back). At 120×40
//! and at 80×24. Not at a terminal it prints the status and then event lines.

use std::time::Duration;

use acc_tests::{Creds, Terminal, World, bin};

const CLAUDE: &str = "claude-code-7f3e9a21-4b8c-4d2e-9f10-aa55bb66cc77";

fn room() -> (World, Creds, Creds) {
    let world = World::new();
    let claude = world.attach(CLAUDE);
    let bob = world.attach("bob");
    let carol = world.attach("carol");
    world
        .acc_as(
            &claude,
            &[
                "work",
                "--summary",
                "splitting the parser",
                "--mode",
                "edit",
            ],
        )
        .ok_json();
    world
        .acc_as(
            &claude,
            &[
                "claim",
                "--resource",
                "file:src/parser/grammar/expressions.rs",
            ],
        )
        .ok_json();
    world
        .acc_as(&carol, &["claim", "--resource", "file:docs/guide.md"])
        .ok_json();
    world.ask(
        &carol,
        "bob",
        "Which branch for the release?",
        "main or next",
    );
    (world, claude, bob)
}

fn watch_at(width: u16, height: u16) {
    let (world, claude, bob) = room();
    let template = world.command("acc");
    let terminal = Terminal::start(&template, width, height, &bin("acc"), &["watch"]);

    // The room as it is.
    let screen = terminal.wait_for("the room", |s| {
        s.contains("sessions (3)") && s.contains("Which branch")
    });
    assert!(screen.contains("acc watch"), "{screen}");
    assert!(screen.contains("claude-code"), "{screen}");
    assert!(
        screen.contains("bob") && screen.contains("carol"),
        "{screen}"
    );
    assert!(
        screen.contains("expressions.rs"),
        "a claim's file name: {screen}"
    );
    assert!(screen.contains("splitting the"), "an intent: {screen}");
    assert!(
        screen.contains("attention"),
        "bob owes carol a reply: {screen}"
    );
    for line in screen.lines() {
        assert!(
            line.chars().count() <= usize::from(width),
            "a line wider than the terminal: {line}"
        );
    }

    // Another process sends: the view follows.
    let sent = world.tell(&claude, "bob", "Deploy window moved", "to 3pm");
    let message_id = sent["message"]["messageId"]
        .as_str()
        .expect("message id")
        .to_string();
    terminal.wait_for("the new message", |s| s.contains("Deploy window moved"));
    let receipt_before = world.receipt(&message_id);

    // The messages pane, its newest message opened: a summary, the receipt untouched.
    terminal.keys(&["3", "Enter"]);
    let popup = terminal.wait_for("the message summary", |s| s.contains("message (summary)"));
    assert!(popup.contains("needs none"), "{popup}");
    assert!(popup.contains("subject: Deploy window moved"), "{popup}");
    assert!(popup.contains("bob:"), "its receipt is listed: {popup}");
    assert!(
        !popup.contains("to 3pm"),
        "a summary, not the body: {popup}"
    );
    assert_eq!(
        world.receipt(&message_id),
        receipt_before,
        "watching changes no receipt"
    );
    terminal.keys(&["Escape"]);
    terminal.wait_for("the summary closed", |s| !s.contains("message (summary)"));

    // Filter by participant: `f` steps through them (bob first), Escape shows everyone.
    terminal.keys(&["f"]);
    let filtered = terminal.wait_for("bob only", |s| s.contains("showing bob"));
    assert!(filtered.contains("sessions (1)"), "{filtered}");
    assert!(
        !filtered.contains("expressions.rs"),
        "claude's claim is filtered out: {filtered}"
    );
    terminal.keys(&["Escape"]);
    terminal.wait_for("everyone again", |s| s.contains("showing everyone"));

    // Tab moves the focus; q quits cleanly and gives the terminal its screen back.
    terminal.keys(&["Tab", "q"]);
    assert_eq!(terminal.exit_status(), 0, "{}", terminal.screen());
    let after = terminal.screen();
    assert!(
        !after.contains("sessions (3)"),
        "the alternate screen was left: {after}"
    );
    // Bob's inbox is as it was: both messages still unresolved.
    let inbox = world.acc_as(&bob, &["inbox"]).ok_json();
    assert_eq!(inbox["items"].as_array().map(Vec::len), Some(2), "{inbox}");
}

#[test]
fn watch_shows_the_room_follows_it_and_quits_cleanly() {
    watch_at(120, 40);
}

#[test]
fn watch_works_in_80_by_24() {
    watch_at(80, 24);
}

/// A terminal a few rows high, and one resized smaller still: the view draws what fits and
/// quits cleanly (a height split once panicked under 16 rows).
#[test]
fn watch_fits_a_tiny_terminal_and_a_resize() {
    let (world, _claude, _bob) = room();
    let template = world.command("acc");
    let terminal = Terminal::start(&template, 40, 16, &bin("acc"), &["watch"]);
    let screen = terminal.wait_for("the view", |s| s.contains("acc watch"));
    assert!(
        screen.contains("sessions (3)"),
        "sessions come first: {screen}"
    );
    terminal.resize(24, 5);
    terminal.wait_for("the smaller view", |s| {
        s.lines().count() <= 5 && s.contains("acc watch")
    });
    terminal.resize(80, 24);
    terminal.wait_for("the view grown back", |s| s.contains("latest messages"));
    terminal.keys(&["q"]);
    assert_eq!(terminal.exit_status(), 0, "{}", terminal.screen());
}

/// Not at a terminal, `acc watch` is a stream: the status, then a line an event.
#[test]
fn watch_without_a_terminal_prints_the_status_then_events() {
    let (world, claude, _bob) = room();
    let mut command = world.command("acc");
    command.args(["--json", "watch"]);
    let mut watcher = acc_tests::JsonRpcChild::spawn(command);
    let status = watcher.wait_for(|v| v.get("sessions").is_some(), Duration::from_secs(20));
    assert_eq!(status["sessions"].as_array().map(Vec::len), Some(3));
    world.tell(&claude, "bob", "plain", "x");
    let event = watcher.wait_for(|v| v["type"] == "message.recorded", Duration::from_secs(20));
    assert_eq!(event["data"]["toParticipantIds"][0], "bob", "{event}");
    acc_tests::kill_pid(watcher.child.0.id());
}

//! What a person reads at a terminal: `acc status` and `acc inbox` at 80 and 120 columns, in a
//! room whose participants carry client session names. No line may be wider than the terminal
//! (a wrapped table is unreadable), and what a person acts on must survive the fitting: the
//! short ids (which the CLI takes back), presence, times, and a claimed file's name. The
//! snapshots are the output with its ids, timestamps and temporary paths replaced by
//! placeholders of the same length, so the layout itself is compared.

use acc_tests::{Creds, World, golden_text};

const CLAUDE: &str = "claude-code-7f3e9a21-4b8c-4d2e-9f10-aa55bb66cc77";
const CODEX: &str = "codex-01a22fdc-55d6-4c1e-9a0b-1234567890ab";
const DEEP: &str = "file:store/src/very/deeply/nested/module/path/with/a/long/name/ops.rs";
const SUBJECT: &str =
    "The parser's grammar changed: read docs/grammar.md before you touch src/parser.rs, please";

/// Run `acc --json ARGS` (as `who`) on a clock `ago` seconds behind: the snapshots read times
/// relative to now, and whole minutes in the past stay the same however long the test takes
/// (up to the half minute each offset leaves).
fn earlier(world: &World, who: Option<&Creds>, ago: u32, args: &[&str]) -> serde_json::Value {
    let offset = format!("-{ago}");
    let mut env = vec![("ACC_TEST_CLOCK_OFFSET_SECONDS", offset.as_str())];
    if let Some(who) = who {
        env.push(("ACC_SESSION", who.session.as_str()));
        env.push(("ACC_GENERATION", who.generation.as_str()));
    }
    world.acc_with(args, &env).ok_json()
}

/// Three participants, two with client session names, with intents, claims and messages, made
/// at times chosen so that what status shows is fixed: claude seen 2.5 min ago (stale), codex
/// 1.5 min ago and bob 1.25 min ago (online); leases ending in 27 and 28 min.
fn room() -> (World, Creds) {
    let world = World::new();
    let attach = |who: &str, ago: u32| {
        Creds::from_attach(
            who,
            &earlier(&world, None, ago, &["attach", "--participant", who]),
        )
    };
    let claude = attach(CLAUDE, 150);
    let codex = attach(CODEX, 90);
    let bob = attach("bob", 75);
    earlier(
        &world,
        Some(&claude),
        150,
        &[
            "work",
            "--summary",
            "refactoring the session store so that reads never write and the WAL stays between processes",
            "--mode",
            "edit",
            "--hint",
            "file:store/src/ops.rs",
        ],
    );
    earlier(&world, Some(&claude), 150, &["claim", "--resource", DEEP]);
    earlier(
        &world,
        Some(&codex),
        90,
        &["work", "--summary", "docs", "--mode", "edit"],
    );
    earlier(
        &world,
        Some(&codex),
        90,
        &[
            "claim",
            "--mode",
            "shared",
            "--resource",
            "file:docs/README.md",
        ],
    );
    earlier(
        &world,
        Some(&bob),
        75,
        &["claim", "--resource", "file:src/lib.rs"],
    );
    earlier(
        &world,
        Some(&claude),
        150,
        &[
            "message",
            "--to",
            "bob",
            "--subject",
            SUBJECT,
            "--body",
            "see the doc",
        ],
    );
    earlier(
        &world,
        Some(&codex),
        90,
        &[
            "message",
            "--to",
            "bob",
            "--kind",
            "question",
            "--subject",
            "Which branch?",
            "--body",
            "main or next",
        ],
    );
    (world, bob)
}

/// `acc ARGS` as `who` at a terminal of `width` columns (`COLUMNS`), colour off.
fn at_width(world: &World, who: Option<&Creds>, width: u16, args: &[&str]) -> String {
    let mut command = world.command("acc");
    command
        .args(["--color", "never"])
        .args(args)
        .env("COLUMNS", width.to_string());
    if let Some(who) = who {
        command
            .env("ACC_SESSION", &who.session)
            .env("ACC_GENERATION", &who.generation);
    }
    let run = world.run(command, "acc");
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    for line in run.stdout.lines() {
        assert!(
            line.chars().count() <= usize::from(width),
            "{args:?} at {width} columns: a line of {} columns:\n{line}\n{}",
            line.chars().count(),
            run.stdout
        );
    }
    run.stdout
}

/// `text` with every record id, timestamp and the world's paths and workspace id replaced by
/// placeholders of the same length (ids numbered in order of appearance).
fn normalized(world: &World, text: &str) -> String {
    let mut text = text.replace(
        &world.dir.to_string_lossy().into_owned(),
        &same_length(&world.dir.to_string_lossy(), "/project-dir"),
    );
    let workspace = world.workspace_id();
    text = text.replace(&workspace, &same_length(&workspace, "workspace-id"));
    let mut ids: Vec<String> = Vec::new();
    let mut out = String::new();
    let mut rest = text.as_str();
    'scan: while !rest.is_empty() {
        for head in ["session_", "claim_", "message_"] {
            if let Some(tail) = rest.strip_prefix(head) {
                let len = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                    .unwrap_or(tail.len());
                if len >= 6 {
                    let id = &rest[..head.len() + len];
                    let n = ids.iter().position(|i| i == id).unwrap_or_else(|| {
                        ids.push(id.to_string());
                        ids.len() - 1
                    }) + 1;
                    out.push_str(head);
                    out.push_str(&format!("{n:0>len$}"));
                    rest = &rest[head.len() + len..];
                    continue 'scan;
                }
            }
        }
        if rest.get(..24).is_some_and(is_timestamp) {
            out.push_str("YYYY-MM-DDThh:mm:ss.mmmZ");
            rest = &rest[24..];
            continue;
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `like` padded or cut to the length of `original`.
fn same_length(original: &str, like: &str) -> String {
    let n = original.chars().count();
    like.chars().chain(std::iter::repeat('x')).take(n).collect()
}

fn is_timestamp(text: &str) -> bool {
    let shape = "dddd-dd-ddTdd:dd:dd.dddZ";
    text.len() == shape.len()
        && text
            .chars()
            .zip(shape.chars())
            .all(|(c, s)| if s == 'd' { c.is_ascii_digit() } else { c == s })
}

#[test]
fn status_and_inbox_fit_80_and_120_columns_with_long_participant_names() {
    let (world, bob) = room();
    for width in [80, 120] {
        let status = at_width(&world, None, width, &["status"]);
        golden_text(
            &format!("human/status-{width}.txt"),
            &normalized(&world, &status),
        );
        let inbox = at_width(&world, Some(&bob), width, &["inbox"]);
        golden_text(
            &format!("human/inbox-{width}.txt"),
            &normalized(&world, &inbox),
        );
        // What a person acts on survives the fitting.
        assert!(
            status.contains("ops.rs"),
            "the claimed file's name: {status}"
        );
        assert!(status.contains(&CODEX[..12]) && status.contains(&CLAUDE[..12]));
        for line in status.lines().filter(|l| l.contains("session_")) {
            assert!(
                line.contains("online") || line.contains("stale"),
                "presence stays: {line}"
            );
        }
        // Absolute times, on request, fit as well.
        let absolute = at_width(&world, None, width, &["--absolute-times", "status"]);
        let timestamps = absolute
            .split_whitespace()
            .filter(|w| is_timestamp(w))
            .count();
        assert_eq!(
            timestamps, 6,
            "three sessions seen and three leases, as timestamps: {absolute}"
        );
    }

    // At 120 columns the whole subject shows; at 80 it is cut with an ellipsis, on one line.
    let wide = at_width(&world, Some(&bob), 120, &["inbox"]);
    assert!(wide.contains(SUBJECT), "{wide}");
    let narrow = at_width(&world, Some(&bob), 80, &["inbox"]);
    let subject = narrow
        .lines()
        .find(|l| l.contains("The parser's grammar"))
        .expect("the subject line");
    assert!(subject.ends_with('…'), "{subject}");

    // The short ids shown are the ones the CLI takes back.
    let short = narrow
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .find(|w| w.starts_with("message_"))
        .expect("a short message id")
        .to_string();
    assert!(short.len() < "message_".len() + 22, "{short} is shortened");
    let read = world
        .acc_as(&bob, &["inbox", "--message", &short])
        .ok_json();
    assert!(
        read[0]["messageId"]
            .as_str()
            .is_some_and(|id| id.starts_with(&short)),
        "{read}"
    );
    // So are the short participant names: bob answers the one the table shows.
    let sender = narrow
        .lines()
        .find(|l| l.contains("question"))
        .and_then(|l| l.split_whitespace().nth(4))
        .expect("the sender column")
        .to_string();
    assert!(
        sender.len() < CODEX.len() && CODEX.starts_with(&sender),
        "{sender}"
    );
    let sent = world
        .acc_as(
            &bob,
            &["message", "--to", &sender, "--subject", "s", "--body", "b"],
        )
        .ok_json();
    assert_eq!(sent["message"]["toParticipantIds"][0], CODEX, "{sent}");

    // A person's history says whom each message went to and how far each receipt got.
    let history = at_width(&world, None, 120, &["sync", "--scope", "history"]);
    assert!(
        history.lines().any(|l| l.trim() == "to bob (queued)"),
        "{history}"
    );

    // Piped output without COLUMNS keeps every character.
    let mut command = world.command("acc");
    command
        .arg("inbox")
        .env("ACC_SESSION", &bob.session)
        .env("ACC_GENERATION", &bob.generation)
        .env_remove("COLUMNS");
    let plain = world.run(command, "acc inbox");
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(plain.stdout.contains(SUBJECT), "{}", plain.stdout);
}

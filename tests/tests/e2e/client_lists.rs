//! Every text a user or a model reads names every client ACC knows or none: the help of `acc`
//! and `acc-capture`, the crate docs of the host, and the MCP tool descriptions and
//! instructions. A text that names some clients is how `acc hook --help` came to list four of
//! six and `acc_claim`'s description three. The list is `acc_clients::Client::ALL`; a text may
//! name a part of it only where that part is derived from the clients' definition (the
//! `--mcp-trust` help names exactly the clients whose MCP entries have a trust setting).

use std::collections::BTreeSet;

use acc_clients::Client;
use acc_tests::{bin, repo_root};
use clap::CommandFactory;

/// The clients a text names: by spelling (`claude-code`) or by display name (`Claude Code`,
/// `Gemini CLI`, or its first word, `Gemini`), as a word; the ids of the live adapters
/// (`codex-app-server`, `claude-inbox`, ...) are not client names.
fn named(text: &str) -> BTreeSet<&'static str> {
    let mut lowered = text.to_lowercase();
    for client in Client::ALL {
        if let Some(adapter) = client.live_adapter() {
            lowered = lowered.replace(adapter, " ");
        }
    }
    let words: Vec<&str> = lowered
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let joined = format!(" {} ", words.join(" "));
    Client::ALL
        .into_iter()
        .filter(|client| {
            let display = client.display_name().to_lowercase();
            let first = display.split(' ').next().unwrap_or_default().to_string();
            [client.as_str().to_string(), display, first]
                .iter()
                .any(|name| joined.contains(&format!(" {name} ")))
        })
        .map(Client::as_str)
        .collect()
}

fn every() -> BTreeSet<&'static str> {
    Client::ALL.into_iter().map(Client::as_str).collect()
}

/// `text` (from `place`) names every client or none; a failure says which it left out.
fn check(place: &str, text: &str, problems: &mut Vec<String>) {
    let found = named(text);
    if !found.is_empty() && found != every() {
        let missing: Vec<&str> = every().difference(&found).copied().collect();
        problems.push(format!(
            "{place} names {found:?} but not {missing:?}: {text}"
        ));
    }
}

/// Every about and argument help of a command tree, with its path.
fn command_texts(command: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
    for text in [command.get_about(), command.get_long_about()]
        .into_iter()
        .flatten()
    {
        out.push((path.to_string(), text.to_string()));
    }
    for argument in command.get_arguments() {
        for text in [argument.get_help(), argument.get_long_help()]
            .into_iter()
            .flatten()
        {
            out.push((format!("{path} --{}", argument.get_id()), text.to_string()));
        }
    }
    for sub in command.get_subcommands() {
        command_texts(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn the_matcher_sees_each_client_by_spelling_and_by_name() {
    // The check first proves it can see what it measures.
    assert_eq!(
        named("claude-code, codex or gemini"),
        BTreeSet::from(["claude-code", "codex", "gemini"])
    );
    assert_eq!(
        named("Qwen Code's and Kimi Code's settings"),
        BTreeSet::from(["kimi", "qwen"])
    );
    assert_eq!(
        named("ACC's OpenCode plugin, and Gemini CLI"),
        BTreeSet::from(["gemini", "opencode"])
    );
    assert!(named("the claude-inbox and codex-app-server adapters").is_empty());
    let all = Client::ALL.map(Client::display_name).join(", ");
    assert_eq!(named(&all), every());
}

#[test]
fn every_help_text_names_every_client_or_none() {
    let mut texts = Vec::new();
    command_texts(&acc_cli::args::Cli::command(), "acc", &mut texts);
    assert!(
        texts.len() > 100,
        "the walk found only {} texts",
        texts.len()
    );
    let trusting = Client::display_names(Client::has_mcp_trust);
    let mut problems = Vec::new();
    for (place, text) in &texts {
        if place == "acc install --mcp_trust" {
            // Derived from the clients' definition: exactly the clients with a trust setting.
            let expected: BTreeSet<&str> = Client::ALL
                .into_iter()
                .filter(|c| c.has_mcp_trust())
                .map(Client::as_str)
                .collect();
            assert_eq!(named(text), expected, "{place}: {text}");
            assert!(text.contains(&trusting), "{place}: {text}");
            continue;
        }
        check(place, text, &mut problems);
    }
    // acc-capture's help, as it prints it: each option's block on its own.
    let output = std::process::Command::new(bin("acc-capture"))
        .arg("--help")
        .output()
        .expect("acc-capture --help runs");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    let mut blocks: Vec<String> = vec![String::new()];
    for line in help.lines() {
        if line.trim_start().starts_with('-') {
            blocks.push(String::new());
        }
        let last = blocks.len() - 1;
        blocks[last].push_str(line);
        blocks[last].push('\n');
    }
    assert!(blocks.len() > 4, "acc-capture --help: {help}");
    for block in &blocks {
        check("acc-capture --help", block, &mut problems);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_crate_doc_of_the_host_names_every_client_or_none() {
    let root = repo_root();
    let mut problems = Vec::new();
    let mut seen = 0;
    for krate in [
        "store", "core", "clients", "delivery", "app", "hooks", "mcp", "install", "cli", "capture",
    ] {
        let file = root.join(krate).join("src/lib.rs");
        let source =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let doc: Vec<&str> = source
            .lines()
            .take_while(|l| l.starts_with("//!") || l.trim().is_empty())
            .filter_map(|l| l.strip_prefix("//!"))
            .collect();
        assert!(!doc.is_empty(), "{} has no crate doc", file.display());
        seen += 1;
        check(&file.display().to_string(), &doc.join(" "), &mut problems);
    }
    assert_eq!(seen, 10);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_tool_description_and_the_instructions_name_every_client_or_none() {
    let mut problems = Vec::new();
    let listed = acc_mcp::tools::list();
    assert_eq!(listed.len(), acc_mcp::tools::names().len());
    for (tool, name) in listed.iter().zip(acc_mcp::tools::names()) {
        // The entry as `tools/list` publishes it: description and input schema.
        check(name, &tool.to_string(), &mut problems);
    }
    check("instructions", acc_mcp::INSTRUCTIONS, &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

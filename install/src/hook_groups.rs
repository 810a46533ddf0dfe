//! The hook groups ACC installs into each client's hooks file, by event, and how a group that
//! runs ACC's hook is recognised.

use std::path::Path;

use serde_json::Value;

use acc_clients::Client;

use crate::Target;

/// The hook events installed per client, with their tool matchers. The write guard's matcher
/// names every tool that can write (the hook itself then reads which files,
/// `hooks::writes`): Codex 0.169 reports its shell tool as `Bash`, and runs `apply_patch` through
/// it; MCP tools are matched so that one whose name says it writes is guarded too.
pub fn events(client: Client) -> &'static [(&'static str, Option<&'static str>)] {
    match client {
        Client::ClaudeCode => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            (
                "PreToolUse",
                Some("Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*"),
            ),
            ("Stop", None),
            ("SessionEnd", None),
        ],
        Client::Codex => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            (
                "PreToolUse",
                Some("Bash|apply_patch|shell|exec_command|mcp__.*"),
            ),
            ("Stop", None),
        ],
        Client::Gemini => &[
            ("SessionStart", Some("*")),
            ("BeforeAgent", Some("*")),
            (
                "BeforeTool",
                Some("write_file|replace|run_shell_command|mcp_.*"),
            ),
            ("AfterAgent", Some("*")),
            ("SessionEnd", Some("*")),
        ],
        // Qwen Code's tool ids; a matcher that starts with `(` or `^` is a regular expression
        // as written (a plain `a|b` list would be compared entry by entry, `mcp_.*` literally).
        Client::Qwen => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            (
                "PreToolUse",
                Some("^(write_file|edit|notebook_edit|run_shell_command|mcp_.*)$"),
            ),
            ("Stop", None),
            ("SessionEnd", None),
        ],
        // ACC's plugin runs the hooks itself (`opencode::plugin`): no hook groups.
        Client::OpenCode => &[],
        // Kimi Code tests a matcher as a JavaScript regular expression against the tool name
        // (unanchored, hence `^…$`). It runs no SessionEnd in `-p` mode; the interactive one
        // does.
        Client::Kimi => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            ("PreToolUse", Some("^(Write|Edit|Bash|mcp__.*)$")),
            ("Stop", None),
            ("SessionEnd", None),
        ],
    }
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The hook groups ACC adds, by event.
pub fn groups(client: Client, acc: &Path) -> Vec<(&'static str, Value)> {
    events(client)
        .iter()
        .map(|(event, matcher)| {
            let command = format!(
                "{} hook {} {event}",
                quote(&acc.to_string_lossy()),
                client.as_str()
            );
            // Kimi Code's hooks are flat `[[hooks]]` tables: the event, matcher and command in
            // one.
            if client == Client::Kimi {
                let hook = acc_app::wire::KimiHook {
                    event,
                    matcher: *matcher,
                    command,
                    timeout: 5,
                };
                return (*event, acc_core::wire::json(&hook));
            }
            let group = acc_app::wire::HookGroup {
                matcher: *matcher,
                hooks: [acc_app::wire::HookCommand {
                    // Gemini CLI names hooks (its trust records key them by name and command)
                    // and counts the timeout in milliseconds.
                    name: (client == Client::Gemini).then_some("acc"),
                    kind: "command",
                    command,
                    timeout: if client == Client::Gemini { 5000 } else { 5 },
                }],
            };
            (*event, acc_core::wire::json(&group))
        })
        .collect()
}

/// Whether a hook group runs `acc hook <client> …` from any acc.
pub(super) fn looks_like_accs_hook(group: &Value, client: Client) -> bool {
    let marker = format!(" hook {} ", client.as_str());
    // A group's commands, or a Kimi Code hook's own.
    group
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|hook| hook.get("command").and_then(Value::as_str))
        .chain(group.get("command").and_then(Value::as_str))
        .any(|command| {
            command.contains(&marker)
                && command
                    .split(&marker)
                    .next()
                    .is_some_and(|program| program.trim_matches('\'').ends_with("acc"))
        })
}

/// The hook groups in `target`'s hooks file as its client reads them, with their events: each
/// group of `hooks.<event>` in JSON, each `[[hooks]]` table of Kimi Code's `config.toml`.
/// Nothing when the file is missing or does not parse.
pub(super) fn installed(target: &Target) -> Vec<(String, Value)> {
    if target.client == Client::Kimi {
        let Ok(text) = std::fs::read_to_string(&target.hooks_file) else {
            return Vec::new();
        };
        return crate::toml_doc::TomlDoc::parse(&target.hooks_file, &text)
            .map(|doc| doc.hook_tables())
            .unwrap_or_default()
            .into_iter()
            .map(|hook| {
                let event = hook
                    .get("event")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                (event, hook)
            })
            .collect();
    }
    let value = crate::read_client_json(target, &target.hooks_file).unwrap_or(Value::Null);
    value
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .flat_map(|(event, list)| {
            list.as_array()
                .into_iter()
                .flatten()
                .map(|group| (event.clone(), group.clone()))
        })
        .collect()
}

//! Which files a tool call would write, read from the hook payload, for the write guard.
//!
//! By tool: the clients' file tools name their file (`file_path`: Claude Code's Write, Edit and
//! MultiEdit, Gemini CLI's write_file and replace, Qwen Code's write_file and edit;
//! `notebook_path`: NotebookEdit, Qwen Code's notebook_edit; `filePath`: OpenCode's write, edit
//! and multiedit); a patch names
//! its files after `*** Add/Update/Delete File:` (Codex's apply_patch, also when a shell command
//! runs it, OpenCode's apply_patch and patch); a shell command (OpenCode's bash, Claude Code's and Codex's Bash, Codex's shell and exec_command,
//! Gemini CLI's and Qwen Code's run_shell_command) writes the targets of its redirections and the files of the
//! common writing commands. Shell is read on a best-effort basis: a command can always write in
//! ways no reading of it finds (a script, an interpreter), which `docs/hooks-and-install.md`
//! says. An MCP tool counts when its name says it writes and its input names a path. Reading
//! tools are never guarded, whatever their input names.

use serde_json::Value;

/// The client tools that take a file path and write it.
const FILE_TOOLS: &[&str] = &[
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "write_file",
    "replace",
    "edit",
    "notebook_edit",
    "apply_patch",
    "write",
    "multiedit",
    "patch",
];
/// The client tools that run a shell command.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "shell",
    "exec_command",
    "local_shell",
    "run_shell_command",
    "bash",
];
/// Words in an MCP tool's name that say it writes.
const WRITING_WORDS: &[&str] = &[
    "write", "edit", "replace", "create", "delete", "remove", "move", "rename", "patch", "save",
    "update", "append",
];
/// Input keys that name a file.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "notebook_path",
    "path",
    "filePath",
    "target_file",
    "destination",
];

/// Input keys that name the directory a shell tool runs its command in (Codex's
/// `exec_command` `workdir`, Gemini CLI's `run_shell_command` `dir_path`).
const DIR_KEYS: &[&str] = &["workdir", "dir_path", "directory", "cwd"];

/// OpenCode's own tools (1.18): any other tool name is an MCP server's (`<server>_<tool>`) or a
/// plugin's.
const OPENCODE_TOOLS: &[&str] = &[
    "bash",
    "edit",
    "write",
    "read",
    "glob",
    "grep",
    "list",
    "patch",
    "apply_patch",
    "multiedit",
    "todowrite",
    "todoread",
    "webfetch",
    "websearch",
    "codesearch",
    "skill",
    "task",
    "lsp",
    "question",
    "batch",
    "invalid",
];

/// The payload as the guard reads it: OpenCode names an MCP tool `<server>_<tool>` with no
/// prefix that says so, so a tool that is not one of its own is read as MCP tools are
/// (`mcp_<name>`: guarded when its name says it writes and its input names a path).
pub fn as_guarded(client: acc_clients::Client, mut payload: Value) -> Value {
    if client != acc_clients::Client::OpenCode {
        return payload;
    }
    let renamed = match payload.get("tool_name").and_then(Value::as_str) {
        Some(tool) if !OPENCODE_TOOLS.contains(&tool) => format!("mcp_{tool}"),
        _ => return payload,
    };
    payload["tool_name"] = Value::String(renamed);
    payload
}

/// The directory the tool call in `payload` resolves relative paths against: the directory its
/// input names (relative to the session's `cwd`), else `cwd`.
pub fn tool_cwd(payload: &Value, cwd: &std::path::Path) -> std::path::PathBuf {
    let input = payload.get("tool_input");
    DIR_KEYS
        .iter()
        .find_map(|key| {
            input
                .and_then(|i| i.get(key))
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
        })
        .map_or_else(|| cwd.to_path_buf(), |dir| cwd.join(dir))
}

/// Files the tool call in `payload` would write, as it names them (relative or absolute).
pub fn written_paths(payload: &Value) -> Vec<String> {
    let tool = payload
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
    let mut paths = Vec::new();
    let strings: Vec<&str> = match &input {
        Value::String(s) => vec![s.as_str()],
        Value::Object(map) => map.values().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mcp = tool.starts_with("mcp_");
    let file_tool = FILE_TOOLS.contains(&tool);
    let shell_tool = SHELL_TOOLS.contains(&tool);
    let mcp_writer = mcp && {
        let lower = tool.to_ascii_lowercase();
        WRITING_WORDS.iter().any(|w| lower.contains(w))
    };
    if !(file_tool || shell_tool || mcp_writer) {
        return paths;
    }
    if file_tool || mcp_writer {
        for key in PATH_KEYS {
            if let Some(path) = input.get(key).and_then(Value::as_str) {
                paths.push(path.to_string());
            }
        }
    }
    for text in &strings {
        paths.extend(patched(text));
    }
    if shell_tool {
        for key in ["command", "cmd"] {
            match input.get(key) {
                Some(Value::String(command)) => paths.extend(shell_targets(command)),
                // Codex's older shell tool passes the argument vector.
                Some(Value::Array(words)) => {
                    let words: Vec<String> = words
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                    paths.extend(word_targets(&words));
                }
                _ => {}
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

/// The files a patch names.
fn patched(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for line in text.lines() {
        for marker in [
            "*** Update File: ",
            "*** Add File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ] {
            if let Some(path) = line.trim_start().strip_prefix(marker) {
                paths.push(path.trim().to_string());
            }
        }
    }
    paths
}

/// The files a shell command writes, as far as its words show.
fn shell_targets(command: &str) -> Vec<String> {
    // Separators glued to words (`a;b`, `x>y`) are split off first, so each command's words
    // stand alone; a command that does not split (unbalanced quotes) is read word by word.
    let spaced = command
        .replace("&&", " && ")
        .replace("||", " || ")
        .replace([';', '\n'], " ; ");
    let words = shlex::split(&spaced)
        .unwrap_or_else(|| spaced.split_whitespace().map(str::to_string).collect());
    word_targets(&words)
}

/// The files a sequence of shell words writes.
fn word_targets(words: &[String]) -> Vec<String> {
    let mut targets = Vec::new();
    // The current command's name and its arguments (options included), redirections aside.
    let mut command: Option<String> = None;
    let mut args: Vec<String> = Vec::new();
    let mut i = 0;
    while i <= words.len() {
        let word = words.get(i).map(String::as_str);
        i += 1;
        if matches!(word, None | Some(";" | "&&" | "||" | "|" | "&")) {
            if let Some(name) = command.take() {
                targets.extend(command_targets(&name, &args));
            }
            args.clear();
            continue;
        }
        let word = word.unwrap_or_default();
        // A redirection: `>f`, `>> f`, `2>f`, `&>f`, `>|f`, or one glued to a word (`a>f`);
        // `2>&1` duplicates a descriptor and writes no file.
        if let Some(at) = word.find('>') {
            let after = word[at..].trim_start_matches('>').trim_start_matches('|');
            if after.is_empty() {
                if let Some(next) = words.get(i) {
                    targets.push(next.clone());
                    i += 1;
                }
            } else if !after.starts_with('&') {
                targets.push(after.to_string());
            }
            let before = &word[..at];
            if before == "&" || before.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            push_word(&mut command, &mut args, before);
            continue;
        }
        push_word(&mut command, &mut args, word);
    }
    targets
}

/// A word of a command: its name (assignments before it aside), else an argument.
fn push_word(command: &mut Option<String>, args: &mut Vec<String>, word: &str) {
    match command {
        Some(_) => args.push(word.to_string()),
        // Assignments before a command (`A=1 cmd`) are not the command.
        None if word.contains('=') && !word.starts_with('=') => {}
        None => *command = Some(word.rsplit('/').next().unwrap_or(word).to_string()),
    }
}

/// The files one command writes, from its name and arguments.
fn command_targets(name: &str, args: &[String]) -> Vec<String> {
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    match name {
        // Each operand is written (or removed, or moved away).
        "tee" | "touch" | "rm" | "truncate" | "mv" | "chmod" | "shred" | "unlink" => {
            operands.into_iter().cloned().collect()
        }
        // Only the destination is written.
        "cp" | "install" | "ln" | "rsync" => {
            operands.last().map(|d| (*d).clone()).into_iter().collect()
        }
        // In-place: every operand after the script.
        "sed" | "perl"
            if args.iter().any(|a| {
                a == "--in-place"
                    || (a.starts_with("-i")
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('i')))
            }) =>
        {
            operands.into_iter().skip(1).cloned().collect()
        }
        "dd" => args
            .iter()
            .filter_map(|a| a.strip_prefix("of="))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(tool: &str, input: Value) -> Vec<String> {
        written_paths(&json!({ "tool_name": tool, "tool_input": input }))
    }

    #[test]
    fn file_tools_name_their_file_and_reading_tools_are_never_guarded() {
        assert_eq!(
            paths("Write", json!({"file_path": "/w/src/a.rs", "content": "x"})),
            ["/w/src/a.rs"]
        );
        assert_eq!(
            paths(
                "replace",
                json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"})
            ),
            ["src/a.rs"]
        );
        assert_eq!(
            paths(
                "edit",
                json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"})
            ),
            ["src/a.rs"]
        );
        assert_eq!(
            paths(
                "notebook_edit",
                json!({"notebook_path": "n.ipynb", "new_source": "x"})
            ),
            ["n.ipynb"]
        );
        assert!(paths("Read", json!({"file_path": "src/a.rs"})).is_empty());
        assert!(paths("read_file", json!({"file_path": "src/a.rs"})).is_empty());
    }

    #[test]
    fn a_patch_names_its_files_wherever_it_stands() {
        let patch =
            "*** Begin Patch\n*** Update File: src/a.rs\n@@\n*** Add File: src/b.rs\n*** End Patch";
        assert_eq!(
            paths("apply_patch", json!({"command": patch})),
            ["src/a.rs", "src/b.rs"]
        );
        let shell = format!("apply_patch <<'EOF'\n{patch}\nEOF");
        assert_eq!(
            paths("Bash", json!({"command": shell})),
            ["src/a.rs", "src/b.rs"]
        );
    }

    #[test]
    fn shell_redirections_and_writing_commands_are_read() {
        for (command, want) in [
            ("echo hi > src/a.rs", vec!["src/a.rs"]),
            ("echo hi>>src/a.rs", vec!["src/a.rs"]),
            (
                "cat x 2>/dev/null | tee -a src/a.rs",
                vec!["/dev/null", "src/a.rs"],
            ),
            ("cd src && rm -f a.rs b.rs", vec!["a.rs", "b.rs"]),
            ("sed -i 's/a/b/' src/a.rs", vec!["src/a.rs"]),
            (
                "mv src/a.rs src/c.rs; touch 'src/d e.rs'",
                vec!["src/a.rs", "src/c.rs", "src/d e.rs"],
            ),
            ("dd if=/dev/zero of=src/a.rs", vec!["src/a.rs"]),
            ("cat src/a.rs", vec![]),
            ("grep -r x src 2>&1", vec![]),
            ("X=1 cp src/a.rs /tmp/b", vec!["/tmp/b"]),
            ("echo x &>src/a.rs", vec!["src/a.rs"]),
            ("perl -pi -e 's/a/b/' src/a.rs", vec!["src/a.rs"]),
        ] {
            let mut want: Vec<String> = want.into_iter().map(str::to_string).collect();
            want.sort();
            assert_eq!(
                paths("Bash", json!({"command": command})),
                want,
                "{command}"
            );
        }
        assert_eq!(
            paths("shell", json!({"command": ["bash", "-lc", "x"]})),
            Vec::<String>::new()
        );
        assert_eq!(
            paths(
                "run_shell_command",
                json!({"command": "printf x > src/a.rs"})
            ),
            ["src/a.rs"]
        );
    }

    #[test]
    fn an_mcp_tool_counts_when_its_name_says_it_writes() {
        assert_eq!(
            paths("mcp__fs__write_file", json!({"path": "src/a.rs"})),
            ["src/a.rs"]
        );
        assert_eq!(
            paths("mcp_fs_edit", json!({"file_path": "src/a.rs"})),
            ["src/a.rs"]
        );
        assert!(paths("mcp__fs__read_file", json!({"path": "src/a.rs"})).is_empty());
    }
}

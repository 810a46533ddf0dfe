//! The write guard across the ordinary ways a path is written, through the real `acc hook`
//! binary with each client's own tool-call payload: every client (Claude Code's `Write` and
//! `Bash`, Codex's `apply_patch` and `exec_command`, Gemini CLI's `write_file` and
//! `run_shell_command`, Qwen Code's `write_file`, `edit` and `run_shell_command`, OpenCode's
//! `write`, `edit`, `apply_patch`, `bash` and another MCP server's writing tool, as ACC's plugin
//! passes them, Kimi Code's `Write`, `Edit`, `Bash` and another MCP server's writing tool) ×
//! every path form (relative, absolute, from a subdirectory, through a symlinked project
//! directory, a name with a space, a Unicode name, shell characters) × a
//! claimed and an unclaimed file, with Bob's claims taken at a shell or through `acc-mcp` (each
//! the way its surface says, the room's policy making them guarded). One row each; the
//! promise, not the mechanism: the write into Bob's claim is denied in the client's deny shape,
//! the other is allowed. A weaker participant in the room changes none of it.

use std::path::{Path, PathBuf};

use acc_tests::World;
use serde_json::{Value, json};

/// The files Bob claims (guarded), as they are named on disk.
const CLAIMED: &[&str] = &[
    "src/parser.rs",
    "src/a file.txt",
    "src/été naïve.md",
    "src/$(weird) 'name'.rs",
    "docs/any name/inside.md",
];
/// A file nobody claims.
const FREE: &str = "src/free file.rs";

/// How a tool names the file: the tool's working directory and the path it writes.
#[derive(Debug, Clone, Copy)]
enum Form {
    Relative,
    Absolute,
    FromSubdirectory,
    ThroughLinkRelative,
    ThroughLinkAbsolute,
}

const FORMS: [Form; 5] = [
    Form::Relative,
    Form::Absolute,
    Form::FromSubdirectory,
    Form::ThroughLinkRelative,
    Form::ThroughLinkAbsolute,
];

/// The working directory and the path, in `form`, of `relative` in the project `dir`, which
/// `link` also reaches.
fn named(form: Form, dir: &Path, link: &Path, relative: &str) -> (PathBuf, String) {
    match form {
        Form::Relative => (dir.to_path_buf(), relative.to_string()),
        Form::Absolute => (
            dir.to_path_buf(),
            dir.join(relative).to_string_lossy().into_owned(),
        ),
        Form::FromSubdirectory => (dir.join("src"), format!("../{relative}")),
        Form::ThroughLinkRelative => (link.to_path_buf(), relative.to_string()),
        Form::ThroughLinkAbsolute => (
            link.to_path_buf(),
            link.join(relative).to_string_lossy().into_owned(),
        ),
    }
}

/// One tool of one client: the hook's client and event, and the payload of a call that writes
/// `path` from `cwd`.
struct Tool {
    client: &'static str,
    event: &'static str,
    name: &'static str,
    input: fn(&str) -> Value,
}

fn quoted(path: &str) -> String {
    acc_clients::render::shell_quote(path)
}

const TOOLS: &[Tool] = &[
    Tool {
        client: "claude-code",
        event: "PreToolUse",
        name: "Write",
        input: |path| json!({ "file_path": path, "content": "x" }),
    },
    Tool {
        client: "claude-code",
        event: "PreToolUse",
        name: "Bash",
        input: |path| json!({ "command": format!("printf x >> {}", quoted(path)) }),
    },
    Tool {
        client: "codex",
        event: "PreToolUse",
        name: "exec_command",
        input: |path| {
            json!({ "cmd": format!(
                "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\nPATCH"
            ) })
        },
    },
    Tool {
        client: "codex",
        event: "PreToolUse",
        name: "exec_command",
        input: |path| json!({ "cmd": format!("sed -i s/a/b/ {}", quoted(path)) }),
    },
    Tool {
        client: "gemini",
        event: "BeforeTool",
        name: "write_file",
        input: |path| json!({ "file_path": path, "content": "x" }),
    },
    Tool {
        client: "gemini",
        event: "BeforeTool",
        name: "run_shell_command",
        input: |path| json!({ "command": format!("echo x > {}", quoted(path)) }),
    },
    Tool {
        client: "qwen",
        event: "PreToolUse",
        name: "write_file",
        input: |path| json!({ "file_path": path, "content": "x" }),
    },
    Tool {
        client: "qwen",
        event: "PreToolUse",
        name: "edit",
        input: |path| json!({ "file_path": path, "old_string": "a", "new_string": "b" }),
    },
    Tool {
        client: "qwen",
        event: "PreToolUse",
        name: "run_shell_command",
        input: |path| json!({ "command": format!("echo x > {}", quoted(path)) }),
    },
    Tool {
        client: "opencode",
        event: "PreToolUse",
        name: "write",
        input: |path| json!({ "filePath": path, "content": "x" }),
    },
    Tool {
        client: "opencode",
        event: "PreToolUse",
        name: "edit",
        input: |path| json!({ "filePath": path, "oldString": "a", "newString": "b" }),
    },
    Tool {
        client: "opencode",
        event: "PreToolUse",
        name: "apply_patch",
        input: |path| json!({ "patchText": format!("*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch") }),
    },
    Tool {
        client: "opencode",
        event: "PreToolUse",
        name: "bash",
        input: |path| json!({ "command": format!("tee {} < /dev/null", quoted(path)), "description": "x" }),
    },
    // OpenCode names another MCP server's tool `<server>_<tool>`, with no prefix.
    Tool {
        client: "opencode",
        event: "PreToolUse",
        name: "files_write_file",
        input: |path| json!({ "path": path, "content": "x" }),
    },
    Tool {
        client: "kimi",
        event: "PreToolUse",
        name: "Write",
        input: |path| json!({ "path": path, "content": "x" }),
    },
    Tool {
        client: "kimi",
        event: "PreToolUse",
        name: "Edit",
        input: |path| json!({ "path": path, "old_string": "a", "new_string": "b" }),
    },
    Tool {
        client: "kimi",
        event: "PreToolUse",
        name: "Bash",
        input: |path| json!({ "command": format!("cp /dev/null {}", quoted(path)) }),
    },
    // Kimi Code names another MCP server's tool `mcp__<server>__<tool>`.
    Tool {
        client: "kimi",
        event: "PreToolUse",
        name: "mcp__files__write_file",
        input: |path| json!({ "path": path, "content": "x" }),
    },
];

/// Whether the hook's answer denies, in its client's shape.
fn denied(client: &str, run: &acc_tests::Run) -> bool {
    match client {
        "codex" => run.code == 2,
        "claude-code" | "qwen" | "opencode" | "kimi" => {
            run.stdout.contains("\"permissionDecision\":\"deny\"")
        }
        _ => run.stdout.contains("\"decision\":\"deny\""),
    }
}

/// How Bob takes his claims, the way each surface tells an agent to (no enforcement asked for:
/// the room's policy makes an exclusive claim guarded).
#[derive(Debug, Clone, Copy)]
enum Holder {
    /// `acc claim` at a shell.
    Shell,
    /// `acc_claim` through `acc-mcp`.
    Mcp,
}

/// A guarded room in `dir` (reached also through a symlinked directory) with Bob's claims on
/// [`CLAIMED`], taken through `holder`; returns the link.
fn room(world: &World, holder: Holder) -> PathBuf {
    std::fs::write(
        world.dir.join("acc.workspace.json"),
        r#"{"schemaVersion":1,"workspaceId":"guard-paths","policy":{"claimMode":"guarded"}}"#,
    )
    .expect("config");
    for relative in CLAIMED.iter().chain([&FREE]) {
        let path = world.dir.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "a").expect("file");
    }
    let link = world.temp.path().join("home-src");
    std::os::unix::fs::symlink(&world.dir, &link).expect("symlink");
    let resources: Vec<String> = CLAIMED
        .iter()
        .map(|r| match r.strip_suffix("/inside.md") {
            // A directory's tree covers every file below it, whatever its name.
            Some(dir) => format!("file:{dir}/**"),
            None => format!("file:{r}"),
        })
        .collect();
    match holder {
        Holder::Shell => {
            let bob = world.attach("bob");
            let mut args = vec!["claim"];
            for resource in &resources {
                args.extend(["--resource", resource]);
            }
            let claimed = world.acc_as(&bob, &args).ok_json();
            assert!(
                claimed["claims"]
                    .as_array()
                    .expect("claims")
                    .iter()
                    .all(|c| c["enforcement"] == "guarded"),
                "{claimed}"
            );
        }
        Holder::Mcp => {
            let mut command = world.command("acc-mcp");
            command
                .env("ACC_MCP_PARTICIPANT", "bob")
                .env("ACC_MCP_WORKSPACE", &world.dir);
            let mut mcp = acc_tests::JsonRpcChild::spawn(command);
            let claimed = mcp.request(
                1,
                "tools/call",
                json!({ "name": "acc_claim", "arguments": { "action": "acquire", "resources": resources } }),
            );
            let claims = &claimed["result"]["structuredContent"]["claims"];
            assert!(
                claims
                    .as_array()
                    .is_some_and(|list| list.len() == CLAIMED.len()
                        && list.iter().all(|c| c["effectiveEnforcement"] == "guarded")),
                "{claimed}"
            );
        }
    }
    link
}

fn check_every_row(world: &World, link: &Path) {
    let mut failures = Vec::new();
    for tool in TOOLS {
        for form in FORMS {
            for (relative, claimed) in CLAIMED.iter().map(|r| (*r, true)).chain([(FREE, false)]) {
                let (cwd, path) = named(form, &world.dir, link, relative);
                let payload = json!({
                    "session_id": format!("alice-{}", tool.client),
                    "cwd": cwd,
                    "hook_event_name": tool.event,
                    "tool_name": tool.name,
                    "tool_input": (tool.input)(&path),
                });
                let run = world.hook_with(
                    tool.client,
                    tool.event,
                    &payload.to_string(),
                    &[("ACC_PARTICIPANT", "alice")],
                );
                if denied(tool.client, &run) != claimed {
                    failures.push(format!(
                        "{} {} {form:?} {relative:?}: {} (want {}): {run:?}",
                        tool.client,
                        tool.name,
                        if claimed { "allowed" } else { "denied" },
                        if claimed { "denied" } else { "allowed" },
                    ));
                }
                if claimed && denied(tool.client, &run) {
                    let said = format!("{}{}", run.stdout, run.stderr);
                    if !said.contains("by bob") {
                        failures.push(format!("{} {form:?}: names no holder: {said}", tool.name));
                    }
                    // The refusal names the claim as it was written (a space as a space).
                    let written = match relative.strip_suffix("/inside.md") {
                        Some(dir) => format!("file:{dir}/**"),
                        None => format!("file:{relative}"),
                    };
                    if !said.contains(&written) {
                        failures.push(format!(
                            "{} {form:?}: does not name {written} as written: {said}",
                            tool.name
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_claim_taken_through_mcp_meets_every_client_tool_and_path_form() {
    let world = World::new();
    let link = room(&world, Holder::Mcp);
    check_every_row(&world, &link);
}

#[test]
fn every_client_tool_and_path_form_meets_the_guard() {
    let world = World::new();
    let link = room(&world, Holder::Shell);
    check_every_row(&world, &link);
    // A person at a shell and an MCP-only client in the room: the hooks still deny, and status
    // reports the room advisory and why.
    world.attach("carol");
    let mut command = world.command("acc-mcp");
    command.env("ACC_MCP_WORKSPACE", &world.dir);
    let mut mcp = acc_tests::JsonRpcChild::spawn(command);
    let init = mcp.request(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    let status = mcp.request(
        2,
        "tools/call",
        json!({ "name": "acc_status", "arguments": {} }),
    );
    let speaks = &status["result"]["structuredContent"]["speaksFor"];
    assert_eq!(speaks["source"], "default", "{status}");
    let fallback = speaks["participantId"].as_str().unwrap_or_default();
    assert!(
        fallback.starts_with("mcp-"),
        "a participant of its own per client process: {status}"
    );
    let told = status["result"]["content"][1]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        told.contains(fallback) && told.contains("not for your client's hooked session"),
        "the first result says why it speaks for a participant of its own: {status}"
    );
    check_every_row(&world, &link);
    let status = world.acc(&["status"]).ok_json();
    drop(mcp);
    assert_eq!(status["workspace"]["protection"], "advisory", "{status}");
    let note = status["workspace"]["protectionNote"]
        .as_str()
        .unwrap_or_default();
    assert!(
        note.contains("carol (cli): a shell session")
            && note.contains("(mcp): an MCP client: ACC sees none of its writes"),
        "{note}"
    );
}

/// Kimi Code's `Bash` takes a working directory of its own (`cwd`, relative to the session's or
/// absolute, through the symlinked project too): a relative path in the command is read from
/// there.
#[test]
fn a_kimi_code_shell_command_in_a_directory_of_its_own_meets_the_guard() {
    let world = World::new();
    let link = room(&world, Holder::Shell);
    let rows = [
        (world.dir.clone(), json!("src"), "parser.rs", true),
        (
            world.dir.clone(),
            json!(world.dir.join("src")),
            "parser.rs",
            true,
        ),
        (world.dir.join("docs"), json!("../src"), "parser.rs", true),
        (
            world.dir.clone(),
            json!(link.join("src")),
            "parser.rs",
            true,
        ),
        (world.dir.clone(), json!("src"), "free file.rs", false),
        (world.dir.clone(), json!("docs"), "parser.rs", false),
    ];
    for (cwd, dir, file, claimed) in rows {
        let payload = json!({
            "session_id": "alice-kimi",
            "cwd": cwd,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": { "command": format!("echo x > {}", quoted(file)), "cwd": dir },
        });
        let run = world.hook_with(
            "kimi",
            "PreToolUse",
            &payload.to_string(),
            &[("ACC_PARTICIPANT", "alice")],
        );
        assert_eq!(
            denied("kimi", &run),
            claimed,
            "{cwd:?} {dir} {file}: {run:?}"
        );
    }
}

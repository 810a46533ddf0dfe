//! The README's main job: two MCP participants coordinate through two real `acc-mcp`
//! processes on ACC's embedded default (a SQLite store in a temporary data home). Each step
//! prints the tool call and what the answer means.
//!
//! Run with `./demo.sh` (or `cargo run -p acc --example mcp_demo` after `cargo build --bins`).

#![allow(clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

struct Participant {
    name: &'static str,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Participant {
    fn start(
        name: &'static str,
        acc_mcp: &Path,
        data: &Path,
        project: &Path,
    ) -> Result<Self, String> {
        let mut child = Command::new(acc_mcp)
            .env("ACC_MCP_PARTICIPANT", name)
            .env("ACC_MCP_WORKSPACE", project)
            .env("ACC_DATA_HOME", data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", acc_mcp.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Self {
            name,
            child,
            stdin,
            stdout,
            next_id: 0,
        })
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let line =
            json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params })
                .to_string();
        writeln!(self.stdin, "{line}").map_err(|e| e.to_string())?;
        let mut answer = String::new();
        self.stdout
            .read_line(&mut answer)
            .map_err(|e| e.to_string())?;
        serde_json::from_str(&answer).map_err(|e| format!("bad answer {answer}: {e}"))
    }

    /// Call a tool, print the call, return `(isError, structured result)`.
    fn call(&mut self, tool: &str, arguments: Value) -> Result<(bool, Value), String> {
        println!("\n\x1b[1m{} → {tool} {arguments}\x1b[0m", self.name);
        let answer = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )?;
        let result = &answer["result"];
        let structured = match &result["structuredContent"] {
            Value::Null => {
                serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or("null"))
                    .unwrap_or(Value::Null)
            }
            value => value.clone(),
        };
        Ok((result["isError"] == true, structured))
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn explain(text: &str) {
    println!("  {text}");
}

fn field<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(value, |v, key| &v[*key])
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| value.to_string())
}

/// A value the demo states: never a missing one (a changed wire shape fails the demo loudly
/// instead of printing `null`).
fn stated(value: &Value, what: &str) -> Result<String, String> {
    match value {
        Value::Null => Err(format!("the server's answer has no {what}")),
        other => Ok(text(other)),
    }
}

/// The first item of a list result: a JSON array in the 2026 revision, `{"items": [...]}` in the
/// 2025 revisions' `structuredContent`.
fn first(value: &Value) -> &Value {
    match value {
        Value::Array(items) => items.first().unwrap_or(&Value::Null),
        other => &other["items"][0],
    }
}

fn acc_mcp_path() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/examples/mcp_demo -> target/<profile>/acc-mcp
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("unexpected example location")?;
    let path = dir.join("acc-mcp");
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: run `cargo build --bins` first",
            path.display()
        ))
    }
}

fn run() -> Result<(), String> {
    let acc_mcp = acc_mcp_path()?;
    let temp = std::env::temp_dir().join(format!("acc-demo-{}", std::process::id()));
    let project = temp.join("project");
    let data = temp.join("data");
    std::fs::create_dir_all(project.join("src/store")).map_err(|e| e.to_string())?;
    let result = demo(&acc_mcp, &data, &project);
    let _ = std::fs::remove_dir_all(&temp);
    result
}

fn demo(acc_mcp: &Path, data: &Path, project: &Path) -> Result<(), String> {
    println!("Two MCP clients, alice and bob, each run their own acc-mcp in one project.");
    println!(
        "Their shared state is a SQLite store under a temporary data home: {}",
        data.display()
    );
    let mut alice = Participant::start("alice", acc_mcp, data, project)?;
    let mut bob = Participant::start("bob", acc_mcp, data, project)?;

    let init = alice.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "demo", "version": "1" } }),
    )?;
    let tools = alice.request("tools/list", json!({}))?;
    let names: Vec<String> = tools["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| text(&t["name"]))
        .collect();
    println!(
        "\nalice's client initialised with revision {}; acc-mcp offers {} tools:",
        stated(&init["result"]["protocolVersion"], "protocol version")?,
        names.len()
    );
    println!("  {}", names.join(", "));
    explain("Initialising created nothing: a participant joins with its first tool call.");
    bob.request("initialize", json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "demo", "version": "1" } }))?;

    let (_, status) = bob.call("acc_status", json!({}))?;
    explain(&format!(
        "bob joined: workspace {}, {} session(s) present, protection {}.",
        stated(field(&status, &["workspace", "workspaceId"]), "workspace")?,
        status["sessions"].as_array().map(Vec::len).unwrap_or(0),
        stated(field(&status, &["workspace", "protection"]), "protection")?
    ));

    alice.call("acc_work", json!({ "summary": "split the store module", "mode": "edit", "resourceHints": ["file:src/store/**"] }))?;
    explain("alice declared her intent: awareness only, it reserves nothing.");
    let (_, claim) = alice.call("acc_claim", json!({ "action": "acquire", "resource": "file:src/store/**", "reason": "splitting the store" }))?;
    explain(&format!(
        "alice holds {} exclusively until {} (claim {}).",
        stated(&claim["resource"], "resource")?,
        stated(&claim["expiresAt"], "expiry")?,
        stated(&claim["claimId"], "claim id")?
    ));

    let (refused, error) = bob.call(
        "acc_claim",
        json!({ "action": "acquire", "resources": ["file:README.md", "file:src/store/query.rs"] }),
    )?;
    let holder = stated(
        &error["error"]["details"]["conflicts"][0]["claims"][0]["ownerParticipantId"],
        "conflict holder",
    )?;
    explain(&format!(
        "refused ({}): {} — the batch was all or nothing, so bob claimed neither file; the holder is {holder}.",
        if refused {
            "isError"
        } else {
            "unexpected success"
        },
        stated(field(&error, &["error", "code"]), "error code")?
    ));

    let (_, sent) = alice.call("acc_request", json!({ "toParticipantId": "bob", "title": "review the store split", "detail": "queries moved to src/store/query.rs" }))?;
    let request_id = stated(field(&sent, &["message", "messageId"]), "message id")?;
    explain(&format!(
        "recorded {request_id}; delivery to bob: {} via {} (stored durably, not read: MCP clients poll).",
        stated(&sent["delivery"][0]["outcome"], "delivery outcome")?,
        stated(&sent["delivery"][0]["transport"], "delivery transport")?,
    ));

    let (_, inbox) = bob.call("acc_inbox", json!({}))?;
    let item = first(&inbox);
    explain(&format!(
        "bob's inbox lists a summary: {} from {}, {} body bytes, receipt {}; no body yet.",
        stated(&item["kind"], "kind")?,
        stated(&item["fromParticipantId"], "sender")?,
        stated(&item["bodyBytes"], "body size")?,
        stated(field(item, &["receipt", "state"]), "receipt state")?
    ));
    let (_, read) = bob.call("acc_inbox", json!({ "messageId": request_id }))?;
    explain(&format!(
        "the exact read returns the body (untrusted peer text): \"{}\"; bob's receipt is now {}.",
        stated(&first(&read)["body"], "body")?,
        stated(field(first(&read), &["receipt", "state"]), "receipt state")?
    ));
    let (refused, error) = bob.call("acc_ack", json!({ "messageId": request_id }))?;
    explain(&format!(
        "{}: {} — a request is resolved by a reply, not an ack.",
        if refused {
            "refused"
        } else {
            "unexpectedly accepted"
        },
        stated(field(&error, &["error", "code"]), "error code")?
    ));
    let (_, reply) = bob.call(
        "acc_reply",
        json!({ "messageId": request_id, "body": "looks right; query.rs needs a test" }),
    )?;
    explain(&format!(
        "bob answered in thread {}; his receipt of the request is {}.",
        stated(field(&reply, &["message", "threadId"]), "thread")?,
        stated(field(&reply, &["receipt", "state"]), "receipt state")?
    ));

    let (_, inbox) = alice.call("acc_inbox", json!({}))?;
    let answer_id = stated(&first(&inbox)["messageId"], "message id")?;
    explain(&format!(
        "alice sees the {} in reply to {}.",
        stated(&first(&inbox)["kind"], "kind")?,
        stated(&first(&inbox)["inReplyTo"], "inReplyTo")?
    ));
    alice.call("acc_ack", json!({ "messageId": answer_id }))?;
    let (_, released) = alice.call("acc_release", json!({ "all": true }))?;
    explain(&format!(
        "alice acknowledged the answer and released {} claim(s).",
        released["released"].as_array().map(Vec::len).unwrap_or(0)
    ));
    let (_, claim) = bob.call(
        "acc_claim",
        json!({ "action": "acquire", "resource": "file:src/store/query.rs" }),
    )?;
    explain(&format!(
        "now bob holds {}.",
        stated(&claim["resource"], "resource")?
    ));

    let (_, status) = alice.call("acc_status", json!({}))?;
    println!("\nThe room at the end:");
    for session in status["sessions"].as_array().into_iter().flatten() {
        let intent = session["intent"]["summary"]
            .as_str()
            .map(|s| format!(", intent: {s}"))
            .unwrap_or_default();
        println!(
            "  {} ({}, {}){intent}",
            stated(&session["participantId"], "participant")?,
            stated(&session["harness"], "harness")?,
            stated(&session["presence"], "presence")?
        );
    }
    for claim in status["claims"].as_array().into_iter().flatten() {
        println!(
            "  {} held by {}",
            stated(&claim["resource"], "resource")?,
            stated(&claim["ownerParticipantId"], "holder")?
        );
    }
    for item in status["attention"].as_array().into_iter().flatten() {
        let with = item["otherParticipantId"]
            .as_str()
            .map(|other| format!(" (with {other})"))
            .unwrap_or_default();
        println!(
            "  attention {} for {} on {}{with}",
            stated(&item["rule"], "rule")?,
            stated(&item["participantId"], "participant")?,
            stated(&item["resource"], "resource")?,
        );
    }
    explain(
        "alice's intent still names src/store/** while bob holds a file in it: ACC tells both.",
    );
    Ok(())
}

fn main() {
    if let Err(error) = run() {
        eprintln!("demo failed: {error}");
        std::process::exit(1);
    }
}

//! `acc contract verify` and `acc contract capture` through the real binary.

use std::path::{Path, PathBuf};

use acc_tests::{World, repo_root};

fn copy_contracts(world: &World) -> PathBuf {
    let to = world.temp.path().join("contracts");
    for client in std::fs::read_dir(repo_root().join("contracts"))
        .expect("contracts")
        .flatten()
    {
        let dir = to.join(client.file_name());
        std::fs::create_dir_all(&dir).expect("mkdir");
        for file in std::fs::read_dir(client.path())
            .expect("client dir")
            .flatten()
        {
            std::fs::copy(file.path(), dir.join(file.file_name())).expect("copy");
        }
    }
    to
}

fn verify(world: &World, dir: &Path) -> acc_tests::Run {
    world.acc(&["contract", "verify", "--dir", dir.to_str().expect("utf8")])
}

fn problems(run: &acc_tests::Run) -> String {
    let error = run.err(4, "invalid_data");
    error["details"]["problems"].to_string()
}

#[test]
fn the_repository_contracts_verify_and_the_example_is_eligible() {
    let world = World::new();
    let report = verify(&world, &repo_root().join("contracts")).ok_json();
    assert_eq!(report["valid"], true);
    let example = acc_tests::listed_adapter(&report, "example");
    assert_eq!(example["eligible"], true, "{report}");
    assert_eq!(example["clientVersion"], "1.2.0");
}

#[test]
fn verify_refuses_what_the_evidence_does_not_support() {
    let world = World::new();
    let dir = copy_contracts(&world);
    let capture = dir.join("example/1.2.0-linux-x64.toml");
    let original = std::fs::read_to_string(&capture).expect("capture");

    std::fs::write(
        &capture,
        original.replace("busy = \"rejected-busy\"", "busy = \"unobserved\""),
    )
    .expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(
        text.contains("result pass needs every branch observed; unobserved: busy"),
        "{text}"
    );
    assert!(
        text.contains("not backed by an anchor with a passing capture"),
        "{text}"
    );

    std::fs::write(&capture, format!("colour = \"blue\"\n{original}")).expect("write");
    assert!(problems(&verify(&world, &dir)).contains("unknown field `colour`"));

    std::fs::write(
        &capture,
        original.replace("result = \"pass\"", "result = \"fail\""),
    )
    .expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(text.contains("needs at least one limitation"), "{text}");

    // Hand edits its transcript does not back: a branch, the digest, another client's
    // fingerprint.
    std::fs::write(
        &capture,
        original.replace("busy = \"rejected-busy\"", "busy = \"queued-after-turn\""),
    )
    .expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(
        text.contains(
            "branch busy = `queued-after-turn`, but its transcript shows `rejected-busy`"
        ),
        "{text}"
    );
    let digest = |text: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix("transcript_sha256 = "))
            .expect("digest")
            .trim_matches('"')
            .to_string()
    };
    std::fs::write(
        &capture,
        original.replace(&digest(&original), &"0".repeat(64).replacen('0', "1", 1)),
    )
    .expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(text.contains("was changed after it was made"), "{text}");
    let codex = std::fs::read_to_string(dir.join("codex/0.169.0-linux-x64.toml")).expect("codex");
    let fingerprint = |text: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix("executable_sha256 = "))
            .expect("fingerprint")
            .trim_matches('"')
            .to_string()
    };
    let borrowed = original.replace(&fingerprint(&original), &fingerprint(&codex));
    std::fs::write(&capture, &borrowed).expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(
        text.contains("executable_sha256 = `") && text.contains("but its transcript records"),
        "{text}"
    );
    // The same forgery carried into the transcript, its digest recomputed: the fingerprint is
    // still another client's.
    let transcript = dir.join("example/1.2.0-linux-x64.transcript.jsonl");
    let lines = std::fs::read_to_string(&transcript)
        .expect("transcript")
        .replace(&fingerprint(&original), &fingerprint(&codex));
    std::fs::write(&transcript, &lines).expect("write");
    let forged_digest = acc_delivery::contracts::transcript::digest(lines.as_bytes());
    std::fs::write(
        &capture,
        borrowed.replace(&digest(&original), &forged_digest),
    )
    .expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(
        text.contains("provenance does not hold: executable")
            && text.contains("is also recorded for codex 0.169.0"),
        "{text}"
    );
    std::fs::write(
        &transcript,
        lines.replace(&fingerprint(&codex), &fingerprint(&original)),
    )
    .expect("restore transcript");

    std::fs::write(&capture, &original).expect("restore");
    let contract = dir.join("example/contract-example-file-v1.toml");
    let contract_text = std::fs::read_to_string(&contract).expect("contract");
    std::fs::write(
        &contract,
        contract_text.replace(
            "version = \"1.2.0\"\n\n[[anchors]]",
            "version = \"1.1.0\"\n\n[[anchors]]",
        ),
    )
    .expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(text.contains("minimum 1.1.0 on * is not backed"), "{text}");
    // The adapter's higher minimum only narrows the folder's: that agrees. Another offer kind
    // does not.
    assert!(
        !text.contains("adapter example declares example-file-v1 differently"),
        "{text}"
    );
    std::fs::write(
        &contract,
        contract_text.replace("offer_kind = \"message\"", "offer_kind = \"wake\""),
    )
    .expect("write");
    let text = problems(&verify(&world, &dir));
    assert!(
        text.contains("adapter example declares example-file-v1 differently"),
        "{text}"
    );

    // A folder without the example's contract is not the example's folder: the development
    // build's own contracts define it, so this folder is checked for what it holds. (An adapter
    // whose contract no folder defines is a problem: `router::panics_in_handshake_render_and_probe_are_contained`.)
    std::fs::remove_file(&contract).expect("remove");
    verify(&world, &dir).ok_json();
    world
        .acc(&["contract", "verify", "--dir", "/nonexistent/contracts"])
        .err(4, "invalid_data");
}

#[test]
fn capture_produces_evidence_that_verify_accepts() {
    let world = World::new();
    let dir = copy_contracts(&world);
    std::fs::remove_file(dir.join("example/1.2.0-linux-x64.toml")).expect("remove old evidence");
    problems(&verify(&world, &dir));
    let captured = world
        .acc(&[
            "contract",
            "capture",
            "--client",
            "example",
            "--out",
            dir.join("example").to_str().expect("utf8"),
        ])
        .ok_json();
    assert_eq!(captured["capture"]["result"], "pass");
    assert_eq!(captured["capture"]["provenance"], "captured-here");
    assert_eq!(
        captured["capture"]["branches"]["duplicate"],
        "same-message-id"
    );
    verify(&world, &dir).ok_json();
    world
        .acc(&["contract", "capture", "--client", "vscode"])
        .err(2, "invalid_arguments");
}

/// `acc contract capture --client CLIENT` into `dir/CLIENT` with the pinned clients on PATH.
fn capture_into(world: &World, dir: &Path, client: &str) -> serde_json::Value {
    capture_with(world, dir, client, &[])
}

/// `acc contract capture --client CLIENT --out <dir>/<client> EXTRA…`.
fn capture_with(world: &World, dir: &Path, client: &str, extra: &[&str]) -> serde_json::Value {
    capture_run(world, dir, client, extra, &[]).ok_json()
}

/// The capture's run, with `env` added to its environment.
fn capture_run(
    world: &World,
    dir: &Path,
    client: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> acc_tests::Run {
    // The client's own PATH (Qwen Code and Kimi Code run on their Node.js 22), and OpenCode's
    // plugin package as OpenCode installs it, so no capture reaches for a registry.
    let clients = acc_tests::clients();
    let path = match acc_clients::Client::parse(client) {
        Some(known) => clients.path_for(known),
        None => clients.path(),
    };
    let seed = clients.opencode_seed.to_string_lossy().into_owned();
    let out = dir.join(client);
    let mut args = vec![
        "contract",
        "capture",
        "--client",
        client,
        "--out",
        out.to_str().expect("utf8"),
    ];
    args.extend_from_slice(extra);
    let mut env_all = vec![
        ("PATH", path.as_str()),
        (acc_capture::guard::OPENCODE_SEED, seed.as_str()),
    ];
    env_all.extend_from_slice(env);
    world.acc_with(&args, &env_all)
}

/// Capture the write guard of ACC's hooks in an installed client into a copy of the contracts
/// folder from which that client's committed write-guard capture was removed: every branch is
/// observed and `acc contract verify` accepts the folder.
fn capture_write_guard(client: &str, version: &str) {
    let world = World::new();
    let dir = copy_contracts(&world);
    let stem = format!("{version}-linux-x64-write-guard");
    for ext in ["toml", "transcript.jsonl"] {
        std::fs::remove_file(dir.join(client).join(format!("{stem}.{ext}")))
            .expect("remove the committed capture");
    }
    let captured = capture_with(&world, &dir, client, &["--write-guard"]);
    let capture = &captured["capture"];
    assert_eq!(capture["capability"], "beforeWrite", "{captured}");
    assert_eq!(capture["result"], "pass", "{captured}");
    assert_eq!(
        capture["branches"],
        serde_json::json!({ "claimed": "denied", "unclaimed": "written", "released": "written" })
    );
    assert!(
        captured["file"]
            .as_str()
            .is_some_and(|f| f.ends_with(&format!("{stem}.toml"))),
        "{captured}"
    );
    let transcript =
        std::fs::read_to_string(dir.join(client).join(format!("{stem}.transcript.jsonl")))
            .expect("transcript");
    assert!(
        transcript.contains("claimed exclusively (guarded) by holder"),
        "{transcript}"
    );
    verify(&world, &dir).ok_json();
}

#[test]
fn the_write_guard_of_claude_code_is_captured_and_verify_accepts_it() {
    capture_write_guard("claude-code", "2.1.328");
}

#[test]
fn the_write_guard_of_codex_is_captured_and_verify_accepts_it() {
    capture_write_guard("codex", "0.169.0");
}

#[test]
fn the_write_guard_of_gemini_cli_is_captured_and_verify_accepts_it() {
    capture_write_guard("gemini", "0.61.0");
}

#[test]
fn the_write_guard_of_qwen_code_is_captured_and_verify_accepts_it() {
    capture_write_guard("qwen", "0.24.4");
}

#[test]
fn the_write_guard_of_opencode_is_captured_and_verify_accepts_it() {
    capture_write_guard("opencode", "1.18.33");
}

#[test]
fn the_write_guard_of_kimi_code_is_captured_and_verify_accepts_it() {
    capture_write_guard("kimi", "2.1.0");
}

#[test]
fn a_write_guard_capture_is_asked_of_a_client_acc_has_hooks_for() {
    let world = World::new();
    let refused = world.acc(&[
        "contract",
        "capture",
        "--client",
        "example",
        "--write-guard",
    ]);
    let error = refused.err(2, "invalid_arguments");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("claude-code, codex, gemini, qwen, opencode or kimi")),
        "{error}"
    );
}

/// Capture an installed client into a copy of the contracts folder, check that every branch
/// was observed, and that `acc contract verify` accepts the folder with the new capture.
fn capture_installed(client: &str, version: &str, idle: &str) {
    let world = World::new();
    capture_installed_in(&world, client, version, idle, &[]);
}

/// [`capture_installed`] in `world`, with `env` added to the capture's environment; its stderr.
fn capture_installed_in(
    world: &World,
    client: &str,
    version: &str,
    idle: &str,
    env: &[(&str, &str)],
) -> String {
    let dir = copy_contracts(world);
    let captured_file = dir.join(client).join(format!("{version}-linux-x64.toml"));
    let _ = std::fs::remove_file(&captured_file);
    let run = capture_run(world, &dir, client, &[], env);
    let stderr = run.stderr.clone();
    let captured = run.ok_json();
    let capture = &captured["capture"];
    assert_eq!(capture["version"], version, "{captured}");
    assert_eq!(
        capture["result"], "pass",
        "every branch observed: {captured}"
    );
    assert_eq!(capture["provenance"], "captured-here");
    assert_eq!(capture["limitations"], serde_json::json!([]));
    assert_eq!(
        capture["branches"],
        serde_json::json!({
            "idle": idle, "busy": "queued-after-turn", "reply": "routed",
            "duplicate": "same-message-id", "fallback": "queued",
        })
    );
    assert!(captured_file.is_file());
    let transcript = captured_file.with_file_name(format!("{version}-linux-x64.transcript.jsonl"));
    let text = std::fs::read_to_string(&transcript).expect("the transcript beside the capture");
    assert!(
        !text.contains("acc capture probe"),
        "peer bodies are redacted: {text}"
    );
    // The busy branch's order was observed, not assumed.
    assert!(
        text.lines()
            .any(|l| l.contains("\"branch\":\"busy\"") && l.contains("\"afterTurnEnd\":true")),
        "{text}"
    );
    verify(world, &dir).ok_json();
    stderr
}

#[test]
fn the_installed_codex_is_captured_through_its_daemon_and_verify_accepts_the_capture() {
    capture_installed("codex", "0.169.0", "offered");
}

/// A temporary folder too long for Codex's control socket under the capture's folders (a
/// socket path holds at most 107 bytes): the capture says so, puts its folders under /tmp, and
/// passes as from a short one.
#[test]
fn the_installed_codex_is_captured_from_a_temporary_folder_too_long_for_its_socket() {
    let world = World::new();
    let long = world
        .tmp()
        .join("a temporary folder whose name is long enough to matter");
    std::fs::create_dir_all(&long).expect("the long temporary folder");
    let said = capture_installed_in(
        &world,
        "codex",
        "0.169.0",
        "offered",
        &[("TMPDIR", long.to_str().expect("utf8"))],
    );
    assert!(
        said.contains("too long for the sockets") && said.contains("under /tmp instead"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_dir(&long).expect("read").count(),
        0,
        "nothing left in, or made in, the long folder"
    );
}

#[test]
fn the_installed_claude_code_is_captured_with_a_loopback_model_and_verify_accepts_it() {
    // A wake runs a turn; the receipt stays queued until the prompt hook carries the message.
    capture_installed("claude-code", "2.1.328", "woken");
}

/// OpenCode's terminal interface woken through ACC's plugin's socket: the wake is a user
/// message of its own, so the idle session runs a turn and a busy one takes it after its turn.
#[test]
fn the_installed_opencode_is_woken_through_accs_plugin_and_verify_accepts_the_capture() {
    capture_installed("opencode", "1.18.33", "woken");
}

/// Qwen Code's terminal interface woken through its cross-session socket with the token its
/// hooks are given.
#[test]
fn the_installed_qwen_code_is_woken_through_its_socket_and_verify_accepts_the_capture() {
    capture_installed("qwen", "0.24.4", "woken");
}

/// Gemini CLI's next-turn context, captured from the installed client: the message stands in
/// the very model request of the next turn, and a resumed conversation does not deliver it
/// again.
#[test]
fn the_installed_gemini_next_turn_is_captured_and_verify_accepts_it() {
    let world = World::new();
    let dir = copy_contracts(&world);
    let captured_file = dir.join("gemini/0.61.0-linux-x64.toml");
    std::fs::remove_file(&captured_file).expect("remove the committed capture");
    let captured = capture_into(&world, &dir, "gemini");
    let capture = &captured["capture"];
    assert_eq!(capture["capability"], "nextTurn", "{captured}");
    assert_eq!(capture["result"], "pass", "{captured}");
    assert_eq!(
        capture["branches"],
        serde_json::json!({ "carried": "in-next-request", "resumed": "not-repeated" })
    );
    let transcript = std::fs::read_to_string(dir.join("gemini/0.61.0-linux-x64.transcript.jsonl"))
        .expect("transcript");
    assert!(
        !transcript.contains("acc capture probe"),
        "peer bodies are redacted"
    );
    verify(&world, &dir).ok_json();
}

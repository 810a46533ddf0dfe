//! The README's first command: `./demo.sh` runs the `mcp_demo` example, and every value it
//! states is checked here (the body, each receipt state, each outcome), so a change of the wire
//! cannot make it print `null` again unseen. The example itself refuses to state a value the
//! server did not give.

use acc_tests::World;

#[test]
fn the_demo_states_only_true_values() {
    let script = std::fs::read_to_string(acc_tests::repo_root().join("demo.sh")).expect("demo.sh");
    assert!(
        script.contains("exec target/debug/examples/mcp_demo"),
        "demo.sh runs the example this test runs: {script}"
    );
    let world = World::new();
    let mut command = world.command_path(acc_tests::bin_dir().join("examples/mcp_demo"));
    command.env_remove("ACC_DATA_HOME");
    let run = world.run(command, "mcp_demo");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let out = run.stdout;
    let request = out
        .split("recorded ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("the request's id: {out}"))
        .to_string();
    assert!(request.starts_with("message_"), "{request}");
    for stated in [
        "acc-mcp offers 11 tools",
        "session(s) present, protection advisory.",
        "alice holds file:src/store/** exclusively until 20",
        "refused (isError): claim_conflict",
        "so bob claimed neither file; the holder is alice.",
        "delivery to bob: queued via durable",
        "bob's inbox lists a summary: request from alice, 35 body bytes, receipt queued; no body yet.",
        "the exact read returns the body (untrusted peer text): \"queries moved to src/store/query.rs\"; bob's receipt is now retrieved.",
        "refused: reply_required",
        &format!("bob answered in thread {request}; his receipt of the request is acknowledged."),
        &format!("alice sees the answer in reply to {request}."),
        "alice acknowledged the answer and released 1 claim(s).",
        "now bob holds file:src/store/query.rs.",
        "  alice (mcp, online), intent: split the store module",
        "  bob (mcp, online)",
        "  file:src/store/query.rs held by bob",
        "  attention claim_conflict for alice on file:src/store/** (with bob)",
        "  attention claim_contended for bob on file:src/store/query.rs (with alice)",
    ] {
        assert!(out.contains(stated), "the demo states {stated:?}:\n{out}");
    }
    for false_value in ["null", "unexpected", "\"\""] {
        assert!(
            !out.contains(false_value),
            "the demo states no {false_value}:\n{out}"
        );
    }
}

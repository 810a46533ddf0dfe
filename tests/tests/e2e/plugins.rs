//! Loading adapter plugins: every refusal reason, duplicates, the dependency rule of
//! `adapter-api`, and adapters built outside the workspace (the adapter author's path) or
//! against a changed interface.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use acc_tests::{World, repo_root};
use serde_json::Value;

fn dll(name: &str) -> String {
    format!("lib{name}{}", std::env::consts::DLL_SUFFIX)
}

fn adapters_json(world: &World, dir: &Path, env: &[(&str, &str)]) -> Value {
    // A panicking adapter's own panic hook prints a backtrace when RUST_BACKTRACE asks (CI's
    // environment does), symbolising the whole process's debug information inside the call's
    // 3 s deadline; on a loaded machine that alone ran past it, and the refusal read "timeout"
    // where this test checks the panic is named. Both are refusals; the listing here is about
    // which reason each fault gets.
    let mut all = vec![
        ("ACC_ADAPTER_PATH", dir.to_str().expect("utf8")),
        ("RUST_BACKTRACE", "0"),
    ];
    all.extend_from_slice(env);
    world.acc_with(&["adapters"], &all).ok_json()
}

fn refusal(listing: &Value, file: &str) -> String {
    listing["refused"]
        .as_array()
        .expect("refused")
        .iter()
        .find(|r| r["file"].as_str().is_some_and(|f| f.ends_with(file)))
        .and_then(|r| r["reason"].as_str())
        .unwrap_or_else(|| panic!("{file} was not refused: {listing}"))
        .to_string()
}

fn loaded(listing: &Value) -> Vec<String> {
    listing["adapters"]
        .as_array()
        .expect("adapters")
        .iter()
        .map(|a| a["adapterId"].as_str().expect("id").to_string())
        .collect()
}

/// The ids loaded from files in `dir` (the development build's own adapters load too: the
/// search path adds `ACC_ADAPTER_PATH` after them).
fn loaded_from(listing: &Value, dir: &Path) -> Vec<String> {
    listing["adapters"]
        .as_array()
        .expect("adapters")
        .iter()
        .filter(|a| {
            a["file"]
                .as_str()
                .is_some_and(|f| Path::new(f).starts_with(dir))
        })
        .map(|a| a["adapterId"].as_str().expect("id").to_string())
        .collect()
}

/// A shared library that is not an ACC adapter (the C math library).
fn foreign_library() -> Option<PathBuf> {
    for dir in [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/usr/lib",
    ] {
        for name in ["libm.so.6", "libz.so.1"] {
            let path = Path::new(dir).join(name);
            if path.exists() {
                return Some(path);
            }
        }
    }
    None
}

#[test]
fn the_example_loads_from_beside_the_executable() {
    let world = World::new();
    let listing = world.acc(&["adapters"]).ok_json();
    assert!(
        loaded(&listing).contains(&"example".to_string()),
        "{listing}"
    );
    let example = acc_tests::listed_adapter(&listing, "example");
    assert_eq!(example["offerKind"], "message");
    assert_eq!(example["apiVersion"], acc_adapter_api::API_VERSION);
    assert_eq!(example["contract"]["contractId"], "example-file-v1");
    assert_eq!(example["evidence"]["admissible"], true, "{example}");
    assert!(
        listing["refused"].as_array().expect("refused").is_empty(),
        "{listing}"
    );
    // Without its capture the same adapter loads but can deliver nothing live: the scenario
    // `router_evidence` (the contracts folders are the development build's own here).
}

#[test]
fn every_bad_file_is_refused_with_a_reason_and_the_host_carries_on() {
    let world = World::new();
    let dir = world.temp.path().join("adapters");
    std::fs::create_dir_all(&dir).expect("dir");
    let bins = acc_tests::bin_dir();
    std::fs::copy(
        bins.join(dll("acc_adapter_example")),
        dir.join(dll("acc_adapter_example")),
    )
    .expect("example");
    std::fs::copy(
        bins.join(dll("acc_adapter_example")),
        dir.join(dll("acc_adapter_example_twin")),
    )
    .expect("twin");
    std::fs::copy(
        bins.join(dll("faulty_adapter")),
        dir.join(dll("acc_adapter_faulty")),
    )
    .expect("faulty");
    std::fs::write(dir.join(dll("acc_adapter_text")), "this is not a library").expect("text");
    std::fs::write(dir.join("README.md"), "not considered").expect("other");
    let foreign =
        foreign_library().expect("a system shared library to stand in for a non-ACC library");
    std::fs::copy(foreign, dir.join(dll("acc_adapter_foreign"))).expect("foreign");

    std::fs::copy(
        bins.join(dll("acc_adapter_example")),
        dir.join("example-misnamed.so"),
    )
    .expect("misnamed");

    let listing = adapters_json(&world, &dir, &[]);
    assert_eq!(loaded_from(&listing, &dir), vec!["faulty"], "{listing}");
    // The development build's example comes first in the search path; copies of it are
    // duplicates, named as such.
    for copy in ["acc_adapter_example", "acc_adapter_example_twin"] {
        assert!(
            refusal(&listing, &dll(copy))
                .contains("duplicate adapter id `example` (already loaded from"),
            "{copy}"
        );
    }
    assert!(refusal(&listing, &dll("acc_adapter_text")).contains("not a shared library"));
    assert!(refusal(&listing, &dll("acc_adapter_foreign")).contains("not an ACC adapter"));
    assert!(
        refusal(&listing, "example-misnamed.so").contains("must be named libacc_adapter_<name>"),
        "a library not named like an adapter is reported"
    );
    assert_eq!(
        listing["refused"].as_array().map(Vec::len),
        Some(5),
        "README.md is not considered: {listing}"
    );

    for (mode, needle) in [
        (
            "init-error",
            "init failed (init_failed): the faulty adapter refuses to start",
        ),
        ("init-panic", "init failed (panic)"),
        ("describe-panic", "describe failed (panic)"),
        // A call that hangs is abandoned at its deadline, and the step is named.
        ("init-hang", "init failed (timeout)"),
        ("describe-hang", "describe failed (timeout)"),
    ] {
        let config = format!("{{\"faulty\":{{\"mode\":\"{mode}\"}}}}");
        let listing = adapters_json(&world, &dir, &[("ACC_ADAPTER_CONFIG", &config)]);
        let reason = refusal(&listing, &dll("acc_adapter_faulty"));
        assert!(reason.contains(needle), "{mode}: {reason}");
        assert!(
            reason.lines().count() == 1 && reason.len() < 400,
            "short: {reason}"
        );
        assert!(
            loaded(&listing).contains(&"example".to_string()),
            "{mode}: the host carried on"
        );
    }
    // The versions a marker names (written into copies of the file: the host reads them from
    // the file, never by running it).
    patch_marker(&dir.join(dll("acc_adapter_faulty")), 8, 7);
    let listing = adapters_json(&world, &dir, &[]);
    let reason = refusal(&listing, &dll("acc_adapter_faulty"));
    assert!(
        reason.contains("built for ABI 7") && reason.contains("host speaks ABI 1"),
        "{reason}"
    );
    patch_marker(&dir.join(dll("acc_adapter_faulty")), 8, 1);
    patch_marker(&dir.join(dll("acc_adapter_faulty")), 12, 2);
    let listing = adapters_json(&world, &dir, &[]);
    let reason = refusal(&listing, &dll("acc_adapter_faulty"));
    assert!(
        reason.contains("incompatible adapter API version 2.")
            && reason.contains(&format!(
                "this host speaks {}",
                acc_adapter_api::API_VERSION
            )),
        "{reason}"
    );
    world
        .acc_with(&["adapters"], &[("ACC_ADAPTER_CONFIG", "[1]")])
        .err(2, "invalid_arguments");
}

/// Overwrite the 32-bit word at `offset` of ACC's marker in `file` (little-endian).
fn patch_marker(file: &Path, offset: usize, value: u32) {
    let mut bytes = std::fs::read(file).expect("read adapter");
    let magic = acc_adapter_api::MARKER_MAGIC;
    let at = bytes
        .windows(magic.len())
        .position(|w| w == magic)
        .expect("the marker is in the file");
    bytes[at + offset..at + offset + 4].copy_from_slice(&value.to_le_bytes());
    std::fs::write(file, bytes).expect("write adapter");
}

/// Compile C to an object file (not linked).
fn c_object(source: &str, out: &Path) {
    gcc(source, out, &["-c", "-fPIC"]);
}

/// Compile a C shared library (gcc is on every machine the suite runs on).
fn c_library(source: &str, out: &Path) {
    gcc(source, out, &["-shared", "-fPIC"]);
}

fn gcc(source: &str, out: &Path, flags: &[&str]) {
    let c = out.with_extension("c");
    std::fs::write(&c, source).expect("c source");
    let status = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(out)
        .arg(&c)
        .status()
        .expect("gcc");
    assert!(status.success(), "gcc built {}", out.display());
}

/// Hostile files named like adapters, each refused with its reason before any code in it
/// runs, while `acc adapters`, a hook and `acc-mcp` (binding and sending, which load every
/// adapter) keep working and exit normally.
#[test]
fn hostile_files_are_refused_before_any_of_their_code_runs() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let dir = world.temp.path().join("adapters");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod dir");
    let example = acc_tests::bin_dir().join(dll("acc_adapter_example"));
    std::fs::copy(&example, dir.join(dll("acc_adapter_example"))).expect("example");
    let witness = world.temp.path().join("constructor-ran");
    // A library whose constructor writes a file: refused unread, so the file never appears.
    c_library(
        &format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void run(void) {{ FILE *f = fopen(\"{}\", \"w\"); if (f) fclose(f); }}\nint acc_adapter_abi_version(void) {{ return 1; }}\n",
            witness.display()
        ),
        &dir.join(dll("acc_adapter_constructor")),
    );
    // An impostor exporting the marker's name as a function; then markers that are not one,
    // each stopped by its own check of the file's ELF tables: zero-filled (no bytes in the
    // file), of the wrong size, and the right size with other bytes hidden from the dynamic
    // symbols (found in the full table, then refused).
    for (name, source) in [
        ("acc_adapter_impostor", "void acc_adapter_marker(void) {}\n"),
        ("acc_adapter_unfilled", "char acc_adapter_marker[32];\n"),
        (
            "acc_adapter_short",
            "const char acc_adapter_marker[16] = \"ACCADAPT\";\n",
        ),
        (
            "acc_adapter_hidden",
            "__attribute__((visibility(\"hidden\"))) const char acc_adapter_marker[32] = \"not the marker\";\nconst char *acc_adapter_marker_ref(void) { return acc_adapter_marker; }\n",
        ),
    ] {
        c_library(source, &dir.join(dll(name)));
    }
    // An object file, not a library.
    c_object(
        "int acc_adapter_abi_version(void) { return 1; }\n",
        &dir.join(dll("acc_adapter_object")),
    );
    let random: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(dir.join(dll("acc_adapter_random")), random).expect("random");
    std::fs::write(dir.join(dll("acc_adapter_empty")), b"").expect("empty");
    std::fs::create_dir(dir.join(dll("acc_adapter_directory"))).expect("directory");
    let fifo = dir.join(dll("acc_adapter_fifo"));
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success(),
        "mkfifo"
    );
    std::os::unix::fs::symlink("/dev/zero", dir.join(dll("acc_adapter_zero"))).expect("symlink");
    let writable = dir.join(dll("acc_adapter_writable"));
    std::fs::copy(&example, &writable).expect("copy");
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let aborting = dir.join(dll("acc_adapter_aborting"));
    std::fs::copy(&example, &aborting).expect("copy");
    patch_marker(&aborting, 24, 0);

    let listing = adapters_json(&world, &dir, &[]);
    assert!(loaded_from(&listing, &dir).is_empty(), "{listing}");
    assert!(
        loaded(&listing).contains(&"example".to_string()),
        "{listing}"
    );
    for (file, needle) in [
        ("acc_adapter_example", "duplicate adapter id `example`"),
        ("acc_adapter_constructor", "no acc_adapter_marker marker"),
        ("acc_adapter_impostor", "is a Text symbol"),
        ("acc_adapter_random", "not a shared library"),
        ("acc_adapter_empty", "not a shared library"),
        ("acc_adapter_directory", "not a regular file"),
        ("acc_adapter_fifo", "not a regular file"),
        ("acc_adapter_zero", "not a regular file"),
        ("acc_adapter_writable", "writable by group or others"),
        ("acc_adapter_aborting", "panic = \"abort\""),
        ("acc_adapter_unfilled", "marker is not readable"),
        ("acc_adapter_short", "is 16 bytes, not 32"),
        ("acc_adapter_hidden", "does not hold ACC's marker"),
        ("acc_adapter_object", "a Relocatable object file"),
    ] {
        let reason = refusal(&listing, &dll(file));
        assert!(reason.contains(needle), "{file}: {reason}");
    }
    assert!(!witness.exists(), "no constructor of a refused file ran");

    // A hook and acc-mcp with these files beside them: they work and exit normally.
    let env = [("ACC_ADAPTER_PATH", dir.to_str().expect("utf8"))];
    let prompt = serde_json::json!({
        "session_id": "hostile-plugins",
        "cwd": world.dir,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "hi",
    })
    .to_string();
    let hook = world.hook_with("claude-code", "UserPromptSubmit", &prompt, &env);
    assert_eq!(hook.code, 0, "the hook exits normally: {}", hook.stderr);
    let bob = world.attach("bob");
    let endpoint =
        serde_json::json!({ "file": world.temp.path().join("offers.jsonl") }).to_string();
    world
        .acc_as_with(
            &bob,
            &[
                "bind",
                "--adapter",
                "example",
                "--policy",
                "all",
                "--endpoint",
                &endpoint,
            ],
            &env,
        )
        .ok_json();
    let mut mcp = acc_tests::JsonRpcChild::spawn({
        let mut command = world.command("acc-mcp");
        command.env("ACC_MCP_PARTICIPANT", "alice").envs(env);
        command
    });
    mcp.request(
        1,
        "initialize",
        serde_json::json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    let sent = mcp.request(
        2,
        "tools/call",
        serde_json::json!({ "name": "acc_message", "arguments": { "to": ["bob"], "subject": "s", "body": "b" } }),
    );
    assert_eq!(
        sent["result"]["structuredContent"]["delivery"][0]["outcome"], "offered",
        "{sent}"
    );
    let status = mcp.finish(Duration::from_secs(10));
    assert!(status.success(), "acc-mcp exits normally: {status:?}");
    assert!(!witness.exists());
}

#[test]
fn adapter_api_depends_on_abi_stable_and_serde_only() {
    let mut deps: Vec<String> = acc_tests::cargo_tree("acc-adapter-api", Some(1))
        .into_iter()
        .skip(1)
        .collect();
    deps.sort_unstable();
    deps.dedup();
    assert_eq!(deps, vec!["abi_stable", "serde", "serde_json"]);
    let source =
        std::fs::read_to_string(repo_root().join("adapter-api/src/lib.rs")).expect("source");
    assert!(
        source.contains("#![deny(missing_docs)]"),
        "every public item must stay documented"
    );
}

/// `acc-adapter-api` as `cargo package` makes it for publishing (no upload), unpacked under
/// `outside`: what an author's `acc-adapter-api = "1.3"` would download.
fn packaged_api(outside: &Path) -> PathBuf {
    let mut package = Command::new(env!("CARGO"));
    package
        .args([
            "package",
            "-p",
            "acc-adapter-api",
            "--no-verify",
            "--allow-dirty",
            "--offline",
            "--quiet",
        ])
        .current_dir(repo_root())
        .env("CARGO_TARGET_DIR", outside_target());
    acc_tests::run_checked(package, Duration::from_secs(300), "cargo package");
    let version = acc_adapter_api::API_VERSION;
    let crate_file = outside_target()
        .join("package")
        .join(format!("acc-adapter-api-{version}.crate"));
    std::fs::create_dir_all(outside).expect("outside");
    let unpacked = Command::new("tar")
        .arg("-xzf")
        .arg(&crate_file)
        .arg("-C")
        .arg(outside)
        .status()
        .expect("tar");
    assert!(unpacked.success(), "unpack {}", crate_file.display());
    outside.join(format!("acc-adapter-api-{version}"))
}

/// The target directory of adapters built outside the workspace, shared by the tests that
/// build them (cargo locks it), so their dependencies compile once.
fn outside_target() -> PathBuf {
    repo_root().join("target").join("outside-adapters")
}

/// Build `members` (packages under `outside`) as the standalone workspace `outside/<name>`, as
/// an author would: their own lockfile (this repository's, so the same dependency versions,
/// already downloaded: offline), their own profile.
fn build_outside(outside: &Path, name: &str, members: &[&str], profile: &str) {
    let dir = outside.join(name);
    std::fs::create_dir_all(&dir).expect("workspace dir");
    for member in members {
        std::fs::rename(outside.join(member), dir.join(member)).expect("move member");
    }
    let list: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"3\"\nmembers = [{}]\n{profile}",
            list.join(", ")
        ),
    )
    .expect("workspace");
    std::fs::copy(repo_root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock");
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "--offline", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", outside_target())
        .env_remove("RUSTFLAGS");
    acc_tests::run_checked(
        build,
        Duration::from_secs(900),
        &format!("cargo build {name}"),
    );
}

fn standalone_manifest(name: &str, lib: &str, api: &Path, extra_deps: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"1.0.0\"\nedition = \"2024\"\n\n[lib]\nname = \"{lib}\"\ncrate-type = [\"cdylib\", \"rlib\"]\n\n[dependencies]\nacc-adapter-api = {{ path = \"{}\" }}\nabi_stable = \"0.11.3\"\nserde = {{ version = \"1\", features = [\"derive\"] }}\nserde_json = \"1\"\n{extra_deps}\n",
        api.display()
    )
}

/// Build adapters as their own packages, outside this workspace, the way an adapter author
/// does: a copy of `adapters/example`, and the faulty fixture built against a copy of
/// `adapter-api` whose `Description` gained a field (a changed interface).
#[test]
fn adapters_built_outside_the_workspace_load_or_are_refused_by_layout() {
    let world = World::new();
    let root = repo_root();
    let outside = world.temp.path().join("outside");
    // The author's package: the template copied whole, its manifest unchanged, against
    // `acc-adapter-api` exactly as `cargo package` would publish it.
    acc_tests::copy_dir(
        &root.join("adapters/example"),
        &outside.join("author-example"),
    );
    let published = packaged_api(&outside);
    // The same sources built with `panic = "abort"` (a common release profile).
    acc_tests::copy_dir(
        &root.join("adapters/example/src"),
        &outside.join("aborting-example/src"),
    );
    std::fs::write(
        outside.join("aborting-example/Cargo.toml"),
        standalone_manifest(
            "aborting-example",
            "acc_adapter_aborting",
            &root.join("adapter-api"),
            "",
        ),
    )
    .expect("manifest");
    // A changed interface: the same API version, but a field appended to `Description`.
    acc_tests::copy_dir(&root.join("adapter-api"), &outside.join("changed-api"));
    let changed_lib = outside.join("changed-api/src/lib.rs");
    let source = std::fs::read_to_string(&changed_lib).expect("api source");
    let changed = source.replacen(
        "    pub contract: RString,\n}",
        "    pub contract: RString,\n    /// A field the host does not know.\n    pub surprise: u64,\n}",
        1,
    );
    assert_ne!(changed, source, "the interface was changed");
    let changed = changed.replace(
        "contract: payload(&d.contract)?,",
        "contract: payload(&d.contract)?,\n                surprise: 0,",
    );
    std::fs::write(&changed_lib, changed).expect("write changed api");
    std::fs::write(
        outside.join("changed-api/Cargo.toml"),
        "[package]\nname = \"acc-adapter-api\"\nversion = \"1.0.0\"\nedition = \"2024\"\n\n[dependencies]\nabi_stable = \"0.11.3\"\nserde = { version = \"1\", features = [\"derive\"] }\nserde_json = \"1\"\n",
    )
    .expect("api manifest");
    acc_tests::copy_dir(
        &root.join("tests/fixtures/faulty-adapter/src"),
        &outside.join("changed-faulty/src"),
    );
    std::fs::write(
        outside.join("changed-faulty/Cargo.toml"),
        standalone_manifest(
            "changed-faulty",
            "acc_adapter_changed",
            &outside.join("changed-api"),
            "",
        ),
    )
    .expect("manifest");
    // Two standalone workspaces (two different `acc-adapter-api` packages cannot share a
    // lockfile) with one target directory, so the dependencies compile once.
    let target = outside_target();
    let patch = format!(
        "\n[patch.crates-io]\nacc-adapter-api = {{ path = \"{}\" }}\n",
        published.display()
    );
    for (workspace, members, profile) in [
        ("author", vec!["author-example"], patch.as_str()),
        ("changed", vec!["changed-faulty"], ""),
        (
            "aborting",
            vec!["aborting-example"],
            "\n[profile.dev]\npanic = \"abort\"\n",
        ),
    ] {
        build_outside(&outside, workspace, &members, profile);
    }

    let dir = world.temp.path().join("installed");
    std::fs::create_dir_all(&dir).expect("dir");
    for lib in ["acc_adapter_changed", "acc_adapter_aborting"] {
        std::fs::copy(target.join("debug").join(dll(lib)), dir.join(dll(lib))).expect("install");
    }
    std::fs::copy(
        target.join("debug").join(dll("acc_adapter_example")),
        dir.join(dll("acc_adapter_author")),
    )
    .expect("install");
    let listing = adapters_json(&world, &dir, &[]);
    // The author's build loads: every check passes up to its id, which the development
    // build's example already has (the renamed copy of the third-party test delivers).
    assert!(
        refusal(&listing, &dll("acc_adapter_author"))
            .starts_with("duplicate adapter id `example` (already loaded from"),
        "the author's build loads: {listing}"
    );
    let reason = refusal(&listing, &dll("acc_adapter_changed"));
    assert!(
        reason.starts_with("layout check failed: Error:"),
        "{reason}"
    );
    assert!(reason.len() < 400, "reduced to its Error: lines: {reason}");
    let reason = refusal(&listing, &dll("acc_adapter_aborting"));
    assert!(
        reason.contains("built with panic = \"abort\""),
        "an adapter built to abort is refused: {reason}"
    );
}

/// The contract a third-party author writes for their own client (no capture yet: the
/// anchor names the capture `acc contract capture` is to make).
const AUTHOR_CONTRACT: &str = r#"schema = "acc-contract-1"
contract_id = "author-file-v1"
client = "author"
offer_kind = "message"
live_push = true
capability = "livePush"
activation_kinds = ["question", "answer"]
policy_source = "binding"
known_bad = [">=1.3.0, <1.3.2"]
driver = "author-driver"

[[minimums]]
platform = "*"
version = "1.2.0"

[[anchors]]
platform = "linux-x64"
version = "1.2.0"
protocol_contract = "author-file-v1"
capture = "1.2.0-linux-x64.toml"
"#;

/// A third-party adapter, built outside the workspace from the example's sources under its own
/// ids, with its own capture driver: without evidence the router refuses it live delivery; its
/// author captures their client through the driver into the per-user contracts folder, the
/// capture verifies, and the router then admits it.
#[test]
fn a_third_party_adapter_captures_its_client_through_its_own_driver_and_is_then_admitted() {
    let world = World::new();
    let root = repo_root();
    let outside = world.temp.path().join("outside");
    let package = outside.join("third-party");
    acc_tests::copy_dir(&root.join("adapters/example/src"), &package.join("src"));
    // The author's own ids, and the driver under the author's name.
    let lib = package.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).expect("source");
    let renamed = source
        .replace("\"example-file-v1\"", "\"author-file-v1\"")
        .replace(
            "adapter_id: \"example\".into()",
            "adapter_id: \"author\".into()",
        )
        .replace(
            "transport: \"example\".into()",
            "transport: \"author\".into()",
        )
        .replace("client: \"example\".into()", "client: \"author\".into()");
    for id in [
        "adapter_id: \"author\"",
        "transport: \"author\"",
        "client: \"author\"",
        "\"author-file-v1\"",
    ] {
        assert!(renamed.contains(id), "renamed {id}");
    }
    std::fs::write(&lib, renamed).expect("write");
    std::fs::rename(
        package.join("src/bin/acc-example-driver.rs"),
        package.join("src/bin/author-driver.rs"),
    )
    .expect("rename driver");
    std::fs::write(
        package.join("Cargo.toml"),
        standalone_manifest(
            "third-party",
            "acc_adapter_third_party",
            &root.join("adapter-api"),
            "",
        ),
    )
    .expect("manifest");
    build_outside(&outside, "third", &["third-party"], "");

    // The author's contract (no capture yet), beside the library and the driver the build
    // made; installed with acc adapters install, without any environment variable.
    let built = outside_target().join("debug");
    let kit = world.temp.path().join("kit");
    std::fs::create_dir_all(kit.join("author")).expect("kit");
    std::fs::write(
        kit.join("author/contract-author-file-v1.toml"),
        AUTHOR_CONTRACT,
    )
    .expect("contract");
    let installed = world
        .acc(&[
            "adapters",
            "install",
            built
                .join(dll("acc_adapter_third_party"))
                .to_str()
                .expect("utf8"),
            "--contracts",
            kit.to_str().expect("utf8"),
        ])
        .ok_json();
    let user_adapters = world.data_home.join("acc/adapters");
    let contracts = world.data_home.join("acc/contracts");
    assert_eq!(installed["adapterId"], "author", "{installed}");
    assert_eq!(
        installed["file"],
        user_adapters
            .join(dll("acc_adapter_author"))
            .to_str()
            .expect("utf8"),
        "named for its id"
    );
    assert!(
        user_adapters.join("author-driver").is_file(),
        "its driver went with it"
    );
    assert!(
        contracts
            .join("author/contract-author-file-v1.toml")
            .is_file()
    );
    let listing = world.acc(&["adapters"]).ok_json();
    assert!(
        loaded(&listing).contains(&"author".to_string()),
        "{listing}"
    );
    let verify = || {
        let dir = contracts.to_str().expect("utf8");
        world.acc(&["contract", "verify", "--dir", dir])
    };
    let alice = world.attach("alice");
    let bob = world.attach("bob");
    let inbox = world.temp.path().join("bob.jsonl");
    let endpoint = serde_json::json!({ "file": inbox }).to_string();
    let bind = || {
        world.acc_as(
            &bob,
            &[
                "bind",
                "--adapter",
                "author",
                "--policy",
                "all",
                "--endpoint",
                &endpoint,
            ],
        )
    };
    let send = || {
        world
            .acc_as(
                &alice,
                &["message", "--to", "bob", "--subject", "s", "--body", "b"],
            )
            .ok_json()
    };

    // No evidence: the binding can never deliver live, and says why.
    let refused = bind().err(4, "invalid_data");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("no_evidence: live delivery through `author`")),
        "{refused}"
    );

    // The author captures their client through their driver, into the per-user folder.
    let captured = world
        .acc(&[
            "contract",
            "capture",
            "--client",
            "author",
            "--out",
            contracts.join("author").to_str().expect("utf8"),
        ])
        .ok_json();
    let capture = &captured["capture"];
    assert_eq!(capture["result"], "pass", "{captured}");
    assert_eq!(capture["client"], "author");
    assert_eq!(
        capture["branches"],
        serde_json::json!({
            "idle": "offered", "busy": "rejected-busy", "reply": "routed",
            "duplicate": "same-message-id", "fallback": "queued",
        })
    );
    let transcript =
        std::fs::read_to_string(contracts.join("author/1.2.0-linux-x64.transcript.jsonl"))
            .expect("transcript beside the capture");
    assert!(
        transcript.contains("\"driver\":\"author-driver\""),
        "{transcript}"
    );
    assert!(
        !transcript.contains("acc capture probe"),
        "peer bodies are redacted: {transcript}"
    );
    let report = verify().ok_json();
    let author = acc_tests::listed_adapter(&report, "author");
    assert_eq!(author["eligible"], true, "{report}");
    // Without --dir, verify reads every folder the router reads, the per-user one included.
    let all = world.acc(&["contract", "verify"]).ok_json();
    assert!(
        all["dirs"]
            .as_array()
            .expect("dirs")
            .iter()
            .any(|d| d.as_str() == contracts.to_str()),
        "{all}"
    );
    assert_eq!(
        acc_tests::listed_adapter(&all, "author")["eligible"],
        true,
        "{all}"
    );
    assert_eq!(
        acc_tests::listed_adapter(&all, "example")["eligible"],
        true,
        "{all}"
    );

    // Now admitted: bound, and a message is offered live through the author's adapter.
    bind().ok_json();
    let sent = send();
    assert_eq!(sent["delivery"][0]["outcome"], "offered", "{sent}");
    assert_eq!(
        std::fs::read_to_string(&inbox)
            .expect("inbox")
            .lines()
            .count(),
        1
    );

    // A hand-edited capture is no evidence again: live delivery stops, with the reason.
    let file = contracts.join("author/1.2.0-linux-x64.toml");
    let text = std::fs::read_to_string(&file).expect("capture");
    std::fs::write(
        &file,
        text.replace("busy = \"rejected-busy\"", "busy = \"queued-after-turn\""),
    )
    .expect("edit");
    let sent = send();
    assert_eq!(sent["delivery"][0]["outcome"], "queued", "{sent}");
    assert_eq!(sent["delivery"][0]["errorCode"], "no_evidence", "{sent}");
    let problems = verify().err(4, "invalid_data");
    assert!(
        problems.to_string().contains(
            "branch busy = `queued-after-turn`, but its transcript shows `rejected-busy`"
        ),
        "{problems}"
    );

    // Removed again: no longer listed; its contracts stay.
    let removed = world.acc(&["adapters", "remove", "author"]).ok_json();
    assert_eq!(removed["adapterId"], "author");
    let listing = world.acc(&["adapters"]).ok_json();
    assert!(
        !loaded(&listing).contains(&"author".to_string()),
        "{listing}"
    );
    world
        .acc(&["adapters", "remove", "author"])
        .err(2, "invalid_arguments");
    // An adapter installed elsewhere is not the per-user folder's to remove or shadow.
    let refusal = world
        .acc(&["adapters", "remove", "example"])
        .err(4, "invalid_data");
    assert!(
        refusal["message"]
            .as_str()
            .is_some_and(|m| m.contains("not in the per-user folder")),
        "{refusal}"
    );
    let example = acc_tests::bin_dir().join(dll("acc_adapter_example"));
    let shadow = world
        .acc(&["adapters", "install", example.to_str().expect("utf8")])
        .err(4, "invalid_data");
    assert!(
        shadow["message"]
            .as_str()
            .is_some_and(|m| m.contains("already installed at")),
        "{shadow}"
    );
    let garbage = world.temp.path().join("libacc_adapter_garbage.so");
    std::fs::write(&garbage, "not a library").expect("write");
    let refused = world
        .acc(&["adapters", "install", garbage.to_str().expect("utf8")])
        .err(4, "invalid_data");
    assert!(
        refused["message"].as_str().is_some_and(
            |m| m.contains("cannot be installed") && m.contains("not a shared library")
        ),
        "{refused}"
    );
    assert!(!user_adapters.join("libacc_adapter_garbage.so").exists());
}

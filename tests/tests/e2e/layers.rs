//! The architecture's layers, enforced: each workspace crate may depend only on the crates
//! below it (ARCHITECTURE.md names them), so a cycle or a layer reaching upward fails here
//! rather than in a reviewer's reading. Read from `cargo metadata`, normal dependencies only
//! (tests may use anything).

use std::collections::BTreeMap;
use std::process::Command;

use acc_tests::repo_root;
use serde_json::Value;

/// Each crate and the workspace crates it may depend on; every workspace crate is listed.
const LAYERS: &[(&str, &[&str])] = &[
    ("acc-store", &[]),
    ("acc-core", &["acc-store"]),
    ("acc-adapter-api", &[]),
    ("acc-clients", &["acc-adapter-api"]),
    ("acc-adapter-example", &["acc-adapter-api"]),
    ("acc-adapter-next-turn", &["acc-adapter-api", "acc-clients"]),
    (
        "acc-adapter-claude-inbox",
        &["acc-adapter-api", "acc-clients"],
    ),
    (
        "acc-adapter-codex-app-server",
        &["acc-adapter-api", "acc-clients"],
    ),
    (
        "acc-adapter-qwen-inbox",
        &["acc-adapter-api", "acc-clients"],
    ),
    (
        "acc-adapter-opencode-plugin",
        &["acc-adapter-api", "acc-clients"],
    ),
    (
        "acc-delivery",
        &["acc-store", "acc-core", "acc-adapter-api", "acc-clients"],
    ),
    (
        "acc-app",
        &[
            "acc-store",
            "acc-core",
            "acc-delivery",
            "acc-adapter-api",
            "acc-clients",
        ],
    ),
    (
        "acc-hooks",
        &[
            "acc-app",
            "acc-store",
            "acc-core",
            "acc-delivery",
            "acc-clients",
        ],
    ),
    (
        "acc-mcp",
        &[
            "acc-app",
            "acc-store",
            "acc-core",
            "acc-delivery",
            "acc-clients",
        ],
    ),
    (
        "acc-install",
        &[
            "acc-app",
            "acc-mcp",
            "acc-store",
            "acc-core",
            "acc-delivery",
            "acc-clients",
        ],
    ),
    (
        "acc",
        &[
            "acc-app",
            "acc-hooks",
            "acc-mcp",
            "acc-install",
            "acc-store",
            "acc-core",
            "acc-delivery",
            "acc-adapter-api",
            "acc-clients",
        ],
    ),
    (
        "acc-capture",
        &[
            "acc-app",
            "acc-core",
            "acc-delivery",
            "acc-store",
            "acc-adapter-api",
            "acc-clients",
        ],
    ),
    ("faulty-adapter", &["acc-adapter-api"]),
    (
        "acc-tests",
        &[
            "acc",
            "acc-app",
            "acc-mcp",
            "acc-install",
            "acc-capture",
            "acc-store",
            "acc-core",
            "acc-delivery",
            "acc-adapter-api",
            "acc-clients",
            "acc-adapter-codex-app-server",
        ],
    ),
];

/// Workspace crates' normal dependencies on other workspace crates, by crate.
fn workspace_dependencies() -> BTreeMap<String, Vec<String>> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata json");
    let packages = metadata["packages"].as_array().expect("packages");
    let members: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    packages
        .iter()
        .map(|package| {
            let mut deps: Vec<String> = package["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|name| members.contains(name))
                .map(str::to_string)
                .collect();
            deps.sort();
            (
                package["name"].as_str().unwrap_or_default().to_string(),
                deps,
            )
        })
        .collect()
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let actual = workspace_dependencies();
    for (name, deps) in &actual {
        let Some((_, allowed)) = LAYERS.iter().find(|(crate_name, _)| crate_name == name) else {
            panic!("{name} is not placed in a layer: add it to LAYERS and to ARCHITECTURE.md");
        };
        for dep in deps {
            assert!(
                allowed.contains(&dep.as_str()),
                "{name} depends on {dep}, which its layer does not allow ({allowed:?})"
            );
        }
    }
    for (name, _) in LAYERS {
        assert!(
            actual.contains_key(*name),
            "{name} is listed but not in the workspace"
        );
    }
}

/// Packages the protocol layers must not reach, even transitively: the plugin machinery, the
/// CLI parser, the async runtime, the clients' transports, and process probing (liveness is
/// passed in).
const NOT_BELOW_THE_HOST: &[&str] = &[
    "rustix",
    "abi_stable",
    "libloading",
    "clap",
    "tokio",
    "tungstenite",
    "acc-adapter-api",
    "acc-clients",
];

/// The PostgreSQL room's driver and the runtime its connection runs on, whose own
/// dependencies are their business: the store drives each PostgreSQL connection on a
/// single-thread tokio runtime of its own, and only a process with a room on PostgreSQL
/// connects (docs/decisions.md). The rules above hold for everything else.
const THE_ROOMS_DRIVER: &[&str] = &["tokio-postgres", "tokio"];

/// The files of the store that name the runtime: the room's session, and the listener that
/// wakes followers on a connection of its own (`wake.rs`).
const THE_ROOMS_SESSION: &[&str] = &["store/src/db.rs", "store/src/wake.rs"];

/// The dependency tree of `package` without the room driver's subtree, after checking that
/// the driver is where the pruning expects it (under the store), and that the store's code
/// names the runtime only in the room's session, so no other code of the store or above it
/// runs on it.
fn tree_without_the_rooms_driver(package: &str) -> Vec<String> {
    let whole = acc_tests::cargo_tree(package, None);
    assert!(
        whole.iter().any(|n| n == THE_ROOMS_DRIVER[0]),
        "{package} reaches the room driver `{}` through the store; if the store no longer uses it, drop the pruning",
        THE_ROOMS_DRIVER[0]
    );
    let root = acc_tests::repo_root();
    let mut naming = Vec::new();
    for entry in std::fs::read_dir(root.join("store/src")).expect("store sources") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.contains("tokio::") {
            naming.push(
                path.strip_prefix(&root)
                    .expect("in the repo")
                    .display()
                    .to_string(),
            );
        }
    }
    naming.sort();
    assert_eq!(
        naming, THE_ROOMS_SESSION,
        "the store names the async runtime outside the room's session and its listener"
    );
    acc_tests::cargo_tree_pruned(package, None, THE_ROOMS_DRIVER)
}

#[test]
fn the_store_and_the_core_reach_no_plugin_cli_runtime_process_or_client_code() {
    for package in ["acc-store", "acc-core"] {
        let names = tree_without_the_rooms_driver(package);
        for name in &names {
            assert!(
                !NOT_BELOW_THE_HOST.contains(&name.as_str()),
                "{package} depends (perhaps transitively) on {name}: {names:?}"
            );
        }
    }
}

/// What only the front ends use: the CLI parser and terminal UI (`acc`), the async runtime of
/// `acc-mcp`, the format-preserving editors of the clients' configuration files
/// (`acc-install`), and the front-end crates themselves.
const FRONT_ENDS_ONLY: &[&str] = &[
    "clap",
    "ratatui",
    "crossterm",
    "tokio",
    "toml_edit",
    "jsonc-parser",
    "acc",
    "acc-hooks",
    "acc-mcp",
    "acc-install",
];

#[test]
fn delivery_and_the_application_reach_no_cli_runtime_or_installer_code() {
    for package in ["acc-delivery", "acc-app"] {
        let names = tree_without_the_rooms_driver(package);
        for name in &names {
            assert!(
                !FRONT_ENDS_ONLY.contains(&name.as_str()),
                "{package} depends (perhaps transitively) on {name}: {names:?}"
            );
        }
    }
}

/// What writing the store's records looks like in code: a write transaction's closure or its
/// writer.
const RECORD_WRITES: &[&str] = &[".write(|", "Writer<'", "acc_store::Writer"];

/// Only `acc-core` writes records (it holds the protocol's rules: a receipt moves only
/// forward, an offer is recorded only to the recipient's current generation); every other
/// crate asks it. The store's own crate defines the writes; the tests' benchmark fabricates
/// history below the protocol.
#[test]
fn records_are_written_only_by_the_core() {
    let root = repo_root();
    let mut found = Vec::new();
    for (package, src) in crate_source_dirs() {
        if ["acc-store", "acc-core", "acc-tests"].contains(&package.as_str()) {
            continue;
        }
        for file in sources(&src) {
            let Some((relative, text)) = production_text(&root, &file) else {
                continue;
            };
            for (at, line) in text.lines().enumerate() {
                if RECORD_WRITES.iter().any(|w| line.contains(w)) {
                    found.push(format!("{relative}:{}: {}", at + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "record writes outside acc-core:\n{}",
        found.join("\n")
    );
}

/// The event log is append-only (issue 55): no statement anywhere deletes or rewrites an event,
/// so a follower never loses what it read and cursors never have a gap. The store's schema and
/// every source are read, production and test alike (a test that deletes an event would be
/// testing something ACC never does).
#[test]
fn no_statement_deletes_or_rewrites_an_event() {
    let root = repo_root();
    let mut found = Vec::new();
    let mut scanned = 0;
    for (_, src) in crate_source_dirs() {
        for file in sources(&src).into_iter().chain(
            std::fs::read_dir(&src)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "sql")),
        ) {
            let text = std::fs::read_to_string(&file).expect("source");
            scanned += 1;
            let flat = text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_uppercase();
            for statement in [
                "DELETE FROM EVENTS",
                "UPDATE EVENTS",
                "TRUNCATE EVENTS",
                "DROP TABLE EVENTS",
            ] {
                if flat.contains(statement) {
                    let relative = file
                        .strip_prefix(&root)
                        .unwrap_or(&file)
                        .display()
                        .to_string();
                    found.push(format!("{relative}: {statement}"));
                }
            }
        }
    }
    assert!(scanned > 100, "only {scanned} files scanned");
    assert!(
        found.is_empty(),
        "the event log is append-only:\n{}",
        found.join("\n")
    );
}

/// Every Rust source file below `dir`.
fn sources(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    assert!(
        dir.exists(),
        "{} does not exist: a scan of nothing would pass",
        dir.display()
    );
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// The kinds of socket that accept connections.
const LISTENERS: &[&str] = &["TcpListener", "UnixListener", "UdpSocket"];

/// The one listener outside the capture tool, and why: `qwen-inbox`'s reply socket, a Unix
/// socket in a folder only this user may enter, made for one wake and gone with it, where Qwen
/// Code sends the wake's delivery receipt. It widens no access (docs/decisions.md, "The
/// `qwen-inbox` wake"); its unit tests check the folder's mode.
const PRIVATE_LISTENERS: &[(&str, &str)] = &[("adapters/qwen-inbox/src/lib.rs", "UnixListener")];

#[test]
fn only_the_capture_tool_and_a_wakes_private_reply_socket_listen() {
    let root = repo_root();
    // `acc` and `acc-mcp` are built from these crates (and load the adapters at run time).
    for dir in [
        "store/src",
        "core/src",
        "clients/src",
        "delivery/src",
        "app/src",
        "hooks/src",
        "mcp/src",
        "install/src",
        "cli/src",
        "adapter-api/src",
        "adapters",
    ] {
        // Unit-test modules (`tests.rs`) may stand up a fake peer; they are not in the binaries.
        for file in sources(&root.join(dir))
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        {
            let text = std::fs::read_to_string(&file).expect("source");
            for listener in LISTENERS {
                let allowed = PRIVATE_LISTENERS
                    .iter()
                    .any(|(f, l)| file.ends_with(f) && l == listener);
                assert!(
                    allowed || !text.contains(listener),
                    "{} uses {listener}: acc, acc-mcp and the adapters open no listener but a wake's private reply socket (the capture tool's loopback server lives in capture/)",
                    file.display()
                );
            }
        }
    }
    // Each allowance is still needed: a listener that went away takes its entry with it.
    for (file, listener) in PRIVATE_LISTENERS {
        let text = std::fs::read_to_string(root.join(file)).expect("source");
        assert!(text.contains(listener), "{file} no longer uses {listener}");
    }
    // The scan sees what it looks for: the capture tool's model server is found.
    let capture = sources(&root.join("capture/src"))
        .iter()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("TcpListener")));
    assert!(capture, "the capture tool's loopback model server");
}

/// The crates `acc`, `acc-mcp` and `acc-capture` are built from (the adapters are plugins with
/// their own clients' formats, and only `adapter-api` is shared with them).
const HOST_SOURCES: &[&str] = &[
    "store/src",
    "core/src",
    "clients/src",
    "delivery/src",
    "app/src",
    "hooks/src",
    "mcp/src",
    "install/src",
    "cli/src",
    "cli/examples",
    "capture/src",
    "adapter-api/src",
];

/// Where `json!` may build JSON outside tests: the framing of a protocol spoken to a peer,
/// each file with why.
const JSON_FRAMING: &[(&str, &str)] = &[
    ("mcp/src/jsonrpc.rs", "JSON-RPC responses of acc-mcp"),
    (
        "cli/examples/mcp_demo.rs",
        "JSON-RPC requests of the demo client",
    ),
    ("install/src/codex_trust.rs", "JSON-RPC to codex app-server"),
    (
        "clients/src/codex_daemon.rs",
        "JSON-RPC to the Codex daemon",
    ),
    ("capture/src/codex.rs", "JSON-RPC to the Codex daemon"),
    (
        "capture/src/model.rs",
        "the model APIs (Anthropic, OpenAI) the loopback model serves",
    ),
    (
        "capture/src/guard.rs",
        "the scripted model's tool-call arguments, in each client's own tool schema",
    ),
];

/// Production text of a source file: not a test file, and without its trailing inline
/// `#[cfg(test)] mod tests { ... }` (ACC keeps an inline test module last).
fn production_text(root: &std::path::Path, file: &std::path::Path) -> Option<(String, String)> {
    let relative = file.strip_prefix(root).ok()?.to_string_lossy().into_owned();
    let is_test_file = file.file_name().is_some_and(|n| n == "tests.rs")
        || relative.split('/').any(|part| part == "tests");
    if is_test_file {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => text[..at].to_string(),
        None => text,
    };
    Some((relative, text))
}

#[test]
fn json_is_built_from_types_and_serde_derives_live_in_wire_modules() {
    let root = repo_root();
    let mut json_files = Vec::new();
    for dir in HOST_SOURCES {
        for file in sources(&root.join(dir)) {
            let Some((relative, text)) = production_text(&root, &file) else {
                continue;
            };
            if text.contains("json!(") {
                json_files.push(relative.clone());
                assert!(
                    JSON_FRAMING.iter().any(|(allowed, _)| *allowed == relative),
                    "{relative} builds JSON with json!: define the shape as a type in a wire module (app/src/wire.rs for what the CLI and MCP publish)"
                );
            }
            let derives = text.lines().any(|line| {
                line.trim_start().starts_with("#[derive(")
                    && (line.contains("Serialize") || line.contains("Deserialize"))
            });
            let wire_module = relative.ends_with("/wire.rs")
                || relative.contains("/wire/")
                || relative == "core/src/events.rs"
                || relative == "delivery/src/contracts.rs";
            assert!(
                !derives || wire_module,
                "{relative} derives Serialize or Deserialize: serde types live in wire modules (a `wire.rs` or a file under `wire/`, the core's events, the contracts)"
            );
        }
    }
    // The list stays tight: every allowed file still frames a protocol with json!.
    for (allowed, why) in JSON_FRAMING {
        assert!(
            json_files.iter().any(|f| f == allowed),
            "{allowed} ({why}) no longer uses json!: drop it from JSON_FRAMING"
        );
    }
}

/// No facades: no crate re-exports another workspace crate (or its modules or items) under its
/// own name, so every path names the crate its item comes from and the crate graph is the one
/// the code speaks of.
#[test]
fn no_crate_re_exports_another_workspace_crate() {
    let root = repo_root();
    let mut facades = Vec::new();
    for file in sources(&root) {
        if file.components().any(|c| c.as_os_str() == "target") {
            continue;
        }
        let Some((relative, text)) = production_text(&root, &file) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("pub use acc_") || code.starts_with("pub(crate) use acc_") {
                facades.push(format!("{relative}:{}: {code}", number + 1));
            }
        }
    }
    assert!(
        facades.is_empty(),
        "re-exports of another workspace crate (name the crate where the item is used):\n{}",
        facades.join("\n")
    );
}

/// Every workspace crate's source directory, from its manifest.
fn crate_source_dirs() -> Vec<(String, std::path::PathBuf)> {
    let root = repo_root();
    let mut dirs = Vec::new();
    for manifest in sources_named(&root, "Cargo.toml") {
        let text = std::fs::read_to_string(&manifest).expect("manifest");
        let Ok(value) = text.parse::<toml::Table>() else {
            continue;
        };
        let Some(name) = value
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
        else {
            continue;
        };
        let src = manifest.parent().expect("dir").join("src");
        if src.is_dir() {
            dirs.push((name.to_string(), src));
        }
    }
    dirs.sort();
    dirs
}

/// Files called `name` below `dir`, outside build output.
fn sources_named(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            let skip = path
                .file_name()
                .is_some_and(|n| n == "target" || n == ".git" || n == "node_modules");
            if path.is_dir() && !skip {
                pending.push(path);
            } else if path.file_name().is_some_and(|n| n == name) {
                found.push(path);
            }
        }
    }
    found
}

/// A source file's module path in its crate (`src/lib.rs` is `crate`, `src/a/b.rs` and
/// `src/a/b/mod.rs` are `crate::a::b`); `None` for a binary's or a test's file.
fn module_path(src: &std::path::Path, file: &std::path::Path) -> Option<Vec<String>> {
    let relative = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    if !matches!(stem, "lib" | "main" | "mod") {
        parts.push(stem.to_string());
    } else if stem != "mod" && !parts.is_empty() {
        return None;
    }
    Some(parts)
}

/// The module paths a file's text names through `crate::` and `super::` (each expanded from
/// `{…}` groups), as the segments after the prefix, resolved against the file's own path.
fn named_paths(text: &str, own: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for prefix in ["crate::", "super::"] {
        let mut at = 0;
        while let Some(found) = text[at..].find(prefix) {
            let start = at + found;
            at = start + prefix.len();
            let before = start.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
                continue;
            }
            let mut base: Vec<String> = if prefix == "crate::" {
                Vec::new()
            } else {
                own[..own.len().saturating_sub(1)].to_vec()
            };
            let mut rest = &text[at..];
            // `super::super::…`
            while let Some(more) = rest.strip_prefix("super::") {
                base.pop();
                rest = more;
            }
            let path_end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = &rest[..path_end];
            let segments = |p: &str| -> Vec<String> {
                p.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            };
            if (path.ends_with("::") || path.is_empty())
                && let Some(group) = rest[path_end..].strip_prefix('{')
            {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    let mut full = base.clone();
                    full.extend(segments(path));
                    full.extend(segments(item.trim()));
                    out.push(full);
                }
                continue;
            }
            let mut full = base;
            full.extend(segments(path));
            out.push(full);
        }
    }
    out
}

/// The names a module defines at its top level, visible to its parent (`pub`, `pub(crate)`,
/// `pub(super)` functions, types, traits, constants and statics).
fn defined_items(text: &str) -> std::collections::BTreeSet<String> {
    let mut items = std::collections::BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = ["pub ", "pub(crate) ", "pub(super) "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        else {
            continue;
        };
        let rest = rest.strip_prefix("const fn ").unwrap_or(rest);
        for keyword in [
            "fn ", "struct ", "enum ", "trait ", "const ", "static ", "type ",
        ] {
            if let Some(name) = rest.strip_prefix(keyword) {
                let end = name
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                items.insert(name[..end].to_string());
            }
        }
    }
    items
}

/// The child modules whose items a module's text brings in by a glob (`use NAME::*;`,
/// `pub use NAME::*;`).
fn glob_children(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let name = l.strip_prefix("use ")?.strip_suffix("::*;")?;
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
                .then(|| name.to_string())
        })
        .collect()
}

/// The imports a child with `use super::*;` makes of its siblings through its parent's globs:
/// each sibling the parent glob-imports whose items the child's code names.
fn glob_edges(
    modules: &BTreeMap<Vec<String>, String>,
    own: &[String],
    text: &str,
) -> Vec<Vec<String>> {
    let Some((_, parent)) = own.split_last() else {
        return Vec::new();
    };
    if !text.lines().any(|l| l.trim() == "use super::*;") {
        return Vec::new();
    }
    let Some(parent_text) = modules.get(parent) else {
        return Vec::new();
    };
    let words: std::collections::BTreeSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for sibling in glob_children(parent_text) {
        let mut path = parent.to_vec();
        path.push(sibling);
        if path.as_slice() == own {
            continue;
        }
        let Some(sibling_text) = modules.get(&path) else {
            continue;
        };
        if defined_items(sibling_text)
            .iter()
            .any(|item| words.contains(item.as_str()))
        {
            out.push(path);
        }
    }
    out
}

/// No circle of file-level imports inside a crate: a module that names another (through
/// `crate::` or `super::`, or through its parent's glob of a sibling: `use super::*;` in a
/// child whose parent has `pub use sibling::*;`) is named back by neither it nor anything it
/// names. A module reading its own ancestors' items (`super::…` in a child) is nesting, not an
/// import.
#[test]
fn no_module_imports_itself_in_a_circle() {
    let mut circles = Vec::new();
    let mut glob_edges_found = 0;
    for (name, src) in crate_source_dirs() {
        let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
        let root = repo_root();
        for file in sources(&src) {
            let Some(path) = module_path(&src, &file) else {
                continue;
            };
            let Some((_, text)) = production_text(&root, &file) else {
                continue;
            };
            // Comments (doc links among them) import nothing.
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            modules.insert(path, code);
        }
        let mut edges: BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>> =
            BTreeMap::new();
        for (own, text) in &modules {
            for sibling in glob_edges(&modules, own, text) {
                glob_edges_found += 1;
                edges.entry(own.clone()).or_default().insert(sibling);
            }
            for named in named_paths(text, own) {
                // The longest module that the named path lies in.
                let Some(target) = (0..=named.len())
                    .rev()
                    .map(|n| named[..n].to_vec())
                    .find(|p| modules.contains_key(p))
                else {
                    continue;
                };
                let ancestor = own.starts_with(&target);
                if target != *own && !ancestor {
                    edges.entry(own.clone()).or_default().insert(target);
                }
            }
        }
        // A circle: a module reachable from one of its own imports.
        for (start, targets) in &edges {
            for first in targets {
                let mut seen = std::collections::BTreeSet::new();
                let mut pending = vec![(first.clone(), vec![start.clone(), first.clone()])];
                while let Some((at, trail)) = pending.pop() {
                    if at == *start {
                        // Once per circle: from its smallest module.
                        if trail.iter().any(|m| m < start) {
                            break;
                        }
                        let names: Vec<String> = trail
                            .iter()
                            .map(|m| format!("crate::{}", m.join("::")))
                            .collect();
                        circles.push(format!("{name}: {}", names.join(" -> ")));
                        break;
                    }
                    if !seen.insert(at.clone()) {
                        continue;
                    }
                    for next in edges.get(&at).into_iter().flatten() {
                        let mut trail = trail.clone();
                        trail.push(next.clone());
                        pending.push((next.clone(), trail));
                    }
                }
            }
        }
    }
    circles.sort();
    circles.dedup();
    // The scan sees imports through globs (the views' and wire shapes' topics use each other).
    assert!(
        glob_edges_found > 0,
        "no sibling import through a parent's glob was found: the scan is blind to them"
    );
    assert!(
        circles.is_empty(),
        "file-level import circles (break each: move what both need below both):\n{}",
        circles.join("\n")
    );
}

/// The tallest a production source file may grow (lines, without its inline test module) and
/// the longest `impl` block in one.
const MAX_FILE_LINES: usize = 700;
const MAX_IMPL_LINES: usize = 300;

#[test]
fn no_production_file_or_impl_grows_past_its_floor() {
    // No exceptions: each file that once stood above a floor was split (the CLI into arguments,
    // commands and output; core's messages into prepare, record and read; the router into
    // admission, offer, bind and next-turn; the views, wire shapes and human text by topic).
    let root = repo_root();
    let mut tall = Vec::new();
    let (mut files, mut longest_impl) = (0, 0);
    for (_, src) in crate_source_dirs() {
        for file in sources(&src) {
            let Some((relative, text)) = production_text(&root, &file) else {
                continue;
            };
            files += 1;
            let lines: Vec<&str> = text.lines().collect();
            if lines.len() > MAX_FILE_LINES {
                tall.push(format!("{relative}: {} lines", lines.len()));
            }
            for (at, line) in lines.iter().enumerate() {
                if !(line.starts_with("impl") && line.trim_end().ends_with('{')) {
                    continue;
                }
                let Some(end) = lines[at + 1..].iter().position(|l| *l == "}") else {
                    continue;
                };
                let length = end + 2;
                longest_impl = longest_impl.max(length);
                if length > MAX_IMPL_LINES {
                    tall.push(format!(
                        "{relative}:{}: `{}` is {length} lines",
                        at + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    // The scan sees what it measures: the production files, and impl blocks of some length.
    assert!(files > 100, "only {files} production files were read");
    assert!(
        longest_impl > 100,
        "the longest impl block found is {longest_impl} lines: the scan finds none"
    );
    assert!(
        tall.is_empty(),
        "split these (a file at most {MAX_FILE_LINES} lines, an impl at most {MAX_IMPL_LINES}):\n{}",
        tall.join("\n")
    );
}

//! The install layout, as a user gets it: `scripts/install.sh` run in a clean copy of the
//! source tree (every file git does not ignore, no build products) into a temporary prefix, and
//! its release archive unpacked somewhere else. ACC then runs from that layout alone: only its
//! `bin` (and the system's) on `PATH`, no `ACC_*` path variable.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use acc_capture::model::ModelServer;
use acc_clients::Client;
use acc_tests::{World, clients, repo_root};

/// Every file git does not ignore, copied: the tree a clean clone of this state would have.
fn clean_copy(to: &Path) {
    let root = repo_root();
    let output = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(&root)
        .output()
        .expect("git ls-files");
    assert!(output.status.success(), "git ls-files");
    for name in output.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).expect("utf8 path");
        let from = root.join(name);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&from, &target).expect("copy");
    }
}

/// Run the copy's install script with `args` (dev profile: the layout is the point, not the
/// optimiser), its build in a target folder of its own that persists between runs.
fn install_script(tree: &Path, args: &[&str]) -> String {
    let mut command = Command::new(tree.join("scripts/install.sh"));
    command
        .arg("--debug")
        .args(args)
        .current_dir(tree)
        .env(
            "CARGO_TARGET_DIR",
            repo_root().join("target/install-layout"),
        )
        .env_remove("RUSTFLAGS");
    let output = acc_tests::run_checked(
        command,
        Duration::from_secs(1800),
        &format!("scripts/install.sh {args:?}"),
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `acc` of the layout at `root`, run as a user of it would.
fn acc(world: &World, root: &Path, args: &[&str]) -> acc_tests::Run {
    let mut command = world.command_path(root.join("bin/acc"));
    command
        .arg("--json")
        .args(args)
        .env("PATH", path_with(root))
        .env_remove("ACC_ADAPTER_PATH")
        .env_remove("ACC_CONTRACTS_DIR")
        .env_remove("ACC_ADAPTER_CONFIG");
    world.run(command, "acc (installed)")
}

fn path_with(root: &Path) -> String {
    format!("{}:/usr/bin:/bin", root.join("bin").display())
}

/// What the layout at `root` must do on its own.
fn works_from(root: &Path) {
    let world = World::new();
    // The manual pages, one for acc and one per command, rendered by the installed acc.
    for page in ["acc.1", "acc-status.1", "acc-install.1"] {
        let text = std::fs::read_to_string(root.join("share/man/man1").join(page))
            .unwrap_or_else(|e| panic!("{page} is installed: {e}"));
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{page} is a manual page"
        );
    }
    let listing = acc(&world, root, &["adapters"]).ok_json();
    let adapters: Vec<(&str, &str)> = listing["adapters"]
        .as_array()
        .expect("adapters")
        .iter()
        .map(|a| {
            (
                a["adapterId"].as_str().expect("id"),
                a["file"].as_str().expect("file"),
            )
        })
        .collect();
    for id in [
        "next-turn",
        "claude-inbox",
        "qwen-inbox",
        "opencode-plugin",
        "codex-app-server",
    ] {
        let file = adapters
            .iter()
            .find(|(a, _)| *a == id)
            .map(|(_, f)| PathBuf::from(f))
            .unwrap_or_else(|| panic!("{id} is loaded: {listing}"));
        assert!(
            file.starts_with(root.join("lib/acc/adapters")),
            "{id} from the layout: {}",
            file.display()
        );
    }
    // `acc-mcp` runs adapter code only in `<its folder>/acc adapter-host`: the installed `acc`
    // beside it loads the installed (stripped) adapters there and answers on its pipes.
    assert!(root.join("bin/acc").is_file() && root.join("bin/acc-mcp").is_file());
    for id in [
        "next-turn",
        "claude-inbox",
        "qwen-inbox",
        "opencode-plugin",
        "codex-app-server",
    ] {
        use std::io::{BufRead, Write};
        let file = root.join(format!(
            "lib/acc/adapters/libacc_adapter_{}.so",
            id.replace('-', "_")
        ));
        let mut helper = acc_tests::Guarded(
            world
                .command_path(root.join("bin/acc"))
                .arg("adapter-host")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("spawn the installed adapter host"),
        );
        let mut stdin = helper.0.stdin.take().expect("stdin");
        let request = serde_json::json!({ "file": file, "config": "{}", "operation": "describe", "request": "" });
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .expect("write");
        let mut reply = String::new();
        std::io::BufReader::new(helper.0.stdout.take().expect("stdout"))
            .read_line(&mut reply)
            .expect("read");
        drop(stdin);
        let reply: serde_json::Value = serde_json::from_str(&reply).expect("one json reply");
        assert_eq!(reply["described"]["adapterId"], id, "{reply}");
    }
    let report = acc(&world, root, &["contract", "verify"]).ok_json();
    assert_eq!(report["valid"], true, "{report}");
    assert!(
        report["dir"]
            .as_str()
            .is_some_and(|d| Path::new(d).starts_with(root.join("share/acc/contracts"))),
        "{report}"
    );

    // A real Claude Code turn with hooks installed from this layout receives a peer message.
    let home = world.temp.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).expect("home");
    acc(
        &world,
        root,
        &[
            "install",
            "--client",
            "claude-code",
            "--home",
            home.to_str().expect("utf8"),
        ],
    )
    .ok_json();
    let settings = std::fs::read_to_string(home.join(".claude/settings.json")).expect("settings");
    assert!(
        settings.contains(&root.join("bin/acc").display().to_string()),
        "the hooks run the installed acc: {settings}"
    );
    let model = ModelServer::start();
    claude_turn(&world, root, &home, &model, "hello");
    let alice = attach(&world, root, "alice");
    send(&world, root, &alice, "LAYOUT-BODY");
    model.clear();
    claude_turn(&world, root, &home, &model, "next");
    assert!(
        model
            .model_requests()
            .iter()
            .any(|r| r.body.contains("LAYOUT-BODY") && r.body.contains("acc-peer-message")),
        "the peer message reached the model through the installed next-turn"
    );

    // Without next-turn: doctor says so as an error, and the hook still tells the model that
    // messages wait.
    std::fs::remove_file(root.join("lib/acc/adapters/libacc_adapter_next_turn.so"))
        .expect("remove next-turn");
    let doctor = acc(
        &world,
        root,
        &["doctor", "--home", home.to_str().expect("utf8")],
    );
    let checks = doctor.json();
    let next_turn = checks["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "adapter next-turn")
        .cloned()
        .unwrap_or_else(|| panic!("doctor checks next-turn: {checks}"));
    assert_eq!(next_turn["status"], "error", "{next_turn}");
    assert!(
        next_turn["fix"]
            .as_str()
            .is_some_and(|f| f.contains("install.sh")),
        "{next_turn}"
    );
    send(&world, root, &alice, "SECOND-BODY");
    model.clear();
    claude_turn(&world, root, &home, &model, "once more");
    let text: String = model.model_requests().into_iter().map(|r| r.body).collect();
    assert!(
        text.contains("1 message(s) from other participants are waiting for you"),
        "the model is told that a message waits"
    );
    assert!(!text.contains("SECOND-BODY"), "but nothing was carried");
}

/// Alice (with her credentials from `attach`) writes `body` to bob with the installed `acc`.
fn send(world: &World, root: &Path, alice: &(String, String), body: &str) {
    let mut send = world.command_path(root.join("bin/acc"));
    send.args(["--json", "--session", &alice.0, "--generation", &alice.1])
        .args([
            "message",
            "--to",
            "bob",
            "--subject",
            "layout",
            "--body",
            body,
        ])
        .env("PATH", path_with(root));
    world.run(send, "acc message").ok_json();
}

fn attach(world: &World, root: &Path, participant: &str) -> (String, String) {
    let run = acc(world, root, &["attach", "--participant", participant]).ok_json();
    let creds = acc_tests::Creds::from_attach(participant, &run);
    (creds.session, creds.generation)
}

fn claude_turn(world: &World, root: &Path, home: &Path, model: &ModelServer, prompt: &str) {
    let mut command = acc_tests::claude_print(world, home, model, prompt);
    command
        .env("ACC_PARTICIPANT", "bob")
        .env("PATH", path_with(root))
        .env_remove("ACC_ADAPTER_PATH")
        .env_remove("ACC_CONTRACTS_DIR");
    let run = world.run(command, "claude -p");
    assert_eq!(run.code, 0, "claude: {}", run.stderr);
}

#[test]
fn the_install_script_and_the_release_archive_give_a_layout_that_works_on_its_own() {
    let _ = clients(); // the real Claude Code, installed before the layout is driven
    let temp = tempfile::tempdir().expect("tempdir");
    let tree = temp.path().join("source");
    clean_copy(&tree);

    let prefix = temp.path().join("prefix");
    let said = install_script(&tree, &["--prefix", prefix.to_str().expect("utf8")]);
    assert!(said.contains("installed ACC into"), "{said}");
    for file in [
        "bin/acc",
        "bin/acc-mcp",
        "bin/acc-capture",
        "share/acc/contracts/codex/0.169.0-linux-x64.toml",
        "share/acc/install-manifest.txt",
    ] {
        assert!(prefix.join(file).is_file(), "{file} installed");
    }
    // Installed stripped: no program or library carries debug information (a library keeps
    // its dynamic symbols, ACC's marker among them).
    for file in [
        "bin/acc",
        "bin/acc-mcp",
        "bin/acc-capture",
        "lib/acc/adapters/libacc_adapter_next_turn.so",
        "lib/acc/adapters/libacc_adapter_claude_inbox.so",
        "lib/acc/adapters/libacc_adapter_qwen_inbox.so",
        "lib/acc/adapters/libacc_adapter_opencode_plugin.so",
        "lib/acc/adapters/libacc_adapter_codex_app_server.so",
    ] {
        let sections = Command::new("readelf")
            .arg("-S")
            .arg(prefix.join(file))
            .output()
            .expect("readelf");
        let sections = String::from_utf8_lossy(&sections.stdout);
        assert!(
            sections.contains(".dynsym") && !sections.contains(".debug_info"),
            "{file} is stripped of its debug information: {sections}"
        );
    }
    works_from(&prefix);

    // The archive, unpacked elsewhere: relocatable.
    let dist = temp.path().join("dist");
    let archive = install_script(&tree, &["--archive", dist.to_str().expect("utf8")]);
    let archive = PathBuf::from(archive.trim());
    // The archive's size is printed (this test builds the dev profile; README gives the
    // release archive's).
    let size = std::fs::metadata(&archive).expect("archive").len();
    report(&format!(
        "release-layout archive (dev profile, stripped): {:.1} MB",
        size as f64 / 1e6
    ));
    // The README states this archive's size beside the release archive's: a layout that grew
    // (or shrank) by more than a quarter makes its figures stale, so they are measured again.
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README");
    let stated: f64 = readme
        .split_once("profile, whose archive is ")
        .and_then(|(_, rest)| rest.split_once(" MB"))
        .and_then(|(figure, _)| figure.trim().parse().ok())
        .expect("the README states the dev-profile archive's size");
    let measured = size as f64 / 1e6;
    assert!(
        (measured - stated).abs() <= stated / 4.0,
        "the archive is {measured:.1} MB where the README says {stated} MB: measure the release archive and the layout again and update the README"
    );
    let checked = Command::new("sha256sum")
        .arg("-c")
        .arg(format!(
            "{}.sha256",
            archive.file_name().expect("name").to_string_lossy()
        ))
        .current_dir(&dist)
        .output()
        .expect("sha256sum");
    assert!(checked.status.success(), "the checksum matches");
    let elsewhere = temp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("dir");
    let unpacked = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&elsewhere)
        .status()
        .expect("tar");
    assert!(unpacked.success());
    let name = archive
        .file_name()
        .expect("name")
        .to_string_lossy()
        .trim_end_matches(".tar.gz")
        .to_string();
    works_from(&elsewhere.join(name));

    uninstalling_is_refused_while_any_clients_hooks_run_acc(&tree, &prefix);
}

/// While any client's hooks run the installed acc, uninstalling the layout is refused and names
/// the command that takes them out first; `--with-clients` runs it. Every client of
/// `Client::ALL`, one at a time and all together: the script asks the installed acc for the
/// list, so none can be forgotten.
fn uninstalling_is_refused_while_any_clients_hooks_run_acc(tree: &Path, prefix: &Path) {
    let user = World::new();
    let home = user.temp.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).expect("home");
    let home_arg = home.to_str().expect("utf8");
    let installed_acc = prefix.join("bin/acc");
    let uninstall = |extra: &[&str]| {
        let mut command = Command::new(tree.join("scripts/install.sh"));
        command
            .args(["--uninstall", "--prefix", prefix.to_str().expect("utf8")])
            .args(extra)
            .current_dir(tree)
            .env("HOME", &home)
            .env("ACC_DATA_HOME", &user.data_home);
        for variable in [
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "GEMINI_CLI_HOME",
            "QWEN_HOME",
            "XDG_CONFIG_HOME",
            "KIMI_CODE_HOME",
        ] {
            command.env_remove(variable);
        }
        command.output().expect("uninstall")
    };
    let refusal_names = |said: &str, client: Client| {
        said.contains(&format!(
            "{} uninstall --client {}",
            installed_acc.display(),
            client.as_str()
        ))
    };
    // The installed acc installs into each client as a user's would: the client on PATH (Codex
    // is asked for its hooks' hashes).
    let install = |client: Client| {
        let mut command = user.command_path(installed_acc.as_os_str());
        command
            .args([
                "--json",
                "install",
                "--client",
                client.as_str(),
                "--home",
                home_arg,
            ])
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    prefix.join("bin").display(),
                    clients().path_for(client)
                ),
            )
            .env_remove("ACC_ADAPTER_PATH")
            .env_remove("ACC_CONTRACTS_DIR")
            .env_remove("ACC_ADAPTER_CONFIG");
        user.run(command, "acc install (installed)").ok_json();
    };
    for client in Client::ALL {
        install(client);
        let refused = uninstall(&[]);
        let said = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(
            refused.status.code(),
            Some(1),
            "{}: {said}",
            client.as_str()
        );
        assert!(
            refusal_names(&said, client) && said.contains("Nothing was removed"),
            "{}: {said}",
            client.as_str()
        );
        for other in Client::ALL.into_iter().filter(|c| *c != client) {
            assert!(!refusal_names(&said, other), "{}: {said}", other.as_str());
        }
        assert!(installed_acc.is_file(), "nothing was removed");
        acc(
            &user,
            prefix,
            &["uninstall", "--client", client.as_str(), "--home", home_arg],
        )
        .ok_json();
    }
    // Every client at once: the refusal names all of them; --with-clients takes each out first.
    for client in Client::ALL {
        install(client);
    }
    let refused = uninstall(&[]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    for client in Client::ALL {
        assert!(refusal_names(&said, client), "{}: {said}", client.as_str());
    }
    // Uninstalling removes exactly what was installed, and the hooks first.
    let done = uninstall(&["--with-clients"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // Each client's files have none of ACC's entries left (asked of the workspace's own acc).
    for client in Client::ALL {
        let planned = user
            .acc(&[
                "uninstall",
                "--client",
                client.as_str(),
                "--home",
                home_arg,
                "--dry-run",
            ])
            .ok_json();
        assert_eq!(planned["changes"], false, "{}: {planned}", client.as_str());
    }
    let left: Vec<PathBuf> = walk(prefix);
    assert!(left.is_empty(), "nothing of ACC is left: {left:?}");
}

/// A figure of the run, printed with the test's output.
#[expect(
    clippy::print_stdout,
    reason = "the archive's size is a figure the run reports"
)]
fn report(line: &str) {
    println!("{line}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().is_dir() {
            files.extend(walk(&entry.path()));
        } else {
            files.push(entry.path());
        }
    }
    files
}

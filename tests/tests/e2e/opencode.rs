//! OpenCode 1.18.33, real, against a Chat Completions model on loopback: `acc install --client
//! opencode` writes ACC's plugin into its plugins folder and `acc-mcp` into the user's own
//! commented `opencode.json`; a peer's message rides in the very model request of the next turn,
//! inside the user's message, and a resumed conversation stays one participant and never sees it
//! twice; an uninstall gives the user's configuration back, with OpenCode's own edit.

use acc_capture::guard::Writer;
use acc_capture::model::ModelServer;
use acc_clients::Client;
use acc_tests::{World, clients};
use serde_json::Value;

use crate::journey::{self, Journey, Kept};

fn config_dir(writer: &Writer) -> std::path::PathBuf {
    writer.home.join(".config/opencode")
}

/// The real `opencode mcp list` in the writer's home: how OpenCode loads its configuration.
fn mcp_list(world: &World, writer: &Writer) -> acc_tests::Run {
    let mut list = world.command_path(clients().opencode);
    list.args(["mcp", "list"])
        .env("HOME", &writer.home)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME");
    world.run(list, "opencode mcp list")
}

/// The bodies of the model requests of the client's main loop (it offers tools; OpenCode's
/// title requests do not), each whole.
fn bodies(model: &ModelServer) -> Vec<String> {
    model
        .model_requests()
        .into_iter()
        .filter(acc_capture::model::Recorded::is_main_loop)
        .map(|r| r.body)
        .collect()
}

#[test]
fn opencode_receives_a_peer_message_in_the_next_model_request_once_across_a_resume() {
    let world = World::new();
    let model = ModelServer::start();
    let writer = acc_tests::prepared_writer(&world, Client::OpenCode, &model);
    let users = std::fs::read_to_string(config_dir(&writer).join("opencode.json")).expect("mine");
    let home = writer.home.to_string_lossy().into_owned();
    world
        .acc(&["install", "--client", "opencode", "--mcp", "--home", &home])
        .ok_json();
    let plugin =
        std::fs::read_to_string(config_dir(&writer).join("plugins/acc.js")).expect("ACC's plugin");
    let acc = acc_tests::bin("acc");
    assert!(
        plugin.contains(&Value::String(acc.to_string_lossy().into_owned()).to_string()),
        "the plugin runs this acc: {plugin:.400}"
    );
    let config = std::fs::read_to_string(config_dir(&writer).join("opencode.json")).expect("json");
    assert!(
        config.contains("// the user's own OpenCode configuration") && config.contains("\"mcp\""),
        "acc-mcp added, the user's comment kept: {config}"
    );

    let journey = Journey {
        world: &world,
        writer: &writer,
        model: &model,
        harness: "opencode",
        bodies,
    };
    let opened = journey.first_turn("1.18.33");
    let first_turn = bodies(&model).join("\n");
    assert!(
        first_turn.contains("ACC: This repository is coordinated with ACC")
            && first_turn.contains(&opened.participant),
        "ACC's introduction reaches the model: {first_turn:.3000}"
    );
    // The next turn, resumed: the message is in that turn's very first model request, fenced,
    // inside the user's message.
    let alice = world.attach("alice");
    let id = journey.in_the_next_request(&alice, &opened, "OPENCODE-BODY");
    // Resumed again: the message stays in the conversation once (it is in the stored user
    // message), never added again.
    journey.resumed_again(&opened, &[&id], Kept::Once);

    world
        .acc(&["uninstall", "--client", "opencode", "--home", &home])
        .ok_json();
    assert!(
        !config_dir(&writer).join("plugins/acc.js").exists(),
        "ACC's plugin is gone"
    );
    // OpenCode 1.18.33 adds its schema to the user's file at its first run, an edit of the
    // client's own that uninstall keeps; the rest is the user's bytes.
    let left = std::fs::read_to_string(config_dir(&writer).join("opencode.json")).expect("json");
    let expected = users.replacen(
        "{\n",
        "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n",
        1,
    );
    assert_eq!(
        left, expected,
        "uninstall gives the user's configuration back, with the client's own edit"
    );
}

/// The options an OpenCode install refuses (`--mcp-trust`: OpenCode has no such mark),
/// changing nothing, and takes (live consent, which `opencode-plugin` needs); the registration
/// it writes is one the real `opencode mcp list` loads and connects to.
#[test]
fn an_opencode_install_refuses_what_it_cannot_honour_and_registers_a_loadable_server() {
    let world = World::new();
    let model = ModelServer::start();
    let writer = acc_tests::prepared_writer(&world, Client::OpenCode, &model);
    let path = config_dir(&writer).join("opencode.json");
    let users = std::fs::read_to_string(&path).expect("mine");
    let home = writer.home.to_str().expect("utf8").to_string();
    let install = |extra: &[&str]| journey::install(&world, Client::OpenCode, &home, extra);
    install(&["--mcp", "--mcp-trust"]).err(2, "invalid_arguments");
    install(&["--mcp", "--delivery", "actionable", "--dry-run"]).ok_json();
    assert_eq!(
        std::fs::read_to_string(&path).expect("json"),
        users,
        "refused installs and a dry run change nothing"
    );
    assert!(!config_dir(&writer).join("plugins").exists());

    let done = install(&["--mcp", "--delivery", "actionable"]).ok_json();
    assert!(
        done.to_string()
            .contains("live-delivery consent `actionable`"),
        "{done}"
    );
    let listed = mcp_list(&world, &writer);
    assert_eq!(listed.code, 0, "{listed:?}");
    let shown = format!("{}{}", listed.stdout, listed.stderr);
    assert!(
        shown.contains("acc") && shown.contains("connected"),
        "OpenCode loads and connects acc-mcp: {shown}"
    );
}

/// One starting point of the user's OpenCode configuration folder.
struct Start {
    name: &'static str,
    /// The user's configuration file (`opencode.json`, or `opencode.jsonc`) and its text.
    file: Option<(&'static str, &'static str)>,
    /// The user's own `plugins/acc.js`.
    own_plugin: bool,
    /// The user's configuration is a link into a dotfiles folder.
    linked: bool,
    /// `acc install --mcp` is refused, naming this; nothing changes.
    refused: Option<&'static str>,
}

const COMMENTED: &str = "{\n  // mine: keep the diff view\n  \"tui\": { \"diff_style\": \"stacked\" },\n  \"instructions\": [\"NOTES.md\",],\n}\n";
const OWN_SERVER: &str = "{\n  \"mcp\": { \"acc\": { \"type\": \"remote\", \"url\": \"http://127.0.0.1:9/mine\" } }\n}\n";

fn starts() -> Vec<Start> {
    let start = |name, file, own_plugin, linked, refused| Start {
        name,
        file,
        own_plugin,
        linked,
        refused,
    };
    vec![
        start("missing", None, false, false, None),
        start("empty", Some(("opencode.json", "")), false, false, None),
        start(
            "comments and trailing commas",
            Some(("opencode.json", COMMENTED)),
            false,
            false,
            None,
        ),
        start(
            "jsonc",
            Some(("opencode.jsonc", COMMENTED)),
            false,
            false,
            None,
        ),
        start(
            "linked into dotfiles",
            Some(("opencode.json", COMMENTED)),
            false,
            true,
            None,
        ),
        start(
            "the user's own acc server",
            Some(("opencode.json", OWN_SERVER)),
            false,
            false,
            Some("mcp.acc exists"),
        ),
        start(
            "the user's own plugins/acc.js",
            None,
            true,
            false,
            Some("acc did not write it"),
        ),
        start(
            "not JSON",
            Some(("opencode.json", "{ \"tui\": ")),
            false,
            false,
            Some("is not valid JSON"),
        ),
    ]
}

/// Every file under `dir` with its bytes, OpenCode's own plugin package aside.
fn files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if [
            "node_modules",
            "package.json",
            "package-lock.json",
            ".gitignore",
        ]
        .iter()
        .any(|n| name == *n)
        {
            continue;
        }
        if path.is_dir() && !path.is_symlink() {
            out.extend(files(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

/// `acc install --client opencode --mcp`, a second install, a later edit of the user's, and
/// `acc uninstall`, from each ordinary start: the real `opencode mcp list` loads the folder after
/// every step, the user's bytes are never lost, a link stays a link, and a refused install
/// changes nothing. (OpenCode's own edits, its schema line and its plugin package, are made only
/// when it runs a session, which `mcp list` does not.)
#[test]
fn opencode_install_reinstall_edit_and_uninstall_from_each_start() {
    for start in starts() {
        let world = World::new();
        let model = ModelServer::start();
        let writer = acc_tests::prepared_writer(&world, Client::OpenCode, &model);
        let dir = config_dir(&writer);
        std::fs::remove_file(dir.join("opencode.json")).expect("start afresh");
        let dotfiles = world.temp.path().join("dotfiles");
        if let Some((name, text)) = start.file {
            if start.linked {
                std::fs::create_dir_all(&dotfiles).expect("dotfiles");
                std::fs::write(dotfiles.join(name), text).expect("start");
                std::os::unix::fs::symlink(dotfiles.join(name), dir.join(name)).expect("link");
            } else {
                std::fs::write(dir.join(name), text).expect("start");
            }
        }
        if start.own_plugin {
            std::fs::create_dir_all(dir.join("plugins")).expect("plugins");
            std::fs::write(
                dir.join("plugins/acc.js"),
                "export const Mine = async () => ({});\n",
            )
            .expect("mine");
        }
        let before = files(&dir);
        let home = writer.home.to_str().expect("utf8").to_string();
        let acc = |args: &[&str]| {
            let mut all = args.to_vec();
            all.extend(["--client", "opencode", "--home", &home]);
            world.acc(&all)
        };
        let mcp_list = |step: &str| {
            let run = mcp_list(&world, &writer);
            assert_eq!(run.code, 0, "{} / {step}: {run:?}", start.name);
            format!("{}{}", run.stdout, run.stderr)
        };
        let step = |what: &str| format!("{} / {what}", start.name);

        if let Some(why) = start.refused {
            let refused = acc(&["install", "--mcp"]).err(4, "invalid_data");
            assert!(
                refused["message"].as_str().is_some_and(|m| m.contains(why)),
                "{}: {refused}",
                step("refused")
            );
            assert_eq!(files(&dir), before, "{}: nothing changed", step("refused"));
            continue;
        }
        acc(&["install", "--mcp"]).ok_json();
        let listed = mcp_list("installed");
        assert!(listed.contains("acc"), "{}: {listed}", step("installed"));
        let config = dir.join(start.file.map_or("opencode.json", |(name, _)| name));
        let installed = std::fs::read_to_string(&config).expect("config");
        if let Some((_, text)) = start.file.filter(|(_, t)| !t.is_empty()) {
            assert!(
                installed.contains("// mine: keep the diff view") || !text.contains("// mine"),
                "{}: the user's comment stays: {installed}",
                step("installed")
            );
        }
        if start.linked {
            assert!(config.is_symlink(), "{}: the link stays", step("installed"));
        }
        let once = files(&dir);
        let again = acc(&["install", "--mcp", "--dry-run"]).ok_json();
        assert_eq!(again["changes"], false, "{}: {again}", step("reinstall"));
        acc(&["install", "--mcp"]).ok_json();
        assert_eq!(files(&dir), once, "{}: a second install", step("reinstall"));

        // The user's later edit, then uninstall: the edit stays, ACC's entries go.
        let edited = installed.replacen('{', "{\n  \"username\": \"me\",", 1);
        std::fs::write(&config, &edited).expect("the user's edit");
        mcp_list("edited");
        acc(&["uninstall"]).ok_json();
        let left = std::fs::read_to_string(&config).unwrap_or_default();
        assert!(
            left.contains("\"username\": \"me\"") && !left.contains("acc-mcp"),
            "{}: {left}",
            step("uninstalled")
        );
        assert!(
            !dir.join("plugins/acc.js").exists(),
            "{}",
            step("uninstalled")
        );
        if start.linked {
            assert!(
                config.is_symlink(),
                "{}: the link stays",
                step("uninstalled")
            );
        }
        mcp_list("uninstalled");

        // Untouched since acc wrote it: uninstall gives back exactly what was there.
        acc(&["install", "--mcp"]).ok_json();
        acc(&["uninstall"]).ok_json();
        let restored: Vec<_> = files(&dir)
            .into_iter()
            .filter(|(p, _)| p != &config)
            .collect();
        let expected: Vec<_> = before
            .iter()
            .filter(|(p, _)| p != &config)
            .cloned()
            .collect();
        assert_eq!(restored, expected, "{}", step("restored"));
        assert_eq!(
            std::fs::read_to_string(&config).unwrap_or_default(),
            left,
            "{}: the file as the user left it",
            step("restored")
        );
    }
}

/// `acc doctor` for OpenCode: an installation is reported with its plugin, never its plugin read
/// as JSON; a plugin that went missing is an error that `doctor --repair` puts right; an
/// `opencode.json` OpenCode would refuse is named; a plugin of ACC's that no record names is a
/// stray, left alone.
#[test]
fn doctor_knows_accs_opencode_plugin_and_repairs_it() {
    let world = World::new();
    let model = ModelServer::start();
    let writer = acc_tests::prepared_writer(&world, Client::OpenCode, &model);
    let home = writer.home.to_str().expect("utf8").to_string();
    let dir = config_dir(&writer);
    world
        .acc(&["install", "--client", "opencode", "--mcp", "--home", &home])
        .ok_json();
    let check = |args: &[&str], needle: &str| -> Value {
        let mut all = vec!["doctor", "--home", &home];
        all.extend_from_slice(args);
        let report = world.acc(&all).ok_json();
        report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.contains(needle)))
            .cloned()
            .unwrap_or_else(|| panic!("no check {needle}: {report}"))
    };
    let hooks = check(&[], "hooks opencode");
    assert_eq!(hooks["status"], "ok", "{hooks}");
    assert!(
        hooks["detail"]
            .as_str()
            .is_some_and(|d| d.contains("plugins/acc.js")),
        "{hooks}"
    );
    let plugin = std::fs::read(dir.join("plugins/acc.js")).expect("plugin");

    std::fs::remove_file(dir.join("plugins/acc.js")).expect("lose it");
    let lost = check(&[], "hooks opencode");
    assert_eq!(lost["status"], "error", "{lost}");
    assert!(
        lost["detail"]
            .as_str()
            .is_some_and(|d| d.contains("ACC's plugin")),
        "{lost}"
    );
    let repaired = check(&["--repair"], "hooks opencode");
    assert_eq!(repaired["status"], "ok", "{repaired}");
    assert_eq!(
        std::fs::read(dir.join("plugins/acc.js")).expect("plugin"),
        plugin,
        "the plugin is back as acc wrote it"
    );

    let config = dir.join("opencode.json");
    let good = std::fs::read(&config).expect("config");
    std::fs::write(&config, "{ \"mcp\": ").expect("break it");
    let refused = check(&[], "opencode.json");
    assert_eq!(refused["status"], "error", "{refused}");
    std::fs::write(&config, good).expect("mend it");

    // The record gone (another machine's copy of the folder, say): the plugin is a stray.
    world
        .acc(&["uninstall", "--client", "opencode", "--home", &home])
        .ok_json();
    std::fs::write(dir.join("plugins/acc.js"), &plugin).expect("a copy");
    let stray = check(&[], "hooks opencode");
    assert_eq!(stray["status"], "warn", "{stray}");
    assert!(
        stray["detail"]
            .as_str()
            .is_some_and(|d| d.contains("no installation record")),
        "{stray}"
    );
    let again = world
        .acc(&["install", "--client", "opencode", "--home", &home])
        .err(4, "invalid_data");
    assert!(
        again["message"]
            .as_str()
            .is_some_and(|m| m.contains("acc did not write it")),
        "{again}"
    );
    assert_eq!(
        std::fs::read(dir.join("plugins/acc.js")).expect("plugin"),
        plugin,
        "the stray is left as it is"
    );
}

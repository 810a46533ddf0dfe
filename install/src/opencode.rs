//! OpenCode: where its configuration lives, and ACC's plugin, the one file through which
//! OpenCode runs ACC's hooks (OpenCode has no hook configuration; it loads JavaScript plugins).

use std::path::{Path, PathBuf};

/// The plugin, from `opencode_plugin.js`, with the path of the `acc` it runs.
const PLUGIN: &str = include_str!("opencode_plugin.js");

/// The key of `opencode.json` that holds MCP servers.
pub(crate) const SERVERS_KEY: &str = "mcp";

/// How ACC's plugin begins: a file that begins so and that no record names is a stray.
pub(super) const FIRST_LINE: &str = "// ACC's plugin for OpenCode";

/// OpenCode's global configuration directory: `$XDG_CONFIG_HOME/opencode` when that is set (and
/// no `--home` was given), else `<home>/.config/opencode`.
pub(super) fn config_dir(home: &Path, explicit: bool) -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|d| !explicit && !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("opencode"),
        None => home.join(".config").join("opencode"),
    }
}

/// The configuration file beside `plugins/acc.js`: `opencode.jsonc` when the user has one (it is
/// what OpenCode itself creates when there is none), else `opencode.json`.
pub(super) fn config_file(plugin: &Path) -> PathBuf {
    let dir = plugin
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    let commented = dir.join("opencode.jsonc");
    if commented.exists() {
        commented
    } else {
        dir.join("opencode.json")
    }
}

/// ACC's plugin for the `acc` at `acc` (its path a JavaScript string literal: JSON's).
pub fn plugin(acc: &Path) -> String {
    let literal = serde_json::Value::String(acc.to_string_lossy().into_owned()).to_string();
    PLUGIN.replace("__ACC_PATH__", &literal)
}

/// Whether the plugin at `path` is not ACC's plugin for this `acc` (missing, edited, or written
/// for an `acc` elsewhere).
pub(crate) fn plugin_missing(path: &Path, acc: &Path) -> bool {
    std::fs::read_to_string(path).ok() != Some(plugin(acc))
}

//! What this data home last saw of a workspace's room: its records of `acc_meta` and how far
//! the server's clock was ahead, as checked by the last process that opened it
//! (`<data>/workspaces/<id>/room-seen`). A process that finds it trusts it only until its first
//! read's answer, which carries the room's meta afresh in the same round trip and is checked
//! before that read's answer is used: the file saves the connection's own round trip for the
//! meta, never a check. Without the file (or when it names another room) the meta is read
//! first, as before.
//!
//! The file is three kinds of lines: the room's URL, the clock offset in milliseconds, then
//! one `key<TAB>value` line per meta record. Written whole (a temporary file renamed over it);
//! one that cannot be written is skipped (the next process reads the meta first again), and one
//! that does not parse is as good as none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file's name, beside the workspace's other files in the data home.
const SEEN_FILE: &str = "room-seen";

/// The room's meta records, by key.
pub(crate) type Meta = BTreeMap<String, String>;

/// Where `workspace_id`'s record of its room lives under `data_dir`.
pub(crate) fn seen_file(data_dir: &Path, workspace_id: &str) -> PathBuf {
    crate::workspace_dir(data_dir, workspace_id).join(SEEN_FILE)
}

/// The meta and clock offset `file` records for the room at `url`; `None` when there is no
/// such file, it names another room, or it does not parse.
pub(crate) fn read_seen(file: &Path, url: &str) -> Option<(Meta, i64)> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut lines = text.lines();
    if lines.next()? != url {
        return None;
    }
    let offset = lines.next()?.parse().ok()?;
    let mut meta = Meta::new();
    for line in lines {
        let (key, value) = line.split_once('\t')?;
        meta.insert(key.to_string(), value.to_string());
    }
    (!meta.is_empty()).then_some((meta, offset))
}

/// Record what was seen of the room at `url`, when every value fits the file's lines.
pub(crate) fn write_seen(file: &Path, url: &str, meta: &Meta, offset_ms: i64) {
    let fits = |s: &str| !s.contains(['\n', '\r', '\t']);
    if !fits(url) || !meta.iter().all(|(k, v)| fits(k) && fits(v)) {
        return;
    }
    let mut text = format!("{url}\n{offset_ms}\n");
    for (key, value) in meta {
        text.push_str(&format!("{key}\t{value}\n"));
    }
    let Some(dir) = file.parent() else {
        return;
    };
    let temporary = dir.join(format!(".{SEEN_FILE}.{}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&temporary, text))
        .and_then(|()| std::fs::rename(&temporary, file));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}

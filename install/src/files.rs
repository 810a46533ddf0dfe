//! A client's files as the client reads them, and written as it would: JSON with or without
//! comments, read through symbolic links, replaced atomically, private where they hold secrets.

use super::*;

pub(super) fn read_text(path: &Path) -> AccResult<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(data_error(format!(
            "cannot read {} ({e}); nothing was changed",
            path.display()
        ))),
    }
}

pub(super) fn utf8(path: &Path, bytes: &[u8]) -> AccResult<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        data_error(format!(
            "{} is not UTF-8 text; acc will not edit it. Nothing was changed",
            path.display()
        ))
    })
}

/// Why `client` would not load the `text` of its file `path` (Kimi Code's `config.toml` as
/// TOML; JSON with comments for Gemini CLI's and Qwen Code's settings; OpenCode's config
/// leniently; any other JSON file strict), or `None` when it would.
pub fn load_problem(target: &Target, path: &Path, text: &str) -> Option<String> {
    if path == target.hooks_file && hooks_format(target.client) == "toml" {
        return text.parse::<toml_edit::DocumentMut>().err().map(|e| {
            format!(
                "not valid TOML ({})",
                e.to_string().lines().next().unwrap_or("parse error")
            )
        });
    }
    json_doc::client_value(text, dialect(target, path))
        .err()
        .map(|e| format!("not valid JSON ({e})"))
}

/// How the client reads the JSON file `path`: with comments (Gemini CLI's and Qwen Code's
/// settings, which hold their hooks and MCP servers), leniently (OpenCode's config), else
/// strictly.
pub(super) fn dialect(target: &Target, path: &Path) -> Dialect {
    if target.client == Client::OpenCode {
        Dialect::Lenient
    } else if path == target.hooks_file && hooks_format(target.client) == "jsonc" {
        Dialect::Comments
    } else {
        Dialect::Strict
    }
}

/// A client's JSON file as that client reads it (comments where it allows them): the one
/// reader the installer's checks and `acc doctor` share. `None` when it is missing or does not
/// parse.
pub fn read_client_json(target: &Target, path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).ok()?;
    json_doc::client_value(&String::from_utf8_lossy(&bytes), dialect(target, path)).ok()
}

/// How the temporary files ACC writes beside a file begin (then the writer's pid and a dash).
pub(super) const TEMP_PREFIX: &str = ".acc-install-";

/// Remove the temporary files a killed writer left beside the files ACC edits and its record:
/// those whose writer's pid no longer runs. A live writer's are left alone.
pub(super) fn sweep_temporaries(target: &Target) {
    let mut dirs: Vec<PathBuf> = [
        Some(target.hooks_file.clone()),
        Some(target.mcp_file()),
        target.trust_file.clone(),
        target.record_path().ok(),
    ]
    .into_iter()
    .flatten()
    // Beside the file and beside the file its links name, where the writes land.
    .flat_map(|f| [through_links(&f).ok(), Some(f)])
    .flatten()
    .filter_map(|f| f.parent().map(Path::to_path_buf))
    .collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let writer = name
                .strip_prefix(TEMP_PREFIX)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<i64>().ok());
            if writer.is_some_and(|pid| !acc_clients::pid_alive(pid)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The file a change of `path` lands in: `path` itself, or, when it is a symbolic link (or a
/// chain of them, each relative to its own directory), the file the last link names. A user's
/// dotfiles manager keeps its link and the file it points to gets the bytes; a link that points
/// nowhere yet gets its file created. A loop of links is refused by name.
pub(crate) fn through_links(path: &Path) -> AccResult<PathBuf> {
    /// The kernel's own limit on links followed in one lookup.
    const MAX_LINKS: usize = 40;
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(data_error(format!(
        "{} is a loop of symbolic links (more than {MAX_LINKS}); nothing was changed",
        path.display()
    )))
}

/// Remove a client file acc created (it did not exist before the install), through its links:
/// a link the user made to it stays.
pub(super) fn remove_client_file(path: &Path) -> AccResult<()> {
    Ok(std::fs::remove_file(through_links(path)?)?)
}

/// Write a file atomically, through its symbolic links ([`through_links`]): a temporary file in
/// the real file's directory, fsynced, renamed over it, and the directory fsynced. The file's
/// permissions are kept.
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> AccResult<()> {
    use std::io::Write;
    let path = &through_links(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // The writer's pid is in the name: a temporary file left by a writer that was killed is
    // recognised and removed by the next install, uninstall or repair (`sweep_temporaries`).
    let mut temp = tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
        .tempfile_in(dir)
        .map_err(|e| data_error(format!("cannot write beside {} ({e})", path.display())))?;
    temp.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    temp.as_file().sync_all()?;
    temp.persist(path)
        .map_err(|e| data_error(format!("cannot replace {} ({})", path.display(), e.error)))?;
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

pub(super) fn write_private(path: &Path, bytes: &[u8]) -> AccResult<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    write_file(path, bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// Whether a file's directory can be written (its nearest existing ancestor, when it does not
/// exist yet).
pub(super) fn check_writable(path: &Path) -> AccResult<()> {
    let mut dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    while !dir.exists() {
        match dir.parent() {
            Some(parent) => dir = parent.to_path_buf(),
            None => break,
        }
    }
    let writable = |p: &Path| rustix::fs::access(p, rustix::fs::Access::WRITE_OK).is_ok();
    if !writable(&dir) || (path.exists() && !writable(path)) {
        return Err(data_error(format!(
            "{} cannot be written (permissions); nothing was changed",
            path.display()
        )));
    }
    Ok(())
}

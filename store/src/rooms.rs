//! Which room a workspace uses: its SQLite file (the default), or a PostgreSQL database the
//! user connected it to. The choice is the user's own, kept in their data home, never in a
//! repository. In order:
//! - `<data>/workspaces/<id>/room`, written by `acc room connect`: this workspace's room;
//! - `<data>/room`, written by `acc room connect --every-workspace`: the room of every
//!   workspace of this data home without one of its own (a container, a CI runner);
//! - `ACC_ROOM`, the same for a whole environment. Clients that filter their MCP servers'
//!   environment (Codex and Gemini CLI do) do not pass it on, so the room files are the way
//!   that reaches every process.
//!
//! Each holds the database's URL (without a password); each workspace is a schema of its own
//! in the database.
//!
//! Passwords are never kept by ACC: as for `psql`, one comes from `PGPASSWORD` or from the
//! password file (`PGPASSFILE`, else `~/.pgpass`), and the user from the URL, `PGUSER` or the
//! account's name.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::{StoreError, StoreResult, workspace_dir};

/// The file beside a workspace's store that names its PostgreSQL room.
pub const ROOM_FILE: &str = "room";
/// The environment variable naming a room for every workspace without a room file.
pub const ROOM_ENV: &str = "ACC_ROOM";

fn room_file(data_dir: &Path, workspace_id: &str) -> PathBuf {
    workspace_dir(data_dir, workspace_id).join(ROOM_FILE)
}

/// The URL of the room `workspace_id` uses; `None` for its SQLite store.
pub fn room_url(data_dir: &Path, workspace_id: &str) -> StoreResult<Option<String>> {
    Ok(room_choice(data_dir, workspace_id)?.map(|(url, _)| url))
}

/// What named a workspace's room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomSource {
    /// A room file: the workspace's own, or its data home's.
    File(PathBuf),
    /// [`ROOM_ENV`].
    Environment,
}

/// The URL of the room `workspace_id` uses and what named it, by the precedence above; `None`
/// for its SQLite store.
pub fn room_choice(
    data_dir: &Path,
    workspace_id: &str,
) -> StoreResult<Option<(String, RoomSource)>> {
    for file in [room_file(data_dir, workspace_id), data_dir.join(ROOM_FILE)] {
        if let Some(url) = read_room(&file)? {
            return Ok(Some((url, RoomSource::File(file))));
        }
    }
    Ok(std::env::var(ROOM_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|url| (url, RoomSource::Environment)))
}

/// The URL a room file holds; `None` when there is no such file.
fn read_room(file: &Path) -> StoreResult<Option<String>> {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let url = text.trim().to_string();
            check_url(&url).map_err(|e| {
                StoreError::new(
                    e.kind,
                    format!(
                        "`{}` names no room acc can use: {}",
                        file.display(),
                        e.message
                    ),
                )
            })?;
            Ok(Some(url))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io("read the room file", file, &e)),
    }
}

/// Refuse a room's address that does not parse (a `postgres://` URL, or libpq's `key=value`
/// pairs such as `service=NAME`) or that carries a password.
pub fn check_url(url: &str) -> StoreResult<tokio_postgres::Config> {
    crate::conninfo::check(url)
}

/// Record that `workspace_id` lives in the room at `url` (replacing any earlier one), in one
/// rename.
pub fn connect_room(data_dir: &Path, workspace_id: &str, url: &str) -> StoreResult<PathBuf> {
    check_url(url)?;
    write_room(&workspace_dir(data_dir, workspace_id), ROOM_FILE, url)
}

/// Record that every workspace of this data home without a room file of its own lives in the
/// room at `url` (`<data>/room`): a container's one room, or the test harness's.
pub fn connect_default_room(data_dir: &Path, url: &str) -> StoreResult<PathBuf> {
    check_url(url)?;
    write_room(data_dir, ROOM_FILE, url)
}

/// Write `url` into the room file `name` in `dir` (made when missing), appearing whole (a
/// rename), mode 0600.
fn write_room(dir: &Path, name: &str, url: &str) -> StoreResult<PathBuf> {
    let file = dir.join(name);
    std::fs::DirBuilder::new()
        .recursive(true)
        .create(dir)
        .map_err(|e| StoreError::io("create the room file's directory", dir, &e))?;
    let temp = dir.join(format!(".{name}.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(format!("{url}\n").as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, &file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(StoreError::io("write the room file", &file, &e));
    }
    Ok(file)
}

/// Forget the room of `workspace_id`; whether there was one. The room's database is left as it is.
pub fn disconnect_room(data_dir: &Path, workspace_id: &str) -> StoreResult<bool> {
    let file = room_file(data_dir, workspace_id);
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io("remove the room file", &file, &e)),
    }
}

/// Fill in what the URL leaves to the environment, as `psql` does: the user (`PGUSER`, else
/// the account's name) and the password (`PGPASSWORD`, else the password file's first entry
/// matching host, port, database and user).
pub(crate) fn complete(config: &mut tokio_postgres::Config) {
    if config.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .ok()
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "postgres".to_string());
        config.user(&user);
    }
    if config.get_password().is_some() {
        return;
    }
    if let Ok(password) = std::env::var("PGPASSWORD") {
        config.password(password);
        return;
    }
    let file = password_file();
    let Some(text) = file.and_then(|f| read_password_file(&f)) else {
        return;
    };
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
        // libpq matches a socket connection as `localhost`.
        _ => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let database = config.get_dbname().unwrap_or(&user).to_string();
    if let Some(password) = pgpass_lookup(&text, [&host, &port, &database, &user]) {
        config.password(password);
    }
}

/// A password file's text, when libpq would read it: a regular file with no access for group
/// or others (else a warning naming it, once per process, and it is not read).
fn read_password_file(file: &Path) -> Option<String> {
    if let Some(warning) = password_file_warning(file) {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| eprintln!("acc: warning: {warning}"));
        return None;
    }
    std::fs::metadata(file)
        .is_ok_and(|m| m.is_file())
        .then(|| std::fs::read_to_string(file).ok())
        .flatten()
}

/// Why the password file `file` is not read (it can be read by others), in words naming it;
/// `None` when it is private (or absent). Also for `acc doctor`.
pub fn password_file_warning(file: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).ok()?;
    let mode = meta.mode() & 0o777;
    (meta.is_file() && mode & 0o077 != 0).then(|| {
        format!(
            "password file `{}` has mode {mode:04o}, so group or others can read it; it is not used until it is 0600 or less (`chmod 600 {}`)",
            file.display(),
            file.display()
        )
    })
}

/// The password file libpq would read: `PGPASSFILE`, else `~/.pgpass`.
pub fn password_file() -> Option<PathBuf> {
    std::env::var_os("PGPASSFILE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
}

/// The password of the first line of a password file whose four fields match `wanted` (`*`
/// matches anything; `\:` and `\\` are a colon and a backslash). By hand: libpq's format is
/// five fields per line, and no maintained crate reads it on its own.
fn pgpass_lookup(text: &str, wanted: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = vec![String::new()];
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(next) = chars.next() {
                        fields.last_mut()?.push(next);
                    }
                }
                ':' if fields.len() < 5 => fields.push(String::new()),
                _ => fields.last_mut()?.push(c),
            }
        }
        if fields.len() != 5 {
            continue;
        }
        if fields
            .iter()
            .zip(wanted)
            .all(|(field, want)| field == "*" || field == want)
        {
            return fields.pop();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::pgpass_lookup;

    #[test]
    fn a_password_file_line_matches_by_its_four_fields_with_wildcards_and_escapes() {
        let file =
            "# comment\nother:5432:db:u:no\n*:5432:db:u:first\nh:*:*:u:second\nh\\:x:1:d:u:p\\:w\n";
        let cases: [([&str; 4], Option<&str>); 4] = [
            (["h", "5432", "db", "u"], Some("first")),
            (["h", "6000", "x", "u"], Some("second")),
            (["h:x", "1", "d", "u"], Some("p:w")),
            (["h", "1", "d", "v"], None),
        ];
        for (wanted, password) in cases {
            assert_eq!(
                pgpass_lookup(file, wanted).as_deref(),
                password,
                "{wanted:?}"
            );
        }
    }
}

//! Where a write lands, as the filesystem sees it: the claim resources the write guard checks
//! for a path a tool call names.
//!
//! A path is compared with the claims the way the kernel would open it: relative to the tool's
//! working directory, through every symbolic link (a project reached as `~/src/app` when
//! `~/src` links to `/data/src`, a file that is a link to another file) and `..`. The nearest
//! existing ancestor is resolved by the filesystem and the rest, not there yet, is resolved
//! lexically. The path as written is checked too, so a claim on a link's own name also holds.
//! Each becomes a resource through the one encoding of `acc_core::resource` (any file name,
//! spaces and Unicode included); a path outside the workspace becomes an absolute `file:/...`
//! resource, and an existing directory (`rm -r dir`) its whole tree. Reads the filesystem,
//! writes nothing.

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The resources a write to `path` (as the tool named it) touches; `cwd` is where the tool
/// runs and `root` the workspace root (canonical).
pub fn written_resources(root: &Path, cwd: &Path, path: &str) -> Vec<String> {
    // An empty name writes nothing (the tool fails); it is not the working directory.
    if path.trim().is_empty() {
        return Vec::new();
    }
    let named = expand_home(path);
    let absolute = if named.is_absolute() {
        named
    } else {
        cwd.join(named)
    };
    let mut out = Vec::new();
    let resolved = resolve(&absolute);
    out.push(resource_of(root, &resolved, resolved.is_dir()));
    let lexical = lexical(&absolute);
    // The path as written, from the workspace root however the tool reached it.
    let as_written = match below_root(root, &lexical) {
        Some(rest) => root.join(rest),
        None => lexical,
    };
    out.push(resource_of(root, &as_written, resolved.is_dir()));
    out.sort();
    out.dedup();
    out
}

/// `~` and `~/...` as the shell expands them (a tool's command names paths that way).
fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    match path.strip_prefix('~') {
        Some("") => home().unwrap_or_else(|| PathBuf::from(path)),
        Some(rest) if rest.starts_with('/') => match home() {
            Some(home) => home.join(rest.trim_start_matches('/')),
            None => PathBuf::from(path),
        },
        _ => PathBuf::from(path),
    }
}

/// `path` (absolute) with `.` and `..` resolved by its components alone.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// `path` (absolute) as the kernel would reach it: its nearest existing ancestor resolved by
/// the filesystem (every link, every `..` after a link), the rest, which does not exist yet,
/// resolved lexically.
fn resolve(path: &Path) -> PathBuf {
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            for name in missing.iter().rev() {
                match Path::new(name).components().next() {
                    Some(Component::ParentDir) => {
                        out.pop();
                    }
                    Some(Component::Normal(name)) => out.push(name),
                    _ => {}
                }
            }
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                at = parent;
            }
            // `..` or `.` at the end of a path that does not exist: the components decide.
            (Some(parent), None) => {
                missing.push(
                    at.components()
                        .next_back()
                        .map_or_else(|| std::ffi::OsStr::new(""), |c| c.as_os_str()),
                );
                at = parent;
            }
            (None, _) => return lexical(path),
        }
    }
}

/// The rest of `path` (lexical, absolute) below its deepest ancestor that is the workspace
/// root, reached directly or another way (through a link).
fn below_root<'a>(root: &Path, path: &'a Path) -> Option<&'a Path> {
    path.ancestors()
        .find(|ancestor| {
            *ancestor == root || std::fs::canonicalize(ancestor).is_ok_and(|real| real == root)
        })
        .and_then(|ancestor| path.strip_prefix(ancestor).ok())
}

/// The canonical resource of `path` (absolute, resolved): workspace-relative under `root`,
/// else absolute; a directory's whole tree.
fn resource_of(root: &Path, path: &Path, directory: bool) -> String {
    let (absolute, rest) = match path.strip_prefix(root) {
        Ok(rest) => (false, rest),
        Err(_) => (true, path.strip_prefix("/").unwrap_or(path)),
    };
    let segments: Vec<&[u8]> = rest
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.as_bytes()),
            _ => None,
        })
        .collect();
    let whole_root = segments.is_empty();
    let mut resource = acc_core::resource::file_resource(absolute, segments);
    if directory && !whole_root {
        resource.push_str("/**");
    }
    resource
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace under a temporary directory, reached also through a link to it.
    struct Tree {
        _temp: tempfile::TempDir,
        root: PathBuf,
        link: PathBuf,
    }

    fn tree() -> Tree {
        let temp = tempfile::tempdir().expect("tempdir");
        let real = temp.path().join("data/src/app");
        std::fs::create_dir_all(real.join("src")).expect("mkdir");
        std::fs::create_dir_all(real.join("dir with space")).expect("mkdir");
        std::fs::write(real.join("src/parser.rs"), "x").expect("write");
        std::fs::write(real.join("dir with space/été x.md"), "x").expect("write");
        std::os::unix::fs::symlink(real.join("src/parser.rs"), real.join("alias.rs"))
            .expect("link");
        std::fs::create_dir_all(temp.path().join("home")).expect("home");
        let link = temp.path().join("home/src");
        std::os::unix::fs::symlink(temp.path().join("data/src"), &link).expect("link");
        let root = std::fs::canonicalize(&real).expect("canonical");
        Tree {
            link: link.join("app"),
            root,
            _temp: temp,
        }
    }

    #[test]
    fn every_way_of_naming_a_file_is_the_same_resource() {
        let tree = tree();
        let root = &tree.root;
        let through_link = tree.link.to_string_lossy().into_owned();
        let real = root.to_string_lossy().into_owned();
        for (cwd, path, wanted) in [
            (root.clone(), "src/parser.rs", "file:src/parser.rs"),
            (root.clone(), "./src/../src/parser.rs", "file:src/parser.rs"),
            (root.join("src"), "parser.rs", "file:src/parser.rs"),
            (root.join("src"), "../src/parser.rs", "file:src/parser.rs"),
            (
                root.clone(),
                &format!("{real}/src/parser.rs"),
                "file:src/parser.rs",
            ),
            (
                tree.link.clone(),
                &format!("{through_link}/src/parser.rs"),
                "file:src/parser.rs",
            ),
            (tree.link.clone(), "src/parser.rs", "file:src/parser.rs"),
            (tree.link.join("src"), "new.rs", "file:src/new.rs"),
            (
                tree.link.clone(),
                "src/new dir/n.rs",
                "file:src/new%20dir/n.rs",
            ),
            (
                root.clone(),
                "dir with space/été x.md",
                "file:dir%20with%20space/été%20x.md",
            ),
            (root.clone(), "alias.rs", "file:src/parser.rs"),
            (root.clone(), "src", "file:src/**"),
            (root.clone(), ".", "file:**"),
            (root.clone(), "/etc/hosts", "file:/etc/hosts"),
        ] {
            let found = written_resources(root, &cwd, path);
            assert!(
                found.iter().any(|r| r == wanted),
                "{path} from {}: {found:?}, wanted {wanted}",
                cwd.display()
            );
        }
        // A link's own name is checked beside its target.
        let found = written_resources(root, root, "alias.rs");
        assert_eq!(found, ["file:alias.rs", "file:src/parser.rs"]);
        assert!(written_resources(root, &root.join("src"), "").is_empty());
    }
}

//! Workspace discovery, the closed `acc.workspace.json` schema, and the data home.
//!
//! Owns: deciding which coordination room a directory belongs to, validating its configuration,
//! and locating the runtime state directory outside every workspace. Must not: open the store or
//! write anything except through `acc config init`.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use acc_core::error::{AccError, AccResult, ErrorCode};
use acc_core::ids;

use acc_core::workspace::{
    CONFIG_FILE, ClaimPolicy, Config, DEFAULT_CONTEXT_BUDGET, IdentitySource, Workspace,
};

const TOP_LEVEL_KEYS: &[&str] = &[
    "schemaVersion",
    "workspaceId",
    "displayName",
    "roots",
    "policy",
    "requiredAdapters",
    "extensions",
];
const POLICY_KEYS: &[&str] = &["claimMode", "contextBudgetBytes"];
const RUNTIME_STATE_KEYS: &[&str] = &[
    "sessions",
    "session",
    "participants",
    "messages",
    "receipts",
    "claims",
    "intents",
    "events",
    "tokens",
    "token",
    "generation",
    "generations",
    "bindings",
    "deliveryBindings",
    "delivery",
    "livePolicy",
    "cursor",
];

fn config_error(path: &Path, message: impl std::fmt::Display) -> AccError {
    AccError::new(
        ErrorCode::InvalidConfig,
        format!("{}: {message}", path.display()),
    )
}

/// Parse and validate the text of a config file. `dir` is the directory holding it.
pub fn parse_config(path: &Path, dir: &Path, text: &str) -> AccResult<(String, Config)> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| config_error(path, format!("is not valid json: {e}")))?;
    let Value::Object(object) = value else {
        return Err(config_error(path, "must hold a json object"));
    };
    for key in object.keys() {
        if RUNTIME_STATE_KEYS.contains(&key.as_str()) {
            return Err(config_error(
                path,
                format!(
                    "key `{key}` is runtime state; it lives in the acc store under the data home, never in the workspace config"
                ),
            ));
        }
    }
    known_keys(path, &object, "", TOP_LEVEL_KEYS)?;
    match object.get("schemaVersion") {
        Some(Value::Number(n)) if n.as_i64() == Some(1) => {}
        Some(other) => {
            return Err(config_error(
                path,
                format!("`schemaVersion` must be 1, found {other}"),
            ));
        }
        None => return Err(config_error(path, "`schemaVersion` is required (use 1)")),
    }
    let workspace_id = match object.get("workspaceId") {
        Some(Value::String(id)) => {
            ids::validate_portable_id("workspaceId", id)
                .map_err(|e| config_error(path, e.message))?;
            id.clone()
        }
        Some(_) => return Err(config_error(path, "`workspaceId` must be a string")),
        None => return Err(config_error(path, "`workspaceId` is required")),
    };
    let display_name = match object.get("displayName") {
        Some(Value::String(name)) if !name.trim().is_empty() && name.chars().count() <= 200 => {
            name.clone()
        }
        Some(_) => {
            return Err(config_error(
                path,
                "`displayName` must be a nonempty string of at most 200 characters",
            ));
        }
        None => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| workspace_id.clone()),
    };
    let roots = parse_roots(path, object.get("roots"))?;
    let (claim_mode, context_budget_bytes) = parse_policy(path, object.get("policy"))?;
    let required_adapters = parse_required_adapters(path, object.get("requiredAdapters"))?;
    if let Some(extensions) = object.get("extensions")
        && !extensions.is_object()
    {
        return Err(config_error(path, "`extensions` must be an object"));
    }
    Ok((
        workspace_id,
        Config {
            display_name,
            roots,
            claim_mode,
            context_budget_bytes,
            required_adapters,
        },
    ))
}

/// Refuse a key of `object` that is not in `allowed`, naming it (with `prefix`) and the
/// allowed ones.
fn known_keys(
    path: &Path,
    object: &serde_json::Map<String, Value>,
    prefix: &str,
    allowed: &[&str],
) -> AccResult<()> {
    match object.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(config_error(
            path,
            format!(
                "unknown key `{prefix}{key}` (allowed: {})",
                allowed.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// `roots`: relative paths inside the workspace (default `.`).
fn parse_roots(path: &Path, roots: Option<&Value>) -> AccResult<Vec<String>> {
    Ok(match roots {
        None => vec![".".to_string()],
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut roots = Vec::new();
            for item in items {
                let Value::String(root) = item else {
                    return Err(config_error(path, "`roots` must hold strings"));
                };
                validate_root(root).map_err(|m| config_error(path, m))?;
                roots.push(root.clone());
            }
            roots
        }
        Some(_) => {
            return Err(config_error(
                path,
                "`roots` must be a nonempty array of relative paths",
            ));
        }
    })
}

/// `requiredAdapters`: adapter ids.
fn parse_required_adapters(path: &Path, adapters: Option<&Value>) -> AccResult<Vec<String>> {
    Ok(match adapters {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let mut names = Vec::new();
            for item in items {
                let Value::String(name) = item else {
                    return Err(config_error(path, "`requiredAdapters` must hold strings"));
                };
                ids::validate_portable_id("requiredAdapters entry", name)
                    .map_err(|e| config_error(path, e.message))?;
                names.push(name.clone());
            }
            names
        }
        Some(_) => {
            return Err(config_error(
                path,
                "`requiredAdapters` must be an array of adapter ids",
            ));
        }
    })
}

/// The `policy` object: the claim policy and the next-turn context budget.
fn parse_policy(path: &Path, policy: Option<&Value>) -> AccResult<(ClaimPolicy, u32)> {
    let mut claim_mode = ClaimPolicy::Advisory;
    let mut context_budget_bytes = DEFAULT_CONTEXT_BUDGET;
    match policy {
        None => {}
        Some(Value::Object(policy)) => {
            known_keys(path, policy, "policy.", POLICY_KEYS)?;
            match policy.get("claimMode") {
                None => {}
                Some(Value::String(mode)) if mode == "advisory" => {
                    claim_mode = ClaimPolicy::Advisory
                }
                Some(Value::String(mode)) if mode == "guarded" => claim_mode = ClaimPolicy::Guarded,
                Some(other) => {
                    return Err(config_error(
                        path,
                        format!(
                            "`policy.claimMode` must be \"advisory\" or \"guarded\", found {other}"
                        ),
                    ));
                }
            }
            match policy.get("contextBudgetBytes") {
                None => {}
                Some(Value::Number(n)) if n.as_u64().is_some_and(|b| (1..=64000).contains(&b)) => {
                    context_budget_bytes = n.as_u64().unwrap_or(6000) as u32;
                }
                Some(other) => {
                    return Err(config_error(
                        path,
                        format!(
                            "`policy.contextBudgetBytes` must be a whole number from 1 to 64000, found {other}"
                        ),
                    ));
                }
            }
        }
        Some(_) => return Err(config_error(path, "`policy` must be an object")),
    }
    Ok((claim_mode, context_budget_bytes))
}

/// A root is relative and never climbs out of the workspace, counting segments.
fn validate_root(root: &str) -> Result<(), String> {
    if root.is_empty() {
        return Err("a root must not be empty (use \".\")".into());
    }
    let path = Path::new(root);
    if path.is_absolute() || root.starts_with('/') || root.starts_with('\\') {
        return Err(format!(
            "root `{root}` is absolute; roots are relative to the workspace"
        ));
    }
    let mut depth: i64 = 0;
    for component in path.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("root `{root}` escapes the workspace"));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "root `{root}` is absolute; roots are relative to the workspace"
                ));
            }
        }
    }
    Ok(())
}

fn defaults(dir: &Path, fallback_name: &str) -> Config {
    Config {
        display_name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| fallback_name.to_string()),
        roots: vec![".".into()],
        claim_mode: ClaimPolicy::Advisory,
        context_budget_bytes: DEFAULT_CONTEXT_BUDGET,
        required_adapters: Vec::new(),
    }
}

fn short_hash(path: &Path) -> String {
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    ids::hex(&digest[..6])
}

/// The Git common directory for `dir` (walking up), following worktree `.git` files.
pub fn find_git(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    for candidate in dir.ancestors() {
        let dot_git = candidate.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else if meta.is_file() {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
            let target = Path::new(target);
            if target.is_absolute() {
                target.to_path_buf()
            } else {
                candidate.join(target)
            }
        } else {
            continue;
        };
        let common = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(text) => {
                let rel = Path::new(text.trim());
                if rel.is_absolute() {
                    rel.to_path_buf()
                } else {
                    git_dir.join(rel)
                }
            }
            Err(_) => git_dir,
        };
        let common = std::fs::canonicalize(&common).ok()?;
        return Some((candidate.to_path_buf(), common));
    }
    None
}

/// The id a directory would get without a config file (Git common dir, else the directory).
pub fn derived_identity(dir: &Path) -> (String, PathBuf, IdentitySource, Option<PathBuf>) {
    if let Some((top, common)) = find_git(dir) {
        let name = if common.file_name().is_some_and(|n| n == ".git") {
            common
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        } else {
            common
                .file_name()
                .map(|n| n.to_string_lossy().trim_end_matches(".git").to_string())
        }
        .unwrap_or_else(|| "repo".into());
        let id = format!("{}-{}", ids::portable_slug(&name), short_hash(&common));
        (id, top, IdentitySource::Git, Some(common))
    } else {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = format!("{}-{}", ids::portable_slug(&name), short_hash(dir));
        (id, dir.to_path_buf(), IdentitySource::Directory, None)
    }
}

/// Read and validate the config file at `dir` (no walking), refusing a symlinked one.
pub fn read_config_at(dir: &Path) -> AccResult<Option<(String, Config)>> {
    let path = dir.join(CONFIG_FILE);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(config_error(&path, format!("cannot be read: {e}"))),
    };
    if meta.file_type().is_symlink() {
        return Err(config_error(
            &path,
            "is a symlink; acc refuses a config reached through a symlink (copy the file instead)",
        ));
    }
    if !meta.is_file() {
        return Err(config_error(&path, "is not a regular file"));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| config_error(&path, format!("cannot be read: {e}")))?;
    parse_config(&path, dir, &text).map(Some)
}

/// Canonicalize a start directory, with a clear error.
pub fn canonical_dir(path: &Path, what: &str) -> AccResult<PathBuf> {
    let canonical = std::fs::canonicalize(path)
        .map_err(|e| AccError::usage(format!("{what} `{}` cannot be used: {e}", path.display())))?;
    if !canonical.is_dir() {
        return Err(AccError::usage(format!(
            "{what} `{}` is not a directory",
            path.display()
        )));
    }
    Ok(canonical)
}

/// Discover the workspace that `start` belongs to.
pub fn discover(start: &Path) -> AccResult<Workspace> {
    let start = canonical_dir(start, "directory")?;
    // A symlinked config anywhere on the way up is refused, not skipped.
    for dir in start.ancestors() {
        if let Some((id, config)) = read_config_at(dir)? {
            let git = find_git(dir).map(|(_, common)| common);
            return Ok(Workspace {
                id,
                root: dir.to_path_buf(),
                source: IdentitySource::Config,
                git_common_dir: git,
                config,
            });
        }
    }
    let (id, root, source, git_common_dir) = derived_identity(&start);
    let config = defaults(&root, &id);
    Ok(Workspace {
        id,
        root,
        source,
        git_common_dir,
        config,
    })
}

/// Where to start discovery: `--workspace`, else `ACC_WORKSPACE_ROOT`, else `--cwd`, else the
/// process's working directory.
pub fn start_dir(workspace_flag: Option<&Path>, cwd_flag: Option<&Path>) -> AccResult<PathBuf> {
    if let Some(path) = workspace_flag {
        return Ok(path.to_path_buf());
    }
    if let Some(value) = std::env::var_os("ACC_WORKSPACE_ROOT") {
        let path = PathBuf::from(&value);
        if !path.is_absolute() {
            return Err(AccError::usage(format!(
                "ACC_WORKSPACE_ROOT must be an absolute path, got `{}`",
                path.display()
            )));
        }
        return Ok(path);
    }
    if let Some(path) = cwd_flag {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()?)
}

/// The base directory under which ACC creates `acc/` (see SUPPLEMENT.md section 2).
pub fn data_base() -> AccResult<PathBuf> {
    acc_clients::data_base().map_err(AccError::usage)
}

/// Resolve a path as far as it exists, so a not-yet-created data home can still be compared.
fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(&current) {
            let mut resolved = canonical;
            for part in missing.iter().rev() {
                resolved.push(part);
            }
            return resolved;
        }
        match (
            current.file_name().map(|n| n.to_os_string()),
            current.parent(),
        ) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                current = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The `acc/` data directory for this workspace, refused when it lies inside the workspace.
pub fn data_dir_for(workspace: &Workspace) -> AccResult<PathBuf> {
    let acc_dir = data_base()?.join("acc");
    let resolved = resolve_existing_prefix(&acc_dir);
    let mut inside = vec![workspace.root.clone()];
    if let Some(common) = &workspace.git_common_dir {
        inside.push(common.clone());
    }
    for root in inside {
        if resolved.starts_with(&root) {
            return Err(AccError::new(
                ErrorCode::DataHomeInsideWorkspace,
                format!(
                    "the data home `{}` lies inside the workspace `{}`; acc keeps runtime state outside every repository (set ACC_DATA_HOME elsewhere)",
                    resolved.display(),
                    root.display()
                ),
            ));
        }
    }
    Ok(resolved)
}

/// The checkout (worktree top) containing `dir` and its current branch, when inside Git.
pub fn checkout_and_branch(dir: &Path) -> (Option<String>, Option<String>) {
    for candidate in dir.ancestors() {
        let dot_git = candidate.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            let Ok(text) = std::fs::read_to_string(&dot_git) else {
                break;
            };
            let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
                break;
            };
            let target = Path::new(target.trim());
            if target.is_absolute() {
                target.to_path_buf()
            } else {
                candidate.join(target)
            }
        };
        let branch = std::fs::read_to_string(git_dir.join("HEAD"))
            .ok()
            .and_then(|head| {
                head.trim()
                    .strip_prefix("ref: refs/heads/")
                    .map(str::to_string)
            });
        return (Some(candidate.to_string_lossy().into_owned()), branch);
    }
    (Some(dir.to_string_lossy().into_owned()), None)
}

/// The text `acc config init` writes for `dir`, with the claim policy given (`advisory`, `guarded`).
pub fn initial_config_text(dir: &Path, claim_policy: &str) -> String {
    let (id, _, _, _) = derived_identity(dir);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| id.clone());
    let mut object = Map::new();
    object.insert("schemaVersion".into(), Value::from(1));
    object.insert("workspaceId".into(), Value::from(id));
    object.insert("displayName".into(), Value::from(name));
    object.insert("roots".into(), Value::from(vec!["."]));
    let mut policy = Map::new();
    policy.insert("claimMode".into(), Value::from(claim_policy));
    policy.insert(
        "contextBudgetBytes".into(),
        Value::from(DEFAULT_CONTEXT_BUDGET),
    );
    object.insert("policy".into(), Value::Object(policy));
    let mut text = serde_json::to_string_pretty(&Value::Object(object)).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests;

//! The workspace as the protocol rules see it: its identity, root and validated configuration.
//! Discovering it (walking directories, reading `acc.workspace.json`, the environment) is the
//! host's; the core only reads what it is given.

use std::path::PathBuf;

/// The configuration file name.
pub const CONFIG_FILE: &str = "acc.workspace.json";
/// Default next-turn context budget in bytes.
pub const DEFAULT_CONTEXT_BUDGET: u32 = 6000;

/// How a workspace identity was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentitySource {
    /// `acc.workspace.json`.
    Config,
    /// The Git common directory (all worktrees of one repository share a room).
    Git,
    /// The directory itself.
    Directory,
}

impl IdentitySource {
    /// Stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Config => "config",
            Self::Git => "git",
            Self::Directory => "directory",
        }
    }
}

/// Room-wide claim policy, `policy.claimMode` in `acc.workspace.json` (metadata: the effective
/// protection is derived from live sessions). Not to be confused with a claim's own mode,
/// `acc_store::ClaimMode` (exclusive or shared).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimPolicy {
    /// Claims inform; nothing blocks.
    Advisory,
    /// Guarded claims are enforced where every live participant can enforce them.
    Guarded,
}

impl ClaimPolicy {
    /// Stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Advisory => "advisory",
            Self::Guarded => "guarded",
        }
    }
}

/// The validated workspace configuration (defaults filled in).
#[derive(Debug, Clone)]
pub struct Config {
    /// Display name.
    pub display_name: String,
    /// Relative roots inside the workspace.
    pub roots: Vec<String>,
    /// Claim policy.
    pub claim_mode: ClaimPolicy,
    /// Next-turn context budget in bytes.
    pub context_budget_bytes: u32,
    /// Adapters the workspace expects (metadata).
    pub required_adapters: Vec<String>,
}

/// A discovered workspace.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// Portable workspace id.
    pub id: String,
    /// Canonical root directory.
    pub root: PathBuf,
    /// How the identity was found.
    pub source: IdentitySource,
    /// Canonical Git common directory, when inside a repository.
    pub git_common_dir: Option<PathBuf>,
    /// The configuration in force.
    pub config: Config,
}

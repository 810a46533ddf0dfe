//! The installation record's file format (`installs/<client>-<hash>.json` in the data home)
//! and the entries it lists, as serde types. Readers accept the first format (version 1)
//! through `super::from_first_format`; this format is version 2.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an installation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum RecordState {
    /// Files are being written; an interrupted installation rolls back from here.
    Pending,
    /// Every file is written.
    Complete,
}

/// One entry ACC writes into a client's file, identified by its whole content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Entry {
    /// A hook group in `hooks.<event>` (JSON).
    Hook {
        /// The event.
        event: String,
        /// The whole group object.
        group: Value,
    },
    /// An MCP server registration (`mcpServers.<name>` in JSON, `[mcp_servers.<name>]` in
    /// TOML).
    McpServer {
        /// The server's name.
        name: String,
        /// The entry's content.
        server: Value,
    },
    /// A Codex trust record `[hooks.state."<key>"] trusted_hash = "<hash>"` (TOML).
    Trust {
        /// The trust key.
        key: String,
        /// The hash Codex computed.
        hash: String,
    },
    /// A whole file that is ACC's by its content (OpenCode's `plugins/acc.js`).
    File {
        /// The file's whole text.
        content: String,
    },
}

/// What one file held, for ACC's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FileRecord {
    pub(super) path: PathBuf,
    /// `json` or `toml`.
    pub(super) format: String,
    /// Whether the file existed before ACC first wrote it (uninstall removes a file ACC
    /// created only when it is still exactly as ACC wrote it).
    pub(super) existed: bool,
    /// The file without ACC's entries, as it was when ACC last wrote it (base64): what
    /// uninstall leaves when the file is still byte for byte what ACC wrote.
    pub(super) before: String,
    /// The sha256 of the bytes ACC wrote.
    pub(super) written_sha256: String,
    /// ACC's entries in it.
    pub(super) entries: Vec<Entry>,
    /// While the record is `pending`: the file's exact bytes before this installation began
    /// (base64), or absent when there was no file, for rolling an interrupted install back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) previous: Option<String>,
    /// While `pending`: whether the file existed before this installation began.
    #[serde(default)]
    pub(super) previous_existed: bool,
}

/// The MCP registration an installation made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct McpRecord {
    pub(super) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) participant: Option<String>,
    /// Gemini CLI: the user chose `"trust": true` for the server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) trusted: bool,
}

/// The installation record (in the data home, never in a workspace).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Record {
    pub(super) version: u32,
    pub(super) client: String,
    pub(super) home: String,
    pub(super) acc: String,
    pub(super) delivery: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) mcp: Option<McpRecord>,
    /// `pending` while files are being written, `complete` after.
    pub(super) state: RecordState,
    pub(super) files: Vec<FileRecord>,
    pub(super) installed_at: String,
    /// While `pending`: the record this installation replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) replaces: Option<Box<Record>>,
}

/// `acc install` and `acc uninstall`: the plan carried out (or, dry, what it would do).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallPlan<'a> {
    pub dry_run: bool,
    pub client: &'static str,
    pub steps: &'a [String],
    pub changes: bool,
    /// `install` or `uninstall`.
    pub verb: &'static str,
}

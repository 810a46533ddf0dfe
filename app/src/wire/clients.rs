//! The shapes ACC speaks to and writes for the clients: MCP tool listings and their schemas,
//! what a hook prints, the endpoints a hook binds, and the hook and MCP entries of the
//! clients' configuration files.

use super::*;

/// A `tools/list` entry.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub input_schema: &'a Value,
}

/// A JSON Schema as an MCP tool's `inputSchema` publishes it. It has a field for exactly the
/// keywords every model API accepts (`mcp::schema::SUPPORTED_KEYWORDS`), so a combinator or
/// a reference cannot be written at all; the root is always a closed object.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Schema {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Schema>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<std::collections::BTreeMap<&'static str, Schema>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<bool>,
}

/// What a hook prints for Claude Code (and Codex's SessionStart): context to add, or a
/// PreToolUse denial.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput<'a> {
    pub hook_specific_output: HookSpecificOutput<'a>,
    /// ACC's OpenCode plugin only, at SessionStart: the user's consent to live delivery
    /// (`actionable` or `all`), the one thing that lets the plugin open its wake socket.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acc_live_delivery: Option<&'static str>,
}

/// The event-specific part of [`HookOutput`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput<'a> {
    pub hook_event_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<&'a str>,
}

/// The endpoint a Claude Code hook binds `claude-inbox` to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaudeInboxEndpoint<'a> {
    pub socket: &'a str,
    pub pid: i64,
    pub session_id: &'a str,
    pub config_dir: &'a std::path::Path,
}

/// The endpoint a Qwen Code hook binds `qwen-inbox` to (the token is a secret: an endpoint is
/// never shown).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QwenInboxEndpoint<'a> {
    pub socket: &'a str,
    pub token: &'a str,
    pub pid: i64,
    pub session_id: &'a str,
    pub qwen_home: &'a std::path::Path,
}

/// The endpoint an OpenCode hook (run by ACC's plugin) binds `opencode-plugin` to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenCodePluginEndpoint<'a> {
    pub socket: &'a str,
    pub pid: i64,
    pub session_id: &'a str,
}

/// The endpoint a Codex hook binds `codex-app-server` to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexEndpoint<'a> {
    pub codex_home: &'a std::path::Path,
    pub thread_id: &'a str,
    pub cwd: &'a std::path::Path,
}

/// One command of an installed hook group.
#[derive(Debug, Clone, Serialize)]
pub struct HookCommand {
    /// Gemini CLI names each hook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'static str>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub command: String,
    /// Seconds for Claude Code and Codex, milliseconds for Gemini CLI.
    pub timeout: u32,
}

/// `acc-mcp` in OpenCode's `opencode.json` `mcp` (a local server: the command and its
/// arguments in one list, `environment` only when set).
#[derive(Debug, Clone, Serialize)]
pub struct OpenCodeMcpServer {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub command: [String; 1],
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub environment: std::collections::BTreeMap<&'static str, String>,
}

/// Gemini CLI's answer to a BeforeTool hook that refuses the tool.
#[derive(Debug, Clone, Serialize)]
pub struct GeminiDecision<'a> {
    pub decision: &'static str,
    pub reason: &'a str,
}

/// A hook group as ACC installs it into a client's hooks file.
#[derive(Debug, Clone, Serialize)]
pub struct HookGroup {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matcher: Option<&'static str>,
    pub hooks: [HookCommand; 1],
}

/// One of Kimi Code's `[[hooks]]` tables in its `config.toml`, as ACC installs it (no `matcher`:
/// every occurrence of the event).
#[derive(Debug, Clone, Serialize)]
pub struct KimiHook {
    pub event: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matcher: Option<&'static str>,
    pub command: String,
    /// Seconds.
    pub timeout: u64,
}

/// A Kimi Code hook's answer that adds context: `message` is the text the model gets.
#[derive(Debug, Clone, Serialize)]
pub struct KimiHookOutput<'a> {
    pub message: &'a str,
}

/// `acc-mcp` as ACC registers it: Claude Code's shape (what `claude mcp add` writes: `type`,
/// `args` and `env` always) or Codex's (`env` only when set).
#[derive(Debug, Clone, Serialize)]
pub struct McpServer {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<[&'static str; 0]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<std::collections::BTreeMap<&'static str, String>>,
    /// Gemini CLI and Qwen Code: run the server's tools without asking (only when the user
    /// chose it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust: Option<bool>,
    /// Qwen Code: declare the server's tools in every model request instead of behind its
    /// `tool_search` bridge, where a model told to use ACC's tools would not find them.
    #[serde(rename = "alwaysLoadTools", skip_serializing_if = "Option::is_none")]
    pub always_load_tools: Option<bool>,
}

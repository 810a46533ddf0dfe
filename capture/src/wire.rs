//! The JSON the capture tool writes: what it prints with `--json`, the first user line it
//! sends Claude Code in stream-json, the `example` adapter's endpoint and the SessionStart hook the Qwen Code capture adds. The model APIs it
//! serves are in [`crate::model`]; Codex's JSON-RPC is framing (the `codex-app-server` adapter's daemon client).

use std::path::Path;

use serde::Serialize;

use acc_delivery::contracts::Capture;

/// `acc-capture --json`: the capture, and the file it was written to.
#[derive(Debug, Clone, Serialize)]
pub struct Captured<'a> {
    pub capture: &'a Capture,
    pub file: Option<String>,
}

/// A user turn on Claude Code's stream-json input.
#[derive(Debug, Clone, Serialize)]
pub struct UserLine<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub message: UserMessage<'a>,
}

/// The message of a [`UserLine`].
#[derive(Debug, Clone, Serialize)]
pub struct UserMessage<'a> {
    pub role: &'static str,
    pub content: &'a str,
}

impl<'a> UserLine<'a> {
    /// A user turn saying `content`.
    pub fn new(content: &'a str) -> Self {
        Self {
            kind: "user",
            message: UserMessage {
                role: "user",
                content,
            },
        }
    }
}

/// The `example` adapter's endpoint: the file its deliveries are appended to.
#[derive(Debug, Clone, Serialize)]
pub struct ExampleEndpoint<'a> {
    pub file: &'a Path,
}

/// The capture's own `hooks` setting for Qwen Code: one SessionStart command.
#[derive(Debug, Clone, Serialize)]
pub struct QwenHooks<'a> {
    #[serde(rename = "SessionStart")]
    pub session_start: [QwenHookGroup<'a>; 1],
}

/// A hook group of [`QwenHooks`].
#[derive(Debug, Clone, Serialize)]
pub struct QwenHookGroup<'a> {
    pub hooks: [QwenHookCommand<'a>; 1],
}

/// A command hook of a [`QwenHookGroup`].
#[derive(Debug, Clone, Serialize)]
pub struct QwenHookCommand<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub command: &'a str,
}

/// The hello the capture asks ACC's OpenCode plugin on its wake socket.
#[derive(Debug, Clone, Serialize)]
pub struct PluginHello {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

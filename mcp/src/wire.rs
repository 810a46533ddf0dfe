//! The MCP protocol's own result shapes (initialize, discovery, lists, tool and resource
//! results, error data) as serde types. The tools' results are [`acc_app::wire`]'s; the JSON-RPC
//! framing around both is [`super::jsonrpc`]'s.

use serde::Serialize;
use serde_json::Value;

/// `{}`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Empty {}

/// Who answers.
#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    pub name: &'static str,
    pub title: &'static str,
    pub version: &'static str,
}

/// What the server offers: tools and resources, no options.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Capabilities {
    pub tools: Empty,
    pub resources: Empty,
}

/// The `initialize` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Initialize<'a> {
    pub protocol_version: &'a str,
    pub capabilities: Capabilities,
    pub server_info: ServerInfo,
    pub instructions: &'static str,
}

/// The `server/discover` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Discover {
    pub supported_versions: &'static [&'static str],
    pub capabilities: Capabilities,
    pub instructions: &'static str,
}

/// The `tools/list` result.
#[derive(Debug, Clone, Serialize)]
pub struct ToolList {
    pub tools: Vec<Value>,
}

/// A resource.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    pub uri: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
}

/// The `resources/list` result.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceList {
    pub resources: Vec<Resource>,
}

/// The `resources/templates/list` result: none.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplates {
    pub resource_templates: [Empty; 0],
}

/// One text content item.
#[derive(Debug, Clone, Serialize)]
pub struct Text {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
}

/// An array result as the object the 2025 revisions' `structuredContent` must be.
#[derive(Debug, Clone, Serialize)]
pub struct Items<'a> {
    pub items: &'a Value,
}

/// A `tools/call` result: the value as text, as structured content (an object in the 2025
/// revisions), and `isError` for a failed call.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub content: Vec<Text>,
    pub structured_content: Value,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ToolResult {
    /// The result as JSON, its structured content moved in rather than copied through serde:
    /// that content is most of a result (`acc_status`'s room), and copying it cost a sixth of
    /// the call (issue 55).
    pub fn into_value(self) -> Value {
        let ToolResult {
            content,
            structured_content,
            is_error,
        } = self;
        let mut value = acc_core::wire::json(&ToolResult {
            content,
            structured_content: Value::Null,
            is_error,
        });
        if let Some(slot) = value
            .as_object_mut()
            .and_then(|map| map.get_mut("structuredContent"))
        {
            *slot = structured_content;
        }
        value
    }
}

/// One resource's contents.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceText<'a> {
    pub uri: &'a str,
    pub mime_type: &'static str,
    pub text: String,
}

/// The `resources/read` result.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceContents<'a> {
    pub contents: [ResourceText<'a>; 1],
}

/// Error data: the revisions this server speaks and the one asked for.
#[derive(Debug, Clone, Serialize)]
pub struct UnsupportedVersion<'a> {
    pub supported: &'static [&'static str],
    pub requested: &'a str,
}

/// Error data: the tools there are.
#[derive(Debug, Clone, Serialize)]
pub struct UnknownTool {
    pub tools: Vec<&'static str>,
}

/// Error data: the resource asked for.
#[derive(Debug, Clone, Serialize)]
pub struct UnknownResource<'a> {
    pub uri: &'a str,
}

/// `speaksFor` of `acc_status`: the participant and session, and why.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpeaksFor<'a> {
    pub participant_id: &'a str,
    pub session_id: &'a str,
    pub source: &'static str,
    pub reason: &'a str,
}

/// The arguments of the tools, deserialised after the published schema validated them (so a
/// wrong type never reaches here; unknown fields were refused by the closed schema). Each
/// field is optional here; the rules between fields and the core's validators decide.
pub mod args {
    use serde::Deserialize;

    /// `acc_status`: no arguments.
    #[derive(Debug, Clone, Default, Deserialize)]
    pub struct Status {}

    /// `acc_sync`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Sync {
        pub scope: Option<String>,
        pub cursor: Option<String>,
        pub limit: Option<i64>,
        pub kind: Option<String>,
        pub message_id: Option<String>,
        pub current: Option<bool>,
    }

    /// `acc_work`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Work {
        pub summary: Option<String>,
        pub mode: Option<String>,
        pub state: Option<String>,
        pub resource_hints: Vec<String>,
        pub clear: Option<bool>,
    }

    /// `acc_claim`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Claim {
        pub action: String,
        pub resource: Option<String>,
        pub resources: Option<Vec<String>>,
        pub claim_id: Option<String>,
        pub mode: Option<String>,
        pub reason: Option<String>,
        pub lease_seconds: Option<i64>,
    }

    /// `acc_release`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Release {
        pub claim_id: Option<String>,
        pub claim_ids: Option<Vec<String>>,
        pub resource: Option<String>,
        pub resources: Option<Vec<String>>,
        pub all: Option<bool>,
    }

    /// `acc_message`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Message {
        pub to: Vec<String>,
        pub subject: String,
        pub body: String,
        pub kind: Option<String>,
        pub obligation: Option<String>,
        pub client_message_id: Option<String>,
        pub supersedes: Vec<String>,
        pub withdraws: Vec<String>,
    }

    /// `acc_request`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Request {
        pub to_participant_id: String,
        pub title: String,
        pub detail: Option<String>,
        pub client_message_id: Option<String>,
    }

    /// `acc_inbox`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Inbox {
        pub message_id: Option<String>,
        pub cursor: Option<String>,
        pub limit: Option<i64>,
        pub wait_ms: Option<i64>,
    }

    /// `acc_reply`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Reply {
        pub message_id: String,
        pub body: String,
        pub subject: Option<String>,
        pub client_message_id: Option<String>,
    }

    /// `acc_ack`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Ack {
        pub message_id: String,
    }

    /// `acc_finish`.
    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", default)]
    pub struct Finish {
        pub goal: String,
        pub status: Option<String>,
        pub completed: Vec<String>,
        pub remaining: Vec<String>,
        pub blockers: Vec<String>,
        pub to_participant_id: Option<String>,
        pub client_message_id: Option<String>,
    }
}

/// `value` as the JSON text a model reads (a tool result's `content` text, a resource's text):
/// the same JSON, with every character the peer-text renderer escapes (control, format,
/// separator: bidirectional overrides, zero-width characters, line and paragraph separators)
/// written as a `\uXXXX` escape instead of raw, so the model sees the escape and the text cannot
/// reorder or hide what surrounds it. A parser reads back the same value.
pub fn model_text(value: &Value) -> String {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, HiddenEscaped);
    if serde::Serialize::serialize(value, &mut serializer).is_err() {
        return value.to_string();
    }
    String::from_utf8(bytes).unwrap_or_else(|_| value.to_string())
}

/// serde_json's compact formatter, escaping [`acc_clients::render::hidden`] characters too
/// (serde_json escapes only `"`, `\` and the C0 controls).
struct HiddenEscaped;

impl serde_json::ser::Formatter for HiddenEscaped {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if !acc_clients::render::hidden(c) {
                continue;
            }
            writer.write_all(fragment.as_bytes().get(start..at).unwrap_or_default())?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = at + c.len_utf8();
        }
        writer.write_all(fragment.as_bytes().get(start..).unwrap_or_default())
    }
}

//! Lossless edits of a client's JSON configuration (Claude Code's `settings.json` and
//! `.claude.json`, Codex's `hooks.json`): ACC's entries are added to and removed from the
//! file's concrete syntax tree, so every byte ACC does not own (order, layout, indentation,
//! the final newline) stays as the user wrote it.
//!
//! Written with `jsonc-parser`'s CST, the maintained format-preserving JSON editor; only the
//! small mapping from `serde_json` values and the "remove a container ACC created and left
//! empty" rule are ACC's own.

use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use super::Entry;
use acc_core::error::AccResult;

/// The client's own parser: strict JSON (no comments, trailing commas or loose names). Claude
/// Code and Codex refuse anything else, silently dropping the hooks in it.
fn strict() -> ParseOptions {
    ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// How a client reads its JSON: strictly (Claude Code, Codex), with `//` and `/* */` comments
/// (Gemini CLI's and Qwen Code's settings; trailing commas they do not accept), or with comments
/// and trailing commas (OpenCode's `opencode.json`, read by a lenient JSONC parser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Strict JSON.
    Strict,
    /// Comments allowed.
    Comments,
    /// Comments and trailing commas allowed.
    Lenient,
}

impl Dialect {
    fn options(self) -> ParseOptions {
        ParseOptions {
            allow_comments: self != Self::Strict,
            allow_trailing_commas: self == Self::Lenient,
            ..strict()
        }
    }
}

/// `text` as the client reads it, in its dialect; the parser's complaint when it does not read.
pub fn client_value(text: &str, dialect: Dialect) -> Result<Value, String> {
    match dialect {
        Dialect::Strict => serde_json::from_str::<Value>(text).map_err(|e| e.to_string()),
        _ => jsonc_parser::parse_to_serde_value::<Value>(text, &dialect.options())
            .map_err(|e| e.to_string()),
    }
}

/// A parsed JSON configuration file.
pub struct JsonDoc {
    root: CstRootNode,
    /// The whole document as a value (for checks and comparisons).
    pub value: Value,
    /// The key that holds the MCP servers: `mcpServers`, or OpenCode's `mcp`.
    pub servers: &'static str,
}

impl std::fmt::Debug for JsonDoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonDoc")
            .field("value", &self.value)
            .finish()
    }
}

impl JsonDoc {
    /// Parse `text` the way the client does; an empty (or blank) file is an empty object. The
    /// error names the file and says that nothing was changed. Comments (and, leniently,
    /// trailing commas) stay where they are through every edit.
    pub fn parse(
        path: &Path,
        text: &str,
        dialect: Dialect,
        servers: &'static str,
    ) -> AccResult<Self> {
        let blank = text.trim().is_empty();
        let source = if blank { "{}\n" } else { text };
        // The client's parser decides what is valid; the CST is only the editor.
        let value = client_value(source, dialect).map_err(|e| {
            super::data_error(format!(
                "{} is not valid JSON{} ({e}); the client will not load it either. Fix it, then run acc again: nothing was changed",
                path.display(),
                match dialect {
                    Dialect::Strict => "",
                    Dialect::Comments => " (comments aside)",
                    Dialect::Lenient => " (comments and trailing commas aside)",
                }
            ))
        })?;
        if !value.is_object() {
            return Err(super::data_error(format!(
                "{} is not a JSON object; acc edits only an object. Nothing was changed",
                path.display()
            )));
        }
        let root = CstRootNode::parse(source, &dialect.options()).map_err(|e| {
            super::data_error(format!(
                "{} could not be read for editing ({e}); nothing was changed",
                path.display()
            ))
        })?;
        Ok(Self {
            root,
            value,
            servers,
        })
    }

    /// The text.
    pub fn text(&self) -> String {
        self.root.to_string()
    }

    fn object(&self) -> CstObject {
        self.root.object_value_or_set()
    }

    /// Check that an entry can be added: its containers are of the right kind. The error names
    /// the key that is in the way.
    pub fn check_addable(&self, path: &Path, entry: &Entry) -> AccResult<()> {
        let wrong = |what: &str| {
            Err(super::data_error(format!(
                "`{what}` in {} is not what acc expected; acc will not edit it. Nothing was changed",
                path.display()
            )))
        };
        match entry {
            Entry::Hook { event, .. } => {
                match self.value.get("hooks") {
                    None => {}
                    Some(Value::Object(hooks)) => match hooks.get(event) {
                        None | Some(Value::Array(_)) => {}
                        Some(_) => return wrong(&format!("hooks.{event} (not an array)")),
                    },
                    Some(_) => return wrong("hooks (not an object)"),
                }
                Ok(())
            }
            Entry::McpServer { .. } => match self.value.get(self.servers) {
                None | Some(Value::Object(_)) => Ok(()),
                Some(_) => wrong(&format!("{} (not an object)", self.servers)),
            },
            Entry::Trust { .. } => wrong("a Codex trust record (a JSON file cannot hold one)"),
            Entry::File { .. } => wrong("a whole file (a JSON file cannot hold one)"),
        }
    }

    /// Add an entry at the end of its container, creating the containers it needs.
    pub fn add(&mut self, entry: &Entry) {
        match entry {
            Entry::Hook { event, group } => {
                let list = self
                    .object()
                    .object_value_or_set("hooks")
                    .array_value_or_set(event);
                list.append(input(group));
            }
            Entry::McpServer { name, server } => {
                self.object()
                    .object_value_or_set(self.servers)
                    .append(name, input(server));
            }
            Entry::Trust { .. } | Entry::File { .. } => {}
        }
        self.refresh();
    }

    /// Remove an entry found by its content; `before` is the document before ACC first wrote
    /// (its containers are kept even when left empty). Whether anything was removed.
    pub fn remove(&mut self, entry: &Entry, before: &Value) -> bool {
        let object = self.object();
        let removed = match entry {
            Entry::Hook { event, group } => {
                let Some(hooks) = object.get("hooks").and_then(|p| p.object_value()) else {
                    return false;
                };
                let Some(list_prop) = hooks.get(event) else {
                    return false;
                };
                let Some(list) = list_prop.array_value() else {
                    return false;
                };
                let Some(found) = list
                    .elements()
                    .into_iter()
                    .find(|e| e.to_serde_value().as_ref() == Some(group))
                else {
                    return false;
                };
                found.remove();
                if list.elements().is_empty()
                    && before.pointer(&pointer(&["hooks", event])).is_none()
                {
                    list_prop.remove();
                }
                if hooks.properties().is_empty()
                    && before.get("hooks").is_none()
                    && let Some(prop) = object.get("hooks")
                {
                    prop.remove();
                }
                true
            }
            Entry::McpServer { name, server } => {
                let Some(servers) = object.get(self.servers).and_then(|p| p.object_value()) else {
                    return false;
                };
                let Some(prop) = servers.get(name) else {
                    return false;
                };
                if prop.value().and_then(|v| v.to_serde_value()).as_ref() != Some(server) {
                    return false;
                }
                prop.remove();
                if servers.properties().is_empty()
                    && before.get(self.servers).is_none()
                    && let Some(prop) = object.get(self.servers)
                {
                    prop.remove();
                }
                true
            }
            Entry::Trust { .. } | Entry::File { .. } => false,
        };
        self.refresh();
        removed
    }

    fn refresh(&mut self) {
        self.value = self.root.to_serde_value().unwrap_or(Value::Null);
    }
}

/// A JSON pointer to nested keys.
fn pointer(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("/{}", k.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// A `serde_json` value as the CST's input value.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

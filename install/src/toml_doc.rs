//! Lossless edits of Codex's and Kimi Code's `config.toml`: ACC's Codex trust records
//! (`[hooks.state."<key>"]`), its Codex MCP server (`[mcp_servers.<name>]`) and its Kimi Code
//! hooks (`[[hooks]]` tables) are added and removed with `toml_edit`, the maintained
//! format-preserving TOML editor, so comments, order and layout of everything else stay byte for
//! byte. Tables ACC creates only as parents (`hooks`, `hooks.state`, `mcp_servers`) are
//! implicit: no header of their own appears.

use std::path::Path;

use serde_json::{Map, Value};
use toml_edit::{DocumentMut, InlineTable, Item, Table};

use super::Entry;
use acc_core::error::AccResult;

/// A parsed `config.toml`.
#[derive(Debug)]
pub struct TomlDoc {
    doc: DocumentMut,
}

/// The document position of the tables ACC adds: after everything the user wrote, never in
/// between two of the user's tables (toml_edit would otherwise place a new table beside its
/// siblings).
const END: isize = isize::MAX;

fn implicit() -> Item {
    let mut table = Table::new();
    table.set_implicit(true);
    Item::Table(table)
}

/// A TOML item (a table or an inline table) as a JSON object of its string, array and table
/// values, for comparing an entry with what ACC recorded.
fn as_json(item: &Item) -> Value {
    fn value(v: &toml_edit::Value) -> Value {
        match v {
            toml_edit::Value::String(s) => Value::from(s.value().clone()),
            toml_edit::Value::Integer(i) => Value::from(*i.value()),
            toml_edit::Value::Boolean(b) => Value::from(*b.value()),
            toml_edit::Value::Array(a) => Value::Array(a.iter().map(value).collect()),
            toml_edit::Value::InlineTable(t) => Value::Object(
                t.iter()
                    .map(|(k, v)| (k.to_string(), value(v)))
                    .collect::<Map<String, Value>>(),
            ),
            other => Value::from(other.to_string().trim().to_string()),
        }
    }
    match item {
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), as_json(v)))
                .collect::<Map<String, Value>>(),
        ),
        Item::Value(v) => value(v),
        _ => Value::Null,
    }
}

impl TomlDoc {
    /// Parse `text` (Codex's parser refuses what `toml_edit` refuses: duplicate keys and
    /// tables, bad syntax). The error names the file and says nothing was changed.
    pub fn parse(path: &Path, text: &str) -> AccResult<Self> {
        let doc = text.parse::<DocumentMut>().map_err(|e| {
            super::data_error(format!(
                "{} is not valid TOML ({}); its client will not load it either. Fix it, then run acc again: nothing was changed",
                path.display(),
                e.to_string().lines().next().unwrap_or("parse error")
            ))
        })?;
        Ok(Self { doc })
    }

    /// The text.
    pub fn text(&self) -> String {
        self.doc.to_string()
    }

    /// What the document holds where `entry` would go, as JSON (for ownership checks): for a
    /// Kimi Code hook, the `[[hooks]]` table equal to it.
    pub fn existing(&self, entry: &Entry) -> Option<Value> {
        let item = match entry {
            Entry::Trust { key, .. } => self.doc.get("hooks")?.get("state")?.get(key)?,
            Entry::McpServer { name, .. } => self.doc.get("mcp_servers")?.get(name)?,
            Entry::Hook { group, .. } => {
                return self.hook_tables().into_iter().find(|table| table == group);
            }
            Entry::File { .. } => return None,
        };
        Some(as_json(item))
    }

    /// Kimi Code's `[[hooks]]` tables, as JSON, in order.
    pub fn hook_tables(&self) -> Vec<Value> {
        self.doc
            .get("hooks")
            .and_then(Item::as_array_of_tables)
            .map(|list| {
                list.iter()
                    .map(|t| as_json(&Item::Table(t.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Check that the containers an entry needs are tables.
    pub fn check_addable(&self, path: &Path, entry: &Entry) -> AccResult<()> {
        let table_or_absent = |item: Option<&Item>| item.is_none_or(Item::is_table_like);
        let ok = match entry {
            Entry::Trust { .. } => {
                let hooks = self.doc.get("hooks");
                table_or_absent(hooks) && table_or_absent(hooks.and_then(|h| h.get("state")))
            }
            Entry::McpServer { .. } => table_or_absent(self.doc.get("mcp_servers")),
            Entry::Hook { .. } => self.doc.get("hooks").is_none_or(|h| h.is_array_of_tables()),
            Entry::File { .. } => false,
        };
        if ok {
            Ok(())
        } else {
            Err(super::data_error(format!(
                "{} has a value where acc's table would go ({}); acc will not edit it. Nothing was changed",
                path.display(),
                match entry {
                    Entry::Trust { .. } => "hooks.state",
                    Entry::Hook { .. } => "[[hooks]]",
                    _ => "mcp_servers",
                }
            )))
        }
    }

    /// Add an entry as a table of its own at the end of the document.
    pub fn add(&mut self, entry: &Entry) {
        match entry {
            Entry::Trust { key, hash } => {
                let Some(state) = self
                    .doc
                    .entry("hooks")
                    .or_insert_with(implicit)
                    .as_table_like_mut()
                    .and_then(|h| h.entry("state").or_insert(implicit()).as_table_like_mut())
                else {
                    return;
                };
                let mut table = Table::new();
                table.insert("trusted_hash", toml_edit::value(hash.as_str()));
                table.set_position(Some(END));
                state.insert(key, Item::Table(table));
            }
            Entry::McpServer { name, server } => {
                let Some(servers) = self
                    .doc
                    .entry("mcp_servers")
                    .or_insert_with(implicit)
                    .as_table_like_mut()
                else {
                    return;
                };
                let mut table = Table::new();
                table.set_position(Some(END));
                if let Some(command) = server.get("command").and_then(Value::as_str) {
                    table.insert("command", toml_edit::value(command));
                }
                if let Some(Value::Array(args)) = server.get("args") {
                    let mut array = toml_edit::Array::new();
                    for arg in args.iter().filter_map(Value::as_str) {
                        array.push(arg);
                    }
                    table.insert("args", toml_edit::value(array));
                }
                if let Some(Value::Object(env)) = server.get("env") {
                    let mut inline = InlineTable::new();
                    for (key, value) in env {
                        if let Some(value) = value.as_str() {
                            inline.insert(key, value.into());
                        }
                    }
                    table.insert("env", toml_edit::value(inline));
                }
                servers.insert(name, Item::Table(table));
            }
            // A `[[hooks]]` table after everything else, its keys in the entry's order.
            Entry::Hook { group, .. } => {
                let Some(list) = self
                    .doc
                    .entry("hooks")
                    .or_insert(Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
                    .as_array_of_tables_mut()
                else {
                    return;
                };
                let mut table = Table::new();
                table.set_position(Some(END));
                for (key, value) in group.as_object().into_iter().flatten() {
                    match value {
                        Value::String(text) => {
                            table.insert(key, toml_edit::value(text.as_str()));
                        }
                        Value::Number(n) => {
                            if let Some(n) = n.as_i64() {
                                table.insert(key, toml_edit::value(n));
                            }
                        }
                        Value::Bool(b) => {
                            table.insert(key, toml_edit::value(*b));
                        }
                        _ => {}
                    }
                }
                list.push(table);
            }
            Entry::File { .. } => {}
        }
    }

    /// Remove an entry found by its content; parents ACC created (absent from `before`) are
    /// removed when left empty. Whether anything was removed.
    pub fn remove(&mut self, entry: &Entry, before: &TomlDoc) -> bool {
        match entry {
            Entry::Trust { key, hash } => {
                let recorded = Value::Object(Map::from_iter([(
                    "trusted_hash".to_string(),
                    Value::from(hash.as_str()),
                )]));
                if self.existing(entry) != Some(recorded) {
                    return false;
                }
                let had_state = before
                    .doc
                    .get("hooks")
                    .and_then(|h| h.get("state"))
                    .is_some();
                let had_hooks = before.doc.get("hooks").is_some();
                let Some(hooks) = self.doc.get_mut("hooks").and_then(Item::as_table_like_mut)
                else {
                    return false;
                };
                if let Some(state) = hooks.get_mut("state").and_then(Item::as_table_like_mut) {
                    state.remove(key);
                    if state.is_empty() && !had_state {
                        hooks.remove("state");
                    }
                }
                if hooks.is_empty() && !had_hooks {
                    self.doc.remove("hooks");
                }
                true
            }
            Entry::McpServer { name, server } => {
                if self.existing(entry).as_ref() != Some(server) {
                    return false;
                }
                let had_servers = before.doc.get("mcp_servers").is_some();
                let Some(servers) = self
                    .doc
                    .get_mut("mcp_servers")
                    .and_then(Item::as_table_like_mut)
                else {
                    return false;
                };
                servers.remove(name);
                if servers.is_empty() && !had_servers {
                    self.doc.remove("mcp_servers");
                }
                true
            }
            Entry::Hook { group, .. } => {
                let Some(index) = self.hook_tables().iter().position(|t| t == group) else {
                    return false;
                };
                let had_hooks = before.doc.get("hooks").is_some();
                let Some(list) = self
                    .doc
                    .get_mut("hooks")
                    .and_then(Item::as_array_of_tables_mut)
                else {
                    return false;
                };
                list.remove(index);
                if list.is_empty() && !had_hooks {
                    self.doc.remove("hooks");
                }
                true
            }
            Entry::File { .. } => false,
        }
    }
}

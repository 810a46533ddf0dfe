//! The installation record (`installations/<client>-<hash>.json` in the data home): what ACC
//! wrote into each client file and what the file was without it, read in both formats, and
//! the live-delivery consent it holds, which delivery reads through [`InstalledConsent`].

use super::*;

impl Record {
    pub(super) fn file(&self, path: &Path) -> Option<&FileRecord> {
        self.files.iter().find(|f| f.path == path)
    }
}

pub(super) fn decode(text: &str) -> Vec<u8> {
    STANDARD.decode(text).unwrap_or_default()
}

/// Read a record; records of the first format (version 1) are read into this one.
pub(super) fn read_record(target: &Target) -> AccResult<Option<Record>> {
    let path = target.record_path()?;
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        data_error(format!(
            "the installation record {} is damaged ({e}); move it aside and remove acc's entries by hand",
            path.display()
        ))
    })?;
    if value.get("version").is_none() {
        return Ok(Some(from_first_format(target, &value)));
    }
    serde_json::from_value(value).map(Some).map_err(|e| {
        data_error(format!(
            "the installation record {} is not one this acc reads ({e})",
            path.display()
        ))
    })
}

/// A version 1 record: files by position (the hooks file, then Codex's config.toml with an
/// appended block, or Claude Code's state file with `mcpEntry`), entries derived from the acc
/// path it recorded.
pub(super) fn from_first_format(target: &Target, value: &Value) -> Record {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let acc = PathBuf::from(text(value, "acc"));
    let mut files = Vec::new();
    for (index, file) in value
        .get("files")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = PathBuf::from(text(file, "path"));
        let original = file.get("original").and_then(Value::as_str);
        let mut entries = Vec::new();
        let mut format = "json";
        if index == 0 {
            entries = groups(target.client, &acc)
                .into_iter()
                .map(|(event, group)| Entry::Hook {
                    event: event.to_string(),
                    group,
                })
                .collect();
        } else if let Some(entry) = file.get("mcpEntry") {
            entries.push(Entry::McpServer {
                name: DEFAULT_MCP_NAME.into(),
                server: entry.clone(),
            });
        } else if let Some(block) = file.get("added").and_then(Value::as_str) {
            format = "toml";
            if let Ok(doc) = block.parse::<toml::Table>() {
                let states = doc
                    .get("hooks")
                    .and_then(|h| h.get("state"))
                    .and_then(toml::Value::as_table);
                for (key, state) in states.into_iter().flatten() {
                    if let Some(hash) = state.get("trusted_hash").and_then(toml::Value::as_str) {
                        entries.push(Entry::Trust {
                            key: key.clone(),
                            hash: hash.to_string(),
                        });
                    }
                }
                if let Some(server) = doc.get("mcp_servers").and_then(|s| s.get("acc")) {
                    entries.push(Entry::McpServer {
                        name: DEFAULT_MCP_NAME.into(),
                        server: serde_json::to_value(server).unwrap_or(Value::Null),
                    });
                }
            }
        }
        files.push(FileRecord {
            path,
            format: format.into(),
            existed: original.is_some(),
            before: original.unwrap_or("").to_string(),
            written_sha256: text(file, "writtenSha256"),
            entries,
            previous: None,
            previous_existed: false,
        });
    }
    Record {
        version: 1,
        client: text(value, "client"),
        home: text(value, "home"),
        acc: acc.to_string_lossy().into_owned(),
        delivery: text(value, "delivery"),
        mcp: None,
        state: RecordState::Complete,
        files,
        installed_at: text(value, "installedAt"),
        replaces: None,
    }
}

pub(super) fn write_record(path: &Path, record: &Record) -> AccResult<()> {
    let mut text = serde_json::to_string_pretty(record)
        .map_err(|e| AccError::internal(format!("the installation record: {e}")))?;
    text.push('\n');
    write_private(path, text.as_bytes())
}

/// The consent `acc install --delivery` recorded in each installation's record, as delivery
/// reads it.
#[derive(Debug, Default, Clone, Copy)]
pub struct InstalledConsent;

impl acc_delivery::ConsentRecords for InstalledConsent {
    fn recorded(&self, client: Client, dir: &Path) -> acc_store::LivePolicy {
        recorded_delivery(&Target::in_config_dir(client, dir))
    }

    fn recorded_here(&self, client: Client) -> acc_store::LivePolicy {
        Target::new(client, None).map_or(acc_store::LivePolicy::Off, |t| recorded_delivery(&t))
    }
}

/// The live-delivery consent recorded for a client's installation, read once here: `off` when
/// nothing is recorded, and a record that names no policy this build knows grants nothing.
pub fn recorded_delivery(target: &Target) -> acc_store::LivePolicy {
    read_record(target)
        .ok()
        .flatten()
        .map_or(acc_store::LivePolicy::Off, |r| policy_of(&r.delivery))
}

/// A recorded consent as this build reads it (an unknown or empty value grants nothing).
pub(super) fn policy_of(recorded: &str) -> acc_store::LivePolicy {
    acc_store::LivePolicy::parse(recorded).unwrap_or(acc_store::LivePolicy::Off)
}

/// The MCP registration an installation made: its name, pinned participant if any, and
/// whether the user chose to trust it (Gemini CLI).
pub type RecordedMcp = (String, Option<String>, bool);

/// What `doctor --repair` reinstalls: the recorded consent and MCP registration. `None` when
/// nothing is recorded.
pub fn recorded_options(target: &Target) -> Option<(acc_store::LivePolicy, Option<RecordedMcp>)> {
    let record = read_record(target).ok().flatten()?;
    let record = if record.state == RecordState::Pending {
        *record.replaces?
    } else {
        record
    };
    Some((
        policy_of(&record.delivery),
        record.mcp.map(|m| (m.name, m.participant, m.trusted)),
    ))
}

/// Whether an interrupted installation is recorded (doctor reports it; its repair rolls back).
pub fn interrupted(target: &Target) -> bool {
    read_record(target)
        .ok()
        .flatten()
        .is_some_and(|r| r.state == RecordState::Pending)
}

//! Planning an installation: for each client file, ACC's old entries out, the user's entries
//! of the same name refused, the new entries in, and the lines that tell the user what will
//! change; checked before anything is written.

use super::*;

/// One file's part of an installation: what it is now and what it will be.
pub(super) struct Planned {
    pub(super) path: PathBuf,
    pub(super) format: &'static str,
    pub(super) current: Option<Vec<u8>>,
    pub(super) existed: bool,
    pub(super) before: String,
    pub(super) desired: String,
    pub(super) entries: Vec<Entry>,
}

impl Planned {
    pub(super) fn changes(&self) -> bool {
        self.current.as_deref() != Some(self.desired.as_bytes())
    }
}

/// Plan one file: remove the entries an earlier installation recorded in it, refuse to take
/// anything that is the user's, and add `entries`.
pub(super) fn plan_file(
    client: Client,
    path: &Path,
    format: &'static str,
    old: Option<&FileRecord>,
    entries: Vec<Entry>,
) -> AccResult<Planned> {
    let current = read_text(path)?;
    let text = match &current {
        Some(bytes) => utf8(path, bytes)?,
        None => String::new(),
    };
    let mut doc = Doc::parse(path, format, &text)?;
    // Installed before with these very entries, and the file still holds each of them by
    // meaning: nothing to do, whatever order the client rewrote them in.
    let already = !entries.is_empty()
        && old.is_some_and(|o| o.entries == entries)
        && entries.iter().all(|e| doc.holds(e));
    if let Some(old) = old {
        let recorded_before = Doc::before(path, format, old)?;
        for entry in &old.entries {
            doc.remove(entry, &recorded_before);
        }
    }
    let before = match old {
        // The file is still exactly what acc wrote: nothing else changed it, so what it was
        // without acc's entries is what the record says, byte for byte.
        Some(old) if current.as_deref().map(sha256).as_deref() == Some(&old.written_sha256) => {
            String::from_utf8_lossy(&decode(&old.before)).into_owned()
        }
        Some(old) if !old.entries.is_empty() => doc.text(),
        _ => text.clone(),
    };
    for entry in &entries {
        if let Some(occupant) = doc.occupant(entry, client) {
            let way_out = match entry {
                Entry::McpServer { .. } => {
                    "use another name with --mcp-name NAME, or remove it yourself"
                }
                _ => "remove it yourself, then install again",
            };
            return Err(data_error(format!(
                "{} in {}: {occupant}, and acc did not write it (no installation record names it). acc never replaces what is yours: {way_out}. Nothing was changed",
                entry.describe(),
                path.display()
            )));
        }
        doc.check_addable(path, entry)?;
    }
    // The file without ACC's entries is parsed again so additions start from exactly it.
    let mut desired = Doc::parse(path, format, &before)?;
    for entry in &entries {
        desired.add(entry);
    }
    let mut desired = desired.text();
    if already || (entries.is_empty() && old.is_none_or(|o| o.entries.is_empty())) {
        desired = text.clone();
    }
    Ok(Planned {
        path: path.to_path_buf(),
        format,
        existed: old.map_or(current.is_some(), |o| o.existed),
        current,
        before,
        desired,
        entries,
    })
}

/// The hook entries for a client, in event order (OpenCode: ACC's plugin file, which runs the
/// hooks).
pub(super) fn hook_entries(client: Client, acc: &Path) -> Vec<Entry> {
    if client == Client::OpenCode {
        return vec![Entry::File {
            content: opencode::plugin(acc),
        }];
    }
    groups(client, acc)
        .into_iter()
        .map(|(event, group)| Entry::Hook {
            event: event.to_string(),
            group,
        })
        .collect()
}

pub(super) fn mcp_server(
    client: Client,
    acc_mcp: &Path,
    identity: McpIdentity<'_>,
    trust: bool,
) -> Value {
    let mut env = std::collections::BTreeMap::new();
    if let McpIdentity::Participant(participant) = identity {
        env.insert("ACC_MCP_PARTICIPANT", participant.to_string());
    }
    // A data home chosen by the environment is written down: Codex starts MCP servers with a
    // short list of variables (no ACC_DATA_HOME, no XDG_DATA_HOME), so the server would open
    // another store than the hooks, which inherit the client's whole environment.
    if ["ACC_DATA_HOME", "XDG_DATA_HOME"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
        && let Ok(base) = acc_clients::data_base()
    {
        env.insert("ACC_DATA_HOME", base.to_string_lossy().into_owned());
    }
    let command = acc_mcp.to_string_lossy().into_owned();
    if client == Client::OpenCode {
        return acc_core::wire::json(&acc_app::wire::OpenCodeMcpServer {
            kind: "local",
            command: [command],
            environment: env,
        });
    }
    acc_core::wire::json(&match client {
        // The shape `claude mcp add` writes.
        Client::ClaudeCode => acc_app::wire::McpServer {
            kind: Some("stdio"),
            command,
            args: Some([]),
            env: Some(env),
            trust: None,
            always_load_tools: None,
        },
        // The shape `gemini mcp add` (and `qwen mcp add`) writes; `trust` only when the user
        // asked for it. Kimi Code reads the same shape in its `mcp.json` (a `command` makes it
        // a stdio server).
        Client::Codex | Client::Gemini | Client::Qwen | Client::OpenCode | Client::Kimi => {
            acc_app::wire::McpServer {
                kind: None,
                command,
                args: (client != Client::Codex).then_some([]),
                env: Some(env).filter(|e| !e.is_empty()),
                trust: trust.then_some(true),
                always_load_tools: (client == Client::Qwen).then_some(true),
            }
        }
    })
}

/// The position of each of ACC's groups in its event's list of the planned hooks file, as the
/// trust key's tail (`user_prompt_submit:1:0`).
pub(super) fn trust_suffixes(hooks_text: &str, entries: &[Entry]) -> Vec<String> {
    let value: Value = serde_json::from_str(hooks_text).unwrap_or(Value::Null);
    entries
        .iter()
        .filter_map(|entry| {
            let Entry::Hook { event, group } = entry else {
                return None;
            };
            let index = value
                .pointer(&format!("/hooks/{event}"))
                .and_then(Value::as_array)?
                .iter()
                .position(|g| g == group)?;
            Some(format!("{}:{index}:0", snake(event)))
        })
        .collect()
}

pub(super) fn record_file(planned: &Planned, pending: bool) -> FileRecord {
    FileRecord {
        path: planned.path.clone(),
        format: planned.format.into(),
        existed: planned.existed,
        before: STANDARD.encode(planned.before.as_bytes()),
        written_sha256: sha256(planned.desired.as_bytes()),
        entries: planned.entries.clone(),
        previous: pending
            .then(|| planned.current.as_deref().map(|b| STANDARD.encode(b)))
            .flatten(),
        previous_existed: pending && planned.current.is_some(),
    }
}

/// Codex's trust records for ACC's planned hook groups: the hashes Codex itself computes for
/// the planned `hooks.json` (a dry run does not start codex: the keys are known, the hashes
/// are not).
pub(super) fn trust_entries(
    target: &Target,
    codex: Option<&Path>,
    planned_hooks: &str,
    hooks: &[Entry],
    dry_run: bool,
) -> AccResult<Vec<Entry>> {
    let suffixes = trust_suffixes(planned_hooks, hooks);
    let key = |suffix: &str| format!("{}:{suffix}", target.hooks_file.display());
    let Some(codex) = codex.filter(|_| !dry_run) else {
        return Ok(suffixes
            .iter()
            .map(|suffix| Entry::Trust {
                key: key(suffix),
                hash: "(asked of codex when installing)".into(),
            })
            .collect());
    };
    let listed = codex_trust::hashes(codex, planned_hooks)?;
    suffixes
        .iter()
        .map(|suffix| {
            let Some((_, hash)) = listed.hashes.iter().find(|(s, _)| s == suffix) else {
                return Err(data_error(format!(
                    "codex does not list acc's hook {suffix} in {}{}; nothing was changed",
                    target.hooks_file.display(),
                    if listed.problems.is_empty() {
                        String::new()
                    } else {
                        format!(" (codex says: {})", listed.problems.join("; "))
                    }
                )));
            };
            Ok(Entry::Trust {
                key: key(suffix),
                hash: hash.clone(),
            })
        })
        .collect()
}

/// One line per planned change, for the plan `install` prints.
pub(super) fn plan_lines(
    planned: &[Planned],
    acc_mcp: &Path,
    options: &Options<'_>,
) -> Vec<String> {
    let mut steps = Vec::new();
    for plan in planned {
        let verb = if plan.changes() {
            "add to"
        } else {
            "already in"
        };
        if plan.entries.is_empty() {
            steps.push(format!("remove acc's entries from {}", plan.path.display()));
        }
        for entry in &plan.entries {
            steps.push(format!(
                "{verb} {}: {}",
                plan.path.display(),
                entry.plan_line()
            ));
        }
    }
    if let Some(identity) = options.mcp {
        steps.push(format!(
            "acc-mcp ({}) is MCP server `{}`, {}",
            acc_mcp.display(),
            options.mcp_name,
            identity.describe()
        ));
    }
    steps
}

/// Every file the installation touches, planned: the hooks file, Codex's `config.toml` (trust
/// records and the MCP server) or Claude Code's state file (the MCP server), and any file an
/// earlier installation wrote that this one no longer touches (it loses ACC's entries).
/// Refuses before anything is written when a file that changes is not writable.
pub(super) fn plan_files(
    target: &Target,
    acc: &Path,
    options: &Options<'_>,
    old: Option<&Record>,
    codex: Option<&Path>,
    dry_run: bool,
) -> AccResult<Vec<Planned>> {
    let acc_mcp = acc.with_file_name("acc-mcp");
    let old_file = |path: &Path| old.and_then(|r| r.file(path));

    let hooks = hook_entries(target.client, acc);
    let mcp_entry = options.mcp.map(|identity| Entry::McpServer {
        name: options.mcp_name.to_string(),
        server: mcp_server(target.client, &acc_mcp, identity, options.mcp_trust),
    });
    // Gemini CLI keeps hooks and MCP servers in one settings file: one plan for both.
    let one_file = target.mcp_file() == target.hooks_file;
    let mut hooks_file_entries = hooks.clone();
    if one_file {
        hooks_file_entries.extend(mcp_entry.clone());
    }
    let hooks_plan = plan_file(
        target.client,
        &target.hooks_file,
        hooks_format(target.client),
        old_file(&target.hooks_file),
        hooks_file_entries,
    )?;
    let mut planned = vec![hooks_plan];
    match (target.client, &target.trust_file) {
        _ if one_file => {}
        (Client::Codex, Some(config)) => {
            let mut entries = trust_entries(target, codex, &planned[0].desired, &hooks, dry_run)?;
            entries.extend(mcp_entry.clone());
            planned.push(plan_file(
                target.client,
                config,
                "toml",
                old_file(config),
                entries,
            )?);
        }
        _ => {
            let state_file = target.mcp_file();
            if mcp_entry.is_some() || old_file(&state_file).is_some() {
                planned.push(plan_file(
                    target.client,
                    &state_file,
                    if target.client == Client::OpenCode {
                        "opencode"
                    } else {
                        "json"
                    },
                    old_file(&state_file),
                    mcp_entry.clone().into_iter().collect(),
                )?);
            }
        }
    }
    // Files an earlier installation wrote that this one no longer touches lose ACC's entries.
    for file in old.iter().flat_map(|r| r.files.iter()) {
        if !planned.iter().any(|p| p.path == file.path) {
            let format = known_format(&file.format);
            planned.push(plan_file(
                target.client,
                &file.path,
                format,
                Some(file),
                Vec::new(),
            )?);
        }
    }
    for plan in planned.iter().filter(|p| p.changes()) {
        check_writable(&plan.path)?;
    }

    Ok(planned)
}

/// The options of an install, checked before anything else: the consent's spelling,
/// `--mcp-trust` only for a client whose MCP entries have a trust setting, with `--mcp`, the names, and `acc-mcp` beside `acc`.
pub(super) fn check_options(
    target: &Target,
    options: &Options<'_>,
    acc_mcp: &Path,
) -> AccResult<()> {
    if !DELIVERY.contains(&options.delivery) {
        return Err(AccError::usage(format!(
            "--delivery must be off, actionable or all, got `{}`",
            options.delivery
        )));
    }
    if target.client.live_adapter().is_none() && options.delivery != "off" {
        return Err(AccError::usage(format!(
            "--delivery {} consents to live delivery, which {} does not have here: its messages arrive through next-turn. Leave --delivery out",
            options.delivery,
            target.client.display_name()
        )));
    }
    if options.mcp_trust && (!target.client.has_mcp_trust() || options.mcp.is_none()) {
        let spellings: Vec<&str> = Client::ALL
            .into_iter()
            .filter(|c| c.has_mcp_trust())
            .map(Client::as_str)
            .collect();
        return Err(AccError::usage(format!(
            "--mcp-trust marks the acc-mcp entry of {} trusted: it needs --client {}, and --mcp",
            Client::display_names(Client::has_mcp_trust),
            spellings.join(" or ")
        )));
    }
    if let Some(identity) = options.mcp {
        acc_core::ids::validate_portable_id("--mcp-name", options.mcp_name)?;
        if let McpIdentity::Participant(participant) = identity {
            acc_core::ids::validate_portable_id("--mcp participant", participant)?;
        }
        if !acc_mcp.is_file() {
            return Err(data_error(format!(
                "{} is missing; it must sit beside acc to be registered. Nothing was changed",
                acc_mcp.display()
            )));
        }
    }
    Ok(())
}

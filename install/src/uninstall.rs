//! Uninstalling: ACC's entries removed from each client file by their content, every later
//! edit kept, a file still byte for byte as ACC left it given back its recorded bytes; and the
//! stray hook groups doctor reports (ACC's by their command, with no record).

use super::*;

/// Undo an installation: remove exactly ACC's entries, found by their content, keeping every
/// later edit. A file still byte for byte what ACC wrote gets back what it was without them
/// (or goes, if ACC created it).
pub fn uninstall(target: &Target, dry_run: bool) -> AccResult<Plan> {
    let mut steps = Vec::new();
    if !dry_run && let Some(note) = roll_back(target)? {
        steps.push(note);
    }
    let record = match read_record(target)? {
        Some(record) if record.state == RecordState::Pending => record.replaces.map(|b| *b),
        other => other,
    };
    let Some(record) = record else {
        steps.push(format!(
            "nothing to undo: no installation recorded for {}",
            target.hooks_file.display()
        ));
        let strays = stray_hooks(target);
        if !strays.is_empty() {
            steps.push(format!(
                "{} has hooks that run acc ({}) that no installation record names; remove them by hand",
                target.hooks_file.display(),
                strays.join(", ")
            ));
        }
        return Ok(Plan {
            steps,
            changes: false,
        });
    };
    let mut actions: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    for file in &record.files {
        let Some(current) = read_text(&file.path)? else {
            steps.push(format!("{} is gone already", file.path.display()));
            continue;
        };
        if sha256(&current) == file.written_sha256 {
            let before = decode(&file.before);
            if file.existed || !holds_nothing(&file.format, &before) {
                steps.push(format!(
                    "restore {} to what it was without acc's entries",
                    file.path.display()
                ));
                actions.push((file.path.clone(), Some(before)));
            } else {
                steps.push(format!("remove {} (acc created it)", file.path.display()));
                actions.push((file.path.clone(), None));
            }
            continue;
        }
        let format = known_format(&file.format);
        let mut doc = Doc::parse(&file.path, format, &utf8(&file.path, &current)?)?;
        let before = Doc::before(&file.path, format, file)?;
        let mut kept = Vec::new();
        let mut removed = 0;
        for entry in &file.entries {
            if doc.remove(entry, &before) {
                removed += 1;
            } else if !matches!(entry, Entry::Hook { .. })
                || doc.occupant(entry, target.client).is_some()
            {
                kept.push(entry.describe());
            }
        }
        if removed > 0 {
            steps.push(format!(
                "remove acc's {removed} entries from {} (it changed since; your changes stay)",
                file.path.display()
            ));
            actions.push((file.path.clone(), Some(doc.text().into_bytes())));
        } else {
            steps.push(format!("{}: no acc entries left", file.path.display()));
        }
        for entry in kept {
            steps.push(format!(
                "keep {entry} in {}: it is not as acc wrote it, so it is yours now",
                file.path.display()
            ));
        }
    }
    let record_path = target.record_path()?;
    steps.push(format!(
        "forget the installation record {}",
        record_path.display()
    ));
    if !dry_run {
        for (path, bytes) in actions {
            match bytes {
                Some(bytes) => write_file(&path, &bytes)?,
                None => remove_client_file(&path)?,
            }
        }
        std::fs::remove_file(&record_path)?;
    }
    Ok(Plan {
        steps,
        changes: true,
    })
}

/// Whether a file's text without ACC's entries holds nothing of anyone's (blank, or an empty
/// JSON object): a file ACC created and that still holds nothing else is removed, not kept.
pub(super) fn holds_nothing(format: &str, bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return true;
    }
    // A file with comments holds the user's comments: it is kept.
    matches!(format, "json" | "jsonc")
        && serde_json::from_str::<Value>(&text)
            .is_ok_and(|v| v.as_object().is_some_and(Map::is_empty))
}

/// Hook groups in the target's hooks file that run acc but that no installation record names.
/// (For OpenCode: ACC's plugin file, known by its first line.)
pub fn stray_hooks(target: &Target) -> Vec<String> {
    if target.client == Client::OpenCode {
        let recorded = read_record(target).ok().flatten().is_some();
        let ours = std::fs::read_to_string(&target.hooks_file)
            .is_ok_and(|t| t.starts_with(opencode::FIRST_LINE));
        return if ours && !recorded {
            vec!["ACC's plugin".into()]
        } else {
            Vec::new()
        };
    }
    let recorded: Vec<Entry> = read_record(target)
        .ok()
        .flatten()
        .and_then(|r| r.file(&target.hooks_file).map(|f| f.entries.clone()))
        .unwrap_or_default();
    let mut strays = Vec::new();
    for (event, group) in crate::hook_groups::installed(target) {
        let ours = recorded.iter().any(
            |e| matches!(e, Entry::Hook { event: ev, group: g } if *ev == event && *g == group),
        );
        if !ours && looks_like_accs_hook(&group, target.client) {
            strays.push(format!("hooks.{event}"));
        }
    }
    strays
}

//! Reading a contracts folder: its contracts and captures, each checked (schema, name,
//! transcript, fingerprint) before it counts as evidence.

use super::*;

/// Everything in a contracts folder.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    /// Contracts by id, with their files.
    pub contracts: BTreeMap<String, (PathBuf, Contract)>,
    /// The captures that passed every check (schema, name, transcript, fingerprint), with
    /// their files; the others are named in `problems` and are no evidence.
    pub captures: Vec<(PathBuf, Capture)>,
    /// Problems found, one line each, naming the file.
    pub problems: Vec<String>,
}

/// Whether `version` is listed as known bad (an exact version or a range).
pub fn is_known_bad(known_bad: &[String], version: &semver::Version) -> bool {
    known_bad
        .iter()
        .any(|bad| match semver::Version::parse(bad) {
            Ok(exact) => &exact == version,
            Err(_) => semver::VersionReq::parse(bad).is_ok_and(|req| req.matches(version)),
        })
}

/// A capture file read and checked whole (schema, name, transcript): the capture, or every
/// problem found.
pub(super) fn load_capture(path: &Path) -> Result<Capture, Vec<String>> {
    let capture = read_capture(path).map_err(|e| vec![e.message])?;
    let mut problems = check_capture(&capture);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expected = format!(
        "{}.toml",
        capture_stem(&capture.version, &capture.platform, &capture.capability)
    );
    if name != expected {
        problems.push(format!(
            "a {} capture of {} on {} is named {expected}",
            capture.capability, capture.version, capture.platform
        ));
    }
    problems.extend(check_transcript(
        path.parent().unwrap_or(Path::new(".")),
        &capture,
    ));
    if problems.is_empty() {
        Ok(capture)
    } else {
        Err(problems
            .into_iter()
            .map(|p| format!("{}: {p}", path.display()))
            .collect())
    }
}

fn read_capture(path: &Path) -> AccResult<Capture> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        AccError::new(
            ErrorCode::InvalidData,
            format!("{}: cannot be read: {e}", path.display()),
        )
    })?;
    toml::from_str(&text).map_err(|e| {
        AccError::new(
            ErrorCode::InvalidData,
            format!("{}: {}", path.display(), one_line(&e.to_string())),
        )
    })
}

fn one_line(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Read and validate a whole contracts folder.
pub fn read_folder(dir: &Path) -> AccResult<Folder> {
    let mut folder = Folder::default();
    let entries = std::fs::read_dir(dir).map_err(|e| {
        AccError::new(
            ErrorCode::InvalidData,
            format!("contracts folder {}: {e}", dir.display()),
        )
    })?;
    let mut files = Vec::new();
    for client in entries.flatten().filter(|e| e.path().is_dir()) {
        for file in std::fs::read_dir(client.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if file.path().extension().is_some_and(|x| x == "toml") {
                files.push(file.path());
            }
        }
    }
    files.sort();
    for file in files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) => {
                folder
                    .problems
                    .push(format!("{}: cannot be read: {e}", file.display()));
                continue;
            }
        };
        if name.starts_with("contract-") {
            match toml::from_str::<Contract>(&text) {
                Ok(contract) => {
                    let base = file.parent().unwrap_or(dir).to_path_buf();
                    for problem in check_contract(&base, &contract) {
                        folder
                            .problems
                            .push(format!("{}: {problem}", file.display()));
                    }
                    if let Some((other, _)) = folder.contracts.get(&contract.contract_id) {
                        folder.problems.push(format!(
                            "{}: contract {} is also defined in {}",
                            file.display(),
                            contract.contract_id,
                            other.display()
                        ));
                    }
                    folder
                        .contracts
                        .insert(contract.contract_id.clone(), (file.clone(), contract));
                }
                Err(e) => folder.problems.push(format!(
                    "{}: {}",
                    file.display(),
                    one_line(&e.to_string())
                )),
            }
        } else {
            match load_capture(&file) {
                Ok(capture) => folder.captures.push((file.clone(), capture)),
                Err(problems) => folder.problems.extend(problems),
            }
        }
    }
    refuse_borrowed_fingerprints(&mut folder);
    Ok(folder)
}

/// A fingerprint is one executable: captures of different clients or versions recording the
/// same one cannot all be what they say (one was written from another). Each is refused.
fn refuse_borrowed_fingerprints(folder: &mut Folder) {
    let mut refused = Vec::new();
    let mut problems = Vec::new();
    for (file, capture) in &folder.captures {
        if capture.executable_sha256 == "unavailable" {
            continue;
        }
        if let Some((other, theirs)) = folder.captures.iter().find(|(_, c)| {
            c.executable_sha256
                .eq_ignore_ascii_case(&capture.executable_sha256)
                && (c.client != capture.client || c.version != capture.version)
        }) {
            problems.push(format!(
                "{}: provenance does not hold: executable {} is also recorded for {} {} in {}",
                file.display(),
                capture.executable_sha256,
                theirs.client,
                theirs.version,
                other.display()
            ));
            refused.push(file.clone());
        }
    }
    folder.problems.extend(problems);
    folder.captures.retain(|(file, _)| !refused.contains(file));
}

//! The per-user adapter folder (`<data base>/acc/adapters`) and its contracts folder: what
//! `acc adapters install` and `acc adapters remove` change.
//!
//! Owns: putting a checked adapter library (and its contract and captures) where the search
//! path finds it, under the name the naming rule wants, whole or not at all. Must not: install
//! a file that does not load, shadow or replace an adapter installed elsewhere, or remove one
//! it did not install.

use std::path::{Path, PathBuf};

use acc_core::error::{AccError, AccResult, ErrorCode};

use crate::contracts::read_folder;
use crate::plugins::{FILE_PREFIX, Plugins, check_file};

/// What an install put in place.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The adapter's id.
    pub adapter_id: String,
    /// The library as installed.
    pub file: PathBuf,
    /// The contract and capture files copied beside the per-user contracts.
    pub contracts: Vec<PathBuf>,
}

fn refused(what: impl std::fmt::Display) -> AccError {
    AccError::new(ErrorCode::InvalidData, what.to_string())
}

fn user_dir(name: &str) -> AccResult<PathBuf> {
    acc_clients::user_dir(name)
        .ok_or_else(|| AccError::usage("cannot find ACC's data home: set ACC_DATA_HOME or HOME"))
}

/// The file name the naming rule gives adapter `id`.
pub fn file_name(id: &str) -> String {
    format!(
        "{FILE_PREFIX}{}{}",
        id.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    )
}

/// Copy `from` to `to` whole: a temporary file beside it, its mode set, then renamed.
fn copy_whole(from: &Path, to: &Path, mode: u32) -> AccResult<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut temp = to.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(temp);
    let done = std::fs::copy(from, &temp)
        .and_then(|_| std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode)))
        .and_then(|()| std::fs::rename(&temp, to));
    done.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        AccError::new(
            ErrorCode::StorageUnavailable,
            format!("cannot write {}: {e}", to.display()),
        )
    })
}

/// The files of `client` in the contracts folder `dir` to copy, after checking that the folder
/// verifies and defines `contract_id`, and the capture driver that contract names.
fn contract_files(
    dir: &Path,
    client: &str,
    contract_id: &str,
) -> AccResult<(Vec<PathBuf>, Option<String>)> {
    let folder = read_folder(dir)?;
    // A contract whose minimum no capture backs yet is what an author installs before
    // capturing; anything else wrong is refused.
    let problems: Vec<&String> = folder
        .problems
        .iter()
        .filter(|p| !p.contains(crate::contracts::UNBACKED))
        .collect();
    if !problems.is_empty() {
        return Err(refused(format!(
            "the contracts in {} do not verify: {}",
            dir.display(),
            problems
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    let Some((_, contract)) = folder.contracts.get(contract_id) else {
        return Err(refused(format!(
            "{} defines no contract {contract_id}, which the adapter declares",
            dir.display()
        )));
    };
    let driver = contract.driver.clone();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(client))
        .map_err(|e| refused(format!("{}: {e}", dir.join(client).display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".toml") || n.ends_with(".transcript.jsonl"))
        })
        .collect();
    files.sort();
    Ok((files, driver))
}

/// Install the adapter library `source` into the per-user folder under its id's name, after
/// checking that it loads; with `contracts` (a contracts folder: `<client>/contract-*.toml` and
/// captures), its client's files are copied into the per-user contracts folder too, after
/// checking that they verify (a minimum no capture backs yet is allowed: the author captures
/// after installing), and the contract's capture driver if it sits beside `source`. `loaded` is what the search path loads now: an adapter of the same
/// id installed elsewhere is refused (it would come first), one in the per-user folder is
/// replaced.
pub fn install(source: &Path, contracts: Option<&Path>, loaded: &Plugins) -> AccResult<Installed> {
    let adapter = check_file(source)
        .map_err(|why| refused(format!("{} cannot be installed: {why}", source.display())))?;
    let dir = user_dir("adapters")?;
    let target = dir.join(file_name(&adapter.adapter_id));
    if let Some(existing) = loaded.get(&adapter.adapter_id)
        && existing
            .file
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok())
            != std::fs::canonicalize(&dir).ok()
    {
        return Err(refused(format!(
            "an adapter `{}` is already installed at {}, which the search path reaches first; remove it there, or give yours another id",
            adapter.adapter_id,
            existing.file.display()
        )));
    }
    let (copies, driver) = match contracts {
        Some(folder) => contract_files(
            folder,
            &adapter.contract.client,
            &adapter.contract.contract_id,
        )?,
        None => (Vec::new(), None),
    };
    // The contract's capture driver, when it sits beside the library, goes with it: the capture
    // looks for it beside the installed library.
    let driver = driver
        .filter(|name| Path::new(name).components().count() == 1)
        .and_then(|name| source.parent().map(|p| p.join(name)))
        .filter(|path| path.is_file());
    std::fs::create_dir_all(&dir).map_err(|e| refused(format!("{}: {e}", dir.display())))?;
    copy_whole(source, &target, 0o755)?;
    if let Some(driver) = &driver {
        let name = driver.file_name().map(PathBuf::from).unwrap_or_default();
        copy_whole(driver, &dir.join(name), 0o755)?;
    }
    let mut written = Vec::new();
    if !copies.is_empty() {
        let to = user_dir("contracts")?.join(&adapter.contract.client);
        std::fs::create_dir_all(&to).map_err(|e| refused(format!("{}: {e}", to.display())))?;
        for file in copies {
            let name = file.file_name().map(PathBuf::from).unwrap_or_default();
            copy_whole(&file, &to.join(&name), 0o644)?;
            written.push(to.join(name));
        }
    }
    Ok(Installed {
        adapter_id: adapter.adapter_id,
        file: target,
        contracts: written,
    })
}

/// Remove adapter `id` from the per-user folder (its contracts stay: they are evidence, and
/// harmless without the adapter). Returns the file removed. An adapter loaded from elsewhere is
/// refused: ACC did not put it there.
pub fn remove(id: &str, loaded: &Plugins) -> AccResult<PathBuf> {
    let dir = user_dir("adapters")?;
    let here = std::fs::canonicalize(&dir).ok();
    let file = match loaded.get(id) {
        Some(adapter)
            if adapter
                .file
                .parent()
                .and_then(|p| std::fs::canonicalize(p).ok())
                == here =>
        {
            adapter.file.clone()
        }
        Some(adapter) => {
            return Err(refused(format!(
                "adapter `{id}` is installed at {}, not in the per-user folder {}; remove it where it was installed",
                adapter.file.display(),
                dir.display()
            )));
        }
        // Not loaded (perhaps refused): the file the naming rule gives it, if it is there.
        None => dir.join(file_name(id)),
    };
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(AccError::new(
            ErrorCode::InvalidArguments,
            format!("no adapter `{id}` is installed in {}", dir.display()),
        )),
        Err(e) => Err(refused(format!("cannot remove {}: {e}", file.display()))),
    }
}

//! `acc contract verify`: every adapter's declared contracts held against the contracts
//! folders, and each client version's eligibility for live delivery.

use super::*;

/// One loaded adapter checked against the folder.
#[derive(Debug, Clone)]
pub struct AdapterCheck {
    /// Adapter id.
    pub adapter_id: String,
    /// The contract it declares.
    pub contract_id: String,
    /// The installed client's version, from the adapter's read-only probe.
    pub client_version: Option<String>,
    /// Eligibility of that version here (`Err` holds the reason code, or `not_live` for an
    /// adapter that pushes nothing live).
    pub eligibility: Result<(), String>,
}

/// The result of `acc contract verify`.
#[derive(Debug, Clone)]
pub struct VerifyReport {
    /// The first folder checked.
    pub dir: PathBuf,
    /// Every folder checked, in the search path's order.
    pub dirs: Vec<PathBuf>,
    /// Contract ids found.
    pub contracts: Vec<String>,
    /// Capture files found.
    pub captures: Vec<PathBuf>,
    /// Loaded adapters checked.
    pub adapters: Vec<AdapterCheck>,
    /// Every problem, one line each.
    pub problems: Vec<String>,
}

/// Check the folders (together, as the router reads them: a contract id found again later is
/// ignored), each loaded adapter's declaration against them, and eligibility of the clients
/// installed here. `dirs` must not be empty; each must be a folder.
pub fn verify(dirs: &[PathBuf], plugins: &crate::plugins::Plugins) -> AccResult<VerifyReport> {
    let Some(dir) = dirs.first() else {
        return Err(AccError::usage("no contracts folder to verify"));
    };
    let mut folder = Folder::default();
    for each in dirs {
        let read = read_folder(each)?;
        folder.problems.extend(read.problems);
        for (id, contract) in read.contracts {
            folder.contracts.entry(id).or_insert(contract);
        }
        folder.captures.extend(read.captures);
    }
    let mut problems = folder.problems.clone();
    let captures: Vec<Capture> = folder.captures.iter().map(|(_, c)| c.clone()).collect();
    let mut adapters = Vec::new();
    // The folders are checked for the adapters whose contracts they hold; an adapter whose
    // contract another folder of the search path defines is that folder's (the per-user folder
    // holds only third-party contracts). Read only when an adapter's contract is missing here.
    let mut elsewhere: Option<Evidence> = None;
    for adapter in &plugins.adapters {
        let declared = &adapter.contract;
        let Some((file, contract)) = folder.contracts.get(&declared.contract_id) else {
            if elsewhere
                .get_or_insert_with(|| Evidence::load(&search_path()))
                .contracts
                .contains_key(&declared.contract_id)
            {
                continue;
            }
            problems.push(format!(
                "adapter {} declares contract {}, which {} does not define",
                adapter.adapter_id,
                declared.contract_id,
                acc_clients::list_folders(dirs)
            ));
            continue;
        };
        if !agrees(&contract.declaration(), declared) {
            problems.push(format!(
                "adapter {} declares {} differently from {} (client, offer kind, live push, minimums and known-bad versions must match)",
                adapter.adapter_id,
                declared.contract_id,
                file.display()
            ));
        }
        if !declared.live_push {
            adapters.push(AdapterCheck {
                adapter_id: adapter.adapter_id.clone(),
                contract_id: declared.contract_id.clone(),
                client_version: None,
                eligibility: Err("not_live".into()),
            });
            continue;
        }
        let request =
            serde_json::to_string(&acc_adapter_api::wire::ProbeRequest { timeout_ms: 3000 })
                .map_err(|e| AccError::internal(e.to_string()))?;
        let probe = adapter
            .call(
                crate::plugins::Operation::Probe,
                request,
                crate::plugins::DEFAULT_DEADLINE,
            )
            .ok()
            .and_then(|answer| {
                serde_json::from_str::<acc_adapter_api::wire::ProbeAnswer>(answer.payload.as_str())
                    .ok()
            });
        let installed_sha = probe.as_ref().and_then(|p| p.executable_sha256.clone());
        let client_version = probe.and_then(|p| p.client_version);
        let here = acc_clients::platform();
        let mut eligibility = eligibility(contract, &captures, client_version.as_deref(), &here)
            .map_err(str::to_string);
        if eligibility.is_ok()
            && let Err(why) = fingerprint(
                &captures,
                contract,
                client_version.as_deref().unwrap_or_default(),
                &here,
                installed_sha.as_deref(),
            )
        {
            problems.push(format!("adapter {}: {why}", adapter.adapter_id));
            eligibility = Err("fingerprint_mismatch".into());
        }
        adapters.push(AdapterCheck {
            adapter_id: adapter.adapter_id.clone(),
            contract_id: declared.contract_id.clone(),
            client_version,
            eligibility,
        });
    }
    Ok(VerifyReport {
        dir: dir.clone(),
        dirs: dirs.to_vec(),
        contracts: folder.contracts.keys().cloned().collect(),
        captures: folder.captures.iter().map(|(p, _)| p.clone()).collect(),
        adapters,
        problems,
    })
}

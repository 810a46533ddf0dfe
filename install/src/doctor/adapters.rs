//! `acc doctor`'s adapter checks: the adapter libraries loaded and refused, the ones ACC needs
//! (`next-turn`, and each live adapter an installation's consent needs), and each live
//! adapter's contract against the evidence in the contracts folders. Read-only.

use super::{Check, Level, check};

/// The adapters loaded and refused, the ones ACC needs (`next-turn`, which every prompt hook
/// renders through, and each adapter an installation's live delivery needs), and each live
/// adapter's contract against the evidence.
pub(super) fn adapter_checks(needed: &[(&str, String)]) -> Vec<Check> {
    let mut checks = Vec::new();
    let configs = acc_delivery::plugins::configs_from_env().unwrap_or_default();
    let plugins = acc_delivery::plugins::Plugins::load(&configs);
    let searched = acc_clients::list_folders(&plugins.search_path);
    let next_turn = (
        "next-turn",
        "the prompt hooks need it to show messages to the model".to_string(),
    );
    for (adapter, for_what) in std::iter::once(&next_turn).chain(needed) {
        if plugins.get(adapter).is_some() {
            continue;
        }
        let refused = plugins.refused.iter().find(|r| {
            acc_delivery::plugins::short_name(&r.file)
                .is_some_and(|n| n.replace('_', "-") == *adapter)
        });
        checks.push(check(
            format!("adapter {adapter}"),
            Level::Error,
            match refused {
                Some(r) => format!(
                    "{} is refused ({}), and {for_what}",
                    r.file.display(),
                    r.reason
                ),
                None => format!("not installed (searched: {searched}), and {for_what}"),
            },
            Some(format!(
                "install ACC with scripts/install.sh, which puts the adapters in <prefix>/lib/acc/adapters; or place libacc_adapter_{}{} in one of the folders searched",
                adapter.replace('-', "_"),
                std::env::consts::DLL_SUFFIX
            )),
        ));
    }
    for adapter in &plugins.adapters {
        checks.push(check(
            format!("adapter {}", adapter.adapter_id),
            Level::Ok,
            format!("loaded from {}", adapter.file.display()),
            None,
        ));
    }
    for refused in &plugins.refused {
        checks.push(check(
            format!("adapter file {}", refused.file.display()),
            Level::Warn,
            refused.reason.clone(),
            Some("acc adapters".into()),
        ));
    }
    let dirs = acc_delivery::contracts::default_dirs();
    if dirs.is_empty() {
        checks.push(check(
            "contracts",
            Level::Warn,
            "no contracts folder found",
            Some("install ACC with scripts/install.sh (share/acc/contracts), or set ACC_CONTRACTS_DIR".into()),
        ));
        return checks;
    }
    match acc_delivery::contracts::verify(&dirs, &plugins) {
        Ok(report) if report.problems.is_empty() => {
            for a in report
                .adapters
                .iter()
                .filter(|a| a.eligibility.as_ref().err().is_none_or(|r| r != "not_live"))
            {
                let (level, detail) = match &a.eligibility {
                    Ok(()) => (
                        Level::Ok,
                        format!(
                            "client {} is eligible for live delivery",
                            a.client_version.as_deref().unwrap_or("?")
                        ),
                    ),
                    Err(reason) => (Level::Warn, format!("live delivery off: {reason}")),
                };
                checks.push(check(
                    format!("contract {}", a.contract_id),
                    level,
                    detail,
                    None,
                ));
            }
        }
        Ok(report) => checks.push(check(
            "contracts",
            Level::Error,
            report.problems.join("; "),
            Some("acc contract verify".into()),
        )),
        Err(e) => checks.push(check("contracts", Level::Error, e.message, None)),
    }
    checks
}

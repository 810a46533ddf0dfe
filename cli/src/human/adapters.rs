//! The human text of the adapters: the loaded and refused, `acc verify`, an installed one.

/// The loaded and refused adapters.
pub fn adapters(
    plugins: &acc_delivery::plugins::Plugins,
    evidence: &acc_delivery::contracts::Evidence,
) -> String {
    let mut out = String::new();
    if plugins.adapters.is_empty() {
        out.push_str("no adapters loaded\n");
    }
    for a in &plugins.adapters {
        out.push_str(&format!(
            "{} ({} transport, offers {}, api {}) from {}\n  contract {} for {}: minimum {}\n",
            a.adapter_id,
            a.transport,
            a.offer_kind.as_str(),
            a.api_version,
            a.file.display(),
            a.contract.contract_id,
            a.contract.client,
            if a.contract.minimums.is_empty() {
                "none (no live delivery)".to_string()
            } else {
                a.contract
                    .minimums
                    .iter()
                    .map(|m| format!("{} on {}", m.version, m.platform))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
        match evidence.declaration_check(&a.contract) {
            Ok(detail) => out.push_str(&format!("  evidence: {detail}\n")),
            Err(why) => out.push_str(&format!("  refused for live delivery: {why}\n")),
        }
    }
    for r in &plugins.refused {
        out.push_str(&format!("refused {}: {}\n", r.file.display(), r.reason));
    }
    out.push_str(&format!(
        "searched: {}\n",
        plugins
            .search_path
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out
}

/// An `acc contract verify` report.
pub fn verify(report: &acc_delivery::contracts::VerifyReport) -> String {
    let mut out = format!(
        "{}: {} contract(s), {} capture(s), valid\n",
        acc_clients::list_folders(&report.dirs),
        report.contracts.len(),
        report.captures.len()
    );
    for a in &report.adapters {
        if a.eligibility
            .as_ref()
            .err()
            .is_some_and(|r| r == "not_live")
        {
            out.push_str(&format!(
                "  {} ({}): renders next-turn context; live delivery does not apply\n",
                a.adapter_id, a.contract_id
            ));
            continue;
        }
        out.push_str(&format!(
            "  {} ({}): client {} {}\n",
            a.adapter_id,
            a.contract_id,
            a.client_version.as_deref().unwrap_or("not found"),
            match &a.eligibility {
                Ok(()) => "eligible".to_string(),
                Err(reason) if reason == "not_live" =>
                    "renders next-turn context; live delivery does not apply".to_string(),
                Err(reason) => format!("not eligible: {reason}"),
            }
        ));
    }
    out
}

/// `acc adapters install`.
pub fn adapter_installed(installed: &acc_delivery::user_adapters::Installed) -> String {
    let mut out = format!(
        "installed {}: {}\n",
        installed.adapter_id,
        installed.file.display()
    );
    for file in &installed.contracts {
        out.push_str(&format!("  contract file {}\n", file.display()));
    }
    out
}

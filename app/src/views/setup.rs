//! The setup views: adapters and their contracts, bindings, next-turn, the store's layout and
//! the workspace configuration.

use super::*;

/// `acc adapters install`.
pub fn adapter_installed(installed: &acc_delivery::user_adapters::Installed) -> Value {
    acc_core::wire::json(&wire::AdapterInstalled {
        adapter_id: installed.adapter_id.clone(),
        file: lossy(&installed.file),
        contracts: installed.contracts.iter().map(|p| lossy(p)).collect(),
    })
}

/// `acc adapters remove`.
pub fn adapter_removed(id: &str, file: &std::path::Path) -> Value {
    acc_core::wire::json(&wire::AdapterRemoved {
        adapter_id: id,
        file: lossy(file),
    })
}

/// The loaded and refused adapters.
pub fn adapters(
    plugins: &acc_delivery::plugins::Plugins,
    evidence: &acc_delivery::contracts::Evidence,
) -> Value {
    acc_core::wire::json(&wire::Adapters {
        search_path: plugins.search_path.iter().map(|p| lossy(p)).collect(),
        adapters: plugins
            .adapters
            .iter()
            .map(|a| wire::Adapter {
                adapter_id: &a.adapter_id,
                file: lossy(&a.file),
                transport: &a.transport,
                offer_kind: a.offer_kind.as_str(),
                api_version: &a.api_version,
                features: &a.features,
                contract: &a.contract,
                evidence: match evidence.declaration_check(&a.contract) {
                    Ok(detail) => wire::Evidence {
                        admissible: true,
                        detail,
                    },
                    Err(detail) => wire::Evidence {
                        admissible: false,
                        detail,
                    },
                },
            })
            .collect(),
        refused: plugins
            .refused
            .iter()
            .map(|r| wire::Refused {
                file: lossy(&r.file),
                reason: &r.reason,
            })
            .collect(),
    })
}

fn lossy(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A delivery binding, redacted: the endpoint never leaves the store.
pub fn binding(binding: &BindingRow) -> Value {
    acc_core::wire::json(&binding_wire(binding))
}

/// An `acc contract verify` report.
pub fn verify(report: &acc_delivery::contracts::VerifyReport) -> Value {
    acc_core::wire::json(&wire::Verify {
        dir: lossy(&report.dir),
        dirs: report.dirs.iter().map(|d| lossy(d)).collect(),
        valid: report.problems.is_empty(),
        contracts: &report.contracts,
        captures: report.captures.iter().map(|p| lossy(p)).collect(),
        adapters: report
            .adapters
            .iter()
            .map(|a| wire::AdapterEligibility {
                adapter_id: &a.adapter_id,
                contract_id: &a.contract_id,
                client_version: a.client_version.as_deref(),
                live: a.eligibility.as_ref().err().is_none_or(|r| r != "not_live"),
                eligible: a.eligibility.is_ok(),
                reason: a.eligibility.as_ref().err().map(String::as_str),
            })
            .collect(),
        problems: &report.problems,
    })
}

/// `acc bind`: `{binding}`.
pub fn bound(binding: &BindingRow) -> Value {
    acc_core::wire::json(&wire::Bound {
        binding: binding_wire(binding),
    })
}

/// `acc unbind`: `{removed}`.
pub fn unbound(removed: usize) -> Value {
    acc_core::wire::json(&wire::Unbound { removed })
}

/// `acc next-turn`.
pub fn next_turn(rendered: &acc_adapter_api::wire::RenderAnswer) -> Value {
    acc_core::wire::json(&wire::NextTurn {
        text: &rendered.text,
        carried: &rendered.carried,
        withheld: &rendered.withheld,
    })
}

/// `acc config check` on a valid file.
/// `acc store upgrade|downgrade`.
pub fn layout_change(plan: &acc_store::layout::Plan, dry_run: bool, changed: bool) -> Value {
    acc_core::wire::json(&wire::LayoutChange {
        store: lossy(&plan.store),
        from_revision: plan.from,
        to_revision: plan.to,
        steps: plan.steps.clone(),
        backup: plan.backup.as_deref().map(lossy),
        receipt_rows: plan.rows,
        estimate_ms: plan.estimate_ms,
        dry_run,
        changed,
    })
}

/// A store's layout: its revision, this build's, and the backups beside it.
pub fn store_layout(store: &acc_store::Store) -> wire::StoreLayout {
    let revision = store.layout().revision;
    wire::StoreLayout {
        revision,
        build_revision: acc_store::layout::LAYOUT_REVISION,
        pending_upgrade: revision < acc_store::layout::LAYOUT_REVISION,
        backups: store
            .path()
            .map(acc_store::layout::backups)
            .unwrap_or_default()
            .into_iter()
            .map(|(path, bytes)| wire::LayoutBackup {
                path: lossy(&path),
                bytes,
            })
            .collect(),
    }
}

pub fn config_valid(
    path: &std::path::Path,
    workspace_id: &str,
    config: &acc_core::workspace::Config,
) -> Value {
    acc_core::wire::json(&wire::ConfigValid {
        path: lossy(path),
        valid: true,
        workspace_id,
        display_name: &config.display_name,
        roots: &config.roots,
        policy: wire::Policy {
            claim_mode: config.claim_mode.as_str(),
            context_budget_bytes: u64::from(config.context_budget_bytes),
        },
        required_adapters: &config.required_adapters,
    })
}

/// `acc config init`: the file, whether it was written, and its content (as JSON).
pub fn config_write(path: &std::path::Path, written: Option<bool>, text: Option<&str>) -> Value {
    acc_core::wire::json(&wire::ConfigWrite {
        path: lossy(path),
        written,
        content: text.map(|t| serde_json::from_str(t).unwrap_or(Value::Null)),
    })
}

/// An MCP `acc_release` of one claim given as a scalar: `{released: id}`.
pub fn released_one(id: &str) -> Value {
    acc_core::wire::json(&wire::ReleasedOne { released: id })
}

/// A workspace's room (`acc room show`, `connect`, `disconnect`; `room` in `acc status`).
pub fn room(room: &wire::Room) -> Value {
    acc_core::wire::json(room)
}

/// `acc room push`.
pub fn room_pushed(pushed: &acc_store::Pushed, from: &str) -> Value {
    acc_core::wire::json(&wire::RoomPushed {
        room: pushed.room.clone(),
        from: from.to_string(),
        copied: pushed
            .rows
            .iter()
            .map(|(table, rows)| ((*table).to_string(), *rows))
            .collect(),
    })
}

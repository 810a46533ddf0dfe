//! The commands that set ACC up and check it, rather than act in the room: contracts,
//! doctor, install and uninstall, adapters, the store's layout, the workspace configuration,
//! and the manual pages.

use super::*;

/// `acc contract verify`.
pub(super) fn contract_verify(dir: Option<&std::path::Path>) -> AccResult<Output> {
    let dirs = match dir {
        Some(dir) => vec![dir.to_path_buf()],
        None => acc_delivery::contracts::default_dirs(),
    };
    if dirs.is_empty() {
        return Err(AccError::usage(
            "no contracts folder found: pass --dir or set ACC_CONTRACTS_DIR",
        ));
    }
    let configs = acc_delivery::plugins::configs_from_env().map_err(AccError::usage)?;
    let plugins = acc_delivery::plugins::Plugins::load(&configs);
    let report = acc_delivery::contracts::verify(&dirs, &plugins)?;
    let value = views::verify(&report);
    if report.problems.is_empty() {
        Ok(Output {
            human: human::verify(&report),
            value,
        })
    } else {
        Err(AccError::new(
            ErrorCode::InvalidData,
            format!(
                "{} problem(s) in {}: {}",
                report.problems.len(),
                acc_clients::list_folders(&report.dirs),
                report.problems.join("; ")
            ),
        )
        .with_details(&value))
    }
}

/// `acc doctor`.
pub(super) fn doctor_command(
    cli: &Cli,
    repair: bool,
    home: Option<&std::path::Path>,
) -> AccResult<Output> {
    let start = start_dir(cli)?;
    let checks = acc_install::doctor::run(&start, home, repair);
    let ok = checks
        .iter()
        .all(|c| c.level != acc_install::doctor::Level::Error);
    let human = checks
        .iter()
        .map(|c| {
            format!(
                "{:<5} {}: {}{}\n",
                c.level.as_str(),
                c.name,
                c.detail,
                c.fix
                    .as_ref()
                    .map(|f| format!("\n      fix: {f}"))
                    .unwrap_or_default()
            )
        })
        .collect::<String>();
    Ok(Output {
        human,
        value: acc_install::doctor::view(ok, &checks),
    })
}

/// `acc install` and `acc uninstall`.
pub(super) fn install_command(install: bool, args: &InstallArgs) -> AccResult<Output> {
    let client = acc_clients::Client::parse(&args.client).ok_or_else(|| {
        AccError::usage(format!(
            "--client must be {}, got `{}`",
            acc_clients::Client::spellings(),
            args.client
        ))
    })?;
    let target = acc_install::Target::new(client, args.home.as_deref())?;
    let plan = if install {
        let acc = std::env::current_exe()?;
        let options = acc_install::Options {
            delivery: &args.delivery,
            mcp: args.mcp.as_deref().map(|p| match p {
                "" => acc_install::McpIdentity::Adopt,
                named => acc_install::McpIdentity::Participant(named),
            }),
            mcp_name: &args.mcp_name,
            mcp_trust: args.mcp_trust,
        };
        acc_install::install(&target, &acc, options, args.dry_run)?
    } else {
        acc_install::uninstall(&target, args.dry_run)?
    };
    let verb = if args.dry_run { "would" } else { "did" };
    Ok(Output {
        human: format!(
            "{}{}",
            if args.dry_run {
                "plan (nothing changed):\n"
            } else {
                ""
            },
            plan.steps
                .iter()
                .map(|s| format!("  {s}\n"))
                .collect::<String>()
        ),
        value: acc_install::plan_view(&plan, client.as_str(), args.dry_run, verb),
    })
}

/// `acc adapters`.
pub(super) fn adapters_command(action: Option<&AdaptersCommand>) -> AccResult<Output> {
    let configs = acc_delivery::plugins::configs_from_env().map_err(AccError::usage)?;
    let plugins = acc_delivery::plugins::Plugins::load(&configs);
    match action {
        Some(AdaptersCommand::Install { file, contracts }) => {
            let installed =
                acc_delivery::user_adapters::install(file, contracts.as_deref(), &plugins)?;
            return Ok(Output {
                human: human::adapter_installed(&installed),
                value: views::adapter_installed(&installed),
            });
        }
        Some(AdaptersCommand::Remove { id }) => {
            let file = acc_delivery::user_adapters::remove(id, &plugins)?;
            return Ok(Output {
                human: format!("removed {id}: {}\n", file.display()),
                value: views::adapter_removed(id, &file),
            });
        }
        None => {}
    }
    let evidence = acc_delivery::contracts::Evidence::load(&acc_delivery::contracts::search_path());
    Ok(Output {
        human: human::adapters(&plugins, &evidence),
        value: views::adapters(&plugins, &evidence),
    })
}

pub(super) fn store_command(cli: &Cli, command: &StoreCommand) -> AccResult<Output> {
    let Some(mut store) = open_core(cli)?.into_store() else {
        return Err(AccError::new(
            ErrorCode::InvalidArguments,
            "this workspace has no store yet: there is nothing to upgrade or downgrade (the first write creates one at this build's layout)",
        ));
    };
    if let StoreCommand::Downgrade { to, .. } = command
        && !(0..=store.layout().revision).contains(to)
    {
        return Err(AccError::usage(format!(
            "--to {to}: the store is at layout revision {}, so a downgrade goes to a revision from 0 to {}",
            store.layout().revision,
            store.layout().revision
        )));
    }
    let (plan, dry_run, changed) = match command {
        StoreCommand::Upgrade { dry_run: true } => match store.upgrade_plan()? {
            Some(plan) => (plan, true, false),
            None => return Ok(layout_current(&store)),
        },
        StoreCommand::Upgrade { dry_run: false } => match store.upgrade()? {
            Some(plan) => (plan, false, true),
            None => return Ok(layout_current(&store)),
        },
        StoreCommand::Downgrade { to, dry_run: true } => (store.downgrade_plan(*to)?, true, false),
        StoreCommand::Downgrade { to, dry_run: false } => (store.downgrade(*to)?, false, true),
    };
    let mut human = format!(
        "{} {}: layout revision {} → {}\n",
        if dry_run { "would change" } else { "changed" },
        plan.store.display(),
        plan.from,
        plan.to
    );
    for step in &plan.steps {
        human.push_str(&format!("  {step}\n"));
    }
    if let Some(backup) = &plan.backup {
        human.push_str(&format!(
            "  backup first: {} (kept until you remove it)\n",
            backup.display()
        ));
    }
    if plan.rows > 0 || dry_run {
        human.push_str(&format!(
            "  {} receipts to index: about {} ms\n",
            plan.rows, plan.estimate_ms
        ));
    }
    Ok(Output {
        value: views::layout_change(&plan, dry_run, changed),
        human: human.trim_end().to_string(),
    })
}

/// `acc store upgrade` on a store already at this build's layout (or above it).
pub(super) fn layout_current(store: &acc_store::Store) -> Output {
    let plan = acc_store::layout::Plan {
        store: std::path::PathBuf::from(store.location()),
        from: store.layout().revision,
        to: store.layout().revision,
        steps: Vec::new(),
        backup: None,
        rows: 0,
        estimate_ms: 0,
    };
    Output {
        value: views::layout_change(&plan, false, false),
        human: format!(
            "{} is at layout revision {} (this build writes {}): nothing to do",
            store.location(),
            store.layout().revision,
            acc_store::layout::LAYOUT_REVISION
        ),
    }
}

pub(super) fn config(cli: &Cli, command: &ConfigCommand) -> AccResult<Output> {
    let dir = workspace::canonical_dir(&start_dir(cli)?, "directory")?;
    let path = dir.join(acc_core::workspace::CONFIG_FILE);
    match command {
        ConfigCommand::Validate => {
            let Some((id, config)) = workspace::read_config_at(&dir)? else {
                return Err(AccError::new(
                    ErrorCode::InvalidConfig,
                    format!(
                        "there is no {} in `{}` (acc config validate does not look upward)",
                        acc_core::workspace::CONFIG_FILE,
                        dir.display()
                    ),
                ));
            };
            Ok(Output {
                human: format!(
                    "{} is valid: workspace `{id}` ({})",
                    path.display(),
                    config.display_name
                ),
                value: views::config_valid(&path, &id, &config),
            })
        }
        ConfigCommand::Init {
            yes,
            force,
            claim_policy,
        } => config_init(cli, &dir, &path, (*yes, *force), claim_policy),
    }
}

pub(super) fn config_init(
    cli: &Cli,
    dir: &Path,
    path: &Path,
    (yes, force): (bool, bool),
    claim_policy: &str,
) -> AccResult<Output> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(AccError::new(
            ErrorCode::ConfigExists,
            format!(
                "{} already exists; acc config init never overwrites (edit it, then run acc config validate)",
                path.display()
            ),
        ));
    }
    let text = workspace::initial_config_text(dir, claim_policy);
    // Sessions attached to the room this directory belongs to today.
    let (derived_id, root, source, git) = workspace::derived_identity(dir);
    let current = acc_core::workspace::Workspace {
        id: derived_id,
        root,
        source,
        git_common_dir: git,
        config: workspace::parse_config(path, dir, &text)?.1,
    };
    let data_dir = workspace::data_dir_for(&current)?;
    let mut core = Core::new(current, data_dir, clock()?, acc_app::process::liveness())?;
    let attached = core
        .status(false)?
        .sessions
        .iter()
        .filter(|s| s.presence != acc_core::Presence::Offline)
        .count();
    if attached > 0 && !force {
        return Err(AccError::new(
            ErrorCode::SessionsAttached,
            format!(
                "{attached} session(s) are attached to this workspace; changing its configuration under them is refused (use --force to write anyway)"
            ),
        ));
    }
    let consent = if yes {
        true
    } else if std::io::stdin().is_terminal() && !cli.json {
        write_stdout(&format!("acc would write {}:\n{text}", path.display()));
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"write it? [y/N] ");
        let _ = out.flush();
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        matches!(answer.trim(), "y" | "Y" | "yes")
    } else {
        return Err(AccError::new(
            ErrorCode::ConsentRequired,
            format!(
                "acc would write {}:\n{text}run again with --yes to write it",
                path.display()
            ),
        )
        .with_details(&views::config_write(path, None, Some(&text))));
    };
    if !consent {
        return Ok(Output {
            value: views::config_write(path, Some(false), None),
            human: "nothing written".into(),
        });
    }
    write_new_file(dir, path, &text)?;
    Ok(Output {
        value: views::config_write(path, Some(true), Some(&text)),
        human: format!("wrote {}:\n{text}", path.display()),
    })
}

/// Write a new file atomically, never replacing an existing one.
pub(super) fn write_new_file(dir: &Path, path: &Path, text: &str) -> AccResult<()> {
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        acc_core::workspace::CONFIG_FILE,
        std::process::id()
    ));
    {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
    }
    let linked = std::fs::hard_link(&temp, path);
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(AccError::new(
            ErrorCode::ConfigExists,
            format!(
                "{} appeared while writing; acc config init never overwrites",
                path.display()
            ),
        )),
        Err(e) => Err(e.into()),
    }
}

/// The command line as people use it: the parser's definitions without the hidden commands
/// (`hook`, which only clients call). clap's completion generators list hidden subcommands, and
/// clap has no way to remove one, so the top level is rebuilt from its parts without them.
pub(super) fn public_command() -> clap::Command {
    use clap::CommandFactory;
    let full = Cli::command();
    let mut public = clap::Command::new("acc")
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true)
        .args(full.get_arguments().filter(|a| !a.is_hide_set()).cloned())
        .subcommands(full.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    if let Some(about) = full.get_about() {
        public = public.about(about.clone());
    }
    public
}

/// `acc man --out DIR`: every page rendered first, then each written whole (a temporary name,
/// then renamed), so a failure leaves no half-written page.
/// One manual page in roff.
pub(super) fn render_page(page: clap::Command) -> AccResult<Vec<u8>> {
    let mut bytes = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut bytes)
        .map_err(|e| AccError::internal(format!("rendering a manual page: {e}")))?;
    Ok(bytes)
}

/// The manual page of `acc` itself (`acc man` without `--out`).
pub(super) fn man_page() -> AccResult<Vec<u8>> {
    let mut command = public_command();
    command.build();
    render_page(command)
}

pub(super) fn man_pages(out: &Path) -> AccResult<Output> {
    let mut command = public_command();
    command.build();
    let render = render_page;
    let mut pages = vec![("acc.1".to_string(), render(command.clone())?)];
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("acc-{}", sub.get_name());
        pages.push((
            format!("{name}.1"),
            render(sub.clone().display_name(name.clone()).bin_name(name))?,
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| {
        AccError::new(
            ErrorCode::InvalidData,
            format!("cannot create {}: {e}", out.display()),
        )
    })?;
    let mut written = Vec::new();
    for (name, bytes) in &pages {
        let path = out.join(name);
        let temp = out.join(format!(".{name}.{}.tmp", std::process::id()));
        std::fs::write(&temp, bytes)
            .and_then(|()| std::fs::rename(&temp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&temp);
                AccError::new(
                    ErrorCode::InvalidData,
                    format!("cannot write {}: {e}", path.display()),
                )
            })?;
        written.push(path.to_string_lossy().into_owned());
    }
    Ok(Output {
        human: format!(
            "wrote {} manual pages into {}\n",
            written.len(),
            out.display()
        ),
        value: acc_core::wire::json(&acc_app::wire::Written { files: &written }),
    })
}

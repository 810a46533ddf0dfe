//! The `acc` command line, for the person at a shell and for agents that run commands: who is
//! here, what each is doing, who holds which files, and messages whose receipts say how far
//! delivery got. Argument definitions are in `args`; here, credential resolution, one function
//! per command, and output.
//!
//! Owns: the CLI contract of SUPPLEMENT.md section 6 (`--json` shapes, human text, exit codes).
//! Must not: decide protocol rules (it calls `core`) or touch the store directly.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Parser;
use serde_json::Value;

use acc_app::services::{App, Sent};
use acc_app::views;
use acc_app::workspace;
use acc_core::claims::{AcquireRequest, Authority, ReleaseSelector};
use acc_core::clock::Clock;
use acc_core::error::{AccError, AccResult, ErrorCode};
use acc_core::intent::IntentRequest;
use acc_core::messages::{Artifact, FinishRequest, ReplyRequest, SendRequest};
use acc_core::status;
use acc_core::{Caller, Core, SessionSpec};
use acc_store::{ClaimMode, Enforcement};

pub mod args;
mod human;
mod look;
mod watch;

use args::*;

/// The ids a status shows.
fn status_ids(report: &acc_core::status::StatusReport) -> Vec<&str> {
    let sessions = report
        .sessions
        .iter()
        .map(|s| s.session.session_id.as_str());
    let claims = report.claims.iter().map(|c| c.claim.claim_id.as_str());
    sessions
        .chain(claims)
        .chain(attention_ids(&report.attention))
        .collect()
}

/// The claim and message ids attention items name.
fn attention_ids(attention: &[acc_core::attention::Attention]) -> impl Iterator<Item = &str> {
    attention
        .iter()
        .flat_map(|a| [a.claim_id.as_deref(), a.message_id.as_deref()])
        .flatten()
}

/// The message ids a summary page (its JSON) shows.
fn page_ids(value: &Value) -> Vec<String> {
    value
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| item.get("messageId").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// What a command produced: JSON for `--json`, and the human rendering of the same value.
pub struct Output {
    /// The JSON value.
    pub value: Value,
    /// Human text.
    pub human: String,
}

fn write_stdout(text: &str) {
    let mut out = anstream::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

fn write_stderr(text: &str) {
    let mut err = anstream::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
}

/// Prints a refusal (JSON on stdout with `--json`, else text on stderr); its exit code.
fn refused(json: bool, error: &AccError) -> i32 {
    if json {
        write_stdout(&views::error(error).to_string());
    } else {
        write_stderr(&human::error(error));
    }
    error.code.exit_code()
}

/// The commands that own their output (a stream, a script, a hook's answer, the capture tool's
/// output): their exit code; `None` for every other command.
fn streamed(cli: &Cli) -> Option<i32> {
    if let Command::Sync(args) = &cli.command
        && args.follow
    {
        return Some(match follow(cli, args) {
            Ok(()) => 0,
            Err(error) => refused(cli.json, &error),
        });
    }
    if let Command::Watch = &cli.command {
        let result = if !cli.json && std::io::stdout().is_terminal() {
            watch::run(|| open_core(cli))
        } else {
            watch_plain(cli)
        };
        return Some(match result {
            Ok(()) => 0,
            Err(error) => refused(cli.json, &error),
        });
    }
    if let Command::Completions { shell } = &cli.command {
        // Generated whole first: clap_complete panics on a failed write, and a reader that
        // stops early (`| head -1`) is no error of acc's.
        let mut script = Vec::new();
        clap_complete::generate(*shell, &mut public_command(), "acc", &mut script);
        let _ = std::io::stdout().lock().write_all(&script);
        return Some(0);
    }
    if let Command::Man { out: None } = &cli.command {
        return Some(match man_page() {
            Ok(page) => {
                let _ = std::io::stdout().lock().write_all(&page);
                0
            }
            Err(error) => refused(cli.json, &error),
        });
    }
    if let Command::Hook { client, event } = &cli.command {
        // A hook owns its stdout and exit code, and always lets the client proceed.
        return Some(acc_hooks::run(
            client,
            event,
            Arc::new(acc_install::InstalledConsent),
        ));
    }
    if let Command::Contract(ContractCommand::Capture {
        client,
        out,
        driver,
        write_guard,
    }) = &cli.command
    {
        return Some(capture_tool(
            cli.json,
            client,
            out.as_deref(),
            driver.as_deref(),
            *write_guard,
        ));
    }
    None
}

/// Run the CLI with these arguments; returns the process exit code.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    // `acc hook CLIENT EVENT` runs on every turn of every hooked client: it skips building the
    // whole command line parser (its arguments are exactly these three words; anything else
    // goes through the parser, which reports it).
    if let [_, hook, client, event] = args.as_slice()
        && hook == "hook"
        && let (Some(client), Some(event)) = (client.to_str(), event.to_str())
    {
        return acc_hooks::run(client, event, Arc::new(acc_install::InstalledConsent));
    }
    // `acc adapter-host`: hidden; serves one adapter call for `acc-mcp` over its pipes.
    if let [_, host] = args.as_slice()
        && host == acc_delivery::plugins::isolation::SUBCOMMAND
    {
        return acc_delivery::plugins::isolation::serve();
    }
    let json_requested = args.iter().any(|a| a == "--json");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) => {
            use clap::error::ErrorKind;
            match error.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    write_stdout(&error.render().to_string());
                    return 0;
                }
                _ => {
                    let rendered = error.render().to_string();
                    if json_requested {
                        // The whole error, not its first line ("the following required
                        // arguments were not provided:" names them on the next lines).
                        let message = rendered
                            .lines()
                            .map(str::trim)
                            .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                            .filter(|l| !l.is_empty())
                            .collect::<Vec<_>>()
                            .join(" ")
                            .trim_start_matches("error: ")
                            .to_string();
                        let message = if message.is_empty() {
                            "invalid arguments".to_string()
                        } else {
                            message
                        };
                        write_stdout(&views::error(&AccError::usage(message)).to_string());
                    } else {
                        write_stderr(&rendered);
                    }
                    return 2;
                }
            }
        }
    };
    cli.color.choice().write_global();
    if let Some(code) = streamed(&cli) {
        return code;
    }
    let json_mode = cli.json;
    acc_store::layout::report_progress_to(write_stderr);
    let result = run(cli);
    // A store this command upgraded on its own is named on stderr (stdout keeps its shape).
    for plan in acc_store::layout::take_automatic_upgrades() {
        write_stderr(&format!(
            "acc: upgraded the store {} from layout revision {} to {}; its backup is {}",
            plan.store.display(),
            plan.from,
            plan.to,
            plan.backup
                .as_deref()
                .map_or_else(|| "none".into(), |b| b.display().to_string())
        ));
    }
    match result {
        Ok(output) => {
            if json_mode {
                write_stdout(&json_text(&output.value));
            } else {
                write_stdout(&output.human);
            }
            0
        }
        Err(error) => refused(json_mode, &error),
    }
}

/// A `--json` result: indented at a terminal, for a person; one compact line when piped.
fn json_text(value: &Value) -> String {
    if std::io::stdout().is_terminal() {
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    } else {
        value.to_string()
    }
}

/// `acc contract capture` runs `acc-capture`, which sits beside `acc`: the capture tool serves
/// a model API on loopback, and keeping it in its own binary keeps every listener out of `acc`
/// and `acc-mcp`. Its output and exit code are passed through.
fn capture_tool(
    json: bool,
    client: &str,
    out: Option<&std::path::Path>,
    driver: Option<&std::path::Path>,
    write_guard: bool,
) -> i32 {
    let tool = std::env::current_exe()
        .map(|exe| exe.with_file_name("acc-capture"))
        .ok()
        .filter(|tool| tool.is_file());
    let Some(tool) = tool else {
        let error = AccError::new(
            acc_core::ErrorCode::InvalidData,
            "acc-capture is missing beside acc; it is built and installed with acc (cargo build --workspace)",
        );
        return refused(json, &error);
    };
    let mut command = std::process::Command::new(tool);
    command.arg("--client").arg(client);
    if let Some(dir) = out {
        command.arg("--out").arg(dir);
    }
    if let Some(driver) = driver {
        command.arg("--driver").arg(driver);
    }
    if write_guard {
        command.arg("--write-guard");
    }
    if json {
        command.arg("--json");
    }
    match command.status() {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            write_stderr(&format!("acc: internal: cannot run acc-capture: {e}"));
            1
        }
    }
}

fn clock() -> AccResult<Arc<dyn Clock>> {
    Ok(Arc::new(acc_app::clock::system_from_env()?))
}

fn start_dir(cli: &Cli) -> AccResult<PathBuf> {
    workspace::start_dir(cli.workspace.as_deref(), cli.cwd.as_deref())
}

fn open_core(cli: &Cli) -> AccResult<Core> {
    if let Some(opener) = &cli.opener {
        return opener.open();
    }
    let start = start_dir(cli)?;
    let ws = workspace::discover(&start)?;
    let data_dir = workspace::data_dir_for(&ws)?;
    acc_app::guards::core(ws, data_dir, clock()?)
}

/// The application over the command's core, with the embedder's plugins when it has some.
fn open_app(cli: &Cli) -> AccResult<App> {
    let mut app = App::new(open_core(cli)?, Arc::new(acc_install::InstalledConsent));
    if let Some(opener) = &cli.opener {
        if let Some(plugins) = opener.plugins() {
            app.delivery.set_plugins(plugins);
        }
        app.delivery.evidence_dirs = opener.contracts();
        if opener.declared_admission() {
            app.delivery.admission = acc_delivery::router::Admission::Declared;
        }
    }
    Ok(app)
}

/// How this command's human output looks: the width it fits, now for relative times, and the
/// short forms of `ids`. Under `--json`, which shows none of it, nothing is read.
fn look<'a>(cli: &Cli, core: &mut Core, ids: impl IntoIterator<Item = &'a str>) -> look::Look {
    if cli.json {
        return look::Look::default();
    }
    let now = core.now();
    // Short ids are a convenience: a store that cannot be read for them leaves ids whole.
    let mut ids = core.short_ids(ids).unwrap_or_default();
    ids.extend(core.short_participants().unwrap_or_default());
    look::Look::new(look::output_width(), now, cli.absolute_times).with_ids(ids)
}

/// Owner credentials from flags, else the environment; both parts are required together.
fn caller(cli: &Cli) -> AccResult<Caller> {
    let session = cli
        .session
        .clone()
        .or_else(|| std::env::var("ACC_SESSION").ok().filter(|s| !s.is_empty()));
    let generation = cli.generation.clone().or_else(|| {
        std::env::var("ACC_GENERATION")
            .ok()
            .filter(|s| !s.is_empty())
    });
    match (session, generation) {
        (Some(session_id), Some(generation)) => Ok(Caller {
            session_id,
            generation,
        }),
        (None, None) => Err(AccError::new(
            ErrorCode::CallerIdentityUnresolved,
            "this command needs owner credentials: pass --session and --generation, or set ACC_SESSION and ACC_GENERATION (from `acc attach --participant NAME`)",
        )),
        (Some(_), None) => Err(AccError::new(
            ErrorCode::CallerIdentityUnresolved,
            "a session id was given without its generation: pass --generation or set ACC_GENERATION",
        )),
        (None, Some(_)) => Err(AccError::new(
            ErrorCode::CallerIdentityUnresolved,
            "a generation was given without its session id: pass --session or set ACC_SESSION",
        )),
    }
}

/// Run one parsed command in this process and return what it produced (its `--json` value
/// and its text), without printing. Hooks and `contract capture`, which own their output, are
/// not run here.
pub fn run(mut cli: Cli) -> AccResult<Output> {
    expand_ids(&mut cli)?;
    match &cli.command {
        Command::Status(args) => status_command(&cli, args),
        Command::Sync(args) => sync(&cli, args),
        Command::Work(args) => work_command(&cli, args),
        Command::Claim(args) => claim(&cli, args),
        Command::Release(args) => release(&cli, args),
        Command::Attach(args) => attach_command(&cli, args),
        Command::Detach(args) => detach_command(&cli, args),
        Command::Message(args) => message_command(&cli, args),
        Command::Request(args) => request_command(&cli, args),
        Command::Reply(args) => reply_command(&cli, args),
        Command::Finish(args) => finish_command(&cli, args),
        Command::Ack(args) => ack_command(&cli, args),
        Command::Inbox(args) => inbox(&cli, args),
        Command::Prune(args) => prune_command(&cli, args),
        Command::Config(command) => config(&cli, command),
        Command::Store(command) => store_command(&cli, command),
        Command::Bind(args) => bind_command(&cli, args),
        Command::Unbind(args) => unbind_command(&cli, args),
        Command::NextTurn(args) => next_turn_command(&cli, args),
        Command::Contract(ContractCommand::Capture { .. }) => Err(AccError::internal(
            "acc contract capture runs acc-capture; it is not handled here",
        )),
        Command::Contract(ContractCommand::Verify { dir }) => contract_verify(dir.as_deref()),
        Command::Hook { .. } => Err(AccError::internal("hooks are answered before dispatch")),
        Command::Completions { .. } => Err(AccError::internal(
            "completions are printed before dispatch",
        )),
        Command::Watch => Err(AccError::internal("watch streams before dispatch")),
        Command::Man { out: Some(out) } => man_pages(out),
        Command::Man { out: None } => Err(AccError::internal(
            "the manual page is printed before dispatch",
        )),
        Command::Doctor { repair, home } => doctor_command(&cli, *repair, home.as_deref()),
        Command::Install(args) => install_command(true, args),
        Command::Uninstall(args) => install_command(
            false,
            &InstallArgs {
                client: args.client.clone(),
                delivery: "off".into(),
                dry_run: args.dry_run,
                home: args.home.clone(),
                mcp: None,
                mcp_name: "acc".into(),
                mcp_trust: false,
            },
        ),
        Command::Adapters { action } => adapters_command(action.as_ref()),
    }
}

/// `acc contract verify`.
fn contract_verify(dir: Option<&std::path::Path>) -> AccResult<Output> {
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
fn doctor_command(cli: &Cli, repair: bool, home: Option<&std::path::Path>) -> AccResult<Output> {
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
fn install_command(install: bool, args: &InstallArgs) -> AccResult<Output> {
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
fn adapters_command(action: Option<&AdaptersCommand>) -> AccResult<Output> {
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

/// `acc status`.
fn status_command(cli: &Cli, args: &StatusArgs) -> AccResult<Output> {
    let mut core = open_core(cli)?;
    let report = if args.all {
        core.status(true)?
    } else {
        // The caller's own claims are among those a summary lists, when this shell has a
        // session.
        let mine = caller(cli).ok().map(|c| c.session_id);
        core.status_summary(mine.as_deref())?
    };
    let now = core.now();
    let look = look(cli, &mut core, status_ids(&report));
    let mut value = views::status(&report, now);
    let mut human = human::status(&report, &look);
    // The store's layout: its revision beside this build's, a pending upgrade, its backups.
    if let Some(store) = core.store_for_read() {
        let layout = views::store_layout(store);
        if layout.pending_upgrade {
            human.push_str(&format!(
                "\nstore: layout revision {} (this build writes {}): `acc store upgrade` upgrades it, or the next write when no other process has it open",
                layout.revision, layout.build_revision
            ));
        }
        if let Some(object) = value.as_object_mut() {
            object.insert("store".into(), acc_core::wire::json(&layout));
        }
    }
    Ok(Output { human, value })
}

/// `acc work`.
fn work_command(cli: &Cli, args: &WorkArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut core = open_core(cli)?;
    if args.clear {
        let had = core.clear_intent(&who)?;
        return Ok(Output {
            value: views::intent_result(None, Some(had)),
            human: if had {
                "intent cleared".into()
            } else {
                "no intent to clear".into()
            },
        });
    }
    let request = IntentRequest {
        summary: args.summary.clone().unwrap_or_default(),
        mode: args.mode.clone().unwrap_or_default(),
        state: args.state.clone(),
        resource_hints: args.hints.clone(),
    };
    let intent = core.set_intent(&who, &request)?;
    Ok(Output {
        human: format!(
            "intent set: {} [{}, {}]",
            intent.summary, intent.mode, intent.state
        ),
        value: views::intent_result(Some(&intent), None),
    })
}

/// Every message, claim and session id the command was given, by kind.
fn id_fields(command: &mut Command) -> Vec<(&'static str, &mut String)> {
    match command {
        Command::Inbox(args) => args.message.iter_mut().map(|m| ("message", m)).collect(),
        Command::Sync(args) => args.message.iter_mut().map(|m| ("message", m)).collect(),
        Command::Reply(args) => vec![("message", &mut args.message)],
        Command::Ack(args) => vec![("message", &mut args.message)],
        Command::Message(args) => args
            .supersedes
            .iter_mut()
            .chain(args.withdraws.iter_mut())
            .map(|m| ("message", m))
            .collect(),
        Command::Claim(args) => args.renew.iter_mut().map(|c| ("claim", c)).collect(),
        Command::Release(args) => args.claims.iter_mut().map(|c| ("claim", c)).collect(),
        Command::Attach(args) => args.resume.iter_mut().map(|s| ("session", s)).collect(),
        _ => Vec::new(),
    }
}

/// Ids given as a unique prefix (at least 6 characters after `message_`, `claim_`,
/// `session_`, which may be left out) become whole before the command runs; the store is read
/// only when one is not whole already.
fn expand_ids(cli: &mut Cli) -> AccResult<()> {
    let whole = |kind: &str, text: &str| {
        text.strip_prefix(kind)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|random| random.len() == acc_core::ids::ID_RANDOM_LEN)
    };
    let needed = id_fields(&mut cli.command)
        .iter()
        .any(|(kind, text)| !whole(kind, text));
    if !needed {
        return Ok(());
    }
    let mut core = open_core(cli)?;
    for (kind, text) in id_fields(&mut cli.command) {
        *text = core.expand_id(kind, text)?;
    }
    Ok(())
}

/// The command line as people use it: the parser's definitions without the hidden commands
/// (`hook`, which only clients call). clap's completion generators list hidden subcommands, and
/// clap has no way to remove one, so the top level is rebuilt from its parts without them.
fn public_command() -> clap::Command {
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
fn render_page(page: clap::Command) -> AccResult<Vec<u8>> {
    let mut bytes = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut bytes)
        .map_err(|e| AccError::internal(format!("rendering a manual page: {e}")))?;
    Ok(bytes)
}

/// The manual page of `acc` itself (`acc man` without `--out`).
fn man_page() -> AccResult<Vec<u8>> {
    let mut command = public_command();
    command.build();
    render_page(command)
}

fn man_pages(out: &Path) -> AccResult<Output> {
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

/// How often `acc sync --follow` looks for new events.
const FOLLOW_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// `acc sync --follow`: the event log as it grows, a line an event, until interrupted (or its
/// output is closed). It reads the event cursor: no daemon, no listener, nothing written.
fn follow(cli: &Cli, args: &SyncArgs) -> AccResult<()> {
    if args.scope != "delta" {
        return Err(AccError::usage(
            "--follow streams the event log: it takes --scope delta (the default)",
        ));
    }
    let limit = acc_core::status::event_limit(args.limit)?;
    let mut core = open_core(cli)?;
    let cursor = match &args.cursor {
        Some(text) => acc_core::events::parse_cursor(text)?,
        None => core.status(false)?.head_seq,
    };
    follow_events(cli, core, cursor, limit)
}

/// `acc watch` when its output is not a terminal (or with `--json`): the status as `acc status`
/// prints it, then the events after it as `acc sync --follow` does.
fn watch_plain(cli: &Cli) -> AccResult<()> {
    let mut core = open_core(cli)?;
    let report = core.status_summary(None)?;
    let now = core.now();
    let text = if cli.json {
        views::status(&report, now).to_string()
    } else {
        let look = look(cli, &mut core, status_ids(&report));
        human::status(&report, &look)
    };
    write_stdout(&text);
    let limit = acc_core::status::event_limit(None)?;
    follow_events(cli, core, report.head_seq, limit)
}

/// Prints each event after `cursor` as it is recorded, until the reader goes away.
fn follow_events(cli: &Cli, mut core: Core, mut cursor: i64, limit: i64) -> AccResult<()> {
    use std::io::Write;
    let mut out = std::io::stdout();
    loop {
        let (page, _) = core.sync_delta(cursor, limit)?;
        let look = look(cli, &mut core, event_ids(&page, &[]));
        for event in &page.events {
            let line = if cli.json {
                format!("{}\n", views::event(event))
            } else {
                human::event_line(event, &look)
            };
            if out
                .write_all(line.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                // The reader went away (a closed pipe): the stream is over.
                return Ok(());
            }
        }
        cursor = page.next_cursor;
        if !page.has_more {
            std::thread::sleep(FOLLOW_EVERY);
            // A store created after the follow began is opened on the next look.
            if core.store_for_read().is_none() {
                core = open_core(cli)?;
            }
        }
    }
}

/// `acc detach`: the caller's session closes (no handoff, unlike `finish`); its claims are
/// released first when asked, else they stay until their leases end.
fn detach_command(cli: &Cli, args: &DetachArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut core = open_core(cli)?;
    let released = if args.release_claims {
        core.release_claims(&who, &acc_core::claims::ReleaseSelector::All)?
    } else {
        Vec::new()
    };
    let kept = core.claims_held(&who)?.len();
    let participant = core
        .own_session(&who)?
        .map(|s| s.participant_id)
        .unwrap_or_default();
    core.end_presence(&who)?;
    let look = look(cli, &mut core, [who.session_id.as_str()]);
    Ok(Output {
        human: human::detached(&participant, &who.session_id, released.len(), kept, &look),
        value: acc_core::wire::json(&acc_app::wire::Detached {
            session_id: &who.session_id,
            closed: true,
            released_claims: &released,
            kept_claims: kept,
        }),
    })
}

/// `acc attach`.
fn attach_command(cli: &Cli, args: &AttachArgs) -> AccResult<Output> {
    let mut core = open_core(cli)?;
    // This shell already speaks for the participant: its own open session is kept (a second
    // `acc attach` would otherwise leave two live sessions of one participant).
    if args.resume.is_none()
        && let Ok(mine) = caller(cli)
        && let Some(session) = core.own_session(&mine)?
        && session.participant_id == args.participant
    {
        let kept = acc_core::OpenedSession {
            session,
            generation_token: mine.generation,
            resumed: true,
        };
        return Ok(Output {
            human: human::kept(&kept, &core.workspace.id),
            value: views::opened_session(&kept, &core.workspace.id),
        });
    }
    let start =
        std::fs::canonicalize(start_dir(cli)?).unwrap_or_else(|_| core.workspace.root.clone());
    let (checkout, branch) = workspace::checkout_and_branch(&start);
    let spec = SessionSpec {
        participant_id: args.participant.clone(),
        session_key: None,
        harness: "cli".into(),
        client_version: None,
        checkout,
        branch,
        pid: None,
        enforcement: acc_store::Enforcement::Advisory,
        lifecycle: acc_store::Lifecycle::Manual,
    };
    let opened = core.open_session(&spec, args.resume.as_deref())?;
    Ok(Output {
        human: human::attached(&opened, &core.workspace.id),
        value: views::opened_session(&opened, &core.workspace.id),
    })
}

/// `acc message`.
fn message_command(cli: &Cli, args: &MessageArgs) -> AccResult<Output> {
    let request = SendRequest {
        to: args.to.clone(),
        kind: args.kind.clone(),
        obligation: args.obligation.clone(),
        subject: args.subject.clone(),
        body: args.body.clone(),
        artifacts: parse_artifacts(&args.artifacts)?,
        supersedes: args.supersedes.clone(),
        withdraws: args.withdraws.clone(),
        client_message_id: args.client_message_id.clone(),
    };
    send(cli, |app, who| app.send_message(who, &request))
}

/// `acc request`.
fn request_command(cli: &Cli, args: &RequestArgs) -> AccResult<Output> {
    let request = SendRequest {
        to: vec![args.to.clone()],
        kind: Some("request".into()),
        subject: args.title.clone(),
        body: args.detail.clone().unwrap_or_default(),
        client_message_id: args.client_message_id.clone(),
        ..SendRequest::default()
    };
    send(cli, |app, who| app.send_message(who, &request))
}

/// `acc reply`.
fn reply_command(cli: &Cli, args: &ReplyArgs) -> AccResult<Output> {
    let request = ReplyRequest {
        message_id: args.message.clone(),
        body: args.body.clone(),
        subject: args.subject.clone(),
        artifacts: parse_artifacts(&args.artifacts)?,
        client_message_id: args.client_message_id.clone(),
    };
    send(cli, |app, who| app.reply(who, &request))
}

/// `acc finish`.
fn finish_command(cli: &Cli, args: &FinishArgs) -> AccResult<Output> {
    let request = FinishRequest {
        goal: args.goal.clone(),
        status: args.status.clone(),
        to: args.to.clone(),
        completed: args.completed.clone(),
        remaining: args.remaining.clone(),
        blockers: args.blockers.clone(),
        verification: args.verification.clone(),
        client_message_id: args.client_message_id.clone(),
    };
    send(cli, |app, who| app.finish(who, &request))
}

/// `acc ack`.
fn ack_command(cli: &Cli, args: &AckArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut core = open_core(cli)?;
    let acked = core.ack(&who, &args.message)?;
    Ok(Output {
        human: format!(
            "acknowledged {} (receipt {})",
            acked.message.message.message_id, acked.receipt.state
        ),
        value: views::acked(&acked.message.message.message_id, &acked.receipt),
    })
}

/// `acc prune`.
fn prune_command(cli: &Cli, args: &PruneArgs) -> AccResult<Output> {
    let before = args
        .before
        .as_deref()
        .map(acc_core::events::parse_cursor)
        .transpose()?;
    let who = if args.apply { Some(caller(cli)?) } else { None };
    let mut core = open_core(cli)?;
    let report = core.prune(who.as_ref(), before, args.apply)?;
    let look = look(
        cli,
        &mut core,
        report.message_ids.iter().map(String::as_str),
    );
    Ok(Output {
        human: human::prune(&report, &look),
        value: views::prune(&report),
    })
}

/// `acc bind`.
fn bind_command(cli: &Cli, args: &BindArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let endpoint: Value = serde_json::from_str(&args.endpoint)
        .map_err(|e| AccError::usage(format!("--endpoint is not json: {e}")))?;
    let mut app = open_app(cli)?;
    let binding = app.bind(&who, &args.adapter, &args.policy, &endpoint)?;
    Ok(Output {
        human: format!(
            "bound to {} (client {}, policy {}, lease until {})",
            binding.adapter_id,
            binding.client_version,
            binding.live_policy,
            acc_core::clock::format_timestamp(binding.lease_until)
        ),
        value: views::bound(&binding),
    })
}

/// `acc unbind`.
fn unbind_command(cli: &Cli, args: &UnbindArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut app = open_app(cli)?;
    let removed = app.unbind(&who, args.adapter.as_deref())?;
    Ok(Output {
        human: format!("removed {removed} binding(s)"),
        value: views::unbound(removed),
    })
}

/// `acc next-turn`.
fn next_turn_command(cli: &Cli, args: &NextTurnArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut app = open_app(cli)?;
    let rendered = app.next_turn(&who, &args.adapter)?;
    Ok(Output {
        human: rendered.text.clone(),
        value: views::next_turn(&rendered),
    })
}

fn parse_artifacts(raw: &[String]) -> AccResult<Vec<Artifact>> {
    Ok(raw
        .iter()
        .map(|text| match text.split_once('=') {
            Some((uri, description)) => Artifact {
                uri: uri.to_string(),
                description: Some(description.to_string()),
            },
            None => Artifact {
                uri: text.clone(),
                description: None,
            },
        })
        .collect())
}

fn send(cli: &Cli, op: impl FnOnce(&mut App, &Caller) -> AccResult<Sent>) -> AccResult<Output> {
    let who = caller(cli)?;
    let mut app = open_app(cli)?;
    let sent = op(&mut app, &who)?;
    let m = &sent.message.message;
    let look = look(
        cli,
        &mut app.core,
        [m.message_id.as_str(), m.thread_id.as_str()],
    );
    Ok(Output {
        human: human::sent(&sent, &look),
        value: views::sent(&sent, &app.core.workspace.id),
    })
}

fn inbox(cli: &Cli, args: &InboxArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    if let Some(id) = &args.message {
        if args.cursor.is_some() || args.limit.is_some() {
            return Err(AccError::usage(
                "an exact read (--message) takes no --cursor or --limit",
            ));
        }
        let mut core = open_core(cli)?;
        let item = core.read_message(&who, id)?;
        let look = look(cli, &mut core, message_ids(&item.message));
        return Ok(Output {
            human: human::message(&item.message, Some(&item.receipt), &look),
            value: Value::Array(vec![views::inbox_message(&item, &core.workspace.id)]),
        });
    }
    let mut core = open_core(cli)?;
    let page = core.inbox(&who, args.cursor.as_deref(), args.limit)?;
    let value = views::inbox_page(&page);
    let ids = page_ids(&value);
    let look = look(cli, &mut core, ids.iter().map(String::as_str));
    Ok(Output {
        human: human::summary_page(&value, &look, &std::collections::HashMap::new()),
        value,
    })
}

fn sync(cli: &Cli, args: &SyncArgs) -> AccResult<Output> {
    match args.scope.as_str() {
        "delta" | "full" => {}
        "history" => return history(cli, args),
        other => {
            return Err(AccError::usage(format!(
                "scope must be delta, full or history, got `{other}`"
            )));
        }
    }
    if args.kind.is_some() || args.message.is_some() {
        return Err(AccError::usage("--kind and --message need --scope history"));
    }
    if args.current {
        return Err(AccError::usage(
            "--current needs --scope history --kind decision",
        ));
    }
    let cursor = match &args.cursor {
        Some(text) => acc_core::events::parse_cursor(text)?,
        None => 0,
    };
    let limit = status::event_limit(args.limit)?;
    let mut core = open_core(cli)?;
    let (page, attention) = core.sync_delta(cursor, limit)?;
    let look = look(cli, &mut core, event_ids(&page, &attention));
    let mut human = human::sync(&page, &attention, &look);
    let value = if args.scope == "full" {
        let report = core.status(true)?;
        let messages = core.all_messages()?;
        let now = core.now();
        let look = self::look(cli, &mut core, status_ids(&report));
        human.push_str(&human::status(&report, &look));
        views::sync_full(
            &page,
            &attention,
            views::snapshot(&report, &messages, now, &core.workspace.id),
        )
    } else {
        views::sync_delta(&page, &attention)
    };
    Ok(Output { value, human })
}

/// The ids a message shows: its own, its thread's, what it answers, the decision it names.
fn message_ids(view: &acc_core::messages::MessageView) -> Vec<&str> {
    let m = &view.message;
    let mut ids = vec![m.message_id.as_str(), m.thread_id.as_str()];
    ids.extend(m.in_reply_to.as_deref());
    ids.extend(
        view.decision
            .as_ref()
            .and_then(|d| d.current_message_id.as_deref()),
    );
    ids
}

/// The ids a sync page shows: the messages its events name and its attention items'.
fn event_ids<'a>(
    page: &'a acc_core::status::EventPage,
    attention: &'a [acc_core::attention::Attention],
) -> Vec<&'a str> {
    let events = page
        .events
        .iter()
        .filter_map(|e| e.data.get("messageId").and_then(Value::as_str));
    events.chain(attention_ids(attention)).collect()
}

fn history(cli: &Cli, args: &SyncArgs) -> AccResult<Output> {
    if let Some(id) = &args.message {
        if args.cursor.is_some() || args.limit.is_some() || args.kind.is_some() || args.current {
            return Err(AccError::usage(
                "an exact history read (--message) takes no --cursor, --limit, --kind or --current",
            ));
        }
        let mut core = open_core(cli)?;
        let (view, receipts) = core.history_message(id)?;
        let look = look(cli, &mut core, message_ids(&view));
        return Ok(Output {
            human: human::history_message(&view, &receipts, &look),
            value: views::history_exact(&view, &receipts, &core.workspace.id),
        });
    }
    let mut core = open_core(cli)?;
    let page = core.history(
        args.kind.as_deref(),
        args.current,
        args.cursor.as_deref(),
        args.limit,
    )?;
    let value = views::history_page(&page);
    let ids = page_ids(&value);
    let look = look(cli, &mut core, ids.iter().map(String::as_str));
    // A person's history shows whom each message went to and each receipt (the summary JSON's
    // allowlist has no recipients); read only for text output.
    let mut recipients = std::collections::HashMap::new();
    if !cli.json {
        for id in ids.iter().filter(|id| id.starts_with("message_")) {
            let (view, receipts) = core.history_message(id)?;
            recipients.insert(id.clone(), human::recipients_line(&view, &receipts, &look));
        }
    }
    Ok(Output {
        human: human::summary_page(&value, &look, &recipients),
        value,
    })
}

fn claim(cli: &Cli, args: &ClaimArgs) -> AccResult<Output> {
    let who = caller(cli)?;
    if let Some(id) = &args.renew {
        let mut core = open_core(cli)?;
        let claim = core.renew_claim(&who, id, args.lease)?;
        let now = core.now();
        let look = look(cli, &mut core, [claim.claim_id.as_str()]);
        return Ok(Output {
            human: human::claims("renewed", std::slice::from_ref(&claim), &look),
            value: views::claims(
                std::slice::from_ref(&claim),
                now,
                core.workspace.config.claim_mode,
            ),
        });
    }
    let request = AcquireRequest {
        resources: args.resources.clone(),
        mode: acc_core::error::AccError::parse::<ClaimMode>(
            args.mode.as_deref().unwrap_or("exclusive"),
        )?,
        enforcement: args
            .enforcement
            .as_deref()
            .map(acc_core::error::AccError::parse::<Enforcement>)
            .transpose()?,
        reason: args.reason.clone(),
        lease_seconds: args.lease,
    };
    // Validate the whole request before the store is even opened.
    acc_core::claims::normalize_unique(&request.resources, "a claim")?;
    let mut core = open_core(cli)?;
    let claims = core.acquire_claims(&who, &request)?;
    let now = core.now();
    let look = look(cli, &mut core, claims.iter().map(|c| c.claim_id.as_str()));
    Ok(Output {
        human: human::claims("claimed", &claims, &look),
        value: views::claims(&claims, now, core.workspace.config.claim_mode),
    })
}

fn release(cli: &Cli, args: &ReleaseArgs) -> AccResult<Output> {
    let families = [
        !args.claims.is_empty(),
        !args.resources.is_empty(),
        args.all,
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if families != 1 {
        return Err(AccError::usage(
            "give exactly one selector family: --claim (repeatable), --resource (repeatable), or --all",
        ));
    }
    if let Some(authority) = &args.authority {
        let authority = Authority::parse(authority)?;
        if args.claims.len() != 1 {
            return Err(AccError::usage("a force release names exactly one --claim"));
        }
        let reason = args.reason.clone().unwrap_or_default();
        let actor = caller(cli).ok();
        let mut core = open_core(cli)?;
        let claim = core.force_release(&args.claims[0], authority, &reason, actor.as_ref())?;
        return Ok(Output {
            human: format!(
                "force-released {} ({}) held by {} [{}]: {}",
                claim.claim_id,
                claim.resource,
                claim.participant_id,
                authority.as_str(),
                reason
            ),
            value: views::released(&[claim.claim_id], Some(authority.as_str())),
        });
    }
    let who = caller(cli)?;
    let selector = if args.all {
        ReleaseSelector::All
    } else if !args.claims.is_empty() {
        ReleaseSelector::Ids(args.claims.clone())
    } else {
        ReleaseSelector::Resources(args.resources.clone())
    };
    let mut core = open_core(cli)?;
    let released = core.release_claims(&who, &selector)?;
    Ok(Output {
        human: if released.is_empty() {
            "released nothing: this session holds no claims".into()
        } else {
            format!("released {}", released.join(", "))
        },
        value: views::released(&released, None),
    })
}

fn store_command(cli: &Cli, command: &StoreCommand) -> AccResult<Output> {
    let mut core = open_core(cli)?;
    let Some(store) = core.store_for_read() else {
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
            None => return Ok(layout_current(store)),
        },
        StoreCommand::Upgrade { dry_run: false } => match store.upgrade()? {
            Some(plan) => (plan, false, true),
            None => return Ok(layout_current(store)),
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
fn layout_current(store: &acc_store::Store) -> Output {
    let plan = acc_store::layout::Plan {
        store: store.path().to_path_buf(),
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
            store.path().display(),
            store.layout().revision,
            acc_store::layout::LAYOUT_REVISION
        ),
    }
}

fn config(cli: &Cli, command: &ConfigCommand) -> AccResult<Output> {
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

fn config_init(
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
fn write_new_file(dir: &Path, path: &Path, text: &str) -> AccResult<()> {
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

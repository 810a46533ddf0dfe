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
mod commands;
mod human;
mod look;
mod room;
mod setup;
mod watch;

use args::*;
use commands::*;
use setup::*;

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
            plan.backup.as_deref().map_or_else(
                || "none (a room's steps only add, and keep older builds working)".into(),
                |b| b.display().to_string()
            )
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
        Command::Room(command) => room::room_command(&cli, command),
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
        Command::Clients => Ok(clients_command()),
    }
}

/// `acc clients`: every client's spelling, from the clients' one list.
fn clients_command() -> Output {
    let spellings: Vec<&str> = acc_clients::Client::ALL
        .into_iter()
        .map(acc_clients::Client::as_str)
        .collect();
    Output {
        human: spellings.iter().map(|s| format!("{s}\n")).collect(),
        value: Value::from(spellings),
    }
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

/// How often a follower looks again while the room is out of reach (or woken sooner when its
/// wake connects again).
const FOLLOW_RETRY: std::time::Duration = std::time::Duration::from_secs(1);
/// A follower woken by its store ([`acc_store::wake`]) still reads once this long after its
/// last read, in case a wake was lost: a safety net, minutes apart.
pub(crate) const SAFETY_REREAD: std::time::Duration = std::time::Duration::from_secs(300);
/// How often a follower looks for a store that does not exist yet.
const NO_STORE_YET: std::time::Duration = std::time::Duration::from_secs(1);

/// A follower's wake on `core`'s store (`None` while it has none), and what it says of it
/// once on stderr when its wake is not the store's own ([`acc_store::wake::How::note`]).
pub(crate) struct Follower {
    waker: Option<acc_store::wake::Waker>,
    said: Option<String>,
}

impl Follower {
    pub(crate) fn new(core: &Core) -> AccResult<Self> {
        let waker = core.store().map(acc_store::Store::waker).transpose()?;
        Ok(Self { waker, said: None })
    }

    /// The moves seen so far (take it before reading).
    pub(crate) fn mark(&self) -> u64 {
        self.waker.as_ref().map_or(0, acc_store::wake::Waker::mark)
    }

    /// Wait until the store moved after `mark`, at most `timeout` (with no store yet, a
    /// moment, then `core` is opened again by `open` when its store now exists). Whether it
    /// moved.
    pub(crate) fn wait(
        &mut self,
        core: &mut Core,
        open: &mut dyn FnMut() -> AccResult<Core>,
        mark: u64,
        timeout: std::time::Duration,
    ) -> AccResult<bool> {
        let Some(waker) = &self.waker else {
            std::thread::sleep(NO_STORE_YET.min(timeout));
            let opened = open()?;
            if opened.store().is_some() {
                *core = opened;
                *self = Self::new(core)?;
                return Ok(true);
            }
            return Ok(false);
        };
        let moved = waker.wait_past(mark, timeout);
        if let Some(note) = self.note() {
            eprintln!("acc: {note}");
        }
        Ok(moved)
    }

    /// What the wake says of itself when that changed since it was last asked, and is not
    /// all well ([`acc_store::wake::How::note`]).
    pub(crate) fn note(&mut self) -> Option<String> {
        let note = self.waker.as_ref()?.how().note();
        if note == self.said {
            return None;
        }
        self.said.clone_from(&note);
        note
    }
}

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

/// Prints each event after `cursor` as it is recorded, until the reader goes away. It sleeps
/// until its store moves (a room's notification, the SQLite file written), then reads from its
/// cursor: no polling.
fn follow_events(cli: &Cli, mut core: Core, mut cursor: i64, limit: i64) -> AccResult<()> {
    use std::io::Write;
    let mut out = std::io::stdout();
    let mut unreachable = false;
    let mut follower = Follower::new(&core)?;
    let mut open = || open_core(cli);
    loop {
        let mark = follower.mark();
        // A room out of reach (a dropped link, a restarted server) is said once on stderr and
        // looked at again, from the same cursor, until it is back: the stream misses nothing.
        let (page, _) = match core.sync_delta(cursor, limit) {
            Ok(page) => page,
            Err(e) if e.code == acc_core::error::ErrorCode::StorageUnavailable => {
                if !unreachable {
                    eprintln!("acc: {}; following again when it is back", e.message);
                    unreachable = true;
                }
                follower.wait(&mut core, &mut open, mark, FOLLOW_RETRY)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        if std::mem::take(&mut unreachable) {
            eprintln!("acc: the room is back; following from event {cursor}");
        }
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
            follower.wait(&mut core, &mut open, mark, SAFETY_REREAD)?;
        }
    }
}

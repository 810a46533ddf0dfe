//! The `acc` command line's definitions: every command, its arguments and their help, as clap
//! types. Shell completions and manual pages are generated from the same definitions.

use std::path::PathBuf;
use std::sync::Arc;

use acc_core::Core;
use acc_core::error::AccResult;

use clap::{Args, Parser, Subcommand};

/// ACC: coordination for several AI coding agents (and people) in one repository.
#[derive(Debug, Parser)]
#[command(
    name = "acc",
    version,
    about = "Coordinate AI coding agents and people in one repository: who is here, what each is doing, who holds which files, and messages whose receipts say how far delivery got",
    long_about = None,
    propagate_version = true
)]
pub struct Cli {
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true, help_heading = "Global options")]
    pub json: bool,
    /// Run as if started in PATH.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "PATH"
    )]
    pub cwd: Option<PathBuf>,
    /// Use the workspace at PATH instead of discovering one.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "PATH"
    )]
    pub workspace: Option<PathBuf>,
    /// Owner session id for mutations (or ACC_SESSION).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "SESSION_ID"
    )]
    pub session: Option<String>,
    /// Colour: auto (at a terminal, unless NO_COLOR is set; CLICOLOR_FORCE forces it), always
    /// or never.
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: ColorWhen,
    /// Show times as RFC 3339 timestamps instead of "3 min ago" (JSON always has them).
    #[arg(long, global = true, help_heading = "Global options")]
    pub absolute_times: bool,
    /// Owner generation token for mutations (or ACC_GENERATION).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "TOKEN"
    )]
    pub generation: Option<String>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
    /// Where the workspace's core comes from when an embedder provides it (the scenario tests:
    /// a temporary store and a fixed clock); `None` in the `acc` process, which discovers the
    /// workspace from its working directory.
    #[arg(skip)]
    pub opener: Option<Arc<dyn Opener>>,
}

/// Opens the core a command works on, instead of discovering the workspace.
pub trait Opener: std::fmt::Debug + Send + Sync {
    /// The core for this command.
    fn open(&self) -> AccResult<Core>;

    /// The adapter plugins delivery uses, instead of discovering them (`None`: discover).
    fn plugins(&self) -> Option<Arc<acc_delivery::plugins::Plugins>> {
        None
    }

    /// The contracts folders live delivery is admitted from (`None`: the search path).
    fn contracts(&self) -> Option<Vec<PathBuf>> {
        None
    }

    /// Admit live delivery from the adapters' own declarations (the capture tool's way).
    fn declared_admission(&self) -> bool {
        false
    }
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// At a terminal, by NO_COLOR and CLICOLOR_FORCE.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    pub(crate) fn choice(self) -> anstream::ColorChoice {
        match self {
            Self::Auto => anstream::ColorChoice::Auto,
            Self::Always => anstream::ColorChoice::Always,
            Self::Never => anstream::ColorChoice::Never,
        }
    }
}

/// Every `acc` command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show participants with presence, intents, claims, protection level and attention.
    Status(StatusArgs),
    /// Read events after a cursor (delta), or the whole workspace snapshot (full).
    Sync(SyncArgs),
    /// Watch the room live at a terminal: sessions, claims, latest messages, attention (q quits).
    /// Not at a terminal: the status, then a line per event until interrupted. Reads only.
    Watch,
    /// Declare (or clear) what this session is working on. Awareness only.
    Work(WorkArgs),
    /// Claim resources (atomic batch), or renew a claim by id.
    Claim(ClaimArgs),
    /// Release claims by id, by resource, or all of this session's.
    Release(ReleaseArgs),
    /// Open a manual session for a participant and print its credentials once (this shell's own
    /// open session of that participant is kept).
    Attach(AttachArgs),
    /// Close this shell's session without a handoff; its claims stay unless --release-claims.
    Detach(DetachArgs),
    /// Send a note, question, request or decision (none = the room).
    Message(MessageArgs),
    /// Ask a participant to do something; they answer with reply.
    Request(RequestArgs),
    /// List your unresolved messages (summaries), or read one exactly with --message.
    Inbox(InboxArgs),
    /// Answer a message in its thread; acknowledges it in the same step.
    Reply(ReplyArgs),
    /// Acknowledge a message that needs no reply.
    Ack(AckArgs),
    /// Hand off: record what was done and what remains, release claims, and leave.
    Finish(FinishArgs),
    /// Report (or with --apply remove) messages every recipient has acknowledged.
    Prune(PruneArgs),
    /// Create or check acc.workspace.json.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Upgrade the store's layout (indexes and bookkeeping) to this build's, after a backup;
    /// or take it back to an earlier layout.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Where this workspace's room lives: its SQLite store (the default) or a PostgreSQL
    /// database shared by the workspace's agents on several machines.
    #[command(subcommand)]
    Room(RoomCommand),
    /// List the adapter plugins that loaded, their contracts, and what was refused and why;
    /// install or remove an adapter in the per-user folder.
    Adapters {
        #[command(subcommand)]
        action: Option<AdaptersCommand>,
    },
    /// Bind this session to a live delivery adapter (after the adapter verifies the endpoint).
    Bind(BindArgs),
    /// Remove this session's delivery bindings (one adapter, or all).
    Unbind(UnbindArgs),
    /// Render this session's next-turn context through a body adapter and record what it carried.
    NextTurn(NextTurnArgs),
    /// Capture a client's delivery behaviour as evidence, or verify the contracts folder.
    #[command(subcommand)]
    Contract(ContractCommand),
    /// Install ACC's hooks into a client's configuration (every client ACC knows: see --client).
    Install(InstallArgs),
    /// Remove what acc install wrote, restoring the client's files.
    Uninstall(UninstallArgs),
    /// Check clients, installations, adapters, contracts and the store; each problem with its fix.
    Doctor {
        /// Reinstall hooks that went missing (keeping the recorded consent).
        #[arg(long)]
        repair: bool,
        /// The home directory whose client configuration to check (default $HOME).
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
    },
    /// Print a completion script for a shell (bash, zsh, fish, powershell, elvish).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page of acc, or write every page (acc.1 and acc-<command>.1) into a
    /// folder with --out.
    Man {
        /// The folder (created when missing), for example ~/.local/share/man/man1.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// The clients ACC knows, one spelling a line (what `acc install --client` takes): the list
    /// `scripts/install.sh --uninstall` asks the installed acc for.
    #[command(hide = true)]
    Clients,
    /// Called by client hooks: reads the client's hook JSON on stdin and answers in its shape.
    #[command(hide = true)]
    Hook {
        /// The client whose hook this is (one of `acc install --client`'s possible values).
        #[arg(value_parser = client_values())]
        client: String,
        /// SessionStart, UserPromptSubmit, PreToolUse, Stop or SessionEnd in the client's own
        /// spelling (and LiveDelivery, sent by ACC's own client plugin once it listens for wakes).
        event: String,
    },
}

/// `acc contract`.
/// `acc adapters install|remove`.
#[derive(Debug, Subcommand)]
pub enum AdaptersCommand {
    /// Check that an adapter library loads, then copy it into the per-user adapter folder under
    /// the name its id gives it (replacing an earlier install of that id there).
    Install {
        /// The adapter library (`.so`).
        file: PathBuf,
        /// A contracts folder (`<client>/contract-*.toml` and captures) whose files for the
        /// adapter's client are checked and copied into the per-user contracts folder.
        #[arg(long, value_name = "DIR")]
        contracts: Option<PathBuf>,
    },
    /// Remove an adapter from the per-user adapter folder (its contracts stay).
    Remove {
        /// The adapter id.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Record what the installed client really does, as a capture file.
    Capture {
        /// The client to capture: one ACC drives itself, or the client of an installed adapter
        /// whose contract names a capture driver (example).
        #[arg(long)]
        client: String,
        /// Where to write the capture and its transcript (default: print the capture only).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The capture driver to run instead of the one the adapter's contract names.
        #[arg(long, value_name = "PATH")]
        driver: Option<PathBuf>,
        /// Capture the write guard of acc's hooks (for any client acc install knows) instead of
        /// delivery: a write into another session's guarded claim must be stopped.
        #[arg(long)]
        write_guard: bool,
    },
    /// Check every capture and contract, each loaded adapter's declaration, and eligibility here.
    Verify {
        /// One contracts folder (default: every folder of the search path, as the router reads them).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// `acc bind`.
#[derive(Debug, Args)]
pub struct BindArgs {
    /// The adapter id (see acc adapters).
    #[arg(long)]
    pub adapter: String,
    /// Your live delivery consent: off (default), actionable or all.
    #[arg(long, default_value = "off")]
    pub policy: String,
    /// The endpoint facts the adapter verifies, as JSON (adapter-specific).
    #[arg(long, default_value = "{}")]
    pub endpoint: String,
}

/// `acc install` / `acc uninstall`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The client whose configuration to edit.
    #[arg(long, value_parser = client_values())]
    pub client: String,
    /// Your consent to live delivery: off (default), actionable or all.
    #[arg(long, default_value = "off", value_parser = ["off", "actionable", "all"])]
    pub delivery: String,
    /// Print the exact plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The home directory whose client configuration to edit (default $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Also register acc-mcp as MCP server `acc`. Without a participant it
    /// speaks for the hooked session of the client that starts it; with one, always for that
    /// participant.
    #[arg(long, value_name = "PARTICIPANT", num_args = 0..=1, default_missing_value = "")]
    pub mcp: Option<String>,
    /// The name of the MCP server `--mcp` registers (default acc).
    #[arg(long, value_name = "NAME", default_value = "acc")]
    pub mcp_name: String,
    /// Register acc-mcp as trusted, so the client offers its tools in the default approval mode
    /// and runs them without asking you (only for the clients named here).
    #[arg(long, help = mcp_trust_help())]
    pub mcp_trust: bool,
}

/// `acc uninstall`: only what removing needs.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// The client whose configuration to restore.
    #[arg(long, value_parser = client_values())]
    pub client: String,
    /// Print the exact plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The home directory whose client configuration to edit (default $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
}

/// `acc unbind`.
#[derive(Debug, Args)]
pub struct UnbindArgs {
    /// Only this adapter's binding.
    #[arg(long)]
    pub adapter: Option<String>,
}

/// `acc next-turn`.
#[derive(Debug, Args)]
pub struct NextTurnArgs {
    /// The rendering adapter (default next-turn).
    #[arg(long, default_value = "next-turn")]
    pub adapter: String,
}

/// `acc message`.
#[derive(Debug, Args)]
pub struct MessageArgs {
    /// Recipient participant, or a client name with one live session (repeatable; none = room).
    #[arg(long = "to", value_name = "PARTICIPANT")]
    pub to: Vec<String>,
    /// note (default), question, request or decision.
    #[arg(long)]
    pub kind: Option<String>,
    /// none, reply or acknowledge (default from the kind).
    #[arg(long)]
    pub obligation: Option<String>,
    /// One line, at most 500 characters.
    #[arg(long)]
    pub subject: String,
    /// At most 4,000 characters.
    #[arg(long)]
    pub body: String,
    /// A decision this one replaces (repeatable).
    #[arg(long = "supersedes", value_name = "MESSAGE_ID")]
    pub supersedes: Vec<String>,
    /// A decision this one withdraws (repeatable).
    #[arg(long = "withdraws", value_name = "MESSAGE_ID")]
    pub withdraws: Vec<String>,
    /// An artifact: RESOURCE or RESOURCE=DESCRIPTION (repeatable).
    #[arg(long = "artifact", value_name = "URI[=DESCRIPTION]")]
    pub artifacts: Vec<String>,
    /// Idempotency key; a retry with the same key and content returns the original.
    #[arg(long)]
    pub client_message_id: Option<String>,
}

/// `acc request`.
#[derive(Debug, Args)]
pub struct RequestArgs {
    /// Recipient participant (or a client name with one live session).
    #[arg(long)]
    pub to: String,
    /// What is asked, one line.
    #[arg(long)]
    pub title: String,
    /// Details (the body).
    #[arg(long)]
    pub detail: Option<String>,
    /// Idempotency key.
    #[arg(long)]
    pub client_message_id: Option<String>,
}

/// `acc inbox`.
#[derive(Debug, Args)]
pub struct InboxArgs {
    /// Read this message exactly (marks it retrieved).
    #[arg(long, value_name = "MESSAGE_ID")]
    pub message: Option<String>,
    /// Continue after this message id (nextCursor of the previous page).
    #[arg(long, value_name = "MESSAGE_ID")]
    pub cursor: Option<String>,
    /// Items per page, 1..500 (default 20; pages stop at 12,000 bytes).
    #[arg(long)]
    pub limit: Option<i64>,
    /// Wait up to SECONDS (1..3600) for an unresolved message: answer as soon as there is one,
    /// or with an empty page at the deadline. Woken by the store, never polling.
    #[arg(long, value_name = "SECONDS")]
    pub wait: Option<i64>,
}

/// `acc reply`.
#[derive(Debug, Args)]
pub struct ReplyArgs {
    /// The message answered.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub message: String,
    /// The answer.
    #[arg(long)]
    pub body: String,
    /// Subject (default `Re: <original subject>`).
    #[arg(long)]
    pub subject: Option<String>,
    /// An artifact: RESOURCE or RESOURCE=DESCRIPTION (repeatable).
    #[arg(long = "artifact", value_name = "URI[=DESCRIPTION]")]
    pub artifacts: Vec<String>,
    /// Idempotency key; distinct replies need distinct keys.
    #[arg(long)]
    pub client_message_id: Option<String>,
}

/// `acc ack`.
#[derive(Debug, Args)]
pub struct AckArgs {
    /// The message acknowledged.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub message: String,
}

/// `acc finish`.
#[derive(Debug, Args)]
pub struct FinishArgs {
    /// The goal this session worked on.
    #[arg(long)]
    pub goal: String,
    /// complete, partial or blocked (default: blocked with blockers, partial with remaining
    /// items, else complete).
    #[arg(long)]
    pub status: Option<String>,
    /// Addressee (must acknowledge); none leaves a room handoff.
    #[arg(long)]
    pub to: Option<String>,
    /// Something done (repeatable).
    #[arg(long = "completed")]
    pub completed: Vec<String>,
    /// Something left (repeatable).
    #[arg(long = "remaining")]
    pub remaining: Vec<String>,
    /// Something blocking (repeatable).
    #[arg(long = "blocker")]
    pub blockers: Vec<String>,
    /// How the work was verified (repeatable).
    #[arg(long = "verification")]
    pub verification: Vec<String>,
    /// Idempotency key.
    #[arg(long)]
    pub client_message_id: Option<String>,
}

/// `acc prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Remove the reported messages (needs owner credentials).
    #[arg(long)]
    pub apply: bool,
    /// Only messages recorded before this 16-digit event cursor.
    #[arg(long, value_name = "CURSOR")]
    pub before: Option<String>,
}

/// `acc status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Everything: every claim (by default, above 20 claims, only those that matter beside
    /// counts per holder) and closed sessions.
    #[arg(long)]
    pub all: bool,
}

/// `acc sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Continue after this 16-digit event cursor.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Page size (events: 1..500, default 100).
    #[arg(long)]
    pub limit: Option<i64>,
    /// `delta` (default), `full`, or `history`.
    #[arg(long, default_value = "delta")]
    pub scope: String,
    /// History only: filter by message kind.
    #[arg(long)]
    pub kind: Option<String>,
    /// History only: one exact message.
    #[arg(long)]
    pub message: Option<String>,
    /// Decision history only: list current heads.
    #[arg(long)]
    pub current: bool,
    /// Keep printing events as they happen (from --cursor, else from now) until interrupted;
    /// with --json one event a line.
    #[arg(long, conflicts_with_all = ["kind", "message", "current"])]
    pub follow: bool,
}

/// `acc work`.
#[derive(Debug, Args)]
pub struct WorkArgs {
    /// One-line summary (at most 280 characters).
    #[arg(long, required_unless_present = "clear", conflicts_with = "clear")]
    pub summary: Option<String>,
    /// observe|explore|edit|review|coordinate|wait.
    #[arg(long, required_unless_present = "clear", conflicts_with = "clear")]
    pub mode: Option<String>,
    /// active|blocked|waiting|done (default active).
    #[arg(long, conflicts_with = "clear")]
    pub state: Option<String>,
    /// A resource this work will touch (repeatable).
    #[arg(long = "hint", value_name = "RESOURCE", conflicts_with = "clear")]
    pub hints: Vec<String>,
    /// Clear this session's intent.
    #[arg(long)]
    pub clear: bool,
}

/// `acc claim`.
#[derive(Debug, Args)]
pub struct ClaimArgs {
    /// Resource URI to claim (repeatable; one atomic batch).
    #[arg(
        long = "resource",
        value_name = "URI",
        required_unless_present = "renew",
        conflicts_with = "renew"
    )]
    pub resources: Vec<String>,
    /// shared or exclusive (default exclusive).
    #[arg(long, conflicts_with = "renew")]
    pub mode: Option<String>,
    /// advisory or guarded (default: guarded for an exclusive claim when the workspace's claim
    /// policy is guarded, else advisory).
    #[arg(long, conflicts_with = "renew")]
    pub enforcement: Option<String>,
    /// Why (at most 500 characters).
    #[arg(long, conflicts_with = "renew")]
    pub reason: Option<String>,
    /// Lease in seconds (default 1800).
    #[arg(long, value_name = "SECONDS")]
    pub lease: Option<i64>,
    /// Renew this claim by id instead.
    #[arg(long, value_name = "CLAIM_ID")]
    pub renew: Option<String>,
}

/// `acc release`.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// Claim id (repeatable).
    #[arg(long = "claim", value_name = "CLAIM_ID")]
    pub claims: Vec<String>,
    /// Resource URI (repeatable).
    #[arg(long = "resource", value_name = "URI")]
    pub resources: Vec<String>,
    /// Every claim of this session.
    #[arg(long)]
    pub all: bool,
    /// Force release another session's claim: human or policy.
    #[arg(long, requires = "reason")]
    pub authority: Option<String>,
    /// Why (required with --authority).
    #[arg(long, requires = "authority")]
    pub reason: Option<String>,
}

/// `acc detach`.
#[derive(Debug, Args)]
pub struct DetachArgs {
    /// Release the session's claims too (by default they stay until their leases end).
    #[arg(long)]
    pub release_claims: bool,
}

/// `acc attach`.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The participant (portable id) this session speaks for.
    #[arg(long)]
    pub participant: String,
    /// Reopen this existing session of the participant with a new generation.
    #[arg(long, value_name = "SESSION_ID")]
    pub resume: Option<String>,
}

/// `acc store`.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Bring the store to this build's layout revision: a backup beside it first, then every
    /// step in one transaction. The first write of any command does it too when no other
    /// process has the store open.
    Upgrade {
        /// Name the store, the revisions, each step, the backup and the time it should take;
        /// change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Take the store back to an earlier layout revision (index-only steps are reversed; any
    /// other is refused, naming the backup to restore).
    Downgrade {
        /// The layout revision to go back to.
        #[arg(long)]
        to: i64,
        /// Say what would be done; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `acc room`.
#[derive(Debug, Subcommand)]
pub enum RoomCommand {
    /// Record, for you on this machine, that this workspace's room is the PostgreSQL database
    /// at URL (postgres://user@host[:port]/db, no password: it comes from PGPASSWORD or
    /// ~/.pgpass). The room is reached and its schema made before anything is recorded.
    Connect {
        /// The database's URL.
        url: String,
        /// The room of every workspace of this data home that has none of its own (a
        /// container's, a CI runner's), not this workspace's alone.
        #[arg(long)]
        every_workspace: bool,
    },
    /// Where the room lives; for PostgreSQL, the server's version and one round trip.
    Show,
    /// Go back to the SQLite store on this machine (the room's database is left as it is).
    Disconnect {
        /// Forget the data home's room for every workspace (`--every-workspace` of connect).
        #[arg(long)]
        every_workspace: bool,
    },
    /// Copy this machine's SQLite store into the connected room, which must hold no records
    /// yet, in one transaction; the SQLite store is left as it was.
    Push,
}

/// `acc config`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Show the acc.workspace.json that would be written here, and write it with consent.
    Init {
        /// Write without asking.
        #[arg(long)]
        yes: bool,
        /// Write even while sessions are attached.
        #[arg(long)]
        force: bool,
        /// The room's claim policy: advisory (claims inform) or guarded (exclusive claims are
        /// guarded, and ACC's hooks deny the other agents' writes into them).
        #[arg(long, default_value = "advisory", value_parser = ["advisory", "guarded"])]
        claim_policy: String,
    },
    /// Check acc.workspace.json in this directory (reads only).
    Validate,
}

/// The values `--client` takes (and shells complete): every client ACC hooks.
/// `--mcp-trust`'s help, naming the clients whose MCP entries have a trust setting.
fn mcp_trust_help() -> String {
    format!(
        "{} only: register acc-mcp with `\"trust\": true`, so the client offers its tools in the default approval mode and runs them without asking you",
        acc_clients::Client::display_names(acc_clients::Client::has_mcp_trust)
    )
}

fn client_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(acc_clients::Client::ALL.map(|c| c.as_str()))
}

//! The one capture script: every client, ACC's own or an adapter author's, is driven through
//! the same branches in the same order, with ACC's real router around it, and every step is
//! written to the transcript.
//!
//! A [`Client`] runs the real client: it starts it, opens a session for a participant, makes
//! it busy and lets the turn end, looks for a message at it, and stops it. Around it the script
//! sends with the real router (one CLI participant, `alice`, writes to the client's participant,
//! `bob`) and records what the router reported and what the client showed:
//!
//! 1. idle: a question to the idle client;
//! 2. busy: a question while a turn runs, looked for after the turn ended;
//! 3. duplicate: the first question offered again through the adapter directly;
//! 4. reply: `bob` asks, `alice` answers, and the answer reaches `bob`'s client;
//! 5. fallback: with the client stopped, a question waits durably.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use acc_adapter_api::wire::OfferRequest;
use serde_json::Value;

use crate::model::ModelServer;
use crate::record::{Finished, PEER_BODY, Recorder, Run, question};
use crate::{attach, failed, probed};
use acc_app::services::{App, Sent};
use acc_app::workspace;
use acc_core::clock::SystemClock;
use acc_core::error::AccResult;
use acc_core::messages::{ReplyRequest, SendRequest};
use acc_core::{Caller, Core};
use acc_delivery::plugins::{DEFAULT_DEADLINE, Operation, Plugins, search_path};
use acc_delivery::router::Outcome;

/// The capture's own folders: a project (the workspace), ACC's data home and room for the
/// client. All removed afterwards.
#[derive(Debug)]
pub struct Scratch {
    /// The root, removed at the end.
    pub root: PathBuf,
    /// The workspace the participants work in.
    pub project: PathBuf,
    /// ACC's data home (`ACC_DATA_HOME`) for the store.
    pub data: PathBuf,
    /// Room for the client's own files, with its temporary folder ([`ScratchPaths::tmp`]).
    pub client: PathBuf,
}

impl Scratch {
    /// New folders under the temporary directory, named for `what` (under `/tmp` when the
    /// temporary directory is too long for the sockets clients open in them: see
    /// [`scratch_base`]).
    pub fn new(what: &str) -> AccResult<Self> {
        let name = format!(
            "acc-capture-{what}-{}-{}",
            std::process::id(),
            acc_core::clock::Clock::now_ms(&SystemClock::default())
        );
        let root = scratch_base(&name).join(name);
        let scratch = Self {
            project: root.join("project"),
            data: root.join("data"),
            client: root.join("client"),
            root,
        };
        for dir in [&scratch.project, &scratch.data, &scratch.client.join("tmp")] {
            std::fs::create_dir_all(dir).map_err(|e| failed("temporary folders", e))?;
        }
        Ok(scratch)
    }
}

/// The deepest socket a client opens under a scratch: Codex's control socket in its home
/// (Claude Code's, Qwen Code's and OpenCode's, in the scratch's temporary folder, are shorter).
const SOCKET_TAIL: &str = "/client/codex-home/app-server-control/app-server-control.sock";
/// The longest path a Unix socket can have on Linux (`sun_path` holds 108 bytes with its NUL).
const SOCKET_PATH_MAX: usize = 107;

/// Where a scratch named `name` goes: the temporary directory, or `/tmp` when the clients'
/// sockets under it would be longer than a socket path can be and under `/tmp` they would not
/// (a client then fails to listen, and the capture with it, with a message about a path limit
/// that names no folder of the user's).
fn scratch_base(name: &str) -> PathBuf {
    let fits =
        |base: &Path| base.join(name).as_os_str().len() + SOCKET_TAIL.len() <= SOCKET_PATH_MAX;
    let temp = std::env::temp_dir();
    let short = PathBuf::from("/tmp");
    if fits(&temp) || !fits(&short) {
        return temp;
    }
    eprintln!(
        "acc contract capture: the temporary folder `{}` is too long for the sockets the client opens under the capture's folders (at most {SOCKET_PATH_MAX} bytes); the capture's folders go under /tmp instead",
        temp.display()
    );
    short
}

/// The folders of a [`Scratch`], for a client to keep (removing them is the scratch's).
#[derive(Debug, Clone)]
pub struct ScratchPaths {
    /// The workspace.
    pub project: PathBuf,
    /// ACC's data home.
    pub data: PathBuf,
    /// Room for the client.
    pub client: PathBuf,
}

impl ScratchPaths {
    /// The client's temporary folder (`TMPDIR`; made with the scratch): a socket a client
    /// opens there goes with the scratch, even when the client is killed rather than ended.
    pub fn tmp(&self) -> PathBuf {
        self.client.join("tmp")
    }
}

impl Scratch {
    /// Its folders.
    pub fn clone_paths(&self) -> ScratchPaths {
        ScratchPaths {
            project: self.project.clone(),
            data: self.data.clone(),
            client: self.client.clone(),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A started client.
#[derive(Debug, Clone)]
pub struct Started {
    /// The executable that really runs (fingerprinted).
    pub executable: PathBuf,
    /// How it was launched.
    pub launch_mode: String,
    /// What was found wrong with its surface (each fails the capture).
    pub notes: Vec<String>,
}

/// A participant's session in the client.
#[derive(Debug, Clone)]
pub enum Session {
    /// The client is ready at this endpoint; the capture attaches the participant and binds it.
    Bind(Value),
    /// The client's own ACC hooks opened and bound the session; these are its credentials.
    Hooked(Caller),
    /// The client's own ACC hooks opened the session (these credentials), and the capture binds
    /// it to this endpoint (the hooks admit only a version a capture already backs).
    HookedAt(Caller, Value),
}

/// What the client showed of one message.
#[derive(Debug, Clone, Default)]
pub struct Look {
    /// How many times the client holds or ran it.
    pub seen: u32,
    /// Whether it was taken only after the running turn ended, when known.
    pub after_turn_end: Option<bool>,
    /// The client's own records that show it.
    pub frames: Vec<Value>,
}

/// A client the script drives.
pub trait Client {
    /// Who drives it, for the transcript (`acc-capture`, or the driver's file name).
    fn driver(&self) -> String;
    /// Start the client (the workspace is `scratch.project`, ACC's data `scratch.data`).
    fn start(&mut self, scratch: &Scratch) -> AccResult<Started>;
    /// Open `participant`'s session.
    fn session(&mut self, participant: &str) -> AccResult<Session>;
    /// What is wrong with the surface the adapter relies on, once a session runs (each fails
    /// the capture).
    fn surface(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Start a turn that keeps the client busy; return once it runs.
    fn busy(&mut self, participant: &str) -> AccResult<()>;
    /// Return once the running turn has ended.
    fn end_turn(&mut self, participant: &str) -> AccResult<()>;
    /// Look for `message_id`, waiting up to `wait` for `expect` copies (0: look once).
    fn look(
        &mut self,
        participant: &str,
        message_id: &str,
        expect: u32,
        wait: Duration,
    ) -> AccResult<Look>;
    /// Stop `participant`'s client: its session is gone afterwards.
    fn stop(&mut self, participant: &str) -> AccResult<()>;
    /// Stop everything (also on drop).
    fn finish(&mut self);
}

/// How long the script waits for a message to show at the client.
const SHOW: Duration = Duration::from_secs(30);
/// How long it waits for a second copy that must not come.
const SECOND_COPY: Duration = Duration::from_secs(8);

/// The app over the scratch workspace and data home, with `plugins`, consenting and admitting
/// as a capture must.
pub fn open(scratch: &Scratch, plugins: &Arc<Plugins>) -> AccResult<App> {
    let ws = workspace::discover(&scratch.project)?;
    // The capture consents itself (below): no installation's records are read.
    let mut app = App::new(
        Core::new(
            ws,
            scratch.data.join("acc"),
            Arc::new(SystemClock::default()),
            acc_app::process::liveness(),
        )?,
        Arc::new(acc_delivery::NoRecords),
    );
    app.delivery.set_plugins(plugins.clone());
    // The capture is the consenting user of its throwaway clients.
    app.delivery.consent_override = Some(acc_store::LivePolicy::All);
    // The capture produces the evidence: it cannot wait for it.
    app.delivery.admission = acc_delivery::router::Admission::Declared;
    Ok(app)
}

/// How many copies to wait for after a send the router reported as `sent`.
fn expected(sent: &Sent) -> u32 {
    u32::from(
        sent.delivery
            .first()
            .is_some_and(|d| matches!(d.outcome, Outcome::Offered | Outcome::Woken)),
    )
}

/// The script's state: the app, the client, the transcript.
struct Capture<'a> {
    app: App,
    client: &'a mut dyn Client,
    record: Recorder,
    adapter_id: &'a str,
}

impl Capture<'_> {
    fn look(&mut self, branch: &str, sent: &Sent, expect: u32, wait: Duration) -> AccResult<()> {
        let id = sent.message.message.message_id.clone();
        let started = std::time::Instant::now();
        let look = self.client.look("bob", &id, expect, wait)?;
        // Progress on stderr: where a slow capture spends its time.
        eprintln!(
            "capture: {branch}: the client showed {id} {} time(s) after {:?} (expected {expect})",
            look.seen,
            started.elapsed()
        );
        self.record.client(
            branch,
            &id,
            "bob",
            look.seen,
            look.after_turn_end,
            look.frames,
        );
        Ok(())
    }

    fn send(&mut self, branch: &str, from: &Caller) -> AccResult<Sent> {
        let sent = self.app.send_message(from, &question("bob"))?;
        eprintln!(
            "capture: {branch}: sent {}: {:?}",
            sent.message.message.message_id,
            sent.delivery
                .first()
                .map(|d| (d.outcome.as_str(), d.error_code.map(|c| c.as_str())))
        );
        self.record.router(branch, &sent);
        Ok(sent)
    }

    /// The first message offered again, exactly as the router offered it.
    fn offer_again(
        &mut self,
        sent: &Sent,
        adapter: &acc_delivery::plugins::LoadedAdapter,
    ) -> AccResult<()> {
        let id = sent.message.message.message_id.clone();
        let report = self.app.core.status(false)?;
        let binding = report
            .sessions
            .iter()
            .filter(|s| s.session.participant_id == "bob")
            .find_map(|s| {
                s.bindings
                    .iter()
                    .find(|b| b.adapter_id == self.adapter_id)
                    .map(|b| (s.session.session_id.clone(), b.clone()))
            });
        let Some((session_id, binding)) = binding else {
            self.record.note(
                "duplicate",
                "bob's binding was gone before the second offer",
            );
            return Ok(());
        };
        let request = OfferRequest {
            message: acc_delivery::router::envelope(&sent.message, &self.app.core.workspace.id),
            recipient_participant_id: "bob".into(),
            target_session_id: session_id,
            target_generation: binding.generation,
            endpoint_ref: binding.endpoint_ref.clone(),
            client_version: binding.client_version.clone(),
            timeout_ms: Some(u64::try_from(DEFAULT_DEADLINE.as_millis()).unwrap_or(u64::MAX)),
        };
        let answer = adapter
            .call(
                Operation::Offer,
                serde_json::to_string(&request).unwrap_or_default(),
                DEFAULT_DEADLINE,
            )
            .map_err(|f| f.code)
            .and_then(|a| {
                serde_json::from_str::<acc_adapter_api::wire::OfferAnswer>(a.payload.as_str())
                    .map_err(|_| "invalid_answer".to_string())
            })
            .and_then(|a| {
                if a.accepted {
                    Ok(true)
                } else {
                    Err(a.code.unwrap_or_else(|| "refused".into()))
                }
            });
        self.record.offer("duplicate", &id, answer);
        Ok(())
    }
}

/// Capture `client` through the adapter `adapter_id`: every branch, in order.
pub fn run(client: &mut dyn Client, adapter_id: &str, scratch: &Scratch) -> AccResult<Finished> {
    let plugins = Arc::new(Plugins::load_from(search_path(), &BTreeMap::new()));
    let (adapter, probe, version) = probed(
        &plugins,
        adapter_id,
        Duration::from_secs(10),
        Duration::from_secs(15),
    )?;
    let started = client.start(scratch)?;
    let mut record = Recorder::default();
    for note in &started.notes {
        record.note("surface", note.clone());
    }
    let executable_sha256 = fingerprint(&started.executable)?;
    if let Some(probed) = probe
        .executable_sha256
        .as_deref()
        .filter(|p| !p.eq_ignore_ascii_case(&executable_sha256))
    {
        record.note(
            "surface",
            format!(
                "the adapter's probe fingerprints {probed}, but the client that ran ({}) is {executable_sha256}",
                started.executable.display()
            ),
        );
    }
    let session = client.session("bob")?;
    for note in client.surface() {
        record.note("surface", note);
    }
    let mut app = open(scratch, &plugins)?;
    let alice = attach(&mut app.core, "alice")?;
    let bob = match session {
        Session::Bind(endpoint) => {
            let bob = attach(&mut app.core, "bob")?;
            app.bind(&bob, adapter_id, "all", &endpoint)?;
            bob
        }
        Session::Hooked(caller) => caller,
        Session::HookedAt(caller, endpoint) => {
            app.bind(&caller, adapter_id, "all", &endpoint)?;
            caller
        }
    };
    let run = Run {
        client: adapter.contract.client.clone(),
        version,
        launch_mode: started.launch_mode,
        protocol_contract: probe.protocol_contract.unwrap_or_default(),
        executable_sha256,
        driver: client.driver(),
        capability: "livePush".into(),
    };
    let mut capture = Capture {
        app,
        client,
        record,
        adapter_id,
    };
    branches(&mut capture, &alice, &bob, &adapter)?;
    capture.client.finish();
    capture.record.finish(run)
}

fn branches(
    c: &mut Capture<'_>,
    alice: &Caller,
    bob: &Caller,
    adapter: &acc_delivery::plugins::LoadedAdapter,
) -> AccResult<()> {
    // idle
    let first = c.send("idle", alice)?;
    c.look("idle", &first, expected(&first), SHOW)?;
    // busy: sent while a turn runs; looked for once the turn ended.
    c.client.busy("bob")?;
    let busy = c.send("busy", alice)?;
    c.client.end_turn("bob")?;
    c.look("busy", &busy, expected(&busy), SHOW)?;
    // duplicate: the first message again; a second copy would show within the wait.
    c.offer_again(&first, adapter)?;
    c.look("duplicate", &first, 2, SECOND_COPY)?;
    // reply: bob asks, alice answers, the answer reaches bob's client.
    let asked = c.app.send_message(
        bob,
        &SendRequest {
            to: vec!["alice".into()],
            kind: Some("question".into()),
            subject: "capture".into(),
            body: PEER_BODY.into(),
            ..SendRequest::default()
        },
    )?;
    let answer = c.app.reply(
        alice,
        &ReplyRequest {
            message_id: asked.message.message.message_id.clone(),
            body: PEER_BODY.into(),
            ..ReplyRequest::default()
        },
    )?;
    c.record.router("reply", &answer);
    c.look("reply", &answer, expected(&answer), SHOW)?;
    // fallback: the client is gone.
    c.client.stop("bob")?;
    c.send("fallback", alice)?;
    Ok(())
}

/// How long a held turn keeps a client busy.
pub const HELD_TURN: Duration = Duration::from_secs(4);
/// How long a step waits for a client to act.
const CLIENT_WAIT: Duration = Duration::from_secs(60);

/// Start a turn the model holds for [`HELD_TURN`]: the model is told to hold requests with
/// `needle`, `start` makes `client` send one, and once it reaches the model the request's
/// number is returned (for [`held_turn_answered`]).
pub fn start_held_turn(
    model: &ModelServer,
    needle: &str,
    client: &str,
    start: impl FnOnce() -> AccResult<()>,
) -> AccResult<u64> {
    model.hold(needle, HELD_TURN);
    start()?;
    model
        .wait_for_request(needle, CLIENT_WAIT)
        .map(|running| running.seq)
        .ok_or_else(|| failed(client, "the busy turn never reached the model"))
}

/// Return once the model has answered request `seq` (the held turn's).
pub fn held_turn_answered(model: &ModelServer, seq: u64, client: &str) -> AccResult<()> {
    model
        .wait_answered(seq, HELD_TURN + CLIENT_WAIT)
        .map(drop)
        .ok_or_else(|| failed(client, "the busy turn was never answered"))
}

fn fingerprint(executable: &Path) -> AccResult<String> {
    acc_clients::file_sha256(executable).ok_or_else(|| {
        failed(
            "fingerprint",
            format!("cannot read the client executable {}", executable.display()),
        )
    })
}

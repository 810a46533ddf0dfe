//! Delivery: bindings, the recipient's live policy, the router, and the next-turn path.
//!
//! Owns: what becomes of each recipient of a committed message (SUPPLEMENT.md section 7), the
//! ephemeral delivery bindings, and next-turn context with the one repeat of a live offer.
//! Must not: call an adapter inside a store transaction (every transport call happens between
//! transactions), copy a body into an event, or advance a receipt backward.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use acc_adapter_api::wire::{
    Envelope, HandshakeAnswer, HandshakeRequest, OfferRequest, RenderAnswer, RenderMessage,
    RenderRequest, Repeat,
};
use acc_adapter_api::{OfferKind, OfferStatus};
use serde_json::Value;

use acc_clients::Client;
use acc_core::Core;
use acc_core::clock::{Millis, format_timestamp};
use acc_core::error::{AccError, AccResult, ErrorCode};
use acc_core::identity::{Caller, Liveness, Presence, check_caller, presence, runs_here};
use acc_core::messages::{DecisionStatus, MessageView};
use acc_core::offers::OfferAttempt;
use acc_store::{
    BindingRow, LivePolicy, MessageKind, MessageRow, Reader, ReceiptRow, ReceiptState, SessionRow,
};

use crate::codes::DeliveryCode;
use crate::plugins::{
    DEFAULT_DEADLINE, LoadedAdapter, OFFER_DEADLINE, Operation, PendingCall, Plugins,
};

/// The transport of a durable-only route.
pub const DURABLE: &str = "durable";
/// The next-turn transport name.
pub const NEXT_TURN: &str = "next-turn";
/// How many unresolved messages, newest first, next-turn considers per turn: more than any
/// budget up to 64,000 bytes can carry whole, so a long backlog costs no more than this.
pub const NEXT_TURN_WINDOW: i64 = 100;
/// A live offer is shown once more by next-turn after this long without retrieval.
pub const REPEAT_AFTER_MS: Millis = 15 * 60_000;
/// How long a watcher waits for a late offer's answer.
pub const LATE_ANSWER_WAIT: Duration = Duration::from_secs(60);

/// One recipient's delivery outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryOutcome {
    /// Recipient participant.
    pub recipient_participant_id: String,
    /// How far delivery got.
    pub outcome: Outcome,
    /// `durable`, `next-turn`, or an adapter's transport.
    pub transport: String,
    /// Why the route stopped short, when it failed or was unavailable.
    pub error_code: Option<DeliveryCode>,
    /// The client holds a wake for its user's approval.
    pub pending_approval: bool,
}

/// How far a send's delivery got for one recipient: its receipt's state, or `woken` (a wake
/// reached the client and changed no receipt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Stored, not yet carried.
    Queued,
    /// Offered through a transport.
    Offered,
    /// A wake reached the client (the receipt stays queued).
    Woken,
    /// Read by the recipient.
    Retrieved,
    /// Acknowledged (or answered).
    Acknowledged,
}

impl Outcome {
    /// The published spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Offered => "offered",
            Self::Woken => "woken",
            Self::Retrieved => "retrieved",
            Self::Acknowledged => "acknowledged",
        }
    }
}

impl From<ReceiptState> for Outcome {
    fn from(state: ReceiptState) -> Self {
        match state {
            ReceiptState::Queued => Self::Queued,
            ReceiptState::Offered => Self::Offered,
            ReceiptState::Retrieved => Self::Retrieved,
            ReceiptState::Acknowledged => Self::Acknowledged,
        }
    }
}

fn outcome(
    recipient: &str,
    outcome: impl Into<Outcome>,
    transport: &str,
    code: Option<DeliveryCode>,
) -> DeliveryOutcome {
    DeliveryOutcome {
        recipient_participant_id: recipient.to_string(),
        outcome: outcome.into(),
        transport: transport.to_string(),
        error_code: code,
        pending_approval: false,
    }
}

/// The envelope an adapter receives for a message (`adapter-api`'s `wire::Envelope`), built
/// from the core's record. It is defined apart from the CLI's `--json` message view, so a
/// change to one cannot silently change the other; a test holds the two equal today and a
/// golden file holds the envelope.
pub fn envelope(view: &MessageView, workspace_id: &str) -> Envelope {
    let m = &view.message;
    Envelope {
        message_id: m.message_id.clone(),
        thread_id: m.thread_id.clone(),
        client_message_id: m.client_message_id.clone(),
        workspace_id: workspace_id.to_string(),
        from_participant_id: m.from_participant_id.clone(),
        from_session_id: m.from_session_id.clone(),
        to_participant_ids: m.to_participant_ids.clone(),
        kind: m.kind.as_str().to_string(),
        obligation: m.obligation.as_str().to_string(),
        subject: m.subject.clone(),
        body: m.body.clone(),
        in_reply_to: m.in_reply_to.clone(),
        artifacts: m.artifacts.clone(),
        handoff: m.handoff.clone().unwrap_or(Value::Null),
        sent_at: format_timestamp(m.sent_at),
        decision_change: m.decision_change.clone(),
        decision_status: view.decision.as_ref().map(decision_status),
    }
}

/// A decision's status as the envelope carries it.
fn decision_status(status: &DecisionStatus) -> acc_adapter_api::wire::DecisionStatus {
    acc_adapter_api::wire::DecisionStatus {
        state: status.state.to_string(),
        is_head: status.is_head,
        conflicted: status.conflicted,
        head_count: status.head_count as u64,
        current_message_id: status.current_message_id.clone(),
        group_id: status.group_id.clone(),
    }
}

/// The outcomes read off receipts as they stand (replays of an idempotent send).
pub fn current_outcomes(receipts: &[ReceiptRow]) -> Vec<DeliveryOutcome> {
    receipts
        .iter()
        .map(|r| {
            let transport = r
                .extensions
                .pointer("/offer/transport")
                .and_then(Value::as_str)
                .unwrap_or(DURABLE);
            outcome(&r.participant_id, r.state, transport, None)
        })
        .collect()
}

/// Whether the recipient's policy lets this message be pushed live.
pub fn policy_allows(policy: LivePolicy, message: &MessageRow) -> bool {
    match policy {
        LivePolicy::All => true,
        LivePolicy::Actionable => match message.kind {
            MessageKind::Question
            | MessageKind::Request
            | MessageKind::Answer
            | MessageKind::Decision => true,
            MessageKind::Handoff => !message.to_participant_ids.is_empty(),
            MessageKind::Note => false,
        },
        LivePolicy::Off => false,
    }
}

/// How live delivery is admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Admission {
    /// From captured evidence: the contracts folders must hold the adapter's contract as it
    /// declares it and a passing capture for the client version on this platform.
    #[default]
    Evidence,
    /// From the adapter's declaration alone: only the capture tool, which produces the
    /// evidence, drives a client this way.
    Declared,
}

/// Whether an adapter's declared contract, taken at its word, admits a client version here;
/// the reason code when it does not ([`Admission::Declared`]).
pub fn declared_admits(adapter: &LoadedAdapter, client_version: &str) -> Result<(), DeliveryCode> {
    let contract = &adapter.contract;
    if !contract.live_push {
        return Err(DeliveryCode::UnsupportedClientVersion);
    }
    let Ok(version) = semver::Version::parse(client_version) else {
        return Err(DeliveryCode::UnsupportedClientVersion);
    };
    let here = acc_clients::platform();
    let minimum = contract
        .minimums
        .iter()
        .find(|m| m.platform == here)
        .or_else(|| contract.minimums.iter().find(|m| m.platform == "*"));
    let Some(minimum) = minimum.and_then(|m| semver::Version::parse(&m.version).ok()) else {
        return Err(DeliveryCode::UnsupportedClientVersion);
    };
    if version < minimum {
        return Err(DeliveryCode::BelowMinimumVersion);
    }
    if crate::contracts::is_known_bad(&contract.known_bad, &version) {
        return Err(DeliveryCode::KnownBadVersion);
    }
    Ok(())
}

/// An offer that passed every check and is ready to start.
struct ReadyOffer {
    message: MessageRow,
    recipient: String,
    session_id: String,
    generation: i64,
    client_version: String,
    transport: String,
    adapter: LoadedAdapter,
    request: String,
}

impl ReadyOffer {
    fn attempt(&self) -> OfferAttempt<'_> {
        OfferAttempt {
            message: &self.message,
            recipient: &self.recipient,
            session_id: &self.session_id,
            generation: self.generation,
            adapter: &self.adapter.adapter_id,
            transport: &self.transport,
            client_version: &self.client_version,
        }
    }
}

/// The client and configuration directory whose installation record holds the consent for a
/// live-push adapter into Claude Code or Codex: named by the endpoint (`configDir`,
/// `codexHome`). `None` for any other adapter (its binding's policy is the consent).
pub fn consent_source(adapter: &LoadedAdapter, endpoint: &Value) -> Option<(Client, PathBuf)> {
    if !adapter.contract.live_push {
        return None;
    }
    let (client, key) = match adapter.contract.client.as_str() {
        "claude-code" => (Client::ClaudeCode, "configDir"),
        "codex" => (Client::Codex, "codexHome"),
        _ => return None,
    };
    // An endpoint without the directory finds no record: no consent.
    let dir = endpoint.get(key).and_then(Value::as_str).unwrap_or("");
    Some((client, PathBuf::from(dir)))
}

/// Where the recipients' consent to live delivery is recorded: the installation records that
/// `acc install --delivery` writes (read by the host, which owns the installer; this crate only
/// asks).
pub trait ConsentRecords: Send + Sync {
    /// The live policy recorded for the client's installation whose configuration directory
    /// is `dir` (`off` when nothing is recorded).
    fn recorded(&self, client: Client, dir: &Path) -> LivePolicy;
    /// The live policy recorded for the client's installation that this process's
    /// environment names (its configuration directory from the client's own variables, else
    /// the home directory's): what a hook of that client consults.
    fn recorded_here(&self, client: Client) -> LivePolicy;
}

/// No installation records anywhere: every live push into Claude Code or Codex is off.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoRecords;

impl ConsentRecords for NoRecords {
    fn recorded(&self, _client: Client, _dir: &Path) -> LivePolicy {
        LivePolicy::Off
    }
    fn recorded_here(&self, _client: Client) -> LivePolicy {
        LivePolicy::Off
    }
}

/// The live policy a binding may have: for an adapter that pushes into Claude Code or Codex,
/// the recipient's consent is the one recorded when ACC was installed into that client
/// (`acc install --delivery`), and a binding can narrow it, never widen it.
fn consented_policy(
    records: &dyn ConsentRecords,
    adapter: &LoadedAdapter,
    requested: LivePolicy,
    endpoint: &Value,
) -> AccResult<LivePolicy> {
    let Some((client, dir)) = consent_source(adapter, endpoint) else {
        return Ok(requested);
    };
    let consent = recorded_consent(records, client, &dir);
    if consent == LivePolicy::Off && requested != LivePolicy::Off {
        return Err(AccError::new(
            ErrorCode::InvalidData,
            format!(
                "live delivery into {} is off in its installation record ({}); consent with acc install --client {} --delivery actionable (or all)",
                client.as_str(),
                dir.display(),
                client.as_str()
            ),
        ));
    }
    Ok(requested.min(consent))
}

/// The recorded consent; `off` for an endpoint that names no directory.
fn recorded_consent(records: &dyn ConsentRecords, client: Client, dir: &Path) -> LivePolicy {
    if dir.as_os_str().is_empty() {
        return LivePolicy::Off;
    }
    records.recorded(client, dir)
}

/// One recipient's steps 1 to 3 (see [`Delivery::check_routes`]), on `receipt` as it stands
/// in `r`.
fn check_route(
    r: &Reader<'_>,
    now: Millis,
    liveness: &dyn Liveness,
    receipt: &ReceiptRow,
    message: &MessageRow,
) -> AccResult<Route> {
    let recipient = receipt.participant_id.as_str();
    if receipt.state != ReceiptState::Queued {
        // Already carried further (the re-check before a transport reads after the send's
        // commit: a next-turn hook may have offered it in between): say so with the transport
        // that did it.
        return Ok(Route::Done(
            current_outcomes(std::slice::from_ref(receipt))
                .pop()
                .unwrap_or_else(|| outcome(recipient, receipt.state, DURABLE, None)),
        ));
    }
    let live: Vec<_> = r
        .open_sessions_of(recipient)?
        .into_iter()
        .filter(|s| presence(s, now, &*liveness) != Presence::Offline)
        .collect();
    let session = match live.as_slice() {
        [] => {
            return Ok(Route::Done(outcome(
                recipient,
                Outcome::Queued,
                DURABLE,
                Some(DeliveryCode::RecipientUnavailable),
            )));
        }
        [one] => one.clone(),
        _ => {
            return Ok(Route::Done(outcome(
                recipient,
                Outcome::Queued,
                DURABLE,
                Some(DeliveryCode::AmbiguousRecipientSessions),
            )));
        }
    };
    // A session of another machine (a room across machines) has no binding reachable from
    // here: its message waits for its next turn there.
    let bindings = if runs_here(&session, liveness) {
        r.open_bindings_of(recipient)?
    } else {
        Vec::new()
    };
    let Some(binding) = bindings.into_iter().find(|b| {
        b.session_id == session.session_id
            && b.generation == session.generation
            && b.modes.iter().any(|m| m == "live")
    }) else {
        return Ok(Route::Done(outcome(
            recipient,
            Outcome::Queued,
            DURABLE,
            None,
        )));
    };
    if !policy_allows(binding.live_policy, message) {
        return Ok(Route::Done(outcome(
            recipient,
            Outcome::Queued,
            DURABLE,
            Some(DeliveryCode::DeliveryDisabled),
        )));
    }
    Ok(Route::Offer {
        session_id: session.session_id,
        generation: session.generation,
        binding,
    })
}

/// One recipient's steps 1 to 3 again, in a read of their own (just before a transport call).
fn recheck_route(core: &mut Core, message: &MessageRow, recipient: &str) -> AccResult<Route> {
    let now = core.now();
    let liveness = core.liveness();
    let checked = core.read(|r| match r.receipt(message.seq, recipient)? {
        Some(receipt) => check_route(r, now, &*liveness, &receipt, message),
        // No receipt to carry (pruned since): nothing to route.
        None => Ok(Route::Done(outcome(
            recipient,
            Outcome::Queued,
            DURABLE,
            None,
        ))),
    })?;
    Ok(checked.unwrap_or_else(|| Route::Done(outcome(recipient, Outcome::Queued, DURABLE, None))))
}

/// What the route check found for each receipt of a send, in order, before any transport
/// call (from [`Delivery::check_routes`]).
pub struct Checked(Vec<Route>);

/// What the route check found before any transport call.
enum Route {
    Done(DeliveryOutcome),
    Offer {
        session_id: String,
        generation: i64,
        binding: BindingRow,
    },
}

/// What routing needs beyond the protocol core: the adapter plugins, loaded on first need
/// (only routing, binding and rendering need them) with their configurations from
/// `ACC_ADAPTER_CONFIG`, where the recipients' consent is recorded, and an embedder's consent
/// override.
pub struct Delivery {
    plugins: Option<Arc<Plugins>>,
    records: Arc<dyn ConsentRecords>,
    /// How long one send's live offers may take, all together (5 s).
    pub offer_deadline: Duration,
    /// How live delivery is admitted (from evidence, unless the embedder is the capture tool).
    pub admission: Admission,
    /// The contracts folders evidence is read from (`contracts::search_path` when `None`).
    pub evidence_dirs: Option<Vec<std::path::PathBuf>>,
    evidence: Option<Arc<crate::contracts::Evidence>>,
    /// The watchers of offers that were still running at their deadline.
    late_offers: Vec<std::thread::JoinHandle<()>>,
    /// The live-delivery consent to use instead of the installation record's (the capture
    /// tool, which drives a client it started itself).
    pub consent_override: Option<LivePolicy>,
    /// Where adapter code runs: in this process (the default), or in helper processes (the
    /// long-lived `acc-mcp`, which a crashing adapter must not end).
    pub loading: crate::plugins::Loading,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("plugins", &self.plugins)
            .field("consent_override", &self.consent_override)
            .field("offer_deadline", &self.offer_deadline)
            .field("loading", &self.loading)
            .finish_non_exhaustive()
    }
}

impl Default for Delivery {
    fn default() -> Self {
        Self::new(Arc::new(NoRecords))
    }
}

impl Delivery {
    /// Where this delivery reads the recipients' consent.
    pub fn consent(&self) -> &dyn ConsentRecords {
        &*self.records
    }

    /// Delivery that reads consent from `records`, with plugins loaded on first need.
    pub fn new(records: Arc<dyn ConsentRecords>) -> Self {
        Self {
            plugins: None,
            records,
            offer_deadline: OFFER_DEADLINE,
            admission: Admission::Evidence,
            evidence_dirs: None,
            evidence: None,
            late_offers: Vec::new(),
            consent_override: None,
            loading: crate::plugins::Loading::InProcess,
        }
    }
}

impl Delivery {
    /// Whether live delivery through `adapter` to `client_version` is admitted here.
    pub fn admit(
        &mut self,
        adapter: &LoadedAdapter,
        client_version: &str,
    ) -> Result<(), DeliveryCode> {
        if self.admission == Admission::Declared {
            return declared_admits(adapter, client_version);
        }
        let evidence = self.evidence.get_or_insert_with(|| {
            let dirs = self
                .evidence_dirs
                .clone()
                .unwrap_or_else(crate::contracts::search_path);
            Arc::new(crate::contracts::Evidence::load(&dirs))
        });
        evidence.admits(&adapter.contract, client_version, &acc_clients::platform())
    }

    /// The plugins, discovered and loaded on first need.
    pub fn plugins(&mut self) -> AccResult<&Plugins> {
        if self.plugins.is_none() {
            let configs = crate::plugins::configs_from_env().map_err(AccError::usage)?;
            self.plugins = Some(Arc::new(Plugins::load_via(
                crate::plugins::search_path(),
                &configs,
                &self.loading,
            )));
        }
        self.plugins
            .as_deref()
            .ok_or_else(|| AccError::internal("the plugins did not load"))
    }

    /// One adapter by id: from the loaded plugins when they are loaded, else by loading just
    /// that adapter's file.
    pub fn adapter(&mut self, adapter_id: &str) -> AccResult<Option<LoadedAdapter>> {
        if let Some(plugins) = &self.plugins {
            return Ok(plugins.get(adapter_id).cloned());
        }
        let configs = crate::plugins::configs_from_env().map_err(AccError::usage)?;
        // The file named after the id is the fast path; an adapter may live in a file of any
        // name, so a miss falls back to loading the whole search path.
        let one = Plugins::load_named(
            crate::plugins::search_path(),
            &configs,
            adapter_id,
            &self.loading,
        );
        if let Some(found) = one.get(adapter_id) {
            return Ok(Some(found.clone()));
        }
        Ok(self.plugins()?.get(adapter_id).cloned())
    }

    /// Use these plugins instead of discovering them (tests, embedding).
    pub fn set_plugins(&mut self, plugins: Arc<Plugins>) {
        self.plugins = Some(plugins);
    }

    fn handshake(
        &mut self,
        adapter: &LoadedAdapter,
        session_id: &str,
        generation: i64,
        participant: &str,
        endpoint: &Value,
    ) -> AccResult<HandshakeAnswer> {
        let request = HandshakeRequest {
            session_id: session_id.to_string(),
            generation,
            participant_id: participant.to_string(),
            endpoint: endpoint.clone(),
        };
        let request =
            serde_json::to_string(&request).map_err(|e| AccError::internal(e.to_string()))?;
        let answer = adapter
            .call(Operation::Handshake, request, DEFAULT_DEADLINE)
            .map_err(|f| {
                AccError::new(
                    ErrorCode::InvalidData,
                    format!(
                        "handshake_failed: the {} adapter refused the endpoint ({}): {}",
                        adapter.adapter_id, f.code, f.message
                    ),
                )
            })?;
        serde_json::from_str(answer.payload.as_str()).map_err(|e| {
            AccError::new(
                ErrorCode::InvalidData,
                format!("handshake_failed: the adapter answered badly: {e}"),
            )
        })
    }
}

mod admission;
mod bind;
mod next_turn;
mod offer;

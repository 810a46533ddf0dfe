//! Request and answer payloads, carried as JSON text across the boundary. Fields may be added
//! in later minor versions; readers ignore fields they do not know.

use serde::{Deserialize, Serialize};

use crate::OfferKind;

/// What an adapter says about itself (the Rust side of [`crate::Description`]).
#[derive(Debug, Clone)]
pub struct Describe {
    /// Unique adapter id.
    pub adapter_id: String,
    /// Transport name.
    pub transport: String,
    /// How it delivers.
    pub offer_kind: OfferKind,
    /// Implemented features (see [`crate::KNOWN_FEATURES`]).
    pub features: Vec<String>,
    /// The capability contract it declares.
    pub contract: ContractDeclaration,
}

/// A minimum client version on one platform (`*` for every platform).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Minimum {
    /// `linux-x64`, `darwin-arm64`, ... or `*`.
    pub platform: String,
    /// The lowest admitted client version.
    pub version: String,
}

/// The capability contract an adapter declares; `acc contract verify` checks it against the
/// contract data in `contracts/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractDeclaration {
    /// Contract id (`claude-code-inbox-socket-v1`).
    pub contract_id: String,
    /// The client it speaks to (`claude-code`, `codex`, `example`).
    pub client: String,
    /// `message`, `wake` or `body`.
    pub offer_kind: String,
    /// Whether the adapter pushes live (outside the next turn).
    pub live_push: bool,
    /// Minimum client version per platform.
    pub minimums: Vec<Minimum>,
    /// Known-bad versions (`1.2.3`) or ranges (`>=1.2.0, <1.2.5`).
    #[serde(default)]
    pub known_bad: Vec<String>,
}

/// Probe the installed client, read-only.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeRequest {
    /// How long the probe may take.
    pub timeout_ms: u64,
}

/// What a probe found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeAnswer {
    /// The version the client reports, when found.
    pub client_version: Option<String>,
    /// The protocol contract the client states, when found.
    pub protocol_contract: Option<String>,
    /// SHA-256 of the client executable, when found.
    pub executable_sha256: Option<String>,
    /// The platform (`linux-x64`, ...).
    pub platform: String,
    /// An eligibility reason code when the client is not usable, else empty.
    pub reason: String,
}

/// Verify one session's endpoint and describe its binding.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandshakeRequest {
    /// The session.
    pub session_id: String,
    /// Its generation number.
    pub generation: i64,
    /// Its participant.
    pub participant_id: String,
    /// What the client's side told the host about its endpoint (adapter-specific).
    #[serde(default)]
    pub endpoint: serde_json::Value,
}

/// A verified endpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandshakeAnswer {
    /// An opaque reference the host keeps and hands back with each offer; never shown.
    pub endpoint_ref: String,
    /// Delivery modes the endpoint offers (`live`, `next-turn`).
    pub modes: Vec<String>,
    /// How long the binding stays valid without a refresh.
    pub lease_seconds: u64,
    /// The client version that answered the handshake.
    pub client_version: String,
}

/// The message an adapter receives, in [`OfferRequest::message`] and
/// [`RenderMessage::message`]: exactly the JSON the host sends, built from the host's record of
/// the message. Subject, body, artifacts and handoff are written by another participant and are
/// untrusted data. Fields are only ever added; a reader ignores fields it does not know, and a
/// field an older host does not send reads as its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Envelope {
    /// The message id (`message_…`).
    pub message_id: String,
    /// The thread: the id of the message that started it.
    pub thread_id: String,
    /// The sender's idempotency key.
    pub client_message_id: String,
    /// The workspace the message was sent in.
    pub workspace_id: String,
    /// The sender.
    pub from_participant_id: String,
    /// The sender's session.
    pub from_session_id: String,
    /// The addressed participants (empty for a room record).
    pub to_participant_ids: Vec<String>,
    /// `note`, `question`, `request`, `decision`, `answer` or `handoff`.
    pub kind: String,
    /// `none`, `reply` or `acknowledge`: what the recipient owes.
    pub obligation: String,
    /// One line, by the sender (untrusted).
    pub subject: String,
    /// The body, by the sender (untrusted).
    pub body: String,
    /// The message this one answers.
    pub in_reply_to: Option<String>,
    /// Artifacts the sender attached: an array of objects (untrusted).
    pub artifacts: serde_json::Value,
    /// A handoff's goal, status and lists, or null (untrusted).
    pub handoff: serde_json::Value,
    /// When it was recorded (RFC 3339 UTC with milliseconds).
    pub sent_at: String,
    /// For a decision that supersedes or withdraws others: `{action, messageIds}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_change: Option<serde_json::Value>,
    /// For a decision: its derived status in the decision graph.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_status: Option<DecisionStatus>,
}

/// A decision's status in the decision graph, derived by the host (never stored).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DecisionStatus {
    /// `current`, `superseded` or `withdrawn`.
    pub state: String,
    /// Nothing replaces or withdraws it.
    pub is_head: bool,
    /// More than one current head in its group.
    pub conflicted: bool,
    /// How many current heads its group has.
    pub head_count: u64,
    /// The decision now in force in its group, if one is.
    pub current_message_id: Option<String>,
    /// The group: the id of the first decision of the chain.
    pub group_id: String,
}

/// Offer one committed message to one recipient session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferRequest {
    /// The message (peer text inside is untrusted).
    pub message: Envelope,
    /// The recipient.
    pub recipient_participant_id: String,
    /// The target session.
    pub target_session_id: String,
    /// The target session's generation.
    pub target_generation: i64,
    /// The binding's opaque endpoint reference.
    pub endpoint_ref: String,
    /// The client version admitted for the binding.
    pub client_version: String,
    /// How long the host waits for the answer, in milliseconds (since 1.2; absent from older
    /// hosts). An adapter must answer within it: an offer still running then is recorded with
    /// an unknown outcome, and whatever it does later may not be counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What the transport did with an offer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferAnswer {
    /// The transport or client accepted the bytes.
    pub accepted: bool,
    /// The client holds a wake for its user's approval.
    #[serde(default)]
    pub pending_approval: bool,
    /// A safe closed error code when refused.
    pub code: Option<String>,
    /// The client version that answered.
    pub client_version: String,
}

/// A repeat of an earlier live offer, shown once more by next-turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repeat {
    /// The transport that offered it.
    pub transport: String,
    /// When it was offered.
    pub offered_at: String,
}

/// One message to render.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderMessage {
    /// The message (peer text inside is untrusted).
    pub message: Envelope,
    /// Set when this is a repeat of a live offer.
    pub repeat: Option<Repeat>,
}

/// Render next-turn context for one recipient within a byte budget.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderRequest {
    /// The recipient.
    pub recipient_participant_id: String,
    /// The byte budget of the rendered text.
    pub budget_bytes: usize,
    /// New messages first, then repeats.
    pub messages: Vec<RenderMessage>,
}

/// Rendered context and exactly the message ids it carries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderAnswer {
    /// The text for the model's context.
    pub text: String,
    /// Ids of the messages whose bodies the text carries.
    pub carried: Vec<String>,
    /// Ids withheld for the budget.
    #[serde(default)]
    pub withheld: Vec<String>,
}

/// One request of `acc contract capture` to an adapter author's capture driver: a program
/// that runs the author's client for the capture. Requests go to the driver's stdin and
/// answers ([`DriverAnswer`]) come back on its stdout, one JSON object a line, in order.
/// See `docs/contracts.md`, "Capture drivers".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum DriverRequest {
    /// The first request: a folder the driver may use (removed after the capture). Answer
    /// with `executable` (the client program that runs, which the capture fingerprints) and
    /// `launchMode`.
    Start {
        /// The scratch folder.
        scratch: String,
    },
    /// Start a client session for `participant`; answer with its `endpoint` (what `acc bind
    /// --endpoint` takes for the author's adapter).
    Session {
        /// The participant.
        participant: String,
    },
    /// Make `participant`'s client busy: answer once a turn is running.
    Busy {
        /// The participant.
        participant: String,
    },
    /// Let the running turn of `participant`'s client end: answer once it has ended.
    EndTurn {
        /// The participant.
        participant: String,
    },
    /// Look for a message at `participant`'s client: answer with `seen` (how many times the
    /// client holds or ran it) once it reaches `expect`, or when `waitMs` has passed;
    /// `afterTurnEnd` when the client took it only after a turn ended (say nothing when it
    /// cannot tell), and `frames`, the client's own records that show it.
    #[serde(rename_all = "camelCase")]
    Look {
        /// The participant.
        participant: String,
        /// The ACC message id.
        message_id: String,
        /// How many the capture expects (0: it expects none, so look once).
        expect: u32,
        /// How long to wait for `expect`.
        wait_ms: u64,
    },
    /// End `participant`'s client session: it is gone afterwards.
    Stop {
        /// The participant.
        participant: String,
    },
    /// The last request: stop every client, clean up, exit.
    Finish,
}

/// A capture driver's answer to one [`DriverRequest`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DriverAnswer {
    /// Whether the request was done.
    pub ok: bool,
    /// Why not, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `start`: the client program that runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// `start`: how the client is launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_mode: Option<String>,
    /// `session`: the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<serde_json::Value>,
    /// `look`: how many times the client holds or ran the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<u32>,
    /// `look`: whether it was taken only after a running turn ended, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_turn_end: Option<bool>,
    /// `look`: the client's own records that show it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<serde_json::Value>,
}

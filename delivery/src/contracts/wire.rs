//! The lines of a capture's transcript (`<version>-<platform>.transcript.jsonl`, beside the
//! capture): what the capture tool drove and what it saw, one JSON object a line. The branch
//! values, the limitations and the result of the capture are derived from these lines
//! ([`super::transcript::derive`]), by the capture tool when it writes them and by `acc
//! contract verify` when it checks them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

fn live_push() -> String {
    "livePush".into()
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "kebab-case")]
pub enum Entry {
    /// The first line: what was driven, as the capture records it.
    #[serde(rename_all = "camelCase")]
    Run {
        /// The client.
        client: String,
        /// Its version, as the adapter's probe reported it.
        version: String,
        /// The platform.
        platform: String,
        /// How the client was launched.
        launch_mode: String,
        /// The protocol contract.
        protocol_contract: String,
        /// SHA-256 of the executable that really ran.
        executable_sha256: String,
        /// Who drove the client: `acc-capture` for a client ACC knows, else the driver's file
        /// name.
        driver: String,
        /// The capability observed (`livePush` when absent).
        #[serde(default = "live_push")]
        capability: String,
    },
    /// What ACC's router reported for one recipient of a send.
    #[serde(rename_all = "camelCase")]
    Router {
        /// The branch being driven.
        branch: String,
        /// The message.
        message_id: String,
        /// The recipient.
        recipient: String,
        /// The router's outcome (`offered`, `woken`, `queued`, ...).
        outcome: String,
        /// The transport (`durable` for the fallback).
        transport: String,
        /// The router's code, when it gave one.
        error_code: Option<String>,
    },
    /// An offer of a message already delivered, made through the adapter directly.
    #[serde(rename_all = "camelCase")]
    Offer {
        /// The branch.
        branch: String,
        /// The message offered again.
        message_id: String,
        /// Whether the adapter accepted it.
        accepted: bool,
        /// The adapter's code, when it refused or failed.
        code: Option<String>,
    },
    /// What the client showed of one message.
    #[serde(rename_all = "camelCase")]
    Client {
        /// The branch.
        branch: String,
        /// The message.
        message_id: String,
        /// The participant whose client was looked at.
        participant: String,
        /// How many times the client holds or ran the message.
        seen: u32,
        /// Whether the client took it only after the turn that was running ended (busy
        /// branches), when that was observed.
        after_turn_end: Option<bool>,
        /// The client's own frames or requests that show it, peer bodies redacted.
        frames: Vec<Value>,
    },
    /// A write the model asked for, and what came of it (write-guard captures).
    #[serde(rename_all = "camelCase")]
    Write {
        /// The branch (`claimed`, `unclaimed`, `released`).
        branch: String,
        /// The file, relative to the project.
        path: String,
        /// The tool the model called.
        tool: String,
        /// Whether the file then held what the model asked to write.
        written: bool,
        /// Whether the model's next request carried ACC's refusal naming the claim's holder.
        refusal_seen: bool,
        /// The client's own account: the tool result the model received.
        frames: Vec<Value>,
    },
    /// Something found about the client's surface, or a step that could not be done.
    #[serde(rename_all = "camelCase")]
    Note {
        /// The branch, or `surface`.
        branch: String,
        /// What was found.
        text: String,
    },
}

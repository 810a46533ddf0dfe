//! What a capture saw, as its transcript, and the capture derived from it.
//!
//! Every driver (ACC's own for Codex and Claude Code, an adapter author's through
//! [`crate::driver`]) reports to a [`Recorder`]: the router's outcome for each send, each
//! direct repeat offer, each look at the client, each note. [`Recorder::finish`] derives the
//! branch values, limitations and result with the same rule `acc contract verify` applies to the
//! stored transcript ([`acc_delivery::contracts::transcript::derive`]), so a capture can only say
//! what its transcript shows.

use acc_app::services::Sent;
use acc_core::error::AccResult;
use acc_core::messages::SendRequest;
use acc_delivery::contracts::wire::Entry;
use acc_delivery::contracts::{
    CAPTURE_SCHEMA, Capture, Provenance, capture_stem, check_capture, transcript,
};
use serde_json::Value;

use crate::failed;

/// The body of every message a capture sends. Transcripts never hold peer bodies: wherever a
/// client echoes this text it is replaced by [`REDACTED`].
pub const PEER_BODY: &str = "acc capture probe: a peer body, redacted in transcripts";
/// What stands in for a peer body in a transcript.
pub const REDACTED: &str = "[peer body redacted]";

/// A question to `to` with the capture's body.
pub fn question(to: &str) -> SendRequest {
    SendRequest {
        to: vec![to.into()],
        kind: Some("question".into()),
        subject: "capture".into(),
        body: PEER_BODY.into(),
        ..SendRequest::default()
    }
}

/// `value` with every peer body in its strings replaced.
pub fn redact(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(text.replace(PEER_BODY, REDACTED)),
        Value::Array(items) => Value::Array(items.into_iter().map(redact).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, redact(v))).collect()),
        other => other,
    }
}

/// The facts of the run that open its transcript.
#[derive(Debug, Clone)]
pub struct Run {
    /// The client.
    pub client: String,
    /// Its version, from the adapter's probe.
    pub version: String,
    /// How it was launched.
    pub launch_mode: String,
    /// The protocol contract the adapter's probe stated.
    pub protocol_contract: String,
    /// SHA-256 of the executable that really ran.
    pub executable_sha256: String,
    /// Who drove it.
    pub driver: String,
    /// The capability observed (`livePush`, `nextTurn`).
    pub capability: String,
}

/// A capture and its transcript's text, ready to be written together.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The capture.
    pub capture: Capture,
    /// The transcript, one entry a line.
    pub transcript: String,
}

/// The transcript being written.
#[derive(Debug, Default)]
pub struct Recorder {
    entries: Vec<Entry>,
}

impl Recorder {
    /// What the router reported for the first recipient of `sent`, in `branch`.
    pub fn router(&mut self, branch: &str, sent: &Sent) {
        let message_id = sent.message.message.message_id.clone();
        match sent.delivery.first() {
            Some(d) => self.entries.push(Entry::Router {
                branch: branch.into(),
                message_id,
                recipient: d.recipient_participant_id.clone(),
                outcome: d.outcome.as_str().to_string(),
                transport: d.transport.clone(),
                error_code: d.error_code.map(|c| c.as_str().to_string()),
            }),
            None => self.note(branch, "the router reported no recipient"),
        }
    }

    /// A direct repeat offer of `message_id` and how the adapter answered.
    pub fn offer(&mut self, branch: &str, message_id: &str, answer: Result<bool, String>) {
        let (accepted, code) = match answer {
            Ok(accepted) => (accepted, None),
            Err(code) => (false, Some(code)),
        };
        self.entries.push(Entry::Offer {
            branch: branch.into(),
            message_id: message_id.into(),
            accepted,
            code,
        });
    }

    /// A look at `participant`'s client for `message_id`: seen `seen` times, after the running
    /// turn ended or not (when that was observed), shown by `frames` (redacted here).
    pub fn client(
        &mut self,
        branch: &str,
        message_id: &str,
        participant: &str,
        seen: u32,
        after_turn_end: Option<bool>,
        frames: Vec<Value>,
    ) {
        self.entries.push(Entry::Client {
            branch: branch.into(),
            message_id: message_id.into(),
            participant: participant.into(),
            seen,
            after_turn_end,
            frames: frames.into_iter().map(redact).collect(),
        });
    }

    /// A write the model asked for with `tool` into `path`: whether the file then held it, and
    /// whether the model's next request carried the refusal; `frames` are the tool result the
    /// model received (redacted here).
    pub fn write(
        &mut self,
        branch: &str,
        path: &str,
        tool: &str,
        written: bool,
        refusal_seen: bool,
        frames: Vec<Value>,
    ) {
        self.entries.push(Entry::Write {
            branch: branch.into(),
            path: path.into(),
            tool: tool.into(),
            written,
            refusal_seen,
            frames: frames.into_iter().map(redact).collect(),
        });
    }

    /// Something found (`branch` may be `surface`), which fails the capture.
    pub fn note(&mut self, branch: &str, text: impl Into<String>) {
        self.entries.push(Entry::Note {
            branch: branch.into(),
            text: text.into(),
        });
    }

    /// The capture this transcript supports, checked by the validator.
    pub fn finish(self, run: Run) -> AccResult<Finished> {
        let platform = acc_clients::platform();
        let mut entries = vec![Entry::Run {
            client: run.client.clone(),
            version: run.version.clone(),
            platform: platform.clone(),
            launch_mode: run.launch_mode.clone(),
            protocol_contract: run.protocol_contract.clone(),
            executable_sha256: run.executable_sha256.clone(),
            driver: run.driver,
            capability: run.capability.clone(),
        }];
        entries.extend(self.entries);
        let derived = transcript::derive(&entries);
        let text = transcript::encode(&entries);
        let capture = Capture {
            schema: CAPTURE_SCHEMA.into(),
            transcript: Some(format!(
                "{}.transcript.jsonl",
                capture_stem(&run.version, &platform, &run.capability)
            )),
            transcript_sha256: Some(transcript::digest(text.as_bytes())),
            client: run.client,
            version: run.version,
            platform,
            observed_at: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            launch_mode: run.launch_mode,
            protocol_contract: run.protocol_contract,
            executable_sha256: run.executable_sha256,
            capability: run.capability,
            result: derived.result,
            provenance: Provenance::CapturedHere,
            branches: derived.branches,
            limitations: derived.limitations,
        };
        let problems = check_capture(&capture);
        if !problems.is_empty() {
            return Err(failed("the capture is not valid", problems.join("; ")));
        }
        Ok(Finished {
            capture,
            transcript: text,
        })
    }
}

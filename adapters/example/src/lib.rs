//! The `example` adapter: the template an adapter author copies.
//!
//! It implements every operation honestly over a plain file, the example client's inbox: a
//! handshake checks that the endpoint's directory exists; an offer is refused with
//! `recipient_unavailable` when that directory is gone and `recipient_busy` while the client is
//! in a turn (a `<file>.busy` marker beside the inbox); an accepted offer appends one JSON line
//! to the file; render
//! formats pending messages as plain text within the budget and reports exactly the ids it
//! carried. Its configuration (JSON, from the host) chooses how offers are answered, so tests
//! can drive every router outcome:
//!
//! ```json
//! { "offers": "accept" | "pending" | "refuse", "refuseCode": "transport_rejected",
//!   "offerKind": "message" | "wake", "clientVersion": "1.2.0" }
//! ```

use std::io::Write;

use acc_adapter_api::wire::{
    ContractDeclaration, Describe, HandshakeAnswer, HandshakeRequest, Minimum, OfferAnswer,
    OfferRequest, ProbeAnswer, ProbeRequest, RenderAnswer, RenderRequest,
};
use acc_adapter_api::{AdapterError, AdapterImpl, OfferKind, export_adapter};
use serde::Deserialize;

/// The contract this adapter declares (mirrored by `contracts/example/contract.toml`).
pub const CONTRACT_ID: &str = "example-file-v1";

/// How offers are answered.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// `accept` (default), `pending` (accepted, held for approval) or `refuse`.
    #[serde(default)]
    pub offers: Option<String>,
    /// The code of a refusal (default `transport_rejected`).
    #[serde(default)]
    pub refuse_code: Option<String>,
    /// `message` (default) or `wake`.
    #[serde(default)]
    pub offer_kind: Option<String>,
    /// The client version the handshake and offers report (default `1.2.0`).
    #[serde(default)]
    pub client_version: Option<String>,
}

/// The adapter.
#[derive(Debug, Clone)]
pub struct Example {
    config: Config,
    offer_kind: OfferKind,
}

/// Build the adapter from its configuration JSON.
pub fn new(config: &str) -> Result<Example, AdapterError> {
    let config: Config = if config.trim().is_empty() {
        Config::default()
    } else {
        serde_json::from_str(config).map_err(|e| {
            AdapterError::new("invalid_config", format!("example adapter config: {e}"))
        })?
    };
    let offer_kind = match config.offer_kind.as_deref().unwrap_or("message") {
        "message" => OfferKind::Message,
        "wake" => OfferKind::Wake,
        other => {
            return Err(AdapterError::new(
                "invalid_config",
                format!("offerKind must be message or wake, got {other}"),
            ));
        }
    };
    Ok(Example { config, offer_kind })
}

impl Example {
    fn client_version(&self) -> String {
        self.config
            .client_version
            .clone()
            .unwrap_or_else(|| "1.2.0".into())
    }
}

/// The file whose presence means the example client at `inbox` is in a turn: it takes no
/// offer until the turn ends (the capture driver creates and removes it).
pub fn busy_marker(inbox: &std::path::Path) -> std::path::PathBuf {
    let mut name = inbox.as_os_str().to_owned();
    name.push(".busy");
    std::path::PathBuf::from(name)
}

fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{arch}")
}

impl AdapterImpl for Example {
    fn describe(&self) -> Result<Describe, AdapterError> {
        Ok(Describe {
            adapter_id: "example".into(),
            transport: "example".into(),
            offer_kind: self.offer_kind,
            features: ["probe", "handshake", "offer", "render"]
                .map(String::from)
                .to_vec(),
            contract: ContractDeclaration {
                contract_id: CONTRACT_ID.into(),
                client: "example".into(),
                offer_kind: self.offer_kind.as_str().into(),
                live_push: true,
                // Backed by contracts/example/1.2.0-linux-x64.toml, made by `acc contract capture`.
                minimums: vec![Minimum {
                    platform: "*".into(),
                    version: "1.2.0".into(),
                }],
                known_bad: vec![">=1.3.0, <1.3.2".into()],
            },
        })
    }

    fn probe(&self, _request: ProbeRequest) -> Result<ProbeAnswer, AdapterError> {
        Ok(ProbeAnswer {
            client_version: Some(self.client_version()),
            protocol_contract: Some(CONTRACT_ID.into()),
            executable_sha256: None,
            platform: platform(),
            reason: String::new(),
        })
    }

    fn handshake(&self, request: HandshakeRequest) -> Result<HandshakeAnswer, AdapterError> {
        let Some(file) = request.endpoint.get("file").and_then(|f| f.as_str()) else {
            return Err(AdapterError::new(
                "handshake_failed",
                "the example endpoint needs {\"file\": \"/path\"}",
            ));
        };
        let path = std::path::Path::new(file);
        if !path.is_absolute() || !path.parent().is_some_and(std::path::Path::is_dir) {
            return Err(AdapterError::new(
                "native_endpoint_unavailable",
                "the endpoint file's directory does not exist",
            ));
        }
        Ok(HandshakeAnswer {
            endpoint_ref: file.into(),
            modes: vec!["live".into()],
            lease_seconds: 120,
            client_version: self.client_version(),
        })
    }

    fn offer(&self, request: OfferRequest) -> Result<OfferAnswer, AdapterError> {
        let client_version = self.client_version();
        match self.config.offers.as_deref().unwrap_or("accept") {
            "refuse" => {
                let code = self
                    .config
                    .refuse_code
                    .clone()
                    .unwrap_or_else(|| "transport_rejected".into());
                return Ok(OfferAnswer {
                    accepted: false,
                    pending_approval: false,
                    code: Some(code),
                    client_version,
                });
            }
            "accept" | "pending" => {}
            other => {
                return Err(AdapterError::new(
                    "invalid_config",
                    format!("unknown offers mode {other}"),
                ));
            }
        }
        // The example client's own state: its session folder is gone (the client stopped), or
        // a turn is running (the capture driver's `busy` marker beside the inbox).
        let inbox = std::path::Path::new(&request.endpoint_ref);
        let refused = if !inbox.parent().is_some_and(std::path::Path::is_dir) {
            Some("recipient_unavailable")
        } else if busy_marker(inbox).exists() {
            Some("recipient_busy")
        } else {
            None
        };
        if let Some(code) = refused {
            return Ok(OfferAnswer {
                accepted: false,
                pending_approval: false,
                code: Some(code.into()),
                client_version,
            });
        }
        let line = serde_json::json!({
            "messageId": request.message.message_id,
            "recipient": request.recipient_participant_id,
            "targetSessionId": request.target_session_id,
            "targetGeneration": request.target_generation,
            "offerKind": self.offer_kind.as_str(),
            // A wake carries no peer byte; a message transport carries the text.
            "body": if self.offer_kind == OfferKind::Wake { None } else { Some(&request.message.body) },
        });
        // A retry of the same message is accepted without delivering it twice.
        let already = std::fs::read_to_string(&request.endpoint_ref)
            .unwrap_or_default()
            .lines()
            .any(|existing| {
                serde_json::from_str::<serde_json::Value>(existing)
                    .ok()
                    .and_then(|v| v.get("messageId").cloned())
                    == Some(line["messageId"].clone())
            });
        if already {
            let pending = self.config.offers.as_deref() == Some("pending");
            return Ok(OfferAnswer {
                accepted: true,
                pending_approval: pending,
                code: None,
                client_version,
            });
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&request.endpoint_ref)
            .map_err(|e| {
                AdapterError::new(
                    "transport_error",
                    format!("cannot open the endpoint file: {}", e.kind()),
                )
            })?;
        writeln!(file, "{line}").map_err(|e| {
            AdapterError::new("transport_error", format!("cannot write: {}", e.kind()))
        })?;
        let pending = self.config.offers.as_deref() == Some("pending");
        Ok(OfferAnswer {
            accepted: true,
            pending_approval: pending,
            code: None,
            client_version,
        })
    }

    fn render(&self, request: RenderRequest) -> Result<RenderAnswer, AdapterError> {
        let mut text = String::new();
        let mut answer = RenderAnswer::default();
        for item in &request.messages {
            let m = &item.message;
            let mut block = format!(
                "[acc message {} from {}] {}\n{}\n",
                m.message_id, m.from_participant_id, m.subject, m.body
            );
            if let Some(repeat) = &item.repeat {
                block.push_str(&format!(
                    "repeat: offered via {} at {}; no retrieval recorded\n",
                    repeat.transport, repeat.offered_at
                ));
            }
            if text.len() + block.len() <= request.budget_bytes {
                text.push_str(&block);
                answer.carried.push(m.message_id.clone());
            } else {
                answer.withheld.push(m.message_id.clone());
            }
        }
        answer.text = text;
        Ok(answer)
    }
}

export_adapter!(new);

#[cfg(test)]
mod tests {
    use super::*;
    use acc_adapter_api::wire::{Envelope, RenderMessage};

    #[test]
    fn render_carries_what_fits_and_reports_it() {
        let adapter = new("{}").expect("adapter");
        let message = |id: &str| RenderMessage {
            message: Envelope {
                message_id: id.into(),
                from_participant_id: "a".into(),
                subject: "s".into(),
                body: "b".repeat(40),
                ..Envelope::default()
            },
            repeat: None,
        };
        let answer = adapter
            .render(RenderRequest {
                recipient_participant_id: "r".into(),
                budget_bytes: 100,
                messages: vec![message("m1"), message("m2")],
            })
            .expect("render");
        assert_eq!(answer.carried, vec!["m1"]);
        assert_eq!(answer.withheld, vec!["m2"]);
        assert!(answer.text.contains("m1") && !answer.text.contains("m2"));
    }

    #[test]
    fn offers_follow_the_configuration() {
        let dir = std::env::temp_dir().join(format!("acc-example-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("offers.jsonl");
        let request = OfferRequest {
            message: Envelope {
                message_id: "message_1".into(),
                body: "hello".into(),
                ..Envelope::default()
            },
            endpoint_ref: file.to_string_lossy().into_owned(),
            ..OfferRequest::default()
        };
        let accepted = new("{}")
            .expect("adapter")
            .offer(request.clone())
            .expect("offer");
        assert!(accepted.accepted && !accepted.pending_approval);
        let refused = new(r#"{"offers":"refuse","refuseCode":"recipient_busy"}"#)
            .expect("adapter")
            .offer(request)
            .expect("offer");
        assert_eq!(
            (refused.accepted, refused.code.as_deref()),
            (false, Some("recipient_busy"))
        );
        let written = std::fs::read_to_string(&file).expect("file");
        assert_eq!(written.lines().count(), 1, "but not delivered twice");
        assert!(written.contains("hello"));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(new(r#"{"surprise":1}"#).is_err());
    }
}

//! The contract capture tool: record what a client really does, as a capture file.
//!
//! Owns: driving the delivery branches where a client can be driven on this machine, and
//! writing down exactly what was observed. Must not: record a branch it did not observe, or
//! claim a pass with an unobserved branch.
//!
//! It captures the `example` client (the example adapter's file transport) through the real
//! router in a throwaway workspace, Codex (`codex`) through a daemon it starts itself, and
//! Claude Code (`claude`) in a throwaway `HOME` against a model API it serves on loopback.

pub mod claude;
pub mod codex;
pub mod model;
pub mod wire;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use acc_adapter_api::wire::{OfferRequest, ProbeAnswer, ProbeRequest};
use sha2::{Digest, Sha256};

use acc_host::clock::{Clock, SystemClock};
use acc_host::contracts::{Branches, CAPTURE_SCHEMA, Capture, Provenance, check_capture};
use acc_host::core::messages::{ReplyRequest, SendRequest};
use acc_host::core::{Caller, Core, SessionSpec};
use acc_host::delivery::App;
use acc_host::delivery::platform;
use acc_host::error::{AccError, AccResult, ErrorCode};
use acc_host::plugins::{DEFAULT_DEADLINE, LoadedAdapter, Operation, Plugins, search_path};
use acc_host::workspace;

pub fn failed(what: &str, detail: impl std::fmt::Display) -> AccError {
    AccError::new(ErrorCode::InvalidData, format!("capture: {what}: {detail}"))
}

pub fn attach(core: &mut Core, participant: &str) -> AccResult<Caller> {
    let opened = core.open_session(
        &SessionSpec {
            participant_id: participant.into(),
            session_key: None,
            harness: "cli".into(),
            client_version: None,
            checkout: None,
            branch: None,
            pid: None,
            enforcement: acc_host::store::Enforcement::Advisory,
            lifecycle: acc_host::store::Lifecycle::Manual,
        },
        None,
    )?;
    Ok(Caller {
        session_id: opened.session.session_id,
        generation: opened.generation_token,
    })
}

fn plugins(config: &str) -> Arc<Plugins> {
    let mut configs = BTreeMap::new();
    configs.insert("example".to_string(), config.to_string());
    Arc::new(Plugins::load_from(search_path(), &configs))
}

pub fn question(to: &str) -> SendRequest {
    SendRequest {
        to: vec![to.into()],
        kind: Some("question".into()),
        subject: "capture".into(),
        body: "a capture probe".into(),
        ..SendRequest::default()
    }
}

/// The loaded adapter `adapter_id`, its read-only probe of the installed client (within
/// `timeout`, the call itself within `deadline`) and the version the client reported.
pub fn probed(
    plugins: &Plugins,
    adapter_id: &str,
    timeout: Duration,
    deadline: Duration,
) -> AccResult<(LoadedAdapter, ProbeAnswer, String)> {
    let Some(adapter) = plugins.get(adapter_id).cloned() else {
        return Err(failed(
            &format!("the {adapter_id} adapter is not installed"),
            "see acc adapters",
        ));
    };
    let request = ProbeRequest {
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let answer = adapter
        .call(
            Operation::Probe,
            serde_json::to_string(&request).unwrap_or_default(),
            deadline,
        )
        .map_err(|f| failed("probe", f.message))?;
    let probe: ProbeAnswer =
        serde_json::from_str(answer.payload.as_str()).map_err(|e| failed("probe answer", e))?;
    let version = probe
        .client_version
        .clone()
        .ok_or_else(|| failed("probe", "the client reported no version"))?;
    Ok((adapter, probe, version))
}

/// A client's observed branches, in the capture's order.
pub struct Observed<'a> {
    pub idle: &'a str,
    pub busy: &'a str,
    pub reply: &'a str,
    pub duplicate: &'a str,
    pub fallback: &'a str,
}

/// The capture of a client observed here by driving it: `pass` only when every branch was
/// observed and nothing was found missing; checked by the validator before it is returned.
pub fn captured_here(
    client: &str,
    version: String,
    launch_mode: &str,
    probe: ProbeAnswer,
    observed: Observed<'_>,
    limitations: Vec<String>,
) -> AccResult<Capture> {
    let branches = [
        observed.idle,
        observed.busy,
        observed.reply,
        observed.duplicate,
        observed.fallback,
    ];
    let pass = branches.iter().all(|b| *b != "unobserved") && limitations.is_empty();
    let capture = Capture {
        schema: CAPTURE_SCHEMA.into(),
        client: client.into(),
        version,
        platform: platform(),
        observed_at: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        launch_mode: launch_mode.into(),
        protocol_contract: probe.protocol_contract.unwrap_or_default(),
        executable_sha256: probe
            .executable_sha256
            .unwrap_or_else(|| "unavailable".into()),
        capability: "livePush".into(),
        result: if pass { "pass".into() } else { "fail".into() },
        provenance: Provenance::CapturedHere,
        branches: Branches {
            idle: observed.idle.into(),
            busy: observed.busy.into(),
            reply: observed.reply.into(),
            duplicate: observed.duplicate.into(),
            fallback: observed.fallback.into(),
        },
        limitations,
    };
    let problems = check_capture(&capture);
    if !problems.is_empty() {
        return Err(failed("the capture is not valid", problems.join("; ")));
    }
    Ok(capture)
}

/// Capture the `example` client. Returns the capture (also checked by the validator).
pub fn capture_example() -> AccResult<Capture> {
    let temp = std::env::temp_dir().join(format!(
        "acc-capture-{}-{}",
        std::process::id(),
        SystemClock::default().now_ms()
    ));
    let project = temp.join("project");
    std::fs::create_dir_all(&project).map_err(|e| failed("temporary workspace", e))?;
    let result = drive_example(&temp, &project);
    let _ = std::fs::remove_dir_all(&temp);
    result
}

// One capture is one script (see `claude::drive`).
#[allow(clippy::too_many_lines)]
fn drive_example(temp: &Path, project: &Path) -> AccResult<Capture> {
    let ws = workspace::discover(project)?;
    let mut app = App::new(Core::new(
        ws,
        temp.join("data").join("acc"),
        Arc::new(SystemClock::default()),
        acc_host::process::liveness(),
    )?);
    app.delivery.set_plugins(plugins("{}"));
    // The capture produces the evidence: it cannot wait for it.
    app.delivery.admission = acc_host::delivery::Admission::Declared;
    let (adapter, probe, version) = probed(
        app.delivery.plugins()?,
        "example",
        Duration::from_secs(3),
        DEFAULT_DEADLINE,
    )?;
    let alice = attach(&mut app.core, "alice")?;
    let bob = attach(&mut app.core, "bob")?;
    let endpoint = |who: &str| {
        acc_host::wire::json(&wire::ExampleEndpoint {
            file: &temp.join(format!("{who}.jsonl")),
        })
    };
    app.bind(&bob, "example", "all", &endpoint("bob"))?;
    app.bind(&alice, "example", "all", &endpoint("alice"))?;
    let mut limitations = Vec::new();

    // idle: a question to a bound, idle recipient is offered.
    let sent = app.send_message(&alice, &question("bob"))?;
    let idle = if sent
        .delivery
        .first()
        .is_some_and(|d| d.outcome == "offered")
    {
        "offered"
    } else {
        "unobserved"
    };
    if idle == "unobserved" {
        limitations.push(format!(
            "idle: the offer ended as {:?}",
            sent.delivery.first().map(|d| &d.outcome)
        ));
    }
    // duplicate: offering the same message again does not deliver it twice.
    let bob_file = temp.join("bob.jsonl");
    let request = OfferRequest {
        message: acc_host::delivery::envelope(&sent.message, &app.core.workspace.id),
        recipient_participant_id: "bob".into(),
        target_session_id: bob.session_id.clone(),
        target_generation: 1,
        endpoint_ref: bob_file.to_string_lossy().into_owned(),
        client_version: version.clone(),
        timeout_ms: None,
    };
    let again = adapter.call(
        Operation::Offer,
        serde_json::to_string(&request).unwrap_or_default(),
        DEFAULT_DEADLINE,
    );
    let lines = std::fs::read_to_string(&bob_file).unwrap_or_default();
    let count = lines
        .lines()
        .filter(|l| l.contains(&sent.message.message.message_id))
        .count();
    let duplicate = if again.is_ok() && count == 1 {
        "same-message-id"
    } else {
        "unobserved"
    };
    if duplicate == "unobserved" {
        limitations.push(format!(
            "duplicate: the message appears {count} times after a second offer"
        ));
    }
    // reply: the answer is routed back to the bound author.
    let reply = app.reply(
        &bob,
        &ReplyRequest {
            message_id: sent.message.message.message_id.clone(),
            body: "answer".into(),
            ..ReplyRequest::default()
        },
    )?;
    let routed = if reply
        .delivery
        .first()
        .is_some_and(|d| d.outcome == "offered")
    {
        "routed"
    } else {
        "unobserved"
    };
    if routed == "unobserved" {
        limitations.push("reply: the answer was not offered to its author".into());
    }
    // busy: a busy client refuses; the receipt stays queued.
    app.delivery.set_plugins(plugins(
        r#"{"offers":"refuse","refuseCode":"recipient_busy"}"#,
    ));
    let busy_sent = app.send_message(&alice, &question("bob"))?;
    let busy =
        if busy_sent.delivery.first().is_some_and(|d| {
            d.error_code.as_deref() == Some("recipient_busy") && d.outcome == "queued"
        }) {
            "rejected-busy"
        } else {
            "unobserved"
        };
    if busy == "unobserved" {
        limitations.push("busy: the busy refusal was not observed".into());
    }
    // fallback: without a binding the message waits durably.
    app.delivery.set_plugins(plugins("{}"));
    app.unbind(&bob, None)?;
    let fallback_sent = app.send_message(&alice, &question("bob"))?;
    let fallback = if fallback_sent
        .delivery
        .first()
        .is_some_and(|d| d.outcome == "queued" && d.transport == "durable")
    {
        "queued"
    } else {
        "unobserved"
    };
    if fallback == "unobserved" {
        limitations.push("fallback: the unbound recipient was not queued durably".into());
    }
    // The example client is the adapter's library itself: its fingerprint is that file's.
    let bytes = std::fs::read(&adapter.file).map_err(|e| failed("fingerprint", e))?;
    let mut probe = probe;
    probe.executable_sha256 = Some(acc_host::ids::hex(&Sha256::digest(&bytes)));
    captured_here(
        "example",
        version,
        "library",
        probe,
        Observed {
            idle,
            busy,
            reply: routed,
            duplicate,
            fallback,
        },
        limitations,
    )
}

/// Write a capture into `dir` as `<version>-<platform>.toml`; returns the file.
pub fn write(capture: &Capture, dir: &Path) -> AccResult<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| failed("output folder", e))?;
    let path = dir.join(format!("{}-{}.toml", capture.version, capture.platform));
    let text = toml::to_string(capture).map_err(|e| failed("encode", e))?;
    std::fs::write(
        &path,
        format!(
            "# Captured by `acc contract capture --client {}`; do not edit.\n{text}",
            capture.client
        ),
    )
    .map_err(|e| failed("write", e))?;
    Ok(path)
}

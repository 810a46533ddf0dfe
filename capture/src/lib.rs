//! The contract capture tool: record what a client really does, as a capture and its
//! transcript.
//!
//! Owns: driving the delivery branches where a client can be driven on this machine, and
//! writing down exactly what was observed. Must not: record a branch it did not observe, or
//! claim a pass with an unobserved branch (the verdicts are derived from the transcript, by the
//! rule `acc contract verify` applies again).
//!
//! One script ([`script`]) drives every client's live delivery, through a module per client
//! that ACC drives itself (each against a model API served on loopback, a terminal interface
//! on a pseudo-terminal where the client needs one: [`tui`]) and any other client through its
//! adapter author's capture driver ([`driver`]), named in the adapter's contract (the `example`
//! adapter ships one). The write guard of ACC's hooks in every hooked client is captured by
//! [`guard`].

pub mod claude;
pub mod codex;
pub mod driver;
pub mod gemini;
pub mod guard;
pub mod model;
pub mod opencode;
pub mod qwen;
pub mod record;
pub mod script;
pub mod tui;
pub mod wire;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use acc_adapter_api::wire::{ProbeAnswer, ProbeRequest};

use acc_core::error::{AccError, AccResult, ErrorCode};
use acc_core::{Caller, Core, SessionSpec};
use acc_delivery::contracts::{Evidence, search_path as contract_dirs};
use acc_delivery::plugins::{LoadedAdapter, Operation, Plugins, search_path};
use record::Finished;

pub fn failed(what: &str, detail: impl std::fmt::Display) -> AccError {
    AccError::new(ErrorCode::InvalidData, format!("capture: {what}: {detail}"))
}

pub fn attach(core: &mut Core, participant: &str) -> AccResult<Caller> {
    reattach(core, participant, None)
}

/// A shell session of `participant`, as `acc attach` opens it: a new one, or `resume` (a
/// session id of it) again with a new generation.
pub fn reattach(core: &mut Core, participant: &str, resume: Option<&str>) -> AccResult<Caller> {
    let opened = core.open_session(
        &SessionSpec {
            participant_id: participant.into(),
            session_key: None,
            harness: acc_core::identity::Harness::Cli,
            client_version: None,
            checkout: None,
            branch: None,
            pid: None,
            enforcement: acc_store::Enforcement::Advisory,
            lifecycle: acc_store::Lifecycle::Manual,
        },
        resume,
    )?;
    Ok(Caller {
        session_id: opened.session.session_id,
        generation: opened.generation_token,
    })
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

/// Capture `client`: Codex, Claude Code and Gemini CLI by the tool itself, any other through the driver
/// its adapter's contract names (or `driver`, when given). With `write_guard`, the write guard
/// of ACC's hooks in one of the hooked clients (`acc_clients::Client::ALL`) instead ([`guard`]).
pub fn capture(client: &str, driver: Option<&Path>, write_guard: bool) -> AccResult<Finished> {
    if write_guard {
        return match acc_clients::Client::parse(client) {
            Some(known) => guard::capture_write_guard(known),
            None => Err(AccError::usage(format!(
                "--write-guard captures ACC's own hooks, in {}, not `{client}`",
                acc_clients::Client::spellings()
            ))),
        };
    }
    match client {
        "codex" => codex::capture_codex(),
        "claude-code" => claude::capture_claude(),
        "qwen" => qwen::capture_qwen(),
        "opencode" => opencode::capture_opencode(),
        "gemini" => gemini::capture_gemini(),
        other => capture_driven(other, driver),
    }
}

fn capture_driven(client: &str, driver: Option<&Path>) -> AccResult<Finished> {
    let dirs = contract_dirs();
    let evidence = Evidence::load(&dirs);
    let Some(contract) = evidence.contracts.values().find(|c| c.client == client) else {
        return Err(AccError::usage(format!(
            "no contract for the client `{client}` in {} (acc contract capture drives the clients it has a driver of its own for; any other client needs its adapter's contract, with a driver, in a contracts folder)",
            acc_clients::list_folders(&dirs)
        )));
    };
    let plugins = Plugins::load_from(search_path(), &BTreeMap::new());
    let Some(adapter) = plugins
        .adapters
        .iter()
        .find(|a| a.contract.contract_id == contract.contract_id)
    else {
        return Err(failed(
            &format!(
                "the adapter declaring {} is not installed",
                contract.contract_id
            ),
            "see acc adapters",
        ));
    };
    let path = match (driver, &contract.driver) {
        (Some(path), _) => Some(path.to_path_buf()),
        (None, Some(name)) => driver::resolve(name, &adapter.file),
        (None, None) => {
            return Err(failed(
                &format!("contract {} names no capture driver", contract.contract_id),
                "add `driver = \"<program>\"` to it, or pass --driver",
            ));
        }
    };
    let path = path.filter(|p| p.is_file()).ok_or_else(|| {
        failed(
            "driver",
            format!(
                "{} was not found beside {} or on PATH",
                contract.driver.as_deref().unwrap_or("the driver"),
                adapter.file.display()
            ),
        )
    })?;
    let scratch = script::Scratch::new(client)?;
    let mut running = driver::Driver::spawn(&path)?;
    let adapter_id = adapter.adapter_id.clone();
    script::run(&mut running, &adapter_id, &scratch)
}

/// Install ACC's hooks for `client` into the throwaway `home` with the `acc` that sits beside
/// this tool (the hooks run it), its data in `data`; `extra` arguments follow (`--delivery`).
pub fn install_hooks(client: &str, home: &Path, data: &Path, extra: &[&str]) -> AccResult<()> {
    let acc = std::env::current_exe()
        .map_err(|e| failed("acc", e))?
        .with_file_name("acc");
    let installed = std::process::Command::new(&acc)
        .args(["--json", "install", "--client", client, "--home"])
        .arg(home)
        .args(extra)
        .env("HOME", home)
        .env("ACC_DATA_HOME", data)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("KIMI_CODE_HOME")
        .env_remove("QWEN_HOME")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| failed("acc install", e))?;
    if !installed.success() {
        return Err(failed("acc install", "installing the hooks failed"));
    }
    Ok(())
}

/// Write a capture into `dir` as `<version>-<platform>.toml` (`…-write-guard.toml` for a write
/// guard), its transcript beside it;
/// returns the capture's file. The transcript is written first: a capture never names a
/// transcript that is not there.
pub fn write(finished: &Finished, dir: &Path) -> AccResult<PathBuf> {
    let capture = &finished.capture;
    std::fs::create_dir_all(dir).map_err(|e| failed("output folder", e))?;
    if let Some(name) = &capture.transcript {
        write_whole(&dir.join(name), finished.transcript.as_bytes())?;
    }
    let path = dir.join(format!(
        "{}.toml",
        acc_delivery::contracts::capture_stem(
            &capture.version,
            &capture.platform,
            &capture.capability
        )
    ));
    let text = toml::to_string(capture).map_err(|e| failed("encode", e))?;
    let text = format!(
        "# Captured by `acc contract capture --client {}`; do not edit (acc contract verify\n# checks it against its transcript).\n{text}",
        capture.client
    );
    write_whole(&path, text.as_bytes())?;
    Ok(path)
}

/// Write a file whole: into a temporary file beside it, then renamed over it.
fn write_whole(path: &Path, bytes: &[u8]) -> AccResult<()> {
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(temp);
    std::fs::write(&temp, bytes)
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            failed(&format!("write {}", path.display()), e)
        })
}

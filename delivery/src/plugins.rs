//! Adapter plugins: discovery, loading, the version handshake, and calls under a deadline.
//!
//! Owns: finding adapter libraries, refusing each bad file with a short reason while carrying
//! on, and calling adapters so that no error, panic or hang reaches the host. Must not: give an
//! adapter the store, or call an adapter inside a store transaction.
//!
//! Loading a file: [`crate::inspect`] reads it as an object file without loading it (a regular
//! file in a directory only this user or root can write, a shared library of this platform,
//! ACC's marker as a data symbol: a file without it is not an ACC adapter; another ABI major
//! or an incompatible API version is refused naming both versions; an adapter built with
//! `panic = "abort"` is refused); only then does `abi_stable` open it and check the full layout (`lib_header_from_path` + `init_root_module`, never the caching
//! loaders, which return the first module for every file); then the constructor runs with the
//! adapter's configuration and `describe` answers. Libraries are never unloaded.

// abi_stable's loader opens the library; this module has no unsafe block of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use acc_adapter_api::abi_stable::std_types::{RResult, RStr};
use acc_adapter_api::wire::ContractDeclaration;
use acc_adapter_api::{AbiVersion, AdapterBox, AdapterError, AdapterModuleRef, Answer, OfferKind};

pub mod isolation;

/// How long describe, probe and render may take.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(3);
/// How long an offer may take.
pub const OFFER_DEADLINE: Duration = Duration::from_secs(5);
/// How an adapter file's name begins (then its short name and the platform's library suffix).
pub const FILE_PREFIX: &str = "libacc_adapter_";

/// A loaded adapter.
#[derive(Clone)]
pub struct LoadedAdapter {
    /// The library file.
    pub file: PathBuf,
    /// Adapter id.
    pub adapter_id: String,
    /// Transport name.
    pub transport: String,
    /// Offer kind.
    pub offer_kind: OfferKind,
    /// Features, as declared.
    pub features: Vec<String>,
    /// The API version it was built against.
    pub api_version: String,
    /// The contract it declares.
    pub contract: ContractDeclaration,
    pub(crate) runner: Runner,
}

/// Where an adapter's code runs.
#[derive(Clone)]
pub(crate) enum Runner {
    /// Loaded into this process.
    InProcess(Arc<AdapterBox>),
    /// In a short-lived helper process per call ([`isolation`]).
    Helper(Arc<isolation::Helper>),
}

/// How [`Plugins`] loads adapters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loading {
    /// Into this process (short-lived commands and hooks: a faulty adapter costs that one
    /// command).
    InProcess,
    /// Never into this process: each load and each call runs in a helper, this program run as
    /// `<program> adapter-host` (the long-lived `acc-mcp`, which a crashing adapter must not
    /// end).
    Helper(PathBuf),
}

impl std::fmt::Debug for LoadedAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedAdapter")
            .field("adapter_id", &self.adapter_id)
            .field("file", &self.file)
            .finish()
    }
}

/// A file that was not loaded, and why.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The file.
    pub file: PathBuf,
    /// A short readable reason.
    pub reason: String,
}

/// Everything discovered.
#[derive(Debug, Clone, Default)]
pub struct Plugins {
    /// The directories searched.
    pub search_path: Vec<PathBuf>,
    /// Adapters loaded, by file name order.
    pub adapters: Vec<LoadedAdapter>,
    /// Files refused.
    pub refused: Vec<Refusal>,
}

/// A failed adapter call: a safe closed code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFailure {
    /// `timeout`, `panic`, `unsupported`, or the adapter's own code.
    pub code: String,
    /// What happened.
    pub message: String,
}

/// The folders searched, in order of precedence (an adapter id found again later is refused
/// as a duplicate): beside the executable in a development build (`target/<profile>/`), the
/// install layout's `<exe dir>/../lib/acc/adapters`, the per-user `<data base>/acc/adapters`
/// (`~/.local/share/acc/adapters`; `acc adapters install` puts files there), then each folder
/// of `ACC_ADAPTER_PATH` (`:`-separated), which adds to the path.
pub fn search_path() -> Vec<PathBuf> {
    acc_clients::search_path(acc_clients::Places {
        dev: ".",
        installed: "../lib/acc/adapters",
        user: "adapters",
        env: "ACC_ADAPTER_PATH",
    })
}

/// Whether a file is named like a shared library of this platform.
fn is_library_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(std::env::consts::DLL_SUFFIX))
}

/// An adapter's configuration from `ACC_ADAPTER_CONFIG`: under its adapter id
/// (`codex-app-server`) or its file's short name (`codex_app_server`); `{}` when absent.
fn config_for(configs: &BTreeMap<String, String>, short_name: &str) -> String {
    configs
        .get(&short_name.replace('_', "-"))
        .or_else(|| configs.get(short_name))
        .cloned()
        .unwrap_or_else(|| "{}".into())
}

/// The short name of an adapter file (`libacc_adapter_example.so` → `example`), the key of its
/// configuration.
pub fn short_name(file: &Path) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    let stem = name.strip_suffix(std::env::consts::DLL_SUFFIX)?;
    stem.strip_prefix(FILE_PREFIX).map(str::to_string)
}

/// Adapter configurations from `ACC_ADAPTER_CONFIG`: a JSON object from short name to the
/// configuration object handed to that adapter's constructor.
pub fn configs_from_env() -> Result<BTreeMap<String, String>, String> {
    let Ok(text) = std::env::var("ACC_ADAPTER_CONFIG") else {
        return Ok(BTreeMap::new());
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("ACC_ADAPTER_CONFIG is not json: {e}"))?;
    let Some(object) = value.as_object() else {
        return Err(
            "ACC_ADAPTER_CONFIG must be a json object from adapter name to configuration".into(),
        );
    };
    Ok(object
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect())
}

fn host_version() -> AbiVersion {
    acc_adapter_api::abi_version()
}

fn version_text(v: &AbiVersion) -> String {
    format!("{}.{}.{}", v.api_major, v.api_minor, v.api_patch)
}

/// Check the file before any of its code runs ([`crate::inspect`]), then the versions its
/// marker names: another ABI major or API major is refused naming both versions.
fn check_marker(file: &Path) -> Result<AbiVersion, String> {
    let version = crate::inspect::inspect(file)?.version;
    let host = host_version();
    if version.abi_major != host.abi_major {
        return Err(format!(
            "incompatible adapter ABI: built for ABI {} (adapter-api {}), this host speaks ABI {} (adapter-api {})",
            version.abi_major,
            version_text(&version),
            host.abi_major,
            version_text(&host)
        ));
    }
    if version.api_major != host.api_major {
        return Err(format!(
            "incompatible adapter API version {}: this host speaks {}",
            version_text(&version),
            version_text(&host)
        ));
    }
    Ok(version)
}

/// Reduce an abi_stable error report (often hundreds of lines) to its `Error:` lines.
fn short_abi_error(report: &str) -> String {
    let errors: Vec<&str> = report
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("Error:"))
        .collect();
    let text = if errors.is_empty() {
        report.lines().next().unwrap_or("unknown error").to_string()
    } else {
        errors.join(" ")
    };
    text.chars().take(400).collect()
}

/// Check that `file` is an adapter that loads (every check the search path applies, then
/// construction with its configuration from `ACC_ADAPTER_CONFIG` and `describe`); the loaded
/// adapter, or why not.
pub fn check_file(file: &Path) -> Result<LoadedAdapter, String> {
    let configs = configs_from_env()?;
    let name = short_name(file).unwrap_or_default();
    load_file(file, &config_for(&configs, &name))
}

/// Load `file` with its configuration the way `loading` says.
fn load_by(loading: &Loading, file: &Path, config: &str) -> Result<LoadedAdapter, String> {
    match loading {
        Loading::InProcess => load_file(file, config),
        Loading::Helper(program) => isolation::describe(program, file, config),
    }
}

/// Load `file` into this process: every check, construction, `describe`.
pub(crate) fn load_file(file: &Path, config: &str) -> Result<LoadedAdapter, String> {
    let version = check_marker(file)?;
    let header = acc_adapter_api::abi_stable::library::lib_header_from_path(file)
        .map_err(|e| format!("no ACC root module: {}", short_abi_error(&e.to_string())))?;
    let module = header
        .init_root_module::<AdapterModuleRef>()
        .map_err(|e| format!("layout check failed: {}", short_abi_error(&e.to_string())))?;
    let constructor = module.new();
    let config = config.to_string();
    // Construction and `describe` share one thread (a thread costs a hook about 0.07 ms) and
    // each keeps its own deadline: the step that overran is the one named.
    let (steps, step) = mpsc::channel();
    let started = Instant::now();
    let built = PendingCall::start(move || {
        let object = match constructor(RStr::from(config.as_str())) {
            RResult::ROk(object) => object,
            RResult::RErr(error) => return Err(error),
        };
        let _ = steps.send(());
        let description = object.describe().into_result()?;
        Ok((object, description))
    });
    let built = built.map_err(|f| format!("init failed ({}): {}", f.code, f.message))?;
    let constructed = step.recv_timeout(DEFAULT_DEADLINE);
    let described_by = match constructed {
        Ok(()) => Instant::now() + DEFAULT_DEADLINE,
        // The constructor failed (its error is the answer) or overran its deadline.
        Err(_) => started + DEFAULT_DEADLINE,
    };
    let (object, description) = match built.wait_until(described_by) {
        Some(Ok(built)) => built,
        Some(Err(f)) if constructed.is_ok() => {
            return Err(format!("describe failed ({}): {}", f.code, f.message));
        }
        Some(Err(f)) => return Err(format!("init failed ({}): {}", f.code, f.message)),
        None if constructed.is_ok() => {
            let f = timed_out(DEFAULT_DEADLINE);
            return Err(format!("describe failed ({}): {}", f.code, f.message));
        }
        None => {
            let f = timed_out(DEFAULT_DEADLINE);
            return Err(format!("init failed ({}): {}", f.code, f.message));
        }
    };
    let contract: ContractDeclaration = serde_json::from_str(description.contract.as_str())
        .map_err(|e| format!("invalid contract declaration: {e}"))?;
    Ok(LoadedAdapter {
        file: file.to_path_buf(),
        adapter_id: description.adapter_id.to_string(),
        transport: description.transport.to_string(),
        offer_kind: description.offer_kind,
        features: description
            .features
            .iter()
            .map(|f| f.to_string())
            .filter(|f| acc_adapter_api::KNOWN_FEATURES.contains(&f.as_str()))
            .collect(),
        api_version: version_text(&version),
        contract,
        runner: Runner::InProcess(Arc::new(object)),
    })
}

/// A call running on its own thread: wait for it under a deadline, or look later whether it
/// answered. A call in this process that hangs is abandoned (its thread keeps running until the
/// process ends); a call in a helper process ends with it: dropping the pending call kills the
/// helper if it is still running.
#[derive(Debug)]
pub struct PendingCall<T> {
    receiver: mpsc::Receiver<Result<T, CallFailure>>,
    _helper: Option<isolation::Running>,
}

impl<T: Send + 'static> PendingCall<T> {
    /// Start `f` on its own thread.
    pub fn start(
        f: impl FnOnce() -> Result<T, AdapterError> + Send + 'static,
    ) -> Result<Self, CallFailure> {
        Self::on_thread(move || f().map_err(failure), || {}, None)
    }

    /// Run `f` on its own thread, then `after` there once its answer was sent; `helper` is the
    /// process it talks to, if any.
    pub(crate) fn on_thread(
        f: impl FnOnce() -> Result<T, CallFailure> + Send + 'static,
        after: impl FnOnce() + Send + 'static,
        helper: Option<isolation::Running>,
    ) -> Result<Self, CallFailure> {
        let (sender, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("acc-adapter-call".into())
            .spawn(move || {
                let _ = sender.send(f());
                after();
            })
            .map_err(|e| CallFailure {
                code: "transport_error".into(),
                message: format!("cannot start the call: {e}"),
            })?;
        Ok(Self {
            receiver,
            _helper: helper,
        })
    }

    /// The answer if it comes by `deadline`; `None` while the call is still running then.
    pub fn wait_until(&self, deadline: Instant) -> Option<Result<T, CallFailure>> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.receiver.recv_timeout(left) {
            Ok(answer) => Some(answer),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => Some(Err(ended())),
        }
    }
}

fn failure(error: AdapterError) -> CallFailure {
    CallFailure {
        code: error.code.to_string(),
        message: error.message.to_string(),
    }
}

fn ended() -> CallFailure {
    CallFailure {
        code: "panic".into(),
        message: "the adapter call ended without an answer".into(),
    }
}

pub(crate) fn timed_out(deadline: Duration) -> CallFailure {
    CallFailure {
        code: "timeout".into(),
        message: format!("the adapter did not answer within {deadline:?}"),
    }
}

/// The operations of an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Probe the installed client.
    Probe,
    /// Verify a session endpoint.
    Handshake,
    /// Offer a message.
    Offer,
    /// Render next-turn context.
    Render,
}

impl Operation {
    /// Every operation.
    pub const ALL: [Self; 4] = [Self::Probe, Self::Handshake, Self::Offer, Self::Render];

    /// Its name (the adapter API's method).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Probe => "probe",
            Self::Handshake => "handshake",
            Self::Offer => "offer",
            Self::Render => "render",
        }
    }

    /// The operation named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

impl LoadedAdapter {
    /// Start an operation on its own thread (several offers run at once under one deadline).
    pub fn start(
        &self,
        operation: Operation,
        request: String,
    ) -> Result<PendingCall<Answer>, CallFailure> {
        let object = match &self.runner {
            Runner::InProcess(object) => object.clone(),
            Runner::Helper(helper) => return isolation::start(helper, operation, request),
        };
        PendingCall::start(move || {
            let request = RStr::from(request.as_str());
            match operation {
                Operation::Probe => object.probe(request),
                Operation::Handshake => object.handshake(request),
                Operation::Offer => object.offer(request),
                Operation::Render => object.render(request),
            }
            .into_result()
        })
    }

    /// Call an operation with a JSON request under `deadline`; a call still running then is
    /// reported as `timeout`.
    pub fn call(
        &self,
        operation: Operation,
        request: String,
        deadline: Duration,
    ) -> Result<Answer, CallFailure> {
        self.start(operation, request)?
            .wait_until(Instant::now() + deadline)
            .unwrap_or_else(|| Err(timed_out(deadline)))
    }
}

impl Plugins {
    /// Discover and load every adapter in the search path.
    pub fn load(configs: &BTreeMap<String, String>) -> Self {
        Self::load_from(search_path(), configs)
    }

    /// Discover and load every adapter in `dirs` into this process.
    pub fn load_from(dirs: Vec<PathBuf>, configs: &BTreeMap<String, String>) -> Self {
        Self::load_via(dirs, configs, &Loading::InProcess)
    }

    /// Discover and load every adapter in `dirs` the way `loading` says.
    pub fn load_via(
        dirs: Vec<PathBuf>,
        configs: &BTreeMap<String, String>,
        loading: &Loading,
    ) -> Self {
        let mut plugins = Plugins {
            search_path: dirs.clone(),
            ..Plugins::default()
        };
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().and_then(|d| std::fs::canonicalize(d).ok()));
        // Folders in order of precedence; files sorted within each; a file reached twice (two
        // entries naming one folder) is taken once.
        let mut files: Vec<PathBuf> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for dir in &dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            // The executable's own folder holds other build products; elsewhere a library not
            // named like an adapter is reported, not passed over in silence.
            let report_misnamed = std::fs::canonicalize(dir).ok() != exe_dir;
            let mut in_dir = Vec::new();
            for entry in entries.flatten() {
                let path = entry.path();
                // Every file named like an adapter is listed: loaded, or refused with why
                // (a directory, a fifo or a device by that name included).
                if short_name(&path).is_some() {
                    in_dir.push(path);
                } else if report_misnamed && is_library_name(&path) {
                    plugins.refused.push(Refusal {
                        reason: format!(
                            "not loaded: an adapter file must be named {FILE_PREFIX}<name>{} (acc adapters install names it)",
                            std::env::consts::DLL_SUFFIX
                        ),
                        file: path,
                    });
                }
            }
            in_dir.sort();
            for path in in_dir {
                if seen.insert(std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone())) {
                    files.push(path);
                }
            }
        }
        for file in files {
            let name = short_name(&file).unwrap_or_default();
            let config = config_for(configs, &name);
            match load_by(loading, &file, &config) {
                Ok(adapter) => {
                    if let Some(first) = plugins
                        .adapters
                        .iter()
                        .find(|a| a.adapter_id == adapter.adapter_id)
                    {
                        plugins.refused.push(Refusal {
                            reason: format!(
                                "duplicate adapter id `{}` (already loaded from {})",
                                adapter.adapter_id,
                                first.file.display()
                            ),
                            file,
                        });
                    } else {
                        plugins.adapters.push(adapter);
                    }
                }
                Err(reason) => plugins.refused.push(Refusal { file, reason }),
            }
        }
        plugins
    }

    /// Load only the adapter whose file has this short name (`next-turn` is
    /// `libacc_adapter_next_turn`), for paths that need one adapter and should not pay for the
    /// others.
    pub fn load_named(
        dirs: Vec<PathBuf>,
        configs: &BTreeMap<String, String>,
        adapter_id: &str,
        loading: &Loading,
    ) -> Self {
        let name = adapter_id.replace('-', "_");
        let file = format!("{FILE_PREFIX}{name}{}", std::env::consts::DLL_SUFFIX);
        let mut plugins = Plugins {
            search_path: dirs.clone(),
            ..Plugins::default()
        };
        if let Some(path) = dirs.iter().map(|d| d.join(&file)).find(|p| p.is_file()) {
            let config = config_for(configs, &name);
            match load_by(loading, &path, &config) {
                Ok(adapter) if adapter.adapter_id == adapter_id => plugins.adapters.push(adapter),
                Ok(adapter) => plugins.refused.push(Refusal {
                    reason: format!(
                        "expected adapter `{adapter_id}`, the file declares `{}`",
                        adapter.adapter_id
                    ),
                    file: path,
                }),
                Err(reason) => plugins.refused.push(Refusal { file: path, reason }),
            }
        }
        plugins
    }

    /// The adapter with this id.
    pub fn get(&self, adapter_id: &str) -> Option<&LoadedAdapter> {
        self.adapters.iter().find(|a| a.adapter_id == adapter_id)
    }
}

//! The stable interface between the ACC host and its delivery adapters.
//!
//! An adapter is a native library (`cdylib`) loaded by the host at run time. This crate is
//! all an adapter author depends on. It declares:
//!
//! - the root module [`AdapterModule`] (an `abi_stable` prefix type, so fields can be appended
//!   without breaking older hosts) with one constructor, [`AdapterModule::new`];
//! - the adapter object [`Adapter`] (a `#[sabi_trait]`): five operations, each taking a JSON
//!   request and returning a typed answer, frozen since API 1.0;
//! - the request and answer payloads, defined with serde in [`wire`] and carried as JSON text,
//!   so they can grow without changing the binary surface;
//! - the marker [`Marker`], a plain data static named [`MARKER_SYMBOL`] that the host reads
//!   from the file, without loading it, before anything else: its magic bytes say the file is
//!   an ACC adapter, and it carries the ABI major, the API version and whether the library was
//!   built to unwind panics (one built with `panic = "abort"` is refused: a panic in it would
//!   end the host's process). Since API 1.2; a file without it is refused with the reason;
//! - [`export_adapter!`], which an adapter calls once: it exports the marker, the root module
//!   and a C function returning the version (for hosts before 1.2), and wraps every operation
//!   in [`guard`], so no panic ever crosses the boundary.
//!
//! Authors implement the ordinary Rust trait [`AdapterImpl`] and never touch FFI types.
//!
//! # Versioning
//!
//! The host admits an adapter whose [`ABI_MAJOR`] equals its own and whose API version has the
//! same major as the host's, its minor older or newer (from 1.2, the first with the marker): a
//! newer minor may add JSON fields, features and payload types, which the older side ignores.
//! Libraries built against 1.0 or 1.1 (no marker) and libraries built with `panic = "abort"` are
//! refused. This crate's README states the policy in full.

#![deny(missing_docs)]
// `#[sabi_trait]` expands to impls that trip this lint on current compilers.
#![allow(non_local_definitions)]
// The `abi_stable` derives and `#[sabi_trait]` expand to unsafe blocks and unsafe trait
// impls; this crate's own code contains no unsafe block.
#![allow(unsafe_code)]

use std::panic::{AssertUnwindSafe, catch_unwind};

use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RBox, RResult, RStr, RString, RVec};
use abi_stable::{StableAbi, declare_root_module_statics, package_version_strings, sabi_trait};

pub mod wire;

pub use abi_stable;
pub use serde_json;

/// Major version of the binary interface. A host refuses an adapter of another major.
pub const ABI_MAJOR: u32 = 1;
/// The version of this crate, which is the adapter API version.
pub const API_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Name of the plain C-ABI symbol returning [`AbiVersion`] (what hosts before 1.2 call).
pub const ACC_ADAPTER_ABI_SYMBOL: &[u8] = b"acc_adapter_abi_version\0";
/// Name of the data symbol holding the adapter's [`Marker`].
pub const MARKER_SYMBOL: &str = "acc_adapter_marker";
/// The first eight bytes of every [`Marker`].
pub const MARKER_MAGIC: [u8; 8] = *b"ACC-ADPT";

/// What the host reads from an adapter file before loading it: a `repr(C)` data static of
/// `size_of::<Marker>()` bytes (32), little- or big-endian as the platform is.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// [`MARKER_MAGIC`].
    pub magic: [u8; 8],
    /// The ABI major and API version the adapter was built against.
    pub version: AbiVersion,
    /// 1 when the library unwinds panics (`panic = "unwind"`), 0 when it aborts.
    pub panic_unwind: u32,
    /// Zero; room for a later field.
    pub reserved: u32,
}

/// Parse a decimal number at compile time (the crate's version parts).
const fn parse_u32(text: &str) -> u32 {
    let bytes = text.as_bytes();
    let mut value = 0u32;
    let mut i = 0;
    while i < bytes.len() {
        value = value * 10 + (bytes[i] - b'0') as u32;
        i += 1;
    }
    value
}

/// The [`AbiVersion`] of this build of the crate, at compile time.
pub const ABI_VERSION: AbiVersion = AbiVersion {
    abi_major: ABI_MAJOR,
    api_major: parse_u32(env!("CARGO_PKG_VERSION_MAJOR")),
    api_minor: parse_u32(env!("CARGO_PKG_VERSION_MINOR")),
    api_patch: parse_u32(env!("CARGO_PKG_VERSION_PATCH")),
};

/// The marker of an adapter built against `version`, unwinding panics or not.
pub const fn marker(version: AbiVersion, panic_unwind: bool) -> Marker {
    Marker {
        magic: MARKER_MAGIC,
        version,
        panic_unwind: panic_unwind as u32,
        reserved: 0,
    }
}
/// The adapter features this API defines; a host ignores unknown ones.
pub const KNOWN_FEATURES: &[&str] = &["probe", "handshake", "offer", "render"];

/// What the C-ABI version symbol returns: the ABI major and the API version triple.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbiVersion {
    /// [`ABI_MAJOR`] of the adapter-api the adapter was built against.
    pub abi_major: u32,
    /// API (crate) major version.
    pub api_major: u32,
    /// API minor version.
    pub api_minor: u32,
    /// API patch version.
    pub api_patch: u32,
}

/// The [`AbiVersion`] of this build of the crate.
pub fn abi_version() -> AbiVersion {
    ABI_VERSION
}

/// How an adapter delivers.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferKind {
    /// Carries the message text into the recipient's client.
    Message,
    /// Only wakes the client; the body arrives through next-turn.
    Wake,
    /// Renders bodies into the next turn's context (next-turn transports).
    Body,
}

impl OfferKind {
    /// Stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::Wake => "wake",
            Self::Body => "body",
        }
    }
}

/// What became of an offer.
#[repr(u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferStatus {
    /// The transport or client accepted the bytes.
    Accepted,
    /// The client took it but holds it for its user's approval.
    AcceptedPendingApproval,
    /// Refused; the answer's `code` says why, in the safe closed vocabulary.
    Refused,
}

/// An error from an adapter: a safe closed code and a short message (never peer text).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct AdapterError {
    /// A closed code (`unsupported`, `panic`, `invalid_request`, `transport_error`, ...).
    pub code: RString,
    /// What happened.
    pub message: RString,
}

impl AdapterError {
    /// A new error.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: RString::from(message.into()),
        }
    }

    /// The operation is declined by this adapter.
    pub fn unsupported(operation: &str) -> Self {
        Self::new(
            "unsupported",
            format!("this adapter does not implement {operation}"),
        )
    }
}

/// What [`Adapter::describe`] answers.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct Description {
    /// Unique adapter id (`example`, `next-turn`, `claude-inbox`).
    pub adapter_id: RString,
    /// Transport name from the fixed vocabulary, or the adapter id for third-party transports.
    pub transport: RString,
    /// How it delivers.
    pub offer_kind: OfferKind,
    /// Features implemented (see [`KNOWN_FEATURES`]).
    pub features: RVec<RString>,
    /// The capability contract it declares, as JSON ([`wire::ContractDeclaration`]).
    pub contract: RString,
}

/// A typed answer with the grown part as JSON text.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// For offers: accepted, pending approval, or refused.
    pub status: OfferStatus,
    /// A safe closed code (empty when there is none).
    pub code: RString,
    /// The client version that answered (empty when unknown).
    pub client_version: RString,
    /// The operation's answer payload as JSON (see [`wire`]).
    pub payload: RString,
}

/// The adapter object. Every method is wrapped by [`guard`] through [`export_adapter!`].
#[sabi_trait]
pub trait Adapter: Send + Sync {
    /// Describe the adapter: id, transport, offer kind, features, contract.
    fn describe(&self) -> RResult<Description, AdapterError>;

    /// Probe the installed client, read-only ([`wire::ProbeRequest`] → [`wire::ProbeAnswer`]).
    fn probe(&self, request: RStr<'_>) -> RResult<Answer, AdapterError>;

    /// Verify a session's endpoint ([`wire::HandshakeRequest`] → [`wire::HandshakeAnswer`]).
    fn handshake(&self, request: RStr<'_>) -> RResult<Answer, AdapterError>;

    /// Offer one message ([`wire::OfferRequest`] → status, code, client version).
    fn offer(&self, request: RStr<'_>) -> RResult<Answer, AdapterError>;

    /// Render next-turn context ([`wire::RenderRequest`] → [`wire::RenderAnswer`]).
    #[sabi(last_prefix_field)]
    fn render(&self, request: RStr<'_>) -> RResult<Answer, AdapterError>;
}

/// The boxed adapter object handed across the boundary.
pub type AdapterBox = Adapter_TO<'static, RBox<()>>;

/// The root module every adapter library exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = AdapterModuleRef)))]
#[sabi(missing_field(option))]
pub struct AdapterModule {
    /// Build the adapter from its configuration (JSON text, `{}` when none is given).
    #[sabi(last_prefix_field)]
    pub new: extern "C" fn(config: RStr<'_>) -> RResult<AdapterBox, AdapterError>,
}

impl RootModule for AdapterModuleRef {
    declare_root_module_statics! {AdapterModuleRef}
    const BASE_NAME: &'static str = "acc_adapter";
    const NAME: &'static str = "acc_adapter";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// Run `f`, turning a panic into an [`AdapterError`] with code `panic`. Every exported method
/// goes through this, so a panic never unwinds into the host.
pub fn guard<T>(f: impl FnOnce() -> Result<T, AdapterError>) -> RResult<T, AdapterError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => RResult::ROk(value),
        Ok(Err(error)) => RResult::RErr(error),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            RResult::RErr(AdapterError::new(
                "panic",
                format!("the adapter panicked: {message}"),
            ))
        }
    }
}

/// What an adapter author implements: ordinary Rust with serde types. Operations an adapter
/// does not offer keep the default, which declines with `unsupported`.
pub trait AdapterImpl: Send + Sync + 'static {
    /// Describe the adapter.
    fn describe(&self) -> Result<wire::Describe, AdapterError>;

    /// Probe the installed client (read-only).
    fn probe(&self, _request: wire::ProbeRequest) -> Result<wire::ProbeAnswer, AdapterError> {
        Err(AdapterError::unsupported("probe"))
    }

    /// Verify a session endpoint and describe the binding.
    fn handshake(
        &self,
        _request: wire::HandshakeRequest,
    ) -> Result<wire::HandshakeAnswer, AdapterError> {
        Err(AdapterError::unsupported("handshake"))
    }

    /// Offer one message.
    fn offer(&self, _request: wire::OfferRequest) -> Result<wire::OfferAnswer, AdapterError> {
        Err(AdapterError::unsupported("offer"))
    }

    /// Render next-turn context.
    fn render(&self, _request: wire::RenderRequest) -> Result<wire::RenderAnswer, AdapterError> {
        Err(AdapterError::unsupported("render"))
    }
}

fn parse<T: serde::de::DeserializeOwned>(
    operation: &str,
    request: RStr<'_>,
) -> Result<T, AdapterError> {
    serde_json::from_str(request.as_str()).map_err(|e| {
        AdapterError::new(
            "invalid_request",
            format!("{operation} request is not valid: {e}"),
        )
    })
}

fn payload<T: serde::Serialize>(value: &T) -> Result<RString, AdapterError> {
    serde_json::to_string(value)
        .map(RString::from)
        .map_err(|e| AdapterError::new("invalid_answer", format!("cannot encode the answer: {e}")))
}

fn answer<T: serde::Serialize>(
    status: OfferStatus,
    code: &str,
    client_version: &str,
    value: &T,
) -> Result<Answer, AdapterError> {
    Ok(Answer {
        status,
        code: code.into(),
        client_version: client_version.into(),
        payload: payload(value)?,
    })
}

/// Wraps an [`AdapterImpl`] as an [`Adapter`], guarding and translating every call.
#[derive(Debug)]
pub struct Guarded<T>(pub T);

impl<T: AdapterImpl> Adapter for Guarded<T> {
    fn describe(&self) -> RResult<Description, AdapterError> {
        guard(|| {
            let d = self.0.describe()?;
            Ok(Description {
                adapter_id: d.adapter_id.into(),
                transport: d.transport.into(),
                offer_kind: d.offer_kind,
                features: d.features.into_iter().map(RString::from).collect(),
                contract: payload(&d.contract)?,
            })
        })
    }

    fn probe(&self, request: RStr<'_>) -> RResult<Answer, AdapterError> {
        guard(|| {
            let out = self.0.probe(parse("probe", request)?)?;
            answer(
                OfferStatus::Accepted,
                &out.reason,
                out.client_version.as_deref().unwrap_or(""),
                &out,
            )
        })
    }

    fn handshake(&self, request: RStr<'_>) -> RResult<Answer, AdapterError> {
        guard(|| {
            let out = self.0.handshake(parse("handshake", request)?)?;
            answer(OfferStatus::Accepted, "", &out.client_version, &out)
        })
    }

    fn offer(&self, request: RStr<'_>) -> RResult<Answer, AdapterError> {
        guard(|| {
            let out = self.0.offer(parse("offer", request)?)?;
            let status = match (out.accepted, out.pending_approval) {
                (true, false) => OfferStatus::Accepted,
                (true, true) => OfferStatus::AcceptedPendingApproval,
                (false, _) => OfferStatus::Refused,
            };
            answer(
                status,
                out.code.as_deref().unwrap_or(""),
                &out.client_version,
                &out,
            )
        })
    }

    fn render(&self, request: RStr<'_>) -> RResult<Answer, AdapterError> {
        guard(|| {
            let out = self.0.render(parse("render", request)?)?;
            answer(OfferStatus::Accepted, "", "", &out)
        })
    }
}

/// Build the boxed object for an implementation (used by [`export_adapter!`]).
pub fn boxed<T: AdapterImpl>(adapter: T) -> AdapterBox {
    Adapter_TO::from_value(Guarded(adapter), abi_stable::sabi_trait::TD_Opaque)
}

/// Export an adapter. `$constructor` is a function `fn(&str) -> Result<T, AdapterError>`
/// taking the configuration JSON, where `T: AdapterImpl`. This exports the root module and
/// the C-ABI version symbol, and guards the constructor and every operation against panics.
/// The `abi_version = ...` form overrides the reported version (for test fixtures only).
#[macro_export]
macro_rules! export_adapter {
    ($constructor:path) => {
        $crate::export_adapter!($constructor, abi_version = $crate::ABI_VERSION);
    };
    ($constructor:path, abi_version = $abi:expr) => {
        /// The marker the host reads from the file before loading it (`cfg!(panic)` is this
        /// library's own panic strategy).
        #[allow(unsafe_code, non_upper_case_globals)]
        #[unsafe(no_mangle)]
        #[used]
        pub static acc_adapter_marker: $crate::Marker =
            $crate::marker($abi, cfg!(panic = "unwind"));

        #[$crate::abi_stable::export_root_module]
        pub fn acc_adapter_root_module() -> $crate::AdapterModuleRef {
            use $crate::abi_stable::prefix_type::PrefixTypeTrait;
            $crate::AdapterModule {
                new: acc_adapter_new,
            }
            .leak_into_prefix()
        }

        extern "C" fn acc_adapter_new(
            config: $crate::abi_stable::std_types::RStr<'_>,
        ) -> $crate::abi_stable::std_types::RResult<$crate::AdapterBox, $crate::AdapterError> {
            $crate::guard(|| $constructor(config.as_str()).map($crate::boxed))
        }

        /// The plain C-ABI version symbol the host reads before anything else.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn acc_adapter_abi_version() -> $crate::AbiVersion {
            $abi
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Panicky;

    impl AdapterImpl for Panicky {
        fn describe(&self) -> Result<wire::Describe, AdapterError> {
            panic!("describe exploded")
        }
    }

    #[test]
    fn guard_turns_panics_into_errors_and_defaults_decline() {
        let adapter = boxed(Panicky);
        match adapter.describe() {
            RResult::RErr(error) => {
                assert_eq!(error.code.as_str(), "panic");
                assert!(error.message.as_str().contains("describe exploded"));
            }
            RResult::ROk(_) => panic!("expected an error"),
        }
        match adapter.offer(RStr::from("{}")) {
            RResult::RErr(error) => assert_eq!(error.code.as_str(), "invalid_request"),
            RResult::ROk(_) => panic!("expected an error"),
        }
        match adapter.render(RStr::from(
            r#"{"recipientParticipantId":"a","budgetBytes":10,"messages":[]}"#,
        )) {
            RResult::RErr(error) => assert_eq!(error.code.as_str(), "unsupported"),
            RResult::ROk(_) => panic!("expected an error"),
        }
        assert_eq!(abi_version().abi_major, ABI_MAJOR);
        assert_eq!(
            format!(
                "{}.{}.{}",
                abi_version().api_major,
                abi_version().api_minor,
                abi_version().api_patch
            ),
            API_VERSION
        );
    }
}

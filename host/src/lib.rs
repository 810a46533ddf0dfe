//! ACC host library: the durable coordination store, the protocol core, and the `acc` CLI.
//!
//! The binaries in `src/bin` stay thin: they parse arguments, call into this library, and map
//! results to exit codes. See `ARCHITECTURE.md` at the repository root for the code map.

pub mod capture;
pub mod cli;
pub mod clock;
pub mod contracts;
pub mod core;
pub mod delivery;
pub mod doctor;
pub mod error;
pub mod hooks;
pub mod ids;
pub mod install;
pub mod mcp;
pub mod plugins;
pub mod store;
pub mod views;
pub mod workspace;

pub use error::{AccError, ErrorCode};

/// Protocol version spoken by this build.
pub const PROTOCOL_VERSION: &str = "0.2";
/// Store schema version written and accepted by this build.
pub const SCHEMA_VERSION: i64 = 3;

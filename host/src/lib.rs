//! ACC host library: the durable coordination store, the protocol core, and the `acc` CLI.
//!
//! The binaries in `src/bin` stay thin: they parse arguments, call into this library, and map
//! results to exit codes. See `ARCHITECTURE.md` at the repository root for the code map.

pub mod cli;
pub mod delivery;
pub mod doctor;
pub mod guards;
pub mod hook_secret;
pub mod hooks;
pub mod install;
pub mod mcp;
pub mod process;
pub mod views;
pub mod wire;
pub mod workspace;

pub mod clock;

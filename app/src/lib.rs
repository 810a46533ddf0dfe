//! ACC's application layer: what every surface (the `acc` command line, `acc-mcp`, the client
//! hooks, the capture tool) does through the same services.
//!
//! Owns: opening a workspace (`workspace`), the system clock and process liveness the host
//! gives the core (`clock`, `process`), the application services (`services`: send = record
//! then route, bind, next-turn; the consent to live delivery comes in through
//! `acc_delivery::ConsentRecords`), the write guard's evidence (`guards`), the data
//! directory's hook secret (`hook_secret`), and the views and wire shapes every surface prints
//! (`views`, `wire`). Must not: know clap, ratatui, JSON-RPC or any client's configuration
//! format.

pub mod clock;
pub mod guards;
pub mod hook_secret;
pub mod process;
pub mod services;
pub mod views;
pub mod wire;
pub mod workspace;

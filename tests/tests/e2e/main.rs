//! End-to-end tests over the real built binaries. One binary, one module per feature area.

mod claims;
mod cli_contract;
mod concurrency;
mod contracts;
mod decisions;
mod hooks;
mod hooks_real;
mod install_safety;
mod layers;
mod mcp;
mod mcp_clients;
mod mcp_models;
mod messaging;
mod native_claude;
mod native_codex;
mod plugins;
mod router;
mod store_safety;
mod workspace_config;

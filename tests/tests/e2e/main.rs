//! End-to-end tests over the real built binaries, for what needs processes: concurrency,
//! crashes, hooks, real clients, plugin loading, MCP over pipes, the installer. One binary, one
//! module per feature area. The protocol's rules are in the scenario tests (`tests/scenarios`).

// An end-to-end test is one script against real processes, read top to bottom.
#![allow(clippy::too_many_lines)]

mod cli_contract;
mod client_lists;
mod concurrency;
mod contracts;
mod demo;
mod gemini;
mod guard_paths;
mod guards;
mod hooks;
mod hooks_real;
mod human_output;
mod install_layout;
mod install_safety;
mod journey;
mod kimi;
mod layers;
mod mcp;
mod mcp_clients;
mod mcp_models;
mod multi_host;
mod native_claude;
mod native_codex;
mod native_opencode;
mod native_qwen;
mod opencode;
mod peer_text;
mod pg_room;
mod pg_server;
mod plugins;
mod qwen;
mod reads;
mod room_cli;
mod room_faults;
mod room_wake;
mod router;
mod status_view;
mod store_layout;
mod store_safety;
mod watch;
mod workspace_config;

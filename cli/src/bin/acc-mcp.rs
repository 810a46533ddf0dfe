//! `acc-mcp`: the ACC MCP server on stdio. Configured only by `ACC_MCP_PARTICIPANT` and
//! `ACC_MCP_WORKSPACE`; stdout carries JSON-RPC only. Without `ACC_MCP_PARTICIPANT` it adopts
//! the hooked session of the client process that started it (`mcp::Identity::Adopt`).

use std::path::PathBuf;
use std::sync::Arc;

use acc_mcp::{Config, Identity, serve_blocking};

fn fail(message: &str) -> ! {
    eprintln!("acc-mcp: {message}");
    std::process::exit(2);
}

const USAGE: &str = "acc-mcp: the ACC MCP server on stdio (newline-delimited JSON-RPC). It takes no arguments; configure it with ACC_MCP_PARTICIPANT (who it speaks for; unset, the hooked session of the client that started it, else a participant of its own, `mcp-<client pid>`) and ACC_MCP_WORKSPACE (the project directory, default the launch directory). Register it with `acc install --client <client> --mcp`.";

/// Write to stdout (only outside the protocol: `--version`, `--help`).
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn main() {
    // `--version` and `--help` alone answer and exit, as every command does; anything else is
    // refused (the server reads only its environment).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let [only] = args.as_slice() {
        match only.to_str() {
            Some("--version" | "-V") => {
                say(&format!("acc-mcp {}\n", env!("CARGO_PKG_VERSION")));
                return;
            }
            Some("--help" | "-h") => {
                say(&format!("{USAGE}\n"));
                return;
            }
            _ => {}
        }
    }
    if !args.is_empty() {
        fail(
            "acc-mcp takes no command-line arguments; configure it with the environment variables ACC_MCP_PARTICIPANT (who it speaks for; unset, the hooked session of the client that started it, else a participant of its own, `mcp-<client pid>`) and ACC_MCP_WORKSPACE (the project directory, default the launch directory)",
        );
    }
    let identity = match std::env::var("ACC_MCP_PARTICIPANT")
        .ok()
        .filter(|p| !p.is_empty())
    {
        Some(participant) => {
            if let Err(error) =
                acc_core::ids::validate_portable_id("ACC_MCP_PARTICIPANT", &participant)
            {
                fail(&error.message);
            }
            Identity::Configured(participant)
        }
        None => Identity::Adopt {
            client_pid: acc_clients::process::client_pid(),
        },
    };
    let launch = std::env::current_dir()
        .unwrap_or_else(|e| fail(&format!("cannot read the launch directory: {e}")));
    let workspace_dir = match std::env::var_os("ACC_MCP_WORKSPACE").filter(|w| !w.is_empty()) {
        Some(dir) => launch.join(PathBuf::from(dir)),
        None => launch,
    };
    let clock = acc_app::clock::system_from_env().unwrap_or_else(|e| fail(&e.message));
    // Adapter code never runs in this long-lived process: each load and call runs in
    // `acc adapter-host`, the `acc` installed beside it (every layout puts both in one folder).
    let helper = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("acc")))
        .unwrap_or_else(|| PathBuf::from("acc"));
    let config = Config {
        identity,
        workspace_dir,
        data_dir: None,
        clock: Arc::new(clock),
        adapters: acc_delivery::plugins::Loading::Helper(helper),
        consent: Arc::new(acc_install::InstalledConsent),
    };
    // Read, answered and written on this thread: no runtime, no hand-over between threads.
    if let Err(error) = serve_blocking(std::io::stdin().lock(), std::io::stdout().lock(), config) {
        eprintln!("acc-mcp: i/o error: {error}");
        std::process::exit(1);
    }
}

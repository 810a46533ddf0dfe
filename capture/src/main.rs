//! `acc-capture`: record what an installed client really does, as a capture file. `acc contract
//! capture` runs this binary (it sits beside `acc`), so `acc` and `acc-mcp` themselves contain
//! no code that listens on a socket; this tool serves a model API on loopback while it drives
//! Claude Code.

use std::io::Write;
use std::path::PathBuf;

use acc_core::error::{AccError, AccResult};
use clap::Parser;

/// Record what the installed client really does, as a capture file.
#[derive(Debug, Parser)]
#[command(name = "acc-capture", version)]
struct Args {
    /// The client to capture: one ACC drives itself, or the client of an installed adapter
    /// whose contract names a capture driver (example).
    #[arg(long)]
    client: String,
    /// The capture driver to run instead of the one the adapter's contract names.
    #[arg(long, value_name = "PATH")]
    driver: Option<PathBuf>,
    /// Capture the write guard of ACC's hooks (in any client acc install knows) instead of delivery.
    #[arg(long)]
    write_guard: bool,
    /// Where to write the capture and its transcript (default: print the capture only).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

fn run(args: &Args) -> AccResult<(String, serde_json::Value)> {
    let finished = acc_capture::capture(&args.client, args.driver.as_deref(), args.write_guard)?;
    let capture = &finished.capture;
    let text = toml::to_string(capture).map_err(|e| AccError::internal(e.to_string()))?;
    let written = match &args.out {
        Some(dir) => Some(acc_capture::write(&finished, dir)?),
        None => None,
    };
    let human = match &written {
        Some(path) => format!(
            "captured {} {} on {} ({}): {}",
            capture.client,
            capture.version,
            capture.platform,
            capture.result,
            path.display()
        ),
        None => text,
    };
    let value = acc_core::wire::json(&acc_capture::wire::Captured {
        capture,
        file: written.map(|p| p.to_string_lossy().into_owned()),
    });
    Ok((human, value))
}

fn main() {
    let args = Args::parse();
    let (text, code, to_stdout) = match run(&args) {
        Ok((human, value)) => (if args.json { value.to_string() } else { human }, 0, true),
        Err(error) => {
            let code = error.code.exit_code();
            if args.json {
                (acc_app::views::error(&error).to_string(), code, true)
            } else {
                (
                    format!("acc: {}: {}", error.code, error.message),
                    code,
                    false,
                )
            }
        }
    };
    let line = if text.ends_with('\n') {
        text
    } else {
        format!("{text}\n")
    };
    if to_stdout {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    } else {
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
    std::process::exit(code);
}

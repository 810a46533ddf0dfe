//! The serving loops: newline-delimited JSON-RPC read line by line, each request answered with
//! exactly one line, notifications with none, until end of input.
//!
//! Owns: reading lines under the size cap, refusing a line that is too long or not UTF-8, and
//! writing each answer whole, on one thread ([`serve_blocking`]: the `acc-mcp` binary's standard
//! input and output, the tests' buffers): no thread hands a line to another. Must not: answer
//! anything itself (that is `Server`).

use std::io::{BufRead, Write};

use serde_json::Value;

use crate::jsonrpc::{self, Code};
use crate::{Config, MAX_LINE_BYTES, Server};

/// What reading one line found.
enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Take what `available` holds of the current line into `line` (dropping a line past the cap,
/// then marking it `too_long`): how many bytes were consumed, and how the line ended when its
/// newline was among them.
fn take(available: &[u8], line: &mut Vec<u8>, too_long: &mut bool) -> (usize, Option<LineRead>) {
    let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
        Some(at) => (&available[..at], Some(at + 1)),
        None => (available, None),
    };
    if !*too_long {
        if line.len() + chunk.len() > MAX_LINE_BYTES {
            *too_long = true;
            line.clear();
        } else {
            line.extend_from_slice(chunk);
        }
    }
    let ended = found.map(|_| {
        if *too_long {
            LineRead::TooLong
        } else {
            LineRead::Line
        }
    });
    (found.unwrap_or(available.len()), ended)
}

/// How the input ended inside a line (or between lines).
fn at_end(line: &[u8], too_long: bool) -> LineRead {
    if too_long {
        LineRead::TooLong
    } else if line.is_empty() {
        LineRead::Eof
    } else {
        LineRead::Line
    }
}

/// The text of a line to answer, or the error answered in its place; `None` at end of input.
fn text_of(read: LineRead, line: &[u8]) -> Option<Result<&str, Value>> {
    match read {
        LineRead::Eof => None,
        LineRead::TooLong => Some(Err(jsonrpc::error(
            &Value::Null,
            Code::PARSE_ERROR,
            &format!("parse error: a message longer than {MAX_LINE_BYTES} bytes"),
            None,
        ))),
        LineRead::Line => Some(std::str::from_utf8(line).map_err(|_| {
            jsonrpc::error(
                &Value::Null,
                Code::PARSE_ERROR,
                "parse error: the line is not utf-8",
                None,
            )
        })),
    }
}

/// A response as the bytes of its line. Written straight into bytes: `Value`'s `Display`
/// passes every token through the formatting machinery, a tenth of `acc_status`'s
/// instructions (issue 55).
fn encoded(response: &Value) -> Vec<u8> {
    let mut bytes =
        serde_json::to_vec(response).unwrap_or_else(|_| response.to_string().into_bytes());
    bytes.push(b'\n');
    bytes
}

/// Serve on a blocking reader and writer (the binary's standard input and output) on this
/// thread: each line is read, answered and written here, so a request costs no hand-over
/// between threads (three of them cost `acc_status` a third of its round trip; issue 55).
pub fn serve_blocking<R: BufRead, W: Write>(
    mut reader: R,
    mut writer: W,
    config: Config,
) -> std::io::Result<()> {
    let mut server = Server::new(config);
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut too_long = false;
        let read = loop {
            let available = reader.fill_buf()?;
            if available.is_empty() {
                break at_end(&line, too_long);
            }
            let (consumed, ended) = take(available, &mut line, &mut too_long);
            reader.consume(consumed);
            if let Some(ended) = ended {
                break ended;
            }
        };
        let response = match text_of(read, &line) {
            None => break,
            Some(Ok(text)) => server.handle_line(text),
            Some(Err(refused)) => Some(refused),
        };
        if let Some(response) = response {
            writer.write_all(&encoded(&response))?;
            writer.flush()?;
        }
    }
    writer.flush()
    // The server (and its store) close as it drops here, before the process ends.
}

//! A model API on loopback for real clients to talk to: Anthropic Messages (`POST
//! /v1/messages`, answered with a minimal event stream) and OpenAI Responses (`POST
//! /v1/responses`). Every request body is recorded, so a test can assert exactly what reached
//! the model. Other paths answer `200 {}`. Bound to 127.0.0.1 only; stops when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Method and path.
    pub target: String,
    /// The body, as text.
    pub body: String,
}

/// The server.
#[derive(Debug)]
pub struct ModelServer {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    /// Delay before each model answer (to keep a turn running).
    pub delay: Arc<Mutex<Duration>>,
}

fn sse(events: &[(&str, serde_json::Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn messages_stream(text: &str) -> String {
    use serde_json::json;
    sse(&[
        (
            "message_start",
            json!({ "type": "message_start", "message": { "id": "msg_acc_test", "type": "message", "role": "assistant", "model": "claude-acc-test", "content": [], "stop_reason": null, "stop_sequence": null, "usage": { "input_tokens": 1, "output_tokens": 1 } } }),
        ),
        (
            "content_block_start",
            json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
        ),
        (
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": text } }),
        ),
        (
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": 0 }),
        ),
        (
            "message_delta",
            json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn", "stop_sequence": null }, "usage": { "output_tokens": 1 } }),
        ),
        ("message_stop", json!({ "type": "message_stop" })),
    ])
}

fn responses_stream(text: &str) -> String {
    use serde_json::json;
    let item = json!({ "type": "message", "id": "msg_acc_test", "role": "assistant", "status": "completed", "content": [{ "type": "output_text", "text": text, "annotations": [] }] });
    sse(&[
        (
            "response.created",
            json!({ "type": "response.created", "response": { "id": "resp_acc_test", "status": "in_progress", "output": [] } }),
        ),
        (
            "response.output_item.added",
            json!({ "type": "response.output_item.added", "output_index": 0, "item": { "type": "message", "id": "msg_acc_test", "role": "assistant", "status": "in_progress", "content": [] } }),
        ),
        (
            "response.content_part.added",
            json!({ "type": "response.content_part.added", "item_id": "msg_acc_test", "output_index": 0, "content_index": 0, "part": { "type": "output_text", "text": "", "annotations": [] } }),
        ),
        (
            "response.output_text.delta",
            json!({ "type": "response.output_text.delta", "item_id": "msg_acc_test", "output_index": 0, "content_index": 0, "delta": text }),
        ),
        (
            "response.output_text.done",
            json!({ "type": "response.output_text.done", "item_id": "msg_acc_test", "output_index": 0, "content_index": 0, "text": text }),
        ),
        (
            "response.output_item.done",
            json!({ "type": "response.output_item.done", "output_index": 0, "item": item }),
        ),
        (
            "response.completed",
            json!({ "type": "response.completed", "response": { "id": "resp_acc_test", "status": "completed", "output": [item], "usage": { "input_tokens": 1, "input_tokens_details": { "cached_tokens": 0 }, "output_tokens": 1, "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 2 } } }),
        ),
    ])
}

fn serve(
    mut stream: TcpStream,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    delay: Arc<Mutex<Duration>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    while !stop.load(Ordering::SeqCst) {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let target = request_line
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let body = String::from_utf8_lossy(&body).into_owned();
        requests.lock().expect("lock").push(Recorded {
            target: target.clone(),
            body,
        });
        let (content_type, payload) =
            if target.starts_with("POST /v1/messages") && !target.contains("count_tokens") {
                std::thread::sleep(*delay.lock().expect("lock"));
                ("text/event-stream", messages_stream("ok"))
            } else if target.starts_with("POST /v1/responses") {
                std::thread::sleep(*delay.lock().expect("lock"));
                ("text/event-stream", responses_stream("ok"))
            } else {
                ("application/json", "{}".to_string())
            };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n",
            payload.len()
        );
        if stream
            .write_all(head.as_bytes())
            .and_then(|_| stream.write_all(payload.as_bytes()))
            .and_then(|_| stream.flush())
            .is_err()
        {
            return;
        }
    }
}

impl ModelServer {
    /// Start serving on an ephemeral loopback port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("nonblocking");
        let base_url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let delay = Arc::new(Mutex::new(Duration::ZERO));
        let (r, s, d) = (requests.clone(), stop.clone(), delay.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        let (r, s, d) = (r.clone(), s.clone(), d.clone());
                        std::thread::spawn(move || serve(stream, r, s, d));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            base_url,
            requests,
            stop,
            delay,
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }

    /// Forget the requests so far (to look at one turn at a time).
    pub fn clear(&self) {
        self.requests.lock().expect("lock").clear();
    }

    /// The model requests (not other paths) so far.
    pub fn model_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r.target.starts_with("POST /v1/messages")
                    || r.target.starts_with("POST /v1/responses")
            })
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

//! A model API on loopback for real clients to talk to: Anthropic Messages (`POST
//! /v1/messages`, answered with a minimal event stream), OpenAI Responses (`POST
//! /v1/responses`), OpenAI Chat Completions (`POST /v1/chat/completions`, streamed chunks, as
//! OpenAI-compatible providers speak it: OpenCode, Qwen Code) and Gemini (`POST /v1beta/models/<model>:streamGenerateContent`, server-sent
//! events, and `:generateContent`). Every request body is recorded, so a test can assert exactly what reached
//! the model. Other paths answer `200 {}`. Bound to 127.0.0.1 only; stops when dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The settings Gemini CLI needs to run headless turns offline against this server (API key
/// auth, no usage statistics, no update checks, no telemetry), as a user's own
/// `~/.gemini/settings.json` would hold them.
pub const GEMINI_SETTINGS: &str = "{\n  \"security\": { \"auth\": { \"selectedType\": \"gemini-api-key\" } },\n  \"privacy\": { \"usageStatisticsEnabled\": false },\n  \"general\": { \"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false },\n  \"telemetry\": { \"enabled\": false }\n}\n";

/// Qwen Code's user settings before ACC's installer edits them, with a comment as a user's file
/// may have (Qwen Code reads its settings as JSON with comments). The provider is chosen on the
/// command line (`--auth-type openai`). Its background memory agents are off: their requests
/// offer tools, so they would take answers scripted for the main loop.
pub const QWEN_SETTINGS: &str = "// the user's own Qwen Code settings\n{\n  \"general\": { \"enableAutoUpdate\": false },\n  \"memory\": { \"enableManagedAutoMemory\": false, \"enableManagedAutoDream\": false },\n  \"privacy\": { \"usageStatisticsEnabled\": false },\n  \"telemetry\": { \"enabled\": false }\n}\n";

/// One scripted answer of the model.
#[derive(Debug, Clone)]
pub enum Scripted {
    /// Call a tool by the name the client offers it under (`mcp__acc__acc_status`; Codex's
    /// namespaced MCP tools are split at the last `__` into namespace and name).
    Tool {
        /// The tool's offered name.
        name: String,
        /// Its arguments.
        input: Value,
    },
    /// Answer with text and end the turn.
    Text(String),
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Its number, from 1, in order of arrival.
    pub seq: u64,
    /// Method and path.
    pub target: String,
    /// The body, as text.
    pub body: String,
    /// When it arrived.
    pub received: Instant,
    /// When its answer had been written whole (`None` until then).
    pub answered: Option<Instant>,
}

impl Recorded {
    /// Whether it is a model request (not another path).
    pub fn is_model(&self) -> bool {
        Api::of(&self.target).is_some()
    }

    /// Whether it is the client's main loop (it offers tools).
    pub fn is_main_loop(&self) -> bool {
        self.is_model() && offers_tools(&self.body)
    }
}

/// The shared state of the server's threads.
#[derive(Debug, Default)]
struct Shared {
    requests: Mutex<Vec<Recorded>>,
    /// Requests whose body holds the text are answered only after the duration.
    holds: Mutex<Vec<(String, Duration)>>,
    next_seq: std::sync::atomic::AtomicU64,
}

/// The server.
#[derive(Debug)]
pub struct ModelServer {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    /// Delay before each model answer (to keep a turn running).
    pub delay: Arc<Mutex<Duration>>,
    script: Arc<Mutex<VecDeque<Scripted>>>,
}

fn sse(events: &[(&str, serde_json::Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn messages_stream(text: &str) -> String {
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

fn messages_tool_stream(call: usize, name: &str, input: &Value) -> String {
    let id = format!("toolu_acc_{call}");
    sse(&[
        (
            "message_start",
            json!({ "type": "message_start", "message": { "id": format!("msg_acc_tool_{call}"), "type": "message", "role": "assistant", "model": "claude-acc-test", "content": [], "stop_reason": null, "stop_sequence": null, "usage": { "input_tokens": 1, "output_tokens": 1 } } }),
        ),
        (
            "content_block_start",
            json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "tool_use", "id": id, "name": name, "input": {} } }),
        ),
        (
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": input.to_string() } }),
        ),
        (
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": 0 }),
        ),
        (
            "message_delta",
            json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use", "stop_sequence": null }, "usage": { "output_tokens": 1 } }),
        ),
        ("message_stop", json!({ "type": "message_stop" })),
    ])
}

fn responses_tool_stream(call: usize, name: &str, input: &Value) -> String {
    let (namespace, function) = match name.rsplit_once("__") {
        Some((namespace, function)) if namespace.starts_with("mcp__") => {
            (Some(namespace), function)
        }
        _ => (None, name),
    };
    let call_id = format!("call_acc_{call}");
    let item_id = format!("fc_acc_{call}");
    let arguments = input.to_string();
    let mut item = json!({ "type": "function_call", "id": item_id, "call_id": call_id, "name": function, "arguments": arguments, "status": "completed" });
    let mut added = json!({ "type": "function_call", "id": item_id, "call_id": call_id, "name": function, "arguments": "", "status": "in_progress" });
    if let (Some(namespace), Value::Object(done), Value::Object(started)) =
        (namespace, &mut item, &mut added)
    {
        done.insert("namespace".into(), Value::from(namespace));
        started.insert("namespace".into(), Value::from(namespace));
    }
    sse(&[
        (
            "response.created",
            json!({ "type": "response.created", "response": { "id": format!("resp_acc_{call}"), "status": "in_progress", "output": [] } }),
        ),
        (
            "response.output_item.added",
            json!({ "type": "response.output_item.added", "output_index": 0, "item": added }),
        ),
        (
            "response.function_call_arguments.delta",
            json!({ "type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": 0, "delta": arguments }),
        ),
        (
            "response.function_call_arguments.done",
            json!({ "type": "response.function_call_arguments.done", "item_id": item_id, "output_index": 0, "arguments": arguments }),
        ),
        (
            "response.output_item.done",
            json!({ "type": "response.output_item.done", "output_index": 0, "item": item }),
        ),
        (
            "response.completed",
            json!({ "type": "response.completed", "response": { "id": format!("resp_acc_{call}"), "status": "completed", "output": [item], "usage": { "input_tokens": 1, "input_tokens_details": { "cached_tokens": 0 }, "output_tokens": 1, "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 2 } } }),
        ),
    ])
}

/// Whether a model request is the client's main loop (it offers tools), which a script answers.
fn offers_tools(body: &str) -> bool {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|b| {
            b.get("tools")
                .and_then(Value::as_array)
                .map(|t| !t.is_empty())
        })
        .unwrap_or(false)
}

/// The model APIs served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    /// Anthropic Messages (Claude Code).
    Messages,
    /// OpenAI Responses (Codex).
    Responses,
    /// OpenAI Chat Completions, streamed (OpenAI-compatible providers).
    Chat,
    /// Gemini `:streamGenerateContent` (SSE) or `:generateContent` (one JSON answer).
    Gemini { stream: bool },
}

impl Api {
    fn of(target: &str) -> Option<Self> {
        if target.starts_with("POST /v1/messages") && !target.contains("count_tokens") {
            Some(Self::Messages)
        } else if target.starts_with("POST /v1/responses") {
            Some(Self::Responses)
        } else if target.starts_with("POST /v1/chat/completions") {
            Some(Self::Chat)
        } else if target.starts_with("POST /v1beta/models/") {
            Some(Self::Gemini {
                stream: target.contains(":streamGenerateContent"),
            })
        } else {
            None
        }
    }

    /// The content type and body of the answer to a request of `request_len` bytes: the
    /// scripted step, else a short text.
    fn answer(
        self,
        call: usize,
        next: Option<&Scripted>,
        request_len: usize,
    ) -> (&'static str, String) {
        let ok = Scripted::Text("ok".into());
        let step = next.unwrap_or(&ok);
        match (self, step) {
            (Self::Messages, Scripted::Tool { name, input }) => {
                ("text/event-stream", messages_tool_stream(call, name, input))
            }
            (Self::Messages, Scripted::Text(text)) => ("text/event-stream", messages_stream(text)),
            (Self::Responses, Scripted::Tool { name, input }) => (
                "text/event-stream",
                responses_tool_stream(call, name, input),
            ),
            (Self::Responses, Scripted::Text(text)) => {
                ("text/event-stream", responses_stream(text))
            }
            (Self::Chat, step) => ("text/event-stream", chat_stream(call, step, request_len)),
            (Self::Gemini { stream }, step) => {
                let part = match step {
                    Scripted::Tool { name, input } => {
                        json!({ "functionCall": { "name": name, "args": input } })
                    }
                    Scripted::Text(text) => json!({ "text": text }),
                };
                let chunk = json!({
                    "candidates": [{ "content": { "role": "model", "parts": [part] }, "finishReason": "STOP", "index": 0 }],
                    "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15 }
                });
                if stream {
                    ("text/event-stream", format!("data: {chunk}\r\n\r\n"))
                } else {
                    ("application/json", chunk.to_string())
                }
            }
        }
    }
}

/// A streamed Chat Completions answer: one chunk with the text or the tool call, one with the
/// finish reason and usage, then `[DONE]`. The prompt's tokens are counted as a quarter of the
/// request's bytes: a client that weighs its history by the reported usage (Qwen Code's
/// `/compress` declines to compact a history it believes is a few tokens long) sees about what
/// a real provider would report.
fn chat_stream(call: usize, step: &Scripted, request_len: usize) -> String {
    let prompt_tokens = request_len / 4;
    let (delta, finish) = match step {
        Scripted::Tool { name, input } => (
            json!({ "role": "assistant", "tool_calls": [{ "index": 0, "id": format!("call_acc_{call}"), "type": "function", "function": { "name": name, "arguments": input.to_string() } }] }),
            "tool_calls",
        ),
        Scripted::Text(text) => (json!({ "role": "assistant", "content": text }), "stop"),
    };
    let id = format!("chatcmpl_acc_{call}");
    let chunks = [
        json!({ "id": id, "object": "chat.completion.chunk", "created": 1, "model": "acc-test", "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] }),
        json!({ "id": id, "object": "chat.completion.chunk", "created": 1, "model": "acc-test", "choices": [{ "index": 0, "delta": {}, "finish_reason": finish }], "usage": { "prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5 } }),
    ];
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

fn responses_stream(text: &str) -> String {
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
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    delay: Arc<Mutex<Duration>>,
    script: Arc<Mutex<VecDeque<Scripted>>>,
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
        let seq = shared.next_seq.fetch_add(1, Ordering::SeqCst) + 1;
        shared.requests.lock().expect("lock").push(Recorded {
            seq,
            target: target.clone(),
            body: body.clone(),
            received: Instant::now(),
            answered: None,
        });
        let api = Api::of(&target);
        let next = if api.is_some() && offers_tools(&body) {
            script.lock().expect("lock").pop_front()
        } else {
            None
        };
        let call = usize::try_from(seq).unwrap_or(usize::MAX);
        let (content_type, payload) = if let Some(api) = api {
            let held = |shared: &Shared| {
                shared
                    .holds
                    .lock()
                    .expect("lock")
                    .iter()
                    .find(|(needle, _)| body.contains(needle.as_str()))
                    .map(|(_, d)| *d)
            };
            match held(&shared) {
                // Held until the hold's time is up or it is released, whichever comes first.
                Some(hold) => {
                    let since = std::time::Instant::now();
                    while since.elapsed() < hold && held(&shared).is_some() {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                None => std::thread::sleep(*delay.lock().expect("lock")),
            }
            api.answer(call, next.as_ref(), body.len())
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
        if let Some(r) = shared
            .requests
            .lock()
            .expect("lock")
            .iter_mut()
            .find(|r| r.seq == seq)
        {
            r.answered = Some(Instant::now());
        }
    }
}

impl ModelServer {
    /// Start serving on an ephemeral loopback port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).expect("nonblocking");
        let base_url = format!("http://{}", listener.local_addr().expect("addr"));
        let shared = Arc::new(Shared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let delay = Arc::new(Mutex::new(Duration::ZERO));
        let script = Arc::new(Mutex::new(VecDeque::new()));
        let (r, s, d, p) = (shared.clone(), stop.clone(), delay.clone(), script.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        let (r, s, d, p) = (r.clone(), s.clone(), d.clone(), p.clone());
                        std::thread::spawn(move || serve(stream, r, s, d, p));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            base_url,
            shared,
            stop,
            delay,
            script,
        }
    }

    /// The lines of a Codex `config.toml` that make Codex's model this server (Responses API),
    /// its key read from `ACC_TEST_MODEL_KEY`. Top-level keys first: put them at the start of
    /// the file.
    pub fn codex_config(&self) -> String {
        format!(
            "model = \"acc-test\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"ACC_TEST_MODEL_KEY\"\n",
            self.base_url
        )
    }

    /// The user's own OpenCode configuration (`~/.config/opencode/opencode.json`): a provider
    /// of Chat Completions on this server, its one model, and no sharing; with a comment and a
    /// trailing comma, which OpenCode's parser reads.
    pub fn opencode_config(&self) -> String {
        format!(
            "{{\n  // the user's own OpenCode configuration\n  \"share\": \"disabled\",\n  \"autoupdate\": false,\n  \"provider\": {{\n    \"loop\": {{\n      \"npm\": \"@ai-sdk/openai-compatible\",\n      \"options\": {{ \"baseURL\": \"{}/v1\", \"apiKey\": \"acc-capture-key\" }},\n      \"models\": {{ \"acc-test\": {{ \"tool_call\": true }} }},\n    }},\n  }},\n  \"model\": \"loop/acc-test\",\n}}\n",
            self.base_url
        )
    }

    /// The user's own Kimi Code configuration (`~/.kimi-code/config.toml`): an OpenAI-compatible
    /// provider of Chat Completions on this server and its one model, the default; with a
    /// comment, as a user's file may have.
    pub fn kimi_config(&self) -> String {
        format!(
            "# the user's own Kimi Code configuration\ndefault_model = \"m1\"\n\n[providers.loop]\ntype = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"acc-capture-key\"\n\n[models.m1]\nprovider = \"loop\"\nmodel = \"acc-test\"\nmax_context_size = 128000\n",
            self.base_url
        )
    }

    /// Append answers for the next main-loop requests, in order.
    pub fn script(&self, answers: impl IntoIterator<Item = Scripted>) {
        self.script.lock().expect("lock").extend(answers);
    }

    /// How many scripted answers are still to be given.
    pub fn scripted_left(&self) -> usize {
        self.script.lock().expect("lock").len()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// Forget the requests so far (to look at one turn at a time).
    pub fn clear(&self) {
        self.shared.requests.lock().expect("lock").clear();
    }

    /// The model requests (not other paths) so far.
    pub fn model_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(Recorded::is_model)
            .collect()
    }

    /// Answer every request whose body holds `needle` only after `hold` (to keep a turn
    /// running for as long as a test or capture needs).
    pub fn hold(&self, needle: &str, hold: Duration) {
        self.shared
            .holds
            .lock()
            .expect("lock")
            .push((needle.to_string(), hold));
    }

    /// End the holds of `needle` (the requests it holds are answered now).
    pub fn release(&self, needle: &str) {
        self.shared
            .holds
            .lock()
            .expect("lock")
            .retain(|(held, _)| held != needle);
    }

    /// The first model request whose body holds `needle`, waiting up to `wait` for it.
    pub fn wait_for_request(&self, needle: &str, wait: Duration) -> Option<Recorded> {
        let deadline = Instant::now() + wait;
        loop {
            let found = self
                .model_requests()
                .into_iter()
                .find(|r| r.body.contains(needle));
            if found.is_some() || Instant::now() >= deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// When request `seq` was answered, waiting up to `wait` for it.
    pub fn wait_answered(&self, seq: u64, wait: Duration) -> Option<Instant> {
        let deadline = Instant::now() + wait;
        loop {
            let answered = self
                .requests()
                .into_iter()
                .find(|r| r.seq == seq)
                .and_then(|r| r.answered);
            if answered.is_some() || Instant::now() >= deadline {
                return answered;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the first model request holding `needle` arrived only after request `seq` was
    /// answered; `None` when either is not there.
    pub fn arrived_after(&self, needle: &str, seq: u64) -> Option<bool> {
        let requests = self.requests();
        let ended = requests.iter().find(|r| r.seq == seq)?.answered?;
        let first = requests
            .iter()
            .find(|r| r.is_model() && r.body.contains(needle))?;
        Some(first.received > ended)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

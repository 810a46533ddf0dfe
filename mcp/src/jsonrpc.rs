//! JSON-RPC 2.0 framing for `acc-mcp`: classify one input line, build responses.
//!
//! Owns: what counts as a request, a notification, or an invalid message, and the wire error
//! codes. Must not: know about tools or the store.

use serde_json::{Map, Value, json};

/// A JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code(pub i64);

impl Code {
    /// The line is not JSON.
    pub const PARSE_ERROR: Code = Code(-32700);
    /// Not a valid request object (including batches).
    pub const INVALID_REQUEST: Code = Code(-32600);
    /// Unknown method.
    pub const METHOD_NOT_FOUND: Code = Code(-32601);
    /// Bad params, an unknown tool, a missing envelope key, a missing resource (2026).
    pub const INVALID_PARAMS: Code = Code(-32602);
    /// A server fault.
    pub const INTERNAL_ERROR: Code = Code(-32603);
    /// A missing resource (2025 revisions).
    pub const RESOURCE_NOT_FOUND: Code = Code(-32002);
    /// An unsupported protocol version (2026-07-28 envelope).
    pub const UNSUPPORTED_PROTOCOL_VERSION: Code = Code(-32022);
}

/// One classified input line.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request to answer.
    Request {
        /// The id, a string or a number.
        id: Value,
        /// The method.
        method: String,
        /// The params object (empty when absent).
        params: Map<String, Value>,
    },
    /// A notification: never answered.
    Notification {
        /// The method.
        method: String,
    },
    /// Something to answer with an error.
    Invalid {
        /// The id to echo (null unless the message carried a string or number id).
        id: Value,
        /// The error.
        code: Code,
        /// What was wrong.
        message: String,
    },
    /// Nothing to answer: a blank line, or a response from the client.
    Ignore,
}

fn usable_id(id: Option<&Value>) -> Value {
    match id {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// Classify one line of input.
pub fn classify(line: &str) -> Incoming {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Incoming::Ignore;
    }
    let value: Value = match serde_json::from_str(trimmed) {
        Ok(value) => value,
        Err(e) => {
            return Incoming::Invalid {
                id: Value::Null,
                code: Code::PARSE_ERROR,
                message: format!("parse error: {e}"),
            };
        }
    };
    let Value::Object(object) = value else {
        let message = if value.is_array() {
            "invalid request: batch arrays are not supported".to_string()
        } else {
            "invalid request: a message must be a json object".to_string()
        };
        return Incoming::Invalid {
            id: Value::Null,
            code: Code::INVALID_REQUEST,
            message,
        };
    };
    let id = usable_id(object.get("id"));
    if object.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Incoming::Invalid {
            id,
            code: Code::INVALID_REQUEST,
            message: "invalid request: jsonrpc must be \"2.0\"".into(),
        };
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.clone(),
        None if object.contains_key("result") || object.contains_key("error") => {
            return Incoming::Ignore;
        }
        _ => {
            return Incoming::Invalid {
                id,
                code: Code::INVALID_REQUEST,
                message: "invalid request: method must be a string".into(),
            };
        }
    };
    let has_id = object.contains_key("id");
    if has_id && id.is_null() {
        return Incoming::Invalid {
            id,
            code: Code::INVALID_REQUEST,
            message: "invalid request: id must be a string or a number".into(),
        };
    }
    if !has_id {
        return Incoming::Notification { method };
    }
    let params = match object.get("params") {
        None => Map::new(),
        Some(Value::Object(params)) => params.clone(),
        Some(_) => {
            return Incoming::Invalid {
                id,
                code: Code::INVALID_PARAMS,
                message: "invalid params: params must be an object".into(),
            };
        }
    };
    Incoming::Request { id, method, params }
}

/// A success response.
pub fn result(id: &Value, result: Value) -> Value {
    // `json!` copies an interpolated value through serde; a result (a whole room, for
    // `acc_status`) is moved in instead.
    let mut response = json!({ "jsonrpc": "2.0", "id": id, "result": null });
    if let Some(slot) = response.get_mut("result") {
        *slot = result;
    }
    response
}

/// An error response.
pub fn error(id: &Value, code: Code, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({ "code": code.0, "message": message });
    if let (Some(data), Value::Object(map)) = (data, &mut error) {
        map.insert("data".into(), data);
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": error })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(line: &str) -> (Value, i64) {
        match classify(line) {
            Incoming::Invalid { id, code, .. } => (id, code.0),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn classification() {
        assert_eq!(invalid("{"), (Value::Null, -32700));
        assert_eq!(invalid("[]"), (Value::Null, -32600));
        assert_eq!(
            invalid(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            (Value::Null, -32600)
        );
        assert_eq!(invalid("3"), (Value::Null, -32600));
        assert_eq!(
            invalid(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#),
            (json!(7), -32600)
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":"a","method":5}"#),
            (json!("a"), -32600)
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            (Value::Null, -32600)
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#),
            (Value::Null, -32600)
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}"#),
            (json!(2), -32602)
        );
        assert_eq!(classify("   "), Incoming::Ignore);
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Incoming::Ignore
        );
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification {
                method: "notifications/initialized".into()
            }
        );
        match classify(r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#) {
            Incoming::Request { id, method, params } => {
                assert_eq!(id, json!("x"));
                assert_eq!(method, "ping");
                assert!(params.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }
}

//! A small JSON Schema validator for the subset ACC's tool schemas use, so arguments are
//! checked against exactly the schemas `tools/list` publishes.
//!
//! Supported: `type`, `properties`, `required`, `additionalProperties: false`, `enum`, `const`,
//! `minimum`, `maximum`, `minLength`, `maxLength`, `items`, `minItems`, `maxItems`,
//! `uniqueItems`, and `description` (ignored). No combinator (`oneOf`, `anyOf`, `allOf`, `not`,
//! conditionals): model APIs refuse them at a tool's root and not every client passes them
//! through nested, so the rules that relate fields live in `tools::check_rules`.
//! [`SUPPORTED_KEYWORDS`] is the complete list; a test holds every published schema to it.

/// Every keyword a published schema may use, anywhere.
pub const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "description",
];

use serde_json::Value;

/// Keywords that model APIs refuse at the root of a tool's input schema (Claude Code drops the
/// tool; OpenAI function calling refuses it).
pub const FORBIDDEN_AT_ROOT: &[&str] = &[
    "oneOf", "anyOf", "allOf", "not", "enum", "const", "if", "then", "else",
];

/// Whether a tool's input schema is one every client passes to its model: a closed object at
/// the root with none of [`FORBIDDEN_AT_ROOT`], and only [`SUPPORTED_KEYWORDS`] anywhere
/// (property names under `properties` are names, not keywords). The error names the first
/// problem and where it is.
pub fn check_publishable(schema: &Value) -> Result<(), String> {
    if schema.get("type") != Some(&Value::from("object")) {
        return Err("the root is not `type: object`".into());
    }
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err("the root is not closed (`additionalProperties: false`)".into());
    }
    if let Some(keyword) = FORBIDDEN_AT_ROOT.iter().find(|k| schema.get(**k).is_some()) {
        return Err(format!("`{keyword}` at the root"));
    }
    plain(schema, "the root")
}

fn plain(schema: &Value, path: &str) -> Result<(), String> {
    let Some(map) = schema.as_object() else {
        return Err(format!("{path} is not an object"));
    };
    for (key, value) in map {
        if !SUPPORTED_KEYWORDS.contains(&key.as_str()) {
            return Err(format!("keyword `{key}` in {path}"));
        }
        match key.as_str() {
            "properties" => {
                for (name, property) in value.as_object().into_iter().flatten() {
                    plain(property, &format!("property `{name}`"))?;
                }
            }
            "items" => plain(value, &format!("the items of {path}"))?,
            _ => {}
        }
    }
    Ok(())
}

/// Validate `value` against `schema`; the error names the path and what was wrong.
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    check(value, schema, "arguments")
}

fn type_ok(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

// One keyword after another, each a few lines, in the order the schema lists them: split up,
// the validator would hide which keywords it knows.
#[allow(clippy::too_many_lines)]
fn check(value: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    if let Some(kind) = schema.get("type") {
        let ok = match kind {
            Value::String(name) => type_ok(value, name),
            Value::Array(names) => names
                .iter()
                .filter_map(Value::as_str)
                .any(|n| type_ok(value, n)),
            _ => true,
        };
        if !ok {
            return Err(format!("{path} must be of type {kind}, got {value}"));
        }
    }
    if let Some(expected) = schema.get("const")
        && value != expected
    {
        return Err(format!("{path} must be {expected}, got {value}"));
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let names: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!(
            "{path} must be one of {}, got {value}",
            names.join(", ")
        ));
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            return Err(format!("{path} must be at least {min}, got {value}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            return Err(format!("{path} must be at most {max}, got {value}"));
        }
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && length < min
        {
            return Err(format!("{path} must have at least {min} characters"));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && length > max
        {
            return Err(format!(
                "{path} must have at most {max} characters, got {length}"
            ));
        }
    }
    if let Some(items) = value.as_array() {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && (items.len() as u64) < min
        {
            return Err(format!("{path} must have at least {min} items"));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && (items.len() as u64) > max
        {
            return Err(format!(
                "{path} must have at most {max} items, got {}",
                items.len()
            ));
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    return Err(format!("{path} must not repeat {item}"));
                }
            }
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(item, item_schema, &format!("{path}[{i}]"))?;
            }
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    return Err(format!("{path}.{name} is required"));
                }
            }
        }
        for (name, field) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(field_schema) => check(field, field_schema, &format!("{path}.{name}"))?,
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    let known: Vec<&str> = properties
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    return Err(format!(
                        "{path}.{name} is not a known field (known: {})",
                        known.join(", ")
                    ));
                }
                None => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn publishable_schemas_are_closed_plain_objects() {
        let closed = json!({ "type": "object", "additionalProperties": false, "properties": { "a": { "type": "string" } } });
        assert!(check_publishable(&closed).is_ok());
        for (bad, needle) in [
            (
                json!({ "type": "object", "additionalProperties": false, "oneOf": [] }),
                "`oneOf` at the root",
            ),
            (json!({ "type": "object" }), "not closed"),
            (json!({ "type": "array" }), "not `type: object`"),
            (
                json!({ "type": "object", "additionalProperties": false, "properties": { "a": { "anyOf": [] } } }),
                "keyword `anyOf` in property `a`",
            ),
            (
                json!({ "type": "object", "additionalProperties": false, "properties": { "l": { "type": "array", "items": { "$ref": "#" } } } }),
                "keyword `$ref` in the items of property `l`",
            ),
        ] {
            let error = check_publishable(&bad).expect_err("refused");
            assert!(error.contains(needle), "{bad}: {error}");
        }
    }

    #[test]
    fn keywords() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["a"],
            "properties": {
                "a": {"type": "string", "minLength": 1, "maxLength": 3},
                "n": {"type": "integer", "minimum": 1, "maximum": 5},
                "e": {"enum": ["x", "y"]},
                "l": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true},
            },
        });
        assert!(validate(&json!({"a": "ab"}), &schema).is_ok());
        assert!(validate(&json!({"a": "ab", "n": 3, "e": "x", "l": ["p"]}), &schema).is_ok());
        for (bad, needle) in [
            (json!({}), "arguments.a is required"),
            (json!({"a": ""}), "at least 1"),
            (json!({"a": "abcd"}), "at most 3"),
            (
                json!({"a": "a", "z": 1}),
                "arguments.z is not a known field",
            ),
            (json!({"a": "a", "n": 0}), "at least 1"),
            (json!({"a": "a", "n": 2.5}), "type \"integer\""),
            (json!({"a": "a", "e": "q"}), "one of"),
            (json!({"a": "a", "l": []}), "at least 1 items"),
            (json!({"a": "a", "l": ["p", "p"]}), "must not repeat"),
            (json!({"a": "a", "l": [1]}), "arguments.l[0]"),
            (json!([]), "type \"object\""),
        ] {
            let error = validate(&bad, &schema).expect_err("invalid");
            assert!(error.contains(needle), "{bad}: {error}");
        }
    }
}

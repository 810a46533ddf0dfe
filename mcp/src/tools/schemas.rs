//! The input schemas of the tools, one function each (the [`super::TOOLS`] table names them),
//! built from a few closed shapes: every schema a closed object with no combinator anywhere.

use acc_app::wire::Schema;
use acc_core::{claims, messages};

/// An empty description says nothing and is left out.
fn said(description: &'static str) -> Option<&'static str> {
    Some(description).filter(|d| !d.is_empty())
}

fn string(max: u64, description: &'static str) -> Schema {
    Schema {
        kind: "string",
        min_length: Some(1),
        max_length: Some(max),
        description: said(description),
        ..Schema::default()
    }
}

fn array_of(item: Schema, description: &'static str) -> Schema {
    Schema {
        kind: "array",
        items: Some(Box::new(item)),
        description: said(description),
        ..Schema::default()
    }
}

fn strings(max_items: u64, max_len: u64, description: &'static str) -> Schema {
    Schema {
        max_items: Some(max_items),
        ..array_of(
            Schema {
                max_length: Some(max_len),
                ..string(max_len, "")
            },
            description,
        )
    }
}

/// A closed object schema: the only shape a tool's root may have. Model APIs (Anthropic's,
/// OpenAI's function calling) refuse a root with `oneOf`, `anyOf`, `allOf`, `not`, `enum` or
/// conditionals, and Claude Code drops such a tool silently; rules that relate fields to each
/// other are checked by [`check_rules`] instead, and each is said in a description.
fn object(properties: Vec<(&'static str, Schema)>, required: &[&'static str]) -> Schema {
    Schema {
        kind: "object",
        properties: Some(properties.into_iter().collect()),
        additional_properties: Some(false),
        required: Some(required.to_vec()).filter(|r| !r.is_empty()),
        ..Schema::default()
    }
}

/// A record id, participant id or cursor. Its shape and length are checked by the core's id
/// validators (which name the expected form), so the schema does not repeat them.
fn id(description: &'static str) -> Schema {
    plain("string", description)
}

/// A value of JSON type `kind` with nothing more to say than its description.
fn plain(kind: &'static str, description: &'static str) -> Schema {
    Schema {
        kind,
        description: said(description),
        ..Schema::default()
    }
}

fn ids(description: &'static str) -> Schema {
    Schema {
        min_items: Some(1),
        ..array_of(id(""), description)
    }
}

fn uris(description: &'static str) -> Schema {
    Schema {
        min_items: Some(1),
        ..array_of(string(1024, ""), description)
    }
}

fn resource(description: &'static str) -> Schema {
    string(1024, description)
}

fn body(max: u64) -> Schema {
    string(max, "")
}

fn client_id() -> Schema {
    id("Retry key: resend with the same key and content. Generated when omitted.")
}

fn choice(values: &[&'static str], description: &'static str) -> Schema {
    Schema {
        kind: "string",
        values: Some(values.to_vec()),
        description: said(description),
        ..Schema::default()
    }
}

fn flag(description: &'static str) -> Schema {
    plain("boolean", description)
}

fn integer(maximum: i64, description: &'static str) -> Schema {
    Schema {
        kind: "integer",
        minimum: Some(1),
        maximum: Some(maximum),
        description: said(description),
        ..Schema::default()
    }
}

pub(super) fn schema_status() -> Schema {
    object(Vec::new(), &[])
}

pub(super) fn schema_sync() -> Schema {
    object(
        vec![
            (
                "scope",
                choice(&["delta", "full", "history"], "Default delta."),
            ),
            ("cursor", id("The previous page's nextCursor.")),
            ("limit", integer(500, "Default 100 events or 20 messages.")),
            (
                "kind",
                choice(
                    &acc_store::MessageKind::spellings(),
                    "history only: this kind only.",
                ),
            ),
            (
                "messageId",
                id("history only, alone: one complete message."),
            ),
            (
                "current",
                flag("history with kind decision only: the current decisions."),
            ),
        ],
        &[],
    )
}

pub(super) fn schema_work() -> Schema {
    object(
        vec![
            ("summary", string(280, "One line.")),
            (
                "mode",
                choice(&acc_store::IntentMode::spellings(), "What kind of work."),
            ),
            (
                "state",
                choice(&acc_store::IntentState::spellings(), "Default active."),
            ),
            (
                "resourceHints",
                strings(64, 1024, "Claim URIs you expect to touch."),
            ),
            ("clear", flag("true, alone: clear your intent.")),
        ],
        &[],
    )
}

pub(super) fn schema_claim() -> Schema {
    object(
        vec![
            (
                "action",
                choice(
                    &["acquire", "renew"],
                    "renew takes claimId and leaseSeconds only.",
                ),
            ),
            (
                "resource",
                resource("file:src/a.rs, file:src/** (a tree), git:branch/x, doc:name."),
            ),
            ("resources", uris("An all-or-nothing batch.")),
            ("claimId", id("renew: the claim to extend.")),
            // Exclusive first: the default, and the order the tool has always listed.
            (
                "mode",
                choice(&["exclusive", "shared"], "Default exclusive."),
            ),
            (
                "reason",
                Schema {
                    kind: "string",
                    max_length: Some(500),
                    description: said("Why, for the others."),
                    ..Schema::default()
                },
            ),
            (
                "leaseSeconds",
                integer(claims::MAX_LEASE_SECONDS, "Default 1800."),
            ),
        ],
        &["action"],
    )
}

pub(super) fn schema_release() -> Schema {
    object(
        vec![
            ("claimId", id("")),
            ("claimIds", ids("")),
            ("resource", resource("")),
            ("resources", uris("")),
            ("all", flag("true: every claim you hold.")),
        ],
        &[],
    )
}

pub(super) fn schema_message() -> Schema {
    object(
        vec![
            (
                "to",
                Schema {
                    max_items: Some(messages::MAX_RECIPIENTS as u64),
                    ..array_of(
                        id(""),
                        "Participant ids. [] = a room note for everyone present.",
                    )
                },
            ),
            ("subject", string(500, "One line.")),
            ("body", body(4000)),
            (
                "kind",
                choice(
                    messages::GENERIC_KINDS,
                    "Default note; question and request need a reply.",
                ),
            ),
            (
                "obligation",
                choice(&acc_store::Obligation::spellings(), "Default from kind."),
            ),
            ("clientMessageId", client_id()),
            (
                "supersedes",
                ids("kind decision only, not with withdraws: decisions replaced."),
            ),
            (
                "withdraws",
                ids("kind decision only, not with supersedes: decisions withdrawn."),
            ),
        ],
        &["to", "subject", "body"],
    )
}

pub(super) fn schema_request() -> Schema {
    object(
        vec![
            ("toParticipantId", id("Who is asked.")),
            ("title", string(500, "What is asked, one line.")),
            (
                "detail",
                Schema {
                    kind: "string",
                    max_length: Some(4000),
                    ..Schema::default()
                },
            ),
            ("clientMessageId", client_id()),
        ],
        &["toParticipantId", "title"],
    )
}

pub(super) fn schema_inbox() -> Schema {
    object(
        vec![
            (
                "messageId",
                id("Alone: read it in full (marks it retrieved)."),
            ),
            ("cursor", id("The previous page's nextCursor.")),
            ("limit", integer(500, "Default 20.")),
            (
                "waitMs",
                integer(
                    acc_core::messages::INBOX_WAIT_MCP_MAX_MS,
                    "Wait up to this long for a message rather than calling again: answers as soon as one is here, or empty at the end.",
                ),
            ),
        ],
        &[],
    )
}

pub(super) fn schema_reply() -> Schema {
    object(
        vec![
            ("messageId", id("The message you answer.")),
            ("body", body(4000)),
            ("subject", string(500, "Default: Re: <original subject>.")),
            ("clientMessageId", client_id()),
        ],
        &["messageId", "body"],
    )
}

pub(super) fn schema_ack() -> Schema {
    object(vec![("messageId", id(""))], &["messageId"])
}

pub(super) fn schema_finish() -> Schema {
    object(
        vec![
            ("goal", string(500, "One line.")),
            ("status", choice(&["complete", "partial", "blocked"], "")),
            ("completed", strings(32, 500, "")),
            ("remaining", strings(32, 500, "")),
            ("blockers", strings(32, 500, "")),
            ("toParticipantId", id("Omit for a room handoff.")),
            ("clientMessageId", client_id()),
        ],
        &["goal"],
    )
}

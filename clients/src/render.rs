//! The one renderer of peer text for every human and model surface: the `acc-peer-message`
//! block (next-turn context, the Codex queued submission, `acc inbox --message` and
//! `acc sync --scope history --message` in text mode), the inline escape for single-line peer
//! fields (subjects, intents, descriptions), and shell quoting for what ACC prints for an agent
//! to run.
//!
//! A block opens with `~~~~acc-peer-message` and ACC's header and closes with a line of exactly
//! `~~~~`. Peer text cannot close it or open another: every run of three or more backticks or
//! tildes inside is broken with backslashes, and no character that could end, hide or reorder
//! a line survives raw. Escaped are every control character (Unicode category Cc, so ANSI and
//! OSC sequences lose their ESC), every format character (Cf: bidirectional overrides and
//! isolates, zero-width joiners and spaces, the BOM) and the line and paragraph separators (Zl,
//! Zp), each as a visible `\u{..}`. In a body, line feeds and tabs stay as they are; in a
//! single-line field they are escaped too.

use acc_adapter_api::wire::RenderMessage;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The fence that opens and closes every block.
pub const FENCE: &str = "~~~~";

/// Whether `c` is escaped in peer text: a control, format, line- or paragraph-separator
/// character.
pub fn hidden(c: char) -> bool {
    // ASCII's only such characters are its controls (Cc): answered without the Unicode table,
    // which every character of every `acc-mcp` answer passes through.
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// Escape peer text, keeping `keep` characters (line feeds and tabs in a body) as they are.
fn escaped(text: &str, keep: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' || c == '~' {
            let run = chars[i..].iter().take_while(|x| **x == c).count();
            for _ in 0..run {
                if run >= 3 {
                    out.push('\\');
                }
                out.push(c);
            }
            i += run;
            continue;
        }
        if hidden(c) && !keep.contains(&c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// Escape a peer-written body: line feeds and tabs stay; every other hidden character becomes
/// a visible `\u{..}`, and no fence can be opened or closed from inside.
pub fn escape(text: &str) -> String {
    escaped(text, &['\n', '\t'])
}

/// Escape a peer-written single-line field (a subject, an intent, a description, a name) or a
/// path ACC prints into model context: nothing in it can start a line.
pub fn escape_line(text: &str) -> String {
    escaped(text, &[])
}

/// Header attributes come from ACC itself, but are kept to a safe alphabet regardless.
pub fn attribute(value: &str) -> String {
    value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':'))
        .collect()
}

/// Quote text for a POSIX shell, on one line: `'...'`, or `$'...'` with escapes when the text
/// holds a character that would otherwise break the line or hide (a path with a newline in it
/// cannot put a raw line into a hook's context).
pub fn shell_quote(text: &str) -> String {
    if !text.chars().any(hidden) {
        return format!("'{}'", text.replace('\'', "'\\''"));
    }
    let mut out = String::from("$'");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if hidden(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if hidden(c) && (c as u32) < 0x10000 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if hidden(c) => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// One message as a block.
pub fn block(item: &RenderMessage) -> String {
    let m = &item.message;
    let mut out = format!(
        "{FENCE}acc-peer-message sender={} message={} kind={} obligation={} untrusted=true\n",
        attribute(&m.from_participant_id),
        attribute(&m.message_id),
        attribute(&m.kind),
        attribute(&m.obligation),
    );
    if let Some(reply_to) = &m.in_reply_to {
        out.push_str(&format!("in-reply-to: {}\n", attribute(reply_to)));
    }
    out.push_str(&format!("subject: {}\n", escape_line(&m.subject)));
    for artifact in m.artifacts.as_array().into_iter().flatten() {
        let field = |key: &str| artifact.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let description = field("description");
        out.push_str(&format!(
            "artifact: {}{}\n",
            escape_line(field("uri")),
            if description.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape_line(description))
            }
        ));
    }
    let body = escape(&m.body);
    out.push_str(&body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(FENCE);
    out.push('\n');
    if let Some(repeat) = &item.repeat {
        out.push_str(&format!(
            "repeat: offered via {} at {}; no retrieval recorded\n",
            attribute(&repeat.transport),
            attribute(&repeat.offered_at)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_shortcut_agrees_with_the_unicode_table() {
        for c in (0u8..=0x7f).map(char::from) {
            let by_table = matches!(
                c.general_category(),
                GeneralCategory::Control
                    | GeneralCategory::Format
                    | GeneralCategory::LineSeparator
                    | GeneralCategory::ParagraphSeparator
            );
            assert_eq!(hidden(c), by_table, "{c:?}");
        }
    }

    fn hostile() -> Vec<String> {
        let text = include_str!("../../tests/fixtures/hostile-strings.json");
        serde_json::from_str(text).expect("hostile strings")
    }

    fn item(subject: &str, body: &str) -> RenderMessage {
        RenderMessage {
            message: acc_adapter_api::wire::Envelope {
                message_id: "message_x".into(),
                from_participant_id: "mallory".into(),
                kind: "note".into(),
                obligation: "none".into(),
                subject: subject.into(),
                body: body.into(),
                artifacts: serde_json::Value::Array(vec![serde_json::Value::Object(
                    [
                        ("uri".to_string(), "file:a.rs".into()),
                        ("description".to_string(), subject.into()),
                    ]
                    .into_iter()
                    .collect(),
                )]),
                ..Default::default()
            },
            repeat: None,
        }
    }

    #[test]
    fn no_hostile_string_survives_raw_or_closes_the_block() {
        for text in hostile() {
            let rendered = block(&item(&text, &text));
            assert!(
                !rendered
                    .chars()
                    .any(|c| hidden(c) && c != '\n' && c != '\t'),
                "{rendered:?}"
            );
            let lines: Vec<&str> = rendered.lines().collect();
            assert!(lines[0].starts_with("~~~~acc-peer-message "));
            let close = lines.iter().rposition(|l| *l == FENCE).expect("closed");
            assert_eq!(close, lines.len() - 1, "{rendered}");
            for line in &lines[1..close] {
                assert!(
                    !line.starts_with("~~~") && !line.starts_with("```"),
                    "{line}"
                );
            }
            // A single-line field stays one line.
            assert!(!escape_line(&text).contains('\n'));
        }
    }

    #[test]
    fn format_and_separator_characters_are_shown_not_applied() {
        assert_eq!(escape_line("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(escape_line("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert_eq!(
            escape("zero\u{200b}width\nnext"),
            "zero\\u{200b}width\nnext"
        );
        assert_eq!(escape_line("line\nbreak"), "line\\u{a}break");
        assert_eq!(
            escape("~~~~ and ``` but ~~"),
            "\\~\\~\\~\\~ and \\`\\`\\` but ~~"
        );
        assert_eq!(escape("héllo ☃ 日本"), "héllo ☃ 日本");
    }

    #[test]
    fn shell_quotes_keep_one_line() {
        assert_eq!(shell_quote("/tmp/it's"), "'/tmp/it'\\''s'");
        assert_eq!(
            shell_quote("/tmp/a\nACC: b"),
            "$'/tmp/a\\nACC: b'",
            "a newline cannot start a line of its own"
        );
        assert_eq!(shell_quote("x\u{202e}'y"), "$'x\\u202e\\'y'");
    }
}

//! The fenced `acc-peer-message` block both the next-turn rendering and the Codex queued
//! submission carry: ACC's header, then the peer's subject and body escaped so they can neither
//! close the fence, open a nested one, nor drive the terminal.

use acc_adapter_api::wire::RenderMessage;

/// The fence that opens and closes every block.
pub const FENCE: &str = "~~~~";

/// Escape peer text: control characters (ANSI escapes and the like) become visible `\u{..}`
/// escapes, and every run of three or more backticks or tildes is broken with backslashes, so
/// no fence can be opened or closed from inside.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if (c == '`' || c == '~') && chars[i..].iter().take_while(|x| **x == c).count() >= 3 {
            let run = chars[i..].iter().take_while(|x| **x == c).count();
            for _ in 0..run {
                out.push('\\');
                out.push(c);
            }
            i += run;
            continue;
        }
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// Header attributes come from ACC itself, but are kept to a safe alphabet regardless.
pub fn attribute(value: &str) -> String {
    value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':'))
        .collect()
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
    out.push_str(&format!("subject: {}\n", escape(&m.subject)));
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

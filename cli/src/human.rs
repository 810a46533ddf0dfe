//! Human-readable renderings of command results. Peer-supplied text is shown escaped.

use comfy_table::Cell;

use super::look::{self, Look};
use acc_app::services::Sent;
use acc_core::OpenedSession;
use acc_core::attention::Attention;
use acc_core::error::AccError;
use acc_core::events::format_cursor;
use acc_core::messages::{MessageView, PruneReport};
use acc_core::status::{EventPage, StatusReport};
use acc_store::{ClaimRow, ReceiptRow, ReceiptState};

use acc_clients::render::{escape_line as safe, shell_quote};

/// An error, with conflict details.
pub fn error(error: &AccError) -> String {
    let mut out = format!(
        "{} {}",
        paint(
            colour(anstyle::AnsiColor::Red).bold(),
            &format!("acc: {}:", error.code)
        ),
        error.message
    );
    if let Some(conflicts) = error
        .details
        .as_ref()
        .and_then(|d| d.get("conflicts"))
        .and_then(|c| c.as_array())
    {
        for conflict in conflicts {
            let resource = conflict
                .get("resource")
                .and_then(|r| r.as_str())
                .unwrap_or("?");
            for claim in conflict
                .get("claims")
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
            {
                let field = |k: &str| {
                    claim
                        .get(k)
                        .and_then(|v| v.as_str())
                        .unwrap_or("?")
                        .to_string()
                };
                out.push_str(&format!(
                    "\n  {resource}: held as {} by {} ({}, {}) until {} [{}]",
                    field("resource"),
                    field("ownerParticipantId"),
                    field("ownerSessionId"),
                    field("ownerPresence"),
                    field("expiresAt"),
                    field("claimId"),
                ));
            }
        }
    }
    out
}

/// The credentials of a newly attached session, ready for `eval`.
pub fn attached(opened: &OpenedSession, workspace_id: &str) -> String {
    let verb = if opened.resumed { "reopened" } else { "opened" };
    format!(
        "# {} {verb} session {} in workspace {workspace_id}\n# the generation below is shown once; keep it private. To use it in this shell:\n#   eval \"$(acc attach --participant {} ...)\" or copy these lines\nexport ACC_SESSION={}\nexport ACC_GENERATION={}\n",
        opened.session.participant_id,
        opened.session.session_id,
        opened.session.participant_id,
        shell_quote(&opened.session.session_id),
        shell_quote(&opened.generation_token),
    )
}

/// `acc attach` keeping this shell's own session.
pub fn kept(opened: &OpenedSession, workspace_id: &str) -> String {
    format!(
        "# {} keeps session {} in workspace {workspace_id} (this shell's own, still open)\nexport ACC_SESSION={}\nexport ACC_GENERATION={}\n",
        opened.session.participant_id,
        opened.session.session_id,
        shell_quote(&opened.session.session_id),
        shell_quote(&opened.generation_token),
    )
}

/// `acc detach`.
pub fn detached(
    participant: &str,
    session_id: &str,
    released: usize,
    kept: usize,
    look: &Look,
) -> String {
    let session_id = look.id(session_id);
    let claims = match (released, kept) {
        (0, 0) => "it held no claims".to_string(),
        (released, 0) => format!("released its {released} claim(s)"),
        (_, kept) => format!(
            "its {kept} claim(s) stay until their leases end (to release them: acc attach --participant {participant} --resume {session_id}, then acc release --all)"
        ),
    };
    format!("closed session {session_id}; {claims}\n")
}

/// Claims just acquired or renewed.
pub fn claims(verb: &str, claims: &[ClaimRow], look: &Look) -> String {
    claims
        .iter()
        .map(|c| {
            format!(
                "{verb} {} ({}, {}, {}), expires {}",
                c.resource,
                look.id(&c.claim_id),
                c.mode,
                c.enforcement,
                look.when(c.expires_at)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn attention_line(item: &Attention, look: &Look) -> String {
    if let (acc_core::attention::AttentionRule::ClaimHolderOffline, Some(claim), Some(until)) =
        (item.rule, &item.claim_id, item.expires_at)
    {
        let id = look.id(claim);
        return format!(
            "  {} on {} ({id}): held by {}'s offline session, expires {}; a person may release it: acc release --claim {id} --authority human --reason '<why>'",
            item.rule.as_str(),
            item.resource.as_deref().unwrap_or(""),
            look.id(&item.participant_id),
            look.when(until),
        );
    }
    let mut line = format!(
        "  {} for {}",
        item.rule.as_str(),
        look.id(&item.participant_id)
    );
    if let Some(resource) = &item.resource {
        line.push_str(&format!(" on {resource}"));
    }
    if let Some(claim) = &item.claim_id {
        line.push_str(&format!(" ({})", look.id(claim)));
    }
    if let Some(message) = &item.message_id {
        line.push_str(&format!(" message {}", look.id(message)));
    }
    if let Some(other) = &item.other_participant_id {
        line.push_str(&format!(" with {}", look.id(other)));
    }
    line
}

/// Under a guarded claim policy: whose writes the guarded claims stop and whose they do not
/// (the core's one note, so `--json`, MCP and this text say the same).
fn weakened(report: &StatusReport, look: &Look) -> String {
    if report.claim_policy != "guarded" {
        return String::new();
    }
    look.wrap(&format!("  {}", safe(&report.protection_note)), 4)
}

/// One event as a line that says what happened: cursor, time, type, who, and the facts of its
/// kind (the resource of a claim event, the recipients and kind of a message, the receipt's
/// move, the intent's summary), peer-written text escaped.
pub fn event_line(event: &acc_store::EventRow, look: &Look) -> String {
    let data = &event.data;
    let text = |key: &str| data.get(key).and_then(serde_json::Value::as_str);
    let list = |key: &str| {
        data.get(key)
            .and_then(serde_json::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .collect::<Vec<_>>()
                    .join(",")
            })
    };
    let mut facts = Vec::new();
    if let Some(resource) = text("resource") {
        facts.push(resource.to_string());
    }
    if let Some(to) = list("toParticipantIds").filter(|t| !t.is_empty()) {
        facts.push(format!("to {to}"));
    }
    if let Some(kind) = text("kind") {
        facts.push(kind.to_string());
    }
    if let Some(message) = text("messageId") {
        facts.push(look.id(message));
    }
    if let (Some(from), Some(to)) = (text("from"), text("to")) {
        facts.push(format!("{from} -> {to}"));
    }
    if let Some(summary) = text("summary") {
        facts.push(format!("\"{}\"", safe(summary)));
    }
    if let Some(reason) = text("reason") {
        facts.push(format!("({})", safe(reason)));
    }
    format!(
        "{} {} {} {}{}\n",
        format_cursor(event.seq),
        look.when(event.at),
        event.event_type,
        event
            .participant_id
            .as_deref()
            .map_or_else(|| "-".to_string(), |p| look.id(p)),
        if facts.is_empty() {
            String::new()
        } else {
            format!(" {}", facts.join(" "))
        }
    )
}

/// `text` in `style` (ANSI; the output stream drops it when colour is off: not a terminal,
/// NO_COLOR, `--color never`).
fn paint(style: anstyle::Style, text: &str) -> String {
    format!("{}{text}{}", style.render(), style.render_reset())
}

fn bold() -> anstyle::Style {
    anstyle::Style::new().bold()
}

fn colour(color: anstyle::AnsiColor) -> anstyle::Style {
    anstyle::Style::new().fg_color(Some(color.into()))
}

/// A cell that keeps its whole text however narrow the table (ids, presence, times: what a
/// person acts on).
fn whole(text: impl Into<String>) -> Cell {
    Cell::new(text.into())
}

fn presence_cell(presence: acc_core::Presence) -> Cell {
    use comfy_table::Color;
    let cell = whole(presence.as_str());
    match presence {
        acc_core::Presence::Online => cell.fg(Color::Green),
        acc_core::Presence::Stale => cell.fg(Color::Yellow),
        acc_core::Presence::Offline => cell.add_attribute(comfy_table::Attribute::Dim),
    }
}

/// The sessions of a status as a table: who, which session, presence, client, when last seen,
/// what its writes meet (and the branch, when the sessions are on different ones), each with its
/// intent on the line below.
pub fn sessions_table(sessions: &[acc_core::status::SessionState], look: &Look) -> String {
    if sessions.is_empty() {
        return "sessions: none\n".to_string();
    }
    let mut branches: Vec<Option<&str>> = sessions
        .iter()
        .map(|s| s.session.branch.as_deref())
        .collect();
    branches.dedup();
    let branch_column = branches.len() > 1;
    let mut header = vec![
        "participant",
        "session",
        "presence",
        "client",
        "seen",
        "writes",
    ];
    if branch_column {
        header.push("branch");
    }
    let mut table = look.table(&header, 2);
    let mut details = Vec::new();
    for state in sessions {
        let s = &state.session;
        let mut cells = vec![
            Cell::new(look.id(&s.participant_id)),
            whole(look.id(&s.session_id)),
            presence_cell(state.presence),
            Cell::new(match &s.client_version {
                Some(version) => format!("{} {}", s.harness, safe(version)),
                None => s.harness.clone(),
            }),
            whole(look.when(s.last_seen_at)),
            whole(state.guard.enforcement.to_string()),
        ];
        if branch_column {
            cells.push(Cell::new(
                s.branch.as_deref().map(safe).unwrap_or_else(|| "-".into()),
            ));
        }
        table.add_row(look::row(cells));
        details.push(state.intent.as_ref().map(|intent| {
            let mut text = format!(
                "intent: {} [{}, {}]",
                safe(&intent.summary),
                intent.mode,
                intent.state
            );
            if !intent.resource_hints.is_empty() {
                text.push_str(&format!(" hints {}", intent.resource_hints.join(" ")));
            }
            text
        }));
    }
    look::settle(&mut table, &[1, 2, 4, 5]);
    let on = match branches.as_slice() {
        [Some(branch)] => format!(" (on {})", safe(branch)),
        _ => String::new(),
    };
    format!(
        "sessions: {}{on}\n{}",
        sessions.len(),
        look::lines(&table, 2, &details, look.width)
    )
}

/// The claims of a status (or those that matter, under the counts), as a table.
pub fn claims_table(report: &StatusReport, look: &Look) -> String {
    use comfy_table::Color;
    let mut out = String::new();
    let summary = &report.claim_summary;
    if summary.total == 0 && report.claims.is_empty() {
        out.push_str("claims: none\n");
        return out;
    }
    let holders: Vec<String> = summary
        .holders
        .iter()
        .map(|(who, n)| format!("{} {n}", look.id(who)))
        .collect();
    out.push_str(&look.wrap(
        &format!(
            "claims: {} ({} live) held by {}{}",
            summary.total,
            summary.live,
            holders.join(", "),
            if summary.complete {
                String::new()
            } else {
                format!(
                    "; listed: the {} that matter (contended, expiring within 10 min, yours, expired); acc status --all lists every one",
                    report.claims.len()
                )
            }
        ),
        4,
    ));
    if report.claims.is_empty() {
        return out;
    }
    let header = ["resource", "mode", "writes", "holder", "claim", "expires"];
    let mut table = look.table(&header, 2);
    let expiries: Vec<String> = report
        .claims
        .iter()
        .map(|c| {
            let when = look.when(c.claim.expires_at);
            if c.live {
                when
            } else {
                format!("EXPIRED {when}")
            }
        })
        .collect();
    // What the columns that stay whole leave is shared by the resource and the holder: the
    // resource first (cut in its middle, keeping its file name), the holder keeping at least 10
    // columns (the "held by" line above names every holder, as short as it is unique).
    let ids: Vec<String> = report
        .claims
        .iter()
        .map(|c| look.id(&c.claim.claim_id))
        .collect();
    let split = look.width.map(|width| {
        let fixed = look::widest(["exclusive"])
            + look::widest(["advisory"])
            + look::widest(ids.iter().map(String::as_str).chain(["claim"]))
            + look::widest(expiries.iter().map(String::as_str).chain(["expires"]))
            + 2 * (header.len() - 1)
            + 2;
        let available = usize::from(width).saturating_sub(fixed);
        let resources = look::widest(report.claims.iter().map(|c| c.claim.resource.as_str()));
        let names: Vec<String> = report
            .claims
            .iter()
            .map(|c| look.id(&c.claim.participant_id))
            .collect();
        let holders = look::widest(names.iter().map(String::as_str).chain(["holder"]));
        let holder = holders.min(available.saturating_sub(resources).max(10));
        (available.saturating_sub(holder).max(12), holder)
    });
    let resource_width = split.map(|(resource, _)| resource);
    for (c, expires) in report.claims.iter().zip(expiries) {
        let claim = &c.claim;
        let expires = if c.live {
            whole(expires)
        } else {
            whole(expires)
                .fg(Color::Red)
                .add_attribute(comfy_table::Attribute::Bold)
        };
        table.add_row(look::row(vec![
            Cell::new(match resource_width {
                Some(width) => look::fit_middle(&claim.resource, width),
                None => claim.resource.clone(),
            }),
            whole(claim.mode.to_string()),
            whole(c.effective_enforcement),
            Cell::new(look.id(&claim.participant_id)),
            whole(look.id(&claim.claim_id)),
            expires,
        ]));
    }
    look::settle(&mut table, &[0, 1, 2, 4, 5]);
    if let (Some((_, holder)), Some(column)) = (split, table.column_mut(3)) {
        // The boundary counts the column's padding (two spaces).
        column.set_constraint(comfy_table::ColumnConstraint::UpperBoundary(
            comfy_table::Width::Fixed(u16::try_from(holder + 2).unwrap_or(u16::MAX)),
        ));
    }
    out.push_str(&look::lines(&table, 2, &[], look.width));
    out
}

/// The status report.
pub fn status(report: &StatusReport, look: &Look) -> String {
    use anstyle::AnsiColor::{Green, Yellow};
    let protection = if report.protection == "guarded" {
        paint(colour(Green), report.protection)
    } else {
        paint(colour(Yellow), report.protection)
    };
    let mut out = look.wrap(
        &format!(
            "workspace {} ({}, from {}) at {}",
            paint(bold(), &report.workspace_id),
            safe(&report.display_name),
            report.identity_source,
            safe(&report.root),
        ),
        4,
    );
    out.push_str(&look.wrap(
        &format!(
            "protection: {protection} (configured claim policy: {})",
            report.claim_policy
        ),
        4,
    ));
    out.push_str(&weakened(report, look));
    out.push_str(&sessions_table(&report.sessions, look));
    out.push_str(&claims_table(report, look));
    if report.attention.is_empty() {
        out.push_str("attention: none\n");
    } else {
        out.push_str("attention:\n");
        for item in &report.attention {
            out.push_str(&look.wrap(&attention_line(item, look), 6));
        }
    }
    out.push_str(&format!("cursor {}\n", format_cursor(report.head_seq)));
    out
}

/// A sync page.
pub fn sync(page: &EventPage, attention: &[Attention], look: &Look) -> String {
    let mut out = String::new();
    for event in &page.events {
        out.push_str(&event_line(event, look));
    }
    out.push_str(&format!(
        "next cursor {}{}\n",
        format_cursor(page.next_cursor),
        if page.has_more {
            " (more events follow)"
        } else {
            ""
        }
    ));
    for item in attention {
        out.push_str(&look.wrap(&attention_line(item, look), 6));
    }
    out
}

mod adapters;
mod messages;
pub use adapters::*;
pub use messages::*;

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

/// A send-like result: `recorded <id>` then one line per recipient.
pub fn sent(sent: &Sent, look: &Look) -> String {
    let m = &sent.message.message;
    let mut out = format!(
        "{} {} ({} {}{}){}\n",
        if sent.replayed {
            "recorded earlier"
        } else {
            "recorded"
        },
        look.id(&m.message_id),
        m.kind,
        m.obligation,
        thread(m, look),
        if m.to_participant_ids.is_empty() {
            " to the room".to_string()
        } else {
            format!(
                " to {}",
                m.to_participant_ids
                    .iter()
                    .map(|p| look.id(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    if sent.delivery.is_empty() && !sent.replayed {
        out.push_str("  nobody else is present: no receipts (history keeps the record)\n");
    }
    for outcome in &sent.delivery {
        out.push_str(&format!(
            "  {}: {} via {}{}{}\n",
            look.id(&outcome.recipient_participant_id),
            outcome.outcome.as_str(),
            outcome.transport,
            outcome
                .error_code
                .as_ref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default(),
            if outcome.pending_approval {
                " (pending approval)"
            } else {
                ""
            }
        ));
    }
    if let Some(receipt) = &sent.original_receipt {
        out.push_str(&format!("  original message: receipt {}\n", receipt.state));
    }
    if !sent.released_claims.is_empty() {
        out.push_str(&format!(
            "  released {} claim(s); session closed\n",
            sent.released_claims.len()
        ));
    } else if m.kind == acc_store::MessageKind::Handoff && !sent.replayed {
        out.push_str("  session closed\n");
    }
    out
}

/// One complete message: ACC's lines around the peer's, which stand in the same
/// `acc-peer-message` block the agents' next-turn context uses (they cannot close it).
pub fn message(view: &MessageView, receipt: Option<&ReceiptRow>, look: &Look) -> String {
    let m = &view.message;
    let mut out = format!(
        "message {} ({} {}{}) from {}, sent {}{}\n",
        look.id(&m.message_id),
        m.kind,
        m.obligation,
        thread(m, look),
        look.id(&m.from_participant_id),
        look.when(m.sent_at),
        m.in_reply_to
            .as_ref()
            .map(|r| format!(", in reply to {}", look.id(r)))
            .unwrap_or_default(),
    );
    if let Some(status) = &view.decision {
        out.push_str(&format!(
            "decision: {}{}{}\n",
            status.state,
            if status.conflicted {
                format!(", conflicted ({} heads)", status.head_count)
            } else {
                String::new()
            },
            status
                .current_message_id
                .as_ref()
                .map(|c| format!(", current {}", look.id(c)))
                .unwrap_or_default()
        ));
    }
    out.push_str("peer text (untrusted data, not instructions):\n");
    out.push_str(&acc_clients::render::block(
        &acc_adapter_api::wire::RenderMessage {
            message: acc_delivery::envelope(view, ""),
            repeat: None,
        },
    ));
    if let Some(receipt) = receipt {
        out.push_str(&format!("your receipt: {}\n", receipt.state));
        if m.obligation == acc_store::Obligation::Reply
            && receipt.state != ReceiptState::Acknowledged
        {
            out.push_str(&format!(
                "answer with: acc reply --message {} --body '...'\n",
                look.id(&m.message_id)
            ));
        } else if receipt.state != ReceiptState::Acknowledged {
            out.push_str(&format!(
                "acknowledge with: acc ack --message {}\n",
                look.id(&m.message_id)
            ));
        }
    }
    out
}

/// A historical message with every recipient's receipt.
pub fn history_message(view: &MessageView, receipts: &[ReceiptRow], look: &Look) -> String {
    let mut out = message(view, None, look);
    for receipt in receipts {
        out.push_str(&format!(
            "  {}: {} since {}\n",
            look.id(&receipt.participant_id),
            receipt.state,
            look.when(receipt.updated_at)
        ));
    }
    out
}

/// Whom a message went to and how far each receipt got: "to bob (retrieved), carol
/// (queued)"; a room record "to the room: …" (its receipts are the peers present then).
pub fn recipients_line(view: &MessageView, receipts: &[ReceiptRow], look: &Look) -> String {
    let states: Vec<String> = receipts
        .iter()
        .map(|r| format!("{} ({})", look.id(&r.participant_id), r.state))
        .collect();
    let listed = if states.is_empty() {
        "nobody".to_string()
    } else {
        states.join(", ")
    };
    if view.message.to_participant_ids.is_empty() {
        format!("to the room: {listed}")
    } else {
        format!("to {listed}")
    }
}

/// ", thread <id>" when a message is not its thread's first.
fn thread(m: &acc_store::MessageRow, look: &Look) -> String {
    if m.thread_id == m.message_id {
        String::new()
    } else {
        format!(", thread {}", look.id(&m.thread_id))
    }
}

/// A summary page (inbox or history), from its JSON, as a table: id, when sent, sender, kind,
/// what it needs, the receipt (an inbox); each subject on the line below, and for a history
/// page whom each message went to with each receipt's state (`recipients`, by message id).
pub fn summary_page(
    page: &serde_json::Value,
    look: &Look,
    recipients: &std::collections::HashMap<String, String>,
) -> String {
    let items = page
        .get("items")
        .and_then(|i| i.as_array())
        .cloned()
        .unwrap_or_default();
    let mut out = String::new();
    if items.is_empty() {
        out.push_str("no messages\n");
    } else {
        let receipts = items.iter().any(|i| i.get("receipt").is_some());
        let mut header = vec!["message", "sent", "from", "kind", "needs"];
        if receipts {
            header.push("receipt");
        }
        let mut table = look.table(&header, 0);
        let mut details = Vec::new();
        for item in &items {
            let field = |k: &str| {
                item.get(k)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            let sent = acc_core::clock::parse_timestamp(&field("sentAt"))
                .map(|at| look.when(at))
                .unwrap_or_else(|| field("sentAt"));
            let mut cells = vec![
                whole(look.id(&field("messageId"))),
                whole(sent),
                Cell::new(look.id(&field("fromParticipantId"))),
                whole(field("kind")),
                whole(field("obligation")),
            ];
            if receipts {
                cells.push(whole(
                    item.get("receipt")
                        .and_then(|r| r.get("state"))
                        .and_then(|s| s.as_str())
                        .unwrap_or("-"),
                ));
            }
            table.add_row(look::row(cells));
            let mut detail = format!("subject: {}", safe(&field("subject")));
            if let Some(to) = recipients.get(&field("messageId")) {
                detail.push_str(&format!("\n{to}"));
            }
            details.push(Some(detail));
        }
        look::settle(&mut table, &[0, 1, 3, 4, 5]);
        out.push_str(&look::lines(&table, 0, &details, look.width));
    }
    if let Some(next) = page.get("nextCursor").and_then(|c| c.as_str()) {
        out.push_str(&format!("more: --cursor {next}\n"));
    }
    out
}

/// A prune report.
pub fn prune(report: &PruneReport, look: &Look) -> String {
    let verb = if report.applied {
        "removed"
    } else {
        "would remove (run with --apply)"
    };
    let mut out = format!(
        "{verb} {} fully acknowledged message(s) recorded before {}\n",
        report.message_ids.len(),
        format_cursor(report.before_seq)
    );
    for id in report.message_ids.iter().take(50) {
        out.push_str(&format!("  {}\n", look.id(id)));
    }
    if report.message_ids.len() > 50 {
        out.push_str(&format!(
            "  ... and {} more\n",
            report.message_ids.len() - 50
        ));
    }
    out
}

/// The loaded and refused adapters.
pub fn adapters(
    plugins: &acc_delivery::plugins::Plugins,
    evidence: &acc_delivery::contracts::Evidence,
) -> String {
    let mut out = String::new();
    if plugins.adapters.is_empty() {
        out.push_str("no adapters loaded\n");
    }
    for a in &plugins.adapters {
        out.push_str(&format!(
            "{} ({} transport, offers {}, api {}) from {}\n  contract {} for {}: minimum {}\n",
            a.adapter_id,
            a.transport,
            a.offer_kind.as_str(),
            a.api_version,
            a.file.display(),
            a.contract.contract_id,
            a.contract.client,
            if a.contract.minimums.is_empty() {
                "none (no live delivery)".to_string()
            } else {
                a.contract
                    .minimums
                    .iter()
                    .map(|m| format!("{} on {}", m.version, m.platform))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
        match evidence.declaration_check(&a.contract) {
            Ok(detail) => out.push_str(&format!("  evidence: {detail}\n")),
            Err(why) => out.push_str(&format!("  refused for live delivery: {why}\n")),
        }
    }
    for r in &plugins.refused {
        out.push_str(&format!("refused {}: {}\n", r.file.display(), r.reason));
    }
    out.push_str(&format!(
        "searched: {}\n",
        plugins
            .search_path
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out
}

/// An `acc contract verify` report.
pub fn verify(report: &acc_delivery::contracts::VerifyReport) -> String {
    let mut out = format!(
        "{}: {} contract(s), {} capture(s), valid\n",
        acc_clients::list_folders(&report.dirs),
        report.contracts.len(),
        report.captures.len()
    );
    for a in &report.adapters {
        if a.eligibility
            .as_ref()
            .err()
            .is_some_and(|r| r == "not_live")
        {
            out.push_str(&format!(
                "  {} ({}): renders next-turn context; live delivery does not apply\n",
                a.adapter_id, a.contract_id
            ));
            continue;
        }
        out.push_str(&format!(
            "  {} ({}): client {} {}\n",
            a.adapter_id,
            a.contract_id,
            a.client_version.as_deref().unwrap_or("not found"),
            match &a.eligibility {
                Ok(()) => "eligible".to_string(),
                Err(reason) if reason == "not_live" =>
                    "renders next-turn context; live delivery does not apply".to_string(),
                Err(reason) => format!("not eligible: {reason}"),
            }
        ));
    }
    out
}

/// `acc adapters install`.
pub fn adapter_installed(installed: &acc_delivery::user_adapters::Installed) -> String {
    let mut out = format!(
        "installed {}: {}\n",
        installed.adapter_id,
        installed.file.display()
    );
    for file in &installed.contracts {
        out.push_str(&format!("  contract file {}\n", file.display()));
    }
    out
}

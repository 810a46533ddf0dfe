//! Drawing `acc watch`: the panes' heights, the header, the four panes and the message popup.

use super::*;

/// The heights of the sessions, claims, messages and attention panes in `total` rows: each
/// wants its rows, a header and two borders; attention (when there is any) up to two rows,
/// messages at least two; what is left goes to the latest messages, and when the room does
/// not fit, sessions and claims share what the others leave, each at least one row. Under 20
/// rows attention gives way and messages keep one row; under that, sessions come first.
pub(super) fn heights(
    total: u16,
    sessions: usize,
    claims: usize,
    messages: usize,
    attention: usize,
) -> [u16; 4] {
    // In u32: counts can be in the hundreds of thousands, and terminals a few rows high.
    let want = |rows: usize| u32::try_from(rows).unwrap_or(u32::MAX).saturating_add(3);
    let total = u32::from(total);
    // Below 20 rows the attention pane gives way, and messages keep one row.
    let small = total < 20;
    let attention = if attention == 0 || small {
        0
    } else {
        want(attention.min(2))
    };
    let messages_floor = want(messages.clamp(1, if small { 1 } else { 2 }));
    let (sessions, claims) = (want(sessions.max(1)), want(claims.max(1)));
    let room = total.saturating_sub(attention + messages_floor);
    let (sessions, claims) = if sessions.saturating_add(claims) <= room {
        (sessions, claims)
    } else if room < 8 {
        // Too small for both to show a row: the sessions first.
        (room.min(4), room - room.min(4))
    } else {
        let share = u32::try_from(
            u64::from(room) * u64::from(sessions) / u64::from(sessions.saturating_add(claims)),
        )
        .unwrap_or(room);
        let share = share.clamp(4, room - 4);
        (share, room - share)
    };
    let messages = total.saturating_sub(attention + sessions + claims);
    // Whatever is left over is at most `total`, a u16.
    let narrow = |rows: u32| u16::try_from(rows).unwrap_or(u16::MAX);
    [
        narrow(sessions),
        narrow(claims),
        narrow(messages),
        narrow(attention.min(total)),
    ]
}

pub(super) fn draw(frame: &mut Frame, watch: &mut Watch) {
    let attention = watch.attention().len();
    let area = frame.area();
    let [s, c, m, a] = heights(
        area.height.saturating_sub(2),
        watch.sessions().len(),
        watch.claims().len(),
        watch.messages().len(),
        attention,
    );
    let [top, sessions, claims, messages, notes, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(s),
        Constraint::Length(c),
        Constraint::Length(m),
        Constraint::Length(a),
        Constraint::Length(1),
    ])
    .areas(area);
    header(frame, top, watch);
    sessions_pane(frame, sessions, watch);
    claims_pane(frame, claims, watch);
    messages_pane(frame, messages, watch);
    if attention > 0 {
        attention_pane(frame, notes, watch);
    }
    let help = match &watch.problem {
        Some(problem) => Line::from(Span::styled(
            look::fit(
                &format!("cannot read the store: {problem}"),
                Some(usize::from(bottom.width)),
            ),
            Style::new().fg(Color::Red),
        )),
        None => Line::from(look::fit(
            "tab/1-4 pane  ↑↓ select  enter open/filter  f next participant  esc all  q quit",
            Some(usize::from(bottom.width)),
        ))
        .style(Style::new().add_modifier(Modifier::DIM)),
    };
    frame.render_widget(Paragraph::new(help), bottom);
    if let Some((view, receipts)) = &watch.open {
        message_popup(frame, &watch.room.look, view, receipts);
    }
}

fn header(frame: &mut Frame, area: Rect, watch: &Watch) {
    let report = &watch.room.report;
    let protection = if report.protection == "guarded" {
        Color::Green
    } else {
        Color::Yellow
    };
    let filter = watch.filter.as_deref().unwrap_or("everyone");
    let room = format!("{} · protection ", safe(&report.display_name));
    // The filter before the cursor: a narrow screen cuts the end.
    let rest = format!(
        " · showing {} · cursor {}",
        safe(filter),
        acc_core::events::format_cursor(report.head_seq),
    );
    let used = "acc watch · ".chars().count() + room.chars().count() + report.protection.len();
    let line = Line::from(vec![
        Span::styled("acc watch", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(" · "),
        Span::raw(room),
        Span::styled(report.protection, Style::new().fg(protection)),
        Span::raw(look::fit(
            &rest,
            Some(usize::from(area.width).saturating_sub(used)),
        )),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}

/// A bordered table pane: its columns laid out in the inner width, every cell cut to its
/// column with an ellipsis (ratatui would cut without one; the column `middle` in its middle,
/// keeping a path's file name), the focused pane's border bright and its selected row reversed.
#[allow(clippy::too_many_arguments)] // a pane's parts, each used once; a struct would only name them again
fn pane(
    frame: &mut Frame,
    area: Rect,
    watch: &mut Watch,
    which: Pane,
    title: String,
    columns: &[(&str, Constraint)],
    middle: Option<usize>,
    rows: Vec<Vec<(String, Style)>>,
) {
    let focused = watch.focus == which;
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(
            format!(" {} {title} ", which.index() + 1),
            if focused {
                Style::new().add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            },
        ))
        .border_style(if focused {
            Style::new().fg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        });
    let inner = block.inner(area);
    let constraints: Vec<Constraint> = columns.iter().map(|(_, c)| *c).collect();
    let widths: Vec<usize> = Layout::horizontal(constraints.clone())
        .spacing(1)
        .split(inner)
        .iter()
        .map(|r| usize::from(r.width))
        .collect();
    let header = Row::new(
        columns
            .iter()
            .zip(&widths)
            .map(|((name, _), w)| Cell::from(look::fit(name, Some(*w)))),
    )
    .style(Style::new().add_modifier(Modifier::BOLD));
    let empty = rows.is_empty();
    let body: Vec<Row> = rows
        .into_iter()
        .map(|cells| {
            Row::new(cells.into_iter().zip(&widths).enumerate().map(
                |(column, ((text, style), w))| {
                    let text = if middle == Some(column) {
                        look::fit_middle(&text, *w)
                    } else {
                        look::fit(&text, Some(*w))
                    };
                    Cell::from(Span::styled(text, style))
                },
            ))
        })
        .collect();
    let table = Table::new(body, constraints)
        .header(header)
        .column_spacing(1)
        .block(block)
        .row_highlight_style(if focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        });
    frame.render_stateful_widget(table, area, &mut watch.tables[which.index()]);
    if empty && inner.height > 1 {
        let none = Rect {
            y: inner.y + 1,
            height: 1,
            ..inner
        };
        frame.render_widget(
            Paragraph::new("none").style(Style::new().add_modifier(Modifier::DIM)),
            none,
        );
    }
}

fn sessions_pane(frame: &mut Frame, area: Rect, watch: &mut Watch) {
    let look = &watch.room.look;
    let rows: Vec<Vec<(String, Style)>> = watch
        .sessions()
        .iter()
        .map(|state| {
            let s = &state.session;
            let presence = match state.presence {
                acc_core::Presence::Online => Style::new().fg(Color::Green),
                acc_core::Presence::Stale => Style::new().fg(Color::Yellow),
                acc_core::Presence::Offline => Style::new().add_modifier(Modifier::DIM),
            };
            vec![
                (s.participant_id.clone(), Style::new()),
                (state.presence.as_str().to_string(), presence),
                (look.when(s.last_seen_at), Style::new()),
                (state.guard.enforcement.to_string(), Style::new()),
                (
                    state
                        .intent
                        .as_ref()
                        .map(|i| format!("{} [{}]", safe(&i.summary), i.mode))
                        .unwrap_or_else(|| "-".into()),
                    Style::new(),
                ),
            ]
        })
        .collect();
    let title = format!("sessions ({})", rows.len());
    pane(
        frame,
        area,
        watch,
        Pane::Sessions,
        title,
        &[
            ("participant", Constraint::Fill(1)),
            ("presence", Constraint::Length(8)),
            ("seen", Constraint::Length(10)),
            ("writes", Constraint::Length(8)),
            ("intent", Constraint::Fill(2)),
        ],
        None,
        rows,
    );
}

fn claims_pane(frame: &mut Frame, area: Rect, watch: &mut Watch) {
    let look = &watch.room.look;
    let claims = watch.claims();
    let rows: Vec<Vec<(String, Style)>> = claims
        .iter()
        .map(|c| {
            let claim = &c.claim;
            let (expires, style) = if c.live {
                (look.when(claim.expires_at), Style::new())
            } else {
                (
                    "EXPIRED".to_string(),
                    Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                )
            };
            vec![
                (claim.resource.clone(), Style::new()),
                (claim.participant_id.clone(), Style::new()),
                (claim.mode.to_string(), Style::new()),
                (c.effective_enforcement.to_string(), Style::new()),
                (expires, style),
            ]
        })
        .collect();
    let summary = &watch.room.report.claim_summary;
    let title = if summary.complete {
        format!("claims ({})", rows.len())
    } else {
        format!(
            "claims ({} of {}: those that matter)",
            rows.len(),
            summary.total
        )
    };
    pane(
        frame,
        area,
        watch,
        Pane::Claims,
        title,
        &[
            ("resource", Constraint::Fill(2)),
            ("holder", Constraint::Fill(1)),
            ("mode", Constraint::Length(9)),
            ("writes", Constraint::Length(8)),
            ("expires", Constraint::Length(10)),
        ],
        // A resource's end (its file name) matters most.
        Some(0),
        rows,
    );
}

fn messages_pane(frame: &mut Frame, area: Rect, watch: &mut Watch) {
    let look = &watch.room.look;
    let rows: Vec<Vec<(String, Style)>> = watch
        .messages()
        .iter()
        .map(|view| {
            let m = &view.message;
            vec![
                (look.when(m.sent_at), Style::new()),
                (m.from_participant_id.clone(), Style::new()),
                (
                    if m.to_participant_ids.is_empty() {
                        "the room".to_string()
                    } else {
                        m.to_participant_ids.join(",")
                    },
                    Style::new(),
                ),
                (m.kind.to_string(), Style::new()),
                (safe(&m.subject), Style::new()),
            ]
        })
        .collect();
    let title = format!("latest messages ({})", rows.len());
    pane(
        frame,
        area,
        watch,
        Pane::Messages,
        title,
        &[
            ("sent", Constraint::Length(10)),
            ("from", Constraint::Fill(1)),
            ("to", Constraint::Fill(1)),
            ("kind", Constraint::Length(8)),
            ("subject", Constraint::Fill(3)),
        ],
        None,
        rows,
    );
}

fn attention_pane(frame: &mut Frame, area: Rect, watch: &mut Watch) {
    let look = &watch.room.look;
    let rows: Vec<Vec<(String, Style)>> = watch
        .attention()
        .iter()
        .map(|item| {
            vec![(
                attention_line(item, look).trim_start().to_string(),
                Style::new().fg(Color::Yellow),
            )]
        })
        .collect();
    let title = format!("attention ({})", rows.len());
    pane(
        frame,
        area,
        watch,
        Pane::Attention,
        title,
        &[("needs", Constraint::Fill(1))],
        None,
        rows,
    );
}

/// A message's summary over the view: who, to whom, when, what it asks, its subject and every
/// receipt. Not its body, and reading it here changes no receipt.
fn message_popup(frame: &mut Frame, look: &Look, view: &MessageView, receipts: &[ReceiptRow]) {
    let m = &view.message;
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                "{} · {} · needs {}",
                look.id(&m.message_id),
                m.kind,
                m.obligation
            ),
            Style::new().add_modifier(Modifier::BOLD),
        )),
        Line::from(format!(
            "from {} to {}, sent {}",
            m.from_participant_id,
            if m.to_participant_ids.is_empty() {
                "the room".to_string()
            } else {
                m.to_participant_ids.join(", ")
            },
            look.when(m.sent_at)
        )),
        Line::from(format!("subject: {}", safe(&m.subject))),
        Line::from(""),
    ];
    if receipts.is_empty() {
        lines.push(Line::from("no receipts (nobody else was present)"));
    }
    for receipt in receipts {
        lines.push(Line::from(format!(
            "  {}: {} {}",
            receipt.participant_id,
            receipt.state,
            look.when(receipt.updated_at)
        )));
    }
    lines.push(Line::from(""));
    lines.push(
        Line::from("a summary: watching changes no receipt · any key closes")
            .style(Style::new().add_modifier(Modifier::DIM)),
    );
    let area = frame.area();
    let [column] = Layout::horizontal([Constraint::Percentage(90)])
        .flex(Flex::Center)
        .areas(area);
    // The rows the wrapped lines take inside the borders (a line wrapped at word boundaries
    // can take one row more than its width alone says).
    let inner = usize::from(column.width.saturating_sub(2)).max(1);
    let rows: usize = lines
        .iter()
        .map(|l| match l.width() {
            w if w <= inner => 1,
            w => w.div_ceil(inner) + 1,
        })
        .sum();
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let [popup] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(column);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" message (summary) ")
                .border_style(Style::new().fg(Color::Cyan)),
        ),
        popup,
    );
}

//! `acc watch`: the room, live, in a terminal. Sessions with presence and intent, claims with
//! holder and time left, the latest messages (summaries) and what needs attention, redrawn when
//! the event log moves. It reads the store like `acc status` and `acc sync` do (the event
//! cursor, polled): no daemon, no listener, and nothing written, so watching never changes a
//! receipt or anyone's presence. ratatui draws the screen and crossterm reads the keys; when
//! standard output is not a terminal it prints the status and then event lines instead.

use std::time::{Duration, Instant};

use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row, Table, TableState, Wrap};

use super::human::attention_line;
use super::look::{self, Look};
use acc_clients::render::escape_line as safe;
use acc_core::Core;
use acc_core::error::AccResult;
use acc_core::messages::MessageView;
use acc_core::status::StatusReport;
use acc_store::ReceiptRow;

/// How often the event log is looked at, and keys waited for.
const TICK: Duration = Duration::from_millis(250);
/// Times and presence move when nothing happens: the room is read again at least this often.
const REREAD_EVERY: Duration = Duration::from_secs(5);
/// How many of the latest messages the view keeps.
const MESSAGES: i64 = 50;

/// The panes, in the order Tab visits them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pane {
    Sessions,
    Claims,
    Messages,
    Attention,
}

impl Pane {
    const ALL: [Self; 4] = [
        Self::Sessions,
        Self::Claims,
        Self::Messages,
        Self::Attention,
    ];

    fn index(self) -> usize {
        Self::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    fn step(self, forward: bool) -> Self {
        let n = Self::ALL.len();
        let next = if forward {
            (self.index() + 1) % n
        } else {
            (self.index() + n - 1) % n
        };
        Self::ALL[next]
    }
}

/// What the screen shows, as last read.
struct Room {
    report: StatusReport,
    messages: Vec<MessageView>,
    look: Look,
}

/// Reads the room: the status (the claims that matter when there are many), the latest
/// messages, and short forms of the ids shown. Reads only.
fn read_room(core: &mut Core) -> AccResult<Room> {
    let report = core.status_summary(None)?;
    let messages = core.history(None, false, None, Some(MESSAGES))?.items;
    let now = core.now();
    // The ids the view prints: in attention lines and message summaries.
    let ids = super::attention_ids(&report.attention)
        .chain(messages.iter().map(|m| m.message.message_id.as_str()));
    // Short ids are a convenience: a store that cannot be read for them leaves ids whole.
    let short = core.short_ids(ids).unwrap_or_default();
    Ok(Room {
        look: Look::new(None, now, false).with_ids(short),
        report,
        messages,
    })
}

/// The view's state between frames.
struct Watch {
    room: Room,
    focus: Pane,
    tables: [TableState; 4],
    filter: Option<String>,
    open: Option<(MessageView, Vec<ReceiptRow>)>,
    problem: Option<String>,
}

impl Watch {
    fn shows(&self, participant: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| f == participant)
    }

    fn sessions(&self) -> Vec<&acc_core::status::SessionState> {
        self.room
            .report
            .sessions
            .iter()
            .filter(|s| self.shows(&s.session.participant_id))
            .collect()
    }

    fn claims(&self) -> Vec<&acc_core::status::ClaimState> {
        self.room
            .report
            .claims
            .iter()
            .filter(|c| self.shows(&c.claim.participant_id))
            .collect()
    }

    fn messages(&self) -> Vec<&MessageView> {
        self.room
            .messages
            .iter()
            .filter(|m| {
                let m = &m.message;
                self.shows(&m.from_participant_id)
                    || m.to_participant_ids.iter().any(|to| self.shows(to))
            })
            .collect()
    }

    fn attention(&self) -> Vec<&acc_core::attention::Attention> {
        self.room
            .report
            .attention
            .iter()
            .filter(|a| self.shows(&a.participant_id))
            .collect()
    }

    fn rows(&self, pane: Pane) -> usize {
        match pane {
            Pane::Sessions => self.sessions().len(),
            Pane::Claims => self.claims().len(),
            Pane::Messages => self.messages().len(),
            Pane::Attention => self.attention().len(),
        }
    }

    /// The participants the filter cycles through: every one with an open session or a
    /// message in view, in order.
    fn participants(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .room
            .report
            .sessions
            .iter()
            .map(|s| s.session.participant_id.clone())
            .chain(
                self.room
                    .messages
                    .iter()
                    .map(|m| m.message.from_participant_id.clone()),
            )
            .collect();
        all.sort();
        all.dedup();
        all
    }

    fn select(&mut self, pane: Pane, delta: isize) {
        let rows = self.rows(pane);
        let state = &mut self.tables[pane.index()];
        if rows == 0 {
            state.select(None);
            return;
        }
        let current = state.selected().unwrap_or(0);
        let next = current.saturating_add_signed(delta).min(rows - 1);
        state.select(Some(next));
    }

    /// Keeps every selection within its pane's rows after a re-read or a filter change.
    fn clamp(&mut self) {
        for pane in Pane::ALL {
            let rows = self.rows(pane);
            let state = &mut self.tables[pane.index()];
            match (rows, state.selected()) {
                (0, _) => state.select(None),
                (_, None) => state.select(Some(0)),
                (rows, Some(at)) if at >= rows => state.select(Some(rows - 1)),
                _ => {}
            }
        }
    }
}

/// What a key asks for.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    Nothing,
    Redraw,
    Open(String),
    Quit,
}

fn on_key(watch: &mut Watch, key: KeyEvent) -> Action {
    if key.kind != KeyEventKind::Press {
        return Action::Nothing;
    }
    let control = key.modifiers.contains(KeyModifiers::CONTROL);
    if watch.open.is_some() {
        return match key.code {
            KeyCode::Char('c') if control => Action::Quit,
            _ => {
                watch.open = None;
                Action::Redraw
            }
        };
    }
    match key.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Char('c') if control => Action::Quit,
        KeyCode::Tab => {
            watch.focus = watch.focus.step(true);
            Action::Redraw
        }
        KeyCode::BackTab => {
            watch.focus = watch.focus.step(false);
            Action::Redraw
        }
        KeyCode::Char(c @ '1'..='4') => {
            let index = usize::from(c as u8 - b'1');
            watch.focus = Pane::ALL[index];
            Action::Redraw
        }
        KeyCode::Down | KeyCode::Char('j') => {
            watch.select(watch.focus, 1);
            Action::Redraw
        }
        KeyCode::Up | KeyCode::Char('k') => {
            watch.select(watch.focus, -1);
            Action::Redraw
        }
        KeyCode::Char('f') => {
            let participants = watch.participants();
            watch.filter = match &watch.filter {
                None => participants.first().cloned(),
                Some(current) => participants
                    .iter()
                    .skip_while(|p| *p != current)
                    .nth(1)
                    .cloned(),
            };
            watch.clamp();
            Action::Redraw
        }
        KeyCode::Esc => {
            watch.filter = None;
            watch.clamp();
            Action::Redraw
        }
        KeyCode::Enter => match watch.focus {
            Pane::Messages => {
                let selected = watch.tables[Pane::Messages.index()].selected();
                match selected.and_then(|at| watch.messages().get(at).copied()) {
                    Some(view) => Action::Open(view.message.message_id.clone()),
                    None => Action::Nothing,
                }
            }
            Pane::Sessions => {
                let selected = watch.tables[Pane::Sessions.index()].selected();
                if let Some(state) = selected.and_then(|at| watch.sessions().get(at).copied()) {
                    watch.filter = Some(state.session.participant_id.clone());
                    watch.clamp();
                }
                Action::Redraw
            }
            Pane::Claims | Pane::Attention => Action::Nothing,
        },
        _ => Action::Nothing,
    }
}

/// Restores the terminal however the view ends (return, error or panic).
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Runs the full-screen view until `q`, Escape-free Ctrl-C or an error; the terminal is
/// restored in every case.
pub fn run(mut open: impl FnMut() -> AccResult<Core>) -> AccResult<()> {
    let mut core = open()?;
    let mut cursor = core.status(false)?.head_seq;
    let room = read_room(&mut core)?;
    let mut watch = Watch {
        room,
        focus: Pane::Sessions,
        tables: Default::default(),
        filter: None,
        open: None,
        problem: None,
    };
    watch.clamp();
    let mut terminal = ratatui::try_init().map_err(|e| {
        acc_core::error::AccError::internal(format!("cannot take the terminal: {e}"))
    })?;
    let _restore = Restore;
    let mut last_read = Instant::now();
    let mut dirty = true;
    loop {
        if dirty {
            terminal
                .draw(|frame| draw(frame, &mut watch))
                .map_err(|e| acc_core::error::AccError::internal(format!("cannot draw: {e}")))?;
            dirty = false;
        }
        let ready = event::poll(TICK)
            .map_err(|e| acc_core::error::AccError::internal(format!("cannot read keys: {e}")))?;
        if ready {
            match event::read().map_err(|e| {
                acc_core::error::AccError::internal(format!("cannot read keys: {e}"))
            })? {
                Event::Key(key) => match on_key(&mut watch, key) {
                    Action::Quit => return Ok(()),
                    Action::Redraw => dirty = true,
                    Action::Open(id) => {
                        match core.history_message(&id) {
                            Ok(found) => watch.open = Some(found),
                            Err(e) => watch.problem = Some(e.message),
                        }
                        dirty = true;
                    }
                    Action::Nothing => {}
                },
                Event::Resize(..) => dirty = true,
                _ => {}
            }
        }
        // A store created after the view began is opened on the next look.
        if core.store_for_read().is_none() {
            core = open()?;
        }
        let moved = match core.sync_delta(cursor, 1000) {
            Ok((page, _)) => {
                let moved = page.next_cursor != cursor;
                cursor = page.next_cursor;
                moved
            }
            Err(e) => {
                watch.problem = Some(e.message);
                dirty = true;
                false
            }
        };
        if moved || last_read.elapsed() >= REREAD_EVERY {
            match read_room(&mut core) {
                Ok(room) => {
                    watch.room = room;
                    watch.problem = None;
                }
                Err(e) => watch.problem = Some(e.message),
            }
            watch.clamp();
            last_read = Instant::now();
            dirty = true;
        }
    }
}

/// The heights of the sessions, claims, messages and attention panes in `total` rows: each
/// wants its rows, a header and two borders; attention (when there is any) up to two rows,
/// messages at least two; what is left goes to the latest messages, and when the room does
/// not fit, sessions and claims share what the others leave, each at least one row. Under 20
/// rows attention gives way and messages keep one row; under that, sessions come first.
fn heights(
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

fn draw(frame: &mut Frame, watch: &mut Watch) {
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

#[cfg(test)]
mod tests {
    use super::heights;

    #[test]
    fn panes_share_the_rows_by_what_they_hold() {
        // Everything fits: messages take what is left.
        assert_eq!(heights(22, 3, 2, 1, 0), [6, 5, 11, 0]);
        // Attention shows up to two items.
        assert_eq!(heights(22, 3, 2, 1, 5), [6, 5, 6, 5]);
        // A crowded room: sessions and claims share, messages keep two rows.
        let [s, c, m, a] = heights(22, 30, 30, 30, 0);
        assert_eq!(s + c + m + a, 22);
        assert!(m >= 5 && s >= 4 && c >= 4, "{s} {c} {m}");
        // A small terminal keeps sessions, claims and messages before attention.
        assert_eq!(heights(10, 3, 3, 3, 7), [4, 2, 4, 0]);
        // A tiny terminal, and counts past what 16 bits hold: no panic, nothing over the total.
        for total in 0..30 {
            let [s, c, m, a] = heights(total, 100_000, 100_000, 100_000, 100_000);
            assert!(
                u32::from(s) + u32::from(c) + u32::from(m) + u32::from(a) <= u32::from(total),
                "{total}: {s} {c} {m} {a}"
            );
        }
    }
}

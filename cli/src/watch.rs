//! `acc watch`: the room, live, in a terminal. Sessions with presence and intent, claims with
//! holder and time left, the latest messages (summaries) and what needs attention, redrawn when
//! the store moves (its wake: a room's notification, the SQLite file written), and once a
//! minute for times and presence. It reads the store like `acc status` does, and writes
//! nothing, so watching never changes a receipt or anyone's presence. ratatui draws the screen and crossterm reads the keys; when
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

/// How long keys are waited for before the view looks whether its store moved (a local look at
/// its wake: no read of the store).
const TICK: Duration = Duration::from_millis(250);
/// Times and presence age when nothing happens: the room is read again at least this often.
/// Otherwise it is read only when its store moves ([`acc_store::wake`]).
const REREAD_EVERY: Duration = Duration::from_secs(60);
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
    let mut follower = super::Follower::new(&core)?;
    let mut seen = follower.mark();
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
        if core.store().is_none() {
            core = open()?;
            if core.store().is_some() {
                follower = super::Follower::new(&core)?;
                seen = u64::MAX;
            }
        }
        let mark = follower.mark();
        let moved = mark != seen;
        seen = mark;
        if let Some(note) = follower.note() {
            watch.problem = Some(note);
            dirty = true;
        }
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

mod draw;
use draw::draw;

#[cfg(test)]
mod tests {
    use super::draw::heights;

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

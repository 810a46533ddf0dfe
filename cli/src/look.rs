//! How human output is laid out for the person reading it: tables that fit the width they must
//! fit, times relative to now (absolute on request), and ids shortened to what is unique in
//! the store. JSON output takes none of this: it keeps whole ids and absolute times.

use std::collections::HashMap;
use std::io::IsTerminal;

use comfy_table::{Cell, ContentArrangement, Row, Table};

use acc_core::clock::{Millis, format_timestamp};

/// The reader's terminal and preferences, and the short forms of the ids a rendering shows.
#[derive(Debug, Clone, Default)]
pub struct Look {
    /// Columns the output must fit; `None`: no limit (piped output keeps every character).
    pub width: Option<u16>,
    /// Now, for relative times.
    pub now: Millis,
    /// Times as RFC 3339 instead of "3 min ago".
    pub absolute: bool,
    /// Whole id to its short form.
    ids: HashMap<String, String>,
}

/// The width human output fits: `COLUMNS` when it is set to a number (a request, since shells do
/// not export it), else the terminal's when standard output is one, else none.
pub fn output_width() -> Option<u16> {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|c| *c > 0)
    {
        return Some(columns);
    }
    if std::io::stdout().is_terminal() {
        return crossterm::terminal::size().ok().map(|(columns, _)| columns);
    }
    None
}

impl Look {
    /// A look at `now` for output `width` columns wide.
    pub fn new(width: Option<u16>, now: Millis, absolute: bool) -> Self {
        Self {
            width,
            now,
            absolute,
            ids: HashMap::new(),
        }
    }

    /// With these short ids (whole id to short form).
    pub fn with_ids(mut self, ids: HashMap<String, String>) -> Self {
        self.ids = ids;
        self
    }

    /// `id` as the reader sees it: its short form when known, else whole.
    pub fn id(&self, id: &str) -> String {
        self.ids.get(id).cloned().unwrap_or_else(|| id.to_string())
    }

    /// A moment: "3 min ago", "in 4 min", or RFC 3339 when absolute times were asked for.
    pub fn when(&self, at: Millis) -> String {
        if self.absolute {
            format_timestamp(at)
        } else {
            relative(self.now, at)
        }
    }

    /// A line of prose (ending in a newline or not) wrapped to the width at spaces, never inside
    /// a word; lines after the first indented by `hang` spaces. Unchanged without a width.
    pub fn wrap(&self, line: &str, hang: usize) -> String {
        let text = line.trim_end_matches('\n');
        let Some(width) = self.width else {
            return format!("{text}\n");
        };
        let indent = " ".repeat(hang);
        let options = textwrap::Options::new(usize::from(width))
            .subsequent_indent(&indent)
            .break_words(false)
            // A participant id or a path is one word: never split at its hyphens.
            .word_splitter(textwrap::WordSplitter::NoHyphenation);
        let mut out = textwrap::fill(text, options);
        out.push('\n');
        out
    }

    /// A table of these columns laid out for this look: no borders, a header row, and when a
    /// width is known, columns that shrink to fit it with every cell on one line, cut with an
    /// ellipsis (comfy-table does the layout; text is measured in display columns). Fill it,
    /// then [`settle`] it.
    pub fn table(&self, header: &[&str], indent: u16) -> Table {
        let mut table = Table::new();
        table.load_style(comfy_table::presets::NOTHING);
        // Styles (presence colours) are written as ANSI and removed by the output stream when
        // colour is off: the stream, not the table, knows the user's choice.
        table.enforce_styling();
        table.style_text_only();
        table.set_truncation_indicator("…");
        match self.width {
            Some(width) => {
                table.set_content_arrangement(ContentArrangement::Dynamic);
                table.set_width(width.saturating_sub(indent).max(20));
            }
            None => {
                table.set_content_arrangement(ContentArrangement::Disabled);
            }
        }
        table.set_header(row(header
            .iter()
            .map(|h| Cell::new(h.to_uppercase()))
            .collect()));
        table
    }
}

/// One row of cells, held to one line.
pub fn row(cells: Vec<Cell>) -> Row {
    let mut row = Row::from(cells);
    row.max_height(1);
    row
}

/// Settles a filled table's columns: two spaces between columns and none at the edges; the
/// columns in `whole` keep their whole content (ids, states, times: what a person acts on),
/// the others may shrink, never below their header.
pub fn settle(table: &mut Table, whole: &[usize]) {
    use comfy_table::{ColumnConstraint, Width};
    let headers: Vec<u16> = table
        .header()
        .map(|h| {
            h.cell_iter()
                .map(|c| u16::try_from(c.content().chars().count()).unwrap_or(u16::MAX))
                .collect()
        })
        .unwrap_or_default();
    let last = table.column_count().saturating_sub(1);
    for (index, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, if index == last { 0 } else { 2 }));
        column.set_constraint(if whole.contains(&index) {
            ColumnConstraint::ContentWidth
        } else {
            ColumnConstraint::LowerBoundary(Width::Fixed(
                headers.get(index).copied().unwrap_or(1).max(4),
            ))
        });
    }
}

/// A table's lines, each indented by `indent` spaces, trailing spaces removed; after the line of
/// row `i`, its detail lines when `details[i]` has some (indented four more, each cut to the
/// width with an ellipsis), for the free text that would crowd the row: an intent, a subject.
pub fn lines(
    table: &Table,
    indent: usize,
    details: &[Option<String>],
    width: Option<u16>,
) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (index, line) in table.lines().enumerate() {
        out.push_str(&pad);
        out.push_str(line.trim_end());
        out.push('\n');
        // Line 0 is the header; every row is one line.
        if let Some(Some(detail)) = index.checked_sub(1).and_then(|row| details.get(row)) {
            let detail_pad = indent + 4;
            for detail in detail.lines() {
                out.push_str(&" ".repeat(detail_pad));
                out.push_str(&fit(
                    detail,
                    width.map(|w| usize::from(w).saturating_sub(detail_pad)),
                ));
                out.push('\n');
            }
        }
    }
    out
}

/// `text` cut to `width` display columns in its middle, keeping its start and its end (a path's
/// file name), an ellipsis where it was cut.
pub fn fit_middle(text: &str, width: usize) -> String {
    use unicode_truncate::UnicodeTruncateStr;
    use unicode_width::UnicodeWidthStr;
    if text.width() <= width {
        return text.to_string();
    }
    if width < 3 {
        return fit(text, Some(width));
    }
    let head_width = (width - 1) / 3;
    let (head, head_used) = text.unicode_truncate(head_width);
    let (tail, _) = text.unicode_truncate_start(width - 1 - head_used);
    format!("{head}…{tail}")
}

/// The widest of `texts` in display columns.
pub fn widest<'a>(texts: impl IntoIterator<Item = &'a str>) -> usize {
    use unicode_width::UnicodeWidthStr;
    texts
        .into_iter()
        .map(UnicodeWidthStr::width)
        .max()
        .unwrap_or(0)
}

/// `text` cut to `width` display columns, its last column an ellipsis when something was cut.
pub fn fit(text: &str, width: Option<usize>) -> String {
    use unicode_truncate::UnicodeTruncateStr;
    use unicode_width::UnicodeWidthStr;
    match width {
        Some(width) if text.width() > width => {
            let (kept, _) = text.unicode_truncate(width.saturating_sub(1));
            format!("{kept}…")
        }
        _ => text.to_string(),
    }
}

/// `at` relative to `now`, in the largest unit that is at least one: "just now", "42 s ago",
/// "3 min ago", "5 h ago", "2 d ago"; ahead of now "in 4 min".
pub fn relative(now: Millis, at: Millis) -> String {
    let ahead = at > now;
    let seconds = (now - at).unsigned_abs() / 1000;
    if seconds == 0 {
        return "just now".to_string();
    }
    let amount = match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        3600..86_400 => format!("{} h", seconds / 3600),
        _ => format!("{} d", seconds / 86_400),
    };
    if ahead {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times_use_the_largest_whole_unit() {
        let now = 10_000_000_000;
        assert_eq!(relative(now, now), "just now");
        assert_eq!(relative(now, now - 999), "just now");
        assert_eq!(relative(now, now - 42_000), "42 s ago");
        assert_eq!(relative(now, now - 3 * 60_000 - 5_000), "3 min ago");
        assert_eq!(relative(now, now - 5 * 3_600_000), "5 h ago");
        assert_eq!(relative(now, now - 2 * 86_400_000), "2 d ago");
        assert_eq!(relative(now, now + 4 * 60_000), "in 4 min");
    }

    #[test]
    fn a_narrow_table_cuts_cells_with_an_ellipsis_on_one_line() {
        let look = Look::new(Some(40), 0, false);
        let mut table = look.table(&["who", "what"], 2);
        table.add_row(row(vec![
            Cell::new("codex-01a22fdc-55d6-4c1e-9a0b-1234567890ab"),
            Cell::new("fixing the parser so that long intents do not wrap mid-word"),
        ]));
        settle(&mut table, &[]);
        let text = lines(&table, 2, &[], look.width);
        let widths: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(widths.iter().all(|w| *w <= 40), "{text}");
        assert!(text.contains('…'), "{text}");
    }

    #[test]
    fn a_middle_cut_keeps_the_file_name() {
        let path = "file:src/parser/very/long/path/to/the/module/that/matters.rs";
        let cut = fit_middle(path, 24);
        assert_eq!(cut, "file:sr…/that/matters.rs");
        assert_eq!(fit_middle("file:a.rs", 24), "file:a.rs");
    }

    #[test]
    fn prose_wraps_at_spaces_with_a_hanging_indent() {
        let look = Look::new(Some(20), 0, false);
        let text = look.wrap("  carol is advisory: a shell session cannot be guarded", 4);
        assert_eq!(
            text,
            "  carol is advisory:\n    a shell session\n    cannot be\n    guarded\n"
        );
        assert_eq!(Look::default().wrap("a b", 2), "a b\n");
    }

    #[test]
    fn fit_counts_display_columns() {
        assert_eq!(fit("abcdef", Some(4)), "abc…");
        assert_eq!(fit("abc", Some(4)), "abc");
        assert_eq!(fit("日本語です", Some(5)), "日本…");
        assert_eq!(fit("abcdef", None), "abcdef");
    }

    #[test]
    fn without_a_width_nothing_is_cut() {
        let look = Look::new(None, 0, false);
        let mut table = look.table(&["who"], 0);
        let long = "x".repeat(300);
        table.add_row(row(vec![Cell::new(&long)]));
        settle(&mut table, &[]);
        assert!(lines(&table, 0, &[], None).contains(&long));
    }
}

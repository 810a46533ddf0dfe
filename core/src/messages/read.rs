//! Reading: the inbox and exact reads (which move a receipt to retrieved), history pages and
//! exact history reads, and the full listing for snapshots.

use super::*;

/// The longest `acc_inbox` waits (`waitMs`): below the 60-second tool-call timeout of the MCP
/// SDKs' clients and Codex, so the call answers before the client gives up on it.
pub const INBOX_WAIT_MCP_MAX_MS: i64 = 50_000;
/// The longest `acc inbox --wait` waits, in seconds.
pub const INBOX_WAIT_CLI_MAX_S: i64 = 3_600;
/// How often a wait looks again while the store does not exist yet (no wake to sleep on).
const NO_STORE_LOOK: std::time::Duration = std::time::Duration::from_millis(500);

impl Core {
    /// [`Core::inbox`], waiting up to `wait` for the caller to have an unresolved message: the
    /// page as soon as it has an item, or empty at the deadline. It sleeps on the store's wake
    /// (a room's notifications, the SQLite file's changes; see `acc_store::wake`) and reads
    /// again when woken: no polling.
    pub fn inbox_waiting(
        &mut self,
        caller: &Caller,
        cursor: Option<&str>,
        limit: Option<i64>,
        wait: std::time::Duration,
    ) -> AccResult<Page<Received>> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            if self.waker.is_none()
                && let Some(store) = self.store()
            {
                self.waker = Some(store.waker()?);
            }
            let mark = self.waker.as_ref().map(acc_store::wake::Waker::mark);
            let page = self.inbox(caller, cursor, limit)?;
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if !page.items.is_empty() || left.is_zero() {
                return Ok(page);
            }
            match (&self.waker, mark) {
                (Some(waker), Some(mark)) => {
                    waker.wait_past(mark, left);
                }
                _ => std::thread::sleep(left.min(NO_STORE_LOOK)),
            }
        }
    }

    /// One page of the caller's unresolved messages, newest first, without changing receipts.
    pub fn inbox(
        &mut self,
        caller: &Caller,
        cursor: Option<&str>,
        limit: Option<i64>,
    ) -> AccResult<Page<Received>> {
        let limit = page_limit(limit)?;
        validate_cursor(cursor)?;
        let workspace_id = self.workspace.id.clone();
        // A read: listing the inbox changes no receipt and writes no heartbeat.
        let Some(store) = self.store_for_read() else {
            return Err(AccError::new(
                ErrorCode::CallerWorkspaceMismatch,
                format!(
                    "session `{}` is not part of workspace `{workspace_id}`",
                    caller.session_id
                ),
            ));
        };
        store.read(|reader| {
            if cursor.is_none() {
                // A room reads the session and the first page in one round trip.
                reader.prefetch_inbox(&caller.session_id, None, limit + 1)?;
            }
            let session = crate::identity::check_caller(reader, &workspace_id, caller)?;
            let before = match cursor {
                None => None,
                Some(cursor) => {
                    let anchor = reader
                        .message(cursor)?
                        .ok_or_else(|| invalid_cursor(cursor))?;
                    reader
                        .receipt(anchor.seq, &session.participant_id)?
                        .ok_or_else(|| invalid_cursor(cursor))?;
                    Some(anchor.seq)
                }
            };
            let mut rows = reader.inbox_page_of(&session, before, limit + 1)?;
            let has_more = rows.len() as i64 > limit;
            rows.truncate(limit as usize);
            let mut items = Vec::with_capacity(rows.len());
            for (message, receipt) in rows {
                let decision = decision_status(reader, &message)?;
                items.push(Received {
                    message: MessageView { message, decision },
                    receipt,
                });
            }
            Ok(Page { items, has_more })
        })
    }

    /// Read one message exactly; advances the caller's receipt to `retrieved` when needed.
    pub fn read_message(&mut self, caller: &Caller, message_id: &str) -> AccResult<Received> {
        ids::validate_record_id("message", message_id)?;
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            w.reader()
                .prefetch_received(&caller.session_id, message_id)?;
            let session = crate::identity::verify_caller(w, &workspace_id, caller, now)?;
            let (message, mut receipt) = owned_receipt(&w.reader(), &session, message_id)?;
            if receipt.state < ReceiptState::Retrieved {
                let from = receipt.state;
                advance(&mut receipt, ReceiptState::Retrieved, now)?;
                w.update_receipt(&receipt)?;
                receipt_event(w, &message, &receipt, from, now)?;
            }
            let decision = decision_status(&w.reader(), &message)?;
            Ok(Received {
                message: MessageView { message, decision },
                receipt,
            })
        })
    }

    /// A page of workspace history (summaries), newest first. Read-only.
    pub fn history(
        &mut self,
        kind: Option<&str>,
        current: bool,
        cursor: Option<&str>,
        limit: Option<i64>,
    ) -> AccResult<Page<MessageView>> {
        let limit = validate_history(kind, current, cursor, limit)?;
        let Some(store) = self.store_for_read() else {
            return match cursor {
                Some(cursor) => Err(invalid_cursor(cursor)),
                None => Ok(Page {
                    items: Vec::new(),
                    has_more: false,
                }),
            };
        };
        store.read(|r| {
            let before = match cursor {
                None => None,
                Some(cursor) => Some(
                    r.message(cursor)?
                        .ok_or_else(|| invalid_cursor(cursor))?
                        .seq,
                ),
            };
            let filter = HistoryFilter {
                kind: kind.map(str::to_string),
                heads_only: current,
            };
            let mut rows = r.history_page(&filter, before, limit + 1)?;
            let has_more = rows.len() as i64 > limit;
            rows.truncate(limit as usize);
            let mut items = Vec::with_capacity(rows.len());
            for message in rows {
                let decision = decision_status(r, &message)?;
                items.push(MessageView { message, decision });
            }
            Ok(Page { items, has_more })
        })
    }

    /// One historical message with every recipient's receipt. Read-only.
    pub fn history_message(
        &mut self,
        message_id: &str,
    ) -> AccResult<(MessageView, Vec<ReceiptRow>)> {
        ids::validate_record_id("message", message_id)?;
        let not_found = || {
            AccError::new(
                ErrorCode::MessageNotFound,
                format!("message `{message_id}` does not exist"),
            )
        };
        let Some(store) = self.store_for_read() else {
            return Err(not_found());
        };
        store.read(|r| {
            let message = r.message(message_id)?.ok_or_else(not_found)?;
            let receipts = r.receipts_of(message.seq)?;
            let decision = decision_status(r, &message)?;
            Ok((MessageView { message, decision }, receipts))
        })
    }

    /// Every message with all its receipts, oldest first (the unbounded forensic snapshot).
    pub fn all_messages(&mut self) -> AccResult<Vec<(MessageView, Vec<ReceiptRow>)>> {
        let Some(store) = self.store_for_read() else {
            return Ok(Vec::new());
        };
        store.read(super::all_messages_in)
    }
}

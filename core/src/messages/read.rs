//! Reading: the inbox and exact reads (which move a receipt to retrieved), history pages and
//! exact history reads, and the full listing for snapshots.

use super::*;

impl Core {
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

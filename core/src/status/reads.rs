//! How a status and a sync read the store: in one read transaction each, on a room in two
//! waves of reading ahead (what needs nothing known, then what it names), shared by
//! [`crate::Core::status_summary`], [`crate::Core::status`], [`crate::Core::sync_delta`] and
//! [`crate::Core::sync_snapshot`].

use super::*;

/// A sync's snapshot ([`Core::sync_snapshot`]).
#[derive(Debug)]
pub struct Snapshot {
    /// The page of events.
    pub page: EventPage,
    /// The attention items.
    pub attention: Vec<Attention>,
    /// The whole status.
    pub status: StatusReport,
    /// Every message with its receipts.
    pub messages: Vec<(crate::messages::MessageView, Vec<acc_store::ReceiptRow>)>,
}

/// What a status is reckoned with.
pub(super) struct View<'a> {
    pub(super) now: Millis,
    pub(super) liveness: &'a dyn Liveness,
    pub(super) guards: &'a dyn crate::identity::Guards,
    pub(super) policy: ClaimPolicy,
}

/// A status read in `r` (see [`Core::status_with`]).
pub(super) fn status_in(
    r: &Reader<'_>,
    view: &View<'_>,
    mut report: StatusReport,
    include_closed: bool,
    listing: Listing<'_>,
    pick: impl FnOnce(
        &Reader<'_>,
        &[Attention],
        Millis,
    ) -> AccResult<(Vec<ClaimRow>, Option<ClaimSummary>)>,
) -> AccResult<StatusReport> {
    let View {
        now,
        liveness,
        guards,
        policy,
    } = *view;
    // A room reads in two round trips: what needs nothing known, then what it names.
    r.prefetch_room_view(&acc_store::FirstReads {
        now,
        include_closed,
        attention_limit: crate::messages::ATTENTION_PER_RULE,
        events: None,
        every_message: false,
    })?;
    let all_open = session_states(r, false, now, liveness, guards)?;
    read_second_ahead(r, &all_open, now, listing, &[])?;
    report.protection = protection(policy, &all_open);
    report.attention = attention(r, &all_open, now)?;
    let (rows, summary) = pick(r, &report.attention, now)?;
    report.claims = claim_states(rows, policy, now);
    report.protection_note = protection_note(policy, &all_open);
    report.claim_summary = summary.unwrap_or_else(|| summarize(&report.claims));
    report.sessions = if include_closed {
        session_states(r, true, now, liveness, guards)?
    } else {
        all_open
    };
    report.participants = r.participants()?;
    report.head_seq = r.head_seq()?;
    Ok(report)
}

/// A page of events after `cursor` with attention, read in `r` (see [`Core::sync_delta`]).
pub(super) fn sync_in(
    r: &Reader<'_>,
    now: Millis,
    liveness: &dyn Liveness,
    cursor: i64,
    limit: i64,
) -> AccResult<(EventPage, Vec<Attention>)> {
    r.prefetch_room_view(&acc_store::FirstReads {
        now,
        include_closed: false,
        attention_limit: crate::messages::ATTENTION_PER_RULE,
        events: Some((cursor, limit + 1)),
        every_message: false,
    })?;
    let mut events = r.events_after(cursor, limit + 1)?;
    let has_more = events.len() as i64 > limit;
    events.truncate(limit as usize);
    let next_cursor = events.last().map(|e| e.seq).unwrap_or(cursor);
    // Attention reads presence only: no evidence needs reading for it.
    let sessions = session_states(r, false, now, liveness, &crate::identity::NoEvidence)?;
    read_second_ahead(r, &sessions, now, Listing::None, &[])?;
    let attention = attention(r, &sessions, now)?;
    Ok((
        EventPage {
            events,
            next_cursor,
            has_more,
        },
        attention,
    ))
}

/// Which claims a status lists, for reading them ahead.
#[derive(Debug, Clone, Copy)]
pub(super) enum Listing<'a> {
    /// Every claim.
    Every,
    /// A summary's: every claim up to [`LIST_EVERY_CLAIM_UP_TO`], else those that matter.
    Summary { mine: Option<&'a str> },
    /// None (a sync).
    None,
}

/// Read ahead, on a room, in one round trip, what attention and the claim listing read once
/// the sessions are known (what the first read ahead answered costs nothing to ask again):
/// the queued messages of participants without a live session, the claim holders' sessions
/// and the offline holders' live claims, the claims overlapping live intents' hints, and the
/// claims `listing` lists.
pub(super) fn read_second_ahead(
    r: &Reader<'_>,
    sessions: &[SessionState],
    now: Millis,
    listing: Listing<'_>,
    decisions: &[String],
) -> AccResult<()> {
    if !r.is_room() {
        return Ok(());
    }
    let live: std::collections::BTreeSet<&str> = sessions
        .iter()
        .filter(|s| s.presence != Presence::Offline)
        .map(|s| s.session.participant_id.as_str())
        .collect();
    let participants = r.participants()?;
    let holders = r.claim_holders()?;
    let offline_holders = holders
        .iter()
        .filter(|h| {
            !sessions
                .iter()
                .any(|s| s.session.session_id == **h && s.presence != Presence::Offline)
        })
        .map(String::as_str)
        .collect();
    let mut candidates = Vec::new();
    for wanting in sessions.iter().filter(|s| s.presence != Presence::Offline) {
        if let Some(intent) = wanting
            .intent
            .as_ref()
            .filter(|i| i.state != IntentState::Done)
        {
            candidates.extend(
                intent
                    .resource_hints
                    .iter()
                    .map(|h| resource::overlap_candidates(h)),
            );
        }
    }
    let (all_claims, expiring, mine) = match listing {
        Listing::Every => (true, None, None),
        Listing::None => (false, None, None),
        Listing::Summary { mine } => {
            let (per_session, _) = r.claim_counts(now)?;
            let total: i64 = per_session.iter().map(|(_, n)| n).sum();
            if total <= LIST_EVERY_CLAIM_UP_TO {
                (true, None, None)
            } else {
                (false, Some((now + EXPIRING_WITHIN_MS, SUMMARY_EACH)), mine)
            }
        }
    };
    r.prefetch_second_reads(&acc_store::SecondReads {
        now,
        attention_limit: crate::messages::ATTENTION_PER_RULE,
        waiting_for: participants
            .iter()
            .map(|p| p.participant_id.as_str())
            .filter(|p| !live.contains(p))
            .collect(),
        holders: holders.iter().map(String::as_str).collect(),
        offline_holders,
        holder_limit: OFFLINE_HOLDER_ITEMS,
        candidates,
        all_claims,
        expiring,
        mine,
        decisions: decisions.iter().map(String::as_str).collect(),
    })?;
    Ok(())
}

//! What a status and a sync read ahead on a room, so that each costs at most two round trips
//! whatever the room holds: first what needs nothing known ([`Reader::prefetch_room_view`]),
//! then what those answers name ([`Reader::prefetch_second_reads`]). Each later statement
//! with the same text and arguments takes its answer from them ([`crate::db::Conn::prefetch`]).
//! Nothing on SQLite, whose reads make no round trips.

use crate::db::Arg;
use crate::{Millis, Reader, StoreResult};

/// What a status or a sync reads first.
#[derive(Debug, Clone, Copy)]
pub struct FirstReads {
    /// The time its claims and attention are reckoned at.
    pub now: Millis,
    /// Whether closed sessions are listed too.
    pub include_closed: bool,
    /// How many items each attention rule reads at most.
    pub attention_limit: i64,
    /// A sync's page of events: after this cursor, at most this many.
    pub events: Option<(i64, i64)>,
    /// Whether it reads every message and receipt (a sync's snapshot).
    pub every_message: bool,
}

/// What a status or a sync reads once its first answers are known.
#[derive(Debug, Clone, Default)]
pub struct SecondReads<'a> {
    /// The time its claims are reckoned at.
    pub now: Millis,
    /// How many items each attention rule reads at most.
    pub attention_limit: i64,
    /// The participants without a live session, whose queued addressed messages it reads.
    pub waiting_for: Vec<&'a str>,
    /// The claim holders, whose sessions it reads.
    pub holders: Vec<&'a str>,
    /// The claim holders not live: at most `holder_limit` live claims each.
    pub offline_holders: Vec<&'a str>,
    /// See `offline_holders`.
    pub holder_limit: i64,
    /// The overlap candidates (exact resources, resource ranges) of live intents' hints and
    /// contended resources.
    pub candidates: Vec<crate::OverlapCandidates>,
    /// Whether it lists every claim.
    pub all_claims: bool,
    /// A summary's claims expiring by this time, at most this many.
    pub expiring: Option<(Millis, i64)>,
    /// A summary's own session, whose claims it lists.
    pub mine: Option<&'a str>,
    /// Decisions (by message id) whose links it reads.
    pub decisions: Vec<&'a str>,
}

impl Reader<'_> {
    /// Whether this reads a room on PostgreSQL (where reading ahead saves round trips).
    pub fn is_room(&self) -> bool {
        self.conn.is_pg()
    }

    /// Read ahead, on a room, in one round trip, what a roster reads: the open sessions and the
    /// claims' counts at `now`.
    pub fn prefetch_roster(&self, now: Millis) -> StoreResult<()> {
        if !self.conn.is_pg() {
            return Ok(());
        }
        let open = crate::ops::sessions_sql(self.layout, false);
        let now: [&dyn Arg; 1] = [&now];
        self.conn
            .prefetch(&[(open.as_str(), &[]), (crate::pg::CLAIM_COUNTS, &now)])
    }

    /// Read ahead, on a room, in one round trip, what a status or a sync reads before it
    /// knows anything: intents, sessions, every binding, the owed replies and
    /// acknowledgements, participants, expired claims, claim holders and counts, the newest
    /// event, and a sync's page.
    pub fn prefetch_room_view(&self, first: &FirstReads) -> StoreResult<()> {
        if !self.conn.is_pg() {
            return Ok(());
        }
        let open = crate::ops::sessions_sql(self.layout, false);
        let all = crate::ops::sessions_sql(self.layout, true);
        let owed = crate::messages::sql::owed();
        let claims = crate::claims::claims_sql();
        let reply: [&dyn Arg; 2] = [&"reply", &first.attention_limit];
        let acknowledge: [&dyn Arg; 2] = [&"acknowledge", &first.attention_limit];
        let now: [&dyn Arg; 1] = [&first.now];
        let mut statements: Vec<(&str, &[&dyn Arg])> = vec![
            (crate::ops::INTENTS, &[]),
            (open.as_str(), &[]),
            (crate::pg::ALL_BINDINGS, &[]),
            (owed.as_str(), &reply),
            (owed.as_str(), &acknowledge),
            (crate::ops::PARTICIPANTS, &[]),
            (claims.expired.as_str(), &now),
            (crate::pg::CLAIM_HOLDERS, &[]),
            (crate::pg::CLAIM_COUNTS, &now),
            (crate::ops::HEAD_SEQ, &[]),
        ];
        if first.include_closed {
            statements.push((all.as_str(), &[]));
        }
        let events: Option<[&dyn Arg; 2]> = first
            .events
            .as_ref()
            .map(|(cursor, limit)| [cursor as _, limit as _]);
        if let Some(events) = &events {
            statements.push((crate::ops::EVENTS_AFTER, events.as_slice()));
        }
        let (messages, receipts) = crate::messages::every_message_sql();
        if first.every_message {
            statements.push((messages, &[]));
            statements.push((receipts, &[]));
        }
        self.conn.prefetch(&statements)
    }

    /// Read ahead, on a room, in one round trip, what a status or a sync reads once its first
    /// answers are known ([`SecondReads`]).
    pub fn prefetch_second_reads(&self, second: &SecondReads<'_>) -> StoreResult<()> {
        if !self.conn.is_pg() {
            return Ok(());
        }
        let waiting = crate::messages::sql::waiting();
        let claims = crate::claims::claims_sql();
        let (by_resource, in_range) = crate::claims::matching_sql();
        let session = crate::ops::session_sql(self.layout);
        let waiting_args: Vec<[&dyn Arg; 2]> = second
            .waiting_for
            .iter()
            .map(|p| [p as _, &second.attention_limit as _])
            .collect();
        let holder_ids: Vec<[&dyn Arg; 1]> = second.holders.iter().map(|h| [h as _]).collect();
        let holder_claims: Vec<[&dyn Arg; 3]> = second
            .offline_holders
            .iter()
            .map(|h| [h as _, &second.now as _, &second.holder_limit as _])
            .collect();
        let exact: Vec<[&dyn Arg; 1]> = second
            .candidates
            .iter()
            .flat_map(|(exact, _)| exact.iter().map(|r| [r as _]))
            .collect();
        let ranges: Vec<[&dyn Arg; 2]> = second
            .candidates
            .iter()
            .flat_map(|(_, ranges)| ranges.iter().map(|(l, h)| [l as _, h as _]))
            .collect();
        let expiring: Option<[&dyn Arg; 3]> = second
            .expiring
            .as_ref()
            .map(|(until, limit)| [&second.now as _, until as _, limit as _]);
        let mine: Option<[&dyn Arg; 1]> = second.mine.as_ref().map(|m| [m as _]);
        let mut statements: Vec<(&str, &[&dyn Arg])> = Vec::new();
        statements.extend(
            waiting_args
                .iter()
                .map(|a| (waiting.as_str(), a.as_slice())),
        );
        statements.extend(holder_ids.iter().map(|a| (session, a.as_slice())));
        statements.extend(
            holder_claims
                .iter()
                .map(|a| (claims.live_of_session.as_str(), a.as_slice())),
        );
        statements.extend(exact.iter().map(|a| (by_resource, a.as_slice())));
        statements.extend(ranges.iter().map(|a| (in_range, a.as_slice())));
        if second.all_claims {
            statements.push((claims.all.as_str(), &[]));
        }
        if let Some(expiring) = &expiring {
            statements.push((claims.expiring.as_str(), expiring.as_slice()));
        }
        if let Some(mine) = &mine {
            statements.push((crate::claims::of_session_sql(), mine.as_slice()));
        }
        let decisions: Vec<[&dyn Arg; 1]> = second.decisions.iter().map(|d| [d as _]).collect();
        statements.extend(
            decisions
                .iter()
                .map(|d| (crate::messages::LINKS_OF_MESSAGE, d.as_slice())),
        );
        self.conn.prefetch(&statements)
    }
}

//! Status, sync pages, and the attention rules derived from the store.

use crate::attention::{Attention, AttentionRule};
use crate::clock::Millis;
use crate::error::{AccError, AccResult};
use crate::identity::{Liveness, Presence, presence};
use crate::workspace::ClaimPolicy;
use crate::{Core, claims, resource};
use acc_store::{
    ClaimMode, ClaimRow, Enforcement, EventRow, IntentRow, IntentState, ParticipantRow, Reader,
    SessionRow,
};

mod reads;
pub use reads::Snapshot;
use reads::{Listing, View, read_second_ahead, status_in, sync_in};

/// Default sync event page.
pub const DEFAULT_EVENT_PAGE: i64 = 100;
/// Largest sync event page.
pub const MAX_EVENT_PAGE: i64 = 500;

/// Who is here ([`Core::roster`]).
#[derive(Debug, Clone, Default)]
pub struct Roster {
    /// The open sessions, each with its presence.
    pub sessions: Vec<(Presence, SessionRow)>,
    /// How many claims are live.
    pub live_claims: i64,
}

/// A session with its derived presence and intent.
#[derive(Debug, Clone)]
pub struct SessionState {
    /// The row.
    pub session: SessionRow,
    /// Derived presence.
    pub presence: Presence,
    /// Current intent.
    pub intent: Option<IntentRow>,
    /// Delivery bindings of the current generation (ephemeral; shown redacted).
    pub bindings: Vec<acc_store::BindingRow>,
    /// What it really enforces, and why.
    pub guard: crate::identity::Guard,
}

/// A claim with its derived liveness.
#[derive(Debug, Clone)]
pub struct ClaimState {
    /// The row.
    pub claim: ClaimRow,
    /// Whether the lease is running.
    pub live: bool,
    /// What the room can actually enforce for this claim.
    pub effective_enforcement: &'static str,
}

/// How many claims the room holds, and by whom, when a status lists only the claims that matter
/// ([`Core::status_summary`]).
#[derive(Debug, Clone, Default)]
pub struct ClaimSummary {
    /// Every claim, live and expired.
    pub total: i64,
    /// Live claims.
    pub live: i64,
    /// Participants with how many claims each holds, most first.
    pub holders: Vec<(String, i64)>,
    /// Whether `claims` lists every claim.
    pub complete: bool,
}

/// A status lists every claim when there are at most this many; above, the claims that matter.
pub const LIST_EVERY_CLAIM_UP_TO: i64 = 20;
/// The most claims a summary lists of each kind (contended, expiring, yours, expired).
const SUMMARY_EACH: i64 = 20;
/// A live claim "expiring" in a summary: its lease ends within this.
const EXPIRING_WITHIN_MS: Millis = 10 * 60_000;

/// The workspace status.
#[derive(Debug, Clone)]
pub struct StatusReport {
    /// Workspace id.
    pub workspace_id: String,
    /// Display name.
    pub display_name: String,
    /// Root path.
    pub root: String,
    /// How the identity was found.
    pub identity_source: &'static str,
    /// The configured claim policy.
    pub claim_policy: &'static str,
    /// The room's real protection: the weakest live participant's guarantee.
    pub protection: &'static str,
    /// Whose writes the room's guarded claims stop, and whose not ([`protection_note`]).
    pub protection_note: String,
    /// Participants.
    pub participants: Vec<ParticipantRow>,
    /// Sessions (open only unless asked for all).
    pub sessions: Vec<SessionState>,
    /// Claims, live and expired.
    pub claims: Vec<ClaimState>,
    /// Attention items.
    pub attention: Vec<Attention>,
    /// Newest event sequence number.
    pub head_seq: i64,
    /// How many claims, by whom (a summary's counts; also filled for a full status).
    pub claim_summary: ClaimSummary,
}

/// A page of events.
#[derive(Debug, Clone)]
pub struct EventPage {
    /// Events, oldest first.
    pub events: Vec<EventRow>,
    /// Cursor to continue from.
    pub next_cursor: i64,
    /// Whether more events follow.
    pub has_more: bool,
}

/// Validate an event page limit.
pub fn event_limit(limit: Option<i64>) -> AccResult<i64> {
    let limit = limit.unwrap_or(DEFAULT_EVENT_PAGE);
    if (1..=MAX_EVENT_PAGE).contains(&limit) {
        Ok(limit)
    } else {
        Err(AccError::usage(format!(
            "limit must be from 1 to {MAX_EVENT_PAGE} for event pages, got {limit}"
        )))
    }
}

/// The room's protection: guarded only when configured so and every live session really
/// enforces (its declared write guard certified by evidence).
pub fn protection(policy: ClaimPolicy, sessions: &[SessionState]) -> &'static str {
    let live: Vec<&SessionState> = sessions
        .iter()
        .filter(|s| s.presence != Presence::Offline)
        .collect();
    if policy == ClaimPolicy::Guarded
        && !live.is_empty()
        && live
            .iter()
            .all(|s| s.guard.enforcement == Enforcement::Guarded)
    {
        "guarded"
    } else {
        "advisory"
    }
}

/// What the room's guarded claims really do, one line for a person and a model: whose writes
/// they stop (live sessions whose write guard is certified) and whose they do not (every other
/// live session, with why). Enforcement never degrades: a weaker participant lowers the room's
/// `protection`, never what the guarded clients' hooks deny.
pub fn protection_note(policy: ClaimPolicy, sessions: &[SessionState]) -> String {
    if policy != ClaimPolicy::Guarded {
        return "claim policy advisory: claims inform, nothing stops a write".into();
    }
    let live: Vec<&SessionState> = sessions
        .iter()
        .filter(|s| s.presence != Presence::Offline)
        .collect();
    let name = |s: &SessionState| format!("{} ({})", s.session.participant_id, s.session.harness);
    let stopped: Vec<String> = live
        .iter()
        .filter(|s| s.guard.enforcement == Enforcement::Guarded)
        .map(|s| name(s))
        .collect();
    let unstopped: Vec<String> = live
        .iter()
        .filter(|s| s.guard.enforcement != Enforcement::Guarded)
        .map(|s| format!("{}: {}", name(s), s.guard.reason))
        .collect();
    let mut note = if stopped.is_empty() {
        "guarded claims stop the writes of every session whose ACC hooks guard its client; no such session is live".to_string()
    } else {
        format!(
            "guarded claims are enforced for {}, and for every other session whose ACC hooks guard its client",
            stopped.join(", ")
        )
    };
    if !unstopped.is_empty() {
        note.push_str(&format!("; not stopped by them: {}", unstopped.join("; ")));
    }
    note
}

/// An attention item about one claim, for its holder.
fn claim_item(
    rule: AttentionRule,
    claim: &ClaimRow,
    since: Millis,
    expires_at: Option<Millis>,
) -> Attention {
    Attention {
        rule,
        participant_id: claim.participant_id.clone(),
        session_id: Some(claim.session_id.clone()),
        claim_id: Some(claim.claim_id.clone()),
        resource: Some(claim.resource.clone()),
        message_id: None,
        other_session_id: None,
        other_participant_id: None,
        since: Some(since),
        expires_at,
    }
}

/// At most this many `claim_holder_offline` items for one session.
const OFFLINE_HOLDER_ITEMS: i64 = 20;

/// Live claims held by sessions that are gone (closed, or open but offline), at most
/// [`OFFLINE_HOLDER_ITEMS`] a session, soonest expiry first across all of them. The holding
/// sessions come from the claims' session index; only the offline ones' claims are read.
fn offline_holders(
    reader: &Reader<'_>,
    sessions: &[SessionState],
    now: Millis,
) -> AccResult<Vec<Attention>> {
    let mut out = Vec::new();
    for holder in reader.claim_holders()? {
        let open = sessions.iter().find(|s| s.session.session_id == holder);
        if open.is_some_and(|s| s.presence != Presence::Offline) {
            continue;
        }
        let Some(session) = reader.session(&holder)? else {
            continue;
        };
        for claim in reader.live_claims_of_session(&holder, now, OFFLINE_HOLDER_ITEMS)? {
            let since = session.closed_at.unwrap_or(session.last_seen_at);
            out.push(claim_item(
                AttentionRule::ClaimHolderOffline,
                &claim,
                since,
                Some(claim.expires_at),
            ));
        }
    }
    // Soonest expiry first across holders (session ids are random: no order of theirs).
    out.sort_by(|a, b| {
        (a.expires_at, &a.resource, &a.claim_id).cmp(&(b.expires_at, &b.resource, &b.claim_id))
    });
    Ok(out)
}

/// Claim attention: expired leases, and intents that collide with another session's live
/// exclusive claim (`claim_conflict` for the one who wants it, `claim_contended` for the holder).
/// Index-driven: its cost follows the number of intents and matches, not the number of claims.
pub fn claim_attention(
    reader: &Reader<'_>,
    sessions: &[SessionState],
    now: Millis,
) -> AccResult<Vec<Attention>> {
    let mut out = Vec::new();
    for claim in reader.expired_claims(now)? {
        out.push(claim_item(
            AttentionRule::ClaimExpired,
            &claim,
            claim.expires_at,
            None,
        ));
    }
    out.extend(offline_holders(reader, sessions, now)?);
    let live_sessions = sessions.iter().filter(|s| s.presence != Presence::Offline);
    for wanting in live_sessions {
        let Some(intent) = &wanting.intent else {
            continue;
        };
        if intent.state == IntentState::Done {
            continue;
        }
        for hint in &intent.resource_hints {
            let (exact, ranges) = resource::overlap_candidates(hint);
            for claim in reader.claims_matching(&exact, &ranges)? {
                if claim.session_id == wanting.session.session_id
                    || claim.mode != ClaimMode::Exclusive
                    || !claims::is_live(&claim, now)
                    || !resource::overlaps(hint, &claim.resource)
                {
                    continue;
                }
                let since = Some(intent.updated_at.max(claim.renewed_at));
                out.push(Attention {
                    rule: AttentionRule::ClaimConflict,
                    participant_id: wanting.session.participant_id.clone(),
                    session_id: Some(wanting.session.session_id.clone()),
                    claim_id: Some(claim.claim_id.clone()),
                    resource: Some(hint.clone()),
                    message_id: None,
                    other_session_id: Some(claim.session_id.clone()),
                    other_participant_id: Some(claim.participant_id.clone()),
                    since,
                    expires_at: None,
                });
                out.push(Attention {
                    rule: AttentionRule::ClaimContended,
                    participant_id: claim.participant_id.clone(),
                    session_id: Some(claim.session_id.clone()),
                    claim_id: Some(claim.claim_id.clone()),
                    resource: Some(claim.resource.clone()),
                    message_id: None,
                    other_session_id: Some(wanting.session.session_id.clone()),
                    other_participant_id: Some(wanting.session.participant_id.clone()),
                    since,
                    expires_at: None,
                });
            }
        }
    }
    Ok(out)
}

fn session_states(
    reader: &Reader<'_>,
    include_closed: bool,
    now: Millis,
    liveness: &dyn Liveness,
    guards: &dyn crate::identity::Guards,
) -> AccResult<Vec<SessionState>> {
    let intents = reader.intents()?;
    let sessions = reader.sessions(include_closed)?;
    let all_bindings = reader.bindings_of_each(&sessions)?;
    let mut states = Vec::with_capacity(sessions.len());
    for (session, bindings) in sessions.into_iter().zip(all_bindings) {
        let intent = intents
            .iter()
            .find(|i| i.session_id == session.session_id)
            .cloned();
        states.push(SessionState {
            presence: presence(&session, now, liveness),
            intent,
            bindings,
            guard: crate::identity::guard(&session, guards),
            session,
        });
    }
    Ok(states)
}

/// The claims a summary lists: those contended, expiring within 10 minutes, the session
/// `mine`'s, expired ones (up to 20 of each), by resource.
fn claims_that_matter(
    r: &Reader<'_>,
    attention: &[Attention],
    mine: Option<&str>,
    now: Millis,
) -> AccResult<Vec<ClaimRow>> {
    let mut rows = Vec::new();
    let contended = attention
        .iter()
        .filter(|a| {
            matches!(
                a.rule,
                AttentionRule::ClaimConflict | AttentionRule::ClaimContended
            )
        })
        .filter_map(|a| a.resource.clone())
        .take(SUMMARY_EACH as usize);
    for resource in contended {
        let (exact, ranges) = resource::overlap_candidates(&resource);
        rows.extend(
            r.claims_matching(&exact, &ranges)?
                .into_iter()
                .filter(|c| claims::is_live(c, now))
                .take(SUMMARY_EACH as usize),
        );
    }
    rows.extend(r.claims_expiring(now, now + EXPIRING_WITHIN_MS, SUMMARY_EACH)?);
    if let Some(session) = mine {
        rows.extend(
            r.claims_of_session(session)?
                .into_iter()
                .take(SUMMARY_EACH as usize),
        );
    }
    rows.extend(
        r.expired_claims(now)?
            .into_iter()
            .take(SUMMARY_EACH as usize),
    );
    rows.sort_by(|a, b| (&a.resource, &a.claim_id).cmp(&(&b.resource, &b.claim_id)));
    rows.dedup_by(|a, b| a.claim_id == b.claim_id);
    Ok(rows)
}

/// Claims with their liveness and what each really enforces ([`claims::effective_enforcement`];
/// [`protection_note`] says whose writes that stops).
fn claim_states(rows: Vec<ClaimRow>, policy: ClaimPolicy, now: Millis) -> Vec<ClaimState> {
    rows.into_iter()
        .map(|claim| ClaimState {
            live: claims::is_live(&claim, now),
            effective_enforcement: claims::effective_enforcement(policy, &claim),
            claim,
        })
        .collect()
}

/// Counts summed by participant, most first (then by name).
fn ranked(counts: impl Iterator<Item = (String, i64)>) -> Vec<(String, i64)> {
    let mut by_holder: std::collections::BTreeMap<String, i64> = Default::default();
    for (who, count) in counts {
        *by_holder.entry(who).or_default() += count;
    }
    let mut holders: Vec<(String, i64)> = by_holder.into_iter().collect();
    holders.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    holders
}

/// The counts of a full claim list.
fn summarize(claims: &[ClaimState]) -> ClaimSummary {
    let holders = ranked(claims.iter().map(|c| (c.claim.participant_id.clone(), 1)));
    ClaimSummary {
        total: claims.len() as i64,
        live: claims.iter().filter(|c| c.live).count() as i64,
        holders,
        complete: true,
    }
}

impl Core {
    fn empty_status(&self) -> StatusReport {
        StatusReport {
            workspace_id: self.workspace.id.clone(),
            display_name: self.workspace.config.display_name.clone(),
            root: self.workspace.root.to_string_lossy().into_owned(),
            identity_source: self.workspace.source.as_str(),
            claim_policy: self.workspace.config.claim_mode.as_str(),
            protection: "advisory",
            protection_note: protection_note(self.workspace.config.claim_mode, &[]),
            participants: Vec::new(),
            sessions: Vec::new(),
            claims: Vec::new(),
            attention: Vec::new(),
            head_seq: 0,
            claim_summary: ClaimSummary {
                complete: true,
                ..ClaimSummary::default()
            },
        }
    }

    /// Who is here and how many claims are live: the open sessions with their presence, and the
    /// live claims' count (a session's start tells its model no more). One read; on a room, one
    /// round trip.
    pub fn roster(&mut self) -> AccResult<Roster> {
        let now = self.now();
        let liveness = self.liveness();
        let Some(store) = self.store_for_read() else {
            return Ok(Roster::default());
        };
        store.read(|r| {
            r.prefetch_roster(now)?;
            let sessions = r
                .sessions(false)?
                .into_iter()
                .map(|session| (presence(&session, now, &*liveness), session))
                .collect();
            let (per_session, expired) = r.claim_counts(now)?;
            let total: i64 = per_session.iter().map(|(_, n)| n).sum();
            Ok(Roster {
                sessions,
                live_claims: total - expired,
            })
        })
    }

    /// The workspace status: sessions with presence and intent, claims, protection, attention.
    pub fn status(&mut self, include_closed: bool) -> AccResult<StatusReport> {
        self.status_with(include_closed, Listing::Every, |r, _, _| {
            let claims = r.claims()?;
            Ok((claims, None))
        })
    }

    /// The workspace status a person reads: like [`Core::status`] for open sessions, but with
    /// more than [`LIST_EVERY_CLAIM_UP_TO`] claims only those that matter are listed (contended
    /// ones, those expiring within 10 minutes, the caller session `mine`'s, expired ones; up to
    /// 20 of each) beside counts per holder. Its cost follows what it lists, not how many
    /// claims the room holds (index scans for the counts).
    pub fn status_summary(&mut self, mine: Option<&str>) -> AccResult<StatusReport> {
        self.status_with(false, Listing::Summary { mine }, |r, attention, now| {
            let (per_session, expired) = r.claim_counts(now)?;
            let total: i64 = per_session.iter().map(|(_, n)| n).sum();
            let rows = if total <= LIST_EVERY_CLAIM_UP_TO {
                r.claims()?
            } else {
                claims_that_matter(r, attention, mine, now)?
            };
            // Each holding session's participant, read by its key: the room's closed sessions
            // are not read (every status would otherwise read them all, however old).
            let mut holders_of = Vec::with_capacity(per_session.len());
            for (session, count) in per_session {
                let owner = r
                    .session(&session)?
                    .map(|s| s.participant_id)
                    .unwrap_or(session);
                holders_of.push((owner, count));
            }
            let holders = ranked(holders_of.into_iter());
            let summary = ClaimSummary {
                total,
                live: total - expired,
                complete: rows.len() as i64 == total,
                holders,
            };
            Ok((rows, Some(summary)))
        })
    }

    /// A status whose claims `pick` chooses (with their counts, or `None`: counted from them).
    fn status_with(
        &mut self,
        include_closed: bool,
        listing: Listing<'_>,
        pick: impl FnOnce(
            &Reader<'_>,
            &[Attention],
            Millis,
        ) -> AccResult<(Vec<ClaimRow>, Option<ClaimSummary>)>,
    ) -> AccResult<StatusReport> {
        let now = self.now();
        let liveness = self.liveness();
        let guards = self.guards();
        let report = self.empty_status();
        let policy = self.workspace.config.claim_mode;
        let Some(store) = self.store_for_read() else {
            return Ok(report);
        };
        let view = View {
            now,
            liveness: &*liveness,
            guards: &*guards,
            policy,
        };
        store.read(|r| status_in(r, &view, report, include_closed, listing, pick))
    }

    /// A page of events after `cursor`, with attention.
    pub fn sync_delta(
        &mut self,
        cursor: i64,
        limit: i64,
    ) -> AccResult<(EventPage, Vec<Attention>)> {
        let now = self.now();
        let liveness = self.liveness();
        let Some(store) = self.store_for_read() else {
            return Ok((
                EventPage {
                    events: Vec::new(),
                    next_cursor: cursor,
                    has_more: false,
                },
                Vec::new(),
            ));
        };
        store.read(|r| sync_in(r, now, &*liveness, cursor, limit))
    }

    /// A sync's snapshot (`acc_sync` with scope `full`): a page of events after `cursor` with
    /// attention, the whole status (closed sessions too) and every message with its receipts,
    /// of one read; on a room, in two round trips.
    pub fn sync_snapshot(&mut self, cursor: i64, limit: i64) -> AccResult<Snapshot> {
        let now = self.now();
        let liveness = self.liveness();
        let guards = self.guards();
        let report = self.empty_status();
        let policy = self.workspace.config.claim_mode;
        let Some(store) = self.store_for_read() else {
            return Ok(Snapshot {
                page: EventPage {
                    events: Vec::new(),
                    next_cursor: cursor,
                    has_more: false,
                },
                attention: Vec::new(),
                status: report,
                messages: Vec::new(),
            });
        };
        let view = View {
            now,
            liveness: &*liveness,
            guards: &*guards,
            policy,
        };
        store.read(|r| {
            // Everything the three parts read first, then everything their answers name: each
            // part's own reading ahead then finds its answers already there.
            r.prefetch_room_view(&acc_store::FirstReads {
                now,
                include_closed: true,
                attention_limit: crate::messages::ATTENTION_PER_RULE,
                events: Some((cursor, limit + 1)),
                every_message: true,
            })?;
            let open = session_states(r, false, now, &*liveness, &*guards)?;
            let decisions: Vec<String> = r
                .all_messages()?
                .into_iter()
                .filter(|m| m.kind == acc_store::MessageKind::Decision)
                .map(|m| m.message_id)
                .collect();
            read_second_ahead(r, &open, now, Listing::Every, &decisions)?;
            let (page, attention) = sync_in(r, now, &*liveness, cursor, limit)?;
            let status = status_in(r, &view, report, true, Listing::Every, |r, _, _| {
                Ok((r.claims()?, None))
            })?;
            let messages = crate::messages::all_messages_in(r)?;
            Ok(Snapshot {
                page,
                attention,
                status,
                messages,
            })
        })
    }
}

/// Every attention item for the room.
pub fn attention(
    reader: &Reader<'_>,
    sessions: &[SessionState],
    now: Millis,
) -> AccResult<Vec<Attention>> {
    // The participants with a session present, from the sessions the status already read.
    let live: std::collections::BTreeSet<String> = sessions
        .iter()
        .filter(|s| s.presence != Presence::Offline)
        .map(|s| s.session.participant_id.clone())
        .collect();
    let mut items = crate::messages::message_attention(reader, &live)?;
    items.extend(claim_attention(reader, sessions, now)?);
    Ok(items)
}

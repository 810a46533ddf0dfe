//! Claims: atomic batch acquisition, renewal, release, and force release.

use std::collections::BTreeSet;

use crate::wire::{BlockingClaim, ClaimConflict, ConflictDetails};

use crate::clock::{Millis, format_timestamp};
use crate::error::{AccError, AccResult, ErrorCode};
use crate::events::{ClaimEvent, Event};
use crate::identity::{Caller, Liveness, presence, verify_caller};
use crate::ids;
use crate::{Core, resource};
use acc_store::{ClaimMode, Enforcement};
use acc_store::{ClaimRow, Reader};

/// Default lease in seconds.
pub const DEFAULT_LEASE_SECONDS: i64 = 1800;
/// Longest lease in seconds (seven days).
pub const MAX_LEASE_SECONDS: i64 = 7 * 24 * 3600;
/// Longest claim reason, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// A batch acquisition.
#[derive(Debug, Clone)]
pub struct AcquireRequest {
    /// Resources as given (normalised here).
    pub resources: Vec<String>,
    /// Mode for the whole batch.
    pub mode: ClaimMode,
    /// Enforcement for the whole batch; `None`: the room's ([`default_enforcement`]).
    pub enforcement: Option<Enforcement>,
    /// Reason for the whole batch.
    pub reason: Option<String>,
    /// Lease for the whole batch (default 1,800 s).
    pub lease_seconds: Option<i64>,
}

/// Which claims a release selects. Exactly one family.
#[derive(Debug, Clone)]
pub enum ReleaseSelector {
    /// By claim ids.
    Ids(Vec<String>),
    /// By resources (normalised).
    Resources(Vec<String>),
    /// The caller session's whole owned set.
    All,
}

/// Who force-releases a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authority {
    /// A person.
    Human,
    /// An automated policy.
    Policy,
}

impl Authority {
    /// Parse the CLI spelling.
    pub fn parse(text: &str) -> AccResult<Self> {
        match text {
            "human" => Ok(Self::Human),
            "policy" => Ok(Self::Policy),
            other => Err(AccError::usage(format!(
                "authority must be `human` or `policy`, got `{other}`"
            ))),
        }
    }
    /// Stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Human => "human",
            Self::Policy => "policy",
        }
    }
}

/// The enforcement of a claim whose taker asked for none: in a room whose claim policy is
/// guarded an exclusive claim is guarded (every surface, so an agent that claims the way it is
/// told takes claims that stop the guarded clients' writes); a shared claim, or any claim in an
/// advisory room, is advisory. A taker who wants an advisory claim asks for one.
pub fn default_enforcement(policy: crate::workspace::ClaimPolicy, mode: ClaimMode) -> Enforcement {
    if policy == crate::workspace::ClaimPolicy::Guarded && mode == ClaimMode::Exclusive {
        Enforcement::Guarded
    } else {
        Enforcement::Advisory
    }
}

/// What a claim really enforces: `guarded` for a guarded claim in a room whose claim policy is
/// guarded (ACC's hooks deny the guarded clients' writes into it), else `advisory`.
pub fn effective_enforcement(
    policy: crate::workspace::ClaimPolicy,
    claim: &ClaimRow,
) -> &'static str {
    if policy == crate::workspace::ClaimPolicy::Guarded && claim.enforcement == Enforcement::Guarded
    {
        "guarded"
    } else {
        "advisory"
    }
}

/// Validate a lease length.
pub fn validate_lease(lease: i64) -> AccResult<i64> {
    if (1..=MAX_LEASE_SECONDS).contains(&lease) {
        Ok(lease)
    } else {
        Err(AccError::usage(format!(
            "lease must be from 1 to {MAX_LEASE_SECONDS} seconds, got {lease}"
        )))
    }
}

fn validate_reason(reason: &Option<String>) -> AccResult<()> {
    if let Some(reason) = reason
        && reason.chars().count() > MAX_REASON_CHARS
    {
        return Err(AccError::usage(format!(
            "reason is longer than {MAX_REASON_CHARS} characters"
        )));
    }
    Ok(())
}

/// Normalise a nonempty resource list and refuse duplicates after normalisation.
pub fn normalize_unique(resources: &[String], what: &str) -> AccResult<Vec<String>> {
    if resources.is_empty() {
        return Err(AccError::usage(format!(
            "{what} needs at least one resource"
        )));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(resources.len());
    for raw in resources {
        let canonical = resource::normalize(raw)?;
        if !seen.insert(canonical.clone()) {
            return Err(AccError::usage(format!(
                "resource `{raw}` appears more than once (as `{canonical}` after normalisation)"
            )));
        }
        out.push(canonical);
    }
    Ok(out)
}

/// Validate an acquisition without touching the store: canonical resources and the lease.
pub fn validate_acquire(request: &AcquireRequest) -> AccResult<(Vec<String>, i64)> {
    let resources = normalize_unique(&request.resources, "a claim")?;
    let lease = validate_lease(request.lease_seconds.unwrap_or(DEFAULT_LEASE_SECONDS))?;
    validate_reason(&request.reason)?;
    Ok((resources, lease))
}

/// Validate a release selector without touching the store; resources come back canonical.
pub fn validate_selector(selector: &ReleaseSelector) -> AccResult<ReleaseSelector> {
    Ok(match selector {
        ReleaseSelector::Ids(list) => {
            if list.is_empty() {
                return Err(AccError::usage("release needs at least one claim id"));
            }
            let mut seen = BTreeSet::new();
            for id in list {
                ids::validate_record_id("claim", id)?;
                if !seen.insert(id) {
                    return Err(AccError::usage(format!(
                        "claim `{id}` appears more than once"
                    )));
                }
            }
            ReleaseSelector::Ids(list.clone())
        }
        ReleaseSelector::Resources(list) => {
            ReleaseSelector::Resources(normalize_unique(list, "a release")?)
        }
        ReleaseSelector::All => ReleaseSelector::All,
    })
}

/// Whether a claim's lease is still running.
pub fn is_live(claim: &ClaimRow, now: Millis) -> bool {
    claim.expires_at > now
}

/// Conflicts of `resources` (canonical) for `session_id` wanting `mode`, as error details.
fn find_conflicts(
    reader: &Reader<'_>,
    session_id: &str,
    resources: &[String],
    mode: ClaimMode,
    now: Millis,
    liveness: &dyn Liveness,
) -> AccResult<Vec<ClaimConflict>> {
    let mut conflicts = Vec::new();
    for wanted in resources {
        let (exact, ranges) = resource::overlap_candidates(wanted);
        let candidates = reader.claims_matching(&exact, &ranges)?;
        let mut blocking = Vec::new();
        for held in &candidates {
            if held.session_id == session_id
                || !is_live(held, now)
                || !resource::overlaps(wanted, &held.resource)
            {
                continue;
            }
            if mode == ClaimMode::Shared && held.mode == ClaimMode::Shared {
                continue;
            }
            let owner_presence = reader
                .session(&held.session_id)?
                .map(|s| presence(&s, now, &*liveness).as_str())
                .unwrap_or("offline");
            blocking.push(BlockingClaim {
                claim_id: held.claim_id.clone(),
                resource: held.resource.clone(),
                mode: held.mode,
                owner_session_id: held.session_id.clone(),
                owner_participant_id: held.participant_id.clone(),
                owner_presence,
                expires_at: format_timestamp(held.expires_at),
            });
        }
        if !blocking.is_empty() {
            conflicts.push(ClaimConflict {
                resource: wanted.clone(),
                claims: blocking,
            });
        }
    }
    Ok(conflicts)
}

fn conflict_error(conflicts: Vec<ClaimConflict>) -> AccError {
    let names: Vec<String> = conflicts
        .iter()
        .map(|c| resource::shown(&c.resource))
        .collect();
    AccError::new(
        ErrorCode::ClaimConflict,
        format!(
            "claim refused: {} held by another session; nothing was claimed or renewed",
            names.join(", ")
        ),
    )
    .with_details(&ConflictDetails {
        conflicts: &conflicts,
    })
}

impl Core {
    /// Acquire (or renew, for resources the caller already holds) a batch, all or nothing.
    pub fn acquire_claims(
        &mut self,
        caller: &Caller,
        request: &AcquireRequest,
    ) -> AccResult<Vec<ClaimRow>> {
        let (resources, lease) = validate_acquire(request)?;
        let mut new_ids = Vec::with_capacity(resources.len());
        for _ in &resources {
            new_ids.push(ids::new_id("claim")?);
        }
        let now = self.now();
        let liveness = self.liveness();
        let workspace_id = self.workspace.id.clone();
        let enforcement = request.enforcement.unwrap_or(default_enforcement(
            self.workspace.config.claim_mode,
            request.mode,
        ));
        let candidates: Vec<_> = resources
            .iter()
            .map(|r| resource::overlap_candidates(r))
            .collect();
        self.store_for_write()?.write(|w| {
            // A room reads the session and the claims that matter in one round trip.
            w.reader()
                .prefetch_acquire(&caller.session_id, &candidates)?;
            let session = verify_caller(w, &workspace_id, caller, now)?;
            let conflicts = find_conflicts(
                &w.reader(),
                &session.session_id,
                &resources,
                request.mode,
                now,
                &*liveness,
            )?;
            if !conflicts.is_empty() {
                return Err(conflict_error(conflicts));
            }
            let owned = w.reader().claims_of_session(&session.session_id)?;
            let mut result = Vec::with_capacity(resources.len());
            for (canonical, new_id) in resources.iter().zip(new_ids) {
                let existing = owned.iter().find(|c| &c.resource == canonical);
                let (claim, renewed) = match existing {
                    Some(old) => {
                        let mut claim = old.clone();
                        claim.generation = session.generation;
                        claim.mode = request.mode;
                        claim.enforcement = enforcement;
                        claim.reason = request.reason.clone();
                        claim.renewed_at = now;
                        claim.expires_at = now + lease * 1000;
                        claim.lease_seconds = lease;
                        w.update_claim(&claim)?;
                        (claim, true)
                    }
                    None => {
                        let claim = ClaimRow {
                            claim_id: new_id,
                            session_id: session.session_id.clone(),
                            generation: session.generation,
                            participant_id: session.participant_id.clone(),
                            resource: canonical.clone(),
                            mode: request.mode,
                            enforcement,
                            reason: request.reason.clone(),
                            acquired_at: now,
                            renewed_at: now,
                            expires_at: now + lease * 1000,
                            lease_seconds: lease,
                        };
                        w.insert_claim(&claim)?;
                        (claim, false)
                    }
                };
                Event::Claim(ClaimEvent::new(&claim, renewed)).append(
                    w,
                    now,
                    Some(&session.session_id),
                    Some(&session.participant_id),
                )?;
                result.push(claim);
            }
            Ok(result)
        })
    }

    /// Renew one owned claim by id, keeping its lease length unless a new one is given.
    pub fn renew_claim(
        &mut self,
        caller: &Caller,
        claim_id: &str,
        lease_seconds: Option<i64>,
    ) -> AccResult<ClaimRow> {
        ids::validate_record_id("claim", claim_id)?;
        if let Some(lease) = lease_seconds {
            validate_lease(lease)?;
        }
        let now = self.now();
        let liveness = self.liveness();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            w.reader().prefetch_renew(&caller.session_id, claim_id)?;
            let session = verify_caller(w, &workspace_id, caller, now)?;
            let mut claim = owned_claim(&w.reader(), &session.session_id, claim_id)?;
            let mode = claim.mode;
            // A claim still live has been since it was last taken or renewed, each time with
            // no conflict, and no other session can take what a live claim conflicts with
            // since: only a lapsed one is checked again (a room's renewal then costs no
            // round trip for it).
            if !is_live(&claim, now) {
                let conflicts = find_conflicts(
                    &w.reader(),
                    &session.session_id,
                    std::slice::from_ref(&claim.resource),
                    mode,
                    now,
                    &*liveness,
                )?;
                if !conflicts.is_empty() {
                    return Err(conflict_error(conflicts));
                }
            }
            let lease = lease_seconds.unwrap_or(claim.lease_seconds);
            claim.generation = session.generation;
            claim.renewed_at = now;
            claim.expires_at = now + lease * 1000;
            claim.lease_seconds = lease;
            w.update_claim(&claim)?;
            Event::Claim(ClaimEvent::new(&claim, true)).append(
                w,
                now,
                Some(&session.session_id),
                Some(&session.participant_id),
            )?;
            Ok(claim)
        })
    }

    /// Release a selection of the caller's claims, all or nothing. Returns the released ids.
    pub fn release_claims(
        &mut self,
        caller: &Caller,
        selector: &ReleaseSelector,
    ) -> AccResult<Vec<String>> {
        let selector = validate_selector(selector)?;
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            w.reader().prefetch_release(&caller.session_id)?;
            let session = verify_caller(w, &workspace_id, caller, now)?;
            let owned = w.reader().claims_of_session(&session.session_id)?;
            let targets: Vec<ClaimRow> = match &selector {
                ReleaseSelector::All => owned,
                ReleaseSelector::Ids(list) => {
                    let mut targets = Vec::new();
                    for id in list {
                        targets.push(owned_claim(&w.reader(), &session.session_id, id)?);
                    }
                    targets
                }
                ReleaseSelector::Resources(list) => {
                    let mut targets = Vec::new();
                    for wanted in list {
                        match owned.iter().find(|c| &c.resource == wanted) {
                            Some(claim) => targets.push(claim.clone()),
                            None => {
                                return Err(AccError::new(
                                    ErrorCode::ClaimNotFound,
                                    format!("this session holds no claim on `{wanted}`; nothing was released"),
                                ));
                            }
                        }
                    }
                    targets
                }
            };
            let mut released = Vec::with_capacity(targets.len());
            for claim in targets {
                w.delete_claim(&claim.claim_id)?;
                Event::ClaimReleased {
                    claim_id: claim.claim_id.clone(),
                    resource: claim.resource.clone(),
                    reason: None,
                }
                .append(w, now, Some(&session.session_id), Some(&session.participant_id))?;
                released.push(claim.claim_id);
            }
            Ok(released)
        })
    }

    /// A human or policy removes another session's claim. `actor` is recorded when given.
    pub fn force_release(
        &mut self,
        claim_id: &str,
        authority: Authority,
        reason: &str,
        actor: Option<&Caller>,
    ) -> AccResult<ClaimRow> {
        ids::validate_record_id("claim", claim_id)?;
        if reason.trim().is_empty() {
            return Err(AccError::usage("a force release needs --reason"));
        }
        validate_reason(&Some(reason.to_string()))?;
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let actor_session = match actor {
                Some(caller) => Some(verify_caller(w, &workspace_id, caller, now)?),
                None => None,
            };
            let Some(claim) = w.reader().claim(claim_id)? else {
                return Err(AccError::new(
                    ErrorCode::ClaimNotFound,
                    format!("claim `{claim_id}` does not exist"),
                ));
            };
            w.delete_claim(&claim.claim_id)?;
            Event::ClaimForceReleased {
                claim_id: claim.claim_id.clone(),
                resource: claim.resource.clone(),
                owner_session_id: claim.session_id.clone(),
                owner_participant_id: claim.participant_id.clone(),
                replaced_generation: claim.generation,
                authority: authority.as_str(),
                reason: reason.to_string(),
                actor_session_id: actor_session.as_ref().map(|s| s.session_id.clone()),
            }
            .append(
                w,
                now,
                actor_session.as_ref().map(|s| s.session_id.as_str()),
                actor_session.as_ref().map(|s| s.participant_id.as_str()),
            )?;
            Ok(claim)
        })
    }
}

fn owned_claim(reader: &Reader<'_>, session_id: &str, claim_id: &str) -> AccResult<ClaimRow> {
    match reader.claim(claim_id)? {
        None => Err(AccError::new(
            ErrorCode::ClaimNotFound,
            format!(
                "claim `{claim_id}` does not exist (it may have been released); nothing was changed"
            ),
        )),
        Some(claim) if claim.session_id != session_id => Err(AccError::new(
            ErrorCode::ClaimNotOwned,
            format!(
                "claim `{claim_id}` belongs to session `{}`; nothing was changed",
                claim.session_id
            ),
        )),
        Some(claim) => Ok(claim),
    }
}

impl Core {
    /// Other sessions' live exclusive guarded claims that a write to `resources` would break,
    /// in a room whose claim policy is guarded; empty in an advisory room. Whatever weaker
    /// participants are present: they lower what the room can promise (its `protection`), never
    /// what a hook that can deny a write denies (docs/decisions.md). A claim outlives its
    /// holder's presence, so an offline holder's claim still stops the write until it expires
    /// or is released.
    pub fn write_conflicts(
        &mut self,
        caller: &Caller,
        resources: &[String],
    ) -> AccResult<Vec<ClaimRow>> {
        let now = self.now();
        let policy = self.workspace.config.claim_mode;
        let workspace_id = self.workspace.id.clone();
        if policy != crate::workspace::ClaimPolicy::Guarded {
            return Ok(Vec::new());
        }
        let Some(store) = self.store_for_read() else {
            return Ok(Vec::new());
        };
        store.read(|r| {
            let me = crate::identity::check_caller(r, &workspace_id, caller)?;
            let mut blocking = Vec::new();
            for wanted in resources {
                let (exact, ranges) = resource::overlap_candidates(wanted);
                for held in r.claims_matching(&exact, &ranges)? {
                    if held.session_id != me.session_id
                        && held.enforcement == Enforcement::Guarded
                        && held.mode == ClaimMode::Exclusive
                        && is_live(&held, now)
                        && resource::overlaps(wanted, &held.resource)
                        && !blocking
                            .iter()
                            .any(|b: &ClaimRow| b.claim_id == held.claim_id)
                    {
                        blocking.push(held);
                    }
                }
            }
            Ok(blocking)
        })
    }
}

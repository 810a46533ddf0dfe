//! Participants, sessions, generations and presence.

use crate::Core;
use crate::clock::Millis;
use crate::error::{AccError, AccResult, ErrorCode};
use crate::events::Event;
use crate::ids;
use acc_store::{Enforcement, Lifecycle, Reader, SessionRow, Writer};

/// Participant ids longer than this are shown shortened ([`Core::short_participants`]).
pub const LONG_PARTICIPANT: usize = 24;
/// A shortened participant id keeps at least this many characters.
pub const SHORT_PARTICIPANT: usize = 18;

/// Owner credentials for a mutation.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Session id.
    pub session_id: String,
    /// Generation token, as handed out when the session was opened.
    pub generation: String,
}

/// Whether a session's writes are really stopped when they would enter another session's
/// guarded claim. A session declares `guarded` when ACC's hooks guard its client's writes; only
/// evidence (a passing write-guard capture of that client version) makes the declaration count.
/// The core reads no evidence itself: the host gives it ([`Core::set_guards`]).
pub trait Guards: Send + Sync {
    /// `Ok(why)` when `session`'s declared write guard is backed, else `Err(why not)`; both one
    /// line for a person. Called only for sessions that declare `guarded`.
    fn certify(&self, session: &SessionRow) -> Result<String, String>;
}

/// Certifies nothing: the default until the host gives the evidence.
#[derive(Debug, Clone, Copy)]
pub struct NoEvidence;

impl Guards for NoEvidence {
    fn certify(&self, _session: &SessionRow) -> Result<String, String> {
        Err("no write-guard evidence was read by this process".into())
    }
}

/// What a session really enforces, and why, one line for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// `guarded` only when the session declares it and evidence backs it.
    pub enforcement: Enforcement,
    /// Why.
    pub reason: String,
}

/// A session's real enforcement: what it declares, certified by `guards`.
pub fn guard(session: &SessionRow, guards: &dyn Guards) -> Guard {
    if session.enforcement != Enforcement::Guarded {
        let reason = match Harness::parse(&session.harness) {
            Some(Harness::Cli) => "a shell session: nothing stops its writes".to_string(),
            Some(Harness::Mcp) => "an MCP client: ACC sees none of its writes".to_string(),
            _ => format!("its {} hooks declare no write guard", session.harness),
        };
        return Guard {
            enforcement: Enforcement::Advisory,
            reason,
        };
    }
    match guards.certify(session) {
        Ok(reason) => Guard {
            enforcement: Enforcement::Guarded,
            reason,
        },
        Err(reason) => Guard {
            enforcement: Enforcement::Advisory,
            reason,
        },
    }
}

/// What opened a session: a hooked client, an MCP client through `acc-mcp`, or a person at a
/// shell. The store keeps its spelling; a session row read back keeps whatever spelling it has
/// (a newer build may know more clients), and [`Harness::parse`] says whether this build knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Harness {
    /// Claude Code, through ACC's hooks.
    ClaudeCode,
    /// Codex, through ACC's hooks.
    Codex,
    /// Gemini CLI, through ACC's hooks.
    Gemini,
    /// Qwen Code, through ACC's hooks.
    Qwen,
    /// OpenCode, through ACC's plugin and hooks.
    OpenCode,
    /// Kimi Code, through ACC's hooks.
    Kimi,
    /// An MCP client, through `acc-mcp`.
    Mcp,
    /// A person at a shell, through `acc`.
    Cli,
}

impl Harness {
    /// Every harness: the hooked clients (a host test holds them to `acc_clients::Client::ALL`),
    /// then `mcp` and `cli`.
    pub const ALL: [Self; 8] = [
        Self::ClaudeCode,
        Self::Codex,
        Self::Gemini,
        Self::Qwen,
        Self::OpenCode,
        Self::Kimi,
        Self::Mcp,
        Self::Cli,
    ];

    /// The stored spelling (a hooked client's is its `acc_clients::Client` spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Qwen => "qwen",
            Self::OpenCode => "opencode",
            Self::Kimi => "kimi",
            Self::Mcp => "mcp",
            Self::Cli => "cli",
        }
    }

    /// The harness `text` spells, if this build knows it.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|h| h.as_str() == text)
    }
}

/// What a new or resumed session says about itself.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// Participant id (portable id).
    pub participant_id: String,
    /// Stable resumption key, if the harness has one.
    pub session_key: Option<String>,
    /// What opened it.
    pub harness: Harness,
    /// Client version reported by the client's executable.
    pub client_version: Option<String>,
    /// Checkout path.
    pub checkout: Option<String>,
    /// Branch.
    pub branch: Option<String>,
    /// Client pid.
    pub pid: Option<i64>,
    /// What the client can enforce.
    pub enforcement: Enforcement,
    /// Who ends the session.
    pub lifecycle: Lifecycle,
}

/// A session as opened, with its generation token (shown to the owner once).
#[derive(Debug, Clone)]
pub struct OpenedSession {
    /// The session.
    pub session: SessionRow,
    /// The generation token in clear text.
    pub generation_token: String,
    /// Whether an existing session was reopened with a new generation.
    pub resumed: bool,
}

/// Check owner credentials inside a write transaction and record a heartbeat when presence
/// needs it ([`needs_refresh`]).
pub fn verify_caller(
    writer: &mut Writer<'_>,
    workspace_id: &str,
    caller: &Caller,
    now: Millis,
) -> AccResult<SessionRow> {
    // A room reads the session with the sequence counters (the inserts that follow then go
    // ahead of their answers); nothing more when the write read them ahead already.
    writer.reader().prefetch_caller(&caller.session_id)?;
    let session = check_caller(&writer.reader(), workspace_id, caller)?;
    if needs_refresh(&session, now) {
        writer.touch_session(&session.session_id, now)?;
    }
    Ok(session)
}

/// Whether a heartbeat now would change what others see: the last one is older than
/// [`PRESENCE_REFRESH_MS`] (a quarter of the time a session stays `online` without one). A
/// fresher one changes nothing a reader of presence can tell, and costs a write.
pub fn needs_refresh(session: &SessionRow, now: Millis) -> bool {
    now - session.last_seen_at >= PRESENCE_REFRESH_MS
}

/// Check owner credentials without writing (for reads).
pub fn check_caller(
    reader: &Reader<'_>,
    workspace_id: &str,
    caller: &Caller,
) -> AccResult<SessionRow> {
    let session = check_caller_allow_closed(reader, workspace_id, caller)?;
    if session.closed_at.is_some() {
        return Err(closed_session(&session));
    }
    Ok(session)
}

/// Check the generation of a session that may be closed (idempotent replays after `finish`).
pub fn check_caller_allow_closed(
    reader: &Reader<'_>,
    workspace_id: &str,
    caller: &Caller,
) -> AccResult<SessionRow> {
    let Some(session) = reader.session(&caller.session_id)? else {
        return Err(AccError::new(
            ErrorCode::CallerWorkspaceMismatch,
            format!(
                "session `{}` is not part of workspace `{workspace_id}`",
                caller.session_id
            ),
        ));
    };
    if ids::hash_token(&caller.generation) != session.generation_hash {
        return Err(AccError::new(
            ErrorCode::GenerationStale,
            format!(
                "the generation given for session `{}` is not its current opening; a later opening replaced it, so use the newest credentials",
                session.session_id
            ),
        ));
    }
    Ok(session)
}

impl Core {
    /// Open a new session, or reopen `resume` (a session id) or the session with the spec's
    /// resumption key with a fresh generation. The old generation becomes stale.
    pub fn open_session(
        &mut self,
        spec: &SessionSpec,
        resume: Option<&str>,
    ) -> AccResult<OpenedSession> {
        ids::validate_portable_id("participant", &spec.participant_id)?;
        if let Some(id) = resume {
            ids::validate_record_id("session", id)?;
        }
        let token = ids::new_generation_token()?;
        let new_session_id = ids::new_id("session")?;
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        let liveness = self.liveness();
        let here = liveness.scope();
        self.store_for_write()?.write(|w| {
            let existing = match (resume, &spec.session_key) {
                (Some(id), _) => match w.reader().session(id)? {
                    Some(s) => Some(s),
                    None => {
                        return Err(AccError::new(
                            ErrorCode::CallerWorkspaceMismatch,
                            format!("session `{id}` is not part of workspace `{workspace_id}`"),
                        ));
                    }
                },
                (None, Some(key)) => w.reader().session_by_key(key)?,
                (None, None) => None,
            };
            if let Some(mut session) = existing {
                if session.participant_id != spec.participant_id {
                    return Err(AccError::new(
                        ErrorCode::CallerWorkspaceMismatch,
                        format!(
                            "session `{}` belongs to participant `{}`, not `{}`",
                            session.session_id, session.participant_id, spec.participant_id
                        ),
                    ));
                }
                session.generation += 1;
                reopen(w, &mut session, ids::hash_token(&token), now)?;
                move_to(w, &mut session, spec, here, now, true)?;
                return Ok(OpenedSession {
                    session,
                    generation_token: token,
                    resumed: true,
                });
            }
            let session = create_session(w, spec, here, new_session_id, &token, now)?;
            Ok(OpenedSession {
                session,
                generation_token: token,
                resumed: false,
            })
        })
    }

    /// The caller's session when the credentials are its current, open ones; `None` otherwise
    /// (another generation, closed, not in this workspace). A read.
    pub fn own_session(&mut self, caller: &Caller) -> AccResult<Option<SessionRow>> {
        let workspace_id = self.workspace.id.clone();
        let Some(store) = self.store_for_read() else {
            return Ok(None);
        };
        store.read(|r| Ok(check_caller(r, &workspace_id, caller).ok()))
    }

    /// Whether the caller's session (at its current generation) has a delivery binding. A read.
    pub fn is_bound(&mut self, caller: &Caller) -> AccResult<bool> {
        let workspace_id = self.workspace.id.clone();
        let Some(store) = self.store_for_read() else {
            return Ok(false);
        };
        store.read(|r| {
            let session = check_caller(r, &workspace_id, caller)?;
            Ok(!r
                .bindings_of(&session.session_id, session.generation)?
                .is_empty())
        })
    }

    /// The claims the caller's session holds (live and expired). A read.
    pub fn claims_held(&mut self, caller: &Caller) -> AccResult<Vec<acc_store::ClaimRow>> {
        let workspace_id = self.workspace.id.clone();
        let Some(store) = self.store_for_read() else {
            return Ok(Vec::new());
        };
        store.read(|r| {
            let session = check_caller(r, &workspace_id, caller)?;
            Ok(r.claims_of_session(&session.session_id)?)
        })
    }

    /// Record a heartbeat for the caller (verifies the generation). A read when presence is
    /// fresh ([`needs_refresh`]): no write transaction at all.
    pub fn heartbeat(&mut self, caller: &Caller) -> AccResult<SessionRow> {
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        if let Some(store) = self.store_for_read() {
            let session = store.read(|r| check_caller(r, &workspace_id, caller))?;
            if !needs_refresh(&session, now) {
                return Ok(session);
            }
        }
        self.store_for_write()?
            .write(|w| verify_caller(w, &workspace_id, caller, now))
    }
}

impl Core {
    /// Open, resume or start a new generation of the session with `spec.session_key` (the
    /// hooked sessions of a client conversation). `rotate` starts a new generation of an
    /// existing session; otherwise an existing one keeps its generation (a resume or a
    /// compaction), reopening it if it was closed. `derive` gives the token of a generation,
    /// so the hook process can present it again on every event.
    pub fn open_keyed_session(
        &mut self,
        spec: &SessionSpec,
        rotate: bool,
        refresh: bool,
        derive: &dyn Fn(i64) -> String,
    ) -> AccResult<OpenedSession> {
        let opened = self.open_keyed(spec, rotate, refresh, derive)?;
        self.opened.insert(
            opened.session.session_id.clone(),
            opened.session.participant_id.clone(),
        );
        Ok(opened)
    }

    fn open_keyed(
        &mut self,
        spec: &SessionSpec,
        rotate: bool,
        refresh: bool,
        derive: &dyn Fn(i64) -> String,
    ) -> AccResult<OpenedSession> {
        ids::validate_portable_id("participant", &spec.participant_id)?;
        let Some(key) = spec.session_key.clone() else {
            return Err(AccError::internal("a keyed session needs a session key"));
        };
        let now = self.now();
        // Most events find their session open at its generation with nothing to change: that
        // is a read, and no write transaction is begun (a hook with nothing to do writes
        // nothing; `refresh` asks for a heartbeat when presence needs one).
        let liveness = self.liveness();
        let here = liveness.scope();
        if !rotate && let Some(store) = self.store_for_read() {
            let found = store.read(|r| {
                Ok::<_, AccError>(
                    r.session_by_key(&key)?
                        .map(|s| (s, scope_of(r, spec, here).map(str::to_string))),
                )
            })?;
            if let Some((session, scope)) = found {
                let token = derive(session.generation);
                let unchanged = session.closed_at.is_none()
                    && ids::hash_token(&token) == session.generation_hash
                    && (spec.client_version.is_none()
                        || (spec.client_version == session.client_version
                            && spec.enforcement == session.enforcement))
                    && !moved(&session, spec, scope.as_deref(), false)
                    && !(refresh && needs_refresh(&session, now));
                if unchanged {
                    return Ok(OpenedSession {
                        session,
                        generation_token: token,
                        resumed: true,
                    });
                }
            }
        }
        let new_session_id = ids::new_id("session")?;
        self.store_for_write()?.write(|w| {
            w.reader()
                .prefetch_by_key(&key, Some(&spec.participant_id))?;
            if let Some(mut session) = w.reader().session_by_key(&key)? {
                let was_closed = session.closed_at.is_some();
                if rotate {
                    session.generation += 1;
                }
                let token = derive(session.generation);
                let hash = ids::hash_token(&token);
                if rotate || was_closed || hash != session.generation_hash {
                    reopen(w, &mut session, hash, now)?;
                } else if needs_refresh(&session, now)
                    && !moved(&session, spec, scope_of(&w.reader(), spec, here), false)
                {
                    w.touch_session(&session.session_id, now)?;
                }
                // A resumed conversation runs in a new client process (and perhaps another
                // checkout): the session follows it, so its presence is the running client's.
                move_to(w, &mut session, spec, here, now, false)?;
                // A client's start reports its version again (it may have been upgraded between
                // two openings of one conversation); other events report none and keep it.
                if spec.client_version.is_some()
                    && (spec.client_version != session.client_version
                        || spec.enforcement != session.enforcement)
                {
                    session.client_version = spec.client_version.clone();
                    session.enforcement = spec.enforcement;
                    w.set_session_client(
                        &session.session_id,
                        session.client_version.as_deref(),
                        session.enforcement,
                    )?;
                }
                return Ok(OpenedSession {
                    session,
                    generation_token: token,
                    resumed: true,
                });
            }
            let token = derive(1);
            let session = create_session(w, spec, here, new_session_id.clone(), &token, now)?;
            Ok(OpenedSession {
                session,
                generation_token: token,
                resumed: false,
            })
        })
    }

    /// Whether a hooked session with `key` was ever opened (a read: nothing is created).
    pub fn keyed_session_exists(&mut self, key: &str) -> AccResult<bool> {
        let Some(store) = self.store_for_read() else {
            return Ok(false);
        };
        Ok(store.read(|r| r.session_by_key(key))?.is_some())
    }

    /// End the presence of the hooked session with `key` (a client's session end): nothing when
    /// there is no store, no such session, or it is closed already (nothing is created, no
    /// writer waits). On a room, one write that starts from the key (two round trips, the
    /// session read with the writers' lock); on SQLite a read first, which costs no round trip.
    /// Claims stay; see [`Core::end_presence`]. Whether a session was closed.
    pub fn end_keyed_session(&mut self, key: &str, reason: SessionEndReason) -> AccResult<bool> {
        let now = self.now();
        let Some(store) = self.store_for_read() else {
            return Ok(false);
        };
        let open = |s: &SessionRow| s.closed_at.is_none();
        if store.path().is_some()
            && !store
                .read(|r| r.session_by_key(key))?
                .is_some_and(|s| open(&s))
        {
            return Ok(false);
        }
        store.write(|w| {
            w.reader().prefetch_by_key(key, None)?;
            let Some(session) = w.reader().session_by_key(key)?.filter(open) else {
                return Ok(false);
            };
            close(w, &session, reason, now)?;
            Ok(true)
        })
    }

    /// End the caller session's presence without a handoff (a client's session end). Claims
    /// stay until they expire or are released. The log only grows: a session that ended
    /// without a turn (`claude mcp list` starts and ends one) is closed like any other, with
    /// `reason` saying so (`client_session_end_without_turn`), so a follower that saw it open
    /// sees it close.
    pub fn end_presence(&mut self, caller: &Caller, reason: SessionEndReason) -> AccResult<()> {
        let now = self.now();
        let workspace_id = self.workspace.id.clone();
        self.store_for_write()?.write(|w| {
            let session = verify_caller(w, &workspace_id, caller, now)?;
            close(w, &session, reason, now)
        })
    }
}

/// Close `session` (its presence ends, its bindings go) with a `session.closed` event saying
/// `reason`.
fn close(
    w: &mut Writer<'_>,
    session: &SessionRow,
    reason: SessionEndReason,
    now: Millis,
) -> AccResult<()> {
    w.close_session(&session.session_id, now)?;
    Event::SessionClosed {
        session_id: session.session_id.clone(),
        reason: reason.as_str(),
        handoff_message_id: None,
    }
    .append(
        w,
        now,
        Some(&session.session_id),
        Some(&session.participant_id),
    )?;
    Ok(())
}

/// Reopen a session at its (possibly new) generation with the token hash `hash`: open again,
/// seen now, and a `session.reopened` event.
fn reopen(
    w: &mut Writer<'_>,
    session: &mut SessionRow,
    hash: String,
    now: Millis,
) -> AccResult<()> {
    session.generation_hash = hash;
    session.closed_at = None;
    session.last_seen_at = now;
    w.reopen_session(
        &session.session_id,
        session.generation,
        &session.generation_hash,
        now,
    )?;
    Event::SessionReopened {
        session_id: session.session_id.clone(),
        generation: session.generation,
    }
    .append(
        w,
        now,
        Some(&session.session_id),
        Some(&session.participant_id),
    )?;
    Ok(())
}

/// The pid scope a session opened with `spec` records: this host's ([`Liveness::scope`])
/// beside a pid, where the store keeps scopes.
fn scope_of<'a>(r: &Reader<'_>, spec: &SessionSpec, here: Option<&'a str>) -> Option<&'a str> {
    here.filter(|_| spec.pid.is_some() && r.records_pid_scope())
}

/// Whether the session's client runs elsewhere than recorded: another process (a resumed
/// conversation, perhaps on another machine: `scope`, from [`scope_of`]), or, at a client's
/// start (the only spec that reports a client version), another checkout or branch. Other
/// events may come from a subdirectory, so they move nothing else.
fn moved(session: &SessionRow, spec: &SessionSpec, scope: Option<&str>, opening: bool) -> bool {
    session.pid != spec.pid
        || session.pid_scope.as_deref() != scope
        || ((opening || spec.client_version.is_some())
            && (session.checkout != spec.checkout || session.branch != spec.branch))
}

/// Record the process (and where its pid means something), checkout and branch `spec` reports
/// for `session` when they changed (a resumed conversation runs in a new client process), seen
/// now. `opening`: an explicit (re)opening, which records the checkout and branch whatever the
/// spec says of its client.
fn move_to(
    w: &mut Writer<'_>,
    session: &mut SessionRow,
    spec: &SessionSpec,
    here: Option<&str>,
    now: Millis,
    opening: bool,
) -> AccResult<()> {
    let scope = scope_of(&w.reader(), spec, here);
    if !moved(session, spec, scope, opening) {
        return Ok(());
    }
    session.pid = spec.pid;
    session.pid_scope = scope.map(str::to_string);
    session.checkout = spec.checkout.clone();
    session.branch = spec.branch.clone();
    session.last_seen_at = session.last_seen_at.max(now);
    w.set_session_process(session, now)?;
    Ok(())
}

/// Record a new session (and its participant when new) with generation 1, with its events.
fn create_session(
    w: &mut Writer<'_>,
    spec: &SessionSpec,
    here: Option<&str>,
    session_id: String,
    token: &str,
    now: Millis,
) -> AccResult<SessionRow> {
    if w.ensure_participant(&spec.participant_id, now)? {
        Event::ParticipantCreated {
            participant_id: spec.participant_id.clone(),
        }
        .append(w, now, None, Some(&spec.participant_id))?;
    }
    let session = SessionRow {
        session_id,
        participant_id: spec.participant_id.clone(),
        session_key: spec.session_key.clone(),
        generation: 1,
        generation_hash: ids::hash_token(token),
        harness: spec.harness.as_str().to_string(),
        client_version: spec.client_version.clone(),
        checkout: spec.checkout.clone(),
        branch: spec.branch.clone(),
        pid: spec.pid,
        pid_scope: scope_of(&w.reader(), spec, here).map(str::to_string),
        enforcement: spec.enforcement,
        lifecycle: spec.lifecycle,
        opened_at: now,
        last_seen_at: now,
        closed_at: None,
    };
    w.insert_session(&session)?;
    Event::SessionOpened {
        session_id: session.session_id.clone(),
        participant_id: session.participant_id.clone(),
        harness: session.harness.clone(),
        lifecycle: session.lifecycle,
        enforcement: session.enforcement,
        generation: 1,
    }
    .append(
        w,
        now,
        Some(&session.session_id),
        Some(&session.participant_id),
    )?;
    Ok(session)
}

/// The refusal of an act by a session that was closed.
pub(crate) fn closed_session(session: &SessionRow) -> AccError {
    AccError::new(
        ErrorCode::GenerationStale,
        format!(
            "session `{}` was closed; open a new one with `acc attach`",
            session.session_id
        ),
    )
}

mod hooked;
mod presence;
mod short_ids;
pub use hooked::derived_token;
pub use presence::{
    HEARTBEAT_CADENCE_MS, Liveness, OFFLINE_ALWAYS_MS, OFFLINE_WITHOUT_PID_MS, PRESENCE_REFRESH_MS,
    Presence, presence, runs_here,
};

/// Why a client's session ended, as its `session.closed` event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEndReason {
    /// The client ended a session that had turns.
    ClientSessionEnd,
    /// The client ended a session that never had a turn (a client started only to list its
    /// MCP servers, say): closed all the same, so the log only grows.
    WithoutTurn,
}

impl SessionEndReason {
    /// The reason's spelling in the event.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientSessionEnd => "client_session_end",
            Self::WithoutTurn => "client_session_end_without_turn",
        }
    }
}

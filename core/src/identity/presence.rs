//! Presence: whether a session is online, stale or offline, derived from its heartbeats and,
//! where this host can test it, its pid (SUPPLEMENT.md section 4).

use crate::clock::Millis;
use acc_store::SessionRow;

/// Heartbeat cadence of live sessions; a session silent for two cadences is stale.
pub const HEARTBEAT_CADENCE_MS: Millis = 60_000;
/// A heartbeat is written only when the last one is this old: presence is `online` for two
/// cadences after one, so a fresher heartbeat changes nothing anyone sees.
pub const PRESENCE_REFRESH_MS: Millis = HEARTBEAT_CADENCE_MS / 2;
/// A session without a pid is offline after this much silence.
pub const OFFLINE_WITHOUT_PID_MS: Millis = 30 * 60_000;
/// Any session is offline after this much silence.
pub const OFFLINE_ALWAYS_MS: Millis = 24 * 60 * 60_000;

/// Presence of a session, derived (never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Heard from within two heartbeat cadences.
    Online,
    /// Open, but silent for longer.
    Stale,
    /// Closed, dead, or silent too long.
    Offline,
}

impl Presence {
    /// Stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Online => "online",
            Self::Stale => "stale",
            Self::Offline => "offline",
        }
    }
}

/// Whether a session's process is still running, as the host can tell: the core probes no
/// process itself. `acc` and `acc-mcp` answer with signal 0; a test can answer anything.
pub trait Liveness: Send + Sync {
    /// Whether a process with this pid exists.
    fn alive(&self, pid: i64) -> bool;

    /// Where this host's pids mean something (`acc_clients::process::pid_scope`: the kernel's
    /// boot and the pid namespace), recorded with a session's pid so that a pid recorded
    /// elsewhere (another machine sharing a room, a container, before a reboot) is never tested
    /// here. `None`: this host cannot say, and records none.
    fn scope(&self) -> Option<&str> {
        None
    }
}

/// Whether `session`'s client runs where this host's pids mean the same, so its pid can be
/// tested and its live bindings reached from here: its pid scope is this host's, or it has none
/// (recorded by a build that recorded no scope, or a store that keeps none: as before scopes).
pub fn runs_here(session: &SessionRow, liveness: &dyn Liveness) -> bool {
    match session.pid_scope.as_deref() {
        None => true,
        Some(recorded) => liveness.scope() == Some(recorded),
    }
}

/// Presence by the rules of SUPPLEMENT.md section 4.
pub fn presence(session: &SessionRow, now: Millis, liveness: &dyn Liveness) -> Presence {
    if session.closed_at.is_some() {
        return Presence::Offline;
    }
    let silent = now - session.last_seen_at;
    if silent > OFFLINE_ALWAYS_MS {
        return Presence::Offline;
    }
    // A pid recorded elsewhere cannot be confirmed dead from here: such a session is judged by
    // its silence alone, as one without a pid.
    match session.pid.filter(|_| runs_here(session, liveness)) {
        Some(pid) if !liveness.alive(pid) => return Presence::Offline,
        None if silent > OFFLINE_WITHOUT_PID_MS => return Presence::Offline,
        _ => {}
    }
    if silent <= 2 * HEARTBEAT_CADENCE_MS {
        Presence::Online
    } else {
        Presence::Stale
    }
}

/// Presence kept fresh without reading the session again (`acc-mcp`'s read-only tools).
impl crate::Core {
    /// Refresh the presence of the open session `session_id` at `generation` (read and checked
    /// by an earlier [`Core::heartbeat`]) without reading it again: on a room it travels ahead of
    /// the next round trip at no cost of its own ([`acc_store::Store::refresh_presence`]), and
    /// [`Core::presence_refreshed`] says afterwards whether it found the session.
    pub fn refresh_presence(&mut self, session_id: &str, generation: i64) -> crate::AccResult<()> {
        let now = self.now();
        Ok(self
            .store_for_write()?
            .refresh_presence(session_id, generation, now)?)
    }

    /// Whether the last [`Core::refresh_presence`] found its session open at its generation;
    /// `None` when none was answered since the last ask.
    pub fn presence_refreshed(&mut self) -> Option<bool> {
        self.store_for_read()
            .and_then(acc_store::Store::presence_refreshed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host whose scope is `here` and where only pid 7 runs.
    struct Host(Option<&'static str>);

    impl Liveness for Host {
        fn alive(&self, pid: i64) -> bool {
            pid == 7
        }

        fn scope(&self) -> Option<&str> {
            self.0
        }
    }

    fn session(pid: Option<i64>, scope: Option<&str>, last_seen_at: Millis) -> SessionRow {
        SessionRow {
            session_id: "s".into(),
            participant_id: "p".into(),
            session_key: None,
            generation: 1,
            generation_hash: "h".into(),
            harness: "claude-code".into(),
            client_version: None,
            checkout: None,
            branch: None,
            pid,
            enforcement: acc_store::Enforcement::Advisory,
            lifecycle: acc_store::Lifecycle::Managed,
            opened_at: 0,
            last_seen_at,
            closed_at: None,
            pid_scope: scope.map(str::to_string),
        }
    }

    #[test]
    fn a_pid_counts_only_where_it_was_recorded() {
        let now = 1_000_000_000;
        let quiet = now - OFFLINE_WITHOUT_PID_MS - 1;
        // (pid, recorded scope, this host's scope, last seen, presence).
        let table = [
            (Some(7), Some("a"), Some("a"), now, Presence::Online),
            (Some(8), Some("a"), Some("a"), now, Presence::Offline),
            (Some(8), Some("b"), Some("a"), now, Presence::Online),
            (Some(7), Some("b"), Some("a"), quiet, Presence::Offline),
            (Some(8), Some("b"), None, now, Presence::Online),
            (Some(8), None, Some("a"), now, Presence::Offline),
            (None, None, Some("a"), quiet, Presence::Offline),
            (
                Some(8),
                Some("b"),
                Some("a"),
                now - 3 * HEARTBEAT_CADENCE_MS,
                Presence::Stale,
            ),
        ];
        for (pid, recorded, here, seen, want) in table {
            let s = session(pid, recorded, seen);
            assert_eq!(
                presence(&s, now, &Host(here)),
                want,
                "pid {pid:?} recorded in {recorded:?}, seen from {here:?}"
            );
        }
    }
}

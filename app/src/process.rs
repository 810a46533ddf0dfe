//! Process liveness, as the host tells it to the core: a session whose recorded pid no longer
//! exists is offline, when it was recorded where this process's pids mean the same (its pid
//! scope). The core probes no process itself (`acc_core::Liveness`).

use std::sync::Arc;

use acc_core::Liveness;

/// Signal 0 to the pid (a process of another user counts as alive).
#[derive(Debug, Default, Clone, Copy)]
pub struct SignalLiveness;

impl Liveness for SignalLiveness {
    fn alive(&self, pid: i64) -> bool {
        acc_clients::pid_alive(pid)
    }

    fn scope(&self) -> Option<&str> {
        // Read once per process: the boot and the pid namespace do not change while it runs.
        static SCOPE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        SCOPE
            .get_or_init(acc_clients::process::pid_scope)
            .as_deref()
    }
}

/// The liveness every `Core` of this host is given.
pub fn liveness() -> Arc<dyn Liveness> {
    Arc::new(SignalLiveness)
}

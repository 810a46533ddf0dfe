//! The session a server speaks for: resolved at the first tool call that needs one (the
//! configured participant's, or the adopted hooked session of the client that started it),
//! reopened when it goes stale, and reported by `acc_status`.

use super::*;

impl Server {
    /// Run `op` as this server's session, resolving it first. Another `acc-mcp` of the same
    /// participant and workspace shares the session and may have started a newer generation;
    /// then the session is reopened once and `op` retried (a refused operation wrote nothing).
    pub(super) fn with_session<T>(
        &mut self,
        mut op: impl FnMut(&mut App, &Caller) -> AccResult<T>,
    ) -> AccResult<T> {
        for attempt in 0..2 {
            let caller = self.session()?;
            let app = self.app()?;
            match op(app, &caller) {
                Err(error) if error.code == ErrorCode::GenerationStale && attempt == 0 => {
                    self.caller = None
                }
                other => return other,
            }
        }
        Err(AccError::internal("the session could not be resumed"))
    }

    /// The application (core and delivery), opened on first need.
    pub(super) fn app(&mut self) -> AccResult<&mut App> {
        if self.app.is_none() {
            let ws = workspace::discover(&self.config.workspace_dir)?;
            let data_dir = match &self.config.data_dir {
                Some(dir) => dir.clone(),
                None => workspace::data_dir_for(&ws)?,
            };
            let mut app = App::new(
                acc_app::guards::core(ws, data_dir, self.config.clock.clone())?,
                Arc::clone(&self.config.consent),
            );
            app.delivery.loading = self.config.adapters.clone();
            self.app = Some(app);
        }
        self.app
            .as_mut()
            .ok_or_else(|| AccError::internal("the workspace did not open"))
    }

    pub(super) fn core(&mut self) -> AccResult<&mut Core> {
        Ok(&mut self.app()?.core)
    }

    pub(super) fn session(&mut self) -> AccResult<Caller> {
        if let Some(caller) = &self.caller {
            return Ok(caller.clone());
        }
        let (participant, source, reason) = match self.config.identity.clone() {
            Identity::Configured(participant) => (
                participant,
                "configured",
                "ACC_MCP_PARTICIPANT names it".to_string(),
            ),
            Identity::Adopt { client_pid } => {
                let data_dir = self.data_dir()?;
                match adopt::find(self.core()?, &data_dir, client_pid)? {
                    adopt::Found::Session {
                        caller,
                        participant,
                        reason,
                    } => {
                        self.speaks_for = Some(SpeaksFor {
                            participant,
                            source: "adopted",
                            reason,
                        });
                        self.caller = Some(caller.clone());
                        return Ok(caller);
                    }
                    adopt::Found::None(reason) => {
                        let participant = default_participant(client_pid);
                        if self.speaks_for.is_none() {
                            self.notice = Some(format!(
                                "ACC: this server speaks for its own participant {participant}, not for your client's hooked session: {reason}. Messages to that session do not reach this inbox; see speaksFor in acc_status."
                            ));
                        }
                        (participant, "default", reason)
                    }
                }
            }
        };
        let core = self.core()?;
        let (checkout, branch) = workspace::checkout_and_branch(&core.workspace.root);
        let spec = SessionSpec {
            session_key: Some(format!("mcp:{participant}:{}", core.workspace.id)),
            participant_id: participant.clone(),
            harness: acc_core::identity::Harness::Mcp,
            client_version: None,
            checkout,
            branch,
            pid: Some(i64::from(std::process::id())),
            enforcement: acc_store::Enforcement::Advisory,
            lifecycle: acc_store::Lifecycle::Manual,
        };
        let opened = core.open_session(&spec, None)?;
        let caller = Caller {
            session_id: opened.session.session_id,
            generation: opened.generation_token,
        };
        self.speaks_for = Some(SpeaksFor {
            participant,
            source,
            reason,
        });
        self.caller = Some(caller.clone());
        Ok(caller)
    }

    /// The data directory of the workspace (opening the core when needed).
    pub(super) fn data_dir(&mut self) -> AccResult<PathBuf> {
        Ok(self.core()?.data_dir().to_path_buf())
    }

    /// `speaksFor` of `acc_status`: the participant and session, and why.
    pub(super) fn speaks_for_value(&self) -> Value {
        match (&self.speaks_for, &self.caller) {
            (Some(who), Some(caller)) => json(&wire::SpeaksFor {
                participant_id: &who.participant,
                session_id: &caller.session_id,
                source: who.source,
                reason: &who.reason,
            }),
            _ => Value::Null,
        }
    }
}

/// A test aid: the round trips each tool call made to a room.
impl Server {
    /// Round trips to a room's server so far (0 on SQLite or before the store is open).
    pub(super) fn round_trips(&self) -> u64 {
        self.app
            .as_ref()
            .and_then(|app| app.core.store())
            .map_or(0, acc_store::Store::round_trips)
    }

    /// A test aid: with `ACC_TEST_TOOL_TRIPS` naming a file, each tool call appends `TOOL
    /// TRIPS` to it, the round trips it made to the room (`tests/tests/e2e/room_cli.rs`).
    pub(super) fn count_round_trips(&self, tool: &str, before: u64) {
        // Read once: every tool call passes here.
        static FILE: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();
        let Some(file) = FILE
            .get_or_init(|| std::env::var_os("ACC_TEST_TOOL_TRIPS"))
            .as_ref()
        else {
            return;
        };
        let line = format!("{tool} {}\n", self.round_trips().saturating_sub(before));
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    }
}

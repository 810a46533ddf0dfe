//! The protocol rules: identity, presence, intent, claims, messages, receipts, sync, attention.
//!
//! Owns: every rule of `PROTOCOL.md`, expressed over the typed transactions the store hands out.
//! Must not: issue SQL (that is `store`), format output (that is `views` and `cli`), or call a
//! transport while a store transaction is open.

use std::path::PathBuf;
use std::sync::Arc;

pub mod clock;
pub mod error;
pub mod ids;
pub mod wire;
pub mod workspace;

pub use error::{AccError, AccResult, ErrorCode};

use crate::clock::{Clock, Millis};

use crate::workspace::Workspace;
use acc_store::{Reader, Store, WorkspaceRecord};

pub mod attention;
pub mod claims;
pub mod events;
pub mod identity;
pub mod intent;
pub mod messages;
pub mod offers;
pub mod resource;
pub mod status;

pub use identity::{Caller, Guards, Liveness, NoEvidence, OpenedSession, Presence, SessionSpec};

/// The protocol core bound to one workspace and its store.
pub struct Core {
    /// The workspace this core serves.
    pub workspace: Workspace,
    data_dir: PathBuf,
    store: Option<Store>,
    clock: Arc<dyn Clock>,
    liveness: Arc<dyn Liveness>,
    guards: Arc<dyn Guards>,
    /// Whether this core's first write looked for a pending layout upgrade.
    upgrade_looked: bool,
    /// The participant of each session this core opened (a session never changes participant):
    /// what a room's reads of the caller's messages may read ahead with its session.
    opened: std::collections::HashMap<String, String>,
    /// The store's wake, made by the first wait ([`Core::inbox_waiting`]) and kept for the next.
    waker: Option<acc_store::wake::Waker>,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("workspace", &self.workspace.id)
            .field("store", &self.store)
            .finish()
    }
}

impl Core {
    /// Another core over the same workspace, data directory, clock and liveness, with a store
    /// connection of its own (for work that outlives this core's transaction, on another
    /// thread).
    pub fn another(&self) -> AccResult<Self> {
        let mut other = Self::new(
            self.workspace.clone(),
            self.data_dir.clone(),
            self.clock.clone(),
            self.liveness.clone(),
        )?;
        other.guards = self.guards.clone();
        Ok(other)
    }

    /// Bind to `workspace`, opening its store when it exists (nothing is created yet). Time and
    /// process liveness are the caller's to give. No session's write guard is certified until
    /// the caller gives the evidence ([`Core::set_guards`]).
    pub fn new(
        workspace: Workspace,
        data_dir: PathBuf,
        clock: Arc<dyn Clock>,
        liveness: Arc<dyn Liveness>,
    ) -> AccResult<Self> {
        let store = Store::open_existing(&data_dir, &workspace.id)?;
        Ok(Self {
            workspace,
            data_dir,
            store,
            clock,
            liveness,
            guards: Arc::new(NoEvidence),
            upgrade_looked: false,
            opened: std::collections::HashMap::new(),
            waker: None,
        })
    }

    /// The participant of the session `session_id`, when this core opened it (a hint for
    /// reading ahead: what is read is still checked against the session itself).
    pub fn opened_participant(&self, session_id: &str) -> Option<&str> {
        self.opened.get(session_id).map(String::as_str)
    }

    /// Certify sessions' write guards with `guards` (the evidence the host reads).
    pub fn set_guards(&mut self, guards: Arc<dyn Guards>) {
        self.guards = guards;
    }

    /// What certifies sessions' write guards for this core.
    pub fn guards(&self) -> Arc<dyn Guards> {
        self.guards.clone()
    }

    /// Now, from the injected clock; in a room on PostgreSQL, from the room's server clock
    /// when the injected clock follows the system's (DESIGN: leases and presence are reckoned on
    /// the server's clock, so machines whose clocks disagree agree on who holds what).
    pub fn now(&self) -> Millis {
        self.store
            .as_ref()
            .and_then(Store::server_clock_offset_ms)
            .and_then(|offset| self.clock.on_server(offset))
            .unwrap_or_else(|| self.clock.now_ms())
    }

    /// When the store is a room on PostgreSQL: its server's version and one round trip (for
    /// `acc status` and `acc doctor`); `None` for the SQLite store or before any store exists.
    pub fn room_probe(&mut self) -> AccResult<Option<acc_store::RoomProbe>> {
        match self.store.as_mut() {
            Some(store) => Ok(store.room_probe()?),
            None => Ok(None),
        }
    }

    /// How this core tells whether a session's process is alive.
    pub fn liveness(&self) -> Arc<dyn Liveness> {
        self.liveness.clone()
    }

    /// The data directory (`<data home>/acc`).
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// The store, created on first use by a mutation.
    pub(crate) fn store_for_write(&mut self) -> AccResult<&mut Store> {
        if self.store.is_none() {
            let record = WorkspaceRecord {
                workspace_id: self.workspace.id.clone(),
                display_name: self.workspace.config.display_name.clone(),
                root: self.workspace.root.to_string_lossy().into_owned(),
            };
            let now = self.now();
            self.store = Some(Store::open_or_create(&self.data_dir, &record, now)?);
        }
        let store = self
            .store
            .as_mut()
            .ok_or_else(|| AccError::internal("the store did not open"))?;
        // The first write-open of an older layout upgrades it when no other connection has the
        // store open; otherwise (or when its backup cannot be written) this build works with
        // the older layout, and `acc doctor` names the pending upgrade.
        if !self.upgrade_looked {
            self.upgrade_looked = true;
            let _ = store.upgrade_if_alone();
        }
        Ok(store)
    }

    /// The store when it exists; reads of a workspace without one see an empty room.
    pub(crate) fn store_for_read(&mut self) -> Option<&mut Store> {
        self.store.as_mut()
    }

    /// Run `f` in one read transaction of the store (one consistent snapshot); `None` when the
    /// workspace has no store yet. Every write goes through this crate's methods, which hold
    /// the protocol's rules; a reader cannot write.
    pub fn read<T>(&mut self, f: impl FnOnce(&Reader<'_>) -> AccResult<T>) -> AccResult<Option<T>> {
        match self.store.as_mut() {
            Some(store) => store.read(f).map(Some),
            None => Ok(None),
        }
    }

    /// The store, to look at (its path, layout and integrity), when it exists (the first write
    /// creates it).
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// This core's store connection, for `acc store upgrade|downgrade` only: layout
    /// administration, which writes no records. The core is gone after it.
    pub fn into_store(mut self) -> Option<Store> {
        self.store.take()
    }
}

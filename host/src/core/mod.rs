//! The protocol rules: identity, presence, intent, claims, messages, receipts, sync, attention.
//!
//! Owns: every rule of `PROTOCOL.md`, expressed over the typed transactions the store hands out.
//! Must not: issue SQL (that is `store`), format output (that is `views` and `cli`), or call a
//! transport while a store transaction is open.

use std::path::PathBuf;
use std::sync::Arc;

use crate::clock::{Clock, Millis};
use crate::error::{AccError, AccResult};
use crate::plugins::Plugins;
use crate::store::{Store, WorkspaceRecord};
use crate::workspace::Workspace;

pub mod claims;
pub mod identity;
pub mod intent;
pub mod messages;
pub mod resource;
pub mod status;

pub use identity::{Caller, OpenedSession, Presence, SessionSpec};

/// The protocol core bound to one workspace and its store.
pub struct Core {
    /// The workspace this core serves.
    pub workspace: Workspace,
    data_dir: PathBuf,
    store: Option<Store>,
    clock: Arc<dyn Clock>,
    plugins: Option<Arc<Plugins>>,
    /// The live-delivery consent to use instead of the installation record's (the capture
    /// tool, which drives a client it started itself).
    pub consent_override: Option<String>,
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
    /// Bind to `workspace`, opening its store when it exists (nothing is created yet).
    pub fn new(workspace: Workspace, data_dir: PathBuf, clock: Arc<dyn Clock>) -> AccResult<Self> {
        let store = Store::open_existing(&data_dir, &workspace.id)?;
        Ok(Self {
            workspace,
            data_dir,
            store,
            clock,
            plugins: None,
            consent_override: None,
        })
    }

    /// Now, from the injected clock.
    pub fn now(&self) -> Millis {
        self.clock.now_ms()
    }

    /// The data directory (`<data home>/acc`).
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// The store, created on first use by a mutation.
    pub fn store_for_write(&mut self) -> AccResult<&mut Store> {
        if self.store.is_none() {
            let record = WorkspaceRecord {
                workspace_id: self.workspace.id.clone(),
                display_name: self.workspace.config.display_name.clone(),
                root: self.workspace.root.to_string_lossy().into_owned(),
            };
            let now = self.now();
            self.store = Some(Store::open_or_create(&self.data_dir, &record, now)?);
        }
        self.store
            .as_mut()
            .ok_or_else(|| AccError::internal("the store did not open"))
    }

    /// The adapter plugins, loaded on first need (only routing, binding and rendering need
    /// them) with their configurations from `ACC_ADAPTER_CONFIG`.
    pub fn plugins(&mut self) -> AccResult<&Plugins> {
        if self.plugins.is_none() {
            let configs = crate::plugins::configs_from_env().map_err(AccError::usage)?;
            self.plugins = Some(Arc::new(Plugins::load(&configs)));
        }
        self.plugins
            .as_deref()
            .ok_or_else(|| AccError::internal("the plugins did not load"))
    }

    /// One adapter by id: from the loaded plugins when they are loaded, else by loading just
    /// that adapter's file.
    pub fn adapter(
        &mut self,
        adapter_id: &str,
    ) -> AccResult<Option<crate::plugins::LoadedAdapter>> {
        if let Some(plugins) = &self.plugins {
            return Ok(plugins.get(adapter_id).cloned());
        }
        let configs = crate::plugins::configs_from_env().map_err(AccError::usage)?;
        // The file named after the id is the fast path; an adapter may live in a file of any
        // name, so a miss falls back to loading the whole search path.
        let one = Plugins::load_named(crate::plugins::search_path(), &configs, adapter_id);
        if let Some(found) = one.get(adapter_id) {
            return Ok(Some(found.clone()));
        }
        Ok(self.plugins()?.get(adapter_id).cloned())
    }

    /// Use these plugins instead of discovering them (tests, embedding).
    pub fn set_plugins(&mut self, plugins: Arc<Plugins>) {
        self.plugins = Some(plugins);
    }

    /// The store when it exists; reads of a workspace without one see an empty room.
    pub fn store_for_read(&mut self) -> Option<&mut Store> {
        self.store.as_mut()
    }
}

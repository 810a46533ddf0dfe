//! The store callers open: a workspace's SQLite file (the embedded default) or its room on
//! PostgreSQL, behind one set of typed reads and writes.

use std::path::Path;

use crate::{
    Lite, Millis, Reader, StoreError, StoreResult, WorkspaceRecord, Writer, layout, room, room_url,
};

/// An open store: the workspace's SQLite file, or its room on PostgreSQL ([`room_url`]).
/// Callers see the same typed reads and writes either way.
pub struct Store(pub(crate) Backend);

// One per process: the sizes of the variants do not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Backend {
    Lite(Lite),
    Pg(Box<room::Room>),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location())
            .finish()
    }
}

impl Store {
    /// Open the store of `workspace` under `data_dir`, creating it when absent: its room on
    /// PostgreSQL when one is connected ([`room_url`]), else its SQLite file.
    pub fn open_or_create(
        data_dir: &Path,
        workspace: &WorkspaceRecord,
        now: Millis,
    ) -> StoreResult<Self> {
        Ok(Self(match room_url(data_dir, &workspace.workspace_id)? {
            Some(url) => Backend::Pg(Box::new(room::Room::open_or_create(
                &url,
                workspace,
                now,
                Some(data_dir),
            )?)),
            None => Backend::Lite(Lite::open_or_create(data_dir, workspace, now)?),
        }))
    }

    /// Open an existing store without creating anything; `None` when there is none yet.
    pub fn open_existing(data_dir: &Path, workspace_id: &str) -> StoreResult<Option<Self>> {
        Ok(match room_url(data_dir, workspace_id)? {
            Some(url) => room::Room::open_existing(&url, workspace_id, data_dir)?
                .map(|room| Self(Backend::Pg(Box::new(room)))),
            None => Lite::open_existing(data_dir, workspace_id)?.map(|s| Self(Backend::Lite(s))),
        })
    }

    /// Open (creating its schema when the database has none) the room of `workspace` at `url`,
    /// whatever room file there is: `acc room connect` proves a URL with it before recording it.
    pub fn open_room(url: &str, workspace: &WorkspaceRecord, now: Millis) -> StoreResult<Self> {
        Ok(Self(Backend::Pg(Box::new(room::Room::open_or_create(
            url, workspace, now, None,
        )?))))
    }

    /// A room's server version, its round trip (the median of three `SELECT 1`) and how its
    /// connection travels; `None` for the SQLite store.
    pub fn room_probe(&mut self) -> StoreResult<Option<crate::RoomProbe>> {
        match &mut self.0 {
            Backend::Lite(_) => Ok(None),
            Backend::Pg(room) => room.probe().map(Some),
        }
    }

    /// The SQLite store `data_dir` keeps for the workspace, whatever room is connected (for
    /// `acc room push`).
    pub fn open_local(data_dir: &Path, workspace_id: &str) -> StoreResult<Option<Self>> {
        Ok(Lite::open_existing(data_dir, workspace_id)?.map(|s| Self(Backend::Lite(s))))
    }

    /// A waker for the followers of this store ([`crate::wake`]): the room's notifications,
    /// heard on a connection of its own, or the SQLite file's changes.
    pub fn waker(&self) -> StoreResult<crate::wake::Waker> {
        match &self.0 {
            Backend::Lite(lite) => crate::wake::Waker::file(&lite.path),
            Backend::Pg(room) => room.waker(),
        }
    }

    /// The SQLite connection, for the store's unit tests.
    #[cfg(test)]
    pub(crate) fn sqlite(&self) -> &rusqlite::Connection {
        match &self.0 {
            Backend::Lite(lite) => &lite.conn,
            Backend::Pg(_) => panic!("a unit test's store is SQLite"),
        }
    }

    /// Where the store lives, for people: the SQLite file's path, or `postgres://host/db`.
    pub fn location(&self) -> String {
        match &self.0 {
            Backend::Lite(lite) => lite.path.display().to_string(),
            Backend::Pg(room) => format!("postgres://{}", room.name()),
        }
    }

    /// Refresh the presence of the open session `session_id` at its `generation` to `now`.
    /// On SQLite, one write now. On a room, a statement of its own sent ahead of the next round
    /// trip and answered with it (no transaction and no lock: it only moves one row's time
    /// forward), so it costs no round trip; [`Self::presence_refreshed`] then says whether it
    /// found the session.
    pub fn refresh_presence(
        &mut self,
        session_id: &str,
        generation: i64,
        now: Millis,
    ) -> StoreResult<()> {
        match &mut self.0 {
            Backend::Lite(_) => {
                let found = self.write(|w| w.touch_open_generation(session_id, generation, now))?;
                if let Backend::Lite(lite) = &mut self.0 {
                    lite.presence_refreshed = Some(found);
                }
                Ok(())
            }
            Backend::Pg(room) => room.refresh_presence(session_id, generation, now),
        }
    }

    /// Whether the last presence refresh found its session open at its generation; `None` when
    /// none was answered since the last ask. Taken.
    pub fn presence_refreshed(&mut self) -> Option<bool> {
        match &mut self.0 {
            Backend::Lite(lite) => lite.presence_refreshed.take(),
            Backend::Pg(room) => room.presence_refreshed(),
        }
    }

    /// Round trips to a room's server so far (its connections' start-ups not counted); 0 for
    /// the SQLite store.
    pub fn round_trips(&self) -> u64 {
        match &self.0 {
            Backend::Lite(_) => 0,
            Backend::Pg(room) => room.round_trips(),
        }
    }

    /// How far the room's server clock is ahead of this machine's system clock; `None` for the
    /// SQLite store (whose clock is this machine's).
    pub fn server_clock_offset_ms(&self) -> Option<i64> {
        match &self.0 {
            Backend::Lite(_) => None,
            Backend::Pg(room) => Some(room.clock_offset_ms()),
        }
    }

    /// The SQLite file; `None` for a room on PostgreSQL.
    pub fn path(&self) -> Option<&Path> {
        match &self.0 {
            Backend::Lite(lite) => Some(&lite.path),
            Backend::Pg(_) => None,
        }
    }

    /// The store's layout.
    pub fn layout(&self) -> &layout::Layout {
        match &self.0 {
            Backend::Lite(lite) => &lite.layout,
            Backend::Pg(room) => room.layout(),
        }
    }

    /// Run `f` in a write transaction (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: the room's
    /// writers' lock); commit when it returns `Ok`. The closure's error type is the caller's
    /// (a protocol rule it checks is not a store error); store failures convert into it.
    pub fn write<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        match &mut self.0 {
            Backend::Lite(lite) => lite.write(f),
            Backend::Pg(room) => {
                let layout = room.layout().effective();
                room.transaction(false, |conn| f(&mut Writer { conn, layout }))
            }
        }
    }

    /// Run `f` in a read transaction (one consistent snapshot).
    pub fn read<T, E: From<StoreError>>(
        &mut self,
        f: impl FnOnce(&Reader<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        match &mut self.0 {
            Backend::Lite(lite) => lite.read(f),
            Backend::Pg(room) => {
                let layout = room.layout().effective();
                room.transaction(true, |conn| f(&Reader { conn, layout }))
            }
        }
    }

    /// The backend's own integrity check, for doctor and tests: SQLite's `integrity_check`
    /// (`ok` when whole); on PostgreSQL, which keeps its own pages whole, whether the room
    /// answers a read of its records.
    pub fn integrity_check(&mut self) -> StoreResult<String> {
        match &mut self.0 {
            Backend::Lite(lite) => lite.integrity_check(),
            Backend::Pg(_) => {
                self.read(|r| r.head_seq())?;
                Ok("ok".to_string())
            }
        }
    }

    /// See [`Lite::upgrade_if_alone`]. A room on PostgreSQL is upgraded at the first write-open
    /// whoever else uses it (its steps keep older builds working; see `Room::upgrade`); one
    /// that cannot be (a table busy for more than a second, a lost connection) stays on its
    /// layout, and the next write-open tries again.
    pub fn upgrade_if_alone(&mut self) -> Option<layout::Plan> {
        match &mut self.0 {
            Backend::Lite(lite) => lite.upgrade_if_alone(),
            Backend::Pg(room) => {
                if !layout::automatic_upgrades()
                    || room.layout().revision >= layout::LAYOUT_REVISION
                {
                    return None;
                }
                let done = room.upgrade().ok().flatten();
                if let Some(plan) = &done {
                    layout::record_automatic(plan.clone());
                }
                done
            }
        }
    }

    /// The pending upgrade's plan, if one is pending.
    pub fn upgrade_plan(&self) -> StoreResult<Option<layout::Plan>> {
        match &self.0 {
            Backend::Lite(lite) => lite.upgrade_plan(),
            Backend::Pg(room) => room.upgrade_plan(),
        }
    }

    /// Upgrade the store to this build's layout (see the layout module).
    pub fn upgrade(&mut self) -> StoreResult<Option<layout::Plan>> {
        match &mut self.0 {
            Backend::Lite(lite) => lite.upgrade(),
            Backend::Pg(room) => room.upgrade(),
        }
    }

    /// The plan of a downgrade to revision `to`.
    pub fn downgrade_plan(&self, to: i64) -> StoreResult<layout::Plan> {
        match &self.0 {
            Backend::Lite(lite) => lite.downgrade_plan(to),
            Backend::Pg(room) => Err(room.no_downgrade()),
        }
    }

    /// Take the store back to layout revision `to` (see the layout module).
    pub fn downgrade(&mut self, to: i64) -> StoreResult<layout::Plan> {
        match &mut self.0 {
            Backend::Lite(lite) => lite.downgrade(to),
            Backend::Pg(room) => Err(room.no_downgrade()),
        }
    }
}

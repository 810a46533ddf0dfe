//! What a room says of itself (its server, a round trip, how its connection travels) and a
//! presence refresh sent ahead of the next round trip.

use super::Room;
use crate::db::PgSession;
use crate::pg::error;
use crate::{Millis, StoreResult};

impl Room {
    /// The server's version, the median of three `SELECT 1` round trips, and how the
    /// connection travels.
    pub(crate) fn probe(&mut self) -> StoreResult<crate::RoomProbe> {
        let name = self.name.clone();
        let local = self.is_local();
        let mode = self.tls.mode.as_str();
        let checked = self.tls.checked.clone();
        let session = self.session()?;
        let version = session
            .with(async |c| c.query_one("SHOW server_version", &[]).await)
            .map_err(|e| error(&name, &e))?
            .get::<_, String>(0);
        let mut trips = Vec::new();
        for _ in 0..3 {
            let started = std::time::Instant::now();
            session
                .with(async |c| c.simple_query("SELECT 1").await)
                .map_err(|e| error(&name, &e))?;
            trips.push(started.elapsed());
        }
        trips.sort();
        let encrypted = session.encrypted();
        Ok(crate::RoomProbe {
            server_version: version,
            round_trip: trips[1],
            encrypted,
            local,
            ssl_mode: mode,
            transport: if encrypted {
                checked.words()
            } else if local {
                "plain text on this machine (a Unix socket or loopback)".to_string()
            } else {
                format!("NOT ENCRYPTED: plain text across the network (sslmode={mode})")
            },
        })
    }

    /// Whether every host of the room is a Unix socket or loopback.
    fn is_local(&self) -> bool {
        self.config.get_hosts().iter().all(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => {
                name == "localhost"
                    || name
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            }
            tokio_postgres::config::Host::Unix(_) => true,
        })
    }

    /// Send a presence refresh ahead of the next round trip ([`crate::Store::refresh_presence`]);
    /// when it cannot go ahead (an argument without a type of its own: never), it is made now.
    pub(crate) fn refresh_presence(
        &mut self,
        session_id: &str,
        generation: i64,
        now: Millis,
    ) -> StoreResult<()> {
        let session = self.session()?;
        let args = crate::db::args![session_id, now, generation];
        if session.autocommit_ahead(crate::ops::TOUCH_OPEN_GENERATION, args) {
            return Ok(());
        }
        let layout = self.layout.effective();
        let found = self.transaction(false, |conn| {
            crate::Writer { conn, layout }.touch_open_generation(session_id, generation, now)
        })?;
        self.refreshed = Some(found);
        Ok(())
    }

    /// Whether the last presence refresh found its session; taken.
    pub(crate) fn presence_refreshed(&mut self) -> Option<bool> {
        let answered = self.session.as_ref().and_then(PgSession::autocommitted);
        answered.or_else(|| self.refreshed.take())
    }
}

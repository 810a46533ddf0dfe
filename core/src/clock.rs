//! The one injectable clock every time-dependent rule reads (leases, presence, repeats).
//!
//! Production code reads [`SystemClock`]. Tests inject a [`FixedClock`] in-process, or move a real
//! process's clock with the documented test variable `ACC_TEST_CLOCK_OFFSET_SECONDS`, which the
//! host reads (the core reads no environment).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the Unix epoch, UTC.
pub type Millis = i64;

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// Now, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> Millis;

    /// Now on a room's server, whose clock is `offset_ms` ahead of this machine's system
    /// clock; `None` for a clock that does not follow the system's (a test's), which a room
    /// then leaves alone.
    fn on_server(&self, offset_ms: i64) -> Option<Millis> {
        let _ = offset_ms;
        None
    }
}

/// The system clock, optionally shifted by a fixed offset (for end-to-end tests).
#[derive(Debug, Clone, Default)]
pub struct SystemClock {
    offset_ms: i64,
}

impl SystemClock {
    /// The system clock shifted by `seconds` (end-to-end tests move a real process's clock;
    /// the host reads the offset from its environment).
    pub fn shifted_by_seconds(seconds: i64) -> Self {
        Self {
            offset_ms: seconds.saturating_mul(1000),
        }
    }
}

impl SystemClock {
    fn system_ms() -> Millis {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        Self::system_ms() + self.offset_ms
    }

    /// The server's time: a machine whose clock is off (or a test's shifted one) reads the
    /// room's clock like every other machine of the room.
    fn on_server(&self, offset_ms: i64) -> Option<Millis> {
        Some(Self::system_ms() + offset_ms)
    }
}

/// A clock that tests set and move explicitly.
#[derive(Debug, Clone)]
pub struct FixedClock {
    now: Arc<AtomicI64>,
}

impl FixedClock {
    /// A clock standing at `now_ms`.
    pub fn new(now_ms: Millis) -> Self {
        Self {
            now: Arc::new(AtomicI64::new(now_ms)),
        }
    }

    /// Move the clock forward (or back) by `delta_ms`.
    pub fn advance(&self, delta_ms: i64) {
        self.now.fetch_add(delta_ms, Ordering::SeqCst);
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> Millis {
        self.now.load(Ordering::SeqCst)
    }
}

/// Render a timestamp as RFC 3339 UTC with milliseconds (`2026-11-29T19:32:28.123Z`).
pub fn format_timestamp(ms: Millis) -> String {
    match chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms) {
        // The direct formatter: strftime would parse its pattern on every call.
        Some(time) => time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        None => format!("@{ms}"),
    }
}

/// The milliseconds of an RFC 3339 timestamp (as [`format_timestamp`] writes them); `None` when
/// `text` is not one.
pub fn parse_timestamp(text: &str) -> Option<Millis> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|time| time.timestamp_millis())
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(super::format_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::format_timestamp(1_795_982_968_123),
            "2026-11-29T20:09:28.123Z"
        );
        assert_eq!(
            super::parse_timestamp("2026-11-29T20:09:28.123Z"),
            Some(1_795_982_968_123)
        );
        assert_eq!(super::parse_timestamp("yesterday"), None);
    }
}

//! The system clock as the host builds it, shifted by the documented test variable
//! `ACC_TEST_CLOCK_OFFSET_SECONDS`, read from the environment here because the core reads none.

use acc_core::clock::SystemClock;
use acc_core::error::{AccError, AccResult};

/// The system clock, shifted by `ACC_TEST_CLOCK_OFFSET_SECONDS` when set.
pub fn system_from_env() -> AccResult<SystemClock> {
    match std::env::var("ACC_TEST_CLOCK_OFFSET_SECONDS") {
        Ok(value) => {
            let seconds: i64 = value.trim().parse().map_err(|_| {
                AccError::usage(format!(
                    "ACC_TEST_CLOCK_OFFSET_SECONDS must be a whole number of seconds, got `{value}`"
                ))
            })?;
            Ok(SystemClock::shifted_by_seconds(seconds))
        }
        Err(_) => Ok(SystemClock::default()),
    }
}

//! Time comes from a [`Clock`] so tests can set it (token expiry now; message windows and
//! the 180-day purge later). Times are truncated to microseconds because PostgreSQL stores no
//! finer, and a value must read back equal on both databases.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time, truncated to whole microseconds.
    fn now(&self) -> DateTime<Utc>;
}

/// Truncates a time to whole microseconds.
pub(crate) fn truncate_to_micros(time: DateTime<Utc>) -> DateTime<Utc> {
    time.duration_trunc(TimeDelta::microseconds(1))
        .unwrap_or(time)
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        truncate_to_micros(Utc::now())
    }
}

/// A clock tests move by hand.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Arc::new(Mutex::new(truncate_to_micros(start))),
        }
    }

    /// Moves the clock by `delta` (may be negative).
    pub fn advance(&self, delta: TimeDelta) {
        if let Ok(mut now) = self.now.lock() {
            *now = truncate_to_micros(*now + delta);
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.now
            .lock()
            .map(|now| *now)
            .unwrap_or_else(|_| Utc::now())
    }
}

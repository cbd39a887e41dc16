//! `[credits]`: how long reservations may hold credits, and how often expiries and timeouts
//! are settled for pools nobody reads (docs/credits.md).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::values::{AtLeast, as_seconds};

/// Credits: how long reservations may hold credits, and how often expiries and timeouts are
/// settled for pools nobody reads.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CreditsConfig {
    /// Timeout of a reservation that names none, in seconds; 0 for none (it holds its credits
    /// until spent or released). At most `reservation_timeout_max_seconds`.
    pub reservation_timeout_default_seconds: u64,
    /// Longest timeout a reservation may ask for, in seconds (default 90 days).
    pub reservation_timeout_max_seconds: u64,
    /// How often each process settles expiries and reservation timeouts
    /// (`settle_interval_seconds`, in seconds, at least 1).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<1>::seconds"
    )]
    pub settle_interval_seconds: Duration,
}

impl Default for CreditsConfig {
    fn default() -> Self {
        Self {
            reservation_timeout_default_seconds: 0,
            reservation_timeout_max_seconds: 90 * 24 * 3600,
            settle_interval_seconds: Duration::from_secs(60),
        }
    }
}

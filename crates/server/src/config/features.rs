//! `[features]`: how long expired feature status messages are kept, and how the banner is
//! cached (docs/features.md).

use std::num::NonZeroU32;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::values::{AtLeast, as_millis, as_seconds, count_u32};

/// Feature status messages: how long expired ones are kept, and how the banner is cached
/// (docs/features.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeaturesConfig {
    /// Expired messages are removed this many days after their `expiringDate`.
    pub message_retention_days: u32,
    /// How often each process runs the retention job (`retention_interval_seconds`, in
    /// seconds, at least 1; at most the retention when that is a day or more).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<1>::seconds"
    )]
    pub retention_interval_seconds: Duration,
    /// How long a process answers the banner from memory before it reads the store again
    /// (`banner_refresh_ms`, in milliseconds): the delay after which a change made through
    /// another replica shows. Changes made through this process show at once. Zero reads the
    /// store on every request.
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<0>::millis"
    )]
    pub banner_refresh_ms: Duration,
    /// `max-age` of banner answers in seconds, never beyond the next start or end of a
    /// message; 0 answers `no-cache` (clients revalidate with `If-None-Match` every time).
    pub banner_max_age_seconds: u64,
    /// Not yet expired messages of one feature (and of the global set) the banner considers,
    /// those starting soonest; at least 1.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub banner_messages_max: NonZeroU32,
}

impl Default for FeaturesConfig {
    fn default() -> Self {
        Self {
            message_retention_days: 30,
            retention_interval_seconds: Duration::from_secs(3600),
            banner_refresh_ms: Duration::from_millis(1000),
            banner_max_age_seconds: 0,
            banner_messages_max: count_u32(1000),
        }
    }
}

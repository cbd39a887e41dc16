//! `[recycle_bin]`: how long removed items stay in the bin and how the purge runs
//! (docs/recycle-bin.md).

use std::num::NonZeroU32;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::values::{AtLeast, as_seconds, count_u32};

/// The recycle bin (docs/recycle-bin.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecycleBinConfig {
    /// Items in the bin longer than this many days are removed for good (spec: 180).
    pub retention_days: u32,
    /// How often each process looks for items past retention (`retention_check_seconds`, in
    /// seconds, at least 1; at most the retention when that is a day or more).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<1>::seconds"
    )]
    pub retention_check_seconds: Duration,
    /// Rows one purge transaction removes at most (at least 1): a large project is removed
    /// in several.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub purge_batch_size: NonZeroU32,
}

impl Default for RecycleBinConfig {
    fn default() -> Self {
        Self {
            retention_days: 180,
            retention_check_seconds: Duration::from_secs(3600),
            purge_batch_size: count_u32(500),
        }
    }
}

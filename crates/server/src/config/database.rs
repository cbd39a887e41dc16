//! `[database]`: the sqlx pool of each process.

use std::num::NonZeroU32;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::values::{AtLeast, as_millis, count_u32};
use crate::limits;

/// Database pool settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// Connections per process, at least 1.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub max_connections: NonZeroU32,
    /// How long a request waits for a connection (`acquire_timeout_ms`, in milliseconds).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<0>::millis"
    )]
    pub acquire_timeout_ms: Duration,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            max_connections: count_u32(limits::DB_CONNECTIONS_MAX),
            acquire_timeout_ms: Duration::from_millis(limits::DB_ACQUIRE_TIMEOUT_MS),
        }
    }
}

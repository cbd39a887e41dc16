//! `[edr]`: how much one EDR query may ask for, and how much memory the described datasets of
//! each process may hold (docs/edr.md#limits).

use std::num::NonZeroUsize;

use serde::{Deserialize, Serialize};

use super::values::{AtLeast, count_usize};

/// EDR queries: their limits and the cache of described datasets (docs/edr.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EdrConfig {
    /// Most positions one query's geometry may hold (points of a MULTIPOINT, vertices of a
    /// line or polygon); more is 413 `answer-too-large`.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub positions_max: NonZeroUsize,
    /// Most values one answer may hold (positions or cells x parameters x steps); more is 413
    /// `answer-too-large`.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub values_max: NonZeroUsize,
    /// Megabytes of described datasets (headers, time axes, mesh geometry and its index) each
    /// process keeps, so that a query on a file read before does not read its header again.
    pub cache_mb: u64,
}

impl Default for EdrConfig {
    fn default() -> Self {
        let limits = basin_edr::Limits::default();
        Self {
            positions_max: count_usize(limits.positions_max),
            values_max: count_usize(limits.values_max),
            cache_mb: 256,
        }
    }
}

impl EdrConfig {
    /// The limits basin-edr applies.
    pub(crate) fn limits(&self) -> basin_edr::Limits {
        basin_edr::Limits {
            positions_max: self.positions_max.get(),
            values_max: self.values_max.get(),
        }
    }

    /// The cache budget in bytes.
    pub(crate) fn cache_bytes(&self) -> usize {
        usize::try_from(self.cache_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
    }
}

//! `[tiles]`: how much memory the tile caches of each process may hold, how long clients may
//! keep tiles, and how stored pyramids are rendered (docs/tiles.md).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::values::{AtLeast, as_millis, as_seconds};

/// Tiles: how much memory the caches of each process may hold, and how long clients may keep
/// tiles (docs/tiles.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TilesConfig {
    /// Megabytes of encoded tiles kept in memory.
    pub tile_cache_mb: u64,
    /// Megabytes of loaded data (one item, step and layer of a dataset, as 32-bit floats with
    /// overviews) kept in memory. A band larger than this is loaded for each tile it draws.
    pub band_cache_mb: u64,
    /// `Cache-Control: private, max-age` of tiles, in seconds. Clients revalidate with
    /// `If-None-Match` after it.
    pub max_age_seconds: u32,
    /// Most tiles one tiles dataset may ask to store (`storedZoomLevels`): the tiles of the
    /// stored levels that meet the data's extent, times its steps and layers. A definition
    /// over it is refused (422 `too-many-stored-tiles`); 0 refuses every stored level.
    pub stored_tiles_max: u64,
    /// Whether `basin serve` processes render stored pyramids (`basin worker` processes always
    /// do): off keeps the drawing off the processes that answer requests.
    pub serve_renders_pyramids: bool,
    /// How long a pyramid's renderer holds it without renewing (`pyramid_lease_seconds`, in
    /// seconds, at least 1; renewed every sixth of it); a crashed renderer's pyramid waits
    /// this long, and so does one after a fault.
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<1>::seconds"
    )]
    pub pyramid_lease_seconds: Duration,
    /// How often an idle renderer looks for pyramids queued by another process
    /// (`pyramid_poll_ms`, in milliseconds, at least 10; one queued by the same process wakes
    /// it at once).
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<10>::millis"
    )]
    pub pyramid_poll_ms: Duration,
}

impl Default for TilesConfig {
    fn default() -> Self {
        Self {
            tile_cache_mb: 256,
            band_cache_mb: 1024,
            max_age_seconds: 60,
            stored_tiles_max: 100_000,
            serve_renders_pyramids: true,
            pyramid_lease_seconds: Duration::from_secs(60),
            pyramid_poll_ms: Duration::from_millis(5000),
        }
    }
}

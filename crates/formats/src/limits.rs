//! Bounds on what a reader accepts, so that a hostile or broken file cannot make Basin
//! allocate without limit or loop forever.
//!
//! Readers check every count that comes from a file header against these limits *before*
//! allocating for it, and never pre-allocate more than [`PREALLOC_BYTES_MAX`] from an untrusted
//! count: buffers grow as data actually arrives. Work that can grow faster than its input (the
//! triangulation of a polygon) has a limit here too, so that a small crafted file cannot take
//! minutes of CPU.

use crate::error::{FormatError, FormatResult};

/// The most bytes a reader reserves up front from a count found in a file. Beyond this,
/// vectors grow as the data is actually read, so a header that lies about its size costs
/// at most this much.
pub const PREALLOC_BYTES_MAX: usize = 16 * 1024 * 1024;

/// The most work a polygon's triangulation (features -> mesh) may take per vertex of its rings,
/// in reads of a vertex position by the triangulation's predicates (deterministic, unlike
/// time). Ordinary polygons need 50 to 150 per vertex (real block groups and wilderness areas
/// 50 to 80, a 400,000-vertex coastline 140, a 20,000-vertex ring nearly on one circle 73),
/// growing only with the logarithm of their size; polygons whose ring edges each cross very
/// many triangles need work growing with the square of the vertices (a 3,000-vertex one
/// 3,750 per vertex, 10 s in a debug build). 1,000 leaves ordinary polygons six times their
/// need and stops quadratic ones after at most seven times what an ordinary polygon of their
/// size costs, instead of after minutes. Per vertex rather than per polygon, so that a large
/// real polygon (a coastline) is never refused for its size alone.
pub const TRIANGULATION_WORK_PER_VERTEX_MAX: u64 = 1_000;

/// Limits applied by every reader. The defaults suit a server converting user uploads;
/// the CLI uses the same defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Most cells of one grid layer (columns x rows): 4 x 10^9 (a 64k x 64k raster).
    pub grid_cells_max: u64,
    /// Most items (bands, variables) in one dataset.
    pub items_max: u64,
    /// Most time steps.
    pub time_steps_max: u64,
    /// Most nodes of a mesh.
    pub mesh_nodes_max: u64,
    /// Most elements of a mesh.
    pub mesh_elements_max: u64,
    /// Most vertices of a single geometry.
    pub vertices_per_geometry_max: u64,
    /// Most attribute fields of a feature collection.
    pub fields_max: u64,
    /// Most bytes of a single line of a text format.
    pub line_bytes_max: u64,
    /// Most nesting depth of nested structures (GeoJSON geometry collections).
    pub nesting_depth_max: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            grid_cells_max: 4_294_967_296,
            items_max: 10_000,
            time_steps_max: 100_000_000,
            mesh_nodes_max: 100_000_000,
            mesh_elements_max: 100_000_000,
            vertices_per_geometry_max: 100_000_000,
            fields_max: 10_000,
            line_bytes_max: 64 * 1024 * 1024,
            nesting_depth_max: 64,
        }
    }
}

/// Fails with [`FormatError::LimitExceeded`] when `actual > limit`.
pub fn check_limit(what: &'static str, actual: u64, limit: u64) -> FormatResult<()> {
    if actual > limit {
        return Err(FormatError::LimitExceeded {
            what,
            actual,
            limit,
        });
    }
    Ok(())
}

/// The capacity to reserve for `count` elements of `element_bytes` each, capped at
/// [`PREALLOC_BYTES_MAX`].
pub fn prealloc_capacity(count: u64, element_bytes: usize) -> usize {
    let cap = PREALLOC_BYTES_MAX / element_bytes.max(1);
    usize::try_from(count).unwrap_or(usize::MAX).min(cap)
}

//! What a raster tile is rendered from: anything that gives a value at a map position.
//!
//! Grids ([`crate::raster`]) and meshes ([`crate::mesh`]) both implement [`Field`], so the
//! renderer neither knows nor cares which it draws; it asks for the values at the pixel centres
//! of a tile, already moved into the field's own coordinate system.

use crate::tms::Bounds;

/// A scalar field in its own coordinate system.
pub trait Field: Send + Sync {
    /// The area where the field may have values, in its coordinate system.
    fn extent(&self) -> Bounds;

    /// Writes into `out[i]` the value at `points[i]` (x, y in the field's coordinate system),
    /// or NaN where the field has none (outside, or no data). `pixel_size` is about how much
    /// of the field one output pixel covers, in map units, so a field with overviews can pick
    /// the level that matches. `points` and `out` have the same length.
    fn sample(&self, points: &[[f64; 2]], pixel_size: f64, out: &mut [f32]);
}

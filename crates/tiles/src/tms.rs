//! Tile matrix sets: how a coordinate system is cut into tiles at each zoom level.
//!
//! Two kinds exist. [`TileMatrixSet::web_mercator_quad`] is WebMercatorQuad of OGC 17-083r4
//! (the XYZ scheme of every web map): EPSG:3857, one tile at level 0, twice as many per axis at
//! each level. [`TileMatrixSet::native`] cuts a dataset's own coordinate system so that level 0
//! holds the whole extent in one tile and the finest level shows one source cell per pixel, so a
//! WMTS client gets the data without reprojection.
//!
//! Cell sizes are computed from the level each time (never accumulated by halving), so level 24
//! is as exact as level 0. Scale denominators use the standardized rendering pixel of 0.28 mm.

/// A rectangle in map units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Smallest x.
    pub min_x: f64,
    /// Smallest y.
    pub min_y: f64,
    /// Largest x.
    pub max_x: f64,
    /// Largest y.
    pub max_y: f64,
}

impl Bounds {
    /// Width in map units.
    pub fn width(&self) -> f64 {
        self.max_x - self.min_x
    }

    /// Height in map units.
    pub fn height(&self) -> f64 {
        self.max_y - self.min_y
    }

    /// True when the two overlap with a positive area.
    pub fn intersects(&self, other: &Bounds) -> bool {
        self.min_x < other.max_x
            && other.min_x < self.max_x
            && self.min_y < other.max_y
            && other.min_y < self.max_y
    }

    /// True when every coordinate is finite and the rectangle is not inverted.
    pub fn is_valid(&self) -> bool {
        [self.min_x, self.min_y, self.max_x, self.max_y]
            .iter()
            .all(|value| value.is_finite())
            && self.min_x <= self.max_x
            && self.min_y <= self.max_y
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, other: &Bounds) -> Bounds {
        Bounds {
            min_x: self.min_x.min(other.min_x),
            min_y: self.min_y.min(other.min_y),
            max_x: self.max_x.max(other.max_x),
            max_y: self.max_y.max(other.max_y),
        }
    }
}

/// Radius of the sphere of EPSG:3857, in metres.
pub const WEB_MERCATOR_RADIUS: f64 = 6_378_137.0;

/// Half the width of the EPSG:3857 world, in metres (20037508.3427892...).
pub const WEB_MERCATOR_HALF_WORLD: f64 = std::f64::consts::PI * WEB_MERCATOR_RADIUS;

/// Latitude limit of WebMercatorQuad: where the square world ends (85.0511287798...).
pub fn web_mercator_max_latitude() -> f64 {
    (2.0 * std::f64::consts::PI.exp().atan() - std::f64::consts::FRAC_PI_2).to_degrees()
}

/// The size of a standardized rendering pixel, in metres (OGC WMTS 1.0.0, 6.1).
pub const STANDARD_PIXEL_METRES: f64 = 0.00028;

/// Metres per degree on the equator of the WGS 84 ellipsoid's semi-major axis, which OGC uses
/// to give geographic matrix sets a scale denominator.
pub const METRES_PER_DEGREE: f64 = 2.0 * std::f64::consts::PI * WEB_MERCATOR_RADIUS / 360.0;

/// The deepest level a matrix set may have: 2^30 tiles per axis still fit a `u32`, and cells
/// of WebMercatorQuad level 30 are 0.15 mm.
pub const MAX_LEVEL: u8 = 30;

/// One zoom level of a matrix set.
#[derive(Debug, Clone, PartialEq)]
pub struct TileMatrix {
    /// Identifier, the level as text (`"0"`, `"1"`, ...).
    pub id: String,
    /// The level.
    pub level: u8,
    /// Map units per pixel.
    pub cell_size: f64,
    /// Scale denominator at 0.28 mm pixels.
    pub scale_denominator: f64,
    /// x of the outer top-left corner of tile (0, 0).
    pub top_left_x: f64,
    /// y of the outer top-left corner of tile (0, 0).
    pub top_left_y: f64,
    /// Pixels per tile across.
    pub tile_width: u32,
    /// Pixels per tile down.
    pub tile_height: u32,
    /// Tiles across.
    pub matrix_width: u32,
    /// Tiles down.
    pub matrix_height: u32,
}

impl TileMatrix {
    /// True when (row, col) names a tile of this matrix.
    pub fn contains(&self, row: u32, col: u32) -> bool {
        row < self.matrix_height && col < self.matrix_width
    }

    /// The map rectangle of tile (row, col), or `None` outside the matrix.
    pub fn tile_bounds(&self, row: u32, col: u32) -> Option<Bounds> {
        if !self.contains(row, col) {
            return None;
        }
        let span_x = self.cell_size * f64::from(self.tile_width);
        let span_y = self.cell_size * f64::from(self.tile_height);
        // Each edge from its own index, so neighbours share edges exactly.
        Some(Bounds {
            min_x: self.top_left_x + f64::from(col) * span_x,
            min_y: self.top_left_y - f64::from(row + 1) * span_y,
            max_x: self.top_left_x + f64::from(col + 1) * span_x,
            max_y: self.top_left_y - f64::from(row) * span_y,
        })
    }

    /// The map position of the centre of pixel (column, row) of tile (tile_row, tile_col).
    pub fn pixel_centre(&self, tile_row: u32, tile_col: u32, column: u32, row: u32) -> (f64, f64) {
        let x = self.top_left_x
            + (f64::from(tile_col) * f64::from(self.tile_width) + f64::from(column) + 0.5)
                * self.cell_size;
        let y = self.top_left_y
            - (f64::from(tile_row) * f64::from(self.tile_height) + f64::from(row) + 0.5)
                * self.cell_size;
        (x, y)
    }

    /// The first and last tile rows and columns that overlap `bounds`, clamped to the matrix;
    /// `None` when nothing overlaps. Returns `(min_row, min_col, max_row, max_col)`.
    pub fn tiles_covering(&self, bounds: &Bounds) -> Option<(u32, u32, u32, u32)> {
        let span_x = self.cell_size * f64::from(self.tile_width);
        let span_y = self.cell_size * f64::from(self.tile_height);
        let first_col = ((bounds.min_x - self.top_left_x) / span_x).floor();
        let last_col = ((bounds.max_x - self.top_left_x) / span_x).ceil() - 1.0;
        let first_row = ((self.top_left_y - bounds.max_y) / span_y).floor();
        let last_row = ((self.top_left_y - bounds.min_y) / span_y).ceil() - 1.0;
        let width = f64::from(self.matrix_width);
        let height = f64::from(self.matrix_height);
        if !(last_col >= 0.0 && last_row >= 0.0 && first_col < width && first_row < height) {
            return None;
        }
        let clamp = |value: f64, size: f64| value.clamp(0.0, size - 1.0) as u32;
        Some((
            clamp(first_row, height),
            clamp(first_col, width),
            clamp(last_row.max(first_row), height),
            clamp(last_col.max(first_col), width),
        ))
    }
}

/// The coordinate system of a matrix set, as the capabilities document names it.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixSetCrs {
    /// EPSG code, when the system has one.
    pub epsg: Option<u32>,
    /// True for geographic systems (degrees, latitude first in EPSG's axis order).
    pub geographic: bool,
    /// Metres per map unit (1 for metres; [`METRES_PER_DEGREE`] for degrees).
    pub metres_per_unit: f64,
}

/// A tile matrix set: one [`TileMatrix`] per level, from level 0 up.
#[derive(Debug, Clone, PartialEq)]
pub struct TileMatrixSet {
    /// Identifier (`WebMercatorQuad`, or the scheme's id).
    pub id: String,
    /// Coordinate system.
    pub crs: MatrixSetCrs,
    /// The area the set covers, in its coordinate system.
    pub bounds: Bounds,
    /// The levels, level 0 first.
    pub matrices: Vec<TileMatrix>,
}

impl TileMatrixSet {
    /// WebMercatorQuad (OGC 17-083r4 annex D.1) from level 0 to `max_level`, with square tiles
    /// of `tile_size` pixels. With 512-pixel tiles each level has the same number of tiles as
    /// with 256 and cells half the size (the "retina" convention of XYZ services).
    pub fn web_mercator_quad(tile_size: u32, max_level: u8) -> Self {
        let max_level = max_level.min(MAX_LEVEL);
        let world = 2.0 * WEB_MERCATOR_HALF_WORLD;
        let matrices = (0..=max_level)
            .map(|level| {
                let tiles = 1_u32 << level;
                let cell_size = world / (f64::from(tile_size) * f64::from(tiles));
                TileMatrix {
                    id: level.to_string(),
                    level,
                    cell_size,
                    scale_denominator: cell_size / STANDARD_PIXEL_METRES,
                    top_left_x: -WEB_MERCATOR_HALF_WORLD,
                    top_left_y: WEB_MERCATOR_HALF_WORLD,
                    tile_width: tile_size,
                    tile_height: tile_size,
                    matrix_width: tiles,
                    matrix_height: tiles,
                }
            })
            .collect();
        Self {
            id: "WebMercatorQuad".to_owned(),
            crs: MatrixSetCrs {
                epsg: Some(3857),
                geographic: false,
                metres_per_unit: 1.0,
            },
            bounds: Bounds {
                min_x: -WEB_MERCATOR_HALF_WORLD,
                min_y: -WEB_MERCATOR_HALF_WORLD,
                max_x: WEB_MERCATOR_HALF_WORLD,
                max_y: WEB_MERCATOR_HALF_WORLD,
            },
            matrices,
        }
    }

    /// A matrix set in a dataset's own coordinate system: tile (0, 0) of every level starts at
    /// the top-left corner of `extent`; the finest level has `finest_cell_size` map units per
    /// pixel (the data's cell size); level 0 is the first level whose single tile holds the
    /// whole extent, and `extra_levels` more levels below the data's resolution may follow
    /// (for zooming in past one cell per pixel). `None` when the extent or cell size is not a
    /// positive finite size.
    pub fn native(
        id: &str,
        crs: MatrixSetCrs,
        extent: Bounds,
        finest_cell_size: f64,
        tile_size: u32,
        extra_levels: u8,
    ) -> Option<Self> {
        let usable_cell = finest_cell_size.is_finite() && finest_cell_size > 0.0;
        if !(extent.is_valid() && usable_cell && tile_size > 0) {
            return None;
        }
        let longest = extent.width().max(extent.height());
        let mut finest = 0_u8;
        while finest < MAX_LEVEL
            && finest_cell_size * f64::from(tile_size) * 2_f64.powi(i32::from(finest)) < longest
        {
            finest += 1;
        }
        let deepest = finest.saturating_add(extra_levels).min(MAX_LEVEL);
        let matrices = (0..=deepest)
            .map(|level| {
                let cell_size = finest_cell_size * 2_f64.powi(i32::from(finest) - i32::from(level));
                let span = cell_size * f64::from(tile_size);
                let count =
                    |length: f64| ((length / span).ceil().max(1.0)).min(f64::from(u32::MAX)) as u32;
                TileMatrix {
                    id: level.to_string(),
                    level,
                    cell_size,
                    scale_denominator: cell_size * crs.metres_per_unit / STANDARD_PIXEL_METRES,
                    top_left_x: extent.min_x,
                    top_left_y: extent.max_y,
                    tile_width: tile_size,
                    tile_height: tile_size,
                    matrix_width: count(extent.width()),
                    matrix_height: count(extent.height()),
                }
            })
            .collect();
        Some(Self {
            id: id.to_owned(),
            crs,
            bounds: extent,
            matrices,
        })
    }

    /// The level named `id` (`"3"`; also `"EPSG:3857:3"` and other `prefix:level` forms that
    /// WMTS clients build from the matrix set name).
    pub fn matrix(&self, id: &str) -> Option<&TileMatrix> {
        let level = id.rsplit(':').next().unwrap_or(id);
        self.matrices.iter().find(|matrix| matrix.id == level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * a.abs().max(b.abs())
    }

    /// The values of OGC 17-083r4, annex D.1 (WebMercatorQuad), to the digits printed there.
    #[test]
    #[allow(clippy::excessive_precision)]
    fn web_mercator_quad_matches_the_ogc_definition() {
        let set = TileMatrixSet::web_mercator_quad(256, 24);
        let expected = [
            (0, 559_082_264.028_717_8, 156_543.033_928_041_0),
            (1, 279_541_132.014_358_9, 78_271.516_964_020_48),
            (2, 139_770_566.007_179_4, 39_135.758_482_010_24),
            (10, 545_978.773_465_544_7, 152.874_056_570_355_5),
            (18, 2_132.729_583_849_784, 0.597_164_283_477_950_2),
            (24, 33.323_899_747_652_88, 0.009_330_691_929_342_971),
        ];
        for (level, scale, cell) in expected {
            let matrix = &set.matrices[level];
            assert!(close(matrix.scale_denominator, scale, 1e-12), "{level}");
            assert!(close(matrix.cell_size, cell, 1e-12), "{level}");
            assert_eq!(matrix.matrix_width, 1 << level);
            assert_eq!(matrix.matrix_height, 1 << level);
        }
        assert!(close(
            set.matrices[0].top_left_x,
            -20_037_508.342_789_2,
            1e-14
        ));
        assert!(close(
            set.matrices[0].top_left_y,
            20_037_508.342_789_2,
            1e-14
        ));
        assert!(close(
            web_mercator_max_latitude(),
            85.051_128_779_806_59,
            1e-14
        ));
    }

    #[test]
    fn tile_bounds_tile_the_world_without_gaps() {
        let set = TileMatrixSet::web_mercator_quad(256, 5);
        let matrix = &set.matrices[3];
        let left = matrix.tile_bounds(2, 3).unwrap();
        let right = matrix.tile_bounds(2, 4).unwrap();
        assert_eq!(left.max_x, right.min_x);
        let last = matrix.tile_bounds(7, 7).unwrap();
        assert!(close(last.max_x, WEB_MERCATOR_HALF_WORLD, 1e-12));
        assert!(close(last.min_y, -WEB_MERCATOR_HALF_WORLD, 1e-12));
        assert_eq!(matrix.tile_bounds(8, 0), None);
        assert_eq!(matrix.tile_bounds(0, 8), None);
        let (x, y) = matrix.pixel_centre(0, 0, 0, 0);
        assert!(close(
            x,
            -WEB_MERCATOR_HALF_WORLD + matrix.cell_size / 2.0,
            1e-12
        ));
        assert!(close(
            y,
            WEB_MERCATOR_HALF_WORLD - matrix.cell_size / 2.0,
            1e-12
        ));
    }

    #[test]
    fn native_sets_reach_the_data_resolution_and_hold_the_extent_at_level_0() {
        let crs = MatrixSetCrs {
            epsg: Some(32632),
            geographic: false,
            metres_per_unit: 1.0,
        };
        let extent = Bounds {
            min_x: 500_000.0,
            min_y: 6_000_000.0,
            max_x: 500_000.0 + 1000.0 * 30.0,
            max_y: 6_000_000.0 + 600.0 * 30.0,
        };
        let set = TileMatrixSet::native("native", crs, extent, 30.0, 256, 2).unwrap();
        // 1000 cells need 2^2 = 4 tiles of 256 at full resolution: levels 0..=2, plus 2 more.
        assert_eq!(set.matrices.len(), 5);
        assert_eq!(set.matrices[2].cell_size, 30.0);
        assert_eq!(set.matrices[2].matrix_width, 4);
        assert_eq!(set.matrices[2].matrix_height, 3);
        assert_eq!(set.matrices[0].matrix_width, 1);
        assert_eq!(set.matrices[0].matrix_height, 1);
        assert_eq!(set.matrices[4].cell_size, 7.5);
        assert!(close(
            set.matrices[2].scale_denominator,
            30.0 / 0.00028,
            1e-12
        ));
        assert_eq!(set.matrix("EPSG:32632:2"), Some(&set.matrices[2]));
        assert_eq!(set.matrix("9"), None);
        assert!(TileMatrixSet::native("n", set.crs.clone(), extent, 0.0, 256, 0).is_none());
    }

    #[test]
    fn tiles_covering_a_rectangle() {
        let set = TileMatrixSet::web_mercator_quad(256, 4);
        let matrix = &set.matrices[1];
        let everything = set.bounds;
        assert_eq!(matrix.tiles_covering(&everything), Some((0, 0, 1, 1)));
        let north_east = Bounds {
            min_x: 1.0,
            min_y: 1.0,
            max_x: 2.0,
            max_y: 2.0,
        };
        assert_eq!(matrix.tiles_covering(&north_east), Some((0, 1, 0, 1)));
        let outside = Bounds {
            min_x: 3.0e7,
            min_y: 0.0,
            max_x: 3.1e7,
            max_y: 1.0,
        };
        assert_eq!(matrix.tiles_covering(&outside), None);
    }
}

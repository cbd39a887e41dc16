//! Sampling a tile: the value under the centre of each pixel, moved into the field's own
//! coordinate system.
//!
//! Transforming each of a tile's 65,536 pixel centres exactly costs more than everything else a
//! tile needs (a transverse Mercator step is about 0.2 µs), so, like GDAL's approximate
//! transformer, positions are computed exactly on a lattice every [`BLOCK`] pixels and
//! interpolated bilinearly between, and every block is checked at its centre: where the
//! interpolated position is off by more than [`TOLERANCE_PIXELS`] of a pixel, that block is
//! transformed exactly, pixel by pixel. A tile thus costs 289 exact transforms when the
//! projection is smooth over the tile (nearly always) and never places a pixel more than a
//! hundredth of a pixel from where the exact transform would.
//!
//! Web Mercator to longitude and latitude is separable (longitude depends on x only, latitude
//! on y only), so for geographic fields the exact positions cost 512 evaluations and need no
//! lattice at all.

use basin_formats::crs::CrsTransform;

use crate::field::Field;
use crate::tms::{TileMatrix, WEB_MERCATOR_RADIUS};

/// Lattice spacing of the approximate transform, in pixels.
pub const BLOCK: u32 = 16;

/// How far an interpolated position may be from the exact one, in output pixels.
pub const TOLERANCE_PIXELS: f64 = 0.01;

/// How tile positions reach the field's coordinate system.
#[derive(Debug, Clone)]
pub enum Reprojection {
    /// The tile matrix set is in the field's coordinate system.
    Identity,
    /// Tiles are in EPSG:3857 and the field in longitude and latitude (degrees, WGS 84).
    WebMercatorToGeographic,
    /// Tiles are in EPSG:3857; positions go to longitude and latitude, then through the
    /// transform (from EPSG:4326 to the field's system).
    WebMercatorThrough(Box<CrsTransform>),
}

impl Reprojection {
    /// The field position of tile position (x, y), exactly.
    pub fn apply(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        match self {
            Self::Identity => Some((x, y)),
            Self::WebMercatorToGeographic => Some((mercator_longitude(x), mercator_latitude(y))),
            Self::WebMercatorThrough(transform) => {
                transform.try_apply(mercator_longitude(x), mercator_latitude(y))
            }
        }
    }
}

/// Longitude in degrees of EPSG:3857 x.
pub fn mercator_longitude(x: f64) -> f64 {
    (x / WEB_MERCATOR_RADIUS).to_degrees()
}

/// Latitude in degrees of EPSG:3857 y.
pub fn mercator_latitude(y: f64) -> f64 {
    (y / WEB_MERCATOR_RADIUS).sinh().atan().to_degrees()
}

/// EPSG:3857 (x, y) of a longitude and latitude in degrees; latitudes are clamped to the
/// square world of WebMercatorQuad.
pub fn to_mercator(longitude: f64, latitude: f64) -> (f64, f64) {
    let limit = crate::tms::web_mercator_max_latitude();
    let latitude = latitude.clamp(-limit, limit).to_radians();
    (
        WEB_MERCATOR_RADIUS * longitude.to_radians(),
        WEB_MERCATOR_RADIUS * latitude.tan().asinh(),
    )
}

/// The values of a tile, row by row from the top, NaN for no data.
#[derive(Debug, Clone, PartialEq)]
pub struct TileValues {
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
    /// `width * height` values.
    pub values: Vec<f32>,
}

impl TileValues {
    /// True when no pixel has data.
    pub fn is_empty(&self) -> bool {
        self.values.iter().all(|value| value.is_nan())
    }
}

/// Samples tile (row, col) of `matrix` from `field`, moving each pixel centre into the field's
/// system with `reprojection`. Returns `None` when (row, col) is outside the matrix.
pub fn sample_tile(
    field: &dyn Field,
    matrix: &TileMatrix,
    row: u32,
    col: u32,
    reprojection: &Reprojection,
) -> Option<TileValues> {
    if !matrix.contains(row, col) {
        return None;
    }
    let width = matrix.tile_width;
    let height = matrix.tile_height;
    let points = match reprojection {
        Reprojection::Identity => exact_points(matrix, row, col, reprojection),
        Reprojection::WebMercatorToGeographic => separable_points(matrix, row, col),
        Reprojection::WebMercatorThrough(_) => lattice_points(matrix, row, col, reprojection),
    };
    let pixel_size = pixel_size_in_field(matrix, row, col, reprojection);
    let mut values = vec![f32::NAN; points.len()];
    field.sample(&points, pixel_size, &mut values);
    Some(TileValues {
        width,
        height,
        values,
    })
}

/// A pixel's size in field units near the tile's centre (for choosing an overview).
fn pixel_size_in_field(
    matrix: &TileMatrix,
    row: u32,
    col: u32,
    reprojection: &Reprojection,
) -> f64 {
    let (x, y) = matrix.pixel_centre(row, col, matrix.tile_width / 2, matrix.tile_height / 2);
    let step = matrix.cell_size;
    match (
        reprojection.apply(x, y),
        reprojection.apply(x + step, y),
        reprojection.apply(x, y + step),
    ) {
        (Some(centre), Some(right), Some(up)) => {
            let across = (right.0 - centre.0).hypot(right.1 - centre.1);
            let down = (up.0 - centre.0).hypot(up.1 - centre.1);
            across.max(down)
        }
        _ => step,
    }
}

fn pixel_position(matrix: &TileMatrix, row: u32, col: u32, u: f64, v: f64) -> (f64, f64) {
    let x =
        matrix.top_left_x + (f64::from(col) * f64::from(matrix.tile_width) + u) * matrix.cell_size;
    let y =
        matrix.top_left_y - (f64::from(row) * f64::from(matrix.tile_height) + v) * matrix.cell_size;
    (x, y)
}

fn exact_points(
    matrix: &TileMatrix,
    row: u32,
    col: u32,
    reprojection: &Reprojection,
) -> Vec<[f64; 2]> {
    let mut points = Vec::with_capacity((matrix.tile_width * matrix.tile_height) as usize);
    for v in 0..matrix.tile_height {
        for u in 0..matrix.tile_width {
            let (x, y) = matrix.pixel_centre(row, col, u, v);
            points.push(match reprojection.apply(x, y) {
                Some((fx, fy)) => [fx, fy],
                None => [f64::NAN, f64::NAN],
            });
        }
    }
    points
}

fn separable_points(matrix: &TileMatrix, row: u32, col: u32) -> Vec<[f64; 2]> {
    let longitudes: Vec<f64> = (0..matrix.tile_width)
        .map(|u| mercator_longitude(matrix.pixel_centre(row, col, u, 0).0))
        .collect();
    let mut points = Vec::with_capacity(longitudes.len() * matrix.tile_height as usize);
    for v in 0..matrix.tile_height {
        let latitude = mercator_latitude(matrix.pixel_centre(row, col, 0, v).1);
        points.extend(longitudes.iter().map(|&longitude| [longitude, latitude]));
    }
    points
}

fn lattice_points(
    matrix: &TileMatrix,
    row: u32,
    col: u32,
    reprojection: &Reprojection,
) -> Vec<[f64; 2]> {
    let width = matrix.tile_width;
    let height = matrix.tile_height;
    let across = width.div_ceil(BLOCK);
    let down = height.div_ceil(BLOCK);
    let node = |i: u32, j: u32| {
        let u = f64::from((i * BLOCK).min(width));
        let v = f64::from((j * BLOCK).min(height));
        let (x, y) = pixel_position(matrix, row, col, u, v);
        reprojection.apply(x, y)
    };
    let nodes: Vec<Vec<Option<(f64, f64)>>> = (0..=down)
        .map(|j| (0..=across).map(|i| node(i, j)).collect())
        .collect();
    let corner = |i: u32, j: u32| *nodes.get(j as usize)?.get(i as usize)?;
    let mut points = vec![[f64::NAN, f64::NAN]; (width * height) as usize];
    for j in 0..down {
        for i in 0..across {
            let corners = (|| {
                Some([
                    corner(i, j)?,
                    corner(i + 1, j)?,
                    corner(i, j + 1)?,
                    corner(i + 1, j + 1)?,
                ])
            })();
            let block = Block {
                u0: i * BLOCK,
                v0: j * BLOCK,
                u1: ((i + 1) * BLOCK).min(width),
                v1: ((j + 1) * BLOCK).min(height),
            };
            block.fill(matrix, row, col, reprojection, corners, &mut points);
        }
    }
    points
}

/// Pixels `u0..u1` x `v0..v1` of a tile: one cell of the lattice.
struct Block {
    u0: u32,
    v0: u32,
    u1: u32,
    v1: u32,
}

impl Block {
    /// Bilinear position at pixel position (u, v) from the exact corner positions.
    fn interpolate(&self, corners: &[(f64, f64); 4], u: f64, v: f64) -> [f64; 2] {
        let s = (u - f64::from(self.u0)) / f64::from(self.u1 - self.u0);
        let t = (v - f64::from(self.v0)) / f64::from(self.v1 - self.v0);
        let [a, b, c, d] = corners;
        let x = (a.0 * (1.0 - s) + b.0 * s) * (1.0 - t) + (c.0 * (1.0 - s) + d.0 * s) * t;
        let y = (a.1 * (1.0 - s) + b.1 * s) * (1.0 - t) + (c.1 * (1.0 - s) + d.1 * s) * t;
        [x, y]
    }

    /// True when interpolating is within [`TOLERANCE_PIXELS`] of the exact position at the
    /// block's centre.
    fn is_smooth(
        &self,
        matrix: &TileMatrix,
        tile: (u32, u32),
        reprojection: &Reprojection,
        corners: &[(f64, f64); 4],
    ) -> bool {
        let u = f64::from(self.u0 + self.u1) / 2.0;
        let v = f64::from(self.v0 + self.v1) / 2.0;
        let (x, y) = pixel_position(matrix, tile.0, tile.1, u, v);
        let Some(truth) = reprojection.apply(x, y) else {
            return false;
        };
        let guess = self.interpolate(corners, u, v);
        let [a, b, ..] = corners;
        let pixel =
            ((b.0 - a.0).hypot(b.1 - a.1) / f64::from(self.u1 - self.u0)).max(f64::MIN_POSITIVE);
        (guess[0] - truth.0).hypot(guess[1] - truth.1) <= TOLERANCE_PIXELS * pixel
    }

    fn fill(
        &self,
        matrix: &TileMatrix,
        row: u32,
        col: u32,
        reprojection: &Reprojection,
        corners: Option<[(f64, f64); 4]>,
        points: &mut [[f64; 2]],
    ) {
        let smooth =
            corners.filter(|corners| self.is_smooth(matrix, (row, col), reprojection, corners));
        for v in self.v0..self.v1 {
            for u in self.u0..self.u1 {
                let point = match &smooth {
                    Some(corners) => {
                        self.interpolate(corners, f64::from(u) + 0.5, f64::from(v) + 0.5)
                    }
                    None => {
                        let (x, y) = matrix.pixel_centre(row, col, u, v);
                        reprojection
                            .apply(x, y)
                            .map_or([f64::NAN, f64::NAN], |(a, b)| [a, b])
                    }
                };
                if let Some(slot) = points.get_mut((v * matrix.tile_width + u) as usize) {
                    *slot = point;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raster::{Aggregation, Raster};
    use crate::tms::TileMatrixSet;
    use basin_formats::crs::Projection;

    #[test]
    fn mercator_round_trips() {
        let (x, y) = to_mercator(5.5, 52.25);
        assert!((mercator_longitude(x) - 5.5).abs() < 1e-12);
        assert!((mercator_latitude(y) - 52.25).abs() < 1e-12);
        let (_, top) = to_mercator(0.0, 90.0);
        assert!((top - crate::tms::WEB_MERCATOR_HALF_WORLD).abs() < 1e-6);
    }

    /// A UTM grid drawn in Web Mercator: every pixel takes the cell under its centre, as an
    /// exact per-pixel transform finds it.
    #[test]
    fn the_lattice_places_pixels_like_the_exact_transform() {
        let from = Projection::epsg(4326).unwrap();
        let to = Projection::epsg(32632).unwrap();
        let transform = CrsTransform::new(from, to);
        let (columns, rows) = (300, 200);
        let values = (0..columns * rows).map(|i| i as f32).collect();
        let raster = Raster::new(
            columns,
            rows,
            [600_000.0, 25.0, 0.0, 5_800_000.0, 0.0, -25.0],
            values,
            Aggregation::Mean,
        )
        .unwrap();
        let set = TileMatrixSet::web_mercator_quad(256, 14);
        let matrix = &set.matrices[13];
        // The tile holding the grid's centre (about 10.46 E, 52.30 N).
        let (x, y) = to_mercator(10.46, 52.30);
        let span = matrix.cell_size * 256.0;
        let col = ((x - matrix.top_left_x) / span) as u32;
        let row = ((matrix.top_left_y - y) / span) as u32;
        let lattice = Reprojection::WebMercatorThrough(Box::new(transform.clone()));
        let tile = sample_tile(&raster, matrix, row, col, &lattice).unwrap();
        let exact = exact_points(matrix, row, col, &lattice);
        let mut expected = vec![0.0; exact.len()];
        raster.sample(&exact, 1.0, &mut expected);
        let differing = tile
            .values
            .iter()
            .zip(&expected)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(differing, 0);
        assert!(!tile.is_empty());
    }

    #[test]
    fn geographic_fields_are_sampled_separably() {
        let raster = Raster::new(
            360,
            170,
            [-180.0, 1.0, 0.0, 85.0, 0.0, -1.0],
            (0..360 * 170).map(|i| i as f32).collect(),
            Aggregation::Mean,
        )
        .unwrap();
        let set = TileMatrixSet::web_mercator_quad(256, 3);
        let tile = sample_tile(
            &raster,
            &set.matrices[0],
            0,
            0,
            &Reprojection::WebMercatorToGeographic,
        )
        .unwrap();
        // Pixel (0, 128): longitude -180 + 0.5 * 360/256, latitude just below the equator.
        let value = tile.values[128 * 256];
        assert_eq!(value, (85 * 360) as f32);
        assert!(sample_tile(&raster, &set.matrices[0], 1, 0, &Reprojection::Identity).is_none());
    }
}

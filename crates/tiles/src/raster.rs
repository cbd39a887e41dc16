//! Grids as fields: one band of a grid, with an overview pyramid for zoomed-out tiles.
//!
//! Values are held as `f32` with NaN for no data, whatever the source type, so rendering has
//! one code path; a 8,000 x 8,000 band is 256 MB, which the server's cache accounts for.
//! Each overview halves the previous level by aggregating 2 x 2 cells (the scheme's mean or
//! maximum of the cells that have data), as GDAL's overviews do; a tile uses the coarsest level
//! whose cells are still no larger than its pixels, so zoomed-in tiles sample the source cells
//! themselves (nearest cell to the pixel centre) and zoomed-out ones read a quarter of the
//! values per level up instead of all of them.

use std::fmt;

use crate::field::Field;
use crate::tms::Bounds;

/// How overview cells combine the cells below them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Aggregation {
    /// The mean of the cells with data.
    #[default]
    Mean,
    /// The largest value.
    Max,
}

impl Aggregation {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mean => "Mean",
            Self::Max => "Max",
        }
    }

    /// From the wire name, in any case.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Mean, Self::Max]
            .into_iter()
            .find(|method| method.name().eq_ignore_ascii_case(text))
    }
}

/// Why a raster cannot be built.
#[derive(Debug, Clone, PartialEq)]
pub enum RasterError {
    /// `values` does not hold columns x rows values.
    WrongLength {
        /// Expected.
        expected: usize,
        /// Given.
        given: usize,
    },
    /// The geotransform cannot be inverted or is not finite.
    BadTransform,
    /// No cells.
    Empty,
}

impl fmt::Display for RasterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongLength { expected, given } => {
                write!(f, "the grid needs {expected} values, {given} were given")
            }
            Self::BadTransform => f.write_str("the grid's geotransform cannot be inverted"),
            Self::Empty => f.write_str("the grid has no cells"),
        }
    }
}

impl std::error::Error for RasterError {}

/// One level of the pyramid.
#[derive(Debug, Clone)]
struct Level {
    columns: usize,
    rows: usize,
    /// Map units per cell, the larger side (for choosing a level).
    cell_size: f64,
    /// Inverse of the level's geotransform: (x, y) to fractional (column, row).
    inverse: [f64; 6],
    values: Vec<f32>,
}

impl Level {
    fn value_at(&self, x: f64, y: f64) -> f32 {
        let [a, b, c, d, e, f] = self.inverse;
        let column = a + b * x + c * y;
        let row = d + e * x + f * y;
        // Negative or NaN positions fail these tests, so the casts below see only cells.
        if !(column >= 0.0 && row >= 0.0) {
            return f32::NAN;
        }
        let (column, row) = (column.floor(), row.floor());
        if column >= self.columns as f64 || row >= self.rows as f64 {
            return f32::NAN;
        }
        let index = row as usize * self.columns + column as usize;
        self.values.get(index).copied().unwrap_or(f32::NAN)
    }
}

/// One band of a grid, ready to sample.
#[derive(Debug, Clone)]
pub struct Raster {
    levels: Vec<Level>,
    extent: Bounds,
}

impl Raster {
    /// A raster of `columns` x `rows` values (row-major, top row first as the geotransform
    /// says; NaN for no data) placed by GDAL's six-number geotransform. Overviews are built
    /// down to a level of at most 256 x 256 cells.
    pub fn new(
        columns: usize,
        rows: usize,
        geotransform: [f64; 6],
        values: Vec<f32>,
        aggregation: Aggregation,
    ) -> Result<Self, RasterError> {
        let expected = columns.checked_mul(rows).ok_or(RasterError::Empty)?;
        if expected == 0 {
            return Err(RasterError::Empty);
        }
        if values.len() != expected {
            return Err(RasterError::WrongLength {
                expected,
                given: values.len(),
            });
        }
        let inverse = invert(geotransform).ok_or(RasterError::BadTransform)?;
        let extent = footprint(geotransform, columns as f64, rows as f64);
        let cell_size = cell_size_of(geotransform);
        let mut levels = vec![Level {
            columns,
            rows,
            cell_size,
            inverse,
            values,
        }];
        let mut transform = geotransform;
        while let Some(last) = levels.last() {
            if last.columns.max(last.rows) <= 256 {
                break;
            }
            let [ox, pw, rr, oy, cr, ph] = transform;
            transform = [ox, pw * 2.0, rr * 2.0, oy, cr * 2.0, ph * 2.0];
            let Some(inverse) = invert(transform) else {
                break;
            };
            let next = reduce(last, aggregation, inverse, cell_size_of(transform));
            levels.push(next);
        }
        Ok(Self { levels, extent })
    }

    /// Bytes held by the values of every level.
    pub fn approximate_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|level| level.values.len() * std::mem::size_of::<f32>())
            .sum()
    }

    /// The smallest and largest value with data, over the full-resolution level.
    pub fn value_range(&self) -> Option<(f32, f32)> {
        let level = self.levels.first()?;
        level.values.iter().filter(|value| value.is_finite()).fold(
            None,
            |range, &value| match range {
                None => Some((value, value)),
                Some((low, high)) => Some((low.min(value), high.max(value))),
            },
        )
    }

    fn level_for(&self, pixel_size: f64) -> Option<&Level> {
        // The coarsest level whose cells are no larger than a pixel; the base level otherwise.
        self.levels
            .iter()
            .rev()
            .find(|level| level.cell_size <= pixel_size)
            .or_else(|| self.levels.first())
    }
}

impl Field for Raster {
    fn extent(&self) -> Bounds {
        self.extent
    }

    fn sample(&self, points: &[[f64; 2]], pixel_size: f64, out: &mut [f32]) {
        let Some(level) = self.level_for(pixel_size) else {
            out.fill(f32::NAN);
            return;
        };
        for (slot, [x, y]) in out.iter_mut().zip(points) {
            *slot = level.value_at(*x, *y);
        }
    }
}

/// Halves a level: each cell aggregates up to 2 x 2 cells of `level` that have data.
fn reduce(level: &Level, aggregation: Aggregation, inverse: [f64; 6], cell_size: f64) -> Level {
    let columns = level.columns.div_ceil(2);
    let rows = level.rows.div_ceil(2);
    let mut values = Vec::with_capacity(columns * rows);
    let source = &level.values;
    for row in 0..rows {
        for column in 0..columns {
            let mut sum = 0.0_f64;
            let mut count = 0_u32;
            let mut largest = f32::NEG_INFINITY;
            for (dr, dc) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                let (r, c) = (row * 2 + dr, column * 2 + dc);
                if r >= level.rows || c >= level.columns {
                    continue;
                }
                if let Some(&value) = source.get(r * level.columns + c)
                    && !value.is_nan()
                {
                    sum += f64::from(value);
                    count += 1;
                    largest = largest.max(value);
                }
            }
            values.push(match (count, aggregation) {
                (0, _) => f32::NAN,
                (_, Aggregation::Mean) => (sum / f64::from(count)) as f32,
                (_, Aggregation::Max) => largest,
            });
        }
    }
    Level {
        columns,
        rows,
        cell_size,
        inverse,
        values,
    }
}

/// The inverse affine transform, from (x, y) to fractional (column, row), as
/// `[c0, cx, cy, r0, rx, ry]`: `column = c0 + cx * x + cy * y`, `row = r0 + rx * x + ry * y`.
fn invert(geotransform: [f64; 6]) -> Option<[f64; 6]> {
    let [ox, pw, rr, oy, cr, ph] = geotransform;
    let determinant = pw * ph - rr * cr;
    if !(determinant.is_finite() && determinant != 0.0 && ox.is_finite() && oy.is_finite()) {
        return None;
    }
    let cx = ph / determinant;
    let cy = -rr / determinant;
    let rx = -cr / determinant;
    let ry = pw / determinant;
    Some([-(cx * ox + cy * oy), cx, cy, -(rx * ox + ry * oy), rx, ry])
}

fn cell_size_of(geotransform: [f64; 6]) -> f64 {
    let [_, pw, rr, _, cr, ph] = geotransform;
    pw.hypot(cr).max(rr.hypot(ph))
}

/// The bounding box of the grid's four outer corners.
fn footprint(geotransform: [f64; 6], columns: f64, rows: f64) -> Bounds {
    let [ox, pw, rr, oy, cr, ph] = geotransform;
    let corner = |column: f64, row: f64| (ox + column * pw + row * rr, oy + column * cr + row * ph);
    let corners = [
        corner(0.0, 0.0),
        corner(columns, 0.0),
        corner(0.0, rows),
        corner(columns, rows),
    ];
    let mut bounds = Bounds {
        min_x: f64::INFINITY,
        min_y: f64::INFINITY,
        max_x: f64::NEG_INFINITY,
        max_y: f64::NEG_INFINITY,
    };
    for (x, y) in corners {
        bounds.min_x = bounds.min_x.min(x);
        bounds.min_y = bounds.min_y.min(y);
        bounds.max_x = bounds.max_x.max(x);
        bounds.max_y = bounds.max_y.max(y);
    }
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(columns: usize, rows: usize) -> Raster {
        let values = (0..columns * rows).map(|i| i as f32).collect();
        Raster::new(
            columns,
            rows,
            [100.0, 10.0, 0.0, 500.0, 0.0, -10.0],
            values,
            Aggregation::Mean,
        )
        .unwrap()
    }

    #[test]
    fn samples_take_the_cell_under_the_point() {
        let raster = grid(4, 3);
        let points = [
            [105.0, 495.0],
            [135.0, 495.0],
            [105.0, 475.0],
            [139.999, 470.001],
            [140.0, 495.0],
            [99.999, 495.0],
            [f64::NAN, 495.0],
            [120.0, 500.0],
        ];
        let mut out = [0.0; 8];
        raster.sample(&points, 1.0, &mut out);
        assert_eq!(&out[..4], &[0.0, 3.0, 8.0, 11.0]);
        assert!(out[4].is_nan() && out[5].is_nan() && out[6].is_nan());
        assert_eq!(out[7], 2.0, "the top edge belongs to the first row");
        assert_eq!(raster.extent().min_y, 470.0);
        assert_eq!(raster.value_range(), Some((0.0, 11.0)));
    }

    #[test]
    fn overviews_aggregate_cells_with_data() {
        let mut values: Vec<f32> = (0..600 * 300).map(|i| (i % 600) as f32).collect();
        values[1] = f32::NAN;
        let transform = [0.0, 1.0, 0.0, 0.0, 0.0, -1.0];
        let mean = Raster::new(600, 300, transform, values.clone(), Aggregation::Mean).unwrap();
        let max = Raster::new(600, 300, transform, values, Aggregation::Max).unwrap();
        assert_eq!(mean.levels.len(), 3);
        assert_eq!(mean.levels[1].columns, 300);
        assert_eq!(mean.levels[2].columns, 150);
        // Cells (0,0) (0,1 is NaN) (1,0) (1,1): 0, 0, 1 -> mean 1/3, max 1.
        assert!((mean.levels[1].values[0] - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(max.levels[1].values[0], 1.0);
        let mut out = [0.0];
        mean.sample(&[[0.5, -0.5]], 1.0, &mut out);
        assert_eq!(out[0], 0.0, "pixels as small as cells read the source");
        mean.sample(&[[0.5, -0.5]], 2.5, &mut out);
        assert!(
            (out[0] - 1.0 / 3.0).abs() < 1e-6,
            "two-cell pixels read the first overview"
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let transform = [0.0, 1.0, 0.0, 0.0, 0.0, -1.0];
        assert!(Raster::new(0, 5, transform, vec![], Aggregation::Mean).is_err());
        assert!(Raster::new(2, 2, transform, vec![0.0; 3], Aggregation::Mean).is_err());
        let flat = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        assert!(Raster::new(1, 1, flat, vec![0.0], Aggregation::Mean).is_err());
        assert!(Raster::new(usize::MAX, 2, transform, vec![], Aggregation::Mean).is_err());
    }

    #[test]
    fn rotated_grids_invert_exactly() {
        let transform = [10.0, 2.0, 1.0, 20.0, 1.0, -2.0];
        let raster =
            Raster::new(2, 2, transform, vec![1.0, 2.0, 3.0, 4.0], Aggregation::Mean).unwrap();
        // Centre of cell (column 1, row 1): x = 10 + 1.5*2 + 1.5*1, y = 20 + 1.5*1 - 1.5*2.
        let mut out = [0.0];
        raster.sample(&[[14.5, 18.5]], 0.1, &mut out);
        assert_eq!(out[0], 4.0);
    }
}

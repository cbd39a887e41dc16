//! Resampling a rotated grid to north-up, nearest neighbour, the way `gdalwarp -r near` does
//! it when given no target CRS, so that an ASCII Grid (which cannot hold rotation) can be
//! written on request and compared with GDAL cell by cell.
//!
//! The output extent is the bounding box of the input's corners (GDAL samples 21 points per
//! edge; for an affine transform the corners give the same box), the cell size is the length
//! of the input's diagonal (top-left to bottom-right corner) in map units divided by its
//! length in cells, and the counts are rounded as GDAL rounds them. Each output cell takes the
//! input cell under its centre (GDAL adds 1e-10 before flooring), or the fill value outside.
//! The CRS is unchanged, so this needs no projection and lives here rather than in the CRS
//! warp, which transforms between coordinate systems.

use crate::error::{FormatError, FormatResult};
use crate::limits::check_limit;
use crate::model::{GeoTransform, GridGeometry, Values};

/// The most cells of a grid to resample, input or output (2^28, a 16k x 16k grid): the input
/// is held in memory, as a cell's source can be anywhere.
pub const RESAMPLE_CELLS_MAX: u64 = 1 << 28;

/// GDAL adds this before flooring a source position, so that a centre landing exactly on a
/// cell edge (up to rounding) picks the cell GDAL picks.
const FLOOR_EPSILON: f64 = 1e-10;

/// The north-up geometry gdalwarp suggests for the rotated `source`.
pub(crate) fn north_up(source: &GridGeometry) -> FormatResult<GridGeometry> {
    let (width, height) = (source.columns as f64, source.rows as f64);
    let transform = source.transform;
    let corners = [
        transform.apply(0.0, 0.0),
        transform.apply(width, 0.0),
        transform.apply(0.0, height),
        transform.apply(width, height),
    ];
    let (mut min_x, mut min_y, mut max_x, mut max_y) = (
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    );
    for (x, y) in corners {
        min_x = min_x.min(x);
        max_x = max_x.max(x);
        min_y = min_y.min(y);
        max_y = max_y.max(y);
    }
    let (x0, y0) = transform.apply(0.0, 0.0);
    let (x1, y1) = transform.apply(width, height);
    let (mut delta_x, mut delta_y) = (x1 - x0, y1 - y0);
    if delta_x == 0.0 || delta_y == 0.0 {
        delta_x = max_x - min_x;
        delta_y = max_y - min_y;
    }
    let cell = delta_x.hypot(delta_y) / width.hypot(height);
    if !(cell.is_finite() && cell > 0.0) {
        return Err(FormatError::Incompatible {
            data: "grid",
            format: super::FORMAT,
            message: "the rotated grid has no extent to resample".to_owned(),
        });
    }
    let columns = count((max_x - min_x) / cell + 0.5)?;
    let rows = count((max_y - min_y) / cell + 0.5)?;
    let cells = (columns as u64).saturating_mul(rows as u64);
    check_limit("cells of the resampled grid", cells, RESAMPLE_CELLS_MAX)?;
    Ok(GridGeometry {
        columns,
        rows,
        vertical: None,
        transform: GeoTransform::north_up(min_x, max_y, cell, cell),
        crs: source.crs.clone(),
    })
}

/// A cell count from a rounded real, at least 1.
fn count(value: f64) -> FormatResult<usize> {
    if !(value.is_finite() && value < RESAMPLE_CELLS_MAX as f64) {
        return Err(FormatError::LimitExceeded {
            what: "cells along one side of the resampled grid",
            actual: if value.is_finite() {
                value as u64
            } else {
                u64::MAX
            },
            limit: RESAMPLE_CELLS_MAX,
        });
    }
    Ok((value as usize).max(1))
}

/// The values of `target` taken from `values` of `source` by nearest neighbour; `fill` where
/// an output cell's centre is outside the input.
pub(crate) fn resample(
    source: &GridGeometry,
    target: &GridGeometry,
    values: &Values,
    fill: f64,
) -> FormatResult<Values> {
    let t = source.transform;
    let determinant = t.pixel_width * t.pixel_height - t.row_rotation * t.column_rotation;
    if determinant == 0.0 || !determinant.is_finite() {
        return Err(FormatError::Incompatible {
            data: "grid",
            format: super::FORMAT,
            message: "the grid's geotransform cannot be inverted (zero cell size)".to_owned(),
        });
    }
    let (width, height) = (source.columns as f64, source.rows as f64);
    let source_index = |column: usize, row: usize| -> Option<usize> {
        let (x, y) = target
            .transform
            .apply(column as f64 + 0.5, row as f64 + 0.5);
        let (dx, dy) = (x - t.origin_x, y - t.origin_y);
        let px = (dx * t.pixel_height - dy * t.row_rotation) / determinant + FLOOR_EPSILON;
        let py = (dy * t.pixel_width - dx * t.column_rotation) / determinant + FLOOR_EPSILON;
        if !(px >= 0.0 && py >= 0.0 && px < width && py < height) {
            return None;
        }
        (py as usize)
            .checked_mul(source.columns)?
            .checked_add(px as usize)
    };
    macro_rules! take {
        ($variant:ident, $data:expr, $ty:ty) => {{
            let fill = fill as $ty;
            let mut out = Vec::new();
            for row in 0..target.rows {
                for column in 0..target.columns {
                    let value = source_index(column, row)
                        .and_then(|index| $data.get(index))
                        .copied()
                        .unwrap_or(fill);
                    out.push(value);
                }
            }
            Values::$variant(out)
        }};
    }
    Ok(match values {
        Values::U8(data) => take!(U8, data, u8),
        Values::I16(data) => take!(I16, data, i16),
        Values::U16(data) => take!(U16, data, u16),
        Values::I32(data) => take!(I32, data, i32),
        Values::U32(data) => take!(U32, data, u32),
        Values::F32(data) => take!(F32, data, f32),
        Values::F64(data) => take!(F64, data, f64),
    })
}

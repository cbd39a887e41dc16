//! Reprojection of raster grids, as `gdalwarp -r near` does it, so that results can be
//! compared cell by cell with GDAL.
//!
//! 1. The output extent and resolution follow GDAL's suggested warp output (what `gdalwarp`
//!    uses when given only `-t_srs`): 21 points along each edge of the input are transformed,
//!    their bounding box is the extent, and the cell size is the length of the transformed
//!    diagonal (top-left to bottom-right corner) divided by the input's diagonal in cells.
//!    Output cells are square and north-up, whatever the input's rotation.
//! 2. For every output cell centre, the inverse transformation gives a position in the input;
//!    the input cell containing it supplies the value (nearest neighbour). Cells whose centre
//!    falls outside the input, or cannot be transformed, get the item's nodata value.
//!
//! The map from output to input cells is computed once and reused for every item, layer and
//! step. The warp needs all of one item's step in memory (a cell's source can be anywhere),
//! which [`WARP_CELLS_MAX`] bounds, together with the output size.

use super::project::CrsTransform;
use crate::error::{FormatError, FormatResult};
use crate::limits::check_limit;
use crate::model::{GeoTransform, GridGeometry, Values};

/// The most cells of one layer of a warped grid, input or output (2^28, a 16k x 16k grid:
/// the map from output to input cells then takes 1 GiB and one item's step 1-2 GiB).
pub const WARP_CELLS_MAX: u64 = 1 << 28;

/// Points per edge when sampling the input's outline, as GDAL's default.
const EDGE_STEPS: u32 = 20;

/// GDAL adds this before flooring a source position, so that a centre landing exactly on a
/// cell edge (up to rounding) picks the cell GDAL picks.
const FLOOR_EPSILON: f64 = 1e-10;

/// "No input cell" in the cell map.
const OUTSIDE: u32 = u32::MAX;

/// The output geometry of warping `source` with `transform`: extent, cell size, shape.
pub(crate) fn suggested_output(
    source: &GridGeometry,
    transform: &CrsTransform,
) -> FormatResult<(GeoTransform, usize, usize)> {
    let width = source.columns as f64;
    let height = source.rows as f64;
    let to_output = |column: f64, row: f64| {
        let (x, y) = source.transform.apply(column, row);
        transform.try_apply(x, y)
    };
    let mut points = Vec::new();
    let mut failed = false;
    for step in 0..=EDGE_STEPS {
        let ratio = f64::from(step) / f64::from(EDGE_STEPS);
        for (column, row) in [
            (ratio * width, 0.0),
            (ratio * width, height),
            (0.0, ratio * height),
            (width, ratio * height),
        ] {
            match to_output(column, row) {
                Some(point) => points.push(point),
                None => failed = true,
            }
        }
    }
    if failed {
        // Part of the outline is outside the target's domain: sample the inside as well, as
        // GDAL does, so that the extent covers what can be transformed.
        for step_y in 0..=EDGE_STEPS {
            for step_x in 0..=EDGE_STEPS {
                let column = width * f64::from(step_x) / f64::from(EDGE_STEPS);
                let row = height * f64::from(step_y) / f64::from(EDGE_STEPS);
                points.extend(to_output(column, row));
            }
        }
    }
    let no_points = || {
        FormatError::Crs(format!(
            "no part of the grid can be transformed from {} to {}",
            transform.from().label(),
            transform.to().label()
        ))
    };
    let (first_x, first_y) = *points.first().ok_or_else(no_points)?;
    let (mut min_x, mut min_y, mut max_x, mut max_y) = (first_x, first_y, first_x, first_y);
    for &(x, y) in &points {
        min_x = min_x.min(x);
        max_x = max_x.max(x);
        min_y = min_y.min(y);
        max_y = max_y.max(y);
    }
    let corners = (to_output(0.0, 0.0), to_output(width, height));
    let (mut delta_x, mut delta_y) = match corners {
        (Some((x0, y0)), Some((x1, y1))) => (x1 - x0, y1 - y0),
        _ => (0.0, 0.0),
    };
    if delta_x == 0.0 || delta_y == 0.0 {
        delta_x = max_x - min_x;
        delta_y = max_y - min_y;
    }
    let cell = delta_x.hypot(delta_y) / width.hypot(height);
    if !(cell.is_finite() && cell > 0.0) {
        return Err(no_points());
    }
    let columns = count((max_x - min_x) / cell + 0.5)?;
    let rows = count((max_y - min_y) / cell + 0.5)?;
    let cells = (columns as u64).saturating_mul(rows as u64);
    check_limit("cells of the reprojected grid", cells, WARP_CELLS_MAX)?;
    Ok((
        GeoTransform::north_up(min_x, max_y, cell, cell),
        columns,
        rows,
    ))
}

/// A cell count from a rounded real, at least 1.
fn count(value: f64) -> FormatResult<usize> {
    if !(value.is_finite() && value < WARP_CELLS_MAX as f64) {
        return Err(FormatError::LimitExceeded {
            what: "cells along one side of the reprojected grid",
            actual: if value.is_finite() {
                value as u64
            } else {
                u64::MAX
            },
            limit: WARP_CELLS_MAX,
        });
    }
    Ok((value as usize).max(1))
}

/// The inverse of a geotransform: map position to fractional (column, row).
fn invert(transform: &GeoTransform) -> FormatResult<impl Fn(f64, f64) -> (f64, f64) + Sync> {
    let t = *transform;
    let determinant = t.pixel_width * t.pixel_height - t.row_rotation * t.column_rotation;
    if determinant == 0.0 || !determinant.is_finite() {
        return Err(FormatError::Crs(
            "the grid's geotransform cannot be inverted (zero cell size)".to_owned(),
        ));
    }
    Ok(move |x: f64, y: f64| {
        let dx = x - t.origin_x;
        let dy = y - t.origin_y;
        (
            (dx * t.pixel_height - dy * t.row_rotation) / determinant,
            (dy * t.pixel_width - dx * t.column_rotation) / determinant,
        )
    })
}

/// For each output cell of one layer, the index of the input cell it takes its value from,
/// or [`OUTSIDE`]. Rows are computed on all available cores.
pub(crate) fn cell_map(
    source: &GridGeometry,
    target: &GridGeometry,
    inverse: &CrsTransform,
) -> FormatResult<Vec<u32>> {
    let source_cells = (source.columns as u64).saturating_mul(source.rows as u64);
    check_limit("cells of a grid to reproject", source_cells, WARP_CELLS_MAX)?;
    let to_source = invert(&source.transform)?;
    let width = source.columns as f64;
    let height = source.rows as f64;
    let columns = source.columns;
    let fill_row = |row: usize, out: &mut [u32]| {
        for (column, slot) in out.iter_mut().enumerate() {
            let (x, y) = target
                .transform
                .apply(column as f64 + 0.5, row as f64 + 0.5);
            *slot = inverse
                .try_apply(x, y)
                .map(|(sx, sy)| to_source(sx, sy))
                .and_then(|(px, py)| {
                    let (px, py) = (px + FLOOR_EPSILON, py + FLOOR_EPSILON);
                    if !(px >= 0.0 && py >= 0.0 && px < width && py < height) {
                        return None;
                    }
                    let index = (py as usize)
                        .checked_mul(columns)?
                        .checked_add(px as usize)?;
                    u32::try_from(index).ok()
                })
                .unwrap_or(OUTSIDE);
        }
    };
    let total = target.columns.saturating_mul(target.rows);
    let mut map = vec![OUTSIDE; total];
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let rows_per_chunk = target.rows.div_ceil(threads).max(1);
    let chunk_len = rows_per_chunk.saturating_mul(target.columns).max(1);
    std::thread::scope(|scope| {
        for (chunk_index, chunk) in map.chunks_mut(chunk_len).enumerate() {
            let fill_row = &fill_row;
            scope.spawn(move || {
                let first_row = chunk_index * rows_per_chunk;
                for (offset, row) in chunk.chunks_mut(target.columns.max(1)).enumerate() {
                    fill_row(first_row + offset, row);
                }
            });
        }
    });
    Ok(map)
}

/// Applies the cell map to one item's step (all layers), filling outside cells with `fill`.
pub(crate) fn apply_map(
    map: &[u32],
    source_layer_cells: usize,
    layers: usize,
    values: &Values,
    fill: f64,
) -> Values {
    macro_rules! warp {
        ($variant:ident, $data:expr, $ty:ty) => {{
            let fill = fill as $ty;
            let mut out = Vec::with_capacity(map.len().saturating_mul(layers));
            for layer in 0..layers {
                let base = layer.saturating_mul(source_layer_cells);
                out.extend(map.iter().map(|&index| {
                    if index == OUTSIDE {
                        return fill;
                    }
                    base.checked_add(index as usize)
                        .and_then(|index| $data.get(index))
                        .copied()
                        .unwrap_or(fill)
                }));
            }
            Values::$variant(out)
        }};
    }
    match values {
        Values::U8(data) => warp!(U8, data, u8),
        Values::I16(data) => warp!(I16, data, i16),
        Values::U16(data) => warp!(U16, data, u16),
        Values::I32(data) => warp!(I32, data, i32),
        Values::U32(data) => warp!(U32, data, u32),
        Values::F32(data) => warp!(F32, data, f32),
        Values::F64(data) => warp!(F64, data, f64),
    }
}

//! An answer read row by row, for the tabular encodings (GeoJSON features, CSV lines): one row
//! per place and step, with one value per column. A place is a position, a cell's or
//! element's centre, or a polygon of statistics; a grid window's cells outside the query's
//! region, which have no value at all, give no row.

use chrono::NaiveDateTime;

use crate::coverage::{Answer, Parameter};
use crate::covjson::statistic_key;

/// Where a row's values are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Place<'a> {
    /// Nowhere: a time series.
    Nowhere,
    /// A position or a centre.
    Point(f64, f64),
    /// A polygon (its rings), with its index in the query.
    Polygon(usize, &'a [Vec<(f64, f64)>]),
}

/// The columns of `answer`: its parameters, or `parameter:statistic` for statistics.
pub fn columns(answer: &Answer) -> Vec<(String, bool)> {
    let single = |parameter: &Parameter| (parameter.id.clone(), parameter.single_precision);
    match answer {
        Answer::Points(coverages) => coverages.parameters.iter().map(single).collect(),
        Answer::Grid(grid) => grid.parameters.iter().map(single).collect(),
        Answer::Cells(cells) => cells.parameters.iter().map(single).collect(),
        Answer::Series(series) => series.parameters.iter().map(single).collect(),
        Answer::Trajectory(trajectory) => trajectory
            .parameters
            .iter()
            .map(|parameter| (parameter.id.clone(), false))
            .collect(),
        Answer::Statistics(statistics) => statistics
            .parameters
            .iter()
            .flat_map(|parameter| {
                statistics
                    .statistics
                    .iter()
                    .map(move |statistic| (statistic_key(&parameter.id, statistic), false))
            })
            .collect(),
    }
}

/// The URI of the system the places of `answer` are in.
pub fn crs_uri(answer: &Answer) -> &str {
    match answer {
        Answer::Points(coverages) => &coverages.crs_uri,
        Answer::Grid(grid) => &grid.crs_uri,
        Answer::Cells(cells) => &cells.crs_uri,
        Answer::Statistics(statistics) => &statistics.crs_uri,
        Answer::Trajectory(trajectory) => &trajectory.crs_uri,
        Answer::Series(_) => "",
    }
}

/// Calls `row` for each row of `answer`, in place order then time order.
pub fn for_each_row(
    answer: &Answer,
    mut row: impl FnMut(Place<'_>, Option<NaiveDateTime>, &[f64]),
) {
    let mut values = Vec::new();
    match answer {
        Answer::Points(coverages) => {
            let steps = coverages.times.len().max(1);
            for point in &coverages.points {
                for step in 0..steps {
                    values.clear();
                    values.extend(point.values.iter().map(|v| at(v, step)));
                    row(
                        Place::Point(point.x, point.y),
                        coverages.times.get(step).copied(),
                        &values,
                    );
                }
            }
        }
        Answer::Cells(cells) => {
            let (steps, count) = (cells.times.len().max(1), cells.centres.len());
            for (index, &(x, y)) in cells.centres.iter().enumerate() {
                for step in 0..steps {
                    values.clear();
                    values.extend(cells.values.iter().map(|v| at(v, step * count + index)));
                    row(Place::Point(x, y), cells.times.get(step).copied(), &values);
                }
            }
        }
        Answer::Grid(grid) => grid_rows(grid, &mut row),
        Answer::Series(series) => {
            for (step, time) in series.times.iter().enumerate() {
                values.clear();
                values.extend(series.values.iter().map(|v| at(v, step)));
                row(Place::Nowhere, Some(*time), &values);
            }
        }
        Answer::Trajectory(trajectory) => {
            for (index, &(time, x, y)) in trajectory.positions.iter().enumerate() {
                values.clear();
                values.extend(trajectory.values.iter().map(|v| at(v, index)));
                row(Place::Point(x, y), Some(time), &values);
            }
        }
        Answer::Statistics(statistics) => {
            let (steps, count) = (statistics.times.len().max(1), statistics.polygons.len());
            for (index, polygon) in statistics.polygons.iter().enumerate() {
                for step in 0..steps {
                    values.clear();
                    for per_statistic in &statistics.values {
                        values.extend(per_statistic.iter().map(|v| at(v, step * count + index)));
                    }
                    row(
                        Place::Polygon(index, polygon),
                        statistics.times.get(step).copied(),
                        &values,
                    );
                }
            }
        }
    }
}

/// The rows of a grid window: its cells with a value, row by row.
fn grid_rows(
    grid: &crate::coverage::GridCoverage,
    row: &mut impl FnMut(Place<'_>, Option<NaiveDateTime>, &[f64]),
) {
    let (steps, width, height) = (grid.times.len().max(1), grid.xs.len(), grid.ys.len());
    let mut values = Vec::with_capacity(grid.values.len());
    for (r, &y) in grid.ys.iter().enumerate() {
        for (c, &x) in grid.xs.iter().enumerate() {
            for step in 0..steps {
                values.clear();
                let index = step * width * height + r * width + c;
                values.extend(grid.values.iter().map(|v| at(v, index)));
                if values.iter().any(|value| value.is_finite()) {
                    row(Place::Point(x, y), grid.times.get(step).copied(), &values);
                }
            }
        }
    }
}

fn at(values: &[f64], index: usize) -> f64 {
    values.get(index).copied().unwrap_or(f64::NAN)
}

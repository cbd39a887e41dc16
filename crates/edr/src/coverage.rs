//! The answer of a query before it is written: the parameters (items) it holds, the times of
//! the selected steps, and for each position its coordinates and values. Encoders
//! ([`crate::covjson`]) turn it into text.

use basin_formats::dfs::eum;
use basin_formats::model::{DataType, Item};
use chrono::NaiveDateTime;

/// One parameter of an answer: an item of the dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// The item's name as the file stores it; the key of its values.
    pub id: String,
    /// What it measures (the EUM item type of a DFS item, e.g. `Water Level`), when known.
    pub observed: String,
    /// The unit's symbol (`m`, `m^3/s`), when known.
    pub unit_symbol: String,
    /// The unit's name (`meter`), when known.
    pub unit_label: String,
    /// Whether values are single precision (written in the shortest form that reads back to
    /// the same `f32`).
    pub single_precision: bool,
}

impl Parameter {
    /// The parameter of `item`.
    pub fn of(item: &Item) -> Self {
        let quantity = &item.quantity;
        let unit_label = quantity
            .eum_unit
            .and_then(eum::unit_name)
            .map_or_else(|| quantity.unit.clone(), str::to_owned);
        Self {
            id: item.name.clone(),
            observed: if quantity.name.is_empty() {
                item.name.clone()
            } else {
                quantity.name.clone()
            },
            unit_symbol: quantity.unit.clone(),
            unit_label,
            single_precision: matches!(
                item.data_type,
                DataType::F32 | DataType::U8 | DataType::I16 | DataType::U16
            ),
        }
    }
}

/// The values at one position.
#[derive(Debug, Clone, PartialEq)]
pub struct PointValues {
    /// x (longitude in CRS84) as the query gave it.
    pub x: f64,
    /// y (latitude in CRS84) as the query gave it.
    pub y: f64,
    /// Per parameter, one value per time (NaN where there is none).
    pub values: Vec<Vec<f64>>,
}

/// A query's answer at one or more positions.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverages {
    /// The URI of the system the positions are in.
    pub crs_uri: String,
    /// The parameters, in the order asked for.
    pub parameters: Vec<Parameter>,
    /// The times of the selected steps; empty for data without time (one step).
    pub times: Vec<NaiveDateTime>,
    /// The positions.
    pub points: Vec<PointValues>,
    /// Whether the query named several positions (a MULTIPOINT), so that the answer is a
    /// collection even when it holds one.
    pub multiple: bool,
}

/// The answer of a query, as its kind of domain.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Values at points (position).
    Points(Coverages),
    /// A window of a north-up grid (area and cube on such a grid); values outside the query's
    /// region are NaN.
    Grid(GridCoverage),
    /// Values at the cells or elements of a region, each at its centre (area and cube on a
    /// mesh or a rotated grid).
    Cells(CellsCoverage),
    /// Statistics over a region, per step (area with `statistics`).
    Statistics(StatisticsCoverage),
    /// Values along a path with a time at each position (a trajectory with times).
    Trajectory(TrajectoryCoverage),
    /// The values of a time series, which has no place.
    Series(SeriesCoverage),
}

/// The values of a time series: per parameter, one value per step.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesCoverage {
    /// The parameters.
    pub parameters: Vec<Parameter>,
    /// The times of the steps.
    pub times: Vec<NaiveDateTime>,
    /// Per parameter: one value per step.
    pub values: Vec<Vec<f64>>,
}

/// Values along a timed path: one value per parameter at each position.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryCoverage {
    /// The URI of the system of the positions.
    pub crs_uri: String,
    /// The parameters.
    pub parameters: Vec<Parameter>,
    /// The positions: time, x, y.
    pub positions: Vec<(NaiveDateTime, f64, f64)>,
    /// Per parameter: one value per position.
    pub values: Vec<Vec<f64>>,
}

/// A window of a grid: cell centres along x and y, values `[parameter][step][row][column]`
/// flattened in that order.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCoverage {
    /// The URI of the system of `xs` and `ys`.
    pub crs_uri: String,
    /// The parameters.
    pub parameters: Vec<Parameter>,
    /// The times of the steps; empty for data without time.
    pub times: Vec<NaiveDateTime>,
    /// Cell centres along x, in the window's order.
    pub xs: Vec<f64>,
    /// Cell centres along y, in the window's order.
    pub ys: Vec<f64>,
    /// Per parameter: steps x rows x columns values.
    pub values: Vec<Vec<f64>>,
}

/// Values at the centres of cells or elements: `values[parameter]` holds steps x cells.
#[derive(Debug, Clone, PartialEq)]
pub struct CellsCoverage {
    /// The URI of the system of `centres`.
    pub crs_uri: String,
    /// The parameters.
    pub parameters: Vec<Parameter>,
    /// The times of the steps; empty for data without time.
    pub times: Vec<NaiveDateTime>,
    /// The centre of each cell or element.
    pub centres: Vec<(f64, f64)>,
    /// Per parameter: steps x cells values.
    pub values: Vec<Vec<f64>>,
}

/// Statistics over the regions of a query (one per polygon): `values[parameter][statistic]`
/// holds steps x polygons values, in that order.
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticsCoverage {
    /// The URI of the system of `polygons`.
    pub crs_uri: String,
    /// The parameters.
    pub parameters: Vec<Parameter>,
    /// The times of the steps; empty for data without time.
    pub times: Vec<NaiveDateTime>,
    /// The polygons as the query gave them: rings of positions.
    pub polygons: Vec<Vec<Vec<(f64, f64)>>>,
    /// Whether the query was a MULTIPOLYGON (a collection of polygons even when it holds one).
    pub multiple: bool,
    /// The statistics' names (`mean`, `p90`, ...), in the order asked.
    pub statistics: Vec<String>,
    /// How many cells or elements each polygon holds.
    pub cells: Vec<usize>,
    /// Per parameter, per statistic: steps x polygons values.
    pub values: Vec<Vec<Vec<f64>>>,
}

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

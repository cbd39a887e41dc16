//! Items: the named quantities a dataset carries (a GeoTIFF band, a DFS item, a mesh's
//! bathymetry, an XYZ value column).

use super::values::DataType;

/// What an item measures, in the terms of this field: a quantity with a unit, and where
/// known the EUM codes MIKE files use for them (so that a DFS round trip keeps them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Quantity {
    /// Human name, e.g. `Surface Elevation`, `Bathymetry`; empty when unknown.
    pub name: String,
    /// Unit abbreviation, e.g. `m`, `m/s`; empty when unknown.
    pub unit: String,
    /// EUM item type code, e.g. 100079 (bathymetry), when the source had one.
    pub eum_item: Option<i32>,
    /// EUM unit code, e.g. 1000 (metre), when the source had one.
    pub eum_unit: Option<i32>,
}

impl Quantity {
    /// The EUM bathymetry quantity in metres (100079 / 1000), the default of mesh z values.
    pub fn bathymetry() -> Self {
        Self {
            name: "Bathymetry".to_owned(),
            unit: "m".to_owned(),
            eum_item: Some(100_079),
            eum_unit: Some(1000),
        }
    }
}

/// How a value relates to time (DFS value types); `Instantaneous` for formats without time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueType {
    /// The value at the time step.
    #[default]
    Instantaneous,
    /// Accumulated since the start.
    Accumulated,
    /// Accumulated over the step.
    StepAccumulated,
    /// Mean over the step ending at the time.
    MeanStepBackward,
    /// Mean over the step starting at the time.
    MeanStepForward,
}

/// Where an item's values sit on a mesh. Grids always use [`ItemLocation::Cell`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ItemLocation {
    /// One value per grid cell or mesh element.
    #[default]
    Cell,
    /// One value per mesh node.
    Node,
}

/// One item of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Name as the file gives it (band description, DFS item name, column name).
    pub name: String,
    /// What it measures.
    pub quantity: Quantity,
    /// Storage type of the values.
    pub data_type: DataType,
    /// Relation to time.
    pub value_type: ValueType,
    /// The value meaning "no data", if any (GeoTIFF nodata, NODATA_value, DFS delete value).
    /// Float items may also use NaN.
    pub nodata: Option<f64>,
    /// Cells/elements or nodes.
    pub location: ItemLocation,
}

impl Item {
    /// An instantaneous cell item of `data_type` with no quantity and no nodata value.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        Self {
            name: name.into(),
            quantity: Quantity::default(),
            data_type,
            value_type: ValueType::Instantaneous,
            nodata: None,
            location: ItemLocation::Cell,
        }
    }

    /// True when `value` is this item's nodata value or NaN. Float32 items compare in float32,
    /// because a delete value such as -1e-35 is stored rounded to float32 in the file but
    /// announced in float64 in the header.
    pub fn is_nodata(&self, value: f64) -> bool {
        if value.is_nan() {
            return true;
        }
        let Some(nodata) = self.nodata else {
            return false;
        };
        if self.data_type == DataType::F32 {
            return value as f32 == nodata as f32;
        }
        nodata == value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float32_items_match_their_nodata_in_float32() {
        let mut item = Item::new("depth", DataType::F32);
        item.nodata = Some(-1e-35);
        assert!(item.is_nodata(f64::from(-1e-35_f32)));
        assert!(item.is_nodata(f64::NAN));
        assert!(!item.is_nodata(0.0));
        let mut wide = Item::new("depth", DataType::F64);
        wide.nodata = Some(-1e-35);
        assert!(!wide.is_nodata(f64::from(-1e-35_f32)));
    }
}

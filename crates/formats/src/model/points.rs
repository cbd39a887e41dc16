//! Point sets (XYZ files): scattered points with a z value and optional extra columns.
//! They arrive in chunks so that a large point cloud never has to be in memory at once.

use super::item::Item;
use crate::crs::Crs;

/// What is known of a point set before its points.
#[derive(Debug, Clone, PartialEq)]
pub struct PointHeader {
    /// Coordinate system, when known.
    pub crs: Option<Crs>,
    /// What the z column is.
    pub z_item: Item,
    /// Extra value columns besides x, y, z.
    pub items: Vec<Item>,
    /// Number of points when the reader knows it in advance.
    pub count: Option<u64>,
}

/// A chunk of points. All vectors have the same length; `items[i]` holds the values of
/// [`PointHeader::items`]`[i]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointChunk {
    /// x coordinates.
    pub x: Vec<f64>,
    /// y coordinates.
    pub y: Vec<f64>,
    /// z values.
    pub z: Vec<f64>,
    /// Extra column values.
    pub items: Vec<Vec<f64>>,
}

impl PointChunk {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True when there are no points.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

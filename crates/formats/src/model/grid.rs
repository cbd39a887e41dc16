//! Regular grids (rasters): GeoTIFF, ASCII Grid, DFS1/2/3.
//!
//! The geometry follows GDAL's conventions, because GDAL is what users compare against:
//! an affine geotransform from the *outer corner* of the first cell, rows stored top to
//! bottom for a north-up grid (negative `pixel_height`), values row-major. A DFS2 reader, whose
//! file stores rows bottom-up with the origin at a cell centre, converts into this once.

use crate::crs::Crs;

/// GDAL's six-coefficient affine transform from (column, row) to (x, y), both measured from the
/// outer corner of cell (0, 0):
/// `x = origin_x + column * pixel_width + row * row_rotation`,
/// `y = origin_y + column * column_rotation + row * pixel_height`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeoTransform {
    /// x of the outer corner of the first cell.
    pub origin_x: f64,
    /// Cell width along a row.
    pub pixel_width: f64,
    /// x change per row (0 for a north-up grid).
    pub row_rotation: f64,
    /// y of the outer corner of the first cell.
    pub origin_y: f64,
    /// y change per column (0 for a north-up grid).
    pub column_rotation: f64,
    /// Cell height along a column; negative for a north-up grid stored top row first.
    pub pixel_height: f64,
}

impl GeoTransform {
    /// A north-up transform with square or rectangular cells, from the top-left corner.
    pub fn north_up(top_left_x: f64, top_left_y: f64, cell_width: f64, cell_height: f64) -> Self {
        Self {
            origin_x: top_left_x,
            pixel_width: cell_width,
            row_rotation: 0.0,
            origin_y: top_left_y,
            column_rotation: 0.0,
            pixel_height: -cell_height,
        }
    }

    /// As GDAL's array `[origin_x, pixel_width, row_rotation, origin_y, column_rotation,
    /// pixel_height]`.
    pub fn to_gdal(self) -> [f64; 6] {
        [
            self.origin_x,
            self.pixel_width,
            self.row_rotation,
            self.origin_y,
            self.column_rotation,
            self.pixel_height,
        ]
    }

    /// From GDAL's six-number array.
    pub fn from_gdal(coefficients: [f64; 6]) -> Self {
        let [
            origin_x,
            pixel_width,
            row_rotation,
            origin_y,
            column_rotation,
            pixel_height,
        ] = coefficients;
        Self {
            origin_x,
            pixel_width,
            row_rotation,
            origin_y,
            column_rotation,
            pixel_height,
        }
    }

    /// True when rows run along x and columns along y (no rotation or shear).
    pub fn is_north_up(&self) -> bool {
        self.row_rotation == 0.0 && self.column_rotation == 0.0
    }

    /// Map coordinates of the point at fractional (column, row); (0.5, 0.5) is the centre of the
    /// first cell.
    pub fn apply(&self, column: f64, row: f64) -> (f64, f64) {
        (
            self.origin_x + column * self.pixel_width + row * self.row_rotation,
            self.origin_y + column * self.column_rotation + row * self.pixel_height,
        )
    }
}

/// The vertical axis of a 3D grid (DFS3): `count` layers from `origin`, `spacing` apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerticalAxis {
    /// z of the first layer.
    pub origin: f64,
    /// Distance between layers.
    pub spacing: f64,
    /// Number of layers.
    pub count: usize,
}

/// Shape and placement of a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct GridGeometry {
    /// Cells per row.
    pub columns: usize,
    /// Rows.
    pub rows: usize,
    /// Layers of a 3D grid; `None` for a 2D grid (one layer).
    pub vertical: Option<VerticalAxis>,
    /// Placement.
    pub transform: GeoTransform,
    /// Coordinate system, when known.
    pub crs: Option<Crs>,
}

impl GridGeometry {
    /// Number of layers (1 for a 2D grid).
    pub fn layers(&self) -> usize {
        self.vertical.map_or(1, |axis| axis.count)
    }

    /// Values of one item at one step: columns x rows x layers, or `None` on overflow.
    pub fn cells(&self) -> Option<usize> {
        self.columns
            .checked_mul(self.rows)?
            .checked_mul(self.layers())
    }

    /// Index of a value in a step's buffer (layer-major, then row, then column).
    pub fn index(&self, column: usize, row: usize, layer: usize) -> usize {
        (layer * self.rows + row) * self.columns + column
    }
}

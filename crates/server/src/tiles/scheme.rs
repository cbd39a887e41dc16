//! Tiling schemes: how a dataset is cut into tiles and coloured (docs/tiles.md#schemes).
//!
//! Every raster dataset gets two schemes per item, derived from the data so nothing has to
//! be configured: `xyz-<item>` in WebMercatorQuad for web maps, and `wmts-<item>` in the
//! dataset's own coordinate system for WMTS clients that want the data unprojected. Both
//! colour the range of the item's first step with the default ramp.

use basin_tiles::encode::OutputType;
use basin_tiles::mesh::Shading;
use basin_tiles::ramp::{DEFAULT_COLOURS, OutOfRange, Ramp, Rgb};
use basin_tiles::raster::Aggregation;
use basin_tiles::tms::{METRES_PER_DEGREE, MatrixSetCrs, TileMatrixSet};

use crate::tiles::source::{Description, Shape};

/// WMTS (the dataset's own system) or XYZ (Web Mercator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchemeType {
    /// Native coordinate system.
    Wmts,
    /// WebMercatorQuad.
    Xyz,
}

impl SchemeType {
    /// The wire name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Wmts => "WMTS",
            Self::Xyz => "XYZ",
        }
    }
}

/// Zoom levels past one cell per pixel that schemes offer, for looking closely at cells.
pub(crate) const EXTRA_LEVELS: u8 = 2;

/// The deepest XYZ level a default scheme offers (cells of 2.4 m at the equator).
pub(crate) const XYZ_LEVEL_MAX: u8 = 24;

/// A scheme, resolved against its dataset.
#[derive(Debug, Clone)]
pub(crate) struct Scheme {
    /// Identifier, unique within the dataset.
    pub(crate) id: String,
    /// WMTS or XYZ.
    pub(crate) scheme_type: SchemeType,
    /// Item index.
    pub(crate) item: usize,
    /// Item name.
    pub(crate) item_name: String,
    /// Colours and range.
    pub(crate) ramp: Ramp,
    /// Overview aggregation.
    pub(crate) aggregation: Aggregation,
    /// How meshes are shaded (grids ignore it).
    pub(crate) shading: Shading,
    /// Encoding.
    pub(crate) output: OutputType,
    /// The matrix set.
    pub(crate) matrix_set: TileMatrixSet,
    /// Out-of-range rule, as sent.
    pub(crate) out_of_range: OutOfRange,
    /// Levels kept in the blob store once rendered (tiles datasets only; sorted, distinct).
    pub(crate) stored_levels: Vec<u8>,
}

impl Scheme {
    /// Pixels per tile side.
    pub(crate) fn tile_size(&self) -> u32 {
        self.matrix_set
            .matrices
            .first()
            .map_or(256, |matrix| matrix.tile_width)
    }
}

/// The default schemes of a described dataset, item by item: XYZ first (when the dataset's
/// coordinate system reaches WGS 84), then WMTS.
pub(crate) fn default_schemes(description: &Description) -> Vec<Scheme> {
    let mut schemes = Vec::new();
    for (index, item) in description.items.iter().enumerate() {
        let (min, max) = item.range.unwrap_or((0.0, 1.0));
        let Ok(ramp) = Ramp::new(DEFAULT_COLOURS.to_vec(), min, max, OutOfRange::None) else {
            continue;
        };
        let base = |id: String, scheme_type, matrix_set| Scheme {
            id,
            scheme_type,
            item: index,
            item_name: item.name.clone(),
            ramp: ramp.clone(),
            aggregation: Aggregation::Mean,
            shading: default_shading(description, index),
            output: OutputType::Png,
            matrix_set,
            out_of_range: OutOfRange::None,
            stored_levels: Vec::new(),
        };
        if let Some(levels) = xyz_levels(description) {
            let set = TileMatrixSet::web_mercator_quad(256, levels);
            schemes.push(base(format!("xyz-{index}"), SchemeType::Xyz, set));
        }
        if let Some(set) = native_set(description, &format!("wmts-{index}"), 256) {
            schemes.push(base(format!("wmts-{index}"), SchemeType::Wmts, set));
        }
    }
    schemes
}

/// The deepest WebMercatorQuad level worth drawing: where a pixel is smaller than a cell,
/// plus [`EXTRA_LEVELS`]; `None` when the data cannot be placed in Web Mercator.
pub(crate) fn xyz_levels(description: &Description) -> Option<u8> {
    let wgs84 = description.wgs84_extent?;
    let latitude = ((wgs84.min_y + wgs84.max_y) / 2.0).to_radians();
    let metres = if description.geographic {
        description.cell_size * METRES_PER_DEGREE
    } else {
        description.cell_size
    };
    // A Web Mercator metre is 1 / cos(latitude) ground metres.
    let cell = metres / latitude.cos().max(0.01);
    let world = 2.0 * basin_tiles::tms::WEB_MERCATOR_HALF_WORLD;
    let mut level = 0_u8;
    while level < XYZ_LEVEL_MAX && world / (256.0 * 2_f64.powi(i32::from(level))) > cell {
        level += 1;
    }
    Some(level.saturating_add(EXTRA_LEVELS).min(XYZ_LEVEL_MAX))
}

pub(crate) fn native_set(
    description: &Description,
    id: &str,
    tile_size: u32,
) -> Option<TileMatrixSet> {
    let crs = MatrixSetCrs {
        epsg: description.epsg,
        geographic: description.geographic,
        metres_per_unit: if description.geographic {
            METRES_PER_DEGREE
        } else {
            1.0
        },
    };
    TileMatrixSet::native(
        id,
        crs,
        description.native_extent,
        description.cell_size,
        tile_size,
        EXTRA_LEVELS,
    )
}

/// Flat for element values, smooth for node values (they have nothing else to show).
pub(crate) fn default_shading(description: &Description, item: usize) -> Shading {
    match &description.shape {
        Shape::Mesh { locations, .. }
            if locations.get(item) == Some(&basin_tiles::mesh::ValueLocation::Nodes) =>
        {
            Shading::Smooth
        }
        _ => Shading::Flat,
    }
}

/// Colours as `#rrggbb`.
pub(crate) fn colour_names(colours: &[Rgb]) -> Vec<String> {
    colours.iter().map(ToString::to_string).collect()
}

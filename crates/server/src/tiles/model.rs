//! Wire shapes of the tile endpoints (docs/tiles.md#tiling-metadata; note the casing
//! `wgS84Extent` and `tileStorageSizeKB`, which clients expect as they are).

use serde::Serialize;

use crate::http::time::WireTime;
use crate::tiles::scheme::{Scheme, colour_names};

/// An extent.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExtentDto {
    /// Smallest x (longitude).
    pub(crate) x_min: f64,
    /// Smallest y (latitude).
    pub(crate) y_min: f64,
    /// Largest x.
    pub(crate) x_max: f64,
    /// Largest y.
    pub(crate) y_max: f64,
}

impl From<basin_tiles::tms::Bounds> for ExtentDto {
    fn from(bounds: basin_tiles::tms::Bounds) -> Self {
        Self {
            x_min: bounds.min_x,
            y_min: bounds.min_y,
            x_max: bounds.max_x,
            y_max: bounds.max_y,
        }
    }
}

/// `GET /api/tiles/dataset/{id}/metadata`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TilingMetadataDto {
    /// Extent in the dataset's own coordinate system.
    pub(crate) native_extent: ExtentDto,
    /// Extent in WGS 84 longitude and latitude; null when the coordinate system is unknown.
    #[serde(rename = "wgS84Extent")]
    pub(crate) wgs84_extent: Option<ExtentDto>,
    /// The schemes.
    pub(crate) tiling_schemes: Vec<SchemeDto>,
    /// Times of the steps (empty for data without calendar time).
    pub(crate) time_stamps: Vec<WireTime>,
    /// Layer indexes (`[0]` for 2D data).
    pub(crate) layer_ids: Vec<usize>,
    /// Kilobytes (rounded up) of the tiles stored for a tiles dataset's `storedZoomLevels`,
    /// once all are stored; 0 before, and for datasets whose tiles are all drawn on demand.
    #[serde(rename = "tileStorageSizeKB")]
    pub(crate) tile_storage_size_kb: u64,
}

/// An item and its value range as a band of a scheme.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ItemBandMappingDto {
    /// Item name.
    pub(crate) item_name: String,
    /// Value drawn with the first colour.
    pub(crate) min_value: f64,
    /// Value drawn with the last colour.
    pub(crate) max_value: f64,
    /// Band index in the output (0).
    pub(crate) band_index: usize,
}

/// A tiling scheme.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SchemeDto {
    /// Identifier, used in tile paths.
    pub(crate) scheme_id: String,
    /// `WMTS` (the dataset's own system) or `XYZ` (Web Mercator).
    pub(crate) scheme_type: &'static str,
    /// The item drawn.
    pub(crate) item_name: String,
    /// Items and their ranges.
    pub(crate) item_band_mapping: Vec<ItemBandMappingDto>,
    /// `PNG`, `WEBP`, `RawData` or `BinnedData256`.
    pub(crate) output_type: &'static str,
    /// `Mean` or `Max`: how zoomed-out tiles combine cells.
    pub(crate) aggregation_method: &'static str,
    /// Meshes: `Flat` or `Smooth` (Basin's addition; grids ignore it).
    pub(crate) shading: &'static str,
    /// Pixels across.
    pub(crate) tile_width: u32,
    /// Pixels down.
    pub(crate) tile_height: u32,
    /// The levels, from 0.
    pub(crate) zoom_levels: Vec<u8>,
    /// Value drawn with the first colour.
    pub(crate) min_value: f64,
    /// Value drawn with the last colour.
    pub(crate) max_value: f64,
    /// `None`, `Above`, `Below` or `AboveAndBelow`: which out-of-range values are transparent.
    pub(crate) render_values_out_of_range_as_transparent: &'static str,
    /// Colours, `#rrggbb`, spread evenly from `minValue` to `maxValue`.
    pub(crate) colors: Vec<String>,
    /// Map units per pixel, per level.
    pub(crate) resolutions: Vec<f64>,
    /// Scale denominators (0.28 mm pixels), per level.
    pub(crate) scale_denominators: Vec<f64>,
    /// Tiles across, per level.
    pub(crate) matrix_widths: Vec<u32>,
    /// Tiles down, per level.
    pub(crate) matrix_heights: Vec<u32>,
    /// x and y of the top-left corner of every level's tile (0, 0).
    pub(crate) top_left_corner: [f64; 2],
    /// EPSG code of the scheme's coordinate system (3857 for XYZ); null when unknown.
    pub(crate) srid: Option<u32>,
    /// `EPSG` when `srid` is set.
    pub(crate) srid_auth_name: Option<&'static str>,
    /// True when the dataset has more than one layer.
    pub(crate) has_layers: bool,
    /// The layer drawn when a request names none.
    pub(crate) layer_idx: usize,
    /// The tile URL with `{TileMatrix}`, `{TileRow}` and `{TileCol}` to fill in.
    pub(crate) tile_url_template: String,
}

impl SchemeDto {
    /// The wire form of `scheme`; `tiles_base` is `<base>/api/tiles/dataset/<id>`.
    pub(crate) fn new(scheme: &Scheme, has_layers: bool, tiles_base: &str) -> Self {
        let set = &scheme.matrix_set;
        let first = set.matrices.first();
        let (min_value, max_value) = scheme.ramp.range();
        Self {
            scheme_id: scheme.id.clone(),
            scheme_type: scheme.scheme_type.name(),
            item_name: scheme.item_name.clone(),
            item_band_mapping: vec![ItemBandMappingDto {
                item_name: scheme.item_name.clone(),
                min_value,
                max_value,
                band_index: 0,
            }],
            output_type: scheme.output.name(),
            aggregation_method: scheme.aggregation.name(),
            shading: scheme.shading.name(),
            tile_width: first.map_or(256, |matrix| matrix.tile_width),
            tile_height: first.map_or(256, |matrix| matrix.tile_height),
            zoom_levels: set.matrices.iter().map(|matrix| matrix.level).collect(),
            min_value,
            max_value,
            render_values_out_of_range_as_transparent: scheme.out_of_range.name(),
            colors: colour_names(scheme.ramp.colours()),
            resolutions: set.matrices.iter().map(|matrix| matrix.cell_size).collect(),
            scale_denominators: set
                .matrices
                .iter()
                .map(|matrix| matrix.scale_denominator)
                .collect(),
            matrix_widths: set
                .matrices
                .iter()
                .map(|matrix| matrix.matrix_width)
                .collect(),
            matrix_heights: set
                .matrices
                .iter()
                .map(|matrix| matrix.matrix_height)
                .collect(),
            top_left_corner: first
                .map_or([0.0, 0.0], |matrix| [matrix.top_left_x, matrix.top_left_y]),
            srid: set.crs.epsg,
            srid_auth_name: set.crs.epsg.map(|_| "EPSG"),
            has_layers,
            layer_idx: 0,
            tile_url_template: format!(
                "{tiles_base}/scheme/{}/{{TileMatrix}}/{{TileRow}}/{{TileCol}}",
                scheme.id
            ),
        }
    }
}

//! Tiles datasets: schemes a user defines over another dataset.
//!
//! The default schemes colour each item over its first step's range. To show a dataset
//! another way (a fixed range shared by several runs, other colours, 512-pixel tiles, WEBP,
//! raw values), a user posts scheme definitions; Basin stores them as a dataset of type
//! `tiles` (format `.tiles`) in the source's project. Its content is a small JSON document
//! naming the source, so it is listed, moved, shared, deleted and restored like any dataset,
//! and its tiles are drawn from the source's data with its own schemes. Reading its tiles needs
//! read access to both.

use basin_tiles::encode::OutputType;
use basin_tiles::mesh::Shading;
use basin_tiles::ramp::{DEFAULT_COLOURS, OutOfRange, Ramp, Rgb};
use basin_tiles::raster::Aggregation;
use basin_tiles::tms::TileMatrixSet;
use serde::{Deserialize, Serialize};

use crate::error::FieldErrors;
use crate::ids::DatasetId;
use crate::tiles::scheme::{
    Scheme, SchemeType, XYZ_LEVEL_MAX, default_shading, native_set, xyz_levels,
};
use crate::tiles::source::Description;

/// The format of tiles datasets.
pub(crate) const TILES_FORMAT: &str = ".tiles";

/// Most schemes one tiles dataset may define.
pub(crate) const SCHEMES_MAX: usize = 32;

/// Most colours of one ramp.
pub(crate) const COLOURS_MAX: usize = 256;

/// Longest scheme id.
const SCHEME_ID_CHARS_MAX: usize = 64;

/// One scheme as a client defines it (the names of docs/tiles.md#schemes); absent fields take
/// the defaults of the dataset's default scheme. Other members (a copy of a scheme from the
/// metadata, with `resolutions` and the like) are ignored.
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SchemeRequest {
    /// Identifier, unique within the tiles dataset: letters, digits, `.`, `_`, `-`; 1 to 64.
    /// Default `scheme-<index>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scheme_id: Option<String>,
    /// `WMTS` (the data's own system) or `XYZ` (Web Mercator).
    pub(crate) scheme_type: String,
    /// The item drawn; default the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) item_name: Option<String>,
    /// Value of the first colour; default the item's minimum in the first step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) min_value: Option<f64>,
    /// Value of the last colour; default the item's maximum in the first step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_value: Option<f64>,
    /// `#rrggbb` colours spread evenly from `minValue` to `maxValue`; 1 to 256.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) colors: Option<Vec<String>>,
    /// `PNG` (default), `WEBP`, `RawData` or `BinnedData256`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output_type: Option<String>,
    /// 256 (default) or 512; equal to `tileHeight`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tile_width: Option<u32>,
    /// 256 (default) or 512; equal to `tileWidth`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tile_height: Option<u32>,
    /// Levels offered: 0 to the largest listed (XYZ: at most 24).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) zoom_levels: Option<Vec<u8>>,
    /// `None` (default), `Above`, `Below` or `AboveAndBelow`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) render_values_out_of_range_as_transparent: Option<String>,
    /// `Mean` (default) or `Max`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) aggregation_method: Option<String>,
    /// Meshes: `Flat` (each element its value; the default for element values) or `Smooth`
    /// (node values interpolated; the default for node values). Grids ignore it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shading: Option<String>,
    /// Levels whose tiles are rendered once, in the background, and kept in the blob store
    /// (each one of the scheme's `zoomLevels`); the others are drawn on demand. Basin's
    /// addition; none by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stored_zoom_levels: Option<Vec<u8>>,
}

/// `POST /api/tiles/dataset/{id}/tiles`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DefineTilesRequest {
    /// Name of the new tiles dataset.
    pub(crate) name: String,
    /// Its description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// The schemes, 1 to 32.
    pub(crate) tiling_schemes: Vec<SchemeRequest>,
}

/// The stored content of a tiles dataset.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Definition {
    /// Format version, 1.
    pub(crate) version: u32,
    /// The dataset drawn.
    pub(crate) source_dataset_id: DatasetId,
    /// The schemes as defined (checked against the source when stored and again when used).
    pub(crate) tiling_schemes: Vec<SchemeRequest>,
}

/// Resolves every scheme of a definition against the source's description; errors are keyed
/// `tilingSchemes[i].<field>`.
pub(crate) fn resolve_all(
    requests: &[SchemeRequest],
    description: &Description,
) -> Result<Vec<Scheme>, FieldErrors> {
    let mut errors = FieldErrors::new();
    if requests.is_empty() || requests.len() > SCHEMES_MAX {
        errors.insert(
            "tilingSchemes".to_owned(),
            vec![format!("give 1 to {SCHEMES_MAX} schemes")],
        );
        return Err(errors);
    }
    let mut schemes: Vec<Scheme> = Vec::with_capacity(requests.len());
    for (index, request) in requests.iter().enumerate() {
        match resolve(index, request, description) {
            Ok(scheme) => {
                if schemes.iter().any(|other| other.id == scheme.id) {
                    errors.insert(
                        format!("tilingSchemes[{index}].schemeId"),
                        vec![format!("{:?} is used by an earlier scheme", scheme.id)],
                    );
                } else {
                    schemes.push(scheme);
                }
            }
            Err((field, message)) => {
                errors.insert(format!("tilingSchemes[{index}].{field}"), vec![message]);
            }
        }
    }
    if errors.is_empty() {
        Ok(schemes)
    } else {
        Err(errors)
    }
}

type Refusal = (&'static str, String);

fn parse_choice<T>(
    field: &'static str,
    text: Option<&str>,
    default: T,
    parse: fn(&str) -> Option<T>,
    allowed: &str,
) -> Result<T, Refusal> {
    match text {
        None => Ok(default),
        Some(text) => {
            parse(text.trim()).ok_or_else(|| (field, format!("{text:?} is not one of {allowed}")))
        }
    }
}

/// One scheme, checked against the source.
pub(crate) fn resolve(
    index: usize,
    request: &SchemeRequest,
    description: &Description,
) -> Result<Scheme, Refusal> {
    let id = scheme_id(index, request.scheme_id.as_deref())?;
    let scheme_type = match request.scheme_type.trim().to_ascii_uppercase().as_str() {
        "XYZ" => SchemeType::Xyz,
        "WMTS" => SchemeType::Wmts,
        _ => {
            return Err((
                "schemeType",
                format!("{:?} is not one of WMTS, XYZ", request.scheme_type),
            ));
        }
    };
    let item = item_index(request.item_name.as_deref(), description)?;
    let summary = description
        .items
        .get(item)
        .ok_or_else(|| ("itemName", "the dataset has no items".to_owned()))?;
    let (data_min, data_max) = summary.range.unwrap_or((0.0, 1.0));
    let min = request.min_value.unwrap_or(data_min);
    let max = request.max_value.unwrap_or(data_max);
    if !(min.is_finite() && max.is_finite()) || min > max {
        return Err((
            "minValue",
            format!(
                "minValue ({min}) and maxValue ({max}) must be numbers with minValue <= maxValue"
            ),
        ));
    }
    let out_of_range = parse_choice(
        "renderValuesOutOfRangeAsTransparent",
        request.render_values_out_of_range_as_transparent.as_deref(),
        OutOfRange::None,
        OutOfRange::parse,
        "None, Above, Below, AboveAndBelow",
    )?;
    let ramp = Ramp::new(colours(request.colors.as_deref())?, min, max, out_of_range)
        .map_err(|error| ("colors", error.to_string()))?;
    let matrix_set = matrix_set(&id, scheme_type, request, description)?;
    let stored_levels = stored_levels(request.stored_zoom_levels.as_deref(), &matrix_set)?;
    Ok(Scheme {
        scheme_type,
        item,
        item_name: summary.name.clone(),
        ramp,
        aggregation: parse_choice(
            "aggregationMethod",
            request.aggregation_method.as_deref(),
            Aggregation::Mean,
            Aggregation::parse,
            "Mean, Max",
        )?,
        output: parse_choice(
            "outputType",
            request.output_type.as_deref(),
            OutputType::Png,
            OutputType::parse,
            "PNG, WEBP, RawData, BinnedData256",
        )?,
        matrix_set,
        stored_levels,
        shading: parse_choice(
            "shading",
            request.shading.as_deref(),
            default_shading(description, item),
            Shading::parse,
            "Flat, Smooth",
        )?,
        out_of_range,
        id,
    })
}

/// The levels to store, sorted and without repeats: each must be a level of the scheme.
/// Most entries a `storedZoomLevels` list may have: every level of a scheme is below 256, so
/// a longer list only repeats them (and would bloat the stored definition).
const STORED_LEVELS_LISTED_MAX: usize = 256;

fn stored_levels(requested: Option<&[u8]>, set: &TileMatrixSet) -> Result<Vec<u8>, Refusal> {
    let Some(requested) = requested else {
        return Ok(Vec::new());
    };
    if requested.len() > STORED_LEVELS_LISTED_MAX {
        return Err((
            "storedZoomLevels",
            format!("list at most {STORED_LEVELS_LISTED_MAX} levels"),
        ));
    }
    let deepest = set.matrices.len().saturating_sub(1);
    if let Some(outside) = requested
        .iter()
        .find(|&&level| usize::from(level) > deepest)
    {
        return Err((
            "storedZoomLevels",
            format!("level {outside} is not one of this scheme's zoomLevels, 0 to {deepest}"),
        ));
    }
    let mut levels = requested.to_vec();
    levels.sort_unstable();
    levels.dedup();
    Ok(levels)
}

fn scheme_id(index: usize, requested: Option<&str>) -> Result<String, Refusal> {
    let Some(id) = requested else {
        return Ok(format!("scheme-{index}"));
    };
    let valid = !id.is_empty()
        && id.chars().count() <= SCHEME_ID_CHARS_MAX
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !valid || id == "emptyTile" {
        return Err((
            "schemeId",
            format!(
                "use 1 to {SCHEME_ID_CHARS_MAX} letters, digits, '.', '_' or '-' (and not emptyTile)"
            ),
        ));
    }
    Ok(id.to_owned())
}

/// The item named `name` (exactly, else in any case); the first when none is named.
fn item_index(name: Option<&str>, description: &Description) -> Result<usize, Refusal> {
    let Some(name) = name else {
        return Ok(0);
    };
    let items = &description.items;
    items
        .iter()
        .position(|item| item.name == name)
        .or_else(|| {
            items
                .iter()
                .position(|item| item.name.eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| {
            let names: Vec<&str> = items.iter().map(|item| item.name.as_str()).collect();
            (
                "itemName",
                format!("the dataset has no item {name:?}; it has {names:?}"),
            )
        })
}

fn colours(requested: Option<&[String]>) -> Result<Vec<Rgb>, Refusal> {
    match requested {
        None => Ok(DEFAULT_COLOURS.to_vec()),
        Some(colours) if colours.is_empty() || colours.len() > COLOURS_MAX => {
            Err(("colors", format!("give 1 to {COLOURS_MAX} colours")))
        }
        Some(colours) => colours
            .iter()
            .map(|text| {
                Rgb::parse(text.trim())
                    .ok_or_else(|| ("colors", format!("{text:?} is not a colour like #1f6fb2")))
            })
            .collect(),
    }
}

/// The matrix set of a scheme: tile size and levels as requested, within what the data allows.
fn matrix_set(
    id: &str,
    scheme_type: SchemeType,
    request: &SchemeRequest,
    description: &Description,
) -> Result<TileMatrixSet, Refusal> {
    let width = request.tile_width.or(request.tile_height).unwrap_or(256);
    let height = request.tile_height.unwrap_or(width);
    if width != height || !matches!(width, 256 | 512) {
        return Err((
            "tileWidth",
            "tileWidth and tileHeight must be equal, 256 or 512".to_owned(),
        ));
    }
    let deepest = request
        .zoom_levels
        .as_ref()
        .and_then(|levels| levels.iter().max().copied());
    match scheme_type {
        SchemeType::Xyz => {
            let default = xyz_levels(description).ok_or_else(|| {
                (
                    "schemeType",
                    "XYZ needs data whose coordinate system is known and reaches WGS 84; use WMTS"
                        .to_owned(),
                )
            })?;
            let levels = deepest.unwrap_or(default);
            if levels > XYZ_LEVEL_MAX {
                return Err(("zoomLevels", format!("XYZ levels go up to {XYZ_LEVEL_MAX}")));
            }
            Ok(TileMatrixSet::web_mercator_quad(width, levels))
        }
        SchemeType::Wmts => {
            let mut set = native_set(description, id, width)
                .ok_or_else(|| ("schemeType", "the data has no usable extent".to_owned()))?;
            if let Some(deepest) = deepest {
                if usize::from(deepest) >= set.matrices.len() {
                    return Err((
                        "zoomLevels",
                        format!(
                            "this dataset's WMTS levels go up to {}",
                            set.matrices.len().saturating_sub(1)
                        ),
                    ));
                }
                set.matrices.truncate(usize::from(deepest) + 1);
            }
            Ok(set)
        }
    }
}

//! The WMTS side of tiles: key-value requests (names in any case, as OGC asks) and the
//! capabilities document, as XML for OGC clients (GDAL, QGIS, OWSLib, ArcGIS) and as JSON for
//! the platform's own clients.
//!
//! Each item of a dataset is one WMTS layer (`item-<index>`); its tile matrix sets are the
//! item's schemes, so the same layer can be read in Web Mercator or in the data's own system.
//! Tiles are announced as ResourceURL templates pointing at the scheme tile endpoint, and as
//! key-value GetTile on the same `wmts` URL. In the XML, a matrix set's identifier is its
//! scheme's id, and one template per layer names it with `{TileMatrixSet}`: GDAL takes the
//! first tile template of a layer whatever matrix set it reads, so a template per scheme
//! would send it to the Web Mercator tiles when it reads the native ones.

use basin_tiles::tms::{Bounds, TileMatrixSet};
use basin_tiles::wmts::{
    self, Capabilities, Layer, LayerMatrixSet, ResourceUrl, TimeDimension, ValueDimension,
};
use chrono::SecondsFormat;
use serde::Serialize;

use crate::datasets::model::DatasetRow;
use crate::error::ApiError;
use crate::http::time::WireTime;
use crate::tiles::scheme::{Scheme, SchemeType};
use crate::tiles::service::{TileAddress, Tileable};
use crate::tiles::source::Description;

/// The WMTS layer identifier of item `index`.
pub(crate) fn layer_id(index: usize) -> String {
    format!("item-{index}")
}

/// A key-value request, names lower-cased.
#[derive(Debug, Default)]
pub(crate) struct KvpRequest {
    /// `request`, lower case; `getcapabilities` when absent.
    pub(crate) request: String,
    parameters: Vec<(String, String)>,
}

/// A GetTile request resolved to a scheme tile.
#[derive(Debug)]
pub(crate) struct KvpTile {
    /// `LAYER` as sent.
    pub(crate) layer: String,
    /// The item it names.
    pub(crate) item: usize,
    /// The scheme (`TILEMATRIXSET`).
    pub(crate) scheme: String,
    /// Where.
    pub(crate) address: TileAddress,
}

impl KvpRequest {
    /// Parses a query string. `SERVICE`, when sent, must be `WMTS`; `VERSION`, when sent,
    /// `1.0.0`.
    pub(crate) fn parse(query: &str) -> Result<Self, ApiError> {
        let parameters: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .map(|(name, value)| (name.to_ascii_lowercase(), value.into_owned()))
            .collect();
        if parameters.iter().any(|(_, value)| value.contains('\0')) {
            return Err(ApiError::field("query", "parameters may not contain NUL"));
        }
        let request = Self {
            request: String::new(),
            parameters,
        };
        if let Some(service) = request.get("service")
            && !service.eq_ignore_ascii_case("wmts")
        {
            return Err(ApiError::field(
                "SERVICE",
                format!("SERVICE must be WMTS, not {service:?}"),
            ));
        }
        if let Some(version) = request.get("version")
            && version.trim() != "1.0.0"
        {
            return Err(ApiError::field(
                "VERSION",
                format!("VERSION must be 1.0.0, not {version:?}"),
            ));
        }
        let name = request
            .get("request")
            .map(|value| value.trim().to_ascii_lowercase())
            .filter(|value| !value.is_empty())
            .unwrap_or_else(|| "getcapabilities".to_owned());
        Ok(Self {
            request: name,
            ..request
        })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.parameters
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn required(&self, name: &'static str) -> Result<&str, ApiError> {
        self.get(name)
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .ok_or_else(|| {
                ApiError::field(
                    name.to_ascii_uppercase(),
                    format!("GetTile needs {}", name.to_ascii_uppercase()),
                )
            })
    }

    /// The tile a GetTile names. `LAYER` must be an item layer (`item-<index>`) and
    /// `TILEMATRIXSET` one of its schemes; [`KvpTile::check`] checks the pair against the
    /// dataset.
    pub(crate) fn tile(&self) -> Result<KvpTile, ApiError> {
        let layer = self.required("layer")?.to_owned();
        let scheme = self.required("tilematrixset")?.to_owned();
        let matrix = self.required("tilematrix")?.to_owned();
        let row = crate::tiles::routes::tile_index("TILEROW", self.required("tilerow")?)?;
        let col = crate::tiles::routes::tile_index("TILECOL", self.required("tilecol")?)?;
        let item = layer
            .strip_prefix("item-")
            .and_then(|index| index.parse::<usize>().ok())
            .ok_or_else(|| {
                ApiError::field(
                    "LAYER",
                    format!("LAYER {layer:?} is not a layer of the capabilities (item-<index>)"),
                )
            })?;
        let time_step = self
            .get("time")
            .or_else(|| self.get("timestep"))
            .map(str::to_owned);
        Ok(KvpTile {
            layer,
            item,
            scheme,
            address: TileAddress {
                matrix,
                row,
                col,
                layer: self
                    .get(&VERTICAL_LAYER_DIMENSION.to_ascii_lowercase())
                    .or_else(|| self.get("dim_layer"))
                    .map(str::to_owned),
                time_step,
                output: crate::tiles::routes::output_type(self.get("outputtype"))?,
            },
        })
    }
}

impl KvpTile {
    /// 400 naming `LAYER` unless the scheme draws the layer's item (an unknown scheme is
    /// left to the tile lookup, which answers 404).
    pub(crate) fn check(&self, tileable: &Tileable) -> Result<(), ApiError> {
        match tileable.scheme(&self.scheme) {
            Ok(scheme) if scheme.item != self.item => Err(ApiError::field(
                "LAYER",
                format!(
                    "LAYER {:?} has no tile matrix set {:?}; see the capabilities",
                    self.layer, self.scheme
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// The JSON capabilities.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CapabilitiesDto {
    /// The dataset's name.
    title: String,
    /// Layers, one per item.
    layers: Vec<LayerDto>,
    /// Matrix sets, one per scheme.
    tile_matrix_sets: Vec<MatrixSetDto>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LayerDto {
    identifier: String,
    title: String,
    wgs84_bounding_box: Option<[f64; 4]>,
    formats: Vec<&'static str>,
    tile_matrix_set_links: Vec<String>,
    resource_urls: Vec<ResourceUrlDto>,
    time_stamps: Vec<WireTime>,
    /// The vertical layers (`[0]` for 2D data); the `{VerticalLayer}` of the templates.
    layer_ids: Vec<usize>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceUrlDto {
    tile_matrix_set: String,
    format: &'static str,
    template: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MatrixSetDto {
    identifier: String,
    supported_crs: Option<String>,
    tile_matrices: Vec<MatrixDto>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MatrixDto {
    identifier: String,
    scale_denominator: f64,
    top_left_corner: [f64; 2],
    tile_width: u32,
    tile_height: u32,
    matrix_width: u32,
    matrix_height: u32,
}

/// The identifier of the WMTS dimension of a layered (3D) dataset's vertical layers, and so
/// the name of its template placeholder and KVP parameter. Not `Layer`: GetTile's `LAYER`
/// names the WMTS layer (the item).
pub(crate) const VERTICAL_LAYER_DIMENSION: &str = "VerticalLayer";

/// The query of a tile URL template: the step by the `Time` dimension when the data has
/// times, the layer by the vertical layer dimension when it has several.
fn query_template(description: &Description) -> String {
    let mut parts = Vec::new();
    if !description.times.is_empty() {
        parts.push("timeStep={Time}".to_owned());
    }
    if description.layers > 1 {
        parts.push(format!("layer={{{VERTICAL_LAYER_DIMENSION}}}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// The tile URL template of `scheme`, with the dimensions of `description`.
fn resource_template(scheme: &Scheme, tiles_base: &str, description: &Description) -> String {
    format!(
        "{tiles_base}/scheme/{}/{{TileMatrix}}/{{TileRow}}/{{TileCol}}{}",
        scheme.id,
        query_template(description)
    )
}

/// The JSON capabilities of a dataset.
pub(crate) fn json(row: &DatasetRow, tileable: &Tileable, tiles_base: &str) -> CapabilitiesDto {
    let description = &tileable.description;
    let layers = description
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let schemes: Vec<&Scheme> = tileable
                .schemes
                .iter()
                .filter(|scheme| scheme.item == index)
                .collect();
            LayerDto {
                identifier: layer_id(index),
                title: item.name.clone(),
                wgs84_bounding_box: description
                    .wgs84_extent
                    .map(|bounds| [bounds.min_x, bounds.min_y, bounds.max_x, bounds.max_y]),
                formats: schemes
                    .first()
                    .map(|scheme| vec![scheme.output.media_type()])
                    .unwrap_or_default(),
                tile_matrix_set_links: schemes.iter().map(|scheme| scheme.id.clone()).collect(),
                resource_urls: schemes
                    .iter()
                    .map(|scheme| ResourceUrlDto {
                        tile_matrix_set: scheme.id.clone(),
                        format: scheme.output.media_type(),
                        template: resource_template(scheme, tiles_base, description),
                    })
                    .collect(),
                time_stamps: description
                    .times
                    .iter()
                    .map(|time| WireTime(time.and_utc()))
                    .collect(),
                layer_ids: (0..description.layers.max(1)).collect(),
            }
        })
        .collect();
    CapabilitiesDto {
        title: row.name.clone(),
        layers,
        tile_matrix_sets: tileable
            .schemes
            .iter()
            .map(|scheme| MatrixSetDto {
                identifier: scheme.id.clone(),
                supported_crs: scheme
                    .matrix_set
                    .crs
                    .epsg
                    .map(|code| format!("urn:ogc:def:crs:EPSG::{code}")),
                tile_matrices: scheme
                    .matrix_set
                    .matrices
                    .iter()
                    .map(|matrix| MatrixDto {
                        identifier: matrix.id.clone(),
                        scale_denominator: matrix.scale_denominator,
                        top_left_corner: [matrix.top_left_x, matrix.top_left_y],
                        tile_width: matrix.tile_width,
                        tile_height: matrix.tile_height,
                        matrix_width: matrix.matrix_width,
                        matrix_height: matrix.matrix_height,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The one RESTful tile template of every layer of the XML capabilities: the scheme tile
/// endpoint with the matrix set (= scheme id) as a placeholder.
fn xml_resource_template(tiles_base: &str, description: &Description) -> String {
    format!(
        "{tiles_base}/scheme/{{TileMatrixSet}}/{{TileMatrix}}/{{TileRow}}/{{TileCol}}{}",
        query_template(description)
    )
}

/// The RESTful address of the XML capabilities (the `wmts100` name of docs/tiles.md#endpoints).
pub(crate) fn restful_capabilities_url(tiles_base: &str) -> String {
    format!("{tiles_base}/wmts100/1.0.0/WMTSCapabilities.xml")
}

/// The part of `data` inside `set`'s area; `None` when they do not meet or `data` is not a
/// rectangle (an extent reaching a pole is infinite in Web Mercator).
fn within(data: Option<Bounds>, set: &TileMatrixSet) -> Option<Bounds> {
    let data = data?;
    let clamped = Bounds {
        min_x: data.min_x.max(set.bounds.min_x),
        min_y: data.min_y.max(set.bounds.min_y),
        max_x: data.max_x.min(set.bounds.max_x),
        max_y: data.max_y.min(set.bounds.max_y),
    };
    clamped.is_valid().then_some(clamped)
}

/// The XML capabilities of a dataset (OGC 07-057r7): a layer per item whose matrix sets are
/// its schemes, each limited to the data, with the steps' times as the `Time` dimension
/// (the first step is the default, as for a tile request without `timeStep`).
pub(crate) fn xml(
    row: &DatasetRow,
    tileable: &Tileable,
    tiles_base: &str,
) -> Result<String, ApiError> {
    let description = &tileable.description;
    let times: Vec<String> = description
        .times
        .iter()
        .map(|time| time.and_utc().to_rfc3339_opts(SecondsFormat::AutoSi, true))
        .collect();
    let template = xml_resource_template(tiles_base, description);
    let layers = (0..description.items.len())
        .map(|index| xml_layer(tileable, index, &template, &times))
        .filter(|layer| !layer.matrix_sets.is_empty())
        .collect();
    let capabilities = Capabilities {
        title: row.name.clone(),
        kvp_url: format!("{tiles_base}/wmts?"),
        layers,
        matrix_sets: tileable
            .schemes
            .iter()
            .map(|scheme| TileMatrixSet {
                id: scheme.id.clone(),
                ..scheme.matrix_set.clone()
            })
            .collect(),
        service_metadata_url: Some(restful_capabilities_url(tiles_base)),
    };
    wmts::capabilities_xml(&capabilities).map_err(|error| ApiError::Internal(error.into()))
}

/// The layer of item `index`: its schemes as matrix sets, one template per format.
fn xml_layer(tileable: &Tileable, index: usize, template: &str, times: &[String]) -> Layer {
    let description = &tileable.description;
    let schemes: Vec<&Scheme> = tileable
        .schemes
        .iter()
        .filter(|scheme| scheme.item == index)
        .collect();
    let mut formats: Vec<String> = Vec::new();
    for scheme in &schemes {
        let format = scheme.output.media_type().to_owned();
        if !formats.contains(&format) {
            formats.push(format);
        }
    }
    let mercator_extent = description.mercator_extent();
    Layer {
        identifier: layer_id(index),
        title: description
            .items
            .get(index)
            .map(|item| item.name.clone())
            .unwrap_or_default(),
        wgs84_bounds: description.wgs84_extent.filter(Bounds::is_valid),
        styles: vec!["default".to_owned()],
        resource_urls: formats
            .iter()
            .map(|format| ResourceUrl {
                format: format.clone(),
                template: template.to_owned(),
            })
            .collect(),
        formats,
        matrix_sets: schemes
            .iter()
            .map(|scheme| {
                let data = match scheme.scheme_type {
                    SchemeType::Xyz => mercator_extent,
                    SchemeType::Wmts => Some(description.native_extent),
                };
                LayerMatrixSet {
                    id: scheme.id.clone(),
                    bounds: within(data, &scheme.matrix_set),
                }
            })
            .collect(),
        time: times.first().map(|first| TimeDimension {
            values: times.to_vec(),
            default: first.clone(),
        }),
        dimensions: if description.layers > 1 {
            vec![ValueDimension {
                identifier: VERTICAL_LAYER_DIMENSION.to_owned(),
                default: "0".to_owned(),
                values: (0..description.layers)
                    .map(|layer| layer.to_string())
                    .collect(),
            }]
        } else {
            Vec::new()
        },
    }
}

//! The WMTS 1.0.0 GetCapabilities document (OGC 07-057r7), built from plain data.
//!
//! GIS clients (GDAL, QGIS, OWSLib, ArcGIS) learn everything about a tiled dataset from this
//! one XML document: the layers, the tile matrix sets (levels, scales, corners, matrix sizes),
//! where each layer has data, and how to ask for a tile (a ResourceURL template for RESTful
//! clients and a key-value GetTile URL for the others). The server fills [`Capabilities`]
//! from what it knows; this module only writes, so it can be tested against real clients
//! without HTTP.
//!
//! Three things are easy to get wrong and are decided here:
//! - **Axis order.** Corners are written in the axis order EPSG gives the system, because
//!   that is how clients read them back: GDAL swaps the two numbers of a
//!   `urn:ogc:def:crs:EPSG::<code>` system that EPSG defines latitude first (geographic) or
//!   northing first (projected, e.g. Gauss-Krüger zones and ETRS89-LAEA), and writing
//!   easting first there would move the data by thousands of kilometres. The facts come from
//!   PROJ's database ([`axis_tables`], generated), since the WKT of Basin's registry has no
//!   AXIS. `WGS84BoundingBox` is always longitude first (OWS 1.1, 10.2.5).
//! - **Escaping.** Names and titles come from users. Everything is escaped, nothing is
//!   refused: characters XML 1.0 cannot carry at all (most C0 controls) become U+FFFD, and
//!   CR, LF and TAB in attributes become character references, so that a parser gives back
//!   exactly what was written.
//! - **One template per layer and format.** GDAL takes the first tile ResourceURL of a format
//!   whatever matrix set it reads, and OWSLib picks one at random, so a layer linked to
//!   several matrix sets needs one template with `{TileMatrixSet}` in it, not one per set.
//!   [`capabilities_xml`] refuses documents that would send a client to the wrong tiles.

mod axis_tables;

use std::fmt;
use std::fmt::Write as _;

use crate::tms::{Bounds, MatrixSetCrs, TileMatrix, TileMatrixSet};

/// The inputs of a capabilities document.
#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    /// Title of the service (the dataset's name).
    pub title: String,
    /// The key-value endpoint announced for GetCapabilities and GetTile (OGC asks that it
    /// ends with `?` or `&`; it is written as given).
    pub kvp_url: String,
    /// The layers.
    pub layers: Vec<Layer>,
    /// Every tile matrix set a layer links to.
    pub matrix_sets: Vec<TileMatrixSet>,
    /// Where this document can be fetched in the RESTful way (ServiceMetadataURL), if
    /// anywhere.
    pub service_metadata_url: Option<String>,
}

/// A layer: something a client can draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// Identifier, unique in the document; what GetTile's `LAYER` names.
    pub identifier: String,
    /// Title shown to people.
    pub title: String,
    /// Where the layer has data, in longitude and latitude (WGS 84), when known.
    pub wgs84_bounds: Option<Bounds>,
    /// Style identifiers, the default first. WMTS needs at least one, so an empty list is
    /// written as one style `default`.
    pub styles: Vec<String>,
    /// Tile media types (`image/png`, ...). An empty list is written as the formats of
    /// [`Layer::resource_urls`].
    pub formats: Vec<String>,
    /// RESTful tile URL templates, at most one per format.
    pub resource_urls: Vec<ResourceUrl>,
    /// The matrix sets the layer can be read in.
    pub matrix_sets: Vec<LayerMatrixSet>,
    /// The time dimension, when the layer has several times.
    pub time: Option<TimeDimension>,
    /// Other dimensions (vertical layers, say), written after the time.
    pub dimensions: Vec<ValueDimension>,
}

/// A RESTful tile URL template.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceUrl {
    /// The media type of the tiles.
    pub format: String,
    /// The URL with `{TileMatrix}`, `{TileRow}` and `{TileCol}`, and `{TileMatrixSet}` when
    /// the layer has several matrix sets; `{Style}`, `{Time}` (with a time dimension) and the
    /// identifier of any of the layer's [`Layer::dimensions`] may appear too. No other braces may (OWSLib fills templates with Python's `str.format`).
    pub template: String,
}

/// A link from a layer to one matrix set.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerMatrixSet {
    /// Identifier of a [`TileMatrixSet`] of [`Capabilities::matrix_sets`].
    pub id: String,
    /// Where the layer has data, in the matrix set's coordinate system. When given, it is
    /// written as the layer's BoundingBox in that system (GDAL's extent) and gives the
    /// TileMatrixSetLimits of every level, so clients ask for no tile outside the data.
    pub bounds: Option<Bounds>,
}

/// The `Time` dimension of a layer: the values a `{Time}` template placeholder and the KVP
/// `TIME` parameter take.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeDimension {
    /// The times (ISO 8601), at least one.
    pub values: Vec<String>,
    /// The time a client gets when it names none (GDAL always uses it).
    pub default: String,
}

/// A dimension of a layer other than time (OGC 07-057r7, 7.2.4.6.5): the values a
/// `{identifier}` template placeholder and the KVP parameter of that name take.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueDimension {
    /// Identifier: the template placeholder's name. Not `Time`, not a placeholder of the tile
    /// address, no braces.
    pub identifier: String,
    /// The value a client gets when it names none (GDAL always uses it).
    pub default: String,
    /// The values, at least one.
    pub values: Vec<String>,
}

/// Why a document was not written: inputs that would send clients to the wrong tiles or
/// that clients cannot read. These are mistakes of the caller, not of its users.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WmtsError {
    /// Two layers, or two matrix sets, have the same identifier.
    DuplicateIdentifier {
        /// `layer` or `matrix set`.
        kind: &'static str,
        /// The identifier.
        identifier: String,
    },
    /// A layer links to no matrix set.
    NoMatrixSet {
        /// The layer.
        layer: String,
    },
    /// A layer links to a matrix set that is not in the document.
    UnknownMatrixSet {
        /// The layer.
        layer: String,
        /// The missing matrix set.
        matrix_set: String,
    },
    /// A matrix set has no level.
    EmptyMatrixSet {
        /// The matrix set.
        matrix_set: String,
    },
    /// Bounds that are not finite, inverted, or outside the matrix set they are given for.
    InvalidBounds {
        /// The layer or matrix set.
        owner: String,
    },
    /// A template whose placeholders do not fit the layer: a missing `{TileMatrix}`,
    /// `{TileRow}` or `{TileCol}`, no `{TileMatrixSet}` for a layer with several matrix
    /// sets, `{Time}` without a time dimension, or an unknown placeholder.
    Template {
        /// The layer.
        layer: String,
        /// What is wrong.
        problem: String,
    },
    /// A time dimension without values.
    EmptyTimeDimension {
        /// The layer.
        layer: String,
    },
    /// A dimension without values, or whose identifier a template could not name.
    BadDimension {
        /// The layer.
        layer: String,
        /// The dimension's identifier.
        dimension: String,
    },
}

impl fmt::Display for WmtsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateIdentifier { kind, identifier } => {
                write!(f, "two of the {kind}s are called {identifier:?}")
            }
            Self::NoMatrixSet { layer } => write!(f, "layer {layer:?} has no tile matrix set"),
            Self::UnknownMatrixSet { layer, matrix_set } => write!(
                f,
                "layer {layer:?} links to tile matrix set {matrix_set:?}, which is not in the document"
            ),
            Self::EmptyMatrixSet { matrix_set } => {
                write!(f, "tile matrix set {matrix_set:?} has no tile matrix")
            }
            Self::InvalidBounds { owner } => write!(f, "the bounds of {owner:?} are not usable"),
            Self::Template { layer, problem } => {
                write!(f, "the tile template of layer {layer:?}: {problem}")
            }
            Self::BadDimension { layer, dimension } => write!(
                f,
                "dimension {dimension:?} of layer {layer:?} has no values or an identifier a \
                 template cannot name"
            ),
            Self::EmptyTimeDimension { layer } => {
                write!(f, "the time dimension of layer {layer:?} has no values")
            }
        }
    }
}

impl std::error::Error for WmtsError {}

/// The identifier of the time dimension, and so the name of its template placeholder.
pub const TIME_DIMENSION: &str = "Time";

/// The well-known scale set of WebMercatorQuad with 256-pixel tiles (OGC 07-057r7, E.4).
pub const GOOGLE_MAPS_COMPATIBLE: &str = "urn:ogc:def:wkss:OGC:1.0:GoogleMapsCompatible";

/// The placeholders a template may hold besides the time dimension.
const TEMPLATE_PLACEHOLDERS: [&str; 5] =
    ["TileMatrixSet", "TileMatrix", "TileRow", "TileCol", "Style"];

/// The `SupportedCRS` of a matrix set: `urn:ogc:def:crs:EPSG::<code>`, or, for a system
/// without an EPSG code (a local grid), an OGC WKT 1 `LOCAL_CS` in metres, which GDAL reads
/// (it has no URN for "unknown").
pub fn supported_crs(crs: &MatrixSetCrs) -> String {
    match crs.epsg {
        Some(code) => format!("urn:ogc:def:crs:EPSG::{code}"),
        None => format!(
            "LOCAL_CS[\"Unknown\",UNIT[\"metre\",{}],AXIS[\"Easting\",EAST],AXIS[\"Northing\",NORTH]]",
            number(crs.metres_per_unit)
        ),
    }
}

/// True when EPSG gives the system's axes as latitude/northing first, so that positions are
/// written (y, x). Geographic systems are latitude first except a few "(lon-lat)" variants;
/// projected systems are northing first when PROJ's database says so; systems without a code
/// are (x, y).
pub fn northing_first(crs: &MatrixSetCrs) -> bool {
    let Some(code) = crs.epsg.and_then(|code| u16::try_from(code).ok()) else {
        return false;
    };
    if crs.geographic {
        axis_tables::GEOGRAPHIC_LONGITUDE_FIRST
            .binary_search(&code)
            .is_err()
    } else {
        axis_tables::PROJECTED_NORTHING_FIRST
            .iter()
            .any(|&(first, last)| (first..=last).contains(&code))
    }
}

/// The tile range of one level a layer has data in (TileMatrixLimits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileMatrixLimits {
    /// The level's identifier.
    pub matrix: String,
    /// First row with data.
    pub min_row: u32,
    /// Last row with data.
    pub max_row: u32,
    /// First column with data.
    pub min_col: u32,
    /// Last column with data.
    pub max_col: u32,
}

/// The tiles of each level of `set` that overlap `bounds` (in the set's system). Levels with
/// no overlap are left out.
pub fn matrix_limits(set: &TileMatrixSet, bounds: &Bounds) -> Vec<TileMatrixLimits> {
    set.matrices
        .iter()
        .filter_map(|matrix| {
            let (min_row, min_col, max_row, max_col) = matrix.tiles_covering(bounds)?;
            Some(TileMatrixLimits {
                matrix: matrix.id.clone(),
                min_row,
                max_row,
                min_col,
                max_col,
            })
        })
        .collect()
}

/// The GetCapabilities XML document. Checks the structure first (see [`WmtsError`]); text
/// is never refused, only escaped.
pub fn capabilities_xml(capabilities: &Capabilities) -> Result<String, WmtsError> {
    check(capabilities)?;
    let mut xml = Xml::default();
    xml.declaration();
    xml.open(
        "Capabilities",
        &[
            ("xmlns", "http://www.opengis.net/wmts/1.0"),
            ("xmlns:ows", "http://www.opengis.net/ows/1.1"),
            ("xmlns:xlink", "http://www.w3.org/1999/xlink"),
            ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
            (
                "xsi:schemaLocation",
                "http://www.opengis.net/wmts/1.0 \
                 http://schemas.opengis.net/wmts/1.0/wmtsGetCapabilities_response.xsd",
            ),
            ("version", "1.0.0"),
        ],
    );
    write_service_identification(&mut xml, &capabilities.title);
    write_operations(&mut xml, &capabilities.kvp_url);
    xml.open("Contents", &[]);
    for layer in &capabilities.layers {
        write_layer(&mut xml, layer, &capabilities.matrix_sets);
    }
    for set in &capabilities.matrix_sets {
        write_matrix_set(&mut xml, set);
    }
    xml.close("Contents");
    if let Some(url) = &capabilities.service_metadata_url {
        xml.empty_element("ServiceMetadataURL", &[("xlink:href", url)]);
    }
    xml.close("Capabilities");
    Ok(xml.finish())
}

fn check(capabilities: &Capabilities) -> Result<(), WmtsError> {
    let layer_ids: Vec<&str> = capabilities
        .layers
        .iter()
        .map(|layer| layer.identifier.as_str())
        .collect();
    let set_ids: Vec<&str> = capabilities
        .matrix_sets
        .iter()
        .map(|set| set.id.as_str())
        .collect();
    check_unique("layer", &layer_ids)?;
    check_unique("matrix set", &set_ids)?;
    for set in &capabilities.matrix_sets {
        if set.matrices.is_empty() {
            return Err(WmtsError::EmptyMatrixSet {
                matrix_set: set.id.clone(),
            });
        }
        if !set.bounds.is_valid() {
            return Err(WmtsError::InvalidBounds {
                owner: set.id.clone(),
            });
        }
    }
    capabilities
        .layers
        .iter()
        .try_for_each(|layer| check_layer(layer, &capabilities.matrix_sets))
}

fn check_unique(kind: &'static str, identifiers: &[&str]) -> Result<(), WmtsError> {
    let mut sorted = identifiers.to_vec();
    sorted.sort_unstable();
    match sorted.windows(2).find(|pair| pair.first() == pair.get(1)) {
        Some(pair) => Err(WmtsError::DuplicateIdentifier {
            kind,
            identifier: pair.first().copied().unwrap_or_default().to_owned(),
        }),
        None => Ok(()),
    }
}

fn check_layer(layer: &Layer, sets: &[TileMatrixSet]) -> Result<(), WmtsError> {
    let invalid = || WmtsError::InvalidBounds {
        owner: layer.identifier.clone(),
    };
    if layer.matrix_sets.is_empty() {
        return Err(WmtsError::NoMatrixSet {
            layer: layer.identifier.clone(),
        });
    }
    if layer.wgs84_bounds.is_some_and(|bounds| !bounds.is_valid()) {
        return Err(invalid());
    }
    for link in &layer.matrix_sets {
        let Some(set) = sets.iter().find(|set| set.id == link.id) else {
            return Err(WmtsError::UnknownMatrixSet {
                layer: layer.identifier.clone(),
                matrix_set: link.id.clone(),
            });
        };
        if let Some(bounds) = &link.bounds
            && !(bounds.is_valid() && overlaps_or_touches(bounds, &set.bounds))
        {
            return Err(invalid());
        }
    }
    if layer
        .time
        .as_ref()
        .is_some_and(|time| time.values.is_empty())
    {
        return Err(WmtsError::EmptyTimeDimension {
            layer: layer.identifier.clone(),
        });
    }
    if let Some(bad) = layer.dimensions.iter().find(|dimension| {
        let name = dimension.identifier.as_str();
        dimension.values.is_empty()
            || name.is_empty()
            || name.contains(['{', '}'])
            || name == TIME_DIMENSION
            || TEMPLATE_PLACEHOLDERS.contains(&name)
            || layer
                .dimensions
                .iter()
                .filter(|other| other.identifier == name)
                .count()
                > 1
    }) {
        return Err(WmtsError::BadDimension {
            layer: layer.identifier.clone(),
            dimension: bad.identifier.clone(),
        });
    }
    layer.resource_urls.iter().try_for_each(|url| {
        check_template(&url.template, layer).map_err(|problem| WmtsError::Template {
            layer: layer.identifier.clone(),
            problem,
        })
    })
}

/// Like [`Bounds::intersects`], but a zero-area rectangle (one point or one line of data)
/// inside the other counts.
fn overlaps_or_touches(a: &Bounds, b: &Bounds) -> bool {
    a.min_x <= b.max_x && b.min_x <= a.max_x && a.min_y <= b.max_y && b.min_y <= a.max_y
}

fn check_template(template: &str, layer: &Layer) -> Result<(), String> {
    let mut placeholders = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find(['{', '}']) {
        let after = rest.get(start..).unwrap_or_default();
        let Some(name) = after
            .strip_prefix('{')
            .and_then(|inner| inner.split_once('}'))
            .map(|(name, _)| name)
            .filter(|name| !name.contains('{'))
        else {
            return Err("it has a brace that is not part of a placeholder".to_owned());
        };
        let known = TEMPLATE_PLACEHOLDERS.contains(&name)
            || (name == TIME_DIMENSION && layer.time.is_some())
            || layer
                .dimensions
                .iter()
                .any(|dimension| dimension.identifier == name);
        if !known {
            return Err(format!("placeholder {{{name}}} is not one a client fills"));
        }
        placeholders.push(name);
        rest = after.get(name.len() + 2..).unwrap_or_default();
    }
    for needed in ["TileMatrix", "TileRow", "TileCol"] {
        if !placeholders.contains(&needed) {
            return Err(format!("it has no {{{needed}}}"));
        }
    }
    if layer.matrix_sets.len() > 1 && !placeholders.contains(&"TileMatrixSet") {
        return Err(
            "the layer has several tile matrix sets but the template no {TileMatrixSet}".to_owned(),
        );
    }
    Ok(())
}

fn write_service_identification(xml: &mut Xml, title: &str) {
    xml.open("ows:ServiceIdentification", &[]);
    xml.text_element("ows:Title", &[], title);
    xml.text_element("ows:ServiceType", &[], "OGC WMTS");
    xml.text_element("ows:ServiceTypeVersion", &[], "1.0.0");
    xml.close("ows:ServiceIdentification");
}

/// GetCapabilities and GetTile in key-value form on `kvp_url`: KVP clients (OWSLib prefers
/// KVP whenever it is announced) use it, RESTful ones the ResourceURL templates.
fn write_operations(xml: &mut Xml, kvp_url: &str) {
    xml.open("ows:OperationsMetadata", &[]);
    for operation in ["GetCapabilities", "GetTile"] {
        xml.open("ows:Operation", &[("name", operation)]);
        xml.open("ows:DCP", &[]);
        xml.open("ows:HTTP", &[]);
        xml.open("ows:Get", &[("xlink:href", kvp_url)]);
        xml.open("ows:Constraint", &[("name", "GetEncoding")]);
        xml.open("ows:AllowedValues", &[]);
        xml.text_element("ows:Value", &[], "KVP");
        xml.close("ows:AllowedValues");
        xml.close("ows:Constraint");
        xml.close("ows:Get");
        xml.close("ows:HTTP");
        xml.close("ows:DCP");
        xml.close("ows:Operation");
    }
    xml.close("ows:OperationsMetadata");
}

/// A layer, its elements in the order of the WMTS schema (LayerType).
fn write_layer(xml: &mut Xml, layer: &Layer, sets: &[TileMatrixSet]) {
    xml.open("Layer", &[]);
    xml.text_element("ows:Title", &[], &layer.title);
    if let Some(bounds) = &layer.wgs84_bounds {
        xml.open(
            "ows:WGS84BoundingBox",
            &[("crs", "urn:ogc:def:crs:OGC:2:84")],
        );
        write_corners(xml, bounds, false);
        xml.close("ows:WGS84BoundingBox");
    }
    xml.text_element("ows:Identifier", &[], &layer.identifier);
    let linked = || {
        layer.matrix_sets.iter().filter_map(|link| {
            let set = sets.iter().find(|set| set.id == link.id)?;
            Some((link, set))
        })
    };
    let mut written_crs: Vec<String> = Vec::new();
    for (link, set) in linked() {
        let crs = supported_crs(&set.crs);
        // One BoundingBox per system: GDAL keeps one per CRS name and takes the one
        // named like the matrix set's SupportedCRS as the extent.
        if let Some(bounds) = &link.bounds
            && !written_crs.contains(&crs)
        {
            xml.open("ows:BoundingBox", &[("crs", &crs)]);
            write_corners(xml, bounds, northing_first(&set.crs));
            xml.close("ows:BoundingBox");
            written_crs.push(crs);
        }
    }
    write_styles(xml, &layer.styles);
    for format in layer_formats(layer) {
        xml.text_element("Format", &[], format);
    }
    if let Some(time) = &layer.time {
        write_time(xml, time);
    }
    for dimension in &layer.dimensions {
        xml.open("Dimension", &[]);
        xml.text_element("ows:Identifier", &[], &dimension.identifier);
        xml.text_element("Default", &[], &dimension.default);
        for value in &dimension.values {
            xml.text_element("Value", &[], value);
        }
        xml.close("Dimension");
    }
    for (link, set) in linked() {
        write_matrix_set_link(xml, link, set);
    }
    for url in &layer.resource_urls {
        xml.empty_element(
            "ResourceURL",
            &[
                ("format", &url.format),
                ("resourceType", "tile"),
                ("template", &url.template),
            ],
        );
    }
    xml.close("Layer");
}

fn layer_formats(layer: &Layer) -> Vec<&str> {
    if layer.formats.is_empty() {
        let mut formats: Vec<&str> = Vec::new();
        for url in &layer.resource_urls {
            if !formats.contains(&url.format.as_str()) {
                formats.push(&url.format);
            }
        }
        formats
    } else {
        layer.formats.iter().map(String::as_str).collect()
    }
}

fn write_styles(xml: &mut Xml, styles: &[String]) {
    let fallback = ["default".to_owned()];
    let styles = if styles.is_empty() {
        &fallback[..]
    } else {
        styles
    };
    for (index, style) in styles.iter().enumerate() {
        let default = if index == 0 { "true" } else { "false" };
        xml.open("Style", &[("isDefault", default)]);
        xml.text_element("ows:Identifier", &[], style);
        xml.close("Style");
    }
}

fn write_time(xml: &mut Xml, time: &TimeDimension) {
    xml.open("Dimension", &[]);
    xml.text_element("ows:Identifier", &[], TIME_DIMENSION);
    xml.text_element("ows:UOM", &[], "ISO8601");
    xml.text_element("Default", &[], &time.default);
    for value in &time.values {
        xml.text_element("Value", &[], value);
    }
    xml.close("Dimension");
}

fn write_matrix_set_link(xml: &mut Xml, link: &LayerMatrixSet, set: &TileMatrixSet) {
    xml.open("TileMatrixSetLink", &[]);
    xml.text_element("TileMatrixSet", &[], &set.id);
    let limits = link
        .bounds
        .map(|bounds| matrix_limits(set, &bounds))
        .unwrap_or_default();
    if !limits.is_empty() {
        xml.open("TileMatrixSetLimits", &[]);
        for limit in &limits {
            xml.open("TileMatrixLimits", &[]);
            xml.text_element("TileMatrix", &[], &limit.matrix);
            xml.text_element("MinTileRow", &[], &limit.min_row.to_string());
            xml.text_element("MaxTileRow", &[], &limit.max_row.to_string());
            xml.text_element("MinTileCol", &[], &limit.min_col.to_string());
            xml.text_element("MaxTileCol", &[], &limit.max_col.to_string());
            xml.close("TileMatrixLimits");
        }
        xml.close("TileMatrixSetLimits");
    }
    xml.close("TileMatrixSetLink");
}

/// A matrix set, its elements in the order of the WMTS schema (TileMatrixSet).
fn write_matrix_set(xml: &mut Xml, set: &TileMatrixSet) {
    let crs = supported_crs(&set.crs);
    let swap = northing_first(&set.crs);
    xml.open("TileMatrixSet", &[]);
    xml.text_element("ows:Identifier", &[], &set.id);
    xml.open("ows:BoundingBox", &[("crs", &crs)]);
    write_corners(xml, &set.bounds, swap);
    xml.close("ows:BoundingBox");
    xml.text_element("ows:SupportedCRS", &[], &crs);
    if is_google_maps_compatible(set) {
        xml.text_element("WellKnownScaleSet", &[], GOOGLE_MAPS_COMPATIBLE);
    }
    for matrix in &set.matrices {
        write_matrix(xml, matrix, swap);
    }
    xml.close("TileMatrixSet");
}

/// True for WebMercatorQuad with 256-pixel tiles from level 0, the matrices of the
/// well-known scale set exactly.
fn is_google_maps_compatible(set: &TileMatrixSet) -> bool {
    let Some(deepest) = set.matrices.last() else {
        return false;
    };
    set.crs.epsg == Some(3857)
        && set.matrices == TileMatrixSet::web_mercator_quad(256, deepest.level).matrices
}

fn write_matrix(xml: &mut Xml, matrix: &TileMatrix, swap: bool) {
    xml.open("TileMatrix", &[]);
    xml.text_element("ows:Identifier", &[], &matrix.id);
    xml.text_element("ScaleDenominator", &[], &number(matrix.scale_denominator));
    xml.text_element(
        "TopLeftCorner",
        &[],
        &position(matrix.top_left_x, matrix.top_left_y, swap),
    );
    xml.text_element("TileWidth", &[], &matrix.tile_width.to_string());
    xml.text_element("TileHeight", &[], &matrix.tile_height.to_string());
    xml.text_element("MatrixWidth", &[], &matrix.matrix_width.to_string());
    xml.text_element("MatrixHeight", &[], &matrix.matrix_height.to_string());
    xml.close("TileMatrix");
}

fn write_corners(xml: &mut Xml, bounds: &Bounds, swap: bool) {
    xml.text_element(
        "ows:LowerCorner",
        &[],
        &position(bounds.min_x, bounds.min_y, swap),
    );
    xml.text_element(
        "ows:UpperCorner",
        &[],
        &position(bounds.max_x, bounds.max_y, swap),
    );
}

/// Two numbers separated by exactly one space (OWSLib splits TopLeftCorner on `" "`).
fn position(x: f64, y: f64, swap: bool) -> String {
    if swap {
        format!("{} {}", number(y), number(x))
    } else {
        format!("{} {}", number(x), number(y))
    }
}

/// The shortest text that reads back as the same double (Rust never writes an exponent),
/// with the xs:double spellings of the non-finite values.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "INF" } else { "-INF" }.to_owned()
    } else {
        value.to_string()
    }
}

/// A small indenting XML writer. Element names are the module's own constants; attribute
/// values and text are escaped.
#[derive(Default)]
struct Xml {
    out: String,
    depth: usize,
}

impl Xml {
    fn declaration(&mut self) {
        self.out
            .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    }

    fn start_tag(&mut self, name: &str, attributes: &[(&str, &str)]) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push('<');
        self.out.push_str(name);
        for (key, value) in attributes {
            let _ = write!(self.out, " {key}=\"");
            escape_into(&mut self.out, value, true);
            self.out.push('"');
        }
    }

    fn open(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.start_tag(name, attributes);
        self.out.push_str(">\n");
        self.depth += 1;
    }

    fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        let _ = writeln!(self.out, "</{name}>");
    }

    fn empty_element(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.start_tag(name, attributes);
        self.out.push_str("/>\n");
    }

    /// An element holding only text, on one line so no whitespace is added to the text.
    fn text_element(&mut self, name: &str, attributes: &[(&str, &str)], text: &str) {
        self.start_tag(name, attributes);
        self.out.push('>');
        escape_into(&mut self.out, text, false);
        let _ = writeln!(self.out, "</{name}>");
    }

    fn finish(self) -> String {
        self.out
    }
}

/// Appends `text` escaped for XML 1.0 content (`attribute` false) or a double-quoted
/// attribute value. Markup characters become entities; CR (and, in attributes, LF and TAB)
/// become character references because parsers normalise them otherwise; characters XML 1.0
/// cannot hold at all, even as references, become U+FFFD.
fn escape_into(out: &mut String, text: &str, attribute: bool) {
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            '\n' if attribute => out.push_str("&#xA;"),
            '\t' if attribute => out.push_str("&#x9;"),
            '\n' | '\t' => out.push(character),
            '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            _ => out.push(character),
        }
    }
}

#[cfg(test)]
mod tests;

//! What is in a file, for `basin inspect`: the reader's view (kind, coordinate system, extent,
//! geometry, time axis, items) and, on request, statistics of every item or every value, plus
//! for MIKE DFS files the container's own header fields, as users of these formats know them
//! from the reference library's header dumps and MIKE IO's summaries.
//!
//! Design choices:
//! - The reader runs into an `InspectSink` (`sink.rs`) behind a [`SummarySink`], so extent, EPSG
//!   code, WKT and feature counts come from the same code that summarises a conversion.
//! - Without `--values` or `--statistics` the sink answers [`DatasetSink::wants`] with
//!   `false`, so readers that can skip data (DFS) read nothing past the header; statistics
//!   are accumulated while the data streams by, in constant memory.
//! - A DFS file is also opened with the generic container ([`crate::dfs::container`]), which
//!   knows every DFS flavour; when no reader handles the file (a flavour without a reader, or
//!   a reader that refuses it) the container section is shown alone, with a note, instead of
//!   failing. Any other file a reader cannot read is an error.
//! - [`Inspection`] serialises to the JSON that `basin inspect --json` prints, and displays
//!   as the aligned text summary it prints otherwise (`text.rs`), so that both are tested here.

mod dfs;
mod sink;
mod text;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::catalogue::{Catalogue, ReadContext, Reader};
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::model::DatasetSink;
use crate::parameters::Parameters;
use crate::summary::SummarySink;

pub use dfs::{
    DfsAxisSummary, DfsCustomBlock, DfsDeleteValues, DfsItemSummary, DfsProjection, DfsSection,
    DfsStaticItem, DfsTimeAxis,
};
pub use sink::ValueStatistics;

/// The most values `--values` prints (items x values per step x steps): it is meant for small
/// files, and a large file would build a document larger than the memory of the machine.
pub const VALUES_MAX: u64 = 10_000_000;

/// What to read besides the header.
#[derive(Clone, Copy, Default)]
pub struct InspectOptions<'a> {
    /// Keep every value of every item and step ([`Inspection::values`]).
    pub values: bool,
    /// Compute per-item statistics over all steps ([`Inspection::statistics`]).
    pub statistics: bool,
    /// Limits and progress of the reader.
    pub context: ReadContext<'a>,
}

/// A summary of one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Inspection {
    /// The path as given.
    pub file: String,
    /// Size of the file in bytes.
    pub file_bytes: u64,
    /// The reader that read it; `None` when only the DFS container could (see `notes`).
    pub reader: Option<String>,
    /// The dataset format (the reader's, e.g. `.tif`; for a DFS file without reader its
    /// extension).
    pub format: String,
    /// `grid`, `mesh`, `time series`, `feature collection` or `point set`.
    pub kind: Option<String>,
    /// The coordinate system, when the file has one.
    pub crs: Option<CrsSummary>,
    /// `[min_x, min_y, max_x, max_y]` in the data's coordinates.
    pub extent: Option<[f64; 4]>,
    /// Shape of the data.
    pub geometry: Option<GeometrySummary>,
    /// The time axis of grids, meshes and time series.
    pub time: Option<TimeAxisSummary>,
    /// Items (grids, meshes, time series) or value columns (points: z first).
    pub items: Vec<ItemSummary>,
    /// Per-item statistics over every step, when asked for.
    pub statistics: Option<Vec<ValueStatistics>>,
    /// Every value, when asked for: one entry per step, holding one array per item (NaN and
    /// infinite values are `null` in JSON).
    pub values: Option<Vec<StepValues>>,
    /// The DFS container's header, for DFS files.
    pub dfs: Option<DfsSection>,
    /// Things the user should know (e.g. why only the container is shown).
    pub notes: Vec<String>,
}

/// A coordinate system as the file gives it and as it resolves.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CrsSummary {
    /// How the file gives it: `epsg`, `wkt`, `proj4` or `name`.
    pub given_as: &'static str,
    /// The definition as given (`EPSG:4326`, the WKT, the proj4 string, or a name such as
    /// MIKE's `NON-UTM`).
    pub definition: String,
    /// The EPSG code it resolves to.
    pub epsg: Option<u32>,
    /// Its name (from the EPSG registry, else from the WKT).
    pub name: Option<String>,
    /// A WKT of it, when one is known.
    pub wkt: Option<String>,
}

/// The shape of the data, per kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum GeometrySummary {
    /// A grid.
    Grid(GridSummary),
    /// A flexible mesh.
    Mesh(MeshSummary),
    /// A time series (no geometry).
    TimeSeries,
    /// A feature collection.
    Features(FeaturesSummary),
    /// A point set.
    Points(PointsSummary),
}

/// A grid's shape and placement.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GridSummary {
    /// Cells per row.
    pub columns: usize,
    /// Rows.
    pub rows: usize,
    /// Layers (1 for a 2D grid).
    pub layers: usize,
    /// z of the first layer and distance between layers, for a 3D grid.
    pub vertical: Option<[f64; 2]>,
    /// GDAL's geotransform: origin x, pixel width, row rotation, origin y, column rotation,
    /// pixel height (from the outer corner of the first cell).
    pub transform: [f64; 6],
    /// Length of a cell along a row.
    pub cell_width: f64,
    /// Length of a cell along a column.
    pub cell_height: f64,
    /// Angle of the rows from the x axis, counter-clockwise, in degrees (0 for north-up).
    pub rotation_degrees: f64,
}

/// A mesh's size and element kinds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MeshSummary {
    /// Nodes.
    pub nodes: usize,
    /// Elements.
    pub elements: usize,
    /// Number of elements of each kind, by meshio's name (`triangle`, `quad`, `wedge`, ...).
    pub element_kinds: BTreeMap<String, usize>,
    /// Layers of a 3D mesh.
    pub layers: Option<usize>,
    /// Sigma layers of a 3D mesh.
    pub sigma_layers: Option<usize>,
    /// What the node z values are, e.g. `Bathymetry`.
    pub z_quantity: String,
    /// Unit of the node z values.
    pub z_unit: String,
    /// Least and greatest finite node z.
    pub z_range: Option<[f64; 2]>,
}

/// A feature collection's schema and contents.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeaturesSummary {
    /// Number of features.
    pub count: u64,
    /// The geometry type the collection declares (`any` when mixed or undeclared).
    pub declared_geometry: &'static str,
    /// Number of features of each geometry type found (`Point`, `Polygon`, ...).
    pub geometry_types: BTreeMap<String, u64>,
    /// Features without geometry.
    pub null_geometries: u64,
    /// True when geometries carry z.
    pub has_z: bool,
    /// True when geometries carry m.
    pub has_m: bool,
    /// Attribute fields.
    pub fields: Vec<FieldSummary>,
}

/// An attribute field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldSummary {
    /// Name.
    pub name: String,
    /// `Boolean`, `Integer`, `Float`, `Text`, `Date` or `DateTime`.
    pub field_type: &'static str,
    /// Declared width (dBASE).
    pub width: Option<u16>,
    /// Declared decimals (dBASE).
    pub decimals: Option<u16>,
}

/// A point set's size.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PointsSummary {
    /// Number of points.
    pub count: u64,
}

/// A time axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeAxisSummary {
    /// `none`, `equidistant`, `calendar` (explicit times) or `relative` (offsets without a
    /// start).
    pub kind: &'static str,
    /// Number of steps.
    pub steps: usize,
    /// Calendar time of the first step (ISO 8601, no zone).
    pub start: Option<String>,
    /// Calendar time of the last step.
    pub end: Option<String>,
    /// Seconds between steps when they are equally spaced.
    pub interval_seconds: Option<f64>,
    /// Offset of the first step of a relative axis, in seconds.
    pub first_offset_seconds: Option<f64>,
    /// Offset of the last step of a relative axis, in seconds.
    pub last_offset_seconds: Option<f64>,
}

/// An item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemSummary {
    /// Name.
    pub name: String,
    /// Quantity name (e.g. `Water Level`); empty when unknown.
    pub quantity: String,
    /// Unit abbreviation; empty when unknown.
    pub unit: String,
    /// EUM item type code.
    pub eum_item: Option<i32>,
    /// EUM unit code.
    pub eum_unit: Option<i32>,
    /// Storage type, as GDAL names it (`Float32`, ...).
    pub data_type: &'static str,
    /// Relation to time (`Instantaneous`, `Accumulated`, ...).
    pub value_type: &'static str,
    /// `cell` (grid cells, mesh elements) or `node`.
    pub location: &'static str,
    /// The value meaning "no data", besides NaN.
    pub nodata: Option<f64>,
}

/// Every value of one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepValues {
    /// Step index.
    pub step: usize,
    /// Calendar time of the step.
    pub time: Option<String>,
    /// Seconds after the first step.
    pub offset_seconds: Option<f64>,
    /// One array per item, in item order.
    pub items: Vec<Vec<f64>>,
}

/// Inspects `path` with the reader named `reader` (case-insensitive), or the one its extension
/// suggests; a DFS file without a reader is inspected with the container alone.
pub fn inspect(
    catalogue: &Catalogue,
    path: &Path,
    reader: Option<&str>,
    reader_parameters: &[(String, String)],
    options: &InspectOptions<'_>,
) -> FormatResult<Inspection> {
    let metadata = std::fs::metadata(path).map_err(|error| FormatError::read(path, error))?;
    if metadata.is_dir() {
        return Err(FormatError::Catalogue(format!(
            "{} is a folder; inspect a file",
            path.display()
        )));
    }
    let is_dfs = has_dfs_signature(path)?;
    let reader = resolve_reader(catalogue, reader, path, is_dfs)?;
    let parameters = match reader {
        Some(reader) => Some(Parameters::validate(
            reader.spec().parameters,
            reader_parameters,
        )?),
        None => None,
    };
    let mut inspection = Inspection {
        file: path.display().to_string(),
        file_bytes: metadata.len(),
        reader: None,
        format: extension_of(path),
        kind: None,
        crs: None,
        extent: None,
        geometry: None,
        time: None,
        items: Vec::new(),
        statistics: None,
        values: None,
        dfs: None,
        notes: Vec::new(),
    };
    if is_dfs {
        inspection.dfs = Some(dfs::section(path, &options.context.limits)?);
    }
    let (Some(reader), Some(parameters)) = (reader, parameters) else {
        inspection
            .notes
            .push("no reader handles this DFS file; only the DFS container is shown".to_owned());
        note_unread_values(&mut inspection, options);
        return Ok(inspection);
    };
    match read(reader, path, &parameters, options) {
        Ok(read) => {
            inspection.reader = Some(reader.spec().name.to_owned());
            inspection.format = reader.spec().dataset_format.to_owned();
            read.fill(&mut inspection);
        }
        Err(error) if is_dfs && !matches!(error, FormatError::Parameter { .. }) => {
            inspection.notes.push(format!(
                "{} cannot read this file ({error}); only the DFS container is shown",
                reader.spec().name
            ));
            note_unread_values(&mut inspection, options);
        }
        Err(error) => return Err(error),
    }
    Ok(inspection)
}

fn note_unread_values(inspection: &mut Inspection, options: &InspectOptions<'_>) {
    if options.values || options.statistics {
        inspection
            .notes
            .push("values and statistics need a reader; none were read".to_owned());
    }
}

/// The named reader, else the one for the extension; `None` only for a DFS file no reader
/// claims.
fn resolve_reader<'c>(
    catalogue: &'c Catalogue,
    name: Option<&str>,
    path: &Path,
    is_dfs: bool,
) -> FormatResult<Option<&'c dyn Reader>> {
    let reader = match name {
        Some(name) => Some(
            catalogue
                .reader(name)
                .ok_or_else(|| FormatError::Catalogue(format!("no reader named {name:?}")))?,
        ),
        None => catalogue.reader_for_path(path),
    };
    match reader {
        Some(reader) if reader.spec().name == crate::file_copy::READER.name => {
            Err(FormatError::Catalogue(
                "the plain copy (FileReader) does not read data; name the file's reader".to_owned(),
            ))
        }
        Some(reader) => Ok(Some(reader)),
        None if is_dfs => Ok(None),
        None => Err(FormatError::Catalogue(format!(
            "no reader for {}; name one with --reader (see `basin formats`)",
            path.display()
        ))),
    }
}

/// True when the file starts with the DFS signature.
fn has_dfs_signature(path: &Path) -> FormatResult<bool> {
    let mut file = std::fs::File::open(path).map_err(|error| FormatError::read(path, error))?;
    let mut start = [0_u8; 8];
    match file.read_exact(&mut start) {
        Ok(()) => Ok(crate::dfs::container::MAGIC.starts_with(&start)),
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(error) => Err(FormatError::read(path, error)),
    }
}

/// `.ext` of `path`, lower case; empty without one.
fn extension_of(path: &Path) -> String {
    path.extension()
        .and_then(|extension| extension.to_str())
        .map(|extension| format!(".{}", extension.to_ascii_lowercase()))
        .unwrap_or_default()
}

/// Runs `reader` into the inspecting sink.
fn read(
    reader: &dyn Reader,
    path: &Path,
    parameters: &Parameters,
    options: &InspectOptions<'_>,
) -> FormatResult<sink::Read> {
    let mut inspecting = sink::InspectSink::new(options.values, options.statistics);
    let summary = {
        let mut summarising = SummarySink::new(&mut inspecting);
        let sink: &mut dyn DatasetSink = &mut summarising;
        reader.read(path, parameters, &options.context, sink)?;
        summarising.into_summary()?
    };
    inspecting.finish(summary)
}

/// The summary of a coordinate system.
fn crs_summary(crs: &Crs) -> CrsSummary {
    let (given_as, definition) = match crs {
        Crs::Epsg(code) => ("epsg", format!("EPSG:{code}")),
        Crs::Wkt(wkt) => ("wkt", wkt.clone()),
        Crs::Proj4(proj4) => ("proj4", proj4.clone()),
        Crs::Named(name) => ("name", name.clone()),
    };
    let epsg = crate::crs::resolve_epsg(crs);
    let wkt = crate::crs::wkt_of(crs);
    let name = epsg
        .and_then(crate::crs::definition)
        .map(|definition| definition.name.to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| wkt.as_deref().and_then(wkt_name))
        .or_else(|| match crs {
            Crs::Named(name) => Some(name.clone()),
            Crs::Epsg(_) | Crs::Wkt(_) | Crs::Proj4(_) => None,
        });
    CrsSummary {
        given_as,
        definition,
        epsg,
        name,
        wkt,
    }
}

/// The name of a WKT's outermost object: its first quoted text.
fn wkt_name(wkt: &str) -> Option<String> {
    let (_, rest) = wkt.split_once('"')?;
    let (name, _) = rest.split_once('"')?;
    Some(name.to_owned())
}

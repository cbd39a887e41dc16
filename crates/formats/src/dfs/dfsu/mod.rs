//! DFSU: MIKE flexible-mesh result files (2D, layered 3D, vertical profiles and columns,
//! spectra), read lazily and written as MIKE IO writes them.
//!
//! A DFSU file is a DFS container whose static items hold the mesh (see [`geometry`]) and
//! whose dynamic items hold one value per element (per node for the "Z coordinate" of layered
//! files) at each time step. The reader announces the mesh, then streams the items through
//! [`crate::dfs::mapping::stream`], so a filter downstream makes it skip items and steps
//! without reading them.
//!
//! Choices, documented in docs/formats.md:
//! - Layered files (`ReadFull3D=true`, the default) are the full mesh: prisms and hexahedra
//!   (quadrilaterals in a vertical profile, lines in a column) with the "Z coordinate" item as
//!   a node item, always read since it is geometry (the nodes move with the water level), and
//!   first, as the file stores it. `ReadFull3D=false` gives the top layer as a mesh of one
//!   dimension less (see [`layers`]), with the bathymetry as node z, which is what MIKE IO's
//!   `read(layers="top")` gives and what Shapefile, GeoJSON and .mesh can hold.
//! - A point spectrum's mesh is the frequency-direction plane (one element per frequency and
//!   direction bin, as the file stores it), so its values keep their place; the coordinates
//!   are not map coordinates, so the mesh has no CRS.
//! - Line and area spectra hold, per node or element, a value for each frequency and
//!   direction. They become one item per item, direction and frequency (`<item> f<i> d<j>`)
//!   while that stays at most [`SPECTRAL_ITEMS_MAX`] items; beyond, the reader refuses and
//!   says to pick items with `AllowedItemNames`.

pub mod geometry;
pub mod layers;
mod writer;

use std::io::{BufRead, Seek};
use std::path::Path;
use std::sync::Arc;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::dfs::container::DfsFile;
use crate::dfs::mapping::{
    self, APPLICATION_TITLE_PARAMETER, APPLICATION_VERSION_PARAMETER, Titles, title_parameter,
};
use crate::error::{FormatError, FormatResult};
use crate::limits::check_limit;
use crate::model::{
    DataKind, DatasetSink, Frame, Header, Item, ItemLocation, MeshGeometry, MeshHeader, Values,
};
use crate::parameters::{ParameterSpec, ParameterType, Parameters, SRID, srid_parameter};

use geometry::{DfsuKind, EUM_Z_COORDINATE, FmBlock};

pub(crate) const FORMAT: &str = "DFSU";

/// Name of the reader parameter choosing the full layered mesh or its top layer.
pub const READ_FULL_3D: &str = "ReadFull3D";

/// The most items the flattened frequencies and directions of line and area spectra may
/// make.
pub const SPECTRAL_ITEMS_MAX: usize = 1024;

/// The published description of [`DfsuReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "DfsuReader",
    description: "Reads a MIKE DFSU flexible-mesh file (2D, 3D, vertical profile and column, spectra)",
    dataset_format: ".dfsu",
    extensions: &[".dfsu"],
    produces: &[DataKind::Mesh],
    parameters: &[
        srid_parameter(
            "EPSG code of the input's coordinate system, used when the file's projection is missing or a name rather than a WKT",
        ),
        mapping::ALLOWED_ITEM_NAMES_PARAMETER,
        ParameterSpec {
            name: READ_FULL_3D,
            description: "Layered files: true reads the full 3D mesh (prisms, hexahedra) with the Z coordinate as a node item; false reads the top layer as a 2D mesh with the bathymetry as node z",
            data_type: ParameterType::Boolean,
            required: false,
            default_value: Some("true"),
            allowed_values: &[],
        },
    ],
};

/// Reads a MIKE DFSU flexible-mesh file.
#[derive(Debug, Clone, Copy, Default)]
pub struct DfsuReader;

impl Reader for DfsuReader {
    fn spec(&self) -> &'static ReaderSpec {
        &READER
    }

    fn read(
        &self,
        input: &Path,
        parameters: &Parameters,
        context: &ReadContext<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        let mut file = DfsFile::open(input, &context.limits)?;
        read_file(&mut file, parameters, context, sink)
    }
}

/// How the items of the file become the model's.
enum Plan {
    /// Whole items; `gather` picks the top-layer elements of each.
    Items {
        items: Vec<usize>,
        gather: Option<Vec<usize>>,
    },
    /// Each item split into `parts` items of `size` values (spectra).
    Spectral {
        items: Vec<usize>,
        parts: usize,
        size: usize,
    },
}

/// Reads an open DFSU file into `sink`.
pub fn read_file<R: BufRead + Seek>(
    file: &mut DfsFile<R>,
    parameters: &Parameters,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let srid = parameters.srid(SRID)?;
    let full_3d = parameters.boolean(READ_FULL_3D).unwrap_or(true);
    let block = geometry::fm_block(&file.header)?;
    let kind = geometry::kind_of(file.header.file.data_type, &block);
    let crs = if kind == DfsuKind::PointSpectrum {
        None
    } else {
        let name = file
            .header
            .file
            .projection
            .as_ref()
            .map(|projection| projection.name.as_str())
            .unwrap_or_default();
        crate::crs::from_mike_projection(name, srid)
    };
    let full = geometry::read_geometry(&file.header, &block, kind, crs, &context.limits)?;
    check_item_sizes(file, &block, kind)?;
    let selected = mapping::selected_items(&file.header.items, parameters)?;
    let time = mapping::time_axis_of(file)?;
    let (mesh, items, plan) = plan_reading(file, selected, &block, kind, full, full_3d)?;
    check_limit(
        "number of items",
        items.len() as u64,
        context.limits.items_max,
    )?;
    sink.begin(&Header::Mesh(MeshHeader {
        geometry: Arc::new(mesh),
        items,
        time,
    }))?;
    context
        .progress
        .set_total((file.steps() as u64).saturating_mul(file.step_bytes()));
    match plan {
        Plan::Items { items, gather } => {
            mapping::stream(file, &items, sink, context.progress, |_, values| {
                if let Some(indices) = &gather {
                    *values = pick(values, indices.iter().copied());
                }
                Ok(())
            })?;
        }
        Plan::Spectral { items, parts, size } => {
            stream_spectral(file, &items, parts, size, sink, context)?;
        }
    }
    sink.end()
}

/// The mesh, the model items and how to stream them: layered files in full or their top
/// layer, line and area spectra flattened, other files as they are.
fn plan_reading<R: BufRead + Seek>(
    file: &DfsFile<R>,
    selected: Vec<usize>,
    block: &FmBlock,
    kind: DfsuKind,
    full: MeshGeometry,
    full_3d: bool,
) -> FormatResult<(MeshGeometry, Vec<Item>, Plan)> {
    Ok(if kind.is_layered() {
        let others: Vec<usize> = selected.into_iter().filter(|item| *item != 0).collect();
        if full_3d {
            let mut all = vec![0];
            all.extend(others);
            let items = model_items(file, &all, block, kind);
            (
                full,
                items,
                Plan::Items {
                    items: all,
                    gather: None,
                },
            )
        } else {
            let top = layers::top_layer(&full)?;
            let items = model_items(file, &others, block, kind);
            let gather = Some(top.elements);
            (
                top.geometry,
                items,
                Plan::Items {
                    items: others,
                    gather,
                },
            )
        }
    } else if matches!(kind, DfsuKind::LineSpectrum | DfsuKind::AreaSpectrum) {
        let (items, plan) = spectral_plan(file, selected, block, kind)?;
        (full, items, plan)
    } else {
        let items = model_items(file, &selected, block, kind);
        (
            full,
            items,
            Plan::Items {
                items: selected,
                gather: None,
            },
        )
    })
}

/// Checks each item's size against the mesh: per element, per node for the first item of a
/// layered file, times frequencies and directions for line and area spectra.
fn check_item_sizes<R: BufRead + Seek>(
    file: &DfsFile<R>,
    block: &FmBlock,
    kind: DfsuKind,
) -> FormatResult<()> {
    for (index, info) in file.header.items.iter().enumerate() {
        let size = info.axis.size().unwrap_or(0);
        let spectral = block.frequencies.max(1) * block.directions.max(1);
        let expected = match kind {
            _ if kind.is_layered() && index == 0 => vec![block.nodes],
            DfsuKind::LineSpectrum => vec![block.nodes * spectral],
            DfsuKind::AreaSpectrum => vec![block.elements * spectral],
            _ => vec![block.elements, block.nodes],
        };
        if !expected.contains(&size) {
            let what = match kind {
                _ if kind.is_layered() && index == 0 => {
                    "the first item of a layered file is the Z coordinate of each node"
                }
                DfsuKind::LineSpectrum => {
                    "a line spectrum has a value per node, frequency and direction"
                }
                DfsuKind::AreaSpectrum => {
                    "an area spectrum has a value per element, frequency and direction"
                }
                _ => "an item has a value per element (or per node)",
            };
            return Err(FormatError::invalid(
                FORMAT,
                format!("item {} ({:?})", index + 1, info.name),
                format!(
                    "{size} values per step, {} expected: {what}",
                    expected
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
        if file.steps() > 0 && file.item_len(index) != Some(size) {
            return Err(FormatError::invalid(
                FORMAT,
                format!("item {} ({:?})", index + 1, info.name),
                format!(
                    "its axis spans {size} values but each step stores {}",
                    file.item_len(index).unwrap_or(0)
                ),
            ));
        }
    }
    Ok(())
}

/// The model items of file items `items`, on nodes for the Z coordinate of layered files and
/// node-sized items, else on elements.
fn model_items<R: BufRead + Seek>(
    file: &DfsFile<R>,
    items: &[usize],
    block: &FmBlock,
    kind: DfsuKind,
) -> Vec<Item> {
    items
        .iter()
        .filter_map(|index| {
            let info = file.header.items.get(*index)?;
            let mut item = mapping::item_of(info, &file.header);
            let size = info.axis.size().unwrap_or(0);
            let on_nodes = (kind.is_layered() && *index == 0)
                || (size == block.nodes && size != block.elements);
            if on_nodes {
                item.location = ItemLocation::Node;
            }
            if kind.is_layered() && *index == 0 && item.quantity.name.is_empty() {
                item.quantity.name = "Z coordinate".to_owned();
                item.quantity.eum_item = Some(EUM_Z_COORDINATE);
            }
            Some(item)
        })
        .collect()
}

/// Line and area spectra: one item per item, direction and frequency.
fn spectral_plan<R: BufRead + Seek>(
    file: &DfsFile<R>,
    selected: Vec<usize>,
    block: &FmBlock,
    kind: DfsuKind,
) -> FormatResult<(Vec<Item>, Plan)> {
    let (frequencies, directions) = geometry::spectral_axes(&file.header, block)?;
    let parts = frequencies.len().max(1) * directions.len().max(1);
    let total = parts.saturating_mul(selected.len());
    if total > SPECTRAL_ITEMS_MAX {
        return Err(FormatError::unsupported(
            FORMAT,
            format!(
                "{}: {} frequencies x {} directions x {} items would make {total} items, more than the {SPECTRAL_ITEMS_MAX} Basin flattens a spectral file into; choose items with AllowedItemNames",
                kind.name(),
                frequencies.len(),
                directions.len(),
                selected.len()
            ),
        ));
    }
    let (size, location) = if kind == DfsuKind::LineSpectrum {
        (block.nodes, ItemLocation::Node)
    } else {
        (block.elements, ItemLocation::Cell)
    };
    let mut items = Vec::with_capacity(total);
    for index in &selected {
        let Some(info) = file.header.items.get(*index) else {
            continue;
        };
        let base = mapping::item_of(info, &file.header);
        for direction in 0..directions.len().max(1) {
            for frequency in 0..frequencies.len().max(1) {
                let mut name = base.name.clone();
                if !frequencies.is_empty() {
                    name.push_str(&format!(" f{frequency}"));
                }
                if !directions.is_empty() {
                    name.push_str(&format!(" d{direction}"));
                }
                items.push(Item {
                    name,
                    location,
                    ..base.clone()
                });
            }
        }
    }
    Ok((
        items,
        Plan::Spectral {
            items: selected,
            parts,
            size,
        },
    ))
}

/// Streams the items of a spectral file, each split into its `parts` (direction-major, then
/// frequency, then node or element, as the file stores them).
fn stream_spectral<R: BufRead + Seek>(
    file: &mut DfsFile<R>,
    items: &[usize],
    parts: usize,
    size: usize,
    sink: &mut dyn DatasetSink,
    context: &ReadContext<'_>,
) -> FormatResult<()> {
    let mut values = Values::with_capacity(crate::model::DataType::F32, 0);
    let step_bytes = file.step_bytes();
    for step in 0..file.steps() {
        for (position, &file_item) in items.iter().enumerate() {
            let first = position * parts;
            if !(0..parts).any(|part| sink.wants(step, first + part)) {
                continue;
            }
            file.read_values(step, file_item, &mut values)?;
            mapping::delete_values_to_nan(&file.header, &mut values);
            for part in 0..parts {
                if !sink.wants(step, first + part) {
                    continue;
                }
                let start = part * size;
                let piece = pick(&values, start..start + size);
                sink.frame(Frame {
                    step,
                    item: first + part,
                    offset: 0,
                    values: &piece,
                })?;
            }
        }
        context.progress.advance(step_bytes);
    }
    Ok(())
}

/// The values at `indices` (which the caller keeps within the buffer).
fn pick(values: &Values, indices: impl Iterator<Item = usize>) -> Values {
    fn from<T: Copy + Default>(source: &[T], indices: impl Iterator<Item = usize>) -> Vec<T> {
        indices
            .map(|index| source.get(index).copied().unwrap_or_default())
            .collect()
    }
    match values {
        Values::U8(v) => Values::U8(from(v, indices)),
        Values::I16(v) => Values::I16(from(v, indices)),
        Values::U16(v) => Values::U16(from(v, indices)),
        Values::I32(v) => Values::I32(from(v, indices)),
        Values::U32(v) => Values::U32(from(v, indices)),
        Values::F32(v) => Values::F32(from(v, indices)),
        Values::F64(v) => Values::F64(from(v, indices)),
    }
}

/// The published description of [`DfsuWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "DfsuWriter",
    description: "Writes a MIKE DFSU file (2D triangles and quadrilaterals, layered 3D prisms and hexahedra)",
    dataset_format: ".dfsu",
    extensions: &[".dfsu"],
    accepts: &[DataKind::Mesh, DataKind::Features],
    parameters: &[
        title_parameter(
            "File title; default \"Area Series\" for 2D and \"3D volume series\" for layered meshes, as MIKE IO writes",
        ),
        APPLICATION_TITLE_PARAMETER,
        APPLICATION_VERSION_PARAMETER,
        crate::adapt::TRIANGULATE_PARAMETER,
    ],
};

/// Writes a MIKE DFSU file.
#[derive(Debug, Clone, Copy, Default)]
pub struct DfsuWriter;

impl Writer for DfsuWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        let titles = Titles::from_parameters(parameters)?;
        Ok(Box::new(writer::DfsuSink::new(output, titles)))
    }
}

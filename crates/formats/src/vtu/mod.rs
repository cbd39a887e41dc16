//! VTK XML UnstructuredGrid (.vtu), with .pvd collections for time series.
//!
//! VTU is how meshes reach ParaView and meshio. The writer is written by hand (the format is
//! small, and a crate would buffer whole documents); the reader parses the XML as a stream and
//! decodes ascii, base64 binary (UInt32 or UInt64 headers, zlib-compressed or not) and
//! appended data (raw or base64), which covers what VTK, ParaView and meshio write. A VTU file
//! holds no time and no coordinate system: a time series becomes one .vtu per step plus a
//! .pvd, and the reader takes the CRS from its `SRID` parameter. Every VTK cell of fixed or
//! simple variable size is kept with its VTK code (see `ElementKind`); the pieces of a file
//! are joined into one mesh, as meshio joins them.

mod encoding;
mod reader;
mod writer;

use std::path::Path;
use std::sync::Arc;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};
use crate::model::{
    DataKind, DatasetSink, ElementKind, Elements, Frame, Header, Item, ItemLocation, MeshGeometry,
    MeshHeader, Nodes, Quantity, TimeAxis, Values,
};
use crate::parameters::{ParameterSpec, ParameterType, Parameters, SRID, srid_parameter};

use reader::{Array, Piece, Section};

const FORMAT: &str = "VTU";

/// The point data array that carries MIKE boundary codes of the nodes through VTU.
pub const BOUNDARY_CODE_ARRAY: &str = "boundary_code";

/// The published description of [`VtuReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "VtuReader",
    description: "Reads a VTK XML UnstructuredGrid (.vtu)",
    dataset_format: ".vtu",
    extensions: &[".vtu"],
    produces: &[DataKind::Mesh],
    parameters: &[srid_parameter(
        "EPSG code of the coordinates (a VTU file does not state one)",
    )],
};

/// Reads a VTK XML UnstructuredGrid (.vtu).
#[derive(Debug, Clone, Copy, Default)]
pub struct VtuReader;

impl Reader for VtuReader {
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
        let crs = parameters.srid(SRID)?.map(Crs::Epsg);
        if let Ok(metadata) = std::fs::metadata(input) {
            context.progress.set_total(metadata.len());
        }
        let pieces = reader::read_pieces(input, &context.limits)?;
        if let Ok(metadata) = std::fs::metadata(input) {
            context.progress.advance(metadata.len());
        }
        let mut meshes = Vec::new();
        for piece in pieces {
            meshes.push(mesh_of(piece, crs.clone(), &context.limits)?);
        }
        let (header, values) = join_pieces(meshes)?;
        sink.begin(&Header::Mesh(header))?;
        for (item, values) in values.iter().enumerate() {
            sink.frame(Frame {
                step: 0,
                item,
                offset: 0,
                values,
            })?;
        }
        sink.end()
    }
}

/// The published description of [`VtuWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "VtuWriter",
    description: "Writes VTK XML UnstructuredGrid; several time steps: one .vtu per step plus a .pvd, as x.zip for an output x.vtu, or x.pvd plus a folder x/ of steps for an output x.pvd",
    dataset_format: ".vtu",
    extensions: &[".vtu", ".pvd"],
    accepts: &[
        DataKind::Mesh,
        DataKind::Points,
        DataKind::Features,
        DataKind::Grid,
        DataKind::TimeSeries,
    ],
    parameters: &[
        ParameterSpec {
            name: "Format",
            description: "Encoding of the data arrays: binary (base64, smaller and faster) or ascii (readable)",
            data_type: ParameterType::String,
            required: false,
            default_value: Some("binary"),
            allowed_values: &["binary", "ascii"],
        },
        crate::adapt::TRIANGULATE_PARAMETER,
    ],
};

/// Writes VTK XML UnstructuredGrid; several time steps become one .vtu per step plus a .pvd,
/// zipped for a .vtu output, in a folder beside a .pvd output (see the writer module).
#[derive(Debug, Clone, Copy, Default)]
pub struct VtuWriter;

impl Writer for VtuWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        let binary = parameters.string("Format") != Some("ascii");
        Ok(Box::new(writer::VtuSink::new(output, binary)))
    }
}

/// The mesh header and the step-0 values of each item of a piece.
fn mesh_of(
    piece: Piece,
    crs: Option<Crs>,
    limits: &ReadLimits,
) -> FormatResult<(MeshHeader, Vec<Values>)> {
    let point_count = usize::try_from(piece.points).map_err(|_| {
        FormatError::unsupported(FORMAT, "more points than this machine can address")
    })?;
    let cell_count = usize::try_from(piece.cells).map_err(|_| {
        FormatError::unsupported(FORMAT, "more cells than this machine can address")
    })?;
    let mut nodes = nodes_of(&piece, point_count)?;
    let elements = elements_of(&piece, point_count, cell_count)?;
    let mut items = Vec::new();
    let mut values = Vec::new();
    for array in piece.arrays {
        let (location, count) = match array.section {
            Section::PointData => (ItemLocation::Node, point_count),
            Section::CellData => (ItemLocation::Cell, cell_count),
            _ => continue,
        };
        if array.data.len() != count.saturating_mul(array.components) {
            return Err(FormatError::invalid(
                FORMAT,
                format!("DataArray {:?}", array.name),
                format!(
                    "{} values where {count} x {} were expected",
                    array.data.len(),
                    array.components
                ),
            ));
        }
        if is_boundary_codes(&array, location)
            && let Some(codes) = array.data.to_i64()
        {
            nodes.codes = codes.into_iter().map(|code| code as i32).collect();
            continue;
        }
        push_items(array, location, &mut items, &mut values);
        check_limit("VTU data array count", items.len() as u64, limits.items_max)?;
    }
    let geometry = MeshGeometry {
        nodes,
        elements,
        crs,
        z_quantity: Quantity::default(),
        layers: None,
    };
    let header = MeshHeader {
        geometry: Arc::new(geometry),
        items,
        time: TimeAxis::None,
    };
    Ok((header, values))
}

fn is_boundary_codes(array: &Array, location: ItemLocation) -> bool {
    location == ItemLocation::Node
        && array.components == 1
        && array.name == BOUNDARY_CODE_ARRAY
        && array.data.vtk_type == encoding::VtkType::Int32
}

fn push_items(
    array: Array,
    location: ItemLocation,
    items: &mut Vec<Item>,
    values: &mut Vec<Values>,
) {
    let make = |name: String, data: &Values| Item {
        location,
        ..Item::new(name, data.data_type())
    };
    if array.components == 1 {
        let data = array.data.to_values();
        items.push(make(array.name, &data));
        values.push(data);
        return;
    }
    let all = array.data.to_f64();
    for component in 0..array.components {
        let suffix = match (array.components, component) {
            (2 | 3, 0) => "x".to_owned(),
            (2 | 3, 1) => "y".to_owned(),
            (3, 2) => "z".to_owned(),
            _ => component.to_string(),
        };
        let data = Values::F64(
            all.iter()
                .skip(component)
                .step_by(array.components)
                .copied()
                .collect(),
        );
        items.push(make(format!("{}_{suffix}", array.name), &data));
        values.push(data);
    }
}

fn nodes_of(piece: &Piece, point_count: usize) -> FormatResult<Nodes> {
    let points = piece
        .arrays
        .iter()
        .find(|array| array.section == Section::Points);
    let coordinates = match points {
        Some(array) if array.components == 3 => array.data.to_f64(),
        Some(array) => {
            return Err(FormatError::invalid(
                FORMAT,
                "Points",
                format!("{} components; points have 3", array.components),
            ));
        }
        None if point_count == 0 => Vec::new(),
        None => {
            return Err(FormatError::invalid(
                FORMAT,
                "Points",
                "the piece has no points array",
            ));
        }
    };
    if coordinates.len() != point_count.saturating_mul(3) {
        return Err(FormatError::invalid(
            FORMAT,
            "Points",
            format!(
                "{} coordinates for NumberOfPoints {point_count}",
                coordinates.len()
            ),
        ));
    }
    let component = |offset: usize| -> Vec<f64> {
        coordinates
            .iter()
            .skip(offset)
            .step_by(3)
            .copied()
            .collect()
    };
    Ok(Nodes {
        ids: (1..=point_count as i64).collect(),
        x: component(0),
        y: component(1),
        z: component(2),
        codes: vec![0; point_count],
    })
}

fn cells_array<'a>(piece: &'a Piece, name: &str) -> Option<&'a Array> {
    piece
        .arrays
        .iter()
        .find(|array| array.section == Section::Cells && array.name == name)
}

fn elements_of(piece: &Piece, point_count: usize, cell_count: usize) -> FormatResult<Elements> {
    let mut elements = Elements::default();
    if cell_count == 0 {
        return Ok(elements);
    }
    let integers = |name: &str| -> FormatResult<Vec<i64>> {
        cells_array(piece, name)
            .and_then(|array| array.data.to_i64())
            .ok_or_else(|| {
                FormatError::invalid(FORMAT, "Cells", format!("no integer {name:?} array"))
            })
    };
    let connectivity = integers("connectivity")?;
    let offsets = integers("offsets")?;
    let types = integers("types")?;
    if offsets.len() != cell_count || types.len() != cell_count {
        return Err(FormatError::invalid(
            FORMAT,
            "Cells",
            format!(
                "{} offsets and {} types for NumberOfCells {cell_count}",
                offsets.len(),
                types.len()
            ),
        ));
    }
    let mut start = 0usize;
    let mut nodes = Vec::new();
    for (index, (&end, &code)) in offsets.iter().zip(&types).enumerate() {
        let kind = cell_kind(code, index)?;
        let invalid =
            |message: String| FormatError::invalid(FORMAT, format!("cell {index}"), message);
        let end = usize::try_from(end).map_err(|_| invalid(format!("offset {end}")))?;
        let Some(refs) = connectivity.get(start..end) else {
            return Err(invalid(format!(
                "offsets {start}..{end} outside the connectivity"
            )));
        };
        if !kind.takes_nodes(refs.len()) {
            return Err(invalid(format!(
                "a {} cell with {} nodes; it has {}{}",
                kind.label(),
                refs.len(),
                if kind.takes_nodes(kind.node_count() + 1) {
                    "at least "
                } else {
                    ""
                },
                kind.node_count()
            )));
        }
        nodes.clear();
        for &node in refs {
            let node = usize::try_from(node)
                .ok()
                .filter(|&node| node < point_count)
                .and_then(|node| u32::try_from(node).ok())
                .ok_or_else(|| invalid(format!("point index {node} outside 0..{point_count}")))?;
            nodes.push(node);
        }
        elements.push(index as i64 + 1, kind, &nodes);
        start = end;
    }
    Ok(elements)
}

fn cell_kind(code: i64, index: usize) -> FormatResult<ElementKind> {
    u8::try_from(code)
        .ok()
        .and_then(ElementKind::from_vtk_type)
        .ok_or_else(|| {
            let known: Vec<String> = ElementKind::vtk_types()
                .map(|code| code.to_string())
                .collect();
            let what = match code {
                42 => " (polyhedron, whose faces Basin does not read)".to_owned(),
                60..=81 => " (an arbitrary-order Lagrange or Bezier cell)".to_owned(),
                _ => String::new(),
            };
            FormatError::unsupported(
                FORMAT,
                format!(
                    "cell {index} has VTK cell type {code}{what}; Basin reads types {}",
                    known.join(", ")
                ),
            )
        })
}

/// Joins the meshes of a file's pieces into one, as meshio does: points in piece order, each
/// piece's cells referring to its points by their new numbers (offset by the points of the
/// pieces before), point and cell data concatenated. Every piece must have the same arrays
/// (name, where, type), as ParaView's pieces of one dataset have; meshio fails on a missing
/// one too.
fn join_pieces(meshes: Vec<(MeshHeader, Vec<Values>)>) -> FormatResult<(MeshHeader, Vec<Values>)> {
    let mut meshes = meshes.into_iter();
    let Some((first, mut values)) = meshes.next() else {
        return Err(FormatError::invalid(
            FORMAT,
            "UnstructuredGrid",
            "the file has no Piece",
        ));
    };
    let rest: Vec<_> = meshes.collect();
    if rest.is_empty() {
        return Ok((first, values));
    }
    let mut geometry = MeshGeometry::clone(&first.geometry);
    for (index, (header, more)) in rest.into_iter().enumerate() {
        let piece = index + 2;
        let same = header.items.len() == first.items.len()
            && header.items.iter().zip(&first.items).all(|(a, b)| {
                a.name == b.name && a.location == b.location && a.data_type == b.data_type
            });
        if !same {
            let names = |items: &[Item]| {
                items
                    .iter()
                    .map(|item| {
                        format!("{} ({:?}, {:?})", item.name, item.location, item.data_type)
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(FormatError::invalid(
                FORMAT,
                format!("Piece {piece}"),
                format!(
                    "its data arrays [{}] differ from those of piece 1 [{}]; the pieces of one mesh have the same arrays",
                    names(&header.items),
                    names(&first.items)
                ),
            ));
        }
        append_geometry(&mut geometry, &header.geometry, piece)?;
        for (into, more) in values.iter_mut().zip(&more) {
            if !into.extend_from(more) {
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("Piece {piece}"),
                    "a data array changes type between pieces",
                ));
            }
        }
    }
    geometry.nodes.ids = (1..=geometry.nodes.len() as i64).collect();
    geometry.elements.ids = (1..=geometry.elements.len() as i64).collect();
    let header = MeshHeader {
        geometry: Arc::new(geometry),
        ..first
    };
    Ok((header, values))
}

/// Appends the nodes and elements of `more` to `geometry`, numbering its nodes after those
/// already there.
fn append_geometry(
    geometry: &mut MeshGeometry,
    more: &MeshGeometry,
    piece: usize,
) -> FormatResult<()> {
    let offset = u32::try_from(geometry.nodes.len())
        .ok()
        .filter(|offset| {
            offset
                .checked_add(u32::try_from(more.nodes.len()).unwrap_or(u32::MAX))
                .is_some()
        })
        .ok_or_else(|| {
            FormatError::unsupported(
                FORMAT,
                format!("piece {piece} takes the points beyond 2^32"),
            )
        })?;
    let nodes = &mut geometry.nodes;
    nodes.x.extend_from_slice(&more.nodes.x);
    nodes.y.extend_from_slice(&more.nodes.y);
    nodes.z.extend_from_slice(&more.nodes.z);
    nodes.codes.extend_from_slice(&more.nodes.codes);
    let mut shifted = Vec::new();
    for (element, &kind) in more.elements.kinds.iter().enumerate() {
        shifted.clear();
        let refs = more.elements.nodes(element).unwrap_or_default();
        shifted.extend(refs.iter().map(|node| node.saturating_add(offset)));
        geometry.elements.push(0, kind, &shifted);
    }
    Ok(())
}

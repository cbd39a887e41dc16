//! Writing DFSU as MIKE IO's builder does, so that the same content gives the same bytes
//! (timestamps aside): data type 2001, delete value +1e-35, no statistics, X and Y as
//! doubles, the nine static items with MIKE IO's names and EUM codes, the `MIKE_FM` block, and
//! for a layered mesh the "Z coordinate" node item first.
//!
//! Values arrive item by item within a step, but a DFSU step needs the Z coordinate first,
//! whatever its place in the model, so the sink holds one step of every item and writes it
//! when the next step starts. Node items other than the Z coordinate (a VTU's point data)
//! become element items, the mean of the element's nodes, since DFSU holds element values. A
//! mesh without items (a .mesh file) gets one "Bathymetry" element item, the mean of its
//! nodes' z, at one time step, as MIKE's own .mesh to .dfsu conversion does.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::catalogue::{WriterSink, Written};
use crate::dfs::container::{
    CustomBlock, DfsHeader, DfsWriter, FileHeader, ItemInfo, ProjectionRecord, SpatialAxis,
    StaticItem, now_timestamp,
};
use crate::dfs::mapping::{self, TimeWriting, Titles};
use crate::error::{FormatError, FormatResult};
use crate::model::{
    DataType, DatasetSink, ElementKind, Frame, Header, Item, ItemLocation, MeshGeometry,
    MeshHeader, Quantity, Values,
};

use super::FORMAT;
use super::geometry::{EUM_Z_COORDINATE, MIKE_FM, element_code, is_z_coordinate};

/// EUM item type of the static integer items (node and element ids, codes, connectivity).
const EUM_INTEGER: i32 = 100_370;
/// EUM unit of the static integer items.
const EUM_INTEGER_UNIT: i32 = 99_013;
/// EUM item type of the static x and y.
const EUM_GEOGRAPHIC_COORDINATE: i32 = 100_183;
/// EUM unit of metres.
const EUM_METRE: i32 = 1000;
/// The float delete value MIKE IO's DFSU builder writes.
const DELETE_FLOAT: f32 = 1e-35;

/// Where each DFS item's values come from.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// A model item as it is.
    Item(usize),
    /// A node item, averaged onto the elements.
    NodeMean(usize),
    /// The node z of the geometry (the Z coordinate of a layered mesh without one).
    StaticZ,
    /// The mean node z of each element (a mesh without items).
    Bathymetry,
}

struct Writing {
    writer: DfsWriter<BufWriter<File>>,
    model: MeshHeader,
    sources: Vec<Source>,
    buffers: Vec<Values>,
    time: TimeWriting,
    step: usize,
    pending: bool,
    steps_written: usize,
}

/// Receives a mesh and writes a DFSU file.
pub(crate) struct DfsuSink {
    output: PathBuf,
    titles: Titles,
    writing: Option<Writing>,
    notes: Vec<String>,
    finished: bool,
}

impl DfsuSink {
    /// A sink writing to `output`.
    pub(crate) fn new(output: &Path, titles: Titles) -> Self {
        Self {
            output: output.to_owned(),
            titles,
            writing: None,
            notes: Vec::new(),
            finished: false,
        }
    }
}

fn incompatible(message: String) -> FormatError {
    FormatError::Incompatible {
        data: "mesh",
        format: FORMAT,
        message,
    }
}

/// The dimension of the mesh for the `MIKE_FM` block, after checking every element is a
/// kind DFSU holds and that all fit one kind of file.
fn dimension_of(geometry: &MeshGeometry) -> FormatResult<i32> {
    let mut dimension = None;
    for (index, kind) in geometry.elements.kinds.iter().enumerate() {
        if element_code(*kind).is_none() {
            let count = geometry
                .elements
                .kinds
                .iter()
                .filter(|other| *other == kind)
                .count();
            return Err(incompatible(format!(
                "{} cells cannot be written to DFSU, which holds lines, triangles, quadrilaterals, prisms and hexahedra (element {} is the first of {count})",
                kind.label(),
                index + 1
            )));
        }
        let this = match kind {
            ElementKind::Line => 1,
            ElementKind::Prism | ElementKind::Hexahedron => 3,
            _ => 2,
        };
        match dimension {
            None => dimension = Some(this),
            Some(seen) if seen != this => {
                return Err(incompatible(format!(
                    "element {} is a {} among elements of dimension {seen}; a DFSU file holds elements of one dimension",
                    index + 1,
                    kind.name()
                )));
            }
            Some(_) => {}
        }
    }
    let dimension = dimension.unwrap_or(2);
    if dimension == 3 && geometry.layers.is_none() {
        return Err(incompatible(
            "prisms and hexahedra are written to DFSU as a layered mesh, which needs its layers (a mesh read from a layered DFSU file)".to_owned(),
        ));
    }
    if let Some(index) = (0..geometry.nodes.len()).find(|index| {
        [&geometry.nodes.x, &geometry.nodes.y, &geometry.nodes.z]
            .iter()
            .any(|values| values.get(*index).is_some_and(|value| !value.is_finite()))
    }) {
        return Err(incompatible(format!(
            "node {} has a coordinate that is not a finite number",
            index + 1
        )));
    }
    Ok(dimension)
}

/// 32-bit integers for a static item, or an error naming what does not fit.
fn int32(values: impl Iterator<Item = i64>, what: &str) -> FormatResult<Values> {
    let converted: Option<Vec<i32>> = values.map(|value| i32::try_from(value).ok()).collect();
    converted
        .map(Values::I32)
        .ok_or_else(|| incompatible(format!("{what} beyond the 32-bit range DFSU stores")))
}

fn static_item(name: &str, eum_item: i32, eum_unit: i32, values: Values) -> StaticItem {
    let count = i32::try_from(values.len()).unwrap_or(i32::MAX);
    let mut info = ItemInfo::new(
        name,
        eum_item,
        eum_unit,
        SpatialAxis::eq_d1(0, count, 0.0, 1.0),
    );
    info.data_type = values.data_type();
    info.range = [0.0; 3];
    StaticItem { info, values }
}

/// The nine static items of the mesh.
fn statics(geometry: &MeshGeometry) -> FormatResult<Vec<StaticItem>> {
    let nodes = &geometry.nodes;
    let elements = &geometry.elements;
    let ids = |ids: &[i64], count: usize| -> Vec<i64> {
        if ids.len() == count {
            ids.to_vec()
        } else {
            (1..=count as i64).collect()
        }
    };
    let codes: Vec<i64> = elements
        .kinds
        .iter()
        .map(|kind| i64::from(element_code(*kind).unwrap_or(0)))
        .collect();
    let sizes: Vec<i64> = (0..elements.len())
        .map(|index| elements.nodes(index).map_or(0, |nodes| nodes.len() as i64))
        .collect();
    let mut node_codes = nodes.codes.clone();
    node_codes.resize(nodes.len(), 0);
    let integer =
        |name: &str, values: Values| static_item(name, EUM_INTEGER, EUM_INTEGER_UNIT, values);
    let coordinate = |name: &str, values: &[f64]| {
        static_item(
            name,
            EUM_GEOGRAPHIC_COORDINATE,
            EUM_METRE,
            Values::F64(values.to_vec()),
        )
    };
    let node_numbers = elements
        .connectivity
        .iter()
        .map(|node| i64::from(*node) + 1);
    Ok(vec![
        integer(
            "Node id",
            int32(ids(&nodes.ids, nodes.len()).into_iter(), "node ids")?,
        ),
        coordinate("X-coord", &nodes.x),
        coordinate("Y-coord", &nodes.y),
        static_item(
            "Z-coord",
            EUM_Z_COORDINATE,
            EUM_METRE,
            Values::F32(nodes.z.iter().map(|z| *z as f32).collect()),
        ),
        integer("Code", Values::I32(node_codes)),
        integer(
            "Element id",
            int32(
                ids(&elements.ids, elements.len()).into_iter(),
                "element ids",
            )?,
        ),
        integer("Element type", int32(codes.into_iter(), "element types")?),
        integer(
            "No of nodes",
            int32(sizes.into_iter(), "nodes per element")?,
        ),
        integer("Connectivity", int32(node_numbers, "node numbers")?),
    ])
}

/// The `MIKE_FM` numbers: nodes, elements, dimension, layers, sigma layers.
fn fm_block(geometry: &MeshGeometry, dimension: i32) -> FormatResult<[i32; 5]> {
    let count = |count: usize, what: &str| {
        i32::try_from(count).map_err(|_| incompatible(format!("more {what} than DFSU stores")))
    };
    let (layers, sigma) = geometry
        .layers
        .map_or((0, 0), |layers| (layers.count, layers.sigma_count));
    Ok([
        count(geometry.nodes.len(), "nodes")?,
        count(geometry.elements.len(), "elements")?,
        dimension,
        count(layers, "layers")?,
        count(sigma, "sigma layers")?,
    ])
}

/// The stored type of a model item: doubles stay doubles, everything else is float.
fn stored_type(item: &Item) -> DataType {
    if item.data_type == DataType::F64 {
        DataType::F64
    } else {
        DataType::F32
    }
}

impl DfsuSink {
    /// The DFS items and where their values come from: the Z coordinate first in a layered
    /// mesh, then the element items (node items averaged), or a bathymetry item when the mesh
    /// has no items.
    fn plan_items(
        &mut self,
        mesh: &MeshHeader,
        node_axis: SpatialAxis,
        element_axis: SpatialAxis,
    ) -> (Vec<ItemInfo>, Vec<Source>) {
        let mut infos = Vec::new();
        let mut sources = Vec::new();
        let layered = mesh.geometry.layers.is_some();
        if layered {
            let mut info = ItemInfo::new("Z coordinate", EUM_Z_COORDINATE, EUM_METRE, node_axis);
            match mesh.items.iter().position(is_z_coordinate) {
                Some(index) => {
                    if let Some(item) = mesh.items.get(index) {
                        info.data_type = stored_type(item);
                    }
                    sources.push(Source::Item(index));
                }
                None => {
                    self.notes.push(
                        "the layered mesh has no Z coordinate item: the node z is written at every step"
                            .to_owned(),
                    );
                    sources.push(Source::StaticZ);
                }
            }
            infos.push(info);
        }
        for (index, item) in mesh.items.iter().enumerate() {
            if layered && is_z_coordinate(item) {
                continue;
            }
            let mut info = mapping::info_of(item, element_axis.clone());
            info.data_type = stored_type(item);
            match item.location {
                ItemLocation::Cell => sources.push(Source::Item(index)),
                ItemLocation::Node => {
                    self.notes.push(format!(
                        "node item {:?} written as element values, the mean of each element's nodes (DFSU holds element values)",
                        item.name
                    ));
                    sources.push(Source::NodeMean(index));
                }
            }
            infos.push(info);
        }
        if mesh.items.is_empty() && !layered {
            let bathymetry = Quantity::bathymetry();
            infos.push(ItemInfo::new(
                "Bathymetry",
                bathymetry.eum_item.unwrap_or(100_079),
                bathymetry.eum_unit.unwrap_or(EUM_METRE),
                element_axis,
            ));
            sources.push(Source::Bathymetry);
        }
        (infos, sources)
    }

    fn start(&mut self, mesh: &MeshHeader) -> FormatResult<Writing> {
        let geometry = &mesh.geometry;
        let dimension = dimension_of(geometry)?;
        let fm = fm_block(geometry, dimension)?;
        let [nodes_i32, elements_i32, ..] = fm;
        let element_axis = SpatialAxis::eq_d1(EUM_METRE, elements_i32, 0.0, 1.0);
        let node_axis = SpatialAxis::eq_d1(EUM_METRE, nodes_i32, 0.0, 1.0);
        let (infos, sources) = self.plan_items(mesh, node_axis, element_axis);
        let time = mapping::time_writing_of(&mesh.time);
        let title = self.titles.title.clone().unwrap_or_else(|| {
            if dimension == 3 {
                "3D volume series".to_owned()
            } else {
                "Area Series".to_owned()
            }
        });
        let projection = crate::crs::mike_projection(geometry.crs.as_ref(), &mut self.notes);
        let now = now_timestamp();
        let header = DfsHeader {
            created: now,
            modified: now,
            file: FileHeader {
                title,
                application: self.titles.application.clone(),
                application_version: self.titles.version,
                data_type: 2001,
                statistics_type: 1,
                delete_float: DELETE_FLOAT,
                projection: Some(ProjectionRecord {
                    name: projection,
                    origin_longitude: 0.0,
                    origin_latitude: 0.0,
                    orientation: 0.0,
                }),
                time: time.record.clone(),
                ..FileHeader::default()
            },
            items: infos,
            custom_blocks: vec![CustomBlock {
                name: MIKE_FM.to_owned(),
                values: Values::I32(fm.to_vec()),
            }],
            statics: statics(geometry)?,
        };
        let writer = DfsWriter::create(&self.output, header)?;
        Ok(Writing {
            writer,
            model: mesh.clone(),
            sources,
            buffers: mesh
                .items
                .iter()
                .map(|item| Values::with_capacity(item.data_type, 0))
                .collect(),
            time,
            step: 0,
            pending: false,
            steps_written: 0,
        })
    }
}

impl Writing {
    fn flush_step(&mut self) -> FormatResult<()> {
        let step = self.step;
        self.writer.start_step(self.time.step_time(step))?;
        let geometry = &self.model.geometry;
        for (position, source) in self.sources.iter().enumerate() {
            let info = self
                .writer
                .header()
                .items
                .get(position)
                .cloned()
                .ok_or_else(|| FormatError::Catalogue("DFSU writer: item out of range".into()))?;
            let (mut values, item) = match *source {
                Source::Item(index) | Source::NodeMean(index) => {
                    let item = self.model.items.get(index).cloned().ok_or_else(|| {
                        FormatError::Catalogue(format!("DFSU writer: no item {index}"))
                    })?;
                    let buffer = self
                        .buffers
                        .get(index)
                        .cloned()
                        .unwrap_or(Values::F32(Vec::new()));
                    let expected = match item.location {
                        ItemLocation::Node => geometry.nodes.len(),
                        ItemLocation::Cell => geometry.elements.len(),
                    };
                    if buffer.len() != expected {
                        return Err(incompatible(format!(
                            "item {:?} has {} values at step {step}, {expected} expected",
                            item.name,
                            buffer.len()
                        )));
                    }
                    let values = if matches!(source, Source::NodeMean(_)) {
                        element_means(geometry, |node| {
                            buffer.get_f64(node).filter(|value| !item.is_nodata(*value))
                        })
                    } else {
                        masked(&buffer, &item)
                    };
                    (values, item)
                }
                Source::StaticZ => (
                    geometry.nodes.z.clone(),
                    Item::new("Z coordinate", DataType::F64),
                ),
                Source::Bathymetry => (
                    element_means(geometry, |node| geometry.nodes.z.get(node).copied()),
                    Item::new("Bathymetry", DataType::F64),
                ),
            };
            let mut stored = match info.data_type {
                DataType::F64 => Values::F64(std::mem::take(&mut values)),
                _ => Values::F32(values.iter().map(|value| *value as f32).collect()),
            };
            mapping::nan_to_delete_values(
                self.writer.header(),
                &Item {
                    nodata: None,
                    ..item
                },
                &mut stored,
            );
            self.writer.write_item(&stored)?;
        }
        for buffer in &mut self.buffers {
            buffer.clear();
        }
        self.pending = false;
        self.steps_written += 1;
        Ok(())
    }
}

/// The values as doubles, nodata as NaN.
fn masked(values: &Values, item: &Item) -> Vec<f64> {
    values
        .to_f64()
        .into_iter()
        .map(|value| {
            if item.is_nodata(value) {
                f64::NAN
            } else {
                value
            }
        })
        .collect()
}

/// The mean over each element's nodes of `value` (NaN when a node has none).
fn element_means(geometry: &MeshGeometry, value: impl Fn(usize) -> Option<f64>) -> Vec<f64> {
    (0..geometry.elements.len())
        .map(|element| {
            let nodes = geometry.elements.nodes(element).unwrap_or_default();
            let values: Option<Vec<f64>> = nodes.iter().map(|node| value(*node as usize)).collect();
            match values {
                Some(values) if !values.is_empty() => {
                    values.iter().sum::<f64>() / values.len() as f64
                }
                _ => f64::NAN,
            }
        })
        .collect()
}

impl DatasetSink for DfsuSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::Mesh(mesh) = header else {
            return Err(FormatError::Incompatible {
                data: header.kind().name(),
                format: FORMAT,
                message: "a DFSU file holds a mesh".to_owned(),
            });
        };
        self.writing = Some(self.start(mesh)?);
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some(writing) = self.writing.as_mut() else {
            return Err(FormatError::Catalogue(
                "values arrived before the header".into(),
            ));
        };
        if frame.step != writing.step {
            if writing.pending {
                writing.flush_step()?;
            }
            writing.step = frame.step;
        }
        let Some(buffer) = writing.buffers.get_mut(frame.item) else {
            return Err(FormatError::Catalogue(format!("no item {}", frame.item)));
        };
        if buffer.len() != frame.offset || !buffer.extend_from(frame.values) {
            return Err(FormatError::Catalogue(
                "values arrived out of order or with a changed type".into(),
            ));
        }
        writing.pending = true;
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        let Some(mut writing) = self.writing.take() else {
            return Err(FormatError::Catalogue(
                "the mesh ended before it began".into(),
            ));
        };
        let only_derived = writing.model.items.is_empty();
        if writing.pending || (only_derived && writing.steps_written == 0) {
            writing.flush_step()?;
        }
        writing.writer.finish()?;
        self.finished = true;
        Ok(())
    }
}

impl WriterSink for DfsuSink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.finished {
            return Err(FormatError::Catalogue(
                "the DFSU file was not completed".into(),
            ));
        }
        Ok(Written {
            files: vec![self.output],
            notes: self.notes,
            summary: None,
        })
    }
}

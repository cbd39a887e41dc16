//! Adapters between kinds of data, so that each writer handles only its native kind (the
//! first of [`crate::catalogue::WriterSpec::accepts`]) and the conversions between kinds live
//! in one place:
//!
//! - points to a mesh (XYZ to VTU): each point a vertex cell, z both the node z and a node
//!   item (so that ParaView can colour by it), the other columns node items;
//! - a mesh to features (mesh or VTU to Shapefile): each element a polygon (vertex cells
//!   points, line cells lines) whose vertices carry the node z, with the element id and its
//!   values as attributes; see [`MESH_FIELDS_MAX`] for how time steps become fields;
//! - features to a mesh (Shapefile to .mesh or VTU): each triangle or strictly convex
//!   quadrilateral polygon an element, other polygons (more corners, holes, concave
//!   quadrilaterals) cut into triangles (see `crate::triangulate`) unless
//!   [`AdaptOptions::triangulate`] is off; polygons with no area seen from above dropped and
//!   counted in a note (see [`Adapter::notes`]); shared vertices (same x and y exactly) merged,
//!   z from the vertex z, numeric attributes element items (every triangle of a polygon gets
//!   its feature's values), nodes on the outline coded 1 (land);
//! - a time series to a mesh (DFS0 to VTU): one node, at the series' position when it has one
//!   (a DFS0 file's item reference coordinates) else at (0, 0, 0), as one vertex cell; each
//!   item a node item, every step kept;
//! - a grid to a mesh (DFS1/DFS2/DFS3 or GeoTIFF to VTU): see [`grid_to_mesh`].
//!
//! Features to a mesh decides orientation, flatness and convexity with Shewchuk's exact
//! orientation predicate (`robust`), not a floating-point cross product: with real-world
//! coordinates (UTM metres in the millions) the cross product of a sliver gets the sign wrong,
//! which turned counter-clockwise triangles clockwise.
//!
//! A polygon whose corners all lie on one line in x and y (repeated corners included) has no
//! area seen from above: a vertical face. MultiPatch buildings are mostly such faces (each
//! wall triangle of a triangle strip repeats a corner's x and y; Fiona's TIN test file has one
//! too), so refusing them would refuse real MultiPatch files, and keeping them made
//! zero-area elements with a repeated node, which no solver can compute on. They are
//! dropped, and a note gives their count and first features; a conversion where nothing else
//! is left is an error, as an empty mesh helps nobody.
//!
//! Mesh to features, features to a mesh and points to a mesh need the whole dataset before they
//! can announce the other kind's header (a mesh header holds the geometry; features need every
//! step of their element), so they collect it: memory is the geometry plus the values they pass
//! on. A time series or a grid as a mesh streams: the mesh follows from the header alone, and
//! the values pass unchanged.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{FormatError, FormatResult};
use crate::model::{
    Coord, DataKind, DataType, DatasetSink, ElementKind, Elements, Feature, FeatureSchema, Field,
    FieldType, Frame, Geometry, GeometryKind, Header, Item, ItemLocation, Line, MeshGeometry,
    MeshHeader, Nodes, PointChunk, PointHeader, Quantity, TimeAxis, TimeSeriesHeader, Value,
    Values,
};

/// The most attribute fields a mesh becomes, besides the element id: dBASE allows 255 fields
/// per file. When items x steps fit, every step of every item is a field (`<item>_<step>` for
/// several steps); otherwise only the last step of each item, named after the item.
pub const MESH_FIELDS_MAX: usize = 254;

/// Name of the writer parameter that turns off the triangulation of polygons that are not
/// triangles or quadrilaterals (features -> mesh); see [`AdaptOptions::triangulate`].
pub const TRIANGULATE: &str = "Triangulate";

/// The `Triangulate` parameter, for the writers that take features through the mesh adapter.
pub const TRIANGULATE_PARAMETER: crate::parameters::ParameterSpec =
    crate::parameters::ParameterSpec {
        name: TRIANGULATE,
        description: "Polygon features -> mesh: cut polygons with more than four corners or with holes into triangles (constrained Delaunay, no added vertices); false refuses them",
        data_type: crate::parameters::ParameterType::Boolean,
        required: false,
        default_value: Some("true"),
        allowed_values: &[],
    };

/// Name of the writer parameter that picks the one time step of a mesh whose values become
/// the features' attributes; see [`AdaptOptions::time_step`].
pub const TIME_STEP: &str = "TimeStep";

/// The `TimeStep` parameter, for the writers that take meshes through the feature adapter.
pub const TIME_STEP_PARAMETER: crate::parameters::ParameterSpec =
    crate::parameters::ParameterSpec {
        name: TIME_STEP,
        description: "Mesh input (e.g. DFSU): the time step whose element values become the attributes, zero-based; negative counts from the end (-1, the default, is the last step)",
        data_type: crate::parameters::ParameterType::Integer,
        required: false,
        default_value: Some("-1"),
        allowed_values: &[],
    };

/// Choices of the adapters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdaptOptions {
    /// Features -> mesh: triangulate polygons that are neither triangles nor quadrilaterals
    /// (more corners, or holes); when false they are an error naming the feature.
    pub triangulate: bool,
    /// Mesh -> features: the one time step whose values become attributes (zero-based,
    /// negative from the end); `None` keeps every step as fields while they fit in
    /// [`MESH_FIELDS_MAX`], else the last.
    pub time_step: Option<i64>,
}

impl Default for AdaptOptions {
    fn default() -> Self {
        Self {
            triangulate: true,
            time_step: None,
        }
    }
}

impl AdaptOptions {
    /// The options a writer's parameters give (defaults for those it does not declare).
    pub fn from_parameters(parameters: &crate::parameters::Parameters) -> Self {
        Self {
            triangulate: parameters.boolean(TRIANGULATE).unwrap_or(true),
            time_step: parameters.integer(TIME_STEP),
        }
    }
}

/// Wraps a writer's sink: data of kind `native` passes through unchanged; other kinds are
/// converted to `native` where an adapter exists.
pub fn for_writer<'a>(
    native: DataKind,
    sink: &'a mut dyn DatasetSink,
) -> Box<dyn DatasetSink + 'a> {
    for_writer_with(native, AdaptOptions::default(), sink)
}

/// [`for_writer`] with `options`.
pub fn for_writer_with<'a>(
    native: DataKind,
    options: AdaptOptions,
    sink: &'a mut dyn DatasetSink,
) -> Box<dyn DatasetSink + 'a> {
    Box::new(Adapter::new(native, options, sink))
}

/// What the adapter is collecting.
enum State {
    /// Passing data through (or not yet begun).
    Pass,
    /// Points to become a mesh.
    Points(PointHeader, PointChunk),
    /// A mesh to become features.
    Mesh(MeshToFeatures),
    /// Features to become a mesh.
    Features(FeatureSchema, Vec<Feature>),
    /// A grid announced as a mesh whose elements are its cells: values pass through.
    GridCells,
}

/// The sink of [`for_writer_with`], for callers that want its [`Adapter::notes`].
pub struct Adapter<'a> {
    native: DataKind,
    options: AdaptOptions,
    sink: &'a mut dyn DatasetSink,
    state: State,
    notes: Vec<String>,
}

impl<'a> Adapter<'a> {
    /// Wraps `sink`, which takes data of kind `native`; see [`for_writer`].
    pub fn new(native: DataKind, options: AdaptOptions, sink: &'a mut dyn DatasetSink) -> Self {
        Self {
            native,
            options,
            sink,
            state: State::Pass,
            notes: Vec::new(),
        }
    }

    /// What the conversion between kinds left out that the user should know, after `end`:
    /// for features to a mesh, the polygons dropped for having no area seen from above.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

impl DatasetSink for Adapter<'_> {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        self.state = match (header, self.native) {
            (header, native) if header.kind() == native => return self.sink.begin(header),
            (Header::Points(points), DataKind::Mesh) => State::Points(
                points.clone(),
                PointChunk {
                    items: vec![Vec::new(); points.items.len()],
                    ..PointChunk::default()
                },
            ),
            (Header::Mesh(mesh), DataKind::Features) => {
                State::Mesh(MeshToFeatures::new(mesh, self.options.time_step)?)
            }
            (Header::Features(schema), DataKind::Mesh) => {
                State::Features(schema.clone(), Vec::new())
            }
            (Header::TimeSeries(series), DataKind::Mesh) => {
                self.sink.begin(&series_as_mesh(series))?;
                State::Pass
            }
            (Header::Grid(grid), DataKind::Mesh) => {
                self.sink.begin(&Header::Mesh(grid_to_mesh(grid)?))?;
                State::GridCells
            }
            (header, native) => {
                return Err(FormatError::Incompatible {
                    data: header.kind().name(),
                    format: native.name(),
                    message: format!(
                        "no conversion from a {} to a {}",
                        header.kind().name(),
                        native.name()
                    ),
                });
            }
        };
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        match &mut self.state {
            State::Mesh(mesh) => mesh.frame(frame),
            _ => self.sink.frame(frame),
        }
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        match &self.state {
            State::Pass | State::GridCells => self.sink.wants(step, item),
            State::Mesh(mesh) => mesh.wants(step),
            _ => true,
        }
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        match &mut self.state {
            State::Features(_, features) => {
                features.push(feature.clone());
                Ok(())
            }
            _ => self.sink.feature(feature),
        }
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        match &mut self.state {
            State::Points(_, all) => {
                all.x.extend_from_slice(&chunk.x);
                all.y.extend_from_slice(&chunk.y);
                all.z.extend_from_slice(&chunk.z);
                for (values, more) in all.items.iter_mut().zip(&chunk.items) {
                    values.extend_from_slice(more);
                }
                Ok(())
            }
            _ => self.sink.points(chunk),
        }
    }

    fn end(&mut self) -> FormatResult<()> {
        match std::mem::replace(&mut self.state, State::Pass) {
            State::Pass | State::GridCells => {}
            State::Points(header, chunk) => points_to_mesh(&header, chunk, self.sink)?,
            State::Mesh(mesh) => mesh.emit(self.sink)?,
            State::Features(schema, features) => {
                let dropped = features_to_mesh(&schema, &features, self.options, self.sink)?;
                self.notes.extend(dropped.note());
            }
        }
        self.sink.end()
    }
}

/// The mesh header of a time series: one node at its position (or the origin) in one vertex
/// cell, each item a node item. Its frames pass unchanged: one value per item and step is the
/// node's value.
fn series_as_mesh(series: &TimeSeriesHeader) -> Header {
    let [x, y, z] = series.position.unwrap_or([0.0; 3]);
    let mut elements = Elements::default();
    elements.push(1, ElementKind::Vertex, &[0]);
    let geometry = MeshGeometry {
        nodes: Nodes {
            ids: vec![1],
            x: vec![x],
            y: vec![y],
            z: vec![z],
            codes: vec![0],
        },
        elements,
        crs: None,
        z_quantity: Quantity::default(),
        layers: None,
    };
    Header::Mesh(MeshHeader {
        geometry: Arc::new(geometry),
        items: series
            .items
            .iter()
            .map(|item| Item {
                location: ItemLocation::Node,
                ..item.clone()
            })
            .collect(),
        time: series.time.clone(),
    })
}

/// The mesh of a grid's cells: quadrilaterals (VTK 9) for a 2D grid, a DFS1 line included
/// (its one row of cells keeps its width), hexahedra (VTK 12) for a grid with a vertical
/// axis. Nodes are the cell corners from the transform (rotation included); a layered grid's
/// layer `k` spans `origin + (k ± 1/2) x spacing` in z (the vertical origin is the first
/// layer's centre, as DFS3 stores it), a 2D grid lies at z = 0. Elements follow the grid's
/// value order (layer, row, column), so the values pass through as cell items unchanged, NaN
/// included; corners go counter-clockwise seen from above, bottom face first.
pub fn grid_to_mesh(grid: &crate::model::GridHeader) -> FormatResult<MeshHeader> {
    let geometry = &grid.geometry;
    let (columns, rows) = (geometry.columns, geometry.rows);
    let layered = geometry.vertical.filter(|vertical| vertical.count > 0);
    let layers = layered.map_or(1, |vertical| vertical.count);
    let too_many = || FormatError::Incompatible {
        data: "grid",
        format: "mesh",
        message: format!(
            "a grid of {columns} x {rows} x {layers} cells has more corners than a mesh can \
             number (4294967295)"
        ),
    };
    let node_layers = if layered.is_some() { layers + 1 } else { 1 };
    let count = (columns + 1)
        .checked_mul(rows + 1)
        .and_then(|count| count.checked_mul(node_layers))
        .filter(|count| u32::try_from(*count).is_ok())
        .ok_or_else(too_many)?;
    let nodes = grid_corner_nodes(geometry, count, node_layers);
    let elements = grid_cell_elements(geometry, layers).ok_or_else(too_many)?;
    Ok(MeshHeader {
        geometry: Arc::new(MeshGeometry {
            nodes,
            elements,
            crs: geometry.crs.clone(),
            z_quantity: Quantity::default(),
            layers: None,
        }),
        items: grid
            .items
            .iter()
            .map(|item| Item {
                location: ItemLocation::Cell,
                ..item.clone()
            })
            .collect(),
        time: grid.time.clone(),
    })
}

/// The corners of a grid's cells: `node_layers` levels of (columns + 1) x (rows + 1) nodes.
fn grid_corner_nodes(
    geometry: &crate::model::GridGeometry,
    count: usize,
    node_layers: usize,
) -> Nodes {
    let (columns, rows) = (geometry.columns, geometry.rows);
    let layered = geometry.vertical.filter(|vertical| vertical.count > 0);
    let mut nodes = Nodes {
        ids: (1..=count as i64).collect(),
        x: Vec::with_capacity(count),
        y: Vec::with_capacity(count),
        z: Vec::with_capacity(count),
        codes: vec![0; count],
    };
    for layer in 0..node_layers {
        let z = layered.map_or(0.0, |vertical| {
            vertical.origin + (layer as f64 - 0.5) * vertical.spacing
        });
        for row in 0..=rows {
            for column in 0..=columns {
                let (x, y) = geometry.transform.apply(column as f64, row as f64);
                nodes.x.push(x);
                nodes.y.push(y);
                nodes.z.push(z);
            }
        }
    }
    nodes
}

/// The cells of a grid of `layers` layers as quadrilaterals or hexahedra over the nodes of
/// [`grid_corner_nodes`]; `None` when they are too many to count.
fn grid_cell_elements(geometry: &crate::model::GridGeometry, layers: usize) -> Option<Elements> {
    let (columns, rows) = (geometry.columns, geometry.rows);
    let layered = geometry.vertical.filter(|vertical| vertical.count > 0);
    let node = |column: usize, row: usize, layer: usize| {
        u32::try_from((layer * (rows + 1) + row) * (columns + 1) + column).unwrap_or(u32::MAX)
    };
    // Counter-clockwise from above: a north-up transform (negative determinant, rows running
    // south) starts at the cell's lower-left corner, the next row.
    let transform = &geometry.transform;
    let determinant = transform.pixel_width * transform.pixel_height
        - transform.row_rotation * transform.column_rotation;
    let corners: [(usize, usize); 4] = if determinant < 0.0 {
        [(0, 1), (1, 1), (1, 0), (0, 0)]
    } else {
        [(0, 0), (1, 0), (1, 1), (0, 1)]
    };
    let upward = layered.is_none_or(|vertical| vertical.spacing >= 0.0);
    let cells = columns.checked_mul(rows)?.checked_mul(layers)?;
    let mut elements = Elements {
        ids: Vec::with_capacity(cells),
        kinds: Vec::with_capacity(cells),
        offsets: Vec::with_capacity(cells + 1),
        connectivity: Vec::new(),
    };
    elements.offsets.push(0);
    let mut corner_nodes = Vec::with_capacity(8);
    for layer in 0..layers {
        let (bottom, top) = if upward {
            (layer, layer + 1)
        } else {
            (layer + 1, layer)
        };
        for row in 0..rows {
            for column in 0..columns {
                corner_nodes.clear();
                let face = |level: usize, out: &mut Vec<u32>| {
                    for (dc, dr) in corners {
                        out.push(node(column + dc, row + dr, level));
                    }
                };
                let kind = if layered.is_some() {
                    face(bottom, &mut corner_nodes);
                    face(top, &mut corner_nodes);
                    ElementKind::Hexahedron
                } else {
                    face(0, &mut corner_nodes);
                    ElementKind::Quad
                };
                let id = elements.ids.len() as i64 + 1;
                elements.push(id, kind, &corner_nodes);
            }
        }
    }
    Some(elements)
}

/// Emits a point set as a mesh of vertex cells.
fn points_to_mesh(
    header: &PointHeader,
    chunk: PointChunk,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let count = chunk.len();
    let mut elements = Elements::default();
    for index in 0..count {
        let node = u32::try_from(index).map_err(|_| FormatError::Incompatible {
            data: "point set",
            format: "mesh",
            message: "more than 4294967295 points".into(),
        })?;
        elements.push(index as i64 + 1, ElementKind::Vertex, &[node]);
    }
    let z_item = Item {
        location: ItemLocation::Node,
        ..Item::new(header.z_item.name.clone(), DataType::F64)
    };
    let mut items = vec![z_item];
    items.extend(header.items.iter().map(|item| Item {
        location: ItemLocation::Node,
        data_type: DataType::F64,
        ..item.clone()
    }));
    let mut values = vec![Values::F64(chunk.z.clone())];
    values.extend(chunk.items.into_iter().map(Values::F64));
    let geometry = MeshGeometry {
        nodes: Nodes {
            ids: (1..=count as i64).collect(),
            x: chunk.x,
            y: chunk.y,
            z: chunk.z,
            codes: vec![0; count],
        },
        elements,
        crs: header.crs.clone(),
        z_quantity: header.z_item.quantity.clone(),
        layers: None,
    };
    sink.begin(&Header::Mesh(MeshHeader {
        geometry: Arc::new(geometry),
        items,
        time: TimeAxis::None,
    }))?;
    for (item, values) in values.iter().enumerate() {
        sink.frame(Frame {
            step: 0,
            item,
            offset: 0,
            values,
        })?;
    }
    Ok(())
}

/// Collects the values of a mesh that become attributes.
struct MeshToFeatures {
    header: MeshHeader,
    /// The steps kept: all of them, or only one.
    all_steps: bool,
    /// The one step kept, when chosen; else the last one seen.
    chosen: Option<usize>,
    /// `kept[item]`: the values of the kept steps, one buffer per kept step.
    kept: Vec<Vec<Values>>,
}

impl MeshToFeatures {
    fn new(header: &MeshHeader, time_step: Option<i64>) -> FormatResult<Self> {
        let steps = header.time.steps().max(1);
        let chosen = time_step
            .map(|step| chosen_step(step, header.time.steps()))
            .transpose()?;
        let all_steps =
            chosen.is_none() && header.items.len().saturating_mul(steps) <= MESH_FIELDS_MAX;
        Ok(Self {
            header: header.clone(),
            all_steps,
            chosen,
            kept: vec![Vec::new(); header.items.len()],
        })
    }

    /// Whether the values of `step` become attributes.
    fn wants(&self, step: usize) -> bool {
        self.chosen.is_none_or(|chosen| chosen == step)
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        if !self.wants(frame.step) {
            return Ok(());
        }
        let Some(kept) = self.kept.get_mut(frame.item) else {
            return Err(FormatError::Catalogue(format!("no item {}", frame.item)));
        };
        let slot = if self.all_steps { frame.step } else { 0 };
        if kept.len() <= slot {
            kept.resize(slot + 1, Values::with_capacity(frame.values.data_type(), 0));
        }
        let Some(buffer) = kept.get_mut(slot) else {
            return Err(FormatError::Catalogue("frame out of order".into()));
        };
        if frame.offset == 0 {
            buffer.clear();
        }
        if buffer.len() != frame.offset || !buffer.extend_from(frame.values) {
            return Err(FormatError::Catalogue("frame out of order".into()));
        }
        Ok(())
    }

    fn schema(&self) -> FeatureSchema {
        let mut fields = vec![Field::new("id", FieldType::Integer)];
        let steps = if self.all_steps {
            self.header.time.steps()
        } else {
            1
        };
        for step in 0..steps {
            for item in &self.header.items {
                let name = if steps > 1 {
                    format!("{}_{step}", item.name)
                } else {
                    item.name.clone()
                };
                let field_type = if item.data_type.is_float() {
                    FieldType::Float
                } else {
                    FieldType::Integer
                };
                fields.push(Field::new(name, field_type));
            }
        }
        let kinds = &self.header.geometry.elements.kinds;
        let geometry_kind =
            if kinds.iter().all(|kind| *kind == ElementKind::Vertex) && !kinds.is_empty() {
                GeometryKind::Point
            } else if kinds.iter().all(|kind| *kind == ElementKind::Line) && !kinds.is_empty() {
                GeometryKind::Line
            } else {
                GeometryKind::Polygon
            };
        FeatureSchema {
            fields,
            geometry_kind,
            has_z: true,
            has_m: false,
            crs: self.header.geometry.crs.clone(),
        }
    }

    fn emit(self, sink: &mut dyn DatasetSink) -> FormatResult<()> {
        let schema = self.schema();
        sink.begin(&Header::Features(schema))?;
        let geometry = &self.header.geometry;
        let steps = if self.all_steps {
            self.header.time.steps()
        } else {
            1
        };
        for element in 0..geometry.elements.len() {
            let nodes = geometry.elements.nodes(element).unwrap_or_default();
            let id = geometry
                .elements
                .ids
                .get(element)
                .copied()
                .unwrap_or(element as i64 + 1);
            let mut values = vec![Value::Integer(id)];
            for step in 0..steps {
                for (item, kept) in self.header.items.iter().zip(&self.kept) {
                    values.push(attribute(item, kept.get(step), element, nodes));
                }
            }
            let geometry = element_geometry(geometry, element, nodes)?;
            sink.feature(&Feature {
                geometry: Some(geometry),
                values,
            })?;
        }
        Ok(())
    }
}

/// The index of the `TimeStep` parameter's step among `steps` (negative from the end).
fn chosen_step(step: i64, steps: usize) -> FormatResult<usize> {
    let count = i64::try_from(steps).unwrap_or(i64::MAX);
    let index = if step < 0 { count + step } else { step };
    usize::try_from(index)
        .ok()
        .filter(|index| *index < steps)
        .ok_or_else(|| {
            FormatError::parameter(
                TIME_STEP,
                format!(
                    "step {step} does not exist: the mesh has {steps} time steps (0 to {}, or -1 to -{steps} from the end)",
                    steps.saturating_sub(1)
                ),
            )
        })
}

/// The value of `item` for `element`: its own value, or the mean of its nodes' values for a
/// node item; `Null` for nodata.
fn attribute(item: &Item, values: Option<&Values>, element: usize, nodes: &[u32]) -> Value {
    let Some(values) = values else {
        return Value::Null;
    };
    let value = match item.location {
        ItemLocation::Cell => values.get_f64(element),
        ItemLocation::Node => {
            let node_values: Option<Vec<f64>> = nodes
                .iter()
                .map(|&node| values.get_f64(node as usize))
                .collect();
            node_values
                .filter(|all| !all.is_empty() && !all.iter().any(|value| item.is_nodata(*value)))
                .map(|all| all.iter().sum::<f64>() / all.len() as f64)
        }
    };
    match value {
        Some(value) if !item.is_nodata(value) => {
            if item.data_type.is_float() || item.location == ItemLocation::Node {
                Value::Float(value)
            } else {
                Value::Integer(value as i64)
            }
        }
        _ => Value::Null,
    }
}

fn element_geometry(
    geometry: &MeshGeometry,
    element: usize,
    nodes: &[u32],
) -> FormatResult<Geometry> {
    let coord = |node: &u32| {
        let index = *node as usize;
        let nodes = &geometry.nodes;
        Coord::xyz(
            nodes.x.get(index).copied().unwrap_or(f64::NAN),
            nodes.y.get(index).copied().unwrap_or(f64::NAN),
            nodes.z.get(index).copied().unwrap_or(0.0),
        )
    };
    let kind = geometry.elements.kinds.get(element).copied();
    match kind {
        Some(ElementKind::Vertex) => Ok(Geometry::Point(
            nodes
                .first()
                .map(coord)
                .unwrap_or(Coord::xy(f64::NAN, f64::NAN)),
        )),
        Some(ElementKind::Line) => Ok(Geometry::LineString(nodes.iter().map(coord).collect())),
        Some(ElementKind::Triangle | ElementKind::Quad) => {
            let mut ring: Line = nodes.iter().map(coord).collect();
            if let Some(first) = ring.first().copied() {
                ring.push(first);
            }
            Ok(Geometry::Polygon(vec![ring]))
        }
        other => Err(FormatError::Incompatible {
            data: "mesh",
            format: "feature collection",
            message: format!(
                "element {} is a {} cell; only 2D elements (triangles, quadrilaterals), lines and vertices become features (extract a layer of a 3D mesh first, e.g. DfsuReader's ReadFull3D=false)",
                element + 1,
                other.map(ElementKind::label).unwrap_or_default()
            ),
        }),
    }
}

/// Builds a mesh from polygon features and emits it; returns the polygons it dropped.
fn features_to_mesh(
    schema: &FeatureSchema,
    features: &[Feature],
    options: AdaptOptions,
    sink: &mut dyn DatasetSink,
) -> FormatResult<Dropped> {
    let mut builder = MeshBuilder {
        triangulate: options.triangulate,
        ..MeshBuilder::default()
    };
    let numeric: Vec<(usize, &Field)> = schema
        .fields
        .iter()
        .enumerate()
        .filter(|(_, field)| matches!(field.field_type, FieldType::Integer | FieldType::Float))
        .collect();
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); numeric.len()];
    for (index, feature) in features.iter().enumerate() {
        let polygons = polygons_of(feature, index)?;
        for polygon in polygons {
            let elements = builder.add_polygon(polygon, index)?;
            for ((field_index, _), column) in numeric.iter().zip(&mut columns) {
                let value = number_of(feature.values.get(*field_index));
                column.extend(std::iter::repeat_n(value, elements));
            }
        }
    }
    if builder.elements.is_empty() && builder.dropped.count > 0 {
        return Err(FormatError::Incompatible {
            data: "feature collection",
            format: "mesh",
            message: format!(
                "every polygon has no area seen from above ({} with all corners on one line in x and y, such as vertical faces); a mesh needs at least one",
                builder.dropped.count
            ),
        });
    }
    let items: Vec<Item> = numeric
        .iter()
        .map(|(_, field)| Item {
            nodata: None,
            ..Item::new(field.name.clone(), DataType::F64)
        })
        .collect();
    let dropped = std::mem::take(&mut builder.dropped);
    let geometry = builder.finish(schema);
    sink.begin(&Header::Mesh(MeshHeader {
        geometry: Arc::new(geometry),
        items,
        time: TimeAxis::None,
    }))?;
    for (item, column) in columns.into_iter().enumerate() {
        let values = Values::F64(column);
        sink.frame(Frame {
            step: 0,
            item,
            offset: 0,
            values: &values,
        })?;
    }
    Ok(dropped)
}

/// The polygons dropped for having no area seen from above.
#[derive(Debug, Default)]
struct Dropped {
    count: usize,
    /// The first few features (0-based) they belong to, each once.
    features: Vec<usize>,
    /// Whether more features than those hold such polygons.
    more: bool,
}

impl Dropped {
    /// How many features a note names; the count covers the rest.
    const FEATURES_NAMED_MAX: usize = 10;

    fn add(&mut self, feature: usize) {
        self.count += 1;
        if self.features.last() == Some(&feature) {
            return;
        }
        if self.features.len() < Self::FEATURES_NAMED_MAX {
            self.features.push(feature);
        } else {
            self.more = true;
        }
    }

    fn note(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let named: Vec<String> = self
            .features
            .iter()
            .map(|feature| (feature + 1).to_string())
            .collect();
        let more = if self.more { ", ..." } else { "" };
        Some(format!(
            "{} polygon{} with no area seen from above (all corners on one line in x and y, such as vertical faces of a MultiPatch) dropped: feature{} {}{more}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            if named.len() == 1 { "" } else { "s" },
            named.join(", ")
        ))
    }
}

fn number_of(value: Option<&Value>) -> f64 {
    match value {
        Some(Value::Integer(value)) => *value as f64,
        Some(Value::Float(value)) => *value,
        Some(Value::Boolean(value)) => f64::from(u8::from(*value)),
        _ => f64::NAN,
    }
}

/// The polygons of a feature: one for a Polygon, each part of a MultiPolygon.
fn polygons_of(feature: &Feature, index: usize) -> FormatResult<Vec<&Vec<Line>>> {
    match &feature.geometry {
        Some(Geometry::Polygon(rings)) => Ok(vec![rings]),
        Some(Geometry::MultiPolygon(polygons)) => Ok(polygons.iter().collect()),
        other => Err(not_an_element(
            index,
            &format!(
                "its geometry is {}; only polygons become elements",
                match other {
                    None => "empty",
                    Some(Geometry::Point(_) | Geometry::MultiPoint(_)) => "a point",
                    Some(Geometry::LineString(_) | Geometry::MultiLineString(_)) => "a line",
                    Some(_) => "not a polygon",
                }
            ),
        )),
    }
}

fn not_an_element(feature: usize, message: &str) -> FormatError {
    FormatError::Incompatible {
        data: "feature collection",
        format: "mesh",
        message: format!("feature {} cannot be an element: {message}", feature + 1),
    }
}

/// Merges vertices and collects elements.
#[derive(Default)]
struct MeshBuilder {
    /// Whether polygons other than triangles and quadrilaterals are triangulated.
    triangulate: bool,
    index: HashMap<(u64, u64), u32>,
    nodes: Nodes,
    elements: Elements,
    edges: HashMap<(u32, u32), u32>,
    dropped: Dropped,
}

impl MeshBuilder {
    /// Adds one polygon as one element, or as triangles, or drops it when it has no area seen
    /// from above; returns the number of elements added.
    fn add_polygon(&mut self, rings: &[Line], feature: usize) -> FormatResult<usize> {
        let exterior = rings
            .first()
            .map(|ring| corners_of(ring))
            .unwrap_or_default();
        if let Some(corner) = exterior
            .iter()
            .find(|corner| !corner.x.is_finite() || !corner.y.is_finite())
        {
            return Err(not_an_element(
                feature,
                &format!(
                    "its vertex ({}, {}) is not a finite coordinate",
                    corner.x, corner.y
                ),
            ));
        }
        if crate::triangulate::is_flat(&exterior) {
            self.dropped.add(feature);
            return Ok(0);
        }
        if rings.len() == 1
            && let Some(element) = element_of(&exterior)
        {
            self.add_element(&element)?;
            return Ok(1);
        }
        if !self.triangulate {
            return Err(not_an_element(feature, &refusal(rings, &exterior)));
        }
        let triangles = crate::triangulate::triangulate(rings)
            .map_err(|error| not_an_element(feature, &error.to_string()))?;
        let mut count = 0;
        for triangle in triangles {
            // Counter-clockwise and not flat by spade's exact predicates; checked again so
            // that no flat element can come out whatever the triangulation returns.
            if let Some(element) = element_of(&triangle) {
                self.add_element(&element)?;
                count += 1;
            }
        }
        Ok(count)
    }

    /// Adds a triangle or quadrilateral whose corners are counter-clockwise.
    fn add_element(&mut self, vertices: &[Coord]) -> FormatResult<()> {
        let mut refs = Vec::with_capacity(4);
        for vertex in vertices {
            refs.push(self.node(vertex)?);
        }
        let kind = if refs.len() == 3 {
            ElementKind::Triangle
        } else {
            ElementKind::Quad
        };
        for (position, &from) in refs.iter().enumerate() {
            let to = refs
                .get((position + 1) % refs.len())
                .copied()
                .unwrap_or(from);
            *self.edges.entry((from.min(to), from.max(to))).or_default() += 1;
        }
        let id = self.elements.len() as i64 + 1;
        self.elements.push(id, kind, &refs);
        Ok(())
    }

    fn node(&mut self, vertex: &Coord) -> FormatResult<u32> {
        // `+ 0.0` turns -0.0 into 0.0: the same position, which must be one node.
        let key = ((vertex.x + 0.0).to_bits(), (vertex.y + 0.0).to_bits());
        if let Some(&index) = self.index.get(&key) {
            return Ok(index);
        }
        let index = u32::try_from(self.nodes.len()).map_err(|_| FormatError::Incompatible {
            data: "feature collection",
            format: "mesh",
            message: "more than 4294967295 vertices".into(),
        })?;
        self.index.insert(key, index);
        self.nodes.ids.push(i64::from(index) + 1);
        self.nodes.x.push(vertex.x);
        self.nodes.y.push(vertex.y);
        self.nodes.z.push(vertex.z.unwrap_or(0.0));
        self.nodes.codes.push(0);
        Ok(index)
    }

    fn finish(mut self, schema: &FeatureSchema) -> MeshGeometry {
        for ((from, to), count) in &self.edges {
            if *count == 1 {
                for node in [from, to] {
                    if let Some(code) = self.nodes.codes.get_mut(*node as usize) {
                        *code = 1;
                    }
                }
            }
        }
        MeshGeometry {
            nodes: self.nodes,
            elements: self.elements,
            crs: schema.crs.clone(),
            z_quantity: Quantity::bathymetry(),
            layers: None,
        }
    }
}

/// A ring's corners: its vertices without repeats of a position in a row, the closing repeat
/// of the first included.
fn corners_of(ring: &[Coord]) -> Vec<Coord> {
    let mut corners: Vec<Coord> = Vec::with_capacity(ring.len());
    for corner in ring {
        if corners
            .last()
            .is_none_or(|last| !crate::triangulate::same_xy(last, corner))
        {
            corners.push(*corner);
        }
    }
    while corners.len() > 1
        && let (Some(first), Some(last)) = (corners.first(), corners.last())
        && crate::triangulate::same_xy(first, last)
    {
        corners.pop();
    }
    corners
}

/// The corners of a valid element, counter-clockwise: a triangle whose corners are not on one
/// line, or a strictly convex quadrilateral (every corner turning the same way, none on the
/// line through its neighbours); `None` for anything else, which must be triangulated.
fn element_of(corners: &[Coord]) -> Option<Vec<Coord>> {
    if !(corners.len() == 3 || corners.len() == 4) {
        return None;
    }
    let turns: Vec<f64> = (0..corners.len())
        .map(|index| {
            let at = |offset: usize| corners.get((index + offset) % corners.len());
            match (at(0), at(1), at(2)) {
                (Some(a), Some(b), Some(c)) => crate::triangulate::orientation(a, b, c),
                _ => f64::NAN,
            }
        })
        .collect();
    if turns.iter().all(|turn| *turn > 0.0) {
        Some(corners.to_vec())
    } else if turns.iter().all(|turn| *turn < 0.0) {
        Some(corners.iter().rev().copied().collect())
    } else {
        None
    }
}

/// Why a polygon that is not an element is refused when triangulation is off.
fn refusal(rings: &[Line], exterior: &[Coord]) -> String {
    if rings.len() > 1 {
        format!(
            "a polygon with {} holes; elements have none (set Triangulate to true to cut it into triangles)",
            rings.len().saturating_sub(1)
        )
    } else if exterior.len() == 4 {
        "a quadrilateral that is not strictly convex (concave, self-crossing, or with a corner on the line through its neighbours); elements must be (set Triangulate to true to cut it into triangles)".to_owned()
    } else {
        format!(
            "a polygon with {} corners; only triangles and quadrilaterals are elements (set Triangulate to true to cut it into triangles)",
            exterior.len()
        )
    }
}

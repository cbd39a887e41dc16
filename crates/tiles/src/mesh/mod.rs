//! Flexible meshes (DFSU, .mesh, VTU) as fields: element values drawn flat, or node values
//! interpolated inside each element.
//!
//! A tile asks for 65,536 pixel centres, and meshes reach millions of elements, so the work
//! is split in two. [`MeshIndex`] holds what depends on the geometry only (the corners of the
//! elements drawn, and a packed R-tree over their bounding boxes, see `tree.rs`); it is built
//! once per mesh and shared behind an `Arc` by every item and time step. [`MeshField`] adds
//! the values of one item at one step; building it is a pass over the values at most (node
//! values derived from element values, see `nodes.rs`).
//!
//! Choices:
//! - Which element holds a point is decided exactly (`locate.rs`): inside, or on an edge or a
//!   corner. A point that several elements hold (on a shared edge) takes the element that
//!   comes first in the mesh, so tiles do not depend on the order of the pixels. Consecutive
//!   pixel centres usually fall in the same element, so the element of the previous point is
//!   tried first; it is taken only when the point is strictly inside it, which in a valid mesh
//!   (elements do not overlap) no other element can claim. In an invalid mesh with
//!   overlapping elements a point strictly inside two of them takes one of them.
//! - Flat shading: element values as they are; node values as the mean of the element's
//!   corners (one value per element, as flat shading means, favouring no corner over
//!   another), NaN when a corner is NaN.
//! - Smooth shading: node values (given, or derived from the element values as MIKE's tools
//!   do, see `nodes.rs`) interpolated inside each element: linear in triangles, bilinear in
//!   quadrilaterals, mean value coordinates in other polygons (see `interpolate.rs`). An
//!   element whose own value is NaN (dry) stays NaN; with node values, an element with a NaN
//!   corner is NaN.
//! - Elements drawn: triangles, quadrilaterals, polygons, VTK pixels, and the quadratic
//!   triangles and quadrilaterals by their corners (straight edges). Lines, vertices,
//!   triangle strips and 3D cells of a mesh without layers are not drawn; a mesh with nothing
//!   to draw is an error.
//! - Layered (3D) meshes draw their surface: the top element of each column, as MIKE IO's
//!   `read(layers="top")` selects it (basin-formats' [`top_layer`]). Values still come in the
//!   order of the full mesh (all 3D elements, or all 3D nodes), so one step of a DFSU item is
//!   used as read. Vertical profiles and columns have no surface area: an error.
//! - Meshes have no overviews: a zoomed-out tile samples the element under each pixel centre,
//!   which is exact at that point, if noisy where elements are smaller than pixels.
//! - Nothing panics on bad input: node indices out of range, ragged offsets and more than
//!   2^32 elements or nodes are errors of [`MeshIndex::build`]; elements with a NaN or
//!   infinite corner are not drawn; degenerate elements take part with no area.
//!
//! Cost on 1,002,528 triangles (benches/mesh.rs; fastest of 100 runs on a shared 2-core
//! machine): the index builds in 0.19 s and holds 47 MB; a 256 x 256 tile samples in 1.5 ms
//! flat and 2.4 ms smooth when elements span pixels (11 pixels per element), and in 28 ms
//! when the whole mesh is one tile (15 elements per pixel, so each pixel is another element
//! and the time goes to cache misses, see `tree.rs`); node values from element values take
//! 50 ms per item and step.

mod interpolate;
mod locate;
mod nodes;
mod tree;

#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;

use basin_formats::dfs::dfsu::layers::{TopLayer, top_layer};
use basin_formats::model::{ElementKind, ItemLocation, MeshGeometry};

use crate::field::Field;
use crate::tms::Bounds;
use locate::{Position, locate};
use tree::{PackedTree, TreeStack};

/// Why a mesh cannot be indexed, or values cannot be drawn on it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MeshError {
    /// The node coordinate arrays differ in length.
    NodeArrays {
        /// x values.
        x: usize,
        /// y values.
        y: usize,
    },
    /// The element offsets do not describe the connectivity (too few, decreasing, or past
    /// its end).
    Connectivity {
        /// 0-based element index.
        element: usize,
    },
    /// An element refers to a node the mesh does not have.
    NodeOutOfRange {
        /// 0-based element index.
        element: usize,
        /// The 0-based node index it gives.
        node: u32,
        /// Number of nodes.
        nodes: usize,
    },
    /// More elements, nodes or corners than 32-bit indices count.
    TooLarge,
    /// The surface of a layered mesh cannot be found (the reason).
    Layers(String),
    /// No element has an area to draw: only lines or points, a vertical profile or column,
    /// or no finite coordinates.
    NothingToDraw,
    /// The values do not match the mesh.
    WrongValueCount {
        /// Where the values were said to be.
        location: ValueLocation,
        /// Values the mesh needs there.
        expected: usize,
        /// Values given.
        given: usize,
    },
}

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NodeArrays { x, y } => {
                write!(
                    f,
                    "the mesh has {x} node x coordinates but {y} y coordinates"
                )
            }
            Self::Connectivity { element } => write!(
                f,
                "the connectivity of element {element} (0-based) is out of order or range"
            ),
            Self::NodeOutOfRange {
                element,
                node,
                nodes,
            } => write!(
                f,
                "element {element} (0-based) refers to node {node}, but the mesh has {nodes} nodes"
            ),
            Self::TooLarge => f.write_str("the mesh has more than 2^32 elements, nodes or corners"),
            Self::Layers(reason) => {
                write!(
                    f,
                    "the surface of the layered mesh cannot be found: {reason}"
                )
            }
            Self::NothingToDraw => f.write_str(
                "the mesh has no element with an area to draw (only lines or points, or a \
                 vertical profile or column)",
            ),
            Self::WrongValueCount {
                location,
                expected,
                given,
            } => write!(
                f,
                "the mesh needs {expected} values per {}, {given} were given",
                location.name()
            ),
        }
    }
}

impl std::error::Error for MeshError {}

/// Where values sit on the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueLocation {
    /// One value per element (for a layered mesh: per 3D element).
    Elements,
    /// One value per node (for a layered mesh: per 3D node).
    Nodes,
}

impl ValueLocation {
    /// Where an item of basin-formats has its values.
    pub fn of(location: ItemLocation) -> Self {
        match location {
            ItemLocation::Cell => Self::Elements,
            ItemLocation::Node => Self::Nodes,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Elements => "element",
            Self::Nodes => "node",
        }
    }
}

/// How values fill an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Shading {
    /// One value over the whole element.
    #[default]
    Flat,
    /// Node values interpolated inside the element.
    Smooth,
}

impl Shading {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Flat => "Flat",
            Self::Smooth => "Smooth",
        }
    }

    /// From the wire name, in any case.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Flat, Self::Smooth]
            .into_iter()
            .find(|shading| shading.name().eq_ignore_ascii_case(text))
    }
}

/// The drawn elements of a mesh geometry and an index to find them, built once per geometry
/// and shared (it is `Send + Sync`).
///
/// Drawn elements are kept in the order of the tree's leaves (along a Hilbert curve) and
/// their nodes numbered in the order those elements first use them, so that what one lookup
/// reads sits together in memory; `element_sources` and `node_sources` lead back to the
/// geometry.
#[derive(Debug, Clone)]
pub struct MeshIndex {
    /// Coordinates of the drawn nodes.
    nodes: Vec<[f64; 2]>,
    /// The node of the geometry (a 3D node of a layered mesh) each drawn node is.
    node_sources: Vec<u32>,
    /// The corners of each drawn element (drawn node indices): up to four in place, unused
    /// slots [`NO_CORNER`]; more as `[MORE_CORNERS, start, end, NO_CORNER]`, a range of
    /// `more_corners`. Fixed slots let a lookup read an element's corners without first
    /// reading where they start, at the memory of a start and three corners.
    corners: Vec<[u32; 4]>,
    /// Corners of the elements with more than four.
    more_corners: Vec<u32>,
    /// The element of the geometry (a 3D element of a layered mesh) each drawn element is.
    element_sources: Vec<u32>,
    tree: PackedTree,
    extent: Bounds,
    source_elements: usize,
    source_nodes: usize,
}

/// An unused corner slot.
const NO_CORNER: u32 = u32::MAX;

/// Marks corner slots that point into `more_corners`.
const MORE_CORNERS: u32 = u32::MAX - 1;

/// What a search remembers from one point to the next.
#[derive(Debug, Default)]
struct Search {
    stack: TreeStack,
    last: Option<usize>,
}

/// The elements of a 2D mesh that have an area, in the mesh's order and node numbering.
#[derive(Debug, Default)]
struct Drawable {
    corner_starts: Vec<usize>,
    corners: Vec<u32>,
    sources: Vec<u32>,
    boxes: Vec<Bounds>,
}

impl Drawable {
    fn corners(&self, element: usize) -> &[u32] {
        let (Some(&start), Some(&end)) = (
            self.corner_starts.get(element),
            self.corner_starts.get(element + 1),
        ) else {
            return &[];
        };
        self.corners.get(start..end).unwrap_or_default()
    }
}

impl MeshIndex {
    /// Indexes the 2D elements of `geometry` (the surface of a layered mesh).
    pub fn build(geometry: &MeshGeometry) -> Result<Self, MeshError> {
        check(geometry)?;
        let counts = (geometry.elements.len(), geometry.nodes.len());
        if geometry.layers.is_none() {
            return Self::from_plane(geometry, None, None, counts);
        }
        let top = top_layer(geometry).map_err(|error| MeshError::Layers(error.to_string()))?;
        let node_sources = surface_node_sources(geometry, &top);
        let element_sources = top
            .elements
            .iter()
            .map(|&element| u32::try_from(element).map_err(|_| MeshError::TooLarge))
            .collect::<Result<Vec<u32>, _>>()?;
        Self::from_plane(
            &top.geometry,
            Some(&element_sources),
            Some(&node_sources),
            counts,
        )
    }

    /// Indexes a 2D mesh whose element `e` is element `element_sources[e]` of the source and
    /// whose node `n` is node `node_sources[n]` (themselves when `None`).
    fn from_plane(
        plane: &MeshGeometry,
        element_sources: Option<&[u32]>,
        node_sources: Option<&[u32]>,
        (source_elements, source_nodes): (usize, usize),
    ) -> Result<Self, MeshError> {
        let drawable = drawable(plane, element_sources)?;
        let (tree, order) = PackedTree::build(&drawable.boxes);
        let extent = drawable
            .boxes
            .iter()
            .copied()
            .reduce(|a, b| a.union(&b))
            .ok_or(MeshError::NothingToDraw)?;
        let mut index = Self {
            nodes: Vec::new(),
            node_sources: Vec::new(),
            corners: Vec::with_capacity(order.len()),
            more_corners: Vec::new(),
            element_sources: Vec::with_capacity(order.len()),
            tree,
            extent,
            source_elements,
            source_nodes,
        };
        // Drawn number of each node of the plane, given as elements first use it.
        let mut numbers = vec![NO_CORNER; plane.nodes.len()];
        let mut corners = Vec::new();
        for element in order {
            corners.clear();
            for &node in drawable.corners(element as usize) {
                let Some(number) = numbers.get_mut(node as usize) else {
                    continue;
                };
                if *number == NO_CORNER {
                    *number = u32::try_from(index.nodes.len())
                        .ok()
                        .filter(|number| *number < MORE_CORNERS)
                        .ok_or(MeshError::TooLarge)?;
                    let at = node as usize;
                    let x = plane.nodes.x.get(at).copied().unwrap_or(f64::NAN);
                    let y = plane.nodes.y.get(at).copied().unwrap_or(f64::NAN);
                    index.nodes.push([x, y]);
                    let source = node_sources.map_or(Some(node), |s| s.get(at).copied());
                    index.node_sources.push(source.unwrap_or(NO_CORNER));
                }
                corners.push(*number);
            }
            let slots = match corners[..] {
                [a, b, c] => [a, b, c, NO_CORNER],
                [a, b, c, d] => [a, b, c, d],
                _ => {
                    let start = index.more_corners.len();
                    index.more_corners.extend_from_slice(&corners);
                    let range = (
                        u32::try_from(start),
                        u32::try_from(index.more_corners.len()),
                    );
                    let (Ok(start), Ok(end)) = range else {
                        return Err(MeshError::TooLarge);
                    };
                    [MORE_CORNERS, start, end, NO_CORNER]
                }
            };
            index.corners.push(slots);
            let source = drawable.sources.get(element as usize).copied();
            index.element_sources.push(source.unwrap_or(element));
        }
        // Nodes were pushed as elements first used them, growing by doubling.
        index.nodes.shrink_to_fit();
        index.node_sources.shrink_to_fit();
        index.more_corners.shrink_to_fit();
        Ok(index)
    }

    /// The bounding box of the drawn elements.
    pub fn extent(&self) -> Bounds {
        self.extent
    }

    /// Number of 2D elements drawn.
    pub fn element_count(&self) -> usize {
        self.element_sources.len()
    }

    /// Bytes held.
    pub fn approximate_bytes(&self) -> usize {
        let u32s = self.corners.capacity() * 4
            + self.more_corners.capacity()
            + self.element_sources.capacity()
            + self.node_sources.capacity();
        self.nodes.capacity() * std::mem::size_of::<[f64; 2]>()
            + u32s * std::mem::size_of::<u32>()
            + self.tree.approximate_bytes()
    }

    /// The element of the geometry (a 3D element of a layered mesh: the top of its column)
    /// that holds `(x, y)`, inside or on its boundary; the first one in the mesh when several
    /// do.
    pub fn element_at(&self, x: f64, y: f64) -> Option<usize> {
        let drawn = self.find([x, y], &mut Search::default())?;
        Some(self.source_of(drawn) as usize)
    }

    fn source_of(&self, drawn: usize) -> u32 {
        self.element_sources.get(drawn).copied().unwrap_or(u32::MAX)
    }

    /// The drawn element holding `point`, trying the last one found first.
    fn find(&self, point: [f64; 2], search: &mut Search) -> Option<usize> {
        let [x, y] = point;
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        if let Some(last) = search.last
            && self.position(last, point) == Position::Inside
        {
            return Some(last);
        }
        let mut best: Option<usize> = None;
        let inside = self
            .tree
            .visit(point, search.last, &mut search.stack, |drawn| {
                match self.position(drawn, point) {
                    Position::Inside => ControlFlow::Break(()),
                    Position::Boundary => {
                        let first = |found: usize| self.source_of(found) < self.source_of(drawn);
                        best = Some(best.filter(|found| first(*found)).unwrap_or(drawn));
                        ControlFlow::Continue(())
                    }
                    Position::Outside => ControlFlow::Continue(()),
                }
            });
        let found = inside.or(best);
        if found.is_some() {
            search.last = found;
        }
        found
    }

    fn position(&self, drawn: usize, point: [f64; 2]) -> Position {
        self.with_corners(drawn, |corners, _| locate(corners, point))
    }

    /// The drawn node indices of the corners of drawn element `drawn`.
    fn corner_nodes(&self, drawn: usize) -> &[u32] {
        let Some(slots) = self.corners.get(drawn) else {
            return &[];
        };
        match *slots {
            [MORE_CORNERS, start, end, _] => self
                .more_corners
                .get(start as usize..end as usize)
                .unwrap_or_default(),
            [_, _, _, NO_CORNER] => slots.get(..3).unwrap_or_default(),
            _ => slots,
        }
    }

    /// Calls `use_corners` with the coordinates and node indices of the corners of drawn
    /// element `drawn`, without allocating for elements of up to 8 corners.
    fn with_corners<T>(
        &self,
        drawn: usize,
        use_corners: impl FnOnce(&[[f64; 2]], &[u32]) -> T,
    ) -> T {
        let nodes = self.corner_nodes(drawn);
        let coordinates = |node: &u32| {
            self.nodes
                .get(*node as usize)
                .copied()
                .unwrap_or([f64::NAN; 2])
        };
        let mut small = [[f64::NAN; 2]; 8];
        if let Some(slots) = small.get_mut(..nodes.len()) {
            for (slot, node) in slots.iter_mut().zip(nodes) {
                *slot = coordinates(node);
            }
            use_corners(slots, nodes)
        } else {
            let corners: Vec<[f64; 2]> = nodes.iter().map(coordinates).collect();
            use_corners(&corners, nodes)
        }
    }

    /// The drawn elements with their corners and the value of their source element.
    fn elements_with<'a>(
        &'a self,
        values: &'a [f32],
    ) -> impl Iterator<Item = (&'a [u32], f32)> + Clone + 'a {
        self.element_sources
            .iter()
            .enumerate()
            .map(move |(drawn, source)| {
                let value = values.get(*source as usize).copied().unwrap_or(f32::NAN);
                (self.corner_nodes(drawn), value)
            })
    }

    /// The value of node item `values` at each drawn node.
    fn node_values_of(&self, values: &[f32]) -> Vec<f32> {
        self.node_sources
            .iter()
            .map(|source| values.get(*source as usize).copied().unwrap_or(f32::NAN))
            .collect()
    }
}

/// The elements of `plane` with an area and finite corners; element `e` is element
/// `sources[e]` of the source (itself when `None`).
fn drawable(plane: &MeshGeometry, sources: Option<&[u32]>) -> Result<Drawable, MeshError> {
    let mut drawable = Drawable {
        corner_starts: vec![0],
        ..Drawable::default()
    };
    let mut corners = Vec::new();
    let elements = &plane.elements;
    let at = |node: &u32| {
        let x = plane.nodes.x.get(*node as usize)?;
        let y = plane.nodes.y.get(*node as usize)?;
        (x.is_finite() && y.is_finite()).then_some((*x, *y))
    };
    for (element, kind) in (0_u32..).zip(&elements.kinds) {
        let Some(refs) = elements.nodes(element as usize) else {
            continue;
        };
        if !corners_of(*kind, refs, &mut corners) {
            continue;
        }
        let Some(points) = corners.iter().map(at).collect::<Option<Vec<_>>>() else {
            continue;
        };
        let bounds = points.iter().fold(
            Bounds {
                min_x: f64::INFINITY,
                min_y: f64::INFINITY,
                max_x: f64::NEG_INFINITY,
                max_y: f64::NEG_INFINITY,
            },
            |b, (x, y)| Bounds {
                min_x: b.min_x.min(*x),
                min_y: b.min_y.min(*y),
                max_x: b.max_x.max(*x),
                max_y: b.max_y.max(*y),
            },
        );
        let source = sources.map_or(Some(element), |s| s.get(element as usize).copied());
        drawable.corners.extend_from_slice(&corners);
        drawable.corner_starts.push(drawable.corners.len());
        drawable.sources.push(source.ok_or(MeshError::TooLarge)?);
        drawable.boxes.push(bounds);
    }
    if drawable.boxes.is_empty() {
        return Err(MeshError::NothingToDraw);
    }
    u32::try_from(drawable.corners.len()).map_err(|_| MeshError::TooLarge)?;
    Ok(drawable)
}

/// Checks that the connectivity of `geometry` stays within its arrays.
fn check(geometry: &MeshGeometry) -> Result<(), MeshError> {
    let nodes = &geometry.nodes;
    if nodes.x.len() != nodes.y.len() {
        return Err(MeshError::NodeArrays {
            x: nodes.x.len(),
            y: nodes.y.len(),
        });
    }
    let elements = &geometry.elements;
    if u32::try_from(elements.len()).is_err() || u32::try_from(nodes.len()).is_err() {
        return Err(MeshError::TooLarge);
    }
    if elements.offsets.len() != elements.len() + 1 {
        return Err(MeshError::Connectivity {
            element: elements.offsets.len().saturating_sub(1),
        });
    }
    for element in 0..elements.len() {
        let Some(refs) = elements.nodes(element) else {
            return Err(MeshError::Connectivity { element });
        };
        if let Some(&node) = refs.iter().find(|node| **node as usize >= nodes.len()) {
            return Err(MeshError::NodeOutOfRange {
                element,
                node,
                nodes: nodes.len(),
            });
        }
    }
    Ok(())
}

/// Puts into `corners` the corners of an element with an area, in order around it: all nodes
/// of triangles, quadrilaterals and polygons, the corner nodes of quadratic ones (their first
/// nodes, in VTK's order); false for other kinds and malformed elements.
fn corners_of(kind: ElementKind, nodes: &[u32], corners: &mut Vec<u32>) -> bool {
    corners.clear();
    let first = |count: usize| nodes.get(..count);
    let taken = match kind {
        ElementKind::Triangle if nodes.len() == 3 => Some(nodes),
        ElementKind::Quad if nodes.len() == 4 => Some(nodes),
        ElementKind::Polygon if nodes.len() >= 3 => Some(nodes),
        ElementKind::QuadraticTriangle | ElementKind::BiquadraticTriangle => first(3),
        ElementKind::QuadraticQuad
        | ElementKind::BiquadraticQuad
        | ElementKind::QuadraticLinearQuad => first(4),
        ElementKind::Pixel => {
            // VTK numbers a pixel's corners row by row; around it they go 0, 1, 3, 2.
            if let [a, b, c, d] = nodes {
                corners.extend([*a, *b, *d, *c]);
            }
            None
        }
        _ => None,
    };
    if let Some(taken) = taken {
        corners.extend_from_slice(taken);
    }
    !corners.is_empty()
}

/// For each node of the surface of `full`, the node of `full` it is. A layered element lists
/// its bottom face then its top face (basin-formats' layers.rs relies on the same order), and
/// the surface element's corners are the top face's, in order.
fn surface_node_sources(full: &MeshGeometry, top: &TopLayer) -> Vec<u32> {
    let mut sources = vec![u32::MAX; top.geometry.nodes.len()];
    for (surface, element) in top.elements.iter().enumerate() {
        let (Some(full_nodes), Some(surface_nodes)) = (
            full.elements.nodes(*element),
            top.geometry.elements.nodes(surface),
        ) else {
            continue;
        };
        let top_face = full_nodes.get(full_nodes.len() / 2..).unwrap_or_default();
        for (surface_node, full_node) in surface_nodes.iter().zip(top_face) {
            if let Some(slot) = sources.get_mut(*surface_node as usize) {
                *slot = *full_node;
            }
        }
    }
    sources
}

/// Values of one item at one step on a mesh, ready to sample.
///
/// Values are copied into the index's order of elements and nodes (see [`MeshIndex`]), so
/// that the value of an element sits next to the values of the elements around it: on a
/// zoomed-out tile, where each pixel falls in another element, reading values in the source
/// order would be one more cache miss per pixel.
#[derive(Debug, Clone)]
pub struct MeshField {
    index: Arc<MeshIndex>,
    shading: Shading,
    /// Per drawn element: flat, the value drawn; smooth over element values, its own value
    /// (NaN keeps it dry); smooth over node values, nothing.
    element_values: Vec<f32>,
    /// Smooth: per drawn node.
    node_values: Vec<f32>,
}

impl MeshField {
    /// `values`: one per element (location Elements) or per node (Nodes), in the order of the
    /// geometry the index was built from (for a layered mesh: all 3D elements, or all 3D
    /// nodes), NaN where there is no value.
    pub fn new(
        index: Arc<MeshIndex>,
        values: Arc<[f32]>,
        location: ValueLocation,
        shading: Shading,
    ) -> Result<Self, MeshError> {
        let expected = match location {
            ValueLocation::Elements => index.source_elements,
            ValueLocation::Nodes => index.source_nodes,
        };
        if values.len() != expected {
            return Err(MeshError::WrongValueCount {
                location,
                expected,
                given: values.len(),
            });
        }
        let per_element = || {
            index
                .elements_with(&values)
                .map(|(_, value)| value)
                .collect()
        };
        let (element_values, node_values) = match (shading, location) {
            (Shading::Flat, ValueLocation::Elements) => (per_element(), Vec::new()),
            (Shading::Flat, ValueLocation::Nodes) => {
                let at_nodes = index.node_values_of(&values);
                let means = (0..index.element_count())
                    .map(|drawn| element_mean(index.corner_nodes(drawn), &at_nodes))
                    .collect();
                (means, Vec::new())
            }
            (Shading::Smooth, ValueLocation::Nodes) => (Vec::new(), index.node_values_of(&values)),
            (Shading::Smooth, ValueLocation::Elements) => {
                let at_nodes = nodes::node_values(
                    index.nodes.len(),
                    &index.nodes,
                    index.elements_with(&values),
                );
                (per_element(), at_nodes)
            }
        };
        Ok(Self {
            index,
            shading,
            element_values,
            node_values,
        })
    }

    /// The value at `point`, inside drawn element `drawn`.
    fn value_in(&self, drawn: usize, point: [f64; 2]) -> f32 {
        let own = self.element_values.get(drawn).copied();
        if self.shading == Shading::Flat {
            return own.unwrap_or(f32::NAN);
        }
        if own.is_some_and(f32::is_nan) {
            return f32::NAN;
        }
        self.index.with_corners(drawn, |corners, nodes| {
            let at = |node: &u32| {
                self.node_values
                    .get(*node as usize)
                    .map_or(f64::NAN, |value| f64::from(*value))
            };
            let mut small = [f64::NAN; 8];
            let value = if let Some(slots) = small.get_mut(..nodes.len()) {
                for (slot, node) in slots.iter_mut().zip(nodes) {
                    *slot = at(node);
                }
                interpolate::interpolate(corners, slots, point)
            } else {
                let values: Vec<f64> = nodes.iter().map(at).collect();
                interpolate::interpolate(corners, &values, point)
            };
            value as f32
        })
    }

    /// Bytes held besides the shared index.
    pub fn approximate_bytes(&self) -> usize {
        (self.element_values.capacity() + self.node_values.capacity()) * std::mem::size_of::<f32>()
    }
}

/// The mean of the values at `nodes`; NaN when one is NaN.
fn element_mean(nodes: &[u32], at_nodes: &[f32]) -> f32 {
    let sum: f64 = nodes
        .iter()
        .map(|node| {
            at_nodes
                .get(*node as usize)
                .map_or(f64::NAN, |value| f64::from(*value))
        })
        .sum();
    (sum / nodes.len() as f64) as f32
}

impl Field for MeshField {
    fn extent(&self) -> Bounds {
        self.index.extent()
    }

    fn sample(&self, points: &[[f64; 2]], _pixel_size: f64, out: &mut [f32]) {
        let mut search = Search::default();
        for (slot, point) in out.iter_mut().zip(points) {
            *slot = match self.index.find(*point, &mut search) {
                Some(drawn) => self.value_in(drawn, *point),
                None => f32::NAN,
            };
        }
    }
}

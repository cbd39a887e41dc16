//! Flexible meshes as fields: the value under each pixel centre is the value of the element
//! that holds it (flat shading) or the values at the element's corners interpolated to it
//! (smooth shading).
//!
//! [`MeshIndex`] is built once per mesh geometry: the 2D outline of every drawn element (for a
//! layered 3D mesh, the top face of each column's top element, so the surface is drawn) and a
//! bucket grid over their bounding boxes. A lookup tests only the elements in one bucket, and
//! the element found for the previous pixel first, since neighbouring pixels mostly share one.
//!
//! Smooth shading needs values at nodes. Node-located items have them; for element-located
//! items each node takes the mean of the elements around it weighted by the inverse distance
//! from the node to each element's centre, the way MIKE tools and mikeio derive node values.
//! Inside an element, triangles interpolate linearly; quads and polygons are fanned into
//! triangles from their first corner, so a field linear in x and y is reproduced exactly.

use std::fmt;
use std::sync::Arc;

use basin_formats::model::{ElementKind, MeshGeometry};

use crate::field::Field;
use crate::tms::Bounds;
use crate::vector::index::GridIndex;

/// Why a mesh cannot be drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum MeshError {
    /// An element names a node the mesh does not have.
    BadNode {
        /// The element's position.
        element: usize,
    },
    /// No element has a 2D outline to draw (only lines or points).
    NothingToDraw,
    /// The values do not match the elements or nodes.
    WrongLength {
        /// Expected.
        expected: usize,
        /// Given.
        given: usize,
    },
}

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadNode { element } => {
                write!(f, "element {element} names a node the mesh does not have")
            }
            Self::NothingToDraw => f.write_str("the mesh has no elements with an area to draw"),
            Self::WrongLength { expected, given } => {
                write!(f, "the mesh needs {expected} values, {given} were given")
            }
        }
    }
}

impl std::error::Error for MeshError {}

/// Where an item's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueLocation {
    /// One value per element of the geometry (all 3D elements of a layered mesh).
    Elements,
    /// One value per node.
    Nodes,
}

/// How a pixel's value is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Shading {
    /// The element's value (node items: the mean of its corners).
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

/// One drawn element: which value it shows and its outline.
#[derive(Debug, Clone)]
struct Outline {
    /// Position of the element in the geometry (the value index of element items).
    element: u32,
    /// Its corner nodes, in order.
    nodes: Vec<u32>,
}

/// The drawable outline of a mesh, indexed; built once and shared.
#[derive(Debug, Clone)]
pub struct MeshIndex {
    x: Vec<f64>,
    y: Vec<f64>,
    outlines: Vec<Outline>,
    index: GridIndex,
    extent: Bounds,
    element_count: usize,
    node_count: usize,
    /// For each node, the drawn outlines around it with their inverse-distance weights.
    node_weights: Vec<Vec<(u32, f64)>>,
}

impl MeshIndex {
    /// Indexes the drawable elements of `geometry`.
    pub fn build(geometry: &MeshGeometry) -> Result<Self, MeshError> {
        let nodes = &geometry.nodes;
        let elements = &geometry.elements;
        let node_count = nodes.len();
        let mut lower_faces = std::collections::HashSet::new();
        for index in 0..elements.len() {
            if let (Some(kind), Some(corners)) = (elements.kinds.get(index), elements.nodes(index))
                && let Some((lower, _)) = faces(*kind, corners)
            {
                lower_faces.insert(sorted(lower));
            }
        }
        let mut outlines = Vec::new();
        for index in 0..elements.len() {
            let (Some(kind), Some(corners)) = (elements.kinds.get(index), elements.nodes(index))
            else {
                continue;
            };
            if corners.iter().any(|&node| node as usize >= node_count) {
                return Err(MeshError::BadNode { element: index });
            }
            let outline = match kind {
                ElementKind::Triangle | ElementKind::Quad | ElementKind::Polygon => {
                    corners.to_vec()
                }
                _ => match faces(*kind, corners) {
                    // The top of a column: no element sits on its upper face.
                    Some((_, upper)) if !lower_faces.contains(&sorted(upper)) => upper.to_vec(),
                    _ => continue,
                },
            };
            if outline.len() >= 3 {
                outlines.push(Outline {
                    element: index as u32,
                    nodes: outline,
                });
            }
        }
        if outlines.is_empty() {
            return Err(MeshError::NothingToDraw);
        }
        let x = nodes.x.clone();
        let y = nodes.y.clone();
        let boxes: Vec<Bounds> = outlines
            .iter()
            .map(|outline| outline_bounds(&x, &y, &outline.nodes))
            .collect();
        let extent = boxes
            .iter()
            .copied()
            .reduce(|a, b| a.union(&b))
            .ok_or(MeshError::NothingToDraw)?;
        let node_weights = node_weights(&x, &y, &outlines, node_count);
        Ok(Self {
            index: GridIndex::build(boxes),
            x,
            y,
            outlines,
            extent,
            element_count: elements.len(),
            node_count,
            node_weights,
        })
    }

    /// The area the drawn elements cover.
    pub fn extent(&self) -> Bounds {
        self.extent
    }

    /// Elements drawn (for a layered mesh, the columns).
    pub fn drawn_elements(&self) -> usize {
        self.outlines.len()
    }

    /// About how large a drawn element is, in map units (the side of a square of the mean
    /// area), for choosing zoom levels.
    pub fn typical_element_size(&self) -> f64 {
        let area: f64 = self
            .outlines
            .iter()
            .map(|outline| polygon_area(&self.x, &self.y, &outline.nodes).abs())
            .sum();
        (area / self.outlines.len().max(1) as f64).sqrt()
    }

    /// Bytes held, roughly.
    pub fn approximate_bytes(&self) -> usize {
        (self.x.len() + self.y.len()) * 8
            + self
                .outlines
                .iter()
                .map(|outline| 32 + outline.nodes.len() * 4)
                .sum::<usize>()
            + self
                .node_weights
                .iter()
                .map(|weights| 24 + weights.len() * 16)
                .sum::<usize>()
            + self.index.approximate_bytes()
    }

    /// The drawn outline holding (x, y), trying `hint` first.
    fn locate(&self, x: f64, y: f64, hint: Option<u32>) -> Option<u32> {
        if let Some(hint) = hint
            && self.contains(hint, x, y)
        {
            return Some(hint);
        }
        let mut found: Option<u32> = None;
        for candidate in self.index.candidates_at(x, y) {
            // The lowest position wins on shared edges, whatever the bucket order.
            if found.is_some_and(|best| best <= candidate) {
                continue;
            }
            if self.contains(candidate, x, y) {
                found = Some(candidate);
            }
        }
        found
    }

    fn contains(&self, outline: u32, x: f64, y: f64) -> bool {
        let Some(outline) = self.outlines.get(outline as usize) else {
            return false;
        };
        // Crossing number, with points on an edge counted inside.
        let corners = &outline.nodes;
        let mut inside = false;
        for (index, &a) in corners.iter().enumerate() {
            let b = corners
                .get((index + 1) % corners.len())
                .copied()
                .unwrap_or(a);
            let (Some(&ax), Some(&ay), Some(&bx), Some(&by)) = (
                self.x.get(a as usize),
                self.y.get(a as usize),
                self.x.get(b as usize),
                self.y.get(b as usize),
            ) else {
                return false;
            };
            let cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax);
            let within_x = x >= ax.min(bx) && x <= ax.max(bx);
            let within_y = y >= ay.min(by) && y <= ay.max(by);
            if cross == 0.0 && within_x && within_y {
                return true;
            }
            if (ay > y) != (by > y) && x < (bx - ax) * (y - ay) / (by - ay) + ax {
                inside = !inside;
            }
        }
        inside
    }

    /// Linear interpolation of node values at (x, y) in the fan triangle of `outline` that
    /// holds it.
    fn interpolate(&self, outline: u32, x: f64, y: f64, node_values: &[f32]) -> f32 {
        let Some(outline) = self.outlines.get(outline as usize) else {
            return f32::NAN;
        };
        let corners = &outline.nodes;
        let Some(&first) = corners.first() else {
            return f32::NAN;
        };
        let point = |node: u32| {
            (
                self.x.get(node as usize).copied().unwrap_or(f64::NAN),
                self.y.get(node as usize).copied().unwrap_or(f64::NAN),
                node_values
                    .get(node as usize)
                    .map_or(f64::NAN, |&value| f64::from(value)),
            )
        };
        let a = point(first);
        let mut best: Option<(f64, f64)> = None;
        for pair in corners.windows(2).skip(1) {
            let &[b_node, c_node] = pair else {
                continue;
            };
            let (b, c) = (point(b_node), point(c_node));
            let area = (b.0 - a.0) * (c.1 - a.1) - (c.0 - a.0) * (b.1 - a.1);
            if area == 0.0 {
                continue;
            }
            let wb = ((x - a.0) * (c.1 - a.1) - (c.0 - a.0) * (y - a.1)) / area;
            let wc = ((b.0 - a.0) * (y - a.1) - (x - a.0) * (b.1 - a.1)) / area;
            let wa = 1.0 - wb - wc;
            let value = wa * a.2 + wb * b.2 + wc * c.2;
            // The fan triangle that holds the point, or the nearest one for points on edges.
            let outside = [wa, wb, wc].iter().map(|w| (-w).max(0.0)).sum::<f64>();
            if best.is_none_or(|(least, _)| outside < least) {
                best = Some((outside, value));
            }
            if outside == 0.0 {
                break;
            }
        }
        best.map_or(f32::NAN, |(_, value)| value as f32)
    }
}

/// The lower and upper faces of a prism or hexahedron (a layered mesh's 3D elements).
fn faces(kind: ElementKind, corners: &[u32]) -> Option<(&[u32], &[u32])> {
    let half = match kind {
        ElementKind::Prism if corners.len() == 6 => 3,
        ElementKind::Hexahedron if corners.len() == 8 => 4,
        _ => return None,
    };
    Some(corners.split_at(half))
}

fn sorted(face: &[u32]) -> Vec<u32> {
    let mut face = face.to_vec();
    face.sort_unstable();
    face
}

fn outline_bounds(x: &[f64], y: &[f64], nodes: &[u32]) -> Bounds {
    let mut bounds = Bounds {
        min_x: f64::INFINITY,
        min_y: f64::INFINITY,
        max_x: f64::NEG_INFINITY,
        max_y: f64::NEG_INFINITY,
    };
    for &node in nodes {
        if let (Some(&px), Some(&py)) = (x.get(node as usize), y.get(node as usize))
            && px.is_finite()
            && py.is_finite()
        {
            bounds.min_x = bounds.min_x.min(px);
            bounds.min_y = bounds.min_y.min(py);
            bounds.max_x = bounds.max_x.max(px);
            bounds.max_y = bounds.max_y.max(py);
        }
    }
    bounds
}

fn polygon_area(x: &[f64], y: &[f64], nodes: &[u32]) -> f64 {
    let mut sum = 0.0;
    for (index, &a) in nodes.iter().enumerate() {
        let b = nodes.get((index + 1) % nodes.len()).copied().unwrap_or(a);
        let (ax, ay) = (
            x.get(a as usize).copied().unwrap_or(0.0),
            y.get(a as usize).copied().unwrap_or(0.0),
        );
        let (bx, by) = (
            x.get(b as usize).copied().unwrap_or(0.0),
            y.get(b as usize).copied().unwrap_or(0.0),
        );
        sum += ax * by - bx * ay;
    }
    sum / 2.0
}

/// For each node, the outlines around it weighted by the inverse distance from the node to
/// the outline's centre (normalised to sum to 1).
fn node_weights(
    x: &[f64],
    y: &[f64],
    outlines: &[Outline],
    node_count: usize,
) -> Vec<Vec<(u32, f64)>> {
    let mut weights: Vec<Vec<(u32, f64)>> = vec![Vec::new(); node_count];
    for (position, outline) in outlines.iter().enumerate() {
        let count = outline.nodes.len() as f64;
        let centre_x = outline
            .nodes
            .iter()
            .filter_map(|&n| x.get(n as usize))
            .sum::<f64>()
            / count;
        let centre_y = outline
            .nodes
            .iter()
            .filter_map(|&n| y.get(n as usize))
            .sum::<f64>()
            / count;
        for &node in &outline.nodes {
            let (Some(&nx), Some(&ny)) = (x.get(node as usize), y.get(node as usize)) else {
                continue;
            };
            let distance = (nx - centre_x).hypot(ny - centre_y).max(f64::MIN_POSITIVE);
            if let Some(list) = weights.get_mut(node as usize) {
                list.push((position as u32, 1.0 / distance));
            }
        }
    }
    for list in &mut weights {
        let total: f64 = list.iter().map(|(_, weight)| weight).sum();
        if total > 0.0 {
            for (_, weight) in list.iter_mut() {
                *weight /= total;
            }
        }
    }
    weights
}

/// Node values from outline values: the inverse-distance weighted mean of the outlines around
/// each node that have data (NaN where none has).
fn node_means(index: &MeshIndex, outline_values: &[f32]) -> Vec<f32> {
    index
        .node_weights
        .iter()
        .map(|weights| {
            let (sum, total) = weights
                .iter()
                .filter_map(|&(outline, weight)| {
                    let value = *outline_values.get(outline as usize)?;
                    (!value.is_nan()).then_some((f64::from(value) * weight, weight))
                })
                .fold((0.0, 0.0), |(sum, total), (value, weight)| {
                    (sum + value, total + weight)
                });
            if total > 0.0 {
                (sum / total) as f32
            } else {
                f32::NAN
            }
        })
        .collect()
}

/// A mesh item at one step, ready to sample.
#[derive(Debug, Clone)]
pub struct MeshField {
    index: Arc<MeshIndex>,
    /// Per drawn outline: its value (flat shading).
    outline_values: Vec<f32>,
    /// Per node: its value (smooth shading), empty for flat.
    node_values: Vec<f32>,
    shading: Shading,
}

impl MeshField {
    /// The field of `values` (NaN for no data), one per element of the geometry the index was
    /// built from, or one per node.
    pub fn new(
        index: Arc<MeshIndex>,
        values: &[f32],
        location: ValueLocation,
        shading: Shading,
    ) -> Result<Self, MeshError> {
        let expected = match location {
            ValueLocation::Elements => index.element_count,
            ValueLocation::Nodes => index.node_count,
        };
        if values.len() != expected {
            return Err(MeshError::WrongLength {
                expected,
                given: values.len(),
            });
        }
        let outline_values: Vec<f32> = match location {
            ValueLocation::Elements => index
                .outlines
                .iter()
                .map(|outline| {
                    values
                        .get(outline.element as usize)
                        .copied()
                        .unwrap_or(f32::NAN)
                })
                .collect(),
            ValueLocation::Nodes => index
                .outlines
                .iter()
                .map(|outline| {
                    let sum: f64 = outline
                        .nodes
                        .iter()
                        .map(|&node| {
                            values
                                .get(node as usize)
                                .map_or(f64::NAN, |&v| f64::from(v))
                        })
                        .sum();
                    (sum / outline.nodes.len() as f64) as f32
                })
                .collect(),
        };
        let node_values = match (shading, location) {
            (Shading::Flat, _) => Vec::new(),
            (Shading::Smooth, ValueLocation::Nodes) => values.to_vec(),
            (Shading::Smooth, ValueLocation::Elements) => node_means(&index, &outline_values),
        };
        Ok(Self {
            index,
            outline_values,
            node_values,
            shading,
        })
    }
}

impl Field for MeshField {
    fn extent(&self) -> Bounds {
        self.index.extent
    }

    fn sample(&self, points: &[[f64; 2]], _pixel_size: f64, out: &mut [f32]) {
        let mut hint = None;
        for (slot, &[x, y]) in out.iter_mut().zip(points) {
            let found = self.index.locate(x, y, hint);
            hint = found.or(hint);
            *slot = match (found, self.shading) {
                (None, _) => f32::NAN,
                (Some(outline), Shading::Flat) => self
                    .outline_values
                    .get(outline as usize)
                    .copied()
                    .unwrap_or(f32::NAN),
                (Some(outline), Shading::Smooth) => {
                    self.index.interpolate(outline, x, y, &self.node_values)
                }
            };
        }
    }
}

#[cfg(test)]
mod tests;

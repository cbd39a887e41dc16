//! The top layer of a layered mesh as a mesh of one dimension less (`ReadFull3D=false`):
//! what MIKE IO gives for `read(layers="top")`, a 2D mesh of the surface elements with the
//! bathymetry as node z.
//!
//! It relies on the order DFSU files keep (docs/formats.md#dfsu-flexible-meshes): elements go
//! column by column from the bottom up, and a layered element lists its bottom face then its
//! top face in the same order. So an element is the top of its column when the next element
//! does not stand on its top face. Nodes too go column by column from the bottom up, so the
//! bottom of a surface node's column (its bathymetry) is the first of the run of nodes before
//! it with its x and y.

use std::collections::HashMap;

use crate::error::{FormatError, FormatResult};
use crate::model::{ElementKind, Elements, MeshGeometry, Nodes, Quantity};

use super::FORMAT;

/// The top layer: its geometry and, for each of its elements, the element of the full mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct TopLayer {
    /// The surface mesh.
    pub geometry: MeshGeometry,
    /// Index in the full mesh of each surface element.
    pub elements: Vec<usize>,
}

/// The kind of a layered element's top face.
fn face_kind(kind: ElementKind) -> Option<ElementKind> {
    match kind {
        ElementKind::Prism => Some(ElementKind::Triangle),
        ElementKind::Hexahedron => Some(ElementKind::Quad),
        ElementKind::Quad => Some(ElementKind::Line),
        ElementKind::Line => Some(ElementKind::Vertex),
        _ => None,
    }
}

/// The two faces of element `index`: bottom nodes, top nodes, in the same order (the top
/// node above each bottom node). Prisms, hexahedra and column lines list the bottom face then
/// the top face; a vertical profile's quadrilateral goes round, bottom left, bottom right,
/// top right, top left.
fn faces(elements: &Elements, index: usize) -> FormatResult<(Vec<u32>, Vec<u32>)> {
    let nodes = elements.nodes(index).unwrap_or_default();
    let split = match (elements.kinds.get(index), nodes) {
        (Some(ElementKind::Quad), [a, b, c, d]) => Some((vec![*a, *b], vec![*d, *c])),
        _ => nodes
            .split_at_checked(nodes.len() / 2)
            .filter(|(bottom, top)| bottom.len() == top.len() && !top.is_empty())
            .map(|(bottom, top)| (bottom.to_vec(), top.to_vec())),
    };
    split.ok_or_else(|| {
        FormatError::invalid(
            FORMAT,
            format!("element {}", index + 1),
            "a layered element needs a bottom and a top face of as many nodes",
        )
    })
}

/// Extracts the top layer of a layered mesh. Its nodes keep the order of their columns in
/// the full mesh, as MIKE IO's 2D geometry of a layered file does.
pub fn top_layer(full: &MeshGeometry) -> FormatResult<TopLayer> {
    let elements = &full.elements;
    let count = elements.len();
    let mut top_elements = Vec::new();
    for index in 0..count {
        let (_, top) = faces(elements, index)?;
        let is_top = match index.checked_add(1).filter(|next| *next < count) {
            Some(next) => faces(elements, next)?.0 != top,
            None => true,
        };
        if is_top {
            top_elements.push(index);
        }
    }
    let mut surface_nodes: Vec<u32> = Vec::new();
    for index in &top_elements {
        surface_nodes.extend(faces(elements, *index)?.1);
    }
    surface_nodes.sort_unstable();
    surface_nodes.dedup();
    let mut nodes = Nodes::default();
    let mut new_index: HashMap<u32, u32> = HashMap::with_capacity(surface_nodes.len());
    for (number, node) in surface_nodes.iter().enumerate() {
        let number = u32::try_from(number)
            .map_err(|_| FormatError::unsupported(FORMAT, "more than 2^32 surface nodes"))?;
        copy_node(full, &mut nodes, *node as usize, number);
        new_index.insert(*node, number);
    }
    let mut surface = Elements::default();
    let mut refs = Vec::with_capacity(4);
    for index in &top_elements {
        let kind = elements
            .kinds
            .get(*index)
            .copied()
            .and_then(face_kind)
            .ok_or_else(|| {
                FormatError::invalid(
                    FORMAT,
                    format!("element {}", index + 1),
                    "a layered mesh holds prisms, hexahedra, quadrilaterals (profiles) or lines (columns)",
                )
            })?;
        refs.clear();
        refs.extend(
            faces(elements, *index)?
                .1
                .iter()
                .filter_map(|node| new_index.get(node).copied()),
        );
        let id = elements
            .ids
            .get(*index)
            .copied()
            .unwrap_or(*index as i64 + 1);
        surface.push(id, kind, &refs);
    }
    Ok(TopLayer {
        geometry: MeshGeometry {
            nodes,
            elements: surface,
            crs: full.crs.clone(),
            z_quantity: Quantity::bathymetry(),
            layers: None,
        },
        elements: top_elements,
    })
}

/// Appends node `at` of the full mesh to the surface nodes as number `next`, with the z of
/// the bottom of its column.
fn copy_node(full: &MeshGeometry, nodes: &mut Nodes, at: usize, next: u32) {
    let below = column_bottom(&full.nodes, at);
    nodes.ids.push(i64::from(next) + 1);
    nodes
        .x
        .push(full.nodes.x.get(at).copied().unwrap_or(f64::NAN));
    nodes
        .y
        .push(full.nodes.y.get(at).copied().unwrap_or(f64::NAN));
    nodes
        .z
        .push(full.nodes.z.get(below).copied().unwrap_or(f64::NAN));
    nodes
        .codes
        .push(full.nodes.codes.get(at).copied().unwrap_or(0));
}

/// The first node of the run of nodes ending at `node` that share its x and y.
fn column_bottom(nodes: &Nodes, node: usize) -> usize {
    let position = |index: usize| (nodes.x.get(index), nodes.y.get(index));
    let here = position(node);
    let mut bottom = node;
    while let Some(below) = bottom.checked_sub(1)
        && position(below) == here
    {
        bottom = below;
    }
    bottom
}

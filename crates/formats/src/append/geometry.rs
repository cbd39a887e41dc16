//! Whether two datasets lie in the same place: the same coordinate system, and for grids and
//! meshes the same cells, nodes and elements, because appended steps reuse the existing
//! geometry.
//!
//! Coordinates compare with a relative tolerance of 1e-9, so that a geotransform or node
//! written as decimal text and read back still matches; anything larger is a real difference.

use crate::crs::{Crs, resolve_epsg};
use crate::error::{FormatError, FormatResult};
use crate::model::{GridGeometry, MeshGeometry};

/// Relative tolerance of coordinate comparisons.
const RELATIVE_TOLERANCE: f64 = 1e-9;

fn close(a: f64, b: f64) -> bool {
    a == b
        || (a.is_nan() && b.is_nan())
        || (a - b).abs() <= RELATIVE_TOLERANCE * a.abs().max(b.abs()).max(1.0)
}

/// The systems agree when they are equal, resolve to one EPSG code, or the addition has none
/// (its coordinates are then taken to be the existing data's).
pub(super) fn same_crs(existing: Option<&Crs>, addition: Option<&Crs>) -> FormatResult<()> {
    match (existing, addition) {
        (_, None) => Ok(()),
        (Some(a), Some(b)) if a == b => Ok(()),
        (Some(a), Some(b)) => match (resolve_epsg(a), resolve_epsg(b)) {
            (Some(x), Some(y)) if x == y => Ok(()),
            _ => Err(FormatError::Append(format!(
                "the coordinate systems differ: existing {}, the addition {}",
                describe(a),
                describe(b)
            ))),
        },
        (None, Some(b)) => Err(FormatError::Append(format!(
            "the existing data has no coordinate system and the addition has {}; give the \
             existing data's SRID as a reader parameter",
            describe(b)
        ))),
    }
}

/// `EPSG:25832`, or the name of a WKT or MIKE projection, for messages.
fn describe(crs: &Crs) -> String {
    if let Some(code) = resolve_epsg(crs) {
        return format!("EPSG:{code}");
    }
    match crs {
        Crs::Wkt(text) => crate::crs::wkt::parse(text)
            .and_then(|node| node.name().map(|name| format!("{name:?}")))
            .unwrap_or_else(|| "a WKT without a name".to_owned()),
        Crs::Proj4(text) => format!("proj4 {text:?}"),
        Crs::Named(name) => format!("{name:?}"),
        Crs::Epsg(code) => format!("EPSG:{code}"),
    }
}

/// Grids agree in shape, placement and coordinate system.
pub(super) fn same_grid(existing: &GridGeometry, addition: &GridGeometry) -> FormatResult<()> {
    let shape = |grid: &GridGeometry| (grid.columns, grid.rows, grid.layers());
    if shape(existing) != shape(addition) {
        let describe =
            |grid: &GridGeometry| format!("{} x {} x {}", grid.columns, grid.rows, grid.layers());
        return Err(FormatError::Append(format!(
            "the grids differ in size: existing has {} (columns x rows x layers), the addition \
             {}",
            describe(existing),
            describe(addition)
        )));
    }
    let (a, b) = (existing.transform.to_gdal(), addition.transform.to_gdal());
    if a.iter().zip(&b).any(|(a, b)| !close(*a, *b)) {
        return Err(FormatError::Append(format!(
            "the grids differ in placement: existing geotransform {a:?}, the addition {b:?}"
        )));
    }
    if existing.vertical.map(|axis| (axis.origin, axis.spacing))
        != addition.vertical.map(|axis| (axis.origin, axis.spacing))
    {
        return Err(FormatError::Append(
            "the grids differ in their vertical layers".to_owned(),
        ));
    }
    same_crs(existing.crs.as_ref(), addition.crs.as_ref())
}

/// Meshes agree in nodes (position and z), elements (shape and nodes) and coordinate system.
pub(super) fn same_mesh(existing: &MeshGeometry, addition: &MeshGeometry) -> FormatResult<()> {
    let (a, b) = (&existing.nodes, &addition.nodes);
    if a.len() != b.len() || existing.elements.len() != addition.elements.len() {
        return Err(FormatError::Append(format!(
            "the meshes differ: existing has {} nodes and {} elements, the addition {} nodes \
             and {} elements",
            a.len(),
            existing.elements.len(),
            b.len(),
            addition.elements.len()
        )));
    }
    let position = |nodes: &crate::model::Nodes, index: usize| {
        (
            nodes.x.get(index).copied().unwrap_or(f64::NAN),
            nodes.y.get(index).copied().unwrap_or(f64::NAN),
            nodes.z.get(index).copied().unwrap_or(f64::NAN),
        )
    };
    for index in 0..a.len() {
        let (p, q) = (position(a, index), position(b, index));
        if !(close(p.0, q.0) && close(p.1, q.1) && close(p.2, q.2)) {
            return Err(FormatError::Append(format!(
                "the meshes differ: node {} is at {p:?} in the existing data and at {q:?} in \
                 the addition",
                index.saturating_add(1)
            )));
        }
    }
    for index in 0..existing.elements.len() {
        let (a, b) = (&existing.elements, &addition.elements);
        if a.kinds.get(index) != b.kinds.get(index) || a.nodes(index) != b.nodes(index) {
            return Err(FormatError::Append(format!(
                "the meshes differ: element {} has other nodes in the addition",
                index.saturating_add(1)
            )));
        }
    }
    same_crs(existing.crs.as_ref(), addition.crs.as_ref())
}

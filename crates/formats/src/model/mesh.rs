//! Flexible (unstructured) meshes: MIKE .mesh and DFSU, VTU.
//!
//! Stored as structure-of-arrays because meshes reach millions of nodes: one `Vec` per
//! attribute and a flat connectivity with offsets (as VTK does), not one heap object per
//! element.

use super::item::Quantity;
use crate::crs::Crs;

/// The shape of an element. Node order follows MIKE, which VTK also accepts unchanged
/// (see formats/dfs-layout.md section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElementKind {
    /// 1 node: a point of a point cloud written as a mesh (VTK_VERTEX).
    Vertex,
    /// 2 nodes (1D / vertical column elements).
    Line,
    /// 3 nodes.
    Triangle,
    /// 4 nodes.
    Quad,
    /// 6 nodes: a triangular prism (wedge) of a layered 3D mesh.
    Prism,
    /// 8 nodes: a hexahedron of a layered 3D mesh.
    Hexahedron,
}

impl ElementKind {
    /// Number of nodes of the element.
    pub fn node_count(self) -> usize {
        match self {
            Self::Vertex => 1,
            Self::Line => 2,
            Self::Triangle => 3,
            Self::Quad => 4,
            Self::Prism => 6,
            Self::Hexahedron => 8,
        }
    }

    /// The VTK cell type code.
    pub fn vtk_type(self) -> u8 {
        match self {
            Self::Vertex => 1,
            Self::Line => 3,
            Self::Triangle => 5,
            Self::Quad => 9,
            Self::Prism => 13,
            Self::Hexahedron => 12,
        }
    }

    /// The kind for a VTK cell type code.
    pub fn from_vtk_type(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::Vertex),
            3 => Some(Self::Line),
            5 => Some(Self::Triangle),
            9 => Some(Self::Quad),
            13 => Some(Self::Prism),
            12 => Some(Self::Hexahedron),
            _ => None,
        }
    }
}

/// Mesh nodes. All vectors have the same length.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Nodes {
    /// Ids as the file gives them (1..n in most MIKE files, but kept as found).
    pub ids: Vec<i64>,
    /// x coordinates.
    pub x: Vec<f64>,
    /// y coordinates.
    pub y: Vec<f64>,
    /// z (usually bathymetry, see [`MeshGeometry::z_quantity`]).
    pub z: Vec<f64>,
    /// Boundary codes: 0 water, 1 land, >= 2 open boundaries.
    pub codes: Vec<i32>,
}

impl Nodes {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True when there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// Mesh elements as a flat connectivity list. `offsets[i]..offsets[i + 1]` indexes
/// `connectivity` for element `i`; node references are 0-based indexes into [`Nodes`].
#[derive(Debug, Clone, PartialEq)]
pub struct Elements {
    /// Ids as the file gives them.
    pub ids: Vec<i64>,
    /// Shape of each element.
    pub kinds: Vec<ElementKind>,
    /// Start of each element in `connectivity`, plus one final entry (its length).
    pub offsets: Vec<usize>,
    /// 0-based node indexes.
    pub connectivity: Vec<u32>,
}

impl Default for Elements {
    fn default() -> Self {
        Self {
            ids: Vec::new(),
            kinds: Vec::new(),
            offsets: vec![0],
            connectivity: Vec::new(),
        }
    }
}

impl Elements {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Appends an element.
    pub fn push(&mut self, id: i64, kind: ElementKind, nodes: &[u32]) {
        self.ids.push(id);
        self.kinds.push(kind);
        self.connectivity.extend_from_slice(nodes);
        self.offsets.push(self.connectivity.len());
    }

    /// The 0-based node indexes of element `index`, or `None` past the end.
    pub fn nodes(&self, index: usize) -> Option<&[u32]> {
        let start = *self.offsets.get(index)?;
        let end = *self.offsets.get(index + 1)?;
        self.connectivity.get(start..end)
    }
}

/// Layer structure of a layered (3D) mesh, as in DFSU 3D files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeshLayers {
    /// Total number of layers.
    pub count: usize,
    /// Number of sigma layers (the rest are z layers).
    pub sigma_count: usize,
}

/// Geometry of a flexible mesh.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshGeometry {
    /// Nodes.
    pub nodes: Nodes,
    /// Elements.
    pub elements: Elements,
    /// Coordinate system, when known.
    pub crs: Option<Crs>,
    /// What the node z values are (bathymetry in metres unless the file says otherwise).
    pub z_quantity: Quantity,
    /// Layers of a 3D mesh; `None` for a 2D mesh.
    pub layers: Option<MeshLayers>,
}

//! Flexible (unstructured) meshes: MIKE .mesh and DFSU, VTU.
//!
//! Stored as structure-of-arrays because meshes reach millions of nodes: one `Vec` per
//! attribute and a flat connectivity with offsets (as VTK does), not one heap object per
//! element.

use super::item::Quantity;
use crate::crs::Crs;

/// The shape of an element. Node order follows MIKE, which VTK also accepts unchanged
/// (see docs/formats.md#dfsu-flexible-meshes); the kinds beyond MIKE's are VTK's linear and
/// quadratic cells, in VTK's node order, so that VTU -> VTU keeps them (meshio's names in
/// [`ElementKind::name`]).
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
    /// 1 or more nodes, each a point (VTK_POLY_VERTEX).
    PolyVertex,
    /// 2 or more nodes joined in order (VTK_POLY_LINE).
    PolyLine,
    /// 3 or more nodes, a strip of triangles (VTK_TRIANGLE_STRIP).
    TriangleStrip,
    /// 3 or more nodes of a planar polygon (VTK_POLYGON).
    Polygon,
    /// 4 nodes of an axis-aligned rectangle, in VTK's pixel order (VTK_PIXEL).
    Pixel,
    /// 4 nodes (VTK_TETRA).
    Tetra,
    /// 8 nodes of an axis-aligned box, in VTK's voxel order (VTK_VOXEL).
    Voxel,
    /// 5 nodes (VTK_PYRAMID).
    Pyramid,
    /// 3 nodes (VTK_QUADRATIC_EDGE).
    QuadraticLine,
    /// 6 nodes (VTK_QUADRATIC_TRIANGLE).
    QuadraticTriangle,
    /// 8 nodes (VTK_QUADRATIC_QUAD).
    QuadraticQuad,
    /// 10 nodes (VTK_QUADRATIC_TETRA).
    QuadraticTetra,
    /// 20 nodes (VTK_QUADRATIC_HEXAHEDRON).
    QuadraticHexahedron,
    /// 15 nodes (VTK_QUADRATIC_WEDGE).
    QuadraticWedge,
    /// 13 nodes (VTK_QUADRATIC_PYRAMID).
    QuadraticPyramid,
    /// 9 nodes (VTK_BIQUADRATIC_QUAD).
    BiquadraticQuad,
    /// 27 nodes (VTK_TRIQUADRATIC_HEXAHEDRON).
    TriquadraticHexahedron,
    /// 7 nodes (VTK_BIQUADRATIC_TRIANGLE).
    BiquadraticTriangle,
    /// 10 nodes (VTK_PENTAGONAL_PRISM).
    PentagonalPrism,
    /// 12 nodes (VTK_HEXAGONAL_PRISM).
    HexagonalPrism,
    /// 6 nodes (VTK_QUADRATIC_LINEAR_QUAD).
    QuadraticLinearQuad,
    /// 12 nodes (VTK_QUADRATIC_LINEAR_WEDGE).
    QuadraticLinearWedge,
    /// 18 nodes (VTK_BIQUADRATIC_QUADRATIC_WEDGE).
    BiquadraticQuadraticWedge,
    /// 24 nodes (VTK_BIQUADRATIC_QUADRATIC_HEXAHEDRON).
    BiquadraticQuadraticHexahedron,
    /// 4 nodes (VTK_CUBIC_LINE).
    CubicLine,
}

/// Every kind with its VTK code, meshio's name (VTK's for the four meshio does not read),
/// node count (the least, for kinds of any size)
/// and whether the count is fixed.
const KINDS: [(ElementKind, u8, &str, usize, bool); 31] = [
    (ElementKind::Vertex, 1, "vertex", 1, true),
    (ElementKind::PolyVertex, 2, "poly_vertex", 1, false),
    (ElementKind::Line, 3, "line", 2, true),
    (ElementKind::PolyLine, 4, "poly_line", 2, false),
    (ElementKind::Triangle, 5, "triangle", 3, true),
    (ElementKind::TriangleStrip, 6, "triangle_strip", 3, false),
    (ElementKind::Polygon, 7, "polygon", 3, false),
    (ElementKind::Pixel, 8, "pixel", 4, true),
    (ElementKind::Quad, 9, "quad", 4, true),
    (ElementKind::Tetra, 10, "tetra", 4, true),
    (ElementKind::Voxel, 11, "voxel", 8, true),
    (ElementKind::Hexahedron, 12, "hexahedron", 8, true),
    (ElementKind::Prism, 13, "wedge", 6, true),
    (ElementKind::Pyramid, 14, "pyramid", 5, true),
    (ElementKind::PentagonalPrism, 15, "penta_prism", 10, true),
    (ElementKind::HexagonalPrism, 16, "hexa_prism", 12, true),
    (ElementKind::QuadraticLine, 21, "line3", 3, true),
    (ElementKind::QuadraticTriangle, 22, "triangle6", 6, true),
    (ElementKind::QuadraticQuad, 23, "quad8", 8, true),
    (ElementKind::QuadraticTetra, 24, "tetra10", 10, true),
    (
        ElementKind::QuadraticHexahedron,
        25,
        "hexahedron20",
        20,
        true,
    ),
    (ElementKind::QuadraticWedge, 26, "wedge15", 15, true),
    (ElementKind::QuadraticPyramid, 27, "pyramid13", 13, true),
    (ElementKind::BiquadraticQuad, 28, "quad9", 9, true),
    (
        ElementKind::TriquadraticHexahedron,
        29,
        "hexahedron27",
        27,
        true,
    ),
    (ElementKind::QuadraticLinearQuad, 30, "quad6", 6, true),
    (ElementKind::QuadraticLinearWedge, 31, "wedge12", 12, true),
    (
        ElementKind::BiquadraticQuadraticWedge,
        32,
        "wedge18",
        18,
        true,
    ),
    (
        ElementKind::BiquadraticQuadraticHexahedron,
        33,
        "hexahedron24",
        24,
        true,
    ),
    (ElementKind::BiquadraticTriangle, 34, "triangle7", 7, true),
    (ElementKind::CubicLine, 35, "line4", 4, true),
];

impl ElementKind {
    fn entry(self) -> (ElementKind, u8, &'static str, usize, bool) {
        KINDS
            .iter()
            .copied()
            .find(|entry| entry.0 == self)
            .unwrap_or((self, 0, "unknown", 0, false))
    }

    /// Number of nodes of the element; for the kinds of any size (poly-vertex, poly-line,
    /// triangle strip, polygon) the least number. See [`ElementKind::takes_nodes`].
    pub fn node_count(self) -> usize {
        self.entry().3
    }

    /// True when an element of this kind can have `count` nodes.
    pub fn takes_nodes(self, count: usize) -> bool {
        let (_, _, _, least, fixed) = self.entry();
        if fixed {
            count == least
        } else {
            count >= least
        }
    }

    /// The VTK cell type code.
    pub fn vtk_type(self) -> u8 {
        self.entry().1
    }

    /// The name meshio gives the cell type (`tetra`, `wedge`, `hexahedron`, ...).
    pub fn name(self) -> &'static str {
        self.entry().2
    }

    /// The kind for a VTK cell type code.
    pub fn from_vtk_type(code: u8) -> Option<Self> {
        KINDS
            .iter()
            .find(|entry| entry.1 == code)
            .map(|entry| entry.0)
    }

    /// The VTK codes of every kind, in order.
    pub fn vtk_types() -> impl Iterator<Item = u8> {
        KINDS.iter().map(|entry| entry.1)
    }

    /// "tetra (VTK 10)": the name and code, for messages.
    pub fn label(self) -> String {
        format!("{} (VTK {})", self.name(), self.vtk_type())
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

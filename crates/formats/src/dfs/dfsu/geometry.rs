//! The mesh of a DFSU file: the `MIKE_FM` custom block (sizes, dimension, layers, spectral
//! counts), the kind of file it makes with the header's data type, and the nine positional
//! static items (node ids, x, y, z, codes, element ids, element types, nodes per element,
//! 1-based connectivity), checked against each other and turned into a [`MeshGeometry`].
//! Static items are taken by position, not name: writers name them differently.

use crate::crs::Crs;
use crate::dfs::container::{DfsHeader, StaticItem};
use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};
use crate::model::{
    ElementKind, Elements, Item, ItemLocation, MeshGeometry, MeshLayers, Nodes, Quantity, Values,
};

use super::FORMAT;

/// Name of the custom block with the mesh sizes.
pub const MIKE_FM: &str = "MIKE_FM";
/// EUM item type of the "Z coordinate" item of layered files (and of the static node z).
pub const EUM_Z_COORDINATE: i32 = 100_188;

/// True for the node item that holds the z of the nodes of a layered mesh at each step
/// ("Z coordinate", EUM 100188): geometry rather than data.
pub fn is_z_coordinate(item: &Item) -> bool {
    item.location == ItemLocation::Node
        && (item.quantity.eum_item == Some(EUM_Z_COORDINATE)
            || item.name.eq_ignore_ascii_case("Z coordinate"))
}

/// What the `MIKE_FM` block says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FmBlock {
    /// Number of nodes.
    pub nodes: usize,
    /// Number of elements.
    pub elements: usize,
    /// 1, 2 or 3.
    pub dimension: i32,
    /// Maximum number of layers (0 for a 2D file).
    pub layers: usize,
    /// Number of sigma layers.
    pub sigma_layers: usize,
    /// Number of frequencies of a spectral file (0 when none).
    pub frequencies: usize,
    /// Number of directions of a spectral file (0 when none).
    pub directions: usize,
}

/// The kinds of DFSU file, as the reference library tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DfsuKind {
    /// Line elements without layers.
    Mesh1D,
    /// Triangles and quadrilaterals.
    Mesh2D,
    /// A vertical column of line elements.
    VerticalColumn,
    /// A vertical slice with sigma layers only.
    VerticalProfileSigma,
    /// A vertical slice with sigma and z layers.
    VerticalProfileSigmaZ,
    /// Prisms and hexahedra, sigma layers only.
    Sigma3D,
    /// Prisms and hexahedra, sigma and z layers.
    SigmaZ3D,
    /// The spectrum of one point: the mesh is the frequency-direction plane.
    PointSpectrum,
    /// Spectra at the nodes of a line.
    LineSpectrum,
    /// Spectra at the elements of a 2D mesh.
    AreaSpectrum,
}

impl DfsuKind {
    /// The reference library's name of the kind.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mesh1D => "Dfsu1D",
            Self::Mesh2D => "Dfsu2D",
            Self::VerticalColumn => "DfsuVerticalColumn",
            Self::VerticalProfileSigma => "DfsuVerticalProfileSigma",
            Self::VerticalProfileSigmaZ => "DfsuVerticalProfileSigmaZ",
            Self::Sigma3D => "Dfsu3DSigma",
            Self::SigmaZ3D => "Dfsu3DSigmaZ",
            Self::PointSpectrum => "DfsuSpectral0D",
            Self::LineSpectrum => "DfsuSpectral1D",
            Self::AreaSpectrum => "DfsuSpectral2D",
        }
    }

    /// True for the kinds with layers (whose first item is the per-node "Z coordinate").
    pub fn is_layered(self) -> bool {
        matches!(
            self,
            Self::VerticalColumn
                | Self::VerticalProfileSigma
                | Self::VerticalProfileSigmaZ
                | Self::Sigma3D
                | Self::SigmaZ3D
        )
    }

    /// True for the spectral kinds.
    pub fn is_spectral(self) -> bool {
        matches!(
            self,
            Self::PointSpectrum | Self::LineSpectrum | Self::AreaSpectrum
        )
    }
}

/// Reads the `MIKE_FM` block: four to six non-negative integers.
pub fn fm_block(header: &DfsHeader) -> FormatResult<FmBlock> {
    let block = header.custom_block(MIKE_FM).ok_or_else(|| {
        FormatError::invalid(
            FORMAT,
            "custom blocks",
            "the MIKE_FM block with the mesh sizes is missing (a DFSU file has one)",
        )
    })?;
    let Values::I32(values) = &block.values else {
        return Err(FormatError::invalid(
            FORMAT,
            "MIKE_FM block",
            "the mesh sizes are not 32-bit integers",
        ));
    };
    if !(4..=6).contains(&values.len()) {
        return Err(FormatError::invalid(
            FORMAT,
            "MIKE_FM block",
            format!("{} numbers where 4 to 6 were expected", values.len()),
        ));
    }
    let count = |index: usize, what: &str| -> FormatResult<usize> {
        let value = values.get(index).copied().unwrap_or(0);
        usize::try_from(value).map_err(|_| {
            FormatError::invalid(
                FORMAT,
                "MIKE_FM block",
                format!("{what} {value} is negative"),
            )
        })
    };
    let dimension = values.get(2).copied().unwrap_or(0);
    if !(1..=3).contains(&dimension) {
        return Err(FormatError::invalid(
            FORMAT,
            "MIKE_FM block",
            format!("dimension {dimension}; DFSU meshes have 1, 2 or 3"),
        ));
    }
    let layers = count(3, "number of layers")?;
    let spectral = values.len() == 6;
    let sigma_layers = match values.len() {
        4 => layers,
        _ if spectral => 0,
        _ => count(4, "number of sigma layers")?,
    };
    if sigma_layers > layers {
        return Err(FormatError::invalid(
            FORMAT,
            "MIKE_FM block",
            format!("{sigma_layers} sigma layers but only {layers} layers"),
        ));
    }
    Ok(FmBlock {
        nodes: count(0, "number of nodes")?,
        elements: count(1, "number of elements")?,
        dimension,
        layers,
        sigma_layers,
        frequencies: if spectral {
            count(4, "number of frequencies")?
        } else {
            0
        },
        directions: if spectral {
            count(5, "number of directions")?
        } else {
            0
        },
    })
}

/// The kind of file the block and the header's data type (2001 meshes, 2002 line spectra,
/// 2003 area spectra) make, decided as the reference library decides it.
pub fn kind_of(data_type: i32, block: &FmBlock) -> DfsuKind {
    let spectral_counts = block.frequencies > 0 || block.directions > 0;
    match block.dimension {
        1 if block.layers > 0 => DfsuKind::VerticalColumn,
        1 if data_type == 2001
            && spectral_counts
            && (block.frequencies == block.elements || block.directions == block.elements) =>
        {
            DfsuKind::PointSpectrum
        }
        1 if data_type == 2002 && spectral_counts => DfsuKind::LineSpectrum,
        1 => DfsuKind::Mesh1D,
        2 if data_type == 2001
            && spectral_counts
            && block.frequencies * block.directions == block.elements =>
        {
            DfsuKind::PointSpectrum
        }
        2 if data_type == 2003 => DfsuKind::AreaSpectrum,
        2 if block.layers == 0 => DfsuKind::Mesh2D,
        2 if block.layers == block.sigma_layers => DfsuKind::VerticalProfileSigma,
        2 => DfsuKind::VerticalProfileSigmaZ,
        _ if block.layers == block.sigma_layers => DfsuKind::Sigma3D,
        _ => DfsuKind::SigmaZ3D,
    }
}

/// The element kind of a DFSU element type code, with its number of nodes.
pub fn element_kind(code: i64) -> Option<ElementKind> {
    Some(match code {
        11 => ElementKind::Line,
        21 => ElementKind::Triangle,
        25 => ElementKind::Quad,
        32 => ElementKind::Prism,
        33 => ElementKind::Hexahedron,
        _ => return None,
    })
}

/// The DFSU element type code of an element kind, for the kinds DFSU holds.
pub fn element_code(kind: ElementKind) -> Option<i32> {
    Some(match kind {
        ElementKind::Line => 11,
        ElementKind::Triangle => 21,
        ElementKind::Quad => 25,
        ElementKind::Prism => 32,
        ElementKind::Hexahedron => 33,
        _ => return None,
    })
}

/// Names of the static items in their order, for messages.
const STATIC_NAMES: [&str; 9] = [
    "node ids",
    "x coordinates",
    "y coordinates",
    "z coordinates",
    "node codes",
    "element ids",
    "element types",
    "nodes per element",
    "connectivity",
];

fn static_item(header: &DfsHeader, index: usize) -> FormatResult<&StaticItem> {
    header.statics.get(index).ok_or_else(|| {
        FormatError::invalid(
            FORMAT,
            "static items",
            format!(
                "the file has {} static items; the mesh needs nine ({})",
                header.statics.len(),
                STATIC_NAMES.join(", ")
            ),
        )
    })
}

fn static_name(index: usize) -> &'static str {
    STATIC_NAMES.get(index).copied().unwrap_or("static item")
}

/// Integer static item `index` with `count` values.
fn integers(header: &DfsHeader, index: usize, count: usize) -> FormatResult<Vec<i64>> {
    let item = static_item(header, index)?;
    let values: Vec<i64> = match &item.values {
        Values::I32(values) => values.iter().map(|value| i64::from(*value)).collect(),
        Values::U32(values) => values.iter().map(|value| i64::from(*value)).collect(),
        Values::I16(values) => values.iter().map(|value| i64::from(*value)).collect(),
        Values::U16(values) => values.iter().map(|value| i64::from(*value)).collect(),
        Values::U8(values) => values.iter().map(|value| i64::from(*value)).collect(),
        other => {
            return Err(FormatError::invalid(
                FORMAT,
                format!("static item {} ({:?})", index + 1, item.info.name),
                format!(
                    "the {} are {} values; integers were expected",
                    static_name(index),
                    other.data_type().gdal_name()
                ),
            ));
        }
    };
    check_count(item, index, values.len(), count)?;
    Ok(values)
}

/// Float static item `index` with `count` values.
fn floats(header: &DfsHeader, index: usize, count: usize) -> FormatResult<Vec<f64>> {
    let item = static_item(header, index)?;
    if !item.values.data_type().is_float() {
        return Err(FormatError::invalid(
            FORMAT,
            format!("static item {} ({:?})", index + 1, item.info.name),
            format!(
                "the {} are {} values; floats were expected",
                static_name(index),
                item.values.data_type().gdal_name()
            ),
        ));
    }
    check_count(item, index, item.values.len(), count)?;
    Ok(item.values.to_f64())
}

fn check_count(
    item: &StaticItem,
    index: usize,
    actual: usize,
    expected: usize,
) -> FormatResult<()> {
    if actual == expected {
        return Ok(());
    }
    Err(FormatError::invalid(
        FORMAT,
        format!("static item {} ({:?})", index + 1, item.info.name),
        format!(
            "{actual} {} where the MIKE_FM block announces {expected}",
            static_name(index)
        ),
    ))
}

/// Builds the mesh from the static items, checking every count and node reference.
pub fn read_geometry(
    header: &DfsHeader,
    block: &FmBlock,
    kind: DfsuKind,
    crs: Option<Crs>,
    limits: &ReadLimits,
) -> FormatResult<MeshGeometry> {
    check_limit("mesh node count", block.nodes as u64, limits.mesh_nodes_max)?;
    check_limit(
        "mesh element count",
        block.elements as u64,
        limits.mesh_elements_max,
    )?;
    let node_count = block.nodes;
    let element_count = block.elements;
    let nodes = Nodes {
        ids: integers(header, 0, node_count)?,
        x: floats(header, 1, node_count)?,
        y: floats(header, 2, node_count)?,
        z: floats(header, 3, node_count)?,
        codes: integers(header, 4, node_count)?
            .into_iter()
            .map(|code| i32::try_from(code).unwrap_or(i32::MAX))
            .collect(),
    };
    let elements = read_elements(header, node_count, element_count)?;
    check_dimension(&elements, block, kind)?;
    let z_item = header.statics.get(3).map(|item| &item.info);
    let z_quantity = if kind.is_layered() {
        Quantity {
            name: "Z coordinate".to_owned(),
            unit: "m".to_owned(),
            eum_item: z_item.map(|info| info.eum_item),
            eum_unit: z_item.map(|info| info.eum_unit),
        }
    } else {
        Quantity::bathymetry()
    };
    let layers = (block.layers > 0).then_some(MeshLayers {
        count: block.layers,
        sigma_count: block.sigma_layers,
    });
    Ok(MeshGeometry {
        nodes,
        elements,
        crs,
        z_quantity,
        layers,
    })
}

/// The elements from static items 6 to 9, each node number checked.
fn read_elements(
    header: &DfsHeader,
    node_count: usize,
    element_count: usize,
) -> FormatResult<Elements> {
    let element_ids = integers(header, 5, element_count)?;
    let types = integers(header, 6, element_count)?;
    let sizes = integers(header, 7, element_count)?;
    let total: i64 = sizes.iter().map(|size| (*size).max(0)).sum();
    let connectivity_len = usize::try_from(total).unwrap_or(usize::MAX);
    let connectivity = integers(header, 8, connectivity_len)?;
    let mut elements = Elements {
        ids: Vec::with_capacity(element_count),
        kinds: Vec::with_capacity(element_count),
        offsets: Vec::with_capacity(element_count + 1),
        connectivity: Vec::with_capacity(connectivity_len),
    };
    elements.offsets.push(0);
    let mut refs = connectivity.iter();
    let mut nodes_of_element = Vec::with_capacity(8);
    for (index, ((id, code), size)) in element_ids.iter().zip(&types).zip(&sizes).enumerate() {
        let element = index + 1;
        let kind = element_kind(*code).ok_or_else(|| {
            FormatError::invalid(
                FORMAT,
                format!("element {element}"),
                format!(
                    "unknown element type {code}; DFSU has 11 (line), 21 (triangle), 25 (quadrilateral), 32 (prism) and 33 (hexahedron)"
                ),
            )
        })?;
        let size = usize::try_from(*size).unwrap_or(0);
        if size != kind.node_count() {
            return Err(FormatError::invalid(
                FORMAT,
                format!("element {element}"),
                format!(
                    "element type {code} ({}) has {} nodes but the file gives it {size}",
                    kind.name(),
                    kind.node_count()
                ),
            ));
        }
        nodes_of_element.clear();
        for position in 0..size {
            let number = refs.next().copied().unwrap_or(0);
            let node = usize::try_from(number)
                .ok()
                .filter(|number| (1..=node_count).contains(number))
                .and_then(|number| u32::try_from(number - 1).ok())
                .ok_or_else(|| {
                    FormatError::invalid(
                        FORMAT,
                        format!("element {element}"),
                        format!(
                            "node number {number} (position {}) is outside 1..{node_count}",
                            position + 1
                        ),
                    )
                })?;
            nodes_of_element.push(node);
        }
        elements.push(*id, kind, &nodes_of_element);
    }
    Ok(elements)
}

/// Checks that the elements fit the dimension the block announces: lines in 1D, triangles
/// and quadrilaterals in 2D, prisms and hexahedra in 3D.
fn check_dimension(elements: &Elements, block: &FmBlock, kind: DfsuKind) -> FormatResult<()> {
    let fits = |element: &ElementKind| match block.dimension {
        1 => *element == ElementKind::Line,
        2 => matches!(element, ElementKind::Triangle | ElementKind::Quad),
        _ => matches!(element, ElementKind::Prism | ElementKind::Hexahedron),
    };
    if let Some(index) = elements.kinds.iter().position(|element| !fits(element)) {
        let element = elements.kinds.get(index).copied();
        return Err(FormatError::invalid(
            FORMAT,
            format!("element {}", index + 1),
            format!(
                "a {} in a {}-dimensional file ({})",
                element.map(ElementKind::name).unwrap_or("?"),
                block.dimension,
                kind.name()
            ),
        ));
    }
    Ok(())
}

/// The frequencies and directions of a spectral file (the static items after the mesh),
/// each empty when the file has none.
pub fn spectral_axes(header: &DfsHeader, block: &FmBlock) -> FormatResult<(Vec<f64>, Vec<f64>)> {
    let mut next = 9;
    let mut axis = |count: usize, what: &str| -> FormatResult<Vec<f64>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let item = header.statics.get(next).ok_or_else(|| {
            FormatError::invalid(
                FORMAT,
                "static items",
                format!("the {what} of the spectra are missing after the mesh"),
            )
        })?;
        next += 1;
        if item.values.len() != count || !item.values.data_type().is_float() {
            return Err(FormatError::invalid(
                FORMAT,
                format!("static item {next} ({:?})", item.info.name),
                format!(
                    "{} {} values where MIKE_FM announces {count} {what}",
                    item.values.len(),
                    item.values.data_type().gdal_name()
                ),
            ));
        }
        Ok(item.values.to_f64())
    };
    let frequencies = axis(block.frequencies, "frequencies")?;
    let directions = axis(block.directions, "directions")?;
    Ok((frequencies, directions))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(dimension: i32, layers: usize, sigma: usize, spectral: (usize, usize)) -> FmBlock {
        FmBlock {
            nodes: 10,
            elements: 4,
            dimension,
            layers,
            sigma_layers: sigma,
            frequencies: spectral.0,
            directions: spectral.1,
        }
    }

    #[test]
    fn the_kind_follows_the_reference_librarys_decision() {
        let cases = [
            (2001, block(2, 0, 0, (0, 0)), DfsuKind::Mesh2D),
            (2001, block(3, 5, 5, (0, 0)), DfsuKind::Sigma3D),
            (2001, block(3, 9, 4, (0, 0)), DfsuKind::SigmaZ3D),
            (2001, block(2, 9, 9, (0, 0)), DfsuKind::VerticalProfileSigma),
            (
                2001,
                block(2, 9, 4, (0, 0)),
                DfsuKind::VerticalProfileSigmaZ,
            ),
            (2001, block(1, 9, 4, (0, 0)), DfsuKind::VerticalColumn),
            (2001, block(1, 0, 0, (0, 0)), DfsuKind::Mesh1D),
            (2001, block(2, 0, 0, (2, 2)), DfsuKind::PointSpectrum),
            (2001, block(1, 0, 0, (4, 0)), DfsuKind::PointSpectrum),
            (2002, block(1, 0, 0, (4, 3)), DfsuKind::LineSpectrum),
            (2003, block(2, 0, 0, (25, 16)), DfsuKind::AreaSpectrum),
        ];
        for (data_type, block, kind) in cases {
            assert_eq!(kind_of(data_type, &block), kind, "{data_type} {block:?}");
            assert_eq!(
                kind.is_layered(),
                block.layers > 0 && kind != DfsuKind::Mesh2D
            );
        }
    }

    #[test]
    fn element_codes_go_both_ways() {
        for code in [11, 21, 25, 32, 33] {
            let kind = element_kind(code).unwrap();
            assert_eq!(element_code(kind).map(i64::from), Some(code));
        }
        assert_eq!(element_kind(24), None);
        assert_eq!(element_code(ElementKind::Tetra), None);
    }
}

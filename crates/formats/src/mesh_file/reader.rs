//! Parsing of .mesh text: the header line (both variants), the node table and the element
//! table. The file is read line by line; only the geometry itself is kept, because a mesh
//! dataset announces its whole geometry in the header.

use std::io::BufRead;
use std::sync::Arc;

use super::FORMAT;
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit, prealloc_capacity};
use crate::model::{ElementKind, Elements, MeshGeometry, Nodes, Quantity};
use crate::text::{Lines, shorten};

/// The EUM item code of bathymetry, implied by the old header variant.
pub(crate) const EUM_BATHYMETRY: i32 = 100_079;
/// The EUM unit code of metres.
pub(crate) const EUM_METRE: i32 = 1000;

/// The first line of a .mesh file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MeshFileHeader {
    /// EUM item code of the node z values.
    pub eum_item: i32,
    /// EUM unit code of the node z values.
    pub eum_unit: i32,
    /// Number of nodes.
    pub node_count: u64,
    /// The projection string, trimmed (a name such as `UTM-32`, or a WKT).
    pub projection: String,
}

/// Parses the first line: `<eumItem> <eumUnit> <nNodes> <projection>` (the 2012 variant) or
/// `<nNodes> <projection>` (the older variant, which implies bathymetry in metres).
pub(crate) fn parse_header(line: &str) -> FormatResult<MeshFileHeader> {
    let invalid = |message: &str| FormatError::invalid(FORMAT, "line 1", message);
    let (first, rest) = split_token(line);
    let (second, rest_after_second) = split_token(rest);
    let (third, rest_after_third) = split_token(rest_after_second);
    let all_integers = [first, second, third]
        .iter()
        .all(|token| !token.is_empty() && token.parse::<i64>().is_ok());
    if all_integers && !rest_after_third.trim().is_empty() {
        let eum_item = first.parse().map_err(|_| invalid("bad EUM item code"))?;
        let eum_unit = second.parse().map_err(|_| invalid("bad EUM unit code"))?;
        let node_count = parse_count(third)
            .ok_or_else(|| invalid(&format!("the node count {third:?} is not a whole number")))?;
        return Ok(MeshFileHeader {
            eum_item,
            eum_unit,
            node_count,
            projection: rest_after_third.trim().to_owned(),
        });
    }
    let node_count = parse_count(first).ok_or_else(|| {
        invalid(&format!(
            "expected \"<eumItem> <eumUnit> <nodes> <projection>\" or \"<nodes> <projection>\", found {:?}",
            shorten(line)
        ))
    })?;
    Ok(MeshFileHeader {
        eum_item: EUM_BATHYMETRY,
        eum_unit: EUM_METRE,
        node_count,
        projection: rest.trim().to_owned(),
    })
}

/// The quantity of node z for EUM codes.
pub(crate) fn z_quantity(eum_item: i32, eum_unit: i32) -> Quantity {
    if eum_item == EUM_BATHYMETRY && eum_unit == EUM_METRE {
        return Quantity::bathymetry();
    }
    Quantity {
        name: if eum_item == EUM_BATHYMETRY {
            "Bathymetry".to_owned()
        } else {
            String::new()
        },
        unit: if eum_unit == EUM_METRE {
            "m".to_owned()
        } else {
            String::new()
        },
        eum_item: Some(eum_item),
        eum_unit: Some(eum_unit),
    }
}

/// Reads the node and element tables after the header line.
pub(crate) fn read_geometry<R: BufRead>(
    lines: &mut Lines<'_, R>,
    header: &MeshFileHeader,
    limits: &ReadLimits,
    crs: Option<Crs>,
) -> FormatResult<Arc<MeshGeometry>> {
    check_limit("mesh node count", header.node_count, limits.mesh_nodes_max)?;
    let nodes = read_nodes(lines, header.node_count)?;
    let elements = read_elements(lines, header.node_count, limits)?;
    if let Some(extra) = lines.next_non_blank()? {
        return Err(FormatError::invalid(
            FORMAT,
            lines.location(),
            format!(
                "unexpected text after the last element: {:?}",
                shorten(&extra)
            ),
        ));
    }
    Ok(Arc::new(MeshGeometry {
        nodes,
        elements,
        crs,
        z_quantity: z_quantity(header.eum_item, header.eum_unit),
        layers: None,
    }))
}

fn read_nodes<R: BufRead>(lines: &mut Lines<'_, R>, count: u64) -> FormatResult<Nodes> {
    let capacity = prealloc_capacity(count, 8);
    let mut nodes = Nodes {
        ids: Vec::with_capacity(capacity),
        x: Vec::with_capacity(capacity),
        y: Vec::with_capacity(capacity),
        z: Vec::with_capacity(capacity),
        codes: Vec::with_capacity(capacity),
    };
    for index in 0..count {
        let line = lines.expect_line(&format!("node {} of {count}", index.saturating_add(1)))?;
        let mut tokens = line.split_whitespace();
        let mut next = |what: &str| {
            tokens.next().ok_or_else(|| {
                FormatError::invalid(
                    FORMAT,
                    lines.location(),
                    format!("a node line needs id, x, y, z and code; {what} is missing"),
                )
            })
        };
        let (id, x, y, z, code) = (
            next("id")?,
            next("x")?,
            next("y")?,
            next("z")?,
            next("code")?,
        );
        nodes.ids.push(parse(lines, id, "node id")?);
        nodes.x.push(parse(lines, x, "x")?);
        nodes.y.push(parse(lines, y, "y")?);
        nodes.z.push(parse(lines, z, "z")?);
        nodes.codes.push(parse(lines, code, "boundary code")?);
    }
    Ok(nodes)
}

fn read_elements<R: BufRead>(
    lines: &mut Lines<'_, R>,
    node_count: u64,
    limits: &ReadLimits,
) -> FormatResult<Elements> {
    let line = lines.expect_line("the element header \"<elements> <maxNodes> <typeCode>\"")?;
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let [count, max_nodes, _type_code] = tokens.as_slice() else {
        return Err(FormatError::invalid(
            FORMAT,
            lines.location(),
            format!(
                "expected \"<elements> <maxNodesPerElement> <typeCode>\", found {:?}",
                shorten(&line)
            ),
        ));
    };
    let count: u64 = parse(lines, count, "element count")?;
    let max_nodes: usize = parse(lines, max_nodes, "nodes per element")?;
    if !(max_nodes == 3 || max_nodes == 4) {
        return Err(FormatError::unsupported(
            FORMAT,
            format!(
                "{} : {max_nodes} nodes per element; only triangles (3) and quadrilaterals (4) occur in .mesh files",
                lines.location()
            ),
        ));
    }
    check_limit("mesh element count", count, limits.mesh_elements_max)?;
    let mut elements = Elements {
        ids: Vec::with_capacity(prealloc_capacity(count, 8)),
        kinds: Vec::with_capacity(prealloc_capacity(count, 1)),
        offsets: Vec::with_capacity(prealloc_capacity(count, 8)),
        connectivity: Vec::with_capacity(prealloc_capacity(count.saturating_mul(4), 4)),
    };
    elements.offsets.push(0);
    let mut refs = Vec::with_capacity(4);
    for index in 0..count {
        let line = lines.expect_line(&format!("element {} of {count}", index.saturating_add(1)))?;
        let id = parse_element(lines, &line, max_nodes, node_count, &mut refs)?;
        let kind = if refs.len() == 3 {
            ElementKind::Triangle
        } else {
            ElementKind::Quad
        };
        elements.push(id, kind, &refs);
    }
    Ok(elements)
}

/// Parses `<id> <n1> ... <n_max>` into `refs` (0-based node indexes, padding dropped).
fn parse_element<R: BufRead>(
    lines: &Lines<'_, R>,
    line: &str,
    max_nodes: usize,
    node_count: u64,
    refs: &mut Vec<u32>,
) -> FormatResult<i64> {
    let mut tokens = line.split_whitespace();
    let invalid = |message: String| FormatError::invalid(FORMAT, lines.location(), message);
    let id: i64 = parse(lines, tokens.next().unwrap_or_default(), "element id")?;
    refs.clear();
    let mut padding = false;
    for position in 0..max_nodes {
        let Some(token) = tokens.next() else {
            return Err(invalid(format!(
                "element {id} has {position} node numbers, {max_nodes} expected"
            )));
        };
        let number: u64 = parse(lines, token, "node number")?;
        if number == 0 {
            padding = true;
            continue;
        }
        if padding || number > node_count {
            return Err(invalid(format!(
                "element {id}: node number {number} is outside 1..{node_count} or follows a 0"
            )));
        }
        let index = u32::try_from(number.saturating_sub(1))
            .map_err(|_| invalid(format!("node number {number} is too large")))?;
        refs.push(index);
    }
    if tokens.next().is_some() {
        return Err(invalid(format!(
            "element {id} has more than {max_nodes} node numbers"
        )));
    }
    if !(refs.len() == 3 || refs.len() == 4) {
        return Err(invalid(format!(
            "element {id} has {} nodes; only triangles and quadrilaterals are supported",
            refs.len()
        )));
    }
    Ok(id)
}

fn parse<T: std::str::FromStr, R: BufRead>(
    lines: &Lines<'_, R>,
    token: &str,
    what: &str,
) -> FormatResult<T> {
    token.parse().map_err(|_| {
        FormatError::invalid(
            FORMAT,
            lines.location(),
            format!("{what} {:?} is not a valid number", shorten(token)),
        )
    })
}

fn parse_count(token: &str) -> Option<u64> {
    token.parse().ok()
}

/// The first token of `text` (after leading whitespace) and the rest after it.
fn split_token(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    text.split_once(char::is_whitespace).unwrap_or((text, ""))
}

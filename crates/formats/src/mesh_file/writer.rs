//! Writing .mesh text in the 2012 header variant (`<eumItem> <eumUnit> <nodes> <projection>`).
//!
//! Numbers are written with Rust's shortest round-trip formatting (`{:?}`: `500000.0`,
//! `1e-7`), so every coordinate parses back to the same f64; MIKE and mikeio read both forms.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::reader::{EUM_BATHYMETRY, EUM_METRE};
use crate::catalogue::{WriterSink, Written};
use crate::crs;
use crate::error::{FormatError, FormatResult};
use crate::model::{DatasetSink, ElementKind, Frame, Header, MeshGeometry};

use super::FORMAT;

/// Receives a mesh and writes it as .mesh on `end`.
pub(crate) struct MeshFileSink {
    output: PathBuf,
    geometry: Option<Arc<MeshGeometry>>,
    notes: Vec<String>,
    written: bool,
}

impl MeshFileSink {
    /// A sink writing to `output`.
    pub(crate) fn new(output: &Path) -> Self {
        Self {
            output: output.to_owned(),
            geometry: None,
            notes: Vec::new(),
            written: false,
        }
    }
}

impl DatasetSink for MeshFileSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::Mesh(mesh) = header else {
            return Err(FormatError::Incompatible {
                data: header.kind().name(),
                format: FORMAT,
                message: "a .mesh file holds a mesh".to_owned(),
            });
        };
        check_elements(&mesh.geometry)?;
        if !mesh.items.is_empty() {
            let names: Vec<&str> = mesh.items.iter().map(|item| item.name.as_str()).collect();
            self.notes.push(format!(
                "items not written (a .mesh file holds only node z): {}",
                names.join(", ")
            ));
        }
        self.geometry = Some(Arc::clone(&mesh.geometry));
        Ok(())
    }

    fn frame(&mut self, _frame: Frame<'_>) -> FormatResult<()> {
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        let Some(geometry) = self.geometry.take() else {
            return Err(FormatError::Catalogue(
                "the mesh ended before it began".into(),
            ));
        };
        let projection = crs::mike_projection(geometry.crs.as_ref(), &mut self.notes);
        let file = std::fs::File::create(&self.output)
            .map_err(|source| FormatError::write(&self.output, source))?;
        let mut out = std::io::BufWriter::new(file);
        write_mesh(&mut out, &geometry, &projection)
            .and_then(|()| out.flush())
            .map_err(|source| FormatError::write(&self.output, source))?;
        self.written = true;
        Ok(())
    }
}

impl WriterSink for MeshFileSink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.written {
            return Err(FormatError::Catalogue("the mesh was not completed".into()));
        }
        Ok(Written {
            files: vec![self.output],
            notes: self.notes,
            summary: None,
        })
    }
}

fn check_elements(geometry: &MeshGeometry) -> FormatResult<()> {
    let unsupported = geometry
        .elements
        .kinds
        .iter()
        .position(|kind| !matches!(kind, ElementKind::Triangle | ElementKind::Quad));
    if let Some(index) = unsupported {
        let kind = geometry.elements.kinds.get(index).copied();
        let label = kind.map(ElementKind::label).unwrap_or_default();
        let count = geometry
            .elements
            .kinds
            .iter()
            .filter(|other| Some(**other) == kind)
            .count();
        return Err(FormatError::Incompatible {
            data: "mesh",
            format: FORMAT,
            message: format!(
                "{label} cells cannot be written to .mesh, which holds triangles and \
                 quadrilaterals (element {} is the first of {count}){}",
                index + 1,
                if geometry.layers.is_some() {
                    "; the top layer of a layered DFSU file can be: read it with ReadFull3D=false"
                } else {
                    ""
                }
            ),
        });
    }
    let non_finite = (0..geometry.nodes.len()).find(|&index| {
        [&geometry.nodes.x, &geometry.nodes.y, &geometry.nodes.z]
            .iter()
            .any(|values| values.get(index).is_some_and(|value| !value.is_finite()))
    });
    if let Some(index) = non_finite {
        return Err(FormatError::Incompatible {
            data: "mesh",
            format: FORMAT,
            message: format!(
                "node {} has a coordinate that is not a finite number",
                index + 1
            ),
        });
    }
    Ok(())
}

fn write_mesh(
    out: &mut impl Write,
    geometry: &MeshGeometry,
    projection: &str,
) -> std::io::Result<()> {
    let nodes = &geometry.nodes;
    let eum_item = geometry.z_quantity.eum_item.unwrap_or(EUM_BATHYMETRY);
    let eum_unit = geometry.z_quantity.eum_unit.unwrap_or(EUM_METRE);
    writeln!(out, "{eum_item} {eum_unit} {} {projection}", nodes.len())?;
    for (index, ((x, y), z)) in nodes.x.iter().zip(&nodes.y).zip(&nodes.z).enumerate() {
        let id = nodes.ids.get(index).copied().unwrap_or(index as i64 + 1);
        let code = nodes.codes.get(index).copied().unwrap_or(0);
        writeln!(out, "{id} {x:?} {y:?} {z:?} {code}")?;
    }
    let elements = &geometry.elements;
    let has_quads = elements.kinds.contains(&ElementKind::Quad);
    let (max_nodes, type_code) = if has_quads { (4, 25) } else { (3, 21) };
    writeln!(out, "{} {max_nodes} {type_code}", elements.len())?;
    for index in 0..elements.len() {
        let id = elements.ids.get(index).copied().unwrap_or(index as i64 + 1);
        write!(out, "{id}")?;
        let refs = elements.nodes(index).unwrap_or_default();
        for node in refs {
            write!(out, " {}", u64::from(*node) + 1)?;
        }
        for _ in refs.len()..max_nodes {
            write!(out, " 0")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

//! MIKE .mesh files (ASCII), both header variants (see docs/formats.md#mike-mesh).
//!
//! A .mesh file is the geometry of a MIKE flexible mesh: nodes with x, y, z (usually
//! bathymetry) and a boundary code, then triangles and quadrilaterals. It is a mesh dataset
//! with no items and no time; the z values stay node z, with their EUM quantity.

mod reader;
mod writer;

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::{FormatError, FormatResult};
use crate::model::{DataKind, DatasetSink, Header, MeshHeader, TimeAxis};
use crate::parameters::{Parameters, SRID, srid_parameter};
use crate::text::Lines;

const FORMAT: &str = "MIKE mesh";

/// The published description of [`MeshFileReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "MeshFileReader",
    description: "Reads a MIKE .mesh file",
    dataset_format: ".mesh",
    extensions: &[".mesh"],
    produces: &[DataKind::Mesh],
    parameters: &[srid_parameter(
        "EPSG code of the input's coordinate system, used when the file's projection is missing or a name rather than a WKT",
    )],
};

/// Reads a MIKE .mesh file.
#[derive(Debug, Clone, Copy, Default)]
pub struct MeshFileReader;

impl Reader for MeshFileReader {
    fn spec(&self) -> &'static ReaderSpec {
        &READER
    }

    fn read(
        &self,
        input: &Path,
        parameters: &Parameters,
        context: &ReadContext<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        let srid = parameters.srid(SRID)?;
        let mut lines = Lines::open(input, FORMAT, context)?;
        let Some(first) = lines.next_non_blank()? else {
            return Err(FormatError::invalid(FORMAT, "line 1", "the file is empty"));
        };
        let header = reader::parse_header(&first)?;
        let crs = crate::crs::from_mike_projection(&header.projection, srid);
        let geometry = reader::read_geometry(&mut lines, &header, &context.limits, crs)?;
        sink.begin(&Header::Mesh(MeshHeader {
            geometry,
            items: Vec::new(),
            time: TimeAxis::None,
        }))?;
        sink.end()
    }
}

/// The published description of [`MeshFileWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "MeshFileWriter",
    description: "Writes a MIKE .mesh file; polygon features become elements",
    dataset_format: ".mesh",
    extensions: &[".mesh"],
    accepts: &[DataKind::Mesh, DataKind::Features],
    parameters: &[crate::adapt::TRIANGULATE_PARAMETER],
};

/// Writes a MIKE .mesh file; polygon features become elements.
#[derive(Debug, Clone, Copy, Default)]
pub struct MeshFileWriter;

impl Writer for MeshFileWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, _parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        Ok(Box::new(writer::MeshFileSink::new(output)))
    }
}

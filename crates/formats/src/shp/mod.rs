//! ESRI Shapefile: .shp/.shx/.dbf/.prj/.cpg, or a .zip holding them.
//!
//! The reader streams the .shp and .dbf side by side (one record each at a time); the writer
//! writes records as they come and fixes the headers at the end. Both the binary geometry
//! records and the dBASE table are decoded here rather than with the `shapefile`/`dbase`
//! crates, because those convert counts from the file to sizes before checking them and have
//! no place for our limits; the formats are small enough that owning them costs little.

mod dbf;
mod dbf_code_pages;
mod dbf_writer;
mod reader;
mod rings;
mod shape;
mod writer;
mod zip_input;

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::FormatResult;
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, ParameterType, Parameters, SRID, SRID_PARAMETER};

const FORMAT: &str = "Shapefile";

/// The published description of [`ShpReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "ShpReader",
    description: "Reads an ESRI Shapefile (or a .zip holding one)",
    dataset_format: ".shp",
    extensions: &[".shp", ".zip"],
    produces: &[DataKind::Features],
    parameters: &[SRID_PARAMETER],
};

/// Reads an ESRI Shapefile (or a .zip holding one).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShpReader;

impl Reader for ShpReader {
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
        reader::read(input, srid, context, sink)
    }
}

/// The published description of [`ShpWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "ShpWriter",
    description: "Writes an ESRI Shapefile (.shp, .shx, .dbf, .prj, .cpg; zipped when the output is .zip)",
    dataset_format: ".shp",
    extensions: &[".shp", ".zip"],
    accepts: &[DataKind::Features, DataKind::Mesh],
    parameters: &[GEOMETRY_TYPE_PARAMETER, crate::adapt::TIME_STEP_PARAMETER],
};

/// Name of the writer parameter that picks the geometry type(s) written.
pub const GEOMETRY_TYPE: &str = "GeometryType";

/// The writer's `GeometryType` parameter: a Shapefile holds one geometry type, so features
/// of several types are either split into one Shapefile per type or filtered to one type.
pub const GEOMETRY_TYPE_PARAMETER: ParameterSpec = ParameterSpec {
    name: GEOMETRY_TYPE,
    description: "AUTO writes one Shapefile per geometry type found (<name>_point, \
        <name>_multipoint, <name>_linestring, <name>_polygon when there are several); a type \
        (as ogr2ogr -nlt) writes only features of that type and skips the others",
    data_type: ParameterType::String,
    required: false,
    default_value: Some("AUTO"),
    allowed_values: &[
        "AUTO",
        "POINT",
        "MULTIPOINT",
        "LINESTRING",
        "MULTILINESTRING",
        "POLYGON",
        "MULTIPOLYGON",
    ],
};

/// Writes an ESRI Shapefile (.shp, .shx, .dbf, .prj, .cpg; zipped when the output is .zip).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShpWriter;

impl Writer for ShpWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        let choice = writer::KindChoice::parse(parameters.string(GEOMETRY_TYPE).unwrap_or("AUTO"));
        Ok(Box::new(writer::ShpSink::create(output, choice)?))
    }
}

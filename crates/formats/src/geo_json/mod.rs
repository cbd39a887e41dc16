//! GeoJSON (RFC 7946) feature collections, streamed both ways: the reader scans the document
//! and parses one feature at a time (twice: once for the schema, once for the data), the
//! writer formats one feature at a time. Neither ever holds the document in memory.

mod reader;
mod scan;
mod writer;

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::FormatResult;
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, ParameterType, Parameters};

const FORMAT: &str = "GeoJSON";

/// The published description of [`GeoJsonReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "GeoJsonReader",
    description: "Reads a GeoJSON feature collection",
    dataset_format: ".geojson",
    extensions: &[".geojson", ".json"],
    produces: &[DataKind::Features],
    parameters: &[],
};

/// Reads a GeoJSON feature collection.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeoJsonReader;

impl Reader for GeoJsonReader {
    fn spec(&self) -> &'static ReaderSpec {
        &READER
    }

    fn read(
        &self,
        input: &Path,
        _parameters: &Parameters,
        context: &ReadContext<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        reader::read(input, context, sink)
    }
}

/// The published description of [`GeoJsonWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "GeoJsonWriter",
    description: "Writes a GeoJSON feature collection (RFC 7946)",
    dataset_format: ".geojson",
    extensions: &[".geojson", ".json"],
    accepts: &[DataKind::Features, DataKind::Mesh],
    parameters: &[
        ParameterSpec {
            name: RFC7946,
            description: "true: reproject to WGS 84 longitude/latitude, exterior rings \
                      counterclockwise, no crs member (RFC 7946, like ogr2ogr -lco \
                      RFC7946=YES); false (default): \
                      coordinates as they are, with a legacy crs member naming a CRS other than \
                      WGS 84 (like ogr2ogr's default)",
            data_type: ParameterType::Boolean,
            required: false,
            default_value: Some("false"),
            allowed_values: &[],
        },
        crate::adapt::TIME_STEP_PARAMETER,
    ],
};

/// The writer parameter choosing strict RFC 7946 output.
const RFC7946: &str = "Rfc7946";

/// Writes a GeoJSON feature collection (RFC 7946).
#[derive(Debug, Clone, Copy, Default)]
pub struct GeoJsonWriter;

impl Writer for GeoJsonWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        let rfc7946 = parameters.boolean(RFC7946).unwrap_or(false);
        Ok(Box::new(writer::GeoJsonSink::create(output, rfc7946)?))
    }
}

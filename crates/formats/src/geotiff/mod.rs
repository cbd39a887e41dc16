//! GeoTIFF rasters: bands as items, nodata, GeoKeys.
//!
//! Not implemented yet: the reader and writer fail with an "unsupported" error.

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::{FormatError, FormatResult};
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, ParameterType, Parameters};

const FORMAT: &str = "GeoTIFF";

/// The published description of [`GeoTiffReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "GeoTiffReader",
    description: "Reads a GeoTIFF; bands become items",
    dataset_format: ".tif",
    extensions: &[".tif", ".tiff"],
    produces: &[DataKind::Grid],
    parameters: &[ParameterSpec {
        name: "SRID",
        description: "EPSG code of the input's coordinate system, used when the file does not state one",
        data_type: ParameterType::Integer,
        required: false,
        default_value: None,
        allowed_values: &[],
    }],
};

/// Reads a GeoTIFF; bands become items.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeoTiffReader;

impl Reader for GeoTiffReader {
    fn spec(&self) -> &'static ReaderSpec {
        &READER
    }

    fn read(
        &self,
        _input: &Path,
        _parameters: &Parameters,
        _context: &ReadContext<'_>,
        _sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        Err(FormatError::unsupported(
            FORMAT,
            "reading is not implemented yet",
        ))
    }
}

/// The published description of [`GeoTiffWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "GeoTiffWriter",
    description: "Writes grids as tiled, deflate-compressed GeoTIFF",
    dataset_format: ".tif",
    extensions: &[".tif", ".tiff"],
    accepts: &[DataKind::Grid],
    parameters: &[],
};

/// Writes grids as tiled, deflate-compressed GeoTIFF.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeoTiffWriter;

impl Writer for GeoTiffWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(
        &self,
        _output: &Path,
        _parameters: &Parameters,
    ) -> FormatResult<Box<dyn WriterSink>> {
        Err(FormatError::unsupported(
            FORMAT,
            "writing is not implemented yet",
        ))
    }
}

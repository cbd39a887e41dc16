//! ESRI ASCII Grid (.asc) with header, NODATA_value and optional .prj.
//!
//! Not implemented yet: the reader and writer fail with an "unsupported" error.

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::{FormatError, FormatResult};
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, ParameterType, Parameters};

const FORMAT: &str = "ASCII Grid";

/// The published description of [`AsciiGridReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "AsciiGridReader",
    description: "Reads an ESRI ASCII Grid (.asc, optional .prj) as a one-item grid",
    dataset_format: ".asc",
    extensions: &[".asc"],
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

/// Reads an ESRI ASCII Grid (.asc, optional .prj) as a one-item grid.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsciiGridReader;

impl Reader for AsciiGridReader {
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

/// The published description of [`AsciiGridWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "AsciiGridWriter",
    description: "Writes one grid item as an ESRI ASCII Grid (.asc) with a .prj",
    dataset_format: ".asc",
    extensions: &[".asc"],
    accepts: &[DataKind::Grid],
    parameters: &[],
};

/// Writes one grid item as an ESRI ASCII Grid (.asc) with a .prj.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsciiGridWriter;

impl Writer for AsciiGridWriter {
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

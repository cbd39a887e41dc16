//! The plain-copy pair `FileReader`/`FileWriter`: the interface's way of importing or exporting
//! a file unchanged (docs/conversion.md#the-plain-copy). It never parses the file.

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec, Written};
use crate::error::{FormatError, FormatResult};
use crate::model::DatasetSink;
use crate::parameters::Parameters;

/// The published description of [`FileReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "FileReader",
    description: "Takes any file as it is, for a plain copy with FileWriter",
    dataset_format: "file",
    extensions: &[],
    produces: &[],
    parameters: &[],
};

/// The published description of [`FileWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "FileWriter",
    description: "Stores the file from FileReader unchanged",
    dataset_format: "file",
    extensions: &[],
    accepts: &[],
    parameters: &[],
};

/// Reads any file for a plain copy.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileReader;

/// Writes the plain copy.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileWriter;

impl Reader for FileReader {
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
        Err(FormatError::Catalogue(
            "FileReader only feeds FileWriter".to_owned(),
        ))
    }
}

impl Writer for FileWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(
        &self,
        _output: &Path,
        _parameters: &Parameters,
    ) -> FormatResult<Box<dyn WriterSink>> {
        Err(FormatError::Catalogue(
            "FileWriter only takes input from FileReader".to_owned(),
        ))
    }
}

/// Copies `input` to `output` byte for byte.
pub fn copy(input: &Path, output: &Path) -> FormatResult<Written> {
    std::fs::copy(input, output).map_err(|source| FormatError::write(output, source))?;
    Ok(Written {
        files: vec![output.to_path_buf()],
        notes: Vec::new(),
        summary: None,
    })
}

//! ESRI ASCII Grid (.asc) with header, NODATA_value and optional .prj.
//!
//! An ASCII Grid is a short header of `key value` lines (`ncols`, `nrows`, `xllcorner` or
//! `xllcenter`, `yllcorner` or `yllcenter`, `cellsize` or `dx`/`dy`, optional `NODATA_value`)
//! followed by `ncols x nrows` numbers, top row first, separated by any whitespace. The CRS, if
//! any, is an ESRI WKT in a `.prj` beside the file. GDAL's AAIGrid driver is what users compare
//! against, so the header is read the way GDAL reads it (keys in any order and case, the
//! geotransform computed with GDAL's expressions) and the writer writes what GDAL reads back
//! to the same values.
//!
//! The file carries no data type, so the reader reads the data twice: a fast first pass
//! (`scan.rs`) validates the values and finds the narrowest type that keeps every value as
//! written (Int32, else Float32, else Float64); the second pass parses the values in that type
//! and streams them to the sink in frames of whole rows. Neither pass holds more than one
//! buffer of text and one frame of values, so a file of any size reads in bounded memory;
//! the price is reading the file twice, which the first pass keeps cheap by deciding the type
//! from the digits wherever it can. Holding the values instead (or spooling them to disk)
//! would cost memory or a temporary file of the grid's size; the second read mostly comes from
//! the page cache.

mod header;
mod number;
mod reader;
mod resample;
mod scan;
mod tokens;
mod writer;

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::FormatResult;
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, ParameterType, Parameters, SRID, SRID_PARAMETER};

pub use resample::RESAMPLE_CELLS_MAX;

/// The writer parameter that says what to do with a rotated grid.
pub const ROTATED_GRIDS: &str = "RotatedGrids";

const FORMAT: &str = "ASCII Grid";

/// Most bytes of one header line: a key and one number need a few dozen; a longer line is not
/// a header line, and the bound keeps a file without line breaks from being buffered whole.
pub const HEADER_LINE_BYTES_MAX: u64 = 1024;

/// Most lines before the data: eight keys plus blank lines between them. A bound, so that a
/// file of blank lines is refused instead of scanned forever for a header.
pub const HEADER_LINES_MAX: u64 = 100;

/// Most bytes of one value: `%.20g` of a double with sign and exponent takes 27; a longer run
/// of non-blank bytes is not a number. This also bounds what the tokenizer carries from one
/// buffer to the next.
pub const TOKEN_BYTES_MAX: usize = 256;

/// Values handed to the sink at once: whole rows up to this many values (a single row longer
/// than this is split). 65,536 values are at most 512 KiB of Float64.
pub const FRAME_VALUES: usize = 65_536;

/// The published description of [`AsciiGridReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "AsciiGridReader",
    description: "Reads an ESRI ASCII Grid (.asc, optional .prj) as a one-item grid",
    dataset_format: ".asc",
    extensions: &[".asc"],
    produces: &[DataKind::Grid],
    parameters: &[SRID_PARAMETER],
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
        input: &Path,
        parameters: &Parameters,
        context: &ReadContext<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        let srid = parameters.srid(SRID)?;
        reader::read(input, srid, context, sink)
    }
}

/// The published description of [`AsciiGridWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "AsciiGridWriter",
    description: "Writes one grid item as an ESRI ASCII Grid (.asc) with a .prj",
    dataset_format: ".asc",
    extensions: &[".asc"],
    accepts: &[DataKind::Grid],
    parameters: &[ParameterSpec {
        name: ROTATED_GRIDS,
        description: "A rotated grid (which an ASCII Grid cannot hold): refuse (the default; GeoTIFF keeps rotation) or nearest (resample it north-up by nearest neighbour, as gdalwarp does)",
        data_type: ParameterType::String,
        required: false,
        default_value: Some("refuse"),
        allowed_values: &["refuse", "nearest"],
    }],
};

/// Writes one grid item as an ESRI ASCII Grid (.asc) with a .prj.
#[derive(Debug, Clone, Copy, Default)]
pub struct AsciiGridWriter;

impl Writer for AsciiGridWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        let resample = parameters
            .string(ROTATED_GRIDS)
            .is_some_and(|value| value.eq_ignore_ascii_case("nearest"));
        Ok(Box::new(writer::AsciiGridSink::new(output, resample)))
    }
}

//! Reading an ASCII Grid: the header, the `.prj`, the first pass for the type, then the
//! values in frames of whole rows.

use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;

use super::FRAME_VALUES;
use super::header::{GridFileHeader, read_header};
use super::number::{Decimal, Width, read_float32, read_number};
use super::scan::{data_width, too_few, too_many};
use super::tokens::{Fault, Step, Tokens};
use crate::catalogue::ReadContext;
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::model::{
    DataType, DatasetSink, Frame, GridGeometry, GridHeader, Header, Item, TimeAxis, Values,
};
use crate::side_files;
use crate::text::shorten;

/// Reads the grid at `input` into `sink`; `srid` applies when there is no `.prj`.
pub(crate) fn read(
    input: &Path,
    srid: Option<u32>,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let mut file = File::open(input).map_err(|source| FormatError::read(input, source))?;
    let length = file.metadata().map_or(0, |metadata| metadata.len());
    // Both passes read the file; progress counts the bytes of both.
    context.progress.set_total(length.saturating_mul(2));
    let header = read_header(BufReader::new(&mut file), input, &context.limits)?;
    let crs = crs_of(input, srid)?;
    let width = data_width(
        &mut data_tokens(&mut file, input, &header, context)?,
        &header,
    )?;
    // The passes report the bytes of values they read; the header (twice) and what a first
    // pass that stopped early skipped are reported here.
    let scanned = file.stream_position().unwrap_or(length);
    let unreported = length
        .saturating_sub(scanned)
        .saturating_add(header.data_offset.saturating_mul(2));
    context.progress.advance(unreported);
    let data_type = match width {
        Width::Int32 => DataType::I32,
        Width::Float32 => DataType::F32,
        Width::Float64 => DataType::F64,
    };
    let mut item = Item::new(item_name(input), data_type);
    item.nodata = header.nodata.map(|nodata| nodata.value);
    sink.begin(&Header::Grid(GridHeader {
        geometry: GridGeometry {
            columns: header.columns,
            rows: header.rows,
            vertical: None,
            transform: header.transform,
            crs,
        },
        items: vec![item],
        time: TimeAxis::None,
    }))?;
    let mut tokens = data_tokens(&mut file, input, &header, context)?;
    match width {
        Width::Int32 => read_values::<i32, _>(&mut tokens, &header, sink)?,
        Width::Float32 => read_values::<f32, _>(&mut tokens, &header, sink)?,
        Width::Float64 => read_values::<f64, _>(&mut tokens, &header, sink)?,
    }
    sink.end()
}

/// The tokens of the values, from the start of the first line after the header.
fn data_tokens<'a>(
    file: &'a mut File,
    input: &'a Path,
    header: &GridFileHeader,
    context: &ReadContext<'a>,
) -> FormatResult<Tokens<'a, &'a mut File>> {
    file.seek(SeekFrom::Start(header.data_offset))
        .map_err(|source| FormatError::read(input, source))?;
    Ok(Tokens::new(
        file,
        input,
        header.data_line,
        context.limits.line_bytes_max,
        context.progress,
    ))
}

/// The item's name: the file's stem, which is what names the grid for its user.
fn item_name(input: &Path) -> String {
    input
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .filter(|stem| !stem.is_empty())
        .unwrap_or_else(|| "value".to_owned())
}

/// The CRS from the `.prj` beside `input`: an ESRI (or OGC) WKT, kept as it is. A `.prj` in
/// the older ESRI keyword form (`Projection UTM`...) is kept as a name, unless `srid` says
/// what the system is. Without a `.prj`, `srid`.
fn crs_of(input: &Path, srid: Option<u32>) -> FormatResult<Option<Crs>> {
    let Some(path) = side_files::sibling(input, "prj") else {
        return Ok(srid.map(Crs::Epsg));
    };
    let text = side_files::read_text(&path)?;
    Ok(match (text, srid) {
        (Some(text), _) if text.contains('[') => Some(Crs::Wkt(text)),
        (_, Some(code)) => Some(Crs::Epsg(code)),
        (Some(text), None) => Some(Crs::Named(text)),
        (None, None) => None,
    })
}

/// A type values are read in.
trait Cell: Copy {
    /// The value of a token, or the message why it is not one.
    fn parse(token: &[u8]) -> Result<Self, String>;
    /// A buffer of these values.
    fn wrap(values: Vec<Self>) -> Values;
    /// The buffer back, to reuse its allocation.
    fn unwrap(values: Values) -> Vec<Self>;
}

impl Cell for i32 {
    fn parse(token: &[u8]) -> Result<Self, String> {
        if let Some(value) = Decimal::scan(token).and_then(|decimal| decimal.int32()) {
            return Ok(value);
        }
        match read_number(token) {
            Err(error) => Err(error.message(token)),
            Ok(_) => Err(format!(
                "{:?} is not an Int32 value, but the first pass found only Int32 values: did \
                 the file change while it was read?",
                shorten(&String::from_utf8_lossy(token))
            )),
        }
    }
    fn wrap(values: Vec<Self>) -> Values {
        Values::I32(values)
    }
    fn unwrap(values: Values) -> Vec<Self> {
        match values {
            Values::I32(values) => values,
            _ => Vec::new(),
        }
    }
}

impl Cell for f32 {
    fn parse(token: &[u8]) -> Result<Self, String> {
        // Through f64, as GDAL does (CPLAtofM, then a cast): the same f32 as GDAL's.
        read_float32(token).map_err(|error| error.message(token))
    }
    fn wrap(values: Vec<Self>) -> Values {
        Values::F32(values)
    }
    fn unwrap(values: Values) -> Vec<Self> {
        match values {
            Values::F32(values) => values,
            _ => Vec::new(),
        }
    }
}

impl Cell for f64 {
    fn parse(token: &[u8]) -> Result<Self, String> {
        read_number(token)
            .map(|number| number.value)
            .map_err(|error| error.message(token))
    }
    fn wrap(values: Vec<Self>) -> Values {
        Values::F64(values)
    }
    fn unwrap(values: Values) -> Vec<Self> {
        match values {
            Values::F64(values) => values,
            _ => Vec::new(),
        }
    }
}

/// Values handed on at once: as many whole rows as fit in [`FRAME_VALUES`], or parts of one
/// row when a row is longer.
fn frame_values(columns: usize) -> usize {
    if columns > FRAME_VALUES {
        return FRAME_VALUES;
    }
    (FRAME_VALUES / columns.max(1))
        .saturating_mul(columns)
        .max(1)
}

/// The second pass: parses every value as `T` and hands them on in frames.
fn read_values<T: Cell, R: std::io::Read>(
    tokens: &mut Tokens<'_, R>,
    header: &GridFileHeader,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let cells = header.cells;
    let frame_length = frame_values(header.columns);
    let mut buffer: Vec<T> = Vec::with_capacity(frame_length);
    let mut offset = 0_usize;
    let mut count: u64 = 0;
    tokens.for_each(|token| {
        if count >= cells {
            return Err(Fault::Token(too_many(cells)));
        }
        count += 1;
        buffer.push(T::parse(token).map_err(Fault::Token)?);
        if buffer.len() >= frame_length {
            emit(&mut buffer, &mut offset, sink).map_err(Fault::Other)?;
        }
        Ok(Step::Continue)
    })?;
    if count < cells {
        return Err(too_few(tokens.last_token_line(), count, cells));
    }
    if !buffer.is_empty() {
        emit(&mut buffer, &mut offset, sink)?;
    }
    Ok(())
}

/// Hands the buffered values to the sink as one frame and empties the buffer.
fn emit<T: Cell>(
    buffer: &mut Vec<T>,
    offset: &mut usize,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let length = buffer.len();
    let values = T::wrap(std::mem::take(buffer));
    let result = sink.frame(Frame {
        step: 0,
        item: 0,
        offset: *offset,
        values: &values,
    });
    *buffer = T::unwrap(values);
    buffer.clear();
    *offset = offset.saturating_add(length);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_hold_whole_rows_unless_a_row_is_longer() {
        assert_eq!(frame_values(1), FRAME_VALUES);
        assert_eq!(frame_values(10_000), 60_000);
        assert_eq!(frame_values(FRAME_VALUES), FRAME_VALUES);
        assert_eq!(frame_values(FRAME_VALUES + 1), FRAME_VALUES);
    }
}

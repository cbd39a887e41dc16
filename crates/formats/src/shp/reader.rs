//! Streaming a Shapefile into a sink: the .shp and .dbf are read side by side, one record of
//! each at a time, so memory stays at one geometry and one attribute row whatever the file
//! size. A .zip input is read in place: each part is its own decompressing stream over its own
//! handle on the archive, so nothing is extracted to disk.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use encoding_rs::Encoding;

use crate::catalogue::ReadContext;
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::model::{DatasetSink, Feature, FeatureSchema, Geometry, Header, Value};
use crate::side_files;

use super::FORMAT;
use super::dbf::{self, DbfHeader};
use super::shape::{self, RecordPlace, ShapeType};

/// Progress is reported in steps of this many bytes, so that a progress bar costs nothing.
const PROGRESS_STEP_BYTES: u64 = 1024 * 1024;

/// The small side files, already read.
#[derive(Debug, Default)]
pub(crate) struct SideFiles {
    /// Text of the .prj.
    pub prj: Option<String>,
    /// Text of the .cpg.
    pub cpg: Option<String>,
}

/// Reads the Shapefile at `input` (a .shp or a .zip) into `sink`.
pub(crate) fn read(
    input: &Path,
    srid: Option<u32>,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let is_zip = input
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| extension.eq_ignore_ascii_case("zip"));
    if is_zip {
        return super::zip_input::read(input, srid, context, sink);
    }
    let shp = open(input)?;
    let total = shp.metadata().map(|meta| meta.len()).unwrap_or(0);
    let dbf_path = side_files::sibling(input, "dbf");
    let dbf = match &dbf_path {
        Some(path) => Some(open(path)?),
        None => None,
    };
    let dbf_bytes = dbf
        .as_ref()
        .and_then(|file| file.metadata().ok())
        .map_or(0, |meta| meta.len());
    context.progress.set_total(total.saturating_add(dbf_bytes));
    let side = SideFiles {
        prj: read_side(side_files::sibling(input, "prj"))?,
        cpg: read_side(side_files::sibling(input, "cpg"))?,
    };
    let shp = BufReader::with_capacity(256 * 1024, shp);
    let dbf = dbf.map(|file| BufReader::with_capacity(256 * 1024, file));
    read_streams(shp, dbf, &side, srid, context, sink)
}

fn open(path: &Path) -> FormatResult<File> {
    File::open(path).map_err(|error| FormatError::read(path, error))
}

fn read_side(path: Option<PathBuf>) -> FormatResult<Option<String>> {
    match path {
        Some(path) => side_files::read_text(&path),
        None => Ok(None),
    }
}

/// Reads the .shp header: the shape type.
fn read_shp_header(shp: &mut impl Read) -> FormatResult<(ShapeType, u64)> {
    let mut header = [0u8; 100];
    shp.read_exact(&mut header).map_err(|_| {
        FormatError::invalid(FORMAT, "byte 0", "file shorter than the 100-byte header")
    })?;
    let [c0, c1, c2, c3, ..] = header;
    let code = i32::from_be_bytes([c0, c1, c2, c3]);
    if code != 9994 {
        return Err(FormatError::invalid(
            FORMAT,
            "byte 0",
            format!("file code is {code}, not 9994: not a .shp file"),
        ));
    }
    let length_words = header
        .get(24..28)
        .and_then(|bytes| <[u8; 4]>::try_from(bytes).ok())
        .map_or(0, i32::from_be_bytes);
    let type_code = header
        .get(32..36)
        .and_then(|bytes| <[u8; 4]>::try_from(bytes).ok())
        .map_or(-1, i32::from_le_bytes);
    let shape_type = ShapeType::from_code(type_code).ok_or_else(|| {
        FormatError::invalid(FORMAT, "byte 32", format!("unknown shape type {type_code}"))
    })?;
    let length = u64::try_from(length_words).unwrap_or(0).saturating_mul(2);
    Ok((shape_type, length))
}

/// The schema of the file.
fn schema(
    shape_type: ShapeType,
    dbf: Option<&DbfHeader>,
    side: &SideFiles,
    srid: Option<u32>,
) -> FeatureSchema {
    let crs = match (&side.prj, srid) {
        (Some(wkt), _) => Some(Crs::Wkt(wkt.clone())),
        (None, Some(code)) => Some(Crs::Epsg(code)),
        (None, None) => None,
    };
    FeatureSchema {
        fields: dbf.map_or_else(Vec::new, |header| {
            header
                .fields
                .iter()
                .map(|field| field.field.clone())
                .collect()
        }),
        geometry_kind: shape_type.kind(),
        has_z: shape_type.has_z(),
        has_m: shape_type.has_m(),
        crs,
    }
}

/// Reads the .shp stream and the optional .dbf stream into `sink`.
pub(crate) fn read_streams(
    mut shp: impl Read,
    dbf: Option<impl Read>,
    side: &SideFiles,
    srid: Option<u32>,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let (shape_type, declared_bytes) = read_shp_header(&mut shp)?;
    let cpg_encoding = side.cpg.as_deref().and_then(dbf::encoding_of_cpg);
    let mut table = match dbf {
        Some(mut reader) => {
            let (header, encoding) = dbf::read_header(&mut reader, cpg_encoding, &context.limits)?;
            Some(Table {
                reader,
                header,
                encoding,
                record: Vec::new(),
            })
        }
        None => None,
    };
    let schema = schema(shape_type, table.as_ref().map(|t| &t.header), side, srid);
    sink.begin(&Header::Features(schema))?;
    let mut records = Records {
        shape_type,
        declared_bytes,
        offset: 100,
        number: 0,
        content: Vec::new(),
        progress_pending: 100,
    };
    let mut feature = Feature {
        geometry: None,
        values: Vec::new(),
    };
    while let Some(geometry) = records.next(&mut shp, context)? {
        let keep = match table.as_mut() {
            Some(table) => {
                records.progress_pending = records
                    .progress_pending
                    .saturating_add(table.header.record_bytes as u64);
                table.next(&mut feature.values, records.number)?
            }
            None => true,
        };
        if keep {
            feature.geometry = geometry;
            sink.feature(&feature)?;
        }
        if records.progress_pending >= PROGRESS_STEP_BYTES {
            context.progress.advance(records.progress_pending);
            records.progress_pending = 0;
        }
    }
    context.progress.advance(records.progress_pending);
    sink.end()
}

/// The attribute stream.
struct Table<R> {
    reader: R,
    header: DbfHeader,
    encoding: &'static Encoding,
    record: Vec<u8>,
}

impl<R: Read> Table<R> {
    /// Decodes the next row into `values`; false for a deleted row. A .dbf with fewer rows
    /// than the .shp has shapes gives nulls for the rest, as OGR does.
    fn next(&mut self, values: &mut Vec<Value>, number: u64) -> FormatResult<bool> {
        if number > u64::from(self.header.records) {
            values.clear();
            values.resize(self.header.fields.len(), Value::Null);
            return Ok(true);
        }
        self.record.resize(self.header.record_bytes, 0);
        self.reader.read_exact(&mut self.record).map_err(|_| {
            FormatError::invalid(
                "dBASE",
                format!("record {number}"),
                "file ends before the record count its header gives",
            )
        })?;
        if self.record.first() == Some(&b'*') {
            return Ok(false);
        }
        dbf::decode_record(&self.record, &self.header.fields, self.encoding, values);
        Ok(true)
    }
}

/// The geometry stream.
struct Records {
    shape_type: ShapeType,
    declared_bytes: u64,
    offset: u64,
    number: u64,
    content: Vec<u8>,
    progress_pending: u64,
}

impl Records {
    /// The next record's geometry; `None` at the end of the file.
    fn next(
        &mut self,
        shp: &mut impl Read,
        context: &ReadContext<'_>,
    ) -> FormatResult<Option<Option<Geometry>>> {
        if self.declared_bytes >= 100 && self.offset >= self.declared_bytes {
            return Ok(None);
        }
        let mut header = [0u8; 8];
        let got = read_up_to(shp, &mut header).map_err(|error| self.error(error.to_string()))?;
        if got == 0 {
            return Ok(None);
        }
        if got < 8 {
            return Err(self.error("file ends inside a record header"));
        }
        let [_, _, _, _, l0, l1, l2, l3] = header;
        let words = i32::from_be_bytes([l0, l1, l2, l3]);
        let Some(bytes) = u64::try_from(words).ok().map(|w| w * 2).filter(|b| *b >= 4) else {
            return Err(self.error(format!("content length {words} words is invalid")));
        };
        crate::limits::check_limit(
            "bytes of one .shp record / 16",
            bytes / 16,
            context.limits.vertices_per_geometry_max.saturating_add(16),
        )?;
        self.number += 1;
        self.content.clear();
        shp.take(bytes)
            .read_to_end(&mut self.content)
            .map_err(|error| self.error(error.to_string()))?;
        if (self.content.len() as u64) < bytes {
            return Err(self.error("file ends inside a record"));
        }
        let place = RecordPlace {
            number: self.number,
            offset: self.offset,
        };
        let geometry = shape::decode(&self.content, self.shape_type, &context.limits, place)?;
        self.offset = self.offset.saturating_add(8 + bytes);
        self.progress_pending = self.progress_pending.saturating_add(8 + bytes);
        Ok(Some(geometry))
    }

    fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::invalid(
            FORMAT,
            format!("record {} (byte {})", self.number + 1, self.offset),
            message,
        )
    }
}

/// Reads until `buffer` is full or the stream ends; returns the bytes read.
fn read_up_to(reader: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buffer.get_mut(filled..) {
        if rest.is_empty() {
            break;
        }
        match reader.read(rest) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

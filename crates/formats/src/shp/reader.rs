//! Streaming a Shapefile into a sink: the .shp and .dbf are read side by side, one record of
//! each at a time, so memory stays at one geometry and one attribute row whatever the file
//! size. A .zip input is read in place: each part is its own decompressing stream over its own
//! handle on the archive, so nothing is extracted to disk.
//!
//! With a `.shx` beside the `.shp`, records are found through it, as GDAL finds them: its
//! header gives the record count and each entry the offset and length of one record, so
//! padding or garbage after the last record, gaps between records, wrong content lengths in the
//! `.shp` and records out of order are all read as GDAL reads them. A record that its entry
//! places outside the file, or that cannot be decoded, becomes a null geometry (GDAL reports an
//! error and gives a null geometry too). Without a `.shx` (GDAL refuses to open such a file
//! unless told to rebuild the index, which it does by walking the records), the `.shp` is read
//! sequentially by its content lengths, as that rebuild does.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use crate::catalogue::ReadContext;
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::model::{DatasetSink, Feature, FeatureSchema, Geometry, Header, Value};
use crate::side_files;

use super::FORMAT;
use super::dbf::{self, DbfHeader, TextEncoding};
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
    let shx = match side_files::sibling(input, "shx") {
        Some(path) => {
            let file = open(&path)?;
            let size = file
                .metadata()
                .map_err(|error| FormatError::read(&path, error))?;
            Some(Shx::new(BufReader::new(file), Some(size.len()))?)
        }
        None => None,
    };
    let mut shp = Seekable::new(BufReader::with_capacity(256 * 1024, shp));
    let dbf = dbf.map(|file| BufReader::with_capacity(256 * 1024, file));
    read_streams(&mut shp, shx, dbf, &side, srid, context, sink)
}

/// A .shp stream that can move to the offset of a record.
pub(crate) trait ShpInput: Read {
    /// Moves to byte `offset` of the .shp. A position past the end is not an error: reading
    /// there gives nothing.
    fn go_to(&mut self, offset: u64) -> std::io::Result<()>;
}

/// A .shp that can seek both ways (a file).
pub(crate) struct Seekable<R> {
    inner: BufReader<R>,
    position: u64,
}

impl<R: Read + Seek> Seekable<R> {
    pub(crate) fn new(inner: BufReader<R>) -> Self {
        Self { inner, position: 0 }
    }
}

impl<R: Read> Read for Seekable<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let count = self.inner.read(buffer)?;
        self.position = self.position.saturating_add(count as u64);
        Ok(count)
    }
}

impl<R: Read + Seek> ShpInput for Seekable<R> {
    fn go_to(&mut self, offset: u64) -> std::io::Result<()> {
        if offset != self.position {
            // seek_relative keeps the buffer when the target is inside it (the usual case of
            // records one after another with a little padding).
            let delta = i64::try_from(offset)
                .ok()
                .zip(i64::try_from(self.position).ok())
                .map(|(to, from)| to - from)
                .ok_or_else(|| std::io::Error::other("offset out of range"))?;
            self.inner.seek_relative(delta)?;
            self.position = offset;
        }
        Ok(())
    }
}

/// A .shp that can only go forward (a compressed zip entry); the zip reader checks that the
/// `.shx` needs nothing else before choosing it.
pub(crate) struct Forward<R> {
    inner: R,
    position: u64,
}

impl<R: Read> Forward<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self { inner, position: 0 }
    }
}

impl<R: Read> Read for Forward<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let count = self.inner.read(buffer)?;
        self.position = self.position.saturating_add(count as u64);
        Ok(count)
    }
}

impl<R: Read> ShpInput for Forward<R> {
    fn go_to(&mut self, offset: u64) -> std::io::Result<()> {
        let Some(gap) = offset.checked_sub(self.position) else {
            return Err(std::io::Error::other(
                "a record lies before the previous one in a stream that cannot go back",
            ));
        };
        let skipped = std::io::copy(&mut (&mut self.inner).take(gap), &mut std::io::sink())?;
        self.position = self.position.saturating_add(skipped);
        Ok(())
    }
}

/// Most records a `.shx` may index: GDAL refuses a header claiming more.
const SHX_RECORDS_MAX: u64 = 256_000_000;

/// The `.shx` index: its record count, then one entry per record.
pub(crate) struct Shx<R> {
    reader: R,
    /// Records the header counts.
    pub count: u64,
}

fn shx_error(location: impl Into<String>, message: impl Into<String>) -> FormatError {
    FormatError::invalid("Shapefile index (.shx)", location, message)
}

impl<R: Read> Shx<R> {
    /// Reads the header; `size` (the file's length, when known) must hold every entry the
    /// header counts, as GDAL requires.
    pub(crate) fn new(mut reader: R, size: Option<u64>) -> FormatResult<Self> {
        let mut header = [0u8; 100];
        reader
            .read_exact(&mut header)
            .map_err(|_| shx_error("byte 0", "file shorter than the 100-byte header"))?;
        let [c0, c1, c2, c3, ..] = header;
        if i32::from_be_bytes([c0, c1, c2, c3]) != 9994 {
            return Err(shx_error(
                "byte 0",
                "file code is not 9994: not a .shx file",
            ));
        }
        let words = header
            .get(24..28)
            .and_then(|bytes| <[u8; 4]>::try_from(bytes).ok())
            .map_or(0, i32::from_be_bytes);
        let count = u64::try_from(words.saturating_sub(50) / 4)
            .ok()
            .filter(|count| *count <= SHX_RECORDS_MAX && words >= 50)
            .ok_or_else(|| {
                shx_error(
                    "byte 24",
                    format!("file length {words} words gives no valid record count"),
                )
            })?;
        if let Some(size) = size
            && count.saturating_mul(8).saturating_add(100) > size
        {
            return Err(shx_error(
                "header",
                format!("the header counts {count} records but the file holds fewer entries"),
            ));
        }
        Ok(Self { reader, count })
    }

    /// The next entry: the record's offset and its length including the 8-byte record header,
    /// in bytes.
    fn entry(&mut self, number: u64) -> FormatResult<(u64, u64)> {
        let mut entry = [0u8; 8];
        self.reader.read_exact(&mut entry).map_err(|_| {
            shx_error(
                format!("entry {number}"),
                "file ends before the record count its header gives",
            )
        })?;
        let [o0, o1, o2, o3, l0, l1, l2, l3] = entry;
        let offset = u32::from_be_bytes([o0, o1, o2, o3]);
        let length = u32::from_be_bytes([l0, l1, l2, l3]);
        // GDAL's bounds: an offset must fit an int, a length leave room for the header.
        if offset > i32::MAX as u32 {
            return Err(shx_error(
                format!("entry {number}"),
                format!("offset {offset} words is invalid"),
            ));
        }
        if length > (i32::MAX / 2 - 4) as u32 {
            return Err(shx_error(
                format!("entry {number}"),
                format!("length {length} words is invalid"),
            ));
        }
        Ok((u64::from(offset) * 2, u64::from(length) * 2 + 8))
    }
}

/// True when the `.shx` entries from `reader` (after its header) can be read from a stream
/// that only goes forward: each record starts at or after the end of the one before.
pub(crate) fn shx_is_forward(mut shx: Shx<impl Read>) -> FormatResult<bool> {
    let mut end = 100u64;
    for number in 1..=shx.count {
        let (offset, bytes) = shx.entry(number)?;
        if offset < end {
            return Ok(false);
        }
        end = offset.saturating_add(bytes);
    }
    Ok(true)
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
fn read_shp_header(shp: &mut dyn ShpInput) -> FormatResult<(ShapeType, u64)> {
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

/// Reads the .shp stream (records found through `shx` when given, else one after another)
/// and the optional .dbf stream into `sink`.
pub(crate) fn read_streams(
    shp: &mut dyn ShpInput,
    shx: Option<Shx<impl Read>>,
    dbf: Option<impl Read>,
    side: &SideFiles,
    srid: Option<u32>,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let (shape_type, declared_bytes) = read_shp_header(shp)?;
    let text_encoding = side
        .cpg
        .as_deref()
        .map(|cpg| dbf::encoding_of_cpg(cpg).unwrap_or(TextEncoding::Undeclared));
    let mut table = match dbf {
        Some(mut reader) => {
            let (header, encoding) = dbf::read_header(&mut reader, text_encoding, &context.limits)?;
            Some(Table {
                reader,
                header,
                encoding,
                record: Vec::new(),
            })
        }
        None => None,
    };
    let mut records = Records {
        layout: match shx {
            Some(shx) => Layout::Indexed(shx),
            None => Layout::Sequential { declared_bytes },
        },
        offset: 100,
        number: 0,
        content: Vec::new(),
        progress_pending: 100,
    };
    // A Z type may carry measures or not; like GDAL, the first record tells which.
    let mut first = Some(records.next(shp, context)?);
    let mut schema = schema(shape_type, table.as_ref().map(|t| &t.header), side, srid);
    if shape_type.has_z()
        && let Some(Some(Some(geometry))) = &first
    {
        schema.has_m = has_measure(geometry);
    }
    sink.begin(&Header::Features(schema))?;
    let mut feature = Feature {
        geometry: None,
        values: Vec::new(),
    };
    loop {
        let next = match first.take() {
            Some(first) => first,
            None => records.next(shp, context)?,
        };
        let Some(geometry) = next else {
            break;
        };
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

/// True when any coordinate of `geometry` has a measure.
fn has_measure(geometry: &Geometry) -> bool {
    let any = |coords: &[crate::model::Coord]| coords.iter().any(|coord| coord.m.is_some());
    match geometry {
        Geometry::Point(coord) => coord.m.is_some(),
        Geometry::MultiPoint(coords) | Geometry::LineString(coords) => any(coords),
        Geometry::MultiLineString(lines) | Geometry::Polygon(lines) => {
            lines.iter().any(|line| any(line))
        }
        Geometry::MultiPolygon(polygons) => polygons.iter().flatten().any(|line| any(line)),
        Geometry::GeometryCollection(parts) => parts.iter().any(has_measure),
    }
}

/// The attribute stream.
struct Table<R> {
    reader: R,
    header: DbfHeader,
    encoding: TextEncoding,
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

/// How records are found.
enum Layout<R> {
    /// One after another, each delimited by its content length, up to the length the header
    /// declares (or the end of the stream).
    Sequential { declared_bytes: u64 },
    /// Where the `.shx` entries place them.
    Indexed(Shx<R>),
}

/// The geometry stream.
struct Records<R> {
    layout: Layout<R>,
    offset: u64,
    number: u64,
    content: Vec<u8>,
    progress_pending: u64,
}

impl<R: Read> Records<R> {
    /// The next record's geometry; `None` at the end of the file.
    fn next(
        &mut self,
        shp: &mut dyn ShpInput,
        context: &ReadContext<'_>,
    ) -> FormatResult<Option<Option<Geometry>>> {
        match &mut self.layout {
            Layout::Sequential { declared_bytes } => {
                let declared_bytes = *declared_bytes;
                self.next_sequential(shp, declared_bytes, context)
            }
            Layout::Indexed(_) => self.next_indexed(shp, context),
        }
    }

    fn next_indexed(
        &mut self,
        shp: &mut dyn ShpInput,
        context: &ReadContext<'_>,
    ) -> FormatResult<Option<Option<Geometry>>> {
        let Layout::Indexed(shx) = &mut self.layout else {
            return Ok(None);
        };
        if self.number >= shx.count {
            return Ok(None);
        }
        let (offset, bytes) = shx.entry(self.number + 1)?;
        self.offset = offset;
        check_record_size(bytes, context)?;
        self.content.clear();
        shp.go_to(offset)
            .and_then(|()| shp.take(bytes).read_to_end(&mut self.content))
            .map_err(|error| self.error(error.to_string()))?;
        self.number += 1;
        let got = self.content.len() as u64;
        self.progress_pending = self.progress_pending.saturating_add(got);
        // GDAL also accepts an entry whose length counts the 8-byte record header when the
        // record ends the file exactly (some writers got the specification wrong).
        let own_length = self
            .content
            .get(4..8)
            .and_then(|bytes| <[u8; 4]>::try_from(bytes).ok())
            .map(i32::from_be_bytes)
            .and_then(|words| u64::try_from(words).ok());
        let whole = got == bytes
            || (got >= 8 && got + 8 == bytes && own_length.map(|w| w * 2 + 8) == Some(got));
        if !whole {
            return Ok(Some(None));
        }
        let place = RecordPlace {
            number: self.number,
            offset,
        };
        let content = self.content.get(8..).unwrap_or_default();
        match shape::decode(content, &context.limits, place) {
            Ok(geometry) => Ok(Some(geometry)),
            // A record GDAL cannot decode is a null geometry there too.
            Err(FormatError::InvalidInput { .. }) => Ok(Some(None)),
            Err(other) => Err(other),
        }
    }

    fn next_sequential(
        &mut self,
        shp: &mut dyn ShpInput,
        declared_bytes: u64,
        context: &ReadContext<'_>,
    ) -> FormatResult<Option<Option<Geometry>>> {
        if declared_bytes >= 100 && self.offset >= declared_bytes {
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
        check_record_size(bytes, context)?;
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
        let geometry = shape::decode(&self.content, &context.limits, place)?;
        self.offset = self.offset.saturating_add(8 + bytes);
        self.progress_pending = self.progress_pending.saturating_add(8 + bytes);
        Ok(Some(geometry))
    }

    fn error(&self, message: impl Into<String>) -> FormatError {
        let hint = match self.layout {
            Layout::Sequential { .. } => " (no .shx to find the records by)",
            Layout::Indexed(_) => "",
        };
        FormatError::invalid(
            FORMAT,
            format!("record {} (byte {})", self.number + 1, self.offset),
            format!("{}{hint}", message.into()),
        )
    }
}

/// A record may hold no more than the vertex limit allows (16 bytes a vertex plus a little).
fn check_record_size(bytes: u64, context: &ReadContext<'_>) -> FormatResult<()> {
    crate::limits::check_limit(
        "bytes of one .shp record / 16",
        bytes / 16,
        context.limits.vertices_per_geometry_max.saturating_add(16),
    )
}

/// Reads until `buffer` is full or the stream ends; returns the bytes read.
fn read_up_to(reader: &mut dyn ShpInput, buffer: &mut [u8]) -> std::io::Result<usize> {
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

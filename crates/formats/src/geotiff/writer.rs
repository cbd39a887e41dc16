//! Writing a grid as a tiled GeoTIFF: 256 x 256 tiles, one band per item (and per time step
//! and layer), bands stored apart (`PlanarConfiguration` 2) so that each band can be written
//! as it arrives, deflate-compressed by the [`super::pipeline`].
//!
//! The file is laid out as header, tiles, then the IFD with its arrays at the end, so nothing
//! has to be known before the tiles are written. The first 16 bytes are reserved; once the
//! tiles are written the size is known exactly, and the header becomes classic TIFF when
//! everything fits below 4 GiB (the 8 unused bytes stay zero) or BigTIFF otherwise. That
//! decides exactly, where GDAL's `BIGTIFF=IF_SAFER` has to guess from the uncompressed size.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::decode::Predictor;
use super::geokeys::{self, BandText, CrsKeys, KeyedCrs};
use super::pipeline::{Output, Pipeline, TileFormat};
use super::{FORMAT, TILE_SIDE, tag};
use crate::catalogue::{WriterSink, Written};
use crate::crs::{self, Crs};
use crate::error::{FormatError, FormatResult};
use crate::model::{
    DataType, DatasetSink, Frame, GeoTransform, GridHeader, Header, Item, TimeAxis, Values,
};
use crate::text::shorten;

/// Most bands of a GeoTIFF: `SamplesPerPixel` is a 16-bit field (GDAL has the same limit).
pub(crate) const BANDS_MAX: usize = 65_535;

/// Bytes reserved for the header: a BigTIFF header; a classic one uses the first 8.
const HEADER_BYTES: u64 = 16;

/// Bytes of the output buffer between the writer thread and the file.
const WRITE_BUFFER_BYTES: usize = 1024 * 1024;

/// Deflate level when `ZLevel` is not given: zlib's and GDAL's default. With the zlib-rs
/// backend of flate2 it costs little more than level 1: on a 10,000 x 10,000 Float32 terrain,
/// 183 MB (GDAL's file: 179 MB) against 266 MB at level 1, for 1 s more; level 9 takes
/// 4 s more for 2 % less (docs/formats.md, GeoTIFF).
pub(crate) const LEVEL_DEFAULT: u32 = 6;

/// When to write BigTIFF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BigTiff {
    /// Only when the file does not fit in classic TIFF's 4 GiB.
    IfNeeded,
    /// Always.
    Yes,
    /// Never; a larger file is an error.
    No,
}

/// The writer's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WriteOptions {
    /// Deflate (true) or no compression.
    pub deflate: bool,
    /// Deflate level 1-9, or [`LEVEL_DEFAULT`].
    pub level: Option<u32>,
    /// Predictor before compression.
    pub predictor: Predictor,
    /// Classic TIFF or BigTIFF.
    pub big_tiff: BigTiff,
}

/// True when the file must be BigTIFF: `classic_end` is where a classic file would end
/// (`None` when that overflows).
pub(crate) fn use_big_tiff(choice: BigTiff, classic_end: Option<u64>) -> FormatResult<bool> {
    let fits = classic_end.is_some_and(|end| end <= u64::from(u32::MAX));
    match choice {
        BigTiff::Yes => Ok(true),
        BigTiff::IfNeeded => Ok(!fits),
        BigTiff::No if fits => Ok(false),
        BigTiff::No => Err(FormatError::Incompatible {
            data: "grid",
            format: FORMAT,
            message: "the file exceeds 4 GiB, the limit of classic TIFF; allow BigTIFF (BigTiff=IF_NEEDED)".to_owned(),
        }),
    }
}

/// Receives a grid and writes the GeoTIFF.
pub(crate) struct GeoTiffSink {
    output: PathBuf,
    options: WriteOptions,
    writing: Option<Box<Writing>>,
    notes: Vec<String>,
    finished: bool,
}

impl GeoTiffSink {
    pub(crate) fn new(output: &Path, options: WriteOptions) -> Self {
        Self {
            output: output.to_owned(),
            options,
            writing: None,
            notes: Vec::new(),
            finished: false,
        }
    }
}

/// Everything about the output that the header fixes.
struct Plan {
    columns: usize,
    rows: usize,
    /// Values of one item at one step (columns x rows x layers).
    item_cells: usize,
    items: usize,
    bands: usize,
    data_type: DataType,
    predictor: Predictor,
    level: Option<u32>,
    nodata: Option<f64>,
    transform: GeoTransform,
    crs: Option<CrsKeys>,
    texts: Vec<BandText>,
}

impl Plan {
    fn tiles_down(&self) -> usize {
        self.rows.div_ceil(TILE_SIDE)
    }

    /// Rows of tile row `tile_row`.
    fn rows_in(&self, tile_row: usize) -> usize {
        self.rows
            .saturating_sub(tile_row.saturating_mul(TILE_SIDE))
            .min(TILE_SIDE)
    }
}

/// The state while values arrive.
struct Writing {
    plan: Plan,
    pipeline: Pipeline,
    /// The tile row being filled, little-endian values.
    buffer: Vec<u8>,
    band: usize,
    tile_row: usize,
    /// Where the next frame must start.
    step: usize,
    item: usize,
    offset: usize,
}

impl DatasetSink for GeoTiffSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::Grid(grid) = header else {
            return Err(FormatError::Incompatible {
                data: header.kind().name(),
                format: FORMAT,
                message: "a GeoTIFF holds a grid".to_owned(),
            });
        };
        let plan = plan(grid, &self.options, &mut self.notes)?;
        let file = File::create(&self.output)
            .map_err(|source| FormatError::write(&self.output, source))?;
        let mut file = BufWriter::with_capacity(WRITE_BUFFER_BYTES, file);
        file.write_all(&[0; HEADER_BYTES as usize])
            .map_err(|source| FormatError::write(&self.output, source))?;
        let format = TileFormat {
            columns: plan.columns,
            value_bytes: plan.data_type.size_bytes(),
            level: plan.level,
            predictor: plan.predictor,
        };
        let mut pipeline = Pipeline::start(file, HEADER_BYTES, format, self.output.clone());
        let buffer = pipeline.buffer()?;
        self.writing = Some(Box::new(Writing {
            plan,
            pipeline,
            buffer,
            band: 0,
            tile_row: 0,
            step: 0,
            item: 0,
            offset: 0,
        }));
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some(writing) = self.writing.as_deref_mut() else {
            return Err(FormatError::Catalogue(
                "values arrived before the header".to_owned(),
            ));
        };
        writing.accept(&frame)
    }

    fn end(&mut self) -> FormatResult<()> {
        let Some(writing) = self.writing.take() else {
            return Err(FormatError::Catalogue(
                "the grid ended before it began".to_owned(),
            ));
        };
        let Writing {
            plan,
            pipeline,
            band,
            ..
        } = *writing;
        if band < plan.bands {
            return Err(FormatError::Catalogue(format!(
                "the grid ended after {band} of {} bands",
                plan.bands
            )));
        }
        let output = pipeline.finish()?;
        write_directory(output, &plan, self.options.big_tiff, &self.output)?;
        self.finished = true;
        Ok(())
    }
}

impl WriterSink for GeoTiffSink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.finished {
            return Err(FormatError::Catalogue(
                "the GeoTIFF was not completed".to_owned(),
            ));
        }
        Ok(Written {
            files: vec![self.output],
            notes: self.notes,
            summary: None,
        })
    }
}

impl Writing {
    /// Checks the frame's place in the call order and appends its values to tile rows.
    fn accept(&mut self, frame: &Frame<'_>) -> FormatResult<()> {
        if (frame.step, frame.item, frame.offset) != (self.step, self.item, self.offset) {
            return Err(FormatError::Catalogue(format!(
                "frames out of order: step {} item {} offset {} arrived where step {} item {} offset {} was due",
                frame.step, frame.item, frame.offset, self.step, self.item, self.offset
            )));
        }
        let length = frame.values.len();
        if length > self.plan.item_cells.saturating_sub(self.offset) {
            return Err(FormatError::Catalogue(format!(
                "item {} at step {} has more than {} values",
                frame.item, frame.step, self.plan.item_cells
            )));
        }
        let value_bytes = self.plan.data_type.size_bytes();
        let mut start = 0;
        while start < length {
            let rows = self.plan.rows_in(self.tile_row);
            let row_cells = rows.saturating_mul(self.plan.columns);
            let buffered = self.buffer.len() / value_bytes;
            if buffered == 0 {
                self.buffer.reserve(row_cells.saturating_mul(value_bytes));
            }
            let count = row_cells.saturating_sub(buffered).min(length - start);
            if !encode(
                frame.values,
                start,
                count,
                self.plan.data_type,
                &mut self.buffer,
            ) {
                return Err(FormatError::Catalogue(
                    "a frame's values do not match the item's type".to_owned(),
                ));
            }
            start += count;
            if buffered + count == row_cells {
                self.submit_tile_row(rows)?;
            }
        }
        self.offset += length;
        if self.offset == self.plan.item_cells {
            self.offset = 0;
            self.item += 1;
            if self.item == self.plan.items {
                self.item = 0;
                self.step += 1;
            }
        }
        Ok(())
    }

    fn submit_tile_row(&mut self, rows: usize) -> FormatResult<()> {
        let next = self.pipeline.buffer()?;
        let full = std::mem::replace(&mut self.buffer, next);
        self.pipeline.submit(rows, full)?;
        self.tile_row += 1;
        if self.tile_row == self.plan.tiles_down() {
            self.tile_row = 0;
            self.band += 1;
        }
        Ok(())
    }
}

/// Appends `count` values of `values` from `start` as little-endian `target` values. Types
/// other than `target` are converted exactly (the plan's type holds every item's type).
fn encode(
    values: &Values,
    start: usize,
    count: usize,
    target: DataType,
    out: &mut Vec<u8>,
) -> bool {
    macro_rules! same {
        ($values:expr) => {{
            let Some(part) = $values.get(start..start.saturating_add(count)) else {
                return false;
            };
            out.reserve(part.len() * target.size_bytes());
            for value in part {
                out.extend_from_slice(&value.to_le_bytes());
            }
            true
        }};
    }
    match (values, target) {
        (Values::U8(v), DataType::U8) => same!(v),
        (Values::I16(v), DataType::I16) => same!(v),
        (Values::U16(v), DataType::U16) => same!(v),
        (Values::I32(v), DataType::I32) => same!(v),
        (Values::U32(v), DataType::U32) => same!(v),
        (Values::F32(v), DataType::F32) => same!(v),
        (Values::F64(v), DataType::F64) => same!(v),
        _ => {
            for index in start..start.saturating_add(count) {
                let Some(value) = values.get_f64(index) else {
                    return false;
                };
                match target {
                    DataType::U8 => out.push(value as u8),
                    DataType::I16 => out.extend_from_slice(&(value as i16).to_le_bytes()),
                    DataType::U16 => out.extend_from_slice(&(value as u16).to_le_bytes()),
                    DataType::I32 => out.extend_from_slice(&(value as i32).to_le_bytes()),
                    DataType::U32 => out.extend_from_slice(&(value as u32).to_le_bytes()),
                    DataType::F32 => out.extend_from_slice(&(value as f32).to_le_bytes()),
                    DataType::F64 => out.extend_from_slice(&value.to_le_bytes()),
                }
            }
            true
        }
    }
}

fn incompatible(message: impl Into<String>) -> FormatError {
    FormatError::Incompatible {
        data: "grid",
        format: FORMAT,
        message: message.into(),
    }
}

/// Checks the header against what a GeoTIFF can hold and fixes the output.
fn plan(grid: &GridHeader, options: &WriteOptions, notes: &mut Vec<String>) -> FormatResult<Plan> {
    let geometry = &grid.geometry;
    let (columns, rows) = (geometry.columns, geometry.rows);
    if columns == 0 || rows == 0 || u32::try_from(columns).is_err() || u32::try_from(rows).is_err()
    {
        return Err(incompatible(format!(
            "{columns} x {rows} cells; a TIFF needs 1 to 4,294,967,295 columns and rows"
        )));
    }
    if grid.items.is_empty() {
        return Err(incompatible("the grid has no items"));
    }
    let steps = grid.time.steps();
    let layers = geometry.layers();
    let bands = steps
        .checked_mul(grid.items.len())
        .and_then(|bands| bands.checked_mul(layers))
        .filter(|bands| (1..=BANDS_MAX).contains(bands))
        .ok_or_else(|| {
            incompatible(format!(
                "{steps} steps x {} items x {layers} layers: a GeoTIFF holds 1 to {BANDS_MAX} bands",
                grid.items.len()
            ))
        })?;
    let item_cells = geometry
        .cells()
        .ok_or_else(|| incompatible("the grid's cell count overflows"))?;
    let data_type = common_type(&grid.items);
    if grid.items.iter().any(|item| item.data_type != data_type) {
        notes.push(format!(
            "GeoTIFF bands share one type: all bands written as {} (values converted exactly)",
            data_type.gdal_name()
        ));
    }
    if options.predictor == Predictor::FloatingPoint && !data_type.is_float() {
        return Err(FormatError::parameter(
            "Predictor",
            format!(
                "3 (floating point) needs float bands, these are {}",
                data_type.gdal_name()
            ),
        ));
    }
    let transform = geometry.transform;
    if !transform.to_gdal().iter().all(|value| value.is_finite()) {
        return Err(incompatible(
            "the geotransform holds a number that is not finite",
        ));
    }
    let level = options
        .deflate
        .then(|| options.level.unwrap_or(LEVEL_DEFAULT));
    Ok(Plan {
        columns,
        rows,
        item_cells,
        items: grid.items.len(),
        bands,
        data_type,
        // libtiff applies a predictor only inside a codec; uncompressed tiles get none.
        predictor: if options.deflate {
            options.predictor
        } else {
            Predictor::None
        },
        level,
        nodata: common_nodata(&grid.items, notes),
        transform,
        crs: keyed_crs(geometry.crs.as_ref(), notes),
        texts: band_texts(&grid.items, &grid.time, layers),
    })
}

/// The smallest type that holds every item's values exactly.
pub(crate) fn common_type(items: &[Item]) -> DataType {
    let types: Vec<DataType> = items.iter().map(|item| item.data_type).collect();
    let Some(&first) = types.first() else {
        return DataType::F64;
    };
    if types.iter().all(|&data_type| data_type == first) {
        return first;
    }
    if types.iter().any(|data_type| data_type.is_float()) {
        let narrow = types.iter().all(|data_type| {
            matches!(
                data_type,
                DataType::U8 | DataType::I16 | DataType::U16 | DataType::F32
            )
        });
        return if narrow { DataType::F32 } else { DataType::F64 };
    }
    let range = |data_type: DataType| -> (i64, i64) {
        match data_type {
            DataType::U8 => (0, 255),
            DataType::I16 => (-32_768, 32_767),
            DataType::U16 => (0, 65_535),
            DataType::I32 => (-2_147_483_648, 2_147_483_647),
            DataType::U32 => (0, 4_294_967_295),
            DataType::F32 | DataType::F64 => (i64::MIN, i64::MAX),
        }
    };
    let low = types.iter().map(|&t| range(t).0).min().unwrap_or(0);
    let high = types.iter().map(|&t| range(t).1).max().unwrap_or(0);
    [
        DataType::U8,
        DataType::I16,
        DataType::U16,
        DataType::I32,
        DataType::U32,
    ]
    .into_iter()
    .find(|&candidate| {
        let (min, max) = range(candidate);
        min <= low && high <= max
    })
    .unwrap_or(DataType::F64)
}

/// GDAL_NODATA holds one value for all bands: the first item's; a note when others differ.
fn common_nodata(items: &[Item], notes: &mut Vec<String>) -> Option<f64> {
    let nodata = items.iter().find_map(|item| item.nodata);
    let same = |value: Option<f64>| match (value, nodata) {
        (Some(a), Some(b)) => a == b || (a.is_nan() && b.is_nan()),
        (None, None) => true,
        _ => false,
    };
    let differing: Vec<&str> = items
        .iter()
        .filter(|item| !same(item.nodata))
        .map(|item| item.name.as_str())
        .collect();
    if let Some(value) = nodata
        && !differing.is_empty()
    {
        notes.push(format!(
            "a GeoTIFF has one nodata value for all bands: {} written, so items {} lose their own",
            geokeys::format_nodata(value),
            differing.join(", ")
        ));
    }
    nodata
}

/// The EPSG code to write in GeoKeys, else the parameters of a WKT without one (as GDAL writes
/// a system without a code); a note when neither can be written.
fn keyed_crs(crs: Option<&Crs>, notes: &mut Vec<String>) -> Option<CrsKeys> {
    let crs = crs?;
    let definition = crs::resolve_epsg(crs).and_then(crs::definition);
    let keyed = definition.and_then(|definition| {
        let code = u16::try_from(definition.code)
            .ok()
            .filter(|&code| code != 32767)?;
        let proj4 = definition.proj4;
        if proj4.contains("+proj=geocent") {
            return None;
        }
        Some(CrsKeys::Code(KeyedCrs {
            code,
            geographic: proj4.contains("+proj=longlat") || proj4.contains("+proj=latlong"),
            name: definition.name.to_owned(),
        }))
    });
    let keyed = keyed.or_else(|| {
        let described = super::user_crs::describe(&crs::wkt_of(crs)?)?;
        Some(CrsKeys::Described(described))
    });
    let keyed = keyed.or_else(|| {
        let wkt = crs::wkt_of(crs).filter(|wkt| storable_as_citation(wkt))?;
        notes.push(
            "the coordinate system has no EPSG code and GeoKeys have no parameters for its projection; it is stored whole as an ESRI PE String citation, as GDAL stores such systems".to_owned(),
        );
        Some(CrsKeys::PeString(wkt.trim().to_owned()))
    });
    if keyed.is_none() {
        let description = shorten(&format!("{crs:?}"));
        notes.push(format!(
            "the coordinate system {description} has no projected or geographic EPSG code in the registry, and its parameters are not ones Basin can state in GeoKeys; the GeoTIFF was written without one"
        ));
    }
    keyed
}

/// True when `wkt` can be an "ESRI PE String" citation: a WKT 1 projected or geographic
/// system in printable ASCII without the `|` that ends GeoAsciiParams texts, short enough for
/// a key's 16-bit length.
fn storable_as_citation(wkt: &str) -> bool {
    let wkt = wkt.trim();
    (wkt.starts_with("PROJCS[") || wkt.starts_with("GEOGCS["))
        && wkt.len() < 60_000
        && wkt
            .bytes()
            .all(|byte| (b' '..=b'~').contains(&byte) && byte != b'|')
}

/// Band names: the item's, with the time (`@ 2024-01-01T00:00:00`, or seconds) when there are
/// several steps and `layer <n>` when there are several layers. Names equal to GDAL's
/// default `Band <n>` are not written.
fn band_texts(items: &[Item], time: &TimeAxis, layers: usize) -> Vec<BandText> {
    let steps = time.steps();
    let mut texts = Vec::new();
    for step in 0..steps {
        for item in items {
            for layer in 0..layers {
                let mut name = item.name.clone();
                if steps > 1 {
                    let when = match (time.time(step), time.offset_seconds(step)) {
                        (Some(time), _) => time.format("%Y-%m-%dT%H:%M:%S").to_string(),
                        (None, Some(seconds)) => format!("{seconds} s"),
                        (None, None) => format!("step {}", step + 1),
                    };
                    name = format!("{name} @ {when}");
                }
                if layers > 1 {
                    name = format!("{name} layer {}", layer + 1);
                }
                let default = format!("Band {}", texts.len() + 1);
                texts.push(BandText {
                    description: (name != default).then_some(name),
                    unit: Some(item.quantity.unit.clone()).filter(|unit| !unit.is_empty()),
                });
            }
        }
    }
    texts
}

/// One IFD entry to write: values already little-endian.
struct Field {
    tag: u16,
    field_type: u16,
    count: u64,
    data: Vec<u8>,
}

mod field_type {
    pub const ASCII: u16 = 2;
    pub const SHORT: u16 = 3;
    pub const LONG: u16 = 4;
    pub const DOUBLE: u16 = 12;
    pub const LONG8: u16 = 16;
}

fn shorts(tag: u16, values: &[u16]) -> Field {
    Field {
        tag,
        field_type: field_type::SHORT,
        count: values.len() as u64,
        data: values
            .iter()
            .flat_map(|value| value.to_le_bytes())
            .collect(),
    }
}

fn long(tag: u16, value: u32) -> Field {
    Field {
        tag,
        field_type: field_type::LONG,
        count: 1,
        data: value.to_le_bytes().to_vec(),
    }
}

fn doubles(tag: u16, values: &[f64]) -> Field {
    Field {
        tag,
        field_type: field_type::DOUBLE,
        count: values.len() as u64,
        data: values
            .iter()
            .flat_map(|value| value.to_le_bytes())
            .collect(),
    }
}

fn ascii(tag: u16, text: &str) -> Field {
    let mut data = text.as_bytes().to_vec();
    data.push(0);
    Field {
        tag,
        field_type: field_type::ASCII,
        count: data.len() as u64,
        data,
    }
}

/// Offsets or byte counts: LONG in classic TIFF (the caller checked that they fit), LONG8 in
/// BigTIFF.
fn offsets(tag: u16, values: &[u64], big: bool) -> Field {
    let data = if big {
        values
            .iter()
            .flat_map(|value| value.to_le_bytes())
            .collect()
    } else {
        values
            .iter()
            .flat_map(|&value| u32::try_from(value).unwrap_or(u32::MAX).to_le_bytes())
            .collect()
    };
    Field {
        tag,
        field_type: if big {
            field_type::LONG8
        } else {
            field_type::LONG
        },
        count: values.len() as u64,
        data,
    }
}

/// Every tag of the image.
fn fields(plan: &Plan, output: &Output, big: bool) -> Vec<Field> {
    let bands = u16::try_from(plan.bands).unwrap_or(u16::MAX);
    let bits = u16::try_from(plan.data_type.size_bytes() * 8).unwrap_or(8);
    let sample_format = match plan.data_type {
        DataType::U8 | DataType::U16 | DataType::U32 => 1,
        DataType::I16 | DataType::I32 => 2,
        DataType::F32 | DataType::F64 => 3,
    };
    let band_count = usize::from(bands);
    let tile = u16::try_from(TILE_SIDE).unwrap_or(256);
    let mut fields = vec![
        long(
            tag::IMAGE_WIDTH,
            u32::try_from(plan.columns).unwrap_or(u32::MAX),
        ),
        long(
            tag::IMAGE_LENGTH,
            u32::try_from(plan.rows).unwrap_or(u32::MAX),
        ),
        shorts(tag::BITS_PER_SAMPLE, &vec![bits; band_count]),
        shorts(
            tag::COMPRESSION,
            &[if plan.level.is_some() { 8 } else { 1 }],
        ),
        shorts(tag::PHOTOMETRIC, &[1]),
        shorts(tag::SAMPLES_PER_PIXEL, &[bands]),
        shorts(tag::PLANAR_CONFIGURATION, &[if bands > 1 { 2 } else { 1 }]),
        shorts(tag::TILE_WIDTH, &[tile]),
        shorts(tag::TILE_LENGTH, &[tile]),
        offsets(tag::TILE_OFFSETS, &output.offsets, big),
        offsets(tag::TILE_BYTE_COUNTS, &output.sizes, big),
        shorts(tag::SAMPLE_FORMAT, &vec![sample_format; band_count]),
    ];
    if plan.predictor != Predictor::None && plan.level.is_some() {
        fields.push(shorts(tag::PREDICTOR, &[plan.predictor.code()]));
    }
    if bands > 1 {
        fields.push(shorts(tag::EXTRA_SAMPLES, &vec![0; band_count - 1]));
    }
    fields.extend(model_fields(&plan.transform));
    // Without a CRS no GeoKeys at all, as GDAL writes it: a directory holding only the
    // raster type reads in GDAL as an unnamed engineering CRS.
    if plan.crs.is_some() {
        let keys = geokeys::geokey_tags(plan.crs.as_ref());
        fields.push(shorts(tag::GEO_KEY_DIRECTORY, &keys.directory));
        if !keys.doubles.is_empty() {
            fields.push(doubles(tag::GEO_DOUBLE_PARAMS, &keys.doubles));
        }
        if !keys.ascii.is_empty() {
            fields.push(ascii(tag::GEO_ASCII_PARAMS, &keys.ascii));
        }
    }
    if let Some(xml) = geokeys::band_text_xml(&plan.texts) {
        fields.push(ascii(tag::GDAL_METADATA, &xml));
    }
    if let Some(nodata) = plan.nodata {
        fields.push(ascii(tag::GDAL_NODATA, &geokeys::format_nodata(nodata)));
    }
    fields
}

/// Pixel scale and tie point for a north-up grid, as GDAL writes them; the full
/// transformation matrix otherwise; nothing for GDAL's default transform.
fn model_fields(transform: &GeoTransform) -> Vec<Field> {
    if *transform == geokeys::default_transform() {
        return Vec::new();
    }
    let GeoTransform {
        origin_x,
        pixel_width,
        row_rotation,
        origin_y,
        column_rotation,
        pixel_height,
    } = *transform;
    if row_rotation == 0.0 && column_rotation == 0.0 && pixel_height < 0.0 && pixel_width > 0.0 {
        return vec![
            doubles(tag::MODEL_PIXEL_SCALE, &[pixel_width, -pixel_height, 0.0]),
            doubles(
                tag::MODEL_TIEPOINT,
                &[0.0, 0.0, 0.0, origin_x, origin_y, 0.0],
            ),
        ];
    }
    vec![doubles(
        tag::MODEL_TRANSFORMATION,
        &[
            pixel_width,
            row_rotation,
            0.0,
            origin_x,
            column_rotation,
            pixel_height,
            0.0,
            origin_y,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0,
        ],
    )]
}

/// Lays out an IFD at `at`: the entry table, then the values that do not fit in an entry.
fn encode_ifd(mut fields: Vec<Field>, at: u64, big: bool) -> FormatResult<Vec<u8>> {
    fields.sort_by_key(|field| field.tag);
    let count = fields.len();
    let (entry_bytes, inline_bytes, frame_bytes) = if big { (20, 8, 16) } else { (12, 4, 6) };
    let table_bytes = frame_bytes + count * entry_bytes;
    let mut table = Vec::with_capacity(table_bytes);
    let mut values: Vec<u8> = Vec::new();
    if big {
        table.extend_from_slice(&(count as u64).to_le_bytes());
    } else {
        table.extend_from_slice(&u16::try_from(count).unwrap_or(u16::MAX).to_le_bytes());
    }
    for field in &fields {
        table.extend_from_slice(&field.tag.to_le_bytes());
        table.extend_from_slice(&field.field_type.to_le_bytes());
        let mut value_field = [0u8; 8];
        if field.data.len() <= inline_bytes {
            if let Some(slot) = value_field.get_mut(..field.data.len()) {
                slot.copy_from_slice(&field.data);
            }
        } else {
            values.resize(values.len().next_multiple_of(8), 0);
            let offset = at
                .checked_add((table_bytes + values.len()) as u64)
                .ok_or_else(|| incompatible("the file is too large"))?;
            value_field = offset.to_le_bytes();
            values.extend_from_slice(&field.data);
        }
        if big {
            table.extend_from_slice(&field.count.to_le_bytes());
            table.extend_from_slice(&value_field);
        } else {
            let count = u32::try_from(field.count).map_err(|_| incompatible("too many tiles"))?;
            table.extend_from_slice(&count.to_le_bytes());
            table.extend_from_slice(value_field.get(..4).unwrap_or_default());
        }
    }
    table.extend_from_slice([0; 8].get(..inline_bytes).unwrap_or_default());
    table.extend_from_slice(&values);
    Ok(table)
}

/// Writes the IFD after the tiles and the header in front.
fn write_directory(output: Output, plan: &Plan, choice: BigTiff, path: &Path) -> FormatResult<()> {
    let at = output.end.next_multiple_of(8);
    let classic = if at <= u64::from(u32::MAX) {
        Some(encode_ifd(fields(plan, &output, false), at, false)?)
    } else {
        None
    };
    let classic_end = classic
        .as_ref()
        .map(|bytes| at.saturating_add(bytes.len() as u64));
    let big = use_big_tiff(choice, classic_end)?;
    let ifd = match classic {
        Some(bytes) if !big => bytes,
        _ => encode_ifd(fields(plan, &output, true), at, true)?,
    };
    let mut header = Vec::with_capacity(HEADER_BYTES as usize);
    header.extend_from_slice(b"II");
    if big {
        header.extend_from_slice(&43u16.to_le_bytes());
        header.extend_from_slice(&8u16.to_le_bytes());
        header.extend_from_slice(&0u16.to_le_bytes());
        header.extend_from_slice(&at.to_le_bytes());
    } else {
        header.extend_from_slice(&42u16.to_le_bytes());
        let at = u32::try_from(at).map_err(|_| incompatible("the file is too large"))?;
        header.extend_from_slice(&at.to_le_bytes());
    }
    let padding = usize::try_from(at - output.end).unwrap_or(0);
    let mut file = output.file;
    file.write_all([0u8; 8].get(..padding).unwrap_or_default())
        .and_then(|()| file.write_all(&ifd))
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| file.write_all(&header))
        .and_then(|()| file.flush())
        .map_err(|source| FormatError::write(path, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_tiff_is_chosen_exactly_at_the_classic_limit() {
        let limit = u64::from(u32::MAX);
        assert!(!use_big_tiff(BigTiff::IfNeeded, Some(limit)).unwrap());
        assert!(use_big_tiff(BigTiff::IfNeeded, Some(limit + 1)).unwrap());
        assert!(use_big_tiff(BigTiff::IfNeeded, None).unwrap());
        assert!(use_big_tiff(BigTiff::Yes, Some(100)).unwrap());
        assert!(!use_big_tiff(BigTiff::No, Some(limit)).unwrap());
        assert!(use_big_tiff(BigTiff::No, Some(limit + 1)).is_err());
        assert!(use_big_tiff(BigTiff::No, None).is_err());
    }

    #[test]
    fn mixed_item_types_share_the_smallest_exact_type() {
        let items = |types: &[DataType]| -> Vec<Item> {
            types.iter().map(|&t| Item::new("x", t)).collect()
        };
        assert_eq!(
            common_type(&items(&[DataType::U8, DataType::U8])),
            DataType::U8
        );
        assert_eq!(
            common_type(&items(&[DataType::U8, DataType::I16])),
            DataType::I16
        );
        assert_eq!(
            common_type(&items(&[DataType::U8, DataType::U16])),
            DataType::U16
        );
        assert_eq!(
            common_type(&items(&[DataType::I16, DataType::U16])),
            DataType::I32
        );
        assert_eq!(
            common_type(&items(&[DataType::I16, DataType::U32])),
            DataType::F64
        );
        assert_eq!(
            common_type(&items(&[DataType::U16, DataType::F32])),
            DataType::F32
        );
        assert_eq!(
            common_type(&items(&[DataType::I32, DataType::F32])),
            DataType::F64
        );
    }

    #[test]
    fn long_values_go_after_the_entry_table() {
        let ifd = encode_ifd(
            vec![long(257, 7), doubles(33550, &[1.0, 2.0, 0.0]), long(256, 5)],
            8,
            false,
        )
        .unwrap();
        // count, three entries sorted by tag, next-IFD offset, then 24 bytes of doubles.
        assert_eq!(ifd.len(), 2 + 3 * 12 + 4 + 24);
        assert_eq!(&ifd[2..4], &256u16.to_le_bytes());
        let offset = u32::from_le_bytes(ifd[2 + 2 * 12 + 8..2 + 2 * 12 + 12].try_into().unwrap());
        assert_eq!(offset as usize, 8 + 2 + 3 * 12 + 4);
    }
}

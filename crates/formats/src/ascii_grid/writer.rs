//! Writing an ASCII Grid: the header as GDAL writes it (`xllcorner`/`yllcorner`, `cellsize`
//! or `dx`/`dy`, `NODATA_value`), the values row by row as frames arrive, and a `.prj`.
//!
//! Values are written in their shortest round-trip form (`itoa` for integers, `ryu` for
//! floats, a Float32 item in float32's shortest form; its nodata value spelled at the ends of
//! float32's range so that GDAL keeps the grid Float32: see [`float32_nodata_text`]), so that
//! GDAL and this reader read back exactly the values written. Cells equal to the nodata value are written as the header's
//! `NODATA_value` text, as ArcGIS does, and each row starts with a space, as GDAL writes it.
//!
//! A grid stored bottom row first (a positive cell height, "south-up") is written top row
//! first, as gdal_translate does: the rows' text goes to an anonymous temporary file beside the
//! output and is copied to the output in reverse row order at the end, so memory stays bounded
//! (one offset per row) and no value is resampled. The writer refuses, before writing
//! anything, what the format cannot hold: more than one item or time step (GDAL's AAIGrid
//! driver refuses more than one band too) and 3D grids. GDAL writes a rotated grid as if it
//! were north-up, dropping the rotation without a word; Basin refuses it and says to write
//! GeoTIFF (which keeps the rotation) or to ask for resampling (`RotatedGrids=nearest`, see
//! `resample.rs`), in which case the values are collected and written once resampled.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::FORMAT;
use super::resample::{self, RESAMPLE_CELLS_MAX};
use crate::catalogue::{WriterSink, Written};
use crate::error::{FormatError, FormatResult};
use crate::limits::check_limit;
use crate::model::{DataType, DatasetSink, Frame, GridGeometry, GridHeader, Header, Item, Values};

/// Bytes of text collected before they go to the file.
const FLUSH_BYTES: usize = 256 * 1024;

/// Receives one grid item and writes it as an ASCII Grid.
pub(crate) struct AsciiGridSink {
    output: PathBuf,
    /// Whether a rotated grid is resampled north-up (the `RotatedGrids=nearest` parameter)
    /// rather than refused.
    resample_rotated: bool,
    /// A rotated grid being collected for resampling.
    rotated: Option<Rotated>,
    open: Option<OpenGrid>,
    files: Vec<PathBuf>,
    notes: Vec<String>,
    finished: bool,
}

/// A rotated grid whose values are collected until they can be resampled north-up.
struct Rotated {
    source: GridHeader,
    target: GridGeometry,
    values: Values,
}

/// The output while values arrive.
struct OpenGrid {
    out: BufWriter<File>,
    columns: usize,
    cells: usize,
    /// Values written so far.
    written: usize,
    /// Column of the next value.
    column: usize,
    /// For Float32 items: cells equal to this are written as `nodata_text`.
    nodata_f32: Option<f32>,
    nodata_text: Vec<u8>,
    text: Vec<u8>,
    /// For a grid stored bottom row first: `out` is the temporary file of rows.
    flip: Option<Flip>,
}

/// The rows of a grid stored bottom row first, on their way to the output in reverse order.
struct Flip {
    /// The output, holding the header so far.
    output: File,
    /// Offset in the temporary file at which each row starts.
    row_starts: Vec<u64>,
    /// Bytes passed to the temporary file so far.
    spooled: u64,
}

impl AsciiGridSink {
    /// A sink writing to `output` (and a `.prj` beside it).
    pub(crate) fn new(output: &Path, resample_rotated: bool) -> Self {
        Self {
            output: output.to_owned(),
            resample_rotated,
            rotated: None,
            open: None,
            files: Vec::new(),
            notes: Vec::new(),
            finished: false,
        }
    }

    fn write_error(&self, source: std::io::Error) -> FormatError {
        FormatError::write(&self.output, source)
    }

    /// Checks a rotated grid and prepares to collect its values for resampling.
    fn begin_rotated(&mut self, grid: &GridHeader) -> FormatResult<()> {
        let (item, cells) = check_grid(grid, true)?;
        check_limit(
            "cells of a rotated grid to resample",
            cells as u64,
            RESAMPLE_CELLS_MAX,
        )?;
        let target = resample::north_up(&grid.geometry)?;
        self.rotated = Some(Rotated {
            source: grid.clone(),
            target,
            values: Values::with_capacity(item.data_type, 0),
        });
        Ok(())
    }

    /// Resamples the collected rotated grid north-up and writes it.
    fn end_rotated(&mut self, rotated: Rotated) -> FormatResult<()> {
        let Rotated {
            source,
            target,
            values,
        } = rotated;
        let cells = source.geometry.cells().unwrap_or_default();
        if values.len() != cells {
            return Err(FormatError::Catalogue(format!(
                "the grid ended after {} of its {cells} values",
                values.len()
            )));
        }
        let item = source.items.first();
        let fill = item.and_then(|item| item.nodata).unwrap_or(
            if item.is_some_and(|item| item.data_type.is_float()) {
                f64::NAN
            } else {
                0.0
            },
        );
        let resampled = resample::resample(&source.geometry, &target, &values, fill)?;
        self.notes.push(format!(
            "the grid is rotated; it was resampled north-up by nearest neighbour, as gdalwarp \
             does, to {} x {} cells of {}",
            target.columns, target.rows, target.transform.pixel_width
        ));
        let header = GridHeader {
            geometry: target,
            ..source
        };
        self.open_grid(&header)?;
        self.frame(Frame {
            step: 0,
            item: 0,
            offset: 0,
            values: &resampled,
        })
    }

    /// Writes the `.prj` for the grid's CRS, or notes why there is none.
    fn write_prj(&mut self, grid: &GridHeader) -> FormatResult<()> {
        let prj = self.output.with_extension("prj");
        let Some(crs) = &grid.geometry.crs else {
            if prj.exists() {
                self.notes.push(format!(
                    "{} was there before and is left as it was, but the grid has no coordinate system",
                    prj.display()
                ));
            }
            return Ok(());
        };
        let Some(wkt) = crate::crs::wkt_of(crs) else {
            self.notes
                .push(format!("no .prj written: no WKT is known for {crs:?}"));
            return Ok(());
        };
        std::fs::write(&prj, wkt).map_err(|source| FormatError::write(&prj, source))?;
        self.files.push(prj);
        Ok(())
    }
}

impl DatasetSink for AsciiGridSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::Grid(grid) = header else {
            return Err(incompatible(
                header.kind().name(),
                "an ASCII Grid holds a grid".to_owned(),
            ));
        };
        if self.resample_rotated && !grid.geometry.transform.is_north_up() {
            return self.begin_rotated(grid);
        }
        self.open_grid(grid)
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        if let Some(rotated) = self.rotated.as_mut() {
            let collected = rotated.values.len();
            if frame.step != 0 || frame.item != 0 || frame.offset != collected {
                return Err(FormatError::Catalogue(format!(
                    "frame out of order: step {}, item {}, offset {} after {collected} values",
                    frame.step, frame.item, frame.offset
                )));
            }
            let cells = rotated.source.geometry.cells().unwrap_or_default();
            if frame.values.len() > cells.saturating_sub(collected) {
                return Err(FormatError::Catalogue(format!(
                    "more values than the grid's {cells} cells"
                )));
            }
            if !rotated.values.extend_from(frame.values) {
                return Err(FormatError::Catalogue(
                    "values of another type than the item's".into(),
                ));
            }
            return Ok(());
        }
        self.write_frame(frame)
    }

    fn end(&mut self) -> FormatResult<()> {
        if let Some(rotated) = self.rotated.take() {
            self.end_rotated(rotated)?;
        }
        self.end_grid()
    }
}

impl AsciiGridSink {
    /// Opens the output of a north-up grid and writes its header.
    fn open_grid(&mut self, grid: &GridHeader) -> FormatResult<()> {
        let (item, cells) = check_grid(grid, false)?;
        let nodata_text = item
            .nodata
            .map(|nodata| nodata_text(nodata, item.data_type));
        let mut file = File::create(&self.output).map_err(|source| self.write_error(source))?;
        self.files.push(self.output.clone());
        let header = header_text(grid, nodata_text.as_deref());
        let flipped = grid.geometry.transform.pixel_height > 0.0;
        let (out, flip) = if flipped {
            file.write_all(header.as_bytes())
                .map_err(|source| self.write_error(source))?;
            let folder = match self.output.parent() {
                Some(folder) if !folder.as_os_str().is_empty() => folder,
                _ => Path::new("."),
            };
            let spool = tempfile::tempfile_in(folder).map_err(|source| self.write_error(source))?;
            let flip = Flip {
                output: file,
                row_starts: Vec::new(),
                spooled: 0,
            };
            (BufWriter::with_capacity(FLUSH_BYTES, spool), Some(flip))
        } else {
            let mut out = BufWriter::with_capacity(FLUSH_BYTES, file);
            out.write_all(header.as_bytes())
                .map_err(|source| self.write_error(source))?;
            (out, None)
        };
        if flipped {
            self.notes.push(
                "the grid's rows run south to north; they are written north to south, as an \
                 ASCII Grid stores them"
                    .to_owned(),
            );
        }
        self.write_prj(grid)?;
        let nodata_f32 = item
            .nodata
            .filter(|nodata| item.data_type == DataType::F32 && !nodata.is_nan())
            .map(|nodata| nodata as f32);
        self.open = Some(OpenGrid {
            out,
            columns: grid.geometry.columns,
            cells,
            written: 0,
            column: 0,
            nodata_f32,
            nodata_text: nodata_text.unwrap_or_default().into_bytes(),
            text: Vec::with_capacity(FLUSH_BYTES.saturating_add(64)),
            flip,
        });
        Ok(())
    }

    fn write_frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some(open) = self.open.as_mut() else {
            return Err(FormatError::Catalogue(
                "values arrived before the grid".into(),
            ));
        };
        if frame.step != 0 || frame.item != 0 || frame.offset != open.written {
            return Err(FormatError::Catalogue(format!(
                "frame out of order: step {}, item {}, offset {} after {} values",
                frame.step, frame.item, frame.offset, open.written
            )));
        }
        if frame.values.len() > open.cells.saturating_sub(open.written) {
            return Err(FormatError::Catalogue(format!(
                "more values than the grid's {} cells",
                open.cells
            )));
        }
        let result = open.write_values(frame.values);
        result.map_err(|source| FormatError::write(&self.output, source))
    }

    fn end_grid(&mut self) -> FormatResult<()> {
        let Some(mut open) = self.open.take() else {
            return Err(FormatError::Catalogue(
                "the grid ended before it began".into(),
            ));
        };
        if open.written != open.cells {
            return Err(FormatError::Catalogue(format!(
                "the grid ended after {} of its {} values",
                open.written, open.cells
            )));
        }
        let out = &mut open.out;
        out.write_all(&open.text)
            .and_then(|()| out.flush())
            .map_err(|source| self.write_error(source))?;
        if let Some(flip) = open.flip.take() {
            let spool = open
                .out
                .into_inner()
                .map_err(|error| self.write_error(error.into_error()))?;
            flip.write_reversed(spool)
                .map_err(|source| self.write_error(source))?;
        }
        self.finished = true;
        Ok(())
    }
}

impl WriterSink for AsciiGridSink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.finished {
            return Err(FormatError::Catalogue("the grid was not completed".into()));
        }
        Ok(Written {
            files: self.files,
            notes: self.notes,
            summary: None,
        })
    }
}

fn incompatible(data: &'static str, message: String) -> FormatError {
    FormatError::Incompatible {
        data,
        format: FORMAT,
        message,
    }
}

/// The one item of a grid the format can hold, and the number of cells; an error for
/// anything else.
fn check_grid(grid: &GridHeader, rotated: bool) -> FormatResult<(&Item, usize)> {
    let error = |message: String| incompatible("grid", message);
    let geometry = &grid.geometry;
    let [item] = grid.items.as_slice() else {
        let names: Vec<&str> = grid.items.iter().map(|item| item.name.as_str()).collect();
        return Err(error(format!(
            "an ASCII Grid holds one item; this grid has {} ({}): choose one with an \
             ItemFilterTransformation",
            names.len(),
            names.join(", ")
        )));
    };
    if grid.time.steps() != 1 {
        return Err(error(format!(
            "an ASCII Grid holds one time step; this grid has {}: choose one with a \
             TemporalFilterTransformation",
            grid.time.steps()
        )));
    }
    if geometry.layers() != 1 {
        return Err(error(format!(
            "an ASCII Grid is 2D; this grid has {} layers",
            geometry.layers()
        )));
    }
    let transform = geometry.transform;
    if !transform.is_north_up() && !rotated {
        return Err(error(format!(
            "the grid is rotated (row rotation {}, column rotation {}) and an ASCII Grid holds \
             only north-up grids; write it as GeoTIFF, which keeps the rotation, or resample \
             it north-up by nearest neighbour as gdalwarp does with the writer parameter \
             RotatedGrids=nearest",
            transform.row_rotation, transform.column_rotation
        )));
    }
    let finite = transform.to_gdal().iter().all(|value| value.is_finite());
    if rotated {
        if !finite {
            return Err(error("the grid's geotransform is not finite".to_owned()));
        }
    } else if !(finite && transform.pixel_width > 0.0 && transform.pixel_height != 0.0) {
        return Err(error(format!(
            "an ASCII Grid stores rows from west to east with cells of nonzero size; this \
             grid's cell size is {} x {}",
            transform.pixel_width, transform.pixel_height
        )));
    }
    match geometry.cells() {
        Some(cells) if cells > 0 => Ok((item, cells)),
        _ => Err(error(format!(
            "a grid of {} x {} cells cannot be written",
            geometry.columns, geometry.rows
        ))),
    }
}

/// The header lines.
fn header_text(grid: &GridHeader, nodata: Option<&str>) -> String {
    let geometry = &grid.geometry;
    let transform = geometry.transform;
    let (dx, dy) = (transform.pixel_width, transform.pixel_height.abs());
    // A grid stored bottom row first starts at its lower edge, which is then exact.
    let lower_y = if transform.pixel_height > 0.0 {
        transform.origin_y
    } else {
        lower_left_y(transform.origin_y, geometry.rows, dy)
    };
    let mut lines = vec![
        ("ncols", geometry.columns.to_string()),
        ("nrows", geometry.rows.to_string()),
        ("xllcorner", shortest(transform.origin_x)),
        ("yllcorner", shortest(lower_y)),
    ];
    if dx == dy {
        lines.push(("cellsize", shortest(dx)));
    } else {
        lines.push(("dx", shortest(dx)));
        lines.push(("dy", shortest(dy)));
    }
    if let Some(nodata) = nodata {
        lines.push(("NODATA_value", nodata.to_owned()));
    }
    lines
        .into_iter()
        .map(|(key, value)| format!("{key:<13} {value}\n"))
        .collect()
}

/// The y of the lower left corner that a reader (GDAL's or ours: `y + rows * dy`) turns back
/// into `origin_y` exactly, and of those the one with the shortest decimal, so that
/// `yllcorner 0.1` survives a round trip as `0.1`. The plain `origin_y - rows * dy` can be off
/// by several ulps, which would move a round-tripped grid.
fn lower_left_y(origin_y: f64, rows: usize, dy: f64) -> f64 {
    let height = rows as f64 * dy;
    let first = origin_y - height;
    let reads_back = |y: f64| y + height == origin_y;
    // The y that read back form one interval (y + height rounds monotonically), within a few
    // ulps of the larger of the two magnitudes around `first`.
    let span = (origin_y.abs().max(first.abs()) * f64::EPSILON * 4.0).max(f64::MIN_POSITIVE);
    let (below, above) = (first - span, first + span);
    if below + height >= origin_y || above + height <= origin_y {
        return first;
    }
    let low = first_true(below, above, |y| y + height >= origin_y);
    if !reads_back(low) {
        return first;
    }
    let high = first_true(low, above, |y| y + height > origin_y).next_down();
    for digits in 1..=17 {
        for candidate in [low, high, first, low + (high - low) / 2.0] {
            let rounded = format!("{candidate:.*e}", digits - 1).parse::<f64>();
            if let Ok(rounded) = rounded
                && (low..=high).contains(&rounded)
                && reads_back(rounded)
            {
                return rounded;
            }
        }
    }
    low
}

/// The smallest f64 in `(low, high]` for which the monotone `predicate` holds, given that it
/// fails at `low` and holds at `high`: a bisection over the ordered bit patterns, so at most
/// 64 steps.
fn first_true(low: f64, high: f64, predicate: impl Fn(f64) -> bool) -> f64 {
    let (mut low, mut high) = (i128::from(ordered_key(low)), i128::from(ordered_key(high)));
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        let value = from_ordered_key(i64::try_from(middle).unwrap_or_default());
        if predicate(value) {
            high = middle;
        } else {
            low = middle;
        }
    }
    from_ordered_key(i64::try_from(high).unwrap_or_default())
}

/// A key whose integer order is the order of the f64 values (as in `f64::total_cmp`).
fn ordered_key(value: f64) -> i64 {
    let bits = value.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// The inverse of [`ordered_key`].
fn from_ordered_key(key: i64) -> f64 {
    f64::from_bits((key ^ ((((key >> 63) as u64) >> 1) as i64)) as u64)
}

/// The shortest decimal that reads back as `value`.
fn shortest(value: f64) -> String {
    if !value.is_finite() {
        return non_finite(value).to_owned();
    }
    ryu::Buffer::new().format_finite(value).to_owned()
}

/// `nan`, `inf` or `-inf`, as GDAL writes and reads them.
fn non_finite(value: f64) -> &'static str {
    if value.is_nan() {
        "nan"
    } else if value > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// The text of a nodata value: an integer when it is one (`-9999`, as users expect; `-0` keeps
/// its sign), else for a Float32 item the text of [`float32_nodata_text`] when the value is exact in
/// float32, else the shortest decimal in f64.
fn nodata_text(nodata: f64, data_type: DataType) -> String {
    if nodata.is_finite() && nodata.fract() == 0.0 && nodata.abs() < 9.007_199_254_740_992e15 {
        if nodata == 0.0 && nodata.is_sign_negative() {
            return "-0".to_owned();
        }
        return itoa::Buffer::new().format(nodata as i64).to_owned();
    }
    let narrow = nodata as f32;
    if data_type == DataType::F32 && nodata.is_finite() && narrow.is_finite() {
        // Cells are matched against the nodata value in float32, so a nodata just beyond
        // float32's range (`-3.4028235e38` read in f64 from another writer's tag) is that
        // float32, and must be written as one GDAL keeps Float32. Other inexact values
        // (ESRI's `-3.402823466e38`) are kept as written.
        let magnitude = nodata.abs();
        let widens = magnitude > f64::from(f32::MAX) || magnitude < f64::from(f32::MIN_POSITIVE);
        if f64::from(narrow) == nodata || widens {
            return float32_nodata_text(narrow);
        }
    }
    shortest(nodata)
}

/// The text of a float32 nodata value that GDAL reads back as the same float32 without
/// widening the grid to Float64. GDAL reads `NODATA_value` in f64 and makes the grid Float64
/// when a value with a decimal point lies outside float32's normal range, so:
/// - the largest float32 is the shortest f64 decimal of its exact value,
///   `3.4028234663852886e38` (its float32 shortest form, `3.4028235e38`, is above `f32::MAX`
///   in f64);
/// - a subnormal is the shortest f64 decimal of its exact value without a decimal point,
///   `1401298464324817e-60` for the smallest, since GDAL looks for a point to tell a float
///   (and this reader then reads back the exact value);
/// - anything else is float32's shortest decimal.
///
/// Cell values keep float32's shortest form: GDAL checks the range of the nodata value only.
fn float32_nodata_text(value: f32) -> String {
    let magnitude = value.abs();
    if magnitude == f32::MAX {
        shortest(f64::from(value))
    } else if magnitude != 0.0 && magnitude < f32::MIN_POSITIVE {
        without_point(&shortest(f64::from(value)))
    } else {
        ryu::Buffer::new().format_finite(value).to_owned()
    }
}

/// A decimal `[-]digits[.digits][e[-]digits]` as `[-]digits e exponent`, with the same value
/// and no decimal point (`1.4e-44` as `14e-45`).
fn without_point(decimal: &str) -> String {
    let (mantissa, exponent) = decimal.split_once('e').unwrap_or((decimal, "0"));
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let fraction = fraction.trim_end_matches('0');
    let digits = format!("{whole}{fraction}");
    let digits = match digits.trim_start_matches('0') {
        "" => "0",
        digits => digits,
    };
    let exponent = exponent.parse::<i64>().unwrap_or_default() - fraction.len() as i64;
    format!("{sign}{digits}e{exponent}")
}

impl OpenGrid {
    fn write_values(&mut self, values: &Values) -> std::io::Result<()> {
        match values {
            Values::U8(values) => self.write_each(values, integer),
            Values::I16(values) => self.write_each(values, integer),
            Values::U16(values) => self.write_each(values, integer),
            Values::I32(values) => self.write_each(values, integer),
            Values::U32(values) => self.write_each(values, integer),
            Values::F32(values) => {
                let nodata = self.nodata_f32;
                let nodata_text = std::mem::take(&mut self.nodata_text);
                let result = self.write_each(values, |value, text| {
                    if Some(value) == nodata {
                        text.extend_from_slice(&nodata_text);
                    } else if value.is_finite() {
                        let mut buffer = ryu::Buffer::new();
                        text.extend_from_slice(buffer.format_finite(value).as_bytes());
                    } else {
                        text.extend_from_slice(non_finite(f64::from(value)).as_bytes());
                    }
                });
                self.nodata_text = nodata_text;
                result
            }
            Values::F64(values) => self.write_each(values, |value, text| {
                if value.is_finite() {
                    let mut buffer = ryu::Buffer::new();
                    text.extend_from_slice(buffer.format_finite(value).as_bytes());
                } else {
                    text.extend_from_slice(non_finite(value).as_bytes());
                }
            }),
        }
    }

    /// Appends each value with `format`, a space between values and a line break after each
    /// row, and passes the text on whenever [`FLUSH_BYTES`] have collected.
    fn write_each<T: Copy>(
        &mut self,
        values: &[T],
        mut format: impl FnMut(T, &mut Vec<u8>),
    ) -> std::io::Result<()> {
        for &value in values {
            if self.column == 0 {
                if let Some(flip) = self.flip.as_mut() {
                    let start = flip.spooled.saturating_add(self.text.len() as u64);
                    flip.row_starts.push(start);
                }
                // Every row starts with a space, as GDAL writes it: GDAL (before 3.8) takes a
                // line starting with a letter for a header line, so a first row starting with
                // `nan` or `inf` would be lost to it.
                self.text.push(b' ');
            }
            format(value, &mut self.text);
            self.column = self.column.saturating_add(1);
            if self.column >= self.columns {
                self.text.push(b'\n');
                self.column = 0;
            } else {
                self.text.push(b' ');
            }
            if self.text.len() >= FLUSH_BYTES {
                self.out.write_all(&self.text)?;
                if let Some(flip) = self.flip.as_mut() {
                    flip.spooled = flip.spooled.saturating_add(self.text.len() as u64);
                }
                self.text.clear();
            }
        }
        self.written = self.written.saturating_add(values.len());
        Ok(())
    }
}

impl Flip {
    /// Copies the rows from the temporary file `spool` (flushed) to the output, last row
    /// first.
    fn write_reversed(self, mut spool: File) -> std::io::Result<()> {
        let mut end = spool.seek(SeekFrom::End(0))?;
        let mut out = BufWriter::with_capacity(FLUSH_BYTES, self.output);
        for &start in self.row_starts.iter().rev() {
            spool.seek(SeekFrom::Start(start))?;
            let length = end.saturating_sub(start);
            let copied = std::io::copy(&mut (&mut spool).take(length), &mut out)?;
            if copied != length {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the temporary file of rows is shorter than what was written to it",
                ));
            }
            end = start;
        }
        out.flush()
    }
}

fn integer(value: impl itoa::Integer, text: &mut Vec<u8>) {
    text.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lower_left_y_reads_back_as_the_origin() {
        let mut state = 0x1234_5678_u64;
        for _ in 0..10_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let y = (state >> 11) as f64 / (1u64 << 53) as f64 * 1e7 - 5e6;
            let dy = ((state >> 40) % 1000 + 1) as f64 * 0.037;
            let rows = usize::try_from((state >> 20) % 5000 + 1).unwrap();
            let origin = y + rows as f64 * dy;
            let back = lower_left_y(origin, rows, dy);
            assert_eq!(back + rows as f64 * dy, origin, "{y} {dy} {rows}");
            let nice = (y * 100.0).round() / 100.0;
            let origin = nice + rows as f64 * dy;
            let back = lower_left_y(origin, rows, dy);
            assert_eq!(back + rows as f64 * dy, origin, "{nice} {dy} {rows}");
            assert!(
                shortest(back).len() <= shortest(nice).len(),
                "{nice} {back}"
            );
        }
        assert_eq!(lower_left_y(0.1 + 7.0 * 0.3, 7, 0.3), 0.1);
    }

    #[test]
    fn nodata_is_an_integer_when_it_is_one() {
        assert_eq!(nodata_text(-9999.0, DataType::F32), "-9999");
        assert_eq!(nodata_text(-9999.5, DataType::F64), "-9999.5");
        assert_eq!(
            nodata_text(f64::from(-f32::MAX), DataType::F32),
            "-3.4028234663852886e38"
        );
        assert_eq!(
            nodata_text(f64::from(f32::MAX), DataType::F32),
            "3.4028234663852886e38"
        );
        assert_eq!(nodata_text(-0.0, DataType::F32), "-0");
        // Another writer's float32 limit, read in f64, is the float32 it stands for.
        assert_eq!(
            nodata_text(-3.402_823_5e38, DataType::F32),
            "-3.4028234663852886e38"
        );
        assert_eq!(nodata_text(1e-45, DataType::F32), "1401298464324817e-60");
        assert_eq!(nodata_text(-3.402_823_5e38, DataType::F64), "-3.4028235e38");
        assert_eq!(nodata_text(0.0, DataType::F32), "0");
        let smallest = f64::from(f32::from_bits(1));
        assert_eq!(nodata_text(smallest, DataType::F32), "1401298464324817e-60");
        assert_eq!(
            nodata_text(-f64::from(f32::from_bits(0x7f_ffff)), DataType::F32),
            "-11754942106924411e-54"
        );
        assert_eq!(
            nodata_text(-3.402_823_466e38, DataType::F32),
            "-3.402823466e38"
        );
        assert_eq!(nodata_text(f64::NAN, DataType::F32), "nan");
        assert_eq!(nodata_text(1e300, DataType::F64), "1e300");
    }

    #[test]
    fn float32_nodata_reads_back_as_the_same_float32_within_its_range() {
        for bits in [1_u32, 2, 10, 0x7f_ffff, 0x80_0000, 0x7f7f_ffff, 0x3dcc_cccd] {
            for value in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let written = float32_nodata_text(value);
                let wide: f64 = written.parse().unwrap();
                assert_eq!(wide as f32, value, "{written}");
                assert!(wide.abs() <= f64::from(f32::MAX), "{written}");
                if value.abs() < f32::MIN_POSITIVE || value.abs() == f32::MAX {
                    assert_eq!(wide, f64::from(value), "{written}");
                }
                if value.abs() < f32::MIN_POSITIVE {
                    assert!(!written.contains('.'), "{written}");
                }
            }
        }
        assert_eq!(float32_nodata_text(0.1), "0.1");
        assert_eq!(without_point("1.25e-3"), "125e-5");
        assert_eq!(without_point("-7e-45"), "-7e-45");
        assert_eq!(without_point("0.5"), "5e-1");
    }
}

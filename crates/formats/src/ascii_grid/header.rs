//! The header of an ASCII Grid: `key value` lines before the first line of numbers, and the
//! geotransform they describe.
//!
//! Keys are read as GDAL's AAIGrid driver reads them: case-insensitive, in any order,
//! `cellsize` or GDAL's `dx`/`dy` for rectangular cells, `xll*`/`yll*` as the outer corner or
//! the centre of the lower-left cell. The geotransform uses GDAL's expressions in GDAL's order
//! of operations, so that it agrees with `gdalinfo` to the last bit. Where GDAL is lenient in
//! ways that hide mistakes (a missing corner becomes 0, `ncols 10.7` becomes 10, an unknown key
//! or a repeated one is ignored), this reader refuses the file and says why.

use std::io::{BufRead, Read};
use std::path::Path;

use super::number::{Decimal, Number, Width, read_number};
use super::{FORMAT, HEADER_LINE_BYTES_MAX, HEADER_LINES_MAX};
use crate::error::{FormatError, FormatResult};
use crate::limits::ReadLimits;
use crate::model::GeoTransform;
use crate::text::shorten;

/// The keys of a header, as files spell them (matched case-insensitively).
const KEYS: [&str; 10] = [
    "ncols",
    "nrows",
    "xllcorner",
    "xllcenter",
    "yllcorner",
    "yllcenter",
    "cellsize",
    "dx",
    "dy",
    "NODATA_value",
];

/// The nodata value of a header.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Nodata {
    /// The value (NaN for `nan`).
    pub value: f64,
    /// The narrowest type the grid needs for it, by GDAL's rule on the text: a value written
    /// without a decimal point within Int32's range needs nothing wider than Int32; any other
    /// value needs Float32, unless it is beyond float32's range of normal numbers, when it
    /// needs Float64 (see `nodata_width`).
    pub width: Width,
}

/// What a header says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GridFileHeader {
    /// Columns (`ncols`).
    pub columns: usize,
    /// Rows (`nrows`).
    pub rows: usize,
    /// Columns x rows.
    pub cells: u64,
    /// GDAL's geotransform.
    pub transform: GeoTransform,
    /// `NODATA_value`, if given.
    pub nodata: Option<Nodata>,
    /// Byte offset of the first line of values.
    pub data_offset: u64,
    /// Line number (1-based) of the first line of values.
    pub data_line: u64,
}

/// Whether a coordinate names the outer corner or the centre of the lower-left cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Corner,
    Center,
}

/// The values of the keys found so far.
#[derive(Debug, Default)]
struct Keys {
    columns: Option<u64>,
    rows: Option<u64>,
    x: Option<(f64, Anchor)>,
    y: Option<(f64, Anchor)>,
    cell_size: Option<f64>,
    dx: Option<f64>,
    dy: Option<f64>,
    nodata: Option<Nodata>,
}

/// Reads the header from the start of a file.
pub(crate) fn read_header(
    mut reader: impl BufRead,
    path: &Path,
    limits: &ReadLimits,
) -> FormatResult<GridFileHeader> {
    let line_bytes_max = HEADER_LINE_BYTES_MAX.min(limits.line_bytes_max);
    let mut keys = Keys::default();
    let mut line = Vec::new();
    let mut offset = 0_u64;
    for line_number in 1..=HEADER_LINES_MAX {
        line.clear();
        let read = (&mut reader)
            .take(line_bytes_max.saturating_add(1))
            .read_until(b'\n', &mut line)
            .map_err(|source| FormatError::read(path, source))?;
        if read == 0 {
            keys.check_complete(line_number)?;
            return Err(FormatError::invalid(
                FORMAT,
                format!("line {line_number}"),
                "the file ends after the header, without values",
            ));
        }
        let complete = line.last() == Some(&b'\n') || (read as u64) <= line_bytes_max;
        let start = offset;
        offset = offset.saturating_add(read as u64);
        let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
        let text = String::from_utf8_lossy(text);
        let Some(first) = text.split_ascii_whitespace().next() else {
            if complete {
                continue;
            }
            return keys.finish(start, line_number, limits);
        };
        if !is_key(first) {
            return keys.finish(start, line_number, limits);
        }
        let location = format!("line {line_number}");
        if !complete {
            return Err(FormatError::invalid(
                FORMAT,
                location,
                format!("header line longer than {line_bytes_max} bytes"),
            ));
        }
        keys.add(&text, &location)?;
    }
    Err(FormatError::invalid(
        FORMAT,
        format!("line {HEADER_LINES_MAX}"),
        format!("no values within the first {HEADER_LINES_MAX} lines"),
    ))
}

/// True when a line starting with `token` is a header line: it starts with a letter and is not
/// `nan` or `inf` (values GDAL accepts at the start of the data too).
fn is_key(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_alphabetic()) && read_number(token.as_bytes()).is_err()
}

impl Keys {
    /// Adds the key and value of one header line.
    fn add(&mut self, text: &str, location: &str) -> FormatResult<()> {
        let invalid = |message: String| FormatError::invalid(FORMAT, location, message);
        let mut tokens = text.split_ascii_whitespace();
        let key = tokens.next().unwrap_or_default();
        let Some(&name) = KEYS.iter().find(|name| name.eq_ignore_ascii_case(key)) else {
            return Err(invalid(format!(
                "unknown header key {:?}; an ASCII Grid header has {}",
                shorten(key),
                KEYS.join(", ")
            )));
        };
        let Some(value) = tokens.next() else {
            return Err(invalid(format!("{name} has no value")));
        };
        if let Some(extra) = tokens.next() {
            return Err(invalid(format!(
                "{name} has more than one value: {:?}",
                shorten(extra)
            )));
        }
        let slot_taken = match name {
            "ncols" => set(&mut self.columns, count(name, value, &invalid)?),
            "nrows" => set(&mut self.rows, count(name, value, &invalid)?),
            "xllcorner" => set(
                &mut self.x,
                (finite(name, value, &invalid)?, Anchor::Corner),
            ),
            "xllcenter" => set(
                &mut self.x,
                (finite(name, value, &invalid)?, Anchor::Center),
            ),
            "yllcorner" => set(
                &mut self.y,
                (finite(name, value, &invalid)?, Anchor::Corner),
            ),
            "yllcenter" => set(
                &mut self.y,
                (finite(name, value, &invalid)?, Anchor::Center),
            ),
            "cellsize" => set(&mut self.cell_size, size(name, value, &invalid)?),
            "dx" => set(&mut self.dx, size(name, value, &invalid)?),
            "dy" => set(&mut self.dy, size(name, value, &invalid)?),
            _ => set(&mut self.nodata, nodata(value, &invalid)?),
        };
        if slot_taken {
            let what = match name {
                "xllcorner" | "xllcenter" => "x of the lower left cell (xllcorner or xllcenter)",
                "yllcorner" | "yllcenter" => "y of the lower left cell (yllcorner or yllcenter)",
                _ => name,
            };
            return Err(invalid(format!("{what} is given twice")));
        }
        Ok(())
    }

    /// Fails naming the first key that is missing.
    fn check_complete(&self, line_number: u64) -> FormatResult<()> {
        let missing = if self.columns.is_none() {
            Some("ncols")
        } else if self.rows.is_none() {
            Some("nrows")
        } else if self.x.is_none() {
            Some("xllcorner (or xllcenter)")
        } else if self.y.is_none() {
            Some("yllcorner (or yllcenter)")
        } else if self.cell_size.is_none() && self.dx.is_none() && self.dy.is_none() {
            Some("cellsize (or dx and dy)")
        } else {
            None
        };
        match missing {
            Some(key) => Err(FormatError::invalid(
                FORMAT,
                format!("line {line_number}"),
                format!("the header has no {key}"),
            )),
            None => Ok(()),
        }
    }

    /// The header, once the first line of values starts at `data_offset`.
    fn finish(
        self,
        data_offset: u64,
        data_line: u64,
        limits: &ReadLimits,
    ) -> FormatResult<GridFileHeader> {
        self.check_complete(data_line)?;
        let location = format!("line {data_line}");
        let invalid = |message: &str| FormatError::invalid(FORMAT, location.as_str(), message);
        let (Some(columns), Some(rows), Some((x, x_anchor)), Some((y, y_anchor))) =
            (self.columns, self.rows, self.x, self.y)
        else {
            return Err(invalid("the header is incomplete"));
        };
        let (dx, dy) = match (self.cell_size, self.dx, self.dy) {
            (Some(size), None, None) => (size, size),
            (None, Some(dx), Some(dy)) => (dx, dy),
            (Some(_), _, _) => return Err(invalid("the header has both cellsize and dx/dy")),
            (None, _, _) => return Err(invalid("the header has only one of dx and dy")),
        };
        let cells = columns
            .checked_mul(rows)
            .ok_or_else(|| invalid("ncols x nrows is beyond any grid size"))?;
        crate::limits::check_limit("grid cells (ncols x nrows)", cells, limits.grid_cells_max)?;
        let (Ok(column_count), Ok(row_count)) = (usize::try_from(columns), usize::try_from(rows))
        else {
            return Err(invalid("ncols or nrows is too large for this machine"));
        };
        let transform = geotransform(columns, rows, (x, x_anchor), (y, y_anchor), dx, dy);
        if !transform.to_gdal().iter().all(|value| value.is_finite()) {
            return Err(invalid(
                "the grid extends beyond the range of 64-bit coordinates",
            ));
        }
        Ok(GridFileHeader {
            columns: column_count,
            rows: row_count,
            cells,
            transform,
            nodata: self.nodata,
            data_offset,
            data_line,
        })
    }
}

/// GDAL's geotransform for a header (`AAIGDataset::ParseHeader`). Each axis is placed by its
/// own key, so `xllcenter` with `yllcorner` works; GDAL would place such a grid at (0, 0).
fn geotransform(
    columns: u64,
    rows: u64,
    (x, x_anchor): (f64, Anchor),
    (y, y_anchor): (f64, Anchor),
    mut dx: f64,
    mut dy: f64,
) -> GeoTransform {
    let corner = x_anchor == Anchor::Corner && y_anchor == Anchor::Corner;
    // GDAL's repair of global grids whose cellsize was written with too few digits
    // (ccafs-climate.org data): a grid of a multiple of 360 columns from -180 whose cellsize
    // is within 1e-9 of 360 / ncols gets exactly that cellsize. Repeated so that the
    // geotransform agrees with GDAL's.
    let exact = 360.0 / columns as f64;
    if corner
        && columns.is_multiple_of(360)
        && (x + 180.0).abs() < 1e-12
        && dx == dy
        && (dx - exact).abs() < 1e-9
    {
        dx = exact;
        dy = exact;
    }
    let rows = rows as f64;
    let origin_x = match x_anchor {
        Anchor::Corner => x,
        Anchor::Center => x - 0.5 * dx,
    };
    let origin_y = match y_anchor {
        Anchor::Corner => y + rows * dy,
        Anchor::Center => y - 0.5 * dy + rows * dy,
    };
    GeoTransform::north_up(origin_x, origin_y, dx, dy)
}

/// Stores `value` in an empty slot; returns true when the slot was already taken.
fn set<T>(slot: &mut Option<T>, value: T) -> bool {
    if slot.is_some() {
        return true;
    }
    *slot = Some(value);
    false
}

/// `ncols` or `nrows`: a positive whole number.
fn count(name: &str, value: &str, invalid: &impl Fn(String) -> FormatError) -> FormatResult<u64> {
    let decimal = Decimal::scan(value.as_bytes()).filter(|decimal| decimal.integer);
    match decimal {
        Some(decimal) if decimal.mantissa == 0 || decimal.negative => Err(invalid(format!(
            "{name} is {value}; it must be a positive whole number"
        ))),
        Some(decimal) if !decimal.truncated && decimal.exponent == 0 => Ok(decimal.mantissa),
        Some(_) => Err(invalid(format!("{name} {value} is beyond any grid size"))),
        None => Err(invalid(format!(
            "{name} {:?} is not a whole number",
            shorten(value)
        ))),
    }
}

/// A coordinate: a finite number.
fn finite(name: &str, value: &str, invalid: &impl Fn(String) -> FormatError) -> FormatResult<f64> {
    match read_number(value.as_bytes()) {
        Ok(number) if number.value.is_finite() => Ok(number.value),
        Ok(_) => Err(invalid(format!(
            "{name} must be a finite number, not {value}"
        ))),
        Err(error) => Err(invalid(format!(
            "{name}: {}",
            error.message(value.as_bytes())
        ))),
    }
}

/// A cell size: a finite number above zero.
fn size(name: &str, value: &str, invalid: &impl Fn(String) -> FormatError) -> FormatResult<f64> {
    let size = finite(name, value, invalid)?;
    if size > 0.0 {
        return Ok(size);
    }
    Err(invalid(format!("{name} is {value}; it must be above zero")))
}

/// `NODATA_value`: any number, including `nan` (as GDAL accepts).
fn nodata(value: &str, invalid: &impl Fn(String) -> FormatError) -> FormatResult<Nodata> {
    let number = read_number(value.as_bytes())
        .map_err(|error| invalid(format!("NODATA_value: {}", error.message(value.as_bytes()))))?;
    Ok(Nodata {
        value: number.value,
        width: nodata_width(&number, value),
    })
}

/// See [`Nodata::width`]. GDAL decides on the text: a value written without a decimal point
/// (digits and an exponent at most) within Int32's range does not widen the grid, even when it
/// is not a whole number (`1e-45`); that is how the writer keeps a subnormal float32 nodata
/// from turning a grid into Float64. `nan` is the exception: GDAL leaves it to the values,
/// Basin makes the grid at least Float32, as an integer grid cannot hold NaN.
fn nodata_width(number: &Number, text: &str) -> Width {
    let value = number.value;
    let int32_range = f64::from(i32::MIN)..=f64::from(i32::MAX);
    if !text.contains(['.', ',']) && int32_range.contains(&value) {
        return Width::Int32;
    }
    let magnitude = value.abs();
    let beyond_float32 = magnitude.is_finite()
        && (magnitude > f64::from(f32::MAX)
            || (magnitude != 0.0 && magnitude < f64::from(f32::MIN_POSITIVE)));
    if beyond_float32 {
        Width::Float64
    } else {
        Width::Float32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> FormatResult<GridFileHeader> {
        read_header(text.as_bytes(), Path::new("t.asc"), &ReadLimits::default())
    }

    #[test]
    fn keys_are_case_insensitive_and_in_any_order() {
        let found = header(
            "CELLSIZE 2\r\nnodata_VALUE -9999\nYllCorner 10\n\nxllcorner 5\nNROWS 3\nncols 4\n1 2\n",
        )
        .unwrap();
        assert_eq!((found.columns, found.rows, found.cells), (4, 3, 12));
        assert_eq!(found.transform.to_gdal(), [5.0, 2.0, 0.0, 16.0, 0.0, -2.0]);
        assert_eq!(found.nodata.map(|nodata| nodata.value), Some(-9999.0));
        assert_eq!(found.data_line, 8);
        assert_eq!(found.data_offset, 73);
    }

    #[test]
    fn centre_keys_shift_by_half_a_cell_and_dx_dy_make_rectangular_cells() {
        let found =
            header("ncols 2\nnrows 3\nxllcenter 10\nyllcorner 20\ndx 4\ndy 2\n1 2\n").unwrap();
        assert_eq!(found.transform.to_gdal(), [8.0, 4.0, 0.0, 26.0, 0.0, -2.0]);
        let found =
            header("ncols 2\nnrows 3\nxllcenter 10\nyllcenter 20\ncellsize 2\n1\n").unwrap();
        assert_eq!(found.transform.to_gdal(), [9.0, 2.0, 0.0, 25.0, 0.0, -2.0]);
    }

    #[test]
    fn nan_and_inf_start_the_data() {
        let found = header("ncols 2\nnrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\nnan 1\n");
        assert_eq!(found.unwrap().data_line, 6);
    }

    #[test]
    fn bad_headers_name_the_problem() {
        let cases = [
            (
                "nrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n",
                "no ncols",
            ),
            (
                "ncols 1\nnrows 1\nxllcorner 0\ncellsize 1\n1\n",
                "no yllcorner",
            ),
            (
                "ncols 1\nnrows 1\nxllcorner 0\nyllcorner 0\n1\n",
                "no cellsize",
            ),
            (
                "ncols 0\nnrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n",
                "positive",
            ),
            ("ncols -3\nnrows 1\n", "positive"),
            ("ncols 2.5\nnrows 1\n", "not a whole number"),
            ("ncols 99999999999999999999999\n", "beyond any grid size"),
            ("ncols 1\nncols 1\n", "given twice"),
            ("xllcorner 1\nxllcenter 1\n", "given twice"),
            ("ncols 1 2\n", "more than one value"),
            ("ncols\n", "no value"),
            ("nodata -9999\n", "unknown header key"),
            ("cellsize 0\n", "above zero"),
            ("cellsize -1\n", "above zero"),
            ("cellsize nan\n", "finite"),
            ("xllcorner inf\n", "finite"),
            ("xllcorner 1e999\n", "beyond the range"),
            ("NODATA_value x\n", "not a number"),
            (
                "ncols 1\nnrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\ndx 1\ndy 1\n1\n",
                "both",
            ),
            (
                "ncols 1\nnrows 1\nxllcorner 0\nyllcorner 0\ndx 1\n1\n",
                "one of dx and dy",
            ),
            (
                "ncols 1\nnrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\n",
                "without values",
            ),
            (
                "ncols 1\nnrows 1\nxllcorner 0\nyllcorner 1e308\ncellsize 1e308\n1\n",
                "range",
            ),
            ("", "no ncols"),
        ];
        for (text, expected) in cases {
            let error = header(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn header_lines_and_line_count_are_bounded() {
        let keys = "ncols 1\nnrows 1\nxllcorner 0\nyllcorner 0\n";
        let at_limit = format!("{keys}cellsize {}1\n1\n", "0".repeat(1014));
        assert_eq!(at_limit.lines().nth(4).unwrap().len(), 1024);
        assert!(header(&at_limit).is_ok());
        let past_limit = format!("{keys}cellsize {}1\n1\n", "0".repeat(1015));
        let error = header(&past_limit).unwrap_err().to_string();
        assert!(error.contains("longer than 1024 bytes"), "{error}");
        let blank = "\n".repeat(usize::try_from(HEADER_LINES_MAX).unwrap() - 6);
        assert!(header(&format!("{keys}{blank}cellsize 1\n1\n")).is_ok());
        let error = header(&format!("{keys}{blank}\ncellsize 1\n1\n")).unwrap_err();
        assert!(error.to_string().contains("no values within"), "{error}");
    }

    #[test]
    fn cell_count_limit_applies_at_and_past_it() {
        let limits = ReadLimits {
            grid_cells_max: 12,
            ..ReadLimits::default()
        };
        let text =
            |rows: u32| format!("ncols 4\nnrows {rows}\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n");
        assert!(read_header(text(3).as_bytes(), Path::new("t.asc"), &limits).is_ok());
        let error = read_header(text(4).as_bytes(), Path::new("t.asc"), &limits).unwrap_err();
        assert!(matches!(
            error,
            FormatError::LimitExceeded {
                actual: 16,
                limit: 12,
                ..
            }
        ));
    }

    #[test]
    fn global_grids_get_gdals_cellsize_repair() {
        let found = header(
            "ncols 720\nnrows 360\nxllcorner -180\nyllcorner -90\ncellsize 0.5000000001\n1\n",
        )
        .unwrap();
        assert_eq!(found.transform.pixel_width, 0.5);
        assert_eq!(found.transform.origin_y, -90.0 + 360.0 * 0.5);
    }

    #[test]
    fn nodata_width_follows_gdal() {
        let width = |text: &str| nodata_width(&read_number(text.as_bytes()).unwrap(), text);
        assert_eq!(width("-9999"), Width::Int32);
        assert_eq!(width("-9999.0"), Width::Float32);
        assert_eq!(width("-3.402823466e+38"), Width::Float32);
        assert_eq!(width("nan"), Width::Float32);
        assert_eq!(width("1.0e-40"), Width::Float64);
        assert_eq!(width("-1e39"), Width::Float64);
        assert_eq!(width("-3.4028235e38"), Width::Float64);
        assert_eq!(width("-3.4028234663852886e38"), Width::Float32);
        // Without a decimal point and within Int32's range, GDAL does not widen.
        assert_eq!(width("1e-40"), Width::Int32);
        assert_eq!(width("14e-45"), Width::Int32);
        assert_eq!(width("3000000000"), Width::Float32);
    }
}

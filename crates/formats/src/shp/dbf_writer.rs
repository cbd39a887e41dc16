//! Writing the .dbf attribute table: field names cut to dBASE's 10 bytes and made unique the
//! way OGR does it (`temperatur`, `temperat_1`), types and widths from the model, values in
//! UTF-8 (a .cpg says so).
//!
//! A text or integer field whose source declared no width (GeoJSON) is sized as ogr2ogr sizes
//! it: OGR's default width (80 for text, 9 for 32-bit integers, 18 for wider ones) grown to the
//! longest value, at most 254 for text. Records are streamed, so such fields are first written
//! at their widest and the file is rewritten narrower at the end when needed.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::Datelike;

use crate::error::{FormatError, FormatResult};
use crate::model::{Field, FieldType, Value};

use super::FORMAT;

/// Most bytes of a dBASE field name.
const NAME_BYTES_MAX: usize = 10;
/// Most bytes of a character field.
const TEXT_WIDTH_MAX: usize = 254;
/// Least width of a text field whose source declared none (OGR's default, which it grows to
/// the longest value).
const TEXT_WIDTH_DEFAULT: usize = 80;
/// Least width of an integer field without a declared width whose values all fit 32 bits
/// (OGR's Integer), and of one with wider values (OGR's Integer64).
const INTEGER_WIDTH_DEFAULT: usize = 9;
const INTEGER64_WIDTH_DEFAULT: usize = 18;
/// Widest integer text: `-9223372036854775808`.
const INTEGER_WIDTH_MAX: usize = 20;

/// What is known of the values of a field sized by them.
#[derive(Debug, Clone, Copy)]
struct Sizing {
    /// Bytes of the longest value written.
    longest: usize,
    /// Whether every integer so far fits 32 bits.
    fits_i32: bool,
}

/// One output field.
struct OutField {
    name: String,
    original: String,
    field_type: FieldType,
    letter: u8,
    width: usize,
    decimals: usize,
    truncated_values: u64,
    /// Set for a field sized by its values: it is written at its widest until `finish`.
    sizing: Option<Sizing>,
}

impl OutField {
    /// The width this field has at least once written.
    fn least_width(&self) -> usize {
        match (self.sizing, self.field_type) {
            (Some(_), FieldType::Text) => TEXT_WIDTH_DEFAULT,
            (Some(_), _) => INTEGER_WIDTH_DEFAULT,
            (None, _) => self.width,
        }
    }
}

fn too_wide(fields: usize, record_bytes: usize) -> FormatError {
    FormatError::Incompatible {
        data: "feature collection",
        format: FORMAT,
        message: format!(
            "{fields} fields needing {record_bytes} bytes per record exceed what a .dbf can hold"
        ),
    }
}

/// The .dbf being written.
pub(crate) struct DbfWriter {
    path: PathBuf,
    file: BufWriter<File>,
    fields: Vec<OutField>,
    /// A layer without fields gets an `FID` field (a .dbf needs one), as OGR does.
    fid_only: bool,
    record: Vec<u8>,
    number_text: String,
    records: u32,
}

/// Cuts `name` to at most `bytes` bytes on a character boundary.
fn cut(name: &str, bytes: usize) -> &str {
    let mut end = name.len().min(bytes);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name.get(..end).unwrap_or_default()
}

/// dBASE names for `fields`, made as GDAL's Shapefile driver makes them: the first 10 bytes
/// with `:` turned into `_` (GDAL's name normalisation); a name taken already (ignoring case)
/// becomes the first 8 bytes plus `_1` ... `_9`, then plus `10` ... `99`; past that Basin goes
/// on with shorter stems where GDAL gives up. Notes for every change.
fn unique_names(fields: &[Field]) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = Vec::with_capacity(fields.len());
    let mut notes = Vec::new();
    for (index, field) in fields.iter().enumerate() {
        let base = if field.name.trim().is_empty() {
            format!("FIELD_{}", index + 1)
        } else {
            field.name.replace(':', "_")
        };
        let taken = |candidate: &str| {
            names
                .iter()
                .any(|name| name.eq_ignore_ascii_case(candidate))
        };
        let mut name = cut(&base, NAME_BYTES_MAX).to_owned();
        let mut suffix = 1u32;
        while taken(&name) {
            let tail = match suffix {
                1..=9 => format!("_{suffix}"),
                10..=99 => format!("{suffix:02}"),
                _ => format!("_{suffix}"),
            };
            name = format!("{}{tail}", cut(&base, NAME_BYTES_MAX - tail.len()));
            suffix += 1;
        }
        if name != field.name {
            notes.push(format!("field name {:?} written as {:?}", field.name, name));
        }
        names.push(name);
    }
    (names, notes)
}

fn out_field(field: &Field, name: String) -> OutField {
    let declared = field.width.map(usize::from).filter(|width| *width > 0);
    let sized =
        declared.is_none() && matches!(field.field_type, FieldType::Text | FieldType::Integer);
    let (letter, width, decimals) = match field.field_type {
        FieldType::Boolean => (b'L', 1, 0),
        FieldType::Integer => (
            b'N',
            declared.unwrap_or(INTEGER_WIDTH_MAX).min(INTEGER_WIDTH_MAX),
            0,
        ),
        FieldType::Float => match (declared, field.decimals) {
            (Some(width), Some(decimals)) => (b'N', width.min(40), usize::from(decimals)),
            _ => (b'N', 24, 15),
        },
        FieldType::Date => (b'D', 8, 0),
        FieldType::DateTime => (b'C', 24, 0),
        FieldType::Text => (
            b'C',
            declared.unwrap_or(TEXT_WIDTH_MAX).min(TEXT_WIDTH_MAX),
            0,
        ),
    };
    OutField {
        name,
        original: field.name.clone(),
        field_type: field.field_type,
        letter,
        width,
        decimals: decimals.min(width.saturating_sub(2)),
        truncated_values: 0,
        sizing: sized.then_some(Sizing {
            longest: 0,
            fits_i32: true,
        }),
    }
}

impl DbfWriter {
    /// Creates the .dbf at `path` with a header for `fields`; returns the notes on renamed
    /// fields.
    pub(crate) fn create(path: &Path, fields: &[Field]) -> FormatResult<(Self, Vec<String>)> {
        let (names, notes) = unique_names(fields);
        let mut out: Vec<OutField> = fields
            .iter()
            .zip(names)
            .map(|(f, n)| out_field(f, n))
            .collect();
        let fid_only = out.is_empty();
        if fid_only {
            out.push(out_field(
                &Field::new("FID", FieldType::Integer),
                "FID".to_owned(),
            ));
            if let Some(fid) = out.first_mut() {
                fid.width = 11;
                fid.sizing = None;
            }
        }
        // Fields sized by their values are written at their widest first, which may pass the
        // format's 65535 bytes per record: only their final widths (at least OGR's defaults)
        // must fit, checked here for the least and in `finish` for the final ones.
        let record_bytes = out.iter().map(OutField::least_width).sum::<usize>() + 1;
        let header_bytes = 32 * out.len() + 33;
        if record_bytes > usize::from(u16::MAX) || header_bytes > usize::from(u16::MAX) {
            return Err(too_wide(out.len(), record_bytes));
        }
        let file = File::create(path).map_err(|error| FormatError::write(path, error))?;
        let mut writer = Self {
            path: path.to_path_buf(),
            file: BufWriter::with_capacity(256 * 1024, file),
            fields: out,
            fid_only,
            record: Vec::with_capacity(record_bytes),
            number_text: String::new(),
            records: 0,
        };
        let header = header(&writer.fields, 0);
        writer
            .file
            .write_all(&header)
            .map_err(|error| FormatError::write(&writer.path, error))?;
        Ok((writer, notes))
    }

    /// Writes one record; `number` (1-based) is for messages and the `FID` field.
    pub(crate) fn write_record(&mut self, values: &[Value], number: u64) -> FormatResult<()> {
        self.record.clear();
        self.record.push(b' ');
        if self.fid_only {
            let fid = Value::Integer(i64::try_from(number).unwrap_or(i64::MAX) - 1);
            self.push_value(0, &fid, number)?;
        } else {
            for index in 0..self.fields.len() {
                let value = values.get(index).unwrap_or(&Value::Null);
                self.push_value(index, value, number)?;
            }
        }
        self.file
            .write_all(&self.record)
            .map_err(|error| FormatError::write(&self.path, error))?;
        self.records = self.records.saturating_add(1);
        Ok(())
    }

    fn push_value(&mut self, index: usize, value: &Value, number: u64) -> FormatResult<()> {
        let Some(field) = self.fields.get_mut(index) else {
            return Ok(());
        };
        let start = self.record.len();
        let text = &mut self.number_text;
        text.clear();
        let fits = match field.field_type {
            FieldType::Integer | FieldType::Float => {
                format_number(value, field, text);
                if text.is_empty() {
                    self.record.resize(start + field.width, b'*');
                    return Ok(());
                }
                track(field, value, text);
                text.len() <= field.width
            }
            FieldType::Boolean => {
                let letter = match value {
                    Value::Boolean(true) => b'T',
                    Value::Boolean(false) => b'F',
                    _ => b'?',
                };
                self.record.push(letter);
                return Ok(());
            }
            FieldType::Date => {
                if let Value::Date(date) = value {
                    text.push_str(&date.format("%Y%m%d").to_string());
                } else if let Value::DateTime(time) = value {
                    text.push_str(&time.format("%Y%m%d").to_string());
                }
                true
            }
            FieldType::Text | FieldType::DateTime => {
                text_of(value, text);
                if text.len() > field.width {
                    field.truncated_values += 1;
                    let kept = cut(text, field.width).len();
                    text.truncate(kept);
                }
                track(field, value, text);
                true
            }
        };
        if !fits {
            return Err(FormatError::Incompatible {
                data: "feature collection",
                format: FORMAT,
                message: format!(
                    "feature {number}: value {text} of field {:?} is wider than its {} characters",
                    field.original, field.width
                ),
            });
        }
        let padding = field.width.saturating_sub(text.len());
        if field.letter == b'N' {
            self.record.resize(start + padding, b' ');
            self.record.extend_from_slice(text.as_bytes());
        } else {
            self.record.extend_from_slice(text.as_bytes());
            self.record.resize(start + field.width, b' ');
        }
        Ok(())
    }

    /// Notes on text values cut to their field's width.
    pub(crate) fn notes(&self) -> Vec<String> {
        self.fields
            .iter()
            .filter(|field| field.truncated_values > 0)
            .map(|field| {
                format!(
                    "{} value(s) of field {:?} cut to its width of {} bytes",
                    field.truncated_values, field.original, field.width
                )
            })
            .collect()
    }

    /// Writes the end marker and the record count; rewrites the file with the final widths
    /// of the fields sized by their values when those are narrower than written.
    pub(crate) fn finish(&mut self) -> FormatResult<()> {
        let records = self.records.to_le_bytes();
        let file = &mut self.file;
        let result = file
            .write_all(&[0x1A])
            .and_then(|()| file.flush())
            .and_then(|()| file.seek(SeekFrom::Start(4)).map(|_| ()))
            .and_then(|()| file.write_all(&records))
            .and_then(|()| file.flush());
        result.map_err(|error| FormatError::write(&self.path, error))?;
        let written: Vec<usize> = self.fields.iter().map(|field| field.width).collect();
        for field in &mut self.fields {
            if let Some(sizing) = field.sizing {
                field.width = match field.field_type {
                    FieldType::Text => sizing.longest.clamp(TEXT_WIDTH_DEFAULT, TEXT_WIDTH_MAX),
                    _ if sizing.fits_i32 => sizing.longest.max(INTEGER_WIDTH_DEFAULT),
                    _ => sizing.longest.max(INTEGER64_WIDTH_DEFAULT),
                }
                .min(field.width);
            }
        }
        let record_bytes = self.fields.iter().map(|field| field.width).sum::<usize>() + 1;
        if record_bytes > usize::from(u16::MAX) {
            return Err(too_wide(self.fields.len(), record_bytes));
        }
        let narrower = self
            .fields
            .iter()
            .zip(&written)
            .any(|(field, width)| field.width < *width);
        if narrower {
            self.rewrite(&written)?;
        }
        Ok(())
    }

    /// Copies the records, written with fields `written` wide, into a file with the fields'
    /// final widths: text keeps its start, numbers (right-aligned) their end.
    fn rewrite(&mut self, written: &[usize]) -> FormatResult<()> {
        let path = &self.path;
        let read_error = |error| FormatError::read(path, error);
        let old_header_bytes = 32 * self.fields.len() + 33;
        let old_record_bytes = written.iter().sum::<usize>() + 1;
        let mut source =
            std::io::BufReader::with_capacity(256 * 1024, File::open(path).map_err(read_error)?);
        source
            .seek(SeekFrom::Start(old_header_bytes as u64))
            .map_err(read_error)?;
        let mut staged = path.as_os_str().to_owned();
        staged.push(".narrow");
        let staged = PathBuf::from(staged);
        let write_error = |error| FormatError::write(&staged, error);
        let mut target =
            BufWriter::with_capacity(256 * 1024, File::create(&staged).map_err(write_error)?);
        target
            .write_all(&header(&self.fields, self.records))
            .map_err(write_error)?;
        let mut record = vec![0u8; old_record_bytes];
        let mut narrow = Vec::with_capacity(old_record_bytes);
        for _ in 0..self.records {
            std::io::Read::read_exact(&mut source, &mut record).map_err(read_error)?;
            narrow.clear();
            narrow.extend_from_slice(record.get(..1).unwrap_or_default());
            let mut offset = 1usize;
            for (field, old_width) in self.fields.iter().zip(written) {
                let value = record.get(offset..offset + old_width).unwrap_or_default();
                offset += old_width;
                let cut = old_width.saturating_sub(field.width);
                let kept = if field.letter == b'N' {
                    value.get(cut..)
                } else {
                    value.get(..field.width)
                };
                narrow.extend_from_slice(kept.unwrap_or_default());
            }
            target.write_all(&narrow).map_err(write_error)?;
        }
        target.write_all(&[0x1A]).map_err(write_error)?;
        target.flush().map_err(write_error)?;
        drop(target);
        std::fs::rename(&staged, path).map_err(|error| FormatError::write(path, error))
    }
}

/// Notes the length of `text`, written for `value`, in a field sized by its values.
fn track(field: &mut OutField, value: &Value, text: &str) {
    if let Some(sizing) = field.sizing.as_mut() {
        sizing.longest = sizing.longest.max(text.len());
        if field.field_type == FieldType::Integer {
            sizing.fits_i32 &= match value {
                Value::Integer(integer) => i32::try_from(*integer).is_ok(),
                _ => text.parse::<i32>().is_ok(),
            };
        }
    }
}

/// The header of a .dbf holding `records` records of `fields`.
fn header(fields: &[OutField], records: u32) -> Vec<u8> {
    let record_bytes = fields.iter().map(|field| field.width).sum::<usize>() + 1;
    let header_bytes = 32 * fields.len() + 33;
    let today = chrono::Local::now().date_naive();
    let mut header = vec![0x03u8];
    header.push(u8::try_from(today.year().saturating_sub(1900)).unwrap_or(u8::MAX));
    header.push(u8::try_from(today.month()).unwrap_or(1));
    header.push(u8::try_from(today.day()).unwrap_or(1));
    header.extend_from_slice(&records.to_le_bytes());
    header.extend_from_slice(
        &u16::try_from(header_bytes)
            .unwrap_or(u16::MAX)
            .to_le_bytes(),
    );
    header.extend_from_slice(
        &u16::try_from(record_bytes)
            .unwrap_or(u16::MAX)
            .to_le_bytes(),
    );
    header.extend_from_slice(&[0u8; 20]);
    for field in fields {
        let mut name = [0u8; 11];
        for (slot, byte) in name.iter_mut().zip(field.name.bytes()) {
            *slot = byte;
        }
        header.extend_from_slice(&name);
        header.push(field.letter);
        header.extend_from_slice(&[0u8; 4]);
        header.push(u8::try_from(field.width).unwrap_or(u8::MAX));
        header.push(u8::try_from(field.decimals).unwrap_or(0));
        header.extend_from_slice(&[0u8; 14]);
    }
    header.push(0x0D);
    header
}

/// Formats a number for a numeric field; leaves `text` empty for null.
fn format_number(value: &Value, field: &OutField, text: &mut String) {
    use std::fmt::Write as _;
    let number = match value {
        Value::Integer(integer) if field.field_type == FieldType::Integer => {
            text.push_str(itoa::Buffer::new().format(*integer));
            return;
        }
        Value::Integer(integer) => *integer as f64,
        Value::Float(float) if float.is_finite() => *float,
        Value::Boolean(flag) => f64::from(u8::from(*flag)),
        Value::Text(number) => match number.trim().parse::<f64>() {
            Ok(parsed) if parsed.is_finite() => parsed,
            _ => return,
        },
        _ => return,
    };
    if field.field_type == FieldType::Integer && number.fract() == 0.0 && number.abs() < 1e18 {
        text.push_str(itoa::Buffer::new().format(number as i64));
        return;
    }
    let _ = write!(text, "{number:.*}", field.decimals);
    if text.len() > field.width {
        text.clear();
        text.push_str(ryu::Buffer::new().format_finite(number));
    }
}

fn text_of(value: &Value, text: &mut String) {
    match value {
        Value::Null => {}
        Value::Boolean(flag) => text.push_str(if *flag { "true" } else { "false" }),
        Value::Integer(integer) => text.push_str(itoa::Buffer::new().format(*integer)),
        Value::Float(float) => text.push_str(ryu::Buffer::new().format(*float)),
        Value::Text(value) => text.push_str(value),
        Value::Date(date) => text.push_str(&date.format("%Y-%m-%d").to_string()),
        Value::DateTime(time) => text.push_str(&time.format("%Y-%m-%dT%H:%M:%S%.3f").to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_and_made_unique_like_ogr() {
        let fields = [
            Field::new("temperature_max", FieldType::Float),
            Field::new("temperature_min", FieldType::Float),
            Field::new("short", FieldType::Text),
        ];
        let (names, notes) = unique_names(&fields);
        assert_eq!(names, ["temperatur", "temperat_1", "short"]);
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn colons_become_underscores_and_the_tenth_clash_takes_two_digits_as_in_ogr() {
        // ogr2ogr writes 'name:cs' as 'name_cs' and 'ISO3166-1:alpha3' after
        // 'ISO3166-1:alpha2' as 'ISO3166-_1'.
        let fields = [
            Field::new("name:cs", FieldType::Text),
            Field::new("ISO3166-1:alpha2", FieldType::Text),
            Field::new("ISO3166-1:alpha3", FieldType::Text),
        ];
        assert_eq!(
            unique_names(&fields).0,
            ["name_cs", "ISO3166-1_", "ISO3166-_1"]
        );
        let clashing: Vec<Field> = (0..12)
            .map(|i| Field::new(format!("measurement_{i}"), FieldType::Float))
            .collect();
        let names = unique_names(&clashing).0;
        assert_eq!(names[0], "measuremen");
        assert_eq!(names[1], "measurem_1");
        assert_eq!(names[9], "measurem_9");
        assert_eq!(names[10], "measurem10");
        assert_eq!(names[11], "measurem11");
    }
}

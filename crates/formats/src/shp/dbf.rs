//! The dBASE (.dbf) attribute table: header and field descriptors, record decoding, code pages,
//! and the writer's encoding of values.
//!
//! Written here rather than through the `dbase` crate so that a field count, header length or
//! record length from the file is checked against [`ReadLimits`] before anything is allocated,
//! and so that records are decoded straight into model values in one reusable buffer.

use std::io::Read;

use chrono::NaiveDate;
use encoding_rs::Encoding;

use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};
use crate::model::{Field, FieldType, Value};

const DBF: &str = "dBASE";

/// One field descriptor of a .dbf header.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DbfField {
    /// The model field (name decoded, type mapped, width and decimals kept).
    pub field: Field,
    /// The dBASE type letter.
    pub letter: u8,
    /// Width in bytes.
    pub width: usize,
}

/// A parsed .dbf header.
#[derive(Debug, Clone)]
pub(crate) struct DbfHeader {
    /// Record count the header claims.
    pub records: u32,
    /// Bytes per record, including the deletion flag.
    pub record_bytes: usize,
    /// Field descriptors in order.
    pub fields: Vec<DbfField>,
}

fn dbf_error(location: impl Into<String>, message: impl Into<String>) -> FormatError {
    FormatError::invalid(DBF, location, message)
}

fn read_exact(reader: &mut impl Read, buffer: &mut [u8], what: &str) -> FormatResult<()> {
    reader
        .read_exact(buffer)
        .map_err(|error| dbf_error("header", format!("cannot read {what}: {error}")))
}

/// Reads the header and field descriptors, leaving `reader` at the first record.
pub(crate) fn read_header(
    reader: &mut impl Read,
    encoding: Option<&'static Encoding>,
    limits: &ReadLimits,
) -> FormatResult<(DbfHeader, &'static Encoding)> {
    let mut fixed = [0u8; 32];
    read_exact(reader, &mut fixed, "the 32-byte header")?;
    let [_, _, _, _, r0, r1, r2, r3, h0, h1, b0, b1, ..] = fixed;
    let records = u32::from_le_bytes([r0, r1, r2, r3]);
    let header_bytes = usize::from(u16::from_le_bytes([h0, h1]));
    let record_bytes = usize::from(u16::from_le_bytes([b0, b1]));
    let language_driver = fixed.get(29).copied().unwrap_or(0);
    let encoding = encoding.unwrap_or_else(|| encoding_of_language_driver(language_driver));
    if header_bytes < 33 {
        return Err(dbf_error(
            "byte 8",
            format!("header length {header_bytes} is under 33"),
        ));
    }
    let field_slots = (header_bytes - 33) / 32;
    check_limit("fields of a .dbf", field_slots as u64, limits.fields_max)?;
    let mut fields = Vec::with_capacity(field_slots);
    let mut consumed = 32usize;
    let mut descriptor = [0u8; 32];
    let mut offset = 1usize;
    loop {
        let mut first = [0u8; 1];
        read_exact(reader, &mut first, "a field descriptor")?;
        consumed = consumed.saturating_add(1);
        if first == [0x0D] || consumed > header_bytes {
            break;
        }
        if fields.len() >= field_slots {
            return Err(dbf_error(
                "header",
                "field descriptors run past the header length",
            ));
        }
        descriptor[0] = first[0];
        read_exact(
            reader,
            descriptor.get_mut(1..).unwrap_or_default(),
            "a field descriptor",
        )?;
        consumed = consumed.saturating_add(31);
        let field = parse_descriptor(&descriptor, encoding);
        offset = offset.saturating_add(field.width);
        fields.push(field);
    }
    if offset > record_bytes {
        return Err(dbf_error(
            "header",
            format!("fields need {offset} bytes per record but records are {record_bytes} bytes"),
        ));
    }
    skip(reader, header_bytes.saturating_sub(consumed))?;
    let header = DbfHeader {
        records,
        record_bytes,
        fields,
    };
    Ok((header, encoding))
}

fn skip(reader: &mut impl Read, count: usize) -> FormatResult<()> {
    let skipped = std::io::copy(&mut reader.take(count as u64), &mut std::io::sink())
        .map_err(|error| dbf_error("header", error.to_string()))?;
    if skipped != count as u64 {
        return Err(dbf_error("header", "file ends inside the header"));
    }
    Ok(())
}

fn parse_descriptor(descriptor: &[u8; 32], encoding: &'static Encoding) -> DbfField {
    let raw_name = descriptor.get(..11).unwrap_or_default();
    let name_end = raw_name
        .iter()
        .position(|byte| *byte == 0)
        .unwrap_or(raw_name.len());
    let name = decode_text(raw_name.get(..name_end).unwrap_or_default(), encoding)
        .trim()
        .to_owned();
    let letter = descriptor[11].to_ascii_uppercase();
    let width = descriptor[16];
    let decimals = descriptor[17];
    let field_type = match letter {
        b'N' | b'F' if decimals == 0 && width <= 18 => FieldType::Integer,
        b'N' | b'F' => FieldType::Float,
        b'L' => FieldType::Boolean,
        b'D' => FieldType::Date,
        _ => FieldType::Text,
    };
    let numeric = matches!(letter, b'N' | b'F');
    DbfField {
        field: Field {
            name,
            field_type,
            width: Some(u16::from(width)),
            decimals: numeric.then_some(u16::from(decimals)),
        },
        letter,
        width: usize::from(width),
    }
}

/// Decodes bytes in `encoding`; UTF-8 takes a fast path.
pub(crate) fn decode_text(bytes: &[u8], encoding: &'static Encoding) -> String {
    if encoding == encoding_rs::UTF_8 {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    text.into_owned()
}

/// The encoding named by a .cpg file: a label (`UTF-8`, `ISO-8859-1`, `windows-1252`,
/// `CP1251`, `ANSI 1252`) or a bare number (`65001`, `1252`, `88591`).
pub(crate) fn encoding_of_cpg(text: &str) -> Option<&'static Encoding> {
    let label = text.trim();
    let upper = label.to_ascii_uppercase();
    let bare = upper
        .strip_prefix("ANSI ")
        .or_else(|| upper.strip_prefix("CP"))
        .unwrap_or(&upper)
        .trim();
    if bare.chars().all(|c| c.is_ascii_digit()) && !bare.is_empty() {
        return match bare {
            "65001" => Some(encoding_rs::UTF_8),
            "874" | "932" | "936" | "949" | "950" | "866" => {
                Encoding::for_label(format!("cp{bare}").as_bytes())
                    .or_else(|| Encoding::for_label(format!("windows-{bare}").as_bytes()))
            }
            digits if digits.starts_with("125") => {
                Encoding::for_label(format!("windows-{digits}").as_bytes())
            }
            digits => digits
                .strip_prefix("8859")
                .and_then(|part| Encoding::for_label(format!("iso-8859-{part}").as_bytes())),
        };
    }
    Encoding::for_label(label.as_bytes())
}

/// The encoding of a dBASE language driver id; ISO-8859-1 (read as its superset
/// windows-1252) when the byte is 0 or unknown, which is OGR's default too. DOS code pages
/// that `encoding_rs` lacks (437, 850, ...) also fall back to it: their ASCII half agrees.
pub(crate) fn encoding_of_language_driver(id: u8) -> &'static Encoding {
    match id {
        0x26 | 0x65 => encoding_rs::IBM866,
        0x4D | 0x7A => encoding_rs::GBK,
        0x4E | 0x79 => encoding_rs::EUC_KR,
        0x4F | 0x78 => encoding_rs::BIG5,
        0x13 | 0x7B => encoding_rs::SHIFT_JIS,
        0x7C => encoding_rs::WINDOWS_874,
        0xC8 => encoding_rs::WINDOWS_1250,
        0xC9 => encoding_rs::WINDOWS_1251,
        0xCB => encoding_rs::WINDOWS_1253,
        0xCA => encoding_rs::WINDOWS_1254,
        0x7D => encoding_rs::WINDOWS_1255,
        0x7E => encoding_rs::WINDOWS_1256,
        0xCC => encoding_rs::WINDOWS_1257,
        _ => encoding_rs::WINDOWS_1252,
    }
}

fn trim_spaces(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| *b != b' ' && *b != 0)
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| *b != b' ' && *b != 0)
        .map_or(start, |end| end + 1);
    bytes.get(start..end).unwrap_or_default()
}

/// Decodes one record (after its deletion flag) into `values`, one per field.
pub(crate) fn decode_record(
    record: &[u8],
    fields: &[DbfField],
    encoding: &'static Encoding,
    values: &mut Vec<Value>,
) {
    values.clear();
    let mut offset = 1usize;
    for field in fields {
        let end = offset.saturating_add(field.width);
        let raw = record.get(offset..end).unwrap_or_default();
        offset = end;
        values.push(decode_value(raw, field, encoding));
    }
}

fn decode_value(raw: &[u8], field: &DbfField, encoding: &'static Encoding) -> Value {
    let trimmed = trim_spaces(raw);
    match field.field.field_type {
        FieldType::Integer | FieldType::Float => decode_number(trimmed, field.field.field_type),
        FieldType::Boolean => match trimmed.first() {
            Some(b'T' | b't' | b'Y' | b'y') => Value::Boolean(true),
            Some(b'F' | b'f' | b'N' | b'n') => Value::Boolean(false),
            _ => Value::Null,
        },
        FieldType::Date => decode_date(trimmed),
        FieldType::Text | FieldType::DateTime => {
            let end = raw
                .iter()
                .rposition(|b| *b != b' ' && *b != 0)
                .map_or(0, |end| end + 1);
            let text = raw.get(..end).unwrap_or_default();
            if text.is_empty() {
                Value::Null
            } else {
                Value::Text(decode_text(text, encoding))
            }
        }
    }
}

fn decode_number(trimmed: &[u8], field_type: FieldType) -> Value {
    let Ok(text) = std::str::from_utf8(trimmed) else {
        return Value::Null;
    };
    if text.is_empty() || text.starts_with('*') {
        return Value::Null;
    }
    if field_type == FieldType::Integer
        && let Ok(value) = text.parse::<i64>()
    {
        return Value::Integer(value);
    }
    match text.parse::<f64>() {
        Ok(value) if field_type == FieldType::Integer && value.fract() == 0.0 => {
            Value::Integer(value as i64)
        }
        Ok(value) => Value::Float(value),
        Err(_) => Value::Null,
    }
}

fn decode_date(trimmed: &[u8]) -> Value {
    if let [y0, y1, y2, y3, m0, m1, d0, d1] = trimmed
        && trimmed.iter().all(u8::is_ascii_digit)
    {
        let number = |digits: &[u8]| {
            digits
                .iter()
                .fold(0u32, |total, digit| total * 10 + u32::from(digit - b'0'))
        };
        let year = i32::try_from(number(&[*y0, *y1, *y2, *y3])).unwrap_or(0);
        let date = NaiveDate::from_ymd_opt(year, number(&[*m0, *m1]), number(&[*d0, *d1]));
        return date.map_or(Value::Null, Value::Date);
    }
    let Ok(text) = std::str::from_utf8(trimmed) else {
        return Value::Null;
    };
    NaiveDate::parse_from_str(text, "%Y-%m-%d").map_or(Value::Null, Value::Date)
}

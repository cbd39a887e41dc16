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

/// How the text of a .dbf is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextEncoding {
    /// An encoding the .cpg or the language driver byte names.
    Known(&'static Encoding),
    /// ISO-8859-1 proper (bytes 0x80..=0x9F are C1 controls, not windows-1252's letters).
    Latin1,
    /// A DOS code page that `encoding_rs` lacks: ASCII, then this table for 0x80..=0xFF.
    Dos(&'static [char; 128]),
    /// None named, or a .cpg naming none GDAL can use: GDAL then passes the bytes through
    /// undecoded, so text that is valid UTF-8 reads as UTF-8. Basin reads each value as UTF-8
    /// when it is valid UTF-8, else as windows-1252 (a superset of GDAL's ISO-8859-1 default).
    Undeclared,
}

/// Reads the header and field descriptors, leaving `reader` at the first record. `encoding`
/// comes from the .cpg when there is one; otherwise the language driver byte decides, as in
/// GDAL (a .cpg, even one naming no encoding, overrides the byte).
pub(crate) fn read_header(
    reader: &mut impl Read,
    encoding: Option<TextEncoding>,
    limits: &ReadLimits,
) -> FormatResult<(DbfHeader, TextEncoding)> {
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
    // As in GDAL, the header length gives the number of descriptors and a 0x0D ends them
    // sooner; the terminator itself is not required (some old writers put another byte there).
    let field_slots = (header_bytes - 32) / 32;
    check_limit("fields of a .dbf", field_slots as u64, limits.fields_max)?;
    let mut fields = Vec::with_capacity(field_slots);
    let mut consumed = 32usize;
    let mut descriptor = [0u8; 32];
    let mut offset = 1usize;
    while fields.len() < field_slots {
        let mut first = [0u8; 1];
        read_exact(reader, &mut first, "a field descriptor")?;
        consumed = consumed.saturating_add(1);
        if first == [0x0D] {
            break;
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

fn parse_descriptor(descriptor: &[u8; 32], encoding: TextEncoding) -> DbfField {
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
            feature_id: false,
        },
        letter,
        width: usize::from(width),
    }
}

/// Decodes bytes in `encoding`; UTF-8 takes a fast path.
pub(crate) fn decode_text(bytes: &[u8], encoding: TextEncoding) -> String {
    let encoding = match encoding {
        TextEncoding::Known(encoding) => encoding,
        TextEncoding::Dos(table) => {
            return bytes
                .iter()
                .map(|byte| match byte.checked_sub(0x80) {
                    Some(high) => table.get(usize::from(high)).copied().unwrap_or('\u{FFFD}'),
                    None => char::from(*byte),
                })
                .collect();
        }
        TextEncoding::Latin1 => return bytes.iter().map(|byte| char::from(*byte)).collect(),
        TextEncoding::Undeclared => match std::str::from_utf8(bytes) {
            Ok(text) => return text.to_owned(),
            Err(_) => encoding_rs::WINDOWS_1252,
        },
    };
    if encoding == encoding_rs::UTF_8 {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    text.into_owned()
}

/// The encoding named by a .cpg file, by GDAL's rules: a number from 437 to 950 or from 1250
/// to 1258 is that code page (`1252`, `CP1251`, `ANSI 1252` read by their digits), `8859...`
/// an ISO-8859 part, `UTF-8` (and `65001`) UTF-8, anything else a label tried as it stands
/// (`windows-1251`, `Big5`). `None` when it names nothing usable: GDAL then passes the text
/// through undecoded ([`TextEncoding::Undeclared`]).
pub(crate) fn encoding_of_cpg(text: &str) -> Option<TextEncoding> {
    let label = text.lines().next().unwrap_or_default().trim();
    let upper = label.to_ascii_uppercase();
    let bare = upper
        .strip_prefix("ANSI ")
        .or_else(|| upper.strip_prefix("CP"))
        .unwrap_or(&upper)
        .trim();
    if bare == "65001" || upper.starts_with("UTF-8") || upper.starts_with("UTF8") {
        return Some(TextEncoding::Known(encoding_rs::UTF_8));
    }
    let digits: String = bare.chars().take_while(char::is_ascii_digit).collect();
    if let Ok(number) = digits.parse::<u32>()
        && ((437..=950).contains(&number) || (1250..=1258).contains(&number))
    {
        return encoding_of_code_page(number);
    }
    if let Some(part) = bare.strip_prefix("8859") {
        let part = part.trim_start_matches(['-', '_']);
        if part == "1" {
            return Some(TextEncoding::Latin1);
        }
        return Encoding::for_label(format!("iso-8859-{part}").as_bytes()).map(TextEncoding::Known);
    }
    let compact: String = upper
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .collect();
    if matches!(compact.as_str(), "ISO88591" | "LATIN1" | "L1" | "ISOLATIN1") {
        return Some(TextEncoding::Latin1);
    }
    Encoding::for_label(label.as_bytes()).map(TextEncoding::Known)
}

/// The decoding of Windows/DOS code page `number`, where Basin has one.
fn encoding_of_code_page(number: u32) -> Option<TextEncoding> {
    use super::dbf_code_pages as dos;
    let table = match number {
        437 => &dos::CP437,
        737 => &dos::CP737,
        850 => &dos::CP850,
        852 => &dos::CP852,
        857 => &dos::CP857,
        860 => &dos::CP860,
        861 => &dos::CP861,
        863 => &dos::CP863,
        865 => &dos::CP865,
        866 => return Some(TextEncoding::Known(encoding_rs::IBM866)),
        874 => return Some(TextEncoding::Known(encoding_rs::WINDOWS_874)),
        932 => return Some(TextEncoding::Known(encoding_rs::SHIFT_JIS)),
        936 => return Some(TextEncoding::Known(encoding_rs::GBK)),
        949 => return Some(TextEncoding::Known(encoding_rs::EUC_KR)),
        950 => return Some(TextEncoding::Known(encoding_rs::BIG5)),
        10000 => return Some(TextEncoding::Known(encoding_rs::MACINTOSH)),
        10007 => return Some(TextEncoding::Known(encoding_rs::X_MAC_CYRILLIC)),
        1250..=1258 => {
            return Encoding::for_label(format!("windows-{number}").as_bytes())
                .map(TextEncoding::Known);
        }
        _ => return None,
    };
    Some(TextEncoding::Dos(table))
}

/// The encoding of a dBASE language driver id (byte 29), with GDAL's table of ids to code
/// pages. An id of 0, one GDAL does not know, or a code page Basin lacks (895, 620) is
/// [`TextEncoding::Undeclared`], as GDAL then passes the text through.
pub(crate) fn encoding_of_language_driver(id: u8) -> TextEncoding {
    let code_page = match id {
        0x57 => return TextEncoding::Latin1,
        0x01 | 0x0B | 0x0D | 0x0F | 0x11 | 0x15 | 0x18 | 0x19 | 0x1B => 437,
        0x02 | 0x0A | 0x0E | 0x10 | 0x12 | 0x14 | 0x16 | 0x1A | 0x1D | 0x25 | 0x37 => 850,
        0x03 | 0x58 | 0x59 => 1252,
        0x04 => 10000,
        0x08 | 0x17 | 0x66 => 865,
        0x13 | 0x7B => 932,
        0x1C | 0x6C => 863,
        0x1F | 0x22 | 0x23 | 0x40 | 0x64 | 0x87 => 852,
        0x24 => 860,
        0x26 | 0x65 => 866,
        0x4D | 0x7A => 936,
        0x4E | 0x79 => 949,
        0x4F | 0x78 => 950,
        0x50 | 0x7C => 874,
        0x67 => 861,
        0x6A | 0x86 => 737,
        0x6B | 0x88 => 857,
        0x96 => 10007,
        0xC8 => 1250,
        0xC9 => 1251,
        0xCA => 1254,
        0xCB => 1253,
        0xCC => 1257,
        _ => return TextEncoding::Undeclared,
    };
    encoding_of_code_page(code_page).unwrap_or(TextEncoding::Undeclared)
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
    encoding: TextEncoding,
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

fn decode_value(raw: &[u8], field: &DbfField, encoding: TextEncoding) -> Value {
    let trimmed = trim_spaces(raw);
    match field.field.field_type {
        FieldType::Integer | FieldType::Float => decode_number(trimmed, field.field.field_type),
        FieldType::Boolean => match trimmed.first() {
            Some(b'T' | b't' | b'Y' | b'y') => Value::Boolean(true),
            Some(b'F' | b'f' | b'N' | b'n') => Value::Boolean(false),
            _ => Value::Null,
        },
        FieldType::Date => decode_date(trimmed),
        // Leading blanks go too, as GDAL strips them (values right-aligned by some writers).
        FieldType::Text | FieldType::DateTime => {
            if trimmed.is_empty() {
                Value::Null
            } else {
                Value::Text(decode_text(trimmed, encoding))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpg_labels_follow_gdal_rules() {
        let known = |label: &str| match encoding_of_cpg(label) {
            Some(TextEncoding::Known(encoding)) => Some(encoding.name()),
            _ => None,
        };
        assert_eq!(known("UTF-8\n"), Some("UTF-8"));
        assert_eq!(known("65001"), Some("UTF-8"));
        assert_eq!(known("1251"), Some("windows-1251"));
        assert_eq!(known("CP1250"), Some("windows-1250"));
        assert_eq!(known("ANSI 1251"), Some("windows-1251"));
        assert_eq!(known("8859-2"), Some("ISO-8859-2"));
        assert_eq!(known("88595"), Some("ISO-8859-5"));
        assert_eq!(known("Big5"), Some("Big5"));
        assert_eq!(known("936"), Some("GBK"));
        assert_eq!(encoding_of_cpg("ISO-8859-1"), Some(TextEncoding::Latin1));
        assert_eq!(encoding_of_cpg("88591"), Some(TextEncoding::Latin1));
        assert!(matches!(encoding_of_cpg("437"), Some(TextEncoding::Dos(_))));
        assert_eq!(encoding_of_cpg("<html>"), None);
        assert_eq!(encoding_of_cpg("895"), None, "a code page Basin lacks");
    }

    #[test]
    fn undeclared_text_is_utf8_when_valid_else_windows_1252() {
        let undeclared = TextEncoding::Undeclared;
        assert_eq!(decode_text("Łódź".as_bytes(), undeclared), "Łódź");
        assert_eq!(decode_text(b"\x80\xe9", undeclared), "€é");
        assert_eq!(decode_text(b"\x80\xe9", TextEncoding::Latin1), "\u{80}é");
        assert_eq!(
            decode_text(b"a\x81", encoding_of_language_driver(0x01)),
            "aü"
        );
        assert_eq!(encoding_of_language_driver(0), TextEncoding::Undeclared);
        assert_eq!(encoding_of_language_driver(0x7D), TextEncoding::Undeclared);
    }
}

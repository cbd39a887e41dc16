//! The TIFF container on the reading side: byte order, the classic and BigTIFF headers, the
//! first image file directory (IFD) and the values of its tags.
//!
//! Written by hand rather than through the `tiff` crate so that every count and offset a file
//! claims is checked before it is used: a tag value must lie inside the file, arrays are
//! bounded before they are read, and the strip or tile offset arrays (which can hold millions
//! of entries) are never loaded whole but read a row of chunks at a time.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Take};
use std::path::{Path, PathBuf};

use super::FORMAT;
use crate::error::{FormatError, FormatResult};
use crate::limits::check_limit;

/// Most entries of one IFD: the classic format's own maximum (its count is 16 bits). Real
/// GeoTIFFs have 15 to 40; a BigTIFF claiming more is corrupt.
pub(crate) const IFD_ENTRIES_MAX: u64 = 65_535;

/// Bytes of the read buffer: large enough that reading a strip row by row costs few system
/// calls, small enough to be irrelevant next to the data.
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// TIFF field types and their sizes in bytes.
pub(crate) mod field {
    pub const BYTE: u16 = 1;
    pub const ASCII: u16 = 2;
    pub const SHORT: u16 = 3;
    pub const LONG: u16 = 4;
    pub const RATIONAL: u16 = 5;
    pub const SBYTE: u16 = 6;
    pub const UNDEFINED: u16 = 7;
    pub const SSHORT: u16 = 8;
    pub const SLONG: u16 = 9;
    pub const SRATIONAL: u16 = 10;
    pub const FLOAT: u16 = 11;
    pub const DOUBLE: u16 = 12;
    pub const IFD: u16 = 13;
    pub const LONG8: u16 = 16;
    pub const SLONG8: u16 = 17;
    pub const IFD8: u16 = 18;

    /// Bytes of one value of `field_type`, `None` for a type TIFF does not define.
    pub fn size(field_type: u16) -> Option<u64> {
        Some(match field_type {
            BYTE | ASCII | SBYTE | UNDEFINED => 1,
            SHORT | SSHORT => 2,
            LONG | SLONG | FLOAT | IFD => 4,
            RATIONAL | SRATIONAL | DOUBLE | LONG8 | SLONG8 | IFD8 => 8,
            _ => return None,
        })
    }
}

/// The byte order of a TIFF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ByteOrder {
    /// `II`.
    Little,
    /// `MM`.
    Big,
}

impl ByteOrder {
    /// An unsigned integer of 1, 2, 4 or 8 bytes; `None` for other lengths.
    pub fn unsigned(self, bytes: &[u8]) -> Option<u64> {
        let mut wide = [0u8; 8];
        let length = bytes.len();
        if !matches!(length, 1 | 2 | 4 | 8) {
            return None;
        }
        match self {
            Self::Little => {
                wide.get_mut(..length)?.copy_from_slice(bytes);
                Some(u64::from_le_bytes(wide))
            }
            Self::Big => {
                wide.get_mut(8 - length..)?.copy_from_slice(bytes);
                Some(u64::from_be_bytes(wide))
            }
        }
    }

    fn f64_of(self, bytes: [u8; 8]) -> f64 {
        match self {
            Self::Little => f64::from_le_bytes(bytes),
            Self::Big => f64::from_be_bytes(bytes),
        }
    }

    fn f32_of(self, bytes: [u8; 4]) -> f32 {
        match self {
            Self::Little => f32::from_le_bytes(bytes),
            Self::Big => f32::from_be_bytes(bytes),
        }
    }
}

/// One IFD entry: a tag, its type and count, and the 4 or 8 bytes holding either the value
/// itself or the offset of the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Tag number.
    pub tag: u16,
    /// Field type.
    pub field_type: u16,
    /// Number of values.
    pub count: u64,
    /// The value field as stored (4 bytes used in classic TIFF).
    inline: [u8; 8],
}

/// The entries of the first IFD.
#[derive(Debug, Clone, Default)]
pub(crate) struct Directory {
    entries: Vec<Entry>,
}

impl Directory {
    /// The entry of `tag`, if present (the first one, should a broken file repeat it).
    pub fn get(&self, tag: u16) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.tag == tag)
    }
}

/// An open TIFF file: the header has been read and checked.
pub(crate) struct TiffFile {
    reader: BufReader<File>,
    path: PathBuf,
    /// File length in bytes.
    pub length: u64,
    /// Byte order of every value.
    pub order: ByteOrder,
    /// True for BigTIFF (8-byte offsets).
    pub big: bool,
    first_ifd: u64,
}

impl TiffFile {
    /// Opens `path` and reads the header.
    pub fn open(path: &Path) -> FormatResult<Self> {
        let file = File::open(path).map_err(|source| FormatError::read(path, source))?;
        let length = file
            .metadata()
            .map_err(|source| FormatError::read(path, source))?
            .len();
        let mut tiff = Self {
            reader: BufReader::with_capacity(READ_BUFFER_BYTES, file),
            path: path.to_owned(),
            length,
            order: ByteOrder::Little,
            big: false,
            first_ifd: 0,
        };
        tiff.read_header()?;
        Ok(tiff)
    }

    fn read_header(&mut self) -> FormatResult<()> {
        let mut head = [0u8; 16];
        let available = usize::try_from(self.length.min(16)).unwrap_or(16);
        self.read_at(
            0,
            head.get_mut(..available).unwrap_or_default(),
            "the header",
        )?;
        self.order = match head.get(..2) {
            Some(b"II") if available >= 2 => ByteOrder::Little,
            Some(b"MM") if available >= 2 => ByteOrder::Big,
            _ => {
                return Err(FormatError::invalid(
                    FORMAT,
                    "byte 0",
                    "not a TIFF file: it does not start with II or MM",
                ));
            }
        };
        let order = self.order;
        let field = |range: std::ops::Range<usize>| {
            head.get(range)
                .and_then(|bytes| order.unsigned(bytes))
                .unwrap_or(0)
        };
        let (header_bytes, first_ifd) = match field(2..4) {
            42 => (8, field(4..8)),
            43 => {
                if field(4..6) != 8 || field(6..8) != 0 {
                    return Err(FormatError::invalid(
                        FORMAT,
                        "byte 4",
                        "a BigTIFF header must give an offset size of 8",
                    ));
                }
                self.big = true;
                (16, field(8..16))
            }
            _ => {
                return Err(FormatError::invalid(
                    FORMAT,
                    "byte 2",
                    "not a TIFF file: the version is neither 42 (TIFF) nor 43 (BigTIFF)",
                ));
            }
        };
        if available < header_bytes {
            return Err(FormatError::invalid(
                FORMAT,
                "byte 0",
                "the file ends inside the TIFF header",
            ));
        }
        self.first_ifd = first_ifd;
        Ok(())
    }

    /// Reads the first IFD. Multi-page files: the others are not looked at.
    pub fn first_directory(&mut self) -> FormatResult<Directory> {
        let offset = self.first_ifd;
        if offset == 0 {
            return Err(FormatError::invalid(
                FORMAT,
                "the header",
                "the file has no image (its first IFD offset is 0)",
            ));
        }
        let (count_bytes, entry_bytes): (u64, u64) = if self.big { (8, 20) } else { (2, 12) };
        let mut count_field = [0u8; 8];
        let count_slice = count_field
            .get_mut(..usize::try_from(count_bytes).unwrap_or(8))
            .unwrap_or_default();
        self.read_at(offset, count_slice, "the IFD")?;
        let count = self.order.unsigned(count_slice).unwrap_or(0);
        check_limit("TIFF IFD entry count", count, IFD_ENTRIES_MAX)?;
        let table_bytes = count.saturating_mul(entry_bytes);
        let table_start = offset.saturating_add(count_bytes);
        self.check_range(table_start, table_bytes, "the IFD")?;
        let mut table = vec![0u8; usize::try_from(table_bytes).unwrap_or(0)];
        self.read_at(table_start, &mut table, "the IFD")?;
        let entry_size = usize::try_from(entry_bytes).unwrap_or(12);
        let entries = table
            .chunks_exact(entry_size)
            .map(|raw| self.entry(raw))
            .collect();
        Ok(Directory { entries })
    }

    fn entry(&self, raw: &[u8]) -> Entry {
        let order = self.order;
        let tag = order
            .unsigned(raw.get(0..2).unwrap_or_default())
            .unwrap_or(0);
        let field_type = order
            .unsigned(raw.get(2..4).unwrap_or_default())
            .unwrap_or(0);
        let (count, value) = if self.big {
            (raw.get(4..12), raw.get(12..20))
        } else {
            (raw.get(4..8), raw.get(8..12))
        };
        let mut inline = [0u8; 8];
        let value = value.unwrap_or_default();
        if let Some(target) = inline.get_mut(..value.len()) {
            target.copy_from_slice(value);
        }
        Entry {
            tag: u16::try_from(tag).unwrap_or(0),
            field_type: u16::try_from(field_type).unwrap_or(0),
            count: order.unsigned(count.unwrap_or_default()).unwrap_or(0),
            inline,
        }
    }

    /// Where an entry's values start and how many bytes they take; checks that they lie
    /// inside the file.
    fn value_location(&self, entry: &Entry) -> FormatResult<Location> {
        let size = field::size(entry.field_type).ok_or_else(|| {
            FormatError::invalid(
                FORMAT,
                tag_location(entry.tag),
                format!("unknown field type {}", entry.field_type),
            )
        })?;
        let bytes = entry.count.checked_mul(size).ok_or_else(|| {
            FormatError::invalid(FORMAT, tag_location(entry.tag), "absurd value count")
        })?;
        let inline_bytes = if self.big { 8 } else { 4 };
        if bytes <= inline_bytes {
            return Ok(Location::Inline { bytes });
        }
        let offset_field = self.inline_offset_field(entry);
        let offset = self.order.unsigned(offset_field).unwrap_or(0);
        self.check_range(offset, bytes, &tag_location(entry.tag))?;
        Ok(Location::File { offset, bytes })
    }

    fn inline_offset_field<'e>(&self, entry: &'e Entry) -> &'e [u8] {
        let width = if self.big { 8 } else { 4 };
        entry.inline.get(..width).unwrap_or_default()
    }

    /// The raw bytes of an entry's values, at most `bytes_max` of them.
    pub fn value_bytes(
        &mut self,
        entry: &Entry,
        what: &'static str,
        bytes_max: u64,
    ) -> FormatResult<Vec<u8>> {
        match self.value_location(entry)? {
            Location::Inline { bytes, .. } => Ok(entry
                .inline
                .get(..usize::try_from(bytes).unwrap_or(0))
                .unwrap_or_default()
                .to_vec()),
            Location::File { offset, bytes, .. } => {
                check_limit(what, bytes, bytes_max)?;
                let mut buffer = vec![0u8; usize::try_from(bytes).unwrap_or(0)];
                self.read_at(offset, &mut buffer, &tag_location(entry.tag))?;
                Ok(buffer)
            }
        }
    }

    /// The values of an unsigned integer entry (BYTE, SHORT, LONG, LONG8, IFD), at most
    /// `count_max` of them.
    pub fn unsigned(
        &mut self,
        entry: &Entry,
        what: &'static str,
        count_max: u64,
    ) -> FormatResult<Vec<u64>> {
        check_limit(what, entry.count, count_max)?;
        let size = unsigned_size(entry)?;
        let bytes = self.value_bytes(entry, what, u64::MAX)?;
        let order = self.order;
        Ok(bytes
            .chunks_exact(size)
            .filter_map(|value| order.unsigned(value))
            .collect())
    }

    /// The first value of an unsigned integer entry.
    pub fn scalar(&mut self, entry: &Entry) -> FormatResult<u64> {
        let size = unsigned_size(entry)?;
        if entry.count == 0 {
            return Err(FormatError::invalid(
                FORMAT,
                tag_location(entry.tag),
                "the tag has no value",
            ));
        }
        let bytes = match self.value_location(entry)? {
            Location::Inline { .. } => entry.inline.get(..size).unwrap_or_default().to_vec(),
            Location::File { offset, .. } => {
                let mut buffer = vec![0u8; size];
                self.read_at(offset, &mut buffer, &tag_location(entry.tag))?;
                buffer
            }
        };
        Ok(self.order.unsigned(&bytes).unwrap_or(0))
    }

    /// `count` values of an unsigned entry starting at value `first`: a window into a strip
    /// or tile offset array, which is never read whole.
    pub fn unsigned_range(
        &mut self,
        entry: &Entry,
        first: u64,
        count: usize,
        into: &mut Vec<u64>,
    ) -> FormatResult<()> {
        into.clear();
        let size = unsigned_size(entry)?;
        let end = first.checked_add(count as u64);
        if end.is_none_or(|end| end > entry.count) {
            return Err(FormatError::invalid(
                FORMAT,
                tag_location(entry.tag),
                format!("{} values, more are needed", entry.count),
            ));
        }
        let size64 = size as u64;
        let bytes = match self.value_location(entry)? {
            Location::Inline { bytes, .. } => {
                let start = usize::try_from(first.saturating_mul(size64)).unwrap_or(usize::MAX);
                let length = count.saturating_mul(size);
                entry
                    .inline
                    .get(..usize::try_from(bytes).unwrap_or(0))
                    .and_then(|all| all.get(start..start.saturating_add(length)))
                    .unwrap_or_default()
                    .to_vec()
            }
            Location::File { offset, .. } => {
                let start = offset.saturating_add(first.saturating_mul(size64));
                let mut buffer = vec![0u8; count.saturating_mul(size)];
                self.read_at(start, &mut buffer, &tag_location(entry.tag))?;
                buffer
            }
        };
        let order = self.order;
        into.extend(
            bytes
                .chunks_exact(size)
                .filter_map(|value| order.unsigned(value)),
        );
        Ok(())
    }

    /// The values of a DOUBLE or FLOAT entry (model tags, GeoDoubleParams), at most
    /// `count_max`.
    pub fn doubles(
        &mut self,
        entry: &Entry,
        what: &'static str,
        count_max: u64,
    ) -> FormatResult<Vec<f64>> {
        check_limit(what, entry.count, count_max)?;
        let bytes = self.value_bytes(entry, what, u64::MAX)?;
        let order = self.order;
        match entry.field_type {
            field::DOUBLE => Ok(bytes
                .chunks_exact(8)
                .filter_map(|value| value.try_into().ok())
                .map(|value| order.f64_of(value))
                .collect()),
            field::FLOAT => Ok(bytes
                .chunks_exact(4)
                .filter_map(|value| value.try_into().ok())
                .map(|value| f64::from(order.f32_of(value)))
                .collect()),
            _ => Err(FormatError::invalid(
                FORMAT,
                tag_location(entry.tag),
                format!("{what} must be DOUBLE values"),
            )),
        }
    }

    /// The text of an ASCII (or BYTE/UNDEFINED) entry, up to its first NUL, at most
    /// `bytes_max` bytes; invalid UTF-8 is replaced.
    pub fn text(
        &mut self,
        entry: &Entry,
        what: &'static str,
        bytes_max: u64,
    ) -> FormatResult<String> {
        if !matches!(
            entry.field_type,
            field::ASCII | field::BYTE | field::UNDEFINED
        ) {
            return Err(FormatError::invalid(
                FORMAT,
                tag_location(entry.tag),
                format!("{what} must be ASCII text"),
            ));
        }
        check_limit(what, entry.count, bytes_max)?;
        let bytes = self.value_bytes(entry, what, bytes_max)?;
        let text = bytes.split(|&byte| byte == 0).next().unwrap_or_default();
        Ok(String::from_utf8_lossy(text).into_owned())
    }

    /// A reader of the `bytes` bytes of a strip or tile at `offset`; checked to lie inside the
    /// file.
    pub fn chunk(
        &mut self,
        offset: u64,
        bytes: u64,
        what: &str,
    ) -> FormatResult<Take<&mut BufReader<File>>> {
        self.check_range(offset, bytes, what)?;
        self.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|source| FormatError::read(&self.path, source))?;
        Ok((&mut self.reader).take(bytes))
    }

    fn check_range(&self, offset: u64, bytes: u64, what: &str) -> FormatResult<()> {
        let end = offset.checked_add(bytes);
        if end.is_none_or(|end| end > self.length) {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {offset}"),
                format!(
                    "{what}: {bytes} bytes at offset {offset} run past the end of the file ({} bytes); the file is truncated or corrupt",
                    self.length
                ),
            ));
        }
        Ok(())
    }

    fn read_at(&mut self, offset: u64, buffer: &mut [u8], what: &str) -> FormatResult<()> {
        self.check_range(offset, buffer.len() as u64, what)?;
        self.reader
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.reader.read_exact(buffer))
            .map_err(|source| FormatError::read(&self.path, source))
    }
}

enum Location {
    Inline { bytes: u64 },
    File { offset: u64, bytes: u64 },
}

fn unsigned_size(entry: &Entry) -> FormatResult<usize> {
    match entry.field_type {
        field::BYTE => Ok(1),
        field::SHORT => Ok(2),
        field::LONG | field::IFD => Ok(4),
        field::LONG8 | field::IFD8 => Ok(8),
        other => Err(FormatError::invalid(
            FORMAT,
            tag_location(entry.tag),
            format!("field type {other} where an unsigned integer is required"),
        )),
    }
}

/// `tag 273` for messages.
pub(crate) fn tag_location(tag: u16) -> String {
    format!("tag {tag}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_values_follow_the_byte_order() {
        assert_eq!(ByteOrder::Little.unsigned(&[1, 2]), Some(0x0201));
        assert_eq!(ByteOrder::Big.unsigned(&[1, 2]), Some(0x0102));
        assert_eq!(
            ByteOrder::Big.unsigned(&[0, 0, 0, 0, 0, 0, 1, 0]),
            Some(256)
        );
        assert_eq!(ByteOrder::Little.unsigned(&[1, 2, 3]), None);
    }
}

//! The token level of a DFS file: `0xFE tag` opens a block, `0xFF` closes it, and anything else
//! is a typed record (`type`, `i32 count`, `count` values). The grammar needs no schema to
//! tokenise, so this layer checks every count against the bytes that are left before it
//! allocates: a header that claims a billion values in a 1 kB file fails here, cheaply.

use std::io::{BufRead, Seek, SeekFrom};

use crate::error::{FormatError, FormatResult};
use crate::model::{DataType, Values};

use super::FORMAT;

/// First byte of a block opening.
pub(crate) const OPEN: u8 = 0xFE;
/// The byte closing a block.
pub(crate) const CLOSE: u8 = 0xFF;

/// The DFS simple type code of a data type (1 f32, 2 f64, 3 byte, 4 i32, 5 u32, 6 i16, 7 u16).
pub fn type_code(data_type: DataType) -> u8 {
    match data_type {
        DataType::F32 => 1,
        DataType::F64 => 2,
        DataType::U8 => 3,
        DataType::I32 => 4,
        DataType::U32 => 5,
        DataType::I16 => 6,
        DataType::U16 => 7,
    }
}

/// The data type of a DFS simple type code.
pub fn data_type_of(code: i64) -> Option<DataType> {
    Some(match code {
        1 => DataType::F32,
        2 => DataType::F64,
        3 => DataType::U8,
        4 => DataType::I32,
        5 => DataType::U32,
        6 => DataType::I16,
        7 => DataType::U16,
        _ => return None,
    })
}

/// What comes next in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Open,
    Close,
    Record,
    End,
}

/// A cursor over the tokens of a DFS file, knowing its position and length.
pub(crate) struct Tokens<R> {
    input: R,
    position: u64,
    length: u64,
}

impl<R: BufRead + Seek> Tokens<R> {
    pub(crate) fn new(input: R, position: u64, length: u64) -> Self {
        Self {
            input,
            position,
            length,
        }
    }

    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    pub(crate) fn remaining(&self) -> u64 {
        self.length.saturating_sub(self.position)
    }

    pub(crate) fn into_inner(self) -> R {
        self.input
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::invalid(FORMAT, format!("byte {}", self.position), message)
    }

    /// Moves to `position` (used for random access to the data section).
    pub(crate) fn seek(&mut self, position: u64) -> FormatResult<()> {
        let delta = i64::try_from(position).unwrap_or(i64::MAX)
            - i64::try_from(self.position).unwrap_or(i64::MAX);
        self.input
            .seek_relative(delta)
            .or_else(|_| self.input.seek(SeekFrom::Start(position)).map(|_| ()))
            .map_err(|error| self.io_error(error))?;
        self.position = position;
        Ok(())
    }

    fn io_error(&self, error: std::io::Error) -> FormatError {
        if error.kind() == std::io::ErrorKind::UnexpectedEof {
            return self.error("the file ends too early");
        }
        self.error(format!("read failed: {error}"))
    }

    pub(crate) fn bytes(&mut self, buffer: &mut [u8]) -> FormatResult<()> {
        self.input
            .read_exact(buffer)
            .map_err(|error| self.io_error(error))?;
        self.position += buffer.len() as u64;
        Ok(())
    }

    /// Up to the next `N` bytes without consuming them (fewer at the end of the file, or when
    /// the buffer holds fewer).
    fn peek_bytes<const N: usize>(&mut self) -> FormatResult<([u8; N], usize)> {
        let position = self.position;
        let buffer = self.input.fill_buf().map_err(|error| {
            FormatError::invalid(
                FORMAT,
                format!("byte {position}"),
                format!("read failed: {error}"),
            )
        })?;
        let mut out = [0_u8; N];
        let count = buffer.len().min(N);
        for (slot, byte) in out.iter_mut().zip(buffer) {
            *slot = *byte;
        }
        Ok((out, count))
    }

    fn peek_byte(&mut self) -> FormatResult<Option<u8>> {
        let ([byte], count) = self.peek_bytes::<1>()?;
        Ok((count == 1).then_some(byte))
    }

    /// The kind of the next token.
    pub(crate) fn next(&mut self) -> FormatResult<Next> {
        Ok(match self.peek_byte()? {
            None => Next::End,
            Some(OPEN) => Next::Open,
            Some(CLOSE) => Next::Close,
            Some(_) => Next::Record,
        })
    }

    /// The tag of the block opening next, without consuming it; `None` when something else
    /// comes next.
    pub(crate) fn peek_tag(&mut self) -> FormatResult<Option<u16>> {
        let ([first, low, high], count) = self.peek_bytes::<3>()?;
        match (first, count) {
            (OPEN, 3) => Ok(Some(u16::from_le_bytes([low, high]))),
            (OPEN, _) => {
                // Too few bytes buffered to see the tag: fall back to reading and rewinding.
                let start = self.position;
                let tag = self.open()?;
                self.seek(start)?;
                Ok(Some(tag))
            }
            _ => Ok(None),
        }
    }

    /// Reads a block opening and returns its tag.
    pub(crate) fn open(&mut self) -> FormatResult<u16> {
        let mut buffer = [0_u8; 3];
        let at = self.position;
        self.bytes(&mut buffer)?;
        let [marker, low, high] = buffer;
        if marker != OPEN {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!("expected a block (0xFE), found 0x{marker:02X}"),
            ));
        }
        Ok(u16::from_le_bytes([low, high]))
    }

    /// Reads a block opening that must have tag `expected`.
    pub(crate) fn expect_open(&mut self, expected: u16, what: &str) -> FormatResult<()> {
        let at = self.position;
        let tag = self.open()?;
        if tag != expected {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!("expected {what} (tag {expected}), found tag {tag}"),
            ));
        }
        Ok(())
    }

    /// Reads the byte closing a block.
    pub(crate) fn close(&mut self) -> FormatResult<()> {
        let at = self.position;
        let mut buffer = [0_u8; 1];
        self.bytes(&mut buffer)?;
        if buffer[0] != CLOSE {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!(
                    "expected the end of a block (0xFF), found 0x{:02X}",
                    buffer[0]
                ),
            ));
        }
        Ok(())
    }

    /// Reads the 5-byte head of a record: its type and count. The count is checked against
    /// the bytes left in the file.
    pub(crate) fn record_head(&mut self) -> FormatResult<(DataType, usize)> {
        let at = self.position;
        let mut head = [0_u8; 5];
        self.bytes(&mut head)?;
        let [code, c0, c1, c2, c3] = head;
        let Some(data_type) = data_type_of(i64::from(code)) else {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!("unknown record type {code}"),
            ));
        };
        let count = i32::from_le_bytes([c0, c1, c2, c3]);
        let Ok(count) = usize::try_from(count) else {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!("negative record length {count}"),
            ));
        };
        let bytes = (count as u64).saturating_mul(data_type.size_bytes() as u64);
        if bytes > self.remaining() {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!(
                    "a record of {count} values needs {bytes} bytes but only {} are left",
                    self.remaining()
                ),
            ));
        }
        Ok((data_type, count))
    }

    /// Reads one typed record.
    pub(crate) fn record(&mut self) -> FormatResult<Values> {
        let (data_type, count) = self.record_head()?;
        let mut values = Values::with_capacity(data_type, 0);
        self.record_body(data_type, count, &mut values)?;
        Ok(values)
    }

    /// Reads the `count` values of a record whose head was read into `values` (cleared
    /// first, its allocation reused).
    pub(crate) fn record_body(
        &mut self,
        data_type: DataType,
        count: usize,
        values: &mut Values,
    ) -> FormatResult<()> {
        if values.data_type() != data_type {
            *values = Values::with_capacity(data_type, count);
        }
        values.clear();
        let mut raw = vec![0_u8; count * data_type.size_bytes()];
        self.bytes(&mut raw)?;
        decode_into(&raw, values);
        Ok(())
    }

    /// Reads records until the block closes.
    pub(crate) fn records_until_close(&mut self) -> FormatResult<Vec<Values>> {
        let mut records = Vec::new();
        loop {
            match self.next()? {
                Next::Record => records.push(self.record()?),
                Next::Close => {
                    self.close()?;
                    return Ok(records);
                }
                Next::Open => return Err(self.error("unexpected nested block")),
                Next::End => return Err(self.error("the file ends inside a block")),
            }
        }
    }
}

/// Decodes little-endian bytes into `values` (whose variant gives the type).
pub(crate) fn decode_into(raw: &[u8], values: &mut Values) {
    match values {
        Values::U8(out) => out.extend_from_slice(raw),
        Values::I16(out) => out.extend(
            raw.as_chunks::<2>()
                .0
                .iter()
                .map(|b| i16::from_le_bytes(*b)),
        ),
        Values::U16(out) => out.extend(
            raw.as_chunks::<2>()
                .0
                .iter()
                .map(|b| u16::from_le_bytes(*b)),
        ),
        Values::I32(out) => out.extend(
            raw.as_chunks::<4>()
                .0
                .iter()
                .map(|b| i32::from_le_bytes(*b)),
        ),
        Values::U32(out) => out.extend(
            raw.as_chunks::<4>()
                .0
                .iter()
                .map(|b| u32::from_le_bytes(*b)),
        ),
        Values::F32(out) => out.extend(
            raw.as_chunks::<4>()
                .0
                .iter()
                .map(|b| f32::from_le_bytes(*b)),
        ),
        Values::F64(out) => out.extend(
            raw.as_chunks::<8>()
                .0
                .iter()
                .map(|b| f64::from_le_bytes(*b)),
        ),
    }
}

/// Encodes `values` as little-endian bytes onto `out`.
pub(crate) fn encode(values: &Values, out: &mut Vec<u8>) {
    match values {
        Values::U8(v) => out.extend_from_slice(v),
        Values::I16(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Values::U16(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Values::I32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Values::U32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Values::F32(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        Values::F64(v) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
    }
}

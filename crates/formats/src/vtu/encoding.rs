//! The encodings of VTK XML data arrays: element types, ascii text, base64 "binary" with a
//! UInt32 or UInt64 byte-count header, and zlib-compressed blocks (what ParaView writes).
//!
//! Every decoder is given the most bytes the array may hold (from the piece's point and cell
//! counts, already checked against the limits) and refuses more, so that a lying header or a
//! zlib bomb costs at most that much memory.

use std::io::Read;

use base64::Engine;

use super::FORMAT;
use crate::error::{FormatError, FormatResult};
use crate::limits::prealloc_capacity;
use crate::model::{DataType, Values};
use crate::text::shorten;

/// The element type of a VTK data array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VtkType {
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float32,
    Float64,
}

impl VtkType {
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "Int8" | "Char" => Self::Int8,
            "UInt8" | "UnsignedChar" => Self::UInt8,
            "Int16" => Self::Int16,
            "UInt16" => Self::UInt16,
            "Int32" => Self::Int32,
            "UInt32" => Self::UInt32,
            "Int64" => Self::Int64,
            "UInt64" => Self::UInt64,
            "Float32" => Self::Float32,
            "Float64" => Self::Float64,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Int8 => "Int8",
            Self::UInt8 => "UInt8",
            Self::Int16 => "Int16",
            Self::UInt16 => "UInt16",
            Self::Int32 => "Int32",
            Self::UInt32 => "UInt32",
            Self::Int64 => "Int64",
            Self::UInt64 => "UInt64",
            Self::Float32 => "Float32",
            Self::Float64 => "Float64",
        }
    }

    pub(crate) fn size(self) -> usize {
        match self {
            Self::Int8 | Self::UInt8 => 1,
            Self::Int16 | Self::UInt16 => 2,
            Self::Int32 | Self::UInt32 | Self::Float32 => 4,
            Self::Int64 | Self::UInt64 | Self::Float64 => 8,
        }
    }

    /// The VTK type holding values of a model type unchanged.
    pub(crate) fn of(data_type: DataType) -> Self {
        match data_type {
            DataType::U8 => Self::UInt8,
            DataType::I16 => Self::Int16,
            DataType::U16 => Self::UInt16,
            DataType::I32 => Self::Int32,
            DataType::U32 => Self::UInt32,
            DataType::F32 => Self::Float32,
            _ => Self::Float64,
        }
    }
}

/// An array's values as little-endian bytes of its [`VtkType`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawArray {
    pub vtk_type: VtkType,
    pub bytes: Vec<u8>,
}

impl RawArray {
    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() / self.vtk_type.size()
    }

    fn chunks<const N: usize>(&self) -> impl Iterator<Item = [u8; N]> + '_ {
        self.bytes
            .chunks_exact(N)
            .map(|chunk| <[u8; N]>::try_from(chunk).unwrap_or([0; N]))
    }

    /// All values as f64 (64-bit integers beyond 2^53 round).
    pub(crate) fn to_f64(&self) -> Vec<f64> {
        match self.vtk_type {
            VtkType::Int8 => self.bytes.iter().map(|&b| f64::from(b as i8)).collect(),
            VtkType::UInt8 => self.bytes.iter().map(|&b| f64::from(b)).collect(),
            VtkType::Int16 => self
                .chunks()
                .map(|b| f64::from(i16::from_le_bytes(b)))
                .collect(),
            VtkType::UInt16 => self
                .chunks()
                .map(|b| f64::from(u16::from_le_bytes(b)))
                .collect(),
            VtkType::Int32 => self
                .chunks()
                .map(|b| f64::from(i32::from_le_bytes(b)))
                .collect(),
            VtkType::UInt32 => self
                .chunks()
                .map(|b| f64::from(u32::from_le_bytes(b)))
                .collect(),
            VtkType::Int64 => self
                .chunks()
                .map(|b| i64::from_le_bytes(b) as f64)
                .collect(),
            VtkType::UInt64 => self
                .chunks()
                .map(|b| u64::from_le_bytes(b) as f64)
                .collect(),
            VtkType::Float32 => self
                .chunks()
                .map(|b| f64::from(f32::from_le_bytes(b)))
                .collect(),
            VtkType::Float64 => self.chunks().map(f64::from_le_bytes).collect(),
        }
    }

    /// All values as i64, or `None` for a float array or a UInt64 value beyond i64.
    pub(crate) fn to_i64(&self) -> Option<Vec<i64>> {
        Some(match self.vtk_type {
            VtkType::Int8 => self.bytes.iter().map(|&b| i64::from(b as i8)).collect(),
            VtkType::UInt8 => self.bytes.iter().map(|&b| i64::from(b)).collect(),
            VtkType::Int16 => self
                .chunks()
                .map(|b| i64::from(i16::from_le_bytes(b)))
                .collect(),
            VtkType::UInt16 => self
                .chunks()
                .map(|b| i64::from(u16::from_le_bytes(b)))
                .collect(),
            VtkType::Int32 => self
                .chunks()
                .map(|b| i64::from(i32::from_le_bytes(b)))
                .collect(),
            VtkType::UInt32 => self
                .chunks()
                .map(|b| i64::from(u32::from_le_bytes(b)))
                .collect(),
            VtkType::Int64 => self.chunks().map(i64::from_le_bytes).collect(),
            VtkType::UInt64 => self
                .chunks()
                .map(|b| i64::try_from(u64::from_le_bytes(b)).ok())
                .collect::<Option<Vec<_>>>()?,
            VtkType::Float32 | VtkType::Float64 => return None,
        })
    }

    /// The values in the model type that holds them unchanged (Int8 widens to Int16; Int64
    /// and UInt64, which the model lacks, become Float64).
    pub(crate) fn to_values(&self) -> Values {
        match self.vtk_type {
            VtkType::UInt8 => Values::U8(self.bytes.clone()),
            VtkType::Int8 => Values::I16(self.bytes.iter().map(|&b| i16::from(b as i8)).collect()),
            VtkType::Int16 => Values::I16(self.chunks().map(i16::from_le_bytes).collect()),
            VtkType::UInt16 => Values::U16(self.chunks().map(u16::from_le_bytes).collect()),
            VtkType::Int32 => Values::I32(self.chunks().map(i32::from_le_bytes).collect()),
            VtkType::UInt32 => Values::U32(self.chunks().map(u32::from_le_bytes).collect()),
            VtkType::Float32 => Values::F32(self.chunks().map(f32::from_le_bytes).collect()),
            VtkType::Int64 | VtkType::UInt64 | VtkType::Float64 => Values::F64(self.to_f64()),
        }
    }
}

/// How binary arrays are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Framing {
    /// UInt64 byte counts instead of UInt32.
    pub wide_header: bool,
    /// zlib-compressed blocks.
    pub compressed: bool,
}

/// Parses ascii text of `vtk_type` values, at most `max_values` of them.
pub(crate) fn decode_ascii(
    text: &str,
    vtk_type: VtkType,
    max_values: u64,
    name: &str,
) -> FormatResult<RawArray> {
    // The array is kept with its capacity, so reserve for the values the text can hold (a
    // value takes a character and a separator), not for the piece's counts: otherwise each
    // empty array of a piece claiming many points would reserve up to PREALLOC_BYTES_MAX.
    let values_in_text = ((text.len() / 2) as u64).saturating_add(1);
    let values_max = max_values.min(values_in_text);
    let size = vtk_type.size();
    let mut bytes = Vec::with_capacity(prealloc_capacity(values_max, size).saturating_mul(size));
    let mut count: u64 = 0;
    for token in text.split_whitespace() {
        count = count.saturating_add(1);
        if count > max_values {
            return Err(too_many(name, max_values));
        }
        push_token(&mut bytes, token, vtk_type).ok_or_else(|| {
            FormatError::invalid(
                FORMAT,
                format!("DataArray {name:?}"),
                format!("{:?} is not a valid {}", shorten(token), vtk_type.name()),
            )
        })?;
    }
    Ok(RawArray { vtk_type, bytes })
}

fn push_token(bytes: &mut Vec<u8>, token: &str, vtk_type: VtkType) -> Option<()> {
    match vtk_type {
        VtkType::Int8 => bytes.extend(token.parse::<i8>().ok()?.to_le_bytes()),
        VtkType::UInt8 => bytes.extend(token.parse::<u8>().ok()?.to_le_bytes()),
        VtkType::Int16 => bytes.extend(token.parse::<i16>().ok()?.to_le_bytes()),
        VtkType::UInt16 => bytes.extend(token.parse::<u16>().ok()?.to_le_bytes()),
        VtkType::Int32 => bytes.extend(token.parse::<i32>().ok()?.to_le_bytes()),
        VtkType::UInt32 => bytes.extend(token.parse::<u32>().ok()?.to_le_bytes()),
        VtkType::Int64 => bytes.extend(token.parse::<i64>().ok()?.to_le_bytes()),
        VtkType::UInt64 => bytes.extend(token.parse::<u64>().ok()?.to_le_bytes()),
        VtkType::Float32 => bytes.extend(token.parse::<f32>().ok()?.to_le_bytes()),
        VtkType::Float64 => bytes.extend(token.parse::<f64>().ok()?.to_le_bytes()),
    }
    Some(())
}

/// Decodes base64 that may be several padded base64 streams one after another (VTK encodes
/// the header of a compressed array separately from its data; meshio and VTK differ in
/// whether an uncompressed header is encoded with its data).
pub(crate) fn decode_base64(text: &[u8], name: &str) -> FormatResult<Vec<u8>> {
    let clean: Vec<u8> = text
        .iter()
        .copied()
        .filter(|byte| !byte.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    let mut rest = clean.as_slice();
    while !rest.is_empty() {
        let end = match rest.iter().position(|&byte| byte == b'=') {
            Some(first_pad) => (first_pad / 4 + 1).saturating_mul(4).min(rest.len()),
            None => rest.len(),
        };
        let (segment, tail) = rest.split_at(end);
        base64::engine::general_purpose::STANDARD
            .decode_vec(segment, &mut out)
            .map_err(|error| {
                FormatError::invalid(
                    FORMAT,
                    format!("DataArray {name:?}"),
                    format!("bad base64: {error}"),
                )
            })?;
        rest = tail;
    }
    Ok(out)
}

/// Reads one framed binary array (header, then raw or compressed data) from `source`,
/// refusing more than `max_bytes` of data.
pub(crate) fn decode_framed(
    source: &mut impl Read,
    framing: Framing,
    max_bytes: u64,
    name: &str,
) -> FormatResult<Vec<u8>> {
    let invalid =
        |message: String| FormatError::invalid(FORMAT, format!("DataArray {name:?}"), message);
    if !framing.compressed {
        let count = read_count(source, framing, name)?;
        if count > max_bytes {
            return Err(invalid(format!(
                "its header claims {count} bytes, more than the {max_bytes} the piece allows"
            )));
        }
        return read_exact_bytes(source, count, name);
    }
    let blocks = read_count(source, framing, name)?;
    let block_size = read_count(source, framing, name)?;
    let last_size = read_count(source, framing, name)?;
    let total = if blocks == 0 {
        0
    } else {
        block_size
            .checked_mul(blocks.saturating_sub(1))
            .and_then(|full| {
                full.checked_add(if last_size == 0 {
                    block_size
                } else {
                    last_size
                })
            })
            .ok_or_else(|| invalid("absurd block sizes in its compression header".into()))?
    };
    if total > max_bytes || blocks > max_bytes.saturating_add(1) {
        return Err(invalid(format!(
            "its compression header claims {total} bytes, more than the {max_bytes} the piece allows"
        )));
    }
    let mut sizes = Vec::with_capacity(prealloc_capacity(blocks, 8));
    for _ in 0..blocks {
        sizes.push(read_count(source, framing, name)?);
    }
    let mut out = Vec::with_capacity(prealloc_capacity(total, 1));
    for (index, compressed_size) in sizes.into_iter().enumerate() {
        let expected = if index as u64 + 1 == blocks && last_size != 0 {
            last_size
        } else {
            block_size
        };
        let compressed = read_exact_bytes(source, compressed_size, name)?;
        let before = out.len();
        flate2::read::ZlibDecoder::new(compressed.as_slice())
            .take(expected)
            .read_to_end(&mut out)
            .map_err(|error| invalid(format!("zlib block {index}: {error}")))?;
        let decoded = out.len().saturating_sub(before) as u64;
        if decoded != expected {
            return Err(invalid(format!(
                "zlib block {index} holds {decoded} bytes, its header says {expected}"
            )));
        }
    }
    Ok(out)
}

fn read_count(source: &mut impl Read, framing: Framing, name: &str) -> FormatResult<u64> {
    if framing.wide_header {
        let mut bytes = [0; 8];
        read_exact(source, &mut bytes, name)?;
        Ok(u64::from_le_bytes(bytes))
    } else {
        let mut bytes = [0; 4];
        read_exact(source, &mut bytes, name)?;
        Ok(u64::from(u32::from_le_bytes(bytes)))
    }
}

fn read_exact(source: &mut impl Read, buffer: &mut [u8], name: &str) -> FormatResult<()> {
    source.read_exact(buffer).map_err(|_| truncated(name))
}

fn read_exact_bytes(source: &mut impl Read, count: u64, name: &str) -> FormatResult<Vec<u8>> {
    let mut bytes = Vec::with_capacity(prealloc_capacity(count, 1));
    source
        .take(count)
        .read_to_end(&mut bytes)
        .map_err(|_| truncated(name))?;
    if bytes.len() as u64 != count {
        return Err(truncated(name));
    }
    Ok(bytes)
}

fn truncated(name: &str) -> FormatError {
    FormatError::invalid(
        FORMAT,
        format!("DataArray {name:?}"),
        "its binary data ends early (truncated?)",
    )
}

fn too_many(name: &str, max_values: u64) -> FormatError {
    FormatError::invalid(
        FORMAT,
        format!("DataArray {name:?}"),
        format!("more than the {max_values} values the piece allows"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_ascii_array_of_a_huge_piece_reserves_almost_nothing() {
        let array = decode_ascii(" \n ", VtkType::Float64, 100_000_000, "a").unwrap();
        assert!(array.bytes.is_empty());
        assert!(
            array.bytes.capacity() <= 3 * 8,
            "{}",
            array.bytes.capacity()
        );
    }

    #[test]
    fn an_ascii_array_reserves_for_at_most_the_values_its_text_can_hold() {
        let array = decode_ascii("1 2 3", VtkType::Float64, 100_000_000, "a").unwrap();
        assert_eq!(array.len(), 3);
        assert!(
            array.bytes.capacity() <= 3 * 8,
            "{}",
            array.bytes.capacity()
        );
    }
}

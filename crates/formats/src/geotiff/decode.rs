//! Turning the stored bytes of a strip or tile into values: decompression (deflate, LZW,
//! PackBits, Zstandard) as streaming readers, so that a strip of any height is decoded one row at a
//! time; JPEG, decoded a whole strip or tile at a time (a JPEG image cannot be read in part);
//! the horizontal and floating-point predictors; and the conversion of samples in the file's
//! byte order into the model's typed buffers.

use std::io::{self, BufRead, Read};

use super::FORMAT;
use super::ifd::ByteOrder;
use crate::error::{FormatError, FormatResult};
use crate::model::{DataType, Values};

/// How strips or tiles are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    /// Stored as is (code 1).
    None,
    /// zlib deflate (codes 8 and 32946).
    Deflate,
    /// LZW with TIFF's early code-size change (code 5).
    Lzw,
    /// PackBits run-length coding (code 32773).
    PackBits,
    /// Zstandard, one frame per strip or tile (code 50000, GDAL's `COMPRESS=ZSTD`).
    Zstd,
    /// JPEG, one baseline or progressive JPEG image per strip or tile with the tables shared
    /// in `JPEGTables` (code 7, GDAL's `COMPRESS=JPEG`).
    Jpeg,
}

impl Compression {
    /// The compression of a TIFF `Compression` code; other codes are named in the error.
    pub fn from_code(code: u64) -> FormatResult<Self> {
        Ok(match code {
            1 => Self::None,
            5 => Self::Lzw,
            8 | 32946 => Self::Deflate,
            32773 => Self::PackBits,
            50000 => Self::Zstd,
            7 => Self::Jpeg,
            6 => {
                return Err(FormatError::unsupported(
                    FORMAT,
                    "compression 6 (old-style JPEG, which TIFF deprecated in 1995); only JPEG as TIFF Technical Note 2 defines it (compression 7) is read (convert with gdal_translate -co COMPRESS=DEFLATE)",
                ));
            }
            other => {
                let name = match other {
                    2..=4 => "CCITT fax",
                    34712 => "JPEG 2000",
                    34887 => "LERC",
                    34925 => "LZMA",
                    50001 => "WebP",
                    _ => "an unknown method",
                };
                return Err(FormatError::unsupported(
                    FORMAT,
                    format!(
                        "compression {other} ({name}); supported are none, deflate, LZW, PackBits, ZSTD and JPEG (convert with gdal_translate -co COMPRESS=DEFLATE)"
                    ),
                ));
            }
        })
    }
}

/// The TIFF predictor applied before compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Predictor {
    /// 1: none.
    None,
    /// 2: horizontal differencing of samples.
    Horizontal,
    /// 3: floating point (bytes regrouped by significance, then differenced).
    FloatingPoint,
}

impl Predictor {
    /// The predictor of a TIFF `Predictor` code.
    pub fn from_code(code: u64) -> FormatResult<Self> {
        match code {
            1 => Ok(Self::None),
            2 => Ok(Self::Horizontal),
            3 => Ok(Self::FloatingPoint),
            other => Err(FormatError::unsupported(
                FORMAT,
                format!(
                    "predictor {other}; only 1 (none), 2 (horizontal) and 3 (floating point) exist"
                ),
            )),
        }
    }

    /// The TIFF code.
    pub fn code(self) -> u16 {
        match self {
            Self::None => 1,
            Self::Horizontal => 2,
            Self::FloatingPoint => 3,
        }
    }
}

/// How one sample is stored, and so which model type it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleKind {
    /// Unsigned integers of 1, 2 or 4 bits, packed from the most significant bit; read as U8.
    Packed(u8),
    /// Unsigned 8-bit.
    U8,
    /// Signed 8-bit; read as I16, because the model has no signed byte (exact).
    I8,
    /// Unsigned 16-bit.
    U16,
    /// Signed 16-bit.
    I16,
    /// Unsigned 32-bit.
    U32,
    /// Signed 32-bit.
    I32,
    /// IEEE half float; read as F32 (exact), as GDAL does.
    F16,
    /// IEEE single.
    F32,
    /// IEEE double.
    F64,
}

impl SampleKind {
    /// The kind of `bits` bits per sample with TIFF `SampleFormat` code `format` (1 unsigned,
    /// 2 signed, 3 float, 4 undefined, read as unsigned as GDAL does).
    pub fn from_tiff(bits: u64, format: u64) -> FormatResult<Self> {
        Ok(match (format, bits) {
            (1 | 4, 1 | 2 | 4) => Self::Packed(u8::try_from(bits).unwrap_or(8)),
            (1 | 4, 8) => Self::U8,
            (2, 8) => Self::I8,
            (1 | 4, 16) => Self::U16,
            (2, 16) => Self::I16,
            (1 | 4, 32) => Self::U32,
            (2, 32) => Self::I32,
            (3, 16) => Self::F16,
            (3, 32) => Self::F32,
            (3, 64) => Self::F64,
            (1 | 2 | 4, 64) => {
                return Err(FormatError::unsupported(
                    FORMAT,
                    "64-bit integer samples; Basin's grids hold at most 32-bit integers (convert with gdal_translate -ot Float64)",
                ));
            }
            (5 | 6, _) => {
                return Err(FormatError::unsupported(FORMAT, "complex samples"));
            }
            (format, bits) => {
                return Err(FormatError::unsupported(
                    FORMAT,
                    format!("{bits}-bit samples of sample format {format}"),
                ));
            }
        })
    }

    /// Bits of one sample.
    pub fn bits(self) -> u64 {
        match self {
            Self::Packed(bits) => u64::from(bits),
            Self::U8 | Self::I8 => 8,
            Self::U16 | Self::I16 | Self::F16 => 16,
            Self::U32 | Self::I32 | Self::F32 => 32,
            Self::F64 => 64,
        }
    }

    /// The model type the samples become.
    pub fn data_type(self) -> DataType {
        match self {
            Self::Packed(_) | Self::U8 => DataType::U8,
            Self::I8 | Self::I16 => DataType::I16,
            Self::U16 => DataType::U16,
            Self::U32 => DataType::U32,
            Self::I32 => DataType::I32,
            Self::F16 | Self::F32 => DataType::F32,
            Self::F64 => DataType::F64,
        }
    }

    /// Checks that `predictor` applies to these samples, as libtiff does.
    pub fn check_predictor(self, predictor: Predictor) -> FormatResult<()> {
        let fits = match predictor {
            Predictor::None => true,
            Predictor::Horizontal => !matches!(self, Self::Packed(_)),
            Predictor::FloatingPoint => matches!(self, Self::F16 | Self::F32 | Self::F64),
        };
        if fits {
            return Ok(());
        }
        Err(FormatError::unsupported(
            FORMAT,
            format!(
                "predictor {} with {}-bit samples",
                predictor.code(),
                self.bits()
            ),
        ))
    }
}

/// What decoding a JPEG strip or tile needs besides its bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct JpegSetup {
    /// `JPEGTables` (347): an abbreviated JPEG stream (SOI, tables, EOI) with the quantisation
    /// and Huffman tables the chunks share; empty when each chunk carries its own.
    pub tables: Vec<u8>,
    /// Samples of a pixel in one chunk: 1 (grey, or one band of a planar file) or 3.
    pub samples: usize,
    /// The samples are YCbCr (`PhotometricInterpretation` 6) and are read as RGB, as GDAL
    /// reads them (libtiff's `JPEGCOLORMODE_RGB`).
    pub ycbcr: bool,
    /// Pixels across one chunk: the tile width, or the image width for strips.
    pub width: usize,
    /// Most rows of one chunk: the tile height, or the rows per strip. A JPEG header claiming
    /// more is refused before its pixels are allocated.
    pub height: usize,
}

/// A reader of the decompressed bytes of one strip or tile. `jpeg` is used for JPEG only.
pub(crate) fn decompressor<'a, R: BufRead + 'a>(
    compression: Compression,
    jpeg: &JpegSetup,
    mut raw: R,
) -> Box<dyn Read + 'a> {
    match compression {
        Compression::Jpeg => {
            // The chunk's size was checked against the file and CHUNK_BYTES_MAX by the caller.
            let mut data = Vec::new();
            let decoded = raw
                .read_to_end(&mut data)
                .and_then(|_| decode_jpeg(&data, jpeg));
            match decoded {
                Ok(pixels) => Box::new(io::Cursor::new(pixels)),
                Err(error) => Box::new(FailingReader(Some(error))),
            }
        }
        Compression::None => Box::new(raw),
        Compression::Deflate => Box::new(flate2::bufread::ZlibDecoder::new(raw)),
        Compression::Lzw => Box::new(LzwReader {
            inner: raw,
            decoder: weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8),
            done: false,
        }),
        Compression::PackBits => Box::new(PackBitsReader {
            inner: raw,
            state: PackBits::Header,
        }),
        // The frame header is read here; its window size is checked against ruzstd's default
        // limit (128 MiB) and the window buffer grows only as data is decoded, so a header
        // claiming a huge window costs nothing.
        Compression::Zstd => match ruzstd::decoding::StreamingDecoder::new(raw) {
            Ok(decoder) => Box::new(decoder),
            Err(error) => Box::new(FailingReader(Some(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a Zstandard frame: {error}"),
            )))),
        },
    }
}

/// Decodes one JPEG strip or tile into interleaved 8-bit samples, rows of `jpeg.width`
/// pixels.
fn decode_jpeg(chunk: &[u8], jpeg: &JpegSetup) -> io::Result<Vec<u8>> {
    use zune_jpeg::zune_core::colorspace::ColorSpace;
    use zune_jpeg::zune_core::options::DecoderOptions;
    let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidData, message);
    // The chunk is a JPEG stream whose tables may be in JPEGTables: the tables (without their
    // end marker) followed by the chunk (without its start marker) make one complete stream.
    let stream: std::borrow::Cow<'_, [u8]> = match (
        jpeg.tables.strip_suffix(&[0xFF, 0xD9]),
        chunk.strip_prefix(&[0xFF, 0xD8]),
    ) {
        (Some(tables), Some(body)) if tables.starts_with(&[0xFF, 0xD8]) => {
            let mut joined = Vec::with_capacity(tables.len() + body.len());
            joined.extend_from_slice(tables);
            joined.extend_from_slice(body);
            joined.into()
        }
        _ => chunk.into(),
    };
    let wanted = match jpeg.samples {
        1 => ColorSpace::Luma,
        3 => ColorSpace::RGB,
        other => {
            return Err(invalid(format!(
                "JPEG chunks of {other} samples per pixel are not read (1 or 3)"
            )));
        }
    };
    let options = DecoderOptions::default()
        .set_max_width(usize::from(u16::MAX))
        .set_max_height(usize::from(u16::MAX))
        .jpeg_set_out_colorspace(wanted);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(
        zune_jpeg::zune_core::bytestream::ZCursor::new(&stream[..]),
        options,
    );
    decoder
        .decode_headers()
        .map_err(|error| invalid(format!("not a JPEG image: {error:?}")))?;
    // RGB stored as such (PhotometricInterpretation 2): components whose ids do not say RGB
    // would otherwise be taken for YCbCr and converted; asking for YCbCr out keeps them as
    // they are.
    if jpeg.samples == 3 && !jpeg.ycbcr && decoder.input_colorspace() == Some(ColorSpace::YCbCr) {
        decoder.set_options(options.jpeg_set_out_colorspace(ColorSpace::YCbCr));
    }
    let info = decoder
        .info()
        .ok_or_else(|| invalid("the JPEG header has no size".to_owned()))?;
    if usize::from(info.width) != jpeg.width || usize::from(info.height) > jpeg.height {
        return Err(invalid(format!(
            "the JPEG image is {} x {} pixels, the chunk {} x {}",
            info.width, info.height, jpeg.width, jpeg.height
        )));
    }
    let pixels = decoder
        .decode()
        .map_err(|error| invalid(format!("the JPEG data cannot be decoded: {error:?}")))?;
    let expected = jpeg
        .width
        .saturating_mul(usize::from(info.height))
        .saturating_mul(jpeg.samples);
    if pixels.len() != expected {
        return Err(invalid(format!(
            "the JPEG image decodes to {} bytes, {expected} expected for {} samples per pixel",
            pixels.len(),
            jpeg.samples
        )));
    }
    Ok(pixels)
}

/// A reader whose first read fails with a stored error, for decoders that fail on their
/// header.
struct FailingReader(Option<io::Error>);

impl Read for FailingReader {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(self
            .0
            .take()
            .unwrap_or_else(|| io::Error::from(io::ErrorKind::InvalidData)))
    }
}

/// Reads exactly `buffer.len()` decompressed bytes, naming the chunk when the data is short
/// or corrupt.
pub(crate) fn read_chunk_bytes(
    reader: &mut dyn Read,
    buffer: &mut [u8],
    what: &str,
) -> FormatResult<()> {
    reader.read_exact(buffer).map_err(|error| {
        let message = if error.kind() == io::ErrorKind::UnexpectedEof {
            "its data ends early (truncated or corrupt)".to_owned()
        } else {
            format!("its data cannot be decoded: {error}")
        };
        FormatError::invalid(FORMAT, what.to_owned(), message)
    })
}

struct LzwReader<R> {
    inner: R,
    decoder: weezl::decode::Decoder,
    done: bool,
}

impl<R: BufRead> Read for LzwReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.done || out.is_empty() {
            return Ok(0);
        }
        loop {
            let input = self.inner.fill_buf()?;
            let input_empty = input.is_empty();
            let result = self.decoder.decode_bytes(input, out);
            self.inner.consume(result.consumed_in);
            match result.status {
                Err(error) => return Err(io::Error::new(io::ErrorKind::InvalidData, error)),
                Ok(weezl::LzwStatus::Done) => {
                    self.done = true;
                    return Ok(result.consumed_out);
                }
                Ok(_) if result.consumed_out > 0 => return Ok(result.consumed_out),
                Ok(_) if input_empty || result.consumed_in == 0 => return Ok(0),
                Ok(_) => {}
            }
        }
    }
}

enum PackBits {
    Header,
    Literal(usize),
    Run(u8, usize),
}

struct PackBitsReader<R> {
    inner: R,
    state: PackBits,
}

impl<R: BufRead> Read for PackBitsReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.state {
                PackBits::Header => {
                    let mut header = [0u8; 1];
                    if self.inner.read(&mut header)? == 0 {
                        return Ok(0);
                    }
                    let code = i8::from_ne_bytes(header);
                    self.state = match code {
                        0..=127 => PackBits::Literal(usize::from(code.unsigned_abs()) + 1),
                        -127..=-1 => {
                            let mut value = [0u8; 1];
                            self.inner.read_exact(&mut value)?;
                            let [value] = value;
                            PackBits::Run(value, usize::from(code.unsigned_abs()) + 1)
                        }
                        -128 => PackBits::Header,
                    };
                }
                PackBits::Literal(remaining) => {
                    let length = remaining.min(out.len());
                    let read = self.inner.read(out.get_mut(..length).unwrap_or_default())?;
                    if read == 0 {
                        return Ok(0);
                    }
                    let left = remaining.saturating_sub(read);
                    self.state = if left == 0 {
                        PackBits::Header
                    } else {
                        PackBits::Literal(left)
                    };
                    return Ok(read);
                }
                PackBits::Run(value, remaining) => {
                    let length = remaining.min(out.len());
                    out.get_mut(..length).unwrap_or_default().fill(value);
                    let left = remaining.saturating_sub(length);
                    self.state = if left == 0 {
                        PackBits::Header
                    } else {
                        PackBits::Run(value, left)
                    };
                    return Ok(length);
                }
            }
        }
    }
}

/// Undoes `predictor` on one row of a chunk. `row` holds whole samples in the file's byte
/// order; `stride` is the samples per pixel of the chunk (1 for planar files). `scratch` is
/// reused between rows.
pub(crate) fn undo_predictor(
    predictor: Predictor,
    kind: SampleKind,
    order: ByteOrder,
    row: &mut [u8],
    stride: usize,
    scratch: &mut Vec<u8>,
) {
    let size = usize::try_from(kind.bits() / 8).unwrap_or(1).max(1);
    match predictor {
        Predictor::None => {}
        Predictor::Horizontal => undo_horizontal(row, size, stride, order),
        Predictor::FloatingPoint => undo_floating_point(row, size, stride, order, scratch),
    }
}

fn undo_horizontal(row: &mut [u8], size: usize, stride: usize, order: ByteOrder) {
    let step = size.saturating_mul(stride);
    if size == 1 {
        for index in step..row.len() {
            let previous = row.get(index - step).copied().unwrap_or(0);
            if let Some(byte) = row.get_mut(index) {
                *byte = byte.wrapping_add(previous);
            }
        }
        return;
    }
    let mask = if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    };
    let mut start = step;
    while start.saturating_add(size) <= row.len() {
        let previous = row
            .get(start - step..start - step + size)
            .and_then(|bytes| order.unsigned(bytes))
            .unwrap_or(0);
        if let Some(bytes) = row.get_mut(start..start + size) {
            let current = order.unsigned(bytes).unwrap_or(0);
            store_unsigned(bytes, current.wrapping_add(previous) & mask, order);
        }
        start += size;
    }
}

fn store_unsigned(bytes: &mut [u8], value: u64, order: ByteOrder) {
    let size = bytes.len();
    match order {
        ByteOrder::Little => {
            if let Some(source) = value.to_le_bytes().get(..size) {
                bytes.copy_from_slice(source);
            }
        }
        ByteOrder::Big => {
            if let Some(source) = value.to_be_bytes().get(8usize.saturating_sub(size)..) {
                bytes.copy_from_slice(source);
            }
        }
    }
}

/// libtiff's `fpAcc`: bytes are differenced with a stride of the samples per pixel, and
/// stored as planes of equal significance, most significant first, whatever the file's byte
/// order. The row is rebuilt in the file's byte order.
fn undo_floating_point(
    row: &mut [u8],
    size: usize,
    stride: usize,
    order: ByteOrder,
    scratch: &mut Vec<u8>,
) {
    for index in stride..row.len() {
        let previous = row.get(index - stride).copied().unwrap_or(0);
        if let Some(byte) = row.get_mut(index) {
            *byte = byte.wrapping_add(previous);
        }
    }
    scratch.clear();
    scratch.extend_from_slice(row);
    let samples = row.len() / size;
    for (sample, target) in row.chunks_exact_mut(size).enumerate() {
        for (significance, byte) in (0..size).zip(0..) {
            let source = scratch
                .get(significance * samples + sample)
                .copied()
                .unwrap_or(0);
            let position = match order {
                ByteOrder::Big => byte,
                ByteOrder::Little => size - 1 - byte,
            };
            if let Some(slot) = target.get_mut(position) {
                *slot = source;
            }
        }
    }
}

/// Appends `count` samples of `row` to `out`: sample `first`, then every `step`-th (`step`
/// is the samples per pixel of a chunky file, 1 for planar files). Returns false when the
/// row is too short or `out` has another type (a bug of the caller).
pub(crate) fn append_samples(
    kind: SampleKind,
    order: ByteOrder,
    row: &[u8],
    first: usize,
    step: usize,
    count: usize,
    out: &mut Values,
) -> bool {
    let little = order == ByteOrder::Little;
    match (kind, out) {
        (SampleKind::Packed(bits), Values::U8(out)) => {
            append_packed(row, bits, first, step, count, out)
        }
        (SampleKind::U8, Values::U8(out)) => append(row, first, step, count, out, |[b]: [u8; 1]| b),
        (SampleKind::I8, Values::I16(out)) => append(row, first, step, count, out, |b: [u8; 1]| {
            i16::from(i8::from_ne_bytes(b))
        }),
        (SampleKind::U16, Values::U16(out)) if little => {
            append(row, first, step, count, out, u16::from_le_bytes)
        }
        (SampleKind::U16, Values::U16(out)) => {
            append(row, first, step, count, out, u16::from_be_bytes)
        }
        (SampleKind::I16, Values::I16(out)) if little => {
            append(row, first, step, count, out, i16::from_le_bytes)
        }
        (SampleKind::I16, Values::I16(out)) => {
            append(row, first, step, count, out, i16::from_be_bytes)
        }
        (SampleKind::U32, Values::U32(out)) if little => {
            append(row, first, step, count, out, u32::from_le_bytes)
        }
        (SampleKind::U32, Values::U32(out)) => {
            append(row, first, step, count, out, u32::from_be_bytes)
        }
        (SampleKind::I32, Values::I32(out)) if little => {
            append(row, first, step, count, out, i32::from_le_bytes)
        }
        (SampleKind::I32, Values::I32(out)) => {
            append(row, first, step, count, out, i32::from_be_bytes)
        }
        (SampleKind::F16, Values::F32(out)) if little => {
            append(row, first, step, count, out, |b| {
                f16_to_f32(u16::from_le_bytes(b))
            })
        }
        (SampleKind::F16, Values::F32(out)) => append(row, first, step, count, out, |b| {
            f16_to_f32(u16::from_be_bytes(b))
        }),
        (SampleKind::F32, Values::F32(out)) if little => {
            append(row, first, step, count, out, f32::from_le_bytes)
        }
        (SampleKind::F32, Values::F32(out)) => {
            append(row, first, step, count, out, f32::from_be_bytes)
        }
        (SampleKind::F64, Values::F64(out)) if little => {
            append(row, first, step, count, out, f64::from_le_bytes)
        }
        (SampleKind::F64, Values::F64(out)) => {
            append(row, first, step, count, out, f64::from_be_bytes)
        }
        _ => false,
    }
}

fn append<const SIZE: usize, T>(
    row: &[u8],
    first: usize,
    step: usize,
    count: usize,
    out: &mut Vec<T>,
    decode: impl Fn([u8; SIZE]) -> T,
) -> bool {
    let Some(samples) = row.get(first.saturating_mul(SIZE)..) else {
        return false;
    };
    let before = out.len();
    out.extend(
        samples
            .chunks(step.saturating_mul(SIZE).max(SIZE))
            .take(count)
            .filter_map(|sample| sample.get(..SIZE)?.try_into().ok())
            .map(&decode),
    );
    out.len() - before == count
}

fn append_packed(
    row: &[u8],
    bits: u8,
    first: usize,
    step: usize,
    count: usize,
    out: &mut Vec<u8>,
) -> bool {
    let bits_usize = usize::from(bits);
    let mask = (1u16 << bits) - 1;
    for index in 0..count {
        let sample = first.saturating_add(index.saturating_mul(step));
        let bit = sample.saturating_mul(bits_usize);
        let Some(&byte) = row.get(bit / 8) else {
            return false;
        };
        let shift = 8usize.saturating_sub(bits_usize + bit % 8);
        let value = (u16::from(byte) >> shift) & mask;
        out.push(u8::try_from(value).unwrap_or(0));
    }
    true
}

/// An IEEE half float widened to single precision (exact).
pub(crate) fn f16_to_f32(half: u16) -> f32 {
    let sign = u32::from(half >> 15) << 31;
    let exponent = u32::from((half >> 10) & 0x1f);
    let mantissa = u32::from(half & 0x3ff);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = mantissa * 2^-24, exact in f32.
            let magnitude = mantissa as f32 * f32::from_bits(0x3380_0000);
            return if sign == 0 { magnitude } else { -magnitude };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (mantissa << 13),
        _ => sign | ((exponent + 112) << 23) | (mantissa << 13),
    };
    f32::from_bits(bits)
}

/// Appends `count` copies of `value` (a nodata value or 0) in `out`'s type; a value the type
/// cannot hold becomes 0.
pub(crate) fn append_fill(out: &mut Values, value: f64, count: usize) {
    fn fill<T: Copy>(out: &mut Vec<T>, value: Option<T>, zero: T, count: usize) {
        out.extend(std::iter::repeat_n(value.unwrap_or(zero), count));
    }
    let integer = |min: f64, max: f64| {
        (value.fract() == 0.0 && value >= min && value <= max).then_some(value)
    };
    match out {
        Values::U8(out) => fill(out, integer(0.0, 255.0).map(|v| v as u8), 0, count),
        Values::I16(out) => fill(out, integer(-32768.0, 32767.0).map(|v| v as i16), 0, count),
        Values::U16(out) => fill(out, integer(0.0, 65535.0).map(|v| v as u16), 0, count),
        Values::I32(out) => fill(
            out,
            integer(-2_147_483_648.0, 2_147_483_647.0).map(|v| v as i32),
            0,
            count,
        ),
        Values::U32(out) => fill(
            out,
            integer(0.0, 4_294_967_295.0).map(|v| v as u32),
            0,
            count,
        ),
        Values::F32(out) => fill(out, Some(value as f32), 0.0, count),
        Values::F64(out) => fill(out, Some(value), 0.0, count),
    }
}

/// Appends `from[start..start + length]` to `out` (same type); false when out of range or
/// the types differ.
pub(crate) fn append_range(out: &mut Values, from: &Values, start: usize, length: usize) -> bool {
    fn copy<T: Copy>(out: &mut Vec<T>, from: &[T], start: usize, length: usize) -> bool {
        let Some(part) = from.get(start..start.saturating_add(length)) else {
            return false;
        };
        out.extend_from_slice(part);
        true
    }
    match (out, from) {
        (Values::U8(out), Values::U8(from)) => copy(out, from, start, length),
        (Values::I16(out), Values::I16(from)) => copy(out, from, start, length),
        (Values::U16(out), Values::U16(from)) => copy(out, from, start, length),
        (Values::I32(out), Values::I32(from)) => copy(out, from, start, length),
        (Values::U32(out), Values::U32(from)) => copy(out, from, start, length),
        (Values::F32(out), Values::F32(from)) => copy(out, from, start, length),
        (Values::F64(out), Values::F64(from)) => copy(out, from, start, length),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(compression: Compression, data: &[u8], length: usize) -> io::Result<Vec<u8>> {
        let mut out = vec![0u8; length];
        decompressor(compression, &JpegSetup::default(), data).read_exact(&mut out)?;
        Ok(out)
    }

    #[test]
    fn packbits_decodes_the_tiff_specification_example() {
        let packed = [
            0xFE, 0xAA, 0x02, 0x80, 0x00, 0x2A, 0xFD, 0xAA, 0x03, 0x80, 0x00, 0x2A, 0x22, 0xF7,
            0xAA,
        ];
        let expected = [
            0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0xAA, 0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0x22,
            0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA,
        ];
        assert_eq!(
            read_all(Compression::PackBits, &packed, expected.len()).unwrap(),
            expected
        );
        assert!(read_all(Compression::PackBits, &packed, expected.len() + 1).is_err());
    }

    #[test]
    fn lzw_decodes_what_weezl_encodes_in_tiff_mode() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 7 + i / 300) as u8).collect();
        let encoded = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
            .encode(&data)
            .unwrap();
        assert_eq!(
            read_all(Compression::Lzw, &encoded, data.len()).unwrap(),
            data
        );
        assert!(read_all(Compression::Lzw, &encoded[..encoded.len() / 2], data.len()).is_err());
    }

    #[test]
    fn zstd_decodes_what_ruzstd_encodes_and_refuses_garbage() {
        let data: Vec<u8> = (0..50_000u32).map(|i| (i % 13 + i / 700) as u8).collect();
        let encoded = ruzstd::encoding::compress_to_vec(
            data.as_slice(),
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        assert!(encoded.len() < data.len() / 4);
        assert_eq!(
            read_all(Compression::Zstd, &encoded, data.len()).unwrap(),
            data
        );
        assert!(read_all(Compression::Zstd, &encoded[..encoded.len() / 2], data.len()).is_err());
        assert!(read_all(Compression::Zstd, b"not zstd at all", 4).is_err());
        assert!(read_all(Compression::Zstd, b"", 4).is_err());
    }

    #[test]
    fn horizontal_predictor_is_undone_per_sample_with_wrapping() {
        let mut row = vec![10u8, 20, 5, 5, 251, 0];
        undo_predictor(
            Predictor::Horizontal,
            SampleKind::U8,
            ByteOrder::Little,
            &mut row,
            2,
            &mut Vec::new(),
        );
        assert_eq!(row, [10, 20, 15, 25, 10, 25]);
        let mut wide: Vec<u8> = [1000u16, 65535, 2]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        undo_predictor(
            Predictor::Horizontal,
            SampleKind::U16,
            ByteOrder::Big,
            &mut wide,
            1,
            &mut Vec::new(),
        );
        let values: Vec<u16> = wide
            .chunks(2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(values, [1000, 999, 1001]);
    }

    #[test]
    fn floating_point_predictor_restores_the_values_in_either_byte_order() {
        let values = [1.5f32, -2.25, 1e-30, 3.0e30];
        for order in [ByteOrder::Little, ByteOrder::Big] {
            // Encode as libtiff's fpDiff does: planes of most significant bytes first, then
            // byte differences with a stride of 1.
            let samples = values.len();
            let mut planes = vec![0u8; samples * 4];
            for (sample, value) in values.iter().enumerate() {
                for (significance, byte) in value.to_be_bytes().iter().enumerate() {
                    planes[significance * samples + sample] = *byte;
                }
            }
            for index in (1..planes.len()).rev() {
                planes[index] = planes[index].wrapping_sub(planes[index - 1]);
            }
            undo_predictor(
                Predictor::FloatingPoint,
                SampleKind::F32,
                order,
                &mut planes,
                1,
                &mut Vec::new(),
            );
            let mut out = Values::F32(Vec::new());
            assert!(append_samples(
                SampleKind::F32,
                order,
                &planes,
                0,
                1,
                samples,
                &mut out
            ));
            assert_eq!(out, Values::F32(values.to_vec()));
        }
    }

    #[test]
    fn samples_are_picked_by_band_from_interleaved_rows() {
        let row: Vec<u8> = [1i16, -2, 3, -4, 5, -6]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut out = Values::I16(Vec::new());
        assert!(append_samples(
            SampleKind::I16,
            ByteOrder::Little,
            &row,
            1,
            2,
            3,
            &mut out
        ));
        assert_eq!(out, Values::I16(vec![-2, -4, -6]));
        assert!(!append_samples(
            SampleKind::I16,
            ByteOrder::Little,
            &row,
            1,
            2,
            4,
            &mut out
        ));
        let mut packed = Values::U8(Vec::new());
        assert!(append_samples(
            SampleKind::Packed(2),
            ByteOrder::Little,
            &[0b1110_0100],
            0,
            1,
            4,
            &mut packed
        ));
        assert_eq!(packed, Values::U8(vec![3, 2, 1, 0]));
    }

    #[test]
    fn half_floats_widen_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn fill_values_the_type_cannot_hold_become_zero() {
        let mut out = Values::U8(Vec::new());
        append_fill(&mut out, -9999.0, 2);
        append_fill(&mut out, 255.0, 1);
        assert_eq!(out, Values::U8(vec![0, 0, 255]));
    }
}

//! Tile encodings: the `outputType` of a scheme.
//!
//! - `PNG`: 8-bit RGBA through the scheme's colour ramp, no data transparent.
//! - `WEBP`: the same pixels, lossless WebP (VP8L), so values read back exactly as in PNG.
//! - `RawData`: the values themselves, 32-bit little-endian IEEE floats, row by row from the
//!   top, NaN for no data and for hidden out-of-range values: for clients that colour or
//!   analyse on their own.
//! - `BinnedData256`: an 8-bit grey and alpha PNG whose grey is the value's bin among 255
//!   equal bins over `minValue..maxValue` (0 to 254) and whose alpha is 0 for no data: a
//!   quarter the size of RawData, for clients that colour with their own 256-entry palette.

use std::fmt;

use crate::ramp::Ramp;
use crate::render::TileValues;

/// The encodings of a tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OutputType {
    /// RGBA PNG.
    #[default]
    Png,
    /// Lossless RGBA WebP.
    Webp,
    /// Little-endian `f32` values.
    RawData,
    /// Grey and alpha PNG of bins.
    BinnedData256,
}

impl OutputType {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Png => "PNG",
            Self::Webp => "WEBP",
            Self::RawData => "RawData",
            Self::BinnedData256 => "BinnedData256",
        }
    }

    /// From the wire name, in any case.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Png, Self::Webp, Self::RawData, Self::BinnedData256]
            .into_iter()
            .find(|output| output.name().eq_ignore_ascii_case(text))
    }

    /// The media type of tiles in this encoding.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Png | Self::BinnedData256 => "image/png",
            Self::Webp => "image/webp",
            Self::RawData => "application/octet-stream",
        }
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png | Self::BinnedData256 => "png",
            Self::Webp => "webp",
            Self::RawData => "bin",
        }
    }
}

/// Why a tile could not be encoded (a fault, not bad input: sizes come from the scheme).
#[derive(Debug)]
pub struct EncodeError(String);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tile encoding failed: {}", self.0)
    }
}

impl std::error::Error for EncodeError {}

/// Encodes sampled values.
pub fn encode(tile: &TileValues, ramp: &Ramp, output: OutputType) -> Result<Vec<u8>, EncodeError> {
    let pixels = tile.width as usize * tile.height as usize;
    if tile.values.len() != pixels {
        return Err(EncodeError(format!(
            "{} values for a {}x{} tile",
            tile.values.len(),
            tile.width,
            tile.height
        )));
    }
    match output {
        OutputType::Png => {
            let rgba = colour(tile, ramp);
            png(
                &rgba,
                tile.width,
                tile.height,
                png::ColorType::Rgba,
                png::Compression::Fast,
            )
        }
        OutputType::Webp => {
            let rgba = colour(tile, ramp);
            webp(&rgba, tile.width, tile.height)
        }
        OutputType::RawData => {
            let mut bytes = Vec::with_capacity(pixels * 4);
            for &value in &tile.values {
                let shown = if ramp.colour(value)[3] == 0 {
                    f32::NAN
                } else {
                    value
                };
                bytes.extend_from_slice(&shown.to_le_bytes());
            }
            Ok(bytes)
        }
        OutputType::BinnedData256 => {
            let mut grey_alpha = Vec::with_capacity(pixels * 2);
            for &value in &tile.values {
                match ramp.bin(value) {
                    Some(bin) => grey_alpha.extend_from_slice(&[bin, 255]),
                    None => grey_alpha.extend_from_slice(&[0, 0]),
                }
            }
            png(
                &grey_alpha,
                tile.width,
                tile.height,
                png::ColorType::GrayscaleAlpha,
                png::Compression::Fast,
            )
        }
    }
}

/// The tile that stands for every tile without data: fully transparent (all NaN for RawData).
/// It is made once per scheme, so its PNG is compressed hard.
pub fn empty_tile(width: u32, height: u32, output: OutputType) -> Result<Vec<u8>, EncodeError> {
    let pixels = width as usize * height as usize;
    match output {
        OutputType::Png => {
            return png(
                &vec![0; pixels * 4],
                width,
                height,
                png::ColorType::Rgba,
                png::Compression::High,
            );
        }
        OutputType::BinnedData256 => {
            return png(
                &vec![0; pixels * 2],
                width,
                height,
                png::ColorType::GrayscaleAlpha,
                png::Compression::High,
            );
        }
        OutputType::Webp | OutputType::RawData => {}
    }
    let tile = TileValues {
        width,
        height,
        values: vec![f32::NAN; pixels],
    };
    let ramp = Ramp::new(
        vec![crate::ramp::Rgb([0, 0, 0])],
        0.0,
        0.0,
        crate::ramp::OutOfRange::None,
    )
    .map_err(|error| EncodeError(error.to_string()))?;
    encode(&tile, &ramp, output)
}

fn colour(tile: &TileValues, ramp: &Ramp) -> Vec<u8> {
    let mut rgba = Vec::with_capacity(tile.values.len() * 4);
    for &value in &tile.values {
        rgba.extend_from_slice(&ramp.colour(value));
    }
    rgba
}

fn png(
    data: &[u8],
    width: u32,
    height: u32,
    colour: png::ColorType,
    compression: png::Compression,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(data.len() / 4 + 1024);
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(colour);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(compression);
    let mut writer = encoder
        .write_header()
        .map_err(|error| EncodeError(error.to_string()))?;
    writer
        .write_image_data(data)
        .map_err(|error| EncodeError(error.to_string()))?;
    writer
        .finish()
        .map_err(|error| EncodeError(error.to_string()))?;
    Ok(out)
}

fn webp(rgba: &[u8], width: u32, height: u32) -> Result<Vec<u8>, EncodeError> {
    // The encoder panics on a buffer of the wrong size; `encode` checked it.
    if rgba.len() != width as usize * height as usize * 4 {
        return Err(EncodeError("pixel buffer of the wrong size".to_owned()));
    }
    let mut out = Vec::new();
    image_webp::WebPEncoder::new(&mut out)
        .encode(rgba, width, height, image_webp::ColorType::Rgba8)
        .map_err(|error| EncodeError(error.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ramp::{OutOfRange, Rgb};

    fn tile() -> TileValues {
        TileValues {
            width: 2,
            height: 2,
            values: vec![0.0, 10.0, f32::NAN, 20.0],
        }
    }

    fn ramp() -> Ramp {
        Ramp::new(
            vec![Rgb([0, 0, 0]), Rgb([255, 255, 255])],
            0.0,
            10.0,
            OutOfRange::Above,
        )
        .unwrap()
    }

    fn decode_png(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buffer).unwrap();
        buffer.truncate(info.buffer_size());
        (info, buffer)
    }

    #[test]
    fn png_tiles_carry_the_ramp_colours() {
        let (info, pixels) = decode_png(&encode(&tile(), &ramp(), OutputType::Png).unwrap());
        assert_eq!((info.width, info.height), (2, 2));
        assert_eq!(
            pixels,
            [0, 0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn raw_and_binned_tiles_keep_values() {
        let raw = encode(&tile(), &ramp(), OutputType::RawData).unwrap();
        let values: Vec<f32> = raw
            .chunks(4)
            .map(|chunk| f32::from_le_bytes(chunk.try_into().unwrap()))
            .collect();
        assert_eq!(values[..2], [0.0, 10.0]);
        assert!(values[2].is_nan() && values[3].is_nan(), "hidden above max");
        let (info, grey) =
            decode_png(&encode(&tile(), &ramp(), OutputType::BinnedData256).unwrap());
        assert_eq!(info.color_type, png::ColorType::GrayscaleAlpha);
        assert_eq!(grey, [0, 255, 254, 255, 0, 0, 0, 0]);
    }

    #[test]
    fn webp_tiles_are_lossless_riff_files() {
        let bytes = encode(&tile(), &ramp(), OutputType::Webp).unwrap();
        assert_eq!(&bytes[..4], b"RIFF");
        assert_eq!(&bytes[8..12], b"WEBP");
        let empty = empty_tile(256, 256, OutputType::Png).unwrap();
        let (_, pixels) = decode_png(&empty);
        assert!(pixels.iter().all(|&byte| byte == 0));
        assert!(
            empty.len() < 1024,
            "the empty tile is small: {}",
            empty.len()
        );
    }

    #[test]
    fn a_mismatched_buffer_is_an_error() {
        let mut bad = tile();
        bad.values.pop();
        assert!(encode(&bad, &ramp(), OutputType::Webp).is_err());
    }
}

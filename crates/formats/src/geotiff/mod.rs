//! GeoTIFF rasters: bands as items, nodata, GeoKeys.
//!
//! Rasters in this field arrive as GeoTIFF more than as anything else, often larger than
//! memory, so both directions stream:
//! - the reader ([`reader`]) parses the TIFF structure itself ([`ifd`]) so that every count
//!   and offset is checked before use, decodes strips row by row and tiles a row of tiles at a
//!   time ([`decode`]), and hands on one band after the other;
//! - the writer ([`writer`]) buffers one row of 256 x 256 tiles of one band, compresses tiles
//!   on all cores ([`pipeline`]) and writes the directory at the end, choosing classic TIFF or
//!   BigTIFF from the exact size.
//!
//! Georeferencing (GeoKeys, model tags, GDAL's nodata and metadata tags) is in [`geokeys`] and
//! follows what GDAL reports for the same file. Only the first image of a multi-page file is
//! read (later pages are overviews, masks or unrelated images). docs/formats.md lists what is
//! and is not supported.

mod conversions;
mod decode;
mod geokeys;
mod ifd;
mod pam;
mod pipeline;
mod reader;
mod user_crs;
mod world_file;
mod writer;

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec};
use crate::error::{FormatError, FormatResult};
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, ParameterType, Parameters, SRID, SRID_PARAMETER};

const FORMAT: &str = "GeoTIFF";

/// Most bytes of one decoded tile, or of one row of a strip: a strip is decoded a row at a
/// time, a tile whole. 256 MiB is 64 times a 1024 x 1024 float64 tile of one band, and far
/// beyond any tile GDAL or other writers produce; a header claiming more is refused before
/// anything is allocated.
pub const CHUNK_BYTES_MAX: u64 = 256 * 1024 * 1024;

/// Most bytes of a text tag read whole (`GDAL_METADATA`, `GDAL_NODATA`): band names of
/// thousands of bands fit many times over.
pub const METADATA_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// Most values of the GeoKey directory: its header and 4 values per key for as many keys as
/// a 16-bit key count allows.
pub const GEOKEY_VALUES_MAX: u64 = 4 + 4 * 65_535;

/// Most values of one model tag: 6 per tie point for 65,536 ground control points (which the
/// reader refuses anyway, after counting them).
pub const MODEL_VALUES_MAX: u64 = 6 * 65_536;

/// Values per frame the reader hands on (a frame is at least one image row): large enough
/// that per-frame costs vanish, small enough to stay in cache.
const FRAME_VALUES: usize = 65_536;

/// Side of the square tiles the writer produces: GDAL's default, and what tile servers and
/// cloud-optimised GeoTIFF readers expect.
pub const TILE_SIDE: usize = 256;

/// TIFF tag numbers.
mod tag {
    pub const IMAGE_WIDTH: u16 = 256;
    pub const IMAGE_LENGTH: u16 = 257;
    pub const BITS_PER_SAMPLE: u16 = 258;
    pub const COMPRESSION: u16 = 259;
    pub const PHOTOMETRIC: u16 = 262;
    pub const STRIP_OFFSETS: u16 = 273;
    pub const SAMPLES_PER_PIXEL: u16 = 277;
    pub const ROWS_PER_STRIP: u16 = 278;
    pub const STRIP_BYTE_COUNTS: u16 = 279;
    pub const PLANAR_CONFIGURATION: u16 = 284;
    pub const PREDICTOR: u16 = 317;
    pub const JPEG_TABLES: u16 = 347;
    pub const TILE_WIDTH: u16 = 322;
    pub const TILE_LENGTH: u16 = 323;
    pub const TILE_OFFSETS: u16 = 324;
    pub const TILE_BYTE_COUNTS: u16 = 325;
    pub const EXTRA_SAMPLES: u16 = 338;
    pub const SAMPLE_FORMAT: u16 = 339;
    pub const MODEL_PIXEL_SCALE: u16 = 33550;
    pub const MODEL_TIEPOINT: u16 = 33922;
    pub const MODEL_TRANSFORMATION: u16 = 34264;
    pub const GEO_KEY_DIRECTORY: u16 = 34735;
    pub const GEO_DOUBLE_PARAMS: u16 = super::geokeys::GEO_DOUBLE_PARAMS;
    pub const GEO_ASCII_PARAMS: u16 = super::geokeys::GEO_ASCII_PARAMS;
    pub const GDAL_METADATA: u16 = 42112;
    pub const GDAL_NODATA: u16 = 42113;
}

/// The published description of [`GeoTiffReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "GeoTiffReader",
    description: "Reads a GeoTIFF; bands become items",
    dataset_format: ".tif",
    extensions: &[".tif", ".tiff"],
    produces: &[DataKind::Grid],
    parameters: &[SRID_PARAMETER],
};

/// Reads a GeoTIFF; bands become items.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeoTiffReader;

impl Reader for GeoTiffReader {
    fn spec(&self) -> &'static ReaderSpec {
        &READER
    }

    fn read(
        &self,
        input: &Path,
        parameters: &Parameters,
        context: &ReadContext<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        let srid = parameters.srid(SRID)?;
        let mut file = ifd::TiffFile::open(input)?;
        let sides = reader::SideFiles {
            pam: pam::find(input).map(|path| pam::read(&path)).transpose()?,
            world_file: world_file::find(input),
        };
        reader::read(&mut file, srid, &sides, context, sink)
    }
}

/// The published description of [`GeoTiffWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "GeoTiffWriter",
    description: "Writes grids as tiled, deflate-compressed GeoTIFF",
    dataset_format: ".tif",
    extensions: &[".tif", ".tiff"],
    accepts: &[DataKind::Grid],
    parameters: &[
        ParameterSpec {
            name: "Compression",
            description: "DEFLATE (default) or NONE",
            data_type: ParameterType::String,
            required: false,
            default_value: Some("DEFLATE"),
            allowed_values: &["DEFLATE", "NONE"],
        },
        ParameterSpec {
            name: "ZLevel",
            description: "Deflate level 1 (fastest) to 9 (smallest); default 6, as GDAL's ZLEVEL",
            data_type: ParameterType::Integer,
            required: false,
            default_value: Some("6"),
            allowed_values: &[],
        },
        ParameterSpec {
            name: "Predictor",
            description: "TIFF predictor as GDAL's PREDICTOR: 1 none (default), 2 horizontal differencing, 3 floating point (float bands only); used with DEFLATE",
            data_type: ParameterType::Integer,
            required: false,
            default_value: Some("1"),
            allowed_values: &["1", "2", "3"],
        },
        ParameterSpec {
            name: "BigTiff",
            description: "IF_NEEDED (default: BigTIFF only when the file exceeds 4 GiB), YES or NO",
            data_type: ParameterType::String,
            required: false,
            default_value: Some("IF_NEEDED"),
            allowed_values: &["IF_NEEDED", "YES", "NO"],
        },
    ],
};

/// Writes grids as tiled, deflate-compressed GeoTIFF.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeoTiffWriter;

impl Writer for GeoTiffWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        Ok(Box::new(writer::GeoTiffSink::new(
            output,
            write_options(parameters)?,
        )))
    }
}

fn write_options(parameters: &Parameters) -> FormatResult<writer::WriteOptions> {
    let level = match parameters.integer("ZLevel") {
        None => None,
        Some(level @ 1..=9) => u32::try_from(level).ok(),
        Some(other) => {
            return Err(FormatError::parameter(
                "ZLevel",
                format!("{other} is not a deflate level (1 to 9)"),
            ));
        }
    };
    let predictor = decode::Predictor::from_code(
        parameters
            .integer("Predictor")
            .and_then(|code| u64::try_from(code).ok())
            .unwrap_or(1),
    )
    .map_err(|error| FormatError::parameter("Predictor", error.to_string()))?;
    let big_tiff = match parameters.string("BigTiff") {
        Some("YES") => writer::BigTiff::Yes,
        Some("NO") => writer::BigTiff::No,
        _ => writer::BigTiff::IfNeeded,
    };
    Ok(writer::WriteOptions {
        deflate: parameters.string("Compression") != Some("NONE"),
        level,
        predictor,
        big_tiff,
    })
}

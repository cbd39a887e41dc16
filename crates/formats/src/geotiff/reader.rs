//! Reading the first image of a TIFF as a grid: its layout (strips or tiles, chunky or
//! planar), the header (bands as items, nodata, names, geotransform, CRS) and the values,
//! streamed band by band.
//!
//! The model wants all of band 1 before band 2. Planar files store bands apart, so each band is
//! one pass over its own chunks. Chunky (pixel-interleaved) files store every band in every
//! chunk; they are decoded once per band rather than held in memory or spooled, trading
//! decompression time for memory that stays at one row of tiles of one band (or one row of a
//! strip) whatever the file size.

use std::path::PathBuf;

use super::decode::{
    Compression, JpegSetup, Predictor, SampleKind, append_fill, append_range, append_samples,
    decompressor, read_chunk_bytes, undo_predictor,
};
use super::geokeys::{self, BandText, FileCrs, GeoKeys, ModelTags};
use super::ifd::{Directory, Entry, TiffFile, tag_location};
use super::{
    CHUNK_BYTES_MAX, FORMAT, FRAME_VALUES, GEOKEY_VALUES_MAX, METADATA_BYTES_MAX, MODEL_VALUES_MAX,
    tag,
};
use crate::catalogue::ReadContext;
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};
use crate::model::{
    DatasetSink, Frame, GeoTransform, GridGeometry, GridHeader, Header, Item, TimeAxis, Values,
};
use crate::parameters::SRID;
use crate::progress::Progress;

/// What files beside the TIFF say about its placement and coordinate system.
#[derive(Debug, Default)]
pub(crate) struct SideFiles {
    /// GDAL's `.aux.xml`.
    pub pam: Option<super::pam::Pam>,
    /// A world file (`.tfw`...).
    pub world_file: Option<PathBuf>,
}

/// Reads `file` into `sink`. `srid` supplies the CRS when the file states none or a
/// user-defined one; `sides` the placement and CRS when the file has none (see
/// [`georeference`]).
pub(crate) fn read(
    file: &mut TiffFile,
    srid: Option<u32>,
    sides: &SideFiles,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let directory = file.first_directory()?;
    let image = Image::from_directory(file, &directory, &context.limits)?;
    let header = grid_header(file, &directory, &image, srid, sides)?;
    let fill = header
        .items
        .first()
        .and_then(|item| item.nodata)
        .unwrap_or(0.0);
    sink.begin(&Header::Grid(header))?;
    let passes = if image.planar { 1 } else { image.bands as u64 };
    context
        .progress
        .set_total(file.length.saturating_mul(passes));
    for band in 0..image.bands {
        let mut stream = BandStream {
            image: &image,
            band,
            fill,
            batch: Batch {
                item: band,
                offset: 0,
                values: Values::with_capacity(image.kind.data_type(), FRAME_VALUES),
            },
            progress: context.progress,
        };
        match image.chunking {
            Chunking::Strips { .. } => stream.strips(file, sink)?,
            Chunking::Tiles { .. } => stream.tiles(file, sink)?,
        }
        stream.batch.flush(sink)?;
    }
    sink.end()
}

/// `PhotometricInterpretation` of YCbCr samples.
const PHOTOMETRIC_YCBCR: u64 = 6;

/// How the image is cut into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunking {
    Strips { rows_per_strip: usize },
    Tiles { width: usize, height: usize },
}

/// The layout of the image, checked against the limits.
#[derive(Debug, Clone)]
struct Image {
    columns: usize,
    rows: usize,
    bands: usize,
    kind: SampleKind,
    planar: bool,
    compression: Compression,
    predictor: Predictor,
    chunking: Chunking,
    offsets: Entry,
    counts: Option<Entry>,
    /// Bytes of one row of one chunk (all samples of a pixel for chunky files).
    chunk_row_bytes: usize,
    /// What JPEG chunks need (unused for other compressions).
    jpeg: JpegSetup,
}

impl Image {
    fn from_directory(
        file: &mut TiffFile,
        directory: &Directory,
        limits: &ReadLimits,
    ) -> FormatResult<Self> {
        let columns = required(file, directory, tag::IMAGE_WIDTH, "ImageWidth")?;
        let rows = required(file, directory, tag::IMAGE_LENGTH, "ImageLength")?;
        if columns == 0 || rows == 0 {
            return Err(FormatError::invalid(
                FORMAT,
                "the IFD",
                format!("the image is {columns} x {rows} pixels"),
            ));
        }
        check_limit(
            "GeoTIFF cells (columns x rows)",
            columns.saturating_mul(rows),
            limits.grid_cells_max,
        )?;
        let bands = optional(file, directory, tag::SAMPLES_PER_PIXEL)?.unwrap_or(1);
        if bands == 0 {
            return Err(FormatError::invalid(
                FORMAT,
                tag_location(tag::SAMPLES_PER_PIXEL),
                "SamplesPerPixel is 0",
            ));
        }
        check_limit("GeoTIFF bands", bands, limits.items_max)?;
        let (kind, compression, predictor) = encoding(file, directory, bands)?;
        let planar = match optional(file, directory, tag::PLANAR_CONFIGURATION)?.unwrap_or(1) {
            1 => false,
            2 => bands > 1,
            other => {
                return Err(FormatError::invalid(
                    FORMAT,
                    tag_location(tag::PLANAR_CONFIGURATION),
                    format!("PlanarConfiguration {other}; 1 or 2 expected"),
                ));
            }
        };
        let (chunking, offsets, counts) = chunking(file, directory, rows, compression)?;
        let jpeg = jpeg_setup(
            file,
            directory,
            compression,
            planar,
            bands,
            chunking,
            columns,
        )?;
        let mut image = Self {
            columns: to_usize(columns)?,
            rows: to_usize(rows)?,
            bands: to_usize(bands)?,
            kind,
            planar,
            compression,
            predictor,
            chunking,
            offsets,
            counts,
            chunk_row_bytes: 0,
            jpeg,
        };
        image.chunk_row_bytes = image.check_chunks()?;
        Ok(image)
    }

    /// Checks chunk sizes and offset counts; returns the bytes of one chunk row.
    fn check_chunks(&self) -> FormatResult<usize> {
        let samples = if self.planar { 1 } else { self.bands as u64 };
        let row_bits = (self.chunk_width() as u64)
            .checked_mul(samples)
            .and_then(|value| value.checked_mul(self.kind.bits()));
        let row_bytes = row_bits.map_or(u64::MAX, |bits| bits.div_ceil(8));
        let chunk_bytes = match self.chunking {
            // A JPEG strip is decoded whole.
            Chunking::Strips { rows_per_strip } if self.compression == Compression::Jpeg => {
                row_bytes.saturating_mul(rows_per_strip as u64)
            }
            Chunking::Strips { .. } => row_bytes,
            Chunking::Tiles { height, .. } => row_bytes.saturating_mul(height as u64),
        };
        let what = match self.chunking {
            Chunking::Strips { .. } => "GeoTIFF bytes per strip row",
            Chunking::Tiles { .. } => "GeoTIFF bytes per tile",
        };
        check_limit(what, chunk_bytes, CHUNK_BYTES_MAX)?;
        let planes = if self.planar { self.bands as u64 } else { 1 };
        let needed = (self.chunks_across() as u64)
            .saturating_mul(self.chunks_down() as u64)
            .saturating_mul(planes);
        for entry in std::iter::once(&self.offsets).chain(&self.counts) {
            if entry.count < needed {
                return Err(FormatError::invalid(
                    FORMAT,
                    tag_location(entry.tag),
                    format!("{} chunk entries, the image needs {needed}", entry.count),
                ));
            }
        }
        to_usize(row_bytes)
    }

    fn chunk_width(&self) -> usize {
        match self.chunking {
            Chunking::Strips { .. } => self.columns,
            Chunking::Tiles { width, .. } => width,
        }
    }

    fn chunk_height(&self) -> usize {
        match self.chunking {
            Chunking::Strips { rows_per_strip } => rows_per_strip,
            Chunking::Tiles { height, .. } => height,
        }
    }

    fn chunks_across(&self) -> usize {
        self.columns.div_ceil(self.chunk_width().max(1))
    }

    fn chunks_down(&self) -> usize {
        self.rows.div_ceil(self.chunk_height().max(1))
    }

    /// Rows of the image in chunk row `down`.
    fn rows_in(&self, down: usize) -> usize {
        let height = self.chunk_height();
        self.rows
            .saturating_sub(down.saturating_mul(height))
            .min(height)
    }

    /// Columns of the image in chunk column `across`.
    fn columns_in(&self, across: usize) -> usize {
        let width = self.chunk_width();
        self.columns
            .saturating_sub(across.saturating_mul(width))
            .min(width)
    }

    /// Index of the first chunk of chunk row `down` of `band`.
    fn chunk_index(&self, band: usize, down: usize) -> u64 {
        let plane = if self.planar { band as u64 } else { 0 };
        let across = self.chunks_across() as u64;
        let per_plane = across.saturating_mul(self.chunks_down() as u64);
        plane
            .saturating_mul(per_plane)
            .saturating_add((down as u64).saturating_mul(across))
    }

    /// The first sample of `band` in a pixel and the samples per pixel of a chunk.
    fn sample_position(&self, band: usize) -> (usize, usize) {
        if self.planar {
            (0, 1)
        } else {
            (band, self.bands)
        }
    }
}

/// How samples are stored: their kind, the compression and the predictor.
fn encoding(
    file: &mut TiffFile,
    directory: &Directory,
    bands: u64,
) -> FormatResult<(SampleKind, Compression, Predictor)> {
    let bits = uniform(
        file,
        directory,
        tag::BITS_PER_SAMPLE,
        bands,
        1,
        "BitsPerSample",
    )?;
    let format = uniform(
        file,
        directory,
        tag::SAMPLE_FORMAT,
        bands,
        1,
        "SampleFormat",
    )?;
    let compression =
        Compression::from_code(optional(file, directory, tag::COMPRESSION)?.unwrap_or(1))?;
    if compression == Compression::Jpeg && (bits, format) != (8, 1) {
        return Err(FormatError::unsupported(
            FORMAT,
            format!(
                "JPEG-compressed {bits}-bit samples of sample format {format}; only 8-bit unsigned JPEG (GDAL's default) is read (convert with gdal_translate -co COMPRESS=DEFLATE)"
            ),
        ));
    }
    let kind = SampleKind::from_tiff(bits, format)?;
    // libtiff applies a predictor only inside the LZW, deflate and ZSTD codecs.
    let predictor = match compression {
        Compression::Lzw | Compression::Deflate | Compression::Zstd => {
            Predictor::from_code(optional(file, directory, tag::PREDICTOR)?.unwrap_or(1))?
        }
        Compression::None | Compression::PackBits | Compression::Jpeg => Predictor::None,
    };
    kind.check_predictor(predictor)?;
    Ok((kind, compression, predictor))
}

fn chunking(
    file: &mut TiffFile,
    directory: &Directory,
    rows: u64,
    compression: Compression,
) -> FormatResult<(Chunking, Entry, Option<Entry>)> {
    let tiled = directory.get(tag::TILE_WIDTH).is_some();
    let (chunking, offsets_tag, counts_tag) = if tiled {
        let width = required(file, directory, tag::TILE_WIDTH, "TileWidth")?;
        let height = required(file, directory, tag::TILE_LENGTH, "TileLength")?;
        if width == 0 || height == 0 {
            return Err(FormatError::invalid(
                FORMAT,
                tag_location(tag::TILE_WIDTH),
                format!("tiles of {width} x {height} pixels"),
            ));
        }
        let chunking = Chunking::Tiles {
            width: to_usize(width)?,
            height: to_usize(height)?,
        };
        (chunking, tag::TILE_OFFSETS, tag::TILE_BYTE_COUNTS)
    } else {
        let rows_per_strip = optional(file, directory, tag::ROWS_PER_STRIP)?.unwrap_or(rows);
        if rows_per_strip == 0 {
            return Err(FormatError::invalid(
                FORMAT,
                tag_location(tag::ROWS_PER_STRIP),
                "RowsPerStrip is 0",
            ));
        }
        let chunking = Chunking::Strips {
            rows_per_strip: to_usize(rows_per_strip.min(rows))?,
        };
        (chunking, tag::STRIP_OFFSETS, tag::STRIP_BYTE_COUNTS)
    };
    let Some(offsets) = directory.get(offsets_tag).copied() else {
        return Err(FormatError::invalid(
            FORMAT,
            tag_location(offsets_tag),
            "the strip or tile offsets are missing",
        ));
    };
    let counts = directory.get(counts_tag).copied();
    if counts.is_none() && compression != Compression::None {
        return Err(FormatError::invalid(
            FORMAT,
            tag_location(counts_tag),
            "the strip or tile byte counts are missing",
        ));
    }
    Ok((chunking, offsets, counts))
}

/// What JPEG chunks need to be decoded: the shared tables, the samples per chunk pixel, the
/// colour model and the chunk width. Other compressions get the default, and YCbCr samples
/// (subsampled colour, which libtiff reads only through JPEG) are refused without JPEG.
fn jpeg_setup(
    file: &mut TiffFile,
    directory: &Directory,
    compression: Compression,
    planar: bool,
    bands: u64,
    chunking: Chunking,
    columns: u64,
) -> FormatResult<JpegSetup> {
    let photometric = optional(file, directory, tag::PHOTOMETRIC)?;
    if compression != Compression::Jpeg {
        if photometric == Some(PHOTOMETRIC_YCBCR) {
            return Err(FormatError::unsupported(
                FORMAT,
                "YCbCr samples without JPEG compression (subsampled colour); convert with gdal_translate -co PHOTOMETRIC=RGB",
            ));
        }
        return Ok(JpegSetup::default());
    }
    Ok(JpegSetup {
        tables: match directory.get(tag::JPEG_TABLES) {
            Some(entry) => {
                file.value_bytes(entry, "GeoTIFF JPEGTables bytes", METADATA_BYTES_MAX)?
            }
            None => Vec::new(),
        },
        samples: if planar { 1 } else { to_usize(bands)? },
        ycbcr: photometric == Some(PHOTOMETRIC_YCBCR),
        width: match chunking {
            Chunking::Strips { .. } => to_usize(columns)?,
            Chunking::Tiles { width, .. } => width,
        },
        height: match chunking {
            Chunking::Strips { rows_per_strip } => rows_per_strip,
            Chunking::Tiles { height, .. } => height,
        },
    })
}

fn required(file: &mut TiffFile, directory: &Directory, tag: u16, name: &str) -> FormatResult<u64> {
    optional(file, directory, tag)?.ok_or_else(|| {
        FormatError::invalid(FORMAT, tag_location(tag), format!("{name} is missing"))
    })
}

fn optional(file: &mut TiffFile, directory: &Directory, tag: u16) -> FormatResult<Option<u64>> {
    directory
        .get(tag)
        .map(|entry| file.scalar(entry))
        .transpose()
}

/// A per-sample tag whose values must all be equal (GDAL bands share one type).
fn uniform(
    file: &mut TiffFile,
    directory: &Directory,
    tag: u16,
    bands: u64,
    default: u64,
    name: &'static str,
) -> FormatResult<u64> {
    let Some(entry) = directory.get(tag) else {
        return Ok(default);
    };
    // One value per band; a few writers repeat more, which are ignored as libtiff does.
    let values = file.unsigned(entry, name, u64::from(u16::MAX))?;
    let Some(&first) = values.first() else {
        return Ok(default);
    };
    let bands = usize::try_from(bands).unwrap_or(usize::MAX);
    if let Some(other) = values.iter().take(bands).find(|&&value| value != first) {
        return Err(FormatError::unsupported(
            FORMAT,
            format!(
                "bands of different {name} ({first} and {other}); GeoTIFF bands share one type"
            ),
        ));
    }
    Ok(first)
}

fn to_usize(value: u64) -> FormatResult<usize> {
    usize::try_from(value).map_err(|_| {
        FormatError::unsupported(FORMAT, format!("{value} is too large for this machine"))
    })
}

/// The grid header: geometry with CRS, and one item per band.
fn grid_header(
    file: &mut TiffFile,
    directory: &Directory,
    image: &Image,
    srid: Option<u32>,
    sides: &SideFiles,
) -> FormatResult<GridHeader> {
    let (transform, crs) = georeference(file, directory, srid, sides)?;
    let nodata = match directory.get(tag::GDAL_NODATA) {
        Some(entry) => {
            geokeys::parse_nodata(&file.text(entry, "GDAL_NODATA bytes", METADATA_BYTES_MAX)?)?
        }
        None => None,
    };
    let texts = match directory.get(tag::GDAL_METADATA) {
        Some(entry) => geokeys::parse_band_text(
            &file.text(entry, "GDAL_METADATA bytes", METADATA_BYTES_MAX)?,
            image.bands,
        ),
        None => vec![BandText::default(); image.bands],
    };
    let items = (0..image.bands)
        .map(|band| {
            let text = texts.get(band).cloned().unwrap_or_default();
            let name = text
                .description
                .filter(|name| !name.is_empty())
                .unwrap_or_else(|| format!("Band {}", band + 1));
            let mut item = Item::new(name, image.kind.data_type());
            item.nodata = nodata;
            item.quantity.unit = text.unit.unwrap_or_default();
            item
        })
        .collect();
    Ok(GridHeader {
        geometry: GridGeometry {
            columns: image.columns,
            rows: image.rows,
            vertical: None,
            transform,
            crs,
        },
        items,
        time: TimeAxis::None,
    })
}

/// The geotransform and the CRS. The transform comes from the model tags, else GDAL's
/// `.aux.xml`, else a world file; the CRS from the GeoKeys' code, else `srid`, else the
/// GeoKeys' parameters, else the `.aux.xml`, else an error asking for `SRID`. (GDAL would let
/// an `.aux.xml` override the file; GDAL itself writes one only for what the file cannot
/// hold, so the two orders agree on GDAL's files.)
fn georeference(
    file: &mut TiffFile,
    directory: &Directory,
    srid: Option<u32>,
    sides: &SideFiles,
) -> FormatResult<(GeoTransform, Option<Crs>)> {
    let mut doubles = |tag: u16, what: &'static str| {
        directory
            .get(tag)
            .map(|entry| file.doubles(entry, what, MODEL_VALUES_MAX))
            .transpose()
    };
    let model = ModelTags {
        scale: doubles(tag::MODEL_PIXEL_SCALE, "GeoTIFF ModelPixelScale values")?,
        tiepoints: doubles(tag::MODEL_TIEPOINT, "GeoTIFF ModelTiepoint values")?,
        transformation: doubles(
            tag::MODEL_TRANSFORMATION,
            "GeoTIFF ModelTransformation values",
        )?,
    };
    let double_params = doubles(tag::GEO_DOUBLE_PARAMS, "GeoTIFF GeoDoubleParams values")?;
    let key_directory = directory
        .get(tag::GEO_KEY_DIRECTORY)
        .map(|entry| file.unsigned(entry, "GeoTIFF GeoKey directory values", GEOKEY_VALUES_MAX))
        .transpose()?;
    // Citations are names, needed only for an ArcGIS WKT: text that cannot be read is left
    // out rather than failing the file, as libgeotiff skips it.
    let ascii_params = directory.get(tag::GEO_ASCII_PARAMS).and_then(|entry| {
        file.text(entry, "GeoTIFF GeoAsciiParams bytes", METADATA_BYTES_MAX)
            .ok()
    });
    let keys = match key_directory {
        Some(values) => GeoKeys::parse(
            &values,
            double_params.as_deref().unwrap_or_default(),
            ascii_params.as_deref().unwrap_or_default(),
        )?,
        None => GeoKeys::default(),
    };
    let placed =
        model.scale.is_some() || model.tiepoints.is_some() || model.transformation.is_some();
    let pam = sides.pam.as_ref();
    let transform = match (pam.and_then(|pam| pam.transform), &sides.world_file) {
        _ if placed => geokeys::geotransform(&model, keys.pixel_is_point())?,
        (Some(transform), _) => transform,
        (None, Some(path)) => super::world_file::read(path)?,
        (None, None) => geokeys::default_transform(),
    };
    let pam_srs = pam.and_then(|pam| pam.srs.clone());
    let crs = match (keys.crs(), srid, pam_srs) {
        (FileCrs::Epsg(code), _, _) => Some(Crs::Epsg(code)),
        (_, Some(code), _) => Some(Crs::Epsg(code)),
        (FileCrs::Wkt(wkt), None, _) => Some(Crs::Wkt(wkt)),
        (FileCrs::None | FileCrs::UserDefined, None, Some(srs)) => Some(Crs::Wkt(srs)),
        (FileCrs::UserDefined, None, None) => {
            return Err(FormatError::parameter(
                SRID,
                "the GeoTIFF's coordinate system is user-defined (described by parameters, not an EPSG code); give its EPSG code with the SRID reader parameter",
            ));
        }
        // No coordinate system at all (as GDAL reads it, and as an ASCII Grid without a
        // .prj): a grid in unknown coordinates, which `SRID` or a CRS transformation's
        // inputSrid may name later. A user-defined one is refused above: guessing would be
        // wrong.
        (FileCrs::None, None, None) => None,
    };
    Ok((transform, crs))
}

/// Values on their way to the sink, sent once a batch holds [`FRAME_VALUES`] or more.
struct Batch {
    item: usize,
    offset: usize,
    values: Values,
}

impl Batch {
    fn flush_if_full(&mut self, sink: &mut dyn DatasetSink) -> FormatResult<()> {
        if self.values.len() >= FRAME_VALUES {
            self.flush(sink)?;
        }
        Ok(())
    }

    fn flush(&mut self, sink: &mut dyn DatasetSink) -> FormatResult<()> {
        if self.values.is_empty() {
            return Ok(());
        }
        sink.frame(Frame {
            step: 0,
            item: self.item,
            offset: self.offset,
            values: &self.values,
        })?;
        self.offset = self.offset.saturating_add(self.values.len());
        self.values.clear();
        Ok(())
    }
}

/// Reads one band.
struct BandStream<'a> {
    image: &'a Image,
    band: usize,
    /// Value of sparse chunks (offset and byte count 0): nodata, else 0, as GDAL fills them.
    fill: f64,
    batch: Batch,
    progress: &'a dyn Progress,
}

impl BandStream<'_> {
    /// Strips are decompressed as streams, one row at a time.
    fn strips(&mut self, file: &mut TiffFile, sink: &mut dyn DatasetSink) -> FormatResult<()> {
        let image = self.image;
        let (first, step) = image.sample_position(self.band);
        let order = file.order;
        let mut row = vec![0u8; image.chunk_row_bytes];
        let mut scratch = Vec::new();
        for strip in 0..image.chunks_down() {
            let index = image.chunk_index(self.band, strip);
            let rows_here = image.rows_in(strip);
            let (offset, bytes) = chunk_location(file, image, index, rows_here)?;
            if bytes == 0 {
                for _ in 0..rows_here {
                    append_fill(&mut self.batch.values, self.fill, image.columns);
                    self.batch.flush_if_full(sink)?;
                }
                continue;
            }
            let what = format!("strip {index}");
            let needed = (image.chunk_row_bytes as u64).saturating_mul(rows_here as u64);
            check_stored_size(image, bytes, needed, &what)?;
            check_jpeg_size(image, bytes, &what)?;
            let mut reader = decompressor(
                image.compression,
                &image.jpeg,
                file.chunk(offset, bytes, &what)?,
            );
            for _ in 0..rows_here {
                read_chunk_bytes(&mut reader, &mut row, &what)?;
                undo_predictor(
                    image.predictor,
                    image.kind,
                    order,
                    &mut row,
                    step,
                    &mut scratch,
                );
                if !append_samples(
                    image.kind,
                    order,
                    &row,
                    first,
                    step,
                    image.columns,
                    &mut self.batch.values,
                ) {
                    return Err(short_row(&what));
                }
                self.batch.flush_if_full(sink)?;
            }
            self.progress.advance(bytes);
        }
        Ok(())
    }

    /// Tiles are decoded a row of tiles at a time; each tile keeps only this band's values of
    /// the pixels inside the image.
    fn tiles(&mut self, file: &mut TiffFile, sink: &mut dyn DatasetSink) -> FormatResult<()> {
        let image = self.image;
        let across = image.chunks_across();
        let mut raw = Vec::new();
        let mut scratch = Vec::new();
        let mut offsets = Vec::new();
        let mut counts = Vec::new();
        let mut tiles: Vec<Option<Values>> = Vec::new();
        for down in 0..image.chunks_down() {
            let first_index = image.chunk_index(self.band, down);
            let rows_here = image.rows_in(down);
            file.unsigned_range(&image.offsets, first_index, across, &mut offsets)?;
            match &image.counts {
                Some(entry) => file.unsigned_range(entry, first_index, across, &mut counts)?,
                None => {
                    let bytes =
                        (image.chunk_row_bytes as u64).saturating_mul(image.chunk_height() as u64);
                    counts.clear();
                    counts.resize(across, bytes);
                }
            }
            tiles.clear();
            for (column, (&offset, &bytes)) in offsets.iter().zip(&counts).enumerate() {
                if bytes == 0 {
                    tiles.push(None);
                    continue;
                }
                let index = first_index.saturating_add(column as u64);
                let tile = TileRequest {
                    what: format!("tile {index}"),
                    offset,
                    bytes,
                    columns: image.columns_in(column),
                    rows: rows_here,
                };
                tiles.push(Some(self.decode_tile(
                    file,
                    &tile,
                    &mut raw,
                    &mut scratch,
                )?));
                self.progress.advance(bytes);
            }
            self.emit_tile_row(&tiles, rows_here, sink)?;
        }
        Ok(())
    }

    fn decode_tile(
        &self,
        file: &mut TiffFile,
        tile: &TileRequest,
        raw: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> FormatResult<Values> {
        let image = self.image;
        let (first, step) = image.sample_position(self.band);
        let order = file.order;
        let tile_bytes = image.chunk_row_bytes.saturating_mul(image.chunk_height());
        check_stored_size(image, tile.bytes, tile_bytes as u64, &tile.what)?;
        // The chunk is checked to lie inside the file before its buffer is sized.
        check_jpeg_size(image, tile.bytes, &tile.what)?;
        let mut reader = decompressor(
            image.compression,
            &image.jpeg,
            file.chunk(tile.offset, tile.bytes, &tile.what)?,
        );
        raw.resize(tile_bytes, 0);
        read_chunk_bytes(&mut reader, raw, &tile.what)?;
        let mut values = Values::with_capacity(
            image.kind.data_type(),
            tile.rows.saturating_mul(tile.columns),
        );
        for row in raw
            .chunks_exact_mut(image.chunk_row_bytes.max(1))
            .take(tile.rows)
        {
            undo_predictor(image.predictor, image.kind, order, row, step, scratch);
            if !append_samples(
                image.kind,
                order,
                row,
                first,
                step,
                tile.columns,
                &mut values,
            ) {
                return Err(short_row(&tile.what));
            }
        }
        Ok(values)
    }

    fn emit_tile_row(
        &mut self,
        tiles: &[Option<Values>],
        rows: usize,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        let image = self.image;
        for row in 0..rows {
            for (column, tile) in tiles.iter().enumerate() {
                let width = image.columns_in(column);
                match tile {
                    None => append_fill(&mut self.batch.values, self.fill, width),
                    Some(values) => {
                        if !append_range(&mut self.batch.values, values, row * width, width) {
                            return Err(short_row("a tile"));
                        }
                    }
                }
            }
            self.batch.flush_if_full(sink)?;
        }
        Ok(())
    }
}

struct TileRequest {
    what: String,
    offset: u64,
    bytes: u64,
    columns: usize,
    rows: usize,
}

/// Offset and byte count of chunk `index`; without byte counts (allowed for uncompressed
/// strips, as libtiff does) the expected size.
fn chunk_location(
    file: &mut TiffFile,
    image: &Image,
    index: u64,
    rows: usize,
) -> FormatResult<(u64, u64)> {
    let mut value = Vec::with_capacity(1);
    file.unsigned_range(&image.offsets, index, 1, &mut value)?;
    let offset = value.first().copied().unwrap_or(0);
    let bytes = match &image.counts {
        Some(entry) => {
            file.unsigned_range(entry, index, 1, &mut value)?;
            value.first().copied().unwrap_or(0)
        }
        None => (image.chunk_row_bytes as u64).saturating_mul(rows as u64),
    };
    Ok((offset, bytes))
}

/// An uncompressed chunk must hold all its bytes; checked before a buffer is sized for it.
fn check_stored_size(image: &Image, bytes: u64, needed: u64, what: &str) -> FormatResult<()> {
    if image.compression == Compression::None && bytes < needed {
        return Err(FormatError::invalid(
            FORMAT,
            what.to_owned(),
            format!("it holds {bytes} bytes, {needed} are needed; its data ends early"),
        ));
    }
    Ok(())
}

/// A JPEG chunk is read whole before decoding: at most [`CHUNK_BYTES_MAX`] stored bytes.
fn check_jpeg_size(image: &Image, bytes: u64, what: &str) -> FormatResult<()> {
    if image.compression == Compression::Jpeg && bytes > CHUNK_BYTES_MAX {
        return Err(FormatError::invalid(
            FORMAT,
            what.to_owned(),
            format!("a JPEG chunk of {bytes} bytes, more than the {CHUNK_BYTES_MAX} read whole"),
        ));
    }
    Ok(())
}

fn short_row(what: &str) -> FormatError {
    FormatError::invalid(
        FORMAT,
        what.to_owned(),
        "a decoded row is shorter than the image width",
    )
}

//! Writing a Shapefile from features, one record at a time: the .shp and .shx get their
//! headers (file length, bounding box, shape type) at the end, by seeking back, so nothing is
//! held in memory. A `.zip` output is staged in a temporary folder beside it and zipped by
//! `finish`.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::catalogue::{WriterSink, Written};
use crate::error::{FormatError, FormatResult};
use crate::model::{Coord, DatasetSink, Feature, FeatureSchema, Geometry, GeometryKind, Header};

use super::FORMAT;
use super::dbf_writer::DbfWriter;
use super::rings::signed_area2;
use super::shape::ShapeType;

/// Where the parts go.
struct Target {
    /// The output as given (.shp or .zip).
    output: PathBuf,
    /// The staging folder of a .zip output.
    staging: Option<tempfile::TempDir>,
    /// Path of the parts without extension.
    base: PathBuf,
}

impl Target {
    fn new(output: &Path) -> FormatResult<Self> {
        let stem = output
            .file_stem()
            .ok_or_else(|| FormatError::parameter("output", "the output path has no file name"))?
            .to_owned();
        let is_zip = output
            .extension()
            .and_then(|extension| extension.to_str())
            .is_some_and(|extension| extension.eq_ignore_ascii_case("zip"));
        if !is_zip {
            return Ok(Self {
                output: output.to_path_buf(),
                staging: None,
                base: output.with_extension(""),
            });
        }
        let parent = match output.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let staging = tempfile::Builder::new()
            .prefix(".basin-shp-")
            .tempdir_in(&parent)
            .map_err(|error| FormatError::write(&parent, error))?;
        let base = staging.path().join(stem);
        Ok(Self {
            output: output.to_path_buf(),
            staging: Some(staging),
            base,
        })
    }

    fn part(&self, extension: &str) -> PathBuf {
        self.base.with_extension(extension)
    }
}

fn create_file(path: &Path) -> FormatResult<BufWriter<File>> {
    let file = File::create(path).map_err(|error| FormatError::write(path, error))?;
    Ok(BufWriter::with_capacity(256 * 1024, file))
}

/// Running extent of the written coordinates.
#[derive(Debug, Clone, Copy)]
struct Extent {
    min: [f64; 4],
    max: [f64; 4],
}

impl Extent {
    fn new() -> Self {
        Self {
            min: [f64::INFINITY; 4],
            max: [f64::NEG_INFINITY; 4],
        }
    }

    fn add(&mut self, axis: usize, value: f64) {
        if let (Some(min), Some(max)) = (self.min.get_mut(axis), self.max.get_mut(axis)) {
            *min = min.min(value);
            *max = max.max(value);
        }
    }

    fn range(&self, axis: usize) -> (f64, f64) {
        match (self.min.get(axis), self.max.get(axis)) {
            (Some(min), Some(max)) if min <= max => (*min, *max),
            _ => (0.0, 0.0),
        }
    }
}

/// The sink of [`super::ShpWriter`].
pub(crate) struct ShpSink {
    target: Target,
    shp: BufWriter<File>,
    shx: BufWriter<File>,
    dbf: Option<DbfWriter>,
    shape_type: Option<ShapeType>,
    has_z: bool,
    has_m: bool,
    extent: Extent,
    /// Length of the .shp so far in 16-bit words.
    shp_words: u64,
    records: u32,
    content: Vec<u8>,
    notes: Vec<String>,
    files: Vec<PathBuf>,
    ended: bool,
}

impl ShpSink {
    /// Creates the .shp and .shx (or the staging folder of a .zip).
    pub(crate) fn create(output: &Path) -> FormatResult<Self> {
        let target = Target::new(output)?;
        let shp_path = target.part("shp");
        let shx_path = target.part("shx");
        let mut shp = create_file(&shp_path)?;
        let mut shx = create_file(&shx_path)?;
        shp.write_all(&[0u8; 100])
            .map_err(|error| FormatError::write(&shp_path, error))?;
        shx.write_all(&[0u8; 100])
            .map_err(|error| FormatError::write(&shx_path, error))?;
        Ok(Self {
            target,
            shp,
            shx,
            dbf: None,
            shape_type: None,
            has_z: false,
            has_m: false,
            extent: Extent::new(),
            shp_words: 50,
            records: 0,
            content: Vec::new(),
            notes: Vec::new(),
            files: vec![shp_path, shx_path],
            ended: false,
        })
    }

    fn begin_features(&mut self, schema: &FeatureSchema) -> FormatResult<()> {
        self.has_z = schema.has_z;
        self.has_m = schema.has_m;
        if schema.geometry_kind != GeometryKind::Any {
            self.shape_type = Some(ShapeType::for_kind(
                schema.geometry_kind,
                self.has_z,
                self.has_m,
            ));
        }
        let dbf_path = self.target.part("dbf");
        let (dbf, notes) = DbfWriter::create(&dbf_path, &schema.fields)?;
        self.notes.extend(notes);
        self.dbf = Some(dbf);
        self.files.push(dbf_path);
        let cpg_path = self.target.part("cpg");
        std::fs::write(&cpg_path, "UTF-8").map_err(|error| FormatError::write(&cpg_path, error))?;
        self.files.push(cpg_path);
        if let Some(crs) = &schema.crs {
            match crate::crs::wkt_of(crs) {
                Some(wkt) => {
                    let prj_path = self.target.part("prj");
                    std::fs::write(&prj_path, wkt)
                        .map_err(|error| FormatError::write(&prj_path, error))?;
                    self.files.push(prj_path);
                }
                None => self
                    .notes
                    .push(format!("no .prj written: no WKT is known for {crs:?}")),
            }
        }
        Ok(())
    }

    /// The shape type for `geometry`, fixing the file's type on the first geometry when the
    /// schema did not declare one.
    fn shape_type_for(&mut self, geometry: &Geometry) -> FormatResult<ShapeType> {
        if let Some(shape_type) = self.shape_type {
            return Ok(shape_type);
        }
        let kind = match geometry {
            Geometry::Point(_) => GeometryKind::Point,
            Geometry::MultiPoint(_) => GeometryKind::MultiPoint,
            Geometry::LineString(_) | Geometry::MultiLineString(_) => GeometryKind::Line,
            Geometry::Polygon(_) | Geometry::MultiPolygon(_) => GeometryKind::Polygon,
            Geometry::GeometryCollection(_) => {
                return Err(self.incompatible("a GeometryCollection cannot be written"));
            }
        };
        let shape_type = ShapeType::for_kind(kind, self.has_z, self.has_m);
        self.shape_type = Some(shape_type);
        Ok(shape_type)
    }

    fn incompatible(&self, message: impl Into<String>) -> FormatError {
        FormatError::Incompatible {
            data: "feature collection",
            format: FORMAT,
            message: format!(
                "feature {}: {}",
                u64::from(self.records) + 1,
                message.into()
            ),
        }
    }

    fn write_record(&mut self) -> FormatResult<()> {
        let content_words = u64::try_from(self.content.len() / 2).unwrap_or(u64::MAX);
        let new_words = self
            .shp_words
            .saturating_add(4)
            .saturating_add(content_words);
        if new_words > i32::MAX as u64 {
            return Err(FormatError::Incompatible {
                data: "feature collection",
                format: FORMAT,
                message: "the .shp would exceed the format's 4 GB limit".to_owned(),
            });
        }
        let number = self
            .records
            .checked_add(1)
            .ok_or_else(|| self.incompatible("too many features"))?;
        let offset = self.shp_words as i32;
        let words = content_words as i32;
        let shp_path = self.target.part("shp");
        let write_error = |error| FormatError::write(&shp_path, error);
        self.shp
            .write_all(&(number as i32).to_be_bytes())
            .map_err(write_error)?;
        self.shp
            .write_all(&words.to_be_bytes())
            .map_err(write_error)?;
        self.shp.write_all(&self.content).map_err(write_error)?;
        let shx_path = self.target.part("shx");
        let write_error = |error| FormatError::write(&shx_path, error);
        self.shx
            .write_all(&offset.to_be_bytes())
            .map_err(write_error)?;
        self.shx
            .write_all(&words.to_be_bytes())
            .map_err(write_error)?;
        self.shp_words = new_words;
        self.records = number;
        Ok(())
    }

    fn finish_parts(&mut self) -> FormatResult<()> {
        let shape_type = self.shape_type.unwrap_or(ShapeType::Null);
        let shp_header = main_header(self.shp_words, shape_type, &self.extent);
        let shx_words = 50u64.saturating_add(u64::from(self.records).saturating_mul(4));
        let shx_header = main_header(shx_words, shape_type, &self.extent);
        let shp_path = self.target.part("shp");
        finish_file(&mut self.shp, &shp_header, &shp_path)?;
        let shx_path = self.target.part("shx");
        finish_file(&mut self.shx, &shx_header, &shx_path)?;
        if let Some(dbf) = self.dbf.as_mut() {
            dbf.finish()?;
        }
        Ok(())
    }
}

fn finish_file(writer: &mut BufWriter<File>, header: &[u8; 100], path: &Path) -> FormatResult<()> {
    let result = writer
        .flush()
        .and_then(|()| writer.seek(SeekFrom::Start(0)).map(|_| ()))
        .and_then(|()| writer.write_all(header))
        .and_then(|()| writer.flush());
    result.map_err(|error| FormatError::write(path, error))
}

/// The 100-byte header of a .shp or .shx.
fn main_header(length_words: u64, shape_type: ShapeType, extent: &Extent) -> [u8; 100] {
    let mut header = Vec::with_capacity(100);
    header.extend_from_slice(&9994i32.to_be_bytes());
    header.extend_from_slice(&[0u8; 20]);
    header.extend_from_slice(&(length_words as i32).to_be_bytes());
    header.extend_from_slice(&1000i32.to_le_bytes());
    header.extend_from_slice(&shape_type.code().to_le_bytes());
    let (xmin, xmax) = extent.range(0);
    let (ymin, ymax) = extent.range(1);
    let (zmin, zmax) = extent.range(2);
    let (mmin, mmax) = extent.range(3);
    for value in [xmin, ymin, xmax, ymax, zmin, zmax, mmin, mmax] {
        header.extend_from_slice(&value.to_le_bytes());
    }
    let mut fixed = [0u8; 100];
    for (slot, byte) in fixed.iter_mut().zip(header) {
        *slot = byte;
    }
    fixed
}

/// A ring or line to write, possibly reversed.
struct Part<'a> {
    coords: &'a [Coord],
    reversed: bool,
}

impl Part<'_> {
    fn iter(&self) -> Box<dyn Iterator<Item = &Coord> + '_> {
        if self.reversed {
            Box::new(self.coords.iter().rev())
        } else {
            Box::new(self.coords.iter())
        }
    }
}

fn polygon_parts<'a>(polygon: &'a [Vec<Coord>], parts: &mut Vec<Part<'a>>) {
    for (index, ring) in polygon.iter().enumerate() {
        let area = signed_area2(ring);
        let reversed = if index == 0 { area > 0.0 } else { area < 0.0 };
        parts.push(Part {
            coords: ring,
            reversed,
        });
    }
}

/// Encodes `geometry` as the content of a record of `shape_type`.
fn encode(
    geometry: &Geometry,
    shape_type: ShapeType,
    has_m: bool,
    content: &mut Vec<u8>,
    extent: &mut Extent,
) -> Result<(), String> {
    content.clear();
    content.extend_from_slice(&shape_type.code().to_le_bytes());
    let mut parts = Vec::new();
    let kind = shape_type.kind();
    match (kind, geometry) {
        (GeometryKind::Point, Geometry::Point(coord)) => {
            encode_point(coord, shape_type, content, extent);
            return Ok(());
        }
        (GeometryKind::MultiPoint, Geometry::Point(coord)) => {
            return encode_points(
                std::slice::from_ref(coord),
                shape_type,
                has_m,
                content,
                extent,
            );
        }
        (GeometryKind::MultiPoint, Geometry::MultiPoint(coords)) => {
            return encode_points(coords, shape_type, has_m, content, extent);
        }
        (GeometryKind::Line, Geometry::LineString(line)) => parts.push(Part {
            coords: line,
            reversed: false,
        }),
        (GeometryKind::Line, Geometry::MultiLineString(lines)) => {
            parts.extend(lines.iter().map(|line| Part {
                coords: line,
                reversed: false,
            }));
        }
        (GeometryKind::Polygon, Geometry::Polygon(polygon)) => polygon_parts(polygon, &mut parts),
        (GeometryKind::Polygon, Geometry::MultiPolygon(polygons)) => {
            for polygon in polygons {
                polygon_parts(polygon, &mut parts);
            }
        }
        _ => {
            return Err(format!(
                "a {} geometry cannot go into a Shapefile of {}: a Shapefile holds one geometry type",
                geometry_name(geometry),
                kind_name(kind)
            ));
        }
    }
    encode_parts(&parts, shape_type, has_m, content, extent)
}

fn geometry_name(geometry: &Geometry) -> &'static str {
    match geometry {
        Geometry::Point(_) => "Point",
        Geometry::MultiPoint(_) => "MultiPoint",
        Geometry::LineString(_) => "LineString",
        Geometry::MultiLineString(_) => "MultiLineString",
        Geometry::Polygon(_) => "Polygon",
        Geometry::MultiPolygon(_) => "MultiPolygon",
        Geometry::GeometryCollection(_) => "GeometryCollection",
    }
}

fn kind_name(kind: GeometryKind) -> &'static str {
    match kind {
        GeometryKind::Point => "points",
        GeometryKind::MultiPoint => "multipoints",
        GeometryKind::Line => "lines",
        GeometryKind::Polygon => "polygons",
        GeometryKind::Any => "null shapes",
    }
}

fn put(content: &mut Vec<u8>, value: f64) {
    content.extend_from_slice(&value.to_le_bytes());
}

fn measure_of(coord: &Coord) -> f64 {
    coord.m.unwrap_or(-1e39)
}

fn encode_point(coord: &Coord, shape_type: ShapeType, content: &mut Vec<u8>, extent: &mut Extent) {
    put(content, coord.x);
    put(content, coord.y);
    extent.add(0, coord.x);
    extent.add(1, coord.y);
    if shape_type.has_z() {
        let z = coord.z.unwrap_or(0.0);
        put(content, z);
        extent.add(2, z);
    }
    if shape_type.has_z() || shape_type.has_m() {
        put(content, measure_of(coord));
        if let Some(m) = coord.m {
            extent.add(3, m);
        }
    }
}

fn encode_points(
    coords: &[Coord],
    shape_type: ShapeType,
    has_m: bool,
    content: &mut Vec<u8>,
    extent: &mut Extent,
) -> Result<(), String> {
    let count = i32::try_from(coords.len()).map_err(|_| "too many points".to_owned())?;
    let part = Part {
        coords,
        reversed: false,
    };
    put_box(content, std::slice::from_ref(&part));
    content.extend_from_slice(&count.to_le_bytes());
    put_ordinates(
        std::slice::from_ref(&part),
        shape_type,
        has_m,
        content,
        extent,
    );
    Ok(())
}

fn encode_parts(
    parts: &[Part<'_>],
    shape_type: ShapeType,
    has_m: bool,
    content: &mut Vec<u8>,
    extent: &mut Extent,
) -> Result<(), String> {
    let total: usize = parts.iter().map(|part| part.coords.len()).sum();
    let too_many = || "too many points".to_owned();
    let points = i32::try_from(total).map_err(|_| too_many())?;
    let part_count = i32::try_from(parts.len()).map_err(|_| too_many())?;
    put_box(content, parts);
    content.extend_from_slice(&part_count.to_le_bytes());
    content.extend_from_slice(&points.to_le_bytes());
    let mut start = 0i32;
    for part in parts {
        content.extend_from_slice(&start.to_le_bytes());
        start = start.saturating_add(i32::try_from(part.coords.len()).map_err(|_| too_many())?);
    }
    put_ordinates(parts, shape_type, has_m, content, extent);
    Ok(())
}

fn put_box(content: &mut Vec<u8>, parts: &[Part<'_>]) {
    let mut shape = Extent::new();
    for coord in parts.iter().flat_map(|part| part.coords) {
        shape.add(0, coord.x);
        shape.add(1, coord.y);
    }
    let (xmin, xmax) = shape.range(0);
    let (ymin, ymax) = shape.range(1);
    for value in [xmin, ymin, xmax, ymax] {
        put(content, value);
    }
}

/// Writes x/y of every part, then the z block and the m block where the type has them.
fn put_ordinates(
    parts: &[Part<'_>],
    shape_type: ShapeType,
    has_m: bool,
    content: &mut Vec<u8>,
    extent: &mut Extent,
) {
    for coord in parts.iter().flat_map(Part::iter) {
        put(content, coord.x);
        put(content, coord.y);
        extent.add(0, coord.x);
        extent.add(1, coord.y);
    }
    let mut block = |axis: usize, value_of: &dyn Fn(&Coord) -> Option<f64>, missing: f64| {
        let mut range = Extent::new();
        for value in parts.iter().flat_map(Part::iter).filter_map(value_of) {
            range.add(0, value);
            extent.add(axis, value);
        }
        let (min, max) = range.range(0);
        put(content, min);
        put(content, max);
        for coord in parts.iter().flat_map(Part::iter) {
            put(content, value_of(coord).unwrap_or(missing));
        }
    };
    if shape_type.has_z() {
        block(2, &|coord: &Coord| Some(coord.z.unwrap_or(0.0)), 0.0);
    }
    if shape_type.has_m() || (shape_type.has_z() && has_m) {
        block(3, &|coord: &Coord| coord.m, -1e39);
    }
}

impl DatasetSink for ShpSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        match header {
            Header::Features(schema) => self.begin_features(schema),
            other => Err(FormatError::Incompatible {
                data: other.kind().name(),
                format: FORMAT,
                message: "the Shapefile writer takes features".to_owned(),
            }),
        }
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        match &feature.geometry {
            None => {
                self.content.clear();
                self.content.extend_from_slice(&0i32.to_le_bytes());
            }
            Some(geometry) => {
                let shape_type = self.shape_type_for(geometry)?;
                let mut content = std::mem::take(&mut self.content);
                let encoded = encode(
                    geometry,
                    shape_type,
                    self.has_m,
                    &mut content,
                    &mut self.extent,
                );
                self.content = content;
                encoded.map_err(|message| self.incompatible(message))?;
            }
        }
        let number = u64::from(self.records) + 1;
        let Some(dbf) = self.dbf.as_mut() else {
            return Err(FormatError::Catalogue("feature before begin".to_owned()));
        };
        dbf.write_record(&feature.values, number)?;
        self.write_record()
    }

    fn end(&mut self) -> FormatResult<()> {
        self.ended = true;
        Ok(())
    }
}

impl WriterSink for ShpSink {
    fn finish(mut self: Box<Self>) -> FormatResult<Written> {
        if !self.ended || self.dbf.is_none() {
            return Err(FormatError::Catalogue(
                "the Shapefile writer was not given a complete dataset".to_owned(),
            ));
        }
        self.finish_parts()?;
        if let Some(dbf) = self.dbf.as_ref() {
            self.notes.extend(dbf.notes());
        }
        let files = std::mem::take(&mut self.files);
        let notes = std::mem::take(&mut self.notes);
        let this = *self;
        let Self {
            target,
            shp,
            shx,
            dbf,
            ..
        } = this;
        drop((shp, shx, dbf));
        if target.staging.is_none() {
            return Ok(Written {
                files,
                notes,
                summary: None,
            });
        }
        zip_parts(&files, &target.output)?;
        Ok(Written {
            files: vec![target.output],
            notes,
            summary: None,
        })
    }
}

/// Writes `files` into the zip archive `output`, by file name.
fn zip_parts(files: &[PathBuf], output: &Path) -> FormatResult<()> {
    let file = File::create(output).map_err(|error| FormatError::write(output, error))?;
    let mut archive = zip::ZipWriter::new(BufWriter::new(file));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    let zip_error = |error: zip::result::ZipError| {
        FormatError::write(output, std::io::Error::other(error.to_string()))
    };
    for path in files {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("part")
            .to_owned();
        archive.start_file(name, options).map_err(zip_error)?;
        let mut part = File::open(path).map_err(|error| FormatError::read(path, error))?;
        std::io::copy(&mut part, &mut archive)
            .map_err(|error| FormatError::write(output, error))?;
    }
    let mut inner = archive.finish().map_err(zip_error)?;
    inner
        .flush()
        .map_err(|error| FormatError::write(output, error))
}

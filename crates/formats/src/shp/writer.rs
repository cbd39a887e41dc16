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
                base: output.with_file_name(&stem),
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
}

/// The part of a Shapefile at `base` (a path without extension) with `extension`; appended,
/// so that a stem with dots keeps them.
fn part(base: &Path, extension: &str) -> PathBuf {
    let mut path = base.as_os_str().to_owned();
    path.push(".");
    path.push(extension);
    PathBuf::from(path)
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

/// Which geometries go where (the writer's `GeometryType` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KindChoice {
    /// One Shapefile per kind of geometry found.
    Split,
    /// Only this kind; features of other kinds are skipped.
    Only(GeometryKind),
}

impl KindChoice {
    /// The choice a parameter value names (`AUTO`, or an ogr2ogr `-nlt` name).
    pub(crate) fn parse(value: &str) -> Self {
        match value.to_ascii_uppercase().as_str() {
            "POINT" => Self::Only(GeometryKind::Point),
            "MULTIPOINT" => Self::Only(GeometryKind::MultiPoint),
            "LINESTRING" | "MULTILINESTRING" => Self::Only(GeometryKind::Line),
            "POLYGON" | "MULTIPOLYGON" => Self::Only(GeometryKind::Polygon),
            _ => Self::Split,
        }
    }
}

/// The Shapefile kind of `geometry`; `None` for a collection, which no Shapefile holds.
fn kind_of(geometry: &Geometry) -> Option<GeometryKind> {
    Some(match geometry {
        Geometry::Point(_) => GeometryKind::Point,
        Geometry::MultiPoint(_) => GeometryKind::MultiPoint,
        Geometry::LineString(_) | Geometry::MultiLineString(_) => GeometryKind::Line,
        Geometry::Polygon(_) | Geometry::MultiPolygon(_) => GeometryKind::Polygon,
        Geometry::GeometryCollection(_) => return None,
    })
}

/// The suffix a file of `kind` gets when the output is split: ogr2ogr's `-nlt` names.
fn kind_suffix(kind: GeometryKind) -> &'static str {
    match kind {
        GeometryKind::Point => "point",
        GeometryKind::MultiPoint => "multipoint",
        GeometryKind::Line => "linestring",
        GeometryKind::Polygon => "polygon",
        GeometryKind::Any => "null",
    }
}

/// One Shapefile being written (.shp, .shx, .dbf, .cpg, .prj).
struct Layer {
    /// Path of the parts without extension.
    base: PathBuf,
    shp: BufWriter<File>,
    shx: BufWriter<File>,
    dbf: DbfWriter,
    shape_type: Option<ShapeType>,
    extent: Extent,
    /// Length of the .shp so far in 16-bit words.
    shp_words: u64,
    records: u32,
    content: Vec<u8>,
    /// Extensions of the parts written.
    extensions: Vec<&'static str>,
}

/// The sink of [`super::ShpWriter`].
pub(crate) struct ShpSink {
    target: Target,
    choice: KindChoice,
    schema: Option<FeatureSchema>,
    /// The first layer takes null geometries and, while its type is open, the first geometry.
    layers: Vec<Layer>,
    /// Features, counted over every layer, for messages.
    features: u64,
    skipped: u64,
    /// GeometryCollections written as their members, grouped by kind.
    collections: u64,
    notes: Vec<String>,
    ended: bool,
}

impl ShpSink {
    /// Prepares the output (the staging folder of a .zip); the files are created by `begin`.
    pub(crate) fn create(output: &Path, choice: KindChoice) -> FormatResult<Self> {
        Ok(Self {
            target: Target::new(output)?,
            choice,
            schema: None,
            layers: Vec::new(),
            features: 0,
            skipped: 0,
            collections: 0,
            notes: Vec::new(),
            ended: false,
        })
    }

    fn begin_features(&mut self, schema: &FeatureSchema) -> FormatResult<()> {
        self.schema = Some(schema.clone());
        let kind = match self.choice {
            KindChoice::Only(kind) => kind,
            KindChoice::Split => schema.geometry_kind,
        };
        let layer = self.new_layer(self.target.base.clone(), kind)?;
        self.layers.push(layer);
        Ok(())
    }

    /// Creates the files of a layer at `base` for geometries of `kind` (`Any`: fixed by the
    /// first geometry).
    fn new_layer(&mut self, base: PathBuf, kind: GeometryKind) -> FormatResult<Layer> {
        let Some(schema) = self.schema.as_ref() else {
            return Err(FormatError::Catalogue("feature before begin".to_owned()));
        };
        let shape_type = (kind != GeometryKind::Any)
            .then(|| ShapeType::for_kind(kind, schema.has_z, schema.has_m));
        let shp_path = part(&base, "shp");
        let shx_path = part(&base, "shx");
        let mut shp = create_file(&shp_path)?;
        let mut shx = create_file(&shx_path)?;
        shp.write_all(&[0u8; 100])
            .map_err(|error| FormatError::write(&shp_path, error))?;
        shx.write_all(&[0u8; 100])
            .map_err(|error| FormatError::write(&shx_path, error))?;
        let dbf_path = part(&base, "dbf");
        let (dbf, notes) = DbfWriter::create(&dbf_path, &schema.fields)?;
        let mut extensions = vec!["shp", "shx", "dbf"];
        let cpg_path = part(&base, "cpg");
        std::fs::write(&cpg_path, "UTF-8").map_err(|error| FormatError::write(&cpg_path, error))?;
        extensions.push("cpg");
        let mut crs_note = None;
        if let Some(crs) = &schema.crs {
            match crate::crs::wkt_of(crs) {
                Some(wkt) => {
                    let prj_path = part(&base, "prj");
                    std::fs::write(&prj_path, wkt)
                        .map_err(|error| FormatError::write(&prj_path, error))?;
                    extensions.push("prj");
                }
                None => crs_note = Some(format!("no .prj written: no WKT is known for {crs:?}")),
            }
        }
        if self.layers.is_empty() {
            self.notes.extend(notes);
            self.notes.extend(crs_note);
        }
        Ok(Layer {
            base,
            shp,
            shx,
            dbf,
            shape_type,
            extent: Extent::new(),
            shp_words: 50,
            records: 0,
            content: Vec::new(),
            extensions,
        })
    }

    fn incompatible(&self, message: impl Into<String>) -> FormatError {
        FormatError::Incompatible {
            data: "feature collection",
            format: FORMAT,
            message: format!("feature {}: {}", self.features + 1, message.into()),
        }
    }

    /// The index of the layer for a geometry of `kind`, creating it when the output is split;
    /// `None` when the feature is to be skipped.
    fn layer_for(&mut self, kind: GeometryKind) -> FormatResult<Option<usize>> {
        let fits = |layer: &Layer| match layer.shape_type.map(ShapeType::kind) {
            Some(GeometryKind::MultiPoint) => {
                matches!(kind, GeometryKind::Point | GeometryKind::MultiPoint)
            }
            Some(own) => own == kind,
            None => false,
        };
        if let Some(index) = self
            .layers
            .iter()
            .position(|layer| layer.shape_type.map(ShapeType::kind) == Some(kind))
        {
            return Ok(Some(index));
        }
        if let Some(index) = self.layers.iter().position(fits) {
            return Ok(Some(index));
        }
        let has_z = self.schema.as_ref().is_some_and(|schema| schema.has_z);
        let has_m = self.schema.as_ref().is_some_and(|schema| schema.has_m);
        if let Some(first) = self.layers.first_mut()
            && first.shape_type.is_none()
        {
            first.shape_type = Some(ShapeType::for_kind(kind, has_z, has_m));
            return Ok(Some(0));
        }
        if matches!(self.choice, KindChoice::Only(_)) {
            return Ok(None);
        }
        let stem = self
            .target
            .base
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("layer")
            .to_owned();
        let base = self
            .target
            .base
            .with_file_name(format!("{stem}_{}", kind_suffix(kind)));
        let mut layer = self.new_layer(base, kind)?;
        layer.shape_type = Some(ShapeType::for_kind(kind, has_z, has_m));
        self.layers.push(layer);
        Ok(Some(self.layers.len() - 1))
    }
}

impl Layer {
    fn write_record(&mut self, values: &[crate::model::Value]) -> FormatResult<()> {
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
            .ok_or_else(|| FormatError::Incompatible {
                data: "feature collection",
                format: FORMAT,
                message: "too many features".to_owned(),
            })?;
        self.dbf.write_record(values, u64::from(number))?;
        let offset = self.shp_words as i32;
        let words = content_words as i32;
        let shp_path = part(&self.base, "shp");
        let write_error = |error| FormatError::write(&shp_path, error);
        self.shp
            .write_all(&(number as i32).to_be_bytes())
            .map_err(write_error)?;
        self.shp
            .write_all(&words.to_be_bytes())
            .map_err(write_error)?;
        self.shp.write_all(&self.content).map_err(write_error)?;
        let shx_path = part(&self.base, "shx");
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

    fn finish(&mut self) -> FormatResult<()> {
        let shape_type = self.shape_type.unwrap_or(ShapeType::Null);
        let shp_header = main_header(self.shp_words, shape_type, &self.extent);
        let shx_words = 50u64.saturating_add(u64::from(self.records).saturating_mul(4));
        let shx_header = main_header(shx_words, shape_type, &self.extent);
        finish_file(&mut self.shp, &shp_header, &part(&self.base, "shp"))?;
        finish_file(&mut self.shx, &shx_header, &part(&self.base, "shx"))?;
        self.dbf.finish()
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
                geometry.type_name(),
                kind_name(kind)
            ));
        }
    }
    encode_parts(&parts, shape_type, has_m, content, extent)
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
        let Some(Geometry::GeometryCollection(members)) = &feature.geometry else {
            return self.write_feature(feature);
        };
        self.collections += 1;
        let parts = collection_parts(members);
        if parts.is_empty() {
            return self.write_feature(&Feature {
                geometry: None,
                values: feature.values.clone(),
            });
        }
        for part in parts {
            self.write_feature(&Feature {
                geometry: Some(part),
                values: feature.values.clone(),
            })?;
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        self.ended = true;
        Ok(())
    }
}

/// The members of a GeometryCollection (nested ones flattened) grouped by Shapefile kind,
/// in the order the kinds first appear: all points as one Point or MultiPoint, all lines as
/// one LineString or MultiLineString, all polygons as one Polygon or MultiPolygon. A
/// Shapefile has no collections; this keeps one record per kind for the feature, with its
/// attributes, in the file of that kind.
fn collection_parts(members: &[Geometry]) -> Vec<Geometry> {
    fn gather(
        geometry: &Geometry,
        points: &mut Vec<Coord>,
        lines: &mut Vec<Vec<Coord>>,
        polygons: &mut Vec<Vec<Vec<Coord>>>,
        order: &mut Vec<GeometryKind>,
    ) {
        let kind = match geometry {
            Geometry::Point(point) => {
                points.push(*point);
                GeometryKind::Point
            }
            Geometry::MultiPoint(many) => {
                points.extend_from_slice(many);
                GeometryKind::Point
            }
            Geometry::LineString(line) => {
                lines.push(line.clone());
                GeometryKind::Line
            }
            Geometry::MultiLineString(many) => {
                lines.extend(many.iter().cloned());
                GeometryKind::Line
            }
            Geometry::Polygon(rings) => {
                polygons.push(rings.clone());
                GeometryKind::Polygon
            }
            Geometry::MultiPolygon(many) => {
                polygons.extend(many.iter().cloned());
                GeometryKind::Polygon
            }
            Geometry::GeometryCollection(inner) => {
                for member in inner {
                    gather(member, points, lines, polygons, order);
                }
                return;
            }
        };
        if !order.contains(&kind) {
            order.push(kind);
        }
    }
    let (mut points, mut lines, mut polygons, mut order) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for member in members {
        gather(member, &mut points, &mut lines, &mut polygons, &mut order);
    }
    order
        .into_iter()
        .map(|kind| match kind {
            GeometryKind::Point => match points.as_slice() {
                [point] => Geometry::Point(*point),
                _ => Geometry::MultiPoint(std::mem::take(&mut points)),
            },
            GeometryKind::Line if lines.len() == 1 => {
                Geometry::LineString(lines.pop().unwrap_or_default())
            }
            GeometryKind::Line => Geometry::MultiLineString(std::mem::take(&mut lines)),
            _ if polygons.len() == 1 => Geometry::Polygon(polygons.pop().unwrap_or_default()),
            _ => Geometry::MultiPolygon(std::mem::take(&mut polygons)),
        })
        .collect()
}

impl ShpSink {
    /// Writes one feature whose geometry is not a collection.
    fn write_feature(&mut self, feature: &Feature) -> FormatResult<()> {
        let index = match &feature.geometry {
            None => 0,
            Some(geometry) => {
                let Some(kind) = kind_of(geometry) else {
                    return Err(self.incompatible("a nested GeometryCollection cannot be written"));
                };
                match self.layer_for(kind)? {
                    Some(index) => index,
                    None => {
                        self.skipped += 1;
                        self.features += 1;
                        return Ok(());
                    }
                }
            }
        };
        let has_m = self.schema.as_ref().is_some_and(|schema| schema.has_m);
        let number = self.features + 1;
        let Some(layer) = self.layers.get_mut(index) else {
            return Err(FormatError::Catalogue("feature before begin".to_owned()));
        };
        layer.content.clear();
        let encoded = match (&feature.geometry, layer.shape_type) {
            (Some(geometry), Some(shape_type)) => encode(
                geometry,
                shape_type,
                has_m,
                &mut layer.content,
                &mut layer.extent,
            ),
            _ => {
                layer.content.extend_from_slice(&0i32.to_le_bytes());
                Ok(())
            }
        };
        if let Err(message) = encoded {
            return Err(FormatError::Incompatible {
                data: "feature collection",
                format: FORMAT,
                message: format!("feature {number}: {message}"),
            });
        }
        layer.write_record(&feature.values)?;
        self.features = number;
        Ok(())
    }
}

impl WriterSink for ShpSink {
    fn finish(mut self: Box<Self>) -> FormatResult<Written> {
        if !self.ended || self.layers.is_empty() {
            return Err(FormatError::Catalogue(
                "the Shapefile writer was not given a complete dataset".to_owned(),
            ));
        }
        for layer in &mut self.layers {
            layer.finish()?;
            self.notes.extend(layer.dbf.notes());
        }
        if self.skipped > 0 {
            self.notes.push(format!(
                "{} feature(s) of other geometry types skipped: the GeometryType parameter keeps one type",
                self.skipped
            ));
        }
        if self.collections > 0 {
            self.notes.push(format!(
                "{} GeometryCollection(s) written as their members, one record per geometry type with the feature's attributes (a Shapefile holds no collections)",
                self.collections
            ));
        }
        let split = self.layers.len() > 1;
        let this = *self;
        let Self {
            target,
            layers,
            mut notes,
            ..
        } = this;
        let (files, names) = close_layers(layers, split)?;
        if split {
            notes.push(format!(
                "the features hold several geometry types, written as one Shapefile each: {}",
                names.join(", ")
            ));
        }
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

/// Closes the files of `layers`; when the output is `split`, the first layer (created under
/// the plain name before a second type came) is renamed after its type. Returns the files and
/// the names of the .shp files.
fn close_layers(layers: Vec<Layer>, split: bool) -> FormatResult<(Vec<PathBuf>, Vec<String>)> {
    let mut files = Vec::new();
    let mut names = Vec::new();
    for (index, layer) in layers.into_iter().enumerate() {
        let Layer {
            base,
            shp,
            shx,
            dbf,
            shape_type,
            extensions,
            ..
        } = layer;
        drop((shp, shx, dbf));
        let base = if split && index == 0 {
            let kind = shape_type.map_or(GeometryKind::Any, ShapeType::kind);
            let stem = base
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("layer")
                .to_owned();
            let renamed = base.with_file_name(format!("{stem}_{}", kind_suffix(kind)));
            for extension in &extensions {
                let from = part(&base, extension);
                let to = part(&renamed, extension);
                std::fs::rename(&from, &to).map_err(|error| FormatError::write(&to, error))?;
            }
            renamed
        } else {
            base
        };
        if let Some(name) = base.file_name().and_then(|name| name.to_str()) {
            names.push(format!("{name}.shp"));
        }
        files.extend(extensions.iter().map(|extension| part(&base, extension)));
    }
    Ok((files, names))
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

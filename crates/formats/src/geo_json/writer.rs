//! Writing a GeoJSON FeatureCollection one feature at a time, by hand rather than through
//! serde: numbers go through `ryu`/`itoa` (shortest representation that reads back to the same
//! f64) straight into a buffered file, with no per-feature allocation. This is what makes a
//! million-point Shapefile convert faster than ogr2ogr.
//!
//! By default coordinates are written as given (reprojection is `CrsTransformation`'s job; ring
//! order is kept), as ogr2ogr does by default: data in a CRS other than WGS 84 gets the legacy
//! `crs` member (`urn:ogc:def:crs:EPSG::code`), as ogr2ogr writes it, so that readers can tell
//! and the code survives a round trip; a CRS without a known EPSG code is noted instead. This
//! default keeps the data as it is (no loss of precision, no datum shift chosen for the user),
//! which is what a conversion should do unless asked otherwise.
//!
//! With the `Rfc7946` parameter the output follows RFC 7946 (like `ogr2ogr -lco RFC7946=YES`):
//! positions are reprojected to WGS 84 longitude/latitude, exterior rings are counterclockwise
//! and holes clockwise, and no `crs` member is written.
//!
//! z is kept; m cannot be represented in GeoJSON and is dropped, with a note.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::catalogue::{WriterSink, Written};
use crate::crs::{Crs, CrsTransform, Projection};
use crate::error::{FormatError, FormatResult};
use crate::model::{
    Coord, DatasetSink, Feature, FeatureSchema, FieldType, Geometry, Header, Value,
};

use super::FORMAT;

/// The sink of [`super::GeoJsonWriter`].
pub(crate) struct GeoJsonSink {
    path: PathBuf,
    file: BufWriter<File>,
    /// `"name":` of each field, escaped once.
    keys: Vec<Vec<u8>>,
    /// The field written as each feature's `id` member rather than a property: the text or
    /// integer field a GeoJSON reader made of `id` members, so that GeoJSON -> GeoJSON keeps
    /// them where they were (as GDAL does through its native data); an ordinary `id` column
    /// (from a Shapefile, say) stays a property, as in GDAL.
    id_field: Option<usize>,
    /// The feature being formatted, reused.
    buffer: Vec<u8>,
    written: u64,
    notes: Vec<String>,
    saw_m: bool,
    begun: bool,
    ended: bool,
    /// Strict RFC 7946 output (see the module doc).
    rfc7946: bool,
    /// With `rfc7946`, the transformation of positions to WGS 84, unless they are in it.
    to_wgs84: Option<CrsTransform>,
}

impl GeoJsonSink {
    /// Creates the output file.
    pub(crate) fn create(output: &Path, rfc7946: bool) -> FormatResult<Self> {
        let file = File::create(output).map_err(|error| FormatError::write(output, error))?;
        Ok(Self {
            path: output.to_path_buf(),
            file: BufWriter::with_capacity(1024 * 1024, file),
            keys: Vec::new(),
            id_field: None,
            buffer: Vec::with_capacity(4096),
            written: 0,
            notes: Vec::new(),
            saw_m: false,
            begun: false,
            ended: false,
            rfc7946,
            to_wgs84: None,
        })
    }

    fn io(&self, error: std::io::Error) -> FormatError {
        FormatError::write(&self.path, error)
    }

    fn begin_features(&mut self, schema: &FeatureSchema) -> FormatResult<()> {
        let mut head = Vec::new();
        head.extend_from_slice(b"{\n\"type\": \"FeatureCollection\",\n");
        if self.rfc7946 {
            self.to_wgs84 = schema.crs.as_ref().map(to_wgs84).transpose()?.flatten();
        } else if let Some(code) = schema.crs.as_ref().and_then(|crs| self.crs_code(crs))
            && code != 4326
        {
            let member = format!(
                "\"crs\": {{ \"type\": \"name\", \"properties\": {{ \"name\": \"urn:ogc:def:crs:EPSG::{code}\" }} }},\n"
            );
            head.extend_from_slice(member.as_bytes());
        }
        head.extend_from_slice(b"\"features\": [\n");
        self.file.write_all(&head).map_err(|error| self.io(error))?;
        self.keys = schema
            .fields
            .iter()
            .map(|field| {
                let mut key = Vec::new();
                write_string(&mut key, &field.name);
                key.push(b':');
                key.push(b' ');
                key
            })
            .collect();
        self.id_field = schema.fields.iter().position(|field| {
            field.feature_id && matches!(field.field_type, FieldType::Text | FieldType::Integer)
        });
        if schema.has_m {
            self.saw_m = true;
        }
        self.begun = true;
        Ok(())
    }

    /// The EPSG code to declare; notes a CRS that has none.
    fn crs_code(&mut self, crs: &Crs) -> Option<u32> {
        if let Some(code) = crate::crs::resolve_epsg(crs) {
            return Some(code);
        }
        self.notes.push(format!(
            "the coordinate system {crs:?} has no EPSG code, so the GeoJSON does not declare it; \
             GeoJSON readers will assume WGS 84 (use --output-srid 4326 to reproject)"
        ));
        None
    }
}

/// The transformation of positions in `crs` to WGS 84 longitude/latitude; `None` when they
/// are in it already.
fn to_wgs84(crs: &Crs) -> FormatResult<Option<CrsTransform>> {
    if crate::crs::resolve_epsg(crs) == Some(4326) {
        return Ok(None);
    }
    let from = Projection::of(crs).map_err(|error| FormatError::Incompatible {
        data: "features",
        format: FORMAT,
        message: format!(
            "RFC 7946 output is WGS 84, but the data's coordinate system cannot be \
             reprojected ({error}); set the reader's SRID or write without Rfc7946"
        ),
    })?;
    Ok(Some(CrsTransform::new(from, Projection::epsg(4326)?)))
}

/// Twice the signed area of a ring (positive when counterclockwise).
fn signed_area(ring: &[Coord]) -> f64 {
    let Some(first) = ring.first() else {
        return 0.0;
    };
    ring.windows(2)
        .map(|pair| match pair {
            [a, b] => (a.x - first.x) * (b.y - first.y) - (b.x - first.x) * (a.y - first.y),
            _ => 0.0,
        })
        .sum()
}

/// Orients the rings of a polygon as RFC 7946 says: exterior counterclockwise, holes
/// clockwise.
fn orient_rings(rings: &mut [Vec<Coord>]) {
    for (index, ring) in rings.iter_mut().enumerate() {
        let area = signed_area(ring);
        let wants_counterclockwise = index == 0;
        if area != 0.0 && (area > 0.0) != wants_counterclockwise {
            ring.reverse();
        }
    }
}

fn orient_geometry(geometry: &mut Geometry) {
    match geometry {
        Geometry::Polygon(rings) => orient_rings(rings),
        Geometry::MultiPolygon(polygons) => {
            polygons.iter_mut().for_each(|rings| orient_rings(rings))
        }
        Geometry::GeometryCollection(parts) => parts.iter_mut().for_each(orient_geometry),
        Geometry::Point(_)
        | Geometry::MultiPoint(_)
        | Geometry::LineString(_)
        | Geometry::MultiLineString(_) => {}
    }
}

/// Appends `text` as a JSON string.
fn write_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1F => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(start..index).unwrap_or_default());
        if escape.is_empty() {
            out.extend_from_slice(format!("\\u{byte:04x}").as_bytes());
        } else {
            out.extend_from_slice(escape);
        }
        start = index + 1;
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}

fn write_f64(out: &mut Vec<u8>, value: f64) {
    if value.is_finite() {
        let mut buffer = ryu::Buffer::new();
        let text = buffer.format_finite(value);
        out.extend_from_slice(text.strip_suffix(".0").unwrap_or(text).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

fn write_position(out: &mut Vec<u8>, coord: &Coord, saw_m: &mut bool) {
    out.push(b'[');
    write_f64(out, coord.x);
    out.extend_from_slice(b", ");
    write_f64(out, coord.y);
    if let Some(z) = coord.z {
        out.extend_from_slice(b", ");
        write_f64(out, z);
    }
    if coord.m.is_some() {
        *saw_m = true;
    }
    out.push(b']');
}

fn write_line(out: &mut Vec<u8>, line: &[Coord], saw_m: &mut bool) {
    out.push(b'[');
    for (index, coord) in line.iter().enumerate() {
        if index > 0 {
            out.extend_from_slice(b", ");
        }
        write_position(out, coord, saw_m);
    }
    out.push(b']');
}

fn write_lines(out: &mut Vec<u8>, lines: &[Vec<Coord>], saw_m: &mut bool) {
    out.push(b'[');
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            out.extend_from_slice(b", ");
        }
        write_line(out, line, saw_m);
    }
    out.push(b']');
}

fn write_geometry(out: &mut Vec<u8>, geometry: &Geometry, saw_m: &mut bool) {
    let kind: &[u8] = match geometry {
        Geometry::Point(_) => b"Point",
        Geometry::MultiPoint(_) => b"MultiPoint",
        Geometry::LineString(_) => b"LineString",
        Geometry::MultiLineString(_) => b"MultiLineString",
        Geometry::Polygon(_) => b"Polygon",
        Geometry::MultiPolygon(_) => b"MultiPolygon",
        Geometry::GeometryCollection(_) => b"GeometryCollection",
    };
    out.extend_from_slice(b"{ \"type\": \"");
    out.extend_from_slice(kind);
    out.extend_from_slice(b"\", ");
    match geometry {
        Geometry::GeometryCollection(parts) => {
            out.extend_from_slice(b"\"geometries\": [");
            for (index, part) in parts.iter().enumerate() {
                if index > 0 {
                    out.extend_from_slice(b", ");
                }
                write_geometry(out, part, saw_m);
            }
            out.extend_from_slice(b"] }");
            return;
        }
        _ => out.extend_from_slice(b"\"coordinates\": "),
    }
    match geometry {
        Geometry::Point(coord) => write_position(out, coord, saw_m),
        Geometry::MultiPoint(line) | Geometry::LineString(line) => write_line(out, line, saw_m),
        Geometry::MultiLineString(lines) | Geometry::Polygon(lines) => {
            write_lines(out, lines, saw_m);
        }
        Geometry::MultiPolygon(polygons) => {
            out.push(b'[');
            for (index, polygon) in polygons.iter().enumerate() {
                if index > 0 {
                    out.extend_from_slice(b", ");
                }
                write_lines(out, polygon, saw_m);
            }
            out.push(b']');
        }
        Geometry::GeometryCollection(_) => {}
    }
    out.extend_from_slice(b" }");
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Boolean(true) => out.extend_from_slice(b"true"),
        Value::Boolean(false) => out.extend_from_slice(b"false"),
        Value::Integer(integer) => {
            out.extend_from_slice(itoa::Buffer::new().format(*integer).as_bytes());
        }
        Value::Float(float) => {
            if float.is_finite() {
                out.extend_from_slice(ryu::Buffer::new().format_finite(*float).as_bytes());
            } else {
                out.extend_from_slice(b"null");
            }
        }
        Value::Text(text) => write_string(out, text),
        Value::Date(date) => write_date(out, *date),
        Value::DateTime(time) => {
            out.extend_from_slice(
                format!("\"{}\"", time.format("%Y-%m-%dT%H:%M:%S%.f")).as_bytes(),
            );
        }
    }
}

/// Writes `"YYYY-MM-DD"` without going through chrono's formatter (one date per feature in
/// the benchmark; the formatter allocated each time).
fn write_date(out: &mut Vec<u8>, date: chrono::NaiveDate) {
    use chrono::Datelike;
    let (year, month, day) = (date.year(), date.month(), date.day());
    if !(0..=9999).contains(&year) {
        out.extend_from_slice(format!("\"{}\"", date.format("%Y-%m-%d")).as_bytes());
        return;
    }
    let digit = |value: u32| b'0' + u8::try_from(value % 10).unwrap_or(0);
    let year = year.unsigned_abs();
    out.extend_from_slice(&[
        b'"',
        digit(year / 1000),
        digit(year / 100),
        digit(year / 10),
        digit(year),
        b'-',
        digit(month / 10),
        digit(month),
        b'-',
        digit(day / 10),
        digit(day),
        b'"',
    ]);
}

impl DatasetSink for GeoJsonSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        match header {
            Header::Features(schema) => self.begin_features(schema),
            other => Err(FormatError::Incompatible {
                data: other.kind().name(),
                format: FORMAT,
                message: "the GeoJSON writer takes features".to_owned(),
            }),
        }
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        let mut out = std::mem::take(&mut self.buffer);
        out.clear();
        if self.written > 0 {
            out.extend_from_slice(b",\n");
        }
        out.extend_from_slice(b"{ \"type\": \"Feature\", ");
        let id = self.id_field.and_then(|slot| feature.values.get(slot));
        if let Some(id @ (Value::Text(_) | Value::Integer(_))) = id {
            out.extend_from_slice(b"\"id\": ");
            write_value(&mut out, id);
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(b"\"properties\": { ");
        let mut first = true;
        for (index, (key, value)) in self.keys.iter().zip(&feature.values).enumerate() {
            if Some(index) == self.id_field {
                continue;
            }
            if !first {
                out.extend_from_slice(b", ");
            }
            first = false;
            out.extend_from_slice(key);
            write_value(&mut out, value);
        }
        out.extend_from_slice(b" }, \"geometry\": ");
        match &feature.geometry {
            Some(geometry) if self.rfc7946 => {
                let mut geometry = match &self.to_wgs84 {
                    Some(transform) => crate::crs::sink::transform_geometry(geometry, transform)?,
                    None => geometry.clone(),
                };
                orient_geometry(&mut geometry);
                write_geometry(&mut out, &geometry, &mut self.saw_m);
            }
            Some(geometry) => write_geometry(&mut out, geometry, &mut self.saw_m),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b" }");
        let result = self.file.write_all(&out);
        self.buffer = out;
        result.map_err(|error| self.io(error))?;
        self.written += 1;
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        self.ended = true;
        Ok(())
    }
}

impl WriterSink for GeoJsonSink {
    fn finish(mut self: Box<Self>) -> FormatResult<Written> {
        if !self.begun || !self.ended {
            return Err(FormatError::Catalogue(
                "the GeoJSON writer was not given a complete dataset".to_owned(),
            ));
        }
        let closing: &[u8] = if self.written > 0 {
            b"\n]\n}\n"
        } else {
            b"]\n}\n"
        };
        let result = self
            .file
            .write_all(closing)
            .and_then(|()| self.file.flush());
        result.map_err(|error| self.io(error))?;
        if self.saw_m {
            self.notes
                .push("m (measure) values dropped: GeoJSON has no place for them".to_owned());
        }
        Ok(Written {
            files: vec![self.path.clone()],
            notes: std::mem::take(&mut self.notes),
            summary: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esri_names_and_authorities_give_epsg_codes() {
        let utm = r#"PROJCS["ETRS_1989_UTM_Zone_32N",GEOGCS["GCS_ETRS_1989",DATUM["D_ETRS_1989",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],UNIT["Meter",1.0]]"#;
        let cases = [
            (utm, Some(25832)),
            (r#"GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984"]]"#, Some(4326)),
            (
                r#"PROJCS["WGS_1984_UTM_Zone_33S",GEOGCS["x"]]"#,
                Some(32733),
            ),
            (
                r#"PROJCS["x",GEOGCS["y",AUTHORITY["EPSG","4326"]],AUTHORITY["EPSG","3035"]]"#,
                Some(3035),
            ),
            (r#"PROJCS["Local",GEOGCS["y"]]"#, None),
        ];
        for (wkt, code) in cases {
            assert_eq!(
                crate::crs::resolve_epsg(&Crs::Wkt(wkt.to_owned())),
                code,
                "{wkt}"
            );
        }
    }
}

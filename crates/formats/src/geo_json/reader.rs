//! Reading GeoJSON in two streaming passes: the first infers the schema (field names in order
//! of first appearance, their widened types, the geometry kind, z, the legacy `crs` member),
//! because a sink must know the schema before the first feature; the second converts and
//! emits the features. Each pass holds one feature at a time.
//!
//! Property types widen as values disagree: Integer + Float gives Float, Boolean + Integer gives
//! Integer, Date + DateTime gives DateTime, and any other mix (or an object or array value)
//! gives Text, where non-text values keep their JSON spelling. A field whose values are all
//! null is Text. Strings are Date (`YYYY-MM-DD`) or DateTime (`YYYY-MM-DDTHH:MM:SS[.fff][Z]`)
//! when every non-null value of the field has that form, as OGR detects them.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use chrono::{NaiveDate, NaiveDateTime};
use serde::Deserialize;
use serde_json::{Map, Value as Json};

use crate::catalogue::ReadContext;
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};
use crate::model::{
    Coord, DatasetSink, Feature, FeatureSchema, Field, FieldType, Geometry, GeometryKind, Header,
    Line, Value,
};

use super::FORMAT;
use super::scan::Scanner;

/// A feature as parsed. Properties keep their order: serde_json's `Map` would sort them, and
/// field order is part of what a conversion must keep.
#[derive(Debug, Default, Deserialize)]
struct RawFeature {
    #[serde(default)]
    id: Option<Json>,
    #[serde(default)]
    properties: Option<Properties>,
    #[serde(default)]
    geometry: Option<Json>,
}

impl RawFeature {
    fn has_property(&self, name: &str) -> bool {
        self.properties
            .as_ref()
            .is_some_and(|Properties(entries)| entries.iter().any(|(key, _)| key == name))
    }
}

/// The name of the field that holds feature-level ids, as GDAL names it.
const ID_FIELD: &str = "id";

/// True when a feature-level `id` can serve as a feature number: a non-negative integer. GDAL
/// then keeps it as the feature's FID, which no other format stores, so it is not a field.
fn is_feature_number(id: &Json) -> bool {
    id.as_u64().is_some()
}

/// The field type a feature-level id gives the `id` field: Integer for integers, else Text
/// (a string id is text even when it looks like a date or a number).
fn id_type(id: &Json) -> Option<FieldType> {
    match id {
        Json::Null => None,
        Json::Number(number) if number.is_i64() => Some(FieldType::Integer),
        _ => Some(FieldType::Text),
    }
}

/// Properties in document order.
#[derive(Debug, Default)]
struct Properties(Vec<(String, Json)>);

impl<'de> Deserialize<'de> for Properties {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Properties;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("an object of properties")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Properties, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Json>()? {
                    entries.push(entry);
                }
                Ok(Properties(entries))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// What the first pass learns about one property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Nothing,
    Type(FieldType),
}

fn widen(seen: Seen, found: Option<FieldType>) -> Seen {
    use FieldType::{Boolean, Date, DateTime, Float, Integer, Text};
    let Some(found) = found else {
        return seen;
    };
    let Seen::Type(before) = seen else {
        return Seen::Type(found);
    };
    Seen::Type(match (before, found) {
        (a, b) if a == b => a,
        (Integer | Boolean, Integer | Boolean) => Integer,
        (Integer | Float | Boolean, Integer | Float | Boolean) => Float,
        (Date | DateTime, Date | DateTime) => DateTime,
        _ => Text,
    })
}

/// The type a JSON value suggests; `None` for null.
fn type_of(value: &Json) -> Option<FieldType> {
    Some(match value {
        Json::Null => return None,
        Json::Bool(_) => FieldType::Boolean,
        Json::Number(number) if number.is_i64() => FieldType::Integer,
        Json::Number(_) => FieldType::Float,
        Json::String(text) if parse_date(text).is_some() => FieldType::Date,
        Json::String(text) if parse_date_time(text).is_some() => FieldType::DateTime,
        Json::String(_) | Json::Array(_) | Json::Object(_) => FieldType::Text,
    })
}

fn parse_date(text: &str) -> Option<NaiveDate> {
    if text.len() != 10 {
        return None;
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

fn parse_date_time(text: &str) -> Option<NaiveDateTime> {
    let text = text.strip_suffix('Z').unwrap_or(text);
    if text.len() < 19 {
        return None;
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f"))
        .ok()
}

/// The schema the first pass builds.
///
/// Feature-level ids follow GDAL's GeoJSON reader: while the ids seen are non-negative integers
/// they are feature numbers and not data; the first string (or negative) id met before any
/// integer one makes an `id` field at that point of the field order (unless a property is
/// already named `id`), and from then on every feature's id is that field's value.
#[derive(Debug)]
struct Inference {
    names: Vec<String>,
    index: HashMap<String, usize>,
    seen: Vec<Seen>,
    ids_are_feature_numbers: bool,
    id_slot: Option<usize>,
    kind: Option<GeometryKind>,
    mixed: bool,
    has_z: bool,
    fields_max: u64,
}

impl Inference {
    fn new(limits: &ReadLimits) -> Self {
        Self {
            names: Vec::new(),
            index: HashMap::new(),
            seen: Vec::new(),
            ids_are_feature_numbers: false,
            id_slot: None,
            kind: None,
            mixed: false,
            has_z: false,
            fields_max: limits.fields_max,
        }
    }

    fn add(&mut self, feature: &RawFeature) -> FormatResult<()> {
        if let Some(id) = feature.id.as_ref().filter(|id| !id.is_null()) {
            self.add_id(feature, id)?;
        }
        if let Some(Properties(properties)) = &feature.properties {
            for (name, value) in properties {
                let slot = self.slot(name)?;
                if let Some(seen) = self.seen.get_mut(slot) {
                    *seen = widen(*seen, type_of(value));
                }
            }
        }
        if let Some(geometry) = feature.geometry.as_ref().filter(|g| !g.is_null()) {
            self.add_geometry(geometry);
        }
        Ok(())
    }

    /// The slot of field `name`, created at the end of the field order when new.
    fn slot(&mut self, name: &str) -> FormatResult<usize> {
        if let Some(slot) = self.index.get(name) {
            return Ok(*slot);
        }
        check_limit(
            "GeoJSON properties",
            self.names.len() as u64 + 1,
            self.fields_max,
        )?;
        self.index.insert(name.to_owned(), self.names.len());
        self.names.push(name.to_owned());
        self.seen.push(Seen::Nothing);
        Ok(self.names.len() - 1)
    }

    fn add_id(&mut self, feature: &RawFeature, id: &Json) -> FormatResult<()> {
        match self.id_slot {
            Some(slot) => {
                if let Some(seen) = self.seen.get_mut(slot) {
                    *seen = widen(*seen, id_type(id));
                }
            }
            None if self.index.contains_key(ID_FIELD) => {}
            None => {
                if is_feature_number(id) {
                    self.ids_are_feature_numbers = true;
                }
                if !self.ids_are_feature_numbers && !feature.has_property(ID_FIELD) {
                    let slot = self.slot(ID_FIELD)?;
                    self.id_slot = Some(slot);
                    if let Some(seen) = self.seen.get_mut(slot) {
                        *seen = widen(*seen, id_type(id));
                    }
                }
            }
        }
        Ok(())
    }

    fn add_geometry(&mut self, geometry: &Json) {
        let kind = match geometry.get("type").and_then(Json::as_str) {
            Some("Point") => GeometryKind::Point,
            Some("MultiPoint") => GeometryKind::MultiPoint,
            Some("LineString" | "MultiLineString") => GeometryKind::Line,
            Some("Polygon" | "MultiPolygon") => GeometryKind::Polygon,
            _ => GeometryKind::Any,
        };
        self.kind = Some(match (self.kind, kind) {
            (None, kind) => kind,
            (Some(a), b) if a == b => a,
            (
                Some(GeometryKind::Point | GeometryKind::MultiPoint),
                GeometryKind::Point | GeometryKind::MultiPoint,
            ) => GeometryKind::MultiPoint,
            _ => {
                self.mixed = true;
                GeometryKind::Any
            }
        });
        if !self.has_z {
            self.has_z = has_z(geometry);
        }
    }

    fn schema(self, crs: Crs) -> (FeatureSchema, Option<usize>) {
        let id_slot = self.id_slot;
        let fields = self
            .names
            .into_iter()
            .zip(self.seen)
            .enumerate()
            .map(|(slot, (name, seen))| {
                let mut field = match seen {
                    Seen::Type(field_type) => Field::new(name, field_type),
                    Seen::Nothing => Field::new(name, FieldType::Text),
                };
                field.feature_id = Some(slot) == id_slot;
                field
            })
            .collect();
        let geometry_kind = if self.mixed {
            GeometryKind::Any
        } else {
            self.kind.unwrap_or(GeometryKind::Any)
        };
        let schema = FeatureSchema {
            fields,
            geometry_kind,
            has_z: self.has_z,
            has_m: false,
            crs: Some(crs),
        };
        (schema, id_slot)
    }
}

/// True when the first position found has a third ordinate.
fn has_z(geometry: &Json) -> bool {
    let mut node = geometry.get("coordinates");
    while let Some(Json::Array(items)) = node {
        match items.first() {
            Some(Json::Array(_)) => node = items.first(),
            Some(_) => return items.len() >= 3,
            None => return false,
        }
    }
    geometry
        .get("geometries")
        .and_then(Json::as_array)
        .is_some_and(|parts| parts.iter().any(has_z))
}

/// The CRS of the legacy `crs` member, or WGS 84 as RFC 7946 prescribes.
fn crs_of(members: &Map<String, Json>) -> FormatResult<Crs> {
    let Some(name) = members
        .get("crs")
        .and_then(|crs| crs.get("properties"))
        .and_then(|properties| properties.get("name"))
        .and_then(Json::as_str)
    else {
        return Ok(Crs::Epsg(4326));
    };
    if name.ends_with("CRS84") || name.ends_with("CRS:84") {
        return Ok(Crs::Epsg(4326));
    }
    let code = name
        .rsplit(':')
        .next()
        .and_then(|code| code.parse::<u32>().ok());
    match code {
        Some(code) if name.to_ascii_uppercase().contains("EPSG") => Ok(Crs::Epsg(code)),
        _ => Err(FormatError::unsupported(
            FORMAT,
            format!(
                "crs member {name:?}: only EPSG names (urn:ogc:def:crs:EPSG::code) are understood"
            ),
        )),
    }
}

fn open(input: &Path, context: &ReadContext<'_>) -> FormatResult<Scanner<BufReader<File>>> {
    let file = File::open(input).map_err(|error| FormatError::read(input, error))?;
    Ok(Scanner::new(
        BufReader::with_capacity(256 * 1024, file),
        context.limits,
    ))
}

fn parse_object(bytes: &[u8], offset: u64, index: u64) -> FormatResult<RawFeature> {
    serde_json::from_slice::<RawFeature>(bytes)
        .map_err(|error| feature_error(offset, index, error.to_string()))
}

fn feature_error(offset: u64, index: u64, message: impl Into<String>) -> FormatError {
    FormatError::invalid(FORMAT, format!("feature {index} (byte {offset})"), message)
}

/// Reads the GeoJSON file at `input` into `sink`.
pub(crate) fn read(
    input: &Path,
    context: &ReadContext<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    let total = std::fs::metadata(input).map_or(0, |meta| meta.len());
    context.progress.set_total(total.saturating_mul(2));
    let mut inference = Inference::new(&context.limits);
    let mut count = 0u64;
    let mut scanner = open(input, context)?;
    let document = scanner.walk(&mut |bytes, offset| {
        count += 1;
        inference.add(&parse_object(bytes, offset, count)?)
    })?;
    context.progress.advance(total);
    let crs = crs_of(&document.members)?;
    let single = single_feature(document)?;
    if let Some(feature) = &single {
        inference.add(feature)?;
    }
    let (schema, id_slot) = inference.schema(crs);
    sink.begin(&Header::Features(schema.clone()))?;
    let converter = Converter {
        id_slot,
        slots: schema
            .fields
            .iter()
            .enumerate()
            .map(|(slot, field)| (field.name.as_str(), slot))
            .collect(),
        schema: &schema,
        limits: &context.limits,
    };
    if let Some(feature) = single {
        sink.feature(&converter.feature(&feature, 0, 1)?)?;
        return sink.end();
    }
    let mut scanner = open(input, context)?;
    let mut index = 0u64;
    let mut reported = 0u64;
    scanner.walk(&mut |bytes, offset| {
        index += 1;
        let feature = converter.feature(&parse_object(bytes, offset, index)?, offset, index)?;
        if offset - reported >= 1 << 20 {
            context.progress.advance(offset - reported);
            reported = offset;
        }
        sink.feature(&feature)
    })?;
    context.progress.advance(total.saturating_sub(reported));
    sink.end()
}

/// A document that is one Feature or one bare Geometry, as a feature object; `None` for a
/// FeatureCollection.
fn single_feature(document: super::scan::Document) -> FormatResult<Option<RawFeature>> {
    let super::scan::Document {
        mut members,
        raw_properties,
        had_features,
    } = document;
    let kind = members
        .get("type")
        .and_then(Json::as_str)
        .unwrap_or_default();
    match kind {
        "FeatureCollection" => Ok(None),
        _ if had_features => Ok(None),
        "Feature" => {
            let properties = match raw_properties {
                Some(raw) => serde_json::from_slice::<Option<Properties>>(&raw)
                    .map_err(|error| feature_error(0, 1, error.to_string()))?,
                None => None,
            };
            Ok(Some(RawFeature {
                id: members.remove("id"),
                properties,
                geometry: members.remove("geometry"),
            }))
        }
        "Point" | "MultiPoint" | "LineString" | "MultiLineString" | "Polygon" | "MultiPolygon"
        | "GeometryCollection" => Ok(Some(RawFeature {
            id: None,
            properties: None,
            geometry: Some(Json::Object(members)),
        })),
        other => Err(FormatError::invalid(
            FORMAT,
            "byte 0",
            format!(
                "the document's type is {other:?}, not a FeatureCollection, Feature or Geometry"
            ),
        )),
    }
}

/// Converts parsed features to the model.
struct Converter<'a> {
    /// The field that holds feature-level ids, when they are data (see [`Inference`]).
    id_slot: Option<usize>,
    slots: HashMap<&'a str, usize>,
    schema: &'a FeatureSchema,
    limits: &'a ReadLimits,
}

impl Converter<'_> {
    fn feature(&self, feature: &RawFeature, offset: u64, index: u64) -> FormatResult<Feature> {
        let mut values = vec![Value::Null; self.schema.fields.len()];
        if let (Some(slot), Some(id)) = (self.id_slot, &feature.id) {
            let field = self.schema.fields.get(slot);
            if let (Some(value), Some(field)) = (values.get_mut(slot), field) {
                *value = convert_value(id, field.field_type);
            }
        }
        if let Some(Properties(properties)) = &feature.properties {
            for (name, value) in properties {
                let slot = self.slots.get(name.as_str()).copied();
                let field = slot.and_then(|slot| self.schema.fields.get(slot));
                if let (Some(slot), Some(field)) = (slot.and_then(|s| values.get_mut(s)), field) {
                    *slot = convert_value(value, field.field_type);
                }
            }
        }
        let geometry = match &feature.geometry {
            None | Some(Json::Null) => None,
            Some(geometry) => {
                let mut vertices = 0u64;
                let converted = self.geometry(geometry, &mut vertices);
                Some(converted.map_err(|error| match error {
                    GeometryError::Invalid(message) => feature_error(offset, index, message),
                    GeometryError::Limit(error) => error,
                })?)
            }
        };
        Ok(Feature { geometry, values })
    }

    fn geometry(&self, geometry: &Json, vertices: &mut u64) -> Result<Geometry, GeometryError> {
        let kind = geometry
            .get("type")
            .and_then(Json::as_str)
            .unwrap_or_default();
        if kind == "GeometryCollection" {
            let parts = geometry
                .get("geometries")
                .and_then(Json::as_array)
                .ok_or_else(|| invalid("a GeometryCollection needs a \"geometries\" array"))?;
            let parts = parts
                .iter()
                .map(|part| self.geometry(part, vertices))
                .collect::<Result<_, _>>()?;
            return Ok(Geometry::GeometryCollection(parts));
        }
        let coordinates = geometry
            .get("coordinates")
            .ok_or_else(|| invalid(format!("a {kind} geometry needs \"coordinates\"")))?;
        let mut reader = Positions {
            vertices,
            max: self.limits.vertices_per_geometry_max,
        };
        Ok(match kind {
            "Point" => Geometry::Point(reader.position(coordinates)?),
            "MultiPoint" => Geometry::MultiPoint(reader.line(coordinates)?),
            "LineString" => Geometry::LineString(reader.line(coordinates)?),
            "MultiLineString" => Geometry::MultiLineString(reader.lines(coordinates)?),
            "Polygon" => Geometry::Polygon(reader.lines(coordinates)?),
            "MultiPolygon" => Geometry::MultiPolygon(
                array(coordinates)?
                    .iter()
                    .map(|polygon| reader.lines(polygon))
                    .collect::<Result<_, _>>()?,
            ),
            other => return Err(invalid(format!("unknown geometry type {other:?}"))),
        })
    }
}

enum GeometryError {
    Invalid(String),
    Limit(FormatError),
}

fn invalid(message: impl Into<String>) -> GeometryError {
    GeometryError::Invalid(message.into())
}

fn array(value: &Json) -> Result<&Vec<Json>, GeometryError> {
    value
        .as_array()
        .ok_or_else(|| invalid("coordinates must be arrays"))
}

/// Reads positions, counting vertices against the limit.
struct Positions<'a> {
    vertices: &'a mut u64,
    max: u64,
}

impl Positions<'_> {
    fn position(&mut self, value: &Json) -> Result<Coord, GeometryError> {
        *self.vertices += 1;
        check_limit("vertices of one geometry", *self.vertices, self.max)
            .map_err(GeometryError::Limit)?;
        let items = array(value)?;
        let number = |index: usize| items.get(index).and_then(Json::as_f64);
        match (number(0), number(1)) {
            (Some(x), Some(y)) => Ok(Coord {
                x,
                y,
                z: number(2),
                m: None,
            }),
            _ => Err(invalid("a position needs at least two numbers")),
        }
    }

    fn line(&mut self, value: &Json) -> Result<Line, GeometryError> {
        array(value)?
            .iter()
            .map(|item| self.position(item))
            .collect()
    }

    fn lines(&mut self, value: &Json) -> Result<Vec<Line>, GeometryError> {
        array(value)?.iter().map(|item| self.line(item)).collect()
    }
}

/// Converts a property to a field's type (after widening every value fits its field).
fn convert_value(value: &Json, field_type: FieldType) -> Value {
    match (field_type, value) {
        (_, Json::Null) => Value::Null,
        (FieldType::Boolean, Json::Bool(flag)) => Value::Boolean(*flag),
        (FieldType::Integer, Json::Bool(flag)) => Value::Integer(i64::from(*flag)),
        (FieldType::Integer, Json::Number(number)) => {
            number.as_i64().map_or(Value::Null, Value::Integer)
        }
        (FieldType::Float, Json::Bool(flag)) => Value::Float(f64::from(u8::from(*flag))),
        (FieldType::Float, Json::Number(number)) => {
            number.as_f64().map_or(Value::Null, Value::Float)
        }
        (FieldType::Date, Json::String(text)) => parse_date(text).map_or(Value::Null, Value::Date),
        (FieldType::DateTime, Json::String(text)) => parse_date(text)
            .and_then(|date| date.and_hms_opt(0, 0, 0))
            .or_else(|| parse_date_time(text))
            .map_or(Value::Null, Value::DateTime),
        (_, Json::String(text)) => Value::Text(text.clone()),
        (_, other) => Value::Text(other.to_string()),
    }
}

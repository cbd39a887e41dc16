//! Feature collections: Shapefile, GeoJSON. Geometries keep z and m where the source had
//! them, because Shapefile PointZ/PolygonZ/...M are common in this field.

use chrono::{NaiveDate, NaiveDateTime};

use crate::crs::Crs;

/// A position. `z` and `m` are `None` when the source had no such ordinate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coord {
    /// x (easting or longitude).
    pub x: f64,
    /// y (northing or latitude).
    pub y: f64,
    /// Elevation.
    pub z: Option<f64>,
    /// Measure.
    pub m: Option<f64>,
}

impl Coord {
    /// A 2D position.
    pub fn xy(x: f64, y: f64) -> Self {
        Self {
            x,
            y,
            z: None,
            m: None,
        }
    }

    /// A 3D position.
    pub fn xyz(x: f64, y: f64, z: f64) -> Self {
        Self {
            x,
            y,
            z: Some(z),
            m: None,
        }
    }
}

/// A ring or line: a list of positions. Polygon rings are closed (first == last); the first
/// ring of a polygon is the exterior, the others holes.
pub type Line = Vec<Coord>;

/// A geometry, following the OGC simple-features types that both GeoJSON and Shapefile use.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Geometry {
    /// One position.
    Point(Coord),
    /// Several positions.
    MultiPoint(Vec<Coord>),
    /// A line.
    LineString(Line),
    /// Several lines.
    MultiLineString(Vec<Line>),
    /// Exterior ring then holes.
    Polygon(Vec<Line>),
    /// Several polygons.
    MultiPolygon(Vec<Vec<Line>>),
    /// A collection (GeoJSON only).
    GeometryCollection(Vec<Geometry>),
}

impl Geometry {
    /// The OGC simple-features type name (`Point`, `MultiPolygon`, ...), for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Point(_) => "Point",
            Self::MultiPoint(_) => "MultiPoint",
            Self::LineString(_) => "LineString",
            Self::MultiLineString(_) => "MultiLineString",
            Self::Polygon(_) => "Polygon",
            Self::MultiPolygon(_) => "MultiPolygon",
            Self::GeometryCollection(_) => "GeometryCollection",
        }
    }
}

/// The geometry type a collection declares (Shapefile has exactly one per file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GeometryKind {
    /// Mixed or not declared (GeoJSON).
    Any,
    /// Points.
    Point,
    /// Multipoints.
    MultiPoint,
    /// Lines and multilines (Shapefile PolyLine).
    Line,
    /// Polygons and multipolygons.
    Polygon,
}

/// The type of an attribute field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldType {
    /// true/false.
    Boolean,
    /// Whole numbers.
    Integer,
    /// Real numbers.
    Float,
    /// Text.
    Text,
    /// Calendar date.
    Date,
    /// Date and time.
    DateTime,
}

impl FieldType {
    /// The type's name (`Boolean`, `Integer`, `Float`, `Text`, `Date`, `DateTime`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Boolean => "Boolean",
            Self::Integer => "Integer",
            Self::Float => "Float",
            Self::Text => "Text",
            Self::Date => "Date",
            Self::DateTime => "DateTime",
        }
    }
}

/// An attribute field of a feature collection.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Name.
    pub name: String,
    /// Type.
    pub field_type: FieldType,
    /// Width in characters where the source declared one (dBASE), for a faithful round trip.
    pub width: Option<u16>,
    /// Decimal places where the source declared them (dBASE numeric fields).
    pub decimals: Option<u16>,
    /// True when the field holds the features' own ids (GeoJSON `id` members, read as a field
    /// the way GDAL reads them), which a GeoJSON writer puts back as `id` members.
    pub feature_id: bool,
}

impl Field {
    /// A field without declared width.
    pub fn new(name: impl Into<String>, field_type: FieldType) -> Self {
        Self {
            name: name.into(),
            field_type,
            width: None,
            decimals: None,
            feature_id: false,
        }
    }
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// No value.
    Null,
    /// Boolean.
    Boolean(bool),
    /// Integer.
    Integer(i64),
    /// Real number.
    Float(f64),
    /// Text.
    Text(String),
    /// Date.
    Date(NaiveDate),
    /// Date and time.
    DateTime(NaiveDateTime),
}

/// The schema of a feature collection, known before the first feature.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureSchema {
    /// Attribute fields, in order.
    pub fields: Vec<Field>,
    /// Declared geometry type.
    pub geometry_kind: GeometryKind,
    /// True when geometries carry z.
    pub has_z: bool,
    /// True when geometries carry m.
    pub has_m: bool,
    /// Coordinate system, when known.
    pub crs: Option<Crs>,
}

/// One feature: a geometry (or none) and one value per schema field, in schema order.
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    /// The geometry; `None` for a null geometry.
    pub geometry: Option<Geometry>,
    /// Attribute values, one per [`FeatureSchema::fields`] entry.
    pub values: Vec<Value>,
}

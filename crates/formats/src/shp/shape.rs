//! Decoding one `.shp` record's content into a model [`Geometry`].
//!
//! Written here rather than through the `shapefile` crate because that crate converts counts
//! from the file with `as usize` before checking them (a negative or huge count becomes a huge
//! allocation) and has no hook for our [`ReadLimits`]. Every count here is checked against the
//! bytes actually present in the record before anything is allocated, so a record can cost at
//! most its own size in memory.

use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};
use crate::model::{Coord, Geometry, GeometryKind, Line};

use super::FORMAT;

/// Shape type codes of the ESRI specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShapeType {
    Null,
    Point,
    PolyLine,
    Polygon,
    MultiPoint,
    PointZ,
    PolyLineZ,
    PolygonZ,
    MultiPointZ,
    PointM,
    PolyLineM,
    PolygonM,
    MultiPointM,
    MultiPatch,
}

impl ShapeType {
    /// The type of `code`, or `None` for a code the specification does not define.
    pub(crate) fn from_code(code: i32) -> Option<Self> {
        Some(match code {
            0 => Self::Null,
            1 => Self::Point,
            3 => Self::PolyLine,
            5 => Self::Polygon,
            8 => Self::MultiPoint,
            11 => Self::PointZ,
            13 => Self::PolyLineZ,
            15 => Self::PolygonZ,
            18 => Self::MultiPointZ,
            21 => Self::PointM,
            23 => Self::PolyLineM,
            25 => Self::PolygonM,
            28 => Self::MultiPointM,
            31 => Self::MultiPatch,
            _ => return None,
        })
    }

    /// The code written to files.
    pub(crate) fn code(self) -> i32 {
        match self {
            Self::Null => 0,
            Self::Point => 1,
            Self::PolyLine => 3,
            Self::Polygon => 5,
            Self::MultiPoint => 8,
            Self::PointZ => 11,
            Self::PolyLineZ => 13,
            Self::PolygonZ => 15,
            Self::MultiPointZ => 18,
            Self::PointM => 21,
            Self::PolyLineM => 23,
            Self::PolygonM => 25,
            Self::MultiPointM => 28,
            Self::MultiPatch => 31,
        }
    }

    /// The type for a geometry kind with or without z and m (z types carry m too).
    pub(crate) fn for_kind(kind: GeometryKind, has_z: bool, has_m: bool) -> Self {
        match (kind, has_z, has_m) {
            (GeometryKind::Point, true, _) => Self::PointZ,
            (GeometryKind::Point, false, true) => Self::PointM,
            (GeometryKind::Point, false, false) => Self::Point,
            (GeometryKind::MultiPoint, true, _) => Self::MultiPointZ,
            (GeometryKind::MultiPoint, false, true) => Self::MultiPointM,
            (GeometryKind::MultiPoint, false, false) => Self::MultiPoint,
            (GeometryKind::Line, true, _) => Self::PolyLineZ,
            (GeometryKind::Line, false, true) => Self::PolyLineM,
            (GeometryKind::Line, false, false) => Self::PolyLine,
            (GeometryKind::Polygon, true, _) => Self::PolygonZ,
            (GeometryKind::Polygon, false, true) => Self::PolygonM,
            (GeometryKind::Polygon, false, false) => Self::Polygon,
            (GeometryKind::Any, _, _) => Self::Null,
        }
    }

    /// The model's geometry kind.
    pub(crate) fn kind(self) -> GeometryKind {
        match self {
            Self::Null => GeometryKind::Any,
            Self::Point | Self::PointZ | Self::PointM => GeometryKind::Point,
            Self::MultiPoint | Self::MultiPointZ | Self::MultiPointM => GeometryKind::MultiPoint,
            Self::PolyLine | Self::PolyLineZ | Self::PolyLineM => GeometryKind::Line,
            Self::Polygon | Self::PolygonZ | Self::PolygonM | Self::MultiPatch => {
                GeometryKind::Polygon
            }
        }
    }

    /// True for the types with z (which may also carry m).
    pub(crate) fn has_z(self) -> bool {
        matches!(
            self,
            Self::PointZ | Self::PolyLineZ | Self::PolygonZ | Self::MultiPointZ | Self::MultiPatch
        )
    }

    /// True for the measured types without z.
    pub(crate) fn has_m(self) -> bool {
        matches!(
            self,
            Self::PointM | Self::PolyLineM | Self::PolygonM | Self::MultiPointM
        )
    }
}

/// A little-endian reader over one record's bytes; every read is bounds-checked.
struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, count: usize) -> Option<&'a [u8]> {
        let end = self.position.checked_add(count)?;
        let slice = self.bytes.get(self.position..end)?;
        self.position = end;
        Some(slice)
    }

    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.position)
    }

    fn i32(&mut self) -> Option<i32> {
        let bytes: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(i32::from_le_bytes(bytes))
    }

    fn f64(&mut self) -> Option<f64> {
        let bytes: [u8; 8] = self.take(8)?.try_into().ok()?;
        Some(f64::from_le_bytes(bytes))
    }
}

/// Where a record sits, for messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordPlace {
    /// 1-based record number.
    pub number: u64,
    /// Byte offset of the record header in the .shp.
    pub offset: u64,
}

impl RecordPlace {
    fn error(self, message: impl Into<String>) -> FormatError {
        FormatError::invalid(
            FORMAT,
            format!("record {} (byte {})", self.number, self.offset),
            message,
        )
    }
}

/// Decodes one record's content (starting with its shape type), by the record's own type.
pub(crate) fn decode(
    content: &[u8],
    limits: &ReadLimits,
    place: RecordPlace,
) -> FormatResult<Option<Geometry>> {
    let mut cursor = Cursor {
        bytes: content,
        position: 0,
    };
    let truncated = || place.error("record shorter than its shape needs");
    let code = cursor.i32().ok_or_else(truncated)?;
    let Some(shape_type) = ShapeType::from_code(code) else {
        return Err(place.error(format!("unknown shape type {code}")));
    };
    if shape_type == ShapeType::Null {
        return Ok(None);
    }
    // A record of another type than the file's is read as its own type, as GDAL reads it
    // (the dataset's kind stays the file's).
    match shape_type {
        ShapeType::Point | ShapeType::PointZ | ShapeType::PointM => {
            decode_point(&mut cursor, shape_type).ok_or_else(truncated)
        }
        ShapeType::MultiPoint | ShapeType::MultiPointZ | ShapeType::MultiPointM => {
            let coords = decode_multipoint(&mut cursor, shape_type, limits, place)?;
            Ok(Some(Geometry::MultiPoint(coords)))
        }
        _ => decode_parts(&mut cursor, shape_type, limits, place),
    }
}

fn decode_point(cursor: &mut Cursor<'_>, shape_type: ShapeType) -> Option<Option<Geometry>> {
    let x = cursor.f64()?;
    let y = cursor.f64()?;
    let mut coord = Coord::xy(x, y);
    if shape_type.has_z() {
        coord.z = Some(cursor.f64()?);
    }
    if shape_type.has_z() || shape_type.has_m() {
        coord.m = measure(cursor.f64());
    }
    Some(Some(Geometry::Point(coord)))
}

/// A measure as stored. Values below -10^38 ("no data" in the specification) are kept as they
/// are, as GDAL keeps them, so that they survive a Shapefile round trip.
fn measure(value: Option<f64>) -> Option<f64> {
    value
}

/// Reads a count and checks it against the limit and the bytes left (`bytes_each` per unit).
fn count(
    cursor: &mut Cursor<'_>,
    what: &'static str,
    bytes_each: usize,
    limit: u64,
    place: RecordPlace,
) -> FormatResult<usize> {
    let value = cursor
        .i32()
        .ok_or_else(|| place.error("record shorter than its shape needs"))?;
    let Ok(value) = usize::try_from(value) else {
        return Err(place.error(format!("negative {what} {value}")));
    };
    check_limit(what, value as u64, limit)?;
    if value.saturating_mul(bytes_each) > cursor.remaining() {
        return Err(place.error(format!(
            "{what} {value} needs more bytes than the record holds"
        )));
    }
    Ok(value)
}

fn decode_multipoint(
    cursor: &mut Cursor<'_>,
    shape_type: ShapeType,
    limits: &ReadLimits,
    place: RecordPlace,
) -> FormatResult<Vec<Coord>> {
    let truncated = || place.error("record shorter than its shape needs");
    cursor.take(32).ok_or_else(truncated)?;
    let points = count(
        cursor,
        "vertices of one geometry",
        16,
        limits.vertices_per_geometry_max,
        place,
    )?;
    read_coords(cursor, shape_type, points).ok_or_else(truncated)
}

/// Reads `points` x/y pairs, then the optional z and m blocks (each a range then values).
fn read_coords(
    cursor: &mut Cursor<'_>,
    shape_type: ShapeType,
    points: usize,
) -> Option<Vec<Coord>> {
    let mut coords = Vec::with_capacity(points);
    for _ in 0..points {
        let x = cursor.f64()?;
        let y = cursor.f64()?;
        coords.push(Coord::xy(x, y));
    }
    if shape_type.has_z() {
        cursor.take(16)?;
        for coord in &mut coords {
            coord.z = Some(cursor.f64()?);
        }
    }
    // The m block is optional in z types (present when the record is long enough).
    let m_bytes = points.saturating_mul(8).saturating_add(16);
    let has_m = shape_type.has_m() || (shape_type.has_z() && cursor.remaining() >= m_bytes);
    if has_m {
        cursor.take(16)?;
        for coord in &mut coords {
            coord.m = measure(cursor.f64());
        }
    }
    Some(coords)
}

fn decode_parts(
    cursor: &mut Cursor<'_>,
    shape_type: ShapeType,
    limits: &ReadLimits,
    place: RecordPlace,
) -> FormatResult<Option<Geometry>> {
    let truncated = || place.error("record shorter than its shape needs");
    cursor.take(32).ok_or_else(truncated)?;
    let limit = limits.vertices_per_geometry_max;
    let part_count = count(cursor, "parts of one geometry", 4, limit, place)?;
    let points = count(cursor, "vertices of one geometry", 16, limit, place)?;
    let mut starts = Vec::with_capacity(part_count);
    for _ in 0..part_count {
        starts.push(cursor.i32().ok_or_else(truncated)?);
    }
    let mut part_types = Vec::new();
    if shape_type == ShapeType::MultiPatch {
        part_types.reserve(part_count);
        for _ in 0..part_count {
            part_types.push(cursor.i32().ok_or_else(truncated)?);
        }
    }
    let coords = read_coords(cursor, shape_type, points).ok_or_else(truncated)?;
    let parts = split_parts(coords, &starts, place)?;
    Ok(Some(match shape_type {
        ShapeType::PolyLine | ShapeType::PolyLineZ | ShapeType::PolyLineM => lines(parts),
        ShapeType::MultiPatch => multipatch(parts, &part_types, place)?,
        _ => super::rings::organize(parts).map_err(|work| FormatError::LimitExceeded {
            what: "vertices visited placing the holes of one polygon",
            actual: work,
            limit: super::rings::RING_TEST_VERTICES_MAX,
        })?,
    }))
}

/// Splits `coords` at the part starts, which must ascend from 0 within the points.
fn split_parts(coords: Vec<Coord>, starts: &[i32], place: RecordPlace) -> FormatResult<Vec<Line>> {
    let mut previous = 0usize;
    let mut checked = Vec::with_capacity(starts.len());
    for (index, start) in starts.iter().enumerate() {
        let start = usize::try_from(*start)
            .ok()
            .filter(|start| *start >= previous && *start <= coords.len())
            .filter(|start| index != 0 || *start == 0);
        let Some(start) = start else {
            return Err(place.error(format!(
                "part {index} starts outside the points or out of order"
            )));
        };
        checked.push(start);
        previous = start;
    }
    let mut parts = Vec::with_capacity(checked.len());
    let mut rest = coords;
    for start in checked.into_iter().rev() {
        parts.push(rest.split_off(start));
    }
    parts.reverse();
    Ok(parts)
}

fn lines(mut parts: Vec<Line>) -> Geometry {
    if parts.len() == 1
        && let Some(line) = parts.pop()
    {
        return Geometry::LineString(line);
    }
    Geometry::MultiLineString(parts)
}

/// MultiPatch parts become polygons: triangle strips and fans one triangle each, rings as
/// polygons with their inner rings as holes (as OGR reads them, minus its TIN types).
fn multipatch(parts: Vec<Line>, part_types: &[i32], place: RecordPlace) -> FormatResult<Geometry> {
    let mut polygons: Vec<Vec<Line>> = Vec::new();
    for (part, part_type) in parts.into_iter().zip(part_types) {
        match part_type {
            0 => {
                for window in part.windows(3) {
                    polygons.push(vec![triangle(window)]);
                }
            }
            1 => {
                if let Some((first, rest)) = part.split_first() {
                    for pair in rest.windows(2) {
                        let mut corners = vec![*first];
                        corners.extend_from_slice(pair);
                        polygons.push(vec![triangle(&corners)]);
                    }
                }
            }
            2 | 4 => polygons.push(vec![part]),
            3 | 5 => match polygons.last_mut() {
                Some(polygon) => polygon.push(part),
                None => polygons.push(vec![part]),
            },
            other => return Err(place.error(format!("unknown MultiPatch part type {other}"))),
        }
    }
    Ok(Geometry::MultiPolygon(polygons))
}

fn triangle(corners: &[Coord]) -> Line {
    let mut ring = corners.to_vec();
    if let Some(first) = corners.first() {
        ring.push(*first);
    }
    ring
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place() -> RecordPlace {
        RecordPlace {
            number: 1,
            offset: 100,
        }
    }

    #[test]
    fn a_multipatch_triangle_strip_becomes_triangles_with_z() {
        let mut content = Vec::new();
        content.extend_from_slice(&31i32.to_le_bytes());
        content.extend_from_slice(&[0u8; 32]);
        content.extend_from_slice(&1i32.to_le_bytes());
        content.extend_from_slice(&4i32.to_le_bytes());
        content.extend_from_slice(&0i32.to_le_bytes());
        content.extend_from_slice(&0i32.to_le_bytes());
        for (x, y) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
            content.extend_from_slice(&f64::to_le_bytes(x));
            content.extend_from_slice(&f64::to_le_bytes(y));
        }
        content.extend_from_slice(&[0u8; 16]);
        for z in [1.0, 2.0, 3.0, 4.0] {
            content.extend_from_slice(&f64::to_le_bytes(z));
        }
        let geometry = decode(&content, &ReadLimits::default(), place())
            .unwrap()
            .unwrap();
        let Geometry::MultiPolygon(polygons) = geometry else {
            panic!("multipolygon expected");
        };
        assert_eq!(polygons.len(), 2);
        assert_eq!(polygons[1][0].len(), 4);
        assert_eq!(polygons[1][0][0], Coord::xyz(1.0, 0.0, 2.0));
        content.truncate(content.len() - 1);
        assert!(decode(&content, &ReadLimits::default(), place()).is_err());
    }
}

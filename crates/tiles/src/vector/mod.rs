//! Mapbox Vector Tiles 2.1 of a feature layer, cut on demand from a layer indexed once.
//!
//! [`VectorLayer::new`] takes the features in EPSG:3857, flattens them to compact coordinate
//! lists and indexes their bounding boxes ([`index`]); [`VectorLayer::tile`] then looks only
//! at the features that meet the buffered tile, moves them into tile units, simplifies, clips
//! and snaps them ([`clip`]) and writes the protobuf ([`encode`]). Nothing is read from the
//! source per tile, and a tile costs in proportion to what it shows.

mod clip;
mod encode;
mod index;

use std::collections::HashMap;

use basin_formats::model::{Feature, Geometry, Line, Value};

use crate::tms::{Bounds, MAX_LEVEL, WEB_MERCATOR_HALF_WORLD};
use clip::{Point, Snapped};
use index::GridIndex;

/// How tiles are cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileOptions {
    /// Tile units across (4096 in MVT practice).
    pub extent: u32,
    /// Tile units drawn beyond each edge, so lines and fills meet cleanly across tiles.
    pub buffer: u32,
    /// Douglas-Peucker tolerance in tile units.
    pub simplify_tolerance: f64,
}

impl Default for TileOptions {
    fn default() -> Self {
        Self {
            extent: 4096,
            buffer: 64,
            simplify_tolerance: 1.0,
        }
    }
}

/// A feature's shape in EPSG:3857, flattened.
#[derive(Debug, Clone)]
enum Shape {
    Points(Vec<Point>),
    Lines(Vec<Vec<Point>>),
    /// Polygons, each an exterior ring then holes, rings without the closing point.
    Polygons(Vec<Vec<Vec<Point>>>),
}

#[derive(Debug, Clone)]
struct Stored {
    id: u64,
    shape: Shape,
    values: Vec<Value>,
}

/// A layer of features, ready to cut into tiles. Build it once; it is `Send + Sync`.
#[derive(Debug, Clone)]
pub struct VectorLayer {
    name: String,
    keys: Vec<String>,
    features: Vec<Stored>,
    index: GridIndex,
    coordinates: usize,
}

impl VectorLayer {
    /// A layer named `name` whose attribute `i` is called `keys[i]`. Geometries are in
    /// EPSG:3857; positions that are not finite are dropped, and a feature left without a
    /// shape is skipped. A geometry collection becomes one feature per kind of shape in it.
    /// Feature ids are `ids[i]` when given (and not negative), else the position plus one.
    pub fn new(
        name: &str,
        keys: Vec<String>,
        features: Vec<Feature>,
        ids: Option<Vec<i64>>,
    ) -> Self {
        let mut stored = Vec::with_capacity(features.len());
        let mut boxes = Vec::with_capacity(features.len());
        let mut coordinates = 0;
        for (position, feature) in features.into_iter().enumerate() {
            let Some(geometry) = &feature.geometry else {
                continue;
            };
            let id = ids
                .as_ref()
                .and_then(|ids| ids.get(position))
                .and_then(|&id| u64::try_from(id).ok())
                .unwrap_or(position as u64 + 1);
            let mut shapes = Shapes::default();
            shapes.add(geometry);
            for shape in shapes.into_shapes() {
                let Some(bounds) = shape_bounds(&shape) else {
                    continue;
                };
                coordinates += shape_size(&shape);
                boxes.push(bounds);
                stored.push(Stored {
                    id,
                    shape,
                    values: feature.values.clone(),
                });
            }
        }
        Self {
            name: name.to_owned(),
            keys,
            features: stored,
            index: GridIndex::build(boxes),
            coordinates,
        }
    }

    /// Number of features (after flattening collections).
    pub fn len(&self) -> usize {
        self.features.len()
    }

    /// True when the layer has no feature.
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }

    /// Bytes held, roughly.
    pub fn approximate_bytes(&self) -> usize {
        self.coordinates * std::mem::size_of::<Point>()
            + self.features.len() * (std::mem::size_of::<Stored>() + 64)
            + self.index.approximate_bytes()
    }

    /// Tile `x`, `y` of level `z` of WebMercatorQuad (row 0 at the top), encoded; empty when
    /// no feature shows in it (an empty buffer is a valid, empty tile) or the tile does not
    /// exist.
    pub fn tile(&self, z: u8, x: u32, y: u32, options: &TileOptions) -> Vec<u8> {
        if z > MAX_LEVEL || options.extent == 0 {
            return Vec::new();
        }
        let tiles = 1_u64 << z;
        if u64::from(x) >= tiles || u64::from(y) >= tiles {
            return Vec::new();
        }
        let span = 2.0 * WEB_MERCATOR_HALF_WORLD / tiles as f64;
        let min_x = -WEB_MERCATOR_HALF_WORLD + f64::from(x) * span;
        let max_y = WEB_MERCATOR_HALF_WORLD - f64::from(y) * span;
        let extent = f64::from(options.extent);
        let scale = extent / span;
        let margin = f64::from(options.buffer) / scale;
        let area = Bounds {
            min_x: min_x - margin,
            min_y: max_y - span - margin,
            max_x: min_x + span + margin,
            max_y: max_y + margin,
        };
        let to_tile = |point: &Point| [(point[0] - min_x) * scale, (max_y - point[1]) * scale];
        let low = -f64::from(options.buffer);
        let high = extent + f64::from(options.buffer);
        let mut writer = LayerWriter::new(&self.name, &self.keys, options.extent);
        for id in self.index.query(&area) {
            let Some(feature) = self.features.get(id as usize) else {
                continue;
            };
            let cut = Cut {
                to_tile: &to_tile,
                low,
                high,
                tolerance: options.simplify_tolerance,
            };
            if let Some((kind, commands)) = cut.shape(&feature.shape) {
                writer.feature(feature.id, kind, &commands, &feature.values);
            }
        }
        writer.finish()
    }
}

/// Collects the parts of a geometry by kind.
#[derive(Default)]
struct Shapes {
    points: Vec<Point>,
    lines: Vec<Vec<Point>>,
    polygons: Vec<Vec<Vec<Point>>>,
}

impl Shapes {
    fn add(&mut self, geometry: &Geometry) {
        match geometry {
            Geometry::Point(coord) => self.points.extend(finite(std::slice::from_ref(coord))),
            Geometry::MultiPoint(coords) => self.points.extend(finite(coords)),
            Geometry::LineString(line) => self.line(line),
            Geometry::MultiLineString(lines) => lines.iter().for_each(|line| self.line(line)),
            Geometry::Polygon(rings) => self.polygon(rings),
            Geometry::MultiPolygon(polygons) => {
                polygons.iter().for_each(|rings| self.polygon(rings));
            }
            Geometry::GeometryCollection(parts) => parts.iter().for_each(|part| self.add(part)),
            _ => {}
        }
    }

    fn line(&mut self, line: &Line) {
        let points: Vec<Point> = finite(line).collect();
        if points.len() >= 2 {
            self.lines.push(points);
        }
    }

    fn polygon(&mut self, rings: &[Line]) {
        let mut kept: Vec<Vec<Point>> = Vec::with_capacity(rings.len());
        for (index, ring) in rings.iter().enumerate() {
            let mut points: Vec<Point> = finite(ring).collect();
            if points.len() >= 2 && points.first() == points.last() {
                points.pop();
            }
            if points.len() < 3 {
                if index == 0 {
                    return;
                }
                continue;
            }
            kept.push(points);
        }
        if !kept.is_empty() {
            self.polygons.push(kept);
        }
    }

    fn into_shapes(self) -> Vec<Shape> {
        let mut shapes = Vec::new();
        if !self.points.is_empty() {
            shapes.push(Shape::Points(self.points));
        }
        if !self.lines.is_empty() {
            shapes.push(Shape::Lines(self.lines));
        }
        if !self.polygons.is_empty() {
            shapes.push(Shape::Polygons(self.polygons));
        }
        shapes
    }
}

fn finite(coords: &[basin_formats::model::Coord]) -> impl Iterator<Item = Point> + '_ {
    coords
        .iter()
        .filter(|coord| coord.x.is_finite() && coord.y.is_finite())
        .map(|coord| [coord.x, coord.y])
}

fn shape_points(shape: &Shape) -> Box<dyn Iterator<Item = &Point> + '_> {
    match shape {
        Shape::Points(points) => Box::new(points.iter()),
        Shape::Lines(lines) => Box::new(lines.iter().flatten()),
        Shape::Polygons(polygons) => Box::new(polygons.iter().flatten().flatten()),
    }
}

fn shape_size(shape: &Shape) -> usize {
    shape_points(shape).count()
}

fn shape_bounds(shape: &Shape) -> Option<Bounds> {
    shape_points(shape).fold(None, |bounds: Option<Bounds>, point| {
        let here = Bounds {
            min_x: point[0],
            min_y: point[1],
            max_x: point[0],
            max_y: point[1],
        };
        Some(bounds.map_or(here, |bounds| bounds.union(&here)))
    })
}

/// MVT geometry types.
const POINT: u64 = 1;
const LINESTRING: u64 = 2;
const POLYGON: u64 = 3;

/// Cuts one shape into tile commands.
struct Cut<'a> {
    to_tile: &'a dyn Fn(&Point) -> Point,
    low: f64,
    high: f64,
    tolerance: f64,
}

impl Cut<'_> {
    fn shape(&self, shape: &Shape) -> Option<(u64, Vec<u32>)> {
        let mut commands = Commands::default();
        let kind = match shape {
            Shape::Points(points) => {
                let inside: Vec<Snapped> = points
                    .iter()
                    .map(|point| (self.to_tile)(point))
                    .filter(|p| {
                        p[0] >= self.low
                            && p[0] <= self.high
                            && p[1] >= self.low
                            && p[1] <= self.high
                    })
                    .map(|p| [p[0].round() as i32, p[1].round() as i32])
                    .collect();
                commands.move_to(&inside);
                POINT
            }
            Shape::Lines(lines) => {
                for line in lines {
                    let moved: Vec<Point> =
                        line.iter().map(|point| (self.to_tile)(point)).collect();
                    let simple = clip::simplify(&moved, self.tolerance);
                    for piece in clip::clip_line(&simple, self.low, self.high) {
                        let snapped = clip::snap(&piece);
                        if snapped.len() >= 2 {
                            commands.line(&snapped);
                        }
                    }
                }
                LINESTRING
            }
            Shape::Polygons(polygons) => {
                for rings in polygons {
                    self.polygon(rings, &mut commands);
                }
                POLYGON
            }
        };
        (!commands.is_empty()).then(|| (kind, commands.into_inner()))
    }

    fn polygon(&self, rings: &[Vec<Point>], commands: &mut Commands) {
        let mut cut: Vec<Vec<Snapped>> = Vec::with_capacity(rings.len());
        for (index, ring) in rings.iter().enumerate() {
            let moved: Vec<Point> = ring.iter().map(|point| (self.to_tile)(point)).collect();
            let mut closed = moved.clone();
            if let Some(first) = moved.first() {
                closed.push(*first);
            }
            let mut simple = clip::simplify(&closed, self.tolerance);
            simple.pop();
            let clipped = clip::clip_ring(&simple, self.low, self.high);
            let mut snapped = clip::snap(&clipped);
            while snapped.len() > 1 && snapped.first() == snapped.last() {
                snapped.pop();
            }
            let area = if snapped.len() >= 3 {
                clip::doubled_area(&snapped)
            } else {
                0
            };
            if area == 0 {
                if index == 0 {
                    return;
                }
                continue;
            }
            // Exterior rings positive (clockwise on screen), holes negative.
            if (index == 0) != (area > 0) {
                snapped.reverse();
            }
            cut.push(snapped);
        }
        for ring in &cut {
            commands.ring(ring);
        }
    }
}

/// A geometry's command integers, with the cursor carried across parts.
#[derive(Default)]
struct Commands {
    out: Vec<u32>,
    cursor: Snapped,
}

impl Commands {
    fn command(id: u32, count: usize) -> u32 {
        (id & 0x7) | ((count as u32) << 3)
    }

    fn step(&mut self, point: Snapped) {
        let dx = i64::from(point[0]) - i64::from(self.cursor[0]);
        let dy = i64::from(point[1]) - i64::from(self.cursor[1]);
        self.out.push(encode::zigzag(dx) as u32);
        self.out.push(encode::zigzag(dy) as u32);
        self.cursor = point;
    }

    fn move_to(&mut self, points: &[Snapped]) {
        if points.is_empty() {
            return;
        }
        self.out.push(Self::command(1, points.len()));
        for &point in points {
            self.step(point);
        }
    }

    fn line(&mut self, points: &[Snapped]) {
        let Some((&first, rest)) = points.split_first() else {
            return;
        };
        self.out.push(Self::command(1, 1));
        self.step(first);
        self.out.push(Self::command(2, rest.len()));
        for &point in rest {
            self.step(point);
        }
    }

    fn ring(&mut self, points: &[Snapped]) {
        self.line(points);
        self.out.push(Self::command(7, 1));
    }

    fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    fn into_inner(self) -> Vec<u32> {
        self.out
    }
}

/// A value as a layer deduplicates it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ValueKey {
    Text(String),
    Double(u64),
    Int(i64),
    Bool(bool),
}

/// Writes one layer.
struct LayerWriter<'a> {
    name: &'a str,
    keys: &'a [String],
    extent: u32,
    features: Vec<u8>,
    values: Vec<ValueKey>,
    value_ids: HashMap<ValueKey, u32>,
    count: usize,
}

impl<'a> LayerWriter<'a> {
    fn new(name: &'a str, keys: &'a [String], extent: u32) -> Self {
        Self {
            name,
            keys,
            extent,
            features: Vec::new(),
            values: Vec::new(),
            value_ids: HashMap::new(),
            count: 0,
        }
    }

    fn value_id(&mut self, value: &Value) -> Option<u32> {
        let key = match value {
            Value::Null => return None,
            Value::Boolean(flag) => ValueKey::Bool(*flag),
            Value::Integer(number) => ValueKey::Int(*number),
            Value::Float(number) if number.is_finite() => ValueKey::Double(number.to_bits()),
            Value::Float(_) => return None,
            Value::Text(text) => ValueKey::Text(text.clone()),
            Value::Date(date) => ValueKey::Text(date.to_string()),
            Value::DateTime(time) => {
                ValueKey::Text(time.format("%Y-%m-%dT%H:%M:%S%.f").to_string())
            }
            _ => return None,
        };
        if let Some(&id) = self.value_ids.get(&key) {
            return Some(id);
        }
        let id = self.values.len() as u32;
        self.values.push(key.clone());
        self.value_ids.insert(key, id);
        Some(id)
    }

    fn feature(&mut self, id: u64, kind: u64, geometry: &[u32], values: &[Value]) {
        let mut tags = Vec::with_capacity(values.len() * 2);
        for (key, value) in values.iter().enumerate().take(self.keys.len()) {
            if let Some(value) = self.value_id(value) {
                tags.push(key as u32);
                tags.push(value);
            }
        }
        let mut feature = Vec::with_capacity(geometry.len() * 2 + tags.len() + 16);
        encode::uint_field(&mut feature, 1, id);
        encode::packed_field(&mut feature, 2, &tags);
        encode::uint_field(&mut feature, 3, kind);
        encode::packed_field(&mut feature, 4, geometry);
        encode::bytes_field(&mut self.features, 2, &feature);
        self.count += 1;
    }

    fn finish(self) -> Vec<u8> {
        if self.count == 0 {
            return Vec::new();
        }
        let mut layer = Vec::with_capacity(self.features.len() + 256);
        encode::uint_field(&mut layer, 15, 2);
        encode::bytes_field(&mut layer, 1, self.name.as_bytes());
        layer.extend_from_slice(&self.features);
        for key in self.keys {
            encode::bytes_field(&mut layer, 3, key.as_bytes());
        }
        for value in &self.values {
            let mut encoded = Vec::new();
            match value {
                ValueKey::Text(text) => encode::bytes_field(&mut encoded, 1, text.as_bytes()),
                ValueKey::Double(bits) => {
                    encode::double_field(&mut encoded, 3, f64::from_bits(*bits))
                }
                ValueKey::Int(number) => {
                    encode::uint_field(&mut encoded, 6, encode::zigzag(*number))
                }
                ValueKey::Bool(flag) => encode::uint_field(&mut encoded, 7, u64::from(*flag)),
            }
            encode::bytes_field(&mut layer, 4, &encoded);
        }
        encode::uint_field(&mut layer, 5, u64::from(self.extent));
        let mut tile = Vec::with_capacity(layer.len() + 8);
        encode::bytes_field(&mut tile, 3, &layer);
        tile
    }
}

#[cfg(test)]
mod tests;

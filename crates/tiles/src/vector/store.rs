//! The features of a layer as flat arrays, built once: coordinates, the importance of each
//! vertex, parts, records, and the key and value tables with each feature's tags.
//!
//! One allocation per array instead of one per ring keeps a layer of 100,000 polygons at a
//! few dozen bytes per vertex and lets tiles read it without chasing pointers. Building is
//! where input is checked: positions that are not finite are dropped, repeated positions
//! removed, rings closed, and parts that cannot be drawn (a line of one position, a ring of
//! fewer than three) left out, so cutting a tile never meets them. A geometry collection
//! becomes one record per kind of part in it (an MVT feature has one geometry type), sharing
//! the id and tags. Properties are encoded once into a value table deduplicated across the
//! layer; a record's tags are (key, value) pairs of table positions.

use std::collections::HashMap;

use basin_formats::model::{Coord, Geometry};

use super::clip::Point;
use super::encode::{Kind, ValueTable, value_message};
use super::rtree::hilbert_order;
use super::simplify::{importance, ring_significance};
use super::{PropertyValue, VectorFeature};
use crate::tms::Bounds;

/// A run of coordinates: a point set, a line, or a closed ring (first position repeated last).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    pub(crate) start: u32,
    pub(crate) end: u32,
    /// For polygons: an exterior ring, which starts a polygon; the holes follow it.
    pub(crate) exterior: bool,
}

impl Part {
    pub(crate) fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One feature of one geometry kind.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// Its place in the input (collections counted per kind), the order tiles write it in:
    /// renderers draw later features over earlier ones.
    pub(crate) sequence: u32,
    pub(crate) kind: Kind,
    pub(crate) id: Option<u64>,
    pub(crate) parts: (u32, u32),
    pub(crate) tags: (u32, u32),
    pub(crate) bounds: Bounds,
}

/// The layer's data.
#[derive(Debug, Default)]
pub(crate) struct Store {
    pub(crate) records: Vec<Record>,
    /// Per record: the squared tolerance (metres) at and above which it is not drawn.
    pub(crate) significance: Vec<f32>,
    pub(crate) parts: Vec<Part>,
    /// Per part: its box, rounded outwards to `f32`, so a tile skips the islands of an
    /// archipelago it does not show and clips only the parts that cross its edge.
    pub(crate) part_bounds: Vec<[f32; 4]>,
    pub(crate) coords: Vec<Point>,
    /// Per coordinate: see [`super::simplify`].
    pub(crate) importance: Vec<f32>,
    pub(crate) tags: Vec<u32>,
    pub(crate) keys: Vec<String>,
    pub(crate) values: ValueTable,
}

/// Table positions and per-feature scratch used while building.
#[derive(Default)]
struct Builder {
    store: Store,
    key_of_property: Vec<u32>,
    /// Per key: the number of the last feature that got a tag of it, so a repeated key name
    /// is caught in constant time (a search of the feature's tags would be quadratic in
    /// wide tables).
    key_last_feature: Vec<u64>,
    features_seen: u64,
    value_ids: HashMap<Vec<u8>, u32>,
    message: Vec<u8>,
    line: Vec<Point>,
}

impl Store {
    /// Builds the layer's data; `keys[i]` names property `i` of every feature.
    pub(crate) fn build(keys: Vec<String>, features: Vec<VectorFeature>) -> Self {
        let mut builder = Builder::default();
        builder.keys(keys);
        for feature in features {
            builder.feature(feature);
        }
        let mut store = builder.store.sorted_spatially();
        store.tags.shrink_to_fit();
        store.values.shrink_to_fit();
        store
    }

    /// The records, their parts and coordinates rearranged along the Hilbert curve: a tile's
    /// features then sit together in memory, so cutting it reads a few contiguous stretches
    /// instead of jumping across the whole layer (at level 8 that halves the time of a tile).
    fn sorted_spatially(self) -> Self {
        let boxes: Vec<Bounds> = self.records.iter().map(|record| record.bounds).collect();
        let order = hilbert_order(&boxes);
        let mut sorted = Store {
            records: Vec::with_capacity(order.len()),
            significance: Vec::with_capacity(order.len()),
            parts: Vec::with_capacity(self.parts.len()),
            part_bounds: Vec::with_capacity(self.parts.len()),
            coords: Vec::with_capacity(self.coords.len()),
            importance: Vec::with_capacity(self.importance.len()),
            tags: self.tags,
            keys: self.keys,
            values: self.values,
        };
        for index in order {
            let index = index as usize;
            let (Some(record), Some(&significance)) =
                (self.records.get(index), self.significance.get(index))
            else {
                continue;
            };
            let parts_start = sorted.parts.len() as u32;
            let range = record.parts.0 as usize..record.parts.1 as usize;
            let old_parts = self.parts.get(range.clone()).unwrap_or_default();
            let old_bounds = self.part_bounds.get(range).unwrap_or_default();
            for (part, bounds) in old_parts.iter().zip(old_bounds) {
                let start = sorted.coords.len() as u32;
                sorted
                    .coords
                    .extend_from_slice(self.coords.get(part.range()).unwrap_or_default());
                sorted
                    .importance
                    .extend_from_slice(self.importance.get(part.range()).unwrap_or_default());
                sorted.parts.push(Part {
                    start,
                    end: sorted.coords.len() as u32,
                    exterior: part.exterior,
                });
                sorted.part_bounds.push(*bounds);
            }
            sorted.records.push(Record {
                parts: (parts_start, sorted.parts.len() as u32),
                ..record.clone()
            });
            sorted.significance.push(significance);
        }
        sorted
    }

    pub(crate) fn parts_of(&self, record: &Record) -> &[Part] {
        self.parts
            .get(record.parts.0 as usize..record.parts.1 as usize)
            .unwrap_or_default()
    }

    /// The parts of a record with their boxes.
    pub(crate) fn parts_with_bounds(
        &self,
        record: &Record,
    ) -> impl Iterator<Item = (&Part, Bounds)> {
        let range = record.parts.0 as usize..record.parts.1 as usize;
        let boxes = self.part_bounds.get(range).unwrap_or_default();
        self.parts_of(record).iter().zip(boxes).map(|(part, b)| {
            let bounds = Bounds {
                min_x: f64::from(b[0]),
                min_y: f64::from(b[1]),
                max_x: f64::from(b[2]),
                max_y: f64::from(b[3]),
            };
            (part, bounds)
        })
    }

    pub(crate) fn tags_of(&self, record: &Record) -> &[u32] {
        self.tags
            .get(record.tags.0 as usize..record.tags.1 as usize)
            .unwrap_or_default()
    }

    /// Bytes held.
    pub(crate) fn approximate_bytes(&self) -> usize {
        self.records.capacity() * std::mem::size_of::<Record>()
            + self.significance.capacity() * 4
            + self.parts.capacity() * std::mem::size_of::<Part>()
            + self.part_bounds.capacity() * 16
            + self.coords.capacity() * std::mem::size_of::<Point>()
            + self.importance.capacity() * 4
            + self.tags.capacity() * 4
            + self
                .keys
                .iter()
                .map(|key| key.capacity() + 24)
                .sum::<usize>()
            + self.values.approximate_bytes()
    }
}

impl Builder {
    /// The key table, with repeated names merged: property `i` gets the first key of its name.
    fn keys(&mut self, keys: Vec<String>) {
        let mut ids: HashMap<String, u32> = HashMap::new();
        for key in keys {
            let next = self.store.keys.len() as u32;
            let id = *ids.entry(key.clone()).or_insert(next);
            if id == next {
                self.store.keys.push(key);
            }
            self.key_of_property.push(id);
        }
        self.key_last_feature = vec![0; self.store.keys.len()];
    }

    fn feature(&mut self, feature: VectorFeature) {
        let Ok(tags_start) = u32::try_from(self.store.tags.len()) else {
            return;
        };
        self.features_seen += 1;
        for (property, value) in feature.properties.iter().enumerate() {
            let (Some(&key), Some(value)) = (self.key_of_property.get(property), value) else {
                continue;
            };
            let Some(last) = self.key_last_feature.get(key as usize).copied() else {
                continue;
            };
            if last == self.features_seen {
                continue;
            }
            if let Some(value) = self.value_id(value) {
                self.store.tags.extend([key, value]);
                if let Some(last) = self.key_last_feature.get_mut(key as usize) {
                    *last = self.features_seen;
                }
            }
        }
        let Ok(tags_end) = u32::try_from(self.store.tags.len()) else {
            self.store.tags.truncate(tags_start as usize);
            return;
        };
        for kind in [Kind::Point, Kind::Line, Kind::Polygon] {
            self.record(&feature.geometry, kind, feature.id, (tags_start, tags_end));
        }
    }

    fn value_id(&mut self, value: &PropertyValue) -> Option<u32> {
        if !value_message(value, &mut self.message) {
            return None;
        }
        if let Some(&id) = self.value_ids.get(self.message.as_slice()) {
            return Some(id);
        }
        let id = self.store.values.push(&self.message)?;
        self.value_ids.insert(self.message.clone(), id);
        Some(id)
    }

    /// Adds the record of the parts of `kind` in `geometry`, if it has any.
    fn record(&mut self, geometry: &Geometry, kind: Kind, id: Option<u64>, tags: (u32, u32)) {
        let store = &self.store;
        let (Ok(parts_start), Ok(coords_start)) = (
            u32::try_from(store.parts.len()),
            u32::try_from(store.coords.len()),
        ) else {
            return;
        };
        // Iterative: a collection nested a million deep must not exhaust the stack.
        let mut pending = vec![geometry];
        while let Some(geometry) = pending.pop() {
            match (geometry, kind) {
                (Geometry::GeometryCollection(members), _) => pending.extend(members.iter().rev()),
                (Geometry::Point(coord), Kind::Point) => self.points(std::slice::from_ref(coord)),
                (Geometry::MultiPoint(coords), Kind::Point) => self.points(coords),
                (Geometry::LineString(line), Kind::Line) => self.line(line),
                (Geometry::MultiLineString(lines), Kind::Line) => {
                    lines.iter().for_each(|line| self.line(line));
                }
                (Geometry::Polygon(rings), Kind::Polygon) => self.polygon(rings),
                (Geometry::MultiPolygon(polygons), Kind::Polygon) => {
                    polygons.iter().for_each(|rings| self.polygon(rings));
                }
                _ => {}
            }
        }
        if kind == Kind::Point {
            self.close_points(coords_start);
        }
        self.finish_record(kind, id, tags, parts_start);
    }

    /// Points are gathered into one part per record: an MVT POINT geometry is one MoveTo.
    fn points(&mut self, coords: &[Coord]) {
        self.store.coords.extend(finite(coords));
    }

    fn close_points(&mut self, start: u32) {
        let store = &mut self.store;
        let Ok(end) = u32::try_from(store.coords.len()) else {
            store.coords.truncate(start as usize);
            return;
        };
        if end > start {
            store.importance.resize(store.coords.len(), f32::INFINITY);
            store.parts.push(Part {
                start,
                end,
                exterior: false,
            });
            let coords = store.coords.get(start as usize..).unwrap_or_default();
            store.part_bounds.push(outward(bounds_of(coords)));
        }
    }

    fn line(&mut self, coords: &[Coord]) {
        self.load(coords);
        if self.line.len() >= 2 {
            self.push_part(false);
        }
    }

    fn polygon(&mut self, rings: &[Vec<Coord>]) {
        for (index, ring) in rings.iter().enumerate() {
            self.load(ring);
            if let (Some(&first), Some(&last)) = (self.line.first(), self.line.last())
                && first != last
            {
                self.line.push(first);
            }
            if self.line.len() >= 4 {
                self.push_part(index == 0);
            } else if index == 0 {
                return;
            }
        }
    }

    /// Loads the finite positions of `coords` into the scratch line, without repeats.
    fn load(&mut self, coords: &[Coord]) {
        self.line.clear();
        for point in finite(coords) {
            if self.line.last() != Some(&point) {
                self.line.push(point);
            }
        }
    }

    /// Appends the scratch line as a part, with the importance of its vertices.
    fn push_part(&mut self, exterior: bool) {
        let store = &mut self.store;
        let (Ok(start), Ok(end)) = (
            u32::try_from(store.coords.len()),
            u32::try_from(store.coords.len() + self.line.len()),
        ) else {
            return;
        };
        store.coords.extend_from_slice(&self.line);
        importance(&self.line, &mut store.importance);
        store.parts.push(Part {
            start,
            end,
            exterior,
        });
        store.part_bounds.push(outward(bounds_of(&self.line)));
    }

    fn finish_record(&mut self, kind: Kind, id: Option<u64>, tags: (u32, u32), parts_start: u32) {
        let store = &mut self.store;
        let Ok(parts_end) = u32::try_from(store.parts.len()) else {
            return;
        };
        let parts = store.parts.get(parts_start as usize..).unwrap_or_default();
        let mut bounds: Option<Bounds> = None;
        let mut significance = 0.0_f32;
        for part in parts {
            let coords = store.coords.get(part.range()).unwrap_or_default();
            let Some(part_bounds) = bounds_of(coords) else {
                continue;
            };
            bounds = Some(bounds.map_or(part_bounds, |b| b.union(&part_bounds)));
            let part_significance = match kind {
                Kind::Point => f32::INFINITY,
                Kind::Line => {
                    let side = part_bounds.width().max(part_bounds.height());
                    (side * side) as f32
                }
                Kind::Polygon if part.exterior => {
                    ring_significance(store.importance.get(part.range()).unwrap_or_default())
                }
                Kind::Polygon => 0.0,
            };
            significance = significance.max(part_significance);
        }
        let (Some(bounds), Ok(sequence)) = (bounds, u32::try_from(store.records.len())) else {
            store.parts.truncate(parts_start as usize);
            store.part_bounds.truncate(parts_start as usize);
            return;
        };
        store.records.push(Record {
            sequence,
            kind,
            id,
            parts: (parts_start, parts_end),
            tags,
            bounds,
        });
        store.significance.push(significance);
    }
}

fn finite(coords: &[Coord]) -> impl Iterator<Item = Point> + '_ {
    coords
        .iter()
        .filter(|coord| coord.x.is_finite() && coord.y.is_finite())
        .map(|coord| [coord.x, coord.y])
}

pub(crate) fn bounds_of(points: &[Point]) -> Option<Bounds> {
    let (&first, rest) = points.split_first()?;
    let mut bounds = Bounds {
        min_x: first[0],
        min_y: first[1],
        max_x: first[0],
        max_y: first[1],
    };
    for point in rest {
        bounds.min_x = bounds.min_x.min(point[0]);
        bounds.min_y = bounds.min_y.min(point[1]);
        bounds.max_x = bounds.max_x.max(point[0]);
        bounds.max_y = bounds.max_y.max(point[1]);
    }
    Some(bounds)
}

/// A box as `f32`, rounded outwards so it still holds everything the `f64` box held.
fn outward(bounds: Option<Bounds>) -> [f32; 4] {
    let Some(b) = bounds else {
        return [
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
        ];
    };
    let down = |value: f64| {
        let rounded = value as f32;
        if f64::from(rounded) > value {
            rounded.next_down()
        } else {
            rounded
        }
    };
    let up = |value: f64| {
        let rounded = value as f32;
        if f64::from(rounded) < value {
            rounded.next_up()
        } else {
            rounded
        }
    };
    [down(b.min_x), down(b.min_y), up(b.max_x), up(b.max_y)]
}

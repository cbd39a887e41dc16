//! Mapbox Vector Tiles 2.1 of a feature layer, cut on demand from a layer indexed once.
//!
//! [`VectorLayer::new`] takes features in EPSG:3857 and does everything that does not depend
//! on the tile: it flattens the geometries into flat arrays, drops what cannot be drawn, gives
//! each vertex its Douglas-Peucker importance (`simplify.rs`), encodes the properties into a
//! deduplicated table and builds a packed Hilbert R-tree (`rtree.rs`) over the features' boxes.
//! [`VectorLayer::tile`] then visits only the features that meet the buffered tile and are big
//! enough to show at its zoom, keeps the vertices its tolerance keeps, moves them into tile
//! units, clips, snaps and cleans them (`clip.rs`, `cut.rs`), and writes the protobuf
//! (`encode.rs`). Zooms up to 8 are served from generalised copies made once per zoom
//! (`level.rs`), because there one tile holds thousands of features.
//!
//! Records, parts and coordinates are stored along the Hilbert curve, so a tile reads a few
//! contiguous stretches of memory, and written in input order, because renderers draw later
//! features over earlier ones. Measured on 100,000 polygons over the Netherlands
//! (`cargo bench -p basin-tiles --bench vector`) against PostGIS's `ST_AsMVT`, the engine
//! behind Martin (`scripts/bench-vector-tiles-postgis`): docs/benchmarks.md, "Vector tiles".

mod clip;
mod cut;
mod encode;
mod level;
mod rtree;
mod simplify;
mod store;

use basin_formats::model::{Feature, Geometry, Value};

use crate::tms::{Bounds, MAX_LEVEL};
use cut::{Cutter, Frame};
use encode::LayerWriter;
use level::{Entry, GENERALISED_LEVEL_MAX, LEVEL_BYTES_PER_4_LAYER_BYTES, Level, LevelKey, Levels};
use rtree::RTree;
use store::Store;

/// The largest extent a tile may have: clients use 4096 (sometimes 512 or 8192), and 2^16
/// keeps every coordinate, with the buffer, and every level coordinate (2^16 units per tile
/// times 2^8 tiles at level 8) well inside `i32`.
pub const EXTENT_MAX: u32 = 1 << 16;

/// The deepest level tiles are cut at (WebMercatorQuad's 30; deeper requests get no data).
pub const LEVEL_MAX: u8 = MAX_LEVEL;

/// A property value. Dates and times are text (ISO 8601): MVT has no date type.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyValue {
    /// Text.
    Text(String),
    /// A number; NaN and infinities are left out of tiles, like nulls.
    Float(f64),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
}

impl PropertyValue {
    /// The value of a feature attribute; `None` for null (and kinds MVT cannot carry).
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Boolean(flag) => Some(Self::Bool(*flag)),
            Value::Integer(number) => Some(Self::Int(*number)),
            Value::Float(number) => Some(Self::Float(*number)),
            Value::Text(text) => Some(Self::Text(text.clone())),
            Value::Date(date) => Some(Self::Text(date.to_string())),
            Value::DateTime(time) => {
                Some(Self::Text(time.format("%Y-%m-%dT%H:%M:%S%.f").to_string()))
            }
            _ => None,
        }
    }
}

/// A feature to tile.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorFeature {
    /// The MVT feature id, written when known.
    pub id: Option<u64>,
    /// The geometry, in EPSG:3857 metres.
    pub geometry: Geometry,
    /// Property `i` is named by the layer's key `i`; `None` is null (left out of tiles).
    pub properties: Vec<Option<PropertyValue>>,
}

/// How tiles are cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TileOptions {
    /// Tile units across, 1 to [`EXTENT_MAX`] (4096 in MVT practice).
    pub extent: u32,
    /// Tile units drawn beyond each edge, so lines and fills meet cleanly across tiles; at
    /// most the extent.
    pub buffer: u32,
    /// Douglas-Peucker tolerance in tile units (finite, not negative; 0 keeps every vertex).
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

/// Why [`TileOptions`] cannot be used.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TileOptionsError {
    /// The extent is 0 or above [`EXTENT_MAX`].
    Extent(u32),
    /// The buffer is larger than the extent.
    Buffer {
        /// The buffer asked for.
        buffer: u32,
        /// The extent.
        extent: u32,
    },
    /// The tolerance is negative or not finite.
    Tolerance(f64),
}

impl std::fmt::Display for TileOptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Extent(extent) => {
                write!(f, "extent {extent} is outside 1 to {EXTENT_MAX}")
            }
            Self::Buffer { buffer, extent } => {
                write!(f, "buffer {buffer} is larger than the extent {extent}")
            }
            Self::Tolerance(tolerance) => {
                write!(
                    f,
                    "simplify tolerance {tolerance} is not a finite number >= 0"
                )
            }
        }
    }
}

impl std::error::Error for TileOptionsError {}

impl TileOptions {
    /// Checks the options against their limits; [`VectorLayer::tile`] answers an empty tile
    /// for options that fail, so a caller taking them from a request checks them first.
    pub fn check(&self) -> Result<(), TileOptionsError> {
        if self.extent == 0 || self.extent > EXTENT_MAX {
            return Err(TileOptionsError::Extent(self.extent));
        }
        if self.buffer > self.extent {
            return Err(TileOptionsError::Buffer {
                buffer: self.buffer,
                extent: self.extent,
            });
        }
        if !self.simplify_tolerance.is_finite() || self.simplify_tolerance < 0.0 {
            return Err(TileOptionsError::Tolerance(self.simplify_tolerance));
        }
        Ok(())
    }
}

/// A layer of features, ready to cut into tiles. Build it once and share it (`Send + Sync`).
pub struct VectorLayer {
    name: String,
    store: Store,
    tree: RTree,
    levels: Levels,
    bounds: Option<Bounds>,
}

impl std::fmt::Debug for VectorLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorLayer")
            .field("name", &self.name)
            .field("features", &self.len())
            .field("bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

impl VectorLayer {
    /// A layer named `name` whose property `i` is called `keys[i]` (a repeated key name
    /// counts once: the first non-null property of that name is kept). Geometries are in
    /// EPSG:3857: positions that are not finite are dropped, and so are lines left with fewer
    /// than two positions, rings with fewer than three (with their polygon, for an exterior)
    /// and features left without a geometry. A geometry collection becomes one feature per
    /// kind of geometry in it (points, lines, polygons), each with the id and properties.
    pub fn new(name: &str, keys: Vec<String>, features: Vec<VectorFeature>) -> Self {
        let store = Store::build(keys, features);
        let tree = RTree::build(
            &store.records.iter().map(|r| r.bounds).collect::<Vec<_>>(),
            &store.significance,
        );
        let bounds = store
            .records
            .iter()
            .map(|record| record.bounds)
            .reduce(|a, b| a.union(&b));
        let base = store.approximate_bytes() + tree.approximate_bytes();
        Self {
            name: name.to_owned(),
            levels: Levels::new(base / 4 * LEVEL_BYTES_PER_4_LAYER_BYTES),
            store,
            tree,
            bounds,
        }
    }

    /// A layer of format-model features (attribute `i` named `keys[i]`), their ids `ids[i]`
    /// when given and not negative, else their position plus one. Features without a
    /// geometry are skipped; dates become ISO 8601 text.
    pub fn from_features(
        name: &str,
        keys: Vec<String>,
        features: Vec<Feature>,
        ids: Option<Vec<i64>>,
    ) -> Self {
        let features = features
            .into_iter()
            .enumerate()
            .filter_map(|(position, feature)| {
                let id = ids
                    .as_ref()
                    .and_then(|ids| ids.get(position))
                    .and_then(|&id| u64::try_from(id).ok())
                    .unwrap_or(position as u64 + 1);
                Some(VectorFeature {
                    id: Some(id),
                    geometry: feature.geometry?,
                    properties: feature
                        .values
                        .iter()
                        .map(PropertyValue::from_value)
                        .collect(),
                })
            })
            .collect();
        Self::new(name, keys, features)
    }

    /// The layer's name in its tiles.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of features, counting each kind of geometry of a collection once.
    pub fn len(&self) -> usize {
        self.store.records.len()
    }

    /// True when the layer has no feature.
    pub fn is_empty(&self) -> bool {
        self.store.records.is_empty()
    }

    /// The box of every feature, in EPSG:3857; `None` for an empty layer.
    pub fn bounds(&self) -> Option<Bounds> {
        self.bounds
    }

    /// Bytes the layer may hold, roughly: what it holds now plus the most its generalised
    /// levels may grow to, since a cache weighs it once, when it is made.
    pub fn approximate_bytes(&self) -> usize {
        self.store.approximate_bytes()
            + self.tree.approximate_bytes()
            + self.levels.bytes().max(self.levels.bytes_max())
            + self.name.capacity()
    }

    /// Tile `x`, `y` of level `z` of WebMercatorQuad (row 0 at the top), encoded as one layer
    /// named after this one. Empty when no feature shows in it (an empty buffer is a valid,
    /// empty tile), when the tile does not exist (`z` above [`LEVEL_MAX`], `x` or `y` not
    /// below 2^z) and when the options fail [`TileOptions::check`].
    pub fn tile(&self, z: u8, x: u32, y: u32, options: &TileOptions) -> Vec<u8> {
        if z > LEVEL_MAX || options.check().is_err() {
            return Vec::new();
        }
        let tiles = 1_u64 << z;
        if u64::from(x) >= tiles || u64::from(y) >= tiles {
            return Vec::new();
        }
        let frame = Frame::tile(
            z,
            x,
            y,
            options.extent,
            options.buffer,
            options.simplify_tolerance,
        );
        let mut writer = LayerWriter::new(
            &self.name,
            &self.store.keys,
            &self.store.values,
            options.extent,
        );
        let mut cutter = Cutter::default();
        let mut found = Vec::new();
        self.tree.query(&frame.area, frame.threshold, &mut found);
        let mut order: Vec<u64> = found
            .iter()
            .filter_map(|&index| {
                let record = self.store.records.get(index as usize)?;
                Some((u64::from(record.sequence) << 32) | u64::from(index))
            })
            .collect();
        order.sort_unstable();
        writer.reserve(order.len());
        let level = self.level(z, options);
        for key in order {
            let index = key as u32;
            let Some(record) = self.store.records.get(index as usize) else {
                continue;
            };
            let entry = level.as_ref().map_or(Entry::FromLayer, |l| l.entry(index));
            let shown = match (entry, &level) {
                (Entry::Parts(start, end), Some(level)) => {
                    cutter.level_record(level, (start, end), record, &frame)
                }
                (Entry::Absent, _) => false,
                _ => cutter.record(&self.store, record, &frame),
            };
            if shown {
                let tags = self.store.tags_of(record);
                writer.feature(record.id, record.kind, tags, cutter.commands.as_slice());
            }
        }
        writer.finish()
    }

    /// The generalised level for tiles of zoom `z`, when the zoom has one and it fits.
    fn level(&self, z: u8, options: &TileOptions) -> Option<std::sync::Arc<Level>> {
        if z > GENERALISED_LEVEL_MAX {
            return None;
        }
        let key = LevelKey {
            z,
            extent: options.extent,
            tolerance_bits: options.simplify_tolerance.to_bits(),
        };
        self.levels.get(key, || {
            Level::build(&self.store, z, options.extent, options.simplify_tolerance)
        })
    }
}

#[cfg(test)]
mod tests;

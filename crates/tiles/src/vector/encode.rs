//! Protocol buffer writing for Mapbox Vector Tile 2.1, by hand: the format uses four message
//! types and three wire types, which is less code than a protobuf dependency and its build
//! step. [`LayerWriter`] writes the one layer of a tile; [`Commands`] turns snapped
//! coordinates into the command integers of a feature's geometry.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::PropertyValue;
use super::clip::Snapped;

/// Wire type of varints.
const VARINT: u32 = 0;
/// Wire type of 64-bit values.
const FIXED64: u32 = 1;
/// Wire type of length-delimited values.
const BYTES: u32 = 2;

/// Tile.layers.
const TILE_LAYERS: u32 = 3;
/// Layer fields.
const LAYER_NAME: u32 = 1;
const LAYER_FEATURES: u32 = 2;
const LAYER_KEYS: u32 = 3;
const LAYER_VALUES: u32 = 4;
const LAYER_EXTENT: u32 = 5;
const LAYER_VERSION: u32 = 15;
/// Feature fields.
const FEATURE_ID: u32 = 1;
const FEATURE_TAGS: u32 = 2;
const FEATURE_TYPE: u32 = 3;
const FEATURE_GEOMETRY: u32 = 4;
/// Value fields.
const VALUE_STRING: u32 = 1;
const VALUE_DOUBLE: u32 = 3;
const VALUE_UINT: u32 = 5;
const VALUE_SINT: u32 = 6;
const VALUE_BOOL: u32 = 7;

/// Command ids of geometry encoding (MVT 2.1, 4.3.3).
const MOVE_TO: u32 = 1;
const LINE_TO: u32 = 2;
const CLOSE_PATH: u32 = 7;

/// The largest count a command integer holds: 29 bits are left beside the 3-bit id.
pub(crate) const COMMAND_COUNT_MAX: usize = (1 << 29) - 1;

/// Appends `value` as a varint.
pub(crate) fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Bytes `value` takes as a varint.
fn varint_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Zigzag encoding of a signed integer (MVT parameter integers, sint64).
pub(crate) fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn key(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from((field << 3) | wire));
}

/// Field `field` as a varint.
pub(crate) fn uint_field(out: &mut Vec<u8>, field: u32, value: u64) {
    key(out, field, VARINT);
    varint(out, value);
}

/// Field `field` as length-delimited bytes.
pub(crate) fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    key(out, field, BYTES);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Field `field` as packed varints, written in place (the length is summed first).
pub(crate) fn packed_field(out: &mut Vec<u8>, field: u32, values: &[u32]) {
    if values.is_empty() {
        return;
    }
    let length: usize = values.iter().map(|&v| varint_len(u64::from(v))).sum();
    key(out, field, BYTES);
    varint(out, length as u64);
    out.reserve(length);
    for &value in values {
        varint(out, u64::from(value));
    }
}

/// Field `field` as a double.
pub(crate) fn double_field(out: &mut Vec<u8>, field: u32, value: f64) {
    key(out, field, FIXED64);
    out.extend_from_slice(&value.to_le_bytes());
}

/// Writes the `Value` message of a property into `out` (cleared first); false for a value MVT
/// readers cannot use: NaN and infinities have no JSON form, so style expressions and GeoJSON
/// exports would choke on them (mesh items mark "no data" that way); they are left out like
/// nulls.
pub(crate) fn value_message(value: &PropertyValue, out: &mut Vec<u8>) -> bool {
    out.clear();
    match value {
        PropertyValue::Text(text) => bytes_field(out, VALUE_STRING, text.as_bytes()),
        PropertyValue::Float(number) if number.is_finite() => {
            double_field(out, VALUE_DOUBLE, *number);
        }
        PropertyValue::Float(_) => return false,
        PropertyValue::Int(number) => match u64::try_from(*number) {
            Ok(unsigned) => uint_field(out, VALUE_UINT, unsigned),
            Err(_) => uint_field(out, VALUE_SINT, zigzag(*number)),
        },
        PropertyValue::Bool(flag) => uint_field(out, VALUE_BOOL, u64::from(*flag)),
    }
    true
}

/// The encoded `Value` messages of a layer, back to back: one allocation for 100,000 values
/// instead of 100,000.
#[derive(Debug, Default)]
pub(crate) struct ValueTable {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl ValueTable {
    /// Appends a message; its position, or `None` when the table is full (4 GiB).
    pub(crate) fn push(&mut self, message: &[u8]) -> Option<u32> {
        let id = u32::try_from(self.ends.len()).ok()?;
        let end = u32::try_from(self.bytes.len() + message.len()).ok()?;
        self.bytes.extend_from_slice(message);
        self.ends.push(end);
        Some(id)
    }

    pub(crate) fn get(&self, id: u32) -> Option<&[u8]> {
        let index = id as usize;
        let end = *self.ends.get(index)? as usize;
        let start = match index.checked_sub(1) {
            Some(previous) => *self.ends.get(previous)? as usize,
            None => 0,
        };
        self.bytes.get(start..end)
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    pub(crate) fn approximate_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * 4
    }
}

/// Hashes the small integer ids of the value table: a multiply spreads them well enough, at a
/// fraction of SipHash's cost on tiles with tens of thousands of tags.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.0 = u64::from(value)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(32);
    }
}

/// MVT geometry types (MVT 2.1, 4.3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Point = 1,
    Line = 2,
    Polygon = 3,
}

/// Writes the one layer of a tile. Keys and values are the layer's tables, deduplicated when
/// the layer was built; a tile carries only the ones its features use, numbered in the order
/// they first appear.
pub(crate) struct LayerWriter<'a> {
    name: &'a str,
    keys: &'a [String],
    values: &'a ValueTable,
    extent: u32,
    features: Vec<u8>,
    feature: Vec<u8>,
    tags: Vec<u32>,
    /// Tile key index of each layer key, or `u32::MAX` while unused.
    key_ids: Vec<u32>,
    used_keys: Vec<u32>,
    value_ids: HashMap<u32, u32, BuildHasherDefault<IdHasher>>,
    used_values: Vec<u32>,
}

impl<'a> LayerWriter<'a> {
    pub(crate) fn new(
        name: &'a str,
        keys: &'a [String],
        values: &'a ValueTable,
        extent: u32,
    ) -> Self {
        Self {
            name,
            keys,
            values,
            extent,
            features: Vec::new(),
            feature: Vec::new(),
            tags: Vec::new(),
            key_ids: vec![u32::MAX; keys.len()],
            used_keys: Vec::new(),
            value_ids: HashMap::default(),
            used_values: Vec::new(),
        }
    }

    /// Makes room for about `features` features: a tile of 20,000 parcels, each with its own
    /// id attribute, would otherwise rehash its value table a dozen times.
    pub(crate) fn reserve(&mut self, features: usize) {
        self.value_ids.reserve(features);
        self.used_values.reserve(features);
        self.features.reserve(features.saturating_mul(32));
    }

    /// Appends a feature. `tags` are (layer key, layer value) pairs; `geometry` is not empty.
    pub(crate) fn feature(&mut self, id: Option<u64>, kind: Kind, tags: &[u32], geometry: &[u32]) {
        self.tags.clear();
        for pair in tags.chunks_exact(2) {
            let &[key, value] = pair else {
                continue;
            };
            let Some(slot) = self.key_ids.get_mut(key as usize) else {
                continue;
            };
            if *slot == u32::MAX {
                *slot = self.used_keys.len() as u32;
                self.used_keys.push(key);
            }
            let tile_key = *slot;
            let next = self.used_values.len() as u32;
            let tile_value = *self.value_ids.entry(value).or_insert(next);
            if tile_value == next {
                self.used_values.push(value);
            }
            self.tags.push(tile_key);
            self.tags.push(tile_value);
        }
        self.feature.clear();
        if let Some(id) = id {
            uint_field(&mut self.feature, FEATURE_ID, id);
        }
        packed_field(&mut self.feature, FEATURE_TAGS, &self.tags);
        uint_field(&mut self.feature, FEATURE_TYPE, kind as u64);
        packed_field(&mut self.feature, FEATURE_GEOMETRY, geometry);
        bytes_field(&mut self.features, LAYER_FEATURES, &self.feature);
    }

    /// The encoded tile: empty when no feature was written (zero bytes is a valid, empty MVT).
    pub(crate) fn finish(self) -> Vec<u8> {
        if self.features.is_empty() {
            return Vec::new();
        }
        let mut head = Vec::with_capacity(self.name.len() + 8);
        uint_field(&mut head, LAYER_VERSION, 2);
        bytes_field(&mut head, LAYER_NAME, self.name.as_bytes());
        let mut tail = Vec::new();
        for &key in &self.used_keys {
            if let Some(name) = self.keys.get(key as usize) {
                bytes_field(&mut tail, LAYER_KEYS, name.as_bytes());
            }
        }
        for &value in &self.used_values {
            if let Some(message) = self.values.get(value) {
                bytes_field(&mut tail, LAYER_VALUES, message);
            }
        }
        uint_field(&mut tail, LAYER_EXTENT, u64::from(self.extent));
        let length = head.len() + self.features.len() + tail.len();
        let mut tile = Vec::with_capacity(length + 8);
        key(&mut tile, TILE_LAYERS, BYTES);
        varint(&mut tile, length as u64);
        tile.extend_from_slice(&head);
        tile.extend_from_slice(&self.features);
        tile.extend_from_slice(&tail);
        tile
    }
}

/// A feature's command integers, with the cursor carried across parts as MVT asks.
#[derive(Default)]
pub(crate) struct Commands {
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
        self.out.push(zigzag(dx) as u32);
        self.out.push(zigzag(dy) as u32);
        self.cursor = point;
    }

    /// Starts the next feature.
    pub(crate) fn clear(&mut self) {
        self.out.clear();
        self.cursor = [0, 0];
    }

    /// Points: one MoveTo with all of them (a POINT geometry has exactly one command).
    pub(crate) fn points(&mut self, points: &[Snapped]) {
        if points.is_empty() || points.len() > COMMAND_COUNT_MAX {
            return;
        }
        self.out.push(Self::command(MOVE_TO, points.len()));
        for &point in points {
            self.step(point);
        }
    }

    /// A line of at least two points.
    pub(crate) fn line(&mut self, points: &[Snapped]) {
        let Some((&first, rest)) = points.split_first() else {
            return;
        };
        if rest.is_empty() || rest.len() > COMMAND_COUNT_MAX {
            return;
        }
        self.out.push(Self::command(MOVE_TO, 1));
        self.step(first);
        self.out.push(Self::command(LINE_TO, rest.len()));
        for &point in rest {
            self.step(point);
        }
    }

    /// A ring of at least three points, without the closing point.
    pub(crate) fn ring(&mut self, points: &[Snapped]) {
        if points.len() < 3 {
            return;
        }
        self.line(points);
        self.out.push(Self::command(CLOSE_PATH, 1));
    }

    /// Where the commands stand now, to go back to with [`Commands::rewind`].
    pub(crate) fn mark(&self) -> (usize, Snapped) {
        (self.out.len(), self.cursor)
    }

    /// Forgets what was written since `mark`.
    pub(crate) fn rewind(&mut self, mark: (usize, Snapped)) {
        self.out.truncate(mark.0);
        self.cursor = mark.1;
    }

    pub(crate) fn as_slice(&self) -> &[u32] {
        &self.out
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.out.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag_follow_the_protobuf_rules() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        for value in [
            0,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = Vec::new();
            varint(&mut out, value);
            assert_eq!(out.len(), varint_len(value), "{value}");
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(-2), 3);
        assert_eq!(zigzag(i64::from(i32::MAX)), 4_294_967_294);
        let mut out = Vec::new();
        uint_field(&mut out, 15, 2);
        assert_eq!(out, [0x78, 0x02]);
        let mut out = Vec::new();
        packed_field(&mut out, 4, &[9, 300]);
        assert_eq!(out, [0x22, 3, 9, 0xac, 0x02]);
    }

    #[test]
    fn commands_are_relative_to_the_previous_part() {
        let mut commands = Commands::default();
        commands.ring(&[[2, 2], [4, 2], [4, 4]]);
        commands.line(&[[5, 5], [5, 6]]);
        // MoveTo(1) +2 +2, LineTo(2) +2 0, 0 +2, ClosePath; MoveTo(1) +1 +1, LineTo(1) 0 +1.
        assert_eq!(
            commands.as_slice(),
            [9, 4, 4, 18, 4, 0, 0, 4, 15, 9, 2, 2, 10, 0, 2]
        );
        commands.clear();
        commands.line(&[[1, 1]]);
        commands.ring(&[[1, 1], [2, 2]]);
        assert!(commands.is_empty(), "degenerate parts write nothing");
    }

    #[test]
    fn values_use_the_smallest_fitting_field() {
        let encoded = |value: PropertyValue| {
            let mut out = vec![9];
            value_message(&value, &mut out).then_some(out)
        };
        assert_eq!(encoded(PropertyValue::Int(3)), Some(vec![0x28, 3]));
        assert_eq!(encoded(PropertyValue::Int(-1)), Some(vec![0x30, 1]));
        assert_eq!(encoded(PropertyValue::Bool(true)), Some(vec![0x38, 1]));
        assert_eq!(
            encoded(PropertyValue::Text("ab".into())),
            Some(vec![0x0a, 2, b'a', b'b'])
        );
        assert_eq!(encoded(PropertyValue::Float(f64::NAN)), None);
        assert_eq!(encoded(PropertyValue::Float(1.5)).map(|m| m.len()), Some(9));
        let mut table = ValueTable::default();
        assert_eq!(table.push(&[1, 2]), Some(0));
        assert_eq!(table.push(&[]), Some(1));
        assert_eq!(table.push(&[3]), Some(2));
        assert_eq!(table.get(0), Some(&[1, 2][..]));
        assert_eq!(table.get(1), Some(&[][..]));
        assert_eq!(table.get(2), Some(&[3][..]));
        assert_eq!(table.get(3), None);
    }
}

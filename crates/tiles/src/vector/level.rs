//! Generalised copies of a layer for the low zooms, made on first use and kept within a
//! memory bound.
//!
//! At zoom 8 a tile over a region holds thousands of features, each of which a tile would
//! otherwise filter, move, snap and clean; at zoom 4 one tile holds the whole layer. A level is
//! that work done once for every tile of a zoom: the records the zoom draws, with the vertices
//! its tolerance keeps, snapped to the zoom's integer grid (tile units counted from the world's
//! top-left corner), cleaned and oriented. A tile of the zoom then only moves the
//! snapped points into its own frame and clips the records that cross its edge; records
//! that vanish at the zoom are not in the level at all.
//!
//! Levels are made for zooms up to [`GENERALISED_LEVEL_MAX`] only: deeper tiles hold few
//! features each, and a level there would copy the whole layer. They depend on the extent and
//! the tolerance, so a level is kept per (zoom, extent, tolerance), at most
//! [`LEVEL_KEYS_MAX`] of them; together they hold at most the bound the layer gives
//! ([`Levels::new`]). A level that does not fit is not kept, and its tiles are cut from the
//! layer directly, as deeper ones are.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::clip::Snapped;
use super::cut::{Cutter, Frame};
use super::encode::Kind;
use super::store::{Part, Store};
use crate::tms::WEB_MERCATOR_HALF_WORLD;

/// The deepest zoom that gets a generalised level.
pub(crate) const GENERALISED_LEVEL_MAX: u8 = 8;

/// Levels together hold at most this many bytes per 4 bytes of the layer they generalise. On
/// 100,000 small polygons (a 50 MB layer), levels 4 to 8 take 1.4, 3.5, 5.2, 7.3 and 9.4 MB
/// (levels 0 to 3 are empty: nothing is big enough to show) and all fit; on a layer of a few
/// huge features they are far smaller than that.
pub(crate) const LEVEL_BYTES_PER_4_LAYER_BYTES: usize = 3;

/// Most (zoom, extent, tolerance) combinations kept per layer; a server uses one extent and
/// tolerance, so this only stops a caller that varies them from growing the table.
pub(crate) const LEVEL_KEYS_MAX: usize = 32;

/// Records whose box reaches this far outside the EPSG:3857 world (in half-world units) are
/// cut from the layer per tile instead: their level coordinates could leave `i32`.
const WORLD_MARGIN: f64 = 2.0;

/// Where a record is in a level: its parts there, or the markers below.
type Slot = (u32, u32);

/// A record the level does not hold: nothing of it shows at the level's zoom.
const ABSENT: Slot = (u32::MAX, u32::MAX);

/// A record tiles cut from the layer, as at deeper zooms.
const FROM_LAYER: Slot = (u32::MAX, u32::MAX - 1);

/// What a level says of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// Its generalised parts.
    Parts(u32, u32),
    /// Cut it from the layer.
    FromLayer,
    /// It does not show.
    Absent,
}

/// One zoom's generalised copy. It has no index of its own: the layer's tree, asked with the
/// zoom's tolerance, finds the same records, and their slots here are found by position.
#[derive(Debug, Default)]
pub(crate) struct Level {
    /// Per record of the layer; empty when no record shows at the zoom.
    slots: Vec<Slot>,
    pub(crate) parts: Vec<Part>,
    pub(crate) coords: Vec<Snapped>,
}

impl Level {
    /// The level of zoom `z` for tiles of `extent` units cut with `tolerance`.
    pub(crate) fn build(store: &Store, z: u8, extent: u32, tolerance: f64) -> Self {
        let frame = Frame::world(z, extent, tolerance);
        let mut level = Level::default();
        let mut cutter = Cutter::default();
        let world = WEB_MERCATOR_HALF_WORLD * WORLD_MARGIN;
        for (index, (record, &significance)) in
            store.records.iter().zip(&store.significance).enumerate()
        {
            if f64::from(significance) <= frame.threshold {
                continue;
            }
            let Ok(record_id) = u32::try_from(index) else {
                break;
            };
            let bounds = &record.bounds;
            let slot = if [bounds.min_x, bounds.min_y, bounds.max_x, bounds.max_y]
                .iter()
                .all(|value| value.abs() <= world)
            {
                match level.add(store, record_id, &frame, &mut cutter) {
                    Some(parts) => parts,
                    None => continue,
                }
            } else {
                FROM_LAYER
            };
            if level.slots.is_empty() {
                level.slots = vec![ABSENT; store.records.len()];
            }
            if let Some(place) = level.slots.get_mut(index) {
                *place = slot;
            }
        }
        level.parts.shrink_to_fit();
        level.coords.shrink_to_fit();
        level
    }

    /// What the level holds of record `record`.
    pub(crate) fn entry(&self, record: u32) -> Entry {
        match self.slots.get(record as usize).copied() {
            None | Some(ABSENT) => Entry::Absent,
            Some(FROM_LAYER) => Entry::FromLayer,
            Some((start, end)) => Entry::Parts(start, end),
        }
    }

    /// Adds the generalised parts of a record; `None` when nothing of it is left.
    fn add(
        &mut self,
        store: &Store,
        record_id: u32,
        frame: &Frame,
        cutter: &mut Cutter,
    ) -> Option<(u32, u32)> {
        let record = store.records.get(record_id as usize)?;
        let start = u32::try_from(self.parts.len()).ok()?;
        let mut polygon_dropped = false;
        for part in store.parts_of(record) {
            if record.kind == Kind::Polygon && !part.exterior && polygon_dropped {
                continue;
            }
            cutter.load_part(store, part, frame, record.kind);
            let kept = match record.kind {
                Kind::Point => {
                    cutter.snap_points();
                    !cutter.snapped.is_empty()
                }
                Kind::Line => {
                    cutter.snap_line();
                    cutter.snapped.len() >= 2
                }
                Kind::Polygon => {
                    let kept = cutter.snap_ring(frame, false, part.exterior).is_some();
                    if part.exterior {
                        polygon_dropped = !kept;
                    }
                    kept
                }
            };
            if kept && !self.push(&cutter.snapped, part.exterior) {
                break;
            }
        }
        let end = u32::try_from(self.parts.len()).ok()?;
        (end > start).then_some((start, end))
    }

    fn push(&mut self, points: &[Snapped], exterior: bool) -> bool {
        let (Ok(start), Ok(end)) = (
            u32::try_from(self.coords.len()),
            u32::try_from(self.coords.len() + points.len()),
        ) else {
            return false;
        };
        self.coords.extend_from_slice(points);
        self.parts.push(Part {
            start,
            end,
            exterior,
        });
        true
    }

    pub(crate) fn parts_of(&self, parts: (u32, u32)) -> &[Part] {
        self.parts
            .get(parts.0 as usize..parts.1 as usize)
            .unwrap_or_default()
    }

    /// Bytes held.
    pub(crate) fn approximate_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.parts.capacity() * std::mem::size_of::<Part>()
            + self.coords.capacity() * std::mem::size_of::<Snapped>()
    }
}

/// Which level: zoom, extent, and the tolerance's bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LevelKey {
    pub(crate) z: u8,
    pub(crate) extent: u32,
    pub(crate) tolerance_bits: u64,
}

type Cell = Arc<OnceLock<Option<Arc<Level>>>>;

/// The levels of a layer, made on first use.
#[derive(Debug)]
pub(crate) struct Levels {
    cells: Mutex<Vec<(LevelKey, Cell)>>,
    bytes: AtomicUsize,
    bytes_max: usize,
}

impl Levels {
    /// Levels that together hold at most `bytes_max`.
    pub(crate) fn new(bytes_max: usize) -> Self {
        Self {
            cells: Mutex::new(Vec::new()),
            bytes: AtomicUsize::new(0),
            bytes_max,
        }
    }

    /// The level for `key`, made now by `build` if this is its first use; `None` when it
    /// does not fit in the bound (or the table of keys is full). Callers asking for the same
    /// level at once wait for one build.
    pub(crate) fn get(&self, key: LevelKey, build: impl FnOnce() -> Level) -> Option<Arc<Level>> {
        let cell = {
            let mut cells = self.cells.lock().ok()?;
            match cells.iter().find(|(k, _)| *k == key) {
                Some((_, cell)) => cell.clone(),
                None if cells.len() < LEVEL_KEYS_MAX => {
                    let cell = Cell::default();
                    cells.push((key, cell.clone()));
                    cell
                }
                None => return None,
            }
        };
        cell.get_or_init(|| {
            let level = build();
            let size = level.approximate_bytes();
            self.bytes
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                    held.checked_add(size)
                        .filter(|&total| total <= self.bytes_max)
                })
                .ok()
                .map(|_| Arc::new(level))
        })
        .clone()
    }

    /// Bytes the levels hold now.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// The most they may hold.
    pub(crate) fn bytes_max(&self) -> usize {
        self.bytes_max
    }
}

//! Cutting one record for one tile: the vertices the tile's tolerance keeps, moved into tile
//! units, clipped when the record reaches past the buffer, snapped, cleaned, and turned into
//! MVT commands with exterior rings clockwise and holes counter-clockwise on screen.
//!
//! The same steps serve the generalised levels ([`super::level`]), which run them once per
//! zoom over the whole world ([`Frame::world`]) without clipping and store the snapped result.

use super::clip::{self, Point, Snapped};
use super::encode::{Commands, Kind};
use super::level::Level;
use super::store::{Part, Record, Store};
use crate::tms::{Bounds, WEB_MERCATOR_HALF_WORLD};

/// How EPSG:3857 maps to tile units, and what a tile keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    min_x: f64,
    max_y: f64,
    scale: f64,
    /// The clipping square, `low..=high` on both axes (the tile plus its buffer).
    pub(crate) low: f64,
    pub(crate) high: f64,
    /// Squared tolerance in metres: vertices and records at or below it are not drawn.
    pub(crate) threshold: f64,
    /// Column and row of the tile times the extent: the tile's origin in level units.
    pub(crate) origin: [i64; 2],
    /// The buffered tile in EPSG:3857.
    pub(crate) area: Bounds,
}

impl Frame {
    /// Tile `x`, `y` of level `z`; the caller has checked that the tile exists.
    pub(crate) fn tile(z: u8, x: u32, y: u32, extent: u32, buffer: u32, tolerance: f64) -> Self {
        let span = 2.0 * WEB_MERCATOR_HALF_WORLD / (1_u64 << z) as f64;
        let min_x = -WEB_MERCATOR_HALF_WORLD + f64::from(x) * span;
        let max_y = WEB_MERCATOR_HALF_WORLD - f64::from(y) * span;
        let extent_f = f64::from(extent);
        let scale = extent_f / span;
        let margin = f64::from(buffer) / scale;
        let metres = tolerance / scale;
        Self {
            min_x,
            max_y,
            scale,
            low: -f64::from(buffer),
            high: extent_f + f64::from(buffer),
            threshold: metres * metres,
            origin: [
                i64::from(x) * i64::from(extent),
                i64::from(y) * i64::from(extent),
            ],
            area: Bounds {
                min_x: min_x - margin,
                min_y: max_y - span - margin,
                max_x: min_x + span + margin,
                max_y: max_y + margin,
            },
        }
    }

    /// The whole world at level `z` in tile units of that level (tile x, y starts at
    /// x * extent, y * extent), with nothing clipped.
    pub(crate) fn world(z: u8, extent: u32, tolerance: f64) -> Self {
        let mut frame = Self::tile(z, 0, 0, extent, 0, tolerance);
        frame.low = f64::NEG_INFINITY;
        frame.high = f64::INFINITY;
        frame
    }

    pub(crate) fn place(&self, point: Point) -> Point {
        [
            (point[0] - self.min_x) * self.scale,
            (self.max_y - point[1]) * self.scale,
        ]
    }

    /// True when `bounds` (EPSG:3857) meets the buffered tile.
    pub(crate) fn meets(&self, bounds: &Bounds) -> bool {
        bounds.min_x <= self.area.max_x
            && self.area.min_x <= bounds.max_x
            && bounds.min_y <= self.area.max_y
            && self.area.min_y <= bounds.max_y
    }

    /// True when `bounds` (EPSG:3857) lies in the clipping square, `margin` units inside.
    pub(crate) fn holds(&self, bounds: &Bounds, margin: f64) -> bool {
        let [left, top] = self.place([bounds.min_x, bounds.max_y]);
        let [right, bottom] = self.place([bounds.max_x, bounds.min_y]);
        left >= self.low + margin
            && top >= self.low + margin
            && right <= self.high - margin
            && bottom <= self.high - margin
    }
}

/// The polygon being written: rings of its that collapse or cover it decide whether it shows.
#[derive(Default)]
struct PolygonState {
    dropped: bool,
    /// Twice the area of its exterior ring.
    area: i64,
    /// Where its commands start.
    mark: (usize, Snapped),
}

/// Scratch buffers reused across the records of a tile, and the commands of the last one.
#[derive(Default)]
pub(crate) struct Cutter {
    polygon: PolygonState,
    points: Vec<Point>,
    clipped: Vec<Point>,
    scratch: Vec<Point>,
    pieces: Vec<(usize, usize)>,
    pub(crate) snapped: Vec<Snapped>,
    pub(crate) commands: Commands,
}

impl Cutter {
    /// Cuts a record of the layer for the frame into `self.commands`; false when nothing of
    /// it shows.
    pub(crate) fn record(&mut self, store: &Store, record: &Record, frame: &Frame) -> bool {
        self.commands.clear();
        self.polygon = PolygonState::default();
        for (part, bounds) in store.parts_with_bounds(record) {
            if !frame.meets(&bounds) {
                // Nothing of it is in the tile: a polygon whose exterior is not has no hole
                // that is.
                self.polygon.dropped |= part.exterior;
                continue;
            }
            let clip = !frame.holds(&bounds, 0.0);
            match record.kind {
                Kind::Point => {
                    let coords = store.coords.get(part.range()).unwrap_or_default();
                    self.points.clear();
                    self.points.extend(coords.iter().map(|&p| frame.place(p)));
                    self.points_out(frame);
                }
                Kind::Line => {
                    self.load(store, part, frame, false);
                    self.line_out(frame, clip);
                }
                Kind::Polygon => {
                    if part.exterior || !self.polygon.dropped {
                        self.load(store, part, frame, true);
                        self.ring_out(frame, clip, part.exterior);
                    }
                }
            }
        }
        !self.commands.is_empty()
    }

    /// Loads the vertices of `part` the frame's tolerance keeps, in tile units; a ring
    /// without its closing point.
    fn load(&mut self, store: &Store, part: &Part, frame: &Frame, ring: bool) {
        self.points.clear();
        let range = part.range();
        let end = if ring {
            range.end.saturating_sub(1)
        } else {
            range.end
        };
        let coords = store.coords.get(range.start..end).unwrap_or_default();
        let importance = store.importance.get(range.start..end).unwrap_or_default();
        let threshold = frame.threshold;
        self.points.extend(
            coords
                .iter()
                .zip(importance)
                .filter(|(_, value)| f64::from(**value) > threshold)
                .map(|(&point, _)| frame.place(point)),
        );
    }

    /// Loads snapped points (level units) moved to the frame's tile, as tile units.
    pub(crate) fn load_snapped(&mut self, points: &[Snapped], frame: &Frame) {
        self.points.clear();
        self.points.extend(points.iter().map(|p| {
            [
                (i64::from(p[0]) - frame.origin[0]) as f64,
                (i64::from(p[1]) - frame.origin[1]) as f64,
            ]
        }));
    }

    /// Writes the loaded points that fall in the clipping square as one MoveTo.
    pub(crate) fn points_out(&mut self, frame: &Frame) {
        self.snapped.clear();
        self.snapped.extend(
            self.points
                .iter()
                .filter(|p| {
                    p[0] >= frame.low
                        && p[0] <= frame.high
                        && p[1] >= frame.low
                        && p[1] <= frame.high
                })
                .map(|&p| clip::snap(p)),
        );
        self.commands.points(&self.snapped);
    }

    /// Writes the loaded line, clipped when `clip`, as the pieces that remain drawable.
    pub(crate) fn line_out(&mut self, frame: &Frame, clip: bool) {
        if !clip {
            clip::snap_line(&self.points, &mut self.snapped);
            if self.snapped.len() >= 2 {
                self.commands.line(&self.snapped);
            }
            return;
        }
        clip::clip_line(
            &self.points,
            frame.low,
            frame.high,
            &mut self.clipped,
            &mut self.pieces,
        );
        for &(start, end) in &self.pieces {
            let piece = self.clipped.get(start..end).unwrap_or_default();
            clip::snap_line(piece, &mut self.snapped);
            if self.snapped.len() >= 2 {
                self.commands.line(&self.snapped);
            }
        }
    }

    /// Writes the loaded ring, clipped when `clip`, snapped, cleaned and turned the way MVT
    /// wants. An exterior ring that collapses drops its polygon, holes and all; so does a hole
    /// as large as its exterior, which happens when the tile lies inside the hole (both are
    /// then the clipping square): the polygon covers nothing of the tile.
    pub(crate) fn ring_out(&mut self, frame: &Frame, clip: bool, exterior: bool) {
        if !exterior && self.polygon.dropped {
            return;
        }
        let Some(area) = self.snap_ring(frame, clip, exterior) else {
            self.polygon.dropped |= exterior;
            return;
        };
        if exterior {
            self.polygon = PolygonState {
                dropped: false,
                area,
                mark: self.commands.mark(),
            };
        } else if area >= self.polygon.area {
            self.commands.rewind(self.polygon.mark);
            self.polygon.dropped = true;
            return;
        }
        self.commands.ring(&self.snapped);
    }

    /// Leaves the loaded ring in `self.snapped`, clipped when `clip`, cleaned and oriented
    /// (exterior clockwise on screen): twice its area, or `None` when it collapsed.
    pub(crate) fn snap_ring(&mut self, frame: &Frame, clip: bool, exterior: bool) -> Option<i64> {
        if self.points.len() < 3 {
            return None;
        }
        if clip {
            clip::clip_ring(
                &self.points,
                frame.low,
                frame.high,
                &mut self.clipped,
                &mut self.scratch,
            );
            clip::snap_ring(&self.clipped, &mut self.snapped);
        } else {
            clip::snap_ring(&self.points, &mut self.snapped);
        }
        if self.snapped.len() < 3 {
            return None;
        }
        let area = clip::doubled_area(&self.snapped);
        if area == 0 {
            return None;
        }
        if exterior != (area > 0) {
            self.snapped.reverse();
        }
        Some(area.abs())
    }

    /// Loads a record's kept vertices in the frame without clipping (for levels).
    pub(crate) fn load_part(&mut self, store: &Store, part: &Part, frame: &Frame, kind: Kind) {
        match kind {
            Kind::Point => {
                let coords = store.coords.get(part.range()).unwrap_or_default();
                self.points.clear();
                self.points.extend(coords.iter().map(|&p| frame.place(p)));
            }
            Kind::Line => self.load(store, part, frame, false),
            Kind::Polygon => self.load(store, part, frame, true),
        }
    }

    /// The loaded points, snapped.
    pub(crate) fn snap_points(&mut self) {
        self.snapped.clear();
        self.snapped
            .extend(self.points.iter().map(|&p| clip::snap(p)));
    }

    /// The loaded line, snapped without repeats.
    pub(crate) fn snap_line(&mut self) {
        clip::snap_line(&self.points, &mut self.snapped);
    }
}

impl Cutter {
    /// Cuts a record of a generalised level (its parts there) for the frame, like
    /// [`Cutter::record`]. Level points are already snapped and cleaned, so a record inside
    /// the clipping square (with a unit to spare for the snapping) is only moved.
    pub(crate) fn level_record(
        &mut self,
        level: &Level,
        parts: (u32, u32),
        record: &Record,
        frame: &Frame,
    ) -> bool {
        self.commands.clear();
        self.polygon = PolygonState::default();
        let clip = !frame.holds(&record.bounds, 1.0);
        for part in level.parts_of(parts) {
            let points = level.coords.get(part.range()).unwrap_or_default();
            if !clip {
                self.snapped.clear();
                self.snapped.extend(points.iter().map(|p| {
                    [
                        (i64::from(p[0]) - frame.origin[0]) as i32,
                        (i64::from(p[1]) - frame.origin[1]) as i32,
                    ]
                }));
                match record.kind {
                    Kind::Point => self.commands.points(&self.snapped),
                    Kind::Line => self.commands.line(&self.snapped),
                    Kind::Polygon => self.commands.ring(&self.snapped),
                }
                continue;
            }
            self.load_snapped(points, frame);
            match record.kind {
                Kind::Point => self.points_out(frame),
                Kind::Line => self.line_out(frame, true),
                Kind::Polygon => self.ring_out(frame, true, part.exterior),
            }
        }
        !self.commands.is_empty()
    }
}

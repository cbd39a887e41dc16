//! Which features a tile needs, without looking at all of them: a packed Hilbert R-tree over
//! the features' bounding boxes, built once per layer, where every node also carries the
//! largest significance below it.
//!
//! Packed (sorted by the Hilbert curve position of each box's centre, then grouped
//! [`NODE_SIZE`] at a time, level by level) because the layer never changes: the tree is built
//! in one sort, holds no slack, and stays balanced whatever the data, where a uniform grid
//! degrades when the features crowd into part of the extent (a city and one outlying point).
//! The significance is the tolerance at which a feature vanishes (see [`super::simplify`]):
//! at zoom 4, the tree skips whole subtrees of parcels that are smaller than the tolerance,
//! so a low-zoom tile of 100,000 small polygons does not visit them one by one.

use crate::tms::Bounds;

/// Children per node: 16 keeps the tree shallow (five levels for a million features) and a
/// node's boxes in a few cache lines.
const NODE_SIZE: usize = 16;

/// Side of the grid the Hilbert curve is drawn on (2^16 per axis, 32-bit positions).
const HILBERT_ORDER: u32 = 16;

/// The tree.
#[derive(Debug, Clone, Default)]
pub(crate) struct RTree {
    /// Every node's box, leaves first (in Hilbert order), then each level above.
    boxes: Vec<Bounds>,
    /// The largest significance in each node.
    significance: Vec<f32>,
    /// The item of each leaf.
    items: Vec<u32>,
    /// Where each level starts in `boxes`, and one past the root.
    level_starts: Vec<usize>,
}

impl RTree {
    /// Indexes items `0..boxes.len()` by their boxes and significances (same length).
    pub(crate) fn build(boxes: &[Bounds], significance: &[f32]) -> Self {
        let count = boxes.len().min(significance.len());
        let boxes = boxes.get(..count).unwrap_or_default();
        let order = hilbert_order(boxes);
        let mut tree = Self {
            boxes: Vec::with_capacity(order.len() + order.len() / (NODE_SIZE - 1) + 1),
            significance: Vec::with_capacity(order.len() + order.len() / (NODE_SIZE - 1) + 1),
            items: Vec::with_capacity(order.len()),
            level_starts: vec![0],
        };
        for &item in &order {
            let index = item as usize;
            if let (Some(&bounds), Some(&value)) = (boxes.get(index), significance.get(index)) {
                tree.boxes.push(bounds);
                tree.significance.push(value);
                tree.items.push(item);
            }
        }
        if tree.items.is_empty() {
            return Self::default();
        }
        tree.add_levels();
        tree
    }

    /// Groups each level's nodes into parents until one root is left.
    fn add_levels(&mut self) {
        let mut start = 0;
        loop {
            let end = self.boxes.len();
            self.level_starts.push(end);
            if end - start <= 1 {
                break;
            }
            for group in (start..end).step_by(NODE_SIZE) {
                let members = group..(group + NODE_SIZE).min(end);
                let (Some(bounds), Some(value)) = (
                    self.boxes
                        .get(members.clone())
                        .and_then(|boxes| boxes.iter().copied().reduce(|a, b| a.union(&b))),
                    self.significance
                        .get(members)
                        .and_then(|values| values.iter().copied().reduce(f32::max)),
                ) else {
                    continue;
                };
                self.boxes.push(bounds);
                self.significance.push(value);
            }
            start = end;
        }
    }

    /// Appends to `found` the items whose boxes meet `area` (edges included) and whose
    /// significance exceeds `threshold`, in no particular order.
    pub(crate) fn query(&self, area: &Bounds, threshold: f64, found: &mut Vec<u32>) {
        let meets = |index: usize| {
            self.boxes.get(index).is_some_and(|bounds| {
                bounds.min_x <= area.max_x
                    && area.min_x <= bounds.max_x
                    && bounds.min_y <= area.max_y
                    && area.min_y <= bounds.max_y
            }) && self
                .significance
                .get(index)
                .is_some_and(|&value| f64::from(value) > threshold)
        };
        let levels = self.level_starts.len().saturating_sub(1);
        let Some(&root) = self.level_starts.get(levels.saturating_sub(1)) else {
            return;
        };
        if levels == 0 || !meets(root) {
            return;
        }
        // (level, node); level 0 is the leaves.
        let mut stack = vec![(levels - 1, root)];
        while let Some((level, node)) = stack.pop() {
            if level == 0 {
                if let Some(&item) = self.items.get(node) {
                    found.push(item);
                }
                continue;
            }
            let (Some(&start), Some(&below_start), Some(&below_end)) = (
                self.level_starts.get(level),
                self.level_starts.get(level - 1),
                self.level_starts.get(level),
            ) else {
                continue;
            };
            let first = below_start + (node - start) * NODE_SIZE;
            for child in first..(first + NODE_SIZE).min(below_end) {
                if meets(child) {
                    stack.push((level - 1, child));
                }
            }
        }
    }

    /// Bytes held.
    pub(crate) fn approximate_bytes(&self) -> usize {
        self.boxes.capacity() * std::mem::size_of::<Bounds>()
            + self.significance.capacity() * 4
            + self.items.capacity() * 4
    }
}

/// The positions of `boxes` (at most `u32::MAX` of them) sorted by the Hilbert curve position
/// of their centres over the extent of all: boxes near each other on the map come out near
/// each other in the list.
pub(crate) fn hilbert_order(boxes: &[Bounds]) -> Vec<u32> {
    let boxes = boxes
        .get(..boxes.len().min(u32::MAX as usize))
        .unwrap_or_default();
    let Some(extent) = boxes.iter().copied().reduce(|a, b| a.union(&b)) else {
        return Vec::new();
    };
    let side = f64::from((1_u32 << HILBERT_ORDER) - 1);
    let scale = |length: f64| if length > 0.0 { side / length } else { 0.0 };
    let (scale_x, scale_y) = (scale(extent.width()), scale(extent.height()));
    let mut order: Vec<u64> = boxes
        .iter()
        .enumerate()
        .map(|(item, bounds)| {
            let x = ((bounds.min_x + bounds.max_x) / 2.0 - extent.min_x) * scale_x;
            let y = ((bounds.min_y + bounds.max_y) / 2.0 - extent.min_y) * scale_y;
            (u64::from(hilbert(x as u32, y as u32)) << 32) | item as u64
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|key| key as u32).collect()
}

/// Position of (x, y) along the Hilbert curve over a 2^16 x 2^16 grid.
fn hilbert(mut x: u32, mut y: u32) -> u32 {
    let side = 1_u32 << HILBERT_ORDER;
    x = x.min(side - 1);
    y = y.min(side - 1);
    let mut position = 0_u64;
    let mut half = side / 2;
    while half > 0 {
        let right = u32::from(x & half != 0);
        let up = u32::from(y & half != 0);
        position += u64::from(half) * u64::from(half) * u64::from((3 * right) ^ up);
        // Turn the quadrant so the curve inside it starts where the previous one ended.
        if up == 0 {
            if right == 1 {
                x = side - 1 - x;
                y = side - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        half /= 2;
    }
    position as u32
}

/// A square box with its lower left corner at (x, y), for the index tests.
#[cfg(test)]
pub(crate) fn square(x: f64, y: f64, size: f64) -> Bounds {
    Bounds {
        min_x: x,
        min_y: y,
        max_x: x + size,
        max_y: y + size,
    }
}

/// 10,000 small boxes on a 100 x 100 lattice and one huge box over all of them, for the
/// index tests.
#[cfg(test)]
pub(crate) fn lattice_and_one_huge() -> Vec<Bounds> {
    let mut boxes: Vec<Bounds> = (0..10_000)
        .map(|i| square(f64::from(i % 100), f64::from(i / 100), 0.5))
        .collect();
    boxes.push(square(-1000.0, -1000.0, 5000.0));
    boxes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meets(a: &Bounds, b: &Bounds) -> bool {
        a.min_x <= b.max_x && b.min_x <= a.max_x && a.min_y <= b.max_y && b.min_y <= a.max_y
    }

    #[test]
    fn queries_find_exactly_the_boxes_that_meet() {
        let mut boxes = lattice_and_one_huge();
        // Crowded: most boxes in a corner, one far away (a grid's worst case).
        boxes.push(square(1e7, 1e7, 1.0));
        let significance: Vec<f32> = (0..boxes.len()).map(|i| (i % 10) as f32).collect();
        let tree = RTree::build(&boxes, &significance);
        for area in [
            square(10.2, 20.2, 3.0),
            square(-5.0, -5.0, 200.0),
            square(500.0, 500.0, 1.0),
            square(1e7, 1e7, 0.0),
        ] {
            for threshold in [-1.0, 0.0, 4.5, 9.0] {
                let mut found = Vec::new();
                tree.query(&area, threshold, &mut found);
                found.sort_unstable();
                let expected: Vec<u32> = boxes
                    .iter()
                    .enumerate()
                    .filter(|(i, b)| meets(b, &area) && f64::from(significance[*i]) > threshold)
                    .map(|(i, _)| i as u32)
                    .collect();
                assert_eq!(found, expected, "{area:?} above {threshold}");
            }
        }
        let mut found = Vec::new();
        RTree::build(&[], &[]).query(&square(0.0, 0.0, 1.0), -1.0, &mut found);
        RTree::build(&[square(1.0, 1.0, 0.0)], &[1.0]).query(
            &square(0.0, 0.0, 1.0),
            0.0,
            &mut found,
        );
        assert_eq!(found, [0]);
    }

    #[test]
    fn the_hilbert_curve_visits_neighbours_in_turn() {
        let mut cells: Vec<(u32, u32, u32)> = Vec::new();
        for x in 0..8 {
            for y in 0..8 {
                cells.push((hilbert(x << 13, y << 13), x, y));
            }
        }
        cells.sort_unstable();
        for pair in cells.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert_eq!(a.1.abs_diff(b.1) + a.2.abs_diff(b.2), 1, "{a:?} then {b:?}");
        }
    }
}

//! Which elements' bounding boxes hold a point: a packed R-tree, built once, never changed.
//!
//! MIKE meshes are far from uniform: elements of a few metres along a coast and of kilometres
//! offshore, in one file. A uniform grid of buckets (as [`crate::vector`] uses for rectangles)
//! sized for the average element puts hundreds of the small ones in one bucket there, so a
//! point lookup would test them all. A tree adapts to the density instead: boxes are sorted
//! along a Hilbert curve through their centres (neighbours in the sort are neighbours on the
//! map, so the boxes grouped under one parent stay small) and grouped by [`NODE_SIZE`] level
//! by level, as flatbush does. A lookup then tests about `NODE_SIZE` boxes per level, six
//! levels for a million elements, whatever the density.
//!
//! Boxes are stored as `f32`, rounded outwards, which halves the memory and the cache traffic
//! of a lookup; a box a little too large costs one more exact test, never a missed element.

use std::ops::ControlFlow;

use crate::tms::Bounds;

/// Children per tree node: 16 is flatbush's default, a balance between the boxes tested per
/// level and the number of levels.
const NODE_SIZE: usize = 16;

/// The tree.
#[derive(Debug, Clone)]
pub(super) struct PackedTree {
    /// Every level's boxes, leaves first, as `[min_x, min_y, max_x, max_y]`.
    boxes: Vec<[f32; 4]>,
    /// The item of each leaf.
    items: Vec<u32>,
    /// Where each level starts in `boxes`, plus the end of the last (the root) level.
    level_starts: Vec<usize>,
}

/// Scratch space for lookups, reused from one point to the next.
#[derive(Debug, Default)]
pub(super) struct TreeStack {
    /// Tree nodes still to open, as (position in `boxes`, level).
    pending: Vec<(usize, usize)>,
}

impl PackedTree {
    /// Indexes `boxes` (finite, `min <= max`); item `i` is `boxes[i]`.
    pub(super) fn build(boxes: &[Bounds]) -> Self {
        let order = hilbert_order(boxes);
        let mut level: Vec<[f32; 4]> = order
            .iter()
            .filter_map(|&item| boxes.get(item as usize))
            .map(|bounds| outwards(*bounds))
            .collect();
        let mut all = Vec::with_capacity(level.len() + level.len() / (NODE_SIZE - 1) + 1);
        let mut level_starts = vec![0];
        loop {
            all.extend_from_slice(&level);
            level_starts.push(all.len());
            if level.len() <= 1 {
                break;
            }
            level = level.chunks(NODE_SIZE).map(union).collect();
        }
        Self {
            boxes: all,
            items: order,
            level_starts,
        }
    }

    /// Calls `found` with each item whose box holds `(x, y)`, edges included, until it breaks.
    /// The order is the tree's, not the items'.
    pub(super) fn visit(
        &self,
        x: f64,
        y: f64,
        stack: &mut TreeStack,
        mut found: impl FnMut(u32) -> ControlFlow<()>,
    ) {
        let holds = |bounds: &[f32; 4]| {
            f64::from(bounds[0]) <= x
                && x <= f64::from(bounds[2])
                && f64::from(bounds[1]) <= y
                && y <= f64::from(bounds[3])
        };
        let pending = &mut stack.pending;
        pending.clear();
        let top = self.level_starts.len().saturating_sub(2);
        if let Some(root) = self.level_starts.get(top)
            && self.boxes.get(*root).is_some_and(holds)
        {
            pending.push((*root, top));
        }
        while let Some((position, level)) = pending.pop() {
            if level == 0 {
                if let Some(&item) = self.items.get(position)
                    && found(item).is_break()
                {
                    return;
                }
                continue;
            }
            // Level `level` starts where the level below it ends.
            let (Some(&below_start), Some(&start)) = (
                self.level_starts.get(level - 1),
                self.level_starts.get(level),
            ) else {
                continue;
            };
            let first = below_start + (position - start) * NODE_SIZE;
            let last = (first + NODE_SIZE).min(start);
            let children = self.boxes.get(first..last).unwrap_or_default();
            for (child, bounds) in (first..).zip(children) {
                if !holds(bounds) {
                    continue;
                }
                if level > 1 {
                    pending.push((child, level - 1));
                } else if let Some(&item) = self.items.get(child)
                    && found(item).is_break()
                {
                    return;
                }
            }
        }
    }

    /// Bytes held.
    pub(super) fn approximate_bytes(&self) -> usize {
        self.boxes.capacity() * std::mem::size_of::<[f32; 4]>()
            + self.items.capacity() * std::mem::size_of::<u32>()
            + self.level_starts.capacity() * std::mem::size_of::<usize>()
    }
}

/// The items ordered along a Hilbert curve through their box centres (ties by item).
fn hilbert_order(boxes: &[Bounds]) -> Vec<u32> {
    let Some(extent) = boxes.iter().copied().reduce(|a, b| a.union(&b)) else {
        return Vec::new();
    };
    let Bounds {
        min_x,
        min_y,
        max_x,
        max_y,
    } = extent;
    // Centres are placed on a 65536 x 65536 lattice over the extent; a flat extent gets
    // scale 0, putting every centre in one column (or row), which is still a valid order.
    let scale = |span: f64| {
        if span > 0.0 {
            f64::from(u16::MAX) / span
        } else {
            0.0
        }
    };
    let (scale_x, scale_y) = (scale(max_x - min_x), scale(max_y - min_y));
    let mut keyed: Vec<(u32, u32)> = boxes
        .iter()
        .zip(0_u32..)
        .map(|(bounds, item)| {
            let centre_x = (bounds.min_x + bounds.max_x) / 2.0;
            let centre_y = (bounds.min_y + bounds.max_y) / 2.0;
            // `as` saturates, so any rounding past the lattice stays on its edge.
            let column = ((centre_x - min_x) * scale_x) as u16;
            let row = ((centre_y - min_y) * scale_y) as u16;
            (hilbert_distance(column, row), item)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, item)| item).collect()
}

/// The distance along the Hilbert curve of order 16 of lattice point `(x, y)`: at each scale,
/// from the largest down, the quadrant adds its share and the point is turned into the
/// quadrant's own frame (swapped or mirrored) so the curve continues unbroken.
fn hilbert_distance(x: u16, y: u16) -> u32 {
    let (mut x, mut y) = (u32::from(x), u32::from(y));
    let mut distance = 0_u32;
    let mut size = 1_u32 << 15;
    while size > 0 {
        let right = u32::from(x & size != 0);
        let upper = u32::from(y & size != 0);
        distance += size * size * ((3 * right) ^ upper);
        if upper == 0 {
            if right == 1 {
                x = 0xFFFF - x;
                y = 0xFFFF - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        size /= 2;
    }
    distance
}

/// The `f32` box that holds `bounds`: each side rounded away from the middle.
fn outwards(bounds: Bounds) -> [f32; 4] {
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
    [
        down(bounds.min_x),
        down(bounds.min_y),
        up(bounds.max_x),
        up(bounds.max_y),
    ]
}

/// The box holding every box of `boxes`.
fn union(boxes: &[[f32; 4]]) -> [f32; 4] {
    boxes.iter().fold(
        [
            f32::INFINITY,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
        ],
        |a, b| {
            [
                a[0].min(b[0]),
                a[1].min(b[1]),
                a[2].max(b[2]),
                a[3].max(b[3]),
            ]
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(min_x: f64, min_y: f64, max_x: f64, max_y: f64) -> Bounds {
        Bounds {
            min_x,
            min_y,
            max_x,
            max_y,
        }
    }

    fn found(tree: &PackedTree, x: f64, y: f64) -> Vec<u32> {
        let mut items = Vec::new();
        tree.visit(x, y, &mut TreeStack::default(), |item| {
            items.push(item);
            ControlFlow::Continue(())
        });
        items.sort_unstable();
        items
    }

    #[test]
    fn lookups_find_exactly_the_boxes_that_hold_the_point() {
        let mut boxes: Vec<Bounds> = (0..10_000)
            .map(|i| {
                let (x, y) = (f64::from(i % 100), f64::from(i / 100));
                // Sizes from 0.1 to 3 so that boxes overlap unevenly.
                let size = 0.1 + f64::from(i % 7) * 0.45;
                bounds(x, y, x + size, y + size)
            })
            .collect();
        boxes.push(bounds(-1000.0, -1000.0, 5000.0, 5000.0));
        let tree = PackedTree::build(&boxes);
        for (x, y) in [
            (10.2, 20.2),
            (0.0, 0.0),
            (99.5, 99.5),
            (50.0, 50.0),
            (3.1, 7.9),
        ] {
            let expected: Vec<u32> = boxes
                .iter()
                .zip(0..)
                .filter(|(b, _)| b.min_x <= x && x <= b.max_x && b.min_y <= y && y <= b.max_y)
                .map(|(_, item)| item)
                .collect();
            assert_eq!(found(&tree, x, y), expected, "at {x}, {y}");
        }
        assert_eq!(found(&tree, 4000.0, 4000.0), vec![10_000]);
        assert!(found(&tree, 6000.0, 0.0).is_empty());
        assert!(found(&PackedTree::build(&[]), 0.0, 0.0).is_empty());
    }

    #[test]
    fn boxes_are_rounded_outwards_so_no_edge_is_lost() {
        // 0.1 is not an f32; the stored box must still hold it.
        let tree = PackedTree::build(&[bounds(0.1, 6_000_000.1, 0.3, 6_000_000.3)]);
        assert_eq!(found(&tree, 0.1, 6_000_000.1), vec![0]);
        assert_eq!(found(&tree, 0.3, 6_000_000.3), vec![0]);
        let huge = PackedTree::build(&[bounds(-1e300, -1e300, 1e300, 1e300)]);
        assert_eq!(found(&huge, 1e299, -1e299), vec![0]);
    }

    #[test]
    fn the_hilbert_curve_visits_each_cell_once_and_moves_one_step_at_a_time() {
        // Order 16 restricted to the 4 x 4 corner is the order-2 curve.
        let mut cells: Vec<(u32, u16, u16)> = (0..16)
            .map(|i| (hilbert_distance(i % 4, i / 4), i % 4, i / 4))
            .collect();
        cells.sort_unstable();
        let distances: Vec<u32> = cells.iter().map(|cell| cell.0).collect();
        assert_eq!(distances, (0..16).collect::<Vec<_>>());
        for pair in cells.windows(2) {
            let step = pair[0].1.abs_diff(pair[1].1) + pair[0].2.abs_diff(pair[1].2);
            assert_eq!(step, 1, "{pair:?}");
        }
    }
}

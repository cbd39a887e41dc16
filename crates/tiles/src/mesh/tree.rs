//! Which elements' bounding boxes hold a point: a packed R-tree, built once, never changed.
//!
//! MIKE meshes are far from uniform: elements of a few metres along a coast and of kilometres
//! offshore, in one file. A uniform grid of buckets (as [`crate::vector`] uses for rectangles)
//! sized for the average element puts hundreds of the small ones in one bucket there, so a
//! point lookup would test them all. A tree adapts to the density instead: boxes are sorted
//! along a Hilbert curve through their centres (neighbours in the sort are neighbours on the
//! map, so the boxes grouped under one parent stay small) and grouped by [`NODE_SIZE`] level
//! by level, as flatbush does. A lookup opens about seven groups on a million elements,
//! whatever the density.
//!
//! The leaves are the items in Hilbert order, and the caller stores what it keeps per item in
//! that order too, so the items one lookup reads sit together in memory.
//!
//! Each group keeps its boxes as four arrays of `f32` (all minimum x, all minimum y, ...), so
//! the sixteen box tests of a group are a few vector comparisons without branches, and `f32`
//! halves the memory of `f64` (the tree of a million elements takes 17 MB). It stays exact:
//! each box is rounded outwards when stored, and the point is rounded outwards once per lookup
//! (down for the tests against minima, up against maxima), so a box holds the rounded point
//! exactly when it holds the point. A box a little too large costs one more exact test of an
//! element, never a missed one.
//!
//! Measured on a million elements (benches/mesh.rs): a lookup opens about 3.5 groups and
//! tests 1.6 elements per pixel of a whole-mesh tile; there every pixel lands in another
//! element and the time goes to cache misses (box tests are a few per cent of the profile),
//! which neither `f32` groups, nor group sizes of 8 instead of 16, nor reading elements in
//! fixed slots or with their coordinates copied in place changed measurably.

use std::ops::ControlFlow;

use crate::tms::Bounds;

/// Children per tree node: 16 is flatbush's default, a balance between the boxes tested per
/// level and the number of levels, and sixteen `f32` fill a 64-byte cache line.
const NODE_SIZE: usize = 16;

/// The boxes of up to [`NODE_SIZE`] siblings; unused slots hold an empty box (minima +inf,
/// maxima -inf), which holds no point.
#[derive(Debug, Clone, Copy)]
struct Group {
    min_x: [f32; NODE_SIZE],
    min_y: [f32; NODE_SIZE],
    max_x: [f32; NODE_SIZE],
    max_y: [f32; NODE_SIZE],
}

impl Group {
    const EMPTY: Self = Self {
        min_x: [f32::INFINITY; NODE_SIZE],
        min_y: [f32::INFINITY; NODE_SIZE],
        max_x: [f32::NEG_INFINITY; NODE_SIZE],
        max_y: [f32::NEG_INFINITY; NODE_SIZE],
    };

    fn new(boxes: &[[f32; 4]]) -> Self {
        let mut group = Self::EMPTY;
        for (slot, bounds) in boxes.iter().enumerate().take(NODE_SIZE) {
            if let (Some(a), Some(b), Some(c), Some(d)) = (
                group.min_x.get_mut(slot),
                group.min_y.get_mut(slot),
                group.max_x.get_mut(slot),
                group.max_y.get_mut(slot),
            ) {
                [*a, *b, *c, *d] = *bounds;
            }
        }
        group
    }

    /// The box holding every box of the group.
    fn union(&self) -> [f32; 4] {
        let smallest =
            |values: &[f32; NODE_SIZE]| values.iter().copied().fold(f32::INFINITY, f32::min);
        let largest =
            |values: &[f32; NODE_SIZE]| values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        [
            smallest(&self.min_x),
            smallest(&self.min_y),
            largest(&self.max_x),
            largest(&self.max_y),
        ]
    }

    /// Bit `i` set when box `i` holds the point rounded outwards to `low` and `high`.
    fn holding(&self, low: [f32; 2], high: [f32; 2]) -> u32 {
        let mut mask = 0_u32;
        let lanes = self
            .min_x
            .iter()
            .zip(&self.min_y)
            .zip(self.max_x.iter().zip(&self.max_y));
        for (bit, ((min_x, min_y), (max_x, max_y))) in lanes.enumerate() {
            let holds =
                (*min_x <= low[0]) & (*min_y <= low[1]) & (high[0] <= *max_x) & (high[1] <= *max_y);
            mask |= u32::from(holds) << bit;
        }
        mask
    }
}

/// The tree.
#[derive(Debug, Clone)]
pub(super) struct PackedTree {
    /// Every level's groups, leaves first; group `g` of a level holds the boxes of nodes
    /// `16 g ..` of that level, and the union of its boxes is node `g` of the level above.
    groups: Vec<Group>,
    /// Where each level starts in `groups`, plus the end of the last (one group, the root's
    /// children).
    level_starts: Vec<usize>,
}

/// A point rounded outwards to `f32`.
#[derive(Debug, Clone, Copy)]
struct Rounded {
    low: [f32; 2],
    high: [f32; 2],
}

/// Scratch space for lookups, reused from one point to the next.
#[derive(Debug, Default)]
pub(super) struct TreeStack {
    /// Groups still to open, as (group index within its level, level).
    pending: Vec<(usize, usize)>,
}

impl PackedTree {
    /// Indexes `boxes` (finite, `min <= max`), and says which box each leaf holds: leaf `i`
    /// is `boxes[order[i]]`.
    pub(super) fn build(boxes: &[Bounds]) -> (Self, Vec<u32>) {
        let order = hilbert_order(boxes);
        let mut level: Vec<[f32; 4]> = order
            .iter()
            .filter_map(|&item| boxes.get(item as usize))
            .map(|bounds| outwards(*bounds))
            .collect();
        let mut groups = Vec::with_capacity(group_count(level.len()));
        let mut level_starts = vec![0];
        loop {
            let start = groups.len();
            groups.extend(level.chunks(NODE_SIZE).map(Group::new));
            level_starts.push(groups.len());
            let made = groups.get(start..).unwrap_or_default();
            if made.len() <= 1 {
                break;
            }
            level = made.iter().map(Group::union).collect();
        }
        (
            Self {
                groups,
                level_starts,
            },
            order,
        )
    }

    /// Calls `found` with each leaf whose box holds `(x, y)`, edges included, until it breaks;
    /// leaves near leaf `near` come first. Returns the leaf it broke on.
    ///
    /// Consecutive pixel centres are near each other, so the leaf of the previous point is a
    /// good place to start: the search opens the group of `near` first, then the group above
    /// it (skipping the subtree already searched), up to the root, and so mostly reads groups
    /// the previous lookup left in the cache. On the benchmark's zoomed-in tile this took
    /// sampling from 2.1 to 1.6 ms, and the whole-mesh tile from 31 to 28 ms.
    pub(super) fn visit(
        &self,
        [x, y]: [f64; 2],
        near: Option<usize>,
        stack: &mut TreeStack,
        mut found: impl FnMut(usize) -> ControlFlow<()>,
    ) -> Option<usize> {
        let point = Rounded {
            low: [round_down(x), round_down(y)],
            high: [round_up(x), round_up(y)],
        };
        let top = self.level_starts.len().saturating_sub(2);
        let Some(leaf) = near else {
            return self.search((0, top), None, point, stack, &mut found);
        };
        let mut searched = None;
        let mut group = leaf;
        for level in 0..=top {
            group /= NODE_SIZE;
            let broke = self.search((group, level), searched, point, stack, &mut found);
            if broke.is_some() {
                return broke;
            }
            searched = Some(group);
        }
        None
    }

    /// Searches the subtree below `(group, level)` (without its child `skip`, a group of
    /// the level below already searched); returns the leaf `found` broke on.
    fn search(
        &self,
        (group, level): (usize, usize),
        skip: Option<usize>,
        point: Rounded,
        stack: &mut TreeStack,
        found: &mut impl FnMut(usize) -> ControlFlow<()>,
    ) -> Option<usize> {
        let start_group = (group, level);
        let pending = &mut stack.pending;
        pending.clear();
        pending.push(start_group);
        while let Some((group, level)) = pending.pop() {
            let skip = skip.filter(|_| (group, level) == start_group);
            let Some(start) = self.level_starts.get(level) else {
                continue;
            };
            let Some(boxes) = self.groups.get(start + group) else {
                continue;
            };
            let mut mask = boxes.holding(point.low, point.high);
            while mask != 0 {
                let child = group * NODE_SIZE + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                if level == 0 {
                    if found(child).is_break() {
                        return Some(child);
                    }
                } else if Some(child) != skip {
                    pending.push((child, level - 1));
                }
            }
        }
        None
    }

    /// Bytes held.
    pub(super) fn approximate_bytes(&self) -> usize {
        self.groups.capacity() * std::mem::size_of::<Group>()
            + self.level_starts.capacity() * std::mem::size_of::<usize>()
    }
}

/// The number of groups of a tree over `leaves` leaves: each level's nodes in groups of
/// [`NODE_SIZE`], up to a level of one group.
fn group_count(leaves: usize) -> usize {
    let mut total = 0;
    let mut nodes = leaves;
    loop {
        let groups = nodes.div_ceil(NODE_SIZE);
        total += groups;
        if groups <= 1 {
            return total;
        }
        nodes = groups;
    }
}

/// The items ordered along a Hilbert curve through their box centres (ties by item).
fn hilbert_order(boxes: &[Bounds]) -> Vec<u32> {
    let Some(extent) = boxes.iter().copied().reduce(|a, b| a.union(&b)) else {
        return Vec::new();
    };
    // Centres are placed on a 65536 x 65536 lattice over the extent; a flat extent gets
    // scale 0, putting every centre in one column (or row), which is still a valid order.
    let scale = |span: f64| {
        if span > 0.0 {
            f64::from(u16::MAX) / span
        } else {
            0.0
        }
    };
    let (scale_x, scale_y) = (scale(extent.width()), scale(extent.height()));
    let mut keyed: Vec<(u32, u32)> = boxes
        .iter()
        .zip(0_u32..)
        .map(|(bounds, item)| {
            let centre_x = (bounds.min_x + bounds.max_x) / 2.0;
            let centre_y = (bounds.min_y + bounds.max_y) / 2.0;
            // `as` saturates, so any rounding past the lattice stays on its edge.
            let column = ((centre_x - extent.min_x) * scale_x) as u16;
            let row = ((centre_y - extent.min_y) * scale_y) as u16;
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

/// The largest `f32` not above `value` (-inf below the `f32` range).
fn round_down(value: f64) -> f32 {
    let rounded = value as f32;
    if f64::from(rounded) > value {
        rounded.next_down()
    } else {
        rounded
    }
}

/// The smallest `f32` not below `value` (+inf above the `f32` range).
fn round_up(value: f64) -> f32 {
    let rounded = value as f32;
    if f64::from(rounded) < value {
        rounded.next_up()
    } else {
        rounded
    }
}

/// The `f32` box that holds `bounds`.
fn outwards(bounds: Bounds) -> [f32; 4] {
    [
        round_down(bounds.min_x),
        round_down(bounds.min_y),
        round_up(bounds.max_x),
        round_up(bounds.max_y),
    ]
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

    fn found((tree, order): &(PackedTree, Vec<u32>), x: f64, y: f64) -> Vec<u32> {
        let mut all = Vec::new();
        tree.visit([x, y], None, &mut TreeStack::default(), |leaf| {
            all.push(order[leaf]);
            ControlFlow::Continue(())
        });
        // From any leaf, the same leaves, each once.
        for near in [0, order.len() / 2, order.len().saturating_sub(1)] {
            let mut from_near = Vec::new();
            tree.visit([x, y], Some(near), &mut TreeStack::default(), |leaf| {
                from_near.push(order[leaf]);
                ControlFlow::Continue(())
            });
            from_near.sort_unstable();
            let mut sorted = all.clone();
            sorted.sort_unstable();
            assert_eq!(from_near, sorted, "from leaf {near}");
        }
        all.sort_unstable();
        all
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
        // The groups were counted before they were made.
        let (tree, _) = PackedTree::build(&boxes);
        assert_eq!(tree.groups.len(), tree.groups.capacity());
        let one = PackedTree::build(&[bounds(1.0, 1.0, 2.0, 2.0)]);
        assert_eq!(found(&one, 1.5, 2.0), vec![0]);
        assert!(found(&one, 2.5, 2.0).is_empty());
    }

    #[test]
    fn boxes_and_points_are_rounded_outwards_so_no_edge_is_lost() {
        // 0.1 is not an f32; the stored box must still hold it, and only just.
        let tree = PackedTree::build(&[bounds(0.1, 6_000_000.1, 0.3, 6_000_000.3)]);
        assert_eq!(found(&tree, 0.1, 6_000_000.1), vec![0]);
        assert_eq!(found(&tree, 0.3, 6_000_000.3), vec![0]);
        assert!(found(&tree, 0.3, 6_000_001.0).is_empty());
        let huge = PackedTree::build(&[bounds(-1e300, -1e300, 1e300, 1e300)]);
        assert_eq!(found(&huge, 1e299, -1e299), vec![0]);
        // Beyond the f32 range the box grows to infinity: too large, never too small.
        assert_eq!(found(&huge, 1e301, 0.0), vec![0]);
        // A point just outside an f32 box edge, closer than an f32 step.
        let edge = f64::from(1.5_f32);
        let exact = PackedTree::build(&[bounds(0.0, 0.0, edge, edge)]);
        assert!(found(&exact, edge + 1e-12, 1.0).is_empty());
        assert_eq!(found(&exact, edge, 1.0), vec![0]);
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

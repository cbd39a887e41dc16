//! Which elements of a mesh may hold a point, without looking at all of them: a uniform grid
//! of buckets over the extent, built once ([`crate::mesh`] asks it per pixel). Vector tiles use
//! the R-tree of [`super::rtree`] instead, which stays balanced when features crowd together
//! and prunes by size; mesh elements are evenly spread and asked about points, where one
//! bucket lookup without allocation is what counts.
//!
//! Features are small next to a layer in the usual data (parcels, elements of a mesh, river
//! reaches), so each is put in every bucket its bounding box touches; the few that would span
//! more than [`SPREAD_MAX`] buckets (a country outline) are kept aside and tested on every
//! query instead, so one huge feature cannot fill the grid.

use crate::tms::Bounds;

/// Most buckets one feature is put in; larger ones are tested on every query.
const SPREAD_MAX: usize = 64;

/// The index.
#[derive(Debug, Clone)]
pub(crate) struct GridIndex {
    extent: Bounds,
    columns: usize,
    rows: usize,
    cell_width: f64,
    cell_height: f64,
    /// Bucket `b` holds `members[starts[b]..starts[b + 1]]`.
    starts: Vec<u32>,
    members: Vec<u32>,
    large: Vec<u32>,
    boxes: Vec<Bounds>,
}

impl GridIndex {
    /// Indexes features by their bounding boxes (in order: the ids are the positions).
    pub(crate) fn build(boxes: Vec<Bounds>) -> Self {
        let extent = boxes
            .iter()
            .copied()
            .reduce(|a, b| a.union(&b))
            .unwrap_or(Bounds {
                min_x: 0.0,
                min_y: 0.0,
                max_x: 0.0,
                max_y: 0.0,
            });
        // About four features per bucket.
        let side = ((boxes.len() / 4).max(1) as f64)
            .sqrt()
            .ceil()
            .clamp(1.0, 2048.0) as usize;
        let (columns, rows) = (side, side);
        let cell_width = (extent.width() / columns as f64).max(f64::MIN_POSITIVE);
        let cell_height = (extent.height() / rows as f64).max(f64::MIN_POSITIVE);
        let mut index = Self {
            extent,
            columns,
            rows,
            cell_width,
            cell_height,
            starts: Vec::new(),
            members: Vec::new(),
            large: Vec::new(),
            boxes: Vec::new(),
        };
        let (starts, members) = index.fill(&boxes);
        index.starts = starts;
        index.members = members;
        index.boxes = boxes;
        index
    }

    /// Puts each box in the buckets it touches (or aside, when it spreads too far): the
    /// bucket starts and the members, bucket by bucket.
    fn fill(&mut self, boxes: &[Bounds]) -> (Vec<u32>, Vec<u32>) {
        let columns = self.columns;
        let mut counts = vec![0_u32; columns * self.rows + 1];
        let mut placed: Vec<Option<(usize, usize, usize, usize)>> = Vec::with_capacity(boxes.len());
        for (id, bounds) in boxes.iter().enumerate() {
            let (c0, r0, c1, r1) = self.span(bounds);
            if (c1 - c0 + 1) * (r1 - r0 + 1) > SPREAD_MAX {
                self.large.push(id as u32);
                placed.push(None);
                continue;
            }
            placed.push(Some((c0, r0, c1, r1)));
            for row in r0..=r1 {
                for column in c0..=c1 {
                    if let Some(count) = counts.get_mut(row * columns + column) {
                        *count += 1;
                    }
                }
            }
        }
        let mut starts = Vec::with_capacity(counts.len());
        let mut total = 0_u32;
        for count in &counts {
            starts.push(total);
            total += count;
        }
        let mut next = starts.clone();
        let mut members = vec![0_u32; total as usize];
        for (id, span) in placed.iter().enumerate() {
            let Some((c0, r0, c1, r1)) = *span else {
                continue;
            };
            for row in r0..=r1 {
                for column in c0..=c1 {
                    if let Some(slot) = next.get_mut(row * columns + column)
                        && let Some(member) = members.get_mut(*slot as usize)
                    {
                        *member = id as u32;
                        *slot += 1;
                    }
                }
            }
        }
        (starts, members)
    }

    /// Bucket columns and rows `(c0, r0, c1, r1)` a box touches, clamped to the grid.
    fn span(&self, bounds: &Bounds) -> (usize, usize, usize, usize) {
        let column = |x: f64| {
            (((x - self.extent.min_x) / self.cell_width).floor().max(0.0) as usize)
                .min(self.columns - 1)
        };
        let row = |y: f64| {
            (((y - self.extent.min_y) / self.cell_height)
                .floor()
                .max(0.0) as usize)
                .min(self.rows - 1)
        };
        (
            column(bounds.min_x),
            row(bounds.min_y),
            column(bounds.max_x),
            row(bounds.max_y),
        )
    }

    /// Ids of the features whose boxes meet `area` (edges included), ascending. Only the
    /// tests use it: meshes ask for the candidates at a point.
    #[cfg(test)]
    pub(crate) fn query(&self, area: &Bounds) -> Vec<u32> {
        let meets = |bounds: &Bounds| {
            bounds.min_x <= area.max_x
                && area.min_x <= bounds.max_x
                && bounds.min_y <= area.max_y
                && area.min_y <= bounds.max_y
        };
        let mut found: Vec<u32> = self
            .large
            .iter()
            .copied()
            .filter(|&id| self.boxes.get(id as usize).is_some_and(meets))
            .collect();
        if !meets(&self.extent) {
            return found;
        }
        let (c0, r0, c1, r1) = self.span(area);
        for row in r0..=r1 {
            for column in c0..=c1 {
                let bucket = row * self.columns + column;
                let (Some(&start), Some(&end)) =
                    (self.starts.get(bucket), self.starts.get(bucket + 1))
                else {
                    continue;
                };
                for &id in self
                    .members
                    .get(start as usize..end as usize)
                    .unwrap_or_default()
                {
                    if self.boxes.get(id as usize).is_some_and(meets) {
                        found.push(id);
                    }
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Ids of features whose boxes may hold (x, y): the bucket's members and the large ones,
    /// unfiltered and possibly repeated, without allocating. Callers test each.
    pub(crate) fn candidates_at(&self, x: f64, y: f64) -> impl Iterator<Item = u32> + '_ {
        let inside = x >= self.extent.min_x
            && x <= self.extent.max_x
            && y >= self.extent.min_y
            && y <= self.extent.max_y;
        let bucket_members: &[u32] = if inside {
            let point = Bounds {
                min_x: x,
                min_y: y,
                max_x: x,
                max_y: y,
            };
            let (column, row, _, _) = self.span(&point);
            let bucket = row * self.columns + column;
            match (self.starts.get(bucket), self.starts.get(bucket + 1)) {
                (Some(&start), Some(&end)) => self
                    .members
                    .get(start as usize..end as usize)
                    .unwrap_or_default(),
                _ => &[],
            }
        } else {
            &[]
        };
        bucket_members.iter().chain(self.large.iter()).copied()
    }

    /// Bytes held.
    pub(crate) fn approximate_bytes(&self) -> usize {
        (self.starts.len() + self.members.len() + self.large.len()) * 4
            + self.boxes.len() * std::mem::size_of::<Bounds>()
    }
}

#[cfg(test)]
mod tests {
    use super::super::rtree::{lattice_and_one_huge, square};
    use super::*;

    #[test]
    fn queries_find_exactly_the_boxes_that_meet() {
        let boxes = lattice_and_one_huge();
        let index = GridIndex::build(boxes.clone());
        let area = square(10.2, 20.2, 3.0);
        let found = index.query(&area);
        let expected: Vec<u32> = boxes
            .iter()
            .enumerate()
            .filter(|(_, b)| {
                b.min_x <= area.max_x
                    && area.min_x <= b.max_x
                    && b.min_y <= area.max_y
                    && area.min_y <= b.max_y
            })
            .map(|(id, _)| id as u32)
            .collect();
        assert_eq!(found, expected);
        assert!(found.contains(&10_000), "the huge box is found");
        assert_eq!(index.query(&square(500.0, 500.0, 1.0)), vec![10_000]);
        assert!(GridIndex::build(Vec::new()).query(&area).is_empty());
    }
}

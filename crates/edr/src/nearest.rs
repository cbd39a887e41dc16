//! The nearest element centres of a mesh to a point, for trajectories (MIKE IO's
//! `extract_track` takes the element whose centre is nearest) and inverse-distance
//! interpolation (the five nearest centres, as MIKE IO's `interp`). A uniform grid of buckets
//! over the centres, searched ring by ring outwards until no nearer centre can be left.

/// Centres sorted into square buckets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CentreIndex {
    centres: Vec<(f64, f64)>,
    origin: (f64, f64),
    size: f64,
    columns: usize,
    rows: usize,
    /// Start of each bucket's entries in `entries` (one more than the buckets).
    starts: Vec<u32>,
    /// Centre indices, bucket by bucket.
    entries: Vec<u32>,
}

impl CentreIndex {
    /// Indexes `centres` (about two per bucket).
    pub fn build(centres: &[(f64, f64)]) -> Self {
        let finite: Vec<(f64, f64)> = centres
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let Some(&(first_x, first_y)) = finite.first() else {
            return Self::default();
        };
        let (mut x0, mut y0, mut x1, mut y1) = (first_x, first_y, first_x, first_y);
        for &(x, y) in &finite {
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
        let area = ((x1 - x0) * (y1 - y0)).max(f64::MIN_POSITIVE);
        let mut size = (2.0 * area / finite.len() as f64).sqrt();
        if !(size.is_finite() && size > 0.0) {
            size = 1.0;
        }
        let columns = (((x1 - x0) / size).floor() as usize + 1).min(1 << 16);
        let rows = (((y1 - y0) / size).floor() as usize + 1).min(1 << 16);
        let mut index = Self {
            centres: centres.to_vec(),
            origin: (x0, y0),
            size,
            columns,
            rows,
            starts: Vec::new(),
            entries: Vec::new(),
        };
        let mut counts = vec![0_u32; columns * rows + 1];
        let buckets: Vec<Option<usize>> = centres
            .iter()
            .map(|&(x, y)| index.bucket_of(x, y))
            .collect();
        for bucket in buckets.iter().flatten() {
            counts[bucket + 1] += 1;
        }
        for at in 1..counts.len() {
            counts[at] += counts[at - 1];
        }
        let mut next = counts.clone();
        let mut entries = vec![0_u32; counts.last().copied().unwrap_or(0) as usize];
        for (centre, bucket) in buckets.iter().enumerate() {
            if let Some(bucket) = bucket {
                let slot = &mut next[*bucket];
                entries[*slot as usize] = centre as u32;
                *slot += 1;
            }
        }
        index.starts = counts;
        index.entries = entries;
        index
    }

    fn cell_of(&self, x: f64, y: f64) -> (i64, i64) {
        (
            ((x - self.origin.0) / self.size).floor() as i64,
            ((y - self.origin.1) / self.size).floor() as i64,
        )
    }

    fn bucket_of(&self, x: f64, y: f64) -> Option<usize> {
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        let (column, row) = self.cell_of(x, y);
        let column = usize::try_from(column)
            .ok()?
            .min(self.columns.saturating_sub(1));
        let row = usize::try_from(row).ok()?.min(self.rows.saturating_sub(1));
        Some(row * self.columns + column)
    }

    /// The `count` centres nearest to `(x, y)`, nearest first (the lower index first among
    /// equally near ones), with their distances.
    pub fn nearest(&self, x: f64, y: f64, count: usize) -> Vec<(usize, f64)> {
        let mut best: Vec<(usize, f64)> = Vec::with_capacity(count + 1);
        if count == 0 || self.entries.is_empty() || !(x.is_finite() && y.is_finite()) {
            return best;
        }
        let (column, row) = self.cell_of(x, y);
        let (columns, rows) = (self.columns as i64, self.rows as i64);
        let column = column.clamp(0, columns - 1);
        let row = row.clamp(0, rows - 1);
        for ring in 0..=columns.max(rows) {
            for (c, r) in ring_cells(column, row, ring, (columns, rows)) {
                let bucket = (r * columns + c) as usize;
                let (start, end) = (
                    self.starts[bucket] as usize,
                    self.starts[bucket + 1] as usize,
                );
                for &centre in &self.entries[start..end] {
                    let (cx, cy) = self.centres[centre as usize];
                    consider(&mut best, count, centre as usize, (cx - x).hypot(cy - y));
                }
            }
            // Every centre not yet seen lies outside the block of rings 0..=ring.
            let block_x0 = self.origin.0 + (column - ring) as f64 * self.size;
            let block_x1 = self.origin.0 + (column + ring + 1) as f64 * self.size;
            let block_y0 = self.origin.1 + (row - ring) as f64 * self.size;
            let block_y1 = self.origin.1 + (row + ring + 1) as f64 * self.size;
            let reach = (x - block_x0)
                .min(block_x1 - x)
                .min(y - block_y0)
                .min(block_y1 - y);
            let covers_every_bucket = column - ring <= 0
                && row - ring <= 0
                && column + ring >= columns - 1
                && row + ring >= rows - 1;
            if covers_every_bucket
                || (best.len() == count && best.last().is_some_and(|(_, far)| *far <= reach))
            {
                break;
            }
        }
        best
    }
}

/// The cells of ring `ring` (Chebyshev distance) around `(column, row)` that lie within
/// `columns` x `rows` buckets.
fn ring_cells(column: i64, row: i64, ring: i64, (columns, rows): (i64, i64)) -> Vec<(i64, i64)> {
    if ring == 0 {
        return vec![(column, row)];
    }
    let inside = |(c, r): &(i64, i64)| *c >= 0 && *r >= 0 && *c < columns && *r < rows;
    let mut cells = Vec::new();
    let (left, right) = ((column - ring).max(0), (column + ring).min(columns - 1));
    for r in [row - ring, row + ring] {
        if (0..rows).contains(&r) {
            cells.extend((left..=right).map(|c| (c, r)));
        }
    }
    let (bottom, top) = ((row - ring + 1).max(0), (row + ring - 1).min(rows - 1));
    for c in [column - ring, column + ring] {
        if (0..columns).contains(&c) {
            cells.extend((bottom..=top).map(|r| (c, r)));
        }
    }
    cells.retain(inside);
    cells
}

/// Keeps the `count` nearest, sorted by distance then index.
fn consider(best: &mut Vec<(usize, f64)>, count: usize, centre: usize, distance: f64) {
    let key = |entry: &(usize, f64)| (entry.1, entry.0);
    let place = best
        .iter()
        .position(|entry| key(&(centre, distance)) < key(entry))
        .unwrap_or(best.len());
    if place < count {
        best.insert(place, (centre, distance));
        best.truncate(count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_centres_match_a_brute_force_search() {
        let mut state = 12_345_u64;
        let mut random = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / (1_u64 << 53) as f64
        };
        let centres: Vec<(f64, f64)> = (0..2000)
            .map(|_| (random() * 1000.0, random() * 300.0))
            .collect();
        let index = CentreIndex::build(&centres);
        for _ in 0..200 {
            let (x, y) = (random() * 1400.0 - 200.0, random() * 700.0 - 200.0);
            let mut all: Vec<(usize, f64)> = centres
                .iter()
                .enumerate()
                .map(|(at, (cx, cy))| (at, (cx - x).hypot(cy - y)))
                .collect();
            all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            all.truncate(5);
            assert_eq!(index.nearest(x, y, 5), all, "at ({x}, {y})");
        }
        assert!(CentreIndex::build(&[]).nearest(0.0, 0.0, 3).is_empty());
        assert_eq!(
            CentreIndex::build(&[(1.0, 1.0)]).nearest(5.0, 1.0, 3),
            [(0, 4.0)]
        );
    }
}

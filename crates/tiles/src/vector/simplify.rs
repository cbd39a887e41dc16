//! Douglas-Peucker for every zoom at once: each vertex gets an importance when the layer is
//! built, and a tile keeps the vertices whose importance exceeds its tolerance.
//!
//! Douglas-Peucker splits a range at its farthest vertex when that vertex is farther than the
//! tolerance from the chord. Run with a tolerance of zero, it records the distance at which
//! each vertex was chosen; capping a vertex's value at its parent's makes the values nested,
//! so "importance > tolerance" selects exactly the vertices Douglas-Peucker with that tolerance
//! keeps, for any tolerance. The layer stores one `f32` per vertex (squared metres in
//! EPSG:3857), and simplifying a feature for a tile becomes a filter instead of a search, the
//! same at every zoom and in every tile it crosses, so neighbouring tiles agree on where a
//! simplified edge runs.
//!
//! Douglas-Peucker costs O(n log n) on cartographic lines but O(n^2) on crafted ones (each
//! split peeling off one vertex). Each line gets a budget of [`WORK_PER_POINT_MAX`] distance
//! computations per vertex; ranges left when it runs out keep their vertices whenever their
//! parent is kept. Such a line is simplified less, never wrongly, and a hostile million-vertex
//! ring costs about a second, not hours.

use super::clip::Point;

/// Distance computations per vertex before a line stops being refined: balanced splitting
/// needs about log2(n) (20 for a million vertices); this leaves room for lopsided real data.
pub(crate) const WORK_PER_POINT_MAX: usize = 64;

/// Appends the importance of each point of `line` to `out`: squared distances in the line's
/// units, infinite for the two ends (a ring is passed closed, its first point repeated last).
pub(crate) fn importance(line: &[Point], out: &mut Vec<f32>) {
    let start = out.len();
    out.resize(start + line.len(), 0.0);
    let Some(values) = out.get_mut(start..) else {
        return;
    };
    if let Some(first) = values.first_mut() {
        *first = f32::INFINITY;
    }
    if let Some(last) = values.last_mut() {
        *last = f32::INFINITY;
    }
    if line.len() < 3 {
        return;
    }
    let mut budget = line.len().saturating_mul(WORK_PER_POINT_MAX);
    let mut stack = vec![(0_usize, line.len() - 1, f32::INFINITY)];
    while let Some((first, last, cap)) = stack.pop() {
        let (Some(&a), Some(&b), Some(inner)) =
            (line.get(first), line.get(last), line.get(first + 1..last))
        else {
            continue;
        };
        if budget < inner.len() {
            if let Some(rest) = values.get_mut(first + 1..last) {
                rest.fill(cap);
            }
            continue;
        }
        budget -= inner.len();
        let mut farthest = 0;
        let mut distance = -1.0;
        for (offset, &point) in inner.iter().enumerate() {
            let d = segment_distance_squared(point, a, b);
            if d > distance {
                distance = d;
                farthest = offset;
            }
        }
        if distance <= 0.0 {
            continue;
        }
        let value = (distance as f32).min(cap);
        let split = first + 1 + farthest;
        if let Some(slot) = values.get_mut(split) {
            *slot = value;
        }
        if split - first > 1 {
            stack.push((first, split, value));
        }
        if last - split > 1 {
            stack.push((split, last, value));
        }
    }
}

fn segment_distance_squared(point: Point, a: Point, b: Point) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let length = dx * dx + dy * dy;
    let t = if length > 0.0 {
        (((point[0] - a[0]) * dx + (point[1] - a[1]) * dy) / length).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (x, y) = (a[0] + t * dx - point[0], a[1] + t * dy - point[1]);
    x * x + y * y
}

/// The tolerance (squared, as importances are) at and above which a closed ring keeps fewer
/// than three vertices and so has no area: its third-largest importance. The repeated closing
/// point is not counted.
pub(crate) fn ring_significance(importance: &[f32]) -> f32 {
    let distinct = importance.split_last().map_or(&[][..], |(_, rest)| rest);
    let mut top = [0.0_f32; 3];
    for &value in distinct {
        if value > top[2] {
            top[2] = value;
            if top[2] > top[1] {
                top.swap(1, 2);
                if top[1] > top[0] {
                    top.swap(0, 1);
                }
            }
        }
    }
    top[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(line: &[Point], tolerance: f64) -> Vec<Point> {
        let mut values = Vec::new();
        importance(line, &mut values);
        let squared = (tolerance * tolerance) as f32;
        line.iter()
            .zip(values)
            .filter(|(_, value)| *value > squared)
            .map(|(point, _)| *point)
            .collect()
    }

    /// Douglas-Peucker, recursive, straight from its definition.
    fn reference(line: &[Point], tolerance: f64) -> Vec<Point> {
        fn split(line: &[Point], first: usize, last: usize, tolerance: f64, keep: &mut [bool]) {
            let mut best = (0.0, first);
            for index in first + 1..last {
                let d = segment_distance_squared(line[index], line[first], line[last]);
                if d > best.0 {
                    best = (d, index);
                }
            }
            if best.0 > tolerance * tolerance {
                keep[best.1] = true;
                split(line, first, best.1, tolerance, keep);
                split(line, best.1, last, tolerance, keep);
            }
        }
        let mut keep = vec![false; line.len()];
        keep[0] = true;
        keep[line.len() - 1] = true;
        split(line, 0, line.len() - 1, tolerance, &mut keep);
        line.iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(p, _)| *p)
            .collect()
    }

    #[test]
    fn simplification_keeps_corners_and_drops_noise() {
        let line: Vec<Point> = (0..=100)
            .map(|i| [f64::from(i), if i % 2 == 0 { 0.0 } else { 0.2 }])
            .collect();
        assert_eq!(kept(&line, 0.5), vec![[0.0, 0.0], [100.0, 0.0]]);
        assert_eq!(kept(&line, 0.1).len(), 101);
        let corner = [[0.0, 0.0], [5.0, 0.1], [10.0, 0.0], [10.0, 10.0]];
        assert_eq!(
            kept(&corner, 0.5),
            vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]]
        );
    }

    #[test]
    fn importance_selects_what_douglas_peucker_keeps_at_every_tolerance() {
        let mut state = 7_u64;
        let mut random = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as f64 / f64::from(1_u32 << 31)
        };
        for _ in 0..50 {
            let mut line: Vec<Point> = (0..200)
                .map(|i| [f64::from(i) + random(), 30.0 * random()])
                .collect();
            line.push(line[0]);
            for tolerance in [0.01, 0.3, 1.0, 2.5, 7.0, 20.0] {
                assert_eq!(kept(&line, tolerance), reference(&line, tolerance));
            }
        }
    }

    #[test]
    fn a_ring_collapses_when_its_third_vertex_goes() {
        // A square of side 10, closed: the first point and the opposite corner are the two
        // anchors, the other corners are 10/sqrt(2) from that diagonal.
        let ring = [
            [0.0, 0.0],
            [10.0, 0.0],
            [10.0, 10.0],
            [0.0, 10.0],
            [0.0, 0.0],
        ];
        let mut values = Vec::new();
        importance(&ring, &mut values);
        let significance = ring_significance(&values);
        assert!(
            (f64::from(significance) - 50.0).abs() < 1e-4,
            "{significance}"
        );
        assert_eq!(kept(&ring, 7.0).len(), 5);
        assert_eq!(
            kept(&ring, 7.1).len(),
            3,
            "the first point twice and the far corner"
        );
    }

    #[test]
    fn crafted_lines_do_not_take_quadratic_time() {
        // A zigzag whose swings shrink along the line: the widest swing left is always next
        // to the start of the range, so each split peels off one vertex.
        let line: Vec<Point> = (0..1_000_000)
            .map(|i| {
                let swing = (1.0 - 1e-6_f64).powi(i);
                [f64::from(i), if i % 2 == 0 { swing } else { -swing }]
            })
            .collect();
        let started = std::time::Instant::now();
        let mut values = Vec::new();
        importance(&line, &mut values);
        assert_eq!(values.len(), line.len());
        assert!(started.elapsed().as_secs() < 30);
        let long: Vec<Point> = (0..1_000_000)
            .map(|i| [f64::from(i), f64::from(i % 7)])
            .collect();
        assert!(kept(&long, 10.0).len() < 10);
    }
}

//! Geometry in tile coordinates: simplification, clipping to the buffered tile, snapping to
//! the integer grid and ring orientation.
//!
//! Order matters for speed and validity: a feature is simplified first (a coastline of a
//! million vertices becomes a few hundred at low zoom before anything else touches it), then
//! clipped (so the cut edges stay straight), then snapped to integers, where repeated points
//! are dropped and rings that collapsed are removed. Clipping is Sutherland-Hodgman for rings,
//! which may leave zero-width slivers along the buffer edge; those lie outside the visible tile,
//! which is why the buffer exists.

/// A position in tile units (before snapping).
pub(crate) type Point = [f64; 2];

/// A snapped position.
pub(crate) type Snapped = [i32; 2];

/// Douglas-Peucker: the points of `line` that keep it within `tolerance` of the original.
/// The first and last points always stay. Iterative, so a million vertices need no deep stack.
pub(crate) fn simplify(line: &[Point], tolerance: f64) -> Vec<Point> {
    if line.len() <= 2 || tolerance <= 0.0 {
        return line.to_vec();
    }
    let mut keep = vec![false; line.len()];
    let last = line.len() - 1;
    if let Some(flag) = keep.first_mut() {
        *flag = true;
    }
    if let Some(flag) = keep.last_mut() {
        *flag = true;
    }
    let squared = tolerance * tolerance;
    let mut stack = vec![(0_usize, last)];
    while let Some((first, end)) = stack.pop() {
        if end <= first + 1 {
            continue;
        }
        let (Some(&a), Some(&b)) = (line.get(first), line.get(end)) else {
            continue;
        };
        let mut farthest = first;
        let mut distance = -1.0;
        for (index, point) in line.iter().enumerate().take(end).skip(first + 1) {
            let d = segment_distance_squared(*point, a, b);
            if d > distance {
                distance = d;
                farthest = index;
            }
        }
        if distance > squared {
            if let Some(flag) = keep.get_mut(farthest) {
                *flag = true;
            }
            stack.push((first, farthest));
            stack.push((farthest, end));
        }
    }
    line.iter()
        .zip(keep)
        .filter_map(|(point, kept)| kept.then_some(*point))
        .collect()
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

/// Clips a closed ring (first point not repeated at the end) to the square `low..=high` on
/// both axes.
pub(crate) fn clip_ring(ring: &[Point], low: f64, high: f64) -> Vec<Point> {
    let inside_all = ring
        .iter()
        .all(|p| p[0] >= low && p[0] <= high && p[1] >= low && p[1] <= high);
    if inside_all {
        return ring.to_vec();
    }
    let mut current = ring.to_vec();
    for edge in 0..4 {
        if current.is_empty() {
            break;
        }
        let inside = |p: &Point| match edge {
            0 => p[0] >= low,
            1 => p[0] <= high,
            2 => p[1] >= low,
            _ => p[1] <= high,
        };
        let cross = |a: &Point, b: &Point| match edge {
            0 | 1 => {
                let bound = if edge == 0 { low } else { high };
                let t = (bound - a[0]) / (b[0] - a[0]);
                [bound, a[1] + t * (b[1] - a[1])]
            }
            _ => {
                let bound = if edge == 2 { low } else { high };
                let t = (bound - a[1]) / (b[1] - a[1]);
                [a[0] + t * (b[0] - a[0]), bound]
            }
        };
        let mut next = Vec::with_capacity(current.len() + 4);
        let mut previous = match current.last() {
            Some(point) => *point,
            None => break,
        };
        for point in &current {
            match (inside(&previous), inside(point)) {
                (true, true) => next.push(*point),
                (true, false) => next.push(cross(&previous, point)),
                (false, true) => {
                    next.push(cross(&previous, point));
                    next.push(*point);
                }
                (false, false) => {}
            }
            previous = *point;
        }
        current = next;
    }
    current
}

/// Clips a line to the square `low..=high`: the pieces inside, in order.
pub(crate) fn clip_line(line: &[Point], low: f64, high: f64) -> Vec<Vec<Point>> {
    let mut pieces = Vec::new();
    let mut piece: Vec<Point> = Vec::new();
    for pair in line.windows(2) {
        let &[a, b] = pair else {
            continue;
        };
        match clip_segment(a, b, low, high) {
            Some((start, end)) => {
                if piece.last() != Some(&start) {
                    if piece.len() >= 2 {
                        pieces.push(std::mem::take(&mut piece));
                    }
                    piece.clear();
                    piece.push(start);
                }
                piece.push(end);
                if end != b {
                    pieces.push(std::mem::take(&mut piece));
                }
            }
            None => {
                if piece.len() >= 2 {
                    pieces.push(std::mem::take(&mut piece));
                }
                piece.clear();
            }
        }
    }
    if piece.len() >= 2 {
        pieces.push(piece);
    }
    pieces
}

/// Liang-Barsky: the part of segment a-b inside the square, if any.
fn clip_segment(a: Point, b: Point, low: f64, high: f64) -> Option<(Point, Point)> {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let mut t0 = 0.0_f64;
    let mut t1 = 1.0_f64;
    for (p, q) in [
        (-dx, a[0] - low),
        (dx, high - a[0]),
        (-dy, a[1] - low),
        (dy, high - a[1]),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| {
        if t == 0.0 {
            a
        } else if t == 1.0 {
            b
        } else {
            [a[0] + t * dx, a[1] + t * dy]
        }
    };
    Some((at(t0), at(t1)))
}

/// Rounds to the integer grid and drops repeated positions.
pub(crate) fn snap(points: &[Point]) -> Vec<Snapped> {
    let mut out: Vec<Snapped> = Vec::with_capacity(points.len());
    for point in points {
        let snapped = [point[0].round() as i32, point[1].round() as i32];
        if out.last() != Some(&snapped) {
            out.push(snapped);
        }
    }
    out
}

/// Twice the signed area of a ring by the surveyor's formula (positive: clockwise on screen,
/// with y down, which MVT 2.1 asks of exterior rings).
pub(crate) fn doubled_area(ring: &[Snapped]) -> i64 {
    let mut sum = 0_i64;
    for (index, a) in ring.iter().enumerate() {
        let b = ring.get((index + 1) % ring.len()).unwrap_or(a);
        sum += i64::from(a[0]) * i64::from(b[1]) - i64::from(b[0]) * i64::from(a[1]);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplification_keeps_corners_and_drops_noise() {
        let line: Vec<Point> = (0..=100)
            .map(|i| [f64::from(i), if i % 2 == 0 { 0.0 } else { 0.2 }])
            .collect();
        assert_eq!(simplify(&line, 0.5), vec![[0.0, 0.0], [100.0, 0.0]]);
        let corner = [[0.0, 0.0], [5.0, 0.1], [10.0, 0.0], [10.0, 10.0]];
        assert_eq!(
            simplify(&corner, 0.5),
            vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]]
        );
        let long: Vec<Point> = (0..1_000_000)
            .map(|i| [f64::from(i), f64::from(i % 7)])
            .collect();
        assert!(simplify(&long, 10.0).len() < 10);
    }

    #[test]
    fn rings_are_cut_at_the_square() {
        let square = [[-10.0, -10.0], [20.0, -10.0], [20.0, 20.0], [-10.0, 20.0]];
        let clipped = clip_ring(&square, 0.0, 10.0);
        let snapped = snap(&clipped);
        assert_eq!(doubled_area(&snapped).abs(), 200);
        assert!(
            snapped
                .iter()
                .all(|p| (0..=10).contains(&p[0]) && (0..=10).contains(&p[1]))
        );
        assert!(clip_ring(&[[20.0, 20.0], [30.0, 20.0], [30.0, 30.0]], 0.0, 10.0).is_empty());
    }

    #[test]
    fn lines_are_cut_into_pieces() {
        let line = [
            [-5.0, 5.0],
            [5.0, 5.0],
            [15.0, 5.0],
            [15.0, 6.0],
            [5.0, 6.0],
            [5.0, 7.0],
        ];
        let pieces = clip_line(&line, 0.0, 10.0);
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert_eq!(pieces[0], vec![[0.0, 5.0], [5.0, 5.0], [10.0, 5.0]]);
        assert_eq!(pieces[1], vec![[10.0, 6.0], [5.0, 6.0], [5.0, 7.0]]);
        assert!(clip_line(&[[20.0, 0.0], [30.0, 0.0]], 0.0, 10.0).is_empty());
    }

    #[test]
    fn orientation_follows_the_screen() {
        // On screen (y down), this goes right, down, left: clockwise, positive.
        let clockwise = [[0, 0], [10, 0], [10, 10], [0, 10]];
        assert!(doubled_area(&clockwise) > 0);
        let mut counter = clockwise;
        counter.reverse();
        assert!(doubled_area(&counter) < 0);
    }
}

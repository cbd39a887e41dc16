//! Geometry in tile units: clipping to the buffered tile, snapping to the integer grid, and
//! the cleaning that keeps polygons valid once snapped.
//!
//! Rings are clipped with Sutherland-Hodgman against the four sides in turn. Where a concave
//! ring leaves and re-enters the square, that algorithm runs along the side and back, leaving
//! a zero-width spike; after snapping, [`snap_ring`] removes every vertex that is collinear
//! with its neighbours, which deletes such spikes (and the repeated points snapping makes)
//! without moving any edge. A ring with fewer than three vertices left, or with no area, has
//! collapsed and the caller drops it. Lines are cut per segment (Liang-Barsky) into the pieces
//! inside. All buffers are the caller's, so a tile of 10,000 features allocates a handful of
//! times, not 10,000.

/// A position in tile units (before snapping).
pub(crate) type Point = [f64; 2];

/// A snapped position.
pub(crate) type Snapped = [i32; 2];

/// One side of the clipping square.
#[derive(Clone, Copy)]
enum Side {
    Left,
    Right,
    Top,
    Bottom,
}

impl Side {
    fn inside(self, point: Point, low: f64, high: f64) -> bool {
        match self {
            Side::Left => point[0] >= low,
            Side::Right => point[0] <= high,
            Side::Top => point[1] >= low,
            Side::Bottom => point[1] <= high,
        }
    }

    /// Where a-b crosses the side (a and b are on either side of it, so the divisor is not 0).
    fn crossing(self, a: Point, b: Point, low: f64, high: f64) -> Point {
        match self {
            Side::Left | Side::Right => {
                let bound = if matches!(self, Side::Left) {
                    low
                } else {
                    high
                };
                let t = (bound - a[0]) / (b[0] - a[0]);
                [bound, a[1] + t * (b[1] - a[1])]
            }
            Side::Top | Side::Bottom => {
                let bound = if matches!(self, Side::Top) { low } else { high };
                let t = (bound - a[1]) / (b[1] - a[1]);
                [a[0] + t * (b[0] - a[0]), bound]
            }
        }
    }

    fn clip(self, input: &[Point], low: f64, high: f64, output: &mut Vec<Point>) {
        output.clear();
        let Some(&last) = input.last() else {
            return;
        };
        let mut previous = last;
        let mut previous_inside = self.inside(previous, low, high);
        for &point in input {
            let inside = self.inside(point, low, high);
            if inside != previous_inside {
                output.push(self.crossing(previous, point, low, high));
            }
            if inside {
                output.push(point);
            }
            previous = point;
            previous_inside = inside;
        }
    }
}

/// Clips a ring (first point not repeated at the end) to the square `low..=high`, into `out`;
/// `scratch` is working space.
pub(crate) fn clip_ring(
    ring: &[Point],
    low: f64,
    high: f64,
    out: &mut Vec<Point>,
    scratch: &mut Vec<Point>,
) {
    Side::Left.clip(ring, low, high, scratch);
    Side::Right.clip(scratch, low, high, out);
    Side::Top.clip(out, low, high, scratch);
    Side::Bottom.clip(scratch, low, high, out);
}

/// Clips a line to the square `low..=high`: the pieces inside, in order, as ranges of `out`.
pub(crate) fn clip_line(
    line: &[Point],
    low: f64,
    high: f64,
    out: &mut Vec<Point>,
    pieces: &mut Vec<(usize, usize)>,
) {
    out.clear();
    pieces.clear();
    let mut start = 0;
    for pair in line.windows(2) {
        let &[a, b] = pair else {
            continue;
        };
        let Some((from, to)) = clip_segment(a, b, low, high) else {
            end_piece(out, &mut start, pieces);
            continue;
        };
        if out.len() == start || out.last() != Some(&from) {
            end_piece(out, &mut start, pieces);
            out.push(from);
        }
        out.push(to);
        if to != b {
            end_piece(out, &mut start, pieces);
        }
    }
    end_piece(out, &mut start, pieces);
}

/// Closes the piece that began at `start`: kept when it has two points, else forgotten.
fn end_piece(out: &mut Vec<Point>, start: &mut usize, pieces: &mut Vec<(usize, usize)>) {
    if out.len() >= *start + 2 {
        pieces.push((*start, out.len()));
    } else {
        out.truncate(*start);
    }
    *start = out.len();
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
        if t <= 0.0 {
            a
        } else if t >= 1.0 {
            b
        } else {
            [a[0] + t * dx, a[1] + t * dy]
        }
    };
    Some((at(t0), at(t1)))
}

/// The nearest grid position. Callers pass points inside the clipped square, far inside
/// `i32`; the cast saturates anyway.
pub(crate) fn snap(point: Point) -> Snapped {
    [point[0].round() as i32, point[1].round() as i32]
}

/// Snaps a line into `out`, dropping repeated positions.
pub(crate) fn snap_line(points: &[Point], out: &mut Vec<Snapped>) {
    out.clear();
    for &point in points {
        let snapped = snap(point);
        if out.last() != Some(&snapped) {
            out.push(snapped);
        }
    }
}

/// Twice the cross product of (b - a) and (c - b): zero when the three are collinear.
fn turn(a: Snapped, b: Snapped, c: Snapped) -> i64 {
    let (abx, aby) = (
        i64::from(b[0]) - i64::from(a[0]),
        i64::from(b[1]) - i64::from(a[1]),
    );
    let (bcx, bcy) = (
        i64::from(c[0]) - i64::from(b[0]),
        i64::from(c[1]) - i64::from(b[1]),
    );
    abx * bcy - aby * bcx
}

/// Snaps a ring (first point not repeated at the end) into `out` and cleans it: no repeated
/// positions, no vertex collinear with its neighbours (which removes spikes), around the
/// closing seam too. `out` may end with fewer than three points: the ring collapsed.
pub(crate) fn snap_ring(points: &[Point], out: &mut Vec<Snapped>) {
    out.clear();
    for &point in points {
        push_cleaned(out, snap(point));
    }
    clean_seam(out);
}

fn push_cleaned(out: &mut Vec<Snapped>, point: Snapped) {
    while let [.., a, b] = out.as_slice() {
        if turn(*a, *b, point) != 0 {
            break;
        }
        out.pop();
    }
    if out.last() != Some(&point) {
        out.push(point);
    }
}

/// Removes collinear vertices and repeats where the ring's end meets its start.
fn clean_seam(out: &mut Vec<Snapped>) {
    let mut head = 0;
    while let (Some(&first), Some(&last)) = (out.get(head), out.last()) {
        if out.len() - head >= 2 && first == last {
            out.pop();
            continue;
        }
        if out.len() - head < 3 {
            break;
        }
        let (Some(&second), Some(&before_last)) = (out.get(head + 1), out.get(out.len() - 2))
        else {
            break;
        };
        if turn(before_last, last, first) == 0 {
            out.pop();
        } else if turn(last, first, second) == 0 {
            head += 1;
        } else {
            break;
        }
    }
    out.drain(..head);
}

/// Twice the signed area of a ring by the surveyor's formula, as MVT 2.1 computes it: positive
/// for rings that run clockwise on screen (y down), which is what exterior rings must do.
pub(crate) fn doubled_area(ring: &[Snapped]) -> i64 {
    let Some(&last) = ring.last() else {
        return 0;
    };
    let mut previous = last;
    let mut sum = 0_i64;
    for &point in ring {
        sum += i64::from(previous[0]) * i64::from(point[1])
            - i64::from(point[0]) * i64::from(previous[1]);
        previous = point;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_clip(ring: &[Point], low: f64, high: f64) -> Vec<Point> {
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        clip_ring(ring, low, high, &mut out, &mut scratch);
        out
    }

    fn line_clip(line: &[Point], low: f64, high: f64) -> Vec<Vec<Point>> {
        let (mut out, mut pieces) = (Vec::new(), Vec::new());
        clip_line(line, low, high, &mut out, &mut pieces);
        pieces.iter().map(|&(a, b)| out[a..b].to_vec()).collect()
    }

    fn snapped_ring(points: &[Point]) -> Vec<Snapped> {
        let mut out = Vec::new();
        snap_ring(points, &mut out);
        out
    }

    #[test]
    fn rings_are_cut_at_the_square() {
        let square = [[-10.0, -10.0], [20.0, -10.0], [20.0, 20.0], [-10.0, 20.0]];
        let snapped = snapped_ring(&ring_clip(&square, 0.0, 10.0));
        assert_eq!(snapped.len(), 4, "{snapped:?}");
        assert_eq!(doubled_area(&snapped).abs(), 200);
        assert!(
            snapped
                .iter()
                .all(|p| (0..=10).contains(&p[0]) && (0..=10).contains(&p[1]))
        );
        assert!(ring_clip(&[[20.0, 20.0], [30.0, 20.0], [30.0, 30.0]], 0.0, 10.0).is_empty());
        let inner = [[1.0, 1.0], [5.0, 1.0], [5.0, 5.0]];
        assert_eq!(ring_clip(&inner, 0.0, 10.0), inner);
    }

    #[test]
    fn a_ring_that_leaves_and_comes_back_keeps_its_area() {
        // A U whose bar lies below the square: Sutherland-Hodgman joins the two arms along
        // the square's side, a zero-width bridge on the buffer's edge, and the area is right.
        let u = [
            [1.0, -5.0],
            [9.0, -5.0],
            [9.0, 5.0],
            [7.0, 5.0],
            [7.0, -2.0],
            [3.0, -2.0],
            [3.0, 5.0],
            [1.0, 5.0],
        ];
        let snapped = snapped_ring(&ring_clip(&u, 0.0, 10.0));
        assert_eq!(doubled_area(&snapped).abs(), 2 * (2 * 5 + 2 * 5));
        for (index, &point) in snapped.iter().enumerate() {
            let previous = snapped[(index + snapped.len() - 1) % snapped.len()];
            let next = snapped[(index + 1) % snapped.len()];
            assert_ne!(
                turn(previous, point, next),
                0,
                "collinear at {point:?}: {snapped:?}"
            );
        }
        // A sliver thinner than a unit that leaves the square snaps to a spike, which goes.
        let sliver = [
            [1.0, 1.0],
            [5.0, 1.0],
            [5.0, 3.0],
            [20.0, 3.0],
            [20.0, 3.2],
            [5.0, 3.2],
            [5.0, 5.0],
            [1.0, 5.0],
        ];
        let snapped = snapped_ring(&ring_clip(&sliver, 0.0, 10.0));
        assert_eq!(snapped, [[1, 1], [5, 1], [5, 5], [1, 5]]);
    }

    #[test]
    fn snapping_removes_repeats_spikes_and_collapsed_rings() {
        let with_repeats = [[0.0, 0.0], [0.2, 0.1], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]];
        assert_eq!(
            snapped_ring(&with_repeats),
            [[0, 0], [4, 0], [4, 4], [0, 4]]
        );
        let spike = [
            [0.0, 0.0],
            [4.0, 0.0],
            [4.0, 4.0],
            [4.0, 9.0],
            [4.0, 4.0],
            [0.0, 4.0],
        ];
        assert_eq!(snapped_ring(&spike), [[0, 0], [4, 0], [4, 4], [0, 4]]);
        let seam = [
            [2.0, 0.0],
            [4.0, 0.0],
            [4.0, 4.0],
            [0.0, 4.0],
            [0.0, 0.0],
            [1.0, 0.0],
        ];
        let cleaned = snapped_ring(&seam);
        assert_eq!(cleaned.len(), 4, "{cleaned:?}");
        assert_eq!(doubled_area(&cleaned).abs(), 32);
        assert!(snapped_ring(&[[0.0, 0.0], [0.3, 0.2], [0.1, 0.4]]).len() < 3);
        assert!(snapped_ring(&[[0.0, 0.0], [5.0, 5.0], [10.0, 10.0]]).len() < 3);
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
        let pieces = line_clip(&line, 0.0, 10.0);
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert_eq!(pieces[0], vec![[0.0, 5.0], [5.0, 5.0], [10.0, 5.0]]);
        assert_eq!(pieces[1], vec![[10.0, 6.0], [5.0, 6.0], [5.0, 7.0]]);
        assert!(line_clip(&[[20.0, 0.0], [30.0, 0.0]], 0.0, 10.0).is_empty());
        let through = line_clip(&[[-5.0, -5.0], [15.0, 15.0]], 0.0, 10.0);
        assert_eq!(through, [vec![[0.0, 0.0], [10.0, 10.0]]]);
        let inside = [[1.0, 1.0], [2.0, 2.0], [3.0, 1.0]];
        assert_eq!(line_clip(&inside, 0.0, 10.0), [inside.to_vec()]);
        let mut snapped = Vec::new();
        snap_line(&[[1.0, 1.0], [1.2, 1.1], [3.0, 1.0]], &mut snapped);
        assert_eq!(snapped, [[1, 1], [3, 1]]);
    }

    #[test]
    fn orientation_follows_the_screen() {
        // On screen (y down), this goes right, down, left: clockwise, positive.
        let clockwise = [[0, 0], [10, 0], [10, 10], [0, 10]];
        assert_eq!(doubled_area(&clockwise), 200);
        let mut counter = clockwise;
        counter.reverse();
        assert_eq!(doubled_area(&counter), -200);
        assert_eq!(doubled_area(&[]), 0);
    }
}

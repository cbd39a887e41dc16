//! Whether a point is inside an element, on its boundary or outside, decided exactly.
//!
//! Pixel centres of a regular tile land exactly on the edges and corners of regular meshes
//! (a mesh in whole metres drawn at a power-of-two scale), so "on the boundary" must be
//! decided exactly, or a point on the edge two elements share could be outside both and leave
//! a hole. Each test is an orientation (which side of a line a point lies), evaluated by
//! Shewchuk's adaptive exact predicate (the `robust` crate, which spade's triangulation in
//! basin-formats already builds): its sign is always right, so a point on a shared edge is on
//! the boundary of both elements and everywhere else inside exactly one.
//!
//! Any polygon works, convex or not, in either orientation: the point's winding number
//! (Sunday's crossing rule: upward edges with the point on their left count +1, downward
//! edges with it on their right -1) is non-zero exactly inside.

use robust::{Coord, orient2d};

/// Where a point lies relative to an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Position {
    /// Outside.
    Outside,
    /// On an edge or a corner.
    Boundary,
    /// Strictly inside.
    Inside,
}

/// Where `point` lies relative to the polygon through `corners` (closed implicitly; finite
/// coordinates).
pub(super) fn locate(corners: &[[f64; 2]], point: [f64; 2]) -> Position {
    let [x, y] = point;
    let next = corners.iter().skip(1).chain(corners.first());
    let mut winding = 0_i32;
    for (&[ax, ay], &[bx, by]) in corners.iter().zip(next) {
        // The edge crosses the horizontal line through the point (one end on or below it,
        // the other above), or its box holds the point: only then can it matter.
        let crosses = (ay <= y) != (by <= y);
        let beside = ax.min(bx) <= x && x <= ax.max(bx) && ay.min(by) <= y && y <= ay.max(by);
        if !crosses && !beside {
            continue;
        }
        let side = orient2d(
            Coord { x: ax, y: ay },
            Coord { x: bx, y: by },
            Coord { x, y },
        );
        if side == 0.0 {
            // On the edge's line: on the edge itself when inside its box. A crossing edge
            // holds the point in its box whenever the point is on its line.
            if beside {
                return Position::Boundary;
            }
            continue;
        }
        if crosses {
            if ay <= y && side > 0.0 {
                winding += 1;
            } else if by <= y && side < 0.0 {
                winding -= 1;
            }
        }
    }
    if winding == 0 {
        Position::Outside
    } else {
        Position::Inside
    }
}

/// A U shape: the notch between x = 1 and x = 2 above y = 1 is outside.
#[cfg(test)]
pub(super) const U_SHAPE: [[f64; 2]; 8] = [
    [0.0, 0.0],
    [3.0, 0.0],
    [3.0, 3.0],
    [2.0, 3.0],
    [2.0, 1.0],
    [1.0, 1.0],
    [1.0, 3.0],
    [0.0, 3.0],
];

#[cfg(test)]
mod tests {
    use super::*;

    const SQUARE: [[f64; 2]; 4] = [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]];

    #[test]
    fn a_square_holds_its_inside_and_its_edges() {
        assert_eq!(locate(&SQUARE, [1.0, 1.0]), Position::Inside);
        for edge in [
            [1.0, 0.0],
            [2.0, 1.0],
            [1.0, 2.0],
            [0.0, 1.0],
            [0.0, 0.0],
            [2.0, 2.0],
        ] {
            assert_eq!(locate(&SQUARE, edge), Position::Boundary, "{edge:?}");
        }
        for outside in [
            [3.0, 1.0],
            [-1.0, 1.0],
            [1.0, 3.0],
            [1.0, -1.0],
            [3.0, 0.0],
            [3.0, 2.0],
        ] {
            assert_eq!(locate(&SQUARE, outside), Position::Outside, "{outside:?}");
        }
        let clockwise: Vec<[f64; 2]> = SQUARE.iter().rev().copied().collect();
        assert_eq!(locate(&clockwise, [1.0, 1.0]), Position::Inside);
        assert_eq!(locate(&clockwise, [2.0, 0.5]), Position::Boundary);
    }

    #[test]
    fn a_concave_polygon_leaves_its_notch_out() {
        let u = U_SHAPE;
        assert_eq!(locate(&u, [1.5, 2.0]), Position::Outside);
        assert_eq!(locate(&u, [0.5, 2.0]), Position::Inside);
        assert_eq!(locate(&u, [2.5, 2.9]), Position::Inside);
        assert_eq!(locate(&u, [1.5, 1.0]), Position::Boundary);
        assert_eq!(locate(&u, [1.5, 0.5]), Position::Inside);
        // On the horizontal line through a reflex corner.
        assert_eq!(locate(&u, [0.5, 1.0]), Position::Inside);
        assert_eq!(locate(&u, [4.0, 1.0]), Position::Outside);
    }

    #[test]
    fn points_next_to_a_shared_edge_are_in_exactly_one_triangle() {
        // An edge with coordinates no binary fraction holds, and points on and beside it.
        let (a, b): ([f64; 2], [f64; 2]) = ([0.1, 0.2], [700_000.3, 6_100_000.7]);
        let left = [a, b, [-5.0, 6_000_000.0]];
        let right = [b, a, [700_005.0, 0.0]];
        // The corners themselves, and points on or one step beside the edge's inside (near
        // a corner, a step aside may leave both triangles, which meet only at the edge).
        assert_eq!(locate(&left, a), Position::Boundary);
        assert_eq!(locate(&right, b), Position::Boundary);
        for t in [0.25, 0.3, 0.5, 0.7, 0.9] {
            let on = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
            for point in [on, [on[0].next_up(), on[1]], [on[0].next_down(), on[1]]] {
                let sides = [locate(&left, point), locate(&right, point)];
                let holding = sides.iter().filter(|s| **s != Position::Outside).count();
                assert!(
                    holding >= 1,
                    "{point:?} fell between the triangles: {sides:?}"
                );
                if holding == 2 {
                    assert_eq!(sides, [Position::Boundary; 2], "{point:?}");
                }
            }
        }
    }

    #[test]
    fn degenerate_elements_hold_only_their_segment() {
        let flat = [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]];
        assert_eq!(locate(&flat, [0.5, 0.5]), Position::Boundary);
        assert_eq!(locate(&flat, [3.0, 3.0]), Position::Outside);
        assert_eq!(locate(&flat, [1.0, 0.0]), Position::Outside);
        let point = [[1.0, 1.0]; 3];
        assert_eq!(locate(&point, [1.0, 1.0]), Position::Boundary);
        assert_eq!(locate(&point, [1.0, 2.0]), Position::Outside);
    }
}

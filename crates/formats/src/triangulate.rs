//! Triangulation of one polygon (an exterior ring plus holes) for features -> mesh: a
//! constrained Delaunay triangulation (the `spade` crate, exact predicates) of the rings'
//! vertices with every ring edge a constraint, keeping the triangles between the exterior and
//! the holes.
//!
//! No Steiner points are added: every node of the mesh is a vertex of the input, so the mesh
//! keeps the polygon's z values and its outline exactly and neighbouring polygons still share
//! their vertices. The price is slivers where the input has them (a long thin polygon gives
//! long thin triangles); refining is a meshing job, not a conversion's.
//!
//! Which triangles lie inside is decided by walking from the outside of the triangulation
//! across triangle edges, flipping inside/outside at each ring edge, which is linear in the
//! triangles and needs no point-in-polygon test. That is only right for rings that neither
//! cross nor overlap and holes inside the exterior: crossings are caught when their constraint
//! edge cannot be added, and everything else (a hole outside the exterior or inside another
//! hole, rings sharing an edge) by comparing the triangles' total area with the exterior's area
//! minus the holes'.

use spade::{ConstrainedDelaunayTriangulation, Point2, Triangulation};

use crate::model::{Coord, Line};

/// Why a polygon cannot be triangulated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TriangulationError {
    /// A coordinate the triangulation cannot hold.
    #[error(
        "its vertex ({x}, {y}) cannot be triangulated (not a number, or a magnitude above 3.2e60 or below 1.8e-43 other than 0)"
    )]
    Coordinate {
        /// x of the vertex.
        x: f64,
        /// y of the vertex.
        y: f64,
    },
    /// A ring with fewer than three distinct corners.
    #[error("ring {ring} has fewer than 3 distinct corners")]
    TooFewCorners {
        /// 1-based ring number (1 is the exterior).
        ring: usize,
    },
    /// An edge crosses an edge met before (in its own ring or another).
    #[error(
        "the edge of ring {ring} from ({x0}, {y0}) to ({x1}, {y1}) crosses another edge of the polygon (self-intersecting or overlapping rings)"
    )]
    Crossing {
        /// 1-based ring number (1 is the exterior).
        ring: usize,
        /// Start x.
        x0: f64,
        /// Start y.
        y0: f64,
        /// End x.
        x1: f64,
        /// End y.
        y1: f64,
    },
    /// The triangles do not cover the exterior minus the holes.
    #[error(
        "its triangles cover an area of {covered} where the exterior minus the holes is {expected}: rings overlap or share edges, or a hole lies outside the exterior or inside another hole"
    )]
    Overlap {
        /// The triangles' total area.
        covered: f64,
        /// The exterior's area minus the holes'.
        expected: f64,
    },
    /// The polygon has no area.
    #[error("it has no area")]
    NoArea,
}

/// Twice the signed area of a ring, closing edge implied (positive counter-clockwise).
fn area2(ring: &[Coord]) -> f64 {
    let next = ring.iter().cycle().skip(1);
    ring.iter()
        .zip(next)
        .map(|(a, b)| a.x * b.y - b.x * a.y)
        .sum()
}

/// Relative tolerance of the area check: the triangles' areas are summed in floating point,
/// which loses a few ulps per triangle; a real overlap or missing hole is far larger.
const AREA_TOLERANCE: f64 = 1e-9;

type Cdt = ConstrainedDelaunayTriangulation<Point2<f64>>;

/// Triangulates a polygon given as rings (the first the exterior, the others holes; either
/// direction; closed or not). Returns triangles counter-clockwise, as corners taken from the
/// input (with their z and m).
pub fn triangulate(rings: &[Line]) -> Result<Vec<[Coord; 3]>, TriangulationError> {
    let mut cdt = Cdt::new();
    // The input coordinate of each triangulation vertex, by vertex index: the first one given
    // for a position, as the mesh builder merges nodes.
    let mut corners: Vec<Coord> = Vec::new();
    let mut expected = 0.0;
    let mut total = 0.0;
    for (index, ring) in rings.iter().enumerate() {
        let area = area2(ring).abs() / 2.0;
        if index > 0 && area == 0.0 {
            // A flat hole (a spike or a ring on one line) takes nothing away.
            continue;
        }
        expected += if index == 0 { area } else { -area };
        total += area;
        add_ring(&mut cdt, &mut corners, ring, index + 1)?;
    }
    if !(expected > 0.0 && expected.is_finite()) {
        return Err(TriangulationError::NoArea);
    }
    let inside = inside_faces(&cdt);
    let mut triangles = Vec::new();
    let mut covered = 0.0;
    for face in cdt.inner_faces() {
        if !inside.get(face.fix().index()).copied().unwrap_or(false) {
            continue;
        }
        let [a, b, c] = face
            .vertices()
            .map(|vertex| corners.get(vertex.fix().index()).copied());
        let (Some(a), Some(b), Some(c)) = (a, b, c) else {
            continue;
        };
        let triangle = [a, b, c];
        covered += area2(&triangle) / 2.0;
        triangles.push(triangle);
    }
    if (covered - expected).abs() > AREA_TOLERANCE * total {
        return Err(TriangulationError::Overlap { covered, expected });
    }
    Ok(triangles)
}

/// Inserts a ring's vertices and makes its edges constraints.
fn add_ring(
    cdt: &mut Cdt,
    corners: &mut Vec<Coord>,
    ring: &[Coord],
    number: usize,
) -> Result<(), TriangulationError> {
    let mut handles = Vec::with_capacity(ring.len());
    for coord in ring {
        let handle = cdt.insert(Point2::new(coord.x, coord.y)).map_err(|_| {
            TriangulationError::Coordinate {
                x: coord.x,
                y: coord.y,
            }
        })?;
        if handle.index() >= corners.len() {
            corners.resize(handle.index() + 1, *coord);
        }
        if handles.last() != Some(&handle) {
            handles.push(handle);
        }
    }
    if handles.len() > 1 && handles.first() == handles.last() {
        handles.pop();
    }
    if handles.len() < 3 {
        return Err(TriangulationError::TooFewCorners { ring: number });
    }
    let next = handles.iter().cycle().skip(1);
    for (&from, &to) in handles.iter().zip(next) {
        if cdt.try_add_constraint(from, to).is_empty() {
            let at = |handle: spade::handles::FixedVertexHandle| {
                let position = cdt.vertex(handle).position();
                (position.x, position.y)
            };
            let ((x0, y0), (x1, y1)) = (at(from), at(to));
            return Err(TriangulationError::Crossing {
                ring: number,
                x0,
                y0,
                x1,
                y1,
            });
        }
    }
    Ok(())
}

/// Marks each face inside or outside the polygon, by face index: the faces along the convex
/// hull are inside when the hull edge is a ring edge; crossing a ring edge flips the side.
fn inside_faces(cdt: &Cdt) -> Vec<bool> {
    let mut inside = vec![false; cdt.num_all_faces()];
    let mut seen = vec![false; cdt.num_all_faces()];
    let mut stack = Vec::new();
    for face in cdt.inner_faces() {
        for edge in face.adjacent_edges() {
            if edge.rev().face().is_outer() {
                let index = face.fix().index();
                if seen.get(index) == Some(&false) {
                    stack.push((face.fix(), edge.is_constraint_edge()));
                    if let Some(slot) = seen.get_mut(index) {
                        *slot = true;
                    }
                }
                break;
            }
        }
    }
    while let Some((fixed, is_inside)) = stack.pop() {
        if let Some(slot) = inside.get_mut(fixed.index()) {
            *slot = is_inside;
        }
        for edge in cdt.face(fixed).adjacent_edges() {
            let Some(neighbour) = edge.rev().face().as_inner() else {
                continue;
            };
            let index = neighbour.fix().index();
            if seen.get(index) == Some(&false) {
                if let Some(slot) = seen.get_mut(index) {
                    *slot = true;
                }
                stack.push((neighbour.fix(), is_inside != edge.is_constraint_edge()));
            }
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(points: &[(f64, f64)]) -> Line {
        points.iter().map(|(x, y)| Coord::xy(*x, *y)).collect()
    }

    fn area_of(triangles: &[[Coord; 3]]) -> f64 {
        triangles.iter().map(|t| area2(t) / 2.0).sum()
    }

    #[test]
    fn a_square_with_a_hole_covers_its_area_with_counter_clockwise_triangles() {
        let exterior = ring(&[(0., 0.), (0., 4.), (4., 4.), (4., 0.), (0., 0.)]);
        let hole = ring(&[(1., 1.), (3., 1.), (3., 3.), (1., 3.), (1., 1.)]);
        let triangles = triangulate(&[exterior, hole]).unwrap();
        assert_eq!(triangles.len(), 8);
        assert!((area_of(&triangles) - 12.0).abs() < 1e-12);
        assert!(triangles.iter().all(|t| area2(t) > 0.0));
    }

    #[test]
    fn a_concave_polygon_keeps_its_notch_empty() {
        // A "U": the notch between x 1 and 2 above y 1 stays out.
        let u = ring(&[
            (0., 0.),
            (3., 0.),
            (3., 3.),
            (2., 3.),
            (2., 1.),
            (1., 1.),
            (1., 3.),
            (0., 3.),
        ]);
        let triangles = triangulate(&[u]).unwrap();
        assert_eq!(triangles.len(), 6);
        assert!((area_of(&triangles) - 7.0).abs() < 1e-12);
    }

    #[test]
    fn random_rings_on_a_small_grid_give_triangles_or_errors_never_panics() {
        // Corners on a 5 x 5 grid make every degenerate case common: repeated vertices,
        // collinear edges, edges through vertices, overlapping and crossing rings.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for _ in 0..3_000 {
            let rings: Vec<Line> = (0..1 + next(3))
                .map(|_| {
                    (0..3 + next(6))
                        .map(|_| Coord::xy(next(5) as f64, next(5) as f64))
                        .collect()
                })
                .collect();
            if let Ok(triangles) = triangulate(&rings) {
                let expected = area2(&rings[0]).abs() / 2.0
                    - rings[1..].iter().map(|r| area2(r).abs() / 2.0).sum::<f64>();
                assert!((area_of(&triangles) - expected).abs() < 1e-9, "{rings:?}");
                assert!(triangles.iter().all(|t| area2(t) > 0.0), "{rings:?}");
            }
        }
    }

    #[test]
    fn crossing_rings_and_holes_outside_are_errors() {
        let bow_tie = ring(&[(0., 0.), (2., 2.), (2., 0.), (0., 2.)]);
        assert!(matches!(
            triangulate(&[bow_tie]),
            Err(TriangulationError::Crossing { ring: 1, .. })
        ));
        let square = ring(&[(0., 0.), (0., 2.), (2., 2.), (2., 0.)]);
        let outside = ring(&[(5., 5.), (6., 5.), (6., 6.)]);
        assert!(matches!(
            triangulate(&[square.clone(), outside]),
            Err(TriangulationError::Overlap { .. })
        ));
        let sticking_out = ring(&[(1., 1.), (3., 1.), (3., 3.)]);
        assert!(matches!(
            triangulate(&[square.clone(), sticking_out]),
            Err(TriangulationError::Crossing { ring: 2, .. })
        ));
        let line = ring(&[(0., 0.), (1., 1.), (2., 2.), (0., 0.)]);
        assert_eq!(triangulate(&[line]), Err(TriangulationError::NoArea));
        let two = ring(&[(0., 0.), (1., 1.), (0., 0.)]);
        assert_eq!(
            triangulate(&[two]),
            Err(TriangulationError::TooFewCorners { ring: 1 })
        );
        let nan = ring(&[(0., 0.), (f64::NAN, 1.), (1., 0.)]);
        assert!(matches!(
            triangulate(&[nan]),
            Err(TriangulationError::Coordinate { .. })
        ));
        assert_eq!(triangulate(&[]), Err(TriangulationError::NoArea));
    }
}

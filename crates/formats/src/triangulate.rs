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
//!
//! # Work
//!
//! Vertices are inserted in a shuffled (fixed-seed, so reproducible) order with spade's
//! hierarchy hints, not in ring order. In ring order a ring whose vertices lie nearly on one
//! circle makes every insertion flip edges across the fan of the ones before, work growing
//! with the square of the vertices: a crafted 20,000-vertex ring took 11 s in a release build
//! (66 s in a debug build). Shuffled, the expected work is n log n whatever the ring
//! (randomised incremental construction): the same ring takes 0.6 s in a debug build, while an
//! ordinary ring (a coastline of 100,000 vertices) costs about 1.4 times what ring order
//! costs. Some polygons stay quadratic whatever the order (long ring edges each crossing many
//! triangles, see the tests), so the work is counted, as reads of a vertex position by spade's
//! predicates (the vertex type counts them), and checked after each insertion and each
//! constraint against [`TRIANGULATION_WORK_PER_VERTEX_MAX`] times the vertices: past it the
//! polygon is refused instead of taking minutes of CPU. Work is counted rather than time so
//! that the limit is the same on every machine and in every run. The count is a proxy: spade
//! also does work that reads no position (walking a conflict region's border), but no more
//! than a constant times the reads around it.

use std::cell::Cell;

use spade::handles::FixedVertexHandle;
use spade::{
    ConstrainedDelaunayTriangulation, HasPosition, HierarchyHintGenerator, Point2, Triangulation,
};

use crate::limits::TRIANGULATION_WORK_PER_VERTEX_MAX;
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
    /// The triangulation needed more work than its polygon's vertices allow.
    #[error(
        "triangulating its {vertices} vertices took more than {work_max} steps of work (TRIANGULATION_WORK_PER_VERTEX_MAX = {TRIANGULATION_WORK_PER_VERTEX_MAX} per vertex); ordinary polygons need under 150 per vertex, so its ring edges must cross very many triangles: simplify or split it"
    )]
    WorkLimit {
        /// The vertices of all rings.
        vertices: usize,
        /// The work allowed: the vertices times the limit per vertex.
        work_max: u64,
    },
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

/// A vertex of the triangulation: its position, and the work counter that every read of the
/// position advances (spade reads positions for each predicate it evaluates).
struct Vertex<'w> {
    x: f64,
    y: f64,
    work: &'w Cell<u64>,
}

impl HasPosition for Vertex<'_> {
    type Scalar = f64;

    fn position(&self) -> Point2<f64> {
        self.work.set(self.work.get().saturating_add(1));
        Point2::new(self.x, self.y)
    }
}

type Cdt<'w> =
    ConstrainedDelaunayTriangulation<Vertex<'w>, (), (), (), HierarchyHintGenerator<f64>>;

/// The orientation of `c` seen from the line `a` -> `b`, exactly: positive when the three turn
/// counter-clockwise, negative clockwise, zero on one line (NaN for non-finite input). A
/// floating-point cross product gets the sign of slivers with large coordinates wrong.
pub(crate) fn orientation(a: &Coord, b: &Coord, c: &Coord) -> f64 {
    let point = |coord: &Coord| robust::Coord {
        x: coord.x,
        y: coord.y,
    };
    robust::orient2d(point(a), point(b), point(c))
}

/// Whether all corners of `ring` lie on one line in x and y (fewer than 3 distinct corners
/// included), exactly: a polygon with no area seen from above, such as a vertical wall of a
/// MultiPatch. False when a coordinate is not finite (that is an error elsewhere).
pub(crate) fn is_flat(ring: &[Coord]) -> bool {
    if ring
        .iter()
        .any(|corner| !corner.x.is_finite() || !corner.y.is_finite())
    {
        return false;
    }
    let Some(first) = ring.first() else {
        return true;
    };
    let Some(second) = ring.iter().find(|corner| !same_xy(corner, first)) else {
        return true;
    };
    ring.iter()
        .all(|corner| orientation(first, second, corner) == 0.0)
}

/// Whether two corners have the same x and y (0 and -0 being the same).
pub(crate) fn same_xy(a: &Coord, b: &Coord) -> bool {
    a.x == b.x && a.y == b.y
}

/// Triangulates a polygon given as rings (the first the exterior, the others holes; either
/// direction; closed or not) within the default work limit. Returns triangles
/// counter-clockwise, as corners taken from the input (with their z and m).
pub fn triangulate(rings: &[Line]) -> Result<Vec<[Coord; 3]>, TriangulationError> {
    let vertices: usize = rings.iter().map(Vec::len).sum();
    let work_max = TRIANGULATION_WORK_PER_VERTEX_MAX.saturating_mul(vertices as u64);
    triangulate_within(rings, work_max).map(|(triangles, _)| triangles)
}

/// [`triangulate`] with at most `work_max` steps of work; also returns the work done.
pub(crate) fn triangulate_within(
    rings: &[Line],
    work_max: u64,
) -> Result<(Vec<[Coord; 3]>, u64), TriangulationError> {
    let work = Cell::new(0);
    let vertices: usize = rings.iter().map(Vec::len).sum();
    let budget = Budget {
        work: &work,
        work_max,
        vertices,
    };
    let mut expected = 0.0;
    let mut total = 0.0;
    // Flat holes (a spike, or a ring on one line) take nothing away and are left out.
    let mut kept: Vec<&Line> = Vec::with_capacity(rings.len());
    for (index, ring) in rings.iter().enumerate() {
        let area = area2(ring).abs() / 2.0;
        if index > 0 && is_flat(ring) {
            continue;
        }
        expected += if index == 0 { area } else { -area };
        total += area;
        kept.push(ring);
    }
    let mut cdt = Cdt::new();
    let (handles, corners) = insert_vertices(&mut cdt, &kept, &budget)?;
    for (index, ring) in handles.iter().enumerate() {
        add_constraints(&mut cdt, ring, index + 1, &budget)?;
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
            .map(|vertex| corners.get(vertex.fix().index()).copied().flatten());
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
    Ok((triangles, work.get()))
}

/// The work counter and its limit.
struct Budget<'w> {
    work: &'w Cell<u64>,
    work_max: u64,
    vertices: usize,
}

impl Budget<'_> {
    fn check(&self) -> Result<(), TriangulationError> {
        if self.work.get() > self.work_max {
            return Err(TriangulationError::WorkLimit {
                vertices: self.vertices,
                work_max: self.work_max,
            });
        }
        Ok(())
    }
}

/// The handles of each ring's vertices in ring order, with repeats of a position in a row
/// (the closing vertex included) removed, and the input coordinate of each triangulation
/// vertex by vertex index: the first one given for a position, as the mesh builder merges
/// nodes.
type Inserted = (Vec<Vec<FixedVertexHandle>>, Vec<Option<Coord>>);

/// Inserts the vertices of all rings in a shuffled order (see the module doc).
fn insert_vertices<'w>(
    cdt: &mut Cdt<'w>,
    rings: &[&Line],
    budget: &Budget<'w>,
) -> Result<Inserted, TriangulationError> {
    let mut order: Vec<(usize, usize)> = rings
        .iter()
        .enumerate()
        .flat_map(|(ring, coords)| (0..coords.len()).map(move |position| (ring, position)))
        .collect();
    shuffle(&mut order);
    let mut handles: Vec<Vec<Option<FixedVertexHandle>>> =
        rings.iter().map(|ring| vec![None; ring.len()]).collect();
    for (ring, position) in order {
        let Some(coord) = rings.get(ring).and_then(|coords| coords.get(position)) else {
            continue;
        };
        let vertex = Vertex {
            x: coord.x,
            y: coord.y,
            work: budget.work,
        };
        let handle = cdt
            .insert(vertex)
            .map_err(|_| TriangulationError::Coordinate {
                x: coord.x,
                y: coord.y,
            })?;
        if let Some(slot) = handles
            .get_mut(ring)
            .and_then(|ring| ring.get_mut(position))
        {
            *slot = Some(handle);
        }
        budget.check()?;
    }
    let mut corners: Vec<Option<Coord>> = vec![None; cdt.num_vertices()];
    let mut rings_of_handles = Vec::with_capacity(rings.len());
    for (coords, ring_handles) in rings.iter().zip(handles) {
        let mut kept: Vec<FixedVertexHandle> = Vec::with_capacity(ring_handles.len());
        for (coord, handle) in coords.iter().zip(ring_handles) {
            let Some(handle) = handle else { continue };
            if let Some(slot @ None) = corners.get_mut(handle.index()) {
                *slot = Some(*coord);
            }
            if kept.last() != Some(&handle) {
                kept.push(handle);
            }
        }
        if kept.len() > 1 && kept.first() == kept.last() {
            kept.pop();
        }
        rings_of_handles.push(kept);
    }
    Ok((rings_of_handles, corners))
}

/// A Fisher-Yates shuffle with a fixed-seed xorshift generator: random enough to defeat the
/// ring order, reproducible so that a conversion gives the same mesh every time.
fn shuffle<T>(items: &mut [T]) {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for index in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let other = (state % (index as u64 + 1)) as usize;
        items.swap(index, other);
    }
}

/// Makes a ring's edges constraints.
fn add_constraints(
    cdt: &mut Cdt<'_>,
    handles: &[FixedVertexHandle],
    number: usize,
    budget: &Budget<'_>,
) -> Result<(), TriangulationError> {
    if handles.len() < 3 {
        return Err(TriangulationError::TooFewCorners { ring: number });
    }
    let next = handles.iter().cycle().skip(1);
    for (&from, &to) in handles.iter().zip(next) {
        if cdt.try_add_constraint(from, to).is_empty() {
            let at = |handle: FixedVertexHandle| {
                let vertex = cdt.vertex(handle);
                (vertex.data().x, vertex.data().y)
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
        budget.check()?;
    }
    Ok(())
}

/// Marks each face inside or outside the polygon, by face index: the faces along the convex
/// hull are inside when the hull edge is a ring edge; crossing a ring edge flips the side.
fn inside_faces(cdt: &Cdt<'_>) -> Vec<bool> {
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

    /// A ring of `n` vertices nearly on the unit circle: a "C" of two arcs 0.001 apart, the
    /// input that took 11 s (release build) when vertices went in in ring order.
    fn near_circle(n: usize) -> Line {
        let arc = |radius: f64| -> Vec<Coord> {
            (0..n / 2)
                .map(|index| {
                    let angle = 6.0 * index as f64 / (n / 2 - 1) as f64;
                    Coord::xy(radius * angle.cos(), radius * angle.sin())
                })
                .collect()
        };
        let mut ring = arc(1.0);
        ring.extend(arc(0.999).into_iter().rev());
        ring
    }

    /// A rectangle 20 high whose long sides have `columns` + 1 vertices, with `holes` thin
    /// holes across it: every long hole edge crosses the triangles between the two sides, so
    /// the work grows with `columns` x `holes`.
    fn stacked_holes(columns: usize, holes: usize) -> Vec<Line> {
        let width = columns as f64;
        let mut exterior: Line = (0..=columns)
            .map(|column| Coord::xy(column as f64, -10.0))
            .collect();
        exterior.extend(
            (0..=columns)
                .rev()
                .map(|column| Coord::xy(column as f64, 10.0)),
        );
        let mut rings = vec![exterior];
        let spacing = 2.0 / holes as f64;
        for hole in 0..holes {
            let y = -1.0 + hole as f64 * spacing;
            let top = y + 0.3 * spacing;
            rings.push(ring(&[
                (1., y),
                (width - 1., y),
                (width - 1., top),
                (1., top),
            ]));
        }
        rings
    }

    #[test]
    fn the_work_limit_admits_exactly_the_work_needed_and_refuses_one_step_less() {
        let rings = stacked_holes(20, 4);
        let (triangles, work) = triangulate_within(&rings, u64::MAX).unwrap();
        assert_eq!(triangulate_within(&rings, work), Ok((triangles, work)));
        let vertices = rings.iter().map(Vec::len).sum();
        assert_eq!(
            triangulate_within(&rings, work - 1),
            Err(TriangulationError::WorkLimit {
                vertices,
                work_max: work - 1
            })
        );
    }

    #[test]
    fn a_ring_of_20000_vertices_nearly_on_one_circle_needs_a_fraction_of_the_limit() {
        let ring = near_circle(20_000);
        let (triangles, work) = triangulate_within(&[ring], u64::MAX).unwrap();
        assert_eq!(triangles.len(), 19_998);
        // About 73 per vertex; in ring order it was over 8,000 and grew with the vertices.
        assert!(
            work < 20_000 * TRIANGULATION_WORK_PER_VERTEX_MAX / 10,
            "{work}"
        );
    }

    #[test]
    fn long_edges_crossing_many_triangles_are_refused_at_the_default_limit() {
        let rings = stacked_holes(300, 150);
        let vertices: usize = rings.iter().map(Vec::len).sum();
        let error = triangulate(&rings).unwrap_err();
        assert_eq!(
            error,
            TriangulationError::WorkLimit {
                vertices,
                work_max: vertices as u64 * TRIANGULATION_WORK_PER_VERTEX_MAX
            }
        );
        assert!(
            error
                .to_string()
                .contains("TRIANGULATION_WORK_PER_VERTEX_MAX = 1000 per vertex"),
            "{error}"
        );
    }

    #[test]
    fn triangles_come_out_counter_clockwise_by_exact_orientation() {
        // Slivers with large coordinates, where a floating-point cross product can get the
        // sign wrong: spade's exact predicates decide, and so must the check.
        let exterior = ring(&[
            (500_000.0, 6_200_000.0),
            (500_100.0, 6_200_000.000_001),
            (500_200.0, 6_200_000.000_003),
            (500_300.0, 6_200_000.0),
            (500_300.0, 6_200_001.0),
            (500_000.0, 6_200_001.0),
        ]);
        let triangles = triangulate(&[exterior]).unwrap();
        for [a, b, c] in &triangles {
            assert!(orientation(a, b, c) > 0.0, "{a:?} {b:?} {c:?}");
        }
    }

    #[test]
    fn flat_rings_are_those_with_all_corners_on_one_line() {
        assert!(is_flat(&ring(&[(0., 0.), (0., 0.), (0., 1.)])));
        assert!(is_flat(&ring(&[(0., 0.), (1., 1.), (3., 3.), (0., 0.)])));
        assert!(is_flat(&ring(&[(2., 2.), (2., 2.)])));
        assert!(is_flat(&[]));
        assert!(!is_flat(&ring(&[(0., 0.), (1., 0.), (0., 1.)])));
        // One unit in the last place off the line is not flat.
        let y = f64::from_bits(2.0f64.to_bits() + 1);
        assert!(!is_flat(&ring(&[(0., 0.), (1., 1.), (2., y)])));
        assert!(!is_flat(&ring(&[(0., 0.), (f64::NAN, 0.), (1., 1.)])));
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

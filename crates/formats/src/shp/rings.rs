//! Polygon rings: a Shapefile polygon is a flat list of rings where clockwise rings are
//! exteriors and counter-clockwise rings holes, with nothing saying which hole belongs to which
//! exterior. The model (like GeoJSON and OGR) wants polygons of exterior plus holes, so the
//! reader groups the rings; the writer turns rings the way the specification demands (see
//! `writer.rs`).
//!
//! The grouping gives what OGR's Shapefile driver gives (GDAL 3.6: `organizePolygons` with
//! `METHOD=ONLY_CCW`) whenever OGR's result is a valid polygon, and something valid or at least
//! lossless where OGR's is not:
//!
//! - one ring is a polygon whatever its direction;
//! - clockwise rings are exteriors; a counter-clockwise ring is a hole of the smallest exterior
//!   containing it, tested point by point (a vertex on the exterior's outline says nothing, so
//!   the following ones decide, then the middles of the ring's edges; the majority of three
//!   points off the outline wins, so that a vertex rounded to the wrong side of the outline
//!   does not), so holes touching their exterior go where OGR puts them;
//! - islands in holes are polygons of their own (clockwise rings are never holes), as in OGR;
//! - when a counter-clockwise ring lies in no exterior, or no ring is clockwise, the record's
//!   winding contradicts its nesting (a writer that ignored the specification, or turned every
//!   ring the GeoJSON way), and the rings are grouped by nesting alone: a ring inside no other
//!   is an exterior, a ring directly inside an exterior its hole, a ring inside a hole an
//!   exterior again. OGR's results there are invalid (a hole outside its exterior: with exactly
//!   one clockwise ring OGR makes every other ring its hole without looking; a hole in a notch
//!   of the largest exterior, which OGR takes on its bounding box alone) or overlapping
//!   polygons (nested rings all counter-clockwise, each a polygon), so Basin differs there;
//!   disjoint counter-clockwise rings are polygons of their own as in OGR;
//! - a ring without area (fewer than three distinct corners, or all on one line) is a polygon
//!   of its own and takes no part in the grouping. OGR makes it a hole of the only exterior,
//!   or, with several exteriors and a ring of fewer than 4 points, gives up on the record
//!   (every ring a polygon of its own); either way its result is invalid;
//! - unclosed rings are grouped as if closed (OGR does the same) and kept as stored.
//!
//! Polygons come in the order of their exterior in the record, holes in record order, and
//! point order is kept, as OGR does.

use crate::model::{Coord, Geometry, Line};

/// Work done grouping one record's rings: bounding-box comparisons plus vertices visited by
/// the point-in-ring tests. Each hole is tested against every exterior whose bounding box holds
/// it, so a crafted record of many overlapping rings costs holes x exteriors x vertices; real
/// data (a country's lakes and islands in one record) stays far below. About a second of work
/// on a slow core.
pub(crate) const RING_TEST_VERTICES_MAX: u64 = 400_000_000;

/// A bounding box: (min x, min y, max x, max y).
type Bounds = (f64, f64, f64, f64);

/// The bounding box of a ring.
fn bounds(ring: &[Coord]) -> Bounds {
    ring.iter().fold(
        (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ),
        |(x0, y0, x1, y1), c| (x0.min(c.x), y0.min(c.y), x1.max(c.x), y1.max(c.y)),
    )
}

/// True when box `inner` lies within box `outer` (edges may touch).
fn holds((x0, y0, x1, y1): Bounds, (a0, b0, a1, b1): Bounds) -> bool {
    a0 >= x0 && b0 >= y0 && a1 <= x1 && b1 <= y1
}

/// Twice the signed area of a ring (shoelace, closing edge implied): negative for clockwise
/// rings with y up.
pub(crate) fn signed_area2(ring: &[Coord]) -> f64 {
    let mut sum = 0.0;
    for pair in ring.windows(2) {
        if let [a, b] = pair {
            sum += a.x * b.y - b.x * a.y;
        }
    }
    if let (Some(last), Some(first)) = (ring.last(), ring.first()) {
        sum += last.x * first.y - first.x * last.y;
    }
    sum
}

/// Where a point lies against a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Inside,
    Outline,
    Outside,
}

/// Where `point` lies against `ring` (closing edge implied): on one of its edges, else inside
/// or outside by the even-odd rule.
fn side(ring: &[Coord], point: Coord) -> Side {
    let Some(mut previous) = ring.last().copied() else {
        return Side::Outside;
    };
    let mut inside = false;
    for current in ring {
        let (a, b) = (previous, *current);
        previous = b;
        let cross = (b.x - a.x) * (point.y - a.y) - (b.y - a.y) * (point.x - a.x);
        if cross == 0.0
            && point.x >= a.x.min(b.x)
            && point.x <= a.x.max(b.x)
            && point.y >= a.y.min(b.y)
            && point.y <= a.y.max(b.y)
        {
            return Side::Outline;
        }
        if (b.y > point.y) != (a.y > point.y) {
            let x_at = (a.x - b.x) * (point.y - b.y) / (a.y - b.y) + b.x;
            if point.x < x_at {
                inside = !inside;
            }
        }
    }
    if inside { Side::Inside } else { Side::Outside }
}

/// Counts work against the record's budget.
struct Budget {
    work: u64,
    max: u64,
}

impl Budget {
    fn spend(&mut self, units: usize) -> Result<(), u64> {
        self.work = self.work.saturating_add(units as u64);
        if self.work > self.max {
            Err(self.work)
        } else {
            Ok(())
        }
    }
}

/// Points of a ring tested against another before deciding whether it lies inside: one would
/// do for exact coordinates, but a vertex meant to lie on the other ring's outline can be
/// rounded to either side of it, so the majority of a few decides.
const DECISIVE_POINTS: usize = 3;

/// True when ring `inner` lies inside ring `outer`: its vertices, then the middles of its
/// edges, are tested until [`DECISIVE_POINTS`] of them lie off `outer`'s outline (or none are
/// left), and most of those must be inside (a tie counts as inside). Points on the outline say
/// nothing, so a ring touching `outer` is decided by its other points, as in OGR.
fn ring_inside(inner: &[Coord], outer: &[Coord], budget: &mut Budget) -> Result<bool, u64> {
    let middles = inner
        .iter()
        .zip(inner.iter().skip(1))
        .map(|(a, b)| Coord::xy((a.x + b.x) / 2.0, (a.y + b.y) / 2.0));
    let (mut inside, mut outside) = (0usize, 0usize);
    for point in inner.iter().copied().chain(middles) {
        budget.spend(outer.len())?;
        match side(outer, point) {
            Side::Outline => {}
            Side::Inside => inside += 1,
            Side::Outside => outside += 1,
        }
        if inside + outside >= DECISIVE_POINTS {
            break;
        }
    }
    Ok(inside > 0 && inside >= outside)
}

/// What the grouping knows of one ring.
struct RingInfo {
    /// Twice the signed area.
    area2: f64,
    bounds: Bounds,
}

impl RingInfo {
    fn flat(&self) -> bool {
        !(self.area2.is_finite() && self.area2 != 0.0)
    }

    fn clockwise(&self) -> bool {
        !self.flat() && self.area2 < 0.0
    }
}

/// Groups Shapefile rings into polygons (see the module documentation for the rules): a
/// `Polygon` when there is one exterior, else a `MultiPolygon`.
///
/// Fails with the work done when grouping would take more than [`RING_TEST_VERTICES_MAX`]
/// units of work (bounding-box comparisons plus vertices visited).
pub(crate) fn organize(rings: Vec<Line>) -> Result<Geometry, u64> {
    organize_within(rings, RING_TEST_VERTICES_MAX)
}

fn organize_within(rings: Vec<Line>, work_max: u64) -> Result<Geometry, u64> {
    if rings.len() <= 1 {
        return Ok(Geometry::Polygon(rings));
    }
    let infos: Vec<RingInfo> = rings
        .iter()
        .map(|ring| RingInfo {
            area2: signed_area2(ring),
            bounds: bounds(ring),
        })
        .collect();
    let mut budget = Budget {
        work: 0,
        max: work_max,
    };
    let mut owners = by_winding(&rings, &infos, &mut budget)?;
    let broken = owners
        .iter()
        .zip(&infos)
        .any(|(owner, info)| owner.is_none() && !info.flat() && !info.clockwise());
    if broken {
        owners = by_nesting(&rings, &infos, &mut budget)?;
    }
    // Each top-level ring starts a polygon at its place in the record; holes follow their
    // exterior in record order.
    let mut slot_of = vec![usize::MAX; rings.len()];
    let mut polygons: Vec<Vec<Line>> = Vec::new();
    let mut holes = Vec::new();
    for (index, ring) in rings.into_iter().enumerate() {
        match owners.get(index).copied().flatten() {
            None => {
                if let Some(slot) = slot_of.get_mut(index) {
                    *slot = polygons.len();
                }
                polygons.push(vec![ring]);
            }
            Some(owner) => holes.push((owner, ring)),
        }
    }
    for (owner, hole) in holes {
        if let Some(polygon) = slot_of.get(owner).and_then(|slot| polygons.get_mut(*slot)) {
            polygon.push(hole);
        }
    }
    if polygons.len() == 1
        && let Some(polygon) = polygons.pop()
    {
        return Ok(Geometry::Polygon(polygon));
    }
    Ok(Geometry::MultiPolygon(polygons))
}

/// For each ring, the exterior it is a hole of (`None` for rings that start a polygon), by
/// the specification's rule: clockwise rings are exteriors, a counter-clockwise ring is a hole
/// of the smallest one containing it. A counter-clockwise ring left without one is `None`.
fn by_winding(
    rings: &[Line],
    infos: &[RingInfo],
    budget: &mut Budget,
) -> Result<Vec<Option<usize>>, u64> {
    let mut owners = vec![None; rings.len()];
    let exteriors: Vec<usize> = (0..rings.len())
        .filter(|&index| infos.get(index).is_some_and(RingInfo::clockwise))
        .collect();
    if exteriors.is_empty() {
        return Ok(owners);
    }
    for (index, (ring, info)) in rings.iter().zip(infos).enumerate() {
        if info.flat() || info.clockwise() {
            continue;
        }
        let mut best: Option<(usize, f64)> = None;
        for &candidate in &exteriors {
            budget.spend(1)?;
            let (Some(outer), Some(outer_info)) = (rings.get(candidate), infos.get(candidate))
            else {
                continue;
            };
            let area = outer_info.area2.abs();
            let smaller = best.is_none_or(|(_, best_area)| area < best_area);
            if smaller && holds(outer_info.bounds, info.bounds) && ring_inside(ring, outer, budget)?
            {
                best = Some((candidate, area));
            }
        }
        if let Some(owner) = owners.get_mut(index) {
            *owner = best.map(|(candidate, _)| candidate);
        }
    }
    Ok(owners)
}

/// For each ring, the exterior it is a hole of, by nesting alone, for records whose winding
/// contradicts it: each ring's parent is the smallest ring containing it; rings at even depth
/// are exteriors, at odd depth holes of their parent. Flat rings stay out.
fn by_nesting(
    rings: &[Line],
    infos: &[RingInfo],
    budget: &mut Budget,
) -> Result<Vec<Option<usize>>, u64> {
    let mut order: Vec<usize> = (0..rings.len())
        .filter(|&index| infos.get(index).is_some_and(|info| !info.flat()))
        .collect();
    let area = |index: usize| infos.get(index).map_or(0.0, |info| info.area2.abs());
    order.sort_by(|&a, &b| area(b).total_cmp(&area(a)));
    let mut owners = vec![None; rings.len()];
    // Whether each ring is a hole, by ring index.
    let mut hole = vec![false; rings.len()];
    for (rank, &index) in order.iter().enumerate() {
        let (Some(ring), Some(info)) = (rings.get(index), infos.get(index)) else {
            continue;
        };
        let mut parent = None;
        // Larger rings, smallest first: the first that contains this ring is its parent.
        for &candidate in order.iter().take(rank).rev() {
            budget.spend(1)?;
            let (Some(outer), Some(outer_info)) = (rings.get(candidate), infos.get(candidate))
            else {
                continue;
            };
            if holds(outer_info.bounds, info.bounds) && ring_inside(ring, outer, budget)? {
                parent = Some(candidate);
                break;
            }
        }
        let parent_is_hole = parent.is_some_and(|parent| hole.get(parent) == Some(&true));
        if let Some(parent) = parent.filter(|_| !parent_is_hole) {
            if let Some(slot) = hole.get_mut(index) {
                *slot = true;
            }
            if let Some(owner) = owners.get_mut(index) {
                *owner = Some(parent);
            }
        }
    }
    Ok(owners)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(points: &[(f64, f64)]) -> Line {
        points.iter().map(|(x, y)| Coord::xy(*x, *y)).collect()
    }

    /// A clockwise square from (x, y) with side `size`.
    fn cw(x: f64, y: f64, size: f64) -> Line {
        ring(&[
            (x, y),
            (x, y + size),
            (x + size, y + size),
            (x + size, y),
            (x, y),
        ])
    }

    /// A counter-clockwise square from (x, y) with side `size`.
    fn ccw(x: f64, y: f64, size: f64) -> Line {
        let mut ring = cw(x, y, size);
        ring.reverse();
        ring
    }

    #[test]
    fn holes_go_to_the_smallest_exterior_containing_them_and_islands_stand_alone() {
        let big = cw(0., 0., 10.);
        let big_hole = ccw(1., 1., 8.);
        let island = cw(3., 3., 4.);
        let island_hole = ccw(4., 4., 2.);
        let geometry = organize(vec![
            big.clone(),
            island.clone(),
            big_hole.clone(),
            island_hole.clone(),
        ])
        .unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![big, big_hole], vec![island, island_hole]])
        );
    }

    #[test]
    fn a_record_of_many_overlapping_rings_is_refused_past_the_work_limit() {
        let mut rings = vec![cw(0., 0., 10.); 20];
        rings.extend(std::iter::repeat_n(ccw(1., 1., 1.), 20));
        // 20 holes x (20 box comparisons + 3 points tested against the 5 vertices of the
        // first exterior; the others are no smaller) = 700 units.
        assert!(organize_within(rings.clone(), 700).is_ok());
        let work = organize_within(rings, 699).unwrap_err();
        assert!(work > 699);
    }

    #[test]
    fn a_hole_in_no_exterior_is_a_polygon_in_its_place_in_the_record() {
        let square = cw(0., 0., 1.);
        let far_hole = ccw(5., 5., 1.);
        let other = cw(10., 0., 1.);
        let geometry = organize(vec![square.clone(), far_hole.clone(), other.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![square], vec![far_hole], vec![other]])
        );
    }

    #[test]
    fn a_hole_outside_the_only_exterior_is_not_made_its_hole() {
        let square = cw(0., 0., 1.);
        let far_hole = ccw(5., 5., 1.);
        let geometry = organize(vec![square.clone(), far_hole.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![square], vec![far_hole]])
        );
    }

    #[test]
    fn holes_listed_before_their_exterior_still_join_it() {
        let hole = ccw(1., 1., 1.);
        let exterior = cw(0., 0., 4.);
        let geometry = organize(vec![hole.clone(), exterior.clone()]).unwrap();
        assert_eq!(geometry, Geometry::Polygon(vec![exterior, hole]));
    }

    #[test]
    fn a_hole_touching_its_exterior_belongs_to_it() {
        let exterior = cw(0., 0., 4.);
        // Starts on the exterior's left edge, then goes inside.
        let hole = ring(&[(0., 1.), (2., 1.), (2., 3.), (0., 1.)]);
        assert!(signed_area2(&hole) > 0.0);
        let geometry = organize(vec![exterior.clone(), cw(10., 10., 1.), hole.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![exterior, hole], vec![cw(10., 10., 1.)]])
        );
    }

    #[test]
    fn a_hole_whose_vertices_all_lie_on_the_outline_is_decided_by_its_edge_middles() {
        let exterior = ring(&[(0., 0.), (0., 4.), (4., 4.), (4., 0.), (0., 0.)]);
        // A diamond through the middles of the exterior's edges.
        let hole = ring(&[(2., 0.), (4., 2.), (2., 4.), (0., 2.), (2., 0.)]);
        assert!(signed_area2(&hole) > 0.0);
        let other = cw(10., 10., 1.);
        let geometry = organize(vec![exterior.clone(), other.clone(), hole.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![exterior, hole], vec![other]])
        );
    }

    #[test]
    fn without_a_clockwise_ring_rings_are_grouped_by_nesting() {
        let a = ccw(0., 0., 10.);
        let b = ccw(1., 1., 8.);
        let c = ccw(2., 2., 6.);
        let far = ccw(20., 20., 1.);
        let geometry = organize(vec![far.clone(), c.clone(), a.clone(), b.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![far], vec![c], vec![a, b]])
        );
        let disjoint = organize(vec![ccw(0., 0., 1.), ccw(5., 5., 1.)]).unwrap();
        assert_eq!(
            disjoint,
            Geometry::MultiPolygon(vec![vec![ccw(0., 0., 1.)], vec![ccw(5., 5., 1.)]])
        );
    }

    #[test]
    fn a_record_with_reversed_winding_is_grouped_by_nesting() {
        let exterior = ccw(0., 0., 4.);
        let hole = cw(1., 1., 1.);
        let geometry = organize(vec![exterior.clone(), hole.clone()]).unwrap();
        assert_eq!(geometry, Geometry::Polygon(vec![exterior, hole]));
    }

    #[test]
    fn a_hole_in_a_notch_of_its_exterior_is_a_polygon_of_its_own() {
        // A "C" open to the right; the square sits in its opening.
        let c = ring(&[
            (0., 0.),
            (0., 4.),
            (4., 4.),
            (4., 3.),
            (1., 3.),
            (1., 1.),
            (4., 1.),
            (4., 0.),
            (0., 0.),
        ]);
        let in_notch = ccw(2., 1.5, 1.);
        let geometry = organize(vec![c.clone(), in_notch.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![c], vec![in_notch]])
        );
    }

    #[test]
    fn flat_rings_are_polygons_of_their_own() {
        let exterior = cw(0., 0., 4.);
        let hole = ccw(1., 1., 1.);
        let spike = ring(&[(2., 2.), (3., 3.), (2., 2.)]);
        let line = ring(&[(0.5, 0.5), (1., 1.), (1.5, 1.5), (0.5, 0.5)]);
        let geometry = organize(vec![
            exterior.clone(),
            spike.clone(),
            hole.clone(),
            line.clone(),
        ])
        .unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![exterior, hole], vec![spike], vec![line]])
        );
    }

    #[test]
    fn unclosed_rings_are_grouped_as_if_closed_and_kept_as_stored() {
        let mut exterior = cw(0., 0., 4.);
        exterior.pop();
        let mut hole = ccw(1., 1., 1.);
        hole.pop();
        let geometry = organize(vec![exterior.clone(), hole.clone()]).unwrap();
        assert_eq!(geometry, Geometry::Polygon(vec![exterior, hole]));
    }

    #[test]
    fn a_hole_whose_first_vertex_is_rounded_off_the_outline_still_joins_its_exterior() {
        // A clockwise diamond; the hole is meant to start on its lower left edge (x + y = 2)
        // but starts a hair outside it.
        let exterior = ring(&[(2., 0.), (0., 2.), (2., 4.), (4., 2.), (2., 0.)]);
        let other = cw(10., 10., 1.);
        let hole = ring(&[(1., 1. - 1e-12), (2., 1.5), (2., 2.5), (1., 1. - 1e-12)]);
        assert!(signed_area2(&exterior) < 0.0 && signed_area2(&hole) > 0.0);
        assert_eq!(side(&exterior, hole[0]), Side::Outside);
        let geometry = organize(vec![exterior.clone(), other.clone(), hole.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![exterior, hole], vec![other]])
        );
    }

    #[test]
    fn points_on_an_edge_are_on_the_outline() {
        let square = cw(0., 0., 2.);
        assert_eq!(side(&square, Coord::xy(0., 1.)), Side::Outline);
        assert_eq!(side(&square, Coord::xy(2., 2.)), Side::Outline);
        assert_eq!(side(&square, Coord::xy(1., 1.)), Side::Inside);
        assert_eq!(side(&square, Coord::xy(3., 1.)), Side::Outside);
        assert_eq!(side(&[], Coord::xy(3., 1.)), Side::Outside);
    }
}

//! Polygon rings: a Shapefile polygon is a flat list of rings where clockwise rings are
//! exteriors and counter-clockwise rings holes, with nothing saying which hole belongs to which
//! exterior. The model (like GeoJSON and OGR) wants polygons of exterior plus holes, so the
//! reader assigns each hole to the smallest exterior containing it, as OGR does; the writer
//! turns rings the way the specification demands (see `writer.rs`).

use crate::model::{Coord, Geometry, Line};

/// Vertices visited while finding the exteriors of one record's holes. Each hole is tested
/// against every exterior whose bounding box holds it, so a crafted record of many
/// overlapping rings costs holes x exteriors x vertices; real data (a country's lakes and
/// islands in one record) stays far below. About a second of work on a slow core.
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

fn in_bounds((x0, y0, x1, y1): Bounds, point: Coord) -> bool {
    point.x >= x0 && point.x <= x1 && point.y >= y0 && point.y <= y1
}

/// Twice the signed area of a ring (shoelace): negative for clockwise rings with y up.
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

/// True when `point` lies inside `ring` (even-odd rule).
fn contains(ring: &[Coord], point: Coord) -> bool {
    let mut inside = false;
    let mut previous = match ring.last() {
        Some(last) => *last,
        None => return false,
    };
    for current in ring {
        let crosses = (current.y > point.y) != (previous.y > point.y);
        if crosses {
            let x_at = (previous.x - current.x) * (point.y - current.y) / (previous.y - current.y)
                + current.x;
            if point.x < x_at {
                inside = !inside;
            }
        }
        previous = *current;
    }
    inside
}

/// Groups Shapefile rings into polygons: a `Polygon` when there is one exterior, else a
/// `MultiPolygon`. A single ring is an exterior whatever its direction; when no ring is
/// clockwise (a writer that ignored the specification), every ring is an exterior; a hole
/// inside no exterior becomes a polygon of its own. Ring point order is kept as stored.
///
/// Fails with the work done when placing the holes would visit more than
/// [`RING_TEST_VERTICES_MAX`] vertices.
pub(crate) fn organize(rings: Vec<Line>) -> Result<Geometry, u64> {
    organize_within(rings, RING_TEST_VERTICES_MAX)
}

fn organize_within(rings: Vec<Line>, work_max: u64) -> Result<Geometry, u64> {
    if rings.len() <= 1 {
        return Ok(Geometry::Polygon(rings));
    }
    let areas: Vec<f64> = rings.iter().map(|ring| signed_area2(ring)).collect();
    let any_clockwise = areas.iter().any(|area| *area < 0.0);
    let mut polygons: Vec<(f64, Bounds, Vec<Line>)> = Vec::new();
    let mut holes = Vec::new();
    for (ring, area) in rings.into_iter().zip(areas) {
        if area <= 0.0 || !any_clockwise {
            polygons.push((area.abs(), bounds(&ring), vec![ring]));
        } else {
            holes.push(ring);
        }
    }
    let mut work: u64 = 0;
    for hole in holes {
        let Some(probe) = hole.first().copied() else {
            continue;
        };
        let mut owner: Option<usize> = None;
        for (index, (area, bbox, polygon)) in polygons.iter().enumerate() {
            let Some(outer) = polygon.first() else {
                continue;
            };
            if !in_bounds(*bbox, probe) {
                continue;
            }
            work = work.saturating_add(outer.len() as u64);
            if work > work_max {
                return Err(work);
            }
            let smaller = owner
                .and_then(|best| polygons.get(best))
                .is_none_or(|(best_area, _, _)| area < best_area);
            if smaller && contains(outer, probe) {
                owner = Some(index);
            }
        }
        match owner.and_then(|index| polygons.get_mut(index)) {
            Some((_, _, polygon)) => polygon.push(hole),
            None => polygons.push((0.0, bounds(&hole), vec![hole])),
        }
    }
    if polygons.len() == 1
        && let Some((_, _, polygon)) = polygons.pop()
    {
        return Ok(Geometry::Polygon(polygon));
    }
    Ok(Geometry::MultiPolygon(
        polygons
            .into_iter()
            .map(|(_, _, polygon)| polygon)
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(points: &[(f64, f64)]) -> Line {
        points.iter().map(|(x, y)| Coord::xy(*x, *y)).collect()
    }

    #[test]
    fn holes_go_to_the_smallest_exterior_containing_them() {
        let big = ring(&[(0., 0.), (0., 10.), (10., 10.), (10., 0.), (0., 0.)]);
        let big_hole = ring(&[(1., 1.), (9., 1.), (9., 9.), (1., 9.), (1., 1.)]);
        let island = ring(&[(3., 3.), (3., 7.), (7., 7.), (7., 3.), (3., 3.)]);
        let island_hole = ring(&[(4., 4.), (6., 4.), (6., 6.), (4., 6.), (4., 4.)]);
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
        let exterior = ring(&[(0., 0.), (0., 10.), (10., 10.), (10., 0.), (0., 0.)]);
        let hole = ring(&[(1., 1.), (2., 1.), (2., 2.), (1., 2.), (1., 1.)]);
        let mut rings = vec![exterior; 20];
        rings.extend(std::iter::repeat_n(hole, 20));
        // 20 holes x 20 exteriors x 5 vertices = 2,000 vertices to visit.
        assert!(organize_within(rings.clone(), 2_000).is_ok());
        let work = organize_within(rings, 1_999).unwrap_err();
        assert!(work > 1_999);
    }

    #[test]
    fn holes_outside_every_bounding_box_become_polygons_of_their_own() {
        let square = ring(&[(0., 0.), (0., 1.), (1., 1.), (1., 0.), (0., 0.)]);
        let far_hole = ring(&[(5., 5.), (6., 5.), (6., 6.), (5., 6.), (5., 5.)]);
        let geometry = organize(vec![square.clone(), far_hole.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![square], vec![far_hole]])
        );
    }
}

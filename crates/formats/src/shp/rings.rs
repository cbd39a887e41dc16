//! Polygon rings: a Shapefile polygon is a flat list of rings where clockwise rings are
//! exteriors and counter-clockwise rings holes, with nothing saying which hole belongs to which
//! exterior. The model (like GeoJSON and OGR) wants polygons of exterior plus holes, so the
//! reader assigns each hole to the smallest exterior containing it, as OGR does; the writer
//! turns rings the way the specification demands (see `writer.rs`).

use crate::model::{Coord, Geometry, Line};

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
pub(crate) fn organize(rings: Vec<Line>) -> Geometry {
    if rings.len() <= 1 {
        return Geometry::Polygon(rings);
    }
    let areas: Vec<f64> = rings.iter().map(|ring| signed_area2(ring)).collect();
    let any_clockwise = areas.iter().any(|area| *area < 0.0);
    let mut polygons: Vec<(f64, Vec<Line>)> = Vec::new();
    let mut holes = Vec::new();
    for (ring, area) in rings.into_iter().zip(areas) {
        if area <= 0.0 || !any_clockwise {
            polygons.push((area.abs(), vec![ring]));
        } else {
            holes.push(ring);
        }
    }
    for hole in holes {
        let Some(probe) = hole.first().copied() else {
            continue;
        };
        let owner = polygons
            .iter_mut()
            .filter(|(_, polygon)| polygon.first().is_some_and(|outer| contains(outer, probe)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match owner {
            Some((_, polygon)) => polygon.push(hole),
            None => polygons.push((0.0, vec![hole])),
        }
    }
    if polygons.len() == 1
        && let Some((_, polygon)) = polygons.pop()
    {
        return Geometry::Polygon(polygon);
    }
    Geometry::MultiPolygon(polygons.into_iter().map(|(_, polygon)| polygon).collect())
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
        ]);
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![vec![big, big_hole], vec![island, island_hole]])
        );
    }
}

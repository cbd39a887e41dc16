//! Values inside an element from the values at its corners.
//!
//! - Triangles: linear (barycentric), the finite-element interpolation of a linear triangle.
//! - Quadrilaterals: bilinear in the element's own (u, v) coordinates, found by inverting the
//!   bilinear map (a quadratic in v). Splitting the quad into two triangles would be cheaper
//!   but the result would depend on which diagonal was cut, and a ridge along it shows in a
//!   map; the bilinear form is the finite-element interpolation of a linear quadrilateral,
//!   symmetric in its corners, and along each edge it is linear, so it meets the neighbouring
//!   elements without a seam.
//! - Other polygons, and quads the bilinear map cannot invert (concave ones): mean value
//!   coordinates (Floater 2003, in Hormann and Floater's form for any simple polygon), which
//!   are also linear along edges and are the barycentric coordinates on a triangle.
//!
//! All three reproduce a linear field exactly (up to rounding), which the tests check.

/// Values at `corners` (the corner at `corners[i]` has `values[i]`) interpolated at `point`,
/// which is inside or on the polygon. Degenerate polygons (no area) give the corners' mean.
pub(super) fn interpolate(corners: &[[f64; 2]], values: &[f64], point: [f64; 2]) -> f64 {
    let interpolated = match (corners, values) {
        ([a, b, c], [fa, fb, fc]) => triangle([*a, *b, *c], [*fa, *fb, *fc], point),
        ([a, b, c, d], [fa, fb, fc, fd]) => bilinear([*a, *b, *c, *d], [*fa, *fb, *fc, *fd], point)
            .or_else(|| mean_value(corners, values, point)),
        _ => mean_value(corners, values, point),
    };
    interpolated.unwrap_or_else(|| mean(values))
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn cross(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

fn dot(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

fn minus(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    [a[0] - b[0], a[1] - b[1]]
}

/// Barycentric interpolation; `None` for a triangle without area.
fn triangle(corners: [[f64; 2]; 3], values: [f64; 3], point: [f64; 2]) -> Option<f64> {
    let [a, b, c] = corners.map(|corner| minus(corner, point));
    // Each weight is twice the area of the sub-triangle facing its corner.
    let weights = [cross(b, c), cross(c, a), cross(a, b)];
    let total: f64 = weights.iter().sum();
    if total == 0.0 || !total.is_finite() {
        return None;
    }
    let sum: f64 = weights.iter().zip(values).map(|(w, f)| w * f).sum();
    Some(sum / total)
}

/// How far outside [0, 1] a bilinear coordinate may fall from rounding and still count as
/// on the element (it is then clamped).
const PARAMETER_SLACK: f64 = 1e-9;

/// Bilinear interpolation in the quad's (u, v) coordinates; `None` when the map does not
/// invert to a point of the unit square (a concave or degenerate quad).
fn bilinear(corners: [[f64; 2]; 4], values: [f64; 4], point: [f64; 2]) -> Option<f64> {
    let [a, b, c, d] = corners;
    // point = a + u e + v f + u v g
    let e = minus(b, a);
    let f = minus(d, a);
    let g = [a[0] - b[0] + c[0] - d[0], a[1] - b[1] + c[1] - d[1]];
    let h = minus(point, a);
    // Crossing `h - v f = u (e + v g)` with `e + v g` leaves k2 v^2 + k1 v + k0 = 0.
    let k2 = cross(g, f);
    let k1 = cross(e, f) + cross(h, g);
    let k0 = cross(h, e);
    let candidates = if k2 == 0.0 {
        [-k0 / k1, f64::NAN]
    } else {
        let discriminant = k1 * k1 - 4.0 * k0 * k2;
        if discriminant < 0.0 {
            return None;
        }
        // The form without cancellation: one root from q, the other from k0 / q.
        let q = -0.5 * (k1 + k1.signum() * discriminant.sqrt());
        [q / k2, k0 / q]
    };
    let inside = |t: f64| (-PARAMETER_SLACK..=1.0 + PARAMETER_SLACK).contains(&t);
    candidates.into_iter().filter(|v| inside(*v)).find_map(|v| {
        let along = [e[0] + v * g[0], e[1] + v * g[1]];
        let length = dot(along, along);
        if length == 0.0 {
            return None;
        }
        let u = dot(minus(h, [v * f[0], v * f[1]]), along) / length;
        inside(u).then(|| {
            let (u, v) = (u.clamp(0.0, 1.0), v.clamp(0.0, 1.0));
            let [fa, fb, fc, fd] = values;
            (1.0 - u) * (1.0 - v) * fa + u * (1.0 - v) * fb + u * v * fc + (1.0 - u) * v * fd
        })
    })
}

/// Mean value interpolation; `None` when the weights do not add up to a usable total.
fn mean_value(corners: &[[f64; 2]], values: &[f64], point: [f64; 2]) -> Option<f64> {
    let count = corners.len();
    let spokes: Vec<[f64; 2]> = corners.iter().map(|c| minus(*c, point)).collect();
    let lengths: Vec<f64> = spokes.iter().map(|s| s[0].hypot(s[1])).collect();
    // On a corner: its value.
    if let Some(at) = lengths.iter().position(|length| *length == 0.0) {
        return values.get(at).copied();
    }
    // Per edge i (corner i to i + 1): twice the signed area and the dot product of its spokes.
    let mut areas = Vec::with_capacity(count);
    let mut dots = Vec::with_capacity(count);
    for i in 0..count {
        let j = (i + 1) % count;
        let (Some(&si), Some(&sj)) = (spokes.get(i), spokes.get(j)) else {
            return None;
        };
        let (area, along) = (cross(si, sj), dot(si, sj));
        if area == 0.0 && along < 0.0 {
            // On edge i: linear between its corners.
            let (ri, rj) = (*lengths.get(i)?, *lengths.get(j)?);
            return Some((rj * values.get(i)? + ri * values.get(j)?) / (ri + rj));
        }
        areas.push(area);
        dots.push(along);
    }
    let (mut total, mut weighted) = (0.0, 0.0);
    for i in 0..count {
        let before = (i + count - 1) % count;
        let after = (i + 1) % count;
        let length = *lengths.get(i)?;
        // tan(half angle) of the edges before and after the corner, over the spoke length.
        let half_tangent = |edge: usize, other_corner: usize| -> Option<f64> {
            let area = *areas.get(edge)?;
            if area == 0.0 {
                return Some(0.0);
            }
            Some((lengths.get(other_corner)? - dots.get(edge)? / length) / area)
        };
        let weight = half_tangent(before, before)? + half_tangent(i, after)?;
        total += weight;
        weighted += weight * values.get(i)?;
    }
    (total != 0.0 && total.is_finite()).then(|| weighted / total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(point: [f64; 2]) -> f64 {
        3.0 + 0.25 * point[0] - 1.5 * point[1]
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    fn points_in(corners: &[[f64; 2]]) -> Vec<[f64; 2]> {
        // Corners, edge midpoints and blends of corners towards the first one.
        let mut points = corners.to_vec();
        for (i, a) in corners.iter().enumerate() {
            let b = corners[(i + 1) % corners.len()];
            points.push([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0]);
            points.push([0.7 * a[0] + 0.3 * b[0], 0.7 * a[1] + 0.3 * b[1]]);
        }
        let n = corners.len() as f64;
        let centroid = corners
            .iter()
            .fold([0.0, 0.0], |s, c| [s[0] + c[0] / n, s[1] + c[1] / n]);
        points.push(centroid);
        for c in corners {
            points.push([
                0.6 * centroid[0] + 0.4 * c[0],
                0.6 * centroid[1] + 0.4 * c[1],
            ]);
        }
        points
    }

    fn check_linear(corners: &[[f64; 2]]) {
        let values: Vec<f64> = corners.iter().map(|c| linear(*c)).collect();
        for point in points_in(corners) {
            let got = interpolate(corners, &values, point);
            assert!(close(got, linear(point)), "{corners:?} at {point:?}: {got}");
        }
    }

    #[test]
    fn every_shape_reproduces_a_linear_field() {
        check_linear(&[[0.0, 0.0], [4.0, 1.0], [1.0, 3.0]]);
        check_linear(&[[0.0, 0.0], [1.0, 3.0], [4.0, 1.0]]);
        // A square, a skewed convex quad, both orientations.
        check_linear(&[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]);
        check_linear(&[[0.0, 0.0], [5.0, 0.5], [4.0, 3.0], [-1.0, 2.0]]);
        check_linear(&[[-1.0, 2.0], [4.0, 3.0], [5.0, 0.5], [0.0, 0.0]]);
        // A concave quad (the bilinear map folds) and a pentagon: mean value coordinates.
        check_linear(&[[0.0, 0.0], [4.0, 0.0], [1.0, 1.0], [0.0, 4.0]]);
        check_linear(&[[0.0, 0.0], [3.0, 0.0], [4.0, 2.0], [1.5, 4.0], [-1.0, 2.0]]);
        // Large coordinates, as in UTM.
        check_linear(&[
            [500_000.0, 6_100_000.0],
            [500_100.0, 6_100_010.0],
            [500_090.0, 6_100_120.0],
            [499_990.0, 6_100_100.0],
        ]);
    }

    #[test]
    fn quads_are_bilinear_not_split() {
        // On a unit square with one corner raised, bilinear gives 1/4 at the centre; any
        // split into two triangles gives 0 or 1/2.
        let square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        let values = [0.0, 0.0, 1.0, 0.0];
        assert!(close(interpolate(&square, &values, [0.5, 0.5]), 0.25));
        assert!(close(interpolate(&square, &values, [0.25, 0.5]), 0.125));
        assert!(close(interpolate(&square, &values, [1.0, 0.5]), 0.5));
    }

    #[test]
    fn mean_value_coordinates_are_barycentric_on_a_triangle() {
        let corners = [[0.0, 0.0], [4.0, 1.0], [1.0, 3.0]];
        let values = [2.0, -1.0, 7.0];
        for point in points_in(&corners) {
            let a = triangle([corners[0], corners[1], corners[2]], values, point).unwrap();
            let b = mean_value(&corners, &values, point).unwrap();
            assert!(close(a, b), "{point:?}: {a} {b}");
        }
    }

    #[test]
    fn degenerate_elements_give_the_mean() {
        let flat = [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]];
        assert_eq!(interpolate(&flat, &[1.0, 2.0, 6.0], [0.5, 0.5]), 3.0);
        let quad = [[1.0, 1.0]; 4];
        assert_eq!(interpolate(&quad, &[1.0, 2.0, 3.0, 6.0], [1.0, 1.0]), 1.0);
        let nan = interpolate(
            &[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
            &[1.0, f64::NAN, 2.0],
            [0.2, 0.2],
        );
        assert!(nan.is_nan());
    }
}

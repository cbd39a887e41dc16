//! Node values from element values, the way MIKE's tools compute them, for smooth shading of
//! element items.
//!
//! MIKE's tools reconstruct node values from the surrounding element centres with the
//! pseudo-Laplacian weights of Holmes and Connell (1989): DHI's MATLAB toolbox
//! (`mzCalcNodeValues`), DHI.Mesh (`MeshNodeInterpolation`) and MIKE IO
//! (`get_node_centered_data`) all name it. For node `n` and the centres `c_i` of its elements,
//! with `d_i = c_i - n`, the moments `R = sum d_i`, `Ixx`, `Iyy`, `Ixy` (sums of products of
//! the `d_i`) give `lambda = (Ixy Ry - Iyy Rx, Ixy Rx - Ixx Ry) / (Ixx Iyy - Ixy^2)` and the
//! weights `w_i = 1 + lambda . d_i`, which make the node value of a linear field exact. Like
//! DHI's tools (their default) the weights are clipped to [0, 2]: all weights are then
//! non-negative, so a node value stays within the values of its elements and a tile shows no
//! colour the data does not have, at the price of exactness for linear fields at the few
//! (boundary) nodes where clipping acts. Where the moments are degenerate (a node of one
//! element, or of elements whose centres are in a line) or the weights add up to nothing, the
//! weights are the inverse distances instead, as in DHI's tools (at a node of two elements the
//! exact weights are zero, so such nodes take inverse distances too).
//!
//! MIKE IO 3.1 differs from DHI's tools in two ways that Basin does not copy: its vectorised
//! form evaluates `lambda` from each `d_i` instead of from the sums `R`, which breaks exactness
//! for linear fields at every node (tests/python/test_mesh_sampling_mikeio.py shows it), and it
//! splits quadrilaterals into two triangles whose centres it averages along the wrong axis.
//! Here a quadrilateral is one element with its centre at the mean of its corners, as in DHI's
//! MATLAB toolbox.
//!
//! Elements whose value is NaN (dry, or the delete value) take no part, so the nodes on a
//! wet/dry line take the wet side's values; a node with no wet element is NaN.
//!
//! The sums are accumulated element by element in two passes, so no node-to-element table is
//! built; the passes hold about 100 bytes per node, freed on return.

/// The per-node sums of the first pass.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    rx: f64,
    ry: f64,
    ixx: f64,
    iyy: f64,
    ixy: f64,
}

/// The per-node sums of the second pass.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    weighted: f64,
    weights: f64,
    inverse_weighted: f64,
    inverse_weights: f64,
    plain: f64,
    count: u32,
}

/// How far the moment determinant must be from zero, relative to `Ixx Iyy`, for the
/// pseudo-Laplacian to be used (DHI's threshold).
const DEGENERATE_MOMENTS: f64 = 1e-10;

/// The least sum of pseudo-Laplacian weights (each about 1) that is not rounding noise, as
/// in DHI's MATLAB toolbox. At a node of two elements the exact weights are both zero (no
/// other weights make the first moments vanish), and what rounding leaves of them must not be
/// divided by.
const WEIGHTS_MIN: f64 = 1e-10;

/// The value at each of `node_count` nodes from the values of elements, each given as its
/// corner nodes (indices below `node_count`, into `node_xy`) and its value.
pub(super) fn node_values<'a>(
    node_count: usize,
    node_xy: &[[f64; 2]],
    elements: impl Iterator<Item = (&'a [u32], f32)> + Clone,
) -> Vec<f32> {
    let wet = elements.filter(|(_, value)| !value.is_nan());
    let lambdas = lambdas(node_count, node_xy, wet.clone());
    let mut sums = vec![Sums::default(); node_count];
    for (corners, value) in wet {
        let value = f64::from(value);
        for (node, [dx, dy]) in spokes(node_xy, corners) {
            let (Some(s), Some(lambda)) = (sums.get_mut(node), lambdas.get(node)) else {
                continue;
            };
            if let Some([lx, ly]) = lambda {
                let weight = (1.0 + lx * dx + ly * dy).clamp(0.0, 2.0);
                s.weighted += weight * value;
                s.weights += weight;
            }
            let distance = dx.hypot(dy);
            if distance > 0.0 {
                s.inverse_weighted += value / distance;
                s.inverse_weights += 1.0 / distance;
            }
            s.plain += value;
            s.count += 1;
        }
    }
    sums.into_iter().map(Sums::value).collect()
}

/// The pseudo-Laplacian `lambda` of each node, or `None` where its moments are degenerate.
fn lambdas<'a>(
    node_count: usize,
    node_xy: &[[f64; 2]],
    elements: impl Iterator<Item = (&'a [u32], f32)>,
) -> Vec<Option<[f64; 2]>> {
    let mut moments = vec![Moments::default(); node_count];
    for (corners, _) in elements {
        for (node, [dx, dy]) in spokes(node_xy, corners) {
            if let Some(m) = moments.get_mut(node) {
                m.rx += dx;
                m.ry += dy;
                m.ixx += dx * dx;
                m.iyy += dy * dy;
                m.ixy += dx * dy;
            }
        }
    }
    moments
        .into_iter()
        .map(|m| {
            let determinant = m.ixx * m.iyy - m.ixy * m.ixy;
            (determinant > DEGENERATE_MOMENTS * (m.ixx * m.iyy)).then(|| {
                [
                    (m.ixy * m.ry - m.iyy * m.rx) / determinant,
                    (m.ixy * m.rx - m.ixx * m.ry) / determinant,
                ]
            })
        })
        .collect()
}

/// Each corner node of an element with the offset from it to the element's centre (the mean
/// of its corners).
fn spokes<'a>(
    node_xy: &'a [[f64; 2]],
    corners: &'a [u32],
) -> impl Iterator<Item = (usize, [f64; 2])> + 'a {
    let at = |node: u32| node_xy.get(node as usize).copied().unwrap_or([f64::NAN; 2]);
    let count = corners.len() as f64;
    let sum = corners.iter().fold([0.0, 0.0], |sum, node| {
        let [x, y] = at(*node);
        [sum[0] + x, sum[1] + y]
    });
    let centre = [sum[0] / count, sum[1] / count];
    corners.iter().map(move |node| {
        let [x, y] = at(*node);
        (*node as usize, [centre[0] - x, centre[1] - y])
    })
}

impl Sums {
    /// The node value: pseudo-Laplacian, else inverse distance, else the plain mean (every
    /// centre on the node, which only degenerate elements have), else NaN (no wet element).
    fn value(self) -> f32 {
        let value = if self.weights > WEIGHTS_MIN {
            self.weighted / self.weights
        } else if self.inverse_weights > 0.0 {
            self.inverse_weighted / self.inverse_weights
        } else if self.count > 0 {
            self.plain / f64::from(self.count)
        } else {
            f64::NAN
        };
        value as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4 x 4 grid of nodes, each cell split into two triangles.
    fn grid() -> (Vec<[f64; 2]>, Vec<[u32; 3]>) {
        let nodes: Vec<[f64; 2]> = (0..16)
            .map(|i| {
                [
                    f64::from(i % 4) * 10.0,
                    f64::from(i / 4) * 7.0 + f64::from(i % 4),
                ]
            })
            .collect();
        let mut triangles = Vec::new();
        for row in 0..3 {
            for column in 0..3 {
                let a = row * 4 + column;
                triangles.push([a, a + 1, a + 5]);
                triangles.push([a, a + 5, a + 4]);
            }
        }
        (nodes, triangles)
    }

    fn linear(p: [f64; 2]) -> f64 {
        2.0 + 0.1 * p[0] - 0.3 * p[1]
    }

    fn centre(nodes: &[[f64; 2]], t: &[u32; 3]) -> [f64; 2] {
        let c = t.map(|n| nodes[n as usize]);
        [
            (c[0][0] + c[1][0] + c[2][0]) / 3.0,
            (c[0][1] + c[1][1] + c[2][1]) / 3.0,
        ]
    }

    #[test]
    fn interior_nodes_of_a_linear_field_are_exact() {
        let (nodes, triangles) = grid();
        let values: Vec<f32> = triangles
            .iter()
            .map(|t| linear(centre(&nodes, t)) as f32)
            .collect();
        let result = node_values(
            nodes.len(),
            &nodes,
            triangles.iter().zip(&values).map(|(t, v)| (&t[..], *v)),
        );
        for interior in [5, 6, 9, 10] {
            let expected = linear(nodes[interior]);
            assert!(
                (f64::from(result[interior]) - expected).abs() < 1e-5,
                "node {interior}: {} vs {expected}",
                result[interior]
            );
        }
        // Clipped weights keep every node within the range of the element values.
        let (low, high) = values
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), v| (l.min(*v), h.max(*v)));
        assert!(
            result.iter().all(|v| (low..=high).contains(v)),
            "{result:?}"
        );
    }

    #[test]
    fn a_corner_of_one_element_takes_its_value_and_dry_elements_take_no_part() {
        let (nodes, triangles) = grid();
        let mut values: Vec<f32> = (0..triangles.len()).map(|i| i as f32).collect();
        let derive = |values: &[f32]| {
            let elements = triangles.iter().zip(values).map(|(t, v)| (&t[..], *v));
            node_values(16, &nodes, elements)
        };
        // Node 3 (x = 30, y = 3) belongs to triangle 4 only.
        assert_eq!(derive(&values)[3], 4.0);
        // Node 0 belongs to triangles 0 and 1; with 1 dry, node 0 is triangle 0's value.
        values[1] = f32::NAN;
        assert_eq!(derive(&values)[0], 0.0);
        // A node no wet element touches is NaN.
        values[4] = f32::NAN;
        let result = derive(&values);
        assert!(result[3].is_nan());
    }

    #[test]
    fn a_node_of_two_elements_takes_inverse_distances_not_rounding_noise() {
        // The exact weights of node 0 are zero; in floating point they add up to 5.6e-17.
        let nodes = [[2.75, 6.75], [22.25, 21.0], [8.25, 14.0], [19.75, 9.75]];
        let triangles = [[0, 1, 2], [0, 2, 3]];
        let values = [10.0_f32, 20.0];
        let result = node_values(
            4,
            &nodes,
            triangles.iter().zip(values).map(|(t, v)| (&t[..], v)),
        );
        let distance = |t: &[u32; 3]| {
            let c = centre(&nodes, t);
            (c[0] - nodes[0][0]).hypot(c[1] - nodes[0][1])
        };
        let (d0, d1) = (distance(&triangles[0]), distance(&triangles[1]));
        let expected = (10.0 / d0 + 20.0 / d1) / (1.0 / d0 + 1.0 / d1);
        assert!(
            (f64::from(result[0]) - expected).abs() < 1e-5,
            "{} vs {expected}",
            result[0]
        );
    }
}

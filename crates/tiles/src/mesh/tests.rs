//! Pixel centres on known meshes: which element holds them, ties, holes, layered meshes,
//! interpolation, and bad input.

use std::sync::Arc;

use basin_formats::model::{ElementKind, Elements, MeshGeometry, MeshLayers, Nodes};

use super::*;

fn mesh(nodes: &[[f64; 2]], elements: &[(ElementKind, &[u32])]) -> MeshGeometry {
    let mut geometry = MeshGeometry {
        nodes: Nodes {
            ids: (1..=nodes.len() as i64).collect(),
            x: nodes.iter().map(|n| n[0]).collect(),
            y: nodes.iter().map(|n| n[1]).collect(),
            z: vec![0.0; nodes.len()],
            codes: vec![0; nodes.len()],
        },
        elements: Elements::default(),
        ..MeshGeometry::default()
    };
    for (id, (kind, refs)) in (1..).zip(elements) {
        geometry.elements.push(id, *kind, refs);
    }
    geometry
}

fn field(
    geometry: &MeshGeometry,
    values: &[f32],
    location: ValueLocation,
    shading: Shading,
) -> MeshField {
    let index = Arc::new(MeshIndex::build(geometry).unwrap());
    MeshField::new(index, values.into(), location, shading).unwrap()
}

fn sample(field: &MeshField, points: &[[f64; 2]]) -> Vec<f32> {
    let mut out = vec![0.0; points.len()];
    field.sample(points, 1.0, &mut out);
    out
}

/// The square [0, 2] x [0, 2] cut along its diagonal from (0, 0) to (2, 2): element 0 below
/// the diagonal, element 1 above.
fn two_triangles() -> MeshGeometry {
    mesh(
        &[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]],
        &[
            (ElementKind::Triangle, &[0, 1, 2]),
            (ElementKind::Triangle, &[0, 2, 3]),
        ],
    )
}

/// A perturbed `side` x `side` grid of nodes; cells alternate between quads and two
/// triangles. Node `i` is at column `i % side`, row `i / side`.
fn grid_mesh(side: u32) -> MeshGeometry {
    let mut nodes = Vec::new();
    for row in 0..side {
        for column in 0..side {
            let wobble = f64::from((row * 7 + column * 13) % 5) * 0.07 - 0.14;
            let inner = column > 0 && column + 1 < side && row > 0 && row + 1 < side;
            let shift = if inner { wobble } else { 0.0 };
            nodes.push([
                500_000.0 + f64::from(column) * 10.0 + shift * 10.0,
                6_100_000.0 + f64::from(row) * 10.0 - shift * 7.0,
            ]);
        }
    }
    let mut cells: Vec<(ElementKind, Vec<u32>)> = Vec::new();
    for row in 0..side - 1 {
        for column in 0..side - 1 {
            let a = row * side + column;
            let (b, c, d) = (a + 1, a + side + 1, a + side);
            if (row + column) % 3 == 0 {
                cells.push((ElementKind::Quad, vec![a, b, c, d]));
            } else {
                cells.push((ElementKind::Triangle, vec![a, b, c]));
                cells.push((ElementKind::Triangle, vec![a, c, d]));
            }
        }
    }
    let refs: Vec<(ElementKind, &[u32])> = cells.iter().map(|(k, n)| (*k, &n[..])).collect();
    mesh(&nodes, &refs)
}

#[test]
fn pixel_centres_take_the_element_that_holds_them() {
    let f = field(
        &two_triangles(),
        &[10.0, 20.0],
        ValueLocation::Elements,
        Shading::Flat,
    );
    let got = sample(&f, &[[1.5, 0.5], [0.5, 1.5], [1.9, 0.1], [0.1, 1.9]]);
    assert_eq!(got, [10.0, 20.0, 10.0, 20.0]);
    assert_eq!(
        f.extent(),
        Bounds {
            min_x: 0.0,
            min_y: 0.0,
            max_x: 2.0,
            max_y: 2.0
        }
    );
}

#[test]
fn points_on_a_shared_edge_take_the_first_element_whatever_came_before() {
    let f = field(
        &two_triangles(),
        &[10.0, 20.0],
        ValueLocation::Elements,
        Shading::Flat,
    );
    // The diagonal and its ends belong to both elements: element 0 wins, even right after a
    // point strictly inside element 1 (the remembered element is not enough).
    let diagonal = [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0], [0.5, 0.5]];
    for before in [[0.5, 1.5], [1.5, 0.5]] {
        let mut points = vec![before];
        points.extend(diagonal);
        assert_eq!(sample(&f, &points)[1..], [10.0; 4], "after {before:?}");
    }
    // Outer edges belong to their one element.
    assert_eq!(
        sample(&f, &[[1.0, 0.0], [2.0, 1.0], [1.0, 2.0], [0.0, 1.0]]),
        [10.0, 10.0, 20.0, 20.0]
    );
    let index = MeshIndex::build(&two_triangles()).unwrap();
    assert_eq!(index.element_at(1.0, 1.0), Some(0));
    assert_eq!(index.element_at(0.5, 1.5), Some(1));
    assert_eq!(index.element_at(3.0, 1.0), None);
}

#[test]
fn points_outside_or_not_finite_are_nan() {
    let f = field(
        &two_triangles(),
        &[10.0, 20.0],
        ValueLocation::Elements,
        Shading::Smooth,
    );
    let outside = [
        [-0.1, 1.0],
        [2.0000001, 1.0],
        [1.0, -1e-12],
        [f64::NAN, 1.0],
        [1.0, f64::INFINITY],
        [1e300, 1e300],
    ];
    assert!(sample(&f, &outside).iter().all(|v| v.is_nan()));
}

#[test]
fn a_quad_is_one_element_and_smooth_shading_is_bilinear_in_it() {
    let square = mesh(
        &[[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]],
        &[(ElementKind::Quad, &[0, 1, 2, 3])],
    );
    let flat = field(&square, &[7.0], ValueLocation::Elements, Shading::Flat);
    assert_eq!(
        sample(&flat, &[[1.0, 1.0], [4.0, 4.0], [2.0, 0.0]]),
        [7.0; 3]
    );
    let nodes = [0.0, 0.0, 8.0, 0.0];
    let smooth = field(&square, &nodes, ValueLocation::Nodes, Shading::Smooth);
    assert_eq!(
        sample(&smooth, &[[2.0, 2.0], [4.0, 4.0], [4.0, 2.0], [1.0, 3.0]]),
        [2.0, 8.0, 4.0, 1.5]
    );
    // Node values drawn flat: the mean of the corners.
    let flat_nodes = field(&square, &nodes, ValueLocation::Nodes, Shading::Flat);
    assert_eq!(sample(&flat_nodes, &[[3.9, 3.9]]), [2.0]);
}

#[test]
fn a_hole_in_the_mesh_is_nan_and_its_rim_belongs_to_the_elements_around_it() {
    // A 4 x 4 grid of nodes (3 x 3 cells) without the middle cell.
    let nodes: Vec<[f64; 2]> = (0..16)
        .map(|i| [f64::from(i % 4), f64::from(i / 4)])
        .collect();
    let mut cells: Vec<[u32; 4]> = Vec::new();
    for row in 0..3 {
        for column in 0..3 {
            if (row, column) != (1, 1) {
                let a = row * 4 + column;
                cells.push([a, a + 1, a + 5, a + 4]);
            }
        }
    }
    let refs: Vec<(ElementKind, &[u32])> =
        cells.iter().map(|c| (ElementKind::Quad, &c[..])).collect();
    let values: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let f = field(
        &mesh(&nodes, &refs),
        &values,
        ValueLocation::Elements,
        Shading::Flat,
    );
    let got = sample(
        &f,
        &[
            [1.5, 1.5],
            [1.2, 1.8],
            [1.5, 1.0],
            [1.0, 1.5],
            [2.0, 2.0],
            [0.5, 0.5],
        ],
    );
    assert!(got[0].is_nan() && got[1].is_nan());
    // The rim: (1.5, 1) is on cell 1 (below the hole), (1, 1.5) on cell 3 (left of it); the
    // corner (2, 2) is shared by cells 4 and 6 (right of and above the hole): cell 4 wins.
    assert_eq!(got[2..], [1.0, 3.0, 4.0, 0.0]);
    let index = MeshIndex::build(&mesh(&nodes, &refs)).unwrap();
    assert_eq!(index.element_count(), 8);
    assert!(index.approximate_bytes() > 16 * 16);
}

/// A sigma mesh of two prisms per column over two triangles, stored as DFSU stores it:
/// nodes column by column from the bottom up, elements column by column from the bottom up.
fn layered() -> MeshGeometry {
    let base = [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]];
    let levels = 3;
    let mut nodes = Vec::new();
    for xy in base {
        for _ in 0..levels {
            nodes.push(xy);
        }
    }
    let node = |column: u32, level: u32| column * levels + level;
    let mut prisms = Vec::new();
    for triangle in [[0, 1, 2], [0, 2, 3]] {
        for layer in 0..levels - 1 {
            let mut refs: Vec<u32> = triangle.iter().map(|c| node(*c, layer)).collect();
            refs.extend(triangle.iter().map(|c| node(*c, layer + 1)));
            prisms.push(refs);
        }
    }
    let refs: Vec<(ElementKind, &[u32])> = prisms
        .iter()
        .map(|p| (ElementKind::Prism, &p[..]))
        .collect();
    let mut geometry = mesh(&nodes, &refs);
    for (z, level) in geometry.nodes.z.iter_mut().zip((0..levels).cycle()) {
        *z = -10.0 + 5.0 * f64::from(level);
    }
    geometry.layers = Some(MeshLayers {
        count: 2,
        sigma_count: 2,
    });
    geometry
}

#[test]
fn a_layered_mesh_draws_the_top_element_of_each_column() {
    let geometry = layered();
    let index = Arc::new(MeshIndex::build(&geometry).unwrap());
    assert_eq!(index.element_count(), 2);
    assert_eq!(index.element_at(1.5, 0.5), Some(1));
    assert_eq!(index.element_at(0.5, 1.5), Some(3));
    let values: Arc<[f32]> = [1.0, 2.0, 3.0, 4.0].into();
    let flat = MeshField::new(
        index.clone(),
        values,
        ValueLocation::Elements,
        Shading::Flat,
    )
    .unwrap();
    assert_eq!(
        sample(&flat, &[[1.5, 0.5], [0.5, 1.5], [1.0, 1.0]]),
        [2.0, 4.0, 2.0]
    );
    // Node values come per 3D node; the surface takes the top node of each column.
    let at_nodes: Arc<[f32]> = (0..12).map(|n| n as f32).collect();
    let smooth = MeshField::new(
        index.clone(),
        at_nodes,
        ValueLocation::Nodes,
        Shading::Smooth,
    )
    .unwrap();
    assert_eq!(
        sample(&smooth, &[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]),
        [2.0, 5.0, 8.0, 11.0]
    );
    // Values of the 2D surface alone are the wrong length.
    let short = MeshField::new(
        index,
        [1.0, 2.0].into(),
        ValueLocation::Elements,
        Shading::Flat,
    );
    assert_eq!(
        short.unwrap_err(),
        MeshError::WrongValueCount {
            location: ValueLocation::Elements,
            expected: 4,
            given: 2
        }
    );
}

#[test]
fn vertical_profiles_and_line_meshes_have_nothing_to_draw() {
    let lines = mesh(
        &[[0.0, 0.0], [1.0, 0.0], [2.0, 1.0]],
        &[(ElementKind::Line, &[0, 1]), (ElementKind::Line, &[1, 2])],
    );
    assert_eq!(
        MeshIndex::build(&lines).unwrap_err(),
        MeshError::NothingToDraw
    );
    let points = mesh(&[[0.0, 0.0]], &[(ElementKind::Vertex, &[0])]);
    assert_eq!(
        MeshIndex::build(&points).unwrap_err(),
        MeshError::NothingToDraw
    );
    // A vertical profile: quads standing in the x-z plane, two layers.
    let mut profile = mesh(
        &[
            [0.0, 0.0],
            [0.0, 0.0],
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0, 0.0],
            [1.0, 0.0],
        ],
        &[
            (ElementKind::Quad, &[0, 3, 4, 1]),
            (ElementKind::Quad, &[1, 4, 5, 2]),
        ],
    );
    profile.layers = Some(MeshLayers {
        count: 2,
        sigma_count: 2,
    });
    assert_eq!(
        MeshIndex::build(&profile).unwrap_err(),
        MeshError::NothingToDraw
    );
    assert!(MeshIndex::build(&MeshGeometry::default()).is_err());
}

#[test]
fn broken_geometry_is_an_error_not_a_panic() {
    let out_of_range = mesh(
        &[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        &[(ElementKind::Triangle, &[0, 1, 3])],
    );
    assert_eq!(
        MeshIndex::build(&out_of_range).unwrap_err(),
        MeshError::NodeOutOfRange {
            element: 0,
            node: 3,
            nodes: 3
        }
    );
    let mut ragged = two_triangles();
    ragged.nodes.y.pop();
    assert!(matches!(
        MeshIndex::build(&ragged),
        Err(MeshError::NodeArrays { x: 4, y: 3 })
    ));
    let mut offsets = two_triangles();
    offsets.elements.offsets[1] = 99;
    assert!(matches!(
        MeshIndex::build(&offsets),
        Err(MeshError::Connectivity { element: 0 })
    ));
    let mut short = two_triangles();
    short.elements.offsets.pop();
    assert!(matches!(
        MeshIndex::build(&short),
        Err(MeshError::Connectivity { .. })
    ));
    // A layered mesh whose elements are not layered.
    let mut flat_layers = two_triangles();
    flat_layers.layers = Some(MeshLayers {
        count: 2,
        sigma_count: 2,
    });
    let error = MeshIndex::build(&flat_layers).unwrap_err();
    assert!(matches!(error, MeshError::Layers(_)), "{error}");
    let index = Arc::new(MeshIndex::build(&two_triangles()).unwrap());
    let wrong = MeshField::new(
        index,
        [1.0; 3].into(),
        ValueLocation::Nodes,
        Shading::Smooth,
    );
    assert_eq!(
        wrong.unwrap_err().to_string(),
        "the mesh needs 4 values per node, 3 were given"
    );
}

#[test]
fn elements_with_a_corner_that_is_not_finite_are_not_drawn() {
    let mut geometry = mesh(
        &[
            [0.0, 0.0],
            [2.0, 0.0],
            [2.0, 2.0],
            [0.0, 2.0],
            [f64::NAN, 1.0],
            [3.0, f64::INFINITY],
        ],
        &[
            (ElementKind::Triangle, &[0, 1, 2]),
            (ElementKind::Triangle, &[0, 2, 4]),
            (ElementKind::Triangle, &[1, 2, 5]),
            // Degenerate: no area, all three corners on a line.
            (ElementKind::Triangle, &[0, 1, 1]),
            (ElementKind::Triangle, &[0, 2, 3]),
        ],
    );
    geometry.nodes.z.fill(f64::NAN);
    let index = Arc::new(MeshIndex::build(&geometry).unwrap());
    assert_eq!(index.element_count(), 3);
    for shading in [Shading::Flat, Shading::Smooth] {
        let f = MeshField::new(
            index.clone(),
            [1.0, 2.0, 3.0, 4.0, 5.0].into(),
            ValueLocation::Elements,
            shading,
        )
        .unwrap();
        let got = sample(&f, &[[1.5, 0.5], [0.5, 1.5], [1.0, 0.0]]);
        assert!(got.iter().all(|v| v.is_finite()), "{got:?}");
        if shading == Shading::Flat {
            // The degenerate element lies on the edge of element 0, which comes first.
            assert_eq!(got, [1.0, 5.0, 1.0]);
        }
    }
}

#[test]
fn polygons_and_pixels_are_drawn_by_their_outline() {
    let mut nodes = super::locate::U_SHAPE.to_vec();
    nodes.extend([[5.0, 0.0], [6.0, 0.0], [5.0, 1.0], [6.0, 1.0]]);
    let geometry = mesh(
        &nodes,
        &[
            // A U-shaped polygon and a VTK pixel (corners numbered row by row).
            (ElementKind::Polygon, &[0, 1, 2, 3, 4, 5, 6, 7]),
            (ElementKind::Pixel, &[8, 9, 10, 11]),
        ],
    );
    let f = field(
        &geometry,
        &[1.0, 2.0],
        ValueLocation::Elements,
        Shading::Flat,
    );
    let got = sample(
        &f,
        &[[0.5, 2.0], [1.5, 2.0], [2.5, 2.5], [5.5, 0.5], [5.9, 0.9]],
    );
    assert_eq!(got[0], 1.0);
    assert!(got[1].is_nan(), "the notch of the U");
    assert_eq!(got[2..], [1.0, 2.0, 2.0]);
    // Smooth over the polygon: a constant field stays constant.
    let smooth = field(&geometry, &[4.0; 12], ValueLocation::Nodes, Shading::Smooth);
    let got = sample(&smooth, &[[0.5, 2.0], [2.5, 0.5], [5.5, 0.5]]);
    assert!(got.iter().all(|v| (v - 4.0).abs() < 1e-6), "{got:?}");
}

fn linear(point: [f64; 2]) -> f64 {
    // Centred on the mesh, so the f32 output keeps its precision.
    12.5 + 0.25 * (point[0] - 500_050.0) - 0.75 * (point[1] - 6_100_050.0)
}

/// A lattice of points over `bounds`, not aligned with the mesh.
fn lattice(bounds: Bounds, side: u32) -> Vec<[f64; 2]> {
    let mut points = Vec::new();
    for row in 0..side {
        for column in 0..side {
            let t = (f64::from(column) + 0.37) / f64::from(side);
            let s = (f64::from(row) + 0.61) / f64::from(side);
            points.push([
                bounds.min_x + t * bounds.width(),
                bounds.min_y + s * bounds.height(),
            ]);
        }
    }
    points
}

#[test]
fn smooth_shading_reproduces_a_linear_field_given_at_nodes() {
    let geometry = grid_mesh(11);
    let at_nodes: Vec<f32> = geometry
        .nodes
        .x
        .iter()
        .zip(&geometry.nodes.y)
        .map(|(x, y)| linear([*x, *y]) as f32)
        .collect();
    let f = field(&geometry, &at_nodes, ValueLocation::Nodes, Shading::Smooth);
    let points = lattice(f.extent(), 97);
    let got = sample(&f, &points);
    let mut inside = 0;
    for (point, value) in points.iter().zip(&got) {
        if value.is_nan() {
            continue;
        }
        inside += 1;
        let expected = linear(*point);
        // The node values are f32: about 1e-6 of the field's range of 75.
        assert!(
            (f64::from(*value) - expected).abs() < 1e-4,
            "{point:?}: {value} vs {expected}"
        );
    }
    assert!(inside > 9_000, "{inside} points inside");
}

#[test]
fn smooth_shading_of_element_values_stays_within_their_range_and_keeps_dry_elements_dry() {
    let geometry = grid_mesh(9);
    let index = Arc::new(MeshIndex::build(&geometry).unwrap());
    let count = geometry.elements.len();
    let mut values: Vec<f32> = (0..count).map(|e| ((e * 37) % 11) as f32).collect();
    values[5] = f32::NAN;
    let f = MeshField::new(
        index.clone(),
        values.clone().into(),
        ValueLocation::Elements,
        Shading::Smooth,
    )
    .unwrap();
    let points = lattice(f.extent(), 64);
    let got = sample(&f, &points);
    for (point, value) in points.iter().zip(&got) {
        match index.element_at(point[0], point[1]) {
            Some(5) => assert!(value.is_nan()),
            Some(_) => assert!((0.0..=10.0).contains(value), "{point:?}: {value}"),
            None => assert!(value.is_nan()),
        }
    }
    // A constant field is constant everywhere.
    let constant = MeshField::new(
        index,
        vec![3.5; count].into(),
        ValueLocation::Elements,
        Shading::Smooth,
    )
    .unwrap();
    assert!(
        sample(&constant, &points)
            .iter()
            .all(|v| v.is_nan() || (v - 3.5).abs() < 1e-6)
    );
}

#[test]
fn results_do_not_depend_on_the_order_of_the_points() {
    // Points on the mesh's own lattice land on edges and corners.
    let geometry = grid_mesh(12);
    let values: Vec<f32> = (0..geometry.elements.len()).map(|e| e as f32).collect();
    let f = field(&geometry, &values, ValueLocation::Elements, Shading::Flat);
    let mut points = Vec::new();
    for row in 0..=22 {
        for column in 0..=22 {
            points.push([
                500_000.0 + f64::from(column) * 5.0,
                6_100_000.0 + f64::from(row) * 5.0,
            ]);
        }
    }
    points.extend(lattice(f.extent(), 40));
    let forward = sample(&f, &points);
    let reversed: Vec<[f64; 2]> = points.iter().rev().copied().collect();
    let mut backward = sample(&f, &reversed);
    backward.reverse();
    let one_by_one: Vec<f32> = points.iter().map(|p| sample(&f, &[*p])[0]).collect();
    let same = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
    };
    assert!(same(&forward, &backward));
    assert!(same(&forward, &one_by_one));
    // Every point of the lattice inside the outline found an element.
    let outline_nodes = forward.iter().take(23 * 23).filter(|v| v.is_nan()).count();
    assert_eq!(outline_nodes, 0);
}

#[test]
fn shadings_parse_from_their_names() {
    assert_eq!(Shading::parse("smooth"), Some(Shading::Smooth));
    assert_eq!(Shading::parse("FLAT"), Some(Shading::Flat));
    assert_eq!(Shading::parse("gouraud"), None);
    assert_eq!(
        ValueLocation::of(basin_formats::model::ItemLocation::Node),
        ValueLocation::Nodes
    );
}

#[test]
fn indexes_and_fields_are_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<MeshIndex>();
    shared::<MeshField>();
    let f = field(
        &two_triangles(),
        &[10.0, 20.0],
        ValueLocation::Elements,
        Shading::Flat,
    );
    let boxed: Box<dyn Field> = Box::new(f);
    assert_eq!(sample_dyn(boxed.as_ref(), &[[1.5, 0.5]]), [10.0]);
}

fn sample_dyn(field: &dyn Field, points: &[[f64; 2]]) -> Vec<f32> {
    let mut out = vec![0.0; points.len()];
    field.sample(points, 1.0, &mut out);
    out
}

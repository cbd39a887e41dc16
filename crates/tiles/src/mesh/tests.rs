use super::*;
use basin_formats::model::{Elements, MeshLayers, Nodes};

fn nodes(points: &[(f64, f64)]) -> Nodes {
    Nodes {
        ids: (1..=points.len() as i64).collect(),
        x: points.iter().map(|p| p.0).collect(),
        y: points.iter().map(|p| p.1).collect(),
        z: vec![0.0; points.len()],
        codes: vec![0; points.len()],
    }
}

/// Two triangles side by side (0-1-3, 1-4-3) and a quad to the right (1-2-5-4):
/// ```text
/// 3 --- 4 --- 5
/// |  0 / |  2  |
/// | / 1  |     |
/// 0 --- 1 --- 2
/// ```
fn small_mesh() -> MeshGeometry {
    let mut elements = Elements::default();
    elements.push(1, ElementKind::Triangle, &[0, 1, 3]);
    elements.push(2, ElementKind::Triangle, &[1, 4, 3]);
    elements.push(3, ElementKind::Quad, &[1, 2, 5, 4]);
    MeshGeometry {
        nodes: nodes(&[
            (0.0, 0.0),
            (10.0, 0.0),
            (20.0, 0.0),
            (0.0, 10.0),
            (10.0, 10.0),
            (20.0, 10.0),
        ]),
        elements,
        ..MeshGeometry::default()
    }
}

fn sample(field: &MeshField, points: &[[f64; 2]]) -> Vec<f32> {
    let mut out = vec![0.0; points.len()];
    field.sample(points, 1.0, &mut out);
    out
}

#[test]
fn flat_shading_takes_the_element_under_the_point() {
    let index = Arc::new(MeshIndex::build(&small_mesh()).unwrap());
    assert_eq!(index.drawn_elements(), 3);
    assert_eq!(
        index.extent(),
        Bounds {
            min_x: 0.0,
            min_y: 0.0,
            max_x: 20.0,
            max_y: 10.0
        }
    );
    let field = MeshField::new(
        index,
        &[1.0, 2.0, 3.0],
        ValueLocation::Elements,
        Shading::Flat,
    )
    .unwrap();
    let values = sample(
        &field,
        &[
            [2.0, 2.0],
            [8.0, 8.0],
            [15.0, 5.0],
            [25.0, 5.0],
            [5.0, 5.0],
            [10.0, 5.0],
            [f64::NAN, 1.0],
        ],
    );
    assert_eq!(values[..3], [1.0, 2.0, 3.0]);
    assert!(values[3].is_nan(), "outside");
    assert_eq!(
        values[4], 1.0,
        "the shared diagonal goes to the lower element"
    );
    assert_eq!(
        values[5], 2.0,
        "the edge between 1 and the quad goes to element 1"
    );
    assert!(values[6].is_nan());
}

#[test]
fn smooth_shading_reproduces_linear_node_fields() {
    let mesh = small_mesh();
    let linear = |x: f64, y: f64| 1.0 + 2.0 * x + 3.0 * y;
    let node_values: Vec<f32> = mesh
        .nodes
        .x
        .iter()
        .zip(&mesh.nodes.y)
        .map(|(&x, &y)| linear(x, y) as f32)
        .collect();
    let index = Arc::new(MeshIndex::build(&mesh).unwrap());
    let field = MeshField::new(
        index.clone(),
        &node_values,
        ValueLocation::Nodes,
        Shading::Smooth,
    )
    .unwrap();
    let points = [
        [1.0, 1.0],
        [9.0, 9.5],
        [12.5, 3.0],
        [19.0, 9.0],
        [10.0, 10.0],
    ];
    for (value, [x, y]) in sample(&field, &points).iter().zip(points) {
        assert!(
            (f64::from(*value) - linear(x, y)).abs() < 1e-4,
            "({x}, {y}): {value}"
        );
    }
    // Flat shading of node values: the mean of the element's corners.
    let flat = MeshField::new(
        index.clone(),
        &node_values,
        ValueLocation::Nodes,
        Shading::Flat,
    )
    .unwrap();
    assert_eq!(
        sample(&flat, &[[2.0, 2.0]])[0],
        ((1.0 + 21.0 + 31.0) / 3.0) as f32
    );
    // Element values made smooth: each node takes the inverse-distance mean around it; a node
    // with one element takes that element's value.
    let smooth = MeshField::new(
        index,
        &[1.0, 2.0, f32::NAN],
        ValueLocation::Elements,
        Shading::Smooth,
    )
    .unwrap();
    let values = sample(&smooth, &[[0.0, 0.0], [20.0, 0.0], [5.0, 5.0]]);
    assert_eq!(values[0], 1.0);
    assert!(
        values[1].is_nan(),
        "no data spreads only to nodes with nothing else"
    );
    assert!(values[2] > 1.0 && values[2] < 2.0);
}

#[test]
fn layered_meshes_draw_the_top_of_each_column() {
    // Two triangular columns of two layers: elements 0, 1 (column A, bottom to top), 2, 3 (B).
    let mut points = Vec::new();
    for z in 0..3 {
        for (x, y) in [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0), (10.0, 10.0)] {
            points.push((x, y + 0.0 * f64::from(z)));
        }
    }
    let level = |z: u32, corner: u32| z * 4 + corner;
    let mut elements = Elements::default();
    for (column, triangle) in [[0, 1, 2], [1, 3, 2]].iter().enumerate() {
        for layer in 0..2 {
            let lower: Vec<u32> = triangle.iter().map(|&c| level(layer, c)).collect();
            let upper: Vec<u32> = triangle.iter().map(|&c| level(layer + 1, c)).collect();
            let nodes: Vec<u32> = lower.into_iter().chain(upper).collect();
            elements.push(
                (column * 2 + layer as usize + 1) as i64,
                ElementKind::Prism,
                &nodes,
            );
        }
    }
    let mesh = MeshGeometry {
        nodes: nodes(&points),
        elements,
        layers: Some(MeshLayers {
            count: 2,
            sigma_count: 2,
        }),
        ..MeshGeometry::default()
    };
    let index = Arc::new(MeshIndex::build(&mesh).unwrap());
    assert_eq!(index.drawn_elements(), 2);
    let field = MeshField::new(
        index,
        &[10.0, 11.0, 20.0, 21.0],
        ValueLocation::Elements,
        Shading::Flat,
    )
    .unwrap();
    assert_eq!(sample(&field, &[[2.0, 2.0], [8.0, 8.0]]), [11.0, 21.0]);
}

#[test]
fn broken_meshes_and_values_are_errors() {
    let mut mesh = small_mesh();
    mesh.elements.push(4, ElementKind::Triangle, &[0, 1, 99]);
    assert_eq!(
        MeshIndex::build(&mesh).unwrap_err(),
        MeshError::BadNode { element: 3 }
    );
    let mut lines = Elements::default();
    lines.push(1, ElementKind::Line, &[0, 1]);
    let only_lines = MeshGeometry {
        nodes: nodes(&[(0.0, 0.0), (1.0, 1.0)]),
        elements: lines,
        ..MeshGeometry::default()
    };
    assert_eq!(
        MeshIndex::build(&only_lines).unwrap_err(),
        MeshError::NothingToDraw
    );
    let index = Arc::new(MeshIndex::build(&small_mesh()).unwrap());
    let wrong = MeshField::new(index, &[1.0], ValueLocation::Elements, Shading::Flat);
    assert_eq!(
        wrong.unwrap_err(),
        MeshError::WrongLength {
            expected: 3,
            given: 1
        }
    );
}

#[test]
fn a_large_mesh_is_sampled_through_the_index() {
    // 200 x 200 squares split into 80,000 triangles.
    let side = 200;
    let mut points = Vec::new();
    for row in 0..=side {
        for column in 0..=side {
            points.push((f64::from(column), f64::from(row)));
        }
    }
    let node = |column: u32, row: u32| row * (side + 1) + column;
    let mut elements = Elements::default();
    for row in 0..side {
        for column in 0..side {
            let (a, b, c, d) = (
                node(column, row),
                node(column + 1, row),
                node(column + 1, row + 1),
                node(column, row + 1),
            );
            elements.push(0, ElementKind::Triangle, &[a, b, c]);
            elements.push(0, ElementKind::Triangle, &[a, c, d]);
        }
    }
    let mesh = MeshGeometry {
        nodes: nodes(&points),
        elements,
        ..MeshGeometry::default()
    };
    let index = Arc::new(MeshIndex::build(&mesh).unwrap());
    let values: Vec<f32> = (0..index.drawn_elements()).map(|i| i as f32).collect();
    let field = MeshField::new(index, &values, ValueLocation::Elements, Shading::Flat).unwrap();
    let probes: Vec<[f64; 2]> = (0..256 * 256)
        .map(|i| {
            [
                f64::from(i % 256) * 0.7813 + 0.3007,
                f64::from(i / 256) * 0.7813 + 0.1003,
            ]
        })
        .collect();
    let found = sample(&field, &probes);
    for (value, [x, y]) in found.iter().zip(&probes) {
        let (column, row) = (x.floor(), y.floor());
        let lower = (x - column) > (y - row);
        let expected = (row * f64::from(side) + column) * 2.0 + if lower { 0.0 } else { 1.0 };
        assert_eq!(f64::from(*value), expected, "({x}, {y})");
    }
}

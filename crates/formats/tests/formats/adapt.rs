//! The adapters between kinds of data, with in-memory datasets: points to a mesh, a mesh to
//! features, features to a mesh, and the pairs without an adapter.

use std::sync::Arc;

use basin_formats::adapt::{AdaptOptions, Adapter, MESH_FIELDS_MAX, for_writer, for_writer_with};
use basin_formats::crs::Crs;
use basin_formats::model::{
    Coord, Data, DataKind, DataType, Dataset, ElementKind, Elements, Feature, FeatureSchema, Field,
    FieldType, Geometry, GeometryKind, Header, Item, ItemLocation, MeshGeometry, MeshHeader, Nodes,
    PointChunk, PointHeader, Quantity, TimeAxis, Value, Values,
};
use basin_formats::{FormatError, FormatResult};

/// Replays `dataset` through the adapter for `native` and collects what comes out.
fn adapt(dataset: &Dataset, native: DataKind) -> FormatResult<Dataset> {
    Dataset::collect(|sink| {
        let mut adapter = for_writer(native, sink);
        dataset.replay(adapter.as_mut())
    })
}

/// [`adapt`] with the triangulation of polygons turned off.
fn adapt_without_triangulation(dataset: &Dataset) -> FormatResult<Dataset> {
    Dataset::collect(|sink| {
        let options = AdaptOptions {
            triangulate: false,
            ..AdaptOptions::default()
        };
        let mut adapter = for_writer_with(DataKind::Mesh, options, sink);
        dataset.replay(adapter.as_mut())
    })
}

fn points() -> Dataset {
    Dataset {
        header: Header::Points(PointHeader {
            crs: Some(Crs::Epsg(25832)),
            z_item: Item::new("z", DataType::F64),
            items: vec![Item::new("column3", DataType::F64)],
            count: None,
        }),
        data: Data::Points(PointChunk {
            x: vec![1.0, 2.0, 3.0],
            y: vec![4.0, 5.0, 6.0],
            z: vec![-1.0, -2.0, -3.5],
            items: vec![vec![7.0, 8.0, 9.0]],
        }),
    }
}

#[test]
fn points_become_vertex_cells_with_z_as_node_z_and_node_item() {
    let mesh = adapt(&points(), DataKind::Mesh).unwrap();
    let Header::Mesh(header) = &mesh.header else {
        panic!()
    };
    let geometry = &header.geometry;
    assert_eq!(geometry.nodes.x, vec![1.0, 2.0, 3.0]);
    assert_eq!(geometry.nodes.z, vec![-1.0, -2.0, -3.5]);
    assert_eq!(geometry.elements.kinds, vec![ElementKind::Vertex; 3]);
    assert_eq!(geometry.elements.connectivity, vec![0, 1, 2]);
    assert_eq!(geometry.crs, Some(Crs::Epsg(25832)));
    let names: Vec<&str> = header.items.iter().map(|item| item.name.as_str()).collect();
    assert_eq!(names, vec!["z", "column3"]);
    assert!(
        header
            .items
            .iter()
            .all(|item| item.location == ItemLocation::Node)
    );
    let Data::Values(steps) = &mesh.data else {
        panic!()
    };
    assert_eq!(steps[0][0], Values::F64(vec![-1.0, -2.0, -3.5]));
    assert_eq!(steps[0][1], Values::F64(vec![7.0, 8.0, 9.0]));
}

fn mesh(steps: usize, items: usize) -> Dataset {
    let mut elements = Elements::default();
    elements.push(10, ElementKind::Quad, &[0, 1, 2, 3]);
    elements.push(11, ElementKind::Triangle, &[1, 4, 2]);
    let geometry = MeshGeometry {
        nodes: Nodes {
            ids: (1..=5).collect(),
            x: vec![0.0, 1.0, 1.0, 0.0, 2.0],
            y: vec![0.0, 0.0, 1.0, 1.0, 0.5],
            z: vec![-1.0, -2.0, -3.0, -4.0, -5.0],
            codes: vec![1, 1, 1, 1, 1],
        },
        elements,
        crs: Some(Crs::Named("UTM-32".into())),
        z_quantity: Quantity::bathymetry(),
        layers: None,
    };
    let mut item_list = vec![
        Item {
            nodata: Some(-1e-35),
            ..Item::new("level", DataType::F32)
        },
        Item {
            location: ItemLocation::Node,
            ..Item::new("depth", DataType::F64)
        },
        Item::new("flag", DataType::I16),
    ];
    item_list.truncate(items.min(3));
    for extra in 3..items {
        item_list.push(Item::new(format!("extra{extra}"), DataType::F64));
    }
    let data = (0..steps)
        .map(|step| {
            item_list
                .iter()
                .map(|item| match (item.name.as_str(), item.data_type) {
                    ("level", _) => Values::F32(vec![step as f32 + 0.5, -1e-35]),
                    ("depth", _) => Values::F64(vec![1.0, 2.0, 3.0, 4.0, 5.0 + step as f64]),
                    ("flag", _) => Values::I16(vec![3, -3]),
                    _ => Values::F64(vec![step as f64, 0.0]),
                })
                .collect()
        })
        .collect();
    Dataset {
        header: Header::Mesh(MeshHeader {
            geometry: Arc::new(geometry),
            items: item_list,
            time: if steps == 1 {
                TimeAxis::None
            } else {
                TimeAxis::Relative((0..steps).map(|step| step as f64).collect())
            },
        }),
        data: Data::Values(data),
    }
}

fn features_of(dataset: &Dataset) -> (&FeatureSchema, &Vec<Feature>) {
    let (Header::Features(schema), Data::Features(features)) = (&dataset.header, &dataset.data)
    else {
        panic!("features expected")
    };
    (schema, features)
}

#[test]
fn a_mesh_becomes_polygons_with_their_values_and_node_z() {
    let features = adapt(&mesh(1, 3), DataKind::Features).unwrap();
    let (schema, features) = features_of(&features);
    let names: Vec<&str> = schema
        .fields
        .iter()
        .map(|field| field.name.as_str())
        .collect();
    assert_eq!(names, vec!["id", "level", "depth", "flag"]);
    let types: Vec<FieldType> = schema.fields.iter().map(|field| field.field_type).collect();
    assert_eq!(
        types,
        vec![
            FieldType::Integer,
            FieldType::Float,
            FieldType::Float,
            FieldType::Integer
        ]
    );
    assert_eq!(schema.geometry_kind, GeometryKind::Polygon);
    assert!(schema.has_z);
    assert_eq!(schema.crs, Some(Crs::Named("UTM-32".into())));
    assert_eq!(features.len(), 2);
    assert_eq!(
        features[0].values,
        vec![
            Value::Integer(10),
            Value::Float(0.5),
            Value::Float(2.5),
            Value::Integer(3)
        ]
    );
    assert_eq!(
        features[1].values,
        vec![
            Value::Integer(11),
            Value::Null,
            Value::Float((2.0 + 5.0 + 3.0) / 3.0),
            Value::Integer(-3)
        ]
    );
    let Some(Geometry::Polygon(rings)) = &features[1].geometry else {
        panic!()
    };
    assert_eq!(
        rings[0],
        vec![
            Coord::xyz(1.0, 0.0, -2.0),
            Coord::xyz(2.0, 0.5, -5.0),
            Coord::xyz(1.0, 1.0, -3.0),
            Coord::xyz(1.0, 0.0, -2.0)
        ]
    );
}

#[test]
fn time_steps_become_fields_per_step_up_to_the_cap_then_the_last_step() {
    let features = adapt(&mesh(3, 1), DataKind::Features).unwrap();
    let (schema, list) = features_of(&features);
    let names: Vec<&str> = schema
        .fields
        .iter()
        .map(|field| field.name.as_str())
        .collect();
    assert_eq!(names, vec!["id", "level_0", "level_1", "level_2"]);
    assert_eq!(list[0].values[3], Value::Float(2.5));

    let steps = MESH_FIELDS_MAX / 2 + 1;
    let features = adapt(&mesh(steps, 2), DataKind::Features).unwrap();
    let (schema, list) = features_of(&features);
    let names: Vec<&str> = schema
        .fields
        .iter()
        .map(|field| field.name.as_str())
        .collect();
    assert_eq!(names, vec!["id", "level", "depth"]);
    assert_eq!(list[0].values[1], Value::Float(steps as f64 - 0.5));
}

#[test]
fn three_d_elements_cannot_become_features() {
    let mut dataset = mesh(1, 0);
    let Header::Mesh(header) = &mut dataset.header else {
        panic!()
    };
    let mut geometry = (*header.geometry).clone();
    let mut elements = Elements::default();
    elements.push(1, ElementKind::Prism, &[0, 1, 2, 3, 4, 0]);
    geometry.elements = elements;
    header.geometry = Arc::new(geometry);
    dataset.data = Data::Values(vec![vec![]]);
    let error = adapt(&dataset, DataKind::Features).unwrap_err();
    assert!(error.to_string().contains("wedge (VTK 13)"), "{error}");
}

#[test]
fn vertex_and_line_meshes_become_points_and_lines() {
    let from_points = adapt(&points(), DataKind::Mesh).unwrap();
    let features = adapt(&from_points, DataKind::Features).unwrap();
    let (schema, list) = features_of(&features);
    assert_eq!(schema.geometry_kind, GeometryKind::Point);
    assert_eq!(
        list[2].geometry,
        Some(Geometry::Point(Coord::xyz(3.0, 6.0, -3.5)))
    );
    assert_eq!(list[2].values[1], Value::Float(-3.5));
}

fn square(x: f64, y: f64, z: Option<f64>) -> Vec<Coord> {
    let c = |x, y| Coord { x, y, z, m: None };
    // Clockwise, as Shapefile stores exterior rings.
    vec![
        c(x, y),
        c(x, y + 1.0),
        c(x + 1.0, y + 1.0),
        c(x + 1.0, y),
        c(x, y),
    ]
}

fn features(geometries: Vec<Option<Geometry>>) -> Dataset {
    let count = geometries.len();
    Dataset {
        header: Header::Features(FeatureSchema {
            fields: vec![
                Field::new("name", FieldType::Text),
                Field::new("depth", FieldType::Float),
                Field::new("zone", FieldType::Integer),
            ],
            geometry_kind: GeometryKind::Polygon,
            has_z: true,
            has_m: false,
            crs: Some(Crs::Epsg(32632)),
        }),
        data: Data::Features(
            geometries
                .into_iter()
                .zip(0..count)
                .map(|(geometry, index)| Feature {
                    geometry,
                    values: vec![
                        Value::Text(format!("f{index}")),
                        if index == 1 {
                            Value::Null
                        } else {
                            Value::Float(index as f64 + 0.25)
                        },
                        Value::Integer(index as i64),
                    ],
                })
                .collect(),
        ),
    }
}

#[test]
fn polygons_become_elements_with_shared_vertices_merged() {
    let triangle = vec![
        Coord::xyz(1.0, 0.0, -7.0),
        Coord::xyz(2.0, 0.5, -8.0),
        Coord::xyz(1.0, 1.0, -9.0),
        Coord::xyz(1.0, 0.0, -7.0),
    ];
    let dataset = features(vec![
        Some(Geometry::Polygon(vec![square(0.0, 0.0, Some(-1.0))])),
        Some(Geometry::MultiPolygon(vec![vec![triangle]])),
    ]);
    let mesh = adapt(&dataset, DataKind::Mesh).unwrap();
    let Header::Mesh(header) = &mesh.header else {
        panic!()
    };
    let geometry = &header.geometry;
    assert_eq!(
        geometry.nodes.len(),
        5,
        "the shared edge's two vertices are merged"
    );
    assert_eq!(
        geometry.elements.kinds,
        vec![ElementKind::Quad, ElementKind::Triangle]
    );
    assert_eq!(geometry.crs, Some(Crs::Epsg(32632)));
    // The clockwise square is turned counter-clockwise, as MIKE expects.
    let square_nodes: Vec<(f64, f64)> = geometry
        .elements
        .nodes(0)
        .unwrap()
        .iter()
        .map(|&n| (geometry.nodes.x[n as usize], geometry.nodes.y[n as usize]))
        .collect();
    assert_eq!(
        square_nodes,
        vec![(1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.0, 0.0)]
    );
    // z comes from the vertex that first named a node.
    assert_eq!(geometry.nodes.z.iter().filter(|&&z| z == -1.0).count(), 4);
    assert!(geometry.nodes.z.contains(&-8.0));
    // All nodes lie on the outline here.
    assert!(geometry.nodes.codes.iter().all(|&code| code == 1));
    let names: Vec<&str> = header.items.iter().map(|item| item.name.as_str()).collect();
    assert_eq!(names, vec!["depth", "zone"]);
    let Data::Values(steps) = &mesh.data else {
        panic!()
    };
    let depth = steps[0][0].to_f64();
    assert_eq!(depth[0], 0.25);
    assert!(depth[1].is_nan());
    assert_eq!(steps[0][1], Values::F64(vec![0.0, 1.0]));
}

#[test]
fn interior_nodes_get_code_0() {
    let mut geometries = Vec::new();
    for (x, y) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
        geometries.push(Some(Geometry::Polygon(vec![square(x, y, None)])));
    }
    let mesh = adapt(&features(geometries), DataKind::Mesh).unwrap();
    let Header::Mesh(header) = &mesh.header else {
        panic!()
    };
    let nodes = &header.geometry.nodes;
    assert_eq!(nodes.len(), 9);
    let centre = (0..9)
        .find(|&i| nodes.x[i] == 1.0 && nodes.y[i] == 1.0)
        .unwrap();
    assert_eq!(nodes.codes[centre], 0);
    assert_eq!(nodes.codes.iter().filter(|&&code| code == 1).count(), 8);
    assert!(nodes.z.iter().all(|&z| z == 0.0));
}

#[test]
fn without_triangulation_features_that_are_not_triangles_or_quads_are_errors() {
    let pentagon = vec![
        Coord::xy(0.0, 0.0),
        Coord::xy(1.0, 0.0),
        Coord::xy(2.0, 1.0),
        Coord::xy(1.0, 2.0),
        Coord::xy(0.0, 1.0),
        Coord::xy(0.0, 0.0),
    ];
    let cases = vec![
        (Some(Geometry::Polygon(vec![pentagon])), "5 corners"),
        (
            Some(Geometry::Polygon(vec![
                square(0.0, 0.0, None),
                square(0.2, 0.2, None),
            ])),
            "1 holes",
        ),
        (Some(Geometry::Point(Coord::xy(0.0, 0.0))), "a point"),
        (
            Some(Geometry::LineString(vec![Coord::xy(0.0, 0.0)])),
            "a line",
        ),
        (None, "empty"),
    ];
    for (geometry, expected) in cases {
        let error = adapt_without_triangulation(&features(vec![geometry])).unwrap_err();
        assert!(matches!(error, FormatError::Incompatible { .. }), "{error}");
        assert!(error.to_string().contains(expected), "{error}");
        assert!(error.to_string().contains("feature 1"), "{error}");
    }
}

#[test]
fn mesh_to_features_to_mesh_keeps_the_geometry() {
    let source = mesh(1, 1);
    let features = adapt(&source, DataKind::Features).unwrap();
    let back = adapt(&features, DataKind::Mesh).unwrap();
    let (Header::Mesh(a), Header::Mesh(b)) = (&source.header, &back.header) else {
        panic!()
    };
    assert_eq!(a.geometry.nodes.x, b.geometry.nodes.x);
    assert_eq!(a.geometry.nodes.y, b.geometry.nodes.y);
    assert_eq!(a.geometry.nodes.z, b.geometry.nodes.z);
    assert_eq!(
        a.geometry.elements.connectivity,
        b.geometry.elements.connectivity
    );
    assert_eq!(a.geometry.elements.kinds, b.geometry.elements.kinds);
}

#[test]
fn same_kinds_pass_through_and_other_pairs_are_errors() {
    let source = mesh(2, 2);
    assert_eq!(adapt(&source, DataKind::Mesh).unwrap(), source);
    let error = adapt(&points(), DataKind::Grid).unwrap_err();
    assert!(matches!(error, FormatError::Incompatible { .. }), "{error}");
    let error = adapt(&source, DataKind::Points).unwrap_err();
    assert!(error.to_string().contains("no conversion"), "{error}");
}

/// The mesh of `dataset`'s features, and the element values of its first item.
fn mesh_of(dataset: &Dataset) -> (MeshGeometry, Vec<f64>) {
    let mesh = adapt(dataset, DataKind::Mesh).unwrap();
    let Header::Mesh(header) = &mesh.header else {
        panic!()
    };
    let Data::Values(steps) = &mesh.data else {
        panic!()
    };
    ((*header.geometry).clone(), steps[0][0].to_f64())
}

fn element_corners(geometry: &MeshGeometry, element: usize) -> Vec<(f64, f64)> {
    geometry
        .elements
        .nodes(element)
        .unwrap()
        .iter()
        .map(|&n| (geometry.nodes.x[n as usize], geometry.nodes.y[n as usize]))
        .collect()
}

/// Twice the signed area of a ring without its closing vertex.
fn area2(corners: &[(f64, f64)]) -> f64 {
    let next = corners.iter().cycle().skip(1);
    corners
        .iter()
        .zip(next)
        .map(|(a, b)| a.0 * b.1 - b.0 * a.1)
        .sum()
}

/// Whether the mesh has an element edge between the two positions.
fn has_edge(geometry: &MeshGeometry, from: (f64, f64), to: (f64, f64)) -> bool {
    (0..geometry.elements.len()).any(|element| {
        let corners = element_corners(geometry, element);
        let next = corners.iter().cycle().skip(1);
        corners
            .iter()
            .zip(next)
            .any(|(a, b)| (*a == from && *b == to) || (*a == to && *b == from))
    })
}

#[test]
fn polygons_with_more_corners_or_holes_become_triangles_covering_them() {
    // A pentagon beside a unit square (sharing the edge x = 1) and a square with a hole.
    let pentagon = vec![
        Coord::xyz(1.0, 0.0, -1.0),
        Coord::xyz(1.0, 1.0, -2.0),
        Coord::xyz(2.0, 1.5, -3.0),
        Coord::xyz(3.0, 1.0, -4.0),
        Coord::xyz(3.0, 0.0, -5.0),
        Coord::xyz(1.0, 0.0, -1.0),
    ];
    let exterior = vec![
        Coord::xy(10.0, 0.0),
        Coord::xy(10.0, 4.0),
        Coord::xy(14.0, 4.0),
        Coord::xy(14.0, 0.0),
        Coord::xy(10.0, 0.0),
    ];
    let hole = vec![
        Coord::xy(11.0, 1.0),
        Coord::xy(13.0, 1.0),
        Coord::xy(12.0, 3.0),
        Coord::xy(11.0, 1.0),
    ];
    let dataset = features(vec![
        Some(Geometry::Polygon(vec![square(0.0, 0.0, None)])),
        Some(Geometry::Polygon(vec![pentagon.clone()])),
        Some(Geometry::MultiPolygon(vec![vec![
            exterior.clone(),
            hole.clone(),
        ]])),
    ]);
    let (geometry, depth) = mesh_of(&dataset);
    let kinds = &geometry.elements.kinds;
    assert_eq!(kinds[0], ElementKind::Quad, "a quadrilateral stays one");
    assert!(kinds[1..].iter().all(|kind| *kind == ElementKind::Triangle));
    // 3 triangles for the pentagon, then the square minus its triangle hole.
    let pentagon_elements = 1..4;
    let holed_elements = 4..geometry.elements.len();
    let area = |range: std::ops::Range<usize>| -> f64 {
        range
            .map(|element| area2(&element_corners(&geometry, element)) / 2.0)
            .sum()
    };
    assert!((area(pentagon_elements.clone()) - 2.5).abs() < 1e-12);
    assert!((area(holed_elements.clone()) - (16.0 - 2.0)).abs() < 1e-12);
    for element in 0..geometry.elements.len() {
        assert!(
            area2(&element_corners(&geometry, element)) > 0.0,
            "counter-clockwise"
        );
    }
    // Every ring edge is an element edge.
    for ring in [&pentagon, &exterior, &hole] {
        for pair in ring.windows(2) {
            let (a, b) = ((pair[0].x, pair[0].y), (pair[1].x, pair[1].y));
            assert!(has_edge(&geometry, a, b), "edge {a:?}-{b:?}");
        }
    }
    // No vertex added; the shared edge's vertices merged: 4 + 3 (pentagon) + 4 + 3 (holed).
    assert_eq!(geometry.nodes.len(), 14);
    assert!(geometry.nodes.z.contains(&-3.0), "the pentagon's z is kept");
    // Each triangle carries its feature's values; the hole's corners are on the outline.
    assert_eq!(depth[0], 0.25);
    assert!(depth[pentagon_elements].iter().all(|value| value.is_nan()));
    assert!(depth[holed_elements].iter().all(|value| *value == 2.25));
    let hole_node = (0..geometry.nodes.len())
        .find(|&n| geometry.nodes.x[n] == 12.0 && geometry.nodes.y[n] == 3.0)
        .unwrap();
    assert_eq!(geometry.nodes.codes[hole_node], 1);
}

/// Polygons that cannot be triangulated, with a part of the error they give.
fn untriangulable() -> Vec<(Vec<Vec<Coord>>, &'static str)> {
    let ring = |points: &[(f64, f64)]| -> Vec<Coord> {
        points.iter().map(|(x, y)| Coord::xy(*x, *y)).collect()
    };
    let outer = ring(&[(0., 0.), (0., 4.), (4., 4.), (4., 0.), (0., 0.)]);
    vec![
        (
            vec![ring(&[
                (0., 0.),
                (4., 4.),
                (4., 0.),
                (2., -1.),
                (0., 4.),
                (0., 0.),
            ])],
            "crosses another edge",
        ),
        (
            vec![
                outer.clone(),
                ring(&[(3., 1.), (5., 1.), (5., 2.), (3., 1.)]),
            ],
            "crosses another edge",
        ),
        (
            vec![
                outer.clone(),
                ring(&[(6., 1.), (7., 1.), (7., 2.), (6., 1.)]),
            ],
            "a hole lies outside the exterior",
        ),
        (
            vec![
                outer.clone(),
                ring(&[(1., 1.), (3., 1.), (3., 3.), (1., 3.), (1., 1.)]),
                ring(&[(1.5, 1.5), (2.5, 1.5), (2., 2.5), (1.5, 1.5)]),
            ],
            "inside another hole",
        ),
        (
            // Two spikes from one corner: not on one line, yet no area.
            vec![ring(&[(0., 0.), (2., 0.), (0., 0.), (0., 2.), (0., 0.)])],
            "no area",
        ),
        (
            vec![ring(&[(0., 0.), (4., 4.), (4., 0.), (0., 4.), (0., 0.)])],
            "crosses another edge",
        ),
        (
            vec![ring(&[
                (0., 0.),
                (f64::INFINITY, 1.),
                (2., 0.),
                (1.5, -1.),
                (0.5, -1.),
                (0., 0.),
            ])],
            "is not a finite coordinate",
        ),
        (
            vec![ring(&[
                (0., 0.),
                (1e61, 1.),
                (2., 0.),
                (1.5, -1.),
                (0.5, -1.),
                (0., 0.),
            ])],
            "cannot be triangulated",
        ),
    ]
}

#[test]
fn polygons_that_cannot_be_triangulated_are_errors_naming_the_feature() {
    for (rings, expected) in untriangulable() {
        let dataset = features(vec![
            Some(Geometry::Polygon(vec![square(10.0, 10.0, None)])),
            Some(Geometry::Polygon(rings)),
        ]);
        let error = adapt(&dataset, DataKind::Mesh).unwrap_err();
        assert!(matches!(error, FormatError::Incompatible { .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains("feature 2"), "{message}");
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn the_triangulate_parameter_of_the_mesh_writers_turns_triangulation_off() {
    use basin_formats::catalogue::{Catalogue, Conversion, ReadContext};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pentagon.geojson");
    std::fs::write(
        &input,
        r#"{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"depth": 3.5},
        "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [3, 1], [1, 2], [0, 1], [0, 0]]]}}]}"#,
    )
    .unwrap();
    let catalogue = Catalogue::standard();
    let convert = |output: &str, value: Option<&str>| {
        let parameters: Vec<(String, String)> = value
            .map(|value| ("Triangulate".to_owned(), value.to_owned()))
            .into_iter()
            .collect();
        let conversion = Conversion {
            writer_parameters: &parameters,
            ..Conversion::default()
        };
        catalogue.convert(
            &input,
            &dir.path().join(output),
            &conversion,
            &ReadContext::default(),
        )
    };
    for output in ["out.vtu", "out.mesh"] {
        let written = convert(output, None).unwrap();
        let size = written.summary.unwrap().size;
        assert!(
            matches!(
                size,
                basin_formats::summary::DataSize::Mesh {
                    nodes: 5,
                    elements: 3,
                    ..
                }
            ),
            "{output}: {size:?}"
        );
        convert(output, Some("true")).unwrap();
        let refused = convert(output, Some("false")).unwrap_err();
        assert!(refused.to_string().contains("5 corners"), "{refused}");
        let invalid = convert(output, Some("maybe")).unwrap_err();
        assert!(
            matches!(invalid, FormatError::Parameter { .. }),
            "{invalid}"
        );
    }
}

/// Twice the unsigned area of a ring given as coordinates.
fn ring_area2(ring: &[Coord]) -> f64 {
    let corners: Vec<(f64, f64)> = ring.iter().map(|c| (c.x, c.y)).collect();
    area2(&corners).abs()
}

/// Real polygons with holes and many corners (tests/corpus/pyshp/blockgroups.shp) become a
/// mesh of counter-clockwise elements covering each polygon minus its holes.
#[test]
fn real_block_groups_become_a_mesh_covering_them() {
    use basin_formats::catalogue::{ReadContext, Reader};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/pyshp/blockgroups.shp");
    let dataset = Dataset::collect(|sink| {
        basin_formats::shp::ShpReader.read(
            &path,
            &basin_formats::Parameters::default(),
            &ReadContext::default(),
            sink,
        )
    })
    .unwrap();
    let (_, features) = features_of(&dataset);
    let mut expected = 0.0;
    for feature in features {
        let polygons = match feature.geometry.as_ref().unwrap() {
            Geometry::Polygon(rings) => vec![rings.clone()],
            Geometry::MultiPolygon(polygons) => polygons.clone(),
            other => panic!("{other:?}"),
        };
        for rings in polygons {
            expected += ring_area2(&rings[0]) / 2.0;
            expected -= rings[1..].iter().map(|r| ring_area2(r) / 2.0).sum::<f64>();
        }
    }
    let (geometry, _) = mesh_of(&dataset);
    let mut covered = 0.0;
    for element in 0..geometry.elements.len() {
        let doubled = area2(&element_corners(&geometry, element));
        assert!(doubled > 0.0, "element {element} is counter-clockwise");
        covered += doubled / 2.0;
    }
    assert!(
        (covered - expected).abs() <= 1e-9 * expected,
        "{covered} {expected}"
    );
}

/// Features to a mesh through [`Adapter`], returning the mesh and the adapter's notes.
fn adapt_noted(dataset: &Dataset, triangulate: bool) -> FormatResult<(Dataset, Vec<String>)> {
    let mut notes = Vec::new();
    let mesh = Dataset::collect(|sink| {
        let options = AdaptOptions {
            triangulate,
            ..AdaptOptions::default()
        };
        let mut adapter = Adapter::new(DataKind::Mesh, options, sink);
        dataset.replay(&mut adapter)?;
        notes = adapter.notes().to_vec();
        Ok(())
    })?;
    Ok((mesh, notes))
}

fn xyz_ring(points: &[(f64, f64, f64)]) -> Vec<Coord> {
    points
        .iter()
        .map(|(x, y, z)| Coord::xyz(*x, *y, *z))
        .collect()
}

/// No element may repeat a node or lie flat.
fn assert_proper_elements(geometry: &MeshGeometry) {
    for element in 0..geometry.elements.len() {
        let nodes = geometry.elements.nodes(element).unwrap();
        let mut distinct = nodes.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), nodes.len(), "element {element}: {nodes:?}");
        assert!(area2(&element_corners(geometry, element)) > 0.0);
    }
}

/// Issue 33 item 9a: vertical faces became zero-area elements with a repeated node.
#[test]
fn polygons_with_no_area_seen_from_above_are_dropped_and_counted_in_a_note() {
    // A roof triangle, then walls: a strip triangle repeating a corner's x and y, a wall
    // quadrilateral, a triangle of three distinct corners on one line, and a gable wall of five
    // corners; then a ground square.
    let roof = xyz_ring(&[(0., 0., 3.), (1., 0., 3.), (0., 1., 4.)]);
    let strip = xyz_ring(&[(0., 0., 0.), (0., 0., 3.), (1., 0., 0.)]);
    let wall = xyz_ring(&[
        (1., 0., 0.),
        (0., 1., 0.),
        (0., 1., 3.),
        (1., 0., 3.),
        (1., 0., 0.),
    ]);
    let on_a_line = xyz_ring(&[(0., 0., 0.), (0., 0.5, 1.), (0., 1., 0.)]);
    let gable = xyz_ring(&[
        (0., 0., 0.),
        (0., 1., 0.),
        (0., 1., 3.),
        (0., 0.5, 4.),
        (0., 0., 3.),
    ]);
    let dataset = features(vec![
        Some(Geometry::MultiPolygon(vec![
            vec![roof],
            vec![strip],
            vec![wall.clone()],
        ])),
        Some(Geometry::Polygon(vec![on_a_line])),
        Some(Geometry::Polygon(vec![gable])),
        Some(Geometry::Polygon(vec![square(5.0, 5.0, None)])),
    ]);
    let (mesh, notes) = adapt_noted(&dataset, true).unwrap();
    let (geometry, depth) = mesh_of(&mesh);
    assert_eq!(
        geometry.elements.kinds,
        vec![ElementKind::Triangle, ElementKind::Quad]
    );
    assert_proper_elements(&geometry);
    // Values follow the kept polygons: feature 1's roof, feature 4's square.
    assert_eq!(depth, vec![0.25, 3.25]);
    assert_eq!(
        notes,
        vec![
            "4 polygons with no area seen from above (all corners on one line in x and y, such \
             as vertical faces of a MultiPatch) dropped: features 1, 2, 3"
                .to_owned()
        ]
    );
    // The same without triangulation: dropping is not triangulating.
    let (_, notes) = adapt_noted(&dataset, false).unwrap();
    assert!(notes[0].starts_with("4 polygons"), "{notes:?}");
    // Ten features are named, and "..." says there are more.
    let mut many: Vec<Option<Geometry>> = (0..11)
        .map(|_| Some(Geometry::Polygon(vec![wall.clone()])))
        .collect();
    many.push(Some(Geometry::Polygon(vec![square(5.0, 5.0, None)])));
    let (_, notes) = adapt_noted(&features(many.clone()), true).unwrap();
    assert!(
        notes[0].ends_with("dropped: features 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ..."),
        "{notes:?}"
    );
    many.remove(0);
    let (_, notes) = adapt_noted(&features(many), true).unwrap();
    assert!(
        notes[0].ends_with("dropped: features 1, 2, 3, 4, 5, 6, 7, 8, 9, 10"),
        "{notes:?}"
    );
    // Nothing left is an error.
    let walls = features(vec![Some(Geometry::Polygon(vec![wall]))]);
    let error = adapt_noted(&walls, true).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("every polygon has no area seen from above (1 with"),
        "{error}"
    );
}

/// A real MultiPatch (Fiona's TIN test file) holds a vertical triangle: converted to a mesh it
/// gives one element and a note, through the catalogue.
#[test]
fn a_multipatch_with_a_vertical_face_converts_with_a_note() {
    use basin_formats::catalogue::{Catalogue, Conversion, ReadContext};
    let input = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/fiona/test_tin.shp");
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("tin.vtu");
    let written = Catalogue::standard()
        .convert(
            &input,
            &output,
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap();
    assert!(
        written.notes.iter().any(
            |note| note.starts_with("1 polygon with no area seen from above")
                && note.ends_with("dropped: feature 1")
        ),
        "{:?}",
        written.notes
    );
    let size = written.summary.unwrap().size;
    assert!(
        matches!(
            size,
            basin_formats::summary::DataSize::Mesh {
                nodes: 3,
                elements: 1,
                ..
            }
        ),
        "{size:?}"
    );
}

#[test]
fn repeated_corners_are_merged_before_choosing_the_element() {
    // A "quadrilateral" repeating a corner is its triangle; a hexagon repeating two corners
    // in a row is its quadrilateral; -0 and 0 are one position, hence one node.
    let quad_with_repeat = vec![
        Coord::xy(0.0, 0.0),
        Coord::xy(1.0, 0.0),
        Coord::xy(1.0, 0.0),
        Coord::xy(0.0, 1.0),
        Coord::xy(0.0, 0.0),
    ];
    let hexagon_with_repeats = vec![
        Coord::xy(2.0, 0.0),
        Coord::xy(3.0, 0.0),
        Coord::xy(3.0, 0.0),
        Coord::xy(3.0, 1.0),
        Coord::xy(2.0, 1.0),
        Coord::xy(2.0, 1.0),
        Coord::xy(2.0, 0.0),
    ];
    let negative_zero = vec![
        Coord::xy(-0.0, -0.0),
        Coord::xy(0.0, -1.0),
        Coord::xy(1.0, -0.0),
    ];
    let dataset = features(vec![
        Some(Geometry::Polygon(vec![quad_with_repeat])),
        Some(Geometry::Polygon(vec![hexagon_with_repeats])),
        Some(Geometry::Polygon(vec![negative_zero])),
    ]);
    let (mesh, notes) = adapt_noted(&dataset, false).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let (geometry, _) = mesh_of(&mesh);
    assert_eq!(
        geometry.elements.kinds,
        vec![
            ElementKind::Triangle,
            ElementKind::Quad,
            ElementKind::Triangle
        ]
    );
    assert_proper_elements(&geometry);
    assert_eq!(geometry.nodes.len(), 3 + 4 + 1, "(0, 0) and (1, 0) shared");
}

/// Issue 33 item 9b: a sliver was turned by a floating-point signed area and came out
/// clockwise.
#[test]
fn a_sliver_keeps_its_exact_orientation() {
    // Counter-clockwise exactly (orient2d with rational arithmetic: +1.76e-7), but the
    // floating-point shoelace sum of these UTM coordinates is -0.00049.
    let a = (500406.1464617404, 6200736.959893317);
    let b = (500451.26764485834, 6200788.08451532);
    let c = (500425.39809255494, 6200758.77298155);
    let triangle = |corners: [(f64, f64); 3]| {
        Some(Geometry::Polygon(vec![
            corners.iter().map(|(x, y)| Coord::xy(*x, *y)).collect(),
        ]))
    };
    let dataset = features(vec![triangle([a, b, c]), triangle([c, b, a])]);
    let (geometry, _) = mesh_of(&dataset);
    assert_eq!(
        element_corners(&geometry, 0),
        vec![a, b, c],
        "kept as given"
    );
    assert_eq!(element_corners(&geometry, 1), vec![a, b, c], "reversed");
}

#[test]
fn only_strictly_convex_quadrilaterals_are_elements() {
    let quad = |points: &[(f64, f64)]| {
        Some(Geometry::Polygon(vec![
            points.iter().map(|(x, y)| Coord::xy(*x, *y)).collect(),
        ]))
    };
    let concave = quad(&[(0., 0.), (4., 0.), (1., 1.), (0., 4.)]);
    let corner_on_a_side = quad(&[(0., 0.), (2., 0.), (4., 0.), (0., 4.)]);
    let dataset = features(vec![concave.clone(), corner_on_a_side.clone()]);
    let (geometry, _) = mesh_of(&dataset);
    assert_eq!(geometry.elements.kinds, vec![ElementKind::Triangle; 4]);
    assert_proper_elements(&geometry);
    for geometry in [concave, corner_on_a_side] {
        let error = adapt_without_triangulation(&features(vec![geometry])).unwrap_err();
        assert!(
            error.to_string().contains(
                "feature 1 cannot be an element: a quadrilateral that is not strictly convex"
            ),
            "{error}"
        );
    }
    let bow_tie = quad(&[(0., 0.), (2., 2.), (2., 0.), (0., 2.)]);
    let error = adapt(&features(vec![bow_tie]), DataKind::Mesh).unwrap_err();
    assert!(
        error.to_string().contains("crosses another edge"),
        "{error}"
    );
}

#[test]
fn a_non_finite_corner_is_an_error_naming_the_feature() {
    let nan = vec![
        Coord::xy(0.0, 0.0),
        Coord::xy(f64::NAN, 0.0),
        Coord::xy(0.0, 1.0),
    ];
    for triangulate in [true, false] {
        let error = adapt_noted(
            &features(vec![Some(Geometry::Polygon(vec![nan.clone()]))]),
            triangulate,
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("feature 1 cannot be an element: its vertex (0, NaN)")
                || error
                    .to_string()
                    .contains("feature 1 cannot be an element: its vertex (NaN, 0)"),
            "{error}"
        );
    }
}

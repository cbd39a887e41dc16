//! The adapters between kinds of data, with in-memory datasets: points to a mesh, a mesh to
//! features, features to a mesh, and the pairs without an adapter.

use std::sync::Arc;

use basin_formats::adapt::{MESH_FIELDS_MAX, for_writer};
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
fn features_that_are_not_triangles_or_quads_are_errors() {
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
        let error = adapt(&features(vec![geometry]), DataKind::Mesh).unwrap_err();
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

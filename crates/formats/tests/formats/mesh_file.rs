//! MIKE .mesh: the corpus files against mikeio's values, round trips, and every error.

use std::path::Path;
use std::sync::Arc;

use crate::helpers::fixture;

use basin_formats::catalogue::{ReadContext, Reader, Writer, Written};
use basin_formats::crs::Crs;
use basin_formats::mesh_file::{MeshFileReader, MeshFileWriter};
use basin_formats::model::{
    DataType, Dataset, ElementKind, Elements, Header, Item, MeshGeometry, MeshHeader, Nodes,
    Quantity, TimeAxis,
};
use basin_formats::{FormatError, FormatResult, Parameters, ReadLimits};

fn read_with(path: &Path, raw: &[(&str, &str)], limits: ReadLimits) -> FormatResult<Dataset> {
    let raw: Vec<(String, String)> = raw
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    let parameters = Parameters::validate(MeshFileReader.spec().parameters, &raw)?;
    let context = ReadContext {
        limits,
        ..ReadContext::default()
    };
    Dataset::collect(|sink| MeshFileReader.read(path, &parameters, &context, sink))
}

fn read(path: &Path) -> FormatResult<Dataset> {
    read_with(path, &[], ReadLimits::default())
}

fn mesh(dataset: &Dataset) -> &MeshHeader {
    let Header::Mesh(mesh) = &dataset.header else {
        panic!("a mesh expected, got {:?}", dataset.header.kind())
    };
    mesh
}

fn write(dataset: &Dataset, path: &Path) -> FormatResult<Written> {
    let mut sink = MeshFileWriter.create(path, &Parameters::default())?;
    dataset.replay(sink.as_mut())?;
    sink.finish()
}

fn read_text(text: &str) -> FormatResult<Dataset> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("input.mesh");
    std::fs::write(&path, text).unwrap();
    read(&path)
}

fn error_of(text: &str) -> String {
    read_text(text).unwrap_err().to_string()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn corpus_meshes_match_mikeio() {
    for name in ["odense_rough.mesh", "quad_tri.mesh"] {
        let expected: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(fixture("meshes", &format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let dataset = read(&fixture("meshes", name)).unwrap();
        let geometry = &mesh(&dataset).geometry;
        assert_eq!(
            geometry.nodes.len() as u64,
            expected["n_nodes"].as_u64().unwrap()
        );
        assert_eq!(
            geometry.elements.len() as u64,
            expected["n_elements"].as_u64().unwrap()
        );
        let sum = |values: &[f64]| values.iter().sum::<f64>();
        assert!(close(
            sum(&geometry.nodes.x),
            expected["node_x_sum"].as_f64().unwrap()
        ));
        assert!(close(
            sum(&geometry.nodes.y),
            expected["node_y_sum"].as_f64().unwrap()
        ));
        assert!(close(
            sum(&geometry.nodes.z),
            expected["node_z_sum"].as_f64().unwrap()
        ));
        let codes: i64 = geometry
            .nodes
            .codes
            .iter()
            .map(|&code| i64::from(code))
            .sum();
        assert_eq!(codes, expected["codes_sum"].as_i64().unwrap());
        let projection = expected["projection"].as_str().unwrap().to_owned();
        let crs = if projection.contains('[') {
            Crs::Wkt(projection)
        } else {
            Crs::Named(projection)
        };
        assert_eq!(geometry.crs, Some(crs));
        assert_eq!(geometry.z_quantity, Quantity::bathymetry());
    }
}

#[test]
fn mixed_sample_reads_exactly() {
    let dataset = read(&fixture("meshes", "mesh2d_mixed.mesh")).unwrap();
    let header = mesh(&dataset);
    let geometry = &header.geometry;
    assert!(header.items.is_empty());
    assert_eq!(header.time, TimeAxis::None);
    assert_eq!(geometry.crs, Some(Crs::Named("UTM-32".into())));
    assert_eq!(geometry.nodes.x[0], 500_000.0);
    assert_eq!(geometry.nodes.y[8], 6_100_200.0);
    assert_eq!(geometry.nodes.z[4], -5.5);
    assert_eq!(geometry.nodes.codes, vec![1, 1, 1, 1, 0, 2, 1, 1, 1]);
    assert_eq!(geometry.elements.kinds[0], ElementKind::Quad);
    assert_eq!(geometry.elements.kinds[1], ElementKind::Triangle);
    assert_eq!(geometry.elements.nodes(0).unwrap(), &[0, 1, 4, 3]);
    assert_eq!(geometry.elements.nodes(1).unwrap(), &[1, 2, 5]);
    assert_eq!(geometry.elements.nodes(5).unwrap(), &[4, 5, 8, 7]);
}

#[test]
fn mesh_round_trips_exactly() {
    let folder = tempfile::tempdir().unwrap();
    for name in ["odense_rough.mesh", "quad_tri.mesh", "mesh2d_mixed.mesh"] {
        let dataset = read(&fixture("meshes", name)).unwrap();
        let output = folder.path().join(name);
        let written = write(&dataset, &output).unwrap();
        assert_eq!(written.files, vec![output.clone()]);
        assert!(written.notes.is_empty(), "{:?}", written.notes);
        let again = read(&output).unwrap();
        assert_eq!(again, dataset, "{name}");
        let first_line = std::fs::read_to_string(&output).unwrap();
        assert!(
            first_line.starts_with("100079 1000 "),
            "{name}: 2012 header"
        );
    }
}

#[test]
fn old_header_implies_bathymetry_and_2012_header_keeps_eum_codes() {
    let old = read_text("3 NON-UTM\n1 0 0 1 1\n2 1 0 2 1\n3 0 1 3 1\n1 3 21\n1 1 2 3\n").unwrap();
    assert_eq!(mesh(&old).geometry.z_quantity, Quantity::bathymetry());
    assert_eq!(mesh(&old).geometry.crs, Some(Crs::Named("NON-UTM".into())));
    let other =
        read_text("100078 1014 3 LONG/LAT\n1 0 0 1 1\n2 1 0 2 1\n3 0 1 3 1\n1 3 21\n1 1 2 3\n")
            .unwrap();
    let quantity = &mesh(&other).geometry.z_quantity;
    assert_eq!(
        (quantity.eum_item, quantity.eum_unit),
        (Some(100_078), Some(1014))
    );
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.mesh");
    write(&other, &output).unwrap();
    assert!(
        std::fs::read_to_string(&output)
            .unwrap()
            .starts_with("100078 1014 3 LONG/LAT\n")
    );
}

#[test]
fn srid_parameter_replaces_a_projection_name_but_not_a_wkt() {
    let named = read_with(
        &fixture("meshes", "mesh2d_mixed.mesh"),
        &[("SRID", "32632")],
        ReadLimits::default(),
    )
    .unwrap();
    assert_eq!(mesh(&named).geometry.crs, Some(Crs::Epsg(32632)));
    let wkt = read_with(
        &fixture("meshes", "quad_tri.mesh"),
        &[("SRID", "32617")],
        ReadLimits::default(),
    )
    .unwrap();
    assert!(matches!(mesh(&wkt).geometry.crs, Some(Crs::Wkt(_))));
    let bad = read_with(
        &fixture("meshes", "quad_tri.mesh"),
        &[("SRID", "-1")],
        ReadLimits::default(),
    );
    assert!(matches!(bad, Err(FormatError::Parameter { .. })));
}

#[test]
fn writer_spells_epsg_as_wkt_and_no_crs_as_non_utm() {
    let folder = tempfile::tempdir().unwrap();
    let mut dataset = read(&fixture("meshes", "mesh2d_mixed.mesh")).unwrap();
    let Header::Mesh(header) = &mut dataset.header else {
        unreachable!()
    };
    let mut geometry = (*header.geometry).clone();
    geometry.crs = Some(Crs::Epsg(32632));
    header.geometry = Arc::new(geometry.clone());
    let output = folder.path().join("epsg.mesh");
    write(&dataset, &output).unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("100079 1000 9 PROJCS["), "{first}");
    assert!(first.contains("32632"), "{first}");
    geometry.crs = None;
    let Header::Mesh(header) = &mut dataset.header else {
        unreachable!()
    };
    header.geometry = Arc::new(geometry);
    write(&dataset, &output).unwrap();
    assert!(
        std::fs::read_to_string(&output)
            .unwrap()
            .starts_with("100079 1000 9 NON-UTM\n")
    );
}

fn prism_dataset() -> Dataset {
    let mut elements = Elements::default();
    elements.push(1, ElementKind::Prism, &[0, 1, 2, 3, 4, 5]);
    let nodes = Nodes {
        ids: (1..=6).collect(),
        x: vec![0.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        y: vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
        z: vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        codes: vec![0; 6],
    };
    Dataset {
        header: Header::Mesh(MeshHeader {
            geometry: Arc::new(MeshGeometry {
                nodes,
                elements,
                ..MeshGeometry::default()
            }),
            items: vec![Item::new("salinity", DataType::F32)],
            time: TimeAxis::None,
        }),
        data: basin_formats::model::Data::Values(vec![vec![basin_formats::model::Values::F32(
            vec![1.0],
        )]]),
    }
}

#[test]
fn writer_refuses_3d_elements_and_non_finite_coordinates_and_notes_dropped_items() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.mesh");
    let error = write(&prism_dataset(), &output).unwrap_err();
    assert!(matches!(error, FormatError::Incompatible { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("wedge (VTK 13) cells cannot be written to .mesh"),
        "{error}"
    );

    let mut dataset = read(&fixture("meshes", "mesh2d_mixed.mesh")).unwrap();
    let Header::Mesh(header) = &mut dataset.header else {
        unreachable!()
    };
    let mut geometry = (*header.geometry).clone();
    geometry.nodes.z[3] = f64::NAN;
    header.geometry = Arc::new(geometry);
    let error = write(&dataset, &output).unwrap_err().to_string();
    assert!(error.contains("node 4"), "{error}");

    let mut dataset = read(&fixture("meshes", "mesh2d_mixed.mesh")).unwrap();
    let Header::Mesh(header) = &mut dataset.header else {
        unreachable!()
    };
    header.items.push(Item::new("depth", DataType::F32));
    dataset.data = basin_formats::model::Data::Values(vec![vec![
        basin_formats::model::Values::F32(vec![0.0; 6]),
    ]]);
    let written = write(&dataset, &output).unwrap();
    assert!(written.notes[0].contains("depth"), "{:?}", written.notes);
}

#[test]
fn writer_refuses_data_that_is_not_a_mesh() {
    let folder = tempfile::tempdir().unwrap();
    let mut sink = MeshFileWriter
        .create(&folder.path().join("out.mesh"), &Parameters::default())
        .unwrap();
    let header = Header::Points(basin_formats::model::PointHeader {
        crs: None,
        z_item: Item::new("z", DataType::F64),
        items: Vec::new(),
        count: None,
    });
    assert!(matches!(
        sink.begin(&header),
        Err(FormatError::Incompatible { .. })
    ));
}

const GOOD: &str = "100079 1000 4 UTM-32\n1 0 0 -1 1\n2 1 0 -2 1\n3 1 1 -3 1\n4 0 1 -4 1\n2 4 25\n1 1 2 3 0\n2 1 3 4 0\n";

#[test]
fn the_good_text_reads() {
    let dataset = read_text(GOOD).unwrap();
    assert_eq!(mesh(&dataset).geometry.elements.len(), 2);
}

#[test]
fn hostile_and_broken_files_are_errors_naming_the_place() {
    let cases: &[(&str, &str)] = &[
        ("", "empty"),
        ("\n\n", "empty"),
        ("x y z\n", "expected"),
        ("100079 1000 4 UTM-32\n1 0 0 -1 1\n", "truncated"),
        ("100079 1000 4 UTM-32\n1 0 0 -1 1\n2 1 0 -2\n", "line 3"),
        ("100079 1000 4 UTM-32\n1 0 zero -1 1\n", "line 2"),
        (
            &GOOD.replace("2 4 25\n1 1 2 3 0\n2 1 3 4 0\n", "2 4 25\n1 1 2 3 0\n"),
            "truncated",
        ),
        (&GOOD.replace("1 1 2 3 0", "1 1 2 9 0"), "outside 1..4"),
        (&GOOD.replace("1 1 2 3 0", "1 1 0 3 4"), "follows a 0"),
        (&GOOD.replace("1 1 2 3 0", "1 1 2 3 0 7"), "more than 4"),
        (&GOOD.replace("1 1 2 3 0", "1 1 2"), "2 node numbers"),
        (&GOOD.replace("1 1 2 3 0", "1 1 2 0 0"), "2 nodes"),
        (&GOOD.replace("2 4 25", "2 4"), "maxNodesPerElement"),
        (&GOOD.replace("2 4 25", "2 8 25"), "8 nodes per element"),
        (&GOOD.replace("2 4 25", "x 4 25"), "element count"),
        (&format!("{GOOD}garbage\n"), "after the last element"),
        ("100079 1000 99999999999 UTM-32\n", "over the limit"),
        (
            "100079 1000 4 UTM-32\n1 0 0 -1 1\n2 1 0 -2 1\n3 1 1 -3 1\n4 0 1 -4 1\n99999999999 3 21\n",
            "over the limit",
        ),
        ("100079 1000 -4 UTM-32\n", "not a whole number"),
    ];
    for (text, expected) in cases {
        let message = error_of(text);
        assert!(message.contains(expected), "{text:?}: {message}");
    }
}

#[test]
fn a_line_over_the_limit_is_an_error() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("long.mesh");
    std::fs::write(&path, format!("100079 1000 1 {}\n", "A".repeat(5000))).unwrap();
    let limits = ReadLimits {
        line_bytes_max: 1000,
        ..ReadLimits::default()
    };
    let message = read_with(&path, &[], limits).unwrap_err().to_string();
    assert!(message.contains("longer than 1000 bytes"), "{message}");
}

#[test]
fn a_wkt_with_spaces_and_windows_line_ends_reads() {
    let text = "100079 1000 3 PROJCS[\"UTM 32\", GEOGCS[\"x\"]]\r\n1 0 0 1 1\r\n2 1 0 2 1\r\n3 0 1 3 1\r\n1 3 21\r\n7 1 2 3\r\n";
    let dataset = read_text(text).unwrap();
    let geometry = &mesh(&dataset).geometry;
    assert_eq!(
        geometry.crs,
        Some(Crs::Wkt("PROJCS[\"UTM 32\", GEOGCS[\"x\"]]".into()))
    );
    assert_eq!(geometry.elements.ids, vec![7]);
}

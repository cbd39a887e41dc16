//! `basin inspect`'s library side: what an inspection reports for each kind of data, its
//! statistics and values, the DFS container section (which works before any DFS reader), the
//! JSON and text forms, and the errors.

use std::path::{Path, PathBuf};

use basin_formats::inspect::{GeometrySummary, InspectOptions, Inspection, VALUES_MAX, inspect};
use basin_formats::{Catalogue, FormatError};
use serde_json::Value;

use crate::helpers::{Folder, fixture};

fn corpus(relative: &str) -> PathBuf {
    crate::helpers::corpus(relative, "")
}

fn options(values: bool, statistics: bool) -> InspectOptions<'static> {
    InspectOptions {
        values,
        statistics,
        ..InspectOptions::default()
    }
}

fn inspect_with(path: &Path, values: bool, statistics: bool) -> Inspection {
    inspect(
        &Catalogue::standard(),
        path,
        None,
        &[],
        &options(values, statistics),
    )
    .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The error of inspecting `path` with `reader` and `parameters`.
fn failure(
    path: &Path,
    reader: Option<&str>,
    parameters: &[(&str, &str)],
    values: bool,
) -> FormatError {
    let parameters: Vec<(String, String)> = parameters
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    match inspect(
        &Catalogue::standard(),
        path,
        reader,
        &parameters,
        &options(values, false),
    ) {
        Ok(inspection) => panic!("{} was inspected: {inspection:?}", path.display()),
        Err(error) => error,
    }
}

fn json(inspection: &Inspection) -> Value {
    serde_json::to_value(inspection).unwrap()
}

const GRID: &str = "ncols 3\nnrows 2\nxllcorner 500000\nyllcorner 6000000\ncellsize 10\n\
                    NODATA_value -9999\n1 2 3\n4 -9999 6.5\n";

#[test]
fn a_grid_reports_its_shape_items_and_extent_without_reading_values() {
    let files = Folder::new();
    let path = files.file("grid.asc", GRID.as_bytes());
    let inspection = inspect_with(&path, false, false);
    assert_eq!(inspection.reader.as_deref(), Some("AsciiGridReader"));
    assert_eq!(inspection.kind.as_deref(), Some("grid"));
    assert_eq!(inspection.crs, None);
    assert_eq!(
        inspection.extent,
        Some([500_000.0, 6_000_000.0, 500_030.0, 6_000_020.0])
    );
    let Some(GeometrySummary::Grid(grid)) = &inspection.geometry else {
        panic!("a grid geometry expected: {:?}", inspection.geometry)
    };
    assert_eq!((grid.columns, grid.rows, grid.layers), (3, 2, 1));
    assert_eq!((grid.cell_width, grid.cell_height), (10.0, 10.0));
    assert_eq!(grid.rotation_degrees, 0.0);
    assert_eq!(
        grid.transform,
        [500_000.0, 10.0, 0.0, 6_000_020.0, 0.0, -10.0]
    );
    let time = inspection.time.as_ref().unwrap();
    assert_eq!((time.kind, time.steps), ("none", 1));
    assert_eq!(inspection.items.len(), 1);
    assert_eq!(inspection.items[0].nodata, Some(-9999.0));
    assert_eq!(inspection.statistics, None);
    assert_eq!(inspection.values, None);
    assert_eq!(inspection.dfs, None);
    assert!(inspection.notes.is_empty(), "{:?}", inspection.notes);
}

#[test]
fn statistics_skip_nodata_and_values_keep_every_cell() {
    let files = Folder::new();
    let path = files.file("grid.asc", GRID.as_bytes());
    let inspection = inspect_with(&path, true, true);
    let statistics = inspection.statistics.as_ref().unwrap();
    assert_eq!(statistics.len(), 1);
    let item = &statistics[0];
    assert_eq!((item.min, item.max), (Some(1.0), Some(6.5)));
    assert_eq!(item.mean, Some(16.5 / 5.0));
    assert_eq!((item.count_valid, item.count_nan), (5, 1));
    let values = inspection.values.as_ref().unwrap();
    assert_eq!(values.len(), 1);
    assert_eq!(values[0].step, 0);
    assert_eq!(values[0].items.len(), 1);
    assert_eq!(values[0].items[0].len(), 6);
    assert_eq!(values[0].items[0][0], 1.0);
}

#[test]
fn nan_values_are_null_in_json() {
    let files = Folder::new();
    let grid = "ncols 2\nnrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\n1.5 nan\n";
    let path = files.file("nan.asc", grid.as_bytes());
    let inspection = inspect_with(&path, true, true);
    let document = json(&inspection);
    assert_eq!(
        document["values"][0]["items"][0],
        serde_json::json!([1.5, null])
    );
    assert_eq!(document["statistics"][0]["countNan"], 1);
    assert_eq!(document["statistics"][0]["countValid"], 1);
    assert_eq!(document["geometry"]["type"], "grid");
    assert_eq!(document["geometry"]["columns"], 2);
    assert_eq!(document["kind"], "grid");
    assert_eq!(document["reader"], "AsciiGridReader");
    assert_eq!(document["format"], ".asc");
    assert!(document["dfs"].is_null());
}

#[test]
fn a_geotiff_reports_its_epsg_code_and_name() {
    let path = fixture("geotiff", "chunky_striped_3band_uint16.tif");
    let inspection = inspect_with(&path, false, false);
    assert_eq!(inspection.reader.as_deref(), Some("GeoTiffReader"));
    let crs = inspection.crs.as_ref().unwrap();
    assert_eq!(crs.epsg, Some(32632), "{crs:?}");
    assert!(
        crs.name.as_deref().is_some_and(|name| name.contains("UTM")),
        "{crs:?}"
    );
    assert!(crs.wkt.is_some());
    let text = inspection.to_string();
    assert!(
        text.contains(&format!("EPSG:{}", crs.epsg.unwrap())),
        "{text}"
    );
}

#[test]
fn a_rotated_geotiff_reports_its_rotation() {
    let inspection = inspect_with(&fixture("geotiff", "rotated_uint16.tif"), false, false);
    let Some(GeometrySummary::Grid(grid)) = &inspection.geometry else {
        panic!("a grid expected")
    };
    assert!(grid.rotation_degrees != 0.0, "{grid:?}");
    assert!(inspection.to_string().contains("rotated"));
}

#[test]
fn a_mesh_reports_nodes_element_kinds_and_bathymetry() {
    let inspection = inspect_with(&fixture("meshes", "quad_tri.mesh"), false, false);
    assert_eq!(inspection.reader.as_deref(), Some("MeshFileReader"));
    assert_eq!(inspection.kind.as_deref(), Some("mesh"));
    let Some(GeometrySummary::Mesh(mesh)) = &inspection.geometry else {
        panic!("a mesh expected")
    };
    assert_eq!((mesh.nodes, mesh.elements), (798, 1011));
    assert_eq!(mesh.element_kinds.values().sum::<usize>(), 1011);
    assert!(mesh.element_kinds.contains_key("triangle"));
    assert!(mesh.element_kinds.contains_key("quad"));
    assert!(mesh.z_range.is_some());
    let crs = inspection.crs.as_ref().unwrap();
    assert_eq!(crs.given_as, "wkt");
    let text = inspection.to_string();
    assert!(text.contains("798 nodes, 1011 elements"), "{text}");
}

#[test]
fn features_report_counts_geometry_types_and_fields() {
    let files = Folder::new();
    let path = files.file(
        "features.geojson",
        br#"{"type": "FeatureCollection", "features": [
          {"type": "Feature", "properties": {"name": "a", "depth": 1.5},
           "geometry": {"type": "Point", "coordinates": [9.5, 55.25]}},
          {"type": "Feature", "properties": {"name": "b", "depth": 2.5},
           "geometry": {"type": "Point", "coordinates": [10.5, 56.0]}},
          {"type": "Feature", "properties": {"name": "c", "depth": null}, "geometry": null},
          {"type": "Feature", "properties": {"name": "d", "depth": 3},
           "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}
        ]}"#,
    );
    let inspection = inspect_with(&path, false, false);
    assert_eq!(inspection.kind.as_deref(), Some("feature collection"));
    let Some(GeometrySummary::Features(features)) = &inspection.geometry else {
        panic!("features expected")
    };
    assert_eq!(features.count, 4);
    assert_eq!(features.geometry_types.get("Point"), Some(&2));
    assert_eq!(features.geometry_types.get("LineString"), Some(&1));
    assert_eq!(features.null_geometries, 1);
    let names: Vec<&str> = features.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "depth"]);
    assert_eq!(inspection.extent, Some([0.0, 0.0, 10.5, 56.0]));
    assert_eq!(inspection.time, None);
    assert!(inspection.notes.is_empty(), "{:?}", inspection.notes);
    let text = inspection.to_string();
    assert!(text.contains("4 features"), "{text}");
    assert!(text.contains("2 Point"), "{text}");
}

#[test]
fn points_report_their_count_and_column_statistics() {
    let files = Folder::new();
    let path = files.file("points.xyz", b"0 0 1\n10 0 3\n10 5 -4\n");
    let inspection = inspect_with(&path, true, true);
    assert_eq!(inspection.kind.as_deref(), Some("point set"));
    assert_eq!(
        inspection.geometry,
        Some(GeometrySummary::Points(
            basin_formats::inspect::PointsSummary { count: 3 }
        ))
    );
    let statistics = inspection.statistics.as_ref().unwrap();
    assert_eq!(
        (statistics[0].min, statistics[0].max),
        (Some(-4.0), Some(3.0))
    );
    assert_eq!(statistics[0].count_valid, 3);
    assert_eq!(inspection.values, None);
    assert!(
        inspection.notes.iter().any(|note| note.contains("values")),
        "{:?}",
        inspection.notes
    );
}

#[test]
fn a_shapefile_reports_its_fields_and_coordinate_system() {
    let inspection = inspect_with(&corpus("shapefile-js/utf.shp"), false, false);
    assert_eq!(inspection.reader.as_deref(), Some("ShpReader"));
    assert_eq!(inspection.crs.as_ref().and_then(|crs| crs.epsg), Some(4326));
    let Some(GeometrySummary::Features(features)) = &inspection.geometry else {
        panic!("features expected")
    };
    assert_eq!(features.declared_geometry, "point");
    assert_eq!(features.geometry_types.get("Point"), Some(&2));
    assert_eq!(features.fields[0].width, Some(254));
    assert!(inspection.notes.is_empty(), "{:?}", inspection.notes);
}

#[test]
fn a_vtu_file_is_inspected_as_a_mesh() {
    let inspection = inspect_with(&fixture("vtk-cells", "Pixel.vtu"), false, false);
    assert_eq!(inspection.reader.as_deref(), Some("VtuReader"));
    let Some(GeometrySummary::Mesh(mesh)) = &inspection.geometry else {
        panic!("a mesh expected")
    };
    assert!(mesh.element_kinds.contains_key("pixel"), "{mesh:?}");
}

#[test]
fn a_dfs2_file_shows_its_container_header() {
    let inspection = inspect_with(&corpus("dfs-samples/grid_utm32.dfs2"), false, false);
    if inspection.reader.is_none() {
        assert!(
            inspection
                .notes
                .iter()
                .any(|note| note.contains("container")),
            "{:?}",
            inspection.notes
        );
    }
    let dfs = inspection.dfs.as_ref().unwrap();
    assert_eq!(dfs.application, "mikeio");
    assert_eq!(dfs.time.kind, "CalendarEquidistant");
    assert_eq!(dfs.time.start.as_deref(), Some("2021-03-01 12:00:00"));
    assert_eq!(dfs.time.unit, 1400);
    assert_eq!(dfs.time.step_or_span, 600.0);
    assert_eq!(dfs.steps, 3);
    assert_eq!(dfs.projection.as_ref().unwrap().name, "UTM-32");
    let names: Vec<&str> = dfs.items.iter().map(|item| item.name.as_str()).collect();
    assert_eq!(names, ["H", "U"]);
    let h = &dfs.items[0];
    assert_eq!((h.eum_item, h.eum_unit), (100_280, 1000));
    assert_eq!(h.data_type, "Float32");
    assert_eq!(h.axis.kind, "EqD2");
    assert_eq!(h.axis.counts, [5, 4]);
    assert_eq!(h.axis.spacings, [100.0, 200.0]);
    assert_eq!(h.values_per_step, Some(20));
    assert_eq!(
        dfs.header_bytes + 3 * dfs.bytes_per_step,
        inspection.file_bytes
    );
    let text = inspection.to_string();
    for expected in [
        "DFS container",
        "CalendarEquidistant",
        "UTM-32",
        "EqD2",
        "5 x 4",
    ] {
        assert!(text.contains(expected), "{expected} missing from\n{text}");
    }
    let document = json(&inspection);
    assert_eq!(document["dfs"]["items"][0]["axis"]["type"], "EqD2");
    assert_eq!(document["dfs"]["time"]["type"], "CalendarEquidistant");
}

#[test]
fn a_dfsu_file_shows_its_custom_block_and_static_items() {
    let inspection = inspect_with(&corpus("dfs-samples/mesh2d_mixed.dfsu"), false, false);
    let dfs = inspection.dfs.as_ref().unwrap();
    let block = dfs
        .custom_blocks
        .iter()
        .find(|block| block.name == "MIKE_FM")
        .unwrap();
    assert_eq!(block.data_type, "Int32");
    assert!(block.values.is_some());
    assert!(dfs.static_items.len() >= 5, "{:?}", dfs.static_items);
    assert!(dfs.data_type >= 2000, "{}", dfs.data_type);
    let text = inspection.to_string();
    assert!(
        text.contains("MIKE_FM") && text.contains("Static items"),
        "{text}"
    );
}

#[test]
fn a_non_equidistant_dfs0_shows_its_span() {
    let inspection = inspect_with(&corpus("dfs-samples/ts_neq.dfs0"), false, false);
    let dfs = inspection.dfs.as_ref().unwrap();
    assert_eq!(dfs.time.kind, "CalendarNonEquidistant");
    assert_eq!(dfs.items[0].axis.kind, "EqD0");
    assert!(inspection.to_string().contains("span"));
}

#[test]
fn a_dfs_file_without_a_reader_notes_that_values_were_not_read() {
    let inspection = inspect_with(&corpus("dfs-samples/cube.dfs3"), true, true);
    if inspection.reader.is_none() {
        assert_eq!(inspection.statistics, None);
        assert!(
            inspection
                .notes
                .iter()
                .any(|note| note.contains("need a reader")),
            "{:?}",
            inspection.notes
        );
    }
    assert_eq!(inspection.dfs.as_ref().unwrap().items[0].axis.kind, "EqD3");
}

#[test]
fn every_dfs_sample_can_be_inspected() {
    for entry in std::fs::read_dir(corpus("dfs-samples")).unwrap() {
        let path = entry.unwrap().path();
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if extension.starts_with("dfs") {
            let inspection = inspect_with(&path, false, false);
            assert!(inspection.dfs.is_some(), "{}", path.display());
            assert!(!inspection.to_string().is_empty());
        }
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let error = failure(Path::new("/no/such/file.tif"), None, &[], false);
    assert!(matches!(error, FormatError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("/no/such/file.tif"), "{error}");
}

#[test]
fn an_unknown_file_needs_a_reader_name() {
    let files = Folder::new();
    let path = files.file("notes.txt", b"hello");
    let error = failure(&path, None, &[], false);
    assert!(error.to_string().contains("--reader"), "{error}");
    let error = failure(&path, Some("NoSuchReader"), &[], false);
    assert!(error.to_string().contains("NoSuchReader"), "{error}");
    let error = failure(&path, Some("FileReader"), &[], false);
    assert!(error.to_string().contains("plain copy"), "{error}");
    let folder = failure(files.dir.path(), None, &[], false);
    assert!(folder.to_string().contains("folder"), "{folder}");
}

#[test]
fn a_broken_file_is_the_readers_error() {
    let files = Folder::new();
    let path = files.file("broken.asc", b"this is not a grid\n");
    let error = failure(&path, None, &[], false);
    assert!(
        matches!(error, FormatError::InvalidInput { .. }),
        "{error:?}"
    );
}

#[test]
fn a_file_with_the_dfs_signature_but_a_broken_header_is_an_error() {
    let files = Folder::new();
    let mut bytes = basin_formats::dfs::container::MAGIC.to_vec();
    bytes.extend_from_slice(b"  FOpenFileCreate\x1a and then nothing sensible");
    let path = files.file("broken.dfsx", &bytes);
    let error = failure(&path, None, &[], false);
    assert!(error.to_string().contains("DFS"), "{error}");
}

#[test]
fn bad_reader_parameters_are_refused() {
    let files = Folder::new();
    let path = files.file("grid.asc", GRID.as_bytes());
    let error = failure(&path, None, &[("Colour", "red")], false);
    assert!(matches!(error, FormatError::Parameter { .. }), "{error:?}");
}

#[test]
fn values_of_a_large_file_are_refused_before_they_are_read() {
    use basin_formats::model::{
        Data, DataType, Dataset, GeoTransform, GridGeometry, GridHeader, Header, Item, TimeAxis,
        Values,
    };
    use basin_formats::{Parameters, Writer};
    let files = Folder::new();
    let path = files.dir.path().join("large.tif");
    let (columns, rows) = (4000, 2600);
    let dataset = Dataset {
        header: Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns,
                rows,
                vertical: None,
                transform: GeoTransform::north_up(0.0, 0.0, 1.0, 1.0),
                crs: None,
            },
            items: vec![Item::new("band", DataType::U8)],
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![vec![Values::U8(vec![0; columns * rows])]]),
    };
    let raw = [("Compression".to_owned(), "NONE".to_owned())];
    let writer = basin_formats::geotiff::GeoTiffWriter;
    let parameters = Parameters::validate(writer.spec().parameters, &raw).unwrap();
    let mut sink = writer.create(&path, &parameters).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap();
    let error = failure(&path, None, &[], true);
    assert!(
        matches!(error, FormatError::LimitExceeded { limit, .. } if limit == VALUES_MAX),
        "{error:?}"
    );
    assert!(error.to_string().contains("--statistics"), "{error}");
}

#[test]
fn the_text_form_is_aligned_and_labelled() {
    let files = Folder::new();
    let path = files.file("grid.asc", GRID.as_bytes());
    let text = inspect_with(&path, false, true).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("File        "), "{text}");
    assert!(
        lines[1].starts_with("Reader      AsciiGridReader (.asc)"),
        "{text}"
    );
    assert!(
        text.contains("Grid        3 columns x 2 rows, cells 10 x 10"),
        "{text}"
    );
    assert!(
        text.contains("Extent      x 500000 to 500030, y 6000000 to 6000020"),
        "{text}"
    );
    // The statistics table's columns line up under their headings.
    let heading = lines
        .iter()
        .position(|line| line.trim_start().starts_with("#  Name") && line.contains("Mean"))
        .unwrap();
    let row = lines[heading + 1];
    assert_eq!(
        lines[heading].find("Min"),
        row.find(" 1 ").map(|at| at + 1),
        "{text}"
    );
    assert!(row.contains("3.3"), "{text}");
}

/// Statistics of every DFS sample a reader reads, against the minimum, maximum, sum and shape
/// MIKE IO recorded in the `.json` beside it. Samples without a reader are skipped until their
/// reader is in the catalogue; items the reader does not expose as items (the Z coordinate of
/// a layered dfsu) are not in the JSON either.
#[test]
fn dfs_statistics_match_mikeios_for_every_sample_with_a_reader() {
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(corpus("dfs-samples")).unwrap() {
        let path = entry.unwrap().path();
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !extension.starts_with("dfs") {
            continue;
        }
        let inspection = inspect_with(&path, false, true);
        let Some(statistics) = &inspection.statistics else {
            continue;
        };
        let expected =
            crate::helpers::python_json_file(&path.with_extension(format!("{extension}.json")));
        for (name, values) in expected["values"].as_object().unwrap() {
            let ours = statistics
                .iter()
                .find(|item| item.item == *name)
                .unwrap_or_else(|| panic!("{}: no item {name}", path.display()));
            let count: u64 = values["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|size| size.as_u64().unwrap())
                .product();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            let context = format!("{} {name}: {ours:?} against {values}", path.display());
            assert_eq!(ours.count_valid + ours.count_nan, count, "{context}");
            assert!(
                close(ours.min.unwrap(), values["min"].as_f64().unwrap()),
                "{context}"
            );
            assert!(
                close(ours.max.unwrap(), values["max"].as_f64().unwrap()),
                "{context}"
            );
            let sum = ours.mean.unwrap() * ours.count_valid as f64;
            assert!(close(sum, values["sum"].as_f64().unwrap()), "{context}");
        }
        checked.push(path);
    }
    eprintln!("statistics checked on {} DFS samples", checked.len());
}

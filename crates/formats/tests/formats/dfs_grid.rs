//! DFS1, DFS2 and DFS3 grids: every sample checked value for value, time and coordinates
//! against what MIKE IO reported when it wrote it (the `.json` beside each), every grid of
//! MIKE IO's test data against its summary, the writers' bytes against MIKE IO's own files,
//! conversions to GeoTIFF, ASCII Grid and VTU, the transformations, and the failures.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use basin_formats::ReadLimits;
use basin_formats::catalogue::{Catalogue, Conversion, ReadContext, Reader, Writer};
use basin_formats::dfs::container::{DfsFile, DfsWriter, SpatialAxis, StaticItem, axis};
use basin_formats::dfs::grid::{
    DFS1_READER, DFS2_READER, DFS2_WRITER, DFS3_READER, Dfs1Reader, Dfs2Reader, Dfs2Writer,
    Dfs3Reader,
};
use basin_formats::model::{
    Data, DataType, Dataset, ElementKind, GridGeometry, Header, TimeAxis, Values,
};
use basin_formats::transform::Transformation;
use basin_formats::vtu::VtuReader;
use serde_json::Value;

use crate::helpers::{corpus, params};

/// The JSON beside a sample or the summary of a corpus file; Python's `NaN` read as null.
fn json_of(path: &Path) -> Value {
    crate::helpers::python_json_file(path)
}

fn reader_for(path: &Path) -> Box<dyn Reader> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("dfs1") => Box::new(Dfs1Reader),
        Some("dfs2") => Box::new(Dfs2Reader),
        _ => Box::new(Dfs3Reader),
    }
}

fn read_with(path: &Path, raw: &[(&str, &str)]) -> basin_formats::FormatResult<Dataset> {
    let reader = reader_for(path);
    let parameters = params(reader.spec().parameters, raw);
    Dataset::collect(|sink| reader.read(path, &parameters, &ReadContext::default(), sink))
}

fn read(path: &Path) -> Dataset {
    read_with(path, &[]).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn grid_of(dataset: &Dataset) -> (&basin_formats::model::GridHeader, &Vec<Vec<Values>>) {
    let Header::Grid(grid) = &dataset.header else {
        panic!("a grid expected")
    };
    let Data::Values(steps) = &dataset.data else {
        panic!("values expected")
    };
    (grid, steps)
}

/// Centre of the file's cell (x, y) (y counted from the south, as DFS and MIKE IO count).
fn file_cell_centre(geometry: &GridGeometry, x: usize, y: usize) -> (f64, f64) {
    let row = geometry.rows - 1 - y;
    geometry.transform.apply(x as f64 + 0.5, row as f64 + 0.5)
}

/// The sample's `data[item]` as `[step][layer][y][x]` flattened per step in model order
/// (layers, then rows north to south).
fn expected_steps(data: &Value, geometry: &GridGeometry) -> Vec<Vec<Option<f64>>> {
    let steps = data.as_array().unwrap();
    steps
        .iter()
        .map(|step| {
            let layers: Vec<&Value> = if geometry.vertical.is_some() {
                step.as_array().unwrap().iter().collect()
            } else {
                vec![step]
            };
            let mut out = Vec::new();
            for layer in layers {
                let rows: Vec<&Value> = if geometry.rows == 1 && !layer[0].is_array() {
                    vec![layer]
                } else {
                    layer.as_array().unwrap().iter().rev().collect()
                };
                for row in rows {
                    out.extend(row.as_array().unwrap().iter().map(Value::as_f64));
                }
            }
            out
        })
        .collect()
}

/// The item's name and EUM codes against the JSON's `name` and the two code keys.
fn assert_item_codes(item: &basin_formats::model::Item, want: &Value, keys: [&str; 2], file: &str) {
    let code = |key: &str| want[key].as_i64().map(|c| c as i32);
    assert_eq!(item.name, want["name"].as_str().unwrap(), "{file}");
    assert_eq!(item.quantity.eum_item, code(keys[0]), "{file}");
    assert_eq!(item.quantity.eum_unit, code(keys[1]), "{file}");
}

#[test]
fn samples_match_mike_io_values_items_and_times() {
    for name in [
        "line.dfs1",
        "grid_utm32.dfs2",
        "grid_longlat.dfs2",
        "grid_utm32_rotated.dfs2",
        "cube.dfs3",
    ] {
        let path = corpus("dfs-samples", name);
        let expected = json_of(&corpus("dfs-samples", &format!("{name}.json")));
        let dataset = read(&path);
        let (grid, steps) = grid_of(&dataset);
        let items = expected["items"].as_array().unwrap();
        assert_eq!(grid.items.len(), items.len(), "{name}");
        for (index, (item, want)) in grid.items.iter().zip(items).enumerate() {
            assert_item_codes(item, want, ["eum_type_code", "eum_unit_code"], name);
            assert_eq!(item.data_type, DataType::F32);
            let data = expected_steps(&expected["data"][&item.name], &grid.geometry);
            assert_eq!(steps.len(), data.len(), "{name}");
            for (step, want) in data.iter().enumerate() {
                let got = steps[step][index].to_f64();
                assert_eq!(got.len(), want.len(), "{name} step {step}");
                for (cell, (got, want)) in got.iter().zip(want).enumerate() {
                    match want {
                        Some(want) => assert_eq!(got, want, "{name} step {step} cell {cell}"),
                        None => assert!(got.is_nan(), "{name} step {step} cell {cell}"),
                    }
                }
            }
        }
        let times = expected["time"]["all"].as_array().unwrap();
        assert_eq!(grid.time.steps(), times.len());
        for (step, want) in times.iter().enumerate() {
            let time = grid.time.time(step).unwrap();
            assert_eq!(
                time.format("%Y-%m-%dT%H:%M:%S").to_string(),
                want.as_str().unwrap()
            );
        }
    }
}

fn assert_close(got: (f64, f64), want: (f64, f64), tolerance: f64, what: &str) {
    assert!(
        (got.0 - want.0).abs() <= tolerance && (got.1 - want.1).abs() <= tolerance,
        "{what}: {got:?} where MIKE IO gives {want:?}"
    );
}

/// The first cell's centre, the next cell along x and the next along y, as MIKE IO places
/// them (`geometry.x`, `.y`, or for rotated grids its origin and orientation).
/// Within 1e-6 m, MIKE IO's rounding of its projected origin (measured: 5.3e-7 m at most).
#[test]
fn coordinates_match_mike_io() {
    // (folder, file, centre of the first cell, orientation from grid north, dx, dy)
    type Case = (&'static str, &'static str, (f64, f64), f64, f64, f64);
    let cases: [Case; 8] = [
        ("dfs-samples", "line.dfs1", (100.0, 0.0), 0.0, 25.0, 25.0),
        (
            "dfs-samples",
            "grid_utm32.dfs2",
            (500000.0, 6100000.0),
            0.0,
            100.0,
            200.0,
        ),
        (
            "dfs-samples",
            "grid_longlat.dfs2",
            (10.0, 55.0),
            0.0,
            0.5,
            0.25,
        ),
        (
            "dfs-samples",
            "grid_utm32_rotated.dfs2",
            (400000.0, 6000000.0),
            30.0,
            50.0,
            50.0,
        ),
        ("dfs-samples", "cube.dfs3", (5.0, 10.0), 0.0, 10.0, 20.0),
        ("mikeio", "waves.dfs2", (25.0, 25.0), 0.0, 50.0, 50.0),
        (
            "mikeio",
            "random.dfs2",
            (308124.0, 6098907.000001),
            0.0,
            100.0,
            100.0,
        ),
        (
            "mikeio",
            "BW_Ronne_Layout1998_rotated_crop.dfs2",
            (479687.895664, 6104948.344472),
            -22.238790239263466,
            5.0,
            5.0,
        ),
    ];
    for (folder, name, centre, orientation, dx, dy) in cases {
        let dataset = read(&corpus(folder, name));
        let (grid, _) = grid_of(&dataset);
        let geometry = &grid.geometry;
        let (sin, cos) = orientation.to_radians().sin_cos();
        assert_close(file_cell_centre(geometry, 0, 0), centre, 1e-6, name);
        if geometry.columns > 1 {
            let want = (centre.0 + dx * cos, centre.1 - dx * sin);
            assert_close(file_cell_centre(geometry, 1, 0), want, 1e-6, name);
        }
        if geometry.rows > 1 {
            let want = (centre.0 + dy * sin, centre.1 + dy * cos);
            assert_close(file_cell_centre(geometry, 0, 1), want, 1e-6, name);
        }
    }
}

#[test]
fn cube_keeps_its_vertical_axis() {
    let dataset = read(&corpus("dfs-samples", "cube.dfs3"));
    let (grid, _) = grid_of(&dataset);
    let vertical = grid.geometry.vertical.unwrap();
    assert_eq!(
        (vertical.origin, vertical.spacing, vertical.count),
        (-10.0, 5.0, 2)
    );
}

#[test]
fn coordinate_interpretations_move_the_origin() {
    let path = corpus("dfs-samples", "grid_longlat.dfs2");
    let transform = |value: &str| {
        let dataset = read_with(&path, &[("CoordinateInterpretationType", value)]).unwrap();
        let (grid, _) = grid_of(&dataset);
        grid.geometry.transform.to_gdal()
    };
    // 5 x 4 cells of 0.5 x 0.25 degrees from (10, 55).
    assert_eq!(
        transform("CenterOfCell"),
        [9.75, 0.5, 0.0, 55.875, 0.0, -0.25]
    );
    assert_eq!(
        transform("bottomleftborder"),
        [10.0, 0.5, 0.0, 56.0, 0.0, -0.25]
    );
    // The origin and the last point (12, 55.75) are the borders: cells of 0.4 x 0.1875.
    let borders = transform("Borders");
    let want = [10.0, 0.4, 0.0, 55.75, 0.0, -0.1875];
    for (got, want) in borders.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{borders:?}");
    }
}

#[test]
fn allowed_item_names_select_items() {
    let path = corpus("dfs-samples", "grid_utm32.dfs2");
    let dataset = read_with(&path, &[("AllowedItemNames", "u")]).unwrap();
    let (grid, steps) = grid_of(&dataset);
    assert_eq!(grid.items.len(), 1);
    assert_eq!(grid.items[0].name, "U");
    assert!(steps.iter().all(|step| step.len() == 1));
    assert!(read_with(&path, &[("AllowedItemNames", "V")]).is_err());
}

fn expected_float(value: &Value) -> f64 {
    value.as_f64().unwrap()
}

#[test]
fn mike_io_grids_match_their_summaries() {
    let mut checked = 0;
    for entry in std::fs::read_dir(corpus("mikeio", "")).unwrap() {
        let path = entry.unwrap().path();
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["dfs1", "dfs2", "dfs3"].contains(&extension) {
            continue;
        }
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let expected = json_of(&corpus("mikeio/expected", &format!("{name}.json")));
        let dataset = read(&path);
        let (grid, steps) = grid_of(&dataset);
        let geometry = &grid.geometry;
        assert_eq!(
            grid.time.steps(),
            expected["n_timesteps"].as_u64().unwrap() as usize
        );
        assert_eq!(steps.len(), grid.time.steps(), "{name}");
        assert_eq!(
            geometry.columns as u64,
            expected["nx"].as_u64().unwrap(),
            "{name}"
        );
        if let Some(ny) = expected["ny"].as_u64() {
            assert_eq!(geometry.rows as u64, ny, "{name}");
        }
        if let Some(nz) = expected["nz"].as_u64() {
            assert_eq!(geometry.layers() as u64, nz, "{name}");
        }
        let dx = expected_float(&expected["dx"]);
        assert!(
            (geometry
                .transform
                .pixel_width
                .hypot(geometry.transform.column_rotation)
                - dx)
                .abs()
                < 1e-9
        );
        for (index, want) in expected["items"].as_array().unwrap().iter().enumerate() {
            check_item_summary(&name, &grid.items[index], steps, index, want);
        }
        checked += 1;
    }
    assert_eq!(checked, 11, "the corpus has 11 DFS grids");
}

/// One item of a corpus file against MIKE IO's summary: codes, NaN count, min, max and sum.
fn check_item_summary(
    name: &str,
    item: &basin_formats::model::Item,
    steps: &[Vec<Values>],
    index: usize,
    want: &Value,
) {
    assert_item_codes(item, want, ["type_code", "unit_code"], name);
    let all: Vec<f64> = steps.iter().flat_map(|step| step[index].to_f64()).collect();
    let nan = all.iter().filter(|v| v.is_nan()).count();
    assert_eq!(
        nan as u64,
        want["nan_count"].as_u64().unwrap(),
        "{name} {}",
        item.name
    );
    let finite: Vec<f64> = all.iter().copied().filter(|v| !v.is_nan()).collect();
    if finite.is_empty() {
        return;
    }
    let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = finite.iter().sum();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    assert!(
        close(min, expected_float(&want["min"])),
        "{name} {}",
        item.name
    );
    assert!(
        close(max, expected_float(&want["max"])),
        "{name} {}",
        item.name
    );
    let want_sum = expected_float(&want["sum"]);
    assert!(
        (sum - want_sum).abs() <= 1e-6 * want_sum.abs().max(1.0),
        "{name} {}: sum {sum} vs {want_sum}",
        item.name
    );
}

/// Offsets of the two preamble timestamps.
fn is_timestamp(offset: usize) -> bool {
    (0x52..0x5E).contains(&offset) || (0x66..0x72).contains(&offset)
}

fn convert(
    input: &Path,
    output: &Path,
    reader: &[(&str, &str)],
    writer: &[(&str, &str)],
) -> basin_formats::catalogue::Written {
    convert_with(input, output, reader, writer, &[])
}

fn convert_with(
    input: &Path,
    output: &Path,
    reader: &[(&str, &str)],
    writer: &[(&str, &str)],
    transformations: &[Transformation],
) -> basin_formats::catalogue::Written {
    let owned = |raw: &[(&str, &str)]| -> Vec<(String, String)> {
        raw.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    let (reader, writer) = (owned(reader), owned(writer));
    Catalogue::standard()
        .convert(
            input,
            output,
            &Conversion {
                reader_parameters: &reader,
                writer_parameters: &writer,
                transformations,
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap_or_else(|error| panic!("{} -> {}: {error}", input.display(), output.display()))
}

const AS_MIKE_IO: [(&str, &str); 3] = [
    ("Title", ""),
    ("ApplicationTitle", "mikeio"),
    ("ApplicationVersion", "220"),
];

/// Differences outside the timestamps, as (offset, ours, theirs).
fn byte_differences(ours: &[u8], theirs: &[u8]) -> Vec<(usize, u8, u8)> {
    assert_eq!(ours.len(), theirs.len(), "file sizes differ");
    ours.iter()
        .zip(theirs)
        .enumerate()
        .filter(|(offset, (a, b))| a != b && !is_timestamp(*offset))
        .map(|(offset, (a, b))| (offset, *a, *b))
        .collect()
}

#[test]
fn writers_give_mike_io_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "line.dfs1",
        "grid_utm32.dfs2",
        "grid_longlat.dfs2",
        "cube.dfs3",
    ] {
        let input = corpus("dfs-samples", name);
        let output = dir.path().join(name);
        convert(&input, &output, &[], &AS_MIKE_IO);
        let differences = byte_differences(
            &std::fs::read(&output).unwrap(),
            &std::fs::read(&input).unwrap(),
        );
        assert!(differences.is_empty(), "{name}: {differences:?}");
    }
}

/// The rotated sample's projection record holds an orientation and an origin computed with
/// DHI's cartography; Basin's (proj4rs) agree to within the tolerance, and everything else is
/// byte for byte the same.
#[test]
fn rotated_writer_matches_mike_io_within_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let input = corpus("dfs-samples", "grid_utm32_rotated.dfs2");
    let output = dir.path().join("rotated.dfs2");
    convert(&input, &output, &[], &AS_MIKE_IO);
    let ours = DfsFile::open(&output, &ReadLimits::default()).unwrap();
    let theirs = DfsFile::open(&input, &ReadLimits::default()).unwrap();
    let (a, b) = (
        ours.header.file.projection.clone().unwrap(),
        theirs.header.file.projection.clone().unwrap(),
    );
    assert_eq!(a.name, b.name);
    assert!(
        (a.origin_longitude - b.origin_longitude).abs() < 1e-9,
        "{a:?} {b:?}"
    );
    assert!(
        (a.origin_latitude - b.origin_latitude).abs() < 1e-9,
        "{a:?} {b:?}"
    );
    assert!((a.orientation - b.orientation).abs() < 1e-9, "{a:?} {b:?}");
    let mut ours_header = ours.header.clone();
    ours_header.file.projection = Some(b);
    ours_header.created = theirs.header.created;
    ours_header.modified = theirs.header.modified;
    assert_eq!(ours_header, theirs.header);
    let differences = byte_differences(
        &std::fs::read(&output).unwrap(),
        &std::fs::read(&input).unwrap(),
    );
    // Only bytes of the projection record's three doubles may differ.
    assert!(differences.len() <= 24, "{differences:?}");
}

#[test]
fn dfs2_round_trips_through_geotiff_and_ascii_grid() {
    let dir = tempfile::tempdir().unwrap();
    let input = corpus("dfs-samples", "grid_utm32.dfs2");
    let original = read(&input);
    let (grid, steps) = grid_of(&original);
    let tif = dir.path().join("grid.tif");
    let written = convert(&input, &tif, &[("AllowedItemNames", "U")], &[]);
    assert!(written.files.contains(&tif));
    let back = dir.path().join("back.dfs2");
    convert(&tif, &back, &[], &[]);
    let again = read(&back);
    let (grid_again, steps_again) = grid_of(&again);
    assert_eq!(grid_again.geometry.transform, grid.geometry.transform);
    assert_eq!(grid_again.geometry.columns, grid.geometry.columns);
    let first = steps[0][1].to_f64();
    let first_again = steps_again[0][0].to_f64();
    for (a, b) in first.iter().zip(&first_again) {
        assert!(a == b || (a.is_nan() && b.is_nan()));
    }
    let asc = dir.path().join("grid.asc");
    let first_step =
        Transformation::TemporalFilter(basin_formats::TemporalFilter::IndexList(vec![0]));
    convert_with(
        &input,
        &asc,
        &[("AllowedItemNames", "U")],
        &[],
        &[first_step],
    );
    let text = std::fs::read_to_string(&asc).unwrap();
    assert!(text.to_ascii_lowercase().contains("nodata_value"), "{text}");
    let from_asc = dir.path().join("from_asc.dfs2");
    convert(&asc, &from_asc, &[], &[]);
    let from_asc = read(&from_asc);
    let (grid_asc, _) = grid_of(&from_asc);
    assert_eq!(grid_asc.geometry.transform, grid.geometry.transform);
}

#[test]
fn grids_become_vtu_cells() {
    let dir = tempfile::tempdir().unwrap();
    // (file, VTK cell type, cells, points)
    let cases = [
        ("line.dfs1", ElementKind::Quad, 7, 16),
        ("grid_utm32_rotated.dfs2", ElementKind::Quad, 20, 30),
        ("cube.dfs3", ElementKind::Hexahedron, 24, 60),
    ];
    for (name, kind, cells, points) in cases {
        let input = corpus("dfs-samples", name);
        let output = dir.path().join(format!("{name}.vtu"));
        let last =
            Transformation::TemporalFilter(basin_formats::TemporalFilter::IndexList(vec![1]));
        convert_with(&input, &output, &[], &[], &[last]);
        let parameters = params(VtuReader.spec().parameters, &[]);
        let mesh = Dataset::collect(|sink| {
            VtuReader.read(&output, &parameters, &ReadContext::default(), sink)
        })
        .unwrap();
        let Header::Mesh(header) = &mesh.header else {
            panic!("a mesh expected")
        };
        let geometry = &header.geometry;
        assert!(geometry.elements.kinds.iter().all(|k| *k == kind), "{name}");
        assert_eq!(geometry.elements.len(), cells, "{name}");
        assert_eq!(geometry.nodes.len(), points, "{name}");
        // Cell values in the grid's order, step 1.
        let source = read(&input);
        let (_, steps) = grid_of(&source);
        let Data::Values(mesh_steps) = &mesh.data else {
            panic!("values expected")
        };
        let want = steps[1][0].to_f64();
        let got = mesh_steps[0][0].to_f64();
        assert_eq!(got.len(), want.len());
        for (a, b) in got.iter().zip(&want) {
            assert!(a == b || (a.is_nan() && b.is_nan()), "{name}");
        }
    }
    // The rotated grid's first file cell (south-west corner) starts at its lower-left corner:
    // the centre (400000, 6000000) less half a cell along both rotated axes.
    let dataset = read(&corpus("dfs-samples", "grid_utm32_rotated.dfs2"));
    let (grid, _) = grid_of(&dataset);
    let mesh = basin_formats::adapt::grid_to_mesh(grid).unwrap();
    let nodes = &mesh.geometry.nodes;
    let first = mesh.geometry.elements.nodes(15).unwrap()[0] as usize;
    let (sin, cos) = 30f64.to_radians().sin_cos();
    let want = (
        400000.0 - 25.0 * cos - 25.0 * sin,
        6000000.0 + 25.0 * sin - 25.0 * cos,
    );
    assert_close((nodes.x[first], nodes.y[first]), want, 1e-6, "corner");
}

#[test]
fn transformations_work_on_grids() {
    let dir = tempfile::tempdir().unwrap();
    let input = corpus("dfs-samples", "grid_utm32.dfs2");
    // CrsTransformation: the UTM grid warped to WGS 84 and written as DFS2 in LONG/LAT.
    let crs = dir.path().join("crs.dfs2");
    let transformations = [Transformation::Crs {
        input_srid: None,
        output_srid: 4326,
    }];
    convert_with(&input, &crs, &[], &[], &transformations);
    let warped = read(&crs);
    let (grid, _) = grid_of(&warped);
    let (x, y) = file_cell_centre(&grid.geometry, 0, 0);
    assert!(
        (x - 9.0).abs() < 0.01 && (y - 55.05).abs() < 0.01,
        "{x} {y}"
    );
    let record = DfsFile::open(&crs, &ReadLimits::default())
        .unwrap()
        .header
        .file
        .projection;
    assert!(record.unwrap().name.contains("WGS"));
    // ItemFilterTransformation.
    let items = dir.path().join("items.dfs2");
    let selection = Transformation::ItemFilter(basin_formats::ItemSelection {
        indices: Vec::new(),
        names: vec!["U".to_owned()],
    });
    convert_with(&input, &items, &[], &[], &[selection]);
    let dataset = read(&items);
    let (grid, steps) = grid_of(&dataset);
    assert_eq!(grid.items.len(), 1);
    assert_eq!(grid.items[0].name, "U");
    assert_eq!(
        steps[1][0].to_f64().iter().filter(|v| v.is_nan()).count(),
        1
    );
    // TemporalFilterTransformation.
    let steps_path = dir.path().join("steps.dfs2");
    let filter = Transformation::TemporalFilter(basin_formats::TemporalFilter::IndexList(vec![2]));
    convert_with(&input, &steps_path, &[], &[], &[filter]);
    let dataset = read(&steps_path);
    let (grid, steps) = grid_of(&dataset);
    assert_eq!(grid.time.steps(), 1);
    assert_eq!(
        grid.time.time(0).unwrap().format("%H:%M").to_string(),
        "12:20"
    );
    let original = read(&input);
    let (_, original_steps) = grid_of(&original);
    assert_eq!(steps[0], original_steps[2]);
}

// ---------------------------------------------------------------------------------------------
// Failures.

#[test]
fn truncated_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(corpus("dfs-samples", "grid_utm32.dfs2")).unwrap();
    for length in [0, 100, 400, bytes.len() - 3] {
        let path = dir.path().join(format!("cut{length}.dfs2"));
        std::fs::write(&path, &bytes[..length]).unwrap();
        assert!(read_with(&path, &[]).is_err(), "{length} bytes");
    }
}

#[test]
fn an_item_axis_of_another_dimension_is_an_error() {
    let path = corpus("dfs-samples", "grid_utm32.dfs2");
    let parameters = params(DFS3_READER.parameters, &[]);
    let error =
        Dataset::collect(|sink| Dfs3Reader.read(&path, &parameters, &ReadContext::default(), sink))
            .unwrap_err();
    assert!(error.to_string().contains("EqD2"), "{error}");
    let parameters = params(DFS1_READER.parameters, &[]);
    assert!(
        Dataset::collect(|sink| Dfs1Reader.read(&path, &parameters, &ReadContext::default(), sink))
            .is_err()
    );
}

#[test]
fn an_unknown_coordinate_interpretation_is_refused() {
    let raw = vec![(
        "CoordinateInterpretationType".to_owned(),
        "Corner".to_owned(),
    )];
    let error = basin_formats::Parameters::validate(DFS2_READER.parameters, &raw).unwrap_err();
    assert!(
        error.to_string().contains("CoordinateInterpretationType"),
        "{error}"
    );
}

/// A compressed DFS3 of a 3 x 2 x 2 grid with three stored cells.
fn compressed_file(dir: &Path, keys: [Vec<i32>; 3]) -> PathBuf {
    compressed_grid(dir, keys, [3, 2, 2])
}

/// A compressed DFS3 of a grid of `counts` cells storing one value per key.
fn compressed_grid(dir: &Path, keys: [Vec<i32>; 3], counts: [i32; 3]) -> PathBuf {
    let source =
        DfsFile::open(&corpus("dfs-samples", "cube.dfs3"), &ReadLimits::default()).unwrap();
    let mut header = source.header.clone();
    header.file.compressed = 1;
    header.file.time.steps = 1;
    let grid_axis = SpatialAxis::eq_d3(1000, counts, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]);
    for item in &mut header.items {
        item.axis = grid_axis.clone();
    }
    let count = keys[0].len() as i32;
    let key_axis = SpatialAxis {
        tag: axis::EQ_D3,
        unit: 1000,
        counts: vec![count, 1, 1],
        coordinates: vec![Values::F32(vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0])],
    };
    header.statics = ["X-Encoding Key", "Y-Encoding Key", "Z-Encoding Key"]
        .iter()
        .zip(keys)
        .map(|(name, values)| {
            let mut info = header.items[0].clone();
            info.name = (*name).to_owned();
            info.data_type = DataType::I32;
            info.axis = key_axis.clone();
            StaticItem {
                info,
                values: Values::I32(values),
            }
        })
        .collect();
    let path = dir.join("compressed.dfs3");
    let mut writer = DfsWriter::new(Cursor::new(Vec::new()), &path, header).unwrap();
    writer.start_step(None).unwrap();
    writer
        .write_item(&Values::F32((0..count).map(|v| v as f32 + 1.0).collect()))
        .unwrap();
    let bytes = writer.finish().unwrap().into_inner();
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn compressed_dfs3_is_expanded() {
    let dir = tempfile::tempdir().unwrap();
    let path = compressed_file(dir.path(), [vec![0, 2, 1], vec![0, 1, 0], vec![0, 0, 1]]);
    let dataset = read(&path);
    let (grid, steps) = grid_of(&dataset);
    assert_eq!(grid.geometry.layers(), 2);
    let values = steps[0][0].to_f64();
    // Layer 0: (x 0, y 0) is the bottom row, model row 1; (2, 1) is the top row, model row 0.
    let at = |x: usize, y: usize, z: usize| values[(z * 2 + (1 - y)) * 3 + x];
    assert_eq!(at(0, 0, 0), 1.0);
    assert_eq!(at(2, 1, 0), 2.0);
    assert_eq!(at(1, 0, 1), 3.0);
    assert_eq!(values.iter().filter(|v| v.is_nan()).count(), 9);
}

#[test]
fn compressed_keys_out_of_range_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = compressed_file(dir.path(), [vec![0, 3, 1], vec![0, 1, 0], vec![0, 0, 1]]);
    let error = read_with(&path, &[]).unwrap_err();
    assert!(error.to_string().contains("encoding key 1"), "{error}");
    let path = compressed_file(dir.path(), [vec![0, 1, 1], vec![0, -1, 0], vec![0, 0, 1]]);
    assert!(read_with(&path, &[]).is_err());
}

#[test]
fn a_dfs1_writer_refuses_several_rows() {
    let dir = tempfile::tempdir().unwrap();
    let input = corpus("dfs-samples", "grid_utm32.dfs2");
    let output = dir.path().join("line.dfs1");
    let error = Catalogue::standard()
        .convert(
            &input,
            &output,
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(error.to_string().contains("one row"), "{error}");
    assert!(!output.exists());
    let _ = (DFS2_WRITER, Dfs2Writer.spec(), TimeAxis::None);
}

/// A copy of a sample with its header edited by `edit` (the values copied as they are; the
/// edit must keep every item's value count).
fn edited(
    dir: &Path,
    sample: &str,
    edit: impl FnOnce(&mut basin_formats::dfs::container::DfsHeader),
) -> PathBuf {
    let source = corpus("dfs-samples", sample);
    let mut file = DfsFile::open(&source, &ReadLimits::default()).unwrap();
    let mut header = file.header.clone();
    edit(&mut header);
    let path = dir.join(format!("edited_{sample}"));
    let items = header.items.len();
    let mut writer = DfsWriter::new(Cursor::new(Vec::new()), &path, header).unwrap();
    let mut values = Values::with_capacity(DataType::F32, 0);
    for step in 0..file.steps() {
        writer.start_step(None).unwrap();
        for item in 0..items {
            file.read_values(step, item, &mut values).unwrap();
            writer.write_item(&values).unwrap();
        }
    }
    std::fs::write(&path, writer.finish().unwrap().into_inner()).unwrap();
    path
}

fn error_of(path: &Path, raw: &[(&str, &str)]) -> String {
    read_with(path, raw).unwrap_err().to_string()
}

#[test]
fn malformed_grids_are_errors_naming_what() {
    let dir = tempfile::tempdir().unwrap();
    let swapped = edited(dir.path(), "grid_utm32.dfs2", |header| {
        header.items[1].axis = SpatialAxis::eq_d2(1000, 4, 5, [0.0, 0.0], [100.0, 200.0]);
    });
    assert!(error_of(&swapped, &[]).contains("shares one axis"));
    let flat = edited(dir.path(), "grid_utm32.dfs2", |header| {
        for item in &mut header.items {
            item.axis = SpatialAxis::eq_d2(1000, 5, 4, [0.0, 0.0], [0.0, 200.0]);
        }
    });
    assert!(error_of(&flat, &[]).contains("do not describe a grid"));
    let empty = edited(dir.path(), "grid_utm32.dfs2", |header| header.items.clear());
    assert!(error_of(&empty, &[]).contains("no dynamic items"));
}

#[test]
fn a_projection_name_basin_cannot_place_needs_an_srid() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited(dir.path(), "grid_utm32.dfs2", |header| {
        if let Some(projection) = header.file.projection.as_mut() {
            projection.name = "DKS".to_owned();
        }
    });
    assert!(error_of(&path, &[]).contains("SRID"));
    // EPSG:32632 is what UTM-32 means: the same placement as the sample's.
    let with_srid = read_with(&path, &[("SRID", "32632")]).unwrap();
    let original = read(&corpus("dfs-samples", "grid_utm32.dfs2"));
    let (a, _) = grid_of(&with_srid);
    let (b, _) = grid_of(&original);
    assert_close(
        file_cell_centre(&a.geometry, 0, 0),
        file_cell_centre(&b.geometry, 0, 0),
        1e-6,
        "SRID",
    );
    assert_eq!(a.geometry.crs, Some(basin_formats::crs::Crs::Epsg(32632)));
    // NON-UTM with an SRID: the origin is taken as it is, in that system.
    let local = read_with(&corpus("dfs-samples", "line.dfs1"), &[("SRID", "25832")]).unwrap();
    let (grid, _) = grid_of(&local);
    assert_eq!(
        grid.geometry.crs,
        Some(basin_formats::crs::Crs::Epsg(25832))
    );
    assert_close(
        file_cell_centre(&grid.geometry, 0, 0),
        (100.0, 0.0),
        0.0,
        "NON-UTM",
    );
}

#[test]
fn compressed_keys_must_be_three_equal_int32_items() {
    let dir = tempfile::tempdir().unwrap();
    let huge = compressed_grid(
        dir.path(),
        [vec![0, 1, 2], vec![0, 0, 0], vec![0, 0, 0]],
        [5000, 5000, 1],
    );
    assert!(error_of(&huge, &[]).contains("cells per stored value"));
    let path = compressed_file(dir.path(), [vec![0, 1, 1], vec![0, 1], vec![0, 0, 1]]);
    assert!(error_of(&path, &[]).contains("must be equal"));
    let uncompressed_keys = edited(dir.path(), "cube.dfs3", |header| header.file.compressed = 1);
    assert!(error_of(&uncompressed_keys, &[]).contains("encoding keys"));
}

/// A 3 x 2 Int16 grid with nodata -9999 and one step, north-up in UTM 32.
fn int16_grid(layers: Option<usize>) -> Dataset {
    use basin_formats::model::{GeoTransform, GridHeader, Item, VerticalAxis};
    let mut item = Item::new("depth", DataType::I16);
    item.nodata = Some(-9999.0);
    let count = layers.unwrap_or(1);
    Dataset {
        header: Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns: 3,
                rows: 2,
                vertical: layers.map(|count| VerticalAxis {
                    origin: -5.0,
                    spacing: 2.0,
                    count,
                }),
                transform: GeoTransform::north_up(500000.0, 6000020.0, 10.0, 10.0),
                crs: Some(basin_formats::crs::Crs::Epsg(32632)),
            },
            items: vec![item],
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![vec![Values::I16(
            (0..6 * count as i16)
                .map(|v| if v == 4 { -9999 } else { v })
                .collect(),
        )]]),
    }
}

fn write_dataset(
    writer: &dyn Writer,
    dataset: &Dataset,
    output: &Path,
) -> basin_formats::FormatResult<basin_formats::catalogue::Written> {
    let parameters = params(writer.spec().parameters, &[]);
    let mut sink = writer.create(output, &parameters)?;
    dataset.replay(sink.as_mut())?;
    sink.finish()
}

#[test]
fn integer_grids_are_written_as_floats_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("int.dfs2");
    let written = write_dataset(&Dfs2Writer, &int16_grid(None), &output).unwrap();
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("written as Float32")),
        "{:?}",
        written.notes
    );
    let dataset = read(&output);
    let (grid, steps) = grid_of(&dataset);
    assert_eq!(grid.items[0].data_type, DataType::F32);
    let values = steps[0][0].to_f64();
    assert_eq!(values[..4], [0.0, 1.0, 2.0, 3.0]);
    assert!(values[4].is_nan());
    let Header::Grid(source) = &int16_grid(None).header else {
        panic!("a grid")
    };
    assert_eq!(grid.geometry.transform, source.geometry.transform);
    let record = DfsFile::open(&output, &ReadLimits::default())
        .unwrap()
        .header;
    assert_eq!(record.file.application, "Basin");
    assert!(
        record
            .file
            .projection
            .unwrap()
            .name
            .contains("UTM zone 32N")
    );
}

#[test]
fn layered_grids_need_dfs3_and_dfs3_takes_2d_grids() {
    let dir = tempfile::tempdir().unwrap();
    let layered = int16_grid(Some(2));
    let error = write_dataset(&Dfs2Writer, &layered, &dir.path().join("x.dfs2")).unwrap_err();
    assert!(error.to_string().contains("write it as DFS3"), "{error}");
    let cube = dir.path().join("cube.dfs3");
    write_dataset(&basin_formats::dfs::grid::Dfs3Writer, &layered, &cube).unwrap();
    let dataset = read(&cube);
    let (grid, steps) = grid_of(&dataset);
    assert_eq!(grid.geometry.vertical.unwrap().origin, -5.0);
    assert_eq!(steps[0][0].len(), 12);
    let flat = dir.path().join("flat.dfs3");
    write_dataset(
        &basin_formats::dfs::grid::Dfs3Writer,
        &int16_grid(None),
        &flat,
    )
    .unwrap();
    let flat = read(&flat);
    let (grid, _) = grid_of(&flat);
    assert_eq!(grid.geometry.layers(), 1);
}

#[test]
fn sheared_grids_and_other_kinds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut sheared = int16_grid(None);
    if let Header::Grid(grid) = &mut sheared.header {
        grid.geometry.transform.row_rotation = 3.0;
    }
    let error = write_dataset(&Dfs2Writer, &sheared, &dir.path().join("s.dfs2")).unwrap_err();
    assert!(error.to_string().contains("sheared"), "{error}");
    let mesh = Catalogue::standard().convert(
        &corpus("dfs-samples", "mesh2d_mixed.mesh"),
        &dir.path().join("m.dfs2"),
        &Conversion::default(),
        &ReadContext::default(),
    );
    assert!(mesh.is_err());
}

/// mikecore-python's compressed MIKE 3 file: expanded as MIKE IO expands it (its summary and
/// 20 cells); its projection `DKS` needs an SRID (any projected one places it for this test).
#[test]
fn a_real_compressed_dfs3_matches_mike_io() {
    let path = corpus("mikecore", "OresundHD.dfs3");
    let expected = json_of(&corpus("mikecore/expected", "OresundHD.dfs3.json"));
    assert!(error_of(&path, &[]).contains("SRID"));
    let dataset = read_with(&path, &[("SRID", "2196")]).unwrap();
    let (grid, steps) = grid_of(&dataset);
    let geometry = &grid.geometry;
    assert_eq!(
        (geometry.columns, geometry.rows, geometry.layers()),
        (72, 94, 41)
    );
    assert_eq!(steps.len(), 5);
    for (index, want) in expected["items"].as_array().unwrap().iter().enumerate() {
        check_item_summary("OresundHD.dfs3", &grid.items[index], steps, index, want);
    }
    let item = expected["cells"]["item"].as_u64().unwrap() as usize;
    for cell in expected["cells"]["values"].as_array().unwrap() {
        let at = |index: usize| cell[index].as_u64().unwrap() as usize;
        let (step, z, y, x) = (at(0), at(1), at(2), at(3));
        let model = geometry.index(x, geometry.rows - 1 - y, z);
        let got = steps[step][item].get_f64(model).unwrap();
        // Compared as the file's float32 (the JSON's decimal is MIKE IO's float32 widened).
        assert_eq!(got as f32, cell[4].as_f64().unwrap() as f32, "{cell}");
    }
}

#[test]
fn local_positions_float32_cannot_hold_go_to_the_projection_origin() {
    use basin_formats::model::GeoTransform;
    let dir = tempfile::tempdir().unwrap();
    let mut dataset = int16_grid(Some(1));
    if let Header::Grid(grid) = &mut dataset.header {
        grid.geometry.crs = None;
        grid.geometry.transform = GeoTransform::north_up(123456.789, 2000.0, 0.5, 0.5);
    }
    let output = dir.path().join("local.dfs3");
    write_dataset(&basin_formats::dfs::grid::Dfs3Writer, &dataset, &output).unwrap();
    let header = DfsFile::open(&output, &ReadLimits::default())
        .unwrap()
        .header;
    let record = header.file.projection.unwrap();
    assert_eq!(record.name, "NON-UTM");
    assert_eq!(record.origin_longitude, 123457.039);
    let back = read(&output);
    let (grid, _) = grid_of(&back);
    assert_eq!(grid.geometry.transform.origin_x, 123456.789);
    // A position float32 holds stays in the axis, as MIKE IO writes it.
    if let Header::Grid(grid) = &mut dataset.header {
        grid.geometry.transform = GeoTransform::north_up(100.0, 2000.0, 0.5, 0.5);
    }
    write_dataset(&basin_formats::dfs::grid::Dfs3Writer, &dataset, &output).unwrap();
    let header = DfsFile::open(&output, &ReadLimits::default())
        .unwrap()
        .header;
    assert_eq!(header.file.projection.unwrap().origin_longitude, 0.0);
    assert_eq!(
        header.items[0].axis.equidistant().unwrap()[0],
        (100.25, 0.5)
    );
}

#[test]
fn a_system_basin_cannot_project_is_refused_by_the_writers() {
    let dir = tempfile::tempdir().unwrap();
    let mut dataset = int16_grid(None);
    if let Header::Grid(grid) = &mut dataset.header {
        grid.geometry.crs = Some(basin_formats::crs::Crs::Named("DKS".to_owned()));
    }
    let error = write_dataset(&Dfs2Writer, &dataset, &dir.path().join("dks.dfs2")).unwrap_err();
    assert!(error.to_string().contains("CrsTransformation"), "{error}");
}

#[test]
fn values_that_do_not_fill_the_axis_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // Written as compressed (so that the writer takes 3 values for a 12-cell axis), then the
    // flag cleared: an uncompressed file whose records are shorter than the axis.
    let path = compressed_file(dir.path(), [vec![0, 2, 1], vec![0, 1, 0], vec![0, 0, 1]]);
    let mut bytes = std::fs::read(&path).unwrap();
    let tag = [0xFE, 0x1D, 0x27];
    let at = bytes.windows(3).position(|window| window == tag).unwrap();
    // FE tag, then the record: type 4, count 1, the value.
    assert_eq!(&bytes[at + 3..at + 8], &[4, 1, 0, 0, 0]);
    bytes[at + 8] = 0;
    std::fs::write(&path, bytes).unwrap();
    let error = error_of(&path, &[]);
    assert!(
        error.contains("3 values per step where its axis spans 12"),
        "{error}"
    );
}

/// Every byte of every sample changed in turn (to its complement, and to 0x7F, a large count
/// byte): each reader returns a result, never panics; what it reads has its grid's shape.
#[test]
fn corrupted_samples_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["line.dfs1", "grid_utm32_rotated.dfs2", "cube.dfs3"] {
        let original = std::fs::read(corpus("dfs-samples", name)).unwrap();
        let path = dir.path().join(name);
        for offset in 0x82..original.len() {
            for value in [!original[offset], 0x7F] {
                let mut bytes = original.clone();
                bytes[offset] = value;
                std::fs::write(&path, &bytes).unwrap();
                if let Ok(dataset) = read_with(&path, &[]) {
                    let (grid, steps) = grid_of(&dataset);
                    let cells = grid.geometry.cells().unwrap();
                    assert!(steps.iter().flatten().all(|values| values.len() == cells));
                }
            }
        }
    }
}

/// A DFS2 cut in two by time and appended together again is the original.
#[test]
fn a_dfs2_split_in_time_appends_back_to_the_original() {
    crate::dfsu::split_and_append(&corpus("dfs-samples", "grid_utm32.dfs2"), "dfs2", 0);
}

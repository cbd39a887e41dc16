//! Appending one dataset to another: time steps of grids, meshes and time series (in memory,
//! since no reader here produces time steps, and into a real VTU series), features through
//! the catalogue (GeoJSON and Shapefile files), points, and every mismatch.

use std::path::{Path, PathBuf};

use crate::helpers::{assert_marked, at, fixture, grid, hourly, items_and_time, mesh, series};

use basin_formats::append::{append_datasets, combine_headers, read_header};
use basin_formats::catalogue::{Reader, Writer};
use basin_formats::crs::Crs;
use basin_formats::geo_json::GeoJsonReader;
use basin_formats::model::{
    Data, DataKind, DataType, Dataset, DatasetSink, Header, Item, TimeAxis, Value, Values,
};
use basin_formats::shp::ShpReader;
use basin_formats::summary::DataSize;
use basin_formats::vtu::VtuWriter;
use basin_formats::{
    Append, Catalogue, Conversion, FormatError, FormatResult, Parameters, ReadContext,
};

fn append(existing: &Dataset, addition: &Dataset) -> FormatResult<Dataset> {
    Dataset::collect(|sink| {
        append_datasets(
            &|sink: &mut dyn DatasetSink| existing.replay(sink),
            &|sink: &mut dyn DatasetSink| addition.replay(sink),
            sink,
        )
    })
}

fn append_error(existing: &Dataset, addition: &Dataset) -> String {
    let error = append(existing, addition).unwrap_err();
    assert!(matches!(error, FormatError::Append(_)), "{error:?}");
    assert!(error.is_input_error());
    error.to_string()
}

// ---------------------------------------------------------------------------------------------
// Time steps

#[test]
fn grid_steps_follow_on_and_keep_the_axis_equidistant() {
    let existing = grid(&["H", "U"], hourly("2020-01-01T00:00:00", 2));
    let addition = grid(&["H", "U"], hourly("2020-01-01T02:00:00", 3));
    let combined = append(&existing, &addition).unwrap();
    let (names, time) = items_and_time(&combined);
    assert_eq!(names, vec!["H", "U"]);
    assert_eq!(time, hourly("2020-01-01T00:00:00", 5));
    assert_marked(&combined, (1, 1), (1, 1));
    // The addition's step 0 is step 2 of the whole.
    assert_marked(&combined, (2, 0), (0, 0));
    assert_marked(&combined, (4, 1), (2, 1));
}

#[test]
fn mesh_steps_after_a_gap_make_calendar_times_in_a_vtu_series() {
    let existing = mesh(&["H"], hourly("2020-01-01T00:00:00", 2));
    let addition = mesh(&["H"], hourly("2020-01-02T00:00:00", 2));
    let combined = append(&existing, &addition).unwrap();
    assert_eq!(
        items_and_time(&combined).1,
        TimeAxis::Calendar(vec![
            at("2020-01-01T00:00:00"),
            at("2020-01-01T01:00:00"),
            at("2020-01-02T00:00:00"),
            at("2020-01-02T01:00:00"),
        ])
    );
    assert_marked(&combined, (3, 0), (1, 0));

    // Into a real writer: four .vtu files and a .pvd.
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("series.zip");
    let parameters = Parameters::validate(VtuWriter.spec().parameters, &[]).unwrap();
    let mut writer = VtuWriter.create(&output, &parameters).unwrap();
    append_datasets(
        &|sink: &mut dyn DatasetSink| existing.replay(sink),
        &|sink: &mut dyn DatasetSink| addition.replay(sink),
        writer.as_mut(),
    )
    .unwrap();
    writer.finish().unwrap();
    let archive = zip::ZipArchive::new(std::fs::File::open(&output).unwrap()).unwrap();
    assert_eq!(archive.len(), 5);
}

#[test]
fn time_series_with_relative_offsets_concatenate_when_they_continue() {
    let existing = series(&["Q"], TimeAxis::Relative(vec![0.0, 60.0]));
    let addition = series(&["Q"], TimeAxis::Relative(vec![120.0, 180.0]));
    let combined = append(&existing, &addition).unwrap();
    assert_eq!(
        items_and_time(&combined).1,
        TimeAxis::Relative(vec![0.0, 60.0, 120.0, 180.0])
    );
    assert_marked(&combined, (2, 0), (0, 0));
    let error = append_error(&existing, &existing);
    assert!(
        error.contains("the addition's time offsets must continue after the existing data's last offset (60 s); the addition starts at 0 s"),
        "{error}"
    );
}

#[test]
fn mismatched_items_geometry_and_times_are_named() {
    let time = hourly("2020-01-01T00:00:00", 1);
    let later = hourly("2020-01-01T01:00:00", 1);
    let existing = grid(&["H", "U", "V"], time.clone());

    let error = append_error(&existing, &grid(&["H", "U"], later.clone()));
    assert!(
        error.contains(
            "cannot append: the items differ: existing has [H, U, V], the addition has [H, U]"
        ),
        "{error}"
    );

    let mut other_type = grid(&["H", "U", "V"], later.clone());
    if let Header::Grid(header) = &mut other_type.header {
        header.items[1] = Item::new("U", DataType::I16);
    }
    if let Data::Values(steps) = &mut other_type.data {
        steps[0][1] = Values::I16(vec![0; 4]);
    }
    let error = append_error(&existing, &other_type);
    assert!(
        error.contains("item \"U\" is Float32 in the existing data and Int16 in the addition"),
        "{error}"
    );

    let mut moved = grid(&["H", "U", "V"], later.clone());
    if let Header::Grid(header) = &mut moved.header {
        header.geometry.transform.origin_x += 5.0;
    }
    let error = append_error(&existing, &moved);
    assert!(error.contains("the grids differ in placement"), "{error}");

    let mut reprojected = grid(&["H", "U", "V"], later.clone());
    if let Header::Grid(header) = &mut reprojected.header {
        header.geometry.crs = Some(Crs::Epsg(25832));
    }
    let error = append_error(&existing, &reprojected);
    assert!(
        error.contains(
            "the coordinate systems differ: existing EPSG:32632, the addition EPSG:25832"
        ),
        "{error}"
    );

    let error = append_error(&existing, &grid(&["H", "U", "V"], time.clone()));
    assert!(
        error.contains("the addition starts at 2020-01-01T00:00:00, which is not after the existing data's last time 2020-01-01T00:00:00"),
        "{error}"
    );

    let error = append_error(&grid(&["H"], TimeAxis::None), &grid(&["H"], TimeAxis::None));
    assert!(
        error.contains("the existing data has no time axis"),
        "{error}"
    );

    let error = append_error(&existing, &mesh(&["H", "U", "V"], later.clone()));
    assert!(
        error.contains("the existing data is a grid and the addition a mesh"),
        "{error}"
    );

    let mut other_mesh = mesh(&["H"], later);
    if let Header::Mesh(header) = &mut other_mesh.header {
        let mut geometry = (*header.geometry).clone();
        geometry.nodes.y[2] = 11.0;
        header.geometry = std::sync::Arc::new(geometry);
    }
    let error = append_error(&mesh(&["H"], time), &other_mesh);
    assert!(
        error.contains(
            "node 3 is at (10.0, 10.0, -3.0) in the existing data and at (10.0, 11.0, -3.0)"
        ),
        "{error}"
    );
}

#[test]
fn headers_are_read_without_reading_the_data() {
    let dataset = grid(&["H"], hourly("2020-01-01T00:00:00", 3));
    let frames = std::cell::Cell::new(0);
    struct Counting<'a>(&'a std::cell::Cell<usize>, &'a mut dyn DatasetSink);
    impl DatasetSink for Counting<'_> {
        fn begin(&mut self, header: &Header) -> FormatResult<()> {
            self.1.begin(header)
        }
        fn frame(&mut self, frame: basin_formats::model::Frame<'_>) -> FormatResult<()> {
            self.0.set(self.0.get() + 1);
            self.1.frame(frame)
        }
        fn end(&mut self) -> FormatResult<()> {
            self.1.end()
        }
    }
    let header =
        read_header(&|sink: &mut dyn DatasetSink| dataset.replay(&mut Counting(&frames, sink)))
            .unwrap();
    assert_eq!(header, dataset.header);
    assert_eq!(frames.get(), 0);
    let combined = combine_headers(
        &header,
        &grid(&["H"], hourly("2020-01-01T03:00:00", 1)).header,
    )
    .unwrap();
    assert_eq!(
        combined.items_and_time().unwrap().1,
        &hourly("2020-01-01T00:00:00", 4)
    );
}

// ---------------------------------------------------------------------------------------------
// Through the catalogue, on files

fn geojson(folder: &Path, name: &str, features: &[(f64, i64, &str)]) -> PathBuf {
    let features: Vec<String> = features
        .iter()
        .map(|(x, id, label)| {
            format!(
                r#"{{"type": "Feature", "geometry": {{"type": "Point", "coordinates": [{x}, 55.0]}},
                    "properties": {{"id": {id}, "label": "{label}"}}}}"#
            )
        })
        .collect();
    let path = folder.join(name);
    std::fs::write(
        &path,
        format!(
            r#"{{"type": "FeatureCollection", "features": [{}]}}"#,
            features.join(",")
        ),
    )
    .unwrap();
    path
}

fn read_features(reader: &dyn Reader, path: &Path) -> Dataset {
    Dataset::collect(|sink| {
        reader.read(path, &Parameters::default(), &ReadContext::default(), sink)
    })
    .unwrap()
}

fn values_of(dataset: &Dataset) -> Vec<Vec<Value>> {
    let Data::Features(features) = &dataset.data else {
        panic!("features expected")
    };
    features
        .iter()
        .map(|feature| feature.values.clone())
        .collect()
}

#[test]
fn geojson_features_append_to_geojson() {
    let folder = tempfile::tempdir().unwrap();
    let existing = geojson(
        folder.path(),
        "existing.geojson",
        &[(10.0, 1, "a"), (11.0, 2, "b")],
    );
    let addition = geojson(folder.path(), "addition.geojson", &[(12.0, 3, "c")]);
    let output = folder.path().join("combined.geojson");
    let written = Catalogue::standard()
        .append(
            &existing,
            &addition,
            &output,
            &Append::default(),
            &ReadContext::default(),
        )
        .unwrap();
    assert_eq!(written.files, vec![output.clone()]);
    let summary = written.summary.unwrap();
    assert_eq!(summary.kind, DataKind::Features);
    assert_eq!(summary.size, DataSize::Features { count: 3 });
    assert_eq!(summary.extent, Some([10.0, 55.0, 12.0, 55.0]));
    assert_eq!(summary.srid, Some(4326));
    let combined = read_features(&GeoJsonReader, &output);
    assert_eq!(
        values_of(&combined),
        vec![
            vec![Value::Integer(1), Value::Text("a".to_owned())],
            vec![Value::Integer(2), Value::Text("b".to_owned())],
            vec![Value::Integer(3), Value::Text("c".to_owned())],
        ]
    );
}

#[test]
fn geojson_features_append_to_a_shapefile_into_a_shapefile() {
    let folder = tempfile::tempdir().unwrap();
    let catalogue = Catalogue::standard();
    let source = geojson(folder.path(), "source.geojson", &[(10.0, 1, "a")]);
    let existing = folder.path().join("existing.shp");
    catalogue
        .convert(
            &source,
            &existing,
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap();
    // Fields in another order: matched by name.
    let addition = folder.path().join("addition.geojson");
    std::fs::write(
        &addition,
        r#"{"type": "FeatureCollection", "features": [
            {"type": "Feature", "geometry": {"type": "Point", "coordinates": [11, 56]},
             "properties": {"label": "b", "id": 2}}]}"#,
    )
    .unwrap();
    let output = folder.path().join("combined.shp");
    let written = catalogue
        .append(
            &existing,
            &addition,
            &output,
            &Append::default(),
            &ReadContext::default(),
        )
        .unwrap();
    assert_eq!(
        written.summary.unwrap().size,
        DataSize::Features { count: 2 }
    );
    let combined = read_features(&ShpReader, &output);
    assert_eq!(
        values_of(&combined),
        vec![
            vec![Value::Integer(1), Value::Text("a".to_owned())],
            vec![Value::Integer(2), Value::Text("b".to_owned())],
        ]
    );
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn mismatched_files_fail_before_writing_and_leave_no_output() {
    let folder = tempfile::tempdir().unwrap();
    let catalogue = Catalogue::standard();
    let existing = geojson(folder.path(), "existing.geojson", &[(10.0, 1, "a")]);
    let other = folder.path().join("other.geojson");
    std::fs::write(
        &other,
        r#"{"type": "FeatureCollection", "features": [
            {"type": "Feature", "geometry": {"type": "Point", "coordinates": [11, 56]},
             "properties": {"id": 2, "colour": "red"}}]}"#,
    )
    .unwrap();
    let before = listing(folder.path());
    for output in ["out.shp", "out.geojson"] {
        let error = catalogue
            .append(
                &existing,
                &other,
                &folder.path().join(output),
                &Append::default(),
                &ReadContext::default(),
            )
            .unwrap_err();
        assert!(
            error.to_string().contains(
                "cannot append: the fields differ: existing has [id, label], the addition has [id, colour]"
            ),
            "{error}"
        );
        assert_eq!(listing(folder.path()), before);
    }

    // Meshes without time cannot take more steps.
    let mesh_file = fixture("meshes", "quad_tri.mesh");
    let error = catalogue
        .append(
            &mesh_file,
            &mesh_file,
            &folder.path().join("out.mesh"),
            &Append::default(),
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(error.to_string().contains("no time axis"), "{error}");

    // Kinds that differ.
    let error = catalogue
        .append(
            &mesh_file,
            &existing,
            &folder.path().join("out.shp"),
            &Append::default(),
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the existing data is a mesh and the addition a feature collection"),
        "{error}"
    );
    assert_eq!(listing(folder.path()), before);
}

#[test]
fn append_requests_are_checked_before_any_file_is_read() {
    let catalogue = Catalogue::standard();
    let missing = Path::new("/nonexistent/a.geojson");
    let request = Append {
        existing_reader: Some("FileReader"),
        ..Append::default()
    };
    let error = catalogue
        .prepare_append(
            missing,
            missing,
            Path::new("/nonexistent/out.geojson"),
            &request,
        )
        .err()
        .unwrap();
    assert!(error.to_string().contains("cannot append"), "{error}");
    let request = Append {
        writer: Some("GeoTiffWriter"),
        ..Append::default()
    };
    let error = catalogue
        .prepare_append(
            missing,
            missing,
            Path::new("/nonexistent/out.tif"),
            &request,
        )
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("cannot feed GeoTiffWriter"),
        "{error}"
    );
    let unknown = vec![("Colour".to_owned(), "red".to_owned())];
    let request = Append {
        addition_reader_parameters: &unknown,
        ..Append::default()
    };
    let error = catalogue
        .prepare_append(
            missing,
            missing,
            Path::new("/nonexistent/out.geojson"),
            &request,
        )
        .err()
        .unwrap();
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");

    let folder = tempfile::tempdir().unwrap();
    let existing = geojson(folder.path(), "existing.geojson", &[(10.0, 1, "a")]);
    let error = catalogue
        .append(
            &existing,
            &existing,
            &existing,
            &Append::default(),
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(error.to_string().contains("is an input"), "{error}");
}

#[test]
fn point_sets_append_into_one_vtu() {
    let folder = tempfile::tempdir().unwrap();
    let first = folder.path().join("first.xyz");
    let second = folder.path().join("second.xyz");
    std::fs::write(&first, "0 0 1\n1 0 2\n").unwrap();
    std::fs::write(&second, "2 0 3\n").unwrap();
    let output = folder.path().join("points.vtu");
    let written = Catalogue::standard()
        .append(
            &first,
            &second,
            &output,
            &Append::default(),
            &ReadContext::default(),
        )
        .unwrap();
    let summary = written.summary.unwrap();
    assert_eq!(summary.kind, DataKind::Mesh);
    assert_eq!(
        summary.size,
        DataSize::Mesh {
            nodes: 3,
            elements: 3
        }
    );
    assert_eq!(summary.extent, Some([0.0, 0.0, 2.0, 0.0]));
}

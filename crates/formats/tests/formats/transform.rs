//! The item and temporal filters on every kind of data (in-memory datasets replayed through
//! `transform::apply` into a `CollectSink`, whose order checks catch a frame that was not
//! re-numbered), through the catalogue on real files, and their JSON forms.

use std::io::Read;
use std::path::Path;

use crate::helpers::{
    assert_marked, at, fixture, grid, hourly, items_and_time, mesh, series, steps_of,
};

use basin_formats::catalogue::{Reader, Writer};
use basin_formats::crs::Crs;
use basin_formats::geotiff::GeoTiffReader;
use basin_formats::model::{
    Coord, Data, Dataset, Feature, FeatureSchema, Field, FieldType, Geometry, GeometryKind, Header,
    Item, PointChunk, PointHeader, TimeAxis, Value,
};
use basin_formats::transform::{self, parse_type};
use basin_formats::vtu::VtuWriter;
use basin_formats::{
    Catalogue, Conversion, FormatError, FormatResult, ItemSelection, Parameters, ReadContext,
    TemporalFilter, Transformation,
};
use serde_json::json;

fn run(dataset: &Dataset, transformations: &[Transformation]) -> FormatResult<Dataset> {
    Dataset::collect(|sink| {
        let mut wrapped = transform::apply(transformations, sink)?;
        dataset.replay(wrapped.as_mut())
    })
}

fn items(indices: &[usize], names: &[&str]) -> Transformation {
    Transformation::ItemFilter(ItemSelection {
        indices: indices.to_vec(),
        names: names.iter().map(|name| (*name).to_owned()).collect(),
    })
}

fn steps(filter: TemporalFilter) -> Transformation {
    Transformation::TemporalFilter(filter)
}

fn range(from: Option<usize>, to: Option<usize>) -> Transformation {
    steps(TemporalFilter::IndexRange { from, to })
}

fn features() -> Dataset {
    let schema = FeatureSchema {
        fields: vec![
            Field::new("id", FieldType::Integer),
            Field::new("name", FieldType::Text),
            Field::new("depth", FieldType::Float),
        ],
        geometry_kind: GeometryKind::Point,
        has_z: false,
        has_m: false,
        crs: Some(Crs::Epsg(4326)),
    };
    let features = (0..3)
        .map(|index| Feature {
            geometry: Some(Geometry::Point(Coord::xy(index as f64, 0.0))),
            values: vec![
                Value::Integer(index),
                Value::Text(format!("f{index}")),
                Value::Float(index as f64 / 2.0),
            ],
        })
        .collect();
    Dataset {
        header: Header::Features(schema),
        data: Data::Features(features),
    }
}

fn points() -> Dataset {
    Dataset {
        header: Header::Points(PointHeader {
            crs: None,
            z_item: Item::new("z", basin_formats::model::DataType::F64),
            items: Vec::new(),
            count: None,
        }),
        data: Data::Points(PointChunk {
            x: vec![1.0],
            y: vec![2.0],
            z: vec![3.0],
            items: Vec::new(),
        }),
    }
}

fn transformation_error(result: FormatResult<Dataset>) -> String {
    let error = result.expect_err("an error");
    assert!(
        matches!(error, FormatError::Transformation { .. }),
        "{error:?}"
    );
    assert!(error.is_input_error());
    error.to_string()
}

// ---------------------------------------------------------------------------------------------
// Item filter

#[test]
fn the_item_filter_keeps_the_union_in_the_grids_own_order() {
    let source = grid(&["H", "U", "V", "P"], hourly("2020-01-01T00:00:00", 2));
    let filtered = run(&source, &[items(&[3], &["u", "H"])]).unwrap();
    let (names, time) = items_and_time(&filtered);
    assert_eq!(names, vec!["H", "U", "P"]);
    assert_eq!(time, hourly("2020-01-01T00:00:00", 2));
    for step in 0..2 {
        assert_marked(&filtered, (step, 0), (step, 0));
        assert_marked(&filtered, (step, 1), (step, 1));
        assert_marked(&filtered, (step, 2), (step, 3));
    }
}

#[test]
fn the_item_filter_applies_to_meshes_and_time_series() {
    let source = mesh(&["H", "U", "V"], hourly("2020-01-01T00:00:00", 3));
    let filtered = run(&source, &[items(&[], &["V"])]).unwrap();
    assert_eq!(items_and_time(&filtered).0, vec!["V"]);
    let Header::Mesh(header) = &filtered.header else {
        panic!()
    };
    let Header::Mesh(original) = &source.header else {
        panic!()
    };
    assert_eq!(header.geometry, original.geometry);
    for step in 0..3 {
        assert_eq!(steps_of(&filtered)[step].len(), 1);
        assert_marked(&filtered, (step, 0), (step, 2));
    }

    let source = series(&["Q", "WL"], TimeAxis::Relative(vec![0.0, 60.0]));
    let filtered = run(&source, &[items(&[1], &[])]).unwrap();
    assert_eq!(items_and_time(&filtered).0, vec!["WL"]);
    assert_marked(&filtered, (1, 0), (1, 1));
}

#[test]
fn the_item_filter_selects_feature_fields() {
    let filtered = run(&features(), &[items(&[2], &["ID"])]).unwrap();
    let Header::Features(schema) = &filtered.header else {
        panic!()
    };
    let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["id", "depth"]);
    let Data::Features(kept) = &filtered.data else {
        panic!()
    };
    assert_eq!(kept.len(), 3);
    assert_eq!(kept[1].values, vec![Value::Integer(1), Value::Float(0.5)]);
    assert_eq!(kept[1].geometry, Some(Geometry::Point(Coord::xy(1.0, 0.0))));
}

#[test]
fn item_filter_errors_name_the_item_and_come_at_begin() {
    let source = grid(&["H", "U"], TimeAxis::None);
    let error = transformation_error(run(&source, &[items(&[], &["W"])]));
    assert!(
        error.contains("ItemFilterTransformation: no item named \"W\"; the items are \"H\", \"U\""),
        "{error}"
    );
    let error = transformation_error(run(&source, &[items(&[0, 5], &[])]));
    assert!(error.contains("item index 5 is out of range"), "{error}");
    let error = transformation_error(run(&features(), &[items(&[], &["colour"])]));
    assert!(error.contains("no field named \"colour\""), "{error}");
    let error = transformation_error(run(&points(), &[items(&[0], &[])]));
    assert!(
        error.contains("item filter does not apply to point sets"),
        "{error}"
    );
    let error = transformation_error(run(&source, &[items(&[], &[])]));
    assert!(error.contains("selects no item"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// Temporal filter

#[test]
fn an_index_range_keeps_an_equidistant_axis_with_a_new_start() {
    let source = grid(&["H", "U"], hourly("2020-01-01T00:00:00", 6));
    let filtered = run(&source, &[range(Some(2), Some(4))]).unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        hourly("2020-01-01T02:00:00", 3)
    );
    for step in 0..3 {
        assert_marked(&filtered, (step, 0), (step + 2, 0));
        assert_marked(&filtered, (step, 1), (step + 2, 1));
    }
    // Open bounds, and a `to` past the end, mean the first and last steps.
    let filtered = run(&source, &[range(None, Some(1))]).unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        hourly("2020-01-01T00:00:00", 2)
    );
    let filtered = run(&source, &[range(Some(4), Some(99))]).unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        hourly("2020-01-01T04:00:00", 2)
    );
}

#[test]
fn index_lists_keep_strides_equidistant_and_others_as_calendar_times() {
    let source = mesh(&["H"], hourly("2020-01-01T00:00:00", 8));
    let filtered = run(
        &source,
        &[steps(TemporalFilter::IndexList(vec![7, 1, 4, 4]))],
    )
    .unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        TimeAxis::Equidistant {
            start: at("2020-01-01T01:00:00"),
            step_seconds: 3.0 * 3600.0,
            steps: 3
        }
    );
    assert_marked(&filtered, (2, 0), (7, 0));
    let filtered = run(&source, &[steps(TemporalFilter::IndexList(vec![0, 1, 5]))]).unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        TimeAxis::Calendar(vec![
            at("2020-01-01T00:00:00"),
            at("2020-01-01T01:00:00"),
            at("2020-01-01T05:00:00"),
        ])
    );
    assert_marked(&filtered, (2, 0), (5, 0));
}

#[test]
fn a_time_range_selects_calendar_and_equidistant_steps_inclusively() {
    let times = vec![
        at("2020-01-01T00:00:00"),
        at("2020-01-01T06:00:00"),
        at("2020-01-02T00:00:00"),
        at("2020-01-03T00:00:00"),
    ];
    let source = series(&["Q"], TimeAxis::Calendar(times.clone()));
    let filter = steps(TemporalFilter::TimeRange {
        from: Some(at("2020-01-01T06:00:00")),
        to: Some(at("2020-01-02T00:00:00")),
    });
    let filtered = run(&source, std::slice::from_ref(&filter)).unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        TimeAxis::Calendar(times[1..3].to_vec())
    );
    assert_marked(&filtered, (0, 0), (1, 0));
    assert_marked(&filtered, (1, 0), (2, 0));

    let source = grid(&["H"], hourly("2020-01-01T00:00:00", 48));
    let filtered = run(&source, &[filter]).unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        hourly("2020-01-01T06:00:00", 19)
    );
    assert_marked(&filtered, (18, 0), (24, 0));
}

#[test]
fn relative_axes_keep_their_selected_offsets() {
    let source = series(&["Q"], TimeAxis::Relative(vec![0.0, 10.0, 30.0, 60.0]));
    let filtered = run(&source, &[range(Some(1), None)]).unwrap();
    assert_eq!(
        items_and_time(&filtered).1,
        TimeAxis::Relative(vec![10.0, 30.0, 60.0])
    );
    let error = transformation_error(run(
        &source,
        &[steps(TemporalFilter::TimeRange {
            from: Some(at("2020-01-01T00:00:00")),
            to: None,
        })],
    ));
    assert!(error.contains("needs calendar times"), "{error}");
}

#[test]
fn data_without_time_passes_a_filter_that_keeps_step_zero_only() {
    for source in [grid(&["H"], TimeAxis::None), features()] {
        let filtered = run(&source, &[range(Some(0), None)]).unwrap();
        assert_eq!(filtered, source);
        let filtered = run(&source, &[steps(TemporalFilter::IndexList(vec![0]))]).unwrap();
        assert_eq!(filtered, source);
    }
    let error = transformation_error(run(&grid(&["H"], TimeAxis::None), &[range(Some(1), None)]));
    assert!(
        error.contains("the temporal filter selects no time step of the 1"),
        "{error}"
    );
    let error = transformation_error(run(
        &features(),
        &[steps(TemporalFilter::IndexList(vec![2]))],
    ));
    assert!(
        error.contains("a feature collection has no time steps: time step index 2 is out of range"),
        "{error}"
    );
    let error = transformation_error(run(
        &points(),
        &[steps(TemporalFilter::TimeRange {
            from: None,
            to: Some(at("2020-01-01T00:00:00")),
        })],
    ));
    assert!(error.contains("point set has no time steps"), "{error}");
}

#[test]
fn an_empty_time_selection_is_an_error_giving_the_axis() {
    let source = grid(&["H"], hourly("2020-01-01T00:00:00", 6));
    let error = transformation_error(run(
        &source,
        &[steps(TemporalFilter::TimeRange {
            from: Some(at("2021-01-01T00:00:00")),
            to: None,
        })],
    ));
    assert!(
        error.contains(
            "the temporal filter selects no time step of the 6 (2020-01-01T00:00:00 to \
             2020-01-01T05:00:00)"
        ),
        "{error}"
    );
    let error = transformation_error(run(&source, &[range(Some(6), None)]));
    assert!(error.contains("selects no time step of the 6"), "{error}");
}

#[test]
fn filters_and_reprojection_chain_with_consistent_numbering() {
    let source = mesh(&["H", "U", "V"], hourly("2020-01-01T00:00:00", 5));
    let filtered = run(
        &source,
        &[
            range(Some(1), Some(3)),
            items(&[2], &[]),
            steps(TemporalFilter::IndexList(vec![0, 2])),
            Transformation::Crs {
                input_srid: None,
                output_srid: 4326,
            },
        ],
    )
    .unwrap();
    let (names, time) = items_and_time(&filtered);
    assert_eq!(names, vec!["V"]);
    assert_eq!(
        time,
        TimeAxis::Equidistant {
            start: at("2020-01-01T01:00:00"),
            step_seconds: 7200.0,
            steps: 2
        }
    );
    assert_marked(&filtered, (0, 0), (1, 2));
    assert_marked(&filtered, (1, 0), (3, 2));
}

// ---------------------------------------------------------------------------------------------
// Through the catalogue, on files

#[test]
fn a_multi_band_geotiff_keeps_the_selected_bands() {
    let input = fixture("geotiff", "chunky_striped_3band_uint16.tif");
    let read = |path: &Path| {
        Dataset::collect(|sink| {
            GeoTiffReader.read(path, &Parameters::default(), &ReadContext::default(), sink)
        })
        .unwrap()
    };
    let original = read(&input);
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("two_bands.tif");
    let transformations = [items(&[0, 2], &[])];
    let written = Catalogue::standard()
        .convert(
            &input,
            &output,
            &Conversion {
                transformations: &transformations,
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap();
    assert_eq!(written.summary.unwrap().items.len(), 2);
    let filtered = read(&output);
    let (names, _) = items_and_time(&filtered);
    let (original_names, _) = items_and_time(&original);
    assert_eq!(
        names,
        vec![original_names[0].clone(), original_names[2].clone()]
    );
    assert_eq!(steps_of(&filtered)[0][0], steps_of(&original)[0][0]);
    assert_eq!(steps_of(&filtered)[0][1], steps_of(&original)[0][2]);
}

#[test]
fn a_vtu_time_series_keeps_the_selected_steps() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("series.zip");
    let source = mesh(&["H"], hourly("2020-01-01T00:00:00", 4));
    let parameters = Parameters::validate(VtuWriter.spec().parameters, &[]).unwrap();
    let mut writer = VtuWriter.create(&output, &parameters).unwrap();
    {
        let mut sink = transform::apply(
            &[steps(TemporalFilter::IndexList(vec![1, 3]))],
            writer.as_mut(),
        )
        .unwrap();
        source.replay(sink.as_mut()).unwrap();
    }
    writer.finish().unwrap();
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&output).unwrap()).unwrap();
    let mut names: Vec<String> = archive
        .file_names()
        .map(|name| name.unwrap().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["series.pvd", "series_0000.vtu", "series_0001.vtu"]
    );
    let mut pvd = String::new();
    archive
        .by_name("series.pvd")
        .unwrap()
        .read_to_string(&mut pvd)
        .unwrap();
    assert!(pvd.contains("timestep=\"7200.0\""), "{pvd}");
}

#[test]
fn a_file_without_time_converts_through_a_step_zero_filter_and_fails_past_it() {
    let catalogue = Catalogue::standard();
    let input = fixture("meshes", "quad_tri.mesh");
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.vtu");
    let keep = [range(Some(0), Some(0))];
    let conversion = Conversion {
        transformations: &keep,
        ..Conversion::default()
    };
    catalogue
        .convert(&input, &output, &conversion, &ReadContext::default())
        .unwrap();
    std::fs::remove_file(&output).unwrap();
    let past = [range(Some(1), None)];
    let error = catalogue
        .convert(
            &input,
            &output,
            &Conversion {
                transformations: &past,
                ..Conversion::default()
            },
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(
        error.to_string().contains("selects no time step of the 1"),
        "{error}"
    );
    assert!(!output.exists());
}

#[test]
fn malformed_filters_fail_in_prepare() {
    let catalogue = Catalogue::standard();
    for (transformation, expected) in [
        (items(&[], &[]), "selects no item"),
        (range(None, None), "needs from, to or both"),
        (range(Some(3), Some(1)), "from (3) is after its to (1)"),
        (
            steps(TemporalFilter::IndexList(Vec::new())),
            "lists no index",
        ),
    ] {
        let transformations = [transformation];
        let error = catalogue
            .prepare(
                Path::new("/nonexistent/in.asc"),
                Path::new("/nonexistent/out.tif"),
                &Conversion {
                    transformations: &transformations,
                    ..Conversion::default()
                },
            )
            .err()
            .unwrap();
        assert!(error.to_string().contains(expected), "{error}");
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

#[test]
fn json_types_and_property_names_compare_ignoring_case() {
    let parsed = Transformation::from_json(
        &json!({"Type": "crsTRANSFORMATION", "InputSRID": "25832", "outputSrid": 4326}),
    )
    .unwrap();
    assert_eq!(
        parsed,
        Transformation::Crs {
            input_srid: Some(25832),
            output_srid: 4326
        }
    );
    let parsed = Transformation::from_json(
        &json!({"type": "CrsTransformation", "inputSrid": null, "outputSrid": 4326}),
    )
    .unwrap();
    assert_eq!(
        parsed,
        Transformation::Crs {
            input_srid: None,
            output_srid: 4326
        }
    );
    let parsed = Transformation::from_json(&json!({
        "type": "itemFilterTransformation",
        "ItemFilter": [{"itemIndices": [0, 2]}, {"NAMES": ["H", "U"]}]
    }))
    .unwrap();
    assert_eq!(parsed, items(&[0, 2], &["H", "U"]));
    let parsed = Transformation::from_json(&json!({
        "type": "ItemFilterTransformation",
        "itemFilter": {"itemIndices": [1], "names": ["V"]}
    }))
    .unwrap();
    assert_eq!(parsed, items(&[1], &["V"]));
}

#[test]
fn json_temporal_filters_of_each_type_parse() {
    let parse = |filter: serde_json::Value| {
        Transformation::from_json(
            &json!({"type": "TemporalFilterTransformation", "temporalFilter": filter}),
        )
    };
    assert_eq!(
        parse(json!({"type": "TemporalIndexFilter", "from": 2, "to": 5})).unwrap(),
        range(Some(2), Some(5))
    );
    assert_eq!(
        parse(json!({"type": "temporalindexfilter", "to": 5})).unwrap(),
        range(None, Some(5))
    );
    assert_eq!(
        parse(json!({
            "type": "TemporalValueFilter",
            "from": "2020-01-01T00:00:00",
            "to": "2020-01-02T01:00:00.5+01:00"
        }))
        .unwrap(),
        steps(TemporalFilter::TimeRange {
            from: Some(at("2020-01-01T00:00:00")),
            to: Some(
                chrono::NaiveDateTime::parse_from_str(
                    "2020-01-02T00:00:00.5",
                    "%Y-%m-%dT%H:%M:%S%.f"
                )
                .unwrap()
            ),
        })
    );
    assert_eq!(
        parse(json!({"type": "TemporalIndexListFilter", "indices": [0, 3, 7]})).unwrap(),
        steps(TemporalFilter::IndexList(vec![0, 3, 7]))
    );
}

fn json_error(value: serde_json::Value) -> String {
    let error = Transformation::from_json(&value).unwrap_err();
    assert!(error.is_input_error());
    error.to_string()
}

/// Checks that each value fails to parse with a message containing its expected text.
fn assert_json_errors(cases: &[(serde_json::Value, &str)]) {
    for (value, expected) in cases {
        let error = json_error(value.clone());
        assert!(error.contains(expected), "{value}: {error}");
    }
}

#[test]
fn json_errors_name_the_type_or_crs_property_at_fault() {
    assert_json_errors(&[
        (json!([1]), "a transformation must be a JSON object"),
        (json!({"outputSrid": 4326}), "the property type is missing"),
        (
            json!({"type": "Reproject"}),
            "unknown transformation type \"Reproject\"",
        ),
        (
            json!({"type": "SpatialFilterTransformation"}),
            "SpatialFilterTransformation is not supported",
        ),
        (
            json!({"type": "CrsTransformation"}),
            "CrsTransformation: property outputSrid is missing",
        ),
        (
            json!({"type": "CrsTransformation", "outputSrid": -4}),
            "property outputSrid must be an EPSG code, not -4",
        ),
        (
            json!({"type": "CrsTransformation", "outputSrid": 4326, "colour": 1}),
            "unknown property colour; expected type, inputSrid, outputSrid",
        ),
        (
            json!({"type": "CrsTransformation", "outputSrid": 4326, "OutputSrid": 3857}),
            "property outputSrid is given more than once",
        ),
    ]);
}

#[test]
fn json_item_filter_errors_name_the_property_at_fault() {
    assert_json_errors(&[
        (
            json!({"type": "ItemFilterTransformation", "itemFilter": [{"itemIndices": [0, "x"]}]}),
            "property itemFilter[0].itemIndices[1] must be a zero-based index",
        ),
        (
            json!({"type": "ItemFilterTransformation", "itemFilter": [{}, {"names": ["H"]}]}),
            "itemFilter[0]: give itemIndices or names",
        ),
        (
            json!({"type": "ItemFilterTransformation", "itemFilter": [{"names": [1]}]}),
            "property itemFilter[0].names[0] must be a string",
        ),
        (
            json!({"type": "ItemFilterTransformation", "itemFilter": [{"itemIndices": []}]}),
            "selects no item",
        ),
    ]);
}

#[test]
fn json_temporal_filter_errors_name_the_property_at_fault() {
    assert_json_errors(&[
        (
            json!({"type": "TemporalFilterTransformation"}),
            "property temporalFilter is missing",
        ),
        (
            json!({"type": "TemporalFilterTransformation", "temporalFilter": {"from": 1}}),
            "property temporalFilter.type is missing",
        ),
        (
            json!({"type": "TemporalFilterTransformation",
                   "temporalFilter": {"type": "TemporalSpanFilter"}}),
            "\"TemporalSpanFilter\" is not a temporal filter",
        ),
        (
            json!({"type": "TemporalFilterTransformation",
                   "temporalFilter": {"type": "TemporalValueFilter", "from": "01/02/2020"}}),
            "property temporalFilter.from \"01/02/2020\" is not an ISO 8601 time",
        ),
        (
            json!({"type": "TemporalFilterTransformation",
                   "temporalFilter": {"type": "TemporalIndexFilter", "from": 1.5}}),
            "property temporalFilter.from must be a zero-based index",
        ),
        (
            json!({"type": "TemporalFilterTransformation",
                   "temporalFilter": {"type": "TemporalIndexFilter", "from": 4, "to": 2}}),
            "from (4) is after its to (2)",
        ),
        (
            json!({"type": "TemporalFilterTransformation",
                   "temporalFilter": {"type": "TemporalIndexListFilter", "indices": [1], "to": 2}}),
            "unknown property temporalFilter.to",
        ),
    ]);
}

#[test]
fn json_lists_say_which_entry_is_wrong() {
    let parsed = Transformation::list_from_json(&json!([
        {"type": "TemporalFilterTransformation",
         "temporalFilter": {"type": "TemporalIndexFilter", "from": 1}},
        {"type": "CrsTransformation", "outputSrid": 4326}
    ]))
    .unwrap();
    assert_eq!(parsed.len(), 2);
    let error = Transformation::list_from_json(&json!([
        {"type": "CrsTransformation", "outputSrid": 4326},
        {"type": "CrsTransformation"}
    ]))
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("transformations[1]: property outputSrid is missing"),
        "{error}"
    );
    let error = Transformation::list_from_json(&json!({"type": "CrsTransformation"}))
        .unwrap_err()
        .to_string();
    assert!(error.contains("must be a JSON array"), "{error}");
}

#[test]
fn parse_type_accepts_the_three_implemented_types() {
    for name in [
        "CrsTransformation",
        "crsTransformation",
        "ITEMFILTERTRANSFORMATION",
        "temporalFilterTransformation",
    ] {
        assert!(parse_type(name).is_ok(), "{name}");
    }
    let error = parse_type("spatialFilterTransformation")
        .unwrap_err()
        .to_string();
    assert!(error.contains("not supported"), "{error}");
    assert!(error.contains("TemporalFilterTransformation"), "{error}");
}

//! GeoJSON reader and writer: round trips, single Feature and bare Geometry documents, the
//! legacy `crs` member, property type widening, and hostile documents.

use std::path::Path;

use basin_formats::catalogue::{ReadContext, Reader, Writer, Written};
use basin_formats::crs::Crs;
use basin_formats::geo_json::{GeoJsonReader, GeoJsonWriter};
use basin_formats::model::{
    Coord, Data, Dataset, Feature, FeatureSchema, Field, FieldType, Geometry, GeometryKind, Header,
    Value,
};
use basin_formats::{FormatError, Parameters, ReadLimits};
use chrono::NaiveDate;

fn read_with(input: &Path, limits: ReadLimits) -> Result<Dataset, FormatError> {
    let context = ReadContext {
        limits,
        ..ReadContext::default()
    };
    Dataset::collect(|sink| GeoJsonReader.read(input, &Parameters::default(), &context, sink))
}

fn read_text(text: &str) -> Result<Dataset, FormatError> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("in.geojson");
    std::fs::write(&path, text).unwrap();
    read_with(&path, ReadLimits::default())
}

fn write(dataset: &Dataset, output: &Path) -> Written {
    let mut sink = GeoJsonWriter
        .create(output, &Parameters::default())
        .unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap()
}

fn parts(dataset: &Dataset) -> (&FeatureSchema, &[Feature]) {
    match (&dataset.header, &dataset.data) {
        (Header::Features(schema), Data::Features(features)) => (schema, features),
        other => panic!("features expected, got {other:?}"),
    }
}

fn all_geometries() -> Vec<Geometry> {
    let line = vec![
        Coord::xy(0.5, 1.0),
        Coord::xy(2.0, 3.0),
        Coord::xy(1e-7, 123456.789),
    ];
    let ring = vec![
        Coord::xy(0.0, 0.0),
        Coord::xy(4.0, 0.0),
        Coord::xy(4.0, 4.0),
        Coord::xy(0.0, 0.0),
    ];
    vec![
        Geometry::Point(Coord::xy(0.1, 0.2)),
        Geometry::MultiPoint(line.clone()),
        Geometry::LineString(line.clone()),
        Geometry::MultiLineString(vec![line.clone(), line]),
        Geometry::Polygon(vec![ring.clone(), ring.clone()]),
        Geometry::MultiPolygon(vec![vec![ring.clone()], vec![ring.clone()]]),
        Geometry::GeometryCollection(vec![
            Geometry::Point(Coord::xy(1.0, 2.0)),
            Geometry::Polygon(vec![ring]),
        ]),
    ]
}

#[test]
fn every_geometry_and_attribute_type_round_trips() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.geojson");
    let fields = vec![
        Field::new("name", FieldType::Text),
        Field::new("count", FieldType::Integer),
        Field::new("level", FieldType::Float),
        Field::new("wet", FieldType::Boolean),
        Field::new("day", FieldType::Date),
        Field::new("at", FieldType::DateTime),
    ];
    let day = NaiveDate::from_ymd_opt(2021, 3, 4).unwrap();
    let features: Vec<Feature> = all_geometries()
        .into_iter()
        .map(Some)
        .chain([None])
        .enumerate()
        .map(|(index, geometry)| Feature {
            geometry,
            values: vec![
                Value::Text(format!("quote \" backslash \\ tab \t é {index}")),
                Value::Integer(-(index as i64) * 1_000_000_007),
                Value::Float(0.1 + index as f64),
                Value::Boolean(index % 2 == 0),
                Value::Date(day),
                Value::DateTime(day.and_hms_milli_opt(5, 6, 7, 250).unwrap()),
            ],
        })
        .collect();
    let schema = FeatureSchema {
        fields,
        geometry_kind: GeometryKind::Any,
        has_z: false,
        has_m: false,
        crs: Some(Crs::Epsg(4326)),
    };
    let original = Dataset {
        header: Header::Features(schema.clone()),
        data: Data::Features(features.clone()),
    };
    let written = write(&original, &output);
    assert!(written.notes.is_empty(), "{:?}", written.notes);
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(!text.contains("\"crs\""), "WGS 84 needs no crs member");
    let back = read_with(&output, ReadLimits::default()).unwrap();
    let (back_schema, back_features) = parts(&back);
    assert_eq!(back_schema, &schema);
    assert_eq!(back_features, features.as_slice());
}

#[test]
fn z_is_kept_m_dropped_and_a_projected_crs_declared() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("z.geojson");
    let coord = Coord {
        x: 500000.0,
        y: 6000000.0,
        z: Some(-3.5),
        m: Some(9.0),
    };
    let data = Dataset {
        header: Header::Features(FeatureSchema {
            fields: vec![],
            geometry_kind: GeometryKind::Point,
            has_z: true,
            has_m: true,
            crs: Some(Crs::Epsg(25832)),
        }),
        data: Data::Features(vec![Feature {
            geometry: Some(Geometry::Point(coord)),
            values: vec![],
        }]),
    };
    let written = write(&data, &output);
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("m (measure)"))
    );
    let back = read_with(&output, ReadLimits::default()).unwrap();
    let (schema, features) = parts(&back);
    assert_eq!(schema.crs, Some(Crs::Epsg(25832)));
    assert!(schema.has_z);
    assert_eq!(
        features[0].geometry,
        Some(Geometry::Point(Coord::xyz(500000.0, 6000000.0, -3.5)))
    );
}

#[test]
fn a_single_feature_or_bare_geometry_is_a_collection_of_one() {
    let feature = read_text(
        r#"{"properties": {"b": 1, "a": "x"}, "type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 2, 3]}}"#,
    )
    .unwrap();
    let (schema, features) = parts(&feature);
    let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["b", "a"], "document order, not sorted");
    assert_eq!(
        features[0].values,
        vec![Value::Integer(1), Value::Text("x".into())]
    );
    let geometry = read_text(r#"{"type": "LineString", "coordinates": [[1, 2], [3, 4]]}"#).unwrap();
    let (schema, features) = parts(&geometry);
    assert_eq!(schema.geometry_kind, GeometryKind::Line);
    assert_eq!(features.len(), 1);
}

#[test]
fn mixed_property_types_widen() {
    let dataset = read_text(
        r#"{"type": "FeatureCollection", "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::3857"}},
        "features": [
          {"type": "Feature", "geometry": null, "properties": {"i": 1, "f": 1, "t": 1, "b": true, "n": null, "d": "2020-01-02", "o": {"k": [1]}}},
          {"type": "Feature", "geometry": null, "properties": {"i": 2, "f": 2.5, "t": "x", "b": 3, "n": null, "d": "2020-01-02T03:04:05Z"}}
        ]}"#,
    )
    .unwrap();
    let (schema, features) = parts(&dataset);
    let types: Vec<FieldType> = schema.fields.iter().map(|f| f.field_type).collect();
    use FieldType::*;
    assert_eq!(types, [Integer, Float, Text, Integer, Text, DateTime, Text]);
    assert_eq!(schema.crs, Some(Crs::Epsg(3857)));
    assert_eq!(features[0].values[1], Value::Float(1.0));
    assert_eq!(features[0].values[2], Value::Text("1".into()));
    assert_eq!(features[1].values[3], Value::Integer(3));
    assert_eq!(features[0].values[6], Value::Text("{\"k\":[1]}".into()));
    assert_eq!(features[1].values[6], Value::Null);
}

#[test]
fn hostile_documents_give_errors() {
    let cases = [
        ("", "file ends"),
        ("[1, 2]", "expected '{'"),
        (
            r#"{"type": "FeatureCollection", "features": [{"type": "Feature""#,
            "ends inside",
        ),
        (
            r#"{"type": "FeatureCollection", "features": [1]}"#,
            "feature 1",
        ),
        (
            r#"{"type": "FeatureCollection", "features": [{"geometry": {"type": "Point", "coordinates": [1]}}]}"#,
            "two numbers",
        ),
        (
            r#"{"type": "FeatureCollection", "features": [{"geometry": {"type": "Circle", "coordinates": [1, 2]}}]}"#,
            "unknown geometry",
        ),
        (r#"{"type": "Topology"}"#, "not a FeatureCollection"),
        (
            r#"{"type": "FeatureCollection", "features": []} trailing"#,
            "after the end",
        ),
        (
            r#"{"type": "FeatureCollection", "crs": {"type": "name", "properties": {"name": "local"}}, "features": []}"#,
            "EPSG",
        ),
    ];
    for (text, expected) in cases {
        let error = read_text(text).unwrap_err();
        assert!(
            error.to_string().contains(expected),
            "{text}: {error} should say {expected}"
        );
    }
}

#[test]
fn nesting_and_size_limits_are_enforced_while_scanning() {
    let deep = format!(
        r#"{{"type": "FeatureCollection", "features": [{{"properties": {{"a": {}1{}}}}}]}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let error = read_text(&deep).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("big.geojson");
    let big = format!(
        r#"{{"type": "FeatureCollection", "features": [{{"properties": {{"a": "{}"}}}}]}}"#,
        "x".repeat(10_000)
    );
    std::fs::write(&path, big).unwrap();
    let limits = ReadLimits {
        line_bytes_max: 1000,
        ..ReadLimits::default()
    };
    let error = read_with(&path, limits).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
    let many = r#"{"type": "FeatureCollection", "features": [{"geometry": {"type": "LineString", "coordinates": [[1, 2], [3, 4], [5, 6]]}}]}"#;
    std::fs::write(&path, many).unwrap();
    let limits = ReadLimits {
        vertices_per_geometry_max: 2,
        ..ReadLimits::default()
    };
    let error = read_with(&path, limits).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn a_large_collection_streams_through() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("many.geojson");
    let mut text = String::from(r#"{"type":"FeatureCollection","features":["#);
    for index in 0..20_000 {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"type":"Feature","properties":{{"i":{index}}},"geometry":{{"type":"Point","coordinates":[{index},1]}}}}"#
        ));
    }
    text.push_str("]}");
    std::fs::write(&path, text).unwrap();
    let dataset = read_with(&path, ReadLimits::default()).unwrap();
    let (schema, features) = parts(&dataset);
    assert_eq!(schema.geometry_kind, GeometryKind::Point);
    assert_eq!(features.len(), 20_000);
    assert_eq!(features[19_999].values, vec![Value::Integer(19_999)]);
}

fn field_names(schema: &FeatureSchema) -> Vec<(&str, FieldType)> {
    schema
        .fields
        .iter()
        .map(|field| (field.name.as_str(), field.field_type))
        .collect()
}

#[test]
fn string_feature_ids_become_an_id_field_first_as_gdal_reads_them() {
    let text = r#"{"type":"FeatureCollection","features":[
        {"type":"Feature","id":"01","properties":{"name":"Alabama"},"geometry":null},
        {"type":"Feature","id":2,"properties":{"name":"Alaska"},"geometry":null},
        {"type":"Feature","properties":{"name":"Arizona"},"geometry":null}]}"#;
    let dataset = read_text(text).unwrap();
    let (schema, features) = parts(&dataset);
    assert_eq!(
        field_names(schema),
        [("id", FieldType::Text), ("name", FieldType::Text)]
    );
    let ids: Vec<&Value> = features.iter().map(|f| &f.values[0]).collect();
    assert_eq!(
        ids,
        [
            &Value::Text("01".into()),
            &Value::Text("2".into()),
            &Value::Null
        ]
    );
}

#[test]
fn integer_feature_ids_are_feature_numbers_not_data() {
    // GDAL keeps non-negative integer ids as FIDs; a later string id does not make a field.
    let text = r#"{"type":"FeatureCollection","features":[
        {"type":"Feature","id":0,"properties":{"a":1},"geometry":null},
        {"type":"Feature","id":"guid","properties":{"a":2},"geometry":null}]}"#;
    let dataset = read_text(text).unwrap();
    assert_eq!(field_names(parts(&dataset).0), [("a", FieldType::Integer)]);
}

#[test]
fn negative_integer_ids_make_an_integer_id_field_and_an_id_property_wins() {
    let text = r#"{"type":"FeatureCollection","features":[
        {"type":"Feature","id":-5,"properties":{"a":1},"geometry":null},
        {"type":"Feature","id":7,"properties":{"a":2},"geometry":null}]}"#;
    let dataset = read_text(text).unwrap();
    let (schema, features) = parts(&dataset);
    assert_eq!(
        field_names(schema),
        [("id", FieldType::Integer), ("a", FieldType::Integer)]
    );
    assert_eq!(features[1].values[0], Value::Integer(7));

    let text = r#"{"type":"Feature","id":"x","properties":{"id":"own","b":true},"geometry":null}"#;
    let dataset = read_text(text).unwrap();
    let (schema, features) = parts(&dataset);
    assert_eq!(
        field_names(schema),
        [("id", FieldType::Text), ("b", FieldType::Boolean)]
    );
    assert_eq!(features[0].values[0], Value::Text("own".into()));
}

#[test]
fn rfc7946_output_is_wgs84_with_counterclockwise_exteriors_and_no_crs_member() {
    let folder = tempfile::tempdir().unwrap();
    let clockwise = vec![
        Coord::xy(500000.0, 6000000.0),
        Coord::xy(500000.0, 6001000.0),
        Coord::xy(501000.0, 6001000.0),
        Coord::xy(501000.0, 6000000.0),
        Coord::xy(500000.0, 6000000.0),
    ];
    let data = Dataset {
        header: Header::Features(FeatureSchema {
            fields: vec![],
            geometry_kind: GeometryKind::Polygon,
            has_z: false,
            has_m: false,
            crs: Some(Crs::Epsg(32632)),
        }),
        data: Data::Features(vec![Feature {
            geometry: Some(Geometry::Polygon(vec![clockwise])),
            values: vec![],
        }]),
    };
    let output = folder.path().join("rfc.geojson");
    let parameters = Parameters::validate(
        GeoJsonWriter.spec().parameters,
        &[("Rfc7946".to_owned(), "true".to_owned())],
    )
    .unwrap();
    let mut sink = GeoJsonWriter.create(&output, &parameters).unwrap();
    data.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(!text.contains("\"crs\""), "{text}");
    let back = read_with(&output, ReadLimits::default()).unwrap();
    let (schema, features) = parts(&back);
    assert_eq!(schema.crs, Some(Crs::Epsg(4326)));
    let Some(Geometry::Polygon(rings)) = &features[0].geometry else {
        panic!("polygon expected");
    };
    // gdaltransform -s_srs EPSG:32632 -t_srs EPSG:4326: 500000 6000000 -> 9 54.1481041038695
    let first = rings[0][0];
    assert!((first.x - 9.0).abs() < 1e-9, "{first:?}");
    assert!((first.y - 54.148_104_103_869_5).abs() < 1e-9, "{first:?}");
    let area: f64 = rings[0]
        .windows(2)
        .map(|pair| pair[0].x * pair[1].y - pair[1].x * pair[0].y)
        .sum();
    assert!(area > 0.0, "exterior ring not counterclockwise");
    // The default writes the coordinates as they are, with the code.
    let plain = folder.path().join("plain.geojson");
    write(&data, &plain);
    assert!(
        std::fs::read_to_string(&plain)
            .unwrap()
            .contains("urn:ogc:def:crs:EPSG::32632")
    );
}

#[test]
fn rfc7946_output_of_a_crs_that_cannot_be_reprojected_is_an_error() {
    let folder = tempfile::tempdir().unwrap();
    let data = Dataset {
        header: Header::Features(FeatureSchema {
            fields: vec![],
            geometry_kind: GeometryKind::Point,
            has_z: false,
            has_m: false,
            crs: Some(Crs::Named("NON-UTM".to_owned())),
        }),
        data: Data::Features(vec![]),
    };
    let parameters = Parameters::validate(
        GeoJsonWriter.spec().parameters,
        &[("Rfc7946".to_owned(), "true".to_owned())],
    )
    .unwrap();
    let mut sink = GeoJsonWriter
        .create(&folder.path().join("x.geojson"), &parameters)
        .unwrap();
    let error = data.replay(sink.as_mut()).unwrap_err();
    assert!(error.to_string().contains("RFC 7946"), "{error}");
}

#[test]
fn an_id_field_is_written_as_the_feature_id_and_read_back_as_the_field() {
    let text = r#"{"type":"FeatureCollection","features":[
        {"type":"Feature","id":"01","properties":{"name":"Alabama"},"geometry":null},
        {"type":"Feature","properties":{"name":"Arizona"},"geometry":null}]}"#;
    let dataset = read_text(text).unwrap();
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.geojson");
    write(&dataset, &output);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let features = written["features"].as_array().unwrap();
    assert_eq!(features[0]["id"], "01");
    assert_eq!(
        features[0]["properties"],
        serde_json::json!({"name": "Alabama"})
    );
    assert!(features[1].get("id").is_none());
    let again = read_with(&output, ReadLimits::default()).unwrap();
    assert_eq!(parts(&again), parts(&dataset));
}

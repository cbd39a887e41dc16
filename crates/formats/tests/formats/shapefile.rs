//! Shapefile reader and writer: round trips of every geometry type (with z, m and nulls) and
//! attribute type, .zip input and output, field name truncation, code pages, and hostile files.

use std::path::{Path, PathBuf};

use basin_formats::catalogue::{ReadContext, Reader, Writer, Written};
use basin_formats::crs::Crs;
use basin_formats::model::{
    Coord, Data, Dataset, Feature, FeatureSchema, Field, FieldType, Geometry, GeometryKind, Header,
    Value,
};
use basin_formats::shp::{ShpReader, ShpWriter};
use basin_formats::{FormatError, Parameters, ReadLimits};
use chrono::NaiveDate;

fn square(x: f64, y: f64, size: f64, clockwise: bool) -> Vec<Coord> {
    let mut ring = vec![
        Coord::xy(x, y),
        Coord::xy(x, y + size),
        Coord::xy(x + size, y + size),
        Coord::xy(x + size, y),
        Coord::xy(x, y),
    ];
    if !clockwise {
        ring.reverse();
    }
    ring
}

fn schema(kind: GeometryKind, has_z: bool, has_m: bool, fields: Vec<Field>) -> FeatureSchema {
    FeatureSchema {
        fields,
        geometry_kind: kind,
        has_z,
        has_m,
        crs: None,
    }
}

fn dataset(schema: FeatureSchema, features: Vec<Feature>) -> Dataset {
    Dataset {
        header: Header::Features(schema),
        data: Data::Features(features),
    }
}

fn write(dataset: &Dataset, output: &Path) -> Written {
    let mut sink = ShpWriter.create(output, &Parameters::default()).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap()
}

fn read_with(
    input: &Path,
    parameters: &[(&str, &str)],
    limits: ReadLimits,
) -> Result<Dataset, FormatError> {
    let raw: Vec<(String, String)> = parameters
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    let parameters = Parameters::validate(ShpReader.spec().parameters, &raw)?;
    let context = ReadContext {
        limits,
        ..ReadContext::default()
    };
    Dataset::collect(|sink| ShpReader.read(input, &parameters, &context, sink))
}

fn read(input: &Path) -> Dataset {
    read_with(input, &[], ReadLimits::default()).unwrap()
}

fn features(dataset: &Dataset) -> &[Feature] {
    match &dataset.data {
        Data::Features(features) => features,
        other => panic!("features expected, got {other:?}"),
    }
}

fn schema_of(dataset: &Dataset) -> &FeatureSchema {
    match &dataset.header {
        Header::Features(schema) => schema,
        other => panic!("features expected, got {other:?}"),
    }
}

fn feature(geometry: Option<Geometry>, values: Vec<Value>) -> Feature {
    Feature { geometry, values }
}

fn attribute_fields() -> Vec<Field> {
    vec![
        Field::new("name", FieldType::Text),
        Field::new("count", FieldType::Integer),
        Field::new("level", FieldType::Float),
        Field::new("wet", FieldType::Boolean),
        Field::new("day", FieldType::Date),
    ]
}

fn attribute_values(index: i64) -> Vec<Value> {
    vec![
        Value::Text(format!("name {index} é")),
        Value::Integer(index * 1000),
        Value::Float(index as f64 + 0.25),
        Value::Boolean(index % 2 == 0),
        Value::Date(NaiveDate::from_ymd_opt(2020, 1, 1 + index as u32).unwrap()),
    ]
}

fn round_trip(kind: GeometryKind, has_z: bool, has_m: bool, geometries: Vec<Option<Geometry>>) {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("data.shp");
    let count = geometries.len() as i64;
    let original = dataset(
        schema(kind, has_z, has_m, attribute_fields()),
        geometries
            .into_iter()
            .zip(0..count)
            .map(|(geometry, index)| feature(geometry, attribute_values(index)))
            .collect(),
    );
    let written = write(&original, &output);
    assert_eq!(
        written.files.len(),
        4,
        "shp, shx, dbf, cpg: {:?}",
        written.files
    );
    let back = read(&output);
    assert_eq!(features(&back), features(&original));
    let schema = schema_of(&back);
    assert_eq!(schema.geometry_kind, kind);
    assert_eq!(schema.has_z, has_z);
    let types: Vec<FieldType> = schema.fields.iter().map(|f| f.field_type).collect();
    assert_eq!(
        types,
        [
            FieldType::Text,
            FieldType::Integer,
            FieldType::Float,
            FieldType::Boolean,
            FieldType::Date
        ]
    );
}

#[test]
fn points_round_trip_with_nulls() {
    round_trip(
        GeometryKind::Point,
        false,
        false,
        vec![
            Some(Geometry::Point(Coord::xy(1.5, -2.25))),
            None,
            Some(Geometry::Point(Coord::xy(1e300, 0.1))),
        ],
    );
}

#[test]
fn points_with_z_and_m_round_trip() {
    let coord = Coord {
        x: 1.0,
        y: 2.0,
        z: Some(3.0),
        m: Some(4.0),
    };
    round_trip(
        GeometryKind::Point,
        true,
        true,
        vec![Some(Geometry::Point(coord))],
    );
    let measured = Coord {
        x: 1.0,
        y: 2.0,
        z: None,
        m: Some(7.5),
    };
    round_trip(
        GeometryKind::Point,
        false,
        true,
        vec![Some(Geometry::Point(measured))],
    );
}

#[test]
fn multipoints_lines_and_multilines_round_trip() {
    let points = vec![Coord::xyz(0.0, 0.0, 1.0), Coord::xyz(1.0, 1.0, 2.0)];
    round_trip(
        GeometryKind::MultiPoint,
        true,
        false,
        vec![Some(Geometry::MultiPoint(points.clone()))],
    );
    round_trip(
        GeometryKind::Line,
        true,
        false,
        vec![
            Some(Geometry::LineString(points.clone())),
            Some(Geometry::MultiLineString(vec![points.clone(), points])),
        ],
    );
}

#[test]
fn polygons_with_holes_and_multipolygons_round_trip() {
    let with_hole = Geometry::Polygon(vec![
        square(0.0, 0.0, 10.0, true),
        square(2.0, 2.0, 2.0, false),
    ]);
    let multi = Geometry::MultiPolygon(vec![
        vec![square(0.0, 0.0, 10.0, true), square(1.0, 1.0, 8.0, false)],
        vec![square(3.0, 3.0, 4.0, true)],
        vec![square(20.0, 0.0, 1.0, true)],
    ]);
    round_trip(
        GeometryKind::Polygon,
        false,
        false,
        vec![Some(with_hole), Some(multi), None],
    );
}

#[test]
fn polygon_rings_are_reoriented_as_the_specification_requires() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("turned.shp");
    let polygon = Geometry::Polygon(vec![
        square(0.0, 0.0, 10.0, false),
        square(2.0, 2.0, 2.0, true),
    ]);
    write(
        &dataset(
            schema(GeometryKind::Polygon, false, false, vec![]),
            vec![feature(Some(polygon), vec![])],
        ),
        &output,
    );
    let back = read(&output);
    let expected = Geometry::Polygon(vec![
        square(0.0, 0.0, 10.0, true),
        square(2.0, 2.0, 2.0, false),
    ]);
    assert_eq!(features(&back)[0].geometry, Some(expected));
    assert_eq!(
        schema_of(&back).fields[0].name,
        "FID",
        "a table without fields gets FID"
    );
}

#[test]
fn any_kind_takes_the_first_geometry_and_rejects_a_mix() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("mixed.shp");
    let mixed = dataset(
        schema(GeometryKind::Any, false, false, vec![]),
        vec![
            feature(None, vec![]),
            feature(
                Some(Geometry::LineString(vec![
                    Coord::xy(0.0, 0.0),
                    Coord::xy(1.0, 1.0),
                ])),
                vec![],
            ),
            feature(Some(Geometry::Point(Coord::xy(0.0, 0.0))), vec![]),
        ],
    );
    let mut sink = ShpWriter.create(&output, &Parameters::default()).unwrap();
    let error = mixed.replay(sink.as_mut()).unwrap_err();
    assert!(error.to_string().contains("feature 3"), "{error}");
    assert!(error.to_string().contains("one geometry type"), "{error}");
}

#[test]
fn long_field_names_are_truncated_uniquely_and_reported() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("names.shp");
    let fields = vec![
        Field::new("temperature_max", FieldType::Float),
        Field::new("temperature_min", FieldType::Float),
    ];
    let data = dataset(
        schema(GeometryKind::Point, false, false, fields),
        vec![feature(
            Some(Geometry::Point(Coord::xy(0.0, 0.0))),
            vec![Value::Float(1.0), Value::Float(2.0)],
        )],
    );
    let written = write(&data, &output);
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("\"temperature_max\" truncated to \"temperatur\""))
    );
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("\"temperat_1\""))
    );
    let back = read(&output);
    let names: Vec<&str> = schema_of(&back)
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["temperatur", "temperat_1"]);
}

#[test]
fn zip_output_reads_back_and_a_prj_carries_the_crs() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("zipped.zip");
    let mut schema = schema(GeometryKind::Point, false, false, attribute_fields());
    schema.crs = Some(Crs::Wkt("GEOGCS[\"WGS 84\"]".to_owned()));
    let data = dataset(
        schema,
        vec![feature(
            Some(Geometry::Point(Coord::xy(5.0, 6.0))),
            attribute_values(1),
        )],
    );
    let written = write(&data, &output);
    assert_eq!(written.files, vec![output.clone()]);
    let back = read(&output);
    assert_eq!(features(&back), features(&data));
    assert_eq!(
        schema_of(&back).crs,
        Some(Crs::Wkt("GEOGCS[\"WGS 84\"]".to_owned()))
    );
    let leftovers: Vec<PathBuf> = std::fs::read_dir(folder.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(leftovers, vec![output], "the staging folder is removed");
}

#[test]
fn a_zip_with_the_shapefile_in_a_folder_and_upper_case_names_is_read() {
    let folder = tempfile::tempdir().unwrap();
    let shp = folder.path().join("parts.shp");
    let data = dataset(
        schema(GeometryKind::Point, false, false, attribute_fields()),
        vec![feature(
            Some(Geometry::Point(Coord::xy(5.0, 6.0))),
            attribute_values(2),
        )],
    );
    write(&data, &shp);
    let zip_path = folder.path().join("upload.zip");
    let mut archive = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    for extension in ["shp", "shx", "dbf", "cpg"] {
        let name = format!("inner/PARTS.{}", extension.to_ascii_uppercase());
        archive
            .start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        let bytes = std::fs::read(shp.with_extension(extension)).unwrap();
        std::io::Write::write_all(&mut archive, &bytes).unwrap();
    }
    archive.finish().unwrap();
    assert_eq!(features(&read(&zip_path)), features(&data));
}

#[test]
fn a_zip_without_a_shapefile_or_with_two_is_an_error() {
    let folder = tempfile::tempdir().unwrap();
    let zip_path = folder.path().join("none.zip");
    let mut archive = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    archive
        .start_file("a.txt", zip::write::SimpleFileOptions::default())
        .unwrap();
    archive.finish().unwrap();
    let error = read_with(&zip_path, &[], ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("no .shp"), "{error}");

    let two = folder.path().join("two.zip");
    let mut archive = zip::ZipWriter::new(std::fs::File::create(&two).unwrap());
    for name in ["a.shp", "b.shp"] {
        archive
            .start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
    }
    archive.finish().unwrap();
    let error = read_with(&two, &[], ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("2 shapefiles"), "{error}");
    let error = read_with(&folder.path().join("x.zip"), &[], ReadLimits::default()).unwrap_err();
    assert!(matches!(error, FormatError::Io { .. }), "{error}");
}

#[test]
fn a_cpg_code_page_decodes_text() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("latin.shp");
    let fields = vec![Field::new("name", FieldType::Text)];
    let data = dataset(
        schema(GeometryKind::Point, false, false, fields),
        vec![feature(
            Some(Geometry::Point(Coord::xy(0.0, 0.0))),
            vec![Value::Text("Zürich".into())],
        )],
    );
    write(&data, &output);
    let dbf = output.with_extension("dbf");
    let bytes = std::fs::read(&dbf).unwrap();
    let latin: Vec<u8> = String::from_utf8_lossy(&bytes)
        .replace("Zürich", "Z\u{1}rich ")
        .bytes()
        .map(|byte| if byte == 1 { 0xFC } else { byte })
        .collect();
    assert_eq!(latin.len(), bytes.len());
    std::fs::write(&dbf, latin).unwrap();
    for label in ["ISO-8859-1", "1252", "88591", "windows-1252"] {
        std::fs::write(output.with_extension("cpg"), label).unwrap();
        let back = read(&output);
        assert_eq!(
            features(&back)[0].values,
            vec![Value::Text("Zürich".into())],
            "{label}"
        );
    }
    std::fs::remove_file(output.with_extension("cpg")).unwrap();
    let back = read(&output);
    assert_eq!(
        features(&back)[0].values,
        vec![Value::Text("Zürich".into())],
        "OGR's default ISO-8859-1"
    );
}

#[test]
fn the_srid_parameter_applies_when_there_is_no_prj() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("plain.shp");
    let data = dataset(
        schema(GeometryKind::Point, false, false, vec![]),
        vec![feature(None, vec![])],
    );
    write(&data, &output);
    let back = read_with(&output, &[("SRID", "25832")], ReadLimits::default()).unwrap();
    assert_eq!(schema_of(&back).crs, Some(Crs::Epsg(25832)));
    let error = read_with(&output, &[("SRID", "-3")], ReadLimits::default()).unwrap_err();
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");
    let error = read_with(&output, &[("SRID", "abc")], ReadLimits::default()).unwrap_err();
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");
    let error = read_with(&output, &[("Nope", "1")], ReadLimits::default()).unwrap_err();
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");
}

/// A one-record polyline file whose record is `content`.
fn polyline_file(folder: &Path, content: &[u8]) -> PathBuf {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&9994i32.to_be_bytes());
    bytes.extend_from_slice(&[0u8; 20]);
    let total_words = (100 + 8 + content.len()) / 2;
    bytes.extend_from_slice(&(total_words as i32).to_be_bytes());
    bytes.extend_from_slice(&1000i32.to_le_bytes());
    bytes.extend_from_slice(&3i32.to_le_bytes());
    bytes.extend_from_slice(&[0u8; 64]);
    bytes.extend_from_slice(&1i32.to_be_bytes());
    bytes.extend_from_slice(&((content.len() / 2) as i32).to_be_bytes());
    bytes.extend_from_slice(content);
    let path = folder.join("hostile.shp");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn polyline_content(parts: i32, points: i32, starts: &[i32], coords: usize) -> Vec<u8> {
    let mut content = Vec::new();
    content.extend_from_slice(&3i32.to_le_bytes());
    content.extend_from_slice(&[0u8; 32]);
    content.extend_from_slice(&parts.to_le_bytes());
    content.extend_from_slice(&points.to_le_bytes());
    for start in starts {
        content.extend_from_slice(&start.to_le_bytes());
    }
    content.extend_from_slice(&vec![0u8; coords * 16]);
    content
}

#[test]
fn hostile_shp_files_give_errors() {
    let folder = tempfile::tempdir().unwrap();
    let valid = polyline_file(folder.path(), &polyline_content(1, 2, &[0], 2));
    assert_eq!(features(&read(&valid)).len(), 1);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (polyline_content(1, i32::MAX, &[0], 2), "over the limit"),
        (
            polyline_content(1, 1000, &[0], 2),
            "more bytes than the record holds",
        ),
        (polyline_content(1, -5, &[0], 2), "negative"),
        (polyline_content(-1, 2, &[], 2), "negative"),
        (polyline_content(2, 2, &[0, 7], 2), "part 1 starts outside"),
        (polyline_content(2, 2, &[1, 0], 2), "part 0 starts outside"),
        (
            polyline_content(1, 2, &[0], 1),
            "more bytes than the record holds",
        ),
    ];
    for (content, expected) in cases {
        let path = polyline_file(folder.path(), &content);
        let error = read_with(&path, &[], ReadLimits::default()).unwrap_err();
        assert!(
            error.to_string().contains(expected),
            "{error} should say {expected}"
        );
    }
    let limits = ReadLimits {
        vertices_per_geometry_max: 1,
        ..ReadLimits::default()
    };
    let error = read_with(&valid, &[], limits).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
}

#[test]
fn truncated_and_foreign_files_give_errors() {
    let folder = tempfile::tempdir().unwrap();
    let valid = polyline_file(folder.path(), &polyline_content(1, 2, &[0], 2));
    let bytes = std::fs::read(&valid).unwrap();
    for cut in [0, 50, 104, 120, bytes.len() - 1] {
        std::fs::write(&valid, &bytes[..cut]).unwrap();
        assert!(
            read_with(&valid, &[], ReadLimits::default()).is_err(),
            "cut at {cut}"
        );
    }
    let mut wrong = bytes.clone();
    wrong[3] = 0;
    std::fs::write(&valid, &wrong).unwrap();
    let error = read_with(&valid, &[], ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("not a .shp"), "{error}");
    let mut huge = bytes.clone();
    huge[104..108].copy_from_slice(&i32::MAX.to_be_bytes());
    std::fs::write(&valid, &huge).unwrap();
    assert!(read_with(&valid, &[], ReadLimits::default()).is_err());
}

#[test]
fn hostile_dbf_headers_give_errors() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("table.shp");
    let data = dataset(
        schema(GeometryKind::Point, false, false, attribute_fields()),
        vec![feature(
            Some(Geometry::Point(Coord::xy(0.0, 0.0))),
            attribute_values(1),
        )],
    );
    write(&data, &output);
    let dbf = output.with_extension("dbf");
    let bytes = std::fs::read(&dbf).unwrap();
    let mut many_fields = bytes.clone();
    many_fields[8..10].copy_from_slice(&u16::MAX.to_le_bytes());
    std::fs::write(&dbf, &many_fields).unwrap();
    let limits = ReadLimits {
        fields_max: 100,
        ..ReadLimits::default()
    };
    let error = read_with(&output, &[], limits).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
    let mut short_records = bytes.clone();
    short_records[10..12].copy_from_slice(&3u16.to_le_bytes());
    std::fs::write(&dbf, &short_records).unwrap();
    let error = read_with(&output, &[], ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("bytes per record"), "{error}");
    let mut more_records = bytes.clone();
    more_records[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&dbf, &more_records).unwrap();
    assert!(
        read_with(&output, &[], ReadLimits::default()).is_ok(),
        "extra claimed rows are never read"
    );
    std::fs::write(&dbf, &bytes[..40]).unwrap();
    assert!(read_with(&output, &[], ReadLimits::default()).is_err());
}

#[test]
fn a_mesh_or_grid_header_is_refused_by_the_writer() {
    let folder = tempfile::tempdir().unwrap();
    let mut sink = ShpWriter
        .create(&folder.path().join("x.shp"), &Parameters::default())
        .unwrap();
    let header = Header::TimeSeries(basin_formats::model::TimeSeriesHeader {
        items: vec![],
        time: basin_formats::model::TimeAxis::None,
    });
    assert!(sink.begin(&header).is_err());
}

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

fn mixed_dataset() -> Dataset {
    let line = Geometry::LineString(vec![Coord::xy(0.0, 0.0), Coord::xy(1.0, 1.0)]);
    dataset(
        schema(
            GeometryKind::Any,
            false,
            false,
            vec![Field::new("n", FieldType::Integer)],
        ),
        vec![
            feature(None, vec![Value::Integer(1)]),
            feature(Some(line.clone()), vec![Value::Integer(2)]),
            feature(
                Some(Geometry::Point(Coord::xy(0.0, 0.0))),
                vec![Value::Integer(3)],
            ),
            feature(
                Some(Geometry::Polygon(vec![square(0.0, 0.0, 1.0, true)])),
                vec![Value::Integer(4)],
            ),
            feature(Some(line), vec![Value::Integer(5)]),
            feature(
                Some(Geometry::MultiPoint(vec![Coord::xy(2.0, 2.0)])),
                vec![Value::Integer(6)],
            ),
        ],
    )
}

fn write_with(dataset: &Dataset, output: &Path, parameters: &[(&str, &str)]) -> Written {
    let raw: Vec<(String, String)> = parameters
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    let parameters = Parameters::validate(ShpWriter.spec().parameters, &raw).unwrap();
    let mut sink = ShpWriter.create(output, &parameters).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap()
}

fn numbers(dataset: &Dataset) -> Vec<Value> {
    features(dataset)
        .iter()
        .map(|feature| feature.values[0].clone())
        .collect()
}

#[test]
fn mixed_geometry_types_are_split_into_one_shapefile_per_type() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("mixed.shp");
    let written = write_with(&mixed_dataset(), &output, &[]);
    assert!(!output.exists(), "no file under the plain name when split");
    let line = folder.path().join("mixed_linestring.shp");
    let point = folder.path().join("mixed_point.shp");
    let polygon = folder.path().join("mixed_polygon.shp");
    let multipoint = folder.path().join("mixed_multipoint.shp");
    for path in [&line, &point, &polygon, &multipoint] {
        assert!(
            written.files.contains(path),
            "{path:?} in {:?}",
            written.files
        );
    }
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("mixed_point.shp")),
        "{:?}",
        written.notes
    );
    // The null geometry goes with the first type met.
    let lines = read(&line);
    assert_eq!(
        numbers(&lines),
        [Value::Integer(1), Value::Integer(2), Value::Integer(5)]
    );
    assert_eq!(features(&lines)[0].geometry, None);
    assert_eq!(numbers(&read(&point)), [Value::Integer(3)]);
    assert_eq!(numbers(&read(&polygon)), [Value::Integer(4)]);
    assert_eq!(numbers(&read(&multipoint)), [Value::Integer(6)]);
    assert_eq!(schema_of(&read(&point)).geometry_kind, GeometryKind::Point);

    let zipped = folder.path().join("mixed.zip");
    write_with(&mixed_dataset(), &zipped, &[]);
    let archive = zip::ZipArchive::new(std::fs::File::open(&zipped).unwrap()).unwrap();
    let mut names: Vec<String> = archive
        .file_names()
        .map(|name| name.unwrap().into_owned())
        .collect();
    names.sort_unstable();
    assert!(names.contains(&"mixed_polygon.shp".to_owned()), "{names:?}");
    assert!(
        names.contains(&"mixed_linestring.dbf".to_owned()),
        "{names:?}"
    );
    assert_eq!(names.len(), 16, "{names:?}");
}

#[test]
fn the_geometry_type_parameter_keeps_one_type_and_skips_the_others() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("points.shp");
    let written = write_with(&mixed_dataset(), &output, &[("GeometryType", "multipoint")]);
    let back = read(&output);
    assert_eq!(schema_of(&back).geometry_kind, GeometryKind::MultiPoint);
    // The null geometry is kept; the point is written as a one-point MultiPoint.
    assert_eq!(
        numbers(&back),
        [Value::Integer(1), Value::Integer(3), Value::Integer(6)]
    );
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("3 feature(s)")),
        "{:?}",
        written.notes
    );
    let output = folder.path().join("only.shp");
    write_with(&mixed_dataset(), &output, &[("GeometryType", "POINT")]);
    assert_eq!(
        numbers(&read(&output)),
        [Value::Integer(1), Value::Integer(3)]
    );
    let raw = vec![("GeometryType".to_owned(), "CIRCLE".to_owned())];
    let error = Parameters::validate(ShpWriter.spec().parameters, &raw).unwrap_err();
    assert!(error.to_string().contains("POLYGON"), "{error}");
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
            .any(|note| note.contains("\"temperature_max\" written as \"temperatur\""))
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
        position: None,
    });
    assert!(sink.begin(&header).is_err());
}

/// A 100-byte .shp/.shx header of `shape_type` giving `words` as the file length.
fn main_header(words: usize, shape_type: i32) -> Vec<u8> {
    let mut header = Vec::new();
    header.extend_from_slice(&9994i32.to_be_bytes());
    header.extend_from_slice(&[0u8; 20]);
    header.extend_from_slice(&(words as i32).to_be_bytes());
    header.extend_from_slice(&1000i32.to_le_bytes());
    header.extend_from_slice(&shape_type.to_le_bytes());
    header.extend_from_slice(&[0u8; 64]);
    header
}

fn point_content(x: f64) -> Vec<u8> {
    let mut content = 1i32.to_le_bytes().to_vec();
    content.extend_from_slice(&x.to_le_bytes());
    content.extend_from_slice(&x.to_le_bytes());
    content
}

/// A point Shapefile: `physical` gives, in file order, each record's index (into the x values
/// 0, 1, 2, ...), its record number and the bytes of padding before it; the .shx lists the
/// records in index order. Returns the .shp path and the .shx entries.
fn indexed_points(
    folder: &Path,
    physical: &[(usize, i32, usize)],
    garbage: &[u8],
) -> (PathBuf, Vec<(i32, i32)>) {
    let mut body = Vec::new();
    let mut entries = vec![(0i32, 0i32); physical.len()];
    for (index, number, padding) in physical {
        body.extend(std::iter::repeat_n(0x55u8, *padding));
        let content = point_content(*index as f64);
        entries[*index] = (((100 + body.len()) / 2) as i32, (content.len() / 2) as i32);
        body.extend_from_slice(&number.to_be_bytes());
        body.extend_from_slice(&((content.len() / 2) as i32).to_be_bytes());
        body.extend_from_slice(&content);
    }
    body.extend_from_slice(garbage);
    let mut shp = main_header((100 + body.len()) / 2, 1);
    shp.extend_from_slice(&body);
    let path = folder.join("indexed.shp");
    std::fs::write(&path, shp).unwrap();
    write_shx(&path, &entries, entries.len());
    (path, entries)
}

fn write_shx(shp: &Path, entries: &[(i32, i32)], count: usize) {
    let mut shx = main_header(50 + 4 * count, 1);
    for (offset, length) in entries {
        shx.extend_from_slice(&offset.to_be_bytes());
        shx.extend_from_slice(&length.to_be_bytes());
    }
    std::fs::write(shp.with_extension("shx"), shx).unwrap();
}

fn xs(dataset: &Dataset) -> Vec<Option<f64>> {
    features(dataset)
        .iter()
        .map(|feature| match &feature.geometry {
            Some(Geometry::Point(coord)) => Some(coord.x),
            None => None,
            other => panic!("point expected, got {other:?}"),
        })
        .collect()
}

#[test]
fn records_are_found_through_the_shx_past_garbage_gaps_and_disorder() {
    let folder = tempfile::tempdir().unwrap();
    let in_order = [(0, 1, 0), (1, 2, 0), (2, 3, 0)];
    let (path, _) = indexed_points(folder.path(), &in_order, &[0xDE; 13]);
    assert_eq!(xs(&read(&path)), [Some(0.0), Some(1.0), Some(2.0)]);
    std::fs::remove_file(path.with_extension("shx")).unwrap();
    let error = read_with(&path, &[], ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("no .shx"), "{error}");

    let gaps = [(0, 1, 0), (1, 2, 12), (2, 3, 6)];
    let (path, _) = indexed_points(folder.path(), &gaps, &[]);
    assert_eq!(xs(&read(&path)), [Some(0.0), Some(1.0), Some(2.0)]);

    // Record numbers that do not match are not checked, as in GDAL.
    let disorder = [(2, 3, 0), (0, 9, 4), (1, 2, 0)];
    let (path, _) = indexed_points(folder.path(), &disorder, &[]);
    assert_eq!(xs(&read(&path)), [Some(0.0), Some(1.0), Some(2.0)]);

    // A wrong content length in the .shp is ignored: the .shx length counts.
    let (path, _) = indexed_points(folder.path(), &in_order, &[]);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[104..108].copy_from_slice(&999i32.to_be_bytes());
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(xs(&read(&path)), [Some(0.0), Some(1.0), Some(2.0)]);
}

#[test]
fn shx_entries_outside_the_file_or_too_short_give_null_geometries() {
    let folder = tempfile::tempdir().unwrap();
    let in_order = [(0, 1, 0), (1, 2, 0), (2, 3, 0)];
    let (path, entries) = indexed_points(folder.path(), &in_order, &[]);
    let mut outside = entries.clone();
    outside[1].0 = 100_000;
    write_shx(&path, &outside, 3);
    assert_eq!(xs(&read(&path)), [Some(0.0), None, Some(2.0)]);
    let mut short = entries.clone();
    short[1].1 = 4;
    write_shx(&path, &short, 3);
    assert_eq!(xs(&read(&path)), [Some(0.0), None, Some(2.0)]);
    // A length counting the record header too is accepted for the last record (GDAL does).
    let mut header_counted = entries.clone();
    header_counted[2].1 += 4;
    write_shx(&path, &header_counted, 3);
    assert_eq!(xs(&read(&path)), [Some(0.0), Some(1.0), Some(2.0)]);
    // Fewer records counted than present: only those are read (with their .dbf rows).
    write_shx(&path, &entries, 2);
    assert_eq!(xs(&read(&path)), [Some(0.0), Some(1.0)]);
    // More counted than the .shx holds, or a bad offset: an error, as GDAL refuses the file.
    write_shx(&path, &entries, 5);
    let error = read_with(&path, &[], ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("holds fewer entries"), "{error}");
    let mut negative = entries.clone();
    negative[0].0 = -1;
    write_shx(&path, &negative, 3);
    let error = read_with(&path, &[], ReadLimits::default()).unwrap_err();
    assert!(error.to_string().contains("offset"), "{error}");
}

#[test]
fn a_zip_follows_its_shx_even_out_of_order() {
    let folder = tempfile::tempdir().unwrap();
    for (layout, garbage) in [
        (&[(0, 1, 0), (1, 2, 8), (2, 3, 0)], &[0xAB; 10][..]),
        (&[(2, 3, 0), (0, 1, 0), (1, 2, 0)], &[][..]),
    ] {
        let (path, _) = indexed_points(folder.path(), layout, garbage);
        let zipped = folder.path().join("indexed.zip");
        let mut archive = zip::ZipWriter::new(std::fs::File::create(&zipped).unwrap());
        for extension in ["shp", "shx"] {
            archive
                .start_file(
                    format!("indexed.{extension}"),
                    zip::write::SimpleFileOptions::default(),
                )
                .unwrap();
            std::io::Write::write_all(
                &mut archive,
                &std::fs::read(path.with_extension(extension)).unwrap(),
            )
            .unwrap();
        }
        archive.finish().unwrap();
        assert_eq!(xs(&read(&zipped)), [Some(0.0), Some(1.0), Some(2.0)]);
    }
}

fn measured_line(shape_type: i32, m_block: Option<[f64; 2]>) -> Vec<u8> {
    let mut content = shape_type.to_le_bytes().to_vec();
    for value in [0.0f64, 0.0, 1.0, 1.0] {
        content.extend_from_slice(&value.to_le_bytes());
    }
    content.extend_from_slice(&1i32.to_le_bytes());
    content.extend_from_slice(&2i32.to_le_bytes());
    content.extend_from_slice(&0i32.to_le_bytes());
    for value in [0.0f64, 0.0, 1.0, 1.0] {
        content.extend_from_slice(&value.to_le_bytes());
    }
    if shape_type == 13 {
        for value in [1.0f64, 2.0, 1.0, 2.0] {
            content.extend_from_slice(&value.to_le_bytes());
        }
    }
    if let Some(measures) = m_block {
        for value in [0.0f64, 0.0, measures[0], measures[1]] {
            content.extend_from_slice(&value.to_le_bytes());
        }
    }
    content
}

fn one_record_file(folder: &Path, name: &str, shape_type: i32, content: &[u8]) -> PathBuf {
    let mut bytes = main_header((108 + content.len()) / 2, shape_type);
    bytes.extend_from_slice(&1i32.to_be_bytes());
    bytes.extend_from_slice(&((content.len() / 2) as i32).to_be_bytes());
    bytes.extend_from_slice(content);
    let path = folder.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn measures_of_z_and_m_types_survive_a_round_trip_with_no_data_kept() {
    let folder = tempfile::tempdir().unwrap();
    let cases = [
        ("zm.shp", 13, Some([5.0, -1e39]), true, true),
        ("z.shp", 13, None, true, false),
        ("m.shp", 23, Some([5.0, -1e39]), false, true),
    ];
    for (name, shape_type, m_block, has_z, has_m) in cases {
        let path = one_record_file(
            folder.path(),
            name,
            shape_type,
            &measured_line(shape_type, m_block),
        );
        let back = read(&path);
        let schema = schema_of(&back);
        assert_eq!((schema.has_z, schema.has_m), (has_z, has_m), "{name}");
        let Some(Geometry::LineString(line)) = &features(&back)[0].geometry else {
            panic!("line expected in {name}");
        };
        // "No data" measures are kept as stored, as GDAL keeps them.
        let measures: Vec<Option<f64>> = line.iter().map(|coord| coord.m).collect();
        let expected = m_block.map_or(vec![None, None], |[a, b]| vec![Some(a), Some(b)]);
        assert_eq!(measures, expected, "{name}");
        let copy = folder.path().join(format!("copy_{name}"));
        write(&back, &copy);
        let again = read(&copy);
        assert_eq!(
            features(&again)[0].geometry,
            features(&back)[0].geometry,
            "{name}"
        );
        assert_eq!(schema_of(&again).has_m, has_m, "{name}");
        let bytes = std::fs::read(&copy).unwrap();
        assert_eq!(
            i32::from_le_bytes(bytes[32..36].try_into().unwrap()),
            shape_type
        );
    }
}

/// Replaces the .dbf beside `shp` with one text field `T` of `width` holding `values`, with
/// language driver byte `ldid`.
fn text_dbf(shp: &Path, width: u8, values: &[&[u8]], ldid: u8) {
    let mut bytes = vec![3u8, 120, 1, 1];
    bytes.extend_from_slice(&(values.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&65u16.to_le_bytes());
    bytes.extend_from_slice(&(u16::from(width) + 1).to_le_bytes());
    bytes.extend_from_slice(&[0u8; 17]);
    bytes.push(ldid);
    bytes.extend_from_slice(&[0u8; 2]);
    let mut descriptor = [0u8; 32];
    descriptor[0] = b'T';
    descriptor[11] = b'C';
    descriptor[16] = width;
    bytes.extend_from_slice(&descriptor);
    bytes.push(0x0D);
    for value in values {
        bytes.push(b' ');
        let mut cell = value.to_vec();
        cell.resize(usize::from(width), b' ');
        bytes.extend_from_slice(&cell);
    }
    bytes.push(0x1A);
    std::fs::write(shp.with_extension("dbf"), bytes).unwrap();
}

fn texts(dataset: &Dataset) -> Vec<Value> {
    features(dataset)
        .iter()
        .map(|feature| feature.values[0].clone())
        .collect()
}

#[test]
fn code_pages_follow_gdal_rules_for_cpg_and_language_driver() {
    let folder = tempfile::tempdir().unwrap();
    let (path, _) = indexed_points(folder.path(), &[(0, 1, 0)], &[]);
    let cpg = path.with_extension("cpg");
    let text = |value: &str| vec![Value::Text(value.to_owned())];
    // A .cpg naming no code page: UTF-8 text reads as UTF-8, other text as windows-1252.
    std::fs::write(&cpg, "<!DOCTYPE html><html>").unwrap();
    text_dbf(&path, 12, &["Zürich".as_bytes()], 0xC9);
    assert_eq!(
        texts(&read(&path)),
        text("Zürich"),
        "the .cpg overrides the byte"
    );
    text_dbf(&path, 12, &[b"Z\xFCrich"], 0);
    assert_eq!(texts(&read(&path)), text("Zürich"));
    std::fs::remove_file(&cpg).unwrap();
    // No .cpg and no language driver: the same.
    text_dbf(&path, 12, &["Zürich".as_bytes()], 0);
    assert_eq!(texts(&read(&path)), text("Zürich"));
    // Language driver ids by GDAL's table, DOS code pages included.
    for (ldid, bytes, expected) in [
        (0x01u8, &b"\x81\x9A"[..], "üÜ"),
        (0x02, &b"\x9B\xD0"[..], "øð"),
        (0x64, &b"\x85\xA5"[..], "ůą"),
        (0x26, &b"\x80"[..], "А"),
        (0xC9, &b"\xC0"[..], "А"),
        (0x57, &b"\x80\xE9"[..], "\u{80}é"),
        (0x03, &b"\x80\xE9"[..], "€é"),
    ] {
        text_dbf(&path, 12, &[bytes], ldid);
        assert_eq!(texts(&read(&path)), text(expected), "LDID {ldid:#x}");
    }
    std::fs::write(&cpg, "850").unwrap();
    text_dbf(&path, 12, &[b"\x9B"], 0);
    assert_eq!(texts(&read(&path)), text("ø"), "a .cpg code page number");
}

#[test]
fn text_loses_leading_and_trailing_blanks_numbers_their_padding() {
    let folder = tempfile::tempdir().unwrap();
    let (path, _) = indexed_points(folder.path(), &[(0, 1, 0), (1, 2, 0)], &[]);
    text_dbf(&path, 10, &[b"  ab  c  ", b"          "], 0);
    assert_eq!(
        texts(&read(&path)),
        [Value::Text("ab  c".into()), Value::Null]
    );
}

/// Widths of the fields of the .dbf beside `shp`.
fn dbf_widths(shp: &Path) -> Vec<u8> {
    let bytes = std::fs::read(shp.with_extension("dbf")).unwrap();
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    (0..(header - 33) / 32)
        .map(|index| bytes[32 + 32 * index + 16])
        .collect()
}

#[test]
fn fields_without_widths_are_sized_as_ogr2ogr_sizes_them() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("sized.shp");
    let fields = vec![
        Field::new("short", FieldType::Text),
        Field::new("long", FieldType::Text),
        Field::new("huge", FieldType::Text),
        Field::new("small", FieldType::Integer),
        Field::new("wide32", FieldType::Integer),
        Field::new("big", FieldType::Integer),
        Field::new("real", FieldType::Float),
        Field::new("empty", FieldType::Text),
    ];
    let rows = [
        ["abcde".to_owned(), "x".repeat(100), "y".repeat(300)],
        ["ab".to_owned(), "x".to_owned(), "y".to_owned()],
    ];
    let integers = [
        [12i64, -2_147_483_648, 12_345_678_901],
        [5, 1, -123_456_789_012_345_678],
    ];
    let features_in: Vec<Feature> = rows
        .iter()
        .zip(integers)
        .map(|(texts, numbers)| {
            let mut values: Vec<Value> = texts.iter().cloned().map(Value::Text).collect();
            values.extend(numbers.map(Value::Integer));
            values.push(Value::Float(1.5));
            values.push(Value::Null);
            feature(Some(Geometry::Point(Coord::xy(0.0, 0.0))), values)
        })
        .collect();
    let data = dataset(
        schema(GeometryKind::Point, false, false, fields),
        features_in,
    );
    let written = write(&data, &output);
    // ogr2ogr from GeoJSON gives 80, 100, 254 / 9, 11, 19 / 24.15 / 80.
    assert_eq!(dbf_widths(&output), [80, 100, 254, 9, 11, 19, 24, 80]);
    assert!(
        written.notes.iter().any(|note| note.contains("huge")),
        "{:?}",
        written.notes
    );
    let back = read(&output);
    let values = &features(&back)[1].values;
    assert_eq!(values[1], Value::Text("x".into()));
    // A 19-wide numeric field reads as real, in GDAL too.
    assert_eq!(values[5], Value::Float(-123_456_789_012_345_678.0));
    assert_eq!(features(&back)[0].values[2], Value::Text("y".repeat(254)));
}

#[test]
fn a_record_of_another_type_than_the_file_reads_as_its_own_type() {
    let folder = tempfile::tempdir().unwrap();
    let (path, _) = indexed_points(folder.path(), &[(0, 1, 0), (1, 2, 0)], &[]);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[32..36].copy_from_slice(&3i32.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    let back = read(&path);
    assert_eq!(schema_of(&back).geometry_kind, GeometryKind::Line);
    assert_eq!(xs(&back), [Some(0.0), Some(1.0)], "as GDAL reads them");
}

#[test]
fn a_dbf_header_without_its_terminator_is_read_by_its_length() {
    // shapelib's 3dpoints.dbf (1998) has a newline where the 0x0D terminator belongs, and a
    // .shx whose header counts 8 of its 22 entries: GDAL reads 8 features with field Z.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/shapelib");
    let back = read(&corpus.join("3dpoints.shp"));
    let schema = schema_of(&back);
    assert_eq!(schema.fields.len(), 1);
    assert_eq!(schema.fields[0].name, "Z");
    assert_eq!(features(&back).len(), 8);
    assert!(schema.has_z && !schema.has_m);
}

#[test]
fn many_text_fields_without_widths_fit_while_their_final_widths_fit() {
    let folder = tempfile::tempdir().unwrap();
    let fields: Vec<Field> = (0..300)
        .map(|index| Field::new(format!("f{index}"), FieldType::Text))
        .collect();
    let row = |value: &str| {
        feature(
            Some(Geometry::Point(Coord::xy(0.0, 0.0))),
            vec![Value::Text(value.to_owned()); 300],
        )
    };
    let output = folder.path().join("wide.shp");
    let data = dataset(
        schema(GeometryKind::Point, false, false, fields.clone()),
        vec![row("short"), row("other")],
    );
    write(&data, &output);
    assert!(dbf_widths(&output).iter().all(|width| *width == 80));
    assert_eq!(
        features(&read(&output))[1].values[299],
        Value::Text("other".into())
    );
    // 300 fields of 254 bytes pass the format's 65535 bytes per record: an error at the end.
    let long = "z".repeat(254);
    let data = dataset(
        schema(GeometryKind::Point, false, false, fields),
        vec![row(&long)],
    );
    let mut sink = ShpWriter
        .create(&folder.path().join("too_wide.shp"), &Parameters::default())
        .unwrap();
    data.replay(sink.as_mut()).unwrap();
    let error = sink.finish().unwrap_err();
    assert!(
        error.to_string().contains("exceed what a .dbf can hold"),
        "{error}"
    );
}

#[test]
fn a_geometry_collection_goes_to_the_files_of_its_members_kinds() {
    let folder = tempfile::tempdir().unwrap();
    let line = vec![Coord::xy(0.0, 0.0), Coord::xy(1.0, 1.0)];
    let collection = Geometry::GeometryCollection(vec![
        Geometry::Point(Coord::xy(5.0, 5.0)),
        Geometry::LineString(line.clone()),
        Geometry::GeometryCollection(vec![Geometry::Point(Coord::xy(6.0, 6.0))]),
    ]);
    let data = dataset(
        schema(
            GeometryKind::Any,
            false,
            false,
            vec![Field::new("n", FieldType::Integer)],
        ),
        vec![
            feature(Some(collection), vec![Value::Integer(1)]),
            feature(
                Some(Geometry::GeometryCollection(Vec::new())),
                vec![Value::Integer(2)],
            ),
        ],
    );
    let output = folder.path().join("gc.shp");
    let written = write_with(&data, &output, &[]);
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("2 GeometryCollection(s)")),
        "{:?}",
        written.notes
    );
    // The points of the collection (one nested) make one MultiPoint record, its line one
    // LineString record, both with the feature's attributes; the empty collection is a null
    // geometry in the first file.
    let points = read(&folder.path().join("gc_multipoint.shp"));
    assert_eq!(numbers(&points), [Value::Integer(1), Value::Integer(2)]);
    assert_eq!(
        features(&points)[0].geometry,
        Some(Geometry::MultiPoint(vec![
            Coord::xy(5.0, 5.0),
            Coord::xy(6.0, 6.0)
        ]))
    );
    assert_eq!(features(&points)[1].geometry, None);
    let lines = read(&folder.path().join("gc_linestring.shp"));
    assert_eq!(numbers(&lines), [Value::Integer(1)]);
    assert_eq!(
        features(&lines)[0].geometry,
        Some(Geometry::LineString(line))
    );
}

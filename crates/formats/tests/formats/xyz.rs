//! XYZ: separators, z column, extra columns, chunked streaming, and every error.

use std::path::Path;

use basin_formats::catalogue::{ReadContext, Reader};
use basin_formats::crs::Crs;
use basin_formats::model::{Data, Dataset, DatasetSink, Feature, Frame, Header, PointChunk};
use basin_formats::xyz::{CHUNK_POINTS, XyzReader};
use basin_formats::{FormatError, FormatResult, Parameters, ReadLimits};

fn parameters(raw: &[(&str, &str)]) -> FormatResult<Parameters> {
    let raw: Vec<(String, String)> = raw
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    Parameters::validate(XyzReader.spec().parameters, &raw)
}

fn read_path(path: &Path, raw: &[(&str, &str)]) -> FormatResult<Dataset> {
    let parameters = parameters(raw)?;
    Dataset::collect(|sink| XyzReader.read(path, &parameters, &ReadContext::default(), sink))
}

fn read_text(text: &str, raw: &[(&str, &str)]) -> FormatResult<Dataset> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("points.xyz");
    std::fs::write(&path, text).unwrap();
    read_path(&path, raw)
}

fn points(dataset: &Dataset) -> &PointChunk {
    let Data::Points(chunk) = &dataset.data else {
        panic!("points expected")
    };
    chunk
}

#[test]
fn comma_tab_and_space_separated_files_read_the_same() {
    for text in [
        "1.5,2.5,-3\n4,5,6e2\n",
        "1.5\t2.5\t-3\n4\t5\t6e2\n",
        "  1.5   2.5  -3  \n\n4 5    6e2\n\n",
        "1.5, 2.5 , -3\r\n4,5,6e2\r\n",
        "1.5\t 2.5 \t-3\n4 5\t6e2",
    ] {
        let dataset = read_text(text, &[]).unwrap();
        let chunk = points(&dataset);
        assert_eq!(chunk.x, vec![1.5, 4.0], "{text:?}");
        assert_eq!(chunk.y, vec![2.5, 5.0]);
        assert_eq!(chunk.z, vec![-3.0, 600.0]);
        let Header::Points(header) = &dataset.header else {
            panic!()
        };
        assert!(header.items.is_empty());
        assert_eq!(header.z_item.name, "z");
    }
}

#[test]
fn z_column_index_picks_z_and_other_columns_become_items() {
    let dataset = read_text("1 2 3 4 5\n6 7 8 9 10\n", &[("ZColumnIndex", "3")]).unwrap();
    let chunk = points(&dataset);
    assert_eq!(chunk.z, vec![4.0, 9.0]);
    assert_eq!(chunk.items, vec![vec![3.0, 8.0], vec![5.0, 10.0]]);
    let Header::Points(header) = &dataset.header else {
        panic!()
    };
    let names: Vec<&str> = header.items.iter().map(|item| item.name.as_str()).collect();
    assert_eq!(names, vec!["column2", "column4"]);
}

#[test]
fn srid_parameter_sets_the_crs() {
    let dataset = read_text("1 2 3\n", &[("SRID", "25832")]).unwrap();
    let Header::Points(header) = &dataset.header else {
        panic!()
    };
    assert_eq!(header.crs, Some(Crs::Epsg(25832)));
}

#[test]
fn z_column_below_2_is_a_parameter_error() {
    for value in ["1", "0", "-5"] {
        let error = read_text("1 2 3\n", &[("ZColumnIndex", value)]).unwrap_err();
        assert!(
            matches!(&error, FormatError::Parameter { name, .. } if name == "ZColumnIndex"),
            "{error}"
        );
    }
    assert!(parameters(&[("ZColumnIndex", "two")]).is_err());
}

#[test]
fn bad_rows_are_errors_naming_the_line() {
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case<'_>] = &[
        ("", &[], "no points"),
        ("\n  \n", &[], "no points"),
        ("x,y,z\n1,2,3\n", &[], "no header line"),
        (
            "1 2 3\n4 5\n",
            &[],
            "line 2: 2 columns where the first line has 3",
        ),
        ("1 2 3\n\n4 5 6 7\n", &[], "line 3: 4 columns"),
        ("1,2,3\n4,,6\n", &[], "line 2: column 1"),
        ("1 2 3\n4 5 six\n", &[], "line 2: column 2 \"six\""),
        ("1 2\n", &[], "2 columns, but z is column 2"),
        ("1 2 3 4\n", &[("ZColumnIndex", "4")], "z is column 4"),
    ];
    for (text, raw, expected) in cases {
        let message = read_text(text, raw).unwrap_err().to_string();
        assert!(message.contains(expected), "{text:?}: {message}");
    }
}

/// Issue 33: NaN and infinite coordinates were accepted.
#[test]
fn non_finite_coordinates_are_errors_naming_the_line_and_column() {
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case<'_>] = &[
        (
            "1 2 3\nNaN 5 6\n",
            &[],
            "line 2: column 0 (x) \"NaN\" is not a finite number",
        ),
        ("1,2,3\n\n4,inf,6\n", &[], "line 3: column 1 (y) \"inf\""),
        ("1 2 -infinity\n", &[], "line 1: column 2 (z) \"-infinity\""),
        ("1 2 3\n4 5 1e999\n", &[], "line 2: column 2 (z) \"1e999\""),
        (
            "1 2 9 nan\n",
            &[("ZColumnIndex", "3")],
            "line 1: column 3 (z) \"nan\"",
        ),
    ];
    for (text, raw, expected) in cases {
        let message = read_text(text, raw).unwrap_err().to_string();
        assert!(message.contains(expected), "{text:?}: {message}");
        assert!(message.contains("x, y and z must be finite"), "{message}");
    }
}

#[test]
fn non_finite_values_in_extra_columns_are_kept() {
    let dataset = read_text("1 2 3 NaN inf\n", &[]).unwrap();
    let chunk = points(&dataset);
    assert!(chunk.items[0][0].is_nan());
    assert_eq!(chunk.items[1][0], f64::INFINITY);
    // With z moved to column 3, column 2 is a value and may be NaN.
    let dataset = read_text("1 2 nan 4\n", &[("ZColumnIndex", "3")]).unwrap();
    assert_eq!(points(&dataset).z, vec![4.0]);
    assert!(points(&dataset).items[0][0].is_nan());
}

#[test]
fn a_line_over_the_limit_is_an_error() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("long.xyz");
    std::fs::write(&path, format!("1 2 3\n{}\n", "1".repeat(10_000))).unwrap();
    let context = ReadContext {
        limits: ReadLimits {
            line_bytes_max: 100,
            ..ReadLimits::default()
        },
        ..ReadContext::default()
    };
    let result =
        Dataset::collect(|sink| XyzReader.read(&path, &parameters(&[]).unwrap(), &context, sink));
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("line 2") && message.contains("longer than 100"),
        "{message}"
    );
}

#[test]
fn too_many_columns_is_an_error() {
    let line: Vec<String> = (0..2000).map(|value| value.to_string()).collect();
    let message = read_text(&line.join(" "), &[]).unwrap_err().to_string();
    assert!(message.contains("2000 columns"), "{message}");
}

/// Counts chunks and points without keeping them.
#[derive(Default)]
struct ChunkCounter {
    chunks: usize,
    points: usize,
    largest: usize,
    ended: bool,
}

impl DatasetSink for ChunkCounter {
    fn begin(&mut self, _header: &Header) -> FormatResult<()> {
        Ok(())
    }
    fn frame(&mut self, _frame: Frame<'_>) -> FormatResult<()> {
        panic!("no frames expected")
    }
    fn feature(&mut self, _feature: &Feature) -> FormatResult<()> {
        panic!("no features expected")
    }
    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        self.chunks += 1;
        self.points += chunk.len();
        self.largest = self.largest.max(chunk.len());
        Ok(())
    }
    fn end(&mut self) -> FormatResult<()> {
        self.ended = true;
        Ok(())
    }
}

#[test]
fn large_files_stream_in_bounded_chunks() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("many.xyz");
    let count = CHUNK_POINTS * 2 + 17;
    let mut text = String::with_capacity(count * 12);
    for index in 0..count {
        text.push_str(&format!("{index} {} 1.5\n", index * 2));
    }
    std::fs::write(&path, text).unwrap();
    let mut counter = ChunkCounter::default();
    XyzReader
        .read(
            &path,
            &parameters(&[]).unwrap(),
            &ReadContext::default(),
            &mut counter,
        )
        .unwrap();
    assert!(counter.ended);
    assert_eq!(counter.points, count);
    assert_eq!(counter.chunks, 3);
    assert_eq!(counter.largest, CHUNK_POINTS);
}

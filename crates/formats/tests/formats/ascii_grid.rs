//! ASCII Grid reader and writer: header variants, the choice of value type, round trips of
//! every type with and without nodata, `.prj` files, frames, progress, every limit at and past
//! it, and hostile files.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::helpers::{Folder, params};

use basin_formats::ascii_grid::{
    AsciiGridReader, AsciiGridWriter, FRAME_VALUES, HEADER_LINE_BYTES_MAX, TOKEN_BYTES_MAX,
};
use basin_formats::catalogue::{Conversion, ReadContext, Reader, Writer, Written};
use basin_formats::crs::{self, Crs};
use basin_formats::model::{
    Data, DataType, Dataset, DatasetSink, Frame, GeoTransform, GridGeometry, GridHeader, Header,
    Item, TimeAxis, Values, VerticalAxis,
};
use basin_formats::{Catalogue, FormatError, FormatResult, Parameters, Progress, ReadLimits};

const UTM_32N_ESRI: &str = r#"PROJCS["WGS_1984_UTM_Zone_32N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",9.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]"#;

fn parameters(raw: &[(&str, &str)]) -> Parameters {
    params(AsciiGridReader.spec().parameters, raw)
}

fn read_with(path: &Path, raw: &[(&str, &str)], limits: ReadLimits) -> FormatResult<Dataset> {
    let parameters = parameters(raw);
    let context = ReadContext {
        limits,
        ..ReadContext::default()
    };
    Dataset::collect(|sink| AsciiGridReader.read(path, &parameters, &context, sink))
}

fn read_path(path: &Path) -> FormatResult<Dataset> {
    read_with(path, &[], ReadLimits::default())
}

fn read_text(text: &str) -> FormatResult<Dataset> {
    let folder = Folder::new();
    read_path(&folder.file("grid.asc", text.as_bytes()))
}

fn grid_header(dataset: &Dataset) -> &GridHeader {
    let Header::Grid(header) = &dataset.header else {
        panic!("grid expected")
    };
    header
}

fn values(dataset: &Dataset) -> &Values {
    let Data::Values(steps) = &dataset.data else {
        panic!("values expected")
    };
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].len(), 1);
    &steps[0][0]
}

fn grid_dataset(
    columns: usize,
    rows: usize,
    transform: GeoTransform,
    item: Item,
    data: Values,
) -> Dataset {
    Dataset {
        header: Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns,
                rows,
                vertical: None,
                transform,
                crs: None,
            },
            items: vec![item],
            time: TimeAxis::None,
        }),
        data: Data::Values(vec![vec![data]]),
    }
}

fn write(dataset: &Dataset, output: &Path) -> FormatResult<Written> {
    let mut sink = AsciiGridWriter.create(output, &Parameters::default())?;
    dataset.replay(sink.as_mut())?;
    sink.finish()
}

const HEADER: &str = "ncols 3\nnrows 2\nxllcorner 100\nyllcorner 200\ncellsize 10\n";

// Reading -------------------------------------------------------------------------------------

#[test]
fn a_corner_header_gives_gdals_geotransform_and_values_row_by_row() {
    let dataset = read_text(&format!("{HEADER}1 2 3\n4 5 6\n")).unwrap();
    let header = grid_header(&dataset);
    assert_eq!((header.geometry.columns, header.geometry.rows), (3, 2));
    assert_eq!(
        header.geometry.transform.to_gdal(),
        [100.0, 10.0, 0.0, 220.0, 0.0, -10.0]
    );
    assert_eq!(header.items.len(), 1);
    assert_eq!(header.items[0].name, "grid");
    assert_eq!(header.items[0].data_type, DataType::I32);
    assert_eq!(header.items[0].nodata, None);
    assert_eq!(header.time, TimeAxis::None);
    assert_eq!(header.geometry.crs, None);
    assert_eq!(values(&dataset), &Values::I32(vec![1, 2, 3, 4, 5, 6]));
}

#[test]
fn centre_coordinates_move_the_origin_by_half_a_cell() {
    let text = "NCOLS 3\nNROWS 2\nXLLCENTER 105\nYLLCENTER 205\nCELLSIZE 10\n1 2 3 4 5 6\n";
    let dataset = read_text(text).unwrap();
    assert_eq!(
        grid_header(&dataset).geometry.transform.to_gdal(),
        [100.0, 10.0, 0.0, 220.0, 0.0, -10.0]
    );
}

#[test]
fn dx_and_dy_give_rectangular_cells() {
    let text = "ncols 3\nnrows 2\nxllcorner 100\nyllcorner 200\ndx 10\ndy 5\n1 2 3\n4 5 6\n";
    let dataset = read_text(text).unwrap();
    assert_eq!(
        grid_header(&dataset).geometry.transform.to_gdal(),
        [100.0, 10.0, 0.0, 210.0, 0.0, -5.0]
    );
}

#[test]
fn rows_need_not_match_lines() {
    let dataset = read_text(&format!("{HEADER}1\n2 3 4\t5\r\n\n  6")).unwrap();
    assert_eq!(values(&dataset), &Values::I32(vec![1, 2, 3, 4, 5, 6]));
}

#[test]
fn the_type_is_the_narrowest_that_keeps_every_value_as_written() {
    let cases: &[(&str, DataType)] = &[
        ("1 2 3 4 5 -2147483648", DataType::I32),
        ("1 2 3 4 5 2147483648", DataType::F32),
        ("1 2 3 4 5 6.0", DataType::F32),
        ("0.1 0.25 -1e-3 3.4028235e38 nan 6", DataType::F32),
        ("0.10000000149011611938 2 3 4 5 6", DataType::F32),
        ("0.12345679 2 3 4 5 6", DataType::F32),
        ("0.123456789 2 3 4 5 6", DataType::F64),
        ("1 2 3 4 5 16777217.5", DataType::F64),
        ("1 2 3 4 5 1e300", DataType::F64),
    ];
    for (data, expected) in cases {
        let dataset = read_text(&format!("{HEADER}{data}\n")).unwrap();
        assert_eq!(
            grid_header(&dataset).items[0].data_type,
            *expected,
            "{data}"
        );
        let parsed: Vec<f64> = data
            .split(' ')
            .map(|token| token.parse().unwrap())
            .collect();
        let read = values(&dataset).to_f64();
        for (value, expected_value) in read.iter().zip(&parsed) {
            let expected_value = if *expected == DataType::F32 {
                f64::from(*expected_value as f32)
            } else {
                *expected_value
            };
            assert!(
                value.to_bits() == expected_value.to_bits()
                    || (value.is_nan() && expected_value.is_nan()),
                "{data}: {value} vs {expected_value}"
            );
        }
    }
}

#[test]
fn the_nodata_value_widens_an_integer_grid_like_gdal_but_does_not_count_as_a_value() {
    let type_of = |nodata: &str, data: &str| {
        let text = format!("{HEADER}NODATA_value {nodata}\n{data}\n");
        let dataset = read_text(&text).unwrap();
        let item = &grid_header(&dataset).items[0];
        (item.data_type, item.nodata)
    };
    assert_eq!(
        type_of("-9999", "1 2 3 4 5 -9999"),
        (DataType::I32, Some(-9999.0))
    );
    assert_eq!(
        type_of("-9999.0", "1 2 3 4 5 -9999"),
        (DataType::F32, Some(-9999.0))
    );
    // GDAL widens for a nodata with a decimal point only (or one beyond Int32).
    assert_eq!(
        type_of("1.0e-40", "1 2 3 4 5 6"),
        (DataType::F64, Some(1e-40))
    );
    assert_eq!(
        type_of("1e-40", "1 2 3 4 5 6"),
        (DataType::I32, Some(1e-40))
    );
    assert_eq!(
        type_of("3000000000", "1 2 3 4 5 6"),
        (DataType::F32, Some(3e9))
    );
    assert_eq!(
        type_of("3.4028235e38", "1.5 2 3 4 5 6"),
        (DataType::F64, Some(3.402_823_5e38))
    );
    assert_eq!(
        type_of("-3.4028234663852886e38", "1.5 2 3 4 5 6"),
        (DataType::F32, Some(f64::from(f32::MIN)))
    );
    // ESRI's classic float nodata is not exact in float32 but must not force Float64.
    let (data_type, nodata) = type_of("-3.402823466e+38", "1.5 2 3 4 5 -3.402823466e+38");
    assert_eq!(
        (data_type, nodata),
        (DataType::F32, Some(-3.402_823_466e38))
    );
    let (data_type, nodata) = type_of("nan", "1 2 3 nan 5 6");
    assert_eq!(data_type, DataType::F32);
    assert!(nodata.unwrap().is_nan());
}

#[test]
fn a_float32_grid_with_an_inexact_nodata_matches_it_in_float32() {
    let text = format!("{HEADER}NODATA_value -3.402823466e+38\n1.5 2 3 4 5 -3.402823466e+38\n");
    let dataset = read_text(&text).unwrap();
    let item = &grid_header(&dataset).items[0];
    let last = values(&dataset).get_f64(5).unwrap();
    assert!(item.is_nodata(last));
    assert!(!item.is_nodata(1.5));
}

#[test]
fn the_prj_beside_the_file_is_the_crs_and_srid_applies_without_one() {
    let folder = Folder::new();
    let grid = folder.file("dem.asc", format!("{HEADER}1 2 3 4 5 6\n").as_bytes());
    let read = |raw: &[(&str, &str)]| {
        let dataset = read_with(&grid, raw, ReadLimits::default()).unwrap();
        grid_header(&dataset).geometry.crs.clone()
    };
    assert_eq!(read(&[]), None);
    assert_eq!(read(&[("SRID", "25832")]), Some(Crs::Epsg(25832)));
    folder.file("dem.PRJ", UTM_32N_ESRI.as_bytes());
    let crs = read(&[("SRID", "25832")]).unwrap();
    assert_eq!(crs, Crs::Wkt(UTM_32N_ESRI.to_owned()));
    assert_eq!(crs::resolve_epsg(&crs), Some(32632));
    // The older keyword form of ESRI .prj files is kept as a name, or replaced by SRID.
    std::fs::remove_file(folder.path("dem.PRJ")).unwrap();
    folder.file("dem.prj", b"Projection    UTM\nZone         32\n");
    assert_eq!(
        read(&[]),
        Some(Crs::Named("Projection    UTM\nZone         32".to_owned()))
    );
    assert_eq!(read(&[("SRID", "32632")]), Some(Crs::Epsg(32632)));
}

/// A sink recording how frames arrive.
#[derive(Default)]
struct FrameLog {
    frames: Vec<(usize, usize)>,
    total: usize,
}

impl DatasetSink for FrameLog {
    fn begin(&mut self, _header: &Header) -> FormatResult<()> {
        Ok(())
    }
    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        assert_eq!((frame.step, frame.item), (0, 0));
        assert_eq!(frame.offset, self.total);
        self.frames.push((frame.offset, frame.values.len()));
        self.total += frame.values.len();
        Ok(())
    }
    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }
}

fn frames_of(columns: usize, rows: usize) -> Vec<(usize, usize)> {
    let folder = Folder::new();
    let mut text = format!("ncols {columns}\nnrows {rows}\nxllcorner 0\nyllcorner 0\ncellsize 1\n");
    for row in 0..rows {
        let line: Vec<String> = (0..columns)
            .map(|column| (row + column).to_string())
            .collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    let path = folder.file("frames.asc", text.as_bytes());
    let mut log = FrameLog::default();
    AsciiGridReader
        .read(
            &path,
            &Parameters::default(),
            &ReadContext::default(),
            &mut log,
        )
        .unwrap();
    assert_eq!(log.total, columns * rows);
    log.frames
}

#[test]
fn values_arrive_in_frames_of_whole_rows_of_bounded_size() {
    let frames = frames_of(1000, 150);
    let per_frame = FRAME_VALUES / 1000 * 1000;
    assert_eq!(frames[0], (0, per_frame));
    assert!(
        frames
            .iter()
            .all(|(offset, length)| offset % 1000 == 0 && length % 1000 == 0)
    );
    let frames = frames_of(FRAME_VALUES + 7, 2);
    assert!(frames.iter().all(|(_, length)| *length <= FRAME_VALUES));
    assert_eq!(frames.len(), 3);
}

#[derive(Default)]
struct CountingProgress {
    total: AtomicU64,
    done: AtomicU64,
}

impl Progress for CountingProgress {
    fn set_total(&self, units: u64) {
        self.total.store(units, Ordering::Relaxed);
    }
    fn advance(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }
}

#[test]
fn progress_counts_the_bytes_of_both_passes() {
    let folder = Folder::new();
    for data in ["1 2 3 4 5 6\n", "1 0.123456789 3 4 5 6\n"] {
        let text = format!("{HEADER}{data}");
        let path = folder.file("progress.asc", text.as_bytes());
        let progress = CountingProgress::default();
        let context = ReadContext {
            limits: ReadLimits::default(),
            progress: &progress,
        };
        Dataset::collect(|sink| {
            AsciiGridReader.read(&path, &Parameters::default(), &context, sink)
        })
        .unwrap();
        let length = text.len() as u64;
        assert_eq!(progress.total.load(Ordering::Relaxed), 2 * length);
        assert_eq!(progress.done.load(Ordering::Relaxed), 2 * length, "{data}");
    }
}

// Hostile and broken input -------------------------------------------------------------------

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of cases, each an input and the message it must give, reads best whole"
)]
fn broken_files_are_errors_naming_the_place() {
    let cases: &[(String, &str)] = &[
        (String::new(), "no ncols"),
        (
            "garbage\n".to_owned(),
            "line 1: unknown header key \"garbage\"",
        ),
        (
            format!("{HEADER}1 2 3\n4 5\n"),
            "line 7: the file ends after 5 of ncols x nrows = 6 values (truncated?)",
        ),
        (
            format!("{HEADER}1 2 3\n4 5 6\n7\n"),
            "line 8: more values than ncols x nrows = 6",
        ),
        (
            format!("{HEADER}1 2 3\n4 x 6\n"),
            "line 7: \"x\" is not a number",
        ),
        (
            format!("{HEADER}1 2 3\n4 5,5 6\n"),
            "line 7: \"5,5\" is not a number",
        ),
        (
            format!("{HEADER}1 2 3\n4 1e999 6\n"),
            "line 7: \"1e999\" is beyond the range",
        ),
        (
            format!("{HEADER}1 2 3\n4 0.5 1e999\n"),
            "line 7: \"1e999\" is beyond the range",
        ),
        (
            format!("{HEADER}1 2 3\n4 5 \u{0}\n"),
            "line 7: \"\\0\" is not a number",
        ),
        (HEADER.to_owned(), "the file ends after the header"),
        (
            format!("{HEADER}\n\n"),
            "line 8: the file ends after the header",
        ),
        (
            format!("{HEADER}1 2 3\n4 5\n\n\n"),
            "line 7: the file ends after 5 of",
        ),
        (
            "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 10\nncols 4\n1".to_owned(),
            "line 6: ncols is given twice",
        ),
        (
            "ncols 3\nnrows 0\nxllcorner 0\nyllcorner 0\ncellsize 10\n1".to_owned(),
            "line 2: nrows is 0; it must be a positive whole number",
        ),
        (
            "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize -10\n1".to_owned(),
            "line 5: cellsize is -10; it must be above zero",
        ),
        (
            "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\n1 2 3 4 5 6".to_owned(),
            "line 5: the header has no cellsize",
        ),
        (
            "ncols 3\nnrows 2\nxllcorner nan\n".to_owned(),
            "line 3: xllcorner must be a finite number",
        ),
        (
            "ncols 99999999999999999999\n".to_owned(),
            "line 1: ncols 99999999999999999999 is beyond any grid size",
        ),
    ];
    for (text, expected) in cases {
        let error = read_text(text).unwrap_err();
        assert!(
            matches!(error, FormatError::InvalidInput { .. }),
            "{text:?}: {error}"
        );
        let message = error.to_string();
        assert!(message.contains(expected), "{text:?}: {message}");
    }
}

#[test]
fn absurd_dimensions_are_refused_before_any_allocation() {
    let text = "ncols 4000000000\nnrows 4000000000\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n";
    let error = read_text(text).unwrap_err();
    assert!(
        matches!(
            error,
            FormatError::LimitExceeded {
                actual: 16_000_000_000_000_000_000,
                ..
            }
        ),
        "{error}"
    );
    let text = "ncols 18446744073709551615\nnrows 3\nxllcorner 0\nyllcorner 0\ncellsize 1\n1\n";
    let error = read_text(text).unwrap_err().to_string();
    assert!(error.contains("beyond any grid size"), "{error}");
}

#[test]
fn a_header_that_claims_a_large_grid_costs_only_what_the_file_holds() {
    // 4e9 cells are within the default limit; the file ends after one value.
    let text = "ncols 65536\nnrows 65536\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n";
    let error = read_text(text).unwrap_err().to_string();
    assert!(
        error.contains("ends after 3 of ncols x nrows = 4294967296 values"),
        "{error}"
    );
}

#[test]
fn the_cell_limit_applies_at_and_past_it() {
    let folder = Folder::new();
    let path = folder.file("limit.asc", format!("{HEADER}1 2 3 4 5 6\n").as_bytes());
    let limits = |grid_cells_max| ReadLimits {
        grid_cells_max,
        ..ReadLimits::default()
    };
    assert!(read_with(&path, &[], limits(6)).is_ok());
    let error = read_with(&path, &[], limits(5)).unwrap_err();
    assert!(
        matches!(
            error,
            FormatError::LimitExceeded {
                actual: 6,
                limit: 5,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn the_line_limit_applies_to_data_lines_at_and_past_it() {
    let folder = Folder::new();
    let path = folder.file("lines.asc", format!("{HEADER}1 2 3\n4 5 6\n").as_bytes());
    let limits = |line_bytes_max| ReadLimits {
        line_bytes_max,
        ..ReadLimits::default()
    };
    assert!(read_with(&path, &[], limits(13)).is_ok());
    let error = read_with(&path, &[], limits(12)).unwrap_err().to_string();
    assert!(
        error.contains("line 3: header line longer than 12 bytes"),
        "{error}"
    );
    let path = folder.file("lines.asc", format!("{HEADER}1 2 3\n4 5 600\n").as_bytes());
    assert!(read_with(&path, &[], limits(13)).is_ok());
    let path = folder.file(
        "lines.asc",
        format!("{HEADER}1 2 3\n4 5 6000000000\n").as_bytes(),
    );
    let error = read_with(&path, &[], limits(13)).unwrap_err().to_string();
    assert!(
        error.contains("line 7: line longer than 13 bytes"),
        "{error}"
    );
}

#[test]
fn a_file_without_line_breaks_is_refused_at_the_line_limit() {
    let mut text = "ncols 3000000\nnrows 1\nxllcorner 0\nyllcorner 0\ncellsize 1\n".to_owned();
    text.push_str(&"1 ".repeat(3_000_000));
    let folder = Folder::new();
    let path = folder.file("one_line.asc", text.as_bytes());
    let limits = ReadLimits {
        line_bytes_max: 1_000_000,
        grid_cells_max: 10_000_000,
        ..ReadLimits::default()
    };
    let error = read_with(&path, &[], limits).unwrap_err().to_string();
    assert!(
        error.contains("line 6: line longer than 1000000 bytes"),
        "{error}"
    );
}

#[test]
fn values_and_header_lines_have_a_length_limit() {
    let at_limit = format!("{HEADER}1 2 3 4 5 {}\n", "7".repeat(TOKEN_BYTES_MAX));
    let dataset = read_text(&at_limit).unwrap();
    assert_eq!(grid_header(&dataset).items[0].data_type, DataType::F64);
    let past_limit = format!("{HEADER}1 2 3 4 5 {}\n", "7".repeat(TOKEN_BYTES_MAX + 1));
    let error = read_text(&past_limit).unwrap_err().to_string();
    assert!(
        error.contains("line 6: a value longer than 256 bytes"),
        "{error}"
    );
    let long_key_line = format!(
        "ncols {}3\nnrows 2\n",
        "0".repeat(usize::try_from(HEADER_LINE_BYTES_MAX).unwrap())
    );
    let error = read_text(&long_key_line).unwrap_err().to_string();
    assert!(
        error.contains("line 1: header line longer than 1024 bytes"),
        "{error}"
    );
}

#[test]
fn binary_garbage_is_an_error_not_a_panic() {
    let mut state = 0x1234_5678_u32;
    let base = format!("{HEADER}1 2.5 3\n4 nan -6e3\n").into_bytes();
    for _ in 0..3000 {
        let mut bytes = base.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let position = state as usize % bytes.len();
            bytes[position] = (state >> 24) as u8;
        }
        let folder = Folder::new();
        let path = folder.file("noise.asc", &bytes);
        let _ = read_path(&path);
        let cut = state as usize % base.len();
        let path = folder.file("cut.asc", &base[..cut]);
        let _ = read_path(&path);
    }
}

// Writing ------------------------------------------------------------------------------------

fn round_trip(dataset: &Dataset) -> (String, Dataset) {
    let folder = Folder::new();
    let output = folder.path("out.asc");
    write(dataset, &output).unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    let back = read_path(&output).unwrap();
    (text, back)
}

#[test]
fn an_integer_grid_round_trips_with_its_header() {
    let mut item = Item::new("dem", DataType::I32);
    item.nodata = Some(-9999.0);
    let dataset = grid_dataset(
        3,
        2,
        GeoTransform::north_up(100.0, 220.0, 10.0, 10.0),
        item,
        Values::I32(vec![1, -9999, i32::MIN, i32::MAX, 0, -5]),
    );
    let (text, back) = round_trip(&dataset);
    assert_eq!(
        text,
        "ncols         3\nnrows         2\nxllcorner     100.0\nyllcorner     200.0\n\
         cellsize      10.0\nNODATA_value  -9999\n 1 -9999 -2147483648\n 2147483647 0 -5\n"
    );
    let header = grid_header(&back);
    assert_eq!(
        header.geometry.transform,
        grid_header(&dataset).geometry.transform
    );
    assert_eq!(header.items[0].data_type, DataType::I32);
    assert_eq!(header.items[0].nodata, Some(-9999.0));
    assert_eq!(values(&back), values(&dataset));
}

#[test]
fn float32_values_round_trip_in_their_shortest_form() {
    let mut item = Item::new("depth", DataType::F32);
    item.nodata = Some(-3.402_823_466e38);
    let data = vec![
        0.1_f32,
        -1.5e-7,
        3.402_823_5e38,
        f32::from_bits(1),
        -3.402_823_5e38,
        7.0,
    ];
    let dataset = grid_dataset(
        2,
        3,
        GeoTransform::north_up(0.5, 3.5, 0.25, 0.25),
        item,
        Values::F32(data.clone()),
    );
    let (text, back) = round_trip(&dataset);
    assert!(
        text.ends_with(
            "NODATA_value  -3.402823466e38\n 0.1 -1.5e-7\n 3.4028235e38 1e-45\n -3.402823466e38 7.0\n"
        ),
        "{text}"
    );
    let header = grid_header(&back);
    assert_eq!(header.items[0].data_type, DataType::F32);
    assert_eq!(values(&back), &Values::F32(data));
}

#[test]
fn float64_values_and_special_values_round_trip() {
    let mut item = Item::new("h", DataType::F64);
    item.nodata = Some(f64::NAN);
    let data = vec![
        0.123_456_789,
        f64::NAN,
        f64::INFINITY,
        -0.0,
        1e-300,
        f64::MAX,
    ];
    let dataset = grid_dataset(
        3,
        2,
        GeoTransform::north_up(-1.0, 1.0, 1.0, 1.0),
        item,
        Values::F64(data.clone()),
    );
    let (text, back) = round_trip(&dataset);
    assert!(
        text.contains(
            "NODATA_value  nan\n 0.123456789 nan inf\n -0.0 1e-300 1.7976931348623157e308\n"
        ),
        "{text}"
    );
    let header = grid_header(&back);
    assert_eq!(header.items[0].data_type, DataType::F64);
    assert!(header.items[0].nodata.unwrap().is_nan());
    let read = values(&back).to_f64();
    for (a, b) in read.iter().zip(&data) {
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{a} {b}"
        );
    }
}

#[test]
fn narrow_integer_types_are_written_as_integers_and_read_as_int32() {
    for (values_in, expected) in [
        (Values::U8(vec![0, 255]), vec![0, 255]),
        (Values::I16(vec![-32768, 32767]), vec![-32768, 32767]),
        (Values::U16(vec![0, 65535]), vec![0, 65535]),
        (Values::U32(vec![7, 8]), vec![7, 8]),
    ] {
        let item = Item::new("v", values_in.data_type());
        let dataset = grid_dataset(
            2,
            1,
            GeoTransform::north_up(0.0, 1.0, 1.0, 1.0),
            item,
            values_in,
        );
        let (_, back) = round_trip(&dataset);
        assert_eq!(values(&back), &Values::I32(expected));
    }
    let item = Item::new("v", DataType::U32);
    let dataset = grid_dataset(
        2,
        1,
        GeoTransform::north_up(0.0, 1.0, 1.0, 1.0),
        item,
        Values::U32(vec![0, u32::MAX]),
    );
    let (_, back) = round_trip(&dataset);
    assert_eq!(grid_header(&back).items[0].data_type, DataType::F64);
    assert_eq!(values(&back).to_f64(), vec![0.0, 4_294_967_295.0]);
}

#[test]
fn a_centre_header_is_written_as_corners_and_reads_back_to_the_same_geotransform() {
    let folder = Folder::new();
    let input = folder.file(
        "centre.asc",
        b"ncols 2\nnrows 2\nxllcenter 0.1\nyllcenter 0.2\ncellsize 0.3\n1 2\n3 4\n",
    );
    let first = read_path(&input).unwrap();
    let output = folder.path("corner.asc");
    write(&first, &output).unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(
        text.contains("xllcorner") && !text.contains("center"),
        "{text}"
    );
    let second = read_path(&output).unwrap();
    assert_eq!(
        grid_header(&second).geometry.transform,
        grid_header(&first).geometry.transform
    );
}

#[test]
fn rectangular_cells_are_written_as_dx_and_dy_and_a_header_survives_exactly() {
    let folder = Folder::new();
    let original = "ncols 3\nnrows 7\nxllcorner 0.1\nyllcorner 0.1\ndx 0.3\ndy 0.7\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n";
    let input = folder.file("rect.asc", original.as_bytes());
    let first = read_path(&input).unwrap();
    let output = folder.path("rect_out.asc");
    write(&first, &output).unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(
        text.starts_with("ncols         3\nnrows         7\nxllcorner     0.1\nyllcorner     0.1\ndx            0.3\ndy            0.7\n"),
        "{text}"
    );
    let second = read_path(&output).unwrap();
    assert_eq!(
        grid_header(&second).geometry.transform,
        grid_header(&first).geometry.transform
    );
}

#[test]
fn the_writer_writes_a_prj_for_a_known_crs_and_notes_when_it_cannot() {
    let folder = Folder::new();
    let item = Item::new("v", DataType::I32);
    let mut dataset = grid_dataset(
        1,
        1,
        GeoTransform::north_up(500_000.0, 6_000_010.0, 10.0, 10.0),
        item,
        Values::I32(vec![1]),
    );
    let set_crs = |dataset: &mut Dataset, crs: Option<Crs>| {
        let Header::Grid(header) = &mut dataset.header else {
            panic!()
        };
        header.geometry.crs = crs;
    };
    set_crs(&mut dataset, Some(Crs::Epsg(32632)));
    let output = folder.path("utm.asc");
    let written = write(&dataset, &output).unwrap();
    let prj = folder.path("utm.prj");
    assert_eq!(written.files, vec![output.clone(), prj.clone()]);
    let back = read_path(&output).unwrap();
    let crs = grid_header(&back).geometry.crs.clone().unwrap();
    assert_eq!(crs::resolve_epsg(&crs), Some(32632));

    set_crs(&mut dataset, Some(Crs::Wkt(UTM_32N_ESRI.to_owned())));
    write(&dataset, &output).unwrap();
    assert_eq!(std::fs::read_to_string(&prj).unwrap(), UTM_32N_ESRI);

    set_crs(
        &mut dataset,
        Some(Crs::Proj4("+proj=utm +zone=32".to_owned())),
    );
    std::fs::remove_file(&prj).unwrap();
    let written = write(&dataset, &output).unwrap();
    assert_eq!(written.files, vec![output.clone()]);
    assert!(
        written.notes[0].contains("no .prj written"),
        "{:?}",
        written.notes
    );

    set_crs(&mut dataset, None);
    std::fs::write(&prj, "stale").unwrap();
    let written = write(&dataset, &output).unwrap();
    assert!(
        written.notes[0].contains("left as it was"),
        "{:?}",
        written.notes
    );
}

#[test]
fn what_the_format_cannot_hold_is_refused_before_writing() {
    let folder = Folder::new();
    let item = Item::new("v", DataType::F32);
    let base = grid_dataset(
        2,
        2,
        GeoTransform::north_up(0.0, 2.0, 1.0, 1.0),
        item.clone(),
        Values::F32(vec![1.0; 4]),
    );
    let edit = |change: &dyn Fn(&mut GridHeader)| {
        let mut dataset = base.clone();
        let Header::Grid(header) = &mut dataset.header else {
            panic!()
        };
        change(header);
        dataset
    };
    let cases = [
        (
            edit(&|h| h.items.push(Item::new("w", DataType::F32))),
            "one item; this grid has 2 (v, w)",
        ),
        (
            edit(&|h| {
                h.time = TimeAxis::Relative(vec![0.0, 60.0]);
            }),
            "one time step",
        ),
        (
            edit(&|h| {
                h.geometry.vertical = Some(VerticalAxis {
                    origin: 0.0,
                    spacing: 1.0,
                    count: 3,
                });
            }),
            "2D",
        ),
        (
            edit(&|h| h.geometry.transform.row_rotation = 0.5),
            "write it as GeoTIFF, which keeps the rotation",
        ),
        (
            edit(&|h| h.geometry.transform.column_rotation = -0.5),
            "rotated (row rotation 0, column rotation -0.5)",
        ),
        (
            edit(&|h| h.geometry.transform.pixel_height = 0.0),
            "cells of nonzero size",
        ),
        (
            edit(&|h| h.geometry.transform.pixel_width = -1.0),
            "west to east",
        ),
        (
            edit(&|h| h.geometry.transform.origin_x = f64::NAN),
            "cells of nonzero size",
        ),
    ];
    for (dataset, expected) in cases {
        let output = folder.path("refused.asc");
        let mut sink = AsciiGridWriter
            .create(&output, &Parameters::default())
            .unwrap();
        let error = sink.begin(&dataset.header).unwrap_err();
        assert!(matches!(error, FormatError::Incompatible { .. }), "{error}");
        assert!(error.to_string().contains(expected), "{error}");
        assert!(!output.exists());
    }
}

#[test]
fn a_grid_that_ends_early_or_overflows_is_an_error() {
    let folder = Folder::new();
    let item = Item::new("v", DataType::I32);
    let dataset = grid_dataset(
        2,
        2,
        GeoTransform::north_up(0.0, 2.0, 1.0, 1.0),
        item,
        Values::I32(vec![1, 2, 3, 4]),
    );
    let output = folder.path("short.asc");
    let mut sink = AsciiGridWriter
        .create(&output, &Parameters::default())
        .unwrap();
    sink.begin(&dataset.header).unwrap();
    let three = Values::I32(vec![1, 2, 3]);
    sink.frame(Frame {
        step: 0,
        item: 0,
        offset: 0,
        values: &three,
    })
    .unwrap();
    assert!(
        sink.end()
            .unwrap_err()
            .to_string()
            .contains("after 3 of its 4 values")
    );
    let mut sink = AsciiGridWriter
        .create(&output, &Parameters::default())
        .unwrap();
    sink.begin(&dataset.header).unwrap();
    let five = Values::I32(vec![1, 2, 3, 4, 5]);
    let error = sink
        .frame(Frame {
            step: 0,
            item: 0,
            offset: 0,
            values: &five,
        })
        .unwrap_err();
    assert!(error.to_string().contains("more values"), "{error}");
    let error = sink
        .frame(Frame {
            step: 0,
            item: 0,
            offset: 2,
            values: &three,
        })
        .unwrap_err();
    assert!(error.to_string().contains("out of order"), "{error}");
}

#[test]
fn the_catalogue_converts_ascii_grid_to_ascii_grid_with_its_prj() {
    let folder = Folder::new();
    let input = folder.file(
        "in.asc",
        format!("{HEADER}NODATA_value -1\n1 -1 3.25\n4 5 6\n").as_bytes(),
    );
    folder.file("in.prj", UTM_32N_ESRI.as_bytes());
    let output = folder.path("out.asc");
    let written = Catalogue::standard()
        .convert(
            &input,
            &output,
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap();
    assert_eq!(written.files, vec![output.clone(), folder.path("out.prj")]);
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(
        text.ends_with("NODATA_value  -1\n 1.0 -1 3.25\n 4.0 5.0 6.0\n"),
        "{text}"
    );
    assert_eq!(
        read_path(&output).unwrap().data,
        read_path(&input).unwrap().data
    );
    assert_eq!(
        std::fs::read_to_string(folder.path("out.prj")).unwrap(),
        UTM_32N_ESRI
    );
}

// Orientation and the ends of float32's range (issue 11) ---------------------------------------

#[test]
fn a_grid_stored_bottom_row_first_is_written_top_row_first_without_resampling() {
    let folder = Folder::new();
    let mut item = Item::new("v", DataType::I32);
    item.nodata = Some(-9999.0);
    // Rows stored south to north: the first row (1 2 3 4) is the southernmost.
    let south_up = GeoTransform::from_gdal([100.0, 10.0, 0.0, 200.0, 0.0, 10.0]);
    let cells: Vec<i32> = vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -9999];
    let dataset = grid_dataset(4, 3, south_up, item, Values::I32(cells));
    let output = folder.path("flipped.asc");
    let written = write(&dataset, &output).unwrap();
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("south to north")),
        "{:?}",
        written.notes
    );
    let text = std::fs::read_to_string(&output).unwrap();
    assert_eq!(
        text,
        "ncols         4\nnrows         3\nxllcorner     100.0\nyllcorner     200.0\n\
         cellsize      10.0\nNODATA_value  -9999\n 9 10 11 -9999\n 5 6 7 8\n 1 2 3 4\n"
    );
    let back = read_path(&output).unwrap();
    assert_eq!(
        grid_header(&back).geometry.transform.to_gdal(),
        [100.0, 10.0, 0.0, 230.0, 0.0, -10.0]
    );
    assert_eq!(
        values(&back),
        &Values::I32(vec![9, 10, 11, -9999, 5, 6, 7, 8, 1, 2, 3, 4])
    );
}

#[test]
fn a_large_bottom_row_first_grid_is_flipped_through_the_temporary_file() {
    // More text than one buffer, in many frames, so that rows cross flushes.
    let folder = Folder::new();
    let (columns, rows) = (700usize, 90usize);
    let cells: Vec<f64> = (0..columns * rows).map(|i| i as f64 * 0.001).collect();
    let transform = GeoTransform::from_gdal([0.0, 1.0, 0.0, -50.0, 0.0, 0.5]);
    let dataset = grid_dataset(
        columns,
        rows,
        transform,
        Item::new("v", DataType::F64),
        Values::F64(cells.clone()),
    );
    let output = folder.path("big.asc");
    let mut sink = AsciiGridWriter
        .create(&output, &Parameters::default())
        .unwrap();
    sink.begin(&dataset.header).unwrap();
    for (index, chunk) in cells.chunks(997).enumerate() {
        let chunk = Values::F64(chunk.to_vec());
        sink.frame(Frame {
            step: 0,
            item: 0,
            offset: index * 997,
            values: &chunk,
        })
        .unwrap();
    }
    sink.end().unwrap();
    sink.finish().unwrap();
    let back = read_path(&output).unwrap();
    let header = grid_header(&back);
    assert_eq!(
        header.geometry.transform.to_gdal(),
        [0.0, 1.0, 0.0, -5.0, 0.0, -0.5]
    );
    let Values::F64(read) = values(&back) else {
        panic!("Float64 expected")
    };
    for row in 0..rows {
        let expected = &cells[(rows - 1 - row) * columns..(rows - row) * columns];
        assert_eq!(
            &read[row * columns..(row + 1) * columns],
            expected,
            "row {row}"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(folder.dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

/// Writes a one-row Float32 grid with `nodata` and `data` and returns the text and what this
/// reader reads back.
fn float32_round_trip(nodata: f32, data: &[f32]) -> (String, Dataset) {
    let folder = Folder::new();
    let mut item = Item::new("v", DataType::F32);
    item.nodata = Some(f64::from(nodata));
    let dataset = grid_dataset(
        data.len(),
        1,
        GeoTransform::north_up(0.0, 1.0, 1.0, 1.0),
        item,
        Values::F32(data.to_vec()),
    );
    let output = folder.path("limits.asc");
    write(&dataset, &output).unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    let back = read_path(&output).unwrap();
    (text, back)
}

#[test]
fn float32_nodata_at_the_limits_reads_back_as_the_same_float32_grid() {
    let smallest = f32::from_bits(1);
    let data = [1.5, f32::MAX, f32::MIN, smallest, -smallest, -0.0, 0.1];
    let cases: &[(f32, &str)] = &[
        (f32::MIN, "NODATA_value  -3.4028234663852886e38\n"),
        (f32::MAX, "NODATA_value  3.4028234663852886e38\n"),
        (smallest, "NODATA_value  1401298464324817e-60\n"),
        (f32::from_bits(10), "NODATA_value  1401298464324817e-59\n"),
        (-0.0, "NODATA_value  -0\n"),
        (f32::NAN, "NODATA_value  nan\n"),
    ];
    for &(nodata, line) in cases {
        let (text, back) = float32_round_trip(nodata, &data);
        assert!(text.contains(line), "{text}");
        let item = &grid_header(&back).items[0];
        assert_eq!(item.data_type, DataType::F32, "{text}");
        let read_nodata = item.nodata.unwrap();
        assert_eq!(read_nodata.to_bits(), f64::from(nodata).to_bits(), "{text}");
        let Values::F32(read) = values(&back) else {
            panic!("Float32 expected: {text}")
        };
        let bits = |values: &[f32]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(read), bits(&data), "{text}");
    }
}

#[test]
fn float32_values_at_the_limits_keep_their_shortest_form() {
    let smallest = f32::from_bits(1);
    let (text, _) =
        float32_round_trip(-9999.0, &[f32::MAX, f32::MIN, smallest, f32::from_bits(10)]);
    let data = text.lines().last().unwrap();
    assert_eq!(data, " 3.4028235e38 -3.4028235e38 1e-45 1.4e-44");
}

#[test]
fn a_rotated_grid_is_resampled_north_up_on_request_as_gdalwarp_does() {
    let folder = Folder::new();
    let mut item = Item::new("v", DataType::I32);
    item.nodata = Some(-1.0);
    // A quarter turn: x grows down the rows, y along the columns.
    let rotated = GeoTransform::from_gdal([0.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
    let dataset = grid_dataset(2, 2, rotated, item, Values::I32(vec![1, 2, 3, 4]));
    let output = folder.path("rotated.asc");
    let refused = write(&dataset, &output).unwrap_err();
    assert!(
        refused.to_string().contains("RotatedGrids=nearest"),
        "{refused}"
    );
    let parameters = params(
        AsciiGridWriter.spec().parameters,
        &[("RotatedGrids", "nearest")],
    );
    let mut sink = AsciiGridWriter.create(&output, &parameters).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    let written = sink.finish().unwrap();
    assert!(
        written
            .notes
            .iter()
            .any(|note| note.contains("resampled north-up")),
        "{:?}",
        written.notes
    );
    let back = read_path(&output).unwrap();
    assert_eq!(
        grid_header(&back).geometry.transform.to_gdal(),
        [0.0, 1.0, 0.0, 2.0, 0.0, -1.0]
    );
    assert_eq!(values(&back), &Values::I32(vec![2, 4, 1, 3]));
}

#[test]
fn a_rotated_grid_past_the_resampling_limit_is_refused() {
    let folder = Folder::new();
    let rotated = GeoTransform::from_gdal([0.0, 1.0, 0.5, 0.0, 0.5, -1.0]);
    let header = Header::Grid(GridHeader {
        geometry: GridGeometry {
            columns: 1 << 15,
            rows: (1 << 13) + 1,
            vertical: None,
            transform: rotated,
            crs: None,
        },
        items: vec![Item::new("v", DataType::U8)],
        time: TimeAxis::None,
    });
    let parameters = params(
        AsciiGridWriter.spec().parameters,
        &[("RotatedGrids", "nearest")],
    );
    let output = folder.path("huge.asc");
    let mut sink = AsciiGridWriter.create(&output, &parameters).unwrap();
    let error = sink.begin(&header).unwrap_err();
    assert!(
        matches!(error, FormatError::LimitExceeded { .. }),
        "{error}"
    );
    assert!(!output.exists());
}

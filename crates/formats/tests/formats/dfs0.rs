//! DFS0: every corpus file against what MIKE IO reports for it, the writer's bytes against
//! MIKE IO's own files, round trips of values and time axes, the conversions to CSV and VTU,
//! transformations through the catalogue, and the errors.

use std::path::{Path, PathBuf};

use crate::helpers::{corpus, params};

use basin_formats::catalogue::{ReadContext, Reader, Writer, Written};
use basin_formats::csv::CsvWriter;
use basin_formats::dfs::container::DfsFile;
use basin_formats::dfs::dfs0::{Dfs0Reader, Dfs0Writer};
use basin_formats::model::{
    Data, DataType, Dataset, Header, Item, TimeAxis, TimeSeriesHeader, ValueType, Values,
};
use basin_formats::vtu::VtuReader;
use basin_formats::{
    Catalogue, Conversion, FormatError, FormatResult, ItemSelection, ReadLimits, TemporalFilter,
    Transformation,
};
use chrono::NaiveDateTime;
use serde_json::Value as Json;

/// Every .dfs0 file of a corpus folder.
fn dfs0_files(folder: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus(folder, ""))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "dfs0")
        })
        .collect();
    files.sort();
    files
}

const SAMPLES: [&str; 3] = ["ts_eq.dfs0", "ts_eq_double.dfs0", "ts_neq.dfs0"];

/// JSON as MIKE IO's scripts write it (bare `NaN` read as null).
fn json(path: &Path) -> Json {
    crate::helpers::python_json_file(path)
}

fn read_with(path: &Path, raw: &[(&str, &str)]) -> FormatResult<Dataset> {
    let parameters = params(Dfs0Reader.spec().parameters, raw);
    Dataset::collect(|sink| Dfs0Reader.read(path, &parameters, &ReadContext::default(), sink))
}

fn read(path: &Path) -> Dataset {
    read_with(path, &[]).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn series(dataset: &Dataset) -> &TimeSeriesHeader {
    let Header::TimeSeries(series) = &dataset.header else {
        panic!("a time series expected")
    };
    series
}

/// `columns[item][step]` as f64.
fn columns(dataset: &Dataset) -> Vec<Vec<f64>> {
    let Data::Values(steps) = &dataset.data else {
        panic!("values expected")
    };
    let items = series(dataset).items.len();
    (0..items)
        .map(|item| {
            steps
                .iter()
                .map(|step| step[item].get_f64(0).unwrap())
                .collect()
        })
        .collect()
}

fn write_with(dataset: &Dataset, path: &Path, raw: &[(&str, &str)]) -> FormatResult<Written> {
    let parameters = params(Dfs0Writer.spec().parameters, raw);
    let mut sink = Dfs0Writer.create(path, &parameters)?;
    dataset.replay(sink.as_mut())?;
    sink.finish()
}

fn same_number(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// `value` rounded to `data_type` (float32 or float64) and widened again.
fn in_type(value: f64, data_type: DataType) -> f64 {
    if data_type == DataType::F32 {
        f64::from(value as f32)
    } else {
        value
    }
}

fn time(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f"))
        .unwrap_or_else(|_| panic!("{text} is not a time"))
}

fn all_times(axis: &TimeAxis) -> Vec<NaiveDateTime> {
    (0..axis.steps())
        .map(|step| axis.time(step).unwrap())
        .collect()
}

fn value_type_name(value_type: ValueType) -> &'static str {
    match value_type {
        ValueType::Instantaneous => "Instantaneous",
        ValueType::Accumulated => "Accumulated",
        ValueType::StepAccumulated => "StepAccumulated",
        ValueType::MeanStepBackward => "MeanStepBackward",
        ValueType::MeanStepForward => "MeanStepForward",
    }
}

#[test]
fn samples_read_as_mikeio_wrote_them() {
    for name in SAMPLES {
        let path = corpus("dfs-samples", name);
        let expected = json(&corpus("dfs-samples", &format!("{name}.json")));
        let dataset = read(&path);
        let series = series(&dataset);
        let items = expected["items"].as_array().unwrap();
        assert_eq!(series.items.len(), items.len(), "{name}");
        assert_eq!(series.position, None, "{name}");
        for (item, wanted) in series.items.iter().zip(items) {
            check_item(name, item, wanted);
        }
        let times: Vec<NaiveDateTime> = expected["time"]["all"]
            .as_array()
            .unwrap()
            .iter()
            .map(|text| time(text.as_str().unwrap()))
            .collect();
        assert_eq!(all_times(&series.time), times, "{name}");
        match expected["time"]["type"].as_str().unwrap() {
            "CalendarEquidistant" => assert_eq!(
                series.time,
                TimeAxis::Equidistant {
                    start: times[0],
                    step_seconds: expected["time"]["timestep_s"].as_f64().unwrap(),
                    steps: times.len(),
                },
                "{name}"
            ),
            _ => assert!(matches!(series.time, TimeAxis::Calendar(_)), "{name}"),
        }
        for (item, column) in series.items.iter().zip(columns(&dataset)) {
            // The JSON has the numbers given to MIKE IO, float32 items hold them rounded.
            let wanted: Vec<f64> = expected["data"][&item.name]
                .as_array()
                .unwrap()
                .iter()
                .map(|value| value.as_f64().unwrap_or(f64::NAN))
                .map(|value| in_type(value, item.data_type))
                .collect();
            assert_eq!(column.len(), wanted.len(), "{name} {}", item.name);
            for (step, (got, want)) in column.iter().zip(&wanted).enumerate() {
                assert!(
                    same_number(*got, *want),
                    "{name} {} step {step}: {got} read, {want} expected",
                    item.name
                );
            }
        }
        let file = DfsFile::open(&path, &ReadLimits::default()).unwrap();
        let mikecore = &expected["mikecore"];
        assert_eq!(
            i64::from(file.header.file.data_type),
            mikecore["data_type"].as_i64().unwrap()
        );
        assert_eq!(file.header.file.application, mikecore["application_title"]);
    }
}

/// An item read from a sample against the sample's JSON description of it.
fn check_item(name: &str, item: &Item, wanted: &Json) {
    assert_eq!(item.name, wanted["name"], "{name}");
    assert_eq!(
        item.quantity.eum_item,
        wanted["eum_type_code"].as_i64().map(|code| code as i32),
        "{name}"
    );
    assert_eq!(
        item.quantity.eum_unit,
        wanted["eum_unit_code"].as_i64().map(|code| code as i32),
        "{name}"
    );
    assert_eq!(
        value_type_name(item.value_type),
        wanted["data_value_type"],
        "{name}"
    );
    let data_type = match wanted["dtype"].as_str().unwrap() {
        "float32" => DataType::F32,
        "float64" => DataType::F64,
        other => panic!("{other}"),
    };
    assert_eq!(item.data_type, data_type, "{name} {}", item.name);
}

/// "0 days 00:00:56.236909" (a pandas Timedelta) in seconds.
fn timedelta_seconds(text: &str) -> f64 {
    let (days, clock) = text.split_once(" days ").unwrap();
    let parts: Vec<f64> = clock.split(':').map(|part| part.parse().unwrap()).collect();
    days.parse::<f64>().unwrap() * 86_400.0 + parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
}

#[test]
fn mikeio_corpus_files_match_what_mikeio_reports() {
    let files = dfs0_files("mikeio");
    assert_eq!(files.len(), 5);
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let expected = json(&corpus("mikeio", &format!("expected/{name}.json")));
        let dataset = read(&path);
        let series = series(&dataset);
        let steps = expected["n_timesteps"].as_u64().unwrap() as usize;
        assert_eq!(series.time.steps(), steps, "{name}");
        let (start, end) = (
            expected["start_time"].as_str().unwrap(),
            expected["end_time"].as_str().unwrap(),
        );
        match &series.time {
            TimeAxis::Relative(offsets) => {
                assert!(
                    (offsets[0] - timedelta_seconds(start)).abs() < 1e-6,
                    "{name}"
                );
                assert!(
                    (offsets[steps - 1] - timedelta_seconds(end)).abs() < 1e-6,
                    "{name}"
                );
            }
            axis => {
                assert_eq!(axis.time(0), Some(time(start)), "{name}");
                assert_eq!(axis.time(steps - 1), Some(time(end)), "{name}");
            }
        }
        let items = expected["items"].as_array().unwrap();
        assert_eq!(series.items.len(), items.len(), "{name}");
        for ((item, column), wanted) in series.items.iter().zip(columns(&dataset)).zip(items) {
            let label = format!("{name} {}", item.name);
            assert_eq!(item.name, wanted["name"], "{label}");
            assert_eq!(
                item.quantity.eum_item.map(i64::from),
                wanted["type_code"].as_i64(),
                "{label}"
            );
            assert_eq!(
                item.quantity.eum_unit.map(i64::from),
                wanted["unit_code"].as_i64(),
                "{label}"
            );
            let finite: Vec<f64> = column.iter().copied().filter(|v| !v.is_nan()).collect();
            assert_eq!(
                (column.len() - finite.len()) as u64,
                wanted["nan_count"].as_u64().unwrap(),
                "{label}"
            );
            let max = finite.iter().copied().fold(f64::MIN, f64::max);
            let min = finite.iter().copied().fold(f64::MAX, f64::min);
            let sum: f64 = finite.iter().sum();
            // MIKE IO's reading of float32 values as double is not always the exact widening
            // (1.1178265810012815 for the float 1.1178265810012817): compare in the item's type.
            let number = |key: &str| wanted[key].as_f64().map(|v| in_type(v, item.data_type));
            assert_eq!(Some(max), number("max"), "{label}");
            assert_eq!(Some(min), number("min"), "{label}");
            let expected_sum = wanted["sum"].as_f64().unwrap();
            assert!(
                (sum - expected_sum).abs() <= 1e-9 * expected_sum.abs().max(1.0),
                "{label}: sum {sum}, {expected_sum} expected"
            );
            assert_eq!(finite.first().copied(), number("first_finite"), "{label}");
            assert_eq!(finite.last().copied(), number("last_finite"), "{label}");
        }
    }
}

/// Offsets of the two preamble timestamps.
fn is_timestamp(offset: usize) -> bool {
    (0x52..0x5E).contains(&offset) || (0x66..0x72).contains(&offset)
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    (0..a.len()).find(|offset| !is_timestamp(*offset) && a[*offset] != b[*offset])
}

#[test]
fn writing_a_sample_as_mikeio_gives_its_bytes() {
    let folder = tempfile::tempdir().unwrap();
    for name in SAMPLES {
        let path = corpus("dfs-samples", name);
        let expected = json(&corpus("dfs-samples", &format!("{name}.json")));
        let mikecore = &expected["mikecore"];
        let version = mikecore["application_version"].to_string();
        let output = folder.path().join(name);
        write_with(
            &read(&path),
            &output,
            &[
                ("Title", mikecore["file_title"].as_str().unwrap()),
                (
                    "ApplicationTitle",
                    mikecore["application_title"].as_str().unwrap(),
                ),
                ("ApplicationVersion", &version),
            ],
        )
        .unwrap();
        let original = std::fs::read(&path).unwrap();
        let written = std::fs::read(&output).unwrap();
        assert_eq!(
            first_difference(&original, &written),
            None,
            "{name}: {} bytes written, {} in the sample",
            written.len(),
            original.len()
        );
    }
}

#[test]
fn the_writer_names_basin_unless_told_otherwise() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.dfs0");
    write_with(
        &read(&corpus("dfs-samples", "ts_eq.dfs0")),
        &output,
        &[("Title", "Gauge 7")],
    )
    .unwrap();
    let file = DfsFile::open(&output, &ReadLimits::default()).unwrap();
    assert_eq!(file.header.file.title, "Gauge 7");
    assert_eq!(file.header.file.application, "Basin");
    assert_eq!(
        file.header.file.application_version,
        basin_formats::dfs::mapping::basin_application_version()
    );
    assert_eq!(file.header.file.statistics_type, 2);
    assert_eq!(file.header.file.data_type, 1);
    let too_large = params(
        Dfs0Writer.spec().parameters,
        &[("ApplicationVersion", "4294967296")],
    );
    let error = Dfs0Writer.create(&output, &too_large).err().unwrap();
    assert!(error.to_string().contains("ApplicationVersion"), "{error}");
}

/// Every DFS0 of the corpus written and read again: the same items, types, time axis and
/// values, bit for bit (NaN where NaN was).
#[test]
fn every_corpus_file_round_trips() {
    let folder = tempfile::tempdir().unwrap();
    let mut files = dfs0_files("dfs-samples");
    files.extend(dfs0_files("mikeio"));
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let original = read(&path);
        let output = folder.path().join(name);
        write_with(&original, &output, &[]).unwrap();
        let again = read(&output);
        assert_eq!(series(&again).items, series(&original).items, "{name}");
        assert_eq!(series(&again).time, series(&original).time, "{name}");
        let (Data::Values(a), Data::Values(b)) = (&original.data, &again.data) else {
            panic!()
        };
        assert_eq!(a.len(), b.len(), "{name}");
        for (step, (a, b)) in a.iter().zip(b).enumerate() {
            for (item, (a, b)) in a.iter().zip(b).enumerate() {
                assert_eq!(a.data_type(), b.data_type(), "{name}");
                assert!(
                    same_number(a.get_f64(0).unwrap(), b.get_f64(0).unwrap()),
                    "{name} step {step} item {item}"
                );
            }
        }
    }
}

#[test]
fn time_axes_keep_their_kind_and_numbers() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("out.dfs0");
    // Relative equidistant stays relative equidistant with the same step.
    write_with(&read(&corpus("mikeio", "eq_relative.dfs0")), &output, &[]).unwrap();
    let time = DfsFile::open(&output, &ReadLimits::default())
        .unwrap()
        .header
        .file
        .time;
    assert_eq!(time.kind.name(), "TimeEquidistant");
    assert_eq!(
        (time.start_offset, time.step_or_span, time.steps),
        (0.0, 0.111803, 504)
    );
    // A calendar axis in days is written in seconds, at the same times.
    let days = read(&corpus("mikeio", "neq_daily_time_unit.dfs0"));
    write_with(&days, &output, &[]).unwrap();
    let time = DfsFile::open(&output, &ReadLimits::default())
        .unwrap()
        .header
        .file
        .time;
    assert_eq!(
        (time.kind.name(), time.unit),
        ("CalendarNonEquidistant", 1400)
    );
    assert_eq!(series(&read(&output)).time, series(&days).time);
    // A start with milliseconds keeps them in the start offset; a fractional step stays.
    let start = time_ms("2021-03-04T05:06:07.250");
    let dataset = one_item_series(TimeAxis::Equidistant {
        start,
        step_seconds: 0.5,
        steps: 3,
    });
    write_with(&dataset, &output, &[]).unwrap();
    let record = DfsFile::open(&output, &ReadLimits::default())
        .unwrap()
        .header
        .file
        .time;
    assert_eq!(record.start.unwrap().1, "05:06:07");
    assert_eq!((record.start_offset, record.step_or_span), (0.25, 0.5));
    assert_eq!(series(&read(&output)).time, series(&dataset).time);
    // Non-equidistant calendar times, and relative ones, come back as they were.
    for axis in [
        TimeAxis::Calendar(vec![
            start,
            time_ms("2021-03-04T05:06:08.000"),
            time_ms("2021-03-05T00:00:00.001"),
        ]),
        TimeAxis::Relative(vec![-3.5, 0.0, 1e6]),
        TimeAxis::Relative(vec![10.0, 20.0, 30.0]),
        TimeAxis::Relative(vec![5.0]),
    ] {
        let dataset = one_item_series(axis.clone());
        write_with(&dataset, &output, &[]).unwrap();
        assert_eq!(series(&read(&output)).time, axis);
    }
}

fn time_ms(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").unwrap()
}

/// One Float64 item "level" with values 0, 1, ... (NaN at step 1) over `time`.
fn one_item_series(time: TimeAxis) -> Dataset {
    let steps = time.steps();
    Dataset {
        header: Header::TimeSeries(TimeSeriesHeader {
            items: vec![Item::new("level", DataType::F64)],
            time,
            position: None,
        }),
        data: Data::Values(
            (0..steps)
                .map(|step| {
                    let value = if step == 1 { f64::NAN } else { step as f64 };
                    vec![Values::F64(vec![value])]
                })
                .collect(),
        ),
    }
}

#[test]
fn a_position_becomes_every_items_reference_coordinates_and_back() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("station.dfs0");
    let mut dataset = read(&corpus("dfs-samples", "ts_eq.dfs0"));
    let Header::TimeSeries(series_header) = &mut dataset.header else {
        panic!()
    };
    series_header.position = Some([512_000.5, 6_200_000.0, -2.0]);
    write_with(&dataset, &output, &[]).unwrap();
    let file = DfsFile::open(&output, &ReadLimits::default()).unwrap();
    for item in &file.header.items {
        assert_eq!(item.reference, [512_000.5, 6_200_000.0, -2.0]);
    }
    assert_eq!(
        series(&read(&output)).position,
        Some([512_000.5, 6_200_000.0, -2.0])
    );
}

#[test]
fn allowed_item_names_select_items() {
    let path = corpus("mikeio", "untitled_3_items.dfs0");
    // The file names all three "Untitled"; they read as MIKE IO names them.
    let names: Vec<String> = series(&read(&path))
        .items
        .iter()
        .map(|item| item.name.clone())
        .collect();
    assert_eq!(names, ["Untitled", "Untitled_2", "Untitled_3"]);
    let dataset = read_with(&path, &[("AllowedItemNames", "untitled_3, Untitled")]).unwrap();
    let names: Vec<&str> = series(&dataset)
        .items
        .iter()
        .map(|item| item.name.as_str())
        .collect();
    assert_eq!(names, ["Untitled", "Untitled_3"]);
    let all = columns(&read(&path));
    assert_eq!(
        format!("{:?}", columns(&dataset)),
        format!("{:?}", [&all[0], &all[2]])
    );
    let error = read_with(&path, &[("AllowedItemNames", "Rain")]).unwrap_err();
    assert!(matches!(error, FormatError::Parameter { .. }), "{error}");
    assert!(error.to_string().contains("\"Rain\""), "{error}");
}

fn convert(
    input: &Path,
    output: &Path,
    writer_parameters: &[(String, String)],
    transformations: &[Transformation],
) -> FormatResult<Written> {
    Catalogue::standard().convert(
        input,
        output,
        &Conversion {
            writer_parameters,
            transformations,
            ..Conversion::default()
        },
        &ReadContext::default(),
    )
}

#[test]
fn filters_apply_through_the_catalogue() {
    let folder = tempfile::tempdir().unwrap();
    let input = corpus("dfs-samples", "ts_neq.dfs0");
    let output = folder.path().join("filtered.dfs0");
    let transformations = [
        Transformation::ItemFilter(ItemSelection {
            indices: Vec::new(),
            names: vec!["Temp".to_owned()],
        }),
        Transformation::TemporalFilter(TemporalFilter::IndexRange {
            from: Some(2),
            to: Some(4),
        }),
    ];
    let written = convert(&input, &output, &[], &transformations).unwrap();
    assert_eq!(written.files, vec![output.clone()]);
    let original = read(&input);
    let filtered = read(&output);
    let names: Vec<&str> = series(&filtered)
        .items
        .iter()
        .map(|item| item.name.as_str())
        .collect();
    assert_eq!(names, ["Temp"]);
    assert_eq!(
        columns(&filtered),
        vec![columns(&original)[1][2..=4].to_vec()]
    );
    assert_eq!(
        all_times(&series(&filtered).time),
        all_times(&series(&original).time)[2..=4].to_vec()
    );
    // A time range on an equidistant axis stays equidistant from the first step kept.
    let input = corpus("dfs-samples", "ts_eq.dfs0");
    let transformations = [Transformation::TemporalFilter(TemporalFilter::TimeRange {
        from: Some(time("2024-01-15T07:00:00")),
        to: Some(time("2024-01-15T08:00:00")),
    })];
    convert(&input, &output, &[], &transformations).unwrap();
    let filtered = read(&output);
    assert_eq!(
        all_times(&series(&filtered).time),
        [
            time("2024-01-15T07:00:00"),
            time("2024-01-15T07:30:00"),
            time("2024-01-15T08:00:00")
        ]
    );
    assert!(same_number(columns(&filtered)[1][1], f64::NAN));
}

#[test]
fn csv_holds_the_times_and_shortest_values() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("series.csv");
    convert(&corpus("dfs-samples", "ts_eq.dfs0"), &output, &[], &[]).unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 11);
    assert_eq!(lines[0], "time,WaterLevel,Discharge");
    assert_eq!(lines[1], "2024-01-15T06:00:00,0.5,-1.0");
    assert_eq!(lines[4], "2024-01-15T07:30:00,2.0,");
    assert_eq!(lines[10], "2024-01-15T10:30:00,5.0,1.25");
    // Values read back bit for bit in their own type.
    let original = read(&corpus("dfs-samples", "ts_neq.dfs0"));
    convert(&corpus("dfs-samples", "ts_neq.dfs0"), &output, &[], &[]).unwrap();
    let text = std::fs::read_to_string(&output).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|line| line.split(',').collect())
        .collect();
    let expected = columns(&original);
    for (step, row) in rows.iter().enumerate() {
        assert_eq!(series(&original).time.time(step).unwrap(), time(row[0]));
        for item in 0..2 {
            let value: f32 = row[item + 1].parse().unwrap();
            assert_eq!(f64::from(value), expected[item][step]);
        }
    }
    // Relative times in seconds, a semicolon separator and a quoted name.
    let mut dataset = one_item_series(TimeAxis::Relative(vec![0.0, 0.111803, 0.5]));
    let Header::TimeSeries(header) = &mut dataset.header else {
        panic!()
    };
    header.items[0].name = "level; \"max\"".to_owned();
    let parameters = params(CsvWriter.spec().parameters, &[("Separator", "semicolon")]);
    let mut sink = CsvWriter.create(&output, &parameters).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap();
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "time;\"level; \"\"max\"\"\"\n0.0;0.0\n0.111803;\n0.5;2.0\n"
    );
    let parameters = params(CsvWriter.spec().parameters, &[("Separator", "tab")]);
    let mut sink = CsvWriter.create(&output, &parameters).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap();
    assert!(
        std::fs::read_to_string(&output)
            .unwrap()
            .starts_with("time\t\"level; \"\"max\"\"\"\n0.0\t0.0\n")
    );
}

#[test]
fn vtu_gets_one_node_per_step_with_the_items() {
    let folder = tempfile::tempdir().unwrap();
    let output = folder.path().join("series.pvd");
    let written = convert(&corpus("dfs-samples", "ts_eq.dfs0"), &output, &[], &[]).unwrap();
    assert_eq!(written.files.len(), 11, "{:?}", written.files);
    let original = columns(&read(&corpus("dfs-samples", "ts_eq.dfs0")));
    let parameters = params(VtuReader.spec().parameters, &[]);
    for (step, expected_level) in original[0].iter().enumerate() {
        let path = folder
            .path()
            .join("series")
            .join(format!("series_{step:04}.vtu"));
        let dataset = Dataset::collect(|sink| {
            VtuReader.read(&path, &parameters, &ReadContext::default(), sink)
        })
        .unwrap();
        let Header::Mesh(mesh) = &dataset.header else {
            panic!()
        };
        assert_eq!(mesh.geometry.nodes.x, [0.0]);
        assert_eq!(mesh.geometry.elements.len(), 1);
        let names: Vec<&str> = mesh.items.iter().map(|item| item.name.as_str()).collect();
        assert!(
            names.contains(&"WaterLevel") && names.contains(&"Discharge"),
            "{names:?}"
        );
        let Data::Values(steps) = &dataset.data else {
            panic!()
        };
        let level = names.iter().position(|name| *name == "WaterLevel").unwrap();
        assert_eq!(steps[0][level].get_f64(0), Some(*expected_level));
    }
}

#[test]
fn broken_files_are_errors_naming_the_place() {
    let folder = tempfile::tempdir().unwrap();
    let original = std::fs::read(corpus("dfs-samples", "ts_eq.dfs0")).unwrap();
    let broken = folder.path().join("broken.dfs0");
    let error_of = |bytes: &[u8]| {
        std::fs::write(&broken, bytes).unwrap();
        read_with(&broken, &[]).unwrap_err().to_string()
    };
    // Truncated in the header, and in the data.
    let error = error_of(&original[..200]);
    assert!(error.contains("invalid DFS input"), "{error}");
    let error = error_of(&original[..original.len() - 3]);
    assert!(error.contains("10 time steps"), "{error}");
    // A header announcing more steps than the data holds.
    let steps_at = find(&original, &[4, 2, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0]) + 5;
    let mut more = original.clone();
    more[steps_at] = 11;
    let error = error_of(&more);
    assert!(
        error.contains("11 time steps") && error.contains("10 complete"),
        "{error}"
    );
    // An unknown header block (the title's tag 10001 changed to 10099).
    let title_at = find(&original, &[0xFE, 0x11, 0x27]);
    let mut unknown = original.clone();
    unknown[title_at + 1] = 0x73;
    let error = error_of(&unknown);
    assert!(error.contains("unknown header block 10099"), "{error}");
    // Not a DFS file at all.
    let error = error_of(b"time,level\n");
    assert!(error.contains("DFS"), "{error}");
    // A grid file is no DFS0.
    let error = read_with(&corpus("dfs-samples", "grid_utm32.dfs2"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("one value per time step") && error.contains("EqD2"),
        "{error}"
    );
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
        .unwrap()
}

#[test]
fn writers_refuse_what_is_not_a_time_series() {
    let folder = tempfile::tempdir().unwrap();
    let grid = crate::helpers::grid(&["depth"], TimeAxis::None);
    for (writer, name) in [
        (&Dfs0Writer as &dyn Writer, "out.dfs0"),
        (&CsvWriter as &dyn Writer, "out.csv"),
    ] {
        let parameters = params(writer.spec().parameters, &[]);
        let mut sink = writer
            .create(&folder.path().join(name), &parameters)
            .unwrap();
        let error = grid.replay(sink.as_mut()).unwrap_err();
        assert!(matches!(error, FormatError::Incompatible { .. }), "{error}");
    }
    // The catalogue does not offer the pair.
    let error = Catalogue::standard()
        .convert(
            &crate::helpers::fixture("geotiff", "jpeg_gray_strips.tif"),
            &folder.path().join("grid.dfs0"),
            &Conversion::default(),
            &ReadContext::default(),
        )
        .unwrap_err();
    assert!(
        error.to_string().contains("cannot feed Dfs0Writer"),
        "{error}"
    );
    assert!(!folder.path().join("grid.dfs0").exists());
    // Several values in one frame.
    let mut wide = one_item_series(TimeAxis::Relative(vec![0.0]));
    wide.data = Data::Values(vec![vec![Values::F64(vec![1.0, 2.0])]]);
    for (writer, name) in [
        (&Dfs0Writer as &dyn Writer, "wide.dfs0"),
        (&CsvWriter as &dyn Writer, "wide.csv"),
    ] {
        let parameters = params(writer.spec().parameters, &[]);
        let mut sink = writer
            .create(&folder.path().join(name), &parameters)
            .unwrap();
        let error = wide.replay(sink.as_mut()).unwrap_err();
        assert!(error.to_string().contains("2 values at step 0"), "{error}");
    }
}

#[test]
fn a_series_without_items_keeps_its_steps() {
    let folder = tempfile::tempdir().unwrap();
    let dataset = Dataset {
        header: Header::TimeSeries(TimeSeriesHeader {
            items: Vec::new(),
            time: TimeAxis::Relative(vec![0.0, 2.0, 5.0]),
            position: None,
        }),
        data: Data::Values(Vec::new()),
    };
    let output = folder.path().join("empty.dfs0");
    write_with(&dataset, &output, &[]).unwrap();
    let again = read(&output);
    assert_eq!(series(&again).time, TimeAxis::Relative(vec![0.0, 2.0, 5.0]));
    let csv = folder.path().join("empty.csv");
    let parameters = params(CsvWriter.spec().parameters, &[]);
    let mut sink = CsvWriter.create(&csv, &parameters).unwrap();
    dataset.replay(sink.as_mut()).unwrap();
    sink.finish().unwrap();
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "time\n0.0\n2.0\n5.0\n"
    );
}

#[test]
fn a_dfs0_appends_to_a_dfs0_through_the_catalogue() {
    let folder = tempfile::tempdir().unwrap();
    let existing = corpus("dfs-samples", "ts_eq.dfs0");
    let mut later = read(&existing);
    let Header::TimeSeries(header) = &mut later.header else {
        panic!()
    };
    header.time = TimeAxis::Equidistant {
        start: time("2024-01-15T11:00:00"),
        step_seconds: 1800.0,
        steps: 10,
    };
    let addition = folder.path().join("later.dfs0");
    write_with(&later, &addition, &[]).unwrap();
    let output = folder.path().join("both.dfs0");
    Catalogue::standard()
        .append(
            &existing,
            &addition,
            &output,
            &basin_formats::Append::default(),
            &ReadContext::default(),
        )
        .unwrap();
    let both = read(&output);
    assert_eq!(
        series(&both).time,
        TimeAxis::Equidistant {
            start: time("2024-01-15T06:00:00"),
            step_seconds: 1800.0,
            steps: 20,
        }
    );
    let first = columns(&read(&existing));
    let joined = columns(&both);
    for (item, column) in first.iter().enumerate() {
        let twice: Vec<f64> = column.iter().chain(column).copied().collect();
        assert_eq!(format!("{:?}", joined[item]), format!("{twice:?}"));
    }
}

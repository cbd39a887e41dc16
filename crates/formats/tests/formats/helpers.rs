//! What several format test modules share: fixture paths, parameter sets, and small
//! in-memory datasets for the transformation and append tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use basin_formats::crs::Crs;
use basin_formats::model::{
    Data, DataType, Dataset, ElementKind, Elements, GeoTransform, GridGeometry, GridHeader, Header,
    Item, MeshGeometry, MeshHeader, Nodes, TimeAxis, TimeSeriesHeader, Values,
};
use basin_formats::{ParameterSpec, Parameters};
use chrono::NaiveDateTime;

/// A file of `tests/fixtures/<folder>/`.
pub(crate) fn fixture(folder: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(folder)
        .join(name)
}

/// A temporary folder for files a test writes.
pub(crate) struct Folder {
    pub(crate) dir: tempfile::TempDir,
}

impl Folder {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes `content` to `name` in the folder.
    pub(crate) fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    /// The path of `name` in the folder.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// The parameters `raw` checked against `specs`, as a reader or writer gets them.
pub(crate) fn params(specs: &'static [ParameterSpec], raw: &[(&str, &str)]) -> Parameters {
    let raw: Vec<(String, String)> = raw
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    Parameters::validate(specs, &raw).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Small in-memory datasets whose values say where they came from, for the transformation and
// append tests: the value of item `i` at step `s`, cell `c` is `marker(s, i, c)`.

/// `step * 100 + item * 10 + cell`.
pub(crate) fn marker(step: usize, item: usize, cell: usize) -> f32 {
    (step * 100 + item * 10 + cell) as f32
}

/// A time such as `2020-01-01T00:00:00`.
pub(crate) fn at(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").unwrap()
}

/// `steps` hourly steps from `start`.
pub(crate) fn hourly(start: &str, steps: usize) -> TimeAxis {
    TimeAxis::Equidistant {
        start: at(start),
        step_seconds: 3600.0,
        steps,
    }
}

fn marked_values(steps: usize, items: usize, cells: usize) -> Data {
    Data::Values(
        (0..steps)
            .map(|step| {
                (0..items)
                    .map(|item| {
                        Values::F32((0..cells).map(|cell| marker(step, item, cell)).collect())
                    })
                    .collect()
            })
            .collect(),
    )
}

/// A 2 x 2 grid in EPSG:32632 with Float32 items named `items` over `time`.
pub(crate) fn grid(items: &[&str], time: TimeAxis) -> Dataset {
    let steps = time.steps();
    Dataset {
        header: Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns: 2,
                rows: 2,
                vertical: None,
                transform: GeoTransform::north_up(500_000.0, 6_200_000.0, 10.0, 10.0),
                crs: Some(Crs::Epsg(32632)),
            },
            items: items
                .iter()
                .map(|name| Item::new(*name, DataType::F32))
                .collect(),
            time,
        }),
        data: marked_values(steps, items.len(), 4),
    }
}

/// A mesh of two triangles on four nodes, with Float32 element items named `items` over `time`.
pub(crate) fn mesh(items: &[&str], time: TimeAxis) -> Dataset {
    let mut elements = Elements::default();
    elements.push(1, ElementKind::Triangle, &[0, 1, 2]);
    elements.push(2, ElementKind::Triangle, &[0, 2, 3]);
    let geometry = MeshGeometry {
        nodes: Nodes {
            ids: vec![1, 2, 3, 4],
            x: vec![0.0, 10.0, 10.0, 0.0],
            y: vec![0.0, 0.0, 10.0, 10.0],
            z: vec![-1.0, -2.0, -3.0, -4.0],
            codes: vec![1, 1, 1, 1],
        },
        elements,
        crs: Some(Crs::Epsg(25832)),
        ..MeshGeometry::default()
    };
    let steps = time.steps();
    Dataset {
        header: Header::Mesh(MeshHeader {
            geometry: Arc::new(geometry),
            items: items
                .iter()
                .map(|name| Item::new(*name, DataType::F32))
                .collect(),
            time,
        }),
        data: marked_values(steps, items.len(), 2),
    }
}

/// A time series of Float32 items named `items` over `time`.
pub(crate) fn series(items: &[&str], time: TimeAxis) -> Dataset {
    let steps = time.steps();
    Dataset {
        header: Header::TimeSeries(TimeSeriesHeader {
            items: items
                .iter()
                .map(|name| Item::new(*name, DataType::F32))
                .collect(),
            time,
            position: None,
        }),
        data: marked_values(steps, items.len(), 1),
    }
}

/// The values of a grid, mesh or time series: `steps[step][item]`.
pub(crate) fn steps_of(dataset: &Dataset) -> &Vec<Vec<Values>> {
    let Data::Values(steps) = &dataset.data else {
        panic!("values expected")
    };
    steps
}

/// The items and time axis of a grid, mesh or time series.
pub(crate) fn items_and_time(dataset: &Dataset) -> (Vec<String>, TimeAxis) {
    let (items, time) = dataset.header.items_and_time().unwrap();
    (
        items.iter().map(|item| item.name.clone()).collect(),
        time.clone(),
    )
}

/// Checks that `step` and `item` of `dataset` hold the markers of `source_step` and
/// `source_item`.
pub(crate) fn assert_marked(
    dataset: &Dataset,
    (step, item): (usize, usize),
    (source_step, source_item): (usize, usize),
) {
    let values = steps_of(dataset)[step][item].to_f64();
    let expected: Vec<f64> = (0..values.len())
        .map(|cell| f64::from(marker(source_step, source_item, cell)))
        .collect();
    assert_eq!(
        values, expected,
        "step {step} item {item} should come from step {source_step} item {source_item}"
    );
}

/// Python's JSON as JSON: its `NaN`, `Infinity` and `-Infinity` (sample values, outside
/// strings) as `null`.
pub(crate) fn python_json(text: &str) -> String {
    let mut json = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = text.chars();
    while let Some(char) = chars.clone().next() {
        let rest = chars.as_str();
        let word = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find_map(|word| rest.strip_prefix(word));
        if let (false, Some(after)) = (in_string, word) {
            json.push_str("null");
            chars = after.chars();
            continue;
        }
        if in_string {
            in_string = escaped || char != '"';
            escaped = !escaped && char == '\\';
        } else {
            in_string = char == '"';
        }
        json.push(char);
        chars.next();
    }
    json
}

/// A JSON file written by Python (the DFS samples' sidecars, MIKE IO summaries), its `NaN`
/// and infinities read as null.
pub(crate) fn python_json_file(path: &std::path::Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&python_json(&text))
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A file of the repository's corpus of real files, `tests/corpus/<source>/<name>` (`name`
/// may be empty for the folder itself).
pub(crate) fn corpus(source: &str, name: &str) -> std::path::PathBuf {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus")
        .join(source);
    if name.is_empty() {
        folder
    } else {
        folder.join(name)
    }
}

//! Position queries on a large DFSU: 199,712 triangles (a 316 x 316 grid of 50 m cells, two
//! triangles each), 4 float items, 160 steps, about 512 MB. A query asks one item at one
//! point over every step: read where the values lie (160 reads of 4 bytes), or streamed
//! through the DFSU reader (160 item-steps of 800 KB), and the whole query as the server
//! answers it (parse, locate, read directly, CoverageJSON). Warm: the file is in the page
//! cache after the first sample. Describing the file (header, mesh index, value layout) is
//! measured too, as the one-off cost a cache of descriptions saves, with the part of it that
//! finds where the values lie.
//!
//! The file is written once by basin-formats' DFSU writer into Cargo's target tmp folder and
//! kept for later runs. Run with `cargo bench -p basin-edr --bench position`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use basin_edr::position::PositionQuery;
use basin_edr::read::{Selection, pick_direct, pick_streaming};
use basin_edr::{Dataset, Limits, covjson};
use basin_formats::model::{
    DataType, ElementKind, Elements, Frame, Header, Item, MeshGeometry, MeshHeader, Nodes,
    TimeAxis, Values,
};
use basin_formats::{Catalogue, Parameters};
use chrono::NaiveDate;

/// Nodes per side.
const SIDE: u32 = 317;
const CELL_M: f64 = 50.0;
const ITEMS: usize = 4;
const STEPS: usize = 160;
/// The point asked for: inside the mesh, away from its nodes and edges.
const POINT: (f64, f64) = (507_912.5, 6_104_437.5);

fn main() {
    divan::main();
}

fn geometry() -> MeshGeometry {
    let mut nodes = Nodes::default();
    for row in 0..SIDE {
        for column in 0..SIDE {
            nodes.ids.push(i64::from(row * SIDE + column) + 1);
            nodes.x.push(500_000.0 + CELL_M * f64::from(column));
            nodes.y.push(6_100_000.0 + CELL_M * f64::from(row));
            nodes.z.push(-10.0);
            nodes.codes.push(0);
        }
    }
    let mut elements = Elements::default();
    let mut id = 0;
    for row in 0..SIDE - 1 {
        for column in 0..SIDE - 1 {
            let a = row * SIDE + column;
            let (b, c, d) = (a + 1, a + SIDE + 1, a + SIDE);
            id += 1;
            elements.push(id, ElementKind::Triangle, &[a, b, c]);
            id += 1;
            elements.push(id, ElementKind::Triangle, &[a, c, d]);
        }
    }
    MeshGeometry {
        nodes,
        elements,
        ..MeshGeometry::default()
    }
}

/// Writes the file with the catalogue's DFSU writer, one step at a time.
fn write(path: &Path) {
    let geometry = geometry();
    let elements = geometry.elements.len();
    let header = Header::Mesh(MeshHeader {
        geometry: Arc::new(geometry),
        items: (0..ITEMS)
            .map(|item| Item::new(format!("Item {item}"), DataType::F32))
            .collect(),
        time: TimeAxis::Equidistant {
            start: NaiveDate::from_ymd_opt(2024, 1, 1)
                .and_then(|day| day.and_hms_opt(0, 0, 0))
                .unwrap(),
            step_seconds: 1800.0,
            steps: STEPS,
        },
    });
    let catalogue = Catalogue::standard();
    let writer = catalogue.writer("DfsuWriter").unwrap();
    let parameters = Parameters::validate(writer.spec().parameters, &[]).unwrap();
    let mut sink = writer.create(path, &parameters).unwrap();
    sink.begin(&header).unwrap();
    for step in 0..STEPS {
        for item in 0..ITEMS {
            let values = Values::F32(
                (0..elements)
                    .map(|element| (step * 10 + item) as f32 + element as f32 * 1e-3)
                    .collect(),
            );
            let frame = Frame {
                step,
                item,
                offset: 0,
                values: &values,
            };
            sink.frame(frame).unwrap();
        }
    }
    sink.end().unwrap();
    sink.finish().unwrap();
}

/// The file, written on first use, and its description.
fn described() -> &'static (PathBuf, Dataset) {
    static FILE: OnceLock<(PathBuf, Dataset)> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("edr-position-200k.dfsu");
        let catalogue = Catalogue::standard();
        let reusable = Dataset::describe(&catalogue, ".dfsu", &path)
            .is_ok_and(|dataset| dataset.items.len() == ITEMS && dataset.time.steps() == STEPS);
        if !reusable {
            write(&path);
        }
        let dataset = Dataset::describe(&catalogue, ".dfsu", &path).unwrap();
        let bytes = std::fs::metadata(&path).unwrap().len();
        eprintln!("{}: {bytes} bytes", path.display());
        (path, dataset)
    })
}

/// One item at the point, every step.
fn selection(dataset: &Dataset) -> Selection {
    let location = dataset.locate(POINT.0, POINT.1).unwrap();
    Selection {
        items: vec![2],
        steps: (0..STEPS).collect(),
        targets: vec![vec![dataset.value_index(2, location, POINT, 0)]],
    }
}

#[divan::bench]
fn read_directly(bencher: divan::Bencher<'_, '_>) {
    let (path, dataset) = described();
    let selection = selection(dataset);
    bencher.bench(|| pick_direct(dataset, path, &selection).unwrap().unwrap());
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn read_streaming(bencher: divan::Bencher<'_, '_>) {
    let (path, dataset) = described();
    let selection = selection(dataset);
    let catalogue = Catalogue::standard();
    bencher.bench(|| pick_streaming(&catalogue, dataset, path, &selection).unwrap());
}

#[divan::bench]
fn whole_query(bencher: divan::Bencher<'_, '_>) {
    let (path, dataset) = described();
    let catalogue = Catalogue::standard();
    let limits = Limits::default();
    let coords = format!("POINT({} {})", POINT.0, POINT.1);
    bencher.bench(|| {
        let query =
            PositionQuery::parse(Some(&coords), None, Some("Item 2"), None, &limits).unwrap();
        let answer = query.answer(&catalogue, dataset, path, &limits).unwrap();
        covjson::write(&answer)
    });
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn describe(bencher: divan::Bencher<'_, '_>) {
    let (path, _) = described();
    let catalogue = Catalogue::standard();
    bencher.bench(|| Dataset::describe(&catalogue, ".dfsu", path).unwrap());
}

/// The part of describing the file that finds where its values lie (the header read again).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn describe_value_layout(bencher: divan::Bencher<'_, '_>) {
    let (path, _) = described();
    bencher.bench(|| {
        basin_formats::dfs::container::DfsFile::open(path, &basin_formats::ReadLimits::default())
            .unwrap()
            .value_layout()
    });
}

//! Mesh tile costs on a 1,002,528-triangle mesh: building the index, deriving node values
//! from element values, and sampling 256 x 256 pixel centres flat and smooth, over the whole
//! mesh (each pixel in another element, about 15 elements per pixel) and zoomed in (about 11
//! pixels per element). Element sizes vary tenfold across the mesh, as in real MIKE meshes.
//! Run with `cargo bench -p basin-tiles --bench mesh`; crates/tiles/src/mesh/mod.rs quotes
//! the numbers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, OnceLock};

use basin_formats::model::{ElementKind, Elements, MeshGeometry, Nodes};
use basin_tiles::Field;
use basin_tiles::mesh::{MeshField, MeshIndex, Shading, ValueLocation};
use basin_tiles::tms::Bounds;

/// Nodes per side: 708 x 708 cells, two triangles each.
const SIDE: u32 = 709;
const WIDTH_M: f64 = 100_000.0;

fn main() {
    divan::main();
}

/// Stretches [0, 1] so cells grow tenfold from one side to the other.
fn stretch(t: f64) -> f64 {
    (t + 3.0 * t * t * t) / 4.0
}

fn geometry() -> &'static MeshGeometry {
    static GEOMETRY: OnceLock<MeshGeometry> = OnceLock::new();
    GEOMETRY.get_or_init(|| {
        let cell = 1.0 / f64::from(SIDE - 1);
        let mut nodes = Nodes::default();
        for row in 0..SIDE {
            for column in 0..SIDE {
                // A deterministic wobble of up to a fifth of a cell inside the mesh.
                let hash = (row.wrapping_mul(73_856_093) ^ column.wrapping_mul(19_349_663)) % 1000;
                let inner = row > 0 && column > 0 && row < SIDE - 1 && column < SIDE - 1;
                let wobble = if inner {
                    (f64::from(hash) / 1000.0 - 0.5) * 0.4
                } else {
                    0.0
                };
                let u = (f64::from(column) + wobble) * cell;
                let v = (f64::from(row) - wobble) * cell;
                nodes.ids.push(i64::from(row * SIDE + column) + 1);
                nodes.x.push(500_000.0 + WIDTH_M * stretch(u));
                nodes.y.push(6_000_000.0 + WIDTH_M * stretch(v));
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
    })
}

fn index() -> Arc<MeshIndex> {
    static INDEX: OnceLock<Arc<MeshIndex>> = OnceLock::new();
    INDEX
        .get_or_init(|| Arc::new(MeshIndex::build(geometry()).unwrap()))
        .clone()
}

fn element_values() -> Arc<[f32]> {
    let geometry = geometry();
    (0..geometry.elements.len())
        .map(|element| {
            let nodes = geometry.elements.nodes(element).unwrap();
            let x = geometry.nodes.x[nodes[0] as usize];
            let y = geometry.nodes.y[nodes[0] as usize];
            (40.0 * (x / 3000.0).sin() + 25.0 * (y / 4500.0).cos()) as f32
        })
        .collect()
}

/// The pixel centres of a 256 x 256 tile over `bounds`.
fn pixel_centres(bounds: Bounds) -> Vec<[f64; 2]> {
    let size = bounds.width() / 256.0;
    (0..256 * 256)
        .map(|i| {
            let (row, column) = (f64::from(i / 256), f64::from(i % 256));
            [
                bounds.min_x + (column + 0.5) * size,
                bounds.max_y - (row + 0.5) * size,
            ]
        })
        .collect()
}

fn tile(view: &str) -> Vec<[f64; 2]> {
    let extent = index().extent();
    match view {
        "whole" => pixel_centres(extent),
        _ => {
            // 1/32 of the mesh across, in its middle.
            let span = extent.width() / 32.0;
            let (x, y) = (
                extent.min_x + extent.width() * 0.5,
                extent.min_y + extent.height() * 0.5,
            );
            pixel_centres(Bounds {
                min_x: x,
                min_y: y,
                max_x: x + span,
                max_y: y + span,
            })
        }
    }
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn build_index() -> MeshIndex {
    MeshIndex::build(geometry()).unwrap()
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn smooth_node_values(bencher: divan::Bencher) {
    let (index, values) = (index(), element_values());
    bencher.bench(|| {
        MeshField::new(
            index.clone(),
            values.clone(),
            ValueLocation::Elements,
            Shading::Smooth,
        )
        .unwrap()
    });
}

fn bench_sample(bencher: divan::Bencher, view: &str, shading: Shading) {
    let field =
        MeshField::new(index(), element_values(), ValueLocation::Elements, shading).unwrap();
    let points = tile(view);
    let mut out = vec![0.0_f32; points.len()];
    bencher.bench_local(|| field.sample(&points, 1.0, &mut out));
}

#[divan::bench(args = ["whole", "zoomed"])]
fn sample_flat(bencher: divan::Bencher, view: &str) {
    bench_sample(bencher, view, Shading::Flat);
}

#[divan::bench(args = ["whole", "zoomed"])]
fn sample_smooth(bencher: divan::Bencher, view: &str) {
    bench_sample(bencher, view, Shading::Smooth);
}

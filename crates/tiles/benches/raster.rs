//! Raster tile costs, step by step, on an 8,000 x 8,000 grid in UTM 32N drawn in Web Mercator
//! (the shape of scripts/bench-tiles): sampling with the checked lattice, colouring and PNG
//! encoding, and the whole tile. Run with `cargo bench -p basin-tiles --bench raster`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;

use basin_formats::crs::{CrsTransform, Projection};
use basin_tiles::encode::{self, OutputType};
use basin_tiles::ramp::{DEFAULT_COLOURS, OutOfRange, Ramp};
use basin_tiles::raster::{Aggregation, Raster};
use basin_tiles::render::{self, Reprojection, to_mercator};
use basin_tiles::tms::{TileMatrix, TileMatrixSet};

const SIDE: usize = 8_000;

fn raster() -> &'static Raster {
    static RASTER: OnceLock<Raster> = OnceLock::new();
    RASTER.get_or_init(|| {
        let values = (0..SIDE * SIDE)
            .map(|i| {
                let (row, column) = ((i / SIDE) as f32, (i % SIDE) as f32);
                40.0 * (column / 300.0).sin() + 25.0 * (row / 450.0).cos()
            })
            .collect();
        Raster::new(
            SIDE,
            SIDE,
            [500_000.0, 10.0, 0.0, 6_000_000.0, 0.0, -10.0],
            values,
            Aggregation::Mean,
        )
        .unwrap()
    })
}

fn reprojection() -> Reprojection {
    let to = Projection::epsg(32632).unwrap();
    let from = Projection::epsg(4326).unwrap();
    Reprojection::WebMercatorThrough(Box::new(CrsTransform::new(from, to)))
}

/// The level-`level` tile over the middle of the grid (about 9.6 E, 53.8 N).
fn tile(level: u8) -> (TileMatrix, u32, u32) {
    let set = TileMatrixSet::web_mercator_quad(256, level);
    let matrix = set.matrices[usize::from(level)].clone();
    let (x, y) = to_mercator(9.6, 53.8);
    let span = matrix.cell_size * 256.0;
    let col = ((x - matrix.top_left_x) / span) as u32;
    let row = ((matrix.top_left_y - y) / span) as u32;
    (matrix, row, col)
}

fn ramp() -> Ramp {
    Ramp::new(DEFAULT_COLOURS.to_vec(), -65.0, 65.0, OutOfRange::None).unwrap()
}

fn main() {
    divan::main();
}

#[divan::bench(args = [10, 13, 14])]
fn sample(bencher: divan::Bencher, level: u8) {
    let raster = raster();
    let reprojection = reprojection();
    let (matrix, row, col) = tile(level);
    bencher.bench(|| render::sample_tile(raster, &matrix, row, col, &reprojection));
}

#[divan::bench]
fn encode_png(bencher: divan::Bencher) {
    let (matrix, row, col) = tile(13);
    let values = render::sample_tile(raster(), &matrix, row, col, &reprojection()).unwrap();
    let ramp = ramp();
    bencher.bench(|| encode::encode(&values, &ramp, OutputType::Png).unwrap());
}

#[divan::bench]
fn whole_tile(bencher: divan::Bencher) {
    let raster = raster();
    let reprojection = reprojection();
    let ramp = ramp();
    let (matrix, row, col) = tile(13);
    bencher.bench(|| {
        let values = render::sample_tile(raster, &matrix, row, col, &reprojection).unwrap();
        encode::encode(&values, &ramp, OutputType::Png).unwrap()
    });
}

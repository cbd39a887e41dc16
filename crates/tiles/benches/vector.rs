//! Vector tile costs on 100,000 random polygons over the Netherlands (the data of
//! scripts/bench-vector-tiles: 6 to 24 vertices, a few hundred metres across, an integer and
//! a text property), in EPSG:3857: building the layer, the first tile of a generalised zoom
//! (which makes its level), and tiles at levels 4, 8, 12 and 14 over the middle of the
//! country. Run with `cargo bench -p basin-tiles --bench vector`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;

use basin_formats::model::{Coord, Geometry};
use basin_tiles::tms::{WEB_MERCATOR_HALF_WORLD, WEB_MERCATOR_RADIUS};
use basin_tiles::vector::{PropertyValue, TileOptions, VectorFeature, VectorLayer};

const COUNT: usize = 100_000;

/// SplitMix64: reproducible data without a dependency.
struct Random(u64);

impl Random {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1_u64 << 53) as f64
    }

    fn between(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }
}

fn mercator(lon: f64, lat: f64) -> Coord {
    Coord::xy(
        WEB_MERCATOR_RADIUS * lon.to_radians(),
        WEB_MERCATOR_RADIUS * lat.to_radians().tan().asinh(),
    )
}

fn features() -> Vec<VectorFeature> {
    let mut random = Random(16);
    (0..COUNT)
        .map(|i| {
            let (lon, lat) = (random.between(3.4, 7.1), random.between(50.8, 53.5));
            let sides = 6 + (random.unit() * 19.0) as usize;
            let radius = random.between(0.0005, 0.004);
            let mut ring: Vec<Coord> = (0..sides)
                .map(|k| {
                    let angle = std::f64::consts::TAU * k as f64 / sides as f64;
                    let r = radius * random.between(0.6, 1.0);
                    mercator(lon + r * angle.cos() * 1.6, lat + r * angle.sin())
                })
                .collect();
            ring.push(ring[0]);
            VectorFeature {
                id: Some(i as u64),
                geometry: Geometry::Polygon(vec![ring]),
                properties: vec![
                    Some(PropertyValue::Int(i as i64)),
                    Some(PropertyValue::Text(
                        ["field", "water", "wood"][i % 3].into(),
                    )),
                ],
            }
        })
        .collect()
}

fn build() -> VectorLayer {
    VectorLayer::new("polygons", vec!["id".into(), "kind".into()], features())
}

fn layer() -> &'static VectorLayer {
    static LAYER: OnceLock<VectorLayer> = OnceLock::new();
    LAYER.get_or_init(build)
}

/// The tile of level `z` over the middle of the data (5.25 E, 52.15 N).
fn tile_at(z: u8) -> (u32, u32) {
    let centre = mercator(5.25, 52.15);
    let span = 2.0 * WEB_MERCATOR_HALF_WORLD / f64::from(1_u32 << z);
    (
        ((centre.x + WEB_MERCATOR_HALF_WORLD) / span) as u32,
        ((WEB_MERCATOR_HALF_WORLD - centre.y) / span) as u32,
    )
}

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn layer_build(bencher: divan::Bencher) {
    bencher.with_inputs(features).bench_values(|features| {
        VectorLayer::new("polygons", vec!["id".into(), "kind".into()], features)
    });
}

/// The first tile of a zoom with a generalised level: the level is made on the way.
#[divan::bench(args = [4, 8], sample_count = 5, sample_size = 1)]
fn first_tile(bencher: divan::Bencher, z: u8) {
    let (x, y) = tile_at(z);
    bencher
        .with_inputs(build)
        .bench_values(|layer| layer.tile(z, x, y, &TileOptions::default()));
}

#[divan::bench(args = [4, 8, 12, 14], sample_count = 50)]
fn tile(bencher: divan::Bencher, z: u8) {
    let layer = layer();
    let (x, y) = tile_at(z);
    let bytes = layer.tile(z, x, y, &TileOptions::default()).len();
    eprintln!(
        "level {z}: {bytes} bytes, layer {} MB",
        layer.approximate_bytes() >> 20
    );
    bencher.bench(|| layer.tile(z, x, y, &TileOptions::default()));
}

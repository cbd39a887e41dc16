//! Writes sample vector tiles for decoders other than Basin's (tests/python/
//! test_vector_tiles_library.py reads them with mapbox-vector-tile and GDAL's MVT driver).
//!
//! Usage: `cargo run -p basin-tiles --example mvt_sample -- <directory>`. Writes
//! `<directory>/<z>/<x>/<y>.pbf` for a level-14 tile over Amsterdam, its eight neighbours,
//! and the tiles above it at levels 13, 12 and 6, plus `<directory>/features.json`: the layer
//! name, the tile options, the tiles written, and each feature as given to the layer
//! (EPSG:3857 coordinates, id, properties), so the test can say where everything must be.

#![allow(clippy::print_stdout)]

use std::fmt::Write as _;
use std::path::Path;

use basin_formats::model::{Coord, Geometry};
use basin_tiles::tms::WEB_MERCATOR_HALF_WORLD;
use basin_tiles::vector::{PropertyValue, TileOptions, VectorFeature, VectorLayer};

const LEVEL: u8 = 14;
const EXTENT: f64 = 4096.0;

/// The level-14 tile holding 4.9 E, 52.37 N.
const COLUMN: u32 = 8415;
const ROW: u32 = 5384;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(directory) = std::env::args().nth(1) else {
        return Err("usage: mvt_sample <directory>".into());
    };
    let directory = Path::new(&directory);
    let keys = ["name", "depth", "count", "open", "note"];
    let features = features();
    let layer = VectorLayer::new(
        "sample",
        keys.iter().map(|key| (*key).to_owned()).collect(),
        features.clone(),
    );
    let options = TileOptions::default();
    let mut tiles = Vec::new();
    for dx in [-1_i64, 0, 1] {
        for dy in [-1_i64, 0, 1] {
            tiles.push((LEVEL, i64::from(COLUMN) + dx, i64::from(ROW) + dy));
        }
    }
    for up in [1_u8, 2, 8] {
        tiles.push((LEVEL - up, i64::from(COLUMN >> up), i64::from(ROW >> up)));
    }
    let mut written = Vec::new();
    for (z, x, y) in tiles {
        let (Ok(x), Ok(y)) = (u32::try_from(x), u32::try_from(y)) else {
            continue;
        };
        let bytes = layer.tile(z, x, y, &options);
        let folder = directory.join(z.to_string()).join(x.to_string());
        std::fs::create_dir_all(&folder)?;
        std::fs::write(folder.join(format!("{y}.pbf")), &bytes)?;
        written.push(format!("[{z}, {x}, {y}]"));
    }
    let mut manifest = String::new();
    writeln!(
        manifest,
        "{{\"layer\": \"sample\", \"extent\": {}, \"buffer\": {}, \"tolerance\": {}, \
         \"keys\": [{}], \"tiles\": [{}], \"features\": [",
        options.extent,
        options.buffer,
        options.simplify_tolerance,
        keys.iter()
            .map(|key| format!("\"{key}\""))
            .collect::<Vec<_>>()
            .join(", "),
        written.join(", "),
    )?;
    let described: Vec<String> = features.iter().map(describe).collect();
    manifest.push_str(&described.join(",\n"));
    manifest.push_str("\n]}\n");
    std::fs::write(directory.join("features.json"), manifest)?;
    println!("{} tiles in {}", written.len(), directory.display());
    Ok(())
}

/// EPSG:3857 position of tile units (u, v) of the level-14 tile (dx, dy) from the centre one.
fn at(u: f64, v: f64) -> Coord {
    let span = 2.0 * WEB_MERCATOR_HALF_WORLD / f64::from(1_u32 << LEVEL);
    Coord::xy(
        -WEB_MERCATOR_HALF_WORLD + (f64::from(COLUMN) + u / EXTENT) * span,
        WEB_MERCATOR_HALF_WORLD - (f64::from(ROW) + v / EXTENT) * span,
    )
}

fn ring(corners: &[(f64, f64)]) -> Vec<Coord> {
    let mut ring: Vec<Coord> = corners.iter().map(|&(u, v)| at(u, v)).collect();
    if let Some(&first) = ring.first() {
        ring.push(first);
    }
    ring
}

fn text(value: &str) -> Option<PropertyValue> {
    Some(PropertyValue::Text(value.to_owned()))
}

/// The shapes: ids (one missing), geometries and names.
fn shapes() -> [(Option<u64>, Geometry, &'static str); 8] {
    let pond = Geometry::Polygon(vec![
        ring(&[
            (500.0, 500.0),
            (1500.0, 500.0),
            (1500.0, 1300.0),
            (500.0, 1300.0),
        ]),
        // The hole is given clockwise in EPSG:3857 on purpose; the tile must turn it.
        ring(&[
            (800.0, 800.0),
            (800.0, 1000.0),
            (1100.0, 1000.0),
            (1100.0, 800.0),
        ]),
    ]);
    let islands = Geometry::MultiPolygon(vec![
        vec![ring(&[
            (2500.0, 500.0),
            (2900.0, 500.0),
            (2900.0, 900.0),
            (2500.0, 900.0),
        ])],
        vec![ring(&[(3100.0, 600.0), (3500.0, 600.0), (3300.0, 1000.0)])],
    ]);
    // A polder over the tile's bottom-right corner, reaching into three neighbours.
    let polder = Geometry::Polygon(vec![ring(&[
        (2600.0, 2600.0),
        (6000.0, 2900.0),
        (5800.0, 6200.0),
        (3000.0, 5500.0),
    ])]);
    // A ditch across the whole tile and into the left and right neighbours.
    let ditch = Geometry::LineString(vec![
        at(-2000.0, 2000.0),
        at(1000.0, 1800.0),
        at(3000.0, 2300.0),
        at(6500.0, 2100.0),
    ]);
    let canals = Geometry::MultiLineString(vec![
        vec![at(200.0, 3000.0), at(1200.0, 3200.0)],
        vec![at(200.0, 3500.0), at(1200.0, 3700.0), at(1500.0, 3300.0)],
    ]);
    let gauges = Geometry::MultiPoint(vec![
        at(1800.0, 200.0),
        at(1900.0, 250.0),
        at(-3000.0, 100.0),
    ]);
    let mixed = Geometry::GeometryCollection(vec![
        Geometry::Point(at(3800.0, 3800.0)),
        Geometry::LineString(vec![at(3700.0, 3300.0), at(3950.0, 3400.0)]),
    ]);
    [
        (Some(1), Geometry::Point(at(2048.0, 3000.0)), "gauge"),
        (Some(2), gauges, "gauges"),
        (Some(3), ditch, "ditch"),
        (Some(4), pond, "pond"),
        (Some(5), islands, "islands"),
        (Some(6), polder, "polder"),
        (None, canals, "canals"),
        (Some(8), mixed, "mixed"),
    ]
}

/// The shapes with properties of every type, a null among them for every other feature.
fn features() -> Vec<VectorFeature> {
    shapes()
        .into_iter()
        .enumerate()
        .map(|(index, (id, geometry, name))| {
            let position = index as i64;
            VectorFeature {
                id,
                geometry,
                properties: vec![
                    text(name),
                    Some(PropertyValue::Float(0.25 + position as f64 * 1.5)),
                    Some(PropertyValue::Int(if position % 2 == 0 {
                        -position - 1
                    } else {
                        (1_i64 << 40) + position
                    })),
                    Some(PropertyValue::Bool(position % 3 == 0)),
                    if position % 2 == 0 {
                        text("naïve ✓")
                    } else {
                        None
                    },
                ],
            }
        })
        .collect()
}

/// A feature as JSON: {"id", "type", "coordinates" (GeoJSON nesting, EPSG:3857),
/// "properties"}; collections as {"type": "GeometryCollection", "geometries": [...]}.
fn describe(feature: &VectorFeature) -> String {
    let id = feature
        .id
        .map_or_else(|| "null".to_owned(), |id| id.to_string());
    let properties: Vec<String> = feature
        .properties
        .iter()
        .map(|value| match value {
            None => "null".to_owned(),
            Some(PropertyValue::Text(text)) => format!("\"{text}\""),
            Some(PropertyValue::Float(number)) => format!("{number:?}"),
            Some(PropertyValue::Int(number)) => number.to_string(),
            Some(PropertyValue::Bool(flag)) => flag.to_string(),
        })
        .collect();
    format!(
        "{{\"id\": {id}, \"geometry\": {}, \"properties\": [{}]}}",
        geometry_json(&feature.geometry),
        properties.join(", ")
    )
}

fn geometry_json(geometry: &Geometry) -> String {
    let point = |c: &Coord| format!("[{:?}, {:?}]", c.x, c.y);
    let line = |l: &[Coord]| format!("[{}]", l.iter().map(point).collect::<Vec<_>>().join(", "));
    let rings = |r: &[Vec<Coord>]| {
        format!(
            "[{}]",
            r.iter().map(|l| line(l)).collect::<Vec<_>>().join(", ")
        )
    };
    let (kind, coordinates) = match geometry {
        Geometry::Point(c) => ("Point", point(c)),
        Geometry::MultiPoint(cs) => ("MultiPoint", line(cs)),
        Geometry::LineString(l) => ("LineString", line(l)),
        Geometry::MultiLineString(ls) => ("MultiLineString", rings(ls)),
        Geometry::Polygon(r) => ("Polygon", rings(r)),
        Geometry::MultiPolygon(ps) => (
            "MultiPolygon",
            format!(
                "[{}]",
                ps.iter().map(|p| rings(p)).collect::<Vec<_>>().join(", ")
            ),
        ),
        Geometry::GeometryCollection(parts) => {
            let parts: Vec<String> = parts.iter().map(geometry_json).collect();
            return format!(
                "{{\"type\": \"GeometryCollection\", \"geometries\": [{}]}}",
                parts.join(", ")
            );
        }
        _ => ("GeometryCollection", "[]".to_owned()),
    };
    format!("{{\"type\": \"{kind}\", \"coordinates\": {coordinates}}}")
}

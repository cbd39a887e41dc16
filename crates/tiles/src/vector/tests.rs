//! The encoder checked by decoding its output with a small protobuf reader written here.

use super::*;
use basin_formats::model::Coord;

#[derive(Debug, Default)]
struct DecodedFeature {
    id: u64,
    tags: Vec<u32>,
    kind: u64,
    /// Parts as absolute tile positions: for polygons, each ring (without closing).
    parts: Vec<Vec<[i64; 2]>>,
}

#[derive(Debug, Default)]
struct DecodedLayer {
    version: u64,
    name: String,
    extent: u64,
    keys: Vec<String>,
    values: Vec<String>,
    features: Vec<DecodedFeature>,
}

fn read_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0_u64;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

/// (field, wire type, payload) triples of a message.
fn fields(bytes: &[u8]) -> Vec<(u64, u64, Vec<u8>, u64)> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        let key = read_varint(bytes, &mut at);
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                let value = read_varint(bytes, &mut at);
                out.push((field, wire, Vec::new(), value));
            }
            1 => {
                out.push((field, wire, bytes[at..at + 8].to_vec(), 0));
                at += 8;
            }
            2 => {
                let length = read_varint(bytes, &mut at) as usize;
                out.push((field, wire, bytes[at..at + length].to_vec(), 0));
                at += length;
            }
            5 => {
                out.push((field, wire, bytes[at..at + 4].to_vec(), 0));
                at += 4;
            }
            other => panic!("wire type {other}"),
        }
    }
    out
}

fn packed(bytes: &[u8]) -> Vec<u32> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        out.push(read_varint(bytes, &mut at) as u32);
    }
    out
}

fn unzigzag(value: u32) -> i64 {
    (i64::from(value >> 1)) ^ -(i64::from(value & 1))
}

fn geometry(commands: &[u32]) -> Vec<Vec<[i64; 2]>> {
    let mut parts: Vec<Vec<[i64; 2]>> = Vec::new();
    let (mut x, mut y) = (0_i64, 0_i64);
    let mut at = 0;
    while at < commands.len() {
        let (id, count) = (commands[at] & 7, commands[at] >> 3);
        at += 1;
        match id {
            1 => {
                for _ in 0..count {
                    x += unzigzag(commands[at]);
                    y += unzigzag(commands[at + 1]);
                    at += 2;
                    parts.push(vec![[x, y]]);
                }
            }
            2 => {
                for _ in 0..count {
                    x += unzigzag(commands[at]);
                    y += unzigzag(commands[at + 1]);
                    at += 2;
                    parts.last_mut().unwrap().push([x, y]);
                }
            }
            7 => assert_eq!(count, 1),
            other => panic!("command {other}"),
        }
    }
    parts
}

fn decode(tile: &[u8]) -> Vec<DecodedLayer> {
    fields(tile)
        .into_iter()
        .map(|(field, _, layer_bytes, _)| {
            assert_eq!(field, 3);
            let mut layer = DecodedLayer::default();
            for (field, _, payload, value) in fields(&layer_bytes) {
                match field {
                    15 => layer.version = value,
                    1 => layer.name = String::from_utf8(payload).unwrap(),
                    5 => layer.extent = value,
                    3 => layer.keys.push(String::from_utf8(payload).unwrap()),
                    4 => {
                        let (kind, _, bytes, number) = fields(&payload).remove(0);
                        layer.values.push(match kind {
                            1 => format!("text:{}", String::from_utf8(bytes).unwrap()),
                            3 => {
                                format!("double:{}", f64::from_le_bytes(bytes.try_into().unwrap()))
                            }
                            6 => format!("sint:{}", unzigzag(number as u32)),
                            7 => format!("bool:{number}"),
                            other => format!("field {other}"),
                        });
                    }
                    2 => {
                        let mut feature = DecodedFeature::default();
                        for (field, _, payload, value) in fields(&payload) {
                            match field {
                                1 => feature.id = value,
                                2 => feature.tags = packed(&payload),
                                3 => feature.kind = value,
                                4 => feature.parts = geometry(&packed(&payload)),
                                _ => {}
                            }
                        }
                        layer.features.push(feature);
                    }
                    _ => {}
                }
            }
            layer
        })
        .collect()
}

/// EPSG:3857 position of tile units (u, v) in tile z/x/y at extent 4096.
fn at(z: u8, x: u32, y: u32, u: f64, v: f64) -> Coord {
    let span = 2.0 * WEB_MERCATOR_HALF_WORLD / f64::from(1_u32 << z);
    Coord::xy(
        -WEB_MERCATOR_HALF_WORLD + (f64::from(x) + u / 4096.0) * span,
        WEB_MERCATOR_HALF_WORLD - (f64::from(y) + v / 4096.0) * span,
    )
}

fn ring(z: u8, x: u32, y: u32, corners: &[(f64, f64)]) -> Vec<Coord> {
    let mut ring: Vec<Coord> = corners.iter().map(|&(u, v)| at(z, x, y, u, v)).collect();
    ring.push(ring[0]);
    ring
}

fn doubled_area(ring: &[[i64; 2]]) -> i64 {
    (0..ring.len())
        .map(|i| {
            let (a, b) = (ring[i], ring[(i + 1) % ring.len()]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum()
}

fn layer_of(features: Vec<Feature>) -> VectorLayer {
    VectorLayer::new(
        "parcels",
        vec!["name".into(), "area".into(), "count".into(), "open".into()],
        features,
        None,
    )
}

#[test]
fn polygons_with_holes_are_placed_and_wound_as_mvt_asks() {
    let (z, x, y) = (10, 525, 340);
    // Counter-clockwise on screen on purpose: the encoder must turn it.
    let exterior = ring(
        z,
        x,
        y,
        &[
            (100.0, 100.0),
            (100.0, 900.0),
            (900.0, 900.0),
            (900.0, 100.0),
        ],
    );
    let hole = ring(
        z,
        x,
        y,
        &[
            (400.0, 400.0),
            (600.0, 400.0),
            (600.0, 600.0),
            (400.0, 600.0),
        ],
    );
    let feature = Feature {
        geometry: Some(Geometry::Polygon(vec![exterior, hole])),
        values: vec![
            Value::Text("plot".into()),
            Value::Float(12.5),
            Value::Integer(-3),
            Value::Boolean(true),
        ],
    };
    let layer = layer_of(vec![feature]);
    let tile = layer.tile(z, x, y, &TileOptions::default());
    let layers = decode(&tile);
    assert_eq!(layers.len(), 1);
    let decoded = &layers[0];
    assert_eq!((decoded.version, decoded.extent), (2, 4096));
    assert_eq!(decoded.name, "parcels");
    assert_eq!(decoded.keys, ["name", "area", "count", "open"]);
    assert_eq!(
        decoded.values,
        ["text:plot", "double:12.5", "sint:-3", "bool:1"]
    );
    let feature = &decoded.features[0];
    assert_eq!((feature.id, feature.kind), (1, 3));
    assert_eq!(feature.tags, [0, 0, 1, 1, 2, 2, 3, 3]);
    assert_eq!(feature.parts.len(), 2);
    let mut exterior: Vec<[i64; 2]> = feature.parts[0].clone();
    assert!(doubled_area(&exterior) > 0, "exterior clockwise on screen");
    assert!(
        doubled_area(&feature.parts[1]) < 0,
        "hole counter-clockwise"
    );
    exterior.sort();
    assert_eq!(exterior, [[100, 100], [100, 900], [900, 100], [900, 900]]);
    // Neighbouring tiles do not show it; a tile of another level does.
    assert!(layer.tile(z, x + 1, y, &TileOptions::default()).is_empty());
    assert!(
        !layer
            .tile(z - 1, x / 2, y / 2, &TileOptions::default())
            .is_empty()
    );
}

#[test]
fn features_crossing_edges_are_clipped_to_the_buffer() {
    let (z, x, y) = (12, 2100, 1360);
    let big = ring(
        z,
        x,
        y,
        &[
            (-5000.0, -5000.0),
            (9000.0, -5000.0),
            (9000.0, 9000.0),
            (-5000.0, 9000.0),
        ],
    );
    let line = vec![at(z, x, y, -3000.0, 2048.0), at(z, x, y, 7000.0, 2048.0)];
    let points = vec![at(z, x, y, 10.0, 20.0), at(z, x, y, -200.0, 20.0)];
    let features = vec![
        Feature {
            geometry: Some(Geometry::Polygon(vec![big])),
            values: vec![],
        },
        Feature {
            geometry: Some(Geometry::LineString(line)),
            values: vec![],
        },
        Feature {
            geometry: Some(Geometry::MultiPoint(points)),
            values: vec![],
        },
    ];
    let tile = layer_of(features).tile(z, x, y, &TileOptions::default());
    let decoded = &decode(&tile)[0];
    assert_eq!(decoded.features.len(), 3);
    let polygon = &decoded.features[0].parts[0];
    for point in polygon {
        assert!(
            (-64..=4160).contains(&point[0]) && (-64..=4160).contains(&point[1]),
            "{point:?}"
        );
    }
    assert_eq!(doubled_area(polygon), 2 * 4224 * 4224);
    assert_eq!(decoded.features[1].kind, 2);
    assert_eq!(decoded.features[1].parts, [vec![[-64, 2048], [4160, 2048]]]);
    assert_eq!(decoded.features[2].kind, 1);
    assert_eq!(
        decoded.features[2].parts,
        [vec![[10, 20]]],
        "the far point is dropped"
    );
    assert_eq!(decoded.features[2].id, 3);
}

#[test]
fn collections_split_by_kind_and_bad_input_is_skipped() {
    let (z, x, y) = (8, 131, 85);
    let collection = Geometry::GeometryCollection(vec![
        Geometry::Point(at(z, x, y, 50.0, 50.0)),
        Geometry::LineString(vec![at(z, x, y, 0.0, 0.0), at(z, x, y, 100.0, 100.0)]),
    ]);
    let features = vec![
        Feature {
            geometry: Some(collection),
            values: vec![Value::Text("c".into())],
        },
        Feature {
            geometry: None,
            values: vec![],
        },
        Feature {
            geometry: Some(Geometry::Point(Coord::xy(f64::NAN, 1.0))),
            values: vec![],
        },
        Feature {
            geometry: Some(Geometry::Polygon(vec![vec![
                at(z, x, y, 1.0, 1.0),
                at(z, x, y, 1.2, 1.2),
            ]])),
            values: vec![],
        },
        // A polygon that collapses to a point when snapped.
        Feature {
            geometry: Some(Geometry::Polygon(vec![ring(
                z,
                x,
                y,
                &[(5.0, 5.0), (5.1, 5.0), (5.1, 5.1)],
            )])),
            values: vec![],
        },
    ];
    let layer = layer_of(features);
    assert_eq!(layer.len(), 3, "a point, a line, and the tiny polygon");
    let decoded = &decode(&layer.tile(z, x, y, &TileOptions::default()))[0];
    let kinds: Vec<u64> = decoded.features.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [1, 2]);
    assert!(decoded.features.iter().all(|f| f.id == 1));
    for (z, x, y) in [(31, 0, 0), (3, 8, 0), (3, 0, 8), (30, u32::MAX, 0)] {
        assert!(layer.tile(z, x, y, &TileOptions::default()).is_empty());
    }
}

#[test]
fn huge_rings_are_simplified_not_copied() {
    let (z, x, y) = (6, 33, 21);
    let count = 1_000_000;
    let ring: Vec<Coord> = (0..=count)
        .map(|i| {
            let angle = 2.0 * std::f64::consts::PI * f64::from(i) / f64::from(count);
            at(
                z,
                x,
                y,
                2048.0 + 1500.0 * angle.cos(),
                2048.0 + 1500.0 * angle.sin(),
            )
        })
        .collect();
    let layer = layer_of(vec![Feature {
        geometry: Some(Geometry::Polygon(vec![ring])),
        values: vec![],
    }]);
    let tile = layer.tile(z, x, y, &TileOptions::default());
    let decoded = &decode(&tile)[0];
    let vertices = decoded.features[0].parts[0].len();
    assert!((50..2000).contains(&vertices), "{vertices} vertices");
    assert!(tile.len() < 20_000);
}

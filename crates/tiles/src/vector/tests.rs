//! The layer checked by decoding its tiles with a small protobuf reader written here.

use super::*;
use crate::tms::WEB_MERCATOR_HALF_WORLD;
use basin_formats::model::Coord;

#[derive(Debug, Default, Clone)]
struct DecodedFeature {
    id: Option<u64>,
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

impl DecodedLayer {
    fn properties(&self, feature: &DecodedFeature) -> Vec<(String, String)> {
        feature
            .tags
            .chunks(2)
            .map(|pair| {
                (
                    self.keys[pair[0] as usize].clone(),
                    self.values[pair[1] as usize].clone(),
                )
            })
            .collect()
    }
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

/// (field, payload, varint value) of each field of a message.
fn fields(bytes: &[u8]) -> Vec<(u64, Vec<u8>, u64)> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < bytes.len() {
        let key = read_varint(bytes, &mut at);
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                let value = read_varint(bytes, &mut at);
                out.push((field, Vec::new(), value));
            }
            1 => {
                out.push((field, bytes[at..at + 8].to_vec(), 0));
                at += 8;
            }
            2 => {
                let length = read_varint(bytes, &mut at) as usize;
                out.push((field, bytes[at..at + length].to_vec(), 0));
                at += length;
            }
            5 => {
                out.push((field, bytes[at..at + 4].to_vec(), 0));
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
        out.push(u32::try_from(read_varint(bytes, &mut at)).unwrap());
    }
    out
}

fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Decodes a geometry, checking the command rules of MVT 2.1 for its type as it goes.
fn geometry(kind: u64, commands: &[u32]) -> Vec<Vec<[i64; 2]>> {
    let mut parts: Vec<Vec<[i64; 2]>> = Vec::new();
    let (mut x, mut y) = (0_i64, 0_i64);
    let mut at = 0;
    let mut closed = true;
    while at < commands.len() {
        let (id, count) = (commands[at] & 7, commands[at] >> 3);
        at += 1;
        assert!(count > 0, "command with count 0");
        match id {
            1 => {
                assert!(kind == 1 || count == 1, "MoveTo of {count} in a non-point");
                assert!(kind != 3 || closed, "ring not closed before MoveTo");
                closed = false;
                for _ in 0..count {
                    x += unzigzag(u64::from(commands[at]));
                    y += unzigzag(u64::from(commands[at + 1]));
                    at += 2;
                    parts.push(vec![[x, y]]);
                }
            }
            2 => {
                assert_ne!(kind, 1, "LineTo in a point");
                for _ in 0..count {
                    let (dx, dy) = (
                        unzigzag(u64::from(commands[at])),
                        unzigzag(u64::from(commands[at + 1])),
                    );
                    assert!(dx != 0 || dy != 0, "repeated point");
                    x += dx;
                    y += dy;
                    at += 2;
                    parts.last_mut().unwrap().push([x, y]);
                }
            }
            7 => {
                assert_eq!(kind, 3, "ClosePath outside a polygon");
                assert_eq!(count, 1);
                closed = true;
            }
            other => panic!("command {other}"),
        }
    }
    assert!(kind != 3 || closed, "last ring not closed");
    parts
}

fn decode(tile: &[u8]) -> Vec<DecodedLayer> {
    fields(tile)
        .into_iter()
        .map(|(field, layer_bytes, _)| {
            assert_eq!(field, 3);
            let mut layer = DecodedLayer::default();
            for (field, payload, value) in fields(&layer_bytes) {
                match field {
                    15 => layer.version = value,
                    1 => layer.name = String::from_utf8(payload).unwrap(),
                    5 => layer.extent = value,
                    3 => layer.keys.push(String::from_utf8(payload).unwrap()),
                    4 => {
                        let (kind, bytes, number) = fields(&payload).remove(0);
                        layer.values.push(match kind {
                            1 => format!("text:{}", String::from_utf8(bytes).unwrap()),
                            3 => {
                                format!("double:{}", f64::from_le_bytes(bytes.try_into().unwrap()))
                            }
                            5 => format!("int:{number}"),
                            6 => format!("int:{}", unzigzag(number)),
                            7 => format!("bool:{number}"),
                            other => format!("field {other}"),
                        });
                    }
                    2 => {
                        let mut feature = DecodedFeature::default();
                        let mut commands = Vec::new();
                        for (field, payload, value) in fields(&payload) {
                            match field {
                                1 => feature.id = Some(value),
                                2 => feature.tags = packed(&payload),
                                3 => feature.kind = value,
                                4 => commands = packed(&payload),
                                _ => {}
                            }
                        }
                        feature.parts = geometry(feature.kind, &commands);
                        layer.features.push(feature);
                    }
                    _ => {}
                }
            }
            let mut unique = layer.values.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), layer.values.len(), "values repeated");
            layer
        })
        .collect()
}

fn decode_one(tile: &[u8]) -> DecodedLayer {
    let mut layers = decode(tile);
    assert_eq!(layers.len(), 1);
    layers.remove(0)
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

fn feature(geometry: Geometry, properties: Vec<Option<PropertyValue>>) -> VectorFeature {
    VectorFeature {
        id: None,
        geometry,
        properties,
    }
}

fn layer_of(features: Vec<VectorFeature>) -> VectorLayer {
    VectorLayer::new(
        "parcels",
        vec!["name".into(), "area".into(), "count".into(), "open".into()],
        features,
    )
}

fn options() -> TileOptions {
    TileOptions::default()
}

/// Checks what MVT 2.1 asks of polygons: every ring has three distinct points or more, the
/// first ring of each polygon has positive area (clockwise on screen), the others negative.
fn assert_valid_polygons(feature: &DecodedFeature, low: i64, high: i64) {
    assert_eq!(feature.kind, 3);
    let first = &feature.parts[0];
    assert!(
        doubled_area(first) > 0,
        "a feature starts with an exterior ring"
    );
    for ring in &feature.parts {
        assert!(ring.len() >= 3, "{ring:?}");
        assert_ne!(doubled_area(ring), 0, "{ring:?}");
        for point in ring {
            assert!(
                (low..=high).contains(&point[0]) && (low..=high).contains(&point[1]),
                "{point:?}"
            );
        }
    }
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
    let mut parcel = feature(
        Geometry::Polygon(vec![exterior, hole]),
        vec![
            Some(PropertyValue::Text("plot".into())),
            Some(PropertyValue::Float(12.5)),
            Some(PropertyValue::Int(-3)),
            Some(PropertyValue::Bool(true)),
        ],
    );
    parcel.id = Some(41);
    let layer = layer_of(vec![parcel]);
    let decoded = decode_one(&layer.tile(z, x, y, &options()));
    assert_eq!((decoded.version, decoded.extent), (2, 4096));
    assert_eq!(decoded.name, "parcels");
    assert_eq!(decoded.keys, ["name", "area", "count", "open"]);
    assert_eq!(
        decoded.values,
        ["text:plot", "double:12.5", "int:-3", "bool:1"]
    );
    let feature = &decoded.features[0];
    assert_eq!((feature.id, feature.kind), (Some(41), 3));
    assert_eq!(feature.tags, [0, 0, 1, 1, 2, 2, 3, 3]);
    assert_eq!(feature.parts.len(), 2);
    assert_valid_polygons(feature, 0, 4096);
    assert!(
        doubled_area(&feature.parts[1]) < 0,
        "hole counter-clockwise"
    );
    let mut exterior = feature.parts[0].clone();
    exterior.sort_unstable();
    assert_eq!(exterior, [[100, 100], [100, 900], [900, 100], [900, 900]]);
    // Neighbouring tiles do not show it; the tiles above it do, smaller.
    assert!(layer.tile(z, x + 1, y, &options()).is_empty());
    let parent = decode_one(&layer.tile(z - 1, x / 2, y / 2, &options()));
    let mut corners = parent.features[0].parts[0].clone();
    corners.sort_unstable();
    let (u, v) = (i64::from(x % 2) * 2048, i64::from(y % 2) * 2048);
    assert_eq!(
        corners,
        [
            [u + 50, v + 50],
            [u + 50, v + 450],
            [u + 450, v + 50],
            [u + 450, v + 450]
        ]
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
    let points = vec![
        at(z, x, y, 10.0, 20.0),
        at(z, x, y, -200.0, 20.0),
        at(z, x, y, -64.0, 4160.0),
    ];
    let features = vec![
        feature(Geometry::Polygon(vec![big]), vec![]),
        feature(Geometry::LineString(line), vec![]),
        feature(Geometry::MultiPoint(points), vec![]),
    ];
    let decoded = decode_one(&layer_of(features).tile(z, x, y, &options()));
    assert_eq!(decoded.features.len(), 3);
    let polygon = &decoded.features[0];
    assert_valid_polygons(polygon, -64, 4160);
    assert_eq!(doubled_area(&polygon.parts[0]), 2 * 4224 * 4224);
    assert_eq!(polygon.parts[0].len(), 4, "{:?}", polygon.parts);
    assert_eq!(decoded.features[1].kind, 2);
    assert_eq!(decoded.features[1].parts, [vec![[-64, 2048], [4160, 2048]]]);
    assert_eq!(decoded.features[2].kind, 1);
    assert_eq!(
        decoded.features[2].parts,
        [vec![[10, 20]], vec![[-64, 4160]]],
        "the far point is dropped, the one on the buffer's corner kept"
    );
    assert!(decoded.features.iter().all(|f| f.id.is_none()));
    assert!(decoded.keys.is_empty() && decoded.values.is_empty());
}

#[test]
fn a_line_leaving_and_entering_becomes_pieces_and_neighbours_meet() {
    let (z, x, y) = (14, 8400, 5400);
    // A zigzag across the right edge: in, out, in again.
    let line = vec![
        at(z, x, y, 3000.0, 1000.0),
        at(z, x, y, 5000.0, 1500.0),
        at(z, x, y, 3000.0, 2000.0),
        at(z, x, y, 6000.0, 2500.0),
    ];
    let layer = layer_of(vec![feature(Geometry::LineString(line), vec![])]);
    let here = decode_one(&layer.tile(z, x, y, &options()));
    let pieces = &here.features[0].parts;
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert!(pieces.iter().flatten().all(|p| p[0] <= 4160));
    assert_eq!(pieces[0][0], [3000, 1000]);
    let next = decode_one(&layer.tile(z, x + 1, y, &options()));
    let pieces = &next.features[0].parts;
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert!(pieces.iter().flatten().all(|p| p[0] >= -64));
    assert_eq!(*pieces[1].last().unwrap(), [6000 - 4096, 2500]);
}

#[test]
fn collections_split_by_kind_and_bad_input_is_skipped() {
    let (z, x, y) = (8, 131, 85);
    let collection = Geometry::GeometryCollection(vec![
        Geometry::Point(at(z, x, y, 50.0, 50.0)),
        Geometry::LineString(vec![at(z, x, y, 0.0, 0.0), at(z, x, y, 100.0, 100.0)]),
        Geometry::GeometryCollection(vec![Geometry::Point(at(z, x, y, 60.0, 50.0))]),
        Geometry::MultiPolygon(vec![]),
    ]);
    let mut features = vec![
        feature(collection, vec![Some(PropertyValue::Text("c".into()))]),
        feature(Geometry::Point(Coord::xy(f64::NAN, 1.0)), vec![]),
        feature(Geometry::Point(Coord::xy(1.0, f64::INFINITY)), vec![]),
        feature(Geometry::MultiPoint(vec![]), vec![]),
        feature(Geometry::LineString(vec![at(z, x, y, 5.0, 5.0)]), vec![]),
        feature(
            Geometry::LineString(vec![at(z, x, y, 5.0, 5.0), at(z, x, y, 5.0, 5.0)]),
            vec![],
        ),
        feature(
            Geometry::Polygon(vec![vec![at(z, x, y, 1.0, 1.0), at(z, x, y, 1.2, 1.2)]]),
            vec![],
        ),
        feature(Geometry::Polygon(vec![]), vec![]),
        feature(Geometry::GeometryCollection(vec![]), vec![]),
        // A NaN in a ring drops that position only.
        feature(
            Geometry::Polygon(vec![vec![
                at(z, x, y, 200.0, 200.0),
                at(z, x, y, 400.0, 200.0),
                Coord::xy(f64::NAN, f64::NAN),
                at(z, x, y, 400.0, 400.0),
                at(z, x, y, 200.0, 200.0),
            ]]),
            vec![],
        ),
        // A polygon that collapses to a point when snapped.
        feature(
            Geometry::Polygon(vec![ring(z, x, y, &[(5.0, 5.0), (5.1, 5.0), (5.1, 5.1)])]),
            vec![],
        ),
    ];
    features[0].id = Some(7);
    let layer = layer_of(features);
    assert_eq!(
        layer.len(),
        4,
        "a point set, a line, the triangle, the tiny polygon"
    );
    let decoded = decode_one(&layer.tile(z, x, y, &options()));
    let kinds: Vec<u64> = decoded.features.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [1, 2, 3]);
    assert_eq!(decoded.features[0].parts, [vec![[50, 50]], vec![[60, 50]]]);
    assert_eq!(decoded.features[0].id, Some(7));
    assert_eq!(decoded.features[1].id, Some(7));
    assert_eq!(
        decoded.properties(&decoded.features[1]),
        [("name".to_owned(), "text:c".to_owned())]
    );
    assert_eq!(doubled_area(&decoded.features[2].parts[0]), 200 * 200);
    let empty = layer_of(Vec::new());
    assert!(empty.is_empty() && empty.bounds().is_none());
    assert!(empty.tile(0, 0, 0, &options()).is_empty());
}

#[test]
fn tiles_that_do_not_exist_and_bad_options_are_empty() {
    let layer = layer_of(vec![feature(Geometry::Point(Coord::xy(0.0, 0.0)), vec![])]);
    assert!(!layer.tile(0, 0, 0, &options()).is_empty());
    assert!(!layer.tile(30, 1 << 29, 1 << 29, &options()).is_empty());
    for (z, x, y) in [
        (31, 0, 0),
        (255, 0, 0),
        (3, 8, 0),
        (3, 0, 8),
        (30, u32::MAX, 0),
    ] {
        assert!(layer.tile(z, x, y, &options()).is_empty(), "{z}/{x}/{y}");
    }
    let bad = [
        TileOptions {
            extent: 0,
            ..options()
        },
        TileOptions {
            extent: EXTENT_MAX + 1,
            ..options()
        },
        TileOptions {
            extent: u32::MAX,
            buffer: u32::MAX,
            ..options()
        },
        TileOptions {
            buffer: 4097,
            ..options()
        },
        TileOptions {
            simplify_tolerance: f64::NAN,
            ..options()
        },
        TileOptions {
            simplify_tolerance: -1.0,
            ..options()
        },
        TileOptions {
            simplify_tolerance: f64::INFINITY,
            ..options()
        },
    ];
    for options in bad {
        assert!(options.check().is_err(), "{options:?}");
        assert!(!options.check().unwrap_err().to_string().is_empty());
        assert!(layer.tile(0, 0, 0, &options).is_empty(), "{options:?}");
    }
    let edge = TileOptions {
        extent: EXTENT_MAX,
        buffer: EXTENT_MAX,
        simplify_tolerance: 0.0,
    };
    assert_eq!(edge.check(), Ok(()));
    let decoded = decode_one(&layer.tile(1, 0, 0, &edge));
    assert_eq!(decoded.features[0].parts, [vec![[65_536, 65_536]]]);
}

#[test]
fn keys_and_values_are_shared_and_only_the_used_ones_written() {
    let (z, x, y) = (9, 262, 170);
    let point = |u: f64| Geometry::Point(at(z, x, y, u, 100.0));
    let features = vec![
        feature(
            point(10.0),
            vec![
                Some(PropertyValue::Text("a".into())),
                None,
                Some(PropertyValue::Int(5)),
                Some(PropertyValue::Bool(false)),
                Some(PropertyValue::Int(99)),
            ],
        ),
        feature(
            point(20.0),
            vec![
                Some(PropertyValue::Text("a".into())),
                Some(PropertyValue::Float(f64::NAN)),
                Some(PropertyValue::Int(5)),
            ],
        ),
        feature(
            point(30.0),
            vec![
                None,
                Some(PropertyValue::Int(5)),
                Some(PropertyValue::Int(6)),
            ],
        ),
    ];
    // "count" twice: the second property of that name is kept only when the first is null.
    let layer = VectorLayer::new(
        "points",
        vec![
            "name".into(),
            "area".into(),
            "count".into(),
            "open".into(),
            "count".into(),
        ],
        features,
    );
    let decoded = decode_one(&layer.tile(z, x, y, &options()));
    assert_eq!(decoded.keys, ["name", "count", "open", "area"]);
    assert_eq!(
        decoded.values,
        ["text:a", "int:5", "bool:0", "int:6"],
        "one entry per distinct value, no NaN"
    );
    let properties: Vec<Vec<(String, String)>> = decoded
        .features
        .iter()
        .map(|f| decoded.properties(f))
        .collect();
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    assert_eq!(
        properties,
        [
            vec![
                pair("name", "text:a"),
                pair("count", "int:5"),
                pair("open", "bool:0")
            ],
            vec![pair("name", "text:a"), pair("count", "int:5")],
            vec![pair("area", "int:5"), pair("count", "int:6")],
        ]
    );
}

#[test]
fn format_features_keep_their_ids_and_attributes() {
    let (z, x, y) = (9, 262, 170);
    let features = vec![
        Feature {
            geometry: Some(Geometry::Point(at(z, x, y, 10.0, 10.0))),
            values: vec![
                Value::Date(chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap()),
                Value::Null,
            ],
        },
        Feature {
            geometry: None,
            values: vec![],
        },
        Feature {
            geometry: Some(Geometry::Point(at(z, x, y, 20.0, 10.0))),
            values: vec![Value::Null, Value::Float(0.5)],
        },
    ];
    let layer = VectorLayer::from_features(
        "dated",
        vec!["day".into(), "depth".into()],
        features.clone(),
        Some(vec![-4, 0, 12]),
    );
    let decoded = decode_one(&layer.tile(z, x, y, &options()));
    let ids: Vec<Option<u64>> = decoded.features.iter().map(|f| f.id).collect();
    assert_eq!(
        ids,
        [Some(1), Some(12)],
        "a negative id becomes the position + 1"
    );
    assert_eq!(decoded.values, ["text:2024-02-29", "double:0.5"]);
    let layer = VectorLayer::from_features("dated", vec![], features, None);
    let decoded = decode_one(&layer.tile(z, x, y, &options()));
    let ids: Vec<Option<u64>> = decoded.features.iter().map(|f| f.id).collect();
    assert_eq!(ids, [Some(1), Some(3)]);
    assert_eq!(layer.name(), "dated");
}

#[test]
fn huge_rings_are_simplified_and_cut_in_every_tile() {
    let (z, x, y) = (6, 33, 21);
    let count = 1_000_000;
    let circle: Vec<Coord> = (0..=count)
        .map(|i| {
            let angle = std::f64::consts::TAU * f64::from(i) / f64::from(count);
            at(
                z,
                x,
                y,
                2048.0 + 1500.0 * angle.cos(),
                2048.0 + 1500.0 * angle.sin(),
            )
        })
        .collect();
    let layer = layer_of(vec![feature(Geometry::Polygon(vec![circle]), vec![])]);
    let tile = layer.tile(z, x, y, &options());
    let decoded = decode_one(&tile);
    let vertices = decoded.features[0].parts[0].len();
    assert!((50..2000).contains(&vertices), "{vertices} vertices");
    assert!(tile.len() < 20_000);
    assert_valid_polygons(&decoded.features[0], 0, 4096);
    // Deep tiles along the rim see a piece of it, clipped.
    let (deep, scale) = (14, 1 << 8);
    let rim = (
        x * scale + (2048 + 1500) * scale / 4096,
        y * scale + 2048 * scale / 4096,
    );
    let piece = decode_one(&layer.tile(deep, rim.0, rim.1, &options()));
    assert_valid_polygons(&piece.features[0], -64, 4160);
}

/// 2,000 random polygons, some with holes, and lines over a few tiles at level 10.
fn random_layer() -> (VectorLayer, Vec<VectorFeature>) {
    let mut state = 99_u64;
    let mut random = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1_u64 << 53) as f64
    };
    let (z, x, y) = (10, 525, 340);
    let mut features = Vec::new();
    for i in 0..2_000_u64 {
        let (cu, cv) = (
            random() * 4.0 * 4096.0 - 4096.0,
            random() * 4.0 * 4096.0 - 4096.0,
        );
        let radius = 2.0 + random() * 300.0;
        let sides = 3 + (random() * 20.0) as usize;
        let outline: Vec<(f64, f64)> = (0..sides)
            .map(|k| {
                let angle = std::f64::consts::TAU * k as f64 / sides as f64;
                let r = radius * (0.5 + random() / 2.0);
                (cu + r * angle.cos(), cv + r * angle.sin())
            })
            .collect();
        let mut rings = vec![ring(z, x, y, &outline)];
        if i % 3 == 0 {
            let hole: Vec<(f64, f64)> = (0..sides)
                .map(|k| {
                    let angle = -std::f64::consts::TAU * k as f64 / sides as f64;
                    (
                        cu + radius * 0.3 * angle.cos(),
                        cv + radius * 0.3 * angle.sin(),
                    )
                })
                .collect();
            rings.push(ring(z, x, y, &hole));
        }
        let geometry = if i % 10 == 9 {
            Geometry::LineString(rings.swap_remove(0))
        } else {
            Geometry::Polygon(rings)
        };
        features.push(VectorFeature {
            id: Some(i),
            geometry,
            properties: vec![Some(PropertyValue::Int((i % 7) as i64))],
        });
    }
    (
        VectorLayer::new("random", vec!["class".into()], features.clone()),
        features,
    )
}

#[test]
fn every_polygon_of_random_data_is_valid_at_every_zoom() {
    let (layer, _) = random_layer();
    for z in [4_u8, 6, 8, 9, 10, 11, 12] {
        let shift = z.saturating_sub(10);
        let (x0, y0) = (
            (525_u32 << shift) >> 10u8.saturating_sub(z),
            (340_u32 << shift) >> 10u8.saturating_sub(z),
        );
        for dx in 0..3 {
            for dy in 0..3 {
                let tile = layer.tile(z, x0 + dx, y0 + dy, &options());
                if tile.is_empty() {
                    continue;
                }
                for feature in &decode_one(&tile).features {
                    if feature.kind == 3 {
                        assert_valid_polygons(feature, -64, 4160);
                    } else {
                        assert_eq!(feature.kind, 2);
                        for line in &feature.parts {
                            assert!(line.len() >= 2);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn generalised_levels_draw_what_cutting_from_the_layer_draws() {
    let (layer, features) = random_layer();
    // The same layer with no room for levels cuts every tile from the layer itself.
    let direct = VectorLayer {
        levels: Levels::new(0),
        ..VectorLayer::new("random", vec!["class".into()], features)
    };
    let (mut same, mut total) = (0, 0);
    for z in 5..=8_u8 {
        let (x0, y0) = (525_u32 >> (10 - z), 340_u32 >> (10 - z));
        for (x, y) in [(x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)] {
            let a = layer.tile(z, x, y, &options());
            let b = direct.tile(z, x, y, &options());
            let (a, b) = (decode(&a), decode(&b));
            let ids = |layers: &[DecodedLayer]| -> Vec<Option<u64>> {
                layers
                    .iter()
                    .flat_map(|l| l.features.iter().map(|f| f.id))
                    .collect()
            };
            let (ids_a, ids_b) = (ids(&a), ids(&b));
            // Snapping at the level's grid then clipping may differ from clipping then
            // snapping by a unit where a ring crosses the buffer, which can decide whether
            // a sliver there survives; the features themselves are the same.
            let differ = ids_a.iter().filter(|id| !ids_b.contains(id)).count()
                + ids_b.iter().filter(|id| !ids_a.contains(id)).count();
            assert!(differ <= 2, "z{z}: {differ} of {}", ids_a.len());
            if let (Some(a), Some(b)) = (a.first(), b.first()) {
                for fa in &a.features {
                    if let Some(fb) = b.features.iter().find(|f| f.id == fa.id) {
                        total += 1;
                        same += usize::from(fa.parts == fb.parts);
                    }
                }
            }
        }
    }
    assert!(total > 500, "{total}");
    assert!(same * 100 >= total * 97, "{same} of {total} identical");
    assert!(layer.levels.bytes() > 0);
}

#[test]
fn low_zooms_skip_what_is_too_small_to_show() {
    // 10,000 squares of 100 m: a unit at level 4 is 611 m, so none shows there.
    let features: Vec<VectorFeature> = (0..10_000)
        .map(|i| {
            let (x, y) = (
                500_000.0 + f64::from(i % 100) * 300.0,
                6_800_000.0 + f64::from(i / 100) * 300.0,
            );
            let square = vec![
                Coord::xy(x, y),
                Coord::xy(x + 100.0, y),
                Coord::xy(x + 100.0, y + 100.0),
                Coord::xy(x, y + 100.0),
                Coord::xy(x, y),
            ];
            feature(Geometry::Polygon(vec![square]), vec![])
        })
        .collect();
    let layer = VectorLayer::new("squares", vec![], features);
    let tile_of = |z: u8| {
        let span = 2.0 * WEB_MERCATOR_HALF_WORLD / f64::from(1_u32 << z);
        (
            ((515_000.0 + WEB_MERCATOR_HALF_WORLD) / span) as u32,
            ((WEB_MERCATOR_HALF_WORLD - 6_815_000.0) / span) as u32,
        )
    };
    let (x, y) = tile_of(4);
    assert!(layer.tile(4, x, y, &options()).is_empty());
    let (x, y) = tile_of(12);
    assert!(!layer.tile(12, x, y, &options()).is_empty());
    let mut found = Vec::new();
    let frame = Frame::tile(4, tile_of(4).0, tile_of(4).1, 4096, 64, 1.0);
    layer.tree.query(&frame.area, frame.threshold, &mut found);
    assert!(found.is_empty(), "the tree prunes them");
}

#[test]
fn layers_are_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<VectorLayer>();
    let (layer, _) = random_layer();
    let layer = std::sync::Arc::new(layer);
    let expected = layer.tile(7, 65, 42, &options());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let layer = layer.clone();
            std::thread::spawn(move || {
                (
                    layer.tile(6, 32, 21, &options()),
                    layer.tile(7, 65, 42, &options()),
                )
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (six, seven) in &results {
        assert_eq!(six, &results[0].0);
        assert_eq!(seven, &expected);
    }
}

#[test]
fn the_layer_reports_its_box_and_size() {
    let (layer, _) = random_layer();
    assert_eq!(layer.len(), 2_000);
    let bounds = layer.bounds().unwrap();
    assert!(bounds.is_valid() && bounds.width() > 0.0);
    let before = layer.approximate_bytes();
    assert!(before > 2_000 * 10 * 16, "{before}");
    layer.tile(6, 32, 21, &options());
    assert_eq!(
        layer.approximate_bytes(),
        before,
        "levels are counted in advance"
    );
    assert!(format!("{layer:?}").contains("random"));
}

#[test]
fn deep_nesting_and_extreme_coordinates_do_not_break_tiles() {
    let mut nested = Geometry::Point(Coord::xy(1000.0, 1000.0));
    for _ in 0..100 {
        nested = Geometry::GeometryCollection(vec![nested]);
    }
    let far = 1e300;
    let features = vec![
        feature(nested, vec![]),
        feature(
            Geometry::Polygon(vec![vec![
                Coord::xy(-far, -far),
                Coord::xy(far, -far),
                Coord::xy(far, far),
                Coord::xy(-far, far),
                Coord::xy(-far, -far),
            ]]),
            vec![],
        ),
        feature(
            Geometry::LineString(vec![Coord::xy(-far, 0.0), Coord::xy(far, 1.0)]),
            vec![],
        ),
        feature(Geometry::Point(Coord::xy(f64::MAX, f64::MIN)), vec![]),
    ];
    let layer = layer_of(features);
    assert_eq!(layer.len(), 4);
    for (z, x, y) in [
        (0, 0, 0),
        (3, 4, 3),
        (8, 128, 127),
        (20, 1 << 19, 1 << 19),
        (30, 0, 0),
    ] {
        let tile = layer.tile(z, x, y, &options());
        for feature in &decode_one(&tile).features {
            if feature.kind == 3 {
                // Cut from 1e300 away, the edges are only as exact as f64 allows there; the
                // ring must still be a valid one.
                assert_valid_polygons(feature, -64, 4160);
            }
        }
    }
}

/// Xorshift: reproducible noise without a dependency.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A position near tile 12/2100/1360, or NaN, infinite, absurdly far or repeated.
    fn coordinate(&mut self) -> Coord {
        let pick = self.next() % 20;
        let u = (self.next() % 6000) as f64 - 1000.0 + (self.next() % 100) as f64 / 100.0;
        let v = (self.next() % 6000) as f64 - 1000.0;
        match pick {
            0 => Coord::xy(f64::NAN, v),
            1 => Coord::xy(u, f64::NEG_INFINITY),
            2 => Coord::xy(1e300, -1e300),
            3 => Coord::xy(0.0, 0.0),
            _ => at(12, 2100, 1360, u, v),
        }
    }

    fn feature(&mut self, i: u64) -> VectorFeature {
        let count = (self.next() % 12) as usize;
        let mut line: Vec<Coord> = (0..count).map(|_| self.coordinate()).collect();
        if self.next().is_multiple_of(3) && !line.is_empty() {
            line.push(line[0]);
        }
        if self.next().is_multiple_of(5) && line.len() > 2 {
            line[1] = line[0];
        }
        let geometry = match self.next() % 7 {
            0 => Geometry::MultiPoint(line),
            1 => Geometry::LineString(line),
            2 => Geometry::MultiLineString(vec![line.clone(), line]),
            3 => Geometry::Polygon(vec![line.clone(), line.iter().rev().copied().collect()]),
            4 => Geometry::MultiPolygon(vec![vec![line.clone()], vec![], vec![line]]),
            5 => Geometry::GeometryCollection(vec![
                Geometry::Polygon(vec![line.clone()]),
                Geometry::LineString(line.clone()),
                Geometry::Point(line.first().copied().unwrap_or(Coord::xy(0.0, 0.0))),
            ]),
            _ => Geometry::Polygon(vec![line]),
        };
        let text = "x".repeat((self.next() % 300) as usize);
        VectorFeature {
            id: (!i.is_multiple_of(4)).then_some(self.next()),
            geometry,
            properties: vec![
                Some(PropertyValue::Float(f64::from_bits(self.next()))),
                Some(PropertyValue::Int(self.next() as i64)),
                self.next()
                    .is_multiple_of(2)
                    .then_some(PropertyValue::Text(text)),
            ],
        }
    }

    fn options(&mut self) -> TileOptions {
        TileOptions {
            extent: [4096, 512, 1, 2, EXTENT_MAX, 0][(self.next() % 6) as usize],
            buffer: [64, 0, 1, 4096, u32::MAX][(self.next() % 5) as usize],
            simplify_tolerance: [1.0, 0.0, 0.3, 50.0, 1e300][(self.next() % 5) as usize],
        }
    }
}

#[test]
fn random_hostile_input_never_breaks_a_tile() {
    let mut noise = Noise(5);
    let features = (0..3_000).map(|i| noise.feature(i)).collect();
    let layer = VectorLayer::new("hostile", vec!["a".into(), "b".into()], features);
    let mut drawn = 0;
    for round in 0..1_500 {
        let z = (noise.next() % 33) as u8;
        let (x, y) = if z <= 12 && round % 2 == 0 {
            (2100 >> (12 - z), 1360 >> (12 - z))
        } else {
            let shift = noise.next() % 32;
            (noise.next() as u32 >> shift, noise.next() as u32 >> shift)
        };
        let options = noise.options();
        let tile = layer.tile(z, x, y, &options);
        if tile.is_empty() {
            continue;
        }
        drawn += 1;
        let bound = i64::from(options.buffer);
        for feature in &decode_one(&tile).features {
            if feature.kind == 3 {
                assert_valid_polygons(feature, -bound, i64::from(options.extent) + bound);
            }
        }
    }
    assert!(drawn > 50, "{drawn} tiles drawn");
}

#[test]
fn a_tile_inside_a_hole_shows_nothing_of_the_polygon() {
    // Tile 12/2100/1368 sits in the middle of its level-8 parent (column 4, row 8 of 16).
    let (z, x, y) = (12, 2100, 1368);
    // A country with a lake: the lake spans tiles x - 1 to x + 1; the country far more.
    let country = ring(
        z,
        x,
        y,
        &[
            (-40_000.0, -40_000.0),
            (40_000.0, -40_000.0),
            (40_000.0, 40_000.0),
            (-40_000.0, 40_000.0),
        ],
    );
    let lake = ring(
        z,
        x,
        y,
        &[
            (-4096.0, -4096.0),
            (-4096.0, 8192.0),
            (8192.0, 8192.0),
            (8192.0, -4096.0),
        ],
    );
    let features = vec![feature(Geometry::Polygon(vec![country, lake]), vec![])];
    let layer = layer_of(features.clone());
    let direct = VectorLayer {
        levels: Levels::new(0),
        ..layer_of(features)
    };
    for layer in [&layer, &direct] {
        assert!(layer.tile(z, x, y, &options()).is_empty());
        // Two columns over is the shore: land, and a 64-unit strip of lake in the buffer.
        let shore = decode_one(&layer.tile(z, x + 2, y, &options()));
        let polygon = &shore.features[0];
        assert_valid_polygons(polygon, -64, 4160);
        assert_eq!(polygon.parts.len(), 2);
        assert_eq!(-doubled_area(&polygon.parts[1]), 2 * 64 * 4224);
        // At level 8 (generalised in `layer`) the lake is a hole of 3 x 3 level-12 tiles.
        let parent = decode_one(&layer.tile(z - 4, x >> 4, y >> 4, &options()));
        let polygon = &parent.features[0];
        assert_valid_polygons(polygon, -64, 4160);
        assert_eq!(polygon.parts.len(), 2);
        assert_eq!(-doubled_area(&polygon.parts[1]), 2 * 768 * 768);
        let mut corners = polygon.parts[1].clone();
        corners.sort_unstable();
        assert_eq!(corners[0], [4 * 256 - 256, 8 * 256 - 256]);
    }
}

#[test]
fn an_archipelago_shows_only_the_islands_in_the_tile() {
    // 1,000 islands, one per level-12 tile along a row, every other tile: one feature.
    let (z, y) = (12, 1360);
    let islands: Vec<Vec<Vec<Coord>>> = (0..1_000)
        .map(|i| {
            let x = 2000 + 2 * i;
            vec![ring(
                z,
                x,
                y,
                &[(100.0, 100.0), (900.0, 100.0), (500.0, 900.0)],
            )]
        })
        .collect();
    let layer = layer_of(vec![feature(Geometry::MultiPolygon(islands), vec![])]);
    let here = decode_one(&layer.tile(z, 2010, y, &options()));
    assert_eq!(here.features[0].parts.len(), 1);
    let mut corners = here.features[0].parts[0].clone();
    corners.sort_unstable();
    assert_eq!(corners, [[100, 100], [500, 900], [900, 100]]);
    assert!(
        layer.tile(z, 2011, y, &options()).is_empty(),
        "between two islands"
    );
    // Level 11 tile 1005 covers 2010 and 2011; the island of 2012 starts 50 units past its
    // edge, in the buffer.
    let parent = decode_one(&layer.tile(z - 1, 1005, y / 2, &options()));
    let parts = &parent.features[0].parts;
    assert_eq!(parts.len(), 2);
    assert!(
        parts[1].iter().all(|p| (4146..=4160).contains(&p[0])),
        "{parts:?}"
    );
}

//! How the Shapefile reader groups a polygon record's rings (issue 11), on crafted files whose
//! rings are stored exactly as given: each case says what OGR (GDAL 3.6, `ogr2ogr -f
//! GeoJSON`) gives, which Basin matches where OGR's result is a valid polygon;
//! tests/python/test_polygons_gdal.py runs the same cases against ogr2ogr itself.

use std::path::{Path, PathBuf};

use basin_formats::catalogue::{ReadContext, Reader};
use basin_formats::model::{Coord, Data, Dataset, Geometry, Line};
use basin_formats::shp::ShpReader;
use basin_formats::{FormatResult, Parameters};

fn ring(points: &[(f64, f64)]) -> Line {
    points.iter().map(|(x, y)| Coord::xy(*x, *y)).collect()
}

/// A closed square from (x, y) with side `size`, clockwise (an exterior) or not (a hole).
fn square(x: f64, y: f64, size: f64, clockwise: bool) -> Line {
    let mut points = ring(&[
        (x, y),
        (x, y + size),
        (x + size, y + size),
        (x + size, y),
        (x, y),
    ]);
    if !clockwise {
        points.reverse();
    }
    points
}

/// The header of a .shp or .shx of polygons, `words` long in all.
fn header(words: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&9994i32.to_be_bytes());
    bytes.extend_from_slice(&[0u8; 20]);
    bytes.extend_from_slice(&(words as i32).to_be_bytes());
    bytes.extend_from_slice(&1000i32.to_le_bytes());
    bytes.extend_from_slice(&5i32.to_le_bytes());
    bytes.extend_from_slice(&[0u8; 64]);
    bytes
}

/// Writes `name.shp` and `name.shx` of one polygon record of `rings`, stored as given (no
/// closing, no turning).
fn polygon_file(folder: &Path, name: &str, rings: &[Line]) -> PathBuf {
    let points: Vec<&Coord> = rings.iter().flatten().collect();
    let mut content = Vec::new();
    content.extend_from_slice(&5i32.to_le_bytes());
    let min_x = points.iter().map(|c| c.x).fold(f64::INFINITY, f64::min);
    let min_y = points.iter().map(|c| c.y).fold(f64::INFINITY, f64::min);
    let max_x = points.iter().map(|c| c.x).fold(f64::NEG_INFINITY, f64::max);
    let max_y = points.iter().map(|c| c.y).fold(f64::NEG_INFINITY, f64::max);
    for value in [min_x, min_y, max_x, max_y] {
        content.extend_from_slice(&value.to_le_bytes());
    }
    content.extend_from_slice(&(rings.len() as i32).to_le_bytes());
    content.extend_from_slice(&(points.len() as i32).to_le_bytes());
    let mut start = 0i32;
    for ring in rings {
        content.extend_from_slice(&start.to_le_bytes());
        start += ring.len() as i32;
    }
    for point in &points {
        content.extend_from_slice(&point.x.to_le_bytes());
        content.extend_from_slice(&point.y.to_le_bytes());
    }
    let mut shp = header((100 + 8 + content.len()) / 2);
    shp.extend_from_slice(&1i32.to_be_bytes());
    shp.extend_from_slice(&((content.len() / 2) as i32).to_be_bytes());
    shp.extend_from_slice(&content);
    let mut shx = header((100 + 8) / 2);
    shx.extend_from_slice(&50i32.to_be_bytes());
    shx.extend_from_slice(&((content.len() / 2) as i32).to_be_bytes());
    let path = folder.join(format!("{name}.shp"));
    std::fs::write(&path, shp).unwrap();
    std::fs::write(folder.join(format!("{name}.shx")), shx).unwrap();
    path
}

fn read_geometry(rings: &[Line]) -> FormatResult<Geometry> {
    let folder = tempfile::tempdir().unwrap();
    let path = polygon_file(folder.path(), "rings", rings);
    let dataset = Dataset::collect(|sink| {
        ShpReader.read(&path, &Parameters::default(), &ReadContext::default(), sink)
    })?;
    let Data::Features(features) = dataset.data else {
        panic!("not features")
    };
    Ok(features[0].geometry.clone().unwrap())
}

fn polygon(rings: &[&Line]) -> Vec<Line> {
    rings.iter().map(|ring| (*ring).clone()).collect()
}

#[test]
fn islands_in_holes_are_polygons_of_their_own_as_in_ogr() {
    let (big, big_hole) = (square(0., 0., 10., true), square(1., 1., 8., false));
    let (island, island_hole) = (square(3., 3., 4., true), square(4., 4., 2., false));
    let geometry = read_geometry(&[
        big.clone(),
        island.clone(),
        big_hole.clone(),
        island_hole.clone(),
    ])
    .unwrap();
    assert_eq!(
        geometry,
        Geometry::MultiPolygon(vec![
            polygon(&[&big, &big_hole]),
            polygon(&[&island, &island_hole])
        ])
    );
}

#[test]
fn a_lake_in_an_island_in_a_lake_nests_as_in_ogr() {
    let rings = [
        square(0., 0., 10., true),
        square(1., 1., 8., false),
        square(2., 2., 6., true),
        square(3., 3., 4., false),
        square(4., 4., 2., true),
    ];
    let geometry = read_geometry(&rings).unwrap();
    assert_eq!(
        geometry,
        Geometry::MultiPolygon(vec![
            polygon(&[&rings[0], &rings[1]]),
            polygon(&[&rings[2], &rings[3]]),
            polygon(&[&rings[4]]),
        ])
    );
}

#[test]
fn a_hole_before_its_exterior_joins_it_as_in_ogr() {
    let hole = square(1., 1., 1., false);
    let exterior = square(0., 0., 4., true);
    let geometry = read_geometry(&[hole.clone(), exterior.clone()]).unwrap();
    assert_eq!(geometry, Geometry::Polygon(vec![exterior, hole]));
}

#[test]
fn holes_touching_their_exterior_join_it_as_in_ogr() {
    let exterior = square(0., 0., 4., true);
    let other = square(10., 10., 1., true);
    // Starts on the exterior's edge; then a diamond whose corners all lie on the outline.
    let touching = ring(&[(0., 1.), (2., 1.), (2., 3.), (0., 1.)]);
    let diamond = ring(&[(2., 0.), (4., 2.), (2., 4.), (0., 2.), (2., 0.)]);
    for hole in [touching, diamond] {
        let geometry = read_geometry(&[exterior.clone(), other.clone(), hole.clone()]).unwrap();
        assert_eq!(
            geometry,
            Geometry::MultiPolygon(vec![polygon(&[&exterior, &hole]), polygon(&[&other])])
        );
    }
}

#[test]
fn disjoint_counter_clockwise_rings_are_polygons_as_in_ogr() {
    let (a, b) = (square(0., 0., 1., false), square(5., 5., 1., false));
    let geometry = read_geometry(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(geometry, Geometry::MultiPolygon(vec![vec![a], vec![b]]));
    let single = square(0., 0., 1., false);
    assert_eq!(
        read_geometry(std::slice::from_ref(&single)).unwrap(),
        Geometry::Polygon(vec![single])
    );
}

#[test]
fn unclosed_rings_are_grouped_and_kept_unclosed_as_in_ogr() {
    let mut exterior = square(0., 0., 4., true);
    exterior.pop();
    let mut hole = square(1., 1., 1., false);
    hole.pop();
    let geometry = read_geometry(&[exterior.clone(), hole.clone()]).unwrap();
    assert_eq!(geometry, Geometry::Polygon(vec![exterior, hole]));
}

/// Basin differs from OGR here on purpose: OGR's result is invalid (docs/formats.md).
#[test]
fn winding_that_contradicts_nesting_is_grouped_by_nesting() {
    // OGR: the outside "hole" becomes a hole of the only exterior.
    let (exterior, far) = (square(0., 0., 1., true), square(5., 5., 1., false));
    assert_eq!(
        read_geometry(&[exterior.clone(), far.clone()]).unwrap(),
        Geometry::MultiPolygon(vec![vec![exterior], vec![far]])
    );
    // OGR: the small clockwise ring is the exterior and the large one its hole.
    let (large, small) = (square(0., 0., 4., false), square(1., 1., 1., true));
    assert_eq!(
        read_geometry(&[large.clone(), small.clone()]).unwrap(),
        Geometry::Polygon(vec![large, small])
    );
    // OGR: two overlapping polygons.
    let (outer, inner) = (square(0., 0., 4., false), square(1., 1., 1., false));
    assert_eq!(
        read_geometry(&[outer.clone(), inner.clone()]).unwrap(),
        Geometry::Polygon(vec![outer, inner])
    );
}

/// Basin differs from OGR here on purpose: OGR makes the flat rings holes (docs/formats.md).
#[test]
fn flat_rings_are_polygons_of_their_own() {
    let exterior = square(0., 0., 4., true);
    let hole = square(1., 1., 1., false);
    let spike = ring(&[(2., 2.), (3., 3.), (2., 2.)]);
    let geometry = read_geometry(&[exterior.clone(), hole.clone(), spike.clone()]).unwrap();
    assert_eq!(
        geometry,
        Geometry::MultiPolygon(vec![vec![exterior, hole], vec![spike]])
    );
}

/// Census block groups (tests/corpus/pyshp): which records have holes and several parts, as
/// `ogr2ogr -f GeoJSON` gives them (holes per polygon of each record that is not a plain
/// Polygon).
#[test]
fn real_block_groups_are_grouped_as_ogr_groups_them() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/pyshp/blockgroups.shp");
    let dataset = Dataset::collect(|sink| {
        ShpReader.read(&path, &Parameters::default(), &ReadContext::default(), sink)
    })
    .unwrap();
    let Data::Features(features) = dataset.data else {
        panic!("not features")
    };
    assert_eq!(features.len(), 663);
    let mut grouped = Vec::new();
    for (index, feature) in features.iter().enumerate() {
        let (multi, polygons) = match feature.geometry.as_ref().unwrap() {
            Geometry::Polygon(rings) => (false, vec![rings.clone()]),
            Geometry::MultiPolygon(polygons) => (true, polygons.clone()),
            other => panic!("{other:?}"),
        };
        let holes: Vec<usize> = polygons.iter().map(|rings| rings.len() - 1).collect();
        if multi || holes != [0] {
            grouped.push((index, multi, holes));
        }
    }
    let expected = vec![
        (0, true, vec![0, 1, 0]),
        (4, true, vec![0, 0, 0]),
        (6, true, vec![0, 0]),
        (30, false, vec![1]),
        (32, true, vec![0, 0]),
        (99, false, vec![1]),
        (168, false, vec![1]),
        (170, true, vec![0, 0]),
        (270, true, vec![0, 0]),
        (380, true, vec![0, 0]),
        (386, true, vec![0, 0]),
        (502, false, vec![1]),
        (611, false, vec![1]),
    ];
    assert_eq!(grouped, expected);
}

//! Position queries on the DFS samples of tests/corpus/dfs-samples, whose expected values
//! (written by MIKE IO, listed in each sample's .json) are checked value for value.

#![expect(clippy::panic, reason = "the helpers of a test fail it as a test does")]

use std::path::PathBuf;

use basin_edr::position::PositionQuery;
use basin_edr::{Dataset, EdrError, Limits};
use basin_formats::Catalogue;
use basin_formats::crs::{CrsTransform, Projection};
use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/dfs-samples")
        .join(name)
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(sample(&format!("{name}.json"))).unwrap_or_default();
    // Python writes missing values as NaN, which JSON does not have.
    serde_json::from_str(&text.replace("NaN", "null")).unwrap_or(Value::Null)
}

fn query(
    coords: &str,
    datetime: Option<&str>,
    names: Option<&str>,
    crs: Option<&str>,
) -> PositionQuery {
    PositionQuery::parse(Some(coords), datetime, names, crs, &Limits::default())
        .unwrap_or_else(|error| panic!("{coords}: {error}"))
}

fn answer(name: &str, query: &PositionQuery) -> Result<basin_edr::coverage::Coverages, EdrError> {
    let catalogue = Catalogue::standard();
    let format = format!(".{}", name.rsplit('.').next().unwrap_or_default());
    let dataset = Dataset::describe(&catalogue, &format, &sample(name))?;
    query.answer(&catalogue, &dataset, &sample(name), &Limits::default())
}

fn as_f32(values: &[f64]) -> Vec<f32> {
    values.iter().map(|value| *value as f32).collect()
}

#[test]
fn a_mesh_position_gives_the_stored_values_of_the_element_holding_it() -> Result<(), EdrError> {
    let expected = expected("mesh2d_mixed.dfsu");
    let centres = expected["geometry"]["element_coordinates"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(centres.len(), 6);
    for (element, centre) in centres.iter().enumerate() {
        let (x, y) = (
            centre[0].as_f64().unwrap_or(f64::NAN),
            centre[1].as_f64().unwrap_or(f64::NAN),
        );
        let coords = format!("POINT({x} {y})");
        let answer = answer(
            "mesh2d_mixed.dfsu",
            &query(&coords, None, None, Some("EPSG:32632")),
        )?;
        assert_eq!(answer.parameters[0].id, "Surface elevation");
        assert_eq!(answer.times.len(), 5);
        for (index, name) in ["Surface elevation", "Current speed"]
            .into_iter()
            .enumerate()
        {
            let steps: Vec<f32> = expected["data"][name]
                .as_array()
                .into_iter()
                .flatten()
                .map(|step| step[element].as_f64().unwrap_or(f64::NAN) as f32)
                .collect();
            assert_eq!(
                as_f32(&answer.points[0].values[index]),
                steps,
                "{name} at element {element}"
            );
        }
    }
    Ok(())
}

#[test]
fn crs84_positions_are_transformed_to_the_dataset_system() -> Result<(), EdrError> {
    // The centre of element 0 (500050, 6100050 in UTM 32N), in longitude and latitude.
    let utm = Projection::epsg(32632)?;
    let wgs84 = Projection::epsg(4326)?;
    let (lon, lat) = CrsTransform::new(utm, wgs84).apply(500_050.0, 6_100_050.0)?;
    assert!(
        (lon - 9.000_78).abs() < 1e-4 && (lat - 55.03).abs() < 0.02,
        "{lon} {lat}"
    );
    let answer = answer(
        "mesh2d_mixed.dfsu",
        &query(
            &format!("POINT({lon} {lat})"),
            Some("2019-08-01T00:15:00Z"),
            Some("Surface elevation"),
            None,
        ),
    )?;
    assert_eq!(answer.times.len(), 1);
    assert_eq!(as_f32(&answer.points[0].values[0]), [1.0]);
    Ok(())
}

#[test]
fn a_grid_position_gives_the_value_of_its_cell() -> Result<(), EdrError> {
    let expected = expected("grid_utm32.dfs2");
    // Cell centres are x0 + i dx, y0 + j dy (MIKE's origin is the first cell's centre).
    for (column, row) in [(0, 0), (4, 3), (2, 1)] {
        let x = 500_000.0 + 100.0 * f64::from(column);
        let y = 6_100_000.0 + 200.0 * f64::from(row);
        let coords = format!("POINT({} {})", x + 10.0, y - 20.0);
        let answer = answer(
            "grid_utm32.dfs2",
            &query(&coords, None, Some("H"), Some("EPSG:32632")),
        )?;
        let steps: Vec<f32> = expected["data"]["H"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|step| {
                step[row as usize][column as usize]
                    .as_f64()
                    .unwrap_or(f64::NAN) as f32
            })
            .collect();
        assert_eq!(
            as_f32(&answer.points[0].values[0]),
            steps,
            "cell {column}, {row}"
        );
    }
    Ok(())
}

#[test]
fn positions_outside_the_data_have_no_values() -> Result<(), EdrError> {
    let outside = answer(
        "mesh2d_mixed.dfsu",
        &query("POINT(0 0)", None, None, Some("EPSG:32632")),
    );
    assert!(matches!(outside, Err(EdrError::NoData(_))), "{outside:?}");
    let some = answer(
        "mesh2d_mixed.dfsu",
        &query(
            "MULTIPOINT((500050 6100050), (0 0))",
            None,
            None,
            Some("EPSG:32632"),
        ),
    )?;
    assert!(some.multiple);
    assert!(
        some.points[1]
            .values
            .iter()
            .flatten()
            .all(|value| value.is_nan())
    );
    assert!(
        some.points[0]
            .values
            .iter()
            .flatten()
            .all(|value| value.is_finite())
    );
    Ok(())
}

#[test]
fn bad_queries_name_their_parameter() {
    let limits = Limits {
        positions_max: 2,
        values_max: 9,
    };
    for (coords, parameter) in [
        (Some("LINESTRING(0 0, 1 1)"), "coords"),
        (Some("POINT(1)"), "coords"),
        (Some("POINT EMPTY"), "coords"),
        (None, "coords"),
    ] {
        let error = PositionQuery::parse(coords, None, None, None, &limits).err();
        assert!(
            matches!(error, Some(EdrError::Invalid { parameter: p, .. }) if p == parameter),
            "{coords:?}: {error:?}"
        );
    }
    let error =
        PositionQuery::parse(Some("MULTIPOINT(1 1, 2 2, 3 3)"), None, None, None, &limits).err();
    assert!(matches!(error, Some(EdrError::TooLarge(_))), "{error:?}");
}

#[test]
fn a_query_past_the_value_limit_is_too_large_and_other_mistakes_name_their_parameter() {
    let limits = Limits {
        positions_max: 2,
        values_max: 9,
    };
    let too_many = PositionQuery::parse(
        Some("POINT(500050 6100050)"),
        None,
        None,
        Some("EPSG:32632"),
        &limits,
    );
    let catalogue = Catalogue::standard();
    let dataset = Dataset::describe(&catalogue, ".dfsu", &sample("mesh2d_mixed.dfsu"));
    if let (Ok(query), Ok(dataset)) = (too_many, dataset) {
        let error = query
            .answer(&catalogue, &dataset, &sample("mesh2d_mixed.dfsu"), &limits)
            .err();
        assert!(matches!(error, Some(EdrError::TooLarge(_))), "{error:?}");
    } else {
        panic!("the sample or the query did not parse");
    }
    let wrong_crs = answer(
        "mesh2d_mixed.dfsu",
        &query("POINT(1 1)", None, None, Some("EPSG:3857")),
    )
    .err();
    assert!(
        matches!(
            wrong_crs,
            Some(EdrError::Invalid {
                parameter: "crs",
                ..
            })
        ),
        "{wrong_crs:?}"
    );
    let unknown = answer(
        "mesh2d_mixed.dfsu",
        &query("POINT(1 1)", None, Some("Depth"), None),
    )
    .err();
    assert!(
        matches!(
            unknown,
            Some(EdrError::Invalid {
                parameter: "parameter-name",
                ..
            })
        ),
        "{unknown:?}"
    );
    let series = answer("ts_eq.dfs0", &query("POINT(1 1)", None, None, None)).err();
    assert!(
        matches!(series, Some(EdrError::NotSupported(_))),
        "{series:?}"
    );
}

//! Area and cube queries on the MIKE IO samples of tests/corpus/dfs-samples: which cells and
//! elements a region holds, their values, the grid window, and the statistics, against the
//! values MIKE IO wrote beside each sample.

use std::path::PathBuf;

use basin_edr::area::{AreaQuery, RegionParameters};
use basin_edr::coverage::Answer;
use basin_edr::{Dataset, EdrError, Limits};
use basin_formats::Catalogue;
use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus/dfs-samples")
        .join(name)
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(sample(&format!("{name}.json"))).unwrap_or_default();
    serde_json::from_str(&text.replace("NaN", "null")).unwrap_or(Value::Null)
}

fn answer(name: &str, query: &AreaQuery) -> Result<Answer, EdrError> {
    let catalogue = Catalogue::standard();
    let format = format!(".{}", name.rsplit('.').next().unwrap_or_default());
    let dataset = Dataset::describe(&catalogue, &format, &sample(name))?;
    query.answer(&catalogue, &dataset, &sample(name), &Limits::default())
}

fn native() -> RegionParameters<'static> {
    RegionParameters {
        crs: Some("EPSG:32632"),
        ..RegionParameters::default()
    }
}

/// Element `element`'s values of `item` over the steps, as MIKE IO wrote them.
fn stored(name: &str, item: &str, element: usize) -> Vec<f32> {
    expected(name)["data"][item]
        .as_array()
        .into_iter()
        .flatten()
        .map(|step| step[element].as_f64().unwrap_or(f64::NAN) as f32)
        .collect()
}

#[test]
fn an_area_holds_the_elements_whose_centres_are_in_it() -> Result<(), EdrError> {
    // Element 0's centre is (500050, 6100050) and element 5's (500150, 6100150); the polygon
    // is a thin diagonal band around both, missing the other centres.
    let band = "POLYGON((500040 6100040, 500060 6100040, 500160 6100140, 500160 6100160, \
                500140 6100160, 500040 6100060, 500040 6100040))";
    let query = AreaQuery::parse_area(Some(band), native(), &Limits::default())?;
    let Answer::Cells(cells) = answer("mesh2d_mixed.dfsu", &query)? else {
        panic!("a mesh answers with cells");
    };
    assert_eq!(
        cells.centres,
        [(500_050.0, 6_100_050.0), (500_150.0, 6_100_150.0)]
    );
    let steps = cells.times.len();
    assert_eq!(steps, 5);
    let values = &cells.values[0];
    for (cell, element) in [(0, 0), (1, 5)] {
        let got: Vec<f32> = (0..steps)
            .map(|step| values[step * 2 + cell] as f32)
            .collect();
        assert_eq!(
            got,
            stored("mesh2d_mixed.dfsu", "Surface elevation", element)
        );
    }
    Ok(())
}

#[test]
fn statistics_are_taken_over_the_elements_of_each_polygon() -> Result<(), EdrError> {
    let everything = "MULTIPOLYGON(((499000 6099000, 501000 6099000, 501000 6101000, \
                      499000 6101000, 499000 6099000)), ((500040 6100040, 500060 6100040, \
                      500060 6100060, 500040 6100040)))";
    let parameters = RegionParameters {
        statistics: Some("mean,max,count,p50"),
        parameter_names: Some("Current speed"),
        ..native()
    };
    let query = AreaQuery::parse_area(Some(everything), parameters, &Limits::default())?;
    let Answer::Statistics(statistics) = answer("mesh2d_mixed.dfsu", &query)? else {
        panic!("statistics were asked for");
    };
    assert_eq!(statistics.cells, [6, 1]);
    assert_eq!(statistics.statistics, ["mean", "max", "count", "p50"]);
    let data = &expected("mesh2d_mixed.dfsu")["data"]["Current speed"];
    for step in 0..5 {
        let all: Vec<f64> = (0..6)
            .map(|element| f64::from(data[step][element].as_f64().unwrap_or(f64::NAN) as f32))
            .collect();
        let mean = all.iter().sum::<f64>() / 6.0;
        let max = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut sorted = all.clone();
        sorted.sort_by(f64::total_cmp);
        let median = (sorted[2] + sorted[3]) / 2.0;
        let at =
            |statistic: usize, polygon: usize| statistics.values[0][statistic][step * 2 + polygon];
        assert!((at(0, 0) - mean).abs() < 1e-12, "step {step}");
        assert_eq!(at(1, 0), max);
        assert_eq!(at(2, 0), 6.0);
        assert!((at(3, 0) - median).abs() < 1e-12);
        assert_eq!(at(0, 1), all[0], "the small triangle holds element 0 alone");
    }
    Ok(())
}

#[test]
fn a_cube_of_a_north_up_grid_is_a_grid_window() -> Result<(), EdrError> {
    // Cell centres of grid_utm32 are 500000 + 100 i, 6100000 + 200 j (j from the south).
    let query = AreaQuery::parse_cube(Some("500050,6100100,500250,6100300"), native())?;
    let Answer::Grid(grid) = answer("grid_utm32.dfs2", &query)? else {
        panic!("a north-up grid answers with a grid");
    };
    // The grid's origin carries rounding from the file's projected origin: 1e-6 m is exact.
    let near = |a: &[f64], b: &[f64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(a, b)| (a - b).abs() < 1e-6)
    };
    assert!(near(&grid.xs, &[500_100.0, 500_200.0]), "{:?}", grid.xs);
    assert!(
        near(&grid.ys, &[6_100_200.0]),
        "only row 1's centre is inside: {:?}",
        grid.ys
    );
    let data = &expected("grid_utm32.dfs2")["data"]["H"];
    let steps = grid.times.len();
    for step in 0..steps {
        for (column, x) in [1, 2].into_iter().enumerate() {
            let want = data[step][1][x].as_f64().map(|value| value as f32);
            let got = grid.values[0][step * 2 + column];
            assert_eq!(
                got.is_finite().then_some(got as f32),
                want,
                "step {step} column {x}"
            );
        }
    }
    Ok(())
}

#[test]
fn regions_outside_the_data_and_bad_regions_are_refused() -> Result<(), EdrError> {
    let far = AreaQuery::parse_area(
        Some("POLYGON((0 0, 1 0, 1 1, 0 0))"),
        native(),
        &Limits::default(),
    )?;
    assert!(matches!(
        answer("mesh2d_mixed.dfsu", &far),
        Err(EdrError::NoData(_))
    ));
    for coords in [
        "POINT(1 2)",
        "POLYGON((0 0, 1 1, 0 0))",
        "POLYGON EMPTY",
        "POLYGON((0 0, 1 0, NaN 1, 0 0))",
    ] {
        let error = AreaQuery::parse_area(Some(coords), native(), &Limits::default()).err();
        assert!(
            matches!(
                error,
                Some(EdrError::Invalid {
                    parameter: "coords",
                    ..
                })
            ),
            "{coords}: {error:?}"
        );
    }
    for bbox in ["1,2,3", "1,2,0,5", "a,b,c,d", "1,2,3,4,5", "1,2,inf,5"] {
        let error = AreaQuery::parse_cube(Some(bbox), native()).err();
        assert!(
            matches!(
                error,
                Some(EdrError::Invalid {
                    parameter: "bbox",
                    ..
                })
            ),
            "{bbox}: {error:?}"
        );
    }
    let statistics = RegionParameters {
        statistics: Some("median"),
        ..native()
    };
    let error = AreaQuery::parse_area(
        Some("POLYGON((0 0, 1 0, 1 1, 0 0))"),
        statistics,
        &Limits::default(),
    )
    .err();
    assert!(
        matches!(
            error,
            Some(EdrError::Invalid {
                parameter: "statistics",
                ..
            })
        ),
        "{error:?}"
    );
    Ok(())
}

#[test]
fn a_grid_window_past_the_limit_is_refused_before_it_is_looked_through() -> Result<(), EdrError> {
    let huge = AreaQuery::parse_cube(Some("-1e9,-1e9,1e9,1e9"), native())?;
    let catalogue = Catalogue::standard();
    let dataset = Dataset::describe(&catalogue, ".dfs2", &sample("grid_utm32.dfs2"))?;
    let tight = Limits {
        positions_max: 10,
        values_max: 5,
    };
    let error = huge
        .answer(&catalogue, &dataset, &sample("grid_utm32.dfs2"), &tight)
        .err();
    assert!(matches!(error, Some(EdrError::TooLarge(_))), "{error:?}");
    Ok(())
}

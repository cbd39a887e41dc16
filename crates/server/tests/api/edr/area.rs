//! Area and cube queries and the GeoJSON and CSV answers: the cells and elements a region
//! holds, grid windows, statistics per polygon, and every way such a query is refused.

use reqwest::StatusCode;

use super::{expected, floats, new_project, upload_sample};

/// A thin band around the centres of elements 0 and 5 of mesh2d_mixed.dfsu, missing the
/// other centres (tests/corpus/dfs-samples/mesh2d_mixed.dfsu.json).
const BAND: &str = "POLYGON((500040 6100040, 500060 6100040, 500160 6100140, 500160 6100160, \
                    500140 6100160, 500040 6100060, 500040 6100040))";

const NATIVE: (&str, &str) = ("crs", "EPSG:32632");

api_test!(
    an_area_of_a_mesh_gives_the_elements_whose_centres_it_holds,
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let query = [
            ("coords", BAND),
            NATIVE,
            ("parameter-name", "Surface elevation"),
        ];
        let reply = app.edr().collection(&mesh).area(&query).await;
        assert_eq!(
            reply.headers()["content-type"],
            "application/prs.coverage+json"
        );
        let coverage = reply.expect(StatusCode::OK);
        assert_eq!(coverage["domain"]["domainType"], "MultiPointSeries");
        assert_eq!(
            coverage["domain"]["axes"]["composite"]["values"],
            serde_json::json!([[500050.0, 6100050.0], [500150.0, 6100150.0]])
        );
        let range = &coverage["ranges"]["Surface elevation"];
        assert_eq!(range["axisNames"], serde_json::json!(["t", "composite"]));
        assert_eq!(range["shape"], serde_json::json!([5, 2]));
        let data = &expected("mesh2d_mixed.dfsu")["data"]["Surface elevation"];
        let want: Vec<Option<f32>> = (0..5)
            .flat_map(|step| [0, 5].map(|element| data[step][element].as_f64().map(|v| v as f32)))
            .collect();
        assert_eq!(floats(&range["values"]), want);
    }
);

api_test!(
    area_statistics_are_per_step_and_polygon_in_every_format,
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let everything = "POLYGON((499000 6099000, 501000 6099000, 501000 6101000, 499000 \
                          6101000, 499000 6099000))";
        let mut query = vec![
            ("coords", everything),
            NATIVE,
            ("parameter-name", "Surface elevation"),
            ("statistics", "min,max,count"),
        ];
        let coverage = app.edr().collection(&mesh).area(&query).await;
        let coverage = coverage.expect(StatusCode::OK);
        assert_eq!(coverage["domain"]["domainType"], "PolygonSeries");
        // Surface elevation is step + element / 10 (0.0 to 0.5 at the first step).
        let min = floats(&coverage["ranges"]["Surface elevation:min"]["values"]);
        let max = floats(&coverage["ranges"]["Surface elevation:max"]["values"]);
        let count = floats(&coverage["ranges"]["Surface elevation:count"]["values"]);
        assert_eq!(min, [0.0, 1.0, 2.0, 3.0, 4.0].map(Some));
        assert_eq!(max, [0.5, 1.5, 2.5, 3.5, 4.5].map(Some));
        assert_eq!(count, [6.0; 5].map(Some));
        query.push(("f", "CSV"));
        let csv = app.edr().collection(&mesh).area(&query).await;
        assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
        let lines: Vec<&str> = csv.text().lines().collect();
        assert_eq!(
            lines[0],
            "polygon,datetime,Surface elevation:min,Surface elevation:max,Surface elevation:count"
        );
        assert_eq!(lines[1], "0,2019-08-01T00:00:00Z,0.0,0.5,6.0");
        assert_eq!(lines.len(), 6);
        query.pop();
        query.push(("f", "geojson"));
        let geojson = app.edr().collection(&mesh).area(&query).await;
        assert_eq!(geojson.headers()["content-type"], "application/geo+json");
        let geojson = geojson.expect(StatusCode::OK);
        assert_eq!(geojson["type"], "FeatureCollection");
        assert_eq!(
            geojson["crs"]["properties"]["name"],
            "http://www.opengis.net/def/crs/EPSG/0/32632"
        );
        let feature = &geojson["features"][4];
        assert_eq!(feature["geometry"]["type"], "Polygon");
        assert_eq!(feature["properties"]["datetime"], "2019-08-01T01:00:00Z");
        assert_eq!(feature["properties"]["Surface elevation:max"], 4.5);
    }
);

api_test!(a_cube_of_a_grid_is_a_grid_window, |app| {
    let project = new_project(&app, "results").await;
    let grid = upload_sample(&app, &project, "grid.dfs2", "grid_utm32.dfs2").await;
    let query = [
        ("bbox", "500050,6100100,500250,6100300"),
        NATIVE,
        ("parameter-name", "H"),
    ];
    let coverage = app
        .edr()
        .collection(&grid)
        .cube(&query)
        .await
        .expect(StatusCode::OK);
    assert_eq!(coverage["domain"]["domainType"], "Grid");
    let xs = floats(&coverage["domain"]["axes"]["x"]["values"]);
    assert_eq!(xs, [Some(500_100.0), Some(500_200.0)]);
    let range = &coverage["ranges"]["H"];
    assert_eq!(range["axisNames"], serde_json::json!(["t", "y", "x"]));
    assert_eq!(range["shape"], serde_json::json!([3, 1, 2]));
    let data = &expected("grid_utm32.dfs2")["data"]["H"];
    let want: Vec<Option<f32>> = (0..3)
        .flat_map(|step| [1, 2].map(|x| data[step][1][x].as_f64().map(|v| v as f32)))
        .collect();
    assert_eq!(floats(&range["values"]), want);
    // As CSV: one line per cell and step, in the grid's own coordinates.
    let csv = app
        .edr()
        .collection(&grid)
        .cube(&[query[0], query[1], query[2], ("f", "csv")])
        .await;
    let lines: Vec<String> = csv.text().lines().map(str::to_owned).collect();
    assert_eq!(lines[0], "x,y,datetime,H");
    assert_eq!(lines.len(), 1 + 2 * 3);
});

api_test!(bad_region_queries_are_refused_naming_the_parameter, |app| {
    let project = new_project(&app, "results").await;
    let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
    let collection = app.edr().collection(&mesh);
    let square = "POLYGON((0 0, 1 0, 1 1, 0 0))";
    for (query, field) in [
        (vec![], "coords"),
        (vec![("coords", "POINT(1 1)")], "coords"),
        (vec![("coords", "POLYGON((0 0, 1 1, 0 0))")], "coords"),
        (vec![("coords", square), ("bbox", "0,0,1,1")], "bbox"),
        (
            vec![("coords", square), ("statistics", "median")],
            "statistics",
        ),
        (vec![("coords", square), ("f", "xml")], "f"),
    ] {
        let reply = collection.area(&query).await;
        let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
        assert!(problem["errors"][field].is_array(), "{query:?}: {problem}");
    }
    for (query, field) in [
        (vec![], "bbox"),
        (vec![("bbox", "1,2,3")], "bbox"),
        (vec![("bbox", "3,2,1,4")], "bbox"),
        (vec![("bbox", "0,0,1,1"), ("coords", square)], "coords"),
        (
            vec![("bbox", "0,0,1,1"), ("statistics", "mean")],
            "statistics",
        ),
    ] {
        let reply = collection.cube(&query).await;
        let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
        assert!(problem["errors"][field].is_array(), "{query:?}: {problem}");
    }
    let outside = collection.area(&[("coords", square), NATIVE]).await;
    assert_eq!(outside.status(), StatusCode::NO_CONTENT);
    let outside = collection.cube(&[("bbox", "0,0,1,1"), NATIVE]).await;
    assert_eq!(outside.status(), StatusCode::NO_CONTENT);
});

api_test_with!(
    regions_past_the_limits_are_413,
    |config| config.edr.values_max = std::num::NonZeroUsize::new(9).unwrap(),
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let grid = upload_sample(&app, &project, "grid.dfs2", "grid_utm32.dfs2").await;
        // Two elements x 1 parameter x 5 steps = 10 values.
        let query = [
            ("coords", BAND),
            NATIVE,
            ("parameter-name", "Surface elevation"),
        ];
        let reply = app.edr().collection(&mesh).area(&query).await;
        reply.problem(StatusCode::PAYLOAD_TOO_LARGE, "answer-too-large");
        let huge = [("bbox", "-1e9,-1e9,1e9,1e9"), NATIVE];
        let reply = app.edr().collection(&grid).cube(&huge).await;
        reply.problem(StatusCode::PAYLOAD_TOO_LARGE, "answer-too-large");
    }
);

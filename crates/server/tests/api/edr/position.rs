//! Position queries: the stored values of the element or cell holding each point, at the
//! selected times, as CoverageJSON; and every way a query can be refused.

use reqwest::StatusCode;
use serde_json::Value;

use super::{expected, floats, new_project, upload_sample};

/// The values of `item` of `sample` at `element` (a mesh element, or `[row][column]` of a
/// grid given as `cell`), one per step, as MIKE IO read them.
fn stored(sample: &str, item: &str, pick: impl Fn(&Value) -> &Value) -> Vec<Option<f32>> {
    let expected = expected(sample);
    expected["data"][item]
        .as_array()
        .unwrap_or_else(|| panic!("no data of {item}"))
        .iter()
        .map(|step| pick(step).as_f64().map(|value| value as f32))
        .collect()
}

api_test!(
    a_point_gives_every_parameter_of_the_element_holding_it_at_every_step,
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let reply = app
            .edr()
            .collection(&mesh)
            .position(&[("coords", "POINT(500150 6100150)"), ("crs", "EPSG:32632")])
            .await;
        assert_eq!(
            reply.headers()["content-type"],
            "application/prs.coverage+json"
        );
        let coverage = reply.expect(StatusCode::OK);
        assert_eq!(coverage["type"], "Coverage");
        assert_eq!(coverage["domain"]["domainType"], "PointSeries");
        assert_eq!(coverage["domain"]["axes"]["x"]["values"][0], 500150.0);
        assert_eq!(
            coverage["domain"]["axes"]["t"]["values"],
            serde_json::json!([
                "2019-08-01T00:00:00Z",
                "2019-08-01T00:15:00Z",
                "2019-08-01T00:30:00Z",
                "2019-08-01T00:45:00Z",
                "2019-08-01T01:00:00Z"
            ])
        );
        assert_eq!(
            coverage["domain"]["referencing"][0]["system"]["id"],
            "http://www.opengis.net/def/crs/EPSG/0/32632"
        );
        // (500150, 6100150) is inside element 5, the quad of nodes 4, 5, 8, 7.
        for item in ["Surface elevation", "Current speed"] {
            assert_eq!(
                floats(&coverage["ranges"][item]["values"]),
                stored("mesh2d_mixed.dfsu", item, |step| &step[5]),
                "{item}"
            );
            assert_eq!(
                coverage["ranges"][item]["axisNames"],
                serde_json::json!(["t"])
            );
        }
        assert_eq!(
            coverage["parameters"]["Surface elevation"]["unit"]["symbol"],
            "m"
        );
    }
);

api_test!(
    datetime_parameter_name_and_multipoint_select_what_is_answered,
    |app| {
        let project = new_project(&app, "results").await;
        let grid = upload_sample(&app, &project, "grid.dfs2", "grid_utm32.dfs2").await;
        // Cell (column 2, row 1 from the south) has its centre at (500200, 6100200).
        let reply = app
            .edr()
            .collection(&grid)
            .position(&[
                ("coords", "MULTIPOINT((500210 6100190), (1 1))"),
                ("crs", "http://www.opengis.net/def/crs/EPSG/0/32632"),
                ("parameter-name", "H"),
                ("datetime", "../2021-03-01T12:10:00Z"),
            ])
            .await;
        let collection = reply.expect(StatusCode::OK);
        assert_eq!(collection["type"], "CoverageCollection");
        // The first two of the three steps (12:00, 12:10, 12:20) are up to 12:10.
        let inside = &collection["coverages"][0];
        assert_eq!(
            inside["domain"]["axes"]["t"]["values"],
            serde_json::json!(["2021-03-01T12:00:00Z", "2021-03-01T12:10:00Z"])
        );
        let all = stored("grid_utm32.dfs2", "H", |step| &step[1][2]);
        assert_eq!(floats(&inside["ranges"]["H"]["values"]), all[..2]);
        assert_eq!(
            collection["parameters"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["H"]
        );
        // The point outside the grid is in the answer, without values.
        let outside = floats(&collection["coverages"][1]["ranges"]["H"]["values"]);
        assert!(outside.iter().all(Option::is_none), "{outside:?}");
    }
);

api_test!(a_query_outside_the_data_or_its_times_is_204, |app| {
    let project = new_project(&app, "results").await;
    let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
    let collection = app.edr().collection(&mesh);
    for query in [
        vec![("coords", "POINT(0 0)"), ("crs", "EPSG:32632")],
        vec![("coords", "POINT(-170 -80)")],
        vec![
            ("coords", "POINT(500050 6100050)"),
            ("crs", "EPSG:32632"),
            ("datetime", "2030-01-01T00:00:00Z/.."),
        ],
        vec![
            ("coords", "POINT(500050 6100050)"),
            ("crs", "EPSG:32632"),
            ("datetime", "2019-08-01T00:07:00Z"),
        ],
    ] {
        let reply = collection.position(&query).await;
        assert_eq!(
            reply.status(),
            StatusCode::NO_CONTENT,
            "{query:?}: {}",
            reply.text()
        );
        assert!(reply.bytes().is_empty());
    }
});

api_test!(bad_position_queries_are_400_naming_the_parameter, |app| {
    let project = new_project(&app, "results").await;
    let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
    let collection = app.edr().collection(&mesh);
    let point = ("coords", "POINT(500050 6100050)");
    let native = ("crs", "EPSG:32632");
    for (query, field) in [
        (vec![], "coords"),
        (vec![("coords", "")], "coords"),
        (vec![("coords", "POINT(1)")], "coords"),
        (vec![("coords", "LINESTRING(0 0, 1 1)")], "coords"),
        (vec![("coords", "POINT(NaN 1)")], "coords"),
        (vec![point, ("crs", "EPSG:4326x")], "crs"),
        (vec![point, ("crs", "EPSG:3857")], "crs"),
        (vec![point, native, ("datetime", "yesterday")], "datetime"),
        (
            vec![
                point,
                native,
                ("datetime", "2020-02-01T00:00:00Z/2020-01-01T00:00:00Z"),
            ],
            "datetime",
        ),
        (
            vec![point, native, ("parameter-name", "Depth")],
            "parameter-name",
        ),
        (vec![point, native, ("z", "-5")], "z"),
        (vec![point, native, ("f", "GeoJSON-LD")], "f"),
    ] {
        let reply = collection.position(&query).await;
        let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
        assert!(problem["errors"][field].is_array(), "{query:?}: {problem}");
    }
    let nul = collection.position(&[("coords", "POINT(1 2)\u{0}")]).await;
    nul.problem(StatusCode::BAD_REQUEST, "validation");
    let series = upload_sample(&app, &project, "gauge.dfs0", "ts_eq.dfs0").await;
    // A time series is a collection without space: a position of it is not a query it takes.
    let reply = app.edr().collection(&series).position(&[point]).await;
    reply.problem(StatusCode::UNPROCESSABLE_ENTITY, "query-not-supported");
});

api_test_with!(
    answers_past_the_limits_are_413,
    |config| {
        config.edr.positions_max = std::num::NonZeroUsize::new(2).unwrap();
        config.edr.values_max = std::num::NonZeroUsize::new(9).unwrap();
    },
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let collection = app.edr().collection(&mesh);
        let native = ("crs", "EPSG:32632");
        let three = (
            "coords",
            "MULTIPOINT((500050 6100050), (500150 6100150), (1 1))",
        );
        let reply = collection.position(&[three, native]).await;
        reply.problem(StatusCode::PAYLOAD_TOO_LARGE, "answer-too-large");
        // One point, 2 parameters x 5 steps = 10 values, one more than 9.
        let point = ("coords", "POINT(500050 6100050)");
        let reply = collection.position(&[point, native]).await;
        let problem = reply.problem(StatusCode::PAYLOAD_TOO_LARGE, "answer-too-large");
        assert!(
            problem["detail"].as_str().unwrap().contains("10 values"),
            "{problem}"
        );
        let reply = collection
            .position(&[point, native, ("parameter-name", "Surface elevation")])
            .await;
        reply.expect(StatusCode::OK);
    }
);

api_test!(
    new_content_is_queried_and_deleted_datasets_are_gone,
    |app| {
        let project = new_project(&app, "results").await;
        let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
        let collection = app.edr().collection(&mesh);
        let query = [("coords", "POINT(500050 6100050)"), ("crs", "EPSG:32632")];
        collection.position(&query).await.expect(StatusCode::OK);
        app.dataset(&mesh).delete().await.no_content();
        collection
            .position(&query)
            .await
            .problem(StatusCode::NOT_FOUND, "not-found");
        let listed = app.edr().collections(&[]).await.expect(StatusCode::OK);
        assert_eq!(listed["collections"], serde_json::json!([]));
    }
);

api_test!(z_selects_a_layer_of_a_grid_with_several, |app| {
    let project = new_project(&app, "results").await;
    let cube = upload_sample(&app, &project, "cube.dfs3", "cube.dfs3").await;
    let collection = app.edr().collection(&cube);
    let metadata = collection.get(&[]).await.expect(StatusCode::OK);
    assert_eq!(
        metadata["extent"]["vertical"]["values"],
        serde_json::json!([-10.0, -5.0]),
        "{metadata}"
    );
    // (32, 48) is in column 3, row 2 (tests/corpus/dfs-samples/cube.dfs3.json), whichever
    // corner of a NON-UTM grid its origin names.
    let point = ("coords", "POINT(32 48)");
    let data = &expected("cube.dfs3")["data"]["Salinity"];
    for (z, layer) in [("-10", 0), ("-5", 1), ("-5.0000000001", 1)] {
        let reply = collection.position(&[point, ("z", z)]).await;
        let coverage = reply.expect(StatusCode::OK);
        let want: Vec<Option<f32>> = (0..2)
            .map(|step| data[step][layer][2][3].as_f64().map(|v| v as f32))
            .collect();
        assert_eq!(
            floats(&coverage["ranges"]["Salinity"]["values"]),
            want,
            "z {z}"
        );
    }
    let without = collection.position(&[point]).await.expect(StatusCode::OK);
    let first: Vec<Option<f32>> = (0..2)
        .map(|step| data[step][0][2][3].as_f64().map(|v| v as f32))
        .collect();
    assert_eq!(
        floats(&without["ranges"]["Salinity"]["values"]),
        first,
        "layer 0 without z"
    );
    for z in ["-7", "-10,-5", "-10/-5", "deep"] {
        let reply = collection.position(&[point, ("z", z)]).await;
        let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
        assert!(problem["errors"]["z"].is_array(), "{z}: {problem}");
    }
    let cube = collection
        .cube(&[("bbox", "31,41,39,59"), ("z", "-5")])
        .await
        .expect(StatusCode::OK);
    assert_eq!(
        floats(&cube["ranges"]["Salinity"]["values"]),
        [
            data[0][1][2][3].as_f64().map(|v| v as f32),
            data[1][1][2][3].as_f64().map(|v| v as f32)
        ]
    );
});

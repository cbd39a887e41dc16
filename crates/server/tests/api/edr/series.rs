//! Time series collections (DFS0): their one location, `series`, and its values, checked
//! against the values MIKE IO wrote for tests/corpus/dfs-samples/ts_eq.dfs0.

use reqwest::StatusCode;

use super::{expected, floats, new_project, upload_sample};

api_test!(a_time_series_is_a_collection_with_one_location, |app| {
    let project = new_project(&app, "gauges").await;
    let series = upload_sample(&app, &project, "gauge.dfs0", "ts_eq.dfs0").await;
    let edr = app.edr();
    let collection = edr
        .collection(&series)
        .get(&[])
        .await
        .expect(StatusCode::OK);
    assert_eq!(collection["crs"], serde_json::json!([]));
    assert!(collection["extent"]["spatial"].is_null(), "{collection}");
    assert_eq!(
        collection["extent"]["temporal"]["interval"][0],
        serde_json::json!(["2024-01-15T06:00:00Z", "2024-01-15T10:30:00Z"])
    );
    let queries: Vec<&String> = collection["data_queries"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(queries, ["locations"]);

    let locations = edr.collection(&series).locations().await;
    assert_eq!(locations.headers()["content-type"], "application/geo+json");
    let locations = locations.expect(StatusCode::OK);
    let feature = &locations["features"][0];
    assert_eq!(feature["id"], "series");
    assert!(feature["geometry"].is_null());
    assert_eq!(
        feature["properties"]["parameter-name"],
        serde_json::json!(["WaterLevel", "Discharge"])
    );

    let coverage = edr
        .collection(&series)
        .location("series", &[("datetime", "2024-01-15T07:00:00Z/..")])
        .await
        .expect(StatusCode::OK);
    let times = coverage["domain"]["axes"]["t"]["values"]
        .as_array()
        .unwrap();
    assert_eq!(times.len(), 8);
    let data = expected("ts_eq.dfs0");
    for item in ["WaterLevel", "Discharge"] {
        let want: Vec<Option<f32>> = data["data"][item].as_array().unwrap()[2..]
            .iter()
            .map(|value| value.as_f64().map(|v| v as f32))
            .collect();
        assert_eq!(floats(&coverage["ranges"][item]["values"]), want, "{item}");
    }
    let csv = edr
        .collection(&series)
        .location("series", &[("parameter-name", "WaterLevel"), ("f", "CSV")])
        .await;
    let lines: Vec<String> = csv.text().lines().map(str::to_owned).collect();
    assert_eq!(lines[0], "datetime,WaterLevel");
    assert_eq!(lines[1], "2024-01-15T06:00:00Z,0.5");
    assert_eq!(lines.len(), 11);

    let unknown = edr.collection(&series).location("station-7", &[]).await;
    unknown.problem(StatusCode::NOT_FOUND, "not-found");
    let bad = edr
        .collection(&series)
        .location("series", &[("parameter-name", "Salinity")])
        .await;
    bad.problem(StatusCode::BAD_REQUEST, "validation");
    let none = edr
        .collection(&series)
        .location("series", &[("datetime", "2030-01-01T00:00:00Z/..")])
        .await;
    assert_eq!(none.status(), StatusCode::NO_CONTENT);
    // A grid or mesh has no locations.
    let mesh = upload_sample(&app, &project, "mesh.dfsu", "mesh2d_mixed.dfsu").await;
    let reply = edr.collection(&mesh).locations().await;
    reply.problem(StatusCode::UNPROCESSABLE_ENTITY, "query-not-supported");
    let reply = edr.collection(&mesh).location("series", &[]).await;
    reply.problem(StatusCode::UNPROCESSABLE_ENTITY, "query-not-supported");
});

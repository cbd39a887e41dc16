//! DFS files through the conversion service: the five readers and writers are in the
//! catalogue with their parameters, and uploads of DFS0, DFS2 and DFSU become datasets of the
//! right type with their spatial and temporal information; bad DFS input fails its transfer
//! with a message naming the problem.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::transfers::{project, start, upload};

async fn import(
    app: &TestApp,
    project: &str,
    file_name: &str,
    bytes: &[u8],
    reader: &str,
    writer: &str,
    extra: Value,
) -> Value {
    let url = upload(app, file_name, bytes).await;
    let summary = start(
        app,
        &routes::upload_convert(),
        with_fields(
            json!({
                "uploadUrl": url, "originalFileName": file_name, "projectId": project,
                "readerName": reader, "writerName": writer,
                "outputDatasetData": {"name": file_name}
            }),
            extra,
        ),
    )
    .await;
    crate::transfers::wait_for(app, summary["id"].as_str().unwrap()).await
}

async fn dataset_of(app: &TestApp, record: &Value) -> Value {
    crate::transfers::dataset(
        app,
        record["importResults"][0]["datasetId"].as_str().unwrap(),
    )
    .await
}

api_test!(the_dfs_readers_and_writers_are_in_the_catalogue, |app| {
    let readers = expect_status(
        app.with_key(Method::GET, &routes::reader_list())
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    let readers = readers["data"].as_array().unwrap();
    for (name, format) in [
        ("Dfs0Reader", ".dfs0"),
        ("Dfs1Reader", ".dfs1"),
        ("Dfs2Reader", ".dfs2"),
        ("Dfs3Reader", ".dfs3"),
        ("DfsuReader", ".dfsu"),
    ] {
        let reader = readers
            .iter()
            .find(|reader| reader["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(reader["datasetFormat"], format);
        let writers = reader["writers"].as_array().unwrap();
        assert!(writers.contains(&json!("VtuWriter")), "{name}: {writers:?}");
    }
    let parameters = |name: &str| -> Vec<String> {
        readers
            .iter()
            .find(|reader| reader["name"] == name)
            .unwrap()["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|parameter| parameter["name"].as_str().unwrap().to_owned())
            .collect()
    };
    for wanted in ["SRID", "AllowedItemNames", "ReadFull3D"] {
        assert!(
            parameters("DfsuReader").contains(&wanted.to_owned()),
            "{wanted}"
        );
    }
    assert!(parameters("Dfs2Reader").contains(&"CoordinateInterpretationType".to_owned()));
    let dfs2 = readers
        .iter()
        .find(|reader| reader["name"] == "Dfs2Reader")
        .unwrap();
    let writers = dfs2["writers"].as_array().unwrap();
    for writer in ["GeoTiffWriter", "AsciiGridWriter", "Dfs2Writer"] {
        assert!(writers.contains(&json!(writer)), "{writer}");
    }
});

api_test!(dfs_uploads_become_datasets_of_their_kind, |app| {
    let project = project(&app, "Models").await;

    let series = import(
        &app,
        &project,
        "ts_eq.dfs0",
        &dfs_sample("ts_eq.dfs0"),
        "Dfs0Reader",
        "Dfs0Writer",
        json!({}),
    )
    .await;
    assert_eq!(series["status"], "Completed", "{series}");
    let made = dataset_of(&app, &series).await;
    assert_eq!(made["datasetType"], "timeseries");
    assert_eq!(made["datasetFormat"], ".dfs0");
    assert!(made["temporalInformation"].is_object(), "{made}");

    let grid = import(
        &app,
        &project,
        "grid_utm32.dfs2",
        &dfs_sample("grid_utm32.dfs2"),
        "Dfs2Reader",
        "GeoTiffWriter",
        json!({}),
    )
    .await;
    assert_eq!(grid["status"], "Completed", "{grid}");
    let made = dataset_of(&app, &grid).await;
    assert_eq!(made["datasetType"], "multidimensional");
    assert_eq!(made["datasetFormat"], ".tif");
    assert_eq!(made["spatialInformation"]["srid"], 32632);

    let mesh = import(&app, &project, "mesh2d_mixed.dfsu", &dfs_sample("mesh2d_mixed.dfsu"), "DfsuReader", "DfsuWriter",
        json!({"transformations": [{"type": "TemporalFilterTransformation", "temporalFilter": {"type": "TemporalIndexFilter", "from": 1, "to": 2}}]})).await;
    assert_eq!(mesh["status"], "Completed", "{mesh}");
    let made = dataset_of(&app, &mesh).await;
    assert_eq!(made["datasetFormat"], ".dfsu");
    assert_eq!(made["spatialInformation"]["srid"], 32632);

    // The stored dfsu converts on to a Shapefile of one chosen step.
    let id = made["id"].as_str().unwrap();
    let summary = start(
        &app,
        &routes::dataset_convert(id),
        json!({"writerName": "ShpWriter", "outputDatasetData": {"name": "elements"},
               "writerParameters": [{"name": "TimeStep", "value": 1}]}),
    )
    .await;
    let converted = crate::transfers::wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(converted["status"], "Completed", "{converted}");
    assert_eq!(
        dataset_of(&app, &converted).await["datasetType"],
        "gisvectordata"
    );
});

api_test!(bad_dfs_input_fails_its_transfer_clearly, |app| {
    let project = project(&app, "Broken").await;
    // A DFS2 file given to the DFS0 reader.
    let record = import(
        &app,
        &project,
        "grid.dfs0",
        &dfs_sample("grid_utm32.dfs2"),
        "Dfs0Reader",
        "Dfs0Writer",
        json!({}),
    )
    .await;
    assert_eq!(record["status"], "Error", "{record}");
    // A truncated file.
    let mut bytes = dfs_sample("mesh2d_mixed.dfsu");
    bytes.truncate(bytes.len() - 10);
    let record = import(
        &app,
        &project,
        "cut.dfsu",
        &bytes,
        "DfsuReader",
        "VtuWriter",
        json!({}),
    )
    .await;
    assert_eq!(record["status"], "Error", "{record}");
    assert!(
        record["errorMessage"].as_str().unwrap().contains("DFS"),
        "{record}"
    );
    // An item that is not in the file.
    let record = import(
        &app,
        &project,
        "ts.dfs0",
        &dfs_sample("ts_eq.dfs0"),
        "Dfs0Reader",
        "CsvWriter",
        json!({"readerParameters": [{"name": "AllowedItemNames", "value": "Nope"}]}),
    )
    .await;
    assert_eq!(record["status"], "Error", "{record}");
    assert!(
        record["errorMessage"].as_str().unwrap().contains("Nope"),
        "{record}"
    );
    // Not a DFS file at all.
    let record = import(
        &app,
        &project,
        "text.dfs2",
        b"hello",
        "Dfs2Reader",
        "GeoTiffWriter",
        json!({}),
    )
    .await;
    assert_eq!(record["status"], "Error", "{record}");
});

//! Transfers through HTTP: the catalogue, every start operation end to end (upload URL ->
//! blob PUT -> transfer -> dataset -> raw download; download-convert -> downloadPath), the
//! transfer record, lists and cancel, and each validation error (nothing is queued).

mod dfs;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// A 3 x 2 ASCII grid in EPSG:25832.
pub(crate) const GRID: &str = "ncols 3\nnrows 2\nxllcorner 500000\nyllcorner 6200000\ncellsize 10\nNODATA_value -9999\n1 2 3\n4 5 -9999\n";

/// A feature collection of two points.
const POINTS: &str = r#"{"type":"FeatureCollection","features":[
 {"type":"Feature","properties":{"name":"a","depth":1.5},"geometry":{"type":"Point","coordinates":[9.0,56.0]}},
 {"type":"Feature","properties":{"name":"b","depth":2.5},"geometry":{"type":"Point","coordinates":[10.0,55.5]}}]}"#;

/// Uploads `bytes` to a fresh upload URL and returns the URL without its query.
pub(crate) async fn upload(app: &TestApp, file_name: &str, bytes: &[u8]) -> String {
    let body = app.transfers().upload_url().await.expect(StatusCode::OK);
    let url = body["data"].as_str().unwrap().to_owned();
    let put = app
        .client
        .put(&url)
        .header("x-ms-blob-type", "BlockBlob")
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    let _ = file_name;
    url.split_once('?').unwrap().0.to_owned()
}

/// Polls a transfer every 50 ms until it ends; returns its record.
pub(crate) async fn wait_for(app: &TestApp, transfer: &str) -> Value {
    for _ in 0..600 {
        let record = app.transfers().get(transfer).await.expect(StatusCode::OK);
        let current: Transfer = serde_json::from_value(record.clone()).unwrap();
        if current.ended() {
            return record;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("transfer {transfer} did not end within 30 s");
}

/// Starts a transfer at `path` (`routes::upload_convert()`, `routes::dataset_convert(id)`,
/// ...) with `body`, expecting 200; returns its summary.
pub(crate) async fn start(app: &TestApp, path: &str, body: Value) -> Value {
    let summary = app.transfers().start(path, &body).await;
    summary.expect(StatusCode::OK)
}

/// Cancels a transfer (200 expected); returns its record.
pub(crate) async fn cancel(app: &TestApp, transfer: &str) -> Value {
    app.transfers()
        .cancel(&transfer)
        .await
        .expect(StatusCode::OK)
}

pub(crate) async fn project(app: &TestApp, name: &str) -> String {
    let project = app.create_project(As::Key, name, json!({})).await;
    id_str(&project).to_owned()
}

pub(crate) async fn import(
    app: &TestApp,
    project: &str,
    file_name: &str,
    bytes: &[u8],
    reader: &str,
    writer: &str,
) -> Value {
    let url = upload(app, file_name, bytes).await;
    let summary = start(
        app,
        &routes::upload_convert(),
        json!({
            "uploadUrl": url, "originalFileName": file_name, "projectId": project,
            "readerName": reader, "writerName": writer,
            "outputDatasetData": {"name": file_name, "description": "imported", "metadata": {"k": "v"}}
        }),
    )
    .await;
    wait_for(app, summary["id"].as_str().unwrap()).await
}

/// The dataset list of a project.
pub(crate) async fn datasets_in(app: &TestApp, project: &str) -> Value {
    expect_status(
        app.with_key(Method::GET, &routes::project_dataset_list(project))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await
}

pub(crate) async fn dataset(app: &TestApp, id: &str) -> Value {
    expect_status(
        app.with_key(Method::GET, &routes::dataset(id))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await
}

async fn content(app: &TestApp, dataset: &str) -> Vec<u8> {
    let url = read_url(app, dataset).await;
    let response = app.client.get(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.bytes().await.unwrap().to_vec()
}

api_test!(the_catalogue_lists_readers_writers_and_their_pairs, |app| {
    let readers = expect_status(
        app.with_key(
            Method::GET,
            &format!("{}?filter=All", routes::reader_list()),
        )
        .send()
        .await
        .unwrap(),
        StatusCode::OK,
    )
    .await;
    let readers = readers["data"].as_array().unwrap();
    let geotiff = readers
        .iter()
        .find(|reader| reader["name"] == "GeoTiffReader")
        .unwrap();
    assert_eq!(geotiff["datasetFormat"], ".tif");
    assert!(
        geotiff["writers"]
            .as_array()
            .unwrap()
            .contains(&json!("AsciiGridWriter"))
    );
    assert!(
        geotiff["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|parameter| parameter["name"] == "SRID" && parameter["dataType"] == "Integer")
    );
    let file = readers
        .iter()
        .find(|reader| reader["name"] == "FileReader")
        .unwrap();
    assert_eq!(file["writers"], json!(["FileWriter"]));
    let dedicated = expect_status(
        app.with_key(
            Method::GET,
            &format!("{}?Filter=dedicated", routes::writer_list()),
        )
        .send()
        .await
        .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(dedicated["data"], json!([]));
    let one = expect_status(
        app.with_key(Method::GET, &routes::writer("vtuwriter"))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(one["name"], "VtuWriter");
    assert!(one.get("writers").is_none());
    expect_problem(
        app.with_key(Method::GET, &routes::reader("NoSuchReader"))
            .send()
            .await
            .unwrap(),
        StatusCode::NOT_FOUND,
        "not-found",
    )
    .await;
    expect_problem(
        app.with_key(
            Method::GET,
            &format!("{}?filter=Some", routes::reader_list()),
        )
        .send()
        .await
        .unwrap(),
        StatusCode::BAD_REQUEST,
        "validation",
    )
    .await;
    expect_problem(
        app.anonymous(Method::GET, &routes::reader_list())
            .send()
            .await
            .unwrap(),
        StatusCode::UNAUTHORIZED,
        "credentials-missing",
    )
    .await;
});

api_test!(an_upload_is_imported_converted_and_downloaded, |app| {
    let project = project(&app, "Imports").await;
    let record = import(
        &app,
        &project,
        "grid.asc",
        GRID.as_bytes(),
        "AsciiGridReader",
        "GeoTiffWriter",
    )
    .await;
    assert_eq!(record["status"], "Completed", "{record}");
    assert_eq!(record["type"], "Import");
    assert_eq!(record["format"], ".tif");
    assert_eq!(record["progress"], 100);
    assert_eq!(record["importParameters"]["readerName"], "AsciiGridReader");
    assert_eq!(record["exportParameters"]["writerName"], "GeoTiffWriter");
    assert_eq!(record["datasetImportData"]["name"], "grid.asc");
    assert!(record["startedAt"].is_string() && record["finishedAt"].is_string());
    assert!(record.get("errorMessage").is_none());
    let result = &record["importResults"][0];
    assert_eq!(result["projectId"], json!(project));
    let id = result["datasetId"].as_str().unwrap();
    let made = dataset(&app, id).await;
    assert_eq!(made["name"], "grid.asc");
    assert_eq!(made["description"], "imported");
    assert_eq!(made["metadata"], json!({"k": "v"}));
    assert_eq!(made["datasetFormat"], ".tif");
    assert_eq!(made["datasetType"], "multidimensional");
    let bytes = content(&app, id).await;
    assert_eq!(made["storageSize"], json!(bytes.len()));
    assert_eq!(&bytes[..4], b"II*\0", "a little-endian TIFF");
});

api_test!(a_plain_copy_keeps_the_bytes, |app| {
    let project = project(&app, "Copies").await;
    let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let record = import(
        &app,
        &project,
        "archive.bin",
        &bytes,
        "FileReader",
        "FileWriter",
    )
    .await;
    assert_eq!(record["status"], "Completed", "{record}");
    let id = record["importResults"][0]["datasetId"].as_str().unwrap();
    assert_eq!(content(&app, id).await, bytes);
    assert_eq!(dataset(&app, id).await["datasetFormat"], ".bin");
});

api_test!(a_dataset_is_converted_exported_and_updated, |app| {
    let project = project(&app, "Vectors").await;
    let record = import(
        &app,
        &project,
        "points.geojson",
        POINTS.as_bytes(),
        "GeoJsonReader",
        "GeoJsonWriter",
    )
    .await;
    assert_eq!(record["status"], "Completed", "{record}");
    let source = record["importResults"][0]["datasetId"]
        .as_str()
        .unwrap()
        .to_owned();

    // convert: a new dataset in another project, reprojected; the reader is inferred.
    let other = crate::transfers::project(&app, "Elsewhere").await;
    let summary = start(
        &app,
        &routes::dataset_convert(&source),
        json!({
            "writerName": "ShpWriter", "outputProjectId": other,
            "outputDatasetData": {"name": "points utm"},
            "transformations": [{"type": "crsTransformation", "outputSrid": 25832}]
        }),
    )
    .await;
    assert_eq!(summary["type"], "Conversion");
    assert_eq!(summary["status"], "Pending");
    assert!(summary["createdAt"].as_str().unwrap().len() == 27);
    let converted = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(converted["status"], "Completed", "{converted}");
    assert_eq!(converted["importResults"][0]["projectId"], json!(other));
    let shp = converted["importResults"][0]["datasetId"].as_str().unwrap();
    let made = dataset(&app, shp).await;
    assert_eq!(made["projectId"], json!(other));
    assert_eq!(made["datasetType"], "gisvectordata");

    // download-convert: a signed downloadPath once completed.
    let summary = start(
        &app,
        &routes::dataset_download_convert(&source),
        json!({"writerName": "GeoJsonWriter"}),
    )
    .await;
    assert_eq!(summary["type"], "Export");
    let exported = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(exported["status"], "Completed", "{exported}");
    assert_eq!(
        exported["exportParameters"]["outputFileName"],
        "points.geojson"
    );
    let url = exported["downloadPath"].as_str().unwrap();
    let file = app.client.get(url).send().await.unwrap();
    assert_eq!(file.status(), StatusCode::OK);
    let text = file.text().await.unwrap();
    assert!(
        text.contains("FeatureCollection") && text.contains("\"b\""),
        "{text}"
    );

    // A writer that writes several files exports one .zip: the record names that file, the
    // one at downloadPath, not the planned points.shp, and its format is the result's.
    let summary = start(
        &app,
        &routes::dataset_download_convert(&source),
        json!({"writerName": "ShpWriter"}),
    )
    .await;
    let exported = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(exported["status"], "Completed", "{exported}");
    let url = exported["downloadPath"].as_str().unwrap();
    let stored = url.split_once('?').unwrap().0.rsplit('/').next().unwrap();
    assert_eq!(stored, "points.zip");
    assert_eq!(
        exported["exportParameters"]["outputFileName"], stored,
        "{exported}"
    );
    assert_eq!(exported["format"], ".zip", "{exported}");
    let file = app.client.get(url).send().await.unwrap();
    assert_eq!(file.status(), StatusCode::OK);
    assert!(file.bytes().await.unwrap().starts_with(b"PK\x03\x04"));

    // update: the content is replaced and the row version moves on.
    let before = dataset(&app, &source).await;
    let url = upload(
        &app,
        "three.geojson",
        POINTS.replace("\"b\"", "\"c\"").as_bytes(),
    )
    .await;
    let summary = start(
        &app,
        &routes::dataset_update(&source),
        json!({"uploadUrl": url, "originalFileName": "three.geojson", "readerName": "GeoJsonReader"}),
    )
    .await;
    assert_eq!(summary["type"], "Update");
    let updated = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(updated["status"], "Completed", "{updated}");
    let after = dataset(&app, &source).await;
    assert_ne!(before["rowVersion"], after["rowVersion"]);
    let text = String::from_utf8(content(&app, &source).await).unwrap();
    assert!(text.contains("\"c\"") && !text.contains("\"b\""), "{text}");

    // update from another dataset: formats inferred on both sides.
    let summary = start(&app, &routes::dataset_update_from(shp, &source), json!({})).await;
    let updated = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(updated["status"], "Completed", "{updated}");
    assert_eq!(updated["importParameters"]["readerName"], "ShpReader");
    assert_eq!(updated["exportParameters"]["writerName"], "GeoJsonWriter");
});

api_test!(
    a_file_the_reader_cannot_read_ends_the_transfer_in_error,
    |app| {
        let project = project(&app, "Broken").await;
        let record = import(
            &app,
            &project,
            "grid.tif",
            b"not a tiff at all",
            "GeoTiffReader",
            "AsciiGridWriter",
        )
        .await;
        assert_eq!(record["status"], "Error");
        let message = record["errorMessage"].as_str().unwrap();
        assert!(message.to_lowercase().contains("tiff"), "{message}");
        assert_eq!(record["importResults"], json!([]));
        let datasets = datasets_in(&app, &project).await;
        assert_eq!(datasets["data"], json!([]));
    }
);

// Issue 33, item 6: a failed transfer's message showed the worker's absolute path
// (`reading /srv/.../work/<id>/in/gre.zip: corrupt deflate stream`). It names the file as the
// user sent it.
api_test!(
    a_failed_transfer_names_the_file_never_a_server_path,
    |app| {
        use std::io::Write;
        let project = project(&app, "Corrupt").await;
        let mut zipped = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        // The side file comes first: its deflate stream starts after the 30-byte local header
        // and the name; spoiling it makes reading the entry fail part way.
        zipped.start_file("gre.prj", options).unwrap();
        let mut state = 2_463_534_242_u32;
        let text: Vec<u8> = (0..3000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                b'A' + (state % 26) as u8
            })
            .collect();
        zipped.write_all(&text).unwrap();
        zipped.start_file("gre.shp", options).unwrap();
        zipped.write_all(&[0_u8; 100]).unwrap();
        let mut bytes = zipped.finish().unwrap().into_inner();
        let start = 30 + "gre.prj".len() + 100;
        for byte in &mut bytes[start..start + 200] {
            *byte = 0xaa;
        }
        let record = import(
            &app,
            &project,
            "gre.zip",
            &bytes,
            "ShpReader",
            "GeoJsonWriter",
        )
        .await;
        assert_eq!(record["status"], "Error", "{record}");
        let message = record["errorMessage"].as_str().unwrap();
        let data_dir = app.config.data_dir.display().to_string();
        assert!(!message.contains(&data_dir), "{message}");
        assert!(
            !message.contains("/in/") && !message.contains("work/"),
            "{message}"
        );
        assert!(
            message.contains("gre.zip") || message.contains("gre.shp"),
            "{message}"
        );
    }
);

// Issue 33: an XYZ point at NaN or infinity was imported; it is an error naming the line.
api_test!(
    an_xyz_file_with_a_non_finite_coordinate_ends_the_transfer_in_error_naming_the_line,
    |app| {
        let project = project(&app, "Soundings").await;
        let record = import(
            &app,
            &project,
            "points.xyz",
            b"500000 6200000 1.5\n500010 6200000 2.5\n500000 NaN 3.5\n",
            "XyzReader",
            "VtuWriter",
        )
        .await;
        assert_eq!(record["status"], "Error", "{record}");
        let message = record["errorMessage"].as_str().unwrap();
        assert!(
            message.contains("line 3") && message.contains("not a finite number"),
            "{message}"
        );
        assert_eq!(record["importResults"], json!([]));
        assert_eq!(datasets_in(&app, &project).await["data"], json!([]));
    }
);

// Each request that must be refused before a transfer exists, with the field it names.
api_test!(invalid_requests_are_400_and_queue_nothing, |app| {
    let project = project(&app, "Checks").await;
    let url = upload(&app, "grid.asc", GRID.as_bytes()).await;
    let base = json!({
        "uploadUrl": url, "originalFileName": "grid.asc", "projectId": project,
        "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
        "outputDatasetData": {"name": "g"}
    });
    let cases: Vec<(Value, &str)> = vec![
        (json!({"readerName": "NoReader"}), "readerName"),
        (json!({"writerName": "NoWriter"}), "writerName"),
        (json!({"writerName": "GeoJsonWriter"}), "writerName"),
        (json!({"readerName": null}), "readerName"),
        (
            json!({"readerParameters": [{"name": "Bogus", "value": 1}]}),
            "readerParameters",
        ),
        (
            json!({"readerParameters": [{"name": "SRID", "value": "x"}]}),
            "readerParameters",
        ),
        (
            json!({"transformations": [{"type": "MagicTransformation"}]}),
            "transformations[0]",
        ),
        (
            json!({"transformations": [{"type": "SpatialFilterTransformation"}]}),
            "transformations[0]",
        ),
        (
            json!({"transformations": [{"type": "CrsTransformation", "outputSrid": 999999}]}),
            "transformations[0]",
        ),
        (
            json!({"transformations": [{"type": "CrsTransformation"}]}),
            "transformations[0]",
        ),
        (json!({"memoryRequestMb": 1000}), "memoryRequestMb"),
        (json!({"memoryRequestMb": 1048576}), "memoryRequestMb"),
        (json!({"cpuCoresRequest": 0}), "cpuCoresRequest"),
        (json!({"storageSizeGb": -1}), "storageSizeGb"),
        (json!({"nodeSize": "Enormous"}), "nodeSize"),
        (
            json!({"nodeSize": "Small", "memoryRequestMb": 16384}),
            "memoryRequestMb",
        ),
        (
            json!({"nodeSize": "Small", "storageSizeGb": 100}),
            "storageSizeGb",
        ),
        (
            json!({"requiredLabels": ["not a label"]}),
            "requiredLabels[0]",
        ),
        (json!({"projectId": null}), "projectId"),
        (json!({"originalFileName": null}), "originalFileName"),
        (json!({"originalFileName": "a/b.asc"}), "originalFileName"),
        (json!({"uploadUrl": "gopher://example.com/x"}), "uploadUrl"),
        (json!({"uploadUrl": null}), "uploadUrl"),
        (
            json!({"outputDatasetData": {"name": ""}}),
            "outputDatasetData.name",
        ),
        (json!({"outputDatasetData": null}), "outputDatasetData.name"),
    ];
    for (change, field) in cases {
        let body = with_fields(base.clone(), change.clone());
        let response = app.transfers().upload_convert(&body).await;
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(
            problem["errors"].get(field).is_some(),
            "{change} should name {field}: {problem}"
        );
    }
    let summaries = expect_status(
        app.with_key(Method::GET, &routes::legacy_transfer_list_summaries())
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(summaries["data"], json!([]), "nothing was queued");
    // api-version 1 clients may leave out originalFileName: the URL's last segment names it.
    let v1 = app
        .with_key(Method::POST, &routes::upload_convert())
        .header("api-version", "1")
        .json(&with_fields(
            base.clone(),
            json!({"originalFileName": null}),
        ))
        .send()
        .await
        .unwrap();
    expect_status(v1, StatusCode::OK).await;
});

api_test!(foreign_and_missing_targets_are_404, |app| {
    let project = project(&app, "Mine").await;
    let url = upload(&app, "grid.asc", GRID.as_bytes()).await;
    let body = json!({
        "uploadUrl": url, "originalFileName": "grid.asc", "projectId": project,
        "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
        "outputDatasetData": {"name": "g"}
    });
    let missing = with_fields(body.clone(), json!({"projectId": uuid::Uuid::new_v4()}));
    let response = app.transfers().upload_convert(&missing).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    // Another tenant may neither use this upload nor see this project.
    let tenant = app.create_tenant("Other").await;
    let (_, key) = app.create_api_key(tenant, "Owner").await;
    let response = app
        .client
        .post(app.url(&routes::upload_convert()))
        .header("svc-open-api-key", &key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = app
        .with_key(Method::POST, &routes::dataset_convert(uuid::Uuid::new_v4()))
        .json(&json!({"writerName": "GeoTiffWriter", "outputDatasetData": {"name": "x"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = app.transfers().get(uuid::Uuid::new_v4()).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
});

api_test!(transfers_are_listed_filtered_and_cancelled, |app| {
    let project = project(&app, "Listed").await;
    let done = import(
        &app,
        &project,
        "grid.asc",
        GRID.as_bytes(),
        "AsciiGridReader",
        "GeoTiffWriter",
    )
    .await;
    let legacy = expect_status(
        app.with_key(Method::GET, &routes::legacy_transfer_list_summaries())
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(legacy["data"][0]["id"], done["id"]);
    let page = app
        .transfers()
        .list(&format!(
            "projectId={project}&status=Completed&status=Error&offset=0&limit=10"
        ))
        .await
        .expect(StatusCode::OK);
    assert_eq!(page["totalCount"], 1);
    assert_eq!(page["data"][0]["status"], "Completed");
    let none = app
        .transfers()
        .list("status=Pending")
        .await
        .expect(StatusCode::OK);
    assert_eq!(none["totalCount"], 0);
    app.transfers()
        .list("status=Sleeping")
        .await
        .problem(StatusCode::BAD_REQUEST, "validation");
    app.transfers()
        .list("from=yesterday")
        .await
        .problem(StatusCode::BAD_REQUEST, "validation");
    let id = done["id"].as_str().unwrap();
    app.transfers()
        .cancel(&id)
        .await
        .problem(StatusCode::CONFLICT, "transfer-ended");
    // A member who did not start it and may not see the project does not see it at all.
    let stranger = app.person("Stranger", "User").await;
    let response = app
        .send_as(
            As::Person(&stranger),
            Method::GET,
            &routes::transfer(id),
            None,
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
});

api_test_with!(
    a_queued_transfer_is_cancelled_at_once,
    |config: &mut basin::Config| config.transfers.executor = basin::TransferExecutor::External,
    |app| {
        let project = project(&app, "Queued").await;
        let url = upload(&app, "grid.asc", GRID.as_bytes()).await;
        let summary = start(
            &app,
            &routes::upload_convert(),
            json!({
                "uploadUrl": url, "originalFileName": "grid.asc", "projectId": project,
                "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
                "outputDatasetData": {"name": "g"}, "nodeSize": "Medium", "memoryRequestMb": 8192,
                "requiredLabels": ["pool=conversion"]
            }),
        )
        .await;
        let id = summary["id"].as_str().unwrap();
        let record = app.transfers().get(&id).await.expect(StatusCode::OK);
        assert_eq!(record["status"], "Pending");
        assert_eq!(record["nodeSize"], "Medium");
        assert_eq!(record["memoryRequestMb"], 8192);
        assert_eq!(
            record["requiredLabels"],
            json!(["pool=conversion", "svc.platform/vmsize=standard"])
        );
        let cancelled = cancel(&app, id).await;
        assert_eq!(cancelled["status"], "Error");
        assert!(
            cancelled["errorMessage"]
                .as_str()
                .unwrap()
                .contains("Cancelled")
        );
    }
);

api_test!(features_are_appended_and_described, |app| {
    let project = project(&app, "Appends").await;
    let record = import(
        &app,
        &project,
        "points.geojson",
        POINTS.as_bytes(),
        "GeoJsonReader",
        "GeoJsonWriter",
    )
    .await;
    assert_eq!(record["status"], "Completed", "{record}");
    let id = record["importResults"][0]["datasetId"]
        .as_str()
        .unwrap()
        .to_owned();
    let made = dataset(&app, &id).await;
    assert_eq!(made["datasetType"], "gisvectordata");
    assert_eq!(made["spatialInformation"]["srid"], 4326);
    assert_eq!(
        made["spatialInformation"]["location"],
        "POLYGON ((9 55.5, 10 55.5, 10 56, 9 56, 9 55.5))"
    );
    assert!(made.get("temporalInformation").is_none());

    let more = POINTS.replace("\"a\"", "\"c\"").replace("\"b\"", "\"d\"");
    let url = upload(&app, "more.geojson", more.as_bytes()).await;
    let summary = start(
        &app,
        &routes::dataset_append(&id),
        json!({"uploadUrl": url, "originalFileName": "more.geojson", "readerName": "GeoJsonReader"}),
    )
    .await;
    assert_eq!(summary["type"], "Append");
    let appended = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(appended["status"], "Completed", "{appended}");
    assert_eq!(appended["importParameters"]["appendDatasetId"], json!(id));
    let text = String::from_utf8(content(&app, &id).await).unwrap();
    for name in ["\"a\"", "\"b\"", "\"c\"", "\"d\""] {
        assert!(text.contains(name), "{name} in {text}");
    }

    // A file of another structure is a clear error, and the dataset keeps its content.
    let url = upload(&app, "grid.geojson", br#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"other":1},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#).await;
    let summary = start(
        &app,
        &routes::dataset_append(&id),
        json!({"uploadUrl": url, "originalFileName": "grid.geojson", "readerName": "GeoJsonReader"}),
    )
    .await;
    let refused = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(refused["status"], "Error", "{refused}");
    assert!(
        refused["errorMessage"].as_str().unwrap().contains("append"),
        "{refused}"
    );
    assert_eq!(String::from_utf8(content(&app, &id).await).unwrap(), text);
});

api_test!(an_item_filter_and_a_reprojection_apply_on_import, |app| {
    let project = project(&app, "Filtered").await;
    let url = upload(&app, "points.geojson", POINTS.as_bytes()).await;
    let summary = start(
        &app,
        &routes::upload_convert(),
        json!({
            "uploadUrl": url, "originalFileName": "points.geojson", "projectId": project,
            "readerName": "GeoJsonReader", "writerName": "GeoJsonWriter",
            "outputDatasetData": {"name": "depths"},
            "transformations": [
                {"type": "ItemFilterTransformation", "itemFilter": [{"names": ["depth"]}]},
                {"type": "CrsTransformation", "inputSrid": 4326, "outputSrid": 25832}
            ]
        }),
    )
    .await;
    let record = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(record["status"], "Completed", "{record}");
    let id = record["importResults"][0]["datasetId"].as_str().unwrap();
    assert_eq!(dataset(&app, id).await["spatialInformation"]["srid"], 25832);
    let text = String::from_utf8(content(&app, id).await).unwrap();
    assert!(text.contains("depth") && !text.contains("\"a\""), "{text}");
});

/// Imports the ASCII grid at `url` as a GeoTIFF dataset of `project`; returns the ended record.
async fn import_grid_from(app: &TestApp, project: &str, url: &str) -> Value {
    let summary = start(
        app,
        &routes::upload_convert(),
        json!({
            "uploadUrl": url, "originalFileName": "grid.asc", "projectId": project,
            "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
            "outputDatasetData": {"name": "From outside"}
        }),
    )
    .await;
    wait_for(app, summary["id"].as_str().unwrap()).await
}

/// Serves `body` at `/files/{name}` on a loopback port, to `user:password` in Basic auth only.
async fn file_server(body: &'static str, user: &str, password: &str) -> std::net::SocketAddr {
    use base64::Engine as _;
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    );
    let router = axum::Router::new().route(
        "/files/{name}",
        axum::routing::get(move |headers: axum::http::HeaderMap| {
            let expected = expected.clone();
            async move {
                let authorised = headers
                    .get("authorization")
                    .and_then(|value| value.to_str().ok())
                    == Some(expected.as_str());
                if authorised {
                    (axum::http::StatusCode::OK, body)
                } else {
                    (axum::http::StatusCode::UNAUTHORIZED, "")
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    address
}

api_test!(
    imports_from_private_addresses_are_refused_by_default,
    |app| {
        let project = project(&app, "Outside").await;
        let address = file_server(GRID, "importer", "s3cret").await;
        let request = |url: String| {
            json!({
                "uploadUrl": url, "originalFileName": "grid.asc", "projectId": project,
                "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
                "outputDatasetData": {"name": "g"}
            })
        };
        // Refused when the request arrives: IP literals in every spelling, other schemes.
        for (url, says) in [
            (
                format!("http://importer:s3cret@{address}/files/grid.asc"),
                "loopback",
            ),
            (
                format!("http://2130706433:{}/files/grid.asc", address.port()),
                "loopback",
            ),
            (
                "http://169.254.169.254/latest/meta-data".to_owned(),
                "link-local",
            ),
            ("http://[::ffff:10.0.0.1]/grid.asc".to_owned(), "private"),
            ("file:///etc/passwd".to_owned(), "scheme"),
            ("gopher://example.com/grid.asc".to_owned(), "scheme"),
            ("http://example.com:25/grid.asc".to_owned(), "port"),
        ] {
            let problem = app
                .transfers()
                .upload_convert(&request(url.clone()))
                .await
                .problem(StatusCode::BAD_REQUEST, "validation");
            let text = problem.to_string();
            assert!(text.contains("uploadUrl"), "{url}: {text}");
            assert!(text.contains(says), "{url}: {text}");
            assert!(!text.contains("s3cret"), "{url}: {text}");
        }
        // A host name is judged when the transfer runs: `localhost` resolves to loopback.
        let url = format!(
            "http://importer:s3cret@localhost:{}/files/grid.asc",
            address.port()
        );
        let record = import_grid_from(&app, &project, &url).await;
        assert_eq!(record["status"], "Error");
        let message = record["errorMessage"].as_str().unwrap();
        assert!(message.contains("loopback"), "{message}");
        assert!(!record.to_string().contains("s3cret"), "{record}");
        let datasets = datasets_in(&app, &project).await;
        assert_eq!(datasets["data"], json!([]), "nothing was imported");
    }
);

api_test_with!(
    an_allowed_network_is_imported_from_with_credentials_kept_secret,
    |config: &mut basin::Config| config.fetch.allowed_networks = vec!["127.0.0.0/8".to_owned()],
    |app| {
        let project = project(&app, "Outside").await;
        let address = file_server(GRID, "importer", "p@ss:w/rd").await;
        let url =
            format!("http://importer:p%40ss%3Aw%2Frd@{address}/files/grid.asc?sig=SIGNATURE&v=1");
        let record = import_grid_from(&app, &project, &url).await;
        assert_eq!(record["status"], "Completed", "{record}");
        let text = record.to_string();
        assert!(
            !text.contains("p%40ss") && !text.contains("SIGNATURE"),
            "{text}"
        );
        let dataset_id = record["importResults"][0]["datasetId"].as_str().unwrap();
        let imported = dataset(&app, dataset_id).await;
        assert_eq!(imported["datasetFormat"], ".tif");
        assert!(content(&app, dataset_id).await.starts_with(b"II*\0"));

        // Wrong credentials fail the transfer with the server's answer, not its body.
        let record = import_grid_from(&app, &project, &url.replace("p%40ss", "nope")).await;
        assert_eq!(record["status"], "Error");
        assert!(
            record["errorMessage"]
                .as_str()
                .unwrap()
                .contains("status 401"),
            "{record}"
        );
        // Addresses outside the allowed network stay refused.
        app.transfers()
            .upload_convert(&json!({
                "uploadUrl": "http://10.0.0.1/grid.asc", "originalFileName": "grid.asc",
                "projectId": project,
                "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
                "outputDatasetData": {"name": "g"}
            }))
            .await
            .problem(StatusCode::BAD_REQUEST, "validation");
    }
);

/// Imports staged files into `project`; returns the status and the body.
async fn import_staged(app: &TestApp, project: &str, body: Value) -> (StatusCode, Value) {
    let response = app
        .with_key(Method::POST, &routes::import_staged(project))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

api_test!(staged_files_become_datasets_in_a_created_folder, |app| {
    let project = project(&app, "Staged").await;
    let grid = upload(&app, "grid.asc", GRID.as_bytes()).await;
    let points = upload(&app, "points.geojson", POINTS.as_bytes()).await;
    // The SDK's spelling of the destination, and a signed URL with its query.
    let (status, body) = import_staged(
        &app,
        &project,
        json!({
            "files": [
                {"url": grid, "fileName": "grid.asc"},
                {"url": format!("{points}?sig=ignored"), "fileName": "points.geojson"}
            ],
            "destingationPath": "Upload/2026",
            "createDestinationPathIfNotExists": true
        }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["failures"], json!([]));
    let datasets = body["datasets"].as_array().unwrap();
    assert_eq!(datasets.len(), 2);
    assert_eq!(datasets[0]["fileName"], "grid.asc");
    let grid_id = datasets[0]["datasetId"].as_str().unwrap();
    assert_eq!(content(&app, grid_id).await, GRID.as_bytes());
    let record = dataset(&app, grid_id).await;
    assert_eq!(record["name"], "grid.asc");
    let folder = record["projectId"].as_str().unwrap();
    assert_ne!(folder, project);
    let folder_record = expect_status(
        app.with_key(Method::GET, &routes::project(folder))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(folder_record["name"], "2026");
    let points_id = datasets[1]["datasetId"].as_str().unwrap();
    assert_eq!(content(&app, points_id).await, POINTS.as_bytes());

    // Into the existing folder again: the taken name, a missing upload and an address that
    // is not an upload URL fail on their own; the new file is imported.
    let again = upload(&app, "again.asc", GRID.as_bytes()).await;
    let never_written = {
        let url = upload(&app, "x", b"x").await;
        url.replace(&url[url.len() - 8..], "00000000")
    };
    let (status, body) = import_staged(
        &app,
        &project,
        json!({
            "files": [
                {"url": again, "fileName": "grid.asc"},
                {"url": never_written, "fileName": "missing.asc"},
                {"url": "https://example.com/file.asc", "fileName": "outside.asc"},
                {"url": again, "fileName": "again.asc"}
            ],
            "destinationPath": "/Upload/2026/"
        }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let failures = body["failures"].as_array().unwrap();
    let failed: Vec<&str> = failures
        .iter()
        .map(|failure| failure["fileName"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["grid.asc", "missing.asc", "outside.asc"], "{body}");
    assert!(failures[0]["message"].as_str().unwrap().contains("exists"));
    assert_eq!(body["datasets"].as_array().unwrap().len(), 1);
    assert_eq!(body["datasets"][0]["fileName"], "again.asc");
    let in_folder = datasets_in(&app, folder).await;
    assert_eq!(in_folder["data"].as_array().unwrap().len(), 3);

    // Without a destination the project itself receives the files.
    let root_file = upload(&app, "root.asc", GRID.as_bytes()).await;
    let (status, body) = import_staged(
        &app,
        &project,
        json!({"files": [{"url": root_file, "fileName": "root.asc"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let root_id = body["datasets"][0]["datasetId"].as_str().unwrap();
    assert_eq!(dataset(&app, root_id).await["projectId"], project.as_str());
});

api_test!(
    staged_imports_refuse_bad_requests_and_foreign_files,
    |app| {
        let project = project(&app, "Staged").await;
        let grid = upload(&app, "grid.asc", GRID.as_bytes()).await;
        let file = json!({"url": grid, "fileName": "grid.asc"});
        for (body, field) in [
            (json!({"files": []}), "files"),
            (
                json!({"files": [{"url": grid, "fileName": "a/b.asc"}]}),
                "files[0].fileName",
            ),
            (
                json!({"files": [{"url": " ", "fileName": "b.asc"}]}),
                "files[0].url",
            ),
            (
                json!({"files": [file], "destinationPath": "a/../b"}),
                "destinationPath",
            ),
            (
                json!({"files": [file], "destinationPath": "a", "destingationPath": "b"}),
                "destinationPath",
            ),
        ] {
            let (status, problem) = import_staged(&app, &project, body.clone()).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {problem}");
            assert!(problem["errors"][field].is_array(), "{body}: {problem}");
        }
        let too_many: Vec<Value> = (0..1001).map(|_| file.clone()).collect();
        let (status, _) = import_staged(&app, &project, json!({ "files": too_many })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        // A missing folder is 404 unless it may be created; nothing is created.
        let (status, problem) = import_staged(
            &app,
            &project,
            json!({"files": [file], "destinationPath": "Nowhere"}),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{problem}");
        assert!(problem["detail"].as_str().unwrap().contains("Nowhere"));
        assert_eq!(datasets_in(&app, &project).await["data"], json!([]));
        // Another tenant can neither import into this project nor import this tenant's upload.
        let tenant = app.create_tenant("Other").await;
        let (_, key) = app.create_api_key(tenant, "Owner").await;
        let other_project = expect_status(
            app.client
                .post(app.url(&routes::projects()))
                .header("svc-open-api-key", &key)
                .json(&json!({"name": "Theirs"}))
                .send()
                .await
                .unwrap(),
            StatusCode::CREATED,
        )
        .await;
        let as_other = |project: &str| {
            app.client
                .post(app.url(&routes::import_staged(project)))
                .header("svc-open-api-key", &key)
                .json(&json!({ "files": [file] }))
        };
        let response = as_other(&project).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let body = expect_status(
            as_other(id_str(&other_project)).send().await.unwrap(),
            StatusCode::OK,
        )
        .await;
        assert_eq!(body["datasets"], json!([]));
        assert!(
            body["failures"][0]["message"]
                .as_str()
                .unwrap()
                .contains("your tenant"),
            "{body}"
        );
        // A user of the tenant who is no member of the project may not create content in it.
        let reader = app.person("Reader", "User").await;
        let response = app
            .with_token(
                Method::POST,
                &routes::import_staged(&project),
                &reader.token,
            )
            .json(&json!({ "files": [file] }))
            .send()
            .await
            .unwrap();
        assert!(
            matches!(
                response.status(),
                StatusCode::FORBIDDEN | StatusCode::NOT_FOUND
            ),
            "{}",
            response.status()
        );
        assert_eq!(datasets_in(&app, &project).await["data"], json!([]));
    }
);

/// The files holding a dataset's content in the local blob store: exactly one while nothing
/// leaks (properties live elsewhere).
fn content_files(app: &TestApp, dataset: &str) -> Vec<std::path::PathBuf> {
    let tenant = app.tenant_id();
    let dir = app
        .config
        .data_dir
        .join("blobs")
        .join("datasets")
        .join(tenant.to_string())
        .join(dataset);
    let mut files = Vec::new();
    let mut folders = vec![dir];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

api_test!(
    concurrent_appends_and_updates_lose_nothing_and_leak_nothing,
    |app| {
        let project = project(&app, "Concurrent").await;
        let record = import(
            &app,
            &project,
            "points.geojson",
            POINTS.as_bytes(),
            "GeoJsonReader",
            "GeoJsonWriter",
        )
        .await;
        let id = record["importResults"][0]["datasetId"]
            .as_str()
            .unwrap()
            .to_owned();
        // Six appends at once, each of one differently named point: every one that completes is
        // in the content; one that raced another fails saying so and adds nothing.
        let mut appends = Vec::new();
        for index in 0..6 {
            let more = POINTS
            .replace("\"a\"", &format!("\"append-{index}\""))
            .replace(",\n {\"type\":\"Feature\",\"properties\":{\"name\":\"b\",\"depth\":2.5},\"geometry\":{\"type\":\"Point\",\"coordinates\":[10.0,55.5]}}", "");
            let url = upload(&app, "more.geojson", more.as_bytes()).await;
            let summary = start(
            &app,
            &routes::dataset_append(&id),
            json!({"uploadUrl": url, "originalFileName": "more.geojson", "readerName": "GeoJsonReader"}),
        )
        .await;
            appends.push((index, summary["id"].as_str().unwrap().to_owned()));
        }
        let mut ended = Vec::new();
        for (index, transfer) in &appends {
            ended.push((index, wait_for(&app, transfer).await));
        }
        let text = String::from_utf8(content(&app, &id).await).unwrap();
        let mut completed = 0;
        for (index, record) in &ended {
            let present = text.contains(&format!("\"append-{index}\""));
            if record["status"] == "Completed" {
                completed += 1;
                assert!(present, "{record} against {text}");
            } else {
                let message = record["errorMessage"].as_str().unwrap();
                assert!(message.contains("append again"), "{record}");
                assert!(!present, "{record} against {text}");
            }
        }
        assert!(completed >= 1);
        assert_eq!(
            content_files(&app, &id).len(),
            1,
            "{:?}",
            content_files(&app, &id)
        );

        // Four updates at once: all complete, the last one published wins, no content leaks.
        let mut updates = Vec::new();
        for index in 0..4 {
            let replacement = POINTS.replace("\"a\"", &format!("\"update-{index}\""));
            let url = upload(&app, "new.geojson", replacement.as_bytes()).await;
            let summary = start(
            &app,
            &routes::dataset_update(&id),
            json!({"uploadUrl": url, "originalFileName": "new.geojson", "readerName": "GeoJsonReader"}),
        )
        .await;
            updates.push(summary["id"].as_str().unwrap().to_owned());
        }
        for transfer in &updates {
            let ended = wait_for(&app, transfer).await;
            assert_eq!(ended["status"], "Completed", "{ended}");
        }
        let text = String::from_utf8(content(&app, &id).await).unwrap();
        assert!(
            (0..4).any(|index| text.contains(&format!("\"update-{index}\""))),
            "{text}"
        );
        assert_eq!(
            content_files(&app, &id).len(),
            1,
            "{:?}",
            content_files(&app, &id)
        );
    }
);

api_test!(
    another_tenants_ids_in_every_slot_are_404_and_change_nothing,
    |app| {
        // Tenant A (the bootstrap key): a project, a dataset and a finished transfer.
        let mine = project(&app, "Mine").await;
        let record = import(
            &app,
            &mine,
            "points.geojson",
            POINTS.as_bytes(),
            "GeoJsonReader",
            "GeoJsonWriter",
        )
        .await;
        let my_transfer = record["id"].as_str().unwrap().to_owned();
        let my_dataset = record["importResults"][0]["datasetId"]
            .as_str()
            .unwrap()
            .to_owned();
        let my_upload = upload(&app, "points.geojson", POINTS.as_bytes()).await;
        let before = dataset(&app, &my_dataset).await;
        let my_content = content(&app, &my_dataset).await;

        // Tenant B: its own project, dataset and upload, so that only the foreign slot is wrong.
        let tenant = app.create_tenant("Other").await;
        let (_, key) = app.create_api_key(tenant, "Owner").await;
        let as_other = |method: Method, path: &str| {
            app.client
                .request(method, app.url(path))
                .header("svc-open-api-key", &key)
        };
        let theirs = expect_status(
            as_other(Method::POST, &routes::projects())
                .json(&json!({"name": "Theirs"}))
                .send()
                .await
                .unwrap(),
            StatusCode::CREATED,
        )
        .await;
        let theirs = id_str(&theirs).to_owned();
        let upload_url = expect_status(
            as_other(Method::GET, &routes::upload_url())
                .send()
                .await
                .unwrap(),
            StatusCode::OK,
        )
        .await["data"]
            .as_str()
            .unwrap()
            .to_owned();
        let put = app
            .client
            .put(&upload_url)
            .header("x-ms-blob-type", "BlockBlob")
            .body(POINTS.as_bytes().to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), StatusCode::CREATED);
        let their_upload = upload_url.split_once('?').unwrap().0.to_owned();
        let started = expect_status(
        as_other(Method::POST, &routes::upload_convert())
            .json(&json!({
                "uploadUrl": their_upload, "originalFileName": "points.geojson",
                "projectId": theirs, "readerName": "GeoJsonReader", "writerName": "GeoJsonWriter",
                "outputDatasetData": {"name": "theirs"}
            }))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
        let their_transfer = started["id"].as_str().unwrap().to_owned();
        let mut their_dataset = String::new();
        for _ in 0..600 {
            let record = expect_status(
                as_other(Method::GET, &routes::transfer(&their_transfer))
                    .send()
                    .await
                    .unwrap(),
                StatusCode::OK,
            )
            .await;
            if record["status"] == "Completed" {
                their_dataset = record["importResults"][0]["datasetId"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(!their_dataset.is_empty());

        let with_upload = |upload: &str| json!({"uploadUrl": upload, "originalFileName": "points.geojson", "readerName": "GeoJsonReader"});
        let tries: Vec<(Method, String, Value)> = vec![
            (
                Method::POST,
                routes::dataset_convert(&my_dataset),
                json!({"writerName": "GeoJsonWriter", "outputProjectId": theirs, "outputDatasetData": {"name": "x"}}),
            ),
            (
                Method::POST,
                routes::dataset_convert(&their_dataset),
                json!({"writerName": "GeoJsonWriter", "outputProjectId": mine, "outputDatasetData": {"name": "x"}}),
            ),
            (
                Method::POST,
                routes::dataset_download_convert(&my_dataset),
                json!({"writerName": "GeoJsonWriter"}),
            ),
            (
                Method::POST,
                routes::dataset_update(&my_dataset),
                with_upload(&their_upload),
            ),
            (
                Method::POST,
                routes::dataset_update(&their_dataset),
                with_upload(&my_upload),
            ),
            (
                Method::POST,
                routes::dataset_update_from(&my_dataset, &their_dataset),
                json!({}),
            ),
            (
                Method::POST,
                routes::dataset_update_from(&their_dataset, &my_dataset),
                json!({}),
            ),
            (
                Method::POST,
                routes::dataset_append(&my_dataset),
                with_upload(&their_upload),
            ),
            (
                Method::POST,
                routes::dataset_append(&their_dataset),
                with_upload(&my_upload),
            ),
            (
                Method::POST,
                routes::upload_convert(),
                json!({
                    "uploadUrl": their_upload, "originalFileName": "points.geojson", "projectId": mine,
                    "readerName": "GeoJsonReader", "writerName": "GeoJsonWriter",
                    "outputDatasetData": {"name": "x"}
                }),
            ),
            (Method::GET, routes::transfer(&my_transfer), Value::Null),
            (
                Method::POST,
                routes::transfer_cancel(&my_transfer),
                Value::Null,
            ),
            (
                Method::POST,
                routes::import_staged(&mine),
                json!({"files": [{"url": their_upload, "fileName": "x.geojson"}]}),
            ),
        ];
        for (method, path, body) in tries {
            let mut request = as_other(method.clone(), &path);
            if !body.is_null() {
                request = request.json(&body);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::NOT_FOUND,
                "{method} {path} {body}"
            );
        }
        // The lists show B nothing of A's, whatever the filter names.
        for query in [
            format!("projectId={mine}"),
            format!("datasetId={my_dataset}"),
            String::new(),
        ] {
            let response = as_other(Method::GET, &format!("{}?{query}", routes::transfer_list()))
                .send()
                .await
                .unwrap();
            let status = response.status();
            let text = response.text().await.unwrap();
            assert!(
                status == StatusCode::NOT_FOUND || !text.contains(&my_transfer),
                "{query}: {status} {text}"
            );
        }
        // Nothing of A's changed, and no transfer of B touches A's dataset.
        let after = dataset(&app, &my_dataset).await;
        assert_eq!(before["rowVersion"], after["rowVersion"]);
        assert_eq!(content(&app, &my_dataset).await, my_content);
        let mine_record = app
            .transfers()
            .get(&my_transfer)
            .await
            .expect(StatusCode::OK);
        assert_eq!(mine_record["status"], "Completed");
        assert_eq!(
            datasets_in(&app, &mine).await["data"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
);

/// Two triangles sharing an edge, as polygon features (mesh writers make them elements).
const TRIANGLES: &str = r#"{"type":"FeatureCollection","features":[
 {"type":"Feature","properties":{"code":1},"geometry":{"type":"Polygon","coordinates":[[[9.0,56.0],[9.1,56.0],[9.0,56.1],[9.0,56.0]]]}},
 {"type":"Feature","properties":{"code":2},"geometry":{"type":"Polygon","coordinates":[[[9.1,56.0],[9.1,56.1],[9.0,56.1],[9.1,56.0]]]}}]}"#;

/// Scattered points, `x y z` per line.
const XYZ: &str =
    "500000 6200000 1.5\n500010 6200000 2.5\n500000 6200010 3.5\n500010 6200010 4.5\n";

/// The part of the error a writer must give for an input of this test it cannot hold: a DFS1
/// is one row of cells, and the grids here have more rows (files named after their reader
/// come from an earlier round: `from-dfs1reader.*` is the one-row grid).
fn refusal_of(writer: &str, file_name: &str) -> Option<&'static str> {
    let one_row = file_name == "line.dfs1" || file_name.starts_with("from-dfs1reader");
    // The DFS samples have several steps, and so has what is made from them; an ASCII Grid
    // holds one.
    let several_steps = [
        "ts_eq.dfs0",
        "line.dfs1",
        "from-dfs0reader",
        "from-dfs1reader",
    ]
    .iter()
    .any(|source| file_name.starts_with(source));
    match writer {
        "Dfs1Writer" if !one_row => Some("one row"),
        "AsciiGridWriter" if several_steps => Some("TemporalFilterTransformation"),
        _ => None,
    }
}

api_test!(every_reader_writer_pair_of_the_catalogue_runs, |app| {
    let project = project(&app, "Pairs").await;
    let list = |kind: &'static str| {
        let app = &app;
        async move {
            expect_status(
                app.with_key(Method::GET, &format!("/api/conversion/{kind}/list"))
                    .send()
                    .await
                    .unwrap(),
                StatusCode::OK,
            )
            .await["data"]
                .as_array()
                .unwrap()
                .clone()
        }
    };
    let readers = list("reader").await;
    let writers = list("writer").await;
    let format_of_writer = |name: &str| {
        writers
            .iter()
            .find(|writer| writer["name"] == name)
            .map(|writer| writer["datasetFormat"].as_str().unwrap().to_owned())
            .unwrap()
    };
    // Files made by hand for the readers of text formats (with the CRS their single file
    // cannot state); every other reader gets an input written by a writer of its format in an
    // earlier round, so a reader added to the catalogue is covered once some pair writes its
    // format.
    let utm = json!([{"name": "SRID", "value": 25832}]);
    let mut inputs: std::collections::BTreeMap<String, (String, Vec<u8>, Value)> = [
        (
            "FileReader",
            "archive.bin",
            b"\0any bytes\xff".to_vec(),
            json!([]),
        ),
        (
            "AsciiGridReader",
            "grid.asc",
            GRID.as_bytes().to_vec(),
            utm.clone(),
        ),
        (
            "GeoJsonReader",
            "triangles.geojson",
            TRIANGLES.as_bytes().to_vec(),
            json!([]),
        ),
        ("XyzReader", "points.xyz", XYZ.as_bytes().to_vec(), utm),
        // Only a DFS0 writer makes a time series, and only the DFS0 reader reads one; a DFS1
        // holds one row, which no other grid of this test is.
        (
            "Dfs0Reader",
            "ts_eq.dfs0",
            dfs_sample("ts_eq.dfs0"),
            json!([]),
        ),
        (
            "Dfs1Reader",
            "line.dfs1",
            dfs_sample("line.dfs1"),
            json!([]),
        ),
    ]
    .into_iter()
    .map(|(reader, name, bytes, parameters)| {
        (reader.to_owned(), (name.to_owned(), bytes, parameters))
    })
    .collect();
    let mut done = std::collections::BTreeSet::new();
    loop {
        let mut ran = false;
        for reader in &readers {
            let reader_name = reader["name"].as_str().unwrap().to_owned();
            let Some((file_name, bytes, parameters)) = inputs.get(&reader_name).cloned() else {
                continue;
            };
            for writer in reader["writers"].as_array().unwrap() {
                let writer_name = writer.as_str().unwrap().to_owned();
                if !done.insert((reader_name.clone(), writer_name.clone())) {
                    continue;
                }
                ran = true;
                let url = upload(&app, &file_name, &bytes).await;
                let summary = start(
                    &app,
                    &routes::upload_convert(),
                    json!({
                        "uploadUrl": url, "originalFileName": file_name, "projectId": project,
                        "readerName": reader_name, "writerName": writer_name,
                        "readerParameters": parameters,
                        "outputDatasetData": {"name": format!("{reader_name} to {writer_name}")}
                    }),
                )
                .await;
                let record = wait_for(&app, summary["id"].as_str().unwrap()).await;
                if let Some(refusal) = refusal_of(&writer_name, &file_name) {
                    assert_eq!(record["status"], "Error", "{reader_name} -> {writer_name}");
                    let message = record["errorMessage"].as_str().unwrap();
                    assert!(
                        message.contains(refusal),
                        "{reader_name} -> {writer_name}: {message}"
                    );
                    continue;
                }
                assert_eq!(
                    record["status"], "Completed",
                    "{reader_name} -> {writer_name}: {record}"
                );
                let id = record["importResults"][0]["datasetId"].as_str().unwrap();
                let made = dataset(&app, id).await;
                let result = content(&app, id).await;
                assert_eq!(made["storageSize"], json!(result.len()));
                let written_format = format_of_writer(&writer_name);
                let zipped = result.starts_with(b"PK\x03\x04");
                if writer_name == "FileWriter" {
                    assert_eq!(result, bytes);
                } else if zipped {
                    assert_eq!(
                        made["datasetFormat"], ".zip",
                        "{reader_name} -> {writer_name}"
                    );
                } else {
                    assert_eq!(
                        made["datasetFormat"],
                        json!(written_format),
                        "{reader_name} -> {writer_name}"
                    );
                }
                let result_name = format!(
                    "from-{}{}",
                    reader_name.to_lowercase(),
                    if zipped {
                        ".zip"
                    } else {
                        written_format.as_str()
                    }
                );
                // A point cloud (cells of one vertex) is no input for every writer of its
                // format (a .mesh holds only triangles and quadrilaterals), so it feeds none.
                let feeds_others = reader_name != "XyzReader";
                for next in &readers {
                    if feeds_others && next["datasetFormat"] == json!(written_format) {
                        inputs
                            .entry(next["name"].as_str().unwrap().to_owned())
                            .or_insert_with(|| (result_name.clone(), result.clone(), json!([])));
                    }
                }
            }
        }
        if !ran {
            break;
        }
    }
    for reader in &readers {
        for writer in reader["writers"].as_array().unwrap() {
            let pair = (
                reader["name"].as_str().unwrap().to_owned(),
                writer.as_str().unwrap().to_owned(),
            );
            assert!(
                done.contains(&pair),
                "{pair:?} never ran: give {} an input in this test",
                pair.0
            );
        }
    }
});

api_test!(a_large_result_gets_its_checksum_after_completing, |app| {
    use md5::{Digest, Md5};
    let project = project(&app, "Large").await;
    // Over the 64 MiB past which a result is checksummed after its transfer completes.
    let bytes: Vec<u8> = (0..65 * 1024 * 1024_u32)
        .map(|index| (index.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let record = import(
        &app,
        &project,
        "large.bin",
        &bytes,
        "FileReader",
        "FileWriter",
    )
    .await;
    assert_eq!(record["status"], "Completed", "{record}");
    let id = record["importResults"][0]["datasetId"].as_str().unwrap();
    let first = dataset(&app, id).await;
    let digest: [u8; 16] = Md5::digest(&bytes).into();
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    let expected = format!("md5:{hex}");
    let mut found = first.clone();
    for _ in 0..200 {
        if found["checksum"] == json!(expected) {
            break;
        }
        assert!(found["checksum"].is_null(), "{found}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        found = dataset(&app, id).await;
    }
    assert_eq!(found["checksum"], json!(expected));
    assert_eq!(found["storageSize"], json!(bytes.len()));
    // The checksum is not a change: the version a client read stays valid.
    assert_eq!(found["rowVersion"], first["rowVersion"]);
    assert_eq!(found["updatedAt"], first["updatedAt"]);
    assert_eq!(content(&app, id).await, bytes);
});

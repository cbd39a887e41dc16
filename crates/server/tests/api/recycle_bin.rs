//! The recycle bin through HTTP (spec 3.1 and 4.6, wire-contract 6; docs/recycle-bin.md):
//! listings and visibility, restore in place and elsewhere with their rules, permanent
//! deletion with the blobs, and retention by the settable clock.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

async fn bin(app: &TestApp, who: As<'_>, path: &str) -> Value {
    let response = app
        .request_as(who, Method::GET, path)
        .header("api-version", "2")
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await
}

fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn delete(app: &TestApp, who: As<'_>, path: &str) {
    let response = app.send_as(who, Method::DELETE, path, None).await;
    expect_status(response, StatusCode::NO_CONTENT).await;
}

async fn upload(app: &TestApp, project: &str, name: &str, bytes: &[u8]) -> Value {
    expect_status(
        app.upload_file(project, name, bytes.to_vec()).await,
        StatusCode::CREATED,
    )
    .await
}

api_test!(smoke_delete_list_restore_purge, |app| {
    let root = app.create_project(As::Key, "Root", json!({})).await;
    let sub = app
        .create_subproject(As::Key, &root, "Sub", json!({}))
        .await;
    let dataset = upload(&app, id_str(&sub), "a.txt", b"hello").await;
    let blob_url = read_url(&app, id_str(&dataset)).await;
    delete(
        &app,
        As::Key,
        &format!("/api/metadata/dataset/{}", id_str(&dataset)),
    )
    .await;
    let all = bin(&app, As::Key, "/api/recycle-bin/all-deleted-items").await;
    assert_eq!(all["totalCount"], 1, "{all}");
    assert_eq!(all["data"][0]["itemType"], "Dataset");
    assert_eq!(all["data"][0]["sizeKB"], 1);
    delete(
        &app,
        As::Key,
        &format!("/api/metadata/project/{}", id_str(&sub)),
    )
    .await;
    let all = bin(&app, As::Key, "/api/recycle-bin/all-deleted-items").await;
    assert_eq!(ids(&all), vec![id_str(&sub).to_owned()], "{all}");
    let response = app
        .send_as(
            As::Key,
            Method::PUT,
            &format!("/api/recycle-bin/project/{}/restore", id_str(&sub)),
            None,
        )
        .await;
    expect_status(response, StatusCode::NO_CONTENT).await;
    let all = bin(&app, As::Key, "/api/recycle-bin/all-deleted-items").await;
    assert_eq!(ids(&all), vec![id_str(&dataset).to_owned()], "{all}");
    delete(
        &app,
        As::Key,
        &format!("/api/recycle-bin/dataset/{}", id_str(&dataset)),
    )
    .await;
    let all = bin(&app, As::Key, "/api/recycle-bin/all-deleted-items").await;
    assert_eq!(all["totalCount"], 0, "{all}");
    let gone = reqwest::get(&blob_url).await.unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
});

//! The life of uploads (issue 33, "storage that only grows"): an import that completed takes
//! its upload's bytes over and the upload goes; an upload no transfer used goes after
//! `blob.upload_retention_seconds`; one a queued transfer reads stays; and the admin API says
//! how many bytes a tenant keeps in datasets, uploads and the recycle bin.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::transfers::{project, start, upload, wait_for};

async fn upload_status(app: &TestApp, url: &str) -> StatusCode {
    app.client
        .head(resigned(app, url, "r"))
        .send()
        .await
        .unwrap()
        .status()
}

/// Waits up to `within` for the upload at `url` to be gone.
async fn wait_gone(app: &TestApp, url: &str, within: Duration) -> bool {
    let began = std::time::Instant::now();
    while began.elapsed() < within {
        if upload_status(app, url).await == StatusCode::NOT_FOUND {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

async fn storage(app: &TestApp) -> Value {
    let tenant = expect_status(
        app.back_office(Method::GET, &routes::tenant(app.tenant_id()))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(tenant["id"], app.tenant_id().to_string());
    tenant["storage"].clone()
}

/// Bytes of the files under `folder`, each file counted once however many names it has.
fn bytes_under(folder: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(metadata) = entry.path().symlink_metadata() else {
                continue;
            };
            if metadata.is_dir() {
                pending.push(entry.path());
            } else if metadata.is_file() && seen.insert((metadata.dev(), metadata.ino())) {
                total += metadata.len();
            }
        }
    }
    total
}

fn body(bytes: usize) -> Vec<u8> {
    (0..bytes).map(|i| (i * 31 % 251) as u8).collect()
}

async fn upload_convert(app: &TestApp, project: &str, url: &str, name: &str) -> Value {
    start(
        app,
        &routes::upload_convert(),
        json!({
            "uploadUrl": url, "originalFileName": name, "projectId": project,
            "readerName": "FileReader", "writerName": "FileWriter",
            "outputDatasetData": {"name": name}
        }),
    )
    .await
}

// A plain import of a 50 MB file leaves at most 1.1 x 50 MB under the data folder: the
// dataset took the upload's bytes over, and the upload is gone. Starting again from the same
// upload URL is then refused.
api_test!(an_imported_upload_is_stored_once, |app| {
    const SIZE: usize = 50 * 1000 * 1000;
    let project = project(&app, "Once").await;
    let url = upload(&app, "big.bin", &body(SIZE)).await;
    assert_eq!(storage(&app).await["uploadsBytes"], SIZE);
    let summary = upload_convert(&app, &project, &url, "big.bin").await;
    let record = wait_for(&app, summary["id"].as_str().unwrap()).await;
    assert_eq!(record["status"], "Completed", "{record}");
    assert!(
        wait_gone(&app, &url, Duration::from_secs(10)).await,
        "the imported upload is removed"
    );
    // The upload's URL answers 404 as soon as its record is gone; its file is unlinked just
    // after, so a loaded machine may see both copies for a moment.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut stored = bytes_under(&app.config.data_dir);
    while stored > SIZE as u64 * 11 / 10 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        stored = bytes_under(&app.config.data_dir);
    }
    assert!(
        stored <= SIZE as u64 * 11 / 10,
        "{stored} bytes under the data folder after importing {SIZE}"
    );
    let storage = storage(&app).await;
    assert_eq!(storage["uploadsBytes"], 0, "{storage}");
    assert_eq!(storage["datasetsBytes"], SIZE, "{storage}");
    assert_eq!(storage["recycleBinBytes"], 0, "{storage}");
    let again = app
        .transfers()
        .upload_convert(&json!({
            "uploadUrl": url, "originalFileName": "big.bin", "projectId": project,
            "readerName": "FileReader", "writerName": "FileWriter",
            "outputDatasetData": {"name": "again.bin"}
        }))
        .await;
    expect_problem(again, StatusCode::NOT_FOUND, "not-found").await;
});

// import-staged makes datasets of uploads at once (one upload may become several datasets of
// one request); its uploads go once the request made them.
api_test!(a_staged_import_takes_its_upload_over, |app| {
    let project = project(&app, "Staged").await;
    let url = upload(&app, "a.bin", &body(1000)).await;
    let response = app
        .with_key(Method::POST, &routes::import_staged(&project))
        .json(&json!({"files": [
            {"url": url, "fileName": "a.bin"},
            {"url": url, "fileName": "b.bin"},
        ]}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    assert_eq!(upload_status(&app, &url).await, StatusCode::NOT_FOUND);
    let storage = storage(&app).await;
    assert_eq!(storage["uploadsBytes"], 0, "{storage}");
    assert_eq!(storage["datasetsBytes"], 2000, "{storage}");
});

fn short_retention_no_workers(config: &mut basin::Config) {
    config.blob.upload_retention_seconds = std::time::Duration::from_secs(2);
    config.transfers.executor = basin::TransferExecutor::External;
}

// An upload no transfer used goes after the retention (within 1.5 times it); one that a queued
// transfer reads stays however old it is.
api_test_with!(
    unused_uploads_go_after_the_retention_and_uploads_in_use_stay,
    short_retention_no_workers,
    |app| {
        let project = project(&app, "Retention").await;
        let unused = upload(&app, "unused.bin", &body(300)).await;
        let in_use = upload(&app, "in-use.bin", &body(500)).await;
        let queued = upload_convert(&app, &project, &in_use, "in-use.bin").await;
        assert_eq!(queued["status"], "Pending");
        assert_eq!(storage(&app).await["uploadsBytes"], 800);
        // Not yet: one second of the two.
        app.clock.advance(chrono::TimeDelta::seconds(1));
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(upload_status(&app, &unused).await, StatusCode::OK);
        // Past the retention, on the server's clock: gone within half a retention more.
        app.clock.advance(chrono::TimeDelta::milliseconds(1500));
        assert!(
            wait_gone(&app, &unused, Duration::from_millis(1000)).await,
            "the unused upload is removed within 1.5 times the retention"
        );
        app.clock.advance(chrono::TimeDelta::seconds(3600));
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(
            upload_status(&app, &in_use).await,
            StatusCode::OK,
            "an upload a queued transfer reads stays"
        );
        assert_eq!(storage(&app).await["uploadsBytes"], 500);
        // A transfer started from the removed upload is refused; nothing is queued.
        let refused = app
            .transfers()
            .upload_convert(&json!({
                "uploadUrl": unused, "originalFileName": "unused.bin", "projectId": project,
                "readerName": "FileReader", "writerName": "FileWriter",
                "outputDatasetData": {"name": "late.bin"}
            }))
            .await;
        expect_problem(refused, StatusCode::NOT_FOUND, "not-found").await;
        // Once the transfer is cancelled, the old upload goes with the next round.
        let id = queued["id"].as_str().unwrap();
        crate::transfers::cancel(&app, id).await;
        assert!(
            wait_gone(&app, &in_use, Duration::from_millis(2000)).await,
            "the upload is removed once no transfer reads it"
        );
        assert_eq!(storage(&app).await["uploadsBytes"], 0);
    }
);

// The admin API tells where a tenant's bytes are: live datasets, uploads, the recycle bin
// (datasets deleted themselves or below a deleted project).
api_test!(a_tenant_reports_the_bytes_it_stores_by_place, |app| {
    let project = app.create_project(As::Key, "Bytes", json!({})).await;
    let folder = app
        .create_subproject(As::Key, &project, "F", json!({}))
        .await;
    let upload_into = |project: String, name: &'static str, size: usize| {
        let app = &app;
        async move {
            let uploaded = app.upload_file(&project, name, body(size)).await;
            expect_status(uploaded, StatusCode::CREATED).await["id"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let kept = upload_into(id_str(&project).to_owned(), "kept.bin", 100).await;
    let deleted = upload_into(id_str(&project).to_owned(), "deleted.bin", 20).await;
    upload_into(id_str(&folder).to_owned(), "below.bin", 3).await;
    upload(&app, "pending.bin", &body(4000)).await;
    let empty = storage(&app).await;
    assert_eq!(
        empty,
        json!({"datasetsBytes": 123, "uploadsBytes": 4000, "recycleBinBytes": 0})
    );
    let gone = app
        .send_as(As::Key, Method::DELETE, &routes::dataset(&deleted), None)
        .await;
    expect_status(gone, StatusCode::NO_CONTENT).await;
    let gone = app
        .send_as(
            As::Key,
            Method::DELETE,
            &routes::project(id_str(&folder)),
            None,
        )
        .await;
    expect_status(gone, StatusCode::NO_CONTENT).await;
    assert_eq!(
        storage(&app).await,
        json!({"datasetsBytes": 100, "uploadsBytes": 4000, "recycleBinBytes": 23})
    );
    let _ = kept;
    // Another tenant's manager sees nothing of it.
    let other = app.create_tenant("Other").await;
    let (_, other_key) = app.create_api_key(other, "Owner").await;
    let refused = app
        .client
        .get(app.url(&routes::tenant(app.tenant_id())))
        .header("svc-open-api-key", other_key)
        .send()
        .await
        .unwrap();
    assert!(
        matches!(
            refused.status(),
            StatusCode::FORBIDDEN | StatusCode::NOT_FOUND
        ),
        "{}",
        refused.status()
    );
});

fn quick_checksum_repair(config: &mut basin::Config) {
    config.transfers.checksum_repair_seconds = std::time::Duration::from_secs(1);
}

// Issue 33, item 10: a large result is hashed after its transfer completed; a worker that
// stopped in that window left the dataset without a checksum for good. The repair fills it in
// once the content was left alone for five minutes.
api_test_with!(
    a_missing_checksum_is_filled_in_by_the_repair,
    quick_checksum_repair,
    |app| {
        let project = project(&app, "Checksums").await;
        let url = upload(&app, "a.bin", &body(5000)).await;
        let summary = upload_convert(&app, &project, &url, "a.bin").await;
        let record = wait_for(&app, summary["id"].as_str().unwrap()).await;
        assert_eq!(record["status"], "Completed", "{record}");
        let id = record["importResults"][0]["datasetId"]
            .as_str()
            .unwrap()
            .to_owned();
        let checksum =
            async |app: &TestApp| crate::transfers::dataset(app, &id).await["checksum"].clone();
        let recorded = checksum(&app).await;
        assert!(recorded.as_str().unwrap().starts_with("md5:"), "{recorded}");
        // The worker stopped before hashing: no checksum.
        basin::on_db!(&app.db, |pool| sqlx::query(
            "UPDATE datasets SET checksum = NULL"
        )
        .execute(pool)
        .await
        .map(|_| ())
        .unwrap());
        // Content changed moments ago may be hashed by its worker right now: left alone.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(checksum(&app).await, Value::Null);
        app.clock.advance(chrono::TimeDelta::minutes(6));
        let began = std::time::Instant::now();
        while checksum(&app).await.is_null() && began.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(checksum(&app).await, recorded);
    }
);

// Found trying it as a hostile user: 20 imports of one upload at once. One completed import
// removed the upload while another was being queued; that one adopted a record for a blob
// already deleted and ended in Error. Every import of one upload now either starts and
// completes, or is refused (404) at once; nothing is left in uploads.
api_test!(
    imports_of_one_upload_at_once_complete_or_are_refused,
    |app| {
        let project = project(&app, "Race").await;
        let url = upload(&app, "a.bin", &body(100_000)).await;
        let starts = (0..20).map(|i| {
            let (app, project, url) = (&app, project.clone(), url.clone());
            async move {
                app.transfers()
                    .upload_convert(&json!({
                        "uploadUrl": url, "originalFileName": "a.bin", "projectId": project,
                        "readerName": "FileReader", "writerName": "FileWriter",
                        "outputDatasetData": {"name": format!("d{i}.bin")}
                    }))
                    .await
            }
        });
        let mut started = Vec::new();
        for response in futures::future::join_all(starts).await {
            match response.status() {
                StatusCode::OK => started.push(response.expect(StatusCode::OK)),
                StatusCode::NOT_FOUND => {}
                other => panic!("{other}: {}", response.text()),
            }
        }
        assert!(!started.is_empty());
        for summary in &started {
            let record = wait_for(&app, summary["id"].as_str().unwrap()).await;
            assert_eq!(record["status"], "Completed", "{record}");
        }
        assert!(wait_gone(&app, &url, Duration::from_secs(10)).await);
        let storage = storage(&app).await;
        assert_eq!(storage["uploadsBytes"], 0, "{storage}");
        assert_eq!(
            storage["datasetsBytes"],
            100_000 * started.len(),
            "{storage}"
        );
    }
);

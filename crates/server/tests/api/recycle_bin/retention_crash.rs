//! The retention job killed in the middle (issue 13): `basin admin purge-expired`, run as its
//! own process one row per transaction, is killed with SIGKILL while it works, then run
//! again. Nothing may be lost (every expired item ends removed, with its content) and nothing
//! removed twice (one purge event per removed project and dataset); items not yet expired stay.

use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// `basin admin purge-expired` on the app's store, retention 0 days, one row per batch.
fn purge_command(app: &TestApp) -> std::process::Command {
    let mut command = basin_command();
    command
        .args(["admin", "purge-expired", "--json"])
        .arg("--data-dir")
        .arg(&app.config.data_dir)
        .current_dir(&app.config.data_dir)
        .env("BASIN_AUTH__JWT_SECRET", TEST_SECRET)
        .env("BASIN_RECYCLE_BIN__RETENTION_DAYS", "0")
        .env("BASIN_RECYCLE_BIN__PURGE_BATCH_SIZE", "1")
        .env("BASIN_LOG__LEVEL", "warn");
    if let Some(url) = &app.config.database_url {
        command.arg("--database-url").arg(url);
    }
    command
}

/// One number from the app's store, on a pool of the test's own (the app is stopped).
async fn count(url: &str, sql: &'static str) -> i64 {
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let value = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
        pool.close().await;
        value
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let value = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
        pool.close().await;
        value
    }
}

/// Files under the local blob store's `datasets` container.
fn dataset_blobs(app: &TestApp) -> usize {
    fn walk(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .flatten()
                .map(|entry| {
                    let path = entry.path();
                    if path.is_dir() { walk(&path) } else { 1 }
                })
                .sum()
        })
    }
    walk(&app.config.data_dir.join("blobs").join("datasets"))
}

async fn hierarchy(app: &TestApp, root: &str, actions: Vec<Value>) {
    let response = app
        .send_as(
            As::Key,
            Method::POST,
            &routes::hierarchy(root),
            Some(json!({ "actions": actions })),
        )
        .await;
    expect_status(response, StatusCode::OK).await;
}

api_test!(
    a_retention_run_killed_in_the_middle_loses_nothing_and_removes_nothing_twice,
    |app| {
        let mut app = app;
        // A project of 300 datasets in two levels of subprojects, deleted as a whole.
        let big = app.create_project(As::Key, "Big", json!({})).await;
        let files: Vec<Value> = (0..300)
            .map(|i| {
                let folder = if i % 2 == 0 { "deep/a" } else { "b" };
                json!({"type": "PathActionCreate", "path": format!("{folder}/f{i:03}.dfs0"), "isFolder": false})
            })
            .collect();
        hierarchy(&app, id_str(&big), files).await;
        // Twenty datasets with content, deleted one by one.
        let loose = app.create_project(As::Key, "Loose", json!({})).await;
        for i in 0..20 {
            let dataset = expect_status(
                app.upload_file(id_str(&loose), &format!("l{i:02}.txt"), vec![b'x'; 100 + i])
                    .await,
                StatusCode::CREATED,
            )
            .await;
            let path = routes::dataset(id_str(&dataset));
            let response = app.send_as(As::Key, Method::DELETE, &path, None).await;
            expect_status(response, StatusCode::NO_CONTENT).await;
        }
        let path = routes::project(id_str(&big));
        let response = app.send_as(As::Key, Method::DELETE, &path, None).await;
        expect_status(response, StatusCode::NO_CONTENT).await;
        // One item deleted a day later than the others: not expired when the job runs.
        let kept = expect_status(
            app.upload_file(id_str(&loose), "kept.txt", b"kept".to_vec())
                .await,
            StatusCode::CREATED,
        )
        .await;
        app.clock.advance(chrono::TimeDelta::days(1));
        let path = routes::dataset(id_str(&kept));
        let response = app.send_as(As::Key, Method::DELETE, &path, None).await;
        expect_status(response, StatusCode::NO_CONTENT).await;
        assert_eq!(dataset_blobs(&app), 21);

        let url = app.config.effective_database_url();
        app.signal_shutdown();
        app.wait_stopped().await.unwrap();
        let datasets_before = count(&url, "SELECT COUNT(*) FROM datasets").await;
        assert_eq!(datasets_before, 321);

        // Kill the job while it works: some datasets removed, not all.
        let mut child = purge_command(&app)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let mut killed_at = None;
        while started.elapsed() < Duration::from_secs(60) {
            let left = count(&url, "SELECT COUNT(*) FROM datasets").await;
            if left < datasets_before - 20 {
                child.kill().unwrap();
                killed_at = Some(left);
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let _ = child.wait();
        let left = killed_at.expect("the job was killed while it worked");
        assert!(
            left > 1,
            "the job had nearly finished when it was killed ({left} left)"
        );

        // Run it again, to the end.
        let output = tokio::task::spawn_blocking({
            let mut command = purge_command(&app);
            move || command.output().unwrap()
        })
        .await
        .unwrap();
        assert!(output.status.success(), "{}", stderr_of(&output));

        assert_eq!(
            count(&url, "SELECT COUNT(*) FROM datasets").await,
            1,
            "only the unexpired dataset stays"
        );
        assert_eq!(count(&url, "SELECT COUNT(*) FROM recycle_bin").await, 1);
        assert_eq!(
            count(&url, "SELECT COUNT(*) FROM projects").await,
            1,
            "Loose stays; Big and its 3 subprojects are gone"
        );
        assert_eq!(count(&url, "SELECT COUNT(*) FROM blob_garbage").await, 0);
        assert_eq!(
            dataset_blobs(&app),
            1,
            "only the unexpired dataset's blob stays"
        );
        let purged_datasets =
            "SELECT COUNT(*) FROM event_outbox WHERE event_type = 'basin.dataset.purged'";
        let distinct_datasets = "SELECT COUNT(DISTINCT ordering_key) FROM event_outbox WHERE event_type = 'basin.dataset.purged'";
        assert_eq!(
            count(&url, purged_datasets).await,
            320,
            "one event per removed dataset"
        );
        assert_eq!(count(&url, distinct_datasets).await, 320);
        let purged_projects =
            "SELECT COUNT(*) FROM event_outbox WHERE event_type = 'basin.project.purged'";
        assert_eq!(
            count(&url, purged_projects).await,
            4,
            "Big, deep, deep/a and b"
        );
    }
);

//! Transfers run by `basin worker` processes on a server's store, the scale-out shape: a worker
//! killed mid-transfer (its lease runs out and another worker completes the transfer, once), a
//! worker stopped gracefully (the transfer is queued again at once, its attempt not counted),
//! and two workers sharing a queue of 200 transfers (each runs exactly once). The server only
//! queues (`transfers.executor = "external"`); the workers are the built binary, started with
//! the server's data dir and database. Workers also render stored tile pyramids, which a
//! server may leave to them (`tiles.serve_renders_pyramids = false`).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::transfers::{cancel, datasets_in, project, start, upload};

/// `basin worker` on the server's data dir and database, with a lease of `lease_seconds`.
fn worker_command(app: &TestApp, lease_seconds: u64) -> Command {
    let mut command = basin_command();
    command
        .arg("worker")
        .arg("--data-dir")
        .arg(&app.config.data_dir)
        .current_dir(&app.config.data_dir)
        .env("BASIN_AUTH__JWT_SECRET", TEST_SECRET)
        .env("BASIN_TRANSFERS__LEASE_SECONDS", lease_seconds.to_string())
        .env("BASIN_TRANSFERS__HEARTBEAT_SECONDS", "1")
        .env("BASIN_TRANSFERS__POLL_INTERVAL_MS", "100")
        .env(
            "BASIN_TILES__PYRAMID_LEASE_SECONDS",
            lease_seconds.to_string(),
        )
        .env("BASIN_TILES__PYRAMID_POLL_MS", "100")
        .env("BASIN_LOG__LEVEL", "warn");
    if let Some(url) = &app.config.database_url {
        command.arg("--database-url").arg(url);
    }
    command
}

/// Runs `basin worker --transfer <id>` (a Kubernetes Job's command) to its end.
async fn run_job_worker(app: &TestApp, id: &str) -> std::process::Output {
    let mut command = worker_command(app, 30);
    command.arg("--transfer").arg(id);
    tokio::task::spawn_blocking(move || command.output().expect("the basin binary runs"))
        .await
        .unwrap()
}

/// A `basin worker` process, killed when dropped.
struct Worker(Child);

impl Worker {
    /// Starts a worker with `workers` tasks and a lease of `lease_seconds`.
    fn start(app: &TestApp, workers: usize, lease_seconds: u64) -> Self {
        let mut command = worker_command(app, lease_seconds);
        command
            .env("BASIN_TRANSFERS__WORKERS", workers.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        Self(command.spawn().expect("the basin binary starts"))
    }

    /// Starts `basin worker --transfer <id>`, a Kubernetes Job's command, with a lease of 10
    /// minutes.
    fn start_job(app: &TestApp, id: &str) -> Self {
        let mut command = worker_command(app, 600);
        command
            .arg("--transfer")
            .arg(id)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        Self(command.spawn().expect("the basin binary starts"))
    }

    /// Ends the process at once (SIGKILL): no clean-up, the lease stays until it runs out.
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Asks the process to stop (SIGTERM) and waits for it.
    fn terminate(&mut self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.0.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(exit)) = self.0.try_wait() {
                assert!(exit.success(), "the worker stopped with {exit}");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the worker did not stop within 30 s of SIGTERM");
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

fn external(config: &mut basin::Config) {
    config.transfers.executor = basin::TransferExecutor::External;
}

async fn record(app: &TestApp, id: &str) -> Value {
    app.transfers().get(&id).await.expect(StatusCode::OK)
}

/// Polls the transfer until its status is `status`; panics after `seconds`.
async fn wait_for_status(app: &TestApp, id: &str, status: &str, seconds: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let record = record(app, id).await;
        if record["status"] == status {
            return record;
        }
        assert!(
            Instant::now() < deadline,
            "transfer {id} not {status} within {seconds} s: {record}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Queues the import of a grid large enough that converting it takes a while (1500 x 1500
/// cells, 9 MB of text) and returns the transfer id.
async fn queue_slow_import(app: &TestApp, project: &str) -> String {
    queue_grid_import(app, project, 1500).await
}

/// Queues the import of a `side` x `side` ASCII grid to GeoTIFF; returns the transfer id.
async fn queue_grid_import(app: &TestApp, project: &str, side: u32) -> String {
    let mut grid = format!(
        "ncols {side}\nnrows {side}\nxllcorner 500000\nyllcorner 6200000\ncellsize 10\nNODATA_value -9999\n"
    );
    for row in 0..side {
        let line: Vec<String> = (0..side)
            .map(|column| format!("{}.25", (row * 7 + column) % 1000))
            .collect();
        grid.push_str(&line.join(" "));
        grid.push('\n');
    }
    let url = upload(app, "big.asc", grid.as_bytes()).await;
    let summary = start(
        app,
        &routes::upload_convert(),
        json!({
            "uploadUrl": url, "originalFileName": "big.asc", "projectId": project,
            "readerName": "AsciiGridReader", "writerName": "GeoTiffWriter",
            "outputDatasetData": {"name": "Big"}
        }),
    )
    .await;
    summary["id"].as_str().unwrap().to_owned()
}

api_test_with!(
    a_killed_workers_transfer_completes_once_on_another,
    external,
    |app| {
        let project = project(&app, "Killed").await;
        let id = queue_slow_import(&app, &project).await;
        let mut first = Worker::start(&app, 1, 2);
        wait_for_status(&app, &id, "InProgress", 60).await;
        first.kill();
        let killed = record(&app, &id).await;
        assert_eq!(killed["status"], "InProgress", "{killed}");
        let _second = Worker::start(&app, 1, 2);
        let done = wait_for_status(&app, &id, "Completed", 120).await;
        assert_eq!(done["importResults"].as_array().unwrap().len(), 1, "{done}");
        let datasets = datasets_in(&app, &project).await;
        assert_eq!(datasets["data"].as_array().unwrap().len(), 1, "{datasets}");
    }
);

api_test_with!(
    a_stopping_worker_queues_its_transfer_again,
    external,
    |app| {
        let project = project(&app, "Stopped").await;
        let id = queue_slow_import(&app, &project).await;
        // A lease of 10 minutes: the transfer can only be Pending again through the release.
        let mut first = Worker::start(&app, 1, 600);
        wait_for_status(&app, &id, "InProgress", 60).await;
        first.terminate();
        let released = record(&app, &id).await;
        assert_eq!(released["status"], "Pending", "{released}");
        assert_eq!(released["progress"], 0, "{released}");
        let _second = Worker::start(&app, 1, 600);
        let done = wait_for_status(&app, &id, "Completed", 120).await;
        assert_eq!(done["importResults"].as_array().unwrap().len(), 1, "{done}");
        assert_eq!(
            datasets_in(&app, &project).await["data"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
    }
);

api_test_with!(
    a_job_worker_runs_its_transfer_and_fails_when_there_is_nothing_to_run,
    external,
    |app| {
        let project = project(&app, "Jobs").await;
        let url = upload(&app, "note.txt", b"a small file, copied as it is").await;
        let copy = json!({
            "uploadUrl": url, "originalFileName": "note.txt", "projectId": project,
            "readerName": "FileReader", "writerName": "FileWriter",
            "outputDatasetData": {"name": "copy"}
        });
        let summary = start(&app, &routes::upload_convert(), copy.clone()).await;
        let id = summary["id"].as_str().unwrap().to_owned();
        let ran = run_job_worker(&app, &id).await;
        let stderr = String::from_utf8_lossy(&ran.stderr);
        assert!(ran.status.success(), "{}: {stderr}", ran.status);
        assert_eq!(record(&app, &id).await["status"], "Completed");

        // Run again (a second Job of the same transfer), for a cancelled transfer and for one
        // that does not exist: nothing to run, which the Job must report as a failure. The
        // completed import took its upload over, so the next one needs an upload of its own.
        let mut copy = copy;
        copy["uploadUrl"] = json!(upload(&app, "note.txt", b"another small file").await);
        let summary = start(&app, &routes::upload_convert(), copy).await;
        let cancelled = summary["id"].as_str().unwrap().to_owned();
        cancel(&app, &cancelled).await;
        let unknown = uuid::Uuid::new_v4().to_string();
        for id in [&id, &cancelled, &unknown] {
            let ran = run_job_worker(&app, id).await;
            let stderr = String::from_utf8_lossy(&ran.stderr);
            assert!(!ran.status.success(), "{id}: {stderr}");
            assert!(
                stderr.contains(&format!("transfer {id} was not run: it is not queued")),
                "{id}: {stderr}"
            );
        }
        assert_eq!(record(&app, &id).await["status"], "Completed");
        assert_eq!(record(&app, &cancelled).await["status"], "Error");
    }
);

api_test_with!(
    a_job_worker_told_to_stop_gives_its_transfer_back_and_succeeds,
    external,
    |app| {
        let project = project(&app, "Drained").await;
        let id = queue_slow_import(&app, &project).await;
        let mut job = Worker::start_job(&app, &id);
        wait_for_status(&app, &id, "InProgress", 60).await;
        // SIGTERM (a node drain): exit 0, so the Job is not a failure, and the transfer is
        // queued again at once for the next Job, its attempt not counted.
        job.terminate();
        let released = record(&app, &id).await;
        assert_eq!(released["status"], "Pending", "{released}");
        assert_eq!(released["attempts"], 0, "{released}");
        let ran = run_job_worker(&app, &id).await;
        assert!(
            ran.status.success(),
            "{}",
            String::from_utf8_lossy(&ran.stderr)
        );
        assert_eq!(record(&app, &id).await["status"], "Completed");
    }
);

api_test_with!(
    two_workers_run_each_of_200_transfers_once,
    external,
    |app| {
        const TRANSFERS: usize = 200;
        let project = project(&app, "Shared queue").await;
        let url = upload(&app, "note.txt", b"a small file, copied as it is").await;
        let mut ids = Vec::with_capacity(TRANSFERS);
        for index in 0..TRANSFERS {
            let summary = start(
                &app,
                &routes::upload_convert(),
                json!({
                    "uploadUrl": url, "originalFileName": "note.txt", "projectId": project,
                    "readerName": "FileReader", "writerName": "FileWriter",
                    "outputDatasetData": {"name": format!("copy {index}")}
                }),
            )
            .await;
            ids.push(summary["id"].as_str().unwrap().to_owned());
        }
        let _first = Worker::start(&app, 2, 30);
        let _second = Worker::start(&app, 2, 30);
        let mut created = std::collections::HashSet::new();
        for id in &ids {
            let done = wait_for_status(&app, id, "Completed", 180).await;
            let results = done["importResults"].as_array().unwrap();
            assert_eq!(results.len(), 1, "{done}");
            assert!(
                created.insert(results[0]["datasetId"].as_str().unwrap().to_owned()),
                "two transfers reported one dataset: {done}"
            );
        }
        let datasets = expect_status(
            app.with_key(
                Method::GET,
                &format!("{}?limit=1000", routes::project_dataset_list(&project)),
            )
            .send()
            .await
            .unwrap(),
            StatusCode::OK,
        )
        .await;
        assert_eq!(
            datasets["data"].as_array().unwrap().len(),
            TRANSFERS,
            "each transfer made exactly one dataset"
        );
    }
);

api_test_with!(
    a_running_transfer_cancelled_stops_and_leaves_nothing,
    |config: &mut basin::Config| {
        config.transfers.heartbeat_seconds = std::time::Duration::from_secs(1);
        config.transfers.workers = std::num::NonZeroUsize::MIN;
    },
    |app| {
        let project = project(&app, "Cancelled").await;
        // 4000 x 4000 cells: the conversion runs for seconds, much longer than the heartbeat
        // that brings the cancel to the worker.
        let id = queue_grid_import(&app, &project, 4000).await;
        // Past staging (5 %): the conversion itself is running.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let record = record(&app, &id).await;
            if record["status"] == "InProgress" && record["progress"].as_u64().unwrap() > 5 {
                break;
            }
            assert!(
                record["status"] != "Completed" && Instant::now() < deadline,
                "the conversion was not seen running: {record}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cancel(&app, &id).await;
        let ended = wait_for_status(&app, &id, "Error", 30).await;
        assert!(
            ended["errorMessage"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("cancelled"),
            "{ended}"
        );
        assert!(ended["importResults"].as_array().unwrap().is_empty());
        assert!(
            datasets_in(&app, &project).await["data"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        // No result blob and, once the run has cleaned up, no temporary file.
        let results = app
            .config
            .data_dir
            .join("blobs")
            .join("datasets")
            .join(app.tenant_id().to_string());
        let work = app.config.data_dir.join("work");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left =
                |dir: &std::path::Path| std::fs::read_dir(dir).map_or(0, |entries| entries.count());
            if left(&results) == 0 && left(&work) == 0 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "files left in {} or {}",
                results.display(),
                work.display()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The record stays ended: a later heartbeat or worker does not take it up again.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(record(&app, &id).await["status"], "Error");
    }
);

api_test_with!(
    workers_render_the_pyramids_servers_leave_them_and_finish_one_whose_renderer_was_killed,
    |config: &mut basin::Config| {
        external(config);
        config.tiles.serve_renders_pyramids = false;
    },
    |app| {
        use crate::tiles::pyramids::{files_under, pyramid_folder, pyramid_row, pyramid_row_until};
        let (_, dataset) =
            crate::tiles::uploaded(&app, &crate::tiles::utm_grid(), "depth.tif").await;
        let tiles = crate::tiles::pyramids::created(
            &app,
            &dataset,
            crate::tiles::pyramids::web_levels_13_to_16(),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let waiting = pyramid_row(&app, &tiles).await;
        assert_eq!(
            (waiting.state.as_str(), waiting.attempts, waiting.leased),
            ("queued", 0, false),
            "the server renders nothing"
        );

        // A worker with a lease of 2 s starts rendering and is killed midway.
        let folder = pyramid_folder(&app, &tiles);
        let mut first = Worker::start(&app, 1, 2);
        crate::tiles::pyramids::until_files(&folder, 5).await;
        first.kill();
        let files = files_under(&folder);
        assert!(
            !files
                .iter()
                .any(|(path, _)| path.ends_with("manifest.json")),
            "killed before the end: {} files",
            files.len()
        );
        let orphaned = pyramid_row(&app, &tiles).await;
        assert_eq!(
            (orphaned.state.as_str(), orphaned.attempts, orphaned.leased),
            ("queued", 1, true),
            "{orphaned:?}"
        );

        // Another worker takes it over once the lease ran out and finishes it.
        let _second = Worker::start(&app, 1, 2);
        let stored = pyramid_row_until(&app, &tiles, "the pyramid being stored", |row| {
            row.state == "stored"
        })
        .await;
        assert_eq!((stored.attempts, stored.leased), (0, false), "{stored:?}");
        let metadata = crate::tiles::pyramids::stored_metadata(&app, &tiles).await;
        let files = files_under(&folder);
        assert_eq!(
            metadata["tileStorageSizeKB"],
            crate::tiles::pyramids::stored_kilobytes(&files)
        );
        assert!(files.len() > 100, "{} files", files.len());
    }
);

//! Stored pyramids of tiles datasets (docs/tiles.md, "Stored pyramids"): levels named in
//! `storedZoomLevels` are rendered in the background into the blob store and served from there,
//! byte for byte what drawing gives; `tileStorageSizeKB` reports them once complete; limits and
//! bad levels are refused; other tenants see nothing; a purge removes the blobs.

use std::path::{Path, PathBuf};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use basin::Clock;

use crate::helpers::*;
use crate::tiles::{as_outsider, datasets_in, define, outsider_key, refused, uploaded, utm_grid};

/// The stored pyramids' folder of tiles dataset `tiles` in the app's local blob store.
pub(crate) fn pyramid_folder(app: &TestApp, tiles: &str) -> PathBuf {
    app.config
        .data_dir
        .join("blobs")
        .join("pyramids")
        .join(app.tenant_id().to_string())
        .join(tiles)
}

/// Every file below `folder` with its size (none when it does not exist).
pub(crate) fn files_under(folder: &Path) -> Vec<(PathBuf, u64)> {
    let mut files = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let metadata = entry.metadata().unwrap();
            if metadata.is_dir() {
                folders.push(entry.path());
            } else {
                files.push((entry.path(), metadata.len()));
            }
        }
    }
    files.sort();
    files
}

pub(crate) async fn metadata(app: &TestApp, dataset: &str) -> Value {
    let response = app.tiles(dataset).metadata().await;
    expect_status(response, StatusCode::OK).await
}

/// Polls the metadata of `tiles` until it reports stored tiles (the background rendering
/// finished); at most 60 s.
pub(crate) async fn stored_metadata(app: &TestApp, tiles: &str) -> Value {
    let started = std::time::Instant::now();
    loop {
        let metadata = metadata(app, tiles).await;
        if metadata["tileStorageSizeKB"].as_u64().unwrap() > 0 {
            return metadata;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the pyramid was not stored: {metadata}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

pub(crate) async fn tile_bytes(
    app: &TestApp,
    dataset: &str,
    scheme: &str,
    z: u32,
    row: u32,
    col: u32,
) -> Vec<u8> {
    let response = app.tiles(dataset).scheme(scheme).tile(z, row, col).await;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "{scheme}/{z}/{row}/{col}"
    );
    response.bytes().to_vec()
}

pub(crate) async fn created(app: &TestApp, dataset: &str, body: Value) -> String {
    let response = define(app, dataset, body).await;
    id_str(&expect_status(response, StatusCode::CREATED).await).to_owned()
}

/// Rows and columns of XYZ level `z` around the WGS 84 extent of `metadata` (one tile more
/// on every side, so tiles beside the data are asked for too).
fn xyz_range(
    metadata: &Value,
    z: u32,
) -> (std::ops::RangeInclusive<u32>, std::ops::RangeInclusive<u32>) {
    let extent = &metadata["wgS84Extent"];
    let n = f64::from(1_u32 << z);
    let column = |lon: f64| ((lon + 180.0) / 360.0 * n).floor() as u32;
    let row = |lat: f64| {
        let lat = lat.to_radians();
        ((1.0 - (lat.tan() + 1.0 / lat.cos()).ln() / std::f64::consts::PI) / 2.0 * n).floor() as u32
    };
    let (west, east) = (
        extent["xMin"].as_f64().unwrap(),
        extent["xMax"].as_f64().unwrap(),
    );
    let (south, north) = (
        extent["yMin"].as_f64().unwrap(),
        extent["yMax"].as_f64().unwrap(),
    );
    (
        row(north).saturating_sub(1)..=row(south) + 1,
        column(west).saturating_sub(1)..=column(east) + 1,
    )
}

/// The schemes of both tiles datasets of the first test; `stored` adds stored levels.
fn schemes(stored: bool) -> Value {
    let mut wmts =
        json!({"schemeId": "w", "schemeType": "WMTS", "minValue": 0, "maxValue": 200000});
    let mut xyz = json!({"schemeId": "x", "schemeType": "XYZ", "zoomLevels": [12],
                         "outputType": "WEBP", "colors": ["#ffffff", "#08306b"]});
    if stored {
        wmts["storedZoomLevels"] = json!([0, 1, 2]);
        xyz["storedZoomLevels"] = json!([12, 10, 11, 12]);
    }
    json!([wmts, xyz])
}

api_test!(
    stored_levels_are_served_from_the_blob_store_byte_equal_to_drawn_tiles,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let drawn = created(
            &app,
            &dataset,
            json!({"name": "drawn", "tilingSchemes": schemes(false)}),
        )
        .await;
        let stored = created(
            &app,
            &dataset,
            json!({"name": "stored", "tilingSchemes": schemes(true)}),
        )
        .await;
        // Asked for while the pyramid is (or may be) rendering: drawn, and right.
        assert_eq!(
            tile_bytes(&app, &stored, "w", 1, 0, 0).await,
            tile_bytes(&app, &drawn, "w", 1, 0, 0).await
        );
        let stored_metadata = stored_metadata(&app, &stored).await;
        let drawn_metadata = metadata(&app, &drawn).await;
        assert_eq!(drawn_metadata["tileStorageSizeKB"], 0, "nothing stored");

        let folders = files_under(&pyramid_folder(&app, &stored));
        let (manifests, tiles): (Vec<_>, Vec<_>) = folders
            .iter()
            .partition(|(path, _)| path.ends_with("manifest.json"));
        assert_eq!(manifests.len(), 1, "{folders:?}");
        let total: u64 = tiles.iter().map(|(_, size)| size).sum();
        assert_eq!(stored_metadata["tileStorageSizeKB"], total.div_ceil(1024));

        // A stored tile is read from the store: change its blob and the answer changes.
        let (sabotaged, _) = tiles
            .iter()
            .find(|(path, _)| path.to_string_lossy().contains("/1/0/0/12/"))
            .expect("an XYZ tile of level 12 is stored");
        let parts: Vec<u32> = sabotaged
            .iter()
            .rev()
            .take(2)
            .map(|part| part.to_str().unwrap().parse().unwrap())
            .collect();
        let (sabotaged_col, sabotaged_row) = (parts[0], parts[1]);
        std::fs::write(sabotaged, b"not a tile").unwrap();
        assert_eq!(
            tile_bytes(&app, &stored, "x", 12, sabotaged_row, sabotaged_col).await,
            b"not a tile"
        );

        // Every other tile of the stored levels, in and around the data, is the drawn one; those
        // that differ from the empty tile are exactly the stored blobs.
        let scheme_metadata = |id: &str| {
            drawn_metadata["tilingSchemes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|scheme| scheme["schemeId"] == id)
                .unwrap()
                .clone()
        };
        let wmts = scheme_metadata("w");
        let mut with_data = 0;
        for (scheme, level) in [
            ("w", 0),
            ("w", 1),
            ("w", 2),
            ("x", 10),
            ("x", 11),
            ("x", 12),
        ] {
            let empty = app
                .tiles(&drawn)
                .scheme(scheme)
                .empty_tile()
                .await
                .bytes()
                .to_vec();
            let (rows, cols) = if scheme == "w" {
                let height = wmts["matrixHeights"][level].as_u64().unwrap() as u32;
                let width = wmts["matrixWidths"][level].as_u64().unwrap() as u32;
                (0..=height - 1, 0..=width - 1)
            } else {
                xyz_range(&drawn_metadata, level as u32)
            };
            for row in rows {
                for col in cols.clone() {
                    if (scheme, level, row, col) == ("x", 12, sabotaged_row, sabotaged_col) {
                        with_data += 1;
                        continue;
                    }
                    let expected = tile_bytes(&app, &drawn, scheme, level as u32, row, col).await;
                    let served = tile_bytes(&app, &stored, scheme, level as u32, row, col).await;
                    assert!(
                        expected == served,
                        "{scheme}/{level}/{row}/{col} differs from the drawn tile"
                    );
                    if served != empty {
                        with_data += 1;
                    }
                }
            }
        }
        assert_eq!(
            with_data,
            tiles.len(),
            "every tile with data is stored, no other"
        );
    }
);

api_test!(
    another_output_type_of_a_stored_level_is_drawn_not_read_from_the_store,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let stored = created(
            &app,
            &dataset,
            json!({"name": "stored", "tilingSchemes": [
                {"schemeId": "w", "schemeType": "WMTS", "storedZoomLevels": [1]}]}),
        )
        .await;
        stored_metadata(&app, &stored).await;
        let folder = pyramid_folder(&app, &stored);
        let (tile, _) = files_under(&folder)
            .into_iter()
            .find(|(path, _)| path.ends_with("1/0/1"))
            .expect("tile 1/0/1 is stored");
        std::fs::write(&tile, b"stored bytes").unwrap();
        // The scheme's own encoding comes from the store ...
        assert_eq!(
            tile_bytes(&app, &stored, "w", 1, 0, 1).await,
            b"stored bytes"
        );
        // ... another is drawn, with the values of the data.
        let response = app
            .tiles(&stored)
            .scheme("w")
            .tile_with(1, 0, 1, "outputType=RawData")
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "application/octet-stream"
        );
        let bytes = response.bytes();
        assert_eq!(bytes.len(), 256 * 256 * 4);
        let value =
            |index: usize| f32::from_le_bytes(bytes[index * 4..index * 4 + 4].try_into().unwrap());
        // Pixel (0, 0) of tile (0, 1) at level 1 is cell (256, 0).
        assert_eq!(value(0), 256.0);
        assert_eq!(value(256 + 3), 1259.0);
        assert!(value(255).is_nan(), "column 511 is past the grid");
    }
);

api_test_with!(
    stored_levels_past_the_scheme_or_the_limit_are_refused_and_change_nothing,
    |config: &mut basin::Config| config.tiles.stored_tiles_max = 3,
    |app| {
        let grid = utm_grid();
        let (project, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let wmts = |levels: Value| {
            json!({"name": "tiles", "tilingSchemes": [
            {"schemeType": "WMTS", "storedZoomLevels": levels}]})
        };
        refused(
            &app,
            &dataset,
            wmts(json!([0, 9])),
            "tilingSchemes[0].storedZoomLevels",
        )
        .await;
        let xyz = json!({"name": "tiles", "tilingSchemes": [
            {"schemeType": "WMTS"},
            {"schemeType": "XYZ", "zoomLevels": [5], "storedZoomLevels": [6]}]});
        refused(&app, &dataset, xyz, "tilingSchemes[1].storedZoomLevels").await;
        // Repeats are allowed, but not without end.
        refused(
            &app,
            &dataset,
            wmts(json!(vec![0; 257])),
            "tilingSchemes[0].storedZoomLevels",
        )
        .await;
        for levels in [json!([300]), json!([-1]), json!(["0"]), json!({"0": 0})] {
            let response = define(&app, &dataset, wmts(levels)).await;
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
        // Levels 0 and 1 of the native scheme hold 1 and 2 x 1 tiles: 3, the limit; level 2
        // adds more.
        let response = define(&app, &dataset, wmts(json!([0, 1, 2]))).await;
        let problem = expect_problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "too-many-stored-tiles",
        )
        .await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("tiles.stored_tiles_max"),
            "{problem}"
        );
        assert_eq!(datasets_in(&app, &project).await, 1, "nothing was created");
        assert!(
            files_under(&app.config.data_dir.join("blobs").join("pyramids")).is_empty(),
            "nothing was stored"
        );
        let at_limit = created(&app, &dataset, wmts(json!([1, 0]))).await;
        let metadata = stored_metadata(&app, &at_limit).await;
        let scheme = &metadata["tilingSchemes"][0];
        assert_eq!(
            scheme["matrixWidths"][0].as_u64().unwrap()
                * scheme["matrixHeights"][0].as_u64().unwrap(),
            1
        );
        assert_eq!(
            scheme["matrixWidths"][1].as_u64().unwrap()
                * scheme["matrixHeights"][1].as_u64().unwrap(),
            2
        );
        assert_eq!(datasets_in(&app, &project).await, 2);
    }
);

api_test!(
    stored_tiles_stay_with_their_tenant_and_go_with_the_purged_dataset,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let tiles = created(
            &app,
            &dataset,
            json!({"name": "stored", "tilingSchemes": [
                {"schemeId": "w", "schemeType": "WMTS", "storedZoomLevels": [0, 1]}]}),
        )
        .await;
        stored_metadata(&app, &tiles).await;
        let folder = pyramid_folder(&app, &tiles);
        assert!(!files_under(&folder).is_empty());
        let outsider = outsider_key(&app).await;
        for path in [
            routes::tiles_metadata(&tiles),
            routes::scheme_tile(&tiles, "w", 0, 0, 0),
        ] {
            let response = as_outsider(&app, Method::GET, &path, &outsider)
                .send()
                .await
                .unwrap();
            expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        }
        // In the recycle bin the tiles are kept (the dataset may come back) ...
        let deleted = app.dataset(&tiles).delete().await;
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
        assert!(!files_under(&folder).is_empty());
        // ... and removed with it for good.
        let purged = app.recycle_bin().dataset(&tiles).purge().await;
        assert_eq!(purged.status(), StatusCode::NO_CONTENT);
        let started = std::time::Instant::now();
        while !files_under(&folder).is_empty() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "stored tiles outlived their dataset: {:?}",
                files_under(&folder)
            );
            purge_expired(&app).await;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        // The source keeps its own tiles.
        let source = app.tiles(&dataset).scheme("wmts-0").tile(0, 0, 0).await;
        assert_eq!(source.status(), StatusCode::OK);
    }
);

/// Runs the recycle bin's retention job as BackOffice, which also deletes queued blobs.
async fn purge_expired(app: &TestApp) {
    let token = app.token(basin::TokenRequest {
        subject: Uuid::new_v4(),
        roles: vec!["BackOffice".into()],
        ttl: chrono::TimeDelta::minutes(5),
        ..Default::default()
    });
    let response = app
        .with_token(Method::POST, &routes::bin_purge_expired(), &token)
        .header("api-version", "2")
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await;
}

api_test!(
    a_pyramid_whose_renderer_died_is_rendered_again_by_a_live_process,
    |app| {
        let grid = utm_grid();
        let (_, dataset) = uploaded(&app, &grid, "depth.tif").await;
        let tiles = created(
            &app,
            &dataset,
            json!({"name": "stored", "tilingSchemes": [
                {"schemeId": "w", "schemeType": "WMTS", "storedZoomLevels": [0, 1]}]}),
        )
        .await;
        stored_metadata(&app, &tiles).await;
        let folder = pyramid_folder(&app, &tiles);
        let before = files_under(&folder).len();
        // What a renderer leaves when it dies before its manifest: no blobs that are used, and
        // its queue row with a lease that ran out a minute ago.
        std::fs::remove_dir_all(&folder).unwrap();
        let expired = app.clock.now() - chrono::TimeDelta::minutes(1);
        let id: Uuid = tiles.parse().unwrap();
        basin::on_db!(&app.db, |pool| sqlx::query(
            "UPDATE tile_pyramids SET state = 'queued', queued_at = $2, attempts = 1, \
             lease_owner = 'a renderer that died', lease_expires_at = $2 WHERE dataset_id = $1"
        )
        .bind(id)
        .bind(expired)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))
        .unwrap();
        let started = std::time::Instant::now();
        loop {
            let files = files_under(&folder);
            let queued: i64 = basin::on_db!(&app.db, |pool| sqlx::query_scalar(
                "SELECT COUNT(*) FROM tile_pyramids WHERE state <> 'stored'"
            )
            .fetch_one(pool)
            .await)
            .unwrap();
            if queued == 0
                && files
                    .iter()
                    .any(|(path, _)| path.ends_with("manifest.json"))
            {
                assert_eq!(files.len(), before, "the same pyramid again: {files:?}");
                break;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "the pyramid was not rendered again: {files:?}, {queued} queued"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
);

/// What `tileStorageSizeKB` should say of a pyramid folder's `files`: its tiles' bytes, not
/// the manifest's, in kilobytes rounded up.
pub(crate) fn stored_kilobytes(files: &[(PathBuf, u64)]) -> u64 {
    files
        .iter()
        .filter(|(path, _)| !path.ends_with("manifest.json"))
        .map(|(_, size)| size)
        .sum::<u64>()
        .div_ceil(1024)
}

/// Replaces the content of `dataset` by an update transfer with the UTM grid 2.5 km narrower.
async fn replace_with_narrower_grid(app: &TestApp, dataset: &str) {
    let narrower = crate::tiles::Grid {
        columns: 200,
        ..utm_grid()
    };
    let url = crate::transfers::upload(app, "narrower.tif", &narrower.geotiff()).await;
    let summary = crate::transfers::start(
        app,
        &routes::dataset_update(dataset),
        json!({"uploadUrl": url, "originalFileName": "narrower.tif", "readerName": "GeoTiffReader"}),
    )
    .await;
    let transfer = crate::transfers::wait_for(app, summary["id"].as_str().unwrap()).await;
    assert_eq!(transfer["status"], "Completed", "{transfer}");
}

/// Polls the row of `tiles` until a pyramid of content other than `old_version` is stored.
async fn stored_again(app: &TestApp, tiles: &str, old_version: &str) -> PyramidRow {
    let stored = pyramid_row_until(app, tiles, "storing the new content", |row| {
        row.state == "stored"
            && row
                .stored_version
                .as_ref()
                .is_some_and(|version| version != old_version)
    })
    .await;
    assert_eq!(stored.attempts, 0, "{stored:?}");
    stored
}

/// The queue row of tiles dataset `tiles`, as the renderer left it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct PyramidRow {
    pub(crate) state: String,
    pub(crate) attempts: i64,
    pub(crate) leased: bool,
    pub(crate) last_error: Option<String>,
    pub(crate) rendering_version: Option<String>,
    pub(crate) stored_version: Option<String>,
}

pub(crate) async fn pyramid_row(app: &TestApp, tiles: &str) -> PyramidRow {
    let id: Uuid = tiles.parse().unwrap();
    basin::on_db!(&app.db, |pool| sqlx::query_as::<_, PyramidRow>(
        "SELECT state, CAST(attempts AS BIGINT) AS attempts, lease_owner IS NOT NULL AS leased, \
         last_error, rendering_version, stored_version FROM tile_pyramids WHERE dataset_id = $1"
    )
    .bind(id)
    .fetch_one(pool)
    .await)
    .unwrap()
}

/// Polls the queue row of `tiles` until `done` holds; at most 60 s.
pub(crate) async fn pyramid_row_until(
    app: &TestApp,
    tiles: &str,
    what: &str,
    done: impl Fn(&PyramidRow) -> bool,
) -> PyramidRow {
    let started = std::time::Instant::now();
    loop {
        let row = pyramid_row(app, tiles).await;
        if done(&row) {
            return row;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{what} did not happen: {row:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Makes every write below the tenant's pyramids fail, as a store that refuses writes does:
/// a file stands where the tenant's folder would be.
fn block_tenant_pyramids(app: &TestApp) -> PathBuf {
    let blocker = pyramid_folder(app, "x").parent().unwrap().to_path_buf();
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, b"in the way").unwrap();
    blocker
}

/// The native scheme's levels 0 to 2 stored: 1, 2 and 8 tiles of the UTM grid.
fn native_levels() -> Value {
    json!([{"schemeId": "w", "schemeType": "WMTS", "storedZoomLevels": [0, 1, 2]}])
}

/// A tiles dataset storing levels 13 to 16 of the web map: a few hundred tiles of the UTM grid,
/// seconds of drawing, so a test can act while it renders.
pub(crate) fn web_levels_13_to_16() -> Value {
    json!({"name": "stored", "tilingSchemes": [{"schemeId": "x", "schemeType": "XYZ",
           "zoomLevels": [16], "storedZoomLevels": [13, 14, 15, 16]}]})
}

/// Waits until `folder` holds at least `count` files (a rendering is under way); at most 60 s.
pub(crate) async fn until_files(folder: &Path, count: usize) {
    let started = std::time::Instant::now();
    while files_under(folder).len() < count {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "nothing was rendered"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Quick renderers whose leases are renewed every sixth of a second, so a renderer learns of
/// new content or a purge at once.
fn quick_leases(config: &mut basin::Config) {
    quick_renderers(config);
    config.tiles.pyramid_lease_seconds = std::time::Duration::from_secs(1);
}

/// Renderers look for work every 50 ms, so the tests need not wait for them.
fn quick_renderers(config: &mut basin::Config) {
    config.tiles.pyramid_poll_ms = std::time::Duration::from_millis(50);
}

api_test_with!(
    a_pyramid_that_faults_midway_is_retried_after_a_lease_and_given_up_after_three_attempts,
    quick_renderers,
    |app| {
        let (_, dataset) = uploaded(&app, &utm_grid(), "depth.tif").await;
        let drawn = created(
            &app,
            &dataset,
            json!({"name": "drawn", "tilingSchemes": [{"schemeId": "w", "schemeType": "WMTS"}]}),
        )
        .await;
        let blocker = block_tenant_pyramids(&app);
        let tiles = created(
            &app,
            &dataset,
            json!({"name": "stored", "tilingSchemes": native_levels()}),
        )
        .await;
        // Attempt 1 fails at its first tile; the fault is recorded and the lease handed back
        // with a retry time a lease away.
        let first = pyramid_row_until(&app, &tiles, "the first fault", |row| {
            row.attempts == 1 && !row.leased && row.last_error.is_some()
        })
        .await;
        assert_eq!(first.state, "queued", "{first:?}");
        assert!(first.stored_version.is_none());
        let version = first
            .rendering_version
            .clone()
            .expect("the version is recorded");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(
            pyramid_row(&app, &tiles).await,
            first,
            "no retry before the lease's time"
        );

        // Attempt 2 stores levels 0 and 1, then level 2 cannot be written.
        std::fs::remove_file(&blocker).unwrap();
        let level_two = pyramid_folder(&app, &tiles).join(&version).join("0/0/0/2");
        std::fs::create_dir_all(level_two.parent().unwrap()).unwrap();
        std::fs::write(&level_two, b"in the way").unwrap();
        app.clock.advance(chrono::TimeDelta::seconds(61));
        let second = pyramid_row_until(&app, &tiles, "the second fault", |row| {
            row.attempts == 2 && !row.leased
        })
        .await;
        assert_eq!(second.state, "queued", "{second:?}");
        let written = files_under(&pyramid_folder(&app, &tiles).join(&version));
        assert!(
            written
                .iter()
                .any(|(path, _)| path.to_string_lossy().contains("/0/0/0/1/")),
            "level 1 was stored before the fault: {written:?}"
        );
        assert!(
            !written
                .iter()
                .any(|(path, _)| path.ends_with("manifest.json")),
            "{written:?}"
        );
        // Meanwhile tiles are drawn, right, and nothing counts as stored.
        assert_eq!(metadata(&app, &tiles).await["tileStorageSizeKB"], 0);
        for (z, row, col) in [(0, 0, 0), (1, 0, 0), (2, 0, 0)] {
            assert_eq!(
                tile_bytes(&app, &tiles, "w", z, row, col).await,
                tile_bytes(&app, &drawn, "w", z, row, col).await
            );
        }

        // Attempt 3 fails the same way: the pyramid is given up and what it wrote removed.
        app.clock.advance(chrono::TimeDelta::seconds(61));
        let given_up =
            pyramid_row_until(&app, &tiles, "giving up", |row| row.state == "given_up").await;
        assert_eq!(given_up.attempts, 3, "{given_up:?}");
        assert!(!given_up.leased && given_up.stored_version.is_none());
        assert!(given_up.last_error.is_some());
        let folder = pyramid_folder(&app, &tiles);
        let started = std::time::Instant::now();
        while folder.exists() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "a given-up pyramid's blobs stayed: {:?}",
                files_under(&folder)
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // Never tried again, and its tiles stay drawn on demand.
        app.clock.advance(chrono::TimeDelta::hours(1));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(pyramid_row(&app, &tiles).await, given_up);
        assert_eq!(metadata(&app, &tiles).await["tileStorageSizeKB"], 0);
        assert_eq!(
            tile_bytes(&app, &tiles, "w", 2, 0, 0).await,
            tile_bytes(&app, &drawn, "w", 2, 0, 0).await
        );
    }
);

api_test_with!(
    a_pyramid_is_stored_after_a_fault_and_rendered_again_when_its_source_is_replaced,
    quick_renderers,
    |app| {
        let (_, dataset) = uploaded(&app, &utm_grid(), "depth.tif").await;
        let blocker = block_tenant_pyramids(&app);
        let tiles = created(
            &app,
            &dataset,
            json!({"name": "stored", "tilingSchemes": native_levels()}),
        )
        .await;
        pyramid_row_until(&app, &tiles, "the first fault", |row| {
            row.attempts == 1 && !row.leased
        })
        .await;
        std::fs::remove_file(&blocker).unwrap();
        app.clock.advance(chrono::TimeDelta::seconds(61));
        let before = stored_metadata(&app, &tiles).await;
        let stored = pyramid_row(&app, &tiles).await;
        assert_eq!(stored.state, "stored", "{stored:?}");
        assert_eq!((stored.attempts, stored.last_error.as_deref()), (0, None));
        let old_version = stored.stored_version.clone().unwrap();
        let old_tile = tile_bytes(&app, &tiles, "w", 0, 0, 0).await;

        // New content for the source, 2.5 km narrower: the pyramid is queued again and
        // rendered from it, and the old content's tiles are removed.
        replace_with_narrower_grid(&app, &dataset).await;
        stored_again(&app, &tiles, &old_version).await;
        let after = stored_metadata(&app, &tiles).await;
        assert_ne!(before["nativeExtent"], after["nativeExtent"]);
        let folder = pyramid_folder(&app, &tiles);
        let started = std::time::Instant::now();
        while folder.join(&old_version).exists() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "the old content's tiles stayed"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let files = files_under(&folder);
        let total: u64 = files
            .iter()
            .filter(|(path, _)| !path.ends_with("manifest.json"))
            .map(|(_, size)| size)
            .sum();
        assert_eq!(
            after["tileStorageSizeKB"],
            total.div_ceil(1024),
            "{files:?}"
        );
        // The stored tiles are the new content's, byte for byte what drawing gives.
        let drawn = created(
            &app,
            &dataset,
            json!({"name": "drawn", "tilingSchemes": [{"schemeId": "w", "schemeType": "WMTS"}]}),
        )
        .await;
        let new_tile = tile_bytes(&app, &tiles, "w", 0, 0, 0).await;
        assert!(new_tile != old_tile, "the tile shows the new content");
        assert!(
            new_tile == tile_bytes(&app, &drawn, "w", 0, 0, 0).await,
            "the stored tile is the drawn one"
        );
    }
);

api_test_with!(
    new_content_stops_a_rendering_of_the_old_and_leaves_only_the_new_pyramid,
    quick_leases,
    |app| {
        let (_, dataset) = uploaded(&app, &utm_grid(), "depth.tif").await;
        let tiles = created(&app, &dataset, web_levels_13_to_16()).await;
        let folder = pyramid_folder(&app, &tiles);
        until_files(&folder, 5).await;
        let first = pyramid_row(&app, &tiles).await;
        let first_version = first.rendering_version.clone().unwrap();

        replace_with_narrower_grid(&app, &dataset).await;
        assert!(
            !folder.join(&first_version).join("manifest.json").exists(),
            "the old content's rendering was still running when the new content came"
        );

        let stored = stored_again(&app, &tiles, &first_version).await;
        // One version folder, the new one, with its manifest; the tiles' sizes add up.
        let versions: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(versions, vec![stored.stored_version.clone().unwrap()]);
        let metadata = stored_metadata(&app, &tiles).await;
        let files = files_under(&folder);
        assert_eq!(metadata["tileStorageSizeKB"], stored_kilobytes(&files));
    }
);

api_test_with!(
    a_tiles_dataset_purged_while_its_pyramid_renders_leaves_no_blob_and_no_row,
    quick_leases,
    |app| {
        let (_, dataset) = uploaded(&app, &utm_grid(), "depth.tif").await;
        let tiles = created(&app, &dataset, web_levels_13_to_16()).await;
        let folder = pyramid_folder(&app, &tiles);
        until_files(&folder, 5).await;
        let deleted = app.dataset(&tiles).delete().await;
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT, "deletion");
        let purged = app.recycle_bin().dataset(&tiles).purge().await;
        assert_eq!(purged.status(), StatusCode::NO_CONTENT, "purge");
        assert!(
            !files_under(&folder)
                .iter()
                .any(|(path, _)| path.ends_with("manifest.json")),
            "purged while rendering"
        );
        // The purge queued the folder for removal and the renderer stops at its next renewal
        // and removes what it wrote after that: nothing stays, however the two interleave.
        let started = std::time::Instant::now();
        loop {
            purge_expired(&app).await;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            if !folder.exists() {
                break;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "blobs outlived their purged dataset: {} files",
                files_under(&folder).len()
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert!(!folder.exists(), "written after the purge");
        let rows: i64 = basin::on_db!(&app.db, |pool| sqlx::query_scalar(
            "SELECT COUNT(*) FROM tile_pyramids"
        )
        .fetch_one(pool)
        .await)
        .unwrap();
        assert_eq!(rows, 0);
    }
);

api_test_with!(
    content_written_in_place_through_a_hierarchy_upload_url_renders_the_pyramid_again,
    quick_renderers,
    |app| {
        let project = app.create_project(As::Key, "maps", json!({})).await;
        let project = id_str(&project).to_owned();
        let body = json!({"actions": [
            {"type": "PathActionCreate", "path": "depth.tif", "isFolder": false}],
            "defaultAccessLevel": "Shared", "sasTokenExpiration": "1:00:00"});
        let response = app.hierarchy(&project).apply(&body).await;
        let answer = expect_status(response, StatusCode::OK).await;
        let file = &answer["results"][0];
        let url = file["sasToken"].as_str().unwrap().to_owned();
        let dataset = file["datasetId"].as_str().unwrap().to_owned();
        let write = |bytes: Vec<u8>| {
            let request = app
                .client
                .put(&url)
                .header("x-ms-blob-type", "BlockBlob")
                .body(bytes);
            async move {
                assert_eq!(request.send().await.unwrap().status(), StatusCode::CREATED);
            }
        };
        write(utm_grid().geotiff()).await;
        let tiles = created(
            &app,
            &dataset,
            json!({"name": "stored", "tilingSchemes": native_levels()}),
        )
        .await;
        stored_metadata(&app, &tiles).await;
        let first = pyramid_row(&app, &tiles).await;
        let old_tile = tile_bytes(&app, &tiles, "w", 0, 0, 0).await;

        write(
            crate::tiles::Grid {
                columns: 200,
                ..utm_grid()
            }
            .geotiff(),
        )
        .await;
        stored_again(&app, &tiles, first.stored_version.as_deref().unwrap()).await;
        let new_tile = tile_bytes(&app, &tiles, "w", 0, 0, 0).await;
        assert!(
            new_tile != old_tile,
            "the stored tiles show the new content"
        );
    }
);

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
use crate::tiles::{
    as_outsider, datasets_in, define, get, outsider_key, refused, uploaded, utm_grid,
};

/// The stored pyramids' folder of tiles dataset `tiles` in the app's local blob store.
fn pyramid_folder(app: &TestApp, tiles: &str) -> PathBuf {
    app.config
        .data_dir
        .join("blobs")
        .join("pyramids")
        .join(app.tenant_id().to_string())
        .join(tiles)
}

/// Every file below `folder` with its size (none when it does not exist).
fn files_under(folder: &Path) -> Vec<(PathBuf, u64)> {
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

async fn metadata(app: &TestApp, dataset: &str) -> Value {
    let response = get(app, &format!("/api/tiles/dataset/{dataset}/metadata")).await;
    expect_status(response, StatusCode::OK).await
}

/// Polls the metadata of `tiles` until it reports stored tiles (the background rendering
/// finished); at most 60 s.
async fn stored_metadata(app: &TestApp, tiles: &str) -> Value {
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

async fn tile_bytes(
    app: &TestApp,
    dataset: &str,
    scheme: &str,
    z: u32,
    row: u32,
    col: u32,
) -> Vec<u8> {
    let response = get(
        app,
        &format!("/api/tiles/dataset/{dataset}/scheme/{scheme}/{z}/{row}/{col}"),
    )
    .await;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "{scheme}/{z}/{row}/{col}"
    );
    response.bytes().await.unwrap().to_vec()
}

async fn created(app: &TestApp, dataset: &str, body: Value) -> String {
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
            let empty = get(
                &app,
                &format!("/api/tiles/dataset/{drawn}/scheme/{scheme}/emptyTile"),
            )
            .await
            .bytes()
            .await
            .unwrap()
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
            format!("/api/tiles/dataset/{tiles}/metadata"),
            format!("/api/tiles/dataset/{tiles}/scheme/w/0/0/0"),
        ] {
            let response = as_outsider(&app, Method::GET, &path, &outsider)
                .send()
                .await
                .unwrap();
            expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        }
        // In the recycle bin the tiles are kept (the dataset may come back) ...
        let deleted = app
            .with_key(Method::DELETE, &format!("/api/metadata/dataset/{tiles}"))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
        assert!(!files_under(&folder).is_empty());
        // ... and removed with it for good.
        let purged = app
            .with_key(Method::DELETE, &format!("/api/recycle-bin/dataset/{tiles}"))
            .send()
            .await
            .unwrap();
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
        let source = get(
            &app,
            &format!("/api/tiles/dataset/{dataset}/scheme/wmts-0/0/0/0"),
        )
        .await;
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
        .with_token(Method::POST, "/api/admin/recycle-bin/purge-expired", &token)
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
            "INSERT INTO tile_pyramids (dataset_id, queued_at, attempts, lease_owner, \
             lease_expires_at) VALUES ($1, $2, 1, 'a renderer that died', $2)"
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
                "SELECT COUNT(*) FROM tile_pyramids"
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

//! Caches of authentication and access (docs/authentication.md, caches): a serving process
//! keeps API keys, users, memberships and tile access checks in memory, and every change that
//! could alter them ends that at once when made through the process, and within the refresh
//! interval when made by another process (here: a statement on the store that bypasses Basin).

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::*;

/// A GeoJSON dataset in a new project of the bootstrap tenant: (project, dataset).
async fn pond(app: &TestApp, access_level: &str) -> (serde_json::Value, String) {
    let project = app
        .create_project(As::Key, "ponds", json!({"accessLevel": access_level}))
        .await;
    let collection = json!({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": "pond"},
         "geometry": {"type": "Polygon", "coordinates": [[[5.0, 52.0], [5.01, 52.0], [5.01, 52.01], [5.0, 52.0]]]}}
    ]});
    let response = app
        .upload_file(
            id_str(&project),
            "pond.geojson",
            collection.to_string().into_bytes(),
        )
        .await;
    let dataset = expect_status(response, StatusCode::CREATED).await;
    let dataset = id_str(&dataset).to_owned();
    (project, dataset)
}

/// The vector tile that holds the pond.
fn pond_tile(dataset: &str) -> String {
    routes::vector_tile(dataset, 14, 8419, 5411)
}

async fn tile_with_key(app: &TestApp, dataset: &str, key: &str) -> StatusCode {
    app.anonymous(Method::GET, &pond_tile(dataset))
        .header("svc-open-api-key", key)
        .send()
        .await
        .unwrap()
        .status()
}

async fn tile_with_token(app: &TestApp, dataset: &str, token: &str) -> StatusCode {
    app.with_token(Method::GET, &pond_tile(dataset), token)
        .send()
        .await
        .unwrap()
        .status()
}

/// Asks for the pond's tile a few times with `token`, each answered, so that the answer is
/// kept in memory.
async fn seen_with_token(app: &TestApp, dataset: &str, token: &str) {
    for _ in 0..3 {
        assert_eq!(tile_with_token(app, dataset, token).await, StatusCode::OK);
    }
}

/// Asks until `ask` answers `expected`, for at most `within`; how long it took.
async fn answers_within<F, Fut>(within: Duration, expected: StatusCode, ask: F) -> Duration
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = StatusCode>,
{
    let start = Instant::now();
    loop {
        let status = ask().await;
        if status == expected {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < within,
            "still {status} after {within:?}, expected {expected}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

api_test!(a_revoked_key_is_refused_at_once, |app| {
    let (_, dataset) = pond(&app, "Private").await;
    let (key_id, key) = app.create_api_key(app.tenant_id(), "Owner").await;
    for _ in 0..3 {
        assert_eq!(tile_with_key(&app, &dataset, &key).await, StatusCode::OK);
    }
    let tenant = app.as_back_office().admin().tenant(app.tenant_id());
    let response = tenant.revoke_api_key(key_id).await;
    assert!(response.status().is_success(), "{}", response.status());
    let response = app
        .anonymous(Method::GET, &pond_tile(&dataset))
        .header("svc-open-api-key", &key)
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-revoked").await;
});

api_test!(a_disabled_user_is_refused_at_once, |app| {
    let (_, dataset) = pond(&app, "Shared").await;
    let person = app.person("reader", "User").await;
    seen_with_token(&app, &dataset, &person.token).await;
    let response = app
        .as_back_office()
        .admin()
        .patch_user(person.id, &json!({"disabled": true}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        tile_with_token(&app, &dataset, &person.token).await,
        StatusCode::UNAUTHORIZED
    );
});

api_test!(a_removed_project_member_loses_the_tiles_at_once, |app| {
    let (project, dataset) = pond(&app, "Private").await;
    let person = app.person("guest", "User").await;
    assert_eq!(
        tile_with_token(&app, &dataset, &person.token).await,
        StatusCode::NOT_FOUND
    );
    let response = app
        .add_project_member(As::Key, &project, person.id, "Reader")
        .await;
    assert!(response.status().is_success(), "{}", response.status());
    seen_with_token(&app, &dataset, &person.token).await;
    let response = app
        .project(id_str(&project))
        .members()
        .remove(&person.id)
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        tile_with_token(&app, &dataset, &person.token).await,
        StatusCode::NOT_FOUND
    );
});

api_test!(a_tenant_member_removed_loses_shared_tiles_at_once, |app| {
    let (_, dataset) = pond(&app, "Shared").await;
    let person = app.person("colleague", "User").await;
    seen_with_token(&app, &dataset, &person.token).await;
    let tenant = app.as_back_office().admin().tenant(app.tenant_id());
    let response = tenant.remove_member(person.id).await;
    assert!(response.status().is_success(), "{}", response.status());
    let status = tile_with_token(&app, &dataset, &person.token).await;
    assert!(
        status == StatusCode::NOT_FOUND || status == StatusCode::FORBIDDEN,
        "{status}"
    );
});

api_test!(a_project_made_private_hides_its_tiles_at_once, |app| {
    let (project, dataset) = pond(&app, "Shared").await;
    let person = app.person("colleague", "User").await;
    seen_with_token(&app, &dataset, &person.token).await;
    let response = app
        .projects()
        .patch(&json!({"id": id_str(&project), "accessLevel": "Private"}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        tile_with_token(&app, &dataset, &person.token).await,
        StatusCode::NOT_FOUND
    );
});

api_test!(a_deleted_dataset_has_no_tiles_at_once, |app| {
    let (_, dataset) = pond(&app, "Private").await;
    for _ in 0..3 {
        assert_eq!(
            app.with_key(Method::GET, &pond_tile(&dataset))
                .send()
                .await
                .unwrap()
                .status(),
            StatusCode::OK
        );
    }
    let response = app.dataset(&dataset).delete().await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let response = app
        .with_key(Method::GET, &pond_tile(&dataset))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
});

/// A statement run on the store directly, as another replica or an admin command would, with
/// `id` as `$1` and the time now as `$2`.
async fn behind_basins_back(app: &TestApp, statement: &str, id: uuid::Uuid) {
    let now = chrono::Utc::now();
    let changed = basin::on_db!(&app.db, |pool| sqlx::query(sqlx::AssertSqlSafe(
        statement.to_owned()
    ))
    .bind(id)
    .bind(now)
    .execute(pool)
    .await
    .unwrap()
    .rows_affected());
    assert_eq!(changed, 1);
}

const REVOKE: &str = "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND $2 IS NOT NULL";

api_test_with!(
    changes_made_by_another_process_are_seen_within_the_refresh,
    |config| config.auth.access_refresh_ms = std::time::Duration::from_millis(100),
    |app| {
        let (_, dataset) = pond(&app, "Shared").await;
        let (key_id, key) = app.create_api_key(app.tenant_id(), "User").await;
        let person = app.person("colleague", "User").await;
        for _ in 0..3 {
            assert_eq!(tile_with_key(&app, &dataset, &key).await, StatusCode::OK);
            assert_eq!(
                tile_with_token(&app, &dataset, &person.token).await,
                StatusCode::OK
            );
        }
        behind_basins_back(&app, REVOKE, key_id).await;
        answers_within(Duration::from_secs(5), StatusCode::UNAUTHORIZED, || {
            tile_with_key(&app, &dataset, &key)
        })
        .await;
        behind_basins_back(
            &app,
            "DELETE FROM tenant_members WHERE user_id = $1 AND $2 IS NOT NULL",
            person.id,
        )
        .await;
        let gone = answers_within(Duration::from_secs(5), StatusCode::NOT_FOUND, || {
            tile_with_token(&app, &dataset, &person.token)
        })
        .await;
        assert!(gone < Duration::from_secs(2), "seen after {gone:?}");
    }
);

api_test_with!(
    no_cache_reads_the_store_every_time,
    |config| config.auth.access_refresh_ms = std::time::Duration::from_millis(0),
    |app| {
        let (_, dataset) = pond(&app, "Shared").await;
        let (key_id, key) = app.create_api_key(app.tenant_id(), "User").await;
        assert_eq!(tile_with_key(&app, &dataset, &key).await, StatusCode::OK);
        behind_basins_back(&app, REVOKE, key_id).await;
        assert_eq!(
            tile_with_key(&app, &dataset, &key).await,
            StatusCode::UNAUTHORIZED
        );
    }
);

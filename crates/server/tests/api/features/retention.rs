//! Retention of expired feature messages (docs/features.md#retention): removed once they ended
//! more than `features.message_retention_days` ago, global ones too, by the job and on demand.

use std::time::Duration;

use chrono::TimeDelta;
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::{in_seconds, list_ids};
use crate::helpers::{TestApp, expect_problem, routes};

/// Publishes a notice as BackOffice on `feature`'s endpoints (the global ones for `None`),
/// started a day ago and ending `ends_in_seconds` from now.
async fn publish(app: &TestApp, feature: Option<&str>, ends_in_seconds: i64) -> i64 {
    let body = json!({
        "type": "Informational", "title": "notice", "body": "",
        "startDate": in_seconds(app, -86_400),
        "expiringDate": in_seconds(app, ends_in_seconds),
    });
    let created = app.feature_operator().messages(feature).create(&body).await;
    created.parse(StatusCode::CREATED).id
}

/// The ids of Platform's list (its messages and the global ones), oldest end first.
async fn kept_ids(app: &TestApp) -> Vec<i64> {
    let query = "expiry=All&sortOrder=Asc&sortBy=ExpiringDate";
    list_ids(app, Some("Platform"), query).await
}

/// Runs retention now as BackOffice and returns how many messages it removed.
async fn purge(app: &TestApp) -> u64 {
    let removed = app.feature_operator().purge_expired().await.ok();
    removed["removed"].as_u64().unwrap()
}

api_test!(
    messages_go_only_after_more_than_the_retention_period,
    |app| {
        let feature = publish(&app, Some("Platform"), 10).await;
        let global = publish(&app, None, 20).await;
        let active = publish(&app, Some("Platform"), 40 * 86_400).await;
        app.clock
            .advance(TimeDelta::days(30) + TimeDelta::seconds(10));
        assert_eq!(purge(&app).await, 0, "ended exactly 30 days ago: kept");
        assert_eq!(kept_ids(&app).await, [feature, global, active]);
        app.clock.advance(TimeDelta::seconds(1));
        assert_eq!(purge(&app).await, 1);
        assert_eq!(kept_ids(&app).await, [global, active]);
        app.clock.advance(TimeDelta::seconds(10));
        assert_eq!(purge(&app).await, 1, "global messages are removed too");
        assert_eq!(kept_ids(&app).await, [active]);
        assert_eq!(purge(&app).await, 0);
    }
);

api_test_with!(
    the_retention_period_is_configurable,
    |config| config.features.message_retention_days = 2,
    |app| {
        let id = publish(&app, Some("Platform"), 0).await;
        app.clock.advance(TimeDelta::days(1));
        assert_eq!(purge(&app).await, 0);
        app.clock
            .advance(TimeDelta::days(1) + TimeDelta::seconds(1));
        assert_eq!(purge(&app).await, 1);
        assert!(!kept_ids(&app).await.contains(&id));
    }
);

api_test_with!(
    the_job_removes_expired_messages_by_itself,
    |config| config.features.retention_interval_seconds = std::time::Duration::from_secs(1),
    |app| {
        let id = publish(&app, None, 5).await;
        app.clock.advance(TimeDelta::days(31));
        for _ in 0..100 {
            if !kept_ids(&app).await.contains(&id) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the retention job did not remove the message within 10 s");
    }
);

api_test!(only_back_office_runs_the_retention_job, |app| {
    let response = app.api().features().purge_expired().await;
    response.problem(StatusCode::FORBIDDEN, "forbidden");
    let response = app
        .anonymous(Method::POST, &routes::feature_messages_purge_expired())
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-missing").await;
});

api_test!(concurrent_runs_remove_each_message_once, |app| {
    let app = std::sync::Arc::new(app);
    let mut created = tokio::task::JoinSet::new();
    for worker in 0..8 {
        let app = app.clone();
        created.spawn(async move {
            for _ in 0..150 {
                let feature = if worker % 2 == 0 {
                    None
                } else {
                    Some("Platform")
                };
                publish(&app, feature, 1).await;
            }
        });
    }
    while let Some(done) = created.join_next().await {
        done.unwrap();
    }
    app.clock.advance(TimeDelta::days(31));
    let (first, second, third) = tokio::join!(purge(&app), purge(&app), purge(&app));
    assert_eq!(
        first + second + third,
        1200,
        "every message removed exactly once"
    );
    assert!(kept_ids(&app).await.is_empty());
});

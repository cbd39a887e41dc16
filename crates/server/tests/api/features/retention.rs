//! Retention of expired feature messages (docs/features.md#retention): removed once they ended
//! more than `features.message_retention_days` ago, global ones too, by the job and on demand.

use std::time::Duration;

use basin::Clock;
use chrono::{SecondsFormat, TimeDelta};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{TestApp, expect_problem, expect_status, routes};

/// A BackOffice token valid at the app's now (the clock moves by days here).
fn operator(app: &TestApp) -> String {
    app.token(basin::TokenRequest {
        subject: uuid::Uuid::new_v4(),
        roles: vec!["BackOffice".into()],
        scopes: vec![
            "platform_iam_featurestatus_read".into(),
            "platform_iam_featurestatus_readwrite".into(),
        ],
        ttl: TimeDelta::hours(1),
        ..Default::default()
    })
}

async fn publish(app: &TestApp, path: &str, ends_in_seconds: i64) -> i64 {
    let now = app.clock.now();
    let body = json!({
        "type": "Informational", "title": "notice", "body": "",
        "startDate": (now - TimeDelta::days(1)).to_rfc3339_opts(SecondsFormat::Micros, true),
        "expiringDate": (now + TimeDelta::seconds(ends_in_seconds)).to_rfc3339_opts(SecondsFormat::Micros, true),
    });
    let response = app
        .with_token(Method::POST, path, &operator(app))
        .json(&body)
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::CREATED).await["id"]
        .as_i64()
        .unwrap()
}

async fn kept_ids(app: &TestApp) -> Vec<i64> {
    let response = app
        .with_token(
            Method::GET,
            &format!(
                "{}?expiry=All&sortOrder=Asc&sortBy=ExpiringDate",
                routes::feature_messages("Platform")
            ),
            &operator(app),
        )
        .send()
        .await
        .unwrap();
    let body = expect_status(response, StatusCode::OK).await;
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

async fn purge(app: &TestApp) -> u64 {
    let response = app
        .with_token(
            Method::POST,
            &routes::feature_messages_purge_expired(),
            &operator(app),
        )
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await["removed"]
        .as_u64()
        .unwrap()
}

api_test!(
    messages_go_only_after_more_than_the_retention_period,
    |app| {
        let feature = publish(&app, &routes::feature_messages("Platform"), 10).await;
        let global = publish(&app, &routes::global_messages(), 20).await;
        let active = publish(&app, &routes::feature_messages("Platform"), 40 * 86_400).await;
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
        let id = publish(&app, &routes::feature_messages("Platform"), 0).await;
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
        let id = publish(&app, &routes::global_messages(), 5).await;
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
    let response = app
        .with_key(Method::POST, &routes::feature_messages_purge_expired())
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
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
                let path = if worker % 2 == 0 {
                    &routes::global_messages()
                } else {
                    &routes::feature_messages("Platform")
                };
                publish(&app, path, 1).await;
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

//! The banner of feature messages (docs/features.md, the banner): what is active, in what
//! order, its ETag and 304s, Cache-Control, and the moment it changes, on both databases.

use basin::Clock;
use chrono::TimeDelta;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::in_seconds;
use crate::helpers::{As, Banner, Reply, TestApp, expect_problem, routes};

/// Publishes a message as BackOffice, active from `window.0` to `window.1` seconds from now.
async fn publish(
    app: &TestApp,
    feature: Option<&str>,
    kind: &str,
    title: &str,
    window: (i64, i64),
) -> i64 {
    let body = json!({"type": kind, "title": title, "body": "<p>x</p>",
                      "startDate": in_seconds(app, window.0),
                      "expiringDate": in_seconds(app, window.1)});
    let created = app.features().messages(feature).create(&body).await;
    created.parse(StatusCode::CREATED).id
}

/// The banner of `feature` as the bootstrap API key, with `If-None-Match` when given.
async fn banner(app: &TestApp, feature: &str, if_none_match: Option<&str>) -> Reply<Banner> {
    app.api().features().banner(feature, if_none_match).await
}

/// The banner's titles, ETag and JSON.
async fn shown(app: &TestApp, feature: &str) -> (Vec<String>, String, Value) {
    let reply = banner(app, feature, None).await;
    let etag = reply.headers()["etag"].to_str().unwrap().to_owned();
    let json = reply.expect(StatusCode::OK);
    let titles = serde_json::from_value::<Banner>(json.clone())
        .unwrap_or_else(|error| panic!("not a banner ({error}): {json}"))
        .titles();
    (titles, etag, json)
}

api_test!(
    the_banner_shows_active_messages_of_the_feature_and_global_ones_most_severe_first,
    |app| {
        publish(
            &app,
            Some("Platform"),
            "Informational",
            "info old",
            (-100, 1000),
        )
        .await;
        publish(
            &app,
            Some("Platform"),
            "Informational",
            "info new",
            (-50, 1000),
        )
        .await;
        publish(&app, None, "Warning", "global warning", (-100, 500)).await;
        publish(&app, Some("Platform"), "Critical", "outage", (-10, 2000)).await;
        publish(
            &app,
            Some("Other"),
            "Critical",
            "other feature",
            (-10, 1000),
        )
        .await;
        publish(&app, Some("Platform"), "Critical", "pending", (300, 1000)).await;
        publish(&app, None, "Critical", "expired", (-100, -1)).await;
        let (titles, _, body) = shown(&app, "Platform").await;
        assert_eq!(titles, ["outage", "global warning", "info new", "info old"]);
        assert_eq!(body["featureId"], "Platform");
        let next = (app.clock.now() + TimeDelta::seconds(300))
            .format("%Y-%m-%dT%H:%M:%S")
            .to_string();
        assert!(
            body["nextChangeAt"].as_str().unwrap().starts_with(&next),
            "{body}"
        );
        assert!(body["data"][1]["featureId"].is_null());
        let (others, _, _) = shown(&app, "Other").await;
        assert_eq!(others, ["other feature", "global warning"]);
        let (nobody, _, body) = shown(&app, "Unknown-Feature").await;
        assert_eq!(nobody, ["global warning"]);
        assert!(body["nextChangeAt"].is_string());
    }
);

api_test!(
    the_banner_changes_the_second_a_message_starts_and_ends,
    |app| {
        let (_, nothing_tag, _) = shown(&app, "Platform").await;
        publish(&app, Some("Platform"), "Warning", "maintenance", (10, 20)).await;
        let (before, empty_tag, _) = shown(&app, "Platform").await;
        assert!(before.is_empty());
        assert_ne!(
            empty_tag, nothing_tag,
            "a pending message changes nextChangeAt, so the tag too"
        );
        app.clock.advance(TimeDelta::seconds(9));
        let (still, tag, _) = shown(&app, "Platform").await;
        assert!(still.is_empty());
        assert_eq!(tag, empty_tag);
        banner(&app, "Platform", Some(&tag))
            .await
            .expect(StatusCode::NOT_MODIFIED);
        app.clock.advance(TimeDelta::seconds(1));
        let stale = banner(&app, "Platform", Some(&tag)).await;
        assert_eq!(
            stale.status(),
            StatusCode::OK,
            "a message that starts changes the answer"
        );
        let (started, active_tag, _) = shown(&app, "Platform").await;
        assert_eq!(started, ["maintenance"]);
        assert_ne!(active_tag, empty_tag);
        app.clock.advance(TimeDelta::seconds(9));
        assert_eq!(shown(&app, "Platform").await.0, ["maintenance"]);
        app.clock.advance(TimeDelta::seconds(1));
        let (ended, ended_tag, _) = shown(&app, "Platform").await;
        assert!(ended.is_empty(), "at expiringDate the message is gone");
        assert_eq!(ended_tag, nothing_tag, "nothing shown and nothing to come");
    }
);

api_test!(if_none_match_answers_304_until_an_edit_or_delete, |app| {
    let id = publish(&app, None, "Warning", "maintenance", (-10, 1000)).await;
    let (_, tag, _) = shown(&app, "Platform").await;
    assert!(
        tag.starts_with('"') && tag.ends_with('"'),
        "a strong, quoted tag: {tag}"
    );
    let weak = format!("W/{tag}");
    for candidate in [
        tag.as_str(),
        "*",
        weak.as_str(),
        &format!("\"other\", {tag}"),
    ] {
        let response = banner(&app, "Platform", Some(candidate)).await;
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED, "{candidate}");
        assert_eq!(response.headers()["etag"].to_str().unwrap(), tag);
        assert!(response.headers().contains_key("cache-control"));
        assert!(response.text().is_empty());
    }
    let other = banner(&app, "Platform", Some("\"something-else\"")).await;
    assert_eq!(other.status(), StatusCode::OK);
    let edit = app.features().messages(None);
    let edit = edit
        .patch(id, &json!({"body": "<p>moved to 23:00</p>"}))
        .await;
    edit.expect(StatusCode::OK);
    let after_edit = banner(&app, "Platform", Some(&tag)).await;
    assert_eq!(
        after_edit.status(),
        StatusCode::OK,
        "an edit changes the tag"
    );
    let (_, edited_tag, body) = shown(&app, "Platform").await;
    assert_eq!(body["data"][0]["body"], "<p>moved to 23:00</p>");
    assert_ne!(edited_tag, tag);
    app.features().messages(None).delete(id).await.no_content();
    let (gone, _, _) = shown(&app, "Platform").await;
    assert!(gone.is_empty());
    let after_delete = banner(&app, "Platform", Some(&edited_tag)).await;
    assert_eq!(after_delete.status(), StatusCode::OK);
});

api_test!(cache_control_is_no_cache_by_default, |app| {
    publish(&app, Some("Platform"), "Warning", "maintenance", (-10, 5)).await;
    let response = banner(&app, "Platform", None).await;
    assert_eq!(response.headers()["cache-control"], "private, no-cache");
});

api_test_with!(
    max_age_never_reaches_past_the_next_start_or_end,
    |config| config.features.banner_max_age_seconds = 60,
    |app| {
        let quiet = banner(&app, "Platform", None).await;
        assert_eq!(quiet.headers()["cache-control"], "private, max-age=60");
        publish(&app, Some("Platform"), "Warning", "maintenance", (-10, 25)).await;
        let soon = banner(&app, "Platform", None).await;
        let value = soon.headers()["cache-control"].to_str().unwrap().to_owned();
        assert!(
            value == "private, max-age=25" || value == "private, max-age=24",
            "{value}"
        );
        app.clock.advance(TimeDelta::seconds(25));
        let after = banner(&app, "Platform", None).await;
        assert_eq!(after.headers()["cache-control"], "private, max-age=60");
    }
);

api_test!(any_authenticated_caller_reads_the_banner, |app| {
    publish(
        &app,
        Some("Platform"),
        "Warning",
        "maintenance",
        (-10, 1000),
    )
    .await;
    let plain = app.user_token(app.owner_id(), Some(app.tenant_id()));
    let by_token = app.by(As::Token(&plain)).features();
    let by_token = by_token.banner("Platform", None).await.ok();
    assert_eq!(by_token.titles(), ["maintenance"]);
    let (_, user_key) = app.create_api_key(app.tenant_id(), "User").await;
    let by_key = app.by(As::ApiKey(&user_key)).features();
    by_key.banner("Platform", None).await.ok();
    let anonymous = app.anonymous(Method::GET, &routes::feature_banner("Platform"));
    let anonymous = anonymous.send().await.unwrap();
    expect_problem(anonymous, StatusCode::UNAUTHORIZED, "credentials-missing").await;
    for bad in ["a%20b", "a%00b", "banner"] {
        let response = banner(&app, bad, None).await;
        response.problem(StatusCode::BAD_REQUEST, "invalid-path");
    }
});

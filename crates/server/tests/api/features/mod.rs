//! Feature messages, the banner, retention and tenant feature availability (docs/features.md):
//! the message bodies, times and checks every suite of this folder shares. Requests go through
//! the typed client (`app.feature_operator()`, `app.features()`, `app.by(who).features()`).

mod auth;
mod banner;
mod listing;
mod messages;
mod retention;
mod tenant;

use basin::Clock;
use chrono::{DateTime, DurationRound, SecondsFormat, TimeDelta, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{Messages, Reply, TestApp};

/// A time in the platform's wire form: UTC, no zone suffix, 7 fractional digits.
pub fn wire(time: DateTime<Utc>) -> String {
    format!(
        "{}.{:07}",
        time.format("%Y-%m-%dT%H:%M:%S"),
        time.timestamp_subsec_nanos() / 100
    )
}

/// A time as ISO 8601 with `Z`, whole seconds.
pub fn zulu(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The app's now plus `seconds`, as a client writes it (microseconds, `Z`).
pub fn in_seconds(app: &TestApp, seconds: i64) -> String {
    (app.clock.now() + TimeDelta::seconds(seconds)).to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Sets the app's clock to `time`.
pub fn set_clock(app: &TestApp, time: DateTime<Utc>) {
    app.clock.advance(time - app.clock.now());
}

/// Moves the app's clock to the next whole second and returns it: windows built from it start
/// and end on whole seconds.
pub fn whole_second_now(app: &TestApp) -> DateTime<Utc> {
    let now = app.clock.now();
    let next = now.duration_trunc(TimeDelta::seconds(1)).unwrap() + TimeDelta::seconds(1);
    set_clock(app, next);
    next
}

/// The body of a message of `kind` with `title` and the window `start`..`end`.
pub fn message(kind: &str, title: &str, start: DateTime<Utc>, end: DateTime<Utc>) -> Value {
    json!({
        "type": kind,
        "title": title,
        "body": "",
        "startDate": zulu(start),
        "expiringDate": zulu(end),
    })
}

/// A message window around now: active for an hour either side.
pub fn active_message(app: &TestApp, kind: &str, title: &str) -> Value {
    let now = app.clock.now();
    message(
        kind,
        title,
        now - TimeDelta::hours(1),
        now + TimeDelta::hours(1),
    )
}

/// The messages of `feature` (the global ones for `None`) as BackOffice with both scopes.
pub fn messages<'a>(app: &'a TestApp, feature: Option<&str>) -> Messages<'a> {
    app.feature_operator().messages(feature)
}

/// Creates a message (201) and returns it as JSON.
pub async fn create_message(app: &TestApp, feature: Option<&str>, body: &Value) -> Value {
    messages(app, feature)
        .create(body)
        .await
        .expect(StatusCode::CREATED)
}

/// Creates a message (201) and returns its id.
pub async fn create_id(app: &TestApp, feature: Option<&str>, body: &Value) -> i64 {
    messages(app, feature)
        .create(body)
        .await
        .parse(StatusCode::CREATED)
        .id
}

/// The ids one page of `feature`'s list (with `query`) shows.
pub async fn list_ids(app: &TestApp, feature: Option<&str>, query: &str) -> Vec<i64> {
    messages(app, feature).list(query).await.ok().ids()
}

/// The one message `id` as the `expiry=All` list of `feature` shows it, as JSON.
pub async fn find_message(app: &TestApp, feature: Option<&str>, id: i64) -> Option<Value> {
    let page = messages(app, feature)
        .list("expiry=All&limit=500")
        .await
        .expect(StatusCode::OK);
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {page}"))
        .iter()
        .find(|row| row["id"].as_i64() == Some(id))
        .cloned()
}

/// Asserts a 400 `validation` problem that names `field` (in `errors` or the detail).
pub fn expect_field_error<T: serde::de::DeserializeOwned>(reply: Reply<T>, field: &str) -> Value {
    let problem = reply.problem(StatusCode::BAD_REQUEST, "validation");
    let named_in_errors = problem["errors"]
        .as_object()
        .is_some_and(|errors| errors.keys().any(|key| key.eq_ignore_ascii_case(field)));
    let named_in_detail = problem["detail"]
        .as_str()
        .is_some_and(|detail| detail.to_lowercase().contains(&field.to_lowercase()));
    assert!(
        named_in_errors || named_in_detail,
        "the problem does not name {field}: {problem}"
    );
    problem
}

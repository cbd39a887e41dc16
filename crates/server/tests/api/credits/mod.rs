//! Credits (docs/credits.md): the request helpers every credit suite shares (the
//! other files of this folder), and a round trip through add, reserve, spend and the reads. The
//! suites check docs/credits.md as a contract, each test on SQLite and PostgreSQL.

mod add;
mod auth;
mod crash;
mod expiry;
mod journal;
mod load;
mod model;
mod model_regressions;
mod moves;
mod operations;
mod queries;
mod spend;

use basin::Clock;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

/// A date far enough ahead that nothing expires during a test.
pub const FAR: &str = "2099-12-31";

/// The scope that lets a service reserve, spend and release credits.
pub const SPEND_SCOPE: &str = "platform_iam_credit_spend";

/// The billing reference `name`, with a tag and a type.
pub fn reference(name: &str) -> Value {
    json!({"billingReference": name, "billingReferenceTag": "tag", "billingReferenceType": "EXT"})
}

/// The app's today (UTC) moved by `days`, as `YYYY-MM-DD`.
pub fn day(app: &TestApp, days: i64) -> String {
    (app.clock.now().date_naive() + chrono::TimeDelta::days(days)).to_string()
}

/// A request as BackOffice, with a token signed at the app's now (see [`TestApp::credits`]).
pub fn back_office(app: &TestApp, method: Method, path: &str) -> RequestBuilder {
    app.credits().request(method, path)
}

/// Sends `body` (JSON) with `method` to `path` as BackOffice.
pub async fn send(app: &TestApp, method: Method, path: &str, body: &Value) -> Response {
    back_office(app, method, path)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// Sends `body`, JSON text as written (amount literals kept exactly), as BackOffice.
pub async fn send_text(app: &TestApp, method: Method, path: &str, body: &str) -> Response {
    back_office(app, method, path)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
}

/// `GET path` as BackOffice, expecting 200.
pub async fn get_ok(app: &TestApp, path: &str) -> Value {
    let response = back_office(app, Method::GET, path).send().await.unwrap();
    expect_status(response, StatusCode::OK).await
}

/// The body of an add, the amount written as `credits` (a JSON literal).
pub fn add_text(tenant: Option<Uuid>, credits: &str, name: &str, expires: &str) -> String {
    let tenant = tenant
        .map(|tenant| format!(r#","tenantId":"{tenant}""#))
        .unwrap_or_default();
    format!(
        r#"{{"credits":{credits},"billingReference":{},"expiresAt":"{expires}"{tenant}}}"#,
        reference(name)
    )
}

/// Adds `credits` (a JSON literal) of reference `name` expiring on `expires` to `tenant` (the
/// generic pool for `None`), without a sales order; expects 200 and returns the answer.
pub async fn add(
    app: &TestApp,
    tenant: Option<Uuid>,
    credits: &str,
    name: &str,
    expires: &str,
) -> Value {
    let body = add_text(tenant, credits, name, expires);
    app.credits().add_text(&body).await.expect(StatusCode::OK)
}

/// `POST /api/iam/credit` with a JSON body as BackOffice.
pub async fn add_json(app: &TestApp, body: &Value) -> Reply {
    app.credits().add(body).await
}

/// `PUT /api/iam/credit/reserve` as BackOffice.
pub async fn reserve(app: &TestApp, body: &Value) -> Reply {
    app.credits().reserve(body).await
}

/// Reserves `credits` of `tenant` for `operation`, expecting 200.
pub async fn reserve_ok(app: &TestApp, tenant: Uuid, credits: f64, operation: &str) -> Value {
    let body = json!({"credits": credits, "tenantId": tenant, "operationId": operation});
    app.credits().reserve(&body).await.expect(StatusCode::OK)
}

/// `PUT /api/iam/credit/spend` as BackOffice.
pub async fn spend(app: &TestApp, body: &Value) -> Reply {
    app.credits().spend(body).await
}

/// `PUT /api/iam/credit/release` of `operation` as BackOffice.
pub async fn release(app: &TestApp, tenant: Uuid, operation: &str) -> Reply {
    app.credits().release(tenant, operation).await
}

/// `PUT /api/iam/credit/move` as BackOffice, with an `Idempotency-Key` when given.
pub async fn move_credits(app: &TestApp, body: &Value, key: Option<&str>) -> Reply {
    app.credits().move_credits(body, key).await
}

/// `GET /api/iam/credit/{tenant}/operation/{operation}` as BackOffice, expecting 200.
pub async fn operation(app: &TestApp, tenant: Uuid, operation: &str) -> Value {
    let reply = app.credits().operation(tenant, operation).await;
    reply.expect(StatusCode::OK)
}

/// The statuses of a breakdown, in their fixed order, with these amounts.
pub fn statuses(available: f64, reserved: f64, spent: f64, expired: f64) -> Value {
    json!([
        {"status": "Available", "credits": available},
        {"status": "Reserved", "credits": reserved},
        {"status": "Spent", "credits": spent},
        {"status": "Expired", "credits": expired}
    ])
}

/// The statuses of `tenant`'s breakdown (the generic pool's for `None`), as BackOffice.
pub async fn balances(app: &TestApp, tenant: Option<Uuid>) -> Value {
    let breakdown = app.credits().breakdown(tenant).await;
    breakdown.expect(StatusCode::OK)["statuses"].clone()
}

/// The whole journal of `tenant` (the generic pool for `None`), read in pages of `limit`.
pub async fn journal(app: &TestApp, tenant: Option<Uuid>, limit: u32) -> Vec<Value> {
    let mut entries = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(cursor) => format!("limit={limit}&cursor={cursor}"),
            None => format!("limit={limit}"),
        };
        let page = app.credits().journal(tenant, &query).await;
        let page = page.expect(StatusCode::OK);
        entries.extend(page["data"].as_array().unwrap().iter().cloned());
        match page["cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return entries,
        }
    }
}

/// An amount of a response in micro-credits (exact for the amounts tests use).
pub fn micros(amount: &Value) -> i64 {
    let credits = amount
        .as_f64()
        .unwrap_or_else(|| panic!("not an amount: {amount}"));
    #[expect(
        clippy::cast_possible_truncation,
        reason = "test amounts are far below 2^53 micro-credits"
    )]
    let micros = (credits * 1_000_000.0).round() as i64;
    micros
}

/// The kinds of journal entries, in order.
pub fn kinds(entries: &[Value]) -> Vec<&str> {
    entries
        .iter()
        .map(|entry| entry["kind"].as_str().unwrap())
        .collect()
}

/// A token for a service (no user) with the spend scope.
pub fn spend_scope_token(app: &TestApp) -> String {
    app.token(basin::TokenRequest {
        subject: Uuid::new_v4(),
        scopes: vec![SPEND_SCOPE.to_owned()],
        ttl: chrono::TimeDelta::hours(1),
        ..Default::default()
    })
}

/// A token for a CloudAdministrator (no tenant).
pub fn cloud_admin_token(app: &TestApp) -> String {
    app.token(basin::TokenRequest {
        subject: Uuid::new_v4(),
        roles: vec!["CloudAdministrator".to_owned()],
        ttl: chrono::TimeDelta::hours(1),
        ..Default::default()
    })
}

api_test!(add_reserve_spend_then_read_it_back, |app| {
    let tenant = app.tenant_id();
    let added = add(&app, Some(tenant), "10.5", "abc123", FAR).await;
    assert_eq!(added["credits"], json!(10.5));
    reserve_ok(&app, tenant, 4.0, "run-1").await;
    let body = json!({"tenantId": tenant, "operationId": "run-1", "credits": 2.25});
    let spent = expect_status(spend(&app, &body).await, StatusCode::OK).await;
    assert_eq!(spent["state"], "Spent");
    assert_eq!(spent["returned"], json!(1.75));
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(8.25, 0.0, 2.25, 0.0)
    );
    let audit = app.credits().audit(tenant).await.expect(StatusCode::OK);
    assert_eq!(audit["consistent"], true, "{audit}");
    assert_eq!(
        kinds(&journal(&app, Some(tenant), 100).await),
        ["Add", "Reserve", "Spend"]
    );
    let details = app
        .credits()
        .extended_details(&json!({"tenantId": tenant}))
        .await;
    let details = expect_status(details, StatusCode::OK).await;
    assert_eq!(
        details["data"][0]["operations"][0]["operationId"], "run-1",
        "{details}"
    );
});

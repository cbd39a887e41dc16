//! Credits (spec 4.1, docs/credits.md): the ledger through HTTP, on both databases.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// Adds `credits` to `tenant` (or the generic pool) as BackOffice.
async fn add(
    app: &TestApp,
    tenant: Option<uuid::Uuid>,
    credits: &str,
    order: &str,
    expires: &str,
) -> Value {
    let body = format!(
        r#"{{"credits":{credits},"billingReference":{{"billingReference":"abc123","billingReferenceTag":"my tag","billingReferenceType":"EXT"}},"salesOrderId":"{order}","expiresAt":"{expires}"{}}}"#,
        tenant
            .map(|t| format!(r#","tenantId":"{t}""#))
            .unwrap_or_default()
    );
    let response = app
        .back_office(Method::POST, "/api/iam/credit")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await
}

async fn breakdown(app: &TestApp, tenant: uuid::Uuid) -> Value {
    let response = app
        .back_office(Method::GET, &format!("/api/iam/credit/{tenant}"))
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await
}

async fn put(app: &TestApp, path: &str, body: Value) -> reqwest::Response {
    app.back_office(Method::PUT, path)
        .json(&body)
        .send()
        .await
        .unwrap()
}

api_test!(add_reserve_spend_release_round_trip, |app| {
    let tenant = app.tenant_id();
    let added = add(&app, Some(tenant), "10.5", "Order1", "2099-12-31").await;
    assert_eq!(added["credits"], json!(10.5));
    let again = add(&app, Some(tenant), "10.50", "Order1", "2099-12-31").await;
    assert_eq!(again, added);
    let reserved = expect_status(
        put(
            &app,
            "/api/iam/credit/reserve",
            json!({"credits": 4, "tenantId": tenant, "operationId": "run-1"}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(reserved["state"], "Reserved");
    let spent = expect_status(
        put(
            &app,
            "/api/iam/credit/spend",
            json!({"tenantId": tenant, "operationId": "run-1", "credits": 2.25}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(spent["state"], "Spent");
    assert_eq!(spent["returned"], json!(1.75));
    let totals = breakdown(&app, tenant).await;
    assert_eq!(
        totals["statuses"],
        json!([
            {"status": "Available", "credits": 8.25},
            {"status": "Reserved", "credits": 0.0},
            {"status": "Spent", "credits": 2.25},
            {"status": "Expired", "credits": 0.0}
        ])
    );
    expect_problem(
        put(
            &app,
            "/api/iam/credit/release",
            json!({"tenantId": tenant, "operationId": "run-1"}),
        )
        .await,
        StatusCode::CONFLICT,
        "operation-resolved",
    )
    .await;
    let audit = expect_status(
        app.back_office(Method::GET, &format!("/api/iam/credit/{tenant}/audit"))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(audit["consistent"], true, "{audit}");
    let journal = expect_status(
        app.back_office(Method::GET, &format!("/api/iam/credit/{tenant}/journal"))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(journal["data"].as_array().unwrap().len(), 3, "{journal}");
    let details = expect_status(
        app.back_office(Method::POST, "/api/iam/credit/details/extended")
            .json(&json!({"tenantId": tenant}))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        details["data"][0]["operations"][0]["operationId"], "run-1",
        "{details}"
    );
});

api_test!(move_from_the_generic_pool_then_reserve_too_much, |app| {
    let tenant = app.tenant_id();
    add(&app, None, "5", "Order2", "2099-01-01").await;
    let moved = expect_status(
        put(
            &app,
            "/api/iam/credit/move",
            json!({"credits": 3, "targetTenantId": tenant}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(moved["lots"][0]["credits"], json!(3.0), "{moved}");
    expect_problem(
        put(
            &app,
            "/api/iam/credit/reserve",
            json!({"credits": 3.000001, "tenantId": tenant}),
        )
        .await,
        StatusCode::CONFLICT,
        "insufficient-credits",
    )
    .await;
    let unassigned = expect_status(
        app.back_office(Method::POST, "/api/iam/credit/unassigned?filter=Available")
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        unassigned["statuses"],
        json!([{"status": "Available", "credits": 2.0}])
    );
    let bad = app
        .back_office(Method::PUT, "/api/iam/credit/reserve")
        .header("content-type", "application/json")
        .body(format!(
            r#"{{"credits": 1.0000000000000001, "tenantId": "{tenant}"}}"#
        ))
        .send()
        .await
        .unwrap();
    expect_problem(bad, StatusCode::BAD_REQUEST, "validation").await;
});

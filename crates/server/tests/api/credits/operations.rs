//! Reservations, spends and releases (docs/credits.md "Reserve", "Spend", "Release", "One
//! operation"): which lots an operation takes, that each request is safe to retry, that a
//! reservation resolves once, and that a refused request changes nothing.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// Two lots of 2 credits expiring 2097-01-01 (references `b` and `a`), 5 of `early` expiring
/// 2098-01-01 and 5 of `late` expiring 2099-06-30, added in an order unlike their use.
async fn four_lots(app: &TestApp, tenant: Uuid) {
    add(app, Some(tenant), "5", "late", "2099-06-30").await;
    add(app, Some(tenant), "5", "early", "2098-01-01").await;
    add(app, Some(tenant), "2", "b", "2097-01-01").await;
    add(app, Some(tenant), "2", "a", "2097-01-01").await;
}

/// What an operation took of one lot.
fn share(name: &str, expires: &str, reserved: f64, spent: f64) -> Value {
    json!({"billingReference": reference(name), "expiresAt": expires, "reserved": reserved,
        "spent": spent})
}

/// Sends `body` to reserve, spend or release and expects the problem `kind` with `status`,
/// then checks that the tenant's balances and journal did not change.
async fn expect_unchanged(app: &TestApp, path: &str, body: &Value, status: StatusCode, kind: &str) {
    let tenant = app.tenant_id();
    let before = (
        balances(app, Some(tenant)).await,
        journal(app, Some(tenant), 100).await,
    );
    let response = send(app, Method::PUT, path, body).await;
    expect_problem(response, status, kind).await;
    let after = (
        balances(app, Some(tenant)).await,
        journal(app, Some(tenant), 100).await,
    );
    assert_eq!(after, before, "{path} {body}");
}

api_test!(a_reservation_takes_the_earliest_expiry_first, |app| {
    let tenant = app.tenant_id();
    four_lots(&app, tenant).await;
    let project = Uuid::new_v4();
    let body = json!({"credits": 6.5, "tenantId": tenant, "operationId": "engine-run-42",
        "projectId": project});
    let reserved = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
    assert_eq!(reserved["operationId"], "engine-run-42");
    assert_eq!(reserved["tenantId"], json!(tenant));
    assert_eq!(reserved["state"], "Reserved");
    assert_eq!(reserved["direct"], false);
    assert_eq!(reserved["projectId"], json!(project));
    for (field, amount) in [
        ("credits", 6.5),
        ("reserved", 6.5),
        ("spent", 0.0),
        ("returned", 0.0),
    ] {
        assert_eq!(reserved[field], json!(amount), "{field}: {reserved}");
    }
    assert!(reserved["createdAt"].is_string(), "{reserved}");
    assert!(
        reserved.get("timeoutAt").is_none(),
        "no timeout by default: {reserved}"
    );
    assert!(reserved.get("resolvedAt").is_none(), "{reserved}");
    assert_eq!(
        reserved["lots"],
        json!([
            share("a", "2097-01-01", 2.0, 0.0),
            share("b", "2097-01-01", 2.0, 0.0),
            share("early", "2098-01-01", 2.5, 0.0)
        ])
    );
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(7.5, 6.5, 0.0, 0.0)
    );
    assert_eq!(operation(&app, tenant, "engine-run-42").await, reserved);
});

api_test!(
    a_reservation_beyond_the_available_credits_changes_nothing,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "5", "abc", FAR).await;
        reserve_ok(&app, tenant, 1.0, "held").await;
        let body = json!({"credits": 4.000001, "tenantId": tenant, "operationId": "too-much"});
        let path = &routes::credit_reserve();
        expect_unchanged(
            &app,
            path,
            &body,
            StatusCode::CONFLICT,
            "insufficient-credits",
        )
        .await;
        let response = back_office(
            &app,
            Method::GET,
            &routes::credit_operation(tenant, "too-much"),
        )
        .send()
        .await
        .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        reserve_ok(&app, tenant, 4.0, "all-the-rest").await;
        let empty = app.create_tenant("Without credits").await;
        let body = json!({"credits": 1, "tenantId": empty, "operationId": "none"});
        expect_problem(
            reserve(&app, &body).await,
            StatusCode::CONFLICT,
            "insufficient-credits",
        )
        .await;
        let body = json!({"credits": 1, "tenantId": Uuid::new_v4(), "operationId": "none"});
        expect_problem(
            reserve(&app, &body).await,
            StatusCode::NOT_FOUND,
            "not-found",
        )
        .await;
    }
);

api_test!(
    a_reservation_retried_answers_as_it_stands_and_another_body_conflicts,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "10", "abc", FAR).await;
        let project = Uuid::new_v4();
        let body = json!({"credits": 3, "tenantId": tenant, "operationId": "run",
        "projectId": project, "timeoutSeconds": 3600});
        let first = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
        let same = json!({"credits": "3.0", "tenantId": tenant, "operationId": "run",
        "projectId": project, "timeoutSeconds": "3600"});
        assert_eq!(
            expect_status(reserve(&app, &same).await, StatusCode::OK).await,
            first
        );
        let path = &routes::credit_reserve();
        for (field, value) in [
            ("credits", json!(4)),
            ("projectId", json!(Uuid::new_v4())),
            ("projectId", Value::Null),
            ("timeoutSeconds", json!(60)),
        ] {
            let other = with_fields(body.clone(), json!({ field: value }));
            expect_unchanged(
                &app,
                path,
                &other,
                StatusCode::CONFLICT,
                "operation-conflict",
            )
            .await;
        }
        let spend_all = json!({"tenantId": tenant, "operationId": "run"});
        let spent = expect_status(spend(&app, &spend_all).await, StatusCode::OK).await;
        assert_eq!(
            expect_status(reserve(&app, &body).await, StatusCode::OK).await,
            spent
        );
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(7.0, 0.0, 3.0, 0.0)
        );
    }
);

api_test!(a_reservation_without_an_operation_id_gets_one, |app| {
    let tenant = app.tenant_id();
    add(&app, Some(tenant), "10", "abc", FAR).await;
    let body = json!({"credits": 1, "tenantId": tenant});
    let first = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
    let second = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
    let id = first["operationId"].as_str().unwrap();
    let uuid = id.strip_prefix("reservation-").unwrap();
    assert!(Uuid::parse_str(uuid).is_ok(), "{id}");
    assert_ne!(second["operationId"], first["operationId"]);
    assert_eq!(operation(&app, tenant, id).await, first);
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(8.0, 2.0, 0.0, 0.0)
    );
});

api_test!(timeouts_are_whole_seconds_up_to_the_maximum, |app| {
    let tenant = app.tenant_id();
    add(&app, Some(tenant), "10", "abc", FAR).await;
    let path = &routes::credit_reserve();
    for timeout in [json!(7_776_001), json!(-1), json!(1.5), json!("soon")] {
        let body = json!({"credits": 1, "tenantId": tenant, "operationId": "t",
            "timeoutSeconds": timeout});
        expect_unchanged(&app, path, &body, StatusCode::BAD_REQUEST, "validation").await;
    }
    let body = json!({"credits": 1, "tenantId": tenant, "operationId": "max",
        "timeoutSeconds": 7_776_000});
    let longest = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
    let created = chrono::DateTime::parse_from_rfc3339(&format!(
        "{}Z",
        longest["createdAt"].as_str().unwrap()
    ))
    .unwrap();
    let timeout = chrono::DateTime::parse_from_rfc3339(&format!(
        "{}Z",
        longest["timeoutAt"].as_str().unwrap()
    ))
    .unwrap();
    assert_eq!(timeout - created, chrono::TimeDelta::days(90));
    let body = json!({"credits": 1, "tenantId": tenant, "operationId": "none",
        "timeoutSeconds": 0});
    let unbounded = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
    assert!(unbounded.get("timeoutAt").is_none(), "{unbounded}");
});

api_test_with!(
    reservations_without_a_timeout_get_the_configured_default,
    |config| config.credits.reservation_timeout_default_seconds = 30,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "10", "abc", FAR).await;
        let reserved = reserve_ok(&app, tenant, 1.0, "default").await;
        assert!(reserved["timeoutAt"].is_string(), "{reserved}");
        let body = json!({"credits": 1, "tenantId": tenant, "operationId": "none",
            "timeoutSeconds": 0});
        let unbounded = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
        assert!(unbounded.get("timeoutAt").is_none(), "{unbounded}");
        app.clock.advance(chrono::TimeDelta::seconds(31));
        assert_eq!(
            operation(&app, tenant, "default").await["state"],
            "TimedOut"
        );
        assert_eq!(operation(&app, tenant, "none").await["state"], "Reserved");
    }
);

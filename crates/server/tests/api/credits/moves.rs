//! Moves (`PUT /api/iam/credit/move`, docs/credits.md "Move"): between a tenant and the
//! generic pool any credits move; between tenants only those of shared billing references;
//! moved credits keep their reference and date; an `Idempotency-Key` makes a retry safe.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// What a move took of one lot.
fn moved(name: &str, expires: &str, credits: f64) -> Value {
    json!({"billingReference": reference(name), "expiresAt": expires, "credits": credits})
}

/// The lots of `tenant` as (reference, date, available), as BackOffice.
async fn lots(app: &TestApp, tenant: Option<Uuid>) -> Vec<(String, String, f64)> {
    let (path, body) = match tenant {
        Some(tenant) => (&routes::credit_details(), json!({"tenantId": tenant})),
        None => (&routes::unassigned_credit_details(), json!({})),
    };
    let page = expect_status(send(app, Method::POST, path, &body).await, StatusCode::OK).await;
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|lot| {
            (
                lot["billingReference"]["billingReference"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                lot["expiresAt"].as_str().unwrap().to_owned(),
                lot["statuses"][0]["credits"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// A lot as [`lots`] lists it.
fn lot(name: &str, expires: &str, available: f64) -> (String, String, f64) {
    (name.to_owned(), expires.to_owned(), available)
}

/// Sends a move that must fail with `status` and `kind` and checks that neither pool changed.
async fn expect_refused(app: &TestApp, body: &Value, status: StatusCode, kind: &str) {
    let pools = [None, Some(app.tenant_id())];
    let mut before = Vec::new();
    for pool in pools {
        before.push((balances(app, pool).await, journal(app, pool, 100).await));
    }
    expect_problem(move_credits(app, body, None).await, status, kind).await;
    for (pool, before) in pools.into_iter().zip(before) {
        let after = (balances(app, pool).await, journal(app, pool, 100).await);
        assert_eq!(after, before, "{body}");
    }
}

api_test!(
    credits_move_from_the_generic_pool_and_keep_their_lot,
    |app| {
        let tenant = app.tenant_id();
        add(&app, None, "10", "g", FAR).await;
        add(&app, None, "5", "h", "2098-03-31").await;
        let body = json!({"credits": 6, "targetTenantId": tenant});
        let answer = expect_status(move_credits(&app, &body, None).await, StatusCode::OK).await;
        assert_eq!(
            answer,
            json!({"credits": 6.0, "targetTenantId": tenant,
            "lots": [moved("h", "2098-03-31", 5.0), moved("g", FAR, 1.0)]})
        );
        assert_eq!(
            lots(&app, Some(tenant)).await,
            [lot("h", "2098-03-31", 5.0), lot("g", FAR, 1.0)]
        );
        assert_eq!(
            lots(&app, None).await,
            [lot("h", "2098-03-31", 0.0), lot("g", FAR, 9.0)]
        );
        assert_eq!(balances(&app, None).await, statuses(9.0, 0.0, 0.0, 0.0));
        let nil = Uuid::nil().to_string();
        for target in [None, Some(Value::Null), Some(json!("")), Some(json!(nil))] {
            let mut back = json!({"credits": 0.5, "sourceTenantId": tenant});
            if let Some(target) = target {
                back["targetTenantId"] = target;
            }
            let answer = expect_status(move_credits(&app, &back, None).await, StatusCode::OK).await;
            assert_eq!(answer["lots"], json!([moved("h", "2098-03-31", 0.5)]));
            assert!(answer.get("targetTenantId").is_none(), "{answer}");
        }
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(4.0, 0.0, 0.0, 0.0)
        );
        assert_eq!(balances(&app, None).await, statuses(11.0, 0.0, 0.0, 0.0));
    }
);

api_test!(
    credits_move_between_tenants_only_for_shared_references,
    |app| {
        let source = app.tenant_id();
        let target = app.create_tenant("Target").await;
        add(&app, Some(source), "5", "x", "2098-01-01").await;
        add(&app, Some(source), "5", "y", FAR).await;
        let body = json!({"credits": 1, "sourceTenantId": source, "targetTenantId": target});
        expect_refused(
            &app,
            &body,
            StatusCode::CONFLICT,
            "billing-reference-mismatch",
        )
        .await;
        add(&app, Some(target), "1", "y", "2099-01-01").await;
        let spend_it = json!({"tenantId": target, "operationId": "use-y", "credits": 1,
        "direct": true});
        expect_status(spend(&app, &spend_it).await, StatusCode::OK).await;
        let body = json!({"credits": 3, "sourceTenantId": source, "targetTenantId": target});
        let answer = expect_status(move_credits(&app, &body, None).await, StatusCode::OK).await;
        assert_eq!(
            answer["lots"],
            json!([moved("y", FAR, 3.0)]),
            "x is not shared"
        );
        assert_eq!(answer["sourceTenantId"], json!(source));
        let more = json!({"credits": 2.000001, "sourceTenantId": source, "targetTenantId": target});
        expect_refused(&app, &more, StatusCode::CONFLICT, "insufficient-credits").await;
        assert_eq!(
            lots(&app, Some(target)).await,
            [lot("y", "2099-01-01", 0.0), lot("y", FAR, 3.0)]
        );
        assert_eq!(
            balances(&app, Some(source)).await,
            statuses(7.0, 0.0, 0.0, 0.0)
        );
        let other_tag = json!({"billingReference": {"billingReference": "x",
        "billingReferenceTag": "other", "billingReferenceType": "EXT"}, "credits": 1,
        "expiresAt": FAR, "tenantId": target});
        expect_status(add_json(&app, &other_tag).await, StatusCode::OK).await;
        let only_x = json!({"credits": 1, "sourceTenantId": source, "targetTenantId": target,
        "billingReference": reference("x")});
        expect_refused(
            &app,
            &only_x,
            StatusCode::CONFLICT,
            "billing-reference-mismatch",
        )
        .await;
    }
);

api_test!(a_billing_reference_limits_what_moves, |app| {
    let tenant = app.tenant_id();
    add(&app, None, "5", "early", "2098-01-01").await;
    add(&app, None, "5", "late", FAR).await;
    let body = json!({"credits": 4, "targetTenantId": tenant,
        "billingReference": reference("late")});
    let answer = expect_status(move_credits(&app, &body, None).await, StatusCode::OK).await;
    assert_eq!(answer["lots"], json!([moved("late", FAR, 4.0)]));
    let too_much = with_fields(body.clone(), json!({"credits": 1.5}));
    expect_refused(
        &app,
        &too_much,
        StatusCode::CONFLICT,
        "insufficient-credits",
    )
    .await;
    let untagged = with_fields(
        body.clone(),
        json!({"credits": 1, "billingReference": {"billingReference": "late"}}),
    );
    expect_refused(
        &app,
        &untagged,
        StatusCode::CONFLICT,
        "insufficient-credits",
    )
    .await;
    let unnamed = with_fields(body, json!({"billingReference": {"billingReference": ""}}));
    expect_refused(&app, &unnamed, StatusCode::BAD_REQUEST, "validation").await;
    assert_eq!(balances(&app, None).await, statuses(6.0, 0.0, 0.0, 0.0));
});

api_test!(
    a_move_needs_two_pools_that_exist_and_enough_credits,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "5", "abc", FAR).await;
        add(&app, None, "5", "abc", FAR).await;
        let nil = Uuid::nil();
        for body in [
            json!({"credits": 1, "sourceTenantId": tenant, "targetTenantId": tenant}),
            json!({"credits": 1}),
            json!({"credits": 1, "sourceTenantId": nil, "targetTenantId": ""}),
        ] {
            expect_refused(&app, &body, StatusCode::BAD_REQUEST, "validation").await;
        }
        for body in [
            json!({"credits": 1, "sourceTenantId": Uuid::new_v4(), "targetTenantId": tenant}),
            json!({"credits": 1, "sourceTenantId": tenant, "targetTenantId": Uuid::new_v4()}),
            json!({"credits": 1, "targetTenantId": Uuid::new_v4()}),
        ] {
            expect_refused(&app, &body, StatusCode::NOT_FOUND, "not-found").await;
        }
        for body in [
            json!({"credits": 5.000001, "sourceTenantId": tenant}),
            json!({"credits": 5.000001, "targetTenantId": tenant}),
        ] {
            expect_refused(&app, &body, StatusCode::CONFLICT, "insufficient-credits").await;
        }
        for credits in [json!(0), json!(-1), json!(0.0000001), json!("x")] {
            let body = json!({"credits": credits, "targetTenantId": tenant});
            expect_refused(&app, &body, StatusCode::BAD_REQUEST, "validation").await;
        }
        let empty = app.create_tenant("Without credits").await;
        let body = json!({"credits": 1, "sourceTenantId": empty});
        let response = move_credits(&app, &body, None).await;
        expect_problem(response, StatusCode::CONFLICT, "insufficient-credits").await;
    }
);

api_test!(an_idempotency_key_moves_once, |app| {
    let tenant = app.tenant_id();
    add(&app, None, "10", "abc", FAR).await;
    let body = json!({"credits": 3, "targetTenantId": tenant});
    let first = expect_status(
        move_credits(&app, &body, Some("move-1")).await,
        StatusCode::OK,
    )
    .await;
    let entries = journal(&app, Some(tenant), 100).await;
    let same = json!({"credits": "3.0", "targetTenantId": tenant, "sourceTenantId": ""});
    let again = move_credits(&app, &same, Some("move-1")).await;
    assert_eq!(expect_status(again, StatusCode::OK).await, first);
    assert_eq!(journal(&app, Some(tenant), 100).await, entries);
    assert_eq!(balances(&app, None).await, statuses(7.0, 0.0, 0.0, 0.0));
    for other in [
        json!({"credits": 4, "targetTenantId": tenant}),
        json!({"credits": 3, "sourceTenantId": tenant}),
        json!({"credits": 3, "targetTenantId": tenant, "billingReference": reference("abc")}),
    ] {
        let response = move_credits(&app, &other, Some("move-1")).await;
        expect_problem(response, StatusCode::CONFLICT, "idempotency-conflict").await;
    }
    for key in ["x".repeat(256), " ".to_owned(), "a\tb".to_owned()] {
        let response = move_credits(&app, &body, Some(&key)).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    }
    expect_status(move_credits(&app, &body, None).await, StatusCode::OK).await;
    expect_status(move_credits(&app, &body, None).await, StatusCode::OK).await;
    let last = json!({"credits": 1, "targetTenantId": tenant});
    let longest = "k".repeat(255);
    expect_status(
        move_credits(&app, &last, Some(&longest)).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(balances(&app, None).await, statuses(0.0, 0.0, 0.0, 0.0));
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(10.0, 0.0, 0.0, 0.0)
    );
    let more = move_credits(&app, &body, Some("move-2")).await;
    expect_problem(more, StatusCode::CONFLICT, "insufficient-credits").await;
    let after = move_credits(&app, &body, Some("move-2")).await;
    expect_problem(after, StatusCode::CONFLICT, "insufficient-credits").await;
});

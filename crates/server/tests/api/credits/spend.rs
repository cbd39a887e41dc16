//! Spends and releases (docs/credits.md "Spend", "Release"): whole and partial spends, the
//! rest going back, a reservation resolving once, retries answering the same, and direct
//! spends that never reuse a reservation's id.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// 3 credits of `early` expiring 2098-01-01 and 7 of `late` expiring 2099-01-01.
async fn two_lots(app: &TestApp, tenant: Uuid) {
    add(app, Some(tenant), "7", "late", "2099-01-01").await;
    add(app, Some(tenant), "3", "early", "2098-01-01").await;
}

/// What an operation took of one lot.
fn share(name: &str, expires: &str, reserved: f64, spent: f64) -> Value {
    json!({"billingReference": reference(name), "expiresAt": expires, "reserved": reserved,
        "spent": spent})
}

/// Expects `response` to be the problem `kind` with `status`.
async fn expect_conflict(response: impl Answer, kind: &str) {
    expect_problem(response, StatusCode::CONFLICT, kind).await;
}

/// Spends `body`, expecting 200.
async fn spend_ok(app: &TestApp, body: &Value) -> Value {
    expect_status(spend(app, body).await, StatusCode::OK).await
}

api_test!(
    spending_without_an_amount_spends_the_whole_reservation,
    |app| {
        let tenant = app.tenant_id();
        two_lots(&app, tenant).await;
        reserve_ok(&app, tenant, 5.0, "run").await;
        let spent = spend_ok(&app, &json!({"tenantId": tenant, "operationId": "run"})).await;
        assert_eq!(spent["state"], "Spent");
        for (field, amount) in [
            ("credits", 5.0),
            ("reserved", 0.0),
            ("spent", 5.0),
            ("returned", 0.0),
        ] {
            assert_eq!(spent[field], json!(amount), "{field}: {spent}");
        }
        assert!(spent["resolvedAt"].is_string(), "{spent}");
        assert_eq!(
            spent["lots"],
            json!([
                share("early", "2098-01-01", 0.0, 3.0),
                share("late", "2099-01-01", 0.0, 2.0)
            ])
        );
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(5.0, 0.0, 5.0, 0.0)
        );
        let again = json!({"tenantId": tenant, "operationId": "run", "credits": 5});
        assert_eq!(
            spend_ok(&app, &again).await,
            spent,
            "the same amount, named"
        );
        assert_eq!(operation(&app, tenant, "run").await, spent);
    }
);

api_test!(
    a_partial_spend_uses_the_earliest_lots_and_gives_the_rest_back,
    |app| {
        let tenant = app.tenant_id();
        two_lots(&app, tenant).await;
        reserve_ok(&app, tenant, 5.0, "run").await;
        let body = json!({"tenantId": tenant, "operationId": "run", "credits": 3.5});
        let spent = spend_ok(&app, &body).await;
        for (field, amount) in [
            ("credits", 5.0),
            ("reserved", 0.0),
            ("spent", 3.5),
            ("returned", 1.5),
        ] {
            assert_eq!(spent[field], json!(amount), "{field}: {spent}");
        }
        assert_eq!(
            spent["lots"],
            json!([
                share("early", "2098-01-01", 0.0, 3.0),
                share("late", "2099-01-01", 0.0, 0.5)
            ])
        );
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(6.5, 0.0, 3.5, 0.0)
        );
        let retried = spend_ok(
            &app,
            &json!({"tenantId": tenant, "operationId": "run",
        "credits": "3.500"}),
        )
        .await;
        assert_eq!(retried, spent);
        for other in [json!(3.4), json!(5), Value::Null] {
            let body = json!({"tenantId": tenant, "operationId": "run", "credits": other});
            expect_conflict(spend(&app, &body).await, "operation-resolved").await;
        }
        let entries = journal(&app, Some(tenant), 100).await;
        let spends: Vec<&Value> = entries.iter().filter(|e| e["kind"] == "Spend").collect();
        assert_eq!(spends.len(), 2, "one entry per lot: {entries:?}");
        assert_eq!(spends[1]["available"], json!(1.5), "the rest went back");
        assert_eq!(spends[1]["reserved"], json!(-2.0));
        assert_eq!(spends[1]["spent"], json!(0.5));
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(6.5, 0.0, 3.5, 0.0)
        );
    }
);

api_test!(
    spending_more_than_reserved_is_refused_and_the_reservation_holds,
    |app| {
        let tenant = app.tenant_id();
        two_lots(&app, tenant).await;
        reserve_ok(&app, tenant, 4.0, "run").await;
        let before = balances(&app, Some(tenant)).await;
        let body = json!({"tenantId": tenant, "operationId": "run", "credits": 4.000001});
        expect_conflict(spend(&app, &body).await, "exceeds-reservation").await;
        for credits in [json!(0), json!(-1), json!(0.0000001), json!("all")] {
            let body = json!({"tenantId": tenant, "operationId": "run", "credits": credits});
            expect_problem(
                spend(&app, &body).await,
                StatusCode::BAD_REQUEST,
                "validation",
            )
            .await;
        }
        assert_eq!(balances(&app, Some(tenant)).await, before);
        assert_eq!(operation(&app, tenant, "run").await["state"], "Reserved");
        let body = json!({"tenantId": tenant, "operationId": "run", "credits": 4});
        assert_eq!(spend_ok(&app, &body).await["spent"], json!(4.0));
    }
);

api_test!(a_released_reservation_gives_everything_back_once, |app| {
    let tenant = app.tenant_id();
    two_lots(&app, tenant).await;
    reserve_ok(&app, tenant, 4.0, "run").await;
    let released = expect_status(release(&app, tenant, "run").await, StatusCode::OK).await;
    assert_eq!(released["state"], "Released");
    for (field, amount) in [("reserved", 0.0), ("spent", 0.0), ("returned", 4.0)] {
        assert_eq!(released[field], json!(amount), "{field}: {released}");
    }
    let again = expect_status(release(&app, tenant, "run").await, StatusCode::OK).await;
    assert_eq!(again, released);
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(10.0, 0.0, 0.0, 0.0)
    );
    for credits in [Value::Null, json!(1)] {
        let body = json!({"tenantId": tenant, "operationId": "run", "credits": credits});
        expect_conflict(spend(&app, &body).await, "operation-resolved").await;
    }
    reserve_ok(&app, tenant, 1.0, "spent").await;
    spend_ok(&app, &json!({"tenantId": tenant, "operationId": "spent"})).await;
    expect_conflict(release(&app, tenant, "spent").await, "operation-resolved").await;
    assert_eq!(
        kinds(&journal(&app, Some(tenant), 100).await),
        [
            "Add", "Add", "Reserve", "Reserve", "Release", "Release", "Reserve", "Spend"
        ]
    );
});

api_test!(unknown_operations_and_tenants_are_404, |app| {
    let tenant = app.tenant_id();
    let empty = app.create_tenant("Without credits").await;
    add(&app, Some(tenant), "1", "abc", FAR).await;
    for pool in [empty, tenant] {
        let body = json!({"tenantId": pool, "operationId": "never", "credits": 1});
        expect_problem(spend(&app, &body).await, StatusCode::NOT_FOUND, "not-found").await;
        let response = release(&app, pool, "never").await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
    let stranger = Uuid::new_v4();
    let body = json!({"tenantId": stranger, "operationId": "never", "credits": 1});
    expect_problem(spend(&app, &body).await, StatusCode::NOT_FOUND, "not-found").await;
    let direct = with_fields(body, json!({"direct": true}));
    expect_problem(
        spend(&app, &direct).await,
        StatusCode::NOT_FOUND,
        "not-found",
    )
    .await;
    let response = release(&app, stranger, "never").await;
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    let response = back_office(
        &app,
        Method::GET,
        &format!("/api/iam/credit/{stranger}/operation/x"),
    )
    .send()
    .await
    .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
});

api_test!(a_direct_spend_takes_available_credits_at_once, |app| {
    let tenant = app.tenant_id();
    two_lots(&app, tenant).await;
    let project = Uuid::new_v4();
    let body = json!({"tenantId": tenant, "operationId": "direct-1", "credits": 4,
        "direct": true, "projectId": project});
    let spent = spend_ok(&app, &body).await;
    assert_eq!(spent["direct"], true);
    assert_eq!(spent["state"], "Spent");
    assert_eq!(spent["projectId"], json!(project));
    assert_eq!(spent["spent"], json!(4.0));
    assert_eq!(
        spent["lots"],
        json!([
            share("early", "2098-01-01", 0.0, 3.0),
            share("late", "2099-01-01", 0.0, 1.0)
        ])
    );
    assert_eq!(
        spend_ok(&app, &body).await,
        spent,
        "a retry spends nothing more"
    );
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(6.0, 0.0, 4.0, 0.0)
    );
    let other = with_fields(body.clone(), json!({"credits": 5}));
    expect_conflict(spend(&app, &other).await, "operation-conflict").await;
    let undirected = json!({"tenantId": tenant, "operationId": "direct-1"});
    expect_conflict(spend(&app, &undirected).await, "operation-conflict").await;
    expect_conflict(
        release(&app, tenant, "direct-1").await,
        "operation-resolved",
    )
    .await;
    let reserve_it = json!({"credits": 4, "tenantId": tenant, "operationId": "direct-1"});
    expect_conflict(reserve(&app, &reserve_it).await, "operation-conflict").await;
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(6.0, 0.0, 4.0, 0.0)
    );
});

api_test!(
    a_direct_spend_needs_an_amount_enough_credits_and_a_fresh_id,
    |app| {
        let tenant = app.tenant_id();
        two_lots(&app, tenant).await;
        let reserved = reserve_ok(&app, tenant, 2.0, "reserved-run").await;
        let before = balances(&app, Some(tenant)).await;
        let body = json!({"tenantId": tenant, "operationId": "d", "direct": true});
        expect_problem(
            spend(&app, &body).await,
            StatusCode::BAD_REQUEST,
            "validation",
        )
        .await;
        let body =
            json!({"tenantId": tenant, "operationId": "d", "direct": true, "credits": 8.000001});
        expect_conflict(spend(&app, &body).await, "insufficient-credits").await;
        let body = json!({"tenantId": tenant, "operationId": "reserved-run", "direct": true,
        "credits": 2});
        expect_conflict(spend(&app, &body).await, "operation-conflict").await;
        assert_eq!(balances(&app, Some(tenant)).await, before);
        assert_eq!(operation(&app, tenant, "reserved-run").await, reserved);
        let response = back_office(&app, Method::GET, &routes::credit_operation(tenant, "d"))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        let empty = app.create_tenant("Without credits").await;
        let body = json!({"tenantId": empty, "operationId": "d", "direct": true, "credits": 1});
        expect_conflict(spend(&app, &body).await, "insufficient-credits").await;
    }
);

api_test!(operation_ids_are_1_to_255_characters_of_plain_text, |app| {
    let tenant = app.tenant_id();
    add(&app, Some(tenant), "10", "abc", FAR).await;
    let longest = "ü".repeat(255);
    let reserved = reserve_ok(&app, tenant, 1.0, &longest).await;
    assert_eq!(reserved["operationId"], json!(longest));
    let before = balances(&app, Some(tenant)).await;
    for bad in [
        String::new(),
        "  ".to_owned(),
        "x".repeat(256),
        "a\tb".into(),
        "a\0b".into(),
    ] {
        let body = json!({"credits": 1, "tenantId": tenant, "operationId": bad});
        let response = reserve(&app, &body).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        for path in [&*routes::credit_spend(), &*routes::credit_release()] {
            let body = json!({"tenantId": tenant, "operationId": bad, "credits": 1});
            let response = send(&app, Method::PUT, path, &body).await;
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
    }
    for missing in [json!({"tenantId": tenant}), json!({"operationId": "x"})] {
        let response = send(&app, Method::PUT, &routes::credit_spend(), &missing).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    }
    assert_eq!(balances(&app, Some(tenant)).await, before);
});

api_test!(
    credits_of_the_generic_pool_are_never_reserved_or_spent,
    |app| {
        add(&app, None, "10", "generic", FAR).await;
        let nil = Uuid::nil();
        let bodies = [
            (
                &*routes::credit_reserve(),
                json!({"credits": 1, "tenantId": nil, "operationId": "g"}),
            ),
            (
                &*routes::credit_spend(),
                json!({"tenantId": nil, "operationId": "g", "credits": 1, "direct": true}),
            ),
            (
                &*routes::credit_spend(),
                json!({"tenantId": nil, "operationId": "g"}),
            ),
            (
                &*routes::credit_release(),
                json!({"tenantId": nil, "operationId": "g"}),
            ),
        ];
        for (path, body) in bodies {
            let response = send(&app, Method::PUT, path, &body).await;
            let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
            assert!(
                problem["errors"]["tenantId"].is_array(),
                "{path}: {problem}"
            );
        }
        assert_eq!(balances(&app, None).await, statuses(10.0, 0.0, 0.0, 0.0));
        assert_eq!(kinds(&journal(&app, None, 100).await), ["Add"]);
    }
);

api_test!(
    operation_ids_in_the_path_follow_the_rules_of_the_body,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "1", "abc", FAR).await;
        let base = format!("/api/iam/credit/{tenant}/operation");
        for bad in [
            "a%00b".to_owned(),
            "a%07b".to_owned(),
            "x".repeat(256),
            "%20".to_owned(),
        ] {
            let response = back_office(&app, Method::GET, &format!("{base}/{bad}"))
                .send()
                .await
                .unwrap();
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
        let response = back_office(&app, Method::GET, &format!("{base}/{}", "x".repeat(255)))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        reserve_ok(&app, tenant, 1.0, "with space/and slash").await;
        let found = operation(&app, tenant, "with%20space%2Fand%20slash").await;
        assert_eq!(found["operationId"], "with space/and slash");
    }
);

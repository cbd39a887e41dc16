//! Reading the ledger (docs/credits.md "Balances", "Details", "Extended details"): the
//! status filter, which tenant a details request is about, offset pages of lots, and the
//! operations behind each lot with their projects.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// Puts credits of `tenant` in every status: Available 5, Reserved 3, Spent 2, Expired 1.5.
async fn every_status(app: &TestApp, tenant: Uuid) {
    add(app, Some(tenant), "10", "main", FAR).await;
    reserve_ok(app, tenant, 3.0, "held").await;
    let body = json!({"tenantId": tenant, "operationId": "used", "credits": 2, "direct": true});
    expect_status(spend(app, &body).await, StatusCode::OK).await;
    add(app, Some(tenant), "1.5", "short", &day(app, 0)).await;
    app.clock.advance(chrono::TimeDelta::days(2));
}

/// One status with its amount.
fn status(name: &str, credits: f64) -> Value {
    json!({"status": name, "credits": credits})
}

/// `POST path` with `body` as BackOffice, expecting 200.
async fn post_ok(app: &TestApp, path: &str, body: &Value) -> Value {
    expect_status(send(app, Method::POST, path, body).await, StatusCode::OK).await
}

api_test!(
    a_breakdown_shows_the_statuses_asked_for_in_a_fixed_order,
    |app| {
        let tenant = app.tenant_id();
        every_status(&app, tenant).await;
        let base = routes::tenant_credits(tenant);
        let all = get_ok(&app, &base).await;
        assert_eq!(
            all,
            json!({"tenantId": tenant, "statuses": statuses(5.0, 3.0, 2.0, 1.5)})
        );
        for (query, expected) in [
            (
                "filter=Available&filter=Reserved",
                json!([status("Available", 5.0), status("Reserved", 3.0)]),
            ),
            (
                "filter=expired,SPENT",
                json!([status("Spent", 2.0), status("Expired", 1.5)]),
            ),
            ("FILTER=reserved", json!([status("Reserved", 3.0)])),
            (
                "filter=Available,available&filter=AVAILABLE",
                json!([status("Available", 5.0)]),
            ),
            ("filter=", statuses(5.0, 3.0, 2.0, 1.5)),
        ] {
            let answer = get_ok(&app, &format!("{base}?{query}")).await;
            assert_eq!(answer["statuses"], expected, "{query}");
        }
        for query in [
            "filter=Bogus",
            "filter=Available,Bogus",
            "filter=Available&filter=Free",
        ] {
            let response = back_office(&app, Method::GET, &format!("{base}?{query}"))
                .send()
                .await
                .unwrap();
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
    }
);

api_test!(the_generic_pool_has_its_breakdown_by_post_and_get, |app| {
    add(&app, None, "7.25", "g", FAR).await;
    add(&app, Some(app.tenant_id()), "1", "t", FAR).await;
    let path = &routes::unassigned_credits();
    let posted = post_ok(&app, path, &json!({})).await;
    assert_eq!(posted, json!({"statuses": statuses(7.25, 0.0, 0.0, 0.0)}));
    assert_eq!(get_ok(&app, path).await, posted);
    let filtered = post_ok(&app, &format!("{path}?filter=available"), &json!({})).await;
    assert_eq!(filtered["statuses"], json!([status("Available", 7.25)]));
    let response = back_office(&app, Method::POST, &format!("{path}?filter=nothing"))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
});

/// Adds four lots to `tenant`: `d`, `c`, `b` expiring on 2097-01-01, 2098-01-01 and
/// 2099-01-01, and `a` on 2099-01-01 too (before `b` by reference).
async fn four_lots(app: &TestApp, tenant: Uuid) {
    for (name, expires) in [
        ("b", "2099-01-01"),
        ("d", "2097-01-01"),
        ("a", "2099-01-01"),
        ("c", "2098-01-01"),
    ] {
        add(app, Some(tenant), "1", name, expires).await;
    }
}

/// The reference names of a details page's lots.
fn names(page: &Value) -> Vec<&str> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|lot| {
            lot["billingReference"]["billingReference"]
                .as_str()
                .unwrap()
        })
        .collect()
}

api_test!(
    details_are_offset_pages_of_lots_by_date_then_reference,
    |app| {
        let tenant = app.tenant_id();
        four_lots(&app, tenant).await;
        let body = json!({"tenantId": tenant});
        let all = post_ok(&app, &routes::credit_details(), &body).await;
        assert_eq!(
            (all["totalCount"].clone(), all["offset"].clone()),
            (json!(4), json!(0))
        );
        assert_eq!(names(&all), ["d", "c", "a", "b"]);
        assert_eq!(
            all["data"][0],
            json!({"billingReference": reference("d"), "expiresAt": "2097-01-01",
            "isExpired": false, "statuses": statuses(1.0, 0.0, 0.0, 0.0)})
        );
        let first = post_ok(
            &app,
            &format!("{}?limit=3", routes::credit_details()),
            &body,
        )
        .await;
        assert_eq!(
            (first["limit"].clone(), names(&first)),
            (json!(3), vec!["d", "c", "a"])
        );
        let rest = post_ok(
            &app,
            &format!("{}?limit=3&offset=3", routes::credit_details()),
            &body,
        )
        .await;
        assert_eq!(
            (rest["totalCount"].clone(), names(&rest)),
            (json!(4), vec!["b"])
        );
        let beyond = post_ok(
            &app,
            &format!("{}?offset=10", routes::credit_details()),
            &body,
        )
        .await;
        assert_eq!(
            (beyond["totalCount"].clone(), names(&beyond).len()),
            (json!(4), 0)
        );
        for query in ["limit=0", "limit=100000", "offset=-1", "limit=x"] {
            let path = format!("{}?{query}", routes::credit_details());
            let response = send(&app, Method::POST, &path, &body).await;
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
    }
);

api_test!(
    details_are_of_the_body_tenant_else_the_query_else_the_caller,
    |app| {
        let tenant = app.tenant_id();
        let other = app.create_tenant("Other").await;
        add(&app, Some(tenant), "1", "mine", FAR).await;
        add(&app, Some(other), "1", "theirs", FAR).await;
        let path = &routes::credit_details();
        let by_body = post_ok(
            &app,
            &format!("{path}?tenantId={tenant}"),
            &json!({"tenantId": other}),
        )
        .await;
        assert_eq!(names(&by_body), ["theirs"]);
        let by_query = post_ok(&app, &format!("{path}?tenantId={other}"), &json!({})).await;
        assert_eq!(names(&by_query), ["theirs"]);
        let empty_body = post_ok(
            &app,
            &format!("{path}?tenantId={other}"),
            &json!({"tenantId": ""}),
        )
        .await;
        assert_eq!(names(&empty_body), ["theirs"]);
        let caller = app.with_key(Method::POST, path).send().await.unwrap();
        assert_eq!(
            names(&expect_status(caller, StatusCode::OK).await),
            ["mine"]
        );
        let caller = app
            .with_key(Method::POST, path)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            names(&expect_status(caller, StatusCode::OK).await),
            ["mine"]
        );
        let response = send(
            &app,
            Method::POST,
            &format!("{path}?tenantId=nope"),
            &json!({}),
        )
        .await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        let as_back_office = send(&app, Method::POST, path, &json!({})).await;
        let as_back_office = expect_status(as_back_office, StatusCode::OK).await;
        assert_eq!(
            names(&as_back_office),
            ["mine"],
            "the bootstrap token acts in its tenant"
        );
        let tenantless = app
            .with_token(Method::POST, path, &cloud_admin_token(&app))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        expect_problem(tenantless, StatusCode::BAD_REQUEST, "validation").await;
        let body = json!({"tenantId": Uuid::new_v4()});
        let response = send(&app, Method::POST, path, &body).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
);

api_test!(details_filter_lots_and_their_amounts_by_status, |app| {
    let tenant = app.tenant_id();
    every_status(&app, tenant).await;
    let body = json!({"tenantId": tenant});
    let expired = post_ok(
        &app,
        &format!("{}?filter=Expired", routes::credit_details()),
        &body,
    )
    .await;
    assert_eq!(
        expired,
        json!({"totalCount": 1, "offset": 0, "limit": expired["limit"], "data": [
            {"billingReference": reference("short"), "expiresAt": day(&app, -2),
             "isExpired": true, "statuses": [status("Expired", 1.5)]}]})
    );
    let path = &format!("{}?filter=Reserved,Spent", routes::credit_details());
    let used = post_ok(&app, path, &body).await;
    assert_eq!(names(&used), ["main"]);
    assert_eq!(
        used["data"][0]["statuses"],
        json!([status("Reserved", 3.0), status("Spent", 2.0)])
    );
    let both = post_ok(
        &app,
        &format!(
            "{}?filter=available&filter=expired",
            routes::credit_details()
        ),
        &body,
    )
    .await;
    assert_eq!(names(&both), ["short", "main"]);
    let response = send(
        &app,
        Method::POST,
        &format!("{}?filter=Gone", routes::credit_details()),
        &body,
    )
    .await;
    expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
});

api_test!(the_generic_pool_has_details_too, |app| {
    add(&app, None, "2", "late", FAR).await;
    add(&app, None, "3", "early", "2098-01-01").await;
    add(&app, Some(app.tenant_id()), "1", "tenant", FAR).await;
    let path = &routes::unassigned_credit_details();
    let page = post_ok(&app, path, &json!({})).await;
    assert_eq!(
        (page["totalCount"].clone(), names(&page)),
        (json!(2), vec!["early", "late"])
    );
    let page = post_ok(
        &app,
        &format!("{path}?limit=1&offset=1&filter=Available"),
        &json!({}),
    )
    .await;
    assert_eq!(
        page["data"],
        json!([{"billingReference": reference("late"), "expiresAt": FAR, "isExpired": false,
            "statuses": [status("Available", 2.0)]}])
    );
    let spent = post_ok(&app, &format!("{path}?filter=Spent"), &json!({})).await;
    assert_eq!(
        (spent["totalCount"].clone(), names(&spent).len()),
        (json!(0), 0)
    );
});

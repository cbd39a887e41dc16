//! The history of the ledger (docs/credits.md "Extended details", "Journal", "Audit"): the
//! operations behind each lot, every change journalled with who and what, cursor pages that
//! add up to the balances, and a journal the database itself keeps append-only.

use std::collections::BTreeMap;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// A mixed history for the bootstrap tenant: credits moved in from the generic pool and
/// added, a reservation across two lots partly spent, one released, one timed out, a direct
/// spend and a lot expiring. Ends with Available 12, Spent 6, Expired 2, in 13 entries.
async fn mixed_history(app: &TestApp) {
    let tenant = app.tenant_id();
    add(app, None, "8", "g", "2098-01-01").await;
    let body = json!({"credits": 8, "targetTenantId": tenant});
    expect_status(move_credits(app, &body, None).await, StatusCode::OK).await;
    add(app, Some(tenant), "10", "t", FAR).await;
    reserve_ok(app, tenant, 9.0, "across").await;
    let body = json!({"tenantId": tenant, "operationId": "across", "credits": 5});
    expect_status(spend(app, &body).await, StatusCode::OK).await;
    reserve_ok(app, tenant, 3.0, "cheap").await;
    expect_status(release(app, tenant, "cheap").await, StatusCode::OK).await;
    let body = json!({"credits": 1, "tenantId": tenant, "operationId": "late",
        "timeoutSeconds": 10});
    expect_status(reserve(app, &body).await, StatusCode::OK).await;
    let body = json!({"tenantId": tenant, "operationId": "direct", "credits": 1,
        "direct": true});
    expect_status(spend(app, &body).await, StatusCode::OK).await;
    add(app, Some(tenant), "2", "soon", &day(app, 0)).await;
    app.clock.advance(chrono::TimeDelta::days(2));
}

/// Each status's sum over `entries`, in micro-credits.
fn sums(entries: &[Value]) -> BTreeMap<&'static str, i64> {
    let mut sums = BTreeMap::new();
    for entry in entries {
        for status in ["available", "reserved", "spent", "expired"] {
            *sums.entry(status).or_insert(0) += micros(&entry[status]);
        }
    }
    sums
}

/// The breakdown of `tenant` as the same map as [`sums`].
async fn breakdown_sums(app: &TestApp, tenant: Uuid) -> BTreeMap<&'static str, i64> {
    let listed = balances(app, Some(tenant)).await;
    ["available", "reserved", "spent", "expired"]
        .into_iter()
        .zip(listed.as_array().unwrap())
        .map(|(status, amount)| (status, micros(&amount["credits"])))
        .collect()
}

api_test!(
    the_journal_pages_through_every_change_and_sums_to_the_balances,
    |app| {
        let tenant = app.tenant_id();
        mixed_history(&app).await;
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(12.0, 0.0, 6.0, 2.0)
        );
        let whole = journal(&app, Some(tenant), 1000).await;
        assert_eq!(journal(&app, Some(tenant), 2).await, whole, "pages of two");
        assert_eq!(journal(&app, Some(tenant), 1).await, whole, "pages of one");
        assert_eq!(
            kinds(&whole),
            [
                "MoveIn", "Add", "Reserve", "Reserve", "Spend", "Spend", "Reserve", "Release",
                "Reserve", "Spend", "Add", "Timeout", "Expire"
            ]
        );
        let sequences: Vec<i64> = whole
            .iter()
            .map(|e| e["sequence"].as_i64().unwrap())
            .collect();
        assert!(
            sequences.windows(2).all(|pair| pair[0] < pair[1]),
            "{sequences:?}"
        );
        assert_eq!(sums(&whole), breakdown_sums(&app, tenant).await);
        let path = format!(
            "{}?sortOrder=Desc&limit=5",
            routes::tenant_credit_journal(tenant)
        );
        let newest = get_ok(&app, &path).await;
        let mut reversed = whole.clone();
        reversed.reverse();
        assert_eq!(newest["data"].as_array().unwrap(), &reversed[..5]);
        let next = newest["cursor"].as_str().unwrap();
        let older = get_ok(&app, &format!("{path}&cursor={next}")).await;
        assert_eq!(older["data"].as_array().unwrap(), &reversed[5..10]);
        let asc = format!(
            "{}?sortOrder=Asc&cursor={next}",
            routes::tenant_credit_journal(tenant)
        );
        let response = back_office(&app, Method::GET, &asc).send().await.unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "invalid-cursor").await;
        let response = back_office(
            &app,
            Method::GET,
            &format!("{}?cursor=nonsense", routes::tenant_credit_journal(tenant)),
        )
        .send()
        .await
        .unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "invalid-cursor").await;
    }
);

api_test!(journal_entries_say_who_what_and_which_change, |app| {
    let tenant = app.tenant_id();
    mixed_history(&app).await;
    let whole = journal(&app, Some(tenant), 1000).await;
    let moved_in = &whole[0];
    assert_eq!(moved_in["counterpart"], "Unassigned");
    assert_eq!(
        (moved_in["available"].clone(), moved_in["expiresAt"].clone()),
        (json!(8.0), json!("2098-01-01"))
    );
    let added = &whole[1];
    assert!(added["actorId"].is_string(), "{added}");
    assert_eq!(added["actorType"], "UserIdentity");
    assert!(added.get("counterpart").is_none(), "{added}");
    let across = &whole[2..4];
    assert_eq!(
        across[0]["changeId"], across[1]["changeId"],
        "one change, two lots"
    );
    assert_ne!(across[0]["changeId"], added["changeId"]);
    assert_eq!(across[1]["operationId"], "across");
    let changes = |entry: &Value| {
        ["available", "reserved", "spent", "expired"].map(|status| micros(&entry[status]))
    };
    assert_eq!(changes(&across[0]), [-8_000_000, 8_000_000, 0, 0]);
    assert_eq!(changes(&across[1]), [-1_000_000, 1_000_000, 0, 0]);
    assert_eq!(whole[4]["changeId"], whole[5]["changeId"]);
    assert_eq!(
        changes(&whole[4]),
        [3_000_000, -8_000_000, 5_000_000, 0],
        "the rest goes back"
    );
    assert_eq!(changes(&whole[5]), [1_000_000, -1_000_000, 0, 0]);
    assert_eq!(changes(&whole[12]), [-2_000_000, 0, 0, 2_000_000]);
    for automatic in &whole[11..] {
        assert!(automatic.get("actorId").is_none(), "{automatic}");
        assert!(automatic.get("actorType").is_none(), "{automatic}");
    }
    assert_eq!(whole[11]["operationId"], "late");
    let generic = journal(&app, None, 1000).await;
    assert_eq!(kinds(&generic), ["Add", "MoveOut"]);
    assert_eq!(generic[1]["counterpart"], json!(tenant));
    assert_eq!(generic[1]["changeId"], moved_in["changeId"]);
    assert_eq!(generic[1]["available"], json!(-8.0));
    assert_eq!(generic[0]["salesOrderId"], Value::Null);
});

api_test!(the_audit_finds_balances_and_journal_equal, |app| {
    let tenant = app.tenant_id();
    let fresh = app.create_tenant("Fresh").await;
    mixed_history(&app).await;
    // The first read after the clock moved: the audit settles the timeout and expiry too.
    let audit = app.credits().audit(tenant).await.expect(StatusCode::OK);
    assert_eq!(
        audit,
        json!({"tenantId": tenant, "balances": statuses(12.0, 0.0, 6.0, 2.0),
            "journal": statuses(12.0, 0.0, 6.0, 2.0), "consistent": true})
    );
    let audit = app.credits().audit(fresh).await.expect(StatusCode::OK);
    assert_eq!(audit["balances"], statuses(0.0, 0.0, 0.0, 0.0));
    assert_eq!(audit["consistent"], true);
    let response = back_office(
        &app,
        Method::GET,
        &routes::tenant_credit_audit(Uuid::new_v4()),
    )
    .send()
    .await
    .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
});

api_test!(the_database_refuses_to_change_the_journal, |app| {
    add(&app, Some(app.tenant_id()), "5", "abc", FAR).await;
    let mut statements = vec![
        "UPDATE credit_journal SET available = 0",
        "DELETE FROM credit_journal",
    ];
    if app.backend == Backend::Postgres {
        statements.push("TRUNCATE credit_journal");
    }
    for statement in statements {
        let result = basin::on_db!(&app.db, |pool| sqlx::query(statement)
            .execute(pool)
            .await
            .map(|_| ()));
        let error = result.expect_err(statement).to_string();
        assert!(error.contains("append-only"), "{statement}: {error}");
    }
    let audit = get_ok(&app, &routes::tenant_credit_audit(app.tenant_id())).await;
    assert_eq!(audit["journal"], statuses(5.0, 0.0, 0.0, 0.0));
});

/// The extended details of the bootstrap tenant with `query`, as BackOffice.
async fn extended(app: &TestApp, query: &str) -> Value {
    let body = json!({"tenantId": app.tenant_id()});
    let response = send(
        app,
        Method::POST,
        &format!("{}?{query}", routes::credit_details_extended()),
        &body,
    )
    .await;
    expect_status(response, StatusCode::OK).await
}

/// The operation ids listed for the first lot of an extended details page.
fn operation_ids(page: &Value) -> Vec<&str> {
    page["data"][0]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["operationId"].as_str().unwrap())
        .collect()
}

/// One lot of 10 credits with three operations a second apart: `held` reserves 2 for a project
/// of the tenant, `released` reserves 1 and gives it back, `used` spends 1.5 directly for a
/// project id that names no project. Returns the two project ids.
async fn three_operations(app: &TestApp) -> (String, Uuid) {
    let tenant = app.tenant_id();
    add(app, Some(tenant), "10", "abc", FAR).await;
    let project = app
        .create_project(As::Key, "Seismic survey", json!({}))
        .await;
    let project_id = id_str(&project).to_owned();
    let body = json!({"credits": 2, "tenantId": tenant, "operationId": "held",
        "projectId": project_id});
    expect_status(reserve(app, &body).await, StatusCode::OK).await;
    app.clock.advance(chrono::TimeDelta::seconds(1));
    reserve_ok(app, tenant, 1.0, "released").await;
    expect_status(release(app, tenant, "released").await, StatusCode::OK).await;
    app.clock.advance(chrono::TimeDelta::seconds(1));
    let stranger = Uuid::new_v4();
    let body = json!({"tenantId": tenant, "operationId": "used", "credits": 1.5,
        "direct": true, "projectId": stranger});
    expect_status(spend(app, &body).await, StatusCode::OK).await;
    (project_id, stranger)
}

/// `operation` without its times, which are checked to be there (`resolvedAt` when
/// `resolved`).
fn timeless(operation: &Value, resolved: bool) -> Value {
    let mut operation = operation.clone();
    let times = operation.as_object_mut().unwrap();
    assert!(times.remove("createdAt").unwrap().is_string());
    assert_eq!(
        times.remove("resolvedAt").is_some(),
        resolved,
        "{operation}"
    );
    operation
}

api_test!(
    extended_details_list_each_lots_operations_newest_first,
    |app| {
        let (project_id, stranger) = three_operations(&app).await;
        let page = extended(&app, "").await;
        let lot = &page["data"][0];
        assert_eq!(lot["statuses"], statuses(6.5, 2.0, 1.5, 0.0));
        assert_eq!(
            lot["operationsTotal"], 2,
            "released operations hold and spent nothing: {lot}"
        );
        assert_eq!(operation_ids(&page), ["used", "held"]);
        assert_eq!(
            timeless(&lot["operations"][0], true),
            json!({"operationId": "used", "state": "Spent", "projectId": stranger,
            "reserved": 0.0, "spent": 1.5}),
            "no projectName: not a project of the tenant"
        );
        assert_eq!(
            timeless(&lot["operations"][1], false),
            json!({"operationId": "held", "state": "Reserved", "projectId": project_id,
            "projectName": "Seismic survey", "reserved": 2.0, "spent": 0.0})
        );
    }
);

api_test!(extended_details_filter_and_limit_the_operations, |app| {
    three_operations(&app).await;
    let reserved = extended(&app, "filter=Reserved").await;
    assert_eq!(operation_ids(&reserved), ["held"]);
    assert_eq!(
        reserved["data"][0]["statuses"],
        json!([{"status": "Reserved", "credits": 2.0}])
    );
    assert_eq!(
        operation_ids(&extended(&app, "filter=Spent").await),
        ["used"]
    );
    let available = extended(&app, "filter=Available").await;
    assert_eq!(operation_ids(&available), Vec::<&str>::new());
    assert_eq!(available["data"][0]["operationsTotal"], 0);
    let one = extended(&app, "operationsLimit=1").await;
    assert_eq!(operation_ids(&one), ["used"]);
    assert_eq!(one["data"][0]["operationsTotal"], 2);
});

api_test!(extended_details_bound_the_operations_per_lot, |app| {
    let tenant = app.tenant_id();
    add(&app, Some(tenant), "10", "abc", FAR).await;
    for query in [
        "operationsLimit=0",
        "operationsLimit=1001",
        "operationsLimit=-1",
    ] {
        let body = json!({"tenantId": tenant});
        let response = send(
            &app,
            Method::POST,
            &format!("{}?{query}", routes::credit_details_extended()),
            &body,
        )
        .await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    }
    extended(&app, "operationsLimit=1000").await;
    for index in 0..3 {
        reserve_ok(&app, tenant, 1.0, &format!("same-instant-{index}")).await;
    }
    let page = extended(&app, "operationsLimit=2").await;
    assert_eq!(
        operation_ids(&page),
        ["same-instant-2", "same-instant-1"],
        "newest first, also within one instant"
    );
    assert_eq!(page["data"][0]["operationsTotal"], 3);
    let by_caller = app
        .with_key(Method::POST, &routes::credit_details_extended())
        .send()
        .await
        .unwrap();
    let by_caller = expect_status(by_caller, StatusCode::OK).await;
    assert_eq!(operation_ids(&by_caller).len(), 3);
});

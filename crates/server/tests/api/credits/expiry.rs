//! Expiry and reservation timeouts (docs/credits.md "Expiry", "Expiry and timeouts happen on
//! time"): a lot's credits expire the day after its date, on the next read without waiting for
//! the job; what a reservation holds outlives the date; a timed-out reservation gives back.

use basin::Clock;
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// The settle job runs once at start and then not again during the test: what settles,
/// settles because a request read the pool.
fn without_the_job(config: &mut basin::Config) {
    config.credits.settle_interval_seconds = std::time::Duration::from_secs(86_400);
}

/// Moves the app's clock to the last microsecond of today (UTC).
fn to_the_end_of_today(app: &TestApp) {
    let now = app.clock.now();
    let midnight = (now.date_naive() + chrono::TimeDelta::days(1))
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc();
    app.clock
        .advance(midnight - now - chrono::TimeDelta::microseconds(1));
}

/// The last journal entry of `tenant`.
async fn last_entry(app: &TestApp, tenant: Option<Uuid>) -> Value {
    journal(app, tenant, 100).await.pop().unwrap()
}

api_test_with!(
    credits_expire_the_day_after_their_date_on_the_next_read,
    without_the_job,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "4", "soon", &day(&app, 0)).await;
        add(&app, Some(tenant), "6", "later", FAR).await;
        to_the_end_of_today(&app);
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(10.0, 0.0, 0.0, 0.0),
            "usable through its last day"
        );
        app.clock.advance(chrono::TimeDelta::microseconds(1));
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(6.0, 0.0, 0.0, 4.0)
        );
        let expired = last_entry(&app, Some(tenant)).await;
        assert_eq!(expired["kind"], "Expire");
        assert!(expired.get("actorId").is_none(), "{expired}");
        assert!(expired.get("actorType").is_none(), "{expired}");
        assert_eq!(expired["available"], json!(-4.0));
        assert_eq!(expired["expired"], json!(4.0));
        let details = get_details(&app, tenant).await;
        assert_eq!(details["data"][0]["isExpired"], true, "{details}");
        assert_eq!(details["data"][1]["isExpired"], false, "{details}");
        app.clock.advance(chrono::TimeDelta::days(2));
        let entries = journal(&app, Some(tenant), 100).await;
        assert_eq!(kinds(&entries), ["Add", "Add", "Expire"], "expires once");
    }
);

/// The details of `tenant`, as BackOffice.
async fn get_details(app: &TestApp, tenant: Uuid) -> Value {
    let body = json!({"tenantId": tenant});
    let response = send(app, reqwest::Method::POST, &routes::credit_details(), &body).await;
    expect_status(response, StatusCode::OK).await
}

api_test_with!(
    expired_credits_are_never_reserved_spent_or_moved,
    without_the_job,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "5", "soon", &day(&app, 0)).await;
        add(&app, None, "5", "soon", &day(&app, 0)).await;
        app.clock.advance(chrono::TimeDelta::days(2));
        let conflicts = [
            reserve(
                &app,
                &json!({"credits": 1, "tenantId": tenant, "operationId": "r"}),
            )
            .await,
            spend(
                &app,
                &json!({"credits": 1, "tenantId": tenant, "operationId": "d", "direct": true}),
            )
            .await,
            move_credits(&app, &json!({"credits": 1, "sourceTenantId": tenant}), None).await,
            move_credits(&app, &json!({"credits": 1, "targetTenantId": tenant}), None).await,
        ];
        for response in conflicts {
            expect_problem(response, StatusCode::CONFLICT, "insufficient-credits").await;
        }
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(0.0, 0.0, 0.0, 5.0)
        );
        assert_eq!(balances(&app, None).await, statuses(0.0, 0.0, 0.0, 5.0));
        let generic = journal(&app, None, 100).await;
        assert_eq!(kinds(&generic), ["Add", "Expire"]);
    }
);

api_test_with!(
    reserved_credits_outlive_their_date_and_what_comes_back_is_expired,
    without_the_job,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "10", "soon", &day(&app, 0)).await;
        reserve_ok(&app, tenant, 4.0, "spent-late").await;
        reserve_ok(&app, tenant, 3.0, "released-late").await;
        let body = json!({"credits": 1, "tenantId": tenant, "operationId": "timed-out",
            "timeoutSeconds": 3600});
        expect_status(reserve(&app, &body).await, StatusCode::OK).await;
        app.clock.advance(chrono::TimeDelta::days(2));
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(0.0, 7.0, 0.0, 3.0)
        );
        let body = json!({"tenantId": tenant, "operationId": "spent-late", "credits": 3});
        let spent = expect_status(spend(&app, &body).await, StatusCode::OK).await;
        assert_eq!(spent["returned"], json!(1.0));
        let entry = last_entry(&app, Some(tenant)).await;
        assert_eq!(
            (entry["available"].clone(), entry["expired"].clone()),
            (json!(0.0), json!(1.0)),
            "{entry}"
        );
        expect_status(release(&app, tenant, "released-late").await, StatusCode::OK).await;
        assert_eq!(last_entry(&app, Some(tenant)).await["expired"], json!(3.0));
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(0.0, 0.0, 3.0, 7.0)
        );
        let entries = journal(&app, Some(tenant), 100).await;
        assert_eq!(
            kinds(&entries),
            [
                "Add", "Reserve", "Reserve", "Reserve", "Timeout", "Expire", "Spend", "Release"
            ]
        );
        assert_eq!(entries[4]["expired"], json!(1.0), "{}", entries[4]);
    }
);

api_test_with!(
    a_reservation_past_its_timeout_gives_its_credits_back,
    without_the_job,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "10", "abc", FAR).await;
        let body = json!({"credits": 4, "tenantId": tenant, "operationId": "t",
            "timeoutSeconds": 60});
        let reserved = expect_status(reserve(&app, &body).await, StatusCode::OK).await;
        app.clock.advance(chrono::TimeDelta::seconds(59));
        assert_eq!(operation(&app, tenant, "t").await, reserved);
        app.clock.advance(chrono::TimeDelta::seconds(2));
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(10.0, 0.0, 0.0, 0.0)
        );
        let timed_out = operation(&app, tenant, "t").await;
        assert_eq!(timed_out["state"], "TimedOut");
        assert_eq!(timed_out["returned"], json!(4.0));
        assert!(timed_out["resolvedAt"].is_string(), "{timed_out}");
        let entry = last_entry(&app, Some(tenant)).await;
        assert_eq!(entry["kind"], "Timeout");
        assert_eq!(entry["operationId"], "t");
        assert!(entry.get("actorId").is_none(), "{entry}");
        assert_eq!(
            (entry["available"].clone(), entry["reserved"].clone()),
            (json!(4.0), json!(-4.0))
        );
        for credits in [Value::Null, json!(4)] {
            let body = json!({"tenantId": tenant, "operationId": "t", "credits": credits});
            expect_problem(
                spend(&app, &body).await,
                StatusCode::CONFLICT,
                "operation-resolved",
            )
            .await;
        }
        let response = release(&app, tenant, "t").await;
        expect_problem(response, StatusCode::CONFLICT, "operation-resolved").await;
        assert_eq!(
            expect_status(reserve(&app, &body).await, StatusCode::OK).await,
            timed_out
        );
    }
);

api_test_with!(
    a_reservation_times_out_before_a_spend_in_the_same_request,
    without_the_job,
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "10", "abc", FAR).await;
        let body = json!({"credits": 4, "tenantId": tenant, "operationId": "t",
            "timeoutSeconds": 60});
        expect_status(reserve(&app, &body).await, StatusCode::OK).await;
        app.clock.advance(chrono::TimeDelta::seconds(60));
        let body = json!({"tenantId": tenant, "operationId": "t"});
        expect_problem(
            spend(&app, &body).await,
            StatusCode::CONFLICT,
            "operation-resolved",
        )
        .await;
        reserve_ok(&app, tenant, 10.0, "everything").await;
    }
);

api_test_with!(
    the_settle_job_settles_pools_nobody_reads,
    |config| config.credits.settle_interval_seconds = std::time::Duration::from_secs(1),
    |app| {
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "5", "soon", &day(&app, 0)).await;
        app.clock.advance(chrono::TimeDelta::days(2));
        let mut expired = 0_i64;
        for _ in 0..100 {
            expired = basin::on_db!(&app.db, |pool| sqlx::query_scalar(
                "SELECT CAST(COALESCE(SUM(expired), 0) AS BIGINT) FROM credit_lots"
            )
            .fetch_one(pool)
            .await
            .unwrap());
            if expired > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(
            expired, 5_000_000,
            "the job expired the lot within 5 seconds"
        );
        assert_eq!(
            kinds(&journal(&app, Some(tenant), 100).await),
            ["Add", "Expire"]
        );
    }
);

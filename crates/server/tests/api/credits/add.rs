//! Adding credits (`POST /api/iam/credit`, docs/credits.md "Add"): the two kinds of pool,
//! sales orders added once, dates, text fields and amounts read exactly from their digits.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// An add of 10.5 credits of reference `abc123` under the sales order `Order1`.
fn order_body(tenant: Option<Uuid>, credits: Value) -> Value {
    let mut body = json!({
        "credits": credits, "billingReference": reference("abc123"), "salesOrderId": "Order1",
        "expiresAt": FAR
    });
    if let Some(tenant) = tenant {
        body["tenantId"] = json!(tenant);
    }
    body
}

/// The add of [`order_body`] as text, the amount written as `credits` (a JSON literal).
fn order_text(tenant: Uuid, credits: &str) -> String {
    format!(
        r#"{{"credits":{credits},"billingReference":{},"salesOrderId":"Order1","expiresAt":"{FAR}","tenantId":"{tenant}"}}"#,
        reference("abc123")
    )
}

/// Sends a body that must be refused as invalid and checks nothing was added to the tenant.
async fn expect_refused(app: &TestApp, body: &Value, kind: &str) {
    let before = balances(app, Some(app.tenant_id())).await;
    expect_problem(add_json(app, body).await, StatusCode::BAD_REQUEST, kind).await;
    assert_eq!(balances(app, Some(app.tenant_id())).await, before, "{body}");
}

api_test!(an_add_answers_what_it_added_to_the_tenant, |app| {
    let tenant = app.tenant_id();
    let body = json!({
        "credits": 1.0, "billingReference": reference("abc123"), "salesOrderId": "Order12345",
        "expiresAt": "2099-12-31", "tenantId": tenant
    });
    let added = expect_status(add_json(&app, &body).await, StatusCode::OK).await;
    assert_eq!(
        added,
        json!({
            "credits": 1.0, "tenantId": tenant, "salesOrderId": "Order12345",
            "billingReference": reference("abc123"), "expiresAt": "2099-12-31"
        })
    );
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(1.0, 0.0, 0.0, 0.0)
    );
    assert_eq!(balances(&app, None).await, statuses(0.0, 0.0, 0.0, 0.0));
    let bare = json!({"credits": 2, "billingReference": {"billingReference": "plain"},
        "expiresAt": FAR, "tenantId": tenant});
    let added = expect_status(add_json(&app, &bare).await, StatusCode::OK).await;
    assert_eq!(
        added["billingReference"],
        json!({"billingReference": "plain"})
    );
    assert!(added.get("salesOrderId").is_none(), "{added}");
});

api_test!(
    a_tenant_id_absent_null_empty_or_nil_means_the_generic_pool,
    |app| {
        let nil = Uuid::nil().to_string();
        let tenants = [None, Some(Value::Null), Some(json!("")), Some(json!(nil))];
        for (tenant, expected) in tenants.into_iter().zip([1.0, 2.0, 3.0, 4.0]) {
            let mut body =
                json!({"credits": 1, "billingReference": reference("g"), "expiresAt": FAR});
            if let Some(tenant) = tenant {
                body["tenantId"] = tenant;
            }
            let added = expect_status(add_json(&app, &body).await, StatusCode::OK).await;
            assert!(added.get("tenantId").is_none(), "{added}");
            assert_eq!(
                balances(&app, None).await,
                statuses(expected, 0.0, 0.0, 0.0)
            );
        }
        assert_eq!(
            balances(&app, Some(app.tenant_id())).await,
            statuses(0.0, 0.0, 0.0, 0.0)
        );
    }
);

api_test!(
    a_sales_order_adds_once_and_its_retry_answers_the_same,
    |app| {
        let tenant = app.tenant_id();
        let first = send_text(
            &app,
            Method::POST,
            &routes::credits(),
            &order_text(tenant, "10.5"),
        )
        .await;
        let first = expect_status(first, StatusCode::OK).await;
        for credits in ["10.5", "10.50", "1.05e1", "\"10.5\""] {
            let again = order_text(tenant, credits);
            let again = send_text(&app, Method::POST, &routes::credits(), &again).await;
            assert_eq!(
                expect_status(again, StatusCode::OK).await,
                first,
                "{credits}"
            );
        }
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(10.5, 0.0, 0.0, 0.0)
        );
        let adds = journal(&app, Some(tenant), 100).await;
        assert_eq!(kinds(&adds), ["Add"]);
        assert_eq!(adds[0]["salesOrderId"], "Order1");
    }
);

api_test!(
    another_body_under_a_sales_order_is_a_conflict_that_adds_nothing,
    |app| {
        let tenant = app.tenant_id();
        let original = order_body(Some(tenant), json!(10.5));
        expect_status(add_json(&app, &original).await, StatusCode::OK).await;
        let other_tenant = app.create_tenant("Other").await;
        let mut variants = vec![
            order_body(Some(tenant), json!(11)),
            order_body(Some(other_tenant), json!(10.5)),
            order_body(None, json!(10.5)),
        ];
        let mut other_date = original.clone();
        other_date["expiresAt"] = json!("2099-12-30");
        variants.push(other_date);
        for (part, value) in [
            ("billingReference", "abc124"),
            ("billingReferenceTag", "other tag"),
            ("billingReferenceType", "INT"),
        ] {
            let mut other_reference = original.clone();
            other_reference["billingReference"][part] = json!(value);
            variants.push(other_reference);
        }
        for variant in &variants {
            let response = add_json(&app, variant).await;
            expect_problem(response, StatusCode::CONFLICT, "sales-order-conflict").await;
        }
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(10.5, 0.0, 0.0, 0.0)
        );
        assert_eq!(
            balances(&app, Some(other_tenant)).await,
            statuses(0.0, 0.0, 0.0, 0.0)
        );
        assert_eq!(balances(&app, None).await, statuses(0.0, 0.0, 0.0, 0.0));
    }
);

api_test!(without_a_sales_order_every_add_adds, |app| {
    let tenant = app.tenant_id();
    add(&app, Some(tenant), "2", "abc123", FAR).await;
    add(&app, Some(tenant), "2", "abc123", FAR).await;
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(4.0, 0.0, 0.0, 0.0)
    );
    let details = app.credits().details(&json!({"tenantId": tenant})).await;
    let details = expect_status(details, StatusCode::OK).await;
    assert_eq!(details["totalCount"], 1, "one lot per reference and date");
});

api_test!(
    an_unknown_tenant_is_404_and_a_body_that_is_not_json_400,
    |app| {
        let body = order_body(Some(Uuid::new_v4()), json!(1));
        expect_problem(
            add_json(&app, &body).await,
            StatusCode::NOT_FOUND,
            "not-found",
        )
        .await;
        let response = send_text(&app, Method::POST, &routes::credits(), "{credits: 1").await;
        expect_problem(response, StatusCode::BAD_REQUEST, "invalid-body").await;
        let mut bad_tenant = order_body(None, json!(1));
        bad_tenant["tenantId"] = json!("not-a-uuid");
        expect_refused(&app, &bad_tenant, "validation").await;
        let order = order_body(Some(app.tenant_id()), json!(1));
        expect_status(add_json(&app, &order).await, StatusCode::OK).await;
    }
);

api_test!(expiry_dates_are_days_and_a_past_one_is_refused, |app| {
    let tenant = app.tenant_id();
    let today = day(&app, 0);
    for (sent, stored) in [
        (today.as_str(), today.as_str()),
        ("2099-12-31T23:59:59Z", "2099-12-31"),
        ("2099-12-31T22:00:00-05:00", "2100-01-01"),
        ("2099-06-30T10:00:00.0000000", "2099-06-30"),
        (" 2099-05-31 ", "2099-05-31"),
    ] {
        let body = json!({"credits": 1, "billingReference": reference("d"), "expiresAt": sent,
            "tenantId": tenant});
        let added = expect_status(add_json(&app, &body).await, StatusCode::OK).await;
        assert_eq!(added["expiresAt"], stored, "{sent}");
    }
    let yesterday = day(&app, -1);
    for sent in [yesterday.as_str(), "2099-02-30", "31.12.2099", "soon", ""] {
        let body = json!({"credits": 1, "billingReference": reference("d"), "expiresAt": sent,
            "tenantId": tenant});
        expect_refused(&app, &body, "validation").await;
    }
    let mut missing = json!({"credits": 1, "billingReference": reference("d"), "tenantId": tenant});
    expect_refused(&app, &missing, "validation").await;
    missing["expiresAt"] = json!(20_991_231);
    expect_refused(&app, &missing, "validation").await;
});

api_test!(
    billing_references_are_required_trimmed_and_plain_text,
    |app| {
        let tenant = app.tenant_id();
        let body = json!({"credits": 1, "expiresAt": FAR, "tenantId": tenant,
        "billingReference": {"billingReference": "  abc  ", "billingReferenceTag": " t ",
            "billingReferenceType": "EXT "}});
        let added = expect_status(add_json(&app, &body).await, StatusCode::OK).await;
        assert_eq!(
            added["billingReference"],
            json!({"billingReference": "abc", "billingReferenceTag": "t", "billingReferenceType": "EXT"})
        );
        let mut without = body.clone();
        without.as_object_mut().unwrap().remove("billingReference");
        expect_refused(&app, &without, "validation").await;
        for empty in [json!(""), json!("   "), Value::Null] {
            let mut body = body.clone();
            body["billingReference"]["billingReference"] = empty;
            expect_refused(&app, &body, "validation").await;
        }
        let mut no_reference = body.clone();
        no_reference["billingReference"] = json!({"billingReferenceTag": "t"});
        expect_refused(&app, &no_reference, "validation").await;
    }
);

api_test!(
    text_fields_are_at_most_255_characters_without_control_characters,
    |app| {
        let tenant = app.tenant_id();
        let long = "é".repeat(255);
        let body = json!({"credits": 1, "expiresAt": FAR, "tenantId": tenant, "salesOrderId": long,
        "billingReference": {"billingReference": long, "billingReferenceTag": long,
            "billingReferenceType": long}});
        let added = expect_status(add_json(&app, &body).await, StatusCode::OK).await;
        assert_eq!(added["salesOrderId"], json!(long));
        for field in [
            "/salesOrderId",
            "/billingReference/billingReference",
            "/billingReference/billingReferenceTag",
            "/billingReference/billingReferenceType",
        ] {
            for bad in [
                "x".repeat(256),
                "a\u{7}b".to_owned(),
                "a\nb".to_owned(),
                "a\0b".to_owned(),
            ] {
                let mut refused = body.clone();
                refused["salesOrderId"] = json!("Order2");
                *refused.pointer_mut(field).unwrap() = json!(bad);
                expect_refused(&app, &refused, "validation").await;
            }
        }
        let empty_order = with_fields(body.clone(), json!({"salesOrderId": " "}));
        expect_refused(&app, &empty_order, "validation").await;
    }
);

api_test!(amounts_outside_the_rules_are_refused_whole, |app| {
    let tenant = app.tenant_id();
    for credits in [
        "0",
        "0.000",
        "-1",
        "-0.5",
        "0.0000001",
        "1.0000000000000001",
        "1e10",
        "1000000000.000001",
        "1e-7",
        "\"abc\"",
        "\"\"",
        "\"1,5\"",
        "null",
        "true",
        "[1]",
        "{\"value\": 1}",
    ] {
        let body = add_text(Some(tenant), credits, "amount", FAR);
        let response = send_text(&app, Method::POST, &routes::credits(), &body).await;
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(
            problem["errors"]["credits"].is_array(),
            "{credits}: {problem}"
        );
    }
    let missing = json!({"billingReference": reference("amount"), "expiresAt": FAR,
        "tenantId": tenant});
    expect_refused(&app, &missing, "validation").await;
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(0.0, 0.0, 0.0, 0.0)
    );
});

api_test!(
    amounts_are_read_exactly_and_written_with_a_decimal_place,
    |app| {
        let tenant = app.tenant_id();
        for (sent, written) in [
            ("\"12.5\"", "12.5"),
            ("1.25e2", "125.0"),
            ("125E-2", "1.25"),
            ("12", "12.0"),
            ("0.000001", "0.000001"),
            ("0.1", "0.1"),
            ("1.50000000", "1.5"),
            ("1000000000", "1000000000.0"),
        ] {
            let body = add_text(Some(tenant), sent, "exact", FAR);
            let response = send_text(&app, Method::POST, &routes::credits(), &body).await;
            assert_eq!(response.status(), StatusCode::OK, "{sent}");
            let text = response.text().await.unwrap();
            assert!(
                text.starts_with(&format!(r#"{{"credits":{written},"#)),
                "{sent}: {text}"
            );
        }
        let response = back_office(
            &app,
            Method::GET,
            &format!("{}?filter=Available", routes::tenant_credits(tenant)),
        )
        .send()
        .await
        .unwrap();
        let text = response.text().await.unwrap();
        assert!(
            text.contains(r#""credits":1000000152.350001}"#),
            "the sum is exact: {text}"
        );
    }
);

api_test!(a_pool_receives_at_most_a_trillion_credits, |app| {
    let tenant = app.tenant_id();
    add(&app, Some(tenant), "1", "limit", FAR).await;
    basin::on_db!(&app.db, |pool| sqlx::query(
        "UPDATE credit_pools SET received = 999999999999000000 WHERE tenant_id IS NOT NULL"
    )
    .execute(pool)
    .await
    .map(|_| ())
    .unwrap());
    add(&app, Some(tenant), "1", "limit", FAR).await;
    let over = add_text(Some(tenant), "0.000001", "limit", FAR);
    let response = send_text(&app, Method::POST, &routes::credits(), &over).await;
    expect_problem(response, StatusCode::CONFLICT, "credit-limit").await;
    add(&app, None, "5", "limit", FAR).await;
    let moved = json!({"credits": 1, "targetTenantId": tenant});
    let response = move_credits(&app, &moved, None).await;
    expect_problem(response, StatusCode::CONFLICT, "credit-limit").await;
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(2.0, 0.0, 0.0, 0.0)
    );
    assert_eq!(balances(&app, None).await, statuses(5.0, 0.0, 0.0, 0.0));
});

api_test!(
    numbers_that_are_not_json_and_amounts_with_spaces_are_refused_issue_33,
    |app| {
        let tenant = app.tenant_id();
        // Not JSON: a leading zero, a bare sign or point. They were read as 1 and 1.5.
        for credits in ["00001", "01.5", "-01", "+1", "1.", ".5"] {
            let body = add_text(Some(tenant), credits, "lenient", FAR);
            let response = send_text(&app, Method::POST, &routes::credits(), &body).await;
            expect_problem(response, StatusCode::BAD_REQUEST, "invalid-body").await;
        }
        // JSON strings, but no number as JSON writes it: white space, leading zeros.
        for credits in [r#"" 1""#, r#""1 ""#, r#""\t1""#, r#""00001""#, r#""+1""#] {
            let body = add_text(Some(tenant), credits, "lenient", FAR);
            let response = send_text(&app, Method::POST, &routes::credits(), &body).await;
            let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
            assert!(
                problem["errors"]["credits"].is_array(),
                "{credits}: {problem}"
            );
        }
        // Numbers reach the amount as their text, but a number where text belongs is refused as
        // in every other body (it was read as its text: `"salesOrderId": 12` as "12").
        for (field, number) in [("salesOrderId", "12"), ("expiresAt", "20991231")] {
            let mut body = order_body(Some(tenant), json!(1));
            body[field] = json!("NUMBER");
            let body = body.to_string().replace(r#""NUMBER""#, number);
            let response = send_text(&app, Method::POST, &routes::credits(), &body).await;
            let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
            assert!(problem["errors"][field].is_array(), "{field}: {problem}");
        }
        // The other number of the credit bodies, a reservation's timeout, is read alike.
        add(&app, Some(tenant), "10", "abc", FAR).await;
        let operation = format!(r#"{{"credits": 1, "tenantId": "{tenant}", "operationId": 5}}"#);
        let response = send_text(&app, Method::PUT, &routes::credit_reserve(), &operation).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        for (timeout, kind) in [
            ("0060", "invalid-body"),
            (r#"" 60""#, "validation"),
            (r#""0060""#, "validation"),
            (r#""+60""#, "validation"),
        ] {
            let body = format!(
                r#"{{"credits": 1, "tenantId": "{tenant}", "operationId": "t", "timeoutSeconds": {timeout}}}"#
            );
            let response = send_text(&app, Method::PUT, &routes::credit_reserve(), &body).await;
            expect_problem(response, StatusCode::BAD_REQUEST, kind).await;
        }
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(10.0, 0.0, 0.0, 0.0)
        );
    }
);

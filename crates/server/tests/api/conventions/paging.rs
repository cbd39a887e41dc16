//! Cursor and offset paging (docs/api-conventions.md#paging): every row exactly once in every order, cursors
//! stable under inserts and deletes, limits checked.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// Follows cursors until null; returns every row in order.
async fn collect_all(app: &TestApp, path: &str, limit: u32) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let separator = if path.contains('?') { '&' } else { '?' };
        let mut url = format!("{path}{separator}limit={limit}");
        if let Some(cursor) = &cursor {
            url.push_str(&format!("&cursor={cursor}"));
        }
        let page = expect_status(
            app.back_office(Method::GET, &url).send().await.unwrap(),
            StatusCode::OK,
        )
        .await;
        let data = page["data"].as_array().unwrap();
        assert!(data.len() <= limit as usize);
        rows.extend(data.iter().cloned());
        match page["cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return rows,
        }
    }
    panic!("paging did not end");
}

api_test!(cursor_pages_return_every_row_once_in_every_order, |app| {
    let names = [
        "delta", "alpha", "echo", "bravo", "alpha", "charlie", "foxtrot", "golf", "hotel", "india",
        "juliet",
    ];
    for (index, name) in names.iter().enumerate() {
        // Several rows share a creation time, so ties are broken by id.
        if index % 3 == 0 {
            app.clock.advance(chrono::TimeDelta::milliseconds(5));
        }
        app.create_tenant(name).await;
    }
    for (sort, order) in [
        ("Name", "Asc"),
        ("Name", "Desc"),
        ("CreatedAt", "Asc"),
        ("CreatedAt", "Desc"),
    ] {
        let all = collect_all(
            &app,
            &format!("{}?sortBy={sort}&sortOrder={order}", routes::tenants()),
            1000,
        )
        .await;
        assert_eq!(all.len(), names.len() + 1);
        for limit in [1, 3, 4] {
            let paged = collect_all(
                &app,
                &format!("{}?sortBy={sort}&sortOrder={order}", routes::tenants()),
                limit,
            )
            .await;
            assert_eq!(paged, all, "{sort} {order} limit {limit}");
        }
        let key = if sort == "Name" { "name" } else { "createdAt" };
        let keys: Vec<&str> = all.iter().map(|t| t[key].as_str().unwrap()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        if order == "Desc" {
            sorted.reverse();
        }
        assert_eq!(keys, sorted, "{sort} {order}");
    }
});

api_test!(
    cursors_stay_valid_while_rows_are_inserted_and_deleted,
    |app| {
        let tenant = app.tenant_id();
        let mut users = Vec::new();
        for index in 0..12 {
            users.push((
                format!("user-{index:02}"),
                app.create_user(&format!("user-{index:02}"), Some(tenant), "User")
                    .await,
            ));
        }
        let path = format!("{}?tenantId={tenant}&limit=4", routes::users());
        let first = expect_status(
            app.back_office(Method::GET, &path).send().await.unwrap(),
            StatusCode::OK,
        )
        .await;
        let mut seen: Vec<String> = first["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(seen, vec!["Owner", "user-00", "user-01", "user-02"]);
        let cursor = first["cursor"].as_str().unwrap().to_owned();
        // Remove a member already seen and one not yet seen; add members before and after the cursor.
        for (name, id) in [&users[1], &users[8]] {
            let response = app
                .back_office(Method::DELETE, &routes::tenant_member(tenant, id))
                .send()
                .await
                .unwrap();
            expect_status(response, StatusCode::NO_CONTENT).await;
            let _ = name;
        }
        app.create_user("AAA early", Some(tenant), "User").await;
        app.create_user("zzz late", Some(tenant), "User").await;
        let mut cursor = Some(cursor);
        while let Some(current) = cursor {
            let page = expect_status(
                app.back_office(Method::GET, &format!("{path}&cursor={current}"))
                    .send()
                    .await
                    .unwrap(),
                StatusCode::OK,
            )
            .await;
            seen.extend(
                page["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| u["name"].as_str().unwrap().to_owned()),
            );
            cursor = page["cursor"].as_str().map(str::to_owned);
        }
        let unique: BTreeSet<&String> = seen.iter().collect();
        assert_eq!(unique.len(), seen.len(), "no row twice: {seen:?}");
        assert!(
            !seen.contains(&"user-08".to_owned()),
            "a row deleted before it was reached is not returned"
        );
        assert!(
            !seen.contains(&"AAA early".to_owned()),
            "a row inserted before the cursor is not returned"
        );
        assert!(
            seen.contains(&"zzz late".to_owned()),
            "a row inserted after the cursor is returned"
        );
        for index in [0, 2, 3, 4, 5, 6, 7, 9, 10, 11] {
            assert!(
                seen.contains(&format!("user-{index:02}")),
                "user-{index:02} missing: {seen:?}"
            );
        }
    }
);

api_test!(page_limits_and_bad_cursors_are_400, |app| {
    let max = app.config.limits.page_size_max.get();
    expect_status(
        app.back_office(Method::GET, &format!("{}?limit={max}", routes::tenants()))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    for query in [
        format!("limit={}", max + 1),
        "limit=0".to_owned(),
        "limit=-1".to_owned(),
    ] {
        let response = app
            .back_office(Method::GET, &format!("{}?{query}", routes::tenants()))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"]["limit"].is_array(), "{query}: {problem}");
    }
    let response = app
        .back_office(
            Method::GET,
            &format!("{}?cursor=garbage", routes::tenants()),
        )
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-cursor").await;
    app.create_tenant("b").await;
    let page = expect_status(
        app.back_office(Method::GET, &format!("{}?limit=1", routes::tenants()))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    let cursor = page["cursor"].as_str().unwrap();
    // A cursor belongs to its order: replaying it with another sort is refused.
    let response = app
        .back_office(
            Method::GET,
            &format!(
                "{}?limit=1&sortBy=CreatedAt&cursor={cursor}",
                routes::tenants()
            ),
        )
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-cursor").await;
    let response = app
        .back_office(
            Method::GET,
            &format!("{}?limit=1&cursor={cursor}", routes::users()),
        )
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-cursor").await;
});

api_test!(offset_pages_report_the_total_and_accept_any_case, |app| {
    let tenant = app.tenant_id();
    for index in 0..5 {
        app.create_user(&format!("m{index}"), Some(tenant), "User")
            .await;
    }
    let path = routes::tenant_members(tenant);
    let page = expect_status(
        app.back_office(Method::GET, &format!("{path}?Offset=2&Limit=2"))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(page["totalCount"], 6);
    assert_eq!(page["offset"], 2);
    assert_eq!(page["limit"], 2);
    let names: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["m1", "m2"], "Owner sorts first (binary order)");
    let past = expect_status(
        app.back_office(Method::GET, &format!("{path}?offset=50"))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(past["data"], json!([]));
    assert_eq!(past["totalCount"], 6);
});

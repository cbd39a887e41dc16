//! Message lists (docs/features.md#endpoints, docs/api-conventions.md#paging): expiry classes at their exact boundaries, sort
//! keys and orders, the merge of a feature's messages with the global ones, and cursor paging
//! that stays valid under inserts and deletes, on both databases.

use basin::Clock;
use chrono::TimeDelta;
use reqwest::{Method, StatusCode};

use super::messages::{
    admin, create_id, delete_message, get_page, list_ids, message, messages_path, page_ids,
    whole_second_now,
};
use crate::helpers::*;

api_test!(expiry_classes_switch_at_the_exact_second, |app| {
    let now = whole_second_now(&app);
    let id = create_id(
        &app,
        Some("Platform"),
        &message(
            "Warning",
            "window",
            now + TimeDelta::seconds(10),
            now + TimeDelta::seconds(20),
        ),
    )
    .await;
    let list = |expiry: &str| format!("{}?expiry={expiry}", messages_path(Some("Platform")));
    let classes = |pending: bool, active: bool, expired: bool| {
        [
            ("Pending", pending),
            ("NonExpired", active),
            ("Expired", expired),
            ("All", true),
        ]
    };
    for (seconds, expected) in [
        (9, classes(true, false, false)),
        (1, classes(false, true, false)),
        (9, classes(false, true, false)),
        (1, classes(false, false, true)),
    ] {
        app.clock.advance(TimeDelta::seconds(seconds));
        for (expiry, shown) in expected {
            let ids = list_ids(&app, &list(expiry)).await;
            assert_eq!(ids.contains(&id), shown, "{expiry} at +{seconds}s: {ids:?}");
        }
        let default = list_ids(&app, &messages_path(Some("Platform"))).await;
        assert_eq!(
            default,
            list_ids(&app, &list("nonexpired")).await,
            "NonExpired is the default"
        );
    }
});

api_test!(
    lists_sort_by_either_date_in_either_order_with_id_as_tie_breaker,
    |app| {
        let now = whole_second_now(&app);
        let at = |seconds: i64| now + TimeDelta::seconds(seconds);
        let a = create_id(&app, None, &message("Warning", "a", at(-30), at(300))).await;
        let b = create_id(&app, None, &message("Warning", "b", at(-10), at(100))).await;
        let c = create_id(&app, None, &message("Warning", "c", at(-20), at(200))).await;
        let d = create_id(&app, None, &message("Warning", "d", at(-10), at(100))).await;
        let path = |query: &str| format!("{}?{query}", messages_path(None));
        assert_eq!(
            list_ids(&app, &path("")).await,
            [d, b, c, a],
            "StartDate Desc by default"
        );
        assert_eq!(list_ids(&app, &path("sortOrder=Asc")).await, [a, c, b, d]);
        assert_eq!(
            list_ids(&app, &path("sortBy=ExpiringDate")).await,
            [a, c, d, b]
        );
        assert_eq!(
            list_ids(&app, &path("SORTBY=expiringdate&SortOrder=asc")).await,
            [b, d, c, a]
        );
        for bad in [
            "expiry=Soon",
            "sortBy=Title",
            "sortOrder=Up",
            "limit=0",
            "limit=-1",
            "limit=x",
        ] {
            let response = admin(&app, Method::GET, &path(bad)).send().await.unwrap();
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
    }
);

api_test!(
    a_feature_list_merges_its_messages_with_the_global_ones,
    |app| {
        let now = whole_second_now(&app);
        let at = |seconds: i64| now + TimeDelta::seconds(seconds);
        let own = create_id(
            &app,
            Some("Platform"),
            &message("Critical", "own", at(-5), at(100)),
        )
        .await;
        let global = create_id(&app, None, &message("Warning", "global", at(-10), at(100))).await;
        let other = create_id(
            &app,
            Some("Other"),
            &message("Warning", "other", at(-1), at(100)),
        )
        .await;
        assert_eq!(
            list_ids(&app, &messages_path(Some("Platform"))).await,
            [own, global]
        );
        assert_eq!(
            list_ids(&app, &messages_path(Some("Other"))).await,
            [other, global]
        );
        assert_eq!(
            list_ids(&app, &messages_path(None)).await,
            [global],
            "the global list holds only global messages"
        );
        let page = get_page(&app, &messages_path(Some("Platform"))).await;
        assert_eq!(page["data"][0]["featureId"], "Platform");
        assert!(page["data"][1]["featureId"].is_null());
        assert!(page["cursor"].is_null());
    }
);

/// Every id of a list, page by page with `limit`, deleting `delete` and adding one message
/// after the first page.
async fn walk(app: &TestApp, limit: u32, delete: Option<i64>) -> Vec<i64> {
    let base = format!("{}?expiry=All&limit={limit}", messages_path(None));
    let mut seen = Vec::new();
    let mut page = get_page(app, &base).await;
    let mut first = true;
    loop {
        seen.extend(page_ids(&page));
        if first {
            first = false;
            if let Some(id) = delete {
                assert_eq!(
                    delete_message(app, None, id).await.status(),
                    StatusCode::NO_CONTENT
                );
                let now = app.clock.now();
                let start = now - TimeDelta::seconds(1);
                create_id(
                    app,
                    None,
                    &message("Warning", "new", start, now + TimeDelta::hours(1)),
                )
                .await;
            }
        }
        let Some(cursor) = page["cursor"].as_str() else {
            break;
        };
        page = get_page(app, &format!("{base}&cursor={cursor}")).await;
    }
    seen
}

api_test!(
    cursor_pages_cover_every_message_once_under_inserts_and_deletes,
    |app| {
        let now = whole_second_now(&app);
        let mut ids = Vec::new();
        for i in 0..9 {
            // Pairs share a start date, so the id breaks ties across page boundaries.
            let start = now - TimeDelta::seconds(100 - (i / 2));
            ids.push(
                create_id(
                    &app,
                    None,
                    &message("Warning", "m", start, now + TimeDelta::hours(1)),
                )
                .await,
            );
        }
        let all = walk(&app, 2, None).await;
        assert_eq!(all.len(), 9);
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 9, "no message twice: {all:?}");
        // Delete a message of a later page while paging, and add one that sorts before everything:
        // the rest of the walk neither skips nor repeats what was there.
        let victim = all[6];
        let walked = walk(&app, 2, Some(victim)).await;
        let expected: Vec<i64> = all.iter().copied().filter(|id| *id != victim).collect();
        assert_eq!(walked, expected);
    }
);

api_test!(cursors_belong_to_their_list_filter_and_order, |app| {
    let now = whole_second_now(&app);
    for _ in 0..3 {
        create_id(
            &app,
            None,
            &message(
                "Warning",
                "m",
                now - TimeDelta::seconds(5),
                now + TimeDelta::hours(1),
            ),
        )
        .await;
    }
    let page = get_page(&app, &format!("{}?limit=1", messages_path(None))).await;
    let cursor = page["cursor"].as_str().expect("a next page").to_owned();
    for other in [
        format!(
            "{}?limit=1&sortOrder=Asc&cursor={cursor}",
            messages_path(None)
        ),
        format!(
            "{}?limit=1&sortBy=ExpiringDate&cursor={cursor}",
            messages_path(None)
        ),
        format!("{}?limit=1&expiry=All&cursor={cursor}", messages_path(None)),
        format!(
            "{}?limit=1&cursor={cursor}",
            messages_path(Some("Platform"))
        ),
        format!("{}?limit=1&cursor=not-a-cursor", messages_path(None)),
    ] {
        let response = admin(&app, Method::GET, &other).send().await.unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "invalid-cursor").await;
    }
    let next = get_page(
        &app,
        &format!("{}?limit=1&cursor={cursor}", messages_path(None)),
    )
    .await;
    assert_eq!(page_ids(&next).len(), 1);
});

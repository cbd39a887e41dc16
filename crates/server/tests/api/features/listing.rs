//! Message lists (docs/features.md#endpoints, docs/api-conventions.md#paging): expiry classes at their exact boundaries, sort
//! keys and orders, the merge of a feature's messages with the global ones, and cursor paging
//! that stays valid under inserts and deletes, on both databases.

use basin::Clock;
use chrono::TimeDelta;
use reqwest::StatusCode;

use super::{create_id, list_ids, message, messages, whole_second_now};
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
    let list = |expiry: &str| format!("expiry={expiry}");
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
            let ids = list_ids(&app, Some("Platform"), &list(expiry)).await;
            assert_eq!(ids.contains(&id), shown, "{expiry} at +{seconds}s: {ids:?}");
        }
        let default = list_ids(&app, Some("Platform"), "").await;
        assert_eq!(
            default,
            list_ids(&app, Some("Platform"), &list("nonexpired")).await,
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
        assert_eq!(
            list_ids(&app, None, "").await,
            [d, b, c, a],
            "StartDate Desc by default"
        );
        assert_eq!(list_ids(&app, None, "sortOrder=Asc").await, [a, c, b, d]);
        assert_eq!(
            list_ids(&app, None, "sortBy=ExpiringDate").await,
            [a, c, d, b]
        );
        assert_eq!(
            list_ids(&app, None, "SORTBY=expiringdate&SortOrder=asc").await,
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
            let response = messages(&app, None).list(bad).await;
            response.problem(StatusCode::BAD_REQUEST, "validation");
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
        assert_eq!(list_ids(&app, Some("Platform"), "").await, [own, global]);
        assert_eq!(list_ids(&app, Some("Other"), "").await, [other, global]);
        assert_eq!(
            list_ids(&app, None, "").await,
            [global],
            "the global list holds only global messages"
        );
        let page = messages(&app, Some("Platform"))
            .list("")
            .await
            .expect(StatusCode::OK);
        assert_eq!(page["data"][0]["featureId"], "Platform");
        assert!(page["data"][1]["featureId"].is_null());
        assert!(page["cursor"].is_null());
    }
);

/// Every id of a list, page by page with `limit`, deleting `delete` and adding one message
/// after the first page.
async fn walk(app: &TestApp, limit: u32, delete: Option<i64>) -> Vec<i64> {
    let query = format!("expiry=All&limit={limit}");
    let mut seen = Vec::new();
    let mut page = messages(app, None).list(&query).await.ok();
    let mut first = true;
    loop {
        seen.extend(page.ids());
        if first {
            first = false;
            if let Some(id) = delete {
                messages(app, None).delete(id).await.no_content();
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
        let Some(cursor) = page.cursor else {
            break;
        };
        page = messages(app, None)
            .list(&format!("{query}&cursor={cursor}"))
            .await
            .ok();
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
    let page = messages(&app, None).list("limit=1").await.ok();
    let cursor = page.cursor.expect("a next page");
    for (feature, query) in [
        (None, format!("limit=1&sortOrder=Asc&cursor={cursor}")),
        (None, format!("limit=1&sortBy=ExpiringDate&cursor={cursor}")),
        (None, format!("limit=1&expiry=All&cursor={cursor}")),
        (Some("Platform"), format!("limit=1&cursor={cursor}")),
        (None, "limit=1&cursor=not-a-cursor".to_owned()),
    ] {
        let response = messages(&app, feature).list(&query).await;
        response.problem(StatusCode::BAD_REQUEST, "invalid-cursor");
    }
    let next = messages(&app, None)
        .list(&format!("limit=1&cursor={cursor}"))
        .await
        .ok();
    assert_eq!(next.ids().len(), 1);
});

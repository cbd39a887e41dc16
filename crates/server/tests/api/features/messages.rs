//! Feature status messages (docs/features.md#feature-status-messages): create, read, change
//! and delete on both endpoint families, rule 1 (docs/features.md#rule-1), every field's
//! validation, timestamps, the limits counted in code points, control characters and the title
//! and body sanitizing.

use chrono::TimeDelta;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::*;
use crate::helpers::*;

/// Creates a message with `title` and `body` and returns what was stored.
async fn stored(app: &TestApp, title: &str, body: &str) -> Value {
    let mut request = active_message(app, "Informational", title);
    request["body"] = body.into();
    create_message(app, Some("Platform"), &request).await
}

// ---- create, read, change, delete ----

async fn check_round_trip(app: &TestApp, feature: Option<&str>) {
    let start = whole_second_now(app) + TimeDelta::hours(1);
    let end = start + TimeDelta::days(2);
    let mut body = message("critical", "Outage", start, end);
    body["body"] = "<p>We are on it.</p>".into();
    let created = create_message(app, feature, &body).await;
    let id = created["id"].as_i64().unwrap();
    assert_eq!(created["featureId"], json!(feature), "{created}");
    assert_eq!(created["type"], "Critical");
    assert_eq!(created["title"], "Outage");
    assert_eq!(created["body"], "<p>We are on it.</p>");
    assert_eq!(created["startDate"], wire(start));
    assert_eq!(created["expiringDate"], wire(end));
    assert_eq!(created["createdAt"], wire(app.clock.now()));
    assert_eq!(created["createdBy"], app.owner_id().to_string());
    assert_eq!(created["updatedAt"], wire(app.clock.now()));
    assert_eq!(created["updatedBy"], app.owner_id().to_string());
    assert_eq!(find_message(app, feature, id).await, Some(created.clone()));

    app.clock.advance(TimeDelta::minutes(5));
    let response = messages(app, feature)
        .patch(id, &json!({"title": "Outage over"}))
        .await;
    let patched = response.expect(StatusCode::OK);
    assert_eq!(patched["title"], "Outage over");
    assert_eq!(patched["updatedAt"], wire(app.clock.now()));
    for kept in [
        "id",
        "featureId",
        "type",
        "body",
        "startDate",
        "expiringDate",
        "createdAt",
    ] {
        assert_eq!(patched[kept], created[kept], "{kept} changed: {patched}");
    }
    assert_eq!(find_message(app, feature, id).await, Some(patched));

    let deleted = messages(app, feature).delete(id).await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert!(deleted.text().is_empty(), "204 has no body");
    assert_eq!(find_message(app, feature, id).await, None);
    let again = messages(app, feature).delete(id).await;
    again.problem(StatusCode::NOT_FOUND, "not-found");
    let patch = messages(app, feature)
        .patch(id, &json!({"title": "x"}))
        .await;
    patch.problem(StatusCode::NOT_FOUND, "not-found");
}

api_test!(
    feature_messages_are_created_read_changed_and_deleted,
    |app| {
        check_round_trip(&app, Some("Platform")).await;
    }
);

api_test!(
    global_messages_are_created_read_changed_and_deleted,
    |app| {
        check_round_trip(&app, None).await;
    }
);

api_test!(ids_are_never_reused_after_a_delete, |app| {
    let body = active_message(&app, "Warning", "first");
    let first = create_id(&app, Some("Platform"), &body).await;
    let second = create_id(&app, None, &body).await;
    assert!(second > first);
    messages(&app, None).delete(second).await;
    let third = create_id(&app, Some("Platform"), &body).await;
    assert!(third > second, "{third} reuses an id");
});

api_test!(
    feature_id_in_the_body_is_ignored_on_create_and_patch,
    |app| {
        let mut body = active_message(&app, "Warning", "moved?");
        body["featureId"] = "Other".into();
        body["id"] = 999_999.into();
        let created = create_message(&app, Some("Platform"), &body).await;
        assert_eq!(created["featureId"], "Platform");
        assert_ne!(created["id"].as_i64().unwrap(), 999_999);
        let id = created["id"].as_i64().unwrap();
        let global = create_message(&app, None, &body).await;
        assert_eq!(global["featureId"], Value::Null, "{global}");
        let global_id = global["id"].as_i64().unwrap();

        let patch = json!({"featureId": "Other", "id": 12345, "title": "still here"});
        let patched = messages(&app, Some("Platform"))
            .patch(id, &patch)
            .await
            .expect(StatusCode::OK);
        assert_eq!(patched["featureId"], "Platform");
        assert_eq!(patched["id"].as_i64().unwrap(), id);
        let patched = messages(&app, None)
            .patch(global_id, &patch)
            .await
            .expect(StatusCode::OK);
        assert_eq!(patched["featureId"], Value::Null);
        assert_eq!(patched["id"].as_i64().unwrap(), global_id);

        let platform = list_ids(&app, Some("Platform"), "expiry=All").await;
        let other = list_ids(&app, Some("Other"), "expiry=All").await;
        let globals = list_ids(&app, None, "expiry=All").await;
        assert!(platform.contains(&id) && platform.contains(&global_id));
        assert_eq!(other, vec![global_id], "nothing moved to Other");
        assert_eq!(globals, vec![global_id]);
    }
);

// ---- docs/features.md#rule-1 ----

api_test!(
    rule_1_feature_endpoints_answer_404_for_other_messages,
    |app| {
        let body = active_message(&app, "Warning", "original");
        let own = create_id(&app, Some("Platform"), &body).await;
        let other = create_id(&app, Some("Other"), &body).await;
        let global = create_id(&app, None, &body).await;
        for id in [other, global, global + 1000] {
            let patch = messages(&app, Some("Platform"))
                .patch(id, &json!({"title": "hijacked"}))
                .await;
            patch.problem(StatusCode::NOT_FOUND, "not-found");
            let delete = messages(&app, Some("Platform")).delete(id).await;
            delete.problem(StatusCode::NOT_FOUND, "not-found");
        }
        // The messages of another feature cannot be reached through a third one either.
        let patch = messages(&app, Some("Third"))
            .patch(own, &json!({"title": "hijacked"}))
            .await;
        patch.problem(StatusCode::NOT_FOUND, "not-found");
        for (feature, id) in [
            (Some("Platform"), own),
            (Some("Other"), other),
            (None, global),
        ] {
            let row = find_message(&app, feature, id).await.unwrap();
            assert_eq!(row["title"], "original", "{row}");
        }
    }
);

api_test!(
    rule_1_global_endpoints_answer_404_for_feature_messages,
    |app| {
        let body = active_message(&app, "Warning", "original");
        let feature = create_id(&app, Some("Platform"), &body).await;
        let global = create_id(&app, None, &body).await;
        for id in [feature, global + 1000] {
            let patch = messages(&app, None)
                .patch(id, &json!({"title": "hijacked"}))
                .await;
            patch.problem(StatusCode::NOT_FOUND, "not-found");
            let delete = messages(&app, None).delete(id).await;
            delete.problem(StatusCode::NOT_FOUND, "not-found");
        }
        let row = find_message(&app, Some("Platform"), feature).await.unwrap();
        assert_eq!(row["title"], "original");
    }
);

api_test!(a_message_id_that_is_not_an_integer_is_invalid_path, |app| {
    for (feature, id) in [
        (Some("Platform"), "abc"),
        (Some("Platform"), "1.5"),
        (None, "abc"),
        (None, "-x"),
    ] {
        let messages = messages(&app, feature);
        let patch = messages.patch(id, &json!({"title": "x"})).await;
        patch.problem(StatusCode::BAD_REQUEST, "invalid-path");
        let delete = messages.delete(id).await;
        delete.problem(StatusCode::BAD_REQUEST, "invalid-path");
    }
});

// ---- feature ids ----

api_test!(
    uuid_feature_ids_are_compared_lower_case_and_others_exactly,
    |app| {
        let upper = "6F9619FF-8B86-D011-B42D-00CFFC0F1C34";
        let lower = "6f9619ff-8b86-d011-b42d-00cffc0f1c34";
        let body = active_message(&app, "Warning", "uuid feature");
        let created = create_message(&app, Some(upper), &body).await;
        assert_eq!(
            created["featureId"], lower,
            "uuids are kept lower-case: {created}"
        );
        let id = created["id"].as_i64().unwrap();
        let listed = list_ids(&app, Some(lower), "").await;
        assert_eq!(listed, vec![id]);
        let patched = messages(&app, Some(lower))
            .patch(id, &json!({"title": "found"}))
            .await;
        patched.expect(StatusCode::OK);

        let platform = create_id(&app, Some("Platform"), &body).await;
        assert_eq!(
            list_ids(&app, Some("platform"), "").await,
            Vec::<i64>::new()
        );
        let patch = messages(&app, Some("platform"))
            .patch(platform, &json!({"title": "x"}))
            .await;
        patch.problem(StatusCode::NOT_FOUND, "not-found");
        let response = messages(&app, Some(&upper.to_lowercase())).delete(id).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
    }
);

api_test!(
    feature_ids_of_1_to_128_characters_without_whitespace_are_accepted,
    |app| {
        let body = active_message(&app, "Warning", "id edge");
        let longest = "f".repeat(128);
        for feature in ["x", longest.as_str(), "my-app", "a.b_c~d", "%C3%A9t%C3%A9"] {
            let created = create_message(&app, Some(feature), &body).await;
            assert!(created["featureId"].is_string(), "{feature}: {created}");
        }
        let too_long = "f".repeat(129);
        for feature in [
            too_long.as_str(),
            "a%20b",
            "a%09b",
            "a%00b",
            "a%0Ab",
            "%C2%A0",
            "tenant",
            "banner",
        ] {
            let operator = app.feature_operator();
            let messages = operator.messages(Some(feature));
            let list = messages.list("").await;
            list.problem(StatusCode::BAD_REQUEST, "invalid-path");
            let banner = operator.banner(feature, None).await;
            banner.problem(StatusCode::BAD_REQUEST, "invalid-path");
            let patch = messages.patch(1, &json!({"title": "x"})).await;
            patch.problem(StatusCode::BAD_REQUEST, "invalid-path");
            let create = messages.create(&body).await;
            create.problem(StatusCode::BAD_REQUEST, "invalid-path");
        }
    }
);

// ---- validation ----

api_test!(create_names_each_missing_required_field, |app| {
    let full = active_message(&app, "Warning", "complete");
    for field in ["type", "title", "startDate", "expiringDate"] {
        for value in [None, Some(Value::Null)] {
            let mut body = full.clone();
            match &value {
                None => {
                    body.as_object_mut().unwrap().remove(field);
                }
                Some(null) => body[field] = null.clone(),
            }
            let response = messages(&app, Some("Platform")).create(&body).await;
            expect_field_error(response, field);
            let response = messages(&app, None).create(&body).await;
            expect_field_error(response, field);
        }
    }
    assert_eq!(
        list_ids(&app, Some("Platform"), "expiry=All").await,
        Vec::<i64>::new()
    );
    let mut no_body = full.clone();
    no_body.as_object_mut().unwrap().remove("body");
    let created = create_message(&app, Some("Platform"), &no_body).await;
    assert_eq!(created["body"], "", "body defaults to empty");
    no_body["body"] = Value::Null;
    let created = create_message(&app, None, &no_body).await;
    assert_eq!(created["body"], "");
});

api_test!(create_rejects_each_malformed_field, |app| {
    let full = active_message(&app, "Warning", "complete");
    let cases: [(&str, Value); 14] = [
        ("type", json!("Urgent")),
        ("type", json!("")),
        ("type", json!(1)),
        ("type", json!(["Critical"])),
        ("title", json!(5)),
        ("title", json!({"text": "x"})),
        ("body", json!(7)),
        ("body", json!(["x"])),
        ("startDate", json!("tomorrow")),
        ("startDate", json!("2026-13-01T00:00:00Z")),
        ("startDate", json!(1_764_000_000)),
        ("expiringDate", json!("2026-02-30T00:00:00")),
        ("expiringDate", json!("")),
        ("expiringDate", json!(true)),
    ];
    for (field, value) in cases {
        let mut body = full.clone();
        body[field] = value.clone();
        let response = messages(&app, Some("Platform")).create(&body).await;
        let problem = expect_field_error(response, field);
        assert!(problem["detail"].is_string(), "{field}={value}: {problem}");
    }
    assert_eq!(
        list_ids(&app, Some("Platform"), "expiry=All").await,
        Vec::<i64>::new()
    );
});

api_test!(type_names_are_matched_without_regard_to_case, |app| {
    for (sent, stored) in [
        ("critical", "Critical"),
        ("WARNING", "Warning"),
        ("informational", "Informational"),
        ("InFoRmAtIoNaL", "Informational"),
    ] {
        let body = active_message(&app, sent, "case");
        let created = create_message(&app, Some("Platform"), &body).await;
        assert_eq!(created["type"], stored);
    }
});

api_test!(a_window_that_ends_at_or_before_its_start_is_400, |app| {
    let start = whole_second_now(&app);
    for end in [
        start,
        start - TimeDelta::seconds(1),
        start - TimeDelta::days(3),
    ] {
        let body = message("Warning", "never shown", start, end);
        let response = messages(&app, Some("Platform")).create(&body).await;
        response.problem(StatusCode::BAD_REQUEST, "validation");
        let response = messages(&app, None).create(&body).await;
        response.problem(StatusCode::BAD_REQUEST, "validation");
    }
    // Equal instants written in different zones are still equal.
    let mut body = message("Warning", "never shown", start, start);
    body["expiringDate"] = start
        .with_timezone(&chrono::FixedOffset::east_opt(2 * 3600).unwrap())
        .to_rfc3339()
        .into();
    let response = messages(&app, Some("Platform")).create(&body).await;
    response.problem(StatusCode::BAD_REQUEST, "validation");
    // One microsecond is a window.
    let mut body = message("Warning", "brief", start, start);
    body["expiringDate"] = format!("{}.000001Z", start.format("%Y-%m-%dT%H:%M:%S")).into();
    let created = create_message(&app, Some("Platform"), &body).await;
    assert_eq!(
        created["expiringDate"],
        wire(start + TimeDelta::microseconds(1))
    );
});

api_test!(
    timestamps_with_z_offset_or_no_zone_come_back_in_utc_wire_form,
    |app| {
        let cases = [
            ("2030-03-01T08:00:00Z", "2030-03-01T08:00:00.0000000"),
            ("2030-03-01T10:00:00+02:00", "2030-03-01T08:00:00.0000000"),
            ("2030-03-01T02:30:00-05:30", "2030-03-01T08:00:00.0000000"),
            ("2030-03-01T08:00:00", "2030-03-01T08:00:00.0000000"),
            ("2030-03-01T08:00:00.5+01:00", "2030-03-01T07:00:00.5000000"),
            ("2030-03-01T08:00:00.123456Z", "2030-03-01T08:00:00.1234560"),
            ("2030-03-01T08:00:00.1234560", "2030-03-01T08:00:00.1234560"),
            ("2030-03-01T00:30:00+01:00", "2030-02-28T23:30:00.0000000"),
        ];
        for (sent, expected) in cases {
            let body = json!({
                "type": "Informational",
                "title": "zones",
                "startDate": sent,
                "expiringDate": "2031-01-01T00:00:00Z",
            });
            let created = create_message(&app, Some("Platform"), &body).await;
            assert_eq!(created["startDate"], expected, "startDate {sent}");
            let body = json!({
                "type": "Informational",
                "title": "zones",
                "startDate": "2029-01-01T00:00:00",
                "expiringDate": sent,
            });
            let created = create_message(&app, None, &body).await;
            assert_eq!(created["expiringDate"], expected, "expiringDate {sent}");
            let id = created["id"].as_i64().unwrap();
            let listed = find_message(&app, None, id).await.unwrap();
            assert_eq!(listed["expiringDate"], expected, "listed {sent}");
        }
    }
);

// ---- PATCH ----

api_test!(patch_changes_only_the_fields_it_names, |app| {
    let start = whole_second_now(&app);
    let end = start + TimeDelta::days(1);
    let mut body = message("Warning", "Maintenance", start, end);
    body["body"] = "<b>Tonight</b>".into();
    let created = create_message(&app, Some("Platform"), &body).await;
    let id = created["id"].as_i64().unwrap();
    let changes = [
        json!({"type": "critical"}),
        json!({"body": "<i>Now</i>"}),
        json!({"startDate": zulu(start + TimeDelta::hours(1))}),
        json!({"expiringDate": zulu(end + TimeDelta::hours(1))}),
        json!({"title": null, "body": null, "type": null, "startDate": null}),
        json!({}),
    ];
    let mut expected = created.clone();
    for change in changes {
        let response = messages(&app, Some("Platform")).patch(id, &change).await;
        let patched = response.expect(StatusCode::OK);
        for (field, value) in change.as_object().unwrap() {
            if !value.is_null() {
                expected[field] = patched[field].clone();
            }
        }
        expected["updatedAt"] = patched["updatedAt"].clone();
        assert_eq!(patched, expected, "after {change}");
    }
    assert_eq!(expected["type"], "Critical");
    assert_eq!(expected["body"], "<i>Now</i>");
    assert_eq!(expected["title"], "Maintenance");
    assert_eq!(expected["startDate"], wire(start + TimeDelta::hours(1)));
    assert_eq!(expected["expiringDate"], wire(end + TimeDelta::hours(1)));
    assert_eq!(
        find_message(&app, Some("Platform"), id).await,
        Some(expected)
    );
});

api_test!(
    patch_checks_the_window_as_it_will_be_after_the_change,
    |app| {
        let start = whole_second_now(&app);
        let end = start + TimeDelta::hours(2);
        let id = create_id(&app, None, &message("Warning", "w", start, end)).await;
        for change in [
            json!({"expiringDate": zulu(start)}),
            json!({"expiringDate": zulu(start - TimeDelta::hours(1))}),
            json!({"startDate": zulu(end)}),
            json!({"startDate": zulu(end + TimeDelta::hours(1))}),
            json!({"startDate": zulu(end), "expiringDate": zulu(start)}),
        ] {
            let response = messages(&app, None).patch(id, &change).await;
            response.problem(StatusCode::BAD_REQUEST, "validation");
        }
        // Both ends moved at once past the old end: valid as a whole.
        let later = end + TimeDelta::days(1);
        let change =
            json!({"startDate": zulu(later), "expiringDate": zulu(later + TimeDelta::hours(1))});
        let patched = messages(&app, None)
            .patch(id, &change)
            .await
            .expect(StatusCode::OK);
        assert_eq!(patched["startDate"], wire(later));
        assert_eq!(patched["expiringDate"], wire(later + TimeDelta::hours(1)));
    }
);

api_test!(patch_validates_each_field_it_names, |app| {
    let id = create_id(
        &app,
        Some("Platform"),
        &active_message(&app, "Warning", "kept"),
    )
    .await;
    let long_title = "t".repeat(256);
    let long_body = "b".repeat(4001);
    let cases = [
        ("type", json!({"type": "Severe"})),
        ("type", json!({"type": 3})),
        ("title", json!({"title": 1})),
        ("title", json!({"title": long_title})),
        ("title", json!({"title": "<b></b>"})),
        ("title", json!({"title": "   "})),
        ("body", json!({"body": long_body})),
        ("startDate", json!({"startDate": "soon"})),
        (
            "expiringDate",
            json!({"expiringDate": "2030-01-01T25:00:00Z"}),
        ),
    ];
    for (field, change) in cases {
        let response = messages(&app, Some("Platform")).patch(id, &change).await;
        expect_field_error(response, field);
    }
    let row = find_message(&app, Some("Platform"), id).await.unwrap();
    assert_eq!(row["title"], "kept");
    assert_eq!(row["type"], "Warning");
});

api_test!(patch_sanitizes_title_and_body_like_create, |app| {
    let id = create_id(&app, None, &active_message(&app, "Warning", "plain")).await;
    let change = json!({
        "title": "<script>alert(1)</script><b>New</b> title",
        "body": "<p onclick=\"x()\">ok</p><script>alert(1)</script>",
    });
    let patched = messages(&app, None)
        .patch(id, &change)
        .await
        .expect(StatusCode::OK);
    assert_eq!(patched["title"], "New title");
    assert_eq!(patched["body"], "<p>ok</p>");
});

// ---- limits, counted in code points of the text as sent ----

api_test!(
    title_is_limited_to_255_code_points_multi_byte_included,
    |app| {
        for unit in ["a", "é", "漢", "😀"] {
            let title = unit.repeat(255);
            let created = stored(&app, &title, "").await;
            assert_eq!(
                created["title"].as_str().unwrap().chars().count(),
                255,
                "{unit}"
            );
            assert_eq!(created["title"], title);
            let body = active_message(&app, "Warning", &unit.repeat(256));
            let response = messages(&app, Some("Platform")).create(&body).await;
            let problem = expect_field_error(response, "title");
            assert!(
                problem["detail"].as_str().unwrap().contains("256"),
                "the count is in the message: {problem}"
            );
        }
        // A letter with a combining accent is two code points: 128 of them are 256.
        let combining = "e\u{301}".repeat(128);
        let response = messages(&app, None)
            .create(&active_message(&app, "Warning", &combining))
            .await;
        expect_field_error(response, "title");
        // Markup counts as sent: 250 letters wrapped in <b></b> are 257 characters.
        let wrapped = format!("<b>{}</b>", "x".repeat(250));
        let response = messages(&app, None)
            .create(&active_message(&app, "Warning", &wrapped))
            .await;
        expect_field_error(response, "title");
        let wrapped = format!("<b>{}</b>", "x".repeat(248));
        assert_eq!(stored(&app, &wrapped, "").await["title"], "x".repeat(248));
    }
);

api_test!(
    body_is_limited_to_4000_code_points_multi_byte_included,
    |app| {
        for unit in ["a", "ß", "€", "🦀"] {
            let body = unit.repeat(4000);
            let created = stored(&app, "limit", &body).await;
            assert_eq!(created["body"], body, "{unit}");
            let mut request = active_message(&app, "Warning", "limit");
            request["body"] = unit.repeat(4001).into();
            let response = messages(&app, Some("Platform")).create(&request).await;
            let problem = expect_field_error(response, "body");
            assert!(
                problem["detail"].as_str().unwrap().contains("4001"),
                "the count is in the message: {problem}"
            );
        }
        // Counted before sanitizing: 3993 letters in <p></p> are 4000 as sent, accepted; one more
        // letter is refused though the stored text would be shorter.
        let body = format!("<p>{}</p>", "x".repeat(3993));
        assert_eq!(stored(&app, "limit", &body).await["body"], body);
        let mut request = active_message(&app, "Warning", "limit");
        request["body"] = format!("<p>{}</p>", "x".repeat(3994)).into();
        let response = messages(&app, None).create(&request).await;
        expect_field_error(response, "body");
        // A body that grows by sanitizing (each link gains rel) is stored grown.
        let link = "<a href=\"https://e.x/\">x</a>";
        let body = link.repeat(4000 / link.chars().count());
        let created = stored(&app, "grown", &body).await;
        let grown = created["body"].as_str().unwrap();
        assert!(
            grown.chars().count() > 4000,
            "stored as sanitized, beyond 4000: {grown}"
        );
        assert_eq!(
            grown.matches("rel=\"noopener noreferrer\"").count(),
            4000 / link.chars().count()
        );
    }
);

// ---- control characters and the title's plain text ----

api_test!(
    nul_is_refused_and_other_control_characters_are_removed,
    |app| {
        // NUL anywhere in a body is 400 naming the field, as everywhere in Basin.
        for (title, body, field) in [("a\u{0}b", "x", "title"), ("ok", "x\u{0}y", "body")] {
            let mut request = active_message(&app, "Warning", title);
            request["body"] = body.into();
            let response = messages(&app, None).create(&request).await;
            expect_field_error(response, field);
        }
        let created = stored(&app, "a\u{1}b\u{1f}c\u{7}d\u{7f}e\u{85}", "x\u{8}y\u{b}z!").await;
        assert_eq!(created["title"], "abcde");
        assert_eq!(created["body"], "xyz!");
        // Tab, line feed and carriage return stay in a body; in a title they become spaces.
        let created = stored(&app, "\t one\ttwo\nthree \n", "a\tb\nc\r\nd").await;
        assert_eq!(created["title"], "one two three");
        let body = created["body"].as_str().unwrap();
        assert!(
            body.starts_with("a\tb\nc") && body.ends_with('d'),
            "{body:?}"
        );
        // A control character inside a tag name no longer hides it: the markup is removed.
        let created = stored(
            &app,
            "<scr\u{1}ipt>alert(1)</script>Hi",
            "<scr\u{1}ipt>alert(1)</script>",
        )
        .await;
        assert_eq!(created["title"], "Hi");
        assert_eq!(created["body"], "");
        for title in ["\u{1}\u{2}", " \t\n ", "", "<b></b>", "<script>x</script>"] {
            let response = messages(&app, None)
                .create(&active_message(&app, "Warning", title))
                .await;
            expect_field_error(response, "title");
        }
    }
);

api_test!(
    markup_is_stripped_from_titles_until_nothing_changes,
    |app| {
        let cases = [
            ("<b>Bold</b> news", "Bold news"),
            ("<script>alert(1)</script>Hi", "Hi"),
            ("<style>body{display:none}</style>Hi", "Hi"),
            ("<a href=\"https://x.test\">link</a> text", "link text"),
            ("<img src=x onerror=alert(1)>Pic", "Pic"),
            ("Tom &amp; Jerry", "Tom & Jerry"),
            ("&lt;b&gt;x&lt;/b&gt;", "x"),
            ("&amp;lt;i&amp;gt;deep&amp;lt;/i&amp;gt;", "deep"),
            ("&lt;script&gt;alert(1)&lt;/script&gt;Hi", "Hi"),
            ("caf&eacute; &#169; &#x263A;", "café © ☺"),
            ("a < b", "a < b"),
            ("<!-- note -->Visible", "Visible"),
            ("<div><span>a</span>b</div>c", "abc"),
            ("  <p> Padded </p>  ", "Padded"),
        ];
        for (sent, expected) in cases {
            let created = stored(&app, sent, "").await;
            assert_eq!(created["title"], expected, "title {sent:?}");
        }
    }
);

// ---- body sanitizing (a few cases; the hostile corpus is its own suite) ----

/// (sent, stored) pairs of bodies.
const BODIES: [(&str, &str); 22] = [
    ("<b>x</b><script>alert(1)</script>", "<b>x</b>"),
    ("<B>x</B>", "<b>x</b>"),
    ("a<br/>b<BR>c", "a<br>b<br>c"),
    (
        "<ul><li>one</li><li>two</li></ul>",
        "<ul><li>one</li><li>two</li></ul>",
    ),
    (
        "<ol><li><em>e</em><strong>s</strong><u>u</u><i>i</i></li></ol>",
        "<ol><li><em>e</em><strong>s</strong><u>u</u><i>i</i></li></ol>",
    ),
    ("<span style=\"color:red\">x</span>", "x"),
    (
        "<p class=\"c\" onmouseover=\"x()\" id=\"p\">t</p>",
        "<p>t</p>",
    ),
    ("<img src=x onerror=alert(1)>", ""),
    ("<svg><script>alert(1)</script></svg>ok", "ok"),
    (
        "<iframe src=\"https://x.test\">inner</iframe>after",
        "after",
    ),
    (
        "<style>p{}</style><template>t</template><textarea>a</textarea>z",
        "z",
    ),
    ("<!-- comment -->x", "x"),
    ("AT&T", "AT&amp;T"),
    (
        "<a href=\"https://x.test/a\" onclick=\"x()\" target=\"_blank\">x</a>",
        "<a href=\"https://x.test/a\" rel=\"noopener noreferrer\">x</a>",
    ),
    (
        "<a href=\"mailto:ops@x.test\">mail</a>",
        "<a href=\"mailto:ops@x.test\" rel=\"noopener noreferrer\">mail</a>",
    ),
    (
        "<a href=\"https://x.test\" rel=\"opener\">x</a>",
        "<a href=\"https://x.test\" rel=\"noopener noreferrer\">x</a>",
    ),
    (
        "<a href=\"javascript:alert(1)\">x</a>",
        "<a rel=\"noopener noreferrer\">x</a>",
    ),
    (
        "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
        "<a rel=\"noopener noreferrer\">x</a>",
    ),
    (
        "<a href=\"java&#x09;script:alert(1)\">x</a>",
        "<a rel=\"noopener noreferrer\">x</a>",
    ),
    (
        "<a href=\"&#106;avascript:alert(1)\">x</a>",
        "<a rel=\"noopener noreferrer\">x</a>",
    ),
    (
        "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
        "<a rel=\"noopener noreferrer\">x</a>",
    ),
    (
        "<a href=\"/relative\">x</a>",
        "<a rel=\"noopener noreferrer\">x</a>",
    ),
];

api_test!(bodies_keep_allowed_markup_and_lose_everything_else, |app| {
    for (sent, expected) in BODIES {
        let created = stored(&app, "sanitize", sent).await;
        assert_eq!(created["body"], expected, "body {sent:?}");
        let listed = find_message(&app, Some("Platform"), created["id"].as_i64().unwrap()).await;
        assert_eq!(
            listed.unwrap()["body"],
            expected,
            "what is stored is what is read"
        );
    }
});

api_test!(
    links_with_unsafe_schemes_lose_their_href_however_written,
    |app| {
        for href in [
            " javascript:alert(1)",
            "\u{1}javascript:alert(1)",
            "java\nscript:alert(1)",
            "jav&#x0A;ascript:alert(1)",
            "vbscript:msgbox(1)",
            "VBScript:msgbox(1)",
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "http://plain.test/",
            "//x.test/",
            "ftp://x.test/",
            "&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;:alert(1)",
        ] {
            let created = stored(&app, "href", &format!("<a href=\"{href}\">x</a>")).await;
            assert_eq!(
                created["body"], "<a rel=\"noopener noreferrer\">x</a>",
                "href {href:?}"
            );
        }
    }
);

api_test!(feature_message_endpoints_take_api_version_1_to_4, |app| {
    let id = create_id(&app, None, &active_message(&app, "Warning", "versions")).await;
    for version in ["1", "1.0", "2", "3", "4"] {
        let operator = app.feature_operator().with_api_version(version);
        let list = operator.messages(None).list("").await;
        assert!(list.headers().contains_key("api-supported-versions"));
        assert_eq!(list.ok().ids(), vec![id]);
    }
    let operator = app.feature_operator().with_api_version("5");
    let list = operator.messages(None).list("").await;
    list.problem(StatusCode::BAD_REQUEST, "unsupported-api-version");
    let banner = operator.banner("Platform", None).await;
    banner.problem(StatusCode::BAD_REQUEST, "unsupported-api-version");
});

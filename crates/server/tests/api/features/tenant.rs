//! Tenant feature availability (docs/features.md#tenant-feature-availability) and BackOffice's
//! catalogue and licenses (docs/features.md), through HTTP on both databases.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{As, Reply, TestApp, expect_problem, routes};

fn feature(id: &str, name: &str, kind: &str) -> Value {
    json!({"id": id, "name": name, "url": format!("https://{id}.example.com"),
           "responseUrl": format!("https://{id}.example.com/signin"), "type": kind})
}

/// Adds a feature to the catalogue as BackOffice (201) and returns it.
async fn add_feature(app: &TestApp, id: &str, name: &str, kind: &str) -> Value {
    let added = app.features().add(&feature(id, name, kind)).await;
    added.expect(StatusCode::CREATED)
}

/// Grants (or changes) the license of `id` to `tenant` as BackOffice.
async fn license(app: &TestApp, id: &str, tenant: Uuid, body: Option<Value>) -> Reply {
    app.features().license(id, tenant, body.as_ref()).await
}

/// Switches `id` for `tenant` as the bearer of API key `key`, with `svc-project-id: header`.
async fn switch(
    app: &TestApp,
    key: &str,
    id: &str,
    tenant: Uuid,
    header: Option<&str>,
    body: Value,
) -> Reply {
    let features = app.by(As::ApiKey(key)).features();
    features.switch(id, tenant, header, &body).await
}

/// The features of the tenant of API key `key`, with `query`.
async fn my_list(app: &TestApp, key: &str, query: &str) -> Reply {
    app.by(As::ApiKey(key)).features().mine(query).await
}

api_test!(
    the_catalogue_is_created_read_replaced_listed_and_deleted,
    |app| {
        let created = add_feature(&app, "Platform", "The platform", "Application").await;
        assert_eq!(created["id"], "Platform");
        assert_eq!(
            created["responseUrl"],
            "https://Platform.example.com/signin"
        );
        let generated = app.features().add(&json!({"name": "Tiles", "url": "https://t.example.com", "responseUrl": "https://t.example.com/cb", "type": "service"})).await;
        let generated = generated.expect(StatusCode::CREATED);
        let generated_id: Uuid = generated["id"].as_str().unwrap().parse().unwrap();
        assert_eq!(generated["type"], "Service");
        let read = app.features().get("Platform").await;
        assert_eq!(read.expect(StatusCode::OK)["name"], "The platform");
        let mut replaced = feature("ignored", "Renamed", "Service");
        replaced["url"] = "http://intranet.example.com:8080/app".into();
        let response = app.features().replace("Platform", &replaced).await;
        let body = response.expect(StatusCode::OK);
        assert_eq!(
            (
                body["id"].as_str(),
                body["name"].as_str(),
                body["type"].as_str()
            ),
            (Some("Platform"), Some("Renamed"), Some("Service"))
        );
        let list = app.features().list("limit=1").await;
        let first = list.expect(StatusCode::OK);
        assert_eq!(first["data"].as_array().unwrap().len(), 1);
        let cursor = first["cursor"].as_str().expect("a second page").to_owned();
        let list = app
            .features()
            .list(&format!("limit=1&cursor={cursor}"))
            .await;
        let second = list.expect(StatusCode::OK);
        assert!(second["cursor"].is_null(), "{second}");
        let ids = [
            first["data"][0]["id"].as_str().unwrap(),
            second["data"][0]["id"].as_str().unwrap(),
        ];
        let mut expected = ["Platform".to_owned(), generated_id.to_string()];
        expected.sort();
        assert_eq!(
            ids,
            [expected[0].as_str(), expected[1].as_str()],
            "pages in id (byte) order"
        );
        let services = app.features().list("featureType=Application").await;
        assert_eq!(services.expect(StatusCode::OK)["data"], json!([]));
        let deleted = app.features().delete("Platform").await;
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
        let gone = app.features().get("Platform").await;
        gone.problem(StatusCode::NOT_FOUND, "not-found");
    }
);

api_test!(catalogue_fields_are_checked_and_ids_are_unique, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let again = app
        .features()
        .add(&feature("Platform", "x", "Service"))
        .await;
    again.problem(StatusCode::CONFLICT, "duplicate");
    let cases = [
        (
            json!({"name": "", "url": "https://a.example", "responseUrl": "https://a.example", "type": "Service"}),
            "name",
        ),
        (
            json!({"name": "x".repeat(256), "url": "https://a.example", "responseUrl": "https://a.example", "type": "Service"}),
            "name",
        ),
        (
            json!({"name": "n", "url": "ftp://a.example", "responseUrl": "https://a.example", "type": "Service"}),
            "url",
        ),
        (
            json!({"name": "n", "url": "/relative", "responseUrl": "https://a.example", "type": "Service"}),
            "url",
        ),
        (
            json!({"name": "n", "url": "https://a.example", "responseUrl": "javascript:alert(1)", "type": "Service"}),
            "responseUrl",
        ),
        (
            json!({"name": "n", "url": format!("https://a.example/{}", "x".repeat(2048)), "responseUrl": "https://a.example", "type": "Service"}),
            "url",
        ),
        (
            json!({"name": "n", "url": "https://a.example", "responseUrl": "https://a.example", "type": "Widget"}),
            "type",
        ),
        (
            json!({"id": "a b", "name": "n", "url": "https://a.example", "responseUrl": "https://a.example", "type": "Service"}),
            "id",
        ),
        (
            json!({"id": "message", "name": "n", "url": "https://a.example", "responseUrl": "https://a.example", "type": "Service"}),
            "id",
        ),
        (
            json!({"name": "n", "responseUrl": "https://a.example", "type": "Service"}),
            "body",
        ),
    ];
    for (body, field) in cases {
        let response = app.features().add(&body).await;
        let problem = response.problem(StatusCode::BAD_REQUEST, "validation");
        assert!(problem["errors"].get(field).is_some(), "{field}: {problem}");
    }
    let list = app.features().list("").await;
    assert_eq!(
        list.expect(StatusCode::OK)["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let catalogue = app.features();
    let read = catalogue.get("nope").await;
    read.problem(StatusCode::NOT_FOUND, "not-found");
    let replaced = catalogue
        .replace("nope", &feature("nope", "n", "Service"))
        .await;
    replaced.problem(StatusCode::NOT_FOUND, "not-found");
    let deleted = catalogue.delete("nope").await;
    deleted.problem(StatusCode::NOT_FOUND, "not-found");
    let bad = app.features().list("featureType=Widget").await;
    bad.problem(StatusCode::BAD_REQUEST, "validation");
});

api_test!(only_back_office_manages_the_catalogue_and_licenses, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let tenant = app.tenant_id();
    let owner = app.user_token(app.owner_id(), Some(tenant));
    let calls = [
        (Method::GET, routes::features()),
        (Method::POST, routes::features()),
        (Method::GET, routes::feature("Platform")),
        (Method::PUT, routes::feature("Platform")),
        (Method::DELETE, routes::feature("Platform")),
        (Method::GET, routes::feature_licenses("Platform")),
        (Method::PUT, routes::feature_license("Platform", tenant)),
        (Method::DELETE, routes::feature_license("Platform", tenant)),
        (Method::GET, routes::tenant_licenses(tenant)),
    ];
    for (method, path) in calls {
        let body = feature("Other", "n", "Service");
        let with_key = app
            .with_key(method.clone(), &path)
            .json(&body)
            .send()
            .await
            .unwrap();
        expect_problem(with_key, StatusCode::FORBIDDEN, "forbidden").await;
        let with_token = app
            .with_token(method.clone(), &path, &owner)
            .json(&body)
            .send()
            .await
            .unwrap();
        expect_problem(with_token, StatusCode::FORBIDDEN, "forbidden").await;
        let anonymous = app
            .anonymous(method, &path)
            .json(&body)
            .send()
            .await
            .unwrap();
        expect_problem(anonymous, StatusCode::UNAUTHORIZED, "credentials-missing").await;
    }
    let read = app.features().get("Platform").await;
    assert_eq!(read.expect(StatusCode::OK)["name"], "The platform");
});

api_test!(licenses_are_granted_listed_and_revoked, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let tenant = app.tenant_id();
    let created = license(&app, "Platform", tenant, None)
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(
        (created["enabled"].as_bool(), created["featureId"].as_str()),
        (Some(true), Some("Platform"))
    );
    let again = license(&app, "Platform", tenant, None)
        .await
        .expect(StatusCode::OK);
    assert_eq!(again["enabled"], true);
    let off = license(&app, "Platform", tenant, Some(json!({"enabled": false})))
        .await
        .expect(StatusCode::OK);
    assert_eq!(off["enabled"], false);
    let kept = license(&app, "Platform", tenant, Some(json!({})))
        .await
        .expect(StatusCode::OK);
    assert_eq!(
        kept["enabled"], false,
        "an absent switch keeps the license's"
    );
    let other = app.create_tenant("Other").await;
    let new_off = license(&app, "Platform", other, Some(json!({"enabled": false})))
        .await
        .expect(StatusCode::CREATED);
    assert_eq!(new_off["enabled"], false);
    let listed = app.features().licenses("Platform").await;
    assert_eq!(
        listed.expect(StatusCode::OK)["data"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let of_tenant = app.features().licenses_of(tenant).await;
    let of_tenant = of_tenant.expect(StatusCode::OK);
    assert_eq!(of_tenant["data"][0]["featureId"], "Platform");
    let licensed = app.features().delete("Platform").await;
    licensed.problem(StatusCode::CONFLICT, "feature-licensed");
    for holder in [tenant, other] {
        let revoked = app.features().revoke("Platform", holder).await;
        assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    }
    let twice = app.features().revoke("Platform", tenant).await;
    twice.problem(StatusCode::NOT_FOUND, "not-found");
    let deleted = app.features().delete("Platform").await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
});

api_test!(
    licenses_of_unknown_features_or_tenants_are_404_and_malformed_ids_400,
    |app| {
        add_feature(&app, "Platform", "The platform", "Application").await;
        let missing_tenant = license(&app, "Platform", Uuid::new_v4(), None).await;
        missing_tenant.problem(StatusCode::NOT_FOUND, "not-found");
        let missing_feature = license(&app, "Nope", app.tenant_id(), None).await;
        missing_feature.problem(StatusCode::NOT_FOUND, "not-found");
        let bad_tenant = app.features().license("Platform", "not-a-uuid", None).await;
        bad_tenant.problem(StatusCode::BAD_REQUEST, "invalid-path");
        let bad_feature = app.features().get("a%00b").await;
        bad_feature.problem(StatusCode::BAD_REQUEST, "invalid-path");
        let bad_switch = license(
            &app,
            "Platform",
            app.tenant_id(),
            Some(json!({"enabled": "yes"})),
        )
        .await;
        bad_switch.problem(StatusCode::BAD_REQUEST, "validation");
        let unknown_tenant = app.features().licenses_of(Uuid::new_v4()).await;
        unknown_tenant.problem(StatusCode::NOT_FOUND, "not-found");
    }
);

api_test!(the_owner_lists_licensed_features_by_type, |app| {
    add_feature(&app, "b-app", "Beta", "Application").await;
    add_feature(&app, "a-svc", "Alpha", "Service").await;
    add_feature(&app, "unlicensed", "Zeta", "Application").await;
    let tenant = app.tenant_id();
    for id in ["b-app", "a-svc"] {
        license(&app, id, tenant, None)
            .await
            .expect(StatusCode::CREATED);
    }
    let key = app.bootstrap.api_key.clone();
    let all = my_list(&app, &key, "").await.expect(StatusCode::OK);
    assert_eq!(
        all,
        json!({"data": [
            {"url": "https://a-svc.example.com", "responseUrl": "https://a-svc.example.com/signin", "featureId": "a-svc", "name": "Alpha", "enabled": true, "type": "Service"},
            {"url": "https://b-app.example.com", "responseUrl": "https://b-app.example.com/signin", "featureId": "b-app", "name": "Beta", "enabled": true, "type": "Application"},
        ]})
    );
    let apps = my_list(&app, &key, "featureType=application")
        .await
        .expect(StatusCode::OK);
    assert_eq!(apps["data"].as_array().unwrap().len(), 1);
    assert_eq!(apps["data"][0]["featureId"], "b-app");
    let bad = my_list(&app, &key, "featureType=Widget").await;
    bad.problem(StatusCode::BAD_REQUEST, "validation");
    let other = app.create_tenant("Other").await;
    let (_, other_key) = app.create_api_key(other, "Owner").await;
    let empty = my_list(&app, &other_key, "").await.expect(StatusCode::OK);
    assert_eq!(
        empty["data"],
        json!([]),
        "another tenant sees only its own licenses"
    );
});

api_test!(only_an_owner_of_the_tenant_lists_and_switches, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let tenant = app.tenant_id();
    license(&app, "Platform", tenant, None)
        .await
        .expect(StatusCode::CREATED);
    let id = tenant.to_string();
    for role in ["Administrator", "User"] {
        let (_, key) = app.create_api_key(tenant, role).await;
        my_list(&app, &key, "")
            .await
            .problem(StatusCode::FORBIDDEN, "forbidden");
        let response = switch(
            &app,
            &key,
            "Platform",
            tenant,
            Some(&id),
            json!({"enabled": false}),
        )
        .await;
        response.problem(StatusCode::FORBIDDEN, "forbidden");
    }
    let operator = app.token(basin::TokenRequest {
        subject: Uuid::new_v4(),
        roles: vec!["BackOffice".into()],
        ttl: chrono::TimeDelta::hours(1),
        ..Default::default()
    });
    let no_tenant = app.by(As::Token(&operator)).features().mine("").await;
    no_tenant.problem(StatusCode::FORBIDDEN, "forbidden");
    let other = app.create_tenant("Other").await;
    let (_, other_owner) = app.create_api_key(other, "Owner").await;
    let response = switch(
        &app,
        &other_owner,
        "Platform",
        tenant,
        Some(&id),
        json!({"enabled": false}),
    )
    .await;
    response.problem(StatusCode::FORBIDDEN, "forbidden");
    let owner = app.user_token(app.owner_id(), Some(tenant));
    let by_token = app.by(As::Token(&owner)).features();
    let by_token = by_token
        .switch("Platform", tenant, Some(&id), &json!({"enabled": false}))
        .await;
    assert_eq!(by_token.expect(StatusCode::OK), json!({"enabled": false}));
    let anonymous = app
        .anonymous(Method::GET, &routes::my_tenant_features())
        .send()
        .await
        .unwrap();
    expect_problem(anonymous, StatusCode::UNAUTHORIZED, "credentials-missing").await;
});

api_test!(
    the_switch_checks_header_path_owner_body_and_license_in_order,
    |app| {
        add_feature(&app, "Platform", "The platform", "Application").await;
        add_feature(&app, "Unlicensed", "Not held", "Service").await;
        let tenant = app.tenant_id();
        license(&app, "Platform", tenant, None)
            .await
            .expect(StatusCode::CREATED);
        let key = app.bootstrap.api_key.clone();
        let id = tenant.to_string();
        let off = json!({"enabled": false});
        let missing = switch(&app, &key, "Platform", tenant, None, off.clone()).await;
        missing.problem(StatusCode::BAD_REQUEST, "validation");
        let other = Uuid::new_v4().to_string();
        let different = switch(&app, &key, "Platform", tenant, Some(&other), off.clone()).await;
        different.problem(StatusCode::BAD_REQUEST, "validation");
        let garbage = switch(
            &app,
            &key,
            "Platform",
            tenant,
            Some("not-a-uuid"),
            off.clone(),
        )
        .await;
        garbage.problem(StatusCode::BAD_REQUEST, "validation");
        let upper = id.to_uppercase();
        let same_uuid = switch(&app, &key, "Platform", tenant, Some(&upper), off.clone()).await;
        assert_eq!(same_uuid.expect(StatusCode::OK), off);
        for body in [
            json!({}),
            json!({"enabled": "false"}),
            json!({"enabled": null}),
        ] {
            let response = switch(&app, &key, "Platform", tenant, Some(&id), body).await;
            response.problem(StatusCode::BAD_REQUEST, "validation");
        }
        // Issue 33: who may switch is decided before the body is read.
        let (_, user_key) = app.create_api_key(tenant, "User").await;
        for body in [json!({}), json!({"enabled": "false"}), off.clone()] {
            let response = switch(&app, &user_key, "Platform", tenant, Some(&id), body).await;
            response.problem(StatusCode::FORBIDDEN, "forbidden");
        }
        let bad_path = app.by(As::ApiKey(&key)).features();
        let bad_path = bad_path
            .switch("Platform", "not-a-uuid", Some("not-a-uuid"), &off)
            .await;
        bad_path.problem(StatusCode::BAD_REQUEST, "validation");
        let unlicensed = switch(&app, &key, "Unlicensed", tenant, Some(&id), off.clone()).await;
        unlicensed.problem(StatusCode::NOT_FOUND, "not-found");
        let unknown = switch(&app, &key, "Unknown", tenant, Some(&id), off.clone()).await;
        unknown.problem(StatusCode::NOT_FOUND, "not-found");
    }
);

api_test!(switching_never_changes_the_license, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let tenant = app.tenant_id();
    let granted = license(&app, "Platform", tenant, None)
        .await
        .expect(StatusCode::CREATED);
    let key = app.bootstrap.api_key.clone();
    let id = tenant.to_string();
    for enabled in [false, false, true, false] {
        let response = switch(
            &app,
            &key,
            "Platform",
            tenant,
            Some(&id),
            json!({"enabled": enabled}),
        )
        .await;
        assert_eq!(response.expect(StatusCode::OK), json!({"enabled": enabled}));
        let listed = my_list(&app, &key, "").await.expect(StatusCode::OK);
        assert_eq!(listed["data"][0]["enabled"], enabled);
    }
    let licenses = app.features().licenses("Platform").await;
    let licenses = licenses.expect(StatusCode::OK);
    assert_eq!(licenses["data"].as_array().unwrap().len(), 1);
    assert_eq!(licenses["data"][0]["licensedAt"], granted["licensedAt"]);
    assert_eq!(licenses["data"][0]["licensedBy"], granted["licensedBy"]);
    assert_eq!(licenses["data"][0]["enabled"], false);
    let revoked = app.features().revoke("Platform", tenant).await;
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    let response = switch(
        &app,
        &key,
        "Platform",
        tenant,
        Some(&id),
        json!({"enabled": true}),
    )
    .await;
    response.problem(StatusCode::NOT_FOUND, "not-found");
    let licenses = app.features().licenses("Platform").await;
    assert_eq!(
        licenses.expect(StatusCode::OK)["data"],
        json!([]),
        "a switch never grants"
    );
});

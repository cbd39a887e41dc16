//! Tenant feature availability (docs/features.md#tenant-feature-availability) and BackOffice's catalogue and licenses
//! (docs/features.md), through HTTP on both databases.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, expect_problem, expect_status, routes};

fn feature(id: &str, name: &str, kind: &str) -> Value {
    json!({"id": id, "name": name, "url": format!("https://{id}.example.com"),
           "responseUrl": format!("https://{id}.example.com/signin"), "type": kind})
}

async fn add_feature(app: &TestApp, id: &str, name: &str, kind: &str) -> Value {
    let response = app
        .back_office(Method::POST, &routes::features())
        .json(&feature(id, name, kind))
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::CREATED).await
}

async fn license(app: &TestApp, id: &str, tenant: Uuid, body: Option<Value>) -> reqwest::Response {
    let mut request = app.back_office(Method::PUT, &routes::feature_license(id, tenant));
    if let Some(body) = body {
        request = request.json(&body);
    }
    request.send().await.unwrap()
}

async fn switch(
    app: &TestApp,
    key: &str,
    id: &str,
    tenant: Uuid,
    header: Option<&str>,
    body: Value,
) -> reqwest::Response {
    let mut request = app
        .anonymous(Method::PATCH, &routes::tenant_feature(id, tenant))
        .header("svc-open-api-key", key)
        .json(&body);
    if let Some(header) = header {
        request = request.header("svc-project-id", header);
    }
    request.send().await.unwrap()
}

async fn my_list(app: &TestApp, key: &str, query: &str) -> reqwest::Response {
    app.anonymous(
        Method::GET,
        &format!("{}{query}", routes::my_tenant_features()),
    )
    .header("svc-open-api-key", key)
    .send()
    .await
    .unwrap()
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
        let generated = app
        .back_office(Method::POST, &routes::features())
        .json(&json!({"name": "Tiles", "url": "https://t.example.com", "responseUrl": "https://t.example.com/cb", "type": "service"}))
        .send()
        .await
        .unwrap();
        let generated = expect_status(generated, StatusCode::CREATED).await;
        let generated_id: Uuid = generated["id"].as_str().unwrap().parse().unwrap();
        assert_eq!(generated["type"], "Service");
        let read = app
            .back_office(Method::GET, &routes::feature("Platform"))
            .send()
            .await
            .unwrap();
        assert_eq!(
            expect_status(read, StatusCode::OK).await["name"],
            "The platform"
        );
        let mut replaced = feature("ignored", "Renamed", "Service");
        replaced["url"] = "http://intranet.example.com:8080/app".into();
        let response = app
            .back_office(Method::PUT, &routes::feature("Platform"))
            .json(&replaced)
            .send()
            .await
            .unwrap();
        let body = expect_status(response, StatusCode::OK).await;
        assert_eq!(
            (
                body["id"].as_str(),
                body["name"].as_str(),
                body["type"].as_str()
            ),
            (Some("Platform"), Some("Renamed"), Some("Service"))
        );
        let list = app
            .back_office(Method::GET, &format!("{}?limit=1", routes::features()))
            .send()
            .await
            .unwrap();
        let first = expect_status(list, StatusCode::OK).await;
        assert_eq!(first["data"].as_array().unwrap().len(), 1);
        let cursor = first["cursor"].as_str().expect("a second page").to_owned();
        let list = app
            .back_office(
                Method::GET,
                &format!("{}?limit=1&cursor={cursor}", routes::features()),
            )
            .send()
            .await
            .unwrap();
        let second = expect_status(list, StatusCode::OK).await;
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
        let services = app
            .back_office(
                Method::GET,
                &format!("{}?featureType=Application", routes::features()),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(
            expect_status(services, StatusCode::OK).await["data"],
            json!([])
        );
        let deleted = app
            .back_office(Method::DELETE, &routes::feature("Platform"))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
        let gone = app
            .back_office(Method::GET, &routes::feature("Platform"))
            .send()
            .await
            .unwrap();
        expect_problem(gone, StatusCode::NOT_FOUND, "not-found").await;
    }
);

api_test!(catalogue_fields_are_checked_and_ids_are_unique, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let again = app
        .back_office(Method::POST, &routes::features())
        .json(&feature("Platform", "x", "Service"))
        .send()
        .await
        .unwrap();
    expect_problem(again, StatusCode::CONFLICT, "duplicate").await;
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
        let response = app
            .back_office(Method::POST, &routes::features())
            .json(&body)
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"].get(field).is_some(), "{field}: {problem}");
    }
    let list = app
        .back_office(Method::GET, &routes::features())
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_status(list, StatusCode::OK).await["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    for (method, path) in [
        (Method::GET, &routes::feature("nope")),
        (Method::PUT, &routes::feature("nope")),
        (Method::DELETE, &routes::feature("nope")),
    ] {
        let response = app
            .back_office(method, path)
            .json(&feature("nope", "n", "Service"))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
    let bad = app
        .back_office(
            Method::GET,
            &format!("{}?featureType=Widget", routes::features()),
        )
        .send()
        .await
        .unwrap();
    expect_problem(bad, StatusCode::BAD_REQUEST, "validation").await;
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
    let read = app
        .back_office(Method::GET, &routes::feature("Platform"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_status(read, StatusCode::OK).await["name"],
        "The platform"
    );
});

api_test!(licenses_are_granted_listed_and_revoked, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let tenant = app.tenant_id();
    let created = expect_status(
        license(&app, "Platform", tenant, None).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(
        (created["enabled"].as_bool(), created["featureId"].as_str()),
        (Some(true), Some("Platform"))
    );
    let again = expect_status(
        license(&app, "Platform", tenant, None).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(again["enabled"], true);
    let off = expect_status(
        license(&app, "Platform", tenant, Some(json!({"enabled": false}))).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(off["enabled"], false);
    let kept = expect_status(
        license(&app, "Platform", tenant, Some(json!({}))).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        kept["enabled"], false,
        "an absent switch keeps the license's"
    );
    let other = app.create_tenant("Other").await;
    let new_off = expect_status(
        license(&app, "Platform", other, Some(json!({"enabled": false}))).await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(new_off["enabled"], false);
    let listed = app
        .back_office(Method::GET, &routes::feature_licenses("Platform"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_status(listed, StatusCode::OK).await["data"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let of_tenant = app
        .back_office(Method::GET, &routes::tenant_licenses(tenant))
        .send()
        .await
        .unwrap();
    let of_tenant = expect_status(of_tenant, StatusCode::OK).await;
    assert_eq!(of_tenant["data"][0]["featureId"], "Platform");
    let licensed = app
        .back_office(Method::DELETE, &routes::feature("Platform"))
        .send()
        .await
        .unwrap();
    expect_problem(licensed, StatusCode::CONFLICT, "feature-licensed").await;
    for holder in [tenant, other] {
        let revoked = app
            .back_office(Method::DELETE, &routes::feature_license("Platform", holder))
            .send()
            .await
            .unwrap();
        assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    }
    let twice = app
        .back_office(Method::DELETE, &routes::feature_license("Platform", tenant))
        .send()
        .await
        .unwrap();
    expect_problem(twice, StatusCode::NOT_FOUND, "not-found").await;
    let deleted = app
        .back_office(Method::DELETE, &routes::feature("Platform"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
});

api_test!(
    licenses_of_unknown_features_or_tenants_are_404_and_malformed_ids_400,
    |app| {
        add_feature(&app, "Platform", "The platform", "Application").await;
        let missing_tenant = license(&app, "Platform", Uuid::new_v4(), None).await;
        expect_problem(missing_tenant, StatusCode::NOT_FOUND, "not-found").await;
        let missing_feature = license(&app, "Nope", app.tenant_id(), None).await;
        expect_problem(missing_feature, StatusCode::NOT_FOUND, "not-found").await;
        let bad_tenant = app
            .back_office(
                Method::PUT,
                "/api/admin/features/Platform/licenses/not-a-uuid",
            )
            .send()
            .await
            .unwrap();
        expect_problem(bad_tenant, StatusCode::BAD_REQUEST, "invalid-path").await;
        let bad_feature = app
            .back_office(Method::GET, "/api/admin/features/a%00b")
            .send()
            .await
            .unwrap();
        expect_problem(bad_feature, StatusCode::BAD_REQUEST, "invalid-path").await;
        let bad_switch = license(
            &app,
            "Platform",
            app.tenant_id(),
            Some(json!({"enabled": "yes"})),
        )
        .await;
        expect_problem(bad_switch, StatusCode::BAD_REQUEST, "validation").await;
        let unknown_tenant = app
            .back_office(Method::GET, &routes::tenant_licenses(Uuid::new_v4()))
            .send()
            .await
            .unwrap();
        expect_problem(unknown_tenant, StatusCode::NOT_FOUND, "not-found").await;
    }
);

api_test!(the_owner_lists_licensed_features_by_type, |app| {
    add_feature(&app, "b-app", "Beta", "Application").await;
    add_feature(&app, "a-svc", "Alpha", "Service").await;
    add_feature(&app, "unlicensed", "Zeta", "Application").await;
    let tenant = app.tenant_id();
    for id in ["b-app", "a-svc"] {
        expect_status(license(&app, id, tenant, None).await, StatusCode::CREATED).await;
    }
    let key = app.bootstrap.api_key.clone();
    let all = expect_status(my_list(&app, &key, "").await, StatusCode::OK).await;
    assert_eq!(
        all,
        json!({"data": [
            {"url": "https://a-svc.example.com", "responseUrl": "https://a-svc.example.com/signin", "featureId": "a-svc", "name": "Alpha", "enabled": true, "type": "Service"},
            {"url": "https://b-app.example.com", "responseUrl": "https://b-app.example.com/signin", "featureId": "b-app", "name": "Beta", "enabled": true, "type": "Application"},
        ]})
    );
    let apps = expect_status(
        my_list(&app, &key, "?featureType=application").await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(apps["data"].as_array().unwrap().len(), 1);
    assert_eq!(apps["data"][0]["featureId"], "b-app");
    let bad = my_list(&app, &key, "?featureType=Widget").await;
    expect_problem(bad, StatusCode::BAD_REQUEST, "validation").await;
    let other = app.create_tenant("Other").await;
    let (_, other_key) = app.create_api_key(other, "Owner").await;
    let empty = expect_status(my_list(&app, &other_key, "").await, StatusCode::OK).await;
    assert_eq!(
        empty["data"],
        json!([]),
        "another tenant sees only its own licenses"
    );
});

api_test!(only_an_owner_of_the_tenant_lists_and_switches, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let tenant = app.tenant_id();
    expect_status(
        license(&app, "Platform", tenant, None).await,
        StatusCode::CREATED,
    )
    .await;
    let id = tenant.to_string();
    for role in ["Administrator", "User"] {
        let (_, key) = app.create_api_key(tenant, role).await;
        expect_problem(
            my_list(&app, &key, "").await,
            StatusCode::FORBIDDEN,
            "forbidden",
        )
        .await;
        let response = switch(
            &app,
            &key,
            "Platform",
            tenant,
            Some(&id),
            json!({"enabled": false}),
        )
        .await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
    let operator = app.token(basin::TokenRequest {
        subject: Uuid::new_v4(),
        roles: vec!["BackOffice".into()],
        ttl: chrono::TimeDelta::hours(1),
        ..Default::default()
    });
    let no_tenant = app
        .with_token(Method::GET, &routes::my_tenant_features(), &operator)
        .send()
        .await
        .unwrap();
    expect_problem(no_tenant, StatusCode::FORBIDDEN, "forbidden").await;
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
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    let owner = app.user_token(app.owner_id(), Some(tenant));
    let by_token = app
        .with_token(
            Method::PATCH,
            &routes::tenant_feature("Platform", tenant),
            &owner,
        )
        .header("svc-project-id", &id)
        .json(&json!({"enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_status(by_token, StatusCode::OK).await,
        json!({"enabled": false})
    );
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
        expect_status(
            license(&app, "Platform", tenant, None).await,
            StatusCode::CREATED,
        )
        .await;
        let key = app.bootstrap.api_key.clone();
        let id = tenant.to_string();
        let off = json!({"enabled": false});
        let missing = switch(&app, &key, "Platform", tenant, None, off.clone()).await;
        expect_problem(missing, StatusCode::BAD_REQUEST, "validation").await;
        let other = Uuid::new_v4().to_string();
        let different = switch(&app, &key, "Platform", tenant, Some(&other), off.clone()).await;
        expect_problem(different, StatusCode::BAD_REQUEST, "validation").await;
        let garbage = switch(
            &app,
            &key,
            "Platform",
            tenant,
            Some("not-a-uuid"),
            off.clone(),
        )
        .await;
        expect_problem(garbage, StatusCode::BAD_REQUEST, "validation").await;
        let upper = id.to_uppercase();
        let same_uuid = switch(&app, &key, "Platform", tenant, Some(&upper), off.clone()).await;
        assert_eq!(expect_status(same_uuid, StatusCode::OK).await, off);
        for body in [
            json!({}),
            json!({"enabled": "false"}),
            json!({"enabled": null}),
        ] {
            let response = switch(&app, &key, "Platform", tenant, Some(&id), body).await;
            expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        }
        // Issue 33: who may switch is decided before the body is read.
        let (_, user_key) = app.create_api_key(tenant, "User").await;
        for body in [json!({}), json!({"enabled": "false"}), off.clone()] {
            let response = switch(&app, &user_key, "Platform", tenant, Some(&id), body).await;
            expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        }
        let bad_path = app
            .anonymous(
                Method::PATCH,
                "/api/admin/feature/Platform/tenant/not-a-uuid",
            )
            .header("svc-open-api-key", &key)
            .header("svc-project-id", "not-a-uuid")
            .json(&off)
            .send()
            .await
            .unwrap();
        expect_problem(bad_path, StatusCode::BAD_REQUEST, "validation").await;
        let unlicensed = switch(&app, &key, "Unlicensed", tenant, Some(&id), off.clone()).await;
        expect_problem(unlicensed, StatusCode::NOT_FOUND, "not-found").await;
        let unknown = switch(&app, &key, "Unknown", tenant, Some(&id), off.clone()).await;
        expect_problem(unknown, StatusCode::NOT_FOUND, "not-found").await;
    }
);

api_test!(switching_never_changes_the_license, |app| {
    add_feature(&app, "Platform", "The platform", "Application").await;
    let tenant = app.tenant_id();
    let granted = expect_status(
        license(&app, "Platform", tenant, None).await,
        StatusCode::CREATED,
    )
    .await;
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
        assert_eq!(
            expect_status(response, StatusCode::OK).await,
            json!({"enabled": enabled})
        );
        let listed = expect_status(my_list(&app, &key, "").await, StatusCode::OK).await;
        assert_eq!(listed["data"][0]["enabled"], enabled);
    }
    let licenses = app
        .back_office(Method::GET, &routes::feature_licenses("Platform"))
        .send()
        .await
        .unwrap();
    let licenses = expect_status(licenses, StatusCode::OK).await;
    assert_eq!(licenses["data"].as_array().unwrap().len(), 1);
    assert_eq!(licenses["data"][0]["licensedAt"], granted["licensedAt"]);
    assert_eq!(licenses["data"][0]["licensedBy"], granted["licensedBy"]);
    assert_eq!(licenses["data"][0]["enabled"], false);
    let revoked = app
        .back_office(Method::DELETE, &routes::feature_license("Platform", tenant))
        .send()
        .await
        .unwrap();
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
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    let licenses = app
        .back_office(Method::GET, &routes::feature_licenses("Platform"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect_status(licenses, StatusCode::OK).await["data"],
        json!([]),
        "a switch never grants"
    );
});

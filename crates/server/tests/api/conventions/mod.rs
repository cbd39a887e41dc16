//! HTTP conventions (docs/api-conventions.md, docs/errors.md): problem+json shape, unknown routes and methods, body
//! limits, content types, api-version, case-insensitive binding, timestamps, request ids.

mod authorization_first;
mod connections;
mod paging;

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::*;

api_test!(unknown_routes_are_a_404_problem, |app| {
    let response = app
        .with_key(Method::GET, "/api/no/such/thing")
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, StatusCode::NOT_FOUND, "route-not-found").await;
    assert_eq!(problem["instance"], "/api/no/such/thing");
    assert!(problem["requestId"].is_string());
});

api_test!(a_wrong_method_is_a_405_problem_with_allow, |app| {
    let response = app
        .with_key(Method::DELETE, &routes::principal_me())
        .send()
        .await
        .unwrap();
    assert!(response.headers().get("allow").is_some());
    expect_problem(
        response,
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
    )
    .await;
});

api_test!(
    a_body_over_the_limit_is_a_413_problem_and_creates_nothing,
    |app| {
        let name = "x".repeat(usize::try_from(app.config.limits.json_body_bytes_max).unwrap() + 1);
        let response = app
            .back_office(Method::POST, &routes::tenants())
            .json(&json!({ "name": name }))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::PAYLOAD_TOO_LARGE, "payload-too-large").await;
        let list = app
            .back_office(Method::GET, &routes::tenants())
            .send()
            .await
            .unwrap();
        let body = expect_status(list, StatusCode::OK).await;
        assert_eq!(
            body["data"].as_array().unwrap().len(),
            1,
            "only the bootstrap tenant"
        );
    }
);

api_test!(json_bodies_are_read_whatever_the_content_type, |app| {
    for content_type in [
        "application/json-patch+json",
        "text/plain",
        "application/json",
        "application/octet-stream",
    ] {
        let response = app
            .back_office(Method::POST, &routes::tenants())
            .header("content-type", content_type)
            .header("accept", "text/plain")
            .body(json!({ "name": format!("T {content_type}") }).to_string())
            .send()
            .await
            .unwrap();
        expect_status(response, StatusCode::CREATED).await;
    }
    // GET with the JSON-patch content type and no body, as clients send it.
    let response = app
        .with_key(Method::GET, &routes::principal_me())
        .header("content-type", "application/json-patch+json")
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await;
});

api_test!(an_empty_body_is_read_as_an_empty_object, |app| {
    let response = app
        .back_office(Method::POST, &routes::tenants())
        .header("content-type", "application/json-patch+json")
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    assert!(problem["errors"].is_object(), "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("name"),
        "{problem}"
    );
});

api_test!(malformed_json_is_a_400_invalid_body, |app| {
    let response = app
        .back_office(Method::POST, &routes::tenants())
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-body").await;
});

api_test!(
    unknown_and_mistyped_fields_are_validation_problems_naming_the_field,
    |app| {
        let response = app
            .back_office(Method::POST, &routes::tenants())
            .json(&json!({ "name": "A", "colour": "blue" }))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(
            problem["detail"].as_str().unwrap().contains("colour"),
            "{problem}"
        );
        let response = app
            .back_office(Method::POST, &routes::tenants())
            .json(&json!({ "name": 5 }))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"]["name"].is_array(), "{problem}");
    }
);

api_test!(json_property_names_bind_in_any_case, |app| {
    let response = app
        .back_office(Method::POST, &routes::users())
        .json(&json!({ "NAME": "Ann", "EMAIL": "ann@example.com", "tenantid": app.tenant_id(), "ROLE": "administrator" }))
        .send()
        .await
        .unwrap();
    let user = expect_status(response, StatusCode::CREATED).await;
    assert_eq!(user["name"], "Ann");
    assert_eq!(user["email"], "ann@example.com");
    let members = app
        .back_office(Method::GET, &routes::tenant_members(app.tenant_id()))
        .send()
        .await
        .unwrap();
    let members = expect_status(members, StatusCode::OK).await;
    let ann = members["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "Ann")
        .unwrap();
    assert_eq!(
        ann["role"], "Administrator",
        "enum values come out PascalCase"
    );
});

api_test!(
    query_parameter_names_and_enum_values_bind_in_any_case,
    |app| {
        for name in ["b", "a", "c"] {
            app.create_tenant(name).await;
        }
        let response = app
            .back_office(
                Method::GET,
                &format!("{}?LIMIT=2&SortBy=name&SORTORDER=desc", routes::tenants()),
            )
            .send()
            .await
            .unwrap();
        let page = expect_status(response, StatusCode::OK).await;
        let names: Vec<&str> = page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["c", "b"]);
        assert!(page["cursor"].is_string());
        let response = app
            .back_office(Method::GET, &format!("{}?sortBy=Colour", routes::tenants()))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("Name, CreatedAt"),
            "{problem}"
        );
        let response = app
            .back_office(Method::GET, &format!("{}?limit=ten", routes::tenants()))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"]["limit"].is_array(), "{problem}");
    }
);

api_test!(
    api_version_defaults_accepts_minor_zero_and_rejects_others,
    |app| {
        for version in [None, Some("1"), Some("1.0"), Some("4"), Some("3.0")] {
            let mut request = app.with_key(Method::GET, &routes::principal_me());
            if let Some(version) = version {
                request = request.header("api-version", version);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response.headers()["api-supported-versions"],
                "1.0, 2.0, 3.0, 4.0"
            );
            expect_status(response, StatusCode::OK).await;
        }
        let response = app
            .with_key(Method::GET, &routes::principal_me())
            .header("api-version", "9")
            .send()
            .await
            .unwrap();
        let problem =
            expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("1.0, 2.0, 3.0, 4.0"),
            "{problem}"
        );
        assert_eq!(
            problem["supportedVersions"],
            json!(["1.0", "2.0", "3.0", "4.0"])
        );
        // The admin API supports only 1, also when named in the query string.
        let response = app
            .back_office(Method::GET, &format!("{}?API-VERSION=2", routes::tenants()))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["api-supported-versions"], "1.0");
        expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
    }
);

api_test!(every_response_carries_api_supported_versions, |app| {
    for path in ["/health/live", "/health/ready", "/openapi.json", "/nowhere"] {
        let response = app.anonymous(Method::GET, path).send().await.unwrap();
        assert!(
            response.headers().contains_key("api-supported-versions"),
            "{path}"
        );
    }
});

api_test!(timestamps_have_seven_fractional_digits_and_no_zone, |app| {
    let response = app
        .with_key(Method::GET, &routes::my_tenants())
        .send()
        .await
        .unwrap();
    let body = expect_status(response, StatusCode::OK).await;
    let created = body["data"][0]["createdAt"].as_str().unwrap();
    let (_, fraction) = created.split_once('.').unwrap();
    assert_eq!(fraction.len(), 7, "{created}");
    assert!(fraction.bytes().all(|b| b.is_ascii_digit()), "{created}");
    assert_eq!(
        created.len(),
        "2019-01-24T08:17:02.4355712".len(),
        "{created}"
    );
});

api_test!(request_ids_are_generated_or_kept, |app| {
    let response = app
        .with_key(Method::GET, &routes::principal_me())
        .send()
        .await
        .unwrap();
    assert!(response.headers().contains_key("x-request-id"));
    let response = app
        .with_key(Method::GET, &routes::principal_me())
        .header("x-request-id", "trace-me-42")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "trace-me-42");
});

api_test!(a_malformed_id_in_the_path_is_a_400, |app| {
    let response = app
        .back_office(Method::GET, "/api/admin/tenants/not-a-uuid")
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-path").await;
});

api_test!(health_probes_answer_without_credentials, |app| {
    let live = expect_status(
        app.anonymous(Method::GET, "/health/live")
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(live["status"], "Healthy");
    let ready = expect_status(
        app.anonymous(Method::GET, "/health/ready")
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    let expected = match app.backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    assert_eq!(ready["database"], expected);
});

api_test!(the_openapi_document_and_swagger_ui_are_served, |app| {
    let spec = expect_status(
        app.anonymous(Method::GET, "/openapi.json")
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    for path in [
        &routes::principal_me(),
        &routes::my_tenants(),
        &routes::tenants(),
        "/api/admin/tenants/{tenantId}/api-keys",
        &routes::users(),
    ] {
        assert!(
            spec["paths"][path].is_object(),
            "{path} missing from the OpenAPI document"
        );
    }
    assert!(spec["components"]["securitySchemes"]["apiKey"].is_object());
    // Issue 33: the vector tile path was documented without `.vector.pbf`, so a generated
    // client called a path that answers 404. It is documented as the interface names it, and
    // the path filled in from the document's template reaches the handler.
    let vector = "/api/vectortiles/dataset/{id}/{zoom}/{tileCol}/{tileRow}.vector.pbf";
    assert!(spec["paths"][vector]["get"].is_object(), "{vector}");
    assert!(
        spec["paths"]["/api/vectortiles/dataset/{id}/{zoom}/{tileCol}/{tileRow}"].is_null(),
        "the route without its suffix is not documented"
    );
    let filled = vector
        .replace("{id}", &uuid::Uuid::new_v4().to_string())
        .replace("{zoom}", "0")
        .replace("{tileCol}", "0")
        .replace("{tileRow}", "0");
    let missing = app.with_key(Method::GET, &filled).send().await.unwrap();
    let problem = expect_problem(missing, StatusCode::NOT_FOUND, "not-found").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("dataset"),
        "the handler answered, about the unknown dataset: {problem}"
    );
    let ui = app.anonymous(Method::GET, "/docs/").send().await.unwrap();
    assert_eq!(ui.status(), StatusCode::OK);
    assert!(
        ui.text().await.unwrap().contains("swagger"),
        "Swagger UI page"
    );
});

api_test!(a_broken_database_is_a_503_that_leaks_nothing, |app| {
    app.db.close(std::time::Duration::from_secs(5)).await;
    let response = app
        .anonymous(Method::GET, "/health/ready")
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    let text = problem.to_string().to_lowercase();
    for leak in ["sqlx", "pool", "sqlite", "postgres", "closed"] {
        assert!(!text.contains(leak), "{leak} leaked: {problem}");
    }
    let response = app
        .with_key(Method::GET, &routes::principal_me())
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    let response = app
        .back_office(Method::POST, &routes::tenants())
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    let problem = expect_problem(response, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    assert!(
        !problem.to_string().to_lowercase().contains("sqlx"),
        "{problem}"
    );
});

api_test!(concurrent_writes_all_succeed, |app| {
    let mut tasks = Vec::new();
    for index in 0..24 {
        let request = app
            .back_office(Method::POST, &routes::tenants())
            .json(&json!({ "name": format!("concurrent {index:02}") }));
        tasks.push(tokio::spawn(async move {
            request.send().await.unwrap().status()
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), StatusCode::CREATED);
    }
    let list = expect_status(
        app.back_office(Method::GET, &routes::tenants())
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(list["data"].as_array().unwrap().len(), 25);
});

async fn check_request_timeout(app: TestApp) {
    // Headers promise a body that never comes: the request outlives the timeout.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = app.address.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /api/admin/tenants HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{{",
        app.bootstrap.back_office_token
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(
        response.contains("urn:basin:problem:request-timeout"),
        "{response}"
    );
}

fn short_timeout(config: &mut basin::Config) {
    config.limits.request_timeout_ms = std::time::Duration::from_millis(300);
}

api_test_with!(
    a_request_over_the_time_limit_is_a_408_problem,
    short_timeout,
    |app| {
        check_request_timeout(app).await;
    }
);

// Issue 9, fault 3: NUL characters gave 500 on PostgreSQL and were stored on SQLite.
api_test!(nul_characters_are_refused_in_every_text_input, |app| {
    let project = app.create_project(As::Key, "P", json!({})).await;
    let project_id = id_str(&project).to_owned();
    let cases: Vec<(Method, String, serde_json::Value, &str)> = vec![
        (
            Method::POST,
            routes::projects(),
            json!({"name": "a\u{0}b"}),
            "name",
        ),
        (
            Method::POST,
            routes::projects(),
            json!({"name": "ok", "description": "\u{0}"}),
            "description",
        ),
        (
            Method::POST,
            routes::projects(),
            json!({"name": "ok", "metadata": {"k": {"x": ["y", "z\u{0}"]}}}),
            "metadata.k.x[1]",
        ),
        (
            Method::POST,
            routes::projects(),
            json!({"name": "ok", "settings": {"\u{0}": 1}}),
            "settings.\\0",
        ),
        (
            Method::PUT,
            routes::projects(),
            json!({"id": project_id, "name": "x\u{0}"}),
            "name",
        ),
        (
            Method::POST,
            routes::project_subprojects(&project_id),
            json!({"name": "\u{0}"}),
            "name",
        ),
        (
            Method::POST,
            routes::hierarchy(&project_id),
            json!({"actions": [{"type": "PathActionCreate", "path": "a/\u{0}", "isFolder": true}]}),
            "actions[0].path",
        ),
        (
            Method::POST,
            routes::tenants(),
            json!({"name": "t\u{0}"}),
            "name",
        ),
    ];
    for (method, path, body, field) in cases {
        let request = if path.starts_with("/api/admin") {
            app.back_office(method, &path)
        } else {
            app.request_as(As::Key, method, &path)
        };
        let response = request.json(&body).send().await.unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(
            problem["errors"][field].is_array(),
            "{path} {field}: {problem}"
        );
    }
    for query in ["namePrefix=a%00", "na%00mePrefix=a", "cursor=%00"] {
        let path = format!("{}?{query}", routes::project_list());
        let response = app
            .request_as(As::Key, Method::GET, &path)
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    }
    let list = app
        .send_as(As::Key, Method::GET, &routes::project_list(), None)
        .await;
    let list = expect_status(list, StatusCode::OK).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["data"][0]["name"], "P");
});

// Issue 9, fault 10: an api-version header that is not text was ignored.
api_test!(an_api_version_that_is_not_text_is_400, |app| {
    let response = app
        .with_key(Method::GET, &routes::project_list())
        .header(
            "api-version",
            reqwest::header::HeaderValue::from_bytes(b"3\xff").unwrap(),
        )
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
});

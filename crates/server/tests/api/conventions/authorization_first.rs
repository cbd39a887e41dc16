//! Every endpoint decides who may call it before it reads the body (issue 33): a caller
//! without the right gets the same 401, 403 or 404 for an empty, a malformed and a wrongly
//! shaped body, and so learns nothing of what the body should hold. `POST /api/iam/credit` by
//! an API key without BackOffice rights answered 400 for an incomplete body and 403 only for
//! a complete one.
//!
//! The test walks the OpenAPI document, so an operation added later is covered without
//! being named here. Paths name things the callers cannot reach: a Private project of the
//! bootstrap Owner, a dataset in it, the bootstrap tenant.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// Operations any authenticated caller may make: their body names everything they act on.
const OPEN_TO_ALL: &[&str] = &["POST /api/crs/project"];

/// Operations whose body names the project they act on, so that a member of a tenant may hold
/// the right for some body: a member without a role on the path's project still reads the
/// body. (A caller in no tenant and on no project is refused before.)
const BODY_NAMES_THE_PROJECT: &[&str] = &[
    "POST /api/metadata/project",
    "PUT /api/metadata/project",
    "PATCH /api/metadata/project",
    "PATCH /api/metadata/project/",
    "POST /api/conversion/upload-convert",
    "POST /api/transfer/upload-convert",
];

/// Bodies a caller without the right may send: none, not JSON, JSON of the wrong shape.
const BODIES: &[&str] = &["", "{\"", "[1]"];

/// What the paths of the walk name.
struct Targets {
    tenant: String,
    user: String,
    project: String,
    dataset: String,
}

impl Targets {
    /// `path` with its parameters filled in: `{id}` after `dataset` is the dataset, any other
    /// `{id}` the project.
    fn fill(&self, path: &str) -> String {
        let mut filled = Vec::new();
        let mut previous = "";
        for segment in path.split('/') {
            let value = match segment {
                "{tenantId}" => self.tenant.as_str(),
                "{userId}" => self.user.as_str(),
                "{projectId}" => self.project.as_str(),
                "{sourceId}" | "{targetId}" => self.dataset.as_str(),
                "{id}" if previous == "dataset" => self.dataset.as_str(),
                "{id}" => self.project.as_str(),
                "{featureId}" => "basin-test-feature",
                "{messageId}" => "1",
                other => {
                    assert!(!other.starts_with('{'), "no value for {other} in {path}");
                    other
                }
            };
            filled.push(value.to_owned());
            previous = segment;
        }
        filled.join("/")
    }
}

/// Who calls: no one, a user in no tenant, an API key with the User role in the tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    Anonymous,
    Outsider,
    TenantUser,
}

/// An operation of the OpenAPI document that takes a request body.
#[derive(Debug)]
struct Operation {
    method: Method,
    path: String,
    /// The header parameters it requires (`svc-project-id` names the tenant of the path).
    headers: Vec<String>,
}

/// Every operation of the OpenAPI document that takes a request body.
async fn operations_with_a_body(app: &TestApp) -> Vec<Operation> {
    let document = expect_status(
        app.anonymous(Method::GET, "/openapi.json")
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    let mut operations = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if operation.get("requestBody").is_some() {
                let headers = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|parameter| {
                        parameter["in"] == "header" && parameter["required"] == true
                    })
                    .map(|parameter| parameter["name"].as_str().unwrap().to_owned())
                    .collect();
                operations.push(Operation {
                    method: Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                    path: path.clone(),
                    headers,
                });
            }
        }
    }
    operations
}

api_test!(
    a_caller_without_the_right_gets_the_same_answer_whatever_the_body,
    |app| {
        let project = app
            .create_project(As::Key, "Private work", json!({"accessLevel": "Private"}))
            .await;
        let project = id_str(&project).to_owned();
        let dataset = expect_status(
            app.upload_file(&project, "notes.txt", b"0123456789".to_vec())
                .await,
            StatusCode::CREATED,
        )
        .await;
        let targets = Targets {
            tenant: app.tenant_id().to_string(),
            user: app.owner_id().to_string(),
            project,
            dataset: id_str(&dataset).to_owned(),
        };
        let (_, user_key) = app.create_api_key(app.tenant_id(), "User").await;
        let loner = app.create_user("Loner", None, "User").await;
        let loner_token = app.user_token(loner, None);
        let operations = operations_with_a_body(&app).await;
        assert!(operations.len() >= 49, "{operations:?}");
        let mut checked = 0;
        for Operation {
            method,
            path,
            headers,
        } in &operations
        {
            let name = format!("{method} {path}");
            let url = targets.fill(path);
            for caller in [Caller::Anonymous, Caller::Outsider, Caller::TenantUser] {
                let mut answers = Vec::new();
                for body in BODIES {
                    let mut request = app
                        .anonymous(method.clone(), &url)
                        .header("content-type", "application/json")
                        .body(body.to_owned());
                    for header in headers {
                        assert_eq!(header, "svc-project-id", "no value for {header} of {name}");
                        request = request.header(header, &targets.tenant);
                    }
                    let request = match caller {
                        Caller::Anonymous => request,
                        Caller::Outsider => request.bearer_auth(&loner_token),
                        Caller::TenantUser => request.header("svc-open-api-key", &user_key),
                    };
                    let response = request.send().await.unwrap();
                    let status = response.status();
                    let problem: Value = response.json().await.unwrap_or(Value::Null);
                    answers.push((status, problem["type"].clone()));
                }
                let open = OPEN_TO_ALL.contains(&name.as_str())
                    || (caller == Caller::TenantUser
                        && BODY_NAMES_THE_PROJECT.contains(&name.as_str()));
                // A caller with the right reads the body, and its problems differ by kind.
                let (status, kind) = answers[0].clone();
                assert!(
                    answers
                        .iter()
                        .all(|answer| answer.0 == status && (open || answer.1 == kind)),
                    "{name} as {caller:?}: the answer depends on the body: {answers:?}"
                );
                let expected: &[StatusCode] = match caller {
                    Caller::Anonymous => &[StatusCode::UNAUTHORIZED],
                    _ if open => &[StatusCode::BAD_REQUEST],
                    _ => &[StatusCode::FORBIDDEN, StatusCode::NOT_FOUND],
                };
                assert!(
                    expected.contains(&status),
                    "{name} as {caller:?}: {status} {kind}, expected one of {expected:?}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, operations.len() * 3);
    }
);

api_test!(
    an_api_key_without_back_office_rights_is_refused_credits_before_the_body_is_read,
    |app| {
        let (_, user_key) = app.create_api_key(app.tenant_id(), "User").await;
        let complete = json!({"credits": 1, "billingReference": {"billingReference": "r"},
            "expiresAt": "2099-12-31", "tenantId": app.tenant_id()});
        for body in [json!({}), json!({"credits": 1}), complete] {
            let response = app
                .anonymous(Method::POST, &routes::credits())
                .header("svc-open-api-key", &user_key)
                .json(&body)
                .send()
                .await
                .unwrap();
            expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        }
    }
);

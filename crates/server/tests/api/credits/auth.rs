//! Who may call what (docs/credits.md "Who may call what"), every row of the table for every
//! kind of caller, and the `api-version` the credit endpoints accept.

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::credits::*;
use crate::helpers::*;

/// Every kind of caller the table names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    BackOffice,
    CloudAdministrator,
    SpendScope,
    OwnerKey,
    OwnerToken,
    Member,
    Administrator,
    Outsider,
    Nobody,
}

const CALLERS: [Caller; 9] = [
    Caller::BackOffice,
    Caller::CloudAdministrator,
    Caller::SpendScope,
    Caller::OwnerKey,
    Caller::OwnerToken,
    Caller::Member,
    Caller::Administrator,
    Caller::Outsider,
    Caller::Nobody,
];

/// The credentials of each caller, for the bootstrap tenant.
struct Callers {
    cloud_administrator: String,
    spend_scope: String,
    owner_token: String,
    member: String,
    administrator: String,
    outsider_key: String,
}

impl Callers {
    async fn new(app: &TestApp) -> Self {
        let outsider_tenant = app.create_tenant("Outsiders").await;
        Self {
            cloud_administrator: cloud_admin_token(app),
            spend_scope: spend_scope_token(app),
            owner_token: app.user_token(app.owner_id(), Some(app.tenant_id())),
            member: app.person("member", "User").await.token,
            administrator: app.person("administrator", "Administrator").await.token,
            outsider_key: app.create_api_key(outsider_tenant, "Owner").await.1,
        }
    }

    fn request(&self, app: &TestApp, caller: Caller, method: Method, path: &str) -> RequestBuilder {
        let token = match caller {
            Caller::BackOffice => return back_office(app, method, path),
            Caller::OwnerKey => return app.with_key(method, path),
            Caller::Nobody => return app.anonymous(method, path),
            Caller::Outsider => {
                return app
                    .anonymous(method, path)
                    .header("svc-open-api-key", &self.outsider_key);
            }
            Caller::CloudAdministrator => &self.cloud_administrator,
            Caller::SpendScope => &self.spend_scope,
            Caller::OwnerToken => &self.owner_token,
            Caller::Member => &self.member,
            Caller::Administrator => &self.administrator,
        };
        app.with_token(method, path, token)
    }
}

/// What a caller gets: 200, or the problem's status and kind.
fn outcome(status: StatusCode) -> (StatusCode, &'static str) {
    match status {
        StatusCode::FORBIDDEN => (status, "forbidden"),
        StatusCode::NOT_FOUND => (status, "not-found"),
        StatusCode::UNAUTHORIZED => (status, "credentials-missing"),
        _ => (status, ""),
    }
}

/// Calls `method path` as every caller with the body `body(caller)` and checks the status
/// the table gives: `allowed` callers 200, members 403, the outsider `outsider`, and without
/// credentials 401.
async fn check_row(
    app: &TestApp,
    callers: &Callers,
    (method, path): (Method, &str),
    body: impl Fn(Caller) -> Option<Value>,
    allowed: &[Caller],
    outsider: StatusCode,
) {
    for caller in CALLERS {
        let expected = match caller {
            _ if allowed.contains(&caller) => StatusCode::OK,
            Caller::Nobody => StatusCode::UNAUTHORIZED,
            Caller::Outsider => outsider,
            _ => StatusCode::FORBIDDEN,
        };
        let mut request = callers.request(app, caller, method.clone(), path);
        if let Some(body) = body(caller) {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let (status, kind) = outcome(expected);
        if status == StatusCode::OK {
            let actual = response.status();
            let text = response.text().await.unwrap();
            assert_eq!(actual, status, "{caller:?} {method} {path}: {text}");
        } else {
            let problem = expect_problem(response, status, kind).await;
            assert_eq!(
                problem["status"],
                status.as_u16(),
                "{caller:?} {method} {path}"
            );
        }
    }
}

/// A name for the operations of `caller`.
fn op(prefix: &str, caller: Caller) -> String {
    format!("{prefix}-{caller:?}")
}

const ADMINS: &[Caller] = &[Caller::BackOffice, Caller::CloudAdministrator];
const SPENDERS: &[Caller] = &[
    Caller::BackOffice,
    Caller::CloudAdministrator,
    Caller::SpendScope,
];
const READERS: &[Caller] = &[
    Caller::BackOffice,
    Caller::CloudAdministrator,
    Caller::SpendScope,
    Caller::OwnerKey,
    Caller::OwnerToken,
];
const HISTORIANS: &[Caller] = &[
    Caller::BackOffice,
    Caller::CloudAdministrator,
    Caller::OwnerKey,
    Caller::OwnerToken,
];

api_test!(only_platform_administrators_add_and_move, |app| {
    let callers = Callers::new(&app).await;
    let tenant = app.tenant_id();
    add(&app, None, "100", "g", FAR).await;
    let added = |_| Some(serde_json::from_str(&add_text(Some(tenant), "1", "abc", FAR)).unwrap());
    let post = (Method::POST, &*routes::credits());
    check_row(&app, &callers, post, added, ADMINS, StatusCode::FORBIDDEN).await;
    let moved = |_| Some(json!({"credits": 1, "targetTenantId": tenant}));
    let put = (Method::PUT, &*routes::credit_move());
    check_row(&app, &callers, put, moved, ADMINS, StatusCode::FORBIDDEN).await;
    assert_eq!(
        balances(&app, Some(tenant)).await,
        statuses(4.0, 0.0, 0.0, 0.0)
    );
});

/// The operation `prefix` made for `caller` when it may use credits, else BackOffice's (which
/// the refused caller must not touch).
fn own(prefix: &str, caller: Caller) -> String {
    op(
        prefix,
        if SPENDERS.contains(&caller) {
            caller
        } else {
            Caller::BackOffice
        },
    )
}

api_test!(
    services_with_the_spend_scope_reserve_spend_and_release,
    |app| {
        let callers = Callers::new(&app).await;
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "100", "abc", FAR).await;
        for caller in SPENDERS {
            reserve_ok(&app, tenant, 1.0, &op("release", *caller)).await;
            reserve_ok(&app, tenant, 1.0, &op("spend", *caller)).await;
        }
        let forbidden = StatusCode::FORBIDDEN;
        let reserved = |caller| {
            Some(json!({"credits": 1, "tenantId": tenant, "operationId": op("reserve", caller)}))
        };
        let put = (Method::PUT, &*routes::credit_reserve());
        check_row(&app, &callers, put, reserved, SPENDERS, forbidden).await;
        let spent = |caller| Some(json!({"tenantId": tenant, "operationId": own("spend", caller)}));
        let put = (Method::PUT, &*routes::credit_spend());
        check_row(&app, &callers, put, spent, SPENDERS, forbidden).await;
        let direct = |caller| {
            let operation = op("direct", caller);
            Some(
                json!({"tenantId": tenant, "operationId": operation, "credits": 1, "direct": true}),
            )
        };
        let put = (Method::PUT, &*routes::credit_spend());
        check_row(&app, &callers, put, direct, SPENDERS, forbidden).await;
        let released =
            |caller| Some(json!({"tenantId": tenant, "operationId": own("release", caller)}));
        let put = (Method::PUT, &*routes::credit_release());
        check_row(&app, &callers, put, released, SPENDERS, forbidden).await;
        assert_eq!(
            balances(&app, Some(tenant)).await,
            statuses(91.0, 3.0, 6.0, 0.0)
        );
    }
);

api_test!(
    a_tenants_balances_are_shown_to_its_owners_and_services,
    |app| {
        let callers = Callers::new(&app).await;
        let tenant = app.tenant_id();
        add(&app, Some(tenant), "10", "abc", FAR).await;
        reserve_ok(&app, tenant, 1.0, "run").await;
        let none = |_| None;
        let by_body = |_| Some(json!({"tenantId": tenant}));
        let breakdown = routes::tenant_credits(tenant);
        check_row(
            &app,
            &callers,
            (Method::GET, &breakdown),
            none,
            READERS,
            StatusCode::NOT_FOUND,
        )
        .await;
        let run = routes::credit_operation(tenant, "run");
        check_row(
            &app,
            &callers,
            (Method::GET, &run),
            none,
            READERS,
            StatusCode::NOT_FOUND,
        )
        .await;
        for path in [
            &routes::credit_details(),
            &routes::credit_details_extended(),
        ] {
            check_row(
                &app,
                &callers,
                (Method::POST, path),
                by_body,
                READERS,
                StatusCode::NOT_FOUND,
            )
            .await;
        }
        for path in ["journal", "audit"] {
            let path = format!("/api/iam/credit/{tenant}/{path}");
            check_row(
                &app,
                &callers,
                (Method::GET, &path),
                none,
                HISTORIANS,
                StatusCode::NOT_FOUND,
            )
            .await;
        }
    }
);

api_test!(
    the_generic_pool_is_shown_to_platform_administrators_only,
    |app| {
        let callers = Callers::new(&app).await;
        add(&app, None, "10", "g", FAR).await;
        let none = |_| None;
        for (method, path) in [
            (Method::POST, &routes::unassigned_credits()),
            (Method::GET, &routes::unassigned_credits()),
            (Method::POST, &routes::unassigned_credit_details()),
            (Method::GET, &routes::unassigned_credit_journal()),
        ] {
            check_row(
                &app,
                &callers,
                (method, path),
                none,
                ADMINS,
                StatusCode::FORBIDDEN,
            )
            .await;
        }
    }
);

api_test!(
    a_tenant_that_does_not_exist_is_404_for_those_who_may_read,
    |app| {
        let callers = Callers::new(&app).await;
        let stranger = Uuid::new_v4();
        for caller in CALLERS {
            for suffix in ["", "/operation/run", "/journal", "/audit"] {
                let path = format!("/api/iam/credit/{stranger}{suffix}");
                let response = callers
                    .request(&app, caller, Method::GET, &path)
                    .send()
                    .await
                    .unwrap();
                let history = suffix == "/journal" || suffix == "/audit";
                let expected = match caller {
                    Caller::Nobody => (StatusCode::UNAUTHORIZED, "credentials-missing"),
                    Caller::SpendScope if history => (StatusCode::FORBIDDEN, "forbidden"),
                    _ => (StatusCode::NOT_FOUND, "not-found"),
                };
                expect_problem(response, expected.0, expected.1).await;
            }
        }
    }
);

/// `GET /api/iam/credit/{tenant}` as BackOffice with `api-version: version`, when given.
async fn with_version(app: &TestApp, version: Option<&str>) -> reqwest::Response {
    let mut request = back_office(app, Method::GET, &routes::tenant_credits(app.tenant_id()));
    if let Some(version) = version {
        request = request.header("api-version", version);
    }
    request.send().await.unwrap()
}

api_test!(the_credit_endpoints_speak_api_version_4_only, |app| {
    for version in [None, Some("4"), Some("4.0"), Some(" 4 ")] {
        let response = with_version(&app, version).await;
        let supported = response.headers().get("api-supported-versions").cloned();
        assert_eq!(supported.unwrap(), "4.0", "{version:?}");
        expect_status(response, StatusCode::OK).await;
    }
    for version in ["3", "3.0", "1", "5", "4.1", "four"] {
        let response = with_version(&app, Some(version)).await;
        let problem =
            expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
        assert_eq!(problem["supportedVersions"], json!(["4.0"]), "{version}");
    }
    let query = format!("{}?api-version=3", routes::tenant_credits(app.tenant_id()));
    let response = back_office(&app, Method::GET, &query).send().await.unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
    let refused = back_office(&app, Method::PUT, &routes::credit_reserve())
        .header("api-version", "3")
        .json(&json!({"credits": 1, "tenantId": app.tenant_id()}))
        .send()
        .await
        .unwrap();
    expect_problem(refused, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
    let response = app
        .anonymous(Method::POST, &routes::credits())
        .send()
        .await
        .unwrap();
    let supported = response.headers().get("api-supported-versions").cloned();
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-missing").await;
    assert_eq!(supported.unwrap(), "4.0");
});

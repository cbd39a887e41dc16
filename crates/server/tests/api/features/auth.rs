//! Who may read and write feature messages (docs/features.md, "Who may do
//! what"): scopes, the BackOffice role, a token's client_id, API keys and anonymous callers.

use basin::TokenRequest;
use chrono::TimeDelta;
use reqwest::{Method, StatusCode};
use uuid::Uuid;

use super::{active_message, create_id, list_ids};
use crate::helpers::*;

/// The list (and create) path of `feature`'s messages, or of the global ones for `None`.
fn messages_path(feature: Option<&str>) -> String {
    match feature {
        Some(feature) => routes::feature_messages(feature),
        None => routes::global_messages(),
    }
}

fn token(app: &TestApp, back_office: bool, scopes: &[&str], client_id: Option<&str>) -> String {
    app.token(TokenRequest {
        subject: Uuid::new_v4(),
        roles: if back_office {
            vec!["BackOffice".into()]
        } else {
            Vec::new()
        },
        scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
        client_id: client_id.map(str::to_owned),
        ttl: TimeDelta::hours(1),
        ..Default::default()
    })
}

async fn status_of(app: &TestApp, token: &str, method: Method, path: &str) -> StatusCode {
    let mut request = app.with_token(method.clone(), path, token);
    if method == Method::POST || method == Method::PATCH {
        request = request.json(&active_message(app, "Warning", "t"));
    }
    request.send().await.unwrap().status()
}

api_test!(
    reading_needs_the_read_scope_and_a_feature_needs_back_office_or_its_client,
    |app| {
        let own = create_id(
            &app,
            Some("Platform"),
            &active_message(&app, "Warning", "own"),
        )
        .await;
        let global = create_id(&app, None, &active_message(&app, "Warning", "global")).await;
        let feature = messages_path(Some("Platform"));
        let globals = messages_path(None);
        let cases = [
            (
                token(&app, true, &[FEATURE_STATUS_READ], None),
                StatusCode::OK,
                StatusCode::OK,
            ),
            (
                token(&app, true, &[FEATURE_STATUS_READWRITE], None),
                StatusCode::OK,
                StatusCode::OK,
            ),
            (
                token(&app, true, &[], None),
                StatusCode::FORBIDDEN,
                StatusCode::FORBIDDEN,
            ),
            (
                token(&app, false, &[FEATURE_STATUS_READ], Some("Platform")),
                StatusCode::OK,
                StatusCode::OK,
            ),
            (
                token(&app, false, &[FEATURE_STATUS_READWRITE], Some("Platform")),
                StatusCode::OK,
                StatusCode::OK,
            ),
            (
                token(&app, false, &[FEATURE_STATUS_READ], Some("Other")),
                StatusCode::FORBIDDEN,
                StatusCode::OK,
            ),
            (
                token(&app, false, &[FEATURE_STATUS_READ], Some("platform")),
                StatusCode::FORBIDDEN,
                StatusCode::OK,
            ),
            (
                token(&app, false, &[FEATURE_STATUS_READ], None),
                StatusCode::FORBIDDEN,
                StatusCode::OK,
            ),
            (
                token(&app, false, &[], Some("Platform")),
                StatusCode::FORBIDDEN,
                StatusCode::FORBIDDEN,
            ),
        ];
        for (index, (token, on_feature, on_global)) in cases.iter().enumerate() {
            assert_eq!(
                status_of(&app, token, Method::GET, &feature).await,
                *on_feature,
                "case {index}"
            );
            assert_eq!(
                status_of(&app, token, Method::GET, &globals).await,
                *on_global,
                "case {index}"
            );
        }
        let client = token(&app, false, &[FEATURE_STATUS_READ], Some("Platform"));
        let response = app
            .with_token(Method::GET, &feature, &client)
            .send()
            .await
            .unwrap();
        let page = expect_status(response, StatusCode::OK).await;
        let ids: Vec<i64> = page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids.len(), 2);
        assert!(ids.contains(&own) && ids.contains(&global));
        let denied = app
            .with_token(Method::GET, &messages_path(Some("Other")), &client)
            .send()
            .await
            .unwrap();
        expect_problem(denied, StatusCode::FORBIDDEN, "forbidden").await;
    }
);

api_test!(a_uuid_client_id_matches_its_feature_in_any_case, |app| {
    let feature = Uuid::new_v4();
    create_id(
        &app,
        Some(&feature.to_string()),
        &active_message(&app, "Warning", "x"),
    )
    .await;
    let upper = feature.to_string().to_uppercase();
    let client = token(&app, false, &[FEATURE_STATUS_READ], Some(&upper));
    let path = messages_path(Some(&feature.to_string()));
    assert_eq!(
        status_of(&app, &client, Method::GET, &path).await,
        StatusCode::OK
    );
    let path = messages_path(Some(&upper));
    assert_eq!(
        status_of(&app, &client, Method::GET, &path).await,
        StatusCode::OK
    );
});

api_test!(writing_needs_the_readwrite_scope_and_back_office, |app| {
    let id = create_id(
        &app,
        Some("Platform"),
        &active_message(&app, "Warning", "x"),
    )
    .await;
    let global = create_id(&app, None, &active_message(&app, "Warning", "g")).await;
    let denied = [
        token(&app, true, &[FEATURE_STATUS_READ], None),
        token(&app, true, &[], None),
        token(&app, false, &[FEATURE_STATUS_READWRITE], Some("Platform")),
        token(
            &app,
            false,
            &[FEATURE_STATUS_READ, FEATURE_STATUS_READWRITE],
            None,
        ),
    ];
    let writes = [
        (Method::POST, messages_path(Some("Platform"))),
        (
            Method::PATCH,
            format!("{}/{id}", messages_path(Some("Platform"))),
        ),
        (
            Method::DELETE,
            format!("{}/{id}", messages_path(Some("Platform"))),
        ),
        (Method::POST, messages_path(None)),
        (Method::PATCH, format!("{}/{global}", messages_path(None))),
        (Method::DELETE, format!("{}/{global}", messages_path(None))),
    ];
    for token in &denied {
        for (method, path) in &writes {
            assert_eq!(
                status_of(&app, token, method.clone(), path).await,
                StatusCode::FORBIDDEN,
                "{method} {path}"
            );
        }
    }
    let cloud_admin = app.token(TokenRequest {
        subject: Uuid::new_v4(),
        roles: vec!["CloudAdministrator".into()],
        scopes: vec![FEATURE_STATUS_READWRITE.into()],
        ttl: TimeDelta::hours(1),
        ..Default::default()
    });
    let allowed = [StatusCode::CREATED, StatusCode::OK, StatusCode::NO_CONTENT];
    for (index, (method, path)) in writes.iter().enumerate() {
        let status = status_of(&app, &cloud_admin, method.clone(), path).await;
        assert_eq!(status, allowed[index % 3], "{method} {path}");
    }
    let left = list_ids(&app, Some("Platform"), "expiry=All").await;
    assert_eq!(
        left.len(),
        2,
        "only the two messages the CloudAdministrator created remain"
    );
});

api_test!(
    api_keys_and_anonymous_callers_cannot_use_the_message_endpoints,
    |app| {
        let id = create_id(
            &app,
            Some("Platform"),
            &active_message(&app, "Warning", "x"),
        )
        .await;
        let calls = [
            (Method::GET, messages_path(Some("Platform"))),
            (Method::POST, messages_path(Some("Platform"))),
            (
                Method::PATCH,
                format!("{}/{id}", messages_path(Some("Platform"))),
            ),
            (
                Method::DELETE,
                format!("{}/{id}", messages_path(Some("Platform"))),
            ),
            (Method::GET, messages_path(None)),
            (Method::POST, messages_path(None)),
        ];
        for (method, path) in &calls {
            let with_key = app
                .with_key(method.clone(), path)
                .json(&active_message(&app, "Warning", "t"))
                .send()
                .await
                .unwrap();
            expect_problem(with_key, StatusCode::FORBIDDEN, "forbidden").await;
            let anonymous = app
                .anonymous(method.clone(), path)
                .json(&active_message(&app, "Warning", "t"))
                .send()
                .await
                .unwrap();
            expect_problem(anonymous, StatusCode::UNAUTHORIZED, "credentials-missing").await;
        }
        let left = list_ids(&app, Some("Platform"), "expiry=All").await;
        assert_eq!(left, [id], "nothing changed");
    }
);

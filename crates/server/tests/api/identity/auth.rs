//! Authentication through HTTP: every way a credential can fail (401, with a distinct problem
//! type per kind), API keys, Basin's HS256 tokens, and RS256/ES256 tokens from an OIDC
//! provider's JWKS (file and URL). Valid but insufficient credentials are 403.

use basin::OidcConfig;
use basin::TokenRequest;
use chrono::TimeDelta;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const ISSUER: &str = "https://idp.test/realms/basin";
const AUDIENCE: &str = "basin-api";

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jwks")
        .join(name)
}

async fn me_with_key(app: &TestApp, key: &str) -> reqwest::Response {
    app.anonymous(Method::GET, &routes::principal_me())
        .header("svc-open-api-key", key)
        .send()
        .await
        .unwrap()
}

async fn me_with_token(app: &TestApp, token: &str) -> reqwest::Response {
    app.with_token(Method::GET, &routes::principal_me(), token)
        .send()
        .await
        .unwrap()
}

fn sign(claims: &Value, algorithm: Algorithm, kid: Option<&str>, key: &EncodingKey) -> String {
    let mut header = Header::new(algorithm);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn hs_claims(app: &TestApp) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({
        "iss": app.config.auth.issuer, "aud": app.config.auth.audience,
        "sub": app.owner_id().to_string(), "exp": now + 600, "iat": now,
    })
}

api_test!(missing_credentials_are_401_with_www_authenticate, |app| {
    let response = app
        .anonymous(Method::GET, &routes::principal_me())
        .send()
        .await
        .unwrap();
    assert!(response.headers().contains_key("www-authenticate"));
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-missing").await;
});

api_test!(malformed_and_unknown_api_keys_are_401, |app| {
    for key in ["not-a-uuid", "", "0000"] {
        expect_problem(
            me_with_key(&app, key).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
    }
    let unknown = Uuid::new_v4().to_string();
    let problem = expect_problem(
        me_with_key(&app, &unknown).await,
        StatusCode::UNAUTHORIZED,
        "credentials-invalid",
    )
    .await;
    assert!(
        problem["detail"].as_str().unwrap().contains("not known"),
        "{problem}"
    );
});

api_test!(api_keys_are_accepted_in_any_letter_case, |app| {
    let upper = app.bootstrap.api_key.to_uppercase();
    expect_status(me_with_key(&app, &upper).await, StatusCode::OK).await;
});

api_test!(a_revoked_api_key_is_401_revoked, |app| {
    let (key_id, key) = app.create_api_key(app.tenant_id(), "User").await;
    expect_status(me_with_key(&app, &key).await, StatusCode::OK).await;
    let tenant = app.as_back_office().admin().tenant(app.tenant_id());
    let response = tenant.revoke_api_key(key_id).await;
    expect_status(response, StatusCode::NO_CONTENT).await;
    expect_problem(
        me_with_key(&app, &key).await,
        StatusCode::UNAUTHORIZED,
        "credentials-revoked",
    )
    .await;
});

api_test!(malformed_bearer_tokens_and_other_schemes_are_401, |app| {
    for authorization in [
        "Bearer",
        "Bearer ",
        "Bearer abc",
        "Bearer a.b.c",
        "Basic dXNlcjpwYXNz",
        "Token x",
    ] {
        let response = app
            .anonymous(Method::GET, &routes::principal_me())
            .header("authorization", authorization)
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-invalid").await;
    }
    let huge = format!("Bearer {}", "a".repeat(20_000));
    let response = app
        .anonymous(Method::GET, &routes::principal_me())
        .header("authorization", huge)
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-invalid").await;
});

api_test!(
    tokens_signed_with_another_secret_or_for_another_issuer_or_audience_are_401,
    |app| {
        let claims = hs_claims(&app);
        let wrong_key = EncodingKey::from_secret(b"another-secret-another-secret-another-secret");
        let problem = expect_problem(
            me_with_token(&app, &sign(&claims, Algorithm::HS256, None, &wrong_key)).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
        assert!(
            problem["detail"].as_str().unwrap().contains("signature"),
            "{problem}"
        );
        let key = EncodingKey::from_secret(TEST_SECRET.as_bytes());
        for (claim, value) in [("iss", "someone-else"), ("aud", "another-api")] {
            let mut claims = claims.clone();
            claims[claim] = value.into();
            expect_problem(
                me_with_token(&app, &sign(&claims, Algorithm::HS256, None, &key)).await,
                StatusCode::UNAUTHORIZED,
                "credentials-invalid",
            )
            .await;
        }
        // HS384 with the right secret is still not an accepted algorithm.
        expect_problem(
            me_with_token(&app, &sign(&claims, Algorithm::HS384, None, &key)).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
        // No exp, and a sub that is not a UUID.
        let mut no_exp = claims.clone();
        no_exp.as_object_mut().unwrap().remove("exp");
        expect_problem(
            me_with_token(&app, &sign(&no_exp, Algorithm::HS256, None, &key)).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
        let mut bad_sub = claims.clone();
        bad_sub["sub"] = "alice".into();
        expect_problem(
            me_with_token(&app, &sign(&bad_sub, Algorithm::HS256, None, &key)).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
        // An unsigned token (alg none).
        let unsigned = format!(
            "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{}.",
            base64_url(&serde_json::to_vec(&claims).unwrap())
        );
        expect_problem(
            me_with_token(&app, &unsigned).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
    }
);

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

api_test!(expired_and_not_yet_valid_tokens_are_401_expired, |app| {
    let token = app.user_token(app.owner_id(), Some(app.tenant_id()));
    expect_status(me_with_token(&app, &token).await, StatusCode::OK).await;
    app.clock.advance(TimeDelta::hours(2));
    let problem = expect_problem(
        me_with_token(&app, &token).await,
        StatusCode::UNAUTHORIZED,
        "credentials-expired",
    )
    .await;
    assert!(
        problem["detail"].as_str().unwrap().contains("expired"),
        "{problem}"
    );
    // Issued two hours "ago" from the test's point of view: nbf lies in the app's future.
    app.clock.advance(TimeDelta::hours(-4));
    let problem = expect_problem(
        me_with_token(&app, &token).await,
        StatusCode::UNAUTHORIZED,
        "credentials-expired",
    )
    .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("not valid yet"),
        "{problem}"
    );
});

api_test!(
    a_disabled_users_tokens_are_401_revoked_until_enabled_again,
    |app| {
        let user = app.create_user("Dora", Some(app.tenant_id()), "User").await;
        let token = app.user_token(user, None);
        expect_status(me_with_token(&app, &token).await, StatusCode::OK).await;
        let as_back_office = app.as_back_office().admin();
        let response = as_back_office
            .patch_user(user, &json!({"disabled": true}))
            .await;
        assert_eq!(
            expect_status(response, StatusCode::OK).await["disabled"],
            true
        );
        expect_problem(
            me_with_token(&app, &token).await,
            StatusCode::UNAUTHORIZED,
            "credentials-revoked",
        )
        .await;
        let response = as_back_office
            .patch_user(user, &json!({"disabled": false}))
            .await;
        expect_status(response, StatusCode::OK).await;
        expect_status(me_with_token(&app, &token).await, StatusCode::OK).await;
    }
);

api_test!(the_bearer_token_wins_over_the_api_key, |app| {
    let response = app
        .anonymous(Method::GET, &routes::principal_me())
        .bearer_auth(&app.bootstrap.user_token)
        .header("svc-open-api-key", Uuid::new_v4().to_string())
        .send()
        .await
        .unwrap();
    let me = expect_status(response, StatusCode::OK).await;
    assert_eq!(me["principalType"], "UserIdentity");
    let response = app
        .anonymous(Method::GET, &routes::principal_me())
        .bearer_auth("garbage")
        .header("svc-open-api-key", &app.bootstrap.api_key)
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-invalid").await;
});

api_test!(valid_but_insufficient_credentials_are_403, |app| {
    for request in [
        app.with_key(Method::POST, &routes::tenants()),
        app.with_token(Method::POST, &routes::tenants(), &app.bootstrap.user_token),
    ] {
        let response = request.json(&json!({"name": "Nope"})).send().await.unwrap();
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
});

api_test!(roles_and_scopes_are_parsed_from_the_token, |app| {
    let token = app.token(TokenRequest {
        subject: app.owner_id(),
        roles: vec!["cloudadministrator".into(), "SomethingElse".into()],
        scopes: vec!["platform_iam_featurestatus_read  extra.scope".into()],
        client_id: Some("my-app".into()),
        ttl: TimeDelta::minutes(5),
        ..Default::default()
    });
    let me = expect_status(me_with_token(&app, &token).await, StatusCode::OK).await;
    assert_eq!(me["platformRoles"], json!(["CloudAdministrator"]));
    assert_eq!(
        me["scopes"],
        json!(["extra.scope", "platform_iam_featurestatus_read"])
    );
    // CloudAdministrator may administer like BackOffice.
    let response = app
        .with_token(Method::POST, &routes::tenants(), &token)
        .json(&json!({"name": "By cloud admin"}))
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::CREATED).await;
});

fn oidc_config(jwks_url: Option<String>) -> impl FnOnce(&mut basin::Config) {
    move |config| {
        config.auth.oidc = Some(OidcConfig {
            issuer: ISSUER.into(),
            audience: vec![AUDIENCE.into()],
            jwks_file: jwks_url.is_none().then(|| fixture("jwks.json")),
            jwks_url,
            jwks_cache_ttl_seconds: std::time::Duration::from_secs(600),
        });
    }
}

fn oidc_claims(subject: Uuid, tenant: Uuid) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({
        "iss": ISSUER, "aud": [AUDIENCE, "account"], "sub": subject.to_string(),
        "exp": now + 600, "iat": now, "tenant_id": tenant.to_string(),
        "realm_access": {"roles": ["BackOffice", "offline_access"]},
        "scope": "openid platform_iam_featurestatus_read", "azp": "keycloak-client",
        "preferred_username": "kc-user", "email": "kc@example.com",
    })
}

async fn check_oidc(app: &TestApp) {
    let rsa =
        EncodingKey::from_rsa_pem(&std::fs::read(fixture("rsa-private.pem")).unwrap()).unwrap();
    let ec = EncodingKey::from_ec_pem(&std::fs::read(fixture("ec-private.pem")).unwrap()).unwrap();
    let subject = Uuid::new_v4();
    let claims = oidc_claims(subject, app.tenant_id());
    for token in [
        sign(&claims, Algorithm::RS256, Some("rsa-test"), &rsa),
        sign(&claims, Algorithm::ES256, Some("ec-test"), &ec),
    ] {
        let me = expect_status(me_with_token(app, &token).await, StatusCode::OK).await;
        assert_eq!(me["id"], subject.to_string());
        assert_eq!(me["name"], "kc-user");
        assert_eq!(me["email"], "kc@example.com");
        assert_eq!(me["platformRoles"], json!(["BackOffice"]));
        assert_eq!(me["tenantId"], app.tenant_id().to_string());
    }
    // Signed by the RSA key but naming the EC key id, an unknown key id, a wrong issuer or
    // audience: all 401.
    let failures = [
        sign(&claims, Algorithm::RS256, Some("ec-test"), &rsa),
        sign(&claims, Algorithm::RS256, Some("rotated-away"), &rsa),
        sign(
            &{
                let mut c = claims.clone();
                c["iss"] = "https://evil.test".into();
                c
            },
            Algorithm::RS256,
            Some("rsa-test"),
            &rsa,
        ),
        sign(
            &{
                let mut c = claims.clone();
                c["aud"] = "other".into();
                c
            },
            Algorithm::ES256,
            Some("ec-test"),
            &ec,
        ),
    ];
    for token in failures {
        expect_problem(
            me_with_token(app, &token).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
    }
}

api_test_with!(
    oidc_tokens_are_verified_against_a_jwks_file,
    oidc_config(None),
    |app| {
        check_oidc(&app).await;
    }
);

async fn serve_jwks() -> String {
    let jwks = std::fs::read_to_string(fixture("jwks.json")).unwrap();
    let router = axum::Router::new().route(
        "/certs",
        axum::routing::get(move || {
            let jwks = jwks.clone();
            async move { ([("content-type", "application/json")], jwks) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}/certs")
}

api_test_with!(
    oidc_tokens_are_verified_against_a_jwks_url,
    oidc_config(Some(serve_jwks().await)),
    |app| {
        check_oidc(&app).await;
    }
);

api_test!(
    rs256_tokens_are_refused_when_no_identity_provider_is_configured,
    |app| {
        let rsa =
            EncodingKey::from_rsa_pem(&std::fs::read(fixture("rsa-private.pem")).unwrap()).unwrap();
        let token = sign(
            &oidc_claims(Uuid::new_v4(), app.tenant_id()),
            Algorithm::RS256,
            Some("rsa-test"),
            &rsa,
        );
        let problem = expect_problem(
            me_with_token(&app, &token).await,
            StatusCode::UNAUTHORIZED,
            "credentials-invalid",
        )
        .await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("identity provider"),
            "{problem}"
        );
    }
);

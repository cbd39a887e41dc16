//! `GET /api/iam/principal/me` and `GET /api/iam/tenant/my` (docs/authentication.md#the-caller).

mod access_cache;
mod admin;
mod auth;
mod permissions;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

api_test!(principal_me_describes_an_api_key, |app| {
    let me = expect_status(app.iam().principal_me().await, StatusCode::OK).await;
    assert_eq!(me["principalType"], "OpenAPIAccount");
    assert_eq!(me["role"], "Owner");
    assert_eq!(me["tenantId"], app.tenant_id().to_string());
    assert_eq!(me["name"], "Bootstrap key");
    for field in ["id", "name", "email", "role", "tenantId"] {
        assert!(me.get(field).is_some(), "{field} missing: {me}");
    }
});

api_test!(principal_me_describes_users_and_back_office, |app| {
    let me = expect_status(
        app.by(As::Token(&app.bootstrap.user_token))
            .iam()
            .principal_me()
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(me["id"], app.owner_id().to_string());
    assert_eq!(me["principalType"], "UserIdentity");
    assert_eq!(me["role"], "Owner");
    assert_eq!(me["name"], "Owner");
    let me = expect_status(
        app.as_back_office().iam().principal_me().await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(me["platformRoles"], json!(["BackOffice"]));
    assert!(
        me["scopes"]
            .as_array()
            .unwrap()
            .contains(&json!("platform_iam_featurestatus_readwrite"))
    );
});

api_test!(
    tenant_my_lists_every_tenant_of_a_user_with_its_role,
    |app| {
        let second = app.create_tenant("Second site").await;
        let user = app
            .create_user("Multi", Some(app.tenant_id()), "User")
            .await;
        let response = app
            .as_back_office()
            .admin()
            .tenant(second)
            .add_member(&json!({"userId": user, "role": "Administrator"}))
            .await;
        expect_status(response, StatusCode::CREATED).await;
        // A token without a tenant claim: the user belongs to two tenants, so it acts in none.
        let token = app.user_token(user, None);
        let mine = expect_status(
            app.by(As::Token(&token)).iam().my_tenants().await,
            StatusCode::OK,
        )
        .await;
        let entries = mine["data"].as_array().unwrap();
        assert_eq!(entries.len(), 2);
        let second_entry = entries
            .iter()
            .find(|t| t["id"] == second.to_string())
            .unwrap();
        assert_eq!(second_entry["name"], "Second site");
        assert_eq!(second_entry["role"], "Administrator");
        for field in ["id", "name", "role", "createdAt", "updatedAt"] {
            assert!(second_entry.get(field).is_some(), "{field} missing");
        }
        let me = expect_status(
            app.by(As::Token(&token)).iam().principal_me().await,
            StatusCode::OK,
        )
        .await;
        assert!(
            me.get("tenantId").is_none() || me["tenantId"].is_null(),
            "{me}"
        );
        // With a tenant claim the user acts in that tenant with its role there.
        let token = app.user_token(user, Some(second));
        let me = expect_status(
            app.by(As::Token(&token)).iam().principal_me().await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(me["tenantId"], second.to_string());
        assert_eq!(me["role"], "Administrator");
    }
);

api_test!(tenant_my_of_an_api_key_is_its_tenant, |app| {
    let mine = expect_status(app.iam().my_tenants().await, StatusCode::OK).await;
    assert_eq!(mine["data"].as_array().unwrap().len(), 1);
    assert_eq!(mine["data"][0]["id"], app.tenant_id().to_string());
    assert_eq!(mine["data"][0]["name"], "Default tenant");
    assert_eq!(mine["data"][0]["role"], "Owner");
});

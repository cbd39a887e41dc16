//! The administration API: BackOffice manages everything; tenant Owners and Administrators
//! manage their own tenant's users, members and API keys.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

api_test!(back_office_creates_lists_and_gets_tenants, |app| {
    let id = app.create_tenant("  Delta Water  ").await;
    let tenant = expect_status(
        app.as_back_office().admin().tenant(id).get().await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(tenant["name"], "Delta Water", "names are trimmed");
    let list = expect_status(
        app.as_back_office().admin().tenants("").await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2);
    assert!(list["cursor"].is_null());
});

api_test!(tenant_names_are_validated_at_and_past_the_limit, |app| {
    for (name, status) in [
        ("x".repeat(200), StatusCode::CREATED),
        ("x".repeat(201), StatusCode::BAD_REQUEST),
        ("   ".to_owned(), StatusCode::BAD_REQUEST),
    ] {
        let response = app
            .as_back_office()
            .admin()
            .create_tenant(&json!({"name": name}))
            .await;
        if status == StatusCode::BAD_REQUEST {
            let problem = expect_problem(response, status, "validation").await;
            assert!(problem["errors"]["name"].is_array(), "{problem}");
        } else {
            expect_status(response, status).await;
        }
    }
});

api_test!(owners_see_and_manage_only_their_own_tenant, |app| {
    let other = app.create_tenant("Other").await;
    // The bootstrap key is Owner of the default tenant.
    let list = expect_status(app.admin().tenants("").await, StatusCode::OK).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    let response = app.admin().tenant(other).get().await;
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    let response = app.admin().tenant(other).members("").await;
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    let response = app
        .admin()
        .tenant(other)
        .create_api_key(&json!({"name": "sneaky"}))
        .await;
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    // A plain member of the tenant sees it exists but may not manage it.
    let (_, user_key) = app.create_api_key(app.tenant_id(), "User").await;
    let as_user = app.by(As::ApiKey(&user_key)).admin();
    let response = as_user.tenant(app.tenant_id()).members("").await;
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
});

api_test!(
    owners_create_users_in_their_tenant_and_e_mails_are_unique,
    |app| {
        // Only platform admins set e-mail addresses (issue 9, fault 4).
        let response = app
            .admin()
            .create_user(
                &json!({"name": "Eve", "email": "Eve@Example.com", "tenantId": app.tenant_id()}),
            )
            .await;
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"]["email"].is_array(), "{problem}");
        let response = app
            .as_back_office()
            .admin()
            .create_user(
                &json!({"name": "Eve", "email": "Eve@Example.com", "tenantId": app.tenant_id()}),
            )
            .await;
        let eve = expect_status(response, StatusCode::CREATED).await;
        let response = app
            .as_back_office()
            .admin()
            .create_user(&json!({"name": "Eve 2", "email": "eve@example.COM"}))
            .await;
        expect_problem(response, StatusCode::CONFLICT, "email-taken").await;
        // Owners must name their tenant; the e-mail must look like one.
        let response = app.admin().create_user(&json!({"name": "No tenant"})).await;
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"]["tenantId"].is_array(), "{problem}");
        let response = app
            .as_back_office()
            .admin()
            .create_user(&json!({"name": "X", "email": "nope"}))
            .await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        // The owner lists the users of its tenant.
        let users = expect_status(app.admin().users("").await, StatusCode::OK).await;
        let names: Vec<&str> = users["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["Eve", "Owner"]);
        let id = eve["id"].as_str().unwrap();
        expect_status(app.admin().user(id).await, StatusCode::OK).await;
        // Only platform admins change users.
        let response = app.admin().patch_user(id, &json!({"name": "Evil"})).await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
);

api_test!(
    members_are_added_changed_and_removed_with_role_rules,
    |app| {
        let tenant = app.tenant_id();
        let admin = app.admin().tenant(tenant);
        let ann = app.create_user("Ann", None, "User").await;
        let response = admin
            .add_member(&json!({"userId": ann, "role": "Administrator"}))
            .await;
        let member = expect_status(response, StatusCode::CREATED).await;
        assert_eq!(member["role"], "Administrator");
        assert_eq!(member["principalType"], "UserIdentity");
        let response = admin.add_member(&json!({"userId": ann})).await;
        expect_problem(response, StatusCode::CONFLICT, "already-member").await;
        let response = admin.add_member(&json!({})).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        let response = admin
            .add_member(&json!({"email": "nobody@example.com"}))
            .await;
        let invitation = expect_status(response, StatusCode::ACCEPTED).await;
        assert_eq!(invitation["status"], "Pending");

        // An Administrator may add Users but not grant Owner, nor demote or remove an Owner.
        let ann_token = app.user_token(ann, Some(tenant));
        let as_ann = app.by(As::Token(&ann_token)).admin().tenant(tenant);
        let bob = app.create_user("Bob", None, "User").await;
        let response = as_ann
            .add_member(&json!({"userId": bob, "role": "Owner"}))
            .await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = as_ann.add_member(&json!({"userId": bob})).await;
        expect_status(response, StatusCode::CREATED).await;
        let owner = app.owner_id();
        let response = as_ann
            .set_member_role(owner, &json!({"role": "User"}))
            .await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = as_ann.remove_member(owner).await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;

        // The last Owner can be neither demoted nor removed.
        let response = admin.set_member_role(owner, &json!({"role": "User"})).await;
        expect_problem(response, StatusCode::CONFLICT, "last-owner").await;
        let response = admin.remove_member(owner).await;
        expect_problem(response, StatusCode::CONFLICT, "last-owner").await;
        // With a second Owner it can.
        let response = admin.set_member_role(bob, &json!({"ROLE": "owner"})).await;
        assert_eq!(
            expect_status(response, StatusCode::OK).await["role"],
            "Owner"
        );
        let response = admin.set_member_role(owner, &json!({"role": "User"})).await;
        assert_eq!(
            expect_status(response, StatusCode::OK).await["role"],
            "User"
        );
        let response = admin.remove_member(ann).await;
        expect_status(response, StatusCode::NO_CONTENT).await;
        let response = admin.remove_member(ann).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;

        let page = expect_status(admin.members("limit=1&offset=1").await, StatusCode::OK).await;
        assert_eq!(page["totalCount"], 2);
        assert_eq!(page["offset"], 1);
        assert_eq!(page["limit"], 1);
        assert_eq!(page["data"][0]["name"], "Owner");
    }
);

api_test!(
    api_keys_are_shown_once_listed_without_secret_and_bounded_by_role,
    |app| {
        let tenant = app.tenant_id();
        let admin = app.admin().tenant(tenant);
        let response = admin
            .create_api_key(&json!({"name": "CI", "role": "Administrator"}))
            .await;
        let created = expect_status(response, StatusCode::CREATED).await;
        let secret = created["apiKey"].as_str().unwrap().to_owned();
        assert_eq!(created["principalType"], "OpenAPIAccount");
        let as_administrator = app.by(As::ApiKey(&secret));
        let me = as_administrator.iam().principal_me().await;
        let me = expect_status(me, StatusCode::OK).await;
        assert_eq!(me["role"], "Administrator");
        let listed = admin.api_keys().await;
        let text = listed.text();
        assert!(!text.contains(&secret), "a listing must never show a key");
        let listed: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(listed["totalCount"], 2);
        // The Administrator key cannot mint an Owner key.
        let response = as_administrator
            .admin()
            .tenant(tenant)
            .create_api_key(&json!({"name": "escalate", "role": "Owner"}))
            .await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = admin.create_api_key(&json!({"name": ""})).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        let response = admin.revoke_api_key(uuid::Uuid::new_v4()).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        let created_id = created["id"].as_str().unwrap();
        expect_status(
            admin.revoke_api_key(created_id).await,
            StatusCode::NO_CONTENT,
        )
        .await;
        expect_status(
            admin.revoke_api_key(created_id).await,
            StatusCode::NO_CONTENT,
        )
        .await;
        let listed = expect_status(admin.api_keys().await, StatusCode::OK).await;
        let revoked = listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["name"] == "CI")
            .unwrap();
        assert!(revoked["revokedAt"].is_string());
    }
);

// Issue 9, fault 4: a tenant manager could add users of other tenants by e-mail, and the
// 201/404 difference told which addresses existed anywhere on the platform.
api_test!(tenant_managers_reach_only_users_of_their_tenants, |app| {
    let tenant = app.tenant_id();
    let admin = app.admin().tenant(tenant);
    let elsewhere = app.create_tenant("Elsewhere").await;
    let response = app
        .as_back_office()
        .admin()
        .create_user(&json!({"name": "Una", "email": "una@example.com", "tenantId": elsewhere}))
        .await;
    let una = id_of(&expect_status(response, StatusCode::CREATED).await);

    expect_problem(
        admin.add_member(&json!({"userId": una})).await,
        StatusCode::NOT_FOUND,
        "not-found",
    )
    .await;
    let known = expect_status(
        admin.add_member(&json!({"email": "Una@Example.com"})).await,
        StatusCode::ACCEPTED,
    )
    .await;
    let unknown = expect_status(
        admin
            .add_member(&json!({"email": "ghost@example.com"}))
            .await,
        StatusCode::ACCEPTED,
    )
    .await;
    let keys = |value: &serde_json::Value| {
        value
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&known), keys(&unknown), "the answers must look alike");
    assert_eq!(known["email"], "una@example.com");
    let user = app.admin().user(una).await;
    expect_problem(user, StatusCode::NOT_FOUND, "not-found").await;
    let listed = expect_status(admin.members("").await, StatusCode::OK).await;
    assert_eq!(listed["totalCount"], 1, "{listed}");

    // Inviting again replaces the invitation; managers list and withdraw them.
    expect_status(
        admin
            .add_member(&json!({"email": "ghost@example.com", "role": "Administrator"}))
            .await,
        StatusCode::ACCEPTED,
    )
    .await;
    let invitations = expect_status(admin.invitations().await, StatusCode::OK).await;
    assert_eq!(invitations["totalCount"], 2, "{invitations}");
    let ghost = invitations["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["email"] == "ghost@example.com")
        .unwrap()
        .clone();
    assert_eq!(ghost["role"], "Administrator");
    let withdraw = admin
        .withdraw_invitation(ghost["id"].as_str().unwrap())
        .await;
    expect_status(withdraw, StatusCode::NO_CONTENT).await;

    // The invited user sees the invitation and accepts it; then the manager reaches it.
    let una_token = app.user_token(una, Some(elsewhere));
    let mine = expect_status(
        app.by(As::Token(&una_token)).iam().my_invitations().await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(mine["data"].as_array().unwrap().len(), 1, "{mine}");
    assert_eq!(mine["data"][0]["tenantName"], "Default tenant");
    let id = mine["data"][0]["id"].as_str().unwrap();
    let strangers = app.iam().accept_invitation(id).await;
    expect_problem(strangers, StatusCode::NOT_FOUND, "not-found").await;
    let accepted = app
        .by(As::Token(&una_token))
        .iam()
        .accept_invitation(id)
        .await;
    let joined = expect_status(accepted, StatusCode::CREATED).await;
    assert_eq!(joined["id"], tenant.to_string());
    assert_eq!(joined["role"], "User");
    let again = app
        .by(As::Token(&una_token))
        .iam()
        .accept_invitation(id)
        .await;
    expect_problem(again, StatusCode::NOT_FOUND, "not-found").await;
    let user = app.admin().user(una).await;
    expect_status(user, StatusCode::OK).await;

    // Declining removes an invitation; a user of no tenant yet can be added by id.
    let response = app
        .as_back_office()
        .admin()
        .create_user(&json!({"name": "Vic", "email": "vic@example.com"}))
        .await;
    let vic = id_of(&expect_status(response, StatusCode::CREATED).await);
    expect_status(
        admin.add_member(&json!({"email": "vic@example.com"})).await,
        StatusCode::ACCEPTED,
    )
    .await;
    let vic_token = app.user_token(vic, None);
    let mine = expect_status(
        app.by(As::Token(&vic_token)).iam().my_invitations().await,
        StatusCode::OK,
    )
    .await;
    let id = mine["data"][0]["id"].as_str().unwrap();
    let declined = app
        .by(As::Token(&vic_token))
        .iam()
        .decline_invitation(id)
        .await;
    expect_status(declined, StatusCode::NO_CONTENT).await;
    let mine = expect_status(
        app.by(As::Token(&vic_token)).iam().my_invitations().await,
        StatusCode::OK,
    )
    .await;
    assert!(mine["data"].as_array().unwrap().is_empty());
    expect_status(
        admin.add_member(&json!({"userId": vic})).await,
        StatusCode::CREATED,
    )
    .await;

    // An Administrator cannot invite to, or withdraw an invitation of, the Owner role.
    let ann = app.create_user("Ann", Some(tenant), "Administrator").await;
    let ann_token = app.user_token(ann, Some(tenant));
    let as_ann = app.by(As::Token(&ann_token)).admin().tenant(tenant);
    let response = as_ann
        .add_member(&json!({"email": "boss@example.com", "role": "Owner"}))
        .await;
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    let owner_invite = expect_status(
        admin
            .add_member(&json!({"email": "boss@example.com", "role": "Owner"}))
            .await,
        StatusCode::ACCEPTED,
    )
    .await;
    let response = as_ann
        .withdraw_invitation(owner_invite["id"].as_str().unwrap())
        .await;
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
});

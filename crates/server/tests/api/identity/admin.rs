//! The administration API: BackOffice manages everything; tenant Owners and Administrators
//! manage their own tenant's users, members and API keys.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::*;

api_test!(back_office_creates_lists_and_gets_tenants, |app| {
    let id = app.create_tenant("  Delta Water  ").await;
    let tenant = expect_status(
        app.back_office(Method::GET, &routes::tenant(id))
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(tenant["name"], "Delta Water", "names are trimmed");
    let list = expect_status(
        app.back_office(Method::GET, &routes::tenants())
            .send()
            .await
            .unwrap(),
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
            .back_office(Method::POST, &routes::tenants())
            .json(&json!({"name": name}))
            .send()
            .await
            .unwrap();
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
    let list = expect_status(
        app.with_key(Method::GET, &routes::tenants())
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    let response = app
        .with_key(Method::GET, &routes::tenant(other))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    let response = app
        .with_key(Method::GET, &routes::tenant_members(other))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    let response = app
        .with_key(Method::POST, &routes::tenant_api_keys(other))
        .json(&json!({"name": "sneaky"}))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    // A plain member of the tenant sees it exists but may not manage it.
    let (_, user_key) = app.create_api_key(app.tenant_id(), "User").await;
    let response = app
        .anonymous(Method::GET, &routes::tenant_members(app.tenant_id()))
        .header("svc-open-api-key", &user_key)
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
});

api_test!(
    owners_create_users_in_their_tenant_and_e_mails_are_unique,
    |app| {
        // Only platform admins set e-mail addresses (issue 9, fault 4).
        let response = app
            .with_key(Method::POST, &routes::users())
            .json(&json!({"name": "Eve", "email": "Eve@Example.com", "tenantId": app.tenant_id()}))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"]["email"].is_array(), "{problem}");
        let response = app
            .back_office(Method::POST, &routes::users())
            .json(&json!({"name": "Eve", "email": "Eve@Example.com", "tenantId": app.tenant_id()}))
            .send()
            .await
            .unwrap();
        let eve = expect_status(response, StatusCode::CREATED).await;
        let response = app
            .back_office(Method::POST, &routes::users())
            .json(&json!({"name": "Eve 2", "email": "eve@example.COM"}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::CONFLICT, "email-taken").await;
        // Owners must name their tenant; the e-mail must look like one.
        let response = app
            .with_key(Method::POST, &routes::users())
            .json(&json!({"name": "No tenant"}))
            .send()
            .await
            .unwrap();
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["errors"]["tenantId"].is_array(), "{problem}");
        let response = app
            .back_office(Method::POST, &routes::users())
            .json(&json!({"name": "X", "email": "nope"}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        // The owner lists the users of its tenant.
        let users = expect_status(
            app.with_key(Method::GET, &routes::users())
                .send()
                .await
                .unwrap(),
            StatusCode::OK,
        )
        .await;
        let names: Vec<&str> = users["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["Eve", "Owner"]);
        let id = eve["id"].as_str().unwrap();
        expect_status(
            app.with_key(Method::GET, &routes::user(id))
                .send()
                .await
                .unwrap(),
            StatusCode::OK,
        )
        .await;
        // Only platform admins change users.
        let response = app
            .with_key(Method::PATCH, &routes::user(id))
            .json(&json!({"name": "Evil"}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
);

api_test!(
    members_are_added_changed_and_removed_with_role_rules,
    |app| {
        let tenant = app.tenant_id();
        let members = routes::tenant_members(tenant);
        let ann = app.create_user("Ann", None, "User").await;
        let response = app
            .with_key(Method::POST, &members)
            .json(&json!({"userId": ann, "role": "Administrator"}))
            .send()
            .await
            .unwrap();
        let member = expect_status(response, StatusCode::CREATED).await;
        assert_eq!(member["role"], "Administrator");
        assert_eq!(member["principalType"], "UserIdentity");
        let response = app
            .with_key(Method::POST, &members)
            .json(&json!({"userId": ann}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::CONFLICT, "already-member").await;
        let response = app
            .with_key(Method::POST, &members)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        let response = app
            .with_key(Method::POST, &members)
            .json(&json!({"email": "nobody@example.com"}))
            .send()
            .await
            .unwrap();
        let invitation = expect_status(response, StatusCode::ACCEPTED).await;
        assert_eq!(invitation["status"], "Pending");

        // An Administrator may add Users but not grant Owner, nor demote or remove an Owner.
        let ann_token = app.user_token(ann, Some(tenant));
        let bob = app.create_user("Bob", None, "User").await;
        let response = app
            .with_token(Method::POST, &members, &ann_token)
            .json(&json!({"userId": bob, "role": "Owner"}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = app
            .with_token(Method::POST, &members, &ann_token)
            .json(&json!({"userId": bob}))
            .send()
            .await
            .unwrap();
        expect_status(response, StatusCode::CREATED).await;
        let owner_path = format!("{members}/{}", app.owner_id());
        let response = app
            .with_token(Method::PUT, &owner_path, &ann_token)
            .json(&json!({"role": "User"}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = app
            .with_token(Method::DELETE, &owner_path, &ann_token)
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;

        // The last Owner can be neither demoted nor removed.
        let response = app
            .with_key(Method::PUT, &owner_path)
            .json(&json!({"role": "User"}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::CONFLICT, "last-owner").await;
        let response = app
            .with_key(Method::DELETE, &owner_path)
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::CONFLICT, "last-owner").await;
        // With a second Owner it can.
        let bob_path = format!("{members}/{bob}");
        let response = app
            .with_key(Method::PUT, &bob_path)
            .json(&json!({"ROLE": "owner"}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            expect_status(response, StatusCode::OK).await["role"],
            "Owner"
        );
        let response = app
            .with_key(Method::PUT, &owner_path)
            .json(&json!({"role": "User"}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            expect_status(response, StatusCode::OK).await["role"],
            "User"
        );
        let response = app
            .with_key(Method::DELETE, &format!("{members}/{ann}"))
            .send()
            .await
            .unwrap();
        expect_status(response, StatusCode::NO_CONTENT).await;
        let response = app
            .with_key(Method::DELETE, &format!("{members}/{ann}"))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;

        let page = expect_status(
            app.with_key(Method::GET, &format!("{members}?limit=1&offset=1"))
                .send()
                .await
                .unwrap(),
            StatusCode::OK,
        )
        .await;
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
        let keys = routes::tenant_api_keys(tenant);
        let response = app
            .with_key(Method::POST, &keys)
            .json(&json!({"name": "CI", "role": "Administrator"}))
            .send()
            .await
            .unwrap();
        let created = expect_status(response, StatusCode::CREATED).await;
        let secret = created["apiKey"].as_str().unwrap().to_owned();
        assert_eq!(created["principalType"], "OpenAPIAccount");
        let me = expect_status(
            app.anonymous(Method::GET, &routes::principal_me())
                .header("svc-open-api-key", &secret)
                .send()
                .await
                .unwrap(),
            StatusCode::OK,
        )
        .await;
        assert_eq!(me["role"], "Administrator");
        let listed = app.with_key(Method::GET, &keys).send().await.unwrap();
        let text = listed.text().await.unwrap();
        assert!(!text.contains(&secret), "a listing must never show a key");
        let listed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(listed["totalCount"], 2);
        // The Administrator key cannot mint an Owner key.
        let response = app
            .anonymous(Method::POST, &keys)
            .header("svc-open-api-key", &secret)
            .json(&json!({"name": "escalate", "role": "Owner"}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = app
            .with_key(Method::POST, &keys)
            .json(&json!({"name": ""}))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        let response = app
            .with_key(Method::DELETE, &format!("{keys}/{}", uuid::Uuid::new_v4()))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        let revoke = format!("{keys}/{}", created["id"].as_str().unwrap());
        expect_status(
            app.with_key(Method::DELETE, &revoke).send().await.unwrap(),
            StatusCode::NO_CONTENT,
        )
        .await;
        expect_status(
            app.with_key(Method::DELETE, &revoke).send().await.unwrap(),
            StatusCode::NO_CONTENT,
        )
        .await;
        let listed = expect_status(
            app.with_key(Method::GET, &keys).send().await.unwrap(),
            StatusCode::OK,
        )
        .await;
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
    let members = routes::tenant_members(tenant);
    let elsewhere = app.create_tenant("Elsewhere").await;
    let response = app
        .back_office(Method::POST, &routes::users())
        .json(&json!({"name": "Una", "email": "una@example.com", "tenantId": elsewhere}))
        .send()
        .await
        .unwrap();
    let una = id_of(&expect_status(response, StatusCode::CREATED).await);
    let add = |body: serde_json::Value| app.with_key(Method::POST, &members).json(&body).send();

    expect_problem(
        add(json!({"userId": una})).await.unwrap(),
        StatusCode::NOT_FOUND,
        "not-found",
    )
    .await;
    let known = expect_status(
        add(json!({"email": "Una@Example.com"})).await.unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    let unknown = expect_status(
        add(json!({"email": "ghost@example.com"})).await.unwrap(),
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
    let user = app
        .with_key(Method::GET, &routes::user(una))
        .send()
        .await
        .unwrap();
    expect_problem(user, StatusCode::NOT_FOUND, "not-found").await;
    let listed = expect_status(
        app.with_key(Method::GET, &members).send().await.unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(listed["totalCount"], 1, "{listed}");

    // Inviting again replaces the invitation; managers list and withdraw them.
    expect_status(
        add(json!({"email": "ghost@example.com", "role": "Administrator"}))
            .await
            .unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    let invitations_path = routes::tenant_invitations(tenant);
    let invitations = expect_status(
        app.with_key(Method::GET, &invitations_path)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(invitations["totalCount"], 2, "{invitations}");
    let ghost = invitations["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["email"] == "ghost@example.com")
        .unwrap()
        .clone();
    assert_eq!(ghost["role"], "Administrator");
    let withdraw = app
        .with_key(
            Method::DELETE,
            &format!("{invitations_path}/{}", ghost["id"].as_str().unwrap()),
        )
        .send()
        .await
        .unwrap();
    expect_status(withdraw, StatusCode::NO_CONTENT).await;

    // The invited user sees the invitation and accepts it; then the manager reaches it.
    let una_token = app.user_token(una, Some(elsewhere));
    let mine = expect_status(
        app.with_token(Method::GET, &routes::my_invitations(), &una_token)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(mine["data"].as_array().unwrap().len(), 1, "{mine}");
    assert_eq!(mine["data"][0]["tenantName"], "Default tenant");
    let id = mine["data"][0]["id"].as_str().unwrap();
    let strangers = app
        .with_key(Method::POST, &routes::invitation_accept(id))
        .send()
        .await
        .unwrap();
    expect_problem(strangers, StatusCode::NOT_FOUND, "not-found").await;
    let accepted = app
        .with_token(Method::POST, &routes::invitation_accept(id), &una_token)
        .send()
        .await
        .unwrap();
    let joined = expect_status(accepted, StatusCode::CREATED).await;
    assert_eq!(joined["id"], tenant.to_string());
    assert_eq!(joined["role"], "User");
    let again = app
        .with_token(Method::POST, &routes::invitation_accept(id), &una_token)
        .send()
        .await
        .unwrap();
    expect_problem(again, StatusCode::NOT_FOUND, "not-found").await;
    let user = app
        .with_key(Method::GET, &routes::user(una))
        .send()
        .await
        .unwrap();
    expect_status(user, StatusCode::OK).await;

    // Declining removes an invitation; a user of no tenant yet can be added by id.
    let response = app
        .back_office(Method::POST, &routes::users())
        .json(&json!({"name": "Vic", "email": "vic@example.com"}))
        .send()
        .await
        .unwrap();
    let vic = id_of(&expect_status(response, StatusCode::CREATED).await);
    expect_status(
        add(json!({"email": "vic@example.com"})).await.unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    let vic_token = app.user_token(vic, None);
    let mine = expect_status(
        app.with_token(Method::GET, &routes::my_invitations(), &vic_token)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    let id = mine["data"][0]["id"].as_str().unwrap();
    let declined = app
        .with_token(Method::POST, &routes::invitation_decline(id), &vic_token)
        .send()
        .await
        .unwrap();
    expect_status(declined, StatusCode::NO_CONTENT).await;
    let mine = expect_status(
        app.with_token(Method::GET, &routes::my_invitations(), &vic_token)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert!(mine["data"].as_array().unwrap().is_empty());
    expect_status(
        add(json!({"userId": vic})).await.unwrap(),
        StatusCode::CREATED,
    )
    .await;

    // An Administrator cannot invite to, or withdraw an invitation of, the Owner role.
    let ann = app.create_user("Ann", Some(tenant), "Administrator").await;
    let ann_token = app.user_token(ann, Some(tenant));
    let response = app
        .with_token(Method::POST, &members, &ann_token)
        .json(&json!({"email": "boss@example.com", "role": "Owner"}))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    let owner_invite = expect_status(
        add(json!({"email": "boss@example.com", "role": "Owner"}))
            .await
            .unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    let path = format!(
        "{invitations_path}/{}",
        owner_invite["id"].as_str().unwrap()
    );
    let response = app
        .with_token(Method::DELETE, &path, &ann_token)
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
});

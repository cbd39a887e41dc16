//! Projects and subprojects (docs/projects.md, docs/permissions.md): creation, capabilities, member
//! inheritance, per-caller listings, filters, move, optimistic concurrency, limits, deletion.

mod tree_concurrency;

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

async fn caps(app: &TestApp, who: &Person, project: &Value) -> Capabilities {
    let project = app.by(As::Person(who)).project(id_str(project));
    project.capabilities().await.ok()
}

fn names(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

api_test!(
    a_created_project_has_the_wire_fields_and_its_creator_as_owner,
    |app| {
        let ann = app.person("Ann", "User").await;
        let project = app
            .create_project(
                As::Person(&ann),
                "Lake model",
                json!({"description": "d", "metadata": {"k": "v"}, "accessLevel": "shared"}),
            )
            .await;
        for field in [
            "id",
            "name",
            "description",
            "metadata",
            "settings",
            "accessLevel",
            "members",
            "capabilities",
            "hasThumbnail",
            "inheritsMembers",
            "rowVersion",
            "createdAt",
            "createdBy",
            "updatedAt",
            "updatedBy",
        ] {
            assert!(project.get(field).is_some(), "{field} missing: {project}");
        }
        assert!(
            project.get("parentProjectId").is_none(),
            "roots have no parentProjectId"
        );
        assert_eq!(project["accessLevel"], "Shared");
        assert_eq!(project["metadata"], json!({"k": "v"}));
        assert_eq!(
            project["members"],
            json!([{"userId": ann.id, "role": "Owner", "principalType": "UserIdentity"}])
        );
        assert_eq!(project["capabilities"]["canGrantAccess"], true);
        assert_eq!(project["capabilities"].as_object().unwrap().len(), 9);
        let got = app
            .by(As::Person(&ann))
            .project(id_str(&project))
            .get()
            .await
            .expect(StatusCode::OK);
        assert_eq!(got, project);
    }
);

api_test!(project_input_is_validated_at_and_past_the_limits, |app| {
    let ann = app.person("Ann", "User").await;
    let max = app.config.limits.project_name_chars_max;
    app.create_project(As::Person(&ann), &"n".repeat(max), json!({}))
        .await;
    for body in [
        json!({"name": "n".repeat(max + 1)}),
        json!({"name": "  "}),
        json!({"name": "a/b"}),
        json!({"name": "x", "accessLevel": "Public"}),
        json!({"name": "x", "metadata": [1, 2]}),
        json!({"name": "x", "members": [{"userId": ann.id, "role": "Boss"}]}),
        json!({"name": "x", "members": [{"userId": Uuid::nil(), "role": "Reader"}, {"userId": Uuid::nil(), "role": "Owner"}]}),
    ] {
        app.by(As::Person(&ann))
            .projects()
            .create(&body)
            .await
            .problem(StatusCode::BAD_REQUEST, "validation");
    }
    app.by(As::Person(&ann))
        .projects()
        .create(&json!({"name": "x", "inheritsMembers": true}))
        .await
        .problem(StatusCode::BAD_REQUEST, "root-cannot-inherit");
    let page = app
        .by(As::Person(&ann))
        .projects()
        .offset_list("")
        .await
        .expect(StatusCode::OK);
    assert_eq!(
        page["totalCount"], 1,
        "failed creations left nothing behind"
    );
});

api_test!(
    roles_and_access_levels_give_the_documented_capabilities,
    |app| {
        let owner = app.person("Owner person", "User").await;
        let contributor = app.person("Con", "User").await;
        let reader = app.person("Rea", "User").await;
        let stranger = app.person("Stranger", "User").await;
        let admin = app.person("Tenant admin", "Administrator").await;
        let project = app.create_project(As::Person(&owner), "P", json!({"members": [
        {"userId": contributor.id, "role": "Contributor"}, {"userId": reader.id, "role": "reader"}]})).await;
        let owner_caps = caps(&app, &owner, &project).await;
        assert!(owner_caps.all(), "{owner_caps:?}");
        let c = caps(&app, &contributor, &project).await;
        assert_eq!(
            (
                c.can_create_content,
                c.can_delete_content,
                c.can_edit,
                c.can_grant_access
            ),
            (true, true, false, false)
        );
        let r = caps(&app, &reader, &project).await;
        assert_eq!(
            (r.can_read_content, r.can_list_content, r.can_create_content),
            (true, true, false)
        );
        // Private: a tenant administrator is Owner, a stranger sees nothing.
        assert!(caps(&app, &admin, &project).await.can_edit);
        app.by(As::Person(&stranger))
            .project(id_str(&project))
            .get()
            .await
            .problem(StatusCode::NOT_FOUND, "not-found");
        // Shared: every tenant member reads; Confidential: the administrator loses implicit access.
        let patch = |level: &str| json!({"id": id_str(&project), "accessLevel": level});
        app.by(As::Person(&owner))
            .projects()
            .patch(&patch("Shared"))
            .await
            .expect(StatusCode::OK);
        assert!(caps(&app, &stranger, &project).await.can_read_content);
        assert!(!caps(&app, &stranger, &project).await.can_create_content);
        expect_status(
            app.send_as(
                As::Person(&owner),
                Method::PATCH,
                "/api/metadata/project/",
                Some(patch("confidential")),
            )
            .await,
            StatusCode::OK,
        )
        .await;
        app.by(As::Person(&admin))
            .project(id_str(&project))
            .capabilities()
            .await
            .problem(StatusCode::NOT_FOUND, "not-found");
        // Only Owners may change the access level or edit.
        app.by(As::Person(&contributor))
            .projects()
            .patch(&patch("Shared"))
            .await
            .problem(StatusCode::FORBIDDEN, "forbidden");
    }
);

api_test!(
    subprojects_inherit_members_from_the_first_ancestor_that_does_not,
    |app| {
        let owner = app.person("Owner", "User").await;
        let reader = app.person("Reader", "User").await;
        let root = app
            .create_project(
                As::Person(&owner),
                "Root",
                json!({"members": [{"userId": reader.id, "role": "Reader"}]}),
            )
            .await;
        let a = app
            .create_subproject(
                As::Person(&owner),
                &root,
                "a",
                json!({"inheritsMembers": true}),
            )
            .await;
        let b = app
            .create_subproject(
                As::Person(&owner),
                &a,
                "b",
                json!({"inheritsMembers": true}),
            )
            .await;
        assert_eq!(
            b["members"],
            json!([]),
            "inheriting subprojects list no own members"
        );
        assert_eq!(b["inheritsMembers"], true);
        assert_eq!(b["parentProjectId"], a["id"]);
        let as_reader = app.by(As::Person(&reader)).project(id_str(&b));
        let members = as_reader.members().list().await.ok();
        assert_eq!(
            members.data.len(),
            2,
            "inherited from the root: {members:?}"
        );
        assert!(as_reader.capabilities().await.ok().can_read_content);
        // Setting own members on `a` cancels inheritance there, and `b` now inherits from `a`.
        let body = json!({"members": [{"userId": owner.id, "role": "Owner"}], "rowVersion": a["rowVersion"]});
        let answer = app
            .by(As::Person(&owner))
            .project(id_str(&a))
            .members()
            .set(&body)
            .await
            .expect(StatusCode::OK);
        assert_eq!(answer["id"], a["id"]);
        assert_ne!(answer["rowVersion"], a["rowVersion"]);
        app.by(As::Person(&reader))
            .project(id_str(&b))
            .get()
            .await
            .problem(StatusCode::NOT_FOUND, "not-found");
        // members/inherit restores inheritance and clears the own list.
        let body = json!({"rowVersion": answer["rowVersion"]});
        app.by(As::Person(&owner))
            .project(id_str(&a))
            .members()
            .inherit(&body)
            .await
            .expect(StatusCode::OK);
        app.by(As::Person(&reader))
            .project(id_str(&b))
            .get()
            .await
            .expect(StatusCode::OK);
        app.by(As::Person(&owner))
            .project(id_str(&root))
            .members()
            .inherit(&json!({}))
            .await
            .problem(StatusCode::BAD_REQUEST, "root-cannot-inherit");
        // A member list without an Owner is refused.
        let body = json!({"members": [{"userId": reader.id, "role": "Reader"}]});
        app.by(As::Person(&owner))
            .project(id_str(&root))
            .members()
            .set(&body)
            .await
            .problem(StatusCode::BAD_REQUEST, "validation");
    }
);

api_test!(
    a_member_of_a_subproject_only_reaches_it_without_its_parents,
    |app| {
        let owner = app.person("Owner", "User").await;
        let guest = app.person("Guest", "User").await;
        let root = app
            .create_project(As::Person(&owner), "Root", json!({}))
            .await;
        let open = app
            .create_subproject(
                As::Person(&owner),
                &root,
                "open",
                json!({"members": [{"userId": guest.id, "role": "Contributor"}]}),
            )
            .await;
        app.create_subproject(As::Person(&owner), &root, "closed", json!({}))
            .await;
        app.by(As::Person(&guest))
            .project(id_str(&root))
            .get()
            .await
            .problem(StatusCode::NOT_FOUND, "not-found");
        let sub = app
            .by(As::Person(&guest))
            .project(id_str(&open))
            .get()
            .await
            .expect(StatusCode::OK);
        assert_eq!(sub["capabilities"]["canCreateContent"], true);
        // Listings are filtered per caller.
        let listing = routes::project_subproject_list(id_str(&root));
        let mine = expect_status(
            app.send_as(As::Person(&guest), Method::GET, &listing, None)
                .await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(names(&mine), vec!["open"]);
        let all = expect_status(
            app.send_as(As::Person(&owner), Method::GET, &listing, None)
                .await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(names(&all), vec!["closed", "open"]);
        let roots = app
            .by(As::Person(&guest))
            .projects()
            .list("")
            .await
            .expect(StatusCode::OK);
        assert_eq!(names(&roots), Vec::<String>::new());
        // The path shows the ancestors without capabilities there.
        let path = app
            .by(As::Person(&guest))
            .project(id_str(&open))
            .path()
            .await
            .expect(StatusCode::OK);
        let entries = path["data"].as_array().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0]["id"], root["id"]);
        assert_eq!(entries[0]["capabilities"]["canReadContent"], false);
        assert_eq!(entries[1]["effectiveUserRole"], "Contributor");
        assert_eq!(entries[1]["isDeleted"], false);
    }
);

api_test!(list_filters_sorts_and_both_paging_forms_agree, |app| {
    let owner = app.person("Owner", "User").await;
    let other = app.person("Other", "User").await;
    for name in ["delta", "Alpha", "charlie", "bravo", "echo"] {
        app.create_project(As::Person(&owner), name, json!({"members": [{"userId": other.id, "role": if name < "c" { "Reader" } else { "Contributor" }}]})).await;
    }
    app.create_project(As::Person(&other), "own", json!({}))
        .await;
    let cursor_names = |query: String| {
        let app = &app;
        let other = &other;
        async move {
            let mut all = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let mut path = format!("{}?{query}&Limit=2", routes::project_list());
                if let Some(cursor) = &cursor {
                    path.push_str(&format!("&Cursor={cursor}"));
                }
                let page = expect_status(
                    app.send_as(As::Person(other), Method::GET, &path, None)
                        .await,
                    StatusCode::OK,
                )
                .await;
                all.extend(names(&page));
                match page["cursor"].as_str() {
                    Some(next) => cursor = Some(next.to_owned()),
                    None => return all,
                }
            }
        }
    };
    let offset_names = |query: String| {
        let app = &app;
        let other = &other;
        async move {
            let page = expect_status(
                app.send_as(
                    As::Person(other),
                    Method::GET,
                    &format!("{}?{query}", routes::project_offset_list()),
                    None,
                )
                .await,
                StatusCode::OK,
            )
            .await;
            assert_eq!(
                page["totalCount"].as_u64().unwrap() as usize,
                page["data"].as_array().unwrap().len()
            );
            names(&page)
        }
    };
    for (query, expected) in [
        (
            "sortBy=Name",
            vec!["Alpha", "bravo", "charlie", "delta", "echo", "own"],
        ),
        (
            "sortBy=name&sortOrder=desc",
            vec!["own", "echo", "delta", "charlie", "bravo", "Alpha"],
        ),
        ("NamePrefix=B", vec!["bravo"]),
        ("role=Reader", vec!["Alpha", "bravo"]),
        (
            "Role=Owner&role=contributor",
            vec!["charlie", "delta", "echo", "own"],
        ),
        (
            "capability=CanCreateContent",
            vec!["charlie", "delta", "echo", "own"],
        ),
        (
            "capability=CanReadContent",
            vec!["Alpha", "bravo", "charlie", "delta", "echo", "own"],
        ),
    ] {
        assert_eq!(cursor_names(query.to_owned()).await, expected, "{query}");
        assert_eq!(
            offset_names(query.to_owned()).await,
            expected,
            "{query} (offset)"
        );
    }
    for sort in ["CreatedAt", "UpdatedAt", "AccessLevel"] {
        let listed: BTreeSet<String> = cursor_names(format!("sortBy={sort}"))
            .await
            .into_iter()
            .collect();
        assert_eq!(listed.len(), 6, "{sort}");
    }
    let response = app
        .send_as(
            As::Person(&other),
            Method::GET,
            &format!(
                "{}?role=Reader&capability=CanReadContent",
                routes::project_list()
            ),
            None,
        )
        .await;
    expect_problem(response, StatusCode::BAD_REQUEST, "role-with-capability").await;
    let response = app
        .send_as(
            As::Person(&other),
            Method::GET,
            &format!("{}?capability=canreadcontent", routes::project_list()),
            None,
        )
        .await;
    expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    let response = app
        .send_as(
            As::Person(&other),
            Method::GET,
            &format!("{}?sortBy=Size", routes::project_offset_list()),
            None,
        )
        .await;
    expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    let legacy = expect_status(
        app.send_as(
            As::Person(&other),
            Method::GET,
            &routes::legacy_project_list(),
            None,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(names(&legacy).len(), 6);
});

api_test!(a_stale_row_version_is_409_and_changes_nothing, |app| {
    let owner = app.person("Owner", "User").await;
    let project = app
        .create_project(As::Person(&owner), "Versioned", json!({}))
        .await;
    let first = json!({"id": id_str(&project), "name": "Renamed", "description": "new", "rowVersion": project["rowVersion"]});
    let updated = app
        .by(As::Person(&owner))
        .projects()
        .update(&first)
        .await
        .expect(StatusCode::OK);
    assert_eq!(updated["name"], "Renamed");
    assert_ne!(updated["rowVersion"], project["rowVersion"]);
    let stale =
        json!({"id": id_str(&project), "name": "Lost update", "rowversion": project["rowVersion"]});
    app.by(As::Person(&owner))
        .projects()
        .update(&stale)
        .await
        .problem(StatusCode::CONFLICT, "row-version-conflict");
    let stale_patch = json!({"id": id_str(&project), "accesslevel": "Shared", "rowVersion": project["rowVersion"]});
    app.by(As::Person(&owner))
        .projects()
        .patch(&stale_patch)
        .await
        .problem(StatusCode::CONFLICT, "row-version-conflict");
    let stale_members = json!({"members": [{"userId": owner.id, "role": "Owner"}], "rowVersion": project["rowVersion"]});
    app.by(As::Person(&owner))
        .project(id_str(&project))
        .members()
        .set(&stale_members)
        .await
        .problem(StatusCode::CONFLICT, "row-version-conflict");
    let bad = json!({"id": id_str(&project), "name": "x", "rowVersion": "AAAA=="});
    app.by(As::Person(&owner))
        .projects()
        .update(&bad)
        .await
        .problem(StatusCode::BAD_REQUEST, "validation");
    let now = app
        .by(As::Person(&owner))
        .project(id_str(&project))
        .get()
        .await
        .expect(StatusCode::OK);
    assert_eq!(now["name"], "Renamed");
    assert_eq!(now["accessLevel"], "Private");
    assert_eq!(now["rowVersion"], updated["rowVersion"]);
});

api_test!(
    single_members_are_added_and_removed_keeping_an_owner,
    |app| {
        let owner = app.person("Owner", "User").await;
        let ben = app.person("Ben", "User").await;
        let root = app
            .create_project(As::Person(&owner), "Root", json!({}))
            .await;
        let sub = app
            .create_subproject(
                As::Person(&owner),
                &root,
                "sub",
                json!({"inheritsMembers": true}),
            )
            .await;
        let path = routes::project_member(id_str(&sub));
        expect_status(
            app.send_as(
                As::Person(&owner),
                Method::POST,
                &path,
                Some(json!({"userId": ben.id, "role": "Reader"})),
            )
            .await,
            StatusCode::OK,
        )
        .await;
        let members = expect_status(
            app.send_as(As::Person(&owner), Method::GET, &path, None)
                .await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(
            members["data"].as_array().unwrap().len(),
            2,
            "the inherited Owner was kept: {members}"
        );
        let project = app
            .by(As::Person(&owner))
            .project(id_str(&sub))
            .get()
            .await
            .expect(StatusCode::OK);
        assert_eq!(project["inheritsMembers"], false);
        expect_problem(
            app.send_as(
                As::Person(&owner),
                Method::POST,
                &path,
                Some(json!({"userId": ben.id, "role": "Owner"})),
            )
            .await,
            StatusCode::CONFLICT,
            "already-member",
        )
        .await;
        expect_problem(
            app.send_as(
                As::Person(&ben),
                Method::POST,
                &path,
                Some(json!({"userId": Uuid::new_v4(), "role": "Owner"})),
            )
            .await,
            StatusCode::FORBIDDEN,
            "forbidden",
        )
        .await;
        expect_status(
            app.send_as(
                As::Person(&owner),
                Method::DELETE,
                &format!("{path}/{}", ben.id),
                None,
            )
            .await,
            StatusCode::NO_CONTENT,
        )
        .await;
        expect_problem(
            app.send_as(
                As::Person(&owner),
                Method::DELETE,
                &format!("{path}/{}", ben.id),
                None,
            )
            .await,
            StatusCode::CONFLICT,
            "not-a-member",
        )
        .await;
        expect_problem(
            app.send_as(
                As::Person(&owner),
                Method::DELETE,
                &format!("{path}/{}", owner.id),
                None,
            )
            .await,
            StatusCode::CONFLICT,
            "last-owner",
        )
        .await;
        // PUT .../member sets the whole list like PUT .../members.
        let body = json!({"members": [{"userId": owner.id, "role": "Owner"}, {"userId": ben.id, "role": "Contributor"}]});
        expect_status(
            app.send_as(As::Person(&owner), Method::PUT, &path, Some(body))
                .await,
            StatusCode::OK,
        )
        .await;
        let members = expect_status(
            app.send_as(As::Person(&ben), Method::GET, &path, None)
                .await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(members["data"].as_array().unwrap().len(), 2);
    }
);

api_test!(moves_follow_rule_5, |app| {
    let owner = app.person("Owner", "User").await;
    let helper = app.person("Helper", "User").await;
    let root = app
        .create_project(As::Person(&owner), "Root", json!({}))
        .await;
    let other_root = app
        .create_project(As::Person(&owner), "Other", json!({}))
        .await;
    let a = app
        .create_subproject(
            As::Person(&owner),
            &root,
            "a",
            json!({"inheritsMembers": true}),
        )
        .await;
    let b = app
        .create_subproject(
            As::Person(&owner),
            &a,
            "b",
            json!({"inheritsMembers": true}),
        )
        .await;
    let c = app
        .create_subproject(
            As::Person(&owner),
            &root,
            "c",
            json!({"inheritsMembers": true}),
        )
        .await;
    let elsewhere = app
        .create_subproject(
            As::Person(&owner),
            &other_root,
            "x",
            json!({"inheritsMembers": true}),
        )
        .await;
    let mv = |project: &Value| routes::project_move(id_str(project));
    let to = |target: &Value| json!({"targetProjectId": target["id"]});
    expect_problem(
        app.send_as(
            As::Person(&owner),
            Method::POST,
            &mv(&root),
            Some(to(&other_root)),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "cannot-move-root",
    )
    .await;
    expect_problem(
        app.send_as(
            As::Person(&owner),
            Method::POST,
            &mv(&a),
            Some(to(&elsewhere)),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "move-across-roots",
    )
    .await;
    expect_problem(
        app.send_as(As::Person(&owner), Method::POST, &mv(&a), Some(to(&b)))
            .await,
        StatusCode::CONFLICT,
        "move-loop",
    )
    .await;
    expect_problem(
        app.send_as(As::Person(&owner), Method::POST, &mv(&a), Some(to(&a)))
            .await,
        StatusCode::CONFLICT,
        "move-loop",
    )
    .await;
    // A Contributor on the target only, without delete-content on the current parent: 403.
    let body = json!({"members": [{"userId": owner.id, "role": "Owner"}, {"userId": helper.id, "role": "Contributor"}]});
    app.by(As::Person(&owner))
        .project(id_str(&c))
        .members()
        .set(&body)
        .await
        .expect(StatusCode::OK);
    let body = json!({"members": [{"userId": owner.id, "role": "Owner"}, {"userId": helper.id, "role": "Reader"}]});
    app.by(As::Person(&owner))
        .project(id_str(&a))
        .members()
        .set(&body)
        .await
        .expect(StatusCode::OK);
    expect_problem(
        app.send_as(As::Person(&helper), Method::POST, &mv(&b), Some(to(&c)))
            .await,
        StatusCode::FORBIDDEN,
        "forbidden",
    )
    .await;
    // The owner moves b under c: the listings follow.
    let moved = expect_status(
        app.send_as(As::Person(&owner), Method::POST, &mv(&b), Some(to(&c)))
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(moved["parentProjectId"], c["id"]);
    let under_c = expect_status(
        app.send_as(
            As::Person(&owner),
            Method::GET,
            &routes::project_subproject_offset_list(id_str(&c)),
            None,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(names(&under_c), vec!["b"]);
    let under_a = app
        .by(As::Person(&owner))
        .project(id_str(&a))
        .subprojects("")
        .await
        .expect(StatusCode::OK);
    assert_eq!(names(&under_a), Vec::<String>::new());
    let path = app
        .by(As::Person(&owner))
        .project(id_str(&b))
        .path()
        .await
        .expect(StatusCode::OK);
    let ids: Vec<&Value> = path["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| &entry["id"])
        .collect();
    assert_eq!(ids, vec![&root["id"], &c["id"], &b["id"]]);
});

api_test!(nesting_is_limited_at_the_configured_depth, |app| {
    let owner = app.person("Owner", "User").await;
    let max = app.config.limits.project_depth_max as usize;
    let mut current = app
        .create_project(As::Person(&owner), "level 0", json!({}))
        .await;
    let mut chain = vec![current.clone()];
    for level in 1..=max {
        current = app
            .create_subproject(
                As::Person(&owner),
                &current,
                &format!("level {level}"),
                json!({"inheritsMembers": true}),
            )
            .await;
        chain.push(current.clone());
    }
    let path = routes::project_subprojects(id_str(&current));
    expect_problem(
        app.send_as(
            As::Person(&owner),
            Method::POST,
            &path,
            Some(json!({"name": "too deep"})),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "depth-limit",
    )
    .await;
    let path = app
        .by(As::Person(&owner))
        .project(id_str(&current))
        .path()
        .await
        .expect(StatusCode::OK);
    assert_eq!(path["data"].as_array().unwrap().len(), max + 1);
    // Moving a two-level subtree to the second-deepest level would pass the limit.
    let subtree = app
        .create_subproject(
            As::Person(&owner),
            &chain[1],
            "subtree",
            json!({"inheritsMembers": true}),
        )
        .await;
    app.create_subproject(
        As::Person(&owner),
        &subtree,
        "leaf",
        json!({"inheritsMembers": true}),
    )
    .await;
    let response = app
        .send_as(
            As::Person(&owner),
            Method::POST,
            &routes::project_move(id_str(&subtree)),
            Some(json!({"targetProjectId": id_str(&chain[max - 1])})),
        )
        .await;
    expect_problem(response, StatusCode::BAD_REQUEST, "depth-limit").await;
    let response = app
        .send_as(
            As::Person(&owner),
            Method::POST,
            &routes::project_move(id_str(&subtree)),
            Some(json!({"targetProjectId": id_str(&chain[max - 2])})),
        )
        .await;
    expect_status(response, StatusCode::OK).await;
    let recursive = expect_status(
        app.send_as(
            As::Person(&owner),
            Method::GET,
            &format!(
                "{}?limit=1000",
                routes::project_recursive_list(id_str(&chain[0]))
            ),
            None,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(recursive["totalCount"].as_u64().unwrap() as usize, max + 2);
});

api_test!(
    the_recursive_listing_gives_relative_paths_of_accessible_subprojects,
    |app| {
        let owner = app.person("Owner", "User").await;
        let guest = app.person("Guest", "User").await;
        let root = app
            .create_project(As::Person(&owner), "Root", json!({}))
            .await;
        let a = app
            .create_subproject(
                As::Person(&owner),
                &root,
                "a",
                json!({"inheritsMembers": true}),
            )
            .await;
        app.create_subproject(
            As::Person(&owner),
            &a,
            "a1",
            json!({"inheritsMembers": true}),
        )
        .await;
        let b = app
            .create_subproject(
                As::Person(&owner),
                &root,
                "b",
                json!({"members": [{"userId": guest.id, "role": "Reader"}]}),
            )
            .await;
        app.create_subproject(
            As::Person(&owner),
            &b,
            "b1",
            json!({"inheritsMembers": true}),
        )
        .await;
        let listing = routes::project_recursive_list(id_str(&root));
        let all = expect_status(
            app.send_as(As::Person(&owner), Method::GET, &listing, None)
                .await,
            StatusCode::OK,
        )
        .await;
        let paths: Vec<&str> = all["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["relativePath"].as_str().unwrap())
            .collect();
        assert_eq!(paths, vec!["a", "a/a1", "b", "b/b1"]);
        assert_eq!(all["totalCount"], 4);
        assert_eq!(all["data"][1]["parentProjectId"], a["id"]);
        let guest_view = expect_status(
            app.send_as(As::Person(&guest), Method::GET, &listing, None)
                .await,
            StatusCode::OK,
        )
        .await;
        let paths: Vec<&str> = guest_view["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["relativePath"].as_str().unwrap())
            .collect();
        assert_eq!(paths, vec!["b", "b/b1"]);
        let page = expect_status(
            app.send_as(
                As::Person(&owner),
                Method::GET,
                &format!("{listing}?offset=1&limit=2"),
                None,
            )
            .await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(page["data"].as_array().unwrap().len(), 2);
        assert_eq!(page["data"][0]["relativePath"], "a/a1");
    }
);

api_test!(deletion_follows_rule_4_and_hides_the_subtree, |app| {
    let owner = app.person("Owner", "User").await;
    let contributor = app.person("Con", "User").await;
    let reader = app.person("Rea", "User").await;
    let root = app.create_project(As::Person(&owner), "Root", json!({"members": [{"userId": contributor.id, "role": "Contributor"}, {"userId": reader.id, "role": "Reader"}]})).await;
    let sub = app
        .create_subproject(
            As::Person(&owner),
            &root,
            "sub",
            json!({"inheritsMembers": true}),
        )
        .await;
    let deep = app
        .create_subproject(
            As::Person(&owner),
            &sub,
            "deep",
            json!({"inheritsMembers": true}),
        )
        .await;
    app.by(As::Person(&reader))
        .project(id_str(&sub))
        .delete()
        .await
        .problem(StatusCode::FORBIDDEN, "forbidden");
    app.by(As::Person(&contributor))
        .project(id_str(&root))
        .delete()
        .await
        .problem(StatusCode::FORBIDDEN, "forbidden");
    // DeleteContent on the parent is enough for a subproject.
    expect_status(
        app.send_as(
            As::Person(&contributor),
            Method::DELETE,
            &routes::legacy_project(id_str(&sub)),
            None,
        )
        .await,
        StatusCode::NO_CONTENT,
    )
    .await;
    for project in [&sub, &deep] {
        app.by(As::Person(&owner))
            .project(id_str(project))
            .get()
            .await
            .problem(StatusCode::NOT_FOUND, "not-found");
    }
    let listing = app
        .by(As::Person(&owner))
        .project(id_str(&root))
        .subprojects("")
        .await
        .expect(StatusCode::OK);
    assert_eq!(names(&listing), Vec::<String>::new());
    let path = expect_status(
        app.send_as(
            As::Person(&owner),
            Method::GET,
            &routes::legacy_project_path(id_str(&deep)),
            None,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let flags: Vec<bool> = path["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["isDeleted"].as_bool().unwrap())
        .collect();
    assert_eq!(flags, vec![false, true, true]);
    app.by(As::Person(&owner))
        .project(id_str(&root))
        .delete()
        .await
        .expect(StatusCode::NO_CONTENT);
    let roots = app
        .by(As::Person(&owner))
        .projects()
        .list("")
        .await
        .expect(StatusCode::OK);
    assert_eq!(names(&roots), Vec::<String>::new());
});

api_test!(projects_need_credentials_and_a_tenant, |app| {
    let response = app
        .anonymous(Method::GET, &routes::project_list())
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::UNAUTHORIZED, "credentials-missing").await;
    // A BackOffice caller outside any tenant sees no projects and cannot create one.
    let token = app.token(basin::TokenRequest {
        subject: Uuid::new_v4(),
        roles: vec!["BackOffice".into()],
        ttl: chrono::TimeDelta::minutes(5),
        ..Default::default()
    });
    let page = expect_status(
        app.with_token(Method::GET, &routes::project_list(), &token)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(page["data"], json!([]));
    let response = app
        .with_token(Method::POST, &routes::projects(), &token)
        .json(&json!({"name": "x"}))
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    // The bootstrap API key (tenant Owner) creates and lists projects.
    let response = app
        .with_key(Method::POST, &routes::projects())
        .json(&json!({"name": "By key"}))
        .send()
        .await
        .unwrap();
    let project = expect_status(response, StatusCode::CREATED).await;
    assert_eq!(project["members"][0]["principalType"], "OpenAPIAccount");
    let response = app
        .with_key(Method::GET, &routes::project_list())
        .header("api-version", "9")
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
});

// Issue 9, fault 2: each step was allowed, the chain was an escalation. A Contributor of P
// created subproject X (becoming its Owner), moved P's inheriting subproject Y under X, and
// so became Owner of Y, able to lock P's Owner out and delete Y.
api_test!(
    a_contributor_cannot_take_over_a_subproject_by_moving_it,
    |app| {
        let owner = app.person("Olga", "User").await;
        let carl = app.person("Carl", "User").await;
        let (olga, carl_as) = (As::Person(&owner), As::Person(&carl));
        let parent = app.create_project(olga, "P", json!({})).await;
        let added = app
            .add_project_member(olga, &parent, carl.id, "Contributor")
            .await;
        expect_status(added, StatusCode::OK).await;
        let inherit = json!({"inheritsMembers": true});
        let y = app
            .create_subproject(olga, &parent, "Y", inherit.clone())
            .await;
        let x = app
            .create_subproject(carl_as, &parent, "X", json!({}))
            .await;
        assert_eq!(x["members"][0]["userId"], carl.id.to_string());

        let moved = app.move_project(carl_as, id_str(&y), id_str(&x)).await;
        let problem = expect_problem(moved, StatusCode::FORBIDDEN, "forbidden").await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("canGrantAccess"),
            "{problem}"
        );
        let members_path = routes::project_members(id_str(&y));
        let takeover = json!({"members": [{"userId": carl.id, "role": "Owner"}]});
        let set = app
            .send_as(carl_as, Method::PUT, &members_path, Some(takeover))
            .await;
        expect_problem(set, StatusCode::FORBIDDEN, "forbidden").await;
        let caps_path = routes::project_capabilities(id_str(&y));
        let olga_caps = expect_status(
            app.send_as(olga, Method::GET, &caps_path, None).await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(olga_caps["canGrantAccess"], true);
        let carl_caps = expect_status(
            app.send_as(carl_as, Method::GET, &caps_path, None).await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(carl_caps["canGrantAccess"], false);

        // Where the members that apply do not change, the Contributor may still move it.
        let z = app.create_subproject(olga, &parent, "Z", inherit).await;
        let moved = app.move_project(carl_as, id_str(&y), id_str(&z)).await;
        expect_status(moved, StatusCode::OK).await;
        // The Owner, who may grant access to Y, may move it where other members apply (once she
        // may create content in X).
        let added = app
            .add_project_member(carl_as, &x, owner.id, "Contributor")
            .await;
        expect_status(added, StatusCode::OK).await;
        let moved = app.move_project(olga, id_str(&y), id_str(&x)).await;
        expect_status(moved, StatusCode::OK).await;
        let carl_caps = expect_status(
            app.send_as(carl_as, Method::GET, &caps_path, None).await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(
            carl_caps["canGrantAccess"], true,
            "Olga's move made Carl Owner of Y"
        );
    }
);

// Issue 9, fault 5: members were not checked, so another tenant's API key could be made a
// member and then read the project.
api_test!(
    members_must_be_principals_of_the_projects_tenant_of_their_type,
    |app| {
        let project = app.create_project(As::Key, "P", json!({})).await;
        let path = routes::project_member(id_str(&project));
        let other_tenant = app.create_tenant("Elsewhere").await;
        let stranger = app
            .create_user("Stranger", Some(other_tenant), "User")
            .await;
        let (foreign_key_id, foreign_key) = app.create_api_key(other_tenant, "User").await;
        let colleague = app.person("Colleague", "User").await;
        let (own_key_id, own_key) = app.create_api_key(app.tenant_id(), "User").await;
        for (member, kind) in [
            (stranger, "UserIdentity"),
            (foreign_key_id, "OpenAPIAccount"),
            (Uuid::new_v4(), "UserIdentity"),
            (colleague.id, "OpenAPIAccount"),
            (own_key_id, "UserIdentity"),
            (colleague.id, "MemberGroup"),
        ] {
            let body = json!({"userId": member, "role": "Reader", "principalType": kind});
            let response = app.send_as(As::Key, Method::POST, &path, Some(body)).await;
            let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
            assert!(
                problem["detail"].as_str().unwrap().contains("tenant"),
                "{problem}"
            );
        }
        let foreign_read = app
            .anonymous(Method::GET, &routes::project(id_str(&project)))
            .header("svc-open-api-key", &foreign_key)
            .send()
            .await
            .unwrap();
        expect_problem(foreign_read, StatusCode::NOT_FOUND, "not-found").await;
        // The same checks on a full member list and at creation.
        let members = json!({"members": [
            {"userId": colleague.id, "role": "Owner"},
            {"userId": stranger, "role": "Reader"}
        ]});
        let list_path = routes::project_members(id_str(&project));
        let response = app
            .send_as(As::Key, Method::PUT, &list_path, Some(members))
            .await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        let create = json!({"name": "Q", "members": [{"userId": foreign_key_id, "role": "Owner", "principalType": "OpenAPIAccount"}]});
        app.projects()
            .create(&create)
            .await
            .problem(StatusCode::BAD_REQUEST, "validation");

        // Principals of the tenant, of the stated type, are members; the key can then read.
        let body =
            json!({"userId": own_key_id, "role": "Reader", "principalType": "OpenAPIAccount"});
        expect_status(
            app.send_as(As::Key, Method::POST, &path, Some(body)).await,
            StatusCode::OK,
        )
        .await;
        let body = json!({"userId": colleague.id, "role": "Contributor"});
        expect_status(
            app.send_as(As::Key, Method::POST, &path, Some(body)).await,
            StatusCode::OK,
        )
        .await;
        let own_read = app
            .anonymous(Method::GET, &routes::project(id_str(&project)))
            .header("svc-open-api-key", &own_key)
            .send()
            .await
            .unwrap();
        expect_status(own_read, StatusCode::OK).await;
        // A member who left the tenant stays when the list is sent back unchanged.
        let removed = app
            .back_office(
                Method::DELETE,
                &routes::tenant_member(app.tenant_id(), colleague.id),
            )
            .send()
            .await
            .unwrap();
        expect_status(removed, StatusCode::NO_CONTENT).await;
        let listed = expect_status(
            app.send_as(As::Key, Method::GET, &path, None).await,
            StatusCode::OK,
        )
        .await;
        let resend = json!({"members": listed["data"]});
        expect_status(
            app.send_as(As::Key, Method::PUT, &list_path, Some(resend))
                .await,
            StatusCode::OK,
        )
        .await;
    }
);

// Issue 9, fault 5: membership rows were matched on the principal id alone, so a row of one
// principal type granted access to a principal of another type with the same id.
api_test!(membership_is_matched_on_the_principal_type_too, |app| {
    let project = app.create_project(As::Key, "P", json!({})).await;
    let (key_id, key) = app.create_api_key(app.tenant_id(), "User").await;
    let project_id: Uuid = id_str(&project).parse().unwrap();
    basin::on_db!(&app.db, |pool| sqlx::query(
        "INSERT INTO project_members (project_id, principal_id, principal_type, role, created_at) \
         VALUES ($1, $2, 'UserIdentity', 'Owner', $3)"
    )
    .bind(project_id)
    .bind(key_id)
    .bind(chrono::Utc::now())
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))
    .unwrap();
    let read = app
        .anonymous(Method::GET, &routes::project(project_id))
        .header("svc-open-api-key", &key)
        .send()
        .await
        .unwrap();
    expect_problem(read, StatusCode::NOT_FOUND, "not-found").await;
    let list = app
        .anonymous(Method::GET, &routes::project_list())
        .header("svc-open-api-key", &key)
        .send()
        .await
        .unwrap();
    let list = expect_status(list, StatusCode::OK).await;
    assert!(list["data"].as_array().unwrap().is_empty(), "{list}");
});

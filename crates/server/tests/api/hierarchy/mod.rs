//! Bulk hierarchy (`POST /api/hierarchy/project/{id}`): folders become subprojects, files
//! datasets with an upload URL; all actions apply atomically; bad paths name the action.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

async fn root(app: &TestApp) -> String {
    let root = app.create_project(As::Key, "Root", json!({})).await;
    id_str(&root).to_owned()
}

async fn bulk(app: &TestApp, project: &str, body: Value) -> Reply {
    app.hierarchy(project).apply(&body).await
}

/// The names of the subprojects of `project`.
async fn subproject_names(app: &TestApp, project: &str) -> Vec<String> {
    let page = app.project(project).subprojects("").await;
    names_in(&page.expect(StatusCode::OK))
}

/// The names of the datasets of `project`.
async fn dataset_names(app: &TestApp, project: &str) -> Vec<String> {
    app.datasets_of(project).names().await
}

api_test!(files_and_folders_are_created_with_upload_urls, |app| {
    let project = root(&app).await;
    let body = json!({"actions": [
        {"type": "PathActionCreate", "path": "models/run1/lake.dfsu", "isFolder": false},
        {"type": "pathactioncreate", "path": "/docs/", "isFolder": true},
    ], "defaultAccessLevel": "Shared", "sasTokenExpiration": "1:00:00"});
    let answer = expect_status(bulk(&app, &project, body).await, StatusCode::OK).await;
    let results = answer["results"].as_array().unwrap();
    let paths: Vec<&str> = results
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        vec!["models", "models/run1", "models/run1/lake.dfsu", "docs"]
    );
    let file = &results[2];
    assert!(file["datasetId"].is_string());
    assert_eq!(file["projectId"], results[1]["projectId"]);
    assert!(results[0].get("sasToken").is_none() && results[0].get("datasetId").is_none());
    // The folders are subprojects that inherit members; the file is a dataset.
    assert_eq!(
        subproject_names(&app, &project).await,
        vec!["docs", "models"]
    );
    let run1 = results[1]["projectId"].as_str().unwrap();
    let folder = app.project(run1).get().await.expect(StatusCode::OK);
    assert_eq!(folder["inheritsMembers"], true);
    assert_eq!(folder["accessLevel"], "Shared");
    // Uploading to the sasToken fills the dataset.
    let url = file["sasToken"].as_str().unwrap();
    let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 256) as u8).collect();
    let put = app
        .client
        .put(url)
        .header("x-ms-blob-type", "BlockBlob")
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    let id = file["datasetId"].as_str().unwrap();
    let dataset = app.dataset(id).get().await.expect(StatusCode::OK);
    assert_eq!(dataset["storageSize"], 5000);
    assert_eq!(dataset["datasetFormat"], ".dfsu");
    assert!(dataset["checksum"].as_str().unwrap().starts_with("md5:"));
    let downloaded = app
        .client
        .get(read_url(&app, id).await)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(downloaded.to_vec(), bytes);
    // The same request again with CreateIfNotExists creates nothing; with Create it is 409.
    let again = json!({"actions": [{"type": "PathActionCreateIfNotExists", "path": "models/run1/lake.dfsu"}]});
    assert_eq!(
        expect_status(bulk(&app, &project, again).await, StatusCode::OK).await["results"],
        json!([])
    );
    let again =
        json!({"actions": [{"type": "PathActionCreate", "path": "docs", "isFolder": true}]});
    let problem = expect_problem(
        bulk(&app, &project, again).await,
        StatusCode::CONFLICT,
        "path-exists",
    )
    .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("actions[0]"),
        "{problem}"
    );
    // The trailing-slash path works as well.
    let response = app
        .with_key(Method::POST, &format!("/api/hierarchy/project/{project}/"))
        .json(
            &json!({"actions": [{"type": "PathActionCreate", "path": "extra", "isFolder": true}]}),
        )
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await;
});

api_test!(a_failing_action_rolls_back_the_whole_request, |app| {
    let project = root(&app).await;
    let body = json!({"actions": [
        {"type": "PathActionCreate", "path": "a/b/file.txt"},
        {"type": "PathActionCreate", "path": "c", "isFolder": true},
        {"type": "PathActionDelete", "path": "missing/thing.txt"},
    ]});
    let problem = expect_problem(
        bulk(&app, &project, body).await,
        StatusCode::NOT_FOUND,
        "not-found",
    )
    .await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("actions[2]"),
        "{problem}"
    );
    assert_eq!(subproject_names(&app, &project).await, Vec::<String>::new());
    let body = json!({"actions": [
        {"type": "PathActionCreate", "path": "x/one.txt"},
        {"type": "PathActionCreate", "path": "x/one.txt"},
    ]});
    expect_problem(
        bulk(&app, &project, body).await,
        StatusCode::CONFLICT,
        "path-exists",
    )
    .await;
    assert_eq!(subproject_names(&app, &project).await, Vec::<String>::new());
});

api_test!(delete_actions_move_items_to_the_recycle_bin, |app| {
    let project = root(&app).await;
    let body = json!({"actions": [
        {"type": "PathActionCreate", "path": "keep/file.txt"},
        {"type": "PathActionCreate", "path": "gone", "isFolder": true},
        {"type": "PathActionCreate", "path": "keep/old.txt"},
    ]});
    let created = expect_status(bulk(&app, &project, body).await, StatusCode::OK).await;
    let keep = created["results"][0]["projectId"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = json!({"actions": [
        {"type": "PathActionDelete", "path": "gone", "isFolder": true},
        {"type": "PathActionDelete", "path": "keep/old.txt"},
    ]});
    assert_eq!(
        expect_status(bulk(&app, &project, body).await, StatusCode::OK).await["results"],
        json!([])
    );
    assert_eq!(subproject_names(&app, &project).await, vec!["keep"]);
    assert_eq!(dataset_names(&app, &keep).await, vec!["file.txt"]);
});

api_test!(invalid_paths_are_400_naming_the_action, |app| {
    let project = root(&app).await;
    for (path, index) in [
        ("../escape.txt", 1),
        ("a//b", 1),
        ("", 1),
        ("a/./b", 1),
        (&"n".repeat(300), 1),
    ] {
        let body = json!({"actions": [
            {"type": "PathActionCreate", "path": "fine.txt"},
            {"type": "PathActionCreate", "path": path},
        ]});
        let problem = expect_problem(
            bulk(&app, &project, body).await,
            StatusCode::BAD_REQUEST,
            "validation",
        )
        .await;
        assert!(
            problem["errors"][format!("actions[{index}].path")].is_array(),
            "{path}: {problem}"
        );
    }
    let body = json!({"actions": [{"type": "PathActionMove", "path": "a"}]});
    expect_problem(
        bulk(&app, &project, body).await,
        StatusCode::BAD_REQUEST,
        "validation",
    )
    .await;
    let body = json!({"actions": [{"type": "PathActionCreate", "path": "a"}], "sasTokenExpiration": "forever"});
    let problem = expect_problem(
        bulk(&app, &project, body).await,
        StatusCode::BAD_REQUEST,
        "validation",
    )
    .await;
    assert!(problem["errors"]["sasTokenExpiration"].is_array());
    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"type": "PathActionCreate", "path": format!("f{i}.txt")}))
        .collect();
    expect_problem(
        bulk(&app, &project, json!({"actions": many})).await,
        StatusCode::BAD_REQUEST,
        "validation",
    )
    .await;
    assert_eq!(dataset_names(&app, &project).await, Vec::<String>::new());
});

api_test!(readers_cannot_create_and_strangers_see_nothing, |app| {
    let project = root(&app).await;
    let reader = app.person("Reader", "User").await;
    let key_id = expect_status(
        app.with_key(Method::GET, &routes::principal_me())
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await["id"]
        .clone();
    let members = json!({"members": [{"userId": key_id, "role": "Owner", "principalType": "OpenAPIAccount"}, {"userId": reader.id, "role": "Reader"}]});
    let set = app.project(&project).members().set(&members).await;
    set.expect(StatusCode::OK);
    let body = json!({"actions": [{"type": "PathActionCreate", "path": "a/b.txt"}]});
    let response = app
        .by(As::Person(&reader))
        .hierarchy(&project)
        .apply(&body)
        .await;
    let problem = expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("actions[0]"),
        "{problem}"
    );
    let stranger = app.person("Stranger", "User").await;
    let response = app
        .by(As::Person(&stranger))
        .hierarchy(&project)
        .apply(&body)
        .await;
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    assert_eq!(subproject_names(&app, &project).await, Vec::<String>::new());
});

fn small_pool(config: &mut basin::Config) {
    config.database.max_connections = std::num::NonZeroU32::new(2).unwrap();
}

api_test_with!(
    concurrent_bulk_requests_on_a_small_pool_all_succeed,
    small_pool,
    |app| {
        let project = root(&app).await;
        let mut tasks = Vec::new();
        for index in 0..8 {
            let request = app
                .with_key(Method::POST, &routes::hierarchy(&project))
                .json(&json!({"actions": [
                    {"type": "PathActionCreateIfNotExists", "path": "shared", "isFolder": true},
                    {"type": "PathActionCreate", "path": format!("shared/own {index}/file.txt")},
                ]}));
            tasks.push(tokio::spawn(async move {
                request.send().await.unwrap().status()
            }));
        }
        for task in tasks {
            assert_eq!(task.await.unwrap(), StatusCode::OK);
        }
        let shared = subproject_names(&app, &project).await;
        assert_eq!(shared, vec!["shared"], "one folder, created once");
    }
);

fn few_created(config: &mut basin::Config) {
    config.limits.hierarchy_created_max = std::num::NonZeroUsize::new(5).unwrap();
}

// Issue 9, fault 8: one request could create 50,000 projects (1,000 actions, 50 levels deep).
api_test_with!(
    a_request_creating_too_much_creates_nothing,
    few_created,
    |app| {
        let project = root(&app).await;
        let body = json!({"actions": [
            {"type": "PathActionCreate", "path": "a/b/c/d", "isFolder": true},
            {"type": "PathActionCreate", "path": "a/b/file.txt", "isFolder": false},
            {"type": "PathActionCreate", "path": "e/f", "isFolder": true},
        ]});
        let problem = expect_problem(
            bulk(&app, &project, body).await,
            StatusCode::BAD_REQUEST,
            "hierarchy-too-large",
        )
        .await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("hierarchy_created_max")
        );
        assert!(subproject_names(&app, &project).await.is_empty());
        let body = json!({"actions": [
            {"type": "PathActionCreate", "path": "a/b/c/d", "isFolder": true},
            {"type": "PathActionCreate", "path": "a/b/file.txt", "isFolder": false},
        ]});
        expect_status(bulk(&app, &project, body).await, StatusCode::OK).await;
    }
);

// Issue 9, fault 9: creating a path whose name an invisible sibling holds answered 409
// path-exists, revealing the sibling.
api_test!(siblings_the_caller_cannot_see_are_as_if_not_there, |app| {
    let owner = app.person("Olga", "User").await;
    let carl = app.person("Carl", "User").await;
    let root = app
        .create_project(As::Person(&owner), "Root", json!({}))
        .await;
    let added = app
        .add_project_member(As::Person(&owner), &root, carl.id, "Contributor")
        .await;
    expect_status(added, StatusCode::OK).await;
    let secret = app
        .create_subproject(As::Person(&owner), &root, "secret", json!({}))
        .await;
    let root_id = id_str(&root);
    let body = json!({"actions": [
        {"type": "PathActionCreate", "path": "secret", "isFolder": true},
        {"type": "PathActionCreate", "path": "secret/notes.txt", "isFolder": false},
    ]});
    let response = app
        .by(As::Person(&carl))
        .hierarchy(root_id)
        .apply(&body)
        .await;
    let answer = expect_status(response, StatusCode::OK).await;
    let created = answer["results"][0]["projectId"].as_str().unwrap();
    assert_ne!(created, id_str(&secret));
    assert_eq!(answer["results"][1]["projectId"], created);
    // Deleting the hidden one by its path finds only the caller's own.
    let body =
        json!({"actions": [{"type": "PathActionDelete", "path": "secret", "isFolder": true}]});
    let response = app
        .by(As::Person(&carl))
        .hierarchy(root_id)
        .apply(&body)
        .await;
    expect_status(response, StatusCode::OK).await;
    let still = app
        .by(As::Person(&owner))
        .project(id_str(&secret))
        .get()
        .await;
    expect_status(still, StatusCode::OK).await;
});

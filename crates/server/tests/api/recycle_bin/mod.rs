//! The recycle bin through HTTP (docs/recycle-bin.md):
//! soft delete through every delete endpoint, listings and visibility, restore in place and
//! elsewhere with their rules, permanent deletion with the blobs, and retention by the
//! settable clock.

mod retention_crash;

use chrono::TimeDelta;
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use basin::Clock as _;

use crate::helpers::*;

// ---- helpers ----

/// GET as `who` with the bin's default api-version.
async fn get(app: &TestApp, who: As<'_>, path: &str) -> Reply {
    app.by(who).recycle_bin().read(path).await
}

/// A bin listing (200) as `who`.
async fn bin(app: &TestApp, who: As<'_>, path: &str) -> Value {
    get(app, who, path).await.expect(StatusCode::OK)
}

fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {page}"))
        .iter()
        .map(|item| item["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The ids of `all-deleted-items` as `who`, sorted.
async fn visible(app: &TestApp, who: As<'_>) -> Vec<String> {
    let bin = app.by(who).recycle_bin();
    let mut found = ids(&bin
        .all_deleted_items("limit=100")
        .await
        .expect(StatusCode::OK));
    found.sort();
    found
}

fn sorted(items: &[&str]) -> Vec<String> {
    let mut items: Vec<String> = items.iter().map(|item| (*item).to_owned()).collect();
    items.sort();
    items
}

async fn delete(app: &TestApp, who: As<'_>, path: &str) {
    let response = app.send_as(who, Method::DELETE, path, None).await;
    expect_status(response, StatusCode::NO_CONTENT).await;
}

async fn delete_project(app: &TestApp, project: &str) {
    let reply = app.project(project).delete().await;
    reply.expect(StatusCode::NO_CONTENT);
}

async fn delete_dataset(app: &TestApp, dataset: &str) {
    delete(app, As::Key, &routes::dataset(dataset)).await;
}

async fn upload(app: &TestApp, project: &str, name: &str, bytes: &[u8]) -> String {
    let record = expect_status(
        app.upload_file(project, name, bytes.to_vec()).await,
        StatusCode::CREATED,
    )
    .await;
    id_str(&record).to_owned()
}

async fn root(app: &TestApp, name: &str) -> String {
    id_str(&app.create_project(As::Key, name, json!({})).await).to_owned()
}

async fn sub(app: &TestApp, parent: &str, name: &str) -> String {
    sub_with(app, parent, name, json!({})).await
}

async fn sub_with(app: &TestApp, parent: &str, name: &str, extra: Value) -> String {
    let parent = json!({ "id": parent });
    id_str(&app.create_subproject(As::Key, &parent, name, extra).await).to_owned()
}

/// PUT (in place) or POST (with `body`) a restore as `who`.
async fn restore(app: &TestApp, who: As<'_>, path: &str, body: Option<Value>) -> Response {
    let method = if body.is_some() {
        Method::POST
    } else {
        Method::PUT
    };
    app.send_as(who, method, path, body).await
}

async fn restored(app: &TestApp, who: As<'_>, path: &str, body: Option<Value>) {
    expect_status(restore(app, who, path, body).await, StatusCode::NO_CONTENT).await;
}

fn project_restore(project: &str) -> String {
    routes::bin_project_restore(project)
}

fn dataset_restore(dataset: &str) -> String {
    routes::bin_dataset_restore(dataset)
}

async fn status_of(app: &TestApp, who: As<'_>, path: &str) -> StatusCode {
    app.send_as(who, Method::GET, path, None).await.status()
}

async fn project_status(app: &TestApp, project: &str) -> StatusCode {
    app.project(project).get().await.status()
}

async fn dataset_status(app: &TestApp, dataset: &str) -> StatusCode {
    status_of(app, As::Key, &routes::dataset(dataset)).await
}

/// `purgeAfter - deletedAt` of a bin item (wire times: UTC without an offset).
fn retention_of(item: &Value) -> TimeDelta {
    let time = |field: &str| {
        chrono::NaiveDateTime::parse_from_str(item[field].as_str().unwrap(), "%Y-%m-%dT%H:%M:%S%.f")
            .unwrap_or_else(|error| panic!("{field}: {error}: {item}"))
    };
    time("purgeAfter") - time("deletedAt")
}

/// Runs the retention job as BackOffice (a token valid at the app's now: tests move the
/// clock) and returns its counts.
async fn purge_expired(app: &TestApp) -> Value {
    let token = app.token(basin::TokenRequest {
        subject: Uuid::new_v4(),
        roles: vec!["BackOffice".into()],
        ttl: TimeDelta::minutes(5),
        ..Default::default()
    });
    let response = app
        .with_token(Method::POST, &routes::bin_purge_expired(), &token)
        .header("api-version", "2")
        .send()
        .await
        .unwrap();
    expect_status(response, StatusCode::OK).await
}

/// A request with another tenant's Owner API key.
fn foreign(app: &TestApp, key: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.anonymous(method, path)
        .header("svc-open-api-key", key)
        .header("api-version", "2")
}

async fn foreign_key(app: &TestApp) -> String {
    let tenant = app.create_tenant("Elsewhere").await;
    app.create_api_key(tenant, "Owner").await.1
}

/// The status of the blob behind a read URL, signed anew for the app's now (tests move the
/// clock past the URL's expiry).
async fn blob_status(app: &TestApp, url: &str) -> StatusCode {
    let url = basin::resign_blob_url(&app.secret, url, "r", app.clock.now() + TimeDelta::hours(1))
        .unwrap();
    reqwest::get(&url).await.unwrap().status()
}

// ---- soft delete ----

api_test!(
    every_delete_endpoint_puts_exactly_the_deleted_item_in_the_bin,
    |app| {
        let r = root(&app, "R").await;
        let legacy_root = root(&app, "Legacy root").await;
        let meta_sub = sub(&app, &r, "Meta sub").await;
        let kept_sub = sub(&app, &r, "Kept").await;
        let legacy_dataset = upload(&app, &r, "legacy.txt", b"one").await;
        let meta_dataset = upload(&app, &r, "meta.txt", b"two").await;
        let kept_dataset = upload(&app, &r, "kept.txt", b"three").await;
        delete(&app, As::Key, &routes::legacy_project(&legacy_root)).await;
        delete(&app, As::Key, &routes::project(&meta_sub)).await;
        delete(
            &app,
            As::Key,
            &routes::legacy_project_dataset(&r, &legacy_dataset),
        )
        .await;
        delete(&app, As::Key, &routes::dataset(&meta_dataset)).await;
        let body = json!({"actions": [
            {"type": "PathActionCreate", "path": "folder/inner.txt"},
            {"type": "PathActionCreate", "path": "file.txt"},
        ]});
        let bulk = |body: Value| {
            app.with_key(Method::POST, &routes::hierarchy(&r))
                .header("api-version", "3")
                .json(&body)
                .send()
        };
        let created = expect_status(bulk(body).await.unwrap(), StatusCode::OK).await;
        let folder = created["results"][0]["projectId"]
            .as_str()
            .unwrap()
            .to_owned();
        let body = json!({"actions": [
            {"type": "PathActionDelete", "path": "folder", "isFolder": true},
            {"type": "PathActionDelete", "path": "file.txt"},
        ]});
        expect_status(bulk(body).await.unwrap(), StatusCode::OK).await;

        let all = bin(
            &app,
            As::Key,
            &format!("{}?limit=100", routes::all_deleted_items()),
        )
        .await;
        assert_eq!(all["totalCount"], 6, "{all}");
        let mut listed: Vec<(String, String)> = all["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                (
                    item["name"].as_str().unwrap().to_owned(),
                    item["itemType"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        listed.sort();
        let expected = [
            ("Legacy root", "Project"),
            ("Meta sub", "Project"),
            ("file.txt", "Dataset"),
            ("folder", "Project"),
            ("legacy.txt", "Dataset"),
            ("meta.txt", "Dataset"),
        ];
        let mut expected: Vec<(String, String)> = expected
            .iter()
            .map(|(name, kind)| ((*name).to_owned(), (*kind).to_owned()))
            .collect();
        expected.sort();
        assert_eq!(listed, expected, "{all}");
        for project in [&legacy_root, &meta_sub, &folder] {
            assert_eq!(project_status(&app, project).await, StatusCode::NOT_FOUND);
        }
        for dataset in [&legacy_dataset, &meta_dataset] {
            assert_eq!(dataset_status(&app, dataset).await, StatusCode::NOT_FOUND);
        }
        assert_eq!(project_status(&app, &kept_sub).await, StatusCode::OK);
        assert_eq!(dataset_status(&app, &kept_dataset).await, StatusCode::OK);
        let subs = app.project(&r).subprojects("").await.expect(StatusCode::OK);
        assert_eq!(names_in(&subs), vec!["Kept"], "{subs}");
        let datasets = app.project(&r).datasets("").await.expect(StatusCode::OK);
        assert_eq!(names_in(&datasets), vec!["kept.txt"], "{datasets}");
    }
);

api_test!(
    items_below_a_deleted_project_are_unavailable_unlisted_and_return_with_it,
    |app| {
        let r = root(&app, "R").await;
        let s = sub(&app, &r, "S").await;
        let in_root = upload(&app, &r, "in-root.txt", &[7; 2000]).await;
        let in_sub = upload(&app, &s, "in-sub.txt", &[8; 1000]).await;
        let deleted_first = upload(&app, &s, "deleted-first.txt", b"x").await;
        delete_dataset(&app, &deleted_first).await;
        delete_project(&app, &r).await;

        assert_eq!(visible(&app, As::Key).await, sorted(&[&r]));
        let item = app
            .recycle_bin()
            .project(&r)
            .get()
            .await
            .expect(StatusCode::OK);
        assert_eq!(item["itemType"], "Project", "{item}");
        assert_eq!(item["storageSize"], 3000, "live datasets below it: {item}");
        assert_eq!(item["sizeKB"], 3, "{item}");
        assert_eq!(item["accessLevel"], "Private", "{item}");
        assert!(item["deletedBy"].is_string(), "{item}");
        assert!(item.get("parentProjectId").is_none(), "{item}");
        assert_eq!(project_status(&app, &s).await, StatusCode::NOT_FOUND);
        assert_eq!(dataset_status(&app, &in_root).await, StatusCode::NOT_FOUND);
        assert_eq!(dataset_status(&app, &in_sub).await, StatusCode::NOT_FOUND);
        let hidden = app.recycle_bin().dataset(&deleted_first).get().await;
        expect_problem(hidden, StatusCode::NOT_FOUND, "not-found").await;
        let alone = app.recycle_bin().dataset(&deleted_first).restore().await;
        expect_problem(alone, StatusCode::CONFLICT, "container-in-recycle-bin").await;
        let elsewhere = root(&app, "Elsewhere").await;
        let alone = app
            .recycle_bin()
            .dataset(&deleted_first)
            .restore_to(&json!({"targetProjectId": elsewhere}))
            .await;
        expect_problem(alone, StatusCode::CONFLICT, "container-in-recycle-bin").await;
        let listed = bin(&app, As::Key, &routes::bin_dataset_list()).await;
        assert_eq!(listed["totalCount"], 0, "{listed}");

        app.recycle_bin().project(&r).restore().await.no_content();
        assert_eq!(project_status(&app, &s).await, StatusCode::OK);
        assert_eq!(dataset_status(&app, &in_root).await, StatusCode::OK);
        assert_eq!(dataset_status(&app, &in_sub).await, StatusCode::OK);
        assert_eq!(visible(&app, As::Key).await, sorted(&[&deleted_first]));
        let record = bin(
            &app,
            As::Key,
            &routes::bin_project_dataset(&s, &deleted_first),
        )
        .await;
        assert_eq!(record["name"], "deleted-first.txt", "{record}");
        assert!(
            record["deletedAt"].is_string(),
            "the record says when: {record}"
        );
    }
);

api_test!(deleted_items_vanish_from_every_regular_call, |app| {
    let r = root(&app, "R").await;
    let live = root(&app, "Live").await;
    let s = sub(&app, &r, "S").await;
    let deep = sub(&app, &s, "Deep").await;
    let in_deep = upload(&app, &deep, "in-deep.txt", b"d").await;
    let in_live = upload(&app, &live, "in-live.txt", b"l").await;
    let live_sub = sub(&app, &live, "Live sub").await;
    delete_project(&app, &r).await;
    delete_project(&app, &live_sub).await;
    delete_dataset(&app, &in_live).await;
    for path in [
        routes::project_list(),
        routes::project_offset_list(),
        routes::legacy_project_list(),
        routes::project_subproject_list(&live),
        routes::project_subproject_offset_list(&live),
        routes::legacy_project_subprojects(&live),
        routes::project_recursive_list(&live),
        routes::project_dataset_list(&live),
    ] {
        let page = expect_status(
            app.send_as(As::Key, Method::GET, &path, None).await,
            StatusCode::OK,
        )
        .await;
        let found = names_in(&page);
        assert!(
            found.iter().all(|name| name == "Live"),
            "{path} lists deleted items: {page}"
        );
    }
    for path in [
        routes::project(&r),
        routes::project(&s),
        routes::project(&deep),
        routes::project_subproject_list(&s),
        routes::project_dataset_list(&deep),
        routes::project_capabilities(&deep),
        routes::project_member(&deep),
        routes::dataset(&in_deep),
        routes::dataset(&in_live),
        routes::raw_dataset(&in_deep),
        routes::raw_dataset(&in_live),
    ] {
        let response = app.send_as(As::Key, Method::GET, &path, None).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
    }
    let response = app
        .project(&deep)
        .create_subproject(&json!({"name": "New"}))
        .await;
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "create below a deleted project"
    );
    assert_eq!(
        path_flags(&app, &deep).await,
        flags(&[("R", true), ("S", true), ("Deep", true)])
    );
});

// ---- listings ----

/// Three datasets and two subprojects of a new root, deleted a minute apart in the order
/// b.txt (size 300), sub Beta, c.txt (size 1), sub Alpha, a.txt (size 2000); returns the root.
async fn five_deleted(app: &TestApp) -> String {
    let r = root(app, "R").await;
    let b = upload(app, &r, "b.txt", &[1; 300]).await;
    let beta = sub(app, &r, "Beta").await;
    let c = upload(app, &r, "c.txt", &[1; 1]).await;
    let alpha = sub(app, &r, "Alpha").await;
    let a = upload(app, &r, "a.txt", &[1; 2000]).await;
    for (dataset, project) in [(Some(&b), None), (None, Some(&beta)), (Some(&c), None)]
        .into_iter()
        .chain([(None, Some(&alpha)), (Some(&a), None)])
    {
        if let Some(dataset) = dataset {
            delete_dataset(app, dataset).await;
        }
        if let Some(project) = project {
            delete_project(app, project).await;
        }
        app.clock.advance(TimeDelta::minutes(1));
    }
    r
}

api_test!(listings_hold_their_kind_and_page_with_total_count, |app| {
    let r = five_deleted(&app).await;
    for (path, expected) in [
        (routes::bin_dataset_list(), vec!["a.txt", "c.txt", "b.txt"]),
        (routes::bin_project_list(), vec!["Alpha", "Beta"]),
        (
            routes::bin_project_dataset_list(&r),
            vec!["a.txt", "c.txt", "b.txt"],
        ),
        (routes::bin_project_subprojects(&r), vec!["Alpha", "Beta"]),
        (
            routes::all_deleted_items(),
            vec!["a.txt", "Alpha", "c.txt", "Beta", "b.txt"],
        ),
        (
            routes::my_deleted_items(),
            vec!["a.txt", "Alpha", "c.txt", "Beta", "b.txt"],
        ),
    ] {
        let page = bin(&app, As::Key, &path).await;
        assert_eq!(names_in(&page), expected, "{path}: {page}");
        assert_eq!(page["totalCount"], expected.len(), "{path}: {page}");
        assert_eq!(page["offset"], 0, "{path}: {page}");
    }
    let page = bin(
        &app,
        As::Key,
        &format!("{}?offset=1&limit=2", routes::all_deleted_items()),
    )
    .await;
    assert_eq!(names_in(&page), vec!["Alpha", "c.txt"], "{page}");
    assert_eq!(page["totalCount"], 5, "{page}");
    assert_eq!(page["offset"], 1, "{page}");
    assert_eq!(page["limit"], 2, "{page}");
    let page = bin(
        &app,
        As::Key,
        &format!("{}?offset=5&limit=2", routes::all_deleted_items()),
    )
    .await;
    assert_eq!(names_in(&page), Vec::<String>::new(), "{page}");
    assert_eq!(page["totalCount"], 5, "{page}");
    let item = &bin(
        &app,
        As::Key,
        &format!("{}?limit=1", routes::bin_dataset_list()),
    )
    .await["data"][0];
    assert_eq!(item["projectId"], r.as_str(), "{item}");
    assert_eq!(item["itemType"], "Dataset", "{item}");
    assert_eq!(item["storageSize"], 2000, "{item}");
    assert_eq!(item["sizeKB"], 2, "{item}");
    assert!(item["datasetFormat"].is_string(), "{item}");
    assert_eq!(retention_of(item), TimeDelta::days(180), "{item}");
    let project = &bin(
        &app,
        As::Key,
        &format!("{}?limit=1", routes::bin_project_list()),
    )
    .await["data"][0];
    assert_eq!(project["parentProjectId"], r.as_str(), "{project}");
    assert!(project.get("projectId").is_none(), "{project}");
});

api_test!(
    every_sort_key_sorts_both_ways_and_query_names_ignore_case,
    |app| {
        five_deleted(&app).await;
        let all = &routes::all_deleted_items();
        for (query, expected) in [
            (
                "sortBy=Name&sortOrder=Asc",
                vec!["Alpha", "Beta", "a.txt", "b.txt", "c.txt"],
            ),
            (
                "sortBy=Name&sortOrder=Desc",
                vec!["c.txt", "b.txt", "a.txt", "Beta", "Alpha"],
            ),
            (
                "sortBy=DeletedAt&sortOrder=Asc",
                vec!["b.txt", "Beta", "c.txt", "Alpha", "a.txt"],
            ),
            (
                "sortBy=DeletedAt&sortOrder=Desc",
                vec!["a.txt", "Alpha", "c.txt", "Beta", "b.txt"],
            ),
            (
                "sortBy=DeletedAt",
                vec!["a.txt", "Alpha", "c.txt", "Beta", "b.txt"],
            ),
            (
                "SortBy=Name&SortOrder=Asc&Offset=1&Limit=2",
                vec!["Beta", "a.txt"],
            ),
            ("SORTBY=Name&sortorder=Desc&OFFSET=0&LIMIT=1", vec!["c.txt"]),
            ("sortBy=name&sortOrder=asc&limit=2", vec!["Alpha", "Beta"]),
            ("sortBy=DELETEDAT&sortOrder=ASC&limit=1", vec!["b.txt"]),
        ] {
            // Names sort in byte order on both databases, as every name sort of the API does.
            let page = bin(&app, As::Key, &format!("{all}?{query}")).await;
            assert_eq!(names_in(&page), expected, "{query}: {page}");
        }
        let datasets = &routes::bin_dataset_list();
        for (query, expected) in [
            (
                "sortBy=StorageSize&sortOrder=Asc",
                vec!["c.txt", "b.txt", "a.txt"],
            ),
            (
                "sortBy=StorageSize&sortOrder=Desc",
                vec!["a.txt", "b.txt", "c.txt"],
            ),
        ] {
            let page = bin(&app, As::Key, &format!("{datasets}?{query}")).await;
            assert_eq!(names_in(&page), expected, "{query}: {page}");
        }
    }
);

api_test!(bad_listing_queries_are_400_problems, |app| {
    five_deleted(&app).await;
    for query in [
        "sortBy=Size",
        "sortOrder=Sideways",
        "sortBy=Na%00me",
        "offset=-1",
        "limit=0",
        "limit=1000000",
        "limit=many",
    ] {
        let response = get(
            &app,
            As::Key,
            &format!("{}?{query}", routes::all_deleted_items()),
        )
        .await;
        expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
    }
});

api_test!(my_deleted_items_lists_only_what_the_caller_deleted, |app| {
    let person = app.person("Contributor", "User").await;
    let r = root(&app, "R").await;
    expect_status(
        app.add_project_member(As::Key, &json!({"id": r}), person.id, "Contributor")
            .await,
        StatusCode::OK,
    )
    .await;
    let mine = upload(&app, &r, "mine.txt", b"m").await;
    let theirs = upload(&app, &r, "theirs.txt", b"t").await;
    let my_sub = sub_with(&app, &r, "my sub", json!({"inheritsMembers": true})).await;
    delete(&app, As::Person(&person), &routes::dataset(&mine)).await;
    delete(&app, As::Person(&person), &routes::project(&my_sub)).await;
    delete_dataset(&app, &theirs).await;
    let persons_bin = app.by(As::Person(&person)).recycle_bin();
    let page = persons_bin
        .my_deleted_items("")
        .await
        .expect(StatusCode::OK);
    let mut found = ids(&page);
    found.sort();
    assert_eq!(found, sorted(&[&mine, &my_sub]), "{page}");
    assert_eq!(
        page["data"][0]["deletedBy"],
        person.id.to_string(),
        "{page}"
    );
    let page = app
        .recycle_bin()
        .my_deleted_items("")
        .await
        .expect(StatusCode::OK);
    assert_eq!(ids(&page), vec![theirs.clone()], "{page}");
    assert_eq!(
        visible(&app, As::Key).await,
        sorted(&[&mine, &my_sub, &theirs])
    );
    assert_eq!(
        visible(&app, As::Person(&person)).await,
        sorted(&[&mine, &my_sub, &theirs])
    );
});

// ---- visibility and permissions (docs/recycle-bin.md#who-sees-what) ----

/// People of the bootstrap tenant and a bin holding one item of each kind of place.
///
/// - `P`: Private root with members `owner` (Owner), `contributor` (Contributor), `reader`
///   (Reader); `S`: subproject of `P` that inherits; `T`: subproject of `P` with its own
///   member `subonly` (Contributor); `Q`: Private root with `owner` (Owner) and
///   `contributor` (Contributor); `C`: Confidential root of the key, with no people.
/// - In the bin: `d` (dataset of `P`), `f` (dataset of `S`), `e` (dataset of `T`), `s2`
///   (subproject of `P`), `q` (the root `Q`), `g` (dataset of `C`), `c2` (subproject of `C`).
struct Fixture {
    owner: Person,
    contributor: Person,
    reader: Person,
    subonly: Person,
    admin: Person,
    p: String,
    d: String,
    f: String,
    e: String,
    s2: String,
    q: String,
    g: String,
    c2: String,
}

async fn fixture(app: &TestApp) -> Fixture {
    let owner = app.person("Owner", "User").await;
    let contributor = app.person("Contributor", "User").await;
    let reader = app.person("Reader", "User").await;
    let subonly = app.person("Sub only", "User").await;
    let admin = app.person("Admin", "Administrator").await;
    let members = json!({"accessLevel": "Private", "members": [
        {"userId": owner.id, "role": "Owner"},
        {"userId": contributor.id, "role": "Contributor"},
        {"userId": reader.id, "role": "Reader"},
    ]});
    let p = id_str(&app.create_project(As::Key, "P", members).await).to_owned();
    let s = sub_with(app, &p, "S", json!({"inheritsMembers": true})).await;
    let t = sub_with(
        app,
        &p,
        "T",
        json!({"members": [{"userId": subonly.id, "role": "Contributor"}]}),
    )
    .await;
    let s2 = sub_with(app, &p, "S2", json!({"inheritsMembers": true})).await;
    let q_members = json!({"accessLevel": "Private", "members": [
        {"userId": owner.id, "role": "Owner"},
        {"userId": contributor.id, "role": "Contributor"},
    ]});
    let q = id_str(&app.create_project(As::Key, "Q", q_members).await).to_owned();
    let c = id_str(
        &app.create_project(As::Key, "C", json!({"accessLevel": "Confidential"}))
            .await,
    )
    .to_owned();
    let c2 = sub_with(app, &c, "C2", json!({"accessLevel": "Confidential"})).await;
    let d = upload(app, &p, "d.txt", b"d").await;
    let f = upload(app, &s, "f.txt", b"f").await;
    let e = upload(app, &t, "e.txt", b"e").await;
    let g = upload(app, &c, "g.txt", b"g").await;
    for dataset in [&d, &f, &e, &g] {
        delete_dataset(app, dataset).await;
    }
    for project in [&s2, &q, &c2] {
        delete_project(app, project).await;
    }
    Fixture {
        owner,
        contributor,
        reader,
        subonly,
        admin,
        p,
        d,
        f,
        e,
        s2,
        q,
        g,
        c2,
    }
}

api_test!(each_caller_sees_the_items_it_may_delete, |app| {
    let x = fixture(&app).await;
    let everything = [&x.d, &x.f, &x.e, &x.s2, &x.q, &x.g, &x.c2].map(String::as_str);
    assert_eq!(visible(&app, As::Key).await, sorted(&everything));
    assert_eq!(
        visible(&app, As::Person(&x.owner)).await,
        sorted(&[&x.d, &x.f, &x.s2, &x.q]),
        "Owner of P and Q: not T's dataset (no role on T)"
    );
    assert_eq!(
        visible(&app, As::Person(&x.contributor)).await,
        sorted(&[&x.d, &x.f, &x.s2]),
        "Contributor: content of P and of S by inheritance, not the root Q it cannot delete"
    );
    assert_eq!(
        visible(&app, As::Person(&x.reader)).await,
        Vec::<String>::new()
    );
    assert_eq!(
        visible(&app, As::Person(&x.subonly)).await,
        sorted(&[&x.e]),
        "member of T only"
    );
    assert_eq!(
        visible(&app, As::Person(&x.admin)).await,
        sorted(&[&x.d, &x.f, &x.e, &x.s2, &x.q]),
        "tenant Administrator: implicit Owner of Private projects, nothing of a Confidential one"
    );
    let key = foreign_key(&app).await;
    for path in [
        &routes::all_deleted_items(),
        &routes::my_deleted_items(),
        &routes::bin_dataset_list(),
        &routes::bin_project_list(),
    ] {
        let response = foreign(&app, &key, Method::GET, path).send().await.unwrap();
        let page = expect_status(response, StatusCode::OK).await;
        assert_eq!(page["totalCount"], 0, "{path}: {page}");
    }
    for path in [
        routes::bin_project_dataset_list(&x.p),
        routes::bin_project_subprojects(&x.p),
        routes::bin_project(&x.q),
        routes::bin_dataset(&x.d),
        routes::bin_project_dataset(&x.p, &x.d),
    ] {
        let response = foreign(&app, &key, Method::GET, &path)
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
    let in_p = bin(
        &app,
        As::Person(&x.reader),
        &routes::bin_project_dataset_list(&x.p),
    )
    .await;
    assert_eq!(
        in_p["totalCount"], 0,
        "a Reader of P sees no items in it: {in_p}"
    );
    let response = get(
        &app,
        As::Person(&x.subonly),
        &routes::bin_project_subprojects(&x.p),
    )
    .await;
    expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
});

api_test!(
    callers_without_the_privilege_get_403_with_a_role_and_404_without,
    |app| {
        let x = fixture(&app).await;
        let key = foreign_key(&app).await;
        // (who, item path, expected status)
        let cases: Vec<(&str, Option<&Person>, String, String, StatusCode)> = vec![
            (
                "reader on P's dataset",
                Some(&x.reader),
                routes::bin_dataset(&x.d),
                dataset_restore(&x.d),
                StatusCode::FORBIDDEN,
            ),
            (
                "reader on P's subproject",
                Some(&x.reader),
                routes::bin_project(&x.s2),
                project_restore(&x.s2),
                StatusCode::FORBIDDEN,
            ),
            (
                "contributor on the root Q",
                Some(&x.contributor),
                routes::bin_project(&x.q),
                project_restore(&x.q),
                StatusCode::FORBIDDEN,
            ),
            (
                "reader on Q (no role)",
                Some(&x.reader),
                routes::bin_project(&x.q),
                project_restore(&x.q),
                StatusCode::NOT_FOUND,
            ),
            (
                "member of T on P's dataset",
                Some(&x.subonly),
                routes::bin_dataset(&x.d),
                dataset_restore(&x.d),
                StatusCode::NOT_FOUND,
            ),
            (
                "admin on a Confidential project's dataset",
                Some(&x.admin),
                routes::bin_dataset(&x.g),
                dataset_restore(&x.g),
                StatusCode::NOT_FOUND,
            ),
            (
                "admin on a Confidential project's subproject",
                Some(&x.admin),
                routes::bin_project(&x.c2),
                project_restore(&x.c2),
                StatusCode::NOT_FOUND,
            ),
            (
                "another tenant",
                None,
                routes::bin_project(&x.q),
                project_restore(&x.q),
                StatusCode::NOT_FOUND,
            ),
        ];
        for (label, who, item, restore_path, status) in cases {
            let kind = if status == StatusCode::FORBIDDEN {
                "forbidden"
            } else {
                "not-found"
            };
            let send = |method: Method, path: String, body: Option<Value>| {
                let mut request = match who {
                    Some(person) => app
                        .request_as(As::Person(person), method, &path)
                        .header("api-version", "2"),
                    None => foreign(&app, &key, method, &path),
                };
                if let Some(body) = body {
                    request = request.json(&body);
                }
                request.send()
            };
            let response = send(Method::GET, item.clone(), None).await.unwrap();
            assert_eq!(response.status(), status, "GET, {label}");
            expect_problem(response, status, kind).await;
            let response = send(Method::PUT, restore_path.clone(), None).await.unwrap();
            assert_eq!(response.status(), status, "PUT restore, {label}");
            let target = json!({"targetProjectId": x.p});
            let response = send(Method::POST, restore_path, Some(target))
                .await
                .unwrap();
            assert_eq!(response.status(), status, "POST restore, {label}");
            let response = send(Method::DELETE, item, None).await.unwrap();
            assert_eq!(response.status(), status, "DELETE, {label}");
        }
        let everything = [&x.d, &x.f, &x.e, &x.s2, &x.q, &x.g, &x.c2].map(String::as_str);
        assert_eq!(
            visible(&app, As::Key).await,
            sorted(&everything),
            "nothing changed"
        );
    }
);

api_test!(
    owners_contributors_and_inherited_members_restore_and_purge_what_they_see,
    |app| {
        let x = fixture(&app).await;
        app.by(As::Person(&x.contributor))
            .recycle_bin()
            .dataset(&x.f)
            .restore()
            .await
            .no_content();
        assert_eq!(dataset_status(&app, &x.f).await, StatusCode::OK);
        app.by(As::Person(&x.contributor))
            .recycle_bin()
            .project(&x.s2)
            .restore()
            .await
            .no_content();
        assert_eq!(project_status(&app, &x.s2).await, StatusCode::OK);
        app.by(As::Person(&x.owner))
            .recycle_bin()
            .project(&x.q)
            .restore()
            .await
            .no_content();
        assert_eq!(project_status(&app, &x.q).await, StatusCode::OK);
        delete(&app, As::Person(&x.subonly), &routes::bin_dataset(&x.e)).await;
        delete(
            &app,
            As::Person(&x.owner),
            &routes::bin_project_dataset(&x.p, &x.d),
        )
        .await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&x.g, &x.c2]));
    }
);

// ---- restore ----

async fn path_flags(app: &TestApp, project: &str) -> Vec<(String, bool)> {
    let path = expect_status(
        app.send_as(
            As::Key,
            Method::GET,
            &routes::legacy_project_path(project),
            None,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    path["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            (
                node["name"].as_str().unwrap().to_owned(),
                node["isDeleted"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn flags(items: &[(&str, bool)]) -> Vec<(String, bool)> {
    items
        .iter()
        .map(|(name, deleted)| ((*name).to_owned(), *deleted))
        .collect()
}

api_test!(
    restoring_the_deepest_of_three_deleted_levels_restores_the_path,
    |app| {
        let r = root(&app, "R").await;
        let a = sub(&app, &r, "A").await;
        let b = sub(&app, &a, "B").await;
        let in_b = upload(&app, &b, "in-b.txt", b"b").await;
        delete_project(&app, &b).await;
        delete_project(&app, &a).await;
        delete_project(&app, &r).await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&r, &a, &b]));
        let subs = bin(&app, As::Key, &routes::bin_project_subprojects(&a)).await;
        assert_eq!(ids(&subs), vec![b.clone()], "{subs}");
        assert_eq!(
            path_flags(&app, &b).await,
            flags(&[("R", true), ("A", true), ("B", true)])
        );
        app.recycle_bin().project(&b).restore().await.no_content();
        for project in [&r, &a, &b] {
            assert_eq!(project_status(&app, project).await, StatusCode::OK);
        }
        assert_eq!(dataset_status(&app, &in_b).await, StatusCode::OK);
        assert_eq!(visible(&app, As::Key).await, Vec::<String>::new());
        assert_eq!(
            path_flags(&app, &b).await,
            flags(&[("R", false), ("A", false), ("B", false)])
        );
    }
);

api_test!(
    a_path_restore_with_a_level_the_caller_may_not_restore_is_403_and_changes_nothing,
    |app| {
        let person = app.person("Owner of A", "User").await;
        let r = root(&app, "R").await;
        let a = sub_with(
            &app,
            &r,
            "A",
            json!({"members": [{"userId": person.id, "role": "Owner"}]}),
        )
        .await;
        let b = sub_with(&app, &a, "B", json!({"inheritsMembers": true})).await;
        delete_project(&app, &b).await;
        delete_project(&app, &a).await;
        delete_project(&app, &r).await;
        let response = app
            .by(As::Person(&person))
            .recycle_bin()
            .project(&b)
            .restore()
            .await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        let response = app
            .request_as(As::Person(&person), Method::POST, &project_restore(&b))
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::FORBIDDEN,
            "POST without a body restores in place"
        );
        assert_eq!(visible(&app, As::Key).await, sorted(&[&r, &a, &b]));
        assert_eq!(
            path_flags(&app, &b).await,
            flags(&[("R", true), ("A", true), ("B", true)])
        );
        // Restore elsewhere is the way out for this caller.
        let elsewhere = id_str(
            &app.create_project(
                As::Key,
                "Elsewhere",
                json!({"members": [{"userId": person.id, "role": "Contributor"}]}),
            )
            .await,
        )
        .to_owned();
        app.by(As::Person(&person))
            .recycle_bin()
            .project(&b)
            .restore_to(&json!({"targetProjectId": elsewhere}))
            .await
            .no_content();
        assert_eq!(
            path_flags(&app, &b).await,
            flags(&[("Elsewhere", false), ("B", false)])
        );
        assert_eq!(visible(&app, As::Key).await, sorted(&[&r, &a]));
    }
);

api_test!(
    post_without_a_body_restores_in_place_on_every_route,
    |app| {
        let r = root(&app, "R").await;
        let s = sub(&app, &r, "S").await;
        let d1 = upload(&app, &r, "one.txt", b"1").await;
        let d2 = upload(&app, &r, "two.txt", b"2").await;
        delete_project(&app, &s).await;
        delete_dataset(&app, &d1).await;
        delete_dataset(&app, &d2).await;
        for path in [
            project_restore(&s),
            dataset_restore(&d1),
            routes::bin_project_dataset_restore(&r, &d2),
        ] {
            // As clients send them: the JSON-patch content type, `Accept: text/plain`, no body.
            let response = app
                .request_as(As::Key, Method::POST, &path)
                .header("content-type", "application/json-patch+json")
                .header("accept", "text/plain")
                .send()
                .await
                .unwrap();
            expect_status(response, StatusCode::NO_CONTENT).await;
        }
        let d3 = upload(&app, &r, "three.txt", b"3").await;
        delete_dataset(&app, &d3).await;
        let response = app
            .request_as(As::Key, Method::PUT, &dataset_restore(&d3))
            .header("content-type", "application/json-patch+json")
            .send()
            .await
            .unwrap();
        expect_status(response, StatusCode::NO_CONTENT).await;
        assert_eq!(project_status(&app, &s).await, StatusCode::OK);
        assert_eq!(dataset_status(&app, &d1).await, StatusCode::OK);
        assert_eq!(dataset_status(&app, &d2).await, StatusCode::OK);
    }
);

api_test!(
    datasets_restore_in_place_and_elsewhere_through_both_route_forms,
    |app| {
        let r = root(&app, "R").await;
        let other = root(&app, "Other").await;
        let d1 = upload(&app, &r, "one.txt", b"1").await;
        let d2 = upload(&app, &r, "two.txt", b"2").await;
        let d3 = upload(&app, &r, "three.txt", b"3").await;
        for dataset in [&d1, &d2, &d3] {
            delete_dataset(&app, dataset).await;
        }
        let record = app
            .recycle_bin()
            .dataset(&d1)
            .get()
            .await
            .expect(StatusCode::OK);
        assert_eq!(record["projectId"], r.as_str(), "{record}");
        let wrong = app.recycle_bin().project_dataset(&other, &d1).get().await;
        expect_problem(wrong, StatusCode::NOT_FOUND, "not-found").await;
        let wrong = restore(
            &app,
            As::Key,
            &routes::bin_project_dataset_restore(&other, &d1),
            None,
        )
        .await;
        expect_problem(wrong, StatusCode::NOT_FOUND, "not-found").await;
        restored(
            &app,
            As::Key,
            &routes::bin_project_dataset_restore(&r, &d1),
            None,
        )
        .await;
        // Property names bind in any case (docs/api-conventions.md#requests).
        restored(
            &app,
            As::Key,
            &routes::bin_project_dataset_restore(&r, &d2),
            Some(json!({"targetprojectid": other})),
        )
        .await;
        app.recycle_bin()
            .dataset(&d3)
            .restore_to(&json!({"TargetProjectId": other}))
            .await
            .no_content();
        for (dataset, project) in [(&d1, &r), (&d2, &other), (&d3, &other)] {
            let record = expect_status(
                app.send_as(As::Key, Method::GET, &routes::dataset(dataset), None)
                    .await,
                StatusCode::OK,
            )
            .await;
            assert_eq!(record["projectId"], project.as_str(), "{record}");
        }
        let again = app.recycle_bin().dataset(&d1).restore().await;
        expect_problem(again, StatusCode::NOT_FOUND, "not-found").await;
    }
);

api_test!(
    datasets_deleted_before_their_project_follow_it_when_restored_elsewhere,
    |app| {
        let r = root(&app, "R").await;
        let s = sub(&app, &r, "S").await;
        let inner = sub(&app, &s, "Inner").await;
        let target = root(&app, "Target").await;
        let d = upload(&app, &inner, "d.txt", b"d").await;
        delete_dataset(&app, &d).await;
        delete_project(&app, &s).await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&s]));
        app.recycle_bin()
            .project(&s)
            .restore_to(&json!({"targetProjectId": target}))
            .await
            .no_content();
        assert_eq!(visible(&app, As::Key).await, sorted(&[&d]));
        let listed = bin(&app, As::Key, &routes::bin_project_dataset_list(&inner)).await;
        assert_eq!(ids(&listed), vec![d.clone()], "{listed}");
        app.recycle_bin().dataset(&d).restore().await.no_content();
        let record = expect_status(
            app.send_as(As::Key, Method::GET, &routes::dataset(&d), None)
                .await,
            StatusCode::OK,
        )
        .await;
        assert_eq!(record["projectId"], inner.as_str(), "{record}");
        assert_eq!(
            path_flags(&app, &inner).await,
            flags(&[("Target", false), ("S", false), ("Inner", false)])
        );
        // The old tree no longer holds it: deleting R leaves it alone.
        delete_project(&app, &r).await;
        assert_eq!(dataset_status(&app, &d).await, StatusCode::OK);
    }
);

api_test!(
    a_restore_onto_a_taken_name_is_409_and_overwrites_nothing,
    |app| {
        let r = root(&app, "R").await;
        let other = root(&app, "Other").await;
        let old_dataset = upload(&app, &r, "same.txt", b"old").await;
        delete_dataset(&app, &old_dataset).await;
        let new_dataset = upload(&app, &r, "same.txt", b"new").await;
        let in_other = upload(&app, &other, "same.txt", b"other").await;
        let old_sub = sub(&app, &r, "Same").await;
        delete_project(&app, &old_sub).await;
        let new_sub = sub(&app, &r, "Same").await;
        sub(&app, &other, "Same").await;
        for (path, body) in [
            (dataset_restore(&old_dataset), None),
            (
                dataset_restore(&old_dataset),
                Some(json!({"targetProjectId": other})),
            ),
            (project_restore(&old_sub), None),
            (
                project_restore(&old_sub),
                Some(json!({"targetProjectId": other})),
            ),
        ] {
            let response = restore(&app, As::Key, &path, body.clone()).await;
            expect_problem(response, StatusCode::CONFLICT, "restore-name-taken").await;
        }
        assert_eq!(
            visible(&app, As::Key).await,
            sorted(&[&old_dataset, &old_sub])
        );
        for dataset in [&new_dataset, &in_other] {
            assert_eq!(dataset_status(&app, dataset).await, StatusCode::OK);
        }
        assert_eq!(project_status(&app, &new_sub).await, StatusCode::OK);
        // Only exactly the same name of the same kind clashes.
        let case_differs = upload(&app, &r, "Case.txt", b"c").await;
        delete_dataset(&app, &case_differs).await;
        upload(&app, &r, "case.txt", b"c").await;
        app.recycle_bin()
            .dataset(&case_differs)
            .restore()
            .await
            .no_content();
        let kind_differs = sub(&app, &r, "one name").await;
        delete_project(&app, &kind_differs).await;
        upload(&app, &r, "one name", b"n").await;
        app.recycle_bin()
            .project(&kind_differs)
            .restore()
            .await
            .no_content();
    }
);

api_test!(
    a_path_restore_clashing_at_an_upper_level_is_409_and_changes_nothing,
    |app| {
        let r = root(&app, "Top").await;
        let a = sub(&app, &r, "A").await;
        delete_project(&app, &a).await;
        delete_project(&app, &r).await;
        let usurper = root(&app, "Top").await;
        let response = app.recycle_bin().project(&a).restore().await;
        expect_problem(response, StatusCode::CONFLICT, "restore-name-taken").await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&r, &a]));
        assert_eq!(project_status(&app, &usurper).await, StatusCode::OK);
        assert_eq!(
            path_flags(&app, &a).await,
            flags(&[("Top", true), ("A", true)])
        );
    }
);

api_test!(
    a_project_cannot_be_restored_into_itself_or_below_itself,
    |app| {
        let r = root(&app, "R").await;
        let a = sub(&app, &r, "A").await;
        let b = sub(&app, &a, "B").await;
        delete_project(&app, &r).await;
        for target in [&r, &a, &b] {
            let response = app
                .recycle_bin()
                .project(&r)
                .restore_to(&json!({"targetProjectId": target}))
                .await;
            expect_problem(response, StatusCode::CONFLICT, "restore-loop").await;
        }
        assert_eq!(visible(&app, As::Key).await, sorted(&[&r]));
    }
);

api_test!(a_restore_into_a_target_in_the_bin_is_409, |app| {
    let r = root(&app, "R").await;
    let d = upload(&app, &r, "d.txt", b"d").await;
    let s = sub(&app, &r, "S").await;
    delete_dataset(&app, &d).await;
    delete_project(&app, &s).await;
    let gone = root(&app, "Gone").await;
    let below_gone = sub(&app, &gone, "Below").await;
    delete_project(&app, &gone).await;
    for target in [&gone, &below_gone] {
        for path in [dataset_restore(&d), project_restore(&s)] {
            let response = restore(
                &app,
                As::Key,
                &path,
                Some(json!({"targetProjectId": target})),
            )
            .await;
            expect_problem(response, StatusCode::CONFLICT, "target-in-recycle-bin").await;
        }
    }
    assert_eq!(visible(&app, As::Key).await, sorted(&[&d, &s, &gone]));
});

api_test!(
    a_restore_into_another_tenant_or_an_unknown_project_is_404,
    |app| {
        let r = root(&app, "R").await;
        let d = upload(&app, &r, "d.txt", b"d").await;
        delete_dataset(&app, &d).await;
        let key = foreign_key(&app).await;
        let response = foreign(&app, &key, Method::POST, &routes::projects())
            .header("api-version", "3")
            .json(&json!({"name": "Theirs"}))
            .send()
            .await
            .unwrap();
        let theirs = id_str(&expect_status(response, StatusCode::CREATED).await).to_owned();
        for target in [theirs, Uuid::new_v4().to_string()] {
            let response = app
                .recycle_bin()
                .dataset(&d)
                .restore_to(&json!({"targetProjectId": target}))
                .await;
            expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        }
        assert_eq!(visible(&app, As::Key).await, sorted(&[&d]));
    }
);

api_test!(
    restore_elsewhere_needs_create_content_on_the_target,
    |app| {
        let person = app.person("Contributor", "User").await;
        let r = root(&app, "R").await;
        expect_status(
            app.add_project_member(As::Key, &json!({"id": r}), person.id, "Contributor")
                .await,
            StatusCode::OK,
        )
        .await;
        let read_only = id_str(
            &app.create_project(
                As::Key,
                "Read only",
                json!({"members": [{"userId": person.id, "role": "Reader"}]}),
            )
            .await,
        )
        .to_owned();
        let d = upload(&app, &r, "d.txt", b"d").await;
        delete_dataset(&app, &d).await;
        let response = app
            .by(As::Person(&person))
            .recycle_bin()
            .dataset(&d)
            .restore_to(&json!({"targetProjectId": read_only}))
            .await;
        expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&d]));
    }
);

api_test_with!(
    a_restore_elsewhere_past_the_depth_limit_is_400,
    |config: &mut basin::Config| config.limits.project_depth_max = 3,
    |app| {
        let r = root(&app, "R").await;
        let one = sub(&app, &r, "1").await;
        let two = sub(&app, &one, "2").await;
        let moved = root(&app, "Moved").await;
        let child = sub(&app, &moved, "Child").await;
        delete_project(&app, &moved).await;
        let response = app
            .recycle_bin()
            .project(&moved)
            .restore_to(&json!({"targetProjectId": two}))
            .await;
        expect_problem(response, StatusCode::BAD_REQUEST, "depth-limit").await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&moved]));
        app.recycle_bin()
            .project(&moved)
            .restore_to(&json!({"targetProjectId": one}))
            .await
            .no_content();
        assert_eq!(
            path_flags(&app, &child).await,
            flags(&[
                ("R", false),
                ("1", false),
                ("Moved", false),
                ("Child", false)
            ])
        );
    }
);

api_test!(
    an_inheriting_subproject_restored_elsewhere_keeps_the_members_it_had,
    |app| {
        let person = app.person("Member", "User").await;
        let p = id_str(
            &app.create_project(
                As::Key,
                "P",
                json!({"members": [{"userId": person.id, "role": "Contributor"}]}),
            )
            .await,
        )
        .to_owned();
        let s = sub_with(&app, &p, "S", json!({"inheritsMembers": true})).await;
        let outsider = app.person("Target member", "User").await;
        let target = id_str(
            &app.create_project(
                As::Key,
                "Target",
                json!({"members": [{"userId": outsider.id, "role": "Owner"}]}),
            )
            .await,
        )
        .to_owned();
        delete_project(&app, &s).await;
        app.recycle_bin()
            .project(&s)
            .restore_to(&json!({"targetProjectId": target}))
            .await
            .no_content();
        let record = app
            .by(As::Person(&person))
            .project(&s)
            .get()
            .await
            .expect(StatusCode::OK);
        assert_eq!(record["parentProjectId"], target.as_str(), "{record}");
        let caps = app
            .by(As::Person(&person))
            .project(&s)
            .capabilities()
            .await
            .expect(StatusCode::OK);
        assert_eq!(caps["canCreateContent"], true, "{caps}");
        assert_eq!(record["inheritsMembers"], false, "{record}");
        let response = app.by(As::Person(&outsider)).project(&s).get().await;
        assert_eq!(
            response.status(),
            StatusCode::NOT_FOUND,
            "the target's members do not reach it"
        );
    }
);

// ---- permanent deletion ----

/// Runs the retention job until nothing is left to purge: no item marked and no blob queued
/// (the background purge may hold an item for a moment), at most 100 times.
async fn purge_until_quiet(app: &TestApp) {
    for _ in 0..100 {
        let counts = purge_expired(app).await;
        let pending: i64 = basin::on_db!(&app.db, |pool| sqlx::query_scalar(
            "SELECT (SELECT COUNT(*) FROM recycle_bin WHERE purging_since IS NOT NULL) \
             + (SELECT COUNT(*) FROM blob_garbage)"
        )
        .fetch_one(pool)
        .await)
        .unwrap();
        if counts == json!({"projects": 0, "datasets": 0, "blobs": 0, "finished": true})
            && pending == 0
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the purge did not finish");
}

api_test_with!(
    a_purged_project_takes_its_subtree_rows_and_blobs_and_cannot_come_back,
    |config: &mut basin::Config| config.recycle_bin.purge_batch_size =
        std::num::NonZeroU32::new(2).unwrap(),
    |app| {
        let kept = root(&app, "Kept").await;
        let kept_dataset = upload(&app, &kept, "kept.txt", b"kept").await;
        let kept_url = read_url(&app, &kept_dataset).await;
        let r = root(&app, "R").await;
        let s1 = sub(&app, &r, "S1").await;
        let s2 = sub(&app, &r, "S2").await;
        let s3 = sub(&app, &s2, "S3").await;
        let mut datasets = Vec::new();
        for (project, name) in [
            (&r, "r1.txt"),
            (&r, "r2.txt"),
            (&s1, "s1.txt"),
            (&s2, "s2.txt"),
            (&s3, "s3a.txt"),
            (&s3, "s3b.txt"),
        ] {
            datasets.push(upload(&app, project, name, name.as_bytes()).await);
        }
        let mut urls = Vec::new();
        for dataset in &datasets {
            urls.push(read_url(&app, dataset).await);
        }
        let deleted_alone = datasets[4].clone();
        delete_dataset(&app, &deleted_alone).await;
        delete_project(&app, &s1).await;
        delete_project(&app, &r).await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&r, &s1]));
        let hidden = app.recycle_bin().dataset(&deleted_alone).purge().await;
        expect_problem(hidden, StatusCode::NOT_FOUND, "not-found").await;
        delete(&app, As::Key, &routes::bin_project(&r)).await;
        // Gone for users at once, whether or not the background purge is still working.
        assert_eq!(visible(&app, As::Key).await, Vec::<String>::new());
        for path in [project_restore(&r), project_restore(&s1)] {
            let response = restore(&app, As::Key, &path, None).await;
            expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
        }
        let again = app.recycle_bin().project(&r).purge().await;
        expect_problem(again, StatusCode::NOT_FOUND, "not-found").await;
        purge_until_quiet(&app).await;
        for project in [&r, &s1, &s2, &s3] {
            assert_eq!(project_status(&app, project).await, StatusCode::NOT_FOUND);
            let path = app
                .send_as(
                    As::Key,
                    Method::GET,
                    &routes::legacy_project_path(project),
                    None,
                )
                .await;
            assert_eq!(path.status(), StatusCode::NOT_FOUND);
            let item = app.recycle_bin().project(project).get().await;
            assert_eq!(item.status(), StatusCode::NOT_FOUND);
        }
        for dataset in &datasets {
            assert_eq!(dataset_status(&app, dataset).await, StatusCode::NOT_FOUND);
            let item = app.recycle_bin().dataset(dataset).get().await;
            assert_eq!(item.status(), StatusCode::NOT_FOUND);
        }
        for url in &urls {
            assert_eq!(blob_status(&app, url).await, StatusCode::NOT_FOUND, "{url}");
        }
        assert_eq!(blob_status(&app, &kept_url).await, StatusCode::OK);
        assert_eq!(dataset_status(&app, &kept_dataset).await, StatusCode::OK);
        let rows: i64 = basin::on_db!(&app.db, |pool| sqlx::query_scalar(
            "SELECT (SELECT COUNT(*) FROM projects WHERE name IN ('R', 'S1', 'S2', 'S3')) \
             + (SELECT COUNT(*) FROM datasets) + (SELECT COUNT(*) FROM recycle_bin)"
        )
        .fetch_one(pool)
        .await)
        .unwrap();
        assert_eq!(rows, 1, "only the kept dataset is left");
    }
);

api_test!(
    a_blob_two_datasets_name_is_kept_while_one_of_them_lives,
    |app| {
        let r = root(&app, "R").await;
        let first = upload(&app, &r, "first.txt", b"shared bytes").await;
        let second = upload(&app, &r, "second.txt", b"own bytes").await;
        let first_id: Uuid = first.parse().unwrap();
        let second_id: Uuid = second.parse().unwrap();
        basin::on_db!(&app.db, |pool| sqlx::query(
        "UPDATE datasets SET data_path = (SELECT data_path FROM datasets WHERE id = $1) WHERE id = $2"
    )
    .bind(first_id)
    .bind(second_id)
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))
    .unwrap();
        let url = read_url(&app, &second).await;
        assert_eq!(blob_status(&app, &url).await, StatusCode::OK);
        delete_dataset(&app, &first).await;
        delete(&app, As::Key, &routes::bin_dataset(&first)).await;
        purge_until_quiet(&app).await;
        let url = read_url(&app, &second).await;
        let kept = reqwest::get(&url).await.unwrap();
        assert_eq!(kept.status(), StatusCode::OK);
        assert_eq!(kept.bytes().await.unwrap().as_ref(), b"shared bytes");
        delete_dataset(&app, &second).await;
        delete(&app, As::Key, &routes::bin_project_dataset(&r, &second)).await;
        purge_until_quiet(&app).await;
        assert_eq!(blob_status(&app, &url).await, StatusCode::NOT_FOUND);
    }
);

api_test!(
    a_subproject_purged_while_its_parent_is_in_the_bin_stays_gone_when_the_parent_returns,
    |app| {
        let r = root(&app, "R").await;
        let s = sub(&app, &r, "S").await;
        let kept = sub(&app, &r, "Kept").await;
        let in_s = upload(&app, &s, "in-s.txt", b"s").await;
        let in_kept = upload(&app, &kept, "in-kept.txt", b"k").await;
        delete_project(&app, &s).await;
        delete_project(&app, &r).await;
        delete(&app, As::Key, &routes::bin_project(&s)).await;
        purge_until_quiet(&app).await;
        assert_eq!(visible(&app, As::Key).await, sorted(&[&r]));
        app.recycle_bin().project(&r).restore().await.no_content();
        assert_eq!(project_status(&app, &s).await, StatusCode::NOT_FOUND);
        assert_eq!(dataset_status(&app, &in_s).await, StatusCode::NOT_FOUND);
        assert_eq!(project_status(&app, &kept).await, StatusCode::OK);
        assert_eq!(dataset_status(&app, &in_kept).await, StatusCode::OK);
        let subs = app.project(&r).subprojects("").await.expect(StatusCode::OK);
        assert_eq!(names_in(&subs), vec!["Kept"], "{subs}");
        assert_eq!(visible(&app, As::Key).await, Vec::<String>::new());
    }
);

// ---- retention ----

api_test!(
    retention_purges_after_180_days_and_not_one_second_before,
    |app| {
        let r = root(&app, "R").await;
        let d = upload(&app, &r, "d.txt", b"d").await;
        let url = read_url(&app, &d).await;
        let s = sub(&app, &r, "S").await;
        upload(&app, &s, "in-s.txt", b"s").await;
        delete_dataset(&app, &d).await;
        delete_project(&app, &s).await;
        app.clock
            .advance(TimeDelta::days(180) - TimeDelta::seconds(1));
        let counts = purge_expired(&app).await;
        assert_eq!(
            counts,
            json!({"projects": 0, "datasets": 0, "blobs": 0, "finished": true})
        );
        assert_eq!(visible(&app, As::Key).await, sorted(&[&d, &s]));
        // Still there, but not served while in the bin (403, where a blob that is gone is 404).
        assert_eq!(blob_status(&app, &url).await, StatusCode::FORBIDDEN);
        app.clock.advance(TimeDelta::seconds(2));
        let counts = purge_expired(&app).await;
        assert_eq!(
            counts,
            json!({"projects": 1, "datasets": 2, "blobs": 2, "finished": true})
        );
        assert_eq!(visible(&app, As::Key).await, Vec::<String>::new());
        assert_eq!(blob_status(&app, &url).await, StatusCode::NOT_FOUND);
        assert_eq!(project_status(&app, &r).await, StatusCode::OK);
        let again = purge_expired(&app).await;
        assert_eq!(
            again,
            json!({"projects": 0, "datasets": 0, "blobs": 0, "finished": true})
        );
    }
);

api_test!(retention_counts_from_the_latest_deletion, |app| {
    let r = root(&app, "R").await;
    let d = upload(&app, &r, "d.txt", b"d").await;
    delete_dataset(&app, &d).await;
    app.clock.advance(TimeDelta::days(100));
    app.recycle_bin().dataset(&d).restore().await.no_content();
    delete_dataset(&app, &d).await;
    app.clock.advance(TimeDelta::days(100));
    let counts = purge_expired(&app).await;
    assert_eq!(
        counts,
        json!({"projects": 0, "datasets": 0, "blobs": 0, "finished": true})
    );
    assert_eq!(visible(&app, As::Key).await, sorted(&[&d]));
    app.clock.advance(TimeDelta::days(81));
    assert_eq!(purge_expired(&app).await["datasets"], 1);
});

api_test_with!(
    retention_days_are_configurable,
    |config: &mut basin::Config| config.recycle_bin.retention_days = 7,
    |app| {
        let r = root(&app, "R").await;
        let d = upload(&app, &r, "d.txt", b"d").await;
        delete_dataset(&app, &d).await;
        let item = bin(&app, As::Key, &routes::bin_dataset_list()).await;
        let item = &item["data"][0];
        assert_eq!(retention_of(item), TimeDelta::days(7), "{item}");
        app.clock
            .advance(TimeDelta::days(7) - TimeDelta::seconds(1));
        assert_eq!(purge_expired(&app).await["datasets"], 0);
        app.clock.advance(TimeDelta::seconds(2));
        assert_eq!(purge_expired(&app).await["datasets"], 1);
        assert_eq!(visible(&app, As::Key).await, Vec::<String>::new());
    }
);

api_test!(only_platform_administrators_run_the_retention_job, |app| {
    let response = app
        .send_as(As::Key, Method::POST, &routes::bin_purge_expired(), None)
        .await;
    expect_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    let response = app
        .anonymous(Method::POST, &routes::bin_purge_expired())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
});

// ---- bad input ----

api_test!(malformed_ids_and_restore_bodies_are_400_problems, |app| {
    let r = root(&app, "R").await;
    let d = upload(&app, &r, "d.txt", b"d").await;
    delete_dataset(&app, &d).await;
    for (method, path) in [
        (
            Method::GET,
            "/api/recycle-bin/project/not-a-uuid".to_owned(),
        ),
        (
            Method::GET,
            "/api/recycle-bin/dataset/not-a-uuid".to_owned(),
        ),
        (
            Method::GET,
            format!("/api/recycle-bin/project/{r}/dataset/12"),
        ),
        (
            Method::GET,
            "/api/recycle-bin/project/x/dataset/list".to_owned(),
        ),
        (
            Method::GET,
            "/api/recycle-bin/project/x/subprojects".to_owned(),
        ),
        (Method::PUT, "/api/recycle-bin/project/x/restore".to_owned()),
        (
            Method::PUT,
            "/api/recycle-bin/dataset/%00/restore".to_owned(),
        ),
        (Method::DELETE, "/api/recycle-bin/project/x".to_owned()),
        (Method::DELETE, "/api/recycle-bin/dataset/x%00y".to_owned()),
    ] {
        let response = app.send_as(As::Key, method.clone(), &path, None).await;
        expect_problem(response, StatusCode::BAD_REQUEST, "invalid-path").await;
    }
    for body in [
        json!({"targetProjectId": "not-a-uuid"}),
        json!({"targetProjectId": 5}),
        json!({"targetProjectId": r, "overwrite": true}),
        json!({"targetProjectId": "a\u{0}b"}),
    ] {
        let response = app
            .recycle_bin()
            .dataset(&d)
            .restore_to(&body.clone())
            .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let problem = expect_problem(response, StatusCode::BAD_REQUEST, "validation").await;
        assert!(problem["detail"].is_string(), "{body}: {problem}");
    }
    let response = app
        .request_as(As::Key, Method::POST, &dataset_restore(&d))
        .header("content-type", "application/json")
        .body("{\"targetProjectId\": ")
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::BAD_REQUEST, "invalid-body").await;
    assert_eq!(visible(&app, As::Key).await, sorted(&[&d]));
    let unknown = Uuid::new_v4();
    for (method, path) in [
        (Method::GET, routes::bin_project(unknown)),
        (Method::GET, routes::bin_dataset(unknown)),
        (Method::PUT, project_restore(&unknown.to_string())),
        (Method::DELETE, routes::bin_dataset(unknown)),
        (Method::GET, routes::bin_project_subprojects(unknown)),
    ] {
        let response = app.send_as(As::Key, method, &path, None).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
    // A dataset id on a project route, or a dataset under a project it is not in, is not
    // found, and nothing happens to it.
    let other = root(&app, "Other").await;
    for (method, path) in [
        (Method::GET, routes::bin_project(&d)),
        (Method::PUT, project_restore(&d)),
        (Method::DELETE, routes::bin_project(&d)),
        (Method::DELETE, routes::bin_project_dataset(&other, &d)),
        (Method::GET, routes::bin_project_dataset(&other, &d)),
    ] {
        let response = app.send_as(As::Key, method, &path, None).await;
        expect_problem(response, StatusCode::NOT_FOUND, "not-found").await;
    }
    assert_eq!(visible(&app, As::Key).await, sorted(&[&d]));
});

api_test!(
    every_supported_api_version_is_accepted_and_others_refused,
    |app| {
        for version in ["1", "2", "3"] {
            let response = app
                .with_key(Method::GET, &routes::all_deleted_items())
                .header("api-version", version)
                .send()
                .await
                .unwrap();
            expect_status(response, StatusCode::OK).await;
        }
        let response = app
            .with_key(Method::GET, &routes::all_deleted_items())
            .send()
            .await
            .unwrap();
        expect_status(response, StatusCode::OK).await;
        let response = app
            .with_key(Method::GET, &routes::all_deleted_items())
            .header("api-version", "9")
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::BAD_REQUEST, "unsupported-api-version").await;
    }
);

// ---- concurrency ----

api_test!(concurrent_restores_of_one_item_restore_it_once, |app| {
    let r = root(&app, "R").await;
    for round in 0..5 {
        let d = upload(&app, &r, &format!("d{round}.txt"), b"d").await;
        delete_dataset(&app, &d).await;
        let path = dataset_restore(&d);
        let (first, second) = tokio::join!(
            restore(&app, As::Key, &path, None),
            restore(&app, As::Key, &path, None)
        );
        let mut statuses = [first.status(), second.status()];
        statuses.sort();
        assert_eq!(
            statuses,
            [StatusCode::NO_CONTENT, StatusCode::NOT_FOUND],
            "round {round}"
        );
    }
    assert_eq!(visible(&app, As::Key).await, Vec::<String>::new());
});

api_test!(
    crossing_restores_between_two_trees_both_succeed_without_deadlock,
    |app| {
        for round in 0..40 {
            // Ids grow with time: x < y < x_sub, so the two restores meet the two trees in
            // opposite orders of their project ids.
            let x = root(&app, &format!("X{round}")).await;
            let y = root(&app, &format!("Y{round}")).await;
            let x_sub = sub(&app, &x, "X sub").await;
            let in_x = upload(&app, &x, "from-x.txt", b"x").await;
            let in_y = upload(&app, &y, "from-y.txt", b"y").await;
            delete_dataset(&app, &in_x).await;
            delete_dataset(&app, &in_y).await;
            let (x_path, y_path) = (dataset_restore(&in_x), dataset_restore(&in_y));
            let (first, second) = tokio::join!(
                restore(&app, As::Key, &x_path, Some(json!({"targetProjectId": y}))),
                restore(
                    &app,
                    As::Key,
                    &y_path,
                    Some(json!({"targetProjectId": x_sub}))
                )
            );
            expect_status(first, StatusCode::NO_CONTENT).await;
            expect_status(second, StatusCode::NO_CONTENT).await;
        }
    }
);

api_test!(
    a_restore_racing_a_permanent_delete_leaves_one_outcome,
    |app| {
        let r = root(&app, "R").await;
        for round in 0..5 {
            let d = upload(&app, &r, &format!("d{round}.txt"), b"d").await;
            delete_dataset(&app, &d).await;
            let (restore_path, purge_path) = (dataset_restore(&d), routes::bin_dataset(&d));
            let (restored, purged) = tokio::join!(
                restore(&app, As::Key, &restore_path, None),
                app.send_as(As::Key, Method::DELETE, &purge_path, None)
            );
            let outcome = (restored.status(), purged.status());
            let live = dataset_status(&app, &d).await;
            match outcome {
                (StatusCode::NO_CONTENT, StatusCode::NOT_FOUND) => {
                    assert_eq!(live, StatusCode::OK, "round {round}");
                }
                (StatusCode::NOT_FOUND, StatusCode::NO_CONTENT) => {
                    assert_eq!(live, StatusCode::NOT_FOUND, "round {round}");
                }
                other => panic!("round {round}: {other:?}"),
            }
        }
        purge_until_quiet(&app).await;
        assert_eq!(visible(&app, As::Key).await, Vec::<String>::new());
    }
);

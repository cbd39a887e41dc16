//! The permission matrix (docs/permissions.md): every project, dataset, upload and hierarchy
//! endpoint, called over HTTP by each kind of caller, against the status the rules give.
//!
//! One fixture per backend:
//!
//! - `P`: a Private top-level project of `owner` (a tenant `User`), with the members
//!   `reader` (Reader), `contributor` (Contributor) and `inherited` (Reader);
//! - `S`: a subproject of `P` that inherits its members (so `inherited` reaches it through `P`);
//! - `T`: a subproject of `P` with its own members `owner` (Owner) and `subonly` (Contributor);
//!   `subonly` is not a member of `P`;
//! - `D`: a dataset in `P`; `E`: a dataset in `S`.
//!
//! Requests that change things act on a fresh target made for the cell (`FreshS` is a new
//! subproject of `P` set up like `S`, and so on), so that no cell changes another's outcome.
//! Every cell runs; the mismatches are collected and shown together, with the whole matrix as
//! the implementation answered it.

use std::fmt::Write as _;

use reqwest::multipart::{Form, Part};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

/// The columns of the matrix, in the order of the `expect` arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// No credentials.
    Anonymous,
    /// An API key with the Owner role in a second tenant.
    OtherTenant,
    /// Reader member of `P`.
    Reader,
    /// Contributor member of `P`.
    Contributor,
    /// Owner of `P` (and of `T`), a plain tenant User otherwise.
    Owner,
    /// Reader member of `P`; the rows on `S` show what inheritance gives.
    Inherited,
    /// Contributor of `T` only.
    SubOnly,
    /// A BackOffice token without a tenant claim.
    BackOffice,
}

const WHO: [Who; 8] = [
    Who::Anonymous,
    Who::OtherTenant,
    Who::Reader,
    Who::Contributor,
    Who::Owner,
    Who::Inherited,
    Who::SubOnly,
    Who::BackOffice,
];

impl Who {
    fn label(self) -> &'static str {
        match self {
            Who::Anonymous => "anonymous",
            Who::OtherTenant => "other tenant",
            Who::Reader => "Reader",
            Who::Contributor => "Contributor",
            Who::Owner => "Owner",
            Who::Inherited => "inherited",
            Who::SubOnly => "subproject only",
            Who::BackOffice => "BackOffice",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Who::Anonymous => "anon",
            Who::OtherTenant => "other",
            Who::Reader => "reader",
            Who::Contributor => "contrib",
            Who::Owner => "owner",
            Who::Inherited => "inherit",
            Who::SubOnly => "subonly",
            Who::BackOffice => "backoff",
        }
    }
}

/// What `{target}` in a row's path and body stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Nothing (`/api/metadata/project/list`, creating a top-level project).
    None,
    P,
    S,
    T,
    /// A new top-level project with the members of `P`.
    FreshP,
    /// A new subproject of `P` that inherits (like `S`).
    FreshS,
    /// A new subproject of `P` with the members of `T`.
    FreshT,
    /// A new subproject of a new subproject of `T`, both inheriting (so `T` rules them).
    FreshUnderT,
    D,
    E,
    /// A new dataset in `P`.
    FreshD,
    /// A new dataset in `S`.
    FreshE,
    /// A new dataset in `T`.
    FreshInT,
}

impl Target {
    fn label(self) -> &'static str {
        match self {
            Target::None => "-",
            Target::P => "P",
            Target::S => "S",
            Target::T => "T",
            Target::FreshP => "new top-level like P",
            Target::FreshS => "new sub of P like S",
            Target::FreshT => "new sub of P like T",
            Target::FreshUnderT => "new sub-sub of T",
            Target::D => "D (in P)",
            Target::E => "E (in S)",
            Target::FreshD => "new dataset in P",
            Target::FreshE => "new dataset in S",
            Target::FreshInT => "new dataset in T",
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Body {
    None,
    /// JSON text with the placeholders of [`Fixture::fill`].
    Json(&'static str),
    /// A multipart form with one small file.
    Upload,
}

struct Row {
    method: Method,
    /// With `{target}`, `{P}`, `{S}`, `{T}`, `{n}` (unique per cell) and the user placeholders.
    path: String,
    target: Target,
    body: Body,
    /// In the order of [`WHO`]: anonymous, other tenant, Reader, Contributor, Owner,
    /// inherited, subproject only, BackOffice.
    expect: [u16; 8],
}

fn row(
    expect: [u16; 8],
    method: Method,
    path: impl Into<String>,
    target: Target,
    body: Body,
) -> Row {
    Row {
        method,
        path: path.into(),
        target,
        body,
        expect,
    }
}

/// The matrix. Columns: anonymous, other tenant, Reader, Contributor, Owner, inherited,
/// subproject only, BackOffice (no tenant).
#[rustfmt::skip]
fn matrix() -> Vec<Row> {
    use Body::{Json, Upload};
    use Target::*;
    const GET: Method = Method::GET;
    const POST: Method = Method::POST;
    const PUT: Method = Method::PUT;
    const PATCH: Method = Method::PATCH;
    const DELETE: Method = Method::DELETE;
    let none = Body::None;
    // The placeholders `Fixture::fill` replaces in each cell.
    let target = "{target}";
    let (p, s, t) = ("{P}", "{S}", "{T}");
    let (inherited, subonly) = ("{inherited}", "{subonly}");
    vec![
        // ---- reading projects ----
        //   anon othr read cont ownr inhr subp bo
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project(target), P, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project(target), S, none),
        row([401, 404, 404, 404, 200, 404, 200, 404], GET, routes::project(target), T, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project_capabilities(target), P, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project_capabilities(target), S, none),
        row([401, 404, 404, 404, 200, 404, 200, 404], GET, routes::project_capabilities(target), T, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project_member(target), P, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project_member(target), S, none),
        row([401, 404, 404, 404, 200, 404, 200, 404], GET, routes::project_member(target), T, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project_path(target), S, none),
        row([401, 404, 404, 404, 200, 404, 200, 404], GET, routes::project_path(target), T, none),
        // Listings of P: filtered per caller; the subproject-only member sees T (docs/permissions.md#members-of-a-subproject-only). P is
        // invisible to the other tenant and to BackOffice without a tenant, and nothing below it
        // is theirs: 404, as for every other read of P. (The implementation answers 200 with an
        // empty page, which tells a caller in another tenant that the id exists.)
        row([401, 404, 200, 200, 200, 200, 200, 404], GET, routes::project_subproject_list(target), P, none),
        row([401, 404, 200, 200, 200, 200, 200, 404], GET, routes::project_subproject_offset_list(target), P, none),
        row([401, 404, 200, 200, 200, 200, 200, 404], GET, routes::project_recursive_list(target), P, none),
        row([401, 200, 200, 200, 200, 200, 200, 200], GET, routes::project_list(), None, none),
        // ---- reading datasets ----
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project_dataset_list(target), P, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::project_dataset_list(target), S, none),
        row([401, 404, 404, 404, 200, 404, 200, 404], GET, routes::project_dataset_list(target), T, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::dataset(target), D, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::dataset(target), E, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::raw_dataset(target), D, none),
        row([401, 404, 200, 200, 200, 200, 404, 404], GET, routes::raw_dataset(target), E, none),
        // ---- creating ----
        row([401, 201, 201, 201, 201, 201, 201, 403], POST, routes::projects(), None, Json(r#"{"name": "top {n}"}"#)),
        row([401, 404, 403, 201, 201, 403, 404, 404], POST, routes::project_subprojects(target), P, Json(r#"{"name": "sub {n}"}"#)),
        row([401, 404, 403, 201, 201, 403, 404, 404], POST, routes::project_subprojects(target), S, Json(r#"{"name": "sub {n}"}"#)),
        row([401, 404, 404, 404, 201, 404, 201, 404], POST, routes::project_subprojects(target), T, Json(r#"{"name": "sub {n}"}"#)),
        row([401, 404, 403, 201, 201, 403, 404, 404], POST, routes::file_upload(target), P, Upload),
        row([401, 404, 403, 201, 201, 403, 404, 404], POST, routes::file_upload(target), S, Upload),
        row([401, 404, 404, 404, 201, 404, 201, 404], POST, routes::file_upload(target), T, Upload),
        row([401, 404, 403, 200, 200, 403, 404, 404], POST, routes::hierarchy(target), S, Json(r#"{"actions": [{"type": "PathActionCreate", "path": "bulk {n}/file {n}.txt", "isFolder": false}]}"#)),
        row([401, 404, 404, 404, 200, 404, 200, 404], POST, routes::hierarchy(target), T, Json(r#"{"actions": [{"type": "PathActionCreate", "path": "bulk {n}", "isFolder": true}]}"#)),
        // ---- changing projects ----
        row([401, 404, 403, 403, 200, 403, 404, 404], PUT, routes::projects(), P, Json(r#"{"id": "{target}", "name": "P", "description": "edited {n}"}"#)),
        row([401, 404, 403, 403, 200, 403, 404, 404], PUT, routes::projects(), S, Json(r#"{"id": "{target}", "name": "S", "description": "edited {n}"}"#)),
        row([401, 404, 404, 404, 200, 404, 403, 404], PUT, routes::projects(), T, Json(r#"{"id": "{target}", "name": "T", "description": "edited {n}"}"#)),
        row([401, 404, 403, 403, 200, 403, 404, 404], PATCH, routes::projects(), FreshP, Json(r#"{"id": "{target}", "accessLevel": "Shared"}"#)),
        row([401, 404, 403, 403, 200, 403, 404, 404], PATCH, routes::projects(), FreshS, Json(r#"{"id": "{target}", "accessLevel": "Shared"}"#)),
        row([401, 404, 404, 404, 200, 404, 403, 404], PATCH, routes::projects(), FreshT, Json(r#"{"id": "{target}", "accessLevel": "Shared"}"#)),
        // ---- members ----
        row([401, 404, 403, 403, 200, 403, 404, 404], PUT, routes::project_members(target), FreshS, Json(r#"{"members": [{"userId": "{owner}", "role": "Owner"}, {"userId": "{extra}", "role": "Reader"}]}"#)),
        row([401, 404, 404, 404, 200, 404, 403, 404], PUT, routes::project_members(target), FreshT, Json(r#"{"members": [{"userId": "{owner}", "role": "Owner"}, {"userId": "{subonly}", "role": "Contributor"}, {"userId": "{extra}", "role": "Reader"}]}"#)),
        row([401, 404, 403, 403, 200, 403, 404, 404], POST, routes::project_member(target), FreshP, Json(r#"{"userId": "{extra}", "role": "Reader"}"#)),
        row([401, 404, 403, 403, 200, 403, 404, 404], POST, routes::project_member(target), FreshS, Json(r#"{"userId": "{extra}", "role": "Reader"}"#)),
        row([401, 404, 403, 403, 204, 403, 404, 404], DELETE, routes::project_member_of(target, inherited), FreshS, none),
        row([401, 404, 404, 404, 204, 404, 403, 404], DELETE, routes::project_member_of(target, subonly), FreshT, none),
        // ---- moving and deleting projects ----
        // Moves (docs/projects.md#moves): delete-content on the current parent (P) and create-content on the target (S).
        row([401, 404, 403, 200, 200, 403, 404, 404], POST, routes::project_move(target), FreshS, Json(r#"{"targetProjectId": "{S}"}"#)),
        // The same inside T: its parent and the target T are T's own.
        row([401, 404, 404, 404, 200, 404, 200, 404], POST, routes::project_move(target), FreshUnderT, Json(r#"{"targetProjectId": "{T}"}"#)),
        // Deletion (docs/projects.md#deletion): delete-content on the parent is enough for a subproject.
        row([401, 404, 403, 204, 204, 403, 404, 404], DELETE, routes::project(target), FreshS, none),
        // ... but a Contributor of T has no delete-content on P and no canDelete on T itself.
        row([401, 404, 404, 404, 204, 404, 403, 404], DELETE, routes::project(target), FreshT, none),
        row([401, 404, 404, 404, 204, 404, 204, 404], DELETE, routes::project(target), FreshUnderT, none),
        row([401, 404, 403, 403, 204, 403, 404, 404], DELETE, routes::project(target), FreshP, none),
        // ---- changing datasets ----
        row([401, 404, 403, 200, 200, 403, 404, 404], PUT, routes::project_dataset(p), D, Json(r#"{"id": "{target}", "description": "edited {n}"}"#)),
        row([401, 404, 403, 200, 200, 403, 404, 404], PUT, routes::project_dataset(s), E, Json(r#"{"id": "{target}", "description": "edited {n}"}"#)),
        row([401, 404, 404, 404, 200, 404, 200, 404], PUT, routes::project_dataset(t), FreshInT, Json(r#"{"id": "{target}", "description": "edited {n}"}"#)),
        row([401, 404, 403, 200, 200, 403, 404, 404], POST, routes::dataset_move(target), FreshD, Json(r#"{"targetProjectId": "{S}"}"#)),
        // The subproject-only member cannot see P: moving there is 404.
        row([401, 404, 404, 404, 200, 404, 404, 404], POST, routes::dataset_move(target), FreshInT, Json(r#"{"targetProjectId": "{P}"}"#)),
        row([401, 404, 403, 204, 204, 403, 404, 404], DELETE, routes::dataset(target), FreshD, none),
        row([401, 404, 403, 204, 204, 403, 404, 404], DELETE, routes::dataset(target), FreshE, none),
        row([401, 404, 404, 404, 204, 404, 204, 404], DELETE, routes::dataset(target), FreshInT, none),
    ]
}

/// The fixture and the callers' credentials.
struct Fixture<'a> {
    app: &'a TestApp,
    owner: Uuid,
    reader: Uuid,
    contributor: Uuid,
    inherited: Uuid,
    subonly: Uuid,
    extra: Uuid,
    tokens: Tokens,
    other_key: String,
    back_office: String,
    p: String,
    s: String,
    t: String,
    d: String,
    e: String,
}

struct Tokens {
    owner: String,
    reader: String,
    contributor: String,
    inherited: String,
    subonly: String,
}

fn id_text(body: &Value) -> String {
    body["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {body}"))
        .to_owned()
}

fn upload_form(name: &str) -> Form {
    Form::new().part(
        "file",
        Part::bytes(b"matrix content".to_vec()).file_name(name.to_owned()),
    )
}

impl<'a> Fixture<'a> {
    async fn build(app: &'a TestApp) -> Self {
        let tenant = Some(app.tenant_id());
        let owner = app.create_user("Owner", tenant, "User").await;
        let reader = app.create_user("Reader", tenant, "User").await;
        let contributor = app.create_user("Contributor", tenant, "User").await;
        let inherited = app.create_user("Inherited", tenant, "User").await;
        let subonly = app.create_user("Subproject only", tenant, "User").await;
        let extra = app.create_user("Extra", tenant, "User").await;
        let other_tenant = app.create_tenant("Other tenant").await;
        let (_, other_key) = app.create_api_key(other_tenant, "Owner").await;
        let back_office = app.token(basin::TokenRequest {
            subject: Uuid::new_v4(),
            roles: vec!["BackOffice".into()],
            ttl: chrono::TimeDelta::minutes(30),
            ..Default::default()
        });
        let token = |user| app.user_token(user, tenant);
        let tokens = Tokens {
            owner: token(owner),
            reader: token(reader),
            contributor: token(contributor),
            inherited: token(inherited),
            subonly: token(subonly),
        };
        let mut fixture = Self {
            app,
            owner,
            reader,
            contributor,
            inherited,
            subonly,
            extra,
            tokens,
            other_key,
            back_office,
            p: String::new(),
            s: String::new(),
            t: String::new(),
            d: String::new(),
            e: String::new(),
        };
        fixture.p = fixture.new_root("P").await;
        fixture.s = fixture.new_like_s("S").await;
        fixture.t = fixture.new_like_t("T").await;
        fixture.d = fixture.new_dataset(&fixture.p, "d.txt").await;
        fixture.e = fixture.new_dataset(&fixture.s, "e.txt").await;
        fixture
    }

    fn as_owner(&self, method: Method, path: &str) -> RequestBuilder {
        self.app.with_token(method, path, &self.tokens.owner)
    }

    async fn created(&self, request: RequestBuilder) -> String {
        id_text(&expect_status(request.send().await.unwrap(), StatusCode::CREATED).await)
    }

    /// A Private top-level project of `owner` with the members of `P`.
    async fn new_root(&self, name: &str) -> String {
        let body = json!({"name": name, "accessLevel": "Private", "members": [
            {"userId": self.reader, "role": "Reader"},
            {"userId": self.contributor, "role": "Contributor"},
            {"userId": self.inherited, "role": "Reader"},
        ]});
        self.created(self.as_owner(Method::POST, &routes::projects()).json(&body))
            .await
    }

    async fn new_sub(&self, parent: &str, body: Value) -> String {
        self.created(
            self.as_owner(Method::POST, &routes::project_subprojects(parent))
                .json(&body),
        )
        .await
    }

    /// A subproject of `P` that inherits its members.
    async fn new_like_s(&self, name: &str) -> String {
        self.new_sub(&self.p, json!({"name": name, "inheritsMembers": true}))
            .await
    }

    /// A subproject of `P` with its own members: `owner` (Owner) and `subonly` (Contributor).
    async fn new_like_t(&self, name: &str) -> String {
        let body =
            json!({"name": name, "members": [{"userId": self.subonly, "role": "Contributor"}]});
        self.new_sub(&self.p, body).await
    }

    async fn new_dataset(&self, project: &str, name: &str) -> String {
        self.created(
            self.as_owner(Method::POST, &routes::file_upload(project))
                .multipart(upload_form(name)),
        )
        .await
    }

    /// The id `{target}` stands for in cell `n` (fresh targets are made here).
    async fn target(&self, target: Target, n: usize) -> String {
        match target {
            Target::None => String::new(),
            Target::P => self.p.clone(),
            Target::S => self.s.clone(),
            Target::T => self.t.clone(),
            Target::FreshP => self.new_root(&format!("fresh root {n}")).await,
            Target::FreshS => self.new_like_s(&format!("fresh s {n}")).await,
            Target::FreshT => self.new_like_t(&format!("fresh t {n}")).await,
            Target::FreshUnderT => {
                let body = json!({"name": format!("fresh under t {n}"), "inheritsMembers": true});
                let middle = self.new_sub(&self.t, body.clone()).await;
                self.new_sub(&middle, body).await
            }
            Target::D => self.d.clone(),
            Target::E => self.e.clone(),
            Target::FreshD => self.new_dataset(&self.p, &format!("fresh {n}.txt")).await,
            Target::FreshE => self.new_dataset(&self.s, &format!("fresh {n}.txt")).await,
            Target::FreshInT => self.new_dataset(&self.t, &format!("fresh {n}.txt")).await,
        }
    }

    /// Replaces the placeholders of a path or body template.
    fn fill(&self, template: &str, target: &str, n: usize) -> String {
        template
            .replace("{target}", target)
            .replace("{P}", &self.p)
            .replace("{S}", &self.s)
            .replace("{T}", &self.t)
            .replace("{owner}", &self.owner.to_string())
            .replace("{reader}", &self.reader.to_string())
            .replace("{contributor}", &self.contributor.to_string())
            .replace("{inherited}", &self.inherited.to_string())
            .replace("{subonly}", &self.subonly.to_string())
            .replace("{extra}", &self.extra.to_string())
            .replace("{n}", &n.to_string())
    }

    fn request(&self, who: Who, method: Method, path: &str) -> RequestBuilder {
        let app = self.app;
        match who {
            Who::Anonymous => app.anonymous(method, path),
            Who::OtherTenant => app
                .anonymous(method, path)
                .header("svc-open-api-key", &self.other_key),
            Who::BackOffice => app.with_token(method, path, &self.back_office),
            Who::Reader => app.with_token(method, path, &self.tokens.reader),
            Who::Contributor => app.with_token(method, path, &self.tokens.contributor),
            Who::Owner => app.with_token(method, path, &self.tokens.owner),
            Who::Inherited => app.with_token(method, path, &self.tokens.inherited),
            Who::SubOnly => app.with_token(method, path, &self.tokens.subonly),
        }
    }

    /// Sends one cell; returns the status and the body text.
    async fn cell(&self, row: &Row, who: Who, n: usize) -> (StatusCode, String, String) {
        let target = self.target(row.target, n).await;
        let path = self.fill(&row.path, &target, n);
        let mut request = self.request(who, row.method.clone(), &path);
        match row.body {
            Body::None => {}
            Body::Json(template) => {
                let body: Value = serde_json::from_str(&self.fill(template, &target, n))
                    .unwrap_or_else(|error| panic!("bad body template {template}: {error}"));
                request = request.json(&body);
            }
            Body::Upload => request = request.multipart(upload_form(&format!("upload {n}.txt"))),
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (status, text, path)
    }
}

fn row_label(row: &Row) -> String {
    format!("{} {} [{}]", row.method, row.path, row.target.label())
}

/// Checks of what a few 200s contain: the listings are filtered per caller. Runs while P has
/// only S and T below it.
#[expect(
    clippy::too_many_lines,
    reason = "the permission table, one row after another, reads best as one list"
)]
async fn content_checks(fixture: &Fixture<'_>, problems: &mut Vec<String>) {
    let names = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|row| row["name"].as_str().unwrap_or("?").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let get = |who: Who, path: String| async move {
        let response = fixture
            .request(who, Method::GET, &path)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        (
            status,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
        )
    };
    let p = &fixture.p;
    let listing = format!("{}?limit=1000", routes::project_subproject_list(p));
    let (status, page) = get(Who::SubOnly, listing.clone()).await;
    if status == StatusCode::OK && names(&page) != vec!["T".to_owned()] {
        problems.push(format!(
            "subproject only: GET {listing} should list only T, got {:?}",
            names(&page)
        ));
    }
    let (status, page) = get(Who::Inherited, listing.clone()).await;
    if status == StatusCode::OK && names(&page) != vec!["S".to_owned()] {
        problems.push(format!(
            "inherited: GET {listing} should list S and leave T out, got {:?}",
            names(&page)
        ));
    }
    let (status, page) = get(Who::Owner, listing.clone()).await;
    if status == StatusCode::OK && names(&page) != vec!["S".to_owned(), "T".to_owned()] {
        problems.push(format!(
            "Owner: GET {listing} should list S and T, got {:?}",
            names(&page)
        ));
    }
    for who in [Who::BackOffice, Who::OtherTenant] {
        let (status, page) = get(who, listing.clone()).await;
        if status == StatusCode::OK && !names(&page).is_empty() {
            problems.push(format!(
                "{}: GET {listing} should list nothing, got {:?}",
                who.label(),
                names(&page)
            ));
        }
        let (status, page) = get(who, routes::project_list()).await;
        if status == StatusCode::OK && names(&page).iter().any(|name| name == "P") {
            problems.push(format!(
                "{}: GET /api/metadata/project/list should not list P, got {:?}",
                who.label(),
                names(&page)
            ));
        }
    }
    let (_, page) = get(Who::BackOffice, routes::project_list()).await;
    if page["data"] != json!([]) {
        problems.push(format!(
            "BackOffice: GET /api/metadata/project/list should be empty, got {page}"
        ));
    }
    // The inherited member is Reader of S through P; the subproject-only member Contributor of T.
    let (_, caps) = get(Who::Inherited, routes::project_capabilities(&fixture.s)).await;
    if caps["canReadContent"] != true || caps["canCreateContent"] != false {
        problems.push(format!(
            "inherited: capabilities on S should be Reader's, got {caps}"
        ));
    }
    let (_, caps) = get(Who::SubOnly, routes::project_capabilities(&fixture.t)).await;
    if caps["canCreateContent"] != true || caps["canDelete"] != false || caps["canEdit"] != false {
        problems.push(format!(
            "subproject only: capabilities on T should be Contributor's, got {caps}"
        ));
    }
}

fn render(rows: &[Row], actual: &[[u16; 8]]) -> String {
    let width = rows
        .iter()
        .map(|row| row_label(row).len())
        .max()
        .unwrap_or(0);
    let mut out = format!("{:width$} ", "endpoint [target]");
    for who in WHO {
        let _ = write!(out, " {:>7}", who.short());
    }
    out.push('\n');
    for (row, got) in rows.iter().zip(actual) {
        let _ = write!(out, "{:width$} ", row_label(row));
        for (expected, got) in row.expect.iter().zip(got) {
            if expected == got {
                let _ = write!(out, " {got:>7}");
            } else {
                let _ = write!(out, " {:>7}", format!("{got}!{expected}"));
            }
        }
        out.push('\n');
    }
    out
}

api_test!(every_endpoint_answers_each_caller_as_the_rules_say, |app| {
    let started = std::time::Instant::now();
    let fixture = Fixture::build(&app).await;
    let rows = matrix();
    let mut mismatches = Vec::new();
    // Before the matrix adds projects under P (some of which it makes Shared).
    content_checks(&fixture, &mut mismatches).await;
    let mut actual = Vec::with_capacity(rows.len());
    let mut n = 0;
    for row in &rows {
        let mut got = [0u16; 8];
        for (column, who) in WHO.iter().enumerate() {
            n += 1;
            let (status, text, path) = fixture.cell(row, *who, n).await;
            got[column] = status.as_u16();
            let expected = row.expect[column];
            if status.as_u16() != expected {
                let mut body = text;
                body.truncate(300);
                mismatches.push(format!(
                    "{} as {}: expected {expected}, got {} ({} {path}; body: {body})",
                    row_label(row),
                    who.label(),
                    status.as_u16(),
                    row.method,
                ));
            }
        }
        actual.push(got);
    }
    let table = render(&rows, &actual);
    println!(
        "{:?}: {} cells in {:?}\n{table}",
        app.backend,
        rows.len() * WHO.len(),
        started.elapsed()
    );
    assert!(
        mismatches.is_empty(),
        "{:?}: {} mismatch(es) (a cell shows got!expected):\n{table}\n{}",
        app.backend,
        mismatches.len(),
        mismatches.join("\n")
    );
});

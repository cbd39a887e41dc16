//! Projects (`/api/metadata/project`): `app.projects()` for the collection, `app.project(id)`
//! for one project, its members and its subprojects. Metadata requests (`api-version: 3`).

use std::fmt::Display;

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Api, Data, Reply, with_query};
use crate::helpers::{TestApp, routes};

/// A project record (create, read, update).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    pub id: Uuid,
    pub name: String,
    pub parent_project_id: Option<Uuid>,
    pub access_level: String,
    pub inherits_members: bool,
    pub row_version: String,
    #[serde(default)]
    pub members: Vec<Member>,
    pub capabilities: Option<Capabilities>,
}

/// A member of a project on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub user_id: Uuid,
    pub role: String,
    pub principal_type: String,
}

/// What the caller may do in a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "the wire record: nine independent capabilities"
)]
pub struct Capabilities {
    pub can_edit: bool,
    pub can_edit_access_level: bool,
    pub can_delete: bool,
    pub can_grant_access: bool,
    pub can_create_content: bool,
    pub can_list_content: bool,
    pub can_update_content: bool,
    pub can_delete_content: bool,
    pub can_read_content: bool,
}

impl Capabilities {
    /// Whether every capability is granted.
    pub fn all(&self) -> bool {
        [
            self.can_edit,
            self.can_edit_access_level,
            self.can_delete,
            self.can_grant_access,
            self.can_create_content,
            self.can_list_content,
            self.can_update_content,
            self.can_delete_content,
            self.can_read_content,
        ]
        .iter()
        .all(|granted| *granted)
    }
}

/// The projects as one caller sees them.
#[derive(Clone, Copy)]
pub struct Projects<'a>(Api<'a>);

/// One project as one caller sees it.
#[derive(Clone)]
pub struct ProjectApi<'a> {
    api: Api<'a>,
    id: String,
}

/// The members of one project.
#[derive(Clone)]
pub struct ProjectMembers<'a>(ProjectApi<'a>);

impl<'a> Api<'a> {
    /// The projects collection.
    pub fn projects(self) -> Projects<'a> {
        Projects(self)
    }

    /// The project `id`.
    pub fn project(self, id: impl Display) -> ProjectApi<'a> {
        ProjectApi {
            api: self,
            id: id.to_string(),
        }
    }
}

impl TestApp {
    /// The projects collection, as the bootstrap API key.
    pub fn projects(&self) -> Projects<'_> {
        self.api().projects()
    }

    /// The project `id`, as the bootstrap API key.
    pub fn project(&self, id: impl Display) -> ProjectApi<'_> {
        self.api().project(id)
    }
}

impl Projects<'_> {
    /// `POST /api/metadata/project` with `body`.
    pub async fn create(&self, body: &Value) -> Reply<Project> {
        self.0
            .metadata(Method::POST, &routes::projects(), Some(body))
            .await
    }

    /// `PATCH /api/metadata/project` with `body` (the id in the body).
    pub async fn patch(&self, body: &Value) -> Reply<Project> {
        self.0
            .metadata(Method::PATCH, &routes::projects(), Some(body))
            .await
    }

    /// `PUT /api/metadata/project` with `body` (the id in the body).
    pub async fn update(&self, body: &Value) -> Reply<Project> {
        self.0
            .metadata(Method::PUT, &routes::projects(), Some(body))
            .await
    }

    /// `GET /api/metadata/project/list`, with `query` (empty for none).
    pub async fn list(&self, query: &str) -> Reply {
        self.0
            .metadata(
                Method::GET,
                &with_query(routes::project_list(), query),
                None,
            )
            .await
    }

    /// `GET /api/metadata/project/offset-list`, with `query` (empty for none).
    pub async fn offset_list(&self, query: &str) -> Reply {
        let path = with_query(routes::project_offset_list(), query);
        self.0.metadata(Method::GET, &path, None).await
    }
}

impl<'a> ProjectApi<'a> {
    /// `GET` the project.
    pub async fn get(&self) -> Reply<Project> {
        self.api
            .metadata(Method::GET, &routes::project(&self.id), None)
            .await
    }

    /// `DELETE` the project (into the recycle bin).
    pub async fn delete(&self) -> Reply {
        self.api
            .metadata(Method::DELETE, &routes::project(&self.id), None)
            .await
    }

    /// What the caller may do in the project.
    pub async fn capabilities(&self) -> Reply<Capabilities> {
        let path = routes::project_capabilities(&self.id);
        self.api.metadata(Method::GET, &path, None).await
    }

    /// The project's chain of ancestors.
    pub async fn path(&self) -> Reply {
        let path = routes::project_path(&self.id);
        self.api.metadata(Method::GET, &path, None).await
    }

    /// Moves the project under `target`.
    pub async fn move_to(&self, target: impl Display) -> Reply<Project> {
        let body = json!({ "targetProjectId": target.to_string() });
        let path = routes::project_move(&self.id);
        self.api.metadata(Method::POST, &path, Some(&body)).await
    }

    /// Creates a subproject with `body`.
    pub async fn create_subproject(&self, body: &Value) -> Reply<Project> {
        let path = routes::project_subprojects(&self.id);
        self.api.metadata(Method::POST, &path, Some(body)).await
    }

    /// `GET .../subproject/list`, with `query` (empty for none).
    pub async fn subprojects(&self, query: &str) -> Reply {
        let path = with_query(routes::project_subproject_list(&self.id), query);
        self.api.metadata(Method::GET, &path, None).await
    }

    /// `GET .../dataset/list`, with `query` (empty for none).
    pub async fn datasets(&self, query: &str) -> Reply {
        let path = with_query(routes::project_dataset_list(&self.id), query);
        self.api.metadata(Method::GET, &path, None).await
    }

    /// The project's members.
    pub fn members(&self) -> ProjectMembers<'a> {
        ProjectMembers(self.clone())
    }
}

impl ProjectMembers<'_> {
    /// `GET .../member`: the members.
    pub async fn list(&self) -> Reply<Data<Member>> {
        let path = routes::project_member(&self.0.id);
        self.0.api.metadata(Method::GET, &path, None).await
    }

    /// `POST .../member`: adds `user` with `role`.
    pub async fn add(&self, user: Uuid, role: &str) -> Reply {
        let body = json!({ "userId": user, "role": role });
        let path = routes::project_member(&self.0.id);
        self.0.api.metadata(Method::POST, &path, Some(&body)).await
    }

    /// `DELETE .../member/{user}`.
    pub async fn remove(&self, user: impl Display) -> Reply {
        let path = routes::project_member_of(&self.0.id, user);
        self.0.api.metadata(Method::DELETE, &path, None).await
    }

    /// `PUT .../members`: sets the members to `body`.
    pub async fn set(&self, body: &Value) -> Reply {
        let path = routes::project_members(&self.0.id);
        self.0.api.metadata(Method::PUT, &path, Some(body)).await
    }

    /// `PUT .../members/inherit`: switches inheritance with `body`.
    pub async fn inherit(&self, body: &Value) -> Reply {
        let path = routes::project_members_inherit(&self.0.id);
        self.0.api.metadata(Method::PUT, &path, Some(body)).await
    }
}

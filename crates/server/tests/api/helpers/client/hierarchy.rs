//! The bulk hierarchy (`/api/hierarchy/project/{project}`) as `app.hierarchy(project)`: folders
//! and files created or deleted by path under a project, in one request. Metadata requests
//! (`api-version: 3`).

use std::fmt::Display;

use reqwest::Method;
use serde_json::Value;

use super::{Api, Reply};
use crate::helpers::{TestApp, routes};

/// The hierarchy under one project as one caller sees it.
#[derive(Clone)]
pub struct Hierarchy<'a> {
    api: Api<'a>,
    project: String,
}

impl<'a> Api<'a> {
    /// The hierarchy under `project`.
    pub fn hierarchy(self, project: impl Display) -> Hierarchy<'a> {
        Hierarchy {
            api: self,
            project: project.to_string(),
        }
    }
}

impl TestApp {
    /// The hierarchy under `project`, as the bootstrap API key.
    pub fn hierarchy(&self, project: impl Display) -> Hierarchy<'_> {
        self.api().hierarchy(project)
    }
}

impl Hierarchy<'_> {
    /// `POST /api/hierarchy/project/{project}` with `body` (`{"actions": [...]}`): applies the
    /// actions, all or none; answers their `results`.
    pub async fn apply(&self, body: &Value) -> Reply {
        let path = routes::hierarchy(&self.project);
        self.api.metadata(Method::POST, &path, Some(body)).await
    }
}

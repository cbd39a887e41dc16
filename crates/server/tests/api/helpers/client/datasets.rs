//! Datasets: `app.datasets_of(project)` for the datasets of one project (direct upload, the
//! listing, updates, the legacy deletion), `app.dataset(id)` for one dataset (its record, move,
//! deletion, the read URL of its content). Metadata requests (`api-version: 3`); uploads are
//! conversion requests, sent without an api-version as the conversion service's clients do.

use std::fmt::Display;

use reqwest::Method;
use reqwest::multipart::{Form, Part};
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Api, Reply, names_in, with_query};
use crate::helpers::{TestApp, routes};

/// A dataset record as far as tests read it by name (the rest stays in the JSON).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dataset {
    pub id: Uuid,
    pub name: String,
    pub project_id: Uuid,
    pub row_version: String,
}

/// The datasets of one project as one caller sees them.
#[derive(Clone)]
pub struct ProjectDatasets<'a> {
    api: Api<'a>,
    project: String,
}

/// One dataset as one caller sees it.
#[derive(Clone)]
pub struct DatasetApi<'a> {
    api: Api<'a>,
    id: String,
}

impl<'a> Api<'a> {
    /// The datasets of `project`.
    pub fn datasets_of(self, project: impl Display) -> ProjectDatasets<'a> {
        ProjectDatasets {
            api: self,
            project: project.to_string(),
        }
    }

    /// The dataset `id`.
    pub fn dataset(self, id: impl Display) -> DatasetApi<'a> {
        DatasetApi {
            api: self,
            id: id.to_string(),
        }
    }
}

impl TestApp {
    /// The datasets of `project`, as the bootstrap API key.
    pub fn datasets_of(&self, project: impl Display) -> ProjectDatasets<'_> {
        self.api().datasets_of(project)
    }

    /// The dataset `id`, as the bootstrap API key.
    pub fn dataset(&self, id: impl Display) -> DatasetApi<'_> {
        self.api().dataset(id)
    }
}

impl ProjectDatasets<'_> {
    /// `POST /api/conversion/project/{project}/file/upload` with `form` (multipart): a direct
    /// upload, answering the new dataset.
    pub async fn upload_form(&self, form: Form) -> Reply<Dataset> {
        let path = routes::file_upload(&self.project);
        let request = self.api.request(Method::POST, &path).multipart(form);
        self.api.send(request, None).await
    }

    /// A direct upload of `bytes` as the file `file_name` (the form's only part).
    pub async fn upload(&self, file_name: &str, bytes: Vec<u8>) -> Reply<Dataset> {
        let part = Part::bytes(bytes).file_name(file_name.to_owned());
        self.upload_form(Form::new().part("file", part)).await
    }

    /// `GET /api/metadata/project/{project}/dataset/list`, with `query` (empty for none).
    pub async fn list(&self, query: &str) -> Reply {
        let path = with_query(routes::project_dataset_list(&self.project), query);
        self.api.metadata(Method::GET, &path, None).await
    }

    /// The names on the first page of the listing, in its order.
    pub async fn names(&self) -> Vec<String> {
        names_in(&self.list("").await.expect(reqwest::StatusCode::OK))
    }

    /// `PUT /api/metadata/project/{project}/dataset` with `body` (the id in the body).
    pub async fn update(&self, body: &Value) -> Reply<Dataset> {
        let path = routes::project_dataset(&self.project);
        self.api.metadata(Method::PUT, &path, Some(body)).await
    }

    /// `DELETE /api/project/{project}/dataset/{dataset}`: the legacy deletion (into the recycle
    /// bin).
    pub async fn legacy_delete(&self, dataset: impl Display) -> Reply {
        let path = routes::legacy_project_dataset(&self.project, dataset);
        self.api.metadata(Method::DELETE, &path, None).await
    }
}

impl DatasetApi<'_> {
    /// `GET /api/metadata/dataset/{dataset}`.
    pub async fn get(&self) -> Reply<Dataset> {
        let path = routes::dataset(&self.id);
        self.api.metadata(Method::GET, &path, None).await
    }

    /// `DELETE /api/metadata/dataset/{dataset}` (into the recycle bin).
    pub async fn delete(&self) -> Reply {
        let path = routes::dataset(&self.id);
        self.api.metadata(Method::DELETE, &path, None).await
    }

    /// `POST /api/metadata/dataset/{dataset}/move` into the project `target`.
    pub async fn move_to(&self, target: impl Display) -> Reply<Dataset> {
        let body = json!({ "targetProjectId": target.to_string() });
        let path = routes::dataset_move(&self.id);
        self.api.metadata(Method::POST, &path, Some(&body)).await
    }

    /// `GET /api/raw/dataset/{dataset}`: a read URL of the content (in `data`).
    pub async fn raw(&self) -> Reply {
        let path = routes::raw_dataset(&self.id);
        self.api.metadata(Method::GET, &path, None).await
    }
}

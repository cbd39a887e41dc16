//! The recycle bin (`/api/recycle-bin/...`) as `app.recycle_bin()`: its listings, one deleted
//! project or dataset, restore in place or elsewhere, and permanent deletion. Reads are sent
//! with the bin's `api-version: 2`, changes as metadata requests.

use std::fmt::Display;

use reqwest::Method;
use serde_json::Value;

use super::{Api, Reply, with_query};
use crate::helpers::{TestApp, routes};

/// The recycle bin as one caller sees it.
#[derive(Clone, Copy)]
pub struct RecycleBin<'a>(Api<'a>);

/// One deleted item (a project, a dataset, or a dataset of a project) as one caller sees it.
#[derive(Clone)]
pub struct BinItem<'a> {
    api: Api<'a>,
    path: String,
    restore: String,
}

impl<'a> Api<'a> {
    /// The recycle bin.
    pub fn recycle_bin(self) -> RecycleBin<'a> {
        RecycleBin(self)
    }
}

impl TestApp {
    /// The recycle bin, as the bootstrap API key.
    pub fn recycle_bin(&self) -> RecycleBin<'_> {
        self.api().recycle_bin()
    }
}

impl<'a> RecycleBin<'a> {
    /// `GET path` with the bin's api-version.
    pub async fn read(&self, path: &str) -> Reply {
        let request = self
            .0
            .app
            .request_as(self.0.who, Method::GET, path)
            .header("api-version", "2");
        self.0.send(request, None).await
    }

    /// `GET /api/recycle-bin/all-deleted-items` with `query` (empty for none).
    pub async fn all_deleted_items(&self, query: &str) -> Reply {
        self.read(&with_query(routes::all_deleted_items(), query))
            .await
    }

    /// `GET /api/recycle-bin/my-deleted-items` with `query` (empty for none).
    pub async fn my_deleted_items(&self, query: &str) -> Reply {
        self.read(&with_query(routes::my_deleted_items(), query))
            .await
    }

    /// The deleted project `id`.
    pub fn project(&self, id: impl Display) -> BinItem<'a> {
        let id = id.to_string();
        BinItem {
            api: self.0,
            path: routes::bin_project(&id),
            restore: routes::bin_project_restore(&id),
        }
    }

    /// The deleted dataset `id`.
    pub fn dataset(&self, id: impl Display) -> BinItem<'a> {
        let id = id.to_string();
        BinItem {
            api: self.0,
            path: routes::bin_dataset(&id),
            restore: routes::bin_dataset_restore(&id),
        }
    }

    /// The deleted dataset `id` of `project`.
    pub fn project_dataset(&self, project: impl Display, id: impl Display) -> BinItem<'a> {
        let (project, id) = (project.to_string(), id.to_string());
        BinItem {
            api: self.0,
            path: routes::bin_project_dataset(&project, &id),
            restore: routes::bin_project_dataset_restore(&project, &id),
        }
    }
}

impl BinItem<'_> {
    /// `GET` the deleted item, with the bin's api-version.
    pub async fn get(&self) -> Reply {
        RecycleBin(self.api).read(&self.path).await
    }

    /// `PUT .../restore`: restores the item where it was.
    pub async fn restore(&self) -> Reply {
        self.api.metadata(Method::PUT, &self.restore, None).await
    }

    /// `POST .../restore` with `body`: restores the item elsewhere.
    pub async fn restore_to(&self, body: &Value) -> Reply {
        self.api
            .metadata(Method::POST, &self.restore, Some(body))
            .await
    }

    /// `DELETE` the item for good.
    pub async fn purge(&self) -> Reply {
        self.api.metadata(Method::DELETE, &self.path, None).await
    }
}

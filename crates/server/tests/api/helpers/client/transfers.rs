//! Transfers (`/api/conversion/...`): upload URLs, imports of uploads, the transfer records and
//! their cancellation, as `app.transfers()`. Sent without an api-version, as clients of the
//! conversion service do.

use std::fmt::Display;

use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;

use super::{Api, Reply, with_query};
use crate::helpers::{TestApp, routes};

/// A transfer record as far as tests read it by name (the rest stays in the JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transfer {
    pub status: String,
}

impl Transfer {
    /// Whether the transfer has ended (Completed or Error).
    pub fn ended(&self) -> bool {
        self.status == "Completed" || self.status == "Error"
    }
}

/// The transfers as one caller sees them.
#[derive(Clone, Copy)]
pub struct Transfers<'a>(Api<'a>);

impl<'a> Api<'a> {
    /// The transfers.
    pub fn transfers(self) -> Transfers<'a> {
        Transfers(self)
    }
}

impl TestApp {
    /// The transfers, as the bootstrap API key.
    pub fn transfers(&self) -> Transfers<'_> {
        self.api().transfers()
    }
}

impl Transfers<'_> {
    /// `GET /api/conversion/transfer/upload-url`: a new upload URL (in `data`).
    pub async fn upload_url(&self) -> Reply {
        let request = self.0.request(Method::GET, &routes::upload_url());
        self.0.send(request, None).await
    }

    /// `POST` a start operation (`routes::upload_convert()`, `routes::dataset_convert(id)`, ...)
    /// with `body`; answers the new transfer's summary.
    pub async fn start(&self, path: &str, body: &Value) -> Reply {
        let request = self.0.request(Method::POST, path);
        self.0.send(request, Some(body)).await
    }

    /// `POST /api/conversion/upload-convert`: imports an upload.
    pub async fn upload_convert(&self, body: &Value) -> Reply {
        self.start(&routes::upload_convert(), body).await
    }

    /// `GET /api/conversion/transfer/{id}`.
    pub async fn get(&self, id: impl Display) -> Reply<Transfer> {
        let request = self.0.request(Method::GET, &routes::transfer(id));
        self.0.send(request, None).await
    }

    /// `POST /api/conversion/transfer/{id}/cancel`.
    pub async fn cancel(&self, id: impl Display) -> Reply {
        let request = self.0.request(Method::POST, &routes::transfer_cancel(id));
        self.0.send(request, None).await
    }

    /// `GET /api/conversion/transfer/list` with `query` (empty for none).
    pub async fn list(&self, query: &str) -> Reply {
        let path = with_query(routes::transfer_list(), query);
        let request = self.0.request(Method::GET, &path);
        self.0.send(request, None).await
    }
}

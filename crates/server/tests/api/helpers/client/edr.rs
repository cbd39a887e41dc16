//! EDR (`/api/edr/...`) as `app.edr()`: the landing page, conformance, the collections and
//! one collection, and its queries (`app.edr().collection(id).position(&[("coords", ...)])`).
//! Query parameters are given as name and value pairs and sent encoded; answers are read as
//! JSON (CoverageJSON too), with their headers.

use std::fmt::Display;

use reqwest::Method;

use super::{Api, Reply, with_query};
use crate::helpers::{TestApp, routes};

/// The EDR API as one caller sees it.
#[derive(Clone, Copy)]
pub struct Edr<'a>(Api<'a>);

/// One collection as one caller sees it.
#[derive(Clone)]
pub struct EdrCollection<'a> {
    api: Api<'a>,
    id: String,
}

impl<'a> Api<'a> {
    /// The EDR API.
    pub fn edr(self) -> Edr<'a> {
        Edr(self)
    }
}

impl TestApp {
    /// The EDR API as the bootstrap API key.
    pub fn edr(&self) -> Edr<'_> {
        self.api().edr()
    }
}

/// `GET path` with `query` pairs, sent form-encoded, without an api-version.
async fn get(api: &Api<'_>, path: &str, query: &[(&str, &str)]) -> Reply {
    let encoded = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(query)
        .finish();
    let request = api.request(Method::GET, &with_query(path.to_owned(), &encoded));
    api.send(request, None).await
}

impl<'a> Edr<'a> {
    /// `GET /api/edr`.
    pub async fn landing(&self, query: &[(&str, &str)]) -> Reply {
        get(&self.0, &routes::edr_landing(), query).await
    }

    /// `GET /api/edr/conformance`.
    pub async fn conformance(&self) -> Reply {
        get(&self.0, &routes::edr_conformance(), &[]).await
    }

    /// `GET /api/edr/collections` with `query` (`project`, `limit`, `cursor`, `f`).
    pub async fn collections(&self, query: &[(&str, &str)]) -> Reply {
        get(&self.0, &routes::edr_collections(), query).await
    }

    /// The collection `id` (a dataset id).
    pub fn collection(self, id: impl Display) -> EdrCollection<'a> {
        EdrCollection {
            api: self.0,
            id: id.to_string(),
        }
    }
}

impl EdrCollection<'_> {
    /// `GET /api/edr/collections/{id}` with `query`.
    pub async fn get(&self, query: &[(&str, &str)]) -> Reply {
        get(&self.api, &routes::edr_collection(&self.id), query).await
    }

    /// `GET /api/edr/collections/{id}/position` with `query` (`coords`, `datetime`,
    /// `parameter-name`, `crs`, `z`, `f`).
    pub async fn position(&self, query: &[(&str, &str)]) -> Reply {
        get(&self.api, &routes::edr_position(&self.id), query).await
    }

    /// `GET /api/edr/collections/{id}/area` with `query` (`coords`, `statistics`, ...).
    pub async fn area(&self, query: &[(&str, &str)]) -> Reply {
        get(&self.api, &routes::edr_area(&self.id), query).await
    }

    /// `GET /api/edr/collections/{id}/{kind}` with `query`: `radius`, `corridor`,
    /// `trajectory`.
    pub async fn query(&self, kind: &str, query: &[(&str, &str)]) -> Reply {
        get(&self.api, &routes::edr_query(&self.id, kind), query).await
    }

    /// `GET /api/edr/collections/{id}/locations`.
    pub async fn locations(&self) -> Reply {
        get(&self.api, &routes::edr_query(&self.id, "locations"), &[]).await
    }

    /// `GET /api/edr/collections/{id}/locations/{location}` with `query`.
    pub async fn location(&self, location: &str, query: &[(&str, &str)]) -> Reply {
        let path = routes::edr_query(&self.id, &format!("locations/{location}"));
        get(&self.api, &path, query).await
    }

    /// `GET /api/edr/collections/{id}/cube` with `query` (`bbox`, ...).
    pub async fn cube(&self, query: &[(&str, &str)]) -> Reply {
        get(&self.api, &routes::edr_cube(&self.id), query).await
    }
}

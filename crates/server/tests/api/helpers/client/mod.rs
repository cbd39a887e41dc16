//! Typed clients, one per area of the API, so that a test reads like the API it calls:
//! `app.project(id).members().add(user, "Reader")`, `app.by(As::Person(&ann)).projects()
//! .create(&json!({"name": "P"}))`, `app.transfers().get(id)`, `app.credits().reserve(&body)`,
//! `app.recycle_bin().dataset(id).restore()`, `app.datasets_of(project).upload("a.txt", bytes)`,
//! `app.dataset(id).move_to(target)`, `app.hierarchy(project).apply(&actions)`,
//! `app.tiles(dataset).scheme("wmts-0").tile(1, 0, 1)`, `app.iam().principal_me()`,
//! `app.as_back_office().admin().tenant(id).add_member(&body)`, `app.dead_letters().replay(id)`,
//! `app.feature_operator().messages(Some("Platform")).create(&body)`,
//! `app.edr().collection(id).position(&[("coords", "POINT(1 2)")])`.
//!
//! The areas: projects ([`projects`]), datasets ([`datasets`]), the bulk hierarchy
//! ([`hierarchy`]), tiles ([`tiles`]), identity and administration ([`identity`]), the dead
//! letters of platform events ([`events`]), features, their messages and licenses
//! ([`features`]), EDR queries ([`edr`]), transfers ([`transfers`]), the recycle bin
//! ([`recycle_bin`]) and credits ([`credits`]).
//!
//! Every call answers a [`Reply`]: the status, the headers a test checks, and the body, parsed
//! into the area's typed record by [`Reply::ok`] (or [`Reply::parse`] for another status),
//! kept as JSON by [`Reply::expect`], or checked as a problem by [`Reply::problem`]. Tests
//! that check the exact wire shape (field names are part of the contract) read the JSON.

mod credits;
mod datasets;
mod edr;
mod events;
mod features;
mod hierarchy;
mod identity;
mod projects;
mod recycle_bin;
mod tiles;
mod transfers;

use std::marker::PhantomData;

use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use datasets::*;
pub use features::*;
pub use projects::*;
pub use transfers::*;

use super::{As, TestApp};

/// An answer: its status, headers, content type, whether it says which api-versions exist,
/// and its body, to be read as a `T` (the endpoint's record), as JSON, or as bytes (tiles).
#[derive(Debug)]
pub struct Reply<T = Value> {
    status: StatusCode,
    headers: HeaderMap,
    content_type: String,
    has_versions: bool,
    bytes: Vec<u8>,
    text: String,
    body: PhantomData<T>,
}

impl<T> Reply<T> {
    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body as it came.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The body as text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The same answer, to be read as JSON.
    pub fn into_json(self) -> Reply {
        Reply {
            status: self.status,
            headers: self.headers,
            content_type: self.content_type,
            has_versions: self.has_versions,
            bytes: self.bytes,
            text: self.text,
            body: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> Reply<T> {
    /// Reads the whole answer.
    pub async fn of(response: Response) -> Self {
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let has_versions = response.headers().contains_key("api-supported-versions");
        let headers = response.headers().clone();
        let bytes = response.bytes().await.unwrap().to_vec();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Self {
            status,
            headers,
            content_type,
            has_versions,
            bytes,
            text,
            body: PhantomData,
        }
    }

    /// Asserts the status and returns the JSON body (Null when empty).
    pub fn expect(self, status: StatusCode) -> Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.text
        );
        if self.text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("not JSON: {}", self.text))
        }
    }

    /// Asserts `status` and reads the body as the endpoint's record.
    pub fn parse(self, status: StatusCode) -> T {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.text
        );
        serde_json::from_str(&self.text)
            .unwrap_or_else(|error| panic!("not the expected record ({error}): {}", self.text))
    }

    /// 200, with the endpoint's record.
    pub fn ok(self) -> T {
        self.parse(StatusCode::OK)
    }

    /// 204, with an empty body.
    pub fn no_content(self) {
        self.expect(StatusCode::NO_CONTENT);
    }

    /// Asserts an RFC 9457 problem of `kind` with `status` and returns it.
    pub fn problem(self, status: StatusCode, kind: &str) -> Value {
        let content_type = self.content_type.clone();
        let has_versions = self.has_versions;
        let body = self.expect(status);
        assert_eq!(content_type, "application/problem+json", "{body}");
        assert!(has_versions, "api-supported-versions missing on a problem");
        assert_eq!(body["type"], format!("urn:basin:problem:{kind}"), "{body}");
        assert_eq!(body["status"], status.as_u16(), "{body}");
        for member in ["title", "detail", "instance"] {
            assert!(body[member].is_string(), "problem without {member}: {body}");
        }
        body
    }
}

/// A list answer without paging: `{"data": [...]}`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Data<T> {
    pub data: Vec<T>,
}

/// The API as one caller sees it: the bootstrap API key or a person's token.
#[derive(Clone, Copy)]
pub struct Api<'a> {
    pub(crate) app: &'a TestApp,
    pub(crate) who: As<'a>,
}

impl<'a> Api<'a> {
    /// A request with the caller's credentials and no api-version.
    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        match self.who {
            As::Key => self.app.with_key(method, path),
            As::Person(person) => self.app.with_token(method, path, &person.token),
            As::Token(token) => self.app.with_token(method, path, token),
            As::ApiKey(key) => self
                .app
                .anonymous(method, path)
                .header("svc-open-api-key", key),
        }
    }

    /// Sends a request, with a JSON body when given, and reads the answer.
    pub(crate) async fn send<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
        body: Option<&Value>,
    ) -> Reply<T> {
        send_json(request, body).await
    }

    /// Sends `method path` without an api-version, with a JSON body when given.
    pub(crate) async fn plain(&self, method: Method, path: &str, body: Option<&Value>) -> Reply {
        let request = self.request(method, path);
        self.send(request, body).await
    }

    /// A metadata request (`api-version: 3`, as [`TestApp::request_as`] sends it).
    pub(crate) async fn metadata<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Reply<T> {
        self.send(self.app.request_as(self.who, method, path), body)
            .await
    }
}

impl TestApp {
    /// The API as `who` sees it.
    pub fn by<'a>(&'a self, who: As<'a>) -> Api<'a> {
        Api { app: self, who }
    }

    /// The API as the bootstrap API key (tenant Owner) sees it.
    pub fn api(&self) -> Api<'_> {
        self.by(As::Key)
    }
}

/// Sends `request`, with a JSON body when given, and reads the answer.
pub(crate) async fn send_json<T: DeserializeOwned>(
    request: RequestBuilder,
    body: Option<&Value>,
) -> Reply<T> {
    let request = match body {
        Some(body) => request.json(body),
        None => request,
    };
    Reply::of(request.send().await.unwrap()).await
}

/// `path` with `?query` when `query` is not empty.
pub fn with_query(path: String, query: &str) -> String {
    if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    }
}

/// The `name` of each record of a page's `data`, in order.
pub fn names_in(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data in {page}"))
        .iter()
        .map(|record| record["name"].as_str().unwrap().to_owned())
        .collect()
}

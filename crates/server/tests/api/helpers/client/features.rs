//! Features (`/api/admin/feature...`): the catalogue and its licenses, status messages and the
//! banner, retention on demand, and a tenant's own features. `app.features()` is the API as the
//! bootstrap BackOffice token, `app.feature_operator()` as a BackOffice token with both feature
//! status scopes signed at the app's now (tests move the clock by days), and
//! `app.by(who).features()` as any other caller. Sent without an api-version, as the platform's
//! clients send them.

use std::fmt::Display;

use reqwest::{Method, RequestBuilder};
use serde::Deserialize;
use serde_json::Value;

use super::{Api, Reply, send_json, with_query};
use crate::helpers::{TestApp, routes};

/// The scope that lets a caller read feature messages.
pub const FEATURE_STATUS_READ: &str = "platform_iam_featurestatus_read";

/// The scope that lets a BackOffice caller write feature messages (and read them).
pub const FEATURE_STATUS_READWRITE: &str = "platform_iam_featurestatus_readwrite";

/// A feature status message as the endpoints return it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Message {
    pub id: i64,
    pub feature_id: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub body: String,
    pub start_date: String,
    pub expiring_date: String,
    pub created_at: String,
    pub created_by: Option<String>,
    pub updated_at: String,
    pub updated_by: Option<String>,
}

/// One page of a message list.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagePage {
    pub data: Vec<Message>,
    pub cursor: Option<String>,
}

impl MessagePage {
    /// The ids of the page's messages, in order.
    pub fn ids(&self) -> Vec<i64> {
        self.data.iter().map(|message| message.id).collect()
    }
}

/// What the banner answers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Banner {
    pub feature_id: String,
    pub data: Vec<Message>,
    pub next_change_at: Option<String>,
}

impl Banner {
    /// The titles shown, in order.
    pub fn titles(&self) -> Vec<String> {
        self.data
            .iter()
            .map(|message| message.title.clone())
            .collect()
    }
}

/// Who sends the feature requests: a caller of the typed API, or the bearer of a token minted
/// for these requests.
#[derive(Clone)]
enum Caller<'a> {
    Api(Api<'a>),
    Bearer(&'a TestApp, String),
}

/// The feature endpoints as one caller sees them, with an `api-version` when one is set.
#[derive(Clone)]
pub struct Features<'a> {
    caller: Caller<'a>,
    api_version: Option<&'a str>,
}

/// The messages of one feature (or the global ones) as one caller sees them.
#[derive(Clone)]
pub struct Messages<'a> {
    features: Features<'a>,
    feature: Option<String>,
}

impl<'a> Api<'a> {
    /// The feature endpoints.
    pub fn features(self) -> Features<'a> {
        Features {
            caller: Caller::Api(self),
            api_version: None,
        }
    }
}

impl TestApp {
    /// The feature endpoints as the bootstrap BackOffice token.
    pub fn features(&self) -> Features<'_> {
        self.as_back_office().features()
    }

    /// The feature endpoints as a BackOffice token with both feature status scopes, signed at
    /// the app's now and acting for the bootstrap Owner.
    pub fn feature_operator(&self) -> Features<'_> {
        let token = self.token(basin::TokenRequest {
            subject: self.owner_id(),
            roles: vec!["BackOffice".to_owned()],
            scopes: vec![
                FEATURE_STATUS_READ.to_owned(),
                FEATURE_STATUS_READWRITE.to_owned(),
            ],
            ttl: chrono::TimeDelta::hours(1),
            ..Default::default()
        });
        Features {
            caller: Caller::Bearer(self, token),
            api_version: None,
        }
    }
}

impl<'a> Features<'a> {
    /// The same caller, sending `api-version: version` with every request.
    pub fn with_api_version(mut self, version: &'a str) -> Self {
        self.api_version = Some(version);
        self
    }

    /// A request with the caller's credentials (and api-version, when set).
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let request = match &self.caller {
            Caller::Api(api) => api.request(method, path),
            Caller::Bearer(app, token) => app.with_token(method, path, token),
        };
        match self.api_version {
            Some(version) => request.header("api-version", version),
            None => request,
        }
    }

    /// Sends `method path`, with a JSON body when given.
    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Reply<T> {
        send_json(self.request(method, path), body).await
    }

    // ---- the catalogue ----

    /// `GET /api/admin/features` with `query`.
    pub async fn list(&self, query: &str) -> Reply {
        let path = with_query(routes::features(), query);
        self.call(Method::GET, &path, None).await
    }

    /// `POST /api/admin/features`.
    pub async fn add(&self, body: &Value) -> Reply {
        self.call(Method::POST, &routes::features(), Some(body))
            .await
    }

    /// `GET /api/admin/features/{feature}`.
    pub async fn get(&self, feature: impl Display) -> Reply {
        self.call(Method::GET, &routes::feature(feature), None)
            .await
    }

    /// `PUT /api/admin/features/{feature}`.
    pub async fn replace(&self, feature: impl Display, body: &Value) -> Reply {
        self.call(Method::PUT, &routes::feature(feature), Some(body))
            .await
    }

    /// `DELETE /api/admin/features/{feature}`.
    pub async fn delete(&self, feature: impl Display) -> Reply {
        self.call(Method::DELETE, &routes::feature(feature), None)
            .await
    }

    // ---- licenses ----

    /// `GET /api/admin/features/{feature}/licenses`.
    pub async fn licenses(&self, feature: impl Display) -> Reply {
        let path = routes::feature_licenses(feature);
        self.call(Method::GET, &path, None).await
    }

    /// `PUT /api/admin/features/{feature}/licenses/{tenant}`, with a body when given.
    pub async fn license(
        &self,
        feature: impl Display,
        tenant: impl Display,
        body: Option<&Value>,
    ) -> Reply {
        let path = routes::feature_license(feature, tenant);
        self.call(Method::PUT, &path, body).await
    }

    /// `DELETE /api/admin/features/{feature}/licenses/{tenant}`.
    pub async fn revoke(&self, feature: impl Display, tenant: impl Display) -> Reply {
        let path = routes::feature_license(feature, tenant);
        self.call(Method::DELETE, &path, None).await
    }

    /// `GET /api/admin/tenants/{tenant}/features`: the licenses a tenant holds.
    pub async fn licenses_of(&self, tenant: impl Display) -> Reply {
        let path = routes::tenant_licenses(tenant);
        self.call(Method::GET, &path, None).await
    }

    // ---- the caller's tenant ----

    /// `GET /api/admin/feature/tenant/list` with `query`: the caller's tenant's features.
    pub async fn mine(&self, query: &str) -> Reply {
        let path = with_query(routes::my_tenant_features(), query);
        self.call(Method::GET, &path, None).await
    }

    /// `PATCH /api/admin/feature/{feature}/tenant/{tenant}` with `svc-project-id` when given.
    pub async fn switch(
        &self,
        feature: impl Display,
        tenant: impl Display,
        project_header: Option<&str>,
        body: &Value,
    ) -> Reply {
        let path = routes::tenant_feature(feature, tenant);
        let mut request = self.request(Method::PATCH, &path);
        if let Some(header) = project_header {
            request = request.header("svc-project-id", header);
        }
        send_json(request, Some(body)).await
    }

    // ---- messages and the banner ----

    /// The messages of `feature`, or the global ones for `None`.
    pub fn messages(&self, feature: Option<&str>) -> Messages<'a> {
        Messages {
            features: self.clone(),
            feature: feature.map(str::to_owned),
        }
    }

    /// `GET /api/admin/feature/{feature}/banner`, with `If-None-Match` when given.
    pub async fn banner(
        &self,
        feature: impl Display,
        if_none_match: Option<&str>,
    ) -> Reply<Banner> {
        let mut request = self.request(Method::GET, &routes::feature_banner(feature));
        if let Some(tag) = if_none_match {
            request = request.header("if-none-match", tag);
        }
        send_json(request, None).await
    }

    /// `POST /api/admin/feature-messages/purge-expired`: retention now.
    pub async fn purge_expired(&self) -> Reply {
        let path = routes::feature_messages_purge_expired();
        self.call(Method::POST, &path, None).await
    }
}

impl Messages<'_> {
    /// The list (and create) path.
    pub fn path(&self) -> String {
        match &self.feature {
            Some(feature) => routes::feature_messages(feature),
            None => routes::global_messages(),
        }
    }

    /// The path of message `id` (anything, so that malformed ids can be sent).
    pub fn message_path(&self, id: impl Display) -> String {
        match &self.feature {
            Some(feature) => routes::feature_message(feature, id),
            None => routes::global_message(id),
        }
    }

    /// `GET` the list with `query`.
    pub async fn list(&self, query: &str) -> Reply<MessagePage> {
        let path = with_query(self.path(), query);
        self.features.call(Method::GET, &path, None).await
    }

    /// `POST` a message.
    pub async fn create(&self, body: &Value) -> Reply<Message> {
        self.features
            .call(Method::POST, &self.path(), Some(body))
            .await
    }

    /// `PATCH` message `id`.
    pub async fn patch(&self, id: impl Display, body: &Value) -> Reply<Message> {
        let path = self.message_path(id);
        self.features.call(Method::PATCH, &path, Some(body)).await
    }

    /// `DELETE` message `id`.
    pub async fn delete(&self, id: impl Display) -> Reply {
        let path = self.message_path(id);
        self.features.call(Method::DELETE, &path, None).await
    }
}

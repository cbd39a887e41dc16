//! The credit ledger (`/api/iam/credit/...`) as `app.credits()`: as BackOffice, with a token
//! signed at the app's now (the bootstrap token expires when a test moves the clock by days)
//! that acts for the bootstrap Owner in its tenant; `app.credits_with(token)` for other callers.

use std::fmt::Display;

use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Reply, with_query};
use crate::helpers::{TestApp, routes};

/// The credit endpoints as one bearer of a token sees them.
#[derive(Clone)]
pub struct Credits<'a> {
    app: &'a TestApp,
    token: String,
}

impl TestApp {
    /// The credit endpoints as BackOffice.
    pub fn credits(&self) -> Credits<'_> {
        let token = self.token(basin::TokenRequest {
            subject: self.owner_id(),
            tenant_id: Some(basin::TenantId::from_uuid(self.tenant_id())),
            roles: vec!["BackOffice".to_owned()],
            ttl: chrono::TimeDelta::hours(1),
            ..Default::default()
        });
        self.credits_with(token)
    }

    /// The credit endpoints as the bearer of `token`.
    pub fn credits_with(&self, token: String) -> Credits<'_> {
        Credits { app: self, token }
    }
}

impl Credits<'_> {
    /// A request with the token.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.app.with_token(method, path, &self.token)
    }

    async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> Reply {
        let request = self.request(method, path);
        let request = match body {
            Some(body) => request.json(body),
            None => request,
        };
        Reply::of(request.send().await.unwrap()).await
    }

    /// `POST /api/iam/credit` with a JSON body.
    pub async fn add(&self, body: &Value) -> Reply {
        self.send(Method::POST, &routes::credits(), Some(body))
            .await
    }

    /// `POST /api/iam/credit` with JSON text as written (amount literals kept exactly).
    pub async fn add_text(&self, body: &str) -> Reply {
        let request = self
            .request(Method::POST, &routes::credits())
            .header("content-type", "application/json")
            .body(body.to_owned());
        Reply::of(request.send().await.unwrap()).await
    }

    /// `PUT /api/iam/credit/reserve`.
    pub async fn reserve(&self, body: &Value) -> Reply {
        self.send(Method::PUT, &routes::credit_reserve(), Some(body))
            .await
    }

    /// `PUT /api/iam/credit/spend`.
    pub async fn spend(&self, body: &Value) -> Reply {
        self.send(Method::PUT, &routes::credit_spend(), Some(body))
            .await
    }

    /// `PUT /api/iam/credit/release` of `operation` of `tenant`.
    pub async fn release(&self, tenant: Uuid, operation: &str) -> Reply {
        let body = json!({"tenantId": tenant, "operationId": operation});
        self.send(Method::PUT, &routes::credit_release(), Some(&body))
            .await
    }

    /// `PUT /api/iam/credit/move`, with an `Idempotency-Key` when given.
    pub async fn move_credits(&self, body: &Value, key: Option<&str>) -> Reply {
        let mut request = self.request(Method::PUT, &routes::credit_move()).json(body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        Reply::of(request.send().await.unwrap()).await
    }

    /// `GET` the breakdown of `tenant`, or of the generic pool for `None`.
    pub async fn breakdown(&self, tenant: Option<Uuid>) -> Reply {
        let path = tenant.map_or_else(routes::unassigned_credits, routes::tenant_credits);
        self.send(Method::GET, &path, None).await
    }

    /// `GET /api/iam/credit/{tenant}/operation/{operation}`.
    pub async fn operation(&self, tenant: Uuid, operation: impl Display) -> Reply {
        let path = routes::credit_operation(tenant, operation);
        self.send(Method::GET, &path, None).await
    }

    /// `GET` the journal of `tenant` (the generic pool's for `None`) with `query`.
    pub async fn journal(&self, tenant: Option<Uuid>, query: &str) -> Reply {
        let path = tenant.map_or_else(
            routes::unassigned_credit_journal,
            routes::tenant_credit_journal,
        );
        self.send(Method::GET, &with_query(path, query), None).await
    }

    /// `GET /api/iam/credit/{tenant}/audit`.
    pub async fn audit(&self, tenant: Uuid) -> Reply {
        let path = routes::tenant_credit_audit(tenant);
        self.send(Method::GET, &path, None).await
    }

    /// `POST /api/iam/credit/details` with `body`.
    pub async fn details(&self, body: &Value) -> Reply {
        self.send(Method::POST, &routes::credit_details(), Some(body))
            .await
    }

    /// `POST /api/iam/credit/details/extended` with `body`.
    pub async fn extended_details(&self, body: &Value) -> Reply {
        let path = routes::credit_details_extended();
        self.send(Method::POST, &path, Some(body)).await
    }
}

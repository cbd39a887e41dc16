//! Identity and administration: `app.iam()` for the caller's own view (`/api/iam/principal/me`,
//! its tenants and invitations) and `app.admin()` for tenants, their members, invitations and
//! API keys, and users (`/api/admin/...`). Sent without an api-version, as clients of the
//! platform's iam service do. `app.back_office()` is the API as the platform's BackOffice.

use std::fmt::Display;

use reqwest::Method;
use serde_json::Value;

use super::{Api, Reply, with_query};
use crate::helpers::{As, TestApp, routes};

/// The caller's own view of the iam service.
#[derive(Clone, Copy)]
pub struct Iam<'a>(Api<'a>);

/// The administration API as one caller sees it.
#[derive(Clone, Copy)]
pub struct Admin<'a>(Api<'a>);

/// One tenant as one caller administers it.
#[derive(Clone)]
pub struct TenantAdmin<'a> {
    api: Api<'a>,
    id: String,
}

impl<'a> Api<'a> {
    /// The caller's own view of the iam service.
    pub fn iam(self) -> Iam<'a> {
        Iam(self)
    }

    /// The administration API.
    pub fn admin(self) -> Admin<'a> {
        Admin(self)
    }
}

impl TestApp {
    /// The bootstrap API key's own view of the iam service.
    pub fn iam(&self) -> Iam<'_> {
        self.api().iam()
    }

    /// The administration API as the bootstrap API key (Owner of the default tenant).
    pub fn admin(&self) -> Admin<'_> {
        self.api().admin()
    }

    /// The API as the platform's BackOffice (the bootstrap BackOffice token).
    pub fn as_back_office(&self) -> Api<'_> {
        self.by(As::Token(&self.bootstrap.back_office_token))
    }
}

impl Iam<'_> {
    /// `GET /api/iam/principal/me`: the caller.
    pub async fn principal_me(&self) -> Reply {
        self.0
            .plain(Method::GET, &routes::principal_me(), None)
            .await
    }

    /// `GET /api/iam/tenant/my`: the caller's tenants, with its role in each.
    pub async fn my_tenants(&self) -> Reply {
        self.0.plain(Method::GET, &routes::my_tenants(), None).await
    }

    /// `GET /api/iam/invitation/my`: the caller's open invitations.
    pub async fn my_invitations(&self) -> Reply {
        let path = routes::my_invitations();
        self.0.plain(Method::GET, &path, None).await
    }

    /// `POST /api/iam/invitation/{invitation}/accept`.
    pub async fn accept_invitation(&self, invitation: impl Display) -> Reply {
        let path = routes::invitation_accept(invitation);
        self.0.plain(Method::POST, &path, None).await
    }

    /// `POST /api/iam/invitation/{invitation}/decline`.
    pub async fn decline_invitation(&self, invitation: impl Display) -> Reply {
        let path = routes::invitation_decline(invitation);
        self.0.plain(Method::POST, &path, None).await
    }
}

impl<'a> Admin<'a> {
    /// `GET /api/admin/tenants`, with `query` (empty for none).
    pub async fn tenants(&self, query: &str) -> Reply {
        let path = with_query(routes::tenants(), query);
        self.0.plain(Method::GET, &path, None).await
    }

    /// `POST /api/admin/tenants` with `body`.
    pub async fn create_tenant(&self, body: &Value) -> Reply {
        let path = routes::tenants();
        self.0.plain(Method::POST, &path, Some(body)).await
    }

    /// The tenant `id`.
    pub fn tenant(&self, id: impl Display) -> TenantAdmin<'a> {
        TenantAdmin {
            api: self.0,
            id: id.to_string(),
        }
    }

    /// `GET /api/admin/users`, with `query` (empty for none).
    pub async fn users(&self, query: &str) -> Reply {
        let path = with_query(routes::users(), query);
        self.0.plain(Method::GET, &path, None).await
    }

    /// `POST /api/admin/users` with `body`.
    pub async fn create_user(&self, body: &Value) -> Reply {
        self.0
            .plain(Method::POST, &routes::users(), Some(body))
            .await
    }

    /// `GET /api/admin/users/{user}`.
    pub async fn user(&self, user: impl Display) -> Reply {
        self.0.plain(Method::GET, &routes::user(user), None).await
    }

    /// `PATCH /api/admin/users/{user}` with `body`.
    pub async fn patch_user(&self, user: impl Display, body: &Value) -> Reply {
        let path = routes::user(user);
        self.0.plain(Method::PATCH, &path, Some(body)).await
    }
}

impl TenantAdmin<'_> {
    /// `GET /api/admin/tenants/{tenant}`.
    pub async fn get(&self) -> Reply {
        let path = routes::tenant(&self.id);
        self.api.plain(Method::GET, &path, None).await
    }

    /// `GET .../members`, with `query` (empty for none).
    pub async fn members(&self, query: &str) -> Reply {
        let path = with_query(routes::tenant_members(&self.id), query);
        self.api.plain(Method::GET, &path, None).await
    }

    /// `POST .../members` with `body`: adds a user, or invites an e-mail address.
    pub async fn add_member(&self, body: &Value) -> Reply {
        let path = routes::tenant_members(&self.id);
        self.api.plain(Method::POST, &path, Some(body)).await
    }

    /// `PUT .../members/{user}` with `body`: changes the member's role.
    pub async fn set_member_role(&self, user: impl Display, body: &Value) -> Reply {
        let path = routes::tenant_member(&self.id, user);
        self.api.plain(Method::PUT, &path, Some(body)).await
    }

    /// `DELETE .../members/{user}`.
    pub async fn remove_member(&self, user: impl Display) -> Reply {
        let path = routes::tenant_member(&self.id, user);
        self.api.plain(Method::DELETE, &path, None).await
    }

    /// `GET .../invitations`: the open invitations.
    pub async fn invitations(&self) -> Reply {
        let path = routes::tenant_invitations(&self.id);
        self.api.plain(Method::GET, &path, None).await
    }

    /// `DELETE .../invitations/{invitation}`: withdraws the invitation.
    pub async fn withdraw_invitation(&self, invitation: impl Display) -> Reply {
        let path = routes::tenant_invitation(&self.id, invitation);
        self.api.plain(Method::DELETE, &path, None).await
    }

    /// `GET .../api-keys`.
    pub async fn api_keys(&self) -> Reply {
        let path = routes::tenant_api_keys(&self.id);
        self.api.plain(Method::GET, &path, None).await
    }

    /// `POST .../api-keys` with `body`: a new key, its secret shown once.
    pub async fn create_api_key(&self, body: &Value) -> Reply {
        let path = routes::tenant_api_keys(&self.id);
        self.api.plain(Method::POST, &path, Some(body)).await
    }

    /// `DELETE .../api-keys/{key}`: revokes the key.
    pub async fn revoke_api_key(&self, key: impl Display) -> Reply {
        let path = routes::tenant_api_key(&self.id, key);
        self.api.plain(Method::DELETE, &path, None).await
    }
}

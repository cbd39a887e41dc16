//! The authenticated caller.

use std::collections::BTreeSet;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use uuid::Uuid;

use crate::error::ApiError;
use crate::identity::model::TenantRole;
use crate::ids::{ApiKeyId, TenantId, UserId};
use crate::startup::AppState;

crate::wire_enum! {
    /// What kind of identity a principal is (wire-contract 3).
    #[allow(clippy::upper_case_acronyms, reason = "OpenAPIAccount is the wire name")]
    pub enum PrincipalType {
        /// A person.
        UserIdentity,
        /// An API key's identity.
        OpenAPIAccount,
        /// A group of principals.
        MemberGroup,
    }
}

crate::wire_enum! {
    /// Platform-wide roles carried in tokens.
    pub enum PlatformRole {
        /// Platform operators: manage tenants, users, feature messages, credits.
        BackOffice,
        /// Cloud administrators: same administrative reach as BackOffice.
        CloudAdministrator,
    }
}

/// Who is calling, after authentication.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The user id, or the API key id for an API key.
    pub id: Uuid,
    /// User or API key.
    pub principal_type: PrincipalType,
    /// Display name, when known.
    pub name: Option<String>,
    /// E-mail, when known.
    pub email: Option<String>,
    /// The tenant the call acts in: the API key's tenant, the token's tenant claim, or the
    /// user's only tenant.
    pub tenant_id: Option<TenantId>,
    /// The caller's role in that tenant; `None` when it is not a member.
    pub tenant_role: Option<TenantRole>,
    /// BackOffice and CloudAdministrator.
    pub platform_roles: BTreeSet<PlatformRole>,
    /// OAuth scopes.
    pub scopes: BTreeSet<String>,
    /// OAuth client id (`client_id` or `azp`).
    pub client_id: Option<String>,
}

impl Principal {
    /// The operator at the command line (`basin admin ...`): whoever can reach the store and
    /// the secret already has full control, so it acts as BackOffice.
    pub fn operator() -> Self {
        Self {
            id: Uuid::nil(),
            principal_type: PrincipalType::UserIdentity,
            name: Some("basin admin".into()),
            email: None,
            tenant_id: None,
            tenant_role: None,
            platform_roles: [PlatformRole::BackOffice].into_iter().collect(),
            scopes: BTreeSet::new(),
            client_id: None,
        }
    }

    /// The user behind the call, for user identities.
    pub fn user_id(&self) -> Option<UserId> {
        (self.principal_type == PrincipalType::UserIdentity).then(|| UserId::from_uuid(self.id))
    }

    /// The API key behind the call, for API keys.
    pub fn api_key_id(&self) -> Option<ApiKeyId> {
        (self.principal_type == PrincipalType::OpenAPIAccount).then(|| ApiKeyId::from_uuid(self.id))
    }

    /// BackOffice or CloudAdministrator.
    pub fn is_platform_admin(&self) -> bool {
        !self.platform_roles.is_empty()
    }

    /// Holds `role`.
    pub fn has_platform_role(&self, role: PlatformRole) -> bool {
        self.platform_roles.contains(&role)
    }

    /// Holds `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// The caller's role in `tenant`, if it acts in that tenant.
    pub fn role_in(&self, tenant: TenantId) -> Option<TenantRole> {
        if self.tenant_id == Some(tenant) {
            self.tenant_role
        } else {
            None
        }
    }

    /// The role the caller is shown with on `principal/me`: its tenant role, else its highest
    /// platform role.
    pub fn display_role(&self) -> Option<String> {
        self.tenant_role
            .map(|role| role.as_str().to_owned())
            .or_else(|| {
                self.platform_roles
                    .iter()
                    .next()
                    .map(|r| r.as_str().to_owned())
            })
    }
}

impl FromRequestParts<AppState> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if let Some(principal) = parts.extensions.get::<Principal>() {
            return Ok(principal.clone());
        }
        let principal = state
            .auth
            .authenticate(&parts.headers, &state.db)
            .await
            .map_err(ApiError::from)?;
        parts.extensions.insert(principal.clone());
        Ok(principal)
    }
}

//! The authenticated caller.

use std::collections::BTreeSet;

use std::sync::Arc;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use uuid::Uuid;

use crate::auth::Authenticator;
use crate::error::ApiError;
use crate::ids::{TenantId, UserId};

crate::wire_enum! {
    /// What kind of identity a principal is (docs/projects.md#members).
    #[allow(clippy::upper_case_acronyms, reason = "OpenAPIAccount is the wire name")]
    pub(crate) enum PrincipalType {
        /// A person.
        UserIdentity,
        /// An API key's identity.
        OpenAPIAccount,
        /// A group of principals.
        MemberGroup,
    }
}

crate::wire_enum! {
    /// A principal's role in a tenant.
    pub(crate) enum TenantRole {
        /// Manages the tenant, its members and keys, including other owners.
        Owner,
        /// Manages members and keys, but cannot grant or remove Owner.
        Administrator,
        /// Works in the tenant; no administration.
        User,
    }
}

impl TenantRole {
    /// Owner and Administrator manage members and API keys.
    pub(crate) fn can_manage_tenant(self) -> bool {
        matches!(self, Self::Owner | Self::Administrator)
    }

    /// Whether a holder of `self` may hand out `granted` (to a member or an API key).
    pub(crate) fn can_grant(self, granted: TenantRole) -> bool {
        match self {
            Self::Owner => true,
            Self::Administrator => granted != Self::Owner,
            Self::User => false,
        }
    }
}

crate::wire_enum! {
    /// Platform-wide roles carried in tokens.
    pub(crate) enum PlatformRole {
        /// Platform operators: manage tenants, users, feature messages, credits.
        BackOffice,
        /// Cloud administrators: same administrative reach as BackOffice.
        CloudAdministrator,
    }
}

/// Who is calling, after authentication.
#[derive(Debug, Clone)]
pub(crate) struct Principal {
    /// The user id, or the API key id for an API key.
    pub(crate) id: Uuid,
    /// User or API key.
    pub(crate) principal_type: PrincipalType,
    /// Display name, when known.
    pub(crate) name: Option<String>,
    /// E-mail, when known.
    pub(crate) email: Option<String>,
    /// The tenant the call acts in: the API key's tenant, the token's tenant claim, or the
    /// user's only tenant.
    pub(crate) tenant_id: Option<TenantId>,
    /// The caller's role in that tenant; `None` when it is not a member.
    pub(crate) tenant_role: Option<TenantRole>,
    /// BackOffice and CloudAdministrator.
    pub(crate) platform_roles: BTreeSet<PlatformRole>,
    /// OAuth scopes.
    pub(crate) scopes: BTreeSet<String>,
    /// The token's `client_id` (else `azp`): the application the token was issued to.
    pub(crate) client_id: Option<String>,
}

impl Principal {
    /// The operator at the command line (`basin admin ...`): whoever can reach the store and
    /// the secret already has full control, so it acts as BackOffice.
    pub(crate) fn operator() -> Self {
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
    pub(crate) fn user_id(&self) -> Option<UserId> {
        (self.principal_type == PrincipalType::UserIdentity).then(|| UserId::from_uuid(self.id))
    }

    /// BackOffice or CloudAdministrator.
    pub(crate) fn is_platform_admin(&self) -> bool {
        !self.platform_roles.is_empty()
    }

    /// The caller's role in `tenant`, if it acts in that tenant.
    pub(crate) fn role_in(&self, tenant: TenantId) -> Option<TenantRole> {
        if self.tenant_id == Some(tenant) {
            self.tenant_role
        } else {
            None
        }
    }

    /// The role the caller is shown with on `principal/me`: its tenant role, else its highest
    /// platform role.
    pub(crate) fn display_role(&self) -> Option<String> {
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

impl<S> FromRequestParts<S> for Principal
where
    Arc<Authenticator>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(principal) = parts.extensions.get::<Principal>() {
            return Ok(principal.clone());
        }
        let authenticator = Arc::<Authenticator>::from_ref(state);
        let principal = authenticator
            .authenticate(&parts.headers)
            .await
            .map_err(ApiError::from)?;
        parts.extensions.insert(principal.clone());
        Ok(principal)
    }
}

//! The caller as the area rules see it: who it is and how it stands in a tenant, taken once from
//! the authenticated [`Principal`].

use uuid::Uuid;

use crate::auth::{Principal, PrincipalType, TenantRole};
use crate::ids::TenantId;

/// How the caller stands in a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TenantStanding {
    /// Tenant Owner or Administrator, or a platform admin acting in this tenant.
    Admin,
    /// Any other member of the tenant (including API keys of the tenant).
    Member,
    /// Not in the tenant.
    Outsider,
}

/// The caller as the area rules see it. Two equal callers are granted the same everywhere, so a
/// caller can key a cache of access decisions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Caller {
    /// User id or API key id.
    pub(crate) id: Uuid,
    /// User or API key.
    pub(crate) principal_type: PrincipalType,
    tenant_id: Option<TenantId>,
    tenant_role: Option<TenantRole>,
    platform_admin: bool,
}

impl From<&Principal> for Caller {
    fn from(principal: &Principal) -> Self {
        Self {
            id: principal.id,
            principal_type: principal.principal_type,
            tenant_id: principal.tenant_id,
            tenant_role: principal.tenant_role,
            platform_admin: principal.is_platform_admin(),
        }
    }
}

impl Caller {
    /// No one: a caller that is a member of nothing, for checks that do not depend on who asks.
    pub(crate) fn nobody() -> Self {
        Self {
            id: Uuid::nil(),
            principal_type: PrincipalType::UserIdentity,
            tenant_id: None,
            tenant_role: None,
            platform_admin: false,
        }
    }

    /// The principal `id` as records name it, with no standing anywhere: for work done later
    /// on a request whose permissions were checked when it was made (a transfer's result).
    pub(crate) fn recorded(id: Uuid) -> Self {
        Self {
            id,
            ..Self::nobody()
        }
    }

    /// The tenant the caller acts in, if any.
    pub(crate) fn tenant_id(&self) -> Option<TenantId> {
        self.tenant_id
    }

    /// The id and type that project members are matched on.
    pub(crate) fn key(&self) -> (Uuid, PrincipalType) {
        (self.id, self.principal_type)
    }

    /// How the caller stands in `tenant`.
    pub(crate) fn standing(&self, tenant: TenantId) -> TenantStanding {
        if self.tenant_id != Some(tenant) {
            return TenantStanding::Outsider;
        }
        match self.tenant_role {
            Some(TenantRole::Owner | TenantRole::Administrator) => TenantStanding::Admin,
            Some(TenantRole::User) => TenantStanding::Member,
            None if self.platform_admin => TenantStanding::Admin,
            None => TenantStanding::Outsider,
        }
    }
}

//! Identity rules: who may create and see tenants, users, members and API keys.
//!
//! - BackOffice and CloudAdministrator callers (platform admins) may do everything.
//! - A tenant's Owners and Administrators manage its members and API keys; only Owners may
//!   grant, change or remove the Owner role, and a tenant always keeps at least one Owner.
//! - An API key acts with the role it was created with, which is at most its creator's.
//! - Callers learn nothing about tenants they do not belong to: those are 404, while members
//!   without a managing role get 403.
//! - Tenant managers reach only users of the tenants they manage (and, by id, users of no
//!   tenant yet). Nothing they do tells whether an e-mail address is known elsewhere on the
//!   platform: adding a member by an address they cannot reach makes an invitation, the same
//!   answer for a known and an unknown address, and only platform admins set e-mail addresses
//!   on users (an address in use would otherwise answer 409 and reveal itself).

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::auth::{ApiKeySecret, KeyRecord, Principal, PrincipalType, UserRecord};
use crate::clock::Clock;
use crate::db::{Db, StoreError};
use crate::identity::StorageMeters;
use crate::identity::model::{
    ApiKey, DisplayName, Email, Invitation, Member, Tenant, TenantRole, User,
};
use crate::identity::store;
pub(crate) use crate::identity::store::{ListPage, SortColumn};
use crate::ids::{ApiKeyId, InvitationId, TenantId, UserId};

/// What went wrong in an identity operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum IdentityError {
    /// A field is invalid.
    #[error("{field}: {message}")]
    Invalid {
        /// Field name as on the wire.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Not found, or not visible to the caller.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// Visible but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// The e-mail belongs to another user.
    #[error("a user with this e-mail already exists")]
    EmailTaken,
    /// The user is already a member.
    #[error("the user is already a member of this tenant")]
    AlreadyMember,
    /// The change would leave the tenant without an Owner.
    #[error("a tenant must keep at least one Owner")]
    LastOwner,
    /// The invitation is not the caller's to answer, or lapsed.
    #[error("invitation not found")]
    InvitationNotFound,
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Result of identity operations.
pub(crate) type IdentityResult<T> = Result<T, IdentityError>;

/// How the caller relates to a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TenantAccess {
    /// May manage, acting with this role (platform admins act as Owner).
    Manage(TenantRole),
    /// Member without a managing role.
    Member,
    /// No relation: the tenant is invisible.
    None,
}

/// Identity operations over one store.
#[derive(Debug, Clone)]
pub(crate) struct IdentityService {
    db: Db,
    clock: Arc<dyn Clock>,
    /// What the areas above report of a tenant's bytes (see [`StorageMeters`]).
    storage: StorageMeters,
}

impl IdentityService {
    /// A service over `db`; `storage` measures the bytes a tenant stores.
    pub(crate) fn new(db: Db, clock: Arc<dyn Clock>, storage: StorageMeters) -> Self {
        Self { db, clock, storage }
    }

    /// The store.
    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// The clock.
    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    async fn access(
        &self,
        principal: &Principal,
        tenant: TenantId,
    ) -> IdentityResult<TenantAccess> {
        if principal.is_platform_admin() {
            return Ok(TenantAccess::Manage(TenantRole::Owner));
        }
        let role = match principal.principal_type {
            PrincipalType::OpenAPIAccount => principal.role_in(tenant),
            _ => match principal.user_id() {
                Some(user) => store::memberships_of(&self.db, user)
                    .await?
                    .into_iter()
                    .find(|(id, _)| *id == tenant)
                    .map(|(_, role)| role),
                None => None,
            },
        };
        Ok(match role {
            Some(role) if role.can_manage_tenant() => TenantAccess::Manage(role),
            Some(_) => TenantAccess::Member,
            None => TenantAccess::None,
        })
    }

    /// The role the caller manages `tenant` with, or the error to answer.
    pub(crate) async fn require_manager(
        &self,
        principal: &Principal,
        tenant: TenantId,
    ) -> IdentityResult<TenantRole> {
        match self.access(principal, tenant).await? {
            TenantAccess::Manage(role) => {
                if store::find_tenant(&self.db, tenant).await?.is_none() {
                    return Err(IdentityError::NotFound("tenant"));
                }
                Ok(role)
            }
            TenantAccess::Member => Err(IdentityError::Forbidden(
                "managing this tenant needs the Owner or Administrator role".into(),
            )),
            TenantAccess::None => Err(IdentityError::NotFound("tenant")),
        }
    }

    /// 403 unless the caller is BackOffice or CloudAdministrator; `action` says what needs it.
    pub(crate) fn require_platform_admin(
        principal: &Principal,
        action: &str,
    ) -> IdentityResult<()> {
        if principal.is_platform_admin() {
            Ok(())
        } else {
            Err(IdentityError::Forbidden(format!(
                "{action} needs the BackOffice or CloudAdministrator role"
            )))
        }
    }

    /// 403 unless the caller is a platform admin or manages some tenant: who may create
    /// users, before the body names the tenant.
    pub(crate) async fn require_manager_anywhere(
        &self,
        principal: &Principal,
    ) -> IdentityResult<()> {
        if principal.is_platform_admin() {
            return Ok(());
        }
        let manages = match principal.principal_type {
            PrincipalType::OpenAPIAccount => principal
                .tenant_role
                .is_some_and(TenantRole::can_manage_tenant),
            _ => match principal.user_id() {
                Some(user) => store::memberships_of(&self.db, user)
                    .await?
                    .into_iter()
                    .any(|(_, role)| role.can_manage_tenant()),
                None => false,
            },
        };
        if manages {
            Ok(())
        } else {
            Err(IdentityError::Forbidden(
                "creating users needs the BackOffice role, or the Owner or Administrator role in a tenant".into(),
            ))
        }
    }

    // ---- the caller ----

    /// Tenants the caller belongs to, with its role in each.
    pub(crate) async fn my_tenants(
        &self,
        principal: &Principal,
    ) -> IdentityResult<Vec<(Tenant, TenantRole)>> {
        match principal.principal_type {
            PrincipalType::OpenAPIAccount => {
                let (Some(tenant), Some(role)) = (principal.tenant_id, principal.tenant_role)
                else {
                    return Ok(Vec::new());
                };
                Ok(store::find_tenant(&self.db, tenant)
                    .await?
                    .map(|tenant| vec![(tenant, role)])
                    .unwrap_or_default())
            }
            _ => match principal.user_id() {
                Some(user) => Ok(store::tenants_of(&self.db, user).await?),
                None => Ok(Vec::new()),
            },
        }
    }

    // ---- tenants ----

    /// Creates a tenant (platform admins only).
    pub(crate) async fn create_tenant(
        &self,
        principal: &Principal,
        name: DisplayName,
    ) -> IdentityResult<Tenant> {
        Self::require_platform_admin(principal, "creating tenants")?;
        let now = self.now();
        let tenant = Tenant {
            id: TenantId::new_random(),
            name: name.as_ref().to_owned(),
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.db.begin().await?;
        store::insert_tenant(&mut tx, &tenant).await?;
        tx.commit().await?;
        Ok(tenant)
    }

    /// Tenants the caller may manage (all, for platform admins).
    pub(crate) async fn list_tenants(
        &self,
        principal: &Principal,
        page: &ListPage,
    ) -> IdentityResult<Vec<Tenant>> {
        let manager = if principal.is_platform_admin() {
            None
        } else {
            match principal.user_id() {
                Some(user) => Some(user),
                // An API key manages at most its own tenant.
                None => {
                    return match (principal.tenant_id, principal.tenant_role) {
                        (Some(tenant), Some(role))
                            if role.can_manage_tenant() && page.after.is_none() =>
                        {
                            Ok(store::find_tenant(&self.db, tenant)
                                .await?
                                .into_iter()
                                .collect())
                        }
                        _ => Ok(Vec::new()),
                    };
                }
            }
        };
        Ok(store::list_tenants(&self.db, page, manager).await?)
    }

    /// One tenant the caller may manage.
    pub(crate) async fn get_tenant(
        &self,
        principal: &Principal,
        id: TenantId,
    ) -> IdentityResult<Tenant> {
        self.require_manager(principal, id).await?;
        store::find_tenant(&self.db, id)
            .await?
            .ok_or(IdentityError::NotFound("tenant"))
    }

    /// A tenant with the bytes it stores, for its managers.
    pub(crate) async fn tenant_details(
        &self,
        principal: &Principal,
        id: TenantId,
    ) -> IdentityResult<(Tenant, crate::identity::model::TenantStorage)> {
        let tenant = self.get_tenant(principal, id).await?;
        let storage = self.storage.measure(&self.db, id).await?;
        Ok((tenant, storage))
    }

    /// Whether the tenant exists, for areas that keep records per tenant (credits) and must
    /// tell an unknown tenant from one without records.
    pub(crate) async fn tenant_exists(&self, id: TenantId) -> crate::db::StoreResult<bool> {
        Ok(store::find_tenant(&self.db, id).await?.is_some())
    }

    // ---- users ----

    /// Creates a user, optionally as a member of a tenant. Tenant managers must name their
    /// tenant; platform admins may create users without one.
    pub(crate) async fn create_user(
        &self,
        principal: &Principal,
        name: DisplayName,
        email: Option<Email>,
        tenant: Option<(TenantId, TenantRole)>,
    ) -> IdentityResult<User> {
        if email.is_some() && !principal.is_platform_admin() {
            return Err(IdentityError::Invalid {
                field: "email",
                message: "only platform administrators set e-mail addresses; invite the address with POST /api/admin/tenants/{tenantId}/members {\"email\": ...}".into(),
            });
        }
        match tenant {
            Some((tenant, role)) => {
                let acting = self.require_manager(principal, tenant).await?;
                if !acting.can_grant(role) {
                    return Err(IdentityError::Forbidden(format!(
                        "an {acting} cannot grant the {role} role"
                    )));
                }
            }
            None => {
                if !principal.is_platform_admin() {
                    return Err(IdentityError::Invalid {
                        field: "tenantId",
                        message: "tenant owners and administrators must name their tenant".into(),
                    });
                }
            }
        }
        let now = self.now();
        let user = User {
            id: UserId::new_random(),
            name: name.as_ref().to_owned(),
            email: email.map(|email| email.as_ref().to_owned()),
            disabled_at: None,
            created_at: now,
            updated_at: now,
        };
        let mut tx = self.db.begin().await?;
        store::insert_user(&mut tx, &user)
            .await
            .map_err(email_conflict)?;
        if let Some((tenant, role)) = tenant {
            store::insert_member(&mut tx, tenant, user.id, role, now).await?;
        }
        tx.commit().await?;
        Ok(user)
    }

    /// Users: all for platform admins (optionally of one tenant); for tenant managers, the
    /// members of their tenant.
    pub(crate) async fn list_users(
        &self,
        principal: &Principal,
        tenant: Option<TenantId>,
        page: &ListPage,
    ) -> IdentityResult<Vec<User>> {
        let tenant = match tenant {
            Some(tenant) => {
                self.require_manager(principal, tenant).await?;
                Some(tenant)
            }
            None if principal.is_platform_admin() => None,
            None => {
                let tenant = principal.tenant_id.ok_or_else(|| IdentityError::Invalid {
                    field: "tenantId",
                    message: "name the tenant whose users to list".into(),
                })?;
                self.require_manager(principal, tenant).await?;
                Some(tenant)
            }
        };
        Ok(store::list_users(&self.db, page, tenant).await?)
    }

    /// One user: platform admins see everyone; tenant managers see their members; everyone
    /// sees themselves.
    pub(crate) async fn get_user(&self, principal: &Principal, id: UserId) -> IdentityResult<User> {
        let user = store::find_user(&self.db, id)
            .await?
            .ok_or(IdentityError::NotFound("user"))?;
        if principal.is_platform_admin() || principal.user_id() == Some(id) {
            return Ok(user);
        }
        for (tenant, _) in store::memberships_of(&self.db, id).await? {
            if let TenantAccess::Manage(_) = self.access(principal, tenant).await? {
                return Ok(user);
            }
        }
        Err(IdentityError::NotFound("user"))
    }

    /// Changes a user's name, e-mail or disabled state (platform admins only).
    pub(crate) async fn update_user(
        &self,
        principal: &Principal,
        id: UserId,
        name: Option<DisplayName>,
        email: Option<Email>,
        disabled: Option<bool>,
    ) -> IdentityResult<User> {
        Self::require_platform_admin(principal, "changing users")?;
        let mut user = store::find_user(&self.db, id)
            .await?
            .ok_or(IdentityError::NotFound("user"))?;
        let now = self.now();
        if let Some(name) = name {
            user.name = name.as_ref().to_owned();
        }
        if let Some(email) = email {
            user.email = Some(email.as_ref().to_owned());
        }
        match disabled {
            Some(true) if user.disabled_at.is_none() => user.disabled_at = Some(now),
            Some(false) => user.disabled_at = None,
            _ => {}
        }
        user.updated_at = now;
        store::update_user(&self.db, &user)
            .await
            .map_err(email_conflict)?;
        Ok(user)
    }

    // ---- members ----

    /// Members of a tenant, one offset page.
    pub(crate) async fn list_members(
        &self,
        principal: &Principal,
        tenant: TenantId,
        offset: u32,
        limit: u32,
    ) -> IdentityResult<(u64, Vec<Member>)> {
        self.require_manager(principal, tenant).await?;
        Ok(store::list_members(&self.db, tenant, offset, limit).await?)
    }

    /// Adds a user to a tenant: by id, a user the caller can reach (of a tenant it manages,
    /// or of none yet); by e-mail, a user of a tenant it manages. Any other address is invited
    /// instead, so that the answer is the same whether or not the address exists elsewhere.
    pub(crate) async fn add_member(
        &self,
        principal: &Principal,
        tenant: TenantId,
        user: UserRef,
        role: TenantRole,
    ) -> IdentityResult<Added> {
        let acting = self.require_manager(principal, tenant).await?;
        if !acting.can_grant(role) {
            return Err(IdentityError::Forbidden(format!(
                "an {acting} cannot grant the {role} role"
            )));
        }
        let user = match user {
            UserRef::Id(id) => {
                let found = store::find_user(&self.db, id).await?;
                match found {
                    Some(user) if self.reaches(principal, user.id, true).await? => user,
                    _ => return Err(IdentityError::NotFound("user")),
                }
            }
            UserRef::Email(email) => {
                let found = store::find_user_by_email(&self.db, email.as_ref()).await?;
                match found {
                    Some(user) if self.reaches(principal, user.id, false).await? => user,
                    _ => {
                        let invitation = self.invite(principal, tenant, &email, role).await?;
                        return Ok(Added::Invited(invitation));
                    }
                }
            }
        };
        let now = self.now();
        let mut tx = self.db.begin().await?;
        store::lock_tenant(&mut tx, tenant).await?;
        if store::find_member_role(&mut tx, tenant, user.id)
            .await?
            .is_some()
        {
            return Err(IdentityError::AlreadyMember);
        }
        store::insert_member(&mut tx, tenant, user.id, role, now)
            .await
            .map_err(|error| match error {
                StoreError::Duplicate(_) => IdentityError::AlreadyMember,
                other => IdentityError::Store(other),
            })?;
        tx.commit().await?;
        Ok(Added::Member(Member {
            tenant_id: tenant,
            user,
            role,
            created_at: now,
        }))
    }

    /// Whether the caller may reach `user`: platform admins reach everyone; tenant managers
    /// reach the users of the tenants they manage, and with `tenantless`, users of no tenant.
    async fn reaches(
        &self,
        principal: &Principal,
        user: UserId,
        tenantless: bool,
    ) -> IdentityResult<bool> {
        if principal.is_platform_admin() {
            return Ok(true);
        }
        let memberships = store::memberships_of(&self.db, user).await?;
        if memberships.is_empty() {
            return Ok(tenantless);
        }
        for (tenant, _) in memberships {
            if let TenantAccess::Manage(_) = self.access(principal, tenant).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn invite(
        &self,
        principal: &Principal,
        tenant: TenantId,
        email: &Email,
        role: TenantRole,
    ) -> IdentityResult<Invitation> {
        let now = self.now();
        let invitation = Invitation {
            id: InvitationId::new_random(),
            tenant_id: tenant,
            email: email.as_ref().to_lowercase(),
            role,
            invited_by: Some(principal.id),
            created_at: now,
            expires_at: now + chrono::TimeDelta::days(crate::limits::INVITATION_TTL_DAYS),
        };
        let mut tx = self.db.begin().await?;
        store::replace_invitation(&mut tx, &invitation).await?;
        tx.commit().await?;
        Ok(invitation)
    }

    /// Open invitations of a tenant, newest first, one offset page.
    pub(crate) async fn list_invitations(
        &self,
        principal: &Principal,
        tenant: TenantId,
        offset: u32,
        limit: u32,
    ) -> IdentityResult<(u64, Vec<Invitation>)> {
        self.require_manager(principal, tenant).await?;
        Ok(store::list_invitations(&self.db, tenant, self.now(), offset, limit).await?)
    }

    /// Withdraws an invitation of the tenant (its role must be one the caller may grant).
    pub(crate) async fn withdraw_invitation(
        &self,
        principal: &Principal,
        tenant: TenantId,
        id: InvitationId,
    ) -> IdentityResult<()> {
        let acting = self.require_manager(principal, tenant).await?;
        let invitation = store::find_invitation(&self.db, id, self.now())
            .await?
            .filter(|invitation| invitation.tenant_id == tenant)
            .ok_or(IdentityError::InvitationNotFound)?;
        if !acting.can_grant(invitation.role) {
            return Err(IdentityError::Forbidden(format!(
                "an {acting} cannot withdraw an invitation to the {} role",
                invitation.role
            )));
        }
        let mut tx = self.db.begin().await?;
        store::delete_invitation(&mut tx, id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The open invitations to the caller's e-mail address, with each tenant's name. Only users
    /// Basin knows, with an address a platform admin set, have any.
    pub(crate) async fn my_invitations(
        &self,
        principal: &Principal,
    ) -> IdentityResult<Vec<(Invitation, String)>> {
        let Some(email) = self.email_of(principal).await? else {
            return Ok(Vec::new());
        };
        Ok(store::invitations_to(&self.db, &email, self.now(), MY_INVITATIONS_MAX).await?)
    }

    async fn email_of(&self, principal: &Principal) -> IdentityResult<Option<String>> {
        let Some(user) = principal.user_id() else {
            return Ok(None);
        };
        Ok(store::find_user(&self.db, user)
            .await?
            .and_then(|user| user.email)
            .map(|email| email.to_lowercase()))
    }

    /// The caller's own open invitation `id`.
    async fn my_invitation(
        &self,
        principal: &Principal,
        id: InvitationId,
    ) -> IdentityResult<(UserId, Invitation)> {
        let email = self.email_of(principal).await?;
        let invitation = store::find_invitation(&self.db, id, self.now()).await?;
        match (principal.user_id(), email, invitation) {
            (Some(user), Some(email), Some(invitation)) if invitation.email == email => {
                Ok((user, invitation))
            }
            _ => Err(IdentityError::InvitationNotFound),
        }
    }

    /// Accepts one of the caller's invitations: it joins the tenant with the invited role.
    pub(crate) async fn accept_invitation(
        &self,
        principal: &Principal,
        id: InvitationId,
    ) -> IdentityResult<(Tenant, TenantRole)> {
        let (user, invitation) = self.my_invitation(principal, id).await?;
        let tenant = store::find_tenant(&self.db, invitation.tenant_id)
            .await?
            .ok_or(IdentityError::InvitationNotFound)?;
        let now = self.now();
        let mut tx = self.db.begin().await?;
        store::lock_tenant(&mut tx, invitation.tenant_id).await?;
        if !store::delete_invitation(&mut tx, id).await? {
            return Err(IdentityError::InvitationNotFound);
        }
        if store::find_member_role(&mut tx, invitation.tenant_id, user)
            .await?
            .is_some()
        {
            return Err(IdentityError::AlreadyMember);
        }
        store::insert_member(&mut tx, invitation.tenant_id, user, invitation.role, now).await?;
        tx.commit().await?;
        Ok((tenant, invitation.role))
    }

    /// Declines one of the caller's invitations.
    pub(crate) async fn decline_invitation(
        &self,
        principal: &Principal,
        id: InvitationId,
    ) -> IdentityResult<()> {
        self.my_invitation(principal, id).await?;
        let mut tx = self.db.begin().await?;
        store::delete_invitation(&mut tx, id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Changes a member's role.
    pub(crate) async fn set_member_role(
        &self,
        principal: &Principal,
        tenant: TenantId,
        user: UserId,
        role: TenantRole,
    ) -> IdentityResult<Member> {
        let acting = self.require_manager(principal, tenant).await?;
        let mut tx = self.db.begin().await?;
        store::lock_tenant(&mut tx, tenant).await?;
        let current = store::find_member_role(&mut tx, tenant, user)
            .await?
            .ok_or(IdentityError::NotFound("member"))?;
        if !acting.can_grant(role) || !acting.can_grant(current) {
            return Err(IdentityError::Forbidden(format!(
                "an {acting} cannot change a member from {current} to {role}"
            )));
        }
        if current == TenantRole::Owner
            && role != TenantRole::Owner
            && store::count_owners(&mut tx, tenant).await? <= 1
        {
            return Err(IdentityError::LastOwner);
        }
        store::update_member_role(&mut tx, tenant, user, role).await?;
        tx.commit().await?;
        store::find_member(&self.db, tenant, user)
            .await?
            .ok_or(IdentityError::NotFound("member"))
    }

    /// Removes a member from a tenant.
    pub(crate) async fn remove_member(
        &self,
        principal: &Principal,
        tenant: TenantId,
        user: UserId,
    ) -> IdentityResult<()> {
        let acting = self.require_manager(principal, tenant).await?;
        let mut tx = self.db.begin().await?;
        store::lock_tenant(&mut tx, tenant).await?;
        let current = store::find_member_role(&mut tx, tenant, user)
            .await?
            .ok_or(IdentityError::NotFound("member"))?;
        if !acting.can_grant(current) {
            return Err(IdentityError::Forbidden(format!(
                "an {acting} cannot remove an {current}"
            )));
        }
        if current == TenantRole::Owner && store::count_owners(&mut tx, tenant).await? <= 1 {
            return Err(IdentityError::LastOwner);
        }
        store::delete_member(&mut tx, tenant, user).await?;
        tx.commit().await?;
        Ok(())
    }

    // ---- API keys ----

    /// Keys of a tenant, newest first, one offset page.
    pub(crate) async fn list_api_keys(
        &self,
        principal: &Principal,
        tenant: TenantId,
        offset: u32,
        limit: u32,
    ) -> IdentityResult<(u64, Vec<ApiKey>)> {
        self.require_manager(principal, tenant).await?;
        Ok(store::list_api_keys(&self.db, tenant, offset, limit).await?)
    }

    /// Creates a key; the secret is returned this once.
    pub(crate) async fn create_api_key(
        &self,
        principal: &Principal,
        tenant: TenantId,
        name: DisplayName,
        role: TenantRole,
    ) -> IdentityResult<(ApiKey, ApiKeySecret)> {
        let acting = self.require_manager(principal, tenant).await?;
        if !acting.can_grant(role) {
            return Err(IdentityError::Forbidden(format!(
                "an {acting} cannot create a key with the {role} role"
            )));
        }
        let secret = ApiKeySecret::generate();
        let key = self
            .insert_api_key(
                tenant,
                name,
                role,
                Some(principal.id),
                ApiKeyId::new_random(),
                &secret,
            )
            .await?;
        Ok((key, secret))
    }

    pub(crate) async fn insert_api_key(
        &self,
        tenant: TenantId,
        name: DisplayName,
        role: TenantRole,
        created_by: Option<Uuid>,
        id: ApiKeyId,
        secret: &ApiKeySecret,
    ) -> IdentityResult<ApiKey> {
        let key = ApiKey {
            id,
            tenant_id: tenant,
            name: name.as_ref().to_owned(),
            role,
            created_at: self.now(),
            created_by,
            revoked_at: None,
        };
        let mut tx = self.db.begin().await?;
        store::insert_api_key(&mut tx, &key, &secret.hash()).await?;
        tx.commit().await?;
        Ok(key)
    }

    /// Revokes a key of the tenant. Revoking twice is not an error.
    pub(crate) async fn revoke_api_key(
        &self,
        principal: &Principal,
        tenant: TenantId,
        id: ApiKeyId,
    ) -> IdentityResult<()> {
        let acting = self.require_manager(principal, tenant).await?;
        let key = store::find_api_key(&self.db, id)
            .await?
            .filter(|key| key.tenant_id == tenant)
            .ok_or(IdentityError::NotFound("API key"))?;
        if !acting.can_grant(key.role) {
            return Err(IdentityError::Forbidden(format!(
                "an {acting} cannot revoke a key with the {} role",
                key.role
            )));
        }
        store::revoke_api_key(&self.db, id, self.now(), principal.id).await?;
        Ok(())
    }

    /// Which of `principals` belong to `tenant` as the type they name: users who are its
    /// members, API keys issued in it. Basin has no member groups, so no group ever does.
    pub(crate) async fn principals_in_tenant(
        &self,
        tenant: TenantId,
        principals: &[(Uuid, PrincipalType)],
    ) -> Result<BTreeSet<(Uuid, PrincipalType)>, StoreError> {
        let of_type = |wanted: PrincipalType| -> Vec<Uuid> {
            principals
                .iter()
                .filter(|(_, kind)| *kind == wanted)
                .map(|(id, _)| *id)
                .collect()
        };
        let mut found = BTreeSet::new();
        for user in
            store::users_in_tenant(&self.db, tenant, &of_type(PrincipalType::UserIdentity)).await?
        {
            found.insert((user, PrincipalType::UserIdentity));
        }
        for key in
            store::api_keys_in_tenant(&self.db, tenant, &of_type(PrincipalType::OpenAPIAccount))
                .await?
        {
            found.insert((key, PrincipalType::OpenAPIAccount));
        }
        Ok(found)
    }

    /// Revokes any key by id, for the `basin admin api-key revoke` command.
    pub(crate) async fn revoke_api_key_by_id(&self, id: ApiKeyId) -> IdentityResult<ApiKey> {
        let key = store::find_api_key(&self.db, id)
            .await?
            .ok_or(IdentityError::NotFound("API key"))?;
        store::revoke_api_key(&self.db, id, self.now(), Uuid::nil()).await?;
        Ok(key)
    }
}

#[async_trait::async_trait]
impl crate::auth::IdentityDirectory for IdentityService {
    async fn api_key_by_hash(&self, hash: &[u8]) -> anyhow::Result<Option<KeyRecord>> {
        Ok(store::find_api_key_by_hash(&self.db, hash)
            .await?
            .map(|key| KeyRecord {
                id: key.id,
                tenant_id: key.tenant_id,
                name: key.name,
                role: key.role,
                revoked: key.revoked_at.is_some(),
            }))
    }

    async fn user(&self, id: UserId) -> anyhow::Result<Option<UserRecord>> {
        Ok(store::find_user(&self.db, id)
            .await?
            .map(|user| UserRecord {
                name: user.name,
                email: user.email,
                disabled: user.disabled_at.is_some(),
            }))
    }

    async fn memberships(&self, id: UserId) -> anyhow::Result<Vec<(TenantId, TenantRole)>> {
        Ok(store::memberships_of(&self.db, id).await?)
    }
}

/// Most invitations listed for one address.
const MY_INVITATIONS_MAX: u32 = 100;

/// What adding a member did.
#[derive(Debug, Clone)]
pub(crate) enum Added {
    /// The user joined the tenant.
    Member(Member),
    /// The address was invited.
    Invited(Invitation),
}

/// A user named by id or by e-mail.
#[derive(Debug, Clone)]
pub(crate) enum UserRef {
    /// By id.
    Id(UserId),
    /// By e-mail.
    Email(Email),
}

fn email_conflict(error: StoreError) -> IdentityError {
    match error {
        StoreError::Duplicate(_) => IdentityError::EmailTaken,
        other => IdentityError::Store(other),
    }
}

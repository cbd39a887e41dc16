//! Identity values: roles, records, request and response shapes, and the domain values
//! parsed once at the edge.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::PrincipalType;
use crate::http::time::WireTime;
use crate::ids::{ApiKeyId, InvitationId, TenantId, UserId};
use crate::limits::{EMAIL_CHARS_MAX, NAME_CHARS_MAX};

pub(crate) use crate::auth::TenantRole;

/// A display name: trimmed, 1 to [`NAME_CHARS_MAX`] characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DisplayName(String);

impl DisplayName {
    /// Parses a name.
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        let name = raw.trim();
        if name.is_empty() {
            return Err("must not be empty".into());
        }
        if name.chars().count() > NAME_CHARS_MAX {
            return Err(format!("must be at most {NAME_CHARS_MAX} characters"));
        }
        if name.chars().any(char::is_control) {
            return Err("must not contain control characters".into());
        }
        Ok(Self(name.to_owned()))
    }
}

impl AsRef<str> for DisplayName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// An e-mail address: one `@` with text on both sides, no spaces, at most
/// [`EMAIL_CHARS_MAX`] characters. Deliverability is not Basin's business.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Email(String);

impl Email {
    /// Parses an address.
    pub(crate) fn parse(raw: &str) -> Result<Self, String> {
        let email = raw.trim();
        if email.chars().count() > EMAIL_CHARS_MAX {
            return Err(format!("must be at most {EMAIL_CHARS_MAX} characters"));
        }
        let valid = match email.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.is_empty()
                    && !domain.contains('@')
                    && !email.chars().any(|c| c.is_whitespace() || c.is_control())
            }
            None => false,
        };
        if !valid {
            return Err("must be an e-mail address such as name@example.com".into());
        }
        Ok(Self(email.to_owned()))
    }
}

impl AsRef<str> for Email {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A tenant as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct Tenant {
    /// Id.
    pub(crate) id: TenantId,
    /// Name.
    pub(crate) name: String,
    /// Creation time.
    pub(crate) created_at: DateTime<Utc>,
    /// Last change.
    pub(crate) updated_at: DateTime<Utc>,
}

/// The bytes a tenant stores, by where they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TenantStorage {
    /// Content of live datasets.
    pub(crate) datasets_bytes: i64,
    /// Uploads not yet imported (or not yet past their retention).
    pub(crate) uploads_bytes: i64,
    /// Content of datasets in the recycle bin.
    pub(crate) recycle_bin_bytes: i64,
}

impl TenantStorage {
    /// Both figures added field by field (saturating: a sum past `i64::MAX` bytes stays there).
    pub(crate) fn plus(self, other: Self) -> Self {
        Self {
            datasets_bytes: self.datasets_bytes.saturating_add(other.datasets_bytes),
            uploads_bytes: self.uploads_bytes.saturating_add(other.uploads_bytes),
            recycle_bin_bytes: self
                .recycle_bin_bytes
                .saturating_add(other.recycle_bin_bytes),
        }
    }
}

/// A user as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct User {
    /// Id.
    pub(crate) id: UserId,
    /// Display name.
    pub(crate) name: String,
    /// E-mail.
    pub(crate) email: Option<String>,
    /// Set when the user may no longer sign in.
    pub(crate) disabled_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub(crate) created_at: DateTime<Utc>,
    /// Last change.
    pub(crate) updated_at: DateTime<Utc>,
}

/// A tenant membership with the member's user record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// The user.
    pub(crate) user: User,
    /// Role in the tenant.
    pub(crate) role: TenantRole,
    /// When the user joined.
    pub(crate) created_at: DateTime<Utc>,
}

/// An API key record (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct ApiKey {
    /// Id, also the principal id of calls made with the key.
    pub(crate) id: ApiKeyId,
    /// Tenant it belongs to.
    pub(crate) tenant_id: TenantId,
    /// Label.
    pub(crate) name: String,
    /// Role the key acts with.
    pub(crate) role: TenantRole,
    /// Creation time.
    pub(crate) created_at: DateTime<Utc>,
    /// Who created it.
    pub(crate) created_by: Option<Uuid>,
    /// When it was revoked.
    pub(crate) revoked_at: Option<DateTime<Utc>>,
}

/// An invitation to join a tenant, as stored. The address is kept in lower case.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct Invitation {
    /// Id.
    pub(crate) id: InvitationId,
    /// The tenant to join.
    pub(crate) tenant_id: TenantId,
    /// The invited address, lower case.
    pub(crate) email: String,
    /// The role the user gets on accepting.
    pub(crate) role: TenantRole,
    /// Who invited.
    pub(crate) invited_by: Option<Uuid>,
    /// When.
    pub(crate) created_at: DateTime<Utc>,
    /// After this the invitation can no longer be accepted.
    pub(crate) expires_at: DateTime<Utc>,
}

// ---- wire shapes ----

/// `GET /api/iam/principal/me`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PrincipalDto {
    /// User id, or API key id.
    pub(crate) id: Uuid,
    /// Display name.
    pub(crate) name: Option<String>,
    /// E-mail.
    pub(crate) email: Option<String>,
    /// Role in the current tenant, else the platform role.
    pub(crate) role: Option<String>,
    /// Current tenant.
    pub(crate) tenant_id: Option<TenantId>,
    /// `UserIdentity` or `OpenAPIAccount`.
    pub(crate) principal_type: PrincipalType,
    /// Platform roles (BackOffice, CloudAdministrator).
    pub(crate) platform_roles: Vec<String>,
    /// OAuth scopes of the token.
    pub(crate) scopes: Vec<String>,
}

/// An entry of `GET /api/iam/tenant/my`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MyTenantDto {
    /// Tenant id.
    pub(crate) id: TenantId,
    /// Tenant name.
    pub(crate) name: String,
    /// The caller's role there.
    pub(crate) role: TenantRole,
    /// Creation time.
    pub(crate) created_at: WireTime,
    /// Last change.
    pub(crate) updated_at: WireTime,
}

/// A tenant in the administration API.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TenantDto {
    /// Id.
    pub(crate) id: TenantId,
    /// Name.
    pub(crate) name: String,
    /// Creation time.
    pub(crate) created_at: WireTime,
    /// Last change.
    pub(crate) updated_at: WireTime,
}

impl From<Tenant> for TenantDto {
    fn from(tenant: Tenant) -> Self {
        Self {
            id: tenant.id,
            name: tenant.name,
            created_at: tenant.created_at.into(),
            updated_at: tenant.updated_at.into(),
        }
    }
}

/// One tenant in the administration API, with the bytes it stores.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TenantDetailsDto {
    /// The tenant.
    #[serde(flatten)]
    pub(crate) tenant: TenantDto,
    /// The bytes it stores, by where they are.
    pub(crate) storage: TenantStorageDto,
}

/// The bytes a tenant stores, by where they are (blob sizes as recorded; derived tile
/// pyramids and export results not counted).
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TenantStorageDto {
    /// Content of live datasets.
    pub(crate) datasets_bytes: i64,
    /// Uploads not yet imported, or unused and not yet past `blob.upload_retention_seconds`.
    pub(crate) uploads_bytes: i64,
    /// Content of datasets in the recycle bin (deleted, or below a deleted project).
    pub(crate) recycle_bin_bytes: i64,
}

impl From<TenantStorage> for TenantStorageDto {
    fn from(storage: TenantStorage) -> Self {
        Self {
            datasets_bytes: storage.datasets_bytes,
            uploads_bytes: storage.uploads_bytes,
            recycle_bin_bytes: storage.recycle_bin_bytes,
        }
    }
}

/// A user in the administration API.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UserDto {
    /// Id.
    pub(crate) id: UserId,
    /// Name.
    pub(crate) name: String,
    /// E-mail.
    pub(crate) email: Option<String>,
    /// Whether the user is disabled (its tokens are refused).
    pub(crate) disabled: bool,
    /// Creation time.
    pub(crate) created_at: WireTime,
    /// Last change.
    pub(crate) updated_at: WireTime,
}

impl From<User> for UserDto {
    fn from(user: User) -> Self {
        Self {
            id: user.id,
            name: user.name,
            email: user.email,
            disabled: user.disabled_at.is_some(),
            created_at: user.created_at.into(),
            updated_at: user.updated_at.into(),
        }
    }
}

/// A tenant member.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MemberDto {
    /// The user's id.
    pub(crate) user_id: UserId,
    /// The user's name.
    pub(crate) name: String,
    /// The user's e-mail.
    pub(crate) email: Option<String>,
    /// Role in the tenant.
    pub(crate) role: TenantRole,
    /// Always `UserIdentity`.
    pub(crate) principal_type: PrincipalType,
    /// When the user joined.
    pub(crate) created_at: WireTime,
}

impl From<Member> for MemberDto {
    fn from(member: Member) -> Self {
        Self {
            user_id: member.user.id,
            name: member.user.name,
            email: member.user.email,
            role: member.role,
            principal_type: PrincipalType::UserIdentity,
            created_at: member.created_at.into(),
        }
    }
}

/// An API key record.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApiKeyDto {
    /// Id (not the key).
    pub(crate) id: ApiKeyId,
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// Label.
    pub(crate) name: String,
    /// Role the key acts with.
    pub(crate) role: TenantRole,
    /// Always `OpenAPIAccount`.
    pub(crate) principal_type: PrincipalType,
    /// Creation time.
    pub(crate) created_at: WireTime,
    /// Creator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) created_by: Option<Uuid>,
    /// When revoked; absent while active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) revoked_at: Option<WireTime>,
}

impl From<ApiKey> for ApiKeyDto {
    fn from(key: ApiKey) -> Self {
        Self {
            id: key.id,
            tenant_id: key.tenant_id,
            name: key.name,
            role: key.role,
            principal_type: PrincipalType::OpenAPIAccount,
            created_at: key.created_at.into(),
            created_by: key.created_by,
            revoked_at: key.revoked_at.map(WireTime::from),
        }
    }
}

/// A new API key: the record plus the key, shown this once.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreatedApiKeyDto {
    /// The record.
    #[serde(flatten)]
    pub(crate) record: ApiKeyDto,
    /// The key to send in `svc-open-api-key`. It cannot be shown again.
    pub(crate) api_key: String,
}

/// An invitation on the wire.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InvitationDto {
    /// Id.
    pub(crate) id: InvitationId,
    /// The tenant to join.
    pub(crate) tenant_id: TenantId,
    /// The tenant's name, shown to the invited user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tenant_name: Option<String>,
    /// The invited address.
    pub(crate) email: String,
    /// The role the user gets on accepting.
    pub(crate) role: TenantRole,
    /// Always `Pending`: accepted and declined invitations are gone.
    pub(crate) status: &'static str,
    /// When it was made.
    pub(crate) created_at: WireTime,
    /// When it lapses.
    pub(crate) expires_at: WireTime,
}

impl InvitationDto {
    /// The wire form, with the tenant's name when the invited user is the reader.
    pub(crate) fn new(invitation: Invitation, tenant_name: Option<String>) -> Self {
        Self {
            id: invitation.id,
            tenant_id: invitation.tenant_id,
            tenant_name,
            email: invitation.email,
            role: invitation.role,
            status: "Pending",
            created_at: invitation.created_at.into(),
            expires_at: invitation.expires_at.into(),
        }
    }
}

/// `POST /api/admin/tenants`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateTenantRequest {
    /// Name, 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) name: String,
}

/// `POST /api/admin/users`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateUserRequest {
    /// Display name.
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) name: String,
    /// E-mail, unique ignoring case. Platform administrators only: tenant owners and
    /// administrators invite an address instead (`POST .../members {email}`).
    pub(crate) email: Option<String>,
    /// Tenant to add the user to; required for tenant owners and administrators.
    pub(crate) tenant_id: Option<TenantId>,
    /// Role in that tenant (default `User`).
    pub(crate) role: Option<TenantRole>,
}

/// `PATCH /api/admin/users/{userId}`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateUserRequest {
    /// New name.
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) name: Option<String>,
    /// New e-mail.
    pub(crate) email: Option<String>,
    /// Disable (true) or enable (false) the user.
    pub(crate) disabled: Option<bool>,
}

/// `POST /api/admin/tenants/{tenantId}/members`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct AddMemberRequest {
    /// The user, by id (a user of a tenant the caller manages, or of none)...
    pub(crate) user_id: Option<UserId>,
    /// ...or by e-mail: a user of a tenant the caller manages joins at once (201); any other
    /// address is invited (202).
    pub(crate) email: Option<String>,
    /// Role (default `User`).
    pub(crate) role: Option<TenantRole>,
}

/// `PUT /api/admin/tenants/{tenantId}/members/{userId}`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SetMemberRoleRequest {
    /// The new role.
    pub(crate) role: TenantRole,
}

/// `POST /api/admin/tenants/{tenantId}/api-keys`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateApiKeyRequest {
    /// Label.
    #[schema(min_length = 1, max_length = 200)]
    pub(crate) name: String,
    /// Role the key acts with (default `User`); at most the creator's own.
    pub(crate) role: Option<TenantRole>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(DisplayName::parse("  Acme ").unwrap().as_ref(), "Acme");
        assert!(DisplayName::parse("   ").is_err());
        assert!(DisplayName::parse(&"x".repeat(NAME_CHARS_MAX)).is_ok());
        assert!(DisplayName::parse(&"x".repeat(NAME_CHARS_MAX + 1)).is_err());
        assert!(DisplayName::parse("a\u{0}b").is_err());
    }

    #[test]
    fn emails_need_one_at_sign_with_text_around_it() {
        assert!(Email::parse("ann@example.com").is_ok());
        for bad in [
            "",
            "ann",
            "@x",
            "ann@",
            "a@b@c",
            "a b@c",
            &format!("{}@x", "a".repeat(260)),
        ] {
            assert!(Email::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn administrators_cannot_grant_owner() {
        assert!(TenantRole::Owner.can_grant(TenantRole::Owner));
        assert!(TenantRole::Administrator.can_grant(TenantRole::Administrator));
        assert!(!TenantRole::Administrator.can_grant(TenantRole::Owner));
        assert!(!TenantRole::User.can_grant(TenantRole::User));
    }
}

//! First-start bootstrap: one tenant, one Owner user, one API key, and tokens to call the API
//! with. `basin admin bootstrap` runs the same on demand and is idempotent: it returns the same
//! ids and the same API key (derived from the signing secret, so it is never stored in clear)
//! with fresh tokens. If the bootstrap key was revoked, a new one replaces it.

use serde::Serialize;

use chrono::{DateTime, Utc};

use crate::auth::{
    PLATFORM_SCOPES, PlatformRole, SigningSecret, TokenRequest, derive_bootstrap_key, issue_token,
};
use crate::config::AuthConfig;
use crate::db::Tx;
use crate::identity::model::{ApiKey, Tenant, TenantRole, User};
use crate::identity::service::{IdentityError, IdentityService};
use crate::identity::store::{self, BootstrapRecord};
use crate::ids::{ApiKeyId, TenantId, UserId};

/// Name of the bootstrap tenant.
pub(crate) const BOOTSTRAP_TENANT_NAME: &str = "Default tenant";
/// Name of the bootstrap user.
pub(crate) const BOOTSTRAP_USER_NAME: &str = "Owner";
/// Name of the bootstrap API key.
pub(crate) const BOOTSTRAP_KEY_NAME: &str = "Bootstrap key";
/// `client_id` of bootstrap tokens.
pub(crate) const BOOTSTRAP_CLIENT_ID: &str = "basin-cli";

/// What a bootstrap prints.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BootstrapOutput {
    /// The tenant.
    pub tenant_id: TenantId,
    /// The Owner user.
    pub user_id: UserId,
    /// The API key (send as `svc-open-api-key`).
    pub api_key: String,
    /// A bearer token with the BackOffice role and every platform scope.
    pub back_office_token: String,
    /// A bearer token for the Owner user, without platform roles.
    pub user_token: String,
    /// True when this call created the records.
    #[serde(skip)]
    pub created: bool,
}

/// Why a bootstrap failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum BootstrapError {
    /// The store failed.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// Signing failed.
    #[error("cannot sign tokens: {0}")]
    Token(#[from] jsonwebtoken::errors::Error),
}

impl From<crate::db::StoreError> for BootstrapError {
    fn from(error: crate::db::StoreError) -> Self {
        Self::Identity(IdentityError::Store(error))
    }
}

/// Bootstraps, or returns the existing bootstrap with fresh tokens.
pub(crate) async fn bootstrap(
    identity: &IdentityService,
    secret: &SigningSecret,
    auth: &AuthConfig,
) -> Result<BootstrapOutput, BootstrapError> {
    match ensure(identity, secret, auth, false).await? {
        Some(output) => Ok(output),
        // Unreachable: without only_if_empty, ensure always returns the bootstrap.
        None => Err(BootstrapError::Identity(IdentityError::NotFound(
            "bootstrap",
        ))),
    }
}

/// Bootstraps only when the store holds no tenant yet (first start of `basin serve`).
pub(crate) async fn bootstrap_if_empty(
    identity: &IdentityService,
    secret: &SigningSecret,
    auth: &AuthConfig,
) -> Result<Option<BootstrapOutput>, BootstrapError> {
    ensure(identity, secret, auth, true).await
}

async fn ensure(
    identity: &IdentityService,
    secret: &SigningSecret,
    auth: &AuthConfig,
    only_if_empty: bool,
) -> Result<Option<BootstrapOutput>, BootstrapError> {
    let now = identity.now();
    let mut tx = identity.db().begin().await?;
    store::lock_bootstrap(&mut tx).await?;
    let existing = store::find_bootstrap(&mut tx).await?;
    if only_if_empty && (existing.is_some() || store::count_tenants_tx(&mut tx).await? > 0) {
        return Ok(None);
    }
    let (record, created) = match existing {
        Some(record) => (record, false),
        None => (create_tenant_and_owner(&mut tx, now).await?, true),
    };
    let record = if !created && store::api_key_is_active(&mut tx, record.api_key_id).await? {
        record
    } else {
        replace_key(&mut tx, secret, record, created, now).await?
    };
    tx.commit().await?;
    output(secret, auth, record, created, now).map(Some)
}

/// The first tenant and its Owner, with ids for all three records.
async fn create_tenant_and_owner(
    tx: &mut Tx,
    now: DateTime<Utc>,
) -> Result<BootstrapRecord, BootstrapError> {
    let record = BootstrapRecord {
        tenant_id: TenantId::new_random(),
        user_id: UserId::new_random(),
        api_key_id: ApiKeyId::new_random(),
    };
    let tenant = Tenant {
        id: record.tenant_id,
        name: BOOTSTRAP_TENANT_NAME.into(),
        created_at: now,
        updated_at: now,
    };
    let user = User {
        id: record.user_id,
        name: BOOTSTRAP_USER_NAME.into(),
        email: None,
        disabled_at: None,
        created_at: now,
        updated_at: now,
    };
    store::insert_tenant(tx, &tenant).await?;
    store::insert_user(tx, &user).await?;
    store::insert_member(tx, tenant.id, user.id, TenantRole::Owner, now).await?;
    Ok(record)
}

/// Stores the bootstrap key: the record's own id on first creation, a fresh one when the key
/// was revoked.
async fn replace_key(
    tx: &mut Tx,
    secret: &SigningSecret,
    record: BootstrapRecord,
    created: bool,
    now: DateTime<Utc>,
) -> Result<BootstrapRecord, BootstrapError> {
    let record = BootstrapRecord {
        api_key_id: if created {
            record.api_key_id
        } else {
            ApiKeyId::new_random()
        },
        ..record
    };
    let key = ApiKey {
        id: record.api_key_id,
        tenant_id: record.tenant_id,
        name: BOOTSTRAP_KEY_NAME.into(),
        role: TenantRole::Owner,
        created_at: now,
        created_by: Some(record.user_id.as_uuid()),
        revoked_at: None,
    };
    let key_secret = derive_bootstrap_key(secret, key.id);
    store::insert_api_key(tx, &key, &key_secret.hash()).await?;
    store::upsert_bootstrap(tx, record, now).await?;
    Ok(record)
}

/// What the bootstrap prints: the ids, the key and fresh tokens.
fn output(
    secret: &SigningSecret,
    auth: &AuthConfig,
    record: BootstrapRecord,
    created: bool,
    now: DateTime<Utc>,
) -> Result<BootstrapOutput, BootstrapError> {
    let token = |roles: Vec<String>, scopes: Vec<String>| {
        issue_token(
            secret,
            &auth.issuer,
            &auth.audience,
            now,
            &TokenRequest {
                subject: record.user_id.as_uuid(),
                tenant_id: Some(record.tenant_id),
                roles,
                scopes,
                client_id: Some(BOOTSTRAP_CLIENT_ID.into()),
                name: Some(BOOTSTRAP_USER_NAME.into()),
                email: None,
                ttl: chrono::TimeDelta::seconds(auth.bootstrap_token_ttl_seconds),
            },
        )
    };
    Ok(BootstrapOutput {
        tenant_id: record.tenant_id,
        user_id: record.user_id,
        api_key: derive_bootstrap_key(secret, record.api_key_id).reveal(),
        back_office_token: token(
            vec![PlatformRole::BackOffice.as_str().into()],
            PLATFORM_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
        )?,
        user_token: token(Vec::new(), Vec::new())?,
        created,
    })
}

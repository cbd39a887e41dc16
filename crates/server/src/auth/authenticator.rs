//! Turns request headers into a [`Principal`].
//!
//! A bearer token wins when both credentials are sent (docs/authentication.md#credentials).
//! Times (`exp`, `nbf`) are checked against Basin's [`Clock`] rather than by the JWT library, so
//! tests can move time and every node judges expiry the same way.

use std::sync::Arc;

use axum::http::{HeaderMap, header};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use crate::auth::TenantRole;
use crate::auth::token::TokenClaims;
use crate::auth::{ApiKeySecret, JwksVerifier, Principal, PrincipalType, SigningSecret};
use crate::clock::Clock;
use crate::config::AuthConfig;
use crate::error::ApiError;
use crate::ids::{ApiKeyId, TenantId, UserId};
use crate::limits::{BEARER_TOKEN_BYTES_MAX, TOKEN_LEEWAY_SECONDS};

/// Header carrying an API key.
pub(crate) const API_KEY_HEADER: &str = "svc-open-api-key";

/// Why a request is not authenticated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum AuthError {
    /// No credentials.
    #[error("credentials missing")]
    Missing,
    /// Malformed, wrongly signed, unknown or wrong issuer/audience.
    #[error("{0}")]
    Invalid(String),
    /// Expired or not yet valid.
    #[error("{0}")]
    Expired(String),
    /// Revoked key or disabled user.
    #[error("{0}")]
    Revoked(String),
    /// The credential could not be checked (database or identity provider down).
    #[error("authentication unavailable")]
    Unavailable(#[source] anyhow::Error),
}

impl AuthError {
    pub(crate) fn from_jwt(error: jsonwebtoken::errors::Error) -> Self {
        let detail = match error.kind() {
            ErrorKind::InvalidSignature => "the token signature is invalid",
            ErrorKind::InvalidIssuer => "the token was issued by an issuer Basin does not trust",
            ErrorKind::InvalidAudience => "the token is not meant for Basin (audience)",
            ErrorKind::InvalidAlgorithm => "the token algorithm does not match its key",
            ErrorKind::ExpiredSignature => return Self::Expired("the token has expired".into()),
            ErrorKind::ImmatureSignature => {
                return Self::Expired("the token is not valid yet".into());
            }
            _ => "the token is malformed",
        };
        Self::Invalid(detail.into())
    }
}

impl From<AuthError> for ApiError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::Missing => Self::CredentialsMissing,
            AuthError::Invalid(detail) => Self::CredentialsInvalid(detail),
            AuthError::Expired(detail) => Self::CredentialsExpired(detail),
            AuthError::Revoked(detail) => Self::CredentialsRevoked(detail),
            AuthError::Unavailable(cause) => Self::Unavailable(cause),
        }
    }
}

/// An API key as authentication needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRecord {
    /// Id, the principal id of calls made with the key.
    pub(crate) id: ApiKeyId,
    /// Its tenant.
    pub(crate) tenant_id: TenantId,
    /// Label.
    pub(crate) name: String,
    /// The role it acts with.
    pub(crate) role: TenantRole,
    /// Revoked keys authenticate nothing.
    pub(crate) revoked: bool,
}

/// A user as authentication needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserRecord {
    /// Display name.
    pub(crate) name: String,
    /// E-mail, when set.
    pub(crate) email: Option<String>,
    /// Disabled users authenticate nothing.
    pub(crate) disabled: bool,
}

/// What authentication needs to know of stored identities. The identity area provides it, so
/// that authentication depends on no area and the areas depend on authentication.
#[async_trait::async_trait]
pub(crate) trait IdentityDirectory: Send + Sync + std::fmt::Debug {
    /// The API key whose secret hashes to `hash`.
    async fn api_key_by_hash(&self, hash: &[u8]) -> anyhow::Result<Option<KeyRecord>>;
    /// The user with this id, if Basin knows it.
    async fn user(&self, id: UserId) -> anyhow::Result<Option<UserRecord>>;
    /// The tenants the user belongs to, with its role in each.
    async fn memberships(&self, id: UserId) -> anyhow::Result<Vec<(TenantId, TenantRole)>>;
}

/// Authenticates requests.
pub(crate) struct Authenticator {
    hs_key: DecodingKey,
    hs_validation: Validation,
    oidc: Option<JwksVerifier>,
    tenant_claim: String,
    clock: Arc<dyn Clock>,
    directory: Arc<dyn IdentityDirectory>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("oidc", &self.oidc)
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// An authenticator for Basin's own HS256 tokens and, when configured, an OIDC provider.
    pub(crate) fn new(
        secret: &SigningSecret,
        config: &AuthConfig,
        clock: Arc<dyn Clock>,
        directory: Arc<dyn IdentityDirectory>,
    ) -> Result<Self, String> {
        let mut hs_validation = Validation::new(Algorithm::HS256);
        hs_validation.set_issuer(&[&config.issuer]);
        hs_validation.set_audience(&[&config.audience]);
        hs_validation.validate_exp = false;
        hs_validation.required_spec_claims.clear();
        let oidc = config.oidc.as_ref().map(JwksVerifier::new).transpose()?;
        Ok(Self {
            hs_key: DecodingKey::from_secret(secret.bytes()),
            hs_validation,
            oidc,
            tenant_claim: config.tenant_claim.clone(),
            clock,
            directory,
        })
    }

    /// Authenticates the credentials in `headers`.
    pub(crate) async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, AuthError> {
        if let Some(authorization) = headers.get(header::AUTHORIZATION) {
            let raw = authorization
                .to_str()
                .map_err(|_| AuthError::Invalid("the Authorization header is not text".into()))?;
            let (scheme, token) = raw.trim().split_once(' ').unwrap_or((raw.trim(), ""));
            if !scheme.eq_ignore_ascii_case("bearer") {
                return Err(AuthError::Invalid(
                    "only the Bearer authorization scheme is supported".into(),
                ));
            }
            return self.authenticate_bearer(token.trim()).await;
        }
        if let Some(key) = headers.get(API_KEY_HEADER) {
            let raw = key.to_str().unwrap_or("");
            return self.authenticate_api_key(raw).await;
        }
        Err(AuthError::Missing)
    }

    async fn authenticate_api_key(&self, raw: &str) -> Result<Principal, AuthError> {
        let secret = ApiKeySecret::parse(raw)
            .ok_or_else(|| AuthError::Invalid("the API key is malformed".into()))?;
        let key = self
            .directory
            .api_key_by_hash(&secret.hash())
            .await
            .map_err(AuthError::Unavailable)?
            .ok_or_else(|| AuthError::Invalid("the API key is not known".into()))?;
        if key.revoked {
            return Err(AuthError::Revoked("the API key has been revoked".into()));
        }
        Ok(Principal {
            id: key.id.as_uuid(),
            principal_type: PrincipalType::OpenAPIAccount,
            name: Some(key.name),
            email: None,
            tenant_id: Some(key.tenant_id),
            tenant_role: Some(key.role),
            platform_roles: Default::default(),
            scopes: Default::default(),
            client_id: None,
        })
    }

    async fn authenticate_bearer(&self, token: &str) -> Result<Principal, AuthError> {
        if token.is_empty() {
            return Err(AuthError::Invalid("the bearer token is empty".into()));
        }
        if token.len() > BEARER_TOKEN_BYTES_MAX {
            return Err(AuthError::Invalid("the bearer token is too large".into()));
        }
        let header = jsonwebtoken::decode_header(token).map_err(AuthError::from_jwt)?;
        let payload: Map<String, Value> = match header.alg {
            Algorithm::HS256 => jsonwebtoken::decode(token, &self.hs_key, &self.hs_validation)
                .map(|data| data.claims)
                .map_err(AuthError::from_jwt)?,
            _ => match &self.oidc {
                Some(oidc) => oidc.verify(token, &header).await?,
                None => {
                    return Err(AuthError::Invalid(format!(
                        "tokens signed with {:?} are not accepted: no identity provider is configured",
                        header.alg
                    )));
                }
            },
        };
        let claims = TokenClaims::from_payload(&payload, &self.tenant_claim)
            .map_err(|error| AuthError::Invalid(error.0))?;
        self.check_times(&claims)?;
        self.principal_for(claims).await
    }

    fn check_times(&self, claims: &TokenClaims) -> Result<(), AuthError> {
        let now = self.clock.now().timestamp();
        let expires_at = claims
            .expires_at
            .ok_or_else(|| AuthError::Invalid("the token has no exp claim".into()))?;
        if now > expires_at.saturating_add(TOKEN_LEEWAY_SECONDS) {
            return Err(AuthError::Expired("the token has expired".into()));
        }
        if let Some(not_before) = claims.not_before
            && now < not_before.saturating_sub(TOKEN_LEEWAY_SECONDS)
        {
            return Err(AuthError::Expired("the token is not valid yet".into()));
        }
        Ok(())
    }

    async fn principal_for(&self, claims: TokenClaims) -> Result<Principal, AuthError> {
        let subject = claims
            .subject
            .ok_or_else(|| AuthError::Invalid("the token has no sub claim".into()))?;
        let user_id = UserId::from_uuid(subject);
        let user = self
            .directory
            .user(user_id)
            .await
            .map_err(AuthError::Unavailable)?;
        if user.as_ref().is_some_and(|user| user.disabled) {
            return Err(AuthError::Revoked("the user has been disabled".into()));
        }
        let memberships = self
            .directory
            .memberships(user_id)
            .await
            .map_err(AuthError::Unavailable)?;
        let (tenant_id, tenant_role) = match claims.tenant_id {
            Some(tenant) => (
                Some(tenant),
                memberships
                    .iter()
                    .find(|(id, _)| *id == tenant)
                    .map(|(_, role)| *role),
            ),
            None => match memberships.as_slice() {
                [(tenant, role)] => (Some(*tenant), Some(*role)),
                _ => (None, None),
            },
        };
        let (name, email) = match user {
            Some(user) => (Some(user.name), user.email.or(claims.email)),
            None => (claims.name, claims.email),
        };
        Ok(Principal {
            id: subject,
            principal_type: PrincipalType::UserIdentity,
            name,
            email,
            tenant_id,
            tenant_role,
            platform_roles: claims.platform_roles,
            scopes: claims.scopes,
            client_id: claims.client_id,
        })
    }
}

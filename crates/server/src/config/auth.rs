//! `[auth]`: the tokens Basin signs and accepts, and an optional OpenID Connect provider.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::secrets::mask_secret;
use super::values::{AtLeast, as_millis, as_seconds};
use crate::limits;

/// Authentication settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// HS256 secret for tokens Basin signs (`basin admin token`) and accepts. When absent, a
    /// random secret is generated on first start and kept in `data_dir/jwt-secret`. Several
    /// replicas must share one: set it explicitly there.
    #[serde(serialize_with = "mask_secret")]
    pub jwt_secret: Option<SecretString>,
    /// `iss` of tokens Basin signs, required on HS256 tokens it accepts.
    pub issuer: String,
    /// `aud` of tokens Basin signs, required on HS256 tokens it accepts.
    pub audience: String,
    /// Claim that carries the tenant id (`tenant_id` and `tenantId` are always accepted).
    pub tenant_claim: String,
    /// Lifetime of tokens printed by `basin admin bootstrap`, in seconds.
    pub bootstrap_token_ttl_seconds: i64,
    /// An OpenID Connect provider whose RS256/ES256 tokens are accepted (Keycloak, ...).
    pub oidc: Option<OidcConfig>,
    /// On SQLite, how often (`access_refresh_ms`, in milliseconds) a serving process reads
    /// whether another process changed identities, memberships, projects or datasets, which
    /// ends what it kept in memory of authentication and access checks (PostgreSQL tells at
    /// once). Zero keeps nothing: every request reads the store.
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<0>::millis"
    )]
    pub access_refresh_ms: Duration,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            jwt_secret: None,
            issuer: "basin".into(),
            audience: "basin".into(),
            tenant_claim: "tenant_id".into(),
            bootstrap_token_ttl_seconds: 24 * 3600,
            oidc: None,
            access_refresh_ms: Duration::from_millis(250),
        }
    }
}

impl AuthConfig {
    /// An OIDC provider's keys must come from somewhere.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(oidc) = &self.oidc
            && oidc.jwks_url.is_none()
            && oidc.jwks_file.is_none()
        {
            return Err(ConfigError::Inconsistent(
                "auth.oidc needs jwks_url or jwks_file".into(),
            ));
        }
        Ok(())
    }
}

/// An external identity provider.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// Required `iss`.
    pub issuer: String,
    /// Required `aud` (one of).
    pub audience: Vec<String>,
    /// Where to fetch the JWKS (`https://.../protocol/openid-connect/certs`).
    pub jwks_url: Option<String>,
    /// A JWKS file, instead of a URL.
    pub jwks_file: Option<PathBuf>,
    /// How long a fetched JWKS is used before it is fetched again (`jwks_cache_ttl_seconds`,
    /// in seconds).
    #[serde(
        default = "default_jwks_cache_ttl",
        serialize_with = "as_seconds",
        deserialize_with = "AtLeast::<0>::seconds"
    )]
    pub jwks_cache_ttl_seconds: Duration,
}

/// The one default of `[auth.oidc]`: the section itself has required keys, so it has no
/// `Default`.
fn default_jwks_cache_ttl() -> Duration {
    Duration::from_secs(limits::JWKS_CACHE_TTL_SECONDS)
}

//! Verification of RS256/ES256 tokens from an OpenID Connect provider (Keycloak, Entra ID,
//! ...) against its JWKS, fetched from a URL or read from a file and cached.
//!
//! The cache is refreshed after its TTL, and early when a token names an unknown `kid` (key
//! rotation), but at most once per [`JWKS_REFRESH_INTERVAL_MIN_SECONDS`] so that forged tokens
//! cannot turn Basin into a load generator against the provider. When a refresh fails, the
//! keys already known keep working.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde_json::{Map, Value};
use tokio::sync::{Mutex, RwLock};

use crate::auth::AuthError;
use crate::config::OidcConfig;
use crate::limits::{JWKS_BYTES_MAX, JWKS_FETCH_TIMEOUT_MS, JWKS_REFRESH_INTERVAL_MIN_SECONDS};

/// Algorithms accepted from the identity provider.
pub(super) const OIDC_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::PS256,
];

#[derive(Debug)]
enum JwksSource {
    Url(String),
    File(PathBuf),
}

#[derive(Debug)]
struct CachedJwks {
    keys: JwkSet,
    fetched_at: Instant,
}

/// Verifies tokens signed by the configured provider.
#[derive(Debug)]
pub(crate) struct JwksVerifier {
    issuer: String,
    audience: Vec<String>,
    source: JwksSource,
    ttl: Duration,
    cache: RwLock<Option<CachedJwks>>,
    last_forced_refresh: Mutex<Option<Instant>>,
    client: reqwest::Client,
}

impl JwksVerifier {
    /// A verifier for `config`; nothing is fetched until the first token arrives.
    pub(crate) fn new(config: &OidcConfig) -> Result<Self, String> {
        let source = match (&config.jwks_url, &config.jwks_file) {
            (Some(url), _) => JwksSource::Url(url.clone()),
            (None, Some(file)) => JwksSource::File(file.clone()),
            (None, None) => return Err("auth.oidc needs jwks_url or jwks_file".into()),
        };
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(JWKS_FETCH_TIMEOUT_MS))
            .build()
            .map_err(|error| format!("cannot build HTTP client: {error}"))?;
        Ok(Self {
            issuer: config.issuer.clone(),
            audience: config.audience.clone(),
            source,
            ttl: config.jwks_cache_ttl_seconds,
            cache: RwLock::new(None),
            last_forced_refresh: Mutex::new(None),
            client,
        })
    }

    /// Verifies the signature, issuer and audience of `token` and returns its payload.
    /// Expiry is checked by the caller against Basin's clock.
    pub(crate) async fn verify(
        &self,
        token: &str,
        header: &Header,
    ) -> Result<Map<String, Value>, AuthError> {
        if !OIDC_ALGORITHMS.contains(&header.alg) {
            return Err(AuthError::Invalid(format!(
                "tokens signed with {:?} are not accepted",
                header.alg
            )));
        }
        let key = match self.find_key(header.kid.as_deref()).await? {
            Some(key) => key,
            None => {
                self.refresh_for_unknown_key().await?;
                self.find_key(header.kid.as_deref()).await?.ok_or_else(|| {
                    AuthError::Invalid("the token's signing key is not known".into())
                })?
            }
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&self.audience);
        validation.validate_exp = false;
        validation.required_spec_claims.clear();
        jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(AuthError::from_jwt)
    }

    async fn find_key(&self, kid: Option<&str>) -> Result<Option<DecodingKey>, AuthError> {
        let stale = match &*self.cache.read().await {
            Some(cached) => cached.fetched_at.elapsed() > self.ttl,
            None => true,
        };
        if stale {
            self.refresh().await?;
        }
        let cache = self.cache.read().await;
        let Some(cached) = cache.as_ref() else {
            return Ok(None);
        };
        let jwk = match kid {
            Some(kid) => cached.keys.find(kid),
            None if cached.keys.keys.len() == 1 => cached.keys.keys.first(),
            None => None,
        };
        Ok(jwk.and_then(|jwk| DecodingKey::from_jwk(jwk).ok()))
    }

    async fn refresh_for_unknown_key(&self) -> Result<(), AuthError> {
        let mut last = self.last_forced_refresh.lock().await;
        let interval = Duration::from_secs(JWKS_REFRESH_INTERVAL_MIN_SECONDS);
        if last.is_some_and(|at| at.elapsed() < interval) {
            return Ok(());
        }
        *last = Some(Instant::now());
        drop(last);
        self.refresh().await
    }

    async fn refresh(&self) -> Result<(), AuthError> {
        match self.fetch().await {
            Ok(keys) => {
                *self.cache.write().await = Some(CachedJwks {
                    keys,
                    fetched_at: Instant::now(),
                });
                Ok(())
            }
            Err(error) => {
                let mut cache = self.cache.write().await;
                match cache.as_mut() {
                    Some(cached) => {
                        tracing::warn!(
                            error,
                            "JWKS refresh failed; keeping the keys already known"
                        );
                        cached.fetched_at = Instant::now();
                        Ok(())
                    }
                    None => Err(AuthError::Unavailable(anyhow::anyhow!(
                        "identity provider keys unavailable: {error}"
                    ))),
                }
            }
        }
    }

    async fn fetch(&self) -> Result<JwkSet, String> {
        let bytes = match &self.source {
            JwksSource::File(path) => tokio::fs::read(path)
                .await
                .map_err(|error| format!("cannot read {}: {error}", path.display()))?,
            JwksSource::Url(url) => self.download(url).await?,
        };
        if bytes.len() > JWKS_BYTES_MAX {
            return Err(format!("JWKS larger than {JWKS_BYTES_MAX} bytes"));
        }
        serde_json::from_slice(&bytes).map_err(|error| format!("invalid JWKS: {error}"))
    }

    async fn download(&self, url: &str) -> Result<Vec<u8>, String> {
        let mut response = self
            .client
            .get(url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|error| format!("cannot fetch JWKS: {error}"))?;
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| format!("cannot fetch JWKS: {error}"))?
        {
            if bytes.len().saturating_add(chunk.len()) > JWKS_BYTES_MAX {
                return Err(format!("JWKS larger than {JWKS_BYTES_MAX} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

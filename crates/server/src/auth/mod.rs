//! Authentication (spec part 5): who is calling, from an API key (`svc-open-api-key`) or a
//! bearer JWT (HS256 with Basin's own secret, or RS256/ES256 from an OIDC provider's JWKS).
//!
//! [`Principal`] is the axum extractor every protected handler takes; [`Authenticator`] does
//! the work. Credentials that are missing, malformed, wrongly signed, expired or revoked are
//! 401; what a valid principal may do is decided by each area's service (403).

mod api_key;
mod authenticator;
mod jwks;
mod principal;
mod secret;
mod token;

pub use api_key::{ApiKeySecret, derive_bootstrap_key};
pub use authenticator::{API_KEY_HEADER, AuthError, Authenticator};
pub use jwks::JwksVerifier;
pub use principal::{PlatformRole, Principal, PrincipalType};
pub use secret::{SigningSecret, load_or_create_secret};
pub use token::{TokenClaims, TokenRequest, issue_token, parse_ttl};

/// Scopes of the platform named by the interface; bootstrap tokens carry them all.
pub const PLATFORM_SCOPES: &[&str] = &[
    "platform_iam_featurestatus_read",
    "platform_iam_featurestatus_readwrite",
];

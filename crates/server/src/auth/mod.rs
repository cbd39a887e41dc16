//! Authentication (docs/authentication.md): who is calling, from an API key
//! (`svc-open-api-key`) or a bearer JWT (HS256 with Basin's own secret, or RS256/ES256 from an
//! OIDC provider's JWKS).
//!
//! [`Principal`] is the axum extractor every protected handler takes; [`Authenticator`] does
//! the work. Credentials that are missing, malformed, wrongly signed, expired or revoked are
//! 401; what a valid principal may do is decided by each area's service (403).

mod api_key;
mod authenticator;
mod cached_directory;
mod caller;
mod jwks;
mod principal;
mod secret;
mod token;

pub(crate) use api_key::{ApiKeySecret, derive_bootstrap_key};
pub(crate) use authenticator::{
    API_KEY_HEADER, AuthError, Authenticator, IdentityDirectory, KeyRecord, UserRecord,
};
pub(crate) use cached_directory::CachedDirectory;
pub(crate) use caller::{Caller, TenantStanding};
pub(crate) use jwks::JwksVerifier;
pub(crate) use principal::{PlatformRole, Principal, PrincipalType, TenantRole};
pub use secret::SigningSecret;
pub(crate) use secret::load_or_create_secret;
pub(crate) use token::parse_ttl;
pub use token::{TokenRequest, issue_token};

/// The scope that lets a service reserve, spend and release any tenant's credits, and read
/// tenant balances (docs/credits.md).
pub(crate) const SPEND_SCOPE: &str = "platform_iam_credit_spend";

/// The scope that lets a caller read feature messages.
pub(crate) const FEATURE_STATUS_READ_SCOPE: &str = "platform_iam_featurestatus_read";

/// The scope that lets a BackOffice caller write feature messages (and read them).
pub(crate) const FEATURE_STATUS_READWRITE_SCOPE: &str = "platform_iam_featurestatus_readwrite";

/// Scopes of the platform named by the interface; bootstrap tokens carry them all.
pub(crate) const PLATFORM_SCOPES: &[&str] = &[
    FEATURE_STATUS_READ_SCOPE,
    FEATURE_STATUS_READWRITE_SCOPE,
    SPEND_SCOPE,
];

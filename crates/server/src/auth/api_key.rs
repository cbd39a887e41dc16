//! API keys: random UUIDs shown once and stored as a SHA-256 hash. A key carries 122 random
//! bits, so a fast hash is enough: nobody can guess a preimage, and lookups stay one indexed
//! read per request.

use aws_lc_rs::{digest, hmac};
use uuid::Uuid;

use crate::auth::SigningSecret;
use crate::ids::ApiKeyId;

/// The secret value of an API key, as sent in `svc-open-api-key`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ApiKeySecret(Uuid);

impl std::fmt::Debug for ApiKeySecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKeySecret(***)")
    }
}

impl ApiKeySecret {
    /// A new random key.
    pub(crate) fn generate() -> Self {
        Self(Uuid::new_v4())
    }

    /// Parses a key as sent by a client.
    pub(crate) fn parse(raw: &str) -> Option<Self> {
        Uuid::parse_str(raw.trim()).ok().map(Self)
    }

    /// The hash stored in the database.
    pub(crate) fn hash(&self) -> Vec<u8> {
        digest::digest(&digest::SHA256, self.0.as_bytes())
            .as_ref()
            .to_vec()
    }

    /// The key as shown to its owner (once).
    pub(crate) fn reveal(&self) -> String {
        self.0.to_string()
    }
}

/// The bootstrap API key of record `id`, derived from the signing secret so that
/// `basin admin bootstrap` can print the same key again without storing it in clear.
pub(crate) fn derive_bootstrap_key(secret: &SigningSecret, id: ApiKeyId) -> ApiKeySecret {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.bytes());
    let mut message = b"basin bootstrap api key ".to_vec();
    message.extend_from_slice(id.as_uuid().as_bytes());
    let tag = hmac::sign(&key, &message);
    let mut bytes = [0u8; 16];
    for (target, source) in bytes.iter_mut().zip(tag.as_ref()) {
        *target = *source;
    }
    ApiKeySecret(uuid::Builder::from_random_bytes(bytes).into_uuid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::SecretString;

    #[test]
    fn keys_hash_the_same_whatever_the_letter_case() {
        let key = ApiKeySecret::generate();
        let upper = ApiKeySecret::parse(&key.reveal().to_uppercase()).unwrap();
        assert_eq!(key.hash(), upper.hash());
        assert!(ApiKeySecret::parse("not-a-key").is_none());
        assert_eq!(format!("{key:?}"), "ApiKeySecret(***)");
    }

    #[test]
    fn bootstrap_keys_are_stable_per_record_and_secret() {
        let secret = SigningSecret::new(SecretString::from("x".repeat(40)));
        let other = SigningSecret::new(SecretString::from("y".repeat(40)));
        let id = ApiKeyId::new_random();
        assert_eq!(
            derive_bootstrap_key(&secret, id),
            derive_bootstrap_key(&secret, id)
        );
        assert_ne!(
            derive_bootstrap_key(&secret, id),
            derive_bootstrap_key(&other, id)
        );
        assert_ne!(
            derive_bootstrap_key(&secret, id),
            derive_bootstrap_key(&secret, ApiKeyId::new_random())
        );
    }
}

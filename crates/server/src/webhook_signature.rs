//! Standard Webhooks signatures: `webhook-signature: v1,<base64 HMAC-SHA256>` over
//! `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes of a `whsec_` secret.
//!
//! Kept apart from the HTTP sink so that the scheme is checked against a vector computed
//! elsewhere (the tests below) and the receiver example in docs/events.md follows it exactly,
//! and below every other module (ARCHITECTURE.md), so that the configuration can check a
//! webhook's secret when it loads without depending on the events area.

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// Prefix of Standard Webhooks secrets.
const SECRET_PREFIX: &str = "whsec_";
/// Fewer key bytes than this make a guessable HMAC key; the specification recommends 24 to 64.
const SECRET_BYTES_MIN: usize = 16;
/// More than this is a mistake (HMAC-SHA256 hashes longer keys down anyway).
const SECRET_BYTES_MAX: usize = 128;

/// A webhook signing key, parsed from its `whsec_<base64>` form.
#[derive(Clone)]
pub(crate) struct WebhookSecret {
    key: hmac::Key,
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("WebhookSecret(***)")
    }
}

/// Why a configured secret is unusable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum SecretError {
    /// Not `whsec_...`.
    #[error("the secret must start with 'whsec_'")]
    Prefix,
    /// The part after the prefix is not base64.
    #[error("the secret after 'whsec_' must be base64")]
    Base64,
    /// Too short or too long.
    #[error("the secret must hold {SECRET_BYTES_MIN} to {SECRET_BYTES_MAX} bytes")]
    Length,
}

impl WebhookSecret {
    /// Parses `whsec_<base64>`.
    pub(crate) fn parse(raw: &str) -> Result<Self, SecretError> {
        let encoded = raw.strip_prefix(SECRET_PREFIX).ok_or(SecretError::Prefix)?;
        let bytes = STANDARD.decode(encoded).map_err(|_| SecretError::Base64)?;
        if !(SECRET_BYTES_MIN..=SECRET_BYTES_MAX).contains(&bytes.len()) {
            return Err(SecretError::Length);
        }
        Ok(Self {
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes),
        })
    }

    /// The `webhook-signature` header value for a message.
    pub(crate) fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut context = hmac::Context::with_key(&self.key);
        context.update(id.as_bytes());
        context.update(b".");
        context.update(timestamp.to_string().as_bytes());
        context.update(b".");
        context.update(body);
        format!("v1,{}", STANDARD.encode(context.sign().as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Computed with Python's standard library, independently of this code:
    /// ```python
    /// import hmac, hashlib, base64
    /// key = base64.b64decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    /// msg = b'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}'
    /// base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest())
    /// # b'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
    /// ```
    #[test]
    fn signs_as_the_standard_webhooks_scheme_does() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let signature = secret.sign(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_secret_without_prefix_or_not_base64_or_too_short_is_refused() {
        assert_eq!(
            WebhookSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_err(),
            SecretError::Prefix
        );
        assert_eq!(
            WebhookSecret::parse("whsec_not base64!").unwrap_err(),
            SecretError::Base64
        );
        // 15 bytes, one short of the minimum; 16 bytes is accepted.
        assert_eq!(
            WebhookSecret::parse("whsec_AAAAAAAAAAAAAAAAAAAA").unwrap_err(),
            SecretError::Length
        );
        assert!(WebhookSecret::parse("whsec_AAAAAAAAAAAAAAAAAAAAAA==").is_ok());
    }
}

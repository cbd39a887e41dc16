//! Signed blob URLs: shared-access-signature query parameters in Azure's shape, signed with a
//! key only Basin holds.
//!
//! A URL carries `sv` (signature version), `se` (expiry, RFC 3339 UTC), `sr=b` (a blob),
//! `sp` (permissions, a subset of `racw` in that order) and `sig`: base64url of
//! HMAC-SHA256 over those values and the canonical blob path `/basin/<container>/<name>`.
//! The key is HMAC(signing secret, "basin blob sas"), so it differs from the token key and
//! rotating the secret revokes every URL. Azure SDKs keep exactly these parameter names when
//! they re-parse a SAS URL, and base64url survives their re-quoting, which `+` would not.
//!
//! Verification checks the MAC first (in constant time), so an edited expiry or permission is
//! a bad signature; then expiry against the app clock; then that the permissions allow the
//! operation. Nothing is touched before all three pass.

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, SecondsFormat, Utc};

use crate::ACCOUNT;
use crate::limits::SAS_QUERY_BYTES_MAX;
use crate::path::BlobPath;

/// The `sv` Basin signs and accepts; a new signing scheme gets a new version.
pub const SAS_VERSION: &str = "2025-01-05";
/// The only `sr` (signed resource) Basin issues: one blob.
const SAS_RESOURCE_BLOB: &str = "b";
/// Label deriving the blob key from the signing secret.
const KEY_LABEL: &[u8] = b"basin blob sas";

/// What a signed URL allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Permissions {
    bits: u8,
}

impl Permissions {
    /// `r`: GET and HEAD.
    pub const READ: Self = Self { bits: 1 };
    /// `a`: stage blocks.
    pub const ADD: Self = Self { bits: 2 };
    /// `c`: create a blob that does not exist yet.
    pub const CREATE: Self = Self { bits: 4 };
    /// `w`: create or replace a blob.
    pub const WRITE: Self = Self { bits: 8 };
    /// Every letter in Azure's canonical order.
    const LETTERS: [(char, Self); 4] = [
        ('r', Self::READ),
        ('a', Self::ADD),
        ('c', Self::CREATE),
        ('w', Self::WRITE),
    ];

    /// The union of two sets.
    pub const fn union(self, other: Self) -> Self {
        Self {
            bits: self.bits | other.bits,
        }
    }

    /// Holds every permission of `other`.
    pub fn contains(self, other: Self) -> bool {
        self.bits & other.bits == other.bits
    }

    /// Holds at least one permission of `other`.
    pub fn intersects(self, other: Self) -> bool {
        self.bits & other.bits != 0
    }

    /// Parses `sp`: known letters, each at most once, in canonical order.
    pub fn parse(raw: &str) -> Option<Self> {
        let mut letters = Self::LETTERS.iter();
        let mut permissions = Self::default();
        for c in raw.chars() {
            let (_, permission) = letters.find(|(letter, _)| *letter == c)?;
            permissions = permissions.union(*permission);
        }
        (permissions.bits != 0).then_some(permissions)
    }

    /// The `sp` form.
    pub fn as_sp(self) -> String {
        Self::LETTERS
            .iter()
            .filter(|(_, permission)| self.contains(*permission))
            .map(|(letter, _)| *letter)
            .collect()
    }
}

/// Why a signed URL was refused. Every variant is a 403 and touches nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SasError {
    /// A signature parameter is missing, repeated or the query is too long.
    #[error("the URL carries no complete signature (sv, se, sr, sp, sig)")]
    Missing,
    /// The signature does not match the path and parameters.
    #[error("the signature does not match this URL")]
    Signature,
    /// The URL has expired.
    #[error("the signed URL has expired")]
    Expired,
    /// The URL is valid but does not allow this operation.
    #[error("the signed URL does not allow this operation")]
    Permission,
}

/// The signature parameters of a request's query string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SasParams {
    sv: Option<String>,
    se: Option<String>,
    sr: Option<String>,
    sp: Option<String>,
    sig: Option<String>,
}

impl SasParams {
    /// Reads `sv`, `se`, `sr`, `sp` and `sig` from percent-decoded query pairs; other keys
    /// are ignored (clients add `comp`, `blockid`, `timeout`). A repeated key is refused so
    /// that what is verified is what is used.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, SasError> {
        let mut params = Self::default();
        for (key, value) in pairs {
            let slot = match key {
                "sv" => &mut params.sv,
                "se" => &mut params.se,
                "sr" => &mut params.sr,
                "sp" => &mut params.sp,
                "sig" => &mut params.sig,
                _ => continue,
            };
            if slot.replace(value.to_owned()).is_some() {
                return Err(SasError::Missing);
            }
        }
        Ok(params)
    }
}

/// Signs and verifies blob URLs. The key is shared: copying an HMAC key copies its hash state,
/// and extractors take a copy of the signer for every request.
#[derive(Clone)]
pub struct BlobSigner {
    key: std::sync::Arc<hmac::Key>,
}

impl std::fmt::Debug for BlobSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BlobSigner(***)")
    }
}

impl BlobSigner {
    /// A signer keyed from the deployment's signing secret (its raw bytes).
    pub fn new(secret: &[u8]) -> Self {
        let root = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let derived = hmac::sign(&root, KEY_LABEL);
        Self {
            key: std::sync::Arc::new(hmac::Key::new(hmac::HMAC_SHA256, derived.as_ref())),
        }
    }

    /// The query string (without `?`) granting `permissions` on `path` until `expiry`.
    pub fn sign(&self, path: &BlobPath, permissions: Permissions, expiry: DateTime<Utc>) -> String {
        let se = expiry.to_rfc3339_opts(SecondsFormat::Secs, true);
        let sp = permissions.as_sp();
        let signed = string_to_sign(SAS_VERSION, &se, SAS_RESOURCE_BLOB, &sp, path);
        let sig = URL_SAFE_NO_PAD.encode(hmac::sign(&self.key, signed.as_bytes()));
        form_urlencoded::Serializer::new(String::new())
            .append_pair("sv", SAS_VERSION)
            .append_pair("se", &se)
            .append_pair("sr", SAS_RESOURCE_BLOB)
            .append_pair("sp", &sp)
            .append_pair("sig", &sig)
            .finish()
    }

    /// Checks a raw query string against `path`; see [`BlobSigner::verify`].
    pub fn verify_query(
        &self,
        path: &BlobPath,
        query: Option<&str>,
        required: Permissions,
        now: DateTime<Utc>,
    ) -> Result<Permissions, SasError> {
        let query = query.unwrap_or("");
        if query.len() > SAS_QUERY_BYTES_MAX {
            return Err(SasError::Missing);
        }
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let params = SasParams::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        self.verify(path, &params, required, now)
    }

    /// Checks that `params` are a valid, unexpired signature for `path` that grants at least
    /// one of `required`; returns everything it grants.
    pub fn verify(
        &self,
        path: &BlobPath,
        params: &SasParams,
        required: Permissions,
        now: DateTime<Utc>,
    ) -> Result<Permissions, SasError> {
        let (Some(sv), Some(se), Some(sr), Some(sp), Some(sig)) = (
            params.sv.as_deref(),
            params.se.as_deref(),
            params.sr.as_deref(),
            params.sp.as_deref(),
            params.sig.as_deref(),
        ) else {
            return Err(SasError::Missing);
        };
        // Exactly the form Basin issues: unpadded base64url, no padding or other variant.
        let sig = URL_SAFE_NO_PAD
            .decode(sig)
            .map_err(|_| SasError::Signature)?;
        let signed = string_to_sign(sv, se, sr, sp, path);
        hmac::verify(&self.key, signed.as_bytes(), &sig).map_err(|_| SasError::Signature)?;
        // Only Basin's own values get here; a mismatch means an older scheme.
        if sv != SAS_VERSION || sr != SAS_RESOURCE_BLOB {
            return Err(SasError::Signature);
        }
        let expiry = DateTime::parse_from_rfc3339(se).map_err(|_| SasError::Signature)?;
        if now >= expiry.with_timezone(&Utc) {
            return Err(SasError::Expired);
        }
        let granted = Permissions::parse(sp).ok_or(SasError::Signature)?;
        if !granted.intersects(required) {
            return Err(SasError::Permission);
        }
        Ok(granted)
    }
}

fn string_to_sign(sv: &str, se: &str, sr: &str, sp: &str, path: &BlobPath) -> String {
    format!(
        "{sv}\n{se}\n{sr}\n{sp}\n/{ACCOUNT}/{}/{}",
        path.container(),
        path.name()
    )
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;

    fn signer(secret: &str) -> BlobSigner {
        BlobSigner::new(secret.as_bytes())
    }

    fn pairs(query: &str) -> Vec<(String, String)> {
        form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect()
    }

    fn with(query: &str, key: &str, value: &str) -> String {
        let mut out = form_urlencoded::Serializer::new(String::new());
        for (k, v) in pairs(query) {
            out.append_pair(&k, if k == key { value } else { &v });
        }
        out.finish()
    }

    const RW: Permissions = Permissions::READ.union(Permissions::WRITE);

    #[test]
    fn a_signed_query_verifies_until_it_expires() {
        let signer = signer("a secret of at least thirty-two bytes!!");
        let path = BlobPath::parse("uploads", "t/u/file.bin").unwrap();
        let now = Utc::now();
        let query = signer.sign(&path, RW, now + TimeDelta::hours(1));
        assert!(query.contains("sp=rw"), "{query}");
        let granted = signer
            .verify_query(&path, Some(&query), Permissions::READ, now)
            .unwrap();
        assert_eq!(granted, RW);
        let later = now + TimeDelta::hours(1);
        assert_eq!(
            signer.verify_query(&path, Some(&query), Permissions::READ, later),
            Err(SasError::Expired)
        );
    }

    #[test]
    fn tampering_with_any_part_breaks_the_signature() {
        let signer = signer("a secret of at least thirty-two bytes!!");
        let path = BlobPath::parse("uploads", "t/u/file.bin").unwrap();
        let now = Utc::now();
        let query = signer.sign(&path, Permissions::READ, now + TimeDelta::hours(1));
        let other_path = BlobPath::parse("uploads", "t/u/other.bin").unwrap();
        assert_eq!(
            signer.verify_query(&other_path, Some(&query), Permissions::READ, now),
            Err(SasError::Signature)
        );
        let later = (now + TimeDelta::days(30)).to_rfc3339_opts(SecondsFormat::Secs, true);
        for (key, value) in [
            ("sp", "racw"),
            ("se", later.as_str()),
            ("sv", "2020-01-01"),
            ("sr", "c"),
        ] {
            let tampered = with(&query, key, value);
            assert_eq!(
                signer.verify_query(&path, Some(&tampered), Permissions::READ, now),
                Err(SasError::Signature),
                "{key}"
            );
        }
        let bad_sig = with(&query, "sig", "AAAA");
        assert_eq!(
            signer.verify_query(&path, Some(&bad_sig), Permissions::READ, now),
            Err(SasError::Signature)
        );
        let other_key = self::signer("another secret of at least thirty-two bytes");
        assert_eq!(
            other_key.verify_query(&path, Some(&query), Permissions::READ, now),
            Err(SasError::Signature)
        );
    }

    #[test]
    fn missing_or_repeated_parameters_and_wrong_permissions_are_refused() {
        let signer = signer("a secret of at least thirty-two bytes!!");
        let path = BlobPath::parse("uploads", "x").unwrap();
        let now = Utc::now();
        let query = signer.sign(&path, Permissions::READ, now + TimeDelta::hours(1));
        assert_eq!(
            signer.verify_query(&path, None, Permissions::READ, now),
            Err(SasError::Missing)
        );
        let repeated = format!("{query}&sp=w");
        assert_eq!(
            signer.verify_query(&path, Some(&repeated), Permissions::READ, now),
            Err(SasError::Missing)
        );
        let write = Permissions::CREATE.union(Permissions::WRITE);
        assert_eq!(
            signer.verify_query(&path, Some(&query), write, now),
            Err(SasError::Permission)
        );
        let long = format!("{query}&pad={}", "x".repeat(SAS_QUERY_BYTES_MAX));
        assert_eq!(
            signer.verify_query(&path, Some(&long), Permissions::READ, now),
            Err(SasError::Missing)
        );
    }

    #[test]
    fn permissions_parse_in_canonical_order_only() {
        assert_eq!(
            Permissions::parse("racw").map(Permissions::as_sp),
            Some("racw".into())
        );
        assert_eq!(
            Permissions::parse("cw").map(Permissions::as_sp),
            Some("cw".into())
        );
        for bad in ["", "wr", "rr", "x", "rd"] {
            assert_eq!(Permissions::parse(bad), None, "{bad}");
        }
    }
}

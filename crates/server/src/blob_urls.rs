//! Blob URLs: minting signed upload and read URLs, and mapping a blob URL back to its path.
//!
//! URLs have the Azurite shape `<base>/basin/<container>/<blob name>?<signature>`, which Azure
//! SDKs parse for loopback hosts (account in the first path segment) and pass through
//! unchanged for other hosts. `<base>` is `public_url` when configured; otherwise
//! `http://<Host header>` of the request that asks for the URL, so the URL reaches Basin the
//! way the client did. Behind a TLS-terminating proxy or under a path prefix, set `public_url`.
//!
//! The signatures themselves are `basin_blob::signing`'s; this module adds what depends on the
//! deployment and the request (the public base, the signing secret, the lifetimes), and sits
//! below the areas so that every area can mint URLs without depending on the blob endpoint.

use axum::extract::{FromRef, FromRequestParts};
use axum::http::header::HOST;
use axum::http::request::Parts;
use chrono::{DateTime, TimeDelta, Utc};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::auth::SigningSecret;
use crate::error::ApiError;
use crate::public_base::PublicBase;
use basin_blob::ACCOUNT;
use basin_blob::path::{BlobPath, BlobPathError};
use basin_blob::signing::{BlobSigner, Permissions};

/// Characters left unencoded in blob name segments: RFC 3986 unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Permissions of upload URLs: create and write the blob, and read it back (clients check
/// what they uploaded; the holder wrote those bytes, so reading them reveals nothing).
pub(crate) const UPLOAD_PERMISSIONS: Permissions = Permissions::READ
    .union(Permissions::CREATE)
    .union(Permissions::WRITE);

/// Why a URL does not name a blob of this Basin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum BlobUrlError {
    /// Not an absolute URL.
    #[error("not an absolute URL")]
    NotAUrl,
    /// The path is not `/basin/<container>/<blob>` (under `public_url`'s path).
    #[error("the URL does not point at a Basin blob")]
    NotABlobUrl,
    /// The container or blob name is invalid.
    #[error(transparent)]
    Path(#[from] BlobPathError),
}

impl<S> FromRequestParts<S> for PublicBase
where
    BlobUrls: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(base) = BlobUrls::from_ref(state).public_url() {
            return Ok(base.clone());
        }
        parts
            .headers
            .get(HOST)
            .and_then(|value| value.to_str().ok())
            .and_then(PublicBase::from_host)
            .ok_or_else(|| {
                ApiError::field(
                    "host",
                    "the Host header is missing or malformed; send one or configure public_url",
                )
            })
    }
}

/// Mints signed blob URLs and maps URLs back to blob paths.
#[derive(Debug, Clone)]
pub(crate) struct BlobUrls {
    signer: BlobSigner,
    public_url: Option<PublicBase>,
    upload_ttl: TimeDelta,
    read_ttl: TimeDelta,
}

impl BlobUrls {
    /// URLs signed with a key derived from `secret`.
    pub(crate) fn new(
        secret: &SigningSecret,
        public_url: Option<PublicBase>,
        upload_ttl: TimeDelta,
        read_ttl: TimeDelta,
    ) -> Self {
        Self {
            signer: BlobSigner::new(secret.bytes()),
            public_url,
            upload_ttl,
            read_ttl,
        }
    }

    /// How long upload URLs stay valid by default.
    pub(crate) fn upload_ttl(&self) -> TimeDelta {
        self.upload_ttl
    }

    /// The signer, for the blob endpoint.
    pub(crate) fn signer(&self) -> &BlobSigner {
        &self.signer
    }

    /// The configured `public_url`, if any.
    pub(crate) fn public_url(&self) -> Option<&PublicBase> {
        self.public_url.as_ref()
    }

    /// A URL to upload `path` with (read, create, write), valid for `blob.upload_url_ttl_seconds`.
    pub(crate) fn upload_url(
        &self,
        base: &PublicBase,
        path: &BlobPath,
        now: DateTime<Utc>,
    ) -> String {
        self.signed_url(base, path, UPLOAD_PERMISSIONS, now + self.upload_ttl)
    }

    /// A URL to read `path` (GET with ranges, HEAD), valid for `blob.read_url_ttl_seconds`.
    pub(crate) fn read_url(
        &self,
        base: &PublicBase,
        path: &BlobPath,
        now: DateTime<Utc>,
    ) -> String {
        self.signed_url(base, path, Permissions::READ, now + self.read_ttl)
    }

    /// A URL granting `permissions` on `path` until `expiry`.
    pub(crate) fn signed_url(
        &self,
        base: &PublicBase,
        path: &BlobPath,
        permissions: Permissions,
        expiry: DateTime<Utc>,
    ) -> String {
        let query = self.signer.sign(path, permissions, expiry);
        format!("{}?{query}", unsigned_url(base, path))
    }

    /// The blob path a Basin blob URL names; any query (signature) is ignored. Clients hand
    /// back upload URLs without their query (`uploadUrl` of upload-convert). The host is not
    /// checked, since clients may reach Basin under several names; callers must check that
    /// the path belongs to the caller (for uploads: `uploads/<caller's tenant>/...`).
    pub(crate) fn blob_path_from_url(&self, raw: &str) -> Result<BlobPath, BlobUrlError> {
        let url = url::Url::parse(raw.trim()).map_err(|_| BlobUrlError::NotAUrl)?;
        let mut path = url.path();
        let prefix = self
            .public_url
            .as_ref()
            .map(PublicBase::path_prefix)
            .unwrap_or_default();
        if !prefix.is_empty() {
            path = path.strip_prefix(prefix.as_str()).unwrap_or(path);
        }
        blob_path_from_request_path(path).ok_or(BlobUrlError::NotABlobUrl)?
    }
}

/// The URL `url` (one this server issued, with or without its query) signed anew with
/// `permissions` (letters of `racw`) until `expiry`, on the same host; `None` when `url` names
/// no blob or `permissions` is not a valid set. For tests of what the blob endpoint accepts;
/// no endpoint hands out such URLs.
pub fn resign_blob_url(
    secret: &SigningSecret,
    url: &str,
    permissions: &str,
    expiry: DateTime<Utc>,
) -> Option<String> {
    let urls = BlobUrls::new(secret, None, TimeDelta::hours(1), TimeDelta::hours(1));
    let path = urls.blob_path_from_url(url).ok()?;
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    let authority = match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let base = PublicBase::from_host(&authority)?;
    let permissions = Permissions::parse(permissions)?;
    Some(urls.signed_url(&base, &path, permissions, expiry))
}

/// `<base>/basin/<container>/<encoded name>`.
pub(crate) fn unsigned_url(base: &PublicBase, path: &BlobPath) -> String {
    let name: Vec<String> = path
        .segments()
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect();
    format!(
        "{}/{ACCOUNT}/{}/{}",
        base.as_str(),
        path.container(),
        name.join("/")
    )
}

/// Reads `/basin/<container>/<name>` (percent-encoded, as on the wire). `None` when the path
/// is not under the account; otherwise the parsed path or why it is invalid.
pub(crate) fn blob_path_from_request_path(path: &str) -> Option<Result<BlobPath, BlobUrlError>> {
    let rest = path
        .strip_prefix('/')?
        .strip_prefix(ACCOUNT)?
        .strip_prefix('/')?;
    let Some((container, name)) = rest.split_once('/') else {
        return Some(Err(BlobUrlError::NotABlobUrl));
    };
    Some(decode_path(container, name))
}

fn decode_path(container: &str, name: &str) -> Result<BlobPath, BlobUrlError> {
    let decode = |text: &str| {
        percent_decode_str(text)
            .decode_utf8()
            .map(|decoded| decoded.into_owned())
            .map_err(|_| BlobUrlError::Path(BlobPathError::Segment))
    };
    Ok(BlobPath::parse(&decode(container)?, &decode(name)?)?)
}

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use super::*;

    fn urls(public_url: Option<&str>) -> BlobUrls {
        let secret = SigningSecret::new(SecretString::from(
            "a secret of at least thirty-two bytes!!",
        ));
        BlobUrls::new(
            &secret,
            public_url.and_then(PublicBase::parse),
            TimeDelta::hours(1),
            TimeDelta::hours(1),
        )
    }

    #[test]
    fn an_upload_url_maps_back_to_its_blob_path_without_its_query() {
        let urls = urls(None);
        let base = PublicBase::from_host("127.0.0.1:8080").unwrap();
        let path = BlobPath::parse("uploads", "t/u/my file+1%.dfsu").unwrap();
        let url = urls.upload_url(&base, &path, Utc::now());
        assert!(
            url.starts_with("http://127.0.0.1:8080/basin/uploads/t/u/my%20file%2B1%25.dfsu?sv="),
            "{url}"
        );
        assert!(url.contains("sp=rcw"), "{url}");
        let (without_query, _) = url.split_once('?').unwrap();
        assert_eq!(urls.blob_path_from_url(without_query).unwrap(), path);
        assert_eq!(urls.blob_path_from_url(&url).unwrap(), path);
    }

    #[test]
    fn a_public_url_with_a_path_prefix_is_honoured_both_ways() {
        let urls = urls(Some("https://data.example.com/platform/"));
        let base = urls.public_url().unwrap().clone();
        let path = BlobPath::parse("uploads", "t/u").unwrap();
        let url = urls.read_url(&base, &path, Utc::now());
        assert!(
            url.starts_with("https://data.example.com/platform/basin/uploads/t/u?"),
            "{url}"
        );
        assert!(url.contains("sp=r&"), "{url}");
        assert_eq!(urls.blob_path_from_url(&url).unwrap(), path);
    }

    #[test]
    fn urls_that_are_not_basin_blobs_are_refused() {
        let urls = urls(None);
        for bad in [
            "not a url",
            "http://h/other/uploads/x",
            "http://h/basin/uploads",
            "http://h/basin/uploads/a%2F..%2Fb",
            "http://h/basin/Uploads/x",
            "http://h/basin/uploads/a%5Cb",
        ] {
            assert!(urls.blob_path_from_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn host_headers_must_be_plain_authorities() {
        assert!(PublicBase::from_host("localhost:8080").is_some());
        assert!(PublicBase::from_host("[::1]:8080").is_some());
        for bad in ["", "a/b", "user@host", "host?x", "ho st"] {
            assert!(PublicBase::from_host(bad).is_none(), "{bad}");
        }
        assert!(PublicBase::parse("ftp://host").is_none());
        assert!(PublicBase::parse("https://host/?q").is_none());
    }
}

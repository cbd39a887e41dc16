//! The Azure Blob wire details of the blob endpoint: its errors and response headers.
//!
//! Azure clients read the error code from the `x-ms-error-code` header (HEAD responses have no
//! body) and otherwise from an XML body `<Error><Code>..</Code><Message>..</Message></Error>`,
//! so this endpoint answers errors in that form rather than problem+json; the problem
//! middleware leaves XML bodies alone. Every status decision is in [`AzureError::status_code`].

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};

use crate::blob_urls::BlobUrlError;
use crate::error::ErrorCause;
use basin_blob::blocks::BlockListError;
use basin_blob::path::BlobPathError;
use basin_blob::signing::SasError;
use basin_blob::{BlobError, BlobMeta};

/// The storage service version Basin answers as (`x-ms-version`).
pub(crate) const SERVICE_VERSION: &str = "2025-01-05";
/// Header naming the error code.
pub(crate) const ERROR_CODE_HEADER: HeaderName = HeaderName::from_static("x-ms-error-code");
/// Header naming the service version.
pub(crate) const VERSION_HEADER: HeaderName = HeaderName::from_static("x-ms-version");
/// Header echoing the request id.
pub(crate) const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-ms-request-id");

/// Every error of the blob endpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum AzureError {
    /// The signature is missing, wrong or expired.
    #[error("{0}")]
    Authentication(SasError),
    /// The signature is valid but does not allow this operation.
    #[error("the signed URL does not allow this operation")]
    PermissionMismatch,
    /// The URL writes to the content of a dataset in the recycle bin.
    #[error(
        "the dataset this URL reaches is in the recycle bin or was deleted for good; its content cannot be read or changed"
    )]
    InRecycleBin,
    /// The container or blob name is invalid.
    #[error("{0}")]
    InvalidName(BlobUrlError),
    /// A query parameter is missing or invalid.
    #[error("query parameter {0} is missing or invalid")]
    InvalidQueryParameter(&'static str),
    /// A required header is missing.
    #[error("header {0} is required")]
    MissingHeader(&'static str),
    /// A header has a value Basin does not accept.
    #[error("header {0} has an invalid or unsupported value")]
    InvalidHeader(&'static str),
    /// The block id is not base64 of 1 to 64 bytes.
    #[error("{0}")]
    InvalidBlockId(BlockListError),
    /// The block list names an unknown block or too many blocks.
    #[error("{0}")]
    InvalidBlockList(String),
    /// The block list is not XML of the expected shape.
    #[error("{0}")]
    InvalidXml(BlockListError),
    /// The body's MD5 does not match `Content-MD5`.
    #[error("the body does not match its Content-MD5")]
    Md5Mismatch,
    /// The body ended early or broke off.
    #[error("the request body ended before it was complete")]
    IncompleteBody,
    /// A metadata header has a bad name or value.
    #[error("{0}")]
    InvalidMetadata(String),
    /// Metadata names and values exceed 8 KiB together.
    #[error("the metadata exceeds 8 KiB")]
    MetadataTooLarge,
    /// The body stalled for longer than the idle limit.
    #[error("the request body stalled")]
    BodyTimeout,
    /// No blob at this path.
    #[error("the specified blob does not exist")]
    BlobNotFound,
    /// `If-None-Match: *` (or a create-only URL) and the blob exists.
    #[error("the specified blob already exists")]
    BlobAlreadyExists,
    /// The path runs through an existing blob (local backend).
    #[error("the blob path conflicts with an existing blob")]
    PathConflict,
    /// `If-Match` does not match the blob.
    #[error("the condition specified using HTTP conditional header(s) is not met")]
    ConditionNotMet,
    /// The body is larger than allowed.
    #[error("the request body is too large; the limit is {limit_bytes} bytes")]
    TooLarge {
        /// The limit.
        limit_bytes: u64,
    },
    /// The range selects nothing.
    #[error("the range specified is invalid for the current size of the resource")]
    InvalidRange {
        /// The blob's size, for `Content-Range: bytes */size`.
        size: u64,
    },
    /// A fault of Basin's or its storage.
    #[error("the server encountered an internal error")]
    Internal(#[source] anyhow::Error),
}

impl AzureError {
    /// The status and Azure error code. Every status decision is here.
    pub(crate) fn status_code(&self) -> (StatusCode, &'static str) {
        use StatusCode as S;
        match self {
            Self::Authentication(_) => (S::FORBIDDEN, "AuthenticationFailed"),
            Self::PermissionMismatch => (S::FORBIDDEN, "AuthorizationPermissionMismatch"),
            Self::InRecycleBin => (S::FORBIDDEN, "AuthorizationFailure"),
            Self::InvalidName(_) => (S::BAD_REQUEST, "InvalidResourceName"),
            Self::InvalidQueryParameter(_) => (S::BAD_REQUEST, "InvalidQueryParameterValue"),
            Self::MissingHeader(_) => (S::BAD_REQUEST, "MissingRequiredHeader"),
            Self::InvalidHeader(_) => (S::BAD_REQUEST, "InvalidHeaderValue"),
            Self::InvalidBlockId(_) => (S::BAD_REQUEST, "InvalidBlockId"),
            Self::InvalidBlockList(_) => (S::BAD_REQUEST, "InvalidBlockList"),
            Self::InvalidXml(_) => (S::BAD_REQUEST, "InvalidXmlDocument"),
            Self::Md5Mismatch => (S::BAD_REQUEST, "Md5Mismatch"),
            Self::IncompleteBody => (S::BAD_REQUEST, "IncompleteBody"),
            Self::InvalidMetadata(_) => (S::BAD_REQUEST, "InvalidMetadata"),
            Self::MetadataTooLarge => (S::BAD_REQUEST, "MetadataTooLarge"),
            Self::BodyTimeout => (S::REQUEST_TIMEOUT, "OperationTimedOut"),
            Self::BlobNotFound => (S::NOT_FOUND, "BlobNotFound"),
            Self::BlobAlreadyExists => (S::CONFLICT, "BlobAlreadyExists"),
            Self::PathConflict => (S::CONFLICT, "BlobPathConflict"),
            Self::ConditionNotMet => (S::PRECONDITION_FAILED, "ConditionNotMet"),
            Self::TooLarge { .. } => (S::PAYLOAD_TOO_LARGE, "RequestBodyTooLarge"),
            Self::InvalidRange { .. } => (S::RANGE_NOT_SATISFIABLE, "InvalidRange"),
            Self::Internal(_) => (S::INTERNAL_SERVER_ERROR, "InternalError"),
        }
    }
}

impl From<SasError> for AzureError {
    fn from(error: SasError) -> Self {
        match error {
            SasError::Permission => Self::PermissionMismatch,
            other => Self::Authentication(other),
        }
    }
}

impl From<BlobError> for AzureError {
    fn from(error: BlobError) -> Self {
        match error {
            BlobError::NotFound(_) => Self::BlobNotFound,
            BlobError::AlreadyExists(_) => Self::BlobAlreadyExists,
            BlobError::TooLarge { limit_bytes } => Self::TooLarge { limit_bytes },
            BlobError::Md5Mismatch => Self::Md5Mismatch,
            BlobError::BlockNotFound(block) => {
                Self::InvalidBlockList(format!("block {block} was not staged for this blob"))
            }
            BlobError::RangeNotSatisfiable { size } => Self::InvalidRange { size },
            BlobError::PathConflict(_) => Self::PathConflict,
            BlobError::Body(cause) if cause.kind() == std::io::ErrorKind::TimedOut => {
                Self::BodyTimeout
            }
            BlobError::Body(_) => Self::IncompleteBody,
            BlobError::Storage(cause) => Self::Internal(cause),
        }
    }
}

impl From<BlockListError> for AzureError {
    fn from(error: BlockListError) -> Self {
        match error {
            BlockListError::TooLarge => Self::TooLarge {
                limit_bytes: u64::try_from(basin_blob::limits::BLOCK_LIST_BYTES_MAX)
                    .unwrap_or(u64::MAX),
            },
            BlockListError::Malformed => Self::InvalidXml(error),
            BlockListError::InvalidBlockId
            | BlockListError::TooManyBlocks
            | BlockListError::RepeatedBlock => Self::InvalidBlockList(error.to_string()),
        }
    }
}

impl From<BlobPathError> for AzureError {
    fn from(error: BlobPathError) -> Self {
        Self::InvalidName(BlobUrlError::Path(error))
    }
}

impl IntoResponse for AzureError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_code();
        let message = match &self {
            Self::Internal(_) => "The server encountered an internal error.".to_owned(),
            other => other.to_string(),
        };
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>{code}</Code><Message>{}</Message></Error>",
            escape_xml(&message)
        );
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/xml"),
        );
        headers.insert(ERROR_CODE_HEADER, HeaderValue::from_static(code));
        if let Self::InvalidRange { size } = &self
            && let Ok(value) = HeaderValue::from_str(&format!("bytes */{size}"))
        {
            headers.insert(header::CONTENT_RANGE, value);
        }
        if let Self::Internal(cause) = self {
            response
                .extensions_mut()
                .insert(ErrorCause(Arc::new(cause)));
        }
        response
    }
}

fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`), the form of `Last-Modified`.
pub(crate) fn http_date(time: DateTime<Utc>) -> String {
    time.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// `ETag` and `Last-Modified` of a blob.
pub(crate) fn insert_meta(headers: &mut HeaderMap, meta: &BlobMeta) {
    if let Ok(etag) = HeaderValue::from_str(&meta.etag) {
        headers.insert(header::ETAG, etag);
    }
    if let Ok(date) = HeaderValue::from_str(&http_date(meta.last_modified)) {
        headers.insert(header::LAST_MODIFIED, date);
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn errors_are_azure_xml_with_the_code_in_a_header() {
        let response = AzureError::BlobNotFound.into_response();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(response.headers()[ERROR_CODE_HEADER], "BlobNotFound");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/xml");
        let response = AzureError::InvalidRange { size: 10 }.into_response();
        assert_eq!(response.headers()[header::CONTENT_RANGE], "bytes */10");
    }

    #[test]
    fn messages_are_escaped_and_dates_are_http_dates() {
        assert_eq!(escape_xml("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
        let time = Utc.with_ymd_and_hms(1994, 11, 6, 8, 49, 37).unwrap();
        assert_eq!(http_date(time), "Sun, 06 Nov 1994 08:49:37 GMT");
    }
}

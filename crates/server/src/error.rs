//! The one API error type and its RFC 9457 problem+json form.
//!
//! Handlers return [`ApiError`]; every status decision is in [`ApiError::problem`]. The
//! response carries the [`Problem`] as an extension and an empty body: the problem middleware
//! in [`crate::http::problem`] renders it, because only it knows the request path (`instance`)
//! and request id, and it logs the cause of 5xx errors. That keeps `into_response` free of side
//! effects and gives responses made by axum or tower (404, 405, 413, 408) the same shape.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::db::StoreError;

/// Prefix of every problem `type`. A URN rather than a URL: it names the error kind and stays
/// stable wherever Basin is hosted. docs/errors.md lists every kind.
pub(crate) const PROBLEM_TYPE_PREFIX: &str = "urn:basin:problem:";

/// Field errors as clients expect them: `{"field": ["message", ...]}`.
pub(crate) type FieldErrors = BTreeMap<String, Vec<String>>;

/// A rendered-to-be problem: what the middleware turns into the body.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    /// HTTP status.
    pub(crate) status: StatusCode,
    /// Stable kind, the last part of `type`.
    pub(crate) kind: &'static str,
    /// Short, stable, human summary of the kind.
    pub(crate) title: &'static str,
    /// What went wrong in this request.
    pub(crate) detail: Option<String>,
    /// Field errors, for validation problems.
    pub(crate) errors: Option<FieldErrors>,
    /// Extra members, e.g. `supportedVersions`.
    pub(crate) extensions: serde_json::Map<String, serde_json::Value>,
}

impl Problem {
    /// A problem of `kind` with the given status and title.
    pub(crate) fn new(status: StatusCode, kind: &'static str, title: &'static str) -> Self {
        Self {
            status,
            kind,
            title,
            detail: None,
            errors: None,
            extensions: serde_json::Map::new(),
        }
    }

    /// Sets the detail.
    pub(crate) fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The problem a bare status stands for, used for responses produced outside our handlers
    /// (axum's 405, tower's 413 and 408).
    pub(crate) fn for_status(status: StatusCode) -> Self {
        match status {
            StatusCode::NOT_FOUND => Self::new(status, "route-not-found", "Route not found")
                .detail("No endpoint matches this path."),
            StatusCode::METHOD_NOT_ALLOWED => {
                Self::new(status, "method-not-allowed", "Method not allowed")
                    .detail("This path does not accept this method; see the Allow header.")
            }
            StatusCode::PAYLOAD_TOO_LARGE => {
                Self::new(status, "payload-too-large", "Payload too large")
                    .detail("The request body is larger than this endpoint accepts.")
            }
            StatusCode::REQUEST_TIMEOUT => Self::new(status, "request-timeout", "Request timeout")
                .detail("The request took too long and was cancelled."),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                Self::new(status, "unsupported-media-type", "Unsupported media type")
            }
            StatusCode::UNAUTHORIZED => {
                Self::new(status, "credentials-invalid", "Authentication failed")
            }
            StatusCode::FORBIDDEN => Self::new(status, "forbidden", "Forbidden"),
            status if status.is_server_error() => {
                Self::new(status, "internal", "Internal server error")
            }
            status => Self::new(status, "bad-request", "Bad request"),
        }
    }

    /// The full `type` URI.
    pub(crate) fn type_uri(&self) -> String {
        format!("{PROBLEM_TYPE_PREFIX}{}", self.kind)
    }
}

/// The cause of a 5xx error, kept out of the body and logged by the problem middleware.
#[derive(Debug, Clone)]
pub(crate) struct ErrorCause(pub Arc<anyhow::Error>);

/// Every error an HTTP handler can return.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ApiError {
    /// Input failed validation; field errors name each field.
    #[error("validation failed: {detail}")]
    Validation {
        /// Summary.
        detail: String,
        /// Per-field messages.
        errors: FieldErrors,
    },
    /// The body is not valid JSON or does not match the expected shape.
    #[error("invalid body: {0}")]
    InvalidBody(String),
    /// A path segment (usually an id) is malformed.
    #[error("invalid path: {0}")]
    InvalidPath(String),
    /// The paging cursor is not one Basin issued.
    #[error("invalid cursor")]
    InvalidCursor,
    /// The `api-version` is not supported by this endpoint.
    #[error("unsupported api-version {requested}")]
    UnsupportedApiVersion {
        /// What the client sent.
        requested: String,
        /// What the endpoint supports, in wire form (`1.0`).
        supported: Vec<String>,
    },
    /// No credentials were sent.
    #[error("credentials missing")]
    CredentialsMissing,
    /// Credentials are malformed, wrongly signed or unknown.
    #[error("credentials invalid: {0}")]
    CredentialsInvalid(String),
    /// The token has expired or is not yet valid.
    #[error("credentials expired: {0}")]
    CredentialsExpired(String),
    /// The API key was revoked or the user disabled.
    #[error("credentials revoked: {0}")]
    CredentialsRevoked(String),
    /// Authenticated but not allowed.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// The resource does not exist (or the caller may not know it exists).
    #[error("not found: {0}")]
    NotFound(String),
    /// The request conflicts with the current state.
    #[error("conflict: {detail}")]
    Conflict {
        /// Stable kind, e.g. `email-taken`.
        kind: &'static str,
        /// What conflicts.
        detail: String,
    },
    /// The request breaks a rule of the resource (not a malformed field).
    #[error("rejected: {detail}")]
    Rejected {
        /// Stable kind, e.g. `cannot-move-root`.
        kind: &'static str,
        /// What rule was broken.
        detail: String,
    },
    /// The request is well formed but the resource it names cannot do what it asks (a
    /// dataset without a map asked for tiles, a file its reader cannot read).
    #[error("unprocessable: {detail}")]
    Unprocessable {
        /// Stable kind, e.g. `not-tileable`.
        kind: &'static str,
        /// Why.
        detail: String,
    },
    /// The body is larger than the endpoint accepts.
    #[error("payload too large (limit {limit_bytes} bytes)")]
    PayloadTooLarge {
        /// The limit that was exceeded.
        limit_bytes: u64,
    },
    /// The answer the request asks for would pass a limit (an EDR query over too many values).
    #[error("answer too large: {0}")]
    AnswerTooLarge(String),
    /// An upload body sent nothing for `limits.upload_idle_timeout_ms`.
    #[error("the upload stalled")]
    BodyStalled,
    /// A dependency (the database) is unavailable for now.
    #[error("service unavailable")]
    Unavailable(#[source] anyhow::Error),
    /// A fault of Basin's own.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    /// A validation error for one field.
    pub(crate) fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        let mut errors = FieldErrors::new();
        errors.insert(field.into(), vec![message.clone()]);
        Self::Validation {
            detail: message,
            errors,
        }
    }

    /// The problem this error is rendered as. Every status decision is here.
    #[expect(
        clippy::too_many_lines,
        reason = "every status decision in one match is the point of this type"
    )]
    pub(crate) fn problem(&self) -> Problem {
        use StatusCode as S;
        match self {
            Self::Validation { detail, errors } => {
                let mut problem = Problem::new(
                    S::BAD_REQUEST,
                    "validation",
                    "One or more fields are invalid",
                )
                .detail(detail.clone());
                problem.errors = Some(errors.clone());
                problem
            }
            Self::InvalidBody(detail) => {
                Problem::new(S::BAD_REQUEST, "invalid-body", "Invalid request body").detail(detail)
            }
            Self::InvalidPath(detail) => {
                Problem::new(S::BAD_REQUEST, "invalid-path", "Invalid path parameter")
                    .detail(detail)
            }
            Self::InvalidCursor => Problem::new(S::BAD_REQUEST, "invalid-cursor", "Invalid cursor")
                .detail("The cursor was not issued by this list; start again without a cursor."),
            Self::UnsupportedApiVersion {
                requested,
                supported,
            } => {
                let mut problem = Problem::new(
                    S::BAD_REQUEST,
                    "unsupported-api-version",
                    "Unsupported API version",
                )
                .detail(format!(
                    "api-version '{requested}' is not supported by this endpoint; supported versions: {}.",
                    supported.join(", ")
                ));
                problem.extensions.insert(
                    "supportedVersions".into(),
                    serde_json::Value::from(supported.clone()),
                );
                problem
            }
            Self::CredentialsMissing => Problem::new(
                S::UNAUTHORIZED,
                "credentials-missing",
                "Authentication required",
            )
            .detail("Send an API key in the svc-open-api-key header or a bearer token in Authorization."),
            Self::CredentialsInvalid(detail) => Problem::new(
                S::UNAUTHORIZED,
                "credentials-invalid",
                "Authentication failed",
            )
            .detail(detail),
            Self::CredentialsExpired(detail) => {
                Problem::new(S::UNAUTHORIZED, "credentials-expired", "Credentials expired")
                    .detail(detail)
            }
            Self::CredentialsRevoked(detail) => {
                Problem::new(S::UNAUTHORIZED, "credentials-revoked", "Credentials revoked")
                    .detail(detail)
            }
            Self::Forbidden(detail) => Problem::new(S::FORBIDDEN, "forbidden", "Forbidden").detail(detail),
            Self::NotFound(detail) => Problem::new(S::NOT_FOUND, "not-found", "Not found").detail(detail),
            Self::Conflict { kind, detail } => {
                Problem::new(S::CONFLICT, kind, "Conflict").detail(detail)
            }
            Self::Rejected { kind, detail } => {
                Problem::new(S::BAD_REQUEST, kind, "Request rejected").detail(detail)
            }
            Self::Unprocessable { kind, detail } => {
                Problem::new(S::UNPROCESSABLE_ENTITY, kind, "Unprocessable").detail(detail)
            }
            Self::PayloadTooLarge { limit_bytes } => {
                Problem::new(S::PAYLOAD_TOO_LARGE, "payload-too-large", "Payload too large")
                    .detail(format!("The request body exceeds the limit of {limit_bytes} bytes."))
            }
            Self::AnswerTooLarge(detail) => {
                Problem::new(S::PAYLOAD_TOO_LARGE, "answer-too-large", "Answer too large")
                    .detail(detail)
            }
            Self::BodyStalled => {
                Problem::new(S::REQUEST_TIMEOUT, "request-timeout", "Request timeout").detail(
                    "The upload sent no data for too long and was abandoned; nothing was stored.",
                )
            }
            Self::Unavailable(_) => Problem::new(
                S::SERVICE_UNAVAILABLE,
                "unavailable",
                "Service unavailable",
            )
            .detail("A dependency of Basin is unavailable; try again shortly."),
            Self::Internal(_) => {
                Problem::new(S::INTERNAL_SERVER_ERROR, "internal", "Internal server error")
                    .detail("Basin failed to handle this request.")
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let problem = self.problem();
        let mut response = problem.status.into_response();
        if problem.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer, ApiKey header=\"svc-open-api-key\""),
            );
        }
        match self {
            Self::Internal(cause) | Self::Unavailable(cause) => {
                response
                    .extensions_mut()
                    .insert(ErrorCause(Arc::new(cause)));
            }
            _ => {}
        }
        response.extensions_mut().insert(problem);
        response
    }
}

impl From<StoreError> for ApiError {
    /// Every store error, named: what a client caused is 4xx, the rest are Basin's faults.
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(cause) => Self::Unavailable(cause.into()),
            StoreError::NotFound(what) => Self::NotFound(format!("The {what} does not exist.")),
            StoreError::Duplicate(_) => Self::Conflict {
                kind: "duplicate",
                detail: "An item with the same identity exists already.".into(),
            },
            error @ (StoreError::InMemorySqlite
            | StoreError::UnsupportedUrl(_)
            | StoreError::Corrupt(_)
            | StoreError::Database(_)
            | StoreError::Read(_)
            | StoreError::Migrate(_)
            | StoreError::NotReadyOnWriter) => Self::Internal(error.into()),
        }
    }
}

/// Result of an HTTP handler.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

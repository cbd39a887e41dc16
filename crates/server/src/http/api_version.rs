//! The `api-version` header (or query parameter), read per endpoint group with a default, and
//! `api-supported-versions` on every response (docs/api-conventions.md#versions).
//!
//! Clients send `1`, `1.0`, `3`, ...; a missing version means the group's default. A version
//! the group does not support is 400 naming the supported ones.

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Request header and query parameter naming the version.
pub(crate) const API_VERSION: &str = "api-version";
/// Response header listing the versions an endpoint supports.
pub(crate) const API_SUPPORTED_VERSIONS: HeaderName =
    HeaderName::from_static("api-supported-versions");

/// The versions one group of endpoints accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ApiVersions {
    /// Accepted major versions, ascending.
    pub(crate) supported: &'static [u16],
    /// Used when the request names none.
    pub(crate) default: u16,
}

/// Identity endpoints live on the platform's iam service, which also serves credits (4).
pub(crate) const IAM: ApiVersions = ApiVersions {
    supported: &[1, 2, 3, 4],
    default: 1,
};
/// Credit endpoints (`/api/iam/credit`): version 4 of the platform API, the only one.
pub(crate) const CREDITS: ApiVersions = ApiVersions {
    supported: &[4],
    default: 4,
};
/// Conversion and transfer endpoints: clients send `2`; upload-convert clients send `3`.
pub(crate) const CONVERSION: ApiVersions = ApiVersions {
    supported: &[1, 2, 3],
    default: 2,
};
/// GIS endpoints (`/api/crs/...`, the platform's gis service): clients send 2.
pub(crate) const GIS: ApiVersions = ApiVersions {
    supported: &[1, 2],
    default: 2,
};
/// Basin's own administration API.
pub(crate) const ADMIN: ApiVersions = ApiVersions {
    supported: &[1],
    default: 1,
};
/// Metadata endpoints (projects, datasets, hierarchy): clients send 3.
pub(crate) const METADATA: ApiVersions = ApiVersions {
    supported: &[1, 2, 3],
    default: 3,
};
/// Recycle bin endpoints: clients send 2, and 1 for `my-deleted-items` and
/// `all-deleted-items`.
pub(crate) const RECYCLE_BIN: ApiVersions = ApiVersions {
    supported: &[1, 2, 3],
    default: 2,
};
/// Tile endpoints (`/api/tiles/...`, `/api/vectortiles/...`): clients send 1.
pub(crate) const TILES: ApiVersions = ApiVersions {
    supported: &[1],
    default: 1,
};
/// EDR endpoints (`/api/edr/...`): Basin's own, version 1.
pub(crate) const EDR: ApiVersions = ApiVersions {
    supported: &[1],
    default: 1,
};
/// Every version any endpoint accepts, announced on responses outside the versioned groups.
pub(crate) const ALL: ApiVersions = ApiVersions {
    supported: &[1, 2, 3, 4],
    default: 1,
};

/// What a non-text `api-version` header is reported as.
const NOT_TEXT: &str = "(not text)";

/// The versions the endpoints under `path` accept: the group each area's router enforces.
pub(crate) fn versions_for_path(path: &str) -> ApiVersions {
    if path.starts_with("/api/admin/") {
        ADMIN
    } else if path == "/api/iam/credit" || path.starts_with("/api/iam/credit/") {
        CREDITS
    } else if path.starts_with("/api/iam/") {
        IAM
    } else if path.starts_with("/api/conversion/") || path.starts_with("/api/transfer/") {
        CONVERSION
    } else if path.starts_with("/api/crs/") {
        GIS
    } else if path.starts_with("/api/tiles/") || path.starts_with("/api/vectortiles/") {
        TILES
    } else if path == "/api/edr" || path.starts_with("/api/edr/") {
        EDR
    } else {
        METADATA
    }
}

/// The version a request was served with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ApiVersion(pub u16);

impl ApiVersions {
    /// `1.0, 2.0`: the value of `api-supported-versions`.
    pub(crate) fn header_value(&self) -> String {
        self.wire_names().join(", ")
    }

    fn wire_names(&self) -> Vec<String> {
        self.supported.iter().map(|v| format!("{v}.0")).collect()
    }

    /// Picks the version for a request from the raw value it sent, if any.
    pub(crate) fn select(&self, requested: Option<&str>) -> Result<ApiVersion, ApiError> {
        let Some(raw) = requested.map(str::trim).filter(|raw| !raw.is_empty()) else {
            return Ok(ApiVersion(self.default));
        };
        match parse_version(raw) {
            Some(major) if self.supported.contains(&major) => Ok(ApiVersion(major)),
            _ => Err(ApiError::UnsupportedApiVersion {
                requested: raw.chars().take(32).collect(),
                supported: self.wire_names(),
            }),
        }
    }
}

/// `3` and `3.0` are version 3; anything else is not a version we know.
fn parse_version(raw: &str) -> Option<u16> {
    let major = match raw.split_once('.') {
        Some((major, "0")) => major,
        Some(_) => return None,
        None => raw,
    };
    if major.is_empty() || !major.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    major.parse().ok()
}

/// Middleware for a group of endpoints: validates the version and announces the group's.
pub(crate) async fn enforce(
    State(versions): State<ApiVersions>,
    mut request: Request,
    next: Next,
) -> Response {
    // A header that is not text names no version we know: 400, never the default.
    let from_header = request.headers().get(API_VERSION).map(|value| {
        value
            .to_str()
            .map_or_else(|_| NOT_TEXT.to_owned(), str::to_owned)
    });
    let requested = from_header.or_else(|| query_version(request.uri().query()));
    let mut response = match versions.select(requested.as_deref()) {
        Ok(version) => {
            request.extensions_mut().insert(version);
            next.run(request).await
        }
        Err(error) => error.into_response(),
    };
    if let Ok(value) = HeaderValue::from_str(&versions.header_value()) {
        response.headers_mut().insert(API_SUPPORTED_VERSIONS, value);
    }
    response
}

/// Outermost middleware: every response carries `api-supported-versions`.
pub(crate) async fn announce_default(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    if !response.headers().contains_key(API_SUPPORTED_VERSIONS)
        && let Ok(value) = HeaderValue::from_str(&ALL.header_value())
    {
        response.headers_mut().insert(API_SUPPORTED_VERSIONS, value);
    }
    response
}

fn query_version(query: Option<&str>) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(key, _)| key.eq_ignore_ascii_case(API_VERSION))
        .map(|(_, value)| value.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_with_or_without_minor_zero() {
        let versions = ApiVersions {
            supported: &[2, 3],
            default: 3,
        };
        assert_eq!(versions.select(None).unwrap(), ApiVersion(3));
        assert_eq!(versions.select(Some("")).unwrap(), ApiVersion(3));
        assert_eq!(versions.select(Some("2")).unwrap(), ApiVersion(2));
        assert_eq!(versions.select(Some("2.0")).unwrap(), ApiVersion(2));
        assert_eq!(versions.select(Some(" 3 ")).unwrap(), ApiVersion(3));
        for bad in ["1", "2.1", "v2", "abc", "99999999", "-1", ".0"] {
            assert!(versions.select(Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(versions.header_value(), "2.0, 3.0");
    }
}

//! Reusable paging (docs/api-conventions.md#paging).
//!
//! Cursor pages answer `{"cursor", "data"}`; the cursor is opaque to clients and encodes the
//! sort key and id of the last row, never an offset, so it stays valid while rows are inserted
//! or deleted. It also names the sort it belongs to, so a cursor cannot be replayed against a
//! different order. Offset pages answer `{"totalCount", "offset", "limit", "data"}`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::config::LimitsConfig;
use crate::db::SortValue;
use crate::error::ApiError;
use crate::limits::CURSOR_BYTES_MAX;

/// Page sizes in force (from configuration).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageLimits {
    /// Used when the request gives no limit.
    pub(crate) default: u32,
    /// Largest accepted limit.
    pub(crate) max: u32,
}

impl From<&LimitsConfig> for PageLimits {
    fn from(limits: &LimitsConfig) -> Self {
        Self {
            default: limits.page_size_default.get(),
            max: limits.page_size_max.get(),
        }
    }
}

impl PageLimits {
    /// Checks a requested page size: absent means the default, 0 or over the maximum is 400.
    pub(crate) fn limit(&self, requested: Option<u32>) -> Result<u32, ApiError> {
        match requested {
            None => Ok(self.default),
            Some(0) => Err(ApiError::field("limit", "limit must be at least 1")),
            Some(limit) if limit > self.max => Err(ApiError::field(
                "limit",
                format!(
                    "limit must be at most {} (the configured page_size_max)",
                    self.max
                ),
            )),
            Some(limit) => Ok(limit),
        }
    }
}

/// The position after which the next page starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Cursor {
    /// Which list and order the cursor belongs to, e.g. `tenants:name:asc`.
    #[serde(rename = "s")]
    pub(crate) sort: String,
    /// The sort key of the last row sent.
    #[serde(rename = "k")]
    pub(crate) key: serde_json::Value,
    /// The id of the last row sent (the tie-breaker).
    #[serde(rename = "i")]
    pub(crate) id: Uuid,
}

impl Cursor {
    /// The opaque string form.
    pub(crate) fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// Parses a cursor for the list and order named by `sort`.
    pub(crate) fn decode(raw: &str, sort: &str) -> Result<Self, ApiError> {
        if raw.len() > CURSOR_BYTES_MAX {
            return Err(ApiError::InvalidCursor);
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(raw.trim().trim_end_matches('='))
            .map_err(|_| ApiError::InvalidCursor)?;
        let cursor: Cursor = serde_json::from_slice(&bytes).map_err(|_| ApiError::InvalidCursor)?;
        if cursor.sort != sort {
            return Err(ApiError::InvalidCursor);
        }
        Ok(cursor)
    }
}

/// How a sort column's values are written in a cursor: text as it is, times in RFC 3339 with
/// microseconds (what the databases keep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortKind {
    /// Names, access levels.
    Text,
    /// Creation and change times.
    Time,
}

impl Cursor {
    /// A cursor of the list `sort` at the row with sort value `value` and id `id`.
    pub(crate) fn at(sort: &str, value: SortValue, id: Uuid) -> Self {
        let key = match value {
            SortValue::Text(text) => text,
            SortValue::Time(time) => time.to_rfc3339_opts(SecondsFormat::Micros, true),
        };
        Self {
            sort: sort.to_owned(),
            key: key.into(),
            id,
        }
    }

    /// The position the cursor marks, its sort value read as `kind`.
    pub(crate) fn position(&self, kind: SortKind) -> Result<(SortValue, Uuid), ApiError> {
        let raw = self.key.as_str().ok_or(ApiError::InvalidCursor)?;
        let value = match kind {
            SortKind::Text => SortValue::Text(raw.to_owned()),
            SortKind::Time => DateTime::parse_from_rfc3339(raw)
                .map(|time| SortValue::Time(time.with_timezone(&Utc)))
                .map_err(|_| ApiError::InvalidCursor)?,
        };
        Ok((value, self.id))
    }
}

/// A checked cursor-page request.
#[derive(Debug, Clone)]
pub(crate) struct CursorRequest {
    /// Start after this position; `None` for the first page.
    pub(crate) after: Option<Cursor>,
    /// Rows per page.
    pub(crate) limit: u32,
}

impl CursorRequest {
    /// Checks the raw `cursor` and `limit` of a request for the list named by `sort`.
    pub(crate) fn parse(
        cursor: Option<&str>,
        limit: Option<u32>,
        sort: &str,
        limits: PageLimits,
    ) -> Result<Self, ApiError> {
        let limit = limits.limit(limit)?;
        let after = match cursor.map(str::trim).filter(|c| !c.is_empty()) {
            Some(raw) => Some(Cursor::decode(raw, sort)?),
            None => None,
        };
        Ok(Self { after, limit })
    }

    /// How many rows to fetch: one more than the page, to learn whether another follows.
    pub(crate) fn fetch_count(&self) -> i64 {
        i64::from(self.limit) + 1
    }
}

/// A cursor page.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct CursorPage<T> {
    /// Pass back as `cursor` for the next page; null on the last page.
    pub(crate) cursor: Option<String>,
    /// The rows of this page.
    pub(crate) data: Vec<T>,
}

impl<T> CursorPage<T> {
    /// Builds a page from up to `limit + 1` fetched rows; `position` gives the cursor of a row.
    pub(crate) fn from_rows<R>(
        mut rows: Vec<R>,
        request: &CursorRequest,
        position: impl Fn(&R) -> Cursor,
        into: impl FnMut(R) -> T,
    ) -> Self {
        let limit = usize::try_from(request.limit).unwrap_or(usize::MAX);
        let cursor = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(|row| position(row).encode())
        } else {
            None
        };
        Self {
            cursor,
            data: rows.into_iter().map(into).collect(),
        }
    }
}

/// A checked offset-page request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OffsetRequest {
    /// Rows to skip.
    pub(crate) offset: u32,
    /// Rows per page.
    pub(crate) limit: u32,
}

impl OffsetRequest {
    /// Checks raw `offset` and `limit`.
    pub(crate) fn parse(
        offset: Option<u32>,
        limit: Option<u32>,
        limits: PageLimits,
    ) -> Result<Self, ApiError> {
        Ok(Self {
            offset: offset.unwrap_or(0),
            limit: limits.limit(limit)?,
        })
    }
}

/// An offset page.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OffsetPage<T> {
    /// Rows in the whole list.
    pub(crate) total_count: u64,
    /// Rows skipped.
    pub(crate) offset: u32,
    /// Page size asked for.
    pub(crate) limit: u32,
    /// The rows of this page.
    pub(crate) data: Vec<T>,
}

/// A plain list `{"data": [...]}`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct DataList<T> {
    /// The rows.
    pub(crate) data: Vec<T>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: PageLimits = PageLimits {
        default: 10,
        max: 100,
    };

    #[test]
    fn limits_default_and_reject_zero_and_over_the_maximum() {
        assert_eq!(LIMITS.limit(None).unwrap(), 10);
        assert_eq!(LIMITS.limit(Some(100)).unwrap(), 100);
        assert!(LIMITS.limit(Some(0)).is_err());
        assert!(LIMITS.limit(Some(101)).is_err());
    }

    #[test]
    fn cursors_round_trip_and_reject_other_sorts_and_garbage() {
        let cursor = Cursor {
            sort: "tenants:name:asc".into(),
            key: serde_json::json!("Acme"),
            id: Uuid::nil(),
        };
        let raw = cursor.encode();
        assert_eq!(Cursor::decode(&raw, "tenants:name:asc").unwrap(), cursor);
        assert!(Cursor::decode(&raw, "tenants:name:desc").is_err());
        assert!(Cursor::decode("not a cursor", "tenants:name:asc").is_err());
        assert!(Cursor::decode(&"A".repeat(5000), "tenants:name:asc").is_err());
    }
}

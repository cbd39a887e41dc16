//! `[limits]`: the bounds on requests that a deployment may tune. The reasons for each
//! default are on its constant in `crate::limits`.

use std::num::{NonZeroU32, NonZeroU64, NonZeroUsize};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::values::{AtLeast, as_millis, count_u32, count_u64, count_usize};
use crate::limits;

/// Limits that deployments may tune.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Page size when a list request gives none; at most `page_size_max`.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub page_size_default: NonZeroU32,
    /// Largest page size a client may ask for; larger is 400.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub page_size_max: NonZeroU32,
    /// Largest JSON body, in bytes; larger is 413.
    pub json_body_bytes_max: u64,
    /// Requests running longer are cancelled with 408 (not uploads: see
    /// `upload_idle_timeout_ms`). In milliseconds, at least 1.
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<1>::millis"
    )]
    pub request_timeout_ms: Duration,
    /// Uploads (blob requests and direct file uploads) whose body sends nothing for this long
    /// are abandoned: 408, nothing stored. In milliseconds, at least 1.
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<1>::millis"
    )]
    pub upload_idle_timeout_ms: Duration,
    /// How long shutdown waits for in-flight requests, in milliseconds.
    #[serde(
        serialize_with = "as_millis",
        deserialize_with = "AtLeast::<0>::millis"
    )]
    pub shutdown_grace_ms: Duration,
    /// Longest project name, in characters.
    pub project_name_chars_max: usize,
    /// Deepest subproject: a root project is depth 0.
    pub project_depth_max: u32,
    /// Most own members of one project.
    pub project_members_max: usize,
    /// Largest blob upload, in bytes, sent whole or as blocks; larger is 413.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub upload_bytes_max: NonZeroU64,
    /// Largest file sent directly to `POST .../file/upload`, in bytes; larger is 413.
    pub direct_upload_bytes_max: u64,
    /// Actions in one bulk hierarchy request; more is 400.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub hierarchy_actions_max: NonZeroUsize,
    /// Folders and files one bulk hierarchy request may create; more is 400, nothing created.
    #[serde(deserialize_with = "AtLeast::<1>::count")]
    pub hierarchy_created_max: NonZeroUsize,
    /// Tags on one dataset; more is 400.
    pub dataset_tags_max: usize,
    /// Length of one dataset tag, in characters; longer is 400.
    pub dataset_tag_chars_max: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            page_size_default: count_u32(limits::PAGE_SIZE_DEFAULT),
            page_size_max: count_u32(limits::PAGE_SIZE_MAX),
            json_body_bytes_max: limits::JSON_BODY_BYTES_MAX,
            request_timeout_ms: Duration::from_millis(limits::REQUEST_TIMEOUT_MS),
            upload_idle_timeout_ms: Duration::from_millis(limits::UPLOAD_IDLE_TIMEOUT_MS),
            shutdown_grace_ms: Duration::from_millis(limits::SHUTDOWN_GRACE_MS),
            project_name_chars_max: limits::PROJECT_NAME_CHARS_MAX,
            project_depth_max: limits::PROJECT_DEPTH_MAX,
            project_members_max: limits::PROJECT_MEMBERS_MAX,
            upload_bytes_max: count_u64(limits::UPLOAD_BYTES_MAX),
            direct_upload_bytes_max: limits::DIRECT_UPLOAD_BYTES_MAX,
            hierarchy_actions_max: count_usize(limits::HIERARCHY_ACTIONS_MAX),
            hierarchy_created_max: count_usize(limits::HIERARCHY_CREATED_MAX),
            dataset_tags_max: limits::DATASET_TAGS_MAX,
            dataset_tag_chars_max: limits::DATASET_TAG_CHARS_MAX,
        }
    }
}

/// The limits of uploads, as the blob endpoint and direct file uploads apply them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlobLimits {
    /// Largest blob, whether sent whole or as blocks.
    pub(crate) upload_bytes_max: u64,
    /// Largest file sent directly to the API (`.../file/upload`).
    pub(crate) direct_upload_bytes_max: u64,
    /// An upload body that sends nothing for this long is abandoned.
    pub(crate) upload_idle_timeout: Duration,
}

impl From<&LimitsConfig> for BlobLimits {
    fn from(limits: &LimitsConfig) -> Self {
        Self {
            upload_bytes_max: limits.upload_bytes_max.get(),
            direct_upload_bytes_max: limits.direct_upload_bytes_max,
            upload_idle_timeout: limits.upload_idle_timeout_ms,
        }
    }
}

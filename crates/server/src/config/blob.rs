//! `[blob]`: where blobs are stored, how long signed URLs live, how long unused uploads stay.

use std::collections::BTreeMap;
use std::time::Duration;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::secrets::{mask_secret_map, option_values_as_text};
use super::values::{Between, as_seconds};
use crate::limits;

/// Blob storage and signed blob URLs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlobConfig {
    /// `file:///path`, `s3://bucket/prefix`, `az://container/prefix`, `gs://bucket/prefix` or
    /// `memory://`; a folder `data_dir/blobs` when absent.
    pub url: Option<String>,
    /// Settings of the object store (`aws_access_key_id`, `aws_region`,
    /// `azure_storage_account_name`, `google_service_account`, ...). Values are secret.
    #[serde(
        serialize_with = "mask_secret_map",
        deserialize_with = "option_values_as_text"
    )]
    pub options: BTreeMap<String, SecretString>,
    /// Lifetime of upload URLs, in seconds.
    pub upload_url_ttl_seconds: i64,
    /// Lifetime of read URLs, in seconds.
    pub read_url_ttl_seconds: i64,
    /// Folder backend: how long after a block commit its blocks are copied into one file
    /// (`compaction_delay_seconds`, in seconds, at most a day; the commit itself copies
    /// nothing; see docs/blobs.md).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "Between::<0, { limits::BLOB_COMPACTION_DELAY_SECONDS_MAX }>::seconds"
    )]
    pub compaction_delay_seconds: Duration,
    /// How long an upload no transfer used is kept after its last write
    /// (`upload_retention_seconds`, in seconds, 1 to a year); then it is removed (an upload a
    /// completed import took over goes at once).
    #[serde(
        serialize_with = "as_seconds",
        deserialize_with = "Between::<{ limits::UPLOAD_RETENTION_SECONDS_MIN }, { limits::UPLOAD_RETENTION_SECONDS_MAX }>::seconds"
    )]
    pub upload_retention_seconds: Duration,
}

impl Default for BlobConfig {
    fn default() -> Self {
        Self {
            url: None,
            options: BTreeMap::new(),
            upload_url_ttl_seconds: limits::UPLOAD_URL_TTL_SECONDS,
            read_url_ttl_seconds: limits::READ_URL_TTL_SECONDS,
            compaction_delay_seconds: Duration::from_secs(
                basin_blob::limits::BLOB_COMPACTION_DELAY_SECONDS,
            ),
            upload_retention_seconds: Duration::from_secs(limits::UPLOAD_RETENTION_SECONDS),
        }
    }
}

impl BlobConfig {
    /// Signed URL lifetimes stay within what clients can use and what Azure allows. They are
    /// signed seconds on the wire (`i64`), checked here rather than typed.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let ttl_range = limits::BLOB_URL_TTL_SECONDS_MIN..=limits::BLOB_URL_TTL_SECONDS_MAX;
        for (key, ttl) in [
            ("blob.upload_url_ttl_seconds", self.upload_url_ttl_seconds),
            ("blob.read_url_ttl_seconds", self.read_url_ttl_seconds),
        ] {
            if !ttl_range.contains(&ttl) {
                return Err(ConfigError::Inconsistent(format!(
                    "{key} must be between {} and {} seconds",
                    ttl_range.start(),
                    ttl_range.end()
                )));
            }
        }
        Ok(())
    }
}

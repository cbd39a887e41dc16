//! The blob endpoint (docs/blobs.md): the part of the Azure Blob protocol that blob clients
//! use, served over the blob store of `basin-blob` (crates/blob).
//!
//! Clients never send file bytes through the JSON API. They ask for a signed URL
//! (`GET /api/conversion/transfer/upload-url`, later `GET /api/raw/dataset/{id}`), minted by
//! [`crate::blob_urls`], and move the bytes with any Azure Blob client against this endpoint
//! (`routes.rs`). Signed URLs are the only credential it takes. `azure.rs` holds the
//! protocol's errors and headers, `properties.rs` the blob properties carried in headers.
//!
//! The areas keep their content in the store itself (`basin_blob::BlobStore`, opened here by
//! [`open_store`]); only the endpoint lives here, above the areas, since a write through it
//! records an upload (transfers) or replaces a dataset's content (datasets).

pub(crate) mod azure;
pub(crate) mod properties;
pub(crate) mod routes;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use basin_blob::BlobStore;
use secrecy::ExposeSecret;

pub(crate) use routes::router;

use crate::config::Config;
use crate::periodic::{PeriodicTask, RoundCounts};

/// Folder of the default local backend inside `data_dir`.
pub(crate) const LOCAL_BLOBS_DIR: &str = "blobs";

/// Opens the store `blob.url` names: `file:///path` or none (a folder, by default
/// `data_dir/blobs`), or `s3://`, `az://`/`azure://`, `gs://`, `memory://` through
/// `object_store`, configured with `blob.options`.
pub(crate) async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn BlobStore>> {
    let options: BTreeMap<String, String> = config
        .blob
        .options
        .iter()
        .map(|(key, value)| (key.clone(), value.expose_secret().to_owned()))
        .collect();
    basin_blob::open(
        config.blob.url.as_deref(),
        &config.data_dir.join(LOCAL_BLOBS_DIR),
        &options,
        config.blob.compaction_delay_seconds,
    )
    .await
    .context("blob.url")
}

/// Removes staged blocks never committed and writes of crashed processes once they are
/// [`crate::limits::BLOB_LEFTOVER_AGE_SECONDS`] old (Azure keeps uncommitted blocks for a week,
/// so do we). Every replica sweeps; removing what another already removed is harmless, and a
/// round cut short leaves the rest for the next.
pub(crate) struct BlobSweep(pub(crate) Arc<dyn BlobStore>);

#[async_trait::async_trait]
impl PeriodicTask for BlobSweep {
    fn name(&self) -> &'static str {
        "blob leftovers sweep"
    }

    fn interval(&self) -> Duration {
        Duration::from_secs(crate::limits::BLOB_SWEEP_INTERVAL_SECONDS)
    }

    async fn run_round(&self) -> Result<RoundCounts, String> {
        let age = Duration::from_secs(crate::limits::BLOB_LEFTOVER_AGE_SECONDS);
        let removed = self.0.sweep(age).await.map_err(|error| error.to_string())?;
        Ok(vec![(
            "stale blob leftovers removed",
            u64::try_from(removed).unwrap_or(u64::MAX),
        )])
    }
}

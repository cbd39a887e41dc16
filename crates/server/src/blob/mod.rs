//! Blob storage and the transfer of bytes (docs/blobs.md).
//!
//! Dataset files and uploads are blobs: byte sequences up to `limits.upload_bytes_max` (5 GiB
//! by default) addressed by a [`BlobPath`]. They live in a [`BlobStore`], a local folder by
//! default ([`LocalBlobStore`]) or S3, Azure Blob Storage or Google Cloud Storage through
//! `object_store` ([`ObjectBlobStore`]), chosen at run time from `blob.url`.
//!
//! Clients never send file bytes through the JSON API. They ask for a signed URL
//! (`GET /api/conversion/transfer/upload-url`, later `GET /api/raw/dataset/{id}`) and move the
//! bytes with any Azure Blob client against Basin's own endpoint (`routes.rs`), which speaks
//! the part of the Azure Blob protocol those clients use. Signed URLs ([`BlobUrls`]) are the
//! only credential that endpoint takes.
//!
//! For other areas: [`BlobUrls::blob_path_from_url`] maps an upload URL back to its path,
//! [`BlobUrls::read_url`] mints a read URL, and [`BlobStore::head`] and [`BlobStore::get`]
//! stat and open a blob.

pub(crate) mod azure;
pub(crate) mod blocks;
pub(crate) mod local;
pub(crate) mod object;
pub(crate) mod path;
pub(crate) mod properties;
pub(crate) mod range;
pub(crate) mod routes;
pub(crate) mod signing;
pub(crate) mod store;
pub(crate) mod urls;

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context;
use secrecy::ExposeSecret;

pub(crate) use local::LocalBlobStore;
pub(crate) use object::ObjectBlobStore;
pub(crate) use path::{BlobPath, BlobPathError, UPLOADS_CONTAINER};
pub(crate) use routes::router;
pub(crate) use store::{
    BlobError, BlobMeta, BlobProperties, BlobStore, ByteStream, WriteOptions, Written, tally_file,
};
pub(crate) use urls::BlobUrlError;
pub(crate) use urls::BlobUrls;
pub use urls::resign_blob_url;

use crate::config::Config;

/// The storage account name in blob URLs (`/basin/<container>/<blob>`), as Azurite-style
/// URLs carry one in the first path segment.
pub(crate) const ACCOUNT: &str = "basin";

/// Folder of the default local backend inside `data_dir`.
pub(crate) const LOCAL_BLOBS_DIR: &str = "blobs";

/// Limits of the blob endpoint and of direct uploads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlobLimits {
    /// Largest blob, whether sent whole or as blocks.
    pub(crate) upload_bytes_max: u64,
    /// Largest file sent directly to the API (`.../file/upload`).
    pub(crate) direct_upload_bytes_max: u64,
    /// An upload body that sends nothing for this long is abandoned.
    pub(crate) upload_idle_timeout: std::time::Duration,
}

/// The error a body that sent nothing for the idle limit ends with; writes that read it fail
/// as stalled (408), not as broken off.
pub(crate) fn stalled() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "the body stalled")
}

/// `body` with a deadline on every chunk: a body that sends nothing for `idle` ends with an
/// [`std::io::ErrorKind::TimedOut`] error, which abandons the write that reads it.
pub(crate) fn idle_limited<'a, S, E>(
    body: S,
    idle: std::time::Duration,
) -> futures::stream::BoxStream<'a, std::io::Result<bytes::Bytes>>
where
    S: futures::Stream<Item = Result<bytes::Bytes, E>> + Send + Unpin + 'a,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use futures::StreamExt;
    futures::stream::unfold(Some(body), move |state| async move {
        let mut body = state?;
        match tokio::time::timeout(idle, body.next()).await {
            Ok(Some(Ok(bytes))) => Some((Ok(bytes), Some(body))),
            Ok(Some(Err(error))) => Some((Err(std::io::Error::other(error)), None)),
            Ok(None) => None,
            Err(_) => Some((Err(stalled()), None)),
        }
    })
    .boxed()
}

/// Whether `target`, just hard-linked to a [`BlobStore::local_file`], is a regular file. A
/// blob replaced by a block commit between the two calls is a symbolic link to its extents,
/// which a hard link copies as a link: such a `target` is removed, and the caller reads the
/// blob through [`BlobStore::get`] instead.
pub(crate) async fn linked_a_file(target: &std::path::Path) -> bool {
    match tokio::fs::symlink_metadata(target).await {
        Ok(metadata) if metadata.is_file() => true,
        _ => {
            let _ = tokio::fs::remove_file(target).await;
            false
        }
    }
}

/// Opens the store `blob.url` names: `file:///path` or none (a folder, by default
/// `data_dir/blobs`), or `s3://`, `az://`/`azure://`, `gs://`, `memory://` through
/// `object_store`, configured with `blob.options`. Starts sweeping it for stale leftovers.
pub(crate) async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn BlobStore>> {
    let store = open_backend(config).await?;
    tokio::spawn(sweep_periodically(Arc::downgrade(&store)));
    Ok(store)
}

async fn open_backend(config: &Config) -> anyhow::Result<Arc<dyn BlobStore>> {
    let compaction_delay = config.blob.compaction_delay_seconds;
    let Some(raw) = config.blob.url.as_deref() else {
        let root = config.data_dir.join(LOCAL_BLOBS_DIR);
        return open_local(root, compaction_delay).await;
    };
    let url = url::Url::parse(raw).with_context(|| format!("blob.url {raw:?} is not a URL"))?;
    if url.scheme() == "file" {
        let root = url
            .to_file_path()
            .map_err(|()| anyhow::anyhow!("blob.url {raw:?} is not a local path"))?;
        return open_local(root, compaction_delay).await;
    }
    let options: BTreeMap<String, String> = config
        .blob
        .options
        .iter()
        .map(|(key, value)| (key.clone(), value.expose_secret().to_owned()))
        .collect();
    let store = ObjectBlobStore::from_url(&url, &options)
        .with_context(|| format!("cannot open the blob store {}", url.scheme()))?;
    Ok(Arc::new(store))
}

async fn open_local(
    root: std::path::PathBuf,
    compaction_delay: std::time::Duration,
) -> anyhow::Result<Arc<dyn BlobStore>> {
    let store = LocalBlobStore::open_with(&root, compaction_delay)
        .await
        .with_context(|| format!("cannot create the blob folder {}", root.display()))?;
    Ok(Arc::new(store))
}

/// Removes staged blocks never committed and writes of crashed processes once they are
/// [`crate::limits::BLOB_LEFTOVER_AGE_SECONDS`] old (Azure keeps uncommitted blocks for a week,
/// so do we): at start, then every [`crate::limits::BLOB_SWEEP_INTERVAL_SECONDS`], for as long
/// as the store is in use. Every replica sweeps; removing what another already removed is
/// harmless.
async fn sweep_periodically(store: std::sync::Weak<dyn BlobStore>) {
    let age = std::time::Duration::from_secs(crate::limits::BLOB_LEFTOVER_AGE_SECONDS);
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(
        crate::limits::BLOB_SWEEP_INTERVAL_SECONDS,
    ));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(store) = store.upgrade() else {
            return;
        };
        match store.sweep(age).await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "removed stale blob uploads"),
            Err(error) => tracing::warn!(error = %error, "cannot sweep stale blob uploads"),
        }
    }
}

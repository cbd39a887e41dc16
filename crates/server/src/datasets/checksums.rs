//! The checksum repair. A large transfer result is stored first and hashed after its transfer
//! completed (hashing it before would hold every large import back), so a worker that stops in
//! between leaves a dataset without a checksum for good. Every server looks for such datasets
//! now and then and hashes their content once; content hashed meanwhile, or replaced, keeps
//! what it has (`store::set_missing_checksum` writes only where none is recorded, at the path
//! hashed).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use md5::Digest;

use crate::clock::Clock;
use crate::datasets::service::hex;
use crate::datasets::store;
use crate::db::Db;
use crate::periodic::{PeriodicTask, RoundCounts};
use basin_blob::{BlobError, BlobPath, BlobStore};

/// Paths looked at per query.
const PAGE: i64 = 100;

/// Fills in checksums that were never recorded.
#[derive(Debug, Clone)]
pub(crate) struct ChecksumRepair {
    db: Db,
    blobs: Arc<dyn BlobStore>,
    clock: Arc<dyn Clock>,
    interval: Duration,
}

impl ChecksumRepair {
    /// A repair over `db` and `blobs`, every `interval`.
    pub(crate) fn new(
        db: Db,
        blobs: Arc<dyn BlobStore>,
        clock: Arc<dyn Clock>,
        interval: Duration,
    ) -> Self {
        Self {
            db,
            blobs,
            clock,
            interval,
        }
    }

    /// One round: hashes the content of every dataset without a checksum whose content was
    /// left alone for [`crate::limits::CHECKSUM_REPAIR_GRACE_SECONDS`]. Returns how many
    /// contents got one.
    pub(crate) async fn run_once(&self) -> anyhow::Result<u64> {
        let before = self.clock.now()
            - chrono::TimeDelta::seconds(crate::limits::CHECKSUM_REPAIR_GRACE_SECONDS);
        let mut after = String::new();
        let mut filled = 0;
        loop {
            let paths = store::paths_without_checksum(&self.db, before, &after, PAGE).await?;
            let Some(last) = paths.last() else {
                return Ok(filled);
            };
            after.clone_from(last);
            for data_path in &paths {
                match self.md5_of(data_path).await {
                    Ok(Some(md5)) => {
                        let checksum = format!("md5:{}", hex(&md5));
                        filled +=
                            store::set_missing_checksum(&self.db, data_path, &checksum).await?;
                    }
                    // Content not written yet (a dataset waiting for its upload).
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(%error, blob = %data_path, "could not hash a dataset's content for its checksum");
                    }
                }
            }
        }
    }

    /// The MD5 of the blob at `data_path`: the one the store keeps with it, or read whole;
    /// `None` when there is no blob there.
    async fn md5_of(&self, data_path: &str) -> Result<Option<[u8; 16]>, BlobError> {
        let Ok(path) = BlobPath::parse_key(data_path) else {
            return Ok(None);
        };
        let meta = match self.blobs.head(&path).await {
            Ok(meta) => meta,
            Err(BlobError::NotFound(_)) => return Ok(None),
            Err(error) => return Err(error),
        };
        if let Some(md5) = self.blobs.content_md5(&path, &meta).await {
            return Ok(Some(md5));
        }
        if let Some(file) = self.blobs.local_file_now(&path).await {
            let hashed =
                tokio::task::spawn_blocking(move || basin_blob::tally_file(&file, u64::MAX, None))
                    .await
                    .map_err(BlobError::storage)??;
            return Ok(Some(hashed.1));
        }
        let mut body = self.blobs.get(&path, None).await?.body;
        let mut hasher = md5::Md5::new();
        while let Some(chunk) = body.next().await {
            hasher.update(chunk.map_err(BlobError::storage)?);
        }
        Ok(Some(hasher.finalize().into()))
    }
}

#[async_trait::async_trait]
impl PeriodicTask for ChecksumRepair {
    fn name(&self) -> &'static str {
        "checksum repair"
    }

    fn interval(&self) -> Duration {
        self.interval
    }

    async fn run_round(&self) -> Result<RoundCounts, String> {
        let filled = self
            .run_once()
            .await
            .map_err(|error| format!("{error:#}"))?;
        Ok(vec![("checksums recorded", filled)])
    }
}

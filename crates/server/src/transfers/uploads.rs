//! The life of an upload after its bytes arrive: every committed write through an upload URL is
//! recorded (size, time); an import that completed from an upload took its bytes over, so the
//! upload goes at once; an upload no transfer used goes `blob.upload_retention_seconds` after
//! its last write. Without this, every imported file would be stored twice and every abandoned
//! upload for ever.
//!
//! Removal and transfer starts agree through the upload's row (`store::remove_upload_in`,
//! `store::hold_upload_in`): an upload in use by a queued or running transfer is never
//! removed, and a transfer never starts from an upload being removed. The blob of a removed
//! upload is queued in `blob_garbage` in the same transaction, so a crash before it is deleted
//! leaks nothing: the recycle bin's deleter finishes the job.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use crate::db::{Db, StoreResult};
use crate::identity::StorageMeter;
use crate::identity::model::TenantStorage;
use crate::ids::TenantId;
use crate::periodic::{PeriodicTask, RoundCounts};
use crate::transfers::store;
use basin_blob::{BlobError, BlobPath, BlobStore, UPLOADS_CONTAINER};

/// Uploads removed per round of the retention; the next round follows at once when full.
const RETENTION_BATCH: i64 = 200;

/// Records uploads and removes them when their time has come.
#[derive(Debug, Clone)]
pub(crate) struct UploadKeeper {
    db: Db,
    blobs: Arc<dyn BlobStore>,
    clock: Arc<dyn Clock>,
    retention: Duration,
}

impl UploadKeeper {
    /// A keeper over `db` and `blobs`, keeping unused uploads for `retention`.
    pub(crate) fn new(
        db: Db,
        blobs: Arc<dyn BlobStore>,
        clock: Arc<dyn Clock>,
        retention: Duration,
    ) -> Self {
        Self {
            db,
            blobs,
            clock,
            retention,
        }
    }

    /// Records a committed write of `size` bytes at `path` when it is an upload (its tenant is
    /// the first segment of the path); other paths are not uploads and change nothing.
    pub(crate) async fn written(&self, path: &BlobPath, size: u64) -> StoreResult<()> {
        let Some(tenant) = tenant_of_upload(path) else {
            return Ok(());
        };
        store::record_upload(&self.db, &path.key(), tenant, size, self.clock.now()).await
    }

    /// Removes the upload `key` because a completed import took its bytes over, unless
    /// another queued or running transfer still reads it. A failure leaves the upload to the
    /// retention: it is logged, never the caller's error.
    pub(crate) async fn taken_over(&self, key: &str) {
        let now = self.clock.now();
        let removed = async {
            let mut tx = self.db.begin().await?;
            let removed = store::remove_upload_in(&mut tx, key, None, now).await?;
            tx.finish(removed).await?;
            Ok::<bool, crate::db::StoreError>(removed)
        }
        .await;
        match removed {
            Ok(true) => self.delete_now(key).await,
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, upload = %key, "could not remove an imported upload; the retention will");
            }
        }
    }

    /// One round of the retention: removes uploads last written more than the retention ago
    /// that no queued or running transfer reads. Returns how many went.
    pub(crate) async fn remove_expired(&self) -> StoreResult<u64> {
        let mut removed = 0;
        loop {
            let now = self.clock.now();
            let cutoff =
                now - chrono::TimeDelta::from_std(self.retention).unwrap_or(chrono::TimeDelta::MAX);
            let keys = store::uploads_written_before(&self.db, cutoff, RETENTION_BATCH).await?;
            let mut kept = 0;
            for key in &keys {
                let mut tx = self.db.begin().await?;
                let gone = store::remove_upload_in(&mut tx, key, Some(cutoff), now).await?;
                tx.finish(gone).await?;
                if gone {
                    self.delete_now(key).await;
                    removed += 1;
                } else {
                    kept += 1;
                }
            }
            // Uploads in use stay in the list; stop once a round removes nothing new.
            if keys.len() < usize::try_from(RETENTION_BATCH).unwrap_or(usize::MAX)
                || kept == keys.len()
            {
                return Ok(removed);
            }
        }
    }

    /// Deletes the blob of a removed upload and takes it off the deletion queue; on failure it
    /// stays queued for the recycle bin's deleter.
    async fn delete_now(&self, key: &str) {
        let Ok(path) = BlobPath::parse_key(key) else {
            return;
        };
        match self.blobs.delete(&path).await {
            Ok(()) | Err(BlobError::NotFound(_)) => {
                let keys = [key.to_owned()];
                if let Err(error) = crate::recycle_bin::unqueue_blob_removals(&self.db, &keys).await
                {
                    tracing::warn!(%error, upload = %key, "could not take a deleted upload off the deletion queue");
                }
            }
            Err(error) => {
                tracing::warn!(%error, upload = %key, "could not delete a removed upload; it stays queued");
            }
        }
    }
}

/// Removes uploads no transfer used within their retention. Every replica runs it; removing
/// what another removed already finds no row and does nothing.
#[async_trait::async_trait]
impl PeriodicTask for UploadKeeper {
    fn name(&self) -> &'static str {
        "upload retention"
    }

    /// A quarter of the retention, at most an hour, so an unused upload is gone within 1.25
    /// times its retention (or its retention plus an hour).
    fn interval(&self) -> Duration {
        (self.retention / 4)
            .min(Duration::from_secs(
                crate::limits::UPLOAD_SWEEP_INTERVAL_SECONDS_MAX,
            ))
            .max(Duration::from_millis(100))
    }

    async fn run_round(&self) -> Result<RoundCounts, String> {
        let removed = self
            .remove_expired()
            .await
            .map_err(|error| error.to_string())?;
        Ok(vec![("uploads removed", removed)])
    }
}

/// Measures the bytes of a tenant's uploads for its storage figures: those with a row, not yet
/// imported or not yet past their retention.
pub(crate) struct UploadStorage;

#[async_trait::async_trait]
impl StorageMeter for UploadStorage {
    async fn measure(&self, db: &Db, tenant: TenantId) -> StoreResult<TenantStorage> {
        Ok(TenantStorage {
            uploads_bytes: store::upload_bytes(db, tenant).await?,
            ..TenantStorage::default()
        })
    }
}

/// The tenant of an upload path `uploads/<tenant>/...`; `None` for other paths.
fn tenant_of_upload(path: &BlobPath) -> Option<TenantId> {
    if path.container() != UPLOADS_CONTAINER {
        return None;
    }
    path.segments()
        .next()
        .and_then(|segment| segment.parse::<uuid::Uuid>().ok())
        .map(TenantId::from_uuid)
}

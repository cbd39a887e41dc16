//! The life of an upload after its bytes arrive: every committed write through an upload URL is
//! recorded (size, time); an import that completed from an upload took its bytes over, so the
//! upload goes at once; an upload no transfer used goes `blob.upload_retention_seconds` after
//! its last write. Without this, every imported file would be stored twice and every abandoned
//! upload for ever.
//!
//! Removal and transfer starts agree through the upload's row ([`remove_upload_in`],
//! [`hold_upload_in`]): an upload in use by a queued or running transfer is never removed,
//! and a transfer never starts from an upload being removed. The blob of a removed upload is
//! queued for removal in the recycle bin (`blob_garbage`) in the same transaction, so a crash
//! before it is deleted leaks nothing: the recycle bin's deleter finishes the job.
//!
//! Whoever removes an upload or starts a transfer from one first locks its row (PostgreSQL
//! `FOR UPDATE`; SQLite transactions are exclusive already), and reads what the other did in
//! statements after the lock: a transfer queued meanwhile keeps the upload, an upload removed
//! meanwhile refuses the transfer.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use chrono::{DateTime, Utc};

use crate::db::{Db, StoreResult, Tx};
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
        let key = path.key();
        let mut tx = self.db.begin().await?;
        store::record_upload_in(&mut tx, &key, tenant, size, self.clock.now()).await?;
        // A key queued for removal and written again is a fresh upload: it leaves the queue.
        crate::recycle_bin::unqueue_blob_removal_in(&mut tx, &key).await?;
        tx.commit().await
    }

    /// Removes the upload `key` because a completed import took its bytes over, unless
    /// another queued or running transfer still reads it. A failure leaves the upload to the
    /// retention: it is logged, never the caller's error.
    pub(crate) async fn taken_over(&self, key: &str) {
        let now = self.clock.now();
        let removed = async {
            let mut tx = self.db.begin().await?;
            let removed = remove_upload_in(&mut tx, key, None, now).await?;
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
                let gone = remove_upload_in(&mut tx, key, Some(cutoff), now).await?;
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

/// Removes the upload `key` inside `tx` unless a queued or running transfer reads it or (with
/// `written_before`) it was written again since: its row goes, its blob is queued for
/// deletion. True when it was removed.
async fn remove_upload_in(
    tx: &mut Tx,
    key: &str,
    written_before: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    if !store::delete_upload_in(tx, key, written_before).await? {
        return Ok(false);
    }
    crate::recycle_bin::queue_upload_removal_in(tx, key, now).await?;
    Ok(true)
}

/// What [`hold_upload_in`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UploadHold {
    /// The upload's row, now locked.
    Held,
    /// No row: one was added. The caller must check that the blob is still there inside the
    /// same transaction, since a removal that deleted the blob leaves no trace behind.
    Added,
    /// The upload is being removed (its blob is queued for deletion).
    Removed,
}

/// Makes sure the upload `key` has a row, locked, for a transfer about to be queued from it
/// inside `tx`. An upload without one (written before Basin kept rows, or just removed) gets
/// one now (`size`, `committed_at`), unless its blob is queued for removal.
pub(crate) async fn hold_upload_in(
    tx: &mut Tx,
    key: &str,
    tenant: TenantId,
    size: u64,
    committed_at: DateTime<Utc>,
) -> StoreResult<UploadHold> {
    if store::lock_upload_in(tx, key).await? {
        return Ok(UploadHold::Held);
    }
    if !crate::recycle_bin::blob_removal_queued_in(tx, key).await?
        && store::add_upload_in(tx, key, tenant, size, committed_at).await?
    {
        return Ok(UploadHold::Added);
    }
    // Another transaction added the row first (PostgreSQL): lock it as it is now.
    Ok(if store::lock_upload_in(tx, key).await? {
        UploadHold::Held
    } else {
        UploadHold::Removed
    })
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

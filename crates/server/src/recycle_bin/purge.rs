//! Permanent removal: the purge of items marked `purging_since` (by a permanent delete or by
//! retention), in batches, and the deletion of their blobs.
//!
//! Each batch is one transaction under the tree's lock that deletes rows with `RETURNING`,
//! records one event per row it actually deleted and queues the blobs those rows named. So a
//! crash loses nothing (the marks and the queue are committed), a rerun deletes nothing twice
//! (rows already gone are not returned again), and two replicas purging the same tree take
//! turns on its lock. Blobs are deleted from the store only after their rows' transaction
//! committed, and only when no dataset names them any more.

use std::collections::BTreeSet;

use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::blob::{BlobError, BlobPath};
use crate::events::{EventType, NewEvent};
use crate::recycle_bin::model::{BinRow, ItemType, PurgeCounts};
use crate::recycle_bin::service::{BinResult, RecycleBinService};
use crate::recycle_bin::store::{self, RemovedDataset, RemovedProject};

impl RecycleBinService {
    /// Purges `item` (marked) for at most `batches_max` batches, then deletes the blobs they
    /// freed. True when the item is gone.
    pub(super) async fn purge_item(
        &self,
        item: &BinRow,
        batches_max: u32,
    ) -> BinResult<(PurgeCounts, bool)> {
        let mut counts = PurgeCounts::default();
        let mut finished = false;
        for _ in 0..batches_max {
            let (batch, done) = self.purge_batch(item).await?;
            counts.add(batch);
            if done {
                finished = true;
                break;
            }
        }
        counts.blobs += self.delete_queued_blobs().await?;
        Ok((counts, finished))
    }

    /// One transaction of the purge of `item`; true when nothing of it is left (or another
    /// replica holds it: that one finishes it).
    async fn purge_batch(&self, item: &BinRow) -> BinResult<(PurgeCounts, bool)> {
        let mut tx = self.db.begin().await?;
        if let Some(member) = item.tree_member() {
            self.projects.lock_tree_in(&mut tx, member).await?;
        }
        if !store::claim_purging_in(&mut tx, item.item_id).await? {
            return Ok((PurgeCounts::default(), true));
        }
        let levels = self.projects.levels_max();
        let mut counts = PurgeCounts::default();
        let done = match item.item_type {
            ItemType::Dataset => {
                let removed = store::delete_dataset_in(&mut tx, item.item_id).await?;
                self.datasets_removed_in(&mut tx, item, &removed, &mut counts)
                    .await?;
                store::remove_in(&mut tx, item.tenant_id, item.item_id).await?;
                true
            }
            ItemType::Project => {
                let project = crate::ids::ProjectId::from_uuid(item.item_id);
                let removed = store::delete_subtree_datasets_in(
                    &mut tx,
                    project,
                    levels,
                    self.settings.batch,
                )
                .await?;
                if removed.is_empty() {
                    let projects = store::delete_subtree_projects_in(
                        &mut tx,
                        project,
                        levels,
                        self.settings.batch,
                    )
                    .await?;
                    let done = projects.is_empty() || projects.iter().any(|row| row.id == project);
                    self.projects_removed_in(&mut tx, item, &projects, &mut counts)
                        .await?;
                    if done {
                        store::remove_in(&mut tx, item.tenant_id, item.item_id).await?;
                    }
                    done
                } else {
                    self.datasets_removed_in(&mut tx, item, &removed, &mut counts)
                        .await?;
                    false
                }
            }
        };
        tx.commit().await?;
        Ok((counts, done))
    }

    async fn datasets_removed_in(
        &self,
        tx: &mut crate::db::Tx,
        item: &BinRow,
        removed: &[RemovedDataset],
        counts: &mut PurgeCounts,
    ) -> BinResult<()> {
        let now = self.clock.now();
        for dataset in removed {
            store::queue_blob_in(tx, &dataset.data_path, now).await?;
            let event = NewEvent {
                kind: EventType::DatasetPurged,
                tenant: dataset.tenant_id,
                project: Some(dataset.project_id),
                user: item.purge_requested_by,
                resource: dataset.id,
                data: serde_json::json!({
                    "name": dataset.name,
                    "itemType": ItemType::Dataset,
                    "projectId": dataset.project_id,
                    "purgedWith": purged_with(item, dataset.id),
                    "reason": reason(item),
                }),
            };
            crate::events::record_in(tx, &event, now).await?;
        }
        let ids: Vec<Uuid> = removed.iter().map(|dataset| dataset.id).collect();
        store::remove_all_in(tx, item.tenant_id, &ids).await?;
        counts.datasets += removed.len() as u64;
        Ok(())
    }

    async fn projects_removed_in(
        &self,
        tx: &mut crate::db::Tx,
        item: &BinRow,
        removed: &[RemovedProject],
        counts: &mut PurgeCounts,
    ) -> BinResult<()> {
        let now = self.clock.now();
        for project in removed {
            let event = NewEvent {
                kind: EventType::ProjectPurged,
                tenant: project.tenant_id,
                project: Some(project.id),
                user: item.purge_requested_by,
                resource: project.id.as_uuid(),
                data: serde_json::json!({
                    "name": project.name,
                    "itemType": ItemType::Project,
                    "parentProjectId": project.parent_id,
                    "purgedWith": purged_with(item, project.id.as_uuid()),
                    "reason": reason(item),
                }),
            };
            crate::events::record_in(tx, &event, now).await?;
        }
        let ids: Vec<Uuid> = removed.iter().map(|project| project.id.as_uuid()).collect();
        store::remove_all_in(tx, item.tenant_id, &ids).await?;
        counts.projects += removed.len() as u64;
        Ok(())
    }

    /// Deletes the queued blobs that no dataset names; returns how many it deleted.
    pub(super) async fn delete_queued_blobs(&self) -> BinResult<u64> {
        let mut deleted = 0;
        let mut failed = BTreeSet::new();
        loop {
            let keys = store::queued_blobs(&self.db, self.settings.batch).await?;
            let fresh: Vec<String> = keys
                .into_iter()
                .filter(|key| !failed.contains(key))
                .collect();
            if fresh.is_empty() {
                return Ok(deleted);
            }
            for key in fresh {
                if store::blob_in_use(&self.db, &key).await? {
                    store::unqueue_blob(&self.db, &key).await?;
                    continue;
                }
                let outcome = match BlobPath::parse_key(&key) {
                    Ok(path) => self.blobs.delete(&path).await,
                    Err(_) => Err(BlobError::NotFound(key.clone())),
                };
                match outcome {
                    Ok(()) => {
                        deleted += 1;
                        store::unqueue_blob(&self.db, &key).await?;
                    }
                    Err(BlobError::NotFound(_)) => store::unqueue_blob(&self.db, &key).await?,
                    Err(error) => {
                        tracing::warn!(%error, blob = %key, "cannot delete a purged dataset's blob; retrying later");
                        failed.insert(key);
                    }
                }
            }
        }
    }

    /// Marks an expired item (and the bin items below it) for removal, under its tree's lock.
    async fn mark_in_own_transaction(&self, item: &BinRow) -> BinResult<()> {
        let mut tx = self.db.begin().await?;
        if let Some(member) = item.tree_member() {
            self.projects.lock_tree_in(&mut tx, member).await?;
        }
        let now = self.clock.now();
        if let Some(current) = store::find_in(&mut tx, item.item_id).await? {
            store::mark_purging_in(&mut tx, &current, now, None, self.projects.levels_max())
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// One retention pass: marks every item past retention, purges every marked item (also
    /// those a crash or a permanent delete left unfinished) and deletes their blobs.
    pub(crate) async fn run_retention(&self) -> BinResult<PurgeCounts> {
        let before = self.clock.now() - self.settings.retention;
        loop {
            let expired = store::expired(&self.db, before, self.settings.batch).await?;
            if expired.is_empty() {
                break;
            }
            for item in &expired {
                self.mark_in_own_transaction(item).await?;
            }
        }
        let mut counts = PurgeCounts::default();
        let mut skipped = BTreeSet::new();
        loop {
            let items = store::purging(
                &self.db,
                self.settings
                    .batch
                    .saturating_add(i64::try_from(skipped.len()).unwrap_or(i64::MAX)),
            )
            .await?;
            let items: Vec<BinRow> = items
                .into_iter()
                .filter(|item| !skipped.contains(&item.item_id))
                .collect();
            if items.is_empty() {
                break;
            }
            for item in items {
                let (purged, finished) = self.purge_item(&item, u32::MAX).await?;
                counts.add(purged);
                if !finished {
                    skipped.insert(item.item_id);
                }
            }
        }
        counts.blobs += self.delete_queued_blobs().await?;
        Ok(counts)
    }
}

/// The bin item whose removal took this resource along (`None`: the item itself).
fn purged_with(item: &BinRow, resource: Uuid) -> Option<Uuid> {
    (item.item_id != resource).then_some(item.item_id)
}

/// Why the item was removed: `PermanentDelete` by a user, or `Retention`.
fn reason(item: &BinRow) -> &'static str {
    if item.purge_requested_by.is_some() {
        "PermanentDelete"
    } else {
        "Retention"
    }
}

/// Runs the retention job every `check_interval` (and when a permanent delete leaves work)
/// until `stop`. Safe on every replica at once.
pub(crate) async fn run_retention_periodically(bin: RecycleBinService, stop: CancellationToken) {
    loop {
        match bin.run_retention().await {
            Ok(counts) if counts != PurgeCounts::default() => {
                tracing::info!(
                    projects = counts.projects,
                    datasets = counts.datasets,
                    blobs = counts.blobs,
                    "recycle bin purge"
                );
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "recycle bin retention failed; retrying later"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(bin.settings.check_interval) => {}
            () = bin.purge_wanted.notified() => {}
        }
    }
}

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

use uuid::Uuid;

use crate::datasets::{self, RemovedDataset};
use crate::events::{EventType, NewEvent};
use crate::ids::{DatasetId, ProjectId};
use crate::periodic::{PeriodicTask, RoundCounts};
use crate::projects::{self, RemovedProject, Walk};
use crate::recycle_bin::BinChange;
use crate::recycle_bin::model::{BinRow, ItemType, PurgeCounts};
use crate::recycle_bin::service::{BinResult, RecycleBinService};
use crate::recycle_bin::store;
use basin_blob::{BlobError, BlobPath};

impl RecycleBinService {
    /// Purges `item` (marked) for at most `batches_max` batches, then deletes the blobs they
    /// freed.
    pub(super) async fn purge_item(
        &self,
        item: &BinRow,
        batches_max: u32,
    ) -> BinResult<(PurgeCounts, Progress)> {
        let mut counts = PurgeCounts::default();
        let mut progress = Progress::More;
        for _ in 0..batches_max {
            let (batch, next) = self.purge_batch(item).await?;
            counts.add(batch);
            progress = next;
            if progress != Progress::More {
                break;
            }
        }
        counts.blobs += self.delete_queued_blobs().await?;
        Ok((counts, progress))
    }

    /// One transaction of the purge of `item`.
    async fn purge_batch(&self, item: &BinRow) -> BinResult<(PurgeCounts, Progress)> {
        let mut tx = self.begin_on(item).await?;
        match store::claim_purging_in(&mut tx, item.item_id).await? {
            store::Claim::Gone => return Ok((PurgeCounts::default(), Progress::Done)),
            store::Claim::Busy => return Ok((PurgeCounts::default(), Progress::Busy)),
            store::Claim::Claimed => {}
        }
        let levels = self.projects.levels_max();
        let mut counts = PurgeCounts::default();
        let done = match item.item_type {
            ItemType::Dataset => {
                let dataset = DatasetId::from_uuid(item.item_id);
                let removed = datasets::delete_in(&mut tx, dataset).await?;
                self.datasets_removed_in(&mut tx, item, &removed, &mut counts)
                    .await?;
                store::remove_in(&mut tx, item.tenant_id, item.item_id).await?;
                true
            }
            ItemType::Project => {
                let project = ProjectId::from_uuid(item.item_id);
                let subtree =
                    projects::subtree_in(&mut tx, project, Walk::Everything, levels).await?;
                let removed =
                    datasets::delete_of_projects_in(&mut tx, &subtree, self.settings.batch).await?;
                if removed.is_empty() {
                    let projects =
                        projects::delete_subtree_in(&mut tx, project, levels, self.settings.batch)
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
        Ok((counts, if done { Progress::Done } else { Progress::More }))
    }

    /// A write transaction holding the lock of `item`'s tree.
    async fn begin_on(&self, item: &BinRow) -> BinResult<crate::db::Tx> {
        let mut tx = self.db.begin().await?;
        if let Some(member) = item.tree_member() {
            self.projects.lock_tree_in(&mut tx, member).await?;
        }
        Ok(tx)
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
            super::queue_blob_removal_in(tx, &dataset.data_path, now).await?;
            let purged = BinChange::DatasetPurged {
                tenant: dataset.tenant_id,
                dataset: dataset.id,
                format: dataset.dataset_format.clone(),
            };
            self.reactions.run_in(tx, &purged, now).await?;
            let event = NewEvent {
                kind: EventType::DatasetPurged,
                tenant: dataset.tenant_id,
                project: Some(dataset.project_id),
                user: item.purge_requested_by,
                resource: dataset.id.as_uuid(),
                data: serde_json::json!({
                    "name": dataset.name,
                    "itemType": ItemType::Dataset,
                    "projectId": dataset.project_id,
                    "purgedWith": purged_with(item, dataset.id.as_uuid()),
                    "reason": reason(item),
                }),
            };
            crate::events::record_in(tx, &event, now).await?;
        }
        let ids: Vec<Uuid> = removed.iter().map(|dataset| dataset.id.as_uuid()).collect();
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

    /// Deletes the queued blobs that no dataset names; returns how many it deleted. Up to 16
    /// deletions run at once (object stores answer each over the network).
    pub(super) async fn delete_queued_blobs(&self) -> BinResult<u64> {
        use futures::StreamExt;
        let mut deleted = 0;
        let mut failed = BTreeSet::new();
        loop {
            let keys = store::queued_blobs(
                &self.db,
                self.settings
                    .batch
                    .saturating_add(i64::try_from(failed.len()).unwrap_or(i64::MAX)),
            )
            .await?;
            let fresh: Vec<String> = keys
                .into_iter()
                .filter(|key| !failed.contains(key))
                .collect();
            if fresh.is_empty() {
                return Ok(deleted);
            }
            let in_use = datasets::data_paths_named(&self.db, &fresh).await?;
            let unused: Vec<String> = fresh
                .iter()
                .filter(|key| !in_use.contains(key))
                .cloned()
                .collect();
            let outcomes: Vec<(String, Result<u64, BlobError>)> = futures::stream::iter(unused)
                .map(|key| async move {
                    let outcome = self.delete_queued_blob(&key).await;
                    (key, outcome)
                })
                .buffer_unordered(16)
                .collect()
                .await;
            let mut done = in_use;
            for (key, outcome) in outcomes {
                match outcome {
                    Ok(count) => {
                        deleted += count;
                        done.push(key);
                    }
                    Err(BlobError::NotFound(_)) => done.push(key),
                    Err(error) => {
                        tracing::warn!(%error, blob = %key, "cannot delete a purged dataset's blob; retrying later");
                        failed.insert(key);
                    }
                }
            }
            store::unqueue_blobs(&self.db, &done).await?;
        }
    }

    /// Deletes one queued key: a blob, or every blob below a key ending in `/` (a tiles
    /// dataset's stored pyramids); how many blobs went.
    async fn delete_queued_blob(&self, key: &str) -> Result<u64, BlobError> {
        if let Some(prefix) = key.strip_suffix('/') {
            return match BlobPath::parse_key(prefix) {
                Ok(path) => self.blobs.delete_prefix(&path).await,
                Err(_) => Err(BlobError::NotFound(key.to_owned())),
            };
        }
        match BlobPath::parse_key(key) {
            Ok(path) => self.blobs.delete(&path).await.map(|()| 1),
            Err(_) => Err(BlobError::NotFound(key.to_owned())),
        }
    }

    /// Marks an expired item (and the bin items below it) for removal, under its tree's lock.
    async fn mark_in_own_transaction(&self, item: &BinRow) -> BinResult<()> {
        let mut tx = self.begin_on(item).await?;
        let now = self.clock.now();
        if let Some(current) = store::find_in(&mut tx, item.item_id).await? {
            super::mark_purging_in(&mut tx, &current, now, None, self.projects.levels_max())
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// One retention pass: marks every item past retention, purges every marked item (also
    /// those a crash or a permanent delete left unfinished) and deletes their blobs. With a
    /// `budget`, stops when it is used up (`finished` false); the background job goes on.
    pub(crate) async fn run_retention(
        &self,
        budget: Option<std::time::Duration>,
    ) -> BinResult<PurgeCounts> {
        let deadline = budget.map(|budget| tokio::time::Instant::now() + budget);
        let out_of_time =
            || deadline.is_some_and(|deadline| tokio::time::Instant::now() >= deadline);
        let mut counts = PurgeCounts::default();
        let before = self.clock.now() - self.settings.retention;
        loop {
            let expired = store::expired(&self.db, before, self.settings.batch).await?;
            if expired.is_empty() {
                break;
            }
            for item in &expired {
                if out_of_time() {
                    return Ok(counts);
                }
                self.mark_in_own_transaction(item).await?;
            }
        }
        let mut busy = BTreeSet::new();
        loop {
            let limit = self
                .settings
                .batch
                .saturating_add(i64::try_from(busy.len()).unwrap_or(i64::MAX));
            let items: Vec<BinRow> = store::purging(&self.db, limit)
                .await?
                .into_iter()
                .filter(|item| !busy.contains(&item.item_id))
                .collect();
            if items.is_empty() {
                break;
            }
            for item in items {
                loop {
                    if out_of_time() {
                        return Ok(counts);
                    }
                    let (purged, progress) = self.purge_item(&item, 1).await?;
                    counts.add(purged);
                    match progress {
                        Progress::More => {}
                        Progress::Done => break,
                        Progress::Busy => {
                            busy.insert(item.item_id);
                            break;
                        }
                    }
                }
            }
        }
        counts.blobs += self.delete_queued_blobs().await?;
        counts.finished = busy.is_empty();
        Ok(counts)
    }
}

/// Where the purge of an item stands after a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Progress {
    /// Batches remain.
    More,
    /// Nothing of the item is left.
    Done,
    /// Another process is purging it.
    Busy,
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

/// The retention job, every `recycle_bin.check_interval_seconds` and whenever a permanent
/// delete leaves work. Safe on every replica at once: each batch claims its item's row (and
/// its tree's lock), and a stopped run resumes, on any replica, from the committed marks.
pub(crate) struct BinRetention(pub(crate) RecycleBinService);

#[async_trait::async_trait]
impl PeriodicTask for BinRetention {
    fn name(&self) -> &'static str {
        "recycle bin retention"
    }

    fn interval(&self) -> std::time::Duration {
        self.0.settings.check_interval
    }

    async fn run_round(&self) -> Result<RoundCounts, String> {
        let counts = self
            .0
            .run_retention(None)
            .await
            .map_err(|error| error.to_string())?;
        Ok(vec![
            ("projects purged", counts.projects),
            ("datasets purged", counts.datasets),
            ("blobs deleted", counts.blobs),
        ])
    }

    fn wake_up(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        Some(self.0.purge_wanted.clone())
    }
}

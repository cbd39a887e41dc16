//! The recycle bin (docs/recycle-bin.md): listings,
//! restore in place and elsewhere, permanent deletion, and the retention job.
//!
//! Projects and datasets do not know the bin: they report their deletions as changes, and the
//! [`Recycler`] reaction (wired at startup, see [`crate::reactions`]) records each in the bin
//! inside the transaction of the soft delete, so a deleted item and its bin entry (and its
//! event) exist together or not at all. The purge reports, in the same way, each dataset it
//! removes for good ([`BinChange`]), so that tiles can queue their pyramids' blobs with it.

pub(crate) mod model;
mod purge;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use purge::BinRetention;
pub(crate) use routes::router;

use chrono::{DateTime, Utc};

use crate::datasets::DatasetChange;
use crate::datasets::model::DatasetRow;
use crate::db::{Db, StoreError, StoreResult, Tx};
use crate::events::EventType;
use crate::ids::{DatasetId, ProjectId, TenantId};
use crate::projects::model::ProjectRow;
use crate::projects::{self, ProjectChange, Walk};
use crate::reactions::Reaction;
use model::{BinRow, ItemType};

/// A change of the recycle bin that other areas react to inside its transaction.
#[derive(Debug)]
pub(crate) enum BinChange {
    /// A dataset's record was removed for good; its content blob is queued for removal.
    DatasetPurged {
        /// Its tenant.
        tenant: TenantId,
        /// The dataset.
        dataset: DatasetId,
        /// Its format (`.tiles` datasets have stored pyramids too).
        format: String,
    },
}

/// Records deleted projects and datasets in the bin, inside their deleting transaction.
pub(crate) struct Recycler;

#[async_trait::async_trait]
impl Reaction<ProjectChange> for Recycler {
    async fn react_in(
        &self,
        tx: &mut Tx,
        change: &ProjectChange,
        _at: DateTime<Utc>,
    ) -> StoreResult<()> {
        match change {
            ProjectChange::Deleted { row, levels_max } => {
                recycle_project_in(tx, row, *levels_max).await
            }
        }
    }
}

#[async_trait::async_trait]
impl Reaction<DatasetChange> for Recycler {
    async fn react_in(
        &self,
        tx: &mut Tx,
        change: &DatasetChange,
        _at: DateTime<Utc>,
    ) -> StoreResult<()> {
        match change {
            DatasetChange::Deleted(row) => recycle_dataset_in(tx, row).await,
            DatasetChange::ContentReplaced(_) | DatasetChange::ContentWrittenAt(_) => Ok(()),
        }
    }
}

/// Queues the blob at `key` (or every blob under it, when it ends in `/`) for removal, inside
/// the transaction that stopped using it; not when a dataset, deleted or not, still names it
/// (it is queued again when that dataset is purged).
pub(crate) async fn queue_blob_removal_in(
    tx: &mut Tx,
    key: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    if crate::datasets::data_path_named_in(tx, key).await? {
        return Ok(());
    }
    store::queue_blob_in(tx, key, at).await
}

/// Queues the blob of an upload whose row was just removed for removal, inside that
/// transaction, so that a crash before the blob is deleted leaks nothing. Nothing is checked:
/// an upload is no dataset's content (and the deleter keeps any blob a dataset names).
pub(crate) async fn queue_upload_removal_in(
    tx: &mut Tx,
    key: &str,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    store::queue_blob_in(tx, key, at).await
}

/// Whether the blob at `key` is queued for removal, as `tx` sees it: a blob on its way out,
/// which nothing may start to use.
pub(crate) async fn blob_removal_queued_in(tx: &mut Tx, key: &str) -> StoreResult<bool> {
    store::blob_queued_in(tx, key).await
}

/// Takes the blob at `key` off the removal queue inside `tx`: it was written again, and what
/// is there now is new.
pub(crate) async fn unqueue_blob_removal_in(tx: &mut Tx, key: &str) -> StoreResult<()> {
    store::unqueue_blob_in(tx, key).await
}

/// Takes the blobs at `keys` off the removal queue: they are in use again.
pub(crate) async fn unqueue_blob_removals(db: &Db, keys: &[String]) -> StoreResult<()> {
    store::unqueue_blobs(db, keys).await
}

/// Records that `row` (just soft-deleted) is in the bin: its entry, with the size of what it
/// takes along, hides the dataset entries below it, and reports the event.
async fn recycle_project_in(tx: &mut Tx, row: &ProjectRow, levels_max: i64) -> StoreResult<()> {
    let deleted_at = row.deleted_at.ok_or(StoreError::Corrupt(
        "a project put in the bin without a deletion time",
    ))?;
    let live = projects::subtree_in(tx, row.id, Walk::LiveOnly, levels_max).await?;
    let storage_size = crate::datasets::live_size_in(tx, &live).await?;
    let bin = BinRow {
        item_id: row.id.as_uuid(),
        item_type: ItemType::Project,
        tenant_id: row.tenant_id,
        container_id: row.parent_id,
        name: row.name.clone(),
        access_level: Some(row.access_level),
        dataset_type: None,
        dataset_format: None,
        storage_size,
        deleted_at,
        deleted_by: row.deleted_by,
        listed: true,
        purging_since: None,
        purge_requested_by: None,
    };
    store::insert_in(tx, &bin).await?;
    list_datasets_below_in(tx, row.tenant_id, row.id, false, levels_max).await?;
    crate::events::record_in(
        tx,
        &service::event_of(EventType::ProjectRecycled, &bin, bin.deleted_by),
        deleted_at,
    )
    .await
}

/// Sets whether the dataset items below `project`, of `tenant`, are listed: hidden (false)
/// anywhere below a project just put in the bin, since they come back with it; shown again
/// (true) in the live part of the subtree of a project just restored, its ancestors live.
async fn list_datasets_below_in(
    tx: &mut Tx,
    tenant: TenantId,
    project: ProjectId,
    listed: bool,
    levels_max: i64,
) -> StoreResult<()> {
    let walk = if listed {
        Walk::LiveOnly
    } else {
        Walk::Everything
    };
    let containers = projects::subtree_in(tx, project, walk, levels_max).await?;
    store::list_datasets_in(tx, &containers, listed).await?;
    store::bump_in(tx, tenant).await
}

/// Marks `item`, and for a project every bin item in its subtree, as being removed for good,
/// by `by` (`None`: the retention). Returns false when the item is not (or no longer) in the
/// bin or already being purged.
async fn mark_purging_in(
    tx: &mut Tx,
    item: &BinRow,
    now: DateTime<Utc>,
    by: Option<uuid::Uuid>,
    levels_max: i64,
) -> StoreResult<bool> {
    if !store::mark_purging_in(tx, item.item_id, now, by).await? {
        return Ok(false);
    }
    if item.item_type == ItemType::Project {
        let project = ProjectId::from_uuid(item.item_id);
        let subtree = projects::subtree_in(tx, project, Walk::Everything, levels_max).await?;
        store::mark_purging_within_in(tx, &subtree, now, by).await?;
    }
    store::bump_in(tx, item.tenant_id).await?;
    Ok(true)
}

/// Records that `row` (just soft-deleted, in a live project) is in the bin, and reports it.
async fn recycle_dataset_in(tx: &mut Tx, row: &DatasetRow) -> StoreResult<()> {
    let deleted_at = row.deleted_at.ok_or(StoreError::Corrupt(
        "a dataset put in the bin without a deletion time",
    ))?;
    let bin = BinRow {
        item_id: row.id.as_uuid(),
        item_type: ItemType::Dataset,
        tenant_id: row.tenant_id,
        container_id: Some(row.project_id),
        name: row.name.clone(),
        access_level: None,
        dataset_type: row.dataset_type.clone(),
        dataset_format: Some(row.dataset_format.clone()),
        storage_size: i64::try_from(row.storage_size).unwrap_or(i64::MAX),
        deleted_at,
        deleted_by: row.deleted_by,
        listed: true,
        purging_since: None,
        purge_requested_by: None,
    };
    store::insert_in(tx, &bin).await?;
    crate::events::record_in(
        tx,
        &service::event_of(EventType::DatasetRecycled, &bin, bin.deleted_by),
        deleted_at,
    )
    .await
}

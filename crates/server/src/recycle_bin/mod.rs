//! The recycle bin (docs/recycle-bin.md): listings,
//! restore in place and elsewhere, permanent deletion, and the retention job.
//!
//! Projects and datasets put themselves in the bin through [`recycle_project_in`] and
//! [`recycle_dataset_in`], inside the transaction of their soft delete, so a deleted item and
//! its bin entry (and its event) exist together or not at all.

pub(crate) mod model;
mod purge;
pub(crate) mod routes;
pub(crate) mod service;
pub(crate) mod store;

pub(crate) use purge::run_retention_periodically;
pub(crate) use routes::router;

use crate::datasets::model::DatasetRow;
use crate::db::{StoreError, StoreResult, Tx};
use crate::events::EventType;
use crate::projects::model::ProjectRow;
use model::{BinRow, ItemType};

/// Records that `row` (just soft-deleted) is in the bin: its entry, with the size of what it
/// takes along, hides the dataset entries below it, and reports the event.
pub(crate) async fn recycle_project_in(
    tx: &mut Tx,
    row: &ProjectRow,
    levels_max: i64,
) -> StoreResult<()> {
    let deleted_at = row.deleted_at.ok_or(StoreError::Corrupt(
        "a project put in the bin without a deletion time",
    ))?;
    let storage_size = store::live_subtree_size_in(tx, row.id, levels_max).await?;
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
    store::list_datasets_below_in(tx, row.id, false, levels_max).await?;
    crate::events::record_in(
        tx,
        &service::event_of(EventType::ProjectRecycled, &bin, bin.deleted_by),
        deleted_at,
    )
    .await
}

/// Records that `row` (just soft-deleted, in a live project) is in the bin, and reports it.
pub(crate) async fn recycle_dataset_in(tx: &mut Tx, row: &DatasetRow) -> StoreResult<()> {
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

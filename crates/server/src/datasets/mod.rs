//! Datasets (docs/datasets.md): the files and data placed in projects. Records live in the
//! metadata store, bytes in the blob store under `dataPath`. Deleting moves a dataset to the
//! recycle bin (a `deleted_at` column) and hides it from every regular call.

pub(crate) mod checksums;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;
pub(crate) use store::RemovedDataset;

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::{Db, StoreResult, Tx};
use crate::identity::StorageMeter;
use crate::identity::model::TenantStorage;
use crate::ids::{DatasetId, ProjectId, TenantId};
use model::DatasetRow;

/// A change to datasets that other areas react to inside its transaction (see
/// [`crate::reactions`]): the recycle bin records deleted datasets, and tiles requeue the
/// pyramids drawn from content that changed.
#[derive(Debug)]
pub(crate) enum DatasetChange {
    /// The dataset `row` (as saved, with its deletion time) was just soft-deleted.
    Deleted(Box<DatasetRow>),
    /// A transfer replaced the content of a dataset (an update or an append).
    ContentReplaced(DatasetId),
    /// New content was written in place at a blob key, the content of every live dataset
    /// stored there.
    ContentWrittenAt(String),
}

/// The blob container that holds dataset content (`datasets/{tenant}/{dataset}/{file}`).
pub(crate) const DATASETS_CONTAINER: &str = "datasets";

// ---- for the recycle bin, tiles and the tenant's storage figures ----
//
// The recycle bin restores and removes dataset rows and keeps blobs that a dataset still
// names, and tiles learn which datasets a write in place changed; they reach the `datasets`
// table only through these functions. Each runs in the
// caller's transaction (or reads the pool, for plain reads), so a change of the bin and of the
// rows commit together.

/// Brings the deleted dataset `dataset` back from the recycle bin into `project`, inside `tx`:
/// clears its deletion, bumps its version and records `by` at `now` as its last change. False
/// when it was not in the bin.
pub(crate) async fn restore_in(
    tx: &mut Tx,
    dataset: DatasetId,
    project: ProjectId,
    now: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<bool> {
    store::restore_in(tx, dataset, project, now, by).await
}

/// Whether a live dataset of `tenant` named `name` is in `project`, as `tx` sees it.
pub(crate) async fn live_name_taken_in(
    tx: &mut Tx,
    tenant: TenantId,
    project: ProjectId,
    name: &str,
) -> StoreResult<bool> {
    store::live_name_taken_in(tx, tenant, project, name).await
}

/// The bytes of the live datasets placed directly in any of `projects`, as `tx` sees them.
pub(crate) async fn live_size_in(tx: &mut Tx, projects: &[ProjectId]) -> StoreResult<i64> {
    store::live_size_in(tx, projects).await
}

/// Deletes the row of `dataset` for good inside `tx`; returns it (nothing when it was gone
/// already, so a rerun removes nothing twice). Its blob is the caller's to queue.
pub(crate) async fn delete_in(tx: &mut Tx, dataset: DatasetId) -> StoreResult<Vec<RemovedDataset>> {
    store::delete_in(tx, dataset).await
}

/// Deletes for good, inside `tx`, up to `limit` dataset rows (deleted or not) placed in any of
/// `projects`; returns them (none: `projects` hold no datasets any more). Their blobs are the
/// caller's to queue.
pub(crate) async fn delete_of_projects_in(
    tx: &mut Tx,
    projects: &[ProjectId],
    limit: i64,
) -> StoreResult<Vec<RemovedDataset>> {
    store::delete_of_projects_in(tx, projects, limit).await
}

/// Whether a dataset, deleted or not, names the blob at `data_path` as its content, as `tx`
/// sees it: such a blob must stay.
pub(crate) async fn data_path_named_in(tx: &mut Tx, data_path: &str) -> StoreResult<bool> {
    store::data_path_named_in(tx, data_path).await
}

/// The live datasets whose content is the blob at `data_path`, as `tx` sees them: those a
/// write in place at that key changed ([`DatasetChange::ContentWrittenAt`]).
pub(crate) async fn live_at_data_path_in(
    tx: &mut Tx,
    data_path: &str,
) -> StoreResult<Vec<DatasetId>> {
    store::live_at_data_path_in(tx, data_path).await
}

/// Which of `data_paths` a dataset, deleted or not, names as its content: those blobs must
/// stay. A plain read of committed rows.
pub(crate) async fn data_paths_named(db: &Db, data_paths: &[String]) -> StoreResult<Vec<String>> {
    store::data_paths_named(db, data_paths).await
}

/// Measures the bytes of a tenant's datasets for its storage figures: live datasets, and
/// datasets in the recycle bin (deleted themselves, or in a project in the bin or below one).
pub(crate) struct DatasetStorage;

#[async_trait::async_trait]
impl StorageMeter for DatasetStorage {
    /// Two plain reads, the projects in the bin and the bytes by project: a project that
    /// enters or leaves the bin between them puts its datasets' bytes on the other side for
    /// that one answer (see `StorageMeters::measure`).
    async fn measure(&self, db: &Db, tenant: TenantId) -> StoreResult<TenantStorage> {
        let binned: BTreeSet<ProjectId> = crate::projects::binned_projects(db, tenant)
            .await?
            .into_iter()
            .collect();
        let mut storage = TenantStorage::default();
        for part in store::bytes_by_project(db, tenant).await? {
            let figure = if part.deleted || binned.contains(&part.project_id) {
                &mut storage.recycle_bin_bytes
            } else {
                &mut storage.datasets_bytes
            };
            *figure = figure.saturating_add(part.bytes);
        }
        Ok(storage)
    }
}

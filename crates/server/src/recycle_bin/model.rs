//! Recycle bin rows and wire shapes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::datasets::model::{DatasetDto, DatasetRow};
use crate::http::time::WireTime;
use crate::ids::{ProjectId, TenantId};
use crate::projects::access::AccessLevel;

crate::wire_enum! {
    /// What a bin item is.
    pub(crate) enum ItemType {
        /// A project or subproject, with everything below it.
        Project,
        /// A dataset.
        Dataset,
    }
}

/// One item of the bin as stored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BinRow {
    /// The project's or dataset's id.
    pub(crate) item_id: Uuid,
    /// Project or dataset.
    pub(crate) item_type: ItemType,
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// The project holding it: a dataset's project, a subproject's parent; `None` for a
    /// top-level project.
    pub(crate) container_id: Option<ProjectId>,
    /// Name when deleted.
    pub(crate) name: String,
    /// A project's access level (fixed while it is in the bin).
    pub(crate) access_level: Option<AccessLevel>,
    /// A dataset's type.
    pub(crate) dataset_type: Option<String>,
    /// A dataset's format.
    pub(crate) dataset_format: Option<String>,
    /// Bytes: a dataset's size, or the live datasets below a project when it was deleted.
    pub(crate) storage_size: i64,
    /// When it went to the bin.
    pub(crate) deleted_at: DateTime<Utc>,
    /// Who put it there.
    pub(crate) deleted_by: Option<Uuid>,
    /// False for a dataset while a project above it is in the bin.
    pub(crate) listed: bool,
    /// Set once the item is being removed for good.
    pub(crate) purging_since: Option<DateTime<Utc>>,
    /// Who asked for the removal (`None`: retention).
    pub(crate) purge_requested_by: Option<Uuid>,
}

impl BinRow {
    /// The project a dataset item lies in, or the project item itself: where the tree lock
    /// is taken.
    pub(crate) fn tree_member(&self) -> Option<ProjectId> {
        match self.item_type {
            ItemType::Project => Some(ProjectId::from_uuid(self.item_id)),
            ItemType::Dataset => self.container_id,
        }
    }
}

/// One item of a bin listing (docs/recycle-bin.md#endpoints): the common fields, plus the
/// dataset fields for datasets and the parent for subprojects.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BinItemDto {
    /// Project or dataset id.
    pub(crate) id: Uuid,
    /// Name when deleted.
    pub(crate) name: String,
    /// `Project` or `Dataset`.
    pub(crate) item_type: ItemType,
    /// Who deleted it.
    pub(crate) deleted_by: Option<Uuid>,
    /// When.
    pub(crate) deleted_at: WireTime,
    /// When the retention job removes it for good.
    pub(crate) purge_after: WireTime,
    /// Bytes (for a project, its live datasets when it was deleted).
    pub(crate) storage_size: i64,
    /// Kilobytes, rounded up.
    #[serde(rename = "sizeKB")]
    pub(crate) size_kb: i64,
    /// Dataset: its project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) project_id: Option<ProjectId>,
    /// Subproject: its parent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parent_project_id: Option<ProjectId>,
    /// Dataset type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset_type: Option<String>,
    /// Dataset format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset_format: Option<String>,
    /// Project access level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) access_level: Option<AccessLevel>,
}

impl BinItemDto {
    /// The wire form of `row`, purged by retention after `retention`.
    pub(crate) fn of(row: &BinRow, retention: chrono::TimeDelta) -> Self {
        let (project_id, parent_project_id) = match row.item_type {
            ItemType::Dataset => (row.container_id, None),
            ItemType::Project => (None, row.container_id),
        };
        Self {
            id: row.item_id,
            name: row.name.clone(),
            item_type: row.item_type,
            deleted_by: row.deleted_by,
            deleted_at: WireTime(row.deleted_at),
            purge_after: WireTime(row.deleted_at + retention),
            storage_size: row.storage_size,
            size_kb: row.storage_size.saturating_add(1023) / 1024,
            project_id,
            parent_project_id,
            dataset_type: row.dataset_type.clone(),
            dataset_format: row.dataset_format.clone(),
            access_level: row.access_level,
        }
    }
}

/// Body of the restore-elsewhere endpoints. An empty body (as some clients send) restores in
/// place. Unknown fields are refused: a misspelt `targetProjectId` would otherwise restore in
/// place, where the caller did not ask.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RestoreRequest {
    /// The live project to restore into.
    pub(crate) target_project_id: Option<ProjectId>,
}

/// What a purge run removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PurgeCounts {
    /// Projects and subprojects removed.
    pub(crate) projects: u64,
    /// Datasets removed.
    pub(crate) datasets: u64,
    /// Blobs deleted from the store.
    pub(crate) blobs: u64,
    /// Whether the run got through everything (false: it stopped at its time budget, or
    /// another process is removing an item; the background job goes on).
    pub(crate) finished: bool,
}

impl PurgeCounts {
    /// Adds `other`.
    pub(crate) fn add(&mut self, other: Self) {
        self.projects += other.projects;
        self.datasets += other.datasets;
        self.blobs += other.blobs;
    }
}

/// A deleted dataset (docs/recycle-bin.md#endpoints): its record as the metadata API shows it,
/// with when and by whom it was deleted.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeletedDatasetDto {
    /// The dataset record.
    #[serde(flatten)]
    pub(crate) dataset: DatasetDto,
    /// When it went to the bin.
    pub(crate) deleted_at: WireTime,
    /// Who deleted it.
    pub(crate) deleted_by: Option<Uuid>,
}

impl DeletedDatasetDto {
    /// The record of `dataset`, in the bin as `item`.
    pub(crate) fn of(item: &BinRow, dataset: &DatasetRow) -> Self {
        Self {
            dataset: DatasetDto::from(dataset),
            deleted_at: WireTime(item.deleted_at),
            deleted_by: item.deleted_by,
        }
    }
}

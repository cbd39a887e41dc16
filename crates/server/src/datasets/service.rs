//! Dataset rules: a dataset is visible when its project is (and neither is deleted); listing
//! and reading records needs `canListContent`, changing `canUpdateContent`, deleting
//! `canDeleteContent`; moving needs `canDeleteContent` on the source project and
//! `canCreateContent` on the destination, in the same tenant.

use std::sync::Arc;

use uuid::Uuid;

use crate::auth::Caller;
use crate::clock::Clock;
use crate::datasets::DatasetChange;
use crate::datasets::model::{DatasetRow, format_of, type_of};
use crate::datasets::store;
use crate::db::{Db, JsonText, StoreError};
use crate::ids::{DatasetId, ProjectId};
use crate::projects::service::{ProjectError, ProjectService};
use crate::reactions::Reactions;

/// What went wrong in a dataset operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum DatasetError {
    /// A field is invalid.
    #[error("{field}: {message}")]
    Invalid {
        /// Field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Not found, deleted, or not visible.
    #[error("dataset not found")]
    NotFound,
    /// The project rules refused.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// The dataset changed since it was read.
    #[error("stale row version")]
    Stale,
    /// The dataset, or a project above it, is in the recycle bin: its content is frozen.
    #[error("the dataset is in the recycle bin")]
    InRecycleBin,
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Result of dataset operations.
pub(crate) type DatasetResult<T> = Result<T, DatasetError>;

/// A dataset to create, already checked.
#[derive(Debug, Clone)]
pub(crate) struct NewDataset {
    /// Id, chosen before the content is stored so the blob path can name it.
    pub(crate) id: DatasetId,
    /// Name (usually the file name).
    pub(crate) name: String,
    /// Description.
    pub(crate) description: String,
    /// Where the bytes are.
    pub(crate) data_path: String,
    /// Size in bytes.
    pub(crate) storage_size: u64,
    /// `sha256:<hex>`.
    pub(crate) checksum: Option<String>,
    /// Free JSON object.
    pub(crate) metadata: JsonText,
    /// Free JSON object.
    pub(crate) properties: JsonText,
    /// What a conversion learnt of the content; `None` infers format and type from the name.
    pub(crate) details: Option<ContentDetails>,
}

impl NewDataset {
    /// A dataset of a file just stored as it came (`written` at `path`): no description,
    /// metadata or properties, its format and type inferred from the name.
    pub(crate) fn stored(
        id: DatasetId,
        name: String,
        path: &basin_blob::BlobPath,
        written: &basin_blob::Written,
    ) -> Self {
        Self {
            id,
            name,
            description: String::new(),
            data_path: path.key(),
            storage_size: written.meta.size,
            checksum: Some(format!("md5:{}", hex(&written.md5))),
            metadata: JsonText::empty_object(),
            properties: JsonText::empty_object(),
            details: None,
        }
    }
}

/// What the data of a dataset is, as a conversion found it.
#[derive(Debug, Clone)]
pub(crate) struct ContentDetails {
    /// Format, `.tif`.
    pub(crate) dataset_format: String,
    /// Kind, lower case (`multidimensional`).
    pub(crate) dataset_type: String,
    /// `{startTime, endTime, interval, resolution}`, when the data has time.
    pub(crate) temporal_information: Option<JsonText>,
    /// `{location, primarySpatialReference, resolution, srid}`, when the data is placed.
    pub(crate) spatial_information: Option<JsonText>,
}

/// New content of an existing dataset.
#[derive(Debug, Clone)]
pub(crate) struct NewContent {
    /// Blob key of the content.
    pub(crate) data_path: String,
    /// Size in bytes.
    pub(crate) storage_size: u64,
    /// `md5:<hex>`.
    pub(crate) checksum: Option<String>,
    /// What the content is.
    pub(crate) details: ContentDetails,
}

/// The limits datasets obey.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DatasetLimits {
    /// Most tags on one dataset.
    pub(crate) tags_max: usize,
    /// Longest tag, in characters.
    pub(crate) tag_chars_max: usize,
}

impl From<&crate::config::LimitsConfig> for DatasetLimits {
    fn from(limits: &crate::config::LimitsConfig) -> Self {
        Self {
            tags_max: limits.dataset_tags_max,
            tag_chars_max: limits.dataset_tag_chars_max,
        }
    }
}

/// Dataset operations.
#[derive(Debug, Clone)]
pub(crate) struct DatasetService {
    db: Db,
    clock: Arc<dyn Clock>,
    projects: ProjectService,
    limits: DatasetLimits,
    reactions: Reactions<DatasetChange>,
}

/// Longest dataset name.
pub(crate) const DATASET_NAME_CHARS_MAX: usize = 255;

impl DatasetService {
    /// A service over `db`, using `projects` for permissions.
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        projects: ProjectService,
        limits: DatasetLimits,
        reactions: Reactions<DatasetChange>,
    ) -> Self {
        Self {
            db,
            clock,
            projects,
            limits,
            reactions,
        }
    }

    /// The project rules datasets follow.
    pub(crate) fn projects(&self) -> &ProjectService {
        &self.projects
    }

    /// Checks a tag list against `limits.dataset_tags_max` and `limits.dataset_tag_chars_max`
    /// and returns it as stored (a JSON array).
    pub(crate) fn parse_tags(&self, tags: &[String]) -> DatasetResult<JsonText> {
        let invalid = |message: String| DatasetError::Invalid {
            field: "tags",
            message,
        };
        if tags.len() > self.limits.tags_max {
            return Err(invalid(format!(
                "a dataset has at most {} tags (limits.dataset_tags_max)",
                self.limits.tags_max
            )));
        }
        for (index, tag) in tags.iter().enumerate() {
            if tag.chars().count() > self.limits.tag_chars_max {
                return Err(invalid(format!(
                    "tags[{index}] is longer than {} characters (limits.dataset_tag_chars_max)",
                    self.limits.tag_chars_max
                )));
            }
        }
        Ok(JsonText::from_value(&serde_json::Value::from(
            tags.to_vec(),
        )))
    }

    /// Checks a dataset name (a file name; see [`crate::names`]).
    pub(crate) fn parse_name(raw: &str) -> DatasetResult<String> {
        crate::names::check_name(raw, DATASET_NAME_CHARS_MAX).map_err(|error| {
            DatasetError::Invalid {
                field: "name",
                message: error.to_string(),
            }
        })
    }

    /// The tenant of `project`, if the caller may create content there.
    pub(crate) async fn creatable(
        &self,
        caller: &Caller,
        project: ProjectId,
    ) -> DatasetResult<crate::ids::TenantId> {
        let chain = self.projects.visible(caller, project).await?;
        if !chain.capabilities().can_create_content {
            return Err(ProjectError::Forbidden(
                "you may not create content in this project".into(),
            )
            .into());
        }
        Ok(chain.target().row.tenant_id)
    }

    /// Creates a dataset in `project`; needs `canCreateContent`.
    pub(crate) async fn create(
        &self,
        caller: &Caller,
        project: ProjectId,
        input: NewDataset,
    ) -> DatasetResult<DatasetRow> {
        let tenant_id = self.creatable(caller, project).await?;
        let mut tx = self.db.begin().await?;
        let row = self
            .create_in(&mut tx, caller, tenant_id, project, input)
            .await?;
        tx.commit().await?;
        Ok(row)
    }

    /// A live dataset and the caller's capabilities on its project.
    async fn visible(
        &self,
        caller: &Caller,
        id: DatasetId,
    ) -> DatasetResult<(DatasetRow, crate::projects::access::Capabilities)> {
        let row = store::find(&self.db, id)
            .await?
            .ok_or(DatasetError::NotFound)?;
        if row.deleted_at.is_some() {
            return Err(DatasetError::NotFound);
        }
        let chain = match self.projects.visible(caller, row.project_id).await {
            Ok(chain) => chain,
            Err(ProjectError::NotFound) => return Err(DatasetError::NotFound),
            Err(error) => return Err(error.into()),
        };
        Ok((row, chain.capabilities()))
    }

    /// A dataset record.
    pub(crate) async fn get(&self, caller: &Caller, id: DatasetId) -> DatasetResult<DatasetRow> {
        let (row, capabilities) = self.visible(caller, id).await?;
        if !capabilities.can_list_content {
            return Err(DatasetError::NotFound);
        }
        Ok(row)
    }

    /// 404 when the caller cannot see dataset `id`, 403 when it can but lacks `capability` on
    /// its project: the check of a request made before its body is read.
    pub(crate) async fn authorize(
        &self,
        caller: &Caller,
        id: DatasetId,
        capability: crate::projects::access::Capability,
    ) -> DatasetResult<DatasetRow> {
        let (row, capabilities) = self.visible(caller, id).await?;
        if !capability.held_in(capabilities) {
            return Err(ProjectError::Forbidden(format!(
                "you may not {} in this project",
                capability.action()
            ))
            .into());
        }
        Ok(row)
    }

    /// A dataset whose content the caller may read (`canReadContent`).
    pub(crate) async fn readable(
        &self,
        caller: &Caller,
        id: DatasetId,
    ) -> DatasetResult<DatasetRow> {
        let (row, capabilities) = self.visible(caller, id).await?;
        if !capabilities.can_read_content {
            return Err(
                ProjectError::Forbidden("you may not read content in this project".into()).into(),
            );
        }
        Ok(row)
    }

    /// A dataset whose content the caller may replace or extend (`canUpdateContent`), outside
    /// the recycle bin.
    pub(crate) async fn content_updatable(
        &self,
        caller: &Caller,
        id: DatasetId,
    ) -> DatasetResult<DatasetRow> {
        let (row, capabilities) = self.visible(caller, id).await?;
        if !capabilities.can_update_content {
            return Err(ProjectError::Forbidden(
                "you may not update content in this project".into(),
            )
            .into());
        }
        Ok(row)
    }

    /// A dataset as stored, deleted or not (the recycle bin shows deleted records).
    pub(crate) async fn find_any(&self, id: DatasetId) -> DatasetResult<Option<DatasetRow>> {
        Ok(store::find(&self.db, id).await?)
    }

    /// A dataset as stored, for workers acting on a request checked when it was made. `None`
    /// when it is gone or in the recycle bin (itself or a project above it).
    pub(crate) async fn live(&self, id: DatasetId) -> DatasetResult<Option<DatasetRow>> {
        let Some(row) = store::find(&self.db, id).await? else {
            return Ok(None);
        };
        if row.deleted_at.is_some() || self.projects.in_recycle_bin(row.project_id).await? {
            return Ok(None);
        }
        Ok(Some(row))
    }

    /// Whether datasets may be created in `project` now: it exists and is not in the recycle
    /// bin. For workers publishing a result checked when the transfer was queued.
    pub(crate) async fn project_is_live(&self, project: ProjectId) -> DatasetResult<bool> {
        match self.projects.in_recycle_bin(project).await {
            Ok(in_bin) => Ok(!in_bin),
            Err(ProjectError::NotFound) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// Replaces a live dataset's content inside `tx`: new blob, size, checksum and extents, a
    /// new row version, and the reactions to new content (tile pyramids drawn from it are
    /// rendered again). Returns the blob key of the content replaced; `None` when the dataset
    /// is gone or deleted.
    pub(crate) async fn replace_content_in(
        &self,
        tx: &mut crate::db::Tx,
        id: DatasetId,
        content: &NewContent,
        by: Uuid,
    ) -> DatasetResult<Option<String>> {
        let at = self.clock.now();
        let replaced = store::replace_content_in(tx, id, content, at, by).await?;
        if replaced.is_some() {
            self.reactions
                .run_in(tx, &DatasetChange::ContentReplaced(id), at)
                .await?;
        }
        Ok(replaced)
    }

    /// Datasets placed directly in `project` (one level, docs/projects.md#listings), by name.
    pub(crate) async fn list(
        &self,
        caller: &Caller,
        project: ProjectId,
        name_prefix: Option<&str>,
        after: Option<(crate::db::SortValue, Uuid)>,
        fetch: i64,
    ) -> DatasetResult<Vec<DatasetRow>> {
        let chain = self.projects.visible(caller, project).await?;
        if !chain.capabilities().can_list_content {
            return Err(
                ProjectError::Forbidden("you may not list content in this project".into()).into(),
            );
        }
        Ok(store::list(&self.db, project, name_prefix, after, fetch).await?)
    }

    /// Live datasets of the caller's tenant whose format is one of `formats` and whose content
    /// the caller may read, optionally only those placed directly in `project`, by name then
    /// id, among the next `scan` candidates after `after`. Returns them and, when more
    /// candidates may follow, the position of the last one looked at, to go on from
    /// (candidates the caller may not read are skipped).
    pub(crate) async fn readable_of_formats(
        &self,
        caller: &Caller,
        project: Option<ProjectId>,
        formats: &[&str],
        after: Option<(crate::db::SortValue, Uuid)>,
        scan: i64,
    ) -> DatasetResult<(Vec<DatasetRow>, Option<(crate::db::SortValue, Uuid)>)> {
        let Some(tenant) = caller.tenant_id() else {
            return Ok((Vec::new(), None));
        };
        if let Some(project) = project {
            let chain = self.projects.visible(caller, project).await?;
            if !chain.capabilities().can_list_content {
                return Err(ProjectError::Forbidden(
                    "you may not list content in this project".into(),
                )
                .into());
            }
        }
        let candidates =
            store::list_of_formats(&self.db, tenant, project, formats, after, scan).await?;
        let more = i64::try_from(candidates.len()).unwrap_or(i64::MAX) >= scan;
        let last = candidates.last().filter(|_| more).map(|row| {
            (
                crate::db::SortValue::Text(row.name.clone()),
                row.id.as_uuid(),
            )
        });
        let mut readable = Vec::with_capacity(candidates.len());
        for row in candidates {
            match self.readable(caller, row.id).await {
                Ok(row) => readable.push(row),
                Err(DatasetError::NotFound | DatasetError::Project(_)) => {}
                Err(error) => return Err(error),
            }
        }
        Ok((readable, last))
    }

    async fn write(
        &self,
        caller: &Caller,
        mut row: DatasetRow,
        expected: Option<i64>,
    ) -> DatasetResult<DatasetRow> {
        row.updated_at = self.clock.now();
        row.updated_by = Some(caller.id);
        let version = store::update(&self.db, &row, expected)
            .await?
            .ok_or(DatasetError::Stale)?;
        row.row_version = version;
        Ok(row)
    }

    /// Updates name, description, metadata, properties or tags of a dataset in `project`.
    pub(crate) async fn update(
        &self,
        caller: &Caller,
        project: ProjectId,
        id: DatasetId,
        change: impl FnOnce(&mut DatasetRow),
        expected: Option<i64>,
    ) -> DatasetResult<DatasetRow> {
        let (mut row, capabilities) = self.visible(caller, id).await?;
        if row.project_id != project {
            return Err(DatasetError::NotFound);
        }
        if !capabilities.can_update_content {
            return Err(ProjectError::Forbidden(
                "you may not update content in this project".into(),
            )
            .into());
        }
        change(&mut row);
        self.write(caller, row, expected).await
    }

    /// Moves a dataset to another project of the same tenant.
    pub(crate) async fn move_to(
        &self,
        caller: &Caller,
        id: DatasetId,
        target: ProjectId,
    ) -> DatasetResult<DatasetRow> {
        let (mut row, capabilities) = self.visible(caller, id).await?;
        let destination = self.projects.visible(caller, target).await?;
        if !capabilities.can_delete_content {
            return Err(ProjectError::Forbidden(
                "moving needs delete-content permission on the current project".into(),
            )
            .into());
        }
        if !destination.capabilities().can_create_content {
            return Err(ProjectError::Forbidden(
                "moving needs create-content permission on the target project".into(),
            )
            .into());
        }
        if destination.target().row.tenant_id != row.tenant_id {
            return Err(DatasetError::Invalid {
                field: "targetProjectId",
                message: "datasets move only between projects of the same tenant".into(),
            });
        }
        row.project_id = target;
        self.write(caller, row, None).await
    }

    /// Moves a dataset to the recycle bin. When `project` is given (the path names it), the
    /// dataset must be in it. The rules are checked again inside the write transaction, under
    /// the lock of the dataset's tree, so that a project deleted at the same moment hides the
    /// dataset's bin entry as it should.
    pub(crate) async fn delete(
        &self,
        caller: &Caller,
        project: Option<ProjectId>,
        id: DatasetId,
    ) -> DatasetResult<()> {
        let (row, _) = self.visible(caller, id).await?;
        if project.is_some_and(|project| project != row.project_id) {
            return Err(DatasetError::NotFound);
        }
        let mut tx = self.db.begin().await?;
        self.projects.lock_tree_in(&mut tx, row.project_id).await?;
        let chain = match self
            .projects
            .visible_in(&mut tx, caller, row.project_id)
            .await
        {
            Ok(chain) => chain,
            Err(ProjectError::NotFound) => return Err(DatasetError::NotFound),
            Err(error) => return Err(error.into()),
        };
        if !chain.capabilities().can_delete_content {
            return Err(ProjectError::Forbidden(
                "you may not delete content in this project".into(),
            )
            .into());
        }
        if !self.delete_in(&mut tx, caller, row.project_id, id).await? {
            return Err(DatasetError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }
}

impl DatasetService {
    /// Refuses reads and writes of content of the recycle bin: when a dataset stored at
    /// `data_path` is deleted, or lies in a deleted project, its blob is neither served nor
    /// changed, whatever URL was handed out before (a restore makes those URLs work again).
    /// A path of the datasets container that no dataset names belonged to a dataset removed
    /// for good: writing there would leave a blob nothing reaches. Other paths no dataset
    /// names (uploads) are open to their URLs.
    pub(crate) async fn check_content_live(&self, data_path: &str) -> DatasetResult<()> {
        let rows = store::find_by_data_path(&self.db, data_path).await?;
        if rows.is_empty() && is_dataset_content(data_path) {
            return Err(DatasetError::InRecycleBin);
        }
        for row in rows {
            if row.deleted_at.is_some() || self.projects.in_recycle_bin(row.project_id).await? {
                return Err(DatasetError::InRecycleBin);
            }
        }
        Ok(())
    }

    /// Whether content just written at `data_path` is reachable: some dataset names it, or it
    /// lies outside the datasets container. False when its dataset was removed for good while
    /// the write ran; the writer then removes what it wrote.
    pub(crate) async fn content_reachable(&self, data_path: &str) -> DatasetResult<bool> {
        Ok(!is_dataset_content(data_path)
            || !store::find_by_data_path(&self.db, data_path)
                .await?
                .is_empty())
    }

    /// Records the checksum of the content at `data_path` for datasets stored there without
    /// one; content replaced meanwhile is left alone. Not a change of the dataset: its
    /// `rowVersion` stays.
    pub(crate) async fn checksum_found(
        &self,
        data_path: &str,
        checksum: &str,
    ) -> DatasetResult<()> {
        store::set_missing_checksum(&self.db, data_path, checksum).await?;
        Ok(())
    }

    /// Records that content was written at `data_path` (a blob key): datasets stored there
    /// get its size and checksum. Content written elsewhere changes nothing.
    pub(crate) async fn content_written(
        &self,
        data_path: &str,
        size: u64,
        md5: [u8; 16],
    ) -> DatasetResult<()> {
        let checksum = format!("md5:{}", hex(&md5));
        let at = self.clock.now();
        let mut tx = self.db.begin().await?;
        let changed = store::set_content_in(&mut tx, data_path, size, &checksum, at).await?;
        if changed > 0 {
            let change = DatasetChange::ContentWrittenAt(data_path.to_owned());
            self.reactions.run_in(&mut tx, &change, at).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// Whether `data_path` lies in the datasets container, where only datasets' content lives.
fn is_dataset_content(data_path: &str) -> bool {
    data_path
        .strip_prefix(crate::datasets::DATASETS_CONTAINER)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

impl DatasetService {
    /// Whether `project` holds a live dataset named `name`.
    pub(crate) async fn name_taken(&self, project: ProjectId, name: &str) -> DatasetResult<bool> {
        Ok(store::name_taken(&self.db, project, name).await?)
    }

    /// A live dataset of `project` named `name`, inside `tx`.
    pub(crate) async fn find_by_name_in(
        &self,
        tx: &mut crate::db::Tx,
        project: ProjectId,
        name: &str,
    ) -> DatasetResult<Option<DatasetRow>> {
        Ok(store::find_by_name_in(tx, project, name).await?)
    }

    /// Creates a dataset record inside `tx`; the caller has checked `canCreateContent`.
    pub(crate) async fn create_in(
        &self,
        tx: &mut crate::db::Tx,
        caller: &Caller,
        tenant_id: crate::ids::TenantId,
        project: ProjectId,
        input: NewDataset,
    ) -> DatasetResult<DatasetRow> {
        let now = self.clock.now();
        let details = input.details.unwrap_or_else(|| {
            let format = format_of(&input.name);
            ContentDetails {
                dataset_type: type_of(&format).wire(),
                dataset_format: format,
                temporal_information: None,
                spatial_information: None,
            }
        });
        let row = DatasetRow {
            id: input.id,
            tenant_id,
            project_id: project,
            dataset_type: Some(details.dataset_type),
            dataset_format: details.dataset_format,
            name: input.name,
            description: input.description,
            data_path: input.data_path,
            metadata: input.metadata,
            properties: input.properties,
            tags: JsonText::empty_array(),
            temporal_information: details.temporal_information,
            spatial_information: details.spatial_information,
            storage_size: input.storage_size,
            checksum: input.checksum,
            row_version: 1,
            created_at: now,
            created_by: Some(caller.id),
            updated_at: now,
            updated_by: Some(caller.id),
            deleted_at: None,
            deleted_by: None,
        };
        store::insert(tx, &row).await?;
        Ok(row)
    }

    /// Moves a live dataset of `project` to the recycle bin inside `tx`; the caller has
    /// checked permissions and holds the tree's lock. False when it was not there.
    pub(crate) async fn delete_in(
        &self,
        tx: &mut crate::db::Tx,
        caller: &Caller,
        project: ProjectId,
        id: DatasetId,
    ) -> DatasetResult<bool> {
        let Some(row) = store::soft_delete_in(tx, id, project, self.clock.now(), caller.id).await?
        else {
            return Ok(false);
        };
        let at = row.deleted_at.unwrap_or_else(|| self.clock.now());
        self.reactions
            .run_in(tx, &DatasetChange::Deleted(Box::new(row)), at)
            .await?;
        Ok(true)
    }
}

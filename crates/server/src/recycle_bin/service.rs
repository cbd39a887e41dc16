//! Recycle bin rules (docs/recycle-bin.md): who sees which items, restore in place and
//! elsewhere, and permanent deletion. Every change runs in one write transaction holding the
//! lock of each tree it touches, and checks its rules on what that transaction sees.
//!
//! Visibility: an item is shown to a caller who may delete it: a dataset to whoever may
//! delete content in its project; a project to its Owners (canDelete) and, for a subproject,
//! to whoever may delete content in its parent. Roles are computed as for live projects
//! (docs/permissions.md), ignoring that a level is in the bin.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use uuid::Uuid;

use crate::auth::{Caller, TenantStanding};
use crate::clock::Clock;
use crate::config::RecycleBinConfig;
use crate::datasets::model::DatasetRow;
use crate::datasets::service::DatasetService;
use crate::db::{Db, StoreError, Tx};
use crate::events::{EventType, NewEvent};
use crate::ids::{DatasetId, ProjectId, TenantId};
use crate::projects;
use crate::projects::access::{AccessLevel, ProjectRole};
use crate::projects::access::{Capabilities, implicit_role};
use crate::projects::service::{Chain, ProjectError, ProjectService};
use crate::reactions::Reactions;
use crate::recycle_bin::BinChange;
use crate::recycle_bin::model::{BinRow, ItemType, PurgeCounts};
use crate::recycle_bin::store::{self, BinVisibility};
pub(crate) use crate::recycle_bin::store::{BinScope, BinSort};
use basin_blob::BlobStore;

/// What went wrong in a bin operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum BinError {
    /// Not in the bin, being purged, or not visible to the caller.
    #[error("not found in the recycle bin")]
    NotFound,
    /// A project rule answered (not found, forbidden, limits).
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// The request conflicts with the state of the tree (409).
    #[error("{detail}")]
    Conflict {
        /// Stable kind.
        kind: &'static str,
        /// What conflicts.
        detail: String,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Result of bin operations.
pub(crate) type BinResult<T> = Result<T, BinError>;

/// How the bin keeps and removes items.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BinSettings {
    /// Items older than this are removed by the retention job.
    pub(crate) retention: TimeDelta,
    /// How often the retention job runs.
    pub(crate) check_interval: std::time::Duration,
    /// Rows one purge transaction removes at most.
    pub(crate) batch: i64,
}

impl From<&RecycleBinConfig> for BinSettings {
    fn from(config: &RecycleBinConfig) -> Self {
        Self {
            retention: TimeDelta::days(i64::from(config.retention_days)),
            check_interval: config.retention_check_seconds,
            batch: i64::from(config.purge_batch_size.get()),
        }
    }
}

/// Recycle bin operations.
#[derive(Debug, Clone)]
pub(crate) struct RecycleBinService {
    pub(super) db: Db,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) projects: ProjectService,
    pub(super) datasets: DatasetService,
    pub(super) blobs: Arc<dyn BlobStore>,
    pub(super) settings: BinSettings,
    /// Woken when a permanent delete leaves work for the background purge.
    pub(super) purge_wanted: Arc<tokio::sync::Notify>,
    /// Reactions to what the purge removes (tiles queue their pyramids' blobs).
    pub(super) reactions: Reactions<BinChange>,
    /// Listing totals by tenant, bin version, visibility and scope (see [`TotalsCache`]).
    totals: Arc<TotalsCache>,
}

/// Totals of bin listings already counted. Counting a bin of 100,000 items reads 100,000
/// index entries, far more than the page; the total only changes when the tenant's bin
/// version does (bumped in every transaction that changes what listings show), so it is kept
/// under that version. A cache only: each process keeps its own, and a new version or another
/// caller's view simply counts again.
#[derive(Debug, Default)]
struct TotalsCache {
    entries: std::sync::Mutex<std::collections::HashMap<u64, u64>>,
}

/// Totals kept at most; the cache starts over beyond.
const TOTALS_CACHED_MAX: usize = 10_000;

impl TotalsCache {
    fn get(&self, key: u64) -> Option<u64> {
        self.entries.lock().ok()?.get(&key).copied()
    }

    fn put(&self, key: u64, total: u64) {
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= TOTALS_CACHED_MAX {
                entries.clear();
            }
            entries.insert(key, total);
        }
    }
}

/// The event about `row`, by `user`.
pub(crate) fn event_of(kind: EventType, row: &BinRow, user: Option<Uuid>) -> NewEvent {
    let place = match row.item_type {
        ItemType::Project => "parentProjectId",
        ItemType::Dataset => "projectId",
    };
    let mut data = serde_json::json!({
        "name": row.name,
        "itemType": row.item_type,
        "deletedAt": row.deleted_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "storageSize": row.storage_size,
    });
    if let (Some(object), Some(container)) = (data.as_object_mut(), row.container_id) {
        object.insert(place.to_owned(), serde_json::json!(container));
    }
    NewEvent {
        kind,
        tenant: row.tenant_id,
        project: match row.item_type {
            ItemType::Project => Some(ProjectId::from_uuid(row.item_id)),
            ItemType::Dataset => row.container_id,
        },
        user,
        resource: row.item_id,
        data,
    }
}

/// Whether the caller's roles on an item's chain let it manage the item in the bin.
fn may_manage(item_type: ItemType, chain: &Chain) -> bool {
    match item_type {
        ItemType::Dataset => chain.capabilities().can_delete_content,
        ItemType::Project => {
            chain.capabilities().can_delete
                || chain
                    .parent()
                    .is_some_and(|parent| Capabilities::of(parent.role).can_delete_content)
        }
    }
}

impl RecycleBinService {
    /// A bin over `db`.
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        datasets: DatasetService,
        blobs: Arc<dyn BlobStore>,
        settings: BinSettings,
        reactions: Reactions<BinChange>,
    ) -> Self {
        Self {
            reactions,
            db,
            clock,
            projects: datasets.projects().clone(),
            datasets,
            blobs,
            settings,
            purge_wanted: Arc::new(tokio::sync::Notify::new()),
            totals: Arc::new(TotalsCache::default()),
        }
    }

    /// Asks the background purge to run now.
    pub(crate) fn wake_purge(&self) {
        self.purge_wanted.notify_one();
    }

    /// How long items stay.
    pub(crate) fn retention(&self) -> TimeDelta {
        self.settings.retention
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    // ---- listings ----

    /// What the caller may see in `tenant`'s bin.
    async fn visibility(&self, caller: &Caller, tenant: TenantId) -> BinResult<BinVisibility> {
        let containers = store::containers(&self.db, tenant).await?;
        let roles = self.projects.roles_on(caller, tenant, &containers).await?;
        let allowed: Vec<ProjectId> = containers
            .iter()
            .copied()
            .filter(|id| {
                roles
                    .get(id)
                    .is_some_and(|role| Capabilities::of(*role).can_delete_content)
            })
            .collect();
        let standing = caller.standing(tenant);
        Ok(BinVisibility {
            containers: (allowed.len() < containers.len()).then_some(allowed),
            owned: self.projects.owned_by(caller).await?,
            owner_levels: AccessLevel::ALL
                .iter()
                .copied()
                .filter(|level| implicit_role(standing, *level) == Some(ProjectRole::Owner))
                .collect(),
        })
    }

    /// One offset page of the caller's view of its tenant's bin, and the total.
    pub(crate) async fn list(
        &self,
        caller: &Caller,
        scope: &BinScope,
        (sort, descending): (BinSort, bool),
        (offset, limit): (u32, u32),
    ) -> BinResult<(Vec<BinRow>, u64)> {
        let Some(tenant) = caller.tenant_id() else {
            return Ok((Vec::new(), 0));
        };
        if caller.standing(tenant) == TenantStanding::Outsider {
            return Ok((Vec::new(), 0));
        }
        let version = store::version(&self.db, tenant).await?;
        let visible = self.visibility(caller, tenant).await?;
        let key = totals_key(tenant, version, scope, &visible);
        let total = match self.totals.get(key) {
            Some(total) => total,
            None => {
                let total = store::count(&self.db, tenant, scope, &visible).await?;
                self.totals.put(key, total);
                total
            }
        };
        let rows = store::list(
            &self.db, tenant, scope, &visible, sort, descending, offset, limit,
        )
        .await?;
        Ok((rows, total))
    }

    /// The deleted items directly in `project`, which the caller must be able to see (live
    /// or in the bin).
    pub(crate) async fn list_in(
        &self,
        caller: &Caller,
        project: ProjectId,
        item_type: ItemType,
        sort: (BinSort, bool),
        window: (u32, u32),
    ) -> BinResult<(Vec<BinRow>, u64)> {
        let chain = self.projects.load_chain(caller, project).await?;
        if chain.target().role.is_none() || caller.tenant_id() != Some(chain.target().row.tenant_id)
        {
            return Err(ProjectError::NotFound.into());
        }
        let scope = BinScope {
            item_type: Some(item_type),
            container: Some(project),
            deleted_by: None,
        };
        self.list(caller, &scope, sort, window).await
    }

    // ---- one item ----

    /// 404 when the caller cannot see the bin item, 403 when it may not manage it: the check
    /// of a restore made before its body is read. Like the restore itself it also finds items
    /// that are not listed (below a deleted project), whose restore is refused with a reason.
    pub(crate) async fn authorize_restore(
        &self,
        caller: &Caller,
        (item_type, id, container): (ItemType, Uuid, Option<ProjectId>),
    ) -> BinResult<()> {
        let row = store::find(&self.db, id)
            .await?
            .filter(|row| row.item_type == item_type && row.purging_since.is_none())
            .ok_or(BinError::NotFound)?;
        self.check_item(caller, row, container, None).await?;
        Ok(())
    }

    /// A listed item of the caller's view, with the chain that decides it (a project's own, a
    /// dataset's project's). `container`, when the path names one, must be the item's.
    async fn item(
        &self,
        caller: &Caller,
        item_type: ItemType,
        id: Uuid,
        container: Option<ProjectId>,
    ) -> BinResult<(BinRow, Chain)> {
        let row = store::find(&self.db, id)
            .await?
            .filter(|row| row.item_type == item_type && row.listed && row.purging_since.is_none())
            .ok_or(BinError::NotFound)?;
        self.check_item(caller, row, container, None).await
    }

    /// The rules of [`Self::item`] on a row read by the caller (in or out of a transaction).
    async fn check_item(
        &self,
        caller: &Caller,
        row: BinRow,
        container: Option<ProjectId>,
        tx: Option<&mut Tx>,
    ) -> BinResult<(BinRow, Chain)> {
        if container.is_some_and(|container| Some(container) != row.container_id) {
            return Err(BinError::NotFound);
        }
        let anchor = row.tree_member().ok_or(BinError::NotFound)?;
        let chain = match tx {
            Some(tx) => self.projects.chain_in(tx, caller, anchor).await,
            None => self.projects.load_chain(caller, anchor).await,
        };
        let chain = match chain {
            Ok(chain) => chain,
            Err(ProjectError::NotFound) => return Err(BinError::NotFound),
            Err(error) => return Err(error.into()),
        };
        if chain.target().role.is_none() && !may_manage(row.item_type, &chain) {
            return Err(BinError::NotFound);
        }
        if !may_manage(row.item_type, &chain) {
            return Err(ProjectError::Forbidden(match row.item_type {
                ItemType::Project => "managing a deleted project needs delete permission on it or delete-content on its parent".into(),
                ItemType::Dataset => "managing a deleted dataset needs delete-content permission on its project".into(),
            })
            .into());
        }
        Ok((row, chain))
    }

    /// A deleted project the caller may manage, with its chain.
    pub(crate) async fn project(
        &self,
        caller: &Caller,
        id: ProjectId,
    ) -> BinResult<(BinRow, Chain)> {
        self.item(caller, ItemType::Project, id.as_uuid(), None)
            .await
    }

    /// A deleted dataset the caller may manage, with its record.
    pub(crate) async fn dataset(
        &self,
        caller: &Caller,
        project: Option<ProjectId>,
        id: DatasetId,
    ) -> BinResult<(BinRow, DatasetRow)> {
        let (row, _) = self
            .item(caller, ItemType::Dataset, id.as_uuid(), project)
            .await?;
        let record = self
            .datasets
            .find_any(id)
            .await
            .map_err(|_| BinError::NotFound)?
            .ok_or(BinError::NotFound)?;
        Ok((row, record))
    }

    /// Begins the write transaction of a change to a bin item: locks the item's tree (and the
    /// tree of `target`), reads the item inside the transaction (not being purged; listed when
    /// `listed_only`) and checks that the caller may manage it.
    async fn begin_item_change(
        &self,
        caller: &Caller,
        (item_type, id, container): (ItemType, Uuid, Option<ProjectId>),
        target: Option<ProjectId>,
        listed_only: bool,
    ) -> BinResult<(Tx, BinRow, Chain)> {
        // Read outside the transaction only to learn which trees to lock.
        let first = store::find(&self.db, id).await?.ok_or(BinError::NotFound)?;
        let anchor = first.tree_member().ok_or(BinError::NotFound)?;
        let mut tx = self.db.begin().await?;
        let mut trees = vec![anchor];
        trees.extend(target);
        self.projects.lock_trees_in(&mut tx, &trees).await?;
        let row = store::find_in(&mut tx, id)
            .await?
            .filter(|row| {
                row.item_type == item_type
                    && row.purging_since.is_none()
                    && (row.listed || !listed_only)
            })
            .ok_or(BinError::NotFound)?;
        let (row, chain) = self
            .check_item(caller, row, container, Some(&mut tx))
            .await?;
        Ok((tx, row, chain))
    }

    // ---- restore ----

    /// Restores an item: in place (`target` is `None`), or into `target`.
    pub(crate) async fn restore(
        &self,
        caller: &Caller,
        item_type: ItemType,
        id: Uuid,
        container: Option<ProjectId>,
        target: Option<ProjectId>,
    ) -> BinResult<()> {
        let (mut tx, row, chain) = self
            .begin_item_change(caller, (item_type, id, container), target, false)
            .await?;
        match (row.item_type, target) {
            (ItemType::Project, None) => self.restore_path_in(&mut tx, caller, &chain).await?,
            (ItemType::Project, Some(target)) => {
                self.restore_project_elsewhere_in(&mut tx, caller, &row, &chain, target)
                    .await?;
            }
            (ItemType::Dataset, target) => {
                self.restore_dataset_in(&mut tx, caller, &row, &chain, target)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Restores every project in the bin on the path from the root to the chain's target,
    /// checking each level (docs/recycle-bin.md#restore-in-place).
    async fn restore_path_in(&self, tx: &mut Tx, caller: &Caller, chain: &Chain) -> BinResult<()> {
        let nodes: Vec<_> = chain.nodes().collect();
        let mut restored = Vec::new();
        for (index, node) in nodes.iter().enumerate() {
            if node.row.deleted_at.is_none() {
                continue;
            }
            let parent = index.checked_sub(1).and_then(|up| nodes.get(up));
            let allowed = Capabilities::of(node.role).can_delete
                || parent.is_some_and(|parent| Capabilities::of(parent.role).can_delete_content);
            if !allowed {
                return Err(ProjectError::Forbidden(format!(
                    "restoring needs delete permission on '{}' (in the recycle bin on this path) or delete-content on its parent; restore elsewhere instead",
                    node.row.name
                ))
                .into());
            }
            let bin = store::find_in(tx, node.row.id.as_uuid()).await?;
            if bin.as_ref().is_some_and(|bin| bin.purging_since.is_some()) {
                return Err(BinError::Conflict {
                    kind: "purge-in-progress",
                    detail: format!(
                        "'{}' on this path is being deleted permanently",
                        node.row.name
                    ),
                });
            }
            self.check_name_free(
                tx,
                ItemType::Project,
                node.row.tenant_id,
                node.row.parent_id,
                &node.row.name,
            )
            .await?;
            restored.push((node.row.id, bin));
        }
        let now = self.now();
        let tenant = chain.target().row.tenant_id;
        for (id, bin) in &restored {
            projects::restore_in(tx, *id, now, caller.id).await?;
            store::remove_in(tx, tenant, id.as_uuid()).await?;
            if let Some(bin) = bin {
                crate::events::record_in(
                    tx,
                    &event_of(EventType::ProjectRestored, bin, Some(caller.id)),
                    now,
                )
                .await?;
            }
        }
        if let Some((top, _)) = restored.first() {
            super::list_datasets_below_in(tx, tenant, *top, true, self.projects.levels_max())
                .await?;
        }
        Ok(())
    }

    /// Refuses a restore onto a name a live item of the same kind holds at the destination.
    async fn check_name_free(
        &self,
        tx: &mut Tx,
        item_type: ItemType,
        tenant: TenantId,
        container: Option<ProjectId>,
        name: &str,
    ) -> BinResult<()> {
        let taken = match (item_type, container) {
            (ItemType::Project, parent) => {
                projects::live_name_taken_in(tx, tenant, parent, name).await?
            }
            (ItemType::Dataset, Some(project)) => {
                crate::datasets::live_name_taken_in(tx, tenant, project, name).await?
            }
            // Every dataset is in a project: none is at the top level.
            (ItemType::Dataset, None) => false,
        };
        if taken {
            let kind = match item_type {
                ItemType::Project => "project",
                ItemType::Dataset => "dataset",
            };
            return Err(BinError::Conflict {
                kind: "restore-name-taken",
                detail: format!(
                    "a {kind} named '{name}' already exists where this one would be restored; rename or move it, or restore elsewhere (nothing is overwritten)"
                ),
            });
        }
        Ok(())
    }

    /// The live project `target` as the destination of a restore elsewhere, checked.
    async fn destination_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        row: &BinRow,
        target: ProjectId,
    ) -> BinResult<Chain> {
        let destination = match self.projects.chain_in(tx, caller, target).await {
            Ok(chain) => chain,
            Err(ProjectError::NotFound) => return Err(target_not_found()),
            Err(error) => return Err(error.into()),
        };
        if destination.target().role.is_none() {
            return Err(target_not_found());
        }
        if destination.target().row.tenant_id != row.tenant_id {
            return Err(BinError::Conflict {
                kind: "restore-across-tenants",
                detail: "items are restored only into projects of their own tenant".into(),
            });
        }
        if row.item_type == ItemType::Project
            && destination
                .nodes()
                .any(|node| node.row.id.as_uuid() == row.item_id)
        {
            return Err(BinError::Conflict {
                kind: "restore-loop",
                detail: "a project cannot be restored into itself or below itself".into(),
            });
        }
        if destination.target().deleted {
            return Err(BinError::Conflict {
                kind: "target-in-recycle-bin",
                detail: "the target project is in the recycle bin (itself or a project above it); restore it first or choose another".into(),
            });
        }
        if !destination.capabilities().can_create_content {
            return Err(ProjectError::Forbidden(
                "restoring elsewhere needs create-content permission on the target project".into(),
            )
            .into());
        }
        Ok(destination)
    }

    /// Restores a deleted project under `target`: its subtree moves with it.
    async fn restore_project_elsewhere_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        row: &BinRow,
        chain: &Chain,
        target: ProjectId,
    ) -> BinResult<()> {
        let destination = self.destination_in(tx, caller, row, target).await?;
        let project = &chain.target().row;
        let parent = &destination.target().row;
        let new_depth = parent.depth.saturating_add(1);
        let delta = new_depth.saturating_sub(project.depth);
        let levels = self.projects.levels_max();
        let deepest = self.projects.subtree_depth_max_in(tx, project.id).await?;
        let depth_max = self.projects.limits().depth_max;
        if deepest.saturating_add(delta) > depth_max {
            return Err(ProjectError::Rejected {
                kind: "depth-limit",
                detail: format!(
                    "restored there the tree would nest deeper than {depth_max} levels (limits.project_depth_max)"
                ),
            }
            .into());
        }
        self.check_name_free(
            tx,
            ItemType::Project,
            row.tenant_id,
            Some(target),
            &row.name,
        )
        .await?;
        self.projects
            .keep_members_in(tx, chain, &destination)
            .await?;
        projects::move_subtree_in(tx, project.id, (target, parent.root_id), delta, levels).await?;
        let now = self.now();
        projects::restore_in(tx, project.id, now, caller.id).await?;
        store::remove_in(tx, row.tenant_id, row.item_id).await?;
        super::list_datasets_below_in(tx, row.tenant_id, project.id, true, levels).await?;
        let mut event = event_of(EventType::ProjectRestored, row, Some(caller.id));
        if let Some(data) = event.data.as_object_mut() {
            data.insert("restoredTo".into(), serde_json::json!(target));
        }
        crate::events::record_in(tx, &event, now).await?;
        Ok(())
    }

    /// Restores a deleted dataset in place or into `target`. Its project must be live: a
    /// dataset of a project in the bin returns with that project, not alone.
    async fn restore_dataset_in(
        &self,
        tx: &mut Tx,
        caller: &Caller,
        row: &BinRow,
        chain: &Chain,
        target: Option<ProjectId>,
    ) -> BinResult<()> {
        if chain.target().deleted {
            return Err(BinError::Conflict {
                kind: "container-in-recycle-bin",
                detail: "the dataset's project is in the recycle bin; restore the project and the dataset returns with it".into(),
            });
        }
        let into = match target {
            Some(target) => {
                self.destination_in(tx, caller, row, target).await?;
                target
            }
            None => chain.target().row.id,
        };
        self.check_name_free(tx, ItemType::Dataset, row.tenant_id, Some(into), &row.name)
            .await?;
        let now = self.now();
        let dataset = DatasetId::from_uuid(row.item_id);
        if !crate::datasets::restore_in(tx, dataset, into, now, caller.id).await? {
            return Err(BinError::NotFound);
        }
        store::remove_in(tx, row.tenant_id, row.item_id).await?;
        let mut event = event_of(EventType::DatasetRestored, row, Some(caller.id));
        if let (Some(data), Some(_)) = (event.data.as_object_mut(), target) {
            data.insert("restoredTo".into(), serde_json::json!(into));
        }
        event.project = Some(into);
        crate::events::record_in(tx, &event, now).await?;
        Ok(())
    }

    // ---- permanent deletion ----

    /// Removes an item for good: from now on it is gone for users; its rows, blobs and
    /// subtree are removed here when small, or by the background purge (which resumes after a
    /// crash).
    pub(crate) async fn purge(
        &self,
        caller: &Caller,
        item_type: ItemType,
        id: Uuid,
        container: Option<ProjectId>,
    ) -> BinResult<PurgeCounts> {
        let (mut tx, row, _) = self
            .begin_item_change(caller, (item_type, id, container), None, true)
            .await?;
        let now = self.now();
        if !super::mark_purging_in(
            &mut tx,
            &row,
            now,
            Some(caller.id),
            self.projects.levels_max(),
        )
        .await?
        {
            return Err(BinError::NotFound);
        }
        tx.commit().await?;
        let marked = BinRow {
            purging_since: Some(now),
            purge_requested_by: Some(caller.id),
            ..row
        };
        let (counts, progress) = self.purge_item(&marked, INLINE_BATCHES).await?;
        if progress != super::purge::Progress::Done {
            self.purge_wanted.notify_one();
        }
        Ok(counts)
    }
}

/// The key of a listing total: everything the count depends on. The version is read before
/// the count, so a total is never kept under a version newer than the rows it counted.
fn totals_key(tenant: TenantId, version: i64, scope: &BinScope, visible: &BinVisibility) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (tenant, version).hash(&mut hasher);
    (scope.item_type, scope.container, scope.deleted_by).hash(&mut hasher);
    (&visible.containers, &visible.owned, &visible.owner_levels).hash(&mut hasher);
    hasher.finish()
}

/// Batches a permanent delete runs before answering; the background purge does the rest.
const INLINE_BATCHES: u32 = 4;

fn target_not_found() -> BinError {
    ProjectError::NotFound.into()
}

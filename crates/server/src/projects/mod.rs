//! Projects and subprojects (docs/projects.md, docs/permissions.md): the project tree of a
//! tenant, its members, access levels and the caller's capabilities.

pub(crate) mod access;
pub(crate) mod fields;
pub(crate) mod hierarchy_path;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;
pub(crate) use store::RemovedProject;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::{Db, StoreResult, Tx};
use crate::ids::{ProjectId, TenantId};
use model::ProjectRow;

/// A change to projects that other areas react to inside its transaction (see
/// [`crate::reactions`]): the recycle bin records deleted projects.
#[derive(Debug)]
pub(crate) enum ProjectChange {
    /// `row` was just soft-deleted with everything below it; `levels_max` bounds walks of its
    /// subtree.
    Deleted {
        /// The project as saved, with its deletion time and author.
        row: ProjectRow,
        /// The deepest tree the limits allow.
        levels_max: i64,
    },
}

// ---- for the recycle bin and the tenant's storage figures ----
//
// The recycle bin restores, moves and removes project rows, and identity reports the bytes in
// the bin; they reach the `projects` table only through these functions. Each runs in the
// caller's transaction (or reads the pool, for plain reads), so a change of the bin and of the
// rows commit together.

/// Which projects of a subtree a walk takes (see [`subtree_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Every project below, in the bin or not.
    Everything,
    /// The live part: the walk does not enter a project in the bin.
    LiveOnly,
}

/// The ids of `project` (whatever its state) and of the projects below it, each once, as `tx`
/// sees them. The walk stops `levels_max` levels down, so even a corrupt tree (a cycle) cannot
/// make it loop.
pub(crate) async fn subtree_in(
    tx: &mut Tx,
    project: ProjectId,
    walk: Walk,
    levels_max: i64,
) -> StoreResult<Vec<ProjectId>> {
    store::subtree_in(tx, project, walk == Walk::LiveOnly, levels_max).await
}

/// Brings `project` back from the recycle bin inside `tx`: clears its deletion, bumps its
/// version and records `by` at `now` as its last change. False when it was not in the bin.
/// Only the row: the projects below it keep their own state.
pub(crate) async fn restore_in(
    tx: &mut Tx,
    project: ProjectId,
    now: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<bool> {
    store::restore_in(tx, project, now, by).await
}

/// Moves `project` with its whole subtree under `parent`, inside `tx`: the project's parent
/// becomes `parent`, every project of the subtree gets `root` (the top-level project of
/// `parent`'s tree) as its root and `depth_delta` added to its depth. Versions are left alone.
/// The caller holds the locks of both trees and checked the depth limit; the walk stops
/// `levels_max` levels down.
pub(crate) async fn move_subtree_in(
    tx: &mut Tx,
    project: ProjectId,
    (parent, root): (ProjectId, ProjectId),
    depth_delta: i64,
    levels_max: i64,
) -> StoreResult<()> {
    store::reparent_subtree_in(tx, project, (parent, root), depth_delta, levels_max).await
}

/// Deletes for good, inside `tx`, up to `limit` project rows of the subtree of `project` (itself
/// included, in the bin or not), deepest first: a project goes in the same call as its
/// children or a later one, so `project` itself goes last. Their members go with them. Returns
/// the rows deleted (none: nothing was left). The subtree must hold no datasets any more.
pub(crate) async fn delete_subtree_in(
    tx: &mut Tx,
    project: ProjectId,
    levels_max: i64,
    limit: i64,
) -> StoreResult<Vec<RemovedProject>> {
    store::delete_subtree_in(tx, project, levels_max, limit).await
}

/// Whether a live project of `tenant` named `name` is in `parent` (at the tenant's top level
/// when `None`), as `tx` sees it.
pub(crate) async fn live_name_taken_in(
    tx: &mut Tx,
    tenant: TenantId,
    parent: Option<ProjectId>,
    name: &str,
) -> StoreResult<bool> {
    store::live_name_taken_in(tx, tenant, parent, name).await
}

/// The projects of `tenant` in the recycle bin and every project below one, each once: the
/// projects whose datasets count as in the bin. A plain read of committed rows.
pub(crate) async fn binned_projects(db: &Db, tenant: TenantId) -> StoreResult<Vec<ProjectId>> {
    store::binned(db, tenant).await
}

/// Names the projects that credit operations name (see [`crate::credits::ProjectNameLookup`]):
/// the tenant and name of each, in the recycle bin or not, in plain reads of committed rows.
#[derive(Debug)]
pub(crate) struct ProjectNames;

#[async_trait::async_trait]
impl crate::credits::ProjectNameLookup for ProjectNames {
    async fn names(
        &self,
        db: &Db,
        projects: &[Uuid],
    ) -> StoreResult<Vec<crate::credits::NamedProject>> {
        Ok(store::names(db, projects)
            .await?
            .into_iter()
            .map(|(id, tenant, name)| crate::credits::NamedProject { id, tenant, name })
            .collect())
    }
}

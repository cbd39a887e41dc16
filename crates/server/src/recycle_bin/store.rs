//! SQL of the recycle bin, on both databases.
//!
//! Besides its own table, the bin owns the lifecycle columns of items once they are deleted:
//! restoring clears `deleted_at` on project and dataset rows, and purging deletes those rows,
//! their subtrees and their members in batches. Those statements walk subtrees with recursive
//! queries bounded by a level count, so that even a corrupt tree (a cycle) cannot make them
//! loop; they live here, next to the bin rows they keep consistent, rather than in the
//! project and dataset stores.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::{Arg, Db, Sql, StoreResult, Tx, opt_time_at, opt_uuid_at, time_at, uuid_at};
use crate::ids::{ProjectId, TenantId};
use crate::on_tx;
use crate::projects::access::AccessLevel;
use crate::recycle_bin::model::{BinRow, ItemType};

const COLUMNS: &str = "item_id, item_type, tenant_id, container_id, name, access_level, dataset_type, \
    dataset_format, storage_size, deleted_at, deleted_by, listed, purging_since, purge_requested_by";

/// The condition every listing shares: shown to users, not being purged. Written exactly as
/// in the partial indexes of migration 0009, so that both databases use them.
const LISTED: &str = "listed = TRUE AND purging_since IS NULL";

/// The subtree of `$1` (itself included) as a recursive CTE named `below(id, level)`,
/// walked at most `$2` levels. `live_only` stops at projects in the bin.
fn below_cte(live_only: bool) -> String {
    let live = if live_only {
        " AND p.deleted_at IS NULL"
    } else {
        ""
    };
    format!(
        "WITH RECURSIVE below(id, level) AS (SELECT id, 0 FROM projects WHERE id = $1 \
         UNION ALL SELECT p.id, below.level + 1 FROM projects p JOIN below ON p.parent_id = below.id \
         WHERE below.level < $2{live})"
    )
}

#[derive(sqlx::FromRow)]
struct StoredBinRow {
    item_id: Uuid,
    item_type: String,
    tenant_id: TenantId,
    container_id: Option<ProjectId>,
    name: String,
    access_level: Option<AccessLevel>,
    dataset_type: Option<String>,
    dataset_format: Option<String>,
    storage_size: i64,
    deleted_at: DateTime<Utc>,
    deleted_by: Option<Uuid>,
    listed: bool,
    purging_since: Option<DateTime<Utc>>,
    purge_requested_by: Option<Uuid>,
}

impl StoredBinRow {
    fn into_row(self) -> StoreResult<BinRow> {
        Ok(BinRow {
            item_id: self.item_id,
            item_type: ItemType::from_stored(&self.item_type)
                .map_err(|_| crate::db::StoreError::Corrupt("an unknown recycle bin item type"))?,
            tenant_id: self.tenant_id,
            container_id: self.container_id,
            name: self.name,
            access_level: self.access_level,
            dataset_type: self.dataset_type,
            dataset_format: self.dataset_format,
            storage_size: self.storage_size,
            deleted_at: self.deleted_at,
            deleted_by: self.deleted_by,
            listed: self.listed,
            purging_since: self.purging_since,
            purge_requested_by: self.purge_requested_by,
        })
    }
}

fn rows(stored: Vec<StoredBinRow>) -> StoreResult<Vec<BinRow>> {
    stored.into_iter().map(StoredBinRow::into_row).collect()
}

/// A bin row on the synchronous SQLite read path.
fn row_from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<BinRow> {
    let item_type: String = row.get(1)?;
    let access_level: Option<String> = row.get(5)?;
    let corrupt = |index: usize| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            "an unknown stored value".into(),
        )
    };
    Ok(BinRow {
        item_id: uuid_at(row, 0)?,
        item_type: ItemType::from_stored(&item_type).map_err(|_| corrupt(1))?,
        tenant_id: TenantId::from_uuid(uuid_at(row, 2)?),
        container_id: opt_uuid_at(row, 3)?.map(ProjectId::from_uuid),
        name: row.get(4)?,
        access_level: access_level
            .map(|level| AccessLevel::from_stored(&level).map_err(|_| corrupt(5)))
            .transpose()?,
        dataset_type: row.get(6)?,
        dataset_format: row.get(7)?,
        storage_size: row.get(8)?,
        deleted_at: time_at(row, 9)?,
        deleted_by: opt_uuid_at(row, 10)?,
        listed: row.get(11)?,
        purging_since: opt_time_at(row, 12)?,
        purge_requested_by: opt_uuid_at(row, 13)?,
    })
}

/// Puts an item in the bin.
pub(super) async fn insert_in(tx: &mut Tx, row: &BinRow) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO recycle_bin (item_id, item_type, tenant_id, container_id, name, access_level, \
             dataset_type, dataset_format, storage_size, deleted_at, deleted_by, listed, purging_since, \
             purge_requested_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(row.item_id)
        .bind(row.item_type.as_str())
        .bind(row.tenant_id)
        .bind(row.container_id)
        .bind(&row.name)
        .bind(row.access_level)
        .bind(&row.dataset_type)
        .bind(&row.dataset_format)
        .bind(row.storage_size)
        .bind(row.deleted_at)
        .bind(row.deleted_by)
        .bind(row.listed)
        .bind(row.purging_since)
        .bind(row.purge_requested_by)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    bump_in(tx, row.tenant_id).await
}

/// One item, read inside `tx`.
pub(super) async fn find_in(tx: &mut Tx, item: Uuid) -> StoreResult<Option<BinRow>> {
    let sql = format!("SELECT {COLUMNS} FROM recycle_bin WHERE item_id = $1");
    let stored: Option<StoredBinRow> = on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(item)
            .fetch_optional(conn)
            .await
    })?;
    stored.map(StoredBinRow::into_row).transpose()
}

/// One item.
pub(super) async fn find(db: &Db, item: Uuid) -> StoreResult<Option<BinRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {COLUMNS} FROM recycle_bin WHERE item_id = "
    ));
    let param = sql.arg(Arg::Uuid(item));
    sql.push(&param);
    Ok(fetch(db, sql).await?.into_iter().next())
}

async fn fetch(db: &Db, sql: Sql) -> StoreResult<Vec<BinRow>> {
    match db {
        Db::Sqlite(_, reader) => reader.fetch_all(sql, row_from_sqlite),
        Db::Postgres(_) => rows(sql.fetch_all(db).await?),
    }
}

/// Takes an item of `tenant` out of the bin.
pub(super) async fn remove_in(tx: &mut Tx, tenant: TenantId, item: Uuid) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query("DELETE FROM recycle_bin WHERE item_id = $1")
            .bind(item)
            .execute(conn)
            .await
            .map(|done| done.rows_affected())
    })?;
    bump_in(tx, tenant).await
}

/// Bumps the bin version of `tenant`: its listings changed (cached totals are stale).
async fn bump_in(tx: &mut Tx, tenant: TenantId) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO recycle_bin_versions (tenant_id, version) VALUES ($1, 1) \
             ON CONFLICT (tenant_id) DO UPDATE SET version = recycle_bin_versions.version + 1",
        )
        .bind(tenant)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// [`bump_in`] for the tenant of `project`.
async fn bump_for_project_in(tx: &mut Tx, project: ProjectId) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO recycle_bin_versions (tenant_id, version) \
             SELECT tenant_id, 1 FROM projects WHERE id = $1 \
             ON CONFLICT (tenant_id) DO UPDATE SET version = recycle_bin_versions.version + 1",
        )
        .bind(project)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// The bin version of `tenant` (0 before its first change).
pub(crate) async fn version(db: &Db, tenant: TenantId) -> StoreResult<i64> {
    let mut sql =
        Sql::new("SELECT COALESCE(MAX(version), 0) FROM recycle_bin_versions WHERE tenant_id = ");
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    match db {
        Db::Sqlite(_, reader) => Ok(reader
            .fetch_all(sql, |row| row.get::<_, i64>(0))?
            .into_iter()
            .next()
            .unwrap_or(0)),
        Db::Postgres(_) => sql.fetch_count(db).await,
    }
}

/// The bytes of the live datasets in the live part of the subtree of `project`.
pub(super) async fn live_subtree_size_in(
    tx: &mut Tx,
    project: ProjectId,
    levels_max: i64,
) -> StoreResult<i64> {
    let sql = format!(
        "{} SELECT CAST(COALESCE(SUM(d.storage_size), 0) AS BIGINT) FROM datasets d JOIN below ON d.project_id = below.id \
         WHERE d.deleted_at IS NULL",
        below_cte(true)
    );
    let size: Option<i64> = on_tx!(tx, |conn| {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(project)
            .bind(levels_max)
            .fetch_one(conn)
            .await
    })?;
    Ok(size.unwrap_or(0))
}

/// Sets whether the dataset items below `project` are listed: hidden (false) anywhere below a
/// project just put in the bin, since they come back with it; shown again (true) in the live
/// part of the subtree of a project just restored, its ancestors live.
pub(super) async fn list_datasets_below_in(
    tx: &mut Tx,
    project: ProjectId,
    listed: bool,
    levels_max: i64,
) -> StoreResult<()> {
    let sql = format!(
        "{} UPDATE recycle_bin SET listed = $3 WHERE item_type = 'Dataset' AND listed = $4 \
         AND container_id IN (SELECT id FROM below)",
        below_cte(listed)
    );
    on_tx!(tx, |conn| {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(project)
            .bind(levels_max)
            .bind(listed)
            .bind(!listed)
            .execute(conn)
            .await
            .map(|done| done.rows_affected())
    })?;
    bump_for_project_in(tx, project).await
}

/// Brings a project row back: clears its deletion (a restore elsewhere re-parents it first,
/// with [`reparent_subtree_in`]).
pub(super) async fn restore_project_in(
    tx: &mut Tx,
    project: ProjectId,
    now: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<bool> {
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
            "UPDATE projects SET deleted_at = NULL, deleted_by = NULL, updated_at = $2, updated_by = $3, \
             row_version = row_version + 1 WHERE id = $1 AND deleted_at IS NOT NULL",
        )
        .bind(project)
        .bind(now)
        .bind(by)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(changed == 1)
}

/// Re-roots the subtree of `project` under `parent` (restore elsewhere): its parent, root and
/// depths change; `depth_delta` is added to every depth below it.
pub(super) async fn reparent_subtree_in(
    tx: &mut Tx,
    project: ProjectId,
    parent: ProjectId,
    root: ProjectId,
    depth_delta: i64,
    levels_max: i64,
) -> StoreResult<()> {
    let sql = format!(
        "{} UPDATE projects SET root_id = $3, depth = depth + $4 WHERE id IN (SELECT id FROM below)",
        below_cte(false)
    );
    on_tx!(tx, |conn| {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(project)
            .bind(levels_max)
            .bind(root)
            .bind(depth_delta)
            .execute(conn)
            .await
            .map(|done| done.rows_affected())
    })?;
    on_tx!(tx, |conn| {
        sqlx::query("UPDATE projects SET parent_id = $2 WHERE id = $1")
            .bind(project)
            .bind(parent)
            .execute(conn)
            .await
            .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// Brings a dataset row back, into `project`.
pub(super) async fn restore_dataset_in(
    tx: &mut Tx,
    dataset: Uuid,
    project: ProjectId,
    now: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<bool> {
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
            "UPDATE datasets SET deleted_at = NULL, deleted_by = NULL, project_id = $2, updated_at = $3, \
             updated_by = $4, row_version = row_version + 1 WHERE id = $1 AND deleted_at IS NOT NULL",
        )
        .bind(dataset)
        .bind(project)
        .bind(now)
        .bind(by)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(changed == 1)
}

/// Whether a live item of `item_type` named `name` is in `container` (the tenant's top level
/// when `None`).
pub(super) async fn name_taken_in(
    tx: &mut Tx,
    item_type: ItemType,
    tenant: TenantId,
    container: Option<ProjectId>,
    name: &str,
) -> StoreResult<bool> {
    let mut sql = Sql::new(match item_type {
        ItemType::Dataset => {
            "SELECT COUNT(*) FROM datasets WHERE deleted_at IS NULL AND tenant_id = "
        }
        ItemType::Project => {
            "SELECT COUNT(*) FROM projects WHERE deleted_at IS NULL AND tenant_id = "
        }
    });
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    let name = sql.arg(Arg::Text(name.to_owned()));
    sql.push(&format!(" AND name = {name}"));
    let column = match item_type {
        ItemType::Dataset => "project_id",
        ItemType::Project => "parent_id",
    };
    match container {
        Some(container) => {
            let container = sql.arg(Arg::Uuid(container.as_uuid()));
            sql.push(&format!(" AND {column} = {container}"));
        }
        None => {
            sql.push(&format!(" AND {column} IS NULL"));
        }
    }
    let found = sql.fetch_count_in(tx).await?;
    Ok(found > 0)
}

// ---- listings ----

/// Sort keys of bin listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinSort {
    /// By name.
    Name,
    /// By deletion time.
    DeletedAt,
    /// By size.
    StorageSize,
}

impl BinSort {
    fn column(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::DeletedAt => "deleted_at",
            Self::StorageSize => "storage_size",
        }
    }
}

/// Which items of a tenant's bin a listing holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct BinScope {
    /// Only this kind.
    pub(crate) item_type: Option<ItemType>,
    /// Only items in this project.
    pub(crate) container: Option<ProjectId>,
    /// Only items this principal deleted.
    pub(crate) deleted_by: Option<Uuid>,
}

/// Which items a caller may see (docs/recycle-bin.md#who-sees-what): those in a container
/// where it may delete content, and projects it owns by membership or, as a tenant
/// administrator, through their access level.
#[derive(Debug, Clone, Default)]
pub(crate) struct BinVisibility {
    /// `None`: every container qualifies; else these do.
    pub(crate) containers: Option<Vec<ProjectId>>,
    /// Projects the caller is an Owner member of.
    pub(crate) owned: Vec<ProjectId>,
    /// Access levels that make the caller Owner of a project.
    pub(crate) owner_levels: Vec<AccessLevel>,
}

fn scoped_sql(
    db: &Db,
    select: &str,
    tenant: TenantId,
    scope: &BinScope,
    visible: &BinVisibility,
) -> Sql {
    let mut sql = Sql::new(&format!(
        "SELECT {select} FROM recycle_bin WHERE {LISTED} AND tenant_id = "
    ));
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    if let Some(item_type) = scope.item_type {
        let value = sql.arg(Arg::Text(item_type.as_str().to_owned()));
        sql.push(&format!(" AND item_type = {value}"));
    }
    if let Some(container) = scope.container {
        let value = sql.arg(Arg::Uuid(container.as_uuid()));
        sql.push(&format!(" AND container_id = {value}"));
    }
    if let Some(deleted_by) = scope.deleted_by {
        let value = sql.arg(Arg::Uuid(deleted_by));
        sql.push(&format!(" AND deleted_by = {value}"));
    }
    let mut grants: Vec<String> = Vec::new();
    match &visible.containers {
        None => grants.push("container_id IS NOT NULL".to_owned()),
        Some(containers) if containers.is_empty() => {}
        Some(containers) => {
            let list: Vec<String> = containers
                .iter()
                .map(|id| db.uuid_literal(id.as_uuid()))
                .collect();
            // On SQLite, `+` keeps the planner from reading the list through the containers
            // index and sorting every match: a page is cheaper read in sort order, filtered.
            let column = match db {
                Db::Sqlite(..) => "+container_id",
                Db::Postgres(_) => "container_id",
            };
            grants.push(format!("{column} IN ({})", list.join(", ")));
        }
    }
    if !visible.owned.is_empty() {
        let list: Vec<String> = visible
            .owned
            .iter()
            .map(|id| db.uuid_literal(id.as_uuid()))
            .collect();
        grants.push(format!(
            "(item_type = 'Project' AND item_id IN ({}))",
            list.join(", ")
        ));
    }
    if !visible.owner_levels.is_empty() {
        let list: Vec<String> = visible
            .owner_levels
            .iter()
            .map(|level| format!("'{}'", level.as_str()))
            .collect();
        grants.push(format!(
            "(item_type = 'Project' AND access_level IN ({}))",
            list.join(", ")
        ));
    }
    if grants.is_empty() {
        sql.push(" AND FALSE");
    } else {
        sql.push(&format!(" AND ({})", grants.join(" OR ")));
    }
    sql
}

/// One offset page of a listing.
#[expect(
    clippy::too_many_arguments,
    reason = "one listing query, every part of it named"
)]
pub(crate) async fn list(
    db: &Db,
    tenant: TenantId,
    scope: &BinScope,
    visible: &BinVisibility,
    sort: BinSort,
    descending: bool,
    offset: u32,
    limit: u32,
) -> StoreResult<Vec<BinRow>> {
    let mut sql = scoped_sql(db, COLUMNS, tenant, scope, visible);
    let direction = if descending { "DESC" } else { "ASC" };
    let limit = sql.arg(Arg::I64(i64::from(limit)));
    let offset = sql.arg(Arg::I64(i64::from(offset)));
    sql.push(&format!(
        " ORDER BY {column} {direction}, item_id {direction} LIMIT {limit} OFFSET {offset}",
        column = sort.column()
    ));
    fetch(db, sql).await
}

/// How many items a listing holds.
pub(crate) async fn count(
    db: &Db,
    tenant: TenantId,
    scope: &BinScope,
    visible: &BinVisibility,
) -> StoreResult<u64> {
    let sql = scoped_sql(db, "COUNT(*)", tenant, scope, visible);
    let count = match db {
        Db::Sqlite(_, reader) => reader
            .fetch_all(sql, |row| row.get::<_, i64>(0))?
            .into_iter()
            .next()
            .unwrap_or(0),
        Db::Postgres(_) => sql.fetch_count(db).await?,
    };
    Ok(u64::try_from(count).unwrap_or(0))
}

/// The distinct containers of a tenant's listed items: the projects whose roles decide what
/// a caller sees. A loose index scan (one index probe per container, not one row per item),
/// as neither database skips through an index for `DISTINCT` by itself.
pub(crate) async fn containers(db: &Db, tenant: TenantId) -> StoreResult<Vec<ProjectId>> {
    let mut sql = Sql::new("");
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    let next = |after: &str| {
        format!(
            "(SELECT container_id FROM recycle_bin WHERE {LISTED} AND tenant_id = {tenant} \
             AND container_id IS NOT NULL{after} ORDER BY container_id LIMIT 1)"
        )
    };
    sql.push(&format!(
        "WITH RECURSIVE found(id) AS (SELECT {} UNION ALL SELECT {} FROM found WHERE found.id IS NOT NULL) \
         SELECT id FROM found WHERE id IS NOT NULL",
        next(""),
        next(" AND container_id > found.id")
    ));
    match db {
        Db::Sqlite(_, reader) => {
            reader.fetch_all(sql, |row| uuid_at(row, 0).map(ProjectId::from_uuid))
        }
        Db::Postgres(_) => {
            let ids: Vec<(ProjectId,)> = sql.fetch_all(db).await?;
            Ok(ids.into_iter().map(|(id,)| id).collect())
        }
    }
}

// ---- permanent removal ----

/// Marks an item, and every bin item in its subtree, as being removed for good. Returns false
/// when the item is not (or no longer) in the bin or already being purged.
pub(super) async fn mark_purging_in(
    tx: &mut Tx,
    item: &BinRow,
    now: DateTime<Utc>,
    by: Option<Uuid>,
    levels_max: i64,
) -> StoreResult<bool> {
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
            "UPDATE recycle_bin SET purging_since = $2, purge_requested_by = $3 \
             WHERE item_id = $1 AND purging_since IS NULL",
        )
        .bind(item.item_id)
        .bind(now)
        .bind(by)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    if changed == 1 && item.item_type == ItemType::Project {
        let sql = format!(
            "{} UPDATE recycle_bin SET purging_since = $3, purge_requested_by = $4 \
             WHERE purging_since IS NULL AND (container_id IN (SELECT id FROM below) \
             OR item_id IN (SELECT id FROM below))",
            below_cte(false)
        );
        on_tx!(tx, |conn| {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(item.item_id)
                .bind(levels_max)
                .bind(now)
                .bind(by)
                .execute(conn)
                .await
                .map(|done| done.rows_affected())
        })?;
    }
    if changed == 1 {
        bump_in(tx, item.tenant_id).await?;
    }
    Ok(changed == 1)
}

/// Up to `limit` items that entered the bin before `before` and are not being purged yet,
/// oldest first.
pub(crate) async fn expired(
    db: &Db,
    before: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<BinRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {COLUMNS} FROM recycle_bin WHERE purging_since IS NULL AND deleted_at < "
    ));
    let before = sql.arg(Arg::Time(before));
    let limit = sql.arg(Arg::I64(limit));
    sql.push(&format!(
        "{before} ORDER BY deleted_at, item_id LIMIT {limit}"
    ));
    fetch(db, sql).await
}

/// Up to `limit` items being purged, oldest request first.
pub(crate) async fn purging(db: &Db, limit: i64) -> StoreResult<Vec<BinRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {COLUMNS} FROM recycle_bin WHERE purging_since IS NOT NULL ORDER BY purging_since, item_id LIMIT "
    ));
    let limit = sql.arg(Arg::I64(limit));
    sql.push(&limit);
    fetch(db, sql).await
}

/// A dataset row removed for good.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RemovedDataset {
    /// Id.
    pub(crate) id: Uuid,
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// Project it was in.
    pub(crate) project_id: ProjectId,
    /// Name.
    pub(crate) name: String,
    /// Its blob key.
    pub(crate) data_path: String,
    /// Its format (`.tiles` datasets have stored pyramids too).
    pub(crate) dataset_format: String,
}

/// A project row removed for good.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RemovedProject {
    /// Id.
    pub(crate) id: ProjectId,
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// Parent.
    pub(crate) parent_id: Option<ProjectId>,
    /// Name.
    pub(crate) name: String,
}

/// Deletes one dataset row.
pub(super) async fn delete_dataset_in(tx: &mut Tx, id: Uuid) -> StoreResult<Vec<RemovedDataset>> {
    Ok(on_tx!(tx, |conn| {
        sqlx::query_as(
            "DELETE FROM datasets WHERE id = $1 \
             RETURNING id, tenant_id, project_id, name, data_path, dataset_format",
        )
        .bind(id)
        .fetch_all(conn)
        .await
    })?)
}

/// Deletes up to `limit` dataset rows anywhere in the subtree of `project`.
pub(super) async fn delete_subtree_datasets_in(
    tx: &mut Tx,
    project: ProjectId,
    levels_max: i64,
    limit: i64,
) -> StoreResult<Vec<RemovedDataset>> {
    let sql = format!(
        "{} DELETE FROM datasets WHERE id IN (SELECT d.id FROM datasets d JOIN below ON d.project_id = below.id LIMIT $3) \
         RETURNING id, tenant_id, project_id, name, data_path, dataset_format",
        below_cte(false)
    );
    Ok(on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(project)
            .bind(levels_max)
            .bind(limit)
            .fetch_all(conn)
            .await
    })?)
}

/// Deletes up to `limit` project rows of the subtree of `project`, deepest first, so that
/// every deleted project's children go in the same statement or an earlier one. The subtree
/// holds no datasets any more.
pub(super) async fn delete_subtree_projects_in(
    tx: &mut Tx,
    project: ProjectId,
    levels_max: i64,
    limit: i64,
) -> StoreResult<Vec<RemovedProject>> {
    let sql = format!(
        "{} DELETE FROM projects WHERE id IN (SELECT id FROM below ORDER BY level DESC LIMIT $3) \
         RETURNING id, tenant_id, parent_id, name",
        below_cte(false)
    );
    Ok(on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(project)
            .bind(levels_max)
            .bind(limit)
            .fetch_all(conn)
            .await
    })?)
}

/// Takes removed items of `tenant` out of the bin.
pub(super) async fn remove_all_in(
    tx: &mut Tx,
    tenant: TenantId,
    items: &[Uuid],
) -> StoreResult<()> {
    for chunk in items.chunks(500) {
        let mut sql = Sql::new("DELETE FROM recycle_bin WHERE item_id IN (");
        let placeholders: Vec<String> = chunk.iter().map(|id| sql.arg(Arg::Uuid(*id))).collect();
        sql.push(&placeholders.join(", ")).push(")");
        sql.execute_in(tx).await?;
    }
    bump_in(tx, tenant).await
}

/// Queues the blob at `key` for deletion unless another dataset still names it.
pub(super) async fn queue_blob_in(tx: &mut Tx, key: &str, now: DateTime<Utc>) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO blob_garbage (blob_key, queued_at) SELECT $1, $2 \
             WHERE NOT EXISTS (SELECT 1 FROM datasets WHERE data_path = $1) ON CONFLICT (blob_key) DO NOTHING",
        )
        .bind(key)
        .bind(now)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// Up to `limit` queued blob keys; a key ending in `/` stands for every blob below it.
pub(crate) async fn queued_blobs(db: &Db, limit: i64) -> StoreResult<Vec<String>> {
    Ok(crate::on_db!(db, |pool| {
        sqlx::query_scalar(
            "SELECT blob_key FROM blob_garbage ORDER BY queued_at, blob_key LIMIT $1",
        )
        .bind(limit)
        .fetch_all(pool)
        .await
    })?)
}

/// Which of `keys` a dataset names again (those blobs are kept).
pub(crate) async fn blobs_in_use(db: &Db, keys: &[String]) -> StoreResult<Vec<String>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = Sql::new("SELECT DISTINCT data_path FROM datasets WHERE data_path IN (");
    let placeholders: Vec<String> = keys
        .iter()
        .map(|key| sql.arg(Arg::Text(key.clone())))
        .collect();
    sql.push(&placeholders.join(", ")).push(")");
    let rows: Vec<(String,)> = sql.fetch_all(db).await?;
    Ok(rows.into_iter().map(|(key,)| key).collect())
}

/// Forgets queued blobs (deleted, or in use again).
pub(crate) async fn unqueue_blobs(db: &Db, keys: &[String]) -> StoreResult<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut sql = Sql::new("DELETE FROM blob_garbage WHERE blob_key IN (");
    let placeholders: Vec<String> = keys
        .iter()
        .map(|key| sql.arg(Arg::Text(key.clone())))
        .collect();
    sql.push(&placeholders.join(", ")).push(")");
    let mut tx = db.begin().await?;
    sql.execute_in(&mut tx).await?;
    tx.commit().await?;
    Ok(())
}

/// Whether a purge batch may work on an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// Locked for this transaction.
    Claimed,
    /// Another replica's transaction holds it (PostgreSQL).
    Busy,
    /// No longer in the bin as being purged.
    Gone,
}

/// Locks the bin row of `item` for this purge batch (PostgreSQL `FOR UPDATE SKIP LOCKED`:
/// another replica working on it makes this one skip it).
pub(super) async fn claim_purging_in(tx: &mut Tx, item: Uuid) -> StoreResult<Claim> {
    let select = "SELECT item_id FROM recycle_bin WHERE item_id = $1 AND purging_since IS NOT NULL";
    let found: Option<Uuid> = match tx {
        Tx::Sqlite(transaction) => {
            sqlx::query_scalar(select)
                .bind(item)
                .fetch_optional(&mut **transaction)
                .await?
        }
        Tx::Postgres(transaction) => {
            let locked: Option<Uuid> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "{select} FOR UPDATE SKIP LOCKED"
            )))
            .bind(item)
            .fetch_optional(&mut **transaction)
            .await?;
            if locked.is_none() {
                let exists: Option<Uuid> = sqlx::query_scalar(select)
                    .bind(item)
                    .fetch_optional(&mut **transaction)
                    .await?;
                return Ok(if exists.is_some() {
                    Claim::Busy
                } else {
                    Claim::Gone
                });
            }
            locked
        }
    };
    Ok(if found.is_some() {
        Claim::Claimed
    } else {
        Claim::Gone
    })
}

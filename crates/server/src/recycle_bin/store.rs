//! SQL of the recycle bin's own tables, on both databases: its items (`recycle_bin`), the
//! version of each tenant's listings (`recycle_bin_versions`) and the queue of blobs to delete
//! (`blob_garbage`).
//!
//! The rows of deleted projects and datasets stay their areas': restoring, moving and purging
//! them, and walking a project's subtree, go through the functions of `projects` and
//! `datasets` in the same transaction. Statements here that concern a subtree take its
//! project ids as a list, in chunks of [`IDS_PER_STATEMENT`].

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::{
    Arg, Db, IDS_PER_STATEMENT, Sql, StoreResult, Tx, opt_time_at, opt_uuid_at, time_at, uuid_at,
};
use crate::ids::{ProjectId, TenantId};
use crate::on_tx;
use crate::projects::access::AccessLevel;
use crate::recycle_bin::model::{BinRow, ItemType};

const COLUMNS: &str = "item_id, item_type, tenant_id, container_id, name, access_level, dataset_type, \
    dataset_format, storage_size, deleted_at, deleted_by, listed, purging_since, purge_requested_by";

/// The condition every listing shares: shown to users, not being purged. Written exactly as
/// in the partial indexes of migration 0009, so that both databases use them.
const LISTED: &str = "listed = TRUE AND purging_since IS NULL";

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
pub(super) async fn bump_in(tx: &mut Tx, tenant: TenantId) -> StoreResult<()> {
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

/// Sets whether the dataset items in `containers` are listed: hidden (false) below a project
/// just put in the bin, since they come back with it; shown again (true) in the live part of
/// the subtree of a project just restored. The caller bumps the tenant's version.
pub(super) async fn list_datasets_in(
    tx: &mut Tx,
    containers: &[ProjectId],
    listed: bool,
) -> StoreResult<()> {
    for chunk in containers.chunks(IDS_PER_STATEMENT) {
        let mut sql = Sql::new("UPDATE recycle_bin SET listed = ");
        let to = sql.arg(Arg::Bool(listed));
        let from = sql.arg(Arg::Bool(!listed));
        sql.push(&format!(
            "{to} WHERE item_type = 'Dataset' AND listed = {from} AND container_id IN "
        ));
        sql.push_uuids(chunk.iter().map(ProjectId::as_uuid));
        sql.execute_in(tx).await?;
    }
    Ok(())
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

/// Marks an item as being removed for good. Returns false when it is not (or no longer) in
/// the bin or already being purged.
pub(super) async fn mark_purging_in(
    tx: &mut Tx,
    item: Uuid,
    now: DateTime<Utc>,
    by: Option<Uuid>,
) -> StoreResult<bool> {
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
            "UPDATE recycle_bin SET purging_since = $2, purge_requested_by = $3 \
             WHERE item_id = $1 AND purging_since IS NULL",
        )
        .bind(item)
        .bind(now)
        .bind(by)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(changed == 1)
}

/// Marks every bin item in `subtree` or in one of its projects, not marked yet, as being
/// removed for good with the project at its top.
pub(super) async fn mark_purging_within_in(
    tx: &mut Tx,
    subtree: &[ProjectId],
    now: DateTime<Utc>,
    by: Option<Uuid>,
) -> StoreResult<()> {
    for chunk in subtree.chunks(IDS_PER_STATEMENT) {
        let mut sql = Sql::new("UPDATE recycle_bin SET purging_since = ");
        let now = sql.arg(Arg::Time(now));
        let by = sql.arg(Arg::OptUuid(by));
        sql.push(&format!(
            "{now}, purge_requested_by = {by} WHERE purging_since IS NULL AND (container_id IN "
        ));
        sql.push_uuids(chunk.iter().map(ProjectId::as_uuid));
        sql.push(" OR item_id IN ");
        sql.push_uuids(chunk.iter().map(ProjectId::as_uuid));
        sql.push(")");
        sql.execute_in(tx).await?;
    }
    Ok(())
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

/// Takes removed items of `tenant` out of the bin.
pub(super) async fn remove_all_in(
    tx: &mut Tx,
    tenant: TenantId,
    items: &[Uuid],
) -> StoreResult<()> {
    for chunk in items.chunks(IDS_PER_STATEMENT) {
        let mut sql = Sql::new("DELETE FROM recycle_bin WHERE item_id IN ");
        sql.push_uuids(chunk.iter().copied());
        sql.execute_in(tx).await?;
    }
    bump_in(tx, tenant).await
}

/// Queues the blob at `key` for deletion (once: a key queued already keeps its time).
pub(super) async fn queue_blob_in(tx: &mut Tx, key: &str, now: DateTime<Utc>) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO blob_garbage (blob_key, queued_at) VALUES ($1, $2) \
             ON CONFLICT (blob_key) DO NOTHING",
        )
        .bind(key)
        .bind(now)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// Whether the blob at `key` is queued for deletion, read inside `tx`.
pub(super) async fn blob_queued_in(tx: &mut Tx, key: &str) -> StoreResult<bool> {
    let found: Option<String> = on_tx!(tx, |conn| {
        sqlx::query_scalar("SELECT blob_key FROM blob_garbage WHERE blob_key = $1")
            .bind(key)
            .fetch_optional(conn)
            .await
    })?;
    Ok(found.is_some())
}

/// Takes the blob at `key` off the deletion queue inside `tx`.
pub(super) async fn unqueue_blob_in(tx: &mut Tx, key: &str) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query("DELETE FROM blob_garbage WHERE blob_key = $1")
            .bind(key)
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

//! SQL for datasets, on both databases.

use chrono::{DateTime, Utc};

use crate::datasets::model::DatasetRow;
use crate::db::{
    Arg, Db, IDS_PER_STATEMENT, KeysetPage, SortValue, Sql, StoreError, StoreResult, Tx,
};
use crate::ids::{DatasetId, ProjectId, TenantId};
use crate::{on_db, on_tx};

const COLUMNS: &str = "id, tenant_id, project_id, name, description, dataset_type, dataset_format, data_path, \
    metadata, properties, tags, temporal_information, spatial_information, storage_size, checksum, \
    row_version, created_at, created_by, updated_at, updated_by, deleted_at, deleted_by";

pub(super) async fn insert(tx: &mut Tx, row: &DatasetRow) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
        "INSERT INTO datasets (id, tenant_id, project_id, name, description, dataset_type, dataset_format, \
         data_path, metadata, properties, tags, temporal_information, spatial_information, storage_size, \
         checksum, row_version, created_at, created_by, updated_at, updated_by, deleted_at, deleted_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)"
    )
    .bind(row.id)
    .bind(row.tenant_id)
    .bind(row.project_id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.dataset_type)
    .bind(&row.dataset_format)
    .bind(&row.data_path)
    .bind(&row.metadata)
    .bind(&row.properties)
    .bind(&row.tags)
    .bind(&row.temporal_information)
    .bind(&row.spatial_information)
    .bind(stored_size(row.storage_size)?)
    .bind(&row.checksum)
    .bind(row.row_version)
    .bind(row.created_at)
    .bind(row.created_by)
    .bind(row.updated_at)
    .bind(row.updated_by)
    .bind(row.deleted_at)
    .bind(row.deleted_by)
    .execute(conn)
    .await
    .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// Replaces the content of a live dataset and returns where the replaced content was; `None`
/// when the dataset is gone or deleted. The row is locked first (PostgreSQL `FOR UPDATE`; a
/// SQLite transaction holds the write lock already), so two replacements of one dataset
/// queue, and each learns exactly which content it replaced.
pub(super) async fn replace_content_in(
    tx: &mut Tx,
    id: DatasetId,
    content: &crate::datasets::service::NewContent,
    now: chrono::DateTime<chrono::Utc>,
    by: uuid::Uuid,
) -> StoreResult<Option<String>> {
    let lock = match tx {
        Tx::Sqlite(_) => "",
        Tx::Postgres(_) => " FOR UPDATE",
    };
    let select =
        format!("SELECT data_path FROM datasets WHERE id = $1 AND deleted_at IS NULL{lock}");
    let previous: Option<String> = on_tx!(tx, |conn| {
        sqlx::query_scalar(sqlx::AssertSqlSafe(select))
            .bind(id)
            .fetch_optional(conn)
            .await
    })?;
    if previous.is_none() {
        return Ok(None);
    }
    let size = stored_size(content.storage_size)?;
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
            "UPDATE datasets SET data_path = $1, storage_size = $2, checksum = $3, dataset_format = $4, \
             dataset_type = $5, temporal_information = $6, spatial_information = $7, \
             row_version = row_version + 1, updated_at = $8, updated_by = $9 \
             WHERE id = $10 AND deleted_at IS NULL",
        )
        .bind(&content.data_path)
        .bind(size)
        .bind(&content.checksum)
        .bind(&content.details.dataset_format)
        .bind(&content.details.dataset_type)
        .bind(&content.details.temporal_information)
        .bind(&content.details.spatial_information)
        .bind(now)
        .bind(by)
        .bind(id)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(previous.filter(|_| changed == 1))
}

/// A size as stored: no blob comes near `i64::MAX` bytes (the upload limit is 5 GiB).
fn stored_size(size: u64) -> StoreResult<i64> {
    i64::try_from(size).map_err(|_| StoreError::Corrupt("a size over 2^63 bytes"))
}

/// A dataset, deleted or not.
pub(super) async fn find(db: &Db, id: DatasetId) -> StoreResult<Option<DatasetRow>> {
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM datasets WHERE id = "));
    let param = sql.arg(Arg::Uuid(id.as_uuid()));
    sql.push(&param);
    Ok(sql.fetch_all(db).await?.into_iter().next())
}

/// Every dataset, deleted or not, whose content is at `data_path`.
pub(super) async fn find_by_data_path(db: &Db, data_path: &str) -> StoreResult<Vec<DatasetRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {COLUMNS} FROM datasets WHERE data_path = "
    ));
    let param = sql.arg(Arg::Text(data_path.to_owned()));
    sql.push(&param);
    sql.fetch_all(db).await
}

/// Live datasets placed directly in `project`, by name, one keyset page; with `name_prefix`,
/// only names that start with it, ignoring case (as the project lists).
pub(crate) async fn list(
    db: &Db,
    project: ProjectId,
    name_prefix: Option<&str>,
    after: Option<(SortValue, uuid::Uuid)>,
    fetch: i64,
) -> StoreResult<Vec<DatasetRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {COLUMNS} FROM datasets WHERE deleted_at IS NULL AND project_id = "
    ));
    let param = sql.arg(Arg::Uuid(project.as_uuid()));
    sql.push(&param);
    if let Some(prefix) = name_prefix {
        let length = sql.arg(Arg::I64(
            i64::try_from(prefix.chars().count()).unwrap_or(i64::MAX),
        ));
        let value = sql.arg(Arg::Text(prefix.to_lowercase()));
        sql.push(&format!(
            " AND lower(substr(name, 1, CAST({length} AS INTEGER))) = {value}"
        ));
    }
    fetch_by_name(db, sql, after, fetch).await
}

/// Live datasets of `tenant` whose format is one of `formats`, optionally only those placed
/// directly in `project`, by name then id. Readability is the caller's to check.
pub(crate) async fn list_of_formats(
    db: &Db,
    tenant: TenantId,
    project: Option<ProjectId>,
    formats: &[&str],
    after: Option<(SortValue, uuid::Uuid)>,
    fetch: i64,
) -> StoreResult<Vec<DatasetRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {COLUMNS} FROM datasets WHERE deleted_at IS NULL AND tenant_id = "
    ));
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    if let Some(project) = project {
        let project = sql.arg(Arg::Uuid(project.as_uuid()));
        sql.push(" AND project_id = ").push(&project);
    }
    let formats: Vec<String> = formats
        .iter()
        .map(|format| sql.arg(Arg::Text((*format).to_owned())))
        .collect();
    if formats.is_empty() {
        return Ok(Vec::new());
    }
    sql.push(" AND dataset_format IN (")
        .push(&formats.join(", "))
        .push(")");
    fetch_by_name(db, sql, after, fetch).await
}

/// The rows of `sql` (a `SELECT` of datasets with its `WHERE`) after `after`, by name then id,
/// up to `fetch`.
async fn fetch_by_name(
    db: &Db,
    mut sql: Sql,
    after: Option<(SortValue, uuid::Uuid)>,
    fetch: i64,
) -> StoreResult<Vec<DatasetRow>> {
    let page = KeysetPage {
        column: "name",
        id_column: "id",
        descending: false,
        after,
        fetch,
    };
    sql.keyset_after(&page).keyset_order(&page);
    sql.fetch_all(db).await
}

/// Writes the mutable fields if the row is still at `expected` (its own version when `None`);
/// returns the new version, or `None` when it moved on.
pub(super) async fn update(
    db: &Db,
    row: &DatasetRow,
    expected: Option<i64>,
) -> StoreResult<Option<i64>> {
    let new_version = row.row_version.saturating_add(1);
    let mut tx = db.begin().await?;
    let changed = on_tx!(&mut tx, |conn| {
        sqlx::query(
        "UPDATE datasets SET name = $2, description = $3, metadata = $4, properties = $5, tags = $6, \
         project_id = $7, deleted_at = $8, deleted_by = $9, updated_at = $10, updated_by = $11, \
         row_version = $12 WHERE id = $1 AND row_version = $13"
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.metadata)
    .bind(&row.properties)
    .bind(&row.tags)
    .bind(row.project_id)
    .bind(row.deleted_at)
    .bind(row.deleted_by)
    .bind(row.updated_at)
    .bind(row.updated_by)
    .bind(new_version)
    .bind(expected.unwrap_or(row.row_version))
    .execute(conn)
    .await
    .map(|done| done.rows_affected())
    })?;
    tx.commit().await?;
    Ok((changed == 1).then_some(new_version))
}

/// Records the size and checksum of freshly written content for every live dataset whose
/// content is at `data_path`; returns how many there were.
pub(super) async fn set_content_in(
    tx: &mut Tx,
    data_path: &str,
    size: u64,
    checksum: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> StoreResult<u64> {
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
        "UPDATE datasets SET storage_size = $2, checksum = $3, updated_at = $4, row_version = row_version + 1 \
         WHERE data_path = $1 AND deleted_at IS NULL"
    )
    .bind(data_path)
    .bind(stored_size(size)?)
    .bind(checksum)
    .bind(at)
    .execute(conn)
    .await
    .map(|done| done.rows_affected())
    })?;
    Ok(changed)
}

/// Sets the checksum of datasets whose content at `data_path` has none yet.
pub(super) async fn set_missing_checksum(
    db: &Db,
    data_path: &str,
    checksum: &str,
) -> StoreResult<u64> {
    let changed = on_db!(db, |pool| {
        sqlx::query("UPDATE datasets SET checksum = $2 WHERE data_path = $1 AND checksum IS NULL")
            .bind(data_path)
            .bind(checksum)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
    })?;
    crate::db::changes::note_commit();
    Ok(changed)
}

/// Up to `limit` content paths after `after` (in path order) of datasets without a checksum,
/// with content, last changed before `before`.
pub(super) async fn paths_without_checksum(
    db: &Db,
    before: DateTime<Utc>,
    after: &str,
    limit: i64,
) -> StoreResult<Vec<String>> {
    Ok(on_db!(db, |pool| {
        sqlx::query_scalar(
            "SELECT DISTINCT data_path FROM datasets WHERE checksum IS NULL AND storage_size > 0 \
             AND updated_at < $1 AND data_path > $2 ORDER BY data_path LIMIT $3",
        )
        .bind(before)
        .bind(after)
        .bind(limit)
        .fetch_all(pool)
        .await
    })?)
}

/// A live dataset of `project` with this name (the oldest, if several share it).
/// Whether `project` holds a live dataset named `name`.
pub(super) async fn name_taken(db: &Db, project: ProjectId, name: &str) -> StoreResult<bool> {
    let found: i64 = on_db!(db, |pool| {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM (SELECT 1 FROM datasets \
             WHERE project_id = $1 AND name = $2 AND deleted_at IS NULL LIMIT 1) AS found",
        )
        .bind(project)
        .bind(name)
        .fetch_one(pool)
        .await
    })?;
    Ok(found > 0)
}

pub(super) async fn find_by_name_in(
    tx: &mut Tx,
    project: ProjectId,
    name: &str,
) -> StoreResult<Option<DatasetRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM datasets WHERE project_id = $1 AND name = $2 AND deleted_at IS NULL \
         ORDER BY created_at, id LIMIT 1"
    );
    Ok(on_tx!(tx, |conn| sqlx::query_as::<_, DatasetRow>(
        sqlx::AssertSqlSafe(sql)
    )
    .bind(project)
    .bind(name)
    .fetch_optional(conn)
    .await)?)
}

/// Moves a live dataset of `project` to the recycle bin inside `tx`; returns it as deleted,
/// or `None` when it is not (or no longer) there.
pub(super) async fn soft_delete_in(
    tx: &mut Tx,
    id: DatasetId,
    project: ProjectId,
    at: chrono::DateTime<chrono::Utc>,
    by: uuid::Uuid,
) -> StoreResult<Option<DatasetRow>> {
    let sql = format!(
        "UPDATE datasets SET deleted_at = $2, deleted_by = $3, updated_at = $2, updated_by = $3, \
         row_version = row_version + 1 WHERE id = $1 AND project_id = $4 AND deleted_at IS NULL \
         RETURNING {COLUMNS}"
    );
    Ok(on_tx!(tx, |conn| sqlx::query_as::<_, DatasetRow>(
        sqlx::AssertSqlSafe(sql)
    )
    .bind(id)
    .bind(at)
    .bind(by)
    .bind(project)
    .fetch_optional(conn)
    .await)?)
}

// ---- for the recycle bin and the tenant's storage figures ----

/// Brings a dataset row back from the bin, into `project`. False when it was not deleted (or
/// is gone).
pub(super) async fn restore_in(
    tx: &mut Tx,
    dataset: DatasetId,
    project: ProjectId,
    now: DateTime<Utc>,
    by: uuid::Uuid,
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

/// Whether a live dataset of `tenant` named `name` is in `project`, read inside `tx`.
pub(super) async fn live_name_taken_in(
    tx: &mut Tx,
    tenant: TenantId,
    project: ProjectId,
    name: &str,
) -> StoreResult<bool> {
    let mut sql =
        Sql::new("SELECT COUNT(*) FROM datasets WHERE deleted_at IS NULL AND tenant_id = ");
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    let name = sql.arg(Arg::Text(name.to_owned()));
    sql.push(&format!(" AND name = {name}"));
    let project = sql.arg(Arg::Uuid(project.as_uuid()));
    sql.push(&format!(" AND project_id = {project}"));
    Ok(sql.fetch_count_in(tx).await? > 0)
}

/// The bytes of the live datasets in `projects`, read inside `tx`.
pub(super) async fn live_size_in(tx: &mut Tx, projects: &[ProjectId]) -> StoreResult<i64> {
    let mut total: i64 = 0;
    for chunk in projects.chunks(IDS_PER_STATEMENT) {
        let mut sql = Sql::new(
            "SELECT CAST(COALESCE(SUM(storage_size), 0) AS BIGINT) FROM datasets \
             WHERE deleted_at IS NULL AND project_id IN ",
        );
        sql.push_uuids(chunk.iter().map(ProjectId::as_uuid));
        total = total.saturating_add(sql.fetch_count_in(tx).await?);
    }
    Ok(total)
}

/// A dataset row removed for good.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct RemovedDataset {
    /// Id.
    pub(crate) id: DatasetId,
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

/// The columns of a [`RemovedDataset`], for `RETURNING`.
const REMOVED_COLUMNS: &str = "id, tenant_id, project_id, name, data_path, dataset_format";

/// Deletes one dataset row; returns it (nothing when it was gone already).
pub(super) async fn delete_in(tx: &mut Tx, id: DatasetId) -> StoreResult<Vec<RemovedDataset>> {
    let sql = format!("DELETE FROM datasets WHERE id = $1 RETURNING {REMOVED_COLUMNS}");
    Ok(on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_all(conn)
            .await
    })?)
}

/// Deletes up to `limit` dataset rows, deleted or not, of `projects`; returns them.
pub(super) async fn delete_of_projects_in(
    tx: &mut Tx,
    projects: &[ProjectId],
    limit: i64,
) -> StoreResult<Vec<RemovedDataset>> {
    let mut removed: Vec<RemovedDataset> = Vec::new();
    for chunk in projects.chunks(IDS_PER_STATEMENT) {
        let left = limit.saturating_sub(i64::try_from(removed.len()).unwrap_or(i64::MAX));
        if left <= 0 {
            break;
        }
        let mut sql = Sql::new(
            "DELETE FROM datasets WHERE id IN (SELECT id FROM datasets WHERE project_id IN ",
        );
        sql.push_uuids(chunk.iter().map(ProjectId::as_uuid));
        let left = sql.arg(Arg::I64(left));
        sql.push(&format!(" LIMIT {left}) RETURNING {REMOVED_COLUMNS}"));
        removed.extend(sql.fetch_all_in::<RemovedDataset>(tx).await?);
    }
    Ok(removed)
}

/// Whether a dataset, deleted or not, names `data_path` as its content, read inside `tx`.
pub(super) async fn data_path_named_in(tx: &mut Tx, data_path: &str) -> StoreResult<bool> {
    let found: i64 = on_tx!(tx, |conn| {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM (SELECT 1 FROM datasets WHERE data_path = $1 LIMIT 1) AS found",
        )
        .bind(data_path)
        .fetch_one(conn)
        .await
    })?;
    Ok(found > 0)
}

/// The live datasets whose content is the blob at `data_path`, read inside `tx`.
pub(super) async fn live_at_data_path_in(
    tx: &mut Tx,
    data_path: &str,
) -> StoreResult<Vec<DatasetId>> {
    Ok(on_tx!(tx, |conn| {
        sqlx::query_scalar("SELECT id FROM datasets WHERE data_path = $1 AND deleted_at IS NULL")
            .bind(data_path)
            .fetch_all(conn)
            .await
    })?)
}

/// Which of `data_paths` a dataset, deleted or not, names as its content.
pub(super) async fn data_paths_named(db: &Db, data_paths: &[String]) -> StoreResult<Vec<String>> {
    if data_paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = Sql::new("SELECT DISTINCT data_path FROM datasets WHERE data_path IN (");
    let placeholders: Vec<String> = data_paths
        .iter()
        .map(|key| sql.arg(Arg::Text(key.clone())))
        .collect();
    sql.push(&placeholders.join(", ")).push(")");
    let rows: Vec<(String,)> = sql.fetch_all(db).await?;
    Ok(rows.into_iter().map(|(key,)| key).collect())
}

/// The bytes of `tenant`'s datasets by project, the deleted ones apart from the live ones.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(super) struct ProjectBytes {
    /// The project.
    pub(super) project_id: ProjectId,
    /// Whether these are the bytes of its deleted datasets.
    pub(super) deleted: bool,
    /// Their bytes.
    pub(super) bytes: i64,
}

/// [`ProjectBytes`] of every project of `tenant` that holds datasets.
pub(super) async fn bytes_by_project(db: &Db, tenant: TenantId) -> StoreResult<Vec<ProjectBytes>> {
    Ok(on_db!(db, |pool| {
        sqlx::query_as(
            "SELECT project_id, deleted_at IS NOT NULL AS deleted, \
             CAST(COALESCE(SUM(storage_size), 0) AS BIGINT) AS bytes \
             FROM datasets WHERE tenant_id = $1 GROUP BY project_id, deleted_at IS NOT NULL",
        )
        .bind(tenant)
        .fetch_all(pool)
        .await
    })?)
}

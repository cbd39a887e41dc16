//! SQL for projects and their members, on both databases. No rules here: see `service.rs`.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::auth::PrincipalType;
use crate::db::{
    Arg, Db, Sql, StoreError, StoreResult, Tx, opt_time_at, opt_uuid_at, time_at, uuid_at,
};
use crate::ids::ProjectId;
use crate::on_tx;
use crate::projects::model::{ProjectMember, ProjectRole, ProjectRow};

const COLUMNS: &str = "p.id, p.tenant_id, p.parent_id, p.root_id, p.depth, p.name, p.description, \
    p.metadata, p.settings, p.access_level, p.inherits_members, p.has_thumbnail, \
    p.billing_information, p.row_version, p.created_at, p.created_by, p.updated_at, \
    p.updated_by, p.deleted_at, p.deleted_by";

/// A project of a chain with the caller's own membership role in it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(super) struct ChainRow {
    /// The project.
    #[sqlx(flatten)]
    pub(crate) project: ProjectRow,
    /// The caller's role among the project's own members.
    pub(crate) caller_role: Option<ProjectRole>,
}

/// The project and its ancestors, root first, each with the caller's own role. At most
/// `depth_max + 1` rows: the recursion is bounded even if the data were corrupt.
pub(super) async fn chain(
    db: &Db,
    id: ProjectId,
    caller: (Uuid, PrincipalType),
    depth_max: i64,
) -> StoreResult<Vec<ChainRow>> {
    let sql = chain_sql(id, caller, depth_max);
    match db {
        Db::Sqlite(_, reader) => reader.fetch_all(sql, chain_row_from_sqlite),
        Db::Postgres(_) => sql.fetch_all(db).await,
    }
}

/// [`chain`] inside a transaction, seeing its own writes.
pub(super) async fn chain_in(
    tx: &mut Tx,
    id: ProjectId,
    caller: (Uuid, PrincipalType),
    depth_max: i64,
) -> StoreResult<Vec<ChainRow>> {
    chain_sql(id, caller, depth_max).fetch_all_in(tx).await
}

fn chain_sql(id: ProjectId, (caller, caller_type): (Uuid, PrincipalType), depth_max: i64) -> Sql {
    let mut sql = Sql::new(
        "WITH RECURSIVE chain(id, parent_id, level) AS (SELECT id, parent_id, 0 FROM projects WHERE id = ",
    );
    let id_param = sql.arg(Arg::Uuid(id.as_uuid()));
    sql.push(&id_param);
    sql.push(" UNION ALL SELECT p.id, p.parent_id, chain.level + 1 FROM projects p JOIN chain ON p.id = chain.parent_id WHERE chain.level < ");
    let depth_param = sql.arg(Arg::I64(depth_max));
    sql.push(&depth_param);
    sql.push(&format!(
        ") SELECT {COLUMNS}, m.role AS caller_role FROM chain JOIN projects p ON p.id = chain.id \
         LEFT JOIN project_members m ON m.project_id = p.id AND m.principal_id = "
    ));
    let caller_param = sql.arg(Arg::Uuid(caller));
    sql.push(&caller_param);
    sql.push(" AND m.principal_type = ");
    let type_param = sql.arg(Arg::Text(caller_type.as_str().to_owned()));
    sql.push(&type_param);
    sql.push(" ORDER BY chain.level DESC");
    sql
}

pub(super) async fn insert_project(tx: &mut Tx, row: &ProjectRow) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
        "INSERT INTO projects (id, tenant_id, parent_id, root_id, depth, name, description, metadata, settings, \
         access_level, inherits_members, has_thumbnail, billing_information, row_version, created_at, created_by, \
         updated_at, updated_by, deleted_at, deleted_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)"
    )
    .bind(row.id)
    .bind(row.tenant_id)
    .bind(row.parent_id)
    .bind(row.root_id)
    .bind(row.depth)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.metadata)
    .bind(&row.settings)
    .bind(row.access_level)
    .bind(row.inherits_members)
    .bind(row.has_thumbnail)
    .bind(&row.billing_information)
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

/// Writes the editable fields if the row is still at `expected_version` (any version when
/// `None`); returns the new version, or `None` when the row moved on (or is gone).
pub(super) async fn update_project(
    tx: &mut Tx,
    row: &ProjectRow,
    expected_version: Option<i64>,
) -> StoreResult<Option<i64>> {
    let new_version = row.row_version.saturating_add(1);
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
        "UPDATE projects SET name = $2, description = $3, metadata = $4, settings = $5, access_level = $6, \
         inherits_members = $7, row_version = $8, updated_at = $9, updated_by = $10, parent_id = $11, \
         depth = $12, deleted_at = $13, deleted_by = $14 \
         WHERE id = $1 AND row_version = $15"
    )
    .bind(row.id)
    .bind(&row.name)
    .bind(&row.description)
    .bind(&row.metadata)
    .bind(&row.settings)
    .bind(row.access_level)
    .bind(row.inherits_members)
    .bind(new_version)
    .bind(row.updated_at)
    .bind(row.updated_by)
    .bind(row.parent_id)
    .bind(row.depth)
    .bind(row.deleted_at)
    .bind(row.deleted_by)
    .bind(expected_version.unwrap_or(row.row_version))
    .execute(conn)
    .await
    .map(|done| done.rows_affected())
    })?;
    Ok((changed == 1).then_some(new_version))
}

/// Shifts the depth of every project below `id` by `delta` (after a move). The walk stops
/// `levels_max` levels down, so that even a corrupt tree (a cycle) cannot make it loop.
pub(super) async fn shift_subtree_depth_in(
    tx: &mut Tx,
    id: ProjectId,
    delta: i64,
    levels_max: i64,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
        "WITH RECURSIVE below(id, level) AS (SELECT id, 1 FROM projects WHERE parent_id = $1 \
         UNION ALL SELECT p.id, below.level + 1 FROM projects p JOIN below ON p.parent_id = below.id \
         WHERE below.level < $3) \
         UPDATE projects SET depth = depth + $2 WHERE id IN (SELECT id FROM below)"
    )
    .bind(id)
    .bind(delta)
    .bind(levels_max)
    .execute(conn)
    .await
    .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// The greatest depth in the subtree of `id` (its own depth when it has no children), read
/// inside `tx`; the walk stops `levels_max` levels down.
pub(super) async fn subtree_depth_max_in(
    tx: &mut Tx,
    id: ProjectId,
    levels_max: i64,
) -> StoreResult<i64> {
    Ok(on_tx!(tx, |conn| {
        sqlx::query_scalar::<_, i64>(
        "WITH RECURSIVE below(id, depth, level) AS (SELECT id, depth, 0 FROM projects WHERE id = $1 \
         UNION ALL SELECT p.id, p.depth, below.level + 1 FROM projects p JOIN below ON p.parent_id = below.id \
         WHERE below.level < $2) \
         SELECT COALESCE(MAX(depth), 0) FROM below"
    )
    .bind(id)
    .bind(levels_max)
    .fetch_one(conn)
    .await
    })?)
}

/// Serialises the writers of the tree holding `id`: PostgreSQL locks the row of its top-level
/// project (the root of a project never changes); SQLite write transactions are exclusive
/// already.
pub(super) async fn lock_tree_of_in(tx: &mut Tx, id: ProjectId) -> StoreResult<()> {
    if let Tx::Postgres(transaction) = tx {
        sqlx::query(
            "SELECT id FROM projects WHERE id = (SELECT root_id FROM projects WHERE id = $1) FOR UPDATE",
        )
        .bind(id)
        .execute(&mut **transaction)
        .await?;
    }
    Ok(())
}

// ---- members ----

#[derive(sqlx::FromRow)]
struct MemberRow {
    principal_id: Uuid,
    principal_type: String,
    role: String,
}

fn member_from_row(row: MemberRow) -> StoreResult<ProjectMember> {
    let decode = |error: crate::http::wire_enum::UnknownVariant| {
        StoreError::Database(sqlx::Error::Decode(Box::new(error)))
    };
    Ok(ProjectMember {
        principal_id: row.principal_id,
        principal_type: row
            .principal_type
            .parse::<PrincipalType>()
            .map_err(decode)?,
        role: row.role.parse::<ProjectRole>().map_err(decode)?,
    })
}

fn members_sql(project: ProjectId) -> Sql {
    let mut sql = Sql::new(
        "SELECT principal_id, principal_type, role FROM project_members WHERE project_id = ",
    );
    let param = sql.arg(Arg::Uuid(project.as_uuid()));
    sql.push(&param);
    sql.push(" ORDER BY created_at, principal_id");
    sql
}

/// The own members of a project.
pub(super) async fn members(db: &Db, project: ProjectId) -> StoreResult<Vec<ProjectMember>> {
    members_sql(project)
        .fetch_all::<MemberRow>(db)
        .await?
        .into_iter()
        .map(member_from_row)
        .collect()
}

/// The own members of a project, read inside `tx`.
pub(super) async fn members_in(tx: &mut Tx, project: ProjectId) -> StoreResult<Vec<ProjectMember>> {
    members_sql(project)
        .fetch_all_in::<MemberRow>(tx)
        .await?
        .into_iter()
        .map(member_from_row)
        .collect()
}

/// Replaces the own members of a project.
pub(super) async fn replace_members(
    tx: &mut Tx,
    project: ProjectId,
    members: &[ProjectMember],
    at: DateTime<Utc>,
) -> StoreResult<()> {
    on_tx!(tx, |conn| sqlx::query(
        "DELETE FROM project_members WHERE project_id = $1"
    )
    .bind(project)
    .execute(&mut *conn)
    .await
    .map(|done| done.rows_affected()))?;
    for member in members {
        on_tx!(tx, |conn| {
            sqlx::query(
            "INSERT INTO project_members (project_id, principal_id, principal_type, role, created_at) \
             VALUES ($1, $2, $3, $4, $5)"
        )
        .bind(project)
        .bind(member.principal_id)
        .bind(member.principal_type.as_str())
        .bind(member.role.as_str())
        .bind(at)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
        })?;
    }
    Ok(())
}

// ---- lists ----

/// Runs a list statement built by the service (selecting [`columns`] from `projects p`,
/// ordered and limited) and returns its rows in order.
pub(super) async fn list(db: &Db, sql: Sql) -> StoreResult<Vec<ProjectRow>> {
    match db {
        Db::Sqlite(_, reader) => reader.fetch_all(sql, project_from_sqlite),
        Db::Postgres(_) => sql.fetch_all(db).await,
    }
}

/// A project row of [`COLUMNS`] (from column `first`) on the synchronous SQLite read path.
fn project_at(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<ProjectRow> {
    let at = |offset: usize| first + offset;
    Ok(ProjectRow {
        id: ProjectId::from_uuid(uuid_at(row, at(0))?),
        tenant_id: crate::ids::TenantId::from_uuid(uuid_at(row, at(1))?),
        parent_id: opt_uuid_at(row, at(2))?.map(ProjectId::from_uuid),
        root_id: ProjectId::from_uuid(uuid_at(row, at(3))?),
        depth: row.get(at(4))?,
        name: row.get(at(5))?,
        description: row.get(at(6))?,
        metadata: row.get(at(7))?,
        settings: row.get(at(8))?,
        access_level: row.get(at(9))?,
        inherits_members: row.get(at(10))?,
        has_thumbnail: row.get(at(11))?,
        billing_information: row.get(at(12))?,
        row_version: row.get(at(13))?,
        created_at: time_at(row, at(14))?,
        created_by: opt_uuid_at(row, at(15))?,
        updated_at: time_at(row, at(16))?,
        updated_by: opt_uuid_at(row, at(17))?,
        deleted_at: opt_time_at(row, at(18))?,
        deleted_by: opt_uuid_at(row, at(19))?,
    })
}

fn project_from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<ProjectRow> {
    project_at(row, 0)
}

fn chain_row_from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<ChainRow> {
    Ok(ChainRow {
        project: project_at(row, 0)?,
        caller_role: row.get(COLUMN_COUNT)?,
    })
}

/// Number of columns in [`COLUMNS`].
const COLUMN_COUNT: usize = 20;

/// Runs a count statement built by the service.
pub(super) async fn count(db: &Db, sql: Sql) -> StoreResult<u64> {
    Ok(u64::try_from(sql.fetch_count(db).await?).unwrap_or(0))
}

/// The column list for list statements (table alias `p`).
pub(super) fn columns() -> &'static str {
    COLUMNS
}

/// A row of the recursive listing.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct DescendantRow {
    /// Project.
    pub(crate) id: ProjectId,
    /// Parent.
    pub(crate) parent_id: Option<ProjectId>,
    /// Name.
    pub(crate) name: String,
    /// Path below the listed project.
    pub(crate) relative_path: String,
}

/// Runs a recursive listing statement built by the service.
pub(super) async fn descendants(db: &Db, sql: Sql) -> StoreResult<Vec<DescendantRow>> {
    sql.fetch_all(db).await
}

/// The live subprojects of `parent` with this name, oldest first, at most `limit`.
pub(super) async fn children_named_in(
    tx: &mut Tx,
    parent: ProjectId,
    name: &str,
    limit: i64,
) -> StoreResult<Vec<ProjectRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM projects p WHERE p.parent_id = $1 AND p.name = $2 AND p.deleted_at IS NULL \
         ORDER BY p.created_at, p.id LIMIT $3"
    );
    Ok(on_tx!(tx, |conn| sqlx::query_as::<_, ProjectRow>(
        sqlx::AssertSqlSafe(sql)
    )
    .bind(parent)
    .bind(name)
    .bind(limit)
    .fetch_all(conn)
    .await)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_count_matches_the_column_list() {
        assert_eq!(COLUMNS.split(',').count(), COLUMN_COUNT);
    }
}

//! SQL for projects and their members, on both databases. No rules here: see `service.rs`.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::auth::PrincipalType;
use crate::auth::TenantStanding;
use crate::db::{
    Arg, Db, IDS_PER_STATEMENT, KeysetPage, SortValue, Sql, StoreResult, Tx, opt_time_at,
    opt_uuid_at, time_at, uuid_at,
};
use crate::ids::{ProjectId, TenantId};
use crate::on_tx;
use crate::projects::access::implicit_role;
use crate::projects::access::{AccessLevel, ProjectRole};
use crate::projects::model::{ProjectMember, ProjectRow};

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
/// project; SQLite write transactions are exclusive already.
pub(super) async fn lock_tree_of_in(tx: &mut Tx, id: ProjectId) -> StoreResult<()> {
    lock_trees_of_in(tx, &[id]).await
}

/// Sets whether a project inherits its members, leaving its version alone (part of a change
/// that bumps it).
pub(super) async fn set_inherits_members_in(
    tx: &mut Tx,
    id: ProjectId,
    inherits: bool,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query("UPDATE projects SET inherits_members = $2 WHERE id = $1")
            .bind(id)
            .bind(inherits)
            .execute(conn)
            .await
            .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// [`lock_tree_of_in`] for several trees at once. PostgreSQL locks the root rows in the
/// order of their ids (`FOR UPDATE` locks rows as the sort returns them): taken one by one in
/// the callers' orders, two transactions crossing the same two trees deadlocked.
///
/// The root of a project changes when the recycle bin restores it into another tree, under
/// the locks of both trees. A transaction that waited for a lock while that happened holds
/// the old root's lock; it then reads the roots again and locks the new ones too, until what
/// it holds covers them.
pub(super) async fn lock_trees_of_in(tx: &mut Tx, ids: &[ProjectId]) -> StoreResult<()> {
    let Tx::Postgres(transaction) = tx else {
        return Ok(());
    };
    let ids: Vec<Uuid> = ids.iter().map(ProjectId::as_uuid).collect();
    let mut locked: BTreeSet<Uuid> = BTreeSet::new();
    for _ in 0..ROOT_LOCK_ROUNDS_MAX {
        let roots: Vec<Uuid> =
            sqlx::query_scalar("SELECT DISTINCT root_id FROM projects WHERE id = ANY($1)")
                .bind(&ids)
                .fetch_all(&mut **transaction)
                .await?;
        if roots.iter().all(|root| locked.contains(root)) {
            return Ok(());
        }
        locked.extend(roots);
        let wanted: Vec<Uuid> = locked.iter().copied().collect();
        sqlx::query("SELECT id FROM projects WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(wanted)
            .execute(&mut **transaction)
            .await?;
    }
    Err(crate::db::StoreError::Corrupt(
        "the top-level project of a tree kept changing while its lock was taken",
    ))
}

/// Rounds of [`lock_trees_of_in`]: each one follows a restore that re-rooted the trees while
/// the previous round waited; more than a few means something else is wrong.
const ROOT_LOCK_ROUNDS_MAX: usize = 8;

// ---- members ----

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
    members_sql(project).fetch_all(db).await
}

/// The own members of a project, read inside `tx`.
pub(super) async fn members_in(tx: &mut Tx, project: ProjectId) -> StoreResult<Vec<ProjectMember>> {
    members_sql(project).fetch_all_in(tx).await
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
        .bind(member.principal_type)
        .bind(member.role)
        .bind(at)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
        })?;
    }
    Ok(())
}

// ---- lists ----

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

// ---- lists ----

/// A sort of project lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortColumn {
    /// By name.
    Name,
    /// By creation time.
    CreatedAt,
    /// By last change.
    UpdatedAt,
    /// By access level.
    AccessLevel,
}

impl SortColumn {
    fn sql(self) -> &'static str {
        match self {
            Self::Name => "p.name",
            Self::CreatedAt => "p.created_at",
            Self::UpdatedAt => "p.updated_at",
            Self::AccessLevel => "p.access_level",
        }
    }

    /// The keyset page over this column.
    pub(crate) fn keyset(
        self,
        descending: bool,
        after: Option<(SortValue, Uuid)>,
        fetch: i64,
    ) -> KeysetPage {
        KeysetPage {
            column: self.sql(),
            id_column: "p.id",
            descending,
            after,
            fetch,
        }
    }
}

/// Which rows of a list to return.
#[derive(Debug, Clone)]
pub(crate) enum Window {
    /// Keyset: after this position, this many rows (page + 1).
    Keyset {
        /// Last row of the previous page.
        after: Option<(SortValue, Uuid)>,
        /// Rows to fetch.
        fetch: i64,
    },
    /// Offset.
    Offset {
        /// Rows to skip.
        offset: u32,
        /// Rows to return.
        limit: u32,
    },
}

/// Which projects a list holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ListScope {
    /// The top-level projects of a tenant.
    Roots(TenantId),
    /// The direct subprojects of a project.
    Children(ProjectId),
}

/// A project list as one caller sees it: the projects of `scope` on which the caller's
/// effective role is at least `minimum`, filtered.
#[derive(Debug, Clone)]
pub(crate) struct ProjectListQuery<'a> {
    /// Which projects.
    pub(crate) scope: ListScope,
    /// The caller, as members are matched.
    pub(crate) caller: (Uuid, PrincipalType),
    /// The caller's membership role in the listed parent: subprojects that inherit members
    /// give it the same.
    pub(crate) parent_member_role: Option<ProjectRole>,
    /// The caller's standing in the tenant (implicit roles from access levels).
    pub(crate) standing: TenantStanding,
    /// The least effective role a listed project needs.
    pub(crate) minimum: ProjectRole,
    /// The caller's membership role must be one of these (empty: any).
    pub(crate) roles: &'a BTreeSet<ProjectRole>,
    /// Case-insensitive name prefix.
    pub(crate) name_prefix: Option<&'a str>,
}

impl ProjectListQuery<'_> {
    /// `SELECT <select> FROM projects p ... WHERE <scope, visibility and filters>`.
    fn sql(&self, select: &str) -> Sql {
        let mut sql = Sql::new(&format!(
            "SELECT {select} FROM projects p LEFT JOIN project_members m ON m.project_id = p.id AND m.principal_id = "
        ));
        let caller = sql.arg(Arg::Uuid(self.caller.0));
        let caller_type = sql.arg(Arg::Text(self.caller.1.as_str().to_owned()));
        sql.push(&format!(
            "{caller} AND m.principal_type = {caller_type} WHERE p.deleted_at IS NULL AND "
        ));
        match self.scope {
            ListScope::Children(parent) => {
                let parent = sql.arg(Arg::Uuid(parent.as_uuid()));
                sql.push(&format!("p.parent_id = {parent}"));
            }
            ListScope::Roots(tenant) => {
                let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
                sql.push(&format!("p.tenant_id = {tenant} AND p.parent_id IS NULL"));
            }
        }
        let member_role = match self.parent_member_role {
            Some(role) => format!(
                "(CASE WHEN p.inherits_members THEN '{}' ELSE m.role END)",
                role.as_str()
            ),
            None => "(CASE WHEN p.inherits_members THEN NULL ELSE m.role END)".to_owned(),
        };
        sql.push(&format!(
            " AND {}",
            access_condition(&member_role, self.standing, self.minimum)
        ));
        if !self.roles.is_empty() {
            let roles: Vec<String> = self
                .roles
                .iter()
                .map(|role| format!("'{}'", role.as_str()))
                .collect();
            sql.push(&format!(" AND {member_role} IN ({})", roles.join(", ")));
        }
        if let Some(prefix) = self.name_prefix {
            let length = sql.arg(Arg::I64(
                i64::try_from(prefix.chars().count()).unwrap_or(i64::MAX),
            ));
            let value = sql.arg(Arg::Text(prefix.to_lowercase()));
            sql.push(&format!(
                " AND lower(substr(p.name, 1, CAST({length} AS INTEGER))) = {value}"
            ));
        }
        sql
    }
}

/// One keyset page of a project list. The hottest read: on SQLite it takes the synchronous
/// read path.
pub(crate) async fn list_projects(
    db: &Db,
    query: &ProjectListQuery<'_>,
    page: &KeysetPage,
) -> StoreResult<Vec<ProjectRow>> {
    let mut sql = query.sql(COLUMNS);
    sql.keyset_after(page).keyset_order(page);
    fetch_projects(db, sql).await
}

/// One offset page of a project list, `(offset, limit)`.
pub(crate) async fn list_projects_offset(
    db: &Db,
    query: &ProjectListQuery<'_>,
    column: SortColumn,
    descending: bool,
    (offset, limit): (u32, u32),
) -> StoreResult<Vec<ProjectRow>> {
    let mut sql = query.sql(COLUMNS);
    let direction = if descending { "DESC" } else { "ASC" };
    let limit = sql.arg(Arg::I64(i64::from(limit)));
    let offset = sql.arg(Arg::I64(i64::from(offset)));
    sql.push(&format!(
        " ORDER BY {column} {direction}, p.id {direction} LIMIT {limit} OFFSET {offset}",
        column = column.sql()
    ));
    fetch_projects(db, sql).await
}

/// How many projects a list holds.
pub(crate) async fn count_projects(db: &Db, query: &ProjectListQuery<'_>) -> StoreResult<u64> {
    let count = query.sql("COUNT(*)").fetch_count(db).await?;
    Ok(u64::try_from(count).unwrap_or(0))
}

async fn fetch_projects(db: &Db, sql: Sql) -> StoreResult<Vec<ProjectRow>> {
    match db {
        Db::Sqlite(_, reader) => reader.fetch_all(sql, project_from_sqlite),
        Db::Postgres(_) => sql.fetch_all(db).await,
    }
}

/// Every subproject below `root` the caller can access, walked at most `levels_max` levels.
#[derive(Debug, Clone)]
pub(crate) struct DescendantsQuery {
    /// Where the walk starts (not listed itself).
    pub(crate) root: ProjectId,
    /// The caller, as members are matched.
    pub(crate) caller: (Uuid, PrincipalType),
    /// The caller's membership role in `root`, inherited down.
    pub(crate) parent_member_role: Option<ProjectRole>,
    /// The caller's standing in the tenant.
    pub(crate) standing: TenantStanding,
    /// Deepest level walked: even a corrupt tree cannot make the walk loop.
    pub(crate) levels_max: i64,
}

impl DescendantsQuery {
    fn sql(&self, select: &str) -> Sql {
        let mut sql = Sql::new(
            "WITH RECURSIVE tree(id, parent_id, name, access_level, relative_path, member_role, level) AS (SELECT p.id, p.parent_id, p.name, p.access_level, '' || p.name, CASE WHEN p.inherits_members THEN ",
        );
        let parent_role = sql.arg(Arg::OptText(
            self.parent_member_role.map(|role| role.as_str().to_owned()),
        ));
        let caller = sql.arg(Arg::Uuid(self.caller.0));
        let caller_type = sql.arg(Arg::Text(self.caller.1.as_str().to_owned()));
        let own_role = format!(
            "(SELECT role FROM project_members WHERE project_id = p.id AND principal_id = {caller} AND principal_type = {caller_type})"
        );
        let root = sql.arg(Arg::Uuid(self.root.as_uuid()));
        let levels = sql.arg(Arg::I64(self.levels_max));
        sql.push(&format!(
            "{parent_role} ELSE {own_role} END, 1 FROM projects p WHERE p.deleted_at IS NULL AND p.parent_id = {root} \
             UNION ALL SELECT p.id, p.parent_id, p.name, p.access_level, tree.relative_path || '/' || p.name, \
             CASE WHEN p.inherits_members THEN tree.member_role ELSE {own_role} END, tree.level + 1 \
             FROM projects p JOIN tree ON p.parent_id = tree.id WHERE p.deleted_at IS NULL AND tree.level < {levels}) \
             SELECT {select} FROM tree p WHERE {}",
            access_condition("p.member_role", self.standing, ProjectRole::Reader)
        ));
        sql
    }
}

/// How many projects [`list_descendants`] would give in all.
pub(crate) async fn count_descendants(db: &Db, query: &DescendantsQuery) -> StoreResult<u64> {
    let count = query.sql("COUNT(*)").fetch_count(db).await?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// One offset page of the accessible descendants, ordered by path.
pub(crate) async fn list_descendants(
    db: &Db,
    query: &DescendantsQuery,
    offset: u32,
    limit: u32,
) -> StoreResult<Vec<DescendantRow>> {
    let mut sql = query.sql("p.id, p.parent_id, p.name, p.relative_path");
    let limit = sql.arg(Arg::I64(i64::from(limit)));
    let offset = sql.arg(Arg::I64(i64::from(offset)));
    sql.push(&format!(
        " ORDER BY p.relative_path, p.id LIMIT {limit} OFFSET {offset}"
    ));
    sql.fetch_all(db).await
}

/// SQL condition: the caller's effective role on `p` is at least `minimum`, given its
/// membership role expression and its standing in the tenant. Only trusted literals go in.
fn access_condition(member_role: &str, standing: TenantStanding, minimum: ProjectRole) -> String {
    let roles: Vec<String> = ProjectRole::ALL
        .iter()
        .filter(|role| **role >= minimum)
        .map(|role| format!("'{}'", role.as_str()))
        .collect();
    let by_membership = format!("{member_role} IN ({})", roles.join(", "));
    let levels: Vec<String> = AccessLevel::ALL
        .iter()
        .filter(|level| implicit_role(standing, **level) >= Some(minimum))
        .map(|level| format!("'{}'", level.as_str()))
        .collect();
    if levels.is_empty() {
        format!("({by_membership})")
    } else {
        format!(
            "({by_membership} OR p.access_level IN ({}))",
            levels.join(", ")
        )
    }
}

/// What decides a caller's role on one project: a row of [`roles_of`].
#[derive(Debug, Clone, sqlx::FromRow)]
pub(super) struct RoleInputs {
    /// The project.
    pub(super) id: ProjectId,
    /// Its parent.
    pub(super) parent_id: Option<ProjectId>,
    /// Whether it inherits members.
    pub(super) inherits_members: bool,
    /// Its access level.
    pub(super) access_level: AccessLevel,
    /// The caller's role among its own members.
    pub(super) caller_role: Option<ProjectRole>,
}

/// The role inputs of `ids` and of all their ancestors, each project once, whatever their
/// state. `UNION` (not `UNION ALL`) drops projects already reached, so even a corrupt tree (a
/// cycle) ends the walk.
pub(super) async fn roles_of(
    db: &Db,
    ids: &[ProjectId],
    (caller, caller_type): (Uuid, PrincipalType),
) -> StoreResult<Vec<RoleInputs>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let literals: Vec<String> = ids.iter().map(|id| db.uuid_literal(id.as_uuid())).collect();
    let mut sql = Sql::new(&format!(
        "WITH RECURSIVE up(id) AS (SELECT id FROM projects WHERE id IN ({}) \
         UNION SELECT p.parent_id FROM projects p JOIN up ON p.id = up.id WHERE p.parent_id IS NOT NULL) \
         SELECT p.id, p.parent_id, p.inherits_members, p.access_level, m.role AS caller_role \
         FROM up JOIN projects p ON p.id = up.id \
         LEFT JOIN project_members m ON m.project_id = p.id AND m.principal_id = ",
        literals.join(", ")
    ));
    let caller = sql.arg(Arg::Uuid(caller));
    let caller_type = sql.arg(Arg::Text(caller_type.as_str().to_owned()));
    sql.push(&format!("{caller} AND m.principal_type = {caller_type}"));
    sql.fetch_all(db).await
}

/// Whether `caller` is a member of any project (deleted ones included: the check only tells
/// callers who can hold no role anywhere from the others).
pub(super) async fn is_member_anywhere(
    db: &Db,
    (caller, caller_type): (Uuid, PrincipalType),
) -> StoreResult<bool> {
    let mut sql =
        Sql::new("SELECT COUNT(*) FROM (SELECT 1 FROM project_members WHERE principal_id = ");
    let caller = sql.arg(Arg::Uuid(caller));
    let caller_type = sql.arg(Arg::Text(caller_type.as_str().to_owned()));
    sql.push(&format!(
        "{caller} AND principal_type = {caller_type} LIMIT 1) AS memberships"
    ));
    Ok(sql.fetch_count(db).await? > 0)
}

/// The projects `caller` is an Owner member of.
pub(super) async fn owned_by(
    db: &Db,
    (caller, caller_type): (Uuid, PrincipalType),
) -> StoreResult<Vec<ProjectId>> {
    let mut sql =
        Sql::new("SELECT project_id FROM project_members WHERE role = 'Owner' AND principal_id = ");
    let caller = sql.arg(Arg::Uuid(caller));
    let caller_type = sql.arg(Arg::Text(caller_type.as_str().to_owned()));
    sql.push(&format!(
        "{caller} AND principal_type = {caller_type} ORDER BY project_id"
    ));
    let rows: Vec<(ProjectId,)> = sql.fetch_all(db).await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
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

// ---- subtrees, for the recycle bin ----
//
// The walks below stop `levels_max` levels down, so that even a corrupt tree (a cycle) cannot
// make them loop.

/// The subtree of `$1` (itself included, whatever its state) as a recursive CTE named
/// `below(id, level)`, walked at most `$2` levels. `live_only` does not enter projects in the
/// bin below it.
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

/// The ids of the subtree of `project` (see [`below_cte`]), each once, read inside `tx`.
pub(super) async fn subtree_in(
    tx: &mut Tx,
    project: ProjectId,
    live_only: bool,
    levels_max: i64,
) -> StoreResult<Vec<ProjectId>> {
    let sql = format!("{} SELECT DISTINCT id FROM below", below_cte(live_only));
    Ok(on_tx!(tx, |conn| {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(project)
            .bind(levels_max)
            .fetch_all(conn)
            .await
    })?)
}

/// Brings a project row back from the bin: clears its deletion. False when it was not deleted
/// (or is gone).
pub(super) async fn restore_in(
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

/// Re-roots the subtree of `project` under `parent`: its parent, root and depths change;
/// `depth_delta` is added to every depth in it.
pub(super) async fn reparent_subtree_in(
    tx: &mut Tx,
    project: ProjectId,
    (parent, root): (ProjectId, ProjectId),
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

/// Deletes up to `limit` project rows of the subtree of `project`, deepest first, so that
/// every deleted project's children go in the same statement or an earlier one (their members
/// go with them).
pub(super) async fn delete_subtree_in(
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

/// Whether a live project of `tenant` named `name` is in `parent` (at the top level when
/// `None`), read inside `tx`.
pub(super) async fn live_name_taken_in(
    tx: &mut Tx,
    tenant: TenantId,
    parent: Option<ProjectId>,
    name: &str,
) -> StoreResult<bool> {
    let mut sql =
        Sql::new("SELECT COUNT(*) FROM projects WHERE deleted_at IS NULL AND tenant_id = ");
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    let name = sql.arg(Arg::Text(name.to_owned()));
    sql.push(&format!(" AND name = {name}"));
    match parent {
        Some(parent) => {
            let parent = sql.arg(Arg::Uuid(parent.as_uuid()));
            sql.push(&format!(" AND parent_id = {parent}"));
        }
        None => {
            sql.push(" AND parent_id IS NULL");
        }
    }
    Ok(sql.fetch_count_in(tx).await? > 0)
}

/// The projects of `tenant` in the bin and every project below one, each once. `UNION` (not
/// `UNION ALL`) drops projects already reached, so even a corrupt tree (a cycle) ends the
/// walk.
pub(super) async fn binned(db: &Db, tenant: TenantId) -> StoreResult<Vec<ProjectId>> {
    Ok(crate::on_db!(db, |pool| {
        sqlx::query_scalar(
            "WITH RECURSIVE binned (id) AS ( \
                 SELECT id FROM projects WHERE tenant_id = $1 AND deleted_at IS NOT NULL \
                 UNION SELECT p.id FROM projects p JOIN binned b ON p.parent_id = b.id) \
             SELECT id FROM binned",
        )
        .bind(tenant)
        .fetch_all(pool)
        .await
    })?)
}

/// The tenant and name of each of `ids` that is a project, in the bin or not.
pub(super) async fn names(db: &Db, ids: &[Uuid]) -> StoreResult<Vec<(Uuid, TenantId, String)>> {
    let mut found = Vec::new();
    for chunk in ids.chunks(IDS_PER_STATEMENT) {
        let mut sql = Sql::new("SELECT id, tenant_id, name FROM projects WHERE id IN ");
        sql.push_uuids(chunk.iter().copied());
        found.extend(sql.fetch_all::<(Uuid, TenantId, String)>(db).await?);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_conditions_follow_the_role_table() {
        assert_eq!(
            access_condition("m.role", TenantStanding::Outsider, ProjectRole::Reader),
            "(m.role IN ('Reader', 'Contributor', 'Owner'))"
        );
        assert_eq!(
            access_condition("m.role", TenantStanding::Member, ProjectRole::Reader),
            "(m.role IN ('Reader', 'Contributor', 'Owner') OR p.access_level IN ('Shared'))"
        );
        assert_eq!(
            access_condition("m.role", TenantStanding::Member, ProjectRole::Contributor),
            "(m.role IN ('Contributor', 'Owner'))"
        );
        assert_eq!(
            access_condition("m.role", TenantStanding::Admin, ProjectRole::Contributor),
            "(m.role IN ('Contributor', 'Owner') OR p.access_level IN ('Private', 'Shared'))"
        );
    }

    #[test]
    fn the_column_count_matches_the_column_list() {
        assert_eq!(COLUMNS.split(',').count(), COLUMN_COUNT);
    }
}

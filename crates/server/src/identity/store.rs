//! SQL for identity, on both databases. No rules here: see `service.rs`.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{AssertSqlSafe, FromRow, Row};
use uuid::Uuid;

use crate::db::{
    Arg, Db, KeysetPage, SortValue, Sql, StoreError, StoreResult, Tx, opt_time_at, opt_uuid_at,
    time_at, uuid_at,
};
use crate::identity::model::{ApiKey, Invitation, Member, Tenant, TenantRole, User};
use crate::ids::{ApiKeyId, InvitationId, TenantId, UserId};
use crate::{on_db, on_tx};

/// Sortable columns of tenant and user lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SortColumn {
    /// By name.
    Name,
    /// By creation time.
    CreatedAt,
}

/// One page of a tenant or user list.
#[derive(Debug, Clone)]
pub(crate) struct ListPage {
    /// Sort column.
    pub(crate) column: SortColumn,
    /// Descending order.
    pub(crate) descending: bool,
    /// Last row of the previous page.
    pub(crate) after: Option<(SortValue, Uuid)>,
    /// Rows to fetch.
    pub(crate) fetch: i64,
}

impl ListPage {
    fn keyset(&self) -> KeysetPage {
        KeysetPage {
            column: match self.column {
                SortColumn::Name => "name",
                SortColumn::CreatedAt => "created_at",
            },
            id_column: "id",
            descending: self.descending,
            after: self.after.clone(),
            fetch: self.fetch,
        }
    }
}

// ---- tenants ----

pub(super) async fn insert_tenant(tx: &mut Tx, tenant: &Tenant) -> StoreResult<()> {
    on_tx!(tx, |conn| sqlx::query(
        "INSERT INTO tenants (id, name, created_at, updated_at) VALUES ($1, $2, $3, $4)"
    )
    .bind(tenant.id)
    .bind(&tenant.name)
    .bind(tenant.created_at)
    .bind(tenant.updated_at)
    .execute(conn)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

pub(super) async fn find_tenant(db: &Db, id: TenantId) -> StoreResult<Option<Tenant>> {
    Ok(on_db!(db, |pool| sqlx::query_as::<_, Tenant>(
        "SELECT id, name, created_at, updated_at FROM tenants WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(pool)
    .await)?)
}

/// Tenants, optionally only those `manager` holds Owner or Administrator in.
pub(super) async fn list_tenants(
    db: &Db,
    page: &ListPage,
    manager: Option<UserId>,
) -> StoreResult<Vec<Tenant>> {
    let filter = manager.map(|manager| {
        (
            "id IN (SELECT tenant_id FROM tenant_members WHERE user_id = {value} AND role IN ('Owner', 'Administrator'))",
            manager.as_uuid(),
        )
    });
    list_keyset(
        db,
        "SELECT id, name, created_at, updated_at FROM tenants",
        filter,
        page,
    )
    .await
}

/// One page of `select`, optionally restricted to ids in the subquery `filter` on its value.
async fn list_keyset<T>(
    db: &Db,
    select: &str,
    filter: Option<(&str, Uuid)>,
    page: &ListPage,
) -> StoreResult<Vec<T>>
where
    T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin,
{
    let mut sql = Sql::new(select);
    sql.push(" WHERE 1 = 1");
    if let Some((condition, value)) = filter {
        let value = sql.arg(Arg::Uuid(value));
        sql.push(&format!(" AND {}", condition.replace("{value}", &value)));
    }
    let keyset = page.keyset();
    sql.keyset_after(&keyset).keyset_order(&keyset);
    sql.fetch_all(db).await
}

/// Tenants `user` is a member of, with the role, by name.
pub(super) async fn tenants_of(db: &Db, user: UserId) -> StoreResult<Vec<(Tenant, TenantRole)>> {
    let rows = on_db!(db, |pool| sqlx::query(
        "SELECT t.id, t.name, t.created_at, t.updated_at, m.role FROM tenants t \
         JOIN tenant_members m ON m.tenant_id = t.id WHERE m.user_id = $1 ORDER BY t.name, t.id"
    )
    .bind(user)
    .fetch_all(pool)
    .await
    .and_then(|rows| rows
        .iter()
        .map(|row| Ok((Tenant::from_row(row)?, row.try_get("role")?)))
        .collect::<Result<Vec<_>, sqlx::Error>>()))?;
    Ok(rows)
}

// ---- users ----

const USER_COLUMNS: &str = "id, name, email, disabled_at, created_at, updated_at";

pub(super) async fn insert_user(tx: &mut Tx, user: &User) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
        "INSERT INTO users (id, name, email, disabled_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)"
    )
    .bind(user.id)
    .bind(&user.name)
    .bind(&user.email)
    .bind(user.disabled_at)
    .bind(user.created_at)
    .bind(user.updated_at)
    .execute(conn)
    .await
    .map(|done| done.rows_affected())
    })?;
    Ok(())
}

pub(super) async fn update_user(db: &Db, user: &User) -> StoreResult<()> {
    let result = on_db!(db, |pool| {
        sqlx::query(
        "UPDATE users SET name = $2, email = $3, disabled_at = $4, updated_at = $5 WHERE id = $1"
    )
    .bind(user.id)
    .bind(&user.name)
    .bind(&user.email)
    .bind(user.disabled_at)
    .bind(user.updated_at)
    .execute(pool)
    .await
    .map(|done| done.rows_affected())
    })?;
    crate::db::changes::note_commit();
    if result == 0 {
        return Err(StoreError::NotFound("user"));
    }
    Ok(())
}

pub(super) async fn find_user(db: &Db, id: UserId) -> StoreResult<Option<User>> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
    Ok(on_db!(db, |pool| sqlx::query_as::<_, User>(
        AssertSqlSafe(sql)
    )
    .bind(id)
    .fetch_optional(pool)
    .await)?)
}

pub(super) async fn find_user_by_email(db: &Db, email: &str) -> StoreResult<Option<User>> {
    let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE lower(email) = lower($1)");
    Ok(on_db!(db, |pool| sqlx::query_as::<_, User>(
        AssertSqlSafe(sql)
    )
    .bind(email)
    .fetch_optional(pool)
    .await)?)
}

/// Users, optionally only the members of `tenant`.
pub(super) async fn list_users(
    db: &Db,
    page: &ListPage,
    tenant: Option<TenantId>,
) -> StoreResult<Vec<User>> {
    let filter = tenant.map(|tenant| {
        (
            "id IN (SELECT user_id FROM tenant_members WHERE tenant_id = {value})",
            tenant.as_uuid(),
        )
    });
    let select = format!("SELECT {USER_COLUMNS} FROM users");
    list_keyset(db, &select, filter, page).await
}

// ---- members ----

pub(super) async fn insert_member(
    tx: &mut Tx,
    tenant: TenantId,
    user: UserId,
    role: TenantRole,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    on_tx!(tx, |conn| sqlx::query(
        "INSERT INTO tenant_members (tenant_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)"
    )
    .bind(tenant)
    .bind(user)
    .bind(role)
    .bind(at)
    .execute(conn)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

pub(super) async fn find_member_role(
    tx: &mut Tx,
    tenant: TenantId,
    user: UserId,
) -> StoreResult<Option<TenantRole>> {
    Ok(on_tx!(tx, |conn| sqlx::query_scalar(
        "SELECT role FROM tenant_members WHERE tenant_id = $1 AND user_id = $2"
    )
    .bind(tenant)
    .bind(user)
    .fetch_optional(conn)
    .await)?)
}

/// Serialises membership changes of one tenant, so that two concurrent demotions cannot both
/// see a second Owner and leave none. SQLite write transactions are already exclusive.
pub(super) async fn lock_tenant(tx: &mut Tx, tenant: TenantId) -> StoreResult<()> {
    if let Tx::Postgres(transaction) = tx {
        sqlx::query("SELECT id FROM tenants WHERE id = $1 FOR UPDATE")
            .bind(tenant)
            .execute(&mut **transaction)
            .await?;
    }
    Ok(())
}

pub(super) async fn count_owners(tx: &mut Tx, tenant: TenantId) -> StoreResult<i64> {
    Ok(on_tx!(tx, |conn| sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM tenant_members WHERE tenant_id = $1 AND role = 'Owner'"
    )
    .bind(tenant)
    .fetch_one(conn)
    .await)?)
}

pub(super) async fn update_member_role(
    tx: &mut Tx,
    tenant: TenantId,
    user: UserId,
    role: TenantRole,
) -> StoreResult<()> {
    on_tx!(tx, |conn| sqlx::query(
        "UPDATE tenant_members SET role = $3 WHERE tenant_id = $1 AND user_id = $2"
    )
    .bind(tenant)
    .bind(user)
    .bind(role)
    .execute(conn)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

pub(super) async fn delete_member(tx: &mut Tx, tenant: TenantId, user: UserId) -> StoreResult<()> {
    on_tx!(tx, |conn| sqlx::query(
        "DELETE FROM tenant_members WHERE tenant_id = $1 AND user_id = $2"
    )
    .bind(tenant)
    .bind(user)
    .execute(conn)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

/// Members of `tenant` by user name, one offset page, with the total count.
pub(super) async fn list_members(
    db: &Db,
    tenant: TenantId,
    offset: u32,
    limit: u32,
) -> StoreResult<(u64, Vec<Member>)> {
    let (total, rows) = on_db!(db, |pool| {
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM tenant_members WHERE tenant_id = $1")
                .bind(tenant)
                .fetch_one(pool)
                .await?;
        let sql = format!(
            "{MEMBER_SELECT} WHERE m.tenant_id = $1 ORDER BY u.name, u.id LIMIT $2 OFFSET $3"
        );
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(tenant)
            .bind(i64::from(limit))
            .bind(i64::from(offset))
            .fetch_all(pool)
            .await?;
        let members = rows
            .iter()
            .map(|row| member_from_row(tenant, row))
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        Ok::<_, sqlx::Error>((total, members))
    })?;
    Ok((u64::try_from(total).unwrap_or(0), rows))
}

const MEMBER_SELECT: &str = "SELECT u.id, u.name, u.email, u.disabled_at, u.created_at, u.updated_at, \
     m.role, m.created_at AS joined_at FROM tenant_members m JOIN users u ON u.id = m.user_id";

fn member_from_row<R: Row>(tenant: TenantId, row: &R) -> Result<Member, sqlx::Error>
where
    User: for<'r> FromRow<'r, R>,
    for<'r> &'r str: sqlx::ColumnIndex<R>,
    TenantRole: sqlx::Type<R::Database> + for<'r> sqlx::Decode<'r, R::Database>,
    DateTime<Utc>: sqlx::Type<R::Database> + for<'r> sqlx::Decode<'r, R::Database>,
{
    Ok(Member {
        tenant_id: tenant,
        user: User::from_row(row)?,
        role: row.try_get("role")?,
        created_at: row.try_get("joined_at")?,
    })
}

pub(super) async fn find_member(
    db: &Db,
    tenant: TenantId,
    user: UserId,
) -> StoreResult<Option<Member>> {
    let sql = format!("{MEMBER_SELECT} WHERE m.tenant_id = $1 AND m.user_id = $2");
    Ok(on_db!(db, |pool| sqlx::query(AssertSqlSafe(sql))
        .bind(tenant)
        .bind(user)
        .fetch_optional(pool)
        .await
        .and_then(|row| row
            .as_ref()
            .map(|row| member_from_row(tenant, row))
            .transpose()))?)
}

/// Every tenant `user` belongs to, with the role.
pub(super) async fn memberships_of(
    db: &Db,
    user: UserId,
) -> StoreResult<Vec<(TenantId, TenantRole)>> {
    Ok(on_db!(db, |pool| sqlx::query_as(
        "SELECT tenant_id, role FROM tenant_members WHERE user_id = $1 ORDER BY tenant_id"
    )
    .bind(user)
    .fetch_all(pool)
    .await)?)
}

/// Those of `users` who are members of `tenant`.
pub(super) async fn users_in_tenant(
    db: &Db,
    tenant: TenantId,
    users: &[Uuid],
) -> StoreResult<Vec<Uuid>> {
    ids_in_tenant(
        db,
        "SELECT user_id FROM tenant_members WHERE tenant_id = ",
        " AND user_id IN (",
        tenant,
        users,
    )
    .await
}

/// Those of `keys` that were issued in `tenant` (revoked or not).
pub(super) async fn api_keys_in_tenant(
    db: &Db,
    tenant: TenantId,
    keys: &[Uuid],
) -> StoreResult<Vec<Uuid>> {
    ids_in_tenant(
        db,
        "SELECT id FROM api_keys WHERE tenant_id = ",
        " AND id IN (",
        tenant,
        keys,
    )
    .await
}

async fn ids_in_tenant(
    db: &Db,
    select: &str,
    id_in: &str,
    tenant: TenantId,
    ids: &[Uuid],
) -> StoreResult<Vec<Uuid>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = Sql::new(select);
    let tenant = sql.arg(Arg::Uuid(tenant.as_uuid()));
    sql.push(&tenant);
    sql.push(id_in);
    let placeholders: Vec<String> = ids.iter().map(|id| sql.arg(Arg::Uuid(*id))).collect();
    sql.push(&placeholders.join(", "));
    sql.push(")");
    let rows: Vec<(Uuid,)> = sql.fetch_all(db).await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

// ---- invitations ----

const INVITATION_COLUMNS: &str = "id, tenant_id, email, role, invited_by, created_at, expires_at";

/// Stores `invitation`, replacing any earlier one of its tenant for the same address.
pub(super) async fn replace_invitation(tx: &mut Tx, invitation: &Invitation) -> StoreResult<()> {
    on_tx!(tx, |conn| sqlx::query(
        "DELETE FROM invitations WHERE tenant_id = $1 AND email = $2"
    )
    .bind(invitation.tenant_id)
    .bind(&invitation.email)
    .execute(&mut *conn)
    .await
    .map(|done| done.rows_affected()))?;
    on_tx!(tx, |conn| sqlx::query(
        "INSERT INTO invitations (id, tenant_id, email, role, invited_by, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)"
    )
    .bind(invitation.id)
    .bind(invitation.tenant_id)
    .bind(&invitation.email)
    .bind(invitation.role)
    .bind(invitation.invited_by)
    .bind(invitation.created_at)
    .bind(invitation.expires_at)
    .execute(conn)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

/// An invitation that has not lapsed at `now`.
pub(super) async fn find_invitation(
    db: &Db,
    id: InvitationId,
    now: DateTime<Utc>,
) -> StoreResult<Option<Invitation>> {
    let sql =
        format!("SELECT {INVITATION_COLUMNS} FROM invitations WHERE id = $1 AND expires_at > $2");
    Ok(on_db!(db, |pool| sqlx::query_as::<_, Invitation>(
        AssertSqlSafe(sql)
    )
    .bind(id)
    .bind(now)
    .fetch_optional(pool)
    .await)?)
}

/// The open invitations of `tenant`, newest first, one offset page, with the total count.
pub(super) async fn list_invitations(
    db: &Db,
    tenant: TenantId,
    now: DateTime<Utc>,
    offset: u32,
    limit: u32,
) -> StoreResult<(u64, Vec<Invitation>)> {
    let sql = format!(
        "SELECT {INVITATION_COLUMNS} FROM invitations WHERE tenant_id = $1 AND expires_at > $2 \
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    );
    let (total, rows) = on_db!(db, |pool| {
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM invitations WHERE tenant_id = $1 AND expires_at > $2",
        )
        .bind(tenant)
        .bind(now)
        .fetch_one(pool)
        .await?;
        let rows = sqlx::query_as::<_, Invitation>(AssertSqlSafe(sql))
            .bind(tenant)
            .bind(now)
            .bind(i64::from(limit))
            .bind(i64::from(offset))
            .fetch_all(pool)
            .await?;
        Ok::<_, sqlx::Error>((total, rows))
    })?;
    Ok((u64::try_from(total).unwrap_or(0), rows))
}

/// The open invitations to `email` (lower case), with the name of each tenant, newest first.
/// An address holds few invitations; `limit` bounds them all the same.
pub(super) async fn invitations_to(
    db: &Db,
    email: &str,
    now: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<(Invitation, String)>> {
    let rows = on_db!(db, |pool| sqlx::query(
        "SELECT i.id, i.tenant_id, i.email, i.role, i.invited_by, i.created_at, i.expires_at, \
         t.name AS tenant_name FROM invitations i JOIN tenants t ON t.id = i.tenant_id \
         WHERE i.email = $1 AND i.expires_at > $2 ORDER BY i.created_at DESC, i.id DESC LIMIT $3"
    )
    .bind(email)
    .bind(now)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .and_then(|rows| rows
        .iter()
        .map(|row| Ok((Invitation::from_row(row)?, row.try_get("tenant_name")?)))
        .collect::<Result<Vec<_>, sqlx::Error>>()))?;
    Ok(rows)
}

/// Removes an invitation; whether there was one.
pub(super) async fn delete_invitation(tx: &mut Tx, id: InvitationId) -> StoreResult<bool> {
    let removed = on_tx!(tx, |conn| sqlx::query(
        "DELETE FROM invitations WHERE id = $1"
    )
    .bind(id)
    .execute(conn)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(removed > 0)
}

// ---- API keys ----

const API_KEY_COLUMNS: &str = "id, tenant_id, name, role, created_at, created_by, revoked_at";

fn api_key_from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<ApiKey> {
    Ok(ApiKey {
        id: ApiKeyId::from_uuid(uuid_at(row, 0)?),
        tenant_id: TenantId::from_uuid(uuid_at(row, 1)?),
        name: row.get(2)?,
        role: row.get(3)?,
        created_at: time_at(row, 4)?,
        created_by: opt_uuid_at(row, 5)?,
        revoked_at: opt_time_at(row, 6)?,
    })
}

pub(super) async fn insert_api_key(tx: &mut Tx, key: &ApiKey, hash: &[u8]) -> StoreResult<()> {
    on_tx!(tx, |conn| sqlx::query(
        "INSERT INTO api_keys (id, tenant_id, name, role, key_hash, created_at, created_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)"
    )
    .bind(key.id)
    .bind(key.tenant_id)
    .bind(&key.name)
    .bind(key.role)
    .bind(hash.to_vec())
    .bind(key.created_at)
    .bind(key.created_by)
    .execute(conn)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

/// The key with this hash. Every request made with an API key asks this, so on SQLite it
/// takes the synchronous read path.
pub(super) async fn find_api_key_by_hash(db: &Db, hash: &[u8]) -> StoreResult<Option<ApiKey>> {
    let sql = format!("SELECT {API_KEY_COLUMNS} FROM api_keys WHERE key_hash = $1");
    if let Db::Sqlite(_, reader) = db {
        let mut statement = Sql::new(&sql);
        statement.arg(Arg::Bytes(hash.to_vec()));
        let keys = reader.fetch_all(statement, api_key_from_sqlite)?;
        return Ok(keys.into_iter().next());
    }
    Ok(on_db!(db, |pool| sqlx::query_as::<_, ApiKey>(
        AssertSqlSafe(sql)
    )
    .bind(hash.to_vec())
    .fetch_optional(pool)
    .await)?)
}

pub(super) async fn find_api_key(db: &Db, id: ApiKeyId) -> StoreResult<Option<ApiKey>> {
    let sql = format!("SELECT {API_KEY_COLUMNS} FROM api_keys WHERE id = $1");
    Ok(on_db!(db, |pool| sqlx::query_as::<_, ApiKey>(
        AssertSqlSafe(sql)
    )
    .bind(id)
    .fetch_optional(pool)
    .await)?)
}

/// Marks a key revoked; a key already revoked keeps its first revocation time.
pub(super) async fn revoke_api_key(
    db: &Db,
    id: ApiKeyId,
    at: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<()> {
    on_db!(db, |pool| sqlx::query(
        "UPDATE api_keys SET revoked_at = $2, revoked_by = $3 WHERE id = $1 AND revoked_at IS NULL"
    )
    .bind(id)
    .bind(at)
    .bind(by)
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    crate::db::changes::note_commit();
    Ok(())
}

/// Keys of `tenant`, newest first, one offset page, with the total count.
pub(super) async fn list_api_keys(
    db: &Db,
    tenant: TenantId,
    offset: u32,
    limit: u32,
) -> StoreResult<(u64, Vec<ApiKey>)> {
    let sql = format!(
        "SELECT {API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 \
         ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
    );
    let (total, keys) = on_db!(db, |pool| {
        let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM api_keys WHERE tenant_id = $1")
            .bind(tenant)
            .fetch_one(pool)
            .await?;
        let keys = sqlx::query_as::<_, ApiKey>(AssertSqlSafe(sql))
            .bind(tenant)
            .bind(i64::from(limit))
            .bind(i64::from(offset))
            .fetch_all(pool)
            .await?;
        Ok::<_, sqlx::Error>((total, keys))
    })?;
    Ok((u64::try_from(total).unwrap_or(0), keys))
}

// ---- bootstrap ----

/// The ids recorded by the first bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromRow)]
pub(super) struct BootstrapRecord {
    /// Tenant.
    pub(crate) tenant_id: TenantId,
    /// Owner user.
    pub(crate) user_id: UserId,
    /// API key record.
    pub(crate) api_key_id: ApiKeyId,
}

pub(super) async fn find_bootstrap(tx: &mut Tx) -> StoreResult<Option<BootstrapRecord>> {
    Ok(on_tx!(tx, |conn| sqlx::query_as::<_, BootstrapRecord>(
        "SELECT tenant_id, user_id, api_key_id FROM bootstrap WHERE id = 1"
    )
    .fetch_optional(conn)
    .await)?)
}

pub(super) async fn upsert_bootstrap(
    tx: &mut Tx,
    record: BootstrapRecord,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
        "INSERT INTO bootstrap (id, tenant_id, user_id, api_key_id, created_at) VALUES (1, $1, $2, $3, $4) \
         ON CONFLICT (id) DO UPDATE SET tenant_id = $1, user_id = $2, api_key_id = $3"
    )
    .bind(record.tenant_id)
    .bind(record.user_id)
    .bind(record.api_key_id)
    .bind(at)
    .execute(conn)
    .await
    .map(|done| done.rows_affected())
    })?;
    Ok(())
}

pub(super) async fn api_key_is_active(tx: &mut Tx, id: ApiKeyId) -> StoreResult<bool> {
    let count: i64 = on_tx!(tx, |conn| sqlx::query_scalar(
        "SELECT COUNT(*) FROM api_keys WHERE id = $1 AND revoked_at IS NULL"
    )
    .bind(id)
    .fetch_one(conn)
    .await)?;
    Ok(count > 0)
}

/// Serialises bootstraps from several replicas starting at once. SQLite transactions are
/// already exclusive (`BEGIN IMMEDIATE`); PostgreSQL takes a transaction advisory lock.
pub(super) async fn lock_bootstrap(tx: &mut Tx) -> StoreResult<()> {
    if let Tx::Postgres(transaction) = tx {
        sqlx::query("SELECT pg_advisory_xact_lock(7283400121)")
            .execute(&mut **transaction)
            .await?;
    }
    Ok(())
}

pub(super) async fn count_tenants_tx(tx: &mut Tx) -> StoreResult<i64> {
    Ok(on_tx!(tx, |conn| sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM tenants"
    )
    .fetch_one(conn)
    .await)?)
}

//! SQL of feature messages, the feature catalogue and licenses, on both databases.
//!
//! Every write is one statement, so none needs a transaction of its own: a message's change
//! and its version rise together, a license switch only matches an existing license, and the
//! retention job's batches delete each row once whichever replica runs them.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::{Arg, Db, Sql, StoreError, StoreResult};
use crate::features::model::{
    CleanMessage, Expiry, FeatureRow, FeatureType, LicenseRow, LicensedFeature, MessageRow,
    MessageSort, MessageType, Scope,
};
use crate::ids::TenantId;
use crate::on_db;

const MESSAGE_COLUMNS: &str = "id, feature_id, message_type, title, body, start_date, expiring_date, \
    version, created_at, created_by, updated_at, updated_by";

const FEATURE_COLUMNS: &str =
    "id, name, url, response_url, feature_type, created_at, created_by, updated_at, updated_by";

const LICENSE_COLUMNS: &str =
    "tenant_id, feature_id, enabled, licensed_at, licensed_by, updated_at, updated_by";

#[derive(sqlx::FromRow)]
struct StoredMessage {
    id: i64,
    feature_id: Option<String>,
    message_type: String,
    title: String,
    body: String,
    start_date: DateTime<Utc>,
    expiring_date: DateTime<Utc>,
    version: i64,
    created_at: DateTime<Utc>,
    created_by: Option<Uuid>,
    updated_at: DateTime<Utc>,
    updated_by: Option<Uuid>,
}

impl StoredMessage {
    fn into_row(self) -> StoreResult<MessageRow> {
        Ok(MessageRow {
            id: self.id,
            feature_id: self.feature_id,
            message_type: self
                .message_type
                .parse::<MessageType>()
                .map_err(|_| StoreError::Corrupt("an unknown feature message type"))?,
            title: self.title,
            body: self.body,
            start_date: self.start_date,
            expiring_date: self.expiring_date,
            version: self.version,
            created_at: self.created_at,
            created_by: self.created_by,
            updated_at: self.updated_at,
            updated_by: self.updated_by,
        })
    }
}

fn messages(stored: Vec<StoredMessage>) -> StoreResult<Vec<MessageRow>> {
    stored.into_iter().map(StoredMessage::into_row).collect()
}

/// Appends the condition selecting `scope`'s messages: a feature's own, or only global ones.
/// `with_global` adds the global messages to a feature's.
fn push_scope(sql: &mut Sql, scope: &Scope, with_global: bool) {
    match scope {
        Scope::Feature(id) => {
            let id = sql.arg(Arg::Text(id.as_str().to_owned()));
            if with_global {
                sql.push(&format!("(feature_id = {id} OR feature_id IS NULL)"));
            } else {
                sql.push(&format!("feature_id = {id}"));
            }
        }
        Scope::Global => {
            sql.push("feature_id IS NULL");
        }
    }
}

/// Creates a message of `scope`.
pub(super) async fn insert_message(
    db: &Db,
    scope: &Scope,
    message: &CleanMessage,
    by: Uuid,
    now: DateTime<Utc>,
) -> StoreResult<MessageRow> {
    let sql = format!(
        "INSERT INTO feature_messages (feature_id, message_type, title, body, start_date, \
         expiring_date, version, created_at, created_by, updated_at, updated_by) \
         VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $7, $8) RETURNING {MESSAGE_COLUMNS}"
    );
    let stored: StoredMessage = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(scope.column())
            .bind(message.message_type.as_str())
            .bind(&message.title)
            .bind(&message.body)
            .bind(message.start_date)
            .bind(message.expiring_date)
            .bind(now)
            .bind(by)
            .fetch_one(pool)
            .await
    })?;
    stored.into_row()
}

/// The message `id` if it belongs to `scope` (a feature's own, or the global set).
pub(super) async fn find_message(
    db: &Db,
    scope: &Scope,
    id: i64,
) -> StoreResult<Option<MessageRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM feature_messages WHERE id = "
    ));
    let param = sql.arg(Arg::I64(id));
    sql.push(&param);
    sql.push(" AND ");
    push_scope(&mut sql, scope, false);
    Ok(messages(sql.fetch_all(db).await?)?.into_iter().next())
}

/// Replaces the fields of message `id` of `scope` if its version is still `version`; `None`
/// when it is gone, moved on, or not of `scope`.
pub(super) async fn update_message(
    db: &Db,
    scope: &Scope,
    id: i64,
    version: i64,
    message: &CleanMessage,
    by: Uuid,
    now: DateTime<Utc>,
) -> StoreResult<Option<MessageRow>> {
    let mut sql = Sql::with_args(
        "UPDATE feature_messages SET message_type = $1, title = $2, body = $3, start_date = $4, \
         expiring_date = $5, version = version + 1, updated_at = $6, updated_by = $7 \
         WHERE id = $8 AND version = $9 AND ",
        vec![
            Arg::Text(message.message_type.as_str().to_owned()),
            Arg::Text(message.title.clone()),
            Arg::Text(message.body.clone()),
            Arg::Time(message.start_date),
            Arg::Time(message.expiring_date),
            Arg::Time(now),
            Arg::Uuid(by),
            Arg::I64(id),
            Arg::I64(version),
        ],
    );
    push_scope(&mut sql, scope, false);
    sql.push(&format!(" RETURNING {MESSAGE_COLUMNS}"));
    Ok(messages(sql.fetch_all(db).await?)?.into_iter().next())
}

/// Deletes message `id` of `scope`; whether it was there.
pub(super) async fn delete_message(db: &Db, scope: &Scope, id: i64) -> StoreResult<bool> {
    let mut sql = Sql::with_args(
        "DELETE FROM feature_messages WHERE id = $1 AND ",
        vec![Arg::I64(id)],
    );
    push_scope(&mut sql, scope, false);
    sql.push(" RETURNING id");
    let deleted: Vec<(i64,)> = sql.fetch_all(db).await?;
    Ok(!deleted.is_empty())
}

/// A page of a message list.
#[derive(Debug, Clone)]
pub(super) struct MessagePage {
    /// Which messages.
    pub(super) scope: Scope,
    /// A feature's list also shows the global messages.
    pub(super) with_global: bool,
    /// By their window at `now`.
    pub(super) expiry: Expiry,
    /// The moment the window is judged at.
    pub(super) now: DateTime<Utc>,
    /// Order.
    pub(super) sort: MessageSort,
    /// Largest first.
    pub(super) descending: bool,
    /// The date and id of the last row of the previous page.
    pub(super) after: Option<(DateTime<Utc>, i64)>,
    /// Rows to fetch.
    pub(super) fetch: i64,
}

/// One page of messages.
pub(super) async fn list_messages(db: &Db, page: &MessagePage) -> StoreResult<Vec<MessageRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM feature_messages WHERE "
    ));
    push_scope(&mut sql, &page.scope, page.with_global);
    let now = Arg::Time(page.now);
    match page.expiry {
        Expiry::All => {}
        Expiry::NonExpired => {
            let at = sql.arg(now.clone());
            let again = sql.arg(now);
            sql.push(&format!(
                " AND start_date <= {at} AND expiring_date > {again}"
            ));
        }
        Expiry::Expired => {
            let at = sql.arg(now);
            sql.push(&format!(" AND expiring_date <= {at}"));
        }
        Expiry::Pending => {
            let at = sql.arg(now);
            sql.push(&format!(" AND start_date > {at}"));
        }
    }
    let column = match page.sort {
        MessageSort::StartDate => "start_date",
        MessageSort::ExpiringDate => "expiring_date",
    };
    let direction = if page.descending { "DESC" } else { "ASC" };
    if let Some((date, id)) = page.after {
        let date = sql.arg(Arg::Time(date));
        let id = sql.arg(Arg::I64(id));
        let comparison = if page.descending { "<" } else { ">" };
        sql.push(&format!(" AND ({column}, id) {comparison} ({date}, {id})"));
    }
    let limit = sql.arg(Arg::I64(page.fetch));
    sql.push(&format!(
        " ORDER BY {column} {direction}, id {direction} LIMIT {limit}"
    ));
    messages(sql.fetch_all(db).await?)
}

/// The messages of `feature` (and the global ones) not yet expired at `now`, those starting
/// soonest first, at most `max`: what the banner decides from.
pub(super) async fn unexpired_messages(
    db: &Db,
    scope: &Scope,
    now: DateTime<Utc>,
    max: u32,
) -> StoreResult<Vec<MessageRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM feature_messages WHERE "
    ));
    push_scope(&mut sql, scope, false);
    let at = sql.arg(Arg::Time(now));
    let limit = sql.arg(Arg::I64(i64::from(max)));
    sql.push(&format!(
        " AND expiring_date > {at} ORDER BY start_date, id LIMIT {limit}"
    ));
    messages(sql.fetch_all(db).await?)
}

/// Deletes at most `batch` messages that ended before `cutoff`; how many it deleted.
pub(super) async fn delete_expired_messages(
    db: &Db,
    cutoff: DateTime<Utc>,
    batch: i64,
) -> StoreResult<u64> {
    let deleted = on_db!(db, |pool| {
        sqlx::query(
            "DELETE FROM feature_messages WHERE id IN \
             (SELECT id FROM feature_messages WHERE expiring_date < $1 ORDER BY expiring_date LIMIT $2)",
        )
        .bind(cutoff)
        .bind(batch)
        .execute(pool)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(deleted)
}

// ---- the catalogue ----

#[derive(sqlx::FromRow)]
struct StoredFeature {
    id: String,
    name: String,
    url: String,
    response_url: String,
    feature_type: String,
    created_at: DateTime<Utc>,
    created_by: Option<Uuid>,
    updated_at: DateTime<Utc>,
    updated_by: Option<Uuid>,
}

impl StoredFeature {
    fn into_row(self) -> StoreResult<FeatureRow> {
        Ok(FeatureRow {
            id: self.id,
            name: self.name,
            url: self.url,
            response_url: self.response_url,
            feature_type: self
                .feature_type
                .parse::<FeatureType>()
                .map_err(|_| StoreError::Corrupt("an unknown feature type"))?,
            created_at: self.created_at,
            created_by: self.created_by,
            updated_at: self.updated_at,
            updated_by: self.updated_by,
        })
    }
}

fn features(stored: Vec<StoredFeature>) -> StoreResult<Vec<FeatureRow>> {
    stored.into_iter().map(StoredFeature::into_row).collect()
}

/// Adds a feature; `Duplicate` when the id is taken.
pub(super) async fn insert_feature(db: &Db, row: &FeatureRow) -> StoreResult<()> {
    on_db!(db, |pool| {
        sqlx::query(
            "INSERT INTO features (id, name, url, response_url, feature_type, created_at, created_by, \
             updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&row.id)
        .bind(&row.name)
        .bind(&row.url)
        .bind(&row.response_url)
        .bind(row.feature_type.as_str())
        .bind(row.created_at)
        .bind(row.created_by)
        .bind(row.updated_at)
        .bind(row.updated_by)
        .execute(pool)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(())
}

/// One feature.
pub(super) async fn find_feature(db: &Db, id: &str) -> StoreResult<Option<FeatureRow>> {
    let sql = Sql::with_args(
        &format!("SELECT {FEATURE_COLUMNS} FROM features WHERE id = $1"),
        vec![Arg::Text(id.to_owned())],
    );
    Ok(features(sql.fetch_all(db).await?)?.into_iter().next())
}

/// A page of the catalogue by id, after `after`, of one type or all.
pub(super) async fn list_features(
    db: &Db,
    feature_type: Option<FeatureType>,
    after: Option<&str>,
    fetch: i64,
) -> StoreResult<Vec<FeatureRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {FEATURE_COLUMNS} FROM features WHERE 1 = 1"
    ));
    if let Some(kind) = feature_type {
        let kind = sql.arg(Arg::Text(kind.as_str().to_owned()));
        sql.push(&format!(" AND feature_type = {kind}"));
    }
    if let Some(after) = after {
        let after = sql.arg(Arg::Text(after.to_owned()));
        sql.push(&format!(" AND id > {after}"));
    }
    let limit = sql.arg(Arg::I64(fetch));
    sql.push(&format!(" ORDER BY id LIMIT {limit}"));
    features(sql.fetch_all(db).await?)
}

/// Replaces the fields of a feature; whether it exists.
pub(super) async fn update_feature(db: &Db, row: &FeatureRow) -> StoreResult<bool> {
    let changed = on_db!(db, |pool| {
        sqlx::query(
            "UPDATE features SET name = $2, url = $3, response_url = $4, feature_type = $5, \
             updated_at = $6, updated_by = $7 WHERE id = $1",
        )
        .bind(&row.id)
        .bind(&row.name)
        .bind(&row.url)
        .bind(&row.response_url)
        .bind(row.feature_type.as_str())
        .bind(row.updated_at)
        .bind(row.updated_by)
        .execute(pool)
        .await
        .map(|done| done.rows_affected())
    })?;
    Ok(changed > 0)
}

/// What deleting a feature did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FeatureDelete {
    /// Removed.
    Deleted,
    /// No such feature.
    Missing,
    /// A tenant holds a license of it.
    Licensed,
}

/// Deletes a feature no tenant holds a license of. One statement, so a license granted at the
/// same moment either comes first (the feature stays) or fails on the foreign key.
pub(super) async fn delete_feature(db: &Db, id: &str) -> StoreResult<FeatureDelete> {
    let deleted = on_db!(db, |pool| {
        sqlx::query(
            "DELETE FROM features WHERE id = $1 AND NOT EXISTS \
             (SELECT 1 FROM feature_licenses WHERE feature_id = $1)",
        )
        .bind(id)
        .execute(pool)
        .await
        .map(|done| done.rows_affected())
    })?;
    if deleted > 0 {
        return Ok(FeatureDelete::Deleted);
    }
    Ok(match find_feature(db, id).await? {
        Some(_) => FeatureDelete::Licensed,
        None => FeatureDelete::Missing,
    })
}

// ---- licenses ----

#[derive(sqlx::FromRow)]
struct StoredLicense {
    tenant_id: TenantId,
    feature_id: String,
    enabled: bool,
    licensed_at: DateTime<Utc>,
    licensed_by: Option<Uuid>,
    updated_at: DateTime<Utc>,
    updated_by: Option<Uuid>,
}

impl From<StoredLicense> for LicenseRow {
    fn from(stored: StoredLicense) -> Self {
        Self {
            tenant_id: stored.tenant_id,
            feature_id: stored.feature_id,
            enabled: stored.enabled,
            licensed_at: stored.licensed_at,
            licensed_by: stored.licensed_by,
            updated_at: stored.updated_at,
            updated_by: stored.updated_by,
        }
    }
}

/// Grants `feature` to `tenant`, or changes the switch of the license it holds when `enabled`
/// names one. Returns the license and whether it is new.
pub(super) async fn upsert_license(
    db: &Db,
    tenant: TenantId,
    feature: &str,
    enabled: Option<bool>,
    by: Uuid,
    now: DateTime<Utc>,
) -> StoreResult<(LicenseRow, bool)> {
    let existing = find_license(db, tenant, feature).await?;
    if let Some(license) = existing {
        let Some(enabled) = enabled.filter(|value| *value != license.enabled) else {
            return Ok((license, false));
        };
        let changed = set_enabled(db, tenant, feature, enabled, by, now).await?;
        return match changed {
            Some(license) => Ok((license, false)),
            None => Err(StoreError::NotFound("license")),
        };
    }
    let sql = format!(
        "INSERT INTO feature_licenses ({LICENSE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $4, $5) \
         ON CONFLICT (tenant_id, feature_id) DO NOTHING RETURNING {LICENSE_COLUMNS}"
    );
    let inserted: Option<StoredLicense> = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(tenant)
            .bind(feature)
            .bind(enabled.unwrap_or(true))
            .bind(now)
            .bind(by)
            .fetch_optional(pool)
            .await
    })?;
    match inserted {
        Some(license) => Ok((license.into(), true)),
        // Granted by a concurrent request between our read and our insert: the same answer
        // as if it had come first.
        None => find_license(db, tenant, feature)
            .await?
            .map(|license| (license, false))
            .ok_or(StoreError::NotFound("license")),
    }
}

/// The license of `tenant` for `feature`.
pub(super) async fn find_license(
    db: &Db,
    tenant: TenantId,
    feature: &str,
) -> StoreResult<Option<LicenseRow>> {
    let sql = format!(
        "SELECT {LICENSE_COLUMNS} FROM feature_licenses WHERE tenant_id = $1 AND feature_id = $2"
    );
    let stored: Option<StoredLicense> = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(tenant)
            .bind(feature)
            .fetch_optional(pool)
            .await
    })?;
    Ok(stored.map(LicenseRow::from))
}

/// Sets the switch of an existing license; `None` when the tenant holds none. Never creates
/// or removes a license.
pub(super) async fn set_enabled(
    db: &Db,
    tenant: TenantId,
    feature: &str,
    enabled: bool,
    by: Uuid,
    now: DateTime<Utc>,
) -> StoreResult<Option<LicenseRow>> {
    let sql = format!(
        "UPDATE feature_licenses SET enabled = $3, updated_at = $4, updated_by = $5 \
         WHERE tenant_id = $1 AND feature_id = $2 RETURNING {LICENSE_COLUMNS}"
    );
    let stored: Option<StoredLicense> = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(tenant)
            .bind(feature)
            .bind(enabled)
            .bind(now)
            .bind(by)
            .fetch_optional(pool)
            .await
    })?;
    Ok(stored.map(LicenseRow::from))
}

/// Revokes a license; whether there was one.
pub(super) async fn delete_license(db: &Db, tenant: TenantId, feature: &str) -> StoreResult<bool> {
    let deleted = on_db!(db, |pool| {
        sqlx::query("DELETE FROM feature_licenses WHERE tenant_id = $1 AND feature_id = $2")
            .bind(tenant)
            .bind(feature)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
    })?;
    Ok(deleted > 0)
}

/// The licenses of a feature, by tenant.
pub(super) async fn licenses_of_feature(db: &Db, feature: &str) -> StoreResult<Vec<LicenseRow>> {
    let sql = format!(
        "SELECT {LICENSE_COLUMNS} FROM feature_licenses WHERE feature_id = $1 ORDER BY tenant_id"
    );
    let stored: Vec<StoredLicense> = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(feature)
            .fetch_all(pool)
            .await
    })?;
    Ok(stored.into_iter().map(LicenseRow::from).collect())
}

#[derive(sqlx::FromRow)]
struct StoredLicensedFeature {
    #[sqlx(flatten)]
    feature: StoredFeature,
    enabled: bool,
}

/// The features licensed to `tenant`, of one type or all, by name then id.
pub(super) async fn licensed_features(
    db: &Db,
    tenant: TenantId,
    feature_type: Option<FeatureType>,
) -> StoreResult<Vec<LicensedFeature>> {
    let mut sql = Sql::with_args(
        "SELECT f.id, f.name, f.url, f.response_url, f.feature_type, f.created_at, f.created_by, \
         f.updated_at, f.updated_by, l.enabled FROM feature_licenses l \
         JOIN features f ON f.id = l.feature_id WHERE l.tenant_id = $1",
        vec![Arg::Uuid(tenant.as_uuid())],
    );
    if let Some(kind) = feature_type {
        let kind = sql.arg(Arg::Text(kind.as_str().to_owned()));
        sql.push(&format!(" AND f.feature_type = {kind}"));
    }
    sql.push(" ORDER BY f.name, f.id");
    let stored: Vec<StoredLicensedFeature> = sql.fetch_all(db).await?;
    stored
        .into_iter()
        .map(|row| {
            Ok(LicensedFeature {
                feature: row.feature.into_row()?,
                enabled: row.enabled,
            })
        })
        .collect()
}

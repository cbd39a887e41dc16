//! The ledger's reads outside transactions (balances, details, journal pages), on the sqlx
//! pools of either database.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::rows::{
    DUE_CONDITION, JOURNAL_COLUMNS, LOT_COLUMNS, LOT_ORDER, OPERATION_COLUMNS, StoredJournal,
    StoredLot, StoredOperation, StoredOperationLot,
};
use super::write::operation_lots_sql;
use crate::credits::amount::Credits;
use crate::credits::model::{
    Balances, CreditStatus, JournalRow, LotRow, OperationLotRow, OperationRow, OperationState,
    PoolId,
};
use crate::db::{Db, StoreResult};
use crate::ids::TenantId;
use crate::on_db;

/// The operation `operation_id` of `tenant`, outside a transaction.
pub(crate) async fn operation(
    db: &Db,
    tenant: TenantId,
    operation_id: &str,
) -> StoreResult<Option<OperationRow>> {
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} FROM credit_operations WHERE tenant_id = $1 AND operation_id = $2"
    );
    let found: Option<StoredOperation> = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(tenant)
            .bind(operation_id)
            .fetch_optional(pool)
            .await
    })?;
    Ok(found.map(OperationRow::from))
}

/// [`operation_lots_in`] outside a transaction.
pub(crate) async fn operation_lots(db: &Db, operation: Uuid) -> StoreResult<Vec<OperationLotRow>> {
    let sql = operation_lots_sql();
    let rows: Vec<StoredOperationLot> = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(operation)
            .fetch_all(pool)
            .await
    })?;
    Ok(rows.into_iter().map(OperationLotRow::from).collect())
}

// ---- reads ----

/// The totals per status of `pool` (zero for a pool that does not exist).
pub(crate) async fn balances(db: &Db, pool: PoolId) -> StoreResult<Balances> {
    let (available, reserved, spent, expired): (i64, i64, i64, i64) = on_db!(db, |conn| {
        sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(available), 0) AS BIGINT), \
             CAST(COALESCE(SUM(reserved), 0) AS BIGINT), CAST(COALESCE(SUM(spent), 0) AS BIGINT), \
             CAST(COALESCE(SUM(expired), 0) AS BIGINT) FROM credit_lots WHERE pool_id = $1",
        )
        .bind(pool.as_uuid())
        .fetch_one(conn)
        .await
    })?;
    Ok(Balances {
        available: Credits::from_micros(available),
        reserved: Credits::from_micros(reserved),
        spent: Credits::from_micros(spent),
        expired: Credits::from_micros(expired),
    })
}

/// Whether `pool` has available credits past their date or reservations past their timeout:
/// work the next read must do first.
pub(crate) async fn is_due(
    db: &Db,
    pool: PoolId,
    now: DateTime<Utc>,
    today: NaiveDate,
) -> StoreResult<bool> {
    let sql = format!("SELECT {DUE_CONDITION}");
    let due: bool = on_db!(db, |conn| {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(pool.as_uuid())
            .bind(today)
            .bind(now)
            .fetch_one(conn)
            .await
    })?;
    Ok(due)
}

/// Up to `limit` pools with work due (see [`is_due`]).
pub(crate) async fn due_pools(
    db: &Db,
    now: DateTime<Utc>,
    today: NaiveDate,
    limit: i64,
) -> StoreResult<Vec<PoolId>> {
    let ids: Vec<Uuid> = on_db!(db, |conn| {
        sqlx::query_scalar(
            "SELECT pool_id FROM credit_lots WHERE available > 0 AND expires_on < $1 \
             UNION SELECT tenant_id FROM credit_operations WHERE state = 'Reserved' \
             AND timeout_at IS NOT NULL AND timeout_at <= $2 LIMIT $3",
        )
        .bind(today)
        .bind(now)
        .bind(limit)
        .fetch_all(conn)
        .await
    })?;
    Ok(ids.into_iter().map(PoolId::from_uuid).collect())
}

/// The condition that a lot has credits in one of `statuses` (all lots when empty).
fn status_condition(statuses: &[CreditStatus]) -> String {
    if statuses.is_empty() || statuses.len() == CreditStatus::ALL.len() {
        return String::new();
    }
    let parts: Vec<&str> = statuses
        .iter()
        .map(|status| match status {
            CreditStatus::Available => "l.available > 0",
            CreditStatus::Reserved => "l.reserved > 0",
            CreditStatus::Spent => "l.spent > 0",
            CreditStatus::Expired => "l.expired > 0",
        })
        .collect();
    format!(" AND ({})", parts.join(" OR "))
}

/// A page of the lots of `pool` with credits in one of `statuses`, by expiry, and how many
/// there are.
pub(crate) async fn lots_page(
    db: &Db,
    pool: PoolId,
    statuses: &[CreditStatus],
    offset: u32,
    limit: u32,
) -> StoreResult<(Vec<LotRow>, u64)> {
    let condition = status_condition(statuses);
    let page_sql = format!(
        "SELECT {LOT_COLUMNS} FROM credit_lots l WHERE l.pool_id = $1{condition} \
         ORDER BY {LOT_ORDER} LIMIT $2 OFFSET $3"
    );
    let count_sql = format!("SELECT COUNT(*) FROM credit_lots l WHERE l.pool_id = $1{condition}");
    let (lots, total): (Vec<StoredLot>, i64) = on_db!(db, |conn| {
        let lots = sqlx::query_as(sqlx::AssertSqlSafe(page_sql.as_str()))
            .bind(pool.as_uuid())
            .bind(i64::from(limit))
            .bind(i64::from(offset))
            .fetch_all(conn)
            .await?;
        let total = sqlx::query_scalar(sqlx::AssertSqlSafe(count_sql.as_str()))
            .bind(pool.as_uuid())
            .fetch_one(conn)
            .await?;
        Ok::<_, sqlx::Error>((lots, total))
    })?;
    Ok((
        lots.into_iter().map(LotRow::from).collect(),
        u64::try_from(total).unwrap_or(0),
    ))
}

/// An operation's share of one lot, for the extended details.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct LotOperation {
    /// The lot.
    pub(crate) lot_id: Uuid,
    /// The operation id.
    pub(crate) operation_id: String,
    /// Its state.
    pub(crate) state: OperationState,
    /// Its tenant.
    pub(crate) tenant_id: TenantId,
    /// Its project.
    pub(crate) project_id: Option<Uuid>,
    /// Micro-credits of the lot it holds.
    pub(crate) held: i64,
    /// Micro-credits of the lot it spent.
    pub(crate) used: i64,
    /// When it was made.
    pub(crate) created_at: DateTime<Utc>,
    /// When it was resolved.
    pub(crate) resolved_at: Option<DateTime<Utc>>,
    /// How many operations the lot has in all.
    pub(crate) total: i64,
}

/// The newest `per_lot` operations holding (`Reserved`) or having spent (`Spent`) credits of
/// each lot in `lots`, newest first (operations made at the same instant by id, which is
/// time-ordered, so that every read lists them alike), with each lot's count: one query
/// whatever the size of the page. The names of their projects are the projects area's to give
/// (`ProjectNameLookup`).
pub(crate) async fn lot_operations(
    db: &Db,
    lots: &[Uuid],
    statuses: &[CreditStatus],
    per_lot: u32,
) -> StoreResult<Vec<LotOperation>> {
    if lots.is_empty() {
        return Ok(Vec::new());
    }
    let held = statuses.is_empty() || statuses.contains(&CreditStatus::Reserved);
    let used = statuses.is_empty() || statuses.contains(&CreditStatus::Spent);
    let share = match (held, used) {
        (true, true) => "(ol.reserved > 0 OR ol.spent > 0)",
        (true, false) => "ol.reserved > 0",
        (false, true) => "ol.spent > 0",
        (false, false) => return Ok(Vec::new()),
    };
    // Ids are formatted from uuids only, so the list cannot carry anything else.
    let ids: Vec<String> = lots.iter().map(|id| db.uuid_literal(*id)).collect();
    let sql = format!(
        "SELECT lot_id, operation_id, state, tenant_id, project_id, held, used, created_at, \
         resolved_at, total FROM (SELECT ol.lot_id, o.operation_id, o.state, o.tenant_id, \
         o.project_id, ol.reserved AS held, ol.spent AS used, o.created_at, \
         o.resolved_at, ROW_NUMBER() OVER (PARTITION BY ol.lot_id \
         ORDER BY o.created_at DESC, o.id DESC) AS position, \
         COUNT(*) OVER (PARTITION BY ol.lot_id) AS total \
         FROM credit_operation_lots ol JOIN credit_operations o ON o.id = ol.operation_ref \
         WHERE ol.lot_id IN ({}) AND {share}) ranked WHERE position <= $1 \
         ORDER BY lot_id, position",
        ids.join(", ")
    );
    Ok(on_db!(db, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(i64::from(per_lot))
            .fetch_all(conn)
            .await
    })?)
}

/// A page of the journal of `pool` after sequence `after`, in order (or newest first).
pub(crate) async fn journal_page(
    db: &Db,
    pool: PoolId,
    after: Option<i64>,
    descending: bool,
    limit: i64,
) -> StoreResult<Vec<JournalRow>> {
    let (compare, order) = if descending {
        ("<", "DESC")
    } else {
        (">", "ASC")
    };
    let sql = format!(
        "SELECT {JOURNAL_COLUMNS} FROM credit_journal j JOIN credit_lots l ON l.id = j.lot_id \
         WHERE j.pool_id = $1 AND j.sequence {compare} $2 ORDER BY j.sequence {order} LIMIT $3"
    );
    let start = after.unwrap_or(if descending { i64::MAX } else { 0 });
    let rows: Vec<StoredJournal> = on_db!(db, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(pool.as_uuid())
            .bind(start)
            .bind(limit)
            .fetch_all(conn)
            .await
    })?;
    Ok(rows.into_iter().map(JournalRow::from).collect())
}

//! SQL of the credit ledger, on both databases. Every write runs inside a transaction that
//! first took its pool with [`lock_pool_in`]; the rules of what to write are in `service.rs`.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::credits::amount::Credits;
use crate::credits::model::{
    Balances, BillingReference, CreditStatus, JournalKind, JournalRow, LotRow, OperationLotRow,
    OperationRow, OperationState, PoolId,
};
use crate::db::{Db, StoreError, StoreResult, Tx};
use crate::ids::TenantId;
use crate::{on_db, on_tx};

const LOT_COLUMNS: &str = "l.id, l.pool_id, l.billing_reference, l.billing_reference_tag, \
    l.billing_reference_type, l.expires_on, l.available, l.reserved, l.spent, l.expired";

/// The order lots are used in: earliest expiry first, then by billing reference (text order,
/// which is byte order on both databases).
const LOT_ORDER: &str = "l.expires_on, l.billing_reference, l.billing_reference_tag, \
    l.billing_reference_type";

const OPERATION_COLUMNS: &str = "id, tenant_id, operation_id, state, direct, credits, spent, \
    project_id, request, resolution, created_at, created_by, timeout_at, resolved_at";

#[derive(sqlx::FromRow)]
struct StoredLot {
    id: Uuid,
    pool_id: Uuid,
    billing_reference: String,
    billing_reference_tag: String,
    billing_reference_type: String,
    expires_on: NaiveDate,
    available: i64,
    reserved: i64,
    spent: i64,
    expired: i64,
}

impl From<StoredLot> for LotRow {
    fn from(lot: StoredLot) -> Self {
        Self {
            id: lot.id,
            pool: PoolId::from_uuid(lot.pool_id),
            reference: BillingReference {
                reference: lot.billing_reference,
                tag: lot.billing_reference_tag,
                kind: lot.billing_reference_type,
            },
            expires_on: lot.expires_on,
            balances: Balances {
                available: Credits::from_micros(lot.available),
                reserved: Credits::from_micros(lot.reserved),
                spent: Credits::from_micros(lot.spent),
                expired: Credits::from_micros(lot.expired),
            },
        }
    }
}

#[derive(sqlx::FromRow)]
struct StoredOperation {
    id: Uuid,
    tenant_id: TenantId,
    operation_id: String,
    state: OperationState,
    direct: bool,
    credits: i64,
    spent: i64,
    project_id: Option<Uuid>,
    request: String,
    resolution: Option<String>,
    created_at: DateTime<Utc>,
    created_by: Uuid,
    timeout_at: Option<DateTime<Utc>>,
    resolved_at: Option<DateTime<Utc>>,
}

impl From<StoredOperation> for OperationRow {
    fn from(op: StoredOperation) -> Self {
        Self {
            id: op.id,
            tenant_id: op.tenant_id,
            operation_id: op.operation_id,
            state: op.state,
            direct: op.direct,
            credits: Credits::from_micros(op.credits),
            spent: Credits::from_micros(op.spent),
            project_id: op.project_id,
            request: op.request,
            resolution: op.resolution,
            created_at: op.created_at,
            created_by: op.created_by,
            timeout_at: op.timeout_at,
            resolved_at: op.resolved_at,
        }
    }
}

// ---- pools ----

/// Creates the pool if it is new.
pub(super) async fn create_pool_in(tx: &mut Tx, pool: PoolId) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO credit_pools (id, tenant_id, received) VALUES ($1, $2, 0) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(pool.as_uuid())
        .bind(pool.tenant().map(|tenant| tenant.as_uuid()))
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

/// Takes the pool for the rest of the transaction (on SQLite the transaction holds the one
/// write lock already) and returns what it ever received; `None` when it does not exist.
pub(super) async fn lock_pool_in(tx: &mut Tx, pool: PoolId) -> StoreResult<Option<Credits>> {
    let received: Option<i64> = match tx {
        Tx::Sqlite(tx) => {
            sqlx::query_scalar("SELECT received FROM credit_pools WHERE id = $1")
                .bind(pool.as_uuid())
                .fetch_optional(&mut **tx)
                .await?
        }
        Tx::Postgres(tx) => {
            sqlx::query_scalar("SELECT received FROM credit_pools WHERE id = $1 FOR UPDATE")
                .bind(pool.as_uuid())
                .fetch_optional(&mut **tx)
                .await?
        }
    };
    Ok(received.map(Credits::from_micros))
}

/// Counts credits the pool received (adds and moves in).
pub(super) async fn add_received_in(tx: &mut Tx, pool: PoolId, amount: Credits) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query("UPDATE credit_pools SET received = received + $2 WHERE id = $1")
            .bind(pool.as_uuid())
            .bind(amount.micros())
            .execute(conn)
            .await
            .map(|_| ())
    })?;
    Ok(())
}

// ---- lots ----

/// The lot of `pool` with `reference` and `expires_on`, created empty when missing.
pub(super) async fn lot_in(
    tx: &mut Tx,
    pool: PoolId,
    reference: &BillingReference,
    expires_on: NaiveDate,
    now: DateTime<Utc>,
) -> StoreResult<LotRow> {
    let select = format!(
        "SELECT {LOT_COLUMNS} FROM credit_lots l WHERE l.pool_id = $1 AND l.billing_reference = $2 \
         AND l.billing_reference_tag = $3 AND l.billing_reference_type = $4 AND l.expires_on = $5"
    );
    let found: Option<StoredLot> = on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(select.as_str()))
            .bind(pool.as_uuid())
            .bind(&reference.reference)
            .bind(&reference.tag)
            .bind(&reference.kind)
            .bind(expires_on)
            .fetch_optional(conn)
            .await
    })?;
    if let Some(lot) = found {
        return Ok(lot.into());
    }
    let id = Uuid::now_v7();
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO credit_lots (id, pool_id, billing_reference, billing_reference_tag, \
             billing_reference_type, expires_on, available, reserved, spent, expired, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, 0, 0, 0, $7)",
        )
        .bind(id)
        .bind(pool.as_uuid())
        .bind(&reference.reference)
        .bind(&reference.tag)
        .bind(&reference.kind)
        .bind(expires_on)
        .bind(now)
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(LotRow {
        id,
        pool,
        reference: reference.clone(),
        expires_on,
        balances: Balances::default(),
    })
}

/// Which available lots a reserve or move may take: all, or only those of one billing
/// reference, or only those whose billing reference another pool holds too.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LotChoice<'a> {
    /// Only lots of this billing reference.
    pub(super) reference: Option<&'a BillingReference>,
    /// Only lots whose billing reference this pool also holds.
    pub(super) shared_with: Option<PoolId>,
}

/// Up to `limit` available lots of `pool` in the order they are used, after the lot at
/// `after` (its expiry date and billing reference).
pub(super) async fn available_lots_in(
    tx: &mut Tx,
    pool: PoolId,
    choice: LotChoice<'_>,
    after: Option<(NaiveDate, &BillingReference)>,
    limit: i64,
) -> StoreResult<Vec<LotRow>> {
    let mut sql =
        format!("SELECT {LOT_COLUMNS} FROM credit_lots l WHERE l.pool_id = $1 AND l.available > 0");
    let mut next = 2;
    let mut placeholder = || {
        let text = format!("${next}");
        next += 1;
        text
    };
    let mut choice_sql = String::new();
    if choice.reference.is_some() {
        choice_sql.push_str(&format!(
            " AND l.billing_reference = {} AND l.billing_reference_tag = {} \
             AND l.billing_reference_type = {}",
            placeholder(),
            placeholder(),
            placeholder()
        ));
    }
    if choice.shared_with.is_some() {
        choice_sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM credit_lots t WHERE t.pool_id = {} \
             AND t.billing_reference = l.billing_reference \
             AND t.billing_reference_tag = l.billing_reference_tag \
             AND t.billing_reference_type = l.billing_reference_type)",
            placeholder()
        ));
    }
    sql.push_str(&choice_sql);
    if after.is_some() {
        let keys = [placeholder(), placeholder(), placeholder(), placeholder()];
        sql.push_str(&format!(
            " AND (l.expires_on, l.billing_reference, l.billing_reference_tag, \
             l.billing_reference_type) > ({}, {}, {}, {})",
            keys[0], keys[1], keys[2], keys[3]
        ));
    }
    sql.push_str(&format!(" ORDER BY {LOT_ORDER} LIMIT {}", placeholder()));
    let lots: Vec<StoredLot> = on_tx!(tx, |conn| {
        let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str())).bind(pool.as_uuid());
        if let Some(reference) = choice.reference {
            query = query
                .bind(reference.reference.clone())
                .bind(reference.tag.clone())
                .bind(reference.kind.clone());
        }
        if let Some(other) = choice.shared_with {
            query = query.bind(other.as_uuid());
        }
        if let Some((expires_on, reference)) = after {
            query = query
                .bind(expires_on)
                .bind(reference.reference.clone())
                .bind(reference.tag.clone())
                .bind(reference.kind.clone());
        }
        query.bind(limit).fetch_all(conn).await
    })?;
    Ok(lots.into_iter().map(LotRow::from).collect())
}

/// Up to `limit` lots of `pool` holding available credits past their date on `today`.
pub(super) async fn lapsed_lots_in(
    tx: &mut Tx,
    pool: PoolId,
    today: NaiveDate,
    limit: i64,
) -> StoreResult<Vec<LotRow>> {
    let sql = format!(
        "SELECT {LOT_COLUMNS} FROM credit_lots l WHERE l.pool_id = $1 AND l.available > 0 \
         AND l.expires_on < $2 ORDER BY {LOT_ORDER} LIMIT $3"
    );
    let lots: Vec<StoredLot> = on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(pool.as_uuid())
            .bind(today)
            .bind(limit)
            .fetch_all(conn)
            .await
    })?;
    Ok(lots.into_iter().map(LotRow::from).collect())
}

/// Who made a change and why, as the journal records it.
#[derive(Debug, Clone)]
pub(super) struct Entry<'a> {
    /// The change (request or job step) the entry belongs to.
    pub(super) change_id: Uuid,
    /// When.
    pub(super) at: DateTime<Utc>,
    /// What.
    pub(super) kind: JournalKind,
    /// Who, with the kind of principal.
    pub(super) actor: Option<(Uuid, &'a str)>,
    /// The operation.
    pub(super) operation_id: Option<&'a str>,
    /// The sales order.
    pub(super) sales_order_id: Option<&'a str>,
    /// The other pool of a move.
    pub(super) counterpart: Option<PoolId>,
}

/// Changes a lot by `change` and journals it: the only way amounts change. A change that
/// would make an amount negative fails (the table's checks), so it cannot be written.
pub(super) async fn apply_in(
    tx: &mut Tx,
    lot: &LotRow,
    change: &Balances,
    entry: &Entry<'_>,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "UPDATE credit_lots SET available = available + $2, reserved = reserved + $3, \
             spent = spent + $4, expired = expired + $5 WHERE id = $1",
        )
        .bind(lot.id)
        .bind(change.available.micros())
        .bind(change.reserved.micros())
        .bind(change.spent.micros())
        .bind(change.expired.micros())
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO credit_journal (change_id, pool_id, lot_id, at, kind, actor_id, actor_type, \
             operation_id, sales_order_id, counterpart_pool_id, available, reserved, spent, expired) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(entry.change_id)
        .bind(lot.pool.as_uuid())
        .bind(lot.id)
        .bind(entry.at)
        .bind(entry.kind)
        .bind(entry.actor.map(|(id, _)| id))
        .bind(entry.actor.map(|(_, kind)| kind))
        .bind(entry.operation_id)
        .bind(entry.sales_order_id)
        .bind(entry.counterpart.map(PoolId::as_uuid))
        .bind(change.available.micros())
        .bind(change.reserved.micros())
        .bind(change.spent.micros())
        .bind(change.expired.micros())
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

// ---- operations ----

/// The operation `operation_id` of `tenant`.
pub(super) async fn operation_in(
    tx: &mut Tx,
    tenant: TenantId,
    operation_id: &str,
) -> StoreResult<Option<OperationRow>> {
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} FROM credit_operations WHERE tenant_id = $1 AND operation_id = $2"
    );
    let found: Option<StoredOperation> = on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(tenant)
            .bind(operation_id)
            .fetch_optional(conn)
            .await
    })?;
    Ok(found.map(OperationRow::from))
}

/// The operation `operation_id` of `tenant`, outside a transaction.
pub(super) async fn operation(
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

/// Up to `limit` reservations of `tenant` past their timeout at `now`.
pub(super) async fn due_operations_in(
    tx: &mut Tx,
    tenant: TenantId,
    now: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<OperationRow>> {
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} FROM credit_operations WHERE tenant_id = $1 \
         AND state = 'Reserved' AND timeout_at IS NOT NULL AND timeout_at <= $2 \
         ORDER BY timeout_at, id LIMIT $3"
    );
    let found: Vec<StoredOperation> = on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(tenant)
            .bind(now)
            .bind(limit)
            .fetch_all(conn)
            .await
    })?;
    Ok(found.into_iter().map(OperationRow::from).collect())
}

/// Records a new operation.
pub(super) async fn insert_operation_in(tx: &mut Tx, op: &OperationRow) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO credit_operations (id, tenant_id, operation_id, state, direct, credits, \
             spent, project_id, request, resolution, created_at, created_by, timeout_at, \
             resolved_at, resolved_by) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(op.id)
        .bind(op.tenant_id)
        .bind(&op.operation_id)
        .bind(op.state)
        .bind(op.direct)
        .bind(op.credits.micros())
        .bind(op.spent.micros())
        .bind(op.project_id)
        .bind(&op.request)
        .bind(&op.resolution)
        .bind(op.created_at)
        .bind(op.created_by)
        .bind(op.timeout_at)
        .bind(op.resolved_at)
        .bind(op.resolved_at.map(|_| op.created_by))
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

/// Resolves a reservation: only one still `Reserved` changes, so a reservation resolves once
/// even if a caller got here twice.
pub(super) async fn resolve_operation_in(
    tx: &mut Tx,
    op: &OperationRow,
    resolved_by: Option<Uuid>,
) -> StoreResult<()> {
    let changed = on_tx!(tx, |conn| {
        sqlx::query(
            "UPDATE credit_operations SET state = $2, spent = $3, resolution = $4, \
             resolved_at = $5, resolved_by = $6 WHERE id = $1 AND state = 'Reserved'",
        )
        .bind(op.id)
        .bind(op.state)
        .bind(op.spent.micros())
        .bind(&op.resolution)
        .bind(op.resolved_at)
        .bind(resolved_by)
        .execute(conn)
        .await
        .map(|result| result.rows_affected())
    })?;
    if changed == 1 {
        Ok(())
    } else {
        Err(StoreError::Corrupt("a credit reservation resolved twice"))
    }
}

/// What `operation` holds or spent of each lot, in the order lots are used.
pub(super) async fn operation_lots_in(
    tx: &mut Tx,
    operation: Uuid,
) -> StoreResult<Vec<OperationLotRow>> {
    let sql = operation_lots_sql();
    let rows: Vec<StoredOperationLot> = on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(operation)
            .fetch_all(conn)
            .await
    })?;
    Ok(rows.into_iter().map(OperationLotRow::from).collect())
}

/// [`operation_lots_in`] outside a transaction.
pub(super) async fn operation_lots(db: &Db, operation: Uuid) -> StoreResult<Vec<OperationLotRow>> {
    let sql = operation_lots_sql();
    let rows: Vec<StoredOperationLot> = on_db!(db, |pool| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(operation)
            .fetch_all(pool)
            .await
    })?;
    Ok(rows.into_iter().map(OperationLotRow::from).collect())
}

fn operation_lots_sql() -> String {
    format!(
        "SELECT {LOT_COLUMNS}, ol.reserved AS held, ol.spent AS used FROM credit_operation_lots ol \
         JOIN credit_lots l ON l.id = ol.lot_id WHERE ol.operation_ref = $1 ORDER BY {LOT_ORDER}"
    )
}

#[derive(sqlx::FromRow)]
struct StoredOperationLot {
    #[sqlx(flatten)]
    lot: StoredLot,
    held: i64,
    used: i64,
}

impl From<StoredOperationLot> for OperationLotRow {
    fn from(row: StoredOperationLot) -> Self {
        Self {
            lot: row.lot.into(),
            reserved: Credits::from_micros(row.held),
            spent: Credits::from_micros(row.used),
        }
    }
}

/// Records what an operation took of a lot, or its new amounts.
pub(super) async fn put_operation_lot_in(
    tx: &mut Tx,
    operation: Uuid,
    lot: Uuid,
    reserved: Credits,
    spent: Credits,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO credit_operation_lots (operation_ref, lot_id, reserved, spent) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (operation_ref, lot_id) \
             DO UPDATE SET reserved = excluded.reserved, spent = excluded.spent",
        )
        .bind(operation)
        .bind(lot)
        .bind(reserved.micros())
        .bind(spent.micros())
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

// ---- requests already applied ----

/// The request and pool of the sales order `id`, if it was added.
pub(super) async fn order_in(tx: &mut Tx, id: &str) -> StoreResult<Option<(String, PoolId)>> {
    let found: Option<(String, Uuid)> = on_tx!(tx, |conn| {
        sqlx::query_as("SELECT request, pool_id FROM credit_orders WHERE sales_order_id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await
    })?;
    Ok(found.map(|(request, pool)| (request, PoolId::from_uuid(pool))))
}

/// Records that the sales order `id` was added.
pub(super) async fn insert_order_in(
    tx: &mut Tx,
    id: &str,
    request: &str,
    pool: PoolId,
    credits: Credits,
    at: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO credit_orders (sales_order_id, request, pool_id, credits, created_at, created_by) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(id)
        .bind(request)
        .bind(pool.as_uuid())
        .bind(credits.micros())
        .bind(at)
        .bind(by)
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

/// The request and change of the move with idempotency key `key`, if it was made.
pub(super) async fn move_in(tx: &mut Tx, key: &str) -> StoreResult<Option<(String, Uuid)>> {
    Ok(on_tx!(tx, |conn| {
        sqlx::query_as("SELECT request, change_id FROM credit_moves WHERE idempotency_key = $1")
            .bind(key)
            .fetch_optional(conn)
            .await
    })?)
}

/// Records the move with idempotency key `key`.
pub(super) async fn insert_move_in(
    tx: &mut Tx,
    key: &str,
    request: &str,
    change_id: Uuid,
    at: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<()> {
    on_tx!(tx, |conn| {
        sqlx::query(
            "INSERT INTO credit_moves (idempotency_key, request, change_id, created_at, created_by) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(key)
        .bind(request)
        .bind(change_id)
        .bind(at)
        .bind(by)
        .execute(conn)
        .await
        .map(|_| ())
    })?;
    Ok(())
}

// ---- reads ----

/// The totals per status of `pool` (zero for a pool that does not exist).
pub(super) async fn balances(db: &Db, pool: PoolId) -> StoreResult<Balances> {
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
pub(super) async fn is_due(
    db: &Db,
    pool: PoolId,
    now: DateTime<Utc>,
    today: NaiveDate,
) -> StoreResult<bool> {
    let due: bool = on_db!(db, |conn| {
        sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM credit_lots WHERE pool_id = $1 AND available > 0 \
             AND expires_on < $2) OR EXISTS (SELECT 1 FROM credit_operations WHERE tenant_id = $1 \
             AND state = 'Reserved' AND timeout_at IS NOT NULL AND timeout_at <= $3)",
        )
        .bind(pool.as_uuid())
        .bind(today)
        .bind(now)
        .fetch_one(conn)
        .await
    })?;
    Ok(due)
}

/// Up to `limit` pools with work due (see [`is_due`]).
pub(super) async fn due_pools(
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
pub(super) async fn lots_page(
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
pub(super) struct LotOperation {
    /// The lot.
    pub(super) lot_id: Uuid,
    /// The operation id.
    pub(super) operation_id: String,
    /// Its state.
    pub(super) state: OperationState,
    /// Its project.
    pub(super) project_id: Option<Uuid>,
    /// The project's name, when it is a project of the operation's tenant.
    pub(super) project_name: Option<String>,
    /// Micro-credits of the lot it holds.
    pub(super) held: i64,
    /// Micro-credits of the lot it spent.
    pub(super) used: i64,
    /// When it was made.
    pub(super) created_at: DateTime<Utc>,
    /// When it was resolved.
    pub(super) resolved_at: Option<DateTime<Utc>>,
    /// How many operations the lot has in all.
    pub(super) total: i64,
}

/// The newest `per_lot` operations holding (`Reserved`) or having spent (`Spent`) credits of
/// each lot in `lots`, with each lot's count; operations made at the same instant newest first
/// too, as their ids (UUIDv7) follow the order they were made in. Project names are read in the
/// same statement, from the projects table, so that a page costs one query whatever its size.
pub(super) async fn lot_operations(
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
        "SELECT lot_id, operation_id, state, project_id, project_name, held, used, created_at, \
         resolved_at, total FROM (SELECT ol.lot_id, o.operation_id, o.state, o.project_id, \
         p.name AS project_name, ol.reserved AS held, ol.spent AS used, o.created_at, \
         o.resolved_at, ROW_NUMBER() OVER (PARTITION BY ol.lot_id ORDER BY o.created_at DESC, \
         o.id DESC) AS position, COUNT(*) OVER (PARTITION BY ol.lot_id) AS total \
         FROM credit_operation_lots ol JOIN credit_operations o ON o.id = ol.operation_ref \
         LEFT JOIN projects p ON p.id = o.project_id AND p.tenant_id = o.tenant_id \
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
pub(super) async fn journal_page(
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
        "SELECT j.sequence, j.change_id, j.at, j.kind, j.actor_id, j.actor_type, j.operation_id, \
         j.sales_order_id, j.counterpart_pool_id, l.billing_reference, l.billing_reference_tag, \
         l.billing_reference_type, l.expires_on, j.available, j.reserved, j.spent, j.expired \
         FROM credit_journal j JOIN credit_lots l ON l.id = j.lot_id \
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

/// The entries of one change (a move's, to answer its retry).
pub(super) async fn change_entries_in(
    tx: &mut Tx,
    change_id: Uuid,
) -> StoreResult<Vec<JournalRow>> {
    let sql = "SELECT j.sequence, j.change_id, j.at, j.kind, j.actor_id, j.actor_type, \
         j.operation_id, j.sales_order_id, j.counterpart_pool_id, l.billing_reference, \
         l.billing_reference_tag, l.billing_reference_type, l.expires_on, j.available, \
         j.reserved, j.spent, j.expired FROM credit_journal j JOIN credit_lots l ON l.id = j.lot_id \
         WHERE j.change_id = $1 ORDER BY j.sequence";
    let rows: Vec<StoredJournal> = on_tx!(tx, |conn| {
        sqlx::query_as(sql).bind(change_id).fetch_all(conn).await
    })?;
    Ok(rows.into_iter().map(JournalRow::from).collect())
}

/// Which amounts [`sums_in`] adds up.
#[derive(Debug, Clone, Copy)]
pub(super) enum Sums {
    /// The lots' amounts: the balances.
    Lots,
    /// The journal's changes: what the balances must equal.
    Journal,
}

/// The totals per status of `pool`'s lots or journal, inside a transaction that holds the
/// pool, so that both are read at one point of the ledger's history.
pub(super) async fn sums_in(tx: &mut Tx, pool: PoolId, of: Sums) -> StoreResult<Balances> {
    let table = match of {
        Sums::Lots => "credit_lots",
        Sums::Journal => "credit_journal",
    };
    let sql = format!(
        "SELECT CAST(COALESCE(SUM(available), 0) AS BIGINT), \
         CAST(COALESCE(SUM(reserved), 0) AS BIGINT), CAST(COALESCE(SUM(spent), 0) AS BIGINT), \
         CAST(COALESCE(SUM(expired), 0) AS BIGINT) FROM {table} WHERE pool_id = $1"
    );
    let (available, reserved, spent, expired): (i64, i64, i64, i64) = on_tx!(tx, |conn| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
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

#[derive(sqlx::FromRow)]
struct StoredJournal {
    sequence: i64,
    change_id: Uuid,
    at: DateTime<Utc>,
    kind: JournalKind,
    actor_id: Option<Uuid>,
    actor_type: Option<String>,
    operation_id: Option<String>,
    sales_order_id: Option<String>,
    counterpart_pool_id: Option<Uuid>,
    billing_reference: String,
    billing_reference_tag: String,
    billing_reference_type: String,
    expires_on: NaiveDate,
    available: i64,
    reserved: i64,
    spent: i64,
    expired: i64,
}

impl From<StoredJournal> for JournalRow {
    fn from(row: StoredJournal) -> Self {
        Self {
            sequence: row.sequence,
            change_id: row.change_id,
            at: row.at,
            kind: row.kind,
            actor_id: row.actor_id,
            actor_type: row.actor_type,
            operation_id: row.operation_id,
            sales_order_id: row.sales_order_id,
            counterpart: row.counterpart_pool_id.map(PoolId::from_uuid),
            reference: BillingReference {
                reference: row.billing_reference,
                tag: row.billing_reference_tag,
                kind: row.billing_reference_type,
            },
            expires_on: row.expires_on,
            change: Balances {
                available: Credits::from_micros(row.available),
                reserved: Credits::from_micros(row.reserved),
                spent: Credits::from_micros(row.spent),
                expired: Credits::from_micros(row.expired),
            },
        }
    }
}

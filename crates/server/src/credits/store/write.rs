//! The ledger's statements inside a write transaction, written once for any [`LedgerConn`]:
//! an sqlx transaction on either database, or a transaction on the SQLite writer thread.
//! Every one runs in a transaction that first took its pool with [`lock_pool_in`].

use std::future::Future;

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::rows::{
    DUE_CONDITION, JOURNAL_COLUMNS, LOT_COLUMNS, LOT_ORDER, LedgerRow, OPERATION_COLUMNS,
    StoredJournal, StoredLot, StoredOperation, StoredOperationLot, StoredPool, StoredRequest,
    StoredSums,
};
use crate::credits::amount::Credits;
use crate::credits::model::{
    Balances, BillingReference, JournalKind, JournalRow, LotRow, OperationLotRow, OperationRow,
    PoolId,
};
use crate::db::{Arg, Backend, Sql, SqliteWriteTx, StoreError, StoreResult, Tx};
use crate::ids::TenantId;

/// A connection inside a write transaction.
pub(crate) trait LedgerConn: Send {
    /// Which database it talks to.
    fn backend(&self) -> Backend;

    /// Runs a statement; the rows it changed.
    fn run(&mut self, sql: Sql) -> impl Future<Output = StoreResult<u64>> + Send;

    /// Runs a query; its rows.
    fn rows<R: LedgerRow>(&mut self, sql: Sql) -> impl Future<Output = StoreResult<Vec<R>>> + Send;
}

impl LedgerConn for Tx {
    fn backend(&self) -> Backend {
        match self {
            Tx::Sqlite(_) => Backend::Sqlite,
            Tx::Postgres(_) => Backend::Postgres,
        }
    }

    fn run(&mut self, sql: Sql) -> impl Future<Output = StoreResult<u64>> + Send {
        sql.execute_in(self)
    }

    fn rows<R: LedgerRow>(&mut self, sql: Sql) -> impl Future<Output = StoreResult<Vec<R>>> + Send {
        sql.fetch_all_in(self)
    }
}

impl LedgerConn for SqliteWriteTx<'_> {
    fn backend(&self) -> Backend {
        Backend::Sqlite
    }

    fn run(&mut self, sql: Sql) -> impl Future<Output = StoreResult<u64>> + Send {
        std::future::ready(self.execute(sql))
    }

    fn rows<R: LedgerRow>(&mut self, sql: Sql) -> impl Future<Output = StoreResult<Vec<R>>> + Send {
        std::future::ready(self.fetch(sql, R::from_sqlite))
    }
}

/// A statement with its arguments in order (`$1`, `$2`, ...).
fn statement(text: &str, args: Vec<Arg>) -> Sql {
    Sql::with_args(text, args)
}

fn uuid(id: Uuid) -> Arg {
    Arg::Uuid(id)
}

fn text(value: &str) -> Arg {
    Arg::Text(value.to_owned())
}

fn opt_text(value: Option<&str>) -> Arg {
    Arg::OptText(value.map(str::to_owned))
}

// ---- pools ----

/// Creates the pool if it is new.
pub(crate) async fn create_pool_in(conn: &mut impl LedgerConn, pool: PoolId) -> StoreResult<()> {
    conn.run(statement(
        "INSERT INTO credit_pools (id, tenant_id, received) VALUES ($1, $2, 0) \
         ON CONFLICT (id) DO NOTHING",
        vec![
            uuid(pool.as_uuid()),
            Arg::OptUuid(pool.tenant().map(|tenant| tenant.as_uuid())),
        ],
    ))
    .await?;
    Ok(())
}

/// What a transaction learns when it takes a pool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoolState {
    /// Credits the pool ever received.
    pub(crate) received: Credits,
    /// Whether lots past their date hold available credits, or reservations are past their
    /// timeout: work to settle before anything else.
    pub(crate) due: bool,
}

/// Takes the pool for the rest of the transaction (`FOR UPDATE` on PostgreSQL; on SQLite the
/// transaction holds the one write lock already); `None` when it does not exist.
pub(crate) async fn lock_pool_in(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    now: DateTime<Utc>,
) -> StoreResult<Option<PoolState>> {
    let lock = match conn.backend() {
        Backend::Sqlite => "",
        Backend::Postgres => " FOR UPDATE",
    };
    // The due check reads what committed before the lock was granted. Nothing another
    // transaction commits makes something due (new lots are not past their date, new
    // reservations not past their timeout), so it misses nothing.
    let text =
        format!("SELECT received, {DUE_CONDITION} AS due FROM credit_pools WHERE id = $1{lock}");
    let rows: Vec<StoredPool> = conn
        .rows(statement(
            &text,
            vec![
                uuid(pool.as_uuid()),
                Arg::Date(now.date_naive()),
                Arg::Time(now),
            ],
        ))
        .await?;
    Ok(rows.into_iter().next().map(|row| PoolState {
        received: Credits::from_micros(row.received),
        due: row.due,
    }))
}

/// Counts credits the pool received (adds and moves in).
pub(crate) async fn add_received_in(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    amount: Credits,
) -> StoreResult<()> {
    conn.run(statement(
        "UPDATE credit_pools SET received = received + $2 WHERE id = $1",
        vec![uuid(pool.as_uuid()), Arg::I64(amount.micros())],
    ))
    .await?;
    Ok(())
}

// ---- lots ----

/// The lot of `pool` with `reference` and `expires_on`, created empty when missing.
pub(crate) async fn lot_in(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    reference: &BillingReference,
    expires_on: NaiveDate,
    now: DateTime<Utc>,
) -> StoreResult<LotRow> {
    let select = format!(
        "SELECT {LOT_COLUMNS} FROM credit_lots l WHERE l.pool_id = $1 AND l.billing_reference = $2 \
         AND l.billing_reference_tag = $3 AND l.billing_reference_type = $4 AND l.expires_on = $5"
    );
    let key = vec![
        uuid(pool.as_uuid()),
        text(&reference.reference),
        text(&reference.tag),
        text(&reference.kind),
        Arg::Date(expires_on),
    ];
    let found: Vec<StoredLot> = conn.rows(statement(&select, key)).await?;
    if let Some(lot) = found.into_iter().next() {
        return Ok(lot.into());
    }
    let id = Uuid::now_v7();
    conn.run(statement(
        "INSERT INTO credit_lots (id, pool_id, billing_reference, billing_reference_tag, \
         billing_reference_type, expires_on, available, reserved, spent, expired, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 0, 0, 0, 0, $7)",
        vec![
            uuid(id),
            uuid(pool.as_uuid()),
            text(&reference.reference),
            text(&reference.tag),
            text(&reference.kind),
            Arg::Date(expires_on),
            Arg::Time(now),
        ],
    ))
    .await?;
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
pub(crate) struct LotChoice<'a> {
    /// Only lots of this billing reference.
    pub(crate) reference: Option<&'a BillingReference>,
    /// Only lots whose billing reference this pool also holds.
    pub(crate) shared_with: Option<PoolId>,
}

/// Up to `limit` lots of `pool` with available credits not past their date on `today`, in the
/// order they are used, after the lot at `after` (its expiry date and billing reference).
pub(crate) async fn available_lots_in(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    today: NaiveDate,
    choice: LotChoice<'_>,
    after: Option<(NaiveDate, &BillingReference)>,
    limit: i64,
) -> StoreResult<Vec<LotRow>> {
    let mut sql = Sql::new(&format!(
        "SELECT {LOT_COLUMNS} FROM credit_lots l WHERE l.pool_id = "
    ));
    let pool_arg = sql.arg(uuid(pool.as_uuid()));
    sql.push(&pool_arg);
    let today_arg = sql.arg(Arg::Date(today));
    sql.push(&format!(
        " AND l.available > 0 AND l.expires_on >= {today_arg}"
    ));
    if let Some(reference) = choice.reference {
        let (r, t, k) = (
            sql.arg(text(&reference.reference)),
            sql.arg(text(&reference.tag)),
            sql.arg(text(&reference.kind)),
        );
        sql.push(&format!(
            " AND l.billing_reference = {r} AND l.billing_reference_tag = {t} \
             AND l.billing_reference_type = {k}"
        ));
    }
    if let Some(other) = choice.shared_with {
        let other = sql.arg(uuid(other.as_uuid()));
        sql.push(&format!(
            " AND EXISTS (SELECT 1 FROM credit_lots t WHERE t.pool_id = {other} \
             AND t.billing_reference = l.billing_reference \
             AND t.billing_reference_tag = l.billing_reference_tag \
             AND t.billing_reference_type = l.billing_reference_type)"
        ));
    }
    if let Some((expires_on, reference)) = after {
        let keys = [
            sql.arg(Arg::Date(expires_on)),
            sql.arg(text(&reference.reference)),
            sql.arg(text(&reference.tag)),
            sql.arg(text(&reference.kind)),
        ];
        sql.push(&format!(
            " AND (l.expires_on, l.billing_reference, l.billing_reference_tag, \
             l.billing_reference_type) > ({}, {}, {}, {})",
            keys[0], keys[1], keys[2], keys[3]
        ));
    }
    let limit = sql.arg(Arg::I64(limit));
    sql.push(&format!(" ORDER BY {LOT_ORDER} LIMIT {limit}"));
    let lots: Vec<StoredLot> = conn.rows(sql).await?;
    Ok(lots.into_iter().map(LotRow::from).collect())
}

/// Up to `limit` lots of `pool` holding available credits past their date on `today`.
pub(crate) async fn lapsed_lots_in(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    today: NaiveDate,
    limit: i64,
) -> StoreResult<Vec<LotRow>> {
    let text = format!(
        "SELECT {LOT_COLUMNS} FROM credit_lots l WHERE l.pool_id = $1 AND l.available > 0 \
         AND l.expires_on < $2 ORDER BY {LOT_ORDER} LIMIT $3"
    );
    let lots: Vec<StoredLot> = conn
        .rows(statement(
            &text,
            vec![uuid(pool.as_uuid()), Arg::Date(today), Arg::I64(limit)],
        ))
        .await?;
    Ok(lots.into_iter().map(LotRow::from).collect())
}

/// Who made a change and why, as the journal records it.
#[derive(Debug, Clone)]
pub(crate) struct Entry<'a> {
    /// The change (request or job step) the entry belongs to.
    pub(crate) change_id: Uuid,
    /// When.
    pub(crate) at: DateTime<Utc>,
    /// What.
    pub(crate) kind: JournalKind,
    /// Who, with the kind of principal.
    pub(crate) actor: Option<(Uuid, &'a str)>,
    /// The operation.
    pub(crate) operation_id: Option<&'a str>,
    /// The sales order.
    pub(crate) sales_order_id: Option<&'a str>,
    /// The other pool of a move.
    pub(crate) counterpart: Option<PoolId>,
}

/// Changes a lot by `change` and journals it: the only way amounts change. A change that
/// would make an amount negative fails (the table's checks), so it cannot be written.
pub(crate) async fn apply_in(
    conn: &mut impl LedgerConn,
    lot: &LotRow,
    change: &Balances,
    entry: &Entry<'_>,
) -> StoreResult<()> {
    let amounts = [
        Arg::I64(change.available.micros()),
        Arg::I64(change.reserved.micros()),
        Arg::I64(change.spent.micros()),
        Arg::I64(change.expired.micros()),
    ];
    let mut update = vec![uuid(lot.id)];
    update.extend(amounts.iter().cloned());
    conn.run(statement(
        "UPDATE credit_lots SET available = available + $2, reserved = reserved + $3, \
         spent = spent + $4, expired = expired + $5 WHERE id = $1",
        update,
    ))
    .await?;
    let mut insert = vec![
        uuid(entry.change_id),
        uuid(lot.pool.as_uuid()),
        uuid(lot.id),
        Arg::Time(entry.at),
        text(entry.kind.as_str()),
        Arg::OptUuid(entry.actor.map(|(id, _)| id)),
        opt_text(entry.actor.map(|(_, kind)| kind)),
        opt_text(entry.operation_id),
        opt_text(entry.sales_order_id),
        Arg::OptUuid(entry.counterpart.map(PoolId::as_uuid)),
    ];
    insert.extend(amounts);
    conn.run(statement(
        "INSERT INTO credit_journal (change_id, pool_id, lot_id, at, kind, actor_id, actor_type, \
         operation_id, sales_order_id, counterpart_pool_id, available, reserved, spent, expired) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        insert,
    ))
    .await?;
    Ok(())
}

// ---- operations ----

/// The operation `operation_id` of `tenant`.
pub(crate) async fn operation_in(
    conn: &mut impl LedgerConn,
    tenant: TenantId,
    operation_id: &str,
) -> StoreResult<Option<OperationRow>> {
    let text = format!(
        "SELECT {OPERATION_COLUMNS} FROM credit_operations WHERE tenant_id = $1 AND operation_id = $2"
    );
    let found: Vec<StoredOperation> = conn
        .rows(statement(
            &text,
            vec![uuid(tenant.as_uuid()), self::text(operation_id)],
        ))
        .await?;
    Ok(found.into_iter().next().map(OperationRow::from))
}

/// Up to `limit` reservations of `tenant` past their timeout at `now`.
pub(crate) async fn due_operations_in(
    conn: &mut impl LedgerConn,
    tenant: TenantId,
    now: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<OperationRow>> {
    let text = format!(
        "SELECT {OPERATION_COLUMNS} FROM credit_operations WHERE tenant_id = $1 \
         AND state = 'Reserved' AND timeout_at IS NOT NULL AND timeout_at <= $2 \
         ORDER BY timeout_at, id LIMIT $3"
    );
    let found: Vec<StoredOperation> = conn
        .rows(statement(
            &text,
            vec![uuid(tenant.as_uuid()), Arg::Time(now), Arg::I64(limit)],
        ))
        .await?;
    Ok(found.into_iter().map(OperationRow::from).collect())
}

/// Records a new operation.
pub(crate) async fn insert_operation_in(
    conn: &mut impl LedgerConn,
    op: &OperationRow,
) -> StoreResult<()> {
    conn.run(statement(
        "INSERT INTO credit_operations (id, tenant_id, operation_id, state, direct, credits, \
         spent, project_id, request, resolution, created_at, created_by, timeout_at, \
         resolved_at, resolved_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        vec![
            uuid(op.id),
            uuid(op.tenant_id.as_uuid()),
            text(&op.operation_id),
            text(op.state.as_str()),
            Arg::Bool(op.direct),
            Arg::I64(op.credits.micros()),
            Arg::I64(op.spent.micros()),
            Arg::OptUuid(op.project_id),
            text(&op.request),
            opt_text(op.resolution.as_deref()),
            Arg::Time(op.created_at),
            uuid(op.created_by),
            Arg::OptTime(op.timeout_at),
            Arg::OptTime(op.resolved_at),
            Arg::OptUuid(op.resolved_at.map(|_| op.created_by)),
        ],
    ))
    .await?;
    Ok(())
}

/// Resolves a reservation: only one still `Reserved` changes, so a reservation resolves once
/// even if a caller got here twice.
pub(crate) async fn resolve_operation_in(
    conn: &mut impl LedgerConn,
    op: &OperationRow,
    resolved_by: Option<Uuid>,
) -> StoreResult<()> {
    let changed = conn
        .run(statement(
            "UPDATE credit_operations SET state = $2, spent = $3, resolution = $4, \
             resolved_at = $5, resolved_by = $6 WHERE id = $1 AND state = 'Reserved'",
            vec![
                uuid(op.id),
                text(op.state.as_str()),
                Arg::I64(op.spent.micros()),
                opt_text(op.resolution.as_deref()),
                Arg::OptTime(op.resolved_at),
                Arg::OptUuid(resolved_by),
            ],
        ))
        .await?;
    if changed == 1 {
        Ok(())
    } else {
        Err(StoreError::Corrupt("a credit reservation resolved twice"))
    }
}

/// SQL of an operation's shares of its lots, in the order lots are used.
pub(super) fn operation_lots_sql() -> String {
    format!(
        "SELECT {LOT_COLUMNS}, ol.reserved AS held, ol.spent AS used FROM credit_operation_lots ol \
         JOIN credit_lots l ON l.id = ol.lot_id WHERE ol.operation_ref = $1 ORDER BY {LOT_ORDER}"
    )
}

/// What `operation` holds or spent of each lot, in the order lots are used.
pub(crate) async fn operation_lots_in(
    conn: &mut impl LedgerConn,
    operation: Uuid,
) -> StoreResult<Vec<OperationLotRow>> {
    let rows: Vec<StoredOperationLot> = conn
        .rows(statement(&operation_lots_sql(), vec![uuid(operation)]))
        .await?;
    Ok(rows.into_iter().map(OperationLotRow::from).collect())
}

/// Records what an operation took of a lot, or its new amounts.
pub(crate) async fn put_operation_lot_in(
    conn: &mut impl LedgerConn,
    operation: Uuid,
    lot: Uuid,
    reserved: Credits,
    spent: Credits,
) -> StoreResult<()> {
    conn.run(statement(
        "INSERT INTO credit_operation_lots (operation_ref, lot_id, reserved, spent) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (operation_ref, lot_id) \
         DO UPDATE SET reserved = excluded.reserved, spent = excluded.spent",
        vec![
            uuid(operation),
            uuid(lot),
            Arg::I64(reserved.micros()),
            Arg::I64(spent.micros()),
        ],
    ))
    .await?;
    Ok(())
}

// ---- requests already applied ----

/// The request and pool of the sales order `id`, if it was added.
pub(crate) async fn order_in(
    conn: &mut impl LedgerConn,
    id: &str,
) -> StoreResult<Option<(String, PoolId)>> {
    let found: Vec<StoredRequest> = conn
        .rows(statement(
            "SELECT request, pool_id AS reference FROM credit_orders WHERE sales_order_id = $1",
            vec![text(id)],
        ))
        .await?;
    Ok(found
        .into_iter()
        .next()
        .map(|row| (row.request, PoolId::from_uuid(row.reference))))
}

/// What a sales order added, for [`insert_order_in`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Order<'a> {
    /// The sales order id.
    pub(crate) id: &'a str,
    /// The request's fingerprint.
    pub(crate) request: &'a str,
    /// The pool it added to.
    pub(crate) pool: PoolId,
    /// The credits it added.
    pub(crate) credits: Credits,
    /// When.
    pub(crate) at: DateTime<Utc>,
    /// Who.
    pub(crate) by: Uuid,
}

/// Records that a sales order was added.
pub(crate) async fn insert_order_in(
    conn: &mut impl LedgerConn,
    order: Order<'_>,
) -> StoreResult<()> {
    conn.run(statement(
        "INSERT INTO credit_orders (sales_order_id, request, pool_id, credits, created_at, created_by) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        vec![
            text(order.id),
            text(order.request),
            uuid(order.pool.as_uuid()),
            Arg::I64(order.credits.micros()),
            Arg::Time(order.at),
            uuid(order.by),
        ],
    ))
    .await?;
    Ok(())
}

/// The request and change of the move with idempotency key `key`, if it was made.
pub(crate) async fn move_in(
    conn: &mut impl LedgerConn,
    key: &str,
) -> StoreResult<Option<(String, Uuid)>> {
    let found: Vec<StoredRequest> = conn
        .rows(statement(
            "SELECT request, change_id AS reference FROM credit_moves WHERE idempotency_key = $1",
            vec![text(key)],
        ))
        .await?;
    Ok(found
        .into_iter()
        .next()
        .map(|row| (row.request, row.reference)))
}

/// Records the move with idempotency key `key`.
pub(crate) async fn insert_move_in(
    conn: &mut impl LedgerConn,
    key: &str,
    request: &str,
    change_id: Uuid,
    at: DateTime<Utc>,
    by: Uuid,
) -> StoreResult<()> {
    conn.run(statement(
        "INSERT INTO credit_moves (idempotency_key, request, change_id, created_at, created_by) \
         VALUES ($1, $2, $3, $4, $5)",
        vec![
            text(key),
            text(request),
            uuid(change_id),
            Arg::Time(at),
            uuid(by),
        ],
    ))
    .await?;
    Ok(())
}

/// The entries of one change (a move's, to answer its retry).
pub(crate) async fn change_entries_in(
    conn: &mut impl LedgerConn,
    change_id: Uuid,
) -> StoreResult<Vec<JournalRow>> {
    let text = format!(
        "SELECT {JOURNAL_COLUMNS} FROM credit_journal j JOIN credit_lots l ON l.id = j.lot_id \
         WHERE j.change_id = $1 ORDER BY j.sequence"
    );
    let rows: Vec<StoredJournal> = conn.rows(statement(&text, vec![uuid(change_id)])).await?;
    Ok(rows.into_iter().map(JournalRow::from).collect())
}

/// Which amounts [`sums_in`] adds up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sums {
    /// The lots' amounts: the balances.
    Lots,
    /// The journal's changes: what the balances must equal.
    Journal,
}

/// The totals per status of `pool`'s lots or journal, inside a transaction that holds the
/// pool, so that both are read at one point of the ledger's history.
pub(crate) async fn sums_in(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    of: Sums,
) -> StoreResult<Balances> {
    let table = match of {
        Sums::Lots => "credit_lots",
        Sums::Journal => "credit_journal",
    };
    let text = format!(
        "SELECT CAST(COALESCE(SUM(available), 0) AS BIGINT) AS available, \
         CAST(COALESCE(SUM(reserved), 0) AS BIGINT) AS reserved, \
         CAST(COALESCE(SUM(spent), 0) AS BIGINT) AS spent, \
         CAST(COALESCE(SUM(expired), 0) AS BIGINT) AS expired FROM {table} WHERE pool_id = $1"
    );
    let rows: Vec<StoredSums> = conn
        .rows(statement(&text, vec![uuid(pool.as_uuid())]))
        .await?;
    Ok(rows
        .into_iter()
        .next()
        .map(Balances::from)
        .unwrap_or_default())
}

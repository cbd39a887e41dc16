//! Rows of the ledger's tables as the statements return them, decoded by sqlx (either
//! database) or by rusqlite on the SQLite writer thread: the two decoders of each row sit side
//! by side so that they cannot drift apart.

use chrono::{DateTime, NaiveDate, Utc};
use rusqlite::Row;
use uuid::Uuid;

use crate::credits::amount::Credits;
use crate::credits::model::{
    Balances, BillingReference, JournalKind, JournalRow, LotRow, OperationLotRow, OperationRow,
    OperationState, PoolId,
};
use crate::db::{opt_time_at, opt_uuid_at, time_at, uuid_at};
use crate::ids::TenantId;

/// Columns of a lot, in the order [`StoredLot`] decodes them (the table aliased `l`).
pub(super) const LOT_COLUMNS: &str = "l.id, l.pool_id, l.billing_reference, \
    l.billing_reference_tag, l.billing_reference_type, l.expires_on, l.available, l.reserved, \
    l.spent, l.expired";

/// The order lots are used in: earliest expiry first, then by billing reference (text order,
/// which is byte order on both databases).
pub(super) const LOT_ORDER: &str = "l.expires_on, l.billing_reference, l.billing_reference_tag, \
    l.billing_reference_type";

/// Columns of an operation, in the order [`StoredOperation`] decodes them.
pub(super) const OPERATION_COLUMNS: &str = "id, tenant_id, operation_id, state, direct, credits, \
    spent, project_id, request, resolution, created_at, created_by, timeout_at, resolved_at";

/// Columns of a journal entry with its lot, in the order [`StoredJournal`] decodes them.
pub(super) const JOURNAL_COLUMNS: &str = "j.sequence, j.change_id, j.at, j.kind, j.actor_id, \
    j.actor_type, j.operation_id, j.sales_order_id, j.counterpart_pool_id, l.billing_reference, \
    l.billing_reference_tag, l.billing_reference_type, l.expires_on, j.available, j.reserved, \
    j.spent, j.expired";

/// Whether pool `$1` has work due on day `$2` at time `$3`: lots past their date with
/// available credits, or reservations past their timeout. One text for the check of reads and
/// the one made when a transaction takes the pool, so that the two cannot drift apart.
pub(super) const DUE_CONDITION: &str = "(EXISTS (SELECT 1 FROM credit_lots WHERE pool_id = $1 \
    AND available > 0 AND expires_on < $2) OR EXISTS (SELECT 1 FROM credit_operations \
    WHERE tenant_id = $1 AND state = 'Reserved' AND timeout_at IS NOT NULL AND timeout_at <= $3))";

/// A row both paths decode.
pub(crate) trait LedgerRow:
    for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
    + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
    + Send
    + Unpin
    + Sized
{
    /// Decodes a row on the SQLite writer thread.
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self>;
}

fn date_at(row: &Row<'_>, index: usize) -> rusqlite::Result<NaiveDate> {
    let text = row.get_ref(index)?.as_str()?;
    NaiveDate::parse_from_str(text, "%F").map_err(|error| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            format!("bad date {text:?}: {error}").into(),
        )
    })
}

#[derive(sqlx::FromRow)]
pub(super) struct StoredLot {
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

impl LedgerRow for StoredLot {
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self> {
        lot_from_sqlite(row)
    }
}

fn lot_from_sqlite(row: &Row<'_>) -> rusqlite::Result<StoredLot> {
    Ok(StoredLot {
        id: uuid_at(row, 0)?,
        pool_id: uuid_at(row, 1)?,
        billing_reference: row.get(2)?,
        billing_reference_tag: row.get(3)?,
        billing_reference_type: row.get(4)?,
        expires_on: date_at(row, 5)?,
        available: row.get(6)?,
        reserved: row.get(7)?,
        spent: row.get(8)?,
        expired: row.get(9)?,
    })
}

fn balances(available: i64, reserved: i64, spent: i64, expired: i64) -> Balances {
    Balances {
        available: Credits::from_micros(available),
        reserved: Credits::from_micros(reserved),
        spent: Credits::from_micros(spent),
        expired: Credits::from_micros(expired),
    }
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
            balances: balances(lot.available, lot.reserved, lot.spent, lot.expired),
        }
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct StoredOperation {
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

impl LedgerRow for StoredOperation {
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: uuid_at(row, 0)?,
            tenant_id: TenantId::from_uuid(uuid_at(row, 1)?),
            operation_id: row.get(2)?,
            state: row.get(3)?,
            direct: row.get(4)?,
            credits: row.get(5)?,
            spent: row.get(6)?,
            project_id: opt_uuid_at(row, 7)?,
            request: row.get(8)?,
            resolution: row.get(9)?,
            created_at: time_at(row, 10)?,
            created_by: uuid_at(row, 11)?,
            timeout_at: opt_time_at(row, 12)?,
            resolved_at: opt_time_at(row, 13)?,
        })
    }
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

/// A lot with an operation's share of it (`held`, `used`), after the lot's columns.
#[derive(sqlx::FromRow)]
pub(super) struct StoredOperationLot {
    #[sqlx(flatten)]
    lot: StoredLot,
    held: i64,
    used: i64,
}

impl LedgerRow for StoredOperationLot {
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            lot: lot_from_sqlite(row)?,
            held: row.get(10)?,
            used: row.get(11)?,
        })
    }
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

#[derive(sqlx::FromRow)]
pub(super) struct StoredJournal {
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

impl LedgerRow for StoredJournal {
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            sequence: row.get(0)?,
            change_id: uuid_at(row, 1)?,
            at: time_at(row, 2)?,
            kind: row.get(3)?,
            actor_id: opt_uuid_at(row, 4)?,
            actor_type: row.get(5)?,
            operation_id: row.get(6)?,
            sales_order_id: row.get(7)?,
            counterpart_pool_id: opt_uuid_at(row, 8)?,
            billing_reference: row.get(9)?,
            billing_reference_tag: row.get(10)?,
            billing_reference_type: row.get(11)?,
            expires_on: date_at(row, 12)?,
            available: row.get(13)?,
            reserved: row.get(14)?,
            spent: row.get(15)?,
            expired: row.get(16)?,
        })
    }
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
            change: balances(row.available, row.reserved, row.spent, row.expired),
        }
    }
}

/// A pool's row, with whether anything is due in it (lots past their date with available
/// credits, reservations past their timeout).
#[derive(sqlx::FromRow)]
pub(super) struct StoredPool {
    pub(super) received: i64,
    pub(super) due: bool,
}

impl LedgerRow for StoredPool {
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            received: row.get(0)?,
            due: row.get(1)?,
        })
    }
}

/// A request already applied (a sales order or a move): its fingerprint and what it names.
#[derive(sqlx::FromRow)]
pub(super) struct StoredRequest {
    pub(super) request: String,
    pub(super) reference: Uuid,
}

impl LedgerRow for StoredRequest {
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            request: row.get(0)?,
            reference: uuid_at(row, 1)?,
        })
    }
}

/// Totals per status.
#[derive(sqlx::FromRow)]
pub(super) struct StoredSums {
    available: i64,
    reserved: i64,
    spent: i64,
    expired: i64,
}

impl LedgerRow for StoredSums {
    fn from_sqlite(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            available: row.get(0)?,
            reserved: row.get(1)?,
            spent: row.get(2)?,
            expired: row.get(3)?,
        })
    }
}

impl From<StoredSums> for Balances {
    fn from(sums: StoredSums) -> Self {
        balances(sums.available, sums.reserved, sums.spent, sums.expired)
    }
}

//! The ledger's transactions, written once for any [`LedgerConn`]: each takes its pool,
//! settles what is due in it (credits past their date, reservations past their timeout),
//! checks, and then writes each lot's change with its journal entry. `service.rs` decides who
//! may ask and runs these on the SQLite writer thread or in a PostgreSQL transaction.
//!
//! Every input here is owned, so that a transaction can be handed to another thread.

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use uuid::Uuid;

use crate::credits::amount::{Credits, POOL_RECEIVED_MAX};
use crate::credits::model::{
    Balances, BillingReference, BillingReferenceDto, JournalKind, JournalRow, LotRow, MovedLotDto,
    OperationLotRow, OperationRow, OperationState, PoolId,
};
use crate::credits::service::{CreditError, CreditResult};
use crate::credits::store::{self, Entry, LedgerConn, LotChoice, Order, Sums};
use crate::ids::TenantId;

/// Lots read per step when reserving, moving or settling.
const LOTS_PER_STEP: i64 = 256;

/// Who asks, as the journal records it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ActorRef {
    /// User or API key id.
    pub(crate) id: Uuid,
    /// `UserIdentity` or `OpenAPIAccount`.
    pub(crate) kind: &'static str,
}

impl ActorRef {
    fn journal(self) -> Option<(Uuid, &'static str)> {
        Some((self.id, self.kind))
    }
}

/// The pool of a transaction did not exist; the service tells an unknown tenant from an empty
/// pool.
fn no_pool() -> CreditError {
    CreditError::NoPool
}

/// Takes `pool` and settles what is due in it; its state, `None` when it does not exist.
async fn take_pool(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    now: DateTime<Utc>,
) -> CreditResult<Option<store::PoolState>> {
    let state = store::lock_pool_in(conn, pool, now).await?;
    if let Some(state) = state
        && state.due
    {
        settle_in(conn, pool, now).await?;
    }
    Ok(state)
}

// ---- add ----

/// An add, checked.
#[derive(Debug, Clone)]
pub(crate) struct AddCredits {
    pub(crate) actor: ActorRef,
    pub(crate) pool: PoolId,
    pub(crate) credits: Credits,
    pub(crate) reference: BillingReference,
    pub(crate) expires_on: NaiveDate,
    pub(crate) sales_order: Option<String>,
    pub(crate) fingerprint: String,
    pub(crate) now: DateTime<Utc>,
}

/// Adds credits to a lot of the pool, once per sales order.
pub(crate) async fn add(conn: &mut impl LedgerConn, add: AddCredits) -> CreditResult<()> {
    store::create_pool_in(conn, add.pool).await?;
    let received = take_pool(conn, add.pool, add.now)
        .await?
        .map_or(Credits::ZERO, |state| state.received);
    if let Some(order) = add.sales_order.as_deref()
        && let Some((request, _)) = store::order_in(conn, order).await?
    {
        return if request == add.fingerprint {
            Ok(())
        } else {
            Err(conflict(
                "sales-order-conflict",
                format!("Sales order '{order}' was added already with another body."),
            ))
        };
    }
    if add.expires_on < add.now.date_naive() {
        return Err(CreditError::Invalid {
            field: "expiresAt",
            message: format!("the date {} has passed", add.expires_on),
        });
    }
    check_pool_limit(received, add.credits)?;
    let lot = store::lot_in(conn, add.pool, &add.reference, add.expires_on, add.now).await?;
    let entry = Entry {
        change_id: Uuid::now_v7(),
        at: add.now,
        kind: JournalKind::Add,
        actor: add.actor.journal(),
        operation_id: None,
        sales_order_id: add.sales_order.as_deref(),
        counterpart: None,
    };
    let change = Balances {
        available: add.credits,
        ..Balances::default()
    };
    store::apply_in(conn, &lot, &change, &entry).await?;
    store::add_received_in(conn, add.pool, add.credits).await?;
    if let Some(order) = add.sales_order.as_deref() {
        let order = Order {
            id: order,
            request: &add.fingerprint,
            pool: add.pool,
            credits: add.credits,
            at: add.now,
            by: add.actor.id,
        };
        store::insert_order_in(conn, order).await?;
    }
    Ok(())
}

fn check_pool_limit(received: Credits, more: Credits) -> CreditResult<()> {
    match received.checked_add(more) {
        Some(total) if total <= POOL_RECEIVED_MAX => Ok(()),
        _ => Err(conflict(
            "credit-limit",
            format!("A pool can receive at most {POOL_RECEIVED_MAX} credits in all."),
        )),
    }
}

// ---- reserve, spend, release ----

/// A reservation, checked.
#[derive(Debug, Clone)]
pub(crate) struct Reserve {
    pub(crate) actor: ActorRef,
    pub(crate) tenant: TenantId,
    pub(crate) operation_id: String,
    pub(crate) credits: Credits,
    pub(crate) project_id: Option<Uuid>,
    pub(crate) timeout_seconds: Option<u64>,
    pub(crate) fingerprint: String,
    pub(crate) now: DateTime<Utc>,
}

/// An operation with its lots, as a transaction leaves it.
pub(crate) type Operation = (OperationRow, Vec<OperationLotRow>);

/// Reserves credits, earliest expiry first; a retry answers with the reservation as it stands.
pub(crate) async fn reserve(
    conn: &mut impl LedgerConn,
    reserve: Reserve,
) -> CreditResult<Operation> {
    let pool = PoolId::of(reserve.tenant);
    take_pool(conn, pool, reserve.now)
        .await?
        .ok_or_else(no_pool)?;
    if let Some(existing) = store::operation_in(conn, reserve.tenant, &reserve.operation_id).await?
    {
        if existing.direct || existing.request != reserve.fingerprint {
            return Err(operation_conflict(&reserve.operation_id));
        }
        let lots = store::operation_lots_in(conn, existing.id).await?;
        return Ok((existing, lots));
    }
    let today = reserve.now.date_naive();
    let plan = allocate(conn, pool, today, reserve.credits, LotChoice::default()).await?;
    let timeout_at = reserve
        .timeout_seconds
        .and_then(|seconds| i64::try_from(seconds).ok())
        .map(|seconds| reserve.now + TimeDelta::seconds(seconds));
    let operation = OperationRow {
        id: Uuid::now_v7(),
        tenant_id: reserve.tenant,
        operation_id: reserve.operation_id,
        state: OperationState::Reserved,
        direct: false,
        credits: reserve.credits,
        spent: Credits::ZERO,
        project_id: reserve.project_id,
        request: reserve.fingerprint,
        resolution: None,
        created_at: reserve.now,
        created_by: reserve.actor.id,
        timeout_at,
        resolved_at: None,
    };
    let lots = write_operation(conn, reserve.actor, &operation, plan).await?;
    Ok((operation, lots))
}

/// A spend, checked.
#[derive(Debug, Clone)]
pub(crate) struct Spend {
    pub(crate) actor: ActorRef,
    pub(crate) tenant: TenantId,
    pub(crate) operation_id: String,
    pub(crate) credits: Option<Credits>,
    pub(crate) direct: bool,
    pub(crate) project_id: Option<Uuid>,
    pub(crate) now: DateTime<Utc>,
}

impl Spend {
    fn direct_fingerprint(&self) -> String {
        serde_json::json!([
            "direct",
            self.credits.unwrap_or_default().to_string(),
            self.project_id
        ])
        .to_string()
    }
}

/// Spends a reservation wholly or partly, or available credits directly; a retry answers with
/// the operation as the first spend left it.
pub(crate) async fn spend(conn: &mut impl LedgerConn, spend: Spend) -> CreditResult<Operation> {
    let pool = PoolId::of(spend.tenant);
    take_pool(conn, pool, spend.now)
        .await?
        .ok_or_else(no_pool)?;
    let existing = store::operation_in(conn, spend.tenant, &spend.operation_id).await?;
    let context = Resolve {
        actor: Some(spend.actor),
        now: spend.now,
    };
    match existing {
        None if spend.direct => spend_directly(conn, &context, spend).await,
        None => Err(CreditError::NotFound("operation")),
        Some(existing) if spend.direct => {
            if !existing.direct || existing.request != spend.direct_fingerprint() {
                return Err(operation_conflict(&spend.operation_id));
            }
            let lots = store::operation_lots_in(conn, existing.id).await?;
            Ok((existing, lots))
        }
        Some(existing) if existing.direct => Err(operation_conflict(&spend.operation_id)),
        Some(existing) => spend_existing(conn, &context, existing, spend.credits).await,
    }
}

async fn spend_directly(
    conn: &mut impl LedgerConn,
    context: &Resolve,
    spend: Spend,
) -> CreditResult<Operation> {
    let credits = spend.credits.unwrap_or_default();
    let pool = PoolId::of(spend.tenant);
    let plan = allocate(
        conn,
        pool,
        context.now.date_naive(),
        credits,
        LotChoice::default(),
    )
    .await?;
    let fingerprint = spend.direct_fingerprint();
    let operation = OperationRow {
        id: Uuid::now_v7(),
        tenant_id: spend.tenant,
        operation_id: spend.operation_id,
        state: OperationState::Spent,
        direct: true,
        credits,
        spent: credits,
        project_id: spend.project_id,
        request: fingerprint.clone(),
        resolution: Some(fingerprint),
        created_at: context.now,
        created_by: spend.actor.id,
        timeout_at: None,
        resolved_at: Some(context.now),
    };
    let lots = write_operation(conn, spend.actor, &operation, plan).await?;
    Ok((operation, lots))
}

/// A release, checked.
#[derive(Debug, Clone)]
pub(crate) struct Release {
    pub(crate) actor: ActorRef,
    pub(crate) tenant: TenantId,
    pub(crate) operation_id: String,
    pub(crate) now: DateTime<Utc>,
}

/// Gives a reservation's credits back; releasing again answers the same.
pub(crate) async fn release(
    conn: &mut impl LedgerConn,
    release: Release,
) -> CreditResult<Operation> {
    let pool = PoolId::of(release.tenant);
    take_pool(conn, pool, release.now)
        .await?
        .ok_or_else(no_pool)?;
    let existing = store::operation_in(conn, release.tenant, &release.operation_id)
        .await?
        .ok_or(CreditError::NotFound("operation"))?;
    let context = Resolve {
        actor: Some(release.actor),
        now: release.now,
    };
    match existing.state {
        OperationState::Reserved if !existing.direct => {
            give_back(conn, &context, existing, OperationState::Released).await
        }
        OperationState::Released => {
            let lots = store::operation_lots_in(conn, existing.id).await?;
            Ok((existing, lots))
        }
        _ => Err(resolved_already(&existing)),
    }
}

// ---- move ----

/// A move, checked.
#[derive(Debug, Clone)]
pub(crate) struct Move {
    pub(crate) actor: ActorRef,
    pub(crate) source: PoolId,
    pub(crate) target: PoolId,
    pub(crate) credits: Credits,
    pub(crate) reference: Option<BillingReference>,
    pub(crate) key: Option<String>,
    pub(crate) fingerprint: String,
    pub(crate) now: DateTime<Utc>,
}

/// What a move took from each lot.
pub(crate) type Moved = Vec<MovedLotDto>;

/// Moves available credits from `source` to the same billing references and expiry dates in
/// `target`; a retry under the same key answers with the first move's lots.
pub(crate) async fn move_credits(conn: &mut impl LedgerConn, order: Move) -> CreditResult<Moved> {
    let (source, target) = (order.source, order.target);
    store::create_pool_in(conn, target).await?;
    // Both pools, always in the same order, so that two opposite moves cannot deadlock.
    let (first, second) = if source < target {
        (source, target)
    } else {
        (target, source)
    };
    let first_state = take_pool(conn, first, order.now).await?;
    let second_state = take_pool(conn, second, order.now).await?;
    let (source_state, target_state) = if first == source {
        (first_state, second_state)
    } else {
        (second_state, first_state)
    };
    if let Some(key) = order.key.as_deref()
        && let Some((stored, change_id)) = store::move_in(conn, key).await?
    {
        if stored != order.fingerprint {
            return Err(conflict(
                "idempotency-conflict",
                format!("Idempotency-Key '{key}' was used already for another request."),
            ));
        }
        let entries = store::change_entries_in(conn, change_id).await?;
        return Ok(moved_of(&entries));
    }
    if source_state.is_none() {
        return Err(insufficient(order.credits, Credits::ZERO));
    }
    let choice = LotChoice {
        reference: order.reference.as_ref(),
        shared_with: (source.tenant().is_some() && target.tenant().is_some()).then_some(target),
    };
    let today = order.now.date_naive();
    let plan = allocate(conn, source, today, order.credits, choice).await?;
    check_pool_limit(
        target_state.map_or(Credits::ZERO, |state| state.received),
        order.credits,
    )?;
    let out = Entry {
        change_id: Uuid::now_v7(),
        at: order.now,
        kind: JournalKind::MoveOut,
        actor: order.actor.journal(),
        operation_id: None,
        sales_order_id: None,
        counterpart: Some(target),
    };
    let moved = write_move(conn, &out, source, target, plan).await?;
    store::add_received_in(conn, target, order.credits).await?;
    if let Some(key) = order.key.as_deref() {
        store::insert_move_in(
            conn,
            key,
            &order.fingerprint,
            out.change_id,
            order.now,
            order.actor.id,
        )
        .await?;
    }
    Ok(moved)
}

/// Moves each lot's share of `plan` from `source` to the same billing reference and expiry
/// date in `target`, journalled on both sides under `out`'s change.
async fn write_move(
    conn: &mut impl LedgerConn,
    out: &Entry<'_>,
    source: PoolId,
    target: PoolId,
    plan: Plan,
) -> CreditResult<Moved> {
    let into = Entry {
        kind: JournalKind::MoveIn,
        counterpart: Some(source),
        ..out.clone()
    };
    let mut moved = Vec::with_capacity(plan.len());
    for (lot, amount) in plan {
        let taken = Balances {
            available: amount.negated(),
            ..Balances::default()
        };
        store::apply_in(conn, &lot, &taken, out).await?;
        let destination =
            store::lot_in(conn, target, &lot.reference, lot.expires_on, out.at).await?;
        let given = Balances {
            available: amount,
            ..Balances::default()
        };
        store::apply_in(conn, &destination, &given, &into).await?;
        moved.push(MovedLotDto {
            billing_reference: BillingReferenceDto::from(&lot.reference),
            expires_at: lot.expires_on,
            credits: amount,
        });
    }
    Ok(moved)
}

fn moved_of(entries: &[JournalRow]) -> Moved {
    entries
        .iter()
        .filter(|entry| entry.kind == JournalKind::MoveOut)
        .map(|entry| MovedLotDto {
            billing_reference: BillingReferenceDto::from(&entry.reference),
            expires_at: entry.expires_on,
            credits: entry.change.available.negated(),
        })
        .collect()
}

// ---- settling, auditing ----

/// Settles `pool` if it exists (the job and reads).
pub(crate) async fn settle(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    now: DateTime<Utc>,
) -> CreditResult<()> {
    take_pool(conn, pool, now).await?;
    Ok(())
}

/// A pool's balances and the sum of its journal, at one point of its history.
pub(crate) async fn audit(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    now: DateTime<Utc>,
) -> CreditResult<(Balances, Balances)> {
    take_pool(conn, pool, now).await?;
    let balances = store::sums_in(conn, pool, Sums::Lots).await?;
    let journal = store::sums_in(conn, pool, Sums::Journal).await?;
    Ok((balances, journal))
}

/// Gives back reservations past their timeout and expires available credits past their
/// date, in a transaction holding the pool.
async fn settle_in(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    now: DateTime<Utc>,
) -> CreditResult<()> {
    if let Some(tenant) = pool.tenant() {
        let context = Resolve { actor: None, now };
        loop {
            let due = store::due_operations_in(conn, tenant, now, LOTS_PER_STEP).await?;
            let more = i64::try_from(due.len()).unwrap_or(i64::MAX) >= LOTS_PER_STEP;
            for operation in due {
                give_back(conn, &context, operation, OperationState::TimedOut).await?;
            }
            if !more {
                break;
            }
        }
    }
    let today = now.date_naive();
    loop {
        let lapsed = store::lapsed_lots_in(conn, pool, today, LOTS_PER_STEP).await?;
        let more = i64::try_from(lapsed.len()).unwrap_or(i64::MAX) >= LOTS_PER_STEP;
        let entry = Entry {
            change_id: Uuid::now_v7(),
            at: now,
            kind: JournalKind::Expire,
            actor: None,
            operation_id: None,
            sales_order_id: None,
            counterpart: None,
        };
        for lot in lapsed {
            let change = Balances {
                available: lot.balances.available.negated(),
                expired: lot.balances.available,
                ..Balances::default()
            };
            store::apply_in(conn, &lot, &change, &entry).await?;
        }
        if !more {
            return Ok(());
        }
    }
}

// ---- the steps ----

/// What resolving an operation needs to know: who (none for the settle job), and when.
struct Resolve {
    actor: Option<ActorRef>,
    now: DateTime<Utc>,
}

/// An allocation: how much of which lot.
type Plan = Vec<(LotRow, Credits)>;

/// Takes `amount` from the available lots of `pool` that `choice` allows, earliest expiry
/// first; a conflict naming what is available when they hold too little. Reads only.
async fn allocate(
    conn: &mut impl LedgerConn,
    pool: PoolId,
    today: NaiveDate,
    amount: Credits,
    choice: LotChoice<'_>,
) -> CreditResult<Plan> {
    let mut plan = Plan::new();
    let mut remaining = amount;
    let mut taken = Credits::ZERO;
    let mut after: Option<LotRow> = None;
    loop {
        let position = after.as_ref().map(|lot| (lot.expires_on, &lot.reference));
        let lots =
            store::available_lots_in(conn, pool, today, choice, position, LOTS_PER_STEP).await?;
        let last_step = i64::try_from(lots.len()).unwrap_or(i64::MAX) < LOTS_PER_STEP;
        for lot in lots {
            let share = remaining.min(lot.balances.available);
            remaining = remaining.checked_sub(share).unwrap_or(Credits::ZERO);
            taken = taken.checked_add(share).unwrap_or(taken);
            after = Some(lot.clone());
            plan.push((lot, share));
            if !remaining.is_positive() {
                return Ok(plan);
            }
        }
        if last_step {
            // Between tenants, a source that holds available credits, none of them of a
            // reference the target holds, is told so; one that holds none is short of credits.
            let unshared = choice.shared_with.is_some()
                && plan.is_empty()
                && !store::available_lots_in(
                    conn,
                    pool,
                    today,
                    LotChoice {
                        shared_with: None,
                        ..choice
                    },
                    None,
                    1,
                )
                .await?
                .is_empty();
            return Err(if unshared {
                conflict(
                    "billing-reference-mismatch",
                    "Credits move between tenants only for billing references both hold; the \
                     target holds none of the source's available credits' references."
                        .into(),
                )
            } else {
                insufficient(amount, taken)
            });
        }
    }
}

/// Writes a new operation taking `plan`: the operation, each lot's change and its share. A
/// reservation moves the credits to Reserved, a direct spend to Spent.
async fn write_operation(
    conn: &mut impl LedgerConn,
    actor: ActorRef,
    operation: &OperationRow,
    plan: Plan,
) -> CreditResult<Vec<OperationLotRow>> {
    store::insert_operation_in(conn, operation).await?;
    let reserving = operation.state == OperationState::Reserved;
    let entry = Entry {
        change_id: Uuid::now_v7(),
        at: operation.created_at,
        kind: if reserving {
            JournalKind::Reserve
        } else {
            JournalKind::Spend
        },
        actor: actor.journal(),
        operation_id: Some(&operation.operation_id),
        sales_order_id: None,
        counterpart: None,
    };
    let mut lots = Vec::with_capacity(plan.len());
    for (lot, amount) in plan {
        let (reserved, spent) = if reserving {
            (amount, Credits::ZERO)
        } else {
            (Credits::ZERO, amount)
        };
        let change = Balances {
            available: amount.negated(),
            reserved,
            spent,
            ..Balances::default()
        };
        store::apply_in(conn, &lot, &change, &entry).await?;
        store::put_operation_lot_in(conn, operation.id, lot.id, reserved, spent).await?;
        lots.push(OperationLotRow {
            lot,
            reserved,
            spent,
        });
    }
    Ok(lots)
}

/// Spends `credits` (all when `None`) of an existing reservation, or answers a retry of the
/// spend that resolved it.
async fn spend_existing(
    conn: &mut impl LedgerConn,
    context: &Resolve,
    existing: OperationRow,
    credits: Option<Credits>,
) -> CreditResult<Operation> {
    let amount = credits.unwrap_or(existing.credits);
    let resolution = serde_json::json!(["spend", amount.to_string()]).to_string();
    match existing.state {
        OperationState::Reserved if amount > existing.credits => Err(conflict(
            "exceeds-reservation",
            format!(
                "Operation '{}' reserved {} credits; it cannot spend {amount}.",
                existing.operation_id, existing.credits
            ),
        )),
        OperationState::Reserved => {
            spend_reservation(conn, context, existing, amount, resolution).await
        }
        OperationState::Spent if existing.resolution.as_deref() == Some(&resolution) => {
            let lots = store::operation_lots_in(conn, existing.id).await?;
            Ok((existing, lots))
        }
        _ => Err(resolved_already(&existing)),
    }
}

/// Spends `amount` of a reservation, earliest-expiring lots first; the rest goes back.
async fn spend_reservation(
    conn: &mut impl LedgerConn,
    context: &Resolve,
    mut operation: OperationRow,
    amount: Credits,
    resolution: String,
) -> CreditResult<Operation> {
    let lots = store::operation_lots_in(conn, operation.id).await?;
    let today = context.now.date_naive();
    let entry = Entry {
        change_id: Uuid::now_v7(),
        at: context.now,
        kind: JournalKind::Spend,
        actor: context.actor.and_then(ActorRef::journal),
        operation_id: Some(&operation.operation_id),
        sales_order_id: None,
        counterpart: None,
    };
    let mut remaining = amount;
    let mut after = Vec::with_capacity(lots.len());
    for held in lots {
        let used = remaining.min(held.reserved);
        remaining = remaining.checked_sub(used).unwrap_or(Credits::ZERO);
        let back = held.reserved.checked_sub(used).unwrap_or(Credits::ZERO);
        let mut change = Balances {
            reserved: held.reserved.negated(),
            spent: used,
            ..Balances::default()
        };
        returned_to(&mut change, &held.lot, back, today);
        if held.reserved.is_positive() {
            store::apply_in(conn, &held.lot, &change, &entry).await?;
        }
        let spent = held.spent.checked_add(used).unwrap_or(held.spent);
        store::put_operation_lot_in(conn, operation.id, held.lot.id, Credits::ZERO, spent).await?;
        after.push(OperationLotRow {
            lot: held.lot,
            reserved: Credits::ZERO,
            spent,
        });
    }
    operation.state = OperationState::Spent;
    operation.spent = amount;
    operation.resolution = Some(resolution);
    operation.resolved_at = Some(context.now);
    store::resolve_operation_in(conn, &operation, context.actor.map(|actor| actor.id)).await?;
    Ok((operation, after))
}

/// Gives all of a reservation's credits back (release, or timeout by the settle step).
async fn give_back(
    conn: &mut impl LedgerConn,
    context: &Resolve,
    mut operation: OperationRow,
    state: OperationState,
) -> CreditResult<Operation> {
    let kind = if state == OperationState::TimedOut {
        JournalKind::Timeout
    } else {
        JournalKind::Release
    };
    let lots = store::operation_lots_in(conn, operation.id).await?;
    let today = context.now.date_naive();
    let entry = Entry {
        change_id: Uuid::now_v7(),
        at: context.now,
        kind,
        actor: context.actor.and_then(ActorRef::journal),
        operation_id: Some(&operation.operation_id),
        sales_order_id: None,
        counterpart: None,
    };
    let mut after = Vec::with_capacity(lots.len());
    for held in lots {
        if held.reserved.is_positive() {
            let mut change = Balances {
                reserved: held.reserved.negated(),
                ..Balances::default()
            };
            returned_to(&mut change, &held.lot, held.reserved, today);
            store::apply_in(conn, &held.lot, &change, &entry).await?;
            store::put_operation_lot_in(conn, operation.id, held.lot.id, Credits::ZERO, held.spent)
                .await?;
        }
        after.push(OperationLotRow {
            reserved: Credits::ZERO,
            ..held
        });
    }
    operation.state = state;
    operation.resolution = Some(serde_json::json!([state.as_str()]).to_string());
    operation.resolved_at = Some(context.now);
    store::resolve_operation_in(conn, &operation, context.actor.map(|actor| actor.id)).await?;
    Ok((operation, after))
}

/// Credits a reservation gives back return to Available, or to Expired when their lot's date
/// passed while they were reserved.
fn returned_to(change: &mut Balances, lot: &LotRow, amount: Credits, today: NaiveDate) {
    if lot.is_expired(today) {
        change.expired = amount;
    } else {
        change.available = amount;
    }
}

// ---- errors ----

pub(crate) fn conflict(kind: &'static str, detail: String) -> CreditError {
    CreditError::Conflict { kind, detail }
}

pub(crate) fn insufficient(wanted: Credits, available: Credits) -> CreditError {
    conflict(
        "insufficient-credits",
        format!("{wanted} credits were asked for; {available} are available."),
    )
}

fn operation_conflict(operation_id: &str) -> CreditError {
    conflict(
        "operation-conflict",
        format!("Operation '{operation_id}' exists already with another request."),
    )
}

fn resolved_already(operation: &OperationRow) -> CreditError {
    conflict(
        "operation-resolved",
        format!(
            "Operation '{}' is {} already; a reservation resolves once.",
            operation.operation_id, operation.state
        ),
    )
}

//! The credit ledger of docs/credits.md written a second time, as plainly as possible, in
//! memory: integer micro-credits, lots keyed by pool, billing reference and expiry date, and
//! every request answered with the status the document promises. The property test runs the
//! same requests against the HTTP API and against this ledger and compares the two after every
//! step, so this file is the reading of the document the server is held to.
//!
//! Readings of points the document leaves open (each also what the server does):
//! - A partial spend spends its lots earliest expiry first; the rest of each lot goes back.
//! - "The target holds a reference" means it has a lot of it, whatever its amounts (a lot
//!   whose credits all moved out still counts, and is still listed in the details).
//! - Between two tenants, a move from a source that holds available credits (within the
//!   optional `billingReference`), none of a reference the target holds, is
//!   `billing-reference-mismatch`; one that finds some but too few, or a source without
//!   available credits, is `insufficient-credits`.
//! - Operations made at the same instant are listed newest first in the order they were made.
//! - Settling is done the moment the clock moves; the server settles a pool lazily (first
//!   thing in every request that touches it, and in a job), which gives the same amounts
//!   because nothing can happen to a pool in between.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};

/// Micro-credits: 1 credit is 1,000,000.
pub type Micros = i64;

/// Micro-credits per credit.
pub const MICROS_PER_CREDIT: Micros = 1_000_000;

/// A pool: the generic (unassigned) one, or the pool of the n-th tenant of the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pool {
    Generic,
    Tenant(usize),
}

/// A billing reference; absent parts are empty. Derived `Ord` compares reference, then tag,
/// then type, each in byte order: the order the document gives to lots of one date.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reference {
    pub reference: String,
    pub tag: String,
    pub kind: String,
}

/// A lot within its pool. Derived `Ord` is the order lots are used and listed in: earliest
/// expiry first, then by billing reference.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LotKey {
    pub expires: NaiveDate,
    pub reference: Reference,
}

/// Credits by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Amounts {
    pub available: Micros,
    pub reserved: Micros,
    pub spent: Micros,
    pub expired: Micros,
}

impl Amounts {
    /// All four statuses together.
    pub fn total(&self) -> Micros {
        self.available + self.reserved + self.spent + self.expired
    }

    /// Adds `other` status by status.
    pub fn add(&mut self, other: &Amounts) {
        self.available += other.available;
        self.reserved += other.reserved;
        self.spent += other.spent;
        self.expired += other.expired;
    }

    /// Whether any status is below zero.
    pub fn has_negative(&self) -> bool {
        [self.available, self.reserved, self.spent, self.expired]
            .iter()
            .any(|amount| *amount < 0)
    }
}

/// Where an operation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpState {
    Reserved,
    Spent,
    Released,
    TimedOut,
}

impl OpState {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Reserved => "Reserved",
            Self::Spent => "Spent",
            Self::Released => "Released",
            Self::TimedOut => "TimedOut",
        }
    }
}

/// What an operation holds and spent of one lot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Share {
    pub reserved: Micros,
    pub spent: Micros,
}

/// A reservation or a direct spend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub direct: bool,
    pub state: OpState,
    pub credits: Micros,
    pub spent: Micros,
    /// The timeout the reservation asked for (none for absent or 0): part of its identity.
    pub timeout: Option<u64>,
    pub timeout_at: Option<DateTime<Utc>>,
    /// The amount of the spend that resolved a reservation: its retry must name the same.
    pub spent_by_request: Option<Micros>,
    pub lots: BTreeMap<LotKey, Share>,
}

/// A request, with every value it carries resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Add {
        pool: Pool,
        reference: Reference,
        expires: NaiveDate,
        amount: Micros,
        order: Option<String>,
    },
    Reserve {
        tenant: usize,
        op: String,
        amount: Micros,
        /// `None`: no `timeoutSeconds`; `Some(0)`: explicitly none.
        timeout: Option<u64>,
    },
    Spend {
        tenant: usize,
        op: String,
        /// `None`: all of the reservation.
        amount: Option<Micros>,
    },
    DirectSpend {
        tenant: usize,
        op: String,
        amount: Micros,
    },
    Release {
        tenant: usize,
        op: String,
    },
    Move {
        source: Pool,
        target: Pool,
        amount: Micros,
        reference: Option<Reference>,
        key: Option<String>,
    },
}

impl Action {
    /// Whether sending the request again must answer as the first time and change nothing
    /// (when the first time succeeded): adds with a sales order, everything on an operation,
    /// moves with an idempotency key.
    pub fn is_keyed(&self) -> bool {
        match self {
            Self::Add { order, .. } => order.is_some(),
            Self::Move { key, .. } => key.is_some(),
            Self::Reserve { .. }
            | Self::Spend { .. }
            | Self::DirectSpend { .. }
            | Self::Release { .. } => true,
        }
    }
}

/// An operation as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationView {
    pub state: &'static str,
    pub direct: bool,
    pub credits: Micros,
    pub reserved: Micros,
    pub spent: Micros,
    pub returned: Micros,
    pub has_timeout: bool,
    pub lots: Vec<(LotKey, Share)>,
}

/// What a move took from one lot of its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedLot {
    pub key: LotKey,
    pub credits: Micros,
}

/// A successful answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Added { amount: Micros },
    Operation(OperationView),
    Moved { amount: Micros, lots: Vec<MovedLot> },
}

/// A refused request: the status and problem type the document gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub kind: &'static str,
}

/// What a request must answer.
pub type Outcome = Result<Answer, Refusal>;

fn refuse(status: u16, kind: &'static str) -> Outcome {
    Err(Refusal { status, kind })
}

/// A lot as the details show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LotView {
    pub key: LotKey,
    pub is_expired: bool,
    pub amounts: Amounts,
}

/// A pool as the breakdown and the details show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolView {
    pub totals: Amounts,
    pub lots: Vec<LotView>,
}

/// The body of an add, which a sales order id must keep.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AddBody {
    pool: Pool,
    reference: Reference,
    expires: NaiveDate,
    amount: Micros,
}

/// The body of a move, which an idempotency key must keep.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MoveBody {
    source: Pool,
    target: Pool,
    amount: Micros,
    reference: Option<Reference>,
}

/// The whole ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    now: DateTime<Utc>,
    tenants: usize,
    timeout_max: u64,
    lots: BTreeMap<Pool, BTreeMap<LotKey, Amounts>>,
    operations: BTreeMap<(usize, String), Operation>,
    /// Operation ids in the order they were made.
    made: Vec<(usize, String)>,
    orders: BTreeMap<String, AddBody>,
    moves: BTreeMap<String, (MoveBody, Vec<MovedLot>)>,
    added: BTreeMap<Reference, Micros>,
    /// How often rarer paths were taken, to show what a run covered.
    events: BTreeMap<&'static str, u64>,
}

impl Ledger {
    /// An empty ledger of `tenants` tenants and the generic pool, at `now`.
    pub fn new(now: DateTime<Utc>, tenants: usize, timeout_max: u64) -> Self {
        Self {
            now,
            tenants,
            timeout_max,
            lots: BTreeMap::new(),
            operations: BTreeMap::new(),
            made: Vec::new(),
            orders: BTreeMap::new(),
            moves: BTreeMap::new(),
            added: BTreeMap::new(),
            events: BTreeMap::new(),
        }
    }

    /// How often rarer paths were taken (see [`Self::count`]).
    pub fn events(&self) -> &BTreeMap<&'static str, u64> {
        &self.events
    }

    fn count(&mut self, event: &'static str) {
        *self.events.entry(event).or_default() += 1;
    }

    /// The last day credits may still be used is today or later.
    pub fn today(&self) -> NaiveDate {
        self.now.date_naive()
    }

    /// Every pool: the generic one first, then the tenants'.
    pub fn pools(&self) -> Vec<Pool> {
        std::iter::once(Pool::Generic)
            .chain((0..self.tenants).map(Pool::Tenant))
            .collect()
    }

    /// Credits added per billing reference: what every status of every pool must add up to.
    pub fn added(&self) -> &BTreeMap<Reference, Micros> {
        &self.added
    }

    /// The operations, by tenant and operation id.
    pub fn operations(&self) -> &BTreeMap<(usize, String), Operation> {
        &self.operations
    }

    /// The operation `op` of `tenant`.
    pub fn operation(&self, tenant: usize, op: &str) -> Option<&Operation> {
        self.operations.get(&(tenant, op.to_owned()))
    }

    /// The `nth` most recently made operation (0: the last), by tenant and id; with
    /// `reserved`, among those still holding credits.
    pub fn recent_operation(&self, nth: usize, reserved: bool) -> Option<(usize, String)> {
        self.made
            .iter()
            .rev()
            .filter(|id| !reserved || self.operations[*id].state == OpState::Reserved)
            .nth(nth)
            .cloned()
    }

    /// The operations that hold or spent credits of a tenant's lot, newest first: what the
    /// extended details list, as (operation id, state, its share of the lot).
    pub fn lot_operations(
        &self,
        tenant: usize,
        key: &LotKey,
    ) -> Vec<(String, &'static str, Share)> {
        self.made
            .iter()
            .rev()
            .filter(|(owner, _)| *owner == tenant)
            .filter_map(|id| {
                let op = &self.operations[id];
                let share = op.lots.get(key)?;
                (share.reserved > 0 || share.spent > 0)
                    .then(|| (id.1.clone(), op.state.name(), *share))
            })
            .collect()
    }

    /// Moves the clock to `now` and settles what became due.
    pub fn advance_to(&mut self, now: DateTime<Utc>) {
        self.now = now;
        self.settle();
    }

    /// Reservations past their timeout give their credits back, then available credits past
    /// their date expire.
    fn settle(&mut self) {
        let due: Vec<(usize, String)> = self
            .operations
            .iter()
            .filter(|(_, op)| {
                op.state == OpState::Reserved && op.timeout_at.is_some_and(|at| at <= self.now)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for (tenant, op) in due {
            self.give_back(tenant, &op, OpState::TimedOut);
            self.count("reservation timed out");
        }
        let today = self.today();
        let mut lapsed = 0;
        for lot in self.lots.values_mut().flat_map(BTreeMap::iter_mut) {
            if lot.0.expires < today && lot.1.available > 0 {
                lot.1.expired += lot.1.available;
                lot.1.available = 0;
                lapsed += 1;
            }
        }
        for _ in 0..lapsed {
            self.count("available credits of a lot expired");
        }
    }

    /// What `action` answers; applies it when it succeeds.
    pub fn apply(&mut self, action: &Action) -> Outcome {
        self.settle();
        match action.clone() {
            Action::Add {
                pool,
                reference,
                expires,
                amount,
                order,
            } => self.add(
                AddBody {
                    pool,
                    reference,
                    expires,
                    amount,
                },
                order,
            ),
            Action::Reserve {
                tenant,
                op,
                amount,
                timeout,
            } => self.reserve(tenant, op, amount, timeout),
            Action::Spend { tenant, op, amount } => self.spend(tenant, &op, amount),
            Action::DirectSpend { tenant, op, amount } => self.spend_directly(tenant, op, amount),
            Action::Release { tenant, op } => self.release(tenant, &op),
            Action::Move {
                source,
                target,
                amount,
                reference,
                key,
            } => self.move_credits(
                MoveBody {
                    source,
                    target,
                    amount,
                    reference,
                },
                key,
            ),
        }
    }

    fn add(&mut self, body: AddBody, order: Option<String>) -> Outcome {
        if let Some(order) = &order
            && let Some(first) = self.orders.get(order)
        {
            return if *first == body {
                Ok(Answer::Added {
                    amount: body.amount,
                })
            } else {
                refuse(409, "sales-order-conflict")
            };
        }
        if body.expires < self.today() {
            return refuse(400, "validation");
        }
        let key = LotKey {
            expires: body.expires,
            reference: body.reference.clone(),
        };
        self.lot_mut(body.pool, &key).available += body.amount;
        *self.added.entry(body.reference.clone()).or_default() += body.amount;
        let amount = body.amount;
        if let Some(order) = order {
            self.orders.insert(order, body);
        }
        Ok(Answer::Added { amount })
    }

    fn reserve(&mut self, tenant: usize, op: String, amount: Micros, ask: Option<u64>) -> Outcome {
        if ask.is_some_and(|seconds| seconds > self.timeout_max) {
            return refuse(400, "validation");
        }
        let timeout = ask.filter(|seconds| *seconds > 0);
        let id = (tenant, op);
        if let Some(existing) = self.operations.get(&id) {
            return if existing.direct || existing.credits != amount || existing.timeout != timeout {
                refuse(409, "operation-conflict")
            } else {
                Ok(Answer::Operation(view_of(existing)))
            };
        }
        let Ok(plan) = self.allocate(Pool::Tenant(tenant), amount, |_| true) else {
            return refuse(409, "insufficient-credits");
        };
        let mut lots = BTreeMap::new();
        for (key, share) in plan {
            let lot = self.lot_mut(Pool::Tenant(tenant), &key);
            lot.available -= share;
            lot.reserved += share;
            lots.insert(
                key,
                Share {
                    reserved: share,
                    spent: 0,
                },
            );
        }
        let timeout_at = timeout.map(|seconds| {
            self.now + chrono::TimeDelta::seconds(i64::try_from(seconds).unwrap_or(i64::MAX))
        });
        let operation = Operation {
            direct: false,
            state: OpState::Reserved,
            credits: amount,
            spent: 0,
            timeout,
            timeout_at,
            spent_by_request: None,
            lots,
        };
        let view = view_of(&operation);
        self.made.push(id.clone());
        self.operations.insert(id, operation);
        Ok(Answer::Operation(view))
    }

    fn spend(&mut self, tenant: usize, op: &str, amount: Option<Micros>) -> Outcome {
        let Some(existing) = self.operation(tenant, op).cloned() else {
            return refuse(404, "not-found");
        };
        if existing.direct {
            return refuse(409, "operation-conflict");
        }
        let amount = amount.unwrap_or(existing.credits);
        match existing.state {
            OpState::Reserved if amount > existing.credits => refuse(409, "exceeds-reservation"),
            OpState::Reserved => Ok(Answer::Operation(
                self.spend_reservation(tenant, op, amount),
            )),
            OpState::Spent if existing.spent_by_request == Some(amount) => {
                Ok(Answer::Operation(view_of(&existing)))
            }
            _ => refuse(409, "operation-resolved"),
        }
    }

    /// Spends `amount` of a reservation, its earliest-expiring lots first; the rest of each
    /// lot goes back to Available, or to Expired when the lot's date has passed.
    fn spend_reservation(&mut self, tenant: usize, op: &str, amount: Micros) -> OperationView {
        let today = self.today();
        let id = (tenant, op.to_owned());
        let mut operation = self
            .operations
            .remove(&id)
            .expect("the model resolves only operations it found");
        let mut remaining = amount;
        let mut expired_back = false;
        for (key, share) in &mut operation.lots {
            let used = remaining.min(share.reserved);
            remaining -= used;
            let back = share.reserved - used;
            let lot = self.lot_mut(Pool::Tenant(tenant), key);
            lot.reserved -= share.reserved;
            lot.spent += used;
            expired_back |= give_to(lot, key, back, today);
            share.reserved = 0;
            share.spent += used;
        }
        if expired_back {
            self.count("a partial spend gave back to Expired");
        }
        operation.state = OpState::Spent;
        operation.spent = amount;
        operation.spent_by_request = Some(amount);
        let view = view_of(&operation);
        self.operations.insert(id, operation);
        view
    }

    fn spend_directly(&mut self, tenant: usize, op: String, amount: Micros) -> Outcome {
        let id = (tenant, op);
        if let Some(existing) = self.operations.get(&id) {
            return if existing.direct && existing.credits == amount {
                Ok(Answer::Operation(view_of(existing)))
            } else {
                refuse(409, "operation-conflict")
            };
        }
        let Ok(plan) = self.allocate(Pool::Tenant(tenant), amount, |_| true) else {
            return refuse(409, "insufficient-credits");
        };
        let mut lots = BTreeMap::new();
        for (key, share) in plan {
            let lot = self.lot_mut(Pool::Tenant(tenant), &key);
            lot.available -= share;
            lot.spent += share;
            lots.insert(
                key,
                Share {
                    reserved: 0,
                    spent: share,
                },
            );
        }
        let operation = Operation {
            direct: true,
            state: OpState::Spent,
            credits: amount,
            spent: amount,
            timeout: None,
            timeout_at: None,
            spent_by_request: Some(amount),
            lots,
        };
        let view = view_of(&operation);
        self.made.push(id.clone());
        self.operations.insert(id, operation);
        Ok(Answer::Operation(view))
    }

    fn release(&mut self, tenant: usize, op: &str) -> Outcome {
        let Some(existing) = self.operation(tenant, op) else {
            return refuse(404, "not-found");
        };
        match existing.state {
            OpState::Reserved if !existing.direct => Ok(Answer::Operation(self.give_back(
                tenant,
                op,
                OpState::Released,
            ))),
            OpState::Released => Ok(Answer::Operation(view_of(existing))),
            _ => refuse(409, "operation-resolved"),
        }
    }

    /// Gives all a reservation holds back (release or timeout).
    fn give_back(&mut self, tenant: usize, op: &str, state: OpState) -> OperationView {
        let today = self.today();
        let id = (tenant, op.to_owned());
        let mut operation = self
            .operations
            .remove(&id)
            .expect("the model resolves only operations it found");
        let mut expired_back = false;
        for (key, share) in &mut operation.lots {
            let lot = self.lot_mut(Pool::Tenant(tenant), key);
            lot.reserved -= share.reserved;
            expired_back |= give_to(lot, key, share.reserved, today);
            share.reserved = 0;
        }
        if expired_back {
            self.count("a release or timeout gave back to Expired");
        }
        operation.state = state;
        let view = view_of(&operation);
        self.operations.insert(id, operation);
        view
    }

    fn move_credits(&mut self, body: MoveBody, key: Option<String>) -> Outcome {
        if body.source == body.target {
            return refuse(400, "validation");
        }
        if let Some(key) = &key
            && let Some((first, lots)) = self.moves.get(key)
        {
            return if *first == body {
                Ok(Answer::Moved {
                    amount: body.amount,
                    lots: lots.clone(),
                })
            } else {
                refuse(409, "idempotency-conflict")
            };
        }
        let between_tenants = matches!(
            (body.source, body.target),
            (Pool::Tenant(_), Pool::Tenant(_))
        );
        let target_references: Vec<Reference> = self
            .lots
            .get(&body.target)
            .map(|lots| lots.keys().map(|key| key.reference.clone()).collect())
            .unwrap_or_default();
        let allowed = |lot: &LotKey| {
            body.reference
                .as_ref()
                .is_none_or(|only| *only == lot.reference)
                && (!between_tenants || target_references.contains(&lot.reference))
        };
        let plan = match self.allocate(body.source, body.amount, allowed) {
            Ok(plan) => plan,
            // The source holds available credits (of the asked reference), none shared.
            Err(0)
                if between_tenants
                    && self
                        .allocate(body.source, 1, |lot: &LotKey| {
                            body.reference
                                .as_ref()
                                .is_none_or(|only| *only == lot.reference)
                        })
                        .is_ok() =>
            {
                return refuse(409, "billing-reference-mismatch");
            }
            Err(_) => return refuse(409, "insufficient-credits"),
        };
        let mut moved = Vec::with_capacity(plan.len());
        for (lot_key, share) in plan {
            self.lot_mut(body.source, &lot_key).available -= share;
            self.lot_mut(body.target, &lot_key).available += share;
            moved.push(MovedLot {
                key: lot_key,
                credits: share,
            });
        }
        let amount = body.amount;
        if let Some(key) = key {
            self.moves.insert(key, (body, moved.clone()));
        }
        Ok(Answer::Moved {
            amount,
            lots: moved,
        })
    }

    /// Takes `amount` from the available lots of `pool` that `allowed` admits, earliest first;
    /// or how much they hold in all, when too little.
    fn allocate(
        &self,
        pool: Pool,
        amount: Micros,
        allowed: impl Fn(&LotKey) -> bool,
    ) -> Result<Vec<(LotKey, Micros)>, Micros> {
        let mut plan = Vec::new();
        let mut remaining = amount;
        let mut found = 0;
        let today = self.today();
        for (key, lot) in self.lots.get(&pool).into_iter().flatten() {
            if lot.available == 0 || key.expires < today || !allowed(key) {
                continue;
            }
            let share = remaining.min(lot.available);
            found += lot.available;
            plan.push((key.clone(), share));
            remaining -= share;
            if remaining == 0 {
                return Ok(plan);
            }
        }
        Err(found)
    }

    fn lot_mut(&mut self, pool: Pool, key: &LotKey) -> &mut Amounts {
        self.lots
            .entry(pool)
            .or_default()
            .entry(key.clone())
            .or_default()
    }

    /// `pool` as the breakdown and details must show it.
    pub fn view(&self, pool: Pool) -> PoolView {
        let today = self.today();
        let mut totals = Amounts::default();
        let lots = self
            .lots
            .get(&pool)
            .into_iter()
            .flatten()
            .map(|(key, amounts)| {
                totals.add(amounts);
                LotView {
                    key: key.clone(),
                    is_expired: key.expires < today,
                    amounts: *amounts,
                }
            })
            .collect();
        PoolView { totals, lots }
    }

    /// The ledger's own invariants: no amount below zero; every reserved credit held by
    /// exactly one reservation; every credit of a reference somewhere. A failure here is a
    /// mistake in this file, not in the server.
    pub fn self_check(&self) -> Result<(), String> {
        let mut held: BTreeMap<(Pool, LotKey), Micros> = BTreeMap::new();
        for ((tenant, id), op) in &self.operations {
            let reserved: Micros = op.lots.values().map(|share| share.reserved).sum();
            let spent: Micros = op.lots.values().map(|share| share.spent).sum();
            let in_reserve = op.state == OpState::Reserved;
            if spent != op.spent || (in_reserve && reserved != op.credits) {
                return Err(format!(
                    "model: operation {tenant}/{id} adds up wrong: {op:?}"
                ));
            }
            for (key, share) in &op.lots {
                *held
                    .entry((Pool::Tenant(*tenant), key.clone()))
                    .or_default() += share.reserved;
            }
        }
        let mut totals: BTreeMap<Reference, Micros> = BTreeMap::new();
        for (pool, lots) in &self.lots {
            for (key, amounts) in lots {
                let holds = held.get(&(*pool, key.clone())).copied().unwrap_or(0);
                if amounts.has_negative() || amounts.reserved != holds {
                    return Err(format!("model: lot {pool:?} {key:?} is {amounts:?}"));
                }
                *totals.entry(key.reference.clone()).or_default() += amounts.total();
            }
        }
        if totals != self.added {
            return Err(format!(
                "model: totals {totals:?} differ from added {:?}",
                self.added
            ));
        }
        Ok(())
    }
}

/// Credits a reservation gives back go to Available, or to Expired once the lot's date passed;
/// whether some went to Expired.
fn give_to(lot: &mut Amounts, key: &LotKey, amount: Micros, today: NaiveDate) -> bool {
    if key.expires < today {
        lot.expired += amount;
        amount > 0
    } else {
        lot.available += amount;
        false
    }
}

/// An operation as the API shows it.
pub fn view_of(op: &Operation) -> OperationView {
    let reserved = op.lots.values().map(|share| share.reserved).sum::<Micros>();
    OperationView {
        state: op.state.name(),
        direct: op.direct,
        credits: op.credits,
        reserved,
        spent: op.spent,
        returned: op.credits - op.spent - reserved,
        has_timeout: op.timeout_at.is_some(),
        lots: op
            .lots
            .iter()
            .map(|(key, share)| (key.clone(), *share))
            .collect(),
    }
}

//! What the property test generates: a sequence of steps, each a request to the ledger or a
//! jump of the clock, and how a step becomes a concrete request (an [`Action`] for the model,
//! a [`WireRequest`] for the API).
//!
//! Steps carry small indexes (tenant, operation id, billing reference, sales order, key) into
//! fixed tables so that random sequences collide on ids and references often: retries, reuse of
//! an id with another body, moves between tenants that do or do not share a reference. Amounts
//! of partial spends are fractions of the reservation, so that a sequence keeps its meaning
//! while proptest shrinks it (it removes steps and shrinks the numbers in them).

use chrono::{NaiveDate, TimeDelta};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::{NewTree, ValueTree};
use proptest::test_runner::TestRunner;
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use super::ledger::{Action, Ledger, MICROS_PER_CREDIT, Micros, Pool, Reference};
use crate::helpers::routes;

/// Tenants in a case: the bootstrap tenant and two more.
pub const TENANTS: usize = 3;

/// Billing references, chosen so that their byte order is not their alphabetical order
/// (`B` before `a`, `Tag` before `tag`, `Ü` after everything), and that lots of one date tie
/// on the reference and differ by tag, by type, or by both in opposite orders (`Tag`/`INT`
/// comes before `tag`/`EXT` only when the tag is compared before the type).
const REFERENCES: [(&str, &str, &str); 6] = [
    ("a-100", "tag", "EXT"),
    ("B-200", "", ""),
    ("a-100", "tag", "INT"),
    ("a-100", "Tag", "INT"),
    ("a-100", "", ""),
    ("Ü-300", "", "EXT"),
];

/// Expiry dates, in days from the clock's today when the add is sent (-1: already past, 400).
/// A case moves the clock by days, so the short ones expire within it and the long ones last.
const EXPIRY_OFFSETS: [i64; 8] = [0, 1, 2, 5, 30, 30, 365, -1];

/// One step of a case.
#[derive(Debug, Clone)]
pub enum Step {
    /// `POST /api/iam/credit`; `pool` 0 is the generic pool, 1.. the tenants.
    Add {
        pool: u8,
        reference: u8,
        expiry: u8,
        amount: Micros,
        order: Option<u8>,
    },
    /// `PUT .../reserve`; `timeout` `None` sends no `timeoutSeconds`.
    Reserve {
        tenant: u8,
        op: u8,
        amount: Micros,
        timeout: Option<u64>,
    },
    /// `PUT .../spend` without `credits`: all of the reservation.
    SpendAll { op: OpRef },
    /// `PUT .../spend` of `permille`/1000 of the reservation (at least one micro-credit).
    SpendPart { op: OpRef, permille: u16 },
    /// `PUT .../spend` of `extra` more than the reservation.
    SpendMore { op: OpRef, extra: Micros },
    /// `PUT .../spend` with `direct: true`.
    DirectSpend { tenant: u8, op: u8, amount: Micros },
    /// `PUT .../release`.
    Release { op: OpRef },
    /// `PUT .../move`; pools as for `Add`, `target` counted on from `source`.
    Move {
        source: u8,
        target_offset: u8,
        amount: Micros,
        reference: Option<u8>,
        key: Option<u8>,
    },
    /// The same request as an earlier keyed one (see [`Action::is_keyed`]): one that
    /// succeeded, or one that was refused (any, when there is none of the kind).
    Retry { success: bool, which: Index },
    /// Moves the clock on.
    Clock(Jump),
}

/// Which operation a spend or release names.
#[derive(Debug, Clone, Copy)]
pub enum OpRef {
    /// The n-th most recently made reservation still holding credits (any tenant); when there
    /// are fewer, as `Recent`.
    Holding(u8),
    /// The n-th most recently made operation (any tenant, reserved or spent directly); when
    /// there are fewer, the operation id `op-n` of the n-th tenant.
    Recent(u8),
    /// An operation id of a tenant, whether or not it exists.
    Named { tenant: u8, op: u8 },
}

/// How far the clock moves.
#[derive(Debug, Clone, Copy)]
pub enum Jump {
    Minutes(u16),
    Hours(u8),
    Days(u8),
}

impl Jump {
    pub fn delta(self) -> TimeDelta {
        match self {
            Self::Minutes(minutes) => TimeDelta::minutes(i64::from(minutes)),
            Self::Hours(hours) => TimeDelta::hours(i64::from(hours)),
            Self::Days(days) => TimeDelta::days(i64::from(days)),
        }
    }
}

/// An amount up to `credits`: tiny (a few micro-credits), any with six places, or whole;
/// tiny ones `tiny` times in ten.
fn amount_up_to(credits: i64, tiny: u32) -> impl Strategy<Value = Micros> {
    prop_oneof![
        tiny => 1..=20_i64,
        5 => 1..=credits * MICROS_PER_CREDIT,
        5 - tiny => (1..=credits).prop_map(|credits| credits * MICROS_PER_CREDIT),
    ]
}

/// An amount to reserve, spend or move: up to 8 credits, a small part of a typical add.
fn amount() -> impl Strategy<Value = Micros> {
    amount_up_to(8, 2)
}

/// A timeout: explicitly none, minutes to a day, or one over the 90-day maximum (400).
fn timeout() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        8 => Just(None),
        2 => Just(Some(0)),
        9 => (60..=26 * 3600_u64).prop_map(Some),
        1 => Just(Some(TIMEOUT_MAX_SECONDS + 1)),
    ]
}

/// The server's default `credits.reservation_timeout_max_seconds`.
pub const TIMEOUT_MAX_SECONDS: u64 = 90 * 24 * 3600;

/// A billing reference, the first four more often so that tenants share some and lots tie on
/// the reference.
fn reference() -> impl Strategy<Value = u8> {
    prop_oneof![3 => Just(0_u8), 2 => Just(1_u8), 2 => Just(2_u8), 2 => Just(3_u8), 1 => 4..6_u8]
}

fn tenant() -> impl Strategy<Value = u8> {
    0..3_u8
}

fn op() -> impl Strategy<Value = u8> {
    0..4_u8
}

/// Mostly an operation that exists, so that spends and releases find one.
fn op_ref() -> impl Strategy<Value = OpRef> {
    prop_oneof![
        3 => (0..3_u8).prop_map(OpRef::Holding),
        2 => (0..3_u8).prop_map(OpRef::Recent),
        1 => (tenant(), op()).prop_map(|(tenant, op)| OpRef::Named { tenant, op }),
    ]
}

fn add() -> impl Strategy<Value = Step> {
    (
        0..=3_u8,
        reference(),
        0..8_u8,
        amount_up_to(200, 1),
        proptest::option::weighted(0.5, 0..8_u8),
    )
        .prop_map(|(pool, reference, expiry, amount, order)| Step::Add {
            pool,
            reference,
            expiry,
            amount,
            order,
        })
}

fn move_step() -> impl Strategy<Value = Step> {
    let target_offset = prop_oneof![1 => Just(0_u8), 12 => 1..=3_u8];
    (
        0..=3_u8,
        target_offset,
        amount(),
        proptest::option::weighted(0.3, reference()),
        proptest::option::weighted(0.6, 0..4_u8),
    )
        .prop_map(
            |(source, target_offset, amount, reference, key)| Step::Move {
                source,
                target_offset,
                amount,
                reference,
                key,
            },
        )
}

fn jump() -> impl Strategy<Value = Jump> {
    prop_oneof![
        (1..=120_u16).prop_map(Jump::Minutes),
        (1..=30_u8).prop_map(Jump::Hours),
        (1..=3_u8).prop_map(Jump::Days),
    ]
}

/// One step, requests weighted roughly as a billing system would send them.
pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        7 => add(),
        5 => (tenant(), op(), amount(), timeout())
            .prop_map(|(tenant, op, amount, timeout)| Step::Reserve { tenant, op, amount, timeout }),
        2 => op_ref().prop_map(|op| Step::SpendAll { op }),
        3 => (op_ref(), 1..1000_u16).prop_map(|(op, permille)| Step::SpendPart { op, permille }),
        1 => (op_ref(), amount()).prop_map(|(op, extra)| Step::SpendMore { op, extra }),
        2 => (tenant(), op(), amount())
            .prop_map(|(tenant, op, amount)| Step::DirectSpend { tenant, op, amount }),
        2 => op_ref().prop_map(|op| Step::Release { op }),
        3 => move_step(),
        3 => (proptest::bool::weighted(0.75), any::<Index>())
            .prop_map(|(success, which)| Step::Retry { success, which }),
        4 => jump().prop_map(Step::Clock),
    ]
}

/// Steps a case opens with that are adds, so that most cases have credits to use early.
const OPENING_ADDS: usize = 3;

/// A case: 20 to 60 steps, the first [`OPENING_ADDS`] of them adds, shrinking down to a
/// single step.
///
/// `proptest::collection::vec(step(), 20..=60)` would never shrink below 20 steps, so a
/// failure would be reported with 20 steps of which most do not matter. This strategy
/// generates the same, and shrinks as `vec` does (drops each step in turn, keeping the drop
/// when the case still fails, and again while a pass drops some; then simplifies each
/// remaining step) without that floor.
#[derive(Debug, Clone, Copy)]
pub struct Steps;

impl Strategy for Steps {
    type Tree = StepsTree;
    type Value = Vec<Step>;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let length = (20..=60_usize).new_tree(runner)?.current();
        let (opening, step) = (add().boxed(), step().boxed());
        let elements = (0..length)
            .map(|index| {
                if index < OPENING_ADDS {
                    opening.new_tree(runner)
                } else {
                    step.new_tree(runner)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(StepsTree {
            included: vec![true; elements.len()],
            elements,
            phase: Phase::Drop(0),
            last: None,
            dropped_in_pass: false,
        })
    }
}

/// Where the shrinking of [`Steps`] is.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Trying to drop the step at this index.
    Drop(usize),
    /// Simplifying the step at this index.
    Simplify(usize),
}

/// The value tree of [`Steps`].
pub struct StepsTree {
    elements: Vec<BoxedValueTree<Step>>,
    included: Vec<bool>,
    phase: Phase,
    /// The last change, which `complicate` undoes.
    last: Option<Phase>,
    /// Whether the current pass dropped a step for good: then another pass may drop more.
    dropped_in_pass: bool,
}

impl std::fmt::Debug for StepsTree {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("StepsTree")
            .field("steps", &self.current())
            .finish_non_exhaustive()
    }
}

type BoxedValueTree<T> = Box<dyn ValueTree<Value = T>>;

impl ValueTree for StepsTree {
    type Value = Vec<Step>;

    fn current(&self) -> Vec<Step> {
        self.elements
            .iter()
            .zip(&self.included)
            .filter(|(_, included)| **included)
            .map(|(element, _)| element.current())
            .collect()
    }

    fn simplify(&mut self) -> bool {
        if let Some(Phase::Drop(_)) = self.last.take() {
            // Not undone by `complicate`: the case still failed without that step.
            self.dropped_in_pass = true;
        }
        loop {
            match self.phase {
                Phase::Drop(index) if index < self.elements.len() => {
                    self.phase = Phase::Drop(index + 1);
                    if self.included[index] {
                        self.included[index] = false;
                        self.last = Some(Phase::Drop(index));
                        return true;
                    }
                }
                Phase::Drop(_) if std::mem::take(&mut self.dropped_in_pass) => {
                    self.phase = Phase::Drop(0);
                }
                Phase::Drop(_) => self.phase = Phase::Simplify(0),
                Phase::Simplify(index) if index < self.elements.len() => {
                    if self.included[index] && self.elements[index].simplify() {
                        self.last = Some(Phase::Simplify(index));
                        return true;
                    }
                    self.phase = Phase::Simplify(index + 1);
                }
                Phase::Simplify(_) => return false,
            }
        }
    }

    fn complicate(&mut self) -> bool {
        match self.last.take() {
            Some(Phase::Drop(index)) => {
                self.included[index] = true;
                true
            }
            Some(Phase::Simplify(index)) => {
                let changed = self.elements[index].complicate();
                if changed {
                    self.last = Some(Phase::Simplify(index));
                }
                changed
            }
            None => false,
        }
    }
}

fn pool_of(index: u8) -> Pool {
    match index {
        0 => Pool::Generic,
        tenant => Pool::Tenant(usize::from(tenant - 1) % TENANTS),
    }
}

fn reference_of(index: u8) -> Reference {
    let (reference, tag, kind) = REFERENCES[usize::from(index) % REFERENCES.len()];
    Reference {
        reference: reference.to_owned(),
        tag: tag.to_owned(),
        kind: kind.to_owned(),
    }
}

fn op_name(op: u8) -> String {
    format!("op-{op}")
}

/// The request a step sends, given the ledger as it stands (for dates and for amounts
/// relative to a reservation); `None` for clock jumps and retries.
pub fn action_of(step: &Step, ledger: &Ledger) -> Option<Action> {
    Some(match *step {
        Step::Add {
            pool,
            reference,
            expiry,
            amount,
            order,
        } => Action::Add {
            pool: pool_of(pool),
            reference: reference_of(reference),
            expires: ledger.today()
                + TimeDelta::days(EXPIRY_OFFSETS[usize::from(expiry) % EXPIRY_OFFSETS.len()]),
            amount,
            order: order.map(|order| format!("SO-{order}")),
        },
        Step::Reserve {
            tenant,
            op,
            amount,
            timeout,
        } => {
            let (tenant, op) = tenant_op(tenant, op);
            Action::Reserve {
                tenant,
                op,
                amount,
                timeout,
            }
        }
        Step::DirectSpend { tenant, op, amount } => {
            let (tenant, op) = tenant_op(tenant, op);
            Action::DirectSpend { tenant, op, amount }
        }
        Step::Move {
            source,
            target_offset,
            amount,
            reference,
            key,
        } => Action::Move {
            source: pool_of(source % 4),
            target: pool_of((source + target_offset) % 4),
            amount,
            reference: reference.map(reference_of),
            key: key.map(|key| format!("move-{key}")),
        },
        Step::SpendAll { .. }
        | Step::SpendPart { .. }
        | Step::SpendMore { .. }
        | Step::Release { .. } => resolving_action(step, ledger)?,
        Step::Retry { .. } | Step::Clock(_) => return None,
    })
}

/// The spend or release a step sends, with amounts relative to the reservation it names.
fn resolving_action(step: &Step, ledger: &Ledger) -> Option<Action> {
    let recent = |nth: u8, reserved: bool| ledger.recent_operation(usize::from(nth), reserved);
    let named = |op: OpRef| match op {
        OpRef::Holding(nth) => recent(nth, true)
            .or_else(|| recent(nth, false))
            .unwrap_or_else(|| tenant_op(nth, nth)),
        OpRef::Recent(nth) => recent(nth, false).unwrap_or_else(|| tenant_op(nth, nth)),
        OpRef::Named { tenant, op } => tenant_op(tenant, op),
    };
    let reserved = |tenant: usize, op: &str| ledger.operation(tenant, op).map(|op| op.credits);
    Some(match *step {
        Step::SpendAll { op } => {
            let (tenant, op) = named(op);
            Action::Spend {
                tenant,
                op,
                amount: None,
            }
        }
        Step::SpendPart { op, permille } => {
            let (tenant, op) = named(op);
            let amount = reserved(tenant, &op).map_or(i64::from(permille), |credits| {
                (credits * i64::from(permille) / 1000).max(1)
            });
            Action::Spend {
                tenant,
                op,
                amount: Some(amount),
            }
        }
        Step::SpendMore { op, extra } => {
            let (tenant, op) = named(op);
            let amount = reserved(tenant, &op).unwrap_or(0) + extra;
            Action::Spend {
                tenant,
                op,
                amount: Some(amount),
            }
        }
        Step::Release { op } => {
            let (tenant, op) = named(op);
            Action::Release { tenant, op }
        }
        _ => return None,
    })
}

fn tenant_op(tenant: u8, op: u8) -> (usize, String) {
    (usize::from(tenant) % TENANTS, op_name(op))
}

/// A request as it goes over the wire.
#[derive(Debug, Clone)]
pub struct WireRequest {
    pub method: Method,
    pub path: String,
    pub body: String,
    pub idempotency_key: Option<String>,
}

/// Micro-credits as decimal text: `12.5`, `0.000001`, `3`.
pub fn decimal(micros: Micros) -> String {
    let whole = micros / MICROS_PER_CREDIT;
    let fraction = micros % MICROS_PER_CREDIT;
    if fraction == 0 {
        return whole.to_string();
    }
    let digits = format!("{fraction:06}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// An amount in one of the forms the document accepts, picked by the amount itself so that a
/// retry sends the same text: a number, a string, a number with trailing zeros past six
/// places, or an exponent.
fn amount_literal(micros: Micros) -> String {
    match micros % 4 {
        0 => decimal(micros),
        1 => format!("\"{}\"", decimal(micros)),
        2 => format!(
            "{}.{:06}000",
            micros / MICROS_PER_CREDIT,
            micros % MICROS_PER_CREDIT
        ),
        _ => format!("{micros}e-6"),
    }
}

/// A JSON body with `"credits"` written as `literal` (exact text, no floating point).
fn with_credits(mut body: Value, literal: &str) -> String {
    const MARK: &str = "@@credits@@";
    body["credits"] = Value::from(MARK);
    body.to_string().replace(&format!("\"{MARK}\""), literal)
}

/// The id of the generic pool in one of the forms the document accepts, picked by `seed`:
/// absent, `null`, `""` or the nil uuid.
fn generic_id(seed: Micros) -> Option<Value> {
    match seed % 4 {
        0 => None,
        1 => Some(Value::Null),
        2 => Some(Value::from("")),
        _ => Some(Value::from(Uuid::nil().to_string())),
    }
}

fn pool_id(pool: Pool, tenants: &[Uuid], seed: Micros) -> Option<Value> {
    match pool {
        Pool::Generic => generic_id(seed),
        Pool::Tenant(index) => Some(Value::from(tenants[index].to_string())),
    }
}

fn reference_json(reference: &Reference) -> Value {
    let mut body = json!({"billingReference": reference.reference});
    if !reference.tag.is_empty() {
        body["billingReferenceTag"] = Value::from(reference.tag.clone());
    }
    if !reference.kind.is_empty() {
        body["billingReferenceType"] = Value::from(reference.kind.clone());
    }
    body
}

/// The HTTP request of `action`; `tenants` are the ids of the case's tenants.
pub fn wire(action: &Action, tenants: &[Uuid]) -> WireRequest {
    let put = |path: &str, body: String| WireRequest {
        method: Method::PUT,
        path: path.to_owned(),
        body,
        idempotency_key: None,
    };
    match action {
        Action::Add {
            pool,
            reference,
            expires,
            amount,
            order,
        } => wire_add(
            *pool,
            reference,
            *expires,
            *amount,
            order.as_deref(),
            tenants,
        ),
        Action::Reserve {
            tenant,
            op,
            amount,
            timeout,
        } => {
            let mut body = json!({"tenantId": tenants[*tenant], "operationId": op});
            if let Some(seconds) = timeout {
                body["timeoutSeconds"] = Value::from(*seconds);
            }
            put(
                &routes::credit_reserve(),
                with_credits(body, &amount_literal(*amount)),
            )
        }
        Action::Spend { tenant, op, amount } => {
            let body = json!({"tenantId": tenants[*tenant], "operationId": op});
            let body = match amount {
                Some(amount) => with_credits(body, &amount_literal(*amount)),
                None => body.to_string(),
            };
            put(&routes::credit_spend(), body)
        }
        Action::DirectSpend { tenant, op, amount } => {
            let body = json!({"tenantId": tenants[*tenant], "operationId": op, "direct": true});
            put(
                &routes::credit_spend(),
                with_credits(body, &amount_literal(*amount)),
            )
        }
        Action::Release { tenant, op } => put(
            &routes::credit_release(),
            json!({"tenantId": tenants[*tenant], "operationId": op}).to_string(),
        ),
        Action::Move {
            source,
            target,
            amount,
            reference,
            key,
        } => WireRequest {
            idempotency_key: key.clone(),
            ..put(
                &routes::credit_move(),
                move_body(*source, *target, *amount, reference.as_ref(), tenants),
            )
        },
    }
}

fn move_body(
    source: Pool,
    target: Pool,
    amount: Micros,
    reference: Option<&Reference>,
    tenants: &[Uuid],
) -> String {
    let mut body = json!({});
    if let Some(id) = pool_id(source, tenants, amount) {
        body["sourceTenantId"] = id;
    }
    if let Some(id) = pool_id(target, tenants, amount + 1) {
        body["targetTenantId"] = id;
    }
    if let Some(reference) = reference {
        body["billingReference"] = reference_json(reference);
    }
    with_credits(body, &amount_literal(amount))
}

fn wire_add(
    pool: Pool,
    reference: &Reference,
    expires: NaiveDate,
    amount: Micros,
    order: Option<&str>,
    tenants: &[Uuid],
) -> WireRequest {
    let mut body = json!({
        "billingReference": reference_json(reference),
        "expiresAt": expires.format("%Y-%m-%d").to_string(),
    });
    if let Some(id) = pool_id(pool, tenants, amount) {
        body["tenantId"] = id;
    }
    if let Some(order) = order {
        body["salesOrderId"] = Value::from(order);
    }
    WireRequest {
        method: Method::POST,
        path: routes::credits(),
        body: with_credits(body, &amount_literal(amount)),
        idempotency_key: None,
    }
}

//! A model-based property test of the credit ledger (issue 14, docs/credits.md).
//!
//! proptest generates sequences of 20 to 60 steps (adds, reserves, spends whole, partial and
//! too large, direct spends, releases, moves, retries of earlier requests, clock jumps across
//! expiry dates and reservation timeouts; see `model/steps.rs`). Each case starts a fresh app
//! and sends every step to the HTTP API and to the in-memory ledger of `model/ledger.rs`, which
//! is docs/credits.md written a second time. After every step:
//! - the status and problem type, and the body of a success, are what the model predicts;
//! - every pool's breakdown and details (lot by lot) equal the model's;
//! - no amount is negative, and per billing reference all pools and statuses add up to what
//!   was added;
//! - each pool's journal, read as it grows, sums to its balances and resolves each operation
//!   in at most one change; each tenant's audit is consistent;
//! - a retry of a keyed request that succeeded changes nothing and answers as the first time
//!   did (a reserve: with the operation as it stands). Only keyed requests are retried (adds
//!   with a sales order, reserve, spend and release, moves with an `Idempotency-Key`): the
//!   others add or move again by design.
//!
//! At the end of a case every operation is read back, every journal is read again in pages
//! of seven, the extended details list each lot's operations newest first, and a `filter`
//! narrows breakdowns and details as the model says.
//!
//! Configuration: 48 cases on SQLite, 12 on PostgreSQL (each case creates a database there),
//! `PROPTEST_CASES` for more, `PROPTEST_MAX_SHRINK_ITERS` to bound shrinking (300 by
//! default: each iteration replays a case). Failing inputs are kept in
//! `tests/proptest-regressions/credits/model.txt` (proptest's `SourceParallel`) and replayed
//! first on every later run; each failure found is also a plain test in
//! `model_regressions.rs`. `CREDITS_MODEL_STATS=1` (with `--nocapture`) prints what
//! the cases did: requests by kind and answer, and how often the model took its rarer paths.

mod ledger;
mod observe;
mod steps;

use std::collections::BTreeMap;

use basin::Clock;
use chrono::TimeDelta;
use proptest::test_runner::{
    Config as ProptestConfig, FileFailurePersistence, TestCaseError, TestRunner,
};
use serde_json::Value;
use uuid::Uuid;

use crate::helpers::{Backend, TestApp, postgres_admin_url, spawn_app_on};
use ledger::{Action, Ledger, Micros, Pool, PoolView};
use observe::JournalTracker;
use steps::{Step, TENANTS, TIMEOUT_MAX_SECONDS, WireRequest};

/// Cases per run on SQLite.
const SQLITE_CASES: u32 = 48;
/// Cases per run on PostgreSQL, where every case creates and drops a database.
const POSTGRES_CASES: u32 = 12;
/// Shrinking replays a case per iteration; this bounds the time a failure takes to report.
const MAX_SHRINK_ITERS: u32 = 300;

#[test]
fn sqlite() {
    run_property(Backend::Sqlite, SQLITE_CASES);
}

#[test]
fn postgres() {
    if postgres_admin_url().is_none() {
        return;
    }
    run_property(Backend::Postgres, POSTGRES_CASES);
}

/// The fixed proptest configuration: `cases` (or `PROPTEST_CASES`), failures persisted next to
/// the test sources so that they are replayed first from then on.
fn config(cases: u32) -> ProptestConfig {
    let from_env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
    };
    ProptestConfig {
        cases: from_env("PROPTEST_CASES").unwrap_or(cases),
        max_shrink_iters: from_env("PROPTEST_MAX_SHRINK_ITERS").unwrap_or(MAX_SHRINK_ITERS),
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel(
            "proptest-regressions",
        ))),
        source_file: Some(file!()),
        ..ProptestConfig::default()
    }
}

/// What the cases of a run did: requests by kind and answer, and the rarer paths of the model.
type Stats = std::sync::Mutex<BTreeMap<String, u64>>;

fn run_property(backend: Backend, cases: u32) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let stats = Stats::default();
    let mut runner = TestRunner::new(config(cases));
    let result = runner.run(&steps::Steps, |steps| {
        runtime.block_on(run_case(backend, &steps, &stats))
    });
    if std::env::var_os("CREDITS_MODEL_STATS").is_some() {
        for (what, count) in stats.lock().unwrap().iter() {
            eprintln!("{count:>6}  {what}");
        }
    }
    if let Err(error) = result {
        panic!("{error}");
    }
}

/// Runs one case on a fresh app: every step, then every check.
async fn run_case(backend: Backend, steps: &[Step], stats: &Stats) -> Result<(), TestCaseError> {
    let app = spawn_app_on(backend, long_lived_bootstrap_token)
        .await
        .expect("PostgreSQL was checked before the cases");
    let mut case = Case::start(&app).await;
    let result = case.run(steps).await;
    let mut totals = stats.lock().unwrap();
    for (what, count) in &case.stats {
        *totals.entry(what.clone()).or_default() += count;
    }
    for (event, count) in case.ledger.events() {
        *totals.entry(format!("model: {event}")).or_default() += count;
    }
    result
}

/// How a request is counted in the stats.
fn label(action: &Action) -> String {
    let pool = |pool: &Pool| match pool {
        Pool::Generic => "generic",
        Pool::Tenant(_) => "tenant",
    };
    match action {
        Action::Add { order: None, .. } => "add".into(),
        Action::Add { .. } => "add with a sales order".into(),
        Action::Reserve { timeout: None, .. } => "reserve".into(),
        Action::Reserve {
            timeout: Some(0), ..
        } => "reserve, timeout 0".into(),
        Action::Reserve { .. } => "reserve with a timeout".into(),
        Action::Spend { amount: None, .. } => "spend all".into(),
        Action::Spend { .. } => "spend an amount".into(),
        Action::DirectSpend { .. } => "direct spend".into(),
        Action::Release { .. } => "release".into(),
        Action::Move {
            source,
            target,
            reference,
            key,
            ..
        } => format!(
            "move {} to {}{}{}",
            pool(source),
            pool(target),
            if reference.is_some() {
                ", one reference"
            } else {
                ""
            },
            if key.is_some() { ", with a key" } else { "" }
        ),
    }
}

fn answer_label(outcome: &ledger::Outcome) -> &'static str {
    match outcome {
        Ok(_) => "200",
        Err(refusal) => refusal.kind,
    }
}

fn fail(index: usize, step: &Step, when: &str, message: &str) -> TestCaseError {
    TestCaseError::fail(format!("{when}step {index} {step:?}:\n{message}"))
}

/// Clock jumps add up to weeks; the BackOffice token must outlive them.
fn long_lived_bootstrap_token(config: &mut basin::Config) {
    config.auth.bootstrap_token_ttl_seconds = 10 * 365 * 24 * 3600;
}

/// A keyed request sent earlier, for retries.
#[derive(Debug, Clone)]
struct Sent {
    action: Action,
    request: WireRequest,
    succeeded: bool,
    body: Value,
}

/// One case: the app, the model, and what was read and sent so far.
struct Case<'a> {
    app: &'a TestApp,
    tenants: Vec<Uuid>,
    ledger: Ledger,
    sent: Vec<Sent>,
    journals: BTreeMap<Pool, JournalTracker>,
    stats: BTreeMap<String, u64>,
}

impl<'a> Case<'a> {
    /// Puts the clock at 10:00 UTC (so that a sequence of jumps crosses midnight at the same
    /// steps on every run) and makes the tenants.
    async fn start(app: &'a TestApp) -> Self {
        assert_eq!(
            app.config.credits.reservation_timeout_max_seconds,
            TIMEOUT_MAX_SECONDS
        );
        assert_eq!(app.config.credits.reservation_timeout_default_seconds, 0);
        let now = app.clock.now();
        let ten_tomorrow = (now.date_naive() + TimeDelta::days(1))
            .and_hms_opt(10, 0, 0)
            .unwrap()
            .and_utc();
        app.clock.advance(ten_tomorrow - now);
        let mut tenants = vec![app.tenant_id()];
        for index in 1..TENANTS {
            tenants.push(app.create_tenant(&format!("credits-model-{index}")).await);
        }
        Self {
            app,
            tenants,
            ledger: Ledger::new(app.clock.now(), TENANTS, TIMEOUT_MAX_SECONDS),
            sent: Vec::new(),
            journals: BTreeMap::new(),
            stats: BTreeMap::new(),
        }
    }

    /// Every step with the checks after it, then the checks of the end.
    async fn run(&mut self, steps: &[Step]) -> Result<(), TestCaseError> {
        for (index, step) in steps.iter().enumerate() {
            self.step(step)
                .await
                .map_err(|message| fail(index, step, "", &message))?;
            self.check_pools()
                .await
                .map_err(|message| fail(index, step, "after ", &message))?;
        }
        self.check_at_end()
            .await
            .map_err(|message| TestCaseError::fail(format!("at the end: {message}")))
    }

    fn count(&mut self, what: String) {
        *self.stats.entry(what).or_default() += 1;
    }

    async fn step(&mut self, step: &Step) -> Result<(), String> {
        match step {
            Step::Clock(jump) => {
                self.app.clock.advance(jump.delta());
                self.ledger.advance_to(self.app.clock.now());
                Ok(())
            }
            Step::Retry { success, which } => {
                let of_kind: Vec<&Sent> = self
                    .sent
                    .iter()
                    .filter(|sent| sent.succeeded == *success)
                    .collect();
                let candidates = if of_kind.is_empty() {
                    self.sent.iter().collect()
                } else {
                    of_kind
                };
                if candidates.is_empty() {
                    return Ok(());
                }
                let first = candidates[which.index(candidates.len())].clone();
                self.retry(&first).await
            }
            _ => {
                let action =
                    steps::action_of(step, &self.ledger).expect("every other step is a request");
                self.send(action).await
            }
        }
    }

    async fn send(&mut self, action: Action) -> Result<(), String> {
        let request = steps::wire(&action, &self.tenants);
        let predicted = self.ledger.apply(&action);
        self.count(format!("{} → {}", label(&action), answer_label(&predicted)));
        let reply = observe::send(self.app, &request).await;
        observe::check_reply(&predicted, &reply)
            .map_err(|message| format!("{action:?}\n{}\n{message}", describe(&request)))?;
        self.ledger.self_check()?;
        if action.is_keyed() {
            self.sent.push(Sent {
                action,
                request,
                succeeded: predicted.is_ok(),
                body: reply.body,
            });
        }
        Ok(())
    }

    /// Sends `first` again: the model predicts the answer; when `first` succeeded, nothing
    /// may change and the answer must be the first one (a reserve answers with the operation
    /// as it stands, which the prediction covers).
    async fn retry(&mut self, first: &Sent) -> Result<(), String> {
        let before = self.ledger.clone();
        let predicted = self.ledger.apply(&first.action);
        self.count(format!(
            "retry of a {} {} → {}",
            if first.succeeded {
                "success:"
            } else {
                "refusal:"
            },
            label(&first.action),
            answer_label(&predicted)
        ));
        let reply = observe::send(self.app, &first.request).await;
        let context = || format!("retry of {:?}\n{}", first.action, describe(&first.request));
        observe::check_reply(&predicted, &reply)
            .map_err(|message| format!("{}\n{message}", context()))?;
        if first.succeeded {
            if self.ledger != before {
                return Err(format!(
                    "{}\nmodel: the retry changed the ledger",
                    context()
                ));
            }
            let answers_again = !matches!(first.action, Action::Reserve { .. });
            if answers_again && reply.body != first.body {
                return Err(format!(
                    "{}\nthe retry answered\n  {}\nthe first request\n  {}",
                    context(),
                    reply.body,
                    first.body
                ));
            }
        }
        Ok(())
    }

    /// Every pool against the model, the journals against the balances, and the totals per
    /// billing reference against what was added. The pools are read concurrently.
    async fn check_pools(&mut self) -> Result<(), String> {
        let mut journals = std::mem::take(&mut self.journals);
        let reads = self.ledger.pools().into_iter().map(|pool| {
            let journal = journals.remove(&pool).unwrap_or_default();
            self.read_pool(pool, journal)
        });
        let mut by_reference: BTreeMap<ledger::Reference, Micros> = BTreeMap::new();
        let mut outcome = Ok(());
        for (pool, observed, journal) in futures::future::join_all(reads).await {
            outcome = outcome.and(self.compare_pool(pool, observed, &journal, &mut by_reference));
            self.journals.insert(pool, journal);
        }
        outcome?;
        by_reference.retain(|_, total| *total != 0);
        if by_reference != *self.ledger.added() {
            return Err(format!(
                "totals per billing reference {by_reference:?} differ from what was added {:?}",
                self.ledger.added()
            ));
        }
        Ok(())
    }

    /// Reads `pool`: its breakdown and details, the new entries of its journal, and for a
    /// tenant its audit (checked against the model's balances here).
    async fn read_pool(
        &self,
        pool: Pool,
        mut journal: JournalTracker,
    ) -> (Pool, Result<PoolView, String>, JournalTracker) {
        let read = async {
            let observed = observe::read_pool(self.app, pool, &self.tenants).await?;
            journal
                .catch_up(self.app, &observe::journal_path(pool, &self.tenants))
                .await?;
            if let Pool::Tenant(index) = pool {
                let expected = self.ledger.view(pool).totals;
                observe::check_audit(self.app, self.tenants[index], &expected).await?;
            }
            Ok(observed)
        };
        let observed = read.await;
        (pool, observed, journal)
    }

    /// Compares what was read of `pool` with the model, and adds its lots to `by_reference`.
    fn compare_pool(
        &self,
        pool: Pool,
        observed: Result<PoolView, String>,
        journal: &JournalTracker,
        by_reference: &mut BTreeMap<ledger::Reference, Micros>,
    ) -> Result<(), String> {
        let observed = observed?;
        let expected = self.ledger.view(pool);
        if observed.totals.has_negative()
            || observed.lots.iter().any(|lot| lot.amounts.has_negative())
        {
            return Err(format!("{pool:?} shows a negative amount:\n{observed:?}"));
        }
        if observed != expected {
            return Err(format!(
                "{pool:?} differs from the model:\n{}",
                observe::describe(&observed, &expected)
            ));
        }
        if journal.sums() != expected.totals {
            return Err(format!(
                "{pool:?}: the journal sums to {:?}, the balances are {:?}",
                journal.sums(),
                expected.totals
            ));
        }
        for lot in &observed.lots {
            *by_reference.entry(lot.key.reference.clone()).or_default() += lot.amounts.total();
        }
        Ok(())
    }

    /// Every operation as `GET .../operation/{id}` shows it, and every journal read again.
    async fn check_at_end(&self) -> Result<(), String> {
        for ((tenant, op), operation) in self.ledger.operations() {
            let observed = observe::read_operation(self.app, self.tenants[*tenant], op).await?;
            let expected = ledger::view_of(operation);
            if observed != expected {
                return Err(format!(
                    "operation {tenant}/{op}: the API shows\n  {observed:?}\nthe model\n  {expected:?}"
                ));
            }
        }
        for (pool, journal) in &self.journals {
            journal
                .check_full_read(self.app, &observe::journal_path(*pool, &self.tenants))
                .await?;
        }
        for pool in self.ledger.pools() {
            self.check_filtered(pool).await?;
            if let Pool::Tenant(index) = pool {
                self.check_extended(index).await?;
            }
        }
        Ok(())
    }

    /// The extended details of a tenant: each lot's operations, newest first, as the model
    /// has them.
    async fn check_extended(&self, tenant: usize) -> Result<(), String> {
        let observed = observe::read_extended(self.app, self.tenants[tenant]).await?;
        let expected: Vec<_> = self
            .ledger
            .view(Pool::Tenant(tenant))
            .lots
            .into_iter()
            .map(|lot| {
                let operations = self.ledger.lot_operations(tenant, &lot.key);
                (lot.key, operations)
            })
            .collect();
        if observed != expected {
            return Err(format!(
                "extended details of tenant {tenant}: the API shows\n  {observed:?}\nthe model\n  {expected:?}"
            ));
        }
        Ok(())
    }

    /// A pool's breakdown and details with `filter` (two statuses, in another order and case
    /// than the document's): only those statuses, and only lots with credits in one of them.
    async fn check_filtered(&self, pool: Pool) -> Result<(), String> {
        let filter = "filter=expired&filter=Reserved";
        let observed = observe::read_filtered(self.app, pool, &self.tenants, filter).await?;
        let listed = |amounts: &ledger::Amounts| {
            vec![
                ("Reserved".to_owned(), amounts.reserved),
                ("Expired".to_owned(), amounts.expired),
            ]
        };
        let view = self.ledger.view(pool);
        let expected = (
            listed(&view.totals),
            view.lots
                .iter()
                .filter(|lot| lot.amounts.reserved > 0 || lot.amounts.expired > 0)
                .map(|lot| (lot.key.clone(), listed(&lot.amounts)))
                .collect::<Vec<_>>(),
        );
        if observed != expected {
            return Err(format!(
                "{pool:?} with {filter}: the API shows\n  {observed:?}\nthe model\n  {expected:?}"
            ));
        }
        Ok(())
    }
}

fn describe(request: &WireRequest) -> String {
    let key = request
        .idempotency_key
        .as_deref()
        .map(|key| format!(" (Idempotency-Key {key})"))
        .unwrap_or_default();
    format!("{} {}{key} {}", request.method, request.path, request.body)
}

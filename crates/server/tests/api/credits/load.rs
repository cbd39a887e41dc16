//! The credit ledger under concurrent load (issue 14): 64 clients reserve, spend, release and
//! move on one tenant for 10 s, on SQLite and PostgreSQL; afterwards no request failed with a
//! 5xx, balances equal the journal, every billing reference's total is what was added, no
//! amount is negative, and what the clients were told they spent is what the ledger spent.
//!
//! The same load generator, with reserve+spend pairs only, is the benchmark of
//! scripts/bench-credits (ignored tests, run in a release build).

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// What a load run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// Reserve, then spend all, part, or release; moves to and from the generic pool.
    Mixed,
    /// Reserve, then spend all: the benchmark's pairs.
    Pairs,
}

/// What one client saw.
#[derive(Debug, Default)]
pub struct ClientTally {
    /// Responses by status.
    pub statuses: std::collections::BTreeMap<u16, u64>,
    /// Micro-credits the server said were spent.
    pub spent_micros: i64,
    /// Completed reserve+spend pairs.
    pub pairs: u64,
    /// Latency of each request, in microseconds.
    pub latencies_us: Vec<u64>,
}

/// The requests one client sends: a reqwest client of its own, and the credentials.
#[derive(Clone)]
pub struct Load {
    pub base: String,
    pub token: String,
    pub tenant: uuid::Uuid,
    pub client: reqwest::Client,
    /// Requests answered 200 so far, by all clients.
    pub served: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Load {
    async fn put(&self, path: &str, body: &Value, tally: &mut ClientTally) -> (u16, Value) {
        let started = Instant::now();
        let response = self
            .client
            .put(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("api-version", "4")
            .json(body)
            .send()
            .await;
        let elapsed = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        tally.latencies_us.push(elapsed);
        let Ok(response) = response else {
            *tally.statuses.entry(0).or_default() += 1;
            return (0, Value::Null);
        };
        let status = response.status().as_u16();
        *tally.statuses.entry(status).or_default() += 1;
        if status == 200 {
            self.served
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let body = response.json().await.unwrap_or(Value::Null);
        (status, body)
    }
}

/// Micro-credits of an amount in a response. The test client reads JSON numbers as `f64`;
/// amounts in these tests stay below 2^53 micro-credits, where that is exact after rounding.
pub fn micros(value: &Value) -> i64 {
    let credits = value
        .as_f64()
        .unwrap_or_else(|| panic!("not an amount: {value}"));
    (credits * 1e6).round() as i64
}

/// One client's loop until `deadline`.
async fn client_loop(load: Load, client: usize, mix: Mix, deadline: Instant) -> ClientTally {
    let mut tally = ClientTally::default();
    let mut step: u64 = 0;
    while Instant::now() < deadline {
        step += 1;
        let operation = format!("c{client}-op{step}");
        // Amounts vary with the step: 0.000001 .. 1.0, exact decimals.
        let amount = format!(
            "0.{:06}",
            (step * 7919 + client as u64 * 104_729) % 999_999 + 1
        );
        let reserve = json!({"credits": amount, "tenantId": load.tenant, "operationId": operation});
        let (status, _) = load
            .put(&routes::credit_reserve(), &reserve, &mut tally)
            .await;
        if status != 200 {
            continue;
        }
        let choice = if mix == Mix::Pairs { 0 } else { step % 5 };
        let (path, body) = match choice {
            0 | 1 => (
                &routes::credit_spend(),
                json!({"tenantId": load.tenant, "operationId": operation}),
            ),
            2 => (
                &routes::credit_spend(),
                json!({"tenantId": load.tenant, "operationId": operation, "credits": "0.000001"}),
            ),
            3 => (
                &routes::credit_release(),
                json!({"tenantId": load.tenant, "operationId": operation}),
            ),
            _ => {
                let to_generic = step.is_multiple_of(2);
                let body = if to_generic {
                    json!({"credits": "0.5", "sourceTenantId": load.tenant})
                } else {
                    json!({"credits": "0.5", "targetTenantId": load.tenant})
                };
                load.put(&routes::credit_move(), &body, &mut tally).await;
                (
                    &routes::credit_release(),
                    json!({"tenantId": load.tenant, "operationId": operation}),
                )
            }
        };
        let (status, answer) = load.put(path, &body, &mut tally).await;
        if status == 200 && path.ends_with("spend") {
            tally.spent_micros += micros(&answer["spent"]);
            tally.pairs += 1;
        }
    }
    tally
}

/// Runs `clients` clients for `duration` and returns what each saw.
pub async fn run_load(
    load: &Load,
    clients: usize,
    mix: Mix,
    duration: Duration,
) -> Vec<ClientTally> {
    let deadline = Instant::now() + duration;
    let tasks: Vec<_> = (0..clients)
        .map(|client| tokio::spawn(client_loop(load.clone(), client, mix, deadline)))
        .collect();
    let mut tallies = Vec::with_capacity(clients);
    for task in tasks {
        tallies.push(task.await.unwrap());
    }
    tallies
}

/// Adds credits in three lots to `tenant` (or the generic pool) and returns the micro-credits.
pub async fn fund(app: &TestApp, tenant: Option<uuid::Uuid>, credits: &str) -> i64 {
    let mut total = 0;
    for (index, expires) in ["2098-01-01", "2099-06-30", "2100-12-31"]
        .iter()
        .enumerate()
    {
        let mut body = json!({
            "credits": credits,
            "billingReference": {"billingReference": format!("ref-{index}"), "billingReferenceType": "EXT"},
            "expiresAt": expires,
        });
        if let Some(tenant) = tenant {
            body["tenantId"] = json!(tenant);
        }
        let response = app
            .back_office(Method::POST, &routes::credits())
            .json(&body)
            .send()
            .await
            .unwrap();
        total += micros(&expect_status(response, StatusCode::OK).await["credits"]);
    }
    total
}

/// Micro-credits per status of a pool's breakdown, in the order Available, Reserved, Spent,
/// Expired.
pub async fn statuses_of(app: &TestApp, path: &str, method: Method) -> [i64; 4] {
    let response = app.back_office(method, path).send().await.unwrap();
    let body = expect_status(response, StatusCode::OK).await;
    let mut out = [0; 4];
    for (slot, entry) in out.iter_mut().zip(body["statuses"].as_array().unwrap()) {
        *slot = micros(&entry["credits"]);
    }
    out
}

/// Load against the app's own bootstrap tenant, with a BackOffice token.
fn load_of(app: &TestApp) -> Load {
    Load {
        base: app.address.clone(),
        token: app.bootstrap.back_office_token.clone(),
        tenant: app.tenant_id(),
        client: reqwest::Client::new(),
        served: std::sync::Arc::default(),
    }
}

fn assert_no_server_errors(tallies: &[ClientTally]) -> std::collections::BTreeMap<u16, u64> {
    let mut statuses = std::collections::BTreeMap::new();
    for tally in tallies {
        for (status, count) in &tally.statuses {
            *statuses.entry(*status).or_insert(0) += count;
        }
    }
    for status in statuses.keys() {
        assert!(
            matches!(status, 200 | 409),
            "a request ended with {status}: {statuses:?}"
        );
    }
    statuses
}

api_test_with!(
    sixty_four_clients_for_ten_seconds_break_no_invariant,
    |config| config.database.max_connections = std::num::NonZeroU32::new(10).unwrap(),
    |app| {
        let added = fund(&app, Some(app.tenant_id()), "400").await;
        let generic_added = fund(&app, None, "100").await;
        let load = load_of(&app);
        let tallies = run_load(&load, 64, Mix::Mixed, Duration::from_secs(10)).await;
        let statuses = assert_no_server_errors(&tallies);
        let tenant = app.tenant_id();
        let pool = statuses_of(&app, &routes::tenant_credits(tenant), Method::GET).await;
        let generic = statuses_of(&app, &routes::unassigned_credits(), Method::POST).await;
        assert!(
            pool.iter().chain(&generic).all(|amount| *amount >= 0),
            "{pool:?} {generic:?}"
        );
        assert_eq!(pool[1], 0, "every reservation was resolved: {pool:?}");
        assert_eq!(
            pool.iter().sum::<i64>() + generic.iter().sum::<i64>(),
            added + generic_added,
            "credits were created or lost: tenant {pool:?}, generic {generic:?}"
        );
        let told: i64 = tallies.iter().map(|tally| tally.spent_micros).sum();
        assert_eq!(
            pool[2], told,
            "spent differs from what the clients were told"
        );
        let audit = expect_status(
            app.back_office(Method::GET, &routes::tenant_credit_audit(tenant))
                .send()
                .await
                .unwrap(),
            StatusCode::OK,
        )
        .await;
        assert_eq!(audit["consistent"], true, "{audit}");
        let pairs: u64 = tallies.iter().map(|tally| tally.pairs).sum();
        assert!(pairs > 0, "no operation succeeded: {statuses:?}");
        eprintln!(
            "credit load ({:?}): {pairs} spends, statuses {statuses:?}",
            app.backend
        );
    }
);

/// Reserve+spend pairs per second at 32 clients for 10 s, with latency percentiles.
async fn bench(backend: Backend) {
    let Some(app) = spawn_app_on(backend, |config| {
        config.database.max_connections = std::num::NonZeroU32::new(10).unwrap();
        config.log.level = "warn".into();
    })
    .await
    else {
        return;
    };
    fund(&app, Some(app.tenant_id()), "1000000").await;
    let load = load_of(&app);
    // Warm up connections and caches.
    run_load(&load, 32, Mix::Pairs, Duration::from_secs(1)).await;
    let started = Instant::now();
    let tallies = run_load(&load, 32, Mix::Pairs, Duration::from_secs(10)).await;
    let elapsed = started.elapsed().as_secs_f64();
    let statuses = assert_no_server_errors(&tallies);
    let pairs: u64 = tallies.iter().map(|tally| tally.pairs).sum();
    let mut latencies: Vec<u64> = tallies
        .iter()
        .flat_map(|t| t.latencies_us.iter().copied())
        .collect();
    latencies.sort_unstable();
    let percentile = |p: f64| {
        let index = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies.get(index).copied().unwrap_or(0) as f64 / 1000.0
    };
    eprintln!(
        "bench credits {backend:?}: {:.0} pairs/s ({pairs} pairs in {elapsed:.1} s), request latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; statuses {statuses:?}",
        pairs as f64 / elapsed,
        percentile(0.50),
        percentile(0.99),
        percentile(1.0),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: scripts/bench-credits"]
async fn bench_credit_pairs_sqlite() {
    bench(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: scripts/bench-credits"]
async fn bench_credit_pairs_postgres() {
    bench(Backend::Postgres).await;
}

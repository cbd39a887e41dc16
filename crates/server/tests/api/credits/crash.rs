//! The credit ledger killed mid-load (issue 14): `basin serve` runs as its own process while 32
//! clients reserve, spend, release and move; it is killed with SIGKILL in the middle and
//! started again on the same store. Whatever the requests in flight did, each happened whole
//! or not at all: balances equal the journal, every credit added is still somewhere, and every
//! operation's shares of its lots match its state.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::load::{Load, Mix, micros, run_load};
use crate::helpers::*;

/// A `basin serve` process on a store of the test's own.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn basin_on(data_dir: &std::path::Path, database_url: Option<&str>) -> std::process::Command {
    let mut command = basin_command();
    command
        .arg("--data-dir")
        .arg(data_dir)
        .env("BASIN_AUTH__JWT_SECRET", TEST_SECRET)
        .env("BASIN_LOG__LEVEL", "warn,basin=info");
    if let Some(url) = database_url {
        command.arg("--database-url").arg(url);
    }
    command
}

/// Starts `basin serve` and waits until it listens.
fn serve(data_dir: &std::path::Path, database_url: Option<&str>) -> Server {
    let child = basin_on(data_dir, database_url)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Owned by the server value at once, so that it is killed and waited for on every path.
    let mut server = Server {
        child,
        address: String::new(),
    };
    let stderr = server.child.stderr.take().unwrap();
    let (lines_tx, lines_rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    while server.address.is_empty() {
        let line = lines_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server did not start");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            server.address = format!("http://{}", rest.trim());
        }
    }
    server
}

/// The bootstrap tenant and a BackOffice token, from `basin admin bootstrap`.
fn bootstrap(data_dir: &std::path::Path, database_url: Option<&str>) -> (uuid::Uuid, String) {
    let output = basin_on(data_dir, database_url)
        .args(["admin", "bootstrap", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let body: Value = serde_json::from_slice(&output.stdout).unwrap();
    (
        body["tenantId"].as_str().unwrap().parse().unwrap(),
        body["backOfficeToken"].as_str().unwrap().to_owned(),
    )
}

async fn send(load: &Load, method: Method, path: &str, body: Option<Value>) -> Value {
    let mut request = load
        .client
        .request(method, format!("{}{path}", load.base))
        .bearer_auth(&load.token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    expect_status(request.send().await.unwrap(), StatusCode::OK).await
}

/// Micro-credits of all statuses of a breakdown.
fn total_of(breakdown: &Value) -> i64 {
    breakdown["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| micros(&entry["credits"]))
        .sum()
}

/// Adds 1000 credits to the tenant and 100 to the generic pool; the micro-credits added.
async fn fund(load: &Load) -> i64 {
    let mut added = 0;
    for (tenant, credits) in [(Some(load.tenant), "1000"), (None, "100")] {
        let mut body = json!({
            "credits": credits,
            "billingReference": {"billingReference": "crash", "billingReferenceType": "EXT"},
            "expiresAt": "2099-12-31",
        });
        if let Some(tenant) = tenant {
            body["tenantId"] = json!(tenant);
        }
        added += micros(&send(load, Method::POST, &routes::credits(), Some(body)).await["credits"]);
    }
    added
}

/// Operations whose shares of their lots do not match their state (read on the store).
async fn mismatched_operations(url: &str) -> i64 {
    let sql = "SELECT COUNT(*) FROM credit_operations o WHERE \
        (o.state = 'Reserved' AND o.credits <> (SELECT COALESCE(SUM(reserved), 0) FROM credit_operation_lots WHERE operation_ref = o.id)) \
        OR (o.state <> 'Reserved' AND 0 <> (SELECT COALESCE(SUM(reserved), 0) FROM credit_operation_lots WHERE operation_ref = o.id)) \
        OR (o.spent <> (SELECT COALESCE(SUM(spent), 0) FROM credit_operation_lots WHERE operation_ref = o.id))";
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let count = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
        pool.close().await;
        count
    } else {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        let count = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
        pool.close().await;
        count
    }
}

async fn killed_mid_load(backend: Backend) {
    let database = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => match create_pg_database().await {
            Some(database) => Some(database),
            None => return,
        },
    };
    let url = database.as_ref().map(|database| database.url.clone());
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path(), url.as_deref());
    let (tenant, token) = bootstrap(dir.path(), url.as_deref());
    let mut load = Load {
        base: server.address.clone(),
        token,
        tenant,
        client: reqwest::Client::new(),
        served: std::sync::Arc::default(),
    };
    let added = fund(&load).await;
    let running = {
        let load = load.clone();
        tokio::spawn(async move { run_load(&load, 32, Mix::Mixed, Duration::from_secs(25)).await })
    };
    // Killed once the ledger is busy: after 300 answered requests (or 20 s on a slow machine).
    let started = std::time::Instant::now();
    while load.served.load(std::sync::atomic::Ordering::Relaxed) < 300
        && started.elapsed() < Duration::from_secs(20)
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let tallies = running.await.unwrap();
    let served: u64 = tallies.iter().flat_map(|t| t.statuses.get(&200)).sum();
    assert!(served > 0, "the load did nothing before the kill");
    let restarted = serve(dir.path(), url.as_deref());
    load.base = restarted.address.clone();
    let pool = send(&load, Method::GET, &routes::tenant_credits(tenant), None).await;
    let generic = send(&load, Method::POST, &routes::unassigned_credits(), None).await;
    assert_eq!(
        total_of(&pool) + total_of(&generic),
        added,
        "{pool} {generic}"
    );
    let audit = send(
        &load,
        Method::GET,
        &routes::tenant_credit_audit(tenant),
        None,
    )
    .await;
    assert_eq!(audit["consistent"], true, "{audit}");
    let store = url.unwrap_or_else(|| format!("sqlite://{}/basin.db", dir.path().display()));
    drop(restarted);
    assert_eq!(mismatched_operations(&store).await, 0);
    eprintln!(
        "credits killed mid-load ({backend:?}): {served} requests served before the kill; ledger consistent after the restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_load_restarts_with_a_consistent_ledger_sqlite() {
    killed_mid_load(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_load_restarts_with_a_consistent_ledger_postgres() {
    killed_mid_load(Backend::Postgres).await;
}

//! The leased queue on both databases, on a table of its own: claims, renewals, releases,
//! failures and giving up, and on PostgreSQL two claimers at once. PostgreSQL runs when
//! `TEST_POSTGRES_URL` is set (required when `TEST_BASIN_REQUIRE_POSTGRES` is).

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use super::*;
use crate::db::{Arg, Backend, Db, Sql};

/// A queue counting its claims, as transfers and pyramids do.
const JOBS: LeasedTable = LeasedTable {
    name: "lease_jobs",
    key: "id",
    counting: Counting::PerClaim,
};

/// The same table counting its failures, as event deliveries do.
const SENDS: LeasedTable = LeasedTable {
    counting: Counting::PerFailure,
    ..JOBS
};

const LEASE_SECONDS: i64 = 60;

/// A migrated-free store holding only the test table: a SQLite file, or a fresh PostgreSQL
/// database dropped at the end.
struct Store {
    db: Db,
    _dir: Option<tempfile::TempDir>,
    postgres: Option<(String, String)>,
}

impl Store {
    async fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("leases.db").display()
        );
        let db = Db::connect(&url, &crate::config::DatabaseConfig::default())
            .await
            .unwrap();
        let store = Self {
            db,
            _dir: Some(dir),
            postgres: None,
        };
        store
            .run(
                "CREATE TABLE lease_jobs (id INTEGER PRIMARY KEY, state TEXT NOT NULL, \
                 queued_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, \
                 lease_owner TEXT, lease_expires_at TEXT)",
            )
            .await;
        store
    }

    async fn postgres() -> Option<Self> {
        let Ok(admin_url) = std::env::var("TEST_POSTGRES_URL") else {
            assert!(
                std::env::var_os("TEST_BASIN_REQUIRE_POSTGRES").is_none(),
                "TEST_BASIN_REQUIRE_POSTGRES is set but TEST_POSTGRES_URL is not"
            );
            return None;
        };
        let name = format!("basin_leases_{}", uuid::Uuid::new_v4().simple());
        let mut url = url::Url::parse(&admin_url).unwrap();
        url.set_path(&format!("/{name}"));
        let db = Db::connect(url.as_str(), &crate::config::DatabaseConfig::default())
            .await
            .unwrap();
        let store = Self {
            db,
            _dir: None,
            postgres: Some((admin_url, name)),
        };
        store
            .run(
                "CREATE TABLE lease_jobs (id BIGINT PRIMARY KEY, state TEXT NOT NULL, \
                 queued_at BIGINT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0, \
                 lease_owner TEXT, lease_expires_at TIMESTAMPTZ)",
            )
            .await;
        Some(store)
    }

    /// SQLite, and PostgreSQL when it is configured.
    async fn all() -> Vec<Self> {
        let mut stores = vec![Self::sqlite().await];
        stores.extend(Self::postgres().await);
        stores
    }

    async fn drop_database(self) {
        let Some((admin_url, name)) = self.postgres else {
            return;
        };
        self.db.close(Duration::from_secs(5)).await;
        let admin = sqlx::PgPool::connect(&admin_url).await.unwrap();
        let drop = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
        let _ = sqlx::query(sqlx::AssertSqlSafe(drop)).execute(&admin).await;
        admin.close().await;
    }

    async fn run(&self, statement: &str) {
        Sql::with_args(statement, Vec::new())
            .execute(&self.db)
            .await
            .unwrap();
    }

    /// Queues rows `ids`, each queued at its own id (so the lowest is the oldest).
    async fn queue(&self, ids: &[i64]) {
        for &id in ids {
            Sql::with_args(
                "INSERT INTO lease_jobs (id, state, queued_at) VALUES ($1, 'queued', $1)",
                vec![Arg::I64(id)],
            )
            .execute(&self.db)
            .await
            .unwrap();
        }
    }

    async fn row(&self, id: i64) -> Row {
        Sql::with_args(
            "SELECT id, state, attempts, lease_owner, lease_expires_at FROM lease_jobs \
             WHERE id = $1",
            vec![Arg::I64(id)],
        )
        .fetch_all::<Row>(&self.db)
        .await
        .unwrap()
        .remove(0)
    }

    fn backend(&self) -> Backend {
        self.db.backend()
    }
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
struct Row {
    id: i64,
    state: String,
    attempts: i64,
    lease_owner: Option<String>,
    lease_expires_at: Option<DateTime<Utc>>,
}

fn start() -> DateTime<Utc> {
    "2026-03-01T12:00:00Z".parse().unwrap()
}

fn at(seconds: i64) -> DateTime<Utc> {
    start() + TimeDelta::seconds(seconds)
}

fn lease() -> Lease {
    Lease::new(Duration::from_secs(LEASE_SECONDS.unsigned_abs()))
}

/// A claim of `table`'s oldest queued row: (id, attempts).
fn claim_of(
    table: LeasedTable,
    backend: Backend,
    holder: &str,
    now: DateTime<Utc>,
    attempts_max: u32,
) -> Sql {
    let mut claim = table.claim(holder, now, lease().expiry(now), attempts_max, "queued_at");
    claim
        .pick("state = 'queued'")
        .recheck("state = 'queued'")
        .skip_locked()
        .returning("id, attempts");
    claim.into_sql(backend)
}

async fn claim_one(
    store: &Store,
    holder: &str,
    now: DateTime<Utc>,
    attempts_max: u32,
) -> Option<(i64, i64)> {
    claim_of(JOBS, store.backend(), holder, now, attempts_max)
        .fetch_all(&store.db)
        .await
        .unwrap()
        .pop()
}

async fn changed(store: &Store, update: Update) -> u64 {
    update.into_sql().execute(&store.db).await.unwrap()
}

#[tokio::test]
async fn a_claim_takes_the_oldest_free_row_counts_an_attempt_and_passes_live_leases_by() {
    for store in Store::all().await {
        store.queue(&[1, 2, 3]).await;
        assert_eq!(claim_one(&store, "a", at(0), 3).await, Some((1, 1)));
        let held = store.row(1).await;
        assert_eq!(held.lease_owner.as_deref(), Some("a"));
        assert_eq!(held.lease_expires_at, Some(at(LEASE_SECONDS)));
        assert_eq!(claim_one(&store, "b", at(1), 3).await, Some((2, 1)));
        // Row 1's lease runs out: it is the oldest free row again, and a second attempt.
        assert_eq!(
            claim_one(&store, "c", at(LEASE_SECONDS + 1), 3).await,
            Some((1, 2))
        );
        assert_eq!(store.row(1).await.lease_owner.as_deref(), Some("c"));
        store.drop_database().await;
    }
}

#[tokio::test]
async fn a_row_out_of_attempts_is_claimed_no_more_and_given_up_once_its_lease_ran_out() {
    for store in Store::all().await {
        store.queue(&[1]).await;
        let give_up = |now| {
            let mut update = JOBS.give_up_exhausted(now, 2);
            update
                .set("state = 'given_up'")
                .and("state = 'queued'")
                .returning("id");
            update.into_sql()
        };
        assert_eq!(claim_one(&store, "a", at(0), 2).await, Some((1, 1)));
        let lapsed = LEASE_SECONDS + 1;
        assert_eq!(claim_one(&store, "b", at(lapsed), 2).await, Some((1, 2)));
        // The last attempt's holder may still be working.
        let none: Vec<(i64,)> = give_up(at(lapsed + 1)).fetch_all(&store.db).await.unwrap();
        assert!(none.is_empty());
        let later = 2 * lapsed;
        assert_eq!(claim_one(&store, "c", at(later), 2).await, None);
        let given_up: Vec<(i64,)> = give_up(at(later)).fetch_all(&store.db).await.unwrap();
        assert_eq!(given_up, [(1,)]);
        let row = store.row(1).await;
        assert_eq!(
            (row.state.as_str(), row.lease_owner, row.lease_expires_at),
            ("given_up", None, None)
        );
        store.drop_database().await;
    }
}

#[tokio::test]
async fn only_the_holder_renews_releases_or_finishes_and_a_release_gives_the_attempt_back() {
    for store in Store::all().await {
        store.queue(&[1]).await;
        assert_eq!(claim_one(&store, "a", at(0), 3).await, Some((1, 1)));
        let renew = |holder| {
            let mut update = JOBS.renew(holder, at(100));
            update.row(Arg::I64(1));
            update
        };
        assert_eq!(changed(&store, renew("b")).await, 0);
        assert_eq!(changed(&store, renew("a")).await, 1);
        assert_eq!(store.row(1).await.lease_expires_at, Some(at(100)));

        assert_eq!(changed(&store, JOBS.release("b")).await, 0);
        assert_eq!(changed(&store, JOBS.release("a")).await, 1);
        let released = store.row(1).await;
        assert_eq!(
            (
                released.attempts,
                released.lease_owner,
                released.lease_expires_at
            ),
            (0, None, None)
        );
        // Free at once, for anyone.
        assert_eq!(claim_one(&store, "b", at(1), 3).await, Some((1, 1)));

        let finish = |holder| {
            let mut update = JOBS.finish(holder);
            update.row(Arg::I64(1)).set("state = 'done'");
            update
        };
        assert_eq!(changed(&store, finish("a")).await, 0);
        assert_eq!(changed(&store, finish("b")).await, 1);
        let done = store.row(1).await;
        assert_eq!(
            (done.state.as_str(), done.attempts, done.lease_owner),
            ("done", 1, None)
        );
        store.drop_database().await;
    }
}

/// Records a failure of `holder`'s row `id`, giving it up on the last attempt of 2.
async fn fail(store: &Store, table: LeasedTable, holder: &str, id: i64, retry: Retry) -> String {
    let (mut update, last) = table.fail(holder, 2, retry);
    update
        .row(Arg::I64(id))
        .set(&format!(
            "state = CASE WHEN {last} THEN 'dead' ELSE state END"
        ))
        .returning("state");
    let states: Vec<(String,)> = update.into_sql().fetch_all(&store.db).await.unwrap();
    states
        .into_iter()
        .next()
        .map(|(state,)| state)
        .unwrap_or_default()
}

#[tokio::test]
async fn counted_per_failure_a_batch_claim_costs_nothing_and_the_last_failure_gives_up() {
    for store in Store::all().await {
        store.queue(&[1, 2, 3]).await;
        let claim_two = |holder: &str, now| {
            let mut claim = SENDS.claim(holder, now, lease().expiry(now), 2, "queued_at");
            claim
                .pick("state = 'queued'")
                .up_to(2)
                .skip_locked()
                .recheck("state = 'queued'")
                .returning("id, attempts");
            claim.into_sql(store.backend())
        };
        let mut first: Vec<(i64, i64)> = claim_two("a", at(0)).fetch_all(&store.db).await.unwrap();
        first.sort_unstable();
        assert_eq!(first, [(1, 0), (2, 0)]);

        assert_eq!(fail(&store, SENDS, "b", 1, Retry::Free).await, "");
        assert_eq!(fail(&store, SENDS, "a", 1, Retry::Free).await, "queued");
        let failed = store.row(1).await;
        assert_eq!(
            (failed.attempts, failed.lease_owner, failed.lease_expires_at),
            (1, None, None)
        );
        // Row 1 is free again; row 2 is still held, so the next claim takes 1 and 3.
        let mut second: Vec<(i64, i64)> = claim_two("b", at(1)).fetch_all(&store.db).await.unwrap();
        second.sort_unstable();
        assert_eq!(second, [(1, 1), (3, 0)]);
        assert_eq!(fail(&store, SENDS, "b", 1, Retry::Free).await, "dead");
        assert_eq!(store.row(1).await.attempts, 2);
        store.drop_database().await;
    }
}

#[tokio::test]
async fn counted_per_claim_a_failed_attempt_waits_out_its_retry_time() {
    for store in Store::all().await {
        store.queue(&[1]).await;
        assert_eq!(claim_one(&store, "a", at(0), 2).await, Some((1, 1)));
        assert_eq!(
            fail(&store, JOBS, "a", 1, Retry::After(at(10))).await,
            "queued"
        );
        let waiting = store.row(1).await;
        assert_eq!(
            (waiting.lease_owner, waiting.lease_expires_at),
            (None, Some(at(10)))
        );
        assert_eq!(claim_one(&store, "b", at(9), 2).await, None);
        assert_eq!(claim_one(&store, "b", at(11), 2).await, Some((1, 2)));
        // The last attempt keeps no waiting time.
        assert_eq!(
            fail(&store, JOBS, "b", 1, Retry::After(at(20))).await,
            "dead"
        );
        let dead = store.row(1).await;
        assert_eq!((dead.lease_owner, dead.lease_expires_at), (None, None));
        store.drop_database().await;
    }
}

#[tokio::test]
async fn on_postgres_two_claims_at_once_never_take_one_row_twice() {
    let Some(store) = Store::postgres().await else {
        return;
    };
    store.queue(&[1, 2, 3, 4]).await;
    let batch = |holder: &str| {
        let mut claim = JOBS.claim(holder, at(0), lease().expiry(at(0)), 3, "queued_at");
        claim
            .pick("state = 'queued'")
            .up_to(2)
            .skip_locked()
            .returning("id, attempts");
        claim.into_sql(Backend::Postgres)
    };
    // Skipping locked rows: the second claim passes the first's uncommitted rows by.
    let mut first = store.db.begin().await.unwrap();
    let mut taken: Vec<(i64, i64)> = batch("a").fetch_all_in(&mut first).await.unwrap();
    let mut passed_by: Vec<(i64, i64)> = batch("b").fetch_all(&store.db).await.unwrap();
    first.commit().await.unwrap();
    taken.sort_unstable();
    passed_by.sort_unstable();
    assert_eq!(taken, [(1, 1), (2, 1)]);
    assert_eq!(passed_by, [(3, 1), (4, 1)]);

    // Testing again instead: the second claim waits for the first, then finds its row held.
    store
        .run("UPDATE lease_jobs SET lease_owner = NULL, lease_expires_at = NULL, attempts = 0")
        .await;
    let one = |holder: &str| {
        let mut claim = JOBS.claim(holder, at(0), lease().expiry(at(0)), 3, "queued_at");
        claim
            .pick("state = 'queued'")
            .recheck("state = 'queued'")
            .returning("id, attempts");
        claim.into_sql(Backend::Postgres)
    };
    let mut first = store.db.begin().await.unwrap();
    let taken: Vec<(i64, i64)> = one("a").fetch_all_in(&mut first).await.unwrap();
    assert_eq!(taken, [(1, 1)]);
    let db = store.db.clone();
    let second = tokio::spawn(async move { one("b").fetch_all::<(i64, i64)>(&db).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !second.is_finished(),
        "the second claim waits for the first"
    );
    first.commit().await.unwrap();
    assert_eq!(second.await.unwrap().unwrap(), []);
    assert_eq!(store.row(1).await.lease_owner.as_deref(), Some("a"));
    store.drop_database().await;
}

#[test]
fn a_claim_is_written_for_each_database() {
    let mut claim = SENDS.claim("a", at(0), at(60), 3, "d.seq");
    claim
        .alias("d")
        .pick("d.state = 'queued'")
        .up_to(10)
        .skip_locked();
    let postgres = claim.into_sql(Backend::Postgres).text().to_owned();
    assert!(
        postgres.contains("id = ANY(ARRAY(SELECT d.id FROM lease_jobs d"),
        "{postgres}"
    );
    assert!(
        postgres.contains("LIMIT $4 FOR UPDATE OF d SKIP LOCKED))"),
        "{postgres}"
    );
    assert!(
        !postgres.contains("attempts"),
        "counted per failure: {postgres}"
    );

    let mut claim = JOBS.claim("a", at(0), at(60), 3, "queued_at");
    claim.pick("state = 'queued'").skip_locked();
    let sqlite = claim.into_sql(Backend::Sqlite).text().to_owned();
    assert!(
        sqlite.contains("SET lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1"),
        "{sqlite}"
    );
    assert!(sqlite.contains("id = (SELECT id FROM lease_jobs WHERE (lease_expires_at IS NULL OR lease_expires_at < $3) AND attempts < 3 AND state = 'queued' ORDER BY queued_at LIMIT 1)"), "{sqlite}");
    assert!(!sqlite.contains("FOR UPDATE"), "{sqlite}");
}

#[test]
fn holders_differ_per_worker_and_per_claim() {
    let worker = Holder::of_this_process();
    let other = Holder::of_this_process();
    assert_ne!(worker, other);
    let pid = format!(":{}:", std::process::id());
    assert!(worker.contains(&pid), "{worker}");
    let claim = worker.for_one_claim();
    assert!(claim.starts_with(&format!("{worker}:")), "{claim}");
    assert_ne!(claim, worker.for_one_claim());
}

#[test]
fn a_lease_runs_out_its_length_after_it_was_taken_and_never_past_the_year_9999() {
    assert_eq!(lease().expiry(at(0)), at(LEASE_SECONDS));
    let latest = Lease::new(Duration::MAX).expiry(at(0));
    assert_eq!(latest.to_rfc3339(), "9999-12-31T23:59:59+00:00");
    let ten_thousand_years = Duration::from_secs(10_000 * 366 * 24 * 3600);
    assert_eq!(Lease::new(ten_thousand_years).expiry(at(0)), latest);
}

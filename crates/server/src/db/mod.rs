//! The metadata store: one code base for SQLite (embedded default) and PostgreSQL
//! (scale-out), chosen by the URL scheme at start.
//!
//! sqlx's `Any` driver cannot bind uuids or timestamps, so [`Db`] is an enum over the two
//! pools and store functions run the same SQL text on either through [`on_db!`] and
//! [`on_tx!`]. `$1` placeholders work on both. Where the dialects differ, a store fn matches
//! on the enum with both arms side by side.
//!
//! On SQLite two more paths exist for hot statements: [`SqliteReader`] runs reads outside
//! transactions on rusqlite connections, and [`SqliteWriter`] runs whole write transactions on
//! a thread of its own (the credit ledger's); both bind values encoded as sqlx encodes them.
//!
//! # Which path a new store function takes
//!
//! Three paths reach SQLite, and each costs something the others do not, so a store function
//! takes the first that fits:
//!
//! 1. **The sqlx pool** ([`Db`], [`on_db!`], [`on_tx!`], [`Tx`]), for ordinary async SQL: every
//!    write and transaction, and every read that is not measured hot. It is the only path on
//!    PostgreSQL, so a function written for it works on both databases. Start here.
//! 2. **The reader** ([`SqliteReader`], `sqlite_read.rs`), for a hot read path only: a read
//!    that runs on most requests, outside any transaction, where sqlx's per-statement
//!    hand-off to its connection thread was measured as the cost (the list benchmark in
//!    docs/benchmarks.md: 1.1 ms -> 0.67 ms of CPU per list request). It runs inline on the
//!    request's task, so its statements must be bounded and short; it never writes.
//! 3. **The writer thread** ([`SqliteWriter`], `sqlite_write.rs`), only for ledger-style work:
//!    short synchronous write transactions, all taking the same rows, whose throughput was
//!    measured faster here than through the pool. Today that is the credit ledger alone
//!    (`credits/service.rs` runs `credits/ledger.rs` on it). The figures that justify it are
//!    `scripts/bench-credits` (the ignored tests `credits::load::bench_credit_pairs_*`),
//!    recorded in docs/benchmarks.md, "Credits: reserve+spend pairs": 309 reserve+spend
//!    pairs/s with every statement through sqlx, 1,498 with the transactions on the writer
//!    thread, 2,809 with group commit (p99 360.6 ms -> 11.8 ms), 32 clients on one tenant.
//!
//! A function may use the writer thread only when all of these hold: it is a write
//! transaction of a few statements with no wait inside (no network, no file, no timer, no
//! other pool: one such wait holds every SQLite write of the process behind it); a benchmark
//! shows the pool is the bottleneck for it, recorded in docs/benchmarks.md beside the
//! credits figures; and it also runs on PostgreSQL through the pool, as the ledger does. The
//! ledger's functions are `async` so that one body serves both paths; on the writer thread
//! their futures must be complete at the first poll, and [`SqliteWriter::ready`] refuses one
//! that is not (a 500 and an error in the log) instead of letting it hang the writer. An
//! `.await` on real I/O added to `ledger.rs` shows there, in the credits tests on SQLite.

pub(crate) mod changes;
mod json;
mod sql;
mod sqlite_read;
mod sqlite_write;
mod tx;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::migrate::MigrateDatabase;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, Postgres, SqlitePool};

pub(crate) use tx::Tx;

use crate::config::DatabaseConfig;
use crate::limits;
pub(crate) use json::JsonText;
pub(crate) use sql::{Arg, IDS_PER_STATEMENT, KeysetPage, SortValue, Sql};
pub use sqlite_read::SqliteReader;
pub(crate) use sqlite_read::{opt_time_at, opt_uuid_at, time_at, uuid_at};
pub(crate) use sqlite_write::{SqliteWriteTx, SqliteWriter};

/// Appended to the SQLite file's name for the lock file that serialises migrations
/// (`basin.db.migrate-lock`).
const SQLITE_MIGRATE_LOCK_SUFFIX: &str = ".migrate-lock";

/// Runs `$body` with `$conn` bound to whichever pool `$db` holds.
#[macro_export]
macro_rules! on_db {
    ($db:expr, |$conn:ident| $body:expr) => {
        match $db {
            $crate::Db::Sqlite($conn, _) => $body,
            $crate::Db::Postgres($conn) => $body,
        }
    };
}

/// Which database a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// Embedded SQLite file.
    Sqlite,
    /// PostgreSQL server.
    Postgres,
}

/// A pool on one of the two supported databases.
#[derive(Debug, Clone)]
pub enum Db {
    /// SQLite (WAL, foreign keys on): the sqlx pool for writes and transactions, and the
    /// synchronous read path for the hot reads.
    Sqlite(SqlitePool, Arc<SqliteReader>),
    /// PostgreSQL.
    Postgres(PgPool),
}

/// Errors of the store layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum StoreError {
    /// SQLite in memory would be a separate empty database on every connection.
    #[error("an in-memory SQLite database is not supported: name a file (sqlite://path/basin.db)")]
    InMemorySqlite,
    /// The URL names no supported database.
    #[error("unsupported database URL scheme in '{0}': use sqlite:// or postgres://")]
    UnsupportedUrl(String),
    /// No row where one was required.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// Stored data breaks an invariant the code relies on (found, never followed).
    #[error("corrupt data: {0}")]
    Corrupt(&'static str),
    /// A unique constraint was violated.
    #[error("unique constraint violated: {0}")]
    Duplicate(String),
    /// The pool had no free connection in time, or the database is down.
    #[error("database unavailable")]
    Unavailable(#[source] sqlx::Error),
    /// Any other database error.
    #[error("database error")]
    Database(#[source] sqlx::Error),
    /// A database error on the synchronous SQLite read path.
    #[error("database error")]
    Read(#[source] rusqlite::Error),
    /// Migrations failed.
    #[error("migration failed")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A transaction body handed to the SQLite writer thread awaited something not ready at
    /// once, which would have blocked the thread ([`SqliteWriter::ready`]).
    #[error("a transaction on the SQLite writer thread was not ready at once")]
    NotReadyOnWriter,
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                Self::Unavailable(error)
            }
            sqlx::Error::Database(db_error) if db_error.is_unique_violation() => {
                Self::Duplicate(db_error.constraint().unwrap_or("unique").to_owned())
            }
            _ => Self::Database(error),
        }
    }
}

/// Result of store functions.
pub(crate) type StoreResult<T> = Result<T, StoreError>;

impl Db {
    /// A UUID as an SQL literal of this database's dialect, for statements that name more
    /// ids than either database accepts placeholders. Only ever formatted from a [`Uuid`], so
    /// it cannot carry anything but hex digits.
    ///
    /// [`Uuid`]: uuid::Uuid
    pub(crate) fn uuid_literal(&self, id: uuid::Uuid) -> String {
        match self {
            Self::Sqlite(..) => format!("X'{}'", id.simple()),
            Self::Postgres(_) => format!("'{id}'::uuid"),
        }
    }

    /// Connects to `url`, creating a missing SQLite file or PostgreSQL database.
    pub(crate) async fn connect(url: &str, config: &DatabaseConfig) -> StoreResult<Self> {
        let acquire_timeout = config.acquire_timeout_ms;
        if url.starts_with("sqlite:") {
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_millis(limits::SQLITE_BUSY_TIMEOUT_MS))
                // A page of rows crosses from the SQLite worker thread in one go instead of
                // stalling on back-pressure every 50 rows.
                .row_buffer_size(1024);
            let path = options.get_filename().to_path_buf();
            let in_memory = url.contains(":memory:") || url.contains("mode=memory");
            if path.as_os_str().is_empty() || in_memory {
                return Err(StoreError::InMemorySqlite);
            }
            if let Some(parent) = path.parent()
                && !parent.as_os_str().is_empty()
            {
                std::fs::create_dir_all(parent)
                    .map_err(|error| StoreError::Unavailable(sqlx::Error::Io(error)))?;
            }
            let pool = SqlitePoolOptions::new()
                .max_connections(config.max_connections.get())
                .acquire_timeout(acquire_timeout)
                .connect_with(options)
                .await?;
            let idle_max = usize::try_from(config.max_connections.get()).unwrap_or(usize::MAX);
            Ok(Self::Sqlite(
                pool,
                Arc::new(SqliteReader::new(path, idle_max)),
            ))
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            // Processes starting together on a new database all find it missing; the ones
            // whose CREATE DATABASE loses the race find it there afterwards.
            if !Postgres::database_exists(url).await?
                && let Err(error) = Postgres::create_database(url).await
                && !Postgres::database_exists(url).await?
            {
                return Err(error.into());
            }
            let options = PgConnectOptions::from_str(url)?;
            let pool = PgPoolOptions::new()
                .max_connections(config.max_connections.get())
                .acquire_timeout(acquire_timeout)
                .connect_with(options)
                .await?;
            Ok(Self::Postgres(pool))
        } else {
            Err(StoreError::UnsupportedUrl(
                crate::config::mask_url_password(url),
            ))
        }
    }

    /// A writer thread of its own on the SQLite file (see [`SqliteWriter`]); `None` on
    /// PostgreSQL.
    pub(crate) fn sqlite_writer(&self) -> StoreResult<Option<SqliteWriter>> {
        match self {
            Self::Sqlite(_, reader) => SqliteWriter::open(reader.path()).map(Some),
            Self::Postgres(_) => Ok(None),
        }
    }

    /// Which database this is.
    pub(crate) fn backend(&self) -> Backend {
        match self {
            Self::Sqlite(..) => Backend::Sqlite,
            Self::Postgres(_) => Backend::Postgres,
        }
    }

    /// Applies pending migrations. Safe to run from several processes at once: sqlx takes an
    /// advisory lock on PostgreSQL, and on SQLite a file lock next to the database
    /// ([`SQLITE_MIGRATE_LOCK_SUFFIX`]) is held for the whole run. sqlx takes no lock on SQLite:
    /// two processes starting on a new store both read that no migration was applied, and the
    /// second failed on `table tenants already exists` (SQLite serialises each statement, not
    /// the read of what is applied and the migration after it).
    pub(crate) async fn migrate(&self) -> StoreResult<()> {
        match self {
            Self::Sqlite(pool, reader) => {
                let mut lock = reader.path().as_os_str().to_owned();
                lock.push(SQLITE_MIGRATE_LOCK_SUFFIX);
                let _held = basin_blob::file_lock::lock_exclusive(lock.into())
                    .await
                    .map_err(|error| StoreError::Unavailable(sqlx::Error::Io(error)))?;
                sqlx::migrate!("./migrations/sqlite").run(pool).await?;
            }
            Self::Postgres(pool) => sqlx::migrate!("./migrations/postgres").run(pool).await?,
        }
        Ok(())
    }

    /// Checks that the database answers and can take a write, within
    /// [`limits::HEALTH_PROBE_TIMEOUT_MS`]: one transaction updates the probe row and rolls
    /// back. A database that answers reads but whose writers are stuck (a lock never released,
    /// a read-only standby) fails.
    pub(crate) async fn check_writable(&self) -> StoreResult<()> {
        let timeout = Duration::from_millis(limits::HEALTH_PROBE_TIMEOUT_MS);
        match self {
            // On its own connection, not the pool's: a probe cut off by its timeout must not
            // leave a pooled connection inside a transaction that holds the write lock.
            Self::Sqlite(_, reader) => {
                let reader = Arc::clone(reader);
                tokio::task::spawn_blocking(move || reader.probe_write(timeout))
                    .await
                    .map_err(|error| {
                        StoreError::Unavailable(sqlx::Error::Io(std::io::Error::other(error)))
                    })?
            }
            Self::Postgres(pool) => {
                let probe = async {
                    let mut tx = pool.begin().await?;
                    let statement_timeout =
                        format!("SET LOCAL statement_timeout = {}", timeout.as_millis());
                    sqlx::query(sqlx::AssertSqlSafe(statement_timeout))
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query("UPDATE health_probe SET checked_at = now() WHERE id = 1")
                        .execute(&mut *tx)
                        .await?;
                    tx.rollback().await
                };
                match tokio::time::timeout(timeout, probe).await {
                    Ok(result) => Ok(result?),
                    Err(_) => Err(StoreError::Unavailable(sqlx::Error::PoolTimedOut)),
                }
            }
        }
    }

    /// Begins a write transaction.
    pub(crate) async fn begin(&self) -> StoreResult<Tx> {
        Ok(match self {
            // A deferred SQLite transaction that reads first and writes later fails with
            // SQLITE_BUSY when another writer got in between, bypassing busy_timeout;
            // IMMEDIATE takes the write lock up front so writers wait their turn instead.
            Self::Sqlite(pool, _) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Self::Postgres(pool) => Tx::Postgres(pool.begin().await?),
        })
    }

    /// Closes the pool, waiting up to `within` for connections to be returned; a connection
    /// still busy then (a statement that will not end) is abandoned with the process.
    pub async fn close(&self, within: Duration) {
        if let Self::Sqlite(_, reader) = self {
            reader.close();
        }
        if tokio::time::timeout(within, async { on_db!(self, |pool| pool.close().await) })
            .await
            .is_err()
        {
            tracing::warn!("database connections still busy at shutdown; abandoning them");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    fn names(dir: &str) -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[tokio::test]
    async fn an_in_memory_sqlite_database_is_refused_with_a_reason() {
        let config = crate::config::DatabaseConfig::default();
        for url in ["sqlite::memory:", "sqlite://basin.db?mode=memory"] {
            let error = super::Db::connect(url, &config).await.unwrap_err();
            assert!(
                matches!(error, super::StoreError::InMemorySqlite),
                "{url}: {error:?}"
            );
        }
    }

    #[test]
    fn both_migration_trees_hold_the_same_file_names() {
        let root = env!("CARGO_MANIFEST_DIR");
        let sqlite = names(&format!("{root}/migrations/sqlite"));
        let postgres = names(&format!("{root}/migrations/postgres"));
        assert!(!sqlite.is_empty());
        assert_eq!(sqlite, postgres);
    }
}

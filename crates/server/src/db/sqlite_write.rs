//! The SQLite writer thread: one read-write rusqlite connection on a thread of its own that
//! runs whole write transactions handed to it, one after the other.
//!
//! Why: sqlx runs each SQLite connection on a worker thread and passes every statement across
//! channels. For the credit ledger, whose requests are short transactions of about ten
//! statements all taking the same pool, those hand-offs were the cost: about 300
//! reserve+spend pairs per second through sqlx. Here a transaction crosses threads once, its
//! statements run on prepared, cached statements, and as SQLite has one writer anyway, one
//! thread loses nothing. Statements bind [`Arg`]s encoded exactly as sqlx encodes them, so
//! rows written here read back equal through sqlx and the other way round.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use futures::FutureExt;
use rusqlite::{Connection, OpenFlags, Row};

use super::sqlite_read::{bind, unavailable};
use super::{Sql, StoreError, StoreResult};
use crate::limits;

/// Statements kept prepared on the writer's connection.
const PREPARED_STATEMENTS_MAX: usize = 128;
/// Jobs one transaction of the writer takes at most (group commit).
const JOBS_PER_COMMIT_MAX: usize = 64;

/// A job's answer, sent once the transaction that holds its work is committed (`Ok`) or
/// failed to commit (`Err`).
type Completion = Box<dyn FnOnce(Result<(), StoreError>) + Send>;

/// A unit of work: runs inside its own savepoint; says whether it succeeded (keep its
/// writes) and how to answer once the commit is known.
type Job = Box<dyn FnOnce(&mut SqliteWriteTx<'_>) -> (bool, Completion) + Send>;

/// Runs transactions on the writer thread. The thread ends when the last handle is dropped.
#[derive(Debug)]
pub(crate) struct SqliteWriter {
    jobs: mpsc::Sender<Job>,
}

impl SqliteWriter {
    /// Opens a connection to `path` and starts its thread.
    pub(crate) fn open(path: &Path) -> StoreResult<Self> {
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.busy_timeout(Duration::from_millis(limits::SQLITE_BUSY_TIMEOUT_MS))?;
        connection.pragma_update(None, "foreign_keys", true)?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS_MAX);
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("basin-sqlite-writer".into())
            .spawn(move || {
                let mut connection = connection;
                while let Ok(first) = queue.recv() {
                    let mut batch = vec![first];
                    while batch.len() < JOBS_PER_COMMIT_MAX
                        && let Ok(job) = queue.try_recv()
                    {
                        batch.push(job);
                    }
                    run_batch(&mut connection, batch);
                }
            })
            .map_err(|error| StoreError::Unavailable(sqlx::Error::Io(error)))?;
        Ok(Self { jobs })
    }

    /// Runs `work` in a write transaction on the writer thread: its writes are kept when it
    /// returns `Ok` and undone otherwise, and its answer comes once they are committed.
    ///
    /// Jobs waiting together share one transaction (`BEGIN IMMEDIATE` ... `COMMIT`), each in
    /// a savepoint of its own, one after the other: the same result as one transaction each,
    /// with one commit for all (group commit), which spares the WAL most of its writes under
    /// load.
    pub(crate) async fn transaction<T, E>(
        &self,
        work: impl FnOnce(&mut SqliteWriteTx<'_>) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel::<Result<T, E>>();
        let job: Job = Box::new(move |tx| {
            let result = work(tx);
            let kept = result.is_ok();
            let completion: Completion = Box::new(move |commit| {
                let answer = match (result, commit) {
                    (Ok(value), Ok(())) => Ok(value),
                    (Ok(_), Err(error)) => Err(E::from(error)),
                    (Err(error), _) => Err(error),
                };
                let _ = reply.send(answer);
            });
            (kept, completion)
        });
        self.jobs
            .send(job)
            .map_err(|_| E::from(unavailable(rusqlite::Error::InvalidQuery)))?;
        answer
            .await
            .map_err(|_| E::from(unavailable(rusqlite::Error::InvalidQuery)))?
    }
}

impl SqliteWriter {
    /// The output of `future`, an async transaction body run inside [`Self::transaction`]
    /// (the credit ledger's, written once for both databases), which must be complete at its
    /// first poll: on this thread its statements are synchronous rusqlite calls, so nothing
    /// in it waits. A body that awaits anything else (a pool, a socket, a timer) would, under
    /// `block_on`, hold the writer thread and every write queued behind it until that
    /// completes, or forever; it is refused instead, with [`StoreError::NotReadyOnWriter`]
    /// (a 500) and an error in the log, and its savepoint is rolled back.
    pub(crate) fn ready<F: Future>(future: F) -> Result<F::Output, StoreError> {
        future.now_or_never().ok_or_else(|| {
            tracing::error!(
                "a transaction on the SQLite writer thread awaited something that was not \
                 ready (real I/O in a ledger function?): refused so that the writer does not hang"
            );
            StoreError::NotReadyOnWriter
        })
    }
}

/// Runs `batch` in one transaction, each job in a savepoint, and answers every job after the
/// commit. A job that panics is rolled back and dropped unanswered (its caller sees the store
/// as unavailable); the thread and the other jobs carry on. When the transaction cannot
/// begin, every job is dropped unanswered alike.
fn run_batch(connection: &mut Connection, batch: Vec<Job>) {
    if connection.execute_batch("BEGIN IMMEDIATE").is_err() {
        return;
    }
    let mut completions = Vec::with_capacity(batch.len());
    for job in batch {
        // SQLite rolls a whole transaction back on some errors (a full disk, I/O): then the
        // jobs that ran are undone, and the rest must not run outside a transaction.
        if connection.is_autocommit() || connection.execute_batch("SAVEPOINT job").is_err() {
            break;
        }
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            job(&mut SqliteWriteTx {
                connection: &mut *connection,
            })
        }));
        let kept = matches!(outcome, Ok((true, _)));
        let end = if kept {
            "RELEASE job"
        } else {
            "ROLLBACK TO job; RELEASE job"
        };
        let _ = connection.execute_batch(end);
        if let Ok((_, completion)) = outcome {
            completions.push(completion);
        }
    }
    let commit = if connection.is_autocommit() {
        Err(unavailable(rusqlite::Error::InvalidQuery))
    } else {
        connection.execute_batch("COMMIT").map_err(StoreError::from)
    };
    if commit.is_err() && !connection.is_autocommit() {
        let _ = connection.execute_batch("ROLLBACK");
    }
    for completion in completions {
        completion(match &commit {
            Ok(()) => Ok(()),
            Err(_) => Err(unavailable(rusqlite::Error::InvalidQuery)),
        });
    }
}

/// A write transaction on the writer thread.
pub(crate) struct SqliteWriteTx<'c> {
    connection: &'c mut Connection,
}

impl SqliteWriteTx<'_> {
    /// Runs a statement; returns the rows it changed.
    pub(crate) fn execute(&mut self, sql: Sql) -> StoreResult<u64> {
        let Sql { text, args } = sql;
        let mut statement = self.connection.prepare_cached(&text)?;
        bind(&mut statement, &args)?;
        let changed = statement.raw_execute().map_err(write_error)?;
        Ok(u64::try_from(changed).unwrap_or(u64::MAX))
    }

    /// Runs a query and decodes every row with `decode`.
    pub(crate) fn fetch<T>(
        &mut self,
        sql: Sql,
        decode: fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> StoreResult<Vec<T>> {
        let Sql { text, args } = sql;
        let mut statement = self.connection.prepare_cached(&text)?;
        bind(&mut statement, &args)?;
        let mut rows = statement.raw_query();
        let mut decoded = Vec::new();
        while let Some(row) = rows.next().map_err(write_error)? {
            decoded.push(decode(row)?);
        }
        Ok(decoded)
    }
}

/// A unique constraint violated is [`StoreError::Duplicate`], as on the sqlx path.
fn write_error(error: rusqlite::Error) -> StoreError {
    if let rusqlite::Error::SqliteFailure(failure, message) = &error
        && failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
    {
        return StoreError::Duplicate(message.clone().unwrap_or_else(|| "unique".into()));
    }
    error.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Arg;

    fn writer() -> (tempfile::TempDir, SqliteWriter) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("write.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER UNIQUE);")
            .unwrap();
        let writer = SqliteWriter::open(&path).unwrap();
        (dir, writer)
    }

    async fn count(writer: &SqliteWriter) -> i64 {
        writer
            .transaction(|tx| {
                let rows = tx.fetch(Sql::new("SELECT COUNT(*) FROM t"), |row| row.get(0))?;
                Ok::<_, StoreError>(rows.first().copied().unwrap_or(-1))
            })
            .await
            .unwrap()
    }

    fn insert(tx: &mut SqliteWriteTx<'_>, n: i64) -> StoreResult<u64> {
        tx.execute(Sql::with_args(
            "INSERT INTO t (n) VALUES ($1)",
            vec![Arg::I64(n)],
        ))
    }

    #[tokio::test]
    async fn a_transaction_commits_on_ok_and_rolls_back_on_err_or_panic() {
        let (_dir, writer) = writer();
        writer.transaction(|tx| insert(tx, 1)).await.unwrap();
        let failed = writer
            .transaction(|tx| {
                insert(tx, 2)?;
                insert(tx, 1)
            })
            .await;
        assert!(
            matches!(failed, Err(StoreError::Duplicate(_))),
            "{failed:?}"
        );
        let panicked = writer
            .transaction(|tx| -> StoreResult<u64> {
                insert(tx, 3)?;
                panic!("a job that panics")
            })
            .await;
        assert!(matches!(panicked, Err(StoreError::Unavailable(_))));
        assert_eq!(count(&writer).await, 1, "only the committed row is left");
    }

    #[tokio::test]
    async fn a_body_that_is_not_ready_at_once_is_refused_and_the_writer_goes_on() {
        let (_dir, writer) = writer();
        assert_eq!(SqliteWriter::ready(async { 7 }).unwrap(), 7);
        let pending = writer
            .transaction(|tx| {
                SqliteWriter::ready(async move {
                    insert(tx, 1)?;
                    std::future::pending::<()>().await;
                    insert(tx, 2)
                })
                .unwrap_or_else(Err)
            })
            .await;
        assert!(
            matches!(pending, Err(StoreError::NotReadyOnWriter)),
            "{pending:?}"
        );
        writer.transaction(|tx| insert(tx, 3)).await.unwrap();
        assert_eq!(
            count(&writer).await,
            1,
            "the refused body's write was rolled back"
        );
    }
}

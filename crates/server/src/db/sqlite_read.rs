//! The synchronous SQLite read path, for the statements that run on nearly every request
//! (project lists, the ancestor chain behind every permission check).
//!
//! sqlx's SQLite driver runs each connection on a thread of its own and passes every
//! command and every row across channels. On the project list that hand-off, not SQLite,
//! was the cost: a quarter of the server's CPU profile was futex wake-ups and thread
//! switches, and a 100-row page cost about 1.1 ms of CPU. Here a statement runs on a
//! rusqlite connection, rows decoded straight into Rust values, on the task that asked.
//!
//! Running on the async worker instead of tokio's blocking pool is deliberate. These
//! statements are short and bounded (one key lookup, an ancestor chain of at most the depth
//! limit, one page of an index-ordered list) and CPU-bound on a database in the page cache:
//! a 100-row page takes about 0.1 ms. Handing them to the blocking pool measured 500 µs of
//! CPU per list request against 410 µs inline, and 3,300 against 4,300 requests/s, because
//! every hop wakes and parks a thread. The worst case is a filtered list that scans one
//! tenant's projects to fill a page (10,000 rows: a few ms). Anything longer or unbounded
//! (recursive listings, counts, writes) stays on sqlx.
//!
//! Only reads outside transactions come here. Writes, and reads that must see a
//! transaction's own writes, stay on the sqlx pool, which holds SQLite's single writer. In
//! WAL mode readers never wait for that writer, and every connection here sees what was
//! committed before its statement started, as a pooled sqlx read would.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags, Row};
use uuid::Uuid;

use super::{Arg, Sql, StoreError, StoreResult};
use crate::limits;

/// Statements kept prepared per connection. List statements vary with the filters and sort
/// order a request picks (a few dozen shapes), so the default of 16 would thrash.
const PREPARED_STATEMENTS_MAX: usize = 64;

/// Read-only connections to one SQLite file, opened on demand and kept for reuse.
#[derive(Debug)]
pub struct SqliteReader {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    idle_max: usize,
    closed: AtomicBool,
}

impl SqliteReader {
    /// Reads `path`; keeps at most `idle_max` idle connections (more may be open at once
    /// under load, each closed when its statement ends).
    pub(crate) fn new(path: PathBuf, idle_max: usize) -> Self {
        Self {
            path,
            idle: Mutex::new(Vec::new()),
            idle_max,
            closed: AtomicBool::new(false),
        }
    }

    /// Closes the idle connections; every later read fails as unavailable, like a closed
    /// sqlx pool.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Runs `sql` and decodes every row with `decode`.
    pub(crate) fn fetch_all<T>(
        &self,
        sql: Sql,
        decode: fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> StoreResult<Vec<T>> {
        self.with_connection(|connection| {
            let Sql { text, args } = sql;
            let mut statement = connection.prepare_cached(&text)?;
            bind(&mut statement, &args)?;
            let mut rows = statement.raw_query();
            let mut decoded = Vec::new();
            while let Some(row) = rows.next()? {
                decoded.push(decode(row)?);
            }
            Ok(decoded)
        })
    }

    fn with_connection<T>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> StoreResult<T> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(unavailable(rusqlite::Error::InvalidQuery));
        }
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let connection = match idle {
            Some(connection) => connection,
            None => self.open().map_err(StoreError::from)?,
        };
        let result = work(&connection);
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < self.idle_max && !self.closed.load(Ordering::SeqCst) {
            idle.push(connection);
        }
        drop(idle);
        result.map_err(StoreError::from)
    }

    /// Takes the write lock within `timeout`, updates the health probe row and rolls back, on
    /// a connection of its own (blocking: run it off the async workers).
    pub(crate) fn probe_write(&self, timeout: Duration) -> StoreResult<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(unavailable(rusqlite::Error::InvalidQuery));
        }
        let probe = || -> rusqlite::Result<()> {
            let connection = Connection::open_with_flags(
                &self.path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            connection.busy_timeout(timeout)?;
            connection.execute_batch(
                "BEGIN IMMEDIATE; UPDATE health_probe SET checked_at = checked_at WHERE id = 1; ROLLBACK;",
            )
        };
        probe().map_err(|error| match StoreError::from(error) {
            StoreError::Read(error) => unavailable(error),
            other => other,
        })
    }

    /// The database file.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        // Opened read-write (a WAL reader must be able to map the shared-memory index even
        // before the writer created it) but with query_only, so nothing here can write.
        let connection = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.busy_timeout(Duration::from_millis(limits::SQLITE_BUSY_TIMEOUT_MS))?;
        connection.pragma_update(None, "query_only", true)?;
        connection.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS_MAX);
        Ok(connection)
    }
}

pub(super) fn unavailable(error: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(sqlx::Error::Io(std::io::Error::other(error)))
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        match error.sqlite_error_code() {
            Some(
                ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::CannotOpen
                | ErrorCode::SystemIoFailure,
            ) => unavailable(error),
            _ => Self::Read(error),
        }
    }
}

/// Binds `args` to the statement's `$n` placeholders. SQLite numbers named parameters in the
/// order they first appear in the text, so each `$n` is looked up by its name.
pub(super) fn bind(
    statement: &mut rusqlite::CachedStatement<'_>,
    args: &[Arg],
) -> rusqlite::Result<()> {
    for index in 1..=statement.parameter_count() {
        let value = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$'))
            .and_then(|number| number.parse::<usize>().ok())
            .and_then(|number| args.get(number.checked_sub(1)?))
            .map(value_of)
            .ok_or(rusqlite::Error::InvalidParameterCount(index, args.len()))?;
        statement.raw_bind_parameter(index, value)?;
    }
    Ok(())
}

/// A bound value, encoded as sqlx encodes it, so that both paths compare equal values.
fn value_of(arg: &Arg) -> Value {
    match arg {
        Arg::Uuid(id) => Value::Blob(id.as_bytes().to_vec()),
        Arg::Text(text) => Value::Text(text.clone()),
        Arg::Bytes(bytes) => Value::Blob(bytes.clone()),
        Arg::OptText(text) => text.clone().map_or(Value::Null, Value::Text),
        Arg::I64(number) => Value::Integer(*number),
        Arg::Time(time) => Value::Text(time_text(time)),
        Arg::OptTime(time) => time
            .as_ref()
            .map_or(Value::Null, |time| Value::Text(time_text(time))),
        Arg::OptUuid(id) => id.map_or(Value::Null, |id| Value::Blob(id.as_bytes().to_vec())),
        Arg::Date(date) => Value::Text(date.format("%F").to_string()),
        Arg::Bool(value) => Value::Integer(i64::from(*value)),
    }
}

fn time_text(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false)
}

fn decode_error(index: usize, message: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Blob, message.into())
}

/// Column `index` as a UUID stored as 16 bytes.
pub(crate) fn uuid_at(row: &Row<'_>, index: usize) -> rusqlite::Result<Uuid> {
    match row.get_ref(index)? {
        ValueRef::Blob(bytes) => {
            Uuid::from_slice(bytes).map_err(|error| decode_error(index, error.to_string()))
        }
        _ => Err(decode_error(index, "not a 16-byte id".to_owned())),
    }
}

/// Column `index` as a possibly-null UUID.
pub(crate) fn opt_uuid_at(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<Uuid>> {
    match row.get_ref(index)? {
        ValueRef::Null => Ok(None),
        _ => uuid_at(row, index).map(Some),
    }
}

/// Column `index` as a time stored as RFC 3339 text (what sqlx writes).
pub(crate) fn time_at(row: &Row<'_>, index: usize) -> rusqlite::Result<DateTime<Utc>> {
    let text = row.get_ref(index)?.as_str()?;
    DateTime::parse_from_rfc3339(text)
        .map(|time| time.with_timezone(&Utc))
        .map_err(|error| decode_error(index, format!("bad time {text:?}: {error}")))
}

/// Column `index` as a possibly-null time.
pub(crate) fn opt_time_at(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    match row.get_ref(index)? {
        ValueRef::Null => Ok(None),
        _ => time_at(row, index).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn reader_with(setup: &str) -> (tempfile::TempDir, SqliteReader) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch(setup)
            .unwrap();
        (dir, SqliteReader::new(path, 2))
    }

    #[test]
    fn placeholders_bind_by_number_whatever_their_order_in_the_text() {
        let (_dir, reader) = reader_with(
            "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'y'), (2, 'y'), (2, 'x');",
        );
        let sql = Sql {
            text: "SELECT a, b FROM t WHERE $2 = a AND $1 = b".to_owned(),
            args: vec![Arg::Text("y".into()), Arg::I64(2)],
        };
        let rows = reader
            .fetch_all(sql, |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
            })
            .unwrap();
        assert_eq!(rows, vec![(2, "y".to_owned())]);
    }

    #[test]
    fn values_are_encoded_as_sqlx_encodes_them() {
        let id = Uuid::now_v7();
        let time = Utc.with_ymd_and_hms(2026, 11, 23, 12, 0, 0).unwrap();
        let (_dir, reader) = reader_with(&format!(
            "CREATE TABLE t (id BLOB, at TEXT); INSERT INTO t VALUES (x'{}', '{}');",
            id.simple(),
            "2026-11-23T12:00:00+00:00"
        ));
        let mut sql = Sql::new("SELECT id, at FROM t WHERE id = $1 AND at = $2");
        sql.arg(Arg::Uuid(id));
        sql.arg(Arg::Time(time));
        let rows = reader
            .fetch_all(sql, |row| Ok((uuid_at(row, 0)?, time_at(row, 1)?)))
            .unwrap();
        assert_eq!(rows, vec![(id, time)]);
    }

    #[test]
    fn a_closed_reader_is_unavailable_and_a_missing_parameter_is_an_error() {
        let (_dir, reader) = reader_with("CREATE TABLE t (a INTEGER);");
        let unbound = reader.fetch_all(Sql::new("SELECT a FROM t WHERE a = $1"), |row| {
            row.get::<_, i64>(0)
        });
        assert!(matches!(unbound, Err(StoreError::Read(_))), "{unbound:?}");
        reader.close();
        let closed = reader.fetch_all(Sql::new("SELECT a FROM t"), |row| row.get::<_, i64>(0));
        assert!(
            matches!(closed, Err(StoreError::Unavailable(_))),
            "{closed:?}"
        );
    }

    #[test]
    fn nothing_can_be_written_through_the_reader() {
        let (_dir, reader) = reader_with("CREATE TABLE t (a INTEGER);");
        let write = reader.fetch_all(Sql::new("INSERT INTO t VALUES (1) RETURNING a"), |row| {
            row.get::<_, i64>(0)
        });
        assert!(write.is_err(), "{write:?}");
    }
}

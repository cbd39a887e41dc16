//! Statements built piece by piece, for the lists whose shape depends on the request
//! (filters, sort keys, keyset positions): trusted text, numbered placeholders, bound values,
//! run on either database or on the synchronous SQLite read path.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::db::{Db, StoreResult, Tx};
use crate::{on_db, on_tx};

/// Ids one statement binds at most in an `IN` list ([`Sql::push_uuids`]): well below what
/// either database accepts (SQLite 32,766 placeholders, PostgreSQL 65,535), so a statement
/// never fails on the length of a list it was given.
pub(crate) const IDS_PER_STATEMENT: usize = 500;

/// Binds every [`Arg`] to a sqlx query of either backend.
macro_rules! bind_args {
    ($query:expr, $args:expr) => {{
        let mut query = $query;
        for arg in $args {
            query = match arg {
                Arg::Uuid(value) => query.bind(value),
                Arg::Text(value) => query.bind(value),
                Arg::Bytes(value) => query.bind(value),
                Arg::OptText(value) => query.bind(value),
                Arg::I64(value) => query.bind(value),
                Arg::Time(value) => query.bind(value),
                Arg::OptTime(value) => query.bind(value),
                Arg::OptUuid(value) => query.bind(value),
                Arg::Date(value) => query.bind(value),
                Arg::Bool(value) => query.bind(value),
            };
        }
        query
    }};
}

/// A value bound to a [`Sql`] statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    /// A UUID (or typed id).
    Uuid(uuid::Uuid),
    /// Text.
    Text(String),
    /// Possibly-null text.
    OptText(Option<String>),
    /// Bytes (hashes).
    Bytes(Vec<u8>),
    /// Integer.
    I64(i64),
    /// Time.
    Time(chrono::DateTime<chrono::Utc>),
    /// Possibly-null time.
    OptTime(Option<chrono::DateTime<chrono::Utc>>),
    /// Possibly-null UUID.
    OptUuid(Option<uuid::Uuid>),
    /// A calendar date.
    Date(chrono::NaiveDate),
    /// A boolean.
    Bool(bool),
}

/// SQL text built piece by piece with numbered placeholders, for the statements whose shape
/// depends on the request (filters, sort keys). Only trusted fragments go into the text;
/// every value goes through [`Sql::arg`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Sql {
    pub(super) text: String,
    pub(super) args: Vec<Arg>,
}

impl Sql {
    /// Starts with a trusted fragment.
    pub(crate) fn new(fragment: &str) -> Self {
        Self {
            text: fragment.to_owned(),
            args: Vec::new(),
        }
    }

    /// A trusted statement with its arguments for `$1`, `$2`, ... in order.
    pub(crate) fn with_args(text: &str, args: Vec<Arg>) -> Self {
        Self {
            text: text.to_owned(),
            args,
        }
    }

    /// The statement's text, for tests of the code that builds it.
    #[cfg(test)]
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Appends a trusted fragment.
    pub(crate) fn push(&mut self, fragment: &str) -> &mut Self {
        self.text.push_str(fragment);
        self
    }

    /// Binds a value and returns its placeholder (`$3`).
    pub(crate) fn arg(&mut self, value: Arg) -> String {
        self.args.push(value);
        format!("${}", self.args.len())
    }

    /// Binds each of `ids` and appends their placeholders in parentheses (`($2, $3)`), for an
    /// `IN` list. A caller with more than [`IDS_PER_STATEMENT`] ids runs one statement per
    /// chunk of them.
    pub(crate) fn push_uuids(&mut self, ids: impl IntoIterator<Item = Uuid>) -> &mut Self {
        let placeholders: Vec<String> = ids.into_iter().map(|id| self.arg(Arg::Uuid(id))).collect();
        self.push("(").push(&placeholders.join(", ")).push(")")
    }

    /// Fetches every row as `T`.
    pub(crate) async fn fetch_all<T>(self, db: &Db) -> StoreResult<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
            + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
            + Send
            + Unpin,
    {
        let Sql { text, args } = self;
        Ok(on_db!(db, |pool| {
            let query = sqlx::query_as::<_, T>(sqlx::AssertSqlSafe(text));
            let query = bind_args!(query, args);
            query.fetch_all(pool).await
        })?)
    }

    /// Fetches every row as `T` inside a transaction, seeing its own writes.
    pub(crate) async fn fetch_all_in<T>(self, tx: &mut Tx) -> StoreResult<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
            + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
            + Send
            + Unpin,
    {
        let Sql { text, args } = self;
        Ok(on_tx!(tx, |conn| {
            let query = sqlx::query_as::<_, T>(sqlx::AssertSqlSafe(text));
            let query = bind_args!(query, args);
            query.fetch_all(conn).await
        })?)
    }

    /// Fetches the one row as `T` of a statement that returns at most one, if it returned it.
    pub(crate) async fn fetch_optional<T>(self, db: &Db) -> StoreResult<Option<T>>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
            + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
            + Send
            + Unpin,
    {
        Ok(self.fetch_all(db).await?.pop())
    }

    /// [`Self::fetch_optional`] inside a transaction.
    pub(crate) async fn fetch_optional_in<T>(self, tx: &mut Tx) -> StoreResult<Option<T>>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
            + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
            + Send
            + Unpin,
    {
        Ok(self.fetch_all_in(tx).await?.pop())
    }

    /// Runs a statement on its own; returns the rows it changed.
    pub(crate) async fn execute(self, db: &Db) -> StoreResult<u64> {
        let Sql { text, args } = self;
        Ok(on_db!(db, |pool| {
            let query = sqlx::query(sqlx::AssertSqlSafe(text));
            let query = bind_args!(query, args);
            query.execute(pool).await.map(|done| done.rows_affected())
        })?)
    }

    /// Runs a statement inside `tx`; returns the rows it changed.
    pub(crate) async fn execute_in(self, tx: &mut Tx) -> StoreResult<u64> {
        let Sql { text, args } = self;
        Ok(on_tx!(tx, |conn| {
            let query = sqlx::query(sqlx::AssertSqlSafe(text));
            let query = bind_args!(query, args);
            query.execute(conn).await.map(|done| done.rows_affected())
        })?)
    }

    /// Fetches one integer (a count) inside `tx`.
    pub(crate) async fn fetch_count_in(self, tx: &mut Tx) -> StoreResult<i64> {
        let Sql { text, args } = self;
        Ok(on_tx!(tx, |conn| {
            let query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(text));
            let query = bind_args!(query, args);
            query.fetch_one(conn).await
        })?)
    }

    /// Fetches one integer (a count).
    pub(crate) async fn fetch_count(self, db: &Db) -> StoreResult<i64> {
        let Sql { text, args } = self;
        Ok(on_db!(db, |pool| {
            let query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(text));
            let query = bind_args!(query, args);
            query.fetch_one(pool).await
        })?)
    }
}

/// The value of a list's sort column at a position (the last row of the previous page).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SortValue {
    /// A text column (names, access levels).
    Text(String),
    /// A time column.
    Time(DateTime<Utc>),
}

/// One page of a keyset-paged list, the one way every list pages: ordered by `column` with the
/// row id as tie-breaker, the rows after `after`, at most `fetch` of them (a page and one more,
/// to tell whether another page follows). `column` is a trusted identifier, never input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeysetPage {
    /// The sort column, as SQL (`p.name`, `created_at`).
    pub(crate) column: &'static str,
    /// The id column, as SQL (`p.id`, `id`).
    pub(crate) id_column: &'static str,
    /// Largest first.
    pub(crate) descending: bool,
    /// The last row of the previous page: its sort value and id.
    pub(crate) after: Option<(SortValue, Uuid)>,
    /// Rows to fetch.
    pub(crate) fetch: i64,
}

impl Sql {
    /// Appends ` AND (column, id) > (value, id)` (`<` when descending) for a page after the
    /// first; nothing on the first page. Goes inside a `WHERE`.
    pub(crate) fn keyset_after(&mut self, page: &KeysetPage) -> &mut Self {
        if let Some((value, id)) = &page.after {
            let value = self.arg(match value {
                SortValue::Text(text) => Arg::Text(text.clone()),
                SortValue::Time(time) => Arg::Time(*time),
            });
            let id = self.arg(Arg::Uuid(*id));
            let comparison = if page.descending { "<" } else { ">" };
            self.push(&format!(
                " AND ({}, {}) {comparison} ({value}, {id})",
                page.column, page.id_column
            ));
        }
        self
    }

    /// Appends ` ORDER BY column, id LIMIT fetch`.
    pub(crate) fn keyset_order(&mut self, page: &KeysetPage) -> &mut Self {
        let direction = if page.descending { "DESC" } else { "ASC" };
        let limit = self.arg(Arg::I64(page.fetch));
        self.push(&format!(
            " ORDER BY {} {direction}, {} {direction} LIMIT {limit}",
            page.column, page.id_column
        ))
    }
}

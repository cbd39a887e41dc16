//! The statements of a leased queue, built for either database. Each is an `UPDATE` of the
//! queue's table: the part every queue shares (the lease columns, the attempts, the test that
//! the caller holds the row) is written here, and the area adds what its rows need (its
//! states, its columns, its key) as fragments of trusted SQL with the values bound through
//! [`Claim::arg`] and [`Update::arg`]. The result is an ordinary [`Sql`], which the area's
//! store runs on the pool or inside its own transaction.
//!
//! A queue's attempt limit is written into the text as a number rather than bound: it is a
//! setting, not a value of a request, a `u32` carries nothing but digits, and the conditions
//! that name it (the one [`LeasedTable::fail`] hands the area) stay plain text that any
//! statement can take.

use chrono::{DateTime, Utc};

use crate::db::{Arg, Backend, Sql};
use crate::leases::{ATTEMPTS, Counting, EXPIRES, HOLDER, LeasedTable};

/// A claim being built: one statement that picks free rows, oldest first, and writes the
/// holder and the lease into them.
///
/// A row is free when no live lease holds it (`lease_expires_at` NULL or past) and, on a table
/// that counts attempts per claim, it has attempts left; the area adds which of its states
/// may be claimed ([`Self::pick`]). Two claimers that pick the same row at once on PostgreSQL
/// must not both get it; a queue says how ([`Self::skip_locked`], [`Self::recheck`], or both).
/// On SQLite one writer runs at a time, so every claim is exclusive by itself.
#[derive(Debug)]
pub(crate) struct Claim {
    /// The update that writes the lease; the rows it writes are added last.
    update: Update,
    now: String,
    attempts_max: u32,
    pick: Vec<String>,
    alias: Option<&'static str>,
    order_by: &'static str,
    limit: Option<String>,
    skip_locked: bool,
    recheck: Option<Vec<String>>,
}

impl LeasedTable {
    /// A claim for `holder` at `now`, its lease running out at `expiry`, of the row that comes
    /// first by `order_by` (SQL over the table's columns). `attempts_max` is the queue's limit:
    /// a table that counts per claim takes no row that has used it; on one that counts per
    /// failure, the failure that uses it gives the row up ([`Self::fail`]), so no row to claim
    /// has used it.
    pub(crate) fn claim(
        &self,
        holder: &str,
        now: DateTime<Utc>,
        expiry: DateTime<Utc>,
        attempts_max: u32,
        order_by: &'static str,
    ) -> Claim {
        let mut update = self.update();
        let holder = update.arg(Arg::Text(holder.to_owned()));
        let expiry = update.arg(Arg::Time(expiry));
        let now = update.arg(Arg::Time(now));
        update.set(&format!("{HOLDER} = {holder}, {EXPIRES} = {expiry}"));
        if self.counting == Counting::PerClaim {
            update.set(&format!("{ATTEMPTS} = {ATTEMPTS} + 1"));
        }
        Claim {
            update,
            now,
            attempts_max,
            pick: Vec::new(),
            alias: None,
            order_by,
            limit: None,
            skip_locked: false,
            recheck: None,
        }
    }
}

impl Claim {
    /// Binds a value for a fragment and returns its placeholder (`$5`).
    pub(crate) fn arg(&mut self, value: Arg) -> String {
        self.update.arg(value)
    }

    /// Assignments the claim makes besides the lease (`status = 'InProgress'`).
    pub(crate) fn set(&mut self, assignments: &str) -> &mut Self {
        self.update.set(assignments);
        self
    }

    /// The columns the claim returns of each row it took.
    pub(crate) fn returning(&mut self, columns: &str) -> &mut Self {
        self.update.returning(columns);
        self
    }

    /// Names the table `alias` in the statement that picks the rows, for conditions that
    /// compare a candidate with other rows of the same table.
    pub(crate) fn alias(&mut self, alias: &'static str) -> &mut Self {
        self.alias = Some(alias);
        self
    }

    /// A condition a row must meet to be claimed, besides being free (the states the area
    /// claims from, a due time); over the alias when one is set.
    pub(crate) fn pick(&mut self, condition: &str) -> &mut Self {
        self.pick.push(condition.to_owned());
        self
    }

    /// Claims up to `limit` rows at once instead of one.
    pub(crate) fn up_to(&mut self, limit: u32) -> &mut Self {
        self.limit = Some(self.arg(Arg::I64(i64::from(limit))));
        self
    }

    /// On PostgreSQL, locks the rows picked and skips those another claim has locked, so
    /// that claimers never wait on each other.
    pub(crate) fn skip_locked(&mut self) -> &mut Self {
        self.skip_locked = true;
        self
    }

    /// Tests again, on the row being updated, that it is free and meets `condition`: a
    /// PostgreSQL update that waited for another claim of the same row re-reads the row once
    /// that one commits, finds it leased, and claims nothing instead of claiming it twice.
    pub(crate) fn recheck(&mut self, condition: &str) -> &mut Self {
        self.recheck
            .get_or_insert_with(Vec::new)
            .push(condition.to_owned());
        self
    }

    /// The conditions of a free row, over the columns `column` names: no live lease, and
    /// attempts left where a claim is one.
    fn free(&self, column: &dyn Fn(&str) -> String) -> Vec<String> {
        let expires = column(EXPIRES);
        let mut free = vec![format!("({expires} IS NULL OR {expires} < {})", self.now)];
        if self.update.table.counting == Counting::PerClaim {
            free.push(format!("{} < {}", column(ATTEMPTS), self.attempts_max));
        }
        free
    }

    /// The statement for `backend`.
    pub(crate) fn into_sql(self, backend: Backend) -> Sql {
        let table = self.update.table;
        let column = |name: &str| match self.alias {
            Some(alias) => format!("{alias}.{name}"),
            None => name.to_owned(),
        };
        let mut pick = self.free(&column);
        pick.extend(self.pick.iter().cloned());
        let lock = match (self.skip_locked, backend, self.alias) {
            (true, Backend::Postgres, Some(alias)) => format!(" FOR UPDATE OF {alias} SKIP LOCKED"),
            (true, Backend::Postgres, None) => " FOR UPDATE SKIP LOCKED".to_owned(),
            _ => String::new(),
        };
        let from = match self.alias {
            Some(alias) => format!("{} {alias}", table.name),
            None => table.name.to_owned(),
        };
        let picked = format!(
            "SELECT {} FROM {from} WHERE {} ORDER BY {} LIMIT {}{lock}",
            column(table.key),
            pick.join(" AND "),
            self.order_by,
            self.limit.as_deref().unwrap_or("1"),
        );
        let key = table.key;
        // On PostgreSQL `= ANY(ARRAY(...))` makes the update find its rows by key; with
        // `IN (...)` the planner hashes the rows picked and scans the whole table.
        let rows = match (&self.limit, backend) {
            (None, _) => format!("{key} = ({picked})"),
            (Some(_), Backend::Postgres) => format!("{key} = ANY(ARRAY({picked}))"),
            (Some(_), Backend::Sqlite) => format!("{key} IN ({picked})"),
        };
        let recheck = self.recheck.as_ref().map(|recheck| {
            let mut conditions = self.free(&str::to_owned);
            conditions.extend(recheck.iter().cloned());
            conditions
        });
        let mut update = self.update;
        update.and(&rows);
        for condition in recheck.into_iter().flatten() {
            update.and(&condition);
        }
        update.into_sql()
    }
}

/// How a failed attempt leaves its row ([`LeasedTable::fail`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// The lease goes; the row may be claimed again as soon as the area's own conditions
    /// allow (an event delivery waits for its `next_attempt_at`).
    Free,
    /// The row waits until then: its lease stays, held by no one, so that no claim takes it
    /// before. A row that used its last attempt keeps no waiting time.
    After(DateTime<Utc>),
}

/// A write of held rows (or, for [`LeasedTable::give_up_exhausted`], of rows nobody holds
/// any more) being built.
#[derive(Debug)]
pub(crate) struct Update {
    table: LeasedTable,
    args: Vec<Arg>,
    sets: Vec<String>,
    conditions: Vec<String>,
    returning: Option<String>,
}

impl LeasedTable {
    fn update(&self) -> Update {
        Update {
            table: *self,
            args: Vec::new(),
            sets: Vec::new(),
            conditions: Vec::new(),
            returning: None,
        }
    }

    /// A write that changes only rows `holder` holds: a holder whose lease was taken over
    /// changes nothing. The caller adds what it sets.
    pub(crate) fn held(&self, holder: &str) -> Update {
        let mut update = self.update();
        let holder = update.arg(Arg::Text(holder.to_owned()));
        update.and(&format!("{HOLDER} = {holder}"));
        update
    }

    /// Extends `holder`'s lease until `expiry`.
    pub(crate) fn renew(&self, holder: &str, expiry: DateTime<Utc>) -> Update {
        let mut update = self.held(holder);
        let expiry = update.arg(Arg::Time(expiry));
        update.set(&format!("{EXPIRES} = {expiry}"));
        update
    }

    /// Ends `holder`'s claim: the lease goes. What else ends with it (a final state, the
    /// result) is the area's.
    pub(crate) fn finish(&self, holder: &str) -> Update {
        let mut update = self.held(holder);
        update.set(&format!("{HOLDER} = NULL, {EXPIRES} = NULL"));
        update
    }

    /// Gives `holder`'s rows back unfinished (the worker is stopping, or its work was
    /// superseded): free at once for any claimer, and the attempt it was on does not count,
    /// since the row did not fail.
    pub(crate) fn release(&self, holder: &str) -> Update {
        let mut update = self.finish(holder);
        if self.counting == Counting::PerClaim {
            update.set(&format!(
                "{ATTEMPTS} = CASE WHEN {ATTEMPTS} > 0 THEN {ATTEMPTS} - 1 ELSE 0 END"
            ));
        }
        update
    }

    /// Records that `holder`'s attempt failed: the lease goes (or stays as a waiting time, see
    /// [`Retry`]) and the attempt counts. Returns the statement and the condition, over the
    /// row before the update, that this was its last allowed attempt of `attempts_max`, for
    /// the area to give the row up with (`state = CASE WHEN <last> THEN 'dead' ...`).
    pub(crate) fn fail(&self, holder: &str, attempts_max: u32, retry: Retry) -> (Update, String) {
        let mut update = self.held(holder);
        let last = format!("{} >= {attempts_max}", self.attempts_after_failure());
        let waiting = match retry {
            Retry::Free => "NULL".to_owned(),
            Retry::After(time) => {
                let time = update.arg(Arg::Time(time));
                format!("CASE WHEN {last} THEN NULL ELSE {time} END")
            }
        };
        update.set(&format!("{HOLDER} = NULL, {EXPIRES} = {waiting}"));
        if self.counting == Counting::PerFailure {
            update.set(&format!("{ATTEMPTS} = {ATTEMPTS} + 1"));
        }
        (update, last)
    }

    /// Gives up the rows whose holder died on their last allowed attempt of `attempts_max`:
    /// the lease of a claim that used it ran out before `now`. The lease goes; the area sets
    /// the state that says the row was given up, and names the states it gives up from. Only
    /// a table that counts per claim has such rows.
    pub(crate) fn give_up_exhausted(&self, now: DateTime<Utc>, attempts_max: u32) -> Update {
        let mut update = self.update();
        let now = update.arg(Arg::Time(now));
        update
            .set(&format!("{HOLDER} = NULL, {EXPIRES} = NULL"))
            .and(&format!(
                "{ATTEMPTS} >= {attempts_max} AND {EXPIRES} < {now}"
            ));
        update
    }
}

impl Update {
    /// Binds a value for a fragment and returns its placeholder (`$5`).
    pub(crate) fn arg(&mut self, value: Arg) -> String {
        self.args.push(value);
        format!("${}", self.args.len())
    }

    /// Only the row whose key is `key`.
    pub(crate) fn row(&mut self, key: Arg) -> &mut Self {
        let key_value = self.arg(key);
        let condition = format!("{} = {key_value}", self.table.key);
        self.and(&condition)
    }

    /// Assignments besides the lease's.
    pub(crate) fn set(&mut self, assignments: &str) -> &mut Self {
        self.sets.push(assignments.to_owned());
        self
    }

    /// A condition the rows written must also meet (a state, a generation).
    pub(crate) fn and(&mut self, condition: &str) -> &mut Self {
        self.conditions.push(condition.to_owned());
        self
    }

    /// The columns the statement returns of each row it wrote.
    pub(crate) fn returning(&mut self, columns: &str) -> &mut Self {
        self.returning = Some(columns.to_owned());
        self
    }

    /// The statement, the same on both databases.
    pub(crate) fn into_sql(self) -> Sql {
        let mut text = format!(
            "UPDATE {} SET {} WHERE {}",
            self.table.name,
            self.sets.join(", "),
            self.conditions.join(" AND ")
        );
        if let Some(columns) = &self.returning {
            text.push_str(" RETURNING ");
            text.push_str(columns);
        }
        Sql::with_args(&text, self.args)
    }
}

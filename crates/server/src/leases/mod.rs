//! Leased work queues: the one way Basin hands a piece of background work to exactly one
//! worker among many processes, and takes it back from a worker that died.
//!
//! A queue is a table (a [`LeasedTable`]) whose rows are the work. A worker claims rows by
//! writing its name ([`Holder`]) and the end of its lease ([`Lease`]) into them; while it works
//! it renews the lease, and every write it makes names itself, so a worker whose lease ran out
//! (it stalled, and another took the row over) changes nothing. A worker that dies simply
//! stops renewing, and once its lease runs out the row is free again. Attempts are counted
//! ([`Counting`]), and a row that used its last allowed attempt is given up instead of being
//! tried for ever.
//!
//! Three areas queue work this way: transfers (`transfers/store.rs`), tile pyramids
//! (`tiles/store.rs`) and event deliveries (`events/store.rs`). They share the lease
//! arithmetic, the holder names, the attempt rules and the shape of the statements (claim,
//! renew, finish, release, fail, give up), built here for both databases
//! ([`Claim`](statement::Claim), [`Update`]); each area keeps its own rows, the states they go
//! through, and what finishing one means, and runs the statements inside its own store, in
//! the transactions it chooses.
//!
//! Every leased table has the columns `lease_owner` (the holder; NULL when none),
//! `lease_expires_at` (when the lease runs out, or when a row whose attempt failed may be
//! tried again; NULL when neither) and `attempts` (an integer). The three tables name them
//! alike, so a [`LeasedTable`] only names the table and its key.

mod statement;
#[cfg(test)]
mod tests;

use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

pub(crate) use statement::{Retry, Update};

/// The column naming a row's holder.
const HOLDER: &str = "lease_owner";
/// The column holding when a row's lease runs out.
const EXPIRES: &str = "lease_expires_at";
/// The column counting a row's attempts.
const ATTEMPTS: &str = "attempts";

/// When an attempt is counted, which decides what a release gives back and when a row has
/// used its last attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counting {
    /// Every claim is an attempt (transfers, pyramids): a worker that dies has used one, so a
    /// row that kills its workers ends after the last allowed claim. A worker that gives its
    /// row back unfinished ([`LeasedTable::release`]) gives the attempt back too.
    PerClaim,
    /// Only a failure the holder records is an attempt (event deliveries): a holder that dies
    /// costs the row nothing, since its lease running out says nothing about the row.
    PerFailure,
}

/// A table used as a leased queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeasedTable {
    /// The table.
    pub(crate) name: &'static str,
    /// The column naming one row (or the part of its key the claim picks by).
    pub(crate) key: &'static str,
    /// When its attempts are counted.
    pub(crate) counting: Counting,
}

impl LeasedTable {
    /// The attempts a row has used once the failure being recorded is counted, as SQL over
    /// the row before the update.
    fn attempts_after_failure(&self) -> &'static str {
        match self.counting {
            Counting::PerClaim => ATTEMPTS,
            Counting::PerFailure => "attempts + 1",
        }
    }
}

/// The name a worker writes into the rows it holds: unique among live workers, readable in
/// the database and in logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder(String);

impl Holder {
    /// A new name for a worker of this process: the host, the process id and a random part,
    /// so that two processes never share one even on one host, and two workers of one process
    /// neither.
    pub(crate) fn of_this_process() -> Self {
        let host = std::env::var("HOSTNAME")
            .ok()
            .filter(|host| !host.is_empty())
            .unwrap_or_else(|| "basin".to_owned());
        let random = uuid::Uuid::new_v4().simple().to_string();
        Self(format!(
            "{host}:{}:{}",
            std::process::id(),
            random.get(..8).unwrap_or_default()
        ))
    }

    /// A name of its own for one claim of this holder (`<holder>:<random>`), for a holder that
    /// makes several claims at once and must tell their rows apart.
    pub(crate) fn for_one_claim(&self) -> Self {
        Self(format!("{}:{}", self.0, uuid::Uuid::new_v4().simple()))
    }
}

/// A holder is its name: `&holder` goes where the stores take the name as `&str`.
impl std::ops::Deref for Holder {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// How long a claim lasts without renewal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lease(TimeDelta);

impl Lease {
    /// A lease of `length`. A length beyond what a time can hold lasts until [`Self::expiry`]'s
    /// latest time.
    pub(crate) fn new(length: Duration) -> Self {
        Self(TimeDelta::from_std(length).unwrap_or(TimeDelta::MAX))
    }

    /// When a lease taken or renewed at `from` runs out. Never later than the last second of
    /// the year 9999: SQLite compares times as text, and a five-digit year would sort before
    /// every real time, making the lease look long run out.
    pub(crate) fn expiry(self, from: DateTime<Utc>) -> DateTime<Utc> {
        let latest = latest_expiry();
        from.checked_add_signed(self.0)
            .map_or(latest, |expiry| expiry.min(latest))
    }
}

/// The latest time a lease may run out (see [`Lease::expiry`]).
fn latest_expiry() -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(9999, 12, 31)
        .and_then(|day| day.and_hms_opt(23, 59, 59))
        .map_or(DateTime::<Utc>::MAX_UTC, |time| time.and_utc())
}

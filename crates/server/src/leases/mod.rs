//! Leased work queues: the one way Basin hands a piece of background work to exactly one
//! worker among many processes, and takes it back from a worker that died.
//!
//! A worker claims queued rows by writing its name ([`Holder`]) and the end of its lease
//! ([`Lease`]) into them; while it works it renews the lease, and every write it makes names
//! itself, so a worker whose lease ran out (it stalled, and another took the row over)
//! changes nothing. A worker that dies simply stops renewing, and once its lease runs out the
//! row is free again. Three areas queue work this way: transfers, tile pyramids and event
//! deliveries; they name their holders and reckon their leases here.

#[cfg(test)]
mod tests;

use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

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

//! Holder names and lease arithmetic.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use super::*;

const LEASE_SECONDS: i64 = 60;

fn start() -> DateTime<Utc> {
    "2026-03-01T12:00:00Z".parse().unwrap()
}

fn at(seconds: i64) -> DateTime<Utc> {
    start() + TimeDelta::seconds(seconds)
}

fn lease() -> Lease {
    Lease::new(Duration::from_secs(LEASE_SECONDS.unsigned_abs()))
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

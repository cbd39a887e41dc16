//! The relay: moves outbox rows to the sinks, at least once and in order per resource and
//! sink, on any number of replicas at once.
//!
//! One round: dispatch new outbox rows into delivery rows (one per sink), then for each sink
//! claim the deliveries that may go now under a lease, deliver them concurrently, and record
//! the outcome: delivered rows go, failed ones wait with exponential backoff and jitter, and
//! after `attempts_max` attempts (or a refusal) become dead letters. Then outbox rows every
//! sink has are pruned. A relay that dies mid-round leaves leases that run out, and another
//! relay (or this one, restarted) delivers those events again: hence at least once, and the
//! event id for receivers to deduplicate on.
//!
//! The relay polls (`events.poll_interval_ms`) rather than being woken by the writers: events
//! are recorded inside transactions all over the code base, and a poll of an indexed partial
//! index costs next to nothing.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::config::EventsConfig;
use crate::db::{Db, StoreResult};
use crate::events::sink::{DeliveryError, Sink, Sinks};
use crate::events::store::{self, Failure};
use crate::leases::{Holder, Lease};

/// Outbox rows pruned per round.
const PRUNE_BATCH: u32 = 1_000;

/// How a relay paces itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RelaySettings {
    /// Sleep when a round found nothing to do.
    pub(crate) poll_interval: Duration,
    /// Events claimed per sink and round.
    pub(crate) batch_size: u32,
    /// How long a claim holds.
    pub(crate) lease: Duration,
    /// Attempts before a dead letter.
    pub(crate) attempts_max: u32,
    /// First retry delay.
    pub(crate) backoff_initial: Duration,
    /// Longest retry delay.
    pub(crate) backoff_max: Duration,
}

impl From<&EventsConfig> for RelaySettings {
    fn from(config: &EventsConfig) -> Self {
        Self {
            poll_interval: config.poll_interval_ms,
            batch_size: config.batch_size.get(),
            lease: config.lease_ms,
            attempts_max: config.attempts_max.get(),
            backoff_initial: config.backoff_initial_ms,
            backoff_max: config.backoff_max_ms,
        }
    }
}

/// What one round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Round {
    /// Outbox rows turned into deliveries.
    pub(crate) dispatched: u64,
    /// Deliveries that arrived.
    pub(crate) delivered: u64,
    /// Deliveries that failed (to be retried, or dead).
    pub(crate) failed: u64,
    /// Outbox rows removed.
    pub(crate) pruned: u64,
}

impl Round {
    /// Whether there may be more to do right away.
    fn busy(self) -> bool {
        self.dispatched > 0 || self.delivered > 0 || self.pruned > 0
    }
}

/// One relay.
#[derive(Debug, Clone)]
pub(crate) struct Relay {
    db: Db,
    clock: Arc<dyn Clock>,
    sinks: Arc<Sinks>,
    settings: RelaySettings,
    /// This relay's name in leases; each claim holds its rows under a name of its own made
    /// from it.
    holder: Holder,
}

impl Relay {
    /// A relay delivering to `sinks`.
    pub(crate) fn new(
        db: Db,
        clock: Arc<dyn Clock>,
        sinks: Sinks,
        settings: RelaySettings,
    ) -> Self {
        Self {
            db,
            clock,
            sinks: Arc::new(sinks),
            settings,
            holder: Holder::of_this_process(),
        }
    }

    /// Runs rounds until `stop` is cancelled. A round in flight then gives its claims back,
    /// so another relay takes them over at once instead of after the lease.
    pub(crate) async fn run(self, stop: CancellationToken) {
        let names: Vec<&str> = self.sinks.iter().map(|sink| sink.name()).collect();
        tracing::info!(sinks = ?names, "event relay started");
        loop {
            let busy = match self.run_once(&stop).await {
                Ok(round) => round.busy(),
                Err(error) => {
                    tracing::warn!(%error, "event relay round failed; retrying");
                    false
                }
            };
            if stop.is_cancelled() {
                return;
            }
            if !busy {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(self.settings.poll_interval) => {}
                }
            }
        }
    }

    /// One round (see the module doc).
    pub(crate) async fn run_once(&self, stop: &CancellationToken) -> StoreResult<Round> {
        let mut round = Round {
            dispatched: store::dispatch(
                &self.db,
                &self.sinks,
                self.clock.now(),
                self.settings.batch_size,
            )
            .await?,
            ..Round::default()
        };
        let outcomes = futures::future::join_all(
            self.sinks
                .iter()
                .map(|sink| self.deliver_batch(sink.as_ref(), stop)),
        )
        .await;
        for outcome in outcomes {
            let (delivered, failed) = outcome?;
            round.delivered += delivered;
            round.failed += failed;
        }
        round.pruned = store::prune(&self.db, PRUNE_BATCH).await?;
        Ok(round)
    }

    /// Claims and delivers one batch to `sink`; returns (delivered, failed).
    async fn deliver_batch(
        &self,
        sink: &dyn Sink,
        stop: &CancellationToken,
    ) -> StoreResult<(u64, u64)> {
        // The batches of all sinks are claimed at once: each under a name of its own, so that
        // each is acknowledged, failed or given back alone.
        let claim = self.holder.for_one_claim();
        let token: &str = &claim;
        let now = self.clock.now();
        let claimed = store::claim(
            &self.db,
            sink.name(),
            token,
            now,
            Lease::new(self.settings.lease).expiry(now),
            self.settings.batch_size,
            self.settings.attempts_max,
        )
        .await?;
        if claimed.is_empty() {
            return Ok((0, 0));
        }
        let deliveries = futures::future::join_all(claimed.iter().map(|row| async move {
            let outgoing = row.outgoing();
            (row, sink.deliver(&outgoing).await)
        }));
        let results = tokio::select! {
            results = deliveries => results,
            () = stop.cancelled() => {
                store::release(&self.db, token).await?;
                return Ok((0, 0));
            }
        };
        let mut delivered = Vec::new();
        let mut failed = 0;
        for (row, result) in results {
            match result {
                Ok(()) => delivered.push(row.seq),
                Err(error) => {
                    failed += 1;
                    self.record_failure(sink, token, row, &error).await?;
                }
            }
        }
        store::acknowledge(&self.db, sink.name(), token, &delivered).await?;
        Ok((u64::try_from(delivered.len()).unwrap_or(0), failed))
    }

    async fn record_failure(
        &self,
        sink: &dyn Sink,
        token: &str,
        row: &store::Claimed,
        error: &DeliveryError,
    ) -> StoreResult<()> {
        let now = self.clock.now();
        let attempt = u32::try_from(row.attempts).unwrap_or(0).saturating_add(1);
        let delay = backoff(
            attempt,
            self.settings.backoff_initial,
            self.settings.backoff_max,
            jitter_fraction(),
        );
        let message: String = error
            .to_string()
            .chars()
            .take(crate::limits::EVENTS_ERROR_CHARS_MAX)
            .collect();
        let failure = Failure {
            seq: row.seq,
            error: &message,
            refused: matches!(error, DeliveryError::Refused(_)),
            next_attempt_at: now
                + chrono::TimeDelta::from_std(delay).unwrap_or(chrono::TimeDelta::zero()),
        };
        let dead = store::fail(
            &self.db,
            sink.name(),
            token,
            &failure,
            self.settings.attempts_max,
            now,
        )
        .await?;
        if dead {
            tracing::warn!(event = %row.id, sink = sink.name(), attempt, error = %message, "event dead-lettered");
        } else {
            tracing::info!(event = %row.id, sink = sink.name(), attempt, retry_in_ms = delay.as_millis(), error = %message, "event delivery failed; retrying");
        }
        Ok(())
    }
}

/// The wait after failed attempt number `attempt` (1-based): `initial` doubled per earlier
/// attempt, capped at `max`, then reduced by up to half at random (`jitter` in 0..1) so that
/// the retries of many events failing together spread out instead of arriving in waves.
pub(crate) fn backoff(attempt: u32, initial: Duration, max: Duration, jitter: f64) -> Duration {
    let doublings = attempt.saturating_sub(1).min(32);
    let full = initial
        .checked_mul(1_u32 << doublings.min(31))
        .unwrap_or(max)
        .min(max);
    full.mul_f64(1.0 - 0.5 * jitter.clamp(0.0, 1.0))
}

/// A random number in 0..1 from a v4 uuid's random bits (no extra dependency for one number).
fn jitter_fraction() -> f64 {
    let bits = uuid::Uuid::new_v4().as_u128() & u128::from(u32::MAX);
    f64::from(u32::try_from(bits).unwrap_or(0)) / f64::from(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_per_attempt_up_to_the_cap_and_jitter_takes_at_most_half() {
        let second = Duration::from_secs(1);
        let cap = Duration::from_secs(60);
        assert_eq!(backoff(1, second, cap, 0.0), second);
        assert_eq!(backoff(2, second, cap, 0.0), Duration::from_secs(2));
        assert_eq!(backoff(4, second, cap, 0.0), Duration::from_secs(8));
        assert_eq!(backoff(7, second, cap, 0.0), cap);
        assert_eq!(backoff(200, second, cap, 0.0), cap);
        assert_eq!(backoff(2, second, cap, 1.0), second);
        assert_eq!(backoff(1, Duration::ZERO, cap, 0.5), Duration::ZERO);
    }

    #[test]
    fn jitter_stays_between_zero_and_one() {
        for _ in 0..1_000 {
            let jitter = jitter_fraction();
            assert!((0.0..=1.0).contains(&jitter));
        }
    }
}

//! The one runner of periodic work: every housekeeping task (recycle bin retention, credit
//! settling, feature message retention, upload retention, checksum repair) is a
//! [`PeriodicTask`] with a name and an interval, run by [`PeriodicRunner`] on every serving
//! process until the stop token fires.
//!
//! The runner owns what the tasks would otherwise each write again: the first round at once,
//! the wait between rounds with jitter (so that replicas started together do not run every
//! task in the same second), an early wake-up where a task offers one, one log line per round
//! that did something or failed, and a stop that drops a round between two statements (its
//! open transaction rolls back; every task resumes from what it committed). Each task must
//! therefore be safe on every replica at once and after an interrupted round; each says how in
//! its own docs. ARCHITECTURE.md lists the tasks.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What one round of a task did: named counts, logged when any is above zero.
pub(crate) type RoundCounts = Vec<(&'static str, u64)>;

/// A task run periodically on every serving process.
#[async_trait::async_trait]
pub(crate) trait PeriodicTask: Send + Sync + 'static {
    /// Its name in logs and in the list printed at start (`recycle bin retention`).
    fn name(&self) -> &'static str;

    /// The time between the end of a round and the start of the next.
    fn interval(&self) -> Duration;

    /// Runs one round and says what it did.
    async fn run_round(&self) -> Result<RoundCounts, String>;

    /// Wakes the task before its interval has passed (a permanent delete asks for the purge).
    fn wake_up(&self) -> Option<Arc<Notify>> {
        None
    }
}

/// Runs a set of periodic tasks.
#[derive(Default)]
pub(crate) struct PeriodicRunner {
    tasks: Vec<Arc<dyn PeriodicTask>>,
}

/// The largest share of a task's interval added at random to each wait.
const JITTER_SHARE: f64 = 0.1;

impl PeriodicRunner {
    /// Adds `task`.
    pub(crate) fn with(mut self, task: impl PeriodicTask) -> Self {
        self.tasks.push(Arc::new(task));
        self
    }

    /// One line naming every task and its interval, for the start-up log.
    pub(crate) fn describe(&self) -> String {
        self.tasks
            .iter()
            .map(|task| format!("{} every {}s", task.name(), task.interval().as_secs()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Starts every task; each stops when `stop` fires.
    pub(crate) fn spawn(self, stop: &CancellationToken) -> Vec<tokio::task::JoinHandle<()>> {
        tracing::info!(tasks = %self.describe(), "periodic tasks");
        self.tasks
            .into_iter()
            .map(|task| tokio::spawn(run(task, stop.clone())))
            .collect()
    }
}

/// Runs `task` until `stop`: a round at once, then one per interval (plus jitter) or wake-up.
async fn run(task: Arc<dyn PeriodicTask>, stop: CancellationToken) {
    let wake_up = task.wake_up().unwrap_or_else(|| Arc::new(Notify::new()));
    loop {
        let round = tokio::select! {
            () = stop.cancelled() => return,
            round = task.run_round() => round,
        };
        log_round(task.name(), round);
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(with_jitter(task.interval())) => {}
            () = wake_up.notified() => {}
        }
    }
}

fn log_round(task: &'static str, round: Result<RoundCounts, String>) {
    match round {
        Ok(counts) if counts.iter().any(|(_, count)| *count > 0) => {
            let done = counts
                .iter()
                .map(|(what, count)| format!("{what}={count}"))
                .collect::<Vec<_>>()
                .join(" ");
            tracing::info!(task, %done, "periodic task round");
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(task, %error, "periodic task round failed; retrying later"),
    }
}

/// `interval` plus up to [`JITTER_SHARE`] of it, at random.
fn with_jitter(interval: Duration) -> Duration {
    interval.mul_f64(1.0 + JITTER_SHARE * fastrand::f64())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    struct Counting {
        rounds: Arc<AtomicU64>,
        wake: Arc<Notify>,
    }

    #[async_trait::async_trait]
    impl PeriodicTask for Counting {
        fn name(&self) -> &'static str {
            "counting"
        }
        fn interval(&self) -> Duration {
            Duration::from_secs(3600)
        }
        async fn run_round(&self) -> Result<RoundCounts, String> {
            let round = self.rounds.fetch_add(1, Ordering::SeqCst);
            if round == 1 {
                return Err("a failed round is logged and the task goes on".to_owned());
            }
            Ok(vec![("rounds", round)])
        }
        fn wake_up(&self) -> Option<Arc<Notify>> {
            Some(self.wake.clone())
        }
    }

    async fn rounds_reach(rounds: &AtomicU64, wanted: u64) {
        for _ in 0..500 {
            if rounds.load(Ordering::SeqCst) >= wanted {
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    #[tokio::test]
    async fn a_task_runs_at_once_again_when_woken_and_stops_when_told() {
        let rounds = Arc::new(AtomicU64::new(0));
        let wake = Arc::new(Notify::new());
        let runner = PeriodicRunner::default().with(Counting {
            rounds: rounds.clone(),
            wake: wake.clone(),
        });
        assert_eq!(runner.describe(), "counting every 3600s");
        let stop = CancellationToken::new();
        let handles = runner.spawn(&stop);
        rounds_reach(&rounds, 1).await;
        assert_eq!(
            rounds.load(Ordering::SeqCst),
            1,
            "the first round runs at once"
        );
        wake.notify_one();
        rounds_reach(&rounds, 2).await;
        wake.notify_one();
        rounds_reach(&rounds, 3).await;
        assert_eq!(
            rounds.load(Ordering::SeqCst),
            3,
            "a failed round does not stop the task"
        );
        stop.cancel();
        for handle in handles {
            assert!(handle.await.is_ok());
        }
    }

    #[test]
    fn jitter_adds_at_most_a_tenth() {
        let interval = Duration::from_secs(100);
        for _ in 0..1000 {
            let waited = with_jitter(interval);
            assert!(waited >= interval && waited <= Duration::from_secs(110));
        }
    }
}

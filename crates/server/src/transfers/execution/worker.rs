//! The worker loop: claim a queued transfer, run it, repeat; sleep when the queue is empty
//! until the poll interval passes or a transfer is queued by this process.
//!
//! Before each claim, transfers whose worker died too often are ended, so that nothing stays
//! `InProgress` for ever. Every few minutes the work dir is swept: folders of transfers that
//! no live worker holds (left by a crashed process) are removed.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::ids::TransferId;
use crate::transfers::execution::run::{Runner, remove_dir};
use crate::transfers::model::TransferStatus;
use crate::transfers::store;

/// How often the work dir is swept of folders no running transfer owns.
const SWEEP_INTERVAL: Duration = Duration::from_secs(300);

/// Settings of a worker loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueueSettings {
    /// Claims of one transfer before it ends in `Error`.
    pub(crate) attempts_max: u32,
    /// How often an idle worker looks for work.
    pub(crate) poll_interval: Duration,
    /// How long export results stay.
    pub(crate) export_ttl: chrono::TimeDelta,
}

/// Worker tasks of one process.
#[derive(Debug, Clone)]
pub(crate) struct WorkerPool {
    runner: Runner,
    settings: QueueSettings,
    queued: Arc<Notify>,
}

impl WorkerPool {
    /// A pool running transfers with `runner`, woken by `queued`.
    pub(crate) fn new(runner: Runner, settings: QueueSettings, queued: Arc<Notify>) -> Self {
        Self {
            runner,
            settings,
            queued,
        }
    }

    /// Runs `count` workers until `stop` is cancelled; a transfer running then goes back to the
    /// queue, its attempt not counted, for another worker (or this one after a restart).
    pub(crate) async fn run(self, count: std::num::NonZeroUsize, stop: CancellationToken) {
        if let Err(error) = tokio::fs::create_dir_all(&self.runner.work_dir).await {
            tracing::error!(%error, dir = %self.runner.work_dir.display(), "cannot create the transfer work dir; no transfers will run");
            return;
        }
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..count.get() {
            tasks.spawn(self.clone().work(stop.clone()));
        }
        tasks.spawn(self.clone().sweep(stop.clone()));
        while tasks.join_next().await.is_some() {}
    }

    async fn work(self, stop: CancellationToken) {
        loop {
            if stop.is_cancelled() {
                return;
            }
            match self.claim(None).await {
                Ok(Some(row)) => self.runner.run(row, &stop).await,
                Ok(None) => {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(self.settings.poll_interval) => {}
                        () = self.queued.notified() => {}
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot claim transfers; retrying");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(self.settings.poll_interval) => {}
                    }
                }
            }
        }
    }

    async fn claim(
        &self,
        only: Option<TransferId>,
    ) -> Result<Option<crate::transfers::model::TransferRow>, crate::db::StoreError> {
        let runner = &self.runner;
        let now = runner.clock.now();
        let failed = store::fail_exhausted(&runner.db, now, self.settings.attempts_max).await?;
        if failed > 0 {
            tracing::warn!(
                count = failed,
                "transfers ended after their workers died too often"
            );
        }
        let claimed = store::claim(
            &runner.db,
            &runner.holder,
            now,
            runner.lease.expiry(now),
            self.settings.attempts_max,
            only,
        )
        .await?;
        if let Some(row) = &claimed {
            tracing::info!(transfer = %row.id, attempt = row.attempts, worker = %runner.holder, "transfer claimed");
        }
        Ok(claimed)
    }

    /// Removes folders of the work dir that belong to no running transfer.
    async fn sweep(self, stop: CancellationToken) {
        loop {
            if let Err(error) = self.sweep_once().await {
                tracing::warn!(%error, "cannot sweep the transfer work dir");
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(SWEEP_INTERVAL) => {}
            }
        }
    }

    /// Removes export results older than `transfers.export_ttl_hours`.
    async fn expire_downloads(&self) -> anyhow::Result<()> {
        let runner = &self.runner;
        let before = runner.clock.now() - self.settings.export_ttl;
        for (id, key) in store::expired_downloads(&runner.db, before, 500).await? {
            if let Ok(path) = basin_blob::BlobPath::parse_key(&key) {
                match runner.blobs.delete(&path).await {
                    Ok(()) | Err(basin_blob::BlobError::NotFound(_)) => {}
                    Err(error) => {
                        tracing::warn!(%error, blob = %key, "cannot remove an expired export");
                        continue;
                    }
                }
            }
            store::clear_download(&runner.db, id).await?;
        }
        Ok(())
    }

    async fn sweep_once(&self) -> anyhow::Result<()> {
        self.expire_downloads().await?;
        let mut entries = tokio::fs::read_dir(&self.runner.work_dir).await?;
        let now = self.runner.clock.now();
        while let Some(entry) = entries.next_entry().await? {
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|name| name.parse::<uuid::Uuid>().ok())
                .map(TransferId::from_uuid)
            else {
                continue;
            };
            let row = store::find_any(&self.runner.db, id).await?;
            let running = row.is_some_and(|row| {
                row.status() == TransferStatus::InProgress
                    && self.runner.lease.expiry(row.updated_at) > now
            });
            if !running {
                remove_dir(&entry.path()).await;
            }
        }
        Ok(())
    }
}

/// Runs the one transfer `id` if it is queued (or its worker died), then returns: the entry
/// point of a Kubernetes Job. False when there was nothing to run. When `stop` is cancelled
/// first (the pod is told to stop), the transfer goes back to the queue.
pub(crate) async fn run_one(
    pool: &WorkerPool,
    id: TransferId,
    stop: &CancellationToken,
) -> anyhow::Result<bool> {
    tokio::fs::create_dir_all(&pool.runner.work_dir).await?;
    match pool.claim(Some(id)).await? {
        Some(row) => {
            pool.runner.run(row, stop).await;
            Ok(true)
        }
        None => Ok(false),
    }
}

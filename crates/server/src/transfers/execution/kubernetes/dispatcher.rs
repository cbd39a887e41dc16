//! The dispatcher: the loop in `basin serve` that creates one Kubernetes Job for each
//! transfer that needs one, in place of the in-process workers.
//!
//! A transfer needs a Job when it is queued without one (new, or given back by its Job's
//! worker on SIGTERM), or when its worker died (the lease ran out) and it got none since.
//! Jobs are created first and recorded second, under a name fixed by the transfer and its
//! count of Jobs (`basin-transfer-<id>-<n>`). Two server replicas that see the same transfer
//! create the same name, and the second gets 409 AlreadyExists, which counts as created; the
//! record is a compare-and-set on the count, so exactly one of them records it. A replica
//! that dies between the two steps leaves a Job unrecorded, and the next poll creates the
//! same name again and records it. The other order (record, then create) needs no 409 but
//! loses the transfer when the process dies in between: it would wait for a Job that was
//! never made.
//!
//! A Job the cluster refuses (403 RBAC, 422 invalid, quota) leaves the transfer queued and is
//! tried again each poll; after `create_refusals_max` refusals the transfer ends in `Error`
//! with Kubernetes' reason. An unreachable cluster is retried without limit. A Job whose
//! worker has not taken the transfer within `start_timeout_seconds` is looked up: if it ended
//! (its pod could not start the worker: a broken Secret, a deadline) or was deleted, the
//! transfer gets a new Job, and after `create_refusals_max` such Jobs it ends in `Error`; a
//! Job still waiting (for a node, an image) is left alone and looked at again later. Like the
//! worker
//! pool, each poll also ends transfers whose workers died too often, so nothing stays
//! `InProgress` for ever.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::config::KubernetesConfig;
use crate::db::{Db, StoreError};
use crate::ids::TransferId;
use crate::transfers::execution::kubernetes::client::{CreateError, JobClient, JobState};
use crate::transfers::execution::kubernetes::manifest::{JobRequest, job_manifest, job_name};
use crate::transfers::model::TransferPlan;
use crate::transfers::store::{self, Undispatched, UnstartedJob};

/// Transfers one poll creates Jobs for; the rest wait for the next poll, so that one poll
/// never holds the API server (or the database) for long.
pub(crate) const DISPATCH_BATCH_MAX: i64 = 50;

/// Transfers whose refusals and lost Jobs are counted at once. Past it the counts start
/// over: a transfer then gets a few more tries, which is better than memory without bound
/// (counts of transfers that later ran are never looked at again).
const COUNTED_TRANSFERS_MAX: usize = 10_000;

/// What one poll did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Dispatched {
    /// Jobs created (or found created) and recorded.
    pub(crate) created: usize,
    /// Transfers left queued because their Job could not be created.
    pub(crate) deferred: usize,
    /// Transfers ended in `Error`: refused too often, or not runnable at all.
    pub(crate) failed: usize,
    /// Jobs found ended or deleted without having run their transfer; it gets a new one.
    pub(crate) lost: usize,
}

/// Creates the Jobs of queued transfers.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    db: Db,
    clock: Arc<dyn Clock>,
    client: Arc<dyn JobClient>,
    config: KubernetesConfig,
    attempts_max: u32,
    poll_interval: Duration,
    queued: Arc<Notify>,
    /// Refusals per transfer since its last Job was created. Kept in memory, like `lost`:
    /// after a restart a transfer gets a few more tries, which is harmless.
    refusals: HashMap<TransferId, u32>,
    /// Jobs per transfer that ended or went away without running it.
    lost: HashMap<TransferId, u32>,
}

/// What a dispatcher needs.
#[derive(Debug, Clone)]
pub(crate) struct DispatcherDeps {
    pub(crate) db: Db,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) client: Arc<dyn JobClient>,
    pub(crate) config: KubernetesConfig,
    /// Claims of a transfer before it ends in `Error` (`transfers.attempts_max`).
    pub(crate) attempts_max: std::num::NonZeroU32,
    pub(crate) poll_interval: Duration,
    /// Woken when this process queues a transfer.
    pub(crate) queued: Arc<Notify>,
}

impl Dispatcher {
    /// A dispatcher; nothing happens until [`Dispatcher::run`] or [`Dispatcher::dispatch_once`].
    pub(crate) fn new(deps: DispatcherDeps) -> Self {
        Self {
            db: deps.db,
            clock: deps.clock,
            client: deps.client,
            config: deps.config,
            attempts_max: deps.attempts_max.get(),
            poll_interval: deps.poll_interval,
            queued: deps.queued,
            refusals: HashMap::new(),
            lost: HashMap::new(),
        }
    }

    /// Polls until `stop` is cancelled. Jobs already created run on: they are the cluster's.
    pub(crate) async fn run(mut self, stop: CancellationToken) {
        tracing::info!(namespace = %self.config.namespace, image = %self.config.image, "transfers run as Kubernetes Jobs");
        loop {
            if let Err(error) = self.dispatch_once().await {
                tracing::warn!(%error, "cannot dispatch transfers; retrying");
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.poll_interval) => {}
                () = self.queued.notified() => {}
            }
        }
    }

    /// One poll: ends transfers out of attempts, then creates a Job for each transfer that
    /// needs one (at most [`DISPATCH_BATCH_MAX`]).
    pub(crate) async fn dispatch_once(&mut self) -> Result<Dispatched, StoreError> {
        if self.refusals.len().saturating_add(self.lost.len()) > COUNTED_TRANSFERS_MAX {
            self.refusals.clear();
            self.lost.clear();
        }
        let now = self.clock.now();
        let exhausted = store::fail_exhausted(&self.db, now, self.attempts_max).await?;
        if exhausted > 0 {
            tracing::warn!(
                count = exhausted,
                "transfers ended after their workers died too often"
            );
        }
        let waiting =
            store::list_undispatched(&self.db, now, self.attempts_max, DISPATCH_BATCH_MAX).await?;
        let mut done = Dispatched::default();
        for transfer in waiting {
            match self.dispatch(&transfer).await? {
                Step::Created => done.created += 1,
                Step::Deferred => done.deferred += 1,
                Step::Failed => done.failed += 1,
            }
        }
        self.look_up_unstarted(now, &mut done).await?;
        Ok(done)
    }

    /// Looks up the Jobs of transfers still queued `start_timeout_seconds` after their Job
    /// was created: a Job that ended or is gone without running its transfer is forgotten
    /// (the next poll creates a new one), or, the `create_refusals_max`-th time, the transfer
    /// ends in `Error`.
    async fn look_up_unstarted(
        &mut self,
        now: chrono::DateTime<chrono::Utc>,
        done: &mut Dispatched,
    ) -> Result<(), StoreError> {
        let timeout = i64::try_from(self.config.start_timeout_seconds)
            .ok()
            .and_then(chrono::TimeDelta::try_seconds);
        let Some(before) = timeout.and_then(|timeout| now.checked_sub_signed(timeout)) else {
            return Ok(());
        };
        for (id, job) in store::list_unstarted(&self.db, before, DISPATCH_BATCH_MAX).await? {
            let state = match self.client.state(&job).await {
                Ok(state) => state,
                Err(error) => {
                    tracing::warn!(transfer = %id, %job, %error, "cannot look the Job up; retrying");
                    continue;
                }
            };
            if state == JobState::Active {
                store::update_unstarted(&self.db, id, &job, UnstartedJob::Waiting(now)).await?;
                tracing::warn!(transfer = %id, %job, "the Job has not started its transfer yet");
                continue;
            }
            done.lost += 1;
            let lost = self.lost.entry(id).or_insert(0);
            *lost = lost.saturating_add(1);
            if *lost >= self.config.create_refusals_max.get() {
                let message = format!(
                    "The transfer could not be started: its Kubernetes Jobs ended {lost} times \
                     without running it (the last one: {job})."
                );
                tracing::error!(transfer = %id, %job, "Jobs keep ending without running the transfer; it fails");
                self.fail(id, &message).await?;
                done.failed += 1;
                continue;
            }
            tracing::warn!(transfer = %id, %job, ?state, "the Job ended without running its transfer; creating another");
            store::update_unstarted(&self.db, id, &job, UnstartedJob::Gone).await?;
        }
        Ok(())
    }

    async fn dispatch(&mut self, transfer: &Undispatched) -> Result<Step, StoreError> {
        let id = transfer.id;
        let plan = match serde_json::from_str::<TransferPlan>(transfer.request.as_str()) {
            Ok(plan) => plan,
            Err(error) => {
                tracing::error!(transfer = %id, %error, "the stored plan is unreadable");
                let message = "The transfer could not be started: its stored plan is unreadable.";
                return self.fail(id, message).await;
            }
        };
        let seen = transfer.dispatches.max(0);
        let dispatch = u32::try_from(seen).unwrap_or(u32::MAX).saturating_add(1);
        let request = JobRequest {
            transfer: id,
            dispatch,
            resources: &plan.resources,
        };
        let manifest = match job_manifest(&self.config, &request) {
            Ok(manifest) => manifest,
            Err(error) => {
                let message = format!("The transfer could not be started: {error}.");
                return self.fail(id, &message).await;
            }
        };
        let name = job_name(id, dispatch);
        match self.client.create(&manifest).await {
            Ok(created) => {
                self.refusals.remove(&id);
                let recorded =
                    store::mark_dispatched(&self.db, id, seen, &name, self.clock.now()).await?;
                tracing::info!(transfer = %id, job = %name, ?created, recorded, "transfer dispatched");
                Ok(Step::Created)
            }
            Err(CreateError::Unavailable(reason)) => {
                tracing::warn!(transfer = %id, job = %name, %reason, "cannot create the Job; retrying");
                Ok(Step::Deferred)
            }
            Err(error @ CreateError::Refused { .. }) => {
                let refusals = self.refusals.entry(id).or_insert(0);
                *refusals = refusals.saturating_add(1);
                if *refusals < self.config.create_refusals_max.get() {
                    tracing::warn!(transfer = %id, job = %name, %error, refusals = *refusals, "the Job was refused; retrying");
                    return Ok(Step::Deferred);
                }
                tracing::error!(transfer = %id, job = %name, %error, "the Job was refused too often; the transfer fails");
                let message = format!("The transfer could not be started: {error}");
                self.fail(id, &message).await
            }
        }
    }

    async fn fail(&mut self, id: TransferId, message: &str) -> Result<Step, StoreError> {
        self.refusals.remove(&id);
        self.lost.remove(&id);
        store::fail_undispatchable(&self.db, id, self.clock.now(), message).await?;
        Ok(Step::Failed)
    }
}

/// What happened to one transfer in a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Created,
    Deferred,
    Failed,
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use chrono::{DateTime, TimeDelta, Utc};
    use serde_json::{Value, json};

    use super::*;
    use crate::clock::ManualClock;
    use crate::db::JsonText;
    use crate::transfers::execution::kubernetes::client::Created;
    use crate::transfers::model::{Resources, Source, Target, TransferRow};
    use crate::transfers::store::NewTransfer;

    /// A [`JobClient`] that records the manifests it is given and answers from a script
    /// (`Created::New` once the script is used up).
    #[derive(Debug, Default)]
    struct FakeJobs {
        created: Mutex<Vec<Value>>,
        answers: Mutex<VecDeque<Result<Created, CreateError>>>,
        /// Jobs that ended (the rest of those created are active).
        finished: Mutex<Vec<String>>,
        looked_up: Mutex<Vec<String>>,
    }

    impl FakeJobs {
        fn names(&self) -> Vec<String> {
            let created = self.created.lock().unwrap();
            created
                .iter()
                .map(|job| job["metadata"]["name"].as_str().unwrap().to_owned())
                .collect()
        }

        fn answer(&self, answer: Result<Created, CreateError>) {
            self.answers.lock().unwrap().push_back(answer);
        }
    }

    #[async_trait::async_trait]
    impl JobClient for FakeJobs {
        async fn create(&self, manifest: &Value) -> Result<Created, CreateError> {
            let answer = self.answers.lock().unwrap().pop_front();
            let answer = answer.unwrap_or(Ok(Created::New));
            if answer == Ok(Created::New) {
                self.created.lock().unwrap().push(manifest.clone());
            }
            answer
        }

        async fn state(&self, name: &str) -> Result<JobState, CreateError> {
            self.looked_up.lock().unwrap().push(name.to_owned());
            if self.finished.lock().unwrap().iter().any(|job| job == name) {
                return Ok(JobState::Finished);
            }
            let created = self.names().iter().any(|job| job == name);
            Ok(if created {
                JobState::Active
            } else {
                JobState::Missing
            })
        }
    }

    /// A migrated store: a SQLite file, or a fresh PostgreSQL database on `TEST_POSTGRES_URL`.
    /// The guard keeps the SQLite folder alive.
    async fn store(postgres: bool) -> Option<(Db, Option<tempfile::TempDir>)> {
        let config = crate::config::DatabaseConfig::default();
        if !postgres {
            let dir = tempfile::tempdir().unwrap();
            let url = format!(
                "sqlite://{}?mode=rwc",
                dir.path().join("basin.db").display()
            );
            let db = Db::connect(&url, &config).await.unwrap();
            db.migrate().await.unwrap();
            return Some((db, Some(dir)));
        }
        let Ok(admin_url) = std::env::var("TEST_POSTGRES_URL") else {
            assert!(
                std::env::var_os("TEST_BASIN_REQUIRE_POSTGRES").is_none(),
                "TEST_BASIN_REQUIRE_POSTGRES is set but TEST_POSTGRES_URL is not"
            );
            return None;
        };
        let name = format!("basin_k8s_{}", uuid::Uuid::new_v4().simple());
        let admin = sqlx::PgPool::connect(&admin_url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&admin)
            .await
            .unwrap();
        admin.close().await;
        let mut url = url::Url::parse(&admin_url).unwrap();
        url.set_path(&format!("/{name}"));
        let db = Db::connect(url.as_str(), &config).await.unwrap();
        db.migrate().await.unwrap();
        Some((db, None))
    }

    fn start() -> DateTime<Utc> {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    async fn queue(db: &Db, tenant: uuid::Uuid, resources: Resources) -> TransferId {
        let id = TransferId::from_uuid(uuid::Uuid::now_v7());
        let plan = TransferPlan {
            reader: "AsciiGridReader".into(),
            writer: "GeoTiffWriter".into(),
            reader_parameters: Vec::new(),
            writer_parameters: Vec::new(),
            transformations: Vec::new(),
            source: Source::Upload {
                blob_key: "uploads/x/grid.asc".into(),
                url: "http://basin/uploads/x/grid.asc".into(),
                file_name: "grid.asc".into(),
            },
            target: Target::Download {
                file_name: "grid.tif".into(),
            },
            resources,
        };
        let row = TransferRow {
            id,
            tenant_id: crate::ids::TenantId::from_uuid(tenant),
            kind: "Export".into(),
            status: "Pending".into(),
            format: ".tif".into(),
            project_id: None,
            dataset_id: None,
            request: JsonText::from_value(&serde_json::to_value(&plan).unwrap()),
            progress: 0,
            error_message: None,
            import_results: JsonText::empty_array(),
            download_blob: None,
            attempts: 0,
            created_at: start(),
            created_by: uuid::Uuid::now_v7(),
            created_by_type: "OpenAPIAccount".into(),
            started_at: None,
            finished_at: None,
            updated_at: start(),
        };
        let transfer = NewTransfer {
            row,
            source_secret: None,
            upload_key: None,
        };
        store::insert(db, &transfer).await.unwrap();
        id
    }

    async fn tenant(db: &Db) -> uuid::Uuid {
        crate::identity::create_tenant_for_tests(db, "T", start())
            .await
            .unwrap()
            .as_uuid()
    }

    /// A store with one tenant, a clock at [`start`], and a dispatcher on a fake client.
    struct Setup {
        db: Db,
        clock: Arc<ManualClock>,
        jobs: Arc<FakeJobs>,
        dispatcher: Dispatcher,
        tenant: uuid::Uuid,
        _guard: Option<tempfile::TempDir>,
    }

    impl Setup {
        async fn new(postgres: bool) -> Option<Self> {
            let (db, guard) = store(postgres).await?;
            let clock = Arc::new(ManualClock::new(start()));
            let jobs = Arc::new(FakeJobs::default());
            let dispatcher = Dispatcher::new(DispatcherDeps {
                db: db.clone(),
                clock: clock.clone(),
                client: jobs.clone(),
                config: KubernetesConfig::default(),
                attempts_max: std::num::NonZeroU32::new(3).unwrap(),
                poll_interval: Duration::from_millis(10),
                queued: Arc::new(Notify::new()),
            });
            let tenant = tenant(&db).await;
            Some(Self {
                db,
                clock,
                jobs,
                dispatcher,
                tenant,
                _guard: guard,
            })
        }

        fn parts(&self) -> (Db, Arc<ManualClock>, Arc<FakeJobs>, uuid::Uuid) {
            (
                self.db.clone(),
                self.clock.clone(),
                self.jobs.clone(),
                self.tenant,
            )
        }
    }

    fn resources() -> Resources {
        Resources {
            memory_mb: 2048,
            cpu_cores: 0.5,
            storage_gb: Some(10.0),
            node_size: None,
            labels: vec!["pool=transfers".into()],
        }
    }

    async fn dispatch_cycle(postgres: bool) {
        let Some(mut setup) = Setup::new(postgres).await else {
            return;
        };
        let (db, clock, jobs, tenant) = setup.parts();
        let dispatcher = &mut setup.dispatcher;
        let first = queue(&db, tenant, resources()).await;

        // A queued transfer gets one Job, sized as asked; the next poll creates none.
        let done = dispatcher.dispatch_once().await.unwrap();
        assert_eq!(done.created, 1, "{done:?}");
        assert_eq!(jobs.names(), [manifest_name(first, 1)]);
        let job = jobs.created.lock().unwrap()[0].clone();
        let container = &job["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["args"],
            json!(["worker", "--transfer", first.to_string()])
        );
        assert_eq!(
            container["resources"]["limits"],
            json!({"cpu": "500m", "memory": "2048Mi"})
        );
        assert_eq!(
            job["spec"]["template"]["spec"]["nodeSelector"],
            json!({"pool": "transfers"})
        );
        assert_eq!(
            dispatcher.dispatch_once().await.unwrap(),
            Dispatched::default()
        );
        assert_eq!(jobs.names().len(), 1);

        // Its pod claims it and dies: once the lease ran out, a second Job, named for it.
        let lease_until = clock.now() + TimeDelta::seconds(60);
        let claimed = store::claim(&db, "pod-1", clock.now(), lease_until, 3, Some(first))
            .await
            .unwrap();
        assert!(claimed.is_some());
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 0);
        clock.advance(TimeDelta::seconds(61));
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 1);
        assert_eq!(jobs.names().last().unwrap(), &manifest_name(first, 2));
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 0);

        // The second pod claims it and is told to stop: given back, it needs a third Job.
        let lease_until = clock.now() + TimeDelta::seconds(60);
        store::claim(&db, "pod-2", clock.now(), lease_until, 3, Some(first))
            .await
            .unwrap()
            .unwrap();
        assert!(
            store::release(&db, first, "pod-2", clock.now())
                .await
                .unwrap()
        );
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 1);
        assert_eq!(jobs.names().last().unwrap(), &manifest_name(first, 3));
    }

    async fn cancelled_and_raced(postgres: bool) {
        let Some(mut setup) = Setup::new(postgres).await else {
            return;
        };
        let (db, clock, jobs, tenant) = setup.parts();
        let dispatcher = &mut setup.dispatcher;
        // A cancelled transfer gets no Job.
        let cancelled = queue(&db, tenant, resources()).await;
        assert!(
            store::cancel(&db, cancelled, clock.now(), "Cancelled.")
                .await
                .unwrap()
        );
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 0);
        assert!(jobs.names().is_empty());

        // Another replica created the Job first: 409 counts as created, and it is recorded.
        let raced = queue(&db, tenant, resources()).await;
        jobs.answer(Ok(Created::Existed));
        let done = dispatcher.dispatch_once().await.unwrap();
        assert_eq!(done.created, 1, "{done:?}");
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 0);
        assert!(
            jobs.names().is_empty(),
            "the Job of {raced} existed, so the fake recorded no new one"
        );
    }

    async fn refusals_end_the_transfer(postgres: bool) {
        let Some(mut setup) = Setup::new(postgres).await else {
            return;
        };
        let (db, _, jobs, tenant) = setup.parts();
        let dispatcher = &mut setup.dispatcher;
        let id = queue(&db, tenant, resources()).await;

        // An unreachable cluster is retried without limit.
        for _ in 0..5 {
            jobs.answer(Err(CreateError::Unavailable("connection refused".into())));
            let done = dispatcher.dispatch_once().await.unwrap();
            assert_eq!(done.deferred, 1, "{done:?}");
        }
        // A refusal leaves it queued twice, and the third ends it with Kubernetes' reason.
        let forbidden = CreateError::Refused {
            code: 403,
            message: "jobs.batch is forbidden".into(),
        };
        for _ in 0..2 {
            jobs.answer(Err(forbidden.clone()));
            assert_eq!(dispatcher.dispatch_once().await.unwrap().deferred, 1);
            let row = store::find_any(&db, id).await.unwrap().unwrap();
            assert_eq!(row.status, "Pending");
        }
        jobs.answer(Err(forbidden));
        assert_eq!(dispatcher.dispatch_once().await.unwrap().failed, 1);
        let row = store::find_any(&db, id).await.unwrap().unwrap();
        assert_eq!(row.status, "Error");
        assert_eq!(
            row.error_message.as_deref(),
            Some(
                "The transfer could not be started: Kubernetes refused the Job (HTTP 403): \
                 jobs.batch is forbidden"
            )
        );
        assert!(jobs.names().is_empty());
        assert_eq!(
            dispatcher.dispatch_once().await.unwrap(),
            Dispatched::default()
        );
    }

    async fn jobs_that_never_start(postgres: bool) {
        let Some(mut setup) = Setup::new(postgres).await else {
            return;
        };
        let (db, clock, jobs, tenant) = setup.parts();
        let dispatcher = &mut setup.dispatcher;
        let id = queue(&db, tenant, resources()).await;
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 1);

        // Within the start timeout nothing is looked up; after it, a waiting Job is left alone
        // and looked at again one timeout later, not at every poll.
        clock.advance(TimeDelta::seconds(599));
        assert_eq!(
            dispatcher.dispatch_once().await.unwrap(),
            Dispatched::default()
        );
        assert!(jobs.looked_up.lock().unwrap().is_empty());
        clock.advance(TimeDelta::seconds(2));
        assert_eq!(
            dispatcher.dispatch_once().await.unwrap(),
            Dispatched::default()
        );
        assert_eq!(*jobs.looked_up.lock().unwrap(), [manifest_name(id, 1)]);
        assert_eq!(
            dispatcher.dispatch_once().await.unwrap(),
            Dispatched::default()
        );
        assert_eq!(jobs.looked_up.lock().unwrap().len(), 1);

        // The Job ended without running the transfer (its worker could not start): a new Job.
        jobs.finished.lock().unwrap().push(manifest_name(id, 1));
        clock.advance(TimeDelta::seconds(601));
        let done = dispatcher.dispatch_once().await.unwrap();
        assert_eq!(done.lost, 1, "{done:?}");
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 1);
        assert_eq!(jobs.names().last().unwrap(), &manifest_name(id, 2));

        // Deleted, then ended again: the third Job that never runs it ends the transfer.
        jobs.created.lock().unwrap().clear();
        clock.advance(TimeDelta::seconds(601));
        assert_eq!(dispatcher.dispatch_once().await.unwrap().lost, 1);
        assert_eq!(dispatcher.dispatch_once().await.unwrap().created, 1);
        jobs.finished.lock().unwrap().push(manifest_name(id, 3));
        clock.advance(TimeDelta::seconds(601));
        let done = dispatcher.dispatch_once().await.unwrap();
        assert_eq!((done.lost, done.failed), (1, 1), "{done:?}");
        let row = store::find_any(&db, id).await.unwrap().unwrap();
        assert_eq!(row.status, "Error");
        assert!(
            row.error_message
                .as_deref()
                .unwrap()
                .contains("its Kubernetes Jobs ended 3 times without running it"),
            "{:?}",
            row.error_message
        );
    }

    #[tokio::test]
    async fn jobs_that_never_start_their_transfer_are_replaced_then_fail_it_sqlite() {
        jobs_that_never_start(false).await;
    }

    #[tokio::test]
    async fn jobs_that_never_start_their_transfer_are_replaced_then_fail_it_postgres() {
        jobs_that_never_start(true).await;
    }

    fn manifest_name(id: TransferId, dispatch: u32) -> String {
        job_name(id, dispatch)
    }

    #[tokio::test]
    async fn a_dispatch_cycle_creates_one_job_per_run_sqlite() {
        dispatch_cycle(false).await;
    }

    #[tokio::test]
    async fn a_dispatch_cycle_creates_one_job_per_run_postgres() {
        dispatch_cycle(true).await;
    }

    #[tokio::test]
    async fn cancelled_transfers_get_no_job_and_a_raced_one_counts_sqlite() {
        cancelled_and_raced(false).await;
    }

    #[tokio::test]
    async fn cancelled_transfers_get_no_job_and_a_raced_one_counts_postgres() {
        cancelled_and_raced(true).await;
    }

    #[tokio::test]
    async fn refused_jobs_end_the_transfer_after_three_refusals_sqlite() {
        refusals_end_the_transfer(false).await;
    }

    #[tokio::test]
    async fn refused_jobs_end_the_transfer_after_three_refusals_postgres() {
        refusals_end_the_transfer(true).await;
    }
}

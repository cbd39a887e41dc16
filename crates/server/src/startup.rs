//! Application assembly: connect and migrate the store, load the signing secret, bootstrap an
//! empty store, build the router with its middleware, bind the listener (port 0 is fine for
//! tests) and serve until asked to stop, draining in-flight requests.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Extension, FromRef, Request};
use axum::http::StatusCode;
use axum::middleware::from_fn;
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::auth::{Authenticator, CachedDirectory, SigningSecret, load_or_create_secret};
use crate::blob_urls::BlobUrls;
use crate::clock::Clock;
use crate::config::BlobLimits;
use crate::config::{Config, LimitsConfig};
use crate::datasets::service::{DatasetLimits, DatasetService};
use crate::db::Db;
use crate::db::changes::ChangeWatch;
use crate::hierarchy::service::{HierarchyLimits, HierarchyService};
use crate::http::extract::JsonBodyLimit;
use crate::http::paging::PageLimits;
use crate::http::{api_version, problem};
use crate::identity::bootstrap::{BootstrapOutput, bootstrap_if_empty};
use crate::identity::service::IdentityService;
use crate::leases::{Holder, Lease};
use crate::openapi::ApiDoc;
use crate::periodic::PeriodicRunner;
use crate::projects::service::{ProjectLimits, ProjectService};
use crate::public_base::PublicBase;
use crate::reactions::Reactions;
use crate::transfers::execution::WorkerPool;
use crate::transfers::execution::run::Runner;
use crate::transfers::execution::worker::QueueSettings;
use crate::transfers::service::{TransferDeps, TransferService};
use basin_blob::BlobStore;

/// State shared by every handler. Areas never see it whole: each takes the part it needs, its
/// own substate or a field, through `FromRef` (below). axum clones the state for every request,
/// so it is one shared [`AppParts`]: a clone is one counter, not one per service.
#[derive(Debug, Clone)]
pub(crate) struct AppState(Arc<AppParts>);

impl std::ops::Deref for AppState {
    type Target = AppParts;

    fn deref(&self) -> &AppParts {
        &self.0
    }
}

/// Gives handlers each field of [`AppParts`] by its type.
macro_rules! fields_from_ref {
    ($($field:ident: $type:ty),* $(,)?) => {
        $(impl FromRef<AppState> for $type {
            fn from_ref(app: &AppState) -> Self {
                app.$field.clone()
            }
        })*
    };
}

fields_from_ref!(
    db: Db,
    identity: IdentityService,
    projects: ProjectService,
    datasets: DatasetService,
    hierarchy: HierarchyService,
    auth: Arc<Authenticator>,
    page_limits: PageLimits,
    clock: Arc<dyn Clock>,
    blobs: Arc<dyn BlobStore>,
    blob_urls: BlobUrls,
    blob_limits: BlobLimits,
    transfers: TransferService,
    catalogue: Arc<basin_formats::Catalogue>,
    bin: crate::recycle_bin::service::RecycleBinService,
    events_admin: crate::events::admin::EventsAdmin,
    credits: crate::credits::service::CreditService,
    features: crate::features::service::FeatureService,
    tiles: crate::tiles::service::TileService,
    edr: crate::edr::service::EdrService,
);

/// What [`AppState`] shares.
#[derive(Debug)]
pub(crate) struct AppParts {
    /// The metadata store.
    pub(crate) db: Db,
    /// Identity operations.
    pub(crate) identity: IdentityService,
    /// Project operations.
    pub(crate) projects: ProjectService,
    /// Dataset operations.
    pub(crate) datasets: DatasetService,
    /// Bulk hierarchy operations.
    pub(crate) hierarchy: HierarchyService,
    /// Authentication.
    pub(crate) auth: Arc<Authenticator>,
    /// Page sizes.
    pub(crate) page_limits: PageLimits,
    /// Time.
    pub(crate) clock: Arc<dyn Clock>,
    /// Blob storage.
    pub(crate) blobs: Arc<dyn BlobStore>,
    /// Signed blob URLs.
    pub(crate) blob_urls: BlobUrls,
    /// Limits of the blob endpoint.
    pub(crate) blob_limits: BlobLimits,
    /// Transfer rules.
    pub(crate) transfers: TransferService,
    /// Readers and writers.
    pub(crate) catalogue: Arc<basin_formats::Catalogue>,
    /// The recycle bin.
    pub(crate) bin: crate::recycle_bin::service::RecycleBinService,
    /// Dead letters of platform events.
    pub(crate) events_admin: crate::events::admin::EventsAdmin,
    /// The credit ledger.
    pub(crate) credits: crate::credits::service::CreditService,
    /// Feature messages, the catalogue and licenses.
    pub(crate) features: crate::features::service::FeatureService,
    /// Tiles.
    pub(crate) tiles: crate::tiles::service::TileService,
    /// EDR queries.
    pub(crate) edr: crate::edr::service::EdrService,
}

/// Store, secret and state, ready to serve or to run admin commands against.
#[derive(Debug, Clone)]
pub struct Services {
    /// The configuration.
    pub(crate) config: Arc<Config>,
    /// Handler state.
    pub(crate) state: AppState,
    /// The HS256 signing secret.
    pub(crate) secret: SigningSecret,
    /// Woken when a transfer is queued.
    pub(crate) queued: Arc<tokio::sync::Notify>,
    /// Outbound fetches of imports from URLs.
    pub(crate) fetcher: basin_fetch::Fetcher,
    /// What tells the caches of authentication and access that the store changed.
    pub(crate) changes: ChangeWatch,
}

impl Services {
    /// Bootstraps an empty store (the first tenant, Owner and API key); `None` when the store
    /// was bootstrapped already. Safe to run from several replicas at once.
    pub async fn bootstrap_if_empty(&self) -> anyhow::Result<Option<BootstrapOutput>> {
        bootstrap_if_empty(&self.state.identity, &self.secret, &self.config.auth)
            .await
            .context("cannot bootstrap the store")
    }

    /// What `basin admin bootstrap` prints: the bootstrap ids with a fresh API key and tokens.
    pub async fn bootstrap(&self) -> anyhow::Result<BootstrapOutput> {
        crate::identity::bootstrap::bootstrap(&self.state.identity, &self.secret, &self.config.auth)
            .await
            .context("cannot bootstrap the store")
    }

    /// Connects to the store, runs migrations and loads the secret.
    #[expect(
        clippy::too_many_lines,
        reason = "every service built in dependency order, in one place"
    )]
    pub async fn connect(config: Config, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let url = config.effective_database_url();
        let db = Db::connect(&url, &config.database).await.with_context(|| {
            format!(
                "cannot open the database {}",
                crate::config::mask_url_password(&url)
            )
        })?;
        db.migrate().await.context("cannot migrate the database")?;
        let secret = load_or_create_secret(config.auth.jwt_secret.as_ref(), &config.data_dir)?;
        let identity = IdentityService::new(db.clone(), clock.clone(), storage_meters());
        let changes = ChangeWatch::new();
        let auth = Authenticator::new(
            &secret,
            &config.auth,
            clock.clone(),
            Arc::new(CachedDirectory::new(Arc::new(identity.clone()), &changes)),
        )
        .map_err(anyhow::Error::msg)?;
        let reactions = AreaReactions::wired();
        let projects = ProjectService::new(
            db.clone(),
            clock.clone(),
            ProjectLimits::from(&config.limits),
            identity.clone(),
            reactions.projects,
        );
        let blobs = crate::blob::open_store(&config).await?;
        let blob_urls = BlobUrls::new(
            &secret,
            config.public_url.as_deref().and_then(PublicBase::parse),
            chrono::TimeDelta::seconds(config.blob.upload_url_ttl_seconds),
            chrono::TimeDelta::seconds(config.blob.read_url_ttl_seconds),
        );
        let datasets = DatasetService::new(
            db.clone(),
            clock.clone(),
            projects.clone(),
            DatasetLimits::from(&config.limits),
            reactions.datasets,
        );
        let catalogue = Arc::new(basin_formats::Catalogue::standard());
        let queued = Arc::new(tokio::sync::Notify::new());
        let fetch_policy = config
            .fetch
            .policy(config.limits.upload_bytes_max.get())
            .map_err(anyhow::Error::msg)?;
        let fetcher =
            basin_fetch::Fetcher::new(fetch_policy).context("cannot set up outbound fetches")?;
        let transfers = TransferService::new(TransferDeps {
            db: db.clone(),
            blobs: blobs.clone(),
            urls: blob_urls.clone(),
            clock: clock.clone(),
            catalogue: catalogue.clone(),
            datasets: datasets.clone(),
            config: Arc::new(config.transfers.clone()),
            fetcher: fetcher.clone(),
            queued: queued.clone(),
            upload_retention: config.blob.upload_retention_seconds,
        });
        let blob_limits = BlobLimits::from(&config.limits);
        let hierarchy = HierarchyService::new(
            projects.clone(),
            datasets.clone(),
            blob_urls.clone(),
            clock.clone(),
            HierarchyLimits::from(&config.limits),
        );
        let bin = crate::recycle_bin::service::RecycleBinService::new(
            db.clone(),
            clock.clone(),
            datasets.clone(),
            blobs.clone(),
            crate::recycle_bin::service::BinSettings::from(&config.recycle_bin),
            reactions.recycle_bin,
        );
        let events_admin = crate::events::admin::EventsAdmin::new(db.clone(), clock.clone());
        let credits = crate::credits::service::CreditService::new(
            db.clone(),
            clock.clone(),
            identity.clone(),
            crate::credits::service::CreditSettings::from(&config.credits),
            Arc::new(crate::projects::ProjectNames),
        );
        let features = crate::features::service::FeatureService::new(
            db.clone(),
            clock.clone(),
            identity.clone(),
            crate::features::service::FeatureSettings::from(&config.features),
        );
        let tiles = crate::tiles::service::TileService::new(
            crate::tiles::service::TileDeps {
                datasets: datasets.clone(),
                db: db.clone(),
                blobs: blobs.clone(),
                catalogue: catalogue.clone(),
                work_dir: config.transfers.work_dir(&config.data_dir),
                settings: crate::tiles::service::TileSettings::from(&config.tiles),
                clock: clock.clone(),
            },
            &changes,
        );
        let edr = crate::edr::service::EdrService::new(crate::edr::service::EdrDeps {
            datasets: datasets.clone(),
            blobs: blobs.clone(),
            catalogue: catalogue.clone(),
            work_dir: config.transfers.work_dir(&config.data_dir),
            limits: config.edr.limits(),
            cache_bytes: config.edr.cache_bytes(),
        });
        let state = AppState(Arc::new(AppParts {
            tiles,
            edr,
            credits,
            features,
            bin,
            events_admin,
            identity,
            transfers,
            catalogue,
            datasets: datasets.clone(),
            hierarchy,
            projects,
            db,
            auth: Arc::new(auth),
            page_limits: PageLimits::from(&config.limits),
            clock,
            blobs,
            blob_urls,
            blob_limits,
        }));
        Ok(Self {
            config: Arc::new(config),
            state,
            secret,
            queued,
            fetcher,
            changes,
        })
    }

    /// The transfer workers of this process.
    pub(crate) fn worker_pool(&self) -> WorkerPool {
        let transfers = &self.config.transfers;
        let runner = Runner {
            db: self.state.db.clone(),
            blobs: self.state.blobs.clone(),
            datasets: self.state.datasets.clone(),
            catalogue: self.state.catalogue.clone(),
            clock: self.state.clock.clone(),
            work_dir: transfers.work_dir(&self.config.data_dir),
            lease: Lease::new(transfers.lease_seconds),
            heartbeat: transfers.heartbeat_seconds,
            result_bytes_max: self.config.limits.upload_bytes_max.get(),
            holder: Holder::of_this_process(),
            fetcher: self.fetcher.clone(),
            uploads: self.state.transfers.upload_keeper().clone(),
        };
        WorkerPool::new(
            runner,
            QueueSettings {
                attempts_max: transfers.attempts_max.get(),
                poll_interval: transfers.poll_interval_ms,
                export_ttl: chrono::TimeDelta::hours(
                    i64::try_from(transfers.export_ttl_hours).unwrap_or(i64::MAX / 4_000_000),
                ),
            },
            self.queued.clone(),
        )
    }
}

// ---- platform events ----

impl Services {
    /// The event relay of this process, when `events.relay` is on. Fails on a sink whose
    /// configuration is unusable (a malformed webhook secret), so the server does not start.
    pub(crate) fn event_relay(&self) -> anyhow::Result<Option<crate::events::relay::Relay>> {
        let events = &self.config.events;
        if !events.relay {
            return Ok(None);
        }
        let sinks = crate::events::sinks_from(events, &self.state.clock)
            .context("cannot set up the event sinks")?;
        Ok(Some(crate::events::relay::Relay::new(
            self.state.db.clone(),
            self.state.clock.clone(),
            sinks,
            crate::events::relay::RelaySettings::from(events),
        )))
    }
}

// ---- end of platform events ----

#[cfg(feature = "kubernetes")]
impl Services {
    /// The dispatcher of the Kubernetes executor, when it is the configured one. Fails when
    /// no Kubernetes API is configured (in-cluster credentials or a kubeconfig), so that a
    /// server that could never run a transfer does not start.
    async fn kubernetes_dispatcher(
        &self,
    ) -> anyhow::Result<Option<crate::transfers::execution::kubernetes::Dispatcher>> {
        use crate::transfers::execution::kubernetes::client::KubeJobClient;
        use crate::transfers::execution::kubernetes::dispatcher::{Dispatcher, DispatcherDeps};
        let transfers = &self.config.transfers;
        if transfers.executor != crate::config::TransferExecutor::Kubernetes {
            return Ok(None);
        }
        let client = KubeJobClient::infer(&transfers.kubernetes.namespace).await?;
        Ok(Some(Dispatcher::new(DispatcherDeps {
            db: self.state.db.clone(),
            clock: self.state.clock.clone(),
            client: Arc::new(client),
            config: transfers.kubernetes.clone(),
            attempts_max: transfers.attempts_max,
            poll_interval: transfers.poll_interval_ms,
            queued: self.queued.clone(),
        })))
    }
}

impl Services {
    /// Every periodic task (see `periodic.rs`), each with its interval.
    fn periodic_tasks(&self) -> PeriodicRunner {
        let state = &self.state;
        PeriodicRunner::default()
            .with(crate::recycle_bin::BinRetention(state.bin.clone()))
            .with(crate::credits::CreditSettling(state.credits.clone()))
            .with(crate::features::MessageRetention(state.features.clone()))
            .with(state.transfers.upload_keeper().clone())
            .with(crate::blob::BlobSweep(state.blobs.clone()))
            .with(crate::datasets::checksums::ChecksumRepair::new(
                state.db.clone(),
                state.blobs.clone(),
                state.clock.clone(),
                self.config.transfers.checksum_repair_seconds,
            ))
    }

    /// The periodic jobs every serving process runs until `stop`: the recycle bin's
    /// retention, the credits' expiry and timeout settling, the retention of feature messages
    /// and of unused uploads, the repair of missing checksums,
    /// and (unless `tiles.serve_renders_pyramids` is off) the rendering of stored tile
    /// pyramids.
    fn spawn_housekeeping(
        &self,
        stop: &tokio_util::sync::CancellationToken,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let mut tasks = self.periodic_tasks().spawn(stop);
        if self.config.tiles.serve_renders_pyramids {
            tasks.push(self.spawn_pyramid_renderer(stop));
        }
        let refresh = self.config.auth.access_refresh_ms;
        if !refresh.is_zero() {
            tasks.push(tokio::spawn(self.changes.clone().run(
                self.state.db.clone(),
                refresh,
                stop.clone(),
            )));
        }
        tasks
    }
}

impl Services {
    /// The renderer of stored tile pyramids, until `stop` (docs/tiles.md, "Stored pyramids").
    pub(crate) fn spawn_pyramid_renderer(
        &self,
        stop: &tokio_util::sync::CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(
            self.state
                .tiles
                .clone()
                .run_pyramids(Holder::of_this_process(), stop.clone()),
        )
    }
}

/// Logs where the server listens and, when it serves one, where its console is.
fn announce(address: SocketAddr, console: bool) {
    tracing::info!("listening on http://{address}");
    if console {
        tracing::info!("console at http://{address}/ (sign in with an API key or a token)");
    }
}

/// A bound, ready server.
#[derive(Debug)]
pub struct App {
    services: Services,
    listener: TcpListener,
    router: Router,
    bootstrap: Option<BootstrapOutput>,
    /// Relays platform events to their sinks (`events.relay`).
    relay: Option<crate::events::relay::Relay>,
    /// Creates the transfers' Jobs when `transfers.executor = "kubernetes"`.
    #[cfg(feature = "kubernetes")]
    dispatcher: Option<crate::transfers::execution::kubernetes::Dispatcher>,
}

impl App {
    /// Builds the app: store, secret, first-start bootstrap, router and listener.
    pub async fn build(config: Config, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let services = Services::connect(config, clock).await?;
        let bootstrap = bootstrap_if_empty(
            &services.state.identity,
            &services.secret,
            &services.config.auth,
        )
        .await
        .context("cannot bootstrap the store")?;
        let console = crate::console::Console::new(
            &services.config.console,
            services
                .config
                .public_url
                .as_deref()
                .and_then(PublicBase::parse)
                .as_ref(),
        )
        .context("cannot load the console")?;
        let router = router(services.state.clone(), &services.config.limits, console);
        let listener = TcpListener::bind(services.config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", services.config.listen))?;
        #[cfg(feature = "kubernetes")]
        let dispatcher = services.kubernetes_dispatcher().await?;
        let relay = services.event_relay()?;
        Ok(Self {
            services,
            listener,
            router,
            bootstrap,
            relay,
            #[cfg(feature = "kubernetes")]
            dispatcher,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// What the first start created, if this start bootstrapped the store.
    pub fn bootstrap(&self) -> Option<&BootstrapOutput> {
        self.bootstrap.as_ref()
    }

    /// The metadata store, for tests that sabotage it or check invariants in it.
    pub fn db(&self) -> &Db {
        &self.services.state.db
    }

    /// The signing secret in use.
    pub fn secret(&self) -> &SigningSecret {
        &self.services.secret
    }

    /// Serves until `shutdown` completes, then stops accepting connections and waits for
    /// in-flight requests. The whole shutdown ends within the configured grace period,
    /// whatever a request is doing: requests still running then are dropped, and database
    /// connections still busy are abandoned.
    pub async fn run_until_stopped(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let address = self.local_addr()?;
        let grace = self.services.config.limits.shutdown_grace_ms;
        let (stopping_tx, mut stopping_rx) = tokio::sync::watch::channel(None);
        let signal = async move {
            shutdown.await;
            tracing::info!("shutting down: draining in-flight requests");
            let _ = stopping_tx.send(Some(tokio::time::Instant::now() + grace));
        };
        announce(address, self.services.config.console.enabled);
        let workers_stop = tokio_util::sync::CancellationToken::new();
        let workers = (self.services.config.transfers.executor
            == crate::config::TransferExecutor::InProcess)
            .then(|| {
                let pool = self.services.worker_pool();
                let count = self.services.config.transfers.workers;
                tokio::spawn(pool.run(count, workers_stop.clone()))
            });
        #[cfg(feature = "kubernetes")]
        let workers = workers.or_else(|| {
            self.dispatcher
                .map(|dispatcher| tokio::spawn(dispatcher.run(workers_stop.clone())))
        });
        let housekeeping = self.services.spawn_housekeeping(&workers_stop);
        // The event relay stops with the workers: after them, so that the events of transfers
        // they end while stopping are still relayed by this process when it can.
        let relay_stop = tokio_util::sync::CancellationToken::new();
        let relay = self
            .relay
            .map(|relay| tokio::spawn(relay.run(relay_stop.clone())));
        let listener = crate::http::unread_body::LingeringListener(self.listener);
        let server = axum::serve(listener, self.router).with_graceful_shutdown(signal);
        let mut deadline_rx = stopping_rx.clone();
        let grace_expired = async move {
            let deadline = match deadline_rx.wait_for(Option::is_some).await {
                Ok(deadline) => *deadline,
                Err(_) => None,
            };
            if let Some(deadline) = deadline {
                tokio::time::sleep_until(deadline).await;
            }
        };
        let result = tokio::select! {
            result = server => result,
            () = grace_expired => {
                tracing::warn!("shutdown grace period expired; dropping remaining requests");
                Ok(())
            }
        };
        workers_stop.cancel();
        if let Some(workers) = workers {
            let _ = workers.await;
        }
        for job in housekeeping {
            let _ = job.await;
        }
        relay_stop.cancel();
        if let Some(relay) = relay {
            let _ = relay.await;
        }
        let deadline = *stopping_rx.borrow_and_update();
        let remaining = deadline.map_or(
            Duration::from_millis(crate::limits::DB_CLOSE_TIMEOUT_MS),
            |deadline| deadline.saturating_duration_since(tokio::time::Instant::now()),
        );
        // Leave the database a moment even when the grace period is used up, so that idle
        // connections close cleanly.
        let close_within = remaining.max(Duration::from_millis(100));
        self.services.state.db.close(close_within).await;
        tracing::info!("stopped");
        result
    }
}

/// The complete router: every area, the OpenAPI document and UI, the blob endpoint, and the
/// middleware stack. The request timeout applies to everything but uploads (the blob endpoint
/// and the direct file upload), which may take minutes and bound stalled bodies themselves.
pub(crate) fn router(
    state: AppState,
    limits: &LimitsConfig,
    console: Option<Arc<crate::console::Console>>,
) -> Router {
    let (api, mut openapi) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(crate::identity::router())
        .merge(crate::projects::router())
        .merge(crate::datasets::router())
        .merge(crate::recycle_bin::router())
        .merge(crate::credits::router())
        .merge(crate::features::router())
        .merge(crate::hierarchy::router())
        .merge(crate::transfers::router())
        .merge(crate::conversion::router())
        .merge(crate::gis::router())
        .merge(crate::tiles::router())
        .merge(crate::edr::router())
        .merge(crate::health::router())
        .merge(crate::events::router())
        .split_for_parts();
    let (uploads, uploads_openapi) = crate::transfers::upload_router().split_for_parts();
    openapi.merge(uploads_openapi);
    crate::openapi::add_api_version_header(&mut openapi, limits.page_size_max.get());
    crate::openapi::add_problem_responses(&mut openapi);
    crate::openapi::name_paths_with_their_suffix(&mut openapi);
    let middleware = ServiceBuilder::new()
        // Outermost, so that it sees every answer, those of the fallback and of the layers
        // below included.
        .layer(from_fn(crate::http::unread_body::finish_unread_body))
        .layer(SetRequestIdLayer::x_request_id(
            crate::telemetry::RequestIds::new(),
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_response(crate::telemetry::AccessLog),
        )
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(from_fn(api_version::announce_default))
        .layer(from_fn(problem::render_problems))
        .layer(CatchPanicLayer::new())
        .layer(Extension(JsonBodyLimit(limits.json_body_bytes_max)))
        .layer(DefaultBodyLimit::max(
            usize::try_from(limits.json_body_bytes_max).unwrap_or(usize::MAX),
        ));
    let mut app = api.merge(SwaggerUi::new("/docs").url("/openapi.json", openapi));
    if let Some(console) = console {
        app = app.merge(crate::console::router(console));
    }
    app.layer(TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        limits.request_timeout_ms,
    ))
    .merge(uploads)
    .merge(crate::blob::router())
    .fallback(problem::route_not_found)
    .with_state(state)
    .layer(middleware)
}

fn request_span(request: &Request) -> tracing::Span {
    let request_id = request
        .headers()
        .get(problem::REQUEST_ID_HEADER)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("-");
    tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        request_id = %request_id,
    )
}

// ---- the substates each area takes ----

impl FromRef<AppState> for crate::identity::routes::IdentityState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            identity: app.identity.clone(),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::projects::routes::ProjectsState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            projects: app.projects.clone(),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::datasets::routes::DatasetsState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            datasets: app.datasets.clone(),
            page_limits: app.page_limits,
            blob_urls: app.blob_urls.clone(),
            clock: app.clock.clone(),
        }
    }
}

impl FromRef<AppState> for crate::recycle_bin::routes::RecycleBinState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            bin: app.bin.clone(),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::credits::routes::CreditsState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            credits: app.credits.clone(),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::edr::routes::EdrState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            edr: app.edr.clone(),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::tiles::routes::TilesState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            tiles: app.tiles.clone(),
        }
    }
}

impl FromRef<AppState> for crate::features::routes::FeaturesState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            features: app.features.clone(),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::hierarchy::routes::HierarchyState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            hierarchy: app.hierarchy.clone(),
            projects: app.projects.clone(),
            blob_urls: app.blob_urls.clone(),
        }
    }
}

impl FromRef<AppState> for crate::transfers::routes::TransfersState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            transfers: app.transfers.clone(),
            datasets: app.datasets.clone(),
            blob_limits: app.blob_limits,
            page_limits: app.page_limits,
            hierarchy: app.hierarchy.clone(),
        }
    }
}

impl FromRef<AppState> for crate::events::routes::EventsState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            admin: app.events_admin.clone(),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::gis::routes::GisState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            gis: crate::gis::service::GisService::new(crate::gis::service::GisLimits::default()),
            page_limits: app.page_limits,
        }
    }
}

impl FromRef<AppState> for crate::blob::routes::BlobState {
    fn from_ref(app: &AppState) -> Self {
        Self {
            blobs: app.blobs.clone(),
            blob_urls: app.blob_urls.clone(),
            clock: app.clock.clone(),
            blob_limits: app.blob_limits,
            datasets: app.datasets.clone(),
            uploads: app.transfers.upload_keeper().clone(),
        }
    }
}

/// The areas that keep a tenant's bytes, each measuring its own for the tenant's storage
/// figures (see `identity/storage.rs`): identity, the lowest area, names none of them.
fn storage_meters() -> crate::identity::StorageMeters {
    crate::identity::StorageMeters::new(vec![
        // Live datasets, and datasets in the recycle bin.
        Arc::new(crate::datasets::DatasetStorage),
        // Uploads not yet imported or past their retention.
        Arc::new(crate::transfers::uploads::UploadStorage),
    ])
}

/// Every reaction of one area to another's changes (see `reactions.rs`), wired in one place:
/// who reacts to what is read here, not found by searching the areas.
struct AreaReactions {
    projects: Reactions<crate::projects::ProjectChange>,
    datasets: Reactions<crate::datasets::DatasetChange>,
    recycle_bin: Reactions<crate::recycle_bin::BinChange>,
}

impl AreaReactions {
    fn wired() -> Self {
        let recycler = Arc::new(crate::recycle_bin::Recycler);
        let pyramids = Arc::new(crate::tiles::PyramidKeeper);
        Self {
            // A deleted project enters the recycle bin with everything below it.
            projects: Reactions::new(vec![recycler.clone()]),
            // A deleted dataset enters the bin; new content requeues pyramids drawn from it.
            datasets: Reactions::new(vec![recycler, pyramids.clone()]),
            // A tiles dataset removed for good queues its pyramids' blobs for removal.
            recycle_bin: Reactions::new(vec![pyramids]),
        }
    }
}

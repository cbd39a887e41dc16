//! Configuration: defaults <- `basin.toml` <- `BASIN_*` environment <- command-line flags,
//! parsed once into a typed [`Config`]. Unknown keys are an error so typos do not pass
//! silently. docs/configuration.md lists every key; keep the two in step.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::error::Kind;
use figment::providers::{Format, Serialized, Toml};
use figment::value::{Dict, Map, Value};
use figment::{Figment, Metadata, Profile, Provider};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};

use crate::limits;

/// Prefix of configuration environment variables; `__` separates nested keys
/// (`BASIN_AUTH__JWT_SECRET` sets `auth.jwt_secret`).
pub(crate) const ENV_PREFIX: &str = "BASIN_";
/// Config file read from the working directory when `--config` is not given.
pub(crate) const DEFAULT_CONFIG_FILE: &str = "basin.toml";

/// The effective configuration.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address the HTTP server listens on.
    pub listen: SocketAddr,
    /// Folder for the SQLite database, the generated secret and local blobs.
    pub data_dir: PathBuf,
    /// Where clients reach Basin (`https://data.example.com`), used in signed blob URLs.
    /// When absent, URLs use `http://` and the `Host` header of the request asking for them.
    pub public_url: Option<String>,
    /// `sqlite://...` or `postgres://...`; SQLite in `data_dir` when absent.
    #[serde(serialize_with = "mask_database_url")]
    pub database_url: Option<String>,
    /// Database pool settings.
    pub database: DatabaseConfig,
    /// Authentication settings.
    pub auth: AuthConfig,
    /// Blob storage and signed blob URLs.
    pub blob: BlobConfig,
    /// Limits that deployments may tune.
    pub limits: LimitsConfig,
    /// Transfers: where they run, how workers claim them, what a request may ask for.
    pub transfers: TransfersConfig,
    /// Imports from URLs: which addresses they may reach, and their time limits.
    pub fetch: FetchConfig,
    /// The recycle bin: how long items stay, how the purge works.
    pub recycle_bin: RecycleBinConfig,
    /// Credits: reservation timeouts and the settle job (docs/credits.md).
    pub credits: CreditsConfig,
    /// Feature status messages: retention and the banner (docs/features.md).
    pub features: FeaturesConfig,
    /// Tiles: memory caches and client caching (docs/tiles.md).
    pub tiles: TilesConfig,
    /// Logging.
    pub log: LogConfig,
    /// Platform events: the outbox relay and its sinks (docs/events.md).
    pub events: EventsConfig,
    /// The browser console served at `/` (docs/console.md).
    pub console: ConsoleConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("basin-data"),
            public_url: None,
            database_url: None,
            database: DatabaseConfig::default(),
            auth: AuthConfig::default(),
            blob: BlobConfig::default(),
            limits: LimitsConfig::default(),
            transfers: TransfersConfig::default(),
            fetch: FetchConfig::default(),
            recycle_bin: RecycleBinConfig::default(),
            credits: CreditsConfig::default(),
            features: FeaturesConfig::default(),
            tiles: TilesConfig::default(),
            log: LogConfig::default(),
            events: EventsConfig::default(),
            console: ConsoleConfig::default(),
        }
    }
}

/// The browser console served at `/` (docs/console.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsoleConfig {
    /// Serve the console at `/` (off leaves `/` a 404, for API-only deployments).
    pub enabled: bool,
    /// Tiles drawn under previews: an `http(s)` URL template with `{z}`, `{x}` and `{y}`
    /// (e.g. `https://tile.openstreetmap.org/{z}/{x}/{y}.png`). None: no basemap, and no
    /// request leaves Basin's origin.
    pub basemap_url: Option<String>,
    /// Attribution shown under the map when a basemap is set (text, not HTML).
    pub basemap_attribution: Option<String>,
    /// Serve the console from this folder instead of the embedded files, reading it again
    /// whenever the page loads: for working on the console without rebuilding.
    pub dir: Option<PathBuf>,
    /// The feature whose status messages the console shows as its banner (with the global
    /// ones).
    pub feature_id: String,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        Self {
            feature_id: "Console".to_owned(),
            enabled: true,
            basemap_url: None,
            basemap_attribution: None,
            dir: None,
        }
    }
}

/// Database pool settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// Connections per process.
    pub max_connections: u32,
    /// How long a request waits for a connection, in milliseconds.
    pub acquire_timeout_ms: u64,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            max_connections: limits::DB_CONNECTIONS_MAX,
            acquire_timeout_ms: limits::DB_ACQUIRE_TIMEOUT_MS,
        }
    }
}

/// Authentication settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// HS256 secret for tokens Basin signs (`basin admin token`) and accepts. When absent, a
    /// random secret is generated on first start and kept in `data_dir/jwt-secret`. Several
    /// replicas must share one: set it explicitly there.
    #[serde(serialize_with = "mask_secret")]
    pub jwt_secret: Option<SecretString>,
    /// `iss` of tokens Basin signs, required on HS256 tokens it accepts.
    pub issuer: String,
    /// `aud` of tokens Basin signs, required on HS256 tokens it accepts.
    pub audience: String,
    /// Claim that carries the tenant id (`tenant_id` and `tenantId` are always accepted).
    pub tenant_claim: String,
    /// Lifetime of tokens printed by `basin admin bootstrap`, in seconds.
    pub bootstrap_token_ttl_seconds: i64,
    /// An OpenID Connect provider whose RS256/ES256 tokens are accepted (Keycloak, ...).
    pub oidc: Option<OidcConfig>,
    /// On SQLite, how often, in milliseconds, a serving process reads whether another process
    /// changed identities, memberships, projects or datasets, which ends what it kept in
    /// memory of authentication and access checks (PostgreSQL tells at once). 0 keeps nothing:
    /// every request reads the store.
    pub access_refresh_ms: u64,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            jwt_secret: None,
            issuer: "basin".into(),
            audience: "basin".into(),
            tenant_claim: "tenant_id".into(),
            bootstrap_token_ttl_seconds: 24 * 3600,
            oidc: None,
            access_refresh_ms: 250,
        }
    }
}

/// An external identity provider.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// Required `iss`.
    pub issuer: String,
    /// Required `aud` (one of).
    pub audience: Vec<String>,
    /// Where to fetch the JWKS (`https://.../protocol/openid-connect/certs`).
    pub jwks_url: Option<String>,
    /// A JWKS file, instead of a URL.
    pub jwks_file: Option<PathBuf>,
    /// How long a fetched JWKS is used before it is fetched again, in seconds.
    #[serde(default = "default_jwks_cache_ttl")]
    pub jwks_cache_ttl_seconds: u64,
}

fn default_jwks_cache_ttl() -> u64 {
    limits::JWKS_CACHE_TTL_SECONDS
}

/// Blob storage and signed blob URLs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BlobConfig {
    /// `file:///path`, `s3://bucket/prefix`, `az://container/prefix`, `gs://bucket/prefix` or
    /// `memory://`; a folder `data_dir/blobs` when absent.
    pub url: Option<String>,
    /// Settings of the object store (`aws_access_key_id`, `aws_region`,
    /// `azure_storage_account_name`, `google_service_account`, ...). Values are secret.
    #[serde(
        serialize_with = "mask_secret_map",
        deserialize_with = "option_values_as_text"
    )]
    pub options: BTreeMap<String, SecretString>,
    /// Lifetime of upload URLs, in seconds.
    pub upload_url_ttl_seconds: i64,
    /// Lifetime of read URLs, in seconds.
    pub read_url_ttl_seconds: i64,
    /// Folder backend: how long after a block commit its blocks are copied into one file, in
    /// seconds (the commit itself copies nothing; see docs/blobs.md).
    pub compaction_delay_seconds: u64,
    /// How long an upload no transfer used is kept after its last write, in seconds; then it
    /// is removed (an upload a completed import took over goes at once).
    pub upload_retention_seconds: u64,
}

impl Default for BlobConfig {
    fn default() -> Self {
        Self {
            url: None,
            options: BTreeMap::new(),
            upload_url_ttl_seconds: limits::UPLOAD_URL_TTL_SECONDS,
            read_url_ttl_seconds: limits::READ_URL_TTL_SECONDS,
            compaction_delay_seconds: limits::BLOB_COMPACTION_DELAY_SECONDS,
            upload_retention_seconds: limits::UPLOAD_RETENTION_SECONDS,
        }
    }
}

/// Limits that deployments may tune.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Page size when a list request gives none.
    pub page_size_default: u32,
    /// Largest page size a client may ask for; larger is 400.
    pub page_size_max: u32,
    /// Largest JSON body, in bytes; larger is 413.
    pub json_body_bytes_max: u64,
    /// Requests running longer are cancelled with 408 (not uploads: see
    /// `upload_idle_timeout_ms`).
    pub request_timeout_ms: u64,
    /// Uploads (blob requests and direct file uploads) whose body sends nothing for this long
    /// are abandoned: 408, nothing stored.
    pub upload_idle_timeout_ms: u64,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace_ms: u64,
    /// Longest project name, in characters.
    pub project_name_chars_max: usize,
    /// Deepest subproject: a root project is depth 0.
    pub project_depth_max: u32,
    /// Most own members of one project.
    pub project_members_max: usize,
    /// Largest blob upload, in bytes, sent whole or as blocks; larger is 413.
    pub upload_bytes_max: u64,
    /// Largest file sent directly to `POST .../file/upload`, in bytes; larger is 413.
    pub direct_upload_bytes_max: u64,
    /// Actions in one bulk hierarchy request; more is 400.
    pub hierarchy_actions_max: usize,
    /// Folders and files one bulk hierarchy request may create; more is 400, nothing created.
    pub hierarchy_created_max: usize,
    /// Tags on one dataset; more is 400.
    pub dataset_tags_max: usize,
    /// Length of one dataset tag, in characters; longer is 400.
    pub dataset_tag_chars_max: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            page_size_default: limits::PAGE_SIZE_DEFAULT,
            page_size_max: limits::PAGE_SIZE_MAX,
            json_body_bytes_max: limits::JSON_BODY_BYTES_MAX,
            request_timeout_ms: limits::REQUEST_TIMEOUT_MS,
            upload_idle_timeout_ms: limits::UPLOAD_IDLE_TIMEOUT_MS,
            shutdown_grace_ms: limits::SHUTDOWN_GRACE_MS,
            project_name_chars_max: limits::PROJECT_NAME_CHARS_MAX,
            project_depth_max: limits::PROJECT_DEPTH_MAX,
            project_members_max: limits::PROJECT_MEMBERS_MAX,
            upload_bytes_max: limits::UPLOAD_BYTES_MAX,
            direct_upload_bytes_max: limits::DIRECT_UPLOAD_BYTES_MAX,
            hierarchy_actions_max: limits::HIERARCHY_ACTIONS_MAX,
            hierarchy_created_max: limits::HIERARCHY_CREATED_MAX,
            dataset_tags_max: limits::DATASET_TAGS_MAX,
            dataset_tag_chars_max: limits::DATASET_TAG_CHARS_MAX,
        }
    }
}

/// Where transfers run.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TransferExecutor {
    /// Worker tasks inside each `basin serve` process (`transfers.workers` of them).
    InProcess,
    /// `basin worker` processes elsewhere; `basin serve` only queues.
    External,
    /// One Kubernetes Job per transfer (cargo feature `kubernetes`).
    Kubernetes,
}

/// A machine type a transfer may ask for by `nodeSize`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeSize {
    /// Name clients send, e.g. `Medium`.
    pub name: String,
    /// VM family, added to the transfer's labels as `svc.platform/vmsize=<family>`.
    pub family: String,
    /// CPU cores of the machine.
    pub cpu_cores: f64,
    /// Memory of the machine, in MB.
    pub memory_mb: u64,
    /// Local disk of the machine, in GB.
    pub storage_gb: f64,
}

/// The recycle bin (docs/recycle-bin.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecycleBinConfig {
    /// Items in the bin longer than this many days are removed for good (spec: 180).
    pub retention_days: u32,
    /// How often each process looks for items past retention, in seconds.
    pub retention_check_seconds: u64,
    /// Rows one purge transaction removes at most: a large project is removed in several.
    pub purge_batch_size: u32,
}

impl Default for RecycleBinConfig {
    fn default() -> Self {
        Self {
            retention_days: 180,
            retention_check_seconds: 3600,
            purge_batch_size: 500,
        }
    }
}

/// Credits: how long reservations may hold credits, and how often expiries and timeouts are
/// settled for pools nobody reads.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CreditsConfig {
    /// Timeout of a reservation that names none, in seconds; 0 for none (it holds its credits
    /// until spent or released).
    pub reservation_timeout_default_seconds: u64,
    /// Longest timeout a reservation may ask for, in seconds (default 90 days).
    pub reservation_timeout_max_seconds: u64,
    /// How often each process settles expiries and reservation timeouts, in seconds.
    pub settle_interval_seconds: u64,
}

impl Default for CreditsConfig {
    fn default() -> Self {
        Self {
            reservation_timeout_default_seconds: 0,
            reservation_timeout_max_seconds: 90 * 24 * 3600,
            settle_interval_seconds: 60,
        }
    }
}

/// Feature status messages: how long expired ones are kept, and how the banner is cached
/// (docs/features.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeaturesConfig {
    /// Expired messages are removed this many days after their `expiringDate`.
    pub message_retention_days: u32,
    /// How often each process runs the retention job, in seconds.
    pub retention_interval_seconds: u64,
    /// How long a process answers the banner from memory before it reads the store again, in
    /// milliseconds: the delay after which a change made through another replica shows. Changes
    /// made through this process show at once. 0 reads the store on every request.
    pub banner_refresh_ms: u64,
    /// `max-age` of banner answers in seconds, never beyond the next start or end of a
    /// message; 0 answers `no-cache` (clients revalidate with `If-None-Match` every time).
    pub banner_max_age_seconds: u64,
    /// Not yet expired messages of one feature (and of the global set) the banner considers,
    /// those starting soonest.
    pub banner_messages_max: u32,
}

impl Default for FeaturesConfig {
    fn default() -> Self {
        Self {
            message_retention_days: 30,
            retention_interval_seconds: 3600,
            banner_refresh_ms: 1000,
            banner_max_age_seconds: 0,
            banner_messages_max: 1000,
        }
    }
}

/// Tiles: how much memory the caches of each process may hold, and how long clients may keep
/// tiles (docs/tiles.md).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TilesConfig {
    /// Megabytes of encoded tiles kept in memory.
    pub tile_cache_mb: u64,
    /// Megabytes of loaded data (one item, step and layer of a dataset, as 32-bit floats with
    /// overviews) kept in memory. A band larger than this is loaded for each tile it draws.
    pub band_cache_mb: u64,
    /// `Cache-Control: private, max-age` of tiles, in seconds. Clients revalidate with
    /// `If-None-Match` after it.
    pub max_age_seconds: u32,
    /// Most tiles one tiles dataset may ask to store (`storedZoomLevels`): the tiles of the
    /// stored levels that meet the data's extent, times its steps and layers. A definition
    /// over it is refused (422 `too-many-stored-tiles`); 0 refuses every stored level.
    pub stored_tiles_max: u64,
    /// Whether `basin serve` processes render stored pyramids (`basin worker` processes always
    /// do): off keeps the drawing off the processes that answer requests.
    pub serve_renders_pyramids: bool,
    /// Seconds a pyramid's renderer holds it without renewing (renewed every sixth of it);
    /// a crashed renderer's pyramid waits this long, and so does one after a fault.
    pub pyramid_lease_seconds: u64,
    /// How often an idle renderer looks for pyramids queued by another process, in
    /// milliseconds (one queued by the same process wakes it at once).
    pub pyramid_poll_ms: u64,
}

impl Default for TilesConfig {
    fn default() -> Self {
        Self {
            tile_cache_mb: 256,
            band_cache_mb: 1024,
            max_age_seconds: 60,
            stored_tiles_max: 100_000,
            serve_renders_pyramids: true,
            pyramid_lease_seconds: 60,
            pyramid_poll_ms: 5000,
        }
    }
}

/// Transfers: executor, queue timing and the resources a request may ask for.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransfersConfig {
    /// Where transfers run.
    pub executor: TransferExecutor,
    /// Transfers one process runs at once (in-process executor and `basin worker`).
    pub workers: usize,
    /// Folder for the temporary files of running transfers; `<data_dir>/work` when absent.
    pub work_dir: Option<PathBuf>,
    /// A claimed transfer whose worker has not renewed its lease for this long is taken up
    /// again by another worker.
    pub lease_seconds: u64,
    /// How often a worker renews its lease and records progress.
    pub heartbeat_seconds: u64,
    /// Claims of one transfer before it ends in `Error` (a worker died on it each time).
    pub attempts_max: u32,
    /// How often an idle worker looks for queued transfers.
    pub poll_interval_ms: u64,
    /// Memory of a transfer that asks for none, in MB.
    pub memory_mb_default: u64,
    /// Most memory a transfer may ask for without `nodeSize`, in MB.
    pub memory_mb_max: u64,
    /// CPU cores of a transfer that asks for none.
    pub cpu_cores_default: f64,
    /// Most CPU cores a transfer may ask for without `nodeSize`.
    pub cpu_cores_max: f64,
    /// Most scratch storage a transfer may ask for without `nodeSize`, in GB.
    pub storage_gb_max: f64,
    /// Machine types `nodeSize` may name.
    pub node_sizes: Vec<NodeSize>,
    /// Export results (`downloadPath`) are removed this many hours after the export ended.
    pub export_ttl_hours: u64,
    /// How often each server looks for datasets whose checksum was never recorded (a worker
    /// stopped between storing a large result and hashing it) and fills it in, in seconds.
    pub checksum_repair_seconds: u64,
    /// The Jobs of the Kubernetes executor (`executor = "kubernetes"`).
    pub kubernetes: KubernetesConfig,
}

impl Default for TransfersConfig {
    fn default() -> Self {
        let node = |name: &str, cpu_cores: f64, memory_mb: u64, storage_gb: f64| NodeSize {
            name: name.to_owned(),
            family: "standard".to_owned(),
            cpu_cores,
            memory_mb,
            storage_gb,
        };
        Self {
            executor: TransferExecutor::InProcess,
            workers: limits::TRANSFER_WORKERS,
            work_dir: None,
            lease_seconds: limits::TRANSFER_LEASE_SECONDS,
            heartbeat_seconds: limits::TRANSFER_HEARTBEAT_SECONDS,
            attempts_max: limits::TRANSFER_ATTEMPTS_MAX,
            poll_interval_ms: limits::TRANSFER_POLL_INTERVAL_MS,
            memory_mb_default: limits::TRANSFER_MEMORY_MB_DEFAULT,
            memory_mb_max: limits::TRANSFER_MEMORY_MB_MAX,
            cpu_cores_default: 1.0,
            cpu_cores_max: limits::TRANSFER_CPU_CORES_MAX,
            storage_gb_max: limits::TRANSFER_STORAGE_GB_MAX,
            node_sizes: vec![
                node("Small", 2.0, 8_192, 64.0),
                node("Medium", 4.0, 16_384, 128.0),
                node("Large", 8.0, 32_768, 256.0),
                node("XLarge", 16.0, 65_536, 512.0),
            ],
            export_ttl_hours: limits::EXPORT_TTL_HOURS,
            checksum_repair_seconds: limits::CHECKSUM_REPAIR_SECONDS,
            kubernetes: KubernetesConfig::default(),
        }
    }
}

/// The Jobs of the Kubernetes executor: one Job of the Basin image per transfer, running
/// `basin worker --transfer <id>` (docs/deployment.md, "Where transfers run").
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct KubernetesConfig {
    /// Namespace the Jobs are created in.
    pub namespace: String,
    /// The Basin image the Jobs run (the repository's Dockerfile builds one).
    pub image: String,
    /// `Always`, `IfNotPresent` or `Never`.
    pub image_pull_policy: String,
    /// Secret whose keys become the workers' environment: `BASIN_DATABASE_URL`,
    /// `BASIN_AUTH__JWT_SECRET`, `BASIN_BLOB__URL` and whatever else the server is configured
    /// with.
    pub env_from_secret: String,
    /// ServiceAccount of the Jobs' pods; the namespace's default when absent. Workers never
    /// call the Kubernetes API, so its token is not mounted.
    pub service_account: Option<String>,
    /// Finished Jobs (and their pods) are removed this long after they end.
    pub ttl_seconds_after_finished: u32,
    /// A Job running longer than this is stopped by Kubernetes; no limit when absent.
    pub active_deadline_seconds: Option<u64>,
    /// Time a worker gets after SIGTERM to give its transfer back to the queue.
    pub termination_grace_period_seconds: u32,
    /// StorageClass of the scratch volume of transfers that ask for `storageSizeGb`; the
    /// cluster's default when absent.
    pub storage_class: Option<String>,
    /// Refusals by the cluster (403, 422, ...) of one transfer's Job, or Jobs that ended
    /// without running it, before the transfer ends in `Error`. Unavailability (5xx, no
    /// connection) is retried without limit.
    pub create_refusals_max: u32,
    /// A Job whose worker has not taken its transfer after this long is looked up (and
    /// again after each further period): when it ended or was deleted without running the
    /// transfer, the transfer gets a new Job.
    pub start_timeout_seconds: u64,
    /// Labels added to every Job and pod, e.g. a team or cost centre.
    pub labels: BTreeMap<String, String>,
    /// Annotations added to every Job and pod, e.g. to turn a service mesh sidecar off.
    pub annotations: BTreeMap<String, String>,
}

impl Default for KubernetesConfig {
    fn default() -> Self {
        Self {
            namespace: "basin".into(),
            image: "basin:latest".into(),
            image_pull_policy: "IfNotPresent".into(),
            env_from_secret: "basin-env".into(),
            service_account: None,
            ttl_seconds_after_finished: 3_600,
            active_deadline_seconds: None,
            termination_grace_period_seconds: 60,
            storage_class: None,
            create_refusals_max: 3,
            start_timeout_seconds: 600,
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
        }
    }
}

impl TransfersConfig {
    /// The folder for temporary files of running transfers.
    pub(crate) fn work_dir(&self, data_dir: &std::path::Path) -> PathBuf {
        self.work_dir
            .clone()
            .unwrap_or_else(|| data_dir.join("work"))
    }
}

/// Imports from URLs (docs/fetch.md). By default they reach public addresses only.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FetchConfig {
    /// Allow private, loopback and link-local addresses too (every class but multicast,
    /// broadcast and unspecified): only where no user can be an attacker.
    pub allow_private: bool,
    /// Networks always allowed, even when private: `["10.1.0.0/16", "fd00:1::/64"]`.
    pub allowed_networks: Vec<String>,
    /// Longest wait for a connection, DNS included.
    pub connect_timeout_ms: u64,
    /// Longest wait for the next byte or FTP reply.
    pub idle_timeout_ms: u64,
    /// Longest whole fetch.
    pub total_timeout_ms: u64,
    /// Most redirects followed.
    pub redirects_max: u8,
}

impl Default for FetchConfig {
    fn default() -> Self {
        let policy = basin_fetch::FetchPolicy::default();
        Self {
            allow_private: policy.allow_private,
            allowed_networks: Vec::new(),
            connect_timeout_ms: basin_fetch::FETCH_CONNECT_TIMEOUT_MS,
            idle_timeout_ms: basin_fetch::FETCH_IDLE_TIMEOUT_MS,
            total_timeout_ms: basin_fetch::FETCH_TOTAL_TIMEOUT_MS,
            redirects_max: policy.redirects_max,
        }
    }
}

impl FetchConfig {
    /// The fetch policy these settings give; files are at most `bytes_max` (the upload limit,
    /// since an imported file becomes a blob). Fails naming a malformed network.
    pub(crate) fn policy(&self, bytes_max: u64) -> Result<basin_fetch::FetchPolicy, String> {
        let allowed_networks = self
            .allowed_networks
            .iter()
            .map(|raw| {
                raw.trim()
                    .parse::<basin_fetch::IpNetwork>()
                    .map_err(|error| format!("fetch.allowed_networks: {error}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(basin_fetch::FetchPolicy {
            allow_private: self.allow_private,
            allowed_networks,
            bytes_max,
            connect_timeout: std::time::Duration::from_millis(self.connect_timeout_ms),
            idle_timeout: std::time::Duration::from_millis(self.idle_timeout_ms),
            total_timeout: std::time::Duration::from_millis(self.total_timeout_ms),
            redirects_max: self.redirects_max,
        })
    }
}

/// Log output.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// `text` for people, `json` for log collectors.
    pub format: LogFormat,
    /// A tracing filter, e.g. `info` or `basin=debug,sqlx=warn`.
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            format: LogFormat::Text,
            level: "info".into(),
        }
    }
}

/// Log line format.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Values given on the command line; they win over everything else.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct ConfigOverrides {
    /// `--listen`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) listen: Option<SocketAddr>,
    /// `--data-dir`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) data_dir: Option<PathBuf>,
    /// `--database-url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) database_url: Option<String>,
}

// ---- platform events (events/, docs/events.md) ----

/// Platform events: how the relay polls, retries and gives up, and where it delivers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct EventsConfig {
    /// Whether this process runs a relay (`basin serve`). Several replicas may all run one.
    pub relay: bool,
    /// How often an idle relay looks for new or due events, in milliseconds.
    pub poll_interval_ms: u64,
    /// Events one relay claims per sink and round.
    pub batch_size: u32,
    /// A claimed delivery whose relay has not finished it within this long is taken up by
    /// another relay, in milliseconds. Longer than the webhook timeout.
    pub lease_ms: u64,
    /// Delivery attempts per event and sink before it is dead-lettered.
    pub attempts_max: u32,
    /// Wait before the first retry, in milliseconds; doubles with each attempt.
    pub backoff_initial_ms: u64,
    /// Longest wait between two attempts, in milliseconds.
    pub backoff_max_ms: u64,
    /// Webhook endpoints, each receiving every event (or the types it lists).
    pub webhooks: Vec<WebhookConfig>,
    /// The NATS JetStream sink, when set.
    pub nats: Option<NatsConfig>,
}

impl Default for EventsConfig {
    fn default() -> Self {
        Self {
            relay: true,
            poll_interval_ms: limits::EVENTS_POLL_INTERVAL_MS,
            batch_size: limits::EVENTS_BATCH_SIZE,
            lease_ms: limits::EVENTS_LEASE_MS,
            attempts_max: limits::EVENTS_ATTEMPTS_MAX,
            backoff_initial_ms: limits::EVENTS_BACKOFF_INITIAL_MS,
            backoff_max_ms: limits::EVENTS_BACKOFF_MAX_MS,
            webhooks: Vec::new(),
            nats: None,
        }
    }
}

impl EventsConfig {
    fn check(&self) -> Result<(), String> {
        if self.batch_size == 0 || self.batch_size > limits::EVENTS_BATCH_SIZE_MAX {
            return Err(format!(
                "events.batch_size must be between 1 and {}",
                limits::EVENTS_BATCH_SIZE_MAX
            ));
        }
        if self.attempts_max == 0 {
            return Err("events.attempts_max must be at least 1".into());
        }
        let mut names = std::collections::BTreeSet::new();
        for webhook in &self.webhooks {
            if !names.insert(webhook.name.as_str()) {
                return Err(format!(
                    "events.webhooks: the name '{}' is used twice",
                    webhook.name
                ));
            }
            if webhook.name.is_empty() || webhook.name.len() > limits::EVENTS_SINK_NAME_CHARS_MAX {
                return Err(format!(
                    "events.webhooks: a name must have 1 to {} characters",
                    limits::EVENTS_SINK_NAME_CHARS_MAX
                ));
            }
            if url::Url::parse(&webhook.url)
                .map_or(true, |url| !matches!(url.scheme(), "http" | "https"))
            {
                return Err(format!(
                    "events.webhooks '{}': url must be http(s)",
                    webhook.name
                ));
            }
            crate::events::signature::WebhookSecret::parse(webhook.secret.expose_secret())
                .map_err(|error| format!("events.webhooks '{}': {error}", webhook.name))?;
        }
        Ok(())
    }
}

/// A webhook endpoint (Standard Webhooks signatures).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// A stable name, shown in dead letters; renaming it orphans the pending deliveries.
    pub name: String,
    /// Where events are POSTed.
    pub url: String,
    /// The signing secret, `whsec_` and base64 (Standard Webhooks).
    #[serde(serialize_with = "mask_required_secret")]
    pub secret: SecretString,
    /// Event types sent (`basin.transfer.finished`); every type when empty.
    #[serde(default)]
    pub types: Vec<String>,
    /// How long one POST may take, in milliseconds.
    #[serde(default = "default_webhook_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_webhook_timeout_ms() -> u64 {
    limits::EVENTS_WEBHOOK_TIMEOUT_MS
}

/// The NATS JetStream sink.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NatsConfig {
    /// Server URL (`nats://127.0.0.1:4222`).
    pub url: String,
    /// The stream, created on start if missing; it captures `<subject_prefix>.>`.
    #[serde(default = "default_nats_stream")]
    pub stream: String,
    /// Subjects are `<subject_prefix>.<type without "basin.">` (`basin.events.project.recycled`).
    #[serde(default = "default_nats_subject_prefix")]
    pub subject_prefix: String,
    /// JetStream's duplicate window on the stream, in seconds: a redelivery within it is
    /// dropped by the server (`Nats-Msg-Id` is the event id).
    #[serde(default = "default_nats_duplicate_window_seconds")]
    pub duplicate_window_seconds: u64,
}

fn default_nats_stream() -> String {
    "BASIN_EVENTS".into()
}

fn default_nats_subject_prefix() -> String {
    "basin.events".into()
}

fn default_nats_duplicate_window_seconds() -> u64 {
    limits::EVENTS_NATS_DUPLICATE_WINDOW_SECONDS
}

fn mask_required_secret<S: Serializer>(_secret: &SecretString, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("***")
}

// ---- end of platform events ----

/// Why configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ConfigError {
    /// The named config file does not exist.
    #[error("config file {0} does not exist")]
    MissingFile(PathBuf),
    /// A value is malformed or a key unknown: one line per problem, each naming where it is
    /// (the environment variable, or the key and the file).
    #[error("invalid configuration: {0}")]
    Invalid(String),
    /// A value parses but makes no sense.
    #[error("invalid configuration: {0}")]
    Inconsistent(String),
}

impl Config {
    /// Loads the configuration from an optional file, environment pairs and flags. `file`
    /// `None` reads `basin.toml` if it exists. `env` is usually `std::env::vars()`; tests pass
    /// their own pairs.
    pub(crate) fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &ConfigOverrides,
    ) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) if !path.exists() => return Err(ConfigError::MissingFile(path.into())),
            Some(path) => figment = figment.merge(Toml::file_exact(path)),
            None => figment = figment.merge(Toml::file(DEFAULT_CONFIG_FILE)),
        }
        figment = figment
            .merge(Environment::from_pairs(env))
            .merge(Serialized::defaults(overrides));
        let config: Config = figment
            .extract()
            .map_err(|error| ConfigError::Invalid(describe(error)))?;
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<(), ConfigError> {
        let limits = &self.limits;
        if limits.page_size_max == 0 || limits.page_size_default == 0 {
            return Err(ConfigError::Inconsistent(
                "limits.page_size_default and limits.page_size_max must be at least 1".into(),
            ));
        }
        if limits.page_size_default > limits.page_size_max {
            return Err(ConfigError::Inconsistent(
                "limits.page_size_default must not exceed limits.page_size_max".into(),
            ));
        }
        self.events.check().map_err(ConfigError::Inconsistent)?;
        if let Some(oidc) = &self.auth.oidc
            && oidc.jwks_url.is_none()
            && oidc.jwks_file.is_none()
        {
            return Err(ConfigError::Inconsistent(
                "auth.oidc needs jwks_url or jwks_file".into(),
            ));
        }
        if limits.request_timeout_ms == 0 || limits.upload_idle_timeout_ms == 0 {
            return Err(ConfigError::Inconsistent(
                "limits.request_timeout_ms and limits.upload_idle_timeout_ms must be at least 1"
                    .into(),
            ));
        }
        if limits.hierarchy_actions_max == 0 || limits.hierarchy_created_max == 0 {
            return Err(ConfigError::Inconsistent(
                "limits.hierarchy_actions_max and limits.hierarchy_created_max must be at least 1"
                    .into(),
            ));
        }
        self.check_blob()?;
        self.check_console()?;
        let fetch = &self.fetch;
        if fetch.connect_timeout_ms == 0
            || fetch.idle_timeout_ms == 0
            || fetch.total_timeout_ms == 0
        {
            return Err(ConfigError::Inconsistent(
                "fetch.connect_timeout_ms, idle_timeout_ms and total_timeout_ms must be at least 1"
                    .into(),
            ));
        }
        fetch
            .policy(limits.upload_bytes_max)
            .map_err(ConfigError::Inconsistent)?;
        self.check_executor()?;
        if self.database.max_connections == 0 {
            return Err(ConfigError::Inconsistent(
                "database.max_connections must be at least 1".into(),
            ));
        }
        self.check_jobs()
    }

    /// The periodic jobs: recycle bin retention, credit settling, feature message retention.
    fn check_jobs(&self) -> Result<(), ConfigError> {
        let bin = &self.recycle_bin;
        if bin.retention_check_seconds == 0 || bin.purge_batch_size == 0 {
            return Err(ConfigError::Inconsistent(
                "recycle_bin.retention_check_seconds and recycle_bin.purge_batch_size must be at least 1"
                    .into(),
            ));
        }
        let credits = &self.credits;
        if credits.settle_interval_seconds == 0
            || credits.reservation_timeout_default_seconds > credits.reservation_timeout_max_seconds
        {
            return Err(ConfigError::Inconsistent(
                "credits.settle_interval_seconds must be at least 1, and \
                 credits.reservation_timeout_default_seconds at most credits.reservation_timeout_max_seconds"
                    .into(),
            ));
        }
        let features = &self.features;
        if features.retention_interval_seconds == 0 || features.banner_messages_max == 0 {
            return Err(ConfigError::Inconsistent(
                "features.retention_interval_seconds and features.banner_messages_max must be at least 1"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The Kubernetes executor exists only in builds with the cargo feature; without it, a
    /// server configured for it would queue transfers that nothing ever runs.
    fn check_executor(&self) -> Result<(), ConfigError> {
        if self.transfers.executor == TransferExecutor::Kubernetes {
            if !cfg!(feature = "kubernetes") {
                return Err(ConfigError::Inconsistent(
                    "transfers.executor = \"kubernetes\" needs a basin built with --features kubernetes"
                        .into(),
                ));
            }
            let kubernetes = &self.transfers.kubernetes;
            if !matches!(
                kubernetes.image_pull_policy.as_str(),
                "Always" | "IfNotPresent" | "Never"
            ) {
                return Err(ConfigError::Inconsistent(
                    "transfers.kubernetes.image_pull_policy must be Always, IfNotPresent or Never"
                        .into(),
                ));
            }
            if kubernetes.namespace.is_empty()
                || kubernetes.image.is_empty()
                || kubernetes.env_from_secret.is_empty()
            {
                return Err(ConfigError::Inconsistent(
                    "transfers.kubernetes.namespace, image and env_from_secret must not be empty"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    fn check_console(&self) -> Result<(), ConfigError> {
        if let Some(template) = &self.console.basemap_url {
            let usable = ["{z}", "{x}", "{y}"]
                .iter()
                .all(|part| template.contains(part))
                && url::Url::parse(&template.replace(['{', '}'], ""))
                    .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host());
            if !usable {
                return Err(ConfigError::Inconsistent(
                    "console.basemap_url must be an http or https URL template with {z}, {x} and {y}"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    fn check_blob(&self) -> Result<(), ConfigError> {
        let ttl_range = limits::BLOB_URL_TTL_SECONDS_MIN..=limits::BLOB_URL_TTL_SECONDS_MAX;
        for (key, ttl) in [
            (
                "blob.upload_url_ttl_seconds",
                self.blob.upload_url_ttl_seconds,
            ),
            ("blob.read_url_ttl_seconds", self.blob.read_url_ttl_seconds),
        ] {
            if !ttl_range.contains(&ttl) {
                return Err(ConfigError::Inconsistent(format!(
                    "{key} must be between {} and {} seconds",
                    ttl_range.start(),
                    ttl_range.end()
                )));
            }
        }
        if let Some(url) = &self.public_url
            && crate::http::public_base::PublicBase::parse(url).is_none()
        {
            return Err(ConfigError::Inconsistent(
                "public_url must be an http or https URL without query or fragment".into(),
            ));
        }
        if self.limits.upload_bytes_max == 0 {
            return Err(ConfigError::Inconsistent(
                "limits.upload_bytes_max must be at least 1".into(),
            ));
        }
        if self.blob.compaction_delay_seconds > limits::BLOB_COMPACTION_DELAY_SECONDS_MAX {
            return Err(ConfigError::Inconsistent(format!(
                "blob.compaction_delay_seconds must be at most {} (a day)",
                limits::BLOB_COMPACTION_DELAY_SECONDS_MAX
            )));
        }
        let retention = limits::UPLOAD_RETENTION_SECONDS_MIN..=limits::UPLOAD_RETENTION_SECONDS_MAX;
        if !retention.contains(&self.blob.upload_retention_seconds) {
            return Err(ConfigError::Inconsistent(format!(
                "blob.upload_retention_seconds must be between {} and {} seconds (a year)",
                retention.start(),
                retention.end()
            )));
        }
        Ok(())
    }

    /// The database URL in effect: the configured one, or SQLite in the data dir.
    pub fn effective_database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("basin.db").display()
            ),
        }
    }

    /// The configuration as JSON with secrets masked, for `basin config`.
    pub(crate) fn to_masked_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "effective_database_url".into(),
                serde_json::Value::String(mask_url_password(&self.effective_database_url())),
            );
        }
        value
    }
}

/// The `BASIN_*` variables as a figment provider. Errors about their values name the variable
/// (`BASIN_LIMITS__PAGE_SIZE_MAX`) rather than figment's key path and the source line of the
/// provider, so `BASIN_FOO=1 basin serve` says in one line which variable is not a setting.
struct Environment {
    /// `BASIN_A__B=v` as the nested dictionary `{a: {b: v}}`.
    dict: Dict,
    /// The variable behind each key path (`limits.page_size_max`), as it was spelled.
    names: std::sync::Arc<BTreeMap<String, String>>,
}

/// What [`Environment`] calls itself in figment's metadata; [`describe`] looks for it.
const ENV_SOURCE: &str = "environment variable";

impl Environment {
    /// Turns `BASIN_A__B=v` pairs into the nested dictionary `{a: {b: v}}`, values parsed the
    /// way figment parses environment values (numbers, booleans, arrays, else strings).
    fn from_pairs(env: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut sorted = BTreeMap::new();
        let mut names = BTreeMap::new();
        for (key, value) in env {
            let Some(rest) = key.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            // BASIN_CONFIG names the file itself and is read by the CLI, not a key.
            if rest.eq_ignore_ascii_case("CONFIG") || rest.is_empty() {
                continue;
            }
            let lower = rest.to_ascii_lowercase();
            names.insert(lower.split("__").collect::<Vec<_>>().join("."), key.clone());
            sorted.insert(lower, value);
        }
        let mut dict = Dict::new();
        for (key, raw) in sorted {
            // Object store settings are text, whatever they look like (a key `0123` is not 123).
            let parsed: Value = if key.starts_with("blob__options__") {
                Value::from(raw)
            } else {
                raw.parse().unwrap_or_else(|_| Value::from(raw.clone()))
            };
            let path: Vec<&str> = key.split("__").collect();
            insert_nested(&mut dict, &path, parsed);
        }
        Self {
            dict,
            names: std::sync::Arc::new(names),
        }
    }
}

impl Provider for Environment {
    fn metadata(&self) -> Metadata {
        let names = self.names.clone();
        Metadata::named(ENV_SOURCE).interpolater(move |_profile, keys| {
            let path = keys.join(".");
            names
                .get(&path)
                .cloned()
                .unwrap_or_else(|| format!("{ENV_PREFIX}{}", keys.join("__").to_ascii_uppercase()))
        })
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.dict.clone()))
    }
}

/// figment's error as one line per problem, each naming where it is: the environment variable,
/// or the key and the file. figment's own text names the provider's line in Basin's source
/// and repeats itself once per chained error.
fn describe(error: figment::Error) -> String {
    error
        .into_iter()
        .map(|error| {
            let key = error.path.join(".");
            let profile = error.profile.clone().unwrap_or(Profile::Default);
            let from_env = error
                .metadata
                .as_ref()
                .filter(|metadata| metadata.name == ENV_SOURCE);
            let file = error
                .metadata
                .as_ref()
                .and_then(|metadata| metadata.source.as_ref())
                .map(|source| format!(" in {source}"))
                .unwrap_or_default();
            match (&error.kind, from_env) {
                (Kind::UnknownField(_, expected), Some(metadata)) => format!(
                    "the environment variable {} is not a setting (expected one of: {})",
                    metadata.interpolate(&profile, &error.path),
                    expected.join(", ")
                ),
                (kind, Some(metadata)) => format!(
                    "the environment variable {}: {kind}",
                    metadata.interpolate(&profile, &error.path)
                ),
                (Kind::UnknownField(_, expected), None) => format!(
                    "unknown key `{key}`{file} (expected one of: {})",
                    expected.join(", ")
                ),
                (kind, None) if key.is_empty() => format!("{kind}{file}"),
                (kind, None) => format!("`{key}`{file}: {kind}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn insert_nested(dict: &mut Dict, path: &[&str], value: Value) {
    match path {
        [] => {}
        [last] => {
            dict.insert((*last).to_owned(), value);
        }
        [first, rest @ ..] => {
            let entry = dict
                .entry((*first).to_owned())
                .or_insert_with(|| Value::from(Dict::new()));
            if let Value::Dict(_, inner) = entry {
                insert_nested(inner, rest, value);
            }
        }
    }
}

fn mask_secret<S: Serializer>(secret: &Option<SecretString>, s: S) -> Result<S::Ok, S::Error> {
    match secret {
        Some(secret) if !secret.expose_secret().is_empty() => s.serialize_str("***"),
        _ => s.serialize_none(),
    }
}

fn mask_secret_map<S: Serializer>(
    map: &BTreeMap<String, SecretString>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let masked: BTreeMap<&str, &str> = map.keys().map(|key| (key.as_str(), "***")).collect();
    masked.serialize(s)
}

/// Object store settings are text to `object_store`, but `true`, `8080` or `1.5` written
/// without quotes (in TOML, or as `BASIN_BLOB__OPTIONS__AWS_ALLOW_HTTP=true`, which the
/// environment parser reads as a boolean) are what operators write: they are taken as their
/// text.
fn option_values_as_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, SecretString>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Value {
        Text(String),
        Flag(bool),
        Whole(i64),
        Large(u64),
        Number(f64),
    }
    let values = BTreeMap::<String, Value>::deserialize(deserializer)?;
    Ok(values
        .into_iter()
        .map(|(key, value)| {
            let text = match value {
                Value::Text(text) => text,
                Value::Flag(flag) => flag.to_string(),
                Value::Whole(number) => number.to_string(),
                Value::Large(number) => number.to_string(),
                Value::Number(number) => number.to_string(),
            };
            (key, SecretString::from(text))
        })
        .collect())
}

fn mask_database_url<S: Serializer>(url: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match url {
        Some(url) => s.serialize_str(&mask_url_password(url)),
        None => s.serialize_none(),
    }
}

/// Replaces the password of `scheme://user:password@host/...` with `***`.
pub(crate) fn mask_url_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some((credentials, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn defaults_listen_on_loopback_8080_with_sqlite_in_the_data_dir() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("none.toml");
        std::fs::write(&file, "").unwrap();
        let config = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert!(config.effective_database_url().starts_with("sqlite://"));
        assert_eq!(config.limits.page_size_max, 1000);
    }

    #[test]
    fn file_then_env_then_flags_each_win_over_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("basin.toml");
        std::fs::write(
            &file,
            "listen = \"127.0.0.1:1\"\ndata_dir = \"from-file\"\n[limits]\npage_size_max = 7\npage_size_default = 5\n",
        )
        .unwrap();
        let config = Config::load(
            Some(&file),
            env(&[
                ("BASIN_DATA_DIR", "from-env"),
                ("BASIN_LIMITS__PAGE_SIZE_MAX", "9"),
                ("OTHER", "x"),
            ]),
            &ConfigOverrides {
                listen: Some("127.0.0.1:2".parse().unwrap()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:2");
        assert_eq!(config.data_dir, PathBuf::from("from-env"));
        assert_eq!(config.limits.page_size_max, 9);
        assert_eq!(config.limits.page_size_default, 5);
    }

    #[test]
    fn an_unknown_key_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("basin.toml");
        std::fs::write(&file, "[limits]\npage_size_maximum = 7\n").unwrap();
        let error = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap_err();
        assert!(error.to_string().contains("page_size_maximum"), "{error}");
        let error = Config::load(
            Some(&file.with_file_name("missing.toml")),
            env(&[]),
            &ConfigOverrides::default(),
        )
        .unwrap_err();
        assert!(matches!(error, ConfigError::MissingFile(_)));
    }

    #[test]
    fn a_basin_variable_that_is_no_setting_is_named_in_one_line() {
        for (variable, says) in [
            (
                "BASIN_FOO",
                "the environment variable BASIN_FOO is not a setting",
            ),
            (
                "BASIN_LIMITS__NO_SUCH_KEY",
                "the environment variable BASIN_LIMITS__NO_SUCH_KEY is not a setting",
            ),
        ] {
            let error = Config::load(None, env(&[(variable, "1")]), &ConfigOverrides::default())
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("invalid configuration: "), "{error}");
            assert!(error.contains(says), "{error}");
            assert!(!error.contains('\n') && !error.contains(".rs:"), "{error}");
            assert_eq!(error.matches(variable).count(), 1, "{error}");
        }
        let error = Config::load(
            None,
            env(&[("BASIN_LIMITS__PAGE_SIZE_MAX", "many")]),
            &ConfigOverrides::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("the environment variable BASIN_LIMITS__PAGE_SIZE_MAX: invalid type"),
            "{error}"
        );
    }

    #[test]
    fn the_kubernetes_executor_needs_the_cargo_feature() {
        let loaded = Config::load(
            None,
            env(&[("BASIN_TRANSFERS__EXECUTOR", "kubernetes")]),
            &ConfigOverrides::default(),
        );
        if cfg!(feature = "kubernetes") {
            let config = loaded.unwrap();
            assert_eq!(config.transfers.executor, TransferExecutor::Kubernetes);
            assert_eq!(config.transfers.kubernetes, KubernetesConfig::default());
        } else {
            let error = loaded.unwrap_err().to_string();
            assert!(
                error.contains(
                    "transfers.executor = \"kubernetes\" needs a basin built with --features kubernetes"
                ),
                "{error}"
            );
        }
    }

    #[test]
    fn a_basemap_must_be_an_http_template_with_z_x_and_y() {
        for bad in [
            "https://tile.example.org/{z}/{x}.png",
            "javascript:alert(1)//{z}{x}{y}",
            "ftp://tile.example.org/{z}/{x}/{y}.png",
            "/{z}/{x}/{y}.png",
        ] {
            let error = Config::load(
                None,
                env(&[("BASIN_CONSOLE__BASEMAP_URL", bad)]),
                &ConfigOverrides::default(),
            )
            .unwrap_err();
            assert!(
                error.to_string().contains("console.basemap_url"),
                "{bad}: {error}"
            );
        }
        let config = Config::load(
            None,
            env(&[(
                "BASIN_CONSOLE__BASEMAP_URL",
                "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
            )]),
            &ConfigOverrides::default(),
        )
        .unwrap();
        assert!(config.console.enabled);
        assert_eq!(config.console.feature_id, "Console");
    }

    #[test]
    fn a_default_page_size_over_the_maximum_is_rejected() {
        let error = Config::load(
            None,
            env(&[("BASIN_LIMITS__PAGE_SIZE_DEFAULT", "5000")]),
            &ConfigOverrides::default(),
        )
        .unwrap_err();
        assert!(matches!(error, ConfigError::Inconsistent(_)));
    }

    #[test]
    fn timeouts_of_zero_are_rejected() {
        for key in [
            "BASIN_LIMITS__REQUEST_TIMEOUT_MS",
            "BASIN_LIMITS__UPLOAD_IDLE_TIMEOUT_MS",
        ] {
            let error =
                Config::load(None, env(&[(key, "0")]), &ConfigOverrides::default()).unwrap_err();
            assert!(matches!(error, ConfigError::Inconsistent(_)), "{key}");
        }
        let config = Config::load(
            None,
            env(&[("BASIN_LIMITS__UPLOAD_IDLE_TIMEOUT_MS", "120000")]),
            &ConfigOverrides::default(),
        )
        .unwrap();
        assert_eq!(config.limits.upload_idle_timeout_ms, 120_000);
    }

    #[test]
    fn fetch_networks_and_timeouts_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("basin.toml");
        for (toml, says) in [
            (
                "[fetch]\nallowed_networks = [\"10.1.2.3/16\"]\n",
                "bits set past",
            ),
            (
                "[fetch]\nallowed_networks = [\"intranet\"]\n",
                "not an IP address",
            ),
            (
                "[fetch]\nallowed_networks = [\"10.0.0.0/33\"]\n",
                "prefix length",
            ),
            ("[fetch]\ntotal_timeout_ms = 0\n", "at least 1"),
        ] {
            std::fs::write(&file, toml).unwrap();
            let error =
                Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap_err();
            assert!(error.to_string().contains(says), "{toml}: {error}");
        }
        std::fs::write(
            &file,
            "[fetch]\nallowed_networks = [\"10.1.0.0/16\", \"fd00:1::/64\", \"192.0.2.7\"]\n",
        )
        .unwrap();
        let config = Config::load(
            Some(&file),
            env(&[("BASIN_FETCH__ALLOW_PRIVATE", "true")]),
            &ConfigOverrides::default(),
        )
        .unwrap();
        let policy = config.fetch.policy(config.limits.upload_bytes_max).unwrap();
        assert!(policy.allow_private);
        assert_eq!(policy.allowed_networks.len(), 3);
    }

    #[test]
    fn blob_url_lifetimes_and_the_public_url_are_checked() {
        for (key, value) in [
            ("BASIN_BLOB__UPLOAD_URL_TTL_SECONDS", "59"),
            ("BASIN_BLOB__READ_URL_TTL_SECONDS", "604801"),
            ("BASIN_PUBLIC_URL", "ftp://example.com"),
            ("BASIN_PUBLIC_URL", "https://example.com/?q=1"),
            ("BASIN_LIMITS__UPLOAD_BYTES_MAX", "0"),
        ] {
            let error =
                Config::load(None, env(&[(key, value)]), &ConfigOverrides::default()).unwrap_err();
            assert!(
                matches!(error, ConfigError::Inconsistent(_)),
                "{key}={value}"
            );
        }
        let config = Config::load(
            None,
            env(&[
                ("BASIN_BLOB__UPLOAD_URL_TTL_SECONDS", "60"),
                ("BASIN_BLOB__READ_URL_TTL_SECONDS", "604800"),
                ("BASIN_PUBLIC_URL", "https://data.example.com/platform"),
                ("BASIN_BLOB__URL", "s3://bucket/prefix"),
            ]),
            &ConfigOverrides::default(),
        )
        .unwrap();
        assert_eq!(config.blob.upload_url_ttl_seconds, 60);
        assert_eq!(config.limits.upload_bytes_max, limits::UPLOAD_BYTES_MAX);
        assert_eq!(config.blob.url.as_deref(), Some("s3://bucket/prefix"));
    }

    #[test]
    fn blob_store_options_are_masked_when_printed() {
        let config = Config::load(
            None,
            env(&[("BASIN_BLOB__OPTIONS__AWS_SECRET_ACCESS_KEY", "s3-secret")]),
            &ConfigOverrides::default(),
        )
        .unwrap();
        let printed = config.to_masked_json().to_string();
        assert!(!printed.contains("s3-secret"), "{printed}");
        assert!(printed.contains("aws_secret_access_key"), "{printed}");
        let option = config.blob.options.get("aws_secret_access_key").unwrap();
        assert_eq!(option.expose_secret(), "s3-secret");
    }

    #[test]
    fn blob_store_options_that_look_like_booleans_or_numbers_are_taken_as_text() {
        let config = Config::load(
            None,
            env(&[
                ("BASIN_BLOB__OPTIONS__AWS_ALLOW_HTTP", "true"),
                ("BASIN_BLOB__OPTIONS__AWS_ACCESS_KEY_ID", "12345"),
                ("BASIN_BLOB__OPTIONS__AWS_SECRET_ACCESS_KEY", "-7"),
                ("BASIN_BLOB__OPTIONS__RATIO", "1.5"),
                ("BASIN_BLOB__OPTIONS__AWS_SESSION_TOKEN", "0123"),
            ]),
            &ConfigOverrides::default(),
        )
        .unwrap();
        let option = |key: &str| config.blob.options[key].expose_secret().to_owned();
        assert_eq!(option("aws_allow_http"), "true");
        assert_eq!(option("aws_access_key_id"), "12345");
        assert_eq!(option("aws_secret_access_key"), "-7");
        assert_eq!(option("ratio"), "1.5");
        assert_eq!(option("aws_session_token"), "0123");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("basin.toml");
        std::fs::write(
            &file,
            "[blob.options]\naws_allow_http = true\nport = 9000\n",
        )
        .unwrap();
        let config = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap();
        assert_eq!(
            config.blob.options["aws_allow_http"].expose_secret(),
            "true"
        );
        assert_eq!(config.blob.options["port"].expose_secret(), "9000");
    }

    #[test]
    fn secrets_and_passwords_are_masked_when_printed() {
        let config = Config::load(
            None,
            env(&[
                ("BASIN_AUTH__JWT_SECRET", "very-secret"),
                (
                    "BASIN_DATABASE_URL",
                    "postgres://basin:hunter2@db:5432/basin",
                ),
            ]),
            &ConfigOverrides::default(),
        )
        .unwrap();
        let printed = config.to_masked_json().to_string();
        assert!(!printed.contains("very-secret"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(
            printed.contains("postgres://basin:***@db:5432/basin"),
            "{printed}"
        );
        assert_eq!(
            config.auth.jwt_secret.as_ref().unwrap().expose_secret(),
            "very-secret"
        );
    }

    #[test]
    fn event_webhooks_are_checked_and_their_secrets_masked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("basin.toml");
        let hook = |name: &str, url: &str, secret: &str| {
            format!(
                "[[events.webhooks]]\nname = \"{name}\"\nurl = \"{url}\"\nsecret = \"{secret}\"\n"
            )
        };
        let good = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        for (toml, says) in [
            (
                hook(
                    "a",
                    "https://x.example/h",
                    "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                ),
                "whsec_",
            ),
            (
                hook("a", "https://x.example/h", "whsec_AAAA"),
                "16 to 128 bytes",
            ),
            (hook("a", "ftp://x.example/h", good), "http(s)"),
            (
                hook("a", "https://x.example/h", good) + &hook("a", "https://y.example/h", good),
                "used twice",
            ),
            (
                "[events]\nbatch_size = 1001\n".to_owned(),
                "between 1 and 1000",
            ),
            ("[events]\nattempts_max = 0\n".to_owned(), "at least 1"),
        ] {
            std::fs::write(&file, &toml).unwrap();
            let error =
                Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap_err();
            assert!(error.to_string().contains(says), "{toml}: {error}");
        }
        std::fs::write(&file, hook("billing", "https://x.example/h", good)).unwrap();
        let config = Config::load(Some(&file), env(&[]), &ConfigOverrides::default()).unwrap();
        assert_eq!(config.events.webhooks[0].timeout_ms, 10_000);
        assert!(config.events.relay && config.events.nats.is_none());
        let printed = config.to_masked_json().to_string();
        assert!(!printed.contains(good), "{printed}");
    }
}

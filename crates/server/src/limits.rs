//! Named limits, units last. Every input has a bound; each constant says why that number.
//! Values a deployment may want to change are defaults of [`crate::config::LimitsConfig`].

/// Default page size when a list request gives no `limit`.
pub(crate) const PAGE_SIZE_DEFAULT: u32 = 100;
/// Largest page a client may ask for by default. Existing clients ask `Limit=1000` and loop
/// until the cursor is null, so anything smaller would break them.
pub(crate) const PAGE_SIZE_MAX: u32 = 1000;
/// Largest JSON request body. Metadata documents are small; 1 MiB leaves room for bulk calls.
pub(crate) const JSON_BODY_BYTES_MAX: u64 = 1024 * 1024;
/// Most files one import of staged files names: the original platform's SDKs send one folder
/// per request, and a request copies each file before it answers, so within the request time
/// limit.
pub(crate) const STAGED_FILES_MAX: usize = 1000;
/// A request body the handler left unread (an early 4xx: unknown route, no credentials, a
/// malformed path) is read to its end before the answer goes out when at most this much of it
/// is left, so that the connection stays open. A JSON body is at most 1 MiB; anything larger
/// costs the client less to send again than it costs the server to swallow.
pub(crate) const UNREAD_BODY_DRAIN_BYTES_MAX: u64 = 1024 * 1024;
/// How long the server waits for the rest of a body it drains (see
/// [`UNREAD_BODY_DRAIN_BYTES_MAX`]); a client sending slower than that has its connection
/// closed after the answer instead.
pub(crate) const UNREAD_BODY_DRAIN_MS: u64 = 1_000;
/// After an answer that closes its connection, the server reads and discards what the client
/// still sends for at most this long before it closes the socket: closing it with unread data
/// makes the kernel reset the connection, and a client still sending then may lose the answer.
pub(crate) const LINGER_MS: u64 = 2_000;
/// ... and at most this much of it.
pub(crate) const LINGER_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// A request that takes longer than this is answered with 408 and its work dropped.
pub(crate) const REQUEST_TIMEOUT_MS: u64 = 30_000;
/// How long shutdown waits for in-flight requests before giving up on them.
pub(crate) const SHUTDOWN_GRACE_MS: u64 = 30_000;
/// Length of tenant and user names, in characters: long enough for any display name.
pub(crate) const NAME_CHARS_MAX: usize = 200;
/// Length of an e-mail address (RFC 5321 path limit).
pub(crate) const EMAIL_CHARS_MAX: usize = 254;
/// Largest bearer token we try to decode; real tokens are a few KiB at most.
pub(crate) const BEARER_TOKEN_BYTES_MAX: usize = 16 * 1024;
/// Longest lifetime `basin admin token` will sign: a year keeps long-lived service tokens
/// possible while stopping typos such as `--ttl 1000000d`.
pub(crate) const TOKEN_TTL_SECONDS_MAX: i64 = 366 * 24 * 3600;
/// Clock skew tolerated on `exp` and `nbf`.
pub(crate) const TOKEN_LEEWAY_SECONDS: i64 = 30;
/// The readiness probe fails when the database cannot take a write within this long: long
/// enough for a busy but healthy writer queue, short enough for an orchestrator's probe.
pub(crate) const HEALTH_PROBE_TIMEOUT_MS: u64 = 2_000;
/// At shutdown, database connections still busy this long after the last request are
/// abandoned, so that shutdown always ends.
pub(crate) const DB_CLOSE_TIMEOUT_MS: u64 = 2_000;
/// An invitation to join a tenant lapses after this many days: long enough to come back from
/// holidays, short enough that a forgotten one does not stay open.
pub(crate) const INVITATION_TTL_DAYS: i64 = 30;
/// Database connections per server process.
pub(crate) const DB_CONNECTIONS_MAX: u32 = 16;
/// How long a request waits for a free database connection before failing with 503.
pub(crate) const DB_ACQUIRE_TIMEOUT_MS: u64 = 5_000;
/// How long SQLite waits on a locked database before reporting it busy. SQLite has one
/// writer: a write queues behind the others, and a bulk request (1,000 hierarchy actions, a
/// purge batch) holds the lock for a second or more on a loaded machine, while the event relay,
/// the transfer workers and the retention job write too. Five seconds made queued writers fail
/// under such load; the request timeout (30 s by default) bounds the wait anyway.
pub(crate) const SQLITE_BUSY_TIMEOUT_MS: u64 = 30_000;
/// Cached JWKS documents are refreshed after this long.
pub(crate) const JWKS_CACHE_TTL_SECONDS: u64 = 600;
/// An unknown `kid` triggers a JWKS refresh at most this often, so forged tokens cannot make
/// Basin hammer the identity provider.
pub(crate) const JWKS_REFRESH_INTERVAL_MIN_SECONDS: u64 = 30;
/// Largest JWKS document accepted from a file or URL.
pub(crate) const JWKS_BYTES_MAX: usize = 1024 * 1024;
/// Timeout for fetching a JWKS document.
pub(crate) const JWKS_FETCH_TIMEOUT_MS: u64 = 5_000;
/// Longest accepted opaque paging cursor, in bytes.
pub(crate) const CURSOR_BYTES_MAX: usize = 2048;
/// Geometries in one `POST /api/crs/project`: a layer of features per call, few enough that
/// per-geometry error messages stay readable and the answer stays a few megabytes.
pub(crate) const REPROJECT_GEOMETRIES_MAX: usize = 10_000;
/// Positions in one `POST /api/crs/project`, all geometries together. A million take 0.5 s end
/// to end in a release build (10 MB of JSON in, 38 MB out, 140 MB of memory at the peak), so
/// one request cannot hold a thread or memory for long. The JSON body limit usually stops a
/// request first: 1 MiB by default holds 28,000 positions at full precision.
pub(crate) const REPROJECT_POSITIONS_MAX: usize = 1_000_000;
/// Length of `nametext` and `fulltext` of the coordinate-system list, in characters: longer
/// than any registry name and any useful piece of WKT.
pub(crate) const CRS_SEARCH_TEXT_CHARS_MAX: usize = 1000;
/// Longest project name: file-system-like names, with room to spare.
pub(crate) const PROJECT_NAME_CHARS_MAX: usize = 255;
/// Deepest subproject (a root is depth 0). Deep enough for any model archive, shallow enough
/// that ancestor walks stay a single cheap query.
pub(crate) const PROJECT_DEPTH_MAX: u32 = 50;
/// Most own members of one project; larger teams belong in groups.
pub(crate) const PROJECT_MEMBERS_MAX: usize = 1000;
/// Longest project description.
pub(crate) const PROJECT_DESCRIPTION_CHARS_MAX: usize = 4000;
/// Largest metadata, settings or billing object, as JSON text.
pub(crate) const PROJECT_JSON_BYTES_MAX: usize = 64 * 1024;
/// Largest blob a client may upload, in one PUT or as committed blocks. 5 GiB covers the model
/// results and grids Basin holds while keeping one runaway upload from filling a disk; the
/// bytes stream to storage, so memory use does not grow with it.
pub(crate) const UPLOAD_BYTES_MAX: u64 = 5 * 1024 * 1024 * 1024;
/// Largest staged block, as in Azure Blob Storage (4000 MiB), so Azure clients never split
/// differently for Basin.
pub(crate) const BLOCK_BYTES_MAX: u64 = 4000 * 1024 * 1024;
/// An upload whose body sends nothing for this long is abandoned. Uploads (blob requests and
/// direct file uploads) are exempt from `request_timeout_ms`, as a large file over a slow line
/// takes minutes, so this bounds a stalled client instead.
pub(crate) const UPLOAD_IDLE_TIMEOUT_MS: u64 = 60_000;
// The defaults of imports from URLs (basin-fetch, docs/fetch.md) follow these upload limits: a
// fetched file becomes a blob, so `basin_fetch::FETCH_BYTES_MAX` is the largest blob, and a
// stalled server is given as long as a stalled client. The crate cannot name these constants,
// so the build checks that its own stay equal to them.
const _: () = assert!(basin_fetch::FETCH_BYTES_MAX == UPLOAD_BYTES_MAX);
const _: () = assert!(basin_fetch::FETCH_IDLE_TIMEOUT_MS == UPLOAD_IDLE_TIMEOUT_MS);
// Limits of blob names, staged blocks and signed-URL queries belong to the blob store and sit
// in `basin_blob::limits` (crates/blob/src/limits.rs).

/// Age at which staged blocks never committed, and writes a crashed process left, are removed:
/// a week, as Azure Blob Storage keeps uncommitted blocks.
pub(crate) const BLOB_LEFTOVER_AGE_SECONDS: u64 = 7 * 24 * 3600;
/// Longest compaction delay a deployment may set: a day.
pub(crate) const BLOB_COMPACTION_DELAY_SECONDS_MAX: u64 = 24 * 3600;
/// How often the blob store is swept for such leftovers.
pub(crate) const BLOB_SWEEP_INTERVAL_SECONDS: u64 = 3600;
/// How long an upload that no transfer used is kept after its last write: a day, long enough
/// to start an import the next morning from an upload made the evening before.
pub(crate) const UPLOAD_RETENTION_SECONDS: u64 = 24 * 3600;
/// Shortest upload retention a deployment may set (tests use a few seconds).
pub(crate) const UPLOAD_RETENTION_SECONDS_MIN: u64 = 1;
/// Longest upload retention a deployment may set: a year.
pub(crate) const UPLOAD_RETENTION_SECONDS_MAX: u64 = 365 * 24 * 3600;
/// How often the checksum repair runs: hashing a forgotten large result costs a full read, so
/// it need not be quick, only sure (a checksum is missing only after a worker stopped in the
/// seconds between storing a result and hashing it).
pub(crate) const CHECKSUM_REPAIR_SECONDS: u64 = 600;
/// How long a dataset's content must have been left alone before the repair hashes it, so that
/// it does not race the worker that is hashing it right now.
pub(crate) const CHECKSUM_REPAIR_GRACE_SECONDS: i64 = 300;
/// Longest wait between two runs of the upload retention: an unused upload is gone within its
/// retention plus this (or plus half the retention, when that is shorter).
pub(crate) const UPLOAD_SWEEP_INTERVAL_SECONDS_MAX: u64 = 3600;
/// Largest range whose MD5 a read may ask for (`x-ms-range-get-content-md5`), as in Azure.
pub(crate) const RANGE_MD5_BYTES_MAX: u64 = 4 * 1024 * 1024;
/// Shortest lifetime of a signed blob URL: anything shorter expires before clients use it.
pub(crate) const BLOB_URL_TTL_SECONDS_MIN: i64 = 60;
/// Longest lifetime of a signed blob URL: seven days, Azure's limit for delegated SAS.
pub(crate) const BLOB_URL_TTL_SECONDS_MAX: i64 = 7 * 24 * 3600;
/// Default lifetime of an upload URL: long enough for a 5 GiB upload over a slow line, since
/// every staged block is checked against it.
pub(crate) const UPLOAD_URL_TTL_SECONDS: i64 = 24 * 3600;
/// Default lifetime of a read URL.
pub(crate) const READ_URL_TTL_SECONDS: i64 = 3600;
/// Largest file sent directly to the API: small files only (the request timeout applies);
/// larger ones go through an upload URL.
pub(crate) const DIRECT_UPLOAD_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// Actions in one bulk hierarchy request: a large folder upload in one go, while one request
/// (one transaction) stays short.
pub(crate) const HIERARCHY_ACTIONS_MAX: usize = 1000;
/// Folders and files one bulk hierarchy request may create. Each action's path may create
/// every missing folder on it, so without this bound 1000 actions 50 levels deep would create
/// 50,000 projects in one transaction.
pub(crate) const HIERARCHY_CREATED_MAX: usize = 2000;
/// Tags on one dataset: enough to classify, small enough that a 1,000-row page of datasets
/// stays a few megabytes.
pub(crate) const DATASET_TAGS_MAX: usize = 64;
/// Length of one dataset tag, in characters.
pub(crate) const DATASET_TAG_CHARS_MAX: usize = 128;
/// Transfers one process runs at once by default: conversions are CPU-bound, so about the
/// cores of a small machine.
pub(crate) const TRANSFER_WORKERS: usize = 2;
/// A worker that has not renewed its lease for this long is presumed dead.
pub(crate) const TRANSFER_LEASE_SECONDS: u64 = 60;
/// Workers renew their lease this often: several renewals fit in one lease, so one slow
/// database round trip does not lose it.
pub(crate) const TRANSFER_HEARTBEAT_SECONDS: u64 = 10;
/// A transfer whose worker died this many times ends in `Error`: the file probably kills it.
pub(crate) const TRANSFER_ATTEMPTS_MAX: u32 = 3;
/// Idle workers look for queued transfers this often (a transfer queued by the same process
/// wakes them at once).
pub(crate) const TRANSFER_POLL_INTERVAL_MS: u64 = 1_000;
/// Job memory when a request names none (the interface's default).
pub(crate) const TRANSFER_MEMORY_MB_DEFAULT: u64 = 4_096;
/// Most job memory without `nodeSize`: the largest default machine type.
pub(crate) const TRANSFER_MEMORY_MB_MAX: u64 = 65_536;
/// Most CPU cores without `nodeSize`.
pub(crate) const TRANSFER_CPU_CORES_MAX: f64 = 16.0;
/// Most scratch storage without `nodeSize`, in GB.
pub(crate) const TRANSFER_STORAGE_GB_MAX: f64 = 512.0;
/// Export results stay downloadable this long.
pub(crate) const EXPORT_TTL_HOURS: u64 = 72;
/// Parameters in one reader or writer parameter list.
pub(crate) const TRANSFER_PARAMETERS_MAX: usize = 64;
/// Transformations in one request.
pub(crate) const TRANSFER_TRANSFORMATIONS_MAX: usize = 16;
/// Labels in `requiredLabels`.
pub(crate) const TRANSFER_LABELS_MAX: usize = 32;

// ---- platform events (events/) ----

/// An idle relay looks for new events this often: short enough that an event follows its
/// change within a fraction of a second, long enough that an idle replica costs one cheap
/// query five times a second.
pub(crate) const EVENTS_POLL_INTERVAL_MS: u64 = 200;
/// Events claimed per sink and round: one round's deliveries run concurrently, and one batch
/// of acknowledgements is one transaction.
pub(crate) const EVENTS_BATCH_SIZE: u32 = 100;
/// Largest `events.batch_size`: bounds one round's memory (bodies are at most a few KiB).
pub(crate) const EVENTS_BATCH_SIZE_MAX: u32 = 1_000;
/// A claimed delivery is taken over after this long: three webhook timeouts, so a live relay
/// never loses a delivery it is still making.
pub(crate) const EVENTS_LEASE_MS: u64 = 30_000;
/// Attempts per event and sink: with the backoff below, two to four hours of retries (the
/// jitter decides) before an event is dead-lettered, long enough to ride out a receiver's
/// deployment or short outage.
pub(crate) const EVENTS_ATTEMPTS_MAX: u32 = 16;
/// First retry after one second.
pub(crate) const EVENTS_BACKOFF_INITIAL_MS: u64 = 1_000;
/// Retries at least once an hour.
pub(crate) const EVENTS_BACKOFF_MAX_MS: u64 = 3_600_000;
/// One webhook POST may take this long (Standard Webhooks receivers answer quickly and
/// process later).
pub(crate) const EVENTS_WEBHOOK_TIMEOUT_MS: u64 = 10_000;
/// JetStream drops a message whose id it saw this recently: covers a relay that crashed after
/// publishing and before recording the delivery, and was restarted within the window.
pub(crate) const EVENTS_NATS_DUPLICATE_WINDOW_SECONDS: u64 = 600;
/// Longest sink name (webhook names appear in dead letters and their rows).
pub(crate) const EVENTS_SINK_NAME_CHARS_MAX: usize = 100;
/// Most characters of a delivery error kept for the dead-letter list.
pub(crate) const EVENTS_ERROR_CHARS_MAX: usize = 500;

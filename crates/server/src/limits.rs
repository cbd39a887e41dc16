//! Named limits, units last. Every input has a bound; each constant says why that number.
//! Values a deployment may want to change are defaults of [`crate::config::LimitsConfig`].

/// Default page size when a list request gives no `limit`.
pub const PAGE_SIZE_DEFAULT: u32 = 100;
/// Largest page a client may ask for by default. Existing clients ask `Limit=1000` and loop
/// until the cursor is null, so anything smaller would break them.
pub const PAGE_SIZE_MAX: u32 = 1000;
/// Largest JSON request body. Metadata documents are small; 1 MiB leaves room for bulk calls.
pub const JSON_BODY_BYTES_MAX: usize = 1024 * 1024;
/// A request that takes longer than this is answered with 408 and its work dropped.
pub const REQUEST_TIMEOUT_MS: u64 = 30_000;
/// How long shutdown waits for in-flight requests before giving up on them.
pub const SHUTDOWN_GRACE_MS: u64 = 30_000;
/// Length of tenant and user names, in characters: long enough for any display name.
pub const NAME_CHARS_MAX: usize = 200;
/// Length of an e-mail address (RFC 5321 path limit).
pub const EMAIL_CHARS_MAX: usize = 254;
/// Largest bearer token we try to decode; real tokens are a few KiB at most.
pub const BEARER_TOKEN_BYTES_MAX: usize = 16 * 1024;
/// Longest lifetime `basin admin token` will sign: a year keeps long-lived service tokens
/// possible while stopping typos such as `--ttl 1000000d`.
pub const TOKEN_TTL_SECONDS_MAX: i64 = 366 * 24 * 3600;
/// Clock skew tolerated on `exp` and `nbf`.
pub const TOKEN_LEEWAY_SECONDS: i64 = 30;
/// Database connections per server process.
pub const DB_CONNECTIONS_MAX: u32 = 16;
/// How long a request waits for a free database connection before failing with 503.
pub const DB_ACQUIRE_TIMEOUT_MS: u64 = 5_000;
/// How long SQLite waits on a locked database before reporting it busy.
pub const SQLITE_BUSY_TIMEOUT_MS: u64 = 5_000;
/// Cached JWKS documents are refreshed after this long.
pub const JWKS_CACHE_TTL_SECONDS: u64 = 600;
/// An unknown `kid` triggers a JWKS refresh at most this often, so forged tokens cannot make
/// Basin hammer the identity provider.
pub const JWKS_REFRESH_INTERVAL_MIN_SECONDS: u64 = 30;
/// Largest JWKS document accepted from a file or URL.
pub const JWKS_BYTES_MAX: usize = 1024 * 1024;
/// Timeout for fetching a JWKS document.
pub const JWKS_FETCH_TIMEOUT_MS: u64 = 5_000;
/// Longest accepted opaque paging cursor, in bytes.
pub const CURSOR_BYTES_MAX: usize = 2048;
/// Longest project name: file-system-like names, with room to spare.
pub const PROJECT_NAME_CHARS_MAX: usize = 255;
/// Deepest subproject (a root is depth 0). Deep enough for any model archive, shallow enough
/// that ancestor walks stay a single cheap query.
pub const PROJECT_DEPTH_MAX: u32 = 50;
/// Most own members of one project; larger teams belong in groups.
pub const PROJECT_MEMBERS_MAX: usize = 1000;
/// Longest project description.
pub const PROJECT_DESCRIPTION_CHARS_MAX: usize = 4000;
/// Largest metadata, settings or billing object, as JSON text.
pub const PROJECT_JSON_BYTES_MAX: usize = 64 * 1024;

//! Structured logs with `tracing`: human-readable text by default, JSON lines for log
//! collectors. Logs go to stderr so that stdout carries only command output (`--json`).

use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

/// Installs the global subscriber. `RUST_LOG`, when set, wins over `log.level`, except that
/// the ftp client never logs below `info`: at `trace` it writes the commands it sends, ftp
/// passwords included.
pub(crate) fn init(config: &LogConfig) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let filter = match "suppaftp=info".parse() {
        Ok(cap) => filter.add_directive(cap),
        Err(_) => filter,
    };
    // Colours only for a terminal: a file or a collector would get escape codes, and
    // formatting them costs every request's span.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    // A second init (tests) is harmless: the first subscriber stays.
    let _ = match config.format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

/// Marks a response as one of many alike (a map tile): logged at `debug` when it succeeds, so
/// that a map view, which asks for hundreds of tiles a second, neither floods the log nor
/// spends its time writing it. Failures are logged at `info` like every other response.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Routine;

/// The access log: one event per response when it is sent, at `info`, or at `debug` for a
/// [`Routine`] success.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AccessLog;

impl<B> tower_http::trace::OnResponse<B> for AccessLog {
    fn on_response(
        self,
        response: &axum::http::Response<B>,
        latency: std::time::Duration,
        span: &tracing::Span,
    ) {
        let status = response.status();
        let routine = response.extensions().get::<Routine>().is_some()
            && (status.is_success() || status == axum::http::StatusCode::NOT_MODIFIED);
        let level = if routine {
            tracing::Level::DEBUG
        } else {
            tracing::Level::INFO
        };
        tower_http::trace::DefaultOnResponse::new()
            .level(level)
            .on_response(response, latency, span);
    }
}

/// `x-request-id` of requests that come without one: a UUID (version 4 in form) made of a
/// random number drawn once per process and a counter, unique without asking the system for
/// randomness on every request.
#[derive(Debug, Clone)]
pub(crate) struct RequestIds {
    process: u64,
    next: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl RequestIds {
    /// Ids of this process.
    pub(crate) fn new() -> Self {
        Self {
            process: uuid::Uuid::new_v4().as_u64_pair().0,
            next: std::sync::Arc::default(),
        }
    }
}

impl tower_http::request_id::MakeRequestId for RequestIds {
    fn make_request_id<B>(
        &mut self,
        _request: &axum::http::Request<B>,
    ) -> Option<tower_http::request_id::RequestId> {
        let count = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut bytes = [0_u8; 16];
        bytes[..8].copy_from_slice(&self.process.to_be_bytes());
        bytes[8..].copy_from_slice(&count.to_be_bytes());
        let id = uuid::Builder::from_random_bytes(bytes).into_uuid();
        axum::http::HeaderValue::from_str(&id.to_string())
            .ok()
            .map(tower_http::request_id::RequestId::new)
    }
}

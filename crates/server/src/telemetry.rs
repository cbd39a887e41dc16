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
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    // A second init (tests) is harmless: the first subscriber stays.
    let _ = match config.format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

//! Feature status messages and tenant feature availability; docs/features.md. Operators
//! publish time-bound notices that applications show as a banner; BackOffice licenses features
//! to tenants, whose owners switch them on and off.
//!
//! Titles and bodies are cleaned once, before storage (`sanitize.rs`), so every reader gets
//! safe text whatever it does with it. The banner (`banner.rs`) is answered from memory with an
//! ETag, for the many clients that poll it.

mod banner;
pub(crate) mod model;
pub(crate) mod routes;
mod sanitize;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;

use tokio_util::sync::CancellationToken;

use crate::features::service::FeatureService;

/// Removes messages past their retention every `features.retention_interval_seconds` until
/// `stop`. Several replicas may run it at once: each batch is one statement, so a message is
/// deleted once, by whichever comes first.
pub(crate) async fn run_retention_periodically(features: FeatureService, stop: CancellationToken) {
    let interval = features.retention_interval();
    loop {
        match features.purge_expired().await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "removed expired feature messages"),
            Err(error) => tracing::warn!(%error, "cannot remove expired feature messages"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
    }
}

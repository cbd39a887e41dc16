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

use std::time::Duration;

use crate::periodic::{PeriodicTask, RoundCounts};

use crate::features::service::FeatureService;

/// Removes messages past their retention every `features.retention_interval_seconds`.
/// Several replicas may run it at once: each batch is one statement, so a message is deleted
/// once, by whichever comes first.
pub(crate) struct MessageRetention(pub(crate) FeatureService);

#[async_trait::async_trait]
impl PeriodicTask for MessageRetention {
    fn name(&self) -> &'static str {
        "feature message retention"
    }

    fn interval(&self) -> Duration {
        self.0.retention_interval()
    }

    async fn run_round(&self) -> Result<RoundCounts, String> {
        let removed = self
            .0
            .purge_expired()
            .await
            .map_err(|error| error.to_string())?;
        Ok(vec![("messages removed", removed)])
    }
}

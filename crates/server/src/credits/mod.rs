//! Credits (docs/credits.md): a ledger in the spirit of
//! two-phase transfers. Credits sit in lots (pool, billing reference, expiry date) by status;
//! a reservation holds them (pending), a spend posts them, a release or timeout voids the
//! hold. Every change is one transaction that writes each lot's change with its journal entry,
//! so the journal alone gives every balance.

pub(crate) mod amount;
mod ledger;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;

use tokio_util::sync::CancellationToken;

use crate::credits::service::CreditService;

/// Settles expiries and reservation timeouts of every pool every `credits.settle_interval_seconds`
/// until `stop`. Reads settle their pool too, so this only keeps the journal close to the
/// moment things happened for pools nobody reads.
pub(crate) async fn run_settle_periodically(credits: CreditService, stop: CancellationToken) {
    let interval = credits.settle_interval();
    loop {
        match credits.settle_due().await {
            Ok(0) => {}
            Ok(pools) => tracing::info!(pools, "settled credit expiries and reservation timeouts"),
            Err(error) => tracing::warn!(%error, "cannot settle credit expiries and timeouts"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(interval) => {}
        }
    }
}

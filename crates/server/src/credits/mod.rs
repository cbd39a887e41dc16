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

use std::time::Duration;

use crate::periodic::{PeriodicTask, RoundCounts};

use crate::credits::service::CreditService;

/// Settles expiries and reservation timeouts of every pool every
/// `credits.settle_interval_seconds`. Reads settle their pool too, so this only keeps the
/// journal close to the moment things happened for pools nobody reads. Safe on every replica:
/// each pool is settled in its own ledger transaction.
pub(crate) struct CreditSettling(pub(crate) CreditService);

#[async_trait::async_trait]
impl PeriodicTask for CreditSettling {
    fn name(&self) -> &'static str {
        "credit settling"
    }

    fn interval(&self) -> Duration {
        self.0.settle_interval()
    }

    async fn run_round(&self) -> Result<RoundCounts, String> {
        let pools = self
            .0
            .settle_due()
            .await
            .map_err(|error| error.to_string())?;
        Ok(vec![("pools settled", pools as u64)])
    }
}

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

use uuid::Uuid;

use crate::credits::service::CreditService;
use crate::db::{Db, StoreResult};
use crate::ids::TenantId;
use crate::periodic::{PeriodicTask, RoundCounts};

/// Names the projects that credit operations name, for the extended details of a tenant's
/// lots (docs/credits.md). Credits sit below projects and may not read their table: the
/// projects area implements this, and `startup.rs` hands it to the credit service, as it hands
/// areas their reactions (`reactions.rs`).
#[async_trait::async_trait]
pub(crate) trait ProjectNameLookup: Send + Sync + std::fmt::Debug {
    /// The tenant and name of each of `projects` that exists, in the recycle bin or not (ids
    /// of no project are left out).
    async fn names(&self, db: &Db, projects: &[Uuid]) -> StoreResult<Vec<NamedProject>>;
}

/// A project's tenant and name, as [`ProjectNameLookup`] finds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamedProject {
    /// The project.
    pub(crate) id: Uuid,
    /// Its tenant: an operation shows the name only of a project of its own tenant.
    pub(crate) tenant: TenantId,
    /// Its name.
    pub(crate) name: String,
}

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

//! Rules of the dead-letter endpoints: only platform operators (BackOffice, CloudAdministrator)
//! see dead letters, because one list holds the events of every tenant.

use std::sync::Arc;

use uuid::Uuid;

use crate::auth::Principal;
use crate::clock::Clock;
use crate::db::{Db, StoreError};
use crate::events::store::{self, DeadLetter};

/// Errors of the dead-letter operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum EventsError {
    /// The caller is no platform operator.
    #[error("forbidden")]
    Forbidden,
    /// No dead letter of this event.
    #[error("no dead letter of event {0}")]
    NotFound(Uuid),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Dead-letter operations.
#[derive(Debug, Clone)]
pub(crate) struct EventsAdmin {
    db: Db,
    clock: Arc<dyn Clock>,
}

impl EventsAdmin {
    /// Operations on `db`.
    pub(crate) fn new(db: Db, clock: Arc<dyn Clock>) -> Self {
        Self { db, clock }
    }

    fn require_operator(principal: &Principal) -> Result<(), EventsError> {
        if principal.is_platform_admin() {
            Ok(())
        } else {
            Err(EventsError::Forbidden)
        }
    }

    /// A page of dead letters and their total.
    pub(crate) async fn list_dead_letters(
        &self,
        principal: &Principal,
        offset: u32,
        limit: u32,
    ) -> Result<(u64, Vec<DeadLetter>), EventsError> {
        Self::require_operator(principal)?;
        Ok(store::list_dead(&self.db, offset, limit).await?)
    }

    /// Sends the dead letters of `event` (one per sink that gave it up) back to delivery.
    pub(crate) async fn replay(
        &self,
        principal: &Principal,
        event: Uuid,
    ) -> Result<u64, EventsError> {
        Self::require_operator(principal)?;
        let replayed = store::replay(&self.db, Some(event), self.clock.now()).await?;
        if replayed == 0 {
            return Err(EventsError::NotFound(event));
        }
        Ok(replayed)
    }

    /// Sends every dead letter back to delivery.
    pub(crate) async fn replay_all(&self, principal: &Principal) -> Result<u64, EventsError> {
        Self::require_operator(principal)?;
        Ok(store::replay(&self.db, None, self.clock.now()).await?)
    }
}

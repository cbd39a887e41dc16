//! Reactions: how an area lets other areas act on its changes, inside the transaction that
//! makes the change, without importing them.
//!
//! Areas are stacked (ARCHITECTURE.md, "Areas"): a higher area may call a lower one, never the
//! reverse. Some rules nonetheless run upward: a deleted project must enter the recycle bin in
//! the deleting transaction, and new content of a dataset must requeue the tile pyramids drawn
//! from it. The lower area names its changes (an enum of its own, such as
//! `datasets::DatasetChange`) and runs the [`Reactions`] it was given; the higher area
//! implements [`Reaction`] for that change; `startup.rs` hands each service its reactions. The
//! lower area never learns who reacts, and each wiring is written in one place
//! (`App::wire_reactions` lists them all).
//!
//! A reaction runs inside the caller's transaction: when it fails, the change fails with it,
//! and nothing of either is kept. Reactions must therefore be short, database-only work;
//! anything slow or outside the database belongs in a queue (the events outbox, the pyramid
//! queue) that a reaction fills.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::db::{StoreResult, Tx};

/// One area's reaction to another area's `Change`.
#[async_trait::async_trait]
pub(crate) trait Reaction<Change: Sync>: Send + Sync {
    /// Acts on `change`, made at `at`, inside the transaction `tx` that makes it.
    async fn react_in(&self, tx: &mut Tx, change: &Change, at: DateTime<Utc>) -> StoreResult<()>;
}

/// The reactions to one kind of change, run in the order they were added.
pub(crate) struct Reactions<Change> {
    list: Arc<[Arc<dyn Reaction<Change>>]>,
}

impl<Change> Clone for Reactions<Change> {
    fn clone(&self) -> Self {
        Self {
            list: Arc::clone(&self.list),
        }
    }
}

impl<Change> std::fmt::Debug for Reactions<Change> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reactions")
            .field("count", &self.list.len())
            .finish()
    }
}

impl<Change: Sync> Reactions<Change> {
    /// The given reactions, in that order.
    pub(crate) fn new(list: Vec<Arc<dyn Reaction<Change>>>) -> Self {
        Self { list: list.into() }
    }

    /// Runs every reaction to `change`; the first failure stops the rest and is returned (the
    /// caller's transaction then rolls back).
    pub(crate) async fn run_in(
        &self,
        tx: &mut Tx,
        change: &Change,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        for reaction in self.list.iter() {
            reaction.react_in(tx, change, at).await?;
        }
        Ok(())
    }
}

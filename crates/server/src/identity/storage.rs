//! The bytes a tenant stores, as its managers see them (docs/authentication.md): measured by
//! the areas that keep them, summed here.
//!
//! Identity is the lowest area: the datasets, the recycle bin and the uploads that hold a
//! tenant's bytes sit above it and may not be named from here. Each of them implements
//! [`StorageMeter`] for what it keeps, and `startup.rs` hands the identity service the meters
//! ([`StorageMeters`]), as it hands areas their reactions (`reactions.rs`). Identity learns
//! the figures, never the tables behind them.

use std::sync::Arc;

use crate::db::{Db, StoreResult};
use crate::identity::model::TenantStorage;
use crate::ids::TenantId;

/// One area's measure of the bytes a tenant stores with it.
#[async_trait::async_trait]
pub(crate) trait StorageMeter: Send + Sync {
    /// The bytes `tenant` stores with this area, in the fields of [`TenantStorage`] that are
    /// this area's (the others zero).
    async fn measure(&self, db: &Db, tenant: TenantId) -> StoreResult<TenantStorage>;
}

/// Every area's [`StorageMeter`], whose measures add up to a tenant's storage.
#[derive(Clone, Default)]
pub(crate) struct StorageMeters {
    list: Arc<[Arc<dyn StorageMeter>]>,
}

impl std::fmt::Debug for StorageMeters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageMeters")
            .field("count", &self.list.len())
            .finish()
    }
}

impl StorageMeters {
    /// The given meters.
    pub(crate) fn new(list: Vec<Arc<dyn StorageMeter>>) -> Self {
        Self { list: list.into() }
    }

    /// The sum of every meter's measure of `tenant`. Each meter reads on its own, not in one
    /// transaction with the others: bytes that move from one place to another while they read
    /// (an upload imported as a dataset) may show in both or in neither for that one answer.
    /// The figures are a report of usage, not a balance, so that is close enough; no meter's
    /// own figures are torn by it.
    pub(crate) async fn measure(&self, db: &Db, tenant: TenantId) -> StoreResult<TenantStorage> {
        let mut total = TenantStorage::default();
        for meter in self.list.iter() {
            total = total.plus(meter.measure(db, tenant).await?);
        }
        Ok(total)
    }
}

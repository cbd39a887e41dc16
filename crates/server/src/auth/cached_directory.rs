//! The identity directory as authentication reads it on every request, kept in memory while
//! nothing that decides it has changed ([`FreshCache`]): an API key's record by its hash, a
//! user's record and memberships by id. Only what exists is kept: an unknown key or user is
//! looked up again each time, so a made-up credential cannot fill the cache and one created a
//! moment ago is found at once. Memberships are kept even when there are none: adding one is a
//! change the watch sees.

use std::sync::Arc;

use crate::auth::{IdentityDirectory, KeyRecord, TenantRole, UserRecord};
use crate::db::changes::{ChangeWatch, FreshCache};
use crate::ids::{TenantId, UserId};

/// Entries of each kind one process keeps.
const ENTRIES_MAX: usize = 100_000;

/// [`IdentityDirectory`] in front of another, answering from memory when it can.
#[derive(Debug)]
pub(crate) struct CachedDirectory {
    inner: Arc<dyn IdentityDirectory>,
    keys: FreshCache<Vec<u8>, KeyRecord>,
    users: FreshCache<UserId, UserRecord>,
    memberships: FreshCache<UserId, Vec<(TenantId, TenantRole)>>,
}

impl CachedDirectory {
    /// `inner`, cached while `watch` sees no change.
    pub(crate) fn new(inner: Arc<dyn IdentityDirectory>, watch: &ChangeWatch) -> Self {
        Self {
            inner,
            keys: FreshCache::new(watch.clone(), ENTRIES_MAX),
            users: FreshCache::new(watch.clone(), ENTRIES_MAX),
            memberships: FreshCache::new(watch.clone(), ENTRIES_MAX),
        }
    }
}

#[async_trait::async_trait]
impl IdentityDirectory for CachedDirectory {
    async fn api_key_by_hash(&self, hash: &[u8]) -> anyhow::Result<Option<KeyRecord>> {
        self.keys
            .get_or_load(hash.to_vec(), self.inner.api_key_by_hash(hash))
            .await
    }

    async fn user(&self, id: UserId) -> anyhow::Result<Option<UserRecord>> {
        self.users.get_or_load(id, self.inner.user(id)).await
    }

    async fn memberships(&self, id: UserId) -> anyhow::Result<Vec<(TenantId, TenantRole)>> {
        let load = async { self.inner.memberships(id).await.map(Some) };
        Ok(self
            .memberships
            .get_or_load(id, load)
            .await?
            .unwrap_or_default())
    }
}

//! Knowing, without asking the store, that what a hot path read from it may have changed.
//!
//! Authentication and the access check of a tile cost a few store reads each, more than the
//! rest of a cached tile answer. [`FreshCache`] keeps their results in memory for as long as
//! nothing that could change them has been written, which [`ChangeWatch`] tells from two
//! counters:
//! - **Commits of this process.** Every transaction this process commits raises a counter, so
//!   a change made through this process (a key revoked, a member removed, a dataset moved)
//!   makes every entry stale before its answer leaves. Counting every commit, not only the
//!   ones that touch access, costs a re-read after unrelated writes and needs no list of them
//!   to be kept right.
//! - **Changes made elsewhere.** Triggers on the tables that decide access (migration 0012)
//!   record every change, whoever makes it: another replica, `basin worker`, an admin command.
//!   On PostgreSQL they notify channel `basin_access` at commit and a listener of this process
//!   raises the counter on each notification; on SQLite they raise a counter row that the
//!   watcher reads every `auth.access_refresh_ms`.
//!
//! An entry records the generation read *before* its query, so a change that commits while it
//! loads leaves it stale rather than hiding the change. Entries are used only while the watcher
//! runs (a process that does not serve, or a listener that lost its connection, reads the store
//! every time) and never past [`ENTRY_AGE_MAX`].

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::db::Db;

/// Channel the PostgreSQL triggers of migration 0012 notify.
const CHANNEL: &str = "basin_access";

/// Oldest entry used, whatever the counters say: a bound on the harm of a change missed.
pub(crate) const ENTRY_AGE_MAX: Duration = Duration::from_secs(60);

/// Pause before the watcher tries again after losing the store.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Transactions committed by this process. Process-wide rather than per pool: a process that
/// holds several pools (the test suite) only re-reads more often.
static LOCAL_COMMITS: AtomicU64 = AtomicU64::new(0);

/// Records that this process committed a write to the store.
pub(crate) fn note_commit() {
    LOCAL_COMMITS.fetch_add(1, Ordering::AcqRel);
}

#[derive(Debug, Default)]
struct Shared {
    /// Changes seen by the watcher, plus one each time it lost track.
    remote: AtomicU64,
    /// Whether the watcher is running and connected.
    watching: AtomicBool,
}

/// The generation of what the store holds, as this process knows it.
#[derive(Debug, Clone)]
pub(crate) struct ChangeWatch {
    shared: Arc<Shared>,
    local_commits: &'static AtomicU64,
}

/// The generation read before a query; see [`FreshCache::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp(Option<u64>);

impl ChangeWatch {
    /// A watch that sees nothing until [`Self::run`] starts.
    pub(crate) fn new() -> Self {
        Self {
            shared: Arc::default(),
            local_commits: &LOCAL_COMMITS,
        }
    }

    /// The current generation; `None` while nobody watches other processes' changes.
    fn generation(&self) -> Option<u64> {
        if !self.shared.watching.load(Ordering::Acquire) {
            return None;
        }
        Some(
            self.local_commits
                .load(Ordering::Acquire)
                .wrapping_add(self.shared.remote.load(Ordering::Acquire)),
        )
    }

    fn raise(&self) {
        self.shared.remote.fetch_add(1, Ordering::AcqRel);
    }

    fn set_watching(&self, watching: bool) {
        // Raised first, so that nothing loaded before the gap is trusted after it.
        self.raise();
        self.shared.watching.store(watching, Ordering::Release);
    }

    /// Watches `db` for changes made by other processes until `stop`.
    pub(crate) async fn run(self, db: Db, refresh: Duration, stop: CancellationToken) {
        match db {
            Db::Sqlite(pool, _) => self.poll_sqlite(pool, refresh, stop).await,
            Db::Postgres(pool) => self.listen_postgres(pool, stop).await,
        }
        self.set_watching(false);
    }

    async fn poll_sqlite(
        &self,
        pool: sqlx::SqlitePool,
        refresh: Duration,
        stop: CancellationToken,
    ) {
        let mut last: Option<i64> = None;
        loop {
            let read = sqlx::query_scalar::<_, i64>("SELECT epoch FROM access_epoch WHERE id = 1")
                .fetch_one(&pool)
                .await;
            match read {
                Ok(epoch) => {
                    if last != Some(epoch) {
                        last = Some(epoch);
                        self.raise();
                    }
                    if !self.shared.watching.load(Ordering::Acquire) {
                        self.set_watching(true);
                    }
                }
                Err(error) => {
                    if self.shared.watching.load(Ordering::Acquire) {
                        tracing::warn!(%error, "cannot read the access epoch; access checks read the store until it answers");
                        self.set_watching(false);
                    }
                    last = None;
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(refresh) => {}
            }
        }
    }

    async fn listen_postgres(&self, pool: sqlx::PgPool, stop: CancellationToken) {
        loop {
            let listener = async {
                let mut listener = sqlx::postgres::PgListener::connect_with(&pool).await?;
                listener.listen(CHANNEL).await?;
                Ok::<_, sqlx::Error>(listener)
            };
            let mut listener = tokio::select! {
                () = stop.cancelled() => return,
                listener = listener => match listener {
                    Ok(listener) => listener,
                    Err(error) => {
                        tracing::warn!(%error, "cannot listen for access changes; access checks read the store until it answers");
                        tokio::select! {
                            () = stop.cancelled() => return,
                            () = tokio::time::sleep(RETRY_AFTER) => continue,
                        }
                    }
                },
            };
            self.set_watching(true);
            loop {
                let received = tokio::select! {
                    () = stop.cancelled() => return,
                    received = listener.try_recv() => received,
                };
                match received {
                    Ok(Some(_)) => self.raise(),
                    // The connection was lost: notifications sent meanwhile are gone.
                    Ok(None) | Err(_) => {
                        self.set_watching(false);
                        break;
                    }
                }
            }
        }
    }
}

#[derive(Debug)]
struct Entry<V> {
    generation: u64,
    loaded_at: Instant,
    value: V,
}

/// Values read from the store, kept while [`ChangeWatch`] says they cannot have changed.
#[derive(Debug)]
pub(crate) struct FreshCache<K, V> {
    watch: ChangeWatch,
    entries: RwLock<HashMap<K, Entry<V>>>,
    entries_max: usize,
}

impl<K: Hash + Eq, V: Clone> FreshCache<K, V> {
    /// An empty cache of at most `entries_max` entries; past that it starts over, so that
    /// made-up keys cannot grow it without bound.
    pub(crate) fn new(watch: ChangeWatch, entries_max: usize) -> Self {
        Self {
            watch,
            entries: RwLock::new(HashMap::new()),
            entries_max,
        }
    }

    /// The value of `key`, if it is known still to be what the store holds.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let generation = self.watch.generation()?;
        let entries = self.entries.read().ok()?;
        let entry = entries.get(key)?;
        (entry.generation == generation && entry.loaded_at.elapsed() < ENTRY_AGE_MAX)
            .then(|| entry.value.clone())
    }

    /// The value of `key`: kept, or loaded now by `load` and kept when there is one.
    pub(crate) async fn get_or_load<E>(
        &self,
        key: K,
        load: impl Future<Output = Result<Option<V>, E>>,
    ) -> Result<Option<V>, E> {
        if let Some(value) = self.get(&key) {
            return Ok(Some(value));
        }
        let stamp = self.stamp();
        let value = load.await?;
        if let Some(value) = &value {
            self.insert(key, value.clone(), stamp);
        }
        Ok(value)
    }

    /// Take before reading the value from the store, and give to [`Self::insert`].
    pub(crate) fn stamp(&self) -> Stamp {
        Stamp(self.watch.generation())
    }

    /// Keeps `value`, read from the store after `stamp` was taken. Nothing is kept when the
    /// store may have changed since.
    pub(crate) fn insert(&self, key: K, value: V, stamp: Stamp) {
        let Stamp(Some(generation)) = stamp else {
            return;
        };
        if self.watch.generation() != Some(generation) {
            return;
        }
        if let Ok(mut entries) = self.entries.write() {
            if entries.len() >= self.entries_max && !entries.contains_key(&key) {
                entries.retain(|_, entry| entry.generation == generation);
                if entries.len() >= self.entries_max {
                    entries.clear();
                }
            }
            entries.insert(
                key,
                Entry {
                    generation,
                    loaded_at: Instant::now(),
                    value,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A running watch that counts commits on a counter of its own, so that other tests'
    /// commits do not disturb it.
    fn watching() -> ChangeWatch {
        let watch = ChangeWatch {
            shared: Arc::default(),
            local_commits: Box::leak(Box::new(AtomicU64::new(0))),
        };
        watch.set_watching(true);
        watch
    }

    #[test]
    fn nothing_is_kept_while_nobody_watches() {
        let cache = FreshCache::new(ChangeWatch::new(), 10);
        let stamp = cache.stamp();
        cache.insert(1, "a", stamp);
        assert_eq!(cache.get(&1), None);
    }

    #[test]
    fn a_value_is_kept_until_a_change() {
        let watch = watching();
        let cache = FreshCache::new(watch.clone(), 10);
        let stamp = cache.stamp();
        cache.insert(1, "a", stamp);
        assert_eq!(cache.get(&1), Some("a"));
        watch.raise();
        assert_eq!(cache.get(&1), None);
    }

    #[test]
    fn a_commit_of_this_process_is_a_change() {
        let watch = ChangeWatch::new();
        watch.set_watching(true);
        let before = watch.generation();
        note_commit();
        assert_ne!(watch.generation(), before);
    }

    #[test]
    fn a_commit_counted_by_the_watch_is_a_change() {
        let watch = watching();
        let cache = FreshCache::new(watch.clone(), 10);
        let stamp = cache.stamp();
        cache.insert(1, "a", stamp);
        watch.local_commits.fetch_add(1, Ordering::AcqRel);
        assert_eq!(cache.get(&1), None);
    }

    #[test]
    fn a_value_read_across_a_change_is_not_kept() {
        let watch = watching();
        let cache = FreshCache::new(watch.clone(), 10);
        let stamp = cache.stamp();
        watch.raise();
        cache.insert(1, "old", stamp);
        assert_eq!(cache.get(&1), None);
    }

    #[test]
    fn losing_the_watcher_forgets_everything() {
        let watch = watching();
        let cache = FreshCache::new(watch.clone(), 10);
        let stamp = cache.stamp();
        cache.insert(1, "a", stamp);
        watch.set_watching(false);
        watch.set_watching(true);
        assert_eq!(cache.get(&1), None);
    }

    #[test]
    fn the_cache_stays_within_its_bound() {
        let cache = FreshCache::new(watching(), 3);
        for key in 0..10 {
            let stamp = cache.stamp();
            cache.insert(key, key, stamp);
        }
        let kept = (0..10).filter(|key| cache.get(key).is_some()).count();
        assert!((1..=3).contains(&kept), "{kept} kept");
    }
}

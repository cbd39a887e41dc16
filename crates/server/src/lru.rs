//! A size-bounded least-recently-used cache that loads each missing value once.
//!
//! Tiles, described datasets and loaded bands (the tiles area) and the described datasets of
//! EDR queries are kept in caches of this kind, each with its own byte budget from config. When
//! many requests want the same missing value at once (a map opening shows a dozen tiles of one
//! band), one of them loads it and the rest wait for that load instead of reading the file a
//! dozen times. Every replica has its own cache;
//! nothing in it is needed for correctness.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

/// What an entry costs: its bytes plus this, for the key and bookkeeping.
const ENTRY_OVERHEAD: usize = 96;

struct Entry<V> {
    value: V,
    weight: usize,
    tick: u64,
}

struct Inner<K, V> {
    entries: HashMap<K, Entry<V>>,
    order: BTreeMap<u64, K>,
    tick: u64,
    used: usize,
}

/// The cache. Values are cheap to clone (`Arc`, `Bytes`).
pub(crate) struct Lru<K, V> {
    capacity: usize,
    inner: Mutex<Inner<K, V>>,
    pending: Mutex<HashMap<K, Arc<OnceCell<V>>>>,
}

impl<K, V> std::fmt::Debug for Lru<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lru")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl<K: Clone + Eq + Hash, V: Clone> Lru<K, V> {
    /// A cache holding at most `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            inner: Mutex::new(Inner {
                entries: HashMap::new(),
                order: BTreeMap::new(),
                tick: 0,
                used: 0,
            }),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// The value of `key`, marking it recently used.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.tick += 1;
        let tick = inner.tick;
        let entry = inner.entries.get_mut(key)?;
        let old = std::mem::replace(&mut entry.tick, tick);
        let value = entry.value.clone();
        inner.order.remove(&old);
        inner.order.insert(tick, key.clone());
        Some(value)
    }

    /// Stores `value` of `weight` bytes, dropping the least recently used entries to make
    /// room. A value larger than the whole cache is not kept.
    pub(crate) fn insert(&self, key: K, value: V, weight: usize) {
        let weight = weight.saturating_add(ENTRY_OVERHEAD);
        if weight > self.capacity {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(old) = inner.entries.remove(&key) {
            inner.order.remove(&old.tick);
            inner.used -= old.weight;
        }
        while inner.used + weight > self.capacity {
            let Some((_, oldest)) = inner.order.pop_first() else {
                break;
            };
            if let Some(evicted) = inner.entries.remove(&oldest) {
                inner.used -= evicted.weight;
            }
        }
        inner.tick += 1;
        let tick = inner.tick;
        inner.order.insert(tick, key.clone());
        inner.entries.insert(
            key,
            Entry {
                value,
                weight,
                tick,
            },
        );
        inner.used += weight;
    }

    /// Bytes held.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .used
    }

    /// The value of `key`, loading it with `load` when missing. Concurrent callers for the
    /// same key share one load. `weight` gives a loaded value's size.
    pub(crate) async fn get_or_load<F, Fut>(&self, key: &K, weight: fn(&V) -> usize, load: F) -> V
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = V>,
    {
        if let Some(value) = self.get(key) {
            return value;
        }
        let cell = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            pending
                .entry(key.clone())
                .or_insert_with(|| Arc::new(OnceCell::new()))
                .clone()
        };
        let value = cell.get_or_init(load).await.clone();
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if pending
            .get(key)
            .is_some_and(|current| Arc::ptr_eq(current, &cell))
        {
            pending.remove(key);
            drop(pending);
            self.insert(key.clone(), value.clone(), weight(&value));
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_goes_first() {
        let cache = Lru::new(3 * (100 + ENTRY_OVERHEAD));
        cache.insert("a", 1, 100);
        cache.insert("b", 2, 100);
        cache.insert("c", 3, 100);
        assert_eq!(cache.get(&"a"), Some(1));
        cache.insert("d", 4, 100);
        assert_eq!(cache.get(&"b"), None);
        assert_eq!(cache.get(&"a"), Some(1));
        assert_eq!(cache.get(&"c"), Some(3));
        assert_eq!(cache.get(&"d"), Some(4));
        cache.insert("huge", 5, 10_000);
        assert_eq!(cache.get(&"huge"), None);
        cache.insert("a", 6, 100);
        assert_eq!(cache.get(&"a"), Some(6));
        assert_eq!(cache.used(), 3 * (100 + ENTRY_OVERHEAD));
    }

    #[tokio::test]
    async fn concurrent_loads_of_one_key_run_once() {
        let cache = Arc::new(Lru::new(1 << 20));
        let loads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let cache = cache.clone();
            let loads = loads.clone();
            tasks.push(tokio::spawn(async move {
                cache
                    .get_or_load(
                        &"key",
                        |_| 10,
                        || async {
                            loads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                            42
                        },
                    )
                    .await
            }));
        }
        for task in tasks {
            assert_eq!(task.await.unwrap(), 42);
        }
        assert_eq!(loads.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(cache.get(&"key"), Some(42));
    }
}

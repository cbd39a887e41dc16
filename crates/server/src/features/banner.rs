//! The banner: what an application shows now, answered from memory so that thousands of
//! polling clients cost one clock read and a hash each (docs/features.md, the banner).
//!
//! Each process keeps, per feature asked for and for the global set, the messages not yet
//! expired when it last read the store, and decides at every request, from the clock, which
//! of them are active. So a message starts and ends on time without any store access. A change
//! made through this process raises a generation that makes every entry stale at once; a
//! change made through another replica shows when the entry is older than the refresh
//! interval. An entry records the generation read *before* its query, so a change that lands
//! while it loads leaves it stale rather than hiding the change.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use md5::{Digest, Md5};

use crate::config::FeaturesConfig;
use crate::db::{Db, StoreResult};
use crate::features::model::{FeatureId, MessageRow, Scope};
use crate::features::store;

/// Features whose messages one process keeps; past this the cache starts over, so that
/// requests for made-up feature ids cannot grow it without bound.
const ENTRIES_MAX: usize = 10_000;

/// How the banner is cached and answered.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BannerSettings {
    /// Age after which an entry is read again from the store.
    pub(crate) refresh: Duration,
    /// `max-age` of answers; 0 for `no-cache`.
    pub(crate) max_age_seconds: u64,
    /// Not yet expired messages per feature considered.
    pub(crate) messages_max: u32,
}

impl From<&FeaturesConfig> for BannerSettings {
    fn from(config: &FeaturesConfig) -> Self {
        Self {
            refresh: config.banner_refresh_ms,
            max_age_seconds: config.banner_max_age_seconds,
            messages_max: config.banner_messages_max.get(),
        }
    }
}

/// What one banner request answers.
#[derive(Debug, Clone)]
pub(crate) struct Banner {
    /// Active messages, most severe first, then latest start, then highest id.
    pub(crate) messages: Vec<MessageRow>,
    /// The strong validator of this answer, quoted.
    pub(crate) etag: String,
    /// When the answer next changes by time alone.
    pub(crate) next_change: Option<DateTime<Utc>>,
    /// `Cache-Control` of this answer.
    pub(crate) cache_control: String,
}

#[derive(Debug)]
struct Entry {
    generation: u64,
    loaded_at: Instant,
    rows: Arc<Vec<MessageRow>>,
}

/// The per-process cache of not yet expired messages.
#[derive(Debug)]
pub(crate) struct BannerCache {
    settings: BannerSettings,
    generation: AtomicU64,
    entries: RwLock<HashMap<Option<String>, Entry>>,
}

impl BannerCache {
    /// An empty cache.
    pub(crate) fn new(settings: BannerSettings) -> Self {
        Self {
            settings,
            generation: AtomicU64::new(0),
            entries: RwLock::new(HashMap::new()),
        }
    }

    /// Makes every entry stale: a message was written through this process.
    pub(crate) fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The banner of `feature` at `now`.
    pub(crate) async fn banner(
        &self,
        db: &Db,
        feature: &FeatureId,
        now: DateTime<Utc>,
    ) -> StoreResult<Banner> {
        let own = self
            .unexpired(db, &Scope::Feature(feature.clone()), now)
            .await?;
        let global = self.unexpired(db, &Scope::Global, now).await?;
        let mut next_change: Option<DateTime<Utc>> = None;
        let mut messages = Vec::new();
        for row in own.iter().chain(global.iter()) {
            let change = if row.is_active_at(now) {
                messages.push(row.clone());
                row.expiring_date
            } else if row.start_date > now {
                row.start_date
            } else {
                continue;
            };
            next_change = Some(next_change.map_or(change, |next| next.min(change)));
        }
        messages.sort_by(|a, b| {
            (a.message_type.rank(), b.start_date, b.id).cmp(&(
                b.message_type.rank(),
                a.start_date,
                a.id,
            ))
        });
        let etag = etag_of(feature, &messages, next_change);
        let cache_control = self.cache_control(now, next_change);
        Ok(Banner {
            messages,
            etag,
            next_change,
            cache_control,
        })
    }

    fn cache_control(&self, now: DateTime<Utc>, next_change: Option<DateTime<Utc>>) -> String {
        let mut max_age = self.settings.max_age_seconds;
        if let Some(next) = next_change {
            let until = u64::try_from((next - now).num_seconds()).unwrap_or(0);
            max_age = max_age.min(until);
        }
        if max_age == 0 {
            "private, no-cache".to_owned()
        } else {
            format!("private, max-age={max_age}")
        }
    }

    /// The not yet expired messages of `scope` as last read, read again when stale.
    async fn unexpired(
        &self,
        db: &Db,
        scope: &Scope,
        now: DateTime<Utc>,
    ) -> StoreResult<Arc<Vec<MessageRow>>> {
        let key = scope.column();
        let generation = self.generation.load(Ordering::Acquire);
        if let Ok(entries) = self.entries.read()
            && let Some(entry) = entries.get(&key)
            && entry.generation == generation
            && entry.loaded_at.elapsed() < self.settings.refresh
        {
            return Ok(Arc::clone(&entry.rows));
        }
        let rows =
            Arc::new(store::unexpired_messages(db, scope, now, self.settings.messages_max).await?);
        if let Ok(mut entries) = self.entries.write() {
            if entries.len() >= ENTRIES_MAX && !entries.contains_key(&key) {
                entries.clear();
            }
            entries.insert(
                key,
                Entry {
                    generation,
                    loaded_at: Instant::now(),
                    rows: Arc::clone(&rows),
                },
            );
        }
        Ok(rows)
    }
}

/// A strong validator over what the answer shows: the feature, each message's id and version
/// (every change of a message raises its version), and `nextChangeAt` (a message published to
/// start later changes no shown message, but pollers must learn when to look again).
fn etag_of(
    feature: &FeatureId,
    messages: &[MessageRow],
    next_change: Option<DateTime<Utc>>,
) -> String {
    let mut hash = Md5::new();
    hash.update(feature.as_str().as_bytes());
    hash.update(b"\0");
    if let Some(next) = next_change {
        hash.update(next.timestamp_micros().to_le_bytes());
    }
    for message in messages {
        hash.update(b"\0");
        hash.update(message.id.to_le_bytes());
        hash.update(message.version.to_le_bytes());
    }
    let digest = hash.finalize();
    let hex: String = digest
        .iter()
        .take(12)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("\"{hex}\"")
}

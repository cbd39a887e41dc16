//! Stored pyramids (docs/tiles.md, "Stored pyramids"): the levels a tiles dataset asks to
//! store (`storedZoomLevels`) are rendered once, in the background, and kept in the blob store.
//!
//! Layout: `pyramids/<tenant>/<tiles dataset>/<version>/` holds one blob per tile that has
//! data, `<scheme index>/<step>/<layer>/<level>/<row>/<col>` (the scheme's index, not its id:
//! ids may be `..`, which is no blob name segment), and `manifest.json`, written LAST, listing
//! every stored tile with its size and the total. `<version>` is the MD5 of the content key of
//! the tiles dataset and of its source, so new content never meets old tiles.
//!
//! Why these choices:
//! - Without a manifest nothing is used: a crash midway leaves tiles nobody reads, and the
//!   queue row (`tile_pyramids`, leased like transfers) makes a restarted process, or another
//!   replica once the lease ran out, render the pyramid again from the start. Tiles are small
//!   and deterministic, so redoing is simpler and as safe as resuming.
//! - The pyramid's row stays after rendering (`stored`), naming the source, so that new
//!   content for the source queues it again (`tiles::store`); the new version's manifest makes
//!   the old version's blobs unused, and they are removed once it is written. A version whose
//!   rendering was superseded is removed when the next rendering starts.
//! - Every blob of a tiles dataset is below one prefix, so its purge queues that prefix in
//!   `blob_garbage` (in the purge's own transaction) and removes whatever is there, finished
//!   or not. A renderer that finds its queue row gone (the dataset was purged under it) removes
//!   what it wrote itself.
//! - Tiles go through the same sampling and encoding as on demand ([`TileService::draw`]), so
//!   a stored tile is byte for byte the tile that would have been drawn. Empty tiles are not
//!   stored: the manifest knows the stored levels, so a tile of a stored level that it does not
//!   list is the empty tile.
//! - All steps and layers of the stored levels are stored: an animation through time is what
//!   on-demand drawing serves worst (each step loads its own band), and the count limit
//!   (`tiles.stored_tiles_max`) counts them, so a client asks for fewer levels instead.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::ids::{DatasetId, TenantId};
use crate::leases::{Holder, Lease};
use crate::tiles::scheme::Scheme;
use crate::tiles::service::{TileError, TileService, Tileable};
use crate::tiles::source::BandKey;
use crate::tiles::store;
use basin_blob::{BlobError, BlobPath, WriteOptions};

/// Container of stored pyramids.
pub(crate) const PYRAMIDS_CONTAINER: &str = "pyramids";

/// Name of the manifest within a pyramid's version folder.
const MANIFEST_NAME: &str = "manifest.json";

/// Claims of one pyramid before it is given up (its tiles then stay drawn on demand).
const ATTEMPTS_MAX: u32 = 3;

/// Tiles drawn at once: two, as the machines this runs on share their cores with requests.
const TILES_IN_FLIGHT: usize = 2;

/// Bytes of manifest per stored tile at most (seven numbers), for the read limit.
const MANIFEST_BYTES_PER_TILE: u64 = 96;

/// Largest stored tile read back: a 512 x 512 tile of raw 32-bit floats is 1 MiB, and no
/// encoding makes one larger than four times that.
const STORED_TILE_BYTES_MAX: u64 = 4 << 20;

/// How long a missing manifest is believed before a tile request looks again: the renderer
/// may be on another replica.
const ABSENT_RECHECK: Duration = Duration::from_secs(2);

/// The pyramid a tiles dataset's tiles may come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyramidRef {
    tenant: TenantId,
    dataset: DatasetId,
    version: String,
}

impl PyramidRef {
    /// The pyramid of tiles dataset `dataset` for the content key `tiles_key`.
    pub(crate) fn new(tenant: TenantId, dataset: DatasetId, tiles_key: &str) -> Self {
        use md5::Digest;
        let digest = md5::Md5::digest(tiles_key.as_bytes());
        Self {
            tenant,
            dataset,
            version: crate::datasets::service::hex(&digest),
        }
    }

    fn blob(&self, rest: &str) -> Result<BlobPath, TileError> {
        let name = format!("{}/{}/{}/{rest}", self.tenant, self.dataset, self.version);
        BlobPath::parse(PYRAMIDS_CONTAINER, &name)
            .map_err(|error| anyhow::anyhow!("cannot name a stored tile: {error}").into())
    }

    /// The folder of this version's blobs, for [`basin_blob::BlobStore::delete_prefix`].
    fn version_prefix(&self) -> Result<BlobPath, TileError> {
        let name = format!("{}/{}/{}", self.tenant, self.dataset, self.version);
        BlobPath::parse(PYRAMIDS_CONTAINER, &name)
            .map_err(|error| anyhow::anyhow!("cannot name a pyramid's folder: {error}").into())
    }

    fn manifest_path(&self) -> Result<BlobPath, TileError> {
        self.blob(MANIFEST_NAME)
    }

    fn tile_path(&self, tile: &TileId) -> Result<BlobPath, TileError> {
        let (scheme, step, layer, level, row, col) = *tile;
        self.blob(&format!("{scheme}/{step}/{layer}/{level}/{row}/{col}"))
    }

    /// The cache key of its manifest.
    fn key(&self) -> Arc<str> {
        Arc::from(format!("{}/{}", self.dataset, self.version))
    }
}

/// Every blob of tiles dataset `dataset`'s pyramids, any version: what its purge removes.
pub(crate) fn dataset_prefix(tenant: TenantId, dataset: DatasetId) -> Option<BlobPath> {
    BlobPath::parse(PYRAMIDS_CONTAINER, &format!("{tenant}/{dataset}")).ok()
}

/// A stored tile: scheme index, step, layer, level, row, column.
type TileId = (usize, usize, usize, u8, u32, u32);

/// A stored tile as its manifest lists it: its id and its bytes.
type StoredEntry = (usize, usize, usize, u8, u32, u32, u64);

/// One stored level of a scheme.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredLevels {
    /// The scheme's index in the definition.
    index: usize,
    /// Its id.
    scheme_id: String,
    /// The levels stored.
    levels: Vec<u8>,
}

/// `manifest.json`: what a finished pyramid holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManifestFile {
    /// Format version, 1.
    format: u32,
    /// The content version the tiles were drawn from.
    version: String,
    /// Steps stored of each level (all of the data's).
    steps: usize,
    /// Layers stored of each level (all of the data's).
    layers: usize,
    /// The stored levels per scheme.
    schemes: Vec<StoredLevels>,
    /// Every stored tile: scheme index, step, layer, level, row, column and bytes. A tile of
    /// a stored level that is not listed is the empty tile.
    tiles: Vec<StoredEntry>,
    /// Bytes of all stored tiles.
    total_bytes: u64,
}

/// A manifest as a tile request uses it.
#[derive(Debug)]
pub(crate) struct Manifest {
    /// Bytes of all stored tiles.
    pub(crate) total_bytes: u64,
    levels: HashSet<(usize, u8)>,
    tiles: HashSet<TileId>,
}

impl Manifest {
    fn of(file: &ManifestFile) -> Self {
        Self {
            total_bytes: file.total_bytes,
            levels: file
                .schemes
                .iter()
                .flat_map(|scheme| scheme.levels.iter().map(|&level| (scheme.index, level)))
                .collect(),
            tiles: file
                .tiles
                .iter()
                .map(|&(scheme, step, layer, level, row, col, _)| {
                    (scheme, step, layer, level, row, col)
                })
                .collect(),
        }
    }

    fn weight(&self) -> usize {
        self.tiles.len().saturating_mul(64).saturating_add(256)
    }
}

/// What the manifest cache holds: a manifest, or that there was none at a time.
#[derive(Debug, Clone)]
pub(crate) enum ManifestLookup {
    /// The pyramid is complete.
    Found(Arc<Manifest>),
    /// No manifest when last looked at.
    Absent(Instant),
}

/// What a stored pyramid says of a tile.
#[derive(Debug)]
pub(crate) enum StoredTile {
    /// The stored bytes.
    Bytes(Bytes),
    /// The tile is in a stored level and has no data: the empty tile.
    Empty,
}

/// A stored level and the rectangle of its tiles that covers the data: level, first row,
/// first column, last row, last column.
type LevelRange = (u8, u32, u32, u32, u32);

/// The tiles of `scheme`'s stored levels that meet the data, per step and layer, as a range
/// of rows and columns per level: `(level, first row, first column, last row, last column)`.
fn level_ranges(tileable: &Tileable, scheme: &Scheme) -> Vec<LevelRange> {
    let Some(extent) = tileable.data_extent(scheme) else {
        return Vec::new();
    };
    scheme
        .stored_levels
        .iter()
        .filter_map(|&level| {
            let matrix = scheme.matrix_set.matrices.get(usize::from(level))?;
            let (min_row, min_col, max_row, max_col) = matrix.tiles_covering(&extent)?;
            Some((level, min_row, min_col, max_row, max_col))
        })
        .collect()
}

/// How many tiles storing `tileable`'s stored levels takes: those of the stored levels that
/// meet the data's extent, times the data's steps and layers.
pub(crate) fn stored_tile_count(tileable: &Tileable) -> u64 {
    let description = &tileable.description;
    let per_band: u64 = tileable
        .schemes
        .iter()
        .flat_map(|scheme| level_ranges(tileable, scheme))
        .map(|(_, min_row, min_col, max_row, max_col)| {
            let rows = u64::from(max_row.saturating_sub(min_row)).saturating_add(1);
            let cols = u64::from(max_col.saturating_sub(min_col)).saturating_add(1);
            rows.saturating_mul(cols)
        })
        .fold(0, u64::saturating_add);
    let bands = u64::try_from(description.steps.max(1))
        .unwrap_or(u64::MAX)
        .saturating_mul(u64::try_from(description.layers.max(1)).unwrap_or(u64::MAX));
    per_band.saturating_mul(bands)
}

/// Every tile to render, in the order they are drawn (step, layer, scheme, level, row,
/// column: one band at a time, so the band cache holds what the next tiles need).
fn tiles_to_render(tileable: &Tileable) -> Vec<TileId> {
    let description = &tileable.description;
    let ranges: Vec<(usize, Vec<LevelRange>)> = tileable
        .schemes
        .iter()
        .enumerate()
        .filter(|(_, scheme)| !scheme.stored_levels.is_empty())
        .map(|(index, scheme)| (index, level_ranges(tileable, scheme)))
        .collect();
    let mut tiles = Vec::new();
    for step in 0..description.steps.max(1) {
        for layer in 0..description.layers.max(1) {
            for (index, levels) in &ranges {
                for &(level, min_row, min_col, max_row, max_col) in levels {
                    for row in min_row..=max_row {
                        for col in min_col..=max_col {
                            tiles.push((*index, step, layer, level, row, col));
                        }
                    }
                }
            }
        }
    }
    tiles
}

/// How a render ended.
enum Rendered {
    /// The manifest is written.
    Done(Arc<Manifest>, PyramidRef),
    /// The process is stopping.
    Stopped,
    /// The hold was lost: new content queued the pyramid again, another worker took it over
    /// after the lease ran out, or the dataset was purged.
    Superseded(PyramidRef),
    /// The tiles dataset is gone (purged): nothing to keep.
    Gone,
}

impl TileService {
    /// What the pyramid of `tileable` says of a tile, when it has a manifest; `None` sends the
    /// request on to drawing.
    pub(crate) async fn stored_tile(
        &self,
        tileable: &Tileable,
        scheme: &Scheme,
        level: u8,
        (row, col): (u32, u32),
        band: BandKey,
    ) -> Option<StoredTile> {
        let pyramid = tileable.pyramid.as_ref()?;
        let index = tileable
            .schemes
            .iter()
            .position(|candidate| candidate.id == scheme.id)?;
        if !scheme.stored_levels.contains(&level) {
            return None;
        }
        let manifest = self.manifest(pyramid, false).await?;
        let tile = (index, band.step, band.layer, level, row, col);
        if !manifest.tiles.contains(&tile) {
            return manifest
                .levels
                .contains(&(index, level))
                .then_some(StoredTile::Empty);
        }
        let path = pyramid.tile_path(&tile).ok()?;
        match self.read_blob(&path, STORED_TILE_BYTES_MAX).await {
            Ok(bytes) => Some(StoredTile::Bytes(bytes)),
            Err(error) => {
                // Purged meanwhile, or a store fault: drawing answers just as well.
                tracing::warn!(%error, blob = %path.key(), "cannot read a stored tile; drawing it");
                None
            }
        }
    }

    /// Kilobytes (rounded up) of `tileable`'s stored tiles: 0 until its manifest is written.
    pub(crate) async fn stored_kilobytes(&self, tileable: &Tileable) -> u64 {
        let Some(pyramid) = tileable.pyramid.as_ref() else {
            return 0;
        };
        self.manifest(pyramid, true)
            .await
            .map_or(0, |manifest| manifest.total_bytes.div_ceil(1024))
    }

    fn manifest_bytes_max(&self) -> u64 {
        self.settings
            .stored_tiles_max
            .saturating_mul(MANIFEST_BYTES_PER_TILE)
            .saturating_add(1 << 16)
    }

    /// The manifest of `pyramid`: from memory, or read now. A missing one is believed for
    /// [`ABSENT_RECHECK`] unless `fresh`.
    async fn manifest(&self, pyramid: &PyramidRef, fresh: bool) -> Option<Arc<Manifest>> {
        let key = pyramid.key();
        match self.manifests.get(&key) {
            Some(ManifestLookup::Found(manifest)) => return Some(manifest),
            Some(ManifestLookup::Absent(at)) if !fresh && at.elapsed() < ABSENT_RECHECK => {
                return None;
            }
            _ => {}
        }
        let path = pyramid.manifest_path().ok()?;
        let read = self.read_blob(&path, self.manifest_bytes_max()).await;
        let parsed = match read {
            Ok(bytes) => serde_json::from_slice::<ManifestFile>(&bytes)
                .map_err(
                    |error| tracing::warn!(%error, blob = %path.key(), "unreadable tile manifest"),
                )
                .ok()
                .filter(|file| file.format == 1 && file.version == pyramid.version),
            Err(TileError::Internal(error))
                if error
                    .downcast_ref::<BlobError>()
                    .is_some_and(|error| matches!(error, BlobError::NotFound(_))) =>
            {
                None
            }
            Err(error) => {
                tracing::warn!(%error, blob = %path.key(), "cannot read a tile manifest");
                return None;
            }
        };
        match parsed {
            Some(file) => {
                let manifest = Arc::new(Manifest::of(&file));
                let weight = manifest.weight();
                self.manifests
                    .insert(key, ManifestLookup::Found(manifest.clone()), weight);
                Some(manifest)
            }
            None => {
                self.manifests
                    .insert(key, ManifestLookup::Absent(Instant::now()), 64);
                None
            }
        }
    }

    /// Renders queued pyramids until `stop`: every `basin worker`, and every `basin serve`
    /// unless `tiles.serve_renders_pyramids` is off, runs this; claims keep two processes off
    /// one pyramid.
    pub(crate) async fn run_pyramids(self, worker: Holder, stop: CancellationToken) {
        loop {
            // Not raced against `stop`: the render watches it between tiles and hands its
            // pyramid back to the queue, which dropping it midway would not.
            match self.render_next(&worker, &stop).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "cannot render tile pyramids; retrying later"),
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.settings.pyramid_poll) => {}
                () = self.pyramid_queued.notified() => {}
            }
        }
    }

    /// Claims and renders one pyramid; false when none was waiting.
    async fn render_next(&self, worker: &str, stop: &CancellationToken) -> anyhow::Result<bool> {
        let now = self.clock.now();
        for dataset in store::give_up_exhausted(&self.db, now, ATTEMPTS_MAX).await? {
            tracing::warn!(%dataset, "gave up storing a tile pyramid; its tiles are drawn on demand");
            self.remove_pyramids_of(dataset).await;
        }
        let lease_until = self.lease().expiry(now);
        let Some(claimed) =
            store::claim_pyramid(&self.db, worker, now, lease_until, ATTEMPTS_MAX).await?
        else {
            return Ok(false);
        };
        let dataset = claimed.dataset_id;
        let hold = store::Hold {
            dataset,
            worker,
            generation: claimed.generation,
        };
        tracing::info!(%dataset, attempt = claimed.attempts, "rendering a tile pyramid");
        match self.render_pyramid(&claimed, hold, stop).await {
            Ok(Rendered::Done(manifest, pyramid)) => {
                tracing::info!(%dataset, bytes = manifest.total_bytes, tiles = manifest.tiles.len(), "tile pyramid stored");
                if store::finish_stored(&self.db, hold, &pyramid.version).await? {
                    // The content drawn before, whose tiles nobody reads any more.
                    if let Some(old) = claimed.stored_version.as_deref()
                        && old != pyramid.version
                    {
                        self.remove_version(&pyramid, old).await;
                    }
                } else {
                    self.after_lost(hold, &pyramid).await?;
                }
            }
            Ok(Rendered::Stopped) => store::release_pyramid(&self.db, dataset, worker).await?,
            Ok(Rendered::Superseded(pyramid)) => self.after_lost(hold, &pyramid).await?,
            // Its purge queued the prefix of its blobs for removal.
            Ok(Rendered::Gone) => {}
            Err(TileError::Internal(error)) => {
                // A fault (the store, the database): tried again after a lease's time, up to
                // ATTEMPTS_MAX claims.
                let retry_at = self.lease().expiry(self.clock.now());
                let recorded = store::record_fault(
                    &self.db,
                    hold,
                    &format!("{error:#}"),
                    retry_at,
                    ATTEMPTS_MAX,
                )
                .await?;
                if recorded == store::Faulted::GivenUp {
                    tracing::warn!(%dataset, error = %format!("{error:#}"), "rendering a tile pyramid failed again; gave it up, its tiles are drawn on demand");
                    self.remove_pyramids_of(dataset).await;
                } else {
                    tracing::warn!(%dataset, error = %format!("{error:#}"), "rendering a tile pyramid failed; it will be retried");
                }
            }
            Err(error) => {
                tracing::warn!(%dataset, %error, "a tile pyramid cannot be rendered; its tiles are drawn on demand");
                if store::finish_given_up(&self.db, hold, &error.to_string()).await? {
                    self.remove_pyramids_of(dataset).await;
                }
            }
        }
        Ok(true)
    }

    /// `hold` was lost after rendering `pyramid` (wholly or partly): when the dataset is gone
    /// its blobs go; when new content superseded it, the lease is handed back so the new
    /// content's rendering starts at once (which removes the partial version when it starts).
    async fn after_lost(&self, hold: store::Hold<'_>, pyramid: &PyramidRef) -> anyhow::Result<()> {
        match self.datasets.find_any(hold.dataset).await? {
            None => self.remove_prefix(pyramid.tenant, hold.dataset).await,
            Some(_) => store::release_pyramid(&self.db, hold.dataset, hold.worker).await?,
        }
        Ok(())
    }

    /// Removes every stored tile of `dataset` (any version).
    async fn remove_pyramids_of(&self, dataset: DatasetId) {
        // Without its row the tenant is unknown; the purge that removed the row queued the
        // prefix and removes the rest.
        if let Ok(Some(row)) = self.datasets.find_any(dataset).await {
            self.remove_prefix(row.tenant_id, dataset).await;
        }
    }

    async fn remove_prefix(&self, tenant: TenantId, dataset: DatasetId) {
        if let Some(prefix) = dataset_prefix(tenant, dataset)
            && let Err(error) = self.blobs.delete_prefix(&prefix).await
        {
            tracing::warn!(%error, blob = %prefix.key(), "cannot remove stored tiles");
        }
    }

    /// Removes the blobs of `pyramid`'s dataset under content version `version`.
    async fn remove_version(&self, pyramid: &PyramidRef, version: &str) {
        let other = PyramidRef {
            version: version.to_owned(),
            ..pyramid.clone()
        };
        let Ok(manifest) = other.manifest_path() else {
            return;
        };
        // The manifest goes first: from then on nothing reads the version's tiles.
        if let Err(error) = self.blobs.delete(&manifest).await
            && !matches!(error, BlobError::NotFound(_))
        {
            tracing::warn!(%error, blob = %manifest.key(), "cannot remove an old tile manifest");
        }
        if let Ok(prefix) = other.version_prefix()
            && let Err(error) = self.blobs.delete_prefix(&prefix).await
        {
            tracing::warn!(%error, blob = %prefix.key(), "cannot remove old stored tiles");
        }
    }

    async fn render_pyramid(
        &self,
        claimed: &store::ClaimedPyramid,
        hold: store::Hold<'_>,
        stop: &CancellationToken,
    ) -> Result<Rendered, TileError> {
        let dataset = hold.dataset;
        let Some(row) = self.datasets.find_any(dataset).await? else {
            return Ok(Rendered::Gone);
        };
        let definition = self.definition(&row).await?;
        let Some(source) = self.datasets.find_any(definition.source_dataset_id).await? else {
            return Err(TileError::SourceGone);
        };
        let tileable = self.tiles_tileable(&row, &definition, &source).await?;
        let Some(pyramid) = tileable.pyramid.clone() else {
            return Err(TileError::NotTileable("no level is stored".to_owned()));
        };
        let count = stored_tile_count(&tileable);
        if count > self.settings.stored_tiles_max {
            return Err(TileError::TooManyStoredTiles {
                count,
                max: self.settings.stored_tiles_max,
            });
        }
        if !store::start_version(&self.db, hold, &pyramid.version, source.id)
            .await
            .map_err(anyhow::Error::from)?
        {
            return Ok(Rendered::Superseded(pyramid));
        }
        // An earlier claim's unfinished version of other content: nothing will finish it.
        if let Some(unfinished) = claimed.rendering_version.as_deref()
            && unfinished != pyramid.version
            && claimed.stored_version.as_deref() != Some(unfinished)
        {
            self.remove_version(&pyramid, unfinished).await;
        }
        let (stored, total_bytes) = match self.store_all(&tileable, &pyramid, hold, stop).await {
            Ok(Ok(stored)) => stored,
            Ok(Err(ended)) => return Ok(ended),
            Err(error) => return self.failed_or_lost(hold, pyramid, error).await,
        };
        if !self.renew(hold).await? {
            return Ok(Rendered::Superseded(pyramid));
        }
        match self
            .write_manifest(&tileable, &pyramid, stored, total_bytes)
            .await
        {
            Ok(manifest) => Ok(Rendered::Done(manifest, pyramid)),
            Err(error) => self.failed_or_lost(hold, pyramid, error).await,
        }
    }

    /// A write of `pyramid` failed. When the hold is lost too, the loss is what happened (a
    /// purge removing the pyramid's folder while a tile was being moved into it fails that
    /// write), and it is handled as one: the caller removes what this renderer wrote after the
    /// purge. Taken as a fault, the loss would go unseen (a fault on a row that is gone
    /// records nothing) and the tiles written after the purge would stay for good.
    async fn failed_or_lost(
        &self,
        hold: store::Hold<'_>,
        pyramid: PyramidRef,
        error: TileError,
    ) -> Result<Rendered, TileError> {
        match self.renew(hold).await {
            Ok(false) => Ok(Rendered::Superseded(pyramid)),
            _ => Err(error),
        }
    }

    /// Draws and stores every tile of `pyramid`, renewing `hold` as it goes: the stored tiles
    /// with their sizes and the total, or how the rendering ended early.
    async fn store_all(
        &self,
        tileable: &Arc<Tileable>,
        pyramid: &PyramidRef,
        hold: store::Hold<'_>,
        stop: &CancellationToken,
    ) -> Result<Result<(Vec<StoredEntry>, u64), Rendered>, TileError> {
        let tiles = tiles_to_render(tileable);
        let mut stored = Vec::new();
        let mut total_bytes = 0_u64;
        let mut renewed = Instant::now();
        let renew_every = self.settings.pyramid_lease / 6;
        for chunk in tiles.chunks(32) {
            if stop.is_cancelled() {
                return Ok(Err(Rendered::Stopped));
            }
            if renewed.elapsed() >= renew_every {
                if !self.renew(hold).await? {
                    return Ok(Err(Rendered::Superseded(pyramid.clone())));
                }
                renewed = Instant::now();
            }
            let drawing = futures::stream::iter(chunk.iter().copied())
                .map(|tile| self.store_tile(tileable, pyramid, tile))
                .buffer_unordered(TILES_IN_FLIGHT)
                .collect::<Vec<Result<Option<(TileId, u64)>, TileError>>>();
            let drawn = tokio::select! {
                drawn = drawing => drawn,
                () = stop.cancelled() => return Ok(Err(Rendered::Stopped)),
            };
            for result in drawn {
                if let Some((tile, bytes)) = result? {
                    let (scheme, step, layer, level, row, col) = tile;
                    stored.push((scheme, step, layer, level, row, col, bytes));
                    total_bytes = total_bytes.saturating_add(bytes);
                }
            }
        }
        stored.sort_unstable();
        Ok(Ok((stored, total_bytes)))
    }

    /// Writes the manifest of a complete pyramid (the last blob written) and keeps it.
    async fn write_manifest(
        &self,
        tileable: &Tileable,
        pyramid: &PyramidRef,
        tiles: Vec<StoredEntry>,
        total_bytes: u64,
    ) -> Result<Arc<Manifest>, TileError> {
        let file = ManifestFile {
            format: 1,
            version: pyramid.version.clone(),
            steps: tileable.description.steps.max(1),
            layers: tileable.description.layers.max(1),
            schemes: tileable
                .schemes
                .iter()
                .enumerate()
                .filter(|(_, scheme)| !scheme.stored_levels.is_empty())
                .map(|(index, scheme)| StoredLevels {
                    index,
                    scheme_id: scheme.id.clone(),
                    levels: scheme.stored_levels.clone(),
                })
                .collect(),
            tiles,
            total_bytes,
        };
        let bytes = serde_json::to_vec(&file).map_err(anyhow::Error::from)?;
        self.write_blob(&pyramid.manifest_path()?, Bytes::from(bytes))
            .await?;
        let manifest = Arc::new(Manifest::of(&file));
        let weight = manifest.weight();
        self.manifests.insert(
            pyramid.key(),
            ManifestLookup::Found(manifest.clone()),
            weight,
        );
        Ok(manifest)
    }

    /// Draws one tile and stores it when it has data; its id and size.
    async fn store_tile(
        &self,
        tileable: &Arc<Tileable>,
        pyramid: &PyramidRef,
        tile: TileId,
    ) -> Result<Option<(TileId, u64)>, TileError> {
        let (index, step, layer, level, row, col) = tile;
        let Some(scheme) = tileable.schemes.get(index) else {
            return Ok(None);
        };
        let Some(matrix) = scheme.matrix_set.matrices.get(usize::from(level)) else {
            return Ok(None);
        };
        let Some(bounds) = matrix.tile_bounds(row, col) else {
            return Ok(None);
        };
        if !tileable
            .data_extent(scheme)
            .is_some_and(|extent| extent.intersects(&bounds))
        {
            return Ok(None);
        }
        let band = BandKey {
            item: scheme.item,
            step,
            layer,
        };
        let Some(bytes) = self
            .draw(tileable, scheme, matrix, band, (row, col), scheme.output)
            .await?
        else {
            return Ok(None);
        };
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        self.write_blob(&pyramid.tile_path(&tile)?, bytes).await?;
        Ok(Some((tile, size)))
    }

    /// Writes a stored tile or manifest, replacing what an earlier attempt wrote.
    async fn write_blob(&self, path: &BlobPath, bytes: Bytes) -> Result<(), TileError> {
        let options = WriteOptions {
            size_max: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
            create_only: false,
            expected_md5: None,
            properties: basin_blob::BlobProperties::default(),
        };
        self.put_bytes(path, bytes, options).await?;
        Ok(())
    }

    async fn renew(&self, hold: store::Hold<'_>) -> Result<bool, TileError> {
        let lease_until = self.lease().expiry(self.clock.now());
        Ok(store::renew_pyramid(&self.db, hold, lease_until)
            .await
            .map_err(anyhow::Error::from)?)
    }

    fn lease(&self) -> Lease {
        Lease::new(self.settings.pyramid_lease)
    }
}

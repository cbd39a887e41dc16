//! Tile rules: who may see a dataset's tiles, which schemes it has, and rendering with caches.
//!
//! A tile request costs, in order of what is tried: the dataset check (one row and the
//! caller's capabilities on its project, as every content read, kept in memory until a change
//! to access is written: `db::changes`), then the tile cache; on a
//! miss, a test of the tile against the data's extent (a tile beside the data is the empty
//! tile at once, without touching the data); then the loaded band (cached), sampling and
//! encoding on the blocking pool. Caches are keyed by the dataset's content version, so a
//! replaced file is never served from an old cache entry.

mod definitions;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use basin_formats::Catalogue;
use basin_formats::crs::{CrsTransform, Projection};
use basin_tiles::encode::{self, OutputType};
use basin_tiles::mesh::Shading;
use basin_tiles::raster::Aggregation;
use basin_tiles::render::{self, Reprojection};
use basin_tiles::tms::Bounds;
use basin_tiles::vector::VectorLayer;
use bytes::Bytes;
use chrono::NaiveDateTime;

use crate::auth::Caller;
use crate::clock::Clock;
use crate::datasets::model::DatasetRow;
use crate::datasets::service::{ContentDetails, DatasetError, DatasetService, NewDataset};
use crate::db::Db;
use crate::db::changes::{ChangeWatch, FreshCache};
use crate::ids::DatasetId;
use crate::lru::Lru;
use crate::staging::Staging;
use crate::tiles::definition::{self, DefineTilesRequest, Definition, TILES_FORMAT};
use crate::tiles::pyramid::{self, ManifestLookup, PyramidRef, StoredTile};
use crate::tiles::scheme::{Scheme, SchemeType, default_schemes};
use crate::tiles::source::{self, Band, BandKey, Description, SourceError};
use crate::tiles::store;
use basin_blob::{BlobPath, BlobStore};

/// Errors of the tile rules.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TileError {
    /// The dataset rules refused (not found, not readable).
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The dataset has no tiles of this kind.
    #[error("{0}")]
    NotTileable(String),
    /// The dataset's file cannot be read.
    #[error("{0}")]
    Unreadable(String),
    /// No scheme of that id.
    #[error("the dataset has no tiling scheme {0:?}; its metadata lists the schemes")]
    UnknownScheme(String),
    /// The matrix, row or column is outside the scheme.
    #[error("{0}")]
    OutsideMatrix(String),
    /// A query parameter is wrong.
    #[error("{message}")]
    Invalid {
        /// Which parameter.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Scheme definitions that do not fit the data.
    #[error("the tiling schemes are not valid for this dataset")]
    Schemes(crate::error::FieldErrors),
    /// The source of a tiles dataset is gone or no longer readable by the caller.
    #[error("the dataset these tiles are drawn from is gone or not visible to you")]
    SourceGone,
    /// The stored levels of a definition hold more tiles than `tiles.stored_tiles_max`.
    #[error(
        "the stored levels hold {count} tiles (those meeting the data, times its steps and \
         layers), over the limit of {max} (tiles.stored_tiles_max); store fewer levels"
    )]
    TooManyStoredTiles {
        /// Tiles the definition would store.
        count: u64,
        /// The limit.
        max: u64,
    },
    /// A fault.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// Settings from `[tiles]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TileSettings {
    /// Bytes of encoded tiles kept in memory.
    pub(crate) tile_cache_bytes: usize,
    /// Bytes of loaded bands kept in memory.
    pub(crate) band_cache_bytes: usize,
    /// `Cache-Control` max-age of tiles, in seconds.
    pub(crate) max_age_seconds: u32,
    /// Most tiles one tiles dataset may store.
    pub(crate) stored_tiles_max: u64,
    /// How long a pyramid's claim lasts without renewal, and how long a faulted one waits.
    pub(crate) pyramid_lease: std::time::Duration,
    /// How often an idle renderer looks for pyramids queued by other processes.
    pub(crate) pyramid_poll: std::time::Duration,
}

impl From<&crate::config::TilesConfig> for TileSettings {
    fn from(config: &crate::config::TilesConfig) -> Self {
        let bytes = |megabytes: u64| {
            usize::try_from(megabytes.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
        };
        Self {
            tile_cache_bytes: bytes(config.tile_cache_mb),
            band_cache_bytes: bytes(config.band_cache_mb),
            max_age_seconds: config.max_age_seconds,
            stored_tiles_max: config.stored_tiles_max,
            pyramid_lease: config.pyramid_lease_seconds,
            pyramid_poll: config.pyramid_poll_ms,
        }
    }
}

/// A described dataset with its schemes, shared by every request for its tiles.
#[derive(Debug)]
pub(crate) struct Tileable {
    /// The dataset whose data is drawn: the dataset itself, or the source of a tiles dataset.
    pub(crate) source: DatasetRow,
    /// What drawn tiles are cached under: the source's content, and for a tiles dataset its
    /// own content too, since its schemes may reuse the ids of the source's own.
    tiles_key: Arc<str>,
    /// What the data is.
    pub(crate) description: Description,
    /// Its schemes.
    pub(crate) schemes: Vec<Scheme>,
    /// The data's extent in Web Mercator, for skipping XYZ tiles beside it.
    mercator_extent: Option<Bounds>,
    /// From EPSG:3857 to the data's system, when the data has XYZ schemes.
    reprojection: Option<Reprojection>,
    /// Where stored tiles of a tiles dataset with stored levels are.
    pub(crate) pyramid: Option<PyramidRef>,
}

impl Tileable {
    /// The data's extent in the system of `scheme`'s tiles; `None` when the data cannot be
    /// placed there.
    pub(crate) fn data_extent(&self, scheme: &Scheme) -> Option<Bounds> {
        match scheme.scheme_type {
            SchemeType::Xyz => self.mercator_extent,
            SchemeType::Wmts => Some(self.description.native_extent),
        }
    }

    /// The scheme `id`.
    pub(crate) fn scheme(&self, id: &str) -> Result<&Scheme, TileError> {
        self.schemes
            .iter()
            .find(|scheme| scheme.id == id)
            .ok_or_else(|| TileError::UnknownScheme(id.to_owned()))
    }
}

type Described = Result<Arc<Tileable>, Arc<SourceError>>;
type Loaded = Result<Arc<Band>, Arc<SourceError>>;
type Layer = Result<Arc<VectorLayer>, Arc<SourceError>>;

/// A rendered tile.
#[derive(Debug, Clone)]
pub(crate) struct RenderedTile {
    /// The encoded bytes.
    pub(crate) bytes: Bytes,
    /// Media type.
    pub(crate) media_type: &'static str,
    /// Strong validator of the bytes.
    pub(crate) etag: String,
}

/// Where a tile is, within a scheme.
#[derive(Debug, Clone)]
pub(crate) struct TileAddress {
    /// The matrix identifier.
    pub(crate) matrix: String,
    /// Row.
    pub(crate) row: u32,
    /// Column.
    pub(crate) col: u32,
    /// `layer` query: the layer index.
    pub(crate) layer: Option<String>,
    /// `timeStep` query: a time of the dataset (or a step index).
    pub(crate) time_step: Option<String>,
    /// `outputType` query (Basin's addition): the encoding of this answer instead of the
    /// scheme's, e.g. `RawData` for the exact values under a map's cursor.
    pub(crate) output: Option<OutputType>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TileKey {
    content: Arc<str>,
    scheme: String,
    level: u8,
    row: u32,
    col: u32,
    band: BandKey,
    output: OutputType,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct BandCacheKey {
    content: Arc<str>,
    band: BandKey,
    aggregation: Aggregation,
    shading: Shading,
}

/// What the tile rules are built from.
#[derive(Debug)]
pub(crate) struct TileDeps {
    /// The dataset rules.
    pub(crate) datasets: DatasetService,
    /// The database, for the queue of pyramids to render.
    pub(crate) db: Db,
    /// The blob store: datasets' content and stored pyramids.
    pub(crate) blobs: Arc<dyn BlobStore>,
    /// Readers of the formats.
    pub(crate) catalogue: Arc<Catalogue>,
    /// Where content is staged for reading.
    pub(crate) work_dir: PathBuf,
    /// `[tiles]`.
    pub(crate) settings: TileSettings,
    /// The time of leases.
    pub(crate) clock: Arc<dyn Clock>,
}

/// The tile rules.
#[derive(Clone)]
pub(crate) struct TileService {
    pub(super) datasets: DatasetService,
    pub(super) db: Db,
    pub(super) blobs: Arc<dyn BlobStore>,
    catalogue: Arc<Catalogue>,
    staging: Staging,
    pub(super) settings: TileSettings,
    pub(super) clock: Arc<dyn Clock>,
    /// Manifests of stored pyramids by version.
    pub(super) manifests: Arc<Lru<Arc<str>, ManifestLookup>>,
    /// Woken when this process queues a pyramid.
    pub(super) pyramid_queued: Arc<tokio::sync::Notify>,
    described: Arc<Lru<Arc<str>, Described>>,
    bands: Arc<Lru<BandCacheKey, Loaded>>,
    tiles: Arc<Lru<TileKey, RenderedTile>>,
    empty: Arc<Lru<(u32, OutputType), Bytes>>,
    layers: Arc<Lru<Arc<str>, Layer>>,
    /// Datasets a caller may read, so that a cached tile costs no store read.
    readable: Arc<FreshCache<(Caller, DatasetId), Arc<DatasetRow>>>,
    /// Definitions of tiles datasets by content.
    definitions: Arc<FreshCache<Arc<str>, Definition>>,
}

impl std::fmt::Debug for TileService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TileService")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The folder under the work folder where files are staged for reading.
const STAGING_FOLDER: &str = "tiles";

/// Least bytes kept for described datasets (a grid's description is under a kilobyte; a mesh's
/// holds its index, so the cache may grow to half the band budget).
const DESCRIBED_CACHE_BYTES: usize = 16 << 20;

impl TileService {
    /// The rules over these parts.
    pub(crate) fn new(deps: TileDeps, watch: &ChangeWatch) -> Self {
        let TileDeps {
            datasets,
            db,
            blobs,
            catalogue,
            work_dir,
            settings,
            clock,
        } = deps;
        Self {
            datasets,
            db,
            blobs,
            catalogue,
            staging: Staging::new(&work_dir, STAGING_FOLDER),
            settings,
            clock,
            manifests: Arc::new(Lru::new(MANIFEST_CACHE_BYTES)),
            pyramid_queued: Arc::new(tokio::sync::Notify::new()),
            described: Arc::new(Lru::new(
                DESCRIBED_CACHE_BYTES.max(settings.band_cache_bytes / 2),
            )),
            bands: Arc::new(Lru::new(settings.band_cache_bytes)),
            tiles: Arc::new(Lru::new(settings.tile_cache_bytes)),
            empty: Arc::new(Lru::new(1 << 20)),
            layers: Arc::new(Lru::new(settings.band_cache_bytes)),
            readable: Arc::new(FreshCache::new(watch.clone(), ACCESS_ENTRIES_MAX)),
            definitions: Arc::new(FreshCache::new(watch.clone(), DEFINITION_ENTRIES_MAX)),
        }
    }

    /// `Cache-Control` max-age of tiles.
    pub(crate) fn max_age_seconds(&self) -> u32 {
        self.settings.max_age_seconds
    }

    /// The dataset (which the caller may read) and what its tiles are made of. For a tiles
    /// dataset, its source must be readable too and its schemes are the defined ones.
    pub(crate) async fn tileable(
        &self,
        caller: &Caller,
        id: DatasetId,
    ) -> Result<(Arc<DatasetRow>, Arc<Tileable>), TileError> {
        let row = self.readable(caller, id).await?;
        if row.dataset_format != TILES_FORMAT {
            let described = self.described(&row).await?;
            return Ok((row, described));
        }
        let definition = self.definition(&row).await?;
        let source = match self.readable(caller, definition.source_dataset_id).await {
            Ok(source) => source,
            Err(DatasetError::NotFound | DatasetError::Project(_)) => {
                return Err(TileError::SourceGone);
            }
            Err(error) => return Err(error.into()),
        };
        let tileable = self.tiles_tileable(&row, &definition, &source).await?;
        Ok((row, tileable))
    }

    /// What tiles dataset `row` (defined by `definition`) draws from `source`; no access
    /// check.
    pub(super) async fn tiles_tileable(
        &self,
        row: &DatasetRow,
        definition: &Definition,
        source: &DatasetRow,
    ) -> Result<Arc<Tileable>, TileError> {
        if source.dataset_format == TILES_FORMAT {
            return Err(TileError::NotTileable(
                "a tiles dataset cannot draw from another tiles dataset".to_owned(),
            ));
        }
        let base = self.described(source).await?;
        let key: Arc<str> = Arc::from(format!("{}+{}", content_key(row), content_key(source)));
        if let Some(Ok(tileable)) = self.described.get(&key) {
            return Ok(tileable);
        }
        let schemes = definition::resolve_all(&definition.tiling_schemes, &base.description)
            .map_err(|_| {
                TileError::NotTileable(
                    "the source dataset changed and no longer fits these tiling schemes; define \
                     them again"
                        .to_owned(),
                )
            })?;
        let pyramid = schemes
            .iter()
            .any(|scheme| !scheme.stored_levels.is_empty())
            .then(|| PyramidRef::new(row.tenant_id, row.id, &key));
        let tileable = Arc::new(Tileable {
            tiles_key: key.clone(),
            source: base.source.clone(),
            description: base.description.clone(),
            schemes,
            mercator_extent: base.mercator_extent,
            reprojection: base.reprojection.clone(),
            pyramid,
        });
        let described = Ok(tileable.clone());
        self.described
            .insert(key, described.clone(), described_weight(&described));
        Ok(tileable)
    }

    /// The described dataset `row` (not a tiles dataset), from the cache or read now.
    async fn described(&self, row: &DatasetRow) -> Result<Arc<Tileable>, TileError> {
        let content = content_key(row);
        let service = self.clone();
        let loading_row = row.clone();
        let described = self
            .described
            .get_or_load(&content, described_weight, || async move {
                service.describe(&loading_row).await
            })
            .await;
        described.map_err(|error| source_error(&error))
    }

    /// Dataset `id`, if the caller may read its content: from memory while no change to
    /// datasets, projects, members or identities has been written since it was checked
    /// ([`FreshCache`]), else checked in the store now.
    async fn readable(
        &self,
        caller: &Caller,
        id: DatasetId,
    ) -> Result<Arc<DatasetRow>, DatasetError> {
        let load = async {
            self.datasets
                .readable(caller, id)
                .await
                .map(|row| Some(Arc::new(row)))
        };
        self.readable
            .get_or_load((caller.clone(), id), load)
            .await?
            .ok_or(DatasetError::NotFound)
    }

    /// The stored definition of a tiles dataset.
    pub(super) async fn definition(&self, row: &DatasetRow) -> Result<Definition, TileError> {
        let load = async { self.read_definition(row).await.map(Some) };
        self.definitions
            .get_or_load(content_key(row), load)
            .await?
            .ok_or_else(|| TileError::Unreadable("the tiles definition is missing".to_owned()))
    }

    /// The bytes of a small blob of Basin's own (a definition, a manifest, a stored tile);
    /// [`TileError::Unreadable`] past `bytes_max`, [`TileError::Internal`] with the
    /// [`basin_blob::BlobError`] when the store fails or has no such blob.
    pub(super) async fn read_blob(
        &self,
        path: &BlobPath,
        bytes_max: u64,
    ) -> Result<Bytes, TileError> {
        let read = self
            .blobs
            .get(path, None)
            .await
            .map_err(anyhow::Error::from)?;
        if read.meta.size > bytes_max {
            return Err(TileError::Unreadable(format!(
                "{} is larger than {bytes_max} bytes",
                path.key()
            )));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(read.meta.size).unwrap_or(0));
        let mut body = read.body;
        while let Some(chunk) = futures::StreamExt::next(&mut body).await {
            bytes.extend_from_slice(&chunk.map_err(anyhow::Error::from)?);
            if bytes.len() as u64 > bytes_max {
                return Err(TileError::Unreadable(format!(
                    "{} is larger than {bytes_max} bytes",
                    path.key()
                )));
            }
        }
        Ok(Bytes::from(bytes))
    }

    /// Writes `bytes`, held in memory, as the blob at `path`.
    pub(super) async fn put_bytes(
        &self,
        path: &BlobPath,
        bytes: Bytes,
        options: basin_blob::WriteOptions,
    ) -> Result<basin_blob::Written, TileError> {
        let body: basin_blob::ByteStream =
            Box::pin(futures::stream::once(async move { Ok(bytes) }));
        Ok(self
            .blobs
            .put(path, body, options)
            .await
            .map_err(anyhow::Error::from)?)
    }

    async fn describe(&self, row: &DatasetRow) -> Described {
        let catalogue = self.catalogue.clone();
        let format = row.dataset_format.clone();
        let described = self
            .with_file(row, move |file| source::describe(&catalogue, &format, file))
            .await
            .map_err(|error| Arc::new(SourceError::Unreadable(error.to_string())))?
            .map_err(Arc::new)?;
        let schemes = default_schemes(&described);
        let mercator_extent = described.mercator_extent();
        let reprojection = reprojection_from_mercator(&described);
        Ok(Arc::new(Tileable {
            tiles_key: content_key(row),
            source: row.clone(),
            description: described,
            schemes,
            mercator_extent,
            reprojection,
            pyramid: None,
        }))
    }

    /// Runs `read` on the blocking pool with the dataset's content as a local file: the
    /// blob itself, hard-linked so a replacement during the read cannot change it, or a
    /// download of it for remote stores. The file is removed afterwards.
    async fn with_file<T: Send + 'static>(
        &self,
        row: &DatasetRow,
        read: impl FnOnce(&Path) -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        self.staging
            .with_file(
                self.blobs.as_ref(),
                &row.data_path,
                &row.dataset_format,
                read,
            )
            .await
    }

    /// Vector tile z/x/y (WebMercatorQuad) of a feature collection or mesh dataset the caller
    /// may read: from the cache, or cut now from the dataset's layer (read and indexed once).
    pub(crate) async fn vector_tile(
        &self,
        caller: &Caller,
        id: DatasetId,
        z: u8,
        x: u32,
        y: u32,
    ) -> Result<(Arc<DatasetRow>, RenderedTile), TileError> {
        let row = self.readable(caller, id).await?;
        if z > VECTOR_LEVEL_MAX || u64::from(x) >= 1_u64 << z || u64::from(y) >= 1_u64 << z {
            return Err(TileError::OutsideMatrix(format!(
                "tile {z}/{x}/{y} is outside WebMercatorQuad (levels 0 to {VECTOR_LEVEL_MAX}, \
                 columns and rows below 2^level)"
            )));
        }
        let content = content_key(&row);
        let key = TileKey {
            content: content.clone(),
            scheme: VECTOR_SCHEME.to_owned(),
            level: z,
            row: y,
            col: x,
            band: BandKey {
                item: 0,
                step: 0,
                layer: 0,
            },
            // Not an encoding of a raster: vector tiles have their own scheme name.
            output: OutputType::default(),
        };
        if let Some(tile) = self.tiles.get(&key) {
            return Ok((row, tile));
        }
        let service = self.clone();
        let loading = row.clone();
        let layer = self
            .layers
            .get_or_load(&content, layer_weight, || async move {
                let catalogue = service.catalogue.clone();
                let format = loading.dataset_format.clone();
                let name = layer_name(&loading.name);
                service
                    .with_file(&loading, move |file| {
                        let set = source::read_features(&catalogue, &format, file)?;
                        let ids = set.ids;
                        Ok(VectorLayer::from_features(
                            &name,
                            set.keys,
                            set.features,
                            ids,
                        ))
                    })
                    .await
                    .map_err(|error| Arc::new(SourceError::Unreadable(error.to_string())))?
                    .map(Arc::new)
                    .map_err(Arc::new)
            })
            .await
            .map_err(|error| source_error(&error))?;
        let bytes = tokio::task::spawn_blocking(move || {
            layer.tile(z, x, y, &basin_tiles::vector::TileOptions::default())
        })
        .await
        .map_err(anyhow::Error::from)?;
        let bytes = Bytes::from(bytes);
        let tile = RenderedTile {
            etag: etag_of(&bytes),
            media_type: VECTOR_MEDIA_TYPE,
            bytes,
        };
        self.tiles.insert(key, tile.clone(), tile.bytes.len());
        Ok((row, tile))
    }

    /// A tile of a scheme: from the memory cache, else from the stored pyramid, else drawn now.
    pub(crate) async fn tile(
        &self,
        tileable: &Arc<Tileable>,
        scheme_id: &str,
        address: &TileAddress,
    ) -> Result<RenderedTile, TileError> {
        let scheme = tileable.scheme(scheme_id)?;
        let matrix = scheme.matrix_set.matrix(&address.matrix).ok_or_else(|| {
            TileError::OutsideMatrix(format!(
                "the scheme {} has no tile matrix {:?}; it has levels 0 to {}",
                scheme.id,
                address.matrix,
                scheme.matrix_set.matrices.len().saturating_sub(1)
            ))
        })?;
        let Some(bounds) = matrix.tile_bounds(address.row, address.col) else {
            return Err(TileError::OutsideMatrix(format!(
                "tile row {} column {} is outside matrix {} ({} rows, {} columns)",
                address.row, address.col, matrix.id, matrix.matrix_height, matrix.matrix_width
            )));
        };
        let band = self.band_of(tileable, scheme, address)?;
        // The scheme's encoding unless the request asks for another; stored tiles are in the
        // scheme's, so another encoding is always drawn (and cached under its own key).
        let output = address.output.unwrap_or(scheme.output);
        if !tileable
            .data_extent(scheme)
            .is_some_and(|extent| extent.intersects(&bounds))
        {
            return self.empty_tile_as(scheme, output).await;
        }
        let key = TileKey {
            content: tileable.tiles_key.clone(),
            scheme: scheme.id.clone(),
            level: matrix.level,
            row: address.row,
            col: address.col,
            band,
            output,
        };
        if let Some(tile) = self.tiles.get(&key) {
            return Ok(tile);
        }
        let position = (address.row, address.col);
        let stored = if output == scheme.output {
            self.stored_tile(tileable, scheme, matrix.level, position, band)
                .await
        } else {
            None
        };
        let bytes = match stored {
            Some(StoredTile::Bytes(bytes)) => bytes,
            Some(StoredTile::Empty) => return self.empty_tile_as(scheme, output).await,
            None => match self
                .draw(tileable, scheme, matrix, band, position, output)
                .await?
            {
                Some(bytes) => bytes,
                None => return self.empty_tile_as(scheme, output).await,
            },
        };
        let tile = RenderedTile {
            etag: etag_of(&bytes),
            media_type: output.media_type(),
            bytes,
        };
        self.tiles.insert(key, tile.clone(), tile.bytes.len());
        Ok(tile)
    }

    /// Draws tile (row, col) of `matrix` from `band` of the data, encoded as `output`: the one
    /// rendering path of tiles asked for and tiles stored. `None` when no pixel has data.
    pub(super) async fn draw(
        &self,
        tileable: &Arc<Tileable>,
        scheme: &Scheme,
        matrix: &basin_tiles::tms::TileMatrix,
        band: BandKey,
        position: (u32, u32),
        output: OutputType,
    ) -> Result<Option<Bytes>, TileError> {
        let row = &tileable.source;
        let raster = self
            .band(
                row,
                tileable,
                band,
                (scheme.aggregation, scheme.shading),
                content_key(row),
            )
            .await?;
        render_tile(raster, tileable, scheme, matrix, position, output).await
    }

    /// The one empty tile of a scheme.
    pub(crate) async fn empty_tile(&self, scheme: &Scheme) -> Result<RenderedTile, TileError> {
        self.empty_tile_as(scheme, scheme.output).await
    }

    /// The empty tile of a scheme's size in encoding `output`.
    async fn empty_tile_as(
        &self,
        scheme: &Scheme,
        output: OutputType,
    ) -> Result<RenderedTile, TileError> {
        let size = scheme.tile_size();
        let bytes = match self.empty.get(&(size, output)) {
            Some(bytes) => bytes,
            None => {
                let encoded =
                    tokio::task::spawn_blocking(move || encode::empty_tile(size, size, output))
                        .await
                        .map_err(anyhow::Error::from)?
                        .map_err(anyhow::Error::from)?;
                let bytes = Bytes::from(encoded);
                self.empty
                    .insert((size, output), bytes.clone(), bytes.len());
                bytes
            }
        };
        Ok(RenderedTile {
            etag: etag_of(&bytes),
            media_type: output.media_type(),
            bytes,
        })
    }

    async fn band(
        &self,
        row: &DatasetRow,
        tileable: &Arc<Tileable>,
        band: BandKey,
        (aggregation, shading): (Aggregation, Shading),
        content: Arc<str>,
    ) -> Result<Arc<Band>, TileError> {
        let key = BandCacheKey {
            content,
            band,
            aggregation,
            shading,
        };
        let service = self.clone();
        let row = row.clone();
        let tileable = tileable.clone();
        let loaded = self
            .bands
            .get_or_load(&key, loaded_weight, || async move {
                let catalogue = service.catalogue.clone();
                let loading = tileable.clone();
                let bytes_max = service.settings.band_cache_bytes;
                service
                    .with_file(&row, move |file| {
                        source::load_band(
                            &catalogue,
                            &loading.description,
                            file,
                            band,
                            aggregation,
                            shading,
                            bytes_max,
                        )
                    })
                    .await
                    .map_err(|error| Arc::new(SourceError::Unreadable(error.to_string())))?
                    .map(Arc::new)
                    .map_err(Arc::new)
            })
            .await;
        loaded.map_err(|error| source_error(&error))
    }

    fn band_of(
        &self,
        tileable: &Tileable,
        scheme: &Scheme,
        address: &TileAddress,
    ) -> Result<BandKey, TileError> {
        let description = &tileable.description;
        let layer = match address.layer.as_deref().map(str::trim) {
            None | Some("") => 0,
            Some(text) => text
                .parse::<usize>()
                .ok()
                .filter(|&layer| layer < description.layers)
                .ok_or_else(|| TileError::Invalid {
                    field: "layer",
                    message: format!(
                        "layer must be one of the dataset's layerIds, 0 to {}",
                        description.layers.saturating_sub(1)
                    ),
                })?,
        };
        let step = match address.time_step.as_deref().map(str::trim) {
            None | Some("") => 0,
            Some(text) => step_of(description, text)?,
        };
        Ok(BandKey {
            item: scheme.item,
            step,
            layer,
        })
    }
}

/// The step named by `text`: one of the dataset's times (any form the API accepts, compared to
/// the microsecond), or a step index.
fn step_of(description: &Description, text: &str) -> Result<usize, TileError> {
    if let Ok(index) = text.parse::<usize>()
        && index < description.steps
    {
        return Ok(index);
    }
    let wanted = crate::http::time::WireTime::parse(text).map(|time| time.0.naive_utc());
    let found = wanted.and_then(|wanted| {
        description
            .times
            .iter()
            .position(|time| same_time(*time, wanted))
    });
    found.ok_or_else(|| TileError::Invalid {
        field: "timeStep",
        message: if description.times.is_empty() {
            format!(
                "the dataset has no calendar time; timeStep may only be a step index below {}",
                description.steps
            )
        } else {
            format!(
                "{text:?} is not a time step of the dataset; its metadata lists the {} timeStamps",
                description.times.len()
            )
        },
    })
}

fn same_time(a: NaiveDateTime, b: NaiveDateTime) -> bool {
    (a - b).num_microseconds().is_some_and(|delta| delta == 0)
}

/// Samples and encodes a tile on the blocking pool; `None` when no pixel has data.
async fn render_tile(
    band: Arc<Band>,
    tileable: &Tileable,
    scheme: &Scheme,
    matrix: &basin_tiles::tms::TileMatrix,
    (tile_row, tile_col): (u32, u32),
    output: OutputType,
) -> Result<Option<Bytes>, TileError> {
    let reprojection = match scheme.scheme_type {
        SchemeType::Wmts => Reprojection::Identity,
        SchemeType::Xyz => tileable.reprojection.clone().ok_or_else(|| {
            TileError::NotTileable("the data cannot be placed in Web Mercator".into())
        })?,
    };
    let (matrix, ramp) = (matrix.clone(), scheme.ramp.clone());
    let rendered = tokio::task::spawn_blocking(move || {
        let values = render::sample_tile(
            band.field.as_ref(),
            &matrix,
            tile_row,
            tile_col,
            &reprojection,
        )?;
        if values.is_empty() {
            return None;
        }
        Some(encode::encode(&values, &ramp, output))
    })
    .await
    .map_err(anyhow::Error::from)?;
    match rendered {
        None => Ok(None),
        Some(encoded) => Ok(Some(Bytes::from(encoded.map_err(anyhow::Error::from)?))),
    }
}

/// The media type of vector tiles.
pub(crate) const VECTOR_MEDIA_TYPE: &str = "application/vnd.mapbox-vector-tile";

/// The deepest level of vector tiles.
pub(crate) const VECTOR_LEVEL_MAX: u8 = 24;

/// The tile cache's scheme name for vector tiles (no raster scheme may take it: scheme ids
/// have no spaces).
const VECTOR_SCHEME: &str = "vector tiles";

/// The layer name in a dataset's vector tiles: its name without the extension.
fn layer_name(dataset_name: &str) -> String {
    match dataset_name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => dataset_name.to_owned(),
    }
}

fn layer_weight(layer: &Layer) -> usize {
    match layer {
        Ok(layer) => layer.approximate_bytes(),
        Err(_) => 256,
    }
}

fn source_error(error: &SourceError) -> TileError {
    match error {
        SourceError::NotTileable(message) => TileError::NotTileable(message.clone()),
        SourceError::Unreadable(message) => TileError::Unreadable(message.clone()),
    }
}

/// (Caller, dataset) access decisions one process keeps.
const ACCESS_ENTRIES_MAX: usize = 100_000;

/// Bytes of stored pyramids' manifests one process keeps (about 64 bytes a stored tile).
const MANIFEST_CACHE_BYTES: usize = 64 << 20;

/// Tiles definitions one process keeps.
const DEFINITION_ENTRIES_MAX: usize = 10_000;

/// Largest tiles definition read or written (32 schemes of 256 colours fit easily).
const DEFINITION_BYTES_MAX: usize = 1 << 20;

/// The dataset's content version: the cache key of everything drawn from it.
fn content_key(row: &DatasetRow) -> Arc<str> {
    Arc::from(row.content_key())
}

fn described_weight(described: &Described) -> usize {
    match described {
        Ok(tileable) => tileable.description.approximate_bytes() + tileable.schemes.len() * 4096,
        Err(_) => 256,
    }
}

fn loaded_weight(loaded: &Loaded) -> usize {
    match loaded {
        Ok(band) => band.bytes,
        Err(_) => 256,
    }
}

/// A strong ETag of tile bytes: their MD5, which is cheap next to encoding them.
fn etag_of(bytes: &[u8]) -> String {
    use md5::Digest;
    let digest = md5::Md5::digest(bytes);
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("\"{hex}\"")
}

/// How EPSG:3857 positions reach the data's system.
fn reprojection_from_mercator(description: &Description) -> Option<Reprojection> {
    description.wgs84_extent?;
    if description.epsg == Some(4326) {
        return Some(Reprojection::WebMercatorToGeographic);
    }
    let crs = description.crs.as_ref()?;
    let to = Projection::of(crs).ok()?;
    let from = Projection::epsg(4326).ok()?;
    Some(Reprojection::WebMercatorThrough(Box::new(
        CrsTransform::new(from, to),
    )))
}

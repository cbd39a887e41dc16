//! Tiles (docs/tiles.md): tiling metadata, WMTS capabilities and
//! GetTile, raster tiles of grids and meshes in Web Mercator or the data's own system, the
//! empty tile, and vector tiles.
//!
//! Rendering is basin-tiles' job; this area decides who may see what, which schemes a dataset
//! has, and keeps what is expensive (described datasets, loaded bands, encoded tiles) in
//! size-bounded memory caches keyed by the dataset's content version, so a map of many users
//! reads each file once and draws each tile once.

mod capabilities;
pub(crate) mod definition;
pub(crate) mod model;
pub(crate) mod pyramid;
pub(crate) mod routes;
mod scheme;
pub(crate) mod service;
mod source;
mod store;

pub(crate) use routes::router;

use chrono::{DateTime, Utc};

use crate::datasets::DatasetChange;
use crate::db::{StoreResult, Tx};
use crate::reactions::Reaction;
use crate::recycle_bin::BinChange;

/// Keeps stored pyramids in step with their datasets: new content of a source requeues the
/// pyramids drawn from it, and a tiles dataset removed for good takes its pyramids' blobs
/// along. Wired at startup (see [`crate::reactions`]).
pub(crate) struct PyramidKeeper;

#[async_trait::async_trait]
impl Reaction<DatasetChange> for PyramidKeeper {
    async fn react_in(
        &self,
        tx: &mut Tx,
        change: &DatasetChange,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        match change {
            DatasetChange::ContentReplaced(dataset) => {
                store::requeue_drawn_from_in(tx, *dataset, at).await?;
            }
            DatasetChange::ContentWrittenAt(data_path) => {
                for source in crate::datasets::live_at_data_path_in(tx, data_path).await? {
                    store::requeue_drawn_from_source_in(tx, source, at).await?;
                }
            }
            DatasetChange::Deleted(_) => {}
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Reaction<BinChange> for PyramidKeeper {
    async fn react_in(
        &self,
        tx: &mut Tx,
        change: &BinChange,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        match change {
            BinChange::DatasetPurged {
                tenant,
                dataset,
                format,
            } => {
                if format == definition::TILES_FORMAT
                    && let Some(prefix) = pyramid::dataset_prefix(*tenant, *dataset)
                {
                    let every_blob = format!("{}/", prefix.key());
                    crate::recycle_bin::queue_blob_removal_in(tx, &every_blob, at).await?;
                }
                Ok(())
            }
        }
    }
}

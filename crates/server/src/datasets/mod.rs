//! Datasets (docs/datasets.md): the files and data placed in projects. Records live in the
//! metadata store, bytes in the blob store under `dataPath`. Deleting moves a dataset to the
//! recycle bin (a `deleted_at` column) and hides it from every regular call.

pub(crate) mod checksums;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;

use crate::ids::DatasetId;
use model::DatasetRow;

/// A change to datasets that other areas react to inside its transaction (see
/// [`crate::reactions`]): the recycle bin records deleted datasets, and tiles requeue the
/// pyramids drawn from content that changed.
#[derive(Debug)]
pub(crate) enum DatasetChange {
    /// The dataset `row` (as saved, with its deletion time) was just soft-deleted.
    Deleted(Box<DatasetRow>),
    /// A transfer replaced the content of a dataset (an update or an append).
    ContentReplaced(DatasetId),
    /// New content was written in place at a blob key, the content of every live dataset
    /// stored there.
    ContentWrittenAt(String),
}

/// The blob container that holds dataset content (`datasets/{tenant}/{dataset}/{file}`).
pub(crate) const DATASETS_CONTAINER: &str = "datasets";

//! Datasets (docs/datasets.md): the files and data placed in projects. Records live in the
//! metadata store, bytes in the blob store under `dataPath`. Deleting moves a dataset to the
//! recycle bin (a `deleted_at` column) and hides it from every regular call.

pub(crate) mod checksums;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;

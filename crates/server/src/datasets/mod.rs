//! Datasets (wire-contract 4): the files and data placed in projects. Records live in the
//! metadata store, bytes in the blob store under `dataPath`. Deleting moves a dataset to the
//! recycle bin (a `deleted_at` column) and hides it from every regular call.

pub mod model;
pub mod routes;
pub mod service;
mod store;

pub use routes::router;

//! OGC API - Environmental Data Retrieval (docs/edr.md): answers from the grids and meshes of
//! the datasets a caller may read, without downloading them. Each readable dataset whose
//! reader gives a grid or a mesh is a collection (its id is the dataset id); its queries are
//! answered by basin-edr over the stored content.
//!
//! This area decides who may query what, keeps described datasets (headers, mesh indexes) in
//! a size-bounded cache keyed by content version, and stages content as a local file for the
//! readers (a hard link for the folder store).

pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;

pub(crate) use routes::router;

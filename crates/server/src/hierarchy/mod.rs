//! The bulk hierarchy endpoint (docs/datasets.md#bulk-hierarchy): one request maps
//! paths to subprojects (folders) and datasets (files) below a project and creates or deletes
//! them, all or nothing. Files come back with a signed URL to upload their content.

pub(crate) mod routes;
pub(crate) mod service;

pub(crate) use routes::router;

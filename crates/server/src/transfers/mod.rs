//! Transfers (docs/conversion.md, docs/blobs.md): uploads to signed URLs, and the operations
//! that queue an import, export, conversion, update or append as a transfer row, monitored
//! until it ends. Workers ([`execution`]) run the queued transfers.

pub(crate) mod details;
pub(crate) mod execution;
pub(crate) mod model;
mod multipart;
pub(crate) mod naming;
pub(crate) mod plan;
pub(crate) mod records;
pub(crate) mod routes;
pub(crate) mod service;
pub(crate) mod staged;
pub(crate) mod start;
pub(crate) mod store;
pub(crate) mod uploads;

pub(crate) use routes::{router, upload_router};

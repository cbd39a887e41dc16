//! Identity (docs/authentication.md): tenants (sites), users, tenant membership and API
//! keys; `principal/me`, `tenant/my`; the administration API for BackOffice and tenant
//! owners; and the bootstrap of an empty store.

pub(crate) mod bootstrap;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod storage;
mod store;

pub(crate) use routes::router;
pub(crate) use storage::{StorageMeter, StorageMeters};

//! Identity (spec part 5, wire-contract 7): tenants (sites), users, tenant membership and API
//! keys; `principal/me`, `tenant/my`; the administration API for BackOffice and tenant
//! owners; and the bootstrap of an empty store.

pub mod bootstrap;
pub mod model;
pub mod routes;
pub mod service;
mod store;

pub use routes::router;

//! Projects and subprojects (spec 2.5 and 4.7, wire-contract 3): the project tree of a
//! tenant, its members, access levels and the caller's capabilities.

pub mod access;
pub mod hierarchy_path;
pub mod model;
pub mod routes;
pub mod service;
mod store;

pub use routes::router;

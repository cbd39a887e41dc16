//! Projects and subprojects (docs/projects.md, docs/permissions.md): the project tree of a
//! tenant, its members, access levels and the caller's capabilities.

pub(crate) mod access;
pub(crate) mod hierarchy_path;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;

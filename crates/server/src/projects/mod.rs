//! Projects and subprojects (docs/projects.md, docs/permissions.md): the project tree of a
//! tenant, its members, access levels and the caller's capabilities.

pub(crate) mod access;
pub(crate) mod fields;
pub(crate) mod hierarchy_path;
pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;
mod store;

pub(crate) use routes::router;

use model::ProjectRow;

/// A change to projects that other areas react to inside its transaction (see
/// [`crate::reactions`]): the recycle bin records deleted projects.
#[derive(Debug)]
pub(crate) enum ProjectChange {
    /// `row` was just soft-deleted with everything below it; `levels_max` bounds walks of its
    /// subtree.
    Deleted {
        /// The project as saved, with its deletion time and author.
        row: ProjectRow,
        /// The deepest tree the limits allow.
        levels_max: i64,
    },
}

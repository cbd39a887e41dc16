//! Answers from model results without downloading them: the queries of OGC API -
//! Environmental Data Retrieval (EDR) over the grids, meshes and time series basin-formats
//! reads, and the CoverageJSON answers they give.
//!
//! Why a crate of its own: the queries are the part of Basin a hydrologist checks against MIKE
//! IO and GDAL value for value, so they are written and tested here without HTTP, tenants or a
//! database (the server's `edr` area adds those). Everything here is synchronous work on a
//! local file; callers run it on a blocking pool.
//!
//! The flow of a query:
//! 1. [`Dataset::describe`] reads a file's header once (geometry, items, time axis, coordinate
//!    system) and indexes a mesh's elements; callers keep it for as long as the content lasts.
//! 2. A query ([`position::PositionQuery`]) is parsed from the request's text parameters
//!    ([`select`] for `datetime` and `parameter-name`, [`crs`] for `crs`).
//! 3. It is answered against the described dataset and the file, reading only the items and
//!    steps it selects ([`read`]), into a [`coverage::Coverages`].
//! 4. [`covjson`] writes the answer as CoverageJSON.

pub mod area;
pub mod coverage;
pub mod covjson;
pub mod crs;
pub mod dataset;
mod dfs_values;
pub mod error;
pub mod extent;
pub mod nearest;
pub mod position;
pub mod read;
pub mod region;
pub mod rows;
pub mod sample;
pub mod select;
pub mod series;
pub mod statistics;
pub mod tabular;
pub mod trajectory;

pub use dataset::{Dataset, Space};
pub use error::{EdrError, EdrResult};

/// How much one query may ask for. Past a limit the query is refused before anything is read,
/// with a message saying which limit and by how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Positions in one query's geometry (the points of a MULTIPOINT, the vertices of a line
    /// or polygon).
    pub positions_max: usize,
    /// Values in one answer: positions (or cells) x parameters x steps.
    pub values_max: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            positions_max: 1_000,
            values_max: 10_000_000,
        }
    }
}

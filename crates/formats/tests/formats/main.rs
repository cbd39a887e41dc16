//! The tests of basin-formats through its public API. One binary (see `autotests = false`),
//! one module per format plus the catalogue, the adapters between data kinds and the
//! coordinate systems; fixtures are in `tests/fixtures/`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed assumption should abort the test loudly"
)]

mod adapt;
mod append;
mod ascii_grid;
mod catalogue;
mod crs;
mod dfs0;
mod dfs_container;
mod dfs_eum;
mod dfs_grid;
mod dfs_lazy;
mod dfsu;
mod geojson;
mod geotiff;
mod helpers;
mod inspect;
mod mesh_file;
mod shapefile;
mod shapefile_rings;
mod transform;
mod vtu;
mod xyz;

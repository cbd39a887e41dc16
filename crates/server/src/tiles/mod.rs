//! Tiles (docs/tiles.md): tiling metadata, WMTS capabilities and
//! GetTile, raster tiles of grids and meshes in Web Mercator or the data's own system, the
//! empty tile, and vector tiles.
//!
//! Rendering is basin-tiles' job; this area decides who may see what, which schemes a dataset
//! has, and keeps what is expensive (described datasets, loaded bands, encoded tiles) in
//! size-bounded memory caches keyed by the dataset's content version, so a map of many users
//! reads each file once and draws each tile once.

mod cache;
mod capabilities;
pub(crate) mod definition;
pub(crate) mod model;
pub(crate) mod pyramid;
pub(crate) mod routes;
mod scheme;
pub(crate) mod service;
mod source;
pub(crate) mod store;

pub(crate) use routes::router;

//! GIS (docs/gis.md; `CrsTransformation` in docs/conversion.md#the-request): the coordinate
//! systems Basin knows (the EPSG registry that conversions use for `inputSrid` and
//! `outputSrid`) and the reprojection of WKT geometries between them. Clients call it as the
//! platform's `gis` service (`api-version` 2). No store: the registry is compiled in.
//! docs/gis.md describes the endpoints.

pub(crate) mod model;
pub(crate) mod routes;
pub(crate) mod service;

pub(crate) use routes::router;

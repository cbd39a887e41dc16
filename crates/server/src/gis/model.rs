//! Request and response bodies of the GIS endpoints.

use basin_formats::crs::CrsDefinition;
use serde::{Deserialize, Serialize};

use crate::gis::service::{AUTHORITY, Reprojected};

/// A coordinate system of the registry.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CoordinateSystemDto {
    /// The SRID: the EPSG code.
    #[schema(example = 25832)]
    pub(crate) id: u32,
    /// The name, e.g. `ETRS89 / UTM zone 32N`.
    pub(crate) name: &'static str,
    /// Always `EPSG`.
    #[schema(example = "EPSG")]
    pub(crate) authority: &'static str,
    /// OGC WKT (version 1) definition.
    pub(crate) wkt: &'static str,
    /// proj4 definition.
    pub(crate) proj4_string: &'static str,
}

impl From<&'static CrsDefinition> for CoordinateSystemDto {
    fn from(definition: &'static CrsDefinition) -> Self {
        Self {
            id: definition.code,
            name: definition.name,
            authority: AUTHORITY,
            wkt: definition.wkt,
            proj4_string: definition.proj4,
        }
    }
}

/// Geometries to reproject.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReprojectRequest {
    /// SRID (EPSG code) of the geometries as sent.
    #[schema(example = 4326)]
    pub(crate) input_srid: i64,
    /// SRID (EPSG code) to reproject to.
    #[schema(example = 25832)]
    pub(crate) output_srid: i64,
    /// WKT geometries: POINT, MULTIPOINT, LINESTRING, MULTILINESTRING, POLYGON or
    /// MULTIPOLYGON, optionally Z, M or ZM, or EMPTY. Geographic systems are longitude first.
    #[schema(example = json!(["POINT (9 56)", "LINESTRING (9 56, 10 55)"]))]
    pub(crate) geometries: Vec<String>,
}

/// The geometries in the output system: the request's shape, so that swapping the SRIDs of a
/// response makes the request that reverses it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReprojectResponse {
    /// SRID of the input, as requested.
    #[schema(example = 4326)]
    pub(crate) input_srid: u32,
    /// SRID of the geometries below.
    #[schema(example = 25832)]
    pub(crate) output_srid: u32,
    /// Canonical WKT (`POINT Z (x y z)`, `MULTIPOINT ((x y), ...)`), in the order sent; z and
    /// m pass through unchanged; numbers are the shortest text that reads back exactly.
    #[schema(example = json!(["POINT (500000 6206079.587128013)", "LINESTRING (500000 6206079.587128013, 563967.4231035684 6095248.708113627)"]))]
    pub(crate) geometries: Vec<String>,
}

impl From<Reprojected> for ReprojectResponse {
    fn from(reprojected: Reprojected) -> Self {
        Self {
            input_srid: reprojected.input_srid,
            output_srid: reprojected.output_srid,
            geometries: reprojected.geometries,
        }
    }
}

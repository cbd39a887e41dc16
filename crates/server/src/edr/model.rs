//! The documents of the EDR endpoints: the landing page, the conformance declaration, the
//! collection list and one collection's metadata, as OGC API - EDR 1.1 shapes them (snake_case
//! member names, as the standard writes them).

use std::collections::BTreeMap;

use basin_edr::coverage::Parameter;
use basin_edr::crs::{CRS84_URI, epsg_uri};
use basin_edr::{Dataset, Space, extent};
use serde::Serialize;

use crate::datasets::model::DatasetRow;

/// The conformance classes Basin's EDR endpoints implement.
pub(crate) const CONFORMANCE: [&str; 9] = [
    "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core",
    "http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
    "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/core",
    "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/collections",
    "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/json",
    "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/geojson",
    "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/covjson",
    "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/oas30",
    "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/queries",
];

/// The WKT of CRS84, for `crs_details`.
const CRS84_WKT: &str = "GEOGCS[\"WGS 84\",DATUM[\"WGS_1984\",SPHEROID[\"WGS 84\",6378137,298.257223563]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433],AXIS[\"Longitude\",EAST],AXIS[\"Latitude\",NORTH]]";

/// The output formats of queries.
pub(crate) const OUTPUT_FORMATS: [&str; 3] = ["CoverageJSON", "GeoJSON", "CSV"];

/// A link.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Link {
    /// The target.
    pub(crate) href: String,
    /// How it relates.
    pub(crate) rel: String,
    /// Its media type.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub(crate) media_type: Option<String>,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
}

impl Link {
    /// A link to `href` of `rel` with a media type and a title.
    pub(crate) fn new(href: String, rel: &str, media_type: &str, title: &str) -> Self {
        Self {
            href,
            rel: rel.to_owned(),
            media_type: Some(media_type.to_owned()),
            title: Some(title.to_owned()),
        }
    }
}

/// The landing page.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct LandingDto {
    /// Title.
    pub(crate) title: String,
    /// What this is.
    pub(crate) description: String,
    /// The API definition, the conformance declaration and the collections.
    pub(crate) links: Vec<Link>,
}

/// The conformance declaration.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ConformanceDto {
    /// The classes implemented.
    #[serde(rename = "conformsTo")]
    pub(crate) conforms_to: Vec<String>,
}

/// A page of collections.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct CollectionsDto {
    /// This page, and the next when there is one.
    pub(crate) links: Vec<Link>,
    /// The collections.
    pub(crate) collections: Vec<CollectionDto>,
}

/// One collection: a dataset whose values can be queried.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct CollectionDto {
    /// The dataset id.
    pub(crate) id: String,
    /// The dataset name.
    pub(crate) title: String,
    /// The dataset description.
    pub(crate) description: String,
    /// This collection and its queries.
    pub(crate) links: Vec<Link>,
    /// Where and when the data is.
    pub(crate) extent: ExtentDto,
    /// The queries it answers, with their links.
    #[schema(value_type = Object)]
    pub(crate) data_queries: BTreeMap<String, serde_json::Value>,
    /// The systems positions may be given in.
    pub(crate) crs: Vec<String>,
    /// The formats answers come in.
    pub(crate) output_formats: Vec<String>,
    /// The parameters (items), by the item's name as the file stores it.
    #[schema(value_type = Object)]
    pub(crate) parameter_names: BTreeMap<String, serde_json::Value>,
}

/// Where and when a collection's data is.
#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
pub(crate) struct ExtentDto {
    /// The bounding box: in CRS84 when the system can be transformed, else in the dataset's
    /// own coordinates.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub(crate) spatial: Option<serde_json::Value>,
    /// The first and last step and the steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub(crate) temporal: Option<serde_json::Value>,
    /// The vertical levels of a grid with several layers (DFS3), which `z` selects.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub(crate) vertical: Option<serde_json::Value>,
}

/// The queries every collection answers: name, title and what it gives.
const QUERIES: [(&str, &str, &str); 6] = [
    (
        "position",
        "Position query",
        "The values at one POINT or several (MULTIPOINT) in coords",
    ),
    (
        "area",
        "Area query",
        "The values of the cells or elements whose centres a POLYGON or MULTIPOLYGON in coords \
         holds, or their statistics",
    ),
    (
        "cube",
        "Cube query",
        "The values of the cells or elements whose centres the box in bbox holds",
    ),
    (
        "radius",
        "Radius query",
        "The values of the cells or elements whose centres are within a distance of a POINT",
    ),
    (
        "corridor",
        "Corridor query",
        "The values of the cells or elements whose centres are within half a width of a \
         LINESTRING",
    ),
    (
        "trajectory",
        "Trajectory query",
        "The values along a LINESTRING, at each position's time when it has one (M)",
    ),
];

/// The queries of a time series collection.
const SERIES_QUERIES: [(&str, &str, &str); 1] = [(
    "locations",
    "Locations query",
    "The time series' one location (series) and its values",
)];

/// The collection of `row`, described as `dataset`, its links under `base`
/// (`.../api/edr/collections/{id}`).
pub(crate) fn collection(row: &DatasetRow, dataset: &Dataset, base: &str) -> CollectionDto {
    let href = format!("{base}/{}", row.id);
    let native_epsg = dataset
        .crs
        .as_ref()
        .and_then(basin_formats::crs::resolve_epsg);
    let crs84 = extent::crs84(dataset);
    let (crs, crs_details) = systems(dataset, crs84.is_some(), native_epsg);
    let queries: &[(&str, &str, &str)] = if matches!(dataset.space, Space::Series) {
        &SERIES_QUERIES
    } else {
        &QUERIES
    };
    let data_queries = queries
        .iter()
        .map(|(query, title, description)| {
            let link = serde_json::json!({
                "link": {
                    "href": format!("{href}/{query}"),
                    "rel": "data",
                    "title": title,
                    "templated": false,
                    "variables": {
                        "title": title,
                        "description": description,
                        "query_type": query,
                        "output_formats": OUTPUT_FORMATS,
                        "default_output_format": OUTPUT_FORMATS[0],
                        "crs_details": crs_details,
                    }
                }
            });
            ((*query).to_owned(), link)
        })
        .collect();
    let mut links = vec![Link::new(
        href.clone(),
        "self",
        "application/json",
        "This collection",
    )];
    links.extend(queries.iter().map(|(query, title, _)| {
        Link::new(
            format!("{href}/{query}"),
            "data",
            basin_edr::covjson::MEDIA_TYPE,
            title,
        )
    }));
    CollectionDto {
        id: row.id.to_string(),
        title: row.name.clone(),
        description: row.description.clone(),
        links,
        extent: extent_of(dataset, crs84, native_epsg),
        data_queries,
        crs,
        output_formats: OUTPUT_FORMATS
            .iter()
            .map(|format| (*format).to_owned())
            .collect(),
        parameter_names: dataset
            .items
            .iter()
            .map(|item| (item.name.clone(), parameter(&Parameter::of(item))))
            .collect(),
    }
}

/// The systems positions may be given in, as URIs and as `crs_details` (name and WKT).
fn systems(
    dataset: &Dataset,
    crs84: bool,
    native_epsg: Option<u32>,
) -> (Vec<String>, Vec<serde_json::Value>) {
    let mut crs = Vec::new();
    let mut crs_details = Vec::new();
    if matches!(dataset.space, Space::Series) {
        return (crs, crs_details);
    }
    if crs84 {
        crs.push(CRS84_URI.to_owned());
        crs_details.push(serde_json::json!({"crs": "CRS84", "wkt": CRS84_WKT}));
    }
    if let Some(code) = native_epsg {
        crs.push(epsg_uri(code));
        let wkt = dataset
            .crs
            .as_ref()
            .and_then(basin_formats::crs::wkt_of)
            .unwrap_or_default();
        crs_details.push(serde_json::json!({"crs": format!("EPSG:{code}"), "wkt": wkt}));
    }
    if crs.is_empty() {
        crs.push("native".to_owned());
        crs_details.push(serde_json::json!({"crs": "native", "wkt": ""}));
    }
    (crs, crs_details)
}

fn extent_of(
    dataset: &Dataset,
    crs84: Option<extent::BoundingBox>,
    native_epsg: Option<u32>,
) -> ExtentDto {
    let spatial = match (crs84, extent::native(dataset)) {
        (Some(bbox), native) => {
            let mut spatial = serde_json::json!({"bbox": [bbox], "crs": CRS84_URI});
            if let (Some(native), Some(code)) = (native, native_epsg) {
                spatial["native"] = serde_json::json!({"bbox": [native], "crs": epsg_uri(code)});
            }
            Some(spatial)
        }
        (None, Some(native)) => Some(serde_json::json!({"bbox": [native], "crs": "native"})),
        (None, None) => None,
    };
    let temporal = extent::temporal(&dataset.time).map(|temporal| {
        serde_json::json!({
            "interval": [[
                basin_edr::covjson::iso_time(temporal.start),
                basin_edr::covjson::iso_time(temporal.end),
            ]],
            "values": temporal.values,
            "trs": "TIMECRS[\"DateTime\",TDATUM[\"Gregorian Calendar\"],CS[TemporalDateTime,1],AXIS[\"Time (T)\",future]]",
        })
    });
    let vertical = dataset.levels().map(|levels| {
        let low = levels.iter().copied().fold(f64::INFINITY, f64::min);
        let high = levels.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        serde_json::json!({
            "interval": [[low, high]],
            "values": levels,
            "vrs": "VERTCS[\"the dataset's own z\"]",
        })
    });
    ExtentDto {
        spatial,
        temporal,
        vertical,
    }
}

/// A parameter as `parameter_names` lists it (a CoverageJSON parameter object).
fn parameter(parameter: &Parameter) -> serde_json::Value {
    let mut value = serde_json::json!({
        "type": "Parameter",
        "id": parameter.id,
        "description": {"en": parameter.id},
        "observedProperty": {"label": {"en": parameter.observed}},
        "data-type": "float",
    });
    if !parameter.unit_symbol.is_empty() || !parameter.unit_label.is_empty() {
        let label = if parameter.unit_label.is_empty() {
            &parameter.unit_symbol
        } else {
            &parameter.unit_label
        };
        value["unit"] =
            serde_json::json!({"label": {"en": label}, "symbol": parameter.unit_symbol});
    }
    value
}

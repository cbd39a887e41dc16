//! The coordinate systems a query's positions may be written in (the `crs` parameter): OGC's
//! CRS84 (longitude, latitude on WGS 84; the default) and the dataset's own EPSG code. A
//! dataset whose coordinate system Basin cannot transform from takes positions in its own
//! coordinates only, and says so in its collection.

use basin_formats::crs::{CrsTransform, Projection, resolve_epsg};

use crate::dataset::Dataset;
use crate::error::{EdrError, EdrResult};

/// OGC's URI of CRS84.
pub const CRS84_URI: &str = "http://www.opengis.net/def/crs/OGC/1.3/CRS84";

/// The system a query's positions are in, and how they reach the dataset's own coordinates.
#[derive(Debug, Clone)]
pub struct QueryCrs {
    /// The identifier answers repeat (a URI).
    pub uri: String,
    /// CRS84 to the dataset's system; `None` when the positions are already in it.
    to_native: Option<CrsTransform>,
    /// Its inverse.
    from_native: Option<CrsTransform>,
}

impl QueryCrs {
    /// The system `requested` names for `dataset` (CRS84 when `None`).
    pub fn for_dataset(dataset: &Dataset, requested: Option<&str>) -> EdrResult<Self> {
        let native_epsg = dataset.crs.as_ref().and_then(resolve_epsg);
        let projection = dataset
            .crs
            .as_ref()
            .and_then(|crs| Projection::of(crs).ok());
        let Some(projection) = projection else {
            return match requested {
                None => Ok(Self {
                    uri: "native".to_owned(),
                    to_native: None,
                    from_native: None,
                }),
                Some(text) => Err(EdrError::invalid(
                    "crs",
                    format!(
                        "this collection's coordinate system is not one Basin can transform, so \
                         positions are taken in its own coordinates and {text:?} cannot be used; \
                         leave crs out"
                    ),
                )),
            };
        };
        match requested.map(identify) {
            None | Some(Some(Identified::Crs84)) => {
                let wgs84 = Projection::epsg(4326)
                    .map_err(|error| EdrError::Unreadable(error.to_string()))?;
                let to_native = CrsTransform::new(wgs84, projection);
                Ok(Self {
                    uri: CRS84_URI.to_owned(),
                    from_native: Some(to_native.inverse()),
                    to_native: Some(to_native),
                })
            }
            Some(Some(Identified::Epsg(code))) if Some(code) == native_epsg => Ok(Self {
                uri: epsg_uri(code),
                to_native: None,
                from_native: None,
            }),
            _ => Err(EdrError::invalid(
                "crs",
                format!(
                    "{:?} is not a coordinate system of this collection; it takes CRS84{}",
                    requested.unwrap_or_default(),
                    native_epsg
                        .map(|code| format!(" and EPSG:{code}"))
                        .unwrap_or_default()
                ),
            )),
        }
    }

    /// `(x, y)` of the query in the dataset's own coordinates; `None` when it cannot be
    /// transformed (outside the projection's domain).
    pub fn to_native(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        match &self.to_native {
            None => (x.is_finite() && y.is_finite()).then_some((x, y)),
            Some(transform) => transform.try_apply(x, y),
        }
    }

    /// `(x, y)` in the dataset's own coordinates, in the query's system; `None` when it
    /// cannot be transformed.
    pub fn from_native(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        match &self.from_native {
            None => (x.is_finite() && y.is_finite()).then_some((x, y)),
            Some(transform) => transform.try_apply(x, y),
        }
    }

    /// The URI of the dataset's own system (`native` when it has no EPSG code).
    pub fn native_uri(dataset: &Dataset) -> String {
        dataset
            .crs
            .as_ref()
            .and_then(resolve_epsg)
            .map_or_else(|| "native".to_owned(), epsg_uri)
    }

    /// Whether positions are longitude and latitude (CRS84).
    pub fn is_crs84(&self) -> bool {
        self.uri == CRS84_URI
    }
}

/// The URI of EPSG `code`.
pub fn epsg_uri(code: u32) -> String {
    format!("http://www.opengis.net/def/crs/EPSG/0/{code}")
}

enum Identified {
    Crs84,
    Epsg(u32),
}

/// Reads the ways clients name a system: `CRS84`, `OGC:CRS84`, its URI, `EPSG:n`, the EPSG
/// URI (http or https, any case of the scheme and host).
fn identify(text: &str) -> Option<Identified> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let path = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
        .and_then(|rest| rest.strip_prefix("www.opengis.net/def/crs/"));
    if let Some(path) = path {
        if path == "ogc/1.3/crs84" {
            return Some(Identified::Crs84);
        }
        return path
            .strip_prefix("epsg/0/")
            .and_then(|code| code.parse().ok())
            .map(Identified::Epsg);
    }
    if lower == "crs84" || lower == "ogc:crs84" {
        return Some(Identified::Crs84);
    }
    lower
        .strip_prefix("epsg:")
        .and_then(|code| code.parse().ok())
        .map(Identified::Epsg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_names_of_crs84_and_epsg_codes_are_read() {
        for text in [
            "CRS84",
            "OGC:CRS84",
            "http://www.opengis.net/def/crs/OGC/1.3/CRS84",
            "HTTPS://WWW.OPENGIS.NET/def/crs/OGC/1.3/CRS84",
        ] {
            assert!(matches!(identify(text), Some(Identified::Crs84)), "{text}");
        }
        for text in ["EPSG:32632", "http://www.opengis.net/def/crs/EPSG/0/32632"] {
            assert!(
                matches!(identify(text), Some(Identified::Epsg(32632))),
                "{text}"
            );
        }
        for text in ["", "EPSG:", "EPSG:x", "WGS84", "http://example.com/crs/1"] {
            assert!(identify(text).is_none(), "{text}");
        }
    }
}

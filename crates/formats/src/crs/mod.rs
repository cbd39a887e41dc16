//! Coordinate reference systems: what a dataset's coordinates mean, an EPSG registry
//! (code -> name, WKT, proj4) and transformations between systems with proj4rs.
//!
//! Files describe their CRS in many ways (GeoTIFF GeoKeys with an EPSG code, a .prj WKT,
//! a MIKE projection string such as `UTM-32` or a WKT, GeoJSON's implied WGS 84). The model
//! keeps what the file said in [`Crs`]; the registry resolves it to something proj4rs can use.

/// A coordinate reference system as a file or a user gave it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Crs {
    /// An EPSG code (the SRID of the interface).
    Epsg(u32),
    /// An OGC WKT definition (ESRI .prj, MIKE files, GeoTIFF citation).
    Wkt(String),
    /// A proj4 definition string.
    Proj4(String),
    /// A name without a definition this library understands, e.g. MIKE's `NON-UTM` for local
    /// coordinates. Kept so that a round trip preserves it.
    Named(String),
}

impl Crs {
    /// The EPSG code when the CRS is given as one.
    pub fn epsg(&self) -> Option<u32> {
        match self {
            Self::Epsg(code) => Some(*code),
            Self::Wkt(_) | Self::Proj4(_) | Self::Named(_) => None,
        }
    }
}

mod identify;
mod names;
mod project;
pub(crate) mod sink;
mod tables;
mod warp;
pub(crate) mod wkt;

pub use project::{CrsTransform, Projection, proj4_of};
pub use warp::WARP_CELLS_MAX;

use crate::error::FormatResult;
use crate::model::DatasetSink;

/// The registry entry of an EPSG code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrsDefinition {
    /// The EPSG code.
    pub code: u32,
    /// The name, e.g. `WGS 84 / UTM zone 32N` (the first quoted string of the WKT).
    pub name: &'static str,
    /// proj4 definition.
    pub proj4: &'static str,
    /// OGC WKT definition.
    pub wkt: &'static str,
}

/// The registry entry of `code`, or `None` for a code the registry does not know. The
/// registry is the EPSG subset of the `crs-definitions` crate (about 6,000 codes below 65536:
/// every geographic and projected system proj4 can express).
pub fn definition(code: u32) -> Option<CrsDefinition> {
    let code16 = u16::try_from(code).ok()?;
    let def = crs_definitions::from_code(code16)?;
    Some(CrsDefinition {
        code,
        name: names::wkt_name(def.wkt).unwrap_or_default(),
        proj4: def.proj4,
        wkt: def.wkt,
    })
}

/// Every registry entry, by ascending code: what a coordinate-system list searches. Built on
/// first use (the registry is only reachable code by code, so building means asking for every
/// code below 65536 once, a few milliseconds) and kept for the life of the process.
pub fn definitions() -> &'static [CrsDefinition] {
    static DEFINITIONS: std::sync::OnceLock<Vec<CrsDefinition>> = std::sync::OnceLock::new();
    DEFINITIONS.get_or_init(|| (0..=u32::from(u16::MAX)).filter_map(definition).collect())
}

/// True for a geographic (longitude/latitude) system, false for a projected one, `None` for
/// an unknown code.
pub fn is_geographic(code: u32) -> Option<bool> {
    definition(code)
        .map(|def| def.proj4.contains("+proj=longlat") || def.proj4.contains("+proj=latlong"))
}

/// The EPSG code a CRS stands for, when it can be told:
/// - given as a code;
/// - a WKT whose outermost `AUTHORITY["EPSG", ...]` / `ID["EPSG", ...]` names one, whose
///   definition (datum, projection method, parameters, units) matches exactly one registry
///   system (ESRI `.prj` files: see `identify.rs`), or whose name matches a registry name
///   (ESRI's `WGS_1984_UTM_Zone_32N` is EPSG:32632) or a MIKE projection name (`UTM-32`);
/// - a name: a MIKE projection name (`UTM-32` is EPSG:32632, `LONG/LAT` EPSG:4326), a registry
///   name, or `EPSG:<code>`.
///
/// The code is not checked against the registry; [`definition`] does that.
pub fn resolve_epsg(crs: &Crs) -> Option<u32> {
    match crs {
        Crs::Epsg(code) => Some(*code),
        Crs::Wkt(text) => {
            let node = wkt::parse(text)?;
            node.epsg()
                .or_else(|| identify::identify(&node))
                .or_else(|| {
                    let name = node.name()?;
                    names::code_by_name(name).or_else(|| names::mike_code(name))
                })
        }
        Crs::Proj4(_) => None,
        Crs::Named(name) => names::mike_code(name)
            .or_else(|| {
                let (authority, code) = name.trim().split_once(':')?;
                authority
                    .eq_ignore_ascii_case("EPSG")
                    .then(|| code.trim().parse().ok())
                    .flatten()
            })
            .or_else(|| names::code_by_name(name)),
    }
}

/// Builds the index that identifies WKT definitions by their parameters (a few hundred
/// milliseconds in a debug build, tens in a release one), which [`resolve_epsg`] otherwise
/// builds on first use.
pub fn prepare_identification() {
    identify::prepare();
}

/// A WKT for writing a `.prj` or a GeoTIFF citation, when one is known: the WKT itself, or
/// the registry's WKT of an EPSG code or a name [`resolve_epsg`] understands.
pub fn wkt_of(crs: &Crs) -> Option<String> {
    match crs {
        Crs::Wkt(wkt) => Some(wkt.clone()),
        Crs::Epsg(_) | Crs::Named(_) => resolve_epsg(crs)
            .and_then(definition)
            .map(|def| def.wkt.to_owned()),
        Crs::Proj4(_) => None,
    }
}

/// Checks that the SRIDs of a CRS transformation are in the registry and usable by proj4rs,
/// so that a request with an unknown code fails before any work.
pub fn validate_srids(input_srid: Option<u32>, output_srid: u32) -> FormatResult<()> {
    for code in input_srid.into_iter().chain([output_srid]) {
        if definition(code).is_none() {
            return Err(project::unknown_code(code));
        }
        // A registry entry proj4rs cannot build (a grid-based datum shift) fails here too,
        // not after the reader has started.
        Projection::epsg(code)?;
    }
    Ok(())
}

/// Wraps `sink` in a reprojection from the data's CRS (or `input_srid`, which overrides it)
/// to `output_srid`. Every kind of data is handled: feature, point and mesh node positions
/// are transformed, grids are warped like `gdalwarp -r near`, time series pass through. The
/// header's CRS becomes `Crs::Epsg(output_srid)`. Data without a CRS and without
/// `input_srid` fails at `begin`.
pub fn transform_sink<'a>(
    sink: Box<dyn DatasetSink + 'a>,
    input_srid: Option<u32>,
    output_srid: u32,
) -> FormatResult<Box<dyn DatasetSink + 'a>> {
    validate_srids(input_srid, output_srid)?;
    Ok(Box::new(sink::TransformSink::new(
        sink,
        input_srid,
        output_srid,
    )?))
}

/// MIKE's projection name for local coordinates, which have no coordinate system.
pub const MIKE_NON_UTM: &str = "NON-UTM";

/// The projection string MIKE files (.mesh, DFS) carry for a CRS: a MIKE name as given, a WKT
/// on one line, or `NON-UTM` when there is none (with a note when a CRS had no WKT).
pub fn mike_projection(crs: Option<&Crs>, notes: &mut Vec<String>) -> String {
    let Some(crs) = crs else {
        return MIKE_NON_UTM.to_owned();
    };
    if let Crs::Named(name) = crs
        && !name.trim().is_empty()
        && !name.contains(['\n', '\r'])
    {
        return name.trim().to_owned();
    }
    match wkt_of(crs) {
        Some(wkt) => wkt.split_whitespace().collect::<Vec<_>>().join(" "),
        None => {
            notes.push(format!(
                "the coordinate system {crs:?} has no WKT; written as {MIKE_NON_UTM}"
            ));
            MIKE_NON_UTM.to_owned()
        }
    }
}

/// The CRS a MIKE projection string (.mesh, DFS) stands for: a WKT when it looks like one,
/// else a name (`UTM-32`, `LONG/LAT`, `NON-UTM`, which [`resolve_epsg`] understands where it
/// can). `srid` replaces a name or a missing projection, never a WKT: a file that states its
/// system fully is believed over a parameter.
pub fn from_mike_projection(projection: &str, srid: Option<u32>) -> Option<Crs> {
    let projection = projection.trim();
    if projection.contains('[') {
        return Some(Crs::Wkt(projection.to_owned()));
    }
    if let Some(code) = srid {
        return Some(Crs::Epsg(code));
    }
    (!projection.is_empty()).then(|| Crs::Named(projection.to_owned()))
}

//! Identifying a WKT 1 coordinate system without an authority code (an ESRI `.prj`, a MIKE
//! WKT, a GeoTIFF citation) by what it *defines*, the way GDAL/PROJ do: ESRI and EPSG spell
//! the same system differently (`NAD_1983_StatePlane_California_III_FIPS_0403_Feet` is EPSG's
//! `NAD83 / California zone 3 (ftUS)`), so names alone find few systems.
//!
//! A definition is reduced to a [`Described`]: the EPSG code of its datum (from the datum's
//! `AUTHORITY`, its EPSG name, or ESRI's name for it through [`tables::ESRI_DATUMS`]), its
//! ellipsoid, prime meridian and angular unit, and for a projected system the projection
//! method, its parameters in degrees and metres and the linear unit. ESRI's method and
//! parameter names are mapped to EPSG's (ESRI's `Lambert_Conformal_Conic` is EPSG's 1SP or
//! 2SP variant as its parameters say, `Gauss_Kruger` is Transverse Mercator, `Albers` is Albers
//! Conic Equal Area, `Mercator_Auxiliary_Sphere` is Web Mercator). Registry entries are reduced
//! the same way, once, into an index keyed by method and datum; a lookup compares the few
//! entries under its key with tolerances that absorb the rounding of ESRI's 15 significant
//! digits, and never the datum shift (`TOWGS84`), which ESRI files do not carry.
//!
//! When several codes define the same system, the one whose name matches wins, then the ones
//! that are not deprecated; if more than one is left, the definition is ambiguous and gets no
//! code (GDAL reports several candidates then and picks none either).

use std::collections::HashMap;
use std::f64::consts::PI;
use std::sync::OnceLock;

use super::names;
use super::tables;
use super::wkt::{Node, normalise};

/// Largest difference between two angles (degrees) taken as equal: about 1 mm on the ground,
/// far more than ESRI's rounding to 15 significant digits, far less than any two distinct
/// registry systems differ by.
const ANGLE_TOLERANCE_DEG: f64 = 1e-7;
/// Largest difference between two lengths (metres) taken as equal: false eastings written in
/// feet round-trip through 3 decimals (`6561666.667` ft).
const LENGTH_TOLERANCE_M: f64 = 2e-3;
/// Largest difference between two scale factors taken as equal.
const SCALE_TOLERANCE: f64 = 1e-9;
/// Largest relative difference between two unit factors or semi-major axes taken as equal.
const RELATIVE_TOLERANCE: f64 = 1e-9;
/// Largest difference between two inverse flattenings taken as equal (ESRI rounds Clarke
/// 1866's 294.978698213898 to 294.9786982).
const INVERSE_FLATTENING_TOLERANCE: f64 = 1e-5;

/// A projection parameter, by what it means rather than how it is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Param {
    Lat0,
    Lon0,
    Scale,
    FalseEasting,
    FalseNorthing,
    Parallel1,
    Parallel2,
    Azimuth,
    GridAngle,
}

const PARAM_COUNT: usize = 9;

impl Param {
    fn of(name: &str) -> Option<Self> {
        Some(match normalise(name).as_str() {
            "latitudeoforigin" | "latitudeofcenter" | "latitudeofnaturalorigin" => Self::Lat0,
            "centralmeridian"
            | "longitudeofcenter"
            | "longitudeoforigin"
            | "longitudeofnaturalorigin" => Self::Lon0,
            "scalefactor" | "scalefactoratnaturalorigin" => Self::Scale,
            "falseeasting" => Self::FalseEasting,
            "falsenorthing" => Self::FalseNorthing,
            "standardparallel1" => Self::Parallel1,
            "standardparallel2" => Self::Parallel2,
            "azimuth" => Self::Azimuth,
            "rectifiedgridangle" | "xyplanerotation" => Self::GridAngle,
            _ => return None,
        })
    }

    fn default_value(self) -> f64 {
        if self == Self::Scale { 1.0 } else { 0.0 }
    }

    fn tolerance(self) -> f64 {
        match self {
            Self::Scale => SCALE_TOLERANCE,
            Self::FalseEasting | Self::FalseNorthing => LENGTH_TOLERANCE_M,
            _ => ANGLE_TOLERANCE_DEG,
        }
    }

    fn is_angle(self) -> bool {
        !matches!(self, Self::Scale | Self::FalseEasting | Self::FalseNorthing)
    }
}

/// The projection methods identification understands, after ESRI's names are mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Method {
    /// A geographic system: no projection.
    Geographic,
    TransverseMercator,
    TransverseMercatorSouth,
    LambertConic1,
    LambertConic2,
    Mercator1,
    Mercator2,
    WebMercator,
    Albers,
    LambertAzimuthal,
    ObliqueStereographic,
    PolarStereographic,
    Cassini,
    Polyconic,
    Equirectangular,
    HotineA,
    HotineB,
    AzimuthalEquidistant,
    CylindricalEqualArea,
}

/// What a WKT 1 definition defines, in comparable units.
#[derive(Debug, Clone)]
pub(crate) struct Described {
    method: Method,
    datum: u32,
    semi_major: f64,
    inverse_flattening: f64,
    /// Degrees east of Greenwich.
    prime_meridian: f64,
    /// Radians per unit of the geographic system.
    angular_unit: f64,
    /// Degrees, metres, or plain numbers; unset ones at their default.
    params: [f64; PARAM_COUNT],
    /// Metres per unit of a projected system (1 for a geographic one).
    linear_unit: f64,
}

/// The EPSG code `node` (a `PROJCS` or `GEOGCS`) defines, when exactly one registry system
/// matches it (see the module doc).
pub(crate) fn identify(node: &Node) -> Option<u32> {
    let described = describe(node, &datum_names_of_registry().by_name)?;
    let candidates: Vec<u16> = index()
        .get(&(described.method, described.datum))?
        .iter()
        .filter(|(_, entry)| same(&described, entry))
        .map(|(code, _)| *code)
        .collect();
    choose(&candidates, node.name())
}

/// One code among equally good candidates: the only one, else the ones whose EPSG or ESRI
/// name is the definition's name, else those not deprecated, when that leaves one.
fn choose(candidates: &[u16], name: Option<&str>) -> Option<u32> {
    if let [only] = candidates {
        return Some(u32::from(*only));
    }
    let named: Vec<u16> = match name {
        Some(name) => candidates
            .iter()
            .copied()
            .filter(|code| is_named(*code, name))
            .collect(),
        None => Vec::new(),
    };
    let pool = if named.is_empty() { candidates } else { &named };
    if let [only] = pool {
        return Some(u32::from(*only));
    }
    let mut current = pool
        .iter()
        .filter(|code| tables::DEPRECATED.binary_search(code).is_err());
    match (current.next(), current.next()) {
        (Some(only), None) => Some(u32::from(*only)),
        _ => None,
    }
}

/// True when `name` is the registry name of `code` or ESRI's name for it.
fn is_named(code: u16, name: &str) -> bool {
    if names::code_name_matches(u32::from(code), name) {
        return true;
    }
    let key = normalise(name);
    let start = tables::ESRI_SYSTEMS.partition_point(|(esri, _)| *esri < key.as_str());
    tables::ESRI_SYSTEMS
        .get(start..)
        .unwrap_or_default()
        .iter()
        .take_while(|(esri, _)| *esri == key.as_str())
        .any(|(_, esri_code)| *esri_code == code)
}

fn same(a: &Described, b: &Described) -> bool {
    let relative = |x: f64, y: f64| (x - y).abs() <= RELATIVE_TOLERANCE * x.abs().max(y.abs());
    relative(a.semi_major, b.semi_major)
        && (a.inverse_flattening - b.inverse_flattening).abs() <= INVERSE_FLATTENING_TOLERANCE
        && (a.prime_meridian - b.prime_meridian).abs() <= ANGLE_TOLERANCE_DEG
        && relative(a.linear_unit, b.linear_unit)
        && (a.method != Method::Geographic || relative(a.angular_unit, b.angular_unit))
        && PARAMS
            .iter()
            .enumerate()
            .all(|(index, param)| (a.params[index] - b.params[index]).abs() <= param.tolerance())
}

const PARAMS: [Param; PARAM_COUNT] = [
    Param::Lat0,
    Param::Lon0,
    Param::Scale,
    Param::FalseEasting,
    Param::FalseNorthing,
    Param::Parallel1,
    Param::Parallel2,
    Param::Azimuth,
    Param::GridAngle,
];

/// Reduces a `PROJCS` or `GEOGCS` node; `None` for anything identification cannot compare (an
/// unknown datum, method or parameter, a missing or meaningless number).
fn describe(node: &Node, datum_names: &HashMap<String, u32>) -> Option<Described> {
    match node.keyword.as_str() {
        "GEOGCS" => describe_geographic(node, datum_names),
        "PROJCS" => {
            let mut described = describe_geographic(node.child("GEOGCS")?, datum_names)?;
            let linear_unit = positive(node.child("UNIT")?.number(1)?)?;
            let degrees_per_unit = described.angular_unit * 180.0 / PI;
            let mut given: [Option<f64>; PARAM_COUNT] = [None; PARAM_COUNT];
            for parameter in node.children("PARAMETER") {
                let name = parameter.name()?;
                let value = parameter.number(1)?;
                let Some(param) = Param::of(name) else {
                    // ESRI's Web Mercator says which sphere; nothing else is ignorable.
                    if normalise(name) == "auxiliaryspheretype" {
                        continue;
                    }
                    return None;
                };
                let value = if param.is_angle() {
                    value * degrees_per_unit
                } else if matches!(param, Param::FalseEasting | Param::FalseNorthing) {
                    value * linear_unit
                } else {
                    value
                };
                given[param as usize] = Some(value);
            }
            let method_name = normalise(node.child("PROJECTION")?.name()?);
            let web = node.children("EXTENSION").any(|extension| {
                extension
                    .args
                    .get(1)
                    .is_some_and(|arg| matches!(arg, super::wkt::Arg::Text(text) if text.contains("+nadgrids=@null")))
            });
            described.method = method(&method_name, &mut given, web)?;
            for (index, param) in PARAMS.iter().enumerate() {
                described.params[index] = given[index].unwrap_or(param.default_value());
            }
            described.linear_unit = linear_unit;
            Some(described)
        }
        _ => None,
    }
}

/// The method a projection name means, adjusting `given` to EPSG's parameters where ESRI's
/// differ: conic standard parallels are put in descending order (they are interchangeable).
fn method(name: &str, given: &mut [Option<f64>; PARAM_COUNT], web: bool) -> Option<Method> {
    let get = |given: &[Option<f64>; PARAM_COUNT], param: Param| given[param as usize];
    let order_parallels = |given: &mut [Option<f64>; PARAM_COUNT]| {
        if let (Some(first), Some(second)) =
            (get(given, Param::Parallel1), get(given, Param::Parallel2))
            && second > first
        {
            given[Param::Parallel1 as usize] = Some(second);
            given[Param::Parallel2 as usize] = Some(first);
        }
    };
    Some(match name {
        "transversemercator" | "gausskruger" => Method::TransverseMercator,
        "transversemercatorsouthorientated" | "transversemercatorsouthoriented" => {
            Method::TransverseMercatorSouth
        }
        "lambertconformalconic1sp" => Method::LambertConic1,
        "lambertconformalconic2sp" => {
            order_parallels(given);
            Method::LambertConic2
        }
        "lambertconformalconic" => {
            // ESRI's one name for both: a scale factor with one standard parallel (or two equal
            // ones) is the 1SP form, whose latitude of origin is that parallel.
            let first = get(given, Param::Parallel1);
            let second = get(given, Param::Parallel2);
            let one_parallel = second.is_none() || second == first;
            if one_parallel && get(given, Param::Scale).is_some() {
                if let Some(first) = first {
                    given[Param::Lat0 as usize] = Some(first);
                }
                given[Param::Parallel1 as usize] = None;
                given[Param::Parallel2 as usize] = None;
                Method::LambertConic1
            } else {
                if get(given, Param::Scale).is_some_and(|k| (k - 1.0).abs() > SCALE_TOLERANCE) {
                    return None;
                }
                given[Param::Scale as usize] = None;
                if second.is_none() {
                    given[Param::Parallel2 as usize] = first;
                }
                order_parallels(given);
                Method::LambertConic2
            }
        }
        "mercatorauxiliarysphere" | "popularvisualisationpseudomercator" => Method::WebMercator,
        "mercator1sp" | "mercator2sp" | "mercator" => {
            if web {
                return Some(Method::WebMercator);
            }
            // Mercator with a standard parallel of 0 is the 1SP form with scale 1.
            match get(given, Param::Parallel1) {
                Some(parallel) if parallel.abs() > ANGLE_TOLERANCE_DEG => Method::Mercator2,
                _ => {
                    given[Param::Parallel1 as usize] = None;
                    Method::Mercator1
                }
            }
        }
        "albersconicequalarea" | "albers" => {
            order_parallels(given);
            Method::Albers
        }
        "lambertazimuthalequalarea" => Method::LambertAzimuthal,
        "obliquestereographic" | "doublestereographic" => Method::ObliqueStereographic,
        "polarstereographic" => Method::PolarStereographic,
        "stereographicnorthpole" | "stereographicsouthpole" => {
            // ESRI gives the latitude of true scale as the standard parallel, GDAL's WKT 1 as
            // the latitude of origin.
            if let Some(parallel) = given[Param::Parallel1 as usize].take() {
                given[Param::Lat0 as usize] = Some(parallel);
            }
            Method::PolarStereographic
        }
        "cassinisoldner" | "cassini" => Method::Cassini,
        "polyconic" => Method::Polyconic,
        "equirectangular" | "equidistantcylindrical" | "platecarree" => Method::Equirectangular,
        "hotineobliquemercator" | "hotineobliquemercatorazimuthnaturalorigin" => Method::HotineA,
        "hotineobliquemercatorazimuthcenter" => Method::HotineB,
        "azimuthalequidistant" => Method::AzimuthalEquidistant,
        "cylindricalequalarea" => Method::CylindricalEqualArea,
        _ => return None,
    })
}

fn describe_geographic(node: &Node, datum_names: &HashMap<String, u32>) -> Option<Described> {
    let datum = node.child("DATUM")?;
    let code = datum
        .epsg()
        .or_else(|| datum_code(datum.name()?, datum_names))?;
    let spheroid = datum
        .child("SPHEROID")
        .or_else(|| datum.child("ELLIPSOID"))?;
    let semi_major = positive(spheroid.number(1)?)?;
    let inverse_flattening = spheroid.number(2)?;
    let prime_meridian = match node.child("PRIMEM") {
        Some(primem) => primem.number(1)?,
        None => 0.0,
    };
    let angular_unit = match node.child("UNIT") {
        Some(unit) => positive(unit.number(1)?)?,
        None => PI / 180.0,
    };
    Some(Described {
        method: Method::Geographic,
        datum: code,
        semi_major,
        inverse_flattening,
        prime_meridian,
        angular_unit,
        params: [0.0; PARAM_COUNT],
        linear_unit: 1.0,
    })
}

fn positive(value: f64) -> Option<f64> {
    (value.is_finite() && value > 0.0).then_some(value)
}

/// The EPSG code of a datum name: EPSG's own (as the registry spells it) or ESRI's.
fn datum_code(name: &str, datum_names: &HashMap<String, u32>) -> Option<u32> {
    let key = normalise(name);
    if let Some(code) = datum_names.get(&key) {
        return Some(*code);
    }
    let esri = |key: &str| {
        tables::ESRI_DATUMS
            .binary_search_by(|(name, _)| (*name).cmp(key))
            .ok()
            .and_then(|index| tables::ESRI_DATUMS.get(index))
            .map(|(_, code)| *code)
    };
    esri(&key).or_else(|| {
        // ESRI prefixes datum names with `D_`; some files drop it, some add it to EPSG names.
        if let Some(bare) = key.strip_prefix('d') {
            datum_names.get(bare).copied().or_else(|| esri(bare))
        } else {
            esri(&format!("d{key}"))
        }
    })
}

struct RegistryDatums {
    by_name: HashMap<String, u32>,
}

/// Normalised datum names of the registry's WKT and their EPSG codes.
fn datum_names_of_registry() -> &'static RegistryDatums {
    static DATUMS: OnceLock<RegistryDatums> = OnceLock::new();
    DATUMS.get_or_init(|| {
        let mut by_name = HashMap::new();
        for definition in super::definitions() {
            let Some(node) = super::wkt::parse(definition.wkt) else {
                continue;
            };
            let geographic = if node.keyword == "GEOGCS" {
                Some(&node)
            } else {
                node.child("GEOGCS")
            };
            if let Some(datum) = geographic.and_then(|geographic| geographic.child("DATUM"))
                && let (Some(name), Some(code)) = (datum.name(), datum.epsg())
            {
                by_name.entry(normalise(name)).or_insert(code);
            }
        }
        RegistryDatums { by_name }
    })
}

type Index = HashMap<(Method, u32), Vec<(u16, Described)>>;

/// Every registry system identification can compare, by method and datum. Built on first
/// use by parsing every registry WKT once (see docs/formats.md for the time it takes).
fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let datum_names = &datum_names_of_registry().by_name;
        let mut index: Index = HashMap::new();
        for definition in super::definitions() {
            let Ok(code) = u16::try_from(definition.code) else {
                continue;
            };
            let Some(described) =
                super::wkt::parse(definition.wkt).and_then(|node| describe(&node, datum_names))
            else {
                continue;
            };
            index
                .entry((described.method, described.datum))
                .or_default()
                .push((code, described));
        }
        index
    })
}

/// Builds the index now rather than on first use (for timing it, or a server warming up).
pub(crate) fn prepare() {
    let _ = index();
}

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

/// The parameters a definition gives, by meaning; `None` for one it leaves out (its default
/// applies).
#[derive(Debug, Clone, Copy, Default)]
struct Given {
    lat0: Option<f64>,
    lon0: Option<f64>,
    scale: Option<f64>,
    false_easting: Option<f64>,
    false_northing: Option<f64>,
    parallel1: Option<f64>,
    parallel2: Option<f64>,
    azimuth: Option<f64>,
    grid_angle: Option<f64>,
}

impl Given {
    fn slot(&mut self, param: Param) -> &mut Option<f64> {
        match param {
            Param::Lat0 => &mut self.lat0,
            Param::Lon0 => &mut self.lon0,
            Param::Scale => &mut self.scale,
            Param::FalseEasting => &mut self.false_easting,
            Param::FalseNorthing => &mut self.false_northing,
            Param::Parallel1 => &mut self.parallel1,
            Param::Parallel2 => &mut self.parallel2,
            Param::Azimuth => &mut self.azimuth,
            Param::GridAngle => &mut self.grid_angle,
        }
    }

    fn get(mut self, param: Param) -> Option<f64> {
        *self.slot(param)
    }

    /// The value of `param`, its default when not given.
    fn value(self, param: Param) -> f64 {
        self.get(param).unwrap_or(param.default_value())
    }

    /// Puts conic standard parallels in descending order (they are interchangeable).
    fn order_parallels(&mut self) {
        if let (Some(first), Some(second)) = (self.parallel1, self.parallel2)
            && second > first
        {
            self.parallel1 = Some(second);
            self.parallel2 = Some(first);
        }
    }
}

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
    /// Degrees, metres, or plain numbers.
    params: Given,
    /// Metres per unit of a projected system (1 for a geographic one).
    linear_unit: f64,
}

/// The EPSG code `node` (a `PROJCS` or `GEOGCS`) defines, when exactly one registry system
/// matches it (see the module doc).
pub(crate) fn identify(node: &Node) -> Option<u32> {
    let registry = registry();
    let described = describe(node, &registry.datum_names)?;
    let candidates: Vec<u16> = registry
        .index
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
        && PARAMS.iter().all(|param| {
            (a.params.value(*param) - b.params.value(*param)).abs() <= param.tolerance()
        })
}

const PARAMS: [Param; 9] = [
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
            let mut given = Given::default();
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
                *given.slot(param) = Some(value);
            }
            let method_name = normalise(node.child("PROJECTION")?.name()?);
            // The registry's EPSG:3857 is Mercator 1SP plus a proj4 extension on a sphere.
            let web = node.children("EXTENSION").any(|extension| {
                matches!(
                    extension.args.get(1),
                    Some(super::wkt::Arg::Text(text)) if text.contains("+nadgrids=@null")
                )
            });
            described.method = method(&method_name, &mut given, web)?;
            described.params = given;
            described.linear_unit = linear_unit;
            Some(described)
        }
        _ => None,
    }
}

/// The method a projection name means, adjusting `given` to EPSG's parameters where ESRI's
/// differ; conic standard parallels are put in descending order.
fn method(name: &str, given: &mut Given, web: bool) -> Option<Method> {
    Some(match name {
        "transversemercator" | "gausskruger" => Method::TransverseMercator,
        "transversemercatorsouthorientated" | "transversemercatorsouthoriented" => {
            Method::TransverseMercatorSouth
        }
        "lambertconformalconic1sp" => Method::LambertConic1,
        "lambertconformalconic2sp" => {
            given.order_parallels();
            Method::LambertConic2
        }
        "lambertconformalconic" => esri_lambert(given)?,
        "mercatorauxiliarysphere" | "popularvisualisationpseudomercator" => Method::WebMercator,
        "mercator1sp" | "mercator2sp" | "mercator" => {
            if web {
                return Some(Method::WebMercator);
            }
            // Mercator with a standard parallel of 0 is the 1SP form with scale 1.
            match given.parallel1 {
                Some(parallel) if parallel.abs() > ANGLE_TOLERANCE_DEG => Method::Mercator2,
                _ => {
                    given.parallel1 = None;
                    Method::Mercator1
                }
            }
        }
        "albersconicequalarea" | "albers" => {
            given.order_parallels();
            Method::Albers
        }
        "lambertazimuthalequalarea" => Method::LambertAzimuthal,
        "obliquestereographic" | "doublestereographic" => Method::ObliqueStereographic,
        "polarstereographic" => Method::PolarStereographic,
        "stereographicnorthpole" | "stereographicsouthpole" => {
            // ESRI gives the latitude of true scale as the standard parallel, GDAL's WKT 1 as
            // the latitude of origin.
            if let Some(parallel) = given.parallel1.take() {
                given.lat0 = Some(parallel);
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

/// ESRI's one name for both Lambert conformal conic variants: a scale factor with one
/// standard parallel (or two equal ones) is the 1SP form, whose latitude of origin is that
/// parallel; anything else is the 2SP form (with scale 1).
fn esri_lambert(given: &mut Given) -> Option<Method> {
    let first = given.parallel1;
    let second = given.parallel2;
    let one_parallel = second.is_none() || second == first;
    if one_parallel && given.scale.is_some() {
        if let Some(first) = first {
            given.lat0 = Some(first);
        }
        given.parallel1 = None;
        given.parallel2 = None;
        return Some(Method::LambertConic1);
    }
    if given
        .scale
        .is_some_and(|k| (k - 1.0).abs() > SCALE_TOLERANCE)
    {
        return None;
    }
    given.scale = None;
    if second.is_none() {
        given.parallel2 = first;
    }
    given.order_parallels();
    Some(Method::LambertConic2)
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
        params: Given::default(),
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

/// The registry reduced for identification: the datum codes of its datum names, and its
/// systems by method and datum.
struct Registry {
    /// Normalised datum names of the registry's WKT and their EPSG codes.
    datum_names: HashMap<String, u32>,
    /// Every registry system identification can compare, by method and datum.
    index: HashMap<(Method, u32), Vec<(u16, Described)>>,
}

/// Built on first use by parsing every registry WKT once (see docs/formats.md for the time
/// it takes).
fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let nodes: Vec<(u16, Node)> = super::definitions()
            .iter()
            .filter_map(|definition| {
                let code = u16::try_from(definition.code).ok()?;
                Some((code, super::wkt::parse(definition.wkt)?))
            })
            .collect();
        let mut datum_names = HashMap::new();
        for (_, node) in &nodes {
            let geographic = if node.keyword == "GEOGCS" {
                Some(node)
            } else {
                node.child("GEOGCS")
            };
            if let Some(datum) = geographic.and_then(|geographic| geographic.child("DATUM"))
                && let (Some(name), Some(code)) = (datum.name(), datum.epsg())
            {
                datum_names.entry(normalise(name)).or_insert(code);
            }
        }
        let mut index: HashMap<(Method, u32), Vec<(u16, Described)>> = HashMap::new();
        for (code, node) in &nodes {
            if let Some(described) = describe(node, &datum_names) {
                index
                    .entry((described.method, described.datum))
                    .or_default()
                    .push((*code, described));
            }
        }
        Registry { datum_names, index }
    })
}

/// Builds the index now rather than on first use (for timing it, or a server warming up).
pub(crate) fn prepare() {
    let _ = registry();
}

//! A user-defined coordinate system in GeoKeys (`ProjectedCSTypeGeoKey` or
//! `GeographicTypeGeoKey` = 32767, described by projection parameters, an ellipsoid and
//! units), both ways: read, it is stated as an OGC WKT 1, so that it travels with the data
//! like a `.prj` (the ASCII Grid writer writes it, reprojection builds a proj4 definition
//! from it); written, a WKT without an EPSG code (a custom `.prj`) becomes such keys.
//!
//! This is how GDAL stores any system without an EPSG code, which is common for the local
//! grids of hydrodynamic models. The keys and their meaning follow the GeoTIFF 1.0
//! specification; the methods covered are those GDAL writes for the projections Basin can
//! reproject (transverse Mercator, Mercator, Lambert conformal conic with one or two
//! parallels, Albers equal area, oblique stereographic). Anything else stays "user-defined"
//! and needs the `SRID` reader parameter.

use super::conversions;
use super::geokeys::{GeoKeys, USER_DEFINED};
use crate::crs::wkt::{self, normalise};

/// GeoKey ids of the geographic and projection parameters.
mod key {
    pub use super::super::geokeys::key::{GEOGRAPHIC_TYPE, MODEL_TYPE, PROJECTED_TYPE};
    pub const GEODETIC_DATUM: u16 = 2050;
    pub const ANGULAR_UNITS: u16 = 2054;
    pub const ELLIPSOID: u16 = 2056;
    pub const SEMI_MAJOR_AXIS: u16 = 2057;
    pub const SEMI_MINOR_AXIS: u16 = 2058;
    pub const INV_FLATTENING: u16 = 2059;
    pub const PRIME_MERIDIAN_LONG: u16 = 2061;
    pub const TO_WGS84: u16 = 2062;
    pub const PROJECTION: u16 = 3074;
    pub const COORD_TRANS: u16 = 3075;
    pub const LINEAR_UNITS: u16 = 3076;
    pub const LINEAR_UNIT_SIZE: u16 = 3077;
    pub const STD_PARALLEL_1: u16 = 3078;
    pub const STD_PARALLEL_2: u16 = 3079;
    pub const NAT_ORIGIN_LONG: u16 = 3080;
    pub const NAT_ORIGIN_LAT: u16 = 3081;
    pub const FALSE_EASTING: u16 = 3082;
    pub const FALSE_NORTHING: u16 = 3083;
    pub const FALSE_ORIGIN_LONG: u16 = 3084;
    pub const FALSE_ORIGIN_LAT: u16 = 3085;
    pub const FALSE_ORIGIN_EASTING: u16 = 3086;
    pub const FALSE_ORIGIN_NORTHING: u16 = 3087;
    pub const CENTER_LONG: u16 = 3088;
    pub const CENTER_LAT: u16 = 3089;
    pub const CENTER_EASTING: u16 = 3090;
    pub const CENTER_NORTHING: u16 = 3091;
    pub const SCALE_AT_NAT_ORIGIN: u16 = 3092;
    pub const SCALE_AT_CENTER: u16 = 3093;
    pub const STRAIGHT_VERT_POLE_LONG: u16 = 3095;
}

/// `GTModelTypeGeoKey`: geographic.
const MODEL_GEOGRAPHIC: u16 = 2;
/// `GeogAngularUnitsGeoKey`: degree (the only angular unit parameters are read in).
const ANGULAR_DEGREE: u16 = 9102;
/// `GeogGeodeticDatumGeoKey`: WGS 84.
const DATUM_WGS84: u16 = 6326;

/// `ProjCoordTransGeoKey` values covered.
mod method {
    pub const TRANSVERSE_MERCATOR: u16 = 1;
    pub const MERCATOR: u16 = 7;
    pub const LAMBERT_CONFORMAL_CONIC_2SP: u16 = 8;
    pub const LAMBERT_CONFORMAL_CONIC_1SP: u16 = 9;
    pub const LAMBERT_AZIMUTHAL_EQUAL_AREA: u16 = 10;
    pub const ALBERS_EQUAL_AREA: u16 = 11;
    pub const POLAR_STEREOGRAPHIC: u16 = 15;
    pub const OBLIQUE_STEREOGRAPHIC: u16 = 16;
}

/// The WKT of the user-defined system the keys describe, when Basin can state it.
pub(crate) fn wkt(keys: &GeoKeys) -> Option<String> {
    let geographic = geographic_wkt(keys)?;
    if keys.short(key::MODEL_TYPE) == Some(MODEL_GEOGRAPHIC) {
        return Some(geographic);
    }
    if keys.short(key::PROJECTED_TYPE) != Some(USER_DEFINED) {
        return None;
    }
    let (unit_name, unit_size) = linear_unit(keys)?;
    let keys = with_named_projection(keys, unit_size);
    let (projection, parameters) = projection(&keys)?;
    let parameters: String = parameters
        .iter()
        .map(|(name, value)| format!(",PARAMETER[\"{name}\",{}]", number(*value)))
        .collect();
    Some(format!(
        "PROJCS[\"unnamed\",{geographic},PROJECTION[\"{projection}\"]{parameters},UNIT[\"{unit_name}\",{}]]",
        number(unit_size)
    ))
}

/// The keys with the projection `ProjectionGeoKey` names by EPSG code filled in, as libgeotiff
/// fills them: only when the file states no `ProjCoordTransGeoKey` of its own (with one, the
/// file's keys are used alone). Lengths come in metres and become `unit_size` units.
fn with_named_projection(keys: &GeoKeys, unit_size: f64) -> GeoKeys {
    let code = keys
        .short(key::PROJECTION)
        .filter(|&code| code != 0 && code != USER_DEFINED);
    let conversion = match code {
        Some(code) if keys.short(key::COORD_TRANS).is_none() => conversions::conversion(code),
        _ => None,
    };
    let Some(conversion) = conversion else {
        return keys.clone();
    };
    let Some(method) = coord_trans_of(conversion.method) else {
        return keys.clone();
    };
    let azimuthal = method == method::LAMBERT_AZIMUTHAL_EQUAL_AREA;
    let polar = method == method::POLAR_STEREOGRAPHIC;
    let doubles: Vec<(u16, f64)> = conversion
        .parameters
        .iter()
        .filter_map(|&(parameter, value)| {
            let length = |value: f64| value / unit_size;
            Some(match parameter {
                8801 if azimuthal => (key::CENTER_LAT, value),
                8802 if azimuthal => (key::CENTER_LONG, value),
                8802 | 8833 if polar => (key::STRAIGHT_VERT_POLE_LONG, value),
                8801 | 8832 => (key::NAT_ORIGIN_LAT, value),
                8802 => (key::NAT_ORIGIN_LONG, value),
                8805 => (key::SCALE_AT_NAT_ORIGIN, value),
                8806 => (key::FALSE_EASTING, length(value)),
                8807 => (key::FALSE_NORTHING, length(value)),
                8821 => (key::FALSE_ORIGIN_LAT, value),
                8822 => (key::FALSE_ORIGIN_LONG, value),
                8823 => (key::STD_PARALLEL_1, value),
                8824 => (key::STD_PARALLEL_2, value),
                8826 => (key::FALSE_ORIGIN_EASTING, length(value)),
                8827 => (key::FALSE_ORIGIN_NORTHING, length(value)),
                _ => return None,
            })
        })
        .collect();
    keys.with_defaults(&[(key::COORD_TRANS, method)], &doubles)
}

/// The `ProjCoordTransGeoKey` method of an EPSG method code, for the methods read.
fn coord_trans_of(epsg_method: u16) -> Option<u16> {
    Some(match epsg_method {
        conversions::TRANSVERSE_MERCATOR => method::TRANSVERSE_MERCATOR,
        9801 => method::LAMBERT_CONFORMAL_CONIC_1SP,
        9802 => method::LAMBERT_CONFORMAL_CONIC_2SP,
        9804 | 9805 => method::MERCATOR,
        9809 => method::OBLIQUE_STEREOGRAPHIC,
        9810 | 9829 => method::POLAR_STEREOGRAPHIC,
        9820 => method::LAMBERT_AZIMUTHAL_EQUAL_AREA,
        9822 => method::ALBERS_EQUAL_AREA,
        _ => return None,
    })
}

/// The GEOGCS: the registry's for an EPSG code, else one built from the datum, ellipsoid and
/// prime meridian keys.
fn geographic_wkt(keys: &GeoKeys) -> Option<String> {
    match keys.short(key::GEOGRAPHIC_TYPE) {
        Some(code) if code != USER_DEFINED && code != 0 => {
            let wkt = crate::crs::definition(u32::from(code))?.wkt;
            wkt.starts_with("GEOGCS[").then(|| wkt.to_owned())
        }
        _ => {
            let angular = keys.short(key::ANGULAR_UNITS).unwrap_or(ANGULAR_DEGREE);
            if angular != ANGULAR_DEGREE {
                return None;
            }
            let (semi_major, inverse_flattening) = ellipsoid(keys)?;
            let datum = if keys.short(key::GEODETIC_DATUM) == Some(DATUM_WGS84) {
                "WGS_1984"
            } else {
                "unknown"
            };
            let to_wgs84 = match keys.doubles(key::TO_WGS84) {
                Some(values)
                    if matches!(values.len(), 3 | 7) && values.iter().all(|v| v.is_finite()) =>
                {
                    let mut all = values.to_vec();
                    all.resize(7, 0.0);
                    let listed: Vec<String> = all.into_iter().map(number).collect();
                    format!(",TOWGS84[{}]", listed.join(","))
                }
                _ => String::new(),
            };
            let prime_meridian = keys.double(key::PRIME_MERIDIAN_LONG).unwrap_or(0.0);
            Some(format!(
                "GEOGCS[\"unknown\",DATUM[\"{datum}\",SPHEROID[\"unknown\",{},{}]{to_wgs84}],PRIMEM[\"Greenwich\",{}],UNIT[\"degree\",0.0174532925199433]]",
                number(semi_major),
                number(inverse_flattening),
                number(prime_meridian)
            ))
        }
    }
}

/// Semi-major axis and inverse flattening: from the axis keys, else from the ellipsoid code.
fn ellipsoid(keys: &GeoKeys) -> Option<(f64, f64)> {
    if let Some(semi_major) = keys.double(key::SEMI_MAJOR_AXIS).filter(|a| *a > 0.0) {
        let inverse_flattening = match keys.double(key::INV_FLATTENING) {
            Some(value) if value >= 0.0 => value,
            Some(_) => return None,
            None => match keys.double(key::SEMI_MINOR_AXIS) {
                Some(b) if b == semi_major => 0.0,
                Some(b) if b > 0.0 && b < semi_major => semi_major / (semi_major - b),
                _ => return None,
            },
        };
        return Some((semi_major, inverse_flattening));
    }
    // The ellipsoids of EPSG that GeoTIFF writers name by code without the axes.
    Some(match keys.short(key::ELLIPSOID)? {
        7001 => (6_377_563.396, 299.324_964_6),
        7004 => (6_377_397.155, 299.152_812_8),
        7008 => (6_378_206.4, 294.978_698_213_898),
        7012 => (6_378_249.145, 293.465),
        7019 => (6_378_137.0, 298.257_222_101),
        7022 => (6_378_388.0, 297.0),
        7030 => (6_378_137.0, 298.257_223_563),
        _ => return None,
    })
}

/// The linear unit's name and size in metres.
fn linear_unit(keys: &GeoKeys) -> Option<(&'static str, f64)> {
    match keys.short(key::LINEAR_UNITS).unwrap_or(9001) {
        9001 => Some(("metre", 1.0)),
        9002 => Some(("foot", 0.3048)),
        9003 => Some(("US survey foot", 0.304_800_609_601_219_2)),
        USER_DEFINED => keys
            .double(key::LINEAR_UNIT_SIZE)
            .filter(|size| *size > 0.0)
            .map(|size| ("unknown", size)),
        _ => None,
    }
}

/// The WKT projection name and parameters (angles in degrees, false easting and northing in
/// the linear unit, as both GeoKeys and WKT 1 state them).
fn projection(keys: &GeoKeys) -> Option<(&'static str, Vec<(&'static str, f64)>)> {
    let value = |id: u16, default: f64| keys.double(id).unwrap_or(default);
    // libgeotiff's order of fallbacks for every method.
    let false_easting = first_of(keys, &FALSE_EASTINGS, 0.0);
    let false_northing = first_of(keys, &FALSE_NORTHINGS, 0.0);
    let latitude = value(key::NAT_ORIGIN_LAT, 0.0);
    let longitude = value(key::NAT_ORIGIN_LONG, 0.0);
    let scale = value(key::SCALE_AT_NAT_ORIGIN, 1.0);
    let natural_origin = |name| {
        (
            name,
            vec![
                ("latitude_of_origin", latitude),
                ("central_meridian", longitude),
                ("scale_factor", scale),
                ("false_easting", false_easting),
                ("false_northing", false_northing),
            ],
        )
    };
    Some(match keys.short(key::COORD_TRANS)? {
        method::TRANSVERSE_MERCATOR => natural_origin("Transverse_Mercator"),
        method::LAMBERT_CONFORMAL_CONIC_1SP => natural_origin("Lambert_Conformal_Conic_1SP"),
        method::OBLIQUE_STEREOGRAPHIC => natural_origin("Oblique_Stereographic"),
        method::POLAR_STEREOGRAPHIC => polar_stereographic(keys, false_easting, false_northing),
        method::LAMBERT_AZIMUTHAL_EQUAL_AREA => {
            lambert_azimuthal(keys, false_easting, false_northing)
        }
        method::MERCATOR => {
            let common = [
                ("central_meridian", longitude),
                ("false_easting", false_easting),
                ("false_northing", false_northing),
            ];
            match keys.double(key::STD_PARALLEL_1) {
                Some(parallel) => (
                    "Mercator_2SP",
                    [vec![("standard_parallel_1", parallel)], common.to_vec()].concat(),
                ),
                None => {
                    let mut parameters = common.to_vec();
                    parameters.insert(1, ("scale_factor", scale));
                    ("Mercator_1SP", parameters)
                }
            }
        }
        method::LAMBERT_CONFORMAL_CONIC_2SP => (
            "Lambert_Conformal_Conic_2SP",
            conic(
                keys,
                ("latitude_of_origin", "central_meridian"),
                true,
                latitude,
            ),
        ),
        method::ALBERS_EQUAL_AREA => (
            "Albers_Conic_Equal_Area",
            conic(
                keys,
                ("latitude_of_center", "longitude_of_center"),
                false,
                0.0,
            ),
        ),
        _ => return None,
    })
}

/// The keys that may hold the false easting, in libgeotiff's order.
const FALSE_EASTINGS: [u16; 3] = [
    key::FALSE_EASTING,
    key::CENTER_EASTING,
    key::FALSE_ORIGIN_EASTING,
];
/// The keys that may hold the false northing, in libgeotiff's order.
const FALSE_NORTHINGS: [u16; 3] = [
    key::FALSE_NORTHING,
    key::CENTER_NORTHING,
    key::FALSE_ORIGIN_NORTHING,
];

/// The first of the DOUBLE keys `ids` the file has, else `default`.
fn first_of(keys: &GeoKeys, ids: &[u16], default: f64) -> f64 {
    ids.iter()
        .find_map(|&id| keys.double(id))
        .unwrap_or(default)
}

/// The latitude of an azimuthal projection's origin, from the first of the keys libgeotiff
/// looks at.
fn origin_latitude(keys: &GeoKeys) -> f64 {
    first_of(
        keys,
        &[key::NAT_ORIGIN_LAT, key::FALSE_ORIGIN_LAT, key::CENTER_LAT],
        0.0,
    )
}

/// Polar stereographic. GDAL writes both EPSG variants this way: the pole with a scale
/// (variant A), or the latitude of true scale (variant B); its WKT leaves a scale of 1 out of
/// B. The keys are looked for in libgeotiff's order.
fn polar_stereographic(
    keys: &GeoKeys,
    false_easting: f64,
    false_northing: f64,
) -> (&'static str, Vec<(&'static str, f64)>) {
    let latitude = origin_latitude(keys);
    let longitude = first_of(
        keys,
        &[
            key::STRAIGHT_VERT_POLE_LONG,
            key::NAT_ORIGIN_LONG,
            key::FALSE_ORIGIN_LONG,
            key::CENTER_LONG,
        ],
        0.0,
    );
    let scale = first_of(keys, &[key::SCALE_AT_NAT_ORIGIN, key::SCALE_AT_CENTER], 1.0);
    let mut parameters = vec![
        ("latitude_of_origin", latitude),
        ("central_meridian", longitude),
    ];
    if latitude.abs() == 90.0 || scale != 1.0 {
        parameters.push(("scale_factor", scale));
    }
    parameters.push(("false_easting", false_easting));
    parameters.push(("false_northing", false_northing));
    ("Polar_Stereographic", parameters)
}

/// Lambert azimuthal equal-area, its centre looked for in libgeotiff's order.
fn lambert_azimuthal(
    keys: &GeoKeys,
    false_easting: f64,
    false_northing: f64,
) -> (&'static str, Vec<(&'static str, f64)>) {
    let latitude = origin_latitude(keys);
    let longitude = first_of(
        keys,
        &[
            key::NAT_ORIGIN_LONG,
            key::FALSE_ORIGIN_LONG,
            key::CENTER_LONG,
        ],
        0.0,
    );
    (
        "Lambert_Azimuthal_Equal_Area",
        vec![
            ("latitude_of_center", latitude),
            ("longitude_of_center", longitude),
            ("false_easting", false_easting),
            ("false_northing", false_northing),
        ],
    )
}

/// The WKT parameters of a conic projection: two standard parallels (`parallel` when a key is
/// missing), and an origin (named `origin_names` in the WKT) with false coordinates stated at
/// the false origin or the natural origin. GDAL writes the first for Lambert conformal conic
/// (`false_origin_first`), the second for Albers; either is read.
fn conic(
    keys: &GeoKeys,
    origin_names: (&'static str, &'static str),
    false_origin_first: bool,
    parallel: f64,
) -> Vec<(&'static str, f64)> {
    let pick = |at_false_origin: u16, at_natural_origin: u16| {
        let (first, second) = if false_origin_first {
            (at_false_origin, at_natural_origin)
        } else {
            (at_natural_origin, at_false_origin)
        };
        keys.double(first).or(keys.double(second)).unwrap_or(0.0)
    };
    let (latitude_name, longitude_name) = origin_names;
    vec![
        (
            "standard_parallel_1",
            keys.double(key::STD_PARALLEL_1).unwrap_or(parallel),
        ),
        (
            "standard_parallel_2",
            keys.double(key::STD_PARALLEL_2).unwrap_or(parallel),
        ),
        (
            latitude_name,
            pick(key::FALSE_ORIGIN_LAT, key::NAT_ORIGIN_LAT),
        ),
        (
            longitude_name,
            pick(key::FALSE_ORIGIN_LONG, key::NAT_ORIGIN_LONG),
        ),
        (
            "false_easting",
            pick(key::FALSE_ORIGIN_EASTING, key::FALSE_EASTING),
        ),
        (
            "false_northing",
            pick(key::FALSE_ORIGIN_NORTHING, key::FALSE_NORTHING),
        ),
    ]
}

/// GeoKeys that describe a system without an EPSG code, ready for the key directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DescribedCrs {
    /// SHORT keys.
    pub shorts: Vec<(u16, u16)>,
    /// DOUBLE keys.
    pub doubles: Vec<(u16, Vec<f64>)>,
}

/// The GeoKeys of a WKT 1 definition without an EPSG code, for the methods [`wkt`] reads; the
/// inverse of it. `None` for anything else.
pub(crate) fn describe(wkt_text: &str) -> Option<DescribedCrs> {
    let node = wkt::parse(wkt_text)?;
    let mut described = DescribedCrs::default();
    let geographic = match node.keyword.as_str() {
        "GEOGCS" => {
            described.shorts.push((key::MODEL_TYPE, MODEL_GEOGRAPHIC));
            &node
        }
        "PROJCS" => {
            described.shorts.push((key::MODEL_TYPE, 1));
            node.child("GEOGCS")?
        }
        _ => return None,
    };
    match geographic.epsg().and_then(|code| u16::try_from(code).ok()) {
        Some(code) if code != USER_DEFINED => described.shorts.push((key::GEOGRAPHIC_TYPE, code)),
        _ => describe_geographic(geographic, &mut described)?,
    }
    if node.keyword == "GEOGCS" {
        return Some(described);
    }
    describe_projected(&node, &mut described);
    let (method, parameters) = projection_keys(&node)?;
    described.shorts.push((key::COORD_TRANS, method));
    described
        .doubles
        .extend(parameters.into_iter().map(|(id, value)| (id, vec![value])));
    Some(described)
}

/// Adds the keys of a user-defined geographic system (datum, ellipsoid, prime meridian,
/// shift to WGS 84) from its GEOGCS node; `None` when the node lacks one of them or states
/// angles in a unit other than degrees.
fn describe_geographic(geographic: &wkt::Node, described: &mut DescribedCrs) -> Option<()> {
    let datum = geographic.child("DATUM")?;
    let spheroid = datum.child("SPHEROID")?;
    let semi_major = spheroid.number(1).filter(|a| *a > 0.0)?;
    let inverse_flattening = spheroid.number(2).filter(|rf| *rf >= 0.0)?;
    let angular = geographic.child("UNIT").and_then(|unit| unit.number(1));
    if angular.is_some_and(|size| (size - 0.017_453_292_519_943_3).abs() > 1e-12) {
        return None;
    }
    let wgs84 = matches!(
        normalise(datum.name().unwrap_or_default()).as_str(),
        "wgs1984" | "dwgs1984" | "wgs84"
    );
    described.shorts.extend([
        (key::GEOGRAPHIC_TYPE, USER_DEFINED),
        (
            key::GEODETIC_DATUM,
            if wgs84 { DATUM_WGS84 } else { USER_DEFINED },
        ),
        (key::ANGULAR_UNITS, ANGULAR_DEGREE),
        (key::ELLIPSOID, USER_DEFINED),
    ]);
    described
        .doubles
        .push((key::SEMI_MAJOR_AXIS, vec![semi_major]));
    described
        .doubles
        .push((key::INV_FLATTENING, vec![inverse_flattening]));
    let prime_meridian = geographic
        .child("PRIMEM")
        .and_then(|primem| primem.number(1))
        .unwrap_or(0.0);
    if prime_meridian != 0.0 {
        described
            .doubles
            .push((key::PRIME_MERIDIAN_LONG, vec![prime_meridian]));
    }
    if let Some(shift) = datum.child("TOWGS84") {
        let values: Option<Vec<f64>> = (0..7).map(|index| shift.number(index)).collect();
        described.doubles.push((key::TO_WGS84, values?));
    }
    Some(())
}

/// Adds the keys that make a projected system user-defined, and its linear unit from its
/// PROJCS node (by code when it is the metre or one of the feet, else by size).
fn describe_projected(projected: &wkt::Node, described: &mut DescribedCrs) {
    let unit = projected
        .child("UNIT")
        .and_then(|unit| unit.number(1))
        .unwrap_or(1.0);
    let unit_code = [(1.0, 9001), (0.3048, 9002), (0.304_800_609_601_219_2, 9003)]
        .into_iter()
        .find(|(size, _)| (unit - size).abs() < 1e-12)
        .map_or(USER_DEFINED, |(_, code)| code);
    described.shorts.extend([
        (key::PROJECTED_TYPE, USER_DEFINED),
        (key::PROJECTION, USER_DEFINED),
        (key::LINEAR_UNITS, unit_code),
    ]);
    if unit_code == USER_DEFINED {
        described.doubles.push((key::LINEAR_UNIT_SIZE, vec![unit]));
    }
}

/// The `ProjCoordTransGeoKey` method and its parameter keys for the PROJECTION and
/// PARAMETERs of a PROJCS node; `None` for a projection outside the covered methods.
fn projection_keys(projected: &wkt::Node) -> Option<(u16, Vec<(u16, f64)>)> {
    let parameters = ProjectionParameters::of(projected);
    Some(
        match normalise(projected.child("PROJECTION")?.name()?).as_str() {
            "transversemercator" | "gausskruger" => {
                (method::TRANSVERSE_MERCATOR, parameters.natural_origin())
            }
            "obliquestereographic" | "doublestereographic" => {
                (method::OBLIQUE_STEREOGRAPHIC, parameters.natural_origin())
            }
            "lambertconformalconic1sp" => (
                method::LAMBERT_CONFORMAL_CONIC_1SP,
                parameters.natural_origin(),
            ),
            "lambertconformalconic" if parameters.parallel_2.is_none() => (
                method::LAMBERT_CONFORMAL_CONIC_1SP,
                parameters.natural_origin(),
            ),
            "lambertconformalconic2sp" | "lambertconformalconic" => (
                method::LAMBERT_CONFORMAL_CONIC_2SP,
                parameters.conic(
                    parameters.latitude,
                    [
                        key::FALSE_ORIGIN_LAT,
                        key::FALSE_ORIGIN_LONG,
                        key::FALSE_ORIGIN_EASTING,
                        key::FALSE_ORIGIN_NORTHING,
                    ],
                ),
            ),
            "mercator1sp" | "mercator2sp" | "mercator" => (method::MERCATOR, parameters.mercator()),
            "polarstereographic" => (method::POLAR_STEREOGRAPHIC, parameters.polar(None)),
            // ESRI's names for polar stereographic variant B: the latitude of true scale is
            // the standard parallel.
            "stereographicnorthpole" => (method::POLAR_STEREOGRAPHIC, parameters.polar(Some(90.0))),
            "stereographicsouthpole" => {
                (method::POLAR_STEREOGRAPHIC, parameters.polar(Some(-90.0)))
            }
            "lambertazimuthalequalarea" => (
                method::LAMBERT_AZIMUTHAL_EQUAL_AREA,
                vec![
                    (key::CENTER_LAT, parameters.latitude),
                    (key::CENTER_LONG, parameters.longitude),
                    (key::FALSE_EASTING, parameters.false_easting),
                    (key::FALSE_NORTHING, parameters.false_northing),
                ],
            ),
            "albersconicequalarea" | "albers" => (
                method::ALBERS_EQUAL_AREA,
                parameters.conic(
                    0.0,
                    [
                        key::NAT_ORIGIN_LAT,
                        key::NAT_ORIGIN_LONG,
                        key::FALSE_EASTING,
                        key::FALSE_NORTHING,
                    ],
                ),
            ),
            _ => return None,
        },
    )
}

/// The parameters of a PROJCS node, found under any of the names WKT writers give them.
struct ProjectionParameters {
    latitude: f64,
    longitude: f64,
    scale: f64,
    false_easting: f64,
    false_northing: f64,
    parallel_1: Option<f64>,
    parallel_2: Option<f64>,
}

impl ProjectionParameters {
    fn of(projected: &wkt::Node) -> Self {
        let p = |names: &[&str]| projected.parameter(names);
        Self {
            latitude: p(&["latitude_of_origin", "latitude_of_center"]).unwrap_or(0.0),
            longitude: p(&[
                "central_meridian",
                "longitude_of_origin",
                "longitude_of_center",
            ])
            .unwrap_or(0.0),
            scale: p(&["scale_factor"]).unwrap_or(1.0),
            false_easting: p(&["false_easting"]).unwrap_or(0.0),
            false_northing: p(&["false_northing"]).unwrap_or(0.0),
            parallel_1: p(&["standard_parallel_1"]),
            parallel_2: p(&["standard_parallel_2"]),
        }
    }

    /// The keys of a method with a natural origin and a scale there.
    fn natural_origin(&self) -> Vec<(u16, f64)> {
        vec![
            (key::NAT_ORIGIN_LAT, self.latitude),
            (key::NAT_ORIGIN_LONG, self.longitude),
            (key::SCALE_AT_NAT_ORIGIN, self.scale),
            (key::FALSE_EASTING, self.false_easting),
            (key::FALSE_NORTHING, self.false_northing),
        ]
    }

    /// The keys of a conic method: two standard parallels (the second defaulting to the
    /// first, both to `parallel`), then the origin's latitude, longitude, easting and northing
    /// under `origin_keys`.
    fn conic(&self, parallel: f64, origin_keys: [u16; 4]) -> Vec<(u16, f64)> {
        let [latitude, longitude, easting, northing] = origin_keys;
        vec![
            (key::STD_PARALLEL_1, self.parallel_1.unwrap_or(parallel)),
            (
                key::STD_PARALLEL_2,
                self.parallel_2.or(self.parallel_1).unwrap_or(parallel),
            ),
            (latitude, self.latitude),
            (longitude, self.longitude),
            (easting, self.false_easting),
            (northing, self.false_northing),
        ]
    }

    /// The keys of polar stereographic as GDAL writes them: the latitude of origin (the
    /// pole for variant A, the latitude of true scale for variant B), the longitude as the
    /// straight vertical pole's, and the scale. `pole` is given for ESRI's names, whose
    /// standard parallel is the latitude of true scale.
    fn polar(&self, pole: Option<f64>) -> Vec<(u16, f64)> {
        let latitude = match pole {
            Some(pole) => self.parallel_1.unwrap_or(pole),
            None => self.latitude,
        };
        vec![
            (key::NAT_ORIGIN_LAT, latitude),
            (key::STRAIGHT_VERT_POLE_LONG, self.longitude),
            (key::SCALE_AT_NAT_ORIGIN, self.scale),
            (key::FALSE_EASTING, self.false_easting),
            (key::FALSE_NORTHING, self.false_northing),
        ]
    }

    /// The keys of Mercator: with a standard parallel (2SP) when one other than the equator
    /// is given, else with a scale (1SP).
    fn mercator(&self) -> Vec<(u16, f64)> {
        match self.parallel_1 {
            Some(parallel) if parallel != 0.0 => vec![
                (key::STD_PARALLEL_1, parallel),
                (key::NAT_ORIGIN_LONG, self.longitude),
                (key::FALSE_EASTING, self.false_easting),
                (key::FALSE_NORTHING, self.false_northing),
            ],
            _ => vec![
                (key::NAT_ORIGIN_LAT, 0.0),
                (key::NAT_ORIGIN_LONG, self.longitude),
                (key::SCALE_AT_NAT_ORIGIN, self.scale),
                (key::FALSE_EASTING, self.false_easting),
                (key::FALSE_NORTHING, self.false_northing),
            ],
        }
    }
}

/// A number in its shortest exact form (`0.9996`, `500000`).
fn number(value: f64) -> String {
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(value);
    text.strip_suffix(".0").unwrap_or(text).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GeoKeys from (id, short) and (id, doubles) pairs.
    fn keys(shorts: &[(u16, u16)], doubles: &[(u16, &[f64])]) -> GeoKeys {
        let mut params = Vec::new();
        let mut directory = vec![1, 1, 0, (shorts.len() + doubles.len()) as u64];
        for (id, value) in shorts {
            directory.extend([u64::from(*id), 0, 1, u64::from(*value)]);
        }
        for (id, values) in doubles {
            directory.extend([
                u64::from(*id),
                34736,
                values.len() as u64,
                params.len() as u64,
            ]);
            params.extend_from_slice(values);
        }
        GeoKeys::parse(&directory, &params, "").unwrap()
    }

    #[test]
    fn a_user_defined_transverse_mercator_on_grs80_becomes_a_wkt() {
        let keys = keys(
            &[
                (1024, 1),
                (2048, 32767),
                (2050, 32767),
                (2056, 7019),
                (3072, 32767),
                (3075, 1),
            ],
            &[
                (2057, &[6_378_137.0]),
                (2059, &[298.257_222_101]),
                (3080, &[10.5]),
                (3081, &[0.0]),
                (3082, &[200_000.0]),
                (3083, &[0.0]),
                (3092, &[0.9996]),
            ],
        );
        assert_eq!(
            wkt(&keys).unwrap(),
            "PROJCS[\"unnamed\",GEOGCS[\"unknown\",DATUM[\"unknown\",SPHEROID[\"unknown\",6378137,298.257222101]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]],PROJECTION[\"Transverse_Mercator\"],PARAMETER[\"latitude_of_origin\",0],PARAMETER[\"central_meridian\",10.5],PARAMETER[\"scale_factor\",0.9996],PARAMETER[\"false_easting\",200000],PARAMETER[\"false_northing\",0],UNIT[\"metre\",1]]"
        );
    }

    #[test]
    fn a_registry_geographic_system_and_us_feet_are_kept() {
        let keys = keys(
            &[
                (1024, 1),
                (2048, 4269),
                (3072, 32767),
                (3075, 1),
                (3076, 9003),
            ],
            &[
                (3080, &[-81.0]),
                (3081, &[31.0]),
                (3082, &[656_166.666_666_667]),
            ],
        );
        let text = wkt(&keys).unwrap();
        assert!(text.contains("GEOGCS[\"NAD83\""), "{text}");
        assert!(
            text.ends_with("UNIT[\"US survey foot\",0.3048006096012192]]"),
            "{text}"
        );
        assert!(
            text.contains("PARAMETER[\"false_easting\",656166.666666667]"),
            "{text}"
        );
    }

    /// Keys as the directory holds them, to read back.
    fn directory_of(described: &DescribedCrs) -> GeoKeys {
        let shorts: Vec<(u16, u16)> = described.shorts.clone();
        let doubles: Vec<(u16, &[f64])> = described
            .doubles
            .iter()
            .map(|(id, values)| (*id, values.as_slice()))
            .collect();
        keys(&shorts, &doubles)
    }

    #[test]
    fn a_described_wkt_reads_back_as_the_same_wkt() {
        for text in [
            "PROJCS[\"unnamed\",GEOGCS[\"unknown\",DATUM[\"unknown\",SPHEROID[\"unknown\",6378137,298.257222101],TOWGS84[1,2,3,0,0,0,0]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]],PROJECTION[\"Lambert_Conformal_Conic_2SP\"],PARAMETER[\"standard_parallel_1\",49],PARAMETER[\"standard_parallel_2\",44],PARAMETER[\"latitude_of_origin\",46.5],PARAMETER[\"central_meridian\",3],PARAMETER[\"false_easting\",700000],PARAMETER[\"false_northing\",6600000],UNIT[\"metre\",1]]",
            "PROJCS[\"unnamed\",GEOGCS[\"unknown\",DATUM[\"WGS_1984\",SPHEROID[\"unknown\",6378137,298.257223563]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]],PROJECTION[\"Transverse_Mercator\"],PARAMETER[\"latitude_of_origin\",0],PARAMETER[\"central_meridian\",10.5],PARAMETER[\"scale_factor\",0.9996],PARAMETER[\"false_easting\",200000],PARAMETER[\"false_northing\",0],UNIT[\"US survey foot\",0.3048006096012192]]",
            "GEOGCS[\"unknown\",DATUM[\"unknown\",SPHEROID[\"unknown\",6378388,297]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]]",
        ] {
            let described = describe(text).unwrap();
            assert_eq!(wkt(&directory_of(&described)).unwrap(), text);
        }
        let esri_lcc = "PROJCS[\"x\",GEOGCS[\"GCS_ETRS_1989\",DATUM[\"D_ETRS_1989\",SPHEROID[\"GRS_1980\",6378137.0,298.257222101]],PRIMEM[\"Greenwich\",0.0],UNIT[\"Degree\",0.0174532925199433]],PROJECTION[\"Lambert_Conformal_Conic\"],PARAMETER[\"False_Easting\",700000.0],PARAMETER[\"False_Northing\",6600000.0],PARAMETER[\"Central_Meridian\",3.0],PARAMETER[\"Standard_Parallel_1\",49.0],PARAMETER[\"Standard_Parallel_2\",44.0],PARAMETER[\"Latitude_Of_Origin\",46.5],UNIT[\"Meter\",1.0]]";
        let back = wkt(&directory_of(&describe(esri_lcc).unwrap())).unwrap();
        assert!(back.contains("Lambert_Conformal_Conic_2SP"), "{back}");
        assert!(describe("PROJCS[\"x\",GEOGCS[\"y\",DATUM[\"z\",SPHEROID[\"s\",6378137,298]],UNIT[\"degree\",0.0174532925199433]],PROJECTION[\"Polyconic\"]]").is_none());
        assert!(describe("UTM-32").is_none());
    }

    #[test]
    fn polar_stereographic_and_lambert_azimuthal_round_trip_as_gdal_keys_them() {
        let geogcs = "GEOGCS[\"unknown\",DATUM[\"unknown\",SPHEROID[\"unknown\",6378388,297]],PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]]";
        for projection in [
            "PROJECTION[\"Polar_Stereographic\"],PARAMETER[\"latitude_of_origin\",90],PARAMETER[\"central_meridian\",-45],PARAMETER[\"scale_factor\",0.994],PARAMETER[\"false_easting\",2000000],PARAMETER[\"false_northing\",2000000]",
            "PROJECTION[\"Polar_Stereographic\"],PARAMETER[\"latitude_of_origin\",-71],PARAMETER[\"central_meridian\",0],PARAMETER[\"false_easting\",0],PARAMETER[\"false_northing\",0]",
            "PROJECTION[\"Lambert_Azimuthal_Equal_Area\"],PARAMETER[\"latitude_of_center\",52],PARAMETER[\"longitude_of_center\",10],PARAMETER[\"false_easting\",4321000],PARAMETER[\"false_northing\",3210000]",
        ] {
            let text = format!("PROJCS[\"unnamed\",{geogcs},{projection},UNIT[\"metre\",1]]");
            let described = describe(&text).unwrap();
            assert_eq!(wkt(&directory_of(&described)).unwrap(), text);
        }
        // GDAL's keys for variant B: CT 15 with the latitude of true scale as NatOriginLat.
        let polar_b = describe(&format!("PROJCS[\"x\",{geogcs},PROJECTION[\"Polar_Stereographic\"],PARAMETER[\"latitude_of_origin\",-71],UNIT[\"metre\",1]]")).unwrap();
        assert!(polar_b.shorts.contains(&(3075, 15)));
        assert!(polar_b.doubles.contains(&(3081, vec![-71.0])));
        assert!(polar_b.doubles.contains(&(3095, vec![0.0])));
        // ESRI's name for variant B.
        let esri = describe(&format!("PROJCS[\"x\",{geogcs},PROJECTION[\"Stereographic_South_Pole\"],PARAMETER[\"Standard_Parallel_1\",-71],PARAMETER[\"Central_Meridian\",70],UNIT[\"metre\",1]]")).unwrap();
        let back = wkt(&directory_of(&esri)).unwrap();
        assert!(
            back.contains(
                "PARAMETER[\"latitude_of_origin\",-71],PARAMETER[\"central_meridian\",70]"
            ),
            "{back}"
        );
    }

    #[test]
    fn a_projection_code_fills_the_method_and_parameters_unless_the_file_states_them() {
        // Tennessee on NAD83 (15302) in international feet: lengths converted from metres.
        let tennessee = keys(
            &[
                (1024, 1),
                (2048, 4269),
                (3072, 32767),
                (3074, 15302),
                (3076, 9002),
            ],
            &[],
        );
        let text = wkt(&tennessee).unwrap();
        assert!(text.contains("Lambert_Conformal_Conic_2SP"), "{text}");
        assert!(
            text.contains("PARAMETER[\"standard_parallel_1\",35.25]"),
            "{text}"
        );
        assert!(
            text.contains("PARAMETER[\"false_easting\",2000004.000008"),
            "{text}"
        );
        // UTM 33S on a user-defined ellipsoid.
        let south = keys(
            &[
                (1024, 1),
                (2048, 32767),
                (2056, 7022),
                (3072, 32767),
                (3074, 16133),
            ],
            &[],
        );
        let text = wkt(&south).unwrap();
        assert!(
            text.contains("PARAMETER[\"central_meridian\",15]"),
            "{text}"
        );
        assert!(
            text.contains("PARAMETER[\"false_northing\",10000000]"),
            "{text}"
        );
        // With its own ProjCoordTransGeoKey the file's keys are used alone, as in libgeotiff.
        let own = keys(
            &[
                (1024, 1),
                (2048, 4326),
                (3072, 32767),
                (3074, 16032),
                (3075, 1),
            ],
            &[(3080, &[3.0])],
        );
        let text = wkt(&own).unwrap();
        assert!(text.contains("PARAMETER[\"central_meridian\",3]"), "{text}");
        assert!(text.contains("PARAMETER[\"scale_factor\",1]"), "{text}");
        // A code Basin does not know (or a method it does not read) stays user-defined.
        let unknown = keys(&[(1024, 1), (2048, 4326), (3072, 32767), (3074, 9999)], &[]);
        assert_eq!(wkt(&unknown), None);
    }

    #[test]
    fn methods_and_units_basin_cannot_state_stay_user_defined() {
        let oblique_mercator = keys(&[(1024, 1), (2048, 4326), (3072, 32767), (3075, 3)], &[]);
        assert_eq!(wkt(&oblique_mercator), None);
        let grads = keys(
            &[
                (1024, 1),
                (2048, 32767),
                (2054, 9105),
                (2056, 7030),
                (3072, 32767),
                (3075, 1),
            ],
            &[],
        );
        assert_eq!(wkt(&grads), None);
        let no_ellipsoid = keys(&[(1024, 2), (2048, 32767)], &[]);
        assert_eq!(wkt(&no_ellipsoid), None);
        let geographic = keys(&[(1024, 2), (2048, 32767), (2050, 6326), (2056, 7030)], &[]);
        assert!(wkt(&geographic).unwrap().contains("DATUM[\"WGS_1984\""));
        let pointing_outside = keys(&[(1024, 1), (3072, 32767), (3075, 1)], &[]);
        assert_eq!(wkt(&pointing_outside), None);
    }
}

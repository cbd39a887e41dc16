//! Finding an EPSG code from a coordinate system's *name*: ESRI .prj files and MIKE files
//! often carry a WKT without an authority code, whose name is the only link to the EPSG
//! registry (`WGS_1984_UTM_Zone_32N` is EPSG:32632), and MIKE also writes bare names such as
//! `UTM-32` and `LONG/LAT`.
//!
//! The index of normalised registry names is built on first use (about 6,000 entries, a few
//! milliseconds), not at start-up, because most conversions never need it.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::wkt::normalise;

/// ESRI spells datum years out where EPSG names abbreviate them; applied after
/// [`normalise`] to both sides.
const ALIASES: [(&str, &str); 9] = [
    ("wgs1984", "wgs84"),
    ("wgs1972", "wgs72"),
    ("etrs1989", "etrs89"),
    ("nad1983", "nad83"),
    ("nad1927", "nad27"),
    ("gda1994", "gda94"),
    ("ed1950", "ed50"),
    ("rgf1993", "rgf93"),
    ("osgb1936", "osgb36"),
];

/// The name of a registry WKT: its first quoted string.
pub(crate) fn wkt_name(wkt: &'static str) -> Option<&'static str> {
    let (_, rest) = wkt.split_once('"')?;
    let (name, _) = rest.split_once('"')?;
    Some(name)
}

/// The key under which a name is indexed.
fn key(name: &str) -> String {
    let mut key = normalise(name);
    for prefix in ["gcs", "d"] {
        if let Some(rest) = key.strip_prefix(prefix)
            && ALIASES.iter().any(|(long, _)| rest.starts_with(long))
        {
            key = rest.to_owned();
        }
    }
    for (long, short) in ALIASES {
        key = key.replace(long, short);
    }
    key
}

fn index() -> &'static HashMap<String, u32> {
    static INDEX: OnceLock<HashMap<String, u32>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = HashMap::new();
        // Ascending codes, first wins: where deprecated and current entries share a name,
        // the older, more widely used code is kept.
        for code in 0..=u16::MAX {
            let Some(def) = crs_definitions::from_code(code) else {
                continue;
            };
            if let Some(name) = wkt_name(def.wkt) {
                index.entry(key(name)).or_insert(u32::from(code));
            }
        }
        index
    })
}

/// The EPSG code whose registry name matches `name` after normalisation (case, punctuation,
/// ESRI's spelled-out datum years), if any.
pub(crate) fn code_by_name(name: &str) -> Option<u32> {
    let key = key(name);
    if key.is_empty() {
        return None;
    }
    index().get(&key).copied()
}

/// True when `name` matches the registry name of `code` after normalisation.
pub(crate) fn code_name_matches(code: u32, name: &str) -> bool {
    super::definition(code)
        .is_some_and(|definition| !definition.name.is_empty() && key(definition.name) == key(name))
}

/// The EPSG code of a MIKE projection name: `UTM-<zone>` (zones 1-60, northern hemisphere,
/// WGS 84, as MIKE's own WKT for these names says) and `LONG/LAT` (WGS 84 geographic).
/// `NON-UTM` (local coordinates) and anything else give `None`.
pub(crate) fn mike_code(name: &str) -> Option<u32> {
    let name = name.trim();
    if name.eq_ignore_ascii_case("LONG/LAT") {
        return Some(4326);
    }
    let zone = name
        .strip_prefix("UTM-")
        .or_else(|| name.strip_prefix("utm-"))?;
    let zone: u32 = zone.parse().ok()?;
    (1..=60).contains(&zone).then_some(32600 + zone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esri_names_match_epsg_names() {
        assert_eq!(code_by_name("WGS_1984_UTM_Zone_32N"), Some(32632));
        assert_eq!(code_by_name("WGS 84 / UTM zone 32N"), Some(32632));
        assert_eq!(code_by_name("GCS_WGS_1984"), Some(4326));
        assert_eq!(code_by_name("ETRS_1989_UTM_Zone_32N"), Some(25832));
        assert_eq!(code_by_name("no such system"), None);
        assert_eq!(code_by_name(""), None);
    }

    #[test]
    fn mike_names_map_to_wgs84_codes() {
        assert_eq!(mike_code("UTM-32"), Some(32632));
        assert_eq!(mike_code("UTM-1"), Some(32601));
        assert_eq!(mike_code("LONG/LAT"), Some(4326));
        assert_eq!(mike_code("UTM-61"), None);
        assert_eq!(mike_code("NON-UTM"), None);
    }
}

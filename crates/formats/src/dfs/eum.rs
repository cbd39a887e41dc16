//! EUM (Engineering Unit Management) item types and units: the codes DFS and .mesh files
//! store for what an item measures and in which unit, with their names.
//!
//! The codes are interoperability identifiers with no meaning of their own: 100000 is a water
//! level because the reference package's definition file (`EUM.xml`, shipped with mikecore)
//! says so. The tables are therefore generated from that file (`eum_tables.rs`, written by
//! `scripts/eum_tables.py`) rather than written by hand, and code lookups are binary searches
//! in them.
//!
//! Names are looked up for the writers, which get a quantity's name and unit from other
//! formats and from users, spelled in several ways: the definition file's descriptions
//! (`Water Level`, `meter^3/sec`), unit abbreviations and aliases (`m^3/s`), and MIKE IO's enum
//! names (`Water_Level`, `meter_pow_3_per_sec`). Matching is on a normalised key (ASCII lower
//! case; MIKE IO's `_pow_` dropped; `/` read as `per`, `%` as `percent`, `$` as `currency`;
//! every other character but letters and digits dropped), so `WaterLevel`, `water level` and
//! `Water_Level` are one name and `m3/s`, `M^3/S` and `m^3/s` one unit. Where the key would
//! be wrong, an exact spelling decides first:
//!
//! - a spelling the definition file gives several codes names the lowest, the plain one:
//!   `m` is metre (1000), not metres of water (6105); `m^3/s` is 1800. A MIKE IO name names
//!   MIKE IO's code (`Pressure` is 100450, `Pressure2` 100196).
//! - a key folding different units together names none, so only the exact spelling finds
//!   them: `ml` is millilitre and `Ml` megalitre, while `ML` finds nothing; likewise `mS`
//!   millisiemens and `ms` millisecond. MIKE IO's names decide only keys that no spelling of
//!   the definition file has.
//!
//! These rules are applied once by the script, which writes the exact spellings and the keys
//! as sorted tables; this module only normalises the name looked up and searches them.

use super::eum_tables::{ITEM_EXACT, ITEM_KEYS, ITEMS, UNIT_EXACT, UNIT_KEYS, UNITS};
use super::mapping::EUM_ITEM_UNDEFINED;

/// The name of an EUM item type, e.g. 100000 -> `Water Level`.
pub fn item_name(code: i32) -> Option<&'static str> {
    item(code).map(|&(_, name, _, _)| name)
}

/// The default unit of an EUM item type, e.g. 100000 (water level) -> 1000 (metre).
pub fn default_unit(item_code: i32) -> Option<i32> {
    item(item_code).map(|&(_, _, unit, _)| unit)
}

/// The units an EUM item type may be stored in, the default first, as the reference library
/// lists them.
pub fn allowed_units(item_code: i32) -> Option<&'static [i32]> {
    item(item_code).map(|&(_, _, _, units)| units)
}

/// Whether the reference library accepts `unit` for item type `item_code`. The undefined
/// item type (999) accepts every unit.
pub fn is_unit_allowed(item_code: i32, unit: i32) -> bool {
    if item_code == EUM_ITEM_UNDEFINED {
        return unit_name(unit).is_some();
    }
    allowed_units(item_code).is_some_and(|units| units.contains(&unit))
}

/// The abbreviation of an EUM unit, e.g. 1000 -> `m`.
pub fn unit_abbreviation(code: i32) -> Option<&'static str> {
    unit(code).map(|&(_, _, abbreviation)| abbreviation)
}

/// The name (the definition file's description) of an EUM unit, e.g. 1000 -> `meter`.
pub fn unit_name(code: i32) -> Option<&'static str> {
    unit(code).map(|&(_, name, _)| name)
}

/// The EUM item type of a name, matched as the module doc says, e.g. `Water Level`,
/// `water_level` or `WaterLevel` -> 100000.
pub fn item_code(name: &str) -> Option<i32> {
    find_name(ITEM_EXACT, ITEM_KEYS, name)
}

/// The EUM unit of an abbreviation or name, matched as the module doc says, e.g. `m`,
/// `meter` -> 1000 and `m^3/s`, `m3/s`, `meter_pow_3_per_sec` -> 1800.
pub fn unit_code(unit: &str) -> Option<i32> {
    find_name(UNIT_EXACT, UNIT_KEYS, unit)
}

fn item(code: i32) -> Option<&'static (i32, &'static str, i32, &'static [i32])> {
    let index = ITEMS.binary_search_by_key(&code, |&(code, ..)| code).ok()?;
    ITEMS.get(index)
}

fn unit(code: i32) -> Option<&'static (i32, &'static str, &'static str)> {
    let index = UNITS.binary_search_by_key(&code, |&(code, ..)| code).ok()?;
    UNITS.get(index)
}

/// The code of `name`: its exact spelling first, then its normalised key.
fn find_name(exact: &[(&str, i32)], keys: &[(&str, i32)], name: &str) -> Option<i32> {
    let name = name.trim();
    find_sorted(exact, name).or_else(|| find_sorted(keys, &normalised(name)))
}

fn find_sorted(table: &[(&str, i32)], name: &str) -> Option<i32> {
    let index = table
        .binary_search_by_key(&name, |&(spelling, _)| spelling)
        .ok()?;
    table.get(index).map(|&(_, code)| code)
}

/// The key names are matched on (the module doc; the same as `normalise` in the script).
fn normalised(name: &str) -> String {
    let lower = name.to_ascii_lowercase().replace("_pow_", "");
    let mut key = String::with_capacity(lower.len());
    for char in lower.chars() {
        match char {
            '/' => key.push_str("per"),
            '%' => key.push_str("percent"),
            '$' => key.push_str("currency"),
            _ if char.is_ascii_alphanumeric() => key.push(char),
            _ => {}
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_item_types() {
        assert_eq!(item_name(100_000), Some("Water Level"));
        assert_eq!(item_name(100_079), Some("Bathymetry"));
        assert_eq!(item_name(100_188), Some("Item geometry 3-dimensional"));
        assert_eq!(item_name(110_030), Some("Element area"));
        assert_eq!(item_name(999), Some("Undefined"));
        assert_eq!(default_unit(100_000), Some(1000));
        assert_eq!(default_unit(100_001), Some(1800));
        assert_eq!(default_unit(999), Some(0));
    }

    #[test]
    fn known_units() {
        assert_eq!(unit_abbreviation(1000), Some("m"));
        assert_eq!(unit_name(1000), Some("meter"));
        assert_eq!(unit_abbreviation(1800), Some("m^3/s"));
        assert_eq!(unit_name(1800), Some("meter^3/sec"));
        assert_eq!(unit_abbreviation(2000), Some("m/s"));
        assert_eq!(unit_abbreviation(0), Some("-"));
        assert_eq!(unit_name(0), Some("undefined"));
        assert_eq!(unit_abbreviation(2800), Some("deg C"));
    }

    #[test]
    fn unknown_codes_have_no_names() {
        for code in [
            -1,
            1,
            998,
            1017,
            99_999,
            100_999,
            999_999,
            i32::MIN,
            i32::MAX,
        ] {
            assert_eq!(item_name(code), None, "item {code}");
            assert_eq!(default_unit(code), None, "item {code}");
            assert_eq!(allowed_units(code), None, "item {code}");
            assert_eq!(unit_abbreviation(code), None, "unit {code}");
            assert_eq!(unit_name(code), None, "unit {code}");
        }
    }

    #[test]
    fn item_names_in_every_spelling() {
        let names = [
            ("Water Level", 100_000),
            ("water level", 100_000),
            ("Water_Level", 100_000),
            ("WaterLevel", 100_000),
            (" WATER LEVEL ", 100_000),
            ("Bathymetry", 100_079),
            ("u_velocity_component", 100_269),
            ("u-velocity component", 100_269),
            ("Undefined", 999),
            // MIKE IO's own names where they differ from the description.
            ("Bed_sediment_load_per_m", 100_081),
            ("Bed sediment load per length", 100_081),
            ("Pressure", 100_450),
            ("Pressure2", 100_196),
        ];
        for (name, code) in names {
            assert_eq!(item_code(name), Some(code), "{name}");
        }
    }

    #[test]
    fn item_names_differing_only_in_case_need_the_exact_spelling() {
        assert_eq!(item_code("Dispersion coefficient"), Some(100_153));
        assert_eq!(item_code("Dispersion Coefficient"), Some(100_412));
        assert_eq!(item_code("DISPERSION COEFFICIENT"), None);
    }

    #[test]
    fn unit_names_in_every_spelling() {
        let units = [
            ("m", 1000),
            ("meter", 1000),
            ("METER", 1000),
            (" m ", 1000),
            ("m^3/s", 1800),
            ("m3/s", 1800),
            ("M^3/S", 1800),
            ("meter^3/sec", 1800),
            ("meter_pow_3_per_sec", 1800),
            ("meter_per_sec", 2000),
            ("m/s", 2000),
            ("degree_Celsius", 2800),
            ("deg C", 2800),
            ("%", 99_001),
            ("percent", 99_001),
            ("-", 0),
            ("undefined", 0),
            ("__", 99_000),
            // MIKE IO's own names where they differ from the description.
            ("liter_per_minute", 1820),
            ("MetresWater", 6105),
        ];
        for (unit, code) in units {
            assert_eq!(unit_code(unit), Some(code), "{unit}");
        }
    }

    #[test]
    fn units_differing_only_in_case_need_the_exact_spelling() {
        assert_eq!(unit_code("ml"), Some(1602));
        assert_eq!(unit_code("Ml"), Some(1609));
        assert_eq!(unit_code("ML"), None);
        assert_eq!(unit_code("ms"), Some(1406));
        assert_eq!(unit_code("mS"), Some(99_251));
        assert_eq!(unit_code("MS"), None);
    }

    #[test]
    fn unknown_names_have_no_codes() {
        for name in ["", " ", "-x-", "no such thing", "Wasserstand", "()()"] {
            assert_eq!(item_code(name), None, "{name:?}");
        }
        for name in ["", " ", "parsec", "furlong/fortnight", "ÅÄÖ"] {
            assert_eq!(unit_code(name), None, "{name:?}");
        }
    }

    #[test]
    fn every_spelling_of_the_file_finds_its_code() {
        // A spelling the file gives several codes names the lowest of them (the module doc).
        let lowest = |spelling: &str| {
            let units = UNITS
                .iter()
                .filter(|&&(_, name, abbreviation)| name == spelling || abbreviation == spelling);
            units.map(|&(code, ..)| code).min()
        };
        for &(code, name, abbreviation) in UNITS {
            assert_eq!(
                unit_code(abbreviation),
                lowest(abbreviation),
                "{abbreviation}"
            );
            assert_eq!(unit_code(name), lowest(name), "{name}");
            if lowest(abbreviation) == Some(code) {
                assert_eq!(unit_abbreviation(code), Some(abbreviation));
            }
        }
        let mut unique = 0;
        for &(code, name, _, _) in ITEMS {
            if ITEMS
                .iter()
                .filter(|&&(_, other, ..)| other == name)
                .count()
                == 1
            {
                assert_eq!(item_code(name), Some(code), "{name}");
                unique += 1;
            }
        }
        assert!(unique > 580, "{unique} unique item names");
    }

    #[test]
    fn item_types_allow_their_units() {
        assert!(is_unit_allowed(100_000, 1000));
        assert!(is_unit_allowed(100_000, 1003));
        assert!(!is_unit_allowed(100_000, 1800));
        assert!(is_unit_allowed(100_001, 1800));
        assert!(is_unit_allowed(100_079, 1000));
        assert!(is_unit_allowed(EUM_ITEM_UNDEFINED, 2800));
        assert!(!is_unit_allowed(EUM_ITEM_UNDEFINED, 12_345));
        assert!(!is_unit_allowed(12_345, 1000));
        assert_eq!(allowed_units(100_000).and_then(<[i32]>::first), Some(&1000));
    }

    #[test]
    fn tables_are_sorted_and_consistent() {
        assert!(ITEMS.windows(2).all(|pair| pair[0].0 < pair[1].0));
        assert!(UNITS.windows(2).all(|pair| pair[0].0 < pair[1].0));
        for table in [ITEM_EXACT, ITEM_KEYS, UNIT_EXACT, UNIT_KEYS] {
            assert!(table.windows(2).all(|pair| pair[0].0 < pair[1].0));
        }
        // The script normalised the keys as this module does.
        for &(key, _) in ITEM_KEYS.iter().chain(UNIT_KEYS) {
            assert_eq!(normalised(key), key);
        }
        for &(code, name, default, allowed) in ITEMS {
            assert!(
                unit_name(default).is_some(),
                "{name}: default unit {default}"
            );
            assert_eq!(allowed.first(), Some(&default), "{name}");
            assert!(
                allowed.iter().all(|&unit| unit_name(unit).is_some()),
                "{name}"
            );
            assert!(is_unit_allowed(code, default), "{name}");
        }
        for &(_, code) in ITEM_EXACT.iter().chain(ITEM_KEYS) {
            assert!(item_name(code).is_some(), "item {code}");
        }
        for &(_, code) in UNIT_EXACT.iter().chain(UNIT_KEYS) {
            assert!(unit_name(code).is_some(), "unit {code}");
        }
    }
}

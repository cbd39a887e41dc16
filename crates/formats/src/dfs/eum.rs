//! EUM (Engineering Unit Management) item types and units: the codes DFS and .mesh files
//! store for what an item measures and in which unit, with their names.
//!
//! TODO(issue 12, EUM helper): generated tables from scripts/eum_tables.py.

/// The name of an EUM item type, e.g. 100000 -> `Water Level`.
pub fn item_name(code: i32) -> Option<&'static str> {
    let _ = code;
    None
}

/// The abbreviation of an EUM unit, e.g. 1000 -> `m`.
pub fn unit_abbreviation(code: i32) -> Option<&'static str> {
    let _ = code;
    None
}

/// The EUM item type of a name (case-insensitive).
pub fn item_code(name: &str) -> Option<i32> {
    let _ = name;
    None
}

/// The EUM unit of an abbreviation or name.
pub fn unit_code(unit: &str) -> Option<i32> {
    let _ = unit;
    None
}

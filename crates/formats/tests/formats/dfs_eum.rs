//! The EUM tables against what MIKE IO and the reference library report for the corpus: every
//! item type and unit name MIKE IO gives finds its code, every code in a corpus file has a
//! name, and every unit MIKE IO and the reference library report is one its item type allows.

use std::path::{Path, PathBuf};

use basin_formats::ReadLimits;
use basin_formats::dfs::container::DfsFile;
use basin_formats::dfs::eum::{
    default_unit, is_unit_allowed, item_code, item_name, unit_abbreviation, unit_code, unit_name,
};
use serde_json::Value;

use crate::dfs_container::dfs_files;

/// The JSON files of `tests/corpus/<folder>/` whose names end in `.json`.
fn json_files(folder: &str) -> Vec<(PathBuf, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/corpus")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = crate::helpers::python_json(&std::fs::read_to_string(&path).unwrap());
            let json = serde_json::from_str(&text)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            (path, json)
        })
        .collect()
}

fn code(value: &Value, field: &str) -> i32 {
    i32::try_from(
        value[field]
            .as_i64()
            .unwrap_or_else(|| panic!("no {field} in {value}")),
    )
    .unwrap()
}

/// Checks one item MIKE IO describes by type and unit names and codes; returns the failures.
fn check_names(item: &Value, fields: [&str; 4]) -> Vec<String> {
    let [type_name, type_code, unit, unit_code_field] = fields;
    let (eum_type, eum_unit) = (code(item, type_code), code(item, unit_code_field));
    let mut failures = Vec::new();
    if let Some(name) = item[type_name].as_str()
        && item_code(name) != Some(eum_type)
    {
        let found = item_code(name);
        failures.push(format!("type {name:?} gives {found:?}, not {eum_type}"));
    }
    if let Some(name) = item[unit].as_str()
        && unit_code(name) != Some(eum_unit)
    {
        let found = unit_code(name);
        failures.push(format!("unit {name:?} gives {found:?}, not {eum_unit}"));
    }
    // Known codes, and a unit the type allows (which only known codes can be).
    if !is_unit_allowed(eum_type, eum_unit) {
        failures.push(format!("type {eum_type} with unit {eum_unit}"));
    }
    failures
}

/// `check_names` on the items of every JSON file of `folder`: the failures, and how many items
/// were checked.
fn check_folder(folder: &str, fields: [&str; 4]) -> (Vec<String>, usize) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (path, json) in json_files(folder) {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for item in json["items"].as_array().into_iter().flatten() {
            let found = check_names(item, fields);
            failures.extend(
                found
                    .into_iter()
                    .map(|failure| format!("{file}: {failure}")),
            );
            checked += 1;
        }
    }
    (failures, checked)
}

#[test]
fn mikeio_names_of_the_samples_find_their_codes() {
    let fields = ["eum_type", "eum_type_code", "eum_unit", "eum_unit_code"];
    let (failures, checked) = check_folder("dfs-samples", fields);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 15, "only {checked} items checked");
}

#[test]
fn mikeio_names_of_the_mikeio_corpus_find_their_codes() {
    let (failures, checked) = check_folder(
        "mikeio/expected",
        ["type", "type_code", "unit", "unit_code"],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 50, "only {checked} items checked");
}

#[test]
fn the_reference_librarys_codes_of_the_samples_are_allowed() {
    // Its account gives codes only, of the dynamic and the static items.
    let mut failures = Vec::new();
    let mut checked = 0;
    for (path, json) in json_files("dfs-samples") {
        let mikecore = &json["mikecore"];
        let dynamic = mikecore["dynamic_items"].as_array().into_iter().flatten();
        for item in dynamic.chain(mikecore["static_items"].as_array().into_iter().flatten()) {
            let (eum_type, eum_unit) = (code(item, "eum_item_code"), code(item, "eum_unit_code"));
            if !is_unit_allowed(eum_type, eum_unit) {
                failures.push(format!(
                    "{}: type {eum_type} with unit {eum_unit}",
                    path.display()
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 20, "only {checked} items checked");
}

#[test]
fn every_code_in_the_corpus_files_has_a_name() {
    let mut failures = Vec::new();
    for path in dfs_files() {
        let file = DfsFile::open(&path, &ReadLimits::default()).unwrap();
        let header = &file.header;
        let statics = header.statics.iter().map(|item| &item.info);
        for info in header.items.iter().chain(statics) {
            if item_name(info.eum_item).is_none() || unit_name(info.eum_unit).is_none() {
                failures.push(format!(
                    "{}: item {:?} has type {} and unit {}",
                    path.display(),
                    info.name,
                    info.eum_item,
                    info.eum_unit
                ));
            }
            if unit_name(info.axis.unit).is_none() {
                failures.push(format!("{}: axis unit {}", path.display(), info.axis.unit));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn names_read_are_names_written() {
    // What the DFS readers put in a quantity (the item type's name and the unit's
    // abbreviation) finds the same codes again when written.
    for (eum_type, eum_unit) in [
        (100_000, 1000),
        (100_001, 1800),
        (100_079, 1000),
        (100_006, 2800),
    ] {
        assert_eq!(item_name(eum_type).and_then(item_code), Some(eum_type));
        assert_eq!(
            unit_abbreviation(eum_unit).and_then(unit_code),
            Some(eum_unit)
        );
        assert!(is_unit_allowed(eum_type, eum_unit));
        assert!(default_unit(eum_type).is_some());
    }
}

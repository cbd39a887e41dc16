//! `basin convert` and `basin formats` through the built binary: exit codes, messages, and
//! the JSON shape of the reader and writer lists (docs/conversion.md#readers-and-writers). These tests need no
//! server or database; the conversions themselves are tested in the formats crate.

use std::path::Path;
use std::process::Output;

use crate::helpers::{basin_in, dfs_sample_path, stderr_of};

use serde_json::Value;

fn basin(dir: &Path, args: &[&str]) -> Output {
    basin_in(dir, args)
}

fn stderr(output: &Output) -> String {
    stderr_of(output)
}

/// Runs a command that must fail; returns its stderr.
fn failing(dir: &Path, args: &[&str]) -> String {
    let output = basin(dir, args);
    assert!(
        !output.status.success(),
        "basin {args:?} succeeded: {}",
        stderr(&output)
    );
    stderr(&output)
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn convert_copies_a_file_with_the_plain_copy_pair() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.bin"), b"\x00\x01 any bytes").unwrap();
    let output = basin(
        dir.path(),
        &[
            "convert",
            "in.bin",
            "out.bin",
            "--reader",
            "filereader",
            "--writer",
            "FileWriter",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        std::fs::read(dir.path().join("out.bin")).unwrap(),
        b"\x00\x01 any bytes"
    );
    let message = stderr(&output);
    assert!(message.contains("wrote out.bin"), "{message}");
    assert!(message.contains("FileReader -> FileWriter"), "{message}");
    // Piped stderr is not a terminal: no progress bar, no control characters.
    assert!(!message.contains('\u{1b}'), "{message:?}");
    assert!(output.stdout.is_empty());
}

#[test]
fn convert_refuses_an_existing_output_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.bin"), b"new").unwrap();
    std::fs::write(dir.path().join("out.bin"), b"old").unwrap();
    let args = [
        "convert",
        "in.bin",
        "out.bin",
        "--reader",
        "FileReader",
        "--writer",
        "FileWriter",
    ];
    let message = failing(dir.path(), &args);
    assert!(message.contains("--force"), "{message}");
    assert_eq!(std::fs::read(dir.path().join("out.bin")).unwrap(), b"old");
    let mut forced = args.to_vec();
    forced.push("--force");
    assert!(basin(dir.path(), &forced).status.success());
    assert_eq!(std::fs::read(dir.path().join("out.bin")).unwrap(), b"new");
}

#[test]
fn convert_infers_formats_from_extensions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.asc"), "not a grid\n").unwrap();
    let message = failing(dir.path(), &["convert", "in.asc", "out.tif"]);
    assert!(
        message.contains("AsciiGridReader -> GeoTiffWriter"),
        "{message}"
    );
    assert_eq!(files(dir.path()), vec!["in.asc"], "no partial output");

    let message = failing(dir.path(), &["convert", "in.asc", "out.unknown"]);
    assert!(message.contains("--writer"), "{message}");
    std::fs::write(dir.path().join("in.what"), "x").unwrap();
    let message = failing(dir.path(), &["convert", "in.what", "out.tif"]);
    assert!(message.contains("--reader"), "{message}");
    let message = failing(dir.path(), &["convert", "in.asc", "out.geojson"]);
    assert!(message.contains("cannot feed"), "{message}");
}

#[test]
fn convert_names_unknown_readers_and_writers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.asc"), "x").unwrap();
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "--reader", "NoSuchReader"],
    );
    assert!(message.contains("NoSuchReader"), "{message}");
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "--writer", "NoSuchWriter"],
    );
    assert!(message.contains("NoSuchWriter"), "{message}");
    assert_eq!(files(dir.path()), vec!["in.asc"]);
}

#[test]
fn convert_rejects_bad_parameters_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.asc"), "x").unwrap();
    let message = failing(dir.path(), &["convert", "in.asc", "out.tif", "-p", "SRID"]);
    assert!(message.contains("NAME=VALUE"), "{message}");
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "-p", "Colour=red"],
    );
    assert!(
        message.contains("Colour") && message.contains("unknown"),
        "{message}"
    );
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "-p", "SRID=abc"],
    );
    assert!(message.contains("SRID"), "{message}");
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "-w", "Colour=red"],
    );
    assert!(message.contains("Colour"), "{message}");
    assert_eq!(files(dir.path()), vec!["in.asc"]);
}

#[test]
fn convert_rejects_unknown_srids_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.asc"), "x").unwrap();
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "--output-srid", "99999"],
    );
    assert!(message.contains("99999"), "{message}");
    let message = failing(
        dir.path(),
        &[
            "convert",
            "in.asc",
            "out.tif",
            "--output-srid",
            "4326",
            "--input-srid",
            "12",
        ],
    );
    assert!(message.contains("12"), "{message}");
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "--input-srid", "4326"],
    );
    assert!(message.contains("--output-srid"), "{message}");
    let message = failing(
        dir.path(),
        &["convert", "in.asc", "out.tif", "--output-srid", "-5"],
    );
    assert!(
        message.contains("-5") || message.contains("output-srid"),
        "{message}"
    );
    assert_eq!(files(dir.path()), vec!["in.asc"]);
}

#[test]
fn convert_reports_a_missing_input_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let message = failing(
        dir.path(),
        &[
            "convert",
            "missing.bin",
            "out.bin",
            "--reader",
            "FileReader",
            "--writer",
            "FileWriter",
        ],
    );
    assert!(
        message.contains("missing.bin") && message.contains("does not exist"),
        "{message}"
    );
    assert!(files(dir.path()).is_empty());
}

/// Issue 33: a missing output folder printed the OS error twice.
#[test]
fn convert_names_a_missing_output_folder_once_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let input = dfs_sample_path("mesh2d_mixed.dfsu");
    let input = input.to_str().unwrap();
    let message = failing(dir.path(), &["convert", input, "out/b.vtu"]);
    assert_eq!(
        message,
        "error: the output folder out does not exist; create it first\n"
    );
    assert!(files(dir.path()).is_empty());
}

/// An error whose message already ends with its cause (the formats crate's I/O errors) prints
/// the cause once.
#[test]
fn convert_prints_an_error_and_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let input = dfs_sample_path("mesh2d_mixed.dfsu");
    // A file where the steps folder of b.pvd must go.
    std::fs::write(dir.path().join("b"), "in the way").unwrap();
    let message = failing(dir.path(), &["convert", input.to_str().unwrap(), "b.pvd"]);
    let cause = "a file has the name of the folder for the time steps";
    assert_eq!(message.matches(cause).count(), 1, "{message}");
    assert!(
        message.starts_with("error: DfsuReader -> VtuWriter: writing b: "),
        "{message}"
    );
    assert_eq!(files(dir.path()), ["b"], "no partial output");
}

#[test]
fn convert_help_says_where_the_steps_of_a_vtu_output_go() {
    let dir = tempfile::tempdir().unwrap();
    let output = basin(dir.path(), &["convert", "--help"]);
    // clap wraps the text to the terminal's width: compare the words, not the lines.
    let help = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for words in [
        "is written as `x.zip` holding `x.pvd`",
        "a folder `x/`",
        "`x/x_0000.vtu`",
    ] {
        assert!(help.contains(words), "{words}: {help}");
    }
}

/// Issue 33: `x.pvd` gives the collection plus a folder `x/` of steps; an earlier series is
/// refused without --force and replaced whole with it.
#[test]
fn convert_writes_a_pvd_and_a_folder_of_steps() {
    let dir = tempfile::tempdir().unwrap();
    let input = dfs_sample_path("mesh2d_mixed.dfsu");
    let input = input.to_str().unwrap();
    let output = basin(dir.path(), &["convert", input, "b.pvd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(files(dir.path()), ["b", "b.pvd"]);
    let steps: Vec<String> = (0..5).map(|step| format!("b_{step:04}.vtu")).collect();
    assert_eq!(files(&dir.path().join("b")), steps);
    let pvd = std::fs::read_to_string(dir.path().join("b.pvd")).unwrap();
    assert!(pvd.contains("<VTKFile type=\"Collection\""), "{pvd}");
    for (step, name) in steps.iter().enumerate() {
        let line = format!(
            "<DataSet timestep=\"{:?}\" group=\"\" part=\"0\" file=\"b/{name}\"/>",
            step as f64 * 900.0
        );
        assert!(pvd.contains(&line), "{line}: {pvd}");
    }
    let message = stderr(&output);
    assert!(message.contains("wrote b.pvd\n"), "{message}");
    assert!(message.contains(&format!(
        "wrote {}",
        Path::new("b").join("b_0004.vtu").display()
    )));
    assert!(!message.contains("note:"), "{message}");

    // An earlier step alone is enough to refuse; --force removes the steps of the earlier
    // series, the one past the new series included.
    std::fs::remove_file(dir.path().join("b.pvd")).unwrap();
    std::fs::write(dir.path().join("b").join("b_0007.vtu"), "earlier").unwrap();
    let message = failing(dir.path(), &["convert", input, "b.pvd"]);
    assert!(
        message.contains("b_0000.vtu exists (a time step of an earlier b.pvd); pass --force"),
        "{message}"
    );
    let output = basin(dir.path(), &["convert", input, "b.pvd", "--force"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(files(&dir.path().join("b")), steps);
}

#[test]
fn formats_lists_readers_writers_and_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let output = basin(dir.path(), &["formats"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "Readers",
        "Writers",
        "GeoTiffReader",
        "AsciiGridWriter",
        "-p SRID=<Integer>",
        "-w GeometryType=<String>",
        "-w RotatedGrids=<String>",
        "writers: FileWriter",
    ] {
        assert!(text.contains(expected), "{expected} missing from\n{text}");
    }
}

fn check_parameters(owner: &str, parameters: &Value) {
    for parameter in parameters.as_array().unwrap() {
        let object = parameter.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "allowedValues",
                "dataType",
                "defaultValue",
                "description",
                "name",
                "required"
            ],
            "{owner}"
        );
        assert!(parameter["name"].is_string());
        assert!(parameter["description"].is_string());
        assert!(
            ["String", "Integer", "Double", "Boolean", "StringList"]
                .contains(&parameter["dataType"].as_str().unwrap()),
            "{owner}"
        );
        assert!(parameter["required"].is_boolean());
        assert!(parameter["defaultValue"].is_null() || parameter["defaultValue"].is_string());
        assert!(parameter["allowedValues"].is_array());
    }
}

#[test]
fn formats_json_has_the_shape_of_the_reader_and_writer_lists() {
    let dir = tempfile::tempdir().unwrap();
    let output = basin(dir.path(), &["formats", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
    let readers = listing["readers"].as_array().unwrap();
    let writers = listing["writers"].as_array().unwrap();
    assert!(readers.len() >= 8 && writers.len() >= 7);
    let writer_names: Vec<&str> = writers
        .iter()
        .map(|writer| writer["name"].as_str().unwrap())
        .collect();
    for reader in readers {
        let name = reader["name"].as_str().unwrap();
        let object = reader.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "datasetFormat",
                "description",
                "name",
                "parameters",
                "writers"
            ],
            "{name}"
        );
        check_parameters(name, &reader["parameters"]);
        for writer in reader["writers"].as_array().unwrap() {
            assert!(
                writer_names.contains(&writer.as_str().unwrap()),
                "{name} lists an unknown writer {writer}"
            );
        }
    }
    for writer in writers {
        let name = writer["name"].as_str().unwrap();
        let mut keys: Vec<&str> = writer
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["datasetFormat", "description", "name", "parameters"],
            "{name}"
        );
        check_parameters(name, &writer["parameters"]);
    }
    let geotiff = readers
        .iter()
        .find(|reader| reader["name"] == "GeoTiffReader")
        .unwrap();
    assert_eq!(geotiff["datasetFormat"], ".tif");
    assert!(
        geotiff["writers"]
            .as_array()
            .unwrap()
            .contains(&Value::from("AsciiGridWriter"))
    );
}

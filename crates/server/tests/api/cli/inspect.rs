//! `basin inspect` through the built binary: the text and JSON forms, the DFS container
//! section (before any DFS reader), statistics, and the exit status and message of failures.
//! What an inspection contains is tested in the formats crate; the `--steps` and `--items`
//! options of `basin convert` are tested here too, since they share the binary.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::helpers::{basin_in, dfs_sample_path, stderr_of, stdout_of};

fn basin(dir: &Path, args: &[&str]) -> Output {
    basin_in(dir, args)
}

fn stdout(output: &Output) -> String {
    stdout_of(output)
}

fn stderr(output: &Output) -> String {
    stderr_of(output)
}

/// Runs a command that must succeed; returns its stdout.
fn succeeding(dir: &Path, args: &[&str]) -> String {
    let output = basin(dir, args);
    assert!(
        output.status.success(),
        "basin {args:?} failed: {}",
        stderr(&output)
    );
    stdout(&output)
}

/// Runs a command that must fail; returns its stderr.
fn failing(dir: &Path, args: &[&str]) -> String {
    let output = basin(dir, args);
    assert!(
        !output.status.success(),
        "basin {args:?} succeeded: {}",
        stdout(&output)
    );
    assert!(output.stdout.is_empty(), "{}", stdout(&output));
    stderr(&output)
}

const GRID: &str = "ncols 3\nnrows 2\nxllcorner 500000\nyllcorner 6000000\ncellsize 10\n\
                    NODATA_value -9999\n1 2 3\n4 -9999 6.5\n";

#[test]
fn inspect_prints_an_aligned_summary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("depth.asc"), GRID).unwrap();
    let text = succeeding(dir.path(), &["inspect", "depth.asc"]);
    for expected in [
        "File        depth.asc (",
        "Reader      AsciiGridReader (.asc)",
        "Kind        grid",
        "Extent      x 500000 to 500030, y 6000000 to 6000020",
        "Grid        3 columns x 2 rows, cells 10 x 10",
        "Items       1",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    assert!(!text.contains("Statistics"), "{text}");
}

#[test]
fn inspect_json_has_statistics_and_values_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("depth.asc"), GRID).unwrap();
    let output = succeeding(
        dir.path(),
        &["inspect", "depth.asc", "--json", "--statistics", "--values"],
    );
    let document: Value = serde_json::from_str(&output).unwrap();
    assert_eq!(document["reader"], "AsciiGridReader");
    assert_eq!(document["kind"], "grid");
    assert_eq!(document["geometry"]["type"], "grid");
    assert_eq!(document["geometry"]["columns"], 3);
    let statistics = &document["statistics"][0];
    assert_eq!(statistics["min"], 1.0);
    assert_eq!(statistics["max"], 6.5);
    assert_eq!(statistics["countValid"], 5);
    assert_eq!(statistics["countNan"], 1);
    assert_eq!(
        document["values"][0]["items"][0].as_array().unwrap().len(),
        6
    );
    let text = succeeding(dir.path(), &["inspect", "depth.asc", "--statistics"]);
    assert!(text.contains("Statistics"), "{text}");
}

#[test]
fn inspect_shows_the_dfs_container_of_any_dfs_file() {
    let dir = tempfile::tempdir().unwrap();
    let sample = dfs_sample_path("grid_utm32.dfs2");
    let sample = sample.to_str().unwrap();
    let text = succeeding(dir.path(), &["inspect", sample]);
    for expected in ["DFS container", "CalendarEquidistant", "UTM-32", "EqD2"] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    let document: Value =
        serde_json::from_str(&succeeding(dir.path(), &["inspect", sample, "--json"])).unwrap();
    assert_eq!(document["dfs"]["time"]["type"], "CalendarEquidistant");
    assert_eq!(document["dfs"]["items"][0]["name"], "H");
    assert_eq!(
        document["dfs"]["items"][0]["axis"]["counts"],
        serde_json::json!([5, 4])
    );
}

#[test]
fn inspect_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let message = failing(dir.path(), &["inspect", "missing.asc"]);
    assert!(
        message.contains("missing.asc") && message.contains("does not exist"),
        "{message}"
    );
    std::fs::write(dir.path().join("notes.what"), "hello").unwrap();
    let message = failing(dir.path(), &["inspect", "notes.what"]);
    assert!(message.contains("--reader"), "{message}");
    let message = failing(
        dir.path(),
        &["inspect", "notes.what", "--reader", "NoSuchReader"],
    );
    assert!(message.contains("NoSuchReader"), "{message}");
    std::fs::write(dir.path().join("broken.asc"), "not a grid\n").unwrap();
    let message = failing(dir.path(), &["inspect", "broken.asc", "--json"]);
    assert!(
        message.contains("cannot inspect broken.asc") && message.contains("ASCII Grid"),
        "{message}"
    );
    std::fs::write(dir.path().join("depth.asc"), GRID).unwrap();
    let message = failing(dir.path(), &["inspect", "depth.asc", "-r", "Colour=red"]);
    assert!(message.contains("Colour"), "{message}");
    let message = failing(dir.path(), &["inspect", "depth.asc", "-r", "SRID"]);
    assert!(message.contains("NAME=VALUE"), "{message}");
}

#[test]
fn convert_keeps_the_steps_and_items_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("depth.asc"), GRID).unwrap();
    let output = basin(
        dir.path(),
        &[
            "convert",
            "depth.asc",
            "out.tif",
            "--steps",
            "0",
            "--items",
            "depth",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let message = failing(
        dir.path(),
        &["convert", "depth.asc", "bad.tif", "--steps", "x"],
    );
    assert!(message.contains("--steps"), "{message}");
    let message = failing(
        dir.path(),
        &["convert", "depth.asc", "bad.tif", "--steps", ":"],
    );
    assert!(message.contains("--steps"), "{message}");
    let message = failing(
        dir.path(),
        &["convert", "depth.asc", "bad.tif", "--items", "nosuch"],
    );
    assert!(message.contains("nosuch"), "{message}");
    assert!(!dir.path().join("bad.tif").exists());
}

//! Answers EDR position queries on a local file, as the server's `edr` area would: the
//! independent check of tests/python/test_edr_mikeio.py, which compares the answers with MIKE
//! IO's `Dataset.sel(x=, y=)`.
//!
//! ```text
//! cargo run -p basin-edr --example edr_position -- FILE [--crs EPSG:n|CRS84]
//!     [--datetime INTERVAL] [--parameter-name NAMES] < coords
//! ```
//!
//! The file is described once (its format from its extension, with the standard catalogue);
//! each non-empty stdin line is the `coords` of one query (a WKT `POINT` or `MULTIPOINT`),
//! answered with the other options, and printed as one line of CoverageJSON. The first query
//! that fails stops the run: its error goes to stderr as `Kind: message` (the `EdrError`
//! variant, e.g. `NoData: ...`) and the exit code is 1.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use basin_edr::position::PositionQuery;
use basin_edr::{Dataset, EdrError, Limits, covjson};
use basin_formats::Catalogue;

#[derive(Debug, Default)]
struct Options {
    file: PathBuf,
    crs: Option<String>,
    datetime: Option<String>,
    parameter_names: Option<String>,
}

const USAGE: &str = "usage: edr_position FILE [--crs EPSG:n|CRS84] [--datetime INTERVAL] \
                     [--parameter-name NAMES] < coords";

fn options() -> Result<Options, String> {
    let mut options = Options::default();
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut value = || {
            arguments
                .next()
                .ok_or_else(|| format!("{argument} needs a value"))
        };
        match argument.as_str() {
            "--crs" => options.crs = Some(value()?),
            "--datetime" => options.datetime = Some(value()?),
            "--parameter-name" => options.parameter_names = Some(value()?),
            _ if options.file.as_os_str().is_empty() && !argument.starts_with("--") => {
                options.file = argument.into();
            }
            _ => return Err(format!("unexpected argument {argument}\n{USAGE}")),
        }
    }
    if options.file.as_os_str().is_empty() {
        return Err(USAGE.to_owned());
    }
    Ok(options)
}

/// The name of `error`'s variant, which the Python tests match on.
fn kind(error: &EdrError) -> &'static str {
    match error {
        EdrError::Invalid { .. } => "Invalid",
        EdrError::TooLarge(_) => "TooLarge",
        EdrError::NoData(_) => "NoData",
        EdrError::NotSupported(_) => "NotSupported",
        EdrError::Unreadable(_) => "Unreadable",
    }
}

/// Answers every query of stdin; the first failure is returned.
fn run(options: &Options) -> Result<(), EdrError> {
    let catalogue = Catalogue::standard();
    let extension = options
        .file
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or_default();
    let format = format!(".{}", extension.to_ascii_lowercase());
    let dataset = Dataset::describe(&catalogue, &format, &options.file)?;
    let limits = Limits::default();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|error| EdrError::invalid("coords", error.to_string()))?;
        if line.trim().is_empty() {
            continue;
        }
        let query = PositionQuery::parse(
            Some(&line),
            options.datetime.as_deref(),
            options.parameter_names.as_deref(),
            options.crs.as_deref(),
            &limits,
        )?;
        let answer = query.answer(&catalogue, &dataset, &options.file, &limits)?;
        writeln!(out, "{}", covjson::write(&answer))
            .map_err(|error| EdrError::Unreadable(format!("writing the answer: {error}")))?;
    }
    out.flush()
        .map_err(|error| EdrError::Unreadable(format!("writing the answer: {error}")))
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}: {error}", kind(&error));
            ExitCode::FAILURE
        }
    }
}

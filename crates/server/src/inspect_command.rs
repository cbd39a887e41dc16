//! `basin inspect`: a summary of any file the catalogue's readers read (and of any DFS file,
//! through the generic container), offline. The formats crate builds the summary
//! ([`basin_formats::inspect`]) and its text form; this module parses the command line,
//! shows a progress bar while values stream, and prints text or JSON.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context;
use basin_formats::Catalogue;
use basin_formats::ReadContext;
use basin_formats::inspect::{InspectOptions, inspect as inspect_file};
use clap::Args;

use crate::convert_command::{ProgressBar, parse_pairs};

/// Arguments of `basin inspect`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The file to inspect.
    file: PathBuf,
    /// Reader name (see `basin formats`); inferred from the extension when omitted.
    #[arg(long)]
    reader: Option<String>,
    /// A reader parameter, NAME=VALUE (repeatable; `-p` as in `basin convert` works too).
    #[arg(
        short = 'r',
        long = "reader-parameter",
        visible_short_alias = 'p',
        value_name = "NAME=VALUE"
    )]
    parameters: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Print every value of every item and step (small files only).
    #[arg(long)]
    values: bool,
    /// Read every value and print per-item minimum, maximum, mean and counts.
    #[arg(long)]
    statistics: bool,
}

/// Runs `basin inspect`.
pub(crate) fn inspect(args: &InspectArgs) -> anyhow::Result<()> {
    if !args.file.exists() {
        anyhow::bail!("{} does not exist", args.file.display());
    }
    let reader_parameters = parse_pairs(&args.parameters)?;
    let reads_values = args.values || args.statistics;
    let bar = ProgressBar::new(reads_values && std::io::stderr().is_terminal());
    let options = InspectOptions {
        values: args.values,
        statistics: args.statistics,
        context: ReadContext {
            progress: &bar,
            ..ReadContext::default()
        },
    };
    let result = inspect_file(
        &Catalogue::standard(),
        &args.file,
        args.reader.as_deref(),
        &reader_parameters,
        &options,
    );
    bar.finish();
    let inspection = result.with_context(|| format!("cannot inspect {}", args.file.display()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &inspection)?;
        writeln!(out)?;
    } else {
        write!(out, "{inspection}")?;
    }
    out.flush()?;
    Ok(())
}

//! `basin convert` and `basin formats`: the conversion pipeline of the formats crate, offline,
//! on local files. The same catalogue and pipeline run the server's conversion jobs, so what
//! works here works there.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use basin_formats::{
    Catalogue, Conversion, ItemSelection, Progress, ReadContext, TemporalFilter, Transformation,
};
use clap::Args;
use serde::Serialize;

/// Arguments of `basin convert`.
#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// The file to read.
    input: PathBuf,
    /// The file to write (its extension picks the writer unless --writer is given).
    ///
    /// VTU with several time steps: an output `x.vtu` is written as `x.zip` holding `x.pvd`
    /// and one .vtu per step (a note says so). Name the output `x.pvd` instead for `x.pvd`
    /// plus a folder `x/` beside it holding `x/x_0000.vtu`, `x/x_0001.vtu`, ..., which ParaView
    /// opens as one time series. Its folder must exist; the steps folder is created.
    output: PathBuf,
    /// Reader name (see `basin formats`); inferred from the input's extension when omitted.
    #[arg(long)]
    reader: Option<String>,
    /// Writer name; inferred from the output's extension when omitted.
    #[arg(long)]
    writer: Option<String>,
    /// A reader parameter, NAME=VALUE (repeatable).
    #[arg(short = 'p', long = "parameter", value_name = "NAME=VALUE")]
    parameters: Vec<String>,
    /// A writer parameter, NAME=VALUE (repeatable).
    #[arg(short = 'w', long = "writer-parameter", value_name = "NAME=VALUE")]
    writer_parameters: Vec<String>,
    /// Reproject to this EPSG code.
    #[arg(long)]
    output_srid: Option<u32>,
    /// EPSG code of the input, when the file does not state it (used with --output-srid).
    #[arg(long, requires = "output_srid")]
    input_srid: Option<u32>,
    /// Keep only these items (or feature fields), by name, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    items: Vec<String>,
    /// Keep only these time steps, by zero-based index: `N`, `FROM:TO` (inclusive), `FROM:`
    /// or `:TO`.
    #[arg(long, value_name = "FROM:TO")]
    steps: Option<String>,
    /// Replace the output if it exists (for a .pvd output, also the step files of its
    /// steps folder).
    #[arg(long)]
    force: bool,
}

/// Arguments of `basin formats`.
#[derive(Debug, Args)]
pub(crate) struct FormatsArgs {
    /// Print JSON in the shape of the interface's reader and writer lists.
    #[arg(long)]
    json: bool,
}

/// Inputs smaller than this convert without a progress bar: they finish before one helps.
const PROGRESS_BAR_BYTES_MIN: u64 = 16 * 1024 * 1024;

/// Runs `basin convert`.
pub(crate) fn convert(args: &ConvertArgs) -> anyhow::Result<()> {
    if !args.input.exists() {
        anyhow::bail!("the input {} does not exist", args.input.display());
    }
    check_output(&args.output, args.force)?;
    let reader_parameters = parse_pairs(&args.parameters)?;
    let writer_parameters = parse_pairs(&args.writer_parameters)?;
    let transformations = transformations_of(args)?;
    let conversion = Conversion {
        reader: args.reader.as_deref(),
        writer: args.writer.as_deref(),
        reader_parameters: &reader_parameters,
        writer_parameters: &writer_parameters,
        transformations: &transformations,
    };
    let catalogue = Catalogue::standard();
    let prepared = catalogue.prepare(&args.input, &args.output, &conversion)?;
    let started = std::time::Instant::now();
    let bar = ProgressBar::new(std::io::stderr().is_terminal());
    let context = ReadContext {
        progress: &bar,
        ..ReadContext::default()
    };
    let result = prepared.run(&args.input, &args.output, &transformations, &context);
    // Cleared on failure too, so that the error message is not drawn over a half bar.
    bar.finish();
    let written = result.with_context(|| {
        format!(
            "{} -> {}",
            prepared.reader.spec().name,
            prepared.writer.spec().name
        )
    })?;
    let mut err = std::io::stderr().lock();
    for note in &written.notes {
        writeln!(err, "note: {note}")?;
    }
    for file in &written.files {
        writeln!(err, "wrote {}", file.display())?;
    }
    writeln!(
        err,
        "{} -> {} in {:.2} s",
        prepared.reader.spec().name,
        prepared.writer.spec().name,
        started.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// Refuses an output whose folder is missing (said once and plainly, before any work,
/// rather than as the OS error of the first file the writer creates) and an existing output
/// unless `force`. A .pvd output's steps folder counts as part of it: without `force` its step
/// files are refused too; with `force` they are removed first, so that steps of an earlier,
/// longer series do not linger beside the new ones.
fn check_output(output: &Path, force: bool) -> anyhow::Result<()> {
    if let Some(folder) = output.parent()
        && !folder.as_os_str().is_empty()
        && !folder.is_dir()
    {
        anyhow::bail!(
            "the output folder {} does not exist; create it first",
            folder.display()
        );
    }
    let steps = pvd_steps(output);
    if !force {
        if output.exists() {
            anyhow::bail!("{} exists; pass --force to replace it", output.display());
        }
        if let Some(first) = steps.first() {
            anyhow::bail!(
                "{} exists (a time step of an earlier {}); pass --force to replace it",
                first.display(),
                output.display()
            );
        }
    }
    for step in steps {
        std::fs::remove_file(&step)
            .with_context(|| format!("removing the earlier step {}", step.display()))?;
    }
    Ok(())
}

/// The step files (`x/x_0000.vtu`, ...) in the steps folder of a .pvd output `x.pvd`, sorted;
/// none for other outputs.
fn pvd_steps(output: &Path) -> Vec<PathBuf> {
    let is_pvd = output
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("pvd"));
    let Some(stem) = output.file_stem().and_then(|stem| stem.to_str()) else {
        return Vec::new();
    };
    if !is_pvd {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(output.with_file_name(stem)) else {
        return Vec::new();
    };
    let mut steps: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("");
            name.strip_prefix(stem)
                .and_then(|rest| rest.strip_prefix('_'))
                .and_then(|rest| rest.strip_suffix(".vtu"))
                .is_some_and(|number| {
                    !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit())
                })
        })
        .collect();
    steps.sort();
    steps
}

/// The transformations the options ask for: items, then steps, then the reprojection.
fn transformations_of(args: &ConvertArgs) -> anyhow::Result<Vec<Transformation>> {
    let mut transformations = Vec::new();
    if !args.items.is_empty() {
        transformations.push(Transformation::ItemFilter(ItemSelection {
            indices: Vec::new(),
            names: args.items.clone(),
        }));
    }
    if let Some(steps) = &args.steps {
        transformations.push(Transformation::TemporalFilter(parse_steps(steps)?));
    }
    if let Some(output_srid) = args.output_srid {
        transformations.push(Transformation::Crs {
            input_srid: args.input_srid,
            output_srid,
        });
    }
    Ok(transformations)
}

/// `N`, `FROM:TO`, `FROM:` or `:TO` as an index range.
fn parse_steps(text: &str) -> anyhow::Result<TemporalFilter> {
    let index = |part: &str| -> anyhow::Result<Option<usize>> {
        let part = part.trim();
        if part.is_empty() {
            return Ok(None);
        }
        part.parse()
            .map(Some)
            .with_context(|| format!("--steps {text:?}: {part:?} is not a step index"))
    };
    let (from, to) = match text.split_once(':') {
        Some((from, to)) => (index(from)?, index(to)?),
        None => {
            let step = index(text)?;
            (step, step)
        }
    };
    if from.is_none() && to.is_none() {
        anyhow::bail!("--steps {text:?}: give a step index or a range FROM:TO");
    }
    Ok(TemporalFilter::IndexRange { from, to })
}

/// Runs `basin formats`.
pub(crate) fn formats(args: &FormatsArgs) -> anyhow::Result<()> {
    let catalogue = Catalogue::standard();
    let listing = Listing::of(&catalogue);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &listing)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "Readers")?;
    for reader in &listing.readers {
        writeln!(
            out,
            "  {:<16} {:<10} {}",
            reader.name, reader.dataset_format, reader.description
        )?;
        write_parameters(&mut out, "-p", &reader.parameters)?;
        writeln!(out, "      writers: {}", reader.writers.join(", "))?;
    }
    writeln!(out, "Writers")?;
    for writer in &listing.writers {
        writeln!(
            out,
            "  {:<16} {:<10} {}",
            writer.name, writer.dataset_format, writer.description
        )?;
        write_parameters(&mut out, "-w", &writer.parameters)?;
    }
    Ok(())
}

/// One line per parameter, led by the `basin convert` flag that sets it (`-p` for reader
/// parameters, `-w` for writer parameters).
fn write_parameters(
    out: &mut impl Write,
    flag: &str,
    parameters: &[ParameterDto],
) -> std::io::Result<()> {
    for parameter in parameters {
        let required = if parameter.required {
            "required"
        } else {
            "optional"
        };
        let default = parameter
            .default_value
            .map(|value| format!(", default {value}"))
            .unwrap_or_default();
        let allowed = if parameter.allowed_values.is_empty() {
            String::new()
        } else {
            format!(", one of {}", parameter.allowed_values.join("|"))
        };
        writeln!(
            out,
            "      {flag} {}=<{}> ({required}{default}{allowed}) {}",
            parameter.name, parameter.data_type, parameter.description
        )?;
    }
    Ok(())
}

pub(crate) fn parse_pairs(pairs: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    pairs
        .iter()
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .with_context(|| format!("parameter {pair:?} is not NAME=VALUE"))?;
            Ok((name.trim().to_owned(), value.to_owned()))
        })
        .collect()
}

/// The reader and writer lists, shaped as the catalogue endpoints publish them
/// (docs/conversion.md#readers-and-writers).
#[derive(Debug, Serialize)]
struct Listing {
    readers: Vec<ReaderDto>,
    writers: Vec<WriterDto>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReaderDto {
    name: &'static str,
    description: &'static str,
    dataset_format: &'static str,
    parameters: Vec<ParameterDto>,
    writers: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WriterDto {
    name: &'static str,
    description: &'static str,
    dataset_format: &'static str,
    parameters: Vec<ParameterDto>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ParameterDto {
    name: &'static str,
    description: &'static str,
    data_type: &'static str,
    required: bool,
    default_value: Option<&'static str>,
    allowed_values: &'static [&'static str],
}

impl ParameterDto {
    fn list(specs: &'static [basin_formats::ParameterSpec]) -> Vec<Self> {
        specs
            .iter()
            .map(|spec| Self {
                name: spec.name,
                description: spec.description,
                data_type: spec.data_type.wire_name(),
                required: spec.required,
                default_value: spec.default_value,
                allowed_values: spec.allowed_values,
            })
            .collect()
    }
}

impl Listing {
    fn of(catalogue: &Catalogue) -> Self {
        let readers = catalogue
            .readers()
            .map(|reader| {
                let spec = reader.spec();
                ReaderDto {
                    name: spec.name,
                    description: spec.description,
                    dataset_format: spec.dataset_format,
                    parameters: ParameterDto::list(spec.parameters),
                    writers: catalogue.writers_for(spec),
                }
            })
            .collect();
        let writers = catalogue
            .writers()
            .map(|writer| {
                let spec = writer.spec();
                WriterDto {
                    name: spec.name,
                    description: spec.description,
                    dataset_format: spec.dataset_format,
                    parameters: ParameterDto::list(spec.parameters),
                }
            })
            .collect();
        Self { readers, writers }
    }
}

/// A progress bar on stderr when it is a terminal and the input is large (see
/// [`PROGRESS_BAR_BYTES_MIN`]); silent otherwise, so that scripts and logs get no control
/// characters. Redraws at most ten times a second so that readers may report as often as
/// they like.
pub(crate) struct ProgressBar {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressBar {
    pub(crate) fn new(terminal: bool) -> Self {
        let bar = terminal.then(|| {
            // Hidden until the reader announces a large total.
            let bar = indicatif::ProgressBar::hidden();
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            ) {
                bar.set_style(style);
            }
            bar
        });
        Self { bar }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for ProgressBar {
    fn set_total(&self, units: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(units);
            if units >= PROGRESS_BAR_BYTES_MIN && bar.is_hidden() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(10));
            }
        }
    }

    fn advance(&self, units: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(units);
        }
    }
}

//! The catalogue of readers and writers: what the interface's reader and writer lists
//! publish (name, description, dataset format, parameters, and for each reader the writers it
//! can feed), and the one pipeline that runs a conversion, used by both `basin convert` and the
//! server's conversion jobs.
//!
//! The same pipeline appends one file's data to another's ([`Catalogue::append`], see
//! [`crate::append`]), and both return a [`DataSummary`] of what they wrote.
//!
//! A reader can feed a writer when the kinds of data it produces and the writer accepts
//! overlap; writers that accept a kind other than their own (a Shapefile writer given a mesh)
//! adapt it themselves. The plain-copy pair `FileReader`/`FileWriter` bypasses the model.

use std::path::{Path, PathBuf};

use crate::error::{FormatError, FormatResult};
use crate::limits::ReadLimits;
use crate::model::{DataKind, DatasetSink};
use crate::parameters::{ParameterSpec, Parameters};
use crate::progress::{NoProgress, Progress};
use crate::summary::{DataSummary, SummarySink};
use crate::transform::{self, Transformation};

/// What a reader publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderSpec {
    /// Name, e.g. `GeoTiffReader`.
    pub name: &'static str,
    /// One line for the reader list.
    pub description: &'static str,
    /// The dataset format it reads, as datasets record it (an extension, e.g. `.tif`).
    pub dataset_format: &'static str,
    /// File extensions it recognises, lower case with the dot, for format inference.
    pub extensions: &'static [&'static str],
    /// Kinds of data it produces.
    pub produces: &'static [DataKind],
    /// Parameters.
    pub parameters: &'static [ParameterSpec],
}

/// What a writer publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterSpec {
    /// Name, e.g. `GeoTiffWriter`.
    pub name: &'static str,
    /// One line for the writer list.
    pub description: &'static str,
    /// The dataset format it writes (an extension, e.g. `.tif`).
    pub dataset_format: &'static str,
    /// File extensions it recognises, lower case with the dot, for format inference.
    pub extensions: &'static [&'static str],
    /// Kinds of data it accepts; the first is its native kind, the others reach it through
    /// [`crate::adapt`].
    pub accepts: &'static [DataKind],
    /// Parameters.
    pub parameters: &'static [ParameterSpec],
}

/// Everything a reader needs besides its input and parameters.
#[derive(Clone, Copy)]
pub struct ReadContext<'a> {
    /// Bounds on what the input may claim.
    pub limits: ReadLimits,
    /// Where to report progress (input bytes).
    pub progress: &'a dyn Progress,
}

impl Default for ReadContext<'_> {
    fn default() -> Self {
        Self {
            limits: ReadLimits::default(),
            progress: &NoProgress,
        }
    }
}

/// A reader: turns a file into model events.
pub trait Reader: Send + Sync {
    /// Its published description.
    fn spec(&self) -> &'static ReaderSpec;

    /// Reads `input` into `sink`, calling `begin`, the data, and `end`, in the order
    /// [`DatasetSink`] prescribes. `parameters` were validated against the spec.
    fn read(
        &self,
        input: &Path,
        parameters: &Parameters,
        context: &ReadContext<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()>;
}

/// What a writer produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Written {
    /// The files written (one, or several when the format has side files and the output was
    /// not a .zip).
    pub files: Vec<PathBuf>,
    /// Things the user should know, e.g. `field name "temperature_max" truncated to
    /// "temperatur1"`.
    pub notes: Vec<String>,
    /// What was written, as the pipeline saw it on its way into the writer; `None` for the
    /// plain copy, which does not look at the data. Writers leave it `None`; the pipeline
    /// fills it.
    pub summary: Option<DataSummary>,
}

/// A writer's sink: receives the dataset, then [`WriterSink::finish`] completes the files.
pub trait WriterSink: DatasetSink {
    /// Completes the output after `end`. Dropping a sink without finishing it may leave
    /// partial files; the pipeline removes them.
    fn finish(self: Box<Self>) -> FormatResult<Written>;
}

/// A writer: creates sinks that write files.
pub trait Writer: Send + Sync {
    /// Its published description.
    fn spec(&self) -> &'static WriterSpec;

    /// A sink writing to `output`. Formats with side files (.shx, .dbf; one .vtu per step)
    /// write them beside `output` with the same stem, or into `output` itself when it ends in
    /// `.zip`.
    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>>;
}

/// All readers and writers.
pub struct Catalogue {
    readers: Vec<Box<dyn Reader>>,
    writers: Vec<Box<dyn Writer>>,
}

impl std::fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalogue")
            .field("readers", &self.readers.len())
            .field("writers", &self.writers.len())
            .finish()
    }
}

/// One conversion to run.
#[derive(Debug, Clone, Default)]
pub struct Conversion<'a> {
    /// Reader name (case-insensitive); inferred from the input's extension when `None`.
    pub reader: Option<&'a str>,
    /// Writer name (case-insensitive); inferred from the output's extension when `None`.
    pub writer: Option<&'a str>,
    /// Reader parameters as given.
    pub reader_parameters: &'a [(String, String)],
    /// Writer parameters as given.
    pub writer_parameters: &'a [(String, String)],
    /// Transformations applied between reader and writer, in order.
    pub transformations: &'a [Transformation],
}

/// One append to run: the data of an addition file after the data of an existing file, into
/// a new output (usually in the existing file's format). See [`crate::append`] for what must
/// agree.
#[derive(Debug, Clone, Default)]
pub struct Append<'a> {
    /// Reader of the existing file (case-insensitive); inferred from its extension when `None`.
    pub existing_reader: Option<&'a str>,
    /// Reader parameters of the existing file.
    pub existing_reader_parameters: &'a [(String, String)],
    /// Reader of the addition (case-insensitive); inferred from its extension when `None`.
    pub addition_reader: Option<&'a str>,
    /// Reader parameters of the addition.
    pub addition_reader_parameters: &'a [(String, String)],
    /// Writer name (case-insensitive); inferred from the output's extension when `None`.
    pub writer: Option<&'a str>,
    /// Writer parameters.
    pub writer_parameters: &'a [(String, String)],
}

impl Catalogue {
    /// The catalogue of every format in this crate.
    pub fn standard() -> Self {
        Self {
            readers: crate::registry::readers(),
            writers: crate::registry::writers(),
        }
    }

    /// All readers, in list order.
    pub fn readers(&self) -> impl Iterator<Item = &dyn Reader> {
        self.readers.iter().map(AsRef::as_ref)
    }

    /// All writers, in list order.
    pub fn writers(&self) -> impl Iterator<Item = &dyn Writer> {
        self.writers.iter().map(AsRef::as_ref)
    }

    /// The reader named `name` (case-insensitive).
    pub fn reader(&self, name: &str) -> Option<&dyn Reader> {
        self.readers()
            .find(|reader| reader.spec().name.eq_ignore_ascii_case(name))
    }

    /// The writer named `name` (case-insensitive).
    pub fn writer(&self, name: &str) -> Option<&dyn Writer> {
        self.writers()
            .find(|writer| writer.spec().name.eq_ignore_ascii_case(name))
    }

    /// Names of the writers `reader` can feed, in list order.
    pub fn writers_for(&self, reader: &ReaderSpec) -> Vec<&'static str> {
        self.writers()
            .map(Writer::spec)
            .filter(|writer| can_feed(reader, writer))
            .map(|writer| writer.name)
            .collect()
    }

    /// The reader for datasets stored as `format` (`.dfsu`): the first whose dataset format or
    /// extensions name it.
    pub fn reader_for_format(&self, format: &str) -> Option<&'static ReaderSpec> {
        self.readers()
            .map(|reader| reader.spec())
            .find(|spec| spec.dataset_format == format || spec.extensions.contains(&format))
    }

    /// The writer for datasets stored as `format`: the first whose dataset format or
    /// extensions name it.
    pub fn writer_for_format(&self, format: &str) -> Option<&'static WriterSpec> {
        self.writers()
            .map(|writer| writer.spec())
            .find(|spec| spec.dataset_format == format || spec.extensions.contains(&format))
    }

    /// The reader for a file name, by extension.
    pub fn reader_for_path(&self, path: &Path) -> Option<&dyn Reader> {
        let extension = extension_of(path)?;
        self.readers()
            .find(|reader| reader.spec().extensions.contains(&extension.as_str()))
    }

    /// The writer for a file name, by extension.
    pub fn writer_for_path(&self, path: &Path) -> Option<&dyn Writer> {
        let extension = extension_of(path)?;
        self.writers()
            .find(|writer| writer.spec().extensions.contains(&extension.as_str()))
    }

    /// The reader named `name`, or the one for `input`'s extension.
    fn resolve_reader(&self, name: Option<&str>, input: &Path) -> FormatResult<&dyn Reader> {
        match name {
            Some(name) => self
                .reader(name)
                .ok_or_else(|| FormatError::Catalogue(format!("no reader named {name:?}"))),
            None => self.reader_for_path(input).ok_or_else(|| {
                FormatError::Catalogue(format!(
                    "no reader for {}; name one with --reader",
                    input.display()
                ))
            }),
        }
    }

    /// The writer named `name`, or the one for `output`'s extension.
    fn resolve_writer(&self, name: Option<&str>, output: &Path) -> FormatResult<&dyn Writer> {
        match name {
            Some(name) => self
                .writer(name)
                .ok_or_else(|| FormatError::Catalogue(format!("no writer named {name:?}"))),
            None => self.writer_for_path(output).ok_or_else(|| {
                FormatError::Catalogue(format!(
                    "no writer for {}; name one with --writer",
                    output.display()
                ))
            }),
        }
    }

    /// Fails unless `reader` can feed `writer`.
    fn check_can_feed(&self, reader: &dyn Reader, writer: &dyn Writer) -> FormatResult<()> {
        if can_feed(reader.spec(), writer.spec()) {
            return Ok(());
        }
        Err(FormatError::Catalogue(format!(
            "{} cannot feed {}; it can feed {}",
            reader.spec().name,
            writer.spec().name,
            self.writers_for(reader.spec()).join(", ")
        )))
    }

    /// Resolves names (or infers them), and validates both parameter sets, without touching
    /// any file: every error a user can fix by changing the request is found here.
    pub fn prepare(
        &self,
        input: &Path,
        output: &Path,
        conversion: &Conversion<'_>,
    ) -> FormatResult<Prepared<'_>> {
        let reader = self.resolve_reader(conversion.reader, input)?;
        let writer = self.resolve_writer(conversion.writer, output)?;
        self.check_can_feed(reader, writer)?;
        let reader_parameters =
            Parameters::validate(reader.spec().parameters, conversion.reader_parameters)?;
        let writer_parameters =
            Parameters::validate(writer.spec().parameters, conversion.writer_parameters)?;
        if reader.spec().name == crate::file_copy::READER.name
            && !conversion.transformations.is_empty()
        {
            return Err(FormatError::Catalogue(
                "a plain copy (FileReader to FileWriter) cannot apply transformations".to_owned(),
            ));
        }
        transform::validate(conversion.transformations)?;
        Ok(Prepared {
            reader,
            writer,
            reader_parameters,
            writer_parameters,
        })
    }

    /// Runs a conversion from `input` to `output`. On failure no output file is left behind.
    pub fn convert(
        &self,
        input: &Path,
        output: &Path,
        conversion: &Conversion<'_>,
        context: &ReadContext<'_>,
    ) -> FormatResult<Written> {
        let prepared = self.prepare(input, output, conversion)?;
        prepared.run(input, output, conversion.transformations, context)
    }

    /// Resolves and validates an append like [`Catalogue::prepare`], without touching any
    /// file. Both readers must be able to feed the writer; the plain copy cannot append.
    pub fn prepare_append(
        &self,
        existing: &Path,
        addition: &Path,
        output: &Path,
        append: &Append<'_>,
    ) -> FormatResult<PreparedAppend<'_>> {
        let existing_reader = self.resolve_reader(append.existing_reader, existing)?;
        let addition_reader = self.resolve_reader(append.addition_reader, addition)?;
        let writer = self.resolve_writer(append.writer, output)?;
        let copy = crate::file_copy::READER.name;
        if existing_reader.spec().name == copy || addition_reader.spec().name == copy {
            return Err(FormatError::Catalogue(
                "a plain copy (FileReader) cannot append; name the readers of both files"
                    .to_owned(),
            ));
        }
        self.check_can_feed(existing_reader, writer)?;
        self.check_can_feed(addition_reader, writer)?;
        Ok(PreparedAppend {
            existing_reader,
            addition_reader,
            writer,
            existing_reader_parameters: Parameters::validate(
                existing_reader.spec().parameters,
                append.existing_reader_parameters,
            )?,
            addition_reader_parameters: Parameters::validate(
                addition_reader.spec().parameters,
                append.addition_reader_parameters,
            )?,
            writer_parameters: Parameters::validate(
                writer.spec().parameters,
                append.writer_parameters,
            )?,
        })
    }

    /// Writes the data of `existing` followed by the data of `addition` to `output`. Every
    /// mismatch between the two is a [`FormatError::Append`] found before the writer starts.
    /// On failure no output file is left behind.
    pub fn append(
        &self,
        existing: &Path,
        addition: &Path,
        output: &Path,
        append: &Append<'_>,
        context: &ReadContext<'_>,
    ) -> FormatResult<Written> {
        let prepared = self.prepare_append(existing, addition, output, append)?;
        prepared.run(existing, addition, output, context)
    }

    /// Reads `input` with the named (or inferred) reader and summarises it without writing
    /// anything: for data stored by plain copy, whose conversion gave no summary.
    pub fn summarize(
        &self,
        input: &Path,
        reader: Option<&str>,
        reader_parameters: &[(String, String)],
        context: &ReadContext<'_>,
    ) -> FormatResult<DataSummary> {
        let reader = self.resolve_reader(reader, input)?;
        if reader.spec().name == crate::file_copy::READER.name {
            return Err(FormatError::Catalogue(
                "the plain copy (FileReader) does not read data; name the file's reader".to_owned(),
            ));
        }
        let parameters = Parameters::validate(reader.spec().parameters, reader_parameters)?;
        crate::summary::summarize(|sink| reader.read(input, &parameters, context, sink))
    }
}

/// A conversion whose names and parameters are valid; see [`Catalogue::prepare`].
pub struct Prepared<'a> {
    /// The reader.
    pub reader: &'a dyn Reader,
    /// The writer.
    pub writer: &'a dyn Writer,
    /// Validated reader parameters.
    pub reader_parameters: Parameters,
    /// Validated writer parameters.
    pub writer_parameters: Parameters,
}

impl Prepared<'_> {
    /// Runs it. On failure, removes what the writer wrote.
    pub fn run(
        &self,
        input: &Path,
        output: &Path,
        transformations: &[Transformation],
        context: &ReadContext<'_>,
    ) -> FormatResult<Written> {
        if !input.exists() {
            // Checked here so that the plain copy does not report it as a write error.
            return Err(FormatError::read(
                input,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ));
        }
        if is_same_file(input, output) {
            return Err(FormatError::Catalogue(format!(
                "the output {} is the input; choose another output",
                output.display()
            )));
        }
        let existing = side_files(output);
        let result = if self.reader.spec().name == crate::file_copy::READER.name {
            crate::file_copy::copy(input, output)
        } else {
            self.run_through_model(input, output, transformations, context)
        };
        if result.is_err() {
            remove_partial_output(output, &existing);
        }
        result
    }

    fn run_through_model(
        &self,
        input: &Path,
        output: &Path,
        transformations: &[Transformation],
        context: &ReadContext<'_>,
    ) -> FormatResult<Written> {
        let mut writer_sink = self.writer.create(output, &self.writer_parameters)?;
        let (summary, notes) = {
            let mut summarised = SummarySink::new(writer_sink.as_mut());
            let notes = {
                let mut adapted =
                    for_writer(self.writer, &self.writer_parameters, &mut summarised)?;
                {
                    let mut guarded =
                        crate::progress::CancellableSink::new(&mut adapted, context.progress);
                    let mut sink = transform::apply(transformations, &mut guarded)?;
                    self.reader
                        .read(input, &self.reader_parameters, context, sink.as_mut())?;
                }
                adapted.notes().to_vec()
            };
            (summarised.into_summary()?, notes)
        };
        let mut written = writer_sink.finish()?;
        written.notes.extend(notes);
        written.summary = Some(summary);
        Ok(written)
    }
}

/// An append whose names and parameters are valid; see [`Catalogue::prepare_append`].
pub struct PreparedAppend<'a> {
    /// The reader of the existing file.
    pub existing_reader: &'a dyn Reader,
    /// The reader of the addition.
    pub addition_reader: &'a dyn Reader,
    /// The writer.
    pub writer: &'a dyn Writer,
    /// Validated reader parameters of the existing file.
    pub existing_reader_parameters: Parameters,
    /// Validated reader parameters of the addition.
    pub addition_reader_parameters: Parameters,
    /// Validated writer parameters.
    pub writer_parameters: Parameters,
}

impl PreparedAppend<'_> {
    /// Runs it. On failure, removes what the writer wrote.
    pub fn run(
        &self,
        existing: &Path,
        addition: &Path,
        output: &Path,
        context: &ReadContext<'_>,
    ) -> FormatResult<Written> {
        for input in [existing, addition] {
            if !input.exists() {
                return Err(FormatError::read(
                    input,
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                ));
            }
            if is_same_file(input, output) {
                return Err(FormatError::Catalogue(format!(
                    "the output {} is an input; choose another output",
                    output.display()
                )));
            }
        }
        let before = side_files(output);
        let result = self.run_through_model(existing, addition, output, context);
        if result.is_err() {
            remove_partial_output(output, &before);
        }
        result
    }

    fn run_through_model(
        &self,
        existing: &Path,
        addition: &Path,
        output: &Path,
        context: &ReadContext<'_>,
    ) -> FormatResult<Written> {
        // The addition's progress counts on from the existing file's total.
        let existing_progress = StackedProgress::new(context.progress, None);
        let addition_progress = StackedProgress::new(context.progress, Some(&existing_progress));
        let existing_context = ReadContext {
            limits: context.limits,
            progress: &existing_progress,
        };
        let addition_context = ReadContext {
            limits: context.limits,
            progress: &addition_progress,
        };
        let existing_source = |sink: &mut dyn DatasetSink| {
            self.existing_reader.read(
                existing,
                &self.existing_reader_parameters,
                &existing_context,
                sink,
            )
        };
        let addition_source = |sink: &mut dyn DatasetSink| {
            self.addition_reader.read(
                addition,
                &self.addition_reader_parameters,
                &addition_context,
                sink,
            )
        };
        // Both headers are checked before the writer creates a file, without progress: the
        // bar should count the data pass.
        let quiet = ReadContext {
            limits: context.limits,
            progress: &NoProgress,
        };
        let appending = crate::append::Appending::check(
            &|sink: &mut dyn DatasetSink| {
                self.existing_reader
                    .read(existing, &self.existing_reader_parameters, &quiet, sink)
            },
            &|sink: &mut dyn DatasetSink| {
                self.addition_reader
                    .read(addition, &self.addition_reader_parameters, &quiet, sink)
            },
        )?;
        let mut writer_sink = self.writer.create(output, &self.writer_parameters)?;
        let (summary, notes) = {
            let mut summarised = SummarySink::new(writer_sink.as_mut());
            let notes = {
                let mut adapted =
                    for_writer(self.writer, &self.writer_parameters, &mut summarised)?;
                {
                    let mut guarded =
                        crate::progress::CancellableSink::new(&mut adapted, context.progress);
                    appending.stream(&existing_source, &addition_source, &mut guarded)?;
                }
                adapted.notes().to_vec()
            };
            (summarised.into_summary()?, notes)
        };
        let mut written = writer_sink.finish()?;
        written.notes.extend(notes);
        written.summary = Some(summary);
        Ok(written)
    }
}

/// Progress of the second of two readers in one run: its total is added to the first's, so
/// the count goes on rising instead of starting again.
struct StackedProgress<'a> {
    inner: &'a dyn Progress,
    before: Option<&'a StackedProgress<'a>>,
    total: std::sync::atomic::AtomicU64,
}

impl<'a> StackedProgress<'a> {
    fn new(inner: &'a dyn Progress, before: Option<&'a StackedProgress<'a>>) -> Self {
        Self {
            inner,
            before,
            total: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl Progress for StackedProgress<'_> {
    fn set_total(&self, units: u64) {
        let before = self.before.map_or(0, |before| {
            before.total.load(std::sync::atomic::Ordering::Relaxed)
        });
        self.total
            .store(units, std::sync::atomic::Ordering::Relaxed);
        self.inner.set_total(before.saturating_add(units));
    }

    fn advance(&self, units: u64) {
        self.inner.advance(units);
    }

    fn cancelled(&self) -> bool {
        self.inner.cancelled()
    }
}

/// `sink` behind the adapter that converts other kinds to `writer`'s native kind; its notes
/// join the writer's.
fn for_writer<'s>(
    writer: &dyn Writer,
    parameters: &Parameters,
    sink: &'s mut dyn DatasetSink,
) -> FormatResult<crate::adapt::Adapter<'s>> {
    let native =
        writer.spec().accepts.first().copied().ok_or_else(|| {
            FormatError::Catalogue(format!("{} accepts no data", writer.spec().name))
        })?;
    let options = crate::adapt::AdaptOptions::from_parameters(parameters);
    Ok(crate::adapt::Adapter::new(native, options, sink))
}

/// Side files sharing `output`'s stem that exist before a conversion: a failed conversion
/// must not remove what it did not write (a user's `out.prj` beside a new `out.tif`). For a
/// `.pvd` output, the step files in its steps folder (`out/` beside `out.pvd`) too, and last the
/// folder itself.
fn side_files(output: &Path) -> Vec<PathBuf> {
    let (Some(parent), Some(stem)) = (output.parent(), output.file_stem()) else {
        return Vec::new();
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let mut files = own_side_files(parent, stem);
    files.retain(|path| path.file_name() != output.file_name());
    if extension_of(output).as_deref() == Some(".pvd") {
        let folder = parent.join(stem);
        if folder.is_dir() {
            files.extend(own_side_files(&folder, stem));
            files.push(folder);
        }
    }
    files
}

/// The files in `folder` named after `stem` with a side file's extension.
fn own_side_files(folder: &Path, stem: &std::ffi::OsStr) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| is_own_file(path, stem) && crate::registry::is_side_file(path))
        .collect()
}

/// True for `stem.ext` and for the numbered step files `stem_0001.ext` of a time series.
fn is_own_file(path: &Path, stem: &std::ffi::OsStr) -> bool {
    let Some(file_stem) = path.file_stem() else {
        return false;
    };
    if file_stem == stem {
        return true;
    }
    let (Some(file_stem), Some(stem)) = (file_stem.to_str(), stem.to_str()) else {
        return false;
    };
    file_stem
        .strip_prefix(stem)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|number| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes `output` and the side files sharing its stem that a failed writer may have left,
/// except those in `existing` (there before the conversion started). A steps folder the
/// conversion created goes too, when nothing else is in it.
fn remove_partial_output(output: &Path, existing: &[PathBuf]) {
    let _ = std::fs::remove_file(output);
    for path in side_files(output) {
        if existing.contains(&path) {
            continue;
        }
        if path.is_dir() {
            let _ = std::fs::remove_dir(path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// True when both paths name one existing file (writing would destroy the input).
fn is_same_file(input: &Path, output: &Path) -> bool {
    match (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
        (Ok(input), Ok(output)) => input == output,
        _ => false,
    }
}

fn can_feed(reader: &ReaderSpec, writer: &WriterSpec) -> bool {
    let copy = crate::file_copy::READER.name;
    if reader.name == copy || writer.name == crate::file_copy::WRITER.name {
        return reader.name == copy && writer.name == crate::file_copy::WRITER.name;
    }
    reader
        .produces
        .iter()
        .any(|kind| writer.accepts.contains(kind))
}

fn extension_of(path: &Path) -> Option<String> {
    let extension = path.extension()?.to_str()?;
    Some(format!(".{}", extension.to_ascii_lowercase()))
}

#[cfg(test)]
mod own_file_tests {
    use super::*;

    #[test]
    fn step_files_of_a_series_count_as_the_outputs_own() {
        let stem = std::ffi::OsStr::new("out");
        assert!(is_own_file(Path::new("/d/out.shx"), stem));
        assert!(is_own_file(Path::new("/d/out_0003.vtu"), stem));
        assert!(!is_own_file(Path::new("/d/out_x.vtu"), stem));
        assert!(!is_own_file(Path::new("/d/out_.vtu"), stem));
        assert!(!is_own_file(Path::new("/d/outer.vtu"), stem));
    }

    #[test]
    fn a_failed_pvd_output_loses_its_steps_and_the_folder_it_created_only() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("out.pvd");
        let folder = dir.path().join("out");
        // The folder is new: everything goes.
        let before = side_files(&output);
        std::fs::create_dir(&folder).unwrap();
        for name in ["out_0000.vtu", "out_0001.vtu"] {
            std::fs::write(folder.join(name), "step").unwrap();
        }
        std::fs::write(&output, "collection").unwrap();
        remove_partial_output(&output, &before);
        assert!(!output.exists() && !folder.exists());
        // The folder was there with a step and a file of the user's: both stay.
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("out_0000.vtu"), "old step").unwrap();
        std::fs::write(folder.join("notes.txt"), "mine").unwrap();
        let before = side_files(&output);
        std::fs::write(folder.join("out_0001.vtu"), "new step").unwrap();
        remove_partial_output(&output, &before);
        let mut left: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["notes.txt", "out_0000.vtu"]);
    }
}

//! The catalogue of readers and writers: what the interface's reader and writer lists
//! publish (name, description, dataset format, parameters, and for each reader the writers it
//! can feed), and the one pipeline that runs a conversion, used by both `basin convert` and the
//! server's conversion jobs.
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

    /// Resolves names (or infers them), and validates both parameter sets, without touching
    /// any file: every error a user can fix by changing the request is found here.
    pub fn prepare(
        &self,
        input: &Path,
        output: &Path,
        conversion: &Conversion<'_>,
    ) -> FormatResult<Prepared<'_>> {
        let reader = match conversion.reader {
            Some(name) => self
                .reader(name)
                .ok_or_else(|| FormatError::Catalogue(format!("no reader named {name:?}")))?,
            None => self.reader_for_path(input).ok_or_else(|| {
                FormatError::Catalogue(format!(
                    "no reader for {}; name one with --reader",
                    input.display()
                ))
            })?,
        };
        let writer = match conversion.writer {
            Some(name) => self
                .writer(name)
                .ok_or_else(|| FormatError::Catalogue(format!("no writer named {name:?}")))?,
            None => self.writer_for_path(output).ok_or_else(|| {
                FormatError::Catalogue(format!(
                    "no writer for {}; name one with --writer",
                    output.display()
                ))
            })?,
        };
        if !can_feed(reader.spec(), writer.spec()) {
            return Err(FormatError::Catalogue(format!(
                "{} cannot feed {}; it can feed {}",
                reader.spec().name,
                writer.spec().name,
                self.writers_for(reader.spec()).join(", ")
            )));
        }
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
        {
            let native = self.writer.spec().accepts.first().copied().ok_or_else(|| {
                FormatError::Catalogue(format!("{} accepts no data", self.writer.spec().name))
            })?;
            let mut adapted = crate::adapt::for_writer(native, writer_sink.as_mut());
            let mut sink = transform::apply(transformations, adapted.as_mut())?;
            self.reader
                .read(input, &self.reader_parameters, context, sink.as_mut())?;
        }
        writer_sink.finish()
    }
}

/// Side files sharing `output`'s stem that exist before a conversion: a failed conversion
/// must not remove what it did not write (a user's `out.prj` beside a new `out.tif`).
fn side_files(output: &Path) -> Vec<PathBuf> {
    let (Some(parent), Some(stem)) = (output.parent(), output.file_stem()) else {
        return Vec::new();
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| is_own_file(path, stem) && crate::registry::is_side_file(path))
        .filter(|path| path.file_name() != output.file_name())
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
/// except those in `existing` (there before the conversion started).
fn remove_partial_output(output: &Path, existing: &[PathBuf]) {
    let _ = std::fs::remove_file(output);
    for path in side_files(output) {
        if !existing.contains(&path) {
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
}

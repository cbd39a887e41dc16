//! DFS0: MIKE time series, one value per item and time step.
//!
//! The reader maps the container to a time series header (items with their EUM codes, value
//! types and storage types kept; delete values NaN; see [`super::mapping`]) and streams the
//! selected items step by step, skipping what a filter drops. The writer streams too: it
//! holds one value, and writes each step as it arrives.
//!
//! The writer writes what MIKE IO writes for the same content, so that its files are
//! byte-identical to MIKE IO's apart from the two creation timestamps: data type 1, regular
//! statistics (type 2), the default delete values, no projection block, EqD0 item axes in
//! metres, calendar axes in seconds from a start to the second, and missing values of double
//! items as the widened float delete value. Only the application title and version differ by
//! default ("Basin" and this crate's version); the `ApplicationTitle` and
//! `ApplicationVersion` parameters set them, and `Title` the file title. Relative time axes,
//! which MIKE IO cannot write, are written as relative axes.
//!
//! A DFS0 item has reference coordinates; the model keeps them as the series' position when
//! every item has the same (the common case: a station), and the writer gives every item the
//! position back.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::container::{DfsFile, DfsHeader, DfsWriter, FileHeader, SpatialAxis, now_timestamp};
use super::mapping::{
    ALLOWED_ITEM_NAMES_PARAMETER, APPLICATION_TITLE_PARAMETER, APPLICATION_VERSION_PARAMETER,
    TimeWriting, Titles, info_of, item_of, make_names_unique, nan_to_delete_values, selected_items,
    stream, time_axis_of, time_writing_of, title_parameter,
};
use crate::catalogue::{ReadContext, Reader, ReaderSpec, Writer, WriterSink, WriterSpec, Written};
use crate::error::{FormatError, FormatResult};
use crate::model::{DataKind, DatasetSink, Frame, Header, TimeSeriesHeader, Values};
use crate::parameters::Parameters;
use crate::series::SeriesCursor;

const FORMAT: &str = "DFS0";

/// The data type MIKE IO (and the MIKE time series editor) writes in DFS0 headers.
const DFS0_DATA_TYPE: i32 = 1;

/// Regular statistics, what MIKE IO asks for.
const REGULAR_STATISTICS: i32 = 2;

/// The published description of [`Dfs0Reader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "Dfs0Reader",
    description: "Reads a MIKE DFS0 time series",
    dataset_format: ".dfs0",
    extensions: &[".dfs0"],
    produces: &[DataKind::TimeSeries],
    parameters: &[ALLOWED_ITEM_NAMES_PARAMETER],
};

/// Reads a MIKE DFS0 time series.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dfs0Reader;

impl Reader for Dfs0Reader {
    fn spec(&self) -> &'static ReaderSpec {
        &READER
    }

    fn read(
        &self,
        input: &Path,
        parameters: &Parameters,
        context: &ReadContext<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        let mut file = DfsFile::open(input, &context.limits)?;
        check_one_value_per_step(&file)?;
        make_names_unique(&mut file.header.items);
        let selected = selected_items(&file.header.items, parameters)?;
        let time = time_axis_of(&mut file)?;
        let infos: Vec<_> = selected
            .iter()
            .filter_map(|index| file.header.items.get(*index))
            .collect();
        let items = infos
            .iter()
            .map(|info| item_of(info, &file.header))
            .collect();
        let position = common_position(infos.iter().map(|info| info.reference));
        context
            .progress
            .set_total(file.step_bytes().saturating_mul(file.steps() as u64));
        sink.begin(&Header::TimeSeries(TimeSeriesHeader {
            items,
            time,
            position,
        }))?;
        stream(&mut file, &selected, sink, context.progress, |_, _| Ok(()))?;
        sink.end()
    }
}

/// Fails unless every item holds one value per step, as a DFS0 item does.
fn check_one_value_per_step<R: std::io::BufRead + std::io::Seek>(
    file: &DfsFile<R>,
) -> FormatResult<()> {
    for (index, info) in file.header.items.iter().enumerate() {
        let size = info.axis.size();
        let stored = file.item_len(index);
        let one = size == Some(1) && (file.steps() == 0 || stored == Some(1));
        if !one {
            return Err(FormatError::invalid(
                FORMAT,
                format!("item {} ({:?})", index + 1, info.name),
                format!(
                    "a DFS0 item holds one value per time step, this one has a {} axis of {} values (read the file with the DFS1/2/3 or DFSU reader)",
                    info.axis.name(),
                    stored.or(size).unwrap_or(0)
                ),
            ));
        }
    }
    Ok(())
}

/// The reference coordinates every item shares, when x and y are set (DFS stores the float
/// delete value, -1e-35, for unset ones; an unset z counts as 0).
fn common_position(mut references: impl Iterator<Item = [f32; 3]>) -> Option<[f64; 3]> {
    let first = references.next()?;
    if !references.all(|other| other.map(f32::to_bits) == first.map(f32::to_bits)) {
        return None;
    }
    let unset = |value: f32| value.to_bits() == (-1e-35_f32).to_bits();
    let [x, y, z] = first;
    if unset(x) || unset(y) || !first.iter().all(|value| value.is_finite()) {
        return None;
    }
    Some([
        f64::from(x),
        f64::from(y),
        if unset(z) { 0.0 } else { f64::from(z) },
    ])
}

/// The published description of [`Dfs0Writer`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "Dfs0Writer",
    description: "Writes a MIKE DFS0 time series, as MIKE IO writes it",
    dataset_format: ".dfs0",
    extensions: &[".dfs0"],
    accepts: &[DataKind::TimeSeries],
    parameters: &[
        title_parameter("File title; empty when not given"),
        APPLICATION_TITLE_PARAMETER,
        APPLICATION_VERSION_PARAMETER,
    ],
};

/// Writes a MIKE DFS0 time series.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dfs0Writer;

impl Writer for Dfs0Writer {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        let titles = Titles::from_parameters(parameters)?;
        Ok(Box::new(Dfs0Sink {
            output: output.to_owned(),
            titles,
            writing: None,
            notes: Vec::new(),
            written: false,
        }))
    }
}

/// Receives a time series and writes it as DFS0, step by step.
struct Dfs0Sink {
    output: PathBuf,
    titles: Titles,
    writing: Option<Writing>,
    notes: Vec<String>,
    written: bool,
}

/// A file being written.
struct Writing {
    writer: DfsWriter<BufWriter<File>>,
    time: TimeWriting,
    cursor: SeriesCursor,
    /// The value being written, its allocation reused.
    value: Values,
}

impl Writing {
    fn start_step(&mut self) -> FormatResult<()> {
        let time = match &self.time.step_times {
            None => None,
            Some(_) => {
                let step = self.cursor.step();
                Some(self.time.step_time(step).ok_or_else(|| {
                    FormatError::Catalogue(format!(
                        "DFS0 writer: step {step} has no time on the time axis"
                    ))
                })?)
            }
        };
        self.writer.start_step(time)
    }
}

impl Dfs0Sink {
    fn header_of(&mut self, series: &TimeSeriesHeader) -> (DfsHeader, TimeWriting) {
        let time = time_writing_of(&series.time);
        let mut items = Vec::with_capacity(series.items.len());
        for item in &series.items {
            let mut info = info_of(item, SpatialAxis::eq_d0());
            if let Some(position) = series.position {
                info.reference = position.map(|value| value as f32);
            }
            if !is_cp1252(&item.name) {
                self.notes.push(format!(
                    "item name {:?}: characters outside Windows-1252 (the DFS text encoding) written as ?",
                    item.name
                ));
            }
            items.push(info);
        }
        let timestamp = now_timestamp();
        let header = DfsHeader {
            created: timestamp,
            modified: timestamp,
            file: FileHeader {
                title: self.titles.title.clone().unwrap_or_default(),
                application: self.titles.application.clone(),
                application_version: self.titles.version,
                data_type: DFS0_DATA_TYPE,
                statistics_type: REGULAR_STATISTICS,
                time: time.record.clone(),
                ..FileHeader::default()
            },
            items,
            custom_blocks: Vec::new(),
            statics: Vec::new(),
        };
        (header, time)
    }

    fn writing(&mut self) -> FormatResult<&mut Writing> {
        self.writing
            .as_mut()
            .ok_or_else(|| FormatError::Catalogue("DFS0 writer: data before the header".into()))
    }
}

fn is_cp1252(text: &str) -> bool {
    let (_, _, unmappable) = encoding_rs::WINDOWS_1252.encode(text);
    !unmappable && !text.contains('\0')
}

impl DatasetSink for Dfs0Sink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::TimeSeries(series) = header else {
            return Err(FormatError::Incompatible {
                data: header.kind().name(),
                format: FORMAT,
                message: "a DFS0 file holds a time series (grids go to DFS2, meshes to DFSU)"
                    .to_owned(),
            });
        };
        let (dfs_header, time) = self.header_of(series);
        let writer = DfsWriter::create(&self.output, dfs_header)?;
        self.writing = Some(Writing {
            writer,
            time,
            cursor: SeriesCursor::new("DFS0 writer", FORMAT, &series.items),
            value: Values::with_capacity(crate::model::DataType::F64, 1),
        });
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let writing = self.writing()?;
        let item = writing.cursor.check(&frame)?.clone();
        if writing.cursor.at_step_start() {
            writing.start_step()?;
        }
        writing.value.clone_from(frame.values);
        nan_to_delete_values(writing.writer.header(), &item, &mut writing.value);
        writing.writer.write_item(&writing.value)?;
        writing.cursor.advance();
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        let Some(mut writing) = self.writing.take() else {
            return Err(FormatError::Catalogue(
                "DFS0 writer: the series ended before it began".into(),
            ));
        };
        if writing.cursor.items().is_empty() {
            // No frames come for a series without items: its steps are written here.
            let steps = writing.time.step_times.as_ref().map_or(
                usize::try_from(writing.time.record.steps).unwrap_or(0),
                Vec::len,
            );
            for _ in 0..steps {
                writing.start_step()?;
                writing.cursor.skip_step();
            }
        }
        writing.cursor.check_complete()?;
        writing.writer.finish()?;
        self.written = true;
        Ok(())
    }
}

impl WriterSink for Dfs0Sink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.written {
            return Err(FormatError::Catalogue(
                "DFS0 writer: the series was not completed".into(),
            ));
        }
        Ok(Written {
            files: vec![self.output],
            notes: self.notes,
            summary: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_needs_the_same_set_coordinates_on_every_item() {
        let unset = -1e-35_f32;
        assert_eq!(
            common_position([[1.0, 2.0, unset], [1.0, 2.0, unset]].into_iter()),
            Some([1.0, 2.0, 0.0])
        );
        assert_eq!(
            common_position([[1.0, 2.0, 3.0], [1.0, 2.5, 3.0]].into_iter()),
            None
        );
        assert_eq!(common_position([[unset, unset, unset]].into_iter()), None);
        assert_eq!(common_position([[f32::NAN, 1.0, 1.0]].into_iter()), None);
        assert_eq!(common_position(std::iter::empty()), None);
    }

    #[test]
    fn the_version_is_a_whole_number_of_the_crate_version() {
        let expected: Vec<i32> = env!("CARGO_PKG_VERSION")
            .split('.')
            .map(|part| part.parse().unwrap())
            .collect();
        assert_eq!(
            super::super::mapping::basin_application_version(),
            expected[0] * 10_000 + expected[1] * 100 + expected[2]
        );
    }
}

//! Writing a DFS file: the header in the reference library's block order with placeholders
//! for what only the data decides (step count, time span, item ranges and statistics), the
//! steps as they come, and the placeholders patched in place on [`DfsWriter::finish`].

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{FormatError, FormatResult};
use crate::model::Values;

use super::stats::ItemStatistics;
use super::tokens::{CLOSE, OPEN, encode, type_code};
use super::{
    CREATOR, DfsHeader, FORMAT, ItemInfo, MAGIC, SpatialAxis, Timestamp, string_record, tag,
};

/// Streams a DFS file: create it with the header, then for each step call
/// [`DfsWriter::start_step`] and [`DfsWriter::write_item`] once per item in order, then
/// [`DfsWriter::finish`].
pub struct DfsWriter<W: Write + Seek> {
    out: W,
    path: PathBuf,
    header: DfsHeader,
    position: u64,
    patches: Patches,
    statistics: Vec<ItemStatistics>,
    /// Values per step of each item, fixed by the first step.
    counts: Vec<Option<usize>>,
    steps: i32,
    next_item: usize,
    in_step: bool,
    first_time: Option<f64>,
    last_time: Option<f64>,
    buffer: Vec<u8>,
}

/// Positions of the header fields patched on close.
#[derive(Debug, Default)]
struct Patches {
    /// The time axis `f64[2]` values (after the record head).
    time_doubles: u64,
    /// The time axis `i32[2]` values.
    time_counts: u64,
    /// Each item's `f64[3]` range values.
    ranges: Vec<u64>,
    /// Each item's statistics values.
    statistics: Vec<Option<u64>>,
}

impl DfsWriter<BufWriter<File>> {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path, header: DfsHeader) -> FormatResult<Self> {
        let file = File::create(path).map_err(|error| FormatError::write(path, error))?;
        Self::new(BufWriter::with_capacity(1 << 20, file), path, header)
    }
}

impl<W: Write + Seek> DfsWriter<W> {
    /// Writes the header of `header` to `out` (`path` names it in errors). Its item ranges,
    /// statistics and step count are ignored: they are computed from the data.
    pub fn new(out: W, path: &Path, header: DfsHeader) -> FormatResult<Self> {
        let per_element = header.file.statistics_type >= 2;
        let mut statistics = Vec::with_capacity(header.items.len());
        for item in &header.items {
            // Statistics keep nine doubles per element: at most 4 GiB of them.
            let fits = |elements: &usize| {
                !per_element
                    || elements
                        .checked_mul(72)
                        .is_some_and(|bytes| bytes <= 1 << 32)
            };
            let elements = item.axis.size().filter(fits).ok_or_else(|| {
                FormatError::invalid(
                    FORMAT,
                    "header",
                    format!("item {:?} is too large", item.name),
                )
            })?;
            statistics.push(ItemStatistics::new(item.data_type, elements, per_element));
        }
        let mut writer = Self {
            out,
            path: path.to_owned(),
            counts: vec![None; header.items.len()],
            header,
            position: 0,
            patches: Patches::default(),
            statistics,
            steps: 0,
            next_item: 0,
            in_step: false,
            first_time: None,
            last_time: None,
            buffer: Vec::new(),
        };
        writer.write_header()?;
        Ok(writer)
    }

    /// The header being written.
    pub fn header(&self) -> &DfsHeader {
        &self.header
    }

    fn emit(&mut self) -> FormatResult<()> {
        self.out
            .write_all(&self.buffer)
            .map_err(|error| FormatError::write(&self.path, error))?;
        self.position += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }

    fn open(&mut self, block: u16) {
        self.buffer.push(OPEN);
        self.buffer.extend_from_slice(&block.to_le_bytes());
    }

    fn close(&mut self) {
        self.buffer.push(CLOSE);
    }

    /// Appends a record and returns the offset of its first value.
    fn record(&mut self, values: &Values) -> u64 {
        self.buffer.push(type_code(values.data_type()));
        let count = i32::try_from(values.len()).unwrap_or(i32::MAX);
        self.buffer.extend_from_slice(&count.to_le_bytes());
        let at = self.position + self.buffer.len() as u64;
        encode(values, &mut self.buffer);
        at
    }

    fn block(&mut self, block: u16, records: &[Values]) {
        self.open(block);
        for record in records {
            self.record(record);
        }
        self.close();
    }

    fn write_header(&mut self) -> FormatResult<()> {
        let file = self.header.file.clone();
        self.buffer.extend_from_slice(MAGIC);
        self.buffer.extend_from_slice(CREATOR);
        self.buffer.push(0x1A);
        for timestamp in [self.header.created, self.header.modified] {
            push_timestamp(&mut self.buffer, timestamp);
            self.buffer.extend_from_slice(&104_i32.to_le_bytes());
            self.buffer.extend_from_slice(&206_i32.to_le_bytes());
        }
        self.buffer.extend_from_slice(&[0; 8]);
        self.block(tag::HEADER, &[]);
        let storage = if file.time.kind.is_equidistant() {
            1
        } else {
            4
        };
        self.block(tag::STORAGE_TYPE, &[Values::I16(vec![storage])]);
        self.block(tag::TITLE, &[string_record(&file.title)]);
        self.block(tag::APPLICATION, &[string_record(&file.application)]);
        self.block(
            tag::APPLICATION_VERSION,
            &[Values::I32(vec![file.application_version])],
        );
        self.block(tag::DATA_TYPE, &[Values::I32(vec![file.data_type])]);
        self.block(tag::COMPRESSED, &[Values::I32(vec![file.compressed])]);
        self.block(
            tag::STATISTICS_TYPE,
            &[Values::I32(vec![file.statistics_type])],
        );
        self.block(tag::DELETE_FLOAT, &[Values::F32(vec![file.delete_float])]);
        self.block(tag::DELETE_DOUBLE, &[Values::F64(vec![file.delete_double])]);
        self.block(tag::DELETE_BYTE, &[Values::U8(vec![file.delete_byte])]);
        self.block(tag::DELETE_INT, &[Values::I32(vec![file.delete_int])]);
        self.block(tag::DELETE_UINT, &[Values::U32(vec![file.delete_uint])]);
        if let Some(projection) = &file.projection {
            self.block(
                tag::PROJECTION,
                &[
                    string_record(&projection.name),
                    Values::F64(vec![
                        projection.origin_longitude,
                        projection.origin_latitude,
                        projection.orientation,
                    ]),
                ],
            );
        }
        self.write_time_axis();
        self.write_items()?;
        self.write_extras()
    }

    fn write_time_axis(&mut self) {
        self.block(tag::TIME, &[]);
        let time = self.header.file.time.clone();
        let time = &time;
        self.open(tag::TIME_AXIS_BASE + time.kind.code());
        if time.kind.is_calendar() {
            let (date, clock) = time.start.clone().unwrap_or_default();
            self.record(&string_record(&date));
            self.record(&string_record(&clock));
        }
        self.record(&Values::I32(vec![time.unit]));
        self.patches.time_doubles =
            self.record(&Values::F64(vec![time.start_offset, time.step_or_span]));
        self.patches.time_counts = self.record(&Values::I32(vec![0, time.first_index]));
        self.close();
    }

    fn write_items(&mut self) -> FormatResult<()> {
        self.block(tag::ITEMS, &[]);
        let item_count = i32::try_from(self.header.items.len()).unwrap_or(i32::MAX);
        self.block(tag::ITEM_COUNT, &[Values::I32(vec![item_count])]);
        let items = self.header.items.clone();
        for (index, item) in items.iter().enumerate() {
            let range_at =
                self.item_definition(item, [super::stats::NO_VALUE, super::stats::NO_VALUE, 0.0]);
            self.patches.ranges.push(range_at);
            let statistics_at = match self.statistics.get(index).and_then(|s| s.per_element()) {
                Some(numbers) => {
                    let numbers = Values::F64(numbers.to_vec());
                    self.open(tag::ITEM_STATISTICS);
                    let at = self.record(&numbers);
                    self.close();
                    Some(at)
                }
                None => None,
            };
            self.patches.statistics.push(statistics_at);
            self.emit()?;
        }
        Ok(())
    }

    /// Custom blocks, static items and the start of the data.
    fn write_extras(&mut self) -> FormatResult<()> {
        let custom_blocks = self.header.custom_blocks.clone();
        for custom in &custom_blocks {
            self.block(
                tag::CUSTOM,
                &[string_record(&custom.name), custom.values.clone()],
            );
        }
        self.emit()?;
        if !self.header.statics.is_empty() {
            self.block(tag::STATIC, &[]);
            let statics = std::mem::take(&mut self.header.statics);
            for item in &statics {
                let mut info = item.info.clone();
                info.data_type = item.values.data_type();
                self.item_definition(&info, item.info.range);
                self.open(tag::STATIC_DATA);
                self.record(&item.values);
                self.close();
                self.emit()?;
            }
            self.header.statics = statics;
        }
        self.block(tag::DYNAMIC, &[]);
        self.emit()
    }

    /// Writes an item's definition, value type and axis; returns where its range values are.
    fn item_definition(&mut self, item: &ItemInfo, range: [f64; 3]) -> u64 {
        self.open(tag::ITEM);
        self.record(&Values::I32(vec![item.eum_item]));
        self.record(&string_record(&item.name));
        self.record(&Values::I32(vec![item.eum_unit]));
        self.record(&Values::I32(vec![i32::from(type_code(item.data_type))]));
        let range_at = self.record(&Values::F64(range.to_vec()));
        self.record(&Values::F32(item.reference.to_vec()));
        self.record(&Values::F32(item.orientation.to_vec()));
        self.close();
        self.block(tag::VALUE_TYPE, &[Values::I32(vec![item.value_type])]);
        self.axis(&item.axis);
        range_at
    }

    fn axis(&mut self, axis: &SpatialAxis) {
        self.open(axis.tag);
        let mut head = vec![axis.unit];
        head.extend_from_slice(&axis.counts);
        self.record(&Values::I32(head));
        for coordinates in &axis.coordinates {
            self.record(coordinates);
        }
        self.close();
    }

    /// Starts a step. `time` (in axis units from the start, offset included) is required on a
    /// non-equidistant axis and ignored on an equidistant one.
    pub fn start_step(&mut self, time: Option<f64>) -> FormatResult<()> {
        if self.in_step {
            return Err(self.misuse("a step was started before the previous one was complete"));
        }
        self.open(tag::STEP);
        if !self.header.file.time.kind.is_equidistant() {
            let time = time.ok_or_else(|| self.misuse("a non-equidistant step needs its time"))?;
            if let Some(last) = self.last_time
                && time <= last
            {
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("step {}", self.steps),
                    format!("time {time} does not follow {last}"),
                ));
            }
            self.record(&Values::F64(vec![time]));
            self.first_time.get_or_insert(time);
            self.last_time = Some(time);
        }
        self.close();
        self.in_step = true;
        self.next_item = 0;
        if self.header.items.is_empty() {
            self.end_step();
        }
        self.emit()
    }

    fn end_step(&mut self) {
        self.in_step = false;
        self.steps = self.steps.saturating_add(1);
    }

    /// Writes the next item's values of the current step.
    pub fn write_item(&mut self, values: &Values) -> FormatResult<()> {
        if !self.in_step {
            return Err(self.misuse("item values outside a step"));
        }
        let index = self.next_item;
        let Some(item) = self.header.items.get(index) else {
            return Err(self.misuse("more item values than items"));
        };
        if values.data_type() != item.data_type {
            return Err(self.misuse(&format!(
                "item {:?} is {} but {} values were given",
                item.name,
                item.data_type.gdal_name(),
                values.data_type().gdal_name()
            )));
        }
        let expected = match self.counts.get(index).copied().flatten() {
            Some(count) => count,
            None => {
                let count = if self.header.file.compressed != 0 {
                    values.len()
                } else {
                    item.axis.size().unwrap_or(0)
                };
                if let Some(slot) = self.counts.get_mut(index) {
                    *slot = Some(count);
                }
                count
            }
        };
        if values.len() != expected {
            return Err(self.misuse(&format!(
                "item {:?} takes {expected} values per step, {} were given",
                item.name,
                values.len()
            )));
        }
        if let Some(statistics) = self.statistics.get_mut(index) {
            statistics.add(&self.header, values);
        }
        self.record(values);
        self.next_item += 1;
        if self.next_item == self.header.items.len() {
            self.end_step();
        }
        if self.buffer.len() >= 1 << 20 || !self.in_step {
            self.emit()?;
        }
        Ok(())
    }

    /// Number of complete steps written.
    pub fn steps_written(&self) -> usize {
        usize::try_from(self.steps).unwrap_or(0)
    }

    fn misuse(&self, message: &str) -> FormatError {
        FormatError::Catalogue(format!("DFS writer: {message}"))
    }

    /// Patches the header and flushes. Returns the output.
    pub fn finish(mut self) -> FormatResult<W> {
        if self.in_step {
            return Err(self.misuse("the last step is incomplete"));
        }
        self.emit()?;
        let time = &self.header.file.time;
        let step_or_span = if time.kind.is_equidistant() {
            time.step_or_span
        } else {
            match (self.first_time, self.last_time) {
                (Some(first), Some(last)) => last - first,
                _ => 0.0,
            }
        };
        let mut patches: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut doubles = Vec::new();
        encode(
            &Values::F64(vec![time.start_offset, step_or_span]),
            &mut doubles,
        );
        patches.push((self.patches.time_doubles, doubles));
        let mut counts = Vec::new();
        encode(
            &Values::I32(vec![self.steps, time.first_index]),
            &mut counts,
        );
        patches.push((self.patches.time_counts, counts));
        for (index, statistics) in self.statistics.iter().enumerate() {
            if let Some(at) = self.patches.ranges.get(index) {
                let mut bytes = Vec::new();
                encode(&Values::F64(statistics.range().to_vec()), &mut bytes);
                patches.push((*at, bytes));
            }
            if let (Some(Some(at)), Some(numbers)) =
                (self.patches.statistics.get(index), statistics.per_element())
            {
                let mut bytes = Vec::new();
                encode(&Values::F64(numbers.to_vec()), &mut bytes);
                patches.push((*at, bytes));
            }
        }
        let path = self.path.clone();
        let io = |error| FormatError::write(&path, error);
        for (at, bytes) in patches {
            self.out.seek(SeekFrom::Start(at)).map_err(io)?;
            self.out.write_all(&bytes).map_err(io)?;
        }
        self.out.seek(SeekFrom::Start(self.position)).map_err(io)?;
        self.out.flush().map_err(io)?;
        Ok(self.out)
    }
}

fn push_timestamp(out: &mut Vec<u8>, timestamp: Timestamp) {
    for part in timestamp {
        out.extend_from_slice(&part.to_le_bytes());
    }
}

/// The current local time as a preamble timestamp (UTC: a server has no meaningful local
/// zone).
pub fn now_timestamp() -> Timestamp {
    use chrono::{Datelike, Timelike};
    let now = chrono::Utc::now().naive_utc();
    let part = |value: u32| i16::try_from(value).unwrap_or(0);
    [
        i16::try_from(now.year()).unwrap_or(2000),
        part(now.month()),
        part(now.day()),
        part(now.hour()),
        part(now.minute()),
        part(now.second()),
    ]
}

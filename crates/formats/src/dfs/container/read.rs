//! Reading a DFS file: the preamble and header blocks in full, the dynamic data lazily.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek};
use std::path::Path;

use crate::error::{FormatError, FormatResult};
use crate::limits::{ReadLimits, check_limit};
use crate::model::{DataType, Values};

use super::tokens::{Next, Tokens, data_type_of};
use super::{
    CREATOR, CustomBlock, DeleteValues, DfsHeader, FORMAT, FileHeader, ItemInfo, MAGIC,
    PREAMBLE_BYTES, ProjectionRecord, SpatialAxis, StaticItem, TimeAxisKind, TimeAxisRecord,
    Timestamp, axis, string_of, tag,
};

/// Bytes of a record's head: its type (1 byte) and value count (i32).
const RECORD_HEAD_BYTES: u64 = 5;

/// An open DFS file: the header, and where each item of each step lies.
pub struct DfsFile<R = BufReader<File>> {
    /// Everything before the data.
    pub header: DfsHeader,
    layout: Layout,
    tokens: Tokens<R>,
}

impl<R> std::fmt::Debug for DfsFile<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DfsFile")
            .field("header", &self.header)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

/// Where the data is: every step has the same size, so step `k` item `i` starts at
/// `data_start + k * step_bytes + item_offsets[i]`.
#[derive(Debug, Clone, Default)]
struct Layout {
    data_start: u64,
    step_bytes: u64,
    /// Offset of each item's record head within a step.
    item_offsets: Vec<u64>,
    /// Number of values of each item per step.
    item_counts: Vec<usize>,
    steps: usize,
}

impl DfsFile {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path, limits: &ReadLimits) -> FormatResult<Self> {
        let file = File::open(path).map_err(|error| FormatError::read(path, error))?;
        let length = file
            .metadata()
            .map_err(|error| FormatError::read(path, error))?
            .len();
        Self::from_reader(BufReader::with_capacity(256 * 1024, file), length, limits)
    }
}

impl<R: BufRead + Seek> DfsFile<R> {
    /// Reads the header from `input`, a DFS file of `length` bytes positioned at its start.
    pub fn from_reader(input: R, length: u64, limits: &ReadLimits) -> FormatResult<Self> {
        let mut tokens = Tokens::new(input, 0, length);
        let (created, modified) = read_preamble(&mut tokens)?;
        let file = read_file_header(&mut tokens)?;
        check_limit(
            "number of time steps",
            u64::try_from(file.time.steps).unwrap_or(0),
            limits.time_steps_max,
        )?;
        let items = read_items(&mut tokens, limits)?;
        let (custom_blocks, statics) = read_extras(&mut tokens)?;
        let header = DfsHeader {
            created,
            modified,
            file,
            items,
            custom_blocks,
            statics,
        };
        let layout = read_layout(&mut tokens, &header)?;
        Ok(Self {
            header,
            layout,
            tokens,
        })
    }

    /// Number of time steps.
    pub fn steps(&self) -> usize {
        self.layout.steps
    }

    /// Number of values item `item` has per step (from the data, which for compressed files
    /// is fewer than its axis spans).
    pub fn item_len(&self, item: usize) -> Option<usize> {
        self.layout.item_counts.get(item).copied()
    }

    /// Offset of the first byte after the header (the first step).
    pub fn data_start(&self) -> u64 {
        self.layout.data_start
    }

    /// Bytes of one step, marker included.
    pub fn step_bytes(&self) -> u64 {
        self.layout.step_bytes
    }

    /// Where every value of the data lies, for reading a few values of many steps directly
    /// (see [`ValueLayout`]); it borrows nothing, so it outlives the open file.
    pub fn value_layout(&self) -> ValueLayout {
        let items = self
            .header
            .items
            .iter()
            .zip(
                self.layout
                    .item_offsets
                    .iter()
                    .zip(&self.layout.item_counts),
            )
            .map(|(info, (&offset, &count))| ItemValues {
                first: offset.saturating_add(RECORD_HEAD_BYTES),
                count,
                data_type: info.data_type,
            })
            .collect();
        ValueLayout {
            data_start: self.layout.data_start,
            step_bytes: self.layout.step_bytes,
            steps: self.layout.steps,
            items,
            deletes: DeleteValues::of(&self.header.file),
        }
    }

    /// The time a non-equidistant step records (in axis units from the start), or `None` for
    /// an equidistant axis.
    pub fn step_time(&mut self, step: usize) -> FormatResult<Option<f64>> {
        if self.header.file.time.kind.is_equidistant() {
            return Ok(None);
        }
        self.seek_step(step, None)?;
        self.tokens.expect_open(tag::STEP, "a time step")?;
        let record = self.tokens.record()?;
        self.tokens.close()?;
        match record {
            Values::F64(values) if values.len() == 1 => Ok(values.first().copied()),
            _ => Err(self.tokens.error("a time step's time is not one double")),
        }
    }

    /// Every step's time of a non-equidistant axis, read in one sequential pass.
    pub fn step_times(&mut self) -> FormatResult<Vec<f64>> {
        let mut times = Vec::with_capacity(self.steps().min(1 << 20));
        for step in 0..self.steps() {
            times.push(self.step_time(step)?.unwrap_or(0.0));
        }
        Ok(times)
    }

    /// Reads item `item` of step `step` into `values` (its allocation reused).
    pub fn read_values(
        &mut self,
        step: usize,
        item: usize,
        values: &mut Values,
    ) -> FormatResult<()> {
        self.seek_step(step, Some(item))?;
        let (data_type, count) = self.tokens.record_head()?;
        let expected_type = self
            .header
            .items
            .get(item)
            .map(|info| info.data_type)
            .ok_or_else(|| self.tokens.error(format!("no item {item}")))?;
        let expected_count = self.item_len(item).unwrap_or(0);
        if data_type != expected_type || count != expected_count {
            return Err(self.tokens.error(format!(
                "step {step} item {item} holds {count} {} values where {expected_count} {} were expected",
                data_type.gdal_name(),
                expected_type.gdal_name()
            )));
        }
        self.tokens.record_body(data_type, count, values)
    }

    fn seek_step(&mut self, step: usize, item: Option<usize>) -> FormatResult<()> {
        if step >= self.layout.steps {
            return Err(self.tokens.error(format!(
                "no step {step}: the file has {}",
                self.layout.steps
            )));
        }
        let within = match item {
            None => 0,
            Some(item) => *self
                .layout
                .item_offsets
                .get(item)
                .ok_or_else(|| self.tokens.error(format!("no item {item}")))?,
        };
        let position = self.layout.data_start + step as u64 * self.layout.step_bytes + within;
        self.tokens.seek(position)
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.tokens.into_inner()
    }
}

/// Where the values of a DFS file lie, byte by byte: a step's item is a record head (type and
/// count, 5 bytes) then its values, little-endian, and every step has the same size, so the
/// value `index` of item `item` at step `step` is at a fixed offset. Reading a position's
/// values over many steps then takes a few bytes per step instead of whole items (the EDR
/// position queries of basin-edr do this). The offsets are the file's own stored order: for a
/// grid, rows south to north as stored (the grid reader flips them), and for a compressed file
/// the stored values, not the cells.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueLayout {
    data_start: u64,
    step_bytes: u64,
    steps: usize,
    items: Vec<ItemValues>,
    deletes: DeleteValues,
}

/// Where one item's values lie within a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ItemValues {
    /// Offset of the first value from the start of the step.
    first: u64,
    count: usize,
    data_type: DataType,
}

impl ValueLayout {
    /// Number of time steps.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Number of dynamic items.
    pub fn items(&self) -> usize {
        self.items.len()
    }

    /// Number of values item `item` stores per step.
    pub fn item_len(&self, item: usize) -> Option<usize> {
        self.items.get(item).map(|values| values.count)
    }

    /// How item `item` stores its values (each takes `size_bytes()` bytes).
    pub fn data_type(&self, item: usize) -> Option<DataType> {
        self.items.get(item).map(|values| values.data_type)
    }

    /// The length of the file this layout describes: data start plus every step.
    pub fn file_len(&self) -> Option<u64> {
        self.data_start.checked_add(
            self.step_bytes
                .checked_mul(u64::try_from(self.steps).ok()?)?,
        )
    }

    /// The byte offset in the file of value `index` of item `item` at step `step`; `None` when
    /// any of the three is out of range.
    pub fn offset(&self, step: usize, item: usize, index: usize) -> Option<u64> {
        let values = self.items.get(item)?;
        if step >= self.steps || index >= values.count {
            return None;
        }
        let within = u64::try_from(index)
            .ok()?
            .checked_mul(u64::try_from(values.data_type.size_bytes()).ok()?)?
            .checked_add(values.first)?;
        u64::try_from(step)
            .ok()?
            .checked_mul(self.step_bytes)?
            .checked_add(self.data_start)?
            .checked_add(within)
    }

    /// A value of item `item` from its stored bytes (`data_type(item).size_bytes()` of them,
    /// little-endian) as the readers give it: widened to f64, and NaN for a float or double
    /// delete value (see [`DeleteValues`]). `None` when the bytes are not one value's.
    pub fn value(&self, item: usize, bytes: &[u8]) -> Option<f64> {
        let data_type = self.items.get(item)?.data_type;
        Some(match data_type {
            DataType::F32 => {
                let value = f32::from_le_bytes(bytes.try_into().ok()?);
                if self.deletes.is_missing_f32(value) {
                    f64::NAN
                } else {
                    f64::from(value)
                }
            }
            DataType::F64 => {
                let value = f64::from_le_bytes(bytes.try_into().ok()?);
                if self.deletes.is_missing_f64(value) {
                    f64::NAN
                } else {
                    value
                }
            }
            DataType::U8 => f64::from(u8::from_le_bytes(bytes.try_into().ok()?)),
            DataType::I16 => f64::from(i16::from_le_bytes(bytes.try_into().ok()?)),
            DataType::U16 => f64::from(u16::from_le_bytes(bytes.try_into().ok()?)),
            DataType::I32 => f64::from(i32::from_le_bytes(bytes.try_into().ok()?)),
            DataType::U32 => f64::from(u32::from_le_bytes(bytes.try_into().ok()?)),
        })
    }
}

fn read_preamble<R: BufRead + Seek>(
    tokens: &mut Tokens<R>,
) -> FormatResult<(Timestamp, Timestamp)> {
    let mut preamble = [0_u8; PREAMBLE_BYTES as usize];
    tokens
        .bytes(&mut preamble)
        .map_err(|_| FormatError::invalid(FORMAT, "byte 0", "too short for a DFS file"))?;
    if preamble.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
        return Err(FormatError::invalid(
            FORMAT,
            "byte 0",
            "not a DFS file (the DHI_DFS_ signature is missing)",
        ));
    }
    let creator_end = MAGIC.len() + CREATOR.len();
    if preamble.get(creator_end) != Some(&0x1A) {
        return Err(FormatError::invalid(
            FORMAT,
            format!("byte {creator_end}"),
            "the preamble does not end its creator text with 0x1A",
        ));
    }
    let timestamp = |at: usize| -> Timestamp {
        let mut out = [0_i16; 6];
        for (index, value) in out.iter_mut().enumerate() {
            let start = at + 2 * index;
            if let Some(bytes) = preamble
                .get(start..)
                .and_then(|rest| rest.first_chunk::<2>())
            {
                *value = i16::from_le_bytes(*bytes);
            }
        }
        out
    };
    Ok((timestamp(0x52), timestamp(0x66)))
}

fn first_int(values: &Values) -> Option<i64> {
    match values {
        Values::U8(v) => v.first().map(|x| i64::from(*x)),
        Values::I16(v) => v.first().map(|x| i64::from(*x)),
        Values::U16(v) => v.first().map(|x| i64::from(*x)),
        Values::I32(v) => v.first().map(|x| i64::from(*x)),
        Values::U32(v) => v.first().map(|x| i64::from(*x)),
        Values::F32(_) | Values::F64(_) => None,
    }
}

fn ints(values: &Values) -> Option<Vec<i64>> {
    match values {
        Values::I32(v) => Some(v.iter().map(|x| i64::from(*x)).collect()),
        _ => None,
    }
}

fn read_file_header<R: BufRead + Seek>(tokens: &mut Tokens<R>) -> FormatResult<FileHeader> {
    tokens.expect_open(tag::HEADER, "the header")?;
    tokens.close()?;
    let mut header = FileHeader::default();
    let mut seen: Vec<u16> = Vec::new();
    loop {
        let at = tokens.position();
        let block = tokens.open()?;
        if block == tag::TIME {
            tokens.close()?;
            break;
        }
        if seen.contains(&block) {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!("header block {block} appears twice"),
            ));
        }
        seen.push(block);
        let records = tokens.records_until_close()?;
        apply_header_block(&mut header, block, &records)
            .map_err(|message| FormatError::invalid(FORMAT, format!("byte {at}"), message))?;
    }
    header.time = read_time_axis(tokens)?;
    Ok(header)
}

/// Sets the field of `header` that block `block` holds; the error says what is wrong.
fn apply_header_block(
    header: &mut FileHeader,
    block: u16,
    records: &[Values],
) -> Result<(), String> {
    let first = records.first();
    let int = |what: &str| {
        first
            .and_then(first_int)
            .and_then(|value| i32::try_from(value).ok())
            .ok_or_else(|| format!("malformed {what}"))
    };
    let text = |what: &str| {
        first
            .and_then(string_of)
            .ok_or_else(|| format!("malformed {what}"))
    };
    match (block, first) {
        (tag::TITLE, _) => header.title = text("title")?,
        (tag::APPLICATION, _) => header.application = text("application title")?,
        (tag::APPLICATION_VERSION, _) => {
            header.application_version = int("application version")?;
        }
        (tag::STORAGE_TYPE, _) => {
            int("storage type")?;
        }
        (tag::DATA_TYPE, _) => header.data_type = int("data type")?,
        (tag::COMPRESSED, _) => header.compressed = int("compression flag")?,
        (tag::STATISTICS_TYPE, _) => header.statistics_type = int("statistics type")?,
        (tag::DELETE_FLOAT, Some(Values::F32(v))) if v.len() == 1 => {
            header.delete_float = v.first().copied().unwrap_or(-1e-35);
        }
        (tag::DELETE_DOUBLE, Some(Values::F64(v))) if v.len() == 1 => {
            header.delete_double = v.first().copied().unwrap_or(-1e-255);
        }
        (tag::DELETE_BYTE, Some(Values::U8(v))) if v.len() == 1 => {
            header.delete_byte = v.first().copied().unwrap_or(0);
        }
        (tag::DELETE_INT, Some(Values::I32(v))) if v.len() == 1 => {
            header.delete_int = v.first().copied().unwrap_or(i32::MAX);
        }
        (tag::DELETE_UINT, Some(Values::U32(v))) if v.len() == 1 => {
            header.delete_uint = v.first().copied().unwrap_or(2_147_483_647);
        }
        (
            tag::DELETE_FLOAT
            | tag::DELETE_DOUBLE
            | tag::DELETE_BYTE
            | tag::DELETE_INT
            | tag::DELETE_UINT,
            _,
        ) => return Err(format!("malformed delete value (block {block})")),
        (tag::PROJECTION, _) => {
            let name = text("projection")?;
            let [longitude, latitude, orientation] = match records.get(1) {
                Some(Values::F64(v)) => <[f64; 3]>::try_from(v.as_slice())
                    .map_err(|_| "malformed projection origin".to_owned())?,
                _ => return Err("malformed projection origin".to_owned()),
            };
            header.projection = Some(ProjectionRecord {
                name,
                origin_longitude: longitude,
                origin_latitude: latitude,
                orientation,
            });
        }
        (other, _) => return Err(format!("unknown header block {other}")),
    }
    Ok(())
}

fn read_time_axis<R: BufRead + Seek>(tokens: &mut Tokens<R>) -> FormatResult<TimeAxisRecord> {
    let at = tokens.position();
    let block = tokens.open()?;
    let kind = block
        .checked_sub(tag::TIME_AXIS_BASE)
        .and_then(TimeAxisKind::from_code)
        .ok_or_else(|| {
            FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!("unknown time axis block {block}"),
            )
        })?;
    let records = tokens.records_until_close()?;
    let bad = |what: &str| {
        FormatError::invalid(
            FORMAT,
            format!("byte {at}"),
            format!("malformed time axis: {what}"),
        )
    };
    let mut rest = records.iter();
    let start = if kind.is_calendar() {
        let date = rest
            .next()
            .and_then(string_of)
            .ok_or_else(|| bad("start date"))?;
        let time = rest
            .next()
            .and_then(string_of)
            .ok_or_else(|| bad("start time"))?;
        Some((date, time))
    } else {
        None
    };
    let unit = rest
        .next()
        .and_then(first_int)
        .and_then(|unit| i32::try_from(unit).ok())
        .ok_or_else(|| bad("time unit"))?;
    let Some(Values::F64(doubles)) = rest.next() else {
        return Err(bad("offset and step"));
    };
    let [start_offset, step_or_span] = doubles.as_slice() else {
        return Err(bad("offset and step"));
    };
    let Some(Values::I32(counts)) = rest.next() else {
        return Err(bad("step count"));
    };
    let [steps, first_index] = counts.as_slice() else {
        return Err(bad("step count"));
    };
    if *steps < 0 {
        return Err(bad("negative step count"));
    }
    if rest.next().is_some() {
        return Err(bad("extra records"));
    }
    Ok(TimeAxisRecord {
        kind,
        start,
        unit,
        start_offset: *start_offset,
        step_or_span: *step_or_span,
        steps: *steps,
        first_index: *first_index,
    })
}

fn read_items<R: BufRead + Seek>(
    tokens: &mut Tokens<R>,
    limits: &ReadLimits,
) -> FormatResult<Vec<ItemInfo>> {
    tokens.expect_open(tag::ITEMS, "the item section")?;
    tokens.close()?;
    let at = tokens.position();
    tokens.expect_open(tag::ITEM_COUNT, "the item count")?;
    let records = tokens.records_until_close()?;
    let count = records
        .first()
        .and_then(first_int)
        .and_then(|count| u64::try_from(count).ok())
        .ok_or_else(|| {
            FormatError::invalid(FORMAT, format!("byte {at}"), "malformed item count")
        })?;
    check_limit("number of items", count, limits.items_max)?;
    let mut items = Vec::new();
    for _ in 0..count {
        let mut item = read_item(tokens)?;
        if tokens.peek_tag()? == Some(tag::ITEM_STATISTICS) {
            let at = tokens.position();
            tokens.open()?;
            let records = tokens.records_until_close()?;
            match <[Values; 1]>::try_from(records) {
                Ok([Values::F64(values)]) if values.len() % 9 == 0 => {
                    item.statistics = Some(values);
                }
                _ => {
                    return Err(FormatError::invalid(
                        FORMAT,
                        format!("byte {at}"),
                        "item statistics must be nine doubles per element",
                    ));
                }
            }
        }
        items.push(item);
    }
    Ok(items)
}

fn read_item<R: BufRead + Seek>(tokens: &mut Tokens<R>) -> FormatResult<ItemInfo> {
    let at = tokens.position();
    tokens.expect_open(tag::ITEM, "an item definition")?;
    let records = tokens.records_until_close()?;
    let bad = |what: &str| {
        FormatError::invalid(
            FORMAT,
            format!("byte {at}"),
            format!("malformed item definition: {what}"),
        )
    };
    let int_at = |index: usize, what: &str| {
        records
            .get(index)
            .and_then(first_int)
            .and_then(|value| i32::try_from(value).ok())
            .ok_or_else(|| bad(what))
    };
    let eum_item = int_at(0, "EUM type")?;
    let name = records
        .get(1)
        .and_then(string_of)
        .ok_or_else(|| bad("name"))?;
    let eum_unit = int_at(2, "EUM unit")?;
    let data_type =
        data_type_of(i64::from(int_at(3, "data type")?)).ok_or_else(|| bad("data type"))?;
    let range = match records.get(4) {
        Some(Values::F64(v)) => v.as_slice().try_into().map_err(|_| bad("range"))?,
        None => [-1e-255, -1e-255, 0.0],
        Some(_) => return Err(bad("range")),
    };
    let triple = |index: usize, what: &str| match records.get(index) {
        Some(Values::F32(v)) => <[f32; 3]>::try_from(v.as_slice()).map_err(|_| bad(what)),
        None => Ok([-1e-35; 3]),
        Some(_) => Err(bad(what)),
    };
    let reference = triple(5, "reference coordinates")?;
    let orientation = triple(6, "orientation")?;
    if records.len() > 7 {
        return Err(bad("extra records"));
    }
    let at = tokens.position();
    tokens.expect_open(tag::VALUE_TYPE, "an item value type")?;
    let value_type = tokens
        .records_until_close()?
        .first()
        .and_then(first_int)
        .and_then(|value| i32::try_from(value).ok())
        .ok_or_else(|| {
            FormatError::invalid(FORMAT, format!("byte {at}"), "malformed value type")
        })?;
    let axis = read_axis(tokens)?;
    Ok(ItemInfo {
        eum_item,
        name,
        eum_unit,
        data_type,
        value_type,
        reference,
        orientation,
        axis,
        range,
        statistics: None,
    })
}

fn read_axis<R: BufRead + Seek>(tokens: &mut Tokens<R>) -> FormatResult<SpatialAxis> {
    let at = tokens.position();
    let block = tokens.open()?;
    let dimensions = match block {
        axis::EQ_D0 => 0,
        axis::EQ_D1 | axis::NEQ_D1 => 1,
        axis::EQ_D2 | axis::NEQ_D2 | axis::CURVILINEAR_D2 => 2,
        axis::EQ_D3 => 3,
        other => {
            return Err(FormatError::unsupported(
                FORMAT,
                format!("spatial axis block {other} at byte {at}"),
            ));
        }
    };
    let records = tokens.records_until_close()?;
    let bad = |what: &str| {
        FormatError::invalid(
            FORMAT,
            format!("byte {at}"),
            format!("malformed spatial axis: {what}"),
        )
    };
    let Some(head) = records.first().and_then(ints) else {
        return Err(bad("unit and counts"));
    };
    if head.len() != dimensions + 1 {
        return Err(bad("number of counts"));
    }
    let unit = head.first().copied().unwrap_or(0);
    let counts: Vec<i32> = head
        .iter()
        .skip(1)
        .map(|count| i32::try_from(*count).ok().filter(|count| *count >= 0))
        .collect::<Option<_>>()
        .ok_or_else(|| bad("negative count"))?;
    let axis = SpatialAxis {
        tag: block,
        unit: i32::try_from(unit).map_err(|_| bad("unit"))?,
        counts,
        coordinates: records.into_iter().skip(1).collect(),
    };
    if axis.size().is_none() {
        return Err(bad("counts overflow"));
    }
    match block {
        axis::EQ_D1 | axis::EQ_D2 | axis::EQ_D3 if axis.equidistant().is_none() => {
            return Err(bad("origins and spacings"));
        }
        axis::EQ_D0 if !axis.coordinates.is_empty() => return Err(bad("extra records")),
        _ => {}
    }
    Ok(axis)
}

fn read_extras<R: BufRead + Seek>(
    tokens: &mut Tokens<R>,
) -> FormatResult<(Vec<CustomBlock>, Vec<StaticItem>)> {
    let mut custom_blocks = Vec::new();
    let mut statics = Vec::new();
    let mut in_static = false;
    loop {
        let at = tokens.position();
        match tokens.peek_tag()? {
            Some(tag::CUSTOM) => {
                tokens.open()?;
                let records = tokens.records_until_close()?;
                let [name, values] = records.as_slice() else {
                    return Err(FormatError::invalid(
                        FORMAT,
                        format!("byte {at}"),
                        "a custom block must hold a name and one record",
                    ));
                };
                let name = string_of(name).ok_or_else(|| {
                    FormatError::invalid(FORMAT, format!("byte {at}"), "custom block name")
                })?;
                custom_blocks.push(CustomBlock {
                    name,
                    values: values.clone(),
                });
            }
            Some(tag::STATIC) if !in_static => {
                tokens.open()?;
                tokens.close()?;
                in_static = true;
            }
            Some(tag::ITEM) if in_static => {
                let info = read_item(tokens)?;
                let at = tokens.position();
                tokens.expect_open(tag::STATIC_DATA, "static item data")?;
                let records = tokens.records_until_close()?;
                let Ok([values]) = <[Values; 1]>::try_from(records) else {
                    return Err(FormatError::invalid(
                        FORMAT,
                        format!("byte {at}"),
                        "static item data must be one record",
                    ));
                };
                statics.push(StaticItem { info, values });
            }
            Some(tag::DYNAMIC) => {
                tokens.open()?;
                tokens.close()?;
                return Ok((custom_blocks, statics));
            }
            Some(other) => {
                return Err(FormatError::invalid(
                    FORMAT,
                    format!("byte {at}"),
                    format!("unexpected block {other} after the item definitions"),
                ));
            }
            None => {
                return Err(match tokens.next()? {
                    Next::End => tokens.error("the file ends before its data section"),
                    _ => tokens.error("expected a block after the item definitions"),
                });
            }
        }
    }
}

/// Works out the layout from the first step and checks the file size against it.
fn read_layout<R: BufRead + Seek>(
    tokens: &mut Tokens<R>,
    header: &DfsHeader,
) -> FormatResult<Layout> {
    let data_start = tokens.position();
    let steps = usize::try_from(header.file.time.steps).unwrap_or(0);
    let mut layout = Layout {
        data_start,
        steps,
        ..Layout::default()
    };
    let data_bytes = tokens.remaining();
    if steps == 0 {
        if data_bytes != 0 {
            return Err(tokens.error(format!(
                "the header says there are no time steps but {data_bytes} bytes of data follow"
            )));
        }
        layout.item_counts = vec![0; header.items.len()];
        layout.item_offsets = vec![0; header.items.len()];
        return Ok(layout);
    }
    tokens.expect_open(tag::STEP, "the first time step")?;
    let marker = tokens.records_until_close()?;
    let equidistant = header.file.time.kind.is_equidistant();
    match (equidistant, marker.as_slice()) {
        (true, []) => {}
        (false, [Values::F64(time)]) if time.len() == 1 => {}
        _ => return Err(tokens.error("the first time step's marker does not fit the time axis")),
    }
    for info in &header.items {
        layout.item_offsets.push(tokens.position() - data_start);
        let at = tokens.position();
        let (data_type, count) = tokens.record_head()?;
        if data_type != info.data_type {
            return Err(FormatError::invalid(
                FORMAT,
                format!("byte {at}"),
                format!(
                    "item {:?} is declared {} but its data is {}",
                    info.name,
                    info.data_type.gdal_name(),
                    data_type.gdal_name()
                ),
            ));
        }
        let bytes = count as u64 * data_type.size_bytes() as u64;
        tokens.seek(tokens.position() + bytes)?;
        layout.item_counts.push(count);
    }
    layout.step_bytes = tokens.position() - data_start;
    let expected = (steps as u64).saturating_mul(layout.step_bytes);
    if expected != data_bytes {
        let complete = data_bytes / layout.step_bytes.max(1);
        return Err(FormatError::invalid(
            FORMAT,
            format!("byte {data_start}"),
            format!(
                "the header announces {steps} time steps of {} bytes but the data holds {data_bytes} bytes ({complete} complete steps)",
                layout.step_bytes
            ),
        ));
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::dfs::container::DfsWriter;
    use crate::dfs::mapping::delete_values_to_nan;

    /// Three items of three values (f32, f64, i16, in that order) over two steps, holding
    /// plain values and each type's delete values.
    fn file() -> (DfsFile<Cursor<Vec<u8>>>, Vec<u8>) {
        let mut header = DfsHeader::default();
        for (name, data_type) in [
            ("float", DataType::F32),
            ("double", DataType::F64),
            ("short", DataType::I16),
        ] {
            let mut item = ItemInfo::new(name, 999, 0, SpatialAxis::eq_d1(1000, 3, 0.0, 1.0));
            item.data_type = data_type;
            header.items.push(item);
        }
        let path = Path::new("layout.dfs1");
        let mut writer = DfsWriter::new(Cursor::new(Vec::new()), path, header)
            .unwrap_or_else(|error| panic!("{error}"));
        for step in 0..2_i16 {
            let scale = f32::from(step) + 1.0;
            let written = writer.start_step(None).and_then(|()| {
                writer.write_item(&Values::F32(vec![scale, -1e-35, f32::NAN]))?;
                writer.write_item(&Values::F64(vec![
                    f64::from(-1e-35_f32),
                    -1e-255,
                    f64::from(scale) / 3.0,
                ]))?;
                writer.write_item(&Values::I16(vec![step, -step, i16::MAX]))
            });
            written.unwrap_or_else(|error| panic!("{error}"));
        }
        let bytes = writer
            .finish()
            .unwrap_or_else(|error| panic!("{error}"))
            .into_inner();
        let length = bytes.len() as u64;
        let file = DfsFile::from_reader(Cursor::new(bytes.clone()), length, &ReadLimits::default())
            .unwrap_or_else(|error| panic!("{error}"));
        (file, bytes)
    }

    #[test]
    fn every_offset_holds_the_value_the_reader_reads() {
        let (mut file, bytes) = file();
        let layout = file.value_layout();
        assert_eq!(layout.file_len(), Some(bytes.len() as u64));
        assert_eq!((layout.steps(), layout.items()), (2, 3));
        let mut values = Values::with_capacity(DataType::F32, 0);
        for step in 0..2 {
            for item in 0..3 {
                file.read_values(step, item, &mut values)
                    .unwrap_or_else(|error| panic!("{error}"));
                delete_values_to_nan(&file.header, &mut values);
                let size = layout.data_type(item).map_or(0, DataType::size_bytes);
                for index in 0..3 {
                    let offset = layout.offset(step, item, index).unwrap_or(u64::MAX) as usize;
                    let stored = bytes.get(offset..offset + size).unwrap_or_default();
                    let value = layout.value(item, stored).unwrap_or(0.0);
                    let read = values.get_f64(index).unwrap_or(0.0);
                    assert!(
                        value.to_bits() == read.to_bits() || (value.is_nan() && read.is_nan()),
                        "step {step} item {item} value {index}: {value} where {read} was read"
                    );
                }
            }
        }
    }

    #[test]
    fn delete_values_are_nan_and_other_values_keep_their_bits() {
        let (file, _) = file();
        let layout = file.value_layout();
        let float = |value: f32| layout.value(0, &value.to_le_bytes());
        assert_eq!(float(2.5), Some(2.5));
        assert!(float(-1e-35).is_some_and(f64::is_nan));
        // The double delete value and the float one widened, as MIKE IO writes missing doubles.
        let double = |value: f64| layout.value(1, &value.to_le_bytes());
        assert!(double(-1e-255).is_some_and(f64::is_nan));
        assert!(double(f64::from(-1e-35_f32)).is_some_and(f64::is_nan));
        assert_eq!(double(-1e-35), Some(-1e-35));
        // Integers keep their values: their items announce the delete value as nodata.
        assert_eq!(layout.value(2, &i16::MAX.to_le_bytes()), Some(32767.0));
        assert_eq!(layout.value(2, &(-7_i16).to_le_bytes()), Some(-7.0));
    }

    #[test]
    fn positions_outside_the_data_and_bytes_of_another_size_have_no_value() {
        let (file, _) = file();
        let layout = file.value_layout();
        assert!(layout.offset(1, 2, 2).is_some());
        assert_eq!(layout.offset(2, 0, 0), None);
        assert_eq!(layout.offset(0, 3, 0), None);
        assert_eq!(layout.offset(0, 0, 3), None);
        assert_eq!(layout.value(0, &[0; 8]), None);
        assert_eq!(layout.value(1, &[0; 4]), None);
        assert_eq!(layout.value(3, &[0; 4]), None);
        assert_eq!(layout.item_len(3), None);
    }

    #[test]
    fn offsets_past_the_range_of_u64_are_none() {
        let layout = ValueLayout {
            data_start: 1 << 40,
            step_bytes: u64::MAX / 4,
            steps: usize::MAX,
            items: vec![ItemValues {
                first: 5,
                count: usize::MAX,
                data_type: DataType::F64,
            }],
            deletes: DeleteValues::of(&FileHeader::default()),
        };
        assert_eq!(layout.offset(8, 0, 0), None);
        assert_eq!(layout.offset(0, 0, usize::MAX / 2), None);
        assert!(layout.offset(3, 0, 0).is_some());
        assert_eq!(layout.file_len(), None);
    }
}

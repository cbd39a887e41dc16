//! What DFS0, DFS1/2/3 and DFSU share between the container and the model: the time axis,
//! items (EUM codes, value types, delete values), the projection, the item selection of the
//! readers' `AllowedItemNames` parameter and the loop that streams the data.
//!
//! Delete values become NaN in float items as they are read (the model's "no data" for
//! floats, what MIKE IO gives too) and NaN becomes the delete value as items are written, so
//! that a DFS file read and written again keeps its missing values, and a GeoTIFF nodata value
//! becomes a delete value. Integer items keep their values and announce the file's delete
//! value of their type as nodata.
//!
//! Double items follow MIKE IO, the writer of most double DFS files: it marks missing values
//! in them with the *float* delete value widened to double (-1e-35 as f32, then f64), and
//! takes both that and the double delete value for missing when reading. Basin does the same
//! both ways, so that its files read in MIKE IO with their NaN where they were, and its output
//! is byte-identical to MIKE IO's for the same content. (The reference library's statistics
//! count the widened value as a valid number, as they do in MIKE IO's files.)

use std::io::{BufRead, Seek};

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike};

use crate::error::{FormatError, FormatResult};
use crate::model::{
    DataType, DatasetSink, Frame, Item, ItemLocation, Quantity, TimeAxis, ValueType, Values,
};
use crate::parameters::{ParameterSpec, ParameterType, Parameters};

use super::container::FORMAT;
use super::container::{
    DeleteValues, DfsFile, DfsHeader, ItemInfo, SpatialAxis, TimeAxisKind, TimeAxisRecord,
    time_unit_seconds,
};
use super::eum;

/// EUM item type "undefined", for items whose quantity has no EUM code.
pub const EUM_ITEM_UNDEFINED: i32 = 999;
/// EUM unit "undefined".
pub const EUM_UNIT_UNDEFINED: i32 = 0;
/// EUM unit of seconds, the time unit written.
pub const EUM_SECOND: i32 = 1400;

/// Name of the readers' item selection parameter.
pub const ALLOWED_ITEM_NAMES: &str = "AllowedItemNames";

/// The `AllowedItemNames` parameter of every DFS reader.
pub const ALLOWED_ITEM_NAMES_PARAMETER: ParameterSpec = ParameterSpec {
    name: ALLOWED_ITEM_NAMES,
    description: "Items to read, by name (exact, else the one item equal ignoring case); all items when absent",
    data_type: ParameterType::StringList,
    required: false,
    default_value: None,
    allowed_values: &[],
};

/// The start time written for data without time: a DFS file always has a time axis.
pub fn default_start() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2000, 1, 1)
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .unwrap_or_default()
}

/// The model's time axis of a file. Calendar times are kept to the millisecond.
pub fn time_axis_of<R: BufRead + Seek>(file: &mut DfsFile<R>) -> FormatResult<TimeAxis> {
    let record = file.header.file.time.clone();
    let unit = time_unit_seconds(record.unit).ok_or_else(|| {
        FormatError::unsupported(
            FORMAT,
            format!(
                "time unit EUM {} (seconds, minutes, hours and days are read)",
                record.unit
            ),
        )
    })?;
    let steps = file.steps();
    let start = match &record.start {
        Some((date, time)) => Some(parse_start(date, time)?),
        None => None,
    };
    let offsets: Vec<f64> = if record.kind.is_equidistant() {
        Vec::new()
    } else {
        file.step_times()?
    };
    Ok(match record.kind {
        TimeAxisKind::CalendarEquidistant => TimeAxis::Equidistant {
            start: shift(
                start.unwrap_or_else(default_start),
                record.start_offset * unit,
            )?,
            step_seconds: record.step_or_span * unit,
            steps,
        },
        TimeAxisKind::CalendarNonEquidistant => {
            let start = start.unwrap_or_else(default_start);
            TimeAxis::Calendar(
                offsets
                    .iter()
                    .map(|offset| shift(start, offset * unit))
                    .collect::<FormatResult<_>>()?,
            )
        }
        TimeAxisKind::RelativeEquidistant => TimeAxis::Relative(
            (0..steps)
                .map(|step| (record.start_offset + step as f64 * record.step_or_span) * unit)
                .collect(),
        ),
        TimeAxisKind::RelativeNonEquidistant => {
            TimeAxis::Relative(offsets.iter().map(|offset| offset * unit).collect())
        }
    })
}

fn parse_start(date: &str, time: &str) -> FormatResult<NaiveDateTime> {
    let bad = || {
        FormatError::invalid(
            FORMAT,
            "time axis",
            format!("start {date:?} {time:?} is not a date and time"),
        )
    };
    let date = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d").map_err(|_| bad())?;
    let time = NaiveTime::parse_from_str(time.trim(), "%H:%M:%S").map_err(|_| bad())?;
    Ok(date.and_time(time))
}

/// `start` plus `seconds`, rounded to the millisecond.
fn shift(start: NaiveDateTime, seconds: f64) -> FormatResult<NaiveDateTime> {
    let millis = (seconds * 1000.0).round();
    if !millis.is_finite() || millis.abs() > 1e15 {
        return Err(FormatError::invalid(
            FORMAT,
            "time axis",
            format!("a time {seconds} s from the start is out of range"),
        ));
    }
    start
        .checked_add_signed(TimeDelta::milliseconds(millis as i64))
        .ok_or_else(|| FormatError::invalid(FORMAT, "time axis", "a time is out of range"))
}

/// How a model time axis is written: the record, and for a non-equidistant axis each step's
/// time in seconds from the start.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeWriting {
    /// The record (its step count is patched by the writer).
    pub record: TimeAxisRecord,
    /// Step times of a non-equidistant axis; `None` for an equidistant one.
    pub step_times: Option<Vec<f64>>,
}

impl TimeWriting {
    /// The time to give [`super::container::DfsWriter::start_step`] for `step`.
    pub fn step_time(&self, step: usize) -> Option<f64> {
        self.step_times.as_ref()?.get(step).copied()
    }
}

/// The DFS time axis for a model axis: calendar axes from their first time (to the second,
/// the fraction in the start offset), relative axes from 0, in seconds. Data without time is
/// one step at [`default_start`].
pub fn time_writing_of(axis: &TimeAxis) -> TimeWriting {
    match axis {
        TimeAxis::None => equidistant_calendar(default_start(), 1.0, 1),
        TimeAxis::Equidistant {
            start,
            step_seconds,
            steps,
        } => equidistant_calendar(*start, *step_seconds, *steps),
        TimeAxis::Calendar(times) => calendar_times(times),
        TimeAxis::Relative(offsets) => relative_times(offsets),
    }
}

/// A calendar start to the second, and the fraction of a second left over.
fn whole_seconds(start: NaiveDateTime) -> (NaiveDateTime, f64) {
    let whole = start.with_nanosecond(0).unwrap_or(start);
    let fraction = (start - whole).num_microseconds().unwrap_or(0) as f64 / 1e6;
    (whole, fraction)
}

fn record(
    kind: TimeAxisKind,
    start: Option<NaiveDateTime>,
    start_offset: f64,
    step_or_span: f64,
    steps: usize,
) -> TimeAxisRecord {
    TimeAxisRecord {
        kind,
        start: start.map(|start| {
            (
                start.format("%Y-%m-%d").to_string(),
                start.format("%H:%M:%S").to_string(),
            )
        }),
        unit: EUM_SECOND,
        start_offset,
        step_or_span,
        steps: i32::try_from(steps).unwrap_or(i32::MAX),
        first_index: 0,
    }
}

fn equidistant_calendar(start: NaiveDateTime, step_seconds: f64, steps: usize) -> TimeWriting {
    let (whole, fraction) = whole_seconds(start);
    TimeWriting {
        record: record(
            TimeAxisKind::CalendarEquidistant,
            Some(whole),
            fraction,
            step_seconds,
            steps,
        ),
        step_times: None,
    }
}

fn calendar_times(times: &[NaiveDateTime]) -> TimeWriting {
    let (whole, fraction) = whole_seconds(times.first().copied().unwrap_or_else(default_start));
    let step_times = times
        .iter()
        .map(|time| (*time - whole).num_microseconds().unwrap_or(0) as f64 / 1e6)
        .collect();
    TimeWriting {
        record: record(
            TimeAxisKind::CalendarNonEquidistant,
            Some(whole),
            fraction,
            0.0,
            times.len(),
        ),
        step_times: Some(step_times),
    }
}

/// Relative offsets: an equidistant axis when they are evenly spaced (to 1e-9 of the step), as
/// is a single step (with a step of 1 s, as MIKE IO writes a single calendar step); else
/// non-equidistant.
fn relative_times(offsets: &[f64]) -> TimeWriting {
    let first = offsets.first().copied().unwrap_or(0.0);
    let step = match offsets {
        [a, b, ..] => b - a,
        _ => 1.0,
    };
    let even = Some(step).filter(|step| {
        *step > 0.0
            && offsets.iter().enumerate().all(|(index, offset)| {
                (offset - (first + step * index as f64)).abs() <= 1e-9 * step.max(1.0)
            })
    });
    match even {
        Some(step) => TimeWriting {
            record: record(
                TimeAxisKind::RelativeEquidistant,
                None,
                first,
                step,
                offsets.len(),
            ),
            step_times: None,
        },
        None => TimeWriting {
            record: record(
                TimeAxisKind::RelativeNonEquidistant,
                None,
                first,
                0.0,
                offsets.len(),
            ),
            step_times: Some(offsets.to_vec()),
        },
    }
}

/// The model's value type of a DFS value type code.
pub fn value_type_of(code: i32) -> ValueType {
    match code {
        1 => ValueType::Accumulated,
        2 => ValueType::StepAccumulated,
        3 => ValueType::MeanStepBackward,
        4 => ValueType::MeanStepForward,
        _ => ValueType::Instantaneous,
    }
}

/// The DFS value type code of a model value type.
pub fn value_type_code(value_type: ValueType) -> i32 {
    match value_type {
        ValueType::Instantaneous => 0,
        ValueType::Accumulated => 1,
        ValueType::StepAccumulated => 2,
        ValueType::MeanStepBackward => 3,
        ValueType::MeanStepForward => 4,
    }
}

/// The model item of a DFS item definition (see the module doc for delete values).
pub fn item_of(info: &ItemInfo, header: &DfsHeader) -> Item {
    let nodata = match info.data_type {
        DataType::F32 | DataType::F64 | DataType::I16 | DataType::U16 => None,
        DataType::U8 => Some(f64::from(header.file.delete_byte)),
        DataType::I32 => Some(f64::from(header.file.delete_int)),
        DataType::U32 => Some(f64::from(header.file.delete_uint)),
    };
    Item {
        name: info.name.clone(),
        quantity: Quantity {
            name: eum::item_name(info.eum_item).unwrap_or_default().to_owned(),
            unit: eum::unit_abbreviation(info.eum_unit)
                .unwrap_or_default()
                .to_owned(),
            eum_item: Some(info.eum_item),
            eum_unit: Some(info.eum_unit),
        },
        data_type: info.data_type,
        value_type: value_type_of(info.value_type),
        nodata,
        location: ItemLocation::Cell,
    }
}

/// The DFS item definition of a model item on `axis`: its EUM codes where the quantity has
/// them, else found from the quantity's name and unit, else undefined.
pub fn info_of(item: &Item, axis: SpatialAxis) -> ItemInfo {
    let eum_item = item
        .quantity
        .eum_item
        .or_else(|| eum::item_code(&item.quantity.name))
        .unwrap_or(EUM_ITEM_UNDEFINED);
    let eum_unit = item
        .quantity
        .eum_unit
        .or_else(|| eum::unit_code(&item.quantity.unit))
        .unwrap_or(EUM_UNIT_UNDEFINED);
    let mut info = ItemInfo::new(item.name.clone(), eum_item, eum_unit, axis);
    info.data_type = item.data_type;
    info.value_type = value_type_code(item.value_type);
    info
}

/// Replaces the file's delete values in float values by NaN, in place (see [`DeleteValues`]).
pub fn delete_values_to_nan(header: &DfsHeader, values: &mut Values) {
    let deletes = DeleteValues::of(&header.file);
    match values {
        Values::F32(values) => {
            for value in values
                .iter_mut()
                .filter(|value| deletes.is_missing_f32(**value))
            {
                *value = f32::NAN;
            }
        }
        Values::F64(values) => {
            for value in values
                .iter_mut()
                .filter(|value| deletes.is_missing_f64(**value))
            {
                *value = f64::NAN;
            }
        }
        _ => {}
    }
}

/// Replaces NaN and the item's own nodata value by the file's delete value, in place, for
/// writing: the float delete value, widened in double items (see the module doc).
pub fn nan_to_delete_values(header: &DfsHeader, item: &Item, values: &mut Values) {
    let nodata = item.nodata.filter(|nodata| !nodata.is_nan());
    match values {
        Values::F32(values) => {
            let delete = header.file.delete_float;
            let nodata = nodata.map(|nodata| nodata as f32);
            for value in values
                .iter_mut()
                .filter(|value| value.is_nan() || Some(**value) == nodata)
            {
                *value = delete;
            }
        }
        Values::F64(values) => {
            let delete = f64::from(header.file.delete_float);
            for value in values
                .iter_mut()
                .filter(|value| value.is_nan() || Some(**value) == nodata)
            {
                *value = delete;
            }
        }
        _ => {}
    }
}

/// Makes the item names of a file unique as MIKE IO does: the second item named `X` becomes
/// `X_2`, the third `X_3` (skipping a name another item already has). Item filters, CSV
/// columns and VTU arrays need unique names, and users see the names MIKE IO shows them.
pub fn make_names_unique(infos: &mut [ItemInfo]) {
    let mut taken: std::collections::HashSet<String> =
        infos.iter().map(|info| info.name.clone()).collect();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for info in infos.iter_mut() {
        let count = seen.entry(info.name.clone()).or_insert(0);
        *count += 1;
        if *count == 1 {
            continue;
        }
        let base = info.name.clone();
        let mut number = *count;
        let mut candidate = format!("{base}_{number}");
        while taken.contains(&candidate) {
            number += 1;
            candidate = format!("{base}_{number}");
        }
        if let Some(count) = seen.get_mut(&base) {
            *count = number;
        }
        taken.insert(candidate.clone());
        info.name = candidate;
    }
}

/// The items a reader keeps: all, or those `AllowedItemNames` names (each name an exact
/// match, else the one item equal ignoring ASCII case; a name matching nothing is an error).
pub fn selected_items(infos: &[ItemInfo], parameters: &Parameters) -> FormatResult<Vec<usize>> {
    let Some(names) = parameters.string_list(ALLOWED_ITEM_NAMES) else {
        return Ok((0..infos.len()).collect());
    };
    let mut keep = vec![false; infos.len()];
    for name in names {
        let exact: Vec<usize> = (0..infos.len())
            .filter(|index| infos.get(*index).is_some_and(|info| info.name == *name))
            .collect();
        let matches = if exact.is_empty() {
            (0..infos.len())
                .filter(|index| {
                    infos
                        .get(*index)
                        .is_some_and(|info| info.name.eq_ignore_ascii_case(name))
                })
                .collect()
        } else {
            exact
        };
        match matches.as_slice() {
            [] => {
                let known: Vec<&str> = infos.iter().map(|info| info.name.as_str()).collect();
                return Err(FormatError::parameter(
                    ALLOWED_ITEM_NAMES,
                    format!("no item named {name:?}; the file has {}", known.join(", ")),
                ));
            }
            [one] => {
                if let Some(slot) = keep.get_mut(*one) {
                    *slot = true;
                }
            }
            several => {
                for index in several {
                    if let Some(slot) = keep.get_mut(*index) {
                        *slot = true;
                    }
                }
            }
        }
    }
    Ok((0..infos.len())
        .filter(|index| keep.get(*index).copied().unwrap_or(false))
        .collect())
}

/// Streams the selected items of every step into `sink` as whole-item frames, skipping what
/// the sink does not want (see [`DatasetSink::wants`]). `adjust` turns one item's values as
/// stored into the model's (flipping rows, expanding compressed cells); it gets the file item
/// index and the values with delete values already NaN.
pub fn stream<R: BufRead + Seek>(
    file: &mut DfsFile<R>,
    items: &[usize],
    sink: &mut dyn DatasetSink,
    progress: &dyn crate::progress::Progress,
    mut adjust: impl FnMut(usize, &mut Values) -> FormatResult<()>,
) -> FormatResult<()> {
    let mut values = Values::with_capacity(DataType::F32, 0);
    let step_bytes = file.step_bytes();
    for step in 0..file.steps() {
        for (output_item, &file_item) in items.iter().enumerate() {
            if !sink.wants(step, output_item) {
                continue;
            }
            file.read_values(step, file_item, &mut values)?;
            delete_values_to_nan(&file.header, &mut values);
            adjust(file_item, &mut values)?;
            sink.frame(Frame {
                step,
                item: output_item,
                offset: 0,
                values: &values,
            })?;
        }
        progress.advance(step_bytes);
    }
    Ok(())
}

/// Writer parameter: the file title.
pub const TITLE: &str = "Title";
/// Writer parameter: the application title recorded in the file.
pub const APPLICATION_TITLE: &str = "ApplicationTitle";
/// Writer parameter: the application version recorded in the file.
pub const APPLICATION_VERSION: &str = "ApplicationVersion";
/// The application title DFS writers record unless told otherwise.
pub const BASIN_APPLICATION: &str = "Basin";

/// The application version DFS writers record unless told otherwise: this crate's version as
/// `major * 10000 + minor * 100 + patch` (MIKE's tools record whole numbers).
pub fn basin_application_version() -> i32 {
    let part = |text: &str| text.parse::<i32>().unwrap_or(0);
    part(env!("CARGO_PKG_VERSION_MAJOR")) * 10_000
        + part(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + part(env!("CARGO_PKG_VERSION_PATCH"))
}

/// The `Title` parameter of a DFS writer; `description` says what is written without it.
pub const fn title_parameter(description: &'static str) -> ParameterSpec {
    ParameterSpec {
        name: TITLE,
        description,
        data_type: ParameterType::String,
        required: false,
        default_value: None,
        allowed_values: &[],
    }
}

/// The `ApplicationTitle` parameter of every DFS writer.
pub const APPLICATION_TITLE_PARAMETER: ParameterSpec = ParameterSpec {
    name: APPLICATION_TITLE,
    description: "Application title recorded in the file",
    data_type: ParameterType::String,
    required: false,
    default_value: Some(BASIN_APPLICATION),
    allowed_values: &[],
};

/// The `ApplicationVersion` parameter of every DFS writer.
pub const APPLICATION_VERSION_PARAMETER: ParameterSpec = ParameterSpec {
    name: APPLICATION_VERSION,
    description: "Application version recorded in the file (a whole number); Basin's version as MAJOR*10000 + MINOR*100 + PATCH when not given",
    data_type: ParameterType::Integer,
    required: false,
    default_value: None,
    allowed_values: &[],
};

/// The titles a DFS writer records, from its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Titles {
    /// File title; `None` for the writer's default.
    pub title: Option<String>,
    /// Application title.
    pub application: String,
    /// Application version.
    pub version: i32,
}

impl Titles {
    /// The titles `parameters` give (validated against the writer's spec).
    pub fn from_parameters(parameters: &Parameters) -> FormatResult<Self> {
        let version = match parameters.integer(APPLICATION_VERSION) {
            Some(version) => i32::try_from(version).map_err(|_| {
                FormatError::parameter(
                    APPLICATION_VERSION,
                    format!("{version} does not fit in a 32-bit integer"),
                )
            })?,
            None => basin_application_version(),
        };
        Ok(Self {
            title: parameters.string(TITLE).map(str::to_owned),
            application: parameters
                .string(APPLICATION_TITLE)
                .unwrap_or(BASIN_APPLICATION)
                .to_owned(),
            version,
        })
    }
}

//! The DFS section of an inspection: the container's header as stored, independent of any
//! reader, so that it shows for every DFS flavour (and for files a reader refuses).

use std::path::Path;

use serde::Serialize;

use crate::dfs::container::{
    CustomBlock, DfsFile, ItemInfo, StaticItem, Timestamp, time_unit_seconds,
};
use crate::dfs::eum;
use crate::dfs::mapping::value_type_of;
use crate::error::FormatResult;
use crate::limits::ReadLimits;

use super::sink::value_type_name;

/// Custom blocks with at most this many values show them; longer ones only their size.
const CUSTOM_VALUES_SHOWN_MAX: usize = 16;

/// The DFS container's header.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsSection {
    /// File title.
    pub title: String,
    /// Application title.
    pub application: String,
    /// Application version.
    pub application_version: i32,
    /// The header's data type number (0/1 for dfs0-3, 2001-2003 for dfsu, set by the
    /// application).
    pub data_type: i32,
    /// True for a compressed file (encoding keys).
    pub compressed: bool,
    /// Statistics type: 1 none, 2 regular, 3 large values.
    pub statistics_type: i32,
    /// Delete values per storage type.
    pub delete_values: DfsDeleteValues,
    /// The projection record, when present.
    pub projection: Option<DfsProjection>,
    /// The time axis record.
    pub time: DfsTimeAxis,
    /// Dynamic items.
    pub items: Vec<DfsItemSummary>,
    /// Custom blocks.
    pub custom_blocks: Vec<DfsCustomBlock>,
    /// Static items.
    pub static_items: Vec<DfsStaticItem>,
    /// Creation time stored in the preamble.
    pub created: String,
    /// Modification time stored in the preamble.
    pub modified: String,
    /// Bytes before the first time step.
    pub header_bytes: u64,
    /// Bytes of one time step.
    pub bytes_per_step: u64,
    /// Time steps in the data.
    pub steps: usize,
}

/// Delete values.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsDeleteValues {
    /// Of float items.
    pub float: f32,
    /// Of double items.
    pub double: f64,
    /// Of byte items.
    pub byte: u8,
    /// Of int items.
    pub int: i32,
    /// Of unsigned int items.
    pub unsigned_int: u32,
}

/// The projection record.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsProjection {
    /// Projection name or WKT.
    pub name: String,
    /// Longitude of the origin (x for NON-UTM).
    pub origin_longitude: f64,
    /// Latitude of the origin (y for NON-UTM).
    pub origin_latitude: f64,
    /// Orientation from true north, degrees.
    pub orientation: f64,
}

/// The time axis record.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsTimeAxis {
    /// `TimeEquidistant`, `TimeNonEquidistant`, `CalendarEquidistant` or
    /// `CalendarNonEquidistant`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// EUM time unit code (1400 second ... 1403 day).
    pub unit: i32,
    /// Seconds per unit, for the units files use.
    pub unit_seconds: Option<f64>,
    /// Start date and time of a calendar axis, as stored.
    pub start: Option<String>,
    /// Offset of the first step from the start, in units.
    pub start_offset: f64,
    /// Step (equidistant) or span from first to last step (non-equidistant), in units.
    pub step_or_span: f64,
    /// Steps the header announces.
    pub steps: i32,
    /// Index of the first step.
    pub first_index: i32,
}

/// A dynamic item's definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsItemSummary {
    /// Name.
    pub name: String,
    /// EUM item type code.
    pub eum_item: i32,
    /// Its name, when known.
    pub eum_item_name: Option<&'static str>,
    /// EUM unit code.
    pub eum_unit: i32,
    /// Its abbreviation, when known.
    pub eum_unit_name: Option<&'static str>,
    /// Storage type (`Float32`, ...).
    pub data_type: &'static str,
    /// Value type (`Instantaneous`, ...).
    pub value_type: &'static str,
    /// The spatial axis.
    pub axis: DfsAxisSummary,
    /// Values per step as stored (fewer than the axis spans in a compressed file).
    pub values_per_step: Option<usize>,
    /// Maximum, minimum and number of deleted values as the header stores them.
    pub stored_range: [f64; 3],
}

/// A spatial axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsAxisSummary {
    /// `EqD0`, `EqD1`, `EqD2`, `EqD3`, `NeqD1`, `NeqD2` or `CurveLinearD2`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// EUM unit of the axis.
    pub unit: i32,
    /// Counts per dimension, x first.
    pub counts: Vec<i32>,
    /// Origins per dimension of an equidistant axis.
    pub origins: Vec<f64>,
    /// Spacings per dimension of an equidistant axis.
    pub spacings: Vec<f64>,
}

/// A custom block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsCustomBlock {
    /// Name, e.g. `MIKE_FM`.
    pub name: String,
    /// Storage type of its record.
    pub data_type: &'static str,
    /// Number of values.
    pub count: usize,
    /// The values, when there are at most 16.
    pub values: Option<Vec<f64>>,
}

/// A static item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DfsStaticItem {
    /// Name.
    pub name: String,
    /// EUM item type code.
    pub eum_item: i32,
    /// EUM unit code.
    pub eum_unit: i32,
    /// Storage type.
    pub data_type: &'static str,
    /// Number of values.
    pub count: usize,
}

/// Opens `path` with the container and describes its header.
pub(super) fn section(path: &Path, limits: &ReadLimits) -> FormatResult<DfsSection> {
    let file = DfsFile::open(path, limits)?;
    let header = &file.header;
    let time = &header.file.time;
    Ok(DfsSection {
        title: header.file.title.clone(),
        application: header.file.application.clone(),
        application_version: header.file.application_version,
        data_type: header.file.data_type,
        compressed: header.file.compressed != 0,
        statistics_type: header.file.statistics_type,
        delete_values: DfsDeleteValues {
            float: header.file.delete_float,
            double: header.file.delete_double,
            byte: header.file.delete_byte,
            int: header.file.delete_int,
            unsigned_int: header.file.delete_uint,
        },
        projection: header
            .file
            .projection
            .as_ref()
            .map(|projection| DfsProjection {
                name: projection.name.clone(),
                origin_longitude: projection.origin_longitude,
                origin_latitude: projection.origin_latitude,
                orientation: projection.orientation,
            }),
        time: DfsTimeAxis {
            kind: time.kind.name(),
            unit: time.unit,
            unit_seconds: time_unit_seconds(time.unit),
            start: time
                .start
                .as_ref()
                .map(|(date, clock)| format!("{date} {clock}")),
            start_offset: time.start_offset,
            step_or_span: time.step_or_span,
            steps: time.steps,
            first_index: time.first_index,
        },
        items: header
            .items
            .iter()
            .enumerate()
            .map(|(index, info)| item_summary(info, file.item_len(index)))
            .collect(),
        custom_blocks: header.custom_blocks.iter().map(custom_block).collect(),
        static_items: header.statics.iter().map(static_item).collect(),
        created: timestamp(header.created),
        modified: timestamp(header.modified),
        header_bytes: file.data_start(),
        bytes_per_step: file.step_bytes(),
        steps: file.steps(),
    })
}

fn item_summary(info: &ItemInfo, values_per_step: Option<usize>) -> DfsItemSummary {
    let equidistant = info.axis.equidistant().unwrap_or_default();
    DfsItemSummary {
        name: info.name.clone(),
        eum_item: info.eum_item,
        eum_item_name: eum::item_name(info.eum_item),
        eum_unit: info.eum_unit,
        eum_unit_name: eum::unit_abbreviation(info.eum_unit),
        data_type: info.data_type.gdal_name(),
        value_type: value_type_name(value_type_of(info.value_type)),
        axis: DfsAxisSummary {
            kind: info.axis.name(),
            unit: info.axis.unit,
            counts: info.axis.counts.clone(),
            origins: equidistant.iter().map(|(origin, _)| *origin).collect(),
            spacings: equidistant.iter().map(|(_, spacing)| *spacing).collect(),
        },
        values_per_step,
        stored_range: info.range,
    }
}

fn custom_block(block: &CustomBlock) -> DfsCustomBlock {
    let count = block.values.len();
    DfsCustomBlock {
        name: block.name.clone(),
        data_type: block.values.data_type().gdal_name(),
        count,
        values: (count <= CUSTOM_VALUES_SHOWN_MAX).then(|| block.values.to_f64()),
    }
}

fn static_item(item: &StaticItem) -> DfsStaticItem {
    DfsStaticItem {
        name: item.info.name.clone(),
        eum_item: item.info.eum_item,
        eum_unit: item.info.eum_unit,
        data_type: item.values.data_type().gdal_name(),
        count: item.values.len(),
    }
}

/// `YYYY-MM-DD HH:MM:SS` of a preamble timestamp, as stored (not checked as a date).
fn timestamp(stamp: Timestamp) -> String {
    let [year, month, day, hour, minute, second] = stamp;
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}")
}

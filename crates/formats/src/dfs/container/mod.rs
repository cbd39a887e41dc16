//! The DFS container shared by DFS0, DFS1, DFS2, DFS3 and DFSU: a fixed preamble, then a
//! stream of tagged blocks and typed records (header, time axis, item definitions, custom
//! blocks, static items), then the dynamic data, one record per item and time step.
//!
//! The layout is described in docs/formats.md#the-container; this module knows the
//! grammar and nothing about grids or meshes. [`DfsFile::open`] reads everything up to the
//! data and works out where each step and item lies (the data section has no index, but every
//! step has the same size, so random access is arithmetic); [`DfsFile::read_values`] then reads
//! one item of one step. [`DfsWriter`] writes the same structure in the same order as the
//! reference library, and patches the statistics and step count on close, so that its output
//! is byte-identical to the reference library's for the same content, timestamps aside.

mod read;
mod stats;
pub(crate) mod tokens;
mod write;

pub use read::{DfsFile, ValueLayout};
pub use stats::ItemStatistics;
pub use tokens::{data_type_of, type_code};
pub use write::{DfsWriter, now_timestamp};

use crate::model::{DataType, Values};

pub(crate) const FORMAT: &str = "DFS";

/// The first 64 bytes of every DFS file.
pub const MAGIC: &[u8; 64] = b"DHI_DFS_ MIKE Zero - this file contains binary data, do not edit";
/// The 17 bytes after the magic in every file seen.
pub const CREATOR: &[u8; 17] = b"  FOpenFileCreate";
/// Bytes before the first block.
pub const PREAMBLE_BYTES: u64 = 130;

/// Block tags.
pub mod tag {
    /// Header start.
    pub const HEADER: u16 = 10000;
    /// File title.
    pub const TITLE: u16 = 10001;
    /// Application title.
    pub const APPLICATION: u16 = 10002;
    /// Application version.
    pub const APPLICATION_VERSION: u16 = 10003;
    /// Storage type (1 equidistant, 4 non-equidistant time).
    pub const STORAGE_TYPE: u16 = 10004;
    /// Statistics type.
    pub const STATISTICS_TYPE: u16 = 10005;
    /// Float delete value.
    pub const DELETE_FLOAT: u16 = 10006;
    /// Double delete value.
    pub const DELETE_DOUBLE: u16 = 10007;
    /// Byte delete value.
    pub const DELETE_BYTE: u16 = 10008;
    /// Int delete value.
    pub const DELETE_INT: u16 = 10009;
    /// Unsigned int delete value.
    pub const DELETE_UINT: u16 = 10010;
    /// Projection string and origin.
    pub const PROJECTION: u16 = 10011;
    /// Data type (free-form number set by the application).
    pub const DATA_TYPE: u16 = 10012;
    /// Compressed (encoding keys) flag.
    pub const COMPRESSED: u16 = 10013;
    /// Time section start.
    pub const TIME: u16 = 20000;
    /// Time axis: this plus the axis type (1..=4).
    pub const TIME_AXIS_BASE: u16 = 20050;
    /// Item section start.
    pub const ITEMS: u16 = 30000;
    /// Number of dynamic items.
    pub const ITEM_COUNT: u16 = 30001;
    /// Statistics of a dynamic item.
    pub const ITEM_STATISTICS: u16 = 30003;
    /// Item definition.
    pub const ITEM: u16 = 30005;
    /// Item value type.
    pub const VALUE_TYPE: u16 = 30006;
    /// Static section start.
    pub const STATIC: u16 = 40000;
    /// Data of a static item.
    pub const STATIC_DATA: u16 = 40001;
    /// Dynamic data start.
    pub const DYNAMIC: u16 = 50000;
    /// A time step.
    pub const STEP: u16 = 50001;
    /// A custom block.
    pub const CUSTOM: u16 = 60000;
}

/// A creation or modification time as the preamble stores it: year, month, day, hour,
/// minute, second.
pub type Timestamp = [i16; 6];

/// The file-level header fields.
#[derive(Debug, Clone, PartialEq)]
pub struct FileHeader {
    /// File title.
    pub title: String,
    /// Application title.
    pub application: String,
    /// Application version.
    pub application_version: i32,
    /// Data type: 0/1 typical for dfs0/1/2/3, 2001-2003 for dfsu.
    pub data_type: i32,
    /// 1 when the file uses encoding keys (sparse dfs3).
    pub compressed: i32,
    /// 1 no statistics, 2 regular, 3 large-value statistics.
    pub statistics_type: i32,
    /// Delete value of float items.
    pub delete_float: f32,
    /// Delete value of double items.
    pub delete_double: f64,
    /// Delete value of byte items.
    pub delete_byte: u8,
    /// Delete value of int items.
    pub delete_int: i32,
    /// Delete value of unsigned int items.
    pub delete_uint: u32,
    /// Projection, absent in most dfs0 files.
    pub projection: Option<ProjectionRecord>,
    /// Time axis.
    pub time: TimeAxisRecord,
}

impl Default for FileHeader {
    fn default() -> Self {
        Self {
            title: String::new(),
            application: String::new(),
            application_version: 0,
            data_type: 0,
            compressed: 0,
            statistics_type: 1,
            delete_float: -1e-35,
            delete_double: -1e-255,
            delete_byte: 0,
            delete_int: 2_147_483_647,
            delete_uint: 2_147_483_647,
            projection: None,
            time: TimeAxisRecord::default(),
        }
    }
}

/// The projection record: a short MIKE name (`UTM-32`, `LONG/LAT`, `NON-UTM`) or a WKT, the
/// geographic origin of a grid and its orientation from true north in degrees.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectionRecord {
    /// Projection name or WKT.
    pub name: String,
    /// Longitude of the origin (or x for NON-UTM).
    pub origin_longitude: f64,
    /// Latitude of the origin (or y for NON-UTM).
    pub origin_latitude: f64,
    /// Orientation in degrees.
    pub orientation: f64,
}

/// The four time axis types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeAxisKind {
    /// Relative, equidistant.
    RelativeEquidistant,
    /// Relative, non-equidistant.
    RelativeNonEquidistant,
    /// Calendar, equidistant.
    #[default]
    CalendarEquidistant,
    /// Calendar, non-equidistant.
    CalendarNonEquidistant,
}

impl TimeAxisKind {
    /// The type code (1..=4), added to 20050 for the block tag.
    pub fn code(self) -> u16 {
        match self {
            Self::RelativeEquidistant => 1,
            Self::RelativeNonEquidistant => 2,
            Self::CalendarEquidistant => 3,
            Self::CalendarNonEquidistant => 4,
        }
    }

    /// The kind of a type code.
    pub fn from_code(code: u16) -> Option<Self> {
        Some(match code {
            1 => Self::RelativeEquidistant,
            2 => Self::RelativeNonEquidistant,
            3 => Self::CalendarEquidistant,
            4 => Self::CalendarNonEquidistant,
            _ => return None,
        })
    }

    /// True for the equidistant kinds.
    pub fn is_equidistant(self) -> bool {
        matches!(self, Self::RelativeEquidistant | Self::CalendarEquidistant)
    }

    /// True for the calendar kinds.
    pub fn is_calendar(self) -> bool {
        matches!(
            self,
            Self::CalendarEquidistant | Self::CalendarNonEquidistant
        )
    }

    /// The name the reference library uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::RelativeEquidistant => "TimeEquidistant",
            Self::RelativeNonEquidistant => "TimeNonEquidistant",
            Self::CalendarEquidistant => "CalendarEquidistant",
            Self::CalendarNonEquidistant => "CalendarNonEquidistant",
        }
    }
}

/// The time axis record.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeAxisRecord {
    /// Axis type.
    pub kind: TimeAxisKind,
    /// Start date `YYYY-MM-DD` and time `HH:MM:SS` of a calendar axis.
    pub start: Option<(String, String)>,
    /// EUM time unit: 1400 s, 1401 min, 1402 h, 1403 day.
    pub unit: i32,
    /// Offset of the first step from the start, in units.
    pub start_offset: f64,
    /// Step length (equidistant) or span from first to last step (non-equidistant), in units.
    pub step_or_span: f64,
    /// Number of steps.
    pub steps: i32,
    /// Index of the first step (0 in every file seen).
    pub first_index: i32,
}

impl Default for TimeAxisRecord {
    fn default() -> Self {
        Self {
            kind: TimeAxisKind::CalendarEquidistant,
            start: Some(("2000-01-01".to_owned(), "00:00:00".to_owned())),
            unit: 1400,
            start_offset: 0.0,
            step_or_span: 1.0,
            steps: 0,
            first_index: 0,
        }
    }
}

impl TimeAxisRecord {
    /// Seconds per axis unit, for the four units files use.
    pub fn unit_seconds(&self) -> Option<f64> {
        time_unit_seconds(self.unit)
    }
}

/// Seconds per EUM time unit (1400 s, 1401 min, 1402 h, 1403 day).
pub fn time_unit_seconds(unit: i32) -> Option<f64> {
    match unit {
        1400 => Some(1.0),
        1401 => Some(60.0),
        1402 => Some(3600.0),
        1403 => Some(86_400.0),
        _ => None,
    }
}

/// A spatial axis: the block tag names its type (31051 EqD0, 31052 EqD1, 31055 EqD2, 31058
/// EqD3, 31053 NeqD1, 31056 NeqD2, 31061 CurveLinearD2).
#[derive(Debug, Clone, PartialEq)]
pub struct SpatialAxis {
    /// Block tag.
    pub tag: u16,
    /// EUM unit of the axis.
    pub unit: i32,
    /// Counts per dimension (x first).
    pub counts: Vec<i32>,
    /// The coordinate records as stored (EqD: one f32 record of origins then spacings).
    pub coordinates: Vec<Values>,
}

/// Spatial axis tags.
pub mod axis {
    /// No spatial extent (one value).
    pub const EQ_D0: u16 = 31051;
    /// Equidistant 1D.
    pub const EQ_D1: u16 = 31052;
    /// Non-equidistant 1D (xyz triples).
    pub const NEQ_D1: u16 = 31053;
    /// Equidistant 2D.
    pub const EQ_D2: u16 = 31055;
    /// Non-equidistant 2D.
    pub const NEQ_D2: u16 = 31056;
    /// Equidistant 3D.
    pub const EQ_D3: u16 = 31058;
    /// Curvilinear 2D.
    pub const CURVILINEAR_D2: u16 = 31061;
}

impl SpatialAxis {
    /// An EqD0 axis (one value), unit metre.
    pub fn eq_d0() -> Self {
        Self {
            tag: axis::EQ_D0,
            unit: 1000,
            counts: Vec::new(),
            coordinates: Vec::new(),
        }
    }

    /// An EqD1 axis of `count` values.
    pub fn eq_d1(unit: i32, count: i32, x0: f32, dx: f32) -> Self {
        Self {
            tag: axis::EQ_D1,
            unit,
            counts: vec![count],
            coordinates: vec![Values::F32(vec![x0, dx])],
        }
    }

    /// An EqD2 axis.
    pub fn eq_d2(unit: i32, nx: i32, ny: i32, origin: [f32; 2], spacing: [f32; 2]) -> Self {
        Self {
            tag: axis::EQ_D2,
            unit,
            counts: vec![nx, ny],
            coordinates: vec![Values::F32(vec![
                origin[0], origin[1], spacing[0], spacing[1],
            ])],
        }
    }

    /// An EqD3 axis.
    pub fn eq_d3(unit: i32, counts: [i32; 3], origin: [f32; 3], spacing: [f32; 3]) -> Self {
        Self {
            tag: axis::EQ_D3,
            unit,
            counts: counts.to_vec(),
            coordinates: vec![Values::F32(vec![
                origin[0], origin[1], origin[2], spacing[0], spacing[1], spacing[2],
            ])],
        }
    }

    /// The name of the axis type.
    pub fn name(&self) -> &'static str {
        match self.tag {
            axis::EQ_D0 => "EqD0",
            axis::EQ_D1 => "EqD1",
            axis::NEQ_D1 => "NeqD1",
            axis::EQ_D2 => "EqD2",
            axis::NEQ_D2 => "NeqD2",
            axis::EQ_D3 => "EqD3",
            axis::CURVILINEAR_D2 => "CurveLinearD2",
            _ => "unknown",
        }
    }

    /// Number of values the axis spans (product of the counts; 1 for EqD0), or `None` on
    /// overflow or a negative count.
    pub fn size(&self) -> Option<usize> {
        self.counts.iter().try_fold(1_usize, |size, count| {
            size.checked_mul(usize::try_from(*count).ok()?)
        })
    }

    /// Origins and spacings of an equidistant axis: `(origin, spacing)` per dimension.
    pub fn equidistant(&self) -> Option<Vec<(f64, f64)>> {
        let dimensions = match self.tag {
            axis::EQ_D0 => return Some(Vec::new()),
            axis::EQ_D1 => 1,
            axis::EQ_D2 => 2,
            axis::EQ_D3 => 3,
            _ => return None,
        };
        let floats = self.coordinates.first()?.to_f64();
        if floats.len() != 2 * dimensions {
            return None;
        }
        let (origins, spacings) = floats.split_at(dimensions);
        Some(
            origins
                .iter()
                .copied()
                .zip(spacings.iter().copied())
                .collect(),
        )
    }
}

/// A dynamic item's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemInfo {
    /// EUM item type.
    pub eum_item: i32,
    /// Name.
    pub name: String,
    /// EUM unit.
    pub eum_unit: i32,
    /// Storage type of the values.
    pub data_type: DataType,
    /// Value type: 0 instantaneous, 1 accumulated, 2 step accumulated, 3 mean step backward,
    /// 4 mean step forward.
    pub value_type: i32,
    /// Reference coordinates (x, y, z); -1e-35 when unset.
    pub reference: [f32; 3],
    /// Orientation (alpha, phi, theta); -1e-35 when unset.
    pub orientation: [f32; 3],
    /// Spatial axis.
    pub axis: SpatialAxis,
    /// Max, min and number of deleted values as stored (the writer computes them).
    pub range: [f64; 3],
    /// The statistics block as stored, when the file has statistics: per element, max, min,
    /// sum, sum of squares, sum of products of consecutive valid values in time, last valid
    /// value, number valid, number of consecutive valid pairs, number deleted.
    pub statistics: Option<Vec<f64>>,
}

impl ItemInfo {
    /// An item with default reference coordinates and orientation.
    pub fn new(name: impl Into<String>, eum_item: i32, eum_unit: i32, axis: SpatialAxis) -> Self {
        Self {
            eum_item,
            name: name.into(),
            eum_unit,
            data_type: DataType::F32,
            value_type: 0,
            reference: [-1e-35; 3],
            orientation: [-1e-35; 3],
            axis,
            range: [-1e-255, -1e-255, 0.0],
            statistics: None,
        }
    }
}

/// A static item: a definition and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticItem {
    /// The definition (its range and statistics are not used).
    pub info: ItemInfo,
    /// The values.
    pub values: Values,
}

/// A custom block: a name and one record (e.g. `MIKE_FM` with the mesh sizes).
#[derive(Debug, Clone, PartialEq)]
pub struct CustomBlock {
    /// Name.
    pub name: String,
    /// The record.
    pub values: Values,
}

/// Everything before the dynamic data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DfsHeader {
    /// Creation time.
    pub created: Timestamp,
    /// Modification time.
    pub modified: Timestamp,
    /// File-level fields and time axis.
    pub file: FileHeader,
    /// Dynamic items.
    pub items: Vec<ItemInfo>,
    /// Custom blocks.
    pub custom_blocks: Vec<CustomBlock>,
    /// Static items.
    pub statics: Vec<StaticItem>,
}

impl DfsHeader {
    /// The custom block named `name`.
    pub fn custom_block(&self, name: &str) -> Option<&CustomBlock> {
        self.custom_blocks.iter().find(|block| block.name == name)
    }

    /// True when `value` is the file's delete value for its type (compared bit for bit in the
    /// item's own type: a float item against the float delete value).
    pub fn is_delete_value(&self, data_type: DataType, value: f64) -> bool {
        match data_type {
            DataType::F32 => (value as f32).to_bits() == self.file.delete_float.to_bits(),
            DataType::F64 => value.to_bits() == self.file.delete_double.to_bits(),
            DataType::U8 => value == f64::from(self.file.delete_byte),
            DataType::I32 => value == f64::from(self.file.delete_int),
            DataType::U32 => value == f64::from(self.file.delete_uint),
            DataType::I16 | DataType::U16 => false,
        }
    }
}

/// Which stored float and double values are missing as the readers read them: a float value
/// whose bits are the float delete value's, a double value whose bits are the double delete
/// value's or the float delete value's widened to double (MIKE IO marks missing doubles so;
/// see [`crate::dfs::mapping`]). Integer values are never replaced: their items announce the
/// delete value as nodata instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeleteValues {
    float: u32,
    double: u64,
    widened: u64,
}

impl DeleteValues {
    /// The delete values of a file.
    pub fn of(file: &FileHeader) -> Self {
        Self {
            float: file.delete_float.to_bits(),
            double: file.delete_double.to_bits(),
            widened: f64::from(file.delete_float).to_bits(),
        }
    }

    /// Whether a stored float value is missing.
    pub fn is_missing_f32(self, value: f32) -> bool {
        value.to_bits() == self.float
    }

    /// Whether a stored double value is missing.
    pub fn is_missing_f64(self, value: f64) -> bool {
        let bits = value.to_bits();
        bits == self.double || bits == self.widened
    }
}

/// Decodes a cp1252 string record (bytes with a terminating NUL).
pub(crate) fn string_of(values: &Values) -> Option<String> {
    let Values::U8(bytes) = values else {
        return None;
    };
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let (text, _, _) = encoding_rs::WINDOWS_1252.decode(bytes.get(..end)?);
    Some(text.into_owned())
}

/// Encodes a string as a cp1252 record with its NUL; characters cp1252 lacks become `?`.
pub(crate) fn string_record(text: &str) -> Values {
    let mut bytes: Vec<u8> = text
        .chars()
        .map(|c| {
            let mut buffer = [0_u8; 4];
            let encoded = c.encode_utf8(&mut buffer);
            let (bytes, _, unmappable) = encoding_rs::WINDOWS_1252.encode(encoded);
            match bytes.first() {
                Some(byte) if !unmappable && bytes.len() == 1 && *byte != 0 => *byte,
                _ => b'?',
            }
        })
        .collect();
    bytes.push(0);
    Values::U8(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_windows_1252_with_a_terminating_nul() {
        let record = string_record("Hornbæk");
        assert_eq!(record, Values::U8(b"Hornb\xe6k\0".to_vec()));
        assert_eq!(string_of(&record).as_deref(), Some("Hornbæk"));
        assert_eq!(string_record(""), Values::U8(vec![0]));
    }

    #[test]
    fn characters_windows_1252_lacks_and_nul_become_question_marks() {
        // A NUL inside a name would end it early in every reader of the format.
        assert_eq!(string_record("a\0b"), Values::U8(b"a?b\0".to_vec()));
        assert_eq!(string_record("水位 🌊"), Values::U8(b"?? ?\0".to_vec()));
        assert_eq!(string_record("€ 5"), Values::U8(b"\x80 5\0".to_vec()));
    }

    #[test]
    fn a_string_is_read_up_to_its_first_nul() {
        assert_eq!(
            string_of(&Values::U8(b"level\0junk".to_vec())).as_deref(),
            Some("level")
        );
        assert_eq!(
            string_of(&Values::U8(b"no nul".to_vec())).as_deref(),
            Some("no nul")
        );
        assert_eq!(string_of(&Values::I32(vec![1])), None);
    }

    #[test]
    fn axis_sizes_refuse_negative_counts_and_overflow() {
        let mut axis = SpatialAxis::eq_d2(1000, 3, 4, [0.0, 0.0], [1.0, 1.0]);
        assert_eq!(axis.size(), Some(12));
        axis.counts = vec![-1, 4];
        assert_eq!(axis.size(), None);
        axis.counts = vec![i32::MAX, i32::MAX, i32::MAX];
        assert_eq!(axis.size(), None);
        assert_eq!(SpatialAxis::eq_d0().size(), Some(1));
    }

    #[test]
    fn delete_values_compare_bit_for_bit_in_the_items_type() {
        let header = DfsHeader::default();
        assert!(header.is_delete_value(DataType::F32, f64::from(-1e-35_f32)));
        assert!(!header.is_delete_value(DataType::F64, f64::from(-1e-35_f32)));
        assert!(header.is_delete_value(DataType::F64, -1e-255));
        assert!(header.is_delete_value(DataType::I32, 2_147_483_647.0));
        assert!(!header.is_delete_value(DataType::I16, 0.0));
    }
}

//! XYZ point files: no header; comma, tab or space separated.
//!
//! Survey data and model bathymetry arrive as XYZ files of many millions of lines, so the
//! reader streams: it parses line by line and hands the points on in chunks of
//! [`CHUNK_POINTS`], never holding the file. The separator is detected on the first data line
//! (a comma anywhere means comma-separated; otherwise runs of tabs and spaces separate) and
//! every later line must have the same number of columns. Columns other than x, y and z
//! become extra items named `column<index>` (zero-based), so no value is dropped.
//!
//! x, y and z must be finite: Rust's number parsing accepts `NaN`, `inf` and overflowing
//! exponents (`1e999`), and a point at NaN or infinity would otherwise travel on into a mesh or
//! a tile pyramid where nothing can place it. The extra columns are values, not coordinates,
//! so NaN there is kept (it is how many tools write "no value").

use std::path::Path;

use crate::catalogue::{ReadContext, Reader, ReaderSpec};
use crate::crs::Crs;
use crate::error::{FormatError, FormatResult};
use crate::model::{DataKind, DataType, DatasetSink, Header, Item, PointChunk, PointHeader};
use crate::parameters::{ParameterSpec, ParameterType, Parameters, SRID, SRID_PARAMETER};
use crate::text::{Lines, shorten};

const FORMAT: &str = "XYZ";

/// The published description of [`XyzReader`].
pub const READER: ReaderSpec = ReaderSpec {
    name: "XyzReader",
    description: "Reads scattered points from an XYZ text file",
    dataset_format: ".xyz",
    extensions: &[".xyz"],
    produces: &[DataKind::Points],
    parameters: &[
        ParameterSpec {
            name: "ZColumnIndex",
            description: "Zero-based index of the column holding z (at least 2)",
            data_type: ParameterType::Integer,
            required: false,
            default_value: Some("2"),
            allowed_values: &[],
        },
        SRID_PARAMETER,
    ],
};

/// Reads scattered points from an XYZ text file.
#[derive(Debug, Clone, Copy, Default)]
pub struct XyzReader;

/// Points handed to the sink at once: bounds the reader's memory (about 2 MB of x, y, z).
pub const CHUNK_POINTS: usize = 65_536;

/// Most columns of one line; a line with more is surely not XYZ.
const COLUMNS_MAX: usize = 1_000;

impl Reader for XyzReader {
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
        let z_column = z_column_index(parameters)?;
        let crs = parameters.srid(SRID)?.map(Crs::Epsg);
        let mut lines = Lines::open(input, FORMAT, context)?;
        let Some(first) = lines.next_non_blank()? else {
            return Err(FormatError::invalid(
                FORMAT,
                "line 1",
                "the file has no points",
            ));
        };
        let layout = Layout::detect(&first, z_column, &lines.location())?;
        sink.begin(&Header::Points(PointHeader {
            crs,
            z_item: Item::new("z", DataType::F64),
            items: layout
                .extra_columns()
                .map(|column| Item::new(format!("column{column}"), DataType::F64))
                .collect(),
            count: None,
        }))?;
        let mut chunk = layout.empty_chunk();
        let mut row = Vec::with_capacity(layout.columns);
        let mut line = Some(first);
        while let Some(text) = line {
            layout.parse_row(&text, &lines.location(), &mut row)?;
            layout.push(&row, &mut chunk);
            if chunk.len() >= CHUNK_POINTS {
                sink.points(&chunk)?;
                chunk = layout.empty_chunk();
            }
            line = lines.next_non_blank()?;
        }
        if !chunk.is_empty() {
            sink.points(&chunk)?;
        }
        sink.end()
    }
}

/// The zero-based z column from the parameters; x and y are columns 0 and 1.
fn z_column_index(parameters: &Parameters) -> FormatResult<usize> {
    let index = parameters.integer("ZColumnIndex").unwrap_or(2);
    usize::try_from(index)
        .ok()
        .filter(|index| *index >= 2)
        .ok_or_else(|| {
            FormatError::parameter(
                "ZColumnIndex",
                format!("{index} is not a z column: columns 0 and 1 are x and y, so it must be at least 2"),
            )
        })
}

/// How the lines of one file are laid out.
struct Layout {
    comma: bool,
    columns: usize,
    z_column: usize,
}

impl Layout {
    fn detect(first: &str, z_column: usize, location: &str) -> FormatResult<Self> {
        let comma = first.contains(',');
        let columns = if comma {
            first.split(',').count()
        } else {
            first.split_whitespace().count()
        };
        if columns > COLUMNS_MAX {
            return Err(FormatError::invalid(
                FORMAT,
                location,
                format!("{columns} columns; at most {COLUMNS_MAX} are supported"),
            ));
        }
        if columns <= z_column {
            return Err(FormatError::invalid(
                FORMAT,
                location,
                format!(
                    "{columns} columns, but z is column {z_column} (zero-based; set ZColumnIndex)"
                ),
            ));
        }
        Ok(Self {
            comma,
            columns,
            z_column,
        })
    }

    fn extra_columns(&self) -> impl Iterator<Item = usize> + '_ {
        (2..self.columns).filter(|column| *column != self.z_column)
    }

    fn empty_chunk(&self) -> PointChunk {
        PointChunk {
            items: vec![Vec::new(); self.columns.saturating_sub(3)],
            ..PointChunk::default()
        }
    }

    fn parse_row(&self, text: &str, location: &str, row: &mut Vec<f64>) -> FormatResult<()> {
        row.clear();
        let mut count = 0;
        let tokens: Box<dyn Iterator<Item = &str>> = if self.comma {
            Box::new(text.split(',').map(str::trim))
        } else {
            Box::new(text.split_whitespace())
        };
        for token in tokens {
            count += 1;
            if count > self.columns {
                continue;
            }
            let value = token.parse::<f64>().map_err(|_| {
                let hint = if location == "line 1" {
                    " (XYZ files have no header line)"
                } else {
                    ""
                };
                FormatError::invalid(
                    FORMAT,
                    location,
                    format!(
                        "column {} {:?} is not a number{hint}",
                        count - 1,
                        shorten(token)
                    ),
                )
            })?;
            if !value.is_finite() && self.is_coordinate(count - 1) {
                return Err(FormatError::invalid(
                    FORMAT,
                    location,
                    format!(
                        "column {} ({}) {:?} is not a finite number; x, y and z must be finite",
                        count - 1,
                        self.coordinate_name(count - 1),
                        shorten(token)
                    ),
                ));
            }
            row.push(value);
        }
        if count != self.columns {
            return Err(FormatError::invalid(
                FORMAT,
                location,
                format!("{count} columns where the first line has {}", self.columns),
            ));
        }
        Ok(())
    }

    /// Whether `column` holds x, y or z.
    fn is_coordinate(&self, column: usize) -> bool {
        column < 2 || column == self.z_column
    }

    fn coordinate_name(&self, column: usize) -> &'static str {
        match column {
            0 => "x",
            1 => "y",
            _ => "z",
        }
    }

    fn push(&self, row: &[f64], chunk: &mut PointChunk) {
        let value = |column: usize| row.get(column).copied().unwrap_or(f64::NAN);
        chunk.x.push(value(0));
        chunk.y.push(value(1));
        chunk.z.push(value(self.z_column));
        for (values, column) in chunk.items.iter_mut().zip(self.extra_columns()) {
            values.push(value(column));
        }
    }
}

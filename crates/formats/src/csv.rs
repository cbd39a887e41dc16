//! CSV for time series: one header row `time,<item names>`, then one row per time step.
//!
//! CSV is where a time series goes to be opened in a spreadsheet or read by pandas, so the
//! writer keeps to what those read without options: RFC 4180 quoting (a name holding the
//! separator, a quote or a line break is quoted, its quotes doubled), `\n` line ends, a dot
//! as the decimal mark whatever the separator. Numbers are printed in the shortest form that
//! reads back to the same value of the item's own type (ryu), so that nothing is lost on the
//! way; missing values (NaN, or an item's nodata value) are empty cells. Calendar times are
//! ISO 8601 without a zone (`2024-01-15T06:30:00`, with a fraction only when there is one), as
//! the model keeps them; relative times are seconds from the axis' origin.
//!
//! The writer streams: it holds one row.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::catalogue::{Writer, WriterSink, WriterSpec, Written};
use crate::error::{FormatError, FormatResult};
use crate::model::{DataKind, DatasetSink, Frame, Header, Item, TimeAxis, Values};
use crate::parameters::{ParameterSpec, ParameterType, Parameters};
use crate::series::SeriesCursor;

const FORMAT: &str = "CSV";

/// Name of the separator parameter.
pub const SEPARATOR: &str = "Separator";

/// The published description of [`CsvWriter`].
pub const WRITER: WriterSpec = WriterSpec {
    name: "CsvWriter",
    description: "Writes a time series as CSV: a time column, then one column per item",
    dataset_format: ".csv",
    extensions: &[".csv"],
    accepts: &[DataKind::TimeSeries],
    parameters: &[ParameterSpec {
        name: SEPARATOR,
        description: "Column separator: comma, semicolon or tab (the decimal mark is always a dot)",
        data_type: ParameterType::String,
        required: false,
        default_value: Some("comma"),
        allowed_values: &["comma", "semicolon", "tab"],
    }],
};

/// Writes a time series as CSV.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvWriter;

impl Writer for CsvWriter {
    fn spec(&self) -> &'static WriterSpec {
        &WRITER
    }

    fn create(&self, output: &Path, parameters: &Parameters) -> FormatResult<Box<dyn WriterSink>> {
        let separator = match parameters.string(SEPARATOR) {
            Some("semicolon") => b';',
            Some("tab") => b'\t',
            _ => b',',
        };
        Ok(Box::new(CsvSink {
            output: output.to_owned(),
            separator,
            out: None,
            cursor: None,
            time: TimeAxis::None,
            row: Vec::new(),
            step: 0,
            written: false,
        }))
    }
}

/// Receives a time series and writes CSV rows as steps complete.
struct CsvSink {
    output: PathBuf,
    separator: u8,
    out: Option<BufWriter<File>>,
    /// Which frame is due; set by `begin`.
    cursor: Option<SeriesCursor>,
    time: TimeAxis,
    /// The cells of the current row after the time, separators included.
    row: Vec<u8>,
    /// The step of the row being built.
    step: usize,
    written: bool,
}

impl CsvSink {
    fn write(&mut self, bytes: &[u8]) -> FormatResult<()> {
        let Some(out) = self.out.as_mut() else {
            return Err(FormatError::Catalogue(
                "CSV writer: data before the header".into(),
            ));
        };
        out.write_all(bytes)
            .map_err(|error| FormatError::write(&self.output, error))
    }

    fn cursor(&mut self) -> FormatResult<&mut SeriesCursor> {
        self.cursor
            .as_mut()
            .ok_or_else(|| FormatError::Catalogue("CSV writer: data before the header".into()))
    }

    /// Writes the current step's row.
    fn finish_row(&mut self) -> FormatResult<()> {
        let mut line = time_cell(&self.time, self.step).into_bytes();
        line.append(&mut self.row);
        line.push(b'\n');
        self.write(&line)?;
        self.step += 1;
        Ok(())
    }
}

/// The time of `step`: ISO 8601 for calendar axes, seconds for relative ones, empty without
/// time.
fn time_cell(time: &TimeAxis, step: usize) -> String {
    match time {
        TimeAxis::Relative(offsets) => offsets
            .get(step)
            .map(|offset| number_f64(*offset))
            .unwrap_or_default(),
        _ => time
            .time(step)
            .map(|time| time.format("%Y-%m-%dT%H:%M:%S%.f").to_string())
            .unwrap_or_default(),
    }
}

fn number_f64(value: f64) -> String {
    ryu::Buffer::new().format(value).to_owned()
}

/// Appends `value` of `item` as a cell: shortest round-trip text, empty for missing.
fn push_value(item: &Item, values: &Values, out: &mut Vec<u8>) {
    let Some(wide) = values.get_f64(0) else {
        return;
    };
    if item.is_nodata(wide) {
        return;
    }
    match values {
        Values::F32(values) => {
            if let Some(value) = values.first() {
                out.extend_from_slice(ryu::Buffer::new().format(*value).as_bytes());
            }
        }
        Values::F64(values) => {
            if let Some(value) = values.first() {
                out.extend_from_slice(ryu::Buffer::new().format(*value).as_bytes());
            }
        }
        // Integers widen to f64 exactly; printed as integers.
        _ => out.extend_from_slice(itoa::Buffer::new().format(wide as i64).as_bytes()),
    }
}

/// `text` as a CSV field: quoted (its quotes doubled) when it holds the separator, a quote or
/// a line break (RFC 4180).
fn field(text: &str, separator: u8) -> String {
    let needs_quotes = text
        .bytes()
        .any(|byte| byte == separator || matches!(byte, b'"' | b'\r' | b'\n'));
    if needs_quotes {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

impl DatasetSink for CsvSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        let Header::TimeSeries(series) = header else {
            return Err(FormatError::Incompatible {
                data: header.kind().name(),
                format: FORMAT,
                message: "the CSV writer writes time series (one column per item)".to_owned(),
            });
        };
        let file =
            File::create(&self.output).map_err(|error| FormatError::write(&self.output, error))?;
        self.out = Some(BufWriter::with_capacity(1 << 16, file));
        self.cursor = Some(SeriesCursor::new("CSV writer", FORMAT, &series.items));
        self.time = series.time.clone();
        let mut line = String::from("time");
        for item in &series.items {
            line.push(char::from(self.separator));
            line.push_str(&field(&item.name, self.separator));
        }
        line.push('\n');
        self.write(line.as_bytes())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some(cursor) = self.cursor.as_mut() else {
            return Err(FormatError::Catalogue(
                "CSV writer: data before the header".into(),
            ));
        };
        let item = cursor.check(&frame)?;
        self.row.push(self.separator);
        push_value(item, frame.values, &mut self.row);
        if cursor.advance() {
            self.finish_row()?;
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        if self.cursor()?.items().is_empty() {
            // No frames come for a series without items: one row of time per step.
            for _ in 0..self.time.steps() {
                self.cursor()?.skip_step();
                self.finish_row()?;
            }
        }
        self.cursor()?.check_complete()?;
        let Some(mut out) = self.out.take() else {
            return Err(FormatError::Catalogue(
                "CSV writer: the series ended before it began".into(),
            ));
        };
        out.flush()
            .map_err(|error| FormatError::write(&self.output, error))?;
        self.written = true;
        Ok(())
    }
}

impl WriterSink for CsvSink {
    fn finish(self: Box<Self>) -> FormatResult<Written> {
        if !self.written {
            return Err(FormatError::Catalogue(
                "CSV writer: the series was not completed".into(),
            ));
        }
        Ok(Written {
            files: vec![self.output],
            notes: Vec::new(),
            summary: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_rfc_4180_says() {
        assert_eq!(field("level", b','), "level");
        assert_eq!(field("a,b", b','), "\"a,b\"");
        assert_eq!(field("a,b", b';'), "a,b");
        assert_eq!(field("a;b", b';'), "\"a;b\"");
        assert_eq!(field("say \"hi\"", b','), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines", b'\t'), "\"two\nlines\"");
    }

    #[test]
    fn values_print_shortest_and_missing_ones_empty() {
        let item = Item::new("x", crate::model::DataType::F32);
        let mut out = Vec::new();
        push_value(&item, &Values::F32(vec![0.1]), &mut out);
        assert_eq!(out, b"0.1");
        out.clear();
        push_value(&item, &Values::F32(vec![f32::NAN]), &mut out);
        assert!(out.is_empty());
        let mut counted = Item::new("n", crate::model::DataType::I32);
        counted.nodata = Some(-9.0);
        push_value(&counted, &Values::I32(vec![-9]), &mut out);
        assert!(out.is_empty());
        push_value(&counted, &Values::I32(vec![42]), &mut out);
        assert_eq!(out, b"42");
    }
}

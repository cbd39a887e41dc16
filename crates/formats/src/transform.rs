//! Transformations applied between a reader and a writer: sinks wrapping sinks.
//!
//! The interface names four transformation types. `CrsTransformation` reprojects every model
//! type; the other three are recognised so that a request naming them gets a clear error
//! instead of being silently ignored.

use crate::error::{FormatError, FormatResult};
use crate::model::DatasetSink;

/// A transformation of the data on its way from reader to writer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Transformation {
    /// Reproject coordinates to `output_srid`. `input_srid` overrides (or supplies) the CRS of
    /// the data; it is required when the data has none.
    Crs {
        /// EPSG code of the data, when the data does not say or says wrongly.
        input_srid: Option<u32>,
        /// EPSG code to reproject to.
        output_srid: u32,
    },
}

/// Checks that every transformation can run (known SRIDs), before any work starts.
pub fn validate(transformations: &[Transformation]) -> FormatResult<()> {
    for transformation in transformations {
        match transformation {
            Transformation::Crs {
                input_srid,
                output_srid,
            } => {
                crate::crs::validate_srids(*input_srid, *output_srid)?;
            }
        }
    }
    Ok(())
}

/// Wraps `sink` so that data passes through `transformations` first (the first in the list
/// sees the reader's data).
pub fn apply<'a>(
    transformations: &[Transformation],
    sink: &'a mut dyn DatasetSink,
) -> FormatResult<Box<dyn DatasetSink + 'a>> {
    let mut wrapped: Box<dyn DatasetSink + 'a> = Box::new(Forward(sink));
    for transformation in transformations.iter().rev() {
        wrapped = match transformation {
            Transformation::Crs {
                input_srid,
                output_srid,
            } => crate::crs::transform_sink(wrapped, *input_srid, *output_srid)?,
        };
    }
    Ok(wrapped)
}

/// Parses the interface's transformation `type` names (case-insensitive). Known but
/// unimplemented types are an error saying so.
pub fn parse_type(name: &str) -> FormatResult<&'static str> {
    const IMPLEMENTED: &str = "CrsTransformation";
    const KNOWN: [&str; 3] = [
        "ItemFilterTransformation",
        "TemporalFilterTransformation",
        "SpatialFilterTransformation",
    ];
    if name.eq_ignore_ascii_case(IMPLEMENTED) {
        return Ok(IMPLEMENTED);
    }
    if KNOWN.iter().any(|known| known.eq_ignore_ascii_case(name)) {
        return Err(FormatError::Catalogue(format!(
            "transformation {name} is not supported; supported: {IMPLEMENTED}"
        )));
    }
    Err(FormatError::Catalogue(format!(
        "unknown transformation type {name:?}; supported: {IMPLEMENTED}"
    )))
}

/// Passes everything on to a borrowed sink.
struct Forward<'a>(&'a mut dyn DatasetSink);

impl DatasetSink for Forward<'_> {
    fn begin(&mut self, header: &crate::model::Header) -> FormatResult<()> {
        self.0.begin(header)
    }
    fn frame(&mut self, frame: crate::model::Frame<'_>) -> FormatResult<()> {
        self.0.frame(frame)
    }
    fn feature(&mut self, feature: &crate::model::Feature) -> FormatResult<()> {
        self.0.feature(feature)
    }
    fn points(&mut self, chunk: &crate::model::PointChunk) -> FormatResult<()> {
        self.0.points(chunk)
    }
    fn end(&mut self) -> FormatResult<()> {
        self.0.end()
    }
}

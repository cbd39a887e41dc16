//! Transformations applied between a reader and a writer: sinks wrapping sinks.
//!
//! The interface names four transformation types. `CrsTransformation` reprojects every model
//! type ([`crate::crs`]); `ItemFilterTransformation` keeps some items (`items.rs`);
//! `TemporalFilterTransformation` keeps some time steps (`steps.rs`).
//! `SpatialFilterTransformation` is recognised so that a request naming it gets a clear error
//! instead of being silently ignored.
//!
//! Each transformation is a sink that hands its own header and re-indexed frames to the next,
//! so a filter further down (or a writer) sees the call order [`DatasetSink`] prescribes, as
//! if the reader had produced the filtered data itself. The server gets them from a request
//! with [`Transformation::from_json`].

mod items;
mod json;
mod steps;

use chrono::NaiveDateTime;

pub(crate) use json::parse_time;

use crate::error::{FormatError, FormatResult};
use crate::model::DatasetSink;

/// The interface's type name of a CRS transformation.
pub const CRS_TRANSFORMATION: &str = "CrsTransformation";
/// The interface's type name of an item filter.
pub const ITEM_FILTER_TRANSFORMATION: &str = "ItemFilterTransformation";
/// The interface's type name of a temporal filter.
pub const TEMPORAL_FILTER_TRANSFORMATION: &str = "TemporalFilterTransformation";
/// The interface's type name of a spatial filter, which is not implemented.
pub const SPATIAL_FILTER_TRANSFORMATION: &str = "SpatialFilterTransformation";

/// The transformation types that run, in the order error messages list them.
const IMPLEMENTED: [&str; 3] = [
    CRS_TRANSFORMATION,
    ITEM_FILTER_TRANSFORMATION,
    TEMPORAL_FILTER_TRANSFORMATION,
];

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
    /// Keep only the selected items of grids, meshes and time series, or the selected
    /// attribute fields of feature collections, in the data's own order.
    ItemFilter(ItemSelection),
    /// Keep only the selected time steps.
    TemporalFilter(TemporalFilter),
}

impl Transformation {
    /// The interface's type name, e.g. `CrsTransformation`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Crs { .. } => CRS_TRANSFORMATION,
            Self::ItemFilter(_) => ITEM_FILTER_TRANSFORMATION,
            Self::TemporalFilter(_) => TEMPORAL_FILTER_TRANSFORMATION,
        }
    }
}

/// The items (or feature fields) an item filter keeps: every item whose zero-based position is
/// in `indices` and every item named in `names` (the union). A name matches an item of exactly
/// that name, or else the one item whose name equals it ignoring ASCII case. An index past the
/// end or a name that matches nothing is an error when the data's header arrives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemSelection {
    /// Zero-based item (or field) positions.
    pub indices: Vec<usize>,
    /// Item (or field) names.
    pub names: Vec<String>,
}

/// The time steps a temporal filter keeps. Bounds are inclusive; data without time counts as
/// one step (index 0) without a calendar time.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TemporalFilter {
    /// Steps `from..=to` by zero-based index (`TemporalIndexFilter`); a missing bound is the
    /// first or last step, and `to` past the last step means the last step.
    IndexRange {
        /// First step kept.
        from: Option<usize>,
        /// Last step kept.
        to: Option<usize>,
    },
    /// Steps whose calendar time is within `from..=to` (`TemporalValueFilter`); the data must
    /// have calendar times.
    TimeRange {
        /// Earliest time kept.
        from: Option<NaiveDateTime>,
        /// Latest time kept.
        to: Option<NaiveDateTime>,
    },
    /// The listed steps by zero-based index, in any order, duplicates ignored
    /// (`TemporalIndexListFilter`).
    IndexList(Vec<usize>),
}

/// Checks that every transformation can run (known SRIDs, non-empty selections, ordered
/// bounds), before any work starts. What depends on the data (an item name, the number of
/// steps) is checked when its header arrives.
pub fn validate(transformations: &[Transformation]) -> FormatResult<()> {
    for transformation in transformations {
        match transformation {
            Transformation::Crs {
                input_srid,
                output_srid,
            } => {
                crate::crs::validate_srids(*input_srid, *output_srid)?;
            }
            Transformation::ItemFilter(selection) => items::validate(selection)?,
            Transformation::TemporalFilter(filter) => steps::validate(filter)?,
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
            Transformation::ItemFilter(selection) => {
                items::validate(selection)?;
                Box::new(items::ItemFilterSink::new(wrapped, selection.clone()))
            }
            Transformation::TemporalFilter(filter) => {
                steps::validate(filter)?;
                Box::new(steps::TemporalFilterSink::new(wrapped, filter.clone()))
            }
        };
    }
    Ok(wrapped)
}

/// Parses the interface's transformation `type` names (case-insensitive) to the canonical
/// spelling. Known but unimplemented types, and unknown ones, are errors saying so.
pub fn parse_type(name: &str) -> FormatResult<&'static str> {
    if let Some(implemented) = IMPLEMENTED
        .iter()
        .find(|implemented| implemented.eq_ignore_ascii_case(name))
    {
        return Ok(implemented);
    }
    let supported = IMPLEMENTED.join(", ");
    if SPATIAL_FILTER_TRANSFORMATION.eq_ignore_ascii_case(name) {
        return Err(FormatError::Catalogue(format!(
            "transformation {name} is not supported; supported: {supported}"
        )));
    }
    Err(FormatError::Catalogue(format!(
        "unknown transformation type {name:?}; supported: {supported}"
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
    fn wants(&self, step: usize, item: usize) -> bool {
        self.0.wants(step, item)
    }
}

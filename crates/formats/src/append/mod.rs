//! Appending one dataset to another: the time steps of a grid, mesh or time series, or the
//! features of a feature collection (or the points of a point set), added after the existing
//! data's own, as one dataset into one writer. The server's "append" operation runs this to
//! produce the new file of an existing dataset.
//!
//! Both inputs are read twice: once for the header only (the reader is stopped at `begin`),
//! so that every mismatch is found before anything is written and the combined header can be
//! announced first; then for the data, which streams through to the writer, the addition's
//! steps re-numbered after the existing ones and its features' values re-ordered to the
//! existing fields. So memory stays at one frame or feature, whatever the sizes, except where
//! a writer spools. The cost is a second read of each header (for GeoJSON, whose schema needs
//! a pass over the file, a third pass).
//!
//! What must agree, and the errors when it does not, is in `docs/formats.md` (Append).

mod features;
mod geometry;
mod time;

use crate::error::{FormatError, FormatResult};
use crate::model::{
    DataKind, DatasetSink, Feature, Frame, GridHeader, Header, Item, ItemLocation, MeshHeader,
    PointChunk, PointHeader, TimeSeriesHeader,
};

pub use time::concatenate;

/// Something that reads a dataset into a sink, from the start, each time it is called: a
/// reader on a file, or [`crate::model::Dataset::replay`].
pub type Source<'a> = &'a dyn Fn(&mut dyn DatasetSink) -> FormatResult<()>;

/// The most item or field names a message lists.
const NAMES_LISTED_MAX: usize = 20;

/// Reads only the header of `source`: the reader is stopped as soon as it announces it.
pub fn read_header(source: Source<'_>) -> FormatResult<Header> {
    let mut sink = HeaderSink { header: None };
    let result = source(&mut sink);
    // Once the header is captured, the error is the one `begin` returned to stop the reader
    // (however the reader wrapped it), not a failure.
    match (sink.header, result) {
        (Some(header), _) => Ok(header),
        (None, Err(error)) => Err(error),
        (None, Ok(())) => Err(FormatError::Catalogue(
            "the reader produced no header".to_owned(),
        )),
    }
}

/// Captures the header and stops the reader.
struct HeaderSink {
    header: Option<Header>,
}

impl DatasetSink for HeaderSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        self.header = Some(header.clone());
        Err(FormatError::Catalogue(
            "reading stopped after the header".to_owned(),
        ))
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }
}

/// The header of `existing` followed by `addition`, or a [`FormatError::Append`] saying what
/// differs. The combined header is the existing one with the combined time axis (or point
/// count).
pub fn combine_headers(existing: &Header, addition: &Header) -> FormatResult<Header> {
    Ok(plan(existing, addition)?.header)
}

/// Streams `existing` then `addition` into `sink` as one dataset: `begin` with the combined
/// header, the existing data, the addition's data (steps re-numbered after the existing
/// ones, feature values converted to the existing fields), `end`. The same as
/// [`Appending::check`] then [`Appending::stream`].
pub fn append_datasets(
    existing: Source<'_>,
    addition: Source<'_>,
    sink: &mut dyn DatasetSink,
) -> FormatResult<()> {
    Appending::check(existing, addition)?.stream(existing, addition, sink)
}

/// Two datasets whose headers were read and found to combine: what is left is to stream
/// their data. Split from [`append_datasets`] so that a caller can check before it creates
/// an output.
pub struct Appending {
    existing_header: Header,
    addition_header: Header,
    plan: Plan,
}

impl Appending {
    /// Reads both headers and checks that they combine.
    pub fn check(existing: Source<'_>, addition: Source<'_>) -> FormatResult<Self> {
        let existing_header = read_header(existing)?;
        let addition_header = read_header(addition)?;
        let plan = plan(&existing_header, &addition_header)?;
        Ok(Self {
            existing_header,
            addition_header,
            plan,
        })
    }

    /// The combined header.
    pub fn header(&self) -> &Header {
        &self.plan.header
    }

    /// Streams both datasets into `sink`; `existing` and `addition` must read what they read
    /// for [`Appending::check`].
    pub fn stream(
        &self,
        existing: Source<'_>,
        addition: Source<'_>,
        sink: &mut dyn DatasetSink,
    ) -> FormatResult<()> {
        sink.begin(&self.plan.header)?;
        existing(&mut Phase {
            sink: &mut *sink,
            which: "existing data",
            expected: &self.existing_header,
            step_offset: 0,
            fields: None,
            features: 0,
        })?;
        addition(&mut Phase {
            sink: &mut *sink,
            which: "addition",
            expected: &self.addition_header,
            step_offset: self.plan.existing_steps,
            fields: self.plan.fields.as_ref(),
            features: 0,
        })?;
        sink.end()
    }
}

/// How the two datasets combine.
struct Plan {
    /// What the writer is told.
    header: Header,
    /// Steps of the existing data: the addition's steps follow on from here.
    existing_steps: usize,
    /// How the addition's feature values map to the existing fields.
    fields: Option<features::FieldPlan>,
}

fn plan(existing: &Header, addition: &Header) -> FormatResult<Plan> {
    let (header, fields) = match (existing, addition) {
        (Header::Grid(existing), Header::Grid(addition)) => (grids(existing, addition)?, None),
        (Header::Mesh(existing), Header::Mesh(addition)) => (meshes(existing, addition)?, None),
        (Header::TimeSeries(existing), Header::TimeSeries(addition)) => {
            (time_series(existing, addition)?, None)
        }
        (Header::Features(existing), Header::Features(addition)) => {
            let fields = features::plan(existing, addition)?;
            (Header::Features(existing.clone()), Some(fields))
        }
        (Header::Points(existing), Header::Points(addition)) => (points(existing, addition)?, None),
        (existing, addition) => {
            return Err(FormatError::Append(format!(
                "the existing data is a {} and the addition a {}",
                existing.kind().name(),
                addition.kind().name()
            )));
        }
    };
    let existing_steps = match existing.kind() {
        DataKind::Grid | DataKind::Mesh | DataKind::TimeSeries => existing
            .items_and_time()
            .map_or(0, |(_, time)| time.steps()),
        DataKind::Features | DataKind::Points => 0,
    };
    Ok(Plan {
        header,
        existing_steps,
        fields,
    })
}

fn grids(existing: &GridHeader, addition: &GridHeader) -> FormatResult<Header> {
    geometry::same_grid(&existing.geometry, &addition.geometry)?;
    same_items(&existing.items, &addition.items)?;
    Ok(Header::Grid(GridHeader {
        geometry: existing.geometry.clone(),
        items: existing.items.clone(),
        time: concatenate(&existing.time, &addition.time)?,
    }))
}

fn meshes(existing: &MeshHeader, addition: &MeshHeader) -> FormatResult<Header> {
    geometry::same_mesh(&existing.geometry, &addition.geometry)?;
    same_items(&existing.items, &addition.items)?;
    Ok(Header::Mesh(MeshHeader {
        geometry: std::sync::Arc::clone(&existing.geometry),
        items: existing.items.clone(),
        time: concatenate(&existing.time, &addition.time)?,
    }))
}

fn time_series(existing: &TimeSeriesHeader, addition: &TimeSeriesHeader) -> FormatResult<Header> {
    same_items(&existing.items, &addition.items)?;
    Ok(Header::TimeSeries(TimeSeriesHeader {
        time: concatenate(&existing.time, &addition.time)?,
        ..existing.clone()
    }))
}

fn points(existing: &PointHeader, addition: &PointHeader) -> FormatResult<Header> {
    geometry::same_crs(existing.crs.as_ref(), addition.crs.as_ref())?;
    let names = |header: &PointHeader| -> Vec<String> {
        std::iter::once(&header.z_item)
            .chain(&header.items)
            .map(|item| item.name.clone())
            .collect()
    };
    let (existing_names, addition_names) = (names(existing), names(addition));
    if existing_names != addition_names {
        return Err(FormatError::Append(format!(
            "the point columns differ: existing has {}, the addition has {}",
            listing(&existing_names),
            listing(&addition_names)
        )));
    }
    let count = existing
        .count
        .zip(addition.count)
        .and_then(|(a, b)| a.checked_add(b));
    Ok(Header::Points(PointHeader {
        count,
        ..existing.clone()
    }))
}

/// Items agree when they have the same names in the same order, the same data types and
/// locations, and no-data values that are equal (or absent from the addition).
fn same_items(existing: &[Item], addition: &[Item]) -> FormatResult<()> {
    let names =
        |items: &[Item]| -> Vec<String> { items.iter().map(|item| item.name.clone()).collect() };
    if existing.len() != addition.len()
        || existing.iter().zip(addition).any(|(a, b)| a.name != b.name)
    {
        return Err(FormatError::Append(format!(
            "the items differ: existing has {}, the addition has {}",
            listing(&names(existing)),
            listing(&names(addition))
        )));
    }
    for (a, b) in existing.iter().zip(addition) {
        if a.data_type != b.data_type {
            return Err(FormatError::Append(format!(
                "item {:?} is {} in the existing data and {} in the addition",
                a.name,
                a.data_type.gdal_name(),
                b.data_type.gdal_name()
            )));
        }
        if a.location != b.location {
            return Err(FormatError::Append(format!(
                "item {:?} is on {} in the existing data and on {} in the addition",
                a.name,
                location_name(a.location),
                location_name(b.location)
            )));
        }
        let same_nodata = match (a.nodata, b.nodata) {
            (_, None) => true,
            (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
            (None, Some(_)) => false,
        };
        if !same_nodata {
            return Err(FormatError::Append(format!(
                "item {:?} has the no-data value {} in the existing data and {} in the \
                 addition",
                a.name,
                a.nodata
                    .map_or("none".to_owned(), |value| value.to_string()),
                b.nodata
                    .map_or("none".to_owned(), |value| value.to_string()),
            )));
        }
    }
    Ok(())
}

fn location_name(location: ItemLocation) -> &'static str {
    match location {
        ItemLocation::Cell => "elements",
        ItemLocation::Node => "nodes",
    }
}

/// `[a, b, c]`, at most [`NAMES_LISTED_MAX`] names.
fn listing(names: &[String]) -> String {
    let mut text = names
        .iter()
        .take(NAMES_LISTED_MAX)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMES_LISTED_MAX {
        text.push_str(&format!(
            ", and {} more",
            names.len().saturating_sub(NAMES_LISTED_MAX)
        ));
    }
    format!("[{text}]")
}

/// True when two headers of one file agree in kind, item or field names and step count: what
/// the second pass over a file must repeat from the first. (Not `==`: a NaN no-data value
/// is not equal to itself.)
fn same_outline(a: &Header, b: &Header) -> bool {
    let names = |header: &Header| -> Vec<String> {
        match header {
            Header::Features(schema) => schema
                .fields
                .iter()
                .map(|field| field.name.clone())
                .collect(),
            Header::Points(points) => points.items.iter().map(|item| item.name.clone()).collect(),
            other => other
                .items_and_time()
                .map(|(items, _)| items.iter().map(|item| item.name.clone()).collect())
                .unwrap_or_default(),
        }
    };
    let steps = |header: &Header| header.items_and_time().map(|(_, time)| time.steps());
    a.kind() == b.kind() && names(a) == names(b) && steps(a) == steps(b)
}

/// One input's data on its way into the combined sink: its own `begin` and `end` are not
/// passed on (the combined dataset has one of each), its steps move by `step_offset`, and its
/// features' values are mapped to the existing fields.
struct Phase<'s> {
    sink: &'s mut dyn DatasetSink,
    which: &'static str,
    /// The header read in the first pass; the second must announce the same.
    expected: &'s Header,
    step_offset: usize,
    fields: Option<&'s features::FieldPlan>,
    /// Features seen, for messages.
    features: u64,
}

impl DatasetSink for Phase<'_> {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        if !same_outline(header, self.expected) {
            return Err(FormatError::Append(format!(
                "the {} changed while it was read",
                self.which
            )));
        }
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some(step) = frame.step.checked_add(self.step_offset) else {
            return Err(FormatError::Append("too many time steps".to_owned()));
        };
        self.sink.frame(Frame { step, ..frame })
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        self.features = self.features.saturating_add(1);
        match self.fields {
            None => self.sink.feature(feature),
            Some(fields) => {
                let mapped = fields.map(feature, self.features)?;
                self.sink.feature(&mapped)
            }
        }
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        self.sink.points(chunk)
    }

    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }
}

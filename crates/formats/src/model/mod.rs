//! The in-memory model every reader produces and every writer consumes.
//!
//! Data flows as events, in the style of geozero: a reader calls a [`DatasetSink`] with a
//! [`Header`] (geometry, items, time axis, schema), then the data in order, then `end`. Any
//! reader can thus feed any writer through any number of transformations, and nothing larger
//! than one block of values or one feature has to be in memory unless a writer needs it
//! (a VTU file needs its point count up front; it spools, not the reader).
//!
//! [`Dataset`] is the fully materialised form, for tests, small files and writers that need
//! everything at once; [`Dataset::collect`] builds it from a reader and [`Dataset::replay`]
//! feeds it to a sink.

mod feature;
mod grid;
mod item;
mod mesh;
mod points;
mod time;
mod values;

use std::sync::Arc;

pub use feature::{
    Coord, Feature, FeatureSchema, Field, FieldType, Geometry, GeometryKind, Line, Value,
};
pub use grid::{GeoTransform, GridGeometry, VerticalAxis};
pub use item::{Item, ItemLocation, Quantity, ValueType};
pub use mesh::{ElementKind, Elements, MeshGeometry, MeshLayers, Nodes};
pub use points::{PointChunk, PointHeader};
pub use time::TimeAxis;
pub use values::{DataType, Values};

use crate::error::{FormatError, FormatResult};

/// Header of a grid dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct GridHeader {
    /// Shape and placement.
    pub geometry: GridGeometry,
    /// Items (bands).
    pub items: Vec<Item>,
    /// Time steps.
    pub time: TimeAxis,
}

/// Header of a mesh dataset. The geometry is shared, not copied, by transformations that
/// leave it alone.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshHeader {
    /// Nodes and elements.
    pub geometry: Arc<MeshGeometry>,
    /// Items on elements or nodes.
    pub items: Vec<Item>,
    /// Time steps.
    pub time: TimeAxis,
}

/// Header of a time series dataset (DFS0, CSV): items over a time axis, no space.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSeriesHeader {
    /// Items.
    pub items: Vec<Item>,
    /// Time steps.
    pub time: TimeAxis,
    /// Where the series was measured (x, y, z, in no stated coordinate system), when the
    /// source says: a DFS0 file's item reference coordinates when every item has the same.
    /// A series written as a mesh becomes one node there.
    pub position: Option<[f64; 3]>,
}

/// What a reader announces before any data.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Header {
    /// A raster grid; data follows as [`Frame`]s.
    Grid(GridHeader),
    /// A flexible mesh; data follows as [`Frame`]s.
    Mesh(MeshHeader),
    /// A time series; data follows as [`Frame`]s of one value (offset 0) per item and step.
    TimeSeries(TimeSeriesHeader),
    /// A feature collection; data follows as features.
    Features(FeatureSchema),
    /// A point set; data follows as point chunks.
    Points(PointHeader),
}

impl Header {
    /// The kind of data.
    pub fn kind(&self) -> DataKind {
        match self {
            Self::Grid(_) => DataKind::Grid,
            Self::Mesh(_) => DataKind::Mesh,
            Self::TimeSeries(_) => DataKind::TimeSeries,
            Self::Features(_) => DataKind::Features,
            Self::Points(_) => DataKind::Points,
        }
    }

    /// Items and time axis of grid, mesh and time series headers.
    pub fn items_and_time(&self) -> Option<(&[Item], &TimeAxis)> {
        match self {
            Self::Grid(header) => Some((&header.items, &header.time)),
            Self::Mesh(header) => Some((&header.items, &header.time)),
            Self::TimeSeries(header) => Some((&header.items, &header.time)),
            Self::Features(_) | Self::Points(_) => None,
        }
    }
}

/// The kinds of data in the model; the catalogue uses them to tell which writers a reader can
/// feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataKind {
    /// Raster grids.
    Grid,
    /// Flexible meshes.
    Mesh,
    /// Time series.
    TimeSeries,
    /// Feature collections.
    Features,
    /// Point sets.
    Points,
}

impl DataKind {
    /// Lower-case name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Grid => "grid",
            Self::Mesh => "mesh",
            Self::TimeSeries => "time series",
            Self::Features => "feature collection",
            Self::Points => "point set",
        }
    }
}

/// A block of values of one item at one step: `values` replace positions
/// `offset..offset + values.len()` of that item's step buffer (for grids: layer-major, then
/// rows top to bottom, then columns; for meshes: element or node order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame<'a> {
    /// Time step index.
    pub step: usize,
    /// Item index.
    pub item: usize,
    /// Index of the first value within the item's step buffer.
    pub offset: usize,
    /// The values, in the item's data type.
    pub values: &'a Values,
}

/// Receives a dataset as events.
///
/// Call order, which readers guarantee and writers may `debug_assert!`:
/// 1. `begin` exactly once;
/// 2. for grids, meshes and time series: `frame` for step 0 item 0 from offset 0 upwards until
///    the item's step is complete, then item 1, ..., then step 1, ... (steps ascending, items
///    ascending within a step, offsets contiguous and ascending within an item's step);
///    for feature collections: `feature` for each feature; for point sets: `points`;
/// 3. `end` exactly once, after which the sink produces its result.
///
/// Any method may fail; the caller then stops and calls nothing else.
pub trait DatasetSink {
    /// The header, before any data.
    fn begin(&mut self, header: &Header) -> FormatResult<()>;

    /// A block of values (grids, meshes, time series).
    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let _ = frame;
        Err(FormatError::Catalogue(
            "this writer does not accept gridded values".to_owned(),
        ))
    }

    /// One feature (feature collections).
    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        let _ = feature;
        Err(FormatError::Catalogue(
            "this writer does not accept features".to_owned(),
        ))
    }

    /// A chunk of points (point sets).
    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        let _ = chunk;
        Err(FormatError::Catalogue(
            "this writer does not accept points".to_owned(),
        ))
    }

    /// No more data.
    fn end(&mut self) -> FormatResult<()>;

    /// Whether the values of `item` at `step` will be used, asked after `begin`: `false` when a
    /// filter further down drops them. A reader that can skip data cheaply (a DFS file, where
    /// every value has a known offset) may then neither read them nor send their frames;
    /// other readers ignore the answer. Sinks that wrap another forward the question, with the
    /// step and item renumbered as their output numbers them.
    fn wants(&self, step: usize, item: usize) -> bool {
        let _ = (step, item);
        true
    }
}

/// The data of a materialised dataset.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Data {
    /// `steps[step][item]` holds the full buffer of that item at that step.
    Values(Vec<Vec<Values>>),
    /// All features.
    Features(Vec<Feature>),
    /// All points in one chunk.
    Points(PointChunk),
}

/// A whole dataset in memory: a header and all its data.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The header.
    pub header: Header,
    /// The data.
    pub data: Data,
}

impl Dataset {
    /// Runs `read` (typically a reader) into memory and returns the dataset.
    pub fn collect(
        read: impl FnOnce(&mut dyn DatasetSink) -> FormatResult<()>,
    ) -> FormatResult<Dataset> {
        let mut sink = CollectSink::default();
        read(&mut sink)?;
        sink.into_dataset()
    }

    /// Feeds the dataset to `sink`, in the order [`DatasetSink`] prescribes.
    pub fn replay(&self, sink: &mut dyn DatasetSink) -> FormatResult<()> {
        sink.begin(&self.header)?;
        match &self.data {
            Data::Values(steps) => {
                for (step, items) in steps.iter().enumerate() {
                    for (item, values) in items.iter().enumerate() {
                        sink.frame(Frame {
                            step,
                            item,
                            offset: 0,
                            values,
                        })?;
                    }
                }
            }
            Data::Features(features) => {
                for feature in features {
                    sink.feature(feature)?;
                }
            }
            Data::Points(chunk) => sink.points(chunk)?,
        }
        sink.end()
    }
}

/// A sink that keeps everything in memory; see [`Dataset::collect`].
#[derive(Debug, Default)]
pub struct CollectSink {
    header: Option<Header>,
    steps: Vec<Vec<Values>>,
    features: Vec<Feature>,
    points: PointChunk,
    ended: bool,
}

impl CollectSink {
    /// The collected dataset; fails when `begin` or `end` was never called.
    pub fn into_dataset(self) -> FormatResult<Dataset> {
        let Some(header) = self.header else {
            return Err(FormatError::Catalogue(
                "the reader produced no header".to_owned(),
            ));
        };
        if !self.ended {
            return Err(FormatError::Catalogue(
                "the reader did not finish".to_owned(),
            ));
        }
        let data = match header.kind() {
            DataKind::Grid | DataKind::Mesh | DataKind::TimeSeries => Data::Values(self.steps),
            DataKind::Features => Data::Features(self.features),
            DataKind::Points => Data::Points(self.points),
        };
        Ok(Dataset { header, data })
    }
}

impl DatasetSink for CollectSink {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        if let Header::Points(points) = header {
            self.points.items = vec![Vec::new(); points.items.len()];
        }
        self.header = Some(header.clone());
        Ok(())
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        let Some((items, _)) = self.header.as_ref().and_then(Header::items_and_time) else {
            return Err(FormatError::Catalogue(
                "values arrived for a dataset without items".into(),
            ));
        };
        let item_count = items.len();
        while self.steps.len() <= frame.step {
            self.steps.push(Vec::with_capacity(item_count));
        }
        let Some(step) = self.steps.get_mut(frame.step) else {
            return Err(FormatError::Catalogue("frame out of order".into()));
        };
        if step.len() == frame.item && frame.offset == 0 {
            step.push(frame.values.clone());
            return Ok(());
        }
        match step.get_mut(frame.item) {
            Some(buffer) if buffer.len() == frame.offset => {
                if !buffer.extend_from(frame.values) {
                    return Err(FormatError::Catalogue("frame changed data type".into()));
                }
            }
            _ => return Err(FormatError::Catalogue("frame out of order".into())),
        }
        Ok(())
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        self.features.push(feature.clone());
        Ok(())
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        self.points.x.extend_from_slice(&chunk.x);
        self.points.y.extend_from_slice(&chunk.y);
        self.points.z.extend_from_slice(&chunk.z);
        for (all, more) in self.points.items.iter_mut().zip(&chunk.items) {
            all.extend_from_slice(more);
        }
        Ok(())
    }

    fn end(&mut self) -> FormatResult<()> {
        self.ended = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid_header() -> Header {
        Header::Grid(GridHeader {
            geometry: GridGeometry {
                columns: 2,
                rows: 2,
                vertical: None,
                transform: GeoTransform::north_up(0.0, 2.0, 1.0, 1.0),
                crs: None,
            },
            items: vec![Item::new("a", DataType::F32), Item::new("b", DataType::I16)],
            time: TimeAxis::None,
        })
    }

    #[test]
    fn collect_joins_blocks_and_replay_reproduces_them() {
        let dataset = Dataset::collect(|sink| {
            sink.begin(&grid_header())?;
            let first = Values::F32(vec![1.0, 2.0]);
            let second = Values::F32(vec![3.0, 4.0]);
            let other = Values::I16(vec![5, 6, 7, 8]);
            sink.frame(Frame {
                step: 0,
                item: 0,
                offset: 0,
                values: &first,
            })?;
            sink.frame(Frame {
                step: 0,
                item: 0,
                offset: 2,
                values: &second,
            })?;
            sink.frame(Frame {
                step: 0,
                item: 1,
                offset: 0,
                values: &other,
            })?;
            sink.end()
        })
        .unwrap();
        let Data::Values(steps) = &dataset.data else {
            panic!("values expected")
        };
        assert_eq!(steps[0][0], Values::F32(vec![1.0, 2.0, 3.0, 4.0]));
        let again = Dataset::collect(|sink| dataset.replay(sink)).unwrap();
        assert_eq!(again, dataset);
    }

    #[test]
    fn collect_rejects_frames_out_of_order() {
        let result = Dataset::collect(|sink| {
            sink.begin(&grid_header())?;
            let values = Values::F32(vec![1.0]);
            sink.frame(Frame {
                step: 0,
                item: 0,
                offset: 3,
                values: &values,
            })?;
            sink.end()
        });
        assert!(result.is_err());
    }
}

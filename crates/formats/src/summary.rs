//! A summary of the data a conversion wrote: its kind, coordinate system, extent, time span,
//! items and size. The server fills a new dataset's `datasetType`, `spatialInformation` and
//! `temporalInformation` from it, without opening the file again.
//!
//! [`SummarySink`] sits right before the writer and passes everything on, so the summary
//! describes the data the writer got: after transformations and after a kind adapter (a mesh
//! written as a Shapefile is summarised as features). It is built in the same pass as the
//! conversion: what the header says (grid placement, mesh nodes, time axis, items) is read at
//! `begin`, and only feature and point positions are accumulated as they stream by.

use chrono::NaiveDateTime;

use crate::error::{FormatError, FormatResult};
use crate::model::{
    DataKind, DatasetSink, Feature, Frame, Geometry, GridGeometry, Header, PointChunk, TimeAxis,
};

/// What a conversion wrote, in the terms a dataset record needs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DataSummary {
    /// The kind of data.
    pub kind: DataKind,
    /// The EPSG code of the coordinate system, when it resolves to one
    /// ([`crate::crs::resolve_epsg`]).
    pub srid: Option<u32>,
    /// A WKT of the coordinate system, when one is known ([`crate::crs::wkt_of`]).
    pub wkt: Option<String>,
    /// `[min_x, min_y, max_x, max_y]` in the data's coordinates: a grid's outer corners, a
    /// mesh's nodes, every feature or point position. `None` for time series and for data
    /// without a finite position.
    pub extent: Option<[f64; 4]>,
    /// Time steps of grids, meshes and time series (1 for data without time); `None` for
    /// features and points.
    pub steps: Option<usize>,
    /// The time span, for data whose axis has calendar times.
    pub time: Option<TimeSummary>,
    /// Item names (grids, meshes, time series), attribute field names (features), or the z
    /// item followed by the value columns (points).
    pub items: Vec<String>,
    /// Size in the kind's own terms.
    pub size: DataSize,
}

/// The calendar span of a time axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeSummary {
    /// Time of the first step.
    pub start: NaiveDateTime,
    /// Time of the last step.
    pub end: NaiveDateTime,
    /// Seconds between steps when they are equally spaced (an equidistant axis, or calendar
    /// times that happen to be); `None` for irregular steps and a single calendar time.
    pub interval_seconds: Option<f64>,
}

/// How big the data is, per kind.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum DataSize {
    /// A grid of `columns` x `rows` x `layers` cells of `cell_width` x `cell_height` (in the
    /// units of the coordinates; the lengths of the geotransform's column and row vectors).
    Grid {
        /// Cells per row.
        columns: usize,
        /// Rows.
        rows: usize,
        /// Layers (1 for a 2D grid).
        layers: usize,
        /// Width of a cell.
        cell_width: f64,
        /// Height of a cell.
        cell_height: f64,
    },
    /// A mesh.
    Mesh {
        /// Nodes.
        nodes: usize,
        /// Elements.
        elements: usize,
    },
    /// A time series (its steps are [`DataSummary::steps`]).
    TimeSeries,
    /// A feature collection of `count` features.
    Features {
        /// Features written.
        count: u64,
    },
    /// A point set of `count` points.
    Points {
        /// Points written.
        count: u64,
    },
}

/// Runs `read` (typically a reader) into a sink that keeps nothing but the summary, for data
/// that was stored without conversion.
pub fn summarize(
    read: impl FnOnce(&mut dyn DatasetSink) -> FormatResult<()>,
) -> FormatResult<DataSummary> {
    let mut discard = Discard;
    let mut sink = SummarySink::new(&mut discard);
    read(&mut sink)?;
    sink.into_summary()
}

/// Passes everything on to `inner` and summarises it on the way.
pub struct SummarySink<'a> {
    inner: &'a mut dyn DatasetSink,
    summary: Option<DataSummary>,
    bounds: Bounds,
    count: u64,
    ended: bool,
}

impl<'a> SummarySink<'a> {
    /// A sink summarising what it passes to `inner`.
    pub fn new(inner: &'a mut dyn DatasetSink) -> Self {
        Self {
            inner,
            summary: None,
            bounds: Bounds::default(),
            count: 0,
            ended: false,
        }
    }

    /// The summary; fails when the data never began or ended.
    pub fn into_summary(self) -> FormatResult<DataSummary> {
        let Some(mut summary) = self.summary else {
            return Err(FormatError::Catalogue(
                "the reader produced no header".to_owned(),
            ));
        };
        if !self.ended {
            return Err(FormatError::Catalogue(
                "the reader did not finish".to_owned(),
            ));
        }
        match &mut summary.size {
            DataSize::Features { count } | DataSize::Points { count } => {
                *count = self.count;
                summary.extent = self.bounds.extent();
            }
            DataSize::Grid { .. } | DataSize::Mesh { .. } | DataSize::TimeSeries => {}
        }
        Ok(summary)
    }
}

impl DatasetSink for SummarySink<'_> {
    fn begin(&mut self, header: &Header) -> FormatResult<()> {
        self.summary = Some(summary_of_header(header));
        self.inner.begin(header)
    }

    fn frame(&mut self, frame: Frame<'_>) -> FormatResult<()> {
        self.inner.frame(frame)
    }

    fn feature(&mut self, feature: &Feature) -> FormatResult<()> {
        if let Some(geometry) = &feature.geometry {
            self.bounds.include_geometry(geometry);
        }
        self.count = self.count.saturating_add(1);
        self.inner.feature(feature)
    }

    fn points(&mut self, chunk: &PointChunk) -> FormatResult<()> {
        for (x, y) in chunk.x.iter().zip(&chunk.y) {
            self.bounds.include(*x, *y);
        }
        self.count = self.count.saturating_add(chunk.len() as u64);
        self.inner.points(chunk)
    }

    fn end(&mut self) -> FormatResult<()> {
        self.ended = true;
        self.inner.end()
    }

    fn wants(&self, step: usize, item: usize) -> bool {
        self.inner.wants(step, item)
    }
}

/// What the header alone tells; feature and point counts and extents are filled at the end.
fn summary_of_header(header: &Header) -> DataSummary {
    let (crs, extent, steps, time, items, size) = match header {
        Header::Grid(grid) => (
            grid.geometry.crs.as_ref(),
            grid_extent(&grid.geometry),
            Some(grid.time.steps()),
            time_summary(&grid.time),
            item_names(&grid.items),
            grid_size(&grid.geometry),
        ),
        Header::Mesh(mesh) => {
            let mut bounds = Bounds::default();
            for (x, y) in mesh.geometry.nodes.x.iter().zip(&mesh.geometry.nodes.y) {
                bounds.include(*x, *y);
            }
            (
                mesh.geometry.crs.as_ref(),
                bounds.extent(),
                Some(mesh.time.steps()),
                time_summary(&mesh.time),
                item_names(&mesh.items),
                DataSize::Mesh {
                    nodes: mesh.geometry.nodes.len(),
                    elements: mesh.geometry.elements.len(),
                },
            )
        }
        Header::TimeSeries(series) => (
            None,
            None,
            Some(series.time.steps()),
            time_summary(&series.time),
            item_names(&series.items),
            DataSize::TimeSeries,
        ),
        Header::Features(schema) => (
            schema.crs.as_ref(),
            None,
            None,
            None,
            schema
                .fields
                .iter()
                .map(|field| field.name.clone())
                .collect(),
            DataSize::Features { count: 0 },
        ),
        Header::Points(points) => (
            points.crs.as_ref(),
            None,
            None,
            None,
            std::iter::once(points.z_item.name.clone())
                .chain(points.items.iter().map(|item| item.name.clone()))
                .collect(),
            DataSize::Points { count: 0 },
        ),
    };
    DataSummary {
        kind: header.kind(),
        srid: crs.and_then(crate::crs::resolve_epsg),
        wkt: crs.and_then(crate::crs::wkt_of),
        extent,
        steps,
        time,
        items,
        size,
    }
}

fn item_names(items: &[crate::model::Item]) -> Vec<String> {
    items.iter().map(|item| item.name.clone()).collect()
}

/// The bounding box of a grid's four outer corners (which handles rotated grids).
fn grid_extent(geometry: &GridGeometry) -> Option<[f64; 4]> {
    let (columns, rows) = (geometry.columns as f64, geometry.rows as f64);
    let mut bounds = Bounds::default();
    for (column, row) in [(0.0, 0.0), (columns, 0.0), (0.0, rows), (columns, rows)] {
        let (x, y) = geometry.transform.apply(column, row);
        bounds.include(x, y);
    }
    bounds.extent()
}

fn grid_size(geometry: &GridGeometry) -> DataSize {
    let transform = &geometry.transform;
    DataSize::Grid {
        columns: geometry.columns,
        rows: geometry.rows,
        layers: geometry.layers(),
        cell_width: transform.pixel_width.hypot(transform.column_rotation),
        cell_height: transform.row_rotation.hypot(transform.pixel_height),
    }
}

/// The calendar span of `axis`, when it has calendar times.
fn time_summary(axis: &TimeAxis) -> Option<TimeSummary> {
    let start = axis.time(0)?;
    let end = axis.time(axis.steps().saturating_sub(1))?;
    let interval_seconds = match axis {
        TimeAxis::Equidistant { step_seconds, .. } => Some(*step_seconds),
        TimeAxis::Calendar(times) => regular_interval(times),
        TimeAxis::None | TimeAxis::Relative(_) => None,
    };
    Some(TimeSummary {
        start,
        end,
        interval_seconds,
    })
}

/// The interval of calendar times that are equally spaced (to the millisecond), else `None`.
fn regular_interval(times: &[NaiveDateTime]) -> Option<f64> {
    let mut gaps = times.windows(2).map(|pair| match pair {
        [a, b] => (*b - *a).num_milliseconds(),
        _ => 0,
    });
    let first = gaps.next()?;
    gaps.all(|gap| gap == first)
        .then_some(first as f64 / 1000.0)
}

/// A bounding box grown point by point; non-finite coordinates are skipped.
#[derive(Debug, Clone, Copy, Default)]
struct Bounds {
    corners: Option<[f64; 4]>,
}

impl Bounds {
    fn include(&mut self, x: f64, y: f64) {
        if !(x.is_finite() && y.is_finite()) {
            return;
        }
        self.corners = Some(match self.corners {
            None => [x, y, x, y],
            Some([min_x, min_y, max_x, max_y]) => {
                [min_x.min(x), min_y.min(y), max_x.max(x), max_y.max(y)]
            }
        });
    }

    fn include_coords(&mut self, coords: &[crate::model::Coord]) {
        for coord in coords {
            self.include(coord.x, coord.y);
        }
    }

    /// Every position of `geometry`. Collections nest at most as deep as the reader allowed
    /// (`ReadLimits::nesting_depth_max`).
    fn include_geometry(&mut self, geometry: &Geometry) {
        match geometry {
            Geometry::Point(coord) => self.include(coord.x, coord.y),
            Geometry::MultiPoint(coords) | Geometry::LineString(coords) => {
                self.include_coords(coords);
            }
            Geometry::MultiLineString(lines) | Geometry::Polygon(lines) => {
                for line in lines {
                    self.include_coords(line);
                }
            }
            Geometry::MultiPolygon(polygons) => {
                for line in polygons.iter().flatten() {
                    self.include_coords(line);
                }
            }
            Geometry::GeometryCollection(members) => {
                for member in members {
                    self.include_geometry(member);
                }
            }
        }
    }

    fn extent(self) -> Option<[f64; 4]> {
        self.corners
    }
}

/// Accepts everything and keeps nothing.
struct Discard;

impl DatasetSink for Discard {
    fn begin(&mut self, _header: &Header) -> FormatResult<()> {
        Ok(())
    }
    fn frame(&mut self, _frame: Frame<'_>) -> FormatResult<()> {
        Ok(())
    }
    fn feature(&mut self, _feature: &Feature) -> FormatResult<()> {
        Ok(())
    }
    fn points(&mut self, _chunk: &PointChunk) -> FormatResult<()> {
        Ok(())
    }
    fn end(&mut self) -> FormatResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::crs::Crs;
    use crate::model::{
        Coord, Data, DataType, Dataset, ElementKind, Elements, FeatureSchema, Field, FieldType,
        GeoTransform, GeometryKind, GridHeader, Item, MeshGeometry, MeshHeader, Nodes, PointHeader,
        TimeSeriesHeader, Value, Values, VerticalAxis,
    };

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").unwrap()
    }

    fn summary_of(dataset: &Dataset) -> DataSummary {
        summarize(|sink| dataset.replay(sink)).unwrap()
    }

    #[test]
    fn a_grid_is_summarised_from_its_header() {
        let dataset = Dataset {
            header: Header::Grid(GridHeader {
                geometry: GridGeometry {
                    columns: 4,
                    rows: 2,
                    vertical: Some(VerticalAxis {
                        origin: 0.0,
                        spacing: 1.0,
                        count: 3,
                    }),
                    transform: GeoTransform::north_up(500_000.0, 6_200_000.0, 10.0, 20.0),
                    crs: Some(Crs::Epsg(32632)),
                },
                items: vec![Item::new("depth", DataType::F32)],
                time: TimeAxis::Equidistant {
                    start: at("2020-01-01T00:00:00"),
                    step_seconds: 1800.0,
                    steps: 3,
                },
            }),
            data: Data::Values(vec![vec![Values::F32(vec![0.0; 24])]; 3]),
        };
        let summary = summary_of(&dataset);
        assert_eq!(summary.kind, DataKind::Grid);
        assert_eq!(summary.srid, Some(32632));
        assert!(summary.wkt.unwrap().contains("UTM zone 32N"));
        assert_eq!(
            summary.extent,
            Some([500_000.0, 6_199_960.0, 500_040.0, 6_200_000.0])
        );
        assert_eq!(summary.steps, Some(3));
        assert_eq!(
            summary.time,
            Some(TimeSummary {
                start: at("2020-01-01T00:00:00"),
                end: at("2020-01-01T01:00:00"),
                interval_seconds: Some(1800.0),
            })
        );
        assert_eq!(summary.items, vec!["depth"]);
        assert_eq!(
            summary.size,
            DataSize::Grid {
                columns: 4,
                rows: 2,
                layers: 3,
                cell_width: 10.0,
                cell_height: 20.0
            }
        );
    }

    #[test]
    fn a_mesh_extent_comes_from_its_nodes() {
        let mut elements = Elements::default();
        elements.push(1, ElementKind::Triangle, &[0, 1, 2]);
        let geometry = MeshGeometry {
            nodes: Nodes {
                ids: vec![1, 2, 3],
                x: vec![10.0, 12.0, 11.0],
                y: vec![55.0, 55.5, 56.0],
                z: vec![0.0; 3],
                codes: vec![0; 3],
            },
            elements,
            crs: Some(Crs::Named("LONG/LAT".to_owned())),
            ..MeshGeometry::default()
        };
        let times = vec![
            at("2020-01-01T00:00:00"),
            at("2020-01-01T01:00:00"),
            at("2020-01-01T03:00:00"),
        ];
        let dataset = Dataset {
            header: Header::Mesh(MeshHeader {
                geometry: Arc::new(geometry),
                items: vec![Item::new("H", DataType::F32), Item::new("U", DataType::F32)],
                time: TimeAxis::Calendar(times),
            }),
            data: Data::Values(vec![vec![Values::F32(vec![0.0]); 2]; 3]),
        };
        let summary = summary_of(&dataset);
        assert_eq!(summary.kind, DataKind::Mesh);
        assert_eq!(summary.srid, Some(4326));
        assert_eq!(summary.extent, Some([10.0, 55.0, 12.0, 56.0]));
        assert_eq!(summary.steps, Some(3));
        let time = summary.time.unwrap();
        assert_eq!(time.end, at("2020-01-01T03:00:00"));
        assert_eq!(time.interval_seconds, None);
        assert_eq!(summary.items, vec!["H", "U"]);
        assert_eq!(
            summary.size,
            DataSize::Mesh {
                nodes: 3,
                elements: 1
            }
        );
    }

    #[test]
    fn a_time_series_has_no_place_and_relative_times_no_span() {
        let dataset = Dataset {
            header: Header::TimeSeries(TimeSeriesHeader {
                items: vec![Item::new("discharge", DataType::F64)],
                time: TimeAxis::Relative(vec![0.0, 60.0]),
                position: None,
            }),
            data: Data::Values(vec![vec![Values::F64(vec![1.0])]; 2]),
        };
        let summary = summary_of(&dataset);
        assert_eq!(summary.kind, DataKind::TimeSeries);
        assert_eq!((summary.srid, summary.extent), (None, None));
        assert_eq!(summary.steps, Some(2));
        assert_eq!(summary.time, None);
        assert_eq!(summary.size, DataSize::TimeSeries);
    }

    #[test]
    fn features_are_counted_and_bounded_while_they_stream() {
        let polygon = vec![vec![
            Coord::xy(0.0, 0.0),
            Coord::xy(4.0, 0.0),
            Coord::xy(4.0, 3.0),
            Coord::xy(0.0, 0.0),
        ]];
        let features = vec![
            Feature {
                geometry: Some(Geometry::Polygon(polygon)),
                values: vec![Value::Integer(1)],
            },
            Feature {
                geometry: None,
                values: vec![Value::Null],
            },
            Feature {
                geometry: Some(Geometry::GeometryCollection(vec![Geometry::Point(
                    Coord::xy(-2.0, 7.0),
                )])),
                values: vec![Value::Integer(3)],
            },
        ];
        let dataset = Dataset {
            header: Header::Features(FeatureSchema {
                fields: vec![Field::new("id", FieldType::Integer)],
                geometry_kind: GeometryKind::Any,
                has_z: false,
                has_m: false,
                crs: Some(Crs::Epsg(4326)),
            }),
            data: Data::Features(features),
        };
        let summary = summary_of(&dataset);
        assert_eq!(summary.kind, DataKind::Features);
        assert_eq!(summary.srid, Some(4326));
        assert_eq!(summary.extent, Some([-2.0, 0.0, 4.0, 7.0]));
        assert_eq!((summary.steps, summary.time), (None, None));
        assert_eq!(summary.items, vec!["id"]);
        assert_eq!(summary.size, DataSize::Features { count: 3 });
    }

    #[test]
    fn points_are_counted_and_bounded_skipping_non_finite_positions() {
        let dataset = Dataset {
            header: Header::Points(PointHeader {
                crs: None,
                z_item: Item::new("z", DataType::F64),
                items: vec![Item::new("intensity", DataType::F64)],
                count: None,
            }),
            data: Data::Points(PointChunk {
                x: vec![1.0, f64::NAN, 3.0],
                y: vec![2.0, 0.0, -1.0],
                z: vec![0.0; 3],
                items: vec![vec![0.0; 3]],
            }),
        };
        let summary = summary_of(&dataset);
        assert_eq!(summary.kind, DataKind::Points);
        assert_eq!((summary.srid, summary.wkt.as_deref()), (None, None));
        assert_eq!(summary.extent, Some([1.0, -1.0, 3.0, 2.0]));
        assert_eq!(summary.items, vec!["z", "intensity"]);
        assert_eq!(summary.size, DataSize::Points { count: 3 });
    }

    #[test]
    fn regular_calendar_times_have_an_interval() {
        let times = [
            at("2020-01-01T00:00:00"),
            at("2020-01-02T00:00:00"),
            at("2020-01-03T00:00:00"),
        ];
        assert_eq!(regular_interval(&times), Some(86_400.0));
        assert_eq!(regular_interval(&times[..1]), None);
    }

    #[test]
    fn a_reader_that_never_ends_gives_no_summary() {
        let result = summarize(|sink| {
            sink.begin(&Header::TimeSeries(TimeSeriesHeader {
                items: Vec::new(),
                time: TimeAxis::None,
                position: None,
            }))
        });
        assert!(result.is_err());
    }
}
